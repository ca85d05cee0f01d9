/// How integer samples are arranged inside one pixel of an integer raster.
///
/// The raster itself is interleaved: rows top to bottom, pixels left to right,
/// `channelCount` samples per pixel, no padding, exactly as Netpbm and PAM store it.
public enum SampleLayout: Int, Sendable, CaseIterable, Codable {
    /// One grey sample `Y`; decodes to `R = G = B = Y`, `A = 1`.
    case gray = 1
    /// Grey then straight alpha: `Y A`.
    case grayAlpha = 2
    /// `R G B`; decodes with `A = 1`.
    case rgb = 3
    /// `R G B A`, straight alpha.
    case rgba = 4

    /// Samples per pixel: 1, 2, 3 or 4.
    public var channelCount: Int { rawValue }

    /// Whether the last sample of each pixel is opacity.
    public var hasAlpha: Bool { self == .grayAlpha || self == .rgba }

    /// Whether colour is one grey sample.
    public var isGray: Bool { self == .gray || self == .grayAlpha }

    /// The layout with `channelCount` samples per pixel, or `nil` outside 1…4.
    public init?(channelCount: Int) { self.init(rawValue: channelCount) }

    /// The layout with the given colour model and alpha.
    public init(gray: Bool, alpha: Bool) {
        switch (gray, alpha) {
        case (true, false): self = .gray
        case (true, true): self = .grayAlpha
        case (false, false): self = .rgb
        case (false, true): self = .rgba
        }
    }
}

/// The mapping between integer samples and the `Float` working range (SPEC §0).
///
/// - Decoding sample `v` of a raster with maximum value `maxval`:
///   `x = Float(v) / Float(maxval)` — a correctly rounded division, so 0 ↦ 0 and
///   `maxval` ↦ 1 exactly.
/// - Encoding: `v = round(clamp(x, 0, 1) · maxval)`, rounding half to even; NaN and
///   −∞ encode as 0, +∞ as `maxval`. Encoding never traps.
///
/// Decoding then encoding with the same `maxval` returns every integer unchanged
/// (the product `Float(v)/m · m` lies within a few ulps of `v`, far from a .5 tie);
/// the tests check all 256 and all 65536 values.
public enum SampleCoding {
    /// The largest `maxval` a raster may have (16-bit samples).
    public static let maxvalRange: ClosedRange<Int> = 1...65535

    /// Decodes one sample: `Float(v) / Float(maxval)`.
    ///
    /// - Parameters:
    ///   - sample: the integer sample, nominally `0…maxval` (larger values decode
    ///     above 1; they are not rejected here).
    ///   - maxval: the raster's maximum value, 1…65535.
    @inline(__always)
    public static func decode<Sample: FixedWidthInteger & UnsignedInteger>(_ sample: Sample, maxval: Float) -> Float {
        Float(sample) / maxval
    }

    /// `1/maxval` as `high + low`, where `high` keeps 12 significant bits so that
    /// `Float(v)·high` is exact for every 8-bit `v`, when `Float(v)·high + Float(v)·low`
    /// equals `decode(v, maxval:)` for every `v` in 0…255 (checked for all 256 samples);
    /// else `nil`. Two multiplies and an add then decode a byte as the division does,
    /// at a fraction of its cost. O(1): the 255 checks run once, on first use.
    static func reciprocalSplit(maxval: Int) -> (high: Float, low: Float)? {
        (1...255).contains(maxval) ? reciprocalSplits[maxval] : nil
    }

    /// `decode(v, maxval: 255)` without a multiply or a division: the bit pattern of
    /// `Float(v · 0x010101)` plus `1 − 24·2²³`, where that sum is positive, else +0.
    ///
    /// 1/255 = 2⁻⁸ + 2⁻¹⁶ + 2⁻²⁴ + …, so the binary digits of v/255 are the byte `v`
    /// repeated, and `w = v · 0x010101` (the byte three times, below 2²⁴, so `Float(w)`
    /// is exact) holds the first 24 of them: v/255 = w·2⁻²⁴ + (v/255)·2⁻²⁴.
    /// For v in 1…254 take 2ᵉ < v/255 < 2ᵉ⁺¹ (e ≥ −8; v/255 is no power of two). Then
    /// w = 2²⁴·v/255 − v/255 > 2ᵉ⁺²⁴ − 1, and both sides are integers, so
    /// w ≥ 2ᵉ⁺²⁴: w·2⁻²⁴ lies in the same binade, a normal `Float` with ulp
    /// u = 2ᵉ⁻²³, and the remainder (v/255)·2⁻²⁴ lies strictly between u/2 and u. No
    /// tie, and the correctly rounded quotient is w·2⁻²⁴ + u: `Float(w)`'s pattern with
    /// 24 taken off the exponent and 1 added to the significand. For v = 255,
    /// w·2⁻²⁴ = 1 − 2⁻²⁴, whose ulp is 2⁻²⁴, equal to the remainder: the sum is exactly
    /// 1 (the added 1 carries into the exponent). For v = 0 the sum's sign bit is set,
    /// and the maximum with 0 gives +0. The vector form (`byteQuotients`) is five
    /// instructions per eight samples where the build targets AVX2, no
    /// floating-point multiply among them. O(1).
    @inline(__always)
    static func byteQuotient(_ v: UInt8) -> Float {
        let bits = Int32(bitPattern: Float(UInt32(v) &* 0x010101).bitPattern) &+ byteQuotientOffset
        return Float(bitPattern: UInt32(bitPattern: max(bits, 0)))
    }

    /// What `byteQuotient` adds to the bit pattern of `Float(v · 0x010101)`: one ulp
    /// up, and 24 off the exponent (×2⁻²⁴).
    static let byteQuotientOffset: Int32 = 1 &- 24 &<< 23

