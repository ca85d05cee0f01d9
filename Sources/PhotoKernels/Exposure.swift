import Foundation

// Exposure (SPEC §3): decode sRGB to linear light (SPEC §7), multiply by 2^ev, encode
// back. The scalar reference calls Foundation's `pow` twice per channel; the SIMD4
// schedule cancels the two powers where it can and otherwise evaluates them with a
// vectorised `log2`/`exp2` pair (`VectorMath`), so no lane ever calls libm.

/// The sRGB transfer function of IEC 61966-2-1 (SPEC §7), extended to all reals by
/// mirroring the sign.
///
/// ```
/// decode: L = V / 12.92                     if V ≤ 0.04045
///         L = ((V + 0.055) / 1.055)^2.4     otherwise
/// encode: V = 12.92 · L                     if L ≤ 0.0031308
///         V = 1.055 · L^(1/2.4) − 0.055     otherwise
/// outside [0, 1]: f(x) = sign(x) · f(|x|)   (own extension, as in extended-range sRGB)
/// ```
///
/// Both functions are monotonic and odd; 0 ↦ 0, 1 ↦ 1 (up to one `Float` rounding),
/// −0 ↦ −0 (which compares equal to 0), ±∞ ↦ ±∞ and NaN ↦ NaN. They are computed in
/// `Float` with Foundation's `pow` and are the reference the `Exposure` kernel's SIMD4
/// schedule is tested against.
///
/// Source: IEC 61966-2-1:1999 [doc], with `≤` at both switch points as the standard
/// writes them. The sign mirroring is tagged [own] in SPEC §7; it is also what the
/// sample conversion code of W3C CSS Color 4 does for extended-range sRGB.
public enum SRGBTransfer {
    /// The encoded value at which decoding switches from the linear to the power segment.
    static let decodeThreshold: Float = 0.04045
    /// The linear value at which encoding switches from the linear to the power segment.
    static let encodeThreshold: Float = 0.0031308

    /// sRGB-encoded value `v` → linear light (SPEC §7).
    ///
    /// - Parameter v: an encoded value, nominally in [0, 1]; any `Float` is accepted.
    /// - Returns: the linear-light value, sign-mirrored for negative `v`.
    /// - Complexity: O(1); one `pow` on the power segment.
    @inline(__always)
    public static func decode(_ v: Float) -> Float {
        if v < 0 { return -decode(-v) }
        return v <= decodeThreshold ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    /// Linear-light value `l` → sRGB-encoded value (SPEC §7).
    ///
    /// - Parameter l: a linear-light value, nominally in [0, 1]; any `Float` is accepted.
    /// - Returns: the encoded value, sign-mirrored for negative `l`.
    /// - Complexity: O(1); one `pow` on the power segment.
    @inline(__always)
    public static func encode(_ l: Float) -> Float {
        if l < 0 { return -encode(-l) }
        return l <= encodeThreshold ? 12.92 * l : 1.055 * pow(l, 1 / 2.4) - 0.055
    }
}

/// Exposure adjustment in stops, applied in linear light (CIExposureAdjust-like,
/// SPEC §3).
///
/// On each of R, G, B (alpha unchanged, never clamped):
/// ```
/// C' = encode(decode(C) · 2^ev)        decode/encode: SRGBTransfer (SPEC §7)
/// ```
/// - `ev`: exposure value in photographic stops; identity 0 (the kernel then returns
///   without touching a pixel, so 0 is the identity to the bit); +1 doubles the
///   linear light, −1 halves it. Not clamped; `2^ev` is computed in `Float`, so
///   |ev| beyond ~126 overflows to ∞ or 0.
/// - Negative and above-1 channels follow the sign-mirrored curve; ±0 ↦ ±0 (equal to
///   0); NaN stays NaN in its own channel and touches no other pixel.
/// - Source: Core Image documents `CIExposureAdjust` as `s.rgb · pow(2.0, ev)`
///   [doc]; doing that multiplication in linear light (decode → scale → encode) is
///   this library's choice [own].
///
/// Schedules:
/// - `.scalar` is the reference: `SRGBTransfer.encode(SRGBTransfer.decode(c) · 2^ev)`
///   per channel with Foundation's `pow`.
/// - `.simd4` works on one pixel's four lanes (two pixels per `SIMD8`, each half
///   deciding for its own pixel). Where decode and encode both use
///   their power segments the two powers cancel exactly,
///   `encode(decode(C)·2^ev) = (C + 0.055)·2^(ev/2.4) − 0.055`, and where both use
///   their linear segments the result is `C·2^ev`; a pixel with a colour lane in the
///   narrow dark band between (one segment linear, the other a power) runs the
///   formula as written, each power being `exp2(p·log2 x)` with the polynomial
///   `VectorMath.log2`/`VectorMath.exp2` (no libm call per lane). Either way it stays
///   within 1e-5 of `.scalar` on inputs in [−1, 2] for ev in −4…4 (SPEC §8; measured
///   ≤ 2.4e-6). From +128 EV, where `2^ev` is ∞ in `Float`, it runs the reference.
///
/// For integer input, `makeLookupTable(maxval:)` tabulates the scalar result for
/// every sample value; an edit plan's tone tables hold the formula in `Double` instead
/// (`evaluate(_:channel:)`), rounded once, which a tone curve after it cannot scale
/// past SPEC §8's window.
///
/// Complexity: O(n) per row of n pixels — about 15 vector operations per pixel on
/// the shortcut, about 200 in the dark band; no allocation.
public struct Exposure: ToneStage, Hashable {
    /// The exposure change in stops (EV); identity 0.
    public let ev: Double
    /// `"exposure"`.
    public var name: String { "exposure" }
    /// The constants of both schedules, resolved once.
    let resolved: Resolved

