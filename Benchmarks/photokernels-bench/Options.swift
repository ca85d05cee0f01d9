// Command-line options and help of `photokernels-bench`, on the shared CommandLineKit
// (the tokenizer, help layout, error type and sysexits statuses of both tools).

import CommandLineKit

/// The benchmark's error type: the kit's, so a message and its exit status travel
/// together from anywhere below `main`, which prints and exits in one place.
typealias ToolError = CommandLineError

extension CommandLineError {
    /// A usage error of `photokernels-bench` (exit 64); the report points to its `--help`.
    static func usage(_ message: String) -> CommandLineError {
        .usage(message, command: OptionParser.program)
    }
}

extension ExitCode {
    /// 1: a variant disagreed with the scalar reference (a fast wrong kernel), or a
    /// benchmark could not run.
    static let failure = ExitCode(rawValue: 1)
    /// 2: `compare` found at least one significant regression.
    static let regression = ExitCode(rawValue: 2)
}

/// How a report is written.
enum OutputFormat: String, CaseIterable, Sendable {
    /// Aligned columns for a terminal.
    case text
    /// GitHub-flavoured Markdown tables (what docs/benchmarks.md pastes).
    case markdown
    /// google-benchmark's JSON layout plus our fields; also the baseline format.
    case json
    /// One row per benchmark, raw numbers, for spreadsheets.
    case csv
}

/// An image size to benchmark, with the label used in benchmark names.
///
/// The two camera sizes have names (`12MP` = 4032×3024, the 4:3 sensor of most
/// phones; `48MP` = 8064×6048, its quad-Bayer big brother); anything else is `WxH`.
struct ImageSize: Hashable, Sendable, CustomStringConvertible {
    /// Pixels per row, ≥ 1.
    let width: Int
    /// Rows, ≥ 1.
    let height: Int

    /// 4032 × 3024.
    static let mp12 = ImageSize(width: 4032, height: 3024)
    /// 8064 × 6048.
    static let mp48 = ImageSize(width: 8064, height: 6048)
    /// 1000 × 800: the preview an app renders while a slider moves (the `preview` rows).
    static let preview = ImageSize(width: 1000, height: 800)
    /// The `--quick` size: 512 × 384 — and 128 × 96 in a debug build, where unoptimised
    /// SIMD code runs ~100× slower and the only purpose of a run is a smoke test (the
    /// test suite runs `--quick` from a debug build).
    static var quick: ImageSize {
        BuildInfo.isDebug ? ImageSize(width: 128, height: 96) : ImageSize(width: 512, height: 384)
    }
    /// The largest size accepted (2²⁸ pixels, the Netpbm reader's default limit).
    static let maxPixels = 1 << 28

    /// Width × height.
    var pixelCount: Int { width * height }
    /// The size as `WxH`, as the JSON `size` field stores it.
    var dimensions: String { "\(width)x\(height)" }
    /// `12MP`, `48MP` or `WxH`: the last component of every benchmark name.
    var label: String {
        switch self {
        case .mp12: return "12MP"
        case .mp48: return "48MP"
        default: return dimensions
        }
    }
    var description: String { label }

    /// Parses `12MP`, `48MP` (any case) or `WxH` (`x`, `X` or `×`).
    init?(parsing text: String) {
        switch text.lowercased() {
        case "12mp": self = .mp12; return
        case "48mp": self = .mp48; return
        default: break
        }
        let parts = text.split(whereSeparator: { $0 == "x" || $0 == "X" || $0 == "×" })
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w >= 1, h >= 1,
              w.multipliedReportingOverflow(by: h).overflow == false,
              w * h <= ImageSize.maxPixels
        else { return nil }
        self.init(width: w, height: h)
    }

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// Everything the command line asked for.
///
/// One value drives `run`, `compare` and `--list`, so "the same options apply" to the
/// fresh run of `compare NAME` by construction.
struct Options: Sendable {
    /// What to do.
    enum Command: Equatable, Sendable {
        /// Time the selected benchmarks and report them.
        case run
        /// Print the selected benchmark names and stop.
        case list
        /// Compare baseline `baseline` with `other`, or with a fresh run when `other` is nil.
        case compare(baseline: String, other: String?)
        /// Print a saved baseline (or any report JSON) in `--format`.
        case show(String)
        /// Check SPEC §8 on every 8-bit RGB triple, and the `Float16` conversions on
        /// every float (release builds).
        case exactness
        /// Print help.
        case help
        /// Print the version.
        case version
    }

