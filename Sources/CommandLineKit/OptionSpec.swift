/// One option a command accepts: its spellings, whether it takes a value, its help
/// line and the help section it is listed in.
///
/// A command's options are an array of these, assembled by the command at run time
/// (from a literal, or generated from a table); the same array drives parsing and
/// the option sections of `--help`, so the two cannot drift apart. `problems(in:)`
/// checks a generated array for clashing spellings.
public struct OptionSpec: Equatable, Sendable {
    /// The long name without dashes, kebab-case: `"save-recipe"` for `--save-recipe`.
    public var name: String
    /// A one-character short name (`"o"` for `-o`), if any.
    public var short: Character?
    /// The value's placeholder in help (`"file.json"`, shown `<file.json>`); `nil` for
    /// a flag, which takes no value.
    public var valueName: String?
    /// One line of help, wrapped to the help column when printed.
    public var help: String
    /// The title of the help section that lists the option (`"Recipe options"`, shown
    /// as `RECIPE OPTIONS:`); `nil` for the plain `OPTIONS:` section.
    public var group: String?

    /// An option `--name`, with `-short` if given; it takes a value when `value`
    /// (its placeholder) is given, and is a flag otherwise.
    public init(_ name: String, short: Character? = nil, value: String? = nil, help: String, group: String? = nil) {
        self.name = name
        self.short = short
        self.valueName = value
        self.help = help
        self.group = group
    }

    /// Whether the option consumes a value.
    public var takesValue: Bool { valueName != nil }

    /// The option as help and error messages show it: `-o, --output <file>`.
    public var synopsis: String {
        var text = short.map { "-\($0), " } ?? ""
        text += "--\(name)"
        if let valueName { text += " <\(valueName)>" }
        return text
    }

    /// `-h, --help`: show help information.
    public static let help = OptionSpec("help", short: "h", help: "Show help information.")
    /// `--version`: show the version.
    public static let version = OptionSpec("version", help: "Show the version.")

    /// What is wrong with `specs` as one command's option list, one sentence per
    /// problem, empty when nothing is: a long or short name declared twice, a long
    /// name that is empty or holds a character the tokenizer treats specially (`=`,
    /// whitespace, a leading `-`), a short name that is `-`, `=` or whitespace.
    ///
    /// - Complexity: O(n) for n specs.
    public static func problems(in specs: [OptionSpec]) -> [String] {
        var problems: [String] = []
        var longs: Set<String> = [], shorts: Set<Character> = []
        for spec in specs {
            if spec.name.isEmpty || spec.name.hasPrefix("-")
                || spec.name.contains(where: { $0 == "=" || $0.isWhitespace }) {
                problems.append("'\(spec.name)' is not a valid long option name")
            }
            if !longs.insert(spec.name).inserted {
                problems.append("--\(spec.name) is declared more than once")
            }
            if let short = spec.short {
                if short == "-" || short == "=" || short.isWhitespace {
                    problems.append("'\(short)' is not a valid short option name (--\(spec.name))")
                }
                if !shorts.insert(short).inserted {
                    problems.append("-\(short) is declared more than once (again for --\(spec.name))")
                }
            }
        }
        return problems
    }
}
