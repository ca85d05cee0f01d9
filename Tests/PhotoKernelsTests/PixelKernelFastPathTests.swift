import Testing
@testable import PhotoKernels

// Saturation, contrast, brightness, monochrome and exposure run their SIMD4 schedules
// two pixels per `SIMD8<Float>`. They must produce exactly the bits of the one-pixel
// loops they replaced, which are kept below, verbatim (commit 2e08f09), as oracles.

private func legacySaturation(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, saturation s: Float, _ alpha: AlphaMasks) {
    let w = Luma.weights
    for i in 0..<count {
        let v = p[i]
        let y = SIMD4(repeating: w.x * v.x + w.y * v.y + w.z * v.z)
        p[i] = (y + s * (v - y)).replacing(with: v, where: alpha.pixel)
    }
}

private func legacyContrast(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, contrast c: Float, _ alpha: AlphaMasks) {
    let half = SIMD4<Float>(repeating: 0.5), cv = SIMD4<Float>(repeating: c)
    for i in 0..<count {
        let v = p[i]
        p[i] = ((v - half) * cv + half).replacing(with: v, where: alpha.pixel)
    }
}

private func legacyBrightness(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, brightness b: Float, _ alpha: AlphaMasks) {
    let bv = SIMD4<Float>(repeating: b)
    for i in 0..<count {
        let v = p[i]
        p[i] = (v + bv).replacing(with: v, where: alpha.pixel)
    }
}

private func legacyMonochrome(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, k: SIMD4<Float>, intensity: Float,
                              _ alpha: AlphaMasks) {
    let w = Luma.weights
    let oneMinusK = 1 - k
    let i = SIMD4<Float>(repeating: intensity)
    for x in 0..<count {
        let v = p[x]
        let y = SIMD4<Float>(repeating: w.x * v.x + w.y * v.y + w.z * v.z)
        let dark = 2 * y * k
        let light = 1 - 2 * (1 - y) * oneMinusK
        let m = light.replacing(with: dark, where: y .< 0.5)
        p[x] = (v + i * (m - v)).replacing(with: v, where: alpha.pixel)
    }
}

private func legacyExposurePixel(_ v: SIMD4<Float>, scale: SIMD4<Float>, encodedGain: SIMD4<Float>,
                                 encodeSwitch: SIMD4<Float>, _ alpha: AlphaMasks) -> SIMD4<Float> {
    let negative = v .< 0
    let a = v.replacing(with: -v, where: negative)
    let decodeLinear = a .<= SRGBTransfer.decodeThreshold
    let encodeLinear = a .<= encodeSwitch
    let crossing = (decodeLinear .^ encodeLinear) .& alpha.colour
    let e: SIMD4<Float>
    if anyLane(crossing) {
        e = legacyExposureFull(a, scale: scale)
    } else {
        let powerPower = (a + 0.055) * encodedGain - 0.055
        e = powerPower.replacing(with: a * scale, where: decodeLinear)
    }
    let signed = e.replacing(with: -e, where: negative)
    return signed.replacing(with: v, where: alpha.pixel)
}

private func legacyExposureFull(_ a: SIMD4<Float>, scale: SIMD4<Float>) -> SIMD4<Float> {
    let linearSegment = a * (1 / 12.92 as Float)
    let powerSegment = VectorMath.pow((a + 0.055) * (1 / 1.055 as Float), 2.4)
    let l = powerSegment.replacing(with: linearSegment, where: a .<= SRGBTransfer.decodeThreshold) * scale
    let encodedLinear = l * 12.92
    let encodedPower = VectorMath.pow(l, 1 / 2.4) * 1.055 - 0.055
    return encodedPower.replacing(with: encodedLinear, where: l .<= SRGBTransfer.encodeThreshold)
}

/// Whether the old exposure schedule sends pixel `v` through the general formula.
private func legacyExposureCrosses(_ v: SIMD4<Float>, _ c: Exposure.Resolved) -> Bool {
    let a = v.replacing(with: -v, where: v .< 0)
    let crossing = ((a .<= SRGBTransfer.decodeThreshold) .^ (a .<= SIMD4(repeating: c.encodeSwitch)))
        .& AlphaMasks().colour
    return anyLane(crossing)
}

/// One kernel under test and its oracle (the old schedule, on a buffer in place).
private struct Subject: Sendable {
    let name: String
    let kernel: any PixelKernel
    let legacy: @Sendable (UnsafeMutablePointer<SIMD4<Float>>, Int) -> Void
}