    var command: Command = .run
    /// `--filter`: a regular expression over benchmark names (Swift `Regex` syntax).
    var filter: String?
    /// `--sizes`; the default is 12MP and 48MP, or the quick size with `--quick`.
    var sizes: [ImageSize] = [.mp12, .mp48]
    /// `--threads`, 1…1024; nil means every active core (the library's default).
    var threads: Int?
    /// `--samples`: the minimum number of timed samples.
    var minSamples: Int?
    /// `--quick`: a small image and few samples.
    var quick = false
    /// `--format`.
    var format: OutputFormat = .text
    /// `--output`: a file instead of standard output.
    var output: String?
    /// `--save-baseline`.
    var saveBaseline: String?
    /// `--baseline-dir`.
    var baselineDirectory: String?
    /// `--threshold`, in percent.
    var threshold: Double = 5
    /// `--seed` of the synthetic photo.
    var seed: UInt64 = 2024
    /// `--pages`: the pages under the images and rasters.
    var pages: PageChoice = .huge
    /// `--allow-debug-build`.
    var allowDebugBuild = false
    /// `--quiet`: no progress lines on standard error.
    var quiet = false
    /// The rows of a fresh run of `compare`, where the baseline's decide them
    /// (`matching(_:)`): only these names (and the rooflines they need); nil for all.
    var rows: Set<String>?
    /// The options the command line gave, by name.
    var given: Set<String> = []

    /// The sampling rule these options imply (see `SamplingPolicy`).
    var samplingPolicy: SamplingPolicy {
        quick ? .quick(minSamples: minSamples) : .standard(minSamples: minSamples)
    }
}

extension Options {
    /// The options of the fresh run that `compare <baseline>` times: these, with what
    /// the command line leaves out taken from `baseline` — without `--filter`, its rows
    /// (those that failed or hold no time too: a row that still fails must fail the
    /// comparison); without `--sizes` or `--quick`, the sizes its rows name (the preview
    /// rows' own size only where nothing else names one: any size at least as large
    /// brings them); without `--threads`, `--pages` or `--seed`, those its context
    /// records. So `compare before` times what `before` timed, the way it was timed
    /// (its sampling aside: `--quick` and `--samples` are the command line's). Also
    /// returns what was taken, as options, for the note the tool prints.
    func matching(_ baseline: BenchmarkReport) -> (options: Options, taken: [String]) {
        var fresh = self, taken: [String] = []
        let names = baseline.rowNames
        if !given.contains("filter"), !names.isEmpty {
            fresh.rows = Set(names)
            taken.append("its \(names.count) row\(names.count == 1 ? "" : "s")")
        }
        if !given.contains("sizes"), !given.contains("quick") {
            func size(of name: String) -> ImageSize? {
                name.split(separator: "/").last.flatMap { ImageSize(parsing: String($0)) }
            }
            // Rooflines accompany other rows, and the preview rows come with any size
            // at least as large as theirs.
            var sizes: [ImageSize] = []
            for name in names where !name.hasPrefix("copy/") && !name.hasPrefix("preview/") {
                if let size = size(of: name), !sizes.contains(size) { sizes.append(size) }
            }
            if sizes.isEmpty, names.contains(where: { $0.hasPrefix("preview/") }) { sizes = [.preview] }
            if !sizes.isEmpty {
                fresh.sizes = sizes
                taken.append("--sizes " + sizes.map(\.label).joined(separator: ","))
            }
        }
        let context = baseline.context
        if !given.contains("threads"), let threads = context.threads, (1...1024).contains(threads) {
            fresh.threads = threads
            taken.append("--threads \(threads)")
        }
        if !given.contains("pages"), let pages = context.pages.flatMap(PageChoice.init(rawValue:)) {
            fresh.pages = pages
            taken.append("--pages \(pages.rawValue)")
        }
        if !given.contains("seed"), let seed = context.seed {
            fresh.seed = seed
            taken.append("--seed \(seed)")
        }
        return (fresh, taken)
    }
}

/// Parses `photokernels-bench` arguments into `Options`.
enum OptionParser {
    /// The program name in messages.
    static let program = "photokernels-bench"
    /// The version `--version` prints (bump with the JSON schema).
    static let version = "1.0.0"

