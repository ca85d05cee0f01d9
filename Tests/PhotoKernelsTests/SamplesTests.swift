import Testing
@testable import PhotoKernels

@Suite("Sample coding: integers ↔ Float (SPEC §0)")
struct SamplesTests {
    @Test("decode then encode returns every integer unchanged, for all 256 and all 65536 values")
    func roundTripEveryValue() {
        for maxval in [1, 15, 255, 1023, 4095, 65535] {
            let values = (0...maxval).map(UInt16.init)
            let image = FloatImage(width: values.count, height: 1, layout: .gray, maxval: maxval, samples: values)
            #expect(image.samples(layout: .gray, maxval: maxval) == values, "maxval \(maxval)")
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
    func layouts() {
        let gray = FloatImage(width: 2, height: 1, layout: .gray, maxval: 255, samples: [0, 51] as [UInt16])
        #expect(gray.pixels == [SIMD4(0, 0, 0, 1), SIMD4(0.2, 0.2, 0.2, 1)])
        let grayAlpha = FloatImage(width: 1, height: 1, layout: .grayAlpha, maxval: 15, samples: [15, 5] as [UInt16])
        #expect(grayAlpha.pixels == [SIMD4(1, 1, 1, Float(5) / 15)])
        let rgb = FloatImage(width: 1, height: 1, layout: .rgb, maxval: 4, samples: [1, 2, 3] as [UInt16])
        #expect(rgb.pixels == [SIMD4(0.25, 0.5, 0.75, 1)])
        let rgba = FloatImage(width: 1, height: 1, layout: .rgba, maxval: 65535, samples: [65535, 0, 32768, 1] as [UInt16])
        #expect(rgba.samples(layout: .rgba, maxval: 65535) == [65535, 0, 32768, 1])
        #expect(rgba.samples(layout: .rgb, maxval: 255) == [255, 0, 128])
        // Grey from colour is the Rec. 709 luma: pure green 0.7152·255 = 182.376 → 182.
        let green = FloatImage(width: 1, height: 1, pixels: [SIMD4(0, 1, 0, 0.5)])
        #expect(green.samples(layout: .grayAlpha, maxval: 255) == [182, 128])
        #expect(gray.isGray && !green.isGray && gray.isOpaque && !green.isOpaque)
    }

    @Test("8-bit samples decode like 16-bit ones")
    func eightBit() {
        let bytes: [UInt8] = [0, 128, 255, 64]
        let a = FloatImage(width: 1, height: 1, layout: .rgba, samples: bytes)
        let b = FloatImage(width: 1, height: 1, layout: .rgba, maxval: 255, samples: bytes.map(UInt16.init))
        #expect(a == b)
        #expect(a.pixels[0] == SIMD4(0, Float(128) / 255, 1, Float(64) / 255))
    }

    @Test("the blocked RGBA conversions equal the per-sample formulas, every width 1…33, 8 and 16 bits")
    func blockedRGBAMatchesFormula() {
        var rng = SeededGenerator(seed: 42)
        let specials: [Float] = [.nan, .infinity, -.infinity, -0.0, 0, 1, 1.5, -2, 0.5, Float(127.5 / 255), .ulpOfOne]
        for width in 1...33 {
            for maxval in [255, 1023, 65535] {
                // Decode: every sample through SampleCoding.decode.
                let samples = (0..<(width * 3 * 4)).map { _ in UInt16.random(in: 0...UInt16(maxval), using: &rng) }
                let image = FloatImage(width: width, height: 3, layout: .rgba, maxval: maxval, samples: samples)
                let decoded = image.pixels.flatMap { [$0.x, $0.y, $0.z, $0.w] }
                #expect(decoded == samples.map { SampleCoding.decode($0, maxval: Float(maxval)) }, "decode width \(width) maxval \(maxval)")
                if maxval == 255 {
                    let bytes = FloatImage(width: width, height: 3, layout: .rgba, samples: samples.map { UInt8($0) })
                    #expect(bytes == image, "8-bit decode width \(width)")
                }
                // Encode: every value through SampleCoding.encode, NaN and infinities included.
                let values = (0..<(width * 3 * 4)).map { i in
                    i % 5 == 0 ? specials[i / 5 % specials.count] : Float.random(in: -0.5...1.5, using: &rng)
                }
                let floats = FloatImage(width: width, height: 3, pixels: stride(from: 0, to: values.count, by: 4).map {
                    SIMD4(values[$0], values[$0 + 1], values[$0 + 2], values[$0 + 3])
                })
                #expect(floats.samples(layout: .rgba, maxval: maxval) == values.map { SampleCoding.encode($0, maxval: Float(maxval)) },
                        "encode width \(width) maxval \(maxval)")
            }
        }
    }

    @Test("decode(from:) and encode(into:) reuse buffers and equal the allocating forms, any thread count")
    func bufferReusingForms() {
        var rng = SeededGenerator(seed: 8)
        for layout in SampleLayout.allCases {
            let (w, h) = (13, 7)
            let bytes = (0..<(w * h * layout.channelCount)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let words = bytes.map { UInt16($0) * 257 }
            for threads in [1, 3] {
                var image = FloatImage(width: w, height: h)
                bytes.withUnsafeBufferPointer { image.decode(from: $0, layout: layout, threads: threads) }
                #expect(image == FloatImage(width: w, height: h, layout: layout, samples: bytes), "8-bit \(layout)")
                var out = [UInt8](repeating: 0, count: bytes.count)
                out.withUnsafeMutableBufferPointer { image.encode(into: $0, layout: layout, threads: threads) }
                #expect(out == image.samples(layout: layout, maxval: 255).map { UInt8($0) }, "8-bit encode \(layout)")
                words.withUnsafeBufferPointer { image.decode(from: $0, layout: layout, maxval: 65535, threads: threads) }
                #expect(image == FloatImage(width: w, height: h, layout: layout, maxval: 65535, samples: words), "16-bit \(layout)")
                var out16 = [UInt16](repeating: 0, count: words.count)
                out16.withUnsafeMutableBufferPointer { image.encode(into: $0, layout: layout, maxval: 65535, threads: threads) }
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
}
