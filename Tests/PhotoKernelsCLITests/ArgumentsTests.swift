import CommandLineKit
import Foundation
import PhotoKernels
@testable import PhotoKernelsCLI
import Testing

/// The commands' option tables, `apply`'s parse, the recipe rules and the help pages,
/// in process (fast, no files). The tokenizer itself is tested in CommandLineKitTests.
@Suite("arguments")
struct ArgumentsTests {
    /// The usage error `ApplyCommand.parse` throws for `arguments`, or nil.
    func applyError(_ arguments: [String]) -> CLIError? {
        do {
            _ = try ApplyCommand.parse(arguments)
            return nil
        } catch {
            return error
        }
    }

    @Test("every command's option list is free of clashing spellings")
    func optionTables() {
        for options in [ApplyCommand.options, DemoCommand.options, EffectsCommand.options, PhotoKernelsTool.topLevel.options] {
            #expect(OptionSpec.problems(in: options).isEmpty, "\(OptionSpec.problems(in: options))")
        }
    }

    @Test("apply's recipe options are one table, in the recipe group, and nothing else is")
    func recipeOptionTable() {
        let names = ApplyCommand.recipeOptions.map(\.spec.name)
        // The one-number options come from the registry, in recipe order.
        #expect(names == KernelFamilies.all.flatMap(\.options).map(\.name)
                    + ["preset", "effect", "intensity", "color", "vignette", "vignette-effect", "recipe"])
        #expect(names.prefix(11) == ["orientation", "exposure", "curve", "curve-red", "curve-green", "curve-blue",
                                     "vibrance", "saturation", "contrast", "brightness", "hue"])
        #expect(ApplyCommand.options.filter { $0.group == "Recipe options" }.map(\.name) == names)
        #expect(ApplyCommand.options.filter { $0.group == nil }.map(\.name)
                == ["output", "save-recipe", "kernel", "threads", "jobs", "format", "maxval", "max-pixels", "force",
                    "verbose", "help"])
    }

    @Test("each recipe option becomes its setting, in command-line order")
    func recipeSettings() throws {
        let request = try ApplyCommand.parse([
            "in.ppm", "-oout.ppm", "--brightness", "-0.1", "--contrast=1.5", "--saturation", "0", "--hue", "30",
            "--preset", "noir", "--exposure", "0.5", "--effect", "monochrome", "--intensity", "0.3",
            "--color", "1,0.5,0", "--vignette", "0.8", "--recipe", "r.json", "--vignette=1,0.5", "--hue", "-5",
        ])
        #expect(request.inputs == ["in.ppm"] && request.output == "out.ppm")
        #expect(request.files == [ApplyCommand.FileJob(input: "in.ppm", output: "out.ppm", target: .fixed(.ppm))])
        let expected: [RecipeSetting] = [
            .family("brightness", -0.1), .family("contrast", 1.5), .family("saturation", 0), .family("hue", 30),
            .preset(.noir), .family("exposure", 0.5), .effect("monochrome"), .intensity(0.3),
            .color(SIMD3(1, 0.5, 0)), .vignette(intensity: 0.8, radius: nil), .recipeFile("r.json"),
            .vignette(intensity: 1, radius: 0.5), .family("hue", -5),
        ]
        #expect(request.settings == expected)
        let effect = try ApplyCommand.parse(["-", "-o", "-", "--vignette-effect", "1,2,3,0.5"])
        #expect(effect.settings == [.vignetteEffect(x: 1, y: 2, radius: 3, intensity: 0.5, falloff: nil)])
    }

    @Test("apply's own errors: exact wording, usage status, pointing to apply's help")
    func applyErrors() throws {
        let cases: [([String], String)] = [
            (["in.ppm", "-o", "out.ppm", "--saturaton", "2"], "unknown option '--saturaton'; did you mean '--saturation'?"),
            (["in.ppm", "-o", "out.ppm", "--hue", "nan"], "'--hue' must be a finite number of at most 3.4e38 in magnitude, got 'nan'"),
            // Finite in Double but not in Float: the same error, echoing what was typed.
            (["in.ppm", "-o", "out.ppm", "--hue", "1e39"], "'--hue' must be a finite number of at most 3.4e38 in magnitude, got '1e39'"),
            (["in.ppm", "-o", "out.ppm", "--color", "0,-4e38,0"],
             "'--color' needs three numbers R,G,B, got '0,-4e38,0': number 2 '-4e38' must be a finite number of at most 3.4e38 in magnitude"),
            (["in.ppm", "-o", "out.ppm", "--vignette", "1,1e39"],
             "'--vignette' needs INTENSITY or INTENSITY,RADIUS, got '1,1e39': number 2 '1e39' must be a finite number of at most 3.4e38 in magnitude"),
            (["in.ppm", "-o", "out.ppm", "--vignette-effect", "1,1,inf,1"],
             "'--vignette-effect' needs X,Y,RADIUS,INTENSITY[,FALLOFF], got '1,1,inf,1': number 3 'inf' must be a finite number of at most 3.4e38 in magnitude"),
            (["in.ppm", "-o"], "missing value for '-o, --output <output>'"),
            (["in.ppm", "-o", "out.ppm", "--force=1"], "'--force' does not take a value"),
            (["in.ppm", "-o", "out.ppm", "--effect", "polaroid"],
             "'--effect' must be one of \(Effect.names.joined(separator: ", ")); got 'polaroid'"),
            (["in.ppm", "-o", "out.ppm", "--threads", "0"], "'--threads' needs a whole number from 1 to 1024, got '0'"),
            (["in.ppm", "-o", "out.ppm", "--vignette", "1", "--vignette-effect", "1,1,2,1"],
             "--vignette and --vignette-effect cannot be combined; choose one"),
            (["-o", "out.ppm"], "missing <input> (the image to read, or '-' for standard input)"),
            (["in.ppm", "-o", ""], "'-o, --output' is empty (give a file or directory name, or '-' for standard output)"),
            (["in.ppm", "--output=", "--preset", "noir"],
             "'-o, --output' is empty (give a file or directory name, or '-' for standard output)"),
            (["in.ppm", "-o", "out.ppm", "--save-recipe", ""], "'--save-recipe' is empty (give a file name, or '-' for standard output)"),
            (["a.ppm", "", "-o", "out/"], "input 2 is an empty name (give a file name, or '-' for standard input)"),
            (["in.ppm", "-o", "out.ppm", "--recipe", ""], "'--recipe' is empty (give a file name)"),
            (["in.ppm", "-o", "out.ppm", "--lut="], "'--lut' is empty (give a file name)"),
            (["a.ppm", "b.ppm", "-o", "out.ppm"],
             "several inputs need '-o <directory>', an existing directory; 'out.ppm' is not one"),
            (["a.ppm", "-", "-o", "out/"], "'-' (standard input) cannot be combined with other inputs"),
            (["-", "-o", "out/"], "standard input has no name to keep in 'out/'; give -o a file name or '-'"),
            (["a.ppm", "x/a.ppm", "-o", "out/"], "'a.ppm' and 'x/a.ppm' would both be written to 'out/a.ppm'"),
            (["a.ppm", "a.pgm", "-o", "out/", "--format", "pam"],
             "'a.ppm' and 'a.pgm' would both be written to 'out/a.pam'"),
            (["in.ppm", "-o", "out.ppm", "--jobs", "0"], "'--jobs' needs a whole number from 1 to 1024, got '0'"),
            (["in.ppm", "-o", "out.ppm", "--max-pixels", "0"], "'--max-pixels' needs a whole number of at least 1, got '0'"),
        ]
        for (arguments, message) in cases {
            let error = try #require(applyError(arguments), "\(arguments)")
            #expect(error.message == message)
            #expect(error.status == .usage && error.helpCommand == "photokernels apply")
        }
    }

    @Test("a number finite in Double but not in Float is rejected like 1e999; --vibrance comes from the registry")
    func floatRange() throws {
        let builder = RecipeBuilder(command: "photokernels apply")
        #expect(throws: CLIError.self) { try builder.build([.family("contrast", 1e39)]) }
        do {
            _ = try builder.build([.effect("monochrome"), .color(SIMD3(1e39, 0, 0))])
            Issue.record("a colour beyond Float was accepted")
        } catch {
            #expect(error.message.hasPrefix("--color ") && error.helpCommand == "photokernels apply", "\(error.message)")
        }
        do {
            _ = try builder.build([.familyText("lut", "/nonexistent/look.cube")])
            Issue.record("a missing LUT was accepted")
        } catch {
            #expect(error.status == .noInput && error.message.hasPrefix("--lut /nonexistent/look.cube: "), "\(error.message)")
        }
        let recipe = try builder.build([.family("vibrance", 0.4)])
        #expect(recipe[Vibrance.self] == Vibrance(amount: 0.4))
        let request = try ApplyCommand.parse(["in.ppm", "-o", "out.ppm", "--vibrance", "0.25"])
        #expect(request.settings == [.family("vibrance", 0.25)])
    }

    @Test("--curve and --curve-red build one tone curve; a bad point is a usage error naming the option")
    func curveOptions() throws {
        let builder = RecipeBuilder(command: "photokernels apply")
        let recipe = try builder.build([.familyText("curve", "0,0 0.5,0.6 1,1"), .familyText("curve-red", "0,0.1 1,1")])
        let curve = try #require(recipe[ToneCurve.self])
        #expect(curve.master?.points == [SIMD2(0, 0), SIMD2(0.5, 0.6), SIMD2(1, 1)])
        #expect(curve.red?.points == [SIMD2(0, 0.1), SIMD2(1, 1)] && curve.green == nil)
        do {
            _ = try builder.build([.familyText("curve", "0,0 0.5")])
            Issue.record("a one-number point was accepted")
        } catch {
            #expect(error.status == .usage && error.message.hasPrefix("--curve \"0,0 0.5\": "), "\(error.message)")
        }
    }

    @Test("last value wins; the preset yields to explicit sliders")
    func builderOrder() throws {
        let builder = RecipeBuilder(command: "photokernels apply")
        let recipe = try builder.build([.family("hue", 10), .preset(.dream), .family("hue", 20), .family("contrast", 0.9),
                                        .preset(.noir)])
        #expect(recipe.adjustments == Adjustments(saturation: 0, contrast: 0.9, brightness: -0.05, hue: 20))
        let effect = try builder.build([.intensity(0.3), .effect("monochrome"), .color(SIMD3(1, 0, 0))])
        #expect(effect.effect == Effect(name: "monochrome", intensity: 0.3, color: SIMD3(1, 0, 0)))
        #expect(throws: CLIError.self) { try builder.build([.intensity(0.3)]) }
        #expect(throws: CLIError.self) { try builder.build([.effect("noir"), .color(SIMD3(1, 0, 0))]) }
    }

    @Test("every help page fits 80 columns and has the four sections")
    func helpPages() {
        for page in [PhotoKernelsTool.help, ApplyCommand.help, DemoCommand.help, EffectsCommand.help] {
            let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.allSatisfy { $0.count <= 80 }, "\(lines.filter { $0.count > 80 })")
            for section in ["OVERVIEW: ", "\nUSAGE: ", "\nARGUMENTS:\n", "\nOPTIONS:\n"] {
                #expect(page.contains(section), "\(page.prefix(60)) lacks \(section)")
            }
            #expect(page.hasSuffix("\n") && !page.hasSuffix("\n\n"))
        }
        #expect(ApplyCommand.help.contains("\nRECIPE OPTIONS:\n  --orientation <n>       Undo the EXIF orientation n"))
    }

    @Test("a batch keeps each input's name and format; --format changes both; .pbm becomes .pgm")
    func batchNames() throws {
        let request = try ApplyCommand.parse(["a.ppm", "dir/b.PAM", "c.pgm", "d.pbm", "e.pnm", "f.netpbm", "-o", "out/"])
        #expect(request.outputIsDirectory)
        #expect(request.files == [
            .init(input: "a.ppm", output: "out/a.ppm", target: .fixed(.ppm)),
            .init(input: "dir/b.PAM", output: "out/b.PAM", target: .fixed(.pam)),
            .init(input: "c.pgm", output: "out/c.pgm", target: .fixed(.pgm)),
            .init(input: "d.pbm", output: "out/d.pgm", target: .fixed(.pgm)),
            .init(input: "e.pnm", output: "out/e.pnm", target: .likeInput),
            .init(input: "f.netpbm", output: "out/f.netpbm", target: .likeInput),
        ])
        let formatted = try ApplyCommand.parse(["a.ppm", "b.pgm", "-o", "out/", "--format", "plain-ppm", "--jobs", "3"])
        #expect(formatted.files.map(\.output) == ["out/a.ppm", "out/b.ppm"])
        #expect(formatted.files.allSatisfy { $0.target == .fixed(.plainPPM) })
        #expect(formatted.jobs == 3)
        // One input into a directory is a batch of one.
        let one = try ApplyCommand.parse(["x/photo.ppm", "-o", "out/", "-v", "--max-pixels", "1000000000"])
        #expect(one.files == [.init(input: "x/photo.ppm", output: "out/photo.ppm", target: .fixed(.ppm))])
        #expect(one.verbose && one.maxPixels == 1_000_000_000)
    }

    @Test("a stream without an extension (/dev/null, /dev/fd/N, a FIFO) takes the input's kind; a regular file without one, and any other extension, names no format")
    func streamTargets() throws {
        #expect(OutputTarget(path: "/dev/null", format: nil) == .likeInput)
        #expect(OutputTarget(path: "/dev/fd/1", format: nil) == .likeInput)
        #expect(OutputTarget(path: "/dev/null", format: .pam) == .fixed(.pam))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("targets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(OutputTarget(path: fifo, format: nil) == .likeInput)
        let plain = directory.appendingPathComponent("plain")
        try Data("x".utf8).write(to: plain)
        #expect(OutputTarget(path: plain.path, format: nil) == nil)
        #expect(OutputTarget(path: directory.appendingPathComponent("new").path, format: nil) == nil)
        #expect(OutputTarget(path: directory.path, format: nil) == nil)
        // Another extension names no format, stream or not; a descriptor's name is a stream.
        #expect(OutputTarget(path: fifo + ".pbm", format: nil) == nil)
        #expect(mkfifo(fifo + ".jpg", 0o600) == 0)
        #expect(OutputTarget(path: fifo + ".jpg", format: nil) == nil)
        #expect(OutputTarget(path: "/dev/stderr", format: nil) == .likeInput)
        #expect(OutputTarget(path: "/proc/self/fd/1", format: nil) == .likeInput)
    }

    @Test("output formats from names and --format")
    func outputFormats() {
        #expect(OutputTarget(path: "a.PPM", format: nil) == .fixed(.ppm))
        #expect(OutputTarget(path: "dir.d/a.pgm", format: nil) == .fixed(.pgm))
        #expect(OutputTarget(path: "a.pam", format: nil) == .fixed(.pam))
        #expect(OutputTarget(path: "a.pnm", format: nil) == .likeInput)
        #expect(OutputTarget(path: "-", format: nil) == .likeInput)
        #expect(OutputTarget(path: "a.png", format: nil) == nil)
        #expect(OutputTarget(path: "noextension", format: nil) == nil)
        #expect(OutputTarget(path: "a.png", format: .plainPPM) == .fixed(.plainPPM))
        #expect(OutputTarget(path: "m.pbm", format: nil) == nil)
        #expect(OutputTarget.unknownFormat("m.PBM") == "'m.PBM' names a PBM file, which this tool reads but does not "
                + "write; use a .ppm, .pgm, .pam or .pnm name")
        #expect(OutputTarget.unknownFormat("a.png") == "cannot tell the output format from 'a.png'; "
                + "use a .ppm, .pgm, .pam or .pnm name")
    }

    @Test("numbers print as people write them")
    func numberFormat() {
        #expect(formatNumber(0) == "0")
        #expect(formatNumber(-0.05) == "-0.05")
        #expect(formatNumber(1.7) == "1.7")
        #expect(formatNumber(60) == "60")
    }
}
