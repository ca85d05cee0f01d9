import CommandLineKit
import Foundation
import Netpbm
import PhotoKernels

/// `photokernels apply`: read Netpbm images (or streams of them), apply one recipe,
/// write the results — the tool's main job.
///
/// Parsing (`parse`) only checks the command line, so usage errors come before any
/// file is touched; `run` then builds the recipe once and streams every input through
/// it (``BandPipeline``), several files at a time for a batch.
struct ApplyCommand {
    static let name = "apply"
    static let commandName = "photokernels apply"

    /// One input and where its result goes.
    struct FileJob: Sendable, Equatable {
        /// The path, or `-` for standard input.
        var input: String
        /// The path, or `-` for standard output.
        var output: String
        /// The format the output's name (or `--format`) asks for.
        var target: OutputTarget
    }

    /// Everything `apply` was asked to do, checked for syntax.
    struct Request: Sendable {
        /// The inputs in command-line order, each with its output.
        var files: [FileJob]
        /// `-o` as given: a file, `-`, or a directory.
        var output: String
        /// Whether `-o` names a directory that receives one file per input.
        var outputIsDirectory = false
        var settings: [RecipeSetting] = []
        var saveRecipe: String?
        var variant: KernelVariant = .simd4
        var threads: Int?
        var jobs: Int?
        var maxval: Int?
        var maxPixels: Int?
        var force = false
        var verbose = false