private func saturation(_ s: Float) -> Subject {
    Subject(name: "saturation \(s)", kernel: Saturation(s)) { legacySaturation($0, count: $1, saturation: s, AlphaMasks()) }
}
private func contrast(_ c: Float) -> Subject {
    Subject(name: "contrast \(c)", kernel: Contrast(c)) { legacyContrast($0, count: $1, contrast: c, AlphaMasks()) }
}
private func brightness(_ b: Float) -> Subject {
    Subject(name: "brightness \(b)", kernel: Brightness(b)) { legacyBrightness($0, count: $1, brightness: b, AlphaMasks()) }
}
private func monochrome(_ m: Monochrome) -> Subject {
    let k = SIMD4<Float>(Float(m.color.x), Float(m.color.y), Float(m.color.z), 0)
    return Subject(name: "monochrome \(m.color) i \(m.intensity)", kernel: m) {
        legacyMonochrome($0, count: $1, k: k, intensity: Float(m.intensity), AlphaMasks())
    }
}
private func exposure(_ ev: Float) -> Subject {
    let c = Exposure(ev: ev).resolved
    return Subject(name: "exposure \(ev)", kernel: Exposure(ev: ev)) { p, count in
        for i in 0..<count {
            p[i] = legacyExposurePixel(p[i], scale: SIMD4(repeating: c.scale), encodedGain: SIMD4(repeating: c.encodedGain),
                                       encodeSwitch: SIMD4(repeating: c.encodeSwitch), AlphaMasks())
        }
    }
}

private let exposureEVs: [Float] = [-4, -2.5, -1, -0.3, 0.25, 1, 2.5, 4, 7]

private let subjects: [Subject] =
    [0, 0.37, 1.7, 2, -1].map(saturation)
    + [0, 0.5, 1.35, -1].map(contrast)
    + [-0.5, 0.05, 0.3].map(brightness)
    + [Monochrome(), .blackAndWhite, Monochrome(color: SIMD3(0.5, 0.5, 0.5), intensity: 1),
       Monochrome(color: SIMD3(0.9, -0.2, 1.3), intensity: 0.35), Monochrome(color: SIMD3(0.1, 0.8, 0.4), intensity: 2.5)]
        .map(monochrome)
    + exposureEVs.map(exposure)

/// Values that stress the arithmetic: NaNs with payloads (quiet, signalling,
/// negative), infinities, huge, tiny and subnormal values, signed zeros, values
/// above 1 and below 0, and the sRGB switch points.
private let specialValues: [Float] = [
    .nan, -.nan, Float(bitPattern: 0x7FC1_2345), Float(bitPattern: 0x7F80_0001), Float(bitPattern: 0xFFA0_0042),
    .infinity, -.infinity, 3e38, -3e38, Float(bitPattern: 0x0001_0000), Float(bitPattern: 0x8001_0000), 0, -0.0, 1, 255,
    -7.5, 0.5, 0.04045, -0.04045, 0.0031308, 1.5, -0.25,
]

/// The old schedule on a copy of `pixels`.
private func legacyRow(_ subject: Subject, _ pixels: [SIMD4<Float>]) -> [SIMD4<Float>] {
    var out = pixels
    out.withUnsafeMutableBufferPointer { subject.legacy($0.baseAddress!, $0.count) }
    return out
}

/// Compares the new schedule with the old one on `input` at starts 0 and 1 (32- and
/// 16-byte aligned in practice); records every differing pixel.
private func expectLegacy(_ subject: Subject, _ input: [SIMD4<Float>], _ what: String,
                          sourceLocation: SourceLocation = #_sourceLocation) {
    let expected = legacyRow(subject, input)
    for start in [0, 1] {
        let (row, guardsIntact) = runRow(subject.kernel, input, start: start)
        #expect(guardsIntact, "\(subject.name) \(what) start \(start): wrote outside the row", sourceLocation: sourceLocation)
        var failures = 0
        for i in input.indices where !sameBits(row[i], expected[i]) {
            failures += 1
            if failures <= 4 {
                Issue.record("\(subject.name) \(what) start \(start) pixel \(i) of \(input.count): input \(input[i]), old \(expected[i]), new \(row[i])",
                             sourceLocation: sourceLocation)
            }
        }
    }
}

