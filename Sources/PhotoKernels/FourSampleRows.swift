// Row codecs for pixels of four 16-bit, `Float` or `Float16` samples (SPEC §0, §10):
// the vImage RGBA16U / ARGB16U, RGBAFFFF / ARGBFFFF and RGBA16F shapes, in any channel
// order, with straight, premultiplied or no alpha. One pixel per `SIMD4`, its samples
// put in R G B A order (or back in the format's) by one shuffle. They compute the bits
// of `RowCodec`'s generic per-sample loops, which remain the reference.

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
import _Builtin_intrinsics.intel
#endif

extension SampleCoding {
    /// `1/65535` as `2⁻¹⁶ + wordReciprocalLow`: `Float(v)·2⁻¹⁶ + Float(v)·wordReciprocalLow`
    /// equals `decode(v, maxval: 65535)`, the correctly rounded quotient, for every
    /// 16-bit `v`: the first product is exact (a power of two) and the second is rounded
    /// far below the result's ulp, so only the sum's rounding counts; the tests check
    /// all 65 536 samples, which is the proof. Two multiplies and an add replace a
    /// division, which accepts one operation every few cycles. One multiply by the
    /// `Float` nearest 1/65535 is one ulp off for 512 samples.
    static let wordReciprocalHigh = Float(0x1p-16)

    /// See `wordReciprocalHigh`: `Float(1/65535 − 2⁻¹⁶)`, 0x1.0001p-32.
    static let wordReciprocalLow = Float(1.0 / 65535.0 - 0x1p-16)
}

extension RowCodec {
    // The masks of alpha and padding lanes, and the opaque lane ORed into a decoded
    // pixel, reach these loops as values from `runFourSamples`: a mask or lane the
    // optimiser sees as a constant inside a loop turns the blend into lane-by-lane tests
    // and moves, or the conversion into a scalar one per lane (see `AlphaMasks`).

    // MARK: 16-bit samples

    /// Decodes `count` pixels of four 16-bit samples in `P`'s order: straight colour
    /// `v / 65535` (`wordReciprocalHigh`), an order without alpha with alpha 1 (its
    /// fourth lane ORed with `opaque`, `(0, 0, 0, 0xFFFF)`, else zero); premultiplied
    /// colour `c / A`, the quotient of the two integers rounded once, and alpha
    /// `A / 65535` (`alphaLane`: lane 3), an A = 0 pixel all zero. Four pixels that are
    /// all opaque (A = 65535) take the straight form, which gives them the same bits
    /// without a division.
    @inline(never)
    static func decodeFourUInt16<P: FourSamplePlaces>(_ p: UnsafeRawPointer, _ count: Int,
                                                      _ out: UnsafeMutablePointer<SIMD4<Float>>, _: P.Type,
                                                      premultiplied: Bool, opaque: SIMD4<Int32>,
                                                      alphaLane: SIMDMask<SIMD4<Int32>>) {
        let h = SIMD4<Float>(repeating: SampleCoding.wordReciprocalHigh)
        let l = SIMD4<Float>(repeating: SampleCoding.wordReciprocalLow)
        @inline(__always) func samples(_ i: Int) -> SIMD4<Int32> {
            P.rgba(SIMD4<Int32>(truncatingIfNeeded: p.loadUnaligned(fromByteOffset: 8 &* i, as: SIMD4<UInt16>.self)))
        }
        @inline(__always) func straight(_ i: Int) {
            let x = SIMD4<Float>(samples(i) | opaque)
            (out + i).initialize(to: x * h + x * l)
        }
        guard premultiplied else {
            for i in 0..<count { straight(i) }
            return
        }
        let m = SIMD4<Float>(repeating: 65535), zero = SIMD4<Float>()
        @inline(__always) func divided(_ i: Int) {
            let c = SIMD4<Float>(samples(i)), a = SIMD4<Float>(repeating: c.w)
            (out + i).initialize(to: (c / a.replacing(with: m, where: alphaLane)).replacing(with: zero, where: a .== zero))
        }
        // The alpha word's bits in a pixel's eight bytes read as one integer.
        let alphaBits = (UInt64(0xFFFF) << UInt64(16 &* P.fourth)).littleEndian
        @inline(__always) func bits(_ i: Int) -> UInt64 { p.loadUnaligned(fromByteOffset: 8 &* i, as: UInt64.self) }
        var i = 0
        while i &+ 4 <= count {
            if bits(i) & bits(i &+ 1) & bits(i &+ 2) & bits(i &+ 3) & alphaBits == alphaBits {
                straight(i); straight(i &+ 1); straight(i &+ 2); straight(i &+ 3)
            } else {
                divided(i); divided(i &+ 1); divided(i &+ 2); divided(i &+ 3)
            }
            i &+= 4
        }
        while i < count {
            divided(i)
            i &+= 1
        }
    }

