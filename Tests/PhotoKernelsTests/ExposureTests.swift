import Foundation
import Testing
@testable import PhotoKernels

/// The ev values the equivalence tests sweep: SPEC §8's −4…4 band, fractions, and the
/// vectors' two values.
let exposureSamples: [Float] = [-4, -2.5, -1, -0.3, 0.25, 1, 2.5, 4]

/// `count` values evenly spaced over [−1, 2], packed three per pixel into a 64-wide
/// image (alpha 0.5): a dense sweep of SPEC §8's input range.
func sweepImage(from low: Float = -1, to high: Float = 2, count: Int = 64 * 64 * 3) throws -> FloatImage {
    let values = (0..<count).map { low + (high - low) * Float($0) / Float(count - 1) }
    let pixels = stride(from: 0, to: count, by: 3).map { i in
        SIMD4(values[i], values[min(i + 1, count - 1)], values[min(i + 2, count - 1)], 0.5)
    }
    let width = min(64, pixels.count)
    let padded = pixels + Array(repeating: SIMD4<Float>(0, 0, 0, 0.5), count: (width - pixels.count % width) % width)
    return try FloatImage(width: width, height: padded.count / width, pixels: padded)
}

@Suite("Exposure and the sRGB transfer (SPEC §3, §7)")
struct ExposureTests {
    @Test("SIMD4 equals the scalar reference within 1e-5 on widths 1…33, NaN included")
    func simdMatchesScalar() throws {
        for (n, ev) in exposureSamples.enumerated() {
            let kernel = Exposure(ev: ev)
            for (w, h) in testShapes {
                let input = try randomImage(width: w, height: h, seed: UInt64(200 + n), nanEvery: 5)
                expectClose(run([kernel], on: input, .simd4), run([kernel], on: input, .scalar),
                            input: input, "exposure \(ev)")
            }
        }
    }

    @Test("SIMD4 equals the scalar reference within 1e-5 on a dense sweep of [−1, 2]", arguments: exposureSamples)
    func denseSweep(ev: Float) throws {
        let input = try sweepImage()
        let kernel = Exposure(ev: ev)
        expectClose(run([kernel], on: input, .simd4), run([kernel], on: input, .scalar), input: input, "sweep ev \(ev)")
        // The dark end, where the segments switch: 0 … 0.3 in steps of ~2.4e-5.
        let dark = try sweepImage(from: 0, to: 0.3)
        expectClose(run([kernel], on: dark, .simd4), run([kernel], on: dark, .scalar), input: dark, "dark sweep ev \(ev)")
    }

    @Test("the general SIMD4 path (vectorised pow) alone stays within 1e-5 of the scalar reference")
    func fullPathMatchesScalar() {
        // `pixelSIMD4` takes the fused shortcut where it can; `fullSIMD4` is the formula
        // as written with `VectorMath.pow` — check it on its own, every input.
        var worst: (error: Float, x: Float, ev: Float) = (0, 0, 0)
        for ev in exposureSamples {
            let constants = Exposure(ev: ev).resolved
            let scale = SIMD4<Float>(repeating: constants.scale)
            for j in 0..<3000 {
                let x = 2 * Float(j) / 2999
                let observed = Exposure.fullSIMD4(SIMD4(repeating: x), scale: scale)
                let expected = Exposure.reference(x, scale: constants.scale)
                let error = abs(observed.x - expected)
                if error > worst.error { worst = (error, x, ev) }
                #expect(observed.x == observed.w)
            }
        }
        #expect(worst.error <= 1e-5, "worst: input \(worst.x), ev \(worst.ev), error \(worst.error)")
    }

    @Test("VectorMath.log2 and exp2 against Foundation in Double")
    func vectorMathAccuracy() {
        // log2: absolute error ≤ 2.5e-7·max(1, |log2 x|) over every binade of normal
        // floats (x = 2^e·m for e in −126…127 and 64 mantissas each).
        var worstLog: (error: Double, x: Float) = (0, 0)
        for e in -126...127 {
            for j in 0..<64 {
                let x = Float(sign: .plus, exponent: e, significand: 1 + Float(j) / 64)
                let observed = Double(VectorMath.log2(SIMD4(repeating: x)).x)
                let expected = Foundation.log2(Double(x))
                let error = abs(observed - expected) / max(1, abs(expected))
                if error > worstLog.error { worstLog = (error, x) }
            }
        }
        #expect(worstLog.error <= 2.5e-7, "log2: worst relative-or-absolute error \(worstLog.error) at \(worstLog.x)")
        // exp2: relative error ≤ 3e-7 for y in [−126, 127].
        var worstExp: (error: Double, y: Float) = (0, 0)
        for j in 0...25_300 {
            let y = -126 + Float(j) / 100
            let observed = Double(VectorMath.exp2(SIMD4(repeating: y)).x)
            let expected = Foundation.exp2(Double(y))
            let error = abs(observed - expected) / expected
            if error > worstExp.error { worstExp = (error, y) }
        }
        #expect(worstExp.error <= 3e-7, "exp2: worst relative error \(worstExp.error) at \(worstExp.y)")
        // Special lanes.
        let logs = VectorMath.log2(SIMD4(0, .infinity, -1, .nan))
        #expect(logs.x == -.infinity && logs.y == .infinity && logs.z.isNaN && logs.w.isNaN)
        let exps = VectorMath.exp2(SIMD4(-.infinity, .infinity, .nan, 200))
        #expect(exps.x == 0 && exps.y == .infinity && exps.z.isNaN && exps.w == .infinity)
        #expect(VectorMath.exp2(SIMD4(repeating: 10)).x == 1024)
        #expect(VectorMath.log2(SIMD4(repeating: 0.125)).x == -3)
    }

