// The stream reader and writer: round trips for every format and sample width in slices of
// any size, chunk boundaries anywhere, multi-image streams, frame-numbered errors with exact
// offsets, the usage errors, a broken pipe, and agreement with the whole-image reader and
// writer (the writer also against a reference encoder written from the format pages).

import Foundation
import Testing
@testable import Netpbm

@Suite("Netpbm streams")
struct NetpbmStreamTests {

    // MARK: Helpers

    /// Reads every image of `reader`, `band` samples per call, growing the result only by
    /// what was decoded (a header's size is never allocated up front).
    static func readImages(_ reader: NetpbmStreamReader, band: Int) throws(NetpbmError) -> [NetpbmImage] {
        var images: [NetpbmImage] = []
        var buffer = [UInt16](repeating: 0, count: band)
        while let header = try reader.nextImage() {
            var samples: [UInt16] = []
            while reader.remainingSamples > 0 {
                let count = min(band, reader.remainingSamples)
                try buffer.withUnsafeMutableBufferPointer { (all) throws(NetpbmError) in
                    try reader.readSamples(into: UnsafeMutableBufferPointer(rebasing: all[..<count]))
                }
                samples += buffer[..<count]
            }
            images.append(image(header, samples))
        }
        return images
    }

    /// As ``readImages(_:band:)`` with 8-bit samples (every image's maxval ≤ 255).
    static func readImages8(_ reader: NetpbmStreamReader, band: Int) throws(NetpbmError) -> [NetpbmImage] {
        var images: [NetpbmImage] = []
        var buffer = [UInt8](repeating: 0, count: band)
        while let header = try reader.nextImage() {
            var samples: [UInt16] = []
            while reader.remainingSamples > 0 {
                let count = min(band, reader.remainingSamples)
                try buffer.withUnsafeMutableBufferPointer { (all) throws(NetpbmError) in
                    try reader.readSamples(into: UnsafeMutableBufferPointer(rebasing: all[..<count]))
                }
                samples += buffer[..<count].map { UInt16($0) }
            }
            images.append(image(header, samples))
        }
        return images
    }

    static func image(_ header: NetpbmHeader, _ samples: [UInt16]) -> NetpbmImage {
        NetpbmImage(
            unchecked: header.width, height: header.height, depth: header.depth, maxval: header.maxval,
            tupleType: header.tupleType, samples: samples, format: header.format)
    }

    /// The images of `bytes` read through a simulated pipe returning `readSize` bytes per
    /// read, or the error.
    static func stream(_ bytes: [UInt8], readSize: Int, band: Int, limits: NetpbmLimits = .default)
        -> Result<[NetpbmImage], NetpbmError>
    {
        let reader = NetpbmStreamReader(bytes: bytes, readSize: readSize, limits: limits)
        return Result { () throws(NetpbmError) in try readImages(reader, band: band) }
    }

    /// The error a stream read of `bytes` throws (whole, 5-byte reads), or `nil`.
    static func streamError(_ bytes: [UInt8], limits: NetpbmLimits = .default) -> NetpbmError? {
        if case .failure(let error) = stream(bytes, readSize: 5, band: 3, limits: limits) { return error }
        return nil
    }

    /// Writes `image` with a stream writer, `slices` samples per call cycling through the
    /// list, and returns the bytes.
    static func streamEncode(_ image: NetpbmImage, as format: NetpbmFormat, slices: [Int], eightBit: Bool = false)
        throws(NetpbmError) -> [UInt8]
    {
        let writer = NetpbmStreamWriter()
        try writer.beginImage(NetpbmHeader(image, as: format))
        try writeSamples(image.samples, to: writer, slices: slices, eightBit: eightBit)
        try writer.endImage()
        try writer.flush()
        return writer.bytes
    }

    static func writeSamples(_ samples: [UInt16], to writer: NetpbmStreamWriter, slices: [Int], eightBit: Bool = false)
        throws(NetpbmError)
    {
        var done = 0
        var turn = 0
        let narrow = samples.map { UInt8(truncatingIfNeeded: $0) }
        while done < samples.count {
            let count = min(slices[turn % slices.count], samples.count - done)
            turn += 1
            if eightBit {
                try narrow.withUnsafeBufferPointer { (all) throws(NetpbmError) in
                    try writer.writeSamples(UnsafeBufferPointer(rebasing: all[done..<done + count]))
                }
            } else {
                try samples.withUnsafeBufferPointer { (all) throws(NetpbmError) in
                    try writer.writeSamples(UnsafeBufferPointer(rebasing: all[done..<done + count]))
                }
            }
            done += count
        }
    }

