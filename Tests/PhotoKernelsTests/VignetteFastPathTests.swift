import Foundation
import Testing
@testable import PhotoKernels

// The vignette's SIMD4 schedule computes a row's gains first (eight lanes at a time,
// with constant spans where the row is entirely inside r0 or beyond r1), then scales
// the pixels. It must produce exactly the bits of the schedule it replaced, which is
// kept below, verbatim, as the oracle.

/// The SIMD4 schedule as it was before the two-pass rewrite (commit 5e89bc7), kept
/// verbatim as a bit-exact oracle: four gains per vector, the band formula only when
/// some lane is in the band, each pixel scaled by its lane.
private func legacyApplySIMD4(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, dy: Float, _ g: Vignette.Resolved) {
    let dy2 = SIMD4<Float>(repeating: dy * dy)
    let cx = SIMD4<Float>(repeating: g.cx), r0 = SIMD4<Float>(repeating: g.r0)
    let inner2 = SIMD4<Float>(repeating: g.inner2), outer2 = SIMD4<Float>(repeating: g.outer2)
    let inverseWidth = SIMD4<Float>(repeating: g.inverseWidth)
    let intensity = SIMD4<Float>(repeating: g.intensity)
    let laneOffsets = SIMD4<Float>(0, 1, 2, 3)
    var x = 0
    while x < count {
        let dx = ((laneOffsets + Float(x)) + 0.5) - cx
        let d2 = dx * dx + dy2
        let inside = d2 .< inner2, outside = d2 .>= outer2
        var t = SIMD4<Float>(repeating: 0).replacing(with: 1, where: outside)
        if anyLane(.!(inside .| outside)) {
            let u = (d2.squareRoot() - r0) * inverseWidth
            let band = u * u * (3 - 2 * u)
            t = band.replacing(with: t, where: inside .| outside)
        }
        let gains = 1 - intensity * t
        for k in 0..<min(4, count - x) {
            let v = p[x + k]
            p[x + k] = (v * SIMD4(repeating: gains[k])).replacing(with: v, where: [false, false, false, true])
        }
        x += 4
    }
}

/// Geometries beyond `vignetteSamples`: off-centre rings with a non-integer centre and
/// r0 > 0 that cross the row several ways, hard edges (falloff 0 and a negative
/// falloff, r1 < r0), negative and huge intensities, and degenerate numbers the API
/// boundary would reject but the kernel must still treat like the old schedule.
private let fastPathSamples: [Vignette] = vignetteSamples + [
    .vignetteEffect(center: SIMD2(10.25, 3.75), radius: 8, intensity: 0.6, falloff: 0.5),
    .vignetteEffect(center: SIMD2(17.3, -2.6), radius: 6.5, intensity: -0.75, falloff: 0.2),
    .vignetteEffect(center: SIMD2(5.5, 2.5), radius: 5, intensity: 1, falloff: 0),
    .vignetteEffect(center: SIMD2(7.1, 1.9), radius: 4.2, intensity: 0.9, falloff: -0.3),
    .vignetteEffect(center: SIMD2(40, 30), radius: 2, intensity: 0.5, falloff: 0.5),
    .vignetteEffect(center: SIMD2(3.3, 2.2), radius: 1000, intensity: 0.5, falloff: 0.001),
    .vignette(intensity: 1e39, radius: 0.5),
    .vignetteEffect(center: SIMD2(.nan, 2), radius: 4, intensity: 1, falloff: 0.5),
    .vignetteEffect(center: SIMD2(-.infinity, 2), radius: 4, intensity: 0.5, falloff: 0.5),
    .vignetteEffect(radius: .infinity, intensity: 0.5, falloff: 0.5),
]

/// Rows of images too large for a debug test, addressed by `RowLocation` alone: the
/// benchmark's 4032 × 3024 frame and a 4099-pixel width (odd, beyond the chunk size).
private let largeRows: [(width: Int, height: Int, rows: [Int])] = [
    (4032, 3024, [0, 700, 1511, 1512, 3023]),
    (4099, 2049, [0, 1024, 2048]),
    (1031, 7, [3]),
]

/// A row of `count` random pixels in [−1, 2], with a quiet NaN, a signalling NaN, a
/// negative zero and an infinity placed in R, G, B or A (SPEC §0: a NaN stays local).
private func randomRow(_ count: Int, seed: UInt64) -> [SIMD4<Float>] {
    var rng = SeededGenerator(seed: seed)
    var row = (0..<count).map { _ in
        SIMD4<Float>(Float.random(in: -1...2, using: &rng), Float.random(in: -1...2, using: &rng),
                     Float.random(in: -1...2, using: &rng), Float.random(in: 0...1, using: &rng))
    }
    let specials: [Float] = [.nan, Float(bitPattern: 0x7FA0_0001), -0.0, .infinity]
    for i in stride(from: 5, to: count, by: 9) { row[i][i % 4] = specials[(i / 9) % specials.count] }
    return row
}

