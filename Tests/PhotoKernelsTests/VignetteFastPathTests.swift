import Foundation
import Testing
@testable import PhotoKernels

// The vignette's SIMD4 schedule computes a row's gains eight lanes at a time (with
// constant spans where the row is entirely inside r0 or beyond r1), a chunk into a
// buffer, then scales the pixels by them; the scalar reference is its oracle.

/// Geometries beyond `vignetteSamples`: off-centre rings with a non-integer centre and
/// r0 > 0 that cross the row several ways, hard edges (falloff 0 and a negative
/// falloff, r1 < r0), negative and huge intensities, and degenerate numbers the API
/// boundary would reject but the kernel must still treat like the scalar reference.
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
    // Alpha gets each special too, at every place in a block of four and in the tails.
    let alphas: [Float] = [.nan, Float(bitPattern: 0x7FA0_0001), Float(bitPattern: 0xFFC0_1234), .infinity, -.infinity, -0.0]
    for i in stride(from: 2, to: count, by: 7) { row[i].w = alphas[(i / 7) % alphas.count] }
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

/// Runs `schedules` on pieces `[x0, x0 + count)` of widths 1…33 from 17 starts (every
/// phase of a block of 8, twice) and on the whole row, for rows 0, h/2 and h − 1 of
/// 33×5, 257×9 and 2053×3 images (a whole row of the last long enough for four
/// interleaved streams, `MemoryStreams`) and each of `vignettes`, with the piece's pixels of a random
/// row, each piece both on a 32-byte boundary and 16 bytes past one (the last
/// argument, `inPlace`'s `start`); expects its two results to agree to the bit.
/// Returns how many pixels it compared.
private func comparePieces(
    _ vignettes: [Vignette], seed: UInt64,
    _ schedules: (Vignette, Int, Int, Int, Int, Int, [SIMD4<Float>], Int) -> ([SIMD4<Float>], [SIMD4<Float>])
) -> Int {
    var compared = 0
    for (n, vignette) in vignettes.enumerated() {
        for (w, h) in [(33, 5), (257, 9), (2053, 3)] {
            for y in [0, h / 2, h - 1] {
                let row = randomRow(w, seed: seed + UInt64(100 * n + y))
                let pieces = (0..<min(17, w)).flatMap { x0 in (1...min(33, w - x0)).map { (x0, $0) } } + [(0, w)]
                for (x0, count) in pieces {
                    for start in 0...1 {
                        let (a, b) = schedules(vignette, w, h, y, x0, count, Array(row[x0..<(x0 + count)]), start)
                        let bits = { (v: SIMD4<Float>) in [v.x.bitPattern, v.y.bitPattern, v.z.bitPattern, v.w.bitPattern] }
                        let differing = (0..<count).filter { bits(a[$0]) != bits(b[$0]) }
                        #expect(differing.isEmpty, "\(vignette.form) \(w)×\(h) row \(y), pixels \(x0)..<\(x0 + count), start \(start): \(differing.count) differ")
                        compared += count
                    }
                }
            }
        }
    }
    return compared
}

@Suite("Vignette SIMD4 fast path: spans, gains and the two-pass schedule")
struct VignetteFastPathTests {
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

    /// Rings whose gains a `Float` evaluation gets wrong by more than SPEC §8's window:
    /// narrow bands (a slope of up to 1.5·i/(r1 − r0) per pixel) around centres that
    /// `Float` cannot hold (1229.1 is 3·10⁻⁵ pixels from the nearest `Float`).
    static let narrowRings: [(Vignette, Int, Int)] = [
        (.relativeVignetteEffect(center: SIMD2(0.3, 0.6), radius: 0.7, intensity: 0.9, falloff: 0.6), 4097, 67),
        (.vignetteEffect(center: SIMD2(1000.3, -580.7), radius: 600, intensity: 0.9, falloff: 0.02), 2048, 32),
        (.vignetteEffect(center: SIMD2(-2500.45, 30.2), radius: 3000, intensity: 1, falloff: 0.001), 600, 64),
    ]

