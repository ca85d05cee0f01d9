import Testing
@testable import PhotoKernels

/// The matrices the fast-path tests run: the fused adjustments, sepia at two
/// strengths, a seeded random matrix with an offset and negative entries, and more
/// grey-preserving ones: saturation 0 and 4, hue 180°, and one built by hand with
/// signed zeros among its coefficients and as its offset; and a plain one whose offset
/// is zero in two lanes only.
private let fastPathMatrices: [(String, ColorMatrix)] = {
    var rng = SeededGenerator(seed: 0x5EED_C0DE)
    func random() -> SIMD3<Double> {
        SIMD3(Double.random(in: -2...2, using: &rng), Double.random(in: -2...2, using: &rng),
              Double.random(in: -2...2, using: &rng))
    }
    return [("adjustments dream", Adjustments.dream.matrix), ("adjustments vivid", Adjustments.vivid.matrix),
            ("sepia 1", .sepia(intensity: 1)), ("sepia 0.37", .sepia(intensity: 0.37)),
            ("random", ColorMatrix(random(), random(), random(), offset: random())),
            ("saturation 0", .saturation(0)), ("saturation 4", .saturation(4)), ("hue 180", .hueRotation(degrees: 180)),
            ("signed zeros", ColorMatrix(SIMD3(1.25, -0.5, 0.25), SIMD3(-0.0, 0.75, 0.25), SIMD3(0.5, 0, 0.5),
                                         offset: SIMD3(repeating: -0.0))),
            ("offset zero in two lanes", ColorMatrix(SIMD3(0.9, 0.1, -0.2), SIMD3(0, 1.1, 0.3), SIMD3(-0.4, 0.2, 0.8),
                                                     offset: SIMD3(0.125, 0, -0.0)))]
}()

/// Values that stress the arithmetic: NaNs with payloads (quiet, signalling,
/// negative), infinities, huge, tiny and subnormal values, signed zeros.
private let specialValues: [Float] = [
    .nan, -.nan, Float(bitPattern: 0x7FC1_2345), Float(bitPattern: 0x7F80_0001), Float(bitPattern: 0xFFA0_0042),
    .infinity, -.infinity, 3e38, -3e38, Float(bitPattern: 0x0001_0000), Float(bitPattern: 0x8001_0000), 0, -0.0, 1, 255, -7.5,
]

/// The straightforward one-pixel SIMD4 formula the fast path must reproduce: each
/// channel from itself, then from the next and the previous channel round the wheel,
/// `(m00, m11, m22)·(R, G, B) + (m01, m12, m20)·(G, B, R) + (m02, m10, m21)·(B, R, G) + t`,
/// left to right, alpha copied; in builds whose schedules fuse their multiply-adds,
/// the same three products fused onto `t` in that order, each step rounded once.
/// Grey-preserving, with the steps `d = (G − R, B − G, R − B)` and `e = (R − B, G − R,
/// B − G)`: `(m01, m12, m20)·d − (m02, m10, m21)·e + (s·C + t)`, or fused `((t + s·C) +
/// (m01, m12, m20)·d) − (m02, m10, m21)·e`. An offset of zero is −0 in its lane, which
/// changes no number it is added to.
private func formula(_ v: SIMD4<Float>, _ k: ColorMatrixKernel) -> SIMD4<Float> {
    var out: SIMD4<Float>
    let m = k.matrix.rows, o = k.matrix.offset
    func lane(_ x: Double) -> Float { Float(x) == 0 ? -0.0 : Float(x) }
    let t = SIMD4<Float>(lane(o.x), lane(o.y), lane(o.z), -0.0)
    let s = SIMD4<Float>(repeating: k.rowSum)
    let diagonal = SIMD4<Float>(Float(m.0.x), Float(m.1.y), Float(m.2.z), 0)
    let next = SIMD4<Float>(Float(m.0.y), Float(m.1.z), Float(m.2.x), 0)
    let previous = SIMD4<Float>(Float(m.0.z), Float(m.1.x), Float(m.2.y), 0)
    let forward = SIMD4<Float>(v.y, v.z, v.x, 0), backward = SIMD4<Float>(v.z, v.x, v.y, 0)
    let d = SIMD4<Float>(v.y - v.x, v.z - v.y, v.x - v.z, 0), e = SIMD4<Float>(d.z, d.x, d.y, 0)
    switch (k.relativeForm, ColorMatrixKernel.fusesMultiplyAdd) {
    case (true, false): out = next * d - previous * e + (s * v + t)
    case (true, true): out = t.addingProduct(s, v).addingProduct(next, d).addingProduct(-previous, e)
    case (false, false): out = diagonal * v + next * forward + previous * backward + t
    case (false, true): out = t.addingProduct(diagonal, v).addingProduct(next, forward).addingProduct(previous, backward)
    }
    out.w = v.w
    return out
}

