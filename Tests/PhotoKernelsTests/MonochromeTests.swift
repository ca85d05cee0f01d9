import Foundation
import Testing
@testable import PhotoKernels

/// Monochrome settings the tests sweep: the default, B&W, half and double strength,
/// and a tint outside [0, 1].
let monochromeSamples: [Monochrome] = [
    Monochrome(), .blackAndWhite, Monochrome(intensity: 0.5), Monochrome(color: SIMD3(0.2, 0.5, 0.9), intensity: 2),
    Monochrome(color: SIMD3(1.2, -0.1, 0.5), intensity: 1),
]

@Suite("Monochrome (SPEC §5)")
struct MonochromeTests {
    @Test("SIMD4 equals the scalar reference on widths 1…33, NaN included")
    func simdMatchesScalar() throws {
        for (n, m) in monochromeSamples.enumerated() {
            for (w, h) in testShapes {
                let input = try randomImage(width: w, height: h, seed: UInt64(500 + n), nanEvery: 5)
                expectClose(run([m], on: input, .simd4), run([m], on: input, .scalar), input: input, "\(m)")
            }
        }
    }

    @Test("SIMD4 gives the scalar reference's bits (any NaN for any NaN) on counts 1…33, 64, 65 and 1027 at each 16-byte offset of a cache line, with NaN payloads, ±0, ±∞, subnormals and huge values, alpha kept, nothing outside the row written")
    func simdBitsMatchScalar() {
        let specials: [Float] = [
            .nan, Float(bitPattern: 0x7FA0_0001), Float(bitPattern: 0xFFC1_2345), .infinity, -.infinity, 3e38, -3e38,
            Float(bitPattern: 0x0000_0001), Float(bitPattern: 0x8001_0000), 0, -0.0, 1, 0.5, 0.49999997, 0.50000006,
        ]
        let settings = monochromeSamples + [Monochrome(color: SIMD3(3e38, -0.5, 0.6), intensity: 0.35)]
        for (n, m) in settings.enumerated() {
            for count in Array(1...33) + [64, 65, 1027] {
                let input = fastPathPixels(count, seed: UInt64(700 + 41 * n + count), specials: specials)
                for start in 0...3 {
                    let (simd, simdGuards) = runRow(m, input, start: start)
                    let (scalar, scalarGuards) = runRow(m, input, start: start, variant: .scalar)
                    #expect(simdGuards && scalarGuards, "\(m) count \(count) start \(start): wrote outside the row")
                    let wrong = (0..<count).filter { !sameBits(simd[$0], scalar[$0]) }
                    #expect(wrong.isEmpty, "\(m) count \(count) start \(start): \(wrong.count) pixels differ, first \(wrong.first.map { "\(input[$0]) → \(simd[$0]) against \(scalar[$0])" } ?? "")")
                }
            }
        }
    }

    @Test("both variants equal SPEC §5 evaluated in Float as written, 2·Y·k and 1 − 2·(1 − Y)·(1 − k), to the bit (the doublings moved onto the tint are exact), on 64 × 64 seeded pixels per setting, NaN included")
    func doublingsOnTheTint() throws {
        for (n, m) in monochromeSamples.enumerated() {
            let input = try randomImage(width: 64, height: 64, seed: UInt64(700 + n), nanEvery: 11)
            let k = SIMD3<Float>(Float(m.color.x), Float(m.color.y), Float(m.color.z)), i = Float(m.intensity)
            let expected = try FloatImage(width: 64, height: 64, pixels: input.pixels.map { p in
                let y = Luma.of(p.x, p.y, p.z)
                func channel(_ c: Float, _ k: Float) -> Float {
                    let m: Float = y < 0.5 ? 2 * y * k : 1 - 2 * (1 - y) * (1 - k)
                    return c + i * (m - c)
                }
                return SIMD4(channel(p.x, k.x), channel(p.y, k.y), channel(p.z, k.z), p.w)
            })
            for variant in KernelVariant.allCases {
                let output = run([m], on: input, variant)
                let same = zip(output.pixels, expected.pixels).allSatisfy { p, q in
                    (0..<4).allSatisfy { p[$0].bitPattern == q[$0].bitPattern || (p[$0].isNaN && q[$0].isNaN) }
                }
                #expect(same, "\(m) \(variant)")
            }
        }
    }

