// The `Float16` samples of a half-precision widening block (8-bit pixels in, `Float16`
// ones out, `FusedBlock.runWidening`): each result rounded once to half precision, to
// nearest with ties to even, as the row path's `Float16(x)` rounds it. Where the build
// has F16C that is `vcvtps2ph` on the whole block. The baseline x86-64 build has no
// such instruction (a library call per lane): there the rounding is done in SSE2
// integer operations, `Float16Conversion`'s method for the finite values a block
// computes (its results are bounded: `FusedBlock.isWellConditioned`), in about 17
// instructions per four lanes where the general conversion took about 25.

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
import _Builtin_intrinsics.intel
#endif

/// A block's channel rounded to half precision, its bits in 32-bit lanes.
enum HalfPacking {
    /// The bits of `Float16(x)` for each lane of `v`, in the low half of the lane (the
    /// high half 0), as `FusedBlock.widened` packs a widening block's words: for every
    /// input where the build has F16C or takes `Float16Conversion` (x86-64 without the
    /// toolchain's intrinsics); for every finite input in the baseline x86-64 build,
    /// where a NaN gives an infinity of its sign (`finiteQuarter`).
    ///
    /// Complexity: one conversion and one widening of the words where the build has
    /// F16C; about 17 SSE2 instructions per four lanes in the baseline x86-64 build.
    @_transparent
    static func halfWords(_ v: BlockFloats) -> BlockWords {
        // Intel Macs have no `Float16` type (and no format of it to write).
        #if arch(x86_64) && (!canImport(TargetFeatures.F16C) || os(macOS) || targetEnvironment(macCatalyst))
        // The block's four-lane pieces through tuples: `lowHalf` and `highHalf` became
        // calls in the baseline build's loops, too large for the inliner.
        #if canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
        @_transparent func quarter(_ x: __m128) -> __m128i { finiteQuarter(x) }
        typealias Quarter = __m128
        #else
        @_transparent func quarter(_ x: SIMD4<Float>) -> SIMD4<UInt32> { Float16Conversion.roundedWords(x) }
        typealias Quarter = SIMD4<Float>
        #endif
        #if canImport(TargetFeatures.AVX512)
        let q = unsafeBitCast(v, to: (Quarter, Quarter, Quarter, Quarter).self)
        return unsafeBitCast((quarter(q.0), quarter(q.1), quarter(q.2), quarter(q.3)), to: BlockWords.self)
        #else
        let q = unsafeBitCast(v, to: (Quarter, Quarter).self)
        return unsafeBitCast((quarter(q.0), quarter(q.1)), to: BlockWords.self)
        #endif
        #else
        // Lane by lane, which LLVM makes one `vcvtps2ph` and one `vpmovzxwd`: the
        // standard library's vector conversions (`SIMD16<Float16>(v)`, and
        // `init(truncatingIfNeeded:)`) stayed calls, whose 128-bit arguments split
        // the block's arithmetic into `xmm` pieces around them. The lanes come from
        // `v` through `max(−∞, v)`, which is `v` for every input, NaN included (`maxps`
        // gives its second operand where either is NaN): an intrinsic the vectoriser
        // does not see through, without which it took the premultiplied loops' matrix
        // apart lane by lane (where the build targets AVX-512, 1.8× the instructions).
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX512)
        let v = unsafeBitCast(_mm512_max_ps(_mm512_set1_ps(-.infinity), unsafeBitCast(v, to: __m512.self)), to: BlockFloats.self)
        #elseif arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
        let v = unsafeBitCast(_mm256_max_ps(_mm256_set1_ps(-.infinity), unsafeBitCast(v, to: __m256.self)), to: BlockFloats.self)
        #endif
        @_transparent func lane(_ i: Int) -> UInt32 { UInt32(Float16(v[i]).bitPattern) }
        #if canImport(TargetFeatures.AVX512)
        return BlockWords(lane(0), lane(1), lane(2), lane(3), lane(4), lane(5), lane(6), lane(7),
                          lane(8), lane(9), lane(10), lane(11), lane(12), lane(13), lane(14), lane(15))
        #else
        return BlockWords(lane(0), lane(1), lane(2), lane(3), lane(4), lane(5), lane(6), lane(7))
        #endif
        #endif
    }

    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
    /// The bits of `Float16(x)` for four finite `Float`s, each in the low half of a
    /// 32-bit lane; a NaN gives an infinity of its sign. `Float16Conversion.rounded`'s
    /// method (F. Giesen's): the magnitude clamped to 65520 first (`minps`, which takes
    /// NaN to 65520 too), from which on every value rounds to infinity, so that no
    /// test for infinity or NaN remains.
    ///
    /// Complexity: 16 SSE2 operations (about 17 instructions with a register copy), no
    /// branch.
    @_transparent
    static func finiteQuarter(_ x: __m128) -> __m128i {
        let bits = _mm_castps_si128(x)
        let sign = _mm_and_si128(bits, _mm_set1_epi32(Int32.min))
        let magnitude = _mm_min_ps(_mm_castsi128_ps(_mm_xor_si128(bits, sign)), _mm_set1_ps(65520))
        let f = _mm_castps_si128(magnitude)
        // Normal halves: the exponent rebiased (−112), just under half an ulp of the half
        // added with the kept significand's lowest bit (ties to even), and the 13 bits
        // below the half's significand dropped; a carry moves the exponent on.
        let lowestKept = _mm_and_si128(_mm_srli_epi32(f, 13), _mm_set1_epi32(1))
        let normal = _mm_srli_epi32(_mm_add_epi32(_mm_add_epi32(f, _mm_set1_epi32(Int32(bitPattern: 0xC800_0FFF))), lowestKept), 13)
        // Below 2⁻¹⁴ (subnormal halves and zero): adding 0.5, whose ulp is 2⁻²⁴, the
        // half's, rounds the magnitude to a multiple of 2⁻²⁴ in the significand's low bits.
        let subnormal = _mm_sub_epi32(_mm_castps_si128(_mm_add_ps(magnitude, _mm_set1_ps(0.5))), _mm_set1_epi32(0x3F00_0000))
        let small = _mm_cmplt_epi32(f, _mm_set1_epi32(0x3880_0000))
        let half = _mm_or_si128(_mm_and_si128(small, subnormal), _mm_andnot_si128(small, normal))
        return _mm_or_si128(half, _mm_srli_epi32(sign, 16))
    }
    #endif
}
