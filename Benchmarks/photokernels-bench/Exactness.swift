// `photokernels-bench exactness`: SPEC §8 on every 8-bit RGB triple. The fused 8-bit
// schedule rounds differently from the scalar reference (it folds maxval into the
// matrix), which SPEC §8 allows only within τ of a tie; this check holds the schedule
// against a `Double` evaluation on all 2²⁴ triples for tie-heavy matrices and every
// catalog entry, and the `Float` path too (the samples decoded, the plan's schedule
// on `Float` pixels, encoded), whose arithmetic differs again, and the same 8-bit
// pixels widened into 16-bit ones (`PreparedEditPlan.run(from:to:)`, the widening
// block, whose matrix is on the 16-bit scale) and into `Float16` ones (the same block
// on the [0, 1] scale, unclamped, held to `HalfTolerance`); then the row codecs'
// `Float16` conversions against the toolchain's on every half and every float. Debug
// builds are far too slow for it, so CI runs it in release.

import Dispatch
import Foundation
import PhotoKernels

enum Exactness {
    /// A named edit and its operations (the `Double` oracle).
    struct Case {
        let name: String
        let operations: [any RecipeOperation]
        /// Why the `Float` path is not held to SPEC §8's integer rule, or `nil` where it
        /// is: a `FloatImage` run keeps a positional stage's `Float` gains
        /// (`preparedFloatGains`) and the tone stages' `Float` kernels, which SPEC §8
        /// holds to its `Float` tolerance only.
        var floatPathExempt: String? = nil
        var floatPath: Bool { floatPathExempt == nil }
    }

    /// Tie-heavy single operations, the presets and looks, every family's examples, the
    /// catalog recipe, and the LUT after a matrix and at part intensity.
    static var cases: [Case] {
        var cases: [Case] = [
            Case(name: "brightness 0.1", operations: [Brightness(0.1)]),
            Case(name: "contrast 2", operations: [Contrast(2.0)]),
            Case(name: "saturation 1.3 + brightness 0.1", operations: [Saturation(1.3), Brightness(0.1)]),
            Case(name: "look.fade", operations: [Effect.look(.fade, intensity: 1)]),
        ]
        cases += Preset.allCases.map { Case(name: "preset.\($0.rawValue)", operations: Recipe(preset: $0).operationsInOrder) }
        for family in KernelFamilies.all {
            cases += family.examples.map { Case(name: "\(family.key)/\($0.name)", operations: [$0.operation]) }
        }
        cases.append(Case(name: "recipe", operations: KernelCatalog.sampleRecipe.operationsInOrder))
        // Exposure's line folded into the matrix: before the relative form, and before a
        // tie-heavy contrast with a negative EV (whose segment starts higher).
        cases.append(Case(name: "exposure 0.3 → saturation 1.3", operations: [Exposure(ev: 0.3), Saturation(1.3)]))
        cases.append(Case(name: "exposure −1.5 → contrast 2", operations: [Exposure(ev: -1.5), Contrast(2.0)]))
        // The fused 8-bit LUT block with a matrix folded into its coordinates, and mixing.
        let cube = try! ColorCube.sampled(size: 17, interpolation: .tetrahedral) { c in
            SIMD3(c.x * c.x * 0.9 + 0.05 * c.z, (c.y + c.x * c.z) / 2, (c.z * c.z * c.z + c.y) / 2)
        }
        let lut = LookupTable(path: "film.cube", sha256: "", url: URL(fileURLWithPath: "film.cube"), cube: cube)
        cases.append(Case(name: "preset.vivid → lut", operations: Recipe(preset: .vivid).operationsInOrder + [lut]))
        cases.append(Case(name: "lut at intensity 0.6", operations: [lut.with(intensity: 0.6)]))
        // A narrow vignette ring round a centre `Float` cannot hold (1228.8, 2457.6): the
        // plan's gains from the `Double` geometry; `Float` gains miss SPEC §8's window here.
        cases.append(Case(name: "narrow vignette ring",
                          operations: [Vignette.relativeVignetteEffect(center: SIMD2(0.3, 0.6), radius: 0.7, intensity: 0.9,
                                                                       falloff: 0.05)],
                          floatPathExempt: "a FloatImage keeps the Float gains"))
        // Steep tone curves after exposure, alone and before a matrix: every integer path
        // takes the tones in Double from the plan's tables; a slope of 19 or 400 would
        // carry a Float evaluation's few ulps past the window.
        let steep = try! ToneCurve(masterPoints: [SIMD2(0, 0), SIMD2(0.95, 0.05), SIMD2(1, 1)])
        let cliff = try! ToneCurve(masterPoints: [SIMD2(0, 0), SIMD2(0.6, 0.1), SIMD2(0.602, 0.9), SIMD2(1, 1)])
        let kernels = "a FloatImage runs the Float tone kernels, whose error a steep curve scales"
        cases.append(Case(name: "exposure 0.3 → curve of slope 19", operations: [Exposure(ev: 0.3), steep],
                          floatPathExempt: kernels))
        cases.append(Case(name: "exposure −0.4 → curve of slope 400 → preset.vivid",
                          operations: [Exposure(ev: -0.4), cliff] + Recipe(preset: .vivid).operationsInOrder,
                          floatPathExempt: kernels))
        return cases
    }