    /// An exposure kernel; `ev` 0 leaves every pixel unchanged.
    public init(ev: Double) {
        self.ev = ev
        resolved = Exposure.resolve(ev)
    }

    /// An exposure kernel for a `Float` number of stops.
    @_disfavoredOverload
    public init(ev: Float) { self.init(ev: Double(ev)) }

    public static func == (a: Exposure, b: Exposure) -> Bool { a.ev == b.ev }
    public func hash(into hasher: inout Hasher) { hasher.combine(ev) }

    /// Whether the kernel changes nothing (`ev == 0`).
    public var isIdentity: Bool { ev == 0 }

    /// The scalar reference on one sample, the same on every channel:
    /// `encode(decode(x) · 2^ev)`, and `x` itself when `ev == 0`.
    public func map(_ x: Float, channel: Int) -> Float {
        ev == 0 ? x : Exposure.reference(x, scale: resolved.scale)
    }

    /// `true`: the same curve on R, G and B.
    public var isChannelUniform: Bool { true }

    /// Where decoding and encoding both take their power segments the exposure is the
    /// line `2^(ev/2.4)·(x + 0.055) − 0.055` (see `pixelSIMD4`): above 0.04045, where
    /// decoding leaves its linear segment, and above the encoded value whose scaled
    /// linear light is 0.0031308, where encoding does. The identity (`ev == 0`) is the
    /// identity line everywhere.
    public var affineSegment: AffineToneSegment? {
        guard ev != 0 else { return .identity }
        let gain = resolved.lineGain
        return AffineToneSegment(lowerBound: resolved.lineBound, gain: gain, offset: 0.055 * (gain - 1))
    }

    /// The constants of both schedules, resolved once in `Double`
    /// and rounded to `Float` once.
    struct Resolved {
        /// `2^ev`, the linear-light gain (both schedules multiply by this `Float`).
        var scale: Float
        /// `2^ev` in `Double`, for the `Double` form (`evaluate(_:channel:)`).
        var exactScale: Double
        /// `2^(ev/2.4)` and the least input of the power segments' line, in `Double`
        /// (`affineSegment`), for the `Double` form.
        var lineGain: Double, lineBound: Double
        /// `2^(ev/2.4)`: the gain of the fused power segments (SIMD4 fast path).
        var encodedGain: Float
        /// The encoded input at which the scaled linear value crosses 0.0031308,
        /// i.e. `encode(0.0031308 / 2^ev)`: at or below it the output is on the
        /// linear encode segment.
        var encodeSwitch: Float
    }

