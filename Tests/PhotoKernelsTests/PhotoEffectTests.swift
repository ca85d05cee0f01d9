import Foundation
import Testing
@testable import PhotoKernels

/// The largest absolute difference between two colours.
func distance(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double {
    max(abs(a.x - b.x), abs(a.y - b.y), abs(a.z - b.z))
}

@Suite("Photo-effect looks (SPEC §5)")
struct PhotoEffectTests {
    @Test("the fused kernel: SIMD4 equals the scalar reference on widths 1…33, NaN included", arguments: PhotoEffect.allCases)
    func simdMatchesScalar(look: PhotoEffect) throws {
        for (w, h) in testShapes {
            let input = try randomImage(width: w, height: h, seed: 600, nanEvery: 5)
            expectClose(run([look.kernel], on: input, .simd4), run([look.kernel], on: input, .scalar), input: input, "\(look)")
        }
    }

    @Test("the fused matrix equals the chain run step by step, within 1e-5", arguments: PhotoEffect.allCases)
    func fusedMatchesSequential(look: PhotoEffect) throws {
        for (w, h) in [(1, 1), (7, 3), (33, 5), (64, 64)] {
            let input = try randomImage(width: w, height: h, seed: 601, nanEvery: 9)
            let sequential = run(look.sequentialKernels, on: input, .scalar)
            for variant in KernelVariant.allCases {
                expectClose(run([look.kernel], on: input, variant), sequential, input: input, "fused \(look) \(variant)")
                expectClose(run(look.sequentialKernels, on: input, variant), sequential, input: input,
                            "sequential \(look) \(variant)")
            }
        }
    }

    @Test("reference vectors: all eight looks, fused and sequential, both variants")
    func vectors() throws {
        let cases = ReferenceVectors.cases("effect")
        #expect(Set(cases.map { $0.parameters["name"]!.text }) == Set(PhotoEffect.allCases.map(\.rawValue)))
        for c in cases {
            let look = PhotoEffect(rawValue: c.parameters["name"]!.text)!
            let input = try c.inputImage, expected = try c.expectedImage
            for variant in KernelVariant.allCases {
                expectClose(run([look.kernel], on: input, variant), expected, input: input,
                            "fused \(look) \(variant)")
                expectClose(run(look.sequentialKernels, on: input, variant), expected, input: input,
                            "sequential \(look) \(variant)")
            }
        }
    }

    @Test("tonal, mono and noir turn every colour into a grey; the others keep greys grey only without a gain")
    func greys() throws {
        let input = try randomImage(width: 17, height: 3, seed: 607)
        let greys = try FloatImage(width: 11, height: 1, pixels: (0...10).map { Float($0) / 10 }.map { SIMD4($0, $0, $0, 1) })
        for look in PhotoEffect.allCases {
            #expect(look.isMonochrome == [.tonal, .mono, .noir].contains(look))
            for variant in KernelVariant.allCases {
                if look.isMonochrome {
                    for p in run([look.kernel], on: input, variant).pixels {
                        #expect(abs(p.x - p.y) <= 1e-6 && abs(p.y - p.z) <= 1e-6, "\(look) \(variant): \(p) is not grey")
                    }
                }
                let hasGain = look.steps.contains { $0.hasPrefix("gain") }
                let out = run([look.kernel], on: greys, variant).pixels
                let allGrey = out.allSatisfy { abs($0.x - $0.y) <= 1e-6 && abs($0.y - $0.z) <= 1e-6 }
                #expect(allGrey == !hasGain, "\(look) \(variant): greys grey = \(allGrey)")
            }
        }
    }

    @Test("hand-computed pixel: noir and fade on (0.8, 0.4, 0.2)")
    func handComputed() throws {
        // noir: Y = 0.4706; contrast 1.5: (0.4706 − 0.5)·1.5 + 0.5 = 0.4559 on every channel.
        // fade: saturation 0.6: Y + 0.6·(C − Y) = (0.66824, 0.42824, 0.30824);
        //       lift(0.08, 0.9): 0.08 + 0.9·C = (0.681416, 0.465416, 0.357416).
        let input = try FloatImage(width: 1, height: 1, pixels: [SIMD4(0.8, 0.4, 0.2, 0.5)])
        for variant in KernelVariant.allCases {
            expectClose(run([PhotoEffect.noir.kernel], on: input, variant),
                        try FloatImage(width: 1, height: 1, pixels: [SIMD4(0.4559, 0.4559, 0.4559, 0.5)]), "noir \(variant)")
            expectClose(run([PhotoEffect.fade.kernel], on: input, variant),
                        try FloatImage(width: 1, height: 1, pixels: [SIMD4(0.681416, 0.465416, 0.357416, 0.5)]), "fade \(variant)")
        }
    }

    @Test("matrix(intensity:): 0 is the identity, 1 is the look, ½ is half-way", arguments: PhotoEffect.allCases)
    func intensity(look: PhotoEffect) {
        #expect(look.matrix(intensity: 0) == .identity)
        #expect(look.matrix(intensity: 1) == look.matrix)
        let half = look.matrix(intensity: 0.5)
        for c in [SIMD3<Double>(0.8, 0.4, 0.2), SIMD3(0, 0, 0), SIMD3(1, 1, 1), SIMD3(-0.5, 2, 0.3)] {
            let expected = 0.5 * c + 0.5 * look.matrix.applied(to: c)
            let observed = half.applied(to: c)
            #expect(distance(observed, expected) < 1e-12, "\(look) at ½ on \(c): \(observed) vs \(expected)")
        }
        // The blended matrix is not the identity unless the look is.
        #expect(half != .identity)
    }

    @Test("each look's matrix is its chain composed in Double, and the offsets are SPEC's")
    func closedForms() {
        // tonal is exactly saturation 0; noir's offset is (1 − 1.5)/2 = −0.25.
        #expect(PhotoEffect.tonal.matrix == ColorMatrix.saturation(0))
        #expect(PhotoEffect.noir.matrix.offset == SIMD3(repeating: -0.25))
        // fade: lift after saturation → offset 0.08; instant: 0.04.
        #expect(distance(PhotoEffect.fade.matrix.offset, SIMD3(repeating: 0.08)) < 1e-15)
        #expect(distance(PhotoEffect.instant.matrix.offset, SIMD3(repeating: 0.04)) < 1e-15)
        // transfer: gain → +0.03 → contrast 1.05: offset = 1.05·0.03 + (1 − 1.05)/2 = 0.0065.
        #expect(distance(PhotoEffect.transfer.matrix.offset, SIMD3(repeating: 0.0065)) < 1e-15)
        #expect(abs(PhotoEffect.transfer.matrix.rows.0.x - 1.08 * 1.05) < 1e-15)
    }

    @Test("steps and summaries read like SPEC §5's table")
    func descriptions() {
        #expect(PhotoEffect.noir.steps == ["gray", "contrast 1.5"])
        #expect(PhotoEffect.instant.steps == ["saturation 0.75", "gain(1.05, 1.0, 0.9)", "lift(0.04, 0.96)"])
        #expect(PhotoEffect.transfer.steps == ["gain(1.08, 1.02, 0.9)", "brightness 0.03", "contrast 1.05"])
        #expect(PhotoEffect.noir.summary == "gray → contrast 1.5: high-contrast black and white")
        for look in PhotoEffect.allCases {
            #expect(look.sequentialKernels.count == look.steps.count)
            #expect(look.summary.hasPrefix(look.steps.joined(separator: " → ") + ": "))
            #expect(look.kernel.name == look.rawValue)
        }
        #expect(PhotoEffect.allCases.map(\.rawValue) == ["tonal", "mono", "noir", "chrome", "fade", "instant", "process", "transfer"])
    }

    @Test("alpha is bit-exact under every look, fused and sequential")
    func alphaUnchanged() throws {
        var input = try randomImage(width: 17, height: 3, seed: 613, nanEvery: 4)
        input[pixel: 0].w = -0.0
        input[pixel: 1].w = .nan
        for look in PhotoEffect.allCases {
            for kernels in [[look.kernel], look.sequentialKernels] as [[any PixelKernel]] {
                for variant in KernelVariant.allCases {
                    let output = run(kernels, on: input, variant)
                    #expect(zip(output.pixels, input.pixels).allSatisfy { $0.w.bitPattern == $1.w.bitPattern },
                            "\(look) \(variant) changed alpha")
                }
            }
        }
    }

    @Test("a NaN pixel changes no other pixel")
    func nanStaysLocal() throws {
        let clean = try randomImage(width: 13, height: 3, seed: 617)
        var dirty = clean
        dirty[pixel: 7] = SIMD4(.nan, 0.5, 0.5, 1)
        for look in PhotoEffect.allCases {
            for variant in KernelVariant.allCases {
                let x = run([look.kernel], on: clean, variant), y = run([look.kernel], on: dirty, variant)
                for i in x.pixels.indices where i != 7 {
                    #expect(x.pixels[i] == y.pixels[i], "\(look) \(variant): pixel \(i) changed")
                }
            }
        }
    }

    @Test("JSON: a look encodes as its name")
    func codable() throws {
        let data = try JSONEncoder().encode([PhotoEffect.noir, .instant])
        #expect(String(decoding: data, as: UTF8.self) == #"["noir","instant"]"#)
        #expect(try JSONDecoder().decode([PhotoEffect].self, from: data) == [.noir, .instant])
    }
}
