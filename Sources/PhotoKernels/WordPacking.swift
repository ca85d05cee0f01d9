// The 16-bit pixels of a widening block (8-bit pixels in, 16-bit ones out,
// `FusedBlock.runWidening`), from its three channels on the 16-bit scale and its alpha
// words: clamped above by `minps`, rounded by the conversion (half to even, the default
// MXCSR mode), clamped below by the packs' saturation, and put together by word
// unpacks. Reached through the toolchain's Clang module of Intel intrinsics, like
// BytePacking.swift. The conversion is an intrinsic LLVM does not see through, so the
// block's arithmetic before it stays whole, at the block's width; written as SIMD
// shuffles, the interleave of the channels was carried back into that arithmetic and
// split every vector into its even and odd lanes. Elsewhere `FusedBlock.widened` packs
// the portable encoding (`FusedBlock.encode`).

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
import _Builtin_intrinsics.intel

enum WordPacking {
    /// A block's channel clamped above to 65535 (`minps`, which keeps NaN, and takes +∞
    /// and every larger value to 65535) and rounded half to even to `Int32` lanes by the
    /// conversion (NaN and values below −2³¹ give `Int32.min`, which packs to 0); in the
    /// baseline build, which has no unsigned pack, 32768 below the 16-bit scale
    /// (`pixels` moves it back). There the subtraction rounds once more below 16384,
    /// which can move a result only within 2⁻⁹ of a tie, inside SPEC §8's window.
    @_transparent
    static func words(_ v: BlockFloats) -> BlockWords {
        #if canImport(TargetFeatures.AVX512)
        unsafeBitCast(_mm512_cvtps_epi32(_mm512_min_ps(_mm512_set1_ps(65535), v)), to: BlockWords.self)
        #elseif canImport(TargetFeatures.AVX2)
        unsafeBitCast(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_set1_ps(65535), v)), to: BlockWords.self)
        #else
        let ceiling = _mm_set1_ps(65535), bias = _mm_set1_ps(32768)
        @_transparent func half(_ v: SIMD4<Float>) -> SIMD4<UInt32> {
            unsafeBitCast(_mm_cvtps_epi32(_mm_sub_ps(_mm_min_ps(ceiling, v), bias)), to: SIMD4<UInt32>.self)
        }
        return BlockWords(lowHalf: half(v.lowHalf), highHalf: half(v.highHalf))
        #endif
    }

    /// The words a colour takes to become 0 in `pixels`.
    static var hidden: UInt32 {
        #if canImport(TargetFeatures.AVX2)
        0
        #else
        0x8000_0000
        #endif
    }

    /// Words `v` that need no rounding (each at most 65535: alphas, or `Float16` bits)
    /// as `pixels` takes them: as they are, or in the baseline build 32768 below, like
    /// `words`.
    @_transparent
    static func alphaWords(_ v: BlockWords) -> BlockWords {
        #if canImport(TargetFeatures.AVX2)
        v
        #else
        v &- 32768
        #endif
    }

    /// Eight pixels as they lie in memory, four 16-bit words each, from the words of
    /// their samples in memory order (`words` and `alphaWords` give them), each clamped
    /// below to 0: with `words`, every colour is `FusedBlock.encode`'s at maxval 65535
    /// (NaN and −∞ give 0, +∞ gives 65535), to the bit in builds with AVX2.
    ///
    /// AVX2: `vpackusdw`, whose unsigned saturation clamps (`Int32.min` and every
    /// negative word pack to 0), and two rounds of word unpacks put each pixel's four
    /// words together, within each 128-bit lane; exchanging two of the lanes puts the
    /// pixels in order. The baseline build packs its biased words with signed
    /// saturation, then flips each word's top bit, as `ChannelWords.signedPacking` does.
    @_transparent
    static func pixels(_ w0: SIMD8<UInt32>, _ w1: SIMD8<UInt32>, _ w2: SIMD8<UInt32>, _ w3: SIMD8<UInt32>) -> SIMD16<UInt32> {
        #if canImport(TargetFeatures.AVX2)
        @_transparent func m(_ v: SIMD8<UInt32>) -> __m256i { unsafeBitCast(v, to: __m256i.self) }
        let front = _mm256_packus_epi32(m(w0), m(w1))  // w0 of pixels 0…3, w1 of 0…3 | the same of 4…7
        let back = _mm256_packus_epi32(m(w2), m(w3))
        let low = _mm256_unpacklo_epi16(front, back), high = _mm256_unpackhi_epi16(front, back)
        let first = unsafeBitCast(_mm256_unpacklo_epi16(low, high), to: SIMD8<UInt32>.self)  // pixels 0, 1 | 4, 5
        let second = unsafeBitCast(_mm256_unpackhi_epi16(low, high), to: SIMD8<UInt32>.self)  // pixels 2, 3 | 6, 7
        return SIMD16(lowHalf: SIMD8(lowHalf: first.lowHalf, highHalf: second.lowHalf),
                      highHalf: SIMD8(lowHalf: first.highHalf, highHalf: second.highHalf))
        #else
        @_transparent func half(_ w0: SIMD4<UInt32>, _ w1: SIMD4<UInt32>, _ w2: SIMD4<UInt32>, _ w3: SIMD4<UInt32>) -> SIMD8<UInt32> {
            @_transparent func m(_ v: SIMD4<UInt32>) -> __m128i { unsafeBitCast(v, to: __m128i.self) }
            let top = _mm_set1_epi16(Int16(bitPattern: 0x8000))
            let front = _mm_packs_epi32(m(w0), m(w1)), back = _mm_packs_epi32(m(w2), m(w3))
            let low = _mm_unpacklo_epi16(front, back), high = _mm_unpackhi_epi16(front, back)
            let first = _mm_xor_si128(_mm_unpacklo_epi16(low, high), top)
            let second = _mm_xor_si128(_mm_unpackhi_epi16(low, high), top)
            return SIMD8(lowHalf: unsafeBitCast(first, to: SIMD4<UInt32>.self),
                         highHalf: unsafeBitCast(second, to: SIMD4<UInt32>.self))
        }
        return SIMD16(lowHalf: half(w0.lowHalf, w1.lowHalf, w2.lowHalf, w3.lowHalf),
                      highHalf: half(w0.highHalf, w1.highHalf, w2.highHalf, w3.highHalf))
        #endif
    }
}
#endif