    @Test("reference vectors: ev 1 and −2.5, both variants")
    func vectors() throws {
        let cases = ReferenceVectors.cases("exposure")
        #expect(cases.count == 2)
        for c in cases {
            let kernel = Exposure(ev: Float(c.parameters["ev"]!.number))
            let input = try c.inputImage, expected = try c.expectedImage
            for variant in KernelVariant.allCases {
                expectClose(run([kernel], on: input, variant), expected, input: input,
                            "exposure \(kernel.ev) \(variant)")
            }
        }
    }

    @Test("hand-computed pixel: grey 0.5 at +1 EV")
    func handComputed() throws {
        // decode: ((0.5 + 0.055)/1.055)^2.4 = 0.526066^2.4 = 0.214041
        // × 2^1:  0.428081
        // encode: 1.055 · 0.428081^(1/2.4) − 0.055 = 1.055 · 0.702215 − 0.055 = 0.685836
        // (the same as (0.5 + 0.055) · 2^(1/2.4) − 0.055 = 0.555 · 1.334840 − 0.055)
        #expect(abs(SRGBTransfer.decode(0.5) - 0.214041) < 1e-6)
        let input = try FloatImage(width: 1, height: 1, pixels: [SIMD4(0.5, 0.5, 0.5, 0.3)])
        let expected = try FloatImage(width: 1, height: 1, pixels: [SIMD4(0.685836, 0.685836, 0.685836, 0.3)])
        for variant in KernelVariant.allCases {
            expectClose(run([Exposure(ev: 1)], on: input, variant), expected, tolerance: 1e-6, "0.5 at +1 EV \(variant)")
        }
    }

    @Test("the sRGB transfer: fixed points, the segment switch, the sign mirror, round trip")
    func transfer() {
        #expect(SRGBTransfer.decode(0) == 0 && SRGBTransfer.encode(0) == 0)
        #expect(abs(SRGBTransfer.decode(1) - 1) <= 1e-7 && abs(SRGBTransfer.encode(1) - 1) <= 1e-7)
        #expect(SRGBTransfer.decode(0.04045) == Float(0.04045) / Float(12.92))
        #expect(SRGBTransfer.encode(0.0031308) == Float(12.92) * Float(0.0031308))
        // Just past the switch the power segment continues the linear one (within 1e-7).
        #expect(abs(SRGBTransfer.decode(Float(0.04045).nextUp) - 0.0031308) < 1e-7)
        for v: Float in [0.01, 0.3, 0.5, 0.9, 1.5, 2] {
            #expect(SRGBTransfer.decode(-v) == -SRGBTransfer.decode(v))
            #expect(SRGBTransfer.encode(-v) == -SRGBTransfer.encode(v))
            #expect(abs(SRGBTransfer.encode(SRGBTransfer.decode(v)) - v) <= 2e-6 * max(1, v), "round trip \(v)")
        }
        // Against the double-precision formula on [0, 1].
        for j in 0...1000 {
            let v = Double(j) / 1000
            let expected = v <= 0.04045 ? v / 12.92 : Foundation.pow((v + 0.055) / 1.055, 2.4)
            #expect(abs(Double(SRGBTransfer.decode(Float(v))) - expected) <= 1e-6, "decode \(v)")
        }
        #expect(SRGBTransfer.decode(.nan).isNaN && SRGBTransfer.encode(.nan).isNaN)
        #expect(SRGBTransfer.decode(.infinity) == .infinity && SRGBTransfer.encode(-.infinity) == -.infinity)
    }

