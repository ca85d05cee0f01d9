import Foundation
import Testing
@testable import PhotoKernels

/// Vignettes the equivalence tests sweep: both forms, negative and large intensity,
/// radius 0 and falloff 0 (hard edges), falloff > 1 (negative inner radius), an
/// off-centre ring partly outside the image.
let vignetteSamples: [Vignette] = [
    .vignette(intensity: 1, radius: 1),
    .vignette(intensity: 0.5, radius: 2),
    .vignette(intensity: -0.5, radius: 1),
    .vignette(intensity: 2, radius: 0.4),
    .vignette(intensity: 0.8, radius: 0),
    .vignetteEffect(),
    .vignetteEffect(center: SIMD2(2, 1.5), radius: 3, intensity: 1, falloff: 0.5),
    .vignetteEffect(radius: 4, intensity: 0.7, falloff: 0),
    .vignetteEffect(center: SIMD2(-3, 40), radius: 10, intensity: -1, falloff: 1.5),
]

/// The image transposed: pixel (x, y) of the result is pixel (y, x) of `image`.
func transposed(_ image: FloatImage) throws -> FloatImage {
    try FloatImage(width: image.height, height: image.width, pixels: (0..<image.pixelCount).map { i in
        let x = i % image.height, y = i / image.height
        return image[y, x]
    })
}

/// A `width × height` image of opaque white (1, 1, 1, 1): the vignette's gains.
func whiteImage(width: Int, height: Int) throws -> FloatImage {
    try FloatImage(width: width, height: height, color: SIMD4(1, 1, 1, 1))
}

@Suite("Vignette: CIVignette and CIVignetteEffect forms (SPEC §4)")
struct VignetteTests {
    @Test("SIMD4 equals the scalar reference to the bit on widths 1…33, NaN included")
    func simdMatchesScalar() throws {
        for (n, vignette) in vignetteSamples.enumerated() {
            for (w, h) in testShapes {
                let input = try randomImage(width: w, height: h, seed: UInt64(300 + n), nanEvery: 6)
                expectBitEqual(run([vignette], on: input, .simd4), run([vignette], on: input, .scalar),
                               "\(vignette.form) \(w)×\(h)")
            }
        }
    }

    @Test("16-bit samples through both schedules are SPEC §8-exact against the Double gain")
    func sixteenBitExact() throws {
        // A reference that divided by r1 − r0 while the SIMD4 schedule multiplied by the
        // reciprocal put gains an ulp apart: up to 0.097 % of 16-bit samples 1 LSB off
        // (vignette(1.5, 1.5) on 1024×768), at the edge of SPEC §8.
        var rng = SeededGenerator(seed: 97)
        let (w, h) = (64, 48)
        let samples = (0..<(w * h * 4)).map { _ in UInt16.random(in: 0...65535, using: &rng) }
        let vignettes = [Vignette.vignette(intensity: 1.5, radius: 1.5), Vignette.vignette(intensity: 1, radius: 0.75),
                         Vignette.vignette(intensity: 2, radius: 1.3),
                         Vignette.vignetteEffect(intensity: 1, falloff: 0.9)]
        for vignette in vignettes {
            let scalar = try SamplePipeline.run([vignette], width: w, height: h, samples: samples, layout: .rgba,
                                                maxval: 65535, variant: .scalar, threads: 1)
            let simd = try SamplePipeline.run([vignette], width: w, height: h, samples: samples, layout: .rgba,
                                              maxval: 65535, variant: .simd4, threads: 2)
            for (name, out) in [("scalar", scalar), ("simd4", simd)] {
                let report = TieAwareCheck.check(out, samples, width: w, height: h, maxval: 65535) {
                    vignette.evaluate($0, x: $1, y: $2, width: w, height: h)
                }
                #expect(report.failures == 0, "\(vignette.form) \(name): \(report)")
            }
            #expect(sampleDifferences(simd, scalar).largest <= 1)
        }
    }

