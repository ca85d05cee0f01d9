import CommandLineKit
import Foundation
import Netpbm
import PhotoKernels
import Testing
@testable import PhotoKernelsCLI

/// The streaming core of `apply`, in process: bands of any size give exactly the
/// whole-image result, the bands cover an image once, in order, the output rules
/// follow the header and the recipe, and files appear only when complete.
@Suite("Streaming in bands")
struct StreamingTests {
    /// Recipes that take each path of the plan: one matrix (the packed block for RGBA),
    /// a tone table, sepia (grey input turns colour), monochrome, vibrance and the
    /// position-dependent vignettes (a band at the wrong offset would show).
    static let recipes: [Recipe] = [
        Recipe(adjustments: .vivid),
        Recipe(effect: .sepia(intensity: 0.7)),
        Recipe(exposure: 0.8, adjustments: .dream, vignette: .vignette(intensity: 0.9, radius: 0.8)),
        Recipe(exposure: -1.3),
        Recipe(effect: Effect(name: "monochrome"), vignette: .vignetteEffect(center: SIMD2(3, 2), radius: 4,
                                                                             intensity: 0.8, falloff: 0.4)),
        { var r = Recipe(adjustments: .noir); r[Vibrance.self] = Vibrance(amount: 0.6); return r }(),
        Recipe(),
    ]

    /// Inputs of every layout and sample width, with sizes whose row counts are not a
    /// multiple of any band tried.
    static let inputs: [(NetpbmImage, SampleLayout)] = [
        (Fixtures.image(7, 5, depth: 3, maxval: 255, tupleType: .rgb, format: .rawPPM,
                        samples: Fixtures.samples(105, maxval: 255, seed: 11)), .rgb),
        (Fixtures.image(5, 7, depth: 3, maxval: 65535, tupleType: .rgb, format: .rawPPM,
                        samples: Fixtures.samples(105, maxval: 65535, seed: 12)), .rgb),
        (Fixtures.image(9, 4, depth: 1, maxval: 255, tupleType: .grayscale, format: .rawPGM,
                        samples: Fixtures.samples(36, maxval: 255, seed: 13)), .gray),
        (Fixtures.image(6, 5, depth: 4, maxval: 255, tupleType: .rgbAlpha, format: .pam,
                        samples: Fixtures.samples(120, maxval: 255, seed: 14)), .rgba),
        (Fixtures.image(5, 3, depth: 4, maxval: 4095, tupleType: .rgbAlpha, format: .pam,
                        samples: Fixtures.samples(60, maxval: 4095, seed: 15)), .rgba),
        (Fixtures.image(4, 6, depth: 2, maxval: 1023, tupleType: .grayscaleAlpha, format: .pam,
                        samples: Fixtures.samples(48, maxval: 1023, seed: 16)), .grayAlpha),
    ]

    /// `image` through the pipeline with bands of `bandSamples` samples, into memory.
    static func stream(_ bytes: [UInt8], recipe: Recipe, target: OutputTarget, maxval: Int? = nil,
                       bandSamples: Int, threads: Int = 2, variant: KernelVariant = .simd4) throws(CLIError) -> [UInt8] {
        let settings = StreamSettings(
            plan: EditPlan(stages: recipe.stages),
            rules: OutputRules(target: target, maxval: maxval, recipeKeepsGrey: OutputRules.keepsGrey(recipe.stages)),
            variant: variant, threads: threads, bandSamples: bandSamples, slots: 3)
        let reader = NetpbmStreamReader(bytes: bytes)
        let writer = NetpbmStreamWriter()
        _ = try BandPipeline.run(reader, to: writer, settings: settings, source: "<test>")
        return writer.bytes
    }

