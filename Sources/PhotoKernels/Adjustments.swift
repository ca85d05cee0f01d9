import Foundation

// The four adjustments of SwiftUI's `.saturation`, `.contrast`, `.brightness` and
// `.hueRotation` modifiers (SPEC §2), applied in that order. Each has a scalar
// reference written like its formula and a SIMD4 twin; `Adjustments` fuses the
// chain into one `ColorMatrix`.

extension ColorMatrix {
    /// Saturation `s`: `C' = Y + s·(C − Y)`, the W3C `saturate` matrix `(1 − s)·L + s·I`.
    /// Identity 1; 0 is grey.
    public static func saturation(_ s: Double) -> ColorMatrix {
        blend(1 - s, .luma, s, .identity)
    }

    /// Contrast `c`: `C' = (C − 0.5)·c + 0.5`, i.e. `c·I` with offset `(1 − c)/2`.
    /// Identity 1; 0 is flat 50 % grey; negative inverts.
    public static func contrast(_ c: Double) -> ColorMatrix {
        ColorMatrix(SIMD3(c, 0, 0), SIMD3(0, c, 0), SIMD3(0, 0, c), offset: SIMD3(repeating: (1 - c) / 2))
    }

    /// Brightness `b`: `C' = C + b` (additive, as SwiftUI and CIColorControls). Identity 0.
    public static func brightness(_ b: Double) -> ColorMatrix {
        ColorMatrix(SIMD3(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1), offset: SIMD3(repeating: b))
    }

    /// Hue rotation by `degrees`: the W3C `hueRotate` matrix
    /// `H(θ) = L + cos θ·(I − L) + sin θ·K` (SPEC §2).
    ///
    /// Written as `I + (cos θ − 1)·(I − L) + sin θ·K`, the same matrix, so that θ = 0
    /// gives `I` to the bit; θ is reduced modulo 360 first, so θ = 360·k is exactly
    /// the identity too. Every row of `H` sums to 1 (up to rounding in `Double`), so
    /// greys stay grey. Identity 0; positive angles turn red towards yellow.
    public static func hueRotation(degrees: Double) -> ColorMatrix {
        let reduced = degrees.truncatingRemainder(dividingBy: 360)
        if reduced == 0 { return .identity }
        let radians = reduced * .pi / 180
        let (c, s) = (cos(radians), sin(radians))
        let w = Luma.weightsDouble
        let k = ColorMatrix(SIMD3(-w.x, -w.y, 1 - w.z),
                            SIMD3(0.143, 0.140, -0.283),
                            SIMD3(-(1 - w.x), w.y, w.z))
        let iMinusL = blend(1, .identity, -1, .luma)
        let turn = blend(c - 1, iMinusL, s, k)
        return blend(1, .identity, 1, turn)
    }
}

/// Saturation: `C' = Y + s·(C − Y)` with `Y` the Rec. 709 luma (SPEC §1–§2).
///
/// - `saturation`: unitless; identity 1, 0 is grey, 2 doubles the distance from grey;
///   the sliders demo offers 0…2. Not clamped.
/// - Source: W3C Filter Effects 1, `saturate`; SwiftUI `.saturation(_:)`.
/// - Complexity: 3 multiplies for `Y`, then 3 multiply-adds per pixel.
public struct Saturation: AffineStage {
    /// The saturation factor; identity 1.
    public let saturation: Float
    /// `"saturation"`, for reports and benchmarks.
    public var name: String { "saturation" }

    /// A saturation kernel; `saturation` 1 leaves colours unchanged.
    @_disfavoredOverload
    public init(_ saturation: Float) { self.init(Double(saturation)) }

    /// The kernel for a `Double` value: the row formula runs on `Float(value)`, the
    /// plan composes the matrix built from `value` itself.
    public init(_ value: Double) {
        self.value = value
        saturation = Float(value)
        matrix = ColorMatrix.saturation(value)
    }

    /// The same transform as a matrix in `Double`, for the plan to compose.
    public let matrix: ColorMatrix
    /// The value as given, in `Double`.
    public let value: Double

