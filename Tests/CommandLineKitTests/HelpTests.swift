import CommandLineKit
import Testing

/// Help pages: the swift-argument-parser layout, 80 columns, option groups.
@Suite("Help")
struct HelpTests {
    @Test("a small page renders exactly, groups first and plain options last")
    func smallPage() {
        let page = HelpPage(
            overview: "Do a thing.",
            usage: ["tool <input> [<options>]"],
            arguments: [HelpRow("<input>", "The input.")],
            options: [
                OptionSpec("brightness", value: "b", help: "Brightness.", group: "Recipe options"),
                OptionSpec("output", short: "o", value: "file", help: "Where."),
                OptionSpec("contrast", value: "c", help: "Contrast.", group: "Recipe options"),
                .help,
            ],
            sections: [
                .rows(title: "SUBCOMMANDS", [HelpRow("run (default)", "Run.")]),
                .lines(title: nil, ["See 'tool help <subcommand>'."]),
                .lines(title: "EXAMPLES", ["tool  in.ppm"]),
            ])
        #expect(page.rendered() == """
            OVERVIEW: Do a thing.

            USAGE: tool <input> [<options>]

            ARGUMENTS:
              <input>                 The input.

            RECIPE OPTIONS:
              --brightness <b>        Brightness.
              --contrast <c>          Contrast.

            OPTIONS:
              -o, --output <file>     Where.
              -h, --help              Show help information.

            SUBCOMMANDS:
              run (default)           Run.

              See 'tool help <subcommand>'.

            EXAMPLES:
              tool  in.ppm

            """)
    }

    @Test("long texts wrap at 80 columns in the right-hand column; long labels get their own line")
    func wrapping() {
        let long = (1...40).map { "word\($0)" }.joined(separator: " ")
        let page = HelpPage(
            overview: long, discussion: [long],
            usage: ["tool " + long, "tool other"],
            options: [
                OptionSpec("short-label", value: "x", help: long),
                OptionSpec("a-label-too-long-for-its-column", value: "value", help: long),
                OptionSpec("exactly", value: "sixteen-chars", help: "One line."),
            ])
        let text = page.rendered()
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { $0.count <= HelpFormatter.lineWidth }, "\(lines.filter { $0.count > 80 })")
        #expect(lines.filter { $0.count > 72 }.count >= 6, "the lines use the width")
        // Every word of every text survives, in order.
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).filter { $0.hasPrefix("word") }
        #expect(words.count == 5 * 40 && words[0] == "word1" && words[39] == "word40" && words[199] == "word40")
        // Descriptions and their continuations start at column 26.
        let optionLines = lines.drop { $0 != "OPTIONS:" }.dropFirst()
        #expect(optionLines.first?.hasPrefix("  --short-label <x>       word1 ") == true)
        #expect(optionLines.dropFirst().first?.hasPrefix(String(repeating: " ", count: 26) + "word") == true)
        let own = optionLines.firstIndex { $0 == "  --a-label-too-long-for-its-column <value>" }
        #expect(own != nil)
        if let own { #expect(lines[own + 1].hasPrefix(String(repeating: " ", count: 26) + "word1 ")) }
        // "  --exactly <sixteen-chars>" is 27 columns: no room before column 26, so its own line.
        #expect(lines.contains("  --exactly <sixteen-chars>"))
        // Usage continuations are indented under the first usage word, two further in.
        #expect(lines.contains { $0.hasPrefix("USAGE: tool word1 ") })
        #expect(lines.contains { $0.hasPrefix("         word") })
        #expect(lines.contains("       tool other"))
    }

    @Test("wrap: greedy, newlines kept, long words unbroken, nothing for empty text")
    func wrap() {
        #expect(HelpFormatter.wrap("a bb ccc dddd", width: 4) == ["a bb", "ccc", "dddd"])
        #expect(HelpFormatter.wrap("a bb ccc", width: 8) == ["a bb ccc"])
        #expect(HelpFormatter.wrap("abcdefgh xy", width: 4) == ["abcdefgh", "xy"])
        #expect(HelpFormatter.wrap("one\ntwo three", width: 20) == ["one", "two three"])
        #expect(HelpFormatter.wrap("a  b", width: 20) == ["a b"])
        #expect(HelpFormatter.wrap("", width: 20) == [])
        #expect(HelpFormatter.wrap("text\n", width: 20) == ["text"])
    }

    @Test("the standard flags read as swift-argument-parser's")
    func standardFlags() {
        #expect(OptionSpec.help.synopsis == "-h, --help" && OptionSpec.help.help == "Show help information.")
        #expect(OptionSpec.version.synopsis == "--version" && OptionSpec.version.help == "Show the version.")
        #expect(HelpFormatter.section("Options", rows: [HelpRow("--version", "Show the version.")])
                == "OPTIONS:\n  --version               Show the version.\n")
    }
}
