import Foundation
import Testing
@testable import Netpbm

/// The piecewise encoder (`NetpbmWriter.encode(_:as:pieceBytes:to:)`): its pieces,
/// joined, must be exactly `encode`'s bytes, whatever the piece size.
@Suite("Writer: encoding in pieces")
struct WriterCopyTests {
    /// Deterministic samples in 0...maxval, with 0 and maxval present.
    static func samples(_ count: Int, maxval: Int, seed: Int) -> [UInt16] {
        (0..<count).map { i in
            switch (i + seed) % 5 {
            case 0: 0
            case 1: UInt16(maxval)
            default: UInt16((i &* 2_654_435_761 &+ seed &* 40_503) % (maxval + 1))
            }
        }
    }

    static func image(_ w: Int, _ h: Int, depth: Int, maxval: Int, tupleType: TupleType, format: NetpbmFormat,
                      seed: Int) -> NetpbmImage {
        try! NetpbmImage(width: w, height: h, depth: depth, maxval: maxval, tupleType: tupleType,
                         samples: samples(w * h * depth, maxval: maxval, seed: seed), format: format)
    }

    /// One image per format and sample width, with widths that leave partial bytes,
    /// plain lines that wrap, and rows longer than the small piece sizes.
    static let images: [NetpbmImage] = [
        image(13, 3, depth: 1, maxval: 1, tupleType: .blackAndWhite, format: .plainPBM, seed: 1),
        image(75, 2, depth: 1, maxval: 1, tupleType: .blackAndWhite, format: .rawPBM, seed: 2),
        image(9, 4, depth: 1, maxval: 1000, tupleType: .grayscale, format: .plainPGM, seed: 3),
        image(11, 3, depth: 3, maxval: 255, tupleType: .rgb, format: .plainPPM, seed: 4),
        image(17, 5, depth: 1, maxval: 255, tupleType: .grayscale, format: .rawPGM, seed: 5),
        image(17, 5, depth: 1, maxval: 65535, tupleType: .grayscale, format: .rawPGM, seed: 6),
        image(33, 4, depth: 3, maxval: 255, tupleType: .rgb, format: .rawPPM, seed: 7),
        image(33, 4, depth: 3, maxval: 4095, tupleType: .rgb, format: .rawPPM, seed: 8),
        image(7, 6, depth: 4, maxval: 65535, tupleType: .rgbAlpha, format: .pam, seed: 9),
        image(5, 5, depth: 2, maxval: 255, tupleType: .grayscaleAlpha, format: .pam, seed: 10),
    ]

    /// The pieces of one piecewise encoding, and whether it ran to the end.
    static func pieces(_ images: [NetpbmImage], as format: NetpbmFormat? = nil, pieceBytes: Int,
                       stopAfter: Int = .max) throws(NetpbmError) -> (pieces: [[UInt8]], finished: Bool) {
        var pieces: [[UInt8]] = []
        let finished = try NetpbmWriter.encode(images, as: format, pieceBytes: pieceBytes) { piece in
            pieces.append(Array(piece))
            return pieces.count < stopAfter
        }
        return (pieces, finished)
    }