    /// Resolves `ev` into the constants of `Resolved`; O(1).
    static func resolve(_ ev: Double) -> Resolved {
        let scale = Foundation.exp2(ev), lineGain = Foundation.exp2(ev / 2.4), switchPoint = encodeSwitch(ev)
        return Resolved(scale: Float(scale), exactScale: scale, lineGain: lineGain,
                        lineBound: max(0.04045, switchPoint), encodedGain: Float(lineGain),
                        encodeSwitch: Float(switchPoint))
    }

    /// `encode(0.0031308 / 2^ev)` in `Double`: the encoded input whose scaled linear
    /// light reaches encoding's switch point.
    static func encodeSwitch(_ ev: Double) -> Double {
        let threshold = Double(SRGBTransfer.encodeThreshold)
        let target = threshold / Foundation.exp2(ev)
        return target <= threshold ? 12.92 * target : 1.055 * Foundation.pow(target, 1 / 2.4) - 0.055
    }

    /// Applies the exposure in place to one row of straight-alpha RGBA pixels
    /// (R, G, B changed, A kept); returns at once when `ev == 0`. The row's position
    /// is not used.
    ///
    /// - Complexity: O(row.count); no allocation.
    public func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {
        guard ev != 0, let base = row.baseAddress else { return }
        let constants = resolved
        switch variant {
        case .scalar:
            let scale = constants.scale
            for i in 0..<row.count {
                base[i].x = Exposure.reference(base[i].x, scale: scale)
                base[i].y = Exposure.reference(base[i].y, scale: scale)
                base[i].z = Exposure.reference(base[i].z, scale: scale)
            }
        case .simd4 where !constants.scale.isFinite:
            // From +128 EV `2^ev` is ∞ in `Float`: the reference gives +∞ (NaN for 0),
            // where the fused power segments, finite to about +307 EV, would not.
            apply(row, at: location, variant: .scalar)
        case .simd4:
            let scale = SIMD4<Float>(repeating: constants.scale)
            let gain = SIMD4<Float>(repeating: constants.encodedGain)
            let encodeSwitch = SIMD4<Float>(repeating: constants.encodeSwitch)
            Exposure.applySIMD4(base, count: row.count, scale: scale, encodedGain: gain, encodeSwitch: encodeSwitch,
                                AlphaMasks())
        }
    }

    /// The scalar reference for one channel: `encode(decode(c) · scale)`.
    @inline(__always)
    static func reference(_ c: Float, scale: Float) -> Float {
        SRGBTransfer.encode(SRGBTransfer.decode(c) * scale)
    }

