// The commands: run, list, compare, show, exactness, help, version.

import CommandLineKit
import Foundation

/// The program: parses the command line, runs the command, maps errors to exit
/// statuses.
///
/// Exists apart from `main.swift` so tests can call `run(_:)` in process, and so
/// every exit status is decided in one place (`main(_:)`).
enum BenchmarkTool {
    /// Runs the command line `arguments` (without the program name) and returns the
    /// process exit status, printing errors as `Error: …` on standard error.
    static func main(_ arguments: [String]) -> Int32 {
        do {
            return try run(arguments).rawValue
        } catch {
            FileHandle.standardError.write(Data(error.report.utf8))
            return error.status.rawValue
        }
    }

    /// Runs one command.
    static func run(_ arguments: [String]) throws(ToolError) -> ExitCode {
        let options = try OptionParser.parse(arguments)
        switch options.command {
        case .help:
            FileHandle.standardOutput.write(Data(OptionParser.help.utf8))
            return .success
        case .version:
            print("\(OptionParser.program) \(OptionParser.version) (\(BuildInfo.buildType), \(CodegenProbe.targetCPU))")
            return .success
        case .list:
            for workload in try WorkloadPlan.make(sizes: options.sizes, filter: options.filter) {
                print(workload.name)
            }
            return .success
        case .run:
            let report = try runBenchmarks(options)
            try write(try render { try report.rendered(options.format, samplingNote: samplingNote(options)) },
                      to: options.output)
            return try checkFailures(report)
        case .exactness:
            if BuildInfo.isDebug && !options.allowDebugBuild {
                throw .usage("the exhaustive check takes hours in a debug build; run it from a release build "
                             + "(swift run -c release photokernels-bench exactness)")
            }
            return Exactness.run(threads: options.threads) ? .success : .failure
        case .show(let reference):
            let report = try BaselineStore.load(reference, options: options)
            try write(try render { try report.rendered(options.format) }, to: options.output)
            return .success
        case .compare(let baselineReference, let otherReference):
            let baseline = try BaselineStore.load(baselineReference, options: options)
            let contender: BenchmarkReport
            let contenderLabel: String
            if let otherReference {
                contender = try BaselineStore.load(otherReference, options: options)
                contenderLabel = otherReference
            } else {
                contender = try runBenchmarks(options)
                contenderLabel = "now"
                _ = try checkFailures(contender)
            }
            let comparison = Comparison(baseline: baseline, baselineLabel: baselineReference,
                                        contender: contender, contenderLabel: contenderLabel,
                                        threshold: options.threshold)
            guard comparison.commonCount > 0 else {
                throw .usage("'\(baselineReference)' and '\(contenderLabel)' have no benchmark in common "
                             + "(different --sizes, --quick or --filter?)")
            }
            for warning in comparison.contextWarnings {
                FileHandle.standardError.write(Data("Warning: \(warning).\n".utf8))
            }
            try write(try render { try comparison.rendered(options.format) }, to: options.output)
            return comparison.hasRegression ? .regression : .success
        }
    }

    /// Verifies and times the selected benchmarks; saves the baseline if asked.
    ///
    /// - Throws: a usage error from a debug build without `--allow-debug-build`
    ///   (SwiftPM defines `DEBUG` there; its timings measure the optimiser's absence).
    static func runBenchmarks(_ options: Options) throws(ToolError) -> BenchmarkReport {
        if BuildInfo.isDebug && !options.allowDebugBuild {
            throw .usage("this is a debug build, whose timings mean nothing; run "
                         + "'swift run -c release \(OptionParser.program)', or pass --allow-debug-build")
        }
        let plan = try WorkloadPlan.make(sizes: options.sizes, filter: options.filter)
        if let name = options.saveBaseline { _ = try BaselineStore.url(of: name, options: options) }  // fail early
        let runner = Runner(options: options)
        let context = RunContext.current(threads: runner.threads)  // date and load average at the start
        let outcome = runner.run(plan)
        let report = BenchmarkReport(context: context, outcome: outcome, plan: plan)
        if let name = options.saveBaseline, !report.failures.isEmpty {
            FileHandle.standardError.write(Data("Not saving baseline '\(name)': the run has failures.\n".utf8))
        } else if let name = options.saveBaseline {
            let url = try BaselineStore.save(report, name: name, options: options)
            if !options.quiet { FileHandle.standardError.write(Data("Saved baseline '\(name)' to \(url.path)\n".utf8)) }
        }
        return report
    }

    /// Status 1, with every failure message, if any benchmark failed verification.
    static func checkFailures(_ report: BenchmarkReport) throws(ToolError) -> ExitCode {
        let failures = report.failures
        guard !failures.isEmpty else { return .success }
        throw ToolError("\(failures.count) benchmark(s) failed verification and were not timed:\n"
                        + failures.map { "  " + ($0.errorMessage ?? $0.name) }.joined(separator: "\n"),
                        status: .failure)
    }

    /// The sampling rule, for the report header.
    static func samplingNote(_ options: Options) -> String {
        let p = options.samplingPolicy
        return "samples: ≥ \(p.minSamples) per benchmark after 1 warm-up, more until \(formatted(p.minTotalSeconds, digits: 2)) s "
            + "or \(p.maxSamples); times are per pass over the image; median = real_time"
    }

    private static func render(_ body: () throws -> String) throws(ToolError) -> String {
        do { return try body() } catch { throw ToolError("cannot render the report: \(error)", status: .failure) }
    }

    /// Prints `text` or writes it to `path` (status 73 on failure).
    static func write(_ text: String, to path: String?) throws(ToolError) {
        guard let path, path != "-" else {
            FileHandle.standardOutput.write(Data(text.utf8))
            return
        }
        do { try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic) } catch {
            throw ToolError("cannot write '\(path)': \(error.localizedDescription)", status: .cantCreate)
        }
    }
}