    /// The multiplier that decodes a byte at maxval 255 with one multiply:
    /// `Float(3·v) · tripledReciprocal` equals `decode(v, maxval: 255)` for every byte,
    /// where `Float(v) · Float(1/255)` is one ulp off for 126 of them.
    ///
    /// This `Float` is (1/765)(1 + δ) with 0 < δ < 2⁻²⁵, so the product rounds
    /// (v/255)(1 + δ) once. By `byteQuotient`'s argument v/255 lies strictly between a
    /// rounding midpoint and the `Float` above it, less than 2²⁴ of its ulps from 0, so
    /// the rise δ·v/255 is under half an ulp and the rounding is the same; at v = 255 the
    /// product is 1 + δ, which rounds to 1. The `Float` nearest 1/255 is about
    /// 0.99·2⁻²⁴ high, too much; 3 is the smallest multiplier M for which the `Float`
    /// nearest 1/(255·M) is close enough.
    static let tripledReciprocal = Float(1.0 / 765.0)

    /// `reciprocalSplit` of every maxval 0…255 (nil at 0), checked once, on first use.
    private static let reciprocalSplits: [(high: Float, low: Float)?] = (0...255).map { checkedSplit(maxval: $0) }

    private static func checkedSplit(maxval: Int) -> (high: Float, low: Float)? {
        guard (1...255).contains(maxval) else { return nil }
        let r = 1 / Double(maxval)
        let high = Float(bitPattern: Float(r).bitPattern & ~0xFFF)
        let low = Float(r - Double(high))
        let m = Float(maxval)
        for v in 0...255 {
            let x = Float(v)
            guard x * high + x * low == x / m else { return nil }
        }
        return (high, low)
    }

    /// Encodes one value: `round_half_even(clamp(x, 0, 1) · maxval)`; NaN ↦ 0.
    ///
    /// The comparisons are written so that NaN fails both and lands on 0.
    /// - Parameters:
    ///   - x: a working-range value (any `Float`, including NaN and ±∞).
    ///   - maxval: the target maximum value, 1…65535, as a `Float`.
    @inline(__always)
    public static func encode(_ x: Float, maxval: Float) -> UInt16 {
        var c: Float = x > 0 ? x : 0   // NaN and negatives → 0
        c = c < 1 ? c : 1              // +∞ → 1
        // c·maxval ≤ 65535, so adding 2²³ rounds it half to even (the default IEEE
        // mode) and leaves the integer in the low mantissa bits — no `rintf` call in
        // builds without SSE4.1's `roundss`.
        return UInt16(truncatingIfNeeded: (c * maxval + 8_388_608).bitPattern)
    }
}

/// SPEC §8's rule for integer outputs, tie-aware: a sample is right when it is the
/// correctly rounded value `round_half_even(clamp(x, 0, 1)·m)` of the exact result `x`,
/// or, where `x·m` lies within `τ·m` of a tie `k + ½` (τ = 2⁻²⁰), either `k` or `k + 1`.
///
/// The tests and the benchmark's exhaustive check hold every integer path against a
/// `Double` evaluation with it.
public enum IntegerTolerance {
    /// τ = 2⁻²⁰, eight `Float` ulps of 1.
    public static let tau = 0x1p-20

    /// The verdict on one sample.
    public enum Verdict: Sendable, Equatable {
        /// The correctly rounded value.
        case exact
        /// The other neighbour of a near-tie: allowed.
        case nearTie
        /// Wrong; `beyond` is how far the values that round to the sample lay from the
        /// window round the exact value, in units of a step: for an integer sample
        /// `|sample − x·m| − ½ − τ·m` LSB (a near tie's wrong neighbour just past the
        /// window gives a small fraction, a sample 2 LSB from the correctly rounded one
        /// from 1 − τ·m to 2 − τ·m), for a `Float16` (`HalfTolerance`) the same in steps
        /// of the correctly rounded half (`Float16(x).ulp`). Above 0, but for a window
        /// whose edge falls exactly on a rounding midpoint.
        case wrong(beyond: Double)
    }

    /// Judges `sample` against the exact value `x` (a working-range number; NaN counts
    /// as 0) at `maxval`. Computed in `Double`, which holds every sample and maxval of
    /// 1…65535 exactly, so no argument can overflow.
    public static func verdict(_ sample: Int, exact x: Double, maxval: Int) -> Verdict {
        let m = Double(maxval), s = Double(sample)
        let scaled = x.isNaN ? 0 : min(max(x, 0), 1) * m
        let expected = scaled.rounded(.toNearestOrEven)
        if s == expected { return .exact }
        let tie = scaled.rounded(.down) + 0.5
        let distance = abs(scaled - tie)
        if distance <= tau * m, s == tie - 0.5 || s == tie + 0.5 { return .nearTie }
        return .wrong(beyond: max(0, abs(s - scaled) - 0.5 - tau * m))
    }
}

#if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
/// SPEC §8's tie-aware rule carried to `Float16` samples, which keep the extended range
/// (SPEC §10: a float destination is not clamped): a sample is right if it is the half
/// nearest the exact value `x` (ties to even), or any half that a value within
/// `τ·max(1, |x|)` of `x` rounds to (τ = ``IntegerTolerance/tau``) — near a rounding
/// boundary either half beside it, and where halves lie closer together than that
/// window (below about 2⁻¹⁰) every half within it. The rule is this library's (SPEC
/// §8 names integer samples only; docs/spec.md, the note under §8), for valid pixels:
/// a premultiplied pixel whose colour exceeds its alpha is outside it. Not on Intel
/// Macs, which have no `Float16`.
public enum HalfTolerance {
    /// Judges `sample` against the exact value `x`; `.wrong(beyond:)` gives how far the
    /// values that round to the sample (up to the midpoints with its neighbours) lay
    /// from the window round `x`, in steps of the correctly rounded half
    /// (`Float16(x).ulp`; that of the largest finite half, 32, where `x` rounds to
    /// infinity), as `IntegerTolerance.verdict` does in LSB, or ∞ for a NaN where
    /// `x` is a number, a number where `x` is NaN, an infinity where `x` rounds to a
    /// finite half and no value of its window rounds to infinity, or a finite half
    /// where `x` is infinite.
    public static func verdict(_ sample: Float16, exact x: Double) -> IntegerTolerance.Verdict {
        let expected = Float16(x)
        if sample == expected || (sample.isNaN && x.isNaN) { return .exact }
        if sample.isNaN || x.isNaN || x.isInfinite { return .wrong(beyond: .infinity) }
        let window = IntegerTolerance.tau * max(1, x.magnitude)
        if Float16(x - window) <= sample && sample <= Float16(x + window) { return .nearTie }
        if sample.isInfinite { return .wrong(beyond: .infinity) }
        // The values that round to `sample`: to the midpoints with its neighbours, 65520
        // past the largest half.
        let s = Double(sample), largest = Double(Float16.greatestFiniteMagnitude)
        let lower = s == -largest ? -65520 : (s + Double(sample.nextDown)) / 2
        let upper = s == largest ? 65520 : (s + Double(sample.nextUp)) / 2
        let gap = x < lower ? lower - x : x - upper
        let step = expected.isFinite ? expected.ulp : Float16.greatestFiniteMagnitude.ulp
        return .wrong(beyond: max(0, (gap - window) / Double(step)))
    }
}
#endif