    /// The SIMD4 schedule over `count` pixels: two pixels per `SIMD8<Float>`, an odd
    /// last pixel through `pixelSIMD4`; alpha restored by the masks it is given (see
    /// `AlphaMasks`).
    ///
    /// Each half makes the decision `pixelSIMD4` makes for its pixel: both halves
    /// compute the shortcut, and a half with a colour lane that crosses a segment
    /// boundary is replaced by `fullSIMD4` of that pixel alone. Lane for lane the
    /// arithmetic is `pixelSIMD4`'s, so the result is the same to the bit. A first
    /// pixel off a 32-byte boundary goes alone (`pixelsBeforePairBoundary`).
    @inline(never)
    static func applySIMD4(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, scale: SIMD4<Float>,
                           encodedGain: SIMD4<Float>, encodeSwitch: SIMD4<Float>, _ alpha: AlphaMasks) {
        if pixelsBeforePairBoundary(p, count: count) != 0, count > 1 {
            applySIMD4(p, count: 1, scale: scale, encodedGain: encodedGain, encodeSwitch: encodeSwitch, alpha)
            return applySIMD4(p + 1, count: count &- 1, scale: scale, encodedGain: encodedGain,
                              encodeSwitch: encodeSwitch, alpha)
        }
        let raw = UnsafeMutableRawPointer(p)
        let scale2 = SIMD8(lowHalf: scale, highHalf: scale)
        let gain2 = SIMD8(lowHalf: encodedGain, highHalf: encodedGain)
        let switch2 = SIMD8(lowHalf: encodeSwitch, highHalf: encodeSwitch)
        let keep = alpha.pair, colour = .!alpha.pair
        var offset = 0
        for _ in 0..<(count &>> 1) {
            let v = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            let negative = v .< 0
            let a = v.replacing(with: -v, where: negative)
            let decodeLinear = a .<= SRGBTransfer.decodeThreshold
            let encodeLinear = a .<= switch2
            let crossing = (decodeLinear .^ encodeLinear) .& colour
            let powerPower = (a + 0.055) * gain2 - 0.055
            var e = powerPower.replacing(with: a * scale2, where: decodeLinear)
            // Rare (a dark band a few hundredths wide): test each half only then.
            let words = unsafeBitCast(crossing, to: SIMD4<UInt64>.self)
            if words[0] | words[1] | words[2] | words[3] != 0 {
                if words[0] | words[1] != 0 { e.lowHalf = fullSIMD4(a.lowHalf, scale: scale) }
                if words[2] | words[3] != 0 { e.highHalf = fullSIMD4(a.highHalf, scale: scale) }
            }
            let signed = e.replacing(with: -e, where: negative)
            raw.storeBytes(of: signed.replacing(with: v, where: keep), toByteOffset: offset, as: SIMD8<Float>.self)
            offset &+= 32
        }
        if count & 1 != 0 {
            let last = p + (count &- 1)
            last.pointee = pixelSIMD4(last.pointee, scale: scale, encodedGain: encodedGain, encodeSwitch: encodeSwitch, alpha)
        }
    }

    /// One pixel through the SIMD4 schedule; alpha comes back bit for bit.
    ///
    /// Both curves are odd, so the schedule works on `a = |v|` and restores the sign
    /// at the end. Each lane of `a` falls into one of four cases, by which segment of
    /// `decode` it uses (`a ≤ 0.04045`) and which segment of `encode` its scaled
    /// linear value uses (`a ≤ encodeSwitch`, equivalent to `L·2^ev ≤ 0.0031308`
    /// because both curves are increasing):
    ///
    /// 1. power, power (most of a photo): the two powers cancel,
    ///    `1.055·(((a + 0.055)/1.055)^2.4 · 2^ev)^(1/2.4) − 0.055
    ///     = (a + 0.055)·2^(ev/2.4) − 0.055` — one multiply-add, exact in real
    ///    arithmetic and closer to the true value than two rounded powers.
    /// 2. linear, linear (the darkest values): `12.92·(a/12.92)·2^ev = a·2^ev`.
    /// 3. power, linear or 4. linear, power (a band of dark values that crosses a
    ///    segment boundary): no shortcut. If any colour lane of the pixel is here,
    ///    the whole pixel takes `fullSIMD4`, which evaluates the formula as written
    ///    with the vectorised `VectorMath.pow`.
    ///
    /// A NaN lane compares false everywhere, takes case 1 and stays NaN (so does
    /// `fullSIMD4`, whose `log2` maps NaN to NaN); ±∞ stays ±∞.
    @inline(__always)
    static func pixelSIMD4(_ v: SIMD4<Float>, scale: SIMD4<Float>, encodedGain: SIMD4<Float>,
                           encodeSwitch: SIMD4<Float>, _ alpha: AlphaMasks) -> SIMD4<Float> {
        let negative = v .< 0
        let a = v.replacing(with: -v, where: negative)
        let decodeLinear = a .<= SRGBTransfer.decodeThreshold
        let encodeLinear = a .<= encodeSwitch
        let crossing = (decodeLinear .^ encodeLinear) .& alpha.colour
        let e: SIMD4<Float>
        if anyLane(crossing) {
            e = fullSIMD4(a, scale: scale)
        } else {
            let powerPower = (a + 0.055) * encodedGain - 0.055
            e = powerPower.replacing(with: a * scale, where: decodeLinear)
        }
        let signed = e.replacing(with: -e, where: negative)
        return signed.replacing(with: v, where: alpha.pixel)
    }