    /// Applies the formula in place to `row` (RGBA `Float` pixels, alpha untouched);
    /// `location` is unused. O(row.count), no allocation.
    public func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {
        let s = saturation
        switch variant {
        case .scalar:
            for i in row.indices {
                let (r, g, b) = (row[i].x, row[i].y, row[i].z)
                let y = Luma.of(r, g, b)
                row[i].x = y + s * (r - y)
                row[i].y = y + s * (g - y)
                row[i].z = y + s * (b - y)
            }
        case .simd4:
            guard let base = row.baseAddress else { return }
            Saturation.applySIMD4(base, count: row.count, saturation: s, AlphaMasks())
        }
    }

    /// The schedule: luma broadcast, one vector expression per pixel, alpha restored
    /// by the mask it is given (see `AlphaMasks`).
    @inline(never)
    static func applySIMD4(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, saturation s: Float, _ alpha: AlphaMasks) {
        let w = Luma.weights
        for i in 0..<count {
            let v = p[i]
            let y = SIMD4(repeating: w.x * v.x + w.y * v.y + w.z * v.z)
            p[i] = (y + s * (v - y)).replacing(with: v, where: alpha.pixel)
        }
    }
}

/// Contrast: `C' = (C − 0.5)·c + 0.5` (SPEC §2), pivoting on 50 % grey.
///
/// - `contrast`: unitless; identity 1, 0 is flat grey, negative inverts; the sliders
///   demo offers 0.5…1.5. Not clamped.
/// - Source: W3C Filter Effects 1 `contrast`, CIColorControls `inputContrast`,
///   SwiftUI `.contrast(_:)`.
/// - Complexity: one subtract, multiply and add per channel.
public struct Contrast: AffineStage {
    /// The contrast factor; identity 1.
    public let contrast: Float
    /// `"contrast"`, for reports and benchmarks.
    public var name: String { "contrast" }

    /// A contrast kernel; `contrast` 1 leaves colours unchanged.
    @_disfavoredOverload
    public init(_ contrast: Float) { self.init(Double(contrast)) }

    /// The kernel for a `Double` value: the row formula runs on `Float(value)`, the
    /// plan composes the matrix built from `value` itself.
    public init(_ value: Double) {
        self.value = value
        contrast = Float(value)
        matrix = ColorMatrix.contrast(value)
    }

    /// The same transform as a matrix in `Double`, for the plan to compose.
    public let matrix: ColorMatrix
    /// The value as given, in `Double`.
    public let value: Double

    /// Applies the formula in place to `row` (RGBA `Float` pixels, alpha untouched);
    /// `location` is unused. O(row.count), no allocation.
    public func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {
        let c = contrast
        switch variant {
        case .scalar:
            for i in row.indices {
                row[i].x = (row[i].x - 0.5) * c + 0.5
                row[i].y = (row[i].y - 0.5) * c + 0.5
                row[i].z = (row[i].z - 0.5) * c + 0.5
            }
        case .simd4:
            guard let base = row.baseAddress else { return }
            Contrast.applySIMD4(base, count: row.count, contrast: c, AlphaMasks())
        }
    }

    /// The schedule: one vector expression per pixel, alpha restored by the mask it
    /// is given (see `AlphaMasks`).
    @inline(never)
    static func applySIMD4(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, contrast c: Float, _ alpha: AlphaMasks) {
        let half = SIMD4<Float>(repeating: 0.5), cv = SIMD4<Float>(repeating: c)
        for i in 0..<count {
            let v = p[i]
            p[i] = ((v - half) * cv + half).replacing(with: v, where: alpha.pixel)
        }
    }
}

/// Brightness: `C' = C + b` (SPEC §2), additive as in SwiftUI and CIColorControls
/// (not CSS's multiplicative `brightness()`).
///
/// - `brightness`: in [0, 1] units of the working range; identity 0; the sliders
///   demo offers −0.5…0.5. Not clamped.
/// - Complexity: one add per channel.
public struct Brightness: AffineStage {
    /// The offset added to R, G and B; identity 0.
    public let brightness: Float
    /// `"brightness"`, for reports and benchmarks.
    public var name: String { "brightness" }

    /// A brightness kernel; `brightness` 0 leaves colours unchanged.
    @_disfavoredOverload
    public init(_ brightness: Float) { self.init(Double(brightness)) }

