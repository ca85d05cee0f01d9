import Testing
@testable import PhotoKernels

/// Parameter sets the equivalence tests sweep: identity, the presets, the slider
/// extremes and values outside the sliders (negative contrast, hue past 360).
let adjustmentSamples: [Adjustments] = [
    .identity, .vivid, .noir, .dream,
    Adjustments(saturation: 0, contrast: 0.5, brightness: -0.5, hue: -180),
    Adjustments(saturation: 2, contrast: 1.5, brightness: 0.5, hue: 180),
    Adjustments(saturation: 1.2, contrast: -1, brightness: 0.05, hue: 725),
]

@Suite("Adjustments: saturation, contrast, brightness, hue (SPEC §2)")
struct AdjustmentsTests {
    @Test("each adjustment: SIMD4 equals the scalar reference on widths 1…33, NaN included")
    func simdMatchesScalar() throws {
        for (n, a) in adjustmentSamples.enumerated() {
            for (index, kernel) in (a.sequentialKernels + [a.kernel]).enumerated() {
                for (w, h) in testShapes {
                    let input = try randomImage(width: w, height: h, seed: UInt64(n * 10 + index), nanEvery: 5)
                    expectClose(run([kernel], on: input, .simd4), run([kernel], on: input, .scalar),
                                input: input, "\(kernel.name) \(a)")
                }
            }
        }
    }

    @Test("the fused matrix equals the four kernels in sequence, both variants")
    func fusedMatchesSequential() throws {
        for (n, a) in adjustmentSamples.enumerated() {
            for (w, h) in [(1, 1), (7, 3), (33, 5), (64, 64)] {
                let input = try randomImage(width: w, height: h, seed: UInt64(100 + n), nanEvery: 9)
                let sequential = run(a.sequentialKernels, on: input, .scalar)
                for variant in KernelVariant.allCases {
                    expectClose(run([a.kernel], on: input, variant), sequential, input: input, "fused \(variant) \(a)")
                }
            }
        }
    }

    @Test("reference vectors: saturation, contrast, brightness, hue", arguments: ["saturation", "contrast", "brightness", "hue"])
    func singleKernelVectors(name: String) throws {
        let cases = ReferenceVectors.cases(name)
        #expect(cases.count >= 2)
        for c in cases {
            let p = c.parameters[name]!.number
            let kernel: any PixelKernel = switch name {
            case "saturation": Saturation(Float(p))
            case "contrast": Contrast(Float(p))
            case "brightness": Brightness(Float(p))
            default: HueRotation(degrees: p)
            }
            let input = try c.inputImage, expected = try c.expectedImage
            for variant in KernelVariant.allCases {
                expectClose(run([kernel], on: input, variant), expected, input: input,
                            "\(name) \(p) \(variant)")
            }
        }
    }

    @Test("reference vectors: the fused chain and the presets")
    func chainVectors() throws {
        let cases = ReferenceVectors.cases("adjustments")
        #expect(cases.count == 4)
        for c in cases {
            let a: Adjustments
            if case .text(let name)? = c.parameters["preset"] {
                a = Preset(rawValue: name)!.adjustments
            } else {
                a = Adjustments(saturation: c.parameters["saturation"]!.number, contrast: c.parameters["contrast"]!.number,
                                brightness: c.parameters["brightness"]!.number, hue: c.parameters["hue"]!.number)
            }
            let input = try c.inputImage, expected = try c.expectedImage
            for variant in KernelVariant.allCases {
                expectClose(run([a.kernel], on: input, variant), expected, input: input, "fused \(a) \(variant)")
                expectClose(run(a.sequentialKernels, on: input, variant), expected, input: input, "sequential \(a) \(variant)")
            }
        }
    }

    @Test("hand-computed pixel: vivid on (0.8, 0.4, 0.2)")
    func handComputedVivid() throws {
        // Y = 0.2126·0.8 + 0.7152·0.4 + 0.0722·0.2 = 0.4706
        // saturation 1.7: Y + 1.7·(C − Y) = (1.03058, 0.35058, 0.01058)
        // contrast 1.2:   (C − 0.5)·1.2 + 0.5 = (1.136696, 0.320696, −0.087304)
        // brightness .05: (1.186696, 0.370696, −0.037304); hue 0 leaves it.
        let input = try FloatImage(width: 1, height: 1, pixels: [SIMD4(0.8, 0.4, 0.2, 0.6)])
        let expected = try FloatImage(width: 1, height: 1, pixels: [SIMD4(1.186696, 0.370696, -0.037304, 0.6)])
        for variant in KernelVariant.allCases {
            expectClose(run([Adjustments.vivid.kernel], on: input, variant), expected, "vivid \(variant)")
        }
    }

    @Test("alpha is bit-exact under every adjustment, even beside NaN and negative zero")
    func alphaUnchanged() throws {
        var input = try randomImage(width: 17, height: 3, seed: 7, nanEvery: 4)
        input[pixel: 0].w = -0.0
        input[pixel: 1].w = .nan
        input[pixel: 2].w = 3.5
        for a in adjustmentSamples {
            for kernel in a.sequentialKernels + [a.kernel] {
                for variant in KernelVariant.allCases {
                    let output = run([kernel], on: input, variant)
                    let same = zip(output.pixels, input.pixels).allSatisfy { $0.w.bitPattern == $1.w.bitPattern }
                    #expect(same, "\(kernel.name) \(variant) changed alpha")
                }
            }
        }
    }

