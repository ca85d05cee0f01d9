import Foundation
import Testing
@testable import PhotoKernels

/// The laws every registered kernel family obeys, run over the registry (every example
/// of every family, and whole recipes): the fused schedule against the unfused scalar
/// reference, alpha, NaN, thread counts, identity, and SPEC §8 per sample against the
/// family's `Double` evaluation. Each law measures and prints its worst case.
@Suite("Laws of every kernel family")
struct FamilyLawsTests {
    /// A named edit: its stages and its `Double` oracle.
    struct Case: CustomStringConvertible {
        let name: String
        let operations: [any RecipeOperation]
        var stages: [Stage] { operations.filter { !$0.isIdentity }.flatMap(\.stages) }
        var description: String { name }

        func evaluate(_ c: SIMD4<Double>, x: Int, y: Int, width: Int, height: Int) -> SIMD4<Double> {
            operations.filter { !$0.isIdentity }.reduce(c) { $1.evaluate($0, x: x, y: y, width: width, height: height) }
        }
    }

    /// Every example of every family, tie-heavy single operations, and whole recipes.
    static let cases: [Case] = {
        var cases = KernelFamilies.all.flatMap { family in
            family.examples.map { Case(name: "\(family.key)/\($0.name)", operations: [$0.operation]) }
        }
        cases.append(Case(name: "brightness 0.1 (ties)", operations: [Brightness(0.1)]))
        cases.append(Case(name: "contrast 2 (ties)", operations: [Contrast(2.0)]))
        cases.append(Case(name: "look.fade (ties)", operations: [Effect.look(.fade, intensity: 1)]))
        func recipe(_ name: String, _ r: Recipe) -> Case { Case(name: name, operations: r.operationsInOrder) }
        cases.append(recipe("recipe", KernelCatalog.sampleRecipe))
        var vivid = Recipe(preset: .vivid)
        vivid[Vibrance.self] = Vibrance(amount: 0.5)
        cases.append(recipe("vivid + vibrance", vivid))
        cases.append(recipe("tie-heavy recipe", Recipe(exposure: 1, adjustments: Adjustments(contrast: 2, brightness: 0.1),
                                                        effect: .sepia(intensity: 0.6),
                                                        vignette: .vignette(intensity: 1.5, radius: 1.5))))
        // Tone stages before a grey-preserving matrix (the relative form) and before a
        // plain one, with and without an affine segment to fold.
        var vividExposed = Recipe(preset: .vivid)
        vividExposed.exposure = 0.3
        cases.append(recipe("exposure + vivid", vividExposed))
        cases.append(recipe("exposure −1.5 + contrast 2 (ties)", Recipe(exposure: -1.5, adjustments: Adjustments(contrast: 2),
                                                                       vignette: .vignette(intensity: 0.5, radius: 1))))
        let curve = try! ToneCurve(masterPoints: [SIMD2(0, 0), SIMD2(0.3, 0.2), SIMD2(1, 1)])
        cases.append(Case(name: "curve + saturation 1.3", operations: [curve, Saturation(1.3)]))
        cases.append(Case(name: "exposure + curve + sepia", operations: [Exposure(ev: 0.5), curve, Effect.sepia(intensity: 1)]))
        return cases
    }()

    @Test("the fused schedule equals the scalar reference on Float pixels (SPEC §8: 1e-5), widths 1…33",
          arguments: cases)
    func fusedMatchesReference(_ c: Case) throws {
        var worst: Float = 0
        for (w, h) in [(1, 3), (2, 3), (7, 3), (8, 3), (9, 3), (15, 3), (16, 3), (17, 3), (31, 3), (33, 3)] {
            let input = try randomImage(width: w, height: h, seed: 7, nanEvery: 5)
            let plan = try EditPlan(stages: c.stages).prepared(width: w, height: h, threads: 1)
            var reference = input, fused = input
            try plan.run(&reference, variant: .scalar)
            try plan.run(&fused, variant: .simd4)
            for i in 0..<input.pixelCount {
                let (a, b, x) = (fused.pixels[i], reference.pixels[i], input.pixels[i])
                // Alpha is never touched, bit for bit.
                #expect(a.w.bitPattern == x.w.bitPattern && b.w.bitPattern == x.w.bitPattern, "\(c) alpha at \(i)")
                // A NaN channel may spread to its own pixel's other channels (a fused
                // matrix multiplies it by 0); `nanIsConfined` checks it goes no further.
                guard !(x.x.isNaN || x.y.isNaN || x.z.isNaN) else { continue }
                for ch in 0..<3 {
                    if a[ch].isNaN || b[ch].isNaN {
                        #expect(a[ch].isNaN == b[ch].isNaN, "\(c): NaN mismatch at pixel \(i) channel \(ch)")
                    } else if a[ch].isFinite && b[ch].isFinite {
                        worst = max(worst, abs(a[ch] - b[ch]))
                    }
                }
            }
        }
        print("law fused≈reference \(c): worst |Δ| = \(worst)")
        #expect(worst <= 1e-5, "\(c): worst difference \(worst)")
    }

