// Monochrome (SPEC §5): tint an image's luma towards one colour, CIColorMonochrome-
// like. Piecewise in the luma, so not affine: it cannot fuse into a ColorMatrix and
// runs as its own kernel.

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
import _Builtin_intrinsics.intel
#endif

/// A monochrome tint (CIColorMonochrome-like, SPEC §5): every pixel becomes a shade of
/// `color` chosen by its luma, blended with the original by `intensity`.
///
/// On each channel `C` of R, G, B with tint `k` (alpha unchanged, never clamped):
/// ```
/// Y  = 0.2126 R + 0.7152 G + 0.0722 B                (SPEC §1)
/// m  = 2·Y·k                  if Y < 0.5
///    = 1 − 2·(1 − Y)·(1 − k)  otherwise              (an "overlay" of k on Y)
/// C' = C + i·(m − C)
/// ```
/// Black (Y = 0) stays black, grey 0.5 becomes `k`, white (Y = 1) stays white; the
/// map from Y to m is continuous and piecewise linear. A NaN channel makes Y NaN, so
/// all three channels of that pixel become NaN (both branches are NaN); no other pixel
/// is affected.
///
/// - `color`: the tint `k`, one value per channel in [0, 1] (not clamped); default
///   (0.6, 0.45, 0.3), a warm brown. `k = (0.5, 0.5, 0.5)` maps every pixel to its
///   grey `(Y, Y, Y)` at intensity 1.
/// - `intensity`: `i ≥ 0` (documented, not enforced); identity 0 (the kernel then
///   returns without touching a pixel), full tint 1, values above 1 extrapolate.
/// - Source: the formula of GPUImage's `GPUImageMonochromeFilter` and Vidvox ISF's
///   "Color Monochrome", which agree [impl]; Core Image does not document
///   CIColorMonochrome's curve.
///
/// JSON (`Codable`): `{"color": [0.6, 0.45, 0.3], "intensity": 1}`; missing fields
/// take the defaults; NaN or infinite numbers and a colour that is not three numbers
/// are decoding errors.
///
/// Arithmetic: the doublings go on the tint, once per row: `m = Y·(2k)` and
/// `1 − (1 − Y)·(2(1 − k))`. Doubling is exact, so each product is the same real
/// number as SPEC's `2·Y·k` and `2·(1 − Y)·(1 − k)`, rounded once, and the same `Float`
/// (the forms can differ only where a doubled luma or tint leaves `Float`'s range,
/// from 2¹²⁷; a doubled tint there is held at `Float`'s largest value, `Tint`). Two
/// operations fewer on each pixel's dependency chain made the schedule about 1.2× as
/// fast natively and 1.1× in the baseline build on a Zen 3.
///
/// Schedules: `.scalar` is the formula per channel with a branch on `Y < 0.5`;
/// `.simd4` computes `Y` once, both branches on the pixel's four lanes, and selects
/// with the mask `Y < 0.5` — the same operations in the same order per channel, so
/// the two agree to the bit (a NaN's payload aside: where two NaNs meet, the compiler
/// may combine the operands in either order; any NaN counts as NaN, SPEC §8). It runs
/// two pixels per `SIMD8<Float>`, lane for lane the same arithmetic; x86 builds without
/// AVX2 compute four pixels' lumas and tones at once instead, then each pixel from its
/// tones (`applyInTwoPasses`).
///
/// Complexity: O(n) per row of n pixels; no allocation.
public struct Monochrome: PixelKernel, Hashable {
    /// The tint `k` (R, G, B), each nominally in [0, 1]; default (0.6, 0.45, 0.3).
    public var color: SIMD3<Double>
    /// The blend with the original, `i ≥ 0`; identity 0, default 1.
    public var intensity: Double

    /// `"monochrome"`.
    public var name: String { "monochrome" }

    /// The default tint, (0.6, 0.45, 0.3).
    public static let defaultColor = SIMD3<Double>(0.6, 0.45, 0.3)

    /// A monochrome tint; the defaults are CIColorMonochrome-like brown at full strength.
    public init(color: SIMD3<Double> = SIMD3(0.6, 0.45, 0.3), intensity: Double = 1) {
        self.color = color
        self.intensity = intensity
    }

    /// The filter strip's "B&W": `k = (0.6, 0.6, 0.6)`, `i = 1` — a neutral black and
    /// white with slightly lifted mid-tones (grey 0.5 becomes 0.6).
    public static let blackAndWhite = Monochrome(color: SIMD3(repeating: 0.6), intensity: 1)

