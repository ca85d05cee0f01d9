import Testing
@testable import PhotoKernels

// Saturation, contrast, brightness, monochrome and exposure run their vector schedules
// two pixels per `SIMD8<Float>`; the scalar reference beside each is the oracle.

/// One kernel under test.
private struct Subject: Sendable {
    let name: String
    let kernel: any PixelKernel
}

private let exposureEVs: [Float] = [-4, -2.5, -1, -0.3, 0.25, 1, 2.5, 4, 7]

private let subjects: [Subject] =
    [0, 0.37, 1.7, 2, -1].map { Subject(name: "saturation \($0)", kernel: Saturation(Float($0))) }
    + [0, 0.5, 1.35, -1].map { Subject(name: "contrast \($0)", kernel: Contrast(Float($0))) }
    + [-0.5, 0.05, 0.3].map { Subject(name: "brightness \($0)", kernel: Brightness(Float($0))) }
    + [Monochrome(), .blackAndWhite, Monochrome(color: SIMD3(0.5, 0.5, 0.5), intensity: 1),
       Monochrome(color: SIMD3(0.9, -0.2, 1.3), intensity: 0.35), Monochrome(color: SIMD3(0.1, 0.8, 0.4), intensity: 2.5)]
        .map { Subject(name: "monochrome \($0.color) \($0.intensity)", kernel: $0) }
    + exposureEVs.map { Subject(name: "exposure \($0)", kernel: Exposure(ev: $0)) }

/// Values that stress the arithmetic: NaNs with payloads (quiet, signalling,
/// negative), infinities, huge, tiny and subnormal values, signed zeros, values
/// above 1 and below 0, and the sRGB switch points.
private let specialValues: [Float] = [
    .nan, -.nan, Float(bitPattern: 0x7FC1_2345), Float(bitPattern: 0x7F80_0001), Float(bitPattern: 0xFFA0_0042),
    .infinity, -.infinity, 3e38, -3e38, Float(bitPattern: 0x0001_0000), Float(bitPattern: 0x8001_0000), 0, -0.0, 1, 255,
    -7.5, 0.5, 0.04045, -0.04045, 0.0031308, 1.5, -0.25,
]

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

@Suite("Per-pixel kernels' vector schedules against their scalar references")
struct PixelKernelFastPathTests {
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

    @Test("SIMD4 equals the scalar reference within SPEC §8 on counts 1…33, from a 32-byte boundary and 16 bytes past one, NaN and infinities included")
    func matchesScalarReference() {
        for (n, subject) in subjects.enumerated() {
            for count in 1...33 {
                // Beyond [−1, 2] only NaN and ±∞, where both schedules must agree exactly.
                let input = fastPathPixels(count, seed: UInt64(n &* 1000 &+ count &+ 500),
                                           specials: specialValues.filter { $0.isNaN || $0.isInfinite || (-1...2).contains($0) })
                for start in [0, 1] {
                    let simd = runRow(subject.kernel, input, start: start).row
                    let scalar = runRow(subject.kernel, input, start: start, variant: .scalar).row
                    for i in 0..<count {
                        for c in 0..<4 {
                            let a = simd[i][c], b = scalar[i][c]
                            // §8's bound applies to inputs in [−1, 2]; elsewhere NaN and ±∞ must agree (a
                            // ±∞ or NaN elsewhere in the pixel reaches this channel only through Y,
                            // which both schedules compute the same way).
                            let ok = (a.isNaN && b.isNaN) || a == b || ((-1...2).contains(input[i][c]) && abs(a - b) <= 1e-5)
                            #expect(ok, "\(subject.name) count \(count) start \(start) pixel \(i) channel \(c): input \(input[i]), SIMD4 \(a), scalar \(b)")
                        }
                        #expect(simd[i].w.bitPattern == input[i].w.bitPattern, "\(subject.name): alpha changed")
                    }
                }
            }
        }
    }

    @Test("exposure: values on both sides of every sRGB switch point agree with the scalar reference (SPEC §8)")
    func exposureThresholds() {
        for ev in exposureEVs {
            let values = thresholdValues(ev: ev)
            let input = values.indices.map { i in
                SIMD4<Float>(values[i], values[(i + 1) % values.count], values[(i + 2) % values.count], 0.5)
            }
            let kernel = Exposure(ev: ev)
            for start in [0, 1] {
                let (simd, guardsIntact) = runRow(kernel, input, start: start)
                let scalar = runRow(kernel, input, start: start, variant: .scalar).row
                #expect(guardsIntact, "exposure \(ev): wrote outside the row")
                for i in input.indices {
                    for c in 0..<3 {
                        #expect(abs(simd[i][c] - scalar[i][c]) <= 1e-5,
                                "exposure \(ev) pixel \(i) channel \(c): input \(input[i][c]), SIMD4 \(simd[i][c]), scalar \(scalar[i][c])")
                    }
                }
            }
        }
    }
}

@Suite("The 128-bit schedules' in-place pixel loop")
struct PixelLoopTests {
    @Test("every pixel's colour replaced once and its alpha's bits kept (signalling NaNs too), nothing past the count touched: counts 0…33 (blocks of four and the last pixels alone), 1027, 4099 (long enough for four streams where the walk interleaves), with and without prefetches",
          arguments: [true, false])
    func everyPixelOnce(prefetching: Bool) {
        for count in Array(0...33) + [1027, 4099] {
            // One sentinel pixel past the count, which the loop must leave alone.
            let alphaBits = (0...count).map { UInt32(0x7FA0_0000) | UInt32($0) }
            var pixels = (0...count).map { i in
                SIMD4<Float>(Float(i), Float(i) + 0.25, Float(i) + 0.5, Float(bitPattern: alphaBits[i]))
            }
            pixels.withUnsafeMutableBufferPointer { buffer in
                forEachPixelInPlace(buffer.baseAddress!, count: count, prefetching: prefetching) { $0 * 2 + 1 }
            }
            for i in 0..<count {
                let x = Float(i)
                #expect(pixels[i].x == 2 * x + 1 && pixels[i].y == 2 * (x + 0.25) + 1 && pixels[i].z == 2 * (x + 0.5) + 1,
                        "count \(count), pixel \(i): \(pixels[i])")
                #expect(pixels[i].w.bitPattern == alphaBits[i], "count \(count), pixel \(i): alpha \(pixels[i].w.bitPattern)")
            }
            #expect(pixels[count].x == Float(count) && pixels[count].w.bitPattern == alphaBits[count],
                    "count \(count): the pixel past the count changed to \(pixels[count])")
        }
    }
}