    @Test("greys stay grey under hue rotation at any angle and under saturation", arguments: [-540.0, -180, -90, -30, 0, 1, 45, 60, 90, 135, 180, 270, 359, 725])
    func greysStayGrey(degrees: Double) throws {
        let greys = try FloatImage(width: 11, height: 1, pixels: (0...10).map { Float($0) / 10 }.map { SIMD4($0, $0, $0, 1) })
        for variant in KernelVariant.allCases {
            for kernel in [HueRotation(degrees: degrees) as any PixelKernel, Saturation(Float(degrees / 90))] {
                let output = run([kernel], on: greys, variant)
                for (p, q) in zip(output.pixels, greys.pixels) {
                    #expect(abs(p.x - q.x) <= 1e-6 && abs(p.y - q.x) <= 1e-6 && abs(p.z - q.x) <= 1e-6,
                            "\(kernel.name) \(degrees) \(variant): grey \(q.x) became \(p)")
                }
            }
        }
    }

    @Test("hue 360·k is exactly the identity matrix", arguments: [-720.0, -360, 0, 360, 1080])
    func fullTurnsAreIdentity(degrees: Double) throws {
        #expect(ColorMatrix.hueRotation(degrees: degrees) == .identity)
        let input = try randomImage(width: 9, height: 3, seed: 3)
        expectBitEqual(run([HueRotation(degrees: degrees)], on: input, .simd4), input, "hue \(degrees)")
    }

    @Test("every row of H(θ) sums to 1")
    func hueRowsSumToOne() {
        for degrees in stride(from: -360.0, through: 360, by: 7.5) {
            let h = ColorMatrix.hueRotation(degrees: degrees)
            for row in [h.rows.0, h.rows.1, h.rows.2] {
                #expect(abs(row.sum() - 1) < 1e-12, "H(\(degrees)) row \(row) sums to \(row.sum())")
            }
        }
    }

    @Test("identity parameters return the input bytes at 8 and 16 bits")
    func identityReturnsInputBytes() throws {
        for maxval in [255, 65535] {
            var rng = SeededGenerator(seed: UInt64(maxval))
            let samples = (0..<(31 * 5 * 4)).map { _ in UInt16.random(in: 0...UInt16(maxval), using: &rng) }
            let image = try FloatImage(width: 31, height: 5, layout: .rgba, maxval: maxval, samples: samples)
            for kernel in Adjustments.identity.sequentialKernels + [Adjustments.identity.kernel] {
                for variant in KernelVariant.allCases {
                    #expect(try run([kernel], on: image, variant).samples(layout: .rgba, maxval: maxval) == samples,
                            "\(kernel.name) \(variant) at maxval \(maxval)")
                }
            }
        }
    }

    @Test("a NaN pixel changes no other pixel")
    func nanStaysLocal() throws {
        let clean = try randomImage(width: 13, height: 3, seed: 11)
        var dirty = clean
        dirty[pixel: 20] = SIMD4(.nan, 0.5, 0.5, 1)
        for a in adjustmentSamples {
            for kernel in a.sequentialKernels + [a.kernel] {
                for variant in KernelVariant.allCases {
                    let x = run([kernel], on: clean, variant), y = run([kernel], on: dirty, variant)
                    for i in x.pixels.indices where i != 20 {
                        #expect(x.pixels[i] == y.pixels[i], "\(kernel.name) \(variant): pixel \(i) changed")
                    }
                }
            }
        }
    }

    @Test("the result does not depend on the thread count")
    func threadCountInvariant() throws {
        let input = try randomImage(width: 37, height: 29, seed: 5)
        let one = run([Adjustments.dream.kernel], on: input, .simd4, threads: 1)
        for threads in [2, 3, 8, 64] {
            expectBitEqual(run([Adjustments.dream.kernel], on: input, .simd4, threads: threads), one, "\(threads) threads")
        }
    }

    @Test("matrix builders match SPEC's closed forms")
    func closedForms() {
        // Saturation 0 makes every row the luma weights; contrast c is c·I with offset (1−c)/2.
        let s0 = ColorMatrix.saturation(0)
        #expect(s0.rows.0 == Luma.weightsDouble && s0.rows.2 == Luma.weightsDouble)
        let c = ColorMatrix.contrast(1.5)
        #expect(c.rows.1 == SIMD3(0, 1.5, 0) && c.offset == SIMD3(repeating: -0.25))
        // Fused: M = H·c·S, t = ((1 − c)/2 + b)·(1, 1, 1) up to rounding (rows of H sum to 1).
        let a = Adjustments.dream.matrix
        let t = (1 - 0.85) / 2 + 0.1
        #expect(abs(a.offset.x - t) < 1e-12 && abs(a.offset.y - t) < 1e-12 && abs(a.offset.z - t) < 1e-12)
    }
}
