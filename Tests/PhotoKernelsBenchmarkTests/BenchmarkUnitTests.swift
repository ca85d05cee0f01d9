// In-process tests of the benchmark's parts: statistics, options, verification,
// comparison verdicts, the code-generation probe (and the compile-time target features
// it must agree with) and the git reader.

import CommandLineKit
import Foundation
import PhotoKernels
import Testing
@testable import PhotoKernelsBenchmark

@Suite("Statistics")
struct StatisticsTests {
    @Test("percentiles interpolate between closest ranks")
    func percentiles() {
        let s = Statistics([5, 1, 4, 2, 3])
        #expect(s.min == 1 && s.max == 5 && s.median == 3 && s.mean == 3)
        #expect(abs(s.p90 - 4.6) < 1e-12)  // rank 0.9 × 4 = 3.6 → 4 + 0.6 × 1
        #expect(Statistics([1, 2]).median == 1.5)
        #expect(Statistics([7]).p90 == 7)
        #expect(abs(Statistics([10, 10, 10, 13]).spread - 0.21) < 1e-12)  // p90 12.1 / min 10 − 1
    }

    @Test("sampling stops at the minimum for long runs and continues for short ones")
    func sampling() {
        let p = SamplingPolicy.standard()
        #expect(p.wantsMore(count: 4, totalNanoseconds: 10_000_000_000))
        #expect(!p.wantsMore(count: 5, totalNanoseconds: 1_000_000_000))
        #expect(p.wantsMore(count: 5, totalNanoseconds: 1_000_000))
        #expect(!p.wantsMore(count: 50, totalNanoseconds: 1_000))
        #expect(SamplingPolicy.standard(minSamples: 80).maxSamples == 80)
    }
}

@Suite("Options")
struct OptionTests {
    @Test("sizes, threads, format, filter and compare parse")
    func parses() throws {
        let o = try OptionParser.parse(["--sizes", "12MP,640x480,48mp", "--threads=3", "--format", "csv",
                                        "--filter", "kernel/", "--samples", "7"])
        #expect(o.sizes == [.mp12, ImageSize(width: 640, height: 480), .mp48])
        #expect(o.threads == 3 && o.format == .csv && o.filter == "kernel/" && o.minSamples == 7)
        #expect(o.command == .run)
        let c = try OptionParser.parse(["compare", "before", "--threshold", "2.5"])
        #expect(c.command == .compare(baseline: "before", other: nil) && c.threshold == 2.5)
        #expect(try OptionParser.parse(["--quick"]).sizes == [ImageSize.quick])
        #expect(try OptionParser.parse(["--quick", "--sizes", "64x48"]).sizes == [ImageSize(width: 64, height: 48)])
        #expect(try OptionParser.parse(["--list"]).command == .list)
        // A name or a path, as compare reads them; a run's options with a fresh compare and with --list.
        #expect(try OptionParser.parse(["--save-baseline", "/tmp/x.json"]).saveBaseline == "/tmp/x.json")
        #expect(try OptionParser.parse(["compare", "a", "--sizes", "64x48", "--seed", "3"]).seed == 3)
        #expect(try OptionParser.parse(["--list", "--save-baseline", "a", "--sizes", "64x48"]).command == .list)
        #expect(try OptionParser.parse(["show", "a", "--filter", "kernel/", "--allow-debug-build"]).filter == "kernel/")
        #expect(ImageSize.mp12.label == "12MP" && ImageSize(width: 3, height: 2).label == "3x2")
        #expect(try OptionParser.parse([]).pages == .huge)
        #expect(try OptionParser.parse(["--pages", "base"]).pages == .base)
        #expect(try OptionParser.parse(["--pages=HUGE", "--quick"]).pages == .huge)
    }

    @Test("-o and --output in every spelling, -q, and options after the subcommand")
    func spellings() throws {
        for arguments in [["-o", "r.txt"], ["-or.txt"], ["--output=r.txt"], ["--output", "r.txt"]] {
            #expect(try OptionParser.parse(arguments).output == "r.txt", "\(arguments)")
        }
        let o = try OptionParser.parse(["show", "-q", "base", "--format=MARKDOWN"])
        #expect(o.command == .show("base") && o.quiet && o.format == .markdown)
        #expect(try OptionParser.parse(["--", "run"]).command == .run)
    }

    @Test("--help and --version win over everything else on the line, before --")
    func helpAndVersion() throws {
        #expect(try OptionParser.parse(["--bogus", "--help"]).command == .help)
        #expect(try OptionParser.parse(["compare", "-h"]).command == .help)
        #expect(try OptionParser.parse(["--threads", "0", "--version"]).command == .version)
        #expect(try OptionParser.parse(["--version", "--help"]).command == .help)
        #expect(throws: ToolError.self) { try OptionParser.parse(["--", "--help"]) }
        // The value of --filter is not an option.
        #expect(try OptionParser.parse(["--filter", "--help"]).filter == "--help")
    }

    @Test("bad input is a usage error naming the problem", arguments: [
        (["--threads"], "missing value for '--threads <n>'"),
        (["--threads", "-1"], "'--threads' needs a whole number from 1 to 1024, got '-1'"),
        (["--threads", "1025"], "'--threads' needs a whole number from 1 to 1024, got '1025'"),
        (["--samples", "0"], "'--samples' needs a whole number of at least 1, got '0'"),
        (["--sizes", "0x5"], "'--sizes' needs 12MP, 48MP or WxH (W, H ≥ 1, at most 2^28 pixels), got '0x5'"),
        (["--sizes", "99999x99999"],
         "'--sizes' needs 12MP, 48MP or WxH (W, H ≥ 1, at most 2^28 pixels), got '99999x99999'"),
        (["--quick=yes"], "'--quick' does not take a value"),
        (["-z"], "unknown option '-z'"),
        (["--theshold", "3"], "unknown option '--theshold'; did you mean '--threshold'?"),
        (["--threshold", "nan"], "'--threshold' must be a finite number, got 'nan'"),
        (["--threshold", "-1"], "'--threshold' needs a percentage of at least 0, got '-1'"),
        (["--format", "xml"], "'--format' must be one of text, markdown, json, csv; got 'xml'"),
        (["--seed", "-1"], "'--seed' needs a whole number from 0 to 2^64 − 1, got '-1'"),
        (["--pages", "4k"], "'--pages' must be one of huge, base; got '4k'"),
        (["show", "a", "--pages", "base"], "'--pages' does not apply here: 'show' prints a saved report"),
        (["compare"], "'compare' needs a baseline: compare <baseline> [<other>]"),
        (["run", "extra"], "unexpected argument 'extra'"),
        (["comapre", "a"], "unknown subcommand 'comapre'; did you mean 'compare'?"),
        (["show", "a", "--sizes", "12MP"], "'--sizes' does not apply here: 'show' prints a saved report"),
        (["compare", "a", "b", "--threads", "2"], "'--threads' does not apply here: 'compare <baseline> b' compares two saved reports"),
        (["exactness", "--filter", "x"],
         "'--filter' does not apply here: 'exactness' checks every case at its own size (of the run's options it takes --threads)"),
        (["--save-baseline", "new/"], "'--save-baseline' needs a file, got the directory 'new/'"),
        (["--save-baseline", "a b"],
         "'--save-baseline' needs a name of letters, digits, '.', '_' and '-', or a path (containing '/' or ending in .json), got 'a b'"),
    ])
    func rejects(_ arguments: [String], message: String) {
        do {
            _ = try OptionParser.parse(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            #expect(error.status == .usage && error.helpCommand == "photokernels-bench")
            #expect(error.message == message)
        }
    }

    @Test("the help page fits 80 columns and lists every option")
    func help() {
        let lines = OptionParser.help.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(lines.filter { $0.count > 80 })")
        for spec in OptionParser.specs { #expect(OptionParser.help.contains(spec.synopsis), "\(spec.name)") }
        #expect(OptionSpec.problems(in: OptionParser.specs).isEmpty)
        #expect(ExitCode.failure.rawValue == 1 && ExitCode.regression.rawValue == 2)
    }
}

@Suite("Workloads")
struct WorkloadTests {
    @Test("the plan enumerates the catalog × variants, scalar first, and adds the needed rooflines")
    func plan() throws {
        let all = try WorkloadPlan.make(sizes: [ImageSize(width: 8, height: 4)], filter: nil)
        let kernels = all.filter { $0.group == "kernel" }
        #expect(kernels.count == KernelCatalog.entries.count * KernelVariant.allCases.count)
        #expect(kernels.first?.variant == .scalar)
        #expect(Set(all.map(\.name)).count == all.count, "names are unique")

        let some = try WorkloadPlan.make(sizes: [.mp12], filter: "kernel/sepia/")
        #expect(some.map(\.name).sorted() == (["copy/float-rgba/12MP"]
            + KernelVariant.allCases.map { "kernel/sepia/\($0.rawValue)/12MP" }).sorted())
        #expect(throws: ToolError.self) { try WorkloadPlan.make(sizes: [.mp12], filter: "no-such-thing") }
    }

