import CommandLineKit
import PhotoKernels

/// `photokernels effects`: the list a user needs to pick `--effect` and `--preset`
/// values, each with a one-line description, in aligned columns.
struct EffectsCommand {
    static let name = "effects"
    static let commandName = "photokernels effects"

    static let options: [OptionSpec] = [.help]

    static var parser: ArgumentParser { ArgumentParser(command: commandName, options: options) }

    static var help: String {
        HelpPage(
            overview: "List every effect and preset with a one-line description.",
            usage: ["photokernels effects"],
            arguments: [HelpRow("(none)", "The command takes no arguments.")],
            options: options
        ).rendered()
    }

    /// Checks that no arguments were given.
    static func parse(_ arguments: [String]) throws(CLIError) {
        for argument in try parser.parse(arguments) {
            if case .positional(let text) = argument {
                throw .usage("unexpected argument '\(text)'", command: commandName)
            }
        }
    }

    /// The effect names with their descriptions, in `Effect.names` order.
    static var effectRows: [(String, String)] {
        Effect.names.map { name in
            switch name {
            case "sepia":
                return (name, "warm brown tone (the W3C sepia matrix); --intensity 0…1")
            case "monochrome":
                return (name, "tint towards one colour (CIColorMonochrome); --color default 0.6,0.45,0.3")
            default:
                let summary = PhotoEffect(rawValue: name)?.summary ?? ""
                return (name, summary)
            }
        }
    }

    /// The presets with their slider values.
    static var presetRows: [(String, String)] {
        Preset.allCases.map { ($0.rawValue, DemoCommand.describe($0.adjustments)) }
    }

    /// The listing: names in one column, descriptions aligned in the next and wrapped
    /// to 80 columns.
    static var listing: String {
        let width = (effectRows + presetRows).map(\.0.count).max()! + 3
        let indent = String(repeating: " ", count: 2 + width)
        func rows(_ rows: [(String, String)]) -> String {
            rows.map { name, text in
                let lines = HelpFormatter.wrap(text, width: HelpFormatter.lineWidth - indent.count)
                return "  " + name.padding(toLength: width, withPad: " ", startingAt: 0) + (lines.first ?? "") + "\n"
                    + lines.dropFirst().map { indent + $0 + "\n" }.joined()
            }.joined()
        }
        return "EFFECTS (photokernels apply --effect NAME [--intensity X] [--color R,G,B]):\n"
            + rows(effectRows)
            + "\nPRESETS (photokernels apply --preset NAME, photokernels demo --preset NAME):\n"
            + rows(presetRows)
    }

    static func run() {
        Console.out(listing)
    }
}
