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
    private enum CodingKeys: String, CodingKey, CaseIterable { case name, intensity, color }

    /// Reads `{"name", "intensity"?, "color"?}`; throws `DecodingError` for an unknown
    /// name or a colour that is not three numbers.
    public init(from decoder: Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
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

extension Effect: RecipeOperation {
    /// The `effect` family: sepia, monochrome or one of the eight looks, with an intensity.
    public static let family = KernelFamily(
        key: "effect",
        summary: "the filter strip: sepia (CISepiaTone), monochrome (CIColorMonochrome) or a photo-effect look",
        kind: .affine,
        parameters: [
            FamilyParameter("name", identity: "—", range: Effect.names.joined(separator: ", "), help: "which effect"),
            FamilyParameter("intensity", identity: "0", range: "0…1", help: "the blend with the original; 1 is the full effect"),
            FamilyParameter("color", identity: "—", range: "[0, 1]³", help: "monochrome's tint, default (0.6, 0.45, 0.3)"),
        ],
        examples: [("sepia", Effect.sepia(intensity: 1)), ("monochrome", Effect.monochrome(Monochrome()))]
            + PhotoEffect.allCases.map { ("look.\($0.rawValue)", Effect.look($0, intensity: 1)) },
        identity: Effect.sepia(intensity: 0), type: Effect.self)

    /// The effect's stages: sepia's matrix, monochrome's per-pixel tint, or a look's
    /// affine steps (one blended matrix below intensity 1).
    public var stages: [Stage] {
        guard !isIdentity else { return [] }
        return sequentialKernels.map(\.stage)
    }

    /// The effect in `Double`: the (blended) matrix, or monochrome's formula; alpha kept.
    public func evaluate(_ color: SIMD4<Double>, x: Int, y: Int, width: Int, height: Int) -> SIMD4<Double> {
        let c = SIMD3(color.x, color.y, color.z)
        if let matrix {
            let out = matrix.applied(to: c)
            return SIMD4(out.x, out.y, out.z, color.w)
        }
        guard case .monochrome(let m) = self else { return color }
        let w = Luma.weightsDouble
        let luma = w.x * c.x + w.y * c.y + w.z * c.z
        func tone(_ k: Double) -> Double { luma < 0.5 ? 2 * luma * k : 1 - 2 * (1 - luma) * (1 - k) }
        let target = SIMD3(tone(m.color.x), tone(m.color.y), tone(m.color.z))
        let out = c + m.intensity * (target - c)
        return SIMD4(out.x, out.y, out.z, color.w)
    }

    /// The same effect at intensity 0.
    public var neutral: Effect {
        switch self {
        case .sepia: .sepia(intensity: 0)
        case .monochrome(let m): .monochrome(Monochrome(color: m.color, intensity: 0))
        case .look(let look, _): .look(look, intensity: 0)
        }
    }

    /// The same effect with the intensity (and monochrome's colour) interpolated; `nil`
    /// for two different effects.
    public func interpolated(to other: Effect, at t: Double) -> Effect? {
        let i = (1 - t) * intensity + t * other.intensity
        switch (self, other) {
        case (.sepia, .sepia): return .sepia(intensity: i)
        case (.monochrome(let a), .monochrome(let b)):
            return .monochrome(Monochrome(color: (1 - t) * a.color + t * b.color, intensity: i))
        case (.look(let a, _), .look(let b, _)) where a == b: return .look(a, intensity: i)
        default: return nil
        }
    }

    /// Checks that the intensity and, for monochrome, the colour are finite.
    public func validate() throws(RecipeError) {
        try validateFinite("effect.intensity", intensity)
        if case .monochrome(let m) = self {
            try validateFinite("effect.color[0]", m.color.x)
            try validateFinite("effect.color[1]", m.color.y)
            try validateFinite("effect.color[2]", m.color.z)
        }
    }
}