    /// The kernel for a `Double` value: the row formula runs on `Float(value)`, the
    /// plan composes the matrix built from `value` itself.
    public init(_ value: Double) {
        self.value = value
        brightness = Float(value)
        matrix = ColorMatrix.brightness(value)
    }

    /// The same transform as a matrix in `Double`, for the plan to compose.
    public let matrix: ColorMatrix
    /// The value as given, in `Double`.
    public let value: Double

    /// Applies the formula in place to `row` (RGBA `Float` pixels, alpha untouched);
    /// `location` is unused. O(row.count), no allocation.
    public func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {
        let b = brightness
        switch variant {
        case .scalar:
            for i in row.indices {
                row[i].x = row[i].x + b
                row[i].y = row[i].y + b
                row[i].z = row[i].z + b
            }
        case .simd4:
            guard let base = row.baseAddress else { return }
            Brightness.applySIMD4(base, count: row.count, brightness: b, AlphaMasks())
        }
    }

    /// The schedule: one vector add per pixel, alpha restored by the mask it is given
    /// (see `AlphaMasks`).
    @inline(never)
    static func applySIMD4(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, brightness b: Float, _ alpha: AlphaMasks) {
        let bv = SIMD4<Float>(repeating: b)
        for i in 0..<count {
            let v = p[i]
            p[i] = (v + bv).replacing(with: v, where: alpha.pixel)
        }
    }
}

/// Hue rotation: `C' = H(θ)·C` with the W3C `hueRotate` matrix (SPEC §2).
///
/// - `degrees`: the angle θ in degrees; identity 0 (and every multiple of 360); the
///   sliders demo offers −180…180. The matrix is built in `Double` from θ reduced
///   modulo 360 and rounded to `Float` once.
/// - Greys stay grey at every angle (each row of `H` sums to 1).
/// - Source: W3C Filter Effects 1, `hue-rotate`; SwiftUI `.hueRotation(_:)`.
/// - Complexity: a 3×3 matrix product per pixel.
public struct HueRotation: AffineStage {
    /// The angle in degrees; identity 0.
    public let degrees: Double
    let kernel: ColorMatrixKernel
    /// `"hue"`, for reports and benchmarks.
    public var name: String { "hue" }

    /// A hue rotation by `degrees`.
    public init(degrees: Double) {
        self.degrees = degrees
        kernel = ColorMatrixKernel(.hueRotation(degrees: degrees), name: "hue")
    }

    /// `H(θ)` in `Double`.
    public var matrix: ColorMatrix { kernel.matrix }

    /// The angle, as given.
    public var value: Double { degrees }

    /// A hue rotation by `value` degrees.
    public init(_ value: Double) { self.init(degrees: value) }

    public static func == (a: HueRotation, b: HueRotation) -> Bool { a.degrees == b.degrees }
    public func hash(into hasher: inout Hasher) { hasher.combine(degrees) }

    /// Applies the formula in place to `row` (RGBA `Float` pixels, alpha untouched);
    /// `location` is unused. O(row.count), no allocation.
    public func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {
        kernel.apply(row, at: location, variant: variant)
    }
}

/// The four adjustments of a photo editor's sliders, in SwiftUI's order:
/// saturation → contrast → brightness → hue rotation (SPEC §2).
///
/// All four are affine and nothing clamps between them, so the chain is one matrix
/// and offset, `M = H(θ)·c·S(s)`, `t = ((1 − c)/2 + b)·(1, 1, 1)` (`matrix`), built
/// in `Double` and rounded to `Float` once (`kernel`). `sequentialKernels` runs the
/// four one after another, as the readable reference for the fused form.
///
/// Encodes to JSON as `{"saturation": 1, "contrast": 1, "brightness": 0, "hue": 0}`.
public struct Adjustments: Sendable, Hashable, Codable {
    /// Saturation factor, identity 1 (slider range 0…2).
    public var saturation: Double
    /// Contrast factor, identity 1 (slider range 0.5…1.5).
    public var contrast: Double
    /// Additive brightness, identity 0 (slider range −0.5…0.5).
    public var brightness: Double
    /// Hue rotation in degrees, identity 0 (slider range −180…180).
    public var hue: Double