/// The two schedules a build can choose between, run directly so that every build tests
/// both: two pixels per `SIMD8` (AVX2 builds) and one pixel per `SIMD4` (the others).
private enum Schedule: CaseIterable {
    case twoPixels, onePixel

    func run(_ k: ColorMatrixKernel, _ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int) {
        switch self {
        case .twoPixels: withUnsafePointer(to: k.schedule) { MatrixSchedule.applyPairs($0, p, count: count) }
        case .onePixel: withUnsafePointer(to: k.schedule) { MatrixSchedule.applyPixels($0, p, count: count) }
        }
    }
}

@Suite("Colour matrix fast path (two pixels per SIMD8 with AVX2, one per SIMD4 otherwise)")
struct ColorMatrixFastPathTests {
    @Test("both schedules, whichever the build runs, equal the one-pixel formula to the bit: counts 1…33, 64, 65, and 1027, 1030, 4099 (long enough for four streams where the walk interleaves, tails), alpha kept")
    func bothSchedulesEqualFormula() {
        for (name, matrix) in fastPathMatrices {
            let kernel = ColorMatrixKernel(matrix, name: name)
            for schedule in Schedule.allCases {
                for count in Array(1...33) + [64, 65, 1027, 1030, 4099] {
                    let input = fastPathPixels(count, seed: UInt64(count) &* 31 &+ UInt64(name.utf8.count), specials: specialValues)
                    // A guard pixel on each side catches a write past either end.
                    let guardPixel = SIMD4<Float>(-12345.5, 6789.25, -0.0, 4242.125)
                    var buffer = [guardPixel] + input + [guardPixel]
                    buffer.withUnsafeMutableBufferPointer { schedule.run(kernel, $0.baseAddress! + 1, count: count) }
                    #expect(sameBits(buffer[0], guardPixel) && sameBits(buffer[count + 1], guardPixel),
                            "\(name) \(schedule) count \(count): wrote outside the row")
                    for i in 0..<count where !sameBits(buffer[i + 1], formula(input[i], kernel)) {
                        Issue.record("\(name) \(schedule) count \(count) pixel \(i): input \(input[i]), expected \(formula(input[i], kernel)), observed \(buffer[i + 1])")
                    }
                    // The long spans at both 16-byte places of a 32-byte boundary too, so
                    // that the streams run after a head pixel and without one in every build.
                    guard count > 1000 else { continue }
                    for start in 0...1 {
                        let out = inPlace(input, start: start) { schedule.run(kernel, $0, count: count) }
                        let wrong = (0..<count).filter { !sameBits(out[$0], formula(input[$0], kernel)) }
                        #expect(wrong.isEmpty, "\(name) \(schedule) count \(count) start \(start): \(wrong.count) pixels differ, first at \(wrong.first ?? -1)")
                    }
                }
            }
        }
    }

    @Test("SIMD4 schedule equals the one-pixel formula to the bit: counts 1…33 and 63, 64, odd tails, any alignment")
    func equalsFormulaBitForBit() {
        for (name, matrix) in fastPathMatrices {
            let kernel = ColorMatrixKernel(matrix, name: name)
            for count in Array(1...33) + [63, 64] {
                let input = fastPathPixels(count, seed: UInt64(count) &* 7919 &+ UInt64(name.utf8.count), specials: specialValues)
                // Start 0 is on a 32-byte boundary; from start 1 the first pixel goes alone.
                for start in [0, 1] {
                    let (row, guardsIntact) = runRow(kernel, input, start: start)
                    #expect(guardsIntact, "\(name) count \(count) start \(start): wrote outside the row")
                    for i in 0..<count where !sameBits(row[i], formula(input[i], kernel)) {
                        Issue.record("\(name) count \(count) start \(start) pixel \(i): input \(input[i]), expected \(formula(input[i], kernel)), observed \(row[i])")
                    }
                }
            }
        }
    }

    @Test("alpha is kept to the bit, NaN payloads and signalling NaNs included, on every lane position")
    func alphaBitExact() {
        let alphas: [UInt32] = [0x7FC1_2345, 0x7F80_0001, 0xFFA0_0042, 0xFFC0_0000, 0x7F80_0000, 0x8000_0000,
                                0x0000_0001, 0x3F80_0000, 0x4F00_0000]
        for (name, matrix) in fastPathMatrices {
            let kernel = ColorMatrixKernel(matrix, name: name)
            for count in 1...9 {
                // Each alpha lands on the even and the odd lane of a pair and on the tail.
                let input = (0..<count).map { i in
                    SIMD4<Float>(Float(i) * 0.1, 0.5, .nan, Float(bitPattern: alphas[(i + count) % alphas.count]))
                }
                let (row, _) = runRow(kernel, input, start: 0)
                for i in 0..<count {
                    #expect(row[i].w.bitPattern == input[i].w.bitPattern,
                            "\(name) count \(count) pixel \(i): alpha \(String(input[i].w.bitPattern, radix: 16)) became \(String(row[i].w.bitPattern, radix: 16))")
                    #expect(row[i].z.isNaN, "\(name) pixel \(i): a NaN blue must give NaN")
                }
            }
        }
    }

    @Test("where the build does not fuse multiply-adds, the SIMD4 schedule equals the scalar reference to the bit, signed zeros included: counts 1…33, both 16-byte places",
          .enabled(if: !ColorMatrixKernel.fusesMultiplyAdd))
    func equalsScalarReferenceBitForBit() {
        for (name, matrix) in fastPathMatrices {
            let kernel = ColorMatrixKernel(matrix, name: name)
            for count in 1...33 {
                // Greys, zeros of both signs, and pixels off grey by a little.
                var input = fastPathPixels(count, seed: UInt64(count) &+ 500, specials: specialValues)
                for i in stride(from: 0, to: count, by: 3) {
                    let v = input[i].y
                    input[i] = SIMD4(v, v, v, input[i].w)
                }
                let zeros: [SIMD4<Float>] = [SIMD4(-0.0, -0.0, -0.0, 1), SIMD4(0, -0.0, 0, 1), SIMD4(-0.0, 0, -0.0, 1)]
                for i in stride(from: 1, to: count, by: 4) { input[i] = zeros[i % zeros.count] }
                for start in 0...1 {
                    let simd = runRow(kernel, input, start: start).row
                    let scalar = runRow(kernel, input, start: start, variant: .scalar).row
                    for i in 0..<count where !sameBits(simd[i], scalar[i]) {
                        Issue.record("\(name) count \(count) start \(start) pixel \(i): input \(input[i]), SIMD4 \(simd[i]), scalar \(scalar[i])")
                    }
                }
            }
        }
    }

    @Test("SIMD4 schedule equals the scalar reference within SPEC §8 on counts 1…33, NaN and infinities included")
    func matchesScalarReference() {
        for (name, matrix) in fastPathMatrices {
            let kernel = ColorMatrixKernel(matrix, name: name)
            for count in 1...33 {
                let input = fastPathPixels(count, seed: UInt64(count) &+ 100, specials: specialValues)
                let simd = runRow(kernel, input, start: 1).row
                let scalar = runRow(kernel, input, start: 1, variant: .scalar).row
                for i in 0..<count {
                    let finite = (0..<3).allSatisfy { input[i][$0] >= -1 && input[i][$0] <= 2 }
                    // §8's bound applies to inputs in [−1, 2]; elsewhere NaN and ±∞ must agree,
                    // and an unfused schedule gives the reference's bits. A fused one rounds
                    // differently, and a product that overflows in the reference need not
                    // inside a fused operation, so there a finite input beyond [−1, 2]
                    // leaves the pixel without a bound but NaN for NaN (a NaN input
                    // reaches every colour channel either way).
                    let unbounded = ColorMatrixKernel.fusesMultiplyAdd
                        && (0..<3).contains { input[i][$0].isFinite && !(-1...2).contains(input[i][$0]) }
                    let nanIn = (0..<3).contains { input[i][$0].isNaN }
                    for c in 0..<3 where unbounded && nanIn {
                        #expect(simd[i][c].isNaN && scalar[i][c].isNaN, "\(name) count \(count) pixel \(i) channel \(c): NaN in, \(simd[i][c]) and \(scalar[i][c]) out")
                    }
                    for c in 0..<4 where !unbounded {
                        let a = simd[i][c], b = scalar[i][c]
                        let ok = (a.isNaN && b.isNaN) || a == b || (finite && abs(a - b) <= 1e-5)
                        #expect(ok, "\(name) count \(count) pixel \(i) channel \(c): input \(input[i]), SIMD4 \(a), scalar \(b)")
                    }
                    #expect(simd[i].w.bitPattern == input[i].w.bitPattern, "\(name): alpha changed")
                }
            }
        }
    }

    @Test("the kernel runs its build's schedule: an image's every row equals the formula, widths 1…33, odd heights")
    func imagesEqualFormula() throws {
        let kernel = ColorMatrixKernel(Adjustments.dream.matrix, name: "adjustments")
        for (w, h) in testShapes {
            let input = try randomImage(width: w, height: h, seed: 610, nanEvery: 5)
            let output = run([kernel], on: input, .simd4)
            let same = zip(output.pixels, input.pixels).allSatisfy { sameBits($0, formula($1, kernel)) }
            #expect(same, "\(w)×\(h): differs from the formula")
        }
    }

    @Test("a zero offset is held as −0, which no addition can tell from none: −0 stays −0 in the reference and in both schedules, with and without an offset")
    func zeroOffsetKeepsNegativeZero() {
        let zero = SIMD4<Float>(-0.0, -0.0, -0.0, 1)
        let cases: [(String, ColorMatrix, Bool)] = [
            ("sepia", .sepia(intensity: 1), false),
            ("offset +0", ColorMatrix(SIMD3(0.5, 0.25, 0.25), SIMD3(0.125, 0.75, 0), SIMD3(0, 0.5, 0.5), offset: SIMD3(0, 0, 0)), false),
            ("offset in one lane", ColorMatrix(SIMD3(0.5, 0.25, 0.25), SIMD3(0.125, 0.75, 0), SIMD3(0, 0.5, 0.5),
                                               offset: SIMD3(0, 0.25, 0)), true),
        ]
        for (name, matrix, hasOffset) in cases {
            let kernel = ColorMatrixKernel(matrix, name: name)
            #expect(kernel.schedule.hasOffset == hasOffset, "\(name): hasOffset")
            for c in 0..<3 where matrix.offset[c] == 0 {
                #expect(kernel.translation[c].bitPattern == (-0.0 as Float).bitPattern, "\(name): lane \(c) of a zero offset is not −0")
            }
            let input = [SIMD4<Float>](repeating: zero, count: 9)
            var rows = [("scalar", runRow(kernel, input, start: 1, variant: .scalar).row)]
            for schedule in Schedule.allCases {
                var row = input
                row.withUnsafeMutableBufferPointer { schedule.run(kernel, $0.baseAddress!, count: 9) }
                rows.append(("\(schedule)", row))
            }
            for (path, row) in rows {
                for pixel in row {
                    for c in 0..<3 {
                        // Every product is −0, so the sum is −0, and stays so where the offset is zero.
                        let expected: Float = matrix.offset[c] == 0 ? -0.0 : Float(matrix.offset[c])
                        #expect(pixel[c].bitPattern == expected.bitPattern, "\(name) \(path) channel \(c): \(pixel[c])")
                    }
                }
            }
        }
    }

    @Test("Sepia's SIMD4 variant is its matrix kernel, and follows a changed intensity")
    func sepiaUsesCurrentIntensity() {
        let input = fastPathPixels(33, seed: 77, specials: specialValues)
        for a in [0.25, 1, 3] {
            let direct = runRow(ColorMatrixKernel(.sepia(intensity: a)), input, start: 0).row
            #expect(zip(runRow(Sepia(intensity: a), input, start: 0).row, direct).allSatisfy(sameBits),
                    "sepia \(a): differs from ColorMatrixKernel(.sepia(intensity:))")
        }
        // A kernel whose intensity changes after init must use the new strength.
        var sepia = Sepia(intensity: 1)
        sepia.intensity = 0.4
        let expected = runRow(ColorMatrixKernel(.sepia(intensity: 0.4)), input, start: 0).row
        let full = runRow(Sepia(intensity: 1), input, start: 0).row
        let observed = runRow(sepia, input, start: 0).row
        #expect(zip(observed, expected).allSatisfy(sameBits), "sepia 1 → 0.4: not the 0.4 matrix")
        #expect(!zip(observed, full).allSatisfy(sameBits), "sepia 1 → 0.4: still the full-strength matrix")
        sepia.intensity = 0
        let untouched = runRow(sepia, input, start: 0).row
        #expect(zip(untouched, input).allSatisfy { p, q in (0..<4).allSatisfy { p[$0].bitPattern == q[$0].bitPattern } },
                "sepia 1 → 0: must leave the pixels untouched")
    }
}