    @Test("bytes moved count every buffer once")
    func bytes() {
        let size = ImageSize(width: 10, height: 10)
        let entry = KernelCatalog.entries[0]
        #expect(Workload(kind: .kernel(entry, .scalar), size: size).bytesMoved == 3200)
        #expect(Workload(kind: .pipeline(.eight, entry, .scalar), size: size).bytesMoved == 800)
        #expect(Workload(kind: .pipeline(.sixteen, nil, nil), size: size).bytesMoved == 1600)
        #expect(Workload(kind: .pipeline(.eight, nil, nil), size: size).roofline == .samplesRGBA8)
        #expect(Workload(kind: .netpbmDecode(.eight), size: size).bytesMoved == 900)
        #expect(Workload(kind: .netpbmEncode(.sixteen), size: size).bytesMoved == 1200)
        #expect(Workload(kind: .kernel(entry, .simd4), size: size).scalarKey == "kernel/\(entry.name)/10x10")
        #expect(Workload(kind: .convert(.toFloat, .eight), size: size).bytesMoved == 2000)
        #expect(Workload(kind: .convert(.fromFloat, .sixteen), size: size).bytesMoved == 2400)
        #expect(Workload(kind: .convert(.fromFloat, .eight), size: size).roofline == .floatRGBA)
    }

    @Test("the conversions are named convert/<from>-to-<to>/<size>, two directions × two depths")
    func conversions() throws {
        let all = try WorkloadPlan.make(sizes: [.mp12], filter: "^convert/")
        #expect(all.map(\.name).sorted() == ["convert/float-to-rgba16/12MP", "convert/float-to-rgba8/12MP",
                                             "convert/rgba16-to-float/12MP", "convert/rgba8-to-float/12MP",
                                             "copy/float-rgba/12MP"])
        let decode = Workload(kind: .convert(.toFloat, .eight), size: .mp12)
        #expect(decode.group == "convert" && decode.variant == nil && decode.kernelName == nil)
    }
}

@Suite("App pixel buffers")
struct AppBufferTests {
    @Test("the rows are pipeline/bgra8-premultiplied, pipeline/rgba8-padded and preview/…/1000x800, for the recipe and vibrance, with their rooflines")
    func names() throws {
        let all = try WorkloadPlan.make(sizes: [.mp12], filter: "^(pipeline/(bgra8-premultiplied|rgba8-padded)|preview)/")
        let entries = ["recipe", "vibrance"]
        let rows = entries.flatMap { entry in
            ["pipeline/bgra8-premultiplied/\(entry)", "pipeline/rgba8-padded/\(entry)"].flatMap { stem in
                KernelVariant.allCases.map { "\(stem)/\($0.rawValue)/12MP" }
            } + KernelVariant.allCases.map { "preview/bgra8-premultiplied/\(entry)/\($0.rawValue)/1000x800" }
        }
        #expect(all.map(\.name).sorted() == (rows + ["copy/samples-rgba8/12MP", "copy/samples-rgba8/1000x800"]).sorted())
        // The preview comes once with 12 MP and 48 MP, and not with a size smaller than itself.
        let both = try WorkloadPlan.make(sizes: [.mp12, .mp48], filter: "^preview/")
        #expect(both.count == 1 + entries.count * KernelVariant.allCases.count && both.allSatisfy { $0.size == .preview })
        #expect(throws: ToolError.self) { try WorkloadPlan.make(sizes: [ImageSize(width: 512, height: 384)], filter: "^preview/") }
        let preview = try #require(all.first { $0.name == "preview/bgra8-premultiplied/recipe/simd4/1000x800" })
        #expect(preview.group == "preview" && preview.kernelName == "recipe" && preview.variant == .simd4)
        #expect(preview.bytesMoved == 8 * 800_000 && preview.roofline == .samplesRGBA8)
        #expect(preview.scalarKey == "preview/bgra8-premultiplied/recipe/1000x800")
    }

