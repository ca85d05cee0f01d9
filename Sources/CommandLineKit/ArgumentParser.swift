/// One element of a parsed command line, in the order given.
public enum ParsedArgument: Equatable, Sendable {
    /// An option by its long name (whichever spelling was used), with its value if it
    /// takes one.
    case option(String, value: String?)
    /// A positional argument. `-` alone is positional: it means standard input or output.
    case positional(String)
}

/// Splits a command line into options and positional arguments, checking every
/// spelling against one command's `OptionSpec`s.
///
/// Accepted forms:
/// - `--name value` and `--name=value`;
/// - `-o value` and `-ovalue` (also `-o=value`: one `=` after the letter is dropped);
/// - flags `--force` and `-q`; short options cannot be combined (`-qh` is an error);
/// - `--` ends the options: everything after it is positional;
/// - `-` alone is positional.
///
/// An option that takes a value always consumes the next argument, even one that
/// starts with a dash (`--brightness -0.1`). Repeated options are kept, in
/// command-line order; the command decides what repetition means.
public struct ArgumentParser: Sendable {
    /// The command name used in error messages and the `--help` pointer
    /// (`"photokernels apply"`).
    public let command: String
    /// The options the command accepts.
    public let options: [OptionSpec]

    /// A parser for `command` accepting `options`.
    public init(command: String, options: [OptionSpec]) {
        self.command = command
        self.options = options
    }

    /// Parses `arguments` (without the program and subcommand names).
    ///
    /// - Throws: a usage `CommandLineError` (exit 64) for an unknown option (naming
    ///   the closest known one when there is one), a missing value, or a value given
    ///   to a flag.
    /// - Complexity: O(n · m) for n arguments and m options.
    public func parse(_ arguments: [String]) throws(CommandLineError) -> [ParsedArgument] {
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
            let token = try classify(argument)
            let spec = token.spec
            if spec.takesValue {
                if let attached = token.attached {
                    parsed.append(.option(spec.name, value: attached))
                } else if index < arguments.count {
                    parsed.append(.option(spec.name, value: arguments[index]))
                    index += 1
                } else {
                    throw .usage("missing value for '\(spec.synopsis)'", command: command)
                }
            } else {
                if token.attached != nil {
                    throw .usage("'--\(spec.name)' does not take a value", command: command)
                }
                parsed.append(.option(spec.name, value: nil))
            }
        }
        return parsed
    }

    /// Whether the option `name` (a flag such as `"help"` or `"version"`) is given
    /// among the options of `arguments`, before any `--`.
    ///
    /// The scan reads the line as `parse` would but forgives every mistake (unknown
    /// options are skipped), so `--help` wins over the other errors of a line, while
    /// `--filter --help` is still a filter whose value is `--help`.
    ///
    /// - Complexity: O(n · m) for n arguments and m options.
    public func contains(_ name: String, in arguments: [String]) -> Bool {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" { return false }
            guard argument != "-", argument.hasPrefix("-"), let token = try? classify(argument) else { continue }
            if token.spec.name == name && token.attached == nil { return true }
            if token.spec.takesValue && token.attached == nil { index += 1 }
        }
        return false
    }

    /// The known option closest to an unknown spelling (`--saturaton`, `-saturation`,
    /// `--hue=3`), if one is near enough to be a typo; see `closest(to:among:)`.
    public func suggestion(for spelling: String) -> OptionSpec? {
        let name = spelling.drop { $0 == "-" }.prefix { $0 != "=" }
        guard let near = Self.closest(to: name, among: options.map(\.name)) else { return nil }
        return options.first { $0.name == near }
    }

    /// The candidate nearest to `word` by edit distance (Levenshtein: insertions,
    /// deletions and substitutions of one character each), when `word` has at least
    /// three characters and the distance is at most 2; the first such candidate in
    /// `candidates` order on a tie. `nil` when none is that near.
    ///
    /// - Complexity: O(Σ |word| · |candidate|).
    public static func closest(to word: some StringProtocol, among candidates: [String]) -> String? {
        guard word.count > 2 else { return nil }
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(word, candidate)
            if distance <= 2 && distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// An option argument resolved to its spec, with the value attached to it
    /// (`--name=value`, `-ovalue`), if any.
    private struct Token {
        var spec: OptionSpec
        var attached: String?
    }

    /// Resolves `argument`, which starts with `-` and is neither `-` nor `--`.
    private func classify(_ argument: String) throws(CommandLineError) -> Token {
        if argument.hasPrefix("--") {
            let body = argument.dropFirst(2)
            let name: Substring, attached: String?
            if let equals = body.firstIndex(of: "=") {
                name = body[..<equals]
                attached = String(body[body.index(after: equals)...])
            } else {
                (name, attached) = (body, nil)
            }
            guard let spec = options.first(where: { $0.name == name }) else { throw unknownOption("--\(name)") }
            return Token(spec: spec, attached: attached)
        }
        let rest = argument.dropFirst()
        guard let letter = rest.first, let spec = options.first(where: { $0.short == letter }) else {
            throw unknownOption(argument)
        }
        let tail = rest.dropFirst()
        if tail.isEmpty { return Token(spec: spec, attached: nil) }
        // A flag cannot carry a value and letters do not combine: `-help` is probably
        // a long option with one dash, so the error suggests `--help`.
        guard spec.takesValue else { throw unknownOption(argument) }
        return Token(spec: spec, attached: String(tail.hasPrefix("=") ? tail.dropFirst() : tail))
    }

    /// The error for an unrecognised option, suggesting a near spelling if there is one.
    private func unknownOption(_ spelling: String) -> CommandLineError {
        var message = "unknown option '\(spelling)'"
        if let near = suggestion(for: spelling) { message += "; did you mean '--\(near.name)'?" }
        return .usage(message, command: command)
    }
}

/// The Levenshtein distance between two short strings, by Characters.
private func editDistance(_ a: some StringProtocol, _ b: some StringProtocol) -> Int {
    let a = Array(a), b = Array(b)
    guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
    var previous = Array(0...b.count)
    var current = previous
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
