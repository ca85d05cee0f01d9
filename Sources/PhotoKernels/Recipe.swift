import Foundation

/// One effect of the filter strip (SPEC §5): sepia, monochrome or one of the eight
/// Core Image photo-effect looks.
///
/// JSON: `{"name": "sepia", "intensity": 1}`,
/// `{"name": "monochrome", "intensity": 1, "color": [0.6, 0.45, 0.3]}`,
/// `{"name": "noir", "intensity": 1}`. A missing `intensity` is 1 and a missing
/// `color` is monochrome's default.
public enum Effect: Sendable, Hashable {
    /// CISepiaTone-like tint; `intensity` in [0, 1] (clamped), identity 0.
    case sepia(intensity: Double)
    /// CIColorMonochrome-like tint toward `color`; `intensity` ≥ 0, identity 0.
    case monochrome(Monochrome)
    /// A photo-effect look blended with the original by `intensity` (1 = the look,
    /// 0 = identity; our own extension of Core Image's fixed looks).
    case look(PhotoEffect, intensity: Double)

    /// Every effect name the CLI and recipes accept, in filter-strip order.
    public static let names: [String] = ["sepia", "monochrome"] + PhotoEffect.allCases.map(\.rawValue)

    /// The effect called `name` (one of `names`), with `intensity` (default 1) and,
    /// for monochrome, `color` (default (0.6, 0.45, 0.3)); `nil` for an unknown name.
    public init?(name: String, intensity: Double? = nil, color: SIMD3<Double>? = nil) {
        let intensity = intensity ?? 1
        switch name {
        case "sepia": self = .sepia(intensity: intensity)
        case "monochrome":
            self = .monochrome(Monochrome(color: color ?? Monochrome().color, intensity: intensity))
        default:
            guard let look = PhotoEffect(rawValue: name) else { return nil }
            self = .look(look, intensity: intensity)
        }
    }

    /// The effect's name, as in `names`.
    public var name: String {
        switch self {
        case .sepia: "sepia"
        case .monochrome: "monochrome"
        case .look(let look, _): look.rawValue
        }
    }

    /// The effect's intensity; 0 is the identity.
    public var intensity: Double {
        switch self {
        case .sepia(let i): i
        case .monochrome(let m): m.intensity
        case .look(_, let i): i
        }
    }

    /// Whether the effect changes nothing (intensity 0).
    public var isIdentity: Bool { intensity == 0 }

    /// The effect as one affine transform, or `nil` for monochrome (piecewise, not
    /// affine: it runs as its own kernel).
    public var matrix: ColorMatrix? {
        switch self {
        case .sepia(let i): .sepia(intensity: i)
        case .monochrome: nil
        case .look(let look, let i): look.matrix(intensity: i)
        }
    }

    /// The effect's kernels run one step at a time: the unfused reference.
    public var sequentialKernels: [any PixelKernel] {
        switch self {
        case .sepia(let i): [Sepia(intensity: i)]
        case .monochrome(let m): [m]
        case .look(let look, 1): look.sequentialKernels
        case .look(let look, let i): [ColorMatrixKernel(look.matrix(intensity: i), name: look.rawValue)]
        }
    }
}

extension Effect: Codable {
    private enum CodingKeys: String, CodingKey { case name, intensity, color }

    /// Reads `{"name", "intensity"?, "color"?}`; throws `DecodingError` for an unknown
    /// name or a colour that is not three numbers.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let name = try c.decode(String.self, forKey: .name)
        let intensity = try c.decodeIfPresent(Double.self, forKey: .intensity)
        let color = try c.decodeIfPresent([Double].self, forKey: .color)
        if let color, color.count != 3 {
            throw DecodingError.dataCorruptedError(forKey: .color, in: c,
                debugDescription: "color needs three numbers R, G, B; found \(color.count)")
        }
        guard let effect = Effect(name: name, intensity: intensity, color: color.map { SIMD3($0[0], $0[1], $0[2]) }) else {
            throw DecodingError.dataCorruptedError(forKey: .name, in: c,
                debugDescription: "unknown effect \"\(name)\"; known effects: \(Effect.names.joined(separator: ", "))")
        }
        self = effect
    }

    /// Writes `name`, `intensity` and, for monochrome, `color`.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(intensity, forKey: .intensity)
        if case .monochrome(let m) = self {
            try c.encode([m.color.x, m.color.y, m.color.z], forKey: .color)
        }
    }
}

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

    /// One English sentence naming the field and the problem.
    public var description: String {
        switch self {
        case .unknownFormat(let id):
            "recipe: formatIdentifier \"\(id)\" is not \"\(Recipe.formatIdentifier)\""
        case .unsupportedVersion(let found, let supported):
            "recipe: formatVersion \(found) is newer than this library reads (\(supported))"
        case .invalidValue(let field, let value, let reason):
            "recipe: \(field) = \(value) is invalid: \(reason)"
        case .malformed(let field, let reason):
            "recipe: \(field.isEmpty ? "document" : field): \(reason)"
        }
    }
}