    @Test("every band size gives the whole-image bytes, for every layout, recipe and maxval conversion",
          arguments: 0..<inputs.count)
    func bandsMatchWholeImage(inputIndex: Int) throws {
        let (image, layout) = Self.inputs[inputIndex]
        let bytes = Fixtures.bytes(image)
        for (r, recipe) in Self.recipes.enumerated() {
            let keepsGrey = OutputRules.keepsGrey(recipe.stages)
            let outputLayout = layout.isGray && !keepsGrey ? SampleLayout(gray: false, alpha: layout.hasAlpha) : layout
            let format: NetpbmFormat = image.format == .rawPGM && outputLayout == .rgb ? .rawPPM : image.format
            for maxval in [nil, 255, 65535] {
                let expected = libraryFile(image, layout: layout, recipe: recipe, outputLayout: outputLayout,
                                           format: format, maxval: maxval)
                // 4 samples: one pixel per band, or a slice of a row; 13: bands that end
                // inside a row's pixels are rounded down to whole rows or slices.
                for bandSamples in [4, 5, 13, 24, 64, 1 << 20] {
                    let streamed = try Self.stream(bytes, recipe: recipe, target: .likeInput, maxval: maxval,
                                                   bandSamples: bandSamples)
                    #expect(streamed == expected,
                            "input \(inputIndex), recipe \(r), maxval \(maxval.map(String.init) ?? "kept"), bands of \(bandSamples)")
                }
            }
        }
    }

    @Test("the scalar reference streams to its own whole-image result")
    func scalarBands() throws {
        let (image, layout) = Self.inputs[0]
        let recipe = Self.recipes[2]
        let plan = try EditPlan(stages: recipe.stages).prepared(width: image.width, height: image.height, threads: 1)
        var expected = [UInt8](repeating: 0, count: image.samples.count)
        let input = image.samples.map { UInt8($0) }
        try input.withUnsafeBufferPointer { i throws(EditPlanError) in
            try expected.withUnsafeMutableBufferPointer { o throws(EditPlanError) in
                try plan.run(input: i, inputLayout: layout, inputMaxval: 255, output: o, outputLayout: layout,
                             outputMaxval: 255, variant: .scalar)
            }
        }
        let streamed = try Self.stream(Fixtures.bytes(image), recipe: recipe, target: .fixed(.ppm), bandSamples: 7,
                                       variant: .scalar)
        #expect(try NetpbmReader.read(streamed).samples == expected.map { UInt16($0) })
    }

    @Test("a multi-frame stream of mixed sizes and kinds streams frame by frame")
    func mixedStream() throws {
        let frames = Self.inputs.map(\.0)
        let stream = frames.flatMap(Fixtures.bytes)
        let recipe = Self.recipes[2]
        let keepsGrey = OutputRules.keepsGrey(recipe.stages)
        #expect(keepsGrey)
        let expected = zip(frames, Self.inputs.map(\.1)).flatMap { image, layout in
            libraryFile(image, layout: layout, recipe: recipe, outputLayout: layout, format: image.format)
        }
        for bandSamples in [4, 9, 1 << 20] {
            #expect(try Self.stream(stream, recipe: recipe, target: .likeInput, bandSamples: bandSamples) == expected)
        }
    }

    @Test("bands cover the image once, in order: whole rows, or slices of one row")
    func regions() {
        for (width, height, channels, budget) in [(7, 5, 3, 4), (7, 5, 3, 21), (7, 5, 3, 22), (7, 5, 3, 1 << 20),
                                                  (10, 3, 4, 12), (1, 9, 1, 4), (100, 1, 1, 7), (5, 2, 4, 3)] {
            let bands = Array(BandPipeline.Regions(width: width, height: height, channels: channels,
                                                   bandSamples: budget))
            var next = (x: 0, y: 0)
            for band in bands {
                #expect(band.width * band.height * channels <= max(budget, channels))
                #expect(band.height == 1 || (band.x == 0 && band.width == width))
                #expect((band.x, band.y) == next, "\(width)×\(height) by \(budget): \(band)")
                next = band.x + band.width == width ? (0, band.y + band.height) : (band.x + band.width, band.y)
            }
            #expect(next == (0, height))
            #expect(bands.reduce(0) { $0 + $1.width * $1.height } == width * height)
        }
        // 21 samples of 3 channels hold one 7-pixel row: bands of one row.
        #expect(Array(BandPipeline.Regions(width: 7, height: 5, channels: 3, bandSamples: 21)).count == 5)
        // A row longer than the band is cut into slices of 7 / 3 = 2 pixels.
        #expect(Array(BandPipeline.Regions(width: 7, height: 1, channels: 3, bandSamples: 7)).map(\.width)
                == [2, 2, 2, 1])
    }

    @Test("grey is kept or not from the recipe's stages alone")
    func greyRule() {
        func keeps(_ recipe: Recipe) -> Bool { OutputRules.keepsGrey(recipe.stages) }
        #expect(keeps(Recipe()))
        #expect(keeps(Recipe(exposure: 1.5)))
        #expect(keeps(Recipe(adjustments: .vivid)) && keeps(Recipe(adjustments: .noir)) && keeps(Recipe(adjustments: .dream)))
        #expect(keeps(Recipe(adjustments: Adjustments(contrast: 1.4, hue: 123))))
        var vibrance = Recipe()
        vibrance[Vibrance.self] = Vibrance(amount: -0.7)
        #expect(keeps(vibrance))
        #expect(keeps(Recipe(vignette: .vignette(intensity: 1, radius: 0.5))))
        #expect(keeps(Recipe(vignette: .vignetteEffect(center: SIMD2(1, 1), radius: 3, intensity: 1, falloff: 0.5))))
        #expect(keeps(Recipe(effect: Effect(name: "monochrome", color: SIMD3(0.4, 0.4, 0.4)))))
        #expect(keeps(Recipe(effect: .monochrome(.blackAndWhite))))
        for look in ["tonal", "mono", "noir", "chrome", "fade"] {
            #expect(keeps(Recipe(effect: Effect(name: look))), "\(look)")
        }
        #expect(!keeps(Recipe(effect: .sepia(intensity: 1))))
        #expect(!keeps(Recipe(effect: .sepia(intensity: 0.05))))
        #expect(!keeps(Recipe(effect: Effect(name: "monochrome"))))
        #expect(!keeps(Recipe(effect: Effect(name: "monochrome", color: SIMD3(0.4, 0.4, 0.41)))))
        for look in ["instant", "process", "transfer"] {
            #expect(!keeps(Recipe(effect: Effect(name: look))), "\(look)")
            #expect(!keeps(Recipe(effect: Effect(name: look, intensity: 0.5))), "\(look) at 0.5")
        }
        // One colour stage is enough, whatever surrounds it.
        #expect(!keeps(Recipe(exposure: 0.3, adjustments: .vivid, effect: Effect(name: "instant"),
                              vignette: .vignette(intensity: 1, radius: 1))))
    }

    @Test("the output rules: format, layout, maxval and alpha from the header and the target")
    func frameRules() throws {
        func header(_ format: NetpbmFormat, depth: Int? = nil, maxval: Int = 255, _ type: TupleType? = nil) -> NetpbmHeader {
            try! NetpbmHeader(format: format, width: 3, height: 2, depth: depth, maxval: maxval, tupleType: type)
        }
        let grey = OutputRules(target: .likeInput, maxval: nil, recipeKeepsGrey: true)
        let colour = OutputRules(target: .likeInput, maxval: nil, recipeKeepsGrey: false)
        let p5 = try grey.frame(for: header(.rawPGM), frame: 1, offset: 0, source: "x")
        #expect(p5.output.format == .rawPGM && p5.outputLayout == .gray && p5.inputLayout == .gray)
        let p6 = try colour.frame(for: header(.rawPGM), frame: 1, offset: 0, source: "x")
        #expect(p6.output.format == .rawPPM && p6.outputLayout == .rgb)
        let plain = try colour.frame(for: header(.plainPGM), frame: 1, offset: 0, source: "x")
        #expect(plain.output.format == .plainPPM)
        // A bitmap becomes an 8-bit greymap.
        let bitmap = try grey.frame(for: header(.rawPBM, maxval: 1), frame: 1, offset: 0, source: "x")
        #expect(bitmap.output.format == .rawPGM && bitmap.output.maxval == 255)
        // Grey + alpha in PAM keeps both; in colour it gains RGB and keeps alpha.
        let ga = header(.pam, depth: 2, maxval: 1023, .grayscaleAlpha)
        #expect(try grey.frame(for: ga, frame: 1, offset: 0, source: "x").output.tupleType == .grayscaleAlpha)
        let rgba = try colour.frame(for: ga, frame: 1, offset: 0, source: "x")
        #expect(rgba.output.tupleType == .rgbAlpha && rgba.output.depth == 4 && rgba.output.maxval == 1023)
        // PPM output cannot store alpha; PGM output stores luma; --maxval wins.
        let toPPM = OutputRules(target: .fixed(.ppm), maxval: 65535, recipeKeepsGrey: true)
        let dropped = try toPPM.frame(for: header(.pam, depth: 4, .rgbAlpha), frame: 1, offset: 0, source: "x")
        #expect(dropped.droppedAlpha && dropped.outputLayout == .rgb && dropped.output.maxval == 65535)
        let toPGM = OutputRules(target: .fixed(.pgm), maxval: nil, recipeKeepsGrey: false)
        #expect(try toPGM.frame(for: header(.rawPPM), frame: 1, offset: 0, source: "x").outputLayout == .gray)
        // A PAM the tool cannot interpret names the source, the frame and its offset.
        let odd = header(.pam, depth: 5, .rgbAlpha)
        #expect(throws: CLIError.data("x: frame 3: a PAM with tuple type \"RGB_ALPHA\" and depth 5 is not supported "
                                      + "(GRAYSCALE, RGB, BLACKANDWHITE and their _ALPHA variants, without extra planes, are) "
                                      + "(its header at byte offset 1234)")) {
            try grey.frame(for: odd, frame: 3, offset: 1234, source: "x")
        }
    }

    @Test("a PAM frame the tool cannot interpret: the message names the frame and its header's byte offset, the tuple type's control bytes escaped")
    func uninterpretableFrame() throws {
        let first = Array("P7\nWIDTH 1\nHEIGHT 1\nDEPTH 3\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n".utf8) + [1, 2, 3]
        let second = Array("P7\nWIDTH 1\nHEIGHT 1\nDEPTH 5\nMAXVAL 255\nTUPLTYPE \u{1B}[2J\u{7}\rX\nENDHDR\n".utf8)
            + [1, 2, 3, 4, 5]
        let stream = first + Array("\n\n".utf8) + second
        let settings = StreamSettings(plan: EditPlan(stages: Recipe(adjustments: .vivid).stages),
                                      rules: OutputRules(target: .likeInput, maxval: nil, recipeKeepsGrey: true),
                                      threads: 1, bandSamples: 8, slots: 3)
        #expect(throws: CLIError.data("s.pam: frame 2: a PAM with tuple type \"\\x1B[2J\\x07\\x0DX\" and depth 5 is not supported "
                                      + "(GRAYSCALE, RGB, BLACKANDWHITE and their _ALPHA variants, without extra planes, are) "
                                      + "(its header at byte offset \(first.count + 2))")) {
            _ = try BandPipeline.run(NetpbmStreamReader(bytes: stream), to: NetpbmStreamWriter(), settings: settings,
                                     source: "s.pam")
        }
        #expect(TupleType(rawValue: "A\"B\\C\u{0}é").printable == "A\\x22B\\x5CC\\x00\\xC3\\xA9")
    }

    @Test("an input error arrives after every earlier frame; nothing of the failing frame is flushed")
    func failingFrame() throws {
        let frame = Fixtures.bytes(Self.inputs[0].0)
        let stream = Array(repeating: frame, count: 4).flatMap { $0 } + frame.prefix(frame.count - 5)
        let settings = StreamSettings(plan: EditPlan(stages: Recipe(adjustments: .vivid).stages),
                                      rules: OutputRules(target: .likeInput, maxval: nil, recipeKeepsGrey: true),
                                      threads: 2, bandSamples: 8, slots: 3)
        let writer = NetpbmStreamWriter()
        #expect {
            _ = try BandPipeline.run(NetpbmStreamReader(bytes: stream), to: writer, settings: settings, source: "s.ppm")
        } throws: { error in
            let message = (error as? CLIError)?.message ?? ""
            return (error as? CLIError)?.status == .dataError && message.hasPrefix("s.ppm: Netpbm raster, frame 5: ")
                && message.contains("byte offset \(stream.count)")
        }
        let one = libraryFile(Self.inputs[0].0, layout: .rgb, recipe: Recipe(adjustments: .vivid), outputLayout: .rgb,
                              format: .rawPPM)
        // Four frames flushed; the writer's buffer may hold the fifth's start, never flushed.
        #expect(writer.bytes.count >= 4 * one.count)
        #expect(Array(writer.bytes.prefix(4 * one.count)) == Array(repeating: one, count: 4).flatMap { $0 })
    }

    @Test("an oriented frame, held whole, is refused before its allocation when the input lacks it, and fails cleanly when memory does")
    func orientedFrameMemory() throws {
        let settings = StreamSettings(plan: EditPlan(stages: [], orientation: .right),
                                      rules: OutputRules(target: .likeInput, maxval: nil, recipeKeepsGrey: true),
                                      threads: 1, bandSamples: 64, slots: 2)
        // 2³⁰ × 2³⁰ grey pixels: 2⁶¹ bytes for the frame's two buffers.
        let limits = NetpbmLimits(maxPixels: 1 << 61, maxBytes: .max)
        let header = Array("P5 1073741824 1073741824 255\n".utf8)
        let body = [UInt8](repeating: 9, count: 4000)
        let writer = NetpbmStreamWriter()
        #expect(throws: CLIError.data("h.pgm: Netpbm raster, frame 1: the raster needs 1152921504606846976 bytes but the "
                                      + "input ends after 4000 of them, at byte offset 4029 (raster at byte offset 29)")) {
            _ = try BandPipeline.run(NetpbmStreamReader(bytes: header + body, limits: limits), to: writer,
                                     settings: settings, source: "h.pgm")
        }
        #expect(writer.bytes.count < header.count + 8, "the header at most, no sample")
        // The check comes before the plan is prepared too: rows 2³¹ − 1 pixels wide on
        // 2²⁰ threads (capped at the 32 767 such a row can use) would ask for about 2⁴⁸
        // bytes of scratch (exit 71), but the file's length already refuses them (exit 65).
        var wide = settings
        wide.threads = 1 << 20
        #expect(throws: CLIError.data("w.pgm: Netpbm raster, frame 1: the raster needs 2147483647 bytes but the "
                                      + "input ends after 4000 of them, at byte offset 4020 (raster at byte offset 20)")) {
            _ = try BandPipeline.run(NetpbmStreamReader(bytes: Array("P5 2147483647 1 255\n".utf8) + body, limits: limits),
                                     to: NetpbmStreamWriter(), settings: wide, source: "w.pgm")
        }

        // Through a pipe still open, the length is unknown: the allocation itself fails.
        let pipeWriter = NetpbmStreamWriter()
        let pipe = Pipe()
        let input = pipe.fileHandleForWriting
        input.write(Data(header + body))
        let reader = NetpbmStreamReader(fileHandle: pipe.fileHandleForReading, limits: limits, name: "standard input")
        #expect(throws: CLIError.outOfMemory(bytes: 1 << 62, purpose:
                "frame 1 of standard input (1073741824×1073741824) whole to orient it")) {
            _ = try BandPipeline.run(reader, to: pipeWriter, settings: settings, source: "standard input")
        }
        try input.close()
        #expect(pipeWriter.bytes.count < header.count + 8, "the header at most, no sample")
        #expect(CLIError.outOfMemory(bytes: 1 << 62, purpose: "x").status == .osError)
        #expect(CLIError.outOfMemory(bytes: nil, purpose: "x").status.rawValue == 71)

        // The plan's own scratch, through a pipe: 2²⁰ rows 2³¹ − 1 pixels wide can use 2³⁵
        // threads, and on 2³⁰ of them (about 4 bytes a pixel of a row, per thread) the
        // bytes cannot be counted: 71 too, whatever the machine's memory.
        var edit = settings
        edit.plan = EditPlan(stages: Recipe(adjustments: .vivid).stages)
        edit.threads = 1 << 30
        let widePipe = Pipe()
        widePipe.fileHandleForWriting.write(Data(Array("P5 2147483647 1048576 255\n".utf8) + body))
        #expect(throws: CLIError.outOfMemory(bytes: nil, purpose: "the edit's scratch rows for standard input (2147483647×1048576)")) {
            _ = try BandPipeline.run(NetpbmStreamReader(fileHandle: widePipe.fileHandleForReading, limits: limits,
                                                        name: "standard input"),
                                     to: NetpbmStreamWriter(), settings: edit, source: "standard input")
        }
        try widePipe.fileHandleForWriting.close()
        // A thread count no machine has is capped at what the image can use, and runs.
        var manyThreads = edit
        manyThreads.threads = .max
        let output = NetpbmStreamWriter()
        _ = try BandPipeline.run(NetpbmStreamReader(bytes: Fixtures.bytes(Self.inputs[0].0)), to: output,
                                 settings: manyThreads, source: "s.ppm")
        let one = libraryFile(Self.inputs[0].0, layout: .rgb, recipe: Recipe(adjustments: .vivid), outputLayout: .rgb,
                              format: .rawPPM)
        #expect(output.bytes == one)

        // The buffers' sizes: what cannot be counted or provided is nil, not a trap.
        #expect(BandPipeline.Band(samples: .max) == nil)
        #expect(BandPipeline.Band(samples: 1 << 62) == nil)
        #expect(BandPipeline.Band(samples: 1 << 58) == nil)
        #expect(BandPipeline.Band(samples: 0) == nil)
        #expect(BandPipeline.Band(samples: 16) != nil)
    }

    @Test("writing [UInt8] gives the same file as writing Data, and keeps a replaced file's permissions")
    func copyFreeWrite() throws {
        let sandbox = try Sandbox()
        let path = sandbox.work.appendingPathComponent("out.bin").path
        let bytes = (0..<100_003).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try OutputFile.write(bytes, to: path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes))

        chmod(path, 0o640)
        try OutputFile.write([1, 2, 3], to: path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data([1, 2, 3]))
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o640)

        try OutputFile.write([], to: path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty)
        // Only the file: no temporary left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.work.path) == ["out.bin"])
    }

    @Test("pieces are written in order; a producer's error passes through and leaves no file")
    func piecewiseWrite() throws {
        let sandbox = try Sandbox()
        let path = sandbox.work.appendingPathComponent("out.bin").path
        try OutputFile.write(to: path) { piece throws(CLIError) in
            for text in ["P5\n", "2 1\n", "255\n", "\u{1}\u{2}"] {
                guard Array(text.utf8).withUnsafeBytes({ piece($0) }) else { return }
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("P5\n2 1\n255\n\u{1}\u{2}".utf8))

        let fresh = sandbox.work.appendingPathComponent("never.bin").path
        #expect(throws: CLIError.self) {
            try OutputFile.write(to: fresh) { piece throws(CLIError) in
                _ = [UInt8](repeating: 7, count: 10).withUnsafeBytes { piece($0) }
                throw CLIError.software("producer failed")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.work.path) == ["out.bin"])
    }

    @Test("apply writes the whole-image bytes for every output kind, in tiny bands",
          arguments: [("in.ppm", "out.ppm"), ("in.ppm", "out.pam"), ("in.pam", "out.pam"), ("in.pam", "out.ppm"),
                      ("in.pgm", "out.pnm"), ("in.pgm", "out.pgm"), ("in.ppm", "out.pgm")])
    func applyMatchesLibrary(input: String, output: String) throws {
        let sandbox = try Sandbox()
        let images: [String: (NetpbmImage, SampleLayout)] = [
            "in.ppm": (Fixtures.rgb16, .rgb), "in.pam": (Fixtures.rgba8, .rgba), "in.pgm": (Fixtures.gray8, .gray),
        ]
        let (image, layout) = try #require(images[input])
        try sandbox.write(input, Fixtures.bytes(image))
        let recipe = Recipe(exposure: 0.4, vignette: .vignette(intensity: 0.7, radius: 0.9))
        let whole = try Tool.run(["apply", input, "-o", "whole-" + output, "--exposure", "0.4", "--vignette", "0.7,0.9"],
                                 in: sandbox)
        let banded = try Tool.run(["apply", input, "-o", output, "--exposure", "0.4", "--vignette", "0.7,0.9"],
                                  in: sandbox, environment: ["PHOTOKERNELS_BAND_SAMPLES": "5"])
        try #require(whole.status == 0 && banded.status == 0, "\(whole.stderr) \(banded.stderr)")
        let written = try sandbox.images(output)[0]
        let outputLayout = try SampleLayout(of: NetpbmHeader(written), frame: 1, offset: 0, source: output)
        #expect(written.samples == libraryPath(image, layout: layout, recipe: recipe, outputLayout: outputLayout))
        #expect(try sandbox.read(output) == sandbox.read("whole-" + output))
    }
}
