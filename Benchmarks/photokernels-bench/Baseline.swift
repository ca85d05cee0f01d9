// Named baselines (files) and the comparison of two runs.

import CommandLineKit
import Foundation

/// Where baselines live and how a name on the command line becomes a file.
///
/// Exists so `--save-baseline NAME` and `compare NAME` agree on one rule: a NAME
/// (letters, digits, `.`, `_`, `-`) is `<dir>/NAME.json`, with `<dir>` from
/// `--baseline-dir` or `Benchmarks/Baselines` in the package that contains the
/// current directory (the first ancestor holding `Package.swift`); anything with a
/// `/` or ending in `.json` is a path, relative to the current directory.
enum BaselineStore {
    /// Whether `name` may name a baseline file.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".."
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") }
    }

    /// The first directory at or above `directory` that holds `Package.swift`.
    static func packageRoot(from directory: String) -> URL? {
        var url = URL(fileURLWithPath: directory, isDirectory: true).standardizedFileURL
        while true {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
            let parent = url.deletingLastPathComponent()
            if parent.path == url.path { return nil }
            url = parent
        }
    }

    /// The baseline directory for `options`.
    ///
    /// - Throws: a usage error when no `--baseline-dir` is given and no package encloses
    ///   the current directory.
    static func directory(_ options: Options) throws(ToolError) -> URL {
        if let dir = options.baselineDirectory { return URL(fileURLWithPath: dir, isDirectory: true) }
        let cwd = FileManager.default.currentDirectoryPath
        guard let root = packageRoot(from: cwd) else {
            throw .usage("no Package.swift at or above '\(cwd)' to hold Benchmarks/Baselines; pass --baseline-dir <dir>")
        }
        return root.appendingPathComponent("Benchmarks/Baselines", isDirectory: true)
    }

    /// Whether a command-line reference is a path rather than a name.
    static func isPath(_ reference: String) -> Bool {
        reference.contains("/") || reference.hasSuffix(".json")
    }

    /// The file `reference` designates.
    static func url(of reference: String, options: Options) throws(ToolError) -> URL {
        if isPath(reference) { return URL(fileURLWithPath: reference) }
        guard isValidName(reference) else {
            throw .usage("'\(reference)' is neither a baseline name (letters, digits, '.', '_', '-') nor a .json path")
        }
        return try directory(options).appendingPathComponent(reference + ".json")
    }

    /// Creates the directory that will hold `url` (the default `Benchmarks/Baselines`
    /// does not exist before the first save).
    ///
    /// - Throws: status 73 if it cannot be made.
    static func makeDirectory(for url: URL) throws(ToolError) {
        let directory = url.deletingLastPathComponent()
        do { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) } catch {
            throw .cantCreate("cannot make the baseline directory '\(directory.path)': \(OutputFile.reason(error))")
        }
    }

    /// Writes `report` where `reference` (a name or a path, as `load` reads it) says,
    /// creating the directory, atomically (`OutputFile`).
    ///
    /// - Returns: the file written.
    /// - Throws: status 73 if the directory or file cannot be written.
    @discardableResult
    static func save(_ report: BenchmarkReport, name reference: String, options: Options) throws(ToolError) -> URL {
        let url = try url(of: reference, options: options)
        try makeDirectory(for: url)
        let data: Data
        do { data = try report.json() } catch { throw .software("cannot encode the report: \(error)") }
        try OutputFile.write(data, to: url.path)
        return url
    }

    /// Reads the report `reference` designates.
    ///
    /// - Throws: status 66 if the file does not exist or cannot be read (listing the
    ///   saved baselines), 65 if it is not benchmark JSON.
    static func load(_ reference: String, options: Options) throws(ToolError) -> BenchmarkReport {
        let url = try url(of: reference, options: options)
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            var message = "no baseline '\(reference)': cannot read '\(url.path)'."
            if !isPath(reference) {
                let saved = (try? FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path))?
                    .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted() ?? []
                message += saved.isEmpty ? " No baselines are saved there yet; create one with --save-baseline \(reference)."
                                         : " Saved baselines: \(saved.joined(separator: ", "))."
            }
            throw ToolError(message, status: .noInput)
        }
        do { return try BenchmarkReport.decode(data) } catch {
            throw ToolError("'\(url.path)' is not a benchmark JSON report: \(describeDecodingError(error))", status: .dataError)
        }
    }
}

/// A JSON decoding error in a reader's words: where in the document, and what.
func describeDecodingError(_ error: any Error) -> String {
    guard let error = error as? DecodingError else { return "not JSON (\((error as NSError).localizedDescription))" }
    func path(_ keys: [any CodingKey]) -> String {
        let text = keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return text.isEmpty ? "the top level" : String(text.drop(while: { $0 == "." }))
    }
    switch error {
    case .keyNotFound(let key, let context):
        return "\(path(context.codingPath)) has no \"\(key.stringValue)\""
    case .typeMismatch(_, let context), .valueNotFound(_, let context):
        return "\(path(context.codingPath)): \(context.debugDescription)"
    case .dataCorrupted(let context):
        return context.codingPath.isEmpty ? "not JSON" : "\(path(context.codingPath)): \(context.debugDescription)"
    @unknown default:
        return "\(error)"
    }
}

