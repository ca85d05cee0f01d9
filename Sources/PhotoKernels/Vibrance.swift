// Vibrance (SPEC §5): saturation that spares what is already saturated. Per pixel and
// not affine (the factor depends on the pixel's own spread of channels), so it runs as
// a row kernel of its own.

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
import _Builtin_intrinsics.intel
#endif

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
/// Schedules: `.scalar` is the formula per channel; `.simd4` computes the `sat`, `s` and
/// `Y` of several pixels at once as structure of arrays (eight pixels in registers
/// where the build targets AVX2, four at a time through small buffers elsewhere), then
/// each pixel's three channels from its own `s` and `Y` — the same operations in the
/// same order per channel, so the two agree to the bit (a NaN's payload aside).
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
        case .simd4: Vibrance.applySIMD4(base, count: row.count, amount: v)
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

    /// The schedule. Where the build targets AVX2 (and has the toolchain's Clang module
    /// of Intel intrinsics), eight pixels a step in registers (`applyInRegisters`), the
    /// last one to seven as below.
    ///
    /// Elsewhere two passes over each 64 pixels: their factors `s` and lumas `Y`
    /// four pixels a step, as structure of arrays (one `SIMD4<Float>` lane per pixel),
    /// stored in two small buffers; then each pixel's three channels on one
    /// `SIMD4<Float>` from its own two entries, alpha kept by memory
    /// (`replaceColour(ofPixelAt:_:)`). The same operations in the same order as the
    /// reference, so the two agree to the bit (a NaN's payload aside; `BlockFactors`).
    ///
    /// The first pass asks for each line 4 KiB ahead (`Prefetch`): it is the one that
    /// meets memory (1.02× in the default build, 1.04× natively, at 12 MP).
    ///
    /// The buffers keep the arrays as written: where each pixel took its factor and
    /// luma straight from the vectors' lanes, the optimiser moved their arithmetic into
    /// the pixels' own lanes, the factor with a branch per lane (414 MP/s at 12 MP in
    /// the default build, 614 with `minps(+∞, x)` as a barrier, 714 so).
    @inline(never)
    static func applySIMD4(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, amount v: Float) {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        guard count > 0 else { return }
        let blocks = count & ~7
        if blocks != 0 { applyInRegisters(p, count: blocks, amount: v, AlphaMasks(), HalfLaneBroadcasts()) }
        if blocks != count { applyInTwoPasses(p + blocks, count: count &- blocks, amount: v) }
        #else
        applyInTwoPasses(p, count: count, amount: v)
        #endif
    }

    /// The two-pass schedule (see `applySIMD4`).
    @inline(never)
    static func applyInTwoPasses(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, amount v: Float) {
        let factors = BlockFactors(amount: v)
        // 64 pixels at a time: their factors and lumas into two small buffers, four
        // pixels a step, then each pixel from its own entries.
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 128) { buffers in
            let s = buffers.baseAddress!, y = s + 64
            forEachChunkInTwoPasses(p, count: count, group: { c0, c1, c2, c3, k in
                factors.factors(c0, c1, c2, c3, into: s + k, y + k)
            }, pixel: { q, i in
                let yi = SIMD4<Float>(repeating: y[i]), si = SIMD4<Float>(repeating: s[i])
                replaceColour(ofPixelAt: UnsafeMutableRawPointer(q)) { c in yi + si * (c - yi) }
            })
        }
    }

    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
    /// The schedule for builds with AVX2 on `count` pixels, a multiple of 8, in place:
    /// eight pixels a step, never leaving the registers.
    ///
    /// The step loads the pixels as four pairs `P₀…P₃` (pixels 2j and 2j + 1 in the
    /// halves of `Pⱼ`) and transposes them within each 128-bit half (four `vunpcklps`
    /// or `vunpckhps`, three `vunpcklpd` or `vunpckhpd`) into `R`, `G` and `B` of all
    /// eight, pixel 2j in lane j of the low half and 2j + 1 in lane j of the high one.
    /// The factors `s` and lumas `Y` follow as structure of arrays, with `BlockFactors`'
    /// minima and maxima; then `Pⱼ`'s own `Y` and `s` are lane j of each half, broadcast
    /// over its half by one `vpermilps` each (`HalfLaneBroadcasts`), and
    /// `Y + s·(C − Y)` gives both pixels, alpha restored by a lane mask. The same
    /// operations in the same order as the reference, so the two agree to the bit (a
    /// NaN's payload aside). The loop asks for each line 4 KiB ahead (`Prefetch`).
    ///
    /// Its constants come in as values (`AlphaMasks`, `HalfLaneBroadcasts`), so the
    /// optimiser cannot narrow the work before a shuffle to the lanes the shuffle reads
    /// (`LumaBroadcasts`).
    @inline(never)
    static func applyInRegisters(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, amount v: Float,
                                 _ alpha: AlphaMasks, _ broadcasts: HalfLaneBroadcasts) {
        let raw = UnsafeMutableRawPointer(p)
        let keep = alpha.pair
        let amount = SIMD8<Float>(repeating: v), one = SIMD8<Float>(repeating: 1), zero = SIMD8<Float>()
        let wR = SIMD8<Float>(repeating: Luma.weights.x), wG = SIMD8<Float>(repeating: Luma.weights.y)
        let wB = SIMD8<Float>(repeating: Luma.weights.z)
        // `BlockFactors`' choices: `maxps(y, x)` is `max(x, y)`, `minps(y, x)` is `min(x, y)`.
        @inline(__always) func maximum(_ x: SIMD8<Float>, _ y: SIMD8<Float>) -> SIMD8<Float> { _mm256_max_ps(y, x) }
        @inline(__always) func minimum(_ x: SIMD8<Float>, _ y: SIMD8<Float>) -> SIMD8<Float> { _mm256_min_ps(y, x) }
        @inline(__always) func pairs(_ x: SIMD8<Float>, _ y: SIMD8<Float>, high: Bool) -> SIMD8<Float> {
            let (a, b) = (_mm256_castps_pd(x), _mm256_castps_pd(y))
            return _mm256_castpd_ps(high ? _mm256_unpackhi_pd(a, b) : _mm256_unpacklo_pd(a, b))
        }
        @inline(__always) func pixels(_ c: SIMD8<Float>, _ y: SIMD8<Float>, _ s: SIMD8<Float>,
                                      _ lane: __m256i, at offset: Int) {
            let yj = _mm256_permutevar_ps(y, lane), sj = _mm256_permutevar_ps(s, lane)
            raw.storeBytes(of: (yj + sj * (c - yj)).replacing(with: c, where: keep), toByteOffset: offset,
                           as: SIMD8<Float>.self)
        }
        let ahead = Prefetch.distance
        var offset = 0
        let end = count &* 16
        while offset < end {
            Prefetch.write(raw, offset: offset &+ ahead)
            Prefetch.write(raw, offset: offset &+ (ahead &+ 64))
            let p0 = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            let p1 = raw.loadUnaligned(fromByteOffset: offset &+ 32, as: SIMD8<Float>.self)
            let p2 = raw.loadUnaligned(fromByteOffset: offset &+ 64, as: SIMD8<Float>.self)
            let p3 = raw.loadUnaligned(fromByteOffset: offset &+ 96, as: SIMD8<Float>.self)
            // (R₀ R₂ G₀ G₂ | R₁ R₃ G₁ G₃), (R₄ R₆ G₄ G₆ | …), (B₀ B₂ A₀ A₂ | …), (B₄ B₆ A₄ A₆ | …)
            let low01 = _mm256_unpacklo_ps(p0, p1), low23 = _mm256_unpacklo_ps(p2, p3)
            let high01 = _mm256_unpackhi_ps(p0, p1), high23 = _mm256_unpackhi_ps(p2, p3)
            let r = pairs(low01, low23, high: false), g = pairs(low01, low23, high: true)
            let b = pairs(high01, high23, high: false)
            let spread = maximum(maximum(r, g), b) - minimum(minimum(r, g), b)
            let sat = minimum(maximum(spread, zero), one)
            let s = one + amount * (one - sat)
            let y = wR * r + wG * g + wB * b
            pixels(p0, y, s, broadcasts.lane0, at: offset)
            pixels(p1, y, s, broadcasts.lane1, at: offset &+ 32)
            pixels(p2, y, s, broadcasts.lane2, at: offset &+ 64)
            pixels(p3, y, s, broadcasts.lane3, at: offset &+ 96)
            offset &+= 128
        }
    }

    /// The `vpermilps` patterns that broadcast lane k of each 128-bit half over that
    /// half, k = 0…3, held as values as `LumaBroadcasts`' are.
    struct HalfLaneBroadcasts: Sendable {
        /// Lane 0, 1, 2 and 3 of each half, as `vpermilps` patterns (the index in
        /// every 32-bit lane).
        let lane0, lane1, lane2, lane3: __m256i

        /// The four patterns.
        init() {
            func pattern(_ k: Int32) -> __m256i { unsafeBitCast(SIMD8<Int32>(repeating: k), to: __m256i.self) }
            (lane0, lane1, lane2, lane3) = (pattern(0), pattern(1), pattern(2), pattern(3))
        }
    }
    #endif

    /// Four pixels' factors and lumas as structure of arrays.
    ///
    /// The minima and maxima are SSE's `minps` and `maxps` where the build has the
    /// Clang module of Intel intrinsics, one instruction each where SSE2's selects take
    /// four. `minps(y, x)` is `y < x ? y : x`, which is the standard library's
    /// `min(x, y)` for every input; `maxps(y, x)` is `y > x ? y : x`, its `max(x, y)`
    /// (`y >= x ? y : x`) except that of two equal zeros it may keep the other sign,
    /// which changes no factor: a spread of ±0 gives `1 − sat = 1` either way. NaN
    /// takes the same choices. Elsewhere the selects themselves, with the standard
    /// library's choices.
    struct BlockFactors {
        let amount: SIMD4<Float>
        let one = SIMD4<Float>(repeating: 1)
        let zero = SIMD4<Float>()
        let wR = SIMD4<Float>(repeating: Luma.weights.x)
        let wG = SIMD4<Float>(repeating: Luma.weights.y)
        let wB = SIMD4<Float>(repeating: Luma.weights.z)

        init(amount v: Float) { amount = SIMD4(repeating: v) }

        /// The standard library's `max(x, y)` lane by lane (equal zeros aside, above).
        @inline(__always)
        func maximum(_ x: SIMD4<Float>, _ y: SIMD4<Float>) -> SIMD4<Float> {
            #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
            _mm_max_ps(y, x)
            #else
            x.replacing(with: y, where: y .>= x)
            #endif
        }

        /// The standard library's `min(x, y)` lane by lane.
        @inline(__always)
        func minimum(_ x: SIMD4<Float>, _ y: SIMD4<Float>) -> SIMD4<Float> {
            #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
            _mm_min_ps(y, x)
            #else
            x.replacing(with: y, where: y .< x)
            #endif
        }

        /// The factors `s` and lumas `Y` of four pixels, stored at `s` and `y`.
        @inline(__always)
        func factors(_ c0: SIMD4<Float>, _ c1: SIMD4<Float>, _ c2: SIMD4<Float>, _ c3: SIMD4<Float>,
                     into s: UnsafeMutablePointer<Float>, _ y: UnsafeMutablePointer<Float>) {
            let r = SIMD4(c0.x, c1.x, c2.x, c3.x)
            let g = SIMD4(c0.y, c1.y, c2.y, c3.y)
            let b = SIMD4(c0.z, c1.z, c2.z, c3.z)
            let spread = maximum(maximum(r, g), b) - minimum(minimum(r, g), b)
            let sat = minimum(maximum(spread, zero), one)
            UnsafeMutableRawPointer(s).storeBytes(of: one + amount * (one - sat), as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(y).storeBytes(of: wR * r + wG * g + wB * b, as: SIMD4<Float>.self)
        }
    }
}