    @Test("a tint past 2¹²⁷, whose doubling leaves Float's range, still keeps black black and white white, in both variants")
    func hugeTint() throws {
        let input = try FloatImage(width: 3, height: 1, pixels: [SIMD4(0, 0, 0, 1), SIMD4(1, 1, 1, 1), SIMD4(-0.0, 0, 0, 1)])
        for m in [Monochrome(color: SIMD3(3e38, -3e38, 0.5)), Monochrome(color: SIMD3(-2e38, 2e38, 1.7e38), intensity: 0.5)] {
            for variant in KernelVariant.allCases {
                let out = run([m], on: input, variant).pixels
                #expect(out[0] == SIMD4(0, 0, 0, 1), "\(m) \(variant): black became \(out[0])")
                #expect(out[1] == SIMD4(1, 1, 1, 1), "\(m) \(variant): white became \(out[1])")
                #expect(out[2].x == 0 && out[2].y == 0 && out[2].z == 0, "\(m) \(variant): −0 black became \(out[2])")
            }
        }
    }

    @Test("reference vectors: default tint and 50 % B&W, both variants")
    func vectors() throws {
        let cases = ReferenceVectors.cases("monochrome")
        #expect(cases.count == 2)
        for c in cases {
            let k = c.parameters["color"]!.list
            let m = Monochrome(color: SIMD3(k[0], k[1], k[2]), intensity: c.parameters["intensity"]!.number)
            let input = try c.inputImage, expected = try c.expectedImage
            for variant in KernelVariant.allCases {
                expectClose(run([m], on: input, variant), expected, input: input, "\(m) \(variant)")
            }
        }
    }

