import CommandLineKit
import Testing

/// The tokenizer: every accepted spelling, and every error with its exact wording.
@Suite("ArgumentParser")
struct ArgumentParserTests {
    static let specs: [OptionSpec] = [
        OptionSpec("output", short: "o", value: "file", help: "Where to write."),
        OptionSpec("saturation", value: "s", help: "Saturation."),
        OptionSpec("hue", value: "degrees", help: "Hue."),
        OptionSpec("filter", value: "regex", help: "A filter."),
        OptionSpec("force", help: "Overwrite."),
        OptionSpec("quiet", short: "q", help: "No progress."),
        .version,
        .help,
    ]
    static let parser = ArgumentParser(command: "tool run", options: specs)

    /// The error `parse` throws for `arguments`, or nil when it parses.
    func parseError(_ arguments: [String]) -> CommandLineError? {
        do {
            _ = try Self.parser.parse(arguments)
            return nil
        } catch {
            return error
        }
    }

    @Test("long options: --name value and --name=value, including empty and dashed values")
    func longOptions() throws {
        #expect(try Self.parser.parse(["--hue", "-30", "--saturation=1.5", "--hue=", "--filter=a=b"]) == [
            .option("hue", value: "-30"), .option("saturation", value: "1.5"), .option("hue", value: ""),
            .option("filter", value: "a=b"),
        ])
    }

    @Test("short options: -o value, -ovalue and -o=value give the same value; flags take none")
    func shortOptions() throws {
        #expect(try Self.parser.parse(["-o", "a.ppm", "-ob.ppm", "-o=c.ppm", "-o", "-", "-q"]) == [
            .option("output", value: "a.ppm"), .option("output", value: "b.ppm"), .option("output", value: "c.ppm"),
            .option("output", value: "-"), .option("quiet", value: nil),
        ])
        // A value-taking short option attached to a dash-led value: the value is everything after the letter.
        #expect(try Self.parser.parse(["-o--x"]) == [.option("output", value: "--x")])
    }

    @Test("positionals stay in place; '-' is positional; '--' ends the options")
    func positionals() throws {
        #expect(try Self.parser.parse(["in.ppm", "--force", "-", "--", "--hue", "-q", "--"]) == [
            .positional("in.ppm"), .option("force", value: nil), .positional("-"),
            .positional("--hue"), .positional("-q"), .positional("--"),
        ])
        #expect(try Self.parser.parse([]) == [])
    }

    @Test("repeated options are all kept, in command-line order, whatever the spelling")
    func repetition() throws {
        #expect(try Self.parser.parse(["--hue", "1", "--saturation", "2", "--hue=3", "-ox", "--output", "y"]) == [
            .option("hue", value: "1"), .option("saturation", value: "2"), .option("hue", value: "3"),
            .option("output", value: "x"), .option("output", value: "y"),
        ])
    }

    @Test("an unknown option names itself and the closest known one", arguments: [
        (["--saturaton", "2"], "unknown option '--saturaton'; did you mean '--saturation'?"),
        (["--satruation=2"], "unknown option '--satruation'; did you mean '--saturation'?"),
        (["-saturation"], "unknown option '-saturation'; did you mean '--saturation'?"),
        (["-help"], "unknown option '-help'; did you mean '--help'?"),
        (["--forc"], "unknown option '--forc'; did you mean '--force'?"),
        (["--bogus"], "unknown option '--bogus'"),
        (["--hu"], "unknown option '--hu'"),
        (["-x"], "unknown option '-x'"),
        (["-qh"], "unknown option '-qh'"),
        (["--=3"], "unknown option '--'"),
    ])
    func unknownOption(arguments: [String], message: String) throws {
        let error = try #require(parseError(arguments))
        #expect(error.message == message)
        #expect(error.status == .usage && error.helpCommand == "tool run")
    }

    @Test("a value-taking option at the end is a missing value; a flag with a value is refused")
    func values() throws {
        #expect(parseError(["--hue"])?.message == "missing value for '--hue <degrees>'")
        #expect(parseError(["in", "-o"])?.message == "missing value for '-o, --output <file>'")
        #expect(parseError(["--force=yes"])?.message == "'--force' does not take a value")
        #expect(parseError(["--quiet="])?.message == "'--quiet' does not take a value")
        #expect(parseError(["--hue"])?.report == "Error: missing value for '--hue <degrees>'\nRun 'tool run --help' for usage.\n")
        // The first mistake is the one reported.
        #expect(parseError(["--bogus", "--hue"])?.message == "unknown option '--bogus'")
    }

    @Test("contains finds a flag among the options, forgiving other mistakes, not after '--' or as a value")
    func containsFlag() {
        let p = Self.parser
        #expect(p.contains("help", in: ["--help"]))
        #expect(p.contains("help", in: ["in.ppm", "--bogus", "-h"]))
        #expect(p.contains("help", in: ["--hue", "nan", "--help"]))
        #expect(p.contains("version", in: ["-q", "--version"]))
        #expect(!p.contains("help", in: ["--", "--help"]))
        #expect(!p.contains("help", in: ["--filter", "--help"]))
        #expect(!p.contains("help", in: ["-o", "-h"]))
        #expect(p.contains("help", in: ["-o-h", "-h"]))        // -o's value is attached, so -h is an option
        #expect(!p.contains("help", in: ["--filter=--help"]))
        #expect(!p.contains("help", in: ["-help"]))             // not -h: an unknown option
        #expect(!p.contains("help", in: ["help"]))
        #expect(!p.contains("version", in: ["--help"]))
    }

    @Test("closest: edit distance at most 2, words of three letters or more, first candidate on a tie")
    func closest() {
        let names = ["apply", "demo", "effects", "help"]
        #expect(ArgumentParser.closest(to: "aply", among: names) == "apply")
        #expect(ArgumentParser.closest(to: "efects", among: names) == "effects")
        #expect(ArgumentParser.closest(to: "dmeo", among: names) == "demo")      // a swap costs 2
        #expect(ArgumentParser.closest(to: "frobnicate", among: names) == nil)
        #expect(ArgumentParser.closest(to: "hp", among: names) == nil)           // too short to guess
        #expect(ArgumentParser.closest(to: "abc", among: ["abd", "abe"]) == "abd")
        #expect(ArgumentParser.closest(to: "abcd", among: ["wxyz", "abxy"]) == "abxy")
        #expect(ArgumentParser.closest(to: "apply", among: []) == nil)
    }

    @Test("problems(in:) reports clashing and invalid spellings; the parser's own list has none")
    func problems() {
        #expect(OptionSpec.problems(in: Self.specs).isEmpty)
        let bad = [
            OptionSpec("out", short: "o", value: "f", help: ""), OptionSpec("out", help: ""),
            OptionSpec("other", short: "o", help: ""), OptionSpec("a=b", help: ""), OptionSpec("", help: ""),
            OptionSpec("-x", help: ""), OptionSpec("two words", help: ""), OptionSpec("dash", short: "-", help: ""),
        ]
        #expect(OptionSpec.problems(in: bad) == [
            "--out is declared more than once",
            "-o is declared more than once (again for --other)",
            "'a=b' is not a valid long option name",
            "'' is not a valid long option name",
            "'-x' is not a valid long option name",
            "'two words' is not a valid long option name",
            "'-' is not a valid short option name (--dash)",
        ])
    }

    @Test("specs built at run time parse like literal ones")
    func generatedSpecs() throws {
        let families = [("brightness", "b"), ("contrast", "c")]
        let specs = families.map { OptionSpec($0.0, value: $0.1, help: "Set \($0.0).", group: "Recipe options") } + [.help]
        let parser = ArgumentParser(command: "tool", options: specs)
        #expect(try parser.parse(["--contrast=2", "--brightness", "-1"]) == [
            .option("contrast", value: "2"), .option("brightness", value: "-1"),
        ])
        #expect(specs[0].synopsis == "--brightness <b>" && specs.last?.synopsis == "-h, --help")
        #expect(specs[1].takesValue && !OptionSpec.help.takesValue)
    }
}