    /// Every option, in help order.
    static let specs: [OptionSpec] = [
        OptionSpec("filter", value: "regex",
                   help: "Run only benchmarks whose name matches <regex> (Swift Regex syntax). The memory-copy "
                       + "rooflines the selected benchmarks need always run. With show, or compare of two saved "
                       + "reports, only those rows."),
        OptionSpec("sizes", value: "list",
                   help: "Comma-separated image sizes: 12MP, 48MP or WxH (default: 12MP,48MP; with --quick: 512x384)."),
        OptionSpec("threads", value: "n", help: "Threads for every kernel, pipeline and copy, 1…1024 (default: all cores)."),
        OptionSpec("samples", value: "n",
                   help: "Minimum timed samples per benchmark (default: 5, more until 0.3 s or 50 samples; --quick: 3)."),
        OptionSpec("quick", help: "A smoke run: 512x384 (128x96 in a debug build) and few samples; finishes in seconds."),
        OptionSpec("format", value: "format", help: "Report format: text, markdown, json or csv (default: text)."),
        OptionSpec("output", short: "o", value: "file", help: "Write the report to <file> instead of standard output."),
        OptionSpec("save-baseline", value: "name", help: "Also save the run as <baseline-dir>/<name>.json, or at a path "
                       + "(containing '/' or ending in .json); the directory is created."),
        OptionSpec("baseline-dir", value: "dir",
                   help: "Where baselines live (default: Benchmarks/Baselines of the package around the current directory)."),
        OptionSpec("threshold", value: "pct",
                   help: "compare: the slowdown in percent that counts as a regression (default: 5)."),
        OptionSpec("seed", value: "n", help: "Seed of the synthetic photo (default: 2024)."),
        OptionSpec("pages", value: "kind",
                   help: "Pages under the images and rasters: huge (2 MiB transparent huge pages where Linux grants "
                       + "them on request, as numpy advises its arrays) or base (4 KiB) (default: huge)."),
        OptionSpec("list", help: "Print the names of the benchmarks the other options select (to standard output or "
                       + "--output), and exit; the rest of a run's options are accepted, so its command line can be checked as it is."),
        OptionSpec("allow-debug-build", help: "Run even from a debug build (its timings mean nothing)."),
        OptionSpec("quiet", short: "q", help: "No progress lines on standard error."),
        .version,
        .help,
    ]

    /// The tokenizer for `specs`.
    static var parser: ArgumentParser { ArgumentParser(command: program, options: specs) }

