// The four-byte row codecs' loops for builds that target AVX2: two pixels per 256-bit
// register, in blocks of eight where bytes are packed or opaque pixels are looked for.
// Each lane computes what the codecs' one-pixel loops (PixelBuffer.swift, `RowCodec`)
// compute for it, so the two give the same bits; the loops here take the longest
// multiple of two or eight pixels and leave the rest to those. (The premultiplied
// decoder checks eight pixels for opacity where the one-pixel loop checks four, so a
// pixel may take the multiply in one and the division in the other: both give the
// correctly rounded quotient, `SampleCoding.tripledReciprocal`.)

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
import _Builtin_intrinsics.intel
#endif

/// The shuffle patterns and masks of the four-byte codecs' two-pixel loops, prepared
/// once per row piece for the format's byte places and passed to the loops as a value.
///
/// Held as values for the reason `AlphaMasks` gives: with constant patterns the
/// optimiser narrows the work before a shuffle to the lanes the shuffle reads and
/// rebuilds the others with more shuffles.
struct FourByteLanes: Sendable {
    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
    /// `vpshufb` on two pixels' eight bytes held in both halves: the low half's four
    /// 32-bit lanes get the first pixel's bytes in R G B A order, zero-extended, the
    /// high half's the second pixel's.
    let widening: __m256i
    /// `vpshufb` on packed bytes: each pixel's R G B A bytes to the format's places.
    let memoryOrder: __m256i
    /// `vpermilps`: lane 3 of each half (a pixel's alpha) over the half.
    let alphaBroadcast: __m256i
    /// `vpermd`: the packs leave pixels 0, 2, 4, 6, 1, 3, 5, 7 (they work within each
    /// 128-bit half); this puts them back in order.
    let pixelOrder: __m256i
    /// Lanes 3 and 7, the alphas of two pixels.
    let alpha: SIMDMask<SIMD8<Int32>>
    #endif

    /// The patterns for the byte places `P`.
    init<P: FourSamplePlaces>(_: P.Type) {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        // place[c]: the byte of channel c (R, G, B, A) within a pixel; lane[k]: the
        // channel stored at byte k.
        let place = P.rgba(SIMD4<UInt8>(0, 1, 2, 3)), lane = P.memory(SIMD4<UInt8>(0, 1, 2, 3))
        var widening = SIMD32<UInt8>(repeating: 0x80), memoryOrder = SIMD32<UInt8>()
        for half in 0..<2 {
            for c in 0..<4 { widening[16 &* half &+ 4 &* c] = UInt8(4 &* half) &+ place[c] }
            for pixel in 0..<4 {
                for k in 0..<4 { memoryOrder[16 &* half &+ 4 &* pixel &+ k] = UInt8(4 &* pixel) &+ lane[k] }
            }
        }
        self.widening = unsafeBitCast(widening, to: __m256i.self)
        self.memoryOrder = unsafeBitCast(memoryOrder, to: __m256i.self)
        alphaBroadcast = unsafeBitCast(SIMD8<Int32>(repeating: 3), to: __m256i.self)
        pixelOrder = unsafeBitCast(SIMD8<Int32>(0, 4, 1, 5, 2, 6, 3, 7), to: __m256i.self)
        alpha = AlphaMasks().pair
        #endif
    }
}

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
extension FourByteLanes {
    /// Pixels `i` and `i + 1` of `p` as eight `Int32` lanes in R G B A order: their
    /// eight bytes broadcast to both halves by the load (`vpbroadcastq`), then
    /// `widening`.
    @inline(__always)
    func widened(_ p: UnsafeRawPointer, pixel i: Int) -> SIMD8<Int32> {
        let bytes = SIMD4<UInt64>(repeating: p.loadUnaligned(fromByteOffset: 4 &* i, as: UInt64.self))
        return unsafeBitCast(_mm256_shuffle_epi8(unsafeBitCast(bytes, to: __m256i.self), widening), to: SIMD8<Int32>.self)
    }

    /// Eight pixels' lanes, rounded and saturated as the one-pixel loops' `words`, as
    /// 32 bytes in the format's order: each pair's `cvtps2dq` of `minps(1, x)·255` (NaN
    /// kept, converted to Int32.min, which the packs take to 0), the saturating packs,
    /// `pixelOrder` and `memoryOrder`.
    @inline(__always)
    func packed(_ x0: SIMD8<Float>, _ x1: SIMD8<Float>, _ x2: SIMD8<Float>, _ x3: SIMD8<Float>) -> __m256i {
        let one = SIMD8<Float>(repeating: 1), m = SIMD8<Float>(repeating: 255)
        @inline(__always) func words(_ x: SIMD8<Float>) -> __m256i { _mm256_cvtps_epi32(_mm256_min_ps(one, x) * m) }
        let bytes = _mm256_packus_epi16(_mm256_packs_epi32(words(x0), words(x1)), _mm256_packs_epi32(words(x2), words(x3)))
        return _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(bytes, pixelOrder), memoryOrder)
    }
}