    /// The four adjustments; every default is the identity.
    public init(saturation: Double = 1, contrast: Double = 1, brightness: Double = 0, hue: Double = 0) {
        self.saturation = saturation
        self.contrast = contrast
        self.brightness = brightness
        self.hue = hue
    }

    /// No adjustment at all: `(1, 1, 0, 0)`.
    public static let identity = Adjustments()

    /// Whether every value is its identity (hue 360·k counts as identity).
    public var isIdentity: Bool {
        saturation == 1 && contrast == 1 && brightness == 0 && hue.truncatingRemainder(dividingBy: 360) == 0
    }

    /// The fused transform `S(s)`, then contrast, then brightness, then `H(θ)`,
    /// composed in `Double`.
    public var matrix: ColorMatrix {
        ColorMatrix.saturation(saturation)
            .then(.contrast(contrast))
            .then(.brightness(brightness))
            .then(.hueRotation(degrees: hue))
    }

    /// The fused one-matrix kernel.
    public var kernel: ColorMatrixKernel { ColorMatrixKernel(matrix, name: "adjustments") }

    /// The four kernels in order, each one pass: the reference for `kernel`.
    public var sequentialKernels: [any PixelKernel] {
        [Saturation(saturation), Contrast(contrast), Brightness(brightness), HueRotation(degrees: hue)]
    }

    /// The demo's "vivid" preset: brightness 0.05, contrast 1.2, saturation 1.7, hue 0.
    public static let vivid = Adjustments(saturation: 1.7, contrast: 1.2, brightness: 0.05, hue: 0)
    /// The demo's "noir" preset: brightness −0.05, contrast 1.35, saturation 0, hue 0.
    public static let noir = Adjustments(saturation: 0, contrast: 1.35, brightness: -0.05, hue: 0)
    /// The demo's "dream" preset: brightness 0.1, contrast 0.85, saturation 1.2, hue 60.
    public static let dream = Adjustments(saturation: 1.2, contrast: 0.85, brightness: 0.1, hue: 60)
}

/// The sliders demo's named presets (SPEC §6).
public enum Preset: String, Sendable, CaseIterable, Codable {
    /// Punchy colour: saturation 1.7, contrast 1.2, brightness 0.05.
    case vivid
    /// Black and white with bite: saturation 0, contrast 1.35, brightness −0.05.
    case noir
    /// Soft and shifted: saturation 1.2, contrast 0.85, brightness 0.1, hue 60°.
    case dream

    /// The preset's slider values.
    public var adjustments: Adjustments {
        switch self {
        case .vivid: .vivid
        case .noir: .noir
        case .dream: .dream
        }
    }

    /// A one-line description for `photokernels effects`.
    public var summary: String {
        let a = adjustments
        return "brightness \(a.brightness), contrast \(a.contrast), saturation \(a.saturation), hue \(a.hue)°"
    }
}

/// A family whose recipe value is one number (the sliders, exposure, vibrance): JSON
/// is the number itself, validation checks it is finite as a `Float`.
public protocol NumberOperation: RecipeOperation {
    /// The operation for `value`.
    init(_ value: Double)
    /// The number, as given.
    var value: Double { get }
}

extension NumberOperation {
    /// Reads the number.
    public init(from decoder: Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(Double.self))
    }

    /// Writes the number.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(value)
    }

    /// Checks that the number is finite as a `Float`.
    public func validate() throws(RecipeError) { try validateFinite(Self.family.key, value) }

    /// The family's identity.
    public var neutral: Self { (Self.family.identity as? Self) ?? self }

    /// `(1 − t)·a + t·b`: exactly `a` at 0 and `b` at 1.
    public func interpolated(to other: Self, at t: Double) -> Self? {
        Self((1 - t) * value + t * other.value)
    }
}

extension NumberOperation where Self: AffineStage {
    /// The matrix in `Double` on the colour; alpha kept.
    public func evaluate(_ color: SIMD4<Double>, x: Int, y: Int, width: Int, height: Int) -> SIMD4<Double> {
        let c = matrix.applied(to: SIMD3(color.x, color.y, color.z))
        return SIMD4(c.x, c.y, c.z, color.w)
    }
}

