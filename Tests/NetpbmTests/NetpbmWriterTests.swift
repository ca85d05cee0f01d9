// Writer: exact bytes of tiny files, the 70-character rule, round trips over every format,
// maxval, depth and width, format checks, and atomic file writing.

import Foundation
import Testing
@testable import Netpbm

@Suite("Netpbm writer")
struct NetpbmWriterTests {

    // MARK: Exact bytes

    @Test("P2 bytes: header, then one row per line")
    func plainGrayBytes() throws {
        let image = try NetpbmImage(
            width: 3, height: 1, depth: 1, maxval: 4, tupleType: .grayscale,
            samples: [0, 2, 4], format: .plainPGM)
        #expect(try NetpbmWriter.encode(image) == ascii("P2\n3 1\n4\n0 2 4\n"))
    }

    @Test("P3 bytes")
    func plainPixmapBytes() throws {
        let image = try NetpbmImage(
            width: 2, height: 2, depth: 3, maxval: 255, tupleType: .rgb,
            samples: [255, 0, 0, 0, 255, 0, 0, 0, 255, 17, 18, 19], format: .plainPPM)
        #expect(try NetpbmWriter.encode(image) == ascii("P3\n2 2\n255\n255 0 0 0 255 0\n0 0 255 17 18 19\n"))
    }

    @Test("P1 bytes: 1 = black on disk, no separators")
    func plainBitmapBytes() throws {
        let image = try NetpbmImage(
            width: 3, height: 2, depth: 1, maxval: 1, tupleType: .blackAndWhite,
            samples: [0, 1, 0, 1, 1, 0], format: .plainPBM)
        #expect(try NetpbmWriter.encode(image) == ascii("P1\n3 2\n101\n001\n"))
    }

    @Test("P4 bytes: MSB first, 1 = black, zero pad bits")
    func rawBitmapBytes() throws {
        // Row 0: black at x = 0 and x = 8; row 1: all white but x = 9.
        var pixels = [UInt16](repeating: 1, count: 20)
        pixels[0] = 0
        pixels[8] = 0
        pixels[19] = 0
        let image = try NetpbmImage(
            width: 10, height: 2, depth: 1, maxval: 1, tupleType: .blackAndWhite,
            samples: pixels, format: .rawPBM)
        #expect(try NetpbmWriter.encode(image) == ascii("P4\n10 2\n") + [0x80, 0x80, 0x00, 0x40])
    }

    @Test("P5 bytes, 8-bit and 16-bit big-endian")
    func rawGrayBytes() throws {
        let eight = try NetpbmImage(
            width: 2, height: 1, depth: 1, maxval: 255, tupleType: .grayscale,
            samples: [0, 200], format: .rawPGM)
        #expect(try NetpbmWriter.encode(eight) == ascii("P5\n2 1\n255\n") + [0, 200])
        let sixteen = try NetpbmImage(
            width: 2, height: 1, depth: 1, maxval: 1023, tupleType: .grayscale,
            samples: [1, 1023], format: .rawPGM)
        #expect(try NetpbmWriter.encode(sixteen) == ascii("P5\n2 1\n1023\n") + [0x00, 0x01, 0x03, 0xFF])
    }

    @Test("P6 bytes, 16-bit")
    func rawPixmapBytes() throws {
        let image = try NetpbmImage(
            width: 1, height: 1, depth: 3, maxval: 65535, tupleType: .rgb,
            samples: [0x1234, 0xABCD, 0xFFFF], format: .rawPPM)
        #expect(try NetpbmWriter.encode(image) == ascii("P6\n1 1\n65535\n") + [0x12, 0x34, 0xAB, 0xCD, 0xFF, 0xFF])
    }

