import Testing
@testable import PhotoKernels

@Suite("Sample coding: integers ↔ Float (SPEC §0)")
struct SamplesTests {
    @Test("decode then encode returns every integer unchanged, for all 256 and all 65536 values")
    func roundTripEveryValue() throws {
        for maxval in [1, 15, 255, 1023, 4095, 65535] {
            let values = (0...maxval).map(UInt16.init)
            let image = try FloatImage(width: values.count, height: 1, layout: .gray, maxval: maxval, samples: values)
            #expect(try image.samples(layout: .gray, maxval: maxval) == values, "maxval \(maxval)")
            for (v, p) in zip(values, image.pixels) {
                if SampleCoding.encode(p.x, maxval: Float(maxval)) != v { Issue.record("maxval \(maxval): \(v) came back changed"); break }
            }
        }
    }

    @Test("encode clamps once, rounds half to even, and never traps on NaN or infinities")
    func encodeEdgeCases() {
        #expect(SampleCoding.encode(.nan, maxval: 255) == 0)
        #expect(SampleCoding.encode(-.infinity, maxval: 255) == 0)
        #expect(SampleCoding.encode(.infinity, maxval: 255) == 255)
        #expect(SampleCoding.encode(-0.3, maxval: 255) == 0)
        #expect(SampleCoding.encode(7.5, maxval: 65535) == 65535)
        // 0.5·255 = 127.5 → 128 (even); 1.5/255·255 rounds to 2 (even); 2.5/255 → 2.
        #expect(SampleCoding.encode(0.5, maxval: 255) == 128)
        #expect(SampleCoding.encode(0.5, maxval: 1) == 0)
        #expect(SampleCoding.encode(0.5, maxval: 3) == 2)    // 1.5 → 2
        #expect(SampleCoding.encode(2.5 / 4, maxval: 4) == 2) // 2.5 → 2
        #expect(SampleCoding.encode(3.5 / 4, maxval: 4) == 4) // 3.5 → 4
    }

    @Test("grey and alpha-less layouts expand as SPEC says; encoding drops what the layout lacks")
    func layouts() throws {
        let gray = try FloatImage(width: 2, height: 1, layout: .gray, maxval: 255, samples: [0, 51] as [UInt16])
        #expect(gray.pixels == [SIMD4(0, 0, 0, 1), SIMD4(0.2, 0.2, 0.2, 1)])
        let grayAlpha = try FloatImage(width: 1, height: 1, layout: .grayAlpha, maxval: 15, samples: [15, 5] as [UInt16])
        #expect(grayAlpha.pixels == [SIMD4(1, 1, 1, Float(5) / 15)])
        let rgb = try FloatImage(width: 1, height: 1, layout: .rgb, maxval: 4, samples: [1, 2, 3] as [UInt16])
        #expect(rgb.pixels == [SIMD4(0.25, 0.5, 0.75, 1)])
        let rgba = try FloatImage(width: 1, height: 1, layout: .rgba, maxval: 65535, samples: [65535, 0, 32768, 1] as [UInt16])
        #expect(try rgba.samples(layout: .rgba, maxval: 65535) == [65535, 0, 32768, 1])
        #expect(try rgba.samples(layout: .rgb, maxval: 255) == [255, 0, 128])
        // Grey from colour is the Rec. 709 luma: pure green 0.7152·255 = 182.376 → 182.
        let green = try FloatImage(width: 1, height: 1, pixels: [SIMD4(0, 1, 0, 0.5)])
        #expect(try green.samples(layout: .grayAlpha, maxval: 255) == [182, 128])
        #expect(gray.isGray && !green.isGray && gray.isOpaque && !green.isOpaque)
    }

    @Test("8-bit samples decode like 16-bit ones")
    func eightBit() throws {
        let bytes: [UInt8] = [0, 128, 255, 64]
        let a = try FloatImage(width: 1, height: 1, layout: .rgba, samples: bytes)
        let b = try FloatImage(width: 1, height: 1, layout: .rgba, maxval: 255, samples: bytes.map(UInt16.init))
        #expect(a == b)
        #expect(a.pixels[0] == SIMD4(0, Float(128) / 255, 1, Float(64) / 255))
    }

