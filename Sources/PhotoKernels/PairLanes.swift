// The lane work of the fused 16-bit block (`FusedBlock.body16`). Half a block of 16-bit
// pixels fills one block-wide vector as it lies in memory, each pixel in two 32-bit
// lanes: words 0–1 in the first, 2–3 in the next. A mask gives every pixel's words 0
// and 2 (red and blue) and a shift its words 1 and 3 (green and the fourth sample);
// each lane then needs only the pixel's other channels, which shuffles within the
// pixel bring.
//
// Where the build targets AVX2 and has the toolchain's Clang module of Intel
// intrinsics, the shuffles take their patterns from registers and the results are
// rounded by the conversion and clamped by a saturating pack, as in BytePacking.swift;
// elsewhere (and with `PHOTOKERNELS_NO_INTRINSICS`) the portable forms give the same
// bits. The baseline x86-64 build with the intrinsics runs the block in channels
// instead (`ChannelWords`, at the end): its 128-bit shuffles have no register patterns,
// and the pair lanes' shuffles cost more there than taking the pixels apart.

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
import _Builtin_intrinsics.intel
#endif

/// The shuffles, conversions and packing of pixels held in pair lanes, with their
/// constants prepared once per block.
struct PairLanes: Sendable {
    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
    /// The `vpermilps` patterns of `exchanging` and `first`, held as values the
    /// optimiser cannot see: given constant patterns it narrowed the operations before
    /// a shuffle to the lanes the shuffle reads, then rebuilt the others with more
    /// shuffles (about 1.3 times the instructions of the whole loop).
    let exchangePattern, firstPattern: SIMD8<Int32>
    /// The bytes of the packed words in pixel order: red-blue words, then green-fourth
    /// words, interleaved within each 128-bit lane.
    let packOrder: SIMD32<UInt8>
    #endif

    init() {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        exchangePattern = SIMD8(1, 0, 3, 2, 1, 0, 3, 2)
        firstPattern = SIMD8(0, 0, 2, 2, 0, 0, 2, 2)
        let lane: [UInt8] = [0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15]
        var order = SIMD32<UInt8>()
        for i in 0..<32 { order[i] = lane[i % 16] }
        packOrder = order
        #endif
    }