/// Applies `vignette` to a copy of `row` as row `y` of a `width × height` image.
private func applied(_ vignette: Vignette, _ row: [SIMD4<Float>], y: Int, width: Int, height: Int,
                     _ variant: KernelVariant) -> [SIMD4<Float>] {
    var out = row
    out.withUnsafeMutableBufferPointer {
        vignette.apply($0, at: RowLocation(y: y, imageWidth: width, imageHeight: height), variant: variant)
    }
    return out
}

/// The old schedule on a copy of `row` (row `y` of a `width × height` image).
private func legacy(_ vignette: Vignette, _ row: [SIMD4<Float>], y: Int, width: Int, height: Int) -> [SIMD4<Float>] {
    var out = row
    guard !vignette.isIdentity else { return out }
    let g = Vignette.Resolved(vignette.geometry(width: width, height: height))
    out.withUnsafeMutableBufferPointer {
        legacyApplySIMD4($0.baseAddress!, count: $0.count, dy: (Float(y) + 0.5) - g.cy, g)
    }
    return out
}

/// Whether two rows are equal to the bit, NaN payloads and signs of zero included.
private func bitEqual(_ a: [SIMD4<Float>], _ b: [SIMD4<Float>]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { p, q in (0..<4).allSatisfy { p[$0].bitPattern == q[$0].bitPattern } }
}

/// The first pixel where two rows differ in bits, for failure messages.
private func firstDifference(_ a: [SIMD4<Float>], _ b: [SIMD4<Float>]) -> String {
    guard a.count == b.count, let i = a.indices.first(where: { i in
        (0..<4).contains { a[i][$0].bitPattern != b[i][$0].bitPattern }
    }) else { return "sizes \(a.count), \(b.count)" }
    return "x = \(i): \(a[i]) vs \(b[i])"
}

/// FNV-1a over the bit patterns of every channel.
private func fnv1a(_ row: [SIMD4<Float>], into hash: inout UInt64) {
    for p in row {
        for c in 0..<4 {
            var bits = p[c].bitPattern
            for _ in 0..<4 {
                hash = (hash ^ UInt64(bits & 0xFF)) &* 0x100_0000_01B3
                bits >>= 8
            }
        }
    }
}

@Suite("Vignette SIMD4 fast path: the two-pass schedule keeps the old bits")
struct VignetteFastPathTests {
    @Test("bit-identical to the old SIMD4 schedule: widths 1…33, odd heights, every sample geometry")
    func equalsLegacySmall() {
        for (n, vignette) in fastPathSamples.enumerated() {
            for (w, h) in testShapes {
                for y in 0..<h {
                    let row = randomRow(w, seed: UInt64(n * 100_000 + w * 100 + y))
                    let new = applied(vignette, row, y: y, width: w, height: h, .simd4)
                    let old = legacy(vignette, row, y: y, width: w, height: h)
                    #expect(bitEqual(new, old), "\(vignette.form) \(w)×\(h) row \(y): \(firstDifference(new, old))")
                }
            }
        }
    }

    @Test("bit-identical to the old SIMD4 schedule on rows of 4032 × 3024 and 4099-wide images")
    func equalsLegacyLarge() {
        let vignettes: [Vignette] = [
            .vignette(intensity: 1, radius: 1), .vignetteEffect(), .vignette(intensity: -0.5, radius: 0.3),
            .vignetteEffect(center: SIMD2(2049.3, 700.7), radius: 1200.4, intensity: 0.8, falloff: 0.3),
            .vignetteEffect(center: SIMD2(-100.5, 1024.25), radius: 2500, intensity: 1, falloff: 0),
            .vignetteEffect(center: SIMD2(3000.75, 5), radius: 300, intensity: 2, falloff: 0.9),
        ]
        // Plus widths around the 256-pixel chunk, with bands starting mid-chunk.
        let shapes = largeRows + [(255, 9, [0, 4]), (256, 9, [2, 8]), (257, 9, [0, 4, 8]), (520, 3, [1])]
        for (n, vignette) in vignettes.enumerated() {
            for (w, h, rows) in shapes {
                for y in rows {
                    let row = randomRow(w, seed: UInt64(7_000 + n * 10 + y))
                    let new = applied(vignette, row, y: y, width: w, height: h, .simd4)
                    let old = legacy(vignette, row, y: y, width: w, height: h)
                    #expect(bitEqual(new, old), "\(vignette.form) \(w)×\(h) row \(y): \(firstDifference(new, old))")
                }
            }
        }
    }