    /// Encodes `count` pixels as four 16-bit samples in `P`'s order, SPEC §0 on each
    /// lane (clamp to [0, 1], NaN to 0, `· 65535`, round half to even by adding 2²³).
    /// `padding`: an order without alpha, whose fourth sample the destination keeps
    /// (`kept`: all ones in those words of two pixels). Two pixels a step, narrowed to
    /// words together (`wordPair`) and stored as 16 bytes.
    @inline(never)
    static func encodeFourUInt16<P: FourSamplePlaces>(_ source: UnsafePointer<SIMD4<Float>>, _ count: Int,
                                                      _ p: UnsafeMutableRawPointer, _: P.Type,
                                                      padding: Bool, kept: SIMD8<UInt16>) {
        var i = 0
        while i &+ 2 <= count {
            let at = p + 8 &* i
            var words = wordPair(source[i], source[i &+ 1], P.self)
            if padding { words = words & ~kept | at.loadUnaligned(as: SIMD8<UInt16>.self) & kept }
            at.storeBytes(of: words, as: SIMD8<UInt16>.self)
            i &+= 2
        }
        if i < count {
            let at = p + 8 &* i, keep = kept.lowHalf
            let words = wordPair(source[i], source[i], P.self).lowHalf
            at.storeBytes(of: words & ~keep | at.loadUnaligned(as: SIMD4<UInt16>.self) & keep, as: SIMD4<UInt16>.self)
        }
    }

    /// `encodeFourUInt16` for premultiplied alpha: the colour clamped to [0, 1] (NaN to
    /// 0) and multiplied by alpha first, alpha kept (`alphaLane`: lane 3).
    @inline(never)
    static func encodePremultipliedFourUInt16<P: FourSamplePlaces>(
        _ source: UnsafePointer<SIMD4<Float>>, _ count: Int, _ p: UnsafeMutableRawPointer, _: P.Type,
        alphaLane: SIMDMask<SIMD4<Int32>>) {
        let one = SIMD4<Float>(repeating: 1)
        @inline(__always) func pixel(_ i: Int) -> SIMD4<Float> {
            let c = source[i]
            return (clamped(c, upTo: one) * SIMD4(repeating: c.w)).replacing(with: c, where: alphaLane)
        }
        var i = 0
        while i &+ 2 <= count {
            (p + 8 &* i).storeBytes(of: wordPair(pixel(i), pixel(i &+ 1), P.self), as: SIMD8<UInt16>.self)
            i &+= 2
        }
        if i < count {
            (p + 8 &* i).storeBytes(of: wordPair(pixel(i), pixel(i), P.self).lowHalf, as: SIMD4<UInt16>.self)
        }
    }

    /// SPEC §0 at maxval 65535 of two pixels' lanes, in `P`'s order, as eight words.
    ///
    /// `c·65535 + 2²³` is the `Float` `2²³ + k`, whose bits are `0x4B00_0000 + k`
    /// (k ≤ 65535). Where the build has the Clang module of Intel intrinsics, subtracting
    /// `0x4B00_8000` leaves `k − 32768`, which SSE2's signed saturating pack
    /// (`packssdw`) narrows exactly, and flipping each word's top bit gives `k`: four
    /// instructions for eight samples (a subtraction per pixel, the pack, the flip),
    /// where the truncating conversion of the portable form takes three shuffles for
    /// four.
    @inline(__always)
    static func wordPair<P: FourSamplePlaces>(_ c0: SIMD4<Float>, _ c1: SIMD4<Float>, _: P.Type) -> SIMD8<UInt16> {
        let one = SIMD4<Float>(repeating: 1), m = SIMD4<Float>(repeating: 65535)
        @inline(__always) func bits(_ c: SIMD4<Float>) -> SIMD4<Int32> {
            unsafeBitCast(clamped(P.memory(c), upTo: one) * m + 8_388_608, to: SIMD4<Int32>.self)
        }
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
        let offset = SIMD4<Int32>(repeating: 0x4B00_8000)
        let signed = unsafeBitCast(_mm_packs_epi32(unsafeBitCast(bits(c0) &- offset, to: __m128i.self),
                                                   unsafeBitCast(bits(c1) &- offset, to: __m128i.self)),
                                   to: SIMD8<UInt16>.self)
        return signed ^ 0x8000
        #else
        return SIMD8<UInt16>(truncatingIfNeeded: SIMD8(lowHalf: bits(c0), highHalf: bits(c1)))
        #endif
    }