    @Test("a NaN stays in its pixel: every other pixel is bit for bit the same", arguments: cases)
    func nanIsConfined(_ c: Case) throws {
        let (w, h) = (13, 5)
        let clean = try randomImage(width: w, height: h, seed: 11)
        var poisoned = clean
        poisoned[6, 2] = SIMD4(.nan, 0.5, .nan, 1)
        for variant in KernelVariant.allCases {
            let plan = try EditPlan(stages: c.stages).prepared(width: w, height: h, threads: 1)
            var a = clean, b = poisoned
            try plan.run(&a, variant: variant)
            try plan.run(&b, variant: variant)
            for y in 0..<h {
                for x in 0..<w where !(x == 6 && y == 2) {
                    #expect(sameBits(a[x, y], b[x, y]), "\(c) \(variant): pixel (\(x), \(y)) changed")
                }
            }
        }
    }

    @Test("the result does not depend on the thread count (Float and 16-bit)", arguments: cases)
    func threadCountsAgree(_ c: Case) throws {
        let (w, h) = (37, 29)
        let input = try randomImage(width: w, height: h, seed: 5)
        var rng = SeededGenerator(seed: 9)
        let samples = (0..<(w * h * 4)).map { _ in UInt16.random(in: 0...65535, using: &rng) }
        var floats: [FloatImage] = [], words: [[UInt16]] = []
        for threads in [1, 2, 3] {
            let plan = try EditPlan(stages: c.stages).prepared(width: w, height: h, threads: threads, minimumBandPixels: 16)
            var image = input
            try plan.run(&image)
            floats.append(image)
            var out = [UInt16](repeating: 0, count: samples.count)
            try samples.withUnsafeBufferPointer { i in
                try out.withUnsafeMutableBufferPointer { o in
                    try plan.run(input: i, inputLayout: .rgba, inputMaxval: 65535, output: o, outputLayout: .rgba, outputMaxval: 65535)
                }
            }
            words.append(out)
        }
        for k in 1..<3 {
            #expect(words[k] == words[0], "\(c): 16-bit samples depend on the thread count")
            #expect(zip(floats[k].pixels, floats[0].pixels).allSatisfy { sameBits($0, $1) }, "\(c): Float pixels depend on the thread count")
        }
    }

    @Test("greys stay grey exactly at any saturation, hue, contrast, brightness, vibrance or exposure (SPEC §8), every 8-bit grey and every 5th 16-bit one",
          arguments: [[Saturation(100.0)], [HueRotation(degrees: 37)], [Vibrance(amount: 3)], [Exposure(ev: 1.3)],
                      [Contrast(7.0), Brightness(0.3)], Recipe(preset: .dream).operationsInOrder,
                      [Exposure(ev: 0.3)] + Recipe(preset: .vivid).operationsInOrder,
                      [Exposure(ev: -1.5), Saturation(1.7), Contrast(1.2), HueRotation(degrees: 20)],
                      // Far outside SPEC §8's domain, where composing in `Double` leaves the
                      // rows' sums apart by far more than their own rounding.
                      [Saturation(1e6)], [Saturation(-1e38)], [HueRotation(degrees: 1e30), Saturation(1e20)],
                      [Exposure(ev: 64), Saturation(1e10), Contrast(1e30)]] as [[any RecipeOperation]])
    func greysStayGrey(_ operations: [any RecipeOperation]) throws {
        let c = Case(name: "greys", operations: operations)
        for maxval in [255, 65535] {
            // Every grey at 8 bits; at 16 bits every 5th, and the values of past failures.
            var levels = Array(stride(from: 0, through: maxval, by: maxval == 255 ? 1 : 5))
            if maxval == 65535 { levels += [49869, 2692, 3447, 65535] }
            let samples = levels.flatMap { [UInt16($0), UInt16($0), UInt16($0), UInt16(maxval)] }
            let plan = try EditPlan(stages: c.stages).prepared(width: levels.count, height: 1, threads: 1)
            for variant in KernelVariant.allCases {
                let out = try runRGBA(plan, samples, maxval: maxval, variant: variant)
                var failures = 0
                for p in levels.indices where !(out[4 * p] == out[4 * p + 1] && out[4 * p + 1] == out[4 * p + 2]) {
                    failures += 1
                    if failures <= 3 {
                        Issue.record("\(operations) maxval \(maxval) \(variant): grey \(samples[4 * p]) became \(out[(4 * p)..<(4 * p + 3)])")
                    }
                }
                #expect(failures == 0, "\(operations) maxval \(maxval) \(variant): \(failures) greys changed hue")
            }
            // Float pixels: the fused schedule and the reference.
            let image = try FloatImage(width: levels.count, height: 1,
                                       pixels: levels.map { SIMD4(repeating: Float($0) / Float(maxval)) })
            for variant in KernelVariant.allCases {
                var run = image
                try plan.run(&run, variant: variant)
                #expect(run.pixels.allSatisfy { $0.x == $0.y && $0.y == $0.z }, "\(operations) Float \(variant): a grey changed hue")
            }
        }
    }

