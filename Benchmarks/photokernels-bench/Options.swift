// Command-line parsing and help for `photokernels-bench`, in the style of
// swift-argument-parser (kebab-case long options, `--name value` or `--name=value`,
// USAGE / ARGUMENTS / OPTIONS help, `Error:` messages that point to `--help`, exit 64).

/// Process exit statuses, following sysexits(3) where one fits.
///
/// Exists so every exit path names its meaning; docs/benchmarks.md lists the same table.
enum ExitStatus: Int32, Sendable {
    /// The run or the comparison finished and found nothing wrong.
    case success = 0
    /// A variant disagreed with the scalar reference (a fast wrong kernel), or a
    /// benchmark could not run.
    case failure = 1
    /// `compare` found at least one significant regression.
    case regression = 2
    /// A usage error: unknown option, bad value, refused debug build (EX_USAGE).
    case usage = 64
    /// A baseline file exists but is not benchmark JSON (EX_DATAERR).
    case badBaseline = 65
    /// A baseline name or file does not exist or cannot be read (EX_NOINPUT).
    case missingBaseline = 66
    /// The report or baseline could not be written (EX_CANTCREAT).
    case cannotWrite = 73
}

/// An error that ends the program with a message and an exit status.
///
/// Thrown from anywhere below `main`, caught once there, so no code deep inside the
/// runner calls `exit` itself.
struct ToolError: Error, CustomStringConvertible, Sendable {
    /// The message, without the `Error:` prefix.
    let message: String
    /// The exit status it maps to.
    let status: ExitStatus

    init(_ message: String, status: ExitStatus) {
        self.message = message
        self.status = status
    }

    /// A usage error (exit 64); the message is followed by a pointer to `--help`.
    static func usage(_ message: String) -> ToolError { ToolError(message, status: .usage) }

    var description: String { message }
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
    /// `--threads`; nil means every active core (the library's default).
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
    /// `--allow-debug-build`.
    var allowDebugBuild = false
    /// `--quiet`: no progress lines on standard error.
    var quiet = false
    /// `--targets`: only the benchmarks of issue 6's target table, at 12 MP.
    var targets = false

    /// The sampling rule these options imply (see `SamplingPolicy`).
    var samplingPolicy: SamplingPolicy {
        quick ? .quick(minSamples: minSamples) : .standard(minSamples: minSamples)
    }
}

/// One option: its spelling, value placeholder and help line. The same list parses
/// and prints `--help`, so the two cannot drift apart.
struct OptionSpec: Sendable {
    /// Long name without dashes.
    let name: String
    /// A short alias such as `h`, if any.
    let short: Character?
    /// The value placeholder, nil for a flag.
    let value: String?
    /// One line of help.
    let help: String

