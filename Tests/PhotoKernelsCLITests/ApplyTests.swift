import Foundation
import Netpbm
import PhotoKernels
import Testing

/// `apply` reproduces the library's whole-image run of the recipe's edit plan exactly,
/// for every input kind, and follows the format, maxval, alpha and stream rules.
@Suite("apply")
struct ApplyTests {
    /// One input kind: the file, how the library reads it, and the output it maps to.
    struct Input: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var layout: SampleLayout
        var output: String
        var outputLayout: SampleLayout
        var testDescription: String { name }

        var image: NetpbmImage { try! NetpbmReader.read(bytes) }
    }

    static let inputs: [Input] = [
        Input(name: "in8.ppm", bytes: Fixtures.bytes(Fixtures.rgb8), layout: .rgb, output: "out.ppm", outputLayout: .rgb),
        Input(name: "in16.ppm", bytes: Fixtures.bytes(Fixtures.rgb16), layout: .rgb, output: "out.ppm", outputLayout: .rgb),
        Input(name: "plain.ppm", bytes: Array(Fixtures.plainP3Text.utf8), layout: .rgb, output: "out.ppm", outputLayout: .rgb),
        Input(name: "in.pgm", bytes: Fixtures.bytes(Fixtures.gray8), layout: .gray, output: "out.pgm", outputLayout: .gray),
        Input(name: "in8.pam", bytes: Fixtures.bytes(Fixtures.rgba8), layout: .rgba, output: "out.pam", outputLayout: .rgba),
        Input(name: "in16.pam", bytes: Fixtures.bytes(Fixtures.rgba16), layout: .rgba, output: "out.pam", outputLayout: .rgba),
    ]

    /// Recipes as options, and the same recipe as a library value.
    static let recipes: [(options: [String], recipe: Recipe)] = [
        (["--preset", "vivid"], Recipe(adjustments: .vivid)),
        (["--brightness", "-0.1", "--contrast", "1.3", "--saturation", "0.6", "--hue", "45", "--exposure", "0.7"],
         Recipe(exposure: 0.7, adjustments: Adjustments(saturation: 0.6, contrast: 1.3, brightness: -0.1, hue: 45))),
        (["--effect", "sepia", "--intensity", "0.7", "--vignette", "0.9,0.8"],
         Recipe(effect: Effect(name: "sepia", intensity: 0.7), vignette: .vignette(intensity: 0.9, radius: 0.8))),
        (["--effect", "monochrome", "--color", "0.2,0.5,0.9", "--vignette-effect", "1,1,2,1,0.4"],
         Recipe(effect: Effect(name: "monochrome", color: SIMD3(0.2, 0.5, 0.9)),
                vignette: .vignetteEffect(center: SIMD2(1, 1), radius: 2, intensity: 1, falloff: 0.4))),
        (["--effect", "chrome", "--preset", "dream"], Recipe(adjustments: .dream, effect: Effect(name: "chrome"))),
    ]

    @Test("same samples as the library path, scalar and simd4", arguments: inputs, 0..<recipes.count)
    func matchesLibrary(input: Input, recipeIndex: Int) throws {
        let sandbox = try Sandbox()
        try sandbox.write(input.name, input.bytes)
        let (options, recipe) = Self.recipes[recipeIndex]
        var outputs: [KernelVariant: [UInt16]] = [:]
        for variant in KernelVariant.allCases {
            let result = try Tool.run(["apply", input.name, "-o", input.output, "--kernel", variant.rawValue] + options,
                                      in: sandbox)
            try #require(result.status == 0, "\(options): \(result.stderr)")
            let written = try #require(try sandbox.images(input.output).first)
            let expected = libraryPath(input.image, layout: input.layout, recipe: recipe,
                                       outputLayout: input.outputLayout, variant: variant)
            #expect(written.samples == expected, "\(input.name) \(options) \(variant)")
            #expect(written.maxval == input.image.maxval)
            #expect(written.depth == input.outputLayout.channelCount)
            outputs[variant] = written.samples
        }
        // SPEC §8: scalar and SIMD4 agree within 1 LSB after encoding.
        #expect(maxDifference(outputs[.scalar]!, outputs[.simd4]!) <= 1)
    }

    @Test("the identity recipe returns the input bytes", arguments: [
        ("in8.ppm", Fixtures.bytes(Fixtures.rgb8)), ("in16.ppm", Fixtures.bytes(Fixtures.rgb16)),
        ("in8.pam", Fixtures.bytes(Fixtures.rgba8)), ("in16.pam", Fixtures.bytes(Fixtures.rgba16)),
        ("in.pgm", Fixtures.bytes(Fixtures.gray8)),
    ])
    func identity(name: String, bytes: [UInt8]) throws {
        let sandbox = try Sandbox()
        try sandbox.write(name, bytes)
        let identity = String(decoding: try Recipe.identity.encodedJSON(), as: UTF8.self)
        try sandbox.write("identity.json", Array(identity.utf8))
        let out = "out." + URL(fileURLWithPath: name).pathExtension
        for options in [[], ["--recipe", "identity.json"], ["--saturation", "1", "--hue", "360"]] {
            let result = try Tool.run(["apply", name, "-o", out] + options, in: sandbox)
            try #require(result.status == 0, "\(result.stderr)")
            #expect(try sandbox.read(out) == Data(bytes), "\(name) \(options)")
        }
    }

    @Test("alpha survives in PAM and is dropped, with a note, in PPM")
    func alpha() throws {
        let sandbox = try Sandbox()
        try sandbox.write("in.pam", Fixtures.bytes(Fixtures.rgba16))
        let pam = try Tool.run(["apply", "in.pam", "-o", "out.pam", "--preset", "noir"], in: sandbox)
        try #require(pam.status == 0, "\(pam.stderr)")
        let kept = try #require(try sandbox.images("out.pam").first)
        #expect(kept.tupleType == .rgbAlpha)
        let alphaIn = stride(from: 3, to: Fixtures.rgba16.samples.count, by: 4).map { Fixtures.rgba16.samples[$0] }
        let alphaOut = stride(from: 3, to: kept.samples.count, by: 4).map { kept.samples[$0] }
        #expect(alphaOut == alphaIn)
        #expect(pam.stderr.isEmpty)

        let ppm = try Tool.run(["apply", "in.pam", "-o", "out.ppm", "--preset", "noir"], in: sandbox)
        try #require(ppm.status == 0, "\(ppm.stderr)")
        #expect(ppm.stderr.isEmpty, "silent on success")
        let verbose = try Tool.run(["apply", "in.pam", "-o", "out.ppm", "--preset", "noir", "-v"], in: sandbox)
        #expect(verbose.stderr.contains("note: out.ppm cannot store alpha"))
        let dropped = try #require(try sandbox.images("out.ppm").first)
        #expect(dropped.format == .rawPPM && dropped.depth == 3)
        #expect(dropped.samples == libraryPath(Fixtures.rgba16, layout: .rgba, recipe: Recipe(adjustments: .noir),
                                               outputLayout: .rgb))
    }

    @Test("--maxval 65535 re-encodes an 8-bit input at 16 bits")
    func maxval16() throws {
        let sandbox = try Sandbox()
        try sandbox.write("in.ppm", Fixtures.bytes(Fixtures.rgb8))
        let result = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--maxval", "65535", "--preset", "dream", "-v"],
                                  in: sandbox)
        try #require(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("maxval 65535"))
        let written = try #require(try sandbox.images("out.ppm").first)
        #expect(written.maxval == 65535)
        #expect(written.samples == libraryPath(Fixtures.rgb8, layout: .rgb, recipe: Recipe(adjustments: .dream),
                                               outputLayout: .rgb, maxval: 65535))
    }

    @Test("--save-recipe then --recipe gives byte-identical output")
    func saveAndReload() throws {
        let sandbox = try Sandbox()
        try sandbox.write("in.ppm", Fixtures.bytes(Fixtures.rgb16))
        let first = try Tool.run(["apply", "in.ppm", "-o", "a.ppm", "--preset", "vivid", "--hue", "-33.3",
                                  "--exposure", "0.25", "--effect", "monochrome", "--intensity", "0.6",
                                  "--color", "0.1,0.2,0.3", "--vignette", "0.7,1.1", "--save-recipe", "edit.json"],
                                 in: sandbox)
        try #require(first.status == 0, "\(first.stderr)")
        let saved = try Recipe.decode(from: sandbox.read("edit.json"))
        #expect(saved.adjustments == Adjustments(saturation: 1.7, contrast: 1.2, brightness: 0.05, hue: -33.3))
        #expect(saved.exposure == 0.25)
        #expect(saved.effect == Effect(name: "monochrome", intensity: 0.6, color: SIMD3(0.1, 0.2, 0.3)))
        let second = try Tool.run(["apply", "in.ppm", "-o", "b.ppm", "--recipe", "edit.json"], in: sandbox)
        try #require(second.status == 0, "\(second.stderr)")
        #expect(try sandbox.read("a.ppm") == sandbox.read("b.ppm"))
    }

    @Test("options after --recipe override it; options before it are replaced")
    func recipeOrder() throws {
        let sandbox = try Sandbox()
        try sandbox.write("in.ppm", Fixtures.bytes(Fixtures.rgb8))
        let recipe = Recipe(exposure: 0.5, adjustments: Adjustments(saturation: 1.5, contrast: 1.1),
                            effect: Effect(name: "sepia", intensity: 0.5))
        try sandbox.write("r.json", recipe.encodedJSON())

        // After: --saturation and --intensity refine the loaded recipe.
        let after = try Tool.run(["apply", "in.ppm", "-o", "after.ppm", "--recipe", "r.json", "--saturation", "0.2",
                                  "--intensity", "1", "--save-recipe", "after.json"], in: sandbox)
        try #require(after.status == 0, "\(after.stderr)")
        var expected = recipe
        expected.adjustments.saturation = 0.2
        expected.effect = Effect(name: "sepia", intensity: 1)
        #expect(try Recipe.decode(from: sandbox.read("after.json")) == expected)
        #expect(try sandbox.images("after.ppm")[0].samples
                == libraryPath(Fixtures.rgb8, layout: .rgb, recipe: expected, outputLayout: .rgb))

        // Before: the recipe replaces --saturation and --effect given earlier.
        let before = try Tool.run(["apply", "in.ppm", "-o", "before.ppm", "--saturation", "0.2", "--effect", "noir",
                                   "--recipe", "r.json", "--save-recipe", "before.json"], in: sandbox)
        try #require(before.status == 0, "\(before.stderr)")
        #expect(try Recipe.decode(from: sandbox.read("before.json")) == recipe)

        // A different effect after the recipe drops the recipe's intensity.
        let switched = try Tool.run(["apply", "in.ppm", "-o", "switched.ppm", "--recipe", "r.json", "--effect", "fade",
                                     "--save-recipe", "switched.json"], in: sandbox)
        try #require(switched.status == 0, "\(switched.stderr)")
        #expect(try Recipe.decode(from: sandbox.read("switched.json")).effect == Effect(name: "fade"))
    }

    @Test("explicit sliders beat the preset in either order")
    func presetOverride() throws {
        let sandbox = try Sandbox()
        try sandbox.write("in.ppm", Fixtures.bytes(Fixtures.rgb8))
        for options in [["--preset", "vivid", "--saturation", "0.5"], ["--saturation=0.5", "--preset=vivid"]] {
            let result = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--save-recipe", "r.json"] + options,
                                      in: sandbox)
            try #require(result.status == 0, "\(result.stderr)")
            let saved = try Recipe.decode(from: sandbox.read("r.json"))
            #expect(saved.adjustments == Adjustments(saturation: 0.5, contrast: 1.2, brightness: 0.05, hue: 0))
        }
    }

    @Test("'-' reads standard input and writes standard output")
    func standardStreams() throws {
        let sandbox = try Sandbox()
        let input = Fixtures.bytes(Fixtures.rgba8)
        try sandbox.write("in.pam", input)
        let viaFiles = try Tool.run(["apply", "in.pam", "-o", "out.pam", "--effect", "instant"], in: sandbox)
        try #require(viaFiles.status == 0)
        let viaPipe = try Tool.run(["apply", "-", "-o", "-", "--effect", "instant", "--verbose"], in: sandbox,
                                   stdin: Data(input))
        try #require(viaPipe.status == 0, "\(viaPipe.stderr)")
        #expect(viaPipe.stdout == (try sandbox.read("out.pam")))
        #expect(viaPipe.stderr.hasPrefix("wrote standard output (3×3, P7, maxval 255) in "))

        // --format chooses the kind on standard output.
        let asPGM = try Tool.run(["apply", "-", "-o", "-", "--format", "plain-pgm"], in: sandbox, stdin: Data(input))
        try #require(asPGM.status == 0, "\(asPGM.stderr)")
        let gray = try NetpbmReader.read(asPGM.stdout)
        #expect(gray.format == .plainPGM)
        #expect(gray.samples == libraryPath(Fixtures.rgba8, layout: .rgba, recipe: .identity, outputLayout: .gray))
        #expect(try sandbox.contents() == ["in.pam", "out.pam"])
    }

    @Test("a two-image stream in gives a two-image stream out")
    func multiImageStream() throws {
        let sandbox = try Sandbox()
        let small = Fixtures.image(2, 2, depth: 3, maxval: 255, tupleType: .rgb, format: .rawPPM,
                                   samples: Fixtures.samples(12, maxval: 255, seed: 9))
        let stream = Fixtures.bytes(Fixtures.rgb8) + Fixtures.bytes(small)
        try sandbox.write("two.ppm", stream)
        let file = try Tool.run(["apply", "two.ppm", "-o", "out.ppm", "--preset", "vivid", "-v"], in: sandbox)
        try #require(file.status == 0, "\(file.stderr)")
        #expect(file.stderr.contains("(2 frames: 4×3, P6, maxval 255; 2×2, P6, maxval 255) in "))
        let images = try sandbox.images("out.ppm")
        #expect(images.count == 2)
        let recipe = Recipe(adjustments: .vivid)
        #expect(images.map(\.samples) == [Fixtures.rgb8, small].map {
            libraryPath($0, layout: .rgb, recipe: recipe, outputLayout: .rgb)
        })

        let piped = try Tool.run(["apply", "-", "-o", "-", "--preset", "vivid"], in: sandbox, stdin: Data(stream))
        try #require(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout == (try sandbox.read("out.ppm")))
        #expect(piped.stderr.isEmpty)
    }

    @Test("grey stays grey where the format allows, and gains colour when the recipe adds it")
    func grayAndColor() throws {
        let sandbox = try Sandbox()
        try sandbox.write("in.pgm", Fixtures.bytes(Fixtures.gray8))
        let still = try Tool.run(["apply", "in.pgm", "-o", "still.pnm", "--contrast", "1.4", "--vignette", "0.5"],
                                 in: sandbox)
        try #require(still.status == 0, "\(still.stderr)")
        let stillImage = try sandbox.images("still.pnm")[0]
        #expect(stillImage.format == .rawPGM)
        let recipe = Recipe(adjustments: Adjustments(contrast: 1.4), vignette: .vignette(intensity: 0.5, radius: 1))
        #expect(stillImage.samples == libraryPath(Fixtures.gray8, layout: .gray, recipe: recipe, outputLayout: .gray))
        // The grey the plan encodes is the colour result's own grey: R = G = B, so any plane.
        let rgb = libraryPath(Fixtures.gray8, layout: .gray, recipe: recipe, outputLayout: .rgb)
        #expect(stillImage.samples == stride(from: 0, to: rgb.count, by: 3).map { rgb[$0] })

        let sepia = try Tool.run(["apply", "in.pgm", "-o", "sepia.pnm", "--effect", "sepia"], in: sandbox)
        try #require(sepia.status == 0)
        let sepiaImage = try sandbox.images("sepia.pnm")[0]
        #expect(sepiaImage.format == .rawPPM)
        #expect(sepiaImage.samples == libraryPath(Fixtures.gray8, layout: .gray, recipe: Recipe(effect: .sepia(intensity: 1)),
                                                  outputLayout: .rgb))

        // Decided from the recipe: a grey tint keeps grey, a coloured one makes colour.
        let greyTint = try Tool.run(["apply", "in.pgm", "-o", "-", "--effect", "monochrome", "--color", "0.5,0.5,0.5"],
                                    in: sandbox)
        #expect(try NetpbmReader.read(greyTint.stdout).format == .rawPGM)
        let tint = try Tool.run(["apply", "in.pgm", "-o", "-", "--effect", "monochrome"], in: sandbox)
        #expect(try NetpbmReader.read(tint.stdout).format == .rawPPM)
        let look = try Tool.run(["apply", "in.pgm", "-o", "look.pam", "--effect", "transfer", "--intensity", "0.2"],
                                in: sandbox)
        try #require(look.status == 0)
        #expect(try sandbox.images("look.pam")[0].tupleType == .rgb)

        let pam = try Tool.run(["apply", "in.pgm", "-o", "grey.pam"], in: sandbox)
        try #require(pam.status == 0)
        #expect(try sandbox.images("grey.pam")[0].tupleType == .grayscale)

        let ppm = try Tool.run(["apply", "in.pgm", "-o", "colour.ppm"], in: sandbox)
        try #require(ppm.status == 0)
        #expect(try sandbox.images("colour.ppm")[0].depth == 3)
    }

    @Test("PBM becomes an 8-bit greymap")
    func bitmap() throws {
        let sandbox = try Sandbox()
        try sandbox.write("in.pbm", Array("P1\n3 2\n1 0 1\n0 1 0\n".utf8))
        let result = try Tool.run(["apply", "in.pbm", "-o", "out.pnm"], in: sandbox)
        try #require(result.status == 0, "\(result.stderr)")
        let image = try sandbox.images("out.pnm")[0]
        #expect(image.format == .plainPGM)
        #expect(image.maxval == 255)
        #expect(image.samples == [0, 255, 0, 255, 0, 255])
    }

    @Test("--format overrides the extension; plain output")
    func explicitFormat() throws {
        let sandbox = try Sandbox()
        try sandbox.write("in.ppm", Fixtures.bytes(Fixtures.rgb8))
        let result = try Tool.run(["apply", "in.ppm", "-o", "out.txt", "--format", "plain-ppm", "--hue", "90"], in: sandbox)
        try #require(result.status == 0, "\(result.stderr)")
        let text = String(decoding: try sandbox.read("out.txt"), as: UTF8.self)
        #expect(text.hasPrefix("P3"))
        #expect(try sandbox.images("out.txt")[0].samples
                == libraryPath(Fixtures.rgb8, layout: .rgb, recipe: Recipe(adjustments: Adjustments(hue: 90)),
                               outputLayout: .rgb))
    }

    @Test("silent on success; --verbose prints one line naming the file, size, format and maxval")
    func statusLine() throws {
        let sandbox = try Sandbox()
        try sandbox.write("in.ppm", Fixtures.bytes(Fixtures.rgb16))
        let quiet = try Tool.run(["apply", "in.ppm", "-o", "quiet.pgm", "--threads", "2"], in: sandbox)
        try #require(quiet.status == 0)
        #expect(quiet.stderr.isEmpty && quiet.stdout.isEmpty)
        let result = try Tool.run(["apply", "in.ppm", "-o", "out.pgm", "--threads", "2", "--verbose"], in: sandbox)
        try #require(result.status == 0)
        #expect(result.stderr.hasPrefix("wrote out.pgm (3×2, P5, maxval 65535) in "))
        #expect(result.stderr.hasSuffix(" ms\n"))
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stdout.isEmpty)
        #expect(try sandbox.contents() == ["in.ppm", "out.pgm", "quiet.pgm"])
    }
}

