import CommandLineKit
import Foundation
import Netpbm
import PhotoKernels

/// `photokernels apply`: read a Netpbm image (or a stream of them), apply one recipe,
/// write the result — the tool's main job.
///
/// Parsing (`parse`) only checks the command line, so usage errors come before any
/// file is touched; `run` then reads, builds the recipe, processes and writes.
struct ApplyCommand {
    static let name = "apply"
    static let commandName = "photokernels apply"

    /// Everything `apply` was asked to do, checked for syntax.
    struct Request: Sendable {
        var input: String
        var output: String
        var settings: [RecipeSetting] = []
        var saveRecipe: String?
        var variant: KernelVariant = .simd4
        var threads: Int?
        var target: OutputTarget
        var maxval: Int?
        var force = false
    }

    /// The options that change the recipe, in help order. Each pairs its spec with
    /// the `RecipeSetting` its value becomes; `RecipeBuilder` combines the settings.
    static let recipeOptions: [RecipeOption] = KernelFamilies.all.flatMap(\.options).map { option in
        // Families declare their options in their own files (the registry).
        switch option.value {
        case .number: .number(option.name, value: option.valueName, help: option.help) { .family(option.name, $0) }
        case .text: RecipeOption(option.name, value: option.valueName, help: option.help) { text, _ in
            .familyText(option.name, text)
        }
        }
    } + [
        RecipeOption("preset", value: "name",
                     help: "Set the four sliders from a preset: vivid, noir or dream. An explicit --brightness, "
                         + "--contrast, --saturation or --hue wins over the preset's value.") {
            text, values throws(CLIError) in
            .preset(Preset(rawValue: try values.choice(text, for: "preset", from: Preset.allCases.map(\.rawValue)))!)
        },
        RecipeOption("effect", value: "name",
                     help: "Apply an effect: \(Effect.names.joined(separator: ", ")). See 'photokernels effects'.") {
            text, values throws(CLIError) in
            .effect(try values.choice(text, for: "effect", from: Effect.names))
        },
        .number("intensity", value: "x", help: "The effect's strength (default 1; 0 is no effect).",
                RecipeSetting.intensity),
        RecipeOption("color", value: "r,g,b", help: "Monochrome's tint, three numbers 0…1 (default 0.6,0.45,0.3).") {
            text, values throws(CLIError) in
            let c = try values.numbers(text, for: "color", counts: 3...3, shape: "three numbers R,G,B")
            return .color(SIMD3(c[0], c[1], c[2]))
        },
        RecipeOption("vignette", value: "intensity[,radius]",
                     help: "Darken towards the corners (CIVignette): radius is a fraction of the "
                         + "half-diagonal (default 1); a negative intensity brightens.") {
            text, values throws(CLIError) in
            let v = try values.numbers(text, for: "vignette", counts: 1...2, shape: "INTENSITY or INTENSITY,RADIUS")
            return .vignette(intensity: v[0], radius: v.count > 1 ? v[1] : nil)
        },
        RecipeOption("vignette-effect", value: "x,y,radius,intensity[,falloff]",
                     help: "Darken outside a circle centred at (x, y) pixels from the top-left "
                         + "(CIVignetteEffect); falloff default 0.5. Not with --vignette.") {
            text, values throws(CLIError) in
            let v = try values.numbers(text, for: "vignette-effect", counts: 4...5,
                                       shape: "X,Y,RADIUS,INTENSITY[,FALLOFF]")
            return .vignetteEffect(x: v[0], y: v[1], radius: v[2], intensity: v[3], falloff: v.count > 4 ? v[4] : nil)
        },
        RecipeOption("recipe", value: "file.json",
                     help: "Load a recipe. Options after it override it; options before it are replaced by it.") {
            text, _ throws(CLIError) in
            .recipeFile(text)
        },
    ]

    /// Every option of `apply`: the output, the recipe options, then the rest.
    static let options: [OptionSpec] = [
        OptionSpec("output", short: "o", value: "output",
                   help: "Where to write ('-' for standard output). The extension picks the format: "
                       + ".ppm (P6), .pgm (P5), .pam (P7), .pnm (the input's kind); see --format."),
    ] + recipeOptions.map(\.spec) + [
        OptionSpec("save-recipe", value: "file.json", help: "Also write the recipe actually applied, as JSON."),
        OptionSpec("kernel", value: "variant", help: "The inner loop: simd4 (default) or scalar (the reference)."),
        OptionSpec("threads", value: "n", help: "Threads to use (default: every core). The result never depends on it."),
        OptionSpec("format", value: "format",
                   help: "pgm, ppm, pam, plain-pgm or plain-ppm; overrides the extension."),
        OptionSpec("maxval", value: "n",
                   help: "The output's maxval, 1…65535 (default: the input's; PBM input becomes 255)."),
        OptionSpec("force", help: "Allow the output to be the input file (it is replaced atomically)."),
        .help,
    ]