    // MARK: Float and Float16 samples

    /// Decodes `count` pixels of four floating-point samples (`Float`, or `Float16`
    /// widened) in `P`'s order, as they are: an order without alpha (`hasAlpha` false)
    /// with alpha 1; premultiplied colour divided by alpha and alpha kept to the bit (a
    /// signalling `Float` NaN too), an alpha of ±0 giving an all-zero pixel.
    /// `alphaLane`: lane 3.
    @inline(never)
    static func decodeFourFloats<P: FourSamplePlaces, S: FourFloatSamples>(
        _ p: UnsafeRawPointer, _ count: Int, _ out: UnsafeMutablePointer<SIMD4<Float>>, _: P.Type, _: S.Type,
        premultiplied: Bool, hasAlpha: Bool, alphaLane: SIMDMask<SIMD4<Int32>>) {
        let one = SIMD4<Float>(repeating: 1), zero = SIMD4<Float>()
        @inline(__always) func pixel(_ i: Int) -> SIMD4<Float> { P.rgba(S.pixel(p, i)) }
        if premultiplied {
            for i in 0..<count {
                let c = pixel(i), a = SIMD4<Float>(repeating: c.w)
                (out + i).initialize(to: (c / a).replacing(with: c, where: alphaLane).replacing(with: zero, where: a .== zero))
            }
        } else if hasAlpha {
            for i in 0..<count { (out + i).initialize(to: pixel(i)) }
        } else {
            for i in 0..<count { (out + i).initialize(to: pixel(i).replacing(with: one, where: alphaLane)) }
        }
    }

    /// Encodes `count` pixels as four floating-point samples in `P`'s order (`Float` as
    /// they are, `Float16` rounded to nearest even); premultiplied, the colour clamped
    /// to [0, 1] (NaN to 0) and multiplied by alpha (`alphaLane`: lane 3). `padding`:
    /// an order without alpha, whose fourth sample the destination keeps (`kept`: all
    /// ones in that lane).
    @inline(never)
    static func encodeFourFloats<P: FourSamplePlaces, S: FourFloatSamples>(
        _ source: UnsafePointer<SIMD4<Float>>, _ count: Int, _ p: UnsafeMutableRawPointer, _: P.Type, _: S.Type,
        premultiplied: Bool, padding: Bool, kept: SIMD4<S.Bits>, alphaLane: SIMDMask<SIMD4<Int32>>) {
        let one = SIMD4<Float>(repeating: 1)
        if premultiplied {
            for i in 0..<count {
                let c = source[i]
                S.store(P.memory((clamped(c, upTo: one) * SIMD4(repeating: c.w)).replacing(with: c, where: alphaLane)), p, i)
            }
        } else if padding {
            for i in 0..<count { S.store(P.memory(source[i]), p, i, keeping: kept) }
        } else {
            for i in 0..<count { S.store(P.memory(source[i]), p, i) }
        }
    }
}

/// How a pixel of four floating-point samples is stored: `Float` as it is, `Float16`
/// widened on the way in and rounded to nearest even on the way out, as the per-sample
/// loop's `Float(h)` and `Float16(x)` do, four lanes at once.
protocol FourFloatSamples: BufferSample {
    /// The sample's bits, to keep a padding sample as stored.
    associatedtype Bits: FixedWidthInteger & UnsignedInteger & SIMDScalar
    /// Pixel `i`'s four samples in memory order, as `Float`.
    static func pixel(_ p: UnsafeRawPointer, _ i: Int) -> SIMD4<Float>
    /// Stores `x` as pixel `i`'s four samples, in memory order.
    static func store(_ x: SIMD4<Float>, _ p: UnsafeMutableRawPointer, _ i: Int)
    /// `store(_:_:_:)`, keeping the destination's bits in `kept`'s lanes of all ones.
    static func store(_ x: SIMD4<Float>, _ p: UnsafeMutableRawPointer, _ i: Int, keeping kept: SIMD4<Bits>)
}

