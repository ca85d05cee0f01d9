import CommandLineKit
import Foundation
import Netpbm
import PhotoKernels

/// `photokernels demo` (also what `photokernels` alone runs): render the built-in
/// "Lake at sunrise" photo and apply a preset to it, with `--original` write it
/// unedited (an input to try `apply` on), or with `--strip` lay the photo out through
/// every effect and preset — a first look at the library that needs no input file.
struct DemoCommand {
    static let name = "demo"
    static let commandName = "photokernels demo"

    /// What the demo was asked to do.
    struct Request: Sendable {
        var output: String?
        var preset: Preset = .vivid
        var strip = false
        var original = false
        var variant: KernelVariant = .simd4
        var threads: Int?
    }

    static let options: [OptionSpec] = [
        OptionSpec("output", short: "o", value: "file",
                   help: "Where to write (default demo-<preset>.ppm, demo-original.ppm with --original or "
                       + "demo-strip.ppm with --strip; '-' for standard output). .ppm, .pgm, .pam or .pnm."),
        OptionSpec("preset", value: "name", help: "The preset to apply: vivid (default), noir or dream."),
        OptionSpec("original", help: "Write the photo as rendered, with no edit: an input to try 'apply' on."),
        OptionSpec("strip", help: "Write a contact sheet instead: the photo, then every effect, B&W and every "
                       + "preset, as 250×200 thumbnails; the grid order is printed."),
        OptionSpec("kernel", value: "variant", help: "The inner loop: simd4 (default) or scalar."),
        OptionSpec("threads", value: "n", help: "Threads to use, 1…1024 (default: every core)."),
        .help,
    ]

    static var parser: ArgumentParser { ArgumentParser(command: commandName, options: options) }

    static var help: String {
        HelpPage(
            overview: "Render the built-in demo photo and apply a preset, or write it unedited (the default command).",
            discussion: ["The photo is the sliders demo's \"Lake at sunrise\", 1000×800: a blue → pink → orange sky "
                         + "with a yellow sun, orange → teal → indigo water, and green hills at 80 % opacity."],
            usage: ["photokernels demo [-o <file>] [--preset <name> | --original | --strip] [<options>]"],
            arguments: [HelpRow("(none)", "The demo renders its own input.")],
            options: options,
            sections: [.lines(title: "EXAMPLES", [
                "photokernels                           (writes demo-vivid.ppm)",
                "photokernels demo --preset dream       (writes demo-dream.ppm)",
                "photokernels demo --original           (writes demo-original.ppm)",
                "photokernels demo --strip -o strip.ppm",
            ])]
        ).rendered()
    }

    /// Parses the arguments after `demo` (or of a bare `photokernels …`).
    static func parse(_ arguments: [String]) throws(CLIError) -> Request {
        let parsed = try parser.parse(arguments)
        let values = ValueParser(command: commandName)
        var request = Request()
        var presetGiven = false
        for argument in parsed {
            switch argument {
            case .positional(let text):
                throw .usage("unexpected argument '\(text)' (the demo takes no input)", command: commandName)
            case .option("output", let value?): request.output = value
            case .option("preset", let value?):
                request.preset = Preset(rawValue: try values.choice(value, for: "preset",
                                                                    from: Preset.allCases.map(\.rawValue)))!
                presetGiven = true
            case .option("strip", _): request.strip = true
            case .option("original", _): request.original = true
            case .option("kernel", let value?):
                request.variant = KernelVariant(rawValue: try values.choice(value, for: "kernel",
                                                                            from: KernelVariant.allCases.map(\.rawValue)))!
            case .option("threads", let value?): request.threads = try values.integer(value, for: "threads", in: 1...1024)
            case .option:
                break
            }
        }
        if presetGiven && request.strip {
            throw .usage("--strip shows every preset; it cannot be combined with --preset", command: commandName)
        }
        if request.original && (presetGiven || request.strip) {
            throw .usage("--original writes the photo unedited; it cannot be combined with "
                         + (request.strip ? "--strip" : "--preset"), command: commandName)
        }
        if let output = request.output, OutputTarget(path: output, format: nil) == nil {
            throw .usage(OutputTarget.unknownFormat(output), command: commandName)
        }
        return request
    }

