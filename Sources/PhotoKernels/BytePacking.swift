// Float samples to bytes with SSE2's own conversion and saturating packs: the
// conversion rounds half to even (the default MXCSR mode, the same mode the portable
// `+ 2²³` rounding relies on) and the packs clamp to [0, 255] for free, so a block of
// two pixels needs a multiply, a clamp to maxval and four instructions, where the portable
// form clamps twice, adds, masks and narrows. Reached through the toolchain's Clang
// module of Intel intrinsics, like the streaming stores; elsewhere the portable form,
// which gives the same bytes, is used.

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel)
import _Builtin_intrinsics.intel
#endif

enum BytePacking {
    /// Two pixels of four `Float` samples as 8 bytes, lane 0 in the low byte: each
    /// sample `SampleCoding.encode(x, maxval: m)` for m ≤ 255 (clamped to [0, 1],
    /// NaN → 0, times `m`, rounded half to even), to the bit.
    ///
    /// `maxval` holds m in every lane.
    @inline(__always)
    static func bytes(_ x: SIMD8<Float>, maxval: SIMD8<Float>) -> UInt64 {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel)
        // `minps(m, y)` is `m < y ? m : y`, the same as clamping x to 1 first (rounding
        // is monotone); it keeps NaN, which the conversion turns into Int32.min, like
        // −∞, and the packs into 0, as every negative value. (A select on the SIMD8
        // halves became a compare and a blend.)
        let y = x * maxval
        let low = _mm_min_ps(maxval.lowHalf, y.lowHalf), high = _mm_min_ps(maxval.highHalf, y.highHalf)
        let words = _mm_packs_epi32(_mm_cvtps_epi32(low), _mm_cvtps_epi32(high))
        return UInt64(bitPattern: _mm_cvtsi128_si64(_mm_packus_epi16(words, words)))
        #else
        let bits = encodedSamples(x, maxval: maxval) & SIMD8(repeating: 0xFF)
        return unsafeBitCast(SIMD8<UInt8>(truncatingIfNeeded: bits), to: UInt64.self)
        #endif
    }

    /// Whether `rgba8` encodes eight pixels per step: in builds that target AVX2.
    static var encodesEightPixels: Bool {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && canImport(TargetFeatures.AVX2)
        true
        #else
        false
        #endif
    }

    /// RGBA `Float` pixels from `source` as bytes into `destination`, eight pixels (32
    /// samples) per step, each sample as `bytes` computes it (`SampleCoding.encode` for
    /// m ≤ 255, to the bit), with ordinary stores; returns how many pixels it encoded, a
    /// multiple of 8 (0 where `encodesEightPixels` is false). The caller encodes the rest.
    ///
    /// The same operations as `bytes` on 256-bit registers, four loads (folded into the
    /// multiplies) and one 32-byte store per 8 pixels: 21 instructions where the
    /// two-pixel loop takes 48. The encoder is bound by reading its 16 B/px, and with
    /// fewer instructions per byte more of the image is in flight in the core's
    /// reorder window. The packs work within each 128-bit half, which leaves the pixels
    /// in the order 0, 2, 4, 6, 1, 3, 5, 7; one `vpermd` puts them back.
    @inline(__always)
    static func rgba8(_ source: UnsafeRawPointer, count: Int, maxval: Float,
                      into destination: UnsafeMutableRawPointer) -> Int {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && canImport(TargetFeatures.AVX2)
        let m = SIMD8<Float>(repeating: maxval)
        let order = unsafeBitCast(SIMD8<Int32>(0, 4, 1, 5, 2, 6, 3, 7), to: __m256i.self)
        var i = 0
        while i &+ 8 <= count {
            // Pixels i + 2k and i + 2k + 1 as eight Int32s, clamped to maxval (NaN kept,
            // converted to Int32.min, which the packs take to 0).
            @inline(__always) func pair(_ k: Int) -> __m256i {
                let x = source.loadUnaligned(fromByteOffset: (i &+ 2 &* k) &* 16, as: SIMD8<Float>.self)
                return _mm256_cvtps_epi32(_mm256_min_ps(m, x * m))
            }
            let words = _mm256_packus_epi16(_mm256_packs_epi32(pair(0), pair(1)), _mm256_packs_epi32(pair(2), pair(3)))
            destination.storeBytes(of: _mm256_permutevar8x32_epi32(words, order), toByteOffset: i &* 4, as: __m256i.self)
            i &+= 8
        }
        return i
        #else
        return 0
        #endif
    }
}