    /// The formula as written, on the four lanes of `a ≥ 0` (SPEC §3, §7):
    /// decode both segments and select by `a ≤ 0.04045`, multiply by `scale`,
    /// encode both segments and select by `L ≤ 0.0031308`. Each power is
    /// `VectorMath.pow`, i.e. `exp2(p·log2 x)`.
    @inline(__always)
    static func fullSIMD4(_ a: SIMD4<Float>, scale: SIMD4<Float>) -> SIMD4<Float> {
        let linearSegment = a * (1 / 12.92 as Float)
        let powerSegment = VectorMath.pow((a + 0.055) * (1 / 1.055 as Float), 2.4)
        let l = powerSegment.replacing(with: linearSegment, where: a .<= SRGBTransfer.decodeThreshold) * scale
        let encodedLinear = l * 12.92
        let encodedPower = VectorMath.pow(l, 1 / 2.4) * 1.055 - 0.055
        return encodedPower.replacing(with: encodedLinear, where: l .<= SRGBTransfer.encodeThreshold)
    }

    /// The scalar result for every sample of an integer raster: entry `v` is
    /// `encode(decode(Float(v) / Float(maxval)) · 2^ev)` for `v = 0 … maxval`.
    ///
    /// An integer pipeline can look a sample up instead of running the kernel: the
    /// table is the scalar reference itself, to the bit. (An edit plan's tables hold
    /// the `Double` form, `evaluate(_:channel:)`, rounded once.)
    ///
    /// - Parameter maxval: the raster's maximum sample value, 1…65535.
    /// - Returns: `maxval + 1` values (unclamped: encode to integers afterwards).
    /// - Throws: `RasterError.invalidMaxval` for a maxval outside 1…65535.
    /// - Complexity: O(maxval), two `pow` calls per entry; allocates the table.
    public func makeLookupTable(maxval: Int) throws(RasterError) -> [Float] {
        try RasterError.check(maxval: maxval, for: UInt16.self)
        let m = Float(maxval), scale = resolved.scale, ev = self.ev
        return (0...maxval).map { v in
            let x = SampleCoding.decode(UInt16(v), maxval: m)
            return ev == 0 ? x : Exposure.reference(x, scale: scale)
        }
    }
}

/// Whether any lane of `mask` is set: the mask's 128 bits read as two words.
@inline(__always)
func anyLane(_ mask: SIMDMask<SIMD4<Int32>>) -> Bool {
    let words = unsafeBitCast(mask, to: SIMD2<UInt64>.self)
    return words.x | words.y != 0
}

/// Vectorised `log2`, `exp2` and `pow` on `SIMD4<Float>`, built from `+`, `−`, `*`,
/// `/`, comparisons, `replacing(with:where:)` masks and bit casts only: no libm call
/// per lane, and none of `addingProduct`, `clamped`, `pointwiseMin/Max` or swizzles,
/// which this toolchain's generic `SIMD` code runs 10–25× slower than plain
/// arithmetic.
///
/// Accuracy, measured against Foundation in `Double` (`ExposureTests` checks looser
/// bounds on every binade): `log2` within 1.9 ulp of the result where
/// |log2 x| > 10⁻³ and within 8.5e-8·max(1, |log2 x|) absolute everywhere, for normal
/// `x`; `exp2` within 1.1 ulp for `y` in [−126, 127.4]. `pow(x, p) = exp2(p·log2 x)`
/// then has a relative error of about `ln 2·|p·log2 x|·2⁻²³` plus 2 ulp — below
/// 1e-6 over the exposure kernel's range.
enum VectorMath {
    typealias V = SIMD4<Float>
    typealias Bits = SIMD4<UInt32>

    // log2 on m ∈ [√½, √2): with s = (m − 1)/(m + 1),
    //   ln m = 2·atanh s = 2·(s + s³/3 + s⁵/5 + s⁷/7 + s⁹/9 + …)
    // so log2 m = s · Σ c_k z^k with z = s² and c_k = 2 / ((2k + 1) · ln 2).
    // |s| ≤ (√2 − 1)/(√2 + 1) = 0.1716, so the first omitted term, 2s¹¹/(11 ln 2), is
    // below 1.1e-9: the truncation is far below Float's rounding (Taylor series of
    // atanh; the classic form used by Cephes' `logf` and fdlibm's `log`).
    static let log2C0 = Float(2 / (1 * M_LN2))
    static let log2C1 = Float(2 / (3 * M_LN2))
    static let log2C2 = Float(2 / (5 * M_LN2))
    static let log2C3 = Float(2 / (7 * M_LN2))
    static let log2C4 = Float(2 / (9 * M_LN2))