    @Test("every family's identity has no stage and returns the input samples, every layout, 8 and 16 bits")
    func identityReturnsInput() throws {
        for family in KernelFamilies.all {
            #expect(family.identity.isIdentity && Case(name: family.key, operations: [family.identity]).stages.isEmpty,
                    "\(family.key): identity has stages")
            let plan = try EditPlan(stages: Case(name: family.key, operations: [family.identity]).stages)
                .prepared(width: 11, height: 3, threads: 1)
            for layout in SampleLayout.allCases {
                for maxval in [255, 1023, 65535] {
                    var rng = SeededGenerator(seed: UInt64(maxval))
                    let samples = (0..<(33 * layout.channelCount)).map { _ in UInt16.random(in: 0...UInt16(maxval), using: &rng) }
                    var out = [UInt16](repeating: 0, count: samples.count)
                    try samples.withUnsafeBufferPointer { i in
                        try out.withUnsafeMutableBufferPointer { o in
                            try plan.run(input: i, inputLayout: layout, inputMaxval: maxval, output: o, outputLayout: layout, outputMaxval: maxval)
                        }
                    }
                    #expect(out == samples, "\(family.key) \(layout) maxval \(maxval)")
                }
            }
        }
    }

    @Test("SPEC §8 per sample against the Double evaluation: 8 and 16 bits, fused and reference", arguments: cases)
    func integerSamplesAreCorrectlyRounded(_ c: Case) throws {
        let (w, h) = (40, 24)
        for maxval in [255, 65535] {
            // Grey ramps (where ties gather) over random rows.
            var rng = SeededGenerator(seed: UInt64(maxval) &+ 3)
            var samples: [UInt16] = []
            for y in 0..<h {
                for x in 0..<w {
                    if y < 6 {
                        let v = UInt16((x * 6 + y) * maxval / (6 * w - 1))
                        samples += [v, v, v, UInt16(maxval)]
                    } else {
                        for _ in 0..<4 { samples.append(UInt16.random(in: 0...UInt16(maxval), using: &rng)) }
                    }
                }
            }
            let plan = try EditPlan(stages: c.stages).prepared(width: w, height: h, threads: 1)
            for variant in KernelVariant.allCases {
                let out = try runRGBA(plan, samples, maxval: maxval, variant: variant)
                let report = TieAwareCheck.check(out, samples, width: w, height: h, maxval: maxval) {
                    c.evaluate($0, x: $1, y: $2, width: w, height: h)
                }
                print("law SPEC §8 \(c) maxval \(maxval) \(variant): \(report)")
                #expect(report.failures == 0, "\(c) maxval \(maxval) \(variant): \(report)")
            }
        }
    }
}