        /// The inputs, in order.
        var inputs: [String] { files.map(\.input) }
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
            let c = try values.numbers(text, for: "color", counts: 3...3, shape: "three numbers R,G,B",
                                   finiteAsFloat: true)
            return .color(SIMD3(c[0], c[1], c[2]))
        },
        RecipeOption("vignette", value: "intensity[,radius]",
                     help: "Darken towards the corners (CIVignette): radius is a fraction of the "
                         + "half-diagonal (default 1); a negative intensity brightens.") {
            text, values throws(CLIError) in
            let v = try values.numbers(text, for: "vignette", counts: 1...2, shape: "INTENSITY or INTENSITY,RADIUS",
                                   finiteAsFloat: true)
            return .vignette(intensity: v[0], radius: v.count > 1 ? v[1] : nil)
        },
        RecipeOption("vignette-effect", value: "x,y,radius,intensity[,falloff]",
                     help: "Darken outside a circle centred at (x, y) pixels from the top-left "
                         + "(CIVignetteEffect); falloff default 0.5. Not with --vignette.") {
            text, values throws(CLIError) in
            let v = try values.numbers(text, for: "vignette-effect", counts: 4...5,
                                       shape: "X,Y,RADIUS,INTENSITY[,FALLOFF]", finiteAsFloat: true)
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
                   help: "Where to write: a file, '-' for standard output, or an existing directory "
                       + "that receives each input under its own name. A file's "
                       + "extension picks the format: .ppm (P6), .pgm (P5), .pam (P7), .pnm (the input's kind)."),
    ] + recipeOptions.map(\.spec) + [
        OptionSpec("save-recipe", value: "file.json", help: "Also write the recipe actually applied, as JSON."),
        OptionSpec("kernel", value: "variant", help: "The inner loop: simd4 (default) or scalar (the reference)."),
        OptionSpec("threads", value: "n",
                   help: "Threads per image, 1…1024 (default: every core, divided among --jobs). The result never depends on it."),
        OptionSpec("jobs", value: "n", help: "Files processed at once in a batch, 1…1024 (default: every core)."),
        OptionSpec("format", value: "format",
                   help: "pgm, ppm, pam, plain-pgm or plain-ppm; overrides the extension (in a batch, "
                       + "each output takes the format's extension)."),
        OptionSpec("maxval", value: "n",
                   help: "The output's maxval, 1…65535 (default: the input's; PBM input becomes 255)."),
        OptionSpec("max-pixels", value: "n",
                   help: "The largest width × height accepted (default \(NetpbmLimits.default.maxPixels), 2^28); "
                       + "memory does not grow with it."),
        OptionSpec("force", help: "Allow an output to be its input file (it is replaced atomically)."),
        OptionSpec("verbose", short: "v", help: "Print one line per file written (a stream: its frame count)."),
        .help,
    ]

    static var parser: ArgumentParser { ArgumentParser(command: commandName, options: options) }

    static var help: String {
        HelpPage(
            overview: "Apply an edit (orientation, exposure, curves, the sliders, a look, a LUT, a vignette) to Netpbm images.",
            discussion: ["Reads PBM, PGM, PPM or PAM (P1–P7, any maxval, several images in one stream), applies "
                         + "\(KernelFamilies.all.map(\.key).joined(separator: " → ")), and writes each result "
                         + "atomically (a file appears only when complete). Images are streamed in bands, so "
                         + "memory stays constant whatever their size or number of frames.",
                         "Alpha survives only in PAM output; a PGM output stores colour as Rec. 709 luma. In "
                         + ".pnm/.pam output (and on standard output) a grey input stays grey unless the recipe "
                         + "makes colour, decided from the recipe before any pixel is read: sepia, the looks "
                         + "instant, process and transfer, monochrome with a coloured --color, per-channel "
                         + "curves and a LUT that tints greys make colour; exposure, a master curve, vibrance, "
                         + "the sliders, the other looks, a grey monochrome, a LUT that keeps greys grey, "
                         + "orientation and the vignettes keep grey.",
                         "Silent on success (see --verbose). A progress line appears on standard error when it "
                         + "is a terminal. A closed output pipe ends the tool quietly by SIGPIPE, as cat does."],
            usage: ["photokernels apply <input> -o <output> [<options>]",
                    "photokernels apply <input>... -o <directory> [<options>]"],
            arguments: [HelpRow("<input>", "An image to read ('-' for standard input). Several inputs need "
                                + "-o <directory>; a failed file does not stop the others.")],
            options: options,
            sections: [.lines(title: "EXAMPLES", [
                "photokernels apply photo.ppm -o vivid.ppm --preset vivid",
                "photokernels apply photo.ppm -o warm.ppm --effect sepia --vignette 0.8",
                "photokernels apply scan.pgm -o scan.pam --exposure 0.5 --save-recipe edit.json",
                "photokernels apply shots/*.ppm -o edited/ --recipe edit.json --jobs 2",
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
        var request = Request(files: [], output: "")

        for argument in parsed {
            let name: String, text: String
            switch argument {
            case .positional(let positional):
                positionals.append(positional)
                continue
            case .option(let option, let value):
                (name, text) = (option, value ?? "")
            }
            // An empty file name is no file: the system would answer about the current
            // directory, a name the user did not give.
            if text.isEmpty, let spec = options.first(where: { $0.name == name }), spec.valueName?.hasPrefix("file") == true {
                let hint = name == "save-recipe" ? "give a file name, or '-' for standard output" : "give a file name"
                throw .usage("'--\(name)' is empty (\(hint))", command: commandName)
            }
            if let recipeOption = recipeOptions.first(where: { $0.spec.name == name }) {
                request.settings.append(try recipeOption.setting(text, values))
                continue
            }
            switch name {
            case "output": output = text
            case "save-recipe": request.saveRecipe = text
            case "kernel":
                request.variant = KernelVariant(rawValue: try values.choice(text, for: name,
                                                                            from: KernelVariant.allCases.map(\.rawValue)))!
            case "threads": request.threads = try values.integer(text, for: name, in: 1...1024)
            case "jobs": request.jobs = try values.integer(text, for: name, in: 1...1024)
            case "format":
                format = OutputFormat(rawValue: try values.choice(text, for: name, from: OutputFormat.allCases.map(\.rawValue)))
            case "maxval": request.maxval = try values.integer(text, for: name, in: 1...65535)
            case "max-pixels": request.maxPixels = try values.integer(text, for: name, in: 1...)
            case "force": request.force = true
            case "verbose": request.verbose = true
            default: break  // "help" is handled before parsing
            }
        }

        guard !positionals.isEmpty else {
            throw .usage("missing <input> (the image to read, or '-' for standard input)", command: commandName)
        }
        guard let output else {
            throw .usage("missing '-o, --output <output>' (where to write, or '-' for standard output)", command: commandName)
        }
        // An empty name is no file: the system would say "No such file or directory",
        // about a name the user cannot see.
        guard !output.isEmpty else {
            throw .usage("'-o, --output' is empty (give a file or directory name, or '-' for standard output)",
                         command: commandName)
        }
        if let empty = positionals.firstIndex(of: "") {
            throw .usage("input \(empty + 1) is an empty name (give a file name, or '-' for standard input)",
                         command: commandName)
        }
        if positionals.count > 1, positionals.contains("-") {
            throw .usage("'-' (standard input) cannot be combined with other inputs", command: commandName)
        }
        let sawVignette = request.settings.contains { if case .vignette = $0 { true } else { false } }
        let sawVignetteEffect = request.settings.contains { if case .vignetteEffect = $0 { true } else { false } }
        if sawVignette && sawVignetteEffect {
            throw .usage("--vignette and --vignette-effect cannot be combined; choose one", command: commandName)
        }
        request.output = output
        request.outputIsDirectory = !OutputFile.isStandardStream(output) && (output.hasSuffix("/") || isDirectory(output))
        if request.outputIsDirectory {
            if positionals == ["-"] {
                throw .usage("standard input has no name to keep in '\(output)'; give -o a file name or '-'",
                             command: commandName)
            }
            request.files = positionals.map { input in
                let name = outputName(for: input, format: format)
                let target = format.map(OutputTarget.fixed) ?? OutputTarget(path: name, format: nil) ?? .likeInput
                return FileJob(input: input, output: URL(fileURLWithPath: output).appendingPathComponent(name).relativePath,
                               target: target)
            }
            let outputKeys = request.files.map { OutputFile.key($0.output) }
            var seen: [String: String] = [:]
            for (file, key) in zip(request.files, outputKeys) {
                let key = key ?? URL(fileURLWithPath: file.output).standardizedFileURL.path
                if let earlier = seen[key] {
                    throw .usage("'\(earlier)' and '\(file.input)' would both be written to '\(file.output)'",
                                 command: commandName)
                }
                seen[key] = file.input
            }
            // An output that is another job's input would be replaced before or while that
            // job reads it: refused, even with --force (which is about a job's own input).
            var inputKeys: [String: String] = [:], inputFiles: [[UInt64]: String] = [:]
            for file in request.files {
                if let key = OutputFile.key(file.input) { inputKeys[key] = file.input }
                if let identity = OutputFile.identity(file.input) { inputFiles[identity] = file.input }
            }
            for (file, key) in zip(request.files, outputKeys) {
                let other = key.flatMap { inputKeys[$0] } ?? OutputFile.identity(file.output).flatMap { inputFiles[$0] }
                if let other, other != file.input {
                    throw .cantCreate("output '\(file.output)' of '\(file.input)' is the input file '\(other)'; "
                                      + "refusing to overwrite an input of the same run")
                }
            }
        } else {
            if positionals.count > 1 {
                throw .usage("several inputs need '-o <directory>', an existing directory; "
                             + "'\(output)' is not one", command: commandName)
            }
            guard let target = OutputTarget(path: output, format: format) else {
                throw .usage(OutputTarget.unknownFormat(output) + ", or --format", command: commandName)
            }
            request.files = [FileJob(input: positionals[0], output: output, target: target)]
        }
        if let saveRecipe = request.saveRecipe,
           request.files.contains(where: {
               saveRecipe == $0.output
                   || OutputFile.sameFile(OutputFile.path(of: saveRecipe, output: true), OutputFile.path(of: $0.output, output: true))
           }) {
            throw .usage(saveRecipe == "-" ? "the image and --save-recipe cannot both go to standard output"
                                           : "--save-recipe '\(saveRecipe)' would overwrite an output image",
                         command: commandName)
        }
        return request
    }

    /// Whether `path` is an existing directory (following symbolic links).
    static func isDirectory(_ path: String) -> Bool {
        var flag: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &flag) && flag.boolValue
    }

    /// The name an input keeps in an output directory: its own, with the format's
    /// extension under `--format` (`a.ppm` → `a.pam`), and `.pbm` becoming `.pgm`
    /// (an edited bitmap holds grey levels).
    static func outputName(for input: String, format: OutputFormat?) -> String {
        let url = URL(fileURLWithPath: input)
        let name = url.lastPathComponent
        let stem = url.deletingPathExtension().lastPathComponent
        if let format { return stem + "." + format.fileExtension }
        return url.pathExtension.lowercased() == "pbm" ? stem + ".pgm" : name
    }

    /// Runs a parsed request: builds the recipe, then streams every input to its output,
    /// `--jobs` files at a time.
    ///
    /// - Throws: for one input, its error: exit 64 for inconsistent effect options, 65
    ///   for bad image or recipe data, 66 for a missing input, 73 when an output cannot
    ///   be written or would overwrite the input, ``CLIError/brokenPipe`` for a closed
    ///   output pipe. For several inputs, each failure is printed as it happens (one
    ///   `Error:` line naming the file) and the others go on; the run then fails with
    ///   the highest status among them.
    static func run(_ request: Request) throws(CLIError) {
        if let saveRecipe = request.saveRecipe {
            for file in request.files {
                // Never even with --force, which lets an image replace its own input: a
                // recipe over the photo would lose it.
                try OutputFile.checkNotOverwriting(input: file.input, output: saveRecipe, what: "--save-recipe file",
                                                   force: false, remedy: "choose another name for the recipe")
            }
            try OutputFile.checkDestination(saveRecipe)
        }
        if request.outputIsDirectory, let problem = OutputFile.directoryProblem(request.output) {
            throw .cantCreate("cannot write into '\(request.output)': \(problem)")
        }
        let recipe = try RecipeBuilder(command: commandName).build(request.settings)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let jobs = max(1, min(request.jobs ?? cores, request.files.count))
        let maxPixels = request.maxPixels ?? NetpbmLimits.default.maxPixels
        // Each image is checked against the pixel limit; the byte limit then only has to
        // admit four 2-byte samples per pixel, the most the tool reads.
        let (bytes, overflow) = maxPixels.multipliedReportingOverflow(by: 8)
        let settings = StreamSettings(
            plan: EditPlan(recipe),
            rules: OutputRules(target: .likeInput, maxval: request.maxval,
                               recipeKeepsGrey: OutputRules.keepsGrey(recipe.stages)),
            variant: request.variant,
            threads: request.threads ?? max(1, cores / jobs),
            limits: NetpbmLimits(maxPixels: maxPixels, maxBytes: overflow ? Int.max : max(bytes, NetpbmLimits.default.maxBytes)),
            bandSamples: StreamSettings.bandSamplesFromEnvironment)
        let progress = ProgressLine.make(files: request.files.count, name: displayName(request.files[0].input))
        let failures = Batch(request: request, settings: settings, jobs: jobs, progress: progress).run()
        progress?.finish()
        if request.files.count == 1, let failure = failures.first { throw failure }
        if let worst = failures.map(\.status.rawValue).max() {
            throw .reported(status: ExitCode(rawValue: worst))
        }
        if let saveRecipe = request.saveRecipe {
            let json: Data
            do throws(RecipeError) {
                json = try recipe.encodedJSON(relativeTo: URL(fileURLWithPath: saveRecipe).deletingLastPathComponent())
            } catch { throw .recipe(error, file: saveRecipe) }
            try OutputFile.write(json + Data("\n".utf8), to: saveRecipe)
        }
    }

    /// How messages name an input: its path, or `standard input`.
    static func displayName(_ input: String) -> String {
        OutputFile.isStandardStream(input) ? "standard input" : input
    }

    /// What a user can do about an output that is the input.
    static let forceRemedy = "choose another name, or pass --force to replace the input"

    /// Streams one input to its output (the whole job for one file).
    ///
    /// - Throws: as ``run(_:)`` for one input.
    static func process(_ file: FileJob, settings: StreamSettings, force: Bool,
                        progress: ProgressLine?, pool: BandPipeline.BandPool? = nil) throws(CLIError) -> StreamSummary {
        try OutputFile.checkNotOverwriting(input: file.input, output: file.output, what: "output", force: force,
                                           remedy: forceRemedy)
        try OutputFile.checkDestination(file.output)
        let source = displayName(file.input)
        let reader = try openReader(file.input, limits: settings.limits)
        var fileSettings = settings
        fileSettings.rules.target = file.target
        var summary = StreamSummary()
        try OutputFile.withDestination(file.output) { descriptor, name throws(CLIError) in
            let writer = NetpbmStreamWriter(fileDescriptor: descriptor, name: name)
            summary = try BandPipeline.run(reader, to: writer, settings: fileSettings, source: source, progress: progress,
                                           pool: pool)
        }
        return summary
    }

    /// A stream reader on `input` (`-` for standard input).
    ///
    /// - Throws: exit 66 if the file is missing, a directory or unreadable.
    static func openReader(_ input: String, limits: NetpbmLimits) throws(CLIError) -> NetpbmStreamReader {
        if OutputFile.isStandardStream(input) {
            return NetpbmStreamReader(fileDescriptor: STDIN_FILENO, limits: limits, name: "standard input")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory) else {
            throw .noInput("cannot read '\(input)': no such file")
        }
        guard !isDirectory.boolValue else { throw .noInput("cannot read '\(input)': it is a directory") }
        do {
            return try NetpbmStreamReader(contentsOf: URL(fileURLWithPath: input), limits: limits)
        } catch {
            if case .readFailed(_, let reason) = error.underlying {
                throw .noInput("cannot read '\(input)': \(reason.lowercased())")
            }
            throw .netpbm(error, source: input)
        }
    }
}

/// The files of one `apply` run, processed `jobs` at a time: each worker takes the
/// next file until none is left, so one slow or failing file holds up no other.
struct Batch: Sendable {
    let request: ApplyCommand.Request
    let settings: StreamSettings
    let jobs: Int
    let progress: ProgressLine?

    /// Processes every file; returns the failures in input order. With several files
    /// each failure is printed as it happens; `--verbose` lines likewise.
    func run() -> [CLIError] {
        let files = request.files
        let state = BatchState(count: files.count)
        let work: @Sendable () -> Void = {
            let pool = BandPipeline.BandPool()
            while let index = state.next() {
                let file = files[index]
                let clock = ContinuousClock(), start = clock.now
                do throws(CLIError) {
                    let summary = try ApplyCommand.process(file, settings: settings, force: request.force,
                                                           progress: progress, pool: pool)
                    if request.verbose { report(file, summary, elapsed: clock.now - start) }
                } catch {
                    var error = error
                    if files.count > 1 {
                        if error.status == .brokenPipe {
                            error = .ioError("cannot write '\(file.output)': the reading end of the pipe is closed")
                        }
                        say(error.report)
                    }
                    state.fail(index, error)
                }
                progress?.fileDone()
            }
        }
        let workers = (1..<jobs).map { _ in
            let done = DispatchSemaphore(value: 0)
            Thread {
                work()
                done.signal()
            }.start()
            return done
        }
        work()
        for done in workers { done.wait() }
        return state.failures
    }

    private func report(_ file: ApplyCommand.FileJob, _ summary: StreamSummary, elapsed: Duration) {
        let destination = OutputFile.isStandardStream(file.output) ? "standard output" : file.output
        var text = "wrote \(destination) (\(summary.description)) in \(milliseconds(elapsed)) ms\n"
        if summary.droppedAlpha {
            text += "note: \(destination) cannot store alpha (only PAM can); the alpha channel was dropped\n"
        }
        say(text)
    }

    private func say(_ text: String) {
        if let progress { progress.print(text) } else { Console.err(text) }
    }
}

/// The next file to take and the failures so far, shared by a batch's workers.
final class BatchState: @unchecked Sendable {
    private let lock = NSLock()
    private let count: Int
    private var nextIndex = 0
    private var failed: [(Int, CLIError)] = []

    init(count: Int) { self.count = count }

    /// The next file's index, or `nil` when every file is taken.
    func next() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard nextIndex < count else { return nil }
        nextIndex += 1
        return nextIndex - 1
    }

    func fail(_ index: Int, _ error: CLIError) {
        lock.lock()
        failed.append((index, error))
        lock.unlock()
    }

    /// The failures, in input order.
    var failures: [CLIError] {
        lock.lock()
        defer { lock.unlock() }
        return failed.sorted { $0.0 < $1.0 }.map(\.1)
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
            make(try values.number(text, for: name, finiteAsFloat: true))
        }
    }
}
