import Foundation
import Netpbm
import PhotoKernels
import Testing

/// `apply` as a stage of a pipeline and of a batch, run as a subprocess: failures in the
/// middle of a stream, a reader that goes away, frames handed on as they are done, one
/// bad file among good ones, and memory that does not grow with the image.
@Suite("Pipelines and batches")
struct PipelineTests {
    /// A small frame: 6×4 RGB, distinct per index.
    static func frame(_ index: Int) -> NetpbmImage {
        Fixtures.image(6, 4, depth: 3, maxval: 255, tupleType: .rgb, format: .rawPPM,
                       samples: Fixtures.samples(72, maxval: 255, seed: UInt64(100 + index)))
    }

    static let vivid = Recipe(adjustments: .vivid)

    /// Frames 1…90 whose frame 57 is cut 30 bytes short (mid-raster, where the file
    /// ends) or, with `badHeader`, has a broken magic number; the expected output of
    /// frames 1…56; the byte offset of frame 57.
    static func ninetyFrames(badHeader: Bool = false) -> (stream: [UInt8], expected: [UInt8], offset: Int) {
        var stream: [UInt8] = [], expected: [UInt8] = []
        var offset = 0
        for index in 1...90 {
            var bytes = Fixtures.bytes(frame(index))
            if index == 57 {
                offset = stream.count
                if badHeader { bytes[1] = UInt8(ascii: "9") } else { bytes.removeLast(30) }
                stream += bytes
                break
            }
            stream += bytes
            expected += libraryFile(frame(index), layout: .rgb, recipe: vivid, outputLayout: .rgb, format: .rawPPM)
        }
        // A truncated file ends in frame 57; after a broken header the rest of the
        // stream follows, and the reader must not resynchronise on it.
        if badHeader { for index in 58...90 { stream += Fixtures.bytes(frame(index)) } }
        return (stream, expected, offset)
    }

    @Test("frame 57 of 90 truncated: a file output leaves nothing, standard output keeps frames 1…56")
    func truncatedFrame() throws {
        let sandbox = try Sandbox()
        let (stream, expected, _) = Self.ninetyFrames()
        try sandbox.write("video.ppm", stream)
        let file = try Tool.run(["apply", "video.ppm", "-o", "out.ppm", "--preset", "vivid"], in: sandbox)
        #expect(file.status == 65)
        #expect(file.stderr.hasPrefix("Error: video.ppm: Netpbm raster, frame 57: "), "\(file.stderr)")
        #expect(file.stderr.contains("byte offset"))
        #expect(file.stderr.split(separator: "\n").count == 1)
        #expect(try sandbox.contents() == ["video.ppm"], "no output, no temporary file")

        for bands in ["1048576", "7"] {
            let piped = try Tool.run(["apply", "-", "-o", "-", "--preset", "vivid"], in: sandbox, stdin: Data(stream),
                                     environment: ["PHOTOKERNELS_BAND_SAMPLES": bands])
            #expect(piped.status == 65)
            #expect(piped.stderr.hasPrefix("Error: standard input: Netpbm raster, frame 57: "), "\(piped.stderr)")
            #expect(piped.stdout == Data(expected), "exactly the 56 frames before the damage, bands of \(bands)")
        }
    }

    @Test("frame 57 of 90 with a broken header: the error names the frame and its byte offset")
    func brokenHeader() throws {
        let sandbox = try Sandbox()
        let (stream, expected, offset) = Self.ninetyFrames(badHeader: true)
        let piped = try Tool.run(["apply", "-", "-o", "-", "--preset", "vivid"], in: sandbox, stdin: Data(stream))
        #expect(piped.status == 65)
        #expect(piped.stderr.contains("frame 57") && piped.stderr.contains("byte offset \(offset)"), "\(piped.stderr)")
        #expect(piped.stdout == Data(expected))
    }

