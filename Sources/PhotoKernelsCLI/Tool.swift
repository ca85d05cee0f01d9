/// The tool's top level: picks the subcommand, answers `--help` and `--version`, and
/// turns every outcome into an exit status. `main.swift` only calls `run`.
///
/// With no subcommand the demo runs, as in swift-argument-parser's default
/// subcommand: `photokernels` and `photokernels --strip` are `photokernels demo …`.
enum PhotoKernelsTool {
    /// The version `--version` prints.
    static let version = "0.1.0"
    static let commandName = "photokernels"

    /// The subcommands, for help and dispatch.
    static let subcommands: [(name: String, summary: String)] = [
        (ApplyCommand.name, "Apply adjustments, an effect and a vignette to a PBM/PGM/PPM/PAM image."),
        (DemoCommand.name + " (default)", "Render the built-in demo photo and apply a preset."),
        (EffectsCommand.name, "List every effect and preset."),
        ("help", "Show help for a subcommand."),
    ]

    static var help: String {
        """
        OVERVIEW: Photo adjustments, effects and vignettes for Netpbm images.

        The kernels are those of the PhotoKernels library (SwiftUI-style brightness,
        contrast, saturation and hue; Core Image-style exposure, sepia, monochrome,
        photo-effect looks and vignettes), run on straight-alpha RGBA floats.

        USAGE: photokernels [<subcommand>] [<options>]


        """
        + HelpFormatter.section("ARGUMENTS", rows: [("<subcommand>", "One of the subcommands below; 'demo' when omitted.")])
        + "\n"
        + HelpFormatter.section("OPTIONS", rows: [("-h, --help", "Show help information."),
                                                  ("--version", "Show the version.")])
        + "\n"
        + HelpFormatter.section("SUBCOMMANDS", rows: subcommands.map { ($0.name, $0.summary) })
        + "\n  See 'photokernels help <subcommand>' for detailed help.\n"
    }

    /// Runs the tool on `arguments` (without the program name) and returns the exit status.
    /// Errors are printed here, as `Error: …` plus, for usage errors, where to find help.
    static func run(_ arguments: [String]) -> ExitStatus {
        do {
            try dispatch(arguments)
            return .success
        } catch {
            Console.err(error.report)
            return error.status
        }
    }

    /// Whether `--help` or `-h` appears before a `--` (help wins over everything else,
    /// even over other mistakes on the line).
    static func wantsHelp(_ arguments: [String]) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "--help" || argument == "-h" { return true }
        }
        return false
    }

    static func dispatch(_ arguments: [String]) throws(CLIError) {
        guard let first = arguments.first else {
            return try DemoCommand.run(DemoCommand.parse([]))
        }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "--version":
            Console.out("photokernels \(version)\n")
        case "--help", "-h":
            Console.out(help)
        case "help":
            try showHelp(for: rest)
        case ApplyCommand.name:
            if wantsHelp(rest) { return Console.out(ApplyCommand.help) }
            try ApplyCommand.run(ApplyCommand.parse(rest))
        case DemoCommand.name:
            if wantsHelp(rest) { return Console.out(DemoCommand.help) }
            try DemoCommand.run(DemoCommand.parse(rest))
        case EffectsCommand.name:
            if wantsHelp(rest) { return Console.out(EffectsCommand.help) }
            try EffectsCommand.parse(rest)
            EffectsCommand.run()
        default:
            if first.hasPrefix("-") && first != "-" {
                // Options without a subcommand belong to the default subcommand.
                if wantsHelp(arguments) { return Console.out(help) }
                try DemoCommand.run(DemoCommand.parse(arguments))
            } else {
                throw .usage("unknown subcommand '\(first)'; expected apply, demo, effects or help",
                             command: commandName)
            }
        }
    }

    /// `photokernels help [<subcommand>]`.
    static func showHelp(for arguments: [String]) throws(CLIError) {
        switch arguments.first {
        case nil: Console.out(help)
        case ApplyCommand.name?: Console.out(ApplyCommand.help)
        case DemoCommand.name?: Console.out(DemoCommand.help)
        case EffectsCommand.name?: Console.out(EffectsCommand.help)
        case let other?: throw .usage("no help for unknown subcommand '\(other)'", command: commandName)
        }
    }
}