    @Test("a plan's gains: spans never longer than the true ones (the Double formula gives their gain), a few pixels shorter at most")
    func planSpans() {
        let vignettes: [Vignette] = [
            .vignetteEffect(), .vignette(intensity: 1, radius: 0.5), .vignette(intensity: 0.8, radius: 0),
            .vignetteEffect(center: SIMD2(2049.3, 700.7), radius: 1200.4, intensity: 0.8, falloff: 0.3),
            .vignetteEffect(center: SIMD2(-100.5, 1024.25), radius: 2500, intensity: 1, falloff: 0),
            // Hard edges through pixel centres: d = 12 exactly at (28, 2) and (4, 2); d = 5,
            // 13 and 25 at pixels (3, 4), (5, 12), (7, 24), (15, 20) from the centre.
            .vignetteEffect(center: SIMD2(16.5, 2.5), radius: 12, intensity: 1, falloff: 0),
            .vignetteEffect(center: SIMD2(10.5, 10.5), radius: 5, intensity: 1, falloff: 0),
            .vignetteEffect(center: SIMD2(16.5, 12.5), radius: 13, intensity: 0.7, falloff: 0),
            .vignetteEffect(center: SIMD2(26.5, 24.5), radius: 25, intensity: 1, falloff: 0),
            .vignetteEffect(center: SIMD2(10.25, 3.75), radius: 8, intensity: 0.6, falloff: 0.5),
            .vignetteEffect(center: SIMD2(-300.5, 20.25), radius: 250, intensity: 0.5, falloff: 0.1),
            .vignetteEffect(center: SIMD2(4400.5, 1000), radius: 350, intensity: 0.5, falloff: 0.1),
            .vignetteEffect(center: SIMD2(40, 10), radius: -30, intensity: 0.7, falloff: -0.4),
            .vignetteEffect(center: SIMD2(40, 10), radius: 30, intensity: 0.7, falloff: 1.5),
        ] + Self.narrowRings.map(\.0)
        var nonEmpty = (outside: 0, inside: 0)
        for vignette in vignettes {
            for (w, h) in [(4032, 3024), (4099, 2049), (33, 9), (53, 50)] {
                let geometry = vignette.geometry(width: w, height: h), g = Vignette.PlanGeometry(geometry)
                let r0 = geometry.innerRadius, r1 = geometry.outerRadius
                for y in stride(from: 0, to: h, by: max(1, h / 37)) {
                    let dy = g.dy(y)
                    let (a, b, c, e) = g.spans(count: w, dy: dy)
                    let what = "\(vignette.form) \(w)×\(h) row \(y): spans \((a, b, c, e))"
                    #expect(0 <= a && a <= b && b <= c && c <= e && e <= w, "\(what)")
                    // t as the formula decides it, in `Double`: 0 inside, 1 outside, nil between.
                    func t(_ x: Int) -> Double? {
                        let dx = (Double(x) + 0.5) - geometry.center.x
                        let d = (dx * dx + dy * dy).squareRoot()
                        if !(r1 > r0) { return d >= r0 ? 1 : 0 }
                        let u = (d - r0) * g.inverseWidth
                        return u <= 0 ? 0 : u >= 1 ? 1 : nil
                    }
                    let decided = (0..<w).map(t)
                    #expect((0..<a).allSatisfy { decided[$0] == 1 } && (e..<w).allSatisfy { decided[$0] == 1 }
                            && (b..<c).allSatisfy { decided[$0] == 0 }, "\(what): a constant span holds a pixel of another gain")
                    let missed = (Array(a..<b) + Array(c..<e)).filter { decided[$0] != nil && r1 > r0 }.count
                    #expect(missed <= 8, "\(what): \(missed) constant pixels in the band")
                    if a > 0 || e < w { nonEmpty.outside += 1 }
                    if b < c { nonEmpty.inside += 1 }
                }
            }
        }
        #expect(nonEmpty.outside > 50 && nonEmpty.inside > 50, "\(nonEmpty)")
    }

    @Test("a plan's gains are the Double formula rounded once to Float, both variants, where Float arithmetic is off by far more")
    func planGainsRoundOnce() {
        let cases = Self.narrowRings + vignetteSamples.map { ($0, 61, 37) }
            + [(Vignette.vignette(intensity: 0.8, radius: 1.2), 4032, 5), (.vignetteEffect(), 1001, 9)]
        var floatBeyond = 0
        for (vignette, w, h) in cases {
            let geometry = vignette.geometry(width: w, height: h)
            let prepared = vignette.preparedGains(imageWidth: w, imageHeight: h)
            let kernel = vignette.preparedFloatGains(imageWidth: w, imageHeight: h)
            for y in Set([0, 1, h / 3, h / 2, h - 1]).sorted() {
                var bad: [String] = []
                for variant in KernelVariant.allCases {
                    var gains = [Float](repeating: .nan, count: w), floats = gains
                    gains.withUnsafeMutableBufferPointer { prepared.rowGains(y: y, x0: 0, count: w, variant: variant, into: $0.baseAddress!) }
                    floats.withUnsafeMutableBufferPointer { kernel.rowGains(y: y, x0: 0, count: w, variant: variant, into: $0.baseAddress!) }
                    for x in 0..<w {
                        // The reference divides by r1 − r0 where the plan multiplies by its
                        // reciprocal: ~10⁻¹⁶ apart, which moves a gain only at a midpoint.
                        let exact = geometry.gain(x: x, y: y), f = gains[x]
                        let halfUlp = Double(max(f.ulp, Float(exact).ulp)) / 2
                        if !(abs(Double(f) - exact) <= halfUlp + 1e-13) { bad.append("\(variant) x = \(x): \(f), exact \(exact)") }
                        if abs(Double(floats[x]) - exact) > 0x1p-20 { floatBeyond += 1 }
                    }
                }
                #expect(bad.isEmpty, "\(vignette.form) \(w)×\(h) row \(y): \(bad.prefix(3)) of \(bad.count)")
            }
        }
        // What the plan's `Double` gains are for: the `Float` kernel misses by more than
        // SPEC §8's window on these rings.
        #expect(floatBeyond > 100, "\(floatBeyond)")
    }

    @Test("a plan's 16-bit output through narrow rings is SPEC §8-exact against the Double evaluation, both variants, the ring last or before a saturation")
    func planNarrowRingsSixteenBit() throws {
        var rng = SeededGenerator(seed: 211)
        // The ring as the plan's trailing gain, and as a step before another stage.
        let placements: [(String, (Vignette) -> [any RecipeOperation])] = [
            ("last", { [$0] }), ("before a saturation", { [$0, Saturation(1.3)] }),
        ]
        for (vignette, w, h) in Self.narrowRings {
            for (placement, operations) in placements {
            // Rows where the ring crosses, at most 24 of them (the debug build is slow).
            let rows = min(h, 24), first = (h - rows) / 2
            let samples = (0..<(w * rows * 4)).map { _ in UInt16.random(in: 0...65535, using: &rng) }
            let plan = try EditPlan(stages: operations(vignette).flatMap(\.stages)).prepared(width: w, height: h, threads: 2)
            let region = ImageRegion(x: 0, y: first, width: w, height: rows)
            for variant in KernelVariant.allCases {
                var out = [UInt16](repeating: 0, count: samples.count)
                try samples.withUnsafeBufferPointer { i in
                    try out.withUnsafeMutableBufferPointer { o in
                        try plan.run(input: i, inputLayout: .rgba, inputMaxval: 65535, output: o, outputLayout: .rgba,
                                     outputMaxval: 65535, region: region, variant: variant)
                    }
                }
                let report = TieAwareCheck.check(out, samples, width: w, height: rows, maxval: 65535) { c, x, y in
                    operations(vignette).reduce(c) { $1.evaluate($0, x: x, y: y + first, width: w, height: h) }
                }
                #expect(report.failures == 0, "\(vignette.form), \(placement), \(variant): \(report)")
            }
            }
        }
    }

    @Test("liesInBand: true exactly when every pixel of the range has inner2 ≤ d² < outer2")
    func liesInBandDecides() {
        let vignettes: [Vignette] = [
            .vignette(intensity: 0.8, radius: 1.2), .vignette(intensity: 1, radius: 0.5),
            .vignetteEffect(center: SIMD2(60.5, 20), radius: 40, intensity: 0.8, falloff: 0.5),
            .vignetteEffect(center: SIMD2(31.3, 9.7), radius: 25.4, intensity: 0.6, falloff: 0.3),
            .vignetteEffect(center: SIMD2(-20.25, 10), radius: 70, intensity: 1, falloff: 0.4),
            .vignetteEffect(center: SIMD2(30, 10), radius: 20, intensity: 1, falloff: 0),
            .vignetteEffect(center: SIMD2(.nan, 10), radius: 20, intensity: 1, falloff: 0.5),
        ]
        var decided = (inBand: 0, notInBand: 0)
        for vignette in vignettes {
            let (w, h) = (120, 40)
            let g = Vignette.Resolved(vignette.geometry(width: w, height: h))
            var rng = SeededGenerator(seed: 77)
            for y in stride(from: 0, to: h, by: 3) {
                let dy = (Float(y) + 0.5) - g.cy, dy2 = dy * dy
                func d2(_ x: Int) -> Float { let dx = (Float(x) + 0.5) - g.cx; return dx * dx + dy2 }
                for _ in 0..<60 {
                    // Negative columns too: the floor of cx − 0.5 below 0.
                    let first = Int.random(in: -30..<w, using: &rng), last = min(w - 1, first + Int.random(in: 0...40, using: &rng))
                    let expected = (first...last).allSatisfy { d2($0) >= g.inner2 && d2($0) < g.outer2 }
                    #expect(Vignette.liesInBand(from: first, to: last, dy: dy, g) == expected,
                            "\(vignette.form) row \(y), pixels \(first)...\(last)")
                    if expected { decided.inBand += 1 } else { decided.notInBand += 1 }
                }
            }
        }
        #expect(decided.inBand > 300 && decided.notInBand > 300, "\(decided)")
    }

    @Test("bandGains where every lane lies in the band gives the full formula's bits, lane for lane")
    func bandOnlyGains() {
        let vignettes: [Vignette] = [
            .vignette(intensity: 0.8, radius: 1.2), .vignette(intensity: -0.5, radius: 3),
            .vignetteEffect(center: SIMD2(2000.5, 700), radius: 1500, intensity: 0.7, falloff: 0.9),
            .vignetteEffect(center: SIMD2(1031.3, 99.7), radius: 900.4, intensity: 0.6, falloff: 0.3),
            .vignetteEffect(center: SIMD2(3.3, 2.2), radius: 1000, intensity: 0.5, falloff: 0.001),
            .vignetteEffect(center: SIMD2(2000.5, 700), radius: 1500, intensity: 0.9, falloff: 0),
            .vignette(intensity: .infinity, radius: 1.2),
        ]
        var taken = (inBand: 0, notInBand: 0)
        for vignette in vignettes {
            let (w, h) = (4099, 1400)
            let g = Vignette.Resolved(vignette.geometry(width: w, height: h))
            let band = Vignette.BandFormula(g)
            for y in stride(from: 0, to: h, by: 97) {
                let dy = (Float(y) + 0.5) - g.cy
                for (x0, blocks) in [(0, 512), (1, 3), (5, 40), (777, 200), (2000, 7), (4000, 12)] {
                    if Vignette.liesInBand(from: x0, to: x0 + 8 * blocks - 1, dy: dy, g) {
                        taken.inBand += 1
                    } else {
                        taken.notInBand += 1
                    }
                    var gains = [Float](repeating: .nan, count: 8 * blocks)
                    gains.withUnsafeMutableBytes { Vignette.bandGains($0.baseAddress!, from: x0, blocks: blocks, dy: dy, g) }
                    let full = (0..<blocks).flatMap { j in
                        let lanes = band.gains(SIMD8(0, 1, 2, 3, 4, 5, 6, 7) + Float(x0 + 8 * j), dy: dy)
                        return (0..<8).map { lanes[$0] }
                    }
                    let differing = (0..<(8 * blocks)).filter { gains[$0].bitPattern != full[$0].bitPattern }
                    #expect(differing.isEmpty, "\(vignette.form) row \(y), x0 \(x0): \(differing.count) gains differ")
                }
            }
        }
        #expect(taken.inBand > 100 && taken.notInBand > 100, "\(taken)")
        // Centres `x + 0.5` step by 8 only while exact, below 2^23.
        let far = Vignette.Resolved(Vignette.vignetteEffect(center: SIMD2(0x1p23 - 1e6, 10), radius: 1e6, intensity: 0.7,
                                                            falloff: 0.5).geometry(width: 1 << 24, height: 20))
        let band = Vignette.BandFormula(far)
        for x0 in [(1 << 23) - 64, (1 << 23) - 60, (1 << 23) - 8, 1 << 23] {
            var gains = [Float](repeating: .nan, count: 64)
            gains.withUnsafeMutableBytes { Vignette.bandGains($0.baseAddress!, from: x0, blocks: 8, dy: 3.5, far) }
            let full = (0..<64).map { i in band.gains(SIMD8(repeating: Float(x0 + i)), dy: 3.5)[0] }
            let differing = (0..<64).filter { gains[$0].bitPattern != full[$0].bitPattern }
            #expect(differing.isEmpty, "x0 \(x0): \(differing.count) gains differ")
        }
    }

    @Test("hand-computed gains of an off-centre ring with a non-integer centre, r0 = 4, r1 = 12")
    func handComputedGains() throws {
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
                let p = run([vignette], on: try FloatImage(width: 24, height: 8, color: SIMD4(1, 0.5, 2, 0.75)), variant)[c.x, c.y]
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

    @Test("pixels inside r0 keep every bit, signalling NaNs too: the schedule leaves them unread, alone or with held gains")
    func insideSpanUntouched() {
        // Multiplied by their gain of 1, a signalling NaN would come back quiet (bit 22
        // set); left alone it keeps its bits. Only the constant inside span is left
        // alone, so the test finds it first and fills it with signalling NaNs.
        let signalling = Float(bitPattern: 0x7FA0_0001)
        let cases: [(Vignette, Int, Int)] = [
            (.relativeVignetteEffect(radius: 0.9, intensity: 0.8, falloff: 0.3), 257, 65),
            (.vignetteEffect(center: SIMD2(100.25, 4.5), radius: 60, intensity: 0.6, falloff: 0.5), 257, 9),
            (.vignetteEffect(center: SIMD2(16.5, 2.5), radius: 12, intensity: 1, falloff: 0), 33, 5),
        ]
        var checked = 0
        for (vignette, w, h) in cases {
            let prepared = vignette.preparedGains(imageWidth: w, imageHeight: h)
            let g = Vignette.Resolved(vignette.geometry(width: w, height: h))
            let y = h / 2
            // The `Float` kernel's inside span, and the plan's (from the `Double` geometry).
            let spans = Vignette.constantSpans(count: w, dy: (Float(y) + 0.5) - g.cy, g)
            let plan = Vignette.PlanGeometry(vignette.geometry(width: w, height: h))
            let planSpans = plan.spans(count: w, dy: plan.dy(y))
            #expect(spans.c - spans.b >= 4, "\(vignette.form) \(w)×\(h): no inside span on row \(y)")
            #expect(planSpans.c - planSpans.b >= 4, "\(vignette.form) \(w)×\(h): no inside span of the plan on row \(y)")
            var row = randomRow(w, seed: 91)
            for x in min(spans.b, planSpans.b)..<max(spans.c, planSpans.c) { row[x] = SIMD4(signalling, -0.0, signalling, signalling) }
            var gains = [Float](repeating: .nan, count: w)
            gains.withUnsafeMutableBufferPointer { prepared.rowGains(y: y, x0: 0, count: w, variant: .simd4, into: $0.baseAddress!) }
            let alone = applied(vignette, row, y: y, width: w, height: h, .simd4)
            var held = row
            held.withUnsafeMutableBufferPointer { p in
                gains.withUnsafeBufferPointer { prepared.scale(p.baseAddress!, count: w, y: y, x0: 0, by: $0.baseAddress!) }
            }
            for x in spans.b..<spans.c {
                for c in 0..<4 {
                    #expect(alone[x][c].bitPattern == row[x][c].bitPattern, "\(vignette.form): pixel \(x) channel \(c) changed")
                }
                checked += 1
            }
            for x in planSpans.b..<planSpans.c {
                for c in 0..<4 {
                    #expect(held[x][c].bitPattern == row[x][c].bitPattern, "\(vignette.form), held gains: pixel \(x) channel \(c) changed")
                }
                checked += 1
            }
        }
        #expect(checked > 100, "\(checked)")
    }

    @Test("rowWithSameGains: the row it names has the same gains to the bit; without an integer 2·cy it names the row itself")
    func rowsWithSameGains() {
        let cases: [(Vignette, Int, Int)] = [
            (.vignette(intensity: 0.8, radius: 1.2), 4032, 3024),
            (.vignette(intensity: 0.8, radius: 1.2), 257, 9),
            (.vignetteEffect(center: SIMD2(40, 10), radius: 30, intensity: 0.7, falloff: 0.4), 64, 64),
            (.vignetteEffect(center: SIMD2(40, 10.5), radius: 30, intensity: 0.7, falloff: 0.4), 64, 64),
            (.vignetteEffect(center: SIMD2(40, 10.25), radius: 30, intensity: 0.7, falloff: 0.4), 64, 64),
        ]
        for (vignette, w, h) in cases {
            let prepared = vignette.preparedGains(imageWidth: w, imageHeight: h)
            let twice = 2 * Vignette.Resolved(vignette.geometry(width: w, height: h)).cy
            for y in [0, 1, h / 3, h / 2, h - 1] {
                let other = prepared.rowWithSameGains(as: y)
                #expect(other == (twice.rounded() == twice ? Int(twice) - 1 - y : y), "\(w)×\(h) row \(y)")
                var a = [Float](repeating: .nan, count: w), b = a
                a.withUnsafeMutableBufferPointer { prepared.rowGains(y: y, x0: 0, count: w, variant: .scalar, into: $0.baseAddress!) }
                b.withUnsafeMutableBufferPointer { prepared.rowGains(y: other, x0: 0, count: w, variant: .scalar, into: $0.baseAddress!) }
                #expect(a.map(\.bitPattern) == b.map(\.bitPattern), "\(w)×\(h) rows \(y) and \(other)")
            }
        }
    }

    @Test("a centred vignette's mirrored gains equal the ones computed pixel by pixel, to the bit")
    func mirroredGains() {
        let vignettes = [Vignette.vignette(intensity: 0.8, radius: 1.2),
                         Vignette.vignetteEffect(radius: 300, intensity: 0.7, falloff: 0.4)]
        for vignette in vignettes {
            for (w, h) in [(4032, 3024), (1001, 800), (257, 9), (130, 7)] {
                let g = Vignette.Resolved(vignette.geometry(width: w, height: h))
                for y in [0, h / 3, h / 2, h - 1] {
                    let dy = (Float(y) + 0.5) - g.cy
                    var row = [Float](repeating: .nan, count: w), single = row
                    row.withUnsafeMutableBufferPointer {
                        Vignette.scheduledGains($0.baseAddress!, x0: 0, count: w, imageWidth: w, dy: dy, g)
                    }
                    // One pixel at a time nothing can be mirrored.
                    single.withUnsafeMutableBufferPointer { p in
                        for x in 0..<w { Vignette.scheduledGains(p.baseAddress! + x, x0: x, count: 1, imageWidth: w, dy: dy, g) }
                    }
                    let differing = (0..<w).filter { row[$0].bitPattern != single[$0].bitPattern }
                    #expect(differing.isEmpty, "\(w)×\(h) row \(y): \(differing.count) gains differ, first at x = \(differing.first ?? -1)")
                }
            }
        }
    }

    /// A piece's `.simd4` gains and the piece scaled by `scale(.simd4)`.
    private func scheduledPiece(_ vignette: Vignette, _ w: Int, _ h: Int, _ y: Int, _ x0: Int, _ count: Int,
                                _ pixels: [SIMD4<Float>], _ start: Int)
        -> (prepared: any PreparedGains, gains: [Float], scaled: [SIMD4<Float>]) {
        let prepared = vignette.preparedGains(imageWidth: w, imageHeight: h)
        var gains = [Float](repeating: .nan, count: count)
        gains.withUnsafeMutableBufferPointer {
            prepared.rowGains(y: y, x0: x0, count: count, variant: .simd4, into: $0.baseAddress!)
        }
        let scaled = inPlace(pixels, start: start) { prepared.scale($0, count: count, y: y, x0: x0, variant: .simd4) }
        return (prepared, gains, scaled)
    }

    @Test("scaling by held gains gives scale(.simd4)'s bits, on pieces of widths 1…33 and whole rows")
    func scaleByHeldGains() {
        let compared = comparePieces(fastPathSamples.filter { !$0.isIdentity }, seed: 12_000) {
            vignette, w, h, y, x0, count, pixels, start in
            let (prepared, gains, scheduled) = scheduledPiece(vignette, w, h, y, x0, count, pixels, start)
            let held = inPlace(pixels, start: start) { p in
                gains.withUnsafeBufferPointer { prepared.scale(p, count: count, y: y, x0: x0, by: $0.baseAddress!) }
            }
            return (held, scheduled)
        }
        #expect(compared > 50_000, "\(compared)")
    }

    @Test("scaling while writing the gains gives rowGains(.simd4)'s bits and scale(.simd4)'s products (which scaling by held gains gives too), nothing written past the piece: pieces of widths 1…33 and whole rows")
    func scaleWritingGainsOnPieces() {
        let compared = comparePieces(fastPathSamples.filter { !$0.isIdentity }, seed: 13_000) {
            vignette, w, h, y, x0, count, pixels, start in
            let (prepared, gains, scheduled) = scheduledPiece(vignette, w, h, y, x0, count, pixels, start)
            var written = [Float](repeating: .nan, count: count + 9)
            let scaled = inPlace(pixels, start: start) { p in
                written.withUnsafeMutableBufferPointer { prepared.scale(p, count: count, y: y, x0: x0, writingGainsTo: $0.baseAddress!) }
            }
            #expect(written[..<count].map(\.bitPattern) == gains.map(\.bitPattern),
                    "\(vignette.form) \(w)×\(h) row \(y), pixels \(x0)..<\(x0 + count): gains differ")
            #expect(written[count...].allSatisfy { $0.bitPattern == Float.nan.bitPattern }, "written past the piece")
            return (scaled, scheduled)
        }
        #expect(compared > 50_000, "\(compared)")
    }

    @Test("scaling while writing the gains over long pieces (several chunks, mirrored columns copied from earlier chunks) gives rowGains(.simd4)'s bits and scale(by:)'s products")
    func scaleWritingGainsOnLongPieces() {
        var mirrored = 0, compared = 0
        for vignette in fastPathSamples where !vignette.isIdentity {
            for (w, h) in [(4032, 3024), (2053, 3), (1001, 800), (600, 5)] {
                let g = Vignette.Resolved(vignette.geometry(width: w, height: h))
                let twice = 2 * g.cx
                if twice.rounded() == twice, abs(twice) < 0x1p22, Int(twice) - 1 > Vignette.chunk, Int(twice) - 1 < 2 * w { mirrored += 1 }
                for y in [0, h / 2, h - 1] {
                    let row = randomRow(w, seed: 14_000 + UInt64(y))
                    for (x0, count) in [(0, w), (1, w - 1), (w / 3, w / 2), (w - 300, 300), (0, Vignette.chunk + 1)] {
                        let pixels = Array(row[x0..<(x0 + count)])
                        let (prepared, gains, _) = scheduledPiece(vignette, w, h, y, x0, count, pixels, 0)
                        let held = inPlace(pixels, start: 0) { p in
                            gains.withUnsafeBufferPointer { prepared.scale(p, count: count, y: y, x0: x0, by: $0.baseAddress!) }
                        }
                        var written = [Float](repeating: .nan, count: count + 9)
                        let scaled = inPlace(pixels, start: 1) { p in
                            written.withUnsafeMutableBufferPointer {
                                prepared.scale(p, count: count, y: y, x0: x0, writingGainsTo: $0.baseAddress!)
                            }
                        }
                        let wrongGains = (0..<count).filter { written[$0].bitPattern != gains[$0].bitPattern }
                        #expect(wrongGains.isEmpty, "\(vignette.form) \(w)×\(h) row \(y), pixels \(x0)..<\(x0 + count): \(wrongGains.count) gains differ, first at \(wrongGains.first.map { $0 + x0 } ?? -1)")
                        #expect(written[count...].allSatisfy { $0.bitPattern == Float.nan.bitPattern }, "written past the piece")
                        let bits = { (v: SIMD4<Float>) in [v.x.bitPattern, v.y.bitPattern, v.z.bitPattern, v.w.bitPattern] }
                        let differing = (0..<count).filter { bits(scaled[$0]) != bits(held[$0]) }
                        #expect(differing.isEmpty, "\(vignette.form) \(w)×\(h) row \(y), pixels \(x0)..<\(x0 + count): \(differing.count) pixels differ")
                        compared += count
                    }
                }
            }
        }
        #expect(mirrored >= 8, "\(mirrored) centred cases")
        #expect(compared > 1_000_000, "\(compared)")
    }

    @Test("scale(.simd4) on pieces of widths 1…33 at 17 starts is each pixel times its own gain, one product at a time")
    func scaleIsPixelTimesGain() {
        let compared = comparePieces(fastPathSamples.filter { !$0.isIdentity }, seed: 13_000) {
            vignette, w, h, y, x0, count, pixels, start in
            let (_, gains, scheduled) = scheduledPiece(vignette, w, h, y, x0, count, pixels, start)
            // Plain scalar products. Where the sample and the gain are both NaN, which
            // payload comes out depends on the order the compiler gives the operands (an
            // optimised build may swap those of this very product), so any NaN is right
            // there (SPEC §8). A pixel whose gain is exactly 1 may be left unread (a
            // signalling NaN then stays signalling), so either form is right there.
            let bits = { (v: SIMD4<Float>) in [v.x.bitPattern, v.y.bitPattern, v.z.bitPattern, v.w.bitPattern] }
            func product(_ sample: Float, _ gain: Float, _ observed: Float) -> Float {
                sample.isNaN && gain.isNaN && observed.isNaN ? observed : sample * gain
            }
            let expected = (0..<count).map { i -> SIMD4<Float> in
                let p = pixels[i], g = gains[i], q = scheduled[i]
                return g == 1 && bits(q) == bits(p) ? p : SIMD4(product(p.x, g, q.x), product(p.y, g, q.y), product(p.z, g, q.z), p.w)
            }
            return (scheduled, expected)
        }
        #expect(compared > 50_000, "\(compared)")
    }

    @Test("scaleSpan's two schedules (two pixels per SIMD8, one per SIMD4) multiply R, G, B by the one gain, alpha kept: counts 1…33, 1027 and 4099 (long enough for four streams where the walk interleaves), both 16-byte places")
    func scaleSpanByOneGain() {
        let schedules: [(String, (UnsafeMutablePointer<SIMD4<Float>>, Int, Float) -> Void)] = [
            ("pairs", { Vignette.scaleSpanPairs($0, count: $1, by: $2, AlphaMasks()) }),
            ("pixels", { Vignette.scaleSpanPixels($0, count: $1, by: $2) }),
        ]
        for count in Array(1...33) + [1027, 4099] {
            let row = randomRow(count, seed: UInt64(count) &+ 77)
            for gain: Float in [0.37, -2.5] {
                for start in 0...1 {
                    for (name, schedule) in schedules {
                        let out = inPlace(row, start: start) { schedule($0, count, gain) }
                        let wrong = (0..<count).filter { i in
                            let v = row[i], expected = SIMD4(gain * v.x, gain * v.y, gain * v.z, v.w)
                            return (0..<4).contains { c in
                                out[i][c].isNaN ? !expected[c].isNaN : out[i][c].bitPattern != expected[c].bitPattern
                            } || out[i].w.bitPattern != v.w.bitPattern
                        }
                        #expect(wrong.isEmpty, "\(name), \(count) pixels, gain \(gain), start \(start): \(wrong.count) differ, first at \(wrong.first ?? -1)")
                    }
                }
            }
        }
    }

    @Test("scaleRow's schedules (two pixels per SIMD8; one per SIMD4, alpha by memory or moved into the product) multiply by each gain, alpha's bits kept (signalling NaN, −0), counts 1…33, 1027 and 4099 (long enough for four streams where the walk interleaves)")
    func scaleRowSchedules() {
        var rng = SeededGenerator(seed: 4711)
        for count in Array(1...33) + [64, 65, 1027, 4099] {
            // Guard pixels on both sides catch a store past either end.
            let guardPixel = SIMD4<Float>(-7, -7, -7, -7)
            let row = [guardPixel] + randomRow(count, seed: UInt64(count)) + [guardPixel]
            var gains = (0..<count).map { _ in Float.random(in: -1.5...1.5, using: &rng) }
            gains[count / 2] = 1
            if count > 3 { gains[3] = .nan }
            let expected = (0..<row.count).map { i -> SIMD4<Float> in
                guard i > 0, i <= count else { return row[i] }
                let g = gains[i - 1], v = row[i]
                return SIMD4(g * v.x, g * v.y, g * v.z, v.w)
            }
            // The row's first pixel (after the guard) 16 bytes past a 32-byte boundary, then on one.
            let schedules: [(String, (UnsafeMutablePointer<SIMD4<Float>>, Int, UnsafeRawPointer) -> Void)] = [
                ("pairs", { Vignette.scaleRowPairs($0, count: $1, by: $2, AlphaMasks()) }),
                ("pixels, alpha by memory", { Vignette.scaleRowPixels($0, count: $1, by: $2, insertingAlpha: false) }),
                ("pixels, alpha moved", { Vignette.scaleRowPixels($0, count: $1, by: $2, insertingAlpha: true) }),
            ]
            for (name, schedule) in schedules {
                for start in 0...1 {
                    let out = inPlace(row, start: start) { p in
                        gains.withUnsafeBytes { schedule(p + 1, count, $0.baseAddress!) }
                    }
                    let differing = (0..<row.count).filter { i in
                        (0..<4).contains { c in
                            let (a, b) = (out[i][c], expected[i][c])
                            return a.isNaN ? !b.isNaN : a.bitPattern != b.bitPattern
                        }
                    }
                    #expect(differing.isEmpty, "\(name), \(count) pixels, start \(start): \(differing.count) differ, first at \(differing.first ?? -1)")
                    #expect((1...count).allSatisfy { out[$0].w.bitPattern == row[$0].w.bitPattern }, "\(name), \(count): alpha changed")
                }
            }
        }
    }

    @Test("a plan's Float and 16-bit runs equal the scalar reference to the bit, row gains held where the rows pair")
    func planHoldsRowGains() throws {
        // (vignette, width, height, whether the whole image's rows pair up)
        let cases: [(Vignette, Int, Int, Bool)] = [
            (.vignette(intensity: 0.8, radius: 1.2), 2100, 6, true),
            (.vignette(intensity: 1, radius: 0.7), 2049, 7, true),
            (.vignetteEffect(center: SIMD2(900.5, 3.5), radius: 900, intensity: 0.7, falloff: 0.4), 2100, 7, true),
            (.vignetteEffect(center: SIMD2(700, 2), radius: 900, intensity: 0.7, falloff: 0.4), 2100, 5, false),
            // Rows of two `Float` pieces (`floatPiece`), the second from x0 = 4096.
            (.vignette(intensity: 0.8, radius: 1.2), 4133, 5, true),
            (.vignetteEffect(center: SIMD2(3000, 2), radius: 2500, intensity: 0.7, falloff: 0.4), 4133, 5, false),
            (.relativeVignetteEffect(center: SIMD2(0.5, 0.5), radius: 0.8), 37, 29, true),
            (.vignetteEffect(center: SIMD2(10.25, 3.75), radius: 8, intensity: 0.6, falloff: 0.5), 33, 9, false),
        ]
        for (vignette, w, h, paired) in cases {
            var rng = SeededGenerator(seed: UInt64(w * h))
            let input = try FloatImage(width: w, height: h, pixels: (0..<(w * h)).map { _ in
                SIMD4<Float>(Float.random(in: -1...2, using: &rng), Float.random(in: -1...2, using: &rng),
                             Float.random(in: -1...2, using: &rng), Float.random(in: 0...1, using: &rng))
            })
            let samples = (0..<(3 * w * h)).map { _ in UInt16.random(in: 0...UInt16.max, using: &rng) }
            for threads in [1, 2] {
                let plan = try EditPlan(stages: [vignette.stage]).prepared(width: w, height: h, threads: threads, minimumBandPixels: 1)
                let whole = ImageRegion(x: 0, y: 0, width: w, height: h)
                // Held where the rows pair, except where the build and processor scale
                // every row's own gains (`pairsRowsToScale`).
                let held = paired && PreparedEditPlan.pairsRowsToScale
                #expect(plan.holdsFloatImageRowGains(.simd4, in: whole, floatBlockRuns: false) == held)
                #expect(plan.holdsFloatImageRowGains(.simd4, in: whole, floatBlockRuns: true) == paired)
                #expect(!plan.holdsFloatImageRowGains(.scalar, in: whole, floatBlockRuns: true))
                #expect(plan.holdsRowGains(.simd4, in: whole) == paired && !plan.holdsRowGains(.scalar, in: whole))
                var reference = input, fused = input
                try plan.run(&reference, variant: .scalar)
                try plan.run(&fused, variant: .simd4)
                let differing = reference.withUnsafePixels { r in fused.withUnsafePixels { f in
                    (0..<(w * h)).filter { i in (0..<4).contains { r[i][$0].bitPattern != f[i][$0].bitPattern } }
                } }
                #expect(differing.isEmpty, "\(vignette.form) \(w)×\(h), \(threads) threads: \(differing.count) pixels differ, first at \(differing.first ?? -1)")

                // A region that starts at x = 5 and keeps the rows' symmetry (rows 1 ..< h − 1),
                // through the row path (16-bit R G B samples take no fused block).
                let region = ImageRegion(x: 5, y: 1, width: w - 9, height: h - 2)
                // Rows on their way to samples pair wherever they can.
                #expect(plan.holdsRowGains(.simd4, in: region) == paired)
                var part: [UInt16] = []
                for y in region.y..<(region.y + region.height) {
                    let start = 3 * (y * w + region.x)
                    part += samples[start..<(start + 3 * region.width)]
                }
                var outputs: [[UInt16]] = []
                for variant in [KernelVariant.scalar, .simd4] {
                    var out = [UInt16](repeating: 0, count: part.count)
                    try part.withUnsafeBufferPointer { i in
                        try out.withUnsafeMutableBufferPointer { o in
                            try plan.run(input: i, inputLayout: .rgb, inputMaxval: 65535, output: o, outputLayout: .rgb,
                                         outputMaxval: 65535, region: region, variant: variant)
                        }
                    }
                    outputs.append(out)
                }
                let wrong = zip(outputs[0], outputs[1]).filter { $0 != $1 }.count
                #expect(wrong == 0, "\(vignette.form) \(w)×\(h), 16-bit R G B region, \(threads) threads: \(wrong) samples differ")
            }
        }
    }
}
