import Testing
@testable import PhotoKernels

/// Counts samples that differ between two rasters and the largest difference.
func sampleDifferences<S: FixedWidthInteger>(_ a: [S], _ b: [S]) -> (count: Int, largest: Int) {
    var count = 0, largest = 0
    for (x, y) in zip(a, b) where x != y {
        count += 1
        largest = max(largest, abs(Int(x) - Int(y)))
    }
    return (count, largest)
}

@Suite("Sample pipeline: the packed integer fast path (SPEC §0, §8)")
struct SamplePipelineTests {
    /// Matrices from the library: presets, looks, a hue turn, one that overshoots both
    /// ends, and three that put samples on exact .5 ties at maxval 255 (brightness
    /// 0.1 adds 25.5; contrast 2 maps v to 2v − 127.5).
    static let matrices: [ColorMatrixKernel] = [
        Adjustments.vivid.kernel, Adjustments.noir.kernel, Adjustments.dream.kernel,
        PhotoEffect.instant.kernel, PhotoEffect.transfer.kernel, ColorMatrixKernel(.sepia(intensity: 1)),
        Adjustments(saturation: 2, contrast: 1.5, brightness: -0.3, hue: 123).kernel,
        Adjustments(brightness: 0.1).kernel, Adjustments(contrast: 2).kernel,
        Adjustments(saturation: 1.3, brightness: 0.1).kernel,
    ]