    /// The encoding written out from pbm(5), pgm(5), ppm(5), pam(5) and SPEC §9 in the
    /// plainest way (strings, one row at a time), to check the writers against.
    static func referenceEncode(_ image: NetpbmImage, as format: NetpbmFormat) -> [UInt8] {
        var out: [UInt8]
        switch format {
        case .pam:
            var text = "P7\nWIDTH \(image.width)\nHEIGHT \(image.height)\nDEPTH \(image.depth)\nMAXVAL \(image.maxval)\n"
            if !image.tupleType.rawValue.isEmpty { text += "TUPLTYPE \(image.tupleType.rawValue)\n" }
            out = ascii(text + "ENDHDR\n")
        case .plainPBM, .rawPBM:
            out = ascii("\(format.magic)\n\(image.width) \(image.height)\n")
        default:
            out = ascii("\(format.magic)\n\(image.width) \(image.height)\n\(image.maxval)\n")
        }
        let rowLength = image.width * image.depth
        for y in 0..<image.height {
            let row = Array(image.samples[(y * rowLength)..<((y + 1) * rowLength)])
            switch format {
            case .rawPGM, .rawPPM, .pam:
                for s in row { out += image.maxval < 256 ? [UInt8(s)] : [UInt8(s >> 8), UInt8(s & 0xFF)] }
            case .rawPBM:
                var bytes = [UInt8](repeating: 0, count: (image.width + 7) / 8)
                for (x, s) in row.enumerated() where s == 0 { bytes[x / 8] |= 0x80 >> UInt8(x % 8) }
                out += bytes
            case .plainPBM:
                var text = ""
                for (x, s) in row.enumerated() {
                    if x > 0, x % 70 == 0 { text += "\n" }
                    text += s == 0 ? "1" : "0"
                }
                out += ascii(text + "\n")
            case .plainPGM, .plainPPM:
                var line = ""
                for token in row.map(String.init) {
                    if line.isEmpty {
                        line = token
                    } else if line.count + 1 + token.count > 70 {
                        out += ascii(line + "\n")
                        line = token
                    } else {
                        line += " " + token
                    }
                }
                out += ascii(line + "\n")
            }
        }
        return out
    }