/// Channel values on both sides of each sRGB switch point used by exposure at `ev`:
/// 0.04045 (decode), 0.0031308 (encode of the input) and the per-ev encode switch,
/// a few ulps either way, both signs.
private func thresholdValues(ev: Float) -> [Float] {
    let c = Exposure(ev: ev).resolved
    var values: [Float] = []
    for t in [SRGBTransfer.decodeThreshold, SRGBTransfer.encodeThreshold, c.encodeSwitch] {
        var below = t, above = t
        values.append(t)
        for _ in 0..<3 {
            below = below.nextDown; above = above.nextUp
            values += [below, above]
        }
    }
    return values + values.map { -$0 } + [0.2, 0.7, 0.01, 0.001]
}

@Suite("Per-pixel kernels' fast path (two pixels per SIMD8) keeps the old SIMD4 bits")
struct PixelKernelFastPathTests {
    @Test("bit-identical to the old one-pixel schedule: counts 1…33, 63, 64, two alignments, specials")
    func equalsLegacy() {
        for (n, subject) in subjects.enumerated() {
            for count in Array(1...33) + [63, 64] {
                expectLegacy(subject, fastPathPixels(count, seed: UInt64(n &* 1000 &+ count), specials: specialValues), "count \(count)")
            }
        }
    }

    @Test("exposure: threshold values on both sides of every sRGB switch, the general formula in one half only")
    func exposureThresholds() {
        for ev in exposureEVs {
            let subject = exposure(ev)
            let c = Exposure(ev: ev).resolved
            let values = thresholdValues(ev: ev)
            var rng = SeededGenerator(seed: UInt64(bitPattern: Int64(ev * 1000)))
            // Pixels whose channels all sit at switch points (some cross), and pixels
            // that surely take the shortcut, mixed so each kind lands in either half.
            var pixels: [SIMD4<Float>] = []
            for i in 0..<160 {
                func pick() -> Float { values[Int.random(in: 0..<values.count, using: &rng)] }
                let plain = SIMD4<Float>(0.5, 0.8, 0.25, 0.75)
                let edge = SIMD4<Float>(pick(), pick(), pick(), i % 3 == 0 ? 0.02 : Float(bitPattern: 0x7FC0_0077))
                pixels.append(Int.random(in: 0..<2, using: &rng) == 0 ? plain : edge)
            }
            // Every single threshold value alone in R, G and B, after a plain pixel
            // and before one (crossing in the high half, then in the low half).
            for v in values {
                for lane in 0..<3 {
                    var edge = SIMD4<Float>(0.5, 0.6, 0.7, 1)
                    edge[lane] = v
                    pixels += [SIMD4(0.3, 0.3, 0.3, 1), edge, SIMD4(0.9, 0.1, 0.4, 0.5)]
                }
            }
            // The test is only meaningful if some pairs cross in exactly one half.
            var oneHalf = 0, both = 0
            for pair in stride(from: 0, to: pixels.count - 1, by: 2) {
                let low = legacyExposureCrosses(pixels[pair], c), high = legacyExposureCrosses(pixels[pair + 1], c)
                if low != high { oneHalf += 1 } else if low { both += 1 }
            }
            #expect(oneHalf >= 20 && both >= 1, "ev \(ev): \(oneHalf) pairs cross in one half, \(both) in both")
            for count in [pixels.count, pixels.count - 1] {
                expectLegacy(subject, Array(pixels[..<count]), "thresholds, count \(count)")
            }
            // Shifted by one pixel, so each pixel meets the other neighbour.
            expectLegacy(subject, Array(pixels.dropFirst()), "thresholds, shifted")
        }
    }