extension FamilyLawsTests {
    @Test("8-bit RGB samples: the RGB of the same pixels run as RGBA, in place too, widths 1…33", arguments: cases)
    func threeChannelSamples(_ c: Case) throws {
        for width in 1...33 {
            let height = 2
            var rng = SeededGenerator(seed: UInt64(width) &+ 101)
            let rgb = (0..<(width * height * 3)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var rgba: [UInt8] = []
            for i in 0..<(width * height) { rgba += rgb[(3 * i)..<(3 * i + 3)] + [255] }
            let plan = try EditPlan(stages: c.stages).prepared(width: width, height: height, threads: 1)
            var outRGB = [UInt8](repeating: 0, count: rgb.count), outRGBA = [UInt8](repeating: 0, count: rgba.count)
            try rgb.withUnsafeBufferPointer { i in
                try outRGB.withUnsafeMutableBufferPointer { o in
                    try plan.run(input: i, inputLayout: .rgb, inputMaxval: 255, output: o, outputLayout: .rgb, outputMaxval: 255)
                }
            }
            try rgba.withUnsafeBufferPointer { i in
                try outRGBA.withUnsafeMutableBufferPointer { o in
                    try plan.run(input: i, inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba, outputMaxval: 255)
                }
            }
            var inPlace = rgb
            try inPlace.withUnsafeMutableBufferPointer { buffer in
                try plan.run(input: UnsafeBufferPointer(buffer), inputLayout: .rgb, inputMaxval: 255,
                             output: buffer, outputLayout: .rgb, outputMaxval: 255)
            }
            // R G B pieces run through the same four-channel block as R G B A ones.
            let expected = (0..<(width * height)).flatMap { outRGBA[(4 * $0)..<(4 * $0 + 3)] }
            #expect(outRGB == expected, "\(c) width \(width)")
            #expect(inPlace == expected, "\(c) width \(width), in place")
        }
    }

    @Test("rows longer than a block piece (4096 pixels), R G B and R G B A: SPEC §8 against Double",
          arguments: ["recipe", "lut/lut.tetrahedral"])
    func longRows(_ name: String) throws {
        let c = try #require(Self.cases.first { $0.name == name })
        let (width, height) = (4096 + 37, 2)
        var rng = SeededGenerator(seed: 29)
        let rgba = (0..<(width * height * 4)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        var rgb: [UInt8] = []
        for i in 0..<(width * height) { rgb += rgba[(4 * i)..<(4 * i + 3)] }
        let plan = try EditPlan(stages: c.stages).prepared(width: width, height: height, threads: 2, minimumBandPixels: 16)
        var outRGBA = rgba, outRGB = rgb
        try outRGBA.withUnsafeMutableBufferPointer { buffer in
            try plan.run(input: UnsafeBufferPointer(buffer), inputLayout: .rgba, inputMaxval: 255,
                         output: buffer, outputLayout: .rgba, outputMaxval: 255)
        }
        try outRGB.withUnsafeMutableBufferPointer { buffer in
            try plan.run(input: UnsafeBufferPointer(buffer), inputLayout: .rgb, inputMaxval: 255,
                         output: buffer, outputLayout: .rgb, outputMaxval: 255)
        }
        var colours: [UInt8] = []
        for i in 0..<(width * height) { colours += outRGBA[(4 * i)..<(4 * i + 3)] }
        #expect(outRGB == colours)
        let report = TieAwareCheck.check(outRGBA.map(UInt16.init), rgba.map(UInt16.init), width: width, height: height,
                                         maxval: 255) { c.evaluate($0, x: $1, y: $2, width: width, height: height) }
        #expect(report.failures == 0, "\(report)")
    }

    @Test("docs/edit-plan.md shows the registry's parameter table, as generated")
    func docsTableMatchesRegistry() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/edit-plan.md"), encoding: .utf8)
        let begin = "<!-- parameter table: generated from KernelFamilies.parameterTable -->\n"
        let end = "\n<!-- end of parameter table -->"
        let start = try #require(doc.range(of: begin), "docs/edit-plan.md lacks the table's start marker")
        let stop = try #require(doc.range(of: end, range: start.upperBound..<doc.endIndex))
        let table = String(doc[start.upperBound..<stop.lowerBound])
        #expect(table == KernelFamilies.parameterTable, "regenerate the table:\n\(KernelFamilies.parameterTable)")
    }
}

extension FamilyLawsTests {
    /// Parameters far outside SPEC §8's domain, which every entry point accepts (they are
    /// finite as `Float`): huge exposures, whose gain overflows `Float` from 128 EV on,
    /// and sliders near `Float`'s largest value. A fused path must not overflow, nor
    /// lose a sample to cancellation, where the reference does not. (Not a huge
    /// saturation: there the reference's own `Y + s·(C − Y)` is off by `s` times `Y`'s
    /// rounding, 15 LSB on a grey at 10⁶; only greys staying grey is asked of it.)
    static let extremeCases: [Case] = {
        // Exposure's gain overflows `Float` from 128 EV, its line's gain 2^(ev/2.4) from
        // about 307 EV and `Double` from 2457.6 EV.
        var cases = [-1000.0, -64, 64, 100, 127, 128, 400, 1000, 3000, 1e6].map { Case(name: "exposure \($0)", operations: [Exposure(ev: $0)]) }
        cases.append(Case(name: "exposure 3000 + vivid", operations: [Exposure(ev: 3000)] + Recipe(preset: .vivid).operationsInOrder))
        cases += [1e38, -1e38, 1e20, 1e6].map { Case(name: "contrast \($0)", operations: [Contrast($0)]) }
        cases += [3e38, -3e38].map { Case(name: "brightness \($0)", operations: [Brightness($0)]) }
        cases.append(Case(name: "hue 1e30", operations: [HueRotation(degrees: 1e30)]))
        cases.append(Case(name: "exposure 64 + contrast 2", operations: [Exposure(ev: 64), Contrast(2.0)]))
        cases.append(Case(name: "exposure 20 + contrast 3 + vignette 1e30", operations: [
            Exposure(ev: 20), Contrast(3.0), Vignette.vignette(intensity: 1e30, radius: 1)]))
        cases.append(Case(name: "contrast 1e20 + contrast 1e30 (no Float matrix holds both)",
                          operations: [Contrast(1e20), Contrast(1e30)]))
        let lut = LookupTable(path: "identity.cube", sha256: String(repeating: "0", count: 64),
                              url: URL(fileURLWithPath: "/identity.cube"), cube: try! ColorCube.identity(size: 9))
        cases.append(Case(name: "exposure 64 + LUT", operations: [Exposure(ev: 64), lut]))
        cases.append(Case(name: "contrast 1e38 + LUT", operations: [Contrast(1e38), lut]))
        return cases
    }()