/// The comparison of a baseline with a contender run, benchmark by benchmark.
///
/// Exists to turn two runs into a verdict a CI job can act on (exit 2 on a
/// regression). The figure compared is `real_time` (the median per pass). A change
/// `Δ = contender / baseline − 1` is significant only beyond the noise band
/// `max(threshold, baseline spread, contender spread)`, where a run's spread is its
/// own `p90 / min − 1`: a benchmark whose samples already scatter by 12 % cannot
/// show a 6 % regression. Δ above the band is a regression, below −band an
/// improvement; anything else is unchanged.
struct Comparison {
    /// What a benchmark's change means.
    enum Verdict: String, Codable, Sendable {
        case regression, improvement, unchanged
        /// Beyond the threshold but within the runs' own spread.
        case withinNoise = "within_noise"
        /// The contender's benchmark failed (`error_occurred`): no time to compare.
        case failed
        /// Only in the baseline, or only in the contender.
        case onlyInBaseline = "only_in_baseline"
        case onlyInContender = "only_in_contender"
    }

    /// One benchmark's change.
    struct Row: Codable, Sendable {
        var name: String
        var baselineNanoseconds: Double?
        var contenderNanoseconds: Double?
        var changePercent: Double?
        var noiseBandPercent: Double?
        var verdict: Verdict

        enum CodingKeys: String, CodingKey {
            case name
            case baselineNanoseconds = "baseline_ns"
            case contenderNanoseconds = "contender_ns"
            case changePercent = "change_percent"
            case noiseBandPercent = "noise_band_percent"
            case verdict
        }
    }

    let baselineLabel: String
    let contenderLabel: String
    let baseline: BenchmarkReport
    let contender: BenchmarkReport
    /// The threshold in percent.
    let threshold: Double
    let rows: [Row]

    /// Whether any benchmark regressed: exit status 2.
    var hasRegression: Bool { rows.contains { $0.verdict == .regression } }
    /// The contender's benchmarks that failed: exit status 1.
    var failedNames: [String] { rows.filter { $0.verdict == .failed }.map(\.name) }
    /// How many benchmarks both runs share.
    var commonCount: Int { rows.filter { $0.baselineNanoseconds != nil && $0.contenderNanoseconds != nil }.count }

    /// Compares `contender` with `baseline` at `threshold` percent.
    ///
    /// A benchmark recorded more than once (google-benchmark's repetitions) counts by
    /// the median of its records, its spread then covering theirs; a file holding only
    /// aggregates counts by its `median` aggregate. A benchmark that failed in the
    /// contender, in any of its records, is `failed` (whatever the baseline holds); one
    /// that failed only in the baseline is compared as only in the contender. A record
    /// whose time is not a positive finite number is left out.
    init(baseline: BenchmarkReport, baselineLabel: String, contender: BenchmarkReport, contenderLabel: String,
         threshold: Double) {
        self.baseline = baseline
        self.contender = contender
        self.baselineLabel = baselineLabel
        self.contenderLabel = contenderLabel
        self.threshold = threshold
        let old = Self.summaries(baseline), new = Self.summaries(contender)
        var rows: [Row] = [], scattered: [(name: String, percent: Double)] = []
        for name in old.order {
            let a = old.times[name]!
            if new.failed.contains(name) {
                rows.append(Row(name: name, baselineNanoseconds: a.nanoseconds, verdict: .failed))
                continue
            }
            guard let b = new.times[name] else {
                rows.append(Row(name: name, baselineNanoseconds: a.nanoseconds, verdict: .onlyInBaseline))
                continue
            }
            let change = b.nanoseconds / a.nanoseconds - 1  // both positive: `summaries` keeps no other
            let spread = Swift.max(a.spread, b.spread), band = Swift.max(threshold / 100, spread)
            if spread * 100 > Swift.max(threshold, Self.wideNoiseBandPercent) { scattered.append((name, spread * 100)) }
            let verdict: Verdict
            if change > band { verdict = .regression }
            else if change < -band { verdict = .improvement }
            else if abs(change) > threshold / 100 { verdict = .withinNoise }
            else { verdict = .unchanged }
            rows.append(Row(name: name, baselineNanoseconds: a.nanoseconds, contenderNanoseconds: b.nanoseconds,
                            changePercent: change * 100, noiseBandPercent: band * 100, verdict: verdict))
        }
        for name in new.order where old.times[name] == nil {
            rows.append(Row(name: name, contenderNanoseconds: new.times[name]!.nanoseconds, verdict: .onlyInContender))
        }
        for name in new.failedOrder where old.times[name] == nil {
            rows.append(Row(name: name, verdict: .failed))
        }
        self.rows = rows
        self.scattered = scattered
    }