    // exp2 on f ∈ [−½, ½]: 2^f = e^(f ln 2) = Σ (f ln 2)^k / k!, Taylor to degree 7.
    // |f ln 2| ≤ 0.3466, so the first omitted term is below 0.3466⁸/8! = 5.3e-9,
    // under a tenth of an ulp.
    static let exp2C1 = Float(M_LN2)
    static let exp2C2 = Float(M_LN2 * M_LN2 / 2)
    static let exp2C3 = Float(M_LN2 * M_LN2 * M_LN2 / 6)
    static let exp2C4 = Float(M_LN2 * M_LN2 * M_LN2 * M_LN2 / 24)
    static let exp2C5 = Float(M_LN2 * M_LN2 * M_LN2 * M_LN2 * M_LN2 / 120)
    static let exp2C6 = Float(M_LN2 * M_LN2 * M_LN2 * M_LN2 * M_LN2 * M_LN2 / 720)
    static let exp2C7 = Float(M_LN2 * M_LN2 * M_LN2 * M_LN2 * M_LN2 * M_LN2 * M_LN2 / 5040)

    /// `log2 x` per lane.
    ///
    /// 1. Split `x = 2^e · m` by reading the exponent and mantissa bits
    ///    (`m ∈ [1, 2)`), then fold `m` into `[√½, √2)` (halve it, bump `e`).
    /// 2. `log2 m` by the atanh series above; `log2 x = e + log2 m`.
    /// 3. Special lanes: `x = 0` → −∞, `x = +∞` → +∞, `x < 0` or NaN → NaN.
    ///    Subnormal `x` (below 2^−126) is treated as `x = 2^−127·m`, so its result is
    ///    only approximate; callers here never select such lanes.
    @inline(__always)
    static func log2(_ x: V) -> V {
        let bits = unsafeBitCast(x, to: Bits.self)
        // Mantissa with a zero exponent field (2^0): m ∈ [1, 2).
        var m = unsafeBitCast((bits & 0x007F_FFFF) | 0x3F80_0000, to: V.self)
        // The biased exponent as a Float, via the magic-number trick: the bits of
        // 2^23 + k read as a Float are exactly 8388608 + k for 0 ≤ k < 2^23.
        let biased = unsafeBitCast((bits &>> 23) | 0x4B00_0000, to: V.self) - 8_388_608
        var e = biased - 127
        let fold = m .> 1.414_213_5
        m = m.replacing(with: m * 0.5, where: fold)
        e = e.replacing(with: e + 1, where: fold)
        let s = (m - 1) / (m + 1)
        let z = s * s
        var poly: V = z * log2C4 + log2C3
        poly = poly * z + log2C2
        poly = poly * z + log2C1
        poly = poly * z + log2C0
        var result = e + s * poly
        result = result.replacing(with: -Float.infinity, where: x .== 0)
        result = result.replacing(with: Float.infinity, where: x .== Float.infinity)
        result = result.replacing(with: Float.nan, where: .!(x .>= 0))
        return result
    }