    @Test("every preset and look, with exposures from −10 to +8 EV (+10 at 8 bits) and strong sliders, keeps the fused blocks: 8, 12 and 16 bits, straight and premultiplied")
    func catalogKeepsTheFusedBlocks() throws {
        var recipes: [(String, Recipe)] = Preset.allCases.map { ("preset \($0)", Recipe(preset: $0)) }
        recipes += PhotoEffect.allCases.map { ("look \($0)", Recipe(effect: .look($0, intensity: 1))) }
        recipes.append(("sepia + vignette 1.5", Recipe(adjustments: Adjustments(saturation: 2, contrast: 1.5), effect: .sepia(intensity: 1),
                                                      vignette: .vignette(intensity: 1.5, radius: 1))))
        recipes.append(("strong sliders + vignette −1", Recipe(adjustments: Adjustments(saturation: 2, contrast: 1.5, brightness: 0.5),
                                                               vignette: .vignette(intensity: -1, radius: 0.5))))
        for (name, base) in recipes {
            // Below about −8.3 EV a 16-bit exposure has no line, and the block reads table
            // entries; +10 EV at 8 bits and premultiplied.
            for ev in [-10.0, -8.5, -2.5, 0, 2.5, 8, 10] {
                var recipe = base
                recipe.exposure = ev
                let plan = try EditPlan(recipe).prepared(width: 64, height: 48, threads: 1)
                for (maxval, eightBit) in [(255, true), (4095, false), (65535, false)] where eightBit || ev < 10 {
                    let tables = plan.toneTables(maxval: maxval, eightBit: eightBit)
                    guard case .matrix? = plan.fusedRows(maxval: maxval, eightBit: eightBit, tables: tables, positions: .rgba) else {
                        Issue.record("\(name), exposure \(ev), maxval \(maxval): no fused block")
                        continue
                    }
                }
                #expect(plan.premultipliedBlock(.bgra8Premultiplied, .bgra8Premultiplied, variant: .simd4, building: true) != nil,
                        "\(name), exposure \(ev): no premultiplied block")
            }
        }
    }