    /// Each pixel's two lanes exchanged: (x₁, x₀, x₃, x₂, …).
    @_transparent
    func exchanging(_ v: BlockFloats) -> BlockFloats {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX512)
        let p = unsafeBitCast(SIMD16(lowHalf: exchangePattern, highHalf: exchangePattern), to: __m512i.self)
        return _mm512_permutevar_ps(v, p)
        #elseif arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        return _mm256_permutevar_ps(v, unsafeBitCast(exchangePattern, to: __m256i.self))
        #elseif canImport(TargetFeatures.AVX512)
        return BlockFloats(v[1], v[0], v[3], v[2], v[5], v[4], v[7], v[6],
                           v[9], v[8], v[11], v[10], v[13], v[12], v[15], v[14])
        #else
        return BlockFloats(v[1], v[0], v[3], v[2], v[5], v[4], v[7], v[6])
        #endif
    }

    /// Each pixel's first lane in both of its lanes: (x₀, x₀, x₂, x₂, …).
    @_transparent
    func first(_ v: BlockFloats) -> BlockFloats {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX512)
        let p = unsafeBitCast(SIMD16(lowHalf: firstPattern, highHalf: firstPattern), to: __m512i.self)
        return _mm512_permutevar_ps(v, p)
        #elseif arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        return _mm256_permutevar_ps(v, unsafeBitCast(firstPattern, to: __m256i.self))
        #elseif canImport(TargetFeatures.AVX512)
        return BlockFloats(v[0], v[0], v[2], v[2], v[4], v[4], v[6], v[6],
                           v[8], v[8], v[10], v[10], v[12], v[12], v[14], v[14])
        #else
        return BlockFloats(v[0], v[0], v[2], v[2], v[4], v[4], v[6], v[6])
        #endif
    }

    /// One value per pixel in both of its lanes: (v₀, v₀, v₁, v₁, …).
    @_transparent
    static func pairing(_ v: HalfBlockFloats) -> BlockFloats {
        #if canImport(TargetFeatures.AVX512)
        BlockFloats(v[0], v[0], v[1], v[1], v[2], v[2], v[3], v[3], v[4], v[4], v[5], v[5], v[6], v[6], v[7], v[7])
        #else
        BlockFloats(v[0], v[0], v[1], v[1], v[2], v[2], v[3], v[3])
        #endif
    }

    /// The lanes, integers below 2²³, as `Float`s, exactly.
    @_transparent
    static func floats(_ v: BlockWords) -> BlockFloats {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX512)
        _mm512_cvtepi32_ps(unsafeBitCast(v, to: __m512i.self))
        #elseif arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        _mm256_cvtepi32_ps(unsafeBitCast(v, to: __m256i.self))
        #else
        // 2²³ + v from the bits (v < 2²³), less 2²³: both steps exact.
        unsafeBitCast(v | BlockWords(repeating: 0x4B00_0000), to: BlockFloats.self) - BlockFloats(repeating: 0x1p23)
        #endif
    }

    /// Each 64-bit pixel rotated right by `k` bits (0…63; 64 acts as 0).
    @_transparent
    static func rotating(_ v: BlockWords, right k: UInt64) -> BlockWords {
        let q = unsafeBitCast(v, to: PixelQuads.self)
        return unsafeBitCast((q &>> k) | (q &<< (64 &- k)), to: BlockWords.self)
    }

    /// `a·b + c`: one fused multiply-add where the build targets FMA, else a product and
    /// a sum.
    @_transparent
    static func multiplyAdd(_ a: BlockFloats, _ b: BlockFloats, _ c: BlockFloats) -> BlockFloats {
        #if canImport(TargetFeatures.FMA)
        c.addingProduct(a, b)
        #else
        a * b + c
        #endif
    }

    /// The 16-bit pixels whose samples, on their scale, are `redBlue` and `greenFourth`
    /// in pair lanes: each clamped to [0, c] (NaN → 0) and rounded half to even, as
    /// `FusedBlock.encode` does, to the bit, where c is `colourCeiling` (maxval) in the
    /// red-blue lanes and `ceiling`'s lane (maxval, or 65535 in the fourth's) in the
    /// green-fourth ones; every ceiling is an integer at most 65535. With `clamps` the
    /// result holds for every value, ±∞ included. Without it (every ceiling 65535) the
    /// pack's saturation alone clamps above where the build targets AVX2, which takes
    /// the two `minps` per half block off (the 16-bit recipe 1.18× as fast), and every
    /// value must then lie below 2³¹ (+∞ and larger values would give 0): the block's
    /// bound, `FusedBlock.isWellConditioned`, keeps it within 2²⁴, given
    /// `PreparedGains.largestGainMagnitude`.
    @_transparent
    func packing(_ redBlue: BlockFloats, _ greenFourth: BlockFloats, colourCeiling: BlockFloats,
                 ceiling: BlockFloats, clamps: Bool) -> BlockWords {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        // `minps(c, x)` is `c < x ? c : x`: it keeps NaN, which the conversion turns into
        // Int32.min like any value below 0 (and −∞), and the unsigned pack takes to 0;
        // +∞ and values past 2³¹, which would convert to Int32.min too, become c.
        // Without `clamps` the pack saturates what lies in (65535, 2³¹).
        // Clamping before rounding gives the same integer (the ceiling is an integer,
        // and rounding is monotone). The pack gives each 128-bit lane's red-blue words,
        // then its green-fourth words; the byte shuffle interleaves them into pixels.
        @_transparent func half(_ x: SIMD8<Float>, _ y: SIMD8<Float>, _ cx: SIMD8<Float>, _ cy: SIMD8<Float>) -> SIMD8<UInt32> {
            let a = _mm256_cvtps_epi32(clamps ? _mm256_min_ps(cx, x) : x)
            let b = _mm256_cvtps_epi32(clamps ? _mm256_min_ps(cy, y) : y)
            let words = _mm256_packus_epi32(a, b)
            return unsafeBitCast(_mm256_shuffle_epi8(words, unsafeBitCast(packOrder, to: __m256i.self)), to: SIMD8<UInt32>.self)
        }
        #if canImport(TargetFeatures.AVX512)
        // No 512-bit word pack without AVX-512BW: two 256-bit halves.
        return BlockWords(lowHalf: half(redBlue.lowHalf, greenFourth.lowHalf, colourCeiling.lowHalf, ceiling.lowHalf),
                          highHalf: half(redBlue.highHalf, greenFourth.highHalf, colourCeiling.highHalf, ceiling.highHalf))
        #else
        return half(redBlue, greenFourth, colourCeiling, ceiling)
        #endif
        #else
        // `2²³ + x` rounds x half to even into the low mantissa bits; clamped after
        // rounding to [2²³, 2²³ + c], which gives the same integer (`FusedBlock.encode`).
        let low = BlockFloats(repeating: 0x1p23)
        @_transparent func encode(_ y: BlockFloats, _ high: BlockFloats) -> BlockWords {
            var c = y + low
            c = low.replacing(with: c, where: c .> low)
            c = c.replacing(with: high, where: c .> high)
            return unsafeBitCast(c, to: BlockWords.self)
        }
        return (encode(redBlue, colourCeiling + low) & BlockWords(repeating: 0xFFFF))
            | (encode(greenFourth, ceiling + low) &<< 16)
        #endif
    }
}

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && !canImport(TargetFeatures.AVX2)
/// The transpose and packing of the fused 16-bit block's channel form, the baseline
/// build's (`FusedBlock.body16` without AVX2): a block of eight pixels, each two 32-bit
/// lanes as it lies in memory (red | green << 16, then blue | fourth << 16, in RGBA's
/// positions), taken apart into its pixels' first and second lanes, and put back.
///
/// The rounding, clamping and packing are SSE2's own instructions, reached through the
/// intrinsics: written as SIMD selects and masks on the encoded bits, LLVM saw through
/// the encoding and rebuilt the clamps as compares and blends and the shifts as
/// multiplies, about three times the pair lanes' cycles a pixel.
enum ChannelWords {
    /// Each pixel's first lanes and second lanes, in pixel order, from a block's two
    /// halves as they lie in memory: one `shufps` per half block each.
    @_transparent
    static func lanes(_ v0: SIMD8<UInt32>, _ v1: SIMD8<UInt32>) -> (first: SIMD8<UInt32>, second: SIMD8<UInt32>) {
        @_transparent func even(_ v: SIMD8<UInt32>) -> SIMD4<UInt32> {
            SIMD4(v.lowHalf[0], v.lowHalf[2], v.highHalf[0], v.highHalf[2])
        }
        @_transparent func odd(_ v: SIMD8<UInt32>) -> SIMD4<UInt32> {
            SIMD4(v.lowHalf[1], v.lowHalf[3], v.highHalf[1], v.highHalf[3])
        }
        return (SIMD8(lowHalf: even(v0), highHalf: even(v1)), SIMD8(lowHalf: odd(v0), highHalf: odd(v1)))
    }

