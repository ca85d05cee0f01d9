// Vibrance (SPEC §5): saturation that spares what is already saturated. Per pixel and
// not affine (the factor depends on the pixel's own spread of channels), so it runs as
// a row kernel of its own.

/// Vibrance (CIVibrance-like, SPEC §5): a saturation change scaled down for pixels
/// that are already colourful, so muted colours gain the most and skin tones stay
/// pleasing.
///
/// On each pixel (alpha unchanged, never clamped):
/// ```
/// sat = clamp(max(R, G, B) − min(R, G, B), 0, 1)
/// s   = 1 + v·(1 − sat)
/// Y   = 0.2126 R + 0.7152 G + 0.0722 B                (SPEC §1)
/// C'  = Y + s·(C − Y)                                  for C in R, G, B
/// ```
/// A grey pixel (`sat = 0`) gets the full factor `1 + v`, but `C − Y` is the same on
/// every channel, so it stays grey exactly; a pixel with a channel spread of 1 or more
/// is unchanged. A NaN channel makes `Y` NaN and only that pixel NaN.
///
/// - `amount`: `v`, unitless; identity 0; typical range −1…1 (−1 turns muted colours
///   grey), not clamped.
/// - Source: CIVibrance's description, "adjusts the saturation of an image while
///   keeping pleasing skin tones" [doc]; the formula is this library's own [own].
///   GPUImage's vibrance uses `max − mean` as the spread instead.
///
/// Schedules: `.scalar` is the formula per channel; `.simd4` computes `sat`, `s` and `Y`
/// once per pixel and the three channels on one `SIMD4<Float>` — the same operations
/// in the same order per channel, so the two agree to the bit.
///
/// Complexity: O(n) per row of n pixels; no allocation.
public struct Vibrance: PixelKernel, NumberOperation {
    /// The amount `v`; identity 0.
    public let amount: Double
    /// `"vibrance"`.
    public var name: String { "vibrance" }

    /// Vibrance by `amount` (0 changes nothing).
    public init(amount: Double) { self.amount = amount }

    /// Vibrance by `value`.
    public init(_ value: Double) { self.init(amount: value) }

    /// The amount, as given.
    public var value: Double { amount }

    /// SPEC §5's formula in `Double`; alpha kept.
    public func evaluate(_ color: SIMD4<Double>, x: Int, y: Int, width: Int, height: Int) -> SIMD4<Double> {
        let (r, g, b) = (color.x, color.y, color.z)
        let sat = min(max(max(r, g, b) - min(r, g, b), 0), 1)
        let s = 1 + amount * (1 - sat)
        let w = Luma.weightsDouble
        let luma = w.x * r + w.y * g + w.z * b
        return SIMD4(luma + s * (r - luma), luma + s * (g - luma), luma + s * (b - luma), color.w)
    }

    /// Whether the amount is 0.
    public var isIdentity: Bool { amount == 0 }

    /// `[.pixel(self)]`.
    public var stages: [Stage] { [stage] }

    /// The `vibrance` family.
    public static let family = KernelFamily(
        key: "vibrance",
        summary: "saturation that spares saturated colours: s = 1 + v·(1 − spread) (CIVibrance-like)",
        kind: .pixel,
        parameters: [FamilyParameter("vibrance", identity: "0", range: "−1…1",
                                     help: "muted colours change most, saturated ones not at all")],
        options: [FamilyOption("vibrance", valueName: "v", help: "Raise the saturation of muted colours, sparing saturated ones (identity 0; -1…1).") {
            $0[Vibrance.self] = $1 == 0 ? nil : Vibrance(amount: $1)
        }],
        examples: [("vibrance", Vibrance(amount: 0.6))],
        identity: Vibrance(amount: 0), type: Vibrance.self)

    /// Applies vibrance in place to `row` (straight-alpha RGBA, alpha kept); the row's
    /// position is not used.
    ///
    /// - Complexity: O(row.count); no allocation.
    public func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {
        guard amount != 0, let base = row.baseAddress else { return }
        let v = Float(amount)
        switch variant {
        case .scalar: Vibrance.applyScalar(base, count: row.count, amount: v)
        case .simd4: Vibrance.applySIMD4(base, count: row.count, amount: v, AlphaMasks())
        }
    }

    /// The reference: the formula per channel, as written.
    static func applyScalar(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, amount v: Float) {
        for i in 0..<count {
            let (r, g, b) = (p[i].x, p[i].y, p[i].z)
            let spread = max(r, g, b) - min(r, g, b)
            let sat = min(max(spread, 0), 1)
            let s = 1 + v * (1 - sat)
            let y = Luma.of(r, g, b)
            p[i].x = y + s * (r - y)
            p[i].y = y + s * (g - y)
            p[i].z = y + s * (b - y)
        }
    }

    /// The schedule: one pixel per `SIMD4<Float>`, the spread from lane compares (no
    /// `pointwiseMin/Max`), NaN propagated as the scalar `max`/`min` do for this pixel.
    @inline(never)
    static func applySIMD4(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, amount v: Float, _ alpha: AlphaMasks) {
        let w = Luma.weights
        for i in 0..<count {
            let c = p[i]
            let (r, g, b) = (c.x, c.y, c.z)
            // Swift's `max(r, g, b)` is `max(max(r, g), b)` with `x > y ? x : y`-style
            // comparisons; these selects make the same choices, NaN included.
            let spread = max(r, g, b) - min(r, g, b)
            let sat = min(max(spread, 0), 1)
            let s = SIMD4<Float>(repeating: 1 + v * (1 - sat))
            let y = SIMD4<Float>(repeating: w.x * r + w.y * g + w.z * b)
            p[i] = (y + s * (c - y)).replacing(with: c, where: alpha.pixel)
        }
    }
}