    @Test("the exports are pipeline/bgra8-premultiplied-to-rgba8, -to-rgba16, -to-rgba16-premultiplied, -to-rgba16f, -to-rgba16f-premultiplied and -to-gray16f, recipe, every variant, 4 + 4 B/px against the 8-bit copy, 4 + 8 (4 + 2 grey) against the 16-bit copy")
    func exports() throws {
        let all = try WorkloadPlan.make(sizes: [.mp12], filter: "^pipeline/bgra8-premultiplied-to-")
        let formats = ExportFormat.available.map(\.rawValue)
        #if (os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64)
        #expect(formats == ["rgba8", "rgba16", "rgba16-premultiplied"])
        #else
        #expect(formats == ["rgba8", "rgba16", "rgba16-premultiplied", "rgba16f", "rgba16f-premultiplied", "gray16f"])
        #endif
        let rows = formats.flatMap { format in
            KernelVariant.allCases.map { "pipeline/bgra8-premultiplied-to-\(format)/recipe/\($0.rawValue)/12MP" }
        }
        #expect(all.map(\.name).sorted() == (rows + ["copy/samples-rgba8/12MP", "copy/samples-rgba16/12MP"]).sorted())
        for workload in all where workload.group == "pipeline" {
            let eightBit = workload.name.contains("-to-rgba8/")
            let bytes = eightBit ? 8 : workload.name.contains("-to-gray16f/") ? 6 : 12
            #expect(workload.bytesPerPixel == bytes && workload.roofline == (eightBit ? .samplesRGBA8 : .samplesRGBA16)
                    && workload.kernelName == "recipe")
        }
        let half = Workload(kind: .export(.rgba16f, try #require(KernelCatalog.entry(named: "recipe")), .simd4), size: .mp12)
        #expect(half.scalarKey == "pipeline/bgra8-premultiplied-to-rgba16f/recipe/12MP" && half.variant == .simd4)
        #expect(try ExportFormat.rgba16fPremultiplied.pixelFormat() == PixelFormat(.rgba, alpha: .premultiplied, sample: .float16))
        #expect(try ExportFormat.rgba16Premultiplied.pixelFormat() == PixelFormat(.rgba, alpha: .premultiplied, sample: .uint16))
    }

    @Test("the import is pipeline/rgba8-padded-to-bgra8-premultiplied, recipe, every variant, 4 + 4 B/px against the 8-bit copy")
    func importing() throws {
        let all = try WorkloadPlan.make(sizes: [.mp12], filter: "^pipeline/rgba8-padded-to-")
        let rows = KernelVariant.allCases.map { "pipeline/rgba8-padded-to-bgra8-premultiplied/recipe/\($0.rawValue)/12MP" }
        #expect(all.map(\.name).sorted() == (rows + ["copy/samples-rgba8/12MP"]).sorted())
        for workload in all where workload.group == "pipeline" {
            #expect(workload.bytesPerPixel == 8 && workload.roofline == .samplesRGBA8 && workload.kernelName == "recipe")
        }
        let simd = Workload(kind: .importing(try #require(KernelCatalog.entry(named: "recipe")), .simd4), size: .mp12)
        #expect(simd.scalarKey == "pipeline/rgba8-padded-to-bgra8-premultiplied/recipe/12MP" && simd.variant == .simd4)
    }

    #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
    @Test("Float16 exports agree within 1e-5 or one half-precision step; NaN only where the reference has it")
    func halves() {
        func report(_ reference: [Float16], _ candidate: [Float16]) -> Verification.FloatReport {
            reference.map(\.bitPattern).withUnsafeBufferPointer { r in
                candidate.map(\.bitPattern).withUnsafeBufferPointer { Verification.compareHalves(reference: r, candidate: $0) }
            }
        }
        let half: Float16 = 0.5, quarter: Float16 = 0.25
        let values: [Float16] = [half, 1, quarter, 1]
        // One step at 0.5 is 2⁻¹¹, beyond 1e-5: allowed.
        #expect(report(values, [half.nextUp, 1, quarter.nextDown, 1]).passed)
        // Two steps are not, nor a NaN the reference lacks.
        let twoSteps = report(values, [half.nextUp.nextUp, 1, quarter, 1])
        #expect(!twoSteps.passed && twoSteps.failures == 1 && twoSteps.worstChannel == 0 && twoSteps.worstIndex == 0)
        let nan = report(values + values, values + [0.5, 1, .nan, 1])
        #expect(!nan.passed && nan.worstIndex == 1 && nan.worstChannel == 2)
        #expect(report([.nan, 0, 0, 0], [.nan, 0, 0, 0]).passed)
        // Near zero the float tolerance is the wider: 1e-5 apart is 168 subnormal steps.
        #expect(report([0, 0, 0, 0], [Float16(9e-6), 0, 0, 0]).passed)
        // A grey export's samples are its pixels.
        let grey = values.map(\.bitPattern).withUnsafeBufferPointer { r in
            [half, 1, quarter, 0.75].map(\.bitPattern).withUnsafeBufferPointer {
                Verification.compareHalves(reference: r, candidate: $0, samplesPerPixel: 1)
            }
        }
        #expect(!grey.passed && grey.worstIndex == 3 && grey.worstChannel == 0)
    }
    #endif

    @Test("row strides: packed, the next multiple of 64 above width × 4, and rounded up to 64")
    func strides() {
        #expect(AppBuffer.bgra8Premultiplied.bytesPerRow(width: 4032) == 16_128)
        #expect(AppBuffer.rgba8Padded.bytesPerRow(width: 4032) == 16_192)
        #expect(AppBuffer.rgba8Padded.bytesPerRow(width: 259) == 1088)
        #expect(AppBuffer.preview.bytesPerRow(width: 1000) == 4032)
        #expect(AppBuffer.preview.bytesPerRow(width: 1008) == 4032)
    }

    @Test("the premultiplied input: opaque but for a soft disc on 5–10 % of the pixels, colour ≤ alpha, BGRA order")
    func premultipliedInput() throws {
        let fixture = Fixture(size: ImageSize(width: 200, height: 160), seed: 7, threads: 1, pages: .base)
        let set = fixture.appBuffers(.preview)
        #expect(set.translucentFraction > 0.05 && set.translucentFraction < 0.10, "\(set.translucentFraction)")
        let raster = fixture.samples8().input
        let bytes = set.input.assumingMemoryBound(to: UInt8.self)
        var translucent = 0
        for y in 0..<160 {
            for x in 0..<200 {
                let p = bytes + y * set.bytesPerRow + 4 * x, s = 4 * (y * 200 + x)
                let a = Int(p[3])
                #expect(a == AppBufferSet.alpha(x: x, y: y, width: 200, height: 160))
                if a < 255 { translucent += 1 }
                // B G R from R G B, each round(c·a/255).
                for (c, source) in [(0, 2), (1, 1), (2, 0)] {
                    let exact = Double(raster[s + source]) * Double(a) / 255
                    #expect(Int(p[c]) == Int(exact.rounded()) && Int(p[c]) <= a, "(\(x), \(y)) channel \(c)")
                }
            }
            // 800 bytes of pixels, then 32 of padding.
            #expect((800..<set.bytesPerRow).allSatisfy { bytes[y * set.bytesPerRow + $0] == 0xA5 })
        }
        #expect(translucent > 0 && AppBufferSet.alpha(x: 0, y: 0, width: 200, height: 160) == 255)
        // The padded buffer holds the RGBA8 raster itself.
        let padded = fixture.appBuffers(.rgba8Padded)
        let p = padded.input.assumingMemoryBound(to: UInt8.self)
        #expect((0..<160).allSatisfy { y in (0..<800).allSatisfy { p[y * padded.bytesPerRow + $0] == raster[y * 800 + $0] } })
    }

    @Test("every app buffer row verifies against its scalar reference, padding untouched, on a size with a tail")
    func verifies() throws {
        let runner = Runner(options: try OptionParser.parse(["--threads", "2", "--quiet"]))
        let size = ImageSize(width: 1037, height: 9)  // two pieces per row, the second 13 pixels
        let fixture = Fixture(size: size, seed: 7, threads: 2, pages: .huge)
        for kind in AppBuffer.allCases {
            for variant in WorkloadPlan.variants {
                let workload = Workload(kind: .appBuffer(kind, KernelCatalog.entry(named: "recipe")!, variant), size: size)
                do { try runner.verify(workload, in: fixture) } catch { Issue.record("\(workload.name): \(error.message)") }
            }
            let set = fixture.appBuffers(kind)
            #expect(set.firstRowWithChangedPadding() == nil && memcmp(set.work, set.input, set.byteCount) != 0, "\(kind)")
        }
    }
}

@Suite("Conversions")
struct ConversionTests {
    @Test("decode and encode through the library verify exactly, on a size with a tail and several bands")
    func verifyExactly() throws {
        let runner = Runner(options: try OptionParser.parse(["--threads", "2", "--quiet"]))
        let size = ImageSize(width: 37, height: 9)  // 333 pixels: not a multiple of 4
        let fixture = Fixture(size: size, seed: 7, threads: 2, pages: .base)
        for depth in SampleDepth.allCases {
            for direction in ConversionDirection.allCases {
                let workload = Workload(kind: .convert(direction, depth), size: size)
                do { try runner.verify(workload, in: fixture) } catch { Issue.record("\(workload.name): \(error.message)") }
            }
        }
        // The last decode (16 bits) left the exact SPEC §0 division in the work image.
        let input = fixture.samples16().input
        fixture.work.withUnsafePixels { pixels in
            #expect(pixels[0].x == Float(input[0]) / 65535 && pixels[332].w == Float(input[4 * 332 + 3]) / 65535)
        }
    }
}

@Suite("Verification")
struct VerificationTests {
    @Test("float outputs: 1e-5 passes, more fails, NaN must match NaN")
    func floats() throws {
        let reference = try FloatImage(width: 2, height: 1, pixels: [SIMD4(0.5, 0.5, 0.5, 1), SIMD4(.nan, 0, 0, 1)])
        var close = reference
        close[pixel: 0].x += 0.000009
        #expect(Verification.compare(reference: reference, candidate: close).passed)
        var far = reference
        far[pixel: 0].y += 0.0001
        let report = Verification.compare(reference: reference, candidate: far)
        #expect(!report.passed && report.failures == 1 && report.worstIndex == 0 && report.worstChannel == 1)
        var notNaN = reference
        notNaN[pixel: 1].x = 0
        #expect(!Verification.compare(reference: reference, candidate: notNaN).passed)
    }

    @Test("integer outputs: ≤ 1 LSB in ≤ 1 % of samples")
    func samples() {
        let reference = [UInt16](repeating: 100, count: 4000)
        func check(_ candidate: [UInt16]) -> Verification.SampleReport {
            reference.withUnsafeBufferPointer { r in candidate.withUnsafeBufferPointer { Verification.compare(reference: r, candidate: $0) } }
        }
        var fortyOff = reference
        for i in 0..<40 { fortyOff[i * 7] = 101 }
        #expect(check(fortyOff).passed)
        var fortyOneOff = fortyOff
        fortyOneOff[999] = 99
        #expect(!check(fortyOneOff).passed)
        var twoLSB = reference
        twoLSB[5] = 102
        #expect(!check(twoLSB).passed)
    }
}

@Suite("Comparison")
struct ComparisonTests {
    func report(_ times: [String: (median: Double, min: Double, p90: Double)]) -> BenchmarkReport {
        var r = try! BenchmarkReport.decode(Data(#"{"context": {"date": "x"}, "benchmarks": []}"#.utf8))
        r.benchmarks = times.keys.sorted().map { name in
            let t = times[name]!
            var b = try! JSONDecoder().decode(BenchmarkRecord.self,
                                              from: Data(#"{"name": "\#(name)", "real_time": 1, "time_unit": "ms"}"#.utf8))
            b.realTime = t.median; b.min = t.min; b.p90 = t.p90
            return b
        }
        return r
    }

    @Test("a change counts only beyond the threshold and both runs' spread")
    func verdicts() {
        let before = report(["a": (10, 9.9, 10.1), "b": (10, 9.9, 10.1), "c": (10, 8, 12), "d": (10, 9.9, 10.1), "e": (1, 1, 1)])
        let after = report(["a": (11, 11, 11), "b": (10.2, 10.2, 10.2), "c": (11, 11, 11), "d": (8, 8, 8), "f": (1, 1, 1)])
        let c = Comparison(baseline: before, baselineLabel: "x", contender: after, contenderLabel: "y", threshold: 5)
        let verdict = Dictionary(uniqueKeysWithValues: c.rows.map { ($0.name, $0.verdict) })
        #expect(verdict["a"] == .regression)        // +10 % > 5 %, spread 2 %
        #expect(verdict["b"] == .unchanged)         // +2 %
        #expect(verdict["c"] == .withinNoise)       // +10 % but the baseline spreads 50 %
        #expect(verdict["d"] == .improvement)       // −20 %
        #expect(verdict["e"] == .onlyInBaseline && verdict["f"] == .onlyInContender)
        #expect(c.hasRegression)
        #expect(!Comparison(baseline: before, baselineLabel: "x", contender: before, contenderLabel: "x", threshold: 5).hasRegression)
    }

    @Test("compare's fresh run takes the baseline's rows, sizes, threads, pages and seed where the command line is silent")
    func freshRunMatchesBaseline() throws {
        let baseline = try BenchmarkReport.decode(Data(#"""
            {"context": {"date": "x", "threads": 1, "pages": "base", "seed": 7},
             "benchmarks": [{"name": "kernel/sepia/simd4/512x384", "real_time": 1, "time_unit": "ms"},
                            {"name": "copy/float-rgba/512x384", "real_time": 1, "time_unit": "ms"},
                            {"name": "kernel/sepia/simd4/12MP", "real_time": 1, "time_unit": "ms"},
                            {"name": "kernel/sepia/scalar/12MP", "real_time": 0, "time_unit": "ms",
                             "error_occurred": true, "error_message": "disagrees"},
                            {"name": "kernel/saturation/simd4/12MP", "real_time": 0, "time_unit": "ms"}]}
            """#.utf8))
        let silent = try OptionParser.parse(["compare", "before"]).matching(baseline)
        #expect(silent.options.sizes == [ImageSize(width: 512, height: 384), .mp12])
        #expect(silent.options.threads == 1 && silent.options.pages == .base && silent.options.seed == 7)
        // Failed and untimed rows too: a row that still fails must fail the comparison.
        #expect(silent.options.rows == ["kernel/sepia/simd4/512x384", "copy/float-rgba/512x384", "kernel/sepia/simd4/12MP",
                                        "kernel/sepia/scalar/12MP", "kernel/saturation/simd4/12MP"])
        #expect(silent.taken == ["its 5 rows", "--sizes 512x384,12MP", "--threads 1", "--pages base", "--seed 7"])
        // The plan of that run: the baseline's rows and the rooflines they need, nothing else.
        let planned = try WorkloadPlan.make(sizes: silent.options.sizes, filter: nil, rows: silent.options.rows).map(\.name)
        #expect(Set(planned) == silent.options.rows!.union(["copy/float-rgba/12MP"]))

        // What the command line says wins; --quick stands for the sizes.
        let said = try OptionParser.parse(["compare", "before", "--filter", "sepia", "--quick", "--threads", "2",
                                           "--pages", "huge", "--seed", "3"]).matching(baseline)
        #expect(said.taken.isEmpty && said.options.rows == nil && said.options.threads == 2)
        #expect(said.options.pages == .huge && said.options.seed == 3 && said.options.sizes == [.quick])

        // The preview rows' size (and their roofline's) is not one of the run's sizes: a
        // larger size brought them. Only preview rows: their own size brings them.
        let withPreview = try BenchmarkReport.decode(Data(#"""
            {"context": {"date": "x"},
             "benchmarks": [{"name": "kernel/sepia/scalar/1200x800", "real_time": 1, "time_unit": "ms"},
                            {"name": "copy/float-rgba/1200x800", "real_time": 1, "time_unit": "ms"},
                            {"name": "preview/bgra8-premultiplied/vibrance/scalar/1000x800", "real_time": 1, "time_unit": "ms"},
                            {"name": "copy/samples-rgba8/1000x800", "real_time": 1, "time_unit": "ms"}]}
            """#.utf8))
        let previewSizes = try OptionParser.parse(["compare", "before", "--filter", "sepia/scalar|vibrance/scalar"])
            .matching(withPreview)
        #expect(previewSizes.options.sizes == [ImageSize(width: 1200, height: 800)])
        let previewPlan = try WorkloadPlan.make(sizes: previewSizes.options.sizes, filter: "sepia/scalar|vibrance/scalar").map(\.name)
        #expect(!previewPlan.contains("kernel/sepia/scalar/1000x800") && previewPlan.contains("kernel/sepia/scalar/1200x800")
                && previewPlan.contains("preview/bgra8-premultiplied/vibrance/scalar/1000x800"), "\(previewPlan)")
        let previewOnly = try BenchmarkReport.decode(Data(#"""
            {"context": {"date": "x"},
             "benchmarks": [{"name": "preview/bgra8-premultiplied/vibrance/scalar/1000x800", "real_time": 1, "time_unit": "ms"}]}
            """#.utf8))
        #expect(try OptionParser.parse(["compare", "before"]).matching(previewOnly).options.sizes == [.preview])

        // A report without a context's threads, pages or seed (another tool's) leaves the
        // defaults; rows that are no benchmark of this build plan nothing, for the caller
        // to report with the baseline's options.
        let bare = try BenchmarkReport.decode(Data(#"{"context": {"date": "x"}, "benchmarks": [{"name": "x/y", "real_time": 1, "time_unit": "ms"}]}"#.utf8))
        let defaults = try OptionParser.parse(["compare", "before"]).matching(bare)
        #expect(defaults.taken == ["its 1 row"] && defaults.options.threads == nil && defaults.options.seed == 2024)
        #expect(defaults.options.sizes == [.mp12, .mp48])
        #expect(try WorkloadPlan.make(sizes: defaults.options.sizes, filter: nil, rows: defaults.options.rows).isEmpty)
    }

    @Test("compare warns when the runs' seeds differ")
    func seedWarning() throws {
        func seeded(_ seed: Int) throws -> BenchmarkReport {
            try BenchmarkReport.decode(Data(#"{"context": {"date": "x", "seed": \#(seed)}, "benchmarks": [{"name": "a", "real_time": 1, "time_unit": "ms"}]}"#.utf8))
        }
        let differ = Comparison(baseline: try seeded(7), baselineLabel: "x", contender: try seeded(8), contenderLabel: "y", threshold: 5)
        #expect(differ.warnings == ["the runs differ in seed: 7 vs 8"])
        let same = Comparison(baseline: try seeded(7), baselineLabel: "x", contender: try seeded(7), contenderLabel: "y", threshold: 5)
        #expect(same.warnings.isEmpty)
    }

    /// A report from JSON benchmark objects, as another tool might write them.
    func decoded(_ benchmarks: String) throws -> BenchmarkReport {
        try BenchmarkReport.decode(Data(#"{"context": {"date": "x"}, "benchmarks": [\#(benchmarks)]}"#.utf8))
    }

    @Test("the context line names the date, the host and the system, without a dangling separator where a report has no system")
    func contextLineSeparators() throws {
        let bare = try decoded(#"{"name": "a", "real_time": 1, "time_unit": "ms"}"#)
        #expect(bare.contextLines().first == "date: x; host: ?")
        let full = try BenchmarkReport.decode(Data(#"{"context": {"date": "d", "host_name": "h", "os": "Linux"}, "benchmarks": []}"#.utf8))
        #expect(full.contextLines().first == "date: d; host: h; Linux")
    }

    @Test("names read from a report file reach the text formats with control and format characters escaped; JSON escapes its own")
    func escapedNames() throws {
        let report = try decoded(#"{"name": "evil\u001b]0;pwned\u0007\u202eXX", "real_time": 1, "time_unit": "ms"}"#)
        let escaped = #"evil\u{1b}]0;pwned\u{7}\u{202e}XX"#
        for format in [OutputFormat.text, .markdown, .csv] {
            let shown = try report.rendered(format)
            #expect(shown.contains(escaped) && !shown.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E }, "\(format)")
            let compared = try Comparison(baseline: report, baselineLabel: "x", contender: report, contenderLabel: "y",
                                          threshold: 5).rendered(format)
            #expect(compared.contains(escaped) && !compared.unicodeScalars.contains { $0.value == 0x1B }, "compare \(format)")
        }
        let json = try JSONSerialization.jsonObject(with: Data(try report.rendered(.json).utf8)) as? [String: Any]
        let names = (json?["benchmarks"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["evil\u{1B}]0;pwned\u{7}\u{202E}XX"])
    }

    @Test("a benchmark failed in the contender is FAILED, exit 1, whatever else regressed; failed only in the baseline, compared as new")
    func failures() throws {
        let before = try decoded(#"{"name": "a", "real_time": 1, "time_unit": "ms"}, {"name": "b", "real_time": 1, "time_unit": "ms"}, {"name": "c", "real_time": 0, "time_unit": "ns", "error_occurred": true}"#)
        let after = try decoded(#"{"name": "a", "real_time": 0, "time_unit": "ns", "error_occurred": true, "error_message": "wrong"}, {"name": "b", "real_time": 9, "time_unit": "ms"}, {"name": "c", "real_time": 1, "time_unit": "ms"}"#)
        let c = Comparison(baseline: before, baselineLabel: "x", contender: after, contenderLabel: "y", threshold: 5)
        #expect(c.rows.map(\.name) == ["a", "b", "c"])
        #expect(c.rows.map(\.verdict) == [.failed, .regression, .onlyInContender])
        #expect(c.failedNames == ["a"] && c.exitStatus == .failure)
        let text = try c.rendered(.text)
        #expect(text.contains("FAILED (1)") && text.contains("Summary: 1 failed, 1 regression(s)") && text.hasSuffix("exit status 1.\n"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try c.rendered(.json).utf8)) as? [String: Any])
        #expect(json["failed"] as? [String] == ["a"] && json["regressions"] as? [String] == ["b"] && json["exit_status"] as? Int == 1)
        // Failed in both: the contender's failure counts.
        #expect(Comparison(baseline: before, baselineLabel: "x", contender: before, contenderLabel: "x", threshold: 5).failedNames == ["c"])
        let clean = try decoded(#"{"name": "a", "real_time": 1, "time_unit": "ms"}"#)
        #expect(Comparison(baseline: clean, baselineLabel: "x", contender: clean, contenderLabel: "x", threshold: 5).exitStatus == .success)
    }

    @Test("google-benchmark repetitions count by their median; a file of aggregates by its median aggregate")
    func repetitions() throws {
        let single = try decoded(#"{"name": "k", "real_time": 100, "time_unit": "ns"}"#)
        let repeated = try decoded(#"{"name": "k", "run_name": "k", "run_type": "iteration", "real_time": 200, "time_unit": "ns"}, {"name": "k", "run_name": "k", "run_type": "iteration", "real_time": 100, "time_unit": "ns"}, {"name": "k", "run_name": "k", "run_type": "iteration", "real_time": 100, "time_unit": "ns"}, {"name": "k_mean", "run_name": "k", "run_type": "aggregate", "aggregate_name": "mean", "real_time": 133, "time_unit": "ns"}"#)
        let c = Comparison(baseline: single, baselineLabel: "x", contender: repeated, contenderLabel: "y", threshold: 5)
        #expect(c.rows.count == 1 && c.rows[0].contenderNanoseconds == 100 && c.rows[0].verdict == .unchanged)
        // Their spread (p90 / min − 1 = 80 %) is the band.
        #expect(abs((c.rows[0].noiseBandPercent ?? 0) - 80) < 1e-9)
        let aggregates = try decoded(#"{"name": "k_mean", "run_name": "k", "run_type": "aggregate", "aggregate_name": "mean", "real_time": 150, "time_unit": "ns"}, {"name": "k_median", "run_name": "k", "run_type": "aggregate", "aggregate_name": "median", "real_time": 120, "time_unit": "ns"}"#)
        let d = Comparison(baseline: single, baselineLabel: "x", contender: aggregates, contenderLabel: "y", threshold: 5)
        #expect(d.rows.count == 1 && d.rows[0].contenderNanoseconds == 120 && d.rows[0].verdict == .regression)
    }

    @Test("a failed repetition fails its benchmark; aggregates keep their order; a time of 0 is not compared")
    func recordsThatDoNotCount() throws {
        let before = try decoded(#"{"name": "k", "real_time": 100, "time_unit": "ns"}, {"name": "z", "real_time": 0, "time_unit": "ns"}"#)
        let after = try decoded(#"{"name": "k", "real_time": 100, "time_unit": "ns"}, {"name": "k", "real_time": 0, "time_unit": "ns", "error_occurred": true}, {"name": "z", "real_time": 5, "time_unit": "ns"}"#)
        let c = Comparison(baseline: before, baselineLabel: "x", contender: after, contenderLabel: "y", threshold: 5)
        #expect(c.rows.map(\.name) == ["k", "z"] && c.rows.map(\.verdict) == [.failed, .onlyInContender])
        let names = (0..<12).map { "BM_\($0)" }
        let aggregates = try decoded(names.map { #"{"name": "\#($0)_median", "run_name": "\#($0)", "run_type": "aggregate", "aggregate_name": "median", "real_time": 1, "time_unit": "ns"}"# }.joined(separator: ", "))
        #expect(Comparison.summaries(aggregates).order == names)
        #expect(try aggregates.filtered(by: "BM_3$", in: "a").benchmarks.map(\.name) == ["BM_3_median"])
    }

    @Test("a report file whose timings cannot be shown or compared is refused, naming the benchmark and field: an unknown time unit, a time below 0, or past Double's range in ns; a time of 0, failed rows and aggregates pass")
    func refusesImpossibleTimes() throws {
        let cases: [(record: String, field: String)] = [
            (#"{"name": "a", "real_time": 1.5, "time_unit": "fortnights"}"#, "time_unit"),
            (#"{"name": "a", "real_time": -5, "time_unit": "ms"}"#, "real_time"),
            (#"{"name": "a", "real_time": 1e308, "time_unit": "s"}"#, "real_time"),
        ]
        for (record, field) in cases {
            do {
                _ = try decoded(#"{"name": "ok", "real_time": 2, "time_unit": "us"}, "# + record)
                Issue.record("\(record) was accepted")
            } catch {
                let message = describeDecodingError(error)
                #expect(message.hasPrefix("benchmarks[1].\(field): ") && message.contains("benchmark 'a'"), "\(message)")
            }
        }
        // Finite, but beyond Double's range once counted in nanoseconds: said so.
        do {
            _ = try decoded(#"{"name": "a", "real_time": 1e308, "time_unit": "s"}"#)
            Issue.record("1e308 s was accepted")
        } catch {
            #expect(describeDecodingError(error).contains("1e+308 s overflows when counted in nanoseconds"), "\(describeDecodingError(error))")
        }
        let exempt = try decoded(#"{"name": "f", "real_time": 0, "time_unit": "ns", "error_occurred": true}, {"name": "s_stddev", "run_name": "s", "run_type": "aggregate", "aggregate_name": "stddev", "real_time": 0, "time_unit": "ns"}, {"name": "t", "real_time": 1e300, "time_unit": "ns"}, {"name": "skipped", "real_time": 0, "time_unit": "ns", "iterations": 0}, {"name": "old_stddev", "real_time": 0, "time_unit": "ns"}"#)
        #expect(exempt.benchmarks.count == 5)
    }

    @Test("compare warns of spreads past 25 % and past the threshold, naming the benchmarks and the widest spread; steadier runs, or a threshold above the spread, get no warning; no spread or threshold traps")
    func wideNoiseBands() throws {
        let steady = try decoded(#"{"name": "a", "real_time": 10, "min": 9.8, "p90": 10.5, "time_unit": "ms"}, {"name": "b", "real_time": 10, "min": 9.9, "p90": 10.2, "time_unit": "ms"}"#)
        let noisy = try decoded(#"{"name": "a", "real_time": 12, "min": 10, "p90": 19.5, "time_unit": "ms"}, {"name": "b", "real_time": 10, "min": 9.9, "p90": 10.2, "time_unit": "ms"}"#)
        let calm = Comparison(baseline: steady, baselineLabel: "x", contender: steady, contenderLabel: "y", threshold: 5)
        #expect(calm.noiseWarnings.isEmpty && calm.warnings.isEmpty)
        let c = Comparison(baseline: steady, baselineLabel: "x", contender: noisy, contenderLabel: "y", threshold: 5)
        // a: p90/min − 1 = 95 %, so its +20 % passes as noise; b stays within 3 %.
        #expect(c.rows.first { $0.name == "a" }?.verdict == .withinNoise)
        #expect(c.noiseWarnings == ["1 benchmark(s) scatter so much that a change within ±95.0 % passes as noise (a); rerun them on a quieter machine or with more --samples"],
                "\(c.noiseWarnings)")
        // The table states the same band, to the same digit.
        let table = try c.rendered(.text)
        #expect(table.contains("±95.0"), "\(table)")
        let json = try c.rendered(.json)
        #expect(json.contains("passes as noise (a)"), "\(json)")
        // A threshold of its own above the spread: the user accepts that band.
        let loose = Comparison(baseline: steady, baselineLabel: "x", contender: noisy, contenderLabel: "y", threshold: 100)
        #expect(loose.noiseWarnings.isEmpty, "\(loose.noiseWarnings)")
        // A wide threshold on steady runs is no scatter.
        #expect(Comparison(baseline: steady, baselineLabel: "x", contender: steady, contenderLabel: "y", threshold: 30).noiseWarnings.isEmpty)
        // Spreads and thresholds past Int's range are shown, not converted.
        let wild = try decoded(#"{"name": "a", "real_time": 12, "min": 1e-300, "p90": 19.5, "time_unit": "ms"}"#)
        let w = Comparison(baseline: steady, baselineLabel: "x", contender: wild, contenderLabel: "y", threshold: 5)
        #expect(w.noiseWarnings.first?.contains("more than ±999 %") == true, "\(w.noiseWarnings)")
        let huge = Comparison(baseline: steady, baselineLabel: "x", contender: wild, contenderLabel: "y", threshold: 1e300)
        #expect(huge.noiseWarnings.allSatisfy { $0.contains("more than ±999 %") }, "\(huge.noiseWarnings)")
        #expect(Comparison(baseline: steady, baselineLabel: "x", contender: steady, contenderLabel: "y", threshold: 1e300).noiseWarnings.isEmpty)
    }

    @Test("--filter selects a saved report's rows, and a filter matching none is a usage error")
    func filtering() throws {
        let r = try decoded(#"{"name": "kernel/sepia/simd4/12MP", "real_time": 1, "time_unit": "ms"}, {"name": "copy/float-rgba/12MP", "real_time": 1, "time_unit": "ms"}"#)
        #expect(try r.filtered(by: "sepia", in: "r").benchmarks.map(\.name) == ["kernel/sepia/simd4/12MP"])
        #expect(try r.filtered(by: nil, in: "r").benchmarks.count == 2)
        #expect(throws: ToolError.usage("'--filter vignette' matches no benchmark in 'r'")) { try r.filtered(by: "vignette", in: "r") }
    }

    @Test("JSON keys are sorted, the same bytes every time; CSV keeps failures and rounds")
    func formats() throws {
        let r = try decoded(#"{"name": "a", "real_time": 11.243491, "time_unit": "ms", "min": 11, "p90": 12}, {"name": "b,c", "real_time": 0, "time_unit": "ns", "error_occurred": true, "error_message": "disagrees, by 2"}"#)
        let json = try r.json()
        #expect(json == (try r.json()))
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"benchmarks\" : [\n    {\n      \"min\" : 11,\n      \"name\" : \"a\""), "\(text)")
        #expect(text.contains("\n  \"context\" : {"))
        let lines = r.csv().split(separator: "\n").map(String.init)
        #expect(lines[0].hasSuffix(",roofline_multiple,error_occurred,error_message"))
        #expect(lines[1] == "a,,,,,,11000000.0,11243491.0,12000000.0,,,,,,,false,")
        #expect(lines[2] == "\"b,c\",,,,,,,,,,,,,,,true,\"disagrees, by 2\"")
        #expect(csvNumber(0.1 + 0.2) == "0.3" && csvNumber(nil) == "" && csvNumber(.infinity) == "inf")
        #expect(csvNumber(0.021534) == "0.021534" && csvNumber(-0.0001) == "-0.0001" && csvNumber(-1e-9) == "-1e-09")
        #expect(csvNumber(-0.0) == "0.0" && csvNumber(1234.56789) == "1234.568")
    }

    @Test("the recorded command line quotes what a shell would read otherwise")
    func quoting() {
        #expect(shellQuoted("--sizes=12MP,48MP") == "--sizes=12MP,48MP")
        #expect(shellQuoted("kernel/(sepia|exposure)/") == "'kernel/(sepia|exposure)/'")
        #expect(shellQuoted("it's") == #"'it'\''s'"#)
        #expect(shellQuoted("") == "''")
        #expect(shellQuoted("a b") == "'a b'")
    }

    @Test("a report that is not one says where and what")
    func decodingErrors() {
        func message(_ json: String) -> String {
            do { _ = try BenchmarkReport.decode(Data(json.utf8)); return "decoded" } catch { return describeDecodingError(error) }
        }
        #expect(message(#"{"benchmarks": []}"#) == #"the top level has no "context""#)
        #expect(message(#"{"context": {"date": "x"}, "benchmarks": [{"name": "a", "time_unit": "ns"}]}"#)
                == #"benchmarks[0] has no "real_time""#)
        #expect(message("not json") == "not JSON")
    }

    @Test("time units are converted before comparing")
    func units() throws {
        let ns = try BenchmarkReport.decode(Data(#"{"context":{"date":"x"},"benchmarks":[{"name":"k","real_time":2000000,"time_unit":"ns"}]}"#.utf8))
        let ms = try BenchmarkReport.decode(Data(#"{"context":{"date":"x"},"benchmarks":[{"name":"k","real_time":2,"time_unit":"ms"}]}"#.utf8))
        let c = Comparison(baseline: ns, baselineLabel: "ns", contender: ms, contenderLabel: "ms", threshold: 1)
        #expect(c.rows.first?.verdict == .unchanged && c.rows.first?.changePercent == 0)
    }
}

@Suite("Pages")
struct PagesTests {
    /// The `VmFlags` of the mapping of this process that holds `address`, from
    /// `/proc/self/smaps` (nil where there is none: not Linux).
    func vmFlags(at address: UnsafeRawPointer) -> [Substring]? {
        // Read to the end: a file in /proc reports a size of 0, and reading it as one
        // file of that size stops after the first page.
        guard let file = FileHandle(forReadingAtPath: "/proc/self/smaps"),
              let data = try? file.readToEnd() else { return nil }
        let smaps = String(decoding: data, as: UTF8.self)
        let target = UInt(bitPattern: address)
        var inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                inside = bounds.count == 2 && bounds[0] <= target && target < bounds[1]
            } else if inside, fields.first == "VmFlags:" {
                return Array(fields.dropFirst())
            }
        }
        Issue.record("no mapping holds \(address)")
        return []
    }

    /// Expects the `VmFlags` of the memory at `start ..< start + byteCount` to carry
    /// `pages`'s advice (`hg` for huge, `nh` for base) at its first, middle and last
    /// whole base page; nothing to check where the system has no transparent huge
    /// pages to advise on.
    func advised(_ start: UnsafeRawPointer, byteCount: Int, _ pages: PageChoice, _ label: String) {
        guard PageChoice.systemMode != nil else { return }
        let page = sysconf(Int32(_SC_PAGESIZE)), first = (Int(bitPattern: start) + page - 1) / page * page
        let last = (Int(bitPattern: start) + byteCount) / page * page - page
        guard last >= first else {
            Issue.record("\(label): no whole page in \(byteCount) bytes")
            return
        }
        for address in [first, first + (last - first) / 2 / page * page, last] {
            guard let flags = vmFlags(at: UnsafeRawPointer(bitPattern: address)!) else { return }
            #expect(flags.contains(pages == .huge ? "hg" : "nh"), "\(label) \(pages) at \(address - first): \(flags)")
        }
    }

    @Test("every constructor advises its whole pages: hg on huge, nh on base", arguments: PageChoice.allCases)
    func advice(_ pages: PageChoice) {
        // 5 MiB: a whole 2 MiB page wherever the allocation starts.
        let count = 5 << 20
        let repeated = LargeBuffer.array(repeating: UInt8(0x5A), count: count, pages)
        #expect(repeated.count == count && repeated.allSatisfy { $0 == 0x5A })
        repeated.withUnsafeBytes { advised($0.baseAddress!, byteCount: count, pages, "repeated") }
        let converted: [UInt16] = LargeBuffer.array(repeated, pages) { UInt16($0) << 1 }
        #expect(converted.count == count && converted.allSatisfy { $0 == 0xB4 })
        converted.withUnsafeBytes { advised($0.baseAddress!, byteCount: 2 * count, pages, "converted") }
        let raw = LargeBuffer.allocate(byteCount: count, alignment: 64, pages)
        advised(raw, byteCount: count, pages, "raw")
        raw.deallocate()
    }

    @Test("a fixture's photo, work image and rasters carry its page choice", arguments: PageChoice.allCases)
    func fixture(_ pages: PageChoice) {
        let fixture = Fixture(size: ImageSize(width: 64, height: 48), seed: 3, threads: 1, pages: pages)
        fixture.allocateFloatBuffers(reference: true)
        for (name, image) in [("photo", fixture.pristine), ("work", fixture.work), ("reference", fixture.reference)] {
            image.withUnsafePixels { advised($0.baseAddress!, byteCount: 16 * $0.count, pages, name) }
        }
        let rasters = fixture.samples16()
        rasters.allocate(reference: true)
        for (name, raster) in [("input", rasters.input), ("output", rasters.output), ("reference", rasters.reference)] {
            raster.withUnsafeBytes { advised($0.baseAddress!, byteCount: $0.count, pages, "16-bit \(name)") }
        }
    }

    @Test("the system's mode is the bracketed word of transparent_hugepage/enabled")
    func systemMode() {
        #expect(PageChoice.mode(fromEnabled: "always [madvise] never\n") == "madvise")
        #expect(PageChoice.mode(fromEnabled: "[always] madvise never") == "always")
        #expect(PageChoice.mode(fromEnabled: "always madvise [never]\n") == "never")
        #expect(PageChoice.mode(fromEnabled: "always madvise never") == nil)
        #expect(PageChoice.mode(fromEnabled: "") == nil)
    }

    @Test("converted, repeated and raw buffers hold what they were given, whatever their size")
    func contents() {
        for pages in PageChoice.allCases {
            for count in [0, 1, 4097, (4 << 20) + 3] {
                let source = (0..<count).map { UInt16(truncatingIfNeeded: $0 &* 2654435761) }
                let converted: [UInt8] = LargeBuffer.array(source, pages) { UInt8(truncatingIfNeeded: $0 >> 3) }
                #expect(converted == source.map { UInt8(truncatingIfNeeded: $0 >> 3) }, "\(pages), \(count)")
                #expect(LargeBuffer.array(repeating: Float(0.25), count: count, pages) == Array(repeating: 0.25, count: count))
            }
            let raw = LargeBuffer.allocate(byteCount: 5 << 20, alignment: 64, pages)
            #expect(Int(bitPattern: raw) % 64 == 0)
            raw.initializeMemory(as: UInt8.self, repeating: 7, count: 5 << 20)
            #expect(raw.load(fromByteOffset: (5 << 20) - 1, as: UInt8.self) == 7)
            raw.deallocate()
        }
    }

    @Test("the report says huge only where Linux grants huge pages on request; compare warns when runs differ in pages")
    func reported() throws {
        let mode = PageChoice.systemMode
        #expect(PageChoice.huge.effective == (mode == "always" || mode == "madvise" ? .huge : .base))
        #expect(PageChoice.base.effective == .base)
        var a = try BenchmarkReport.decode(Data(#"{"context": {"date": "x", "pages": "huge"}, "benchmarks": []}"#.utf8))
        let b = try BenchmarkReport.decode(Data(#"{"context": {"date": "x", "pages": "base"}, "benchmarks": []}"#.utf8))
        #expect(Comparison(baseline: a, baselineLabel: "a", contender: b, contenderLabel: "b", threshold: 5)
            .contextWarnings == ["the runs differ in pages: huge vs base"])
        a.context.pages = "base"
        #expect(Comparison(baseline: a, baselineLabel: "a", contender: b, contenderLabel: "b", threshold: 5)
            .contextWarnings.isEmpty)
        // A report from before the key held its buffers on base pages, unadvised.
        a.context.pages = nil
        #expect(Comparison(baseline: a, baselineLabel: "a", contender: b, contenderLabel: "b", threshold: 5)
            .contextWarnings == ["the runs differ in pages: unrecorded vs base"])
    }
}

@Suite("Context")
struct ContextTests {
    @Test("the probe recognises AVX2, AVX-512, FMA3, F16C and baseline code")
    func probe() {
        // vpaddd ymm0, ymm0, [rdi]; vzeroupper; ret (what -target-cpu native gives).
        #expect(CodegenProbe.containsAVX2([0xC5, 0xFD, 0xFE, 0x07, 0xC5, 0xF8, 0x77, 0xC3]))
        // vpaddd zmm0, zmm0, [rdi] and vpaddd zmm16, zmm16, zmm17; not vpaddd ymm16, ymm16, [rdi].
        #expect(CodegenProbe.containsAVX512([0x62, 0xF1, 0x7D, 0x48, 0xFE, 0x07, 0xC3]))
        #expect(CodegenProbe.containsAVX512([0x62, 0xA1, 0x7D, 0x40, 0xFE, 0xC1, 0xC3]))
        #expect(!CodegenProbe.containsAVX512([0x62, 0xE1, 0x7D, 0x20, 0xFE, 0x07, 0xC3]))
        #expect(!CodegenProbe.containsAVX512([0xC5, 0xFD, 0xFE, 0x07, 0xC5, 0xF8, 0x77, 0xC3]))
        // vfmadd213ss xmm0, xmm1, xmm2; ret.
        #expect(CodegenProbe.containsFMA([0xC4, 0xE2, 0x71, 0xA9, 0xC2, 0xC3]))
        // vcvtps2ph xmm0, xmm0, 4; vmovd eax, xmm0; ret. And its EVEX form with xmm16.
        #expect(CodegenProbe.containsF16C([0xC4, 0xE3, 0x79, 0x1D, 0xC0, 0x04, 0xC5, 0xF9, 0x7E, 0xC0, 0xC3]))
        #expect(CodegenProbe.containsF16C([0x62, 0xE3, 0x7D, 0x08, 0x1D, 0xC0, 0x04, 0xC3]))
        // vcvtss2sh xmm0, xmm0, xmm0 (AVX512-FP16).
        #expect(CodegenProbe.containsF16C([0x62, 0xF5, 0x7C, 0x08, 0x1D, 0xC0, 0xC3]))
        #expect(!CodegenProbe.containsF16C([0xC4, 0xE2, 0x71, 0xA9, 0xC2, 0xC3]))
        // SSE2 paddd and a tail call to fmaf (the default build).
        let baseline: [UInt8] = [0x66, 0x0F, 0xFE, 0x4F, 0x10, 0x66, 0x0F, 0xFE, 0x07, 0xC3, 0xE9, 0x1B, 0xFC, 0xFF, 0xFF]
        #expect(!CodegenProbe.containsAVX2(baseline) && !CodegenProbe.containsFMA(baseline))
        #expect(!CodegenProbe.containsAVX512(baseline) && !CodegenProbe.containsF16C(baseline))
        #expect(CodegenProbe.targetCPU.hasPrefix("x86-64") || CodegenProbe.targetCPU == "arm64")
    }

    @Test("the library's compile-time target features agree with the instructions the compiler emitted")
    func targetFeatures() {
        #if arch(x86_64)
        #if canImport(TargetFeatures.AVX2)
        let avx2 = true
        #else
        let avx2 = false
        #endif
        #if canImport(TargetFeatures.FMA)
        let fma = true
        #else
        let fma = false
        #endif
        #if canImport(TargetFeatures.AVX512)
        let avx512 = true
        #else
        let avx512 = false
        #endif
        let emitted = CodegenProbe.targetCPU
        #expect(emitted.contains("avx2") == avx2, "TargetFeatures.AVX2: \(avx2); the code: \(emitted)")
        #expect(emitted.contains("fma") == fma, "TargetFeatures.FMA: \(fma); the code: \(emitted)")
        #expect(emitted.contains("avx512") == avx512, "TargetFeatures.AVX512: \(avx512); the code: \(emitted)")
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        #if canImport(TargetFeatures.F16C)
        let f16c = true
        #else
        let f16c = false
        #endif
        if BuildInfo.isDebug {
            // Unoptimised, `Float16(x)` calls the standard library (compiled for the
            // baseline), so the probe cannot see the build's conversion; every x86-64
            // CPU with AVX2 has F16C.
            #expect(!avx2 || f16c, "TargetFeatures.F16C: \(f16c); TargetFeatures.AVX2: \(avx2)")
        } else {
            #expect(CodegenProbe.emitsF16C == f16c, "TargetFeatures.F16C: \(f16c); vcvtps2ph emitted: \(CodegenProbe.emitsF16C)")
        }
        #endif
        #endif
    }

    @Test("git_commit follows HEAD to a loose ref, packed-refs, or says unknown")
    func git() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("git-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let git = root.appendingPathComponent(".git"), sub = root.appendingPathComponent("a/b")
        try FileManager.default.createDirectory(at: git.appendingPathComponent("refs/heads"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        try Data("ref: refs/heads/main\n".utf8).write(to: git.appendingPathComponent("HEAD"))
        #expect(GitInfo.commit(from: sub.path) == "unknown")  // no commit yet
        let hash = String(repeating: "ab12", count: 10)
        try Data("# pack-refs\n\(hash) refs/heads/main\n".utf8).write(to: git.appendingPathComponent("packed-refs"))
        #expect(GitInfo.commit(from: sub.path) == hash)
        let loose = String(repeating: "0f", count: 20)
        try Data("\(loose)\n".utf8).write(to: git.appendingPathComponent("refs/heads/main"))
        #expect(GitInfo.commit(from: sub.path) == loose)
    }

    @Test("the swift version comes from #if compiler, the build type from #if DEBUG")
    func build() {
        #expect(BuildInfo.swiftVersion.first?.isNumber == true || BuildInfo.swiftVersion.hasPrefix(">="))
        #if DEBUG
        #expect(BuildInfo.buildType == "debug")
        #else
        #expect(BuildInfo.buildType == "release")
        #endif
    }
}

/// The exhaustive check's judge, on a small image: it must find a wrong sample in the
/// output that has one, and only there.
@Suite("Exactness check")
struct ExactnessCheckTests {
    @Test("check counts a sample 2 off and a changed alpha as wrong, in their own output only, 8- and 16-bit; the correct outputs pass")
    func findsWrongSamples() throws {
        let side = 16
        var input = [UInt8](repeating: 255, count: side * side * 4)
        for i in 0..<(side * side) {
            input[4 * i] = UInt8(truncatingIfNeeded: i &* 7)
            input[4 * i + 1] = UInt8(truncatingIfNeeded: i &* 13 &+ 5)
            input[4 * i + 2] = UInt8(truncatingIfNeeded: i &* 29 &+ 11)
        }
        let c = Exactness.Case(name: "saturation 1.3", operations: [Saturation(1.3)])
        let plan = try EditPlan(stages: c.operations.flatMap(\.stages)).prepared(width: side, height: side, threads: 1)
        var good = [UInt8](repeating: 0, count: input.count)
        try input.withUnsafeBufferPointer { i in
            try good.withUnsafeMutableBufferPointer { o in
                try plan.run(input: i, inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba, outputMaxval: 255)
            }
        }
        var bad = good
        let sample = 4 * 37 + 1
        bad[sample] = bad[sample] >= 2 ? bad[sample] - 2 : bad[sample] + 2
        bad[4 * 200 + 3] = 254
        // The plan's own output from the RGBA8 input into four 16-bit samples a pixel.
        func widened(into format: PixelFormat) throws -> [UInt16] {
            var out = [UInt16](repeating: 0, count: input.count)
            try input.withUnsafeBytes { i in
                try out.withUnsafeMutableBytes { o in
                    try plan.run(from: try PixelBuffer(baseAddress: UnsafeMutableRawPointer(mutating: i.baseAddress!), width: side,
                                                       height: side, bytesPerRow: 4 * side, format: .rgba8),
                                 to: try PixelBuffer(baseAddress: o.baseAddress!, width: side, height: side, bytesPerRow: 8 * side,
                                                     format: format))
                }
            }
            return out
        }
        // The 16-bit output: the plan's own, widened, with one colour word 2 LSB off
        // beyond the tie window and one alpha changed.
        var wide = try widened(into: .rgba16)
        let goodWide = Exactness.check(c, input, [], wide: wide, halves: nil, side: side, threads: 2)
        #expect(goodWide.count == 1 && goodWide[0].wrong == 0, "the plan's own 16-bit output: \(goodWide[0].first ?? "")")
        let word = 4 * 53 + 2
        wide[word] = wide[word] >= 2 ? wide[word] - 2 : wide[word] + 2
        wide[4 * 200 + 3] = 65534
        let results = Exactness.check(c, input, [good, bad], wide: wide, halves: nil, side: side, threads: 2)
        #expect(results.count == 3)
        #expect(results[0].wrong == 0, "the plan's own output: \(results[0].first ?? "")")
        #expect(results[1].wrong == 2)
        #expect(results[1].first?.contains("channel 1") == true, "\(results[1].first ?? "nil")")
        #expect(results[2].wrong == 2)
        #expect(results[2].first?.contains("channel 2") == true, "\(results[2].first ?? "nil")")
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        // The Float16 output: the plan's own, then one colour sample three halves off
        // (far beyond the window) and one alpha not 1.
        var halves = try widened(into: try PixelFormat(.rgba, alpha: .straight, sample: .float16))
        let goodHalves = Exactness.check(c, input, [], wide: wide, halves: halves, side: side, threads: 2)
        #expect(goodHalves.count == 2 && goodHalves[1].wrong == 0, "the plan's own Float16 output: \(goodHalves[1].first ?? "")")
        #expect(halves[4 * 200 + 3] == Float16(1).bitPattern)
        halves[4 * 61] += 3
        halves[4 * 200 + 3] = Float16(0.5).bitPattern
        let halfResults = Exactness.check(c, input, [], wide: wide, halves: halves, side: side, threads: 2)
        #expect(halfResults[1].wrong == 2)
        #expect(halfResults[1].first?.contains("channel 0") == true, "\(halfResults[1].first ?? "nil")")
        #endif
    }
}
