import Foundation

/// One option a command accepts: its spellings, whether it takes a value, and its help.
///
/// Commands declare their options as a list of these; the same list drives parsing
/// and the OPTIONS section of `--help`, so the two cannot drift apart.
struct OptionSpec: Sendable {
    /// The long name without dashes, kebab-case (`"save-recipe"`).
    let long: String
    /// A one-letter short name (`"o"` for `-o`), if any.
    let short: Character?
    /// The value's placeholder in help (`"file.json"`); `nil` for a flag without value.
    let valueName: String?
    /// The help text; wrapped to the terminal width when printed.
    let help: String

    init(_ long: String, short: Character? = nil, value valueName: String? = nil, help: String) {
        self.long = long
        self.short = short
        self.valueName = valueName
        self.help = help
    }

    /// Whether the option consumes a value.
    var takesValue: Bool { valueName != nil }

    /// How the option is shown in help: `-o, --output <output>`.
    var synopsis: String {
        var text = short.map { "-\($0), " } ?? ""
        text += "--\(long)"
        if let valueName { text += " <\(valueName)>" }
        return text
    }
}

/// One element of a parsed command line, in the order given.
enum ParsedArgument: Equatable, Sendable {
    /// An option by its long name, with its value if it takes one.
    case option(String, value: String?)
    /// A positional argument (`-` alone is positional: it means stdin or stdout).
    case positional(String)
}

/// Splits a command line into options and positionals, checking every spelling
/// against the command's `OptionSpec`s.
///
/// Accepted forms: `--name value`, `--name=value`, `-o value`, `-ovalue`, flags
/// `--force` and `-h`, and `--` to end options. A value may start with a dash
/// (`--brightness -0.1`), because an option that takes a value always consumes the
/// next argument. Repeated options are kept, in order; the command decides what
/// repetition means (for `apply`, the last one wins).
struct ArgumentParser: Sendable {
    /// The command name used in error messages (`"photokernels apply"`).
    let command: String
    /// The options the command accepts.
    let options: [OptionSpec]

    /// Parses `arguments` (without the program and subcommand names).
    ///
    /// - Throws: a usage `CLIError` for an unknown option, a missing value, or a value
    ///   given to a flag.
    func parse(_ arguments: [String]) throws(CLIError) -> [ParsedArgument] {
        var parsed: [ParsedArgument] = []
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                parsed.append(.positional(argument))
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            // Split `--name=value` / `-ovalue` into a spelling and an attached value.
            let spec: OptionSpec
            var attached: String?
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let name: Substring
                if let equals = body.firstIndex(of: "=") {
                    name = body[..<equals]
                    attached = String(body[body.index(after: equals)...])
                } else {
                    name = body
                }
                guard let found = options.first(where: { $0.long == name }) else {
                    throw unknownOption("--\(name)")
                }
                spec = found
            } else {
                let letter = argument.dropFirst().first!
                guard let found = options.first(where: { $0.short == letter }) else {
                    throw unknownOption(argument)
                }
                spec = found
                let rest = argument.dropFirst(2)
                if !rest.isEmpty {
                    guard spec.takesValue else { throw unknownOption(argument) }
                    attached = String(rest.hasPrefix("=") ? rest.dropFirst() : rest)
                }
            }
            if spec.takesValue {
                if let attached {
                    parsed.append(.option(spec.long, value: attached))
                } else if index < arguments.count {
                    parsed.append(.option(spec.long, value: arguments[index]))
                    index += 1
                } else {
                    throw .usage("missing value for '\(spec.synopsis)'", command: command)
                }
            } else {
                if attached != nil {
                    throw .usage("'--\(spec.long)' does not take a value", command: command)
                }
                parsed.append(.option(spec.long, value: nil))
            }
        }
        return parsed
    }

    /// The error for an unrecognised option, suggesting a near spelling if there is one.
    private func unknownOption(_ spelling: String) -> CLIError {
        var message = "unknown option '\(spelling)'"
        let name = spelling.drop { $0 == "-" }.prefix { $0 != "=" }
        if name.count > 2,
           let near = options.min(by: { editDistance($0.long, name) < editDistance($1.long, name) }),
           editDistance(near.long, name) <= 2 {
            message += "; did you mean '--\(near.long)'?"
        }
        return .usage(message, command: command)
    }
}

/// The Levenshtein distance between two short strings, for "did you mean" hints.
private func editDistance(_ a: some StringProtocol, _ b: some StringProtocol) -> Int {
    let a = Array(a), b = Array(b)
    guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1,
                             previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}

/// Converts option values to numbers, rejecting what would poison every pixel.
///
/// Numbers are read with `Double(_:)` (so `1e-3` and `-0.5` work) and must be finite:
/// `nan`, `inf` and overflowing literals such as `1e999` are usage errors (SPEC §0:
/// non-finite parameters are rejected at the API boundary).
struct ValueParser: Sendable {
    /// The command name used in error messages.
    let command: String

    /// A finite number.
    func number(_ text: String, for option: String) throws(CLIError) -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let value = Double(trimmed) else {
            throw .usage("'--\(option)' needs a number, got '\(text)'", command: command)
        }
        guard value.isFinite else {
            throw .usage("'--\(option)' must be a finite number, got '\(text)'", command: command)
        }
        return value
    }

    /// A comma-separated list of finite numbers whose length is in `counts`.
    func numbers(_ text: String, for option: String, counts: ClosedRange<Int>, shape: String) throws(CLIError) -> [Double] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard counts.contains(parts.count) else {
            throw .usage("'--\(option)' needs \(shape), got '\(text)'", command: command)
        }
        var values: [Double] = []
        for part in parts { values.append(try number(String(part), for: option)) }
        return values
    }

    /// An integer in `range`.
    func integer(_ text: String, for option: String, in range: ClosedRange<Int>) throws(CLIError) -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw .usage("'--\(option)' needs a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'",
                         command: command)
        }
        return value
    }

    /// One of `choices`.
    func choice(_ text: String, for option: String, from choices: [String]) throws(CLIError) -> String {
        guard choices.contains(text) else {
            throw .usage("'--\(option)' must be one of \(choices.joined(separator: ", ")); got '\(text)'", command: command)
        }
        return text
    }
}

/// Renders help screens in the shape of swift-argument-parser's: OVERVIEW, USAGE,
/// ARGUMENTS, OPTIONS, with descriptions wrapped in a right-hand column.
enum HelpFormatter {
    /// The width of the left column (option synopses); longer synopses get their own line.
    static let labelWidth = 28
    /// The total line width.
    static let lineWidth = 80

    /// One section: a title line, then each `(label, text)` row.
    static func section(_ title: String, rows: [(String, String)]) -> String {
        var out = "\(title):\n"
        for (label, text) in rows {
            let lines = wrap(text, width: lineWidth - labelWidth)
            let indent = String(repeating: " ", count: labelWidth)
            let head = "  " + label
            if head.count + 2 <= labelWidth {
                out += head.padding(toLength: labelWidth, withPad: " ", startingAt: 0) + (lines.first ?? "") + "\n"
            } else {
                out += head + "\n" + indent + (lines.first ?? "") + "\n"
            }
            for line in lines.dropFirst() { out += indent + line + "\n" }
        }
        return out
    }

    /// The OPTIONS section for `specs`.
    static func options(_ specs: [OptionSpec]) -> String {
        section("OPTIONS", rows: specs.map { ($0.synopsis, $0.help) })
    }

    /// Greedy word wrap.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
