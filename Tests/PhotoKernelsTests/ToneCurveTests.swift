import Foundation
import Testing
@testable import PhotoKernels

/// Points from `(x, y)` pairs; the test's inputs are valid by construction.
private func points(_ list: [(Double, Double)], _ curve: ToneCurve.Channel? = nil) -> ToneCurve.Points {
    try! ToneCurve.Points(list.map { SIMD2($0.0, $0.1) }, curve: curve)
}

/// Tone curves the equivalence tests sweep: a master S-curve, a lift, per-channel
/// curves with and without a master, a steep one that triggers the α² + β² > 9 limit,
/// a decreasing (inverting) one, a 16-point one, and one with a flat stretch.
private let curveSamples: [ToneCurve] = [
    ToneCurve(master: points([(0, 0), (0.25, 0.18), (0.75, 0.82), (1, 1)])),
    ToneCurve(master: points([(0, 0.1), (1, 0.95)])),
    ToneCurve(red: points([(0, 0.05), (0.5, 0.55), (1, 1)]), blue: points([(0, 0), (0.6, 0.4), (1, 0.9)])),
    ToneCurve(master: points([(0, 0), (0.5, 0.6), (1, 1)]), red: points([(0, 0), (0.3, 0.35), (1, 1)]),
              green: points([(0, 0), (1, 1)]), blue: points([(0, 0.1), (0.2, 0.25), (0.7, 0.6), (1, 0.9)])),
    ToneCurve(master: points([(0, 0), (0.1, 0.9), (0.2, 0.99), (1, 1)])),
    ToneCurve(master: points([(0, 1), (0.4, 0.7), (1, 0)])),
    ToneCurve(master: points((0..<16).map { k in let x = Double(k) / 15; return (x, x * x * (3 - 2 * x)) }),
              green: points((0..<16).map { k in let x = Double(k) / 15; return (x, x.squareRoot()) })),
    ToneCurve(master: points([(0, 0.1), (0.3, 0.4), (0.6, 0.4), (1, 0.9)])),
]

@Suite("Tone curve (SPEC §11)")
struct ToneCurveTests {
    @Test("three points by hand: secants, tangents and Hermite values")
    func handComputed() throws {
        // (0, 0), (0.5, 0.75), (1, 1): d0 = 0.75/0.5 = 1.5, d1 = 0.25/0.5 = 0.5;
        // m0 = d0 = 1.5, m2 = d1 = 0.5, m1 = (1.5 + 0.5)/2 = 1.
        // Limit: interval 0 α = 1, β = 2/3 (α² + β² ≈ 1.44); interval 1 α = 2, β = 1 (5): no change.
        let p = points([(0, 0), (0.5, 0.75), (1, 1)])
        #expect(p.tangents == [1.5, 1, 0.5])
        // x = 0.25: h = 0.5, t = 0.5: h00 = 0.5, h10 = 0.125, h01 = 0.5, h11 = −0.125
        //   p = 0.125·0.5·1.5 + 0.5·0.75 − 0.125·0.5·1 = 0.09375 + 0.375 − 0.0625 = 0.40625
        // x = 0.75: p = 0.5·0.75 + 0.125·0.5·1 + 0.5·1 − 0.125·0.5·0.5 = 0.90625
        // x = 0.1: t = 0.2: h00 = 0.896, h10 = 0.128, h01 = 0.104, h11 = −0.032
        //   p = 0.128·0.5·1.5 + 0.104·0.75 − 0.032·0.5·1 = 0.096 + 0.078 − 0.016 = 0.158
        // outside: x = −0.2: 0 + 1.5·(−0.2) = −0.3; x = 1.4: 1 + 0.5·0.4 = 1.2
        let cases: [(Double, Double)] = [(0.25, 0.40625), (0.75, 0.90625), (0.1, 0.158), (-0.2, -0.3), (1.4, 1.2),
                                         (0, 0), (0.5, 0.75), (1, 1)]
        for (x, y) in cases {
            #expect(abs(p.value(at: x) - y) < 1e-15, "Double at \(x): \(p.value(at: x)) vs \(y)")
            #expect(abs(p.value(at: Float(x)) - Float(y)) < 2e-7, "Float at \(x): \(p.value(at: Float(x))) vs \(y)")
        }
        // Both kernels give the same numbers (within SPEC §8) on R, G and B, alpha kept.
        let curve = ToneCurve(master: p)
        let input = try FloatImage(width: 5, height: 1, pixels: [SIMD4(0.25, 0.75, 0.1, 0.3), SIMD4(-0.2, 1.4, 0.5, 1),
                                                                 SIMD4(0, 1, 0.25, 0), SIMD4(0.75, 0.1, -0.2, 0.5),
                                                                 SIMD4(1.4, 0.5, 0, 0.9)])
        let expected = try FloatImage(width: 5, height: 1, pixels: [SIMD4(0.40625, 0.90625, 0.158, 0.3), SIMD4(-0.3, 1.2, 0.75, 1),
                                                                    SIMD4(0, 1, 0.40625, 0), SIMD4(0.90625, 0.158, -0.3, 0.5),
                                                                    SIMD4(1.2, 0.75, 0, 0.9)])
        for variant in KernelVariant.allCases {
            expectClose(run([curve], on: input, variant), expected, input: input, tolerance: 1e-6, "\(variant)")
        }
    }