    /// Seeded samples in 0...maxval, with 0 and maxval present.
    static func samples(_ count: Int, maxval: Int, seed: UInt64) -> [UInt16] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { i in
            switch i % 7 {
            case 0: return 0
            case 3: return UInt16(maxval)
            default: return UInt16(Int.random(in: 0...maxval, using: &generator))
            }
        }
    }

    /// One image per format and sample width, odd sizes: partial P4 bytes, wrapping plain
    /// lines, 16-bit samples, PAM depths 1, 2 and 4.
    static let images: [NetpbmImage] = {
        func make(_ w: Int, _ h: Int, _ d: Int, _ m: Int, _ t: TupleType, _ f: NetpbmFormat, _ seed: UInt64) -> NetpbmImage {
            try! NetpbmImage(width: w, height: h, depth: d, maxval: m, tupleType: t,
                             samples: samples(w * h * d, maxval: m, seed: seed), format: f)
        }
        return [
            make(13, 5, 1, 1, .blackAndWhite, .plainPBM, 1),
            make(75, 3, 1, 1, .blackAndWhite, .plainPBM, 2),
            make(13, 5, 1, 1, .blackAndWhite, .rawPBM, 3),
            make(1, 7, 1, 1, .blackAndWhite, .rawPBM, 4),
            make(17, 3, 1, 255, .grayscale, .plainPGM, 5),
            make(9, 4, 1, 65535, .grayscale, .plainPGM, 6),
            make(11, 3, 3, 15, .rgb, .plainPPM, 7),
            make(7, 5, 3, 1000, .rgb, .plainPPM, 8),
            make(17, 5, 1, 255, .grayscale, .rawPGM, 9),
            make(17, 5, 1, 11, .grayscale, .rawPGM, 10),
            make(17, 5, 1, 65535, .grayscale, .rawPGM, 11),
            make(33, 3, 3, 255, .rgb, .rawPPM, 12),
            make(31, 3, 3, 4095, .rgb, .rawPPM, 13),
            make(7, 6, 4, 65535, .rgbAlpha, .pam, 14),
            make(5, 5, 2, 255, .grayscaleAlpha, .pam, 15),
            make(3, 9, 1, 1, .blackAndWhite, .pam, 16),
            make(6, 2, 5, 300, .other("CMYK_PLUS"), .pam, 17),
        ]
    }()

    // MARK: Round trips and slicing

    @Test("Writer bytes equal NetpbmWriter.encode and the reference encoding, in slices of any size",
          arguments: [[1], [7], [2, 3, 5, 11], [1 << 20]])
    func writerMatchesEncode(slices: [Int]) throws {
        for image in Self.images {
            let expected = Self.referenceEncode(image, as: image.format)
            #expect(try NetpbmWriter.encode(image) == expected, "\(image.format.magic) maxval \(image.maxval)")
            #expect(try Self.streamEncode(image, as: image.format, slices: slices) == expected,
                    "\(image.format.magic) maxval \(image.maxval) slices \(slices)")
            if image.maxval <= 255 {
                #expect(try Self.streamEncode(image, as: image.format, slices: slices, eightBit: true) == expected)
            }
            // The same samples in every other format that can hold them.
            for format in NetpbmFormat.allCases where format != image.format {
                guard let header = try? NetpbmHeader(image, as: format) else { continue }
                #expect(header.format == format)
                #expect(try Self.streamEncode(image, as: format, slices: slices) == Self.referenceEncode(image, as: format),
                        "\(image.format.magic) as \(format.magic)")
            }
        }
    }

    @Test("8-bit samples into a 16-bit raster are stored big-endian")
    func eightBitIntoSixteen() throws {
        let writer = NetpbmStreamWriter()
        try writer.beginImage(NetpbmHeader(format: .rawPGM, width: 3, height: 1, maxval: 1000))
        let samples: [UInt8] = [0, 1, 255]
        try samples.withUnsafeBufferPointer { (buffer) throws(NetpbmError) in try writer.writeSamples(buffer) }
        try writer.endImage()
        #expect(writer.bytes == ascii("P5\n3 1\n1000\n") + [0, 0, 0, 1, 0, 255])
    }

    @Test("Reading in slices of 1, 7, 13 and all, through reads of 1, 2, 3, 64 bytes, gives the whole-image samples",
          arguments: [1, 2, 3, 64])
    func readSlicing(readSize: Int) throws {
        for image in Self.images {
            let bytes = try NetpbmWriter.encode(image)
            for band in [1, 7, 13, image.samples.count] {
                let decoded = try Self.stream(bytes, readSize: readSize, band: band).get()
                #expect(decoded == [image], "\(image.format.magic) maxval \(image.maxval) read \(readSize) band \(band)")
                if image.maxval <= 255 {
                    let reader = NetpbmStreamReader(bytes: bytes, readSize: readSize)
                    #expect(try Self.readImages8(reader, band: band) == [image])
                }
            }
        }
    }

    @Test("Seeded random slice sizes and read sizes agree with the whole-image reader")
    func randomSlicing() throws {
        var generator = SeededGenerator(seed: 0x5EED)
        let stream = try NetpbmWriter.encode(Self.images)
        for _ in 0..<40 {
            let readSize = Int.random(in: 1...97, using: &generator)
            let reader = NetpbmStreamReader(bytes: stream, readSize: readSize)
            var decoded: [NetpbmImage] = []
            while let header = try reader.nextImage() {
                var samples = [UInt16](repeating: 0xFFFF, count: header.sampleCount)
                var done = 0
                while done < samples.count {
                    let count = min(Int.random(in: 1...29, using: &generator), samples.count - done)
                    try samples.withUnsafeMutableBufferPointer { (all) throws(NetpbmError) in
                        try reader.readSamples(into: UnsafeMutableBufferPointer(rebasing: all[done..<done + count]))
                    }
                    done += count
                }
                decoded.append(Self.image(header, samples))
            }
            #expect(decoded == Self.images, "read size \(readSize)")
        }
    }

    @Test("A one-row image read a few pixels at a time: P4 bit position kept across slices and reads")
    func oneRowSlices() throws {
        // 4093 pixels: 511 full bytes and 5 bits; slices of 3 and 37 cross every byte edge.
        let width = 4093
        let pixels = Self.samples(width, maxval: 1, seed: 99)
        let image = try NetpbmImage(width: width, height: 1, depth: 1, maxval: 1, tupleType: .blackAndWhite,
                                    samples: pixels, format: .rawPBM)
        let bytes = try NetpbmWriter.encode(image)
        #expect(bytes.count == ascii("P4\n4093 1\n").count + 512)
        for (readSize, band) in [(1, 3), (5, 37), (4096, 3), (7, 4093)] {
            #expect(try Self.stream(bytes, readSize: readSize, band: band).get() == [image])
        }
        // A 16-bit row whose samples straddle every 3-byte read.
        let wide = try NetpbmImage(width: 4001, height: 1, depth: 1, maxval: 65535, tupleType: .grayscale,
                                   samples: Self.samples(4001, maxval: 65535, seed: 7), format: .rawPGM)
        #expect(try Self.stream(NetpbmWriter.encode(wide), readSize: 3, band: 17).get() == [wide])
    }

    @Test("Headers: fields, derived sizes, defaults, and the checks of the initializer")
    func headers() throws {
        let reader = NetpbmStreamReader(bytes: ascii("P7\nWIDTH 3\nHEIGHT 2\nDEPTH 4\nMAXVAL 1023\nTUPLTYPE RGB_ALPHA\nENDHDR\n") + [UInt8](repeating: 0, count: 48))
        let header = try #require(try reader.nextImage())
        #expect(header == (try NetpbmHeader(format: .pam, width: 3, height: 2, depth: 4, maxval: 1023, tupleType: .rgbAlpha)))
        #expect(header.bytesPerSample == 2)
        #expect(header.samplesPerRow == 12)
        #expect(header.sampleCount == 24)
        #expect(reader.header == header)
        #expect(reader.frame == 1)
        #expect(reader.remainingSamples == 24)
        #expect(reader.offset == 66)

        let ppm = try NetpbmHeader(format: .rawPPM, width: 2, height: 2, maxval: 255)
        #expect(ppm.depth == 3 && ppm.tupleType == .rgb && ppm.bytesPerSample == 1)
        #expect(try NetpbmHeader(format: .plainPBM, width: 1, height: 1, maxval: 1).tupleType == .blackAndWhite)
        #expect(try NetpbmHeader(format: .pam, width: 1, height: 1, maxval: 9, tupleType: .grayscaleAlpha).depth == 2)
        #expect(try NetpbmHeader(format: .pam, width: 1, height: 1, maxval: 9).tupleType.rawValue == "")

        #expect(throws: NetpbmError.invalidImageSize(width: 0, height: 1, depth: 1)) {
            try NetpbmHeader(format: .rawPGM, width: 0, height: 1, maxval: 255)
        }
        #expect(throws: NetpbmError.invalidImageSize(width: Int.max / 2, height: 3, depth: 1)) {
            try NetpbmHeader(format: .rawPGM, width: Int.max / 2, height: 3, maxval: 255)
        }
        #expect(throws: NetpbmError.invalidMaxval(65536)) {
            try NetpbmHeader(format: .rawPGM, width: 1, height: 1, maxval: 65536)
        }
        #expect(throws: NetpbmError.depthMismatch(format: .rawPPM, depth: 4, required: 3)) {
            try NetpbmHeader(format: .rawPPM, width: 1, height: 1, depth: 4, maxval: 255)
        }
        #expect(throws: NetpbmError.maxvalMismatch(format: .rawPBM, maxval: 255, required: 1)) {
            try NetpbmHeader(format: .rawPBM, width: 1, height: 1, maxval: 255)
        }
        #expect(throws: NetpbmError.imageDepthTooSmallForTupleType(depth: 3, tupleType: .rgbAlpha, required: 4)) {
            try NetpbmHeader(format: .pam, width: 1, height: 1, depth: 3, maxval: 255, tupleType: .rgbAlpha)
        }
        #expect(throws: NetpbmError.invalidTupleType(" RGB")) {
            try NetpbmHeader(format: .pam, width: 1, height: 1, depth: 3, maxval: 255, tupleType: .other(" RGB"))
        }
    }

    // MARK: Several images

    @Test("Multi-image streams: headers in order, each at its byte offset, whitespace between, nil at the end and after")
    func multiImage() throws {
        var bytes: [UInt8] = []
        var starts: [Int] = []
        for (index, image) in Self.images.enumerated() {
            starts.append(bytes.count)
            bytes += try NetpbmWriter.encode(image)
            bytes += ascii(index % 2 == 0 ? "" : " \n\t\r\u{0B}\u{0C}")
        }
        let offsets = NetpbmStreamReader(bytes: bytes)
        #expect(offsets.headerOffset == 0)
        for start in starts {
            _ = try offsets.nextImage()
            #expect(offsets.headerOffset == start)
        }
        for readSize in [3, 4096] {
            let reader = NetpbmStreamReader(bytes: bytes, readSize: readSize)
            #expect(try Self.readImages(reader, band: 10) == Self.images)
            #expect(reader.frame == Self.images.count)
            #expect(try reader.nextImage() == nil)
            #expect(reader.header == nil)
            #expect(reader.remainingSamples == 0)
        }
        #expect(try Self.stream(bytes, readSize: 7, band: 5).get() == (try NetpbmReader.readAll(bytes)))
    }

    @Test("nextImage skips what was not read of the current image, still checking it")
    func skipping() throws {
        let bytes = try NetpbmWriter.encode(Self.images)
        let reader = NetpbmStreamReader(bytes: bytes, readSize: 11)
        var headers: [NetpbmHeader] = []
        var firstSamples: [UInt16] = []
        var one: UInt16 = 0
        while let header = try reader.nextImage() {
            headers.append(header)
            // Read one sample of every second image, none of the others.
            if headers.count % 2 == 0 {
                try withUnsafeMutablePointer(to: &one) { (pointer) throws(NetpbmError) in
                    try reader.readSamples(into: UnsafeMutableBufferPointer(start: pointer, count: 1))
                }
                firstSamples.append(one)
            }
        }
        #expect(headers == (try Self.images.map { (image) throws(NetpbmError) in try NetpbmHeader(image) }))
        #expect(firstSamples == Self.images.enumerated().filter { $0.offset % 2 == 1 }.map { $0.element.samples[0] })

        // A bad sample in a part that was skipped is still an error, in its frame.
        var broken = ascii("P5 2 2 200\n") + [0, 0, 0, 0] + ascii("P5 2 2 200\n") + [0, 0, 201, 0]
        let skipper = NetpbmStreamReader(bytes: broken)
        _ = try skipper.nextImage()
        _ = try skipper.nextImage()
        #expect(throws: NetpbmError.inFrame(2, .sampleAboveMaxval(value: 201, maxval: 200, offset: 28))) {
            try skipper.nextImage()
        }
        broken[28] = 0
        #expect(Self.streamError(broken) == nil)
    }

    @Test("maxBytes applies to each image of a stream, not to their sum")
    func perImageLimit() throws {
        let image = ascii("P5 10 10 255\n") + [UInt8](repeating: 7, count: 100)  // 200 decoded bytes
        let three = image + image + image
        let limits = NetpbmLimits(maxBytes: 200)
        #expect(try Self.stream(three, readSize: 64, band: 33, limits: limits).get().count == 3)
        #expect(readAllError(three, limits: limits) == .exceedsByteLimit(bytes: 400, limit: 200, offset: image.count))
        let bigger = image + image + ascii("P5 10 11 255\n") + [UInt8](repeating: 7, count: 110)
        #expect(Self.streamError(bigger, limits: limits)
            == .inFrame(3, .exceedsByteLimit(bytes: 220, limit: 200, offset: 2 * image.count)))
    }

    // MARK: Errors: frame and offset

    @Test("Truncation in a header, mid-raster, and in frame k of n names the frame and the offset")
    func truncation() throws {
        // Headers that end early: the height, a PAM line, the byte before the raster, all.
        #expect(Self.streamError(ascii("P5 3")) == .inFrame(1, .unexpectedEnd(expected: .height, offset: 4)))
        #expect(Self.streamError(ascii("P7\nWIDTH 3\n")) == .inFrame(1, .unexpectedEnd(expected: .endOfHeader, offset: 11)))
        #expect(Self.streamError(ascii("P5 3 2 255")) == .inFrame(1, .unexpectedEnd(expected: .rasterSeparator, offset: 10)))
        #expect(Self.streamError([]) == .inFrame(1, .unexpectedEnd(expected: .magic, offset: 0)))

        // Mid-raster, raw: the raster starts at 11 and needs 6 bytes; 4 are there.
        let short = ascii("P5 3 2 255\n") + [1, 2, 3, 4]
        let midRaster = NetpbmError.inFrame(1, .truncatedRaster(expectedBytes: 6, availableBytes: 4, offset: 11))
        #expect(Self.streamError(short) == midRaster)
        #expect(midRaster.description
            == "Netpbm raster, frame 1: the raster needs 6 bytes but the input ends after 4 of them, at byte offset 15 (raster at byte offset 11)")
        // The samples before the end were delivered.
        let reader = NetpbmStreamReader(bytes: short)
        _ = try reader.nextImage()
        var four = [UInt16](repeating: 0, count: 4)
        try four.withUnsafeMutableBufferPointer { (buffer) throws(NetpbmError) in try reader.readSamples(into: buffer) }
        #expect(four == [1, 2, 3, 4])
        #expect(throws: midRaster) {
            try four.withUnsafeMutableBufferPointer { (buffer) throws(NetpbmError) in
                try reader.readSamples(into: UnsafeMutableBufferPointer(rebasing: buffer[..<1]))
            }
        }
        // Failed for good: every later call throws the same error.
        #expect(throws: midRaster) { try reader.nextImage() }

        // Plain: too short for the samples (lower bound), or ends after some of them.
        // (The raster of a plain image starts right after the last header digit.)
        #expect(Self.streamError(ascii("P2 3 1 9\n1 2")) == .inFrame(1, .truncatedRaster(expectedBytes: 5, availableBytes: 4, offset: 8)))
        #expect(Self.streamError(ascii("P2 3 1 9\n1 2   ")) == .inFrame(1, .missingSamples(expected: 3, found: 2, offset: 15)))
        #expect(Self.streamError(ascii("P1 4 1\n01")) == .inFrame(1, .truncatedRaster(expectedBytes: 4, availableBytes: 3, offset: 6)))

        // Frame 3 of 3, each P6 2×2 (11 header bytes + 12 raster bytes = 23); the third
        // image's raster starts at 2 × 23 + 11 = 57 and has 5 of its 12 bytes.
        let one = ascii("P6\n2 2\n255\n") + [UInt8](repeating: 9, count: 12)
        #expect(one.count == 23)
        let header = ascii("P6 2 2 255\n")
        var frames = header + [UInt8](repeating: 9, count: 12)
        frames += header + [UInt8](repeating: 9, count: 12)
        frames += header + [UInt8](repeating: 9, count: 5)
        #expect(Self.streamError(frames) == .inFrame(3, .truncatedRaster(expectedBytes: 12, availableBytes: 5, offset: 57)))
        // The same, 16-bit, ending in the middle of a sample.
        let wide = ascii("P5 2 1 999\n") + [0, 1, 0, 2] + ascii("P5 2 1 999\n") + [0, 1, 0]
        #expect(Self.streamError(wide) == .inFrame(2, .truncatedRaster(expectedBytes: 4, availableBytes: 3, offset: 26)))
        // A truncated header in frame 2.
        #expect(Self.streamError(one + ascii("\nP6 2")) == .inFrame(2, .unexpectedEnd(expected: .height, offset: 28)))

        // Where nothing precedes the end, readAll reports the same case at the same offset.
        for bytes in [ascii("P5 3"), ascii("P5 3 2 255"), short, ascii("P2 3 1 9\n1 2"), ascii("P2 3 1 9\n1 2   "),
                      ascii("P1 4 1\n01"), frames, wide, one + ascii("\nP6 2")] {
            #expect(readAllError(bytes) == Self.streamError(bytes)?.underlying)
        }
    }

    @Test("Garbage after an image, a bad sample and bad plain bytes name their frame and offset")
    func garbageAndBadSamples() {
        let one = ascii("P5 1 1 255\n") + [5]
        #expect(Self.streamError(one + ascii("\n\nxyz")) == .inFrame(2, .invalidMagic(found: ascii("xy"), offset: 14)))
        #expect(Self.streamError(one + ascii(" P")) == .inFrame(2, .unexpectedEnd(expected: .magic, offset: 14)))
        #expect(Self.streamError(one + ascii("P9")) == .inFrame(2, .invalidMagic(found: ascii("P9"), offset: 12)))
        #expect(Self.streamError(one + one + ascii("P5 2 1 100\n") + [100, 101])
            == .inFrame(3, .sampleAboveMaxval(value: 101, maxval: 100, offset: 36)))
        #expect(Self.streamError(ascii("P5 1 1 1000\n") + [0x03, 0xE9])
            == .inFrame(1, .sampleAboveMaxval(value: 1001, maxval: 1000, offset: 12)))
        #expect(Self.streamError(ascii("P2 2 1 9\n3 10")) == .inFrame(1, .sampleAboveMaxval(value: 10, maxval: 9, offset: 11)))
        #expect(Self.streamError(ascii("P1 2 1\n0 2")) == .inFrame(1, .unexpectedByte(found: 0x32, expected: .sample, offset: 9)))
        #expect(Self.streamError(ascii("P2 2 1 9\n3 # comment to the end"))
            == .inFrame(1, .unterminatedComment(offset: 11)))
        let error = NetpbmError.inFrame(57, .sampleAboveMaxval(value: 12, maxval: 11, offset: 9000))
        #expect(error.description == "Netpbm raster, frame 57: sample 12 is larger than maxval 11 (byte offset 9000)")
        #expect(error.frame == 57)
        #expect(error.underlying == .sampleAboveMaxval(value: 12, maxval: 11, offset: 9000))
        #expect(error.offset == 9000)
        #expect(error.phase == .raster)
        #expect(NetpbmError.brokenPipe(path: "x").frame == nil)
    }

    @Test("A header claiming 16384×16384 over a few bytes: the header is returned, nothing is allocated for it")
    func hugeHeaderFewBytes() throws {
        let bytes = ascii("P5 16384 16384 255\n") + [1, 2, 3]
        let reader = NetpbmStreamReader(bytes: bytes)
        let header = try #require(try reader.nextImage())
        #expect(header.sampleCount == 1 << 28)
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(throws: NetpbmError.inFrame(1, .truncatedRaster(expectedBytes: 1 << 28, availableBytes: 3, offset: 19))) {
            try buffer.withUnsafeMutableBufferPointer { (all) throws(NetpbmError) in try reader.readSamples(into: all) }
        }
        // Over the pixel limit: refused at the header.
        #expect(Self.streamError(ascii("P5 60000 60000 255\n"))
            == .inFrame(1, .exceedsPixelLimit(width: 60000, height: 60000, limit: 1 << 28, offset: 0)))
    }

    @Test("Usage errors are thrown unwrapped, read nothing and leave the reader usable")
    func readerUsage() throws {
        let reader = NetpbmStreamReader(bytes: ascii("P5 2 1 1000\n") + [0, 1, 0, 2])
        var two = [UInt16](repeating: 0, count: 2)
        var three = [UInt16](repeating: 0, count: 3)
        var eight = [UInt8](repeating: 0, count: 1)
        #expect(throws: NetpbmError.tooManySamples(requested: 2, remaining: 0)) {
            try two.withUnsafeMutableBufferPointer { (b) throws(NetpbmError) in try reader.readSamples(into: b) }
        }
        _ = try reader.nextImage()
        #expect(throws: NetpbmError.tooManySamples(requested: 3, remaining: 2)) {
            try three.withUnsafeMutableBufferPointer { (b) throws(NetpbmError) in try reader.readSamples(into: b) }
        }
        #expect(throws: NetpbmError.sampleTypeTooNarrow(maxval: 1000)) {
            try eight.withUnsafeMutableBufferPointer { (b) throws(NetpbmError) in try reader.readSamples(into: b) }
        }
        #expect(NetpbmError.sampleTypeTooNarrow(maxval: 1000).phase == .usage)
        try two.withUnsafeMutableBufferPointer { (b) throws(NetpbmError) in try reader.readSamples(into: b) }
        #expect(two == [1, 2])
        #expect(try reader.nextImage() == nil)
    }

    @Test("Writer usage: samples need an image, images need all their samples, samples must fit maxval")
    func writerUsage() throws {
        let writer = NetpbmStreamWriter()
        let samples: [UInt16] = [1, 2, 3, 4, 300, 6]
        func write(_ range: Range<Int>) throws(NetpbmError) {
            try samples.withUnsafeBufferPointer { (all) throws(NetpbmError) in
                try writer.writeSamples(UnsafeBufferPointer(rebasing: all[range]))
            }
        }
        #expect(throws: NetpbmError.tooManySamples(requested: 2, remaining: 0)) { try write(0..<2) }
        try writer.beginImage(NetpbmHeader(format: .rawPGM, width: 3, height: 2, maxval: 255))
        try write(0..<2)
        #expect(throws: NetpbmError.tooManySamples(requested: 5, remaining: 4)) { try write(0..<5) }
        // Sample 300 is the image's sample 4 (index counted over the whole image).
        #expect(throws: NetpbmError.sampleOutOfRange(value: 300, maxval: 255, index: 4)) { try write(2..<6) }
        #expect(writer.remainingSamples == 4)
        #expect(throws: NetpbmError.incompleteImage(expected: 6, written: 2)) { try writer.endImage() }
        #expect(throws: NetpbmError.incompleteImage(expected: 6, written: 2)) {
            try writer.beginImage(NetpbmHeader(format: .rawPGM, width: 1, height: 1, maxval: 255))
        }
        try write(2..<4)
        try write(2..<4)
        try writer.endImage()
        #expect(writer.bytes == ascii("P5\n3 2\n255\n") + [1, 2, 3, 4, 3, 4])
        #expect(writer.frame == 1)
        // A header read from a file may carry a tuple type that cannot be written.
        let odd = NetpbmHeader(unchecked: .pam, width: 1, height: 1, depth: 1, maxval: 1, tupleType: .other("A\tB"))
        #expect(throws: NetpbmError.invalidTupleType("A\tB")) { try writer.beginImage(odd) }
    }

    // MARK: File descriptors

    @Test("Pipes and files: a writer thread feeds the reader through a real pipe")
    func pipes() throws {
        let bytes = try NetpbmWriter.encode(Self.images)
        let pipe = Pipe()
        let input = pipe.fileHandleForWriting
        let thread = Thread {
            let writer = NetpbmStreamWriter(fileHandle: input, name: "test pipe")
            do {
                for image in Self.images {
                    try writer.beginImage(NetpbmHeader(image))
                    try Self.writeSamples(image.samples, to: writer, slices: [5, 1, 64])
                    try writer.endImage()
                    try writer.flush()  // one flush per image, so the reader sees each one
                }
            } catch {
                Issue.record("writer thread: \(error)")
            }
            try? input.close()
        }
        thread.start()
        let reader = NetpbmStreamReader(fileHandle: pipe.fileHandleForReading, name: "test pipe")
        #expect(try Self.readImages(reader, band: 19) == Self.images)

        try withTemporaryDirectory("netpbm-stream") { directory in
            let url = directory.appendingPathComponent("all.pam")
            try Data(bytes).write(to: url)
            #expect(try Self.readImages(NetpbmStreamReader(contentsOf: url), band: 1000) == Self.images)
            let missing = directory.appendingPathComponent("missing.pgm")
            #expect(throws: NetpbmError.readFailed(path: missing.path, reason: String(cString: strerror(ENOENT)))) {
                try NetpbmStreamReader(contentsOf: missing)
            }
        }
    }

    @Test("checkRasterLength refuses a raster the input lacks before any sample is read, where the length is known")
    func rasterLengthChecked() throws {
        // The raster starts at 11 and needs 6 bytes; 4 are there.
        let short = ascii("P5 3 2 255\n") + [1, 2, 3, 4]
        let missing = NetpbmError.inFrame(1, .truncatedRaster(expectedBytes: 6, availableBytes: 4, offset: 11))
        func check(_ reader: NetpbmStreamReader) throws(NetpbmError) {
            _ = try reader.nextImage()
            try reader.checkRasterLength()
        }
        #expect(throws: missing) { try check(NetpbmStreamReader(bytes: short)) }
        #expect(throws: missing) { try check(NetpbmStreamReader(bytes: short, readSize: 3)) }
        // The stream is over, as after the same error from reading the samples.
        let failed = NetpbmStreamReader(bytes: short)
        #expect(throws: missing) { try check(failed) }
        var one = [UInt16](repeating: 0, count: 1)
        #expect(throws: missing) {
            try one.withUnsafeMutableBufferPointer { (buffer) throws(NetpbmError) in try failed.readSamples(into: buffer) }
        }
        // A plain raster: its least length, as the reading reports it.
        #expect(throws: NetpbmError.inFrame(1, .truncatedRaster(expectedBytes: 5, availableBytes: 4, offset: 8))) {
            try check(NetpbmStreamReader(bytes: ascii("P2 3 1 9\n1 2")))
        }
        // A whole raster passes, and its samples are read as ever.
        let whole = NetpbmStreamReader(bytes: ascii("P5 3 2 255\n") + [1, 2, 3, 4, 5, 6])
        try check(whole)
        var six = [UInt16](repeating: 0, count: 6)
        try six.withUnsafeMutableBufferPointer { (buffer) throws(NetpbmError) in try whole.readSamples(into: buffer) }
        #expect(six == [1, 2, 3, 4, 5, 6])
        // Once a sample is read, nothing is checked: the reading reports the end.
        let started = NetpbmStreamReader(bytes: short)
        _ = try started.nextImage()
        try one.withUnsafeMutableBufferPointer { (buffer) throws(NetpbmError) in try started.readSamples(into: buffer) }
        try started.checkRasterLength()

        // Files: the size less the position, the window's unread bytes included, in the
        // second frame of a file read from its sixth byte on.
        try withTemporaryDirectory("netpbm-length") { directory in
            let url = directory.appendingPathComponent("short.pgm")
            try Data(short).write(to: url)
            #expect(throws: missing) { try check(NetpbmStreamReader(contentsOf: url)) }
            let framed = directory.appendingPathComponent("framed.pgm")
            try Data(ascii("junk\n") + ascii("P5 3 2 255\n") + [1, 2, 3, 4, 5, 6] + short).write(to: framed)
            let descriptor = open(framed.path, O_RDONLY)
            try #require(descriptor >= 0)
            defer { close(descriptor) }
            #expect(lseek(descriptor, 5, SEEK_SET) == 5)
            let second = NetpbmStreamReader(fileDescriptor: descriptor, name: "framed.pgm")
            try check(second)
            #expect(throws: NetpbmError.inFrame(2, .truncatedRaster(expectedBytes: 6, availableBytes: 4, offset: 28))) {
                try check(second)
            }

            // A pipe whose writer is still open has no known length: nothing is checked, and
            // the reading reports the end when it comes.
            let pipe = Pipe()
            let written = DispatchSemaphore(value: 0), checked = DispatchSemaphore(value: 0)
            let input = pipe.fileHandleForWriting
            Thread {
                input.write(Data(ascii("P5 300 200 255\n") + [UInt8](repeating: 7, count: 4000)))
                written.signal()
                checked.wait()
                try? input.close()
            }.start()
            written.wait()
            let piped = NetpbmStreamReader(fileHandle: pipe.fileHandleForReading, name: "test pipe")
            try check(piped)
            checked.signal()
            var all = [UInt16](repeating: 0, count: 60_000)
            #expect(throws: NetpbmError.inFrame(1, .truncatedRaster(expectedBytes: 60_000, availableBytes: 4000, offset: 15))) {
                try all.withUnsafeMutableBufferPointer { (buffer) throws(NetpbmError) in try piped.readSamples(into: buffer) }
            }
        }
    }

    @Test("Writing to a pipe whose reading end is closed is brokenPipe (SIGPIPE ignored), and stays failed")
    func brokenPipe() throws {
        signal(SIGPIPE, SIG_IGN)
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        defer { close(ends[1]) }
        let writer = NetpbmStreamWriter(fileDescriptor: ends[1], name: "test pipe")
        try writer.beginImage(NetpbmHeader(format: .rawPGM, width: 2, height: 1, maxval: 255))
        let samples: [UInt8] = [1, 2]
        try samples.withUnsafeBufferPointer { (b) throws(NetpbmError) in try writer.writeSamples(b) }
        try writer.endImage()
        #expect(writer.bytes == [])  // only an in-memory writer keeps its bytes
        #expect(throws: NetpbmError.brokenPipe(path: "test pipe")) { try writer.flush() }
        #expect(throws: NetpbmError.brokenPipe(path: "test pipe")) {
            try writer.beginImage(NetpbmHeader(format: .rawPGM, width: 2, height: 1, maxval: 255))
        }
        #expect(NetpbmError.brokenPipe(path: "test pipe").phase == .io)
        #expect(NetpbmError.brokenPipe(path: "test pipe").description
            == "Netpbm I/O: cannot write test pipe: the reading end of the pipe is closed (EPIPE)")
    }

    // MARK: Agreement with the whole-image reader

    @Test("Seeded random corruption: the stream reader accepts exactly what readAll accepts, with the same images")
    func randomCorruptionAgrees() throws {
        var generator = SeededGenerator(seed: 0xC0FFEE)
        let valid = try NetpbmWriter.encode(Array(Self.images.prefix(9)))
        for round in 0..<300 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.removeLast(Int.random(in: 0..<min(40, bytes.count), using: &generator))
                default: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0...bytes.count, using: &generator))
                }
            }
            let whole = Result { () throws(NetpbmError) in try NetpbmReader.readAll(bytes) }
            let streamed = Self.stream(bytes, readSize: Int.random(in: 1...300, using: &generator),
                                       band: Int.random(in: 1...50, using: &generator))
            switch (whole, streamed) {
            case (.success(let a), .success(let b)):
                #expect(a == b, "round \(round)")
            case (.failure(let a), .failure(let b)):
                #expect(b.frame != nil, "round \(round)")
                // Both report the same problem, except that readAll finds a raster too
                // short for its samples before decoding it, and the stream only when it
                // gets to the end (so an earlier bad byte comes first).
                if a != b.underlying, case .truncatedRaster = a {} else if a != b.underlying {
                    Issue.record("round \(round): readAll threw \(a) but the stream \(b)")
                }
            default:
                Issue.record("round \(round): readAll \(whole) but stream \(streamed)")
            }
        }
    }
}