extension RowCodec {
    /// `decodeWords` two pixels a step; returns how many pixels it decoded (the count
    /// rounded down to even).
    @inline(__always)
    static func decodePairs(_ p: UnsafeRawPointer, _ count: Int, _ out: UnsafeMutablePointer<SIMD4<Float>>,
                            opaque: SIMD4<Int32>, _ lanes: FourByteLanes) -> Int {
        let k = SIMD8<Float>(repeating: SampleCoding.tripledReciprocal)
        let opaque = SIMD8(lowHalf: opaque, highHalf: opaque)
        let destination = UnsafeMutableRawPointer(out)
        var i = 0
        while i &+ 2 <= count {
            let w = lanes.widened(p, pixel: i) | opaque
            destination.storeBytes(of: SIMD8<Float>(w &+ w &+ w) * k, toByteOffset: i &* 16, as: SIMD8<Float>.self)
            i &+= 2
        }
        return i
    }

    /// `decodePremultipliedWords` eight pixels a step (opaque ones by one multiply,
    /// others by one division per pair, `c / (A, A, A, 255)`, zero where A = 0);
    /// returns how many pixels it decoded (the count rounded down to a multiple of 8).
    @inline(__always)
    static func decodePremultipliedBlocks<P: FourSamplePlaces>(_ p: UnsafeRawPointer, _ count: Int,
                                                               _ out: UnsafeMutablePointer<SIMD4<Float>>, _: P.Type,
                                                               _ lanes: FourByteLanes) -> Int {
        let m = SIMD8<Float>(repeating: 255), zero = SIMD8<Float>()
        let k = SIMD8<Float>(repeating: SampleCoding.tripledReciprocal)
        let opaque = SIMD8<UInt32>(repeating: (UInt32(0xFF) << UInt32(8 &* P.fourth)).littleEndian)
        let destination = UnsafeMutableRawPointer(out)
        var i = 0
        while i &+ 8 <= count {
            if all(p.loadUnaligned(fromByteOffset: 4 &* i, as: SIMD8<UInt32>.self) & opaque .== opaque) {
                for pair in 0..<4 {
                    let j = i &+ 2 &* pair, v = lanes.widened(p, pixel: j)
                    destination.storeBytes(of: SIMD8<Float>(v &+ v &+ v) * k, toByteOffset: j &* 16, as: SIMD8<Float>.self)
                }
            } else {
                for pair in 0..<4 {
                    let j = i &+ 2 &* pair, c = SIMD8<Float>(lanes.widened(p, pixel: j))
                    let a = _mm256_permutevar_ps(c, lanes.alphaBroadcast)
                    let straight = (c / a.replacing(with: m, where: lanes.alpha)).replacing(with: zero, where: a .== zero)
                    destination.storeBytes(of: straight, toByteOffset: j &* 16, as: SIMD8<Float>.self)
                }
            }
            i &+= 8
        }
        return i
    }

    /// `encodeWords` eight pixels a step (`padding` as there); returns how many pixels
    /// it encoded (the count rounded down to a multiple of 8).
    @inline(__always)
    static func encodeBlocks(_ source: UnsafePointer<SIMD4<Float>>, _ count: Int, _ p: UnsafeMutableRawPointer,
                             padding: UInt32, _ lanes: FourByteLanes) -> Int {
        let kept = SIMD8<UInt32>(repeating: padding)
        let raw = UnsafeRawPointer(source)
        var i = 0
        while i &+ 8 <= count {
            @inline(__always) func pair(_ k: Int) -> SIMD8<Float> {
                raw.loadUnaligned(fromByteOffset: (i &+ 2 &* k) &* 16, as: SIMD8<Float>.self)
            }
            var w = unsafeBitCast(lanes.packed(pair(0), pair(1), pair(2), pair(3)), to: SIMD8<UInt32>.self)
            let at = p + 4 &* i
            if padding != 0 { w = w & ~kept | at.loadUnaligned(as: SIMD8<UInt32>.self) & kept }
            at.storeBytes(of: w, as: SIMD8<UInt32>.self)
            i &+= 8
        }
        return i
    }

    /// `encodePremultipliedWords` eight pixels a step: each pair's colour clamped to
    /// [0, 1] (`maxps(x, 0)`, `minps(·, 1)`: `x > 0 ? x : 0`, NaN to 0, then at most 1)
    /// and multiplied by its alpha, alpha kept by the mask; returns how many pixels it
    /// encoded (the count rounded down to a multiple of 8).
    @inline(__always)
    static func encodePremultipliedBlocks(_ source: UnsafePointer<SIMD4<Float>>, _ count: Int,
                                          _ p: UnsafeMutableRawPointer, _ lanes: FourByteLanes) -> Int {
        let zero = SIMD8<Float>(), one = SIMD8<Float>(repeating: 1)
        let raw = UnsafeRawPointer(source)
        var i = 0
        while i &+ 8 <= count {
            @inline(__always) func pair(_ k: Int) -> SIMD8<Float> {
                let x = raw.loadUnaligned(fromByteOffset: (i &+ 2 &* k) &* 16, as: SIMD8<Float>.self)
                let a = _mm256_permutevar_ps(x, lanes.alphaBroadcast)
                return (_mm256_min_ps(_mm256_max_ps(x, zero), one) * a).replacing(with: x, where: lanes.alpha)
            }
            (p + 4 &* i).storeBytes(of: lanes.packed(pair(0), pair(1), pair(2), pair(3)), as: __m256i.self)
            i &+= 8
        }
        return i
    }
}
#endif
