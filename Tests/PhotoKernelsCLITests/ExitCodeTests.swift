import Foundation
import Netpbm
import PhotoKernels
import Testing

/// Every failure class ends with its sysexits status and one `Error:` line, and leaves
/// no file behind.
@Suite("Exit statuses")
struct ExitCodeTests {
    /// A sandbox holding a valid 8-bit P6 `in.ppm`.
    static func sandboxWithInput() throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("in.ppm", Fixtures.bytes(Fixtures.rgb8))
        return sandbox
    }

    @Test("64: bad usage", arguments: [
        ["apply", "in.ppm", "-o", "out.ppm", "--bogus"],
        ["apply", "in.ppm", "-o", "out.ppm", "--saturaton", "2"],
        ["apply", "in.ppm"],
        ["apply", "-o", "out.ppm"],
        ["apply", "in.ppm", "-o", "out.ppm", "--hue", "nan"],
        ["apply", "in.ppm", "-o", "out.ppm", "--contrast", "inf"],
        ["apply", "in.ppm", "-o", "out.ppm", "--brightness", "1e999"],
        ["apply", "in.ppm", "-o", "out.ppm", "--saturation", "lots"],
        ["apply", "in.ppm", "-o", "out.ppm", "--effect", "polaroid"],
        ["apply", "in.ppm", "-o", "out.ppm", "--preset", "loud"],
        ["apply", "in.ppm", "-o", "out.ppm", "--hue"],
        ["apply", "in.ppm", "-o", "out.ppm", "--force=yes"],
        ["apply", "in.ppm", "-o", "out.ppm", "--intensity", "0.5"],
        ["apply", "in.ppm", "-o", "out.ppm", "--effect", "sepia", "--color", "1,0,0"],
        ["apply", "in.ppm", "-o", "out.ppm", "--color", "1,0"],
        ["apply", "in.ppm", "-o", "out.ppm", "--vignette", "1", "--vignette-effect", "1,1,2,1"],
        ["apply", "in.ppm", "-o", "out.ppm", "--vignette-effect", "1,1,2"],
        ["apply", "in.ppm", "-o", "out.ppm", "--maxval", "0"],
        ["apply", "in.ppm", "-o", "out.ppm", "--maxval", "65536"],
        ["apply", "in.ppm", "-o", "out.ppm", "--threads", "0"],
        ["apply", "in.ppm", "-o", "out.ppm", "--kernel", "avx"],
        ["apply", "in.ppm", "-o", "out.png"],
        ["apply", "in.ppm", "extra.ppm", "-o", "out.ppm"],
        ["frobnicate"],
        ["demo", "--preset", "none"],
        ["demo", "--strip", "--preset", "noir"],
        ["demo", "--original", "--preset", "noir"],
        ["demo", "--original", "--strip"],
        ["effects", "extra"],
    ])
    func usage(arguments: [String]) throws {
        let sandbox = try Self.sandboxWithInput()
        let result = try Tool.run(arguments, in: sandbox)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: "))
        #expect(result.stderr.contains("--help' for usage."))
        #expect(result.stdout.isEmpty)
        #expect(try sandbox.contents() == ["in.ppm"])
    }

    @Test("usage errors point to the right help")
    func usageNamesCommand() throws {
        let sandbox = try Self.sandboxWithInput()
        let apply = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--bogus"], in: sandbox)
        #expect(apply.stderr == "Error: unknown option '--bogus'\nRun 'photokernels apply --help' for usage.\n")
        let near = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--saturaton", "2"], in: sandbox)
        #expect(near.stderr.contains("did you mean '--saturation'?"))
        let top = try Tool.run(["frobnicate"], in: sandbox)
        #expect(top.stderr == "Error: unknown subcommand 'frobnicate'; expected apply, demo, effects or help\n"
                + "Run 'photokernels --help' for usage.\n")
        let typo = try Tool.run(["aply", "in.ppm"], in: sandbox)
        #expect(typo.status == 64)
        #expect(typo.stderr == "Error: unknown subcommand 'aply'; did you mean 'apply'?\nRun 'photokernels --help' for usage.\n")
        let demo = try Tool.run(["--strp"], in: sandbox)
        #expect(demo.stderr == "Error: unknown option '--strp'; did you mean '--strip'?\n"
                + "Run 'photokernels demo --help' for usage.\n")
    }

    @Test("65: corrupt Netpbm input", arguments: [
        Array("P6\n4 4\n255\n".utf8) + [1, 2, 3],      // truncated raster
        Array("P9\n1 1\n255\n\0".utf8),                  // unknown magic
        Array("P5\n2 1\n100\n".utf8) + [50, 200],        // sample above maxval
        Array("P6\n-4 4\n255\n".utf8),                   // signed size
        [],                                              // empty file
    ])
    func corruptImage(bytes: [UInt8]) throws {
        let sandbox = try Sandbox()
        try sandbox.write("bad.ppm", bytes)
        let result = try Tool.run(["apply", "bad.ppm", "-o", "out.ppm"], in: sandbox)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: bad.ppm: "))
        #expect(!result.stderr.contains("--help"))
        #expect(try sandbox.contents() == ["bad.ppm"])
    }

    @Test("control characters in a file name reach standard error escaped, not as terminal commands")
    func escapedFileName() throws {
        let sandbox = try Sandbox()
        let result = try Tool.run(["apply", "no\u{1B}[2Jsuch\r.ppm", "-o", "out.ppm"], in: sandbox)
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr.contains("no\\u{1b}[2Jsuch\\u{d}.ppm"), "\(result.stderr.debugDescription)")
        #expect(!result.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x0D })
    }

    @Test("64: an argument that is not UTF-8 is refused, not read as another name (an output under a changed name)")
    func nonUTF8Argument() throws {
        let sandbox = try Sandbox()
        let tool = try #require(Tool.url)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // The shell passes the raw byte 0xFF, which a Swift string cannot hold.
        process.arguments = ["-c", #"exec "$0" apply - -o "$(printf 'o\377ut.ppm')" < /dev/null 2> err.txt"#, tool.path]
        process.currentDirectoryURL = sandbox.work
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 64)
        let message = try String(contentsOf: sandbox.work.appendingPathComponent("err.txt"), encoding: .utf8)
        #expect(message.hasPrefix(#"Error: argument 4 ("o\xFFut.ppm") is not valid UTF-8"#), "\(message)")
        #expect(try sandbox.contents() == ["err.txt"])
    }

    @Test("65: invalid recipe", arguments: [
        #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.0", "saturation": "high"}"#,
        #"{"formatIdentifier": "com.example.other", "formatVersion": "1.0"}"#,
        #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "2.0"}"#,
        #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.0", "contrast": 1e999}"#,
        #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.0", "effect": {"name": "polaroid"}}"#,
        #"{"formatIdentifier": "org.photokernels.recipe""#,
        #"{"formatVersion": "1.0"}"#,
    ])
    func invalidRecipe(json: String) throws {
        let sandbox = try Self.sandboxWithInput()
        try sandbox.write("recipe.json", Array(json.utf8))
        let result = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--recipe", "recipe.json"], in: sandbox)
        #expect(result.status == 65, "\(json): \(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: recipe.json: recipe"))
        #expect(try sandbox.contents() == ["in.ppm", "recipe.json"])
    }

    @Test("65, not 71: a file whose header asks for a raster it lacks is refused before the edit's scratch rows are allocated, under an address-space limit too")
    func truncatedHugeHeaderBeforeAllocation() throws {
        let sandbox = try Sandbox()
        // 2³¹ − 1 pixels in one row: the scratch rows alone would take about 17 GB.
        try sandbox.write("wide.pgm", Array("P5\n2147483647 1\n255\nabc".utf8))
        let tool: URL = try #require(Tool.url)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -v 1000000 && exec \"$0\" \"$@\"", tool.path,
                             "apply", "wide.pgm", "-o", "out.pgm", "--max-pixels", "3000000000", "--preset", "vivid"]
        process.currentDirectoryURL = sandbox.work
        let error = Pipe()
        process.standardError = error
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 65, "\(message)")
        #expect(message.contains("the raster needs 2147483647 bytes but the input ends after 3 of them"), "\(message)")
        #expect(try sandbox.contents() == ["wide.pgm"])
    }

    @Test("66: missing input or recipe")
    func missingInput() throws {
        let sandbox = try Self.sandboxWithInput()
        let image = try Tool.run(["apply", "nothing.ppm", "-o", "out.ppm"], in: sandbox)
        #expect(image.status == 66)
        #expect(image.stderr == "Error: cannot read 'nothing.ppm': no such file\n")
        let recipe = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--recipe", "nothing.json"], in: sandbox)
        #expect(recipe.status == 66)
        #expect(recipe.stderr == "Error: cannot read recipe 'nothing.json': no such file\n")
        let recipeDirectory = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--recipe", "."], in: sandbox)
        #expect(recipeDirectory.status == 66)
        #expect(recipeDirectory.stderr == "Error: cannot read recipe '.': it is a directory\n")
        let directory = try Tool.run(["apply", ".", "-o", "out.ppm"], in: sandbox)
        #expect(directory.status == 66)
        #expect(try sandbox.contents() == ["in.ppm"])
        // A LUT the recipe names, missing or a directory: missing input, as with --lut.
        let digest = String(repeating: "0", count: 64)
        for path in ["none.cube", "."] {
            let json = #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.1", "lut": {"path": "\#(path)", "sha256": "\#(digest)"}}"#
            try sandbox.write("lut.json", Array(json.utf8))
            let lut = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--recipe", "lut.json"], in: sandbox)
            #expect(lut.status == 66 && lut.stderr.contains("lut.path") && lut.stderr.contains("cannot be read"), "\(path): \(lut.stderr)")
            let option = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--lut", path], in: sandbox)
            #expect(option.status == 66, "--lut \(path): \(option.stderr)")
            #expect(option.stderr.contains(path == "." ? "it is a directory" : "No such file or directory"), "\(option.stderr)")
        }
        #expect(try sandbox.contents() == ["in.ppm", "lut.json"])
    }

    @Test("73: output directory does not exist, or is a file")
    func missingDirectory() throws {
        let sandbox = try Self.sandboxWithInput()
        let result = try Tool.run(["apply", "in.ppm", "-o", "no/such/dir/out.ppm"], in: sandbox)
        #expect(result.status == 73)
        #expect(result.stderr.hasPrefix("Error: cannot create 'no/such/dir/out.ppm'"))
        #expect(result.stderr.contains("does not exist"), "\(result.stderr)")
        let demo = try Tool.run(["demo", "-o", "missing/demo.ppm"], in: sandbox)
        #expect(demo.status == 73)
        // A path through a file: the file is named as what it is.
        let throughFile = try Tool.run(["apply", "in.ppm", "-o", "in.ppm/out.ppm"], in: sandbox)
        #expect(throughFile.status == 73)
        #expect(throughFile.stderr == "Error: cannot create 'in.ppm/out.ppm': 'in.ppm' is a file, not a directory\n")
        let deeper = try Tool.run(["apply", "in.ppm", "-o", "in.ppm/sub/out.ppm"], in: sandbox)
        #expect(deeper.status == 73)
        #expect(deeper.stderr.contains("'in.ppm/sub' cannot be reached: part of it is a file, not a directory"), "\(deeper.stderr)")
        let intoFile = try Tool.run(["apply", "in.ppm", "-o", "in.ppm//"], in: sandbox)
        #expect(intoFile.status == 73)
        #expect(intoFile.stderr == "Error: cannot write into 'in.ppm//': 'in.ppm' is a file, not a directory\n")
        let intoMissing = try Tool.run(["apply", "in.ppm", "-o", "out/"], in: sandbox)
        #expect(intoMissing.status == 73)
        #expect(intoMissing.stderr == "Error: cannot write into 'out/': 'out' does not exist\n")
        let demoMissing = try Tool.run(["demo", "-o", "missing/demo.ppm"], in: sandbox)
        #expect(demoMissing.stderr == "Error: cannot create 'missing/demo.ppm': 'missing' does not exist\n")
        #expect(try sandbox.contents() == ["in.ppm"])
    }

    @Test("73: output is the input, by any name; the input is untouched", arguments: [
        "in.ppm", "./in.ppm", "link.ppm", "hard.ppm", "../work/in.ppm",
    ])
    func sameFile(output: String) throws {
        let sandbox = try Self.sandboxWithInput()
        try FileManager.default.createSymbolicLink(atPath: sandbox.url("link.ppm").path, withDestinationPath: "in.ppm")
        try FileManager.default.linkItem(at: sandbox.url("in.ppm"), to: sandbox.url("hard.ppm"))
        let before = try sandbox.read("in.ppm")
        let result = try Tool.run(["apply", "in.ppm", "-o", output, "--preset", "noir"], in: sandbox)
        #expect(result.status == 73, "\(output): \(result.stderr)")
        #expect(result.stderr.contains("refusing to overwrite"))
        #expect(try sandbox.read("in.ppm") == before)
        #expect(try sandbox.contents() == ["hard.ppm", "in.ppm", "link.ppm"])
    }

    @Test("--force replaces the input atomically")
    func forceOverwrite() throws {
        let sandbox = try Self.sandboxWithInput()
        let result = try Tool.run(["apply", "in.ppm", "-o", "in.ppm", "--preset", "noir", "--force"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let written = try #require(try sandbox.images("in.ppm").first)
        let expected = libraryPath(Fixtures.rgb8, layout: .rgb, recipe: Recipe(adjustments: .noir), outputLayout: .rgb)
        #expect(written.samples == expected)
        #expect(try sandbox.contents() == ["in.ppm"])
    }

    @Test("--save-recipe may not overwrite the input (73, even with --force) or the output (64)")
    func saveRecipeOverInput() throws {
        let sandbox = try Self.sandboxWithInput()
        let before = try sandbox.read("in.ppm")
        let overInput = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--save-recipe", "in.ppm"], in: sandbox)
        #expect(overInput.status == 73)
        let overOutput = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--save-recipe", "out.ppm"], in: sandbox)
        #expect(overOutput.status == 64)
        // --force lets an image replace its input, never a recipe.
        let forced = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--save-recipe", "in.ppm", "--force"], in: sandbox)
        #expect(forced.status == 73, "\(forced.stderr)")
        #expect(forced.stderr.contains("choose another name for the recipe"), "\(forced.stderr)")
        #expect(try sandbox.read("in.ppm") == before)
        #expect(try sandbox.contents() == ["in.ppm"])
    }

    @Test("--save-recipe into a directory the tool may not write to fails (73) before any image is written; /dev/null is written",
          .enabled(if: geteuid() != 0, "root may write to any directory of a writable file system"))
    func saveRecipeIntoUnwritableDirectory() throws {
        let sandbox = try Self.sandboxWithInput()
        let locked = sandbox.url("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
        #expect(chmod(locked.path, 0o555) == 0)
        defer { chmod(locked.path, 0o755) }
        let result = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--save-recipe", "locked/r.json"], in: sandbox)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.contains("'locked' is not writable"), "\(result.stderr)")
        #expect(try sandbox.contents() == ["in.ppm", "locked"])
        // A device is written in place, whatever its directory allows.
        let toNull = try Tool.run(["apply", "in.ppm", "-o", "/dev/null", "--format", "ppm"], in: sandbox)
        #expect(toNull.status == 0, "\(toNull.stderr)")
        // A stream needs no --format: like '-', it takes the input's kind.
        let toNullBare = try Tool.run(["apply", "in.ppm", "-o", "/dev/null"], in: sandbox)
        #expect(toNullBare.status == 0 && toNullBare.stderr.isEmpty, "\(toNullBare.stderr)")
    }

    @Test("an output that is a stream (/dev/stdout, /dev/fd/1) takes the input's kind without --format; a regular file without an extension does not")
    func streamOutputsTakeTheInputsKind() throws {
        let sandbox = try Self.sandboxWithInput()
        let expected = libraryPath(Fixtures.rgb8, layout: .rgb, recipe: Recipe(adjustments: .noir), outputLayout: .rgb)
        for name in ["/dev/stdout", "/dev/fd/1"] {
            let result = try Tool.run(["apply", "in.ppm", "-o", name, "--preset", "noir"], in: sandbox)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            let image = try NetpbmReader.read(Array(result.stdout))
            #expect(image.format == .rawPPM && image.samples == expected, "\(name)")
        }
        // A regular file without an extension names no format.
        _ = try sandbox.write("plain", Array("x".utf8))
        let refused = try Tool.run(["apply", "in.ppm", "-o", "plain"], in: sandbox)
        #expect(refused.status == 64 && refused.stderr.contains("cannot tell the output format from 'plain'"), "\(refused.stderr)")
    }

    @Test("an output that is a symbolic link replaces the file it names and keeps the link")
    func symlinkOutput() throws {
        let sandbox = try Self.sandboxWithInput()
        _ = try sandbox.write("target.ppm", Array("old".utf8))
        chmod(sandbox.url("target.ppm").path, 0o640)
        try FileManager.default.createSymbolicLink(atPath: sandbox.url("link.ppm").path, withDestinationPath: "target.ppm")
        let result = try Tool.run(["apply", "in.ppm", "-o", "link.ppm", "--preset", "noir"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: sandbox.url("link.ppm").path)
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink, "the link must stay a link")
        let target = try FileManager.default.attributesOfItem(atPath: sandbox.url("target.ppm").path)
        #expect((target[.posixPermissions] as? NSNumber)?.intValue == 0o640, "the target keeps its permissions")
        let expected = libraryPath(Fixtures.rgb8, layout: .rgb, recipe: Recipe(adjustments: .noir), outputLayout: .rgb)
        #expect(try sandbox.images("target.ppm").first?.samples == expected)
    }

    @Test("an output that is a symbolic link to nothing creates the file it names and keeps the link; that file is then checked like any output")
    func danglingSymlinkOutput() throws {
        let sandbox = try Self.sandboxWithInput()
        try FileManager.default.createSymbolicLink(atPath: sandbox.url("link.ppm").path, withDestinationPath: "target.ppm")
        let result = try Tool.run(["apply", "in.ppm", "-o", "link.ppm", "--preset", "noir"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: sandbox.url("link.ppm").path)
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink, "the link must stay a link")
        let expected = libraryPath(Fixtures.rgb8, layout: .rgb, recipe: Recipe(adjustments: .noir), outputLayout: .rgb)
        #expect(try sandbox.images("target.ppm").first?.samples == expected)

        // A recipe saved where the link points would overwrite the image: refused, nothing written.
        try FileManager.default.removeItem(at: sandbox.url("target.ppm"))
        let clash = try Tool.run(["apply", "in.ppm", "-o", "link.ppm", "--preset", "noir", "--save-recipe", "target.ppm"],
                                 in: sandbox)
        #expect(clash.status == 64, "\(clash.stderr)")
        #expect(try sandbox.contents() == ["in.ppm", "link.ppm"])
    }

    @Test("-o /dev/stdout writes through standard output in place: a file it was redirected to keeps its earlier bytes")
    func devStdoutRedirectedToFile() throws {
        let sandbox = try Self.sandboxWithInput()
        let earlier = Data("earlier line\n".utf8)
        let result = try Tool.run(["apply", "in.ppm", "-o", "/dev/stdout", "--format", "ppm", "--preset", "noir"], in: sandbox,
                                  stdoutPrefix: earlier)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.prefix(earlier.count) == earlier, "the redirected file lost its earlier bytes")
        let image = try NetpbmReader.read(Array(result.stdout.dropFirst(earlier.count)))
        let expected = libraryPath(Fixtures.rgb8, layout: .rgb, recipe: Recipe(adjustments: .noir), outputLayout: .rgb)
        #expect(image.samples == expected)
    }

    @Test("other names of standard output are written through it too: a link to /dev/stdout, //dev/stdout; a /dev/fd/N that is not open is 73 before any work")
    func otherNamesOfStandardOutput() throws {
        let sandbox = try Self.sandboxWithInput()
        try FileManager.default.createSymbolicLink(atPath: sandbox.url("lnk").path, withDestinationPath: "/dev/stdout")
        let earlier = Data("earlier line\n".utf8)
        let expected = libraryPath(Fixtures.rgb8, layout: .rgb, recipe: Recipe(adjustments: .noir), outputLayout: .rgb)
        for name in ["lnk", "//dev/stdout"] {
            let result = try Tool.run(["apply", "in.ppm", "-o", name, "--format", "ppm", "--preset", "noir"], in: sandbox,
                                      stdoutPrefix: earlier)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            #expect(result.stdout.prefix(earlier.count) == earlier, "\(name): the redirected file lost its earlier bytes")
            #expect(try NetpbmReader.read(Array(result.stdout.dropFirst(earlier.count))).samples == expected, "\(name)")
        }
        let closed = try Tool.run(["apply", "in.ppm", "-o", "/dev/fd/9", "--format", "ppm", "--preset", "noir"], in: sandbox)
        #expect(closed.status == 73)
        #expect(closed.stderr == "Error: cannot write '/dev/fd/9': it names no open descriptor\n", "\(closed.stderr)")
        #expect(closed.stdout.isEmpty)
    }

    @Test("in a batch, an output that is another input is refused before any work (73), even with --force")
    func batchOutputIsAnotherInput() throws {
        let sandbox = try Self.sandboxWithInput()
        let fm = FileManager.default
        try fm.copyItem(at: sandbox.url("in.ppm"), to: sandbox.url("b.ppm"))
        try fm.createDirectory(at: sandbox.url("out"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: sandbox.url("out/in.ppm").path, withDestinationPath: "../b.ppm")
        let before = try sandbox.read("b.ppm")
        for force in [false, true] {
            let result = try Tool.run(["apply", "in.ppm", "b.ppm", "-o", "out/", "--preset", "noir"] + (force ? ["--force"] : []),
                                      in: sandbox)
            #expect(result.status == 73, "force \(force): \(result.stderr)")
            #expect(result.stderr.contains("is the input file 'b.ppm'"), "\(result.stderr)")
            #expect(try sandbox.read("b.ppm") == before)
        }
    }

    @Test("an output through a link to a directory and `..` is checked as the file the kernel reaches: the input is not overwritten (73)")
    func linkedDirectoryOutputIsInput() throws {
        let sandbox = try Self.sandboxWithInput()
        let fm = FileManager.default
        try fm.createDirectory(at: sandbox.url("real/sub"), withIntermediateDirectories: true)
        try fm.moveItem(at: sandbox.url("in.ppm"), to: sandbox.url("real/in.ppm"))
        try fm.createSymbolicLink(atPath: sandbox.url("real/sub/out.ppm").path, withDestinationPath: "../in.ppm")
        try fm.createSymbolicLink(atPath: sandbox.url("d").path, withDestinationPath: sandbox.url("real/sub").path)
        let before = try sandbox.read("real/in.ppm")
        let result = try Tool.run(["apply", "real/in.ppm", "-o", "d/out.ppm", "--preset", "noir"], in: sandbox)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.contains("is the input file 'real/in.ppm'"), "\(result.stderr)")
        #expect(try sandbox.read("real/in.ppm") == before)
    }

    @Test("SIGTERM, SIGINT or SIGHUP mid-run removes the temporary file and ends the run by that signal")
    func interruptedRunLeavesNoTemporaryFile() throws {
        for number in [SIGTERM, SIGINT, SIGHUP] {
            let sandbox = try Self.sandboxWithInput()
            let bytes = try sandbox.read("in.ppm")
            let tool: URL = try #require(Tool.url)
            let process = Process()
            process.executableURL = tool
            process.arguments = ["apply", "-", "-o", "out.ppm", "--preset", "noir"]
            process.currentDirectoryURL = sandbox.work
            let input = Pipe()
            process.standardInput = input
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Half the image, so the run waits for the rest with its temporary file open.
            input.fileHandleForWriting.write(Data(bytes.prefix(bytes.count / 2)))
            var waited = 0
            while try !sandbox.contents().contains(where: { $0.hasSuffix(".tmp") }), waited < 500 {
                usleep(10_000)
                waited += 1
            }
            #expect(try sandbox.contents().contains(where: { $0.hasSuffix(".tmp") }), "signal \(number): no temporary file appeared")
            kill(process.processIdentifier, number)
            process.waitUntilExit()
            try? input.fileHandleForWriting.close()
            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == number,
                    "signal \(number): ended with \(process.terminationReason) \(process.terminationStatus)")
            let left = try sandbox.contents()
            #expect(left == ["in.ppm"], "signal \(number): left \(left)")
        }
    }

    @Test("an output that is a FIFO is written into, not replaced")
    func fifoOutput() throws {
        let sandbox = try Self.sandboxWithInput()
        let fifo = sandbox.url("pipe.ppm").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // A reader on the other end, so the writer's open does not block forever.
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "cat \"$0\" > \"$1\"", fifo, sandbox.url("received.ppm").path]
        try reader.run()
        let result = try Tool.run(["apply", "in.ppm", "-o", "pipe.ppm", "--preset", "noir"], in: sandbox)
        reader.waitUntilExit()
        #expect(result.status == 0, "\(result.stderr)")
        var status = stat()
        #expect(stat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "the FIFO must stay a FIFO")
        let expected = libraryPath(Fixtures.rgb8, layout: .rgb, recipe: Recipe(adjustments: .noir), outputLayout: .rgb)
        #expect(try sandbox.images("received.ppm").first?.samples == expected)
    }
}
