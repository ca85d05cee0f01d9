// End-to-end tests of the built `photokernels-bench` binary (run as a subprocess):
// the JSON report, baselines, compare's exit statuses and usage errors.

import Foundation
import PhotoKernels
import Testing
@testable import PhotoKernelsBenchmark

/// The `photokernels-bench` executable next to the test bundle, in the build
/// products directory (`.build/<config>/`), or `$PHOTOKERNELS_BENCH` if set.
enum BenchBinary {
    static let url: URL? = {
        let fm = FileManager.default
        if let path = ProcessInfo.processInfo.environment["PHOTOKERNELS_BENCH"], fm.isExecutableFile(atPath: path) {
            return URL(fileURLWithPath: path)
        }
        var starts = [URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), Bundle.main.bundleURL]
        if let first = CommandLine.arguments.first { starts.append(URL(fileURLWithPath: first)) }
        starts += Bundle.allBundles.map(\.bundleURL)
        for start in starts {
            // The test runner is `<products>/<Package>PackageTests.xctest` (a file on Linux, a
            // bundle on macOS): look in its directory and a few levels up.
            var dir = start.deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = dir.appendingPathComponent("photokernels-bench")
                if fm.isExecutableFile(atPath: candidate.path) { return candidate }
                dir = dir.deletingLastPathComponent()
            }
        }
        return nil
    }()
}