    /// Whether the kernel changes nothing (intensity 0).
    public var isIdentity: Bool { intensity == 0 }

    /// Applies the tint in place to one row of straight-alpha RGBA pixels (A kept);
    /// returns at once when the intensity is 0. The row's position is not used.
    ///
    /// - Complexity: O(row.count); no allocation.
    public func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {
        guard !isIdentity, let base = row.baseAddress else { return }
        // Rounded to Float once; both schedules read these same values.
        let k = SIMD4<Float>(Float(color.x), Float(color.y), Float(color.z), 0)
        let tint = Tint(k)
        let i = Float(intensity)
        switch variant {
        case .scalar: Monochrome.applyScalar(base, count: row.count, tint, intensity: i)
        case .simd4: Monochrome.applySIMD4(base, count: row.count, tint, intensity: i, AlphaMasks(), LumaBroadcasts())
        }
    }

    /// The tint `k` (lane 3 zero) with its doublings done: `2k` for the dark branch and
    /// `2(1 − k)` for the light one, each exact. A doubling past `Float`'s range (a tint
    /// component of 2¹²⁷ or more, no colour) is held at ±`greatestFiniteMagnitude`, so
    /// that black and white still stay themselves (`0·∞` would make them NaN).
    struct Tint {
        let dark, light: SIMD4<Float>

        init(_ k: SIMD4<Float>) {
            dark = Self.finite(2 * k)
            light = Self.finite(2 * (1 - k))
        }

        /// `x` with ±∞ held at ±`greatestFiniteMagnitude` (NaN kept).
        static func finite(_ x: SIMD4<Float>) -> SIMD4<Float> {
            let limit = SIMD4<Float>(repeating: .greatestFiniteMagnitude)
            return x.replacing(with: limit, where: x .> limit).replacing(with: -limit, where: x .< -limit)
        }
    }

    /// The reference: SPEC §5 one channel at a time, the doublings on the tint.
    static func applyScalar(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, _ tint: Tint, intensity i: Float) {
        @inline(__always)
        func tone(_ y: Float, _ dark: Float, _ light: Float) -> Float {
            y < 0.5 ? y * dark : 1 - (1 - y) * light
        }
        let d = tint.dark, l = tint.light
        for x in 0..<count {
            let r = p[x].x, g = p[x].y, b = p[x].z
            let y = Luma.of(r, g, b)
            p[x].x = r + i * (tone(y, d.x, l.x) - r)
            p[x].y = g + i * (tone(y, d.y, l.y) - g)
            p[x].z = b + i * (tone(y, d.z, l.z) - b)
        }
    }

    /// The schedule (in x86 builds without AVX2, `applyInTwoPasses` instead): two
    /// pixels per `SIMD8<Float>`, an odd last pixel alone. The products `wR·R`, `wG·G`,
    /// `wB·B` are broadcast within each half (`LumaBroadcasts`), so every lane computes
    /// `Y = wR·R + wG·G + wB·B` left to right, both branches and the `Y < 0.5` select
    /// exactly as the one-pixel formula does: the same bits (NaN payloads aside, as
    /// above). Alpha is restored by the masks it is given (see `AlphaMasks`); the
    /// broadcasts take their patterns from `broadcasts`. A first pixel off a 32-byte
    /// boundary goes alone (`pixelsBeforePairBoundary`).
    ///
    /// One walk in order on every processor, prefetching `Prefetch.distance` (4 KiB)
    /// ahead, not `MemoryStreams`: there its eleven copies of the loop body outgrew the
    /// inliner and every load and store became a call. On a Zen 3 the prefetches made
    /// the native kernel 1.27× as fast at 12 MP. Four interleaved streams,
    /// the Xeon's faster walk for the in-place kernels bound by memory, are not tried
    /// here.
    @inline(never)
    static func applySIMD4(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, _ tint: Tint, intensity: Float,
                           _ alpha: AlphaMasks, _ broadcasts: LumaBroadcasts) {
        #if arch(x86_64) && !canImport(TargetFeatures.AVX2)
        applyInTwoPasses(p, count: count, tint, intensity: intensity)
        #else
        if pixelsBeforePairBoundary(p, count: count) != 0, count > 1 {
            applySIMD4(p, count: 1, tint, intensity: intensity, alpha, broadcasts)
            return applySIMD4(p + 1, count: count &- 1, tint, intensity: intensity, alpha, broadcasts)
        }
        let w = Luma.weights
        let raw = UnsafeMutableRawPointer(p)
        let w2 = SIMD8(lowHalf: w, highHalf: w)
        let dark2 = SIMD8(lowHalf: tint.dark, highHalf: tint.dark)
        let light2 = SIMD8(lowHalf: tint.light, highHalf: tint.light)
        let i2 = SIMD8<Float>(repeating: intensity)
        let keep = alpha.pair
        let ahead = Prefetch.distance
        var offset = 0
        for k in 0..<(count &>> 1) {
            if k & 1 == 0 { Prefetch.read(raw, offset: offset &+ ahead) }
            let v = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            let y = broadcasts.luma(w2 * v)
            let dark = y * dark2
            let light = 1 - (1 - y) * light2
            let m = light.replacing(with: dark, where: y .< 0.5)
            raw.storeBytes(of: (v + i2 * (m - v)).replacing(with: v, where: keep), toByteOffset: offset,
                           as: SIMD8<Float>.self)
            offset &+= 32
        }
        if count & 1 != 0 {
            let last = p + (count &- 1)
            let v = last.pointee
            let i = SIMD4<Float>(repeating: intensity)
            let y = SIMD4<Float>(repeating: w.x * v.x + w.y * v.y + w.z * v.z)
            let dark = y * tint.dark
            let light = 1 - (1 - y) * tint.light
            let m = light.replacing(with: dark, where: y .< 0.5)
            last.pointee = (v + i * (m - v)).replacing(with: v, where: alpha.pixel)
        }
        #endif
    }

