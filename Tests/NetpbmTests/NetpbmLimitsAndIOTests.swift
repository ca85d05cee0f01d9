// Limits (pixels, decoded bytes, input bytes), file and stream reading, the format and
// tuple-type enums, and error descriptions.

import Foundation
import Testing
@testable import Netpbm

@Suite("Netpbm limits and I/O")
struct NetpbmLimitsAndIOTests {

    /// A P5 image of `width × height` zero samples.
    func gray(_ width: Int, _ height: Int) -> [UInt8] {
        ascii("P5 \(width) \(height) 255\n") + [UInt8](repeating: 0, count: width * height)
    }

    @Test("Defaults")
    func defaults() {
        #expect(NetpbmLimits.default.maxPixels == 268_435_456)
        #expect(NetpbmLimits.default.maxBytes == 4 << 30)
        #expect(NetpbmLimits.maxTokenDigits == 20)
        #expect(NetpbmLimits.maxPAMHeaderLineBytes == 1024)
        #expect(NetpbmLimits.maxTupleTypeBytes == 255)
    }

    @Test("maxPixels is enforced before allocating")
    func pixelLimit() {
        #expect(readError(gray(10, 10), limits: NetpbmLimits(maxPixels: 99)) == .exceedsPixelLimit(width: 10, height: 10, limit: 99, offset: 0))
        #expect(readError(gray(10, 10), limits: NetpbmLimits(maxPixels: 100)) == nil)
    }