    static var parser: ArgumentParser { ArgumentParser(command: commandName, options: options) }

    static var help: String {
        HelpPage(
            overview: "Apply adjustments, an effect and a vignette to a Netpbm image.",
            discussion: ["Reads PBM, PGM, PPM or PAM (P1–P7, any maxval, several images in one stream), applies "
                         + "\(KernelFamilies.all.map(\.key).joined(separator: " → ")), and writes the "
                         + "result atomically. Alpha survives only in PAM output; a PGM output stores colour as "
                         + "Rec. 709 luma; a grey input stays grey in .pnm/.pam output unless the recipe adds colour."],
            usage: ["photokernels apply <input> -o <output> [<options>]"],
            arguments: [HelpRow("<input>", "The image to read ('-' for standard input).")],
            options: options,
            sections: [.lines(title: "EXAMPLES", [
                "photokernels apply photo.ppm -o vivid.ppm --preset vivid",
                "photokernels apply photo.ppm -o warm.ppm --effect sepia --vignette 0.8",
                "photokernels apply scan.pgm -o scan.pam --exposure 0.5 --save-recipe edit.json",
                "cat in.pam | photokernels apply - -o - --recipe edit.json > out.pam",
            ])]
        ).rendered()
    }

    /// Parses the arguments after `apply`.
    ///
    /// - Throws: exit 64 for anything wrong with the command line itself.
    static func parse(_ arguments: [String]) throws(CLIError) -> Request {
        let parsed = try parser.parse(arguments)
        let values = ValueParser(command: commandName)
        var positionals: [String] = []
        var output: String?
        var format: OutputFormat?
        var settings: [RecipeSetting] = []
        var saveRecipe: String?
        var variant = KernelVariant.simd4
        var threads: Int?
        var maxval: Int?
        var force = false

        for argument in parsed {
            let name: String, text: String
            switch argument {
            case .positional(let positional):
                positionals.append(positional)
                continue
            case .option(let option, let value):
                (name, text) = (option, value ?? "")
            }
            if let recipeOption = recipeOptions.first(where: { $0.spec.name == name }) {
                settings.append(try recipeOption.setting(text, values))
                continue
            }
            switch name {
            case "output": output = text
            case "save-recipe": saveRecipe = text
            case "kernel":
                variant = KernelVariant(rawValue: try values.choice(text, for: name, from: KernelVariant.allCases.map(\.rawValue)))!
            case "threads": threads = try values.integer(text, for: name, in: 1...1024)
            case "format":
                format = OutputFormat(rawValue: try values.choice(text, for: name, from: OutputFormat.allCases.map(\.rawValue)))
            case "maxval": maxval = try values.integer(text, for: name, in: 1...65535)
            case "force": force = true
            default: break  // "help" is handled before parsing
            }
        }

        guard let input = positionals.first else {
            throw .usage("missing <input> (the image to read, or '-' for standard input)", command: commandName)
        }
        if positionals.count > 1 {
            throw .usage("unexpected argument '\(positionals[1])' (apply takes one input)", command: commandName)
        }
        guard let output, !output.isEmpty else {
            throw .usage("missing '-o, --output <output>' (where to write, or '-' for standard output)", command: commandName)
        }
        let sawVignette = settings.contains { if case .vignette = $0 { true } else { false } }
        let sawVignetteEffect = settings.contains { if case .vignetteEffect = $0 { true } else { false } }
        if sawVignette && sawVignetteEffect {
            throw .usage("--vignette and --vignette-effect cannot be combined; choose one", command: commandName)
        }
        guard let target = OutputTarget(path: output, format: format) else {
            throw .usage("cannot tell the output format from '\(output)'; use a .ppm, .pgm, .pam or .pnm name, "
                         + "or --format", command: commandName)
        }
        if let saveRecipe, saveRecipe == output || OutputFile.sameFile(saveRecipe, output) {
            throw .usage(saveRecipe == "-" ? "the image and --save-recipe cannot both go to standard output"
                                           : "--save-recipe '\(saveRecipe)' would overwrite the output image",
                         command: commandName)
        }
        return Request(input: input, output: output, settings: settings, saveRecipe: saveRecipe, variant: variant,
                       threads: threads, target: target, maxval: maxval, force: force)
    }

