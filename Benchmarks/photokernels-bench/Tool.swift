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
    /// process exit status, printing errors as `Error: …` on standard error (nothing
    /// for a closed output pipe, ``ExitCode/brokenPipe``).
    static func main(_ arguments: [String]) -> ExitCode {
        do {
            return try run(arguments)
        } catch {
            if error.status != .brokenPipe { Console.err(error.report) }
            return error.status
        }
    }

    /// Runs one command.
    static func run(_ arguments: [String]) throws(ToolError) -> ExitCode {
        let options = try OptionParser.parse(arguments)
        switch options.command {
        case .help:
            try write(OptionParser.help, to: nil)
            return .success
        case .version:
            try write("\(OptionParser.program) \(OptionParser.version) (\(BuildInfo.buildType), \(CodegenProbe.targetCPU))\n",
                      to: nil)
            return .success
        case .list:
            let names = try WorkloadPlan.make(sizes: options.sizes, filter: options.filter).map(\.name)
            try write(names.map { $0 + "\n" }.joined(), to: options.output)
            return .success
        case .run:
            try checkDestinations(options)
            let report = try runBenchmarks(options)
            try write(try render { try report.rendered(options.format, samplingNote: samplingNote(options)) },
                      to: options.output)
            return try checkFailures(report)
        case .exactness:
            if BuildInfo.isDebug && !options.allowDebugBuild {
                throw .usage("the exhaustive check takes hours in a debug build; run it from a release build "
                             + "(swift run -c release photokernels-bench exactness)")
            }
            return try Exactness.run(threads: options.threads) ? .success : .failure
        case .show(let reference):
            try checkInputs(options, against: [reference])
            let report = try BaselineStore.load(reference, options: options).filtered(by: options.filter, in: reference)
            try write(try render { try report.rendered(options.format) }, to: options.output)
            return .success
        case .compare(let baselineReference, let otherReference):
            try checkInputs(options, against: [baselineReference] + (otherReference.map { [$0] } ?? []))
            try checkDestinations(options)
            // The rows --filter selects, in the baseline and the contender alike (a fresh
            // run's rooflines included only where the filter names them).
            let baseline = try BaselineStore.load(baselineReference, options: options)
                .filtered(by: options.filter, in: baselineReference)
            let contender: BenchmarkReport
            let contenderLabel: String
            if let otherReference {
                contender = try BaselineStore.load(otherReference, options: options)
                contenderLabel = otherReference
            } else {
                let (fresh, taken) = options.matching(baseline)
                // Before any timing: a run that could share no timed benchmark with the baseline.
                let planned = Set(try WorkloadPlan.make(sizes: fresh.sizes, filter: fresh.filter, rows: fresh.rows)
                    .map(\.name))
                guard baseline.rowNames.contains(where: planned.contains) else {
                    throw .usage(noCommonBenchmark(baselineReference, "a run with these options", baseline))
                }
                if !taken.isEmpty && !options.quiet {
                    Console.err("Timing the baseline's options now: \(taken.joined(separator: ", ")).\n")
                }
                contender = try runBenchmarks(fresh)
                contenderLabel = "now"
            }
            let comparison = Comparison(baseline: baseline, baselineLabel: baselineReference,
                                        contender: try contender.filtered(by: options.filter, in: contenderLabel),
                                        contenderLabel: contenderLabel, threshold: options.threshold)
            guard comparison.commonCount > 0 || !comparison.failedNames.isEmpty else {
                throw .usage(noCommonBenchmark(baselineReference, "'\(contenderLabel)'", baseline))
            }
            for warning in comparison.warnings {
                Console.err("Warning: \(warning).\n")
            }
            try write(try render { try comparison.rendered(options.format) }, to: options.output)
            // A benchmark that failed cannot be compared: the gate fails whatever the rest shows.
            if !comparison.failedNames.isEmpty, otherReference == nil { return try checkFailures(contender) }
            return comparison.exitStatus
        }
    }

    /// The usage error for two runs without a benchmark in common, with the options the
    /// baseline was run with.
    static func noCommonBenchmark(_ baselineReference: String, _ other: String, _ baseline: BenchmarkReport) -> String {
        var message = "'\(baselineReference)' and \(other) have no benchmark in common"
        if let line = baseline.context.commandLine {
            message += "; the baseline was run with: \(line.isEmpty ? "(no options)" : line)"
        } else {
            message += " (different --sizes, --quick or --filter?)"
        }
        return message
    }

    /// Refuses, before anything is timed: an `--output` whose directory is missing or
    /// which is a directory, a baseline whose nearest existing directory is not one
    /// (exit 73), and an `--output` that is the baseline being saved (exit 64). Nothing
    /// is created here: `makeBaselineDirectory` makes the baseline's directory once
    /// every other check has passed, just before timing.
    static func checkDestinations(_ options: Options) throws(ToolError) {
        if let output = options.output { try OutputFile.checkDestination(output) }
        guard let name = options.saveBaseline else { return }
        let url = try BaselineStore.url(of: name, options: options)
        // The nearest existing directory on the way must be one; the rest is made later.
        var directory = url.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.path), directory.pathComponents.count > 1 {
            directory = directory.deletingLastPathComponent()
        }
        if let problem = OutputFile.directoryProblem(directory.path) {
            throw .cantCreate("cannot save baseline '\(url.path)': \(problem)")
        }
        if FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path) {
            try OutputFile.checkDestination(url.path)
        }
        if let output = options.output, OutputFile.sameFile(output, url.path) {
            throw .usage("the report (--output) and --save-baseline would both be written to '\(output)'")
        }
    }

    /// Makes the directory of the baseline to be saved (exit 73 if it cannot be made),
    /// after every other check and just before timing: whether a directory can be made
    /// (under `/proc`, on a read-only file system) is only known by trying, and a run
    /// found unable to save after timing would lose its results.
    static func makeBaselineDirectory(_ options: Options) throws(ToolError) {
        guard let name = options.saveBaseline else { return }
        let url = try BaselineStore.url(of: name, options: options)
        try BaselineStore.makeDirectory(for: url)
        try OutputFile.checkDestination(url.path)
    }

    /// Refuses (exit 73) an `--output`, or a baseline to be saved, that is one of the
    /// reports `references` being read, before it is read: writing there would destroy
    /// an input (and a baseline replaced by the run compared with it passes every
    /// later comparison).
    static func checkInputs(_ options: Options, against references: [String]) throws(ToolError) {
        if let output = options.output, output != "-" {
            for reference in references {
                let url = try BaselineStore.url(of: reference, options: options)
                try OutputFile.checkNotOverwriting(input: url.path, output: output, what: "--output", force: false,
                                                  remedy: "choose another name")
            }
        }
        if let name = options.saveBaseline {
            let url = try BaselineStore.url(of: name, options: options)
            for reference in references where OutputFile.sameFile(url.path, try BaselineStore.url(of: reference, options: options).path) {
                throw .cantCreate("--save-baseline '\(name)' is the baseline '\(reference)' being compared; refusing to "
                                  + "replace it (save the new run under another name)")
            }
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
        let plan = try WorkloadPlan.make(sizes: options.sizes, filter: options.filter, rows: options.rows)
        try makeBaselineDirectory(options)
        let runner = Runner(options: options)
        let context = RunContext.current(threads: runner.threads, pages: runner.pages, seed: options.seed)  // date and load average at the start
        let outcome = runner.run(plan)
        let report = BenchmarkReport(context: context, outcome: outcome, plan: plan)
        if let name = options.saveBaseline, !report.failures.isEmpty {
            Console.err("Not saving baseline '\(name)': the run has failures.\n")
        } else if let name = options.saveBaseline {
            let replaced = FileManager.default.fileExists(atPath: try BaselineStore.url(of: name, options: options).path)
            let url = try BaselineStore.save(report, name: name, options: options)
            if !options.quiet {
                let note = replaced ? " (replacing the one saved before)" : ""
                Console.err("Saved baseline '\(name)' to \(url.path)\(note)\n")
            }
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
        do { return try body() } catch { throw .software("cannot render the report: \(error)") }
    }

    /// Writes `text` to standard output (`path` nil or `-`) or to the file `path`,
    /// atomically, or in place where `path` is a device or FIFO (`OutputFile`).
    ///
    /// - Throws: status 73 when it cannot be written; ``ExitCode/brokenPipe`` when
    ///   standard output's reader has gone.
    static func write(_ text: String, to path: String?) throws(ToolError) {
        try OutputFile.write(Data(text.utf8), to: path ?? "-")
    }
}