    @Test("both variants match the double-precision gain at every pixel of 64×64 and 64×9")
    func matchesDoubleGeometry() throws {
        for vignette in vignetteSamples {
            for (w, h) in [(64, 64), (64, 9), (9, 64)] {
                let geometry = vignette.geometry(width: w, height: h)
                let expected = try FloatImage(width: w, height: h, pixels: (0..<(w * h)).map { i in
                    let g = Float(geometry.gain(x: i % w, y: i / w))
                    return SIMD4(g, g, g, 1)
                })
                for variant in KernelVariant.allCases {
                    expectClose(run([vignette], on: try whiteImage(width: w, height: h), variant), expected,
                                "\(vignette.form) \(w)×\(h) \(variant)")
                }
            }
        }
    }

    @Test("reference vectors: the 7×5 gain rows of both forms, both variants")
    func vectors() throws {
        let cases = ReferenceVectors.cases("vignette") + ReferenceVectors.cases("vignetteEffect")
        #expect(cases.count == 4)
        for c in cases {
            let p = c.parameters
            let vignette: Vignette = c.kernel == "vignette"
                ? .vignette(intensity: p["intensity"]!.number, radius: p["radius"]!.number)
                : .vignetteEffect(center: SIMD2(p["center"]!.list[0], p["center"]!.list[1]), radius: p["radius"]!.number,
                                  intensity: p["intensity"]!.number, falloff: p["falloff"]!.number)
            let (w, h) = (c.width!, c.height!)
            let rows = c.expected_gain_rows!
            #expect(rows.count == h && rows.allSatisfy { $0.count == w })
            // The input is all (1, 1, 1, 1): R, G, B become the gain, alpha stays 1.
            let expected = try FloatImage(width: w, height: h, pixels: rows.flatMap { $0 }.map { g in
                SIMD4(Float(g), Float(g), Float(g), 1)
            })
            for variant in KernelVariant.allCases {
                let output = run([vignette], on: try whiteImage(width: w, height: h), variant)
                expectClose(output, expected, "\(c.kernel) \(p) \(variant)")
                #expect(output.pixels.allSatisfy { $0.w == 1 }, "\(c.kernel) \(variant): alpha changed")
            }
        }
    }