    /// A block's two halves as they lie in memory, from its three channels on the
    /// samples' scale and its pixels' second lanes, whose fourth samples it keeps: each
    /// sample clamped to [0, m] (NaN → 0) and rounded half to even, as
    /// `FusedBlock.encode` does, to the bit (`maxval` holds m ≤ 65535 in every lane).
    ///
    /// `clamped(_:upTo:)` (`maxps(x, 0)`, so NaN and −∞ give 0, then `minps` with m,
    /// which takes +∞ and every value past m to m), and the conversion rounds half to
    /// even (the default MXCSR mode). Clamping before rounding gives the same integer
    /// (m is an integer, and rounding is monotone). Green's words are shifted above red's, blue's
    /// are ORed under the fourth samples, and interleaving the two puts each pixel back
    /// in its two lanes.
    @_transparent
    static func packing(_ r: SIMD8<Float>, _ g: SIMD8<Float>, _ b: SIMD8<Float>, maxval m: SIMD8<Float>,
                        second: SIMD8<UInt32>) -> (SIMD8<UInt32>, SIMD8<UInt32>) {
        let fourth = _mm_set1_epi32(Int32(bitPattern: 0xFFFF_0000))
        @_transparent func words(_ x: SIMD4<Float>, _ m: SIMD4<Float>) -> __m128i { _mm_cvtps_epi32(clamped(x, upTo: m)) }
        @_transparent func pixels(_ r: SIMD4<Float>, _ g: SIMD4<Float>, _ b: SIMD4<Float>, _ m: SIMD4<Float>,
                                  _ second: SIMD4<UInt32>) -> SIMD8<UInt32> {
            let rg = _mm_or_si128(words(r, m), _mm_slli_epi32(words(g, m), 16))
            let ba = _mm_or_si128(words(b, m), _mm_and_si128(unsafeBitCast(second, to: __m128i.self), fourth))
            return interleaving(rg, ba)
        }
        return (pixels(r.lowHalf, g.lowHalf, b.lowHalf, m.lowHalf, second.lowHalf),
                pixels(r.highHalf, g.highHalf, b.highHalf, m.highHalf, second.highHalf))
    }

