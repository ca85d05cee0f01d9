// The registry of kernel families. Each family declares itself in its own file — its
// recipe key, parameters, stage kind, command-line option, summary and examples — and
// is listed once below, in recipe order. The recipe's JSON coding, the command-line
// options and `effects` listing, the catalog behind the tests and the benchmark rows,
// and the docs' parameter tables all read this list, so adding a family is one source
// file, one test file, one guide and one line here.

/// Every kernel family, in the order a recipe applies them (SPEC §6, §11).
public enum KernelFamilies {
    /// The families in recipe order.
    public static let all: [KernelFamily] = [
        Orientation.family,
        Exposure.family,
        ToneCurve.family,
        Vibrance.family,
        Saturation.family,
        Contrast.family,
        Brightness.family,
        HueRotation.family,
        Effect.family,
        LookupTable.family,
        Vignette.family,
    ]

    /// Every family's parameters as a Markdown table, in recipe order: the table the
    /// guides show (the tests check that docs/edit-plan.md holds exactly this).
    public static var parameterTable: String {
        var lines = ["| family | kind | parameter | identity | range | unit | what it does |",
                     "|---|---|---|---|---|---|---|"]
        for family in all {
            for p in family.parameters {
                lines.append("| `\(family.key)` | \(family.kind.rawValue) | \(p.name) | \(p.identity) | \(p.range) | \(p.unit) | \(p.help) |")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The family whose recipe key is `key`, if any.
    public static func named(_ key: String) -> KernelFamily? {
        all.first { $0.key == key }
    }

    /// The known key closest to `key` by edit distance (for "did you mean" messages),
    /// or `nil` when none is within a third of the key's length.
    public static func closestKey(to key: String, among keys: [String]? = nil) -> String? {
        let candidates = keys ?? all.map(\.key)
        let scored = candidates.map { ($0, editDistance(key.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, key.count / 3) else { return nil }
        return best.0
    }
}

/// One operation a recipe can hold: a family's parameters as a small value.
///
/// A conforming type declares its `family` (the registry entry), whether its value is
/// the identity, and the stages that apply it. Its `Codable` form is the value of the
/// family's recipe key.
public protocol RecipeOperation: Sendable, Hashable, Codable {
    /// The family this operation belongs to.
    static var family: KernelFamily { get }
    /// Whether applying the operation changes nothing; a recipe drops identity operations.
    var isIdentity: Bool { get }
    /// The stages that apply the operation, in order (SPEC's formula, unfused).
    var stages: [Stage] { get }
    /// Checks every parameter: finite in `Float` (SPEC §0), and any other rule of the family.
    ///
    /// - Throws: `RecipeError.invalidValue` naming the field (`family.key` or `key.field`).
    func validate() throws(RecipeError)
    /// The operation evaluated in `Double` on the straight colour `color` (R, G, B, A) of
    /// pixel `(x, y)` of a `width × height` image: SPEC's formula as written, the oracle
    /// that tests hold every schedule against (SPEC §8).
    func evaluate(_ color: SIMD4<Double>, x: Int, y: Int, width: Int, height: Int) -> SIMD4<Double>
    /// The same kind of operation at strength zero, the identity it fades to: sepia at
    /// intensity 0 for sepia, a look at intensity 0, a vignette of the same geometry at
    /// intensity 0, curves with the same `x` on `y = x`.
    var neutral: Self { get }
    /// The operation a fraction `t` (0…1) of the way from `self` to `other`: parameters
    /// linearly, angles along the shorter arc; `nil` when the two cannot be blended
    /// directly (different effects or vignette forms), and `Recipe.interpolated` then
    /// fades one out and the other in.
    func interpolated(to other: Self, at t: Double) -> Self?
}

/// The kind of stage a family contributes, for the docs and the `effects` listing.
public enum StageKind: String, Sendable, CaseIterable {
    /// A per-sample tone function (foldable into a lookup table).
    case tone
    /// An affine colour transform (composes into one matrix).
    case affine
    /// Another per-pixel function.
    case pixel
    /// A gain that depends on the pixel's position.
    case positional
    /// A move of whole pixels (orientation), applied before every colour stage.
    case geometric
}

/// One parameter of a family, for the docs, `--help` and `effects`.
public struct FamilyParameter: Sendable {
    /// The JSON field (or the family key itself for a one-number family).
    public let name: String
    /// The value that changes nothing.
    public let identity: String
    /// The typical range, e.g. `"−1…1"`.
    public let range: String
    /// The unit, e.g. `"stops"`, `"degrees"`, or `""` for a plain factor.
    public let unit: String
    /// One line of help.
    public let help: String

    /// A parameter description.
    public init(_ name: String, identity: String, range: String, unit: String = "", help: String) {
        (self.name, self.identity, self.range, self.unit, self.help) = (name, identity, range, unit, help)
    }
}

/// A command-line option that a family contributes: one number (`--vibrance v`) or one
/// word of text that the family parses (`--curve "0,0 0.5,0.6 1,1"`).
public struct FamilyOption: Sendable {
    /// What the option's value is and how it changes a recipe.
    public enum Value: Sendable {
        /// A finite number, set into the recipe.
        case number(@Sendable (inout Recipe, Double) -> Void)
        /// Text the family parses; a parse error is a `RecipeError` naming the option.
        case text(@Sendable (inout Recipe, String) throws(RecipeError) -> Void)
    }

    /// The option's name without the dashes, e.g. `"vibrance"`.
    public let name: String
    /// The value's placeholder in `--help`, e.g. `"v"`.
    public let valueName: String
    /// One line of help.
    public let help: String
    /// How the value is read.
    public let value: Value

    /// An option that sets one number.
    public init(_ name: String, valueName: String, help: String, set: @escaping @Sendable (inout Recipe, Double) -> Void) {
        (self.name, self.valueName, self.help, self.value) = (name, valueName, help, .number(set))
    }

    /// An option whose text the family parses.
    public init(_ name: String, valueName: String, help: String,
                parse: @escaping @Sendable (inout Recipe, String) throws(RecipeError) -> Void) {
        (self.name, self.valueName, self.help, self.value) = (name, valueName, help, .text(parse))
    }
}

/// A kernel family's registration: everything the recipe, the CLI, the catalog and the
/// docs need to know about it.
public struct KernelFamily: Sendable {
    /// The recipe key, e.g. `"vibrance"`; also the family's name in listings.
    public let key: String
    /// One line: what the family does and after what.
    public let summary: String
    /// The kind of stage it contributes.
    public let kind: StageKind
    /// Its parameters.
    public let parameters: [FamilyParameter]
    /// Its command-line options (the `effect` and `vignette` families, whose options
    /// refine one another, declare theirs in the command-line tool).
    public let options: [FamilyOption]
    /// Representative operations, by name, for the catalog behind tests and benchmarks.
    /// Built when asked for, not when the registry is (a LUT example builds a table).
    public var examples: [(name: String, operation: any RecipeOperation)] { makeExamples() }
    /// The operation type, for decoding.
    public let type: any RecipeOperation.Type
    /// An operation of this family that changes nothing (built when asked for).
    public var identity: any RecipeOperation { makeIdentity() }

    private let makeExamples: @Sendable () -> [(name: String, operation: any RecipeOperation)]
    private let makeIdentity: @Sendable () -> any RecipeOperation

    /// A registration. `examples` and `identity` are evaluated on each use, so a
    /// command-line tool that only parses options never builds them.
    public init(key: String, summary: String, kind: StageKind, parameters: [FamilyParameter],
                options: [FamilyOption] = [],
                examples: @escaping @autoclosure @Sendable () -> [(name: String, operation: any RecipeOperation)],
                identity: @escaping @autoclosure @Sendable () -> any RecipeOperation, type: any RecipeOperation.Type) {
        makeIdentity = identity
        self.key = key
        self.summary = summary
        self.kind = kind
        self.parameters = parameters
        self.options = options
        makeExamples = examples
        self.type = type
    }
}

/// Checks that `value` is a finite number that is also finite as a `Float` (the
/// kernels' precision), so `1e39` is rejected as `1e999` is.
///
/// - Throws: `RecipeError.invalidValue` naming `field`.
public func validateFinite(_ field: String, _ value: Double) throws(RecipeError) {
    guard value.isFinite, Float(value).isFinite else {
        throw .invalidValue(field: field, value: "\(value)", reason: "must be a finite number (at most 3.4e38 in magnitude)")
    }
}

/// The Levenshtein distance between two strings, by characters.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