    @Test("the α² + β² > 9 limit: a steep step, by hand, and the overshoot it prevents")
    func rescaling() {
        // (0, 0), (0.1, 0.9), (1, 1): d0 = 9, d1 = 0.1/0.9 = 1/9; m0 = 9, m2 = 1/9,
        // m1 = (9 + 1/9)/2 = 41/9. Interval 0: α = 1, β = 41/81 (fine). Interval 1:
        // α = (41/9)/(1/9) = 41, β = 1, α² + β² = 1682 > 9 → τ = 3/√1682, m1 = τ·41/9, m2 = τ/9.
        let p = points([(0, 0), (0.1, 0.9), (1, 1)])
        let tau = 3 / 1682.0.squareRoot()
        let m1 = tau * 41 / 9, m2 = tau / 9
        #expect(abs(p.tangents[0] - 9) < 1e-13 && abs(p.tangents[1] - m1) < 1e-13 && abs(p.tangents[2] - m2) < 1e-15,
                "tangents \(p.tangents)")
        // x = 0.55: h = 0.9, t = 0.5 → p = 0.5·0.9 + 0.125·0.9·m1 + 0.5·1 − 0.125·0.9·m2
        let expected = 0.5 * 0.9 + 0.125 * 0.9 * m1 + 0.5 - 0.125 * 0.9 * m2
        #expect(abs(p.value(at: 0.55) - expected) < 1e-15)
        // Without the limit the same interval overshoots 1: at t = 0.3, h00 = 0.784,
        // h10 = 0.147, h01 = 0.216, h11 = −0.063 → 0.7056 + 0.6027 + 0.216 − 0.0063 = 1.518.
        func unlimited(_ t: Double) -> Double {
            let t2 = t * t, t3 = t2 * t
            return (2 * t3 - 3 * t2 + 1) * 0.9 + (t3 - 2 * t2 + t) * 0.9 * (41.0 / 9) + (-2 * t3 + 3 * t2) * 1
                + (t3 - t2) * 0.9 * (1.0 / 9)
        }
        #expect(abs(unlimited(0.3) - 1.518) < 1e-12, "the unlimited spline must overshoot for this test to mean anything")
        let worst = (0...900).map { p.value(at: 0.1 + Double($0) / 1000) }.max()!
        #expect(worst <= 1, "limited spline peaks at \(worst)")
        // The end tangent is the limited one: the line beyond x = 1 has slope τ/9.
        #expect(abs(p.value(at: 1.5) - (1 + 0.5 * m2)) < 1e-15)
    }

    @Test("the limit runs interval by interval, each seeing the tangents the previous left")
    func rescalingInOrder() {
        // (0, 0), (0.1, 0.9), (0.2, 0.99), (1, 1): d = (9, 0.9, 0.0125);
        // m = (9, (9 + 0.9)/2, (0.9 + 0.0125)/2, 0.0125) = (9, 4.95, 0.45625, 0.0125).
        let d = [9.0, 0.9, 0.0125]
        var m = [9.0, 4.95, 0.45625, 0.0125]
        // Interval 0: α = 1, β = 0.55: unchanged.
        // Interval 1: α = 4.95/0.9 = 5.5, β = 0.45625/0.9 ≈ 0.507: 30.5 > 9, scale m1 and m2.
        let a1 = m[1] / d[1], b1 = m[2] / d[1], tau1 = 3 / (a1 * a1 + b1 * b1).squareRoot()
        m[1] = tau1 * a1 * d[1]
        m[2] = tau1 * b1 * d[1]
        // Interval 2 sees the new m2: α = m2/d2 ≈ 19.8 (36.5 with the old one), β = 1.
        let a2 = m[2] / d[2], b2 = m[3] / d[2], tau2 = 3 / (a2 * a2 + b2 * b2).squareRoot()
        m[2] = tau2 * a2 * d[2]
        m[3] = tau2 * b2 * d[2]
        let p = points([(0, 0), (0.1, 0.9), (0.2, 0.99), (1, 1)])
        for k in 0..<4 {
            #expect(abs(p.tangents[k] - m[k]) <= 1e-15 * max(1, abs(m[k])), "m\(k): \(p.tangents[k]) vs \(m[k])")
        }
        // Scaling interval 2 from the original m2 instead would give a different m3.
        let stale = 3 / ((0.45625 / 0.0125) * (0.45625 / 0.0125) + 1).squareRoot() * 0.0125
        #expect(abs(stale - m[3]) > 1e-6)
    }

    @Test("monotone data gives a monotone curve with no overshoot (random point sets, seeded)")
    func monotone() {
        var rng = SeededGenerator(seed: 0x70_6E_65)
        var worstOvershoot = 0.0
        for trial in 0..<300 {
            let n = Int.random(in: 2...16, using: &rng)
            var xs = Set<Double>()
            while xs.count < n { xs.insert((Double.random(in: 0...1, using: &rng) * 1000).rounded() / 1000) }
            let x = xs.sorted()
            var y = [Double.random(in: -0.5...0.5, using: &rng)]
            for _ in 1..<n {
                // Flat runs, tiny and steep steps all appear.
                let step = [0, 0.001, Double.random(in: 0...0.3, using: &rng), Double.random(in: 0...3, using: &rng)]
                y.append(y.last! + step[Int.random(in: 0..<4, using: &rng)])
            }
            let decreasing = trial % 3 == 0
            if decreasing { y = y.map { -$0 } }
            let p = points(Array(zip(x, y)))
            for k in 0..<(n - 1) {
                let lo = min(y[k], y[k + 1]), hi = max(y[k], y[k + 1])
                var previous = p.value(at: x[k])
                for i in 1...64 {
                    let v = p.value(at: x[k] + (x[k + 1] - x[k]) * Double(i) / 64)
                    worstOvershoot = max(worstOvershoot, lo - v, v - hi)
                    #expect(v >= lo - 1e-12 && v <= hi + 1e-12, "trial \(trial) interval \(k): \(v) outside [\(lo), \(hi)]")
                    #expect(decreasing ? v <= previous + 1e-12 : v >= previous - 1e-12, "trial \(trial) interval \(k) turns")
                    previous = v
                }
            }
        }
        #expect(worstOvershoot <= 1e-12, "worst overshoot \(worstOvershoot)")
    }

    @Test("passes exactly through every control point, in Double and in both Float schedules")
    func throughControlPoints() throws {
        var rng = SeededGenerator(seed: 42)
        for _ in 0..<50 {
            let n = Int.random(in: 2...16, using: &rng)
            // x on k/64 and y on k/256 are exact in Float, so Float(x_k) is the knot itself.
            var grid = Array(0...64).shuffled(using: &rng).prefix(n).sorted()
            if grid.count < 2 { grid = [0, 64] }
            let list = grid.map { (Double($0) / 64, Double(Int.random(in: -64...320, using: &rng)) / 256) }
            let p = points(list)
            for (x, y) in list {
                #expect(p.value(at: x) == y, "Double at \(x)")
                #expect(p.value(at: Float(x)) == Float(y), "Float at \(x)")
            }
            let curve = ToneCurve(master: p)
            let input = try FloatImage(width: list.count, height: 1, pixels: list.map { SIMD4(Float($0.0), Float($0.0), Float($0.0), 1) })
            for variant in KernelVariant.allCases {
                let out = run([curve], on: input, variant).pixels
                for (i, (_, y)) in list.enumerated() {
                    #expect(out[i] == SIMD4(Float(y), Float(y), Float(y), 1), "\(variant) at point \(i): \(out[i]) vs \(y)")
                }
            }
        }
    }

    @Test("outside the end points the curve is the straight line with the end tangent")
    func linearExtension() {
        let p = points([(0.2, 0.1), (0.5, 0.6), (0.9, 0.8)])
        let m0 = p.tangents[0], m2 = p.tangents[2]
        #expect(abs(m0 - 0.5 / 0.3) < 1e-15 && abs(m2 - 0.2 / 0.4) < 1e-15)
        for x in [-1.0, -0.3, 0, 0.1, 0.19] {
            #expect(abs(p.value(at: x) - (0.1 + m0 * (x - 0.2))) < 1e-15, "left at \(x)")
        }
        for x in [0.9, 0.95, 1, 1.5, 2] {
            #expect(abs(p.value(at: x) - (0.8 + m2 * (x - 0.9))) < 1e-15, "right at \(x)")
        }
        // C¹ at the ends: the slope just inside matches the line's.
        let e = 1e-7
        #expect(abs((p.value(at: 0.2 + e) - p.value(at: 0.2)) / e - m0) < 1e-5)
        #expect(abs((p.value(at: 0.9) - p.value(at: 0.9 - e)) / e - m2) < 1e-5)
        // ±∞ follow the end slopes; a flat end gives 0·∞ = NaN, as the formula does.
        #expect(p.value(at: Double.infinity) == .infinity && p.value(at: -Double.infinity) == -.infinity)
        #expect(p.value(at: Float.infinity) == .infinity && p.value(at: -Float.infinity) == -.infinity)
        #expect(points([(0, 0.5), (1, 0.5)]).value(at: Double.infinity).isNaN)
        // Two points: the straight line through them.
        let line = points([(0.25, 0.2), (0.75, 0.6)])
        for x in stride(from: -0.5, through: 1.5, by: 0.125) {
            #expect(abs(line.value(at: x) - (0.2 + 0.8 * (x - 0.25))) < 1e-15, "line at \(x)")
        }
    }

    @Test("channel(master(C)): the master first, then each channel's curve")
    func composition() throws {
        // master: y = x/2 (a line); red: y = 0.2 + 0.8x; green none; blue: y = 1 − x.
        let curve = ToneCurve(master: points([(0, 0), (1, 0.5)]), red: points([(0, 0.2), (1, 1)]),
                              blue: points([(0, 1), (1, 0)]))
        // C = 0.5 → master 0.25 → red 0.2 + 0.8·0.25 = 0.4, green 0.25, blue 0.75.
        #expect(abs(curve.value(at: 0.5, channel: .red) - 0.4) < 1e-15)
        #expect(abs(curve.value(at: 0.5, channel: .green) - 0.25) < 1e-15)
        #expect(abs(curve.value(at: 0.5, channel: .blue) - 0.75) < 1e-15)
        #expect(abs(curve.value(at: 0.5, channel: .master) - 0.25) < 1e-15)
        let input = try FloatImage(width: 2, height: 1, pixels: [SIMD4(0.5, 0.5, 0.5, 0.7), SIMD4(1, 0, 0.2, 1)])
        // (1, 0, 0.2) → master (0.5, 0, 0.1) → (0.2 + 0.4, 0, 1 − 0.1) = (0.6, 0, 0.9)
        let expected = try FloatImage(width: 2, height: 1, pixels: [SIMD4(0.4, 0.25, 0.75, 0.7), SIMD4(0.6, 0, 0.9, 1)])
        for variant in KernelVariant.allCases {
            expectClose(run([curve], on: input, variant), expected, tolerance: 1e-6, "\(variant)")
        }
    }

    @Test("vector schedule equals the scalar reference within 1e-5 on widths 1…33, NaN included; both near Double")
    func vectorMatchesScalar() throws {
        var worstScalar = 0.0, worstVector = 0.0
        for (n, curve) in curveSamples.enumerated() {
            for (w, h) in testShapes {
                let input = try randomImage(width: w, height: h, seed: UInt64(700 + n), nanEvery: 5)
                let scalar = run([curve], on: input, .scalar), vector = run([curve], on: input, .simd4)
                expectClose(vector, scalar, input: input, "curve \(n)")
                for i in 0..<input.pixelCount {
                    for (c, channel) in [ToneCurve.Channel.red, .green, .blue].enumerated() where !input.pixels[i][c].isNaN {
                        let exact = curve.value(at: Double(input.pixels[i][c]), channel: channel)
                        let scale = max(1, abs(exact))
                        worstScalar = max(worstScalar, abs(Double(scalar.pixels[i][c]) - exact) / scale)
                        worstVector = max(worstVector, abs(Double(vector.pixels[i][c]) - exact) / scale)
                    }
                }
            }
        }
        // Both Float schedules stay within a few Float ulps of the Double curve.
        #expect(worstScalar < 3e-6 && worstVector < 3e-6, "worst relative error: scalar \(worstScalar), vector \(worstVector)")
    }

    @Test("the two vector schedules (pairs with selects or permutes, gathered) give the same bits on widths 1…33, in every build")
    func schedulesAgree() throws {
        // Values at and around every knot, outside the curves, and the specials.
        var specials: [Float] = [0, -0.0, 1, -1, 2, .infinity, -.infinity, .nan, Float(bitPattern: 0x7FC0_1234),
                                 .leastNonzeroMagnitude, 1e30, -1e30, 0.5, 0.25, 0.75]
        for k in 0...15 { specials += [Float(k) / 15, (Float(k) / 15).nextUp, (Float(k) / 15).nextDown] }
        var rng = SeededGenerator(seed: 91)
        let randoms = (0..<200).map { _ in Float.random(in: -0.5...1.5, using: &rng) }
        let seven: [(Double, Double)] = (0..<7).map { k in let x = Double(k) / 6; return (x, x.squareRoot()) }
        let eight: [(Double, Double)] = (0..<8).map { k in let x = Double(k) / 7; return (x, x * x) }
        let curves = curveSamples + [
            // The most knots each stage may have, with channels of different counts.
            ToneCurve(master: points((0..<16).map { (Double($0) / 15, Double($0 * $0) / 225) }),
                      red: points((0..<16).map { (Double($0) / 15, 1 - Double($0) / 15) }),
                      green: points([(0, 0.2), (1, 0.8)]),
                      blue: points((0..<9).map { (Double($0) / 8, (Double($0) / 8).squareRoot()) })),
            // Where the build targets AVX2 a master of up to seven knots picks its
            // coefficients by permutes, one of eight or more by the select chain.
            ToneCurve(master: points(seven)),
            ToneCurve(master: points(eight), red: points([(0, 0.1), (0.5, 0.4), (1, 0.9)])),
        ]
        for (n, curve) in curves.enumerated() {
            // This curve's own knots, and their neighbours, too.
            var knots: [Float] = []
            for points in [curve.master, curve.red, curve.green, curve.blue].compactMap({ $0 }) {
                for point in points.points { let x = Float(point.x); knots += [x, x.nextUp, x.nextDown] }
            }
            let samples = knots + specials + randoms
            for width in 1...33 {
                var pixels: [SIMD4<Float>] = (0..<width).map { i in
                    SIMD4(samples[(i * 3 + width) % samples.count], samples[(i * 7 + 1) % samples.count],
                          samples[(i * 11 + 2 * width) % samples.count], samples[(i * 5 + 3) % samples.count])
                }
                var gathered = pixels
                pixels.withUnsafeMutableBufferPointer { curve.applyPairs($0.baseAddress!, count: width) }
                gathered.withUnsafeMutableBufferPointer { curve.applyGathered($0.baseAddress!, count: width) }
                for i in 0..<width {
                    #expect(sameBits(pixels[i], gathered[i]), "curve \(n) width \(width) pixel \(i): \(pixels[i]) vs \(gathered[i])")
                }
            }
        }
    }

    @Test("steep segments: knots packed 1e-6 apart stay within 1e-6 of the Double curve in both schedules (seeded random curves)")
    func steepSegments() throws {
        var rng = SeededGenerator(seed: 29)
        var worst = (scalar: 0.0, vector: 0.0)
        for trial in 0..<200 {
            let n = Int.random(in: 2...16, using: &rng)
            // Knots at least 1e-6 apart around a random centre, y anywhere in [0, 1]:
            // slopes up to about 1e6, the y of neighbours far apart.
            let centre = Double.random(in: 0.001...0.999, using: &rng)
            var x = max(0, centre - Double(n) * 1e-5)
            var list: [(Double, Double)] = []
            for _ in 0..<n where x <= 1 {
                list.append((x, Double.random(in: 0...1, using: &rng)))
                x += Double.random(in: 1e-6...2e-5, using: &rng)
            }
            guard list.count >= 2 else { continue }
            let p = points(list)
            let curve = trial.isMultiple(of: 2) ? ToneCurve(master: p) : ToneCurve(red: p, blue: p)
            // Every knot's Float and its neighbours, and points between them.
            var inputs: [Float] = []
            for (k, (x, _)) in list.enumerated() {
                let f = Float(x)
                inputs += [f, f.nextUp, f.nextDown, f.nextUp.nextUp, f.nextDown.nextDown]
                if k + 1 < list.count { inputs.append(Float((x + list[k + 1].0) / 2)) }
            }
            inputs += (0..<8).map { _ in Float.random(in: -1...2, using: &rng) }
            let input = try FloatImage(width: inputs.count, height: 1, pixels: inputs.map { SIMD4($0, $0, $0, 1) })
            let scalar = run([curve], on: input, .scalar), vector = run([curve], on: input, .simd4)
            for (i, v) in inputs.enumerated() {
                let exact = p.value(at: Double(v)), scale = max(1, abs(exact))
                worst.scalar = max(worst.scalar, abs(Double(scalar.pixels[i].x) - exact) / scale)
                worst.vector = max(worst.vector, abs(Double(vector.pixels[i].x) - exact) / scale)
            }
        }
        #expect(worst.scalar < 1e-6 && worst.vector < 1e-6, "worst relative error: scalar \(worst.scalar), vector \(worst.vector)")
    }

    @Test("a pixel's bits do not depend on the row's length or its place in the row")
    func placeIndependent() throws {
        let row = try randomImage(width: 37, height: 1, seed: 83, nanEvery: 6)
        for (n, curve) in curveSamples.enumerated() {
            let whole = run([curve], on: row, .simd4).pixels
            for i in 0..<row.width {
                let alone = run([curve], on: try FloatImage(width: 1, height: 1, pixels: [row.pixels[i]]), .simd4).pixels[0]
                #expect(sameBits(alone, whole[i]), "curve \(n) pixel \(i): \(alone) alone, \(whole[i]) in the row")
            }
            for start in 1...4 {
                let shifted = run([curve], on: try FloatImage(width: 37 - start, height: 1, pixels: Array(row.pixels[start...])), .simd4)
                #expect(zip(shifted.pixels, whole[start...]).allSatisfy { sameBits($0, $1) }, "curve \(n) shifted by \(start)")
            }
        }
    }

    @Test("a NaN channel stays NaN in its own channel and pixel; alpha is bit-exact")
    func nanAndAlpha() throws {
        let clean = try randomImage(width: 11, height: 3, seed: 73)
        var dirty = clean
        dirty[pixel: 4].y = .nan
        dirty[pixel: 13].x = Float(bitPattern: 0x7FC0_1234)
        dirty[pixel: 20].w = Float(bitPattern: 0xFFC0_BEEF)
        dirty[pixel: 21].w = -0.0
        for (n, curve) in curveSamples.enumerated() {
            for variant in KernelVariant.allCases {
                let x = run([curve], on: clean, variant), y = run([curve], on: dirty, variant)
                #expect(y.pixels[4].y.isNaN && y.pixels[4].x == x.pixels[4].x && y.pixels[4].z == x.pixels[4].z,
                        "curve \(n) \(variant): \(y.pixels[4])")
                #expect(y.pixels[13].x.isNaN && y.pixels[13].y == x.pixels[13].y && y.pixels[13].z == x.pixels[13].z,
                        "curve \(n) \(variant): \(y.pixels[13])")
                for i in x.pixels.indices where ![4, 13, 20, 21].contains(i) {
                    #expect(x.pixels[i] == y.pixels[i], "curve \(n) \(variant): pixel \(i) changed")
                }
                #expect(zip(y.pixels, dirty.pixels).allSatisfy { $0.w.bitPattern == $1.w.bitPattern },
                        "curve \(n) \(variant) changed alpha")
            }
        }
    }

    @Test("identity curves return the input to the bit, alone or beside a real curve")
    func identity() throws {
        var input = try randomImage(width: 19, height: 3, seed: 79, nanEvery: 4)
        input[pixel: 2] = SIMD4(Float(bitPattern: 0x7FA0_0001), -0.0, .infinity, Float(bitPattern: 0xFFC0_0ABC))
        let diagonal = points([(0, 0), (0.3, 0.3), (0.8, 0.8), (1, 1)])
        #expect(diagonal.isIdentity && ToneCurve.Points.identity.isIdentity)
        #expect(!points([(0, 0), (0.5, 0.5000001), (1, 1)]).isIdentity)
        let identities = [ToneCurve(master: diagonal), ToneCurve(master: .identity, red: diagonal, green: .identity, blue: diagonal),
                          ToneCurve()]
        for curve in identities {
            #expect(curve.isIdentity)
            for variant in KernelVariant.allCases {
                expectBitEqual(run([curve], on: input, variant), input, "\(curve) \(variant)")
            }
        }
        // A real red curve beside identity master/green/blue: G and B (and A) untouched to the bit.
        let redOnly = ToneCurve(master: diagonal, red: points([(0, 0.1), (1, 0.9)]), green: .identity)
        #expect(!redOnly.isIdentity)
        for variant in KernelVariant.allCases {
            let out = run([redOnly], on: input, variant)
            for (p, q) in zip(out.pixels, input.pixels) {
                #expect(p.y.bitPattern == q.y.bitPattern && p.z.bitPattern == q.z.bitPattern && p.w.bitPattern == q.w.bitPattern,
                        "\(variant): \(q) → \(p)")
            }
        }
    }

    @Test("lookup tables: the scalar curve at v/maxval per channel; identity channels decode exactly")
    func lookupTables() throws {
        let curve = curveSamples[3]
        for maxval in [1, 255, 1023] {
            let t = try curve.makeLookupTable(maxval: maxval)
            #expect(t.red.count == maxval + 1 && t.green.count == maxval + 1 && t.blue.count == maxval + 1)
            for v in 0...maxval {
                let x = Float(v) / Float(maxval)
                #expect(t.red[v].bitPattern == curve.value(at: x, channel: .red).bitPattern)
                #expect(t.green[v].bitPattern == curve.value(at: x, channel: .green).bitPattern)
                #expect(t.blue[v].bitPattern == curve.value(at: x, channel: .blue).bitPattern)
            }
        }
        // The table is what the scalar kernel gives for the decoded samples.
        let greys = try FloatImage(width: 256, height: 1, pixels: (0...255).map { v in
            let x = Float(v) / 255
            return SIMD4(x, x, x, 1)
        })
        let out = run([curve], on: greys, .scalar).pixels
        let t = try curve.makeLookupTable(maxval: 255)
        #expect((0...255).allSatisfy { out[$0] == SIMD4(t.red[$0], t.green[$0], t.blue[$0], 1) })
        let onlyRed = try ToneCurve(red: points([(0, 0.2), (1, 1)])).makeLookupTable(maxval: 255)
        for v in 0...255 {
            let x = Float(v) / 255
            #expect(onlyRed.green[v] == x && onlyRed.blue[v] == x)
        }
        #expect(abs(onlyRed.red[0] - 0.2) < 1e-7 && onlyRed.red[255] == 1)
        #expect(throws: RasterError.invalidMaxval(0, sampleBits: 16)) { try curve.makeLookupTable(maxval: 0) }
        #expect(throws: RasterError.invalidMaxval(65536, sampleBits: 16)) { try curve.makeLookupTable(maxval: 65536) }
    }

    @Test("invalid points are typed errors naming the curve and the point")
    func errors() {
        func error(_ list: [(Double, Double)], _ curve: ToneCurve.Channel? = .green) -> ToneCurveError? {
            do throws(ToneCurveError) {
                _ = try ToneCurve.Points(list.map { SIMD2($0.0, $0.1) }, curve: curve)
                return nil
            } catch { return error }
        }
        #expect(error([(0, 0)]) == .pointCount(curve: .green, count: 1))
        #expect(error((0...16).map { (Double($0) / 16, 0) }) == .pointCount(curve: .green, count: 17))
        #expect(error((0...15).map { (Double($0) / 15, 0) }) == nil, "16 points are allowed")
        guard case .nonFinite(.green, 1, _, let y)? = error([(0, 0), (0.5, .nan), (1, 1)]), y.isNaN else {
            Issue.record("NaN y not reported at point 1")
            return
        }
        #expect(error([(0, 0), (.infinity, 1)]) == .nonFinite(curve: .green, index: 1, x: .infinity, y: 1))
        #expect(error([(-0.1, 0), (1, 1)]) == .xOutOfRange(curve: .green, index: 0, x: -0.1))
        #expect(error([(0, 0), (1.01, 1)]) == .xOutOfRange(curve: .green, index: 1, x: 1.01))
        #expect(error([(0, 0), (0.5, 0.5), (0.5, 0.6), (1, 1)]) == .xNotIncreasing(curve: .green, index: 2, x: 0.5, previous: 0.5))
        #expect(error([(0, 0), (0.6, 0.5), (0.4, 0.6)]) == .xNotIncreasing(curve: .green, index: 2, x: 0.4, previous: 0.6))
        #expect(error([(0, 0), (1, 1e39)]) == .yOutOfRange(curve: .green, index: 1, y: 1e39))
        #expect(error([(0, 0), (1e-40, 1), (1, 1)]) == .slopeOutOfRange(curve: .green, index: 0, slope: 1e40))
        #expect(error([(0, 0)], nil) == .pointCount(curve: nil, count: 1))
        #expect(ToneCurveError.xNotIncreasing(curve: .red, index: 2, x: 0.4, previous: 0.6).description
                == "tone curve red: point 3 has x = 0.4, not greater than the previous point's 0.6")
        #expect(ToneCurveError.pointCount(curve: nil, count: 1).description == "tone curve: 1 point; a curve has 2…16")
        #expect(ToneCurveError.slopeOutOfRange(curve: nil, index: 0, slope: 1e40).description
                == "tone curve: the slope 1e+40 from point 1 to the next is beyond Float's range")
        // An index made by hand past any array's is shown, not counted on (no overflow).
        #expect(ToneCurveError.xOutOfRange(curve: nil, index: .max, x: 2).description
                == "tone curve: point \(Int.max) has x = 2.0 outside [0, 1]")
    }

    @Test("CLI form: parses \"x,y x,y …\", names a bad token, round-trips description")
    func parsing() throws {
        let p = try ToneCurve.Points(parsing: "0,0 0.25,0.2\t0.75,0.8  1,1")
        #expect(p.points == [SIMD2(0, 0), SIMD2(0.25, 0.2), SIMD2(0.75, 0.8), SIMD2(1, 1)])
        #expect(try ToneCurve.Points(parsing: p.description) == p)
        #expect(p.description == "0.0,0.0 0.25,0.2 0.75,0.8 1.0,1.0")
        func error(_ text: String) -> ToneCurveError? {
            do throws(ToneCurveError) {
                _ = try ToneCurve.Points(parsing: text, curve: .master)
                return nil
            } catch { return error }
        }
        #expect(error("0,0 0.5;0.6 1,1") == .badToken(curve: .master, index: 1, token: "0.5;0.6", reason: "expected x,y"))
        #expect(error("0,0 a,1") == .badToken(curve: .master, index: 1, token: "a,1", reason: "x is not a number"))
        #expect(error("0,0 1,") == .badToken(curve: .master, index: 1, token: "1,", reason: "y is not a number"))
        #expect(error("0,0 1,1,1") == .badToken(curve: .master, index: 1, token: "1,1,1", reason: "expected x,y"))
        #expect(error("") == .pointCount(curve: .master, count: 0))
        #expect(error("0,0") == .pointCount(curve: .master, count: 1))
        #expect(error(Array(repeating: "0,0", count: 17).joined(separator: " ")) == .pointCount(curve: .master, count: 17))
        #expect(error("0,0 0.5,inf") == .nonFinite(curve: .master, index: 1, x: 0.5, y: .infinity))
        #expect(error("1,0 0,1") == .xNotIncreasing(curve: .master, index: 1, x: 0, previous: 1))
        #expect(ToneCurveError.badToken(curve: .blue, index: 1, token: "0.5;0.6", reason: "expected x,y").description
                == "tone curve blue: point 2 \"0.5;0.6\": expected x,y")
    }

    @Test("JSON: round trip, optional keys, at least one curve, errors at the key with the curve and point")
    func codable() throws {
        for curve in curveSamples + [ToneCurve()] {
            let data = try JSONEncoder().encode(curve)
            let back = try JSONDecoder().decode(ToneCurve.self, from: data)
            #expect(back == curve || (curve.isIdentity && back.isIdentity), "\(String(decoding: data, as: UTF8.self))")
        }
        func decode(_ json: String) throws -> ToneCurve { try JSONDecoder().decode(ToneCurve.self, from: Data(json.utf8)) }
        let c = try decode(#"{"red": [[0, 0.1], [1, 0.9]], "blue": null}"#)
        #expect(c.master == nil && c.green == nil && c.blue == nil && c.red == points([(0, 0.1), (1, 0.9)]))
        #expect(try decode(#"{"master": [[0, 0], [1, 1]]}"#).isIdentity)
        #expect(String(decoding: try JSONEncoder().encode(ToneCurve()), as: UTF8.self) == #"{"master":[[0,0],[1,1]]}"#)
        func underlying(_ json: String) -> (ToneCurveError?, [String]) {
            do {
                _ = try decode(json)
                return (nil, [])
            } catch DecodingError.dataCorrupted(let context) {
                return (context.underlyingError as? ToneCurveError, context.codingPath.map(\.stringValue))
            } catch {
                return (nil, ["other: \(error)"])
            }
        }
        #expect(underlying("{}") == (.noCurve, []))
        #expect(underlying(#"{"blue": null}"#) == (.noCurve, []))
        #expect(underlying(#"{"green": [[0, 0], [0.5]]}"#) == (.malformedPoint(curve: .green, index: 1, valueCount: 1), ["green"]))
        #expect(underlying(#"{"master": [[0, 0], [1, 1]], "red": [[0, 0], [0.7, 0.5], [0.6, 1]]}"#)
                == (.xNotIncreasing(curve: .red, index: 2, x: 0.6, previous: 0.7), ["red"]))
        #expect(underlying(#"{"blue": [[0, 0]]}"#) == (.pointCount(curve: .blue, count: 1), ["blue"]))
        #expect(throws: DecodingError.self) { try decode(#"{"master": "0,0 1,1"}"#) }
    }

    @Test("equality and hashing follow the points")
    func hashing() {
        let a = ToneCurve(master: points([(0, 0), (0.5, 0.6), (1, 1)]))
        let b = ToneCurve(master: points([(0, 0), (0.5, 0.6), (1, 1)]))
        let c = ToneCurve(red: points([(0, 0), (0.5, 0.6), (1, 1)]))
        #expect(a == b && a.hashValue == b.hashValue && a != c)
        #expect(Set([a, b, c]).count == 2)
        #expect(a.name == "toneCurve" && a[.master] == a.master && c[.red] == c.red && c[.green] == nil)
    }

    @Test("a curve prints as its points, not its schedule's tables")
    func description() throws {
        let curve = ToneCurve(master: try ToneCurve.Points([SIMD2(0, 0), SIMD2(0.3, 0.2), SIMD2(1, 1)]),
                              blue: try ToneCurve.Points([SIMD2(0, 0.1), SIMD2(1, 0.9)]))
        #expect("\(curve)" == "ToneCurve(master: (0.0, 0.0) (0.3, 0.2) (1.0, 1.0); blue: (0.0, 0.1) (1.0, 0.9))")
        #expect("\(ToneCurve())" == "ToneCurve()")
    }

    /// Tones whose curve is steep where the exposure before it lands: a `Float`
    /// evaluation's few ulps there, times the slope, would move integer samples past
    /// SPEC §8's window. With the band of 16-bit samples (as fractions of maxval) that
    /// reach the steep part.
    static let steepTones: [(name: String, tones: [any RecipeOperation], band: ClosedRange<Double>)] = [
        ("exposure 0.3, a master curve of slope 19 above 0.95",
         [Exposure(ev: 0.3), ToneCurve(master: points([(0, 0), (0.95, 0.05), (1, 1)]))], 0.86...0.94),
        ("exposure −0.4, a master curve of slope 400 at 0.6",
         [Exposure(ev: -0.4), ToneCurve(master: points([(0, 0), (0.6, 0.1), (0.602, 0.9), (1, 1)]))], 0.66...0.72),
        ("exposure 0.7, a steep red curve at 0.7",
         [Exposure(ev: 0.7), ToneCurve(red: points([(0, 0), (0.7, 0.05), (0.71, 0.95), (1, 1)]))], 0.56...0.64),
    ]

    @Test("steep tone curves after exposure on integer samples: every path takes the tones in Double, so every sample is within SPEC §8 of Double — 8- and 16-bit samples, .simd4 and .scalar, the fused block (a matrix after the tones) and the row path (vibrance after them), straight and premultiplied buffers into their own format and 8-bit ones into 16-bit",
          arguments: 0..<3)
    func steepCurvesOnIntegerSamples(_ index: Int) throws {
        let (name, tones, band) = Self.steepTones[index]
        let afterTones: [(String, [any RecipeOperation])] = [
            ("tones alone", []), ("vivid (the block)", Recipe(preset: .vivid).operationsInOrder),
            ("vibrance (the row path)", [Vibrance(amount: 0.4)]),
        ]
        // Colour fractions: every 8-bit level; 16-bit, the band every sample and the
        // whole range in steps.
        func fractions(_ maxval: Int) -> [Int] {
            if maxval == 255 { return Array(0...255) }
            let lower = Int(band.lowerBound * 65535), upper = Int(band.upperBound * 65535)
            return Array(stride(from: lower, through: upper, by: max(1, (upper - lower) / 2400))) + Array(stride(from: 0, through: 65535, by: 97))
        }
        for (after, rest) in afterTones {
            let operations = tones + rest
            let stages = operations.flatMap(\.stages)
            func exact(_ straight: SIMD4<Double>, _ x: Int, _ y: Int, _ w: Int, _ h: Int) -> SIMD4<Double> {
                operations.reduce(straight) { $1.evaluate($0, x: x, y: y, width: w, height: h) }
            }
            for maxval in [255, 65535] {
                let levels = fractions(maxval)
                // Opaque RGBA pixels: each level in each channel, the others spread.
                var samples: [UInt16] = []
                for (k, v) in levels.enumerated() {
                    samples += [UInt16(v), UInt16(levels[(k * 7 + 3) % levels.count]), UInt16(levels[(k * 13 + 5) % levels.count]),
                                UInt16(maxval)]
                }
                let w = 64, h = (levels.count + w - 1) / w
                samples += [UInt16](repeating: UInt16(maxval), count: (w * h - levels.count) * 4)
                let plan = try EditPlan(stages: stages).prepared(width: w, height: h, threads: 1)
                // Rows whose tones came from the table take the one-pass Float block for
                // a matrix and the gains after them (the row paths), not for vibrance.
                #expect((plan.plan.floatBlockAfterTones != nil) == !(rest.first is Vibrance || rest.isEmpty), "\(name), \(after)")
                // Identity stages before the tones change nothing: the tones still lead.
                let padded = try EditPlan(stages: Brightness(0).stages + stages)
                    .prepared(width: w, height: h, threads: 1)
                #expect(padded.plan.tones.count == plan.plan.tones.count && padded.plan.toneStageCount == tones.count + 1)
                for variant in [KernelVariant.simd4, .scalar] {
                    let out = try runRGBA(plan, samples, maxval: maxval, variant: variant)
                    let report = TieAwareCheck.check(out, samples, width: w, height: h, maxval: maxval) { c, x, y in exact(c, x, y, w, h) }
                    #expect(report.failures == 0, "\(name), \(after), samples of maxval \(maxval), \(variant): \(report)")
                    #expect(try runRGBA(padded, samples, maxval: maxval, variant: variant) == out,
                            "\(name), \(after), identity stages first, \(variant)")
                }
                // Buffers, RGBA order: straight and premultiplied (colour c ≤ A, its
                // straight value c/A in the steep band), into their own format and, from
                // 8-bit, into straight and premultiplied RGBA16.
                let sampleType: SampleType = maxval == 255 ? .uint8 : .uint16
                for alpha in [AlphaMode.straight, .premultiplied] {
                    var pixels: [Int] = []
                    for (k, v) in levels.enumerated() {
                        let a = alpha == .straight || k % 3 == 0 ? maxval : maxval - (k * 37) % (maxval / 2)
                        let scaled = { (c: Int) in alpha == .straight ? c : Int((Double(c) * Double(a) / Double(maxval)).rounded()) }
                        pixels += [scaled(v), scaled(levels[(k * 7 + 3) % levels.count]), scaled(levels[(k * 13 + 5) % levels.count]), a]
                    }
                    let count = pixels.count / 4
                    let format = try PixelFormat(.rgba, alpha: alpha, sample: sampleType)
                    var destinations = [format]
                    if maxval == 255 { destinations += [.rgba16, .rgba16Premultiplied] }
                    for destination in destinations {
                        for variant in [KernelVariant.simd4, .scalar] {
                            let bufferPlan = try EditPlan(stages: stages).prepared(width: count, height: 1, threads: 1)
                            let size = maxval == 255 ? 1 : 2, resultSize = destination.sampleType == .uint8 ? 1 : 2
                            let source = PixelBufferTests.Storage(count: pixels.count * size)
                            let result = PixelBufferTests.Storage(count: pixels.count * resultSize)
                            for (i, v) in pixels.enumerated() {
                                if size == 1 { source.bytes.storeBytes(of: UInt8(v), toByteOffset: i, as: UInt8.self) }
                                else { source.bytes.storeBytes(of: UInt16(v), toByteOffset: 2 * i, as: UInt16.self) }
                            }
                            try bufferPlan.run(from: PixelBuffer(baseAddress: source.bytes, width: count, height: 1,
                                                                 bytesPerRow: count * 4 * size, format: format),
                                               to: PixelBuffer(baseAddress: result.bytes, width: count, height: 1,
                                                               bytesPerRow: count * 4 * resultSize, format: destination),
                                               variant: variant)
                            let outMaxval = resultSize == 1 ? 255 : 65535
                            var wrong = 0, first = ""
                            for i in 0..<count {
                                let a = Double(pixels[4 * i + 3]) / Double(maxval)
                                let colour = (0..<3).map { Double(pixels[4 * i + $0]) / Double(maxval) / (alpha == .premultiplied ? a : 1) }
                                let value = exact(SIMD4(colour[0], colour[1], colour[2], a), i, 0, count, 1)
                                for c in 0..<3 {
                                    let clamped = min(max(value[c], 0), 1)
                                    let x = destination.alphaMode == .premultiplied ? clamped * a : clamped
                                    let got = resultSize == 1 ? Int(result.bytes.load(fromByteOffset: 4 * i + c, as: UInt8.self))
                                        : Int(result.bytes.load(fromByteOffset: 2 * (4 * i + c), as: UInt16.self))
                                    if !TieAwareCheck.accepts(got, x, maxval: outMaxval).ok {
                                        wrong += 1
                                        if first.isEmpty { first = "pixel \(i) channel \(c): got \(got), exact \(x * Double(outMaxval))" }
                                    }
                                }
                            }
                            #expect(wrong == 0, "\(name), \(after), \(format) into \(destination), \(variant): \(wrong) wrong; \(first)")
                        }
                    }
                }
            }
        }
    }
}