    #if arch(x86_64) && !canImport(TargetFeatures.AVX2)
    /// The schedule for x86 builds without AVX2 (SSE2), in two passes over each 64
    /// pixels: their lumas and tones four pixels a step, as structure of arrays (one
    /// `SIMD4<Float>` lane per pixel: the four pixels' R, G and B gathered into three
    /// vectors), each channel's tone stored in a small buffer; then each pixel's three
    /// channels on one `SIMD4<Float>` from its own three entries, alpha kept by memory
    /// (`replaceColour(ofPixelAt:_:)`). The same operations in the same order as the
    /// reference, so the two agree to the bit (NaN payloads aside).
    ///
    /// SSE2 has no shuffle with a pattern from a register, and with the luma broadcast
    /// over a pixel's lanes by constant shuffles the optimiser knew every lane equal:
    /// it turned the two-pixel form into transposes and a one-pixel form into a scalar
    /// comparison choosing between whole vectors, a branch a pixel. Here the comparison
    /// `Y < 0.5` runs on four pixels' lumas at once, and the tones reach each pixel
    /// through memory, as vibrance's factors do.
    ///
    /// The walk is `forEachChunkInTwoPasses`'s, vibrance's too.
    @inline(__always)
    static func applyInTwoPasses(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, _ tint: Tint,
                                 intensity: Float) {
        let w = Luma.weights
        let wR = SIMD4<Float>(repeating: w.x), wG = SIMD4<Float>(repeating: w.y), wB = SIMD4<Float>(repeating: w.z)
        let half = SIMD4<Float>(repeating: 0.5), one = SIMD4<Float>(repeating: 1)
        let darkR = SIMD4<Float>(repeating: tint.dark.x), darkG = SIMD4<Float>(repeating: tint.dark.y)
        let darkB = SIMD4<Float>(repeating: tint.dark.z)
        let lightR = SIMD4<Float>(repeating: tint.light.x), lightG = SIMD4<Float>(repeating: tint.light.y)
        let lightB = SIMD4<Float>(repeating: tint.light.z)
        let i = SIMD4<Float>(repeating: intensity)
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 192) { buffer in
            let toneR = buffer.baseAddress!, toneG = toneR + 64, toneB = toneR + 128
            // The tones of pixels c0…c3 into entries k…k + 3 of the three buffers.
            @inline(__always)
            func tones(_ c0: SIMD4<Float>, _ c1: SIMD4<Float>, _ c2: SIMD4<Float>, _ c3: SIMD4<Float>, _ k: Int) {
                let r = SIMD4(c0.x, c1.x, c2.x, c3.x), g = SIMD4(c0.y, c1.y, c2.y, c3.y)
                let b = SIMD4(c0.z, c1.z, c2.z, c3.z)
                let y = wR * r + wG * g + wB * b
                let inShadow = y .< half, fromWhite = one - y
                // SPEC §5's branch per channel: `Y < 0.5 ? Y·dark : 1 − (1 − Y)·light`.
                @inline(__always) func tone(_ dark: SIMD4<Float>, _ light: SIMD4<Float>) -> SIMD4<Float> {
                    (one - fromWhite * light).replacing(with: y * dark, where: inShadow)
                }
                UnsafeMutableRawPointer(toneR + k).storeBytes(of: tone(darkR, lightR), as: SIMD4<Float>.self)
                UnsafeMutableRawPointer(toneG + k).storeBytes(of: tone(darkG, lightG), as: SIMD4<Float>.self)
                UnsafeMutableRawPointer(toneB + k).storeBytes(of: tone(darkB, lightB), as: SIMD4<Float>.self)
            }
            forEachChunkInTwoPasses(p, count: count, group: tones, pixel: { q, j in
                let m = SIMD4<Float>(toneR[j], toneG[j], toneB[j], 0)
                replaceColour(ofPixelAt: UnsafeMutableRawPointer(q)) { v in v + i * (m - v) }
            })
        }
    }
    #endif
}

