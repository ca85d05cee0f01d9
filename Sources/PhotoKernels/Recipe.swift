import Foundation

/// What is wrong with a recipe file.
public enum RecipeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The JSON's `formatIdentifier` is not `Recipe.formatIdentifier`.
    case unknownFormat(identifier: String)
    /// The recipe's major version is newer than this library reads.
    case unsupportedVersion(found: String, supported: String)
    /// A parameter is NaN or infinite, or otherwise unusable; `field` is its JSON path.
    case invalidValue(field: String, value: String, reason: String)
    /// The JSON is malformed or a value has the wrong type; `field` is its JSON path.
    case malformed(field: String, reason: String)
    /// A key no family knows, with the closest known key, if any.
    case unknownKey(String, closest: String?)

    /// One English sentence naming the field and the problem. What comes from the
    /// file (keys, identifiers, values) has its control characters escaped.
    public var description: String {
        switch self {
        case .unknownFormat(let id):
            "recipe: formatIdentifier \"\(quotedText(id))\" is not \"\(Recipe.formatIdentifier)\""
        case .unsupportedVersion(let found, let supported):
            "recipe: formatVersion \(printableText(found)) is newer than this library reads (\(supported))"
        case .invalidValue(let field, let value, let reason):
            "recipe: \(printableText(field)) = \(printableText(value)) is invalid: \(printableText(reason))"
        case .malformed(let field, let reason):
            "recipe: \(field.isEmpty ? "document" : printableText(field)): \(printableText(reason))"
        case .unknownKey(let key, let closest):
            "recipe: unknown key \"\(quotedText(key))\"" + (closest.map { "; did you mean \"\($0)\"?" } ?? "")
                + " (known keys: \(KernelFamilies.all.map(\.key).joined(separator: ", ")))"
        }
    }
}

/// Everything one edit applies: one operation per kernel family at most, applied in
/// the registry's order (SPEC §6, §11: exposure → vibrance → saturation → contrast →
/// brightness → hue → effect → vignette), then the caller encodes (clamping once).
///
/// A recipe is re-editable data in the spirit of Photos' `PHAdjustmentData`: it
/// carries a format identifier and a `major.minor` format version, so an edit saved
/// beside the original can be opened and changed later. JSON (every field optional
/// except the two format fields; missing ones are identity; each key is a family's,
/// see `KernelFamilies.all`):
///
/// ```json
/// {
///   "formatIdentifier": "org.photokernels.recipe",
///   "formatVersion": "1.1",
///   "exposure": 0.5, "vibrance": 0.3,
///   "saturation": 1.2, "contrast": 1.1, "brightness": 0.05, "hue": 30,
///   "effect": {"name": "sepia", "intensity": 0.8},
///   "vignette": {"intensity": 1, "radius": 1}
/// }
/// ```
///
/// Decoding (`Recipe.decode(from:)`) rejects an unknown identifier, a newer major
/// version, a key no family knows (naming the closest known key), a wrong type and a
/// number that is not finite as a `Float` with a `RecipeError`; a field that is `null`
/// counts as missing.
///
/// `EditPlan(recipe)` compiles a recipe; `stages` lists what it applies.
public struct Recipe: Sendable, Hashable {
    /// The identifier written into every recipe.
    public static let formatIdentifier = "org.photokernels.recipe"
    /// The version this library writes; it reads every `1.x`.
    public static let formatVersion = "1.1"

    /// The operations by family key.
    var operations: [String: any RecipeOperation] = [:]

    /// The recipe that changes nothing.
    public init() {}

    /// A recipe; every default is the identity.
    public init(exposure: Double = 0, adjustments: Adjustments = .identity, effect: Effect? = nil, vignette: Vignette? = nil) {
        self.exposure = exposure
        self.adjustments = adjustments
        self.effect = effect
        self.vignette = vignette
    }

    /// The sliders of a named preset (SPEC §6), nothing else.
    public init(preset: Preset) {
        self.init(adjustments: preset.adjustments)
    }

    /// The recipe that changes nothing.
    public static let identity = Recipe()

    /// The operation of `type`'s family, or `nil`; setting `nil` removes it.
    public subscript<Operation: RecipeOperation>(_ type: Operation.Type) -> Operation? {
        get { operations[Operation.family.key] as? Operation }
        set { operations[Operation.family.key] = newValue }
    }

    /// Every operation, identity ones included, in recipe order.
    public var operationsInOrder: [any RecipeOperation] {
        KernelFamilies.all.compactMap { operations[$0.key] }
    }

    /// Whether applying the recipe changes nothing.
    public var isIdentity: Bool { operations.values.allSatisfy(\.isIdentity) }