    /// Renders, applies, writes, and says what it did on standard error (the strip's
    /// grid order goes to standard output).
    static func run(_ request: Request) throws(CLIError) {
        let output = request.output
            ?? (request.strip ? "demo-strip.ppm" : request.original ? "demo-original.ppm" : "demo-\(request.preset.rawValue).ppm")
        try OutputFile.checkDestination(output)
        let photo = try rendering { () throws(RasterError) in try DemoPhoto.render() }
        let rendered = "rendered \"\(DemoPhoto.title)\" (\(photo.width)×\(photo.height))"
        let destination = output == "-" ? "standard output" : output
        if request.strip {
            let (sheet, image) = try rendering { () throws(RasterError) in
                let sheet = try contactSheet(of: photo, variant: request.variant, threads: request.threads)
                return (sheet, try sheet.render())
            }
            try write(image, to: output)
            Console.out(sheet.gridOrder.map { $0 + "\n" }.joined())
            Console.err("\(rendered), made a contact sheet of \(sheet.cells.count) thumbnails "
                        + "(\(sheet.columns)×\(sheet.rows) grid), wrote \(destination) (\(image.width)×\(image.height))\n")
        } else if request.original {
            try write(photo, to: output)
            Console.err("\(rendered), wrote \(destination)\n")
        } else {
            let recipe = Recipe(adjustments: request.preset.adjustments)
            let edited = photo.applying(recipe.kernels, variant: request.variant, threads: request.threads)
            try write(edited, to: output)
            Console.err("\(rendered), applied preset \(request.preset.rawValue) "
                        + "(\(describe(request.preset.adjustments))), wrote \(destination)\n")
        }
    }

    /// The demo's images have sizes the program fixes, so a `RasterError` while making
    /// them is a defect of the tool: exit 70 with its description.
    static func rendering<T>(_ body: () throws(RasterError) -> T) throws(CLIError) -> T {
        do { return try body() } catch { throw .software("internal error rendering the demo: \(error)") }
    }

    /// The strip: the original, every effect at its default intensity, B&W, every preset.
    ///
    /// - Throws: `RasterError` only if the photo is smaller than 4 × 4 pixels.
    static func contactSheet(of photo: FloatImage, variant: KernelVariant, threads: Int?) throws(RasterError) -> ContactSheet {
        let thumbnail = try ContactSheet.thumbnail(of: photo, width: photo.width / 4, height: photo.height / 4)
        var cells = [ContactSheet.Cell(label: "original", image: thumbnail)]
        for name in Effect.names {
            let kernels = Recipe(effect: Effect(name: name)).kernels
            cells.append(.init(label: name, image: thumbnail.applying(kernels, variant: variant, threads: threads)))
        }
        cells.append(.init(label: "B&W",
                           image: thumbnail.applying([Monochrome.blackAndWhite], variant: variant, threads: threads)))
        for preset in Preset.allCases {
            let kernels = Recipe(adjustments: preset.adjustments).kernels
            cells.append(.init(label: "preset \(preset.rawValue)",
                               image: thumbnail.applying(kernels, variant: variant, threads: threads)))
        }
        return ContactSheet(cells: cells, columns: 5)
    }

    /// Encodes an opaque colour image for `path`'s format and writes it atomically.
    static func write(_ image: FloatImage, to path: String) throws(CLIError) {
        let format: OutputFormat
        switch OutputTarget(path: path, format: nil) {
        case .fixed(let fixed)?: format = fixed
        default: format = .ppm  // .pnm and '-': the demo is a colour photo
        }
        let layout: SampleLayout = format.colorModel == .gray ? .gray : .rgb
        let netpbm: NetpbmImage
        let bytes: [UInt8]
        do {
            netpbm = try NetpbmImage(width: image.width, height: image.height, depth: layout.channelCount, maxval: 255,
                                     tupleType: layout.tupleType, samples: try image.samples(layout: layout, maxval: 255),
                                     format: format.netpbmFormat)
            bytes = try NetpbmWriter.encode(netpbm)
        } catch {
            throw .software("internal error encoding the demo: \(error)")
        }
        try OutputFile.write(bytes, to: path)
    }

    /// `saturation 1.7, contrast 1.2, brightness 0.05, hue 0°`.
    static func describe(_ a: Adjustments) -> String {
        "saturation \(formatNumber(a.saturation)), contrast \(formatNumber(a.contrast)), "
            + "brightness \(formatNumber(a.brightness)), hue \(formatNumber(a.hue))°"
    }
}

/// A number as a person writes it: `1`, `0.05`, `-0.05`, `1.7` (no trailing `.0`).
func formatNumber(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return "\(value)"
}