    /// The full `--help` text.
    static var help: String {
        HelpPage(
            overview: "Times every PhotoKernels kernel in every variant, end to end on 8- and 16-bit samples, "
                + "and Netpbm decode/encode, against a memory-copy roofline.",
            usage: ["\(program) [run] [<options>]",
                    "\(program) exactness [--threads <n>]",
                    "\(program) compare <baseline> [<other>] [<options>]",
                    "\(program) show <baseline> [--filter <regex>] [--format <format>] [--output <file>]"],
            arguments: [
                HelpRow("<baseline>", "A baseline name (<baseline-dir>/<name>.json) or a path to a JSON file "
                        + "(anything containing '/' or ending in .json)."),
                HelpRow("<other>", "A second baseline name or JSON file. Without it, compare times the baseline's "
                        + "rows now, at its sizes, threads, pages and seed, unless the options say otherwise."),
            ],
            options: specs,
            sections: [
                .rows(title: "SUBCOMMANDS", [
                    HelpRow("run (default)", "Verify and time the benchmarks; print the report."),
                    HelpRow("compare", "Compare two runs; exit 2 on a regression, 1 when a benchmark failed."),
                    HelpRow("show", "Print a saved baseline or report JSON as text, markdown, json or csv."),
                    HelpRow("exactness", "Check SPEC §8 on all 2²⁴ 8-bit RGB triples against a Double evaluation, "
                            + "and the Float16 conversions on all 2¹⁶ halves and 2³² floats; exit 1 on a wrong sample."),
                ]),
                .rows(title: "EXIT STATUS", [
                    HelpRow("0", "success (compare: no significant regression)"),
                    HelpRow("1", "a variant disagrees with the scalar reference (SPEC §8), or a benchmark failed"),
                    HelpRow("2", "compare: at least one regression beyond the threshold and the noise band"),
                    HelpRow("64", "usage error (unknown option, bad value, debug build without --allow-debug-build)"),
                    HelpRow("65", "a baseline file is not benchmark JSON, or holds a time that cannot be compared"),
                    HelpRow("66", "a baseline name or file does not exist"),
                    HelpRow("73", "the report or baseline cannot be written"),
                    HelpRow("141", "standard output's reader went away (… | head): ended by SIGPIPE"),
                ]),
                .lines(title: "EXAMPLES", [
                    "swift run -c release --scratch-path .build/native \\",
                    "    -Xswiftc -target-cpu -Xswiftc native \(program)",
                    "\(program) --filter kernel/sepia/ --sizes 12MP --save-baseline before",
                    "\(program) compare before",
                    "\(program) compare before after --format markdown",
                ]),
            ]
        ).rendered()
    }