    @Test("a closed output pipe ends the tool quietly by SIGPIPE, like cat")
    func closedPipe() throws {
        let sandbox = try Sandbox()
        // 360 KB of output: more than a pipe holds, so the tool is still writing.
        let big = Fixtures.image(400, 300, depth: 3, maxval: 255, tupleType: .rgb, format: .rawPPM,
                                 samples: Fixtures.samples(360_000, maxval: 255, seed: 7))
        try sandbox.write("big.ppm", Fixtures.bytes(big))
        let executable = try #require(Tool.url)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["apply", "big.ppm", "-o", "-", "--preset", "vivid"]
        process.currentDirectoryURL = sandbox.work
        let output = Pipe()
        let errors = sandbox.io.appendingPathComponent("closed.err")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let errorHandle = try FileHandle(forWritingTo: errors)
        defer { try? errorHandle.close() }
        process.standardOutput = output
        process.standardError = errorHandle
        try process.run()
        try? output.fileHandleForWriting.close()
        let head = output.fileHandleForReading.readData(ofLength: 10)
        try output.fileHandleForReading.close()
        process.waitUntilExit()
        #expect(head == Data("P6\n400 300".utf8))
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGPIPE,
                "\(process.terminationReason) \(process.terminationStatus)")
        #expect(try Data(contentsOf: errors).isEmpty, "nothing on standard error")
    }

    @Test("each frame is handed on when done, before the next one arrives")
    func frameByFrame() throws {
        let executable = try #require(Tool.url)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["apply", "-", "-o", "-", "--preset", "vivid"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        try? input.fileHandleForReading.close()
        try? output.fileHandleForWriting.close()
        // A guard against a hang, not a timing check: a tool that withholds a frame
        // is stopped, and the short read below fails the test.
        let running = UncheckedProcess(process)
        DispatchQueue.global().asyncAfter(deadline: .now() + 120) { if running.process.isRunning { running.process.terminate() } }
        for index in 1...3 {
            try input.fileHandleForWriting.write(contentsOf: Fixtures.bytes(Self.frame(index)))
            let expected = libraryFile(Self.frame(index), layout: .rgb, recipe: Self.vivid, outputLayout: .rgb,
                                       format: .rawPPM)
            var received = Data()
            while received.count < expected.count {
                let piece = output.fileHandleForReading.readData(ofLength: expected.count - received.count)
                if piece.isEmpty { break }
                received += piece
            }
            #expect(received == Data(expected), "frame \(index) while frame \(index + 1) is not yet sent")
        }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test("a batch: one bad file fails alone, with one Error line naming it", arguments: ["1", "2"])
    func batchWithBadFile(jobs: String) throws {
        let sandbox = try Sandbox()
        let a = Self.frame(1)
        let b = Fixtures.rgba16, c = Fixtures.gray8
        try sandbox.write("a.ppm", Fixtures.bytes(a))
        try sandbox.write("b.pam", Fixtures.bytes(b))
        try sandbox.write("c.pgm", Fixtures.bytes(c))
        try sandbox.write("bad.pam", Fixtures.bytes(b).dropLast(3))
        try FileManager.default.createDirectory(at: sandbox.url("out"), withIntermediateDirectories: false)
        let result = try Tool.run(["apply", "a.ppm", "bad.pam", "b.pam", "c.pgm", "-o", "out/", "--effect", "sepia",
                                   "--jobs", jobs], in: sandbox)
        #expect(result.status == 65)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("Error: bad.pam: Netpbm raster, frame 1: "), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.url("out").path).sorted()
                == ["a.ppm", "b.pam", "c.pgm"])
        let sepia = Recipe(effect: .sepia(intensity: 1))
        #expect(try sandbox.read("out/a.ppm") == Data(libraryFile(a, layout: .rgb, recipe: sepia, outputLayout: .rgb,
                                                                   format: .rawPPM)))
        #expect(try sandbox.read("out/b.pam") == Data(libraryFile(b, layout: .rgba, recipe: sepia, outputLayout: .rgba,
                                                                   format: .pam)))
        // The name keeps the format: a PGM holds the luma of the sepia result.
        #expect(try sandbox.read("out/c.pgm") == Data(libraryFile(c, layout: .gray, recipe: sepia, outputLayout: .gray,
                                                                   format: .rawPGM)))

        // A missing file (66) among bad data (65): the highest status, every failure named.
        let mixed = try Tool.run(["apply", "bad.pam", "gone.ppm", "a.ppm", "-o", "out", "--jobs", jobs, "-v"],
                                 in: sandbox)
        #expect(mixed.status == 66)
        let errors = mixed.stderr.split(separator: "\n").filter { $0.hasPrefix("Error: ") }
        #expect(errors.count == 2 && errors.contains("Error: cannot read 'gone.ppm': no such file"), "\(mixed.stderr)")
        #expect(mixed.stderr.contains("wrote out/a.ppm (6×4, P6, maxval 255) in "))
    }

    @Test("--force replaces the input only when complete; a bad input stays as it was")
    func inPlace() throws {
        let sandbox = try Sandbox()
        let (stream, _, _) = Self.ninetyFrames()
        try sandbox.write("video.ppm", stream)
        let failed = try Tool.run(["apply", "video.ppm", "-o", "video.ppm", "--force", "--preset", "vivid"], in: sandbox)
        #expect(failed.status == 65)
        #expect(try sandbox.read("video.ppm") == Data(stream))
        #expect(try sandbox.contents() == ["video.ppm"])

        let good = Array((1...5).map { Fixtures.bytes(Self.frame($0)) }.joined())
        try sandbox.write("clip.ppm", good)
        let replaced = try Tool.run(["apply", "clip.ppm", "-o", "clip.ppm", "--force", "--preset", "vivid"], in: sandbox,
                                    environment: ["PHOTOKERNELS_BAND_SAMPLES": "20"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        let expected = (1...5).flatMap {
            libraryFile(Self.frame($0), layout: .rgb, recipe: Self.vivid, outputLayout: .rgb, format: .rawPPM)
        }
        #expect(try sandbox.read("clip.ppm") == Data(expected))
    }

    @Test("one very long row is cut into slices and matches the whole-image result")
    func longRow() throws {
        let sandbox = try Sandbox()
        let width = 2_500_000
        let row = Fixtures.image(width, 1, depth: 1, maxval: 255, tupleType: .grayscale, format: .rawPGM,
                                 samples: Fixtures.samples(width, maxval: 255, seed: 21))
        try sandbox.write("row.pgm", Fixtures.bytes(row))
        // Sepia turns the grey row to colour: 3 output samples a pixel, slices of 349 525.
        let result = try Tool.run(["apply", "row.pgm", "-o", "row.pnm", "--effect", "sepia", "--vignette", "0.9"],
                                  in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let recipe = Recipe(effect: .sepia(intensity: 1), vignette: .vignette(intensity: 0.9, radius: 1))
        #expect(try sandbox.read("row.pnm")
                == Data(libraryFile(row, layout: .gray, recipe: recipe, outputLayout: .rgb, format: .rawPPM)))
    }

    @Test("--max-pixels raises or lowers the pixel limit, and the error says so")
    func pixelLimit() throws {
        let sandbox = try Sandbox()
        try sandbox.write("in.ppm", Fixtures.bytes(Self.frame(1)))
        let refused = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--max-pixels", "23"], in: sandbox)
        #expect(refused.status == 65)
        #expect(refused.stderr.hasPrefix("Error: in.ppm: ") && refused.stderr.contains("--max-pixels"), "\(refused.stderr)")
        let accepted = try Tool.run(["apply", "in.ppm", "-o", "out.ppm", "--max-pixels", "24"], in: sandbox)
        #expect(accepted.status == 0)

        // Above the default 2^28 pixels: refused by default; with the limit raised the
        // header passes and only the (missing) raster is wrong.
        try sandbox.write("huge.pgm", Array("P5\n16385 16385\n255\n".utf8) + [1, 2, 3])
        let byDefault = try Tool.run(["apply", "huge.pgm", "-o", "out.pgm"], in: sandbox)
        #expect(byDefault.status == 65 && byDefault.stderr.contains("--max-pixels"), "\(byDefault.stderr)")
        let raised = try Tool.run(["apply", "huge.pgm", "-o", "out.pgm", "--max-pixels", "300000000"], in: sandbox)
        #expect(raised.status == 65 && raised.stderr.contains("Netpbm raster, frame 1: "), "\(raised.stderr)")
        #expect(try sandbox.contents() == ["huge.pgm", "in.ppm", "out.ppm"])
    }

    @Test("memory stays bounded: 64 MP of P5 streamed through a pipe")
    func boundedMemory() throws {
        let executable = try #require(Tool.url)
        let (width, height) = (8000, 8000)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["apply", "-", "-o", "-", "--exposure", "0.3"]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        try? input.fileHandleForReading.close()
        try input.fileHandleForWriting.write(contentsOf: Data("P5\n\(width) \(height)\n255\n".utf8))
        // Generated row by row: the test holds 8 rows, never the image.
        var rows = [UInt8](repeating: 0, count: 8 * width)
        for band in 0..<(height / 8) {
            for i in rows.indices { rows[i] = UInt8(truncatingIfNeeded: i &* 7 &+ band &* 13) }
            try input.fileHandleForWriting.write(contentsOf: rows)
        }
        // The whole raster is in; the tool waits for the next image or the end.
        let peak = Tool.peakResidentKiB(of: process.processIdentifier)
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(message)")
        let kib = try #require(peak, "no VmHWM in /proc/\(process.processIdentifier)/status")
        // 64 MP would be 64 MB as bytes (128 MB as the old 16-bit raster) alone.
        #expect(kib < 64 * 1024, "peak resident set \(kib) KiB for a 64 MB raster")
    }
}

/// A process that the hang guard may stop from another thread.
struct UncheckedProcess: @unchecked Sendable {
    let process: Process
    init(_ process: Process) { self.process = process }
}