    /// Runs a parsed request: read, build the recipe, process every image, write.
    ///
    /// - Throws: exit 64 for inconsistent effect options, 65 for bad image or recipe
    ///   data, 66 for a missing input, 73 when an output cannot be written or would
    ///   overwrite the input.
    static func run(_ request: Request) throws(CLIError) {
        let clock = ContinuousClock()
        let start = clock.now
        try OutputFile.checkNotOverwriting(input: request.input, output: request.output, what: "output",
                                           force: request.force)
        try OutputFile.checkDestination(request.output)
        if let saveRecipe = request.saveRecipe {
            try OutputFile.checkNotOverwriting(input: request.input, output: saveRecipe, what: "--save-recipe file",
                                               force: request.force)
            try OutputFile.checkDestination(saveRecipe)
        }
        let recipe = try RecipeBuilder(command: commandName).build(request.settings)
        var images = try readImages(request.input)

        let processor = ImageProcessor(kernels: recipe.kernels, target: request.target, maxval: request.maxval,
                                       variant: request.variant, threads: request.threads)
        let source = request.input == "-" ? "standard input" : request.input
        var outputs: [NetpbmImage] = []
        var droppedAlpha = false
        // By index, so each image's samples are uniquely referenced and can be reused.
        for index in images.indices {
            let result = try processor.process(&images[index], source: source)
            outputs.append(result.image)
            droppedAlpha = droppedAlpha || result.droppedAlpha
        }
        let destination = request.output == "-" ? "standard output" : request.output
        if droppedAlpha {
            Console.err("note: \(destination) cannot store alpha (only PAM can); the alpha channel was dropped\n")
        }
        // Encoded in pieces straight into the output: the file never exists as one buffer.
        // The writer checks every image before the first piece, so an encoding error
        // leaves nothing behind.
        try OutputFile.write(to: request.output) { piece throws(CLIError) in
            do throws(NetpbmError) {
                try NetpbmWriter.encode(outputs, to: piece)
            } catch {
                throw .software("internal error encoding the output: \(error.description)")
            }
        }
        if let saveRecipe = request.saveRecipe {
            let json: Data
            do throws(RecipeError) { json = try recipe.encodedJSON() } catch { throw .recipe(error, file: saveRecipe) }
            try OutputFile.write(json + Data("\n".utf8), to: saveRecipe)
        }
        let elapsed = clock.now - start
        Console.err("wrote \(destination) (\(describe(outputs))) in \(milliseconds(elapsed)) ms\n")
    }

    /// Reads every image of the input (`-` for standard input).
    ///
    /// - Throws: exit 66 if the file is missing or unreadable, 65 if it is not Netpbm.
    static func readImages(_ input: String) throws(CLIError) -> [NetpbmImage] {
        if input == "-" {
            do {
                return try NetpbmReader.read(from: FileHandle.standardInput)
            } catch {
                throw .netpbm(error, source: "standard input")
            }
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory) else {
            throw .noInput("cannot read '\(input)': no such file")
        }
        guard !isDirectory.boolValue else { throw .noInput("cannot read '\(input)': it is a directory") }
        guard FileManager.default.isReadableFile(atPath: input) else {
            throw .noInput("cannot read '\(input)': permission denied")
        }
        do {
            return try NetpbmReader.readAll(contentsOf: URL(fileURLWithPath: input))
        } catch {
            throw .netpbm(error, source: input)
        }
    }

    /// `1000×800, P6, maxval 255`, or for a stream `2 images: 4×3, P6, maxval 255; 2×2, P5, maxval 255`.
    static func describe(_ images: [NetpbmImage]) -> String {
        let each = images.map { "\($0.width)×\($0.height), \($0.format.magic), maxval \($0.maxval)" }
        return images.count == 1 ? each[0] : "\(images.count) images: " + each.joined(separator: "; ")
    }
}

/// Whole milliseconds of `duration`, for status lines.
func milliseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1000 + attoseconds / 1_000_000_000_000_000
}

/// One recipe option of `apply`: its spec (in the `Recipe options` help group) and
/// the conversion of its value into the `RecipeSetting` it stands for.
///
/// A table of these, rather than a parse switch, so that the recipe options can be
/// generated from a list of kernel families without touching the parser.
struct RecipeOption: Sendable {
    /// The option as the parser and `--help` see it.
    let spec: OptionSpec
    /// The setting for a value; throws a usage error for a malformed one.
    let setting: @Sendable (String, ValueParser) throws(CLIError) -> RecipeSetting

    /// An option `--name <value>` in the recipe group whose value `setting` converts.
    init(_ name: String, value: String, help: String,
         setting: @escaping @Sendable (String, ValueParser) throws(CLIError) -> RecipeSetting) {
        spec = OptionSpec(name, value: value, help: help, group: "Recipe options")
        self.setting = setting
    }

    /// An option whose value is one finite number.
    static func number(_ name: String, value: String, help: String,
                       _ make: @escaping @Sendable (Double) -> RecipeSetting) -> RecipeOption {
        RecipeOption(name, value: value, help: help) { text, values throws(CLIError) in
            make(try values.number(text, for: name))
        }
    }
}