extension Saturation: NumberOperation {
    /// The `saturation` family (SwiftUI `.saturation`, W3C `saturate`).
    public static let family = KernelFamily(
        key: "saturation", summary: "saturation C' = Y + s·(C − Y) (SwiftUI .saturation, W3C saturate)", kind: .affine,
        parameters: [FamilyParameter("saturation", identity: "1", range: "0…2", help: "0 grey, 1 unchanged, above 1 boosts")],
        options: [FamilyOption("saturation", valueName: "s", help: "Scale the distance from grey (identity 1; 0 is grey; slider range 0…2).") {
            $0.adjustments.saturation = $1
        }],
        examples: [("saturation", Saturation(1.7))], identity: Saturation(1.0), type: Saturation.self)

    /// Whether the factor is 1.
    public var isIdentity: Bool { value == 1 }
    /// `[.affine(self)]`.
    public var stages: [Stage] { [stage] }
}

extension Contrast: NumberOperation {
    /// The `contrast` family (SwiftUI `.contrast`, CIColorControls).
    public static let family = KernelFamily(
        key: "contrast", summary: "contrast C' = (C − 0.5)·c + 0.5 (SwiftUI .contrast, CIColorControls)", kind: .affine,
        parameters: [FamilyParameter("contrast", identity: "1", range: "0.5…1.5", help: "0 flat grey, negative inverts")],
        options: [FamilyOption("contrast", valueName: "c", help: "Scale around 50 % grey (identity 1; slider range 0.5…1.5).") {
            $0.adjustments.contrast = $1
        }],
        examples: [("contrast", Contrast(1.2))], identity: Contrast(1.0), type: Contrast.self)

    /// Whether the factor is 1.
    public var isIdentity: Bool { value == 1 }
    /// `[.affine(self)]`.
    public var stages: [Stage] { [stage] }
}

extension Brightness: NumberOperation {
    /// The `brightness` family (SwiftUI `.brightness`, CIColorControls: additive).
    public static let family = KernelFamily(
        key: "brightness", summary: "brightness C' = C + b (SwiftUI .brightness, CIColorControls)", kind: .affine,
        parameters: [FamilyParameter("brightness", identity: "0", range: "−0.5…0.5", help: "added to every channel")],
        options: [FamilyOption("brightness", valueName: "b", help: "Add b to R, G and B (identity 0; slider range -0.5…0.5).") {
            $0.adjustments.brightness = $1
        }],
        examples: [("brightness", Brightness(0.05))], identity: Brightness(0.0), type: Brightness.self)

    /// Whether the offset is 0.
    public var isIdentity: Bool { value == 0 }
    /// `[.affine(self)]`.
    public var stages: [Stage] { [stage] }
}

extension HueRotation: NumberOperation {
    /// The `hue` family (SwiftUI `.hueRotation`, W3C `hue-rotate`).
    public static let family = KernelFamily(
        key: "hue", summary: "hue rotation by θ degrees (SwiftUI .hueRotation, W3C hue-rotate)", kind: .affine,
        parameters: [FamilyParameter("hue", identity: "0", range: "−180…180", unit: "degrees",
                                     help: "rotates hue; greys stay grey")],
        options: [FamilyOption("hue", valueName: "degrees", help: "Rotate hues (identity 0; slider range -180…180).") {
            $0.adjustments.hue = $1
        }],
        examples: [("hue", HueRotation(degrees: 60))], identity: HueRotation(degrees: 0), type: HueRotation.self)

    /// Along the shorter arc: from 170° to −170° passes 180°, not 0°.
    public func interpolated(to other: HueRotation, at t: Double) -> HueRotation? {
        var d = (other.degrees - degrees).truncatingRemainder(dividingBy: 360)
        if d > 180 { d -= 360 } else if d < -180 { d += 360 }
        return t == 1 ? other : HueRotation(degrees: degrees + d * t)
    }

    /// Whether the angle is a multiple of 360.
    public var isIdentity: Bool { degrees.truncatingRemainder(dividingBy: 360) == 0 }
    /// `[.affine(self)]`.
    public var stages: [Stage] { [stage] }
}