/// The outcome of one run of the binary.
struct RunResult: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs the binary with `arguments`; output goes through temporary files (no pipe
/// can fill up and block).
func bench(_ arguments: [String], in directory: URL? = nil) throws -> RunResult {
    let binary = try #require(BenchBinary.url, "photokernels-bench not found next to the test bundle; run `swift build` first")
    let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("bench-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: tmp) }
    let out = tmp.appendingPathComponent("stdout"), err = tmp.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    let outHandle = try FileHandle(forWritingTo: out), errHandle = try FileHandle(forWritingTo: err)
    process.standardOutput = outHandle
    process.standardError = errHandle
    try process.run()
    process.waitUntilExit()
    try outHandle.close()
    try errHandle.close()
    return RunResult(status: process.terminationStatus,
                     stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
                     stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
}

/// A fresh temporary directory, removed by the caller's `defer`.
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("bench-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Reads a JSON object file without our Codable types, so key names are checked as written.
func jsonObject(_ url: URL) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
}

/// The flags every run in these tests shares: debug builds are allowed (the test suite
/// is usually a debug build) and progress lines are off.
let common = ["--allow-debug-build", "--quiet"]

@Suite("photokernels-bench binary", .serialized)
struct BenchmarkBinaryTests {
    /// One `--quick --format json` run shared by the two tests that read it.
    static let quickRun: Result<(run: RunResult, json: Data), any Error> = Result {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = dir.appendingPathComponent("quick.json")
        let run = try bench(["--quick", "--format", "json", "--output", report.path] + common)
        return (run, try Data(contentsOf: report))
    }

    /// The shared run and its JSON report, parsed.
    static func quick() throws -> (RunResult, [String: Any]) {
        let (run, data) = try quickRun.get()
        return (run, try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]))
    }

    @Test("--quick --format json writes google-benchmark JSON covering every kernel × variant")
    func quickJSON() throws {
        let (result, json) = try Self.quick()
        // 0, or 1 when a variant failed verification (checked by the next test); the
        // report is complete either way.
        #expect(result.status == 0 || (result.status == 1 && result.stderr.contains("failed verification")),
                "status \(result.status), stderr: \(result.stderr)")

        let context = try #require(json["context"] as? [String: Any])
        for key in ["date", "host_name", "executable", "num_cpus", "library_build_type", "json_schema_version",
                    "os", "swift_version", "target_cpu", "git_commit", "threads", "pages"] {
            #expect(context[key] != nil, "context lacks \(key)")
        }
        if FileManager.default.fileExists(atPath: "/proc/cpuinfo") {
            #expect(context["cpu_model"] is String)
            #expect(context["mhz_per_cpu"] is Int)
        }
        #if DEBUG
        #expect(context["library_build_type"] as? String == "debug")
        #else
        #expect(context["library_build_type"] as? String == "release")
        #endif
        #expect(context["threads"] as? Int == ProcessInfo.processInfo.activeProcessorCount)

        let benchmarks = try #require(json["benchmarks"] as? [[String: Any]])
        for b in benchmarks {
            let name = b["name"] as? String ?? "?"
            #expect(b["name"] is String)
            #expect(b["run_type"] as? String == "iteration", "\(name)")
            #expect(["ns", "ms"].contains(b["time_unit"] as? String ?? ""), "\(name) time_unit")
            if b["error_occurred"] as? Bool == true {
                #expect(b["error_message"] is String, "\(name) error_message")
                continue
            }
            #expect((b["real_time"] as? Double ?? 0) > 0, "\(name) real_time")
            #expect((b["cpu_time"] as? Double) != nil, "\(name) cpu_time")
            #expect((b["items_per_second"] as? Double ?? 0) > 0, "\(name) items_per_second")
            #expect((b["bytes_per_second"] as? Double ?? 0) > 0, "\(name) bytes_per_second")
            #expect((b["iterations"] as? Int ?? 0) >= 3, "\(name) iterations")
            #expect((b["roofline_multiple"] as? Double ?? 0) > 0, "\(name) roofline_multiple")
            let min = b["min"] as? Double ?? .nan, median = b["median"] as? Double ?? .nan, p90 = b["p90"] as? Double ?? .nan
            #expect(min <= median && median <= p90, "\(name): min \(min) ≤ median \(median) ≤ p90 \(p90)")
        }
        // Every catalog entry in every variant, scalar at speedup 1.
        for entry in KernelCatalog.entries {
            for variant in KernelVariant.allCases {
                let match = benchmarks.first {
                    $0["group"] as? String == "kernel" && $0["kernel"] as? String == entry.name
                        && $0["variant"] as? String == variant.rawValue
                }
                #expect(match != nil, "no benchmark for \(entry.name) × \(variant)")
                guard let match, match["error_occurred"] as? Bool != true else { continue }
                if variant == .scalar { #expect(match["speedup_over_scalar"] as? Double == 1) }
                else { #expect(match["speedup_over_scalar"] is Double) }
            }
        }
        // The other groups: end to end at 8 and 16 bits, the conversions, Netpbm, every roofline.
        let names = benchmarks.compactMap { $0["name"] as? String }
        for prefix in ["copy/float-rgba/", "copy/samples-rgba8/", "copy/samples-rgba16/",
                       "pipeline/rgba8/identity/", "pipeline/rgba16/identity/",
                       "convert/rgba8-to-float/", "convert/float-to-rgba8/",
                       "convert/rgba16-to-float/", "convert/float-to-rgba16/",
                       "netpbm/decode/p6-8bit/", "netpbm/encode/p6-8bit/", "netpbm/decode/p6-16bit/", "netpbm/encode/p6-16bit/"] {
            #expect(names.contains { $0.hasPrefix(prefix) }, "no \(prefix)…")
        }
        for depth in ["rgba8", "rgba16"] {
            for entry in ["adjustments", "recipe"] {
                for variant in KernelVariant.allCases {
                    #expect(names.contains { $0.hasPrefix("pipeline/\(depth)/\(entry)/\(variant.rawValue)/") },
                            "no pipeline/\(depth)/\(entry)/\(variant.rawValue)")
                }
            }
        }
        let copy = try #require(benchmarks.first { ($0["name"] as? String)?.hasPrefix("copy/float-rgba/") == true })
        #expect(copy["roofline_multiple"] as? Double == 1)
        // The conversions: group `convert`, 20 or 24 bytes per pixel, against the Float copy.
        for (prefix, bytes) in [("convert/rgba8-to-float/", 20), ("convert/float-to-rgba8/", 20),
                                ("convert/rgba16-to-float/", 24), ("convert/float-to-rgba16/", 24)] {
            let b = try #require(benchmarks.first { ($0["name"] as? String)?.hasPrefix(prefix) == true })
            #expect(b["group"] as? String == "convert", "\(prefix)")
            #expect(b["error_occurred"] as? Bool != true, "\(prefix): \(b["error_message"] ?? "")")
            let pixels = try #require(b["pixels"] as? Int)
            #expect(b["bytes_per_iteration"] as? Int == bytes * pixels, "\(prefix)")
            #expect((b["roofline"] as? String)?.hasPrefix("copy/float-rgba/") == true, "\(prefix)")
        }
    }

    @Test("SPEC §8: every variant agrees with the scalar reference, in the Float kernels and after encoding")
    func everyVariantVerifies() throws {
        let (result, json) = try Self.quick()
        let failed = (json["benchmarks"] as? [[String: Any]] ?? []).filter { $0["error_occurred"] as? Bool == true }
        #expect(result.status == 0 && failed.isEmpty,
                "library kernels disagree with their scalar reference:\n\(failed.compactMap { $0["error_message"] as? String }.joined(separator: "\n"))")
    }

    @Test("--save-baseline, then compare: a doctored baseline regresses (exit 2), identical ones do not (exit 0)")
    func baselineAndCompare() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // One thread: on a busy 2-core machine, two-thread samples scatter by 2× (p90/min),
        // which would swallow even a 3× change in the noise band.
        let filter = ["--filter", "kernel/(saturation|sepia)/", "--threads", "1"]
        let reportURL = dir.appendingPathComponent("report.json")
        let saved = try bench(["--quick", "--save-baseline", "base", "--baseline-dir", dir.path,
                               "--format", "json", "--output", reportURL.path] + filter + common)
        #expect(saved.status == 0, "stderr: \(saved.stderr)")
        let baseURL = dir.appendingPathComponent("base.json")
        // The saved baseline is the run's JSON report byte for byte, its final newline too,
        // and `show` writes the same bytes again.
        let savedText = String(decoding: try Data(contentsOf: baseURL), as: UTF8.self)
        let reportText = String(decoding: try Data(contentsOf: reportURL), as: UTF8.self)
        let shown = try bench(["show", "base", "--baseline-dir", dir.path, "--format", "json"] + common)
        #expect(savedText.hasSuffix("}\n") && reportText == savedText && shown.status == 0 && shown.stdout == savedText,
                "saved \(savedText.suffix(20).debugDescription), report \(reportText.suffix(20).debugDescription), shown \(shown.stdout.suffix(20).debugDescription)")
        var json = try jsonObject(baseURL)
        var benchmarks = try #require(json["benchmarks"] as? [[String: Any]])

        // Doctor a copy: the steadiest kernel benchmark was 3× faster "before".
        func spread(_ b: [String: Any]) -> Double { (b["p90"] as? Double ?? 1) / (b["min"] as? Double ?? 1) }
        let candidates = benchmarks.indices.filter { benchmarks[$0]["group"] as? String == "kernel" }
        let index = try #require(candidates.min { spread(benchmarks[$0]) < spread(benchmarks[$1]) })
        let doctoredName = try #require(benchmarks[index]["name"] as? String)
        benchmarks[index]["real_time"] = (benchmarks[index]["real_time"] as! Double) / 3
        json["benchmarks"] = benchmarks
        try JSONSerialization.data(withJSONObject: json).write(to: dir.appendingPathComponent("faster.json"))

        let regressed = try bench(["compare", "faster", "base", "--baseline-dir", dir.path, "--format", "json"] + common)
        #expect(regressed.status == 2, "stdout: \(regressed.stdout)\nstderr: \(regressed.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(regressed.stdout.utf8)) as? [String: Any])
        #expect(document["regressions"] as? [String] == [doctoredName])

        let text = try bench(["compare", "faster", "base", "--baseline-dir", dir.path] + common)
        #expect(text.status == 2)
        let section = text.stdout.components(separatedBy: "IMPROVEMENTS")[0]
        #expect(section.contains("REGRESSIONS (1)") && section.contains(doctoredName), "\(text.stdout)")

        // Identical baselines, by name and by path.
        let same = try bench(["compare", "base", "base", "--baseline-dir", dir.path] + common)
        #expect(same.status == 0, "\(same.stdout)\n\(same.stderr)")
        #expect(same.stdout.contains("REGRESSIONS (0)"))
        let paths = try bench(["compare", baseURL.path, baseURL.path] + common)
        #expect(paths.status == 0)

        // Against a fresh run with the same options; the threshold is huge so noise
        // on a busy machine cannot fail the test.
        let fresh = try bench(["compare", "base", "--baseline-dir", dir.path, "--quick", "--threshold", "100000"]
                              + filter + common)
        #expect(fresh.status == 0, "\(fresh.stdout)\n\(fresh.stderr)")
        // With no options at all: the baseline's rows at its size, thread count, pages and
        // seed, said on standard error; every row in both runs.
        let silent = try bench(["compare", "base", "--baseline-dir", dir.path, "--threshold", "100000", "--format", "json",
                                "--allow-debug-build"])
        let silentDocument = try JSONSerialization.jsonObject(with: Data(silent.stdout.utf8)) as? [String: Any]
        let silentRows = silentDocument?["rows"] as? [[String: Any]] ?? []
        #expect(silent.status == 0 && silent.stderr.contains("Timing the baseline's options now: its ")
                && silent.stderr.contains("--threads 1") && silent.stderr.contains("--seed 2024")
                && !silentRows.isEmpty && silentRows.count == benchmarks.count
                && silentRows.allSatisfy { ["unchanged", "within_noise", "improvement", "regression"].contains($0["verdict"] as? String) },
                "\(silent.stdout)\n\(silent.stderr)")
        // Options that could share no benchmark with the baseline: refused before anything
        // is timed, naming the baseline's own options.
        let disjoint = try bench(["compare", "base", "--baseline-dir", dir.path, "--sizes", "24x16"] + filter + common)
        #expect(disjoint.status == 64 && disjoint.stderr.contains("and a run with these options have no benchmark in common")
                && disjoint.stderr.contains("the baseline was run with: --quick --save-baseline base"), "\(disjoint.stderr)")
        // Neither the compared baseline nor an input report may become an output.
        let overBaseline = try bench(["compare", "base", "--baseline-dir", dir.path, "--quick", "--save-baseline", "base"]
                                     + filter + common)
        #expect(overBaseline.status == 73 && overBaseline.stderr.contains("refusing to replace it"), "\(overBaseline.stderr)")
        let overInput = try bench(["show", "base", "--baseline-dir", dir.path, "-o", baseURL.path] + common)
        #expect(overInput.status == 73 && overInput.stderr.contains("refusing to overwrite"), "\(overInput.stderr)")
        let both = try bench(["--quick", "--save-baseline", "twice", "--baseline-dir", dir.path,
                              "-o", dir.appendingPathComponent("twice.json").path] + filter + common)
        #expect(both.status == 64, "\(both.stderr)")

        // A contender whose benchmark failed: listed as FAILED, exit 1.
        benchmarks[index]["error_occurred"] = true
        benchmarks[index]["error_message"] = "disagrees with the scalar reference"
        json["benchmarks"] = benchmarks
        try JSONSerialization.data(withJSONObject: json).write(to: dir.appendingPathComponent("broken.json"))
        let broken = try bench(["compare", "base", "broken", "--baseline-dir", dir.path] + common)
        #expect(broken.status == 1 && broken.stdout.contains("FAILED (1)") && broken.stdout.contains(doctoredName),
                "\(broken.stdout)\n\(broken.stderr)")
        // As a baseline, its failed row is timed again by a fresh compare (here it passes:
        // only in the contender), not left out.
        let rerun = try bench(["compare", "broken", "--baseline-dir", dir.path, "--threshold", "100000"] + common)
        #expect(rerun.status == 0 && rerun.stdout.components(separatedBy: "ONLY IN CONTENDER (1)").last?.contains(doctoredName) == true,
                "\(rerun.stdout)\n\(rerun.stderr)")
        let brokenCSV = try bench(["show", "broken", "--baseline-dir", dir.path, "--format", "csv"] + common)
        #expect(brokenCSV.stdout.contains("\(doctoredName),") && brokenCSV.stdout.contains(",true,disagrees with the scalar reference"))

        // compare A B and show take --filter over the saved rows.
        let one = try bench(["compare", "faster", "base", "--baseline-dir", dir.path, "--filter", "/saturation/",
                             "--format", "csv"] + common)
        let rows = one.stdout.split(separator: "\n").dropFirst()
        #expect(one.status != 64 && !rows.isEmpty && rows.allSatisfy { $0.contains("/saturation/") }, "\(one.stdout)")
        let none = try bench(["show", "base", "--baseline-dir", dir.path, "--filter", "vignette"] + common)
        #expect(none.status == 64, "\(none.stderr)")
    }

    @Test("-o writes a device in place and follows a link to its file, or to nothing yet; a full device is exit 73")
    func outputs() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = dir.appendingPathComponent("r.json")
        try Data(#"{"context": {"date": "x"}, "benchmarks": [{"name": "k", "real_time": 1, "time_unit": "ms"}]}"#.utf8)
            .write(to: report)
        // A link to a file: the file gets the report, the link stays a link.
        let target = dir.appendingPathComponent("target.txt"), link = dir.appendingPathComponent("link.txt")
        try Data("old".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let linked = try bench(["show", report.path, "-o", link.path] + common)
        #expect(linked.status == 0, "\(linked.stderr)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
        #expect(String(decoding: try Data(contentsOf: target), as: UTF8.self).contains("k"))
        // A link to nothing: the file it names is created, the link stays a link.
        let named = dir.appendingPathComponent("named.txt"), dangling = dir.appendingPathComponent("dangling.txt")
        try FileManager.default.createSymbolicLink(at: dangling, withDestinationURL: named)
        let created = try bench(["show", report.path, "-o", dangling.path] + common)
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dangling.path) == named.path)
        #expect(String(decoding: try Data(contentsOf: named), as: UTF8.self).contains("k"))
        #if os(Linux)
        // A device is written, not replaced by a file.
        let null = try bench(["show", report.path, "-o", "/dev/null"] + common)
        #expect(null.status == 0, "\(null.stderr)")
        let type = try FileManager.default.attributesOfItem(atPath: "/dev/null")[.type] as? FileAttributeType
        #expect(type == .typeCharacterSpecial)
        if FileManager.default.fileExists(atPath: "/dev/full") {
            let full = try bench(["show", report.path, "-o", "/dev/full"] + common)
            #expect(full.status == 73 && full.stderr.contains("No space left on device"), "\(full.stderr)")
            let list = try bench(["--list", "--quick", "-o", "/dev/full"] + common)
            #expect(list.status == 73, "\(list.stderr)")
        }
        #endif
        // A missing directory is refused before anything is timed (or saved).
        let missing = try bench(["--quick", "-o", dir.appendingPathComponent("no/such.json").path,
                                 "--save-baseline", "early", "--baseline-dir", dir.path] + common)
        #expect(missing.status == 73 && missing.stderr.contains("does not exist"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("early.json").path))
        // So is a baseline directory that cannot be made, though its parent is a directory:
        // no benchmark's progress line before the refusal.
        if FileManager.default.fileExists(atPath: "/proc/self") {
            let unmakeable = try bench(["--quick", "--filter", "kernel/sepia/simd4", "--allow-debug-build",
                                        "--save-baseline", "/proc/no-such-directory/b.json"])
            #expect(unmakeable.status == 73 && unmakeable.stderr.contains("cannot make the baseline directory")
                    && !unmakeable.stderr.contains("[1/"), "\(unmakeable.stderr)")
        }
    }

    @Test("usage errors exit 64, a missing baseline 66, an invalid one 65")
    func usageErrors() throws {
        for arguments in [["--bogus"], ["--threads", "0"], ["--format", "xml"], ["--sizes", "12MP,huge"],
                          ["--filter", "("], ["compare"], ["compare", "a", "b", "c"], ["frobnicate"],
                          ["--save-baseline", "a b"]] {
            let result = try bench(arguments + common)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasSuffix("\nRun 'photokernels-bench --help' for usage.\n"), "\(arguments)")
        }
        let unknown = try bench(["--bogus"] + common)
        #expect(unknown.stderr == "Error: unknown option '--bogus'\nRun 'photokernels-bench --help' for usage.\n")
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = try bench(["compare", "nothing-here", "--baseline-dir", dir.path] + common)
        #expect(missing.status == 66, "\(missing.stderr)")
        // A baseline name needs a directory: --baseline-dir, or a package around the current one
        // (unless the temporary directory itself lies in a package).
        if BaselineStore.packageRoot(from: dir.path) == nil {
            let outside = try bench(["compare", "base"] + common, in: dir)
            #expect(outside.status == 64 && outside.stderr.contains("no Package.swift at or above"), "\(outside.stderr)")
        }
        try Data("not json".utf8).write(to: dir.appendingPathComponent("junk.json"))
        let junk = try bench(["compare", "junk", "junk", "--baseline-dir", dir.path] + common)
        #expect(junk.status == 65, "\(junk.stderr)")

        let help = try bench(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE:") && help.stdout.contains("OPTIONS:") && help.stdout.contains("--save-baseline"))
    }

    #if DEBUG
    @Test("a debug build refuses to time without --allow-debug-build")
    func refusesDebugBuild() throws {
        let result = try bench(["--quick", "--quiet"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("debug build"))
    }
    #endif
}