    @Test("monochrome: luma exactly 0.5 and its neighbours take the same branch as before")
    func monochromeLumaHalf() {
        // Greens next to 0.5 with R = B = 0.5: some give a luma of exactly 0.5.
        var exact: [SIMD4<Float>] = [], near: [SIMD4<Float>] = []
        var g: Float = 0.5
        for _ in 0..<64 { g = g.nextDown }
        for _ in 0..<128 {
            let y = Luma.of(0.5, g, 0.5)
            if y == 0.5 { exact.append(SIMD4(0.5, g, 0.5, 1)) }
            if y == Float(0.5).nextDown || y == Float(0.5).nextUp { near.append(SIMD4(0.5, g, 0.5, 0.25)) }
            g = g.nextUp
        }
        #expect(!exact.isEmpty && !near.isEmpty, "no luma 0.5 found: \(exact.count) exact, \(near.count) near")
        var pixels: [SIMD4<Float>] = []
        for (i, p) in (exact + near).enumerated() {
            // Exactly-half pixels in the low and the high half, beside dark and light ones.
            pixels += i % 2 == 0 ? [p, SIMD4(0.1, 0.2, 0.1, 1)] : [SIMD4(0.9, 0.8, 0.95, 1), p]
        }
        let tints = [Monochrome(), Monochrome(color: SIMD3(0.9, -0.2, 1.3), intensity: 0.35),
                     Monochrome(color: SIMD3(0.1, 0.3, 0.7), intensity: 1)]
        for m in tints {
            let subject = monochrome(m)
            expectLegacy(subject, pixels, "luma 0.5")
            expectLegacy(subject, Array(pixels.dropFirst()), "luma 0.5, shifted")
        }
        // The two branches round differently at Y = 0.5 for some tint channel, so a
        // select that sent 0.5 to the dark branch would change the output.
        let differ = tints.contains { m in
            [m.color.x, m.color.y, m.color.z].contains { k in
                let k = Float(k), y: Float = 0.5
                return 2 * y * k != 1 - 2 * (1 - y) * (1 - k)
            }
        }
        #expect(differ, "the luma-0.5 test cannot tell the branches apart")
    }

    @Test("alpha is kept to the bit, NaN payloads and signalling NaNs included, in either half and the tail")
    func alphaBitExact() {
        let alphas: [UInt32] = [0x7FC1_2345, 0x7F80_0001, 0xFFA0_0042, 0xFFC0_0000, 0x7F80_0000, 0x8000_0000,
                                0x0000_0001, 0x3F80_0000, 0x4F00_0000]
        for subject in subjects {
            for count in 1...9 {
                let input = (0..<count).map { i in
                    SIMD4<Float>(Float(i) * 0.1 - 0.2, 0.003, .nan, Float(bitPattern: alphas[(i + count) % alphas.count]))
                }
                let (row, _) = runRow(subject.kernel, input, start: 0)
                for i in 0..<count {
                    #expect(row[i].w.bitPattern == input[i].w.bitPattern,
                            "\(subject.name) count \(count) pixel \(i): alpha \(String(input[i].w.bitPattern, radix: 16)) became \(String(row[i].w.bitPattern, radix: 16))")
                }
            }
        }
    }

    @Test("SIMD4 equals the scalar reference within SPEC §8 on counts 1…33, NaN and infinities included")
    func matchesScalarReference() {
        for (n, subject) in subjects.enumerated() {
            for count in 1...33 {
                // Beyond [−1, 2] only NaN and ±∞, where both schedules must agree exactly.
                let input = fastPathPixels(count, seed: UInt64(n &* 1000 &+ count &+ 500),
                                           specials: specialValues.filter { $0.isNaN || $0.isInfinite || (-1...2).contains($0) })
                let simd = runRow(subject.kernel, input, start: 1).row
                let scalar = runRow(subject.kernel, input, start: 1, variant: .scalar).row
                for i in 0..<count {
                    for c in 0..<4 {
                        let a = simd[i][c], b = scalar[i][c]
                        // §8's bound applies to inputs in [−1, 2]; elsewhere NaN and ±∞ must agree (a
                        // ±∞ or NaN elsewhere in the pixel reaches this channel only through Y,
                        // which both schedules compute the same way).
                        let ok = (a.isNaN && b.isNaN) || a == b || ((-1...2).contains(input[i][c]) && abs(a - b) <= 1e-5)
                        #expect(ok, "\(subject.name) count \(count) pixel \(i) channel \(c): input \(input[i]), SIMD4 \(a), scalar \(b)")
                    }
                    #expect(simd[i].w.bitPattern == input[i].w.bitPattern, "\(subject.name): alpha changed")
                }
            }
        }
    }

    @Test("whole images through the row driver equal the old schedule, widths 1…33, odd heights")
    func imagesEqualLegacy() {
        for subject in [saturation(1.7), contrast(1.35), brightness(0.05), monochrome(Monochrome()), exposure(-1.5)] {
            for (w, h) in testShapes {
                let input = randomImage(width: w, height: h, seed: 611, nanEvery: 5)
                let output = run([subject.kernel], on: input, .simd4)
                var expected = input.pixels
                for y in 0..<h {
                    expected.withUnsafeMutableBufferPointer { subject.legacy($0.baseAddress! + y * w, w) }
                }
                #expect(zip(output.pixels, expected).allSatisfy(sameBits), "\(subject.name) \(w)×\(h): differs from the old schedule")
            }
        }
    }
}