/// Everything one edit applies, in SPEC §6's order:
/// exposure → saturation → contrast → brightness → hue → effect → vignette, then the
/// caller encodes (clamping once).
///
/// A recipe is re-editable data in the spirit of Photos' `PHAdjustmentData`: it
/// carries a format identifier and a `major.minor` format version, so an edit saved
/// beside the original can be opened and changed later. JSON (every field optional
/// except the two format fields; missing ones are identity):
///
/// ```json
/// {
///   "formatIdentifier": "org.photokernels.recipe",
///   "formatVersion": "1.0",
///   "exposure": 0.5,
///   "saturation": 1.2, "contrast": 1.1, "brightness": 0.05, "hue": 30,
///   "effect": {"name": "sepia", "intensity": 0.8},
///   "vignette": {"intensity": 1, "radius": 1}
/// }
/// ```
///
/// Decoding (`Recipe.decode(from:)`) rejects an unknown identifier, a newer major
/// version, a wrong type and a NaN or infinite number with a `RecipeError`; a field
/// that is `null` counts as missing.
public struct Recipe: Sendable, Hashable {
    /// The identifier written into every recipe.
    public static let formatIdentifier = "org.photokernels.recipe"
    /// The version this library writes; it reads every `1.x`.
    public static let formatVersion = "1.0"

    /// Exposure in stops (EV), applied in linear light; identity 0.
    public var exposure: Double
    /// Saturation, contrast, brightness and hue.
    public var adjustments: Adjustments
    /// The filter-strip effect, if any.
    public var effect: Effect?
    /// The vignette, if any (either form).
    public var vignette: Vignette?

    /// A recipe; every default is the identity.
    public init(exposure: Double = 0, adjustments: Adjustments = .identity, effect: Effect? = nil, vignette: Vignette? = nil) {
        self.exposure = exposure
        self.adjustments = adjustments
        self.effect = effect
        self.vignette = vignette
    }

    /// The recipe that changes nothing.
    public static let identity = Recipe()

    /// Whether applying the recipe changes nothing.
    public var isIdentity: Bool {
        exposure == 0 && adjustments.isIdentity && (effect?.isIdentity ?? true) && (vignette?.isIdentity ?? true)
    }

    /// The kernels that apply this recipe, fused: exposure (if any), one colour
    /// matrix for the adjustments and an affine effect (if any is not identity),
    /// monochrome (if chosen), the vignette (if any). Identity stages are dropped,
    /// so the identity recipe has no kernels.
    ///
    /// - Complexity: O(1); the matrix is composed in `Double` and rounded once.
    public var kernels: [any PixelKernel] {
        var kernels: [any PixelKernel] = []
        if exposure != 0 { kernels.append(Exposure(ev: Float(exposure))) }
        var matrix = adjustments.matrix
        var monochrome: Monochrome?
        if let effect, !effect.isIdentity {
            if let m = effect.matrix { matrix = matrix.then(m) }
            if case .monochrome(let m) = effect { monochrome = m }
        }
        if !matrix.isIdentity { kernels.append(ColorMatrixKernel(matrix, name: "recipe")) }
        if let monochrome { kernels.append(monochrome) }
        if let vignette, !vignette.isIdentity { kernels.append(vignette) }
        return kernels
    }