/// The luma of two pixels in one `SIMD8<Float>` (one per half), broadcast over each
/// pixel's lanes, from the products `t = (wR·R, wG·G, wB·B, ·)` of each half:
/// `(t₀ + t₁) + t₂`, the reference's order.
///
/// Where the build targets AVX2 and has the toolchain's Clang module of Intel
/// intrinsics, each broadcast is one `vpermilps` whose pattern comes from a register,
/// given to the schedule as a value as `AlphaMasks` are. Written as lane shuffles
/// with constant patterns, the optimiser narrowed the two pixels to one 128-bit
/// register (blends and unpacks), multiplied and summed there and widened the sums
/// again with `vshufps` and cross-lane `vpermpd`: 26 instructions per two pixels
/// against 18, loads and stores included, and the kernel ran 0.6–0.65× as fast in the
/// L2 and L3 caches.
struct LumaBroadcasts: Sendable {
    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
    /// Lane 0, 1 and 2 of each half, as `vpermilps` patterns.
    let red, green, blue: __m256i

    init() {
        red = unsafeBitCast(SIMD8<Int32>(repeating: 0), to: __m256i.self)
        green = unsafeBitCast(SIMD8<Int32>(repeating: 1), to: __m256i.self)
        blue = unsafeBitCast(SIMD8<Int32>(repeating: 2), to: __m256i.self)
    }
    #endif

    @inline(__always)
    func luma(_ t: SIMD8<Float>) -> SIMD8<Float> {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        _mm256_permutevar_ps(t, red) + _mm256_permutevar_ps(t, green) + _mm256_permutevar_ps(t, blue)
        #else
        SIMD8(t[0], t[0], t[0], t[0], t[4], t[4], t[4], t[4])
            + SIMD8(t[1], t[1], t[1], t[1], t[5], t[5], t[5], t[5])
            + SIMD8(t[2], t[2], t[2], t[2], t[6], t[6], t[6], t[6])
        #endif
    }
}

extension Monochrome: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable { case color, intensity }

    /// Decodes `{"color": [r, g, b], "intensity": i}`; missing fields take the defaults.
    ///
    /// - Throws: `DecodingError` for a colour that is not three finite numbers or a
    ///   non-finite intensity.
    public init(from decoder: Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var color = Monochrome.defaultColor
        if let list = try c.decodeIfPresent([Double].self, forKey: .color) {
            guard list.count == 3, list.allSatisfy(\.isFinite) else {
                throw DecodingError.dataCorruptedError(forKey: .color, in: c,
                    debugDescription: "color must be three finite numbers [R, G, B], found \(list)")
            }
            color = SIMD3(list[0], list[1], list[2])
        }
        let intensity = try c.decodeIfPresent(Double.self, forKey: .intensity) ?? 1
        guard intensity.isFinite else {
            throw DecodingError.dataCorruptedError(forKey: .intensity, in: c,
                debugDescription: "intensity must be a finite number, found \(intensity)")
        }
        self.init(color: color, intensity: intensity)
    }

    /// Encodes both fields, the colour as a three-number array.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode([color.x, color.y, color.z], forKey: .color)
        try c.encode(intensity, forKey: .intensity)
    }
}