extension Float: FourFloatSamples {
    typealias Bits = UInt32
    @inline(__always) static func pixel(_ p: UnsafeRawPointer, _ i: Int) -> SIMD4<Float> {
        p.loadUnaligned(fromByteOffset: 16 &* i, as: SIMD4<Float>.self)
    }
    @inline(__always) static func store(_ x: SIMD4<Float>, _ p: UnsafeMutableRawPointer, _ i: Int) {
        (p + 16 &* i).storeBytes(of: x, as: SIMD4<Float>.self)
    }
    @inline(__always) static func store(_ x: SIMD4<Float>, _ p: UnsafeMutableRawPointer, _ i: Int, keeping kept: SIMD4<UInt32>) {
        let at = p + 16 &* i
        at.storeBytes(of: unsafeBitCast(x, to: SIMD4<UInt32>.self) & ~kept | at.loadUnaligned(as: SIMD4<UInt32>.self) & kept,
                      as: SIMD4<UInt32>.self)
    }
}

#if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
extension Float16: FourFloatSamples {
    typealias Bits = UInt16
    @inline(__always) static func pixel(_ p: UnsafeRawPointer, _ i: Int) -> SIMD4<Float> {
        floats(halfBits: p.loadUnaligned(fromByteOffset: 8 &* i, as: SIMD4<UInt16>.self))
    }
    @inline(__always) static func store(_ x: SIMD4<Float>, _ p: UnsafeMutableRawPointer, _ i: Int) {
        (p + 8 &* i).storeBytes(of: halfBits(x), as: SIMD4<UInt16>.self)
    }
    @inline(__always) static func store(_ x: SIMD4<Float>, _ p: UnsafeMutableRawPointer, _ i: Int, keeping kept: SIMD4<UInt16>) {
        let at = p + 8 &* i
        at.storeBytes(of: halfBits(x) & ~kept | at.loadUnaligned(as: SIMD4<UInt16>.self) & kept, as: SIMD4<UInt16>.self)
    }

    /// Four halves given as bits, widened as `Float(h)` widens them: where the build is
    /// x86-64 without F16C, which would call the library per lane, by
    /// `Float16Conversion`'s SSE2 operations (the same bits).
    @inline(__always) private static func floats(halfBits bits: SIMD4<UInt16>) -> SIMD4<Float> {
        #if arch(x86_64) && !canImport(TargetFeatures.F16C)
        Float16Conversion.widened(bits)
        #else
        SIMD4<Float>(unsafeBitCast(bits, to: SIMD4<Float16>.self))
        #endif
    }
    /// The bits of `Float16(x)` for four lanes: where the build is x86-64 without F16C,
    /// by `Float16Conversion`'s SSE2 operations (the same bits).
    @inline(__always) private static func halfBits(_ x: SIMD4<Float>) -> SIMD4<UInt16> {
        #if arch(x86_64) && !canImport(TargetFeatures.F16C)
        Float16Conversion.rounded(x)
        #else
        unsafeBitCast(SIMD4<Float16>(x), to: SIMD4<UInt16>.self)
        #endif
    }

    #if arch(x86_64) && !canImport(TargetFeatures.F16C)
    /// Widens `count` halves at `p` (any alignment) into `out`, four at a time, each
    /// exactly `Float(h)`: where the build is x86-64 without F16C, for the formats the
    /// per-sample loops take, which then read them as `Float`s (`RowCodec.decodeHalves`).
    static func widen(_ p: UnsafeRawPointer, count: Int, into out: UnsafeMutablePointer<Float>) {
        let destination = UnsafeMutableRawPointer(out)
        var i = 0
        while i &+ 4 <= count {
            destination.storeBytes(of: floats(halfBits: p.loadUnaligned(fromByteOffset: 2 &* i, as: SIMD4<UInt16>.self)),
                                   toByteOffset: 4 &* i, as: SIMD4<Float>.self)
            i &+= 4
        }
        guard i < count else { return }
        var rest = SIMD4<UInt16>()
        for k in 0..<(count &- i) { rest[k] = p.loadUnaligned(fromByteOffset: 2 &* (i &+ k), as: UInt16.self) }
        let x = floats(halfBits: rest)
        for k in 0..<(count &- i) { out[i &+ k] = x[k] }
    }

