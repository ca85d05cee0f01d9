import Testing
@testable import PhotoKernels

/// Sepia strengths the tests sweep, including ones that clamp (3, −1).
let sepiaSamples: [Double] = [0.25, 0.5, 1, 3, -1]

@Suite("Sepia (SPEC §5)")
struct SepiaTests {
    @Test("SIMD4 equals the scalar reference on widths 1…33, NaN included")
    func simdMatchesScalar() throws {
        for (n, a) in sepiaSamples.enumerated() {
            let kernel = Sepia(intensity: a)
            for (w, h) in testShapes {
                let input = try randomImage(width: w, height: h, seed: UInt64(400 + n), nanEvery: 5)
                expectClose(run([kernel], on: input, .simd4), run([kernel], on: input, .scalar), input: input, "sepia \(a)")
            }
        }
    }

    @Test("reference vectors: intensity 1, 0.5 and 3 (clamped to 1), both variants")
    func vectors() throws {
        let cases = ReferenceVectors.cases("sepia")
        #expect(cases.count == 3)
        for c in cases {
            let kernel = Sepia(intensity: c.parameters["intensity"]!.number)
            let input = try c.inputImage, expected = try c.expectedImage
            for variant in KernelVariant.allCases {
                expectClose(run([kernel], on: input, variant), expected, input: input,
                            "sepia \(kernel.intensity) \(variant)")
            }
        }
    }

    @Test("the matrix: identity at 0, the W3C matrix at 1, clamped outside [0, 1]")
    func matrix() {
        #expect(ColorMatrix.sepia(intensity: 0) == .identity)
        #expect(ColorMatrix.sepia(intensity: -2) == .identity)
        #expect(ColorMatrix.sepia(intensity: 1) == .sepiaTone)
        #expect(ColorMatrix.sepia(intensity: 3) == .sepiaTone)
        #expect(ColorMatrix.sepiaTone.rows.0 == SIMD3(0.393, 0.769, 0.189))
        #expect(ColorMatrix.sepiaTone.rows.2 == SIMD3(0.272, 0.534, 0.131))
        let half = ColorMatrix.sepia(intensity: 0.5)
        #expect(abs(half.rows.0.x - (0.5 + 0.5 * 0.393)) < 1e-15 && abs(half.rows.1.x - 0.5 * 0.349) < 1e-15)
        #expect(half.offset == .zero)
        #expect(Sepia(intensity: 0).isIdentity && Sepia(intensity: -1).isIdentity && !Sepia().isIdentity)
    }

    @Test("every channel reads the original R, G, B: in place equals an out-of-place evaluation")
    func readsOriginalChannels() throws {
        // A pixel whose channels differ a lot: reading an already-updated channel
        // would move the result by ~0.1 or more.
        var pixels = [SIMD4<Float>(1, 0, 0, 1), SIMD4(0, 1, 0, 1), SIMD4(0, 0, 1, 1), SIMD4(0.9, 0.1, 0.5, 1)]
        pixels += try randomPhoto(width: 20, height: 1, seed: 47).pixels
        let input = try FloatImage(width: pixels.count, height: 1, pixels: pixels)
        for a in [0.3, 1.0] {
            let m = ColorMatrix.sepia(intensity: a)
            let expected = try FloatImage(width: input.width, height: 1, pixels: input.pixels.map { p in
                let c = m.applied(to: SIMD3(Double(p.x), Double(p.y), Double(p.z)))
                return SIMD4(Float(c.x), Float(c.y), Float(c.z), p.w)
            })
            for variant in KernelVariant.allCases {
                expectClose(run([Sepia(intensity: a)], on: input, variant), expected, input: input, "sepia \(a) \(variant)")
            }
        }
    }

    @Test("hand-computed pixel: (0.8, 0.4, 0.2) at full and half intensity")
    func handComputed() throws {
        // R' = 0.393·0.8 + 0.769·0.4 + 0.189·0.2 = 0.3144 + 0.3076 + 0.0378 = 0.6598
        // G' = 0.349·0.8 + 0.686·0.4 + 0.168·0.2 = 0.2792 + 0.2744 + 0.0336 = 0.5872
        // B' = 0.272·0.8 + 0.534·0.4 + 0.131·0.2 = 0.2176 + 0.2136 + 0.0262 = 0.4574
        // a = 0.5: (0.8 + 0.6598)/2 = 0.7299, (0.4 + 0.5872)/2 = 0.4936, (0.2 + 0.4574)/2 = 0.3287
        let input = try FloatImage(width: 1, height: 1, pixels: [SIMD4(0.8, 0.4, 0.2, 0.7)])
        for variant in KernelVariant.allCases {
            expectClose(run([Sepia()], on: input, variant),
                        try FloatImage(width: 1, height: 1, pixels: [SIMD4(0.6598, 0.5872, 0.4574, 0.7)]), "full \(variant)")
            expectClose(run([Sepia(intensity: 0.5)], on: input, variant),
                        try FloatImage(width: 1, height: 1, pixels: [SIMD4(0.7299, 0.4936, 0.3287, 0.7)]), "half \(variant)")
        }
    }