extension FloatImage {
    /// Decodes an interleaved integer raster into an image (SPEC §0).
    ///
    /// Each sample becomes `Float(v) / Float(maxval)`; grey layouts set `R = G = B`;
    /// layouts without alpha set `A = 1`.
    ///
    /// - Parameters:
    ///   - width, height: the raster size in pixels, each ≥ 1.
    ///   - layout: samples per pixel and their meaning.
    ///   - maxval: the value that means 1.0, 1…65535.
    ///   - samples: `width × height × layout.channelCount` samples, row-major.
    /// - Throws: `RasterError` when a side is below 1, the maxval is outside 1…65535,
    ///   or the sample count does not match the size, before anything is allocated.
    /// - Complexity: O(width × height).
    public init(width: Int, height: Int, layout: SampleLayout, maxval: Int,
                samples: UnsafeBufferPointer<UInt16>) throws(RasterError) {
        try RasterError.check(width: width, height: height, layout: layout, maxval: maxval, count: samples.count, of: UInt16.self)
        self.init(checkedWidth: width, height: height, layout: layout, maxval: maxval, samples: samples.baseAddress!)
    }

    /// Decodes an interleaved 16-bit raster; see `init(width:height:layout:maxval:samples:)`.
    ///
    /// - Throws: `RasterError`, as that initialiser does.
    public init(width: Int, height: Int, layout: SampleLayout, maxval: Int, samples: [UInt16]) throws(RasterError) {
        self = try samples.withUnsafeBufferPointer { (buffer) throws(RasterError) in
            try FloatImage(width: width, height: height, layout: layout, maxval: maxval, samples: buffer)
        }
    }

    /// Decodes an interleaved 8-bit raster; see `init(width:height:layout:maxval:samples:)`.
    ///
    /// - Throws: `RasterError` as that initialiser does, and for a maxval above 255.
    public init(width: Int, height: Int, layout: SampleLayout, maxval: Int = 255, samples: [UInt8]) throws(RasterError) {
        try RasterError.check(width: width, height: height, layout: layout, maxval: maxval, count: samples.count, of: UInt8.self)
        self = samples.withUnsafeBufferPointer {
            FloatImage(checkedWidth: width, height: height, layout: layout, maxval: maxval, samples: $0.baseAddress!)
        }
    }

