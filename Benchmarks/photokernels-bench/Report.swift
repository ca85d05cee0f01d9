// The report in four formats: text, Markdown, CSV and google-benchmark JSON.

import CommandLineKit
import Foundation

/// One benchmark in google-benchmark's JSON layout plus our fields.
///
/// Exists as the single record every format prints and every baseline stores, so a
/// saved baseline is exactly a `--format json` report and `compare` reads both ours
/// and google-benchmark's files (only `name`, `real_time` and `time_unit` are
/// required when decoding).
///
/// google-benchmark fields: `name`, `run_name`, `run_type` (`"iteration"`),
/// `repetitions`, `repetition_index`, `threads`, `iterations` (here: the number of
/// timed samples, each one pass over the image), `real_time` (the median wall time
/// per pass), `cpu_time` (the median process CPU time per pass, all threads),
/// `time_unit` (`"ns"` below 1 ms, else `"ms"`), `items_per_second` (pixels),
/// `bytes_per_second` (bytes read + written).
/// Ours: `group`, `kernel`, `variant`, `size` (`WxH`), `pixels`,
/// `bytes_per_iteration`, `megapixels_per_second`, `gigabytes_per_second`, `min`,
/// `median`, `p90` (in `time_unit`), `ns_per_pixel`, `speedup_over_scalar`,
/// `roofline` (the copy benchmark it is measured against) and `roofline_multiple`.
struct BenchmarkRecord: Codable, Sendable {
    var name: String
    var runName: String?
    var runType: String?
    var repetitions: Int?
    var repetitionIndex: Int?
    var threads: Int?
    var iterations: Int?
    var realTime: Double
    var cpuTime: Double?
    var timeUnit: String
    var itemsPerSecond: Double?
    var bytesPerSecond: Double?
    var errorOccurred: Bool?
    var errorMessage: String?
    var aggregateName: String?
    var group: String?
    var kernel: String?
    var variant: String?
    var size: String?
    var pixels: Int?
    var bytesPerIteration: Int?
    var megapixelsPerSecond: Double?
    var gigabytesPerSecond: Double?
    var min: Double?
    var median: Double?
    var p90: Double?
    var nsPerPixel: Double?
    var speedupOverScalar: Double?
    var roofline: String?
    var rooflineMultiple: Double?

    enum CodingKeys: String, CodingKey {
        case name
        case runName = "run_name"
        case runType = "run_type"
        case repetitions
        case repetitionIndex = "repetition_index"
        case threads, iterations
        case realTime = "real_time"
        case cpuTime = "cpu_time"
        case timeUnit = "time_unit"
        case itemsPerSecond = "items_per_second"
        case bytesPerSecond = "bytes_per_second"
        case errorOccurred = "error_occurred"
        case errorMessage = "error_message"
        case aggregateName = "aggregate_name"
        case group, kernel, variant, size, pixels
        case bytesPerIteration = "bytes_per_iteration"
        case megapixelsPerSecond = "megapixels_per_second"
        case gigabytesPerSecond = "gigabytes_per_second"
        case min, median, p90
        case nsPerPixel = "ns_per_pixel"
        case speedupOverScalar = "speedup_over_scalar"
        case roofline
        case rooflineMultiple = "roofline_multiple"
    }

    /// Nanoseconds per `time_unit` (google-benchmark uses ns, us, ms and s).
    static func nanoseconds(per unit: String) -> Double? {
        switch unit {
        case "ns": return 1
        case "us": return 1e3
        case "ms": return 1e6
        case "s": return 1e9
        default: return nil
        }
    }

    /// `real_time` in nanoseconds (nil for an unknown unit).
    var realNanoseconds: Double? { Self.nanoseconds(per: timeUnit).map { realTime * $0 } }
    /// `min` in nanoseconds, if present.
    var minNanoseconds: Double? { min.flatMap { m in Self.nanoseconds(per: timeUnit).map { m * $0 } } }
    /// `p90` in nanoseconds, if present.
    var p90Nanoseconds: Double? { p90.flatMap { m in Self.nanoseconds(per: timeUnit).map { m * $0 } } }

    /// The record of a benchmark that failed verification: google-benchmark's
    /// `error_occurred` / `error_message`, no timings.
    init(_ failure: Failure, threads: Int) {
        let w = failure.workload
        name = w.name
        runName = w.name
        runType = "iteration"
        self.threads = threads
        iterations = 0
        realTime = 0
        cpuTime = 0
        timeUnit = "ns"
        errorOccurred = true
        errorMessage = failure.message
        group = w.group
        kernel = w.kernelName
        variant = w.variant?.rawValue
        size = w.size.dimensions
        pixels = w.pixels
        bytesPerIteration = w.bytesMoved
    }