    /// `2^y` per lane.
    ///
    /// 1. `n = round(y)` by the magic-number trick (`y + 1.5·2^23` rounds to an
    ///    integer whose low bits are `n`), `f = y − n ∈ [−½, ½]` exactly.
    /// 2. `2^f` by the degree-7 Taylor polynomial above.
    /// 3. `2^n` built directly as the bits `(n + 127) << 23`; the product is the result.
    /// 4. Special lanes: `y ≥ 127.5` (or +∞) → +∞, `y < −126` (or −∞) → 0 (subnormal
    ///    results are flushed), NaN → NaN.
    @inline(__always)
    static func exp2(_ y: V) -> V {
        let magic: Float = 12_582_912  // 1.5 · 2^23
        let shifted = y + magic
        let n = shifted - magic
        let f = y - n
        // Horner's rule, one step per line (keeps the type checker fast).
        var poly: V = f * exp2C7 + exp2C6
        poly = poly * f + exp2C5
        poly = poly * f + exp2C4
        poly = poly * f + exp2C3
        poly = poly * f + exp2C2
        poly = poly * f + exp2C1
        poly = poly * f + 1
        // The low bits of `shifted` hold n + 0x40_0000 (the 1.5 · 2^23 offset).
        let scaleBits = (unsafeBitCast(shifted, to: Bits.self) &- 0x4B40_0000 &+ 127) &<< 23
        var result = poly * unsafeBitCast(scaleBits, to: V.self)
        result = result.replacing(with: Float.infinity, where: y .>= 127.5)
        result = result.replacing(with: 0, where: y .< -126)
        return result
    }

    /// `x^p` per lane for `x ≥ 0`: `exp2(p · log2 x)`; `0^p = 0` for `p > 0`, NaN for
    /// negative or NaN `x`.
    @inline(__always)
    static func pow(_ x: V, _ p: Float) -> V {
        exp2(log2(x) * p)
    }
}

extension Exposure: NumberOperation {
    /// The `exposure` family: one number, the change in stops.
    public static let family = KernelFamily(
        key: "exposure",
        summary: "exposure in stops, in linear light (CIExposureAdjust)",
        kind: .tone,
        parameters: [FamilyParameter("exposure", identity: "0", range: "−2…2", unit: "stops (EV)",
                                     help: "multiplies linear light by 2^EV")],
        options: [FamilyOption("exposure", valueName: "ev", help: "Exposure in stops, applied in linear light (identity 0).") {
            $0.exposure = $1
        }],
        examples: [("exposure", Exposure(ev: 0.7))],
        identity: Exposure(ev: 0), type: Exposure.self)

    /// `[.tone(self)]`.
    public var stages: [Stage] { [stage] }

    /// The exposure for `value` stops.
    public init(_ value: Double) { self.init(ev: value) }
    /// The number of stops.
    public var value: Double { ev }

    /// SPEC §3 and §7 in `Double`, sign mirrored; alpha kept.
    public func evaluate(_ color: SIMD4<Double>, x: Int, y: Int, width: Int, height: Int) -> SIMD4<Double> {
        let scale = resolved.exactScale
        return SIMD4(Self.exact(color.x, scale: scale), Self.exact(color.y, scale: scale),
                     Self.exact(color.z, scale: scale), color.w)
    }

    /// SPEC §3 and §7 in `Double` on one sample, the same on every channel, and `x`
    /// itself when `ev == 0` (as `map`): what integer samples' tone tables hold. Where
    /// decoding and encoding both take their power segments it is their line
    /// (`affineSegment`, equal to the formula in real arithmetic), a multiply and two
    /// adds instead of two `pow`s: the plan evaluates it per sample for translucent
    /// premultiplied 16-bit pixels.
    public func evaluate(_ x: Double, channel: Int) -> Double {
        guard ev != 0 else { return x }
        // A margin far above rounding keeps the line clear of the segments' switch points.
        if x > resolved.lineBound + 1e-6 && x.isFinite { return resolved.lineGain * (x + 0.055) - 0.055 }
        return Self.exact(x, scale: resolved.exactScale)
    }

    /// `encode(decode(v) · scale)` in `Double`, sign mirrored (SPEC §3, §7).
    static func exact(_ v: Double, scale: Double) -> Double {
        func decode(_ v: Double) -> Double {
            let a = abs(v)
            let l = a <= 0.04045 ? a / 12.92 : Foundation.pow((a + 0.055) / 1.055, 2.4)
            return v < 0 ? -l : l
        }
        func encode(_ l: Double) -> Double {
            let a = abs(l)
            let v = a <= 0.0031308 ? 12.92 * a : 1.055 * Foundation.pow(a, 1 / 2.4) - 0.055
            return l < 0 ? -v : v
        }
        return encode(decode(v) * scale)
    }
}