    @Test("pieces joined equal encode, for every format and piece size", arguments: [1, 2, 3, 7, 64, 1000, 1 << 20])
    func piecesEqualEncode(pieceBytes: Int) throws {
        for image in Self.images {
            let (pieces, finished) = try Self.pieces([image], pieceBytes: pieceBytes)
            #expect(finished)
            #expect(Array(pieces.joined()) == (try NetpbmWriter.encode(image)), "\(image.format) maxval \(image.maxval)")
            #expect(!pieces.contains { $0.isEmpty })
            if pieceBytes == 1 << 20 { #expect(pieces.count == 1) }
        }
        // A multi-image stream, as its own formats and all converted to PAM.
        for format in [nil, NetpbmFormat.pam] {
            let (pieces, _) = try Self.pieces(Self.images, as: format, pieceBytes: pieceBytes)
            #expect(Array(pieces.joined()) == (try NetpbmWriter.encode(Self.images, as: format)))
        }
    }

    @Test("raw pieces stay within the piece size, so memory does not grow with the image")
    func rawPiecesAreBounded() throws {
        let big = Self.image(64, 64, depth: 4, maxval: 65535, tupleType: .rgbAlpha, format: .pam, seed: 11)
        let (pieces, _) = try Self.pieces([big], pieceBytes: 4096)
        #expect(pieces.count >= 8)
        #expect(pieces.allSatisfy { $0.count <= 4096 + 64 })  // + the header
    }

    @Test("the sink can stop the encoding")
    func sinkStops() throws {
        let (pieces, finished) = try Self.pieces(Self.images, pieceBytes: 16, stopAfter: 3)
        #expect(!finished)
        #expect(pieces.count == 3)
    }

    @Test("every image is checked before the first piece")
    func checkedFirst() {
        var broken = Self.images[6]
        broken.samples[5] = 256  // above maxval 255
        var calls = 0
        #expect(throws: NetpbmError.self) {
            try NetpbmWriter.encode([Self.images[0], broken], pieceBytes: 1) { _ in calls += 1; return true }
        }
        #expect(calls == 0)
        #expect(throws: NetpbmError.nothingToWrite) {
            try NetpbmWriter.encode([], pieceBytes: 1) { _ in true }
        }
        // A PAM depth cannot be written as PPM: refused before anything is written.
        #expect(throws: NetpbmError.self) {
            try NetpbmWriter.encode([Self.images[8]], as: .rawPPM, pieceBytes: 1) { _ in calls += 1; return true }
        }
        #expect(calls == 0)
    }

    @Test("write streams encode's exact bytes into the file, through several buffers when large, with no temporary file left")
    func atomicWrite() throws {
        try withTemporaryDirectory("WriterCopyTests") { directory in
            let url = directory.appendingPathComponent("out.pam")
            try NetpbmWriter.write(Self.images, as: .pam, to: url)
            #expect(Array(try Data(contentsOf: url)) == (try NetpbmWriter.encode(Self.images, as: .pam)))
            // Each image in its own format, plain and raw; then 3.5 MiB, past three of the
            // writer's 1 MiB buffers, over the previous file.
            try NetpbmWriter.write(Self.images, to: url)
            #expect(Array(try Data(contentsOf: url)) == (try NetpbmWriter.encode(Self.images)))
            let large = Self.image(640, 960, depth: 3, maxval: 65535, tupleType: .rgb, format: .rawPPM, seed: 12)
            try NetpbmWriter.write(large, to: url)
            let bytes = try Data(contentsOf: url)
            #expect(bytes.count > 3 * NetpbmStreamWriter.bufferBytes)
            #expect(Array(bytes) == (try NetpbmWriter.encode(large)))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["out.pam"])
            // Nothing to write, or an image its format cannot hold: thrown before any file is
            // opened (in a missing directory, opening would fail otherwise).
            let nowhere = directory.appendingPathComponent("missing/out.pam")
            #expect(throws: NetpbmError.nothingToWrite) { try NetpbmWriter.write([], to: nowhere) }
            #expect(throws: NetpbmError.depthMismatch(format: .rawPGM, depth: 4, required: 1)) {
                try NetpbmWriter.write(Self.images[8], as: .rawPGM, to: nowhere)
            }
            #expect(throws: NetpbmError.depthMismatch(format: .rawPGM, depth: 4, required: 1)) {
                try NetpbmWriter.write(Self.images[8], as: .rawPGM, to: url)
            }
            #expect(Array(try Data(contentsOf: url)) == Array(bytes))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["out.pam"])
        }
    }

    @Test("a write that fails part way removes its temporary file and leaves the existing file as it was; the temporary file is the owner's alone while it replaces one")
    func failedWriteCleansUp() throws {
        try withTemporaryDirectory("WriterCopyTests") { directory in
            let url = directory.appendingPathComponent("out.ppm")
            try Data("old".utf8).write(to: url)
            let failure = NetpbmError.writeFailed(path: url.path, reason: "No space left on device")
            #expect(throws: failure) {
                try NetpbmWriter.writeAtomically(to: url) { (descriptor) throws(NetpbmError) in
                    // Replacing an existing file, the new one is the owner's alone until done.
                    var status = stat()
                    #expect(fstat(descriptor, &status) == 0 && status.st_mode & 0o777 == 0o600)
                    let bytes: [UInt8] = Array("P6\n1 1\n255\n".utf8)
                    #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count)
                    throw failure
                }
            }
            #expect(try Data(contentsOf: url) == Data("old".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["out.ppm"])
        }
    }
}
