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
}