    /// The result of one case.
    struct Result {
        var wrong = 0
        var nearTies = 0
        var worstBeyond = 0.0
        var first: String?
    }

    /// Runs every case on a 4096 × 4096 RGBA8 image holding each RGB triple once
    /// (alpha 255), prints one line per case, and returns whether all passed.
    ///
    /// - Throws: status 73 when standard output cannot be written, ``ExitCode/brokenPipe``
    ///   when its reader has gone.
    static func run(threads: Int?) throws(ToolError) -> Bool {
        let side = 4096, count = side * side
        var input = [UInt8](repeating: 255, count: count * 4)
        for i in 0..<count {
            input[4 * i] = UInt8(truncatingIfNeeded: i)
            input[4 * i + 1] = UInt8(truncatingIfNeeded: i >> 8)
            input[4 * i + 2] = UInt8(truncatingIfNeeded: i >> 16)
        }
        var fused = [UInt8](repeating: 0, count: input.count), viaFloat = fused
        var widened = [UInt16](repeating: 0, count: input.count)
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        var halved: [UInt16]? = [UInt16](repeating: 0, count: input.count)
        #else
        var halved: [UInt16]? = nil
        #endif
        var image: FloatImage?  // the Float path's pixels, kept from case to case
        var passed = true
        try say("SPEC §8 on all 2²⁴ RGB triples against a Double evaluation: the 8-bit fused schedule (simd4), "
                + "the Float path (decoded, the plan's simd4 schedule on Float pixels, encoded), "
                + "and 8-bit pixels into 16-bit ones (an RGBA8 buffer into an RGBA16 one: the widening block, "
                + "or the row path where the plan has not the block's shape) and into Float16 ones (the same into "
                + "straight RGBA Float16, unclamped: the nearest half, or either within 2⁻²⁰·max(1, |x|) of a "
                + "rounding boundary)")
        for c in cases {
            let stages = c.operations.filter { !$0.isIdentity }.flatMap(\.stages)
            do {
                let plan = try EditPlan(stages: stages).prepared(width: side, height: side, threads: threads)
                try input.withUnsafeBufferPointer { i in
                    try fused.withUnsafeMutableBufferPointer { o in
                        try plan.run(input: i, inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba, outputMaxval: 255)
                    }
                    if c.floatPath {
                        var pixels = try image ?? FloatImage(width: side, height: side)
                        image = nil  // one owner while the pixels change, so no copy
                        try pixels.decode(from: i, layout: .rgba, maxval: 255, threads: threads)
                        try plan.run(&pixels)
                        try viaFloat.withUnsafeMutableBufferPointer { try pixels.encode(into: $0, layout: .rgba, maxval: 255, threads: threads) }
                        image = pixels
                    }
                    try widened.withUnsafeMutableBytes { o in
                        let source = try PixelBuffer(baseAddress: UnsafeMutableRawPointer(mutating: i.baseAddress!), width: side,
                                                     height: side, bytesPerRow: 4 * side, format: .rgba8)
                        let destination = try PixelBuffer(baseAddress: o.baseAddress!, width: side, height: side,
                                                          bytesPerRow: 8 * side, format: .rgba16)
                        try plan.run(from: source, to: destination)
                        if halved != nil {
                            try halved!.withUnsafeMutableBytes { h in
                                try plan.run(from: source, to: try PixelBuffer(
                                    baseAddress: h.baseAddress!, width: side, height: side, bytesPerRow: 8 * side,
                                    format: try PixelFormat(.rgba, alpha: .straight, sample: .float16)))
                            }
                        }
                    }
                }
            } catch {
                try say("  \(c.name): \(error)")
                passed = false
                continue
            }
            let results = check(c, input, c.floatPath ? [fused, viaFloat] : [fused], wide: widened, halves: halved, side: side,
                                threads: threads ?? ProcessInfo.processInfo.activeProcessorCount)
            if let why = c.floatPathExempt { try say("  --   Float \(c.name): not held to SPEC §8 (\(why))") }
            for (path, result) in zip(["8-bit"] + (c.floatPath ? ["Float"] : []) + ["8→16-bit", "8→Float16"], results) {
                let ok = result.wrong == 0
                passed = passed && ok
                try say("  \(ok ? "ok  " : "FAIL") \(path) \(c.name): \(result.wrong) wrong, \(result.nearTies) near-tie samples"
                        + (ok ? "" : ", worst \(result.worstBeyond) \(path == "8→Float16" ? "half steps" : "LSB") beyond the window; "
                                     + "first \(result.first ?? "")"))
            }
        }
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        passed = try float16Conversions(threads: threads) && passed
        #endif
        return passed
    }