    /// 8-bit RGBA through the public pipeline entry point for `UInt8` samples, the type
    /// that takes the packed 8-bit block when the kernels are one matrix.
    static func run8(_ kernels: [any PixelKernel], _ bytes: [UInt8], width: Int, height: Int, maxval: Int,
                     variant: KernelVariant = .simd4, threads: Int = 2) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: bytes.count)
        try bytes.withUnsafeBufferPointer { input in
            try out.withUnsafeMutableBufferPointer { output in
                try SamplePipeline.run(kernels, width: width, height: height, input: input, inputLayout: .rgba,
                                       inputMaxval: maxval, output: output, outputLayout: .rgba,
                                       outputMaxval: maxval, variant: variant, threads: threads)
            }
        }
        return out
    }

    /// The packed path on 8-bit RGBA.
    static func packed8(_ kernel: ColorMatrixKernel, _ bytes: [UInt8], width: Int, height: Int, maxval: Int,
                        threads: Int = 2) throws -> [UInt8] {
        try run8([kernel], bytes, width: width, height: height, maxval: maxval, threads: threads)
    }

    /// SPEC §8 for one matrix on an RGBA raster: every sample against the `Double` matrix.
    static func tieAware(_ kernel: ColorMatrixKernel, _ out: [UInt16], _ input: [UInt16], width: Int, height: Int,
                         maxval: Int) -> TieAwareCheck.Report {
        TieAwareCheck.check(out, input, width: width, height: height, maxval: maxval) { c, _, _ in
            let v = kernel.matrix.applied(to: SIMD3(c.x, c.y, c.z))
            return SIMD4(v.x, v.y, v.z, c.w)
        }
    }

    @Test("the fast path and the scalar path are both SPEC §8-exact, 8 and 16 bits, ties included; widths 1…33")
    func fastMatchesScalar() throws {
        for maxval in [255, 100, 65535, 4095] {
            var total = 0, differing = 0, largest = 0
            for (n, kernel) in Self.matrices.enumerated() {
                for (w, h) in testShapes {
                    var rng = SeededGenerator(seed: UInt64(n * 7919 + w * 31 + h))
                    let samples = (0..<(w * h * 4)).map { _ in UInt16.random(in: 0...UInt16(maxval), using: &rng) }
                    let reference = try SamplePipeline.run([kernel], width: w, height: h, samples: samples, layout: .rgba,
                                                           maxval: maxval, variant: .scalar, threads: 1)
                    let fast: [UInt16]
                    if maxval <= 255 {
                        fast = try Self.packed8(kernel, samples.map { UInt8($0) }, width: w, height: h, maxval: maxval)
                            .map(UInt16.init)
                    } else {
                        fast = try SamplePipeline.run([kernel], width: w, height: h, samples: samples, layout: .rgba,
                                                      maxval: maxval, variant: .simd4, threads: 2)
                    }
                    let d = sampleDifferences(fast, reference)
                    total += samples.count
                    differing += Self.tieAware(kernel, fast, samples, width: w, height: h, maxval: maxval).failures
                        + Self.tieAware(kernel, reference, samples, width: w, height: h, maxval: maxval).failures
                    largest = max(largest, d.largest)
                    // Alpha is copied, never recomputed.
                    #expect(stride(from: 3, to: fast.count, by: 4).allSatisfy { fast[$0] == samples[$0] },
                            "\(kernel.name) \(w)×\(h) maxval \(maxval): alpha changed")
                }
            }
            // Both are correctly rounded except within τ of a tie, where they may differ by 1.
            #expect(differing == 0 && largest <= 1, "maxval \(maxval): \(differing) of \(total) samples wrong; paths differ by up to \(largest)")
        }
    }

    @Test("exact ties at 8 bits: every sample value 0…255 in every channel and every grey is SPEC §8-exact on both paths")
    func exactTies() throws {
        // Brightness 0.1 puts every unclamped 8-bit sample on a tie k + ½, contrast 2
        // and saturation with brightness 0.1 many: the folded block lands on the tie and
        // rounds to even, the scalar path a rounding error to one side; both are right.
        var pixels: [UInt8] = []
        for v in 0...255 {
            let u = UInt8(v)
            pixels += [u, u, u, 255]                         // greys
            pixels += [u, 255 - u, u &* 7, u]                // every value in every channel
        }
        let width = pixels.count / 4
        let samples = pixels.map(UInt16.init)
        for kernel in Self.matrices {
            for maxval in [255] {
                let reference = try SamplePipeline.run([kernel], width: width, height: 1, samples: samples, layout: .rgba,
                                                       maxval: maxval, variant: .scalar, threads: 1).map(UInt8.init)
                let fast = try Self.packed8(kernel, pixels, width: width, height: 1, maxval: maxval)
                let d = sampleDifferences(fast, reference)
                let wrong = Self.tieAware(kernel, fast.map(UInt16.init), samples, width: width, height: 1, maxval: maxval).failures
                    + Self.tieAware(kernel, reference.map(UInt16.init), samples, width: width, height: 1, maxval: maxval).failures
                #expect(wrong == 0 && d.largest <= 1, "\(kernel.name): \(wrong) wrong samples; paths differ by up to \(d.largest)")
            }
        }
        // Hand-computed: brightness 0.1 on 33 is 33 + 25.5 = 58.5 exactly, a tie. The
        // folded block computes 33 + 25.5 in Float, exactly 58.5, and rounds to even: 58;
        // the scalar path's (33/255 + 0.1)·255 is 58.500004: 59. Likewise 35 → 60 or 61.
        let lifted = try Self.packed8(Adjustments(brightness: 0.1).kernel, [33, 35, 255, 7], width: 1, height: 1, maxval: 255)
        #expect(lifted == [58, 60, 255, 7])
    }

    @Test("the fast path on the identity matrix returns the input bytes")
    func identity() throws {
        var rng = SeededGenerator(seed: 3)
        let bytes = (0..<(37 * 3 * 4)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        var out = [UInt8](repeating: 0, count: bytes.count)
        try bytes.withUnsafeBufferPointer { input in
            try out.withUnsafeMutableBufferPointer { output in
                try SamplePipeline.run([ColorMatrixKernel(.identity)], width: 37, height: 3, input: input, inputLayout: .rgba,
                                       inputMaxval: 255, output: output, outputLayout: .rgba, outputMaxval: 255)
            }
        }
        #expect(out == bytes)
    }

    @Test("sizes, maxvals and counts outside the contract throw EditPlanError and write nothing; thread counts are capped")
    func refusedRuns() throws {
        let kernels: [any PixelKernel] = [Adjustments.vivid.kernel]
        let bytes = [UInt8](repeating: 200, count: 2 * 2 * 4)
        #expect(throws: EditPlanError.sampleCountMismatch(buffer: "input", expected: 24, found: 16)) {
            try Self.run8(kernels, bytes, width: 3, height: 2, maxval: 255)
        }
        #expect(throws: EditPlanError.invalidMaxval(256, sampleBits: 8)) {
            try Self.run8(kernels, bytes, width: 2, height: 2, maxval: 256)
        }
        #expect(throws: EditPlanError.invalidSize(width: 0, height: 2)) {
            try Self.run8(kernels, bytes, width: 0, height: 2, maxval: 255)
        }
        // A thread count no machine has is capped at what the image can use.
        #expect(try Self.run8(kernels, bytes, width: 2, height: 2, maxval: 255, threads: 1 << 62)
                == Self.run8(kernels, bytes, width: 2, height: 2, maxval: 255, threads: 1))
        var out = [UInt8](repeating: 7, count: 2 * 2 * 4)
        #expect(throws: EditPlanError.sampleCountMismatch(buffer: "output", expected: 16, found: 15)) {
            try bytes.withUnsafeBufferPointer { input in
                try out.withUnsafeMutableBufferPointer { output in
                    try SamplePipeline.run(kernels, width: 2, height: 2, input: input, inputLayout: .rgba, inputMaxval: 255,
                                           output: UnsafeMutableBufferPointer(rebasing: output[1...]), outputLayout: .rgba,
                                           outputMaxval: 255)
                }
            }
        }
        #expect(throws: EditPlanError.invalidMaxval(0, sampleBits: 8)) {
            try bytes.withUnsafeBufferPointer { input in
                try out.withUnsafeMutableBufferPointer { output in
                    try SamplePipeline.run(kernels, width: 2, height: 2, input: input, inputLayout: .rgba, inputMaxval: 255,
                                           output: output, outputLayout: .rgba, outputMaxval: 0)
                }
            }
        }
        #expect(out == [UInt8](repeating: 7, count: 16), "a refused run writes nothing")
        // The arguments are checked before the plan is prepared: a width whose scratch
        // rows no machine has is named by the buffer it does not match.
        #expect(throws: EditPlanError.sampleCountMismatch(buffer: "input", expected: 1 << 36, found: 16)) {
            try Self.run8(kernels, bytes, width: 1 << 34, height: 1, maxval: 255)
        }

        // The array forms check the input before they allocate the output.
        let words = [UInt16](repeating: 1000, count: 12)
        #expect(throws: EditPlanError.invalidSize(width: 1 << 62, height: 1 << 62)) {
            try SamplePipeline.run(kernels, width: 1 << 62, height: 1 << 62, samples: words, layout: .rgb, maxval: 65535)
        }
        #expect(throws: EditPlanError.sampleCountMismatch(buffer: "input", expected: 1 << 38, found: 12)) {
            try SamplePipeline.run(kernels, width: 1 << 19, height: 1 << 19, samples: words, layout: .gray, maxval: 65535)
        }
        var inPlace = words
        #expect(throws: EditPlanError.invalidMaxval(0, sampleBits: 16)) {
            try SamplePipeline.runInPlace(kernels, width: 2, height: 2, samples: &inPlace, layout: .rgb, maxval: 0)
        }
        #expect(throws: EditPlanError.sampleCountMismatch(buffer: "input", expected: 16, found: 12)) {
            try SamplePipeline.runInPlace(kernels, width: 2, height: 2, samples: &inPlace, layout: .rgba, maxval: 65535)
        }
        #expect(inPlace == words, "a refused run in place leaves the samples as they were")
    }

    @Test("sample buffers that overlap other than as the same memory of the same pixel size are refused and nothing is written; the same memory runs in place")
    func overlappingSampleBuffers() throws {
        let plan = try EditPlan(Recipe(preset: .vivid)).prepared(width: 8, height: 2, threads: 1)
        let pixels = (0..<(8 * 2 * 4)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        var memory = pixels + [UInt8](repeating: 0, count: 64)
        memory.withUnsafeMutableBufferPointer { all in
            let base = all.baseAddress!
            let input = UnsafeBufferPointer(start: base, count: 64)
            // Shifted by one pixel, by a byte, and RGB read from the same memory RGBA is written to.
            for (name, output, layout, outputLayout) in [
                ("shifted by 4 bytes", UnsafeMutableBufferPointer(start: base + 4, count: 64), SampleLayout.rgba, SampleLayout.rgba),
                ("shifted by 1 byte", UnsafeMutableBufferPointer(start: base + 1, count: 64), .rgba, .rgba),
                ("RGB in, RGBA out", UnsafeMutableBufferPointer(start: base, count: 64), .rgb, .rgba),
            ] {
                let inputCount = layout == .rgb ? 48 : 64
                #expect(throws: EditPlanError.buffer(.overlappingBuffers), "\(name)") {
                    try plan.run(input: UnsafeBufferPointer(start: input.baseAddress, count: inputCount), inputLayout: layout,
                                 inputMaxval: 255, output: output, outputLayout: outputLayout, outputMaxval: 255)
                }
            }
        }
        #expect(Array(memory[0..<64]) == pixels, "a refused run writes nothing")
        // The same memory with the same pixel size is in place, as out of place.
        var separate = [UInt8](repeating: 0, count: 64)
        try pixels.withUnsafeBufferPointer { i in
            try separate.withUnsafeMutableBufferPointer { o in
                try plan.run(input: i, inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba, outputMaxval: 255)
            }
        }
        var inPlace = pixels
        try inPlace.withUnsafeMutableBufferPointer { o in
            try plan.run(input: UnsafeBufferPointer(o), inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba,
                         outputMaxval: 255)
        }
        #expect(inPlace == separate)
    }

    @Test("hand-computed: vivid on (204, 102, 51, 153) gives (255, 95, 0, 153)")
    func handComputed() throws {
        // (0.8, 0.4, 0.2) → vivid → (1.186696, 0.370696, −0.037304): clamp, ×255, round.
        let bytes: [UInt8] = [204, 102, 51, 153]
        var out = [UInt8](repeating: 0, count: 4)
        try bytes.withUnsafeBufferPointer { input in
            try out.withUnsafeMutableBufferPointer { output in
                try SamplePipeline.run([Adjustments.vivid.kernel], width: 1, height: 1, input: input, inputLayout: .rgba,
                                       inputMaxval: 255, output: output, outputLayout: .rgba, outputMaxval: 255)
            }
        }
        #expect(out == [255, 95, 0, 153])
    }

    @Test("exposure on integer samples, table or line: SIMD4 and scalar differ only at near ties (SPEC §8), every layout")
    func exposureTable() throws {
        for layout in SampleLayout.allCases {
            for maxval in [255, 65535] {
                var rng = SeededGenerator(seed: UInt64(maxval) + UInt64(layout.rawValue))
                let (w, h) = (29, 5)
                let samples = (0..<(w * h * layout.channelCount)).map { _ in UInt16.random(in: 0...UInt16(maxval), using: &rng) }
                for ev: Float in [-2.5, 0.7, 3] {
                    let scalar = try SamplePipeline.run([Exposure(ev: ev)], width: w, height: h, samples: samples, layout: layout,
                                                        maxval: maxval, variant: .scalar, threads: 1)
                    let simd = try SamplePipeline.run([Exposure(ev: ev)], width: w, height: h, samples: samples, layout: layout,
                                                      maxval: maxval, variant: .simd4, threads: 2)
                    // Alpha (the last channel of GA and RGBA) is copied; a colour sample
                    // may differ only where its exact value lies within τ of a tie.
                    let exposure = Exposure(ev: Double(ev))
                    let colours = layout.channelCount >= 3 ? 3 : 1
                    var differing = 0
                    for i in samples.indices where simd[i] != scalar[i] {
                        differing += 1
                        let channel = i % layout.channelCount
                        guard channel < colours else {
                            Issue.record("\(layout) maxval \(maxval) ev \(ev): alpha sample \(i) changed")
                            continue
                        }
                        let x = Double(samples[i]) / Double(maxval)
                        let exact = exposure.evaluate(SIMD4(x, x, x, 1), x: 0, y: 0, width: 1, height: 1).x
                        // One is the correctly rounded value, the other its neighbour
                        // across a tie within τ.
                        let verdicts = [simd[i], scalar[i]].map { IntegerTolerance.verdict(Int($0), exact: exact, maxval: maxval) }
                        #expect(verdicts.contains(.nearTie) && verdicts.allSatisfy { $0 == .exact || $0 == .nearTie },
                                "\(layout) maxval \(maxval) ev \(ev): sample \(i) (input \(samples[i])) gives \(simd[i]) and \(scalar[i]), exact \(exact * Double(maxval))")
                    }
                    #expect(differing <= samples.count / 100, "\(layout) maxval \(maxval) ev \(ev): \(differing) samples differ")
                }
            }
        }
    }

    @Test("the first sample of exposure's line: above 0.04045 and above the encoded switch point; the tables hold the line there",
          arguments: [(0.3, 255, 11), (0.3, 65535, 2651), (-2.5, 255, 37), (-2.5, 65535, 9273), (3.0, 255, 11)])
    func firstLineSample(_ ev: Double, _ maxval: Int, _ first: Int) throws {
        let segment = try #require(Exposure(ev: ev).affineSegment)
        #expect(ToneLine.firstSample(above: segment.lowerBound, maxval: maxval, eightBit: maxval == 255) == first)
        // On the segment the line is the scalar formula (within Float rounding).
        for v in [first, (first + maxval) / 2, maxval] {
            let x = Double(v) / Double(maxval)
            let exact = Exposure(ev: ev).evaluate(SIMD4(x, x, x, 1), x: 0, y: 0, width: 1, height: 1).x
            #expect(abs(segment.gain * x + segment.offset - exact) < 1e-12, "ev \(ev) sample \(v)")
        }
        // The tone table holds the line's values from that sample on, within a few
        // Float ulps of the formula, and below it the formula in Double, rounded once.
        let tables = ToneTables([Exposure(ev: ev)], maxval: maxval, eightBit: maxval == 255)
        let line = try #require(tables.line)
        #expect(line.from == first)
        for v in [0, first / 2, first - 1, first, first + 1, maxval] {
            let x = Double(v) / Double(maxval)
            let exact = Exposure(ev: ev).evaluate(SIMD4(x, x, x, 1), x: 0, y: 0, width: 1, height: 1).x
            #expect(tables.red[v] == (v >= first ? line.value(v) : Float(exact)), "ev \(ev) sample \(v)")
            #expect(abs(Double(tables.red[v]) - exact) < 4e-7, "ev \(ev) sample \(v): \(tables.red[v]) vs \(exact)")
        }
        // The same entries as coordinates on the line, for the fused blocks: the sample
        // itself, exactly, where the entry is the line's value, and below it the
        // coordinate the line maps back to the entry.
        let coordinates = try #require(tables.coordinates)
        for v in [0, first / 2, first - 1, first, first + 1, maxval] {
            let u = coordinates.red[v]
            if v >= first {
                #expect(u == Float(v), "ev \(ev) sample \(v): coordinate \(u)")
            } else {
                let back = Double(u) * segment.gain / Double(maxval) + segment.offset
                #expect(abs(back - Double(tables.red[v])) < 1e-7, "ev \(ev) sample \(v): \(back) vs \(tables.red[v])")
            }
        }
        // Just below it the power and linear segments meet: the line no longer holds.
        let below = Double(first - 1) / Double(maxval) - 0.01
        let exactBelow = Exposure(ev: ev).evaluate(SIMD4(below, below, below, 1), x: 0, y: 0, width: 1, height: 1).x
        #expect(abs(segment.gain * below + segment.offset - exactBelow) > 1e-6, "ev \(ev): the line holds below the segment")
    }

    @Test("blocks of pixels on both sides of the line's first sample: SPEC §8 against Double, 8 and 16 bits",
          arguments: [0.3, -2.5])
    func groupsAroundLineStart(_ ev: Double) throws {
        let vivid = Recipe(preset: .vivid).operationsInOrder
        let matrices: [(String, [any RecipeOperation])] = [
            ("vivid (relative form)", [Exposure(ev: ev)] + vivid),
            ("sepia (plain form)", [Exposure(ev: ev), Effect.sepia(intensity: 0.7)]),
            ("exposure alone", [Exposure(ev: ev)]),
            ("vivid + vignette", [Exposure(ev: ev)] + vivid + [Vignette.vignette(intensity: 0.8, radius: 0.9)]),
        ]
        for maxval in [255, 65535] {
            let segment = try #require(Exposure(ev: ev).affineSegment)
            let first = try #require(ToneLine.firstSample(above: segment.lowerBound, maxval: maxval, eightBit: maxval == 255))
            // Blocks of the build's width (8, or 16 with AVX-512): samples first … first + 3,
            // and in every third block one colour sample at first − 1, which sends that
            // block to the table loads; the rest, 2 in 3 (at least 5 in 8 of a piece's first
            // 16 blocks), keep the piece in the loop that takes the samples on the line.
            let (w, h) = (64, 4)
            var rng = SeededGenerator(seed: UInt64(maxval))
            var samples: [UInt16] = []
            for p in 0..<(w * h) {
                var pixel = (0..<3).map { _ in UInt16(first + Int.random(in: 0...3, using: &rng)) } + [UInt16(maxval)]
                let block = p / blockPixels
                if block % 3 == 2 && p % blockPixels == block % blockPixels { pixel[p % 3] = UInt16(first - 1) }
                samples += pixel
            }
            for (name, operations) in matrices {
                let plan = try EditPlan(stages: operations.flatMap(\.stages)).prepared(width: w, height: h, threads: 1)
                let out = try runRGBA(plan, samples, maxval: maxval)
                let report = TieAwareCheck.check(out, samples, width: w, height: h, maxval: maxval) { c, x, y in
                    operations.reduce(c) { $1.evaluate($0, x: x, y: y, width: w, height: h) }
                }
                #expect(report.failures == 0, "ev \(ev) \(name) maxval \(maxval): \(report)")
            }
        }
    }

    @Test("the premultiplied 2D tables as coordinates on the line: row A = 255 holds c itself from the line's first sample, A = 0 maps back to 0; no line, no coordinates")
    func premultipliedCoordinates() throws {
        let tables = ToneTables(premultiplied: [Exposure(ev: 0.3)])
        let (line, coordinates) = (try #require(tables.line), try #require(tables.coordinates))
        let (g, o) = (line.segment.gain, line.segment.offset)
        for c in [0, line.from - 1, line.from, 128, 255] {
            let opaque = 255 << 8 | c
            if c >= line.from {
                #expect(coordinates.red[opaque] == Float(c) && tables.red[opaque] == line.value(c), "c \(c)")
            }
            for index in [opaque, 128 << 8 | c, c] {
                let back = Double(coordinates.green[index]) * g / 255 + o
                #expect(abs(back - Double(tables.green[index])) < 1e-7, "entry \(index): \(back) vs \(tables.green[index])")
            }
        }
        let curve = try ToneCurve(masterPoints: [SIMD2(0, 0), SIMD2(0.3, 0.2), SIMD2(1, 1)])
        #expect(ToneTables([curve], maxval: 255, eightBit: true).coordinates == nil, "a curve has no line")
    }

    @Test("a pixel on the line gives the same bits whichever way its block goes, its samples through the folded matrix or its table entries; exact ties included, 8 and 16 bits",
          arguments: [255, 65535])
    func lineAndTableAgree(_ maxval: Int) throws {
        let ev = 0.3
        let segment = try #require(Exposure(ev: ev).affineSegment)
        let first = try #require(ToneLine.firstSample(above: segment.lowerBound, maxval: maxval, eightBit: maxval == 255))
        // After exposure, `diag(1/G)` with offset `½/m − o/G` puts every sample on the
        // line on an exact tie, v + ½: a path that rounded its way there differently
        // would land on the other side for about half of them.
        let m = Double(maxval), (g, o) = (segment.gain, segment.offset)
        let tie = ColorMatrixKernel(ColorMatrix(SIMD3(1 / g, 0, 0), SIMD3(0, 1 / g, 0), SIMD3(0, 0, 1 / g),
                                                offset: SIMD3(repeating: 0.5 / m - o / g)))
        let vivid: [any RecipeOperation] = [Exposure(ev: ev)] + Recipe(preset: .vivid).operationsInOrder
        let sepia: [any RecipeOperation] = [Exposure(ev: ev), Effect.sepia(intensity: 0.7),
                                            Vignette.vignette(intensity: 0.8, radius: 0.9)]
        let edits: [(String, [Stage])] = [
            ("exposure, then ties", Exposure(ev: ev).stages + [tie.stage]),
            ("vivid (relative form)", vivid.flatMap(\.stages)),
            ("sepia + vignette", sepia.flatMap(\.stages)),
        ]
        let (w, h) = (64, 2)
        var rng = SeededGenerator(seed: UInt64(maxval) + 7)
        let onLine = (0..<(w * h)).flatMap { _ in (0..<3).map { _ in UInt16(Int.random(in: first...maxval, using: &rng)) } + [UInt16(maxval)] }
        for (name, stages) in edits {
            let plan = try EditPlan(stages: stages).prepared(width: w, height: h, threads: 1)
            let clean = try runRGBA(plan, onLine, maxval: maxval)
            // One colour sample below the line in every fourth pixel: every block then
            // loads its table entries (the piece takes the table loop).
            for k in 0..<4 {
                var spoiled = onLine
                for p in stride(from: k, to: w * h, by: 4) { spoiled[4 * p + p % 3] = UInt16(first - 1) }
                let out = try runRGBA(plan, spoiled, maxval: maxval)
                var differing = 0
                for p in 0..<(w * h) where p % 4 != k {
                    if out[(4 * p)..<(4 * p + 4)] != clean[(4 * p)..<(4 * p + 4)] { differing += 1 }
                }
                #expect(differing == 0, "\(name), maxval \(maxval), pixels \(k) mod 4 off the line: \(differing) pixels changed")
            }
            if name.hasSuffix("ties") {
                // v + ½ rounds half to even; alpha kept.
                for p in 0..<(w * h) {
                    for c in 0..<3 {
                        let v = Int(onLine[4 * p + c])
                        #expect(Int(clean[4 * p + c]) == min(maxval, v + (v & 1)), "pixel \(p) channel \(c): \(v) gave \(clean[4 * p + c])")
                    }
                }
            }
        }
    }

    @Test("a centred vignette's rows in mirrored pairs: every row once, SPEC §8 against Double at any height and thread count; a band within the image gives the same rows to the bit")
    func mirroredRowOrder() throws {
        let operations: [any RecipeOperation] = [Exposure(ev: 0.3)] + Recipe(preset: .vivid).operationsInOrder
            + [Vignette.vignette(intensity: 0.8, radius: 0.9)]
        let stages = operations.flatMap(\.stages)
        // 5 columns: groups of 8 rows; heights below, at and between whole pairs of groups.
        let w = 5
        for h in [1, 2, 3, 8, 15, 16, 17, 31, 33, 40] {
            var rng = SeededGenerator(seed: UInt64(h))
            let samples = (0..<(w * h)).flatMap { _ in (0..<3).map { _ in UInt16.random(in: 0...255, using: &rng) } + [255] }
            var whole: [UInt16] = []
            for threads in [1, 2, 3] {
                let plan = try EditPlan(stages: stages).prepared(width: w, height: h, threads: threads, minimumBandPixels: 1)
                let out = try runRGBA(plan, samples, maxval: 255)
                let report = TieAwareCheck.check(out, samples, width: w, height: h, maxval: 255) { c, x, y in
                    operations.reduce(c) { $1.evaluate($0, x: x, y: y, width: w, height: h) }
                }
                #expect(report.failures == 0, "height \(h), \(threads) threads: \(report)")
                if threads == 1 { whole = out } else { #expect(out == whole, "height \(h), \(threads) threads") }
            }
            // Bands: centred in the image (paired) and not (top to bottom).
            let plan = try EditPlan(stages: stages).prepared(width: w, height: h, threads: 1)
            for (top, rows) in [(1, h - 2), (0, h - 1), (2, h / 2)] where rows >= 1 && top + rows <= h {
                let range = (4 * w * top)..<(4 * w * (top + rows))
                let input = samples[range].map { UInt8($0) }
                var band = [UInt8](repeating: 0, count: input.count)
                try input.withUnsafeBufferPointer { i in
                    try band.withUnsafeMutableBufferPointer { o in
                        try plan.run(input: i, inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba,
                                     outputMaxval: 255, region: ImageRegion(x: 0, y: top, width: w, height: rows))
                    }
                }
                #expect(band.map(UInt16.init) == Array(whole[range]), "height \(h), rows \(top) ..< \(top + rows)")
            }
        }
    }

    @Test("Float rows on exposure's line with one pixel off it at each place of a block of 8 and in the tail: the reference within 1e-5, no other pixel changed")
    func floatBlockOffLine() throws {
        let vivid = Recipe(preset: .vivid).operationsInOrder
        let edits: [(String, [any RecipeOperation])] = [
            ("vivid (relative form)", [Exposure(ev: 0.3)] + vivid),
            ("sepia (plain form)", [Exposure(ev: 0.3), Effect.sepia(intensity: 0.7)]),
            ("vivid + vignette", [Exposure(ev: -1)] + vivid + [Vignette.vignette(intensity: 0.8, radius: 0.9)]),
        ]
        // 3 blocks of 8 pixels and 3 more: every pixel's channels on the line (0.1…0.9).
        let w = 27
        var rng = SeededGenerator(seed: 27)
        let onLine = try FloatImage(width: w, height: 1, pixels: (0..<w).map { _ in
            SIMD4(Float.random(in: 0.1...0.9, using: &rng), Float.random(in: 0.1...0.9, using: &rng),
                  Float.random(in: 0.1...0.9, using: &rng), Float.random(in: 0...1, using: &rng))
        })
        for (name, operations) in edits {
            let plan = try EditPlan(stages: operations.flatMap(\.stages)).prepared(width: w, height: 1, threads: 1)
            func run(_ image: FloatImage, _ variant: KernelVariant) throws -> FloatImage {
                var out = image
                try plan.run(&out, variant: variant)
                return out
            }
            func expectNearReference(_ input: FloatImage, _ what: String) throws {
                let (fused, reference) = (try run(input, .simd4), try run(input, .scalar))
                // SPEC §8 compares pixels whose inputs lie in [−1, 2].
                for i in 0..<w where (0..<3).allSatisfy({ (-1...2).contains(input.pixels[i][$0]) }) {
                    for c in 0..<3 {
                        #expect(abs(fused.pixels[i][c] - reference.pixels[i][c]) <= 1e-5,
                                "\(name) \(what): pixel \(i) channel \(c): \(fused.pixels[i][c]) vs \(reference.pixels[i][c])")
                    }
                    #expect(fused.pixels[i].w.bitPattern == input.pixels[i].w.bitPattern, "\(name) \(what): alpha at \(i)")
                }
            }
            try expectNearReference(onLine, "on the line")
            let clean = try run(onLine, .simd4)
            // Below the segment (a shadow), negative, beyond 1e30, NaN and ∞.
            for off: Float in [0.01, -0.2, 1e31, .nan, .infinity] {
                for k in 0..<w {
                    var input = onLine
                    input[k, 0][k % 3] = off
                    try expectNearReference(input, "\(off) at \(k)")
                    let out = try run(input, .simd4)
                    for i in 0..<w where i != k {
                        #expect(sameBits(out.pixels[i], clean.pixels[i]), "\(name): \(off) at \(k) changed pixel \(i)")
                    }
                }
            }
        }
    }

    @Test("Float block of tones alone: the diagonal form gives the plain form's bits (with and without gains), pixels off the line included")
    func floatBlockDiagonalForm() throws {
        var rng = SeededGenerator(seed: 41)
        let specials: [Float] = [0, -0.0, 0.002, -0.3, 1e31, .nan, -.nan, .infinity, 1, 2]
        for ev: Float in [-3, -1, 0.3, 2, 7] {
            let block = try #require(FusedFloatBlock(tones: [Exposure(ev: ev)], matrix: nil))
            #expect(block.form == .diagonal, "exposure \(ev)")
            let sepia = try #require(FusedFloatBlock(tones: [Exposure(ev: ev)], matrix: ColorMatrixKernel(.sepia(intensity: 0.7))))
            #expect(sepia.form == .plain, "exposure \(ev) with sepia")
            for count in stride(from: 2, through: 34, by: 2) {
                let input: [SIMD4<Float>] = (0..<count).map { i in
                    var p = SIMD4<Float>(Float.random(in: 0.05...1.2, using: &rng), Float.random(in: 0.05...1.2, using: &rng),
                                         Float.random(in: 0.05...1.2, using: &rng), Float.random(in: 0...1, using: &rng))
                    if i % 5 == 3 { p[i % 4] = specials[(i / 5 + count) % specials.count] }
                    return p
                }
                let gains = (0..<count).map { _ in Float.random(in: 0.2...1, using: &rng) }
                let alpha = AlphaMasks()
                let plain = inPlace(input, start: 0) { block.loopF($0, count, alpha) }
                let diagonal = inPlace(input, start: 0) { block.loopD($0, count, alpha) }
                let plainGains = inPlace(input, start: 0) { p in gains.withUnsafeBufferPointer { block.loopFG(p, count, $0.baseAddress!, alpha) } }
                let diagonalGains = inPlace(input, start: 0) { p in gains.withUnsafeBufferPointer { block.loopDG(p, count, $0.baseAddress!, alpha) } }
                for i in 0..<count {
                    #expect(sameBits(diagonal[i], plain[i]), "exposure \(ev), \(count) pixels, pixel \(i): \(diagonal[i]) vs \(plain[i])")
                    #expect(sameBits(diagonalGains[i], plainGains[i]), "exposure \(ev) with gains, \(count) pixels, pixel \(i)")
                }
            }
        }
    }

    @Test("Float rows from either 16-byte place of a 32-byte boundary give the same bits, matrix, tones, Float block and monochrome")
    func floatRowsAnyAlignment() throws {
        // A row of 27 pixels is 432 bytes, so every other row starts 16 bytes past a
        // 32-byte boundary, where the two-pixel schedules take the first pixel alone.
        let (w, h) = (27, 4)
        var rng = SeededGenerator(seed: 2727)
        let row = (0..<w).map { _ in
            SIMD4(Float.random(in: -0.2...1.2, using: &rng), Float.random(in: -0.2...1.2, using: &rng),
                  Float.random(in: -0.2...1.2, using: &rng), Float.random(in: 0...1, using: &rng))
        }
        let image = try FloatImage(width: w, height: h, pixels: Array(repeatElement(row, count: h).joined()))
        let adjustments = Adjustments(saturation: 1.3, contrast: 1.2, brightness: 0.05, hue: 30).kernel
        let edits: [(String, [any PixelKernel])] = [
            ("matrix", [adjustments]), ("exposure", [Exposure(ev: -0.7)]),
            ("exposure + matrix (Float block)", [Exposure(ev: 0.3), adjustments]),
            ("exposure + sepia (Float block, plain form)", [Exposure(ev: 0.3), Sepia(intensity: 0.7)]),
            ("monochrome", [Monochrome(color: SIMD3(0.9, -0.2, 1.3), intensity: 0.35)]),
        ]
        for (name, kernels) in edits {
            let plan = try EditPlan(kernels: kernels).prepared(width: w, height: h, threads: 1)
            var out = image
            try plan.run(&out, variant: .simd4)
            var reference = image
            try plan.run(&reference, variant: .scalar)
            for y in 0..<h {
                #expect((0..<w).allSatisfy { sameBits(out[$0, y], out[$0, 0]) }, "\(name): row \(y) differs from row 0")
                for x in 0..<w {
                    let (a, b) = (out[x, y], reference[x, y])
                    #expect((0..<4).allSatisfy { abs(a[$0] - b[$0]) <= 1e-5 }, "\(name): (\(x), \(y)) \(a) off the reference \(b)")
                }
            }
        }
    }

    /// The fused plan of `kernel` for one row of `count` pixels.
    static func rowPlan(_ kernel: some PixelKernel, count: Int) -> PreparedEditPlan {
        try! EditPlan(kernels: [kernel]).prepared(width: count, height: 1, threads: 1)
    }

    /// One row of `count` 8-bit RGBA pixels through the fused plan of `kernel`.
    static func plan8(_ kernel: some PixelKernel, _ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>,
                      count: Int) {
        let (i, o) = (UnsafeBufferPointer(start: input, count: 4 * count), UnsafeMutableBufferPointer(start: output, count: 4 * count))
        try! rowPlan(kernel, count: count).run(input: i, inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba, outputMaxval: 255)
    }

    /// The 16-bit form of `plan8` (maxval 65535).
    static func plan16(_ kernel: some PixelKernel, _ input: UnsafePointer<UInt16>, _ output: UnsafeMutablePointer<UInt16>,
                       count: Int) {
        let (i, o) = (UnsafeBufferPointer(start: input, count: 4 * count), UnsafeMutableBufferPointer(start: output, count: 4 * count))
        try! rowPlan(kernel, count: count).run(input: i, inputLayout: .rgba, inputMaxval: 65535, output: o, outputLayout: .rgba, outputMaxval: 65535)
    }

    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && !canImport(TargetFeatures.AVX2)
    @Test("the baseline build's SSE2 packing of a block gives the portable encoding's bytes: NaN, ±∞, −0, negatives, ties and values past maxval, at maxval 1, 100 and 255; by saturation alone at 255 within ±2³⁰")
    func sse2BlockPacking() {
        let specials: [Float] = [.nan, .infinity, -.infinity, -0.0, -0.4, -0.5, -1e10, -3e9, 0.5, 1.5, 2.5, 99.5,
                                 100.5, 254.5, 255.5, 3e9, 1e10]
        // What `packsBySaturation` admits: NaN and values within ±2³⁰, past the 16-bit
        // pack's range too.
        let bounded: [Float] = [.nan, -0.0, -0.4, -0.5, -0.5000001, -32768.5, -1e9, -0x1p30, 0.5, 1.5, 2.5, 253.5,
                                254.49998, 254.5, 255.5, 256, 32767.5, 32768, 65535.5, 1e9, 0x1p30]
        var rng = SeededGenerator(seed: 4)
        for (maxval, saturating, values) in [(1, false, specials), (100, false, specials), (255, false, specials),
                                             (255, true, bounded)] {
            let block = FusedBlock(matrix: ColorMatrixKernel(.identity), maxval: maxval, tables: nil, positions: .rgba,
                                   largestGain: 1)
            for _ in 0..<256 {
                let r = packingLanes(values, maxval: maxval, using: &rng), g = packingLanes(values, maxval: maxval, using: &rng)
                let b = packingLanes(values, maxval: maxval, using: &rng)
                let fourth = SIMD8<UInt32>((0..<8).map { _ in UInt32.random(in: 0...255, using: &rng) << 24 })
                let byte = SIMD8<UInt32>(repeating: 0xFF)
                let portable = block.encode(r, nil) & byte | (block.encode(g, nil) & byte) &<< 8
                    | (block.encode(b, nil) & byte) &<< 16 | fourth
                let packed = BytePacking.rgbaBlock(r, g, b, maxval: block.maxval, fourth: fourth, saturating: saturating)
                #expect(packed == portable, "maxval \(maxval), saturating \(saturating): \(r), \(g), \(b): \(packed) vs \(portable)")
            }
        }
    }

    @Test("the baseline build's SSE2 packing of a premultiplied block gives the portable encoding's bytes: every alpha A/m, NaN, ±∞, −0, negatives, ties and values past maxval, at maxval 1, 100 and 255")
    func sse2PremultipliedBlockPacking() {
        let specials: [Float] = [.nan, .infinity, -.infinity, -0.0, -0.4, -0.5, -1e10, -3e9, 0.5, 1.5, 2.5, 99.5,
                                 100.5, 254.5, 255.5, 3e9, 1e10]
        var rng = SeededGenerator(seed: 5)
        for maxval in [1, 100, 255] {
            let block = FusedBlock(matrix: ColorMatrixKernel(.identity), maxval: maxval, tables: nil, positions: .rgba,
                                   premultiplied: true, largestGain: 1)
            // Every alpha the block computes, A·(1/m) for A = 0…m, and 1 for opaque blocks.
            let alphas = (0...maxval).map { Float($0) * block.inverseMaxval[0] } + [1]
            for round in 0..<(8 * (maxval + 2)) {
                let r = packingLanes(specials, maxval: maxval, using: &rng), g = packingLanes(specials, maxval: maxval, using: &rng)
                let b = packingLanes(specials, maxval: maxval, using: &rng)
                // Every alpha once in every lane (lane `round % 8`), random ones in the others.
                var alpha = SIMD8<Float>((0..<8).map { _ in alphas.randomElement(using: &rng)! })
                alpha[round % 8] = alphas[(round / 8) % alphas.count]
                let fourth = SIMD8<UInt32>((0..<8).map { _ in UInt32.random(in: 0...255, using: &rng) << 24 })
                let byte = SIMD8<UInt32>(repeating: 0xFF)
                let portable = block.encode(r, alpha) & byte | (block.encode(g, alpha) & byte) &<< 8
                    | (block.encode(b, alpha) & byte) &<< 16 | fourth
                let packed = BytePacking.premultipliedRGBABlock(r, g, b, alpha: alpha, maxval: block.maxval, fourth: fourth)
                #expect(packed == portable, "maxval \(maxval): \(r), \(g), \(b), alpha \(alpha): \(packed) vs \(portable)")
            }
        }
        // Hand-computed, at alpha 128/255: 200 → 100.39… → 100, 300 clamped to 255 →
        // exactly 128, −7 → −3.51… → −4 → 0, NaN → 0, G 60 → 30.1… → 30, B 1.5 → 0.75… → 1;
        // at alpha 1 the ties 126.5 and 2.5 → 126 and 2 (to even, where half up gives 127
        // and 3), 1.5 → 2; at alpha 0 every sample 0.
        let block = FusedBlock(matrix: ColorMatrixKernel(.identity), maxval: 255, tables: nil, positions: .rgba,
                               premultiplied: true, largestGain: 1)
        let half = Float(128) * block.inverseMaxval[0]
        let packed = BytePacking.premultipliedRGBABlock(
            SIMD8(200, 300, -7, .nan, 126.5, 10, 255, 0), SIMD8(repeating: 60), SIMD8(1.5, 1.5, 1.5, 1.5, 2.5, 1.5, 1.5, 1.5),
            alpha: SIMD8(half, half, half, half, 1, 0, 1, 1), maxval: block.maxval,
            fourth: SIMD8(repeating: 0x7F00_0000))
        #expect(packed == SIMD8<UInt32>(0x7F01_1E64, 0x7F01_1E80, 0x7F01_1E00, 0x7F01_1E00,
                                         0x7F02_3C7E, 0x7F00_0000, 0x7F02_3CFF, 0x7F02_3C00))
    }
    #endif

    @Test("packing by saturation only where every result is known within ±2³⁰: maxval 255, straight pixels, bounded coefficients, table entries and gains")
    func saturationBound() {
        func packs(_ kernel: ColorMatrixKernel, maxval: Int = 255, tables: ToneTables? = nil, premultiplied: Bool = false,
                   gain: Float = 1) -> Bool {
            FusedBlock(matrix: kernel, maxval: maxval, tables: tables, positions: .rgba, premultiplied: premultiplied,
                       largestGain: gain).packsBySaturation
        }
        for kernel in Self.matrices { #expect(packs(kernel), "\(kernel.name)") }
        let vivid = Adjustments.vivid.kernel
        #expect(!packs(vivid, maxval: 100))
        #expect(!packs(vivid, premultiplied: true))
        #expect(packs(vivid, gain: 1000))
        #expect(!packs(vivid, gain: .infinity))
        #expect(!packs(vivid, gain: .nan))
        // The bound counts red's coefficient twice and the green gain once:
        // 255·3·10⁶ < 2³⁰; 255·10⁷ > 2³¹.
        #expect(packs(ColorMatrixKernel(.gain(1e6, 1e6, 1e6))))
        #expect(!packs(ColorMatrixKernel(.gain(1e7, 1e7, 1e7))))
        #expect(!packs(ColorMatrixKernel(.gain(1, .nan, 1))))
        // A gain below 1 does not keep the matrix's own result finite: 10³⁷·255 is +∞.
        #expect(!packs(ColorMatrixKernel(.gain(1e37, 1e37, 1e37)), gain: 1e-31))
        #expect(packs(vivid, tables: ToneTables([Exposure(ev: 2)], maxval: 255, eightBit: true)))
        // 2¹³⁰ overflows `Float`: infinite entries.
        #expect(!packs(vivid, tables: ToneTables([Exposure(ev: 130)], maxval: 255, eightBit: true)))

        // The vignette's bound holds every gain it writes, and is 1 + |i| rounded up.
        for intensity in [0.8, -1.5, 3.0] {
            let gains = Vignette.vignette(intensity: intensity, radius: 0.7).preparedGains(imageWidth: 61, imageHeight: 37)
            var row = [Float](repeating: 0, count: 61), largest: Float = 0
            for y in 0..<37 {
                for variant in KernelVariant.allCases {
                    gains.rowGains(y: y, x0: 0, count: 61, variant: variant, into: &row)
                    largest = max(largest, row.map(\.magnitude).max()!)
                }
            }
            let bound = gains.largestGainMagnitude
            #expect(largest <= bound && bound <= Float(1 + abs(intensity)) * 1.001, "intensity \(intensity): \(largest), \(bound)")
        }
    }

    @Test("results past Int32's range clamp to maxval, 0 stays 0: a gain of 10⁷ on every byte, 10⁶ at every count 1…33, and a vignette brightening 10⁸-fold, as the Double evaluation gives")
    func resultsPastInt32() throws {
        var bytes: [UInt8] = []
        for v in 0..<256 { bytes += [UInt8(v), UInt8(255 - v), UInt8(v / 2), 255] }
        let out = try Self.packed8(ColorMatrixKernel(.gain(1e7, 1e7, 1e7)), bytes, width: 16, height: 16, maxval: 255)
        // Every colour sample but 0 saturates; alpha (every fourth) is kept.
        var expected = bytes
        for i in expected.indices where i % 4 != 3 && expected[i] != 0 { expected[i] = 255 }
        #expect(out == expected)

        // Within the bound but past the 16-bit pack's range (10⁶·255), which the packs
        // saturate: every count 1…33, so whole blocks and tails.
        let within = ColorMatrixKernel(.gain(1e6, 1e6, 1e6))
        for count in 1...33 {
            let part = Array(bytes[0..<(4 * count)])
            var clamped = part
            for i in clamped.indices where i % 4 != 3 && clamped[i] != 0 { clamped[i] = 255 }
            #expect(try Self.packed8(within, part, width: count, height: 1, maxval: 255) == clamped, "count \(count)")
        }

        let operations: [any RecipeOperation] = Recipe(preset: .vivid).operationsInOrder
            + [Vignette.vignette(intensity: -1e8, radius: 0.5)]
        let (w, h) = (16, 16)
        let samples = bytes.map(UInt16.init)
        let plan = try EditPlan(stages: operations.flatMap(\.stages)).prepared(width: w, height: h, threads: 1)
        let result = try runRGBA(plan, samples, maxval: 255)
        let report = TieAwareCheck.check(result, samples, width: w, height: h, maxval: 255) { c, x, y in
            operations.reduce(c) { $1.evaluate($0, x: x, y: y, width: w, height: h) }
        }
        #expect(report.failures == 0, "\(report)")
        #expect(result.filter { $0 == 255 }.count > samples.filter { $0 == 255 }.count, "the vignette saturates")
    }

    @Test("8-bit block edges: every count 1…33 in place equals out of place and from any alignment (16-bit too); saturation to 0 and maxval; exact ties round to even")
    func packedEightBitEdges() throws {
        var rng = SeededGenerator(seed: 88)
        let kernel = Adjustments(saturation: 1.7, contrast: 1.2, brightness: 0.05, hue: 40).kernel
        for count in 1...33 {
            let bytes = (0..<(count * 4)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var out = [UInt8](repeating: 0, count: bytes.count)
            bytes.withUnsafeBufferPointer { input in
                out.withUnsafeMutableBufferPointer { output in
                    Self.plan8(kernel, input.baseAddress!, output.baseAddress!, count: count)
                }
            }
            var inPlace = bytes
            inPlace.withUnsafeMutableBufferPointer { Self.plan8(kernel, $0.baseAddress!, $0.baseAddress!, count: count) }
            #expect(inPlace == out, "count \(count): in place differs")
            // Into every 4-byte place of a 64-byte span (the blocks start at the
            // destination's next 32-byte boundary, or 64-byte where the build targets
            // AVX-512, the pixels before it alone), and 16-bit samples into every 8-byte
            // place of 64 bytes: the same samples.
            let words = bytes.map { UInt16($0) * 257 }
            var words16 = [UInt16](repeating: 0, count: words.count)
            words.withUnsafeBufferPointer { input in
                words16.withUnsafeMutableBufferPointer { Self.plan16(kernel, input.baseAddress!, $0.baseAddress!, count: count) }
            }
            for offset in 0..<16 {
                let raw = UnsafeMutableRawPointer.allocate(byteCount: 8 * (offset + count), alignment: 64)
                defer { raw.deallocate() }
                let bytesOut = raw.bindMemory(to: UInt8.self, capacity: 4 * (offset + count)) + 4 * offset
                bytes.withUnsafeBufferPointer { Self.plan8(kernel, $0.baseAddress!, bytesOut, count: count) }
                #expect(Array(UnsafeBufferPointer(start: bytesOut, count: bytes.count)) == out,
                        "count \(count), 8 bits \(4 * offset) bytes past a 64-byte boundary: differs")
                guard offset < 8 else { continue }
                let wordsOut = raw.bindMemory(to: UInt16.self, capacity: 4 * (offset + count)) + 4 * offset
                words.withUnsafeBufferPointer { Self.plan16(kernel, $0.baseAddress!, wordsOut, count: count) }
                #expect(Array(UnsafeBufferPointer(start: wordsOut, count: words.count)) == words16,
                        "count \(count), 16 bits \(8 * offset) bytes past a 64-byte boundary: differs")
            }
            // The last block goes through a padded copy: no byte past `count` pixels is touched.
            var guarded = bytes + [0xA5, 0xA5, 0xA5, 0xA5]
            guarded.withUnsafeMutableBufferPointer { Self.plan8(kernel, $0.baseAddress!, $0.baseAddress!, count: count) }
            #expect(Array(guarded.suffix(4)) == [0xA5, 0xA5, 0xA5, 0xA5], "count \(count): wrote past the end")
        }
        // A huge contrast drives every channel far past both ends: clamped, never wrapped.
        let steep = ColorMatrixKernel(Adjustments(contrast: 1e30).matrix)
        let pixels: [UInt8] = [0, 127, 128, 255, 255, 128, 127, 7, 1, 254, 200, 0]
        var out = [UInt8](repeating: 0, count: 12)
        pixels.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { Self.plan8(steep, input.baseAddress!, $0.baseAddress!, count: 3) }
        }
        #expect(out == [0, 0, 255, 255, 255, 255, 0, 7, 0, 255, 255, 0])
        // Brightness 0.5 puts every unclamped 8-bit result next to a .5 (v + 127.5): the
        // block must land on the same side as the scalar path.
        let lift = Adjustments(brightness: 0.5).kernel
        let ramp: [UInt8] = [0, 1, 2, 255, 3, 4, 127, 9]
        out = try Self.packed8(lift, ramp, width: 2, height: 1, maxval: 255, threads: 1)
        let scalar = try SamplePipeline.run([lift], width: 2, height: 1, samples: ramp.map(UInt16.init), layout: .rgba,
                                            maxval: 255, variant: .scalar, threads: 1)
        #expect(out.map(UInt16.init) == scalar)
        #expect(out[0] == 128 && out[3] == 255 && out[7] == 9, "0 + 127.5 is an exact tie: half to even; alpha kept")
    }
}