    @Test("P7 bytes: fixed header order; TUPLTYPE omitted when empty")
    func pamBytes() throws {
        let image = try NetpbmImage(
            width: 2, height: 1, depth: 2, maxval: 255, tupleType: .grayscaleAlpha,
            samples: [10, 255, 20, 128], format: .pam)
        #expect(try NetpbmWriter.encode(image) == ascii(
            "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 2\nMAXVAL 255\nTUPLTYPE GRAYSCALE_ALPHA\nENDHDR\n") + [10, 255, 20, 128])
        var untyped = image
        untyped.tupleType = .other("")
        #expect(try NetpbmWriter.encode(untyped) == ascii(
            "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 2\nMAXVAL 255\nENDHDR\n") + [10, 255, 20, 128])
    }

    // MARK: Plain line length

    @Test("Plain lines never exceed 70 characters", arguments: [NetpbmFormat.plainPBM, .plainPGM, .plainPPM])
    func plainLineLength(format: NetpbmFormat) throws {
        let depth = format.fixedDepth ?? 1
        let maxval = format.isBitmap ? 1 : 65535
        let width = 157
        var generator = SeededGenerator(seed: 70)
        let pixels = (0..<width * 3 * depth).map { _ in UInt16.random(in: 0...UInt16(maxval), using: &generator) }
        let image = try NetpbmImage(
            width: width, height: 3, depth: depth, maxval: maxval,
            tupleType: format.isBitmap ? .blackAndWhite : (depth == 3 ? .rgb : .grayscale),
            samples: pixels, format: format)
        let bytes = try NetpbmWriter.encode(image)
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        #expect(bytes.last == 0x0A)
        #expect(lines.allSatisfy { $0.count <= NetpbmWriter.maxPlainLineLength })
        #expect(lines.contains { $0.count > 60 }, "lines should be filled, not one token each")
        #expect(try NetpbmReader.read(bytes) == image)
    }

    // MARK: Round trips

    /// Every writable format × maxval × depth × width 1…9 × height 1…3, random samples.
    @Test("Encode then decode returns the same image", arguments: NetpbmFormat.allCases)
    func roundTrip(format: NetpbmFormat) throws {
        let maxvals = format.isBitmap ? [1] : [1, 15, 255, 256, 1023, 65535]
        let depths = format.fixedDepth.map { [$0] } ?? [1, 2, 3, 4]
        var generator = SeededGenerator(seed: 0x5EED)
        var checked = 0
        for maxval in maxvals {
            for depth in depths {
                for width in 1...9 {
                    for height in 1...3 {
                        let tupleType: TupleType
                        switch (format, depth) {
                        case (_, _) where format.isBitmap: tupleType = .blackAndWhite
                        case (.pam, 1): tupleType = maxval == 1 ? .blackAndWhite : .grayscale
                        case (.pam, 2): tupleType = .grayscaleAlpha
                        case (.pam, 4): tupleType = .rgbAlpha
                        case (_, 3): tupleType = .rgb
                        default: tupleType = .grayscale
                        }
                        let count = width * height * depth
                        let values = (0..<count).map { _ in UInt16.random(in: 0...UInt16(maxval), using: &generator) }
                        let image = try NetpbmImage(
                            width: width, height: height, depth: depth, maxval: maxval,
                            tupleType: tupleType, samples: values, format: format)
                        let bytes = try NetpbmWriter.encode(image)
                        #expect(Array(bytes.prefix(2)) == ascii(format.magic))
                        let decoded = try NetpbmReader.read(bytes)
                        #expect(decoded == image, "\(format) maxval \(maxval) depth \(depth) \(width)×\(height)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == maxvals.count * depths.count * 27)
    }

    @Test("Extreme sample values survive 8- and 16-bit round trips")
    func extremeValues() throws {
        for maxval in [1, 15, 255, 256, 1023, 65535] {
            let values: [UInt16] = [0, 1, UInt16(maxval / 2), UInt16(maxval - 1), UInt16(maxval)]
            let image = try NetpbmImage(
                width: 5, height: 1, depth: 1, maxval: maxval, tupleType: .grayscale,
                samples: values, format: .rawPGM)
            for format in [NetpbmFormat.rawPGM, .plainPGM, .pam] {
                var expected = image
                expected.format = format
                #expect(try NetpbmReader.read(NetpbmWriter.encode(image, as: format)) == expected)
            }
        }
    }

    // MARK: Checks

    @Test("Depth and maxval must fit the format")
    func formatMismatch() throws {
        let rgb = try NetpbmImage(
            width: 1, height: 1, depth: 3, maxval: 255, tupleType: .rgb, samples: [1, 2, 3], format: .rawPPM)
        #expect(encodeError(rgb, as: .rawPGM) == .depthMismatch(format: .rawPGM, depth: 3, required: 1))
        #expect(encodeError(rgb, as: .plainPGM) == .depthMismatch(format: .plainPGM, depth: 3, required: 1))
        #expect(encodeError(rgb, as: .rawPBM) == .depthMismatch(format: .rawPBM, depth: 3, required: 1))
        let gray = try NetpbmImage(
            width: 1, height: 1, depth: 1, maxval: 255, tupleType: .grayscale, samples: [7], format: .rawPGM)
        #expect(encodeError(gray, as: .rawPPM) == .depthMismatch(format: .rawPPM, depth: 1, required: 3))
        #expect(encodeError(gray, as: .plainPPM) == .depthMismatch(format: .plainPPM, depth: 1, required: 3))
        #expect(encodeError(gray, as: .rawPBM) == .maxvalMismatch(format: .rawPBM, maxval: 255, required: 1))
        #expect(encodeError(gray, as: .plainPBM) == .maxvalMismatch(format: .plainPBM, maxval: 255, required: 1))
        let rgba = try NetpbmImage(
            width: 1, height: 1, depth: 4, maxval: 255, tupleType: .rgbAlpha, samples: [1, 2, 3, 4], format: .pam)
        #expect(encodeError(rgba, as: .rawPPM) == .depthMismatch(format: .rawPPM, depth: 4, required: 3))
        #expect(encodeError(rgba) == nil)
        #expect(throws: NetpbmError.nothingToWrite) { try NetpbmWriter.encode([NetpbmImage]()) }
    }

    @Test("Initializer rejects inconsistent images")
    func initializerChecks() {
        func failure(
            _ w: Int, _ h: Int, _ d: Int, _ m: Int, _ t: TupleType, _ s: [UInt16]
        ) -> NetpbmError? {
            do {
                _ = try NetpbmImage(width: w, height: h, depth: d, maxval: m, tupleType: t, samples: s, format: .pam)
                return nil
            } catch {
                return error
            }
        }
        #expect(failure(0, 1, 1, 255, .grayscale, []) == .invalidImageSize(width: 0, height: 1, depth: 1))
        #expect(failure(1, -1, 1, 255, .grayscale, []) == .invalidImageSize(width: 1, height: -1, depth: 1))
        #expect(failure(Int.max, 2, 1, 255, .grayscale, []) == .invalidImageSize(width: Int.max, height: 2, depth: 1))
        #expect(failure(1, 1, 1, 0, .grayscale, [0]) == .invalidMaxval(0))
        #expect(failure(1, 1, 1, 65536, .grayscale, [0]) == .invalidMaxval(65536))
        #expect(failure(2, 1, 1, 255, .grayscale, [0]) == .sampleCountMismatch(expected: 2, found: 1))
        #expect(failure(3, 1, 1, 15, .grayscale, [0, 16, 99]) == .sampleOutOfRange(value: 16, maxval: 15, index: 1))
        #expect(failure(1, 1, 3, 255, .rgbAlpha, [0, 0, 0])
            == .imageDepthTooSmallForTupleType(depth: 3, tupleType: .rgbAlpha, required: 4))
        #expect(failure(1, 1, 1, 255, .other("A\nB"), [0]) == .invalidTupleType("A\nB"))
        #expect(failure(1, 1, 1, 255, .other(String(repeating: "X", count: 256)), [0])
            == .invalidTupleType(String(repeating: "X", count: 256)))
        #expect(failure(1, 1, 5, 65535, .other("CMYK_SPOT"), [0, 1, 2, 3, 65535]) == nil)
    }

    @Test("The writer re-checks an image edited into an invalid state")
    func writerRevalidates() throws {
        var image = try NetpbmImage(
            width: 2, height: 1, depth: 1, maxval: 100, tupleType: .grayscale, samples: [1, 2], format: .rawPGM)
        image.samples[1] = 101
        #expect(encodeError(image) == .sampleOutOfRange(value: 101, maxval: 100, index: 1))
        image.samples.append(3)
        #expect(encodeError(image) == .sampleCountMismatch(expected: 2, found: 3))
    }

    // MARK: Files

    @Test("write is atomic: replaces the file, leaves no temporary files, reads back")
    func atomicWrite() throws {
        try withTemporaryDirectory("netpbm-writer") { directory in
            let url = directory.appendingPathComponent("out.pam")

            let first = try NetpbmImage(
                width: 2, height: 1, depth: 4, maxval: 65535, tupleType: .rgbAlpha,
                samples: [1, 2, 3, 4, 65535, 0, 7, 8], format: .pam)
            try NetpbmWriter.write(first, to: url)
            #expect(try NetpbmReader.read(contentsOf: url) == first)

            let second = try NetpbmImage(
                width: 1, height: 1, depth: 3, maxval: 255, tupleType: .rgb, samples: [9, 8, 7], format: .rawPPM)
            try NetpbmWriter.write([second, second], as: .plainPPM, to: url)
            var expected = second
            expected.format = .plainPPM
            #expect(try NetpbmReader.readAll(contentsOf: url) == [expected, expected])
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["out.pam"])

            // A failed encode leaves the existing file untouched.
            #expect(throws: NetpbmError.depthMismatch(format: .rawPGM, depth: 3, required: 1)) {
                try NetpbmWriter.write(second, as: .rawPGM, to: url)
            }
            #expect(try NetpbmReader.readAll(contentsOf: url).count == 2)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["out.pam"])
        }
    }

    @Test("write through a symbolic link replaces the file it names, keeps the link and the file's permissions")
    func writeThroughLink() throws {
        try withTemporaryDirectory("netpbm-writer") { directory in
            let target = directory.appendingPathComponent("target.ppm"), link = directory.appendingPathComponent("link.ppm")
            try Data("old".utf8).write(to: target)
            #expect(chmod(target.path, 0o640) == 0)
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "target.ppm")
            let image = try NetpbmImage(
                width: 1, height: 1, depth: 3, maxval: 255, tupleType: .rgb, samples: [9, 8, 7], format: .rawPPM)
            try NetpbmWriter.write(image, to: link)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "target.ppm")
            #expect(try NetpbmReader.read(contentsOf: target) == image)
            let mode = try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o640, "the file keeps its permissions")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["link.ppm", "target.ppm"])
        }
    }

    @Test("write into what is not a regular file: a pipe written in place (not replaced), a directory or a link to one refused; links followed across directories, by relative and absolute targets, a dangling one to create its target; a loop refused; a new file's mode as any new file's")
    func writeToOtherFiles() throws {
        try withTemporaryDirectory("netpbm-writer") { directory in
            let image = try NetpbmImage(
                width: 1, height: 1, depth: 3, maxval: 255, tupleType: .rgb, samples: [9, 8, 7], format: .rawPPM)
            let bytes = try NetpbmWriter.encode(image)
            func kind(_ path: String) -> mode_t {
                var status = stat()
                return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : 0
            }
            func url(_ name: String) -> URL { directory.appendingPathComponent(name) }
            // A pipe: opened and written, with a reader waiting (the bytes fit its buffer).
            let fifo = url("fifo.ppm")
            #expect(mkfifo(fifo.path, 0o644) == 0)
            let reader = open(fifo.path, O_RDONLY | O_NONBLOCK)
            #expect(reader >= 0)
            defer { close(reader) }
            try NetpbmWriter.write(image, to: fifo)
            var received = [UInt8](repeating: 0, count: 64)
            #expect(read(reader, &received, 64) == bytes.count && Array(received[..<bytes.count]) == bytes)
            #expect(kind(fifo.path) == S_IFIFO)
            // A directory, and a link to one: refused, left as they were.
            let folder = url("folder.ppm"), toFolder = url("to-folder.ppm")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(atPath: toFolder.path, withDestinationPath: "folder.ppm")
            for target in [folder, toFolder] {
                #expect(throws: NetpbmError.writeFailed(path: target.path, reason: "is a directory")) {
                    try NetpbmWriter.write(image, to: target)
                }
            }
            #expect(kind(folder.path) == S_IFDIR && kind(toFolder.path) == S_IFLNK)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
            // A chain across directories, `a/l1 -> ../b/l2 -> t.ppm` (dangling), then an
            // absolute link to the file it made: each link stays a link.
            try FileManager.default.createDirectory(at: url("a"), withIntermediateDirectories: false)
            try FileManager.default.createDirectory(at: url("b"), withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(atPath: url("a/l1").path, withDestinationPath: "../b/l2")
            try FileManager.default.createSymbolicLink(atPath: url("b/l2").path, withDestinationPath: "t.ppm")
            try NetpbmWriter.write(image, to: url("a/l1"))
            #expect(kind(url("a/l1").path) == S_IFLNK && kind(url("b/l2").path) == S_IFLNK)
            #expect(try NetpbmReader.read(contentsOf: url("b/t.ppm")) == image)
            try FileManager.default.createSymbolicLink(atPath: url("abs.ppm").path, withDestinationPath: url("b/t.ppm").path)
            let second = try NetpbmImage(
                width: 1, height: 1, depth: 3, maxval: 255, tupleType: .rgb, samples: [1, 2, 3], format: .rawPPM)
            try NetpbmWriter.write(second, to: url("abs.ppm"))
            #expect(kind(url("abs.ppm").path) == S_IFLNK)
            #expect(try NetpbmReader.read(contentsOf: url("b/t.ppm")) == second)
            #expect(try FileManager.default.contentsOfDirectory(atPath: url("b").path).sorted() == ["l2", "t.ppm"])
            // A new file's mode is a new file's (0666 less the umask), not the replacing 0600.
            #expect(FileManager.default.createFile(atPath: url("plain").path, contents: nil))
            let mode = { (u: URL) in (try FileManager.default.attributesOfItem(atPath: u.path)[.posixPermissions] as? NSNumber)?.intValue }
            #expect(try mode(url("b/t.ppm")) == mode(url("plain")))
            // A loop of links.
            try FileManager.default.createSymbolicLink(atPath: url("x.ppm").path, withDestinationPath: "y.ppm")
            try FileManager.default.createSymbolicLink(atPath: url("y.ppm").path, withDestinationPath: "x.ppm")
            #expect(throws: NetpbmError.writeFailed(path: url("x.ppm").path, reason: String(cString: strerror(ELOOP)))) {
                try NetpbmWriter.write(image, to: url("x.ppm"))
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
                    == ["a", "abs.ppm", "b", "fifo.ppm", "folder.ppm", "plain", "to-folder.ppm", "x.ppm", "y.ppm"])
        }
    }

    @Test("Writing into a missing directory is an I/O error")
    func writeFailure() throws {
        let image = try NetpbmImage(
            width: 1, height: 1, depth: 1, maxval: 255, tupleType: .grayscale, samples: [0], format: .rawPGM)
        let url = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/x.pgm")
        do {
            try NetpbmWriter.write(image, to: url)
            Issue.record("expected a write failure")
        } catch {
            guard case .writeFailed(let path, let reason) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(path == url.path)
            #expect(!reason.isEmpty)
            #expect(error.phase == .io)
        }
    }
}