    @Test("exposures whose gain overflows Float (from 128 EV): Float pixels get the reference's infinities and NaNs, not the finite values of exposure's line",
          arguments: [127.0, 128, 200, 300, 310, 3000])
    func floatPathAtOverflowingExposures(_ ev: Double) throws {
        let pixels: [SIMD4<Float>] = [SIMD4(1, 1, 1, 1), SIMD4(0.5, 0.2, 0.9, 1), SIMD4(0, 0, 0, 1), SIMD4(0.05, 0.5, 0.04, 0.5)]
        for operations in [[Exposure(ev: ev)], [Exposure(ev: ev)] + Recipe(preset: .vivid).operationsInOrder] as [[any RecipeOperation]] {
            let plan = try EditPlan(stages: Case(name: "", operations: operations).stages).prepared(width: 4, height: 1, threads: 1)
            var fused = try FloatImage(width: 4, height: 1, pixels: pixels), reference = fused
            try plan.run(&fused, variant: .simd4)
            try plan.run(&reference, variant: .scalar)
            for i in 0..<4 {
                for c in 0..<4 {
                    let (a, b) = (fused[pixel: i][c], reference[pixel: i][c])
                    #expect(a == b || (a.isNaN && b.isNaN) || (b.isFinite && abs(a - b) <= 1e-5 * max(1, abs(b))),
                            "exposure \(ev), \(operations.count) operations, pixel \(i) channel \(c): \(a) against \(b)")
                }
            }
        }
    }

    @Test("far outside SPEC §8's domain the fused paths stay within 1 LSB of the scalar reference: 8-bit RGBA and RGB, 16-bit, straight and premultiplied BGRA buffers",
          arguments: extremeCases)
    func extremeParameters(_ c: Case) throws {
        let (w, h) = (37, 4)
        var rng = SeededGenerator(seed: 77)
        var samples: [UInt16] = []
        for i in 0..<(w * h) {
            // Black, white, greys and one-LSB colours first, then random pixels; alpha
            // random, so that premultiplied pixels take both of their paths, and odd, so
            // that no straight colour is contrast's pivot 0.5, which the reference's
            // `(C − 0.5)·c + 0.5` keeps and the fused matrix's `c·C + t` cannot at such a
            // factor (an ulp of `t` is then more than 1).
            let a = i % 3 == 0 ? 255 : 2 * Int.random(in: 0...127, using: &rng) + 1
            switch i {
            case 0: samples += [0, 0, 0, 255]
            case 1: samples += [255, 255, 255, 255]
            case 2: samples += [1, 1, 1, 255]
            case 3: samples += [128, 64, 32, 255]
            case 4..<12: samples += [UInt16(i * 20), UInt16(i * 20), UInt16(i * 20), 255]
            default: samples += (0..<3).map { _ in UInt16.random(in: 0...UInt16(a), using: &rng) } + [UInt16(a)]
            }
        }
        let plan = try EditPlan(stages: c.stages).prepared(width: w, height: h, threads: 1)
        func expectClose(_ fused: [UInt16], _ reference: [UInt16], _ path: String) {
            let worst = zip(fused, reference).map { abs(Int($0) - Int($1)) }.max() ?? 0
            let first = zip(fused, reference).enumerated().first { abs(Int($1.0) - Int($1.1)) > 1 }
            #expect(worst <= 1, "\(c) \(path): worst \(worst) LSB; first at sample \(first?.offset ?? -1): \(first.map { "\($0.element)" } ?? "")")
        }
        for maxval in [255, 65535] {
            let scaled = maxval == 255 ? samples : samples.map { $0 &* 257 }
            expectClose(try runRGBA(plan, scaled, maxval: maxval), try runRGBA(plan, scaled, maxval: maxval, variant: .scalar),
                        "RGBA maxval \(maxval)")
        }
        // R G B samples take the four-channel block with A = 255.
        let rgb = (0..<(w * h)).flatMap { samples[(4 * $0)..<(4 * $0 + 3)].map { UInt8($0) } }
        var outputs: [[UInt8]] = []
        for variant in [KernelVariant.simd4, .scalar] {
            var out = [UInt8](repeating: 0, count: rgb.count)
            try rgb.withUnsafeBufferPointer { i in
                try out.withUnsafeMutableBufferPointer { o in
                    try plan.run(input: i, inputLayout: .rgb, inputMaxval: 255, output: o, outputLayout: .rgb, outputMaxval: 255,
                                 variant: variant)
                }
            }
            outputs.append(out)
        }
        expectClose(outputs[0].map(UInt16.init), outputs[1].map(UInt16.init), "RGB")
        // App buffers: B G R A, straight and premultiplied (the 2D tone tables).
        for format in [PixelFormat.bgra8Premultiplied, .rgba8] {
            var results: [[UInt8]] = []
            for variant in [KernelVariant.simd4, .scalar] {
                var bytes = (0..<(w * h)).flatMap { i in [2, 1, 0, 3].map { UInt8(samples[4 * i + $0]) } }
                try bytes.withUnsafeMutableBytes { raw in
                    let buffer = try PixelBuffer(baseAddress: raw.baseAddress!, width: w, height: h, bytesPerRow: 4 * w, format: format)
                    try plan.run(buffer, variant: variant)
                }
                results.append(bytes)
            }
            expectClose(results[0].map(UInt16.init), results[1].map(UInt16.init), "\(format)")
        }
    }
}