    /// Rounds `count` `Float`s at `x` to halves at `p` (any alignment), four at a time,
    /// each exactly `Float16(x)`; writes nothing past them (`RowCodec.encodeHalves`).
    static func narrow(_ x: UnsafePointer<Float>, count: Int, into p: UnsafeMutableRawPointer) {
        let source = UnsafeRawPointer(x)
        var i = 0
        while i &+ 4 <= count {
            p.storeBytes(of: halfBits(source.loadUnaligned(fromByteOffset: 4 &* i, as: SIMD4<Float>.self)),
                         toByteOffset: 2 &* i, as: SIMD4<UInt16>.self)
            i &+= 4
        }
        guard i < count else { return }
        var rest = SIMD4<Float>()
        for k in 0..<(count &- i) { rest[k] = x[i &+ k] }
        let h = halfBits(rest)
        for k in 0..<(count &- i) { p.storeBytes(of: h[k], toByteOffset: 2 &* (i &+ k), as: UInt16.self) }
    }
    #endif
}
#endif

extension RowCodec {
    /// Runs `job` on `count` pixels of four 16-bit, `Float` or `Float16` samples, with
    /// the format's places as a compile-time type (`FourSamplePlaces`).
    func runFourSamples(_ job: Job, count: Int) {
        let order = format.channelOrder, premultiplied = format.alphaMode == .premultiplied
        let hasAlpha = order.alphaIndex != nil, sample = format.sampleType
        let alphaLane = AlphaMasks().pixel
        func run<P: FourSamplePlaces>(_: P.Type) {
            // An order without alpha: the fourth sample's lane, to keep on the way out.
            var fourth = SIMD4<UInt32>()
            if !hasAlpha { fourth[P.fourth] = ~0 }
            func floats<S: FourFloatSamples>(_: S.Type) {
                switch job {
                case .decode(let p, let out):
                    Self.decodeFourFloats(p, count, out, P.self, S.self, premultiplied: premultiplied, hasAlpha: hasAlpha,
                                          alphaLane: alphaLane)
                case .encode(let source, let p):
                    Self.encodeFourFloats(source, count, p, P.self, S.self, premultiplied: premultiplied,
                                          padding: !hasAlpha, kept: SIMD4<S.Bits>(truncatingIfNeeded: fourth),
                                          alphaLane: alphaLane)
                }
            }
            switch (job, sample) {
            case (.decode(let p, let out), .uint16):
                // Without alpha the fourth lane reads 0xFFFF, alpha 1.
                let opaque = SIMD4<Int32>(0, 0, 0, hasAlpha ? 0 : 0xFFFF)
                Self.decodeFourUInt16(p, count, out, P.self, premultiplied: premultiplied, opaque: opaque,
                                      alphaLane: alphaLane)
            case (.encode(let source, let p), .uint16):
                if premultiplied {
                    Self.encodePremultipliedFourUInt16(source, count, p, P.self, alphaLane: alphaLane)
                } else {
                    let kept = SIMD4<UInt16>(truncatingIfNeeded: fourth)
                    Self.encodeFourUInt16(source, count, p, P.self, padding: !hasAlpha,
                                          kept: SIMD8(lowHalf: kept, highHalf: kept))
                }
            case (_, .float32):
                floats(Float.self)
            case (_, .float16):
                // Where `Float16` does not exist no format has it (`PixelFormat.init`).
                #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
                floats(Float16.self)
                #endif
            case (_, .uint8):
                // Four bytes take the four-byte codecs (`decodeFourBytes`).
                break
            }
        }
        switch order.colorIndices {
        case (0, 1, 2): run(PlacesRGBA.self)
        case (2, 1, 0): run(PlacesBGRA.self)
        case (1, 2, 3): run(PlacesARGB.self)
        default: run(PlacesABGR.self)
        }
    }
}