    /// The record of `m`, measured with `threads` threads.
    init(_ m: Measurement, threads: Int) {
        let w = m.workload
        let unit = m.wall.median >= 1e6 ? "ms" : "ns"
        let scale = 1 / Self.nanoseconds(per: unit)!
        name = w.name
        runName = w.name
        runType = "iteration"
        repetitions = 1
        repetitionIndex = 0
        self.threads = threads
        iterations = m.wall.count
        realTime = m.wall.median * scale
        cpuTime = m.cpuMedian * scale
        timeUnit = unit
        itemsPerSecond = m.pixelsPerSecond
        bytesPerSecond = m.bytesPerSecond
        group = w.group
        kernel = w.kernelName
        variant = w.variant?.rawValue
        size = w.size.dimensions
        pixels = w.pixels
        bytesPerIteration = w.bytesMoved
        megapixelsPerSecond = m.pixelsPerSecond / 1e6
        gigabytesPerSecond = m.bytesPerSecond / 1e9
        min = m.wall.min * scale
        median = m.wall.median * scale
        p90 = m.wall.p90 * scale
        nsPerPixel = m.nanosecondsPerPixel
        speedupOverScalar = m.speedupOverScalar
        roofline = w.roofline.map { "copy/\($0.rawValue)/\(w.size.label)" }
        rooflineMultiple = m.rooflineMultiple
    }
}

/// A whole run: the context block and the benchmarks, google-benchmark's top level.
struct BenchmarkReport: Codable, Sendable {
    var context: RunContext
    var benchmarks: [BenchmarkRecord]

    /// The report of a run, in the order of `plan`.
    init(context: RunContext, outcome: RunOutcome, plan: [Workload]) {
        self.context = context
        let threads = context.threads ?? 1
        var records: [String: BenchmarkRecord] = [:]
        for m in outcome.measurements { records[m.workload.name] = BenchmarkRecord(m, threads: threads) }
        for f in outcome.failures { records[f.workload.name] = BenchmarkRecord(f, threads: threads) }
        benchmarks = plan.compactMap { records[$0.name] }
    }

    /// The benchmarks that failed.
    var failures: [BenchmarkRecord] { benchmarks.filter { $0.errorOccurred == true } }