    /// A benchmark's time and spread in one report.
    struct Summary {
        var nanoseconds: Double
        var spread: Double
    }

    /// Every timed benchmark of `report` in first-seen order, and the failed ones.
    static func summaries(_ report: BenchmarkReport)
        -> (order: [String], times: [String: Summary], failed: Set<String>, failedOrder: [String]) {
        var order: [String] = [], repetitions: [String: [BenchmarkRecord]] = [:]
        var medianOrder: [String] = [], medians: [String: BenchmarkRecord] = [:], failedOrder: [String] = []
        var failed = Set<String>()
        for b in report.benchmarks {
            if b.errorOccurred == true {
                if failed.insert(b.name).inserted { failedOrder.append(b.name) }
                continue
            }
            // A time that is not a positive finite number cannot be compared (nor divided by).
            guard let ns = b.realNanoseconds, ns.isFinite, ns > 0 else { continue }
            if b.runType == "aggregate" {
                let name = b.runName ?? b.name
                if b.aggregateName == "median", medians[name] == nil { medianOrder.append(name); medians[name] = b }
                continue
            }
            if repetitions[b.name] == nil { order.append(b.name) }
            repetitions[b.name, default: []].append(b)
        }
        var times: [String: Summary] = [:]
        for (name, records) in repetitions {
            let own = records.map(spread).max() ?? 0
            if records.count == 1 {
                times[name] = Summary(nanoseconds: records[0].realNanoseconds!, spread: own)
            } else {
                let statistics = Statistics(records.map { $0.realNanoseconds! })
                times[name] = Summary(nanoseconds: statistics.median, spread: Swift.max(own, statistics.spread))
            }
        }
        for name in medianOrder where times[name] == nil {
            order.append(name)
            times[name] = Summary(nanoseconds: medians[name]!.realNanoseconds!, spread: spread(medians[name]!))
        }
        // A benchmark that failed in any record (one repetition of several) failed.
        for name in failed { times[name] = nil }
        order.removeAll { failed.contains($0) }
        return (order, times, failed, failedOrder)
    }

    /// A record's own `p90 / min − 1`, 0 when it lacks either.
    static func spread(_ record: BenchmarkRecord) -> Double {
        guard let min = record.minNanoseconds, let p90 = record.p90Nanoseconds, min > 0 else { return 0 }
        return Swift.max(0, p90 / min - 1)
    }

    /// Every warning `compare` gives: the contexts' (`contextWarnings`) and the noise's
    /// (`noiseWarnings`).
    var warnings: [String] { contextWarnings + noiseWarnings }

    /// A spread (`p90 / min − 1`, in percent) past this, and past the threshold, hides a
    /// regression several times the default threshold: `noiseWarnings` names the
    /// benchmarks that have one.
    static let wideNoiseBandPercent = 25.0

    /// The compared benchmarks whose own spread, in either run, exceeds both the
    /// threshold and `wideNoiseBandPercent`, with that spread in percent.
    let scattered: [(name: String, percent: Double)]

    /// A warning when some compared benchmarks scatter so much (`scattered`) that a
    /// regression inside their noise band passes as noise: up to three of their names
    /// and the widest spread.
    var noiseWarnings: [String] {
        guard let widest = scattered.map(\.percent).max() else { return [] }
        let names = scattered.prefix(3).map(\.name).joined(separator: ", ") + (scattered.count > 3 ? ", …" : "")
        let band = widest < 1000 ? String(format: "±%.1f %%", widest) : "more than ±999 %"
        return ["\(scattered.count) benchmark(s) scatter so much that a change within \(band) "
                + "passes as noise (\(names)); rerun them on a quieter machine or with more --samples"]
    }

    /// Warnings for contexts that make timings incomparable.
    var contextWarnings: [String] {
        let a = baseline.context, b = contender.context
        var warnings: [String] = []
        func check(_ what: String, _ x: String?, _ y: String?) {
            if let x, let y, x != y { warnings.append("the runs differ in \(what): \(x) vs \(y)") }
        }
        check("build type", a.libraryBuildType, b.libraryBuildType)
        check("target_cpu", a.targetCPU, b.targetCPU)
        check("threads", a.threads.map(String.init), b.threads.map(String.init))
        check("seed", a.seed.map(String.init), b.seed.map(String.init))
        // A report from before `pages` was recorded held its buffers on base pages.
        if a.pages != b.pages {
            warnings.append("the runs differ in pages: \(a.pages ?? "unrecorded") vs \(b.pages ?? "unrecorded")")
        }
        check("host", a.hostName, b.hostName)
        check("cpu", a.cpuModel, b.cpuModel)
        return warnings
    }