    @Test("outputs hash to the values recorded from the old SIMD4 schedule before the rewrite")
    func recordedHashes() {
        // Recorded by running `apply(_:at:variant: .simd4)` of commit 5e89bc7 on these
        // exact rows; any change of a bit in any of them changes the hash.
        let recorded: [UInt64] = [
            0x3F1CF78CF1ADE72, 0xD964896C1ABFCE3B, 0xCE650DAC3D9FC2CF, 0xEF887D74129F06CF,
            0x6B51AF7B1D6EDDD1, 0x6C63CE94E646E4E0, 0x105E2DB7891685AB, 0x564425D03B3F7CFD,
            0x92278A6199FC5274, 0x3A5288BB4892F1C3, 0xD778A83556F0E3AF, 0x6F51823A42720CB1,
            0xC072131190B5928F, 0xAE25513026D0DF75, 0x35455EA0386B99FD, 0x4F22D36E9CF6B77F,
            0x31EA6741A7D4B694, 0xE292EE1DD4BFDEA, 0x61AB9F1E707AECE1,
        ]
        var hashes: [UInt64] = []
        for (n, vignette) in fastPathSamples.enumerated() {
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for (w, h, rows) in largeRows + [(33, 5, [0, 2, 4]), (17, 3, [0, 1, 2])] {
                for y in rows {
                    fnv1a(applied(vignette, randomRow(w, seed: UInt64(90_000 + n * 10 + y)), y: y, width: w, height: h, .simd4),
                          into: &hash)
                }
            }
            hashes.append(hash)
        }
        for (n, (hash, old)) in zip(hashes, recorded).enumerated() {
            #expect(hash == old, "\(fastPathSamples[n].form)")
        }
        #expect(hashes.count == recorded.count)
    }

    @Test("SIMD4 within SPEC §8 of the scalar reference, and the same inside/outside decisions to the bit")
    func decisionsMatchScalar() {
        let finite = fastPathSamples.filter { v in
            v.parameters.allSatisfy { $0.value.isFinite && abs($0.value) < 1e6 }
        }
        #expect(finite.count == fastPathSamples.count - 4)
        var counts = (inside: 0, outside: 0, band: 0)
        for (n, vignette) in finite.enumerated() {
            let shapes = testShapes.map { ($0.width, $0.height, Array(0..<$0.height)) } + [(4032, 3024, [0, 1512]), (257, 9, [4])]
            for (w, h, rows) in shapes {
                let g = Vignette.Resolved(vignette.geometry(width: w, height: h))
                let insideGain = 1 - g.intensity * 0, outsideGain = 1 - g.intensity * 1
                for y in rows {
                    let location = RowLocation(y: y, imageWidth: w, imageHeight: h)
                    var white = [SIMD4<Float>](repeating: SIMD4(1, 1, 1, 1), count: w)
                    let row = randomRow(w, seed: UInt64(500 + n * 1000 + y))
                    let simdRow = applied(vignette, row, y: y, width: w, height: h, .simd4)
                    let scalarRow = applied(vignette, row, y: y, width: w, height: h, .scalar)
                    var whiteScalar = white
                    white.withUnsafeMutableBufferPointer { vignette.apply($0, at: location, variant: .simd4) }
                    whiteScalar.withUnsafeMutableBufferPointer { vignette.apply($0, at: location, variant: .scalar) }
                    let dy = (Float(y) + 0.5) - g.cy
                    var failures: [String] = []
                    for x in 0..<w {
                        // The scalar reference's own decision, from its own d.
                        let dx = (Float(x) + 0.5) - g.cx
                        let d = (dx * dx + dy * dy).squareRoot()
                        let simd = white[x].x.bitPattern, scalar = whiteScalar[x].x.bitPattern
                        if d < g.r0 {
                            counts.inside += 1
                            if simd != insideGain.bitPattern || scalar != insideGain.bitPattern { failures.append("inside x = \(x)") }
                        } else if d >= (g.r1 <= g.r0 ? g.r0 : g.r1) {
                            counts.outside += 1
                            if simd != outsideGain.bitPattern || scalar != outsideGain.bitPattern { failures.append("outside x = \(x)") }
                        } else {
                            counts.band += 1
                            if !(abs(white[x].x - whiteScalar[x].x) <= 1e-5) { failures.append("band x = \(x)") }
                        }
                        for c in 0..<4 {
                            let a = simdRow[x][c], b = scalarRow[x][c]
                            if !(a.isNaN ? b.isNaN : abs(a - b) <= 1e-5 || a == b) { failures.append("SPEC §8 x = \(x) channel \(c)") }
                        }
                    }
                    #expect(failures.isEmpty, "\(vignette.form) \(w)×\(h) row \(y): \(failures.prefix(5)) of \(failures.count)")
                }
            }
        }
        // The sweep reaches all three cases, many times each.
        #expect(counts.inside > 10_000 && counts.outside > 10_000 && counts.band > 10_000, "\(counts)")
    }