    @Test("ev 0 is the identity to the bit; alpha is bit-exact at every ev")
    func identityAndAlpha() throws {
        var input = try randomImage(width: 29, height: 5, seed: 21, nanEvery: 4)
        input[pixel: 0] = SIMD4(-0.0, .infinity, -.infinity, -0.0)
        input[pixel: 1].w = .nan
        for variant in KernelVariant.allCases {
            expectBitEqual(run([Exposure(ev: 0)], on: input, variant), input, "ev 0 \(variant)")
            for ev in exposureSamples {
                let output = run([Exposure(ev: ev)], on: input, variant)
                #expect(zip(output.pixels, input.pixels).allSatisfy { $0.w.bitPattern == $1.w.bitPattern },
                        "exposure \(ev) \(variant) changed alpha")
            }
        }
    }

    @Test("zeros, infinities and NaN: 0 ↦ 0, ±∞ ↦ ±∞, NaN stays NaN in its own channel")
    func specialValues() throws {
        let input = try FloatImage(width: 5, height: 1, pixels: [
            SIMD4(0, -0.0, 0, 1), SIMD4(.infinity, -.infinity, 1, 1), SIMD4(.nan, 0.5, 0.5, 1),
            SIMD4(0.5, 0.5, 0.5, 1), SIMD4(-1, 2, 1e-30, 1),
        ])
        for variant in KernelVariant.allCases {
            for ev in exposureSamples {
                let out = run([Exposure(ev: ev)], on: input, variant).pixels
                #expect(out[0].x == 0 && out[0].y == 0 && out[0].z == 0, "zeros \(ev) \(variant): \(out[0])")
                #expect(out[1].x == .infinity && out[1].y == -.infinity, "infinities \(ev) \(variant): \(out[1])")
                #expect(out[2].x.isNaN && !out[2].y.isNaN && out[2].y == out[3].y, "NaN \(ev) \(variant): \(out[2])")
                // Extended range keeps its sign; brighter ev pushes 2 further up, darker pulls it down.
                #expect(out[4].x < 0 && (ev > 0 ? out[4].y > 2 : out[4].y < 2) && out[4].z >= 0,
                        "extended \(ev) \(variant): \(out[4])")
            }
        }
    }

    @Test("a NaN pixel changes no other pixel")
    func nanStaysLocal() throws {
        let clean = try randomImage(width: 13, height: 3, seed: 23)
        var dirty = clean
        dirty[pixel: 20] = SIMD4(0.5, .nan, 0.5, 1)
        for variant in KernelVariant.allCases {
            let x = run([Exposure(ev: 1.5)], on: clean, variant), y = run([Exposure(ev: 1.5)], on: dirty, variant)
            for i in x.pixels.indices where i != 20 {
                #expect(x.pixels[i] == y.pixels[i], "exposure \(variant): pixel \(i) changed")
            }
            #expect(y.pixels[20].y.isNaN && !y.pixels[20].x.isNaN)
        }
    }

    @Test("exposure is monotonic in the input and in ev")
    func monotonic() throws {
        let input = try sweepImage(from: -1, to: 2, count: 300)
        for variant in KernelVariant.allCases {
            var previous: [Float]?
            for ev: Float in [-3, -1, 0, 1, 3] {
                let values = run([Exposure(ev: ev)], on: input, variant).pixels.flatMap { [$0.x, $0.y, $0.z] }.prefix(300)
                #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "ev \(ev) \(variant) not increasing in x")
                if let previous {
                    // Brighter ev never lowers a positive value, never raises a negative one.
                    #expect(zip(previous, values).allSatisfy { p, v in p >= 0 ? v >= p : v <= p }, "ev \(ev) \(variant)")
                }
                previous = Array(values)
            }
        }
    }

    @Test("lookup table: entry v is the scalar result for v / maxval", arguments: [1, 15, 255, 1023])
    func lookupTable(maxval: Int) throws {
        for ev: Float in [0, 0.7, -2] {
            let kernel = Exposure(ev: ev)
            let table = try kernel.makeLookupTable(maxval: maxval)
            #expect(table.count == maxval + 1)
            let input = try FloatImage(width: maxval + 1, height: 1,
                                       pixels: (0...maxval).map { SIMD4(repeating: Float($0) / Float(maxval)) })
            let scalar = run([kernel], on: input, .scalar)
            for v in 0...maxval {
                #expect(table[v].bitPattern == scalar.pixels[v].x.bitPattern, "maxval \(maxval) ev \(ev): entry \(v)")
            }
            #expect(table[0] == 0)
        }
        #expect(throws: RasterError.invalidMaxval(-maxval, sampleBits: 16)) { try Exposure(ev: 1).makeLookupTable(maxval: -maxval) }
    }

    @Test("the result does not depend on the thread count")
    func threadCountInvariant() throws {
        let input = try randomImage(width: 31, height: 29, seed: 29)
        let one = run([Exposure(ev: 0.7)], on: input, .simd4, threads: 1)
        for threads in [2, 3, 8] {
            expectBitEqual(run([Exposure(ev: 0.7)], on: input, .simd4, threads: threads), one, "\(threads) threads")
        }
    }
}