    /// Pretty-printed JSON, keys sorted (`benchmarks` before `context`), so the same
    /// report is the same bytes and two reports diff line by line; a final newline, as
    /// a text file has. A saved baseline and `--format json` write these bytes.
    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }

    /// The report with only the benchmarks whose name matches `filter` (all for nil).
    ///
    /// - Throws: a usage error when it matches none of them (`reference` names the report).
    func filtered(by filter: String?, in reference: String) throws(ToolError) -> BenchmarkReport {
        guard let filter else { return self }
        let regex: Regex<AnyRegexOutput>
        do { regex = try Regex(filter) } catch { throw .usage("'--filter' is not a valid regular expression: \(error)") }
        var report = self
        // An aggregate counts under its run's name (`BM_x` for `BM_x_median`), as `compare` shows it.
        report.benchmarks = benchmarks.filter { $0.name.contains(regex) || ($0.runName?.contains(regex) ?? false) }
        guard !report.benchmarks.isEmpty else { throw .usage("'--filter \(filter)' matches no benchmark in '\(reference)'") }
        return report
    }

    /// Decodes a report (ours or google-benchmark's), and refuses one whose timings
    /// could not be shown or compared: a benchmark that neither failed nor is an
    /// aggregate needs a known `time_unit` and a `real_time` that is finite, not
    /// negative, and finite in nanoseconds too. A time of 0 (a benchmark google-benchmark
    /// skipped, a clock too coarse for a tiny image) passes, and `compare` leaves it out.
    ///
    /// - Throws: `DecodingError`, naming the benchmark and the field.
    static func decode(_ data: Data) throws -> BenchmarkReport {
        let report = try JSONDecoder().decode(BenchmarkReport.self, from: data)
        for (index, b) in report.benchmarks.enumerated() where b.errorOccurred != true && b.runType != "aggregate" {
            func refuse(_ field: BenchmarkRecord.CodingKeys, _ problem: String) -> DecodingError {
                .dataCorrupted(.init(codingPath: [CodingKeys.benchmarks, RecordIndex(intValue: index), field],
                                     debugDescription: "\(problem) (benchmark '\(b.name)')"))
            }
            guard let unit = BenchmarkRecord.nanoseconds(per: b.timeUnit) else {
                throw refuse(.timeUnit, "'\(b.timeUnit)' is not a time unit (ns, us, ms or s)")
            }
            guard b.realTime.isFinite, b.realTime >= 0 else {
                throw refuse(.realTime, "\(b.realTime) is not a finite time of 0 or more")
            }
            guard (b.realTime * unit).isFinite else {
                throw refuse(.realTime, "\(b.realTime) \(b.timeUnit) overflows when counted in nanoseconds")
            }
        }
        return report
    }

    /// A position in the `benchmarks` array, for a decoding error's path.
    private struct RecordIndex: CodingKey {
        let intValue: Int?
        var stringValue: String { "\(intValue ?? 0)" }
        init(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { return nil }
    }

    /// Every benchmark's name once, in first-seen order: a google-benchmark aggregate
    /// by the run it summarises (`run_name`), failed and untimed records included.
    var rowNames: [String] {
        var names: [String] = [], seen = Set<String>()
        for record in benchmarks {
            let name = record.runType == "aggregate" ? (record.runName ?? record.name) : record.name
            if seen.insert(name).inserted { names.append(name) }
        }
        return names
    }

    /// The report as `format`. A report read from a file (`show`, `compare`) may carry
    /// any text in its names: the text formats have their control and format
    /// characters escaped (`Console.printable`), as JSON escapes its own.
    func rendered(_ format: OutputFormat, samplingNote: String? = nil) throws -> String {
        switch format {
        case .json: return String(decoding: try json(), as: UTF8.self)
        case .csv: return Console.printable(csv())
        case .text, .markdown: return Console.printable(tables(markdown: format == .markdown, samplingNote: samplingNote))
        }
    }

    /// A few lines summarising the context.
    func contextLines() -> [String] {
        let c = context
        var cpu = c.cpuModel ?? "unknown CPU"
        if let n = c.numCPUs { cpu += ", \(n) CPUs" }
        if let mhz = c.mhzPerCPU { cpu += " @ \(mhz) MHz" }
        if let features = c.cpuFeatures, !features.isEmpty { cpu += " (\(features.joined(separator: " ")))" }
        return [
            (["date: \(c.date)", "host: \(c.hostName ?? "?")"] + (c.os.map { [$0] } ?? [])).joined(separator: "; "),
            "cpu: \(cpu)",
            "build: \(c.libraryBuildType ?? "?"), swift \(c.swiftVersion ?? "?"), target_cpu: \(c.targetCPU ?? "?"), "
                + "threads: \(c.threads.map(String.init) ?? "?"), pages: \(c.pages ?? "?"), commit: \(c.gitCommit ?? "unknown")",
        ] + (c.loadAverage.map { ["load average: " + $0.map { formatted($0, digits: 2) }.joined(separator: " ")] } ?? [])
    }

    /// The median over all benchmarks of `cpu_time / real_time`: about the thread count
    /// when every thread had a core, about 1 when the machine was busy (or the work serial).
    var parallelism: Double? {
        let ratios = benchmarks.compactMap { b -> Double? in
            guard b.errorOccurred != true, b.realTime > 0, let cpu = b.cpuTime else { return nil }
            return cpu / b.realTime
        }
        return ratios.isEmpty ? nil : Statistics(ratios).median
    }

    /// The context lines, then one table per size, then the failures.
    func tables(markdown: Bool, samplingNote: String?) -> String {
        var out = markdown ? "### PhotoKernels benchmark\n\n" : "PhotoKernels benchmark\n"
        var lines = contextLines()
        if let samplingNote { lines.append(samplingNote) }
        if let parallelism, let threads = context.threads {
            var line = "parallelism: median cpu_time/real_time \(formatted(parallelism, digits: 2)) with \(threads) thread(s)"
            if threads > 1 && parallelism < 0.75 * Double(threads) {
                line += " — the threads did not get a core each (a busy machine?): timings are pessimistic"
            }
            lines.append(line)
        }
        for line in lines { out += markdown ? "- \(line)\n" : "  \(line)\n" }
        var sizes: [String] = []
        for b in benchmarks where !sizes.contains(b.size ?? "") { sizes.append(b.size ?? "") }
        for size in sizes {
            let rows = benchmarks.filter { ($0.size ?? "") == size }
            let pixels = rows.first?.pixels.map { " (\(formatted(Double($0) / 1e6, digits: $0 < 1_000_000 ? 2 : 1)) MP)" } ?? ""
            out += markdown ? "\n#### \(size)\(pixels)\n\n" : "\n\(size)\(pixels)\n"
            var table = Table(headers: ["benchmark", "min", "median", "p90", "MP/s", "GB/s", "ns/px", "× scalar", "× roofline"])
            for b in rows {
                if b.errorOccurred == true {
                    table.rows.append([b.name, "—", "FAILED", "—", "—", "—", "—", "—", "—"])
                    continue
                }
                let unit = BenchmarkRecord.nanoseconds(per: b.timeUnit) ?? 1
                table.rows.append([
                    b.name,
                    b.min.map { formatTime($0 * unit) } ?? "—",
                    formatTime(b.realTime * unit),
                    b.p90.map { formatTime($0 * unit) } ?? "—",
                    b.megapixelsPerSecond.map { formatted($0, digits: $0 < 100 ? 1 : 0) } ?? "—",
                    b.gigabytesPerSecond.map { formatted($0, digits: 2) } ?? "—",
                    b.nsPerPixel.map { formatted($0, digits: $0 < 10 ? 2 : 1) } ?? "—",
                    b.speedupOverScalar.map { formatted($0, digits: 2) + "×" } ?? "—",
                    b.rooflineMultiple.map { formatted($0, digits: 2) + "×" } ?? "—",
                ])
            }
            out += markdown ? table.markdown() : table.text(indent: "  ")
        }
        if !failures.isEmpty {
            out += markdown ? "\n#### Failed verification (not timed)\n\n" : "\nFAILED VERIFICATION (not timed)\n"
            for f in failures { out += (markdown ? "- " : "  ") + (f.errorMessage ?? f.name) + "\n" }
        }
        return out
    }

    /// A header row and one row per benchmark; times in nanoseconds. A failed
    /// benchmark has empty figures and, as in google-benchmark's CSV, `error_occurred`
    /// `true` and its `error_message`.
    func csv() -> String {
        var lines = ["name,group,kernel,variant,size,iterations,min_ns,median_ns,p90_ns,cpu_ns,"
                     + "megapixels_per_second,gigabytes_per_second,ns_per_pixel,speedup_over_scalar,roofline_multiple,"
                     + "error_occurred,error_message"]
        for b in benchmarks {
            let described = [csvField(b.name), b.group ?? "", b.kernel ?? "", b.variant ?? "", b.size ?? ""]
            if b.errorOccurred == true {
                lines.append((described + Array(repeating: "", count: 10) + ["true", csvField(b.errorMessage ?? "")])
                    .joined(separator: ","))
                continue
            }
            let unit = BenchmarkRecord.nanoseconds(per: b.timeUnit) ?? 1
            lines.append((described + [
                b.iterations.map(String.init) ?? "",
                csvNumber(b.min.map { $0 * unit }), csvNumber(b.realTime * unit), csvNumber(b.p90.map { $0 * unit }),
                csvNumber(b.cpuTime.map { $0 * unit }), csvNumber(b.megapixelsPerSecond), csvNumber(b.gigabytesPerSecond),
                csvNumber(b.nsPerPixel), csvNumber(b.speedupOverScalar), csvNumber(b.rooflineMultiple), "false", "",
            ]).joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A table printed as aligned text or as Markdown.
///
/// Exists so the run report and the comparison share one renderer.
struct Table {
    var headers: [String]
    var rows: [[String]] = []

    /// Columns padded to their widest cell; the first column left-aligned, the rest right-aligned.
    func text(indent: String = "") -> String {
        var widths = headers.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = Swift.max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            indent + cells.enumerated().map { i, cell in
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                return i == 0 ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }
        var out = line(headers) + "\n"
        out += indent + widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
        for row in rows { out += line(row) + "\n" }
        return out
    }

    /// A GitHub-flavoured Markdown table; numeric columns right-aligned.
    func markdown() -> String {
        var out = "| " + headers.joined(separator: " | ") + " |\n"
        out += "|" + headers.indices.map { $0 == 0 ? ":---|" : "---:|" }.joined() + "\n"
        for row in rows { out += "| " + row.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |\n" }
        return out
    }
}

/// `x` with `digits` decimals.
func formatted(_ x: Double, digits: Int) -> String {
    String(format: "%.\(digits)f", x)
}

/// A duration in nanoseconds with three significant digits and a unit: `812 ns`,
/// `45.2 µs`, `12.3 ms`, `1.25 s`.
func formatTime(_ ns: Double) -> String {
    let (value, unit): (Double, String) =
        ns < 1e3 ? (ns, "ns") : ns < 1e6 ? (ns / 1e3, "µs") : ns < 1e9 ? (ns / 1e6, "ms") : (ns / 1e9, "s")
    let digits = value < 10 ? 2 : value < 100 ? 1 : 0
    return formatted(value, digits: digits) + " " + unit
}

/// A CSV field, quoted when it contains a comma, a quote or a line break.
func csvField(_ text: String) -> String {
    text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline })
        ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
}

/// A number for CSV, empty for nil: from 1 up rounded to 1/1000 (times in ns, rates),
/// below 1 to six significant digits (ratios, GB/s), so that a unit conversion's
/// last-bit error (`11243490.999999998`) does not show; never `-0.0`.
func csvNumber(_ x: Double?) -> String {
    guard let x else { return "" }
    guard x.isFinite, x.magnitude < 1e15 else { return String(x) }
    let rounded = x.magnitude >= 1 ? (x * 1000).rounded() / 1000 : Double(String(format: "%.6g", x)) ?? x
    return String(rounded == 0 ? 0 : rounded)
}
