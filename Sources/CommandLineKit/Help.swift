/// One row of a help section: a label in the left column (`-o, --output <file>`,
/// `<input>`, `apply`) and its description, wrapped in the right-hand column.
public struct HelpRow: Equatable, Sendable {
    /// The left-column text.
    public var label: String
    /// The description; wrapped, never truncated.
    public var text: String

    /// A row labelled `label`.
    public init(_ label: String, _ text: String) {
        self.label = label
        self.text = text
    }
}

/// A help section after the option sections: SUBCOMMANDS, EXIT STATUS, EXAMPLES, or
/// an untitled line such as `See 'tool help <subcommand>' for detailed help.`
public enum HelpSection: Sendable {
    /// `TITLE:` then one two-column row per element.
    case rows(title: String, [HelpRow])
    /// `TITLE:` (when given) then each line as is, indented by two spaces and not
    /// wrapped (commands, whose spaces matter).
    case lines(title: String?, [String])
}

/// A help screen in the shape of swift-argument-parser's: OVERVIEW, discussion,
/// USAGE, ARGUMENTS, the option sections, then the caller's sections, each separated
/// by a blank line and wrapped to `HelpFormatter.lineWidth` columns.
///
/// Options are listed in the order given, grouped by `OptionSpec.group`: each titled
/// group in its own section (`RECIPE OPTIONS:`) in order of first appearance, then
/// the options without a group under `OPTIONS:`.
public struct HelpPage: Sendable {
    /// The one-sentence abstract after `OVERVIEW: `.
    public var overview: String
    /// Paragraphs after the overview, each wrapped.
    public var discussion: [String]
    /// The usage lines, without `USAGE: `; the first follows `USAGE: `, the others
    /// are aligned under it.
    public var usage: [String]
    /// The ARGUMENTS section (omitted when empty).
    public var arguments: [HelpRow]
    /// The options, listed as described above.
    public var options: [OptionSpec]
    /// Sections after the options, in order.
    public var sections: [HelpSection]

    /// A help page; every part but the overview and usage is optional.
    public init(overview: String, discussion: [String] = [], usage: [String], arguments: [HelpRow] = [],
                options: [OptionSpec] = [], sections: [HelpSection] = []) {
        self.overview = overview
        self.discussion = discussion
        self.usage = usage
        self.arguments = arguments
        self.options = options
        self.sections = sections
    }

    /// The page as printed, ending in a newline.
    ///
    /// - Complexity: O(total text length).
    public func rendered() -> String {
        func paragraph(_ text: String) -> String {
            HelpFormatter.wrap(text, width: HelpFormatter.lineWidth).map { $0 + "\n" }.joined()
        }
        var blocks = [paragraph("OVERVIEW: " + overview)] + discussion.map(paragraph)
        var usageText = ""
        for (index, line) in usage.enumerated() {
            // A usage line too long for one line continues two columns further in.
            let lead = index == 0 ? "USAGE: " : "       "
            var wrapped = HelpFormatter.wrap(line, width: HelpFormatter.lineWidth - lead.count)
            if wrapped.count > 1 {
                let words = line.split(separator: " ")
                let rest = words.dropFirst(wrapped[0].split(separator: " ").count).joined(separator: " ")
                wrapped = [wrapped[0]] + HelpFormatter.wrap(rest, width: HelpFormatter.lineWidth - lead.count - 2)
            }
            for (part, text) in wrapped.enumerated() {
                usageText += (part == 0 ? lead : "         ") + text + "\n"
            }
        }
        blocks.append(usageText)
        if !arguments.isEmpty { blocks.append(HelpFormatter.section("ARGUMENTS", rows: arguments)) }
        blocks += HelpFormatter.optionSections(options)
        for section in sections {
            switch section {
            case .rows(let title, let rows):
                blocks.append(HelpFormatter.section(title, rows: rows))
            case .lines(let title, let lines):
                blocks.append((title.map { "\($0):\n" } ?? "") + lines.map { "  " + $0 + "\n" }.joined())
            }
        }
        return blocks.joined(separator: "\n")
    }
}

/// The layout rules of help text: 80 columns, labels in a 26-column left column
/// (swift-argument-parser's), greedy word wrap.
public enum HelpFormatter {
    /// The total line width.
    public static let lineWidth = 80
    /// Where descriptions start; a label too long to leave a space before this
    /// column gets a line of its own.
    public static let labelWidth = 26

    /// One two-column section: `TITLE:` (upper-cased), then each row, the label
    /// indented by two spaces and the text wrapped from column `labelWidth` to
    /// `lineWidth`.
    public static func section(_ title: String, rows: [HelpRow]) -> String {
        var out = "\(title.uppercased()):\n"
        let indent = String(repeating: " ", count: labelWidth)
        for row in rows {
            let lines = wrap(row.text, width: lineWidth - labelWidth)
            let head = "  " + row.label
            if head.count < labelWidth {
                out += head + String(repeating: " ", count: labelWidth - head.count) + (lines.first ?? "") + "\n"
            } else {
                out += head + "\n" + (lines.first.map { indent + $0 + "\n" } ?? "")
            }
            for line in lines.dropFirst() { out += indent + line + "\n" }
        }
        return out
    }

    /// The option sections for `specs`: titled groups first, in order of first
    /// appearance, then `OPTIONS` for the ungrouped ones; empty sections are omitted.
    public static func optionSections(_ specs: [OptionSpec]) -> [String] {
        var titles: [String] = []
        for spec in specs { if let group = spec.group, !titles.contains(group) { titles.append(group) } }
        var out = titles.map { title in
            section(title, rows: specs.filter { $0.group == title }.map { HelpRow($0.synopsis, $0.help) })
        }
        let plain = specs.filter { $0.group == nil }
        if !plain.isEmpty { out.append(section("OPTIONS", rows: plain.map { HelpRow($0.synopsis, $0.help) })) }
        return out
    }

    /// Greedy word wrap of `text` into lines of at most `width` characters. Words are
    /// separated by spaces; a newline in `text` starts a new line; a word longer
    /// than `width` is put on a line of its own, unbroken.
    ///
    /// - Complexity: O(text length).
    public static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ") {
                if line.isEmpty {
                    line = String(word)
                } else if line.count + 1 + word.count <= width {
                    line += " " + word
                } else {
                    lines.append(line)
                    line = String(word)
                }
            }
            lines.append(line)
        }
        // A trailing empty paragraph adds nothing; an empty text is no lines.
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }
}