    // The decoding itself, on sizes already checked.
    private init<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        checkedWidth width: Int, height: Int, layout: SampleLayout, maxval: Int, samples: UnsafePointer<Sample>) {
        let count = width * height
        let pixels = [SIMD4<Float>](unsafeUninitializedCapacity: count) { out, initialized in
            SampleConversion.decode(samples, layout: layout, maxval: maxval, into: out.baseAddress!, count: count)
            initialized = count
        }
        self.init(checkedWidth: width, height: height, pixels: pixels)
    }

    /// Encodes the image as an interleaved integer raster (SPEC §0).
    ///
    /// Every value is clamped to [0, 1] once, here, then scaled by `maxval` and
    /// rounded half to even; NaN encodes as 0. A grey layout stores the Rec. 709
    /// luma `Y = 0.2126 R + 0.7152 G + 0.0722 B` (SPEC §1), which is the grey itself
    /// when `R = G = B`; a layout without alpha drops `A`.
    ///
    /// - Parameters:
    ///   - layout: samples per pixel to produce.
    ///   - maxval: the value that 1.0 maps to, 1…65535.
    /// - Returns: `width × height × layout.channelCount` samples, row-major.
    /// - Throws: `RasterError.invalidMaxval` for a maxval outside 1…65535.
    /// - Complexity: O(width × height).
    public func samples(layout: SampleLayout, maxval: Int) throws(RasterError) -> [UInt16] {
        try RasterError.check(maxval: maxval, for: UInt16.self)
        let count = pixelCount * layout.channelCount
        return [UInt16](unsafeUninitializedCapacity: count) { out, initialized in
            withUnsafePixels { pixels in
                SampleConversion.encode(pixels.baseAddress!, count: pixelCount, layout: layout,
                                        maxval: maxval, into: out.baseAddress!)
            }
            initialized = count
        }
    }

    /// Overwrites every pixel with the decoded `samples` (SPEC §0), without
    /// allocating: the buffer-reusing form of `init(width:height:layout:maxval:samples:)`
    /// for live previews and benchmarks.
    ///
    /// - Parameters:
    ///   - samples: `width × height × layout.channelCount` samples, row-major.
    ///   - layout, maxval: how to read them (maxval 1…255 for `UInt8`).
    ///   - threads: thread count, `nil` for every core, below 1 one, at most one per row.
    /// - Throws: `RasterError` when the maxval is outside 1…255 (1…65535 for `UInt16`)
    ///   or the sample count is not this image's `width × height × layout.channelCount`;
    ///   the image is then unchanged.
    /// - Complexity: O(width × height); no allocation unless the storage is shared.
    public mutating func decode(from samples: UnsafeBufferPointer<UInt8>, layout: SampleLayout, maxval: Int = 255,
                                threads: Int? = nil) throws(RasterError) {
        try decodeRows(from: samples, layout: layout, maxval: maxval, threads: threads)
    }

    /// The 16-bit form of `decode(from:layout:maxval:threads:)`.
    ///
    /// - Throws: `RasterError`, as the 8-bit form does.
    public mutating func decode(from samples: UnsafeBufferPointer<UInt16>, layout: SampleLayout, maxval: Int,
                                threads: Int? = nil) throws(RasterError) {
        try decodeRows(from: samples, layout: layout, maxval: maxval, threads: threads)
    }

    /// Encodes every pixel into `samples` (SPEC §0: clamp once, round half to even,
    /// NaN → 0), without allocating: the buffer-reusing form of
    /// `samples(layout:maxval:)`.
    ///
    /// - Parameters:
    ///   - samples: room for `width × height × layout.channelCount` samples.
    ///   - layout, maxval: what to write (maxval 1…255 for `UInt8`).
    ///   - threads: thread count, `nil` for every core, below 1 one, at most one per row.
    /// - Throws: `RasterError` when the maxval is outside 1…255 (1…65535 for `UInt16`)
    ///   or the buffer's count is not `width × height × layout.channelCount`; nothing is
    ///   written then.
    /// - Complexity: O(width × height); no allocation.
    public func encode(into samples: UnsafeMutableBufferPointer<UInt8>, layout: SampleLayout, maxval: Int = 255,
                       threads: Int? = nil) throws(RasterError) {
        try encodeRows(into: samples, layout: layout, maxval: maxval, threads: threads)
    }

    /// The 16-bit form of `encode(into:layout:maxval:threads:)`.
    ///
    /// - Throws: `RasterError`, as the 8-bit form does.
    public func encode(into samples: UnsafeMutableBufferPointer<UInt16>, layout: SampleLayout, maxval: Int,
                       threads: Int? = nil) throws(RasterError) {
        try encodeRows(into: samples, layout: layout, maxval: maxval, threads: threads)
    }

    private mutating func decodeRows<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        from samples: UnsafeBufferPointer<Sample>, layout: SampleLayout, maxval: Int, threads: Int?) throws(RasterError) {
        try RasterError.check(width: width, height: height, layout: layout, maxval: maxval, count: samples.count, of: Sample.self)
        let width = self.width, height = self.height, channels = layout.channelCount
        let source = UncheckedBox(samples.baseAddress!)
        withUnsafeMutablePixels { pixels in
            let destination = SendablePointer(base: pixels.baseAddress!)
            // A large image is written once and read later: streaming stores skip reading
            // its lines into the cache first.
            let streaming = width * height * 16 >= StreamingStores.threshold && StreamingStores.available
            RowBands.forEach(rows: height, threads: threads) { rows in
                SampleConversion.decode(source.value + rows.lowerBound * width * channels, layout: layout, maxval: maxval,
                                        into: destination.base + rows.lowerBound * width, count: rows.count * width,
                                        streaming: streaming)
            }
        }
    }

    private func encodeRows<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        into samples: UnsafeMutableBufferPointer<Sample>, layout: SampleLayout, maxval: Int, threads: Int?) throws(RasterError) {
        try RasterError.check(width: width, height: height, layout: layout, maxval: maxval, count: samples.count, of: Sample.self)
        let width = self.width, channels = layout.channelCount
        let destination = SendablePointer(base: samples.baseAddress!)
        // A large destination is written once: streaming stores (8-bit RGBA).
        let streaming = samples.count * MemoryLayout<Sample>.stride >= StreamingStores.threshold && StreamingStores.available
        withUnsafePixels { pixels in
            let source = UncheckedBox(pixels.baseAddress!)
            RowBands.forEach(rows: height, threads: threads) { rows in
                SampleConversion.encode(source.value + rows.lowerBound * width, count: rows.count * width, layout: layout,
                                        maxval: maxval, into: destination.base + rows.lowerBound * width * channels,
                                        streaming: streaming)
            }
        }
    }

    /// Whether every pixel has `R == G == B` (a grey image: it loses nothing when
    /// written with a grey layout).
    ///
    /// - Complexity: O(width × height).
    public var isGray: Bool {
        pixels.allSatisfy { $0.x == $0.y && $0.y == $0.z }
    }

    /// Whether every alpha value is exactly 1 (nothing is lost by dropping alpha).
    ///
    /// - Complexity: O(width × height).
    public var isOpaque: Bool {
        pixels.allSatisfy { $0.w == 1 }
    }
}

/// The lanes of `v` as `Float`s, exact for values below 2²⁴: lane by lane through
/// `Float(Int32)`, which the optimiser joins into one `cvtdq2ps`. The generic
/// `SIMD8<Float>(SIMD8<Int32>)` is one specialisation for the whole module, and once
/// several loops used it the optimiser called it out of line, once per block (the full
/// 8-bit edit ran 1.6× slower).
@inline(__always)
func exactFloats(_ v: SIMD8<UInt32>) -> SIMD8<Float> {
    let x = SIMD8<Int32>(truncatingIfNeeded: v)
    return SIMD8(Float(x[0]), Float(x[1]), Float(x[2]), Float(x[3]), Float(x[4]), Float(x[5]), Float(x[6]), Float(x[7]))
}

/// `exactFloats` on sixteen lanes (the fused blocks' width where the build targets
/// AVX-512).
@inline(__always)
func exactFloats(_ v: SIMD16<UInt32>) -> SIMD16<Float> {
    let x = SIMD16<Int32>(truncatingIfNeeded: v)
    return SIMD16(Float(x[0]), Float(x[1]), Float(x[2]), Float(x[3]), Float(x[4]), Float(x[5]), Float(x[6]), Float(x[7]),
                  Float(x[8]), Float(x[9]), Float(x[10]), Float(x[11]), Float(x[12]), Float(x[13]), Float(x[14]), Float(x[15]))
}