    /// The comparison in `format`.
    func rendered(_ format: OutputFormat) throws -> String {
        switch format {
        case .json:
            struct Document: Encodable {
                let baseline: String, contender: String
                let thresholdPercent: Double
                let regressions: [String], improvements: [String], failed: [String]
                let exitStatus: Int32
                let warnings: [String]
                let rows: [Row]
                enum CodingKeys: String, CodingKey {
                    case baseline, contender, rows, regressions, improvements, failed, warnings
                    case thresholdPercent = "threshold_percent"
                    case exitStatus = "exit_status"
                }
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let document = Document(baseline: baselineLabel, contender: contenderLabel, thresholdPercent: threshold,
                                    regressions: rows.filter { $0.verdict == .regression }.map(\.name),
                                    improvements: rows.filter { $0.verdict == .improvement }.map(\.name),
                                    failed: failedNames, exitStatus: exitStatus.rawValue, warnings: warnings,
                                    rows: rows)
            return String(decoding: try encoder.encode(document), as: UTF8.self) + "\n"
        case .csv:
            var lines = ["name,verdict,baseline_ns,contender_ns,change_percent,noise_band_percent"]
            for r in rows {
                lines.append([csvField(r.name), r.verdict.rawValue, csvNumber(r.baselineNanoseconds),
                              csvNumber(r.contenderNanoseconds), csvNumber(r.changePercent),
                              csvNumber(r.noiseBandPercent)].joined(separator: ","))
            }
            // Names read from files: escaped, as in `BenchmarkReport.rendered`.
            return Console.printable(lines.joined(separator: "\n") + "\n")
        case .text, .markdown:
            return Console.printable(text(markdown: format == .markdown))
        }
    }

    private func describe(_ label: String, _ report: BenchmarkReport) -> String {
        let c = report.context
        return "'\(label)' (\(c.date), \(c.libraryBuildType ?? "?"), \(c.targetCPU ?? "?"), "
            + "\(c.threads.map { "\($0) threads" } ?? "? threads"), \(c.pages.map { "\($0) pages" } ?? "pages unrecorded"), "
            + "commit \(c.gitCommit ?? "unknown"))"
    }

    private func text(markdown: Bool) -> String {
        var out = markdown ? "### Benchmark comparison\n\n" : ""
        out += "Baseline:  \(describe(baselineLabel, baseline))\n"
        out += (markdown ? "\n" : "") + "Contender: \(describe(contenderLabel, contender))\n"
        out += (markdown ? "\n" : "") + "A change counts beyond max(threshold \(formatted(threshold, digits: 1)) %, "
            + "p90/min − 1 of either run); the time compared is the median (real_time).\n"
        let sections: [(String, [Verdict])] = [
            ("FAILED", [.failed]), ("REGRESSIONS", [.regression]), ("IMPROVEMENTS", [.improvement]),
            ("UNCHANGED", [.unchanged, .withinNoise]),
            ("ONLY IN BASELINE", [.onlyInBaseline]), ("ONLY IN CONTENDER", [.onlyInContender]),
        ]
        for (title, verdicts) in sections {
            let selected = rows.filter { verdicts.contains($0.verdict) }
            out += markdown ? "\n#### \(title) (\(selected.count))\n\n" : "\n\(title) (\(selected.count))\n"
            guard !selected.isEmpty else { continue }
            var table = Table(headers: ["benchmark", baselineLabel, contenderLabel, "change", "noise band", "verdict"])
            for r in selected {
                table.rows.append([
                    r.name,
                    r.baselineNanoseconds.map(formatTime) ?? "—",
                    r.contenderNanoseconds.map(formatTime) ?? "—",
                    r.changePercent.map { ($0 >= 0 ? "+" : "") + formatted($0, digits: 1) + " %" } ?? "—",
                    r.noiseBandPercent.map { "±" + formatted($0, digits: 1) + " %" } ?? "—",
                    r.verdict.rawValue.replacingOccurrences(of: "_", with: " "),
                ])
            }
            out += markdown ? table.markdown() : table.text(indent: "  ")
        }
        let count = { (v: Verdict) in rows.filter { $0.verdict == v }.count }
        out += "\n" + "Summary: \(count(.failed) > 0 ? "\(count(.failed)) failed, " : "")"
            + "\(count(.regression)) regression(s), \(count(.improvement)) improvement(s), "
            + "\(count(.unchanged) + count(.withinNoise)) unchanged; exit status \(exitStatus).\n"
        return out
    }

    /// 1 when a contender's benchmark failed, else 2 on a regression, else 0.
    var exitStatus: ExitCode {
        !failedNames.isEmpty ? .failure : hasRegression ? .regression : .success
    }
}