@Suite("apply: memory")
struct ApplyMemoryTests {
    @Test("a batch's peak memory does not grow with its files: each worker keeps its band buffers from one file to the next")
    func batchMemoryIsFlat() throws {
        let sandbox = try Sandbox()
        // 1024 × 768: each file fills several bands, so freed band buffers would be
        // reused from a fragmented heap (11 MiB more for 8 files than for 1, measured).
        let (width, height) = (1024, 768)
        var bytes = Array("P6\n\(width) \(height)\n255\n".utf8)
        bytes += (0..<(width * height * 3)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
        let inputs = try (0..<8).map { try sandbox.write("in\($0).ppm", bytes).path }
        let first = sandbox.url("one"), eight = sandbox.url("eight")
        try FileManager.default.createDirectory(at: first, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: eight, withIntermediateDirectories: false)
        let single = try Tool.peakMemory(["apply", inputs[0], "-o", first.path, "--preset", "vivid", "--jobs", "1"])
        let batch = try Tool.peakMemory(["apply"] + inputs + ["-o", eight.path, "--preset", "vivid", "--jobs", "1"])
        #expect(single.status == 0 && batch.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: eight.path).count == 8)
        let one = try #require(single.kilobytes, "no VmHWM in /proc"), all = try #require(batch.kilobytes)
        #expect(all - one < 4096, "one file \(one) KiB, eight files \(all) KiB")
    }
}

@Suite("apply: LUT, curve and orientation")
struct LookAndOrientationTests {
    @Test("a saved recipe with a LUT, a curve and an orientation re-applies byte-identically; a changed LUT is exit 65")
    func savedRecipeReapplies() throws {
        let sandbox = try Sandbox()
        let image = Fixtures.image(7, 4, depth: 3, maxval: 255, tupleType: .rgb, format: .rawPPM,
                                   samples: Fixtures.samples(7 * 4 * 3, maxval: 255, seed: 5))
        try sandbox.write("in.ppm", Fixtures.bytes(image))
        let cube = try ColorCube.sampled(size: 5) { c in SIMD3(c.x * c.x, (c.y + c.x) / 2, c.z.squareRoot()) }
        try sandbox.write("look.cube", CubeFile(title: "look", cube: cube).encoded())
        let first = try Tool.run(["apply", "in.ppm", "-o", "a.ppm", "--lut", "look.cube", "--lut-intensity", "0.7",
                                  "--curve", "0,0 0.5,0.6 1,1", "--orientation", "6", "--save-recipe", "edit.json"], in: sandbox)
        #expect(first.status == 0, "\(first.stderr)")
        let a = try #require(try sandbox.images("a.ppm").first)
        #expect(a.width == 4 && a.height == 7, "orientation 6 turns 7×4 into 4×7")
        let again = try Tool.run(["apply", "in.ppm", "-o", "b.ppm", "--recipe", "edit.json"], in: sandbox)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try sandbox.read("a.ppm") == sandbox.read("b.ppm"))
        // The recipe records the table's digest: another table under the same name is refused.
        try sandbox.write("look.cube", CubeFile(title: "other", cube: try ColorCube.identity(size: 3)).encoded())
        let changed = try Tool.run(["apply", "in.ppm", "-o", "c.ppm", "--recipe", "edit.json"], in: sandbox)
        #expect(changed.status == 65 && changed.stderr.contains("sha256"), "\(changed.stderr)")
        #expect(!(try sandbox.contents().contains("c.ppm")))
    }