    @Test("maxBytes bounds decoded samples (2 bytes each), summed over readAll")
    func byteLimit() {
        let rgb = ascii("P6 10 10 255\n") + [UInt8](repeating: 0, count: 300)
        #expect(readError(rgb, limits: NetpbmLimits(maxBytes: 599)) == .exceedsByteLimit(bytes: 600, limit: 599, offset: 0))
        #expect(readError(rgb, limits: NetpbmLimits(maxBytes: 600)) == nil)
        let two = gray(10, 10) + gray(10, 10)
        #expect(readAllError(two, limits: NetpbmLimits(maxBytes: 400)) == nil)
        #expect(readAllError(two, limits: NetpbmLimits(maxBytes: 300))
            == .exceedsByteLimit(bytes: 400, limit: 300, offset: gray(10, 10).count))
    }

    @Test("Stream input is bounded by maxBytes")
    func streamLimit() throws {
        let bytes = gray(10, 10)  // 113 bytes in, 200 bytes of samples out
        let total = 2 * bytes.count
        func readPipe(_ limits: NetpbmLimits) throws(NetpbmError) -> [NetpbmImage] {
            let pipe = Pipe()
            pipe.fileHandleForWriting.write(Data(bytes + bytes))
            try? pipe.fileHandleForWriting.close()
            return try NetpbmReader.read(from: pipe.fileHandleForReading, limits: limits)
        }
        #expect(try readPipe(.default).count == 2)
        #expect(try readPipe(NetpbmLimits(maxBytes: 400)).count == 2)
        #expect(throws: NetpbmError.inputTooLarge(limit: total - 1, offset: total - 1)) {
            try readPipe(NetpbmLimits(maxBytes: total - 1))
        }
        // The whole stream fits, but the decoded samples of both images do not.
        #expect(throws: NetpbmError.exceedsByteLimit(bytes: 400, limit: total, offset: bytes.count)) {
            try readPipe(NetpbmLimits(maxBytes: total))
        }
    }

    @Test("Streams longer than one read chunk")
    func largeStream() throws {
        let bytes = ascii("P5 1500 1000 255\n") + (0..<1_500_000).map { UInt8(truncatingIfNeeded: $0) }
        let pipe = Pipe()
        let writer = pipe.fileHandleForWriting
        // Write from another thread: the pipe buffer is far smaller than the image.
        let thread = Thread {
            writer.write(Data(bytes))
            try? writer.close()
        }
        thread.start()
        let images = try NetpbmReader.read(from: pipe.fileHandleForReading)
        #expect(images.count == 1)
        #expect(images.first?.samples.count == 1_500_000)
        #expect(images.first?.samples.last == UInt16(truncatingIfNeeded: 1_499_999 & 0xFF))
    }

    @Test("Files: read, readAll, size limit, missing file")
    func files() throws {
        try withTemporaryDirectory("netpbm-io") { directory in
            let url = directory.appendingPathComponent("two.pgm")
            try Data(gray(10, 10) + gray(2, 1)).write(to: url)

            #expect(try NetpbmReader.read(contentsOf: url).width == 10)
            #expect(try NetpbmReader.readAll(contentsOf: url).map(\.width) == [10, 2])
            #expect(throws: NetpbmError.inputTooLarge(limit: 100, offset: 100)) {
                try NetpbmReader.read(contentsOf: url, limits: NetpbmLimits(maxBytes: 100))
            }
            let missing = directory.appendingPathComponent("missing.pgm")
            do {
                _ = try NetpbmReader.read(contentsOf: missing)
                Issue.record("expected a read failure")
            } catch {
                guard case .readFailed(let path, let reason)? = error as? NetpbmError else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(path == missing.path)
                #expect(reason == "No such file or directory", "the system's words: \(reason)")
            }
            // A directory: the system's words too, from Foundation's underlying error.
            #expect(throws: NetpbmError.readFailed(path: directory.path, reason: String(cString: strerror(EISDIR)))) {
                try NetpbmReader.read(contentsOf: directory)
            }
        }
    }

    @Test("Formats and tuple types")
    func enums() {
        #expect(NetpbmFormat.allCases.map(\.magic) == ["P1", "P2", "P3", "P4", "P5", "P6", "P7"])
        #expect(NetpbmFormat.allCases.filter(\.isPlain) == [.plainPBM, .plainPGM, .plainPPM])
        #expect(NetpbmFormat(magic: "P6") == .rawPPM)
        #expect(NetpbmFormat(magic: "P8") == nil)
        let standard: [TupleType] = [.blackAndWhite, .grayscale, .rgb, .blackAndWhiteAlpha, .grayscaleAlpha, .rgbAlpha]
        #expect(standard.map(\.rawValue) == ["BLACKANDWHITE", "GRAYSCALE", "RGB", "BLACKANDWHITE_ALPHA", "GRAYSCALE_ALPHA", "RGB_ALPHA"])
        #expect(standard.map { TupleType(rawValue: $0.rawValue) } == standard)
        #expect(standard.map(\.hasAlpha) == [false, false, false, true, true, true])
        #expect(standard.map(\.colorDepth) == [1, 1, 3, 1, 1, 3])
        #expect(standard.map(\.minimumDepth) == [1, 1, 3, 2, 2, 4])
        #expect(TupleType(rawValue: "rgb") == .other("rgb"))
        #expect(TupleType.other("RGB") == .rgb)
        #expect(Set([TupleType.other("RGB"), .rgb]).count == 1)
        #expect(TupleType.other("CMYK").colorDepth == nil)
        #expect(TupleType.other("CMYK").minimumDepth == 1)
    }

    @Test("Descriptions name the problem and the byte offset")
    func descriptions() {
        let error = NetpbmError.numberTooLarge(field: .height, digits: "358888888632", limit: 2147483647, offset: 5)
        #expect(error.description == "Netpbm header: height 358888888632 is larger than 2147483647 (byte offset 5)")
        #expect(error.phase == .header)
        #expect(error.offset == 5)
        let all: [NetpbmError] = [
            .invalidMagic(found: [0x89, 0x50], offset: 0),
            .unsupportedFormat(name: "PFM", offset: 0),
            .unexpectedEnd(expected: .height, offset: 4),
            .unterminatedComment(offset: 3),
            .unexpectedByte(found: 0x2D, expected: .width, offset: 3),
            .tokenTooLong(field: .width, limit: 20, offset: 3),
            .zeroValue(field: .maxval, offset: 7),
            .pamHeaderLineTooLong(limit: 1024, offset: 3),
            .pamUnknownKeyword(keyword: "FOO", offset: 3),
            .pamDuplicateKeyword(keyword: "WIDTH", offset: 11),
            .pamMissingKeyword(keyword: "DEPTH", offset: 30),
            .pamTupleTypeTooLong(length: 300, limit: 255, offset: 40),
            .depthTooSmallForTupleType(depth: 3, tupleType: .rgbAlpha, required: 4, offset: 20),
            .exceedsPixelLimit(width: 60000, height: 60000, limit: 1 << 28, offset: 0),
            .exceedsByteLimit(bytes: 600, limit: 599, offset: 0),
            .sizeOverflow(width: 1, height: 2, depth: 3, offset: 0),
            .inputTooLarge(limit: 10, offset: 10),
            .truncatedRaster(expectedBytes: 4, availableBytes: 3, offset: 11),
            .missingSamples(expected: 4, found: 3, offset: 19),
            .sampleAboveMaxval(value: 12, maxval: 11, offset: 11),
        ]
        for error in all {
            #expect(error.description.hasSuffix("byte offset \(error.offset ?? -1))"), "\(error.description)")
            #expect(error.description.hasPrefix("Netpbm "))
        }
        #expect(NetpbmError.unexpectedByte(found: 0x2D, expected: .width, offset: 3).description
            == "Netpbm header: expected the width (decimal digits) but found '-' (0x2D) (byte offset 3)")
        #expect(NetpbmError.invalidMagic(found: [0x89, 0x50], offset: 0).description
            == "Netpbm signature: the image starts with \"\\x89P\", which is not a Netpbm magic number P1–P7 (byte offset 0)")
        #expect(NetpbmError.sampleAboveMaxval(value: 12, maxval: 11, offset: 11).phase == .raster)
        #expect(NetpbmError.tokenTooLong(field: .sample, limit: 20, offset: 3).phase == .raster)
        #expect(NetpbmError.depthMismatch(format: .rawPGM, depth: 3, required: 1).description
            == "Netpbm writer: P5 needs depth 1 but the image has depth 3")
        #expect(NetpbmError.nothingToWrite.offset == nil)
    }
}