    @Test("the blocked RGBA conversions equal the per-sample formulas, every width 1…33, 8 and 16 bits")
    func blockedRGBAMatchesFormula() throws {
        var rng = SeededGenerator(seed: 42)
        let specials: [Float] = [.nan, .infinity, -.infinity, -0.0, 0, 1, 1.5, -2, 0.5, Float(127.5 / 255), .ulpOfOne]
        for width in 1...33 {
            for maxval in [255, 1023, 65535] {
                // Decode: every sample through SampleCoding.decode.
                let samples = (0..<(width * 3 * 4)).map { _ in UInt16.random(in: 0...UInt16(maxval), using: &rng) }
                let image = try FloatImage(width: width, height: 3, layout: .rgba, maxval: maxval, samples: samples)
                let decoded = image.pixels.flatMap { [$0.x, $0.y, $0.z, $0.w] }
                #expect(decoded == samples.map { SampleCoding.decode($0, maxval: Float(maxval)) }, "decode width \(width) maxval \(maxval)")
                if maxval == 255 {
                    let bytes = try FloatImage(width: width, height: 3, layout: .rgba, samples: samples.map { UInt8($0) })
                    #expect(bytes == image, "8-bit decode width \(width)")
                }
                // Encode: every value through SampleCoding.encode, NaN and infinities included.
                let values = (0..<(width * 3 * 4)).map { i in
                    i % 5 == 0 ? specials[i / 5 % specials.count] : Float.random(in: -0.5...1.5, using: &rng)
                }
                let floats = try FloatImage(width: width, height: 3, pixels: stride(from: 0, to: values.count, by: 4).map {
                    SIMD4(values[$0], values[$0 + 1], values[$0 + 2], values[$0 + 3])
                })
                #expect(try floats.samples(layout: .rgba, maxval: maxval) == values.map { SampleCoding.encode($0, maxval: Float(maxval)) },
                        "encode width \(width) maxval \(maxval)")
            }
        }
    }

    @Test("decode(from:) and encode(into:) reuse buffers and equal the allocating forms, any thread count")
    func bufferReusingForms() throws {
        var rng = SeededGenerator(seed: 8)
        for layout in SampleLayout.allCases {
            let (w, h) = (13, 7)
            let bytes = (0..<(w * h * layout.channelCount)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let words = bytes.map { UInt16($0) * 257 }
            for threads in [1, 3] {
                var image = try FloatImage(width: w, height: h)
                try bytes.withUnsafeBufferPointer { try image.decode(from: $0, layout: layout, threads: threads) }
                #expect(try image == FloatImage(width: w, height: h, layout: layout, samples: bytes), "8-bit \(layout)")
                var out = [UInt8](repeating: 0, count: bytes.count)
                try out.withUnsafeMutableBufferPointer { try image.encode(into: $0, layout: layout, threads: threads) }
                #expect(try out == image.samples(layout: layout, maxval: 255).map { UInt8($0) }, "8-bit encode \(layout)")
                try words.withUnsafeBufferPointer { try image.decode(from: $0, layout: layout, maxval: 65535, threads: threads) }
                #expect(try image == FloatImage(width: w, height: h, layout: layout, maxval: 65535, samples: words), "16-bit \(layout)")
                var out16 = [UInt16](repeating: 0, count: words.count)
                try out16.withUnsafeMutableBufferPointer { try image.encode(into: $0, layout: layout, maxval: 65535, threads: threads) }
                #expect(out16 == words, "16-bit round trip \(layout)")
            }
        }
    }

    @Test("the magic-number rounding of encode equals rounded(.toNearestOrEven) at every tie and between", arguments: [1, 255, 1023, 65535])
    func magicRoundingMatchesRounded(maxval: Int) {
        let m = Float(maxval)
        var mismatches = 0
        for k in 0...maxval {
            for fraction: Float in [0, 0.25, 0.5, 0.75] {
                let c = min(1, (Float(k) + fraction) / m)
                let expected = UInt16((c * m).rounded(.toNearestOrEven))
                if SampleCoding.encode(c, maxval: m) != expected { mismatches += 1 }
            }
        }
        #expect(mismatches == 0, "maxval \(maxval): \(mismatches) values round differently")
    }

    @Test("sizes, maxvals and sample counts outside the contract throw RasterError naming them, and change nothing")
    func refusedRasters() throws {
        #expect(throws: RasterError.invalidSize(width: 0, height: 4)) { try FloatImage(width: 0, height: 4) }
        #expect(throws: RasterError.invalidSize(width: 3, height: -1)) { try FloatImage(width: 3, height: -1, pixels: []) }
        #expect(throws: RasterError.invalidSize(width: 1 << 32, height: 1 << 32)) {
            try FloatImage(width: 1 << 32, height: 1 << 32)
        }
        #expect(throws: RasterError.pixelCountMismatch(expected: 6, found: 5)) {
            try FloatImage(width: 3, height: 2, pixels: Array(repeating: .zero, count: 5))
        }
        #expect(throws: RasterError.sampleCountMismatch(expected: 18, found: 17)) {
            try FloatImage(width: 3, height: 2, layout: .rgb, samples: [UInt8](repeating: 0, count: 17))
        }
        #expect(throws: RasterError.invalidMaxval(256, sampleBits: 8)) {
            try FloatImage(width: 1, height: 1, layout: .gray, maxval: 256, samples: [UInt8(0)])
        }
        #expect(throws: RasterError.invalidMaxval(0, sampleBits: 16)) {
            try FloatImage(width: 1, height: 1, layout: .gray, maxval: 0, samples: [UInt16(0)])
        }
        // 2⁶¹ pixels fit in Int, their 16 bytes each do not.
        #expect(throws: RasterError.invalidSize(width: 1 << 31, height: 1 << 30)) {
            try FloatImage(width: 1 << 31, height: 1 << 30)
        }
        let words = [UInt16](repeating: 0, count: 5)
        #expect(throws: RasterError.sampleCountMismatch(expected: 6, found: 5)) {
            try words.withUnsafeBufferPointer { try FloatImage(width: 3, height: 2, layout: .gray, maxval: 65535, samples: $0) }
        }
        // 2⁶² pixels of 4 samples overflow Int: a size error, not a count mismatch.
        #expect(throws: RasterError.invalidSize(width: 1 << 31, height: 1 << 31)) {
            try FloatImage(width: 1 << 31, height: 1 << 31, layout: .rgba, maxval: 65535, samples: [UInt16(0)])
        }

        let image = try FloatImage(width: 2, height: 1, color: SIMD4(0.25, 0.5, 0.75, 1))
        #expect(throws: RasterError.invalidMaxval(65536, sampleBits: 16)) { try image.samples(layout: .rgb, maxval: 65536) }

        var decoded = image
        let short = [UInt8](repeating: 9, count: 7)
        #expect(throws: RasterError.sampleCountMismatch(expected: 8, found: 7)) {
            try short.withUnsafeBufferPointer { try decoded.decode(from: $0, layout: .rgba) }
        }
        let bytes = [UInt8](repeating: 9, count: 8)
        #expect(throws: RasterError.invalidMaxval(300, sampleBits: 8)) {
            try bytes.withUnsafeBufferPointer { try decoded.decode(from: $0, layout: .rgba, maxval: 300) }
        }
        #expect(decoded == image, "a refused decode leaves the image as it was")

        var out = [UInt16](repeating: 7, count: 6)
        #expect(throws: RasterError.sampleCountMismatch(expected: 8, found: 6)) {
            try out.withUnsafeMutableBufferPointer { try image.encode(into: $0, layout: .rgba, maxval: 65535) }
        }
        #expect(throws: RasterError.invalidMaxval(-1, sampleBits: 16)) {
            try out.withUnsafeMutableBufferPointer { try image.encode(into: $0, layout: .rgb, maxval: -1) }
        }
        #expect(out == [UInt16](repeating: 7, count: 6), "a refused encode writes nothing")
        #expect(RasterError.invalidMaxval(300, sampleBits: 8).description == "maxval 300 is invalid for 8-bit samples (1…255)")
        #expect(RasterError.pixelCountMismatch(expected: 6, found: 5).description == "5 pixels given; the size needs 6")
    }

    @Test("the tie-aware verdict by hand: 0.5 at maxval 255 is 127.5, so 128 is exact, 127 a near tie, 126 wrong; extreme arguments do not trap")
    func verdicts() {
        #expect(IntegerTolerance.verdict(128, exact: 0.5, maxval: 255) == .exact)
        #expect(IntegerTolerance.verdict(127, exact: 0.5, maxval: 255) == .nearTie)
        // 126 rounds from [125.5, 126.5], 1 − τ·255 from the window round 127.5.
        let tau = IntegerTolerance.tau
        #expect(IntegerTolerance.verdict(126, exact: 0.5, maxval: 255) == .wrong(beyond: 1 - tau * 255))
        #expect(IntegerTolerance.verdict(125, exact: 0.5, maxval: 255) == .wrong(beyond: 2 - tau * 255))
        // At the exact tie either neighbour is right; one LSB past the upper one, 129 is
        // 1 LSB (less the window) past, as 126 is below.
        #expect(IntegerTolerance.verdict(129, exact: 0.5, maxval: 255) == .wrong(beyond: 1 - tau * 255))
        // 0.25 · 255 = 63.75 lies 0.25 from the tie 63.5: 63 is wrong by 0.25 − τ·255.
        #expect(IntegerTolerance.verdict(63, exact: 0.25, maxval: 255) == .wrong(beyond: 0.25 - IntegerTolerance.tau * 255))
        #expect(IntegerTolerance.verdict(0, exact: .nan, maxval: 65535) == .exact)
        #expect(IntegerTolerance.verdict(65535, exact: 7, maxval: 65535) == .exact)
        if case .wrong(let beyond) = IntegerTolerance.verdict(Int.min, exact: 1, maxval: Int.max) {
            #expect(beyond > 1e18)
        } else {
            Issue.record("Int.min against maxval Int.max must be wrong")
        }
    }

    #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
    @Test("the Float16 verdict by hand: the nearest half, either half within 2⁻²⁰·max(1, |x|) of a rounding boundary, any half in that window where halves are denser; NaN only against NaN")
    func halfVerdicts() {
        let tau = IntegerTolerance.tau
        #expect(HalfTolerance.verdict(0.5, exact: 0.5) == .exact)
        // One step (2⁻¹¹ at 0.5) off, far from a boundary: half a step less the window.
        #expect(HalfTolerance.verdict(Float16(0.5).nextUp, exact: 0.5) == .wrong(beyond: 0.5 - tau / 0x1p-11))
        // 1 + 2⁻¹¹ is the tie between 1 and 1 + 2⁻¹⁰ (even: 1); either is right near it.
        let tie = 1 + 0x1p-11
        #expect(HalfTolerance.verdict(1, exact: tie) == .exact)
        #expect(HalfTolerance.verdict(Float16(1).nextUp, exact: tie) == .nearTie)
        #expect(HalfTolerance.verdict(Float16(1).nextUp, exact: tie - tau / 2) == .nearTie)
        // Two windows past the tie the upper half alone is right.
        #expect(HalfTolerance.verdict(Float16(1).nextUp, exact: tie + 2 * tau) == .exact)
        #expect(HalfTolerance.verdict(1, exact: tie + 2 * tau) != .nearTie && HalfTolerance.verdict(1, exact: tie + 2 * tau) != .exact)
        // Below 2⁻¹⁰ the halves are closer than the window: any of them within it.
        #expect(HalfTolerance.verdict(Float16(1e-6 + 5e-7), exact: 1e-6) == .nearTie)
        #expect(HalfTolerance.verdict(Float16(1e-6 + 2e-6), exact: 1e-6) != .nearTie)
        // Past the largest half: infinity, and never infinity for a value that rounds to
        // 65504 unless its window reaches past 65520.
        #expect(HalfTolerance.verdict(.infinity, exact: 70_000) == .exact)
        #expect(HalfTolerance.verdict(.infinity, exact: 65_519) == .wrong(beyond: .infinity))
        #expect(HalfTolerance.verdict(.infinity, exact: 65_519.99) == .nearTie)
        // At a binade boundary the sample's own rounding interval counts: 2 − 2⁻¹⁰ rounds
        // from below 2 − 2⁻¹¹, which x = 2 − 2⁻¹¹ + 2⁻¹⁵ passes by 2⁻¹⁵ (less the window
        // τ·x), in steps of 2⁻⁹ (x rounds to 2).
        let x = 2 - 0x1p-11 + 0x1p-15
        #expect(HalfTolerance.verdict(Float16(2 - 0x1p-10), exact: x) == .wrong(beyond: (0x1p-15 - tau * x) / 0x1p-9))
        // A finite half where x rounds to infinity: in steps of the largest half's (32).
        #expect(HalfTolerance.verdict(65_504, exact: 65_600) == .wrong(beyond: (96 - tau * 65_600) / 32 - 0.5))
        #expect(HalfTolerance.verdict(65_504, exact: .infinity) == .wrong(beyond: .infinity))
        #expect(HalfTolerance.verdict(.infinity, exact: .infinity) == .exact)
        #expect(HalfTolerance.verdict(.nan, exact: .nan) == .exact)
        #expect(HalfTolerance.verdict(.nan, exact: 1) == .wrong(beyond: .infinity))
        #expect(HalfTolerance.verdict(1, exact: .nan) == .wrong(beyond: .infinity))
    }
    #endif
}