    @Test("--save-recipe records a LUT relative to the recipe's folder, with '..' where it lies beside it")
    func savedLUTPath() throws {
        let sandbox = try Sandbox()
        let image = Fixtures.image(3, 2, depth: 3, maxval: 255, tupleType: .rgb, format: .rawPPM,
                                   samples: Fixtures.samples(18, maxval: 255, seed: 6))
        try sandbox.write("in.ppm", Fixtures.bytes(image))
        try FileManager.default.createDirectory(at: sandbox.work.appendingPathComponent("looks"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: sandbox.work.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try sandbox.write("looks/warm.cube", CubeFile(title: "warm", cube: try ColorCube.identity(size: 3)).encoded())
        let saved = try Tool.run(["apply", "in.ppm", "-o", "a.ppm", "--lut", "looks/warm.cube", "--save-recipe", "sub/r.json"],
                                 in: sandbox)
        #expect(saved.status == 0, "\(saved.stderr)")
        let json = String(decoding: try sandbox.read("sub/r.json"), as: UTF8.self)
        #expect(json.contains("\"path\" : \"../looks/warm.cube\""), "\(json)")
        // Below the recipe's folder: no '..'.
        _ = try Tool.run(["apply", "in.ppm", "-o", "b.ppm", "--lut", "looks/warm.cube", "--save-recipe", "r.json"], in: sandbox)
        #expect(String(decoding: try sandbox.read("r.json"), as: UTF8.self).contains("\"path\" : \"looks/warm.cube\""))
        // The recipe and its looks move together.
        let moved = sandbox.work.appendingPathComponent("moved")
        try FileManager.default.createDirectory(at: moved, withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: sandbox.work.appendingPathComponent("looks"), to: moved.appendingPathComponent("looks"))
        try FileManager.default.moveItem(at: sandbox.work.appendingPathComponent("sub"), to: moved.appendingPathComponent("sub"))
        let again = try Tool.run(["apply", "in.ppm", "-o", "c.ppm", "--recipe", "moved/sub/r.json"], in: sandbox)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try sandbox.read("a.ppm") == sandbox.read("c.ppm"))
    }

    @Test("an orientation on a header whose raster the file lacks is exit 65 before anything is allocated")
    func orientationOnHostileHeader() throws {
        let sandbox = try Sandbox()
        // 65536 × 65536 16-bit RGBA: 32 GiB of raster in a 75-byte file.
        try sandbox.write("h.pam", Data("P7\nWIDTH 65536\nHEIGHT 65536\nDEPTH 4\nMAXVAL 65535\nTUPLTYPE RGB_ALPHA\nENDHDR\n".utf8))
        for input in ["h.pam", "-"] {
            let result = try Tool.run(["apply", input, "-o", "out.pam", "--orientation", "6", "--max-pixels", "5000000000"],
                                      in: sandbox, stdin: input == "-" ? try sandbox.read("h.pam") : nil)
            #expect(result.status == 65, "\(result.stderr)")
            #expect(result.stderr.contains("the raster needs 34359738368 bytes but the input ends after 0 of them"),
                    "\(result.stderr)")
            #expect(!(try sandbox.contents().contains("out.pam")))
        }
    }

    @Test("the orientation moves pixels exactly: 3 is a 180° turn of the samples")
    func orientationMovesSamples() throws {
        let sandbox = try Sandbox()
        let samples = Fixtures.samples(5 * 3, maxval: 255, seed: 9)
        try sandbox.write("in.pgm", Fixtures.bytes(Fixtures.image(5, 3, depth: 1, maxval: 255, tupleType: .grayscale,
                                                                   format: .rawPGM, samples: samples)))
        let result = try Tool.run(["apply", "in.pgm", "-o", "out.pgm", "--orientation", "3"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let out = try #require(try sandbox.images("out.pgm").first)
        #expect(out.samples == samples.reversed().map { UInt16($0) })
    }
}