    /// Parses `arguments` (without the program name). `--help` or `--version` among
    /// the options (before `--`) wins over everything else on the line.
    ///
    /// - Throws: a usage error for an unknown option, a missing or malformed value,
    ///   an unknown subcommand or a misplaced positional argument.
    static func parse(_ arguments: [String]) throws(ToolError) -> Options {
        var options = Options()
        let parser = self.parser
        if parser.contains("help", in: arguments) { options.command = .help; return options }
        if parser.contains("version", in: arguments) { options.command = .version; return options }
        let values = ValueParser(command: program)
        var positionals: [String] = []
        var given: [String] = []  // option names, in command-line order
        var sizesGiven = false
        var list = false

        for argument in try parser.parse(arguments) {
            let name: String, text: String
            switch argument {
            case .positional(let positional):
                positionals.append(positional)
                continue
            case .option(let option, let value):
                (name, text) = (option, value ?? "")
            }
            if !given.contains(name) { given.append(name) }
            switch name {
            case "filter":
                do { _ = try Regex(text) } catch {
                    throw .usage("'--filter' needs a regular expression, got '\(text)': \(error)")
                }
                options.filter = text
            case "sizes":
                var sizes: [ImageSize] = []
                for item in text.split(separator: ",", omittingEmptySubsequences: false) {
                    let size = item.trimmingCharacters(in: " ")
                    guard let parsed = ImageSize(parsing: size) else {
                        throw .usage("'--sizes' needs 12MP, 48MP or WxH (W, H ≥ 1, at most 2^28 pixels), got '\(size)'")
                    }
                    if !sizes.contains(parsed) { sizes.append(parsed) }
                }
                options.sizes = sizes
                sizesGiven = true
            case "threads": options.threads = try values.integer(text, for: name, in: 1...1024)
            case "samples": options.minSamples = try values.integer(text, for: name, in: 1...)
            case "quick": options.quick = true
            case "format":
                let choice = try values.choice(text.lowercased(), for: name, from: OutputFormat.allCases.map(\.rawValue))
                options.format = OutputFormat(rawValue: choice)!
            case "output":
                guard !text.isEmpty else { throw .usage("'--output' needs a file name") }
                options.output = text
            case "save-baseline":
                guard !text.hasSuffix("/") else {
                    throw .usage("'--save-baseline' needs a file, got the directory '\(text)'")
                }
                guard BaselineStore.isValidName(text) || BaselineStore.isPath(text) else {
                    throw .usage("'--save-baseline' needs a name of letters, digits, '.', '_' and '-', "
                                 + "or a path (containing '/' or ending in .json), got '\(text)'")
                }
                options.saveBaseline = text
            case "baseline-dir":
                guard !text.isEmpty else { throw .usage("'--baseline-dir' needs a directory") }
                options.baselineDirectory = text
            case "threshold":
                let percent = try values.number(text, for: name)
                guard percent >= 0 else { throw .usage("'--threshold' needs a percentage of at least 0, got '\(text)'") }
                options.threshold = percent
            case "seed":
                guard let seed = UInt64(text) else {
                    throw .usage("'--seed' needs a whole number from 0 to 2^64 − 1, got '\(text)'")
                }
                options.seed = seed
            case "pages":
                let choice = try values.choice(text.lowercased(), for: name, from: PageChoice.allCases.map(\.rawValue))
                options.pages = PageChoice(rawValue: choice)!
            case "list": list = true
            case "allow-debug-build": options.allowDebugBuild = true
            case "quiet": options.quiet = true
            default: break  // "help" and "version" are answered before parsing
            }
        }
        if options.quick && !sizesGiven { options.sizes = [.quick] }
        options.given = Set(given)

        switch positionals.first {
        case nil, "run"?:
            if let extra = positionals.dropFirst().first { throw .usage("unexpected argument '\(extra)'") }
            options.command = list ? .list : .run
        case "compare"?:
            let rest = Array(positionals.dropFirst())
            guard (1...2).contains(rest.count) else {
                throw .usage(rest.isEmpty ? "'compare' needs a baseline: compare <baseline> [<other>]"
                                          : "'compare' takes at most two baselines; got \(rest.count)")
            }
            guard !list else { throw .usage("'--list' cannot be combined with 'compare'") }
            options.command = .compare(baseline: rest[0], other: rest.count == 2 ? rest[1] : nil)
        case "show"?:
            let rest = Array(positionals.dropFirst())
            guard rest.count == 1 else { throw .usage("'show' takes one baseline name or JSON file; got \(rest.count)") }
            guard !list else { throw .usage("'--list' cannot be combined with 'show'") }
            options.command = .show(rest[0])
        case "exactness"?:
            if let extra = positionals.dropFirst().first { throw .usage("unexpected argument '\(extra)'") }
            guard !list else { throw .usage("'--list' cannot be combined with 'exactness'") }
            options.command = .exactness
        case let other?:
            let hint = ArgumentParser.closest(to: other, among: ["run", "compare", "show", "exactness"]).map { "; did you mean '\($0)'?" }
                ?? "; expected run, compare, show or exactness"
            throw .usage("unknown subcommand '\(other)'" + hint)
        }
        try checkApplicable(given, to: options.command)
        return options
    }

    /// The options that shape a run (what is timed, how, and where it is saved).
    static let runOptions = ["sizes", "threads", "samples", "quick", "seed", "pages", "save-baseline"]

    /// Refuses an option the command would not use, rather than ignore it: a run's
    /// options with `show` or with `compare` of two saved reports, and all but
    /// `--threads` with `exactness`. (`--list` takes a run's whole command line, so
    /// that it can be checked as it is.)
    static func checkApplicable(_ given: [String], to command: Options.Command) throws(ToolError) {
        let unused: [String], why: String
        switch command {
        case .show:
            unused = runOptions + ["threshold"]
            why = "'show' prints a saved report"
        case .compare(_, let other?):
            unused = runOptions
            why = "'compare <baseline> \(other)' compares two saved reports"
        case .exactness:
            unused = ["filter", "sizes", "samples", "quick", "format", "output", "save-baseline", "baseline-dir",
                      "threshold", "seed", "pages"]
            why = "'exactness' checks every case at its own size (of the run's options it takes --threads)"
        default:
            return
        }
        if let option = given.first(where: unused.contains) {
            throw .usage("'--\(option)' does not apply here: \(why)")
        }
    }
}

private extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        var s = self
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}