    /// The stages that apply this recipe, in order, nothing fused; identity
    /// operations contribute none, so the identity recipe has no stages.
    public var stages: [Stage] {
        operationsInOrder.filter { !$0.isIdentity }.flatMap(\.stages)
    }

    /// The stages as row kernels, in order (the unfused reference).
    public var kernels: [any PixelKernel] { stages.map(\.kernel) }

    /// Exposure in stops (EV), applied in linear light; identity 0.
    public var exposure: Double {
        get { self[Exposure.self]?.ev ?? 0 }
        set { self[Exposure.self] = newValue == 0 ? nil : Exposure(ev: newValue) }
    }

    /// Saturation, contrast, brightness and hue.
    public var adjustments: Adjustments {
        get {
            Adjustments(saturation: self[Saturation.self]?.value ?? 1, contrast: self[Contrast.self]?.value ?? 1,
                        brightness: self[Brightness.self]?.value ?? 0, hue: self[HueRotation.self]?.degrees ?? 0)
        }
        set {
            self[Saturation.self] = newValue.saturation == 1 ? nil : Saturation(newValue.saturation)
            self[Contrast.self] = newValue.contrast == 1 ? nil : Contrast(newValue.contrast)
            self[Brightness.self] = newValue.brightness == 0 ? nil : Brightness(newValue.brightness)
            self[HueRotation.self] = newValue.hue == 0 ? nil : HueRotation(degrees: newValue.hue)
        }
    }

    /// The filter-strip effect, if any.
    public var effect: Effect? {
        get { self[Effect.self] }
        set { self[Effect.self] = newValue }
    }

    /// The vignette, if any (either form).
    public var vignette: Vignette? {
        get { self[Vignette.self] }
        set { self[Vignette.self] = newValue }
    }

    /// Checks every operation: numbers finite as `Float`, and each family's own rules.
    ///
    /// - Throws: `RecipeError.invalidValue` naming the field.
    public func validate() throws(RecipeError) {
        for operation in operationsInOrder { try operation.validate() }
    }

    public static func == (a: Recipe, b: Recipe) -> Bool {
        a.operations.count == b.operations.count && a.operations.allSatisfy { key, value in
            b.operations[key].map { AnyHashable($0) == AnyHashable(value) } ?? false
        }
    }

    public func hash(into hasher: inout Hasher) {
        for operation in operationsInOrder { hasher.combine(AnyHashable(operation)) }
    }

    /// The key under which decoders and encoders carry the recipe file's folder, so that
    /// files a recipe refers to (a LUT) resolve relative to it.
    public static let baseURLKey = CodingUserInfoKey(rawValue: "org.photokernels.recipe.baseURL")!

    /// Reads a recipe from JSON and validates it.
    ///
    /// - Parameters:
    ///   - data: the JSON.
    ///   - folder: the recipe file's folder, against which relative paths in it (a
    ///     LUT's) resolve; `nil` resolves them against the current directory.
    /// - Throws: `RecipeError` for malformed JSON, a wrong type (naming the field),
    ///   an unknown key, an unknown `formatIdentifier`, a `formatVersion` that is not
    ///   `"major.minor"` or has a newer major,
    ///   a value that is not finite as a `Float`, or a LUT file that cannot be read or
    ///   whose SHA-256 is not the recorded one.
    public static func decode(from data: Data, relativeTo folder: URL? = nil) throws(RecipeError) -> Recipe {
        let recipe: Recipe
        do {
            let decoder = JSONDecoder()
            if let folder { decoder.userInfo[baseURLKey] = folder }
            recipe = try decoder.decode(Recipe.self, from: data)
        } catch let error as RecipeError {
            throw error
        } catch let DecodingError.typeMismatch(type, context) {
            throw .malformed(field: context.path, reason: "expected \(typeName(type))")
        } catch let DecodingError.valueNotFound(type, context) {
            throw .malformed(field: context.path, reason: "expected \(typeName(type)), found null")
        } catch let DecodingError.keyNotFound(key, context) {
            let field = (context.codingPath + [key]).map(\.stringValue).joined(separator: ".")
            let hint = context.codingPath.isEmpty && ["formatIdentifier", "formatVersion"].contains(key.stringValue)
                ? " (a recipe starts {\"formatIdentifier\": \"\(formatIdentifier)\", \"formatVersion\": \"\(formatVersion)\", …})"
                : ""
            throw .malformed(field: field, reason: "missing" + hint)
        } catch let DecodingError.dataCorrupted(context) {
            throw .malformed(field: context.path, reason: context.debugDescription + parserDetail(data, context))
        } catch {
            throw .malformed(field: "", reason: "\(error)")
        }
        try recipe.validate()
        return recipe
    }

