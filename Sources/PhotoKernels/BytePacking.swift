// Float samples to bytes with SSE2's own conversion and saturating packs: the
// conversion rounds half to even (the default MXCSR mode, the same mode the portable
// `+ 2²³` rounding relies on) and the packs clamp to [0, 255] for free, so a block of
// two pixels needs a multiply, a clamp to maxval and four instructions, where the portable
// form clamps twice, adds, masks and narrows. Reached through the toolchain's Clang
// module of Intel intrinsics, like the streaming stores; elsewhere the portable form,
// which gives the same bytes, is used.

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
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
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
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

    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && !canImport(TargetFeatures.AVX2)
    /// A block of eight R G B A pixels of the fused 8-bit schedule in the baseline
    /// build, from its three channels on the samples' scale and its fourth bytes
    /// (`fourth`, the other bytes zero): each sample rounded half to even and clamped to
    /// [0, m], m ≤ 255, as `FusedBlock.encode` does (NaN → 0).
    ///
    /// `min(m, x)` keeps NaN, which the conversion turns into Int32.min like −∞; the
    /// signed pack to 16 bits and a word `max` with 0 then clamp below. Clamping before
    /// rounding gives the same integer (m is an integer, and rounding is monotone). Green is
    /// shifted into the high byte of red's words, and interleaving those words with
    /// blue's puts each pixel in its 32-bit lane: 26 instructions per block where the
    /// clamps, masks, shifts and ORs of the portable packing took 32.
    ///
    /// With `saturating` (m = 255, and every lane NaN or below 2³¹, which
    /// `FusedBlock.packsBySaturation` ensures with room to spare) the packs clamp alone:
    /// the conversion is exact there (anything below −2³¹ converts to Int32.min, as
    /// NaN does), the signed pack to 16 bits and the unsigned pack to bytes saturate to
    /// [0, 255], and Int32.min goes to 0. The fourth bytes, shifted down, pack with
    /// green's, so that the interleave writes them too. That takes the 6 `minps`, 3
    /// `pmaxsw` and the shift off the two ports that also take the block's multiplies
    /// and conversions (the packs and unpacks go to the shuffle ports), and the ORs
    /// and masks of the fourth bytes: 18 instructions. Written with the intrinsics, the
    /// byte interleave stays as written; as constant SIMD shuffles LLVM re-lowered it
    /// into longer sequences.
    @inline(__always)
    static func rgbaBlock(_ r: SIMD8<Float>, _ g: SIMD8<Float>, _ b: SIMD8<Float>, maxval m: SIMD8<Float>,
                          fourth: SIMD8<UInt32>, saturating: Bool) -> SIMD8<UInt32> {
        if saturating {
            assert(m == SIMD8(repeating: 255), "saturation clamps to 255 only")
            @inline(__always) func words(_ x: SIMD8<Float>) -> __m128i {
                _mm_packs_epi32(_mm_cvtps_epi32(x.lowHalf), _mm_cvtps_epi32(x.highHalf))
            }
            @inline(__always) func fourthBytes(_ x: SIMD4<UInt32>) -> __m128i {
                _mm_srli_epi32(unsafeBitCast(x, to: __m128i.self), 24)
            }
            // Bytes R0…R7 B0…B7 and G0…G7 A0…A7; interleaved, (R, G) and (B, A) byte
            // pairs, then pixels.
            let a = _mm_packs_epi32(fourthBytes(fourth.lowHalf), fourthBytes(fourth.highHalf))
            let rb = _mm_packus_epi16(words(r), words(b)), ga = _mm_packus_epi16(words(g), a)
            let rg = _mm_unpacklo_epi8(rb, ga), ba = _mm_unpackhi_epi8(rb, ga)
            return SIMD8(lowHalf: unsafeBitCast(_mm_unpacklo_epi16(rg, ba), to: SIMD4<UInt32>.self),
                         highHalf: unsafeBitCast(_mm_unpackhi_epi16(rg, ba), to: SIMD4<UInt32>.self))
        }
        let zero = _mm_setzero_si128()
        @inline(__always) func words(_ x: SIMD8<Float>) -> __m128i {
            _mm_max_epi16(_mm_packs_epi32(_mm_cvtps_epi32(_mm_min_ps(m.lowHalf, x.lowHalf)),
                                          _mm_cvtps_epi32(_mm_min_ps(m.highHalf, x.highHalf))), zero)
        }
        let rg = _mm_or_si128(words(r), _mm_slli_epi16(words(g), 8)), bw = words(b)
        let low = unsafeBitCast(_mm_unpacklo_epi16(rg, bw), to: SIMD4<UInt32>.self)
        let high = unsafeBitCast(_mm_unpackhi_epi16(rg, bw), to: SIMD4<UInt32>.self)
        return SIMD8(lowHalf: low, highHalf: high) | fourth
    }

    /// A block of eight premultiplied R G B A pixels of the fused 8-bit schedule in the
    /// baseline build, from its straight channels on the samples' scale, their
    /// `alpha` (`A/m`, at most 1) and its fourth bytes (the alpha bytes, the other bytes
    /// zero): each sample `min(m, x)·A/m` rounded half to even and clamped below at 0,
    /// as `FusedBlock.encode` gives it with `alpha` (NaN → 0), m ≤ 255.
    ///
    /// Where `x` is not negative, `min(m, x)` is the clamp's own number, so the product
    /// and its rounding are the same bits. Below 0 the product is at most 0 and rounds
    /// to an integer of at most 0, which the word `max` with 0 takes to 0, as the
    /// clamp's 0 rounds; NaN (kept by `minps`, or from −∞ times 0) converts to
    /// Int32.min, which the signed pack takes to −32768 and the `max` to 0. The words
    /// are then bytes, packed as `rgbaBlock` packs them without saturation: one `minps`,
    /// one multiply and a conversion per half and channel where the portable encoding
    /// clamps twice, multiplies, adds, masks and shifts. (Written with the saturating
    /// packs instead, the optimiser reordered the block's lanes to suit them in the
    /// loops without tone tables: its loads in halves and a shuffle per decoded vector,
    /// 0.8× the portable encoding there.)
    @inline(__always)
    static func premultipliedRGBABlock(_ r: SIMD8<Float>, _ g: SIMD8<Float>, _ b: SIMD8<Float>,
                                       alpha: SIMD8<Float>, maxval m: SIMD8<Float>,
                                       fourth: SIMD8<UInt32>) -> SIMD8<UInt32> {
        let zero = _mm_setzero_si128()
        @inline(__always) func words(_ x: SIMD8<Float>) -> __m128i {
            _mm_max_epi16(_mm_packs_epi32(_mm_cvtps_epi32(_mm_min_ps(m.lowHalf, x.lowHalf) * alpha.lowHalf),
                                          _mm_cvtps_epi32(_mm_min_ps(m.highHalf, x.highHalf) * alpha.highHalf)), zero)
        }
        let rg = _mm_or_si128(words(r), _mm_slli_epi16(words(g), 8)), bw = words(b)
        let low = unsafeBitCast(_mm_unpacklo_epi16(rg, bw), to: SIMD4<UInt32>.self)
        let high = unsafeBitCast(_mm_unpackhi_epi16(rg, bw), to: SIMD4<UInt32>.self)
        return SIMD8(lowHalf: low, highHalf: high) | fourth
    }
    #endif

    /// Whether `rgba8` encodes eight pixels per step: on x86-64, where the intrinsics
    /// are reachable.
    static var encodesEightPixels: Bool {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
        true
        #else
        false
        #endif
    }

    /// The pixels `rgba8` wants encoded before it (0–7, by the caller, one at a time),
    /// so that its accesses start on their boundary. Where the build targets AVX2: with
    /// `streaming`, the pixels before the next 32-byte boundary of a 4-byte-aligned
    /// destination, for `vmovntdq` (the source's 32-byte loads then span two cache
    /// lines every other time where it starts 16 bytes off, which the saved reads of
    /// the destination outweigh); otherwise a source that starts halfway into 32 bytes
    /// takes one (a large array's elements start 48 bytes into a page, so otherwise
    /// every other 32-byte load spans two cache lines). In other builds, with
    /// `streaming`, the pixels before the next 16-byte boundary of a 4-byte-aligned
    /// destination, for `movntdq`.
    @inline(__always)
    static func leadingPixels(source: UnsafeRawPointer, destination: UnsafeMutableRawPointer, streaming: Bool) -> Int {
        #if canImport(TargetFeatures.AVX2)
        let sourceHead = Int(bitPattern: source) & 31 != 0 ? 1 : 0
        guard streaming else { return sourceHead }
        return pixelsBeforeBoundary(destination, boundary: 32, pixelBytes: 4) ?? sourceHead
        #else
        return streaming ? pixelsBeforeBoundary(destination, boundary: 16, pixelBytes: 4) ?? 0 : 0
        #endif
    }

    /// RGBA `Float` pixels from `source` (16-byte aligned) as bytes into `destination`,
    /// eight pixels (32 samples) per step, each sample as `bytes` computes it
    /// (`SampleCoding.encode` for m ≤ 255, to the bit); returns how many pixels it
    /// encoded, a multiple of 8 (0 where `encodesEightPixels` is false). The caller
    /// encodes the rest. Streaming stores are fenced before it returns.
    ///
    /// The encoder is bound by reading its 16 B/px, and with fewer instructions per
    /// byte more of the image is in flight in the core's reorder window. Where the build
    /// targets AVX2: `bytes`'s operations on 256-bit registers, four loads (folded into
    /// the multiplies) and one 32-byte store per 8 pixels, about 23 instructions where
    /// the two-pixel loop took 48. With `streaming` and a 32-byte-aligned destination
    /// (`leadingPixels`) the store is a streaming one (`vmovntdq`), which saves reading
    /// each destination line first: 1.26–1.28× the speed of ordinary stores at 12 MP on
    /// a Zen 4, and the same speed on a Xeon. The packs work within
    /// each 128-bit half, which leaves the pixels in the order 0, 2, 4, 6, 1, 3, 5, 7;
    /// one `vpermd` puts them back.
    ///
    /// In other builds (SSE2), one pixel per register: `min(1, x)·m`, whose `minps`
    /// takes the aligned load as its operand and keeps NaN (the clamp and the multiply
    /// commute with `min(m, x·m)`: rounding is monotone and `1·m` is exact), then the
    /// conversion; two 16-byte stores per 8 pixels, streaming ones with `streaming`
    /// where `destination` is 16-byte aligned. About 46 instructions per 8 pixels,
    /// against 72 for the two-pixel loop.
    ///
    /// Both walk the blocks through `MemoryStreams`: in four interleaved streams where
    /// the processor gains from them (on a Xeon, one stream read front to back kept too
    /// few lines in flight: the streams ran 1.12× natively at 12 MP, 1.57× in the
    /// default build), in order on AMD's cores.
    ///
    /// Not inlined: inlined into the encoder, whose first pixels depend on the
    /// alignment, the native loop's loads took an index shared with the store
    /// (`vmulps (%rdx,%r8,4)`) instead of their own pointer, and it ran 0.91× as fast.
    @inline(never)
    static func rgba8(_ source: UnsafeRawPointer, count: Int, maxval: Float,
                      into destination: UnsafeMutableRawPointer, streaming: Bool) -> Int {
        var i = 0
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        let m = SIMD8<Float>(repeating: maxval)
        let order = unsafeBitCast(SIMD8<Int32>(0, 4, 1, 5, 2, 6, 3, 7), to: __m256i.self)
        // Pixels 8j…8j + 7 as 32 bytes.
        @inline(__always) func block(_ j: Int) -> __m256i {
            let i = j &* 8
            // Pixels i + 2k and i + 2k + 1 as eight Int32s, clamped to maxval (NaN kept,
            // converted to Int32.min, which the packs take to 0).
            @inline(__always) func pair(_ k: Int) -> __m256i {
                let x = source.loadUnaligned(fromByteOffset: (i &+ 2 &* k) &* 16, as: SIMD8<Float>.self)
                return _mm256_cvtps_epi32(_mm256_min_ps(m, x * m))
            }
            let words = _mm256_packus_epi16(_mm256_packs_epi32(pair(0), pair(1)), _mm256_packs_epi32(pair(2), pair(3)))
            return _mm256_permutevar8x32_epi32(words, order)
        }
        if streaming && Int(bitPattern: destination) & 31 == 0 {
            @inline(__always) func streamedBlock(_ j: Int) {
                StreamingStores.store(unsafeBitCast(block(j), to: SIMD32<UInt8>.self), to: destination + j &* 32)
            }
            // 1 KiB ahead: on a Zen 3 1.15–1.17× at one thread and 1.05× at two
            // (2 KiB 0.98×, 4 KiB 0.95×).
            MemoryStreams.forEachBlock(count &>> 3, blockBytes: 128, prefetchingInOrder: source, ahead: 1024,
                                       streamedBlock)
            StreamingStores.fence()
        } else {
            @inline(__always) func storedBlock(_ j: Int) {
                destination.storeBytes(of: block(j), toByteOffset: j &* 32, as: __m256i.self)
            }
            MemoryStreams.forEachBlock(count &>> 3, blockBytes: 128, prefetching: source, storedBlock)
        }
        i = count & ~7
        #elseif arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
        let m = SIMD4<Float>(repeating: maxval), one = SIMD4<Float>(repeating: 1)
        // Pixel k as four Int32s (NaN kept by `minps`, converted to Int32.min, which
        // the packs take to 0), and pixels k…k + 3 as 16 bytes.
        @inline(__always) func pixel(_ k: Int) -> __m128i {
            _mm_cvtps_epi32(_mm_min_ps(one, source.load(fromByteOffset: k &* 16, as: SIMD4<Float>.self)) * m)
        }
        @inline(__always) func four(_ k: Int) -> SIMD16<UInt8> {
            unsafeBitCast(_mm_packus_epi16(_mm_packs_epi32(pixel(k), pixel(k &+ 1)),
                                           _mm_packs_epi32(pixel(k &+ 2), pixel(k &+ 3))), to: SIMD16<UInt8>.self)
        }
        // Streaming stores need a 16-byte-aligned destination, which one that is not
        // 4-byte aligned never reaches (`leadingPixels`).
        if streaming && Int(bitPattern: destination) & 15 == 0 {
            @inline(__always) func block(_ j: Int) {
                let i = j &* 8
                StreamingStores.store(four(i), to: destination + i &* 4)
                StreamingStores.store(four(i &+ 4), to: destination + (i &* 4 &+ 16))
            }
            // 2 KiB ahead: on a Zen 3 1.05–1.07× with prefetches 4 KiB ahead and 1.14×
            // more at 2 KiB (1 KiB 0.97×).
            MemoryStreams.forEachBlock(count &>> 3, blockBytes: 128, prefetchingInOrder: source, ahead: 2048, block)
            StreamingStores.fence()
        } else {
            @inline(__always) func block(_ j: Int) {
                let i = j &* 8
                destination.storeBytes(of: four(i), toByteOffset: i &* 4, as: SIMD16<UInt8>.self)
                destination.storeBytes(of: four(i &+ 4), toByteOffset: i &* 4 &+ 16, as: SIMD16<UInt8>.self)
            }
            MemoryStreams.forEachBlock(count &>> 3, blockBytes: 128, prefetching: source, block)
        }
        i = count & ~7
        #endif
        return i
    }
}