    @Test("constant spans: never longer than the true spans, and only a few pixels shorter")
    func spans() {
        let vignettes: [Vignette] = [
            .vignetteEffect(), .vignette(intensity: 1, radius: 0.5),
            .vignetteEffect(center: SIMD2(2049.3, 700.7), radius: 1200.4, intensity: 0.8, falloff: 0.3),
            .vignetteEffect(center: SIMD2(-100.5, 1024.25), radius: 2500, intensity: 1, falloff: 0),
            .vignetteEffect(center: SIMD2(10.25, 3.75), radius: 8, intensity: 0.6, falloff: 0.5),
            .vignetteEffect(center: SIMD2(-300.5, 20.25), radius: 250, intensity: 0.5, falloff: 0.1),
            .vignetteEffect(center: SIMD2(4400.5, 1000), radius: 350, intensity: 0.5, falloff: 0.1),
        ]
        var nonEmpty = (outside: 0, inside: 0)
        for vignette in vignettes {
            for (w, h) in [(4032, 3024), (4099, 2049), (21, 9)] {
                let g = Vignette.Resolved(vignette.geometry(width: w, height: h))
                for y in stride(from: 0, to: h, by: max(1, h / 37)) {
                    let dy = (Float(y) + 0.5) - g.cy, dy2 = dy * dy
                    let (a, b, c, e) = Vignette.constantSpans(count: w, dy: dy, g)
                    let what = "\(vignette.form) \(w)×\(h) row \(y): spans \((a, b, c, e))"
                    #expect(0 <= a && a <= b && b <= c && c <= e && e <= w, "\(what)")
                    func d2(_ x: Int) -> Float { let dx = (Float(x) + 0.5) - g.cx; return dx * dx + dy2 }
                    let outside = (0..<w).map { d2($0) >= g.outer2 }, inside = (0..<w).map { d2($0) < g.inner2 }
                    #expect((0..<a).allSatisfy { outside[$0] } && (e..<w).allSatisfy { outside[$0] } && (b..<c).allSatisfy { inside[$0] },
                            "\(what): a constant span holds a pixel of another gain")
                    // Constant pixels left to the band formula: one or two at each of the
                    // four span ends, not a whole span whose check failed.
                    let missed = (Array(a..<b) + Array(c..<e)).filter { inside[$0] || outside[$0] }.count
                    #expect(missed <= 8, "\(what): \(missed) constant pixels in the band")
                    if a > 0 || e < w { nonEmpty.outside += 1 }
                    if b < c { nonEmpty.inside += 1 }
                }
            }
        }
        #expect(nonEmpty.outside > 50 && nonEmpty.inside > 50, "\(nonEmpty)")
    }

    @Test("hand-computed gains of an off-centre ring with a non-integer centre, r0 = 4, r1 = 12")
    func handComputedGains() {
        // vignetteEffect(center (10.25, 3.75), R 8, falloff 0.5): r0 = 4, r1 = 12; a
        // 24 × 8 image of white, so each pixel's R is its gain. With p = (x + 0.5, y + 0.5):
        // (14, 3): dx = 4.25, dy = −0.25, d = √18.125 = 4.257347, u = 0.257347/8 = 0.032168,
        //          t = u²(3 − 2u) = 0.0030378, g = 1 − 0.6·t = 0.998177
        // (2, 0):  d = √70.625 = 8.403868, u = 0.550484, t = 0.575468, g = 0.654719
        // (20, 7): d = √119.125 = 10.914440, u = 0.864305, t = 0.949758, g = 0.430145
        // (12, 3): d = √5.125 = 2.263846 < r0: g = 1 exactly
        // (23, 3): d = √175.625 = 13.252 ≥ r1: g = 1 − 0.6 = 0.4
        // Intensity −0.5: (0, 0): d = √105.625 = 10.277402, t = 0.880873, g = 1.440436;
        //                 (17, 6): d = √60.125 = 7.754031, t = 0.453939, g = 1.226969
        let cases: [(intensity: Double, x: Int, y: Int, gain: Float)] = [
            (0.6, 14, 3, 0.998177), (0.6, 2, 0, 0.654719), (0.6, 20, 7, 0.430145), (0.6, 12, 3, 1), (0.6, 23, 3, 0.4),
            (-0.5, 0, 0, 1.440436), (-0.5, 17, 6, 1.226969),
        ]
        for c in cases {
            let vignette = Vignette.vignetteEffect(center: SIMD2(10.25, 3.75), radius: 8, intensity: c.intensity, falloff: 0.5)
            for variant in KernelVariant.allCases {
                let p = run([vignette], on: FloatImage(width: 24, height: 8, color: SIMD4(1, 0.5, 2, 0.75)), variant)[c.x, c.y]
                #expect(abs(p.x - c.gain) <= 1e-6 && abs(p.y - 0.5 * c.gain) <= 1e-6 && abs(p.z - 2 * c.gain) <= 1e-6,
                        "\(variant) i = \(c.intensity) (\(c.x), \(c.y)): \(p), expected gain \(c.gain)")
                #expect(p.w == 0.75)
            }
        }
    }

    @Test("alpha keeps its bits (signalling NaN, −0, ∞ included) and a NaN pixel changes no other pixel")
    func alphaAndNaN() {
        for vignette in fastPathSamples where !vignette.isIdentity {
            for (w, h, y) in [(33, 5, 2), (4032, 3024, 1512), (257, 9, 0)] {
                var row = randomRow(w, seed: 77)
                row[1].w = Float(bitPattern: 0x7F80_0001)
                row[w - 1].w = -0.0
                let out = applied(vignette, row, y: y, width: w, height: h, .simd4)
                #expect(zip(out, row).allSatisfy { $0.w.bitPattern == $1.w.bitPattern }, "\(vignette.form) \(w)×\(h): alpha changed")
                var dirty = row
                dirty[w / 2] = SIMD4(.nan, 0.25, 0.5, 1)
                let dirtyOut = applied(vignette, dirty, y: y, width: w, height: h, .simd4)
                for x in 0..<w where x != w / 2 {
                    #expect((0..<4).allSatisfy { out[x][$0].bitPattern == dirtyOut[x][$0].bitPattern },
                            "\(vignette.form) \(w)×\(h): NaN at \(w / 2) changed pixel \(x)")
                }
            }
        }
    }

    @Test("band gains far along a row (2^24 − 64 … 2^26) round the lane positions as the old schedule did")
    func bandGainsFarAlong() {
        for x0 in [64, 1 << 24 - 64, 1 << 24 - 8, 1 << 24, 1 << 25 + 16, 1 << 26 - 64] {
            for (cxOffset, radius, falloff) in [(3.3, 20.0, 0.5), (-11.7, 9.0, 0), (0.5, 1e7, 0.5)] {
                let geometry = Vignette.Geometry(center: SIMD2(Double(x0) + cxOffset, 2.75), innerRadius: radius * (1 - falloff),
                                                 outerRadius: radius * (1 + falloff), intensity: 0.7)
                let g = Vignette.Resolved(geometry)
                let dy: Float = (Float(5) + 0.5) - g.cy, blocks = 8
                var out = [SIMD8<Float>](repeating: .zero, count: blocks)
                out.withUnsafeMutableBufferPointer { Vignette.bandGains($0.baseAddress!, from: x0, blocks: blocks, dy: dy, g) }
                for i in 0..<(8 * blocks) {
                    // The old schedule, one lane at a time: lanes of a 4-pixel block at x4.
                    let x = x0 + i, x4 = x & ~3
                    let dx = ((Float(x - x4) + Float(x4)) + 0.5) - g.cx
                    let d2 = dx * dx + dy * dy
                    let t: Float = d2 < g.inner2 ? 0 : d2 >= g.outer2 ? 1 : {
                        let u = (d2.squareRoot() - g.r0) * g.inverseWidth
                        return u * u * (3 - 2 * u)
                    }()
                    let expected = 1 - g.intensity * t
                    #expect(out[i / 8][i % 8].bitPattern == expected.bitPattern,
                            "x0 = \(x0) centre +\(cxOffset) lane \(i): \(out[i / 8][i % 8]) vs \(expected)")
                }
            }
        }
    }
}