    @Test("black stays black, grey 0.5 becomes k, white stays white; k = 0.5 gives the grey Y")
    func anchors() throws {
        let input = try FloatImage(width: 4, height: 1, pixels: [SIMD4(0, 0, 0, 1), SIMD4(0.5, 0.5, 0.5, 1), SIMD4(1, 1, 1, 1),
                                                                 SIMD4(0.9, 0.2, 0.4, 1)])
        for m in monochromeSamples.filter({ $0.intensity == 1 }) {
            let k = SIMD3<Float>(Float(m.color.x), Float(m.color.y), Float(m.color.z))
            for variant in KernelVariant.allCases {
                let out = run([m], on: input, variant).pixels
                #expect(out[0] == SIMD4(0, 0, 0, 1), "black \(m) \(variant): \(out[0])")
                #expect(abs(out[1].x - k.x) < 1e-6 && abs(out[1].y - k.y) < 1e-6 && abs(out[1].z - k.z) < 1e-6,
                        "grey \(m) \(variant): \(out[1])")
                #expect(abs(out[2].x - 1) < 1e-6 && abs(out[2].y - 1) < 1e-6 && abs(out[2].z - 1) < 1e-6,
                        "white \(m) \(variant): \(out[2])")
            }
        }
        let neutral = Monochrome(color: SIMD3(repeating: 0.5))
        for variant in KernelVariant.allCases {
            let p = run([neutral], on: input, variant).pixels[3]
            let y = Luma.of(0.9, 0.2, 0.4)
            #expect(abs(p.x - y) < 1e-6 && abs(p.y - y) < 1e-6 && abs(p.z - y) < 1e-6, "k = 0.5 \(variant): \(p)")
        }
    }

    @Test("the tone curve is continuous at Y = 0.5 and increasing in Y")
    func continuous() throws {
        // Greys from 0 to 1 in steps of 1/512, around the switch at 0.5 too.
        let greys = (0...512).map { Float($0) / 512 }
        let input = try FloatImage(width: greys.count, height: 1, pixels: greys.map { SIMD4($0, $0, $0, 1) })
        for m in [Monochrome(), .blackAndWhite] {
            for variant in KernelVariant.allCases {
                let out = run([m], on: input, variant).pixels
                for c in 0..<3 {
                    #expect(zip(out, out.dropFirst()).allSatisfy { $0[c] <= $1[c] }, "\(m) \(variant) channel \(c)")
                    #expect(abs(out[257][c] - out[255][c]) < 0.01, "jump at 0.5 in channel \(c)")
                }
            }
        }
    }

    @Test("hand-computed pixel: (0.8, 0.4, 0.2) with the default tint, and a bright pixel")
    func handComputed() throws {
        // Y = 0.2126·0.8 + 0.7152·0.4 + 0.0722·0.2 = 0.4706 < 0.5
        // m = 2·0.4706·(0.6, 0.45, 0.3) = (0.56472, 0.42354, 0.28236); i = 1 → C' = m
        // (1, 1, 0): Y = 0.9278 ≥ 0.5 → m = 1 − 2·0.0722·(0.4, 0.55, 0.7) = (0.94224, 0.92058, 0.89892)
        let input = try FloatImage(width: 2, height: 1, pixels: [SIMD4(0.8, 0.4, 0.2, 0.9), SIMD4(1, 1, 0, 0.1)])
        let expected = try FloatImage(width: 2, height: 1, pixels: [SIMD4(0.56472, 0.42354, 0.28236, 0.9),
                                                                    SIMD4(0.94224, 0.92058, 0.89892, 0.1)])
        for variant in KernelVariant.allCases {
            expectClose(run([Monochrome()], on: input, variant), expected, "\(variant)")
        }
    }

    @Test("NaN luma gives NaN in all three channels of that pixel (no branch picked silently)")
    func nanLuma() throws {
        let clean = try randomImage(width: 9, height: 3, seed: 61)
        var dirty = clean
        dirty[pixel: 4] = SIMD4(0.1, .nan, 0.1, 0.5)
        dirty[pixel: 13] = SIMD4(0.9, 0.9, .nan, 0.5)
        for m in monochromeSamples {
            for variant in KernelVariant.allCases {
                let x = run([m], on: clean, variant), y = run([m], on: dirty, variant)
                for i in [4, 13] {
                    #expect(y.pixels[i].x.isNaN && y.pixels[i].y.isNaN && y.pixels[i].z.isNaN && y.pixels[i].w == 0.5,
                            "\(m) \(variant): pixel \(i) = \(y.pixels[i])")
                }
                for i in x.pixels.indices where i != 4 && i != 13 {
                    #expect(x.pixels[i] == y.pixels[i], "\(m) \(variant): pixel \(i) changed")
                }
            }
        }
    }

    @Test("intensity 0 is the identity to the bit; alpha is bit-exact")
    func identityAndAlpha() throws {
        var input = try randomImage(width: 19, height: 3, seed: 67, nanEvery: 4)
        input[pixel: 1].w = .nan
        input[pixel: 2].w = -0.0
        for variant in KernelVariant.allCases {
            expectBitEqual(run([Monochrome(intensity: 0)], on: input, variant), input, "intensity 0 \(variant)")
            for m in monochromeSamples {
                let output = run([m], on: input, variant)
                #expect(zip(output.pixels, input.pixels).allSatisfy { $0.w.bitPattern == $1.w.bitPattern },
                        "\(m) \(variant) changed alpha")
            }
        }
    }

    @Test("B&W preset and defaults")
    func presets() {
        #expect(Monochrome.blackAndWhite.color == SIMD3(0.6, 0.6, 0.6) && Monochrome.blackAndWhite.intensity == 1)
        #expect(Monochrome().color == SIMD3(0.6, 0.45, 0.3) && Monochrome().intensity == 1)
        #expect(Monochrome.defaultColor == Monochrome().color)
        #expect(Monochrome(intensity: 0).isIdentity && !Monochrome().isIdentity)
    }

    @Test("JSON round trip, defaults and rejection of bad values")
    func codable() throws {
        for m in monochromeSamples {
            #expect(try JSONDecoder().decode(Monochrome.self, from: JSONEncoder().encode(m)) == m)
        }
        func decode(_ json: String) throws -> Monochrome { try JSONDecoder().decode(Monochrome.self, from: Data(json.utf8)) }
        #expect(try decode("{}") == Monochrome())
        #expect(try decode(#"{"color":[0.6,0.6,0.6]}"#) == .blackAndWhite)
        #expect(throws: DecodingError.self) { try decode(#"{"color":[0.6,0.6]}"#) }
        let lenient = JSONDecoder()
        lenient.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        #expect(throws: DecodingError.self) { try lenient.decode(Monochrome.self, from: Data(#"{"intensity":"inf"}"#.utf8)) }
    }
}
