import Foundation
import Netpbm
import PhotoKernels
import Testing
@testable import PhotoKernelsCLI

/// The memory-saving paths of `apply`: kernels run in place on the decoded samples,
/// grey results compacted in place, encoded bytes written without a copy. Each must
/// give exactly what the allocating path gives.
@Suite("In-place processing and copy-free output")
struct InPlaceOutputTests {
    /// Recipes that take each path: the packed matrix path (one matrix, RGBA), the row
    /// path with the exposure table, monochrome, and the position-dependent vignettes
    /// (a row written before it is read, or at another row's offset, would show).
    static let recipes: [Recipe] = [
        Recipe(adjustments: .vivid),
        Recipe(effect: .sepia(intensity: 0.7)),
        Recipe(exposure: 0.8, adjustments: .dream, vignette: .vignette(intensity: 0.9, radius: 0.8)),
        Recipe(exposure: -1.3),
        Recipe(effect: Effect(name: "monochrome"), vignette: .vignette(intensity: -0.6, radius: 1)),
        Recipe(),
    ]

    @Test("runInPlace equals run for every layout, maxval, thread count and variant; no copy is made",
          arguments: SampleLayout.allCases)
    func inPlaceMatchesOutOfPlace(layout: SampleLayout) {
        let shapes = [(1, 1), (7, 3), (33, 2), (17, 9), (64, 5)]
        for (r, recipe) in Self.recipes.enumerated() {
            for (w, h) in shapes {
                for (maxval, outputMaxval) in [(255, 255), (65535, 65535), (1023, 1023), (255, 65535), (65535, 255)] {
                    let samples = Fixtures.samples(w * h * layout.channelCount, maxval: maxval, seed: UInt64(r * 101 + w + h))
                        .map { UInt16($0) }
                    for variant in [KernelVariant.simd4, .scalar] {
                        let expected = SamplePipeline.run(recipe.kernels, width: w, height: h, samples: samples,
                                                          layout: layout, maxval: maxval, outputMaxval: outputMaxval,
                                                          variant: variant, threads: 1)
                        for threads in [1, 2, 3] {
                            var inPlace = samples
                            inPlace.withUnsafeMutableBufferPointer { _ in }  // own storage, so identity is testable
                            let before = inPlace.withUnsafeBufferPointer { $0.baseAddress }
                            SamplePipeline.runInPlace(recipe.kernels, width: w, height: h, samples: &inPlace,
                                                      layout: layout, maxval: maxval, outputMaxval: outputMaxval,
                                                      variant: variant, threads: threads)
                            #expect(inPlace == expected,
                                    "recipe \(r), \(layout) \(w)×\(h), maxval \(maxval)→\(outputMaxval), \(variant), \(threads) threads")
                            #expect(inPlace.withUnsafeBufferPointer { $0.baseAddress } == before)
                        }
                    }
                }
            }
        }
    }

    @Test("process reuses the input's storage when the layout stays, and matches the library path")
    func processReusesStorage() throws {
        let processor = ImageProcessor(kernels: Recipe(adjustments: .vivid).kernels, target: .likeInput, maxval: nil,
                                       variant: .simd4, threads: 2)
        for (image, layout) in [(Fixtures.rgb8, SampleLayout.rgb), (Fixtures.rgba16, .rgba), (Fixtures.rgb16, .rgb)] {
            let expected = libraryPath(image, layout: layout, recipe: Recipe(adjustments: .vivid), outputLayout: layout)
            var input = image
            input.samples.withUnsafeMutableBufferPointer { _ in }  // unshare it from the fixture
            let storage = input.samples.withUnsafeBufferPointer { $0.baseAddress }
            let output = try processor.process(&input, source: "test").image
            #expect(output.samples == expected)
            #expect(output.samples.withUnsafeBufferPointer { $0.baseAddress } == storage)
            #expect(input.samples.isEmpty)
        }
        // A layout change (RGBA in, PPM out) cannot run in place; it still matches.
        let toPPM = ImageProcessor(kernels: Recipe(adjustments: .vivid).kernels, target: .fixed(.ppm), maxval: nil,
                                   variant: .simd4, threads: 1)
        var rgba = Fixtures.rgba8
        let output = try toPPM.process(&rgba, source: "test")
        #expect(output.droppedAlpha)
        #expect(output.image.samples == libraryPath(Fixtures.rgba8, layout: .rgba, recipe: Recipe(adjustments: .vivid),
                                                    outputLayout: .rgb))
    }

    @Test("keepGrayOnly compacts grey rasters in place and leaves a colour one untouched", arguments: [false, true])
    func grayCompaction(alpha: Bool) {
        let stride = alpha ? 4 : 3
        for pixels in [1, 2, 5, 33] {
            var gray: [UInt16] = []
            var expected: [UInt16] = []
            for p in 0..<pixels {
                let v = UInt16(p * 977 % 65536), a = UInt16(65535 - p)
                gray += [v, v, v] + (alpha ? [a] : [])
                expected += [v] + (alpha ? [a] : [])
            }
            var compacted = gray
            #expect(ImageProcessor.keepGrayOnly(&compacted, alpha: alpha))
            #expect(compacted == expected)

            // Colour only in the last pixel: the check must finish before anything moves.
            for channel in 1...2 {
                var colour = gray
                colour[(pixels - 1) * stride + channel] &+= 1
                let original = colour
                #expect(!ImageProcessor.keepGrayOnly(&colour, alpha: alpha))
                #expect(colour == original)
            }
        }
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

    @Test("apply writes the same bytes in place as the allocating path, for every output kind",
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
        let result = try Tool.run(["apply", input, "-o", output, "--exposure", "0.4", "--vignette", "0.7,0.9"],
                                  in: sandbox)
        try #require(result.status == 0, "\(result.stderr)")
        let written = try sandbox.images(output)[0]
        let outputLayout = try SampleLayout(of: written, source: output)
        let expected: [UInt16]
        if layout.isGray && !output.hasSuffix(".pgm") {
            // Computed in colour, kept grey (no colour added): the colour result's R plane.
            let colour = libraryPath(image, layout: layout, recipe: recipe, outputLayout: .rgb)
            expected = Swift.stride(from: 0, to: colour.count, by: 3).map { colour[$0] }
        } else {
            expected = libraryPath(image, layout: layout, recipe: recipe, outputLayout: outputLayout)
        }
        #expect(written.samples == expected)
    }
}