    /// The same recipe as one kernel per step, nothing fused: the reference that
    /// `kernels` is tested against. Identity stages are dropped here too, so both
    /// forms touch the same stages (a skipped stage cannot spread a NaN).
    public var sequentialKernels: [any PixelKernel] {
        var kernels: [any PixelKernel] = []
        if exposure != 0 { kernels.append(Exposure(ev: Float(exposure))) }
        if !adjustments.isIdentity { kernels += adjustments.sequentialKernels }
        if let effect, !effect.isIdentity { kernels += effect.sequentialKernels }
        if let vignette, !vignette.isIdentity { kernels.append(vignette) }
        return kernels
    }

    /// Checks that every number is finite; NaN or ∞ would poison every pixel.
    ///
    /// - Throws: `RecipeError.invalidValue` naming the field.
    public func validate() throws(RecipeError) {
        func check(_ field: String, _ value: Double) throws(RecipeError) {
            guard value.isFinite else { throw .invalidValue(field: field, value: "\(value)", reason: "must be a finite number") }
        }
        try check("exposure", exposure)
        try check("saturation", adjustments.saturation)
        try check("contrast", adjustments.contrast)
        try check("brightness", adjustments.brightness)
        try check("hue", adjustments.hue)
        if let effect {
            try check("effect.intensity", effect.intensity)
            if case .monochrome(let m) = effect {
                try check("effect.color[0]", m.color.x); try check("effect.color[1]", m.color.y); try check("effect.color[2]", m.color.z)
            }
        }
        if let vignette {
            for (field, value) in vignette.parameters { try check("vignette.\(field)", value) }
        }
    }

    /// Reads a recipe from JSON and validates it.
    ///
    /// - Throws: `RecipeError` for malformed JSON, a wrong type (naming the field),
    ///   an unknown `formatIdentifier`, a newer major `formatVersion`, or a NaN or
    ///   infinite value.
    public static func decode(from data: Data) throws(RecipeError) -> Recipe {
        let recipe: Recipe
        do {
            recipe = try JSONDecoder().decode(Recipe.self, from: data)
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

    /// The recipe as pretty-printed JSON with sorted keys (stable for diffs).
    public func encodedJSON() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Encoding plain numbers and strings cannot fail.
        return try! encoder.encode(self)
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

extension Recipe: Codable {
    private enum CodingKeys: String, CodingKey {
        case formatIdentifier, formatVersion, exposure, saturation, contrast, brightness, hue, effect, vignette
    }

    /// Reads the keyed JSON form described on the type; missing fields are identity.
    /// Throws `RecipeError` for a foreign identifier or a newer major version and
    /// `DecodingError` for a wrong type (`Recipe.decode(from:)` maps both to `RecipeError`).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let identifier = try c.decode(String.self, forKey: .formatIdentifier)
        guard identifier == Recipe.formatIdentifier else { throw RecipeError.unknownFormat(identifier: identifier) }
        let version = try c.decode(String.self, forKey: .formatVersion)
        let major = version.split(separator: ".", maxSplits: 1).first.flatMap { Int($0) }
        guard let major, major <= 1 else {
            throw RecipeError.unsupportedVersion(found: version, supported: Recipe.formatVersion)
        }
        exposure = try c.decodeIfPresent(Double.self, forKey: .exposure) ?? 0
        adjustments = Adjustments(
            saturation: try c.decodeIfPresent(Double.self, forKey: .saturation) ?? 1,
            contrast: try c.decodeIfPresent(Double.self, forKey: .contrast) ?? 1,
            brightness: try c.decodeIfPresent(Double.self, forKey: .brightness) ?? 0,
            hue: try c.decodeIfPresent(Double.self, forKey: .hue) ?? 0)
        effect = try c.decodeIfPresent(Effect.self, forKey: .effect)
        vignette = try c.decodeIfPresent(Vignette.self, forKey: .vignette)
    }

    /// Writes every field, identity values included, so the file documents itself.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Recipe.formatIdentifier, forKey: .formatIdentifier)
        try c.encode(Recipe.formatVersion, forKey: .formatVersion)
        try c.encode(exposure, forKey: .exposure)
        try c.encode(adjustments.saturation, forKey: .saturation)
        try c.encode(adjustments.contrast, forKey: .contrast)
        try c.encode(adjustments.brightness, forKey: .brightness)
        try c.encode(adjustments.hue, forKey: .hue)
        try c.encodeIfPresent(effect, forKey: .effect)
        try c.encodeIfPresent(vignette, forKey: .vignette)
    }
}