/// `SampleCoding.byteQuotient` of eight bytes: `decode(v, maxval: 255)` of each,
/// correctly rounded, without a multiply.
///
/// Where the build targets AVX2 the bytes go three times into each 32-bit lane by one
/// byte shuffle (`vpbroadcastq` and `vpshufb`), then `vcvtdq2ps`, and the sum and the
/// maximum with 0, which LLVM forms as `vpmaxud` and `vpsubd`: five instructions for
/// eight samples, where the split reciprocal takes a widening, a conversion, two
/// multiplies and an add. The baseline build has no byte shuffle, and its form of these
/// steps ran no faster than the split reciprocal; its decoder takes the tripled byte's
/// one multiply instead (`tripledBytes`).
@inline(__always)
func byteQuotients(_ b: SIMD8<UInt8>) -> SIMD8<Float> {
    let tripled = SIMD32<UInt8>(b[0], b[0], b[0], 0, b[1], b[1], b[1], 0, b[2], b[2], b[2], 0, b[3], b[3], b[3], 0,
                                b[4], b[4], b[4], 0, b[5], b[5], b[5], 0, b[6], b[6], b[6], 0, b[7], b[7], b[7], 0)
    let w = unsafeBitCast(tripled, to: SIMD8<UInt32>.self)
    let bits = unsafeBitCast(exactFloats(w), to: SIMD8<Int32>.self) &+ SIMD8(repeating: SampleCoding.byteQuotientOffset)
    let zero = SIMD8<Int32>(repeating: 0)
    return unsafeBitCast(zero.replacing(with: bits, where: bits .> zero), to: SIMD8<Float>.self)
}

/// The sixteen samples at `offset` as two halves of eight 32-bit lanes.
///
/// Each half is `SIMD8<UInt32>(truncatingIfNeeded:)` of eight samples: one `vpmovzxbd`
/// (`vpmovzxwd`) where the build targets AVX2. Bytes in the baseline x86-64 build are
/// loaded sixteen at a time instead and interleaved with zeros, bytes into words and
/// words into 32-bit lanes (`punpcklbw`, `punpckhbw`, then two `punpcklwd` and two
/// `punpckhwd`): six instructions for sixteen bytes, where the optimiser widened each
/// group of four on its own for eight (`convert/rgba8-to-float` in cache 1.07–1.08× as
/// fast on a Xeon). x86-64 is little-endian, so the interleaved lanes are in memory order.
@inline(__always)
func widenedSamples<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
    _ from: UnsafeRawPointer, offset: Int, _: Sample.Type) -> (SIMD8<UInt32>, SIMD8<UInt32>) {
    #if arch(x86_64) && !canImport(TargetFeatures.AVX2)
    if Sample.bitWidth == 8 {
        let (low, high) = byteWords(from, offset: offset)
        return (widenedWords(low), widenedWords(high))
    }
    #endif
    return (SIMD8<UInt32>(truncatingIfNeeded: from.loadUnaligned(fromByteOffset: offset, as: SIMD8<Sample>.self)),
            SIMD8<UInt32>(truncatingIfNeeded: from.loadUnaligned(fromByteOffset: offset &+ 8 &* MemoryLayout<Sample>.stride,
                                                                 as: SIMD8<Sample>.self)))
}

#if arch(x86_64) && !canImport(TargetFeatures.AVX2)
/// The sixteen bytes at `offset` interleaved with zeros into two halves of eight
/// 16-bit words (`punpcklbw`, `punpckhbw`): the baseline build's first widening step.
@inline(__always)
func byteWords(_ from: UnsafeRawPointer, offset: Int) -> (SIMD8<UInt16>, SIMD8<UInt16>) {
    let b = from.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)
    return (unsafeBitCast(SIMD16<UInt8>(b[0], 0, b[1], 0, b[2], 0, b[3], 0, b[4], 0, b[5], 0, b[6], 0, b[7], 0),
                          to: SIMD8<UInt16>.self),
            unsafeBitCast(SIMD16<UInt8>(b[8], 0, b[9], 0, b[10], 0, b[11], 0, b[12], 0, b[13], 0, b[14], 0, b[15], 0),
                          to: SIMD8<UInt16>.self))
}

/// Eight words interleaved with zeros into eight 32-bit lanes (`punpcklwd`,
/// `punpckhwd`): the baseline build's second widening step.
@inline(__always)
func widenedWords(_ w: SIMD8<UInt16>) -> SIMD8<UInt32> {
    unsafeBitCast(SIMD16<UInt16>(w[0], 0, w[1], 0, w[2], 0, w[3], 0, w[4], 0, w[5], 0, w[6], 0, w[7], 0),
                  to: SIMD8<UInt32>.self)
}
#endif

/// The sixteen bytes at `offset`, each times 3, as two halves of eight 32-bit lanes:
/// `SampleConversion.decode`'s widening for `SampleCoding.tripledReciprocal`. The
/// baseline x86-64 build triples the words between its two interleavings (LLVM forms
/// it as two `paddw` per eight bytes); others multiply the 32-bit lanes.
@inline(__always)
func tripledBytes(_ from: UnsafeRawPointer, offset: Int) -> (SIMD8<UInt32>, SIMD8<UInt32>) {
    #if arch(x86_64) && !canImport(TargetFeatures.AVX2)
    let (low, high) = byteWords(from, offset: offset)
    return (widenedWords(low &* 3), widenedWords(high &* 3))
    #else
    let (low, high) = widenedSamples(from, offset: offset, UInt8.self)
    return (low &* 3, high &* 3)
    #endif
}

/// `SampleCoding.encode` on eight lanes, the integer left in the low mantissa bits of
/// `2²³ + round_half_even(clamp(x, 0, 1)·m)` (the caller masks them off); `maxval` holds
/// m ≤ 65535 in every lane.
///
/// The clamp sends NaN to 0 as the scalar function does (`clamped(_:upTo:)`: one
/// `vmaxps` and one `vminps` natively, one `maxps` and one `minps` per half in the
/// baseline build); adding 2²³ rounds half to even, no `rintf` call.
@inline(__always)
func encodedSamples(_ x: SIMD8<Float>, maxval: SIMD8<Float>) -> SIMD8<UInt32> {
    let c = clamped(x, upTo: SIMD8(repeating: 1))
    return unsafeBitCast(c * maxval + SIMD8(repeating: 8_388_608), to: SIMD8<UInt32>.self)
}

