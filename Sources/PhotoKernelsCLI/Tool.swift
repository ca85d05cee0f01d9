import CommandLineKit

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
        (ApplyCommand.name, "Apply an edit (curves, sliders, looks, a LUT, a vignette…) to PBM/PGM/PPM/PAM images."),
        (DemoCommand.name, "Render the built-in demo photo and apply a preset, or write it unedited."),
        (EffectsCommand.name, "List every effect and preset."),
        ("help", "Show help for a subcommand."),
    ]

    /// The options of the top level: the default subcommand's, and `--version`.
    static var topLevel: ArgumentParser {
        ArgumentParser(command: commandName, options: DemoCommand.options + [.version])
    }

    static var help: String {
        HelpPage(
            overview: "Photo adjustments, looks, LUTs and vignettes for Netpbm images.",
            discussion: ["The kernels are those of the PhotoKernels library: SwiftUI-style brightness, contrast, "
                         + "saturation and hue; Core Image-style exposure, vibrance, sepia, monochrome, photo-effect "
                         + "looks and vignettes; tone curves, 3D LUTs from .cube files and EXIF orientation. An edit "
                         + "is compiled once into a fused plan and runs on the samples at their own width (8 or 16 "
                         + "bits), band by band."],
            usage: ["photokernels [<subcommand>] [<options>]"],
            arguments: [HelpRow("<subcommand>", "One of the subcommands below; 'demo' when omitted.")],
            options: [.help, .version],
            sections: [
                .rows(title: "SUBCOMMANDS", subcommands.map {
                    HelpRow($0.name == DemoCommand.name ? $0.name + " (default)" : $0.name, $0.summary)
                }),
                .lines(title: nil, ["See 'photokernels help <subcommand>' for detailed help."]),
            ]
        ).rendered()
    }

    /// Runs the tool on `arguments` (without the program name) and returns the exit status.
    /// Errors are printed here, as `Error: …` plus, for usage errors, where to find help;
    /// a silent one (a closed output pipe, a batch whose failures are already printed)
    /// only sets the status.
    static func run(_ arguments: [String]) -> ExitCode {
        do {
            try dispatch(arguments)
            return .success
        } catch {
            if !error.isSilent { Console.err(error.report) }
            return error.status
        }
    }

    /// Runs one command line. `--help` (or `-h`) among a command's options, before
    /// `--`, shows that command's help and does nothing else, even when the line has
    /// other mistakes.
    static func dispatch(_ arguments: [String]) throws(CLIError) {
        guard let first = arguments.first else {
            return try DemoCommand.run(DemoCommand.parse([]))
        }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "help":
            try showHelp(for: rest)
        case ApplyCommand.name:
            if ApplyCommand.parser.contains("help", in: rest) { return Console.out(ApplyCommand.help) }
            try ApplyCommand.run(ApplyCommand.parse(rest))
        case DemoCommand.name:
            if DemoCommand.parser.contains("help", in: rest) { return Console.out(DemoCommand.help) }
            try DemoCommand.run(DemoCommand.parse(rest))
        case EffectsCommand.name:
            if EffectsCommand.parser.contains("help", in: rest) { return Console.out(EffectsCommand.help) }
            try EffectsCommand.parse(rest)
            EffectsCommand.run()
        default:
            if first.hasPrefix("-") && first != "-" {
                // Options without a subcommand belong to the default subcommand.
                if topLevel.contains("help", in: arguments) { return Console.out(help) }
                if topLevel.contains("version", in: arguments) { return Console.out("photokernels \(version)\n") }
                try DemoCommand.run(DemoCommand.parse(arguments))
            } else {
                let names = subcommands.map(\.name)
                let hint = ArgumentParser.closest(to: first, among: names).map { "; did you mean '\($0)'?" }
                    ?? "; expected apply, demo, effects or help"
                throw .usage("unknown subcommand '\(first)'" + hint, command: commandName)
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