    @Test("sepia tints: a grey is not kept grey, and white brightens past 1")
    func tints() throws {
        let grey = try FloatImage(width: 1, height: 1, pixels: [SIMD4(0.5, 0.5, 0.5, 1)])
        for variant in KernelVariant.allCases {
            let p = run([Sepia()], on: grey, variant).pixels[0]
            #expect(abs(p.x - 0.6755) < 1e-6 && abs(p.y - 0.6015) < 1e-6 && abs(p.z - 0.4685) < 1e-6, "\(variant): \(p)")
            #expect(p.x > p.y && p.y > p.z)
        }
    }

    @Test("intensity 0 is the identity to the bit; alpha is bit-exact; a NaN pixel stays local")
    func identityAlphaNaN() throws {
        var input = try randomImage(width: 23, height: 3, seed: 53, nanEvery: 4)
        input[pixel: 1].w = .nan
        input[pixel: 2] = SIMD4(-0.0, .infinity, 0, -0.0)
        for variant in KernelVariant.allCases {
            expectBitEqual(run([Sepia(intensity: 0)], on: input, variant), input, "sepia 0 \(variant)")
            for a in sepiaSamples {
                let output = run([Sepia(intensity: a)], on: input, variant)
                #expect(zip(output.pixels, input.pixels).allSatisfy { $0.w.bitPattern == $1.w.bitPattern },
                        "sepia \(a) \(variant) changed alpha")
            }
        }
        let clean = try randomImage(width: 11, height: 3, seed: 59)
        var dirty = clean
        dirty[pixel: 12] = SIMD4(0.2, 0.3, .nan, 1)
        for variant in KernelVariant.allCases {
            let x = run([Sepia()], on: clean, variant), y = run([Sepia()], on: dirty, variant)
            for i in x.pixels.indices where i != 12 {
                #expect(x.pixels[i] == y.pixels[i], "sepia \(variant): pixel \(i) changed")
            }
            // B feeds every tone sum, so all three channels of that pixel are NaN.
            #expect(y.pixels[12].x.isNaN && y.pixels[12].y.isNaN && y.pixels[12].z.isNaN)
        }
    }

    @Test("scalar and SIMD4 run the same blended matrix: equal to the bit in Float (within SPEC §8 where the schedule fuses multiply-adds), SPEC §8-exact after 16-bit encoding")
    func scalarEqualsSIMD4() throws {
        // Blending per channel in Float instead put up to 0.13 % of 16-bit samples
        // 1 LSB away from the matrix (intensities 0.2, 0.6, 0.8, 0.9), beyond SPEC §8.
        var rng = SeededGenerator(seed: 61)
        let (w, h) = (64, 16)
        let samples = (0..<(w * h * 4)).map { _ in UInt16.random(in: 0...65535, using: &rng) }
        for a in stride(from: 0.1, through: 0.9, by: 0.1) {
            let kernels = [Sepia(intensity: a)]
            let scalar = try SamplePipeline.run(kernels, width: w, height: h, samples: samples, layout: .rgba,
                                                maxval: 65535, variant: .scalar, threads: 1)
            let simd = try SamplePipeline.run(kernels, width: w, height: h, samples: samples, layout: .rgba,
                                              maxval: 65535, variant: .simd4, threads: 1)
            for (name, out) in [("scalar", scalar), ("simd4", simd)] {
                let report = TieAwareCheck.check(out, samples, width: w, height: h, maxval: 65535) { c, x, y in
                    Effect.sepia(intensity: a).evaluate(c, x: x, y: y, width: w, height: h)
                }
                #expect(report.failures == 0, "sepia \(a) \(name): \(report)")
            }
        }
        let input = try randomImage(width: 33, height: 3, seed: 62)
        for a in [0.25, 0.6, 1] {
            let pairs = zip(run([Sepia(intensity: a)], on: input, .scalar).pixels, run([Sepia(intensity: a)], on: input, .simd4).pixels)
            if ColorMatrixKernel.fusesMultiplyAdd {
                #expect(pairs.allSatisfy { s, v in
                    (0..<3).allSatisfy { abs(s[$0] - v[$0]) <= 1e-5 } && s.w.bitPattern == v.w.bitPattern
                }, "sepia \(a)")
            } else {
                #expect(pairs.allSatisfy(sameBits), "sepia \(a)")
            }
        }
    }
}