    @Test("hand-computed pixel: corner (0, 0) of 7×5 under vignette(1, 1)")
    func handComputed() throws {
        // c = (3.5, 2.5); p = (0.5, 0.5); d = √(3² + 2²) = √13 = 3.605551
        // D = √(3.5² + 2.5²) = √18.5 = 4.301163; r0 = 0, r1 = D
        // u = 3.605551 / 4.301163 = 0.838273; t = u²(3 − 2u) = 0.702702 · 1.323454 = 0.929994
        // g = 1 − 1 · 0.929994 = 0.070006
        let input = try FloatImage(width: 7, height: 5, color: SIMD4(0.5, 1, 2, 0.25))
        for variant in KernelVariant.allCases {
            let p = run([Vignette.vignette(intensity: 1, radius: 1)], on: input, variant)[0, 0]
            #expect(abs(p.x - 0.5 * 0.070006) < 1e-6 && abs(p.y - 0.070006) < 1e-6 && abs(p.z - 2 * 0.070006) < 1e-6,
                    "\(variant): \(p)")
            #expect(p.w == 0.25)
        }
    }

    @Test("transpose symmetry: vignetting a transposed image is transposing the vignetted image, to the bit")
    func transposeSymmetry() throws {
        for (w, h) in [(7, 5), (12, 9), (33, 4), (1, 9), (16, 16), (64, 3)] {
            let input = try randomImage(width: w, height: h, seed: 31, nanEvery: 11)
            let forms: [(Vignette, Vignette)] = [
                (.vignette(intensity: 1, radius: 1), .vignette(intensity: 1, radius: 1)),
                (.vignette(intensity: -0.5, radius: 0.6), .vignette(intensity: -0.5, radius: 0.6)),
                (.vignetteEffect(), .vignetteEffect()),
                (.vignetteEffect(intensity: 0.9, falloff: 0), .vignetteEffect(intensity: 0.9, falloff: 0)),
                (.vignetteEffect(center: SIMD2(2, 1.5), radius: 3, intensity: 1, falloff: 0.5),
                 .vignetteEffect(center: SIMD2(1.5, 2), radius: 3, intensity: 1, falloff: 0.5)),
            ]
            for (a, b) in forms {
                for variant in KernelVariant.allCases {
                    let turned = try transposed(input)
                    expectBitEqual(try transposed(run([a], on: input, variant)), run([b], on: turned, variant),
                                   "\(a.form) \(w)×\(h) \(variant)")
                }
            }
        }
    }

    @Test("mirror symmetry about a centred vignette, and the centre pixel of an odd image unchanged")
    func mirrorSymmetry() throws {
        for (w, h) in [(7, 5), (8, 6), (33, 5), (1, 1), (63, 17)] {
            for vignette in [Vignette.vignette(intensity: 1, radius: 1), .vignette(intensity: 0.6, radius: 0.3),
                             .vignetteEffect(), .vignetteEffect(radius: 2, intensity: -1, falloff: 0)] {
                for variant in KernelVariant.allCases {
                    let g = run([vignette], on: try whiteImage(width: w, height: h), variant)
                    for y in 0..<h {
                        for x in 0..<w {
                            #expect(g[x, y].x.bitPattern == g[w - 1 - x, y].x.bitPattern, "left/right \(x),\(y)")
                            #expect(g[x, y].x.bitPattern == g[x, h - 1 - y].x.bitPattern, "top/bottom \(x),\(y)")
                        }
                    }
                    if w % 2 == 1 && h % 2 == 1 {
                        // d = 0 at the centre: t = smoothstep(r0, r1, 0) = 0 since r1 > 0.
                        #expect(g[w / 2, h / 2] == SIMD4(1, 1, 1, 1), "\(vignette.form) centre of \(w)×\(h) \(variant)")
                    }
                    // And the gain really varies: the corner is not the centre's value.
                    if w > 2 && h > 2 {
                        #expect(g[0, 0].x != g[w / 2, h / 2].x, "\(vignette.form) \(w)×\(h) \(variant) is flat")
                    }
                }
            }
        }
    }

    @Test("the gain is 1 inside r0, 1 − i beyond r1, and a smoothstep between")
    func profile() throws {
        // Effect form, centre (0.5, 0.5) = pixel (0, 0); along row 0, d = x exactly.
        let vignette = Vignette.vignetteEffect(center: SIMD2(0.5, 0.5), radius: 10, intensity: 0.8, falloff: 0.5)
        for variant in KernelVariant.allCases {
            let g = run([vignette], on: try whiteImage(width: 25, height: 1), variant).pixels.map(\.x)
            for x in 0...5 { #expect(g[x] == 1, "inside r0 = 5: x = \(x) \(variant)") }
            for x in 15..<25 { #expect(abs(g[x] - 0.2) < 1e-7, "beyond r1 = 15: x = \(x) \(variant)") }
            // Half-way, d = 10: u = 0.5, t = 0.5, g = 1 − 0.8·0.5 = 0.6.
            #expect(abs(g[10] - 0.6) < 1e-6, "mid band \(variant): \(g[10])")
            #expect(zip(g, g.dropFirst()).allSatisfy { $0 >= $1 }, "not decreasing \(variant)")
        }
        // falloff 0: a hard edge at d = R, where d ≥ r0 is already outside.
        let hard = Vignette.vignetteEffect(center: SIMD2(0.5, 0.5), radius: 4, intensity: 1, falloff: 0)
        for variant in KernelVariant.allCases {
            let g = run([hard], on: try whiteImage(width: 8, height: 1), variant).pixels.map(\.x)
            #expect(g == [1, 1, 1, 1, 0, 0, 0, 0], "hard edge \(variant): \(g)")
        }
    }

    @Test("intensity 0 is the identity to the bit; alpha is bit-exact")
    func identityAndAlpha() throws {
        var input = try randomImage(width: 21, height: 7, seed: 37, nanEvery: 5)
        input[pixel: 3].w = .nan
        input[pixel: 4].w = -0.0
        for variant in KernelVariant.allCases {
            for zero in [Vignette.vignette(intensity: 0, radius: 1), .vignetteEffect(intensity: 0)] {
                #expect(zero.isIdentity)
                expectBitEqual(run([zero], on: input, variant), input, "\(zero.form) \(variant)")
            }
            for vignette in vignetteSamples {
                let output = run([vignette], on: input, variant)
                #expect(zip(output.pixels, input.pixels).allSatisfy { $0.w.bitPattern == $1.w.bitPattern },
                        "\(vignette.form) \(variant) changed alpha")
            }
        }
    }

    @Test("a NaN pixel changes no other pixel")
    func nanStaysLocal() throws {
        let clean = try randomImage(width: 13, height: 5, seed: 41)
        var dirty = clean
        dirty[pixel: 22] = SIMD4(.nan, 0.5, 0.5, 1)
        for vignette in vignetteSamples {
            for variant in KernelVariant.allCases {
                let x = run([vignette], on: clean, variant), y = run([vignette], on: dirty, variant)
                for i in x.pixels.indices where i != 22 {
                    #expect(x.pixels[i] == y.pixels[i], "\(vignette.form) \(variant): pixel \(i) changed")
                }
            }
        }
    }

    @Test("rows are independent: one row alone equals that row of the whole image, any thread count")
    func rowsIndependent() throws {
        let input = try randomImage(width: 19, height: 11, seed: 43)
        let vignette = Vignette.vignette(intensity: 0.9, radius: 0.8)
        for variant in KernelVariant.allCases {
            let whole = run([vignette], on: input, variant)
            for y in [0, 5, 10] {
                var row = Array(input.pixels[(y * 19)..<(y * 19 + 19)])
                row.withUnsafeMutableBufferPointer {
                    vignette.apply($0, at: RowLocation(y: y, imageWidth: 19, imageHeight: 11), variant: variant)
                }
                #expect(row == Array(whole.pixels[(y * 19)..<(y * 19 + 19)]), "row \(y) \(variant)")
            }
            for threads in [2, 3, 11] {
                expectBitEqual(run([vignette], on: input, variant, threads: threads), whole, "\(threads) threads")
            }
        }
    }

    @Test("geometry: both forms resolve as SPEC §4 says")
    func geometry() {
        let a = Vignette.vignette(intensity: 0.5, radius: 2).geometry(width: 8, height: 6)
        #expect(a.center == SIMD2(4, 3) && a.innerRadius == 0 && a.outerRadius == 10 && a.intensity == 0.5)
        let b = Vignette.vignetteEffect().geometry(width: 8, height: 6)
        #expect(b.center == SIMD2(4, 3) && b.innerRadius == 1.5 && b.outerRadius == 4.5 && b.intensity == 1)
        let c = Vignette.vignetteEffect(center: SIMD2(1, 2), radius: 10, intensity: 0.3, falloff: 0.2).geometry(width: 8, height: 6)
        #expect(c.center == SIMD2(1, 2) && c.innerRadius == 8 && c.outerRadius == 12 && c.intensity == 0.3)
        // The exact square thresholds decide like the square root does.
        for r: Float in [0.5, 1, 2.5, 3.3, 4.301163, 7, 1000.1] {
            let s = Vignette.Resolved.squaredThreshold(r)
            #expect(s.squareRoot() >= r && s.nextDown.squareRoot() < r, "threshold of \(r): \(s)")
        }
        #expect(Vignette.Resolved.squaredThreshold(0) == 0 && Vignette.Resolved.squaredThreshold(-2) == 0)
    }

    @Test("JSON: both forms round-trip; the form may be inferred; bad input is rejected")
    func codable() throws {
        for vignette in vignetteSamples + [.vignetteEffect(center: SIMD2(3, 4)), .vignetteEffect(radius: 12)] {
            let data = try JSONEncoder().encode(vignette)
            #expect(try JSONDecoder().decode(Vignette.self, from: data) == vignette, "\(String(decoding: data, as: UTF8.self))")
        }
        func decode(_ json: String) throws -> Vignette { try JSONDecoder().decode(Vignette.self, from: Data(json.utf8)) }
        #expect(try decode(#"{"intensity":1,"radius":1}"#) == .vignette(intensity: 1, radius: 1))
        #expect(try decode(#"{"center":[2,1.5],"radius":3,"intensity":1,"falloff":0.5}"#)
                == .vignetteEffect(center: SIMD2(2, 1.5), radius: 3, intensity: 1, falloff: 0.5))
        #expect(try decode(#"{"form":"effect"}"#) == .vignetteEffect())
        #expect(try decode(#"{"form":"vignette"}"#) == .vignette(intensity: 0, radius: 1))
        let encoded = String(decoding: try JSONEncoder().encode(Vignette.vignetteEffect()), as: UTF8.self)
        #expect(!encoded.contains("center") && !encoded.contains("radius") && encoded.contains(#""form":"effect""#))
        for bad in [#"{"form":"oval","intensity":1}"#, #"{"center":[1],"radius":3}"#,
                    #"{"form":"vignette","falloff":0.5}"#, #"{"intensity":"strong"}"#] {
            #expect(throws: DecodingError.self, "\(bad)") { try decode(bad) }
        }
        let lenient = JSONDecoder()
        lenient.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        #expect(throws: DecodingError.self) { try lenient.decode(Vignette.self, from: Data(#"{"intensity":"nan","radius":1}"#.utf8)) }
    }

    @Test("parameters lists every number by its JSON name")
    func parameters() {
        #expect(Vignette.vignette(intensity: 1, radius: 2).parameters.map(\.name) == ["intensity", "radius"])
        let effect = Vignette.vignetteEffect(center: SIMD2(1, 2), radius: 3, intensity: 4, falloff: 5)
        #expect(effect.parameters.map(\.name) == ["center[0]", "center[1]", "radius", "intensity", "falloff"])
        #expect(effect.parameters.map(\.value) == [1, 2, 3, 4, 5])
        #expect(Vignette.vignetteEffect().parameters.map(\.name) == ["intensity", "falloff"])
        #expect(Vignette.vignette(intensity: 1, radius: 1).name == "vignette" && effect.name == "vignetteEffect")
    }

    @Test("the relative effect form scales with the image: the same look on a preview and the full image; JSON round trip")
    func relativeForm() throws {
        let v = Vignette.relativeVignetteEffect(center: SIMD2(0.3, 0.6), radius: 0.8, intensity: 0.9, falloff: 0.4)
        let full = v.geometry(width: 4000, height: 3000), preview = v.geometry(width: 1000, height: 750)
        #expect(full.center == SIMD2(1200, 1800) && full.outerRadius == 0.8 * 1500 * 1.4)
        #expect(preview.center * 4 == full.center && preview.innerRadius * 4 == full.innerRadius
                && preview.outerRadius * 4 == full.outerRadius)
        // Defaults are the image centre and min(W, H)/2: the pixel form's defaults.
        #expect(Vignette.relativeVignetteEffect().geometry(width: 640, height: 480)
                == Vignette.vignetteEffect().geometry(width: 640, height: 480))
        let data = try JSONEncoder().encode(v)
        #expect(String(decoding: data, as: UTF8.self).contains("\"relativeEffect\""))
        #expect(try JSONDecoder().decode(Vignette.self, from: data) == v)
    }

    @Test("non-finite and degenerate geometry: no trap; a plan's variants agree, and so do the Float kernel's (NaN with NaN); a subnormal band keeps the centre pixel, as the Double formula does")
    func degenerateGeometry() throws {
        let vignettes: [Vignette] = [
            .vignetteEffect(radius: .nan), .vignetteEffect(radius: -.infinity, falloff: 0), .vignetteEffect(radius: .infinity, falloff: 1),
            .vignetteEffect(radius: 10, falloff: .nan), .vignette(intensity: 1, radius: .nan), .vignette(intensity: 1, radius: 1e-323),
            .vignetteEffect(center: SIMD2(.nan, 2), radius: 3), .vignetteEffect(radius: 0x1p-1074, falloff: 2),
            // r0 = +∞ beside r1 = NaN; a hard edge round a NaN centre, and a NaN row.
            .vignetteEffect(radius: .infinity, falloff: -1), .relativeVignetteEffect(radius: .infinity, falloff: -1),
            .vignetteEffect(center: SIMD2(.nan, 2), radius: 3, falloff: 0),
            .vignetteEffect(center: SIMD2(2, .nan), radius: 3, intensity: 0.5, falloff: 0),
        ]
        let (w, h) = (5, 5)
        let input = (0..<(4 * w * h)).map { UInt8(truncatingIfNeeded: 37 &* $0 &+ 11) }
        for v in vignettes {
            let plan = try EditPlan(kernels: [v]).prepared(width: w, height: h, threads: 1)
            var outputs: [[UInt16]] = []
            for variant in KernelVariant.allCases {
                var out = [UInt16](repeating: 7, count: input.count)
                try input.withUnsafeBufferPointer { i in
                    try out.withUnsafeMutableBufferPointer { o in
                        try plan.run(input: i, inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba,
                                     outputMaxval: 65535, variant: variant)
                    }
                }
                outputs.append(out)
            }
            #expect(outputs[0] == outputs[1], "\(v.form)")
            let gains = v.preparedGains(imageWidth: w, imageHeight: h)
            for y in 0..<h {
                var scalar = [Float](repeating: 0, count: w), simd = scalar
                gains.rowGains(y: y, x0: 0, count: w, variant: .scalar, into: &scalar)
                gains.rowGains(y: y, x0: 0, count: w, variant: .simd4, into: &simd)
                #expect(zip(scalar, simd).allSatisfy { $0.isNaN ? $1.isNaN : $0.bitPattern == $1.bitPattern }, "\(v.form) row \(y)")
            }
            // The `Float` kernel too: its gains and `apply` on a row, variant against
            // variant (a NaN radius gives NaN gains in both).
            let floatGains = Vignette.FloatGains(v, imageWidth: w, imageHeight: h)
            for y in 0..<h {
                var scalar = [Float](repeating: 0, count: w), simd = scalar
                floatGains.rowGains(y: y, x0: 0, count: w, variant: .scalar, into: &scalar)
                floatGains.rowGains(y: y, x0: 0, count: w, variant: .simd4, into: &simd)
                #expect(zip(scalar, simd).allSatisfy { $0.isNaN ? $1.isNaN : $0.bitPattern == $1.bitPattern },
                        "\(v.form) Float gains row \(y): \(scalar) against \(simd)")
                var rows = KernelVariant.allCases.map { _ in [SIMD4<Float>](repeating: SIMD4(0.25, 0.5, 0.75, 1), count: w) }
                for (k, variant) in KernelVariant.allCases.enumerated() {
                    rows[k].withUnsafeMutableBufferPointer {
                        v.apply($0, at: RowLocation(y: y, x0: 0, imageWidth: w, imageHeight: h), variant: variant)
                    }
                }
                #expect(zip(rows[0], rows[1]).allSatisfy { a, b in
                    (0..<4).allSatisfy { a[$0].isNaN ? b[$0].isNaN : a[$0].bitPattern == b[$0].bitPattern }
                }, "\(v.form) Float kernel row \(y)")
            }
        }
        // r1 = 1e-323·D: SPEC §4's u is 0 at the centre (d = r0 = 0), so its gain is 1;
        // every other pixel lies beyond r1.
        let tiny = Vignette.vignette(intensity: 1, radius: 1e-323), gains = tiny.preparedGains(imageWidth: 5, imageHeight: 5)
        let geometry = tiny.geometry(width: 5, height: 5)
        for variant in KernelVariant.allCases {
            var row = [Float](repeating: .nan, count: 5)
            gains.rowGains(y: 2, x0: 0, count: 5, variant: variant, into: &row)
            #expect(row == [0, 0, 1, 0, 0] && (0..<5).allSatisfy { Double(row[$0]) == geometry.gain(x: $0, y: 2) }, "\(variant): \(row)")
        }
        // A subnormal band across 0 (r0 = −2⁻¹⁰⁷⁴, r1 = 3·2⁻¹⁰⁷⁴): the centre pixel has
        // u = 1/4, g = 1 − (1/16)(5/2) = 0.84375.
        let across = Vignette.vignetteEffect(radius: 0x1p-1074, falloff: 2), acrossGains = across.preparedGains(imageWidth: 5, imageHeight: 5)
        for variant in KernelVariant.allCases {
            var row = [Float](repeating: .nan, count: 5)
            acrossGains.rowGains(y: 2, x0: 0, count: 5, variant: variant, into: &row)
            #expect(row == [0, 0, 0.84375, 0, 0] && across.geometry(width: 5, height: 5).gain(x: 2, y: 2) == 0.84375, "\(variant): \(row)")
        }
    }

    @Test("columns outside the image, rows and columns at the ends of Int: no trap, no pixel left unscaled, the reference's gains in both variants (columns wrapping); far from the centre of a small image, the Double reference's 1 or 1 − intensity")
    func extremePositions() {
        let forms: [Vignette] = [.vignette(intensity: 0.8, radius: 1), .vignette(intensity: 1, radius: 2),
                                 .vignetteEffect(center: SIMD2(0, 0), radius: 1e30, intensity: 1, falloff: 0.99),
                                 .relativeVignetteEffect(intensity: 0.5, falloff: 0.3)]
        let locations = [(x0: Int.max, width: 100, y: 4), (x0: Int.max - 1, width: Int.max, y: 4), (x0: Int.min, width: 100, y: 4),
                         (x0: Int.max - 7, width: 100, y: 4), (x0: Int.min + 3, width: 7, y: 4),
                         // Partly or wholly outside a 7-pixel row; rows far outside the image.
                         (x0: -5, width: 7, y: 4), (x0: 3, width: 7, y: 4), (x0: 9, width: 7, y: 4),
                         (x0: 0, width: 300, y: Int.min), (x0: 0, width: 300, y: Int.max), (x0: 0, width: 300, y: 1 << 62),
                         // Inside a row too wide for the lanes' exact columns (from 2^50).
                         (x0: 1 << 53 + 1, width: 1 << 54, y: 4), (x0: 1 << 50 - 5, width: 1 << 51, y: 4)]
        for v in forms {
            for (x0, width, y) in locations {
                for count in [1, 8, 64, 300] {
                    // The plan's gains (`Double`) and the `Float` kernel's, each variant
                    // against its own reference.
                    let gains = v.preparedGains(imageWidth: width, imageHeight: 9)
                    let kernel = Vignette.FloatGains(v, imageWidth: width, imageHeight: 9)
                    var reference = [Float](repeating: .nan, count: count), kernelReference = reference
                    gains.rowGains(y: y, x0: x0, count: count, variant: .scalar, into: &reference)
                    kernel.rowGains(y: y, x0: x0, count: count, variant: .scalar, into: &kernelReference)
                    for variant in KernelVariant.allCases {
                        var row = [SIMD4<Float>](repeating: SIMD4(0.5, 0.25, 1, 0.75), count: count)
                        row.withUnsafeMutableBufferPointer {
                            v.apply($0, at: RowLocation(y: y, x0: x0, imageWidth: width, imageHeight: 9), variant: variant)
                        }
                        var held = [Float](repeating: .nan, count: count)
                        gains.rowGains(y: y, x0: x0, count: count, variant: variant, into: &held)
                        var scaled = [SIMD4<Float>](repeating: SIMD4(0.5, 0.25, 1, 0.75), count: count)
                        gains.scale(&scaled, count: count, y: y, x0: x0, by: held)
                        var alone = [SIMD4<Float>](repeating: SIMD4(0.5, 0.25, 1, 0.75), count: count)
                        gains.scale(&alone, count: count, y: y, x0: x0, variant: variant)
                        for i in 0..<count {
                            let g = reference[i], k = kernelReference[i]
                            let expected = SIMD4(g * 0.5, g * 0.25, g * 1, 0.75)
                            #expect(held[i] == g && scaled[i] == expected && alone[i] == expected && g.isFinite,
                                    "\(v) x0 \(x0) y \(y) width \(width) count \(count) \(variant) pixel \(i): gain \(held[i])")
                            #expect(row[i] == SIMD4(k * 0.5, k * 0.25, k * 1, 0.75) && k.isFinite,
                                    "\(v) x0 \(x0) y \(y) width \(width) count \(count) \(variant) pixel \(i): \(row[i])")
                            // In an image 100 pixels wide every column here lies at least
                            // 2^61 from the centre: beyond r1 (1 − intensity) or, for the
                            // 10^30 radius, inside r0 (1), as the Double reference says;
                            // the plan rounds that once, the kernel computes it in `Float`.
                            if width <= 100, x0.magnitude > 1 << 62 {
                                let exact = v.geometry(width: width, height: 9).gain(x: x0 &+ i, y: y)
                                #expect(exact == 1 ? g == 1 && k == 1
                                                   : exact == 1 - v.intensity && g == Float(1 - v.intensity)
                                                     && k == 1 - Float(v.intensity) * 1,
                                        "\(v) x0 \(x0) pixel \(i)")
                            }
                        }
                    }
                }
            }
            let gains = v.preparedGains(imageWidth: 7, imageHeight: 7)
            #expect(gains.rowWithSameGains(as: Int.min) == Int.min && gains.rowWithSameGains(as: Int.max) == Int.max)
        }
    }
}