    /// `packing` at maxval 65535 for channels computed 32768 below the samples' scale
    /// and within ±2³⁰ (`FusedBlock.packsWordsBySaturation`): rounded half to even by
    /// the conversion (32768 is even, so the tie goes the same way), then clamped to
    /// [−32768, 32767] by the signed pack and moved back to [0, 65535] by flipping each
    /// word's top bit. No `maxps` or `minps`: six instructions fewer per block.
    @_transparent
    static func signedPacking(_ r: SIMD8<Float>, _ g: SIMD8<Float>, _ b: SIMD8<Float>,
                              second: SIMD8<UInt32>, fourthBits: SIMD4<UInt32>) -> (SIMD8<UInt32>, SIMD8<UInt32>) {
        let fourth = unsafeBitCast(fourthBits, to: __m128i.self), top = _mm_set1_epi16(Int16(bitPattern: 0x8000))
        @_transparent func words(_ x: SIMD8<Float>) -> __m128i {
            _mm_xor_si128(_mm_packs_epi32(_mm_cvtps_epi32(x.lowHalf), _mm_cvtps_epi32(x.highHalf)), top)
        }
        let (rw, gw, bw) = (words(r), words(g), words(b))
        let zero = _mm_setzero_si128()
        let rg0 = _mm_unpacklo_epi16(rw, gw), rg1 = _mm_unpackhi_epi16(rw, gw)
        let s = unsafeBitCast(second, to: (__m128i, __m128i).self)
        let ba0 = _mm_or_si128(_mm_unpacklo_epi16(bw, zero), _mm_and_si128(s.0, fourth))
        let ba1 = _mm_or_si128(_mm_unpackhi_epi16(bw, zero), _mm_and_si128(s.1, fourth))
        return (interleaving(rg0, ba0), interleaving(rg1, ba1))
    }

    /// Four pixels as they lie in memory from their first lanes (red | green << 16)
    /// and their second lanes (blue | fourth << 16): `punpckldq` and `punpckhdq`.
    @_transparent
    static func interleaving(_ rg: __m128i, _ ba: __m128i) -> SIMD8<UInt32> {
        SIMD8(lowHalf: unsafeBitCast(_mm_unpacklo_epi32(rg, ba), to: SIMD4<UInt32>.self),
              highHalf: unsafeBitCast(_mm_unpackhi_epi32(rg, ba), to: SIMD4<UInt32>.self))
    }
}
#endif