/// The conversion loops behind `FloatImage`'s sample initialisers and encoders, over raw
/// pointers so the row-band pipeline can call them on one row at a time.
enum SampleConversion {
    /// Decodes `count` pixels of `layout` from `source` into `destination`.
    /// Generic over the sample width; the compiler specialises it for `UInt8` and `UInt16`.
    static func decode<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        _ source: UnsafePointer<Sample>, layout: SampleLayout, maxval: Int,
        into destination: UnsafeMutablePointer<SIMD4<Float>>, count: Int, streaming: Bool = false) {
        let m = Float(maxval)
        switch layout {
        case .gray:
            for i in 0..<count {
                let y = SampleCoding.decode(source[i], maxval: m)
                (destination + i).initialize(to: SIMD4(y, y, y, 1))
            }
        case .grayAlpha:
            for i in 0..<count {
                let y = SampleCoding.decode(source[2 * i], maxval: m)
                let a = SampleCoding.decode(source[2 * i + 1], maxval: m)
                (destination + i).initialize(to: SIMD4(y, y, y, a))
            }
        case .rgb:
            // Two pixels at a time: their six samples spread into the lanes
            // `R G B _ R G B _` (a constant shuffle), then the RGBA block's widening
            // and division; alpha is set to 1 by bits, not by a mask select, whose
            // `SIMDMask` construction is not constant-folded. Each load reads eight
            // samples, so the loop stops while a third pixel follows the pair; the
            // last one or two pixels take the scalar formula.
            let mv = SIMD8<Float>(repeating: m)
            let colour = SIMD8<UInt32>(~0, ~0, ~0, 0, ~0, ~0, ~0, 0)
            let opaque = SIMD8<UInt32>(0, 0, 0, Float(1).bitPattern, 0, 0, 0, Float(1).bitPattern)
            let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(destination)
            let pixelBytes = 3 * MemoryLayout<Sample>.stride
            var i = 0
            while i &+ 3 <= count {
                let s = from.loadUnaligned(fromByteOffset: i &* pixelBytes, as: SIMD8<Sample>.self)
                let v = SIMD8<UInt32>(truncatingIfNeeded: SIMD8<Sample>(s[0], s[1], s[2], s[2], s[3], s[4], s[5], s[5]))
                let x = exactFloats(v) / mv
                to.storeBytes(of: unsafeBitCast(unsafeBitCast(x, to: SIMD8<UInt32>.self) & colour | opaque,
                                                to: SIMD8<Float>.self),
                              toByteOffset: i &* 16, as: SIMD8<Float>.self)
                i &+= 2
            }
            for i in i..<count {
                let s = source + 3 * i
                (destination + i).initialize(to: SIMD4(
                    SampleCoding.decode(s[0], maxval: m), SampleCoding.decode(s[1], maxval: m),
                    SampleCoding.decode(s[2], maxval: m), 1))
            }
        case .rgba:
            // Four pixels are sixteen samples in order, so a block widens straight into
            // sixteen floats: the same correctly rounded division as
            // `SampleCoding.decode`, the integer converted through `Int32` (one
            // `cvtdq2ps`, exact below 2²⁴; the mantissa trick, an OR and a subtraction,
            // cost the baseline build 8 % of this loop). The block is two eight-sample
            // halves (`widenedSamples`): the SIMD16 widening is an out-of-line call
            // (docs/performance.md §4). The offsets use `&*`: `i < count`, and
            // the caller's buffers already hold `count` pixels, so they cannot
            // overflow. The blocks start at a 64-byte boundary of the destination, the
            // pixels before it (at most three) and the tail taking the scalar formula:
            // each block then writes one whole cache line and no store spans two (with
            // streaming stores on a Xeon, 32 bytes each, 1.25× the speed of 16-byte ones
            // from 48 bytes into a line; where the build targets AVX-512, one 64-byte
            // store per line, `StreamingStores.storeLine`, another 1.02–1.04×). A band's
            // blocks go through `MemoryStreams` (four interleaved streams where the
            // processor gains from them), without prefetches:
            // the source is a quarter of what the loop writes, and the streaming stores
            // hold the line fill buffers that prefetches also take (0.88–0.94× with them).
            @inline(__always) func pixel(_ i: Int) {
                let s = source + 4 * i
                (destination + i).initialize(to: SIMD4(
                    SampleCoding.decode(s[0], maxval: m), SampleCoding.decode(s[1], maxval: m),
                    SampleCoding.decode(s[2], maxval: m), SampleCoding.decode(s[3], maxval: m)))
            }
            // `SIMD4<Float>` pixels are 16-byte aligned, so the head is whole pixels.
            assert(Int(bitPattern: destination) & 15 == 0)
            let head = min(count, pixelsBeforeBoundary(destination, boundary: 64, pixelBytes: 16) ?? 0)
            for i in 0..<head { pixel(i) }
            let whole = count - (count - head) % 4
            let mv = SIMD8<Float>(repeating: m)
            let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(destination)
            let pixelBytes = 4 * MemoryLayout<Sample>.stride
            // For bytes, the division's result by two multiplies and an add where that
            // is exact for the maxval (`reciprocalSplit`): a vector division accepts one
            // operation every few cycles and bounded this loop below the memory speed.
            let split = Sample.bitWidth == 8 ? SampleCoding.reciprocalSplit(maxval: maxval) : nil
            let h = SIMD8<Float>(repeating: split?.high ?? 0), l = SIMD8<Float>(repeating: split?.low ?? 0)
            // The sixteen floats of pixels i…i + 3: one cache line.
            @inline(__always) func store(_ x0: SIMD8<Float>, _ x1: SIMD8<Float>, pixel i: Int) {
                if streaming {
                    StreamingStores.storeLine(SIMD16(lowHalf: x0, highHalf: x1), to: to + i &* 16)
                } else {
                    to.storeBytes(of: x0, toByteOffset: i &* 16, as: SIMD8<Float>.self)
                    to.storeBytes(of: x1, toByteOffset: i &* 16 &+ 32, as: SIMD8<Float>.self)
                }
            }
            @inline(__always) func run(split: Bool) {
                @inline(__always) func block(_ j: Int) {
                    let i = head &+ 4 &* j, offset = i &* pixelBytes
                    let (low, high) = widenedSamples(from, offset: offset, Sample.self)
                    let v0 = exactFloats(low)
                    let v1 = exactFloats(high)
                    let x0 = split ? v0 * h + v0 * l : v0 / mv
                    let x1 = split ? v1 * h + v1 * l : v1 / mv
                    store(x0, x1, pixel: i)
                }
                MemoryStreams.forEachBlock((whole &- head) &>> 2, blockBytes: 64, block)
            }
            #if canImport(TargetFeatures.AVX2)
            // Bytes at maxval 255 where the build targets AVX2: the quotients by their
            // bits (`byteQuotients`), and the blocks in order. On a Zen EPYC (family 23)
            // this ran 1.28× the split reciprocal's four streams at 12 MP (1.11× at two
            // threads, 1.33× in cache); its four streams ran 1.13×.
            if Sample.bitWidth == 8 && maxval == 255 {
                var j = 0
                while j < (whole &- head) &>> 2 {
                    let i = head &+ 4 &* j, offset = i &* pixelBytes
                    let x0 = byteQuotients(from.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt8>.self))
                    let x1 = byteQuotients(from.loadUnaligned(fromByteOffset: offset &+ 8, as: SIMD8<UInt8>.self))
                    store(x0, x1, pixel: i)
                    j &+= 1
                }
            } else {
                if split != nil { run(split: true) } else { run(split: false) }
            }
            #else
            // Bytes at maxval 255 in other builds: one multiply of the tripled byte
            // (`tripledBytes`), through `MemoryStreams` (four streams on a Xeon, where
            // they gave the baseline build's decoder 1.48×; in order on Zen cores). In
            // the baseline build on a Zen EPYC (family 23) this ran 1.09× the split
            // reciprocal at 12 MP in the streams and 1.13× in order.
            if Sample.bitWidth == 8 && maxval == 255 {
                let r = SIMD8<Float>(repeating: SampleCoding.tripledReciprocal)
                @inline(__always) func block(_ j: Int) {
                    let i = head &+ 4 &* j
                    let (low, high) = tripledBytes(from, offset: i &* pixelBytes)
                    let x0 = exactFloats(low) * r
                    let x1 = exactFloats(high) * r
                    store(x0, x1, pixel: i)
                }
                MemoryStreams.forEachBlock((whole &- head) &>> 2, blockBytes: 64, block)
            } else {
                if split != nil { run(split: true) } else { run(split: false) }
            }
            #endif
            if streaming { StreamingStores.fence() }
            for i in whole..<count { pixel(i) }
        }
    }

    /// Decodes `count` pixels of `layout`, mapping each colour sample `v` of channel
    /// `c` through `tables`' entry `v` (the leading tone stages of `v / maxval`), and
    /// alpha through `SampleCoding.decode`. Samples beyond a table clamp to its last entry.
    static func decode<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        _ source: UnsafePointer<Sample>, layout: SampleLayout, maxval: Int, tables: ToneTables,
        into destination: UnsafeMutablePointer<SIMD4<Float>>, count: Int) {
        let m = Float(maxval), last = tables.count - 1
        let (tr, tg, tb) = (tables.red, tables.green, tables.blue)
        @inline(__always) func index(_ v: Sample) -> Int { min(Int(v), last) }
        switch layout {
        case .gray:
            // A grey sample is R = G = B, each through its own channel's table.
            for i in 0..<count {
                let v = index(source[i])
                (destination + i).initialize(to: SIMD4(tr[v], tg[v], tb[v], 1))
            }
        case .grayAlpha:
            for i in 0..<count {
                let v = index(source[2 * i])
                (destination + i).initialize(to: SIMD4(tr[v], tg[v], tb[v], SampleCoding.decode(source[2 * i + 1], maxval: m)))
            }
        case .rgb:
            for i in 0..<count {
                let s = source + 3 * i
                (destination + i).initialize(to: SIMD4(tr[index(s[0])], tg[index(s[1])], tb[index(s[2])], 1))
            }
        case .rgba:
            for i in 0..<count {
                let s = source + 4 * i
                (destination + i).initialize(to: SIMD4(tr[index(s[0])], tg[index(s[1])], tb[index(s[2])],
                                                       SampleCoding.decode(s[3], maxval: m)))
            }
        }
    }

    /// Encodes `count` pixels from `source` as `layout` samples into `destination`.
    /// `Sample` is `UInt8` or `UInt16` (the RGB block packs one or two bytes a sample).
    static func encode<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        _ source: UnsafePointer<SIMD4<Float>>, count: Int, layout: SampleLayout, maxval: Int,
        into destination: UnsafeMutablePointer<Sample>, streaming: Bool = false) {
        precondition(MemoryLayout<Sample>.stride <= 2, "samples are 8 or 16 bits")
        let m = Float(maxval)
        let w = Luma.weights
        switch layout {
        case .gray:
            for i in 0..<count {
                let p = source[i]
                (destination + i).initialize(to: Sample(truncatingIfNeeded: SampleCoding.encode(w.x * p.x + w.y * p.y + w.z * p.z, maxval: m)))
            }
        case .grayAlpha:
            for i in 0..<count {
                let p = source[i]
                (destination + 2 * i).initialize(to: Sample(truncatingIfNeeded: SampleCoding.encode(w.x * p.x + w.y * p.y + w.z * p.z, maxval: m)))
                (destination + 2 * i + 1).initialize(to: Sample(truncatingIfNeeded: SampleCoding.encode(p.w, maxval: m)))
            }
        case .rgb:
            // Two pixels at a time, encoded exactly as the RGBA block below; alpha is
            // then dropped by moving the six wanted samples into place in a 64-bit
            // (8-bit samples) or two 64-bit (16-bit samples) integers and storing
            // exactly six samples. A lane shuffle instead spreads through the whole
            // block and doubles its length. The packing reads lane 0 as the low bits, so
            // a big-endian build takes the scalar formula throughout, as does an odd
            // last pixel.
            var i = 0
            #if _endian(little)
            let mv = SIMD8<Float>(repeating: m)
            let sampleMask = SIMD8<UInt32>(repeating: UInt32(truncatingIfNeeded: Sample.max))
            let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(destination)
            let pixelBytes = 3 * MemoryLayout<Sample>.stride
            while i &+ 2 <= count {
                let x = from.loadUnaligned(fromByteOffset: i &* 16, as: SIMD8<Float>.self)
                let offset = i &* pixelBytes
                if MemoryLayout<Sample>.stride == 1 {
                    // Bytes R0 G0 B0 A0 R1 G1 B1 A1 → R0 G0 B0 R1 | G1 B1.
                    let u = BytePacking.bytes(x, maxval: mv)
                    to.storeBytes(of: UInt32(truncatingIfNeeded: (u & 0xFF_FFFF) | ((u &>> 8) & 0xFF00_0000)),
                                  toByteOffset: offset, as: UInt32.self)
                    to.storeBytes(of: UInt16(truncatingIfNeeded: u &>> 40), toByteOffset: offset &+ 4, as: UInt16.self)
                } else {
                    // Words R0 G0 B0 A0 | R1 G1 B1 A1 → R0 G0 B0 R1 | G1 B1.
                    let bits = encodedSamples(x, maxval: mv) & sampleMask
                    let w = unsafeBitCast(SIMD8<Sample>(truncatingIfNeeded: bits), to: SIMD2<UInt64>.self)
                    to.storeBytes(of: (w[0] & 0xFFFF_FFFF_FFFF) | (w[1] &<< 48), toByteOffset: offset, as: UInt64.self)
                    to.storeBytes(of: UInt32(truncatingIfNeeded: w[1] &>> 16), toByteOffset: offset &+ 8, as: UInt32.self)
                }
                i &+= 2
            }
            #endif
            for i in i..<count {
                let p = source[i], d = destination + 3 * i
                d.initialize(to: Sample(truncatingIfNeeded: SampleCoding.encode(p.x, maxval: m)))
                (d + 1).initialize(to: Sample(truncatingIfNeeded: SampleCoding.encode(p.y, maxval: m)))
                (d + 2).initialize(to: Sample(truncatingIfNeeded: SampleCoding.encode(p.z, maxval: m)))
            }
        case .rgba:
            // `SampleCoding.encode` on two pixels at once: bytes through `BytePacking`
            // (SSE2's conversion and saturating packs), 16-bit samples through
            // `encodedSamples`, whose low bits the mask bounds so the narrowing is a
            // plain pack. Two pixels per iteration, not four: with two SIMD8 halves (or
            // one SIMD16) the optimiser splits the whole block into SIMD4 pieces around
            // the narrowing and doubles the instruction count. Bytes go eight pixels a
            // step on x86-64, written with the SSE2 or AVX2 intrinsics themselves
            // (`BytePacking.rgba8`), which the optimiser cannot split.
            let mv = SIMD8<Float>(repeating: m)
            let sampleMask = SIMD8<UInt32>(repeating: UInt32(truncatingIfNeeded: Sample.max))
            let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(destination)
            let pixelBytes = 4 * MemoryLayout<Sample>.stride
            @inline(__always) func pair(_ i: Int) -> SIMD8<Sample> {
                let x = from.loadUnaligned(fromByteOffset: i &* 16, as: SIMD8<Float>.self)
                return SIMD8<Sample>(truncatingIfNeeded: encodedSamples(x, maxval: mv) & sampleMask)
            }
            @inline(__always) func onePixel(_ i: Int) {
                let p = source[i], d = destination + 4 * i
                d.initialize(to: Sample(truncatingIfNeeded: SampleCoding.encode(p.x, maxval: m)))
                (d + 1).initialize(to: Sample(truncatingIfNeeded: SampleCoding.encode(p.y, maxval: m)))
                (d + 2).initialize(to: Sample(truncatingIfNeeded: SampleCoding.encode(p.z, maxval: m)))
                (d + 3).initialize(to: Sample(truncatingIfNeeded: SampleCoding.encode(p.w, maxval: m)))
            }
            var i = 0
            if MemoryLayout<Sample>.stride == 1 {
                // Bytes: eight pixels per step, from the boundary `BytePacking.rgba8`
                // wants (its first pixels alone; rows shorter than two blocks skip the
                // blocks), then two at a time with SSE2's conversion and saturating
                // packs where available.
                if BytePacking.encodesEightPixels && count >= 16 {
                    i = BytePacking.leadingPixels(source: from, destination: to, streaming: streaming)
                    for k in 0..<i { onePixel(k) }
                    i &+= BytePacking.rgba8(from + 16 &* i, count: count &- i, maxval: m, into: to + 4 &* i,
                                            streaming: streaming)
                }
                @inline(__always) func bytes(_ i: Int) -> UInt64 {
                    BytePacking.bytes(from.loadUnaligned(fromByteOffset: i &* 16, as: SIMD8<Float>.self), maxval: mv)
                }
                while i &+ 2 <= count {
                    to.storeBytes(of: bytes(i), toByteOffset: i &* 4, as: UInt64.self)
                    i &+= 2
                }
            }
            while i &+ 2 <= count {
                to.storeBytes(of: pair(i), toByteOffset: i &* pixelBytes, as: SIMD8<Sample>.self)
                i &+= 2
            }
            for i in i..<count { onePixel(i) }
        }
    }
}