/// SPEC §8 for integer samples: each sample must be `round_half_even(clamp(x)·m)` of the
/// `Double` value `x`, unless `x·m` lies within `τ·m` of a tie `k + ½` (τ = 2⁻²⁰), where
/// either neighbour is right.
enum TieAwareCheck {
    struct Report: CustomStringConvertible {
        var failures = 0
        var nearTies = 0
        var first: String?
        /// The largest `beyond` of a wrong sample (`IntegerTolerance.Verdict`): how far,
        /// in LSB, the values that round to it lay past the window round the exact value.
        /// `failures`, not this, says whether every sample is right.
        var worst = 0.0
        var description: String {
            "\(failures) wrong samples, \(nearTies) accepted near ties, worst \(worst) LSB" + (first.map { "; first: \($0)" } ?? "")
        }
    }

    /// Whether `sample` is right for the exact value `x` at `maxval` (the library's
    /// `IntegerTolerance`), and how far beyond the tie window a wrong one lay.
    static func accepts(_ sample: Int, _ x: Double, maxval: Int) -> (ok: Bool, nearTie: Bool, beyond: Double) {
        switch IntegerTolerance.verdict(sample, exact: x, maxval: maxval) {
        case .exact: (true, false, 0)
        case .nearTie: (true, true, 0)
        case .wrong(let beyond): (false, false, beyond)
        }
    }

    /// Checks every colour sample of an RGBA raster (alpha must be the input's).
    static func check(_ out: [UInt16], _ input: [UInt16], width: Int, height: Int, maxval: Int,
                      oracle: (SIMD4<Double>, Int, Int) -> SIMD4<Double>) -> Report {
        var report = Report()
        let m = Double(maxval)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let c = SIMD4(Double(input[i]) / m, Double(input[i + 1]) / m, Double(input[i + 2]) / m, Double(input[i + 3]) / m)
                let exact = oracle(c, x, y)
                for ch in 0..<3 {
                    let verdict = accepts(Int(out[i + ch]), exact[ch], maxval: maxval)
                    if verdict.nearTie { report.nearTies += 1 }
                    if !verdict.ok {
                        report.failures += 1
                        report.worst = max(report.worst, verdict.beyond)
                        if report.first == nil {
                            report.first = "pixel (\(x), \(y)) channel \(ch): input \(input[i + ch]), got \(out[i + ch]), exact \(exact[ch] * m)"
                        }
                    }
                }
                if out[i + 3] != input[i + 3] {
                    report.failures += 1
                    if report.first == nil { report.first = "pixel (\(x), \(y)): alpha changed" }
                }
            }
        }
        return report
    }
}

/// `HalfTolerance` on samples given as their bits, so that the checks compile where
/// `Float16` does not exist (Intel Macs), where no test reaches them.
enum HalfCheck {
    /// Whether the half with bits `bits` is right for the exact value `x`.
    static func accepts(_ bits: UInt16, _ x: Double) -> Bool {
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        if case .wrong = HalfTolerance.verdict(Float16(bitPattern: bits), exact: x) { return false }
        return true
        #else
        return false
        #endif
    }

    /// The bits of `Float16(x)`, rounded to nearest even.
    static func bits(_ x: Float) -> UInt16 {
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        Float16(x).bitPattern
        #else
        0
        #endif
    }

    /// The value of the half with bits `bits`, for messages.
    static func value(_ bits: UInt16) -> Double {
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        Double(Float16(bitPattern: bits))
        #else
        .nan
        #endif
    }
}