    /// The recipe as pretty-printed JSON with sorted keys (stable for diffs); paths to
    /// files it refers to (a LUT) are written relative to `folder` (with `..` where
    /// needed) where the two share a folder below the root, absolute otherwise.
    ///
    /// - Throws: `RecipeError.invalidValue` for a value that is not finite (checked
    ///   first, by `validate()`), so no recipe value can make encoding fail or trap.
    public func encodedJSON(relativeTo folder: URL? = nil) throws(RecipeError) -> Data {
        try validate()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        if let folder { encoder.userInfo[Recipe.baseURLKey] = folder }
        do {
            return try encoder.encode(self)
        } catch {
            throw .malformed(field: "", reason: "cannot encode: \(error)")
        }
    }
}

/// JSONDecoder reports any syntax error as "not valid JSON"; the parser behind
/// `JSONSerialization` says what it met, e.g. "Number 1e999 is not representable in
/// Swift." (the only way a JSON number can be non-finite). Empty for other errors.
private func parserDetail(_ data: Data, _ context: DecodingError.Context) -> String {
    guard context.codingPath.isEmpty else { return "" }
    do {
        _ = try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
    } catch {
        if let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String {
            return " " + detail
        }
    }
    return ""
}

private func typeName(_ type: Any.Type) -> String {
    switch type {
    case is Double.Type, is Float.Type, is Int.Type: "a number"
    case is String.Type: "a string"
    default: "\(type)"
    }
}

private extension DecodingError.Context {
    var path: String { codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".") }
}

/// A coding key for any string: the recipe's keys are the registry's.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Throws `DecodingError.dataCorrupted` at the first key of `decoder`'s object that
/// `Keys` does not name, with the closest known key: a misspelt key inside an
/// operation's object would otherwise be dropped and its default taken silently.
func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ decoder: Decoder, _: Keys.Type) throws {
    let c = try decoder.container(keyedBy: AnyKey.self)
    let known = Keys.allCases.map(\.stringValue)
    for key in c.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where !known.contains(key.stringValue) {
        let hint = KernelFamilies.closestKey(to: key.stringValue, among: known).map { "; did you mean \"\($0)\"?" } ?? ""
        throw DecodingError.dataCorruptedError(forKey: key, in: c,
            debugDescription: "unknown key\(hint) (known keys: \(known.joined(separator: ", ")))")
    }
}

extension Recipe: Codable {
    private static let formatKeys: Set<String> = ["formatIdentifier", "formatVersion"]

    /// Reads the keyed JSON form described on the type; missing fields are identity.
    /// Throws `RecipeError` for a foreign identifier, a newer major version or an
    /// unknown key, and `DecodingError` for a wrong type (`Recipe.decode(from:)` maps
    /// both to `RecipeError`).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        let identifier = try c.decode(String.self, forKey: AnyKey("formatIdentifier"))
        guard identifier == Recipe.formatIdentifier else { throw RecipeError.unknownFormat(identifier: identifier) }
        let version = try c.decode(String.self, forKey: AnyKey("formatVersion"))
        // "major.minor", each part ASCII digits; every 1.x is read.
        let parts = version.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }),
              Int(parts[0]).map({ $0 >= 1 }) ?? true else {
            throw RecipeError.invalidValue(field: "formatVersion", value: version,
                                           reason: "must be \"major.minor\" with major 1 or later, such as \"\(Recipe.formatVersion)\"")
        }
        // A major too long for an `Int` is newer still.
        guard Int(parts[0]) == 1 else { throw RecipeError.unsupportedVersion(found: version, supported: Recipe.formatVersion) }
        for key in c.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where !Recipe.formatKeys.contains(key.stringValue) {
            guard let family = KernelFamilies.named(key.stringValue) else {
                let known = KernelFamilies.all.map(\.key) + Recipe.formatKeys.sorted()
                throw RecipeError.unknownKey(key.stringValue, closest: KernelFamilies.closestKey(to: key.stringValue, among: known))
            }
            if try c.decodeNil(forKey: key) { continue }
            operations[family.key] = try c.decode(family.type, forKey: key)
        }
    }

    /// Writes the format fields and every operation under its family's key.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(Recipe.formatIdentifier, forKey: AnyKey("formatIdentifier"))
        try c.encode(Recipe.formatVersion, forKey: AnyKey("formatVersion"))
        for (key, operation) in operations {
            try c.encode(operation, forKey: AnyKey(key))
        }
    }
}