    init(_ name: String, short: Character? = nil, value: String? = nil, _ help: String) {
        self.name = name
        self.short = short
        self.value = value
        self.help = help
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
                   "Run only benchmarks whose name matches <regex> (Swift Regex syntax). The memory-copy rooflines always run."),
        OptionSpec("sizes", value: "list",
                   "Comma-separated image sizes: 12MP, 48MP or WxH (default: 12MP,48MP; with --quick: 512x384)."),
        OptionSpec("threads", value: "n", "Threads for every kernel, pipeline and copy (default: all cores)."),
        OptionSpec("samples", value: "n",
                   "Minimum timed samples per benchmark (default: 5, more until 0.3 s or 50 samples; --quick: 3)."),
        OptionSpec("quick", "A smoke run: 512x384 (128x96 in a debug build) and few samples; finishes in seconds."),
        OptionSpec("targets",
                   "Run only issue 6's target benchmarks at 12MP (the six rows and the Float copy); the report ends with "
                   + "their MP/s against the targets for the thread count. Not combinable with --filter, --sizes or --quick."),
        OptionSpec("format", value: "format", "Report format: text, markdown, json or csv (default: text)."),
        OptionSpec("output", short: "o", value: "file", "Write the report to <file> instead of standard output."),
        OptionSpec("save-baseline", value: "name", "Also save the run as <baseline-dir>/<name>.json."),
        OptionSpec("baseline-dir", value: "dir",
                   "Where baselines live (default: Benchmarks/Baselines of the package around the current directory)."),
        OptionSpec("threshold", value: "pct", "compare: the slowdown in percent that counts as a regression (default: 5)."),
        OptionSpec("seed", value: "n", "Seed of the synthetic photo (default: 2024)."),
        OptionSpec("list", "Print the names of the selected benchmarks and exit."),
        OptionSpec("allow-debug-build", "Run even from a debug build (its timings mean nothing)."),
        OptionSpec("quiet", short: "q", "No progress lines on standard error."),
        OptionSpec("version", "Show the version."),
        OptionSpec("help", short: "h", "Show help information."),
    ]

    /// The full `--help` text.
    static var help: String {
        var lines: [String] = [
            "OVERVIEW: Times every PhotoKernels kernel in every variant, end to end on 8- and",
            "16-bit samples, and Netpbm decode/encode, against a memory-copy roofline.",
            "",
            "USAGE: \(program) [run] [<options>]",
            "       \(program) compare <baseline> [<other>] [<options>]",
            "       \(program) show <baseline> [--format <format>] [--output <file>]",
            "",
            "ARGUMENTS:",
            "  <baseline>              A baseline name (<baseline-dir>/<name>.json) or a path to a",
            "                          JSON file (anything containing '/' or ending in .json).",
            "  <other>                 A second baseline name or JSON file. Without it, compare",
            "                          runs the benchmarks now, with the same options.",
            "",
            "SUBCOMMANDS:",
            "  run (default)           Verify and time the benchmarks; print the report.",
            "  compare                 Compare two runs; exit 2 on a regression.",
            "  show                    Print a saved baseline or report JSON as text, markdown, json or csv.",
            "",
            "OPTIONS:",
        ]
        for spec in specs {
            var synopsis = spec.short.map { "-\($0), " } ?? ""
            synopsis += "--\(spec.name)"
            if let value = spec.value { synopsis += " <\(value)>" }
            let wrapped = wrap(spec.help, width: 56)
            let pad = synopsis.count < 24 ? String(repeating: " ", count: 24 - synopsis.count) : "\n" + String(repeating: " ", count: 26)
            lines.append("  " + synopsis + pad + wrapped[0])
            for more in wrapped.dropFirst() { lines.append(String(repeating: " ", count: 26) + more) }
        }
        lines += [
            "",
            "EXIT STATUS:",
            "  0   success (compare: no significant regression)",
            "  1   a variant disagrees with the scalar reference (SPEC §8), or a benchmark failed",
            "  2   compare: at least one regression beyond the threshold and the noise band",
            "  64  usage error (unknown option, bad value, debug build without --allow-debug-build)",
            "  65  a baseline file is not benchmark JSON",
            "  66  a baseline name or file does not exist",
            "  73  the report or baseline cannot be written",
            "",
            "EXAMPLES:",
            "  swift run -c release -Xswiftc -target-cpu -Xswiftc native \(program)",
            "  \(program) --filter 'kernel/(sepia|hue)/' --sizes 12MP --save-baseline before",
            "  \(program) compare before --filter 'kernel/(sepia|hue)/' --sizes 12MP",
            "  \(program) compare before after --format markdown",
            "  \(program) --targets --threads 1",
        ]
        return lines.joined(separator: "\n")
    }

    /// Greedy word wrap.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += line.isEmpty ? String(word) : " " + word
        }
        lines.append(line)
        return lines
    }

    /// Parses `arguments` (without the program name).
    ///
    /// - Throws: `ToolError.usage` for an unknown option, a missing or malformed value,
    ///   an unknown subcommand or a misplaced positional argument.
    static func parse(_ arguments: [String]) throws(ToolError) -> Options {
        var options = Options()
        var positionals: [String] = []
        var sizesGiven = false
        var list = false, help = false, version = false
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" { optionsEnded = true; continue }

            var name: String
            var attached: String?
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                if let eq = body.firstIndex(of: "=") {
                    name = String(body[..<eq])
                    attached = String(body[body.index(after: eq)...])
                } else {
                    name = String(body)
                }
            } else {
                guard argument.count == 2, let spec = specs.first(where: { $0.short == argument.last }) else {
                    throw .usage("Unknown option '\(argument)'.")
                }
                name = spec.name
            }
            guard let spec = specs.first(where: { $0.name == name }) else {
                throw .usage("Unknown option '--\(name)'.")
            }
            var value: String?
            if spec.value != nil {
                if let attached {
                    value = attached
                } else if index < arguments.count {
                    value = arguments[index]
                    index += 1
                } else {
                    throw .usage("Missing value for '--\(name) <\(spec.value!)>'.")
                }
            } else if attached != nil {
                throw .usage("'--\(name)' does not take a value.")
            }

            switch name {
            case "filter":
                let pattern = value!
                do { _ = try Regex(pattern) } catch {
                    throw .usage("'--filter \(pattern)' is not a valid regular expression: \(error).")
                }
                options.filter = pattern
            case "sizes":
                var sizes: [ImageSize] = []
                for item in value!.split(separator: ",", omittingEmptySubsequences: false) {
                    let text = item.trimmingCharacters(in: " ")
                    guard let size = ImageSize(parsing: text) else {
                        throw .usage("'--sizes': '\(text)' is not 12MP, 48MP or WxH (W, H ≥ 1, at most 2^28 pixels).")
                    }
                    if !sizes.contains(size) { sizes.append(size) }
                }
                options.sizes = sizes
                sizesGiven = true
            case "threads":
                options.threads = try positiveInteger(value!, option: name)
            case "samples":
                options.minSamples = try positiveInteger(value!, option: name)
            case "quick": options.quick = true
            case "targets": options.targets = true
            case "format":
                guard let format = OutputFormat(rawValue: value!.lowercased()) else {
                    throw .usage("'--format \(value!)': expected text, markdown, json or csv.")
                }
                options.format = format
            case "output":
                guard !value!.isEmpty else { throw .usage("'--output' needs a file name.") }
                options.output = value
            case "save-baseline":
                guard BaselineStore.isValidName(value!) else {
                    throw .usage("'--save-baseline \(value!)': a baseline name uses letters, digits, '.', '_' and '-' only.")
                }
                options.saveBaseline = value
            case "baseline-dir":
                guard !value!.isEmpty else { throw .usage("'--baseline-dir' needs a directory.") }
                options.baselineDirectory = value
            case "threshold":
                guard let pct = Double(value!), pct.isFinite, pct >= 0 else {
                    throw .usage("'--threshold \(value!)': expected a percentage ≥ 0, e.g. 5.")
                }
                options.threshold = pct
            case "seed":
                guard let seed = UInt64(value!) else { throw .usage("'--seed \(value!)': expected an unsigned integer.") }
                options.seed = seed
            case "list": list = true
            case "allow-debug-build": options.allowDebugBuild = true
            case "quiet": options.quiet = true
            case "version": version = true
            case "help": help = true
            default: throw .usage("Unknown option '--\(name)'.")
            }
        }

        if options.targets {
            guard options.filter == nil, !sizesGiven, !options.quick else {
                throw .usage("'--targets' selects its own benchmarks and size; drop --filter, --sizes and --quick.")
            }
            options.filter = IssueTarget.filter
            options.sizes = [IssueTarget.size]
        }
        if options.quick && !sizesGiven { options.sizes = [.quick] }
        if help { options.command = .help; return options }
        if version { options.command = .version; return options }

        switch positionals.first {
        case nil, "run"?:
            let extra = positionals.dropFirst()
            if let first = extra.first { throw .usage("Unexpected argument '\(first)'.") }
            options.command = list ? .list : .run
        case "compare"?:
            let rest = Array(positionals.dropFirst())
            guard (1...2).contains(rest.count) else {
                throw .usage(rest.isEmpty ? "'compare' needs a baseline: compare <baseline> [<other>]."
                                          : "'compare' takes at most two baselines; got \(rest.count).")
            }
            guard !list else { throw .usage("'--list' cannot be combined with 'compare'.") }
            options.command = .compare(baseline: rest[0], other: rest.count == 2 ? rest[1] : nil)
        case "show"?:
            let rest = Array(positionals.dropFirst())
            guard rest.count == 1 else { throw .usage("'show' takes one baseline name or JSON file; got \(rest.count).") }
            guard !list else { throw .usage("'--list' cannot be combined with 'show'.") }
            options.command = .show(rest[0])
        case let other?:
            throw .usage("Unknown subcommand '\(other)'; expected 'run', 'compare' or 'show'.")
        }
        return options
    }

    private static func positiveInteger(_ text: String, option: String) throws(ToolError) -> Int {
        guard let n = Int(text), n >= 1 else { throw .usage("'--\(option) \(text)': expected an integer ≥ 1.") }
        return n
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