    #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
    /// The row codecs' `Float16` conversions against the toolchain's, bit for bit: all
    /// 2¹⁶ halves widened (`Float(h)`) and all 2³² `Float` bit patterns rounded
    /// (`Float16(x)`), NaNs included, through `EditPlan.run(from:to:)` with no stages
    /// between straight RGBA buffers of `Float16` and `Float` samples. Where the build
    /// has no F16C (baseline x86-64) the codecs convert in SSE2 operations of their own,
    /// which this holds to the library calls that `Float(h)` and `Float16(x)` make there.
    ///
    /// - Throws: as ``run(threads:)``.
    private static func float16Conversions(threads: Int?) throws(ToolError) -> Bool {
        #if arch(x86_64) && !canImport(TargetFeatures.F16C)
        let codecs = "the row codecs' own SSE2 conversions"
        #else
        let codecs = "the row codecs' conversions (the hardware's, as the toolchain's)"
        #endif
        try say("Float16: \(codecs) against Float(h) and Float16(x), bit for bit, "
                + "on all 2¹⁶ halves and all 2³² Float bit patterns")
        let width = 4096, height = 256, pixels = width * height
        let bands = max(1, threads ?? ProcessInfo.processInfo.activeProcessorCount)
        let halves = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: 4 * pixels)
        let floats = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: 4 * pixels)
        defer { halves.deallocate(); floats.deallocate() }
        let wrong = UnsafeMutableBufferPointer<Int>.allocate(capacity: bands)
        defer { wrong.deallocate() }
        do {
            let plan = try EditPlan(stages: []).prepared(width: width, height: height, threads: threads)
            let halfFormat = try PixelFormat(.rgba, alpha: .straight, sample: .float16)
            let halfBuffer = try PixelBuffer(baseAddress: UnsafeMutableRawPointer(halves.baseAddress!), width: width,
                                             height: height, bytesPerRow: 8 * width, format: halfFormat)
            let floatBuffer = try PixelBuffer(baseAddress: UnsafeMutableRawPointer(floats.baseAddress!), width: width,
                                              height: height, bytesPerRow: 16 * width, format: .rgbaFloat)
            // Widening: the first 2¹⁶ samples hold every half (the rest repeat them).
            for i in 0..<(4 * pixels) { halves[i] = UInt16(truncatingIfNeeded: i) }
            try plan.run(from: halfBuffer, to: floatBuffer)
            var widened = 0, firstWidened: String?
            for i in 0..<(1 << 16) {
                let expected = Float(Float16(bitPattern: UInt16(i))).bitPattern
                guard floats[i] != expected else { continue }
                widened += 1
                firstWidened = firstWidened
                    ?? String(format: "half 0x%04X widened to 0x%08X, toolchain 0x%08X", UInt32(i), floats[i], expected)
            }
            try report("widened", wrong: widened, first: firstWidened)
            // Rounding: 2³² samples in 1024 chunks of 2²².
            let chunk = 4 * pixels, (h, f, w) = (UncheckedSendable(halves), UncheckedSendable(floats), UncheckedSendable(wrong))
            var firstRounded: String?
            wrong.initialize(repeating: 0)
            for k in 0..<1024 {
                let start = UInt32(truncatingIfNeeded: k &* chunk)
                DispatchQueue.concurrentPerform(iterations: bands) { band in
                    for i in (chunk * band / bands)..<(chunk * (band + 1) / bands) {
                        f.value[i] = start &+ UInt32(truncatingIfNeeded: i)
                    }
                }
                try plan.run(from: floatBuffer, to: halfBuffer)
                DispatchQueue.concurrentPerform(iterations: bands) { band in
                    for i in (chunk * band / bands)..<(chunk * (band + 1) / bands)
                    where h.value[i] != Float16(Float(bitPattern: f.value[i])).bitPattern {
                        w.value[band] += 1
                    }
                }
                if firstRounded == nil, wrong.reduce(0, +) > 0,
                   let i = (0..<chunk).first(where: { halves[$0] != Float16(Float(bitPattern: floats[$0])).bitPattern }) {
                    firstRounded = String(format: "Float 0x%08X rounded to 0x%04X, toolchain 0x%04X", floats[i], halves[i],
                                          Float16(Float(bitPattern: floats[i])).bitPattern)
                }
            }
            let rounded = wrong.reduce(0, +)
            try report("rounded", wrong: rounded, first: firstRounded)
            return widened == 0 && rounded == 0
        } catch let error as ToolError {
            throw error
        } catch {
            try say("  Float16: \(error)")
            return false
        }
    }

    /// One `Float16` line: `ok` or `FAIL`, the wrong count and the first wrong sample.
    private static func report(_ what: String, wrong: Int, first: String?) throws(ToolError) {
        try say("  \(wrong == 0 ? "ok  " : "FAIL") Float16 \(what): \(wrong) wrong" + (wrong == 0 ? "" : "; first \(first ?? "")"))
    }
    #endif

    /// The verdict on an integer sample at maxval `m`, or with `m` = 0 on the bits of a
    /// `Float16` (`HalfTolerance`).
    private static func verdict(_ sample: Int, exact: Double, maxval m: Int) -> IntegerTolerance.Verdict {
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        if m == 0 { return HalfTolerance.verdict(Float16(bitPattern: UInt16(truncatingIfNeeded: sample)), exact: exact) }
        #endif
        return IntegerTolerance.verdict(sample, exact: exact, maxval: m)
    }

    /// A sample for a message: the integer, or with `m` = 0 the value of the `Float16`.
    private static func shown(_ sample: Int, maxval m: Int) -> String {
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        if m == 0 { return "\(Float16(bitPattern: UInt16(truncatingIfNeeded: sample)))" }
        #endif
        return "\(sample)"
    }

    /// One line of the report on standard output, written as it is made.
    private static func say(_ line: String) throws(ToolError) {
        try BenchmarkTool.write(line + "\n", to: nil)
    }

    /// Every colour sample and every alpha of each of `outputs` (8-bit), of `wide`
    /// (16-bit) and of `halves` (`Float16` bits, if any) against the oracle, evaluated
    /// once per pixel for all of them, over row bands; one result per output, then
    /// `wide`'s and `halves`'.
    static func check(_ c: Case, _ input: [UInt8], _ outputs: [[UInt8]], wide: [UInt16], halves: [UInt16]?, side: Int,
                      threads: Int) -> [Result] {
        let bands = max(1, threads), count = outputs.count + (halves == nil ? 1 : 2)
        let results = UnsafeMutableBufferPointer<Result>.allocate(capacity: bands * count)
        results.initialize(repeating: Result())
        defer { results.deallocate() }
        let operations = c.operations.filter { !$0.isIdentity }
        input.withUnsafeBufferPointer { i in
            let (src, dst, out) = (UncheckedSendable(i), UncheckedSendable(outputs), UncheckedSendable(results))
            let words = UncheckedSendable(wide), halfBits = UncheckedSendable(halves)
            DispatchQueue.concurrentPerform(iterations: bands) { band in
                var r = [Result](repeating: Result(), count: count)
                for y in (side * band / bands)..<(side * (band + 1) / bands) {
                    for x in 0..<side {
                        let p = 4 * (y * side + x)
                        let color = SIMD4(Double(src.value[p]) / 255, Double(src.value[p + 1]) / 255,
                                          Double(src.value[p + 2]) / 255, 1)
                        let exact = operations.reduce(color) { $1.evaluate($0, x: x, y: y, width: side, height: side) }
                        // Output k's pixel: its three colour samples and alpha at maxval m,
                        // or as `Float16` bits (m = 0; alpha 1.0).
                        func judge(_ k: Int, _ sample: (Int) -> Int, maxval m: Int) {
                            for ch in 0..<3 {
                                switch verdict(sample(ch), exact: exact[ch], maxval: m) {
                                case .exact: break
                                case .nearTie: r[k].nearTies += 1
                                case .wrong(let beyond):
                                    r[k].wrong += 1
                                    r[k].worstBeyond = max(r[k].worstBeyond, beyond)
                                    if r[k].first == nil {
                                        r[k].first = "(\(src.value[p]), \(src.value[p + 1]), \(src.value[p + 2])) channel \(ch): "
                                            + "got \(shown(sample(ch), maxval: m)), exact \(exact[ch] * Double(max(m, 1)))"
                                    }
                                }
                            }
                            if sample(3) != (m == 0 ? 0x3C00 : m) {
                                r[k].wrong += 1
                                r[k].first = r[k].first ?? "alpha changed at (\(x), \(y))"
                            }
                        }
                        for (k, output) in dst.value.enumerated() { judge(k, { Int(output[p + $0]) }, maxval: 255) }
                        judge(outputs.count, { Int(words.value[p + $0]) }, maxval: 65535)
                        if let h = halfBits.value { judge(outputs.count + 1, { Int(h[p + $0]) }, maxval: 0) }
                    }
                }
                for k in r.indices { out.value[k * bands + band] = r[k] }
            }
        }
        return (0..<count).map { k in
            results[(k * bands)..<((k + 1) * bands)].reduce(Result()) { a, b in
                Result(wrong: a.wrong + b.wrong, nearTies: a.nearTies + b.nearTies,
                       worstBeyond: max(a.worstBeyond, b.worstBeyond), first: a.first ?? b.first)
            }
        }
    }
}
