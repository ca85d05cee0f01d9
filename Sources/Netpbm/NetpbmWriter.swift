// Writing Netpbm images.
//
// Output layout (no comments anywhere, LF line ends):
//
//     P1/P2/P3:  "P2\n<width> <height>\n<maxval>\n" then the raster as text: every image row
//                starts on a new line, tokens separated by one space (P1: digits with no
//                separator), lines wrapped so none exceeds 70 characters, last line ends
//                with LF. P1 has no maxval line.
//     P4/P5/P6:  "P5\n<width> <height>\n<maxval>\n" then the raw raster (P4: no maxval line;
//                rows packed MSB first, 1 = black, pad bits zero).
//     P7:        "P7\nWIDTH w\nHEIGHT h\nDEPTH d\nMAXVAL m\nTUPLTYPE t\nENDHDR\n" then the
//                raw raster (the TUPLTYPE line is left out when the tuple type is empty,
//                as libnetpbm does).
//
// Samples use 1 byte when maxval < 256, else 2 bytes big-endian. The image's maxval is
// kept. Source: pbm(5), pgm(5), ppm(5), pam(5); libnetpbm's pnm_writepaminit checks.

import Foundation

/// Encodes ``NetpbmImage`` values as P1–P7 bytes and writes files atomically.
public enum NetpbmWriter {

    /// The longest plain-format line written, in characters (pbm(5): "No line should be
    /// longer than 70 characters").
    public static let maxPlainLineLength = 70

    /// Encodes one image.
    ///
    /// - Parameters:
    ///   - image: the image; every invariant is re-checked.
    ///   - format: the output format; `nil` means `image.format`.
    /// - Returns: the complete file contents.
    /// - Throws: image-phase errors if `image` is inconsistent;
    ///   ``NetpbmError/depthMismatch(format:depth:required:)`` unless depth is 1 for PBM/PGM,
    ///   3 for PPM; ``NetpbmError/maxvalMismatch(format:maxval:required:)`` unless maxval is
    ///   1 for PBM.
    /// - Complexity: O(samples).
    public static func encode(_ image: NetpbmImage, as format: NetpbmFormat? = nil) throws(NetpbmError) -> [UInt8] {
        var output = ByteOutput()
        try append(image, as: format ?? image.format, to: &output)
        return output.bytes
    }

    /// Encodes several images one after another in one stream (each in `format`, or its own
    /// format when `format` is `nil`). ``NetpbmReader/readAll(_:limits:)`` reads them back.
    ///
    /// - Throws: ``NetpbmError/nothingToWrite`` for an empty array, otherwise as ``encode(_:as:)``.
    public static func encode(_ images: [NetpbmImage], as format: NetpbmFormat? = nil) throws(NetpbmError) -> [UInt8] {
        guard !images.isEmpty else { throw .nothingToWrite }
        var output = ByteOutput()
        for image in images {
            try append(image, as: format ?? image.format, to: &output)
        }
        return output.bytes
    }

    /// Encodes several images as ``encode(_:as:)`` does, but hands the
    /// bytes to `sink` in consecutive pieces instead of returning the whole stream, so
    /// the encoding costs one piece of memory rather than the file's size.
    ///
    /// The pieces, concatenated, are exactly the bytes `encode` returns. Every image is
    /// checked before the first piece is handed over, so a thrown error means `sink`
    /// was never called.
    ///
    /// - Parameters:
    ///   - pieceBytes: the size a piece grows to before it is handed over (at least 1;
    ///     a piece may exceed it by about one row or one header).
    ///   - sink: receives each piece, valid only during the call; returns `false` to
    ///     stop early (the caller keeps its own reason).
    /// - Returns: `false` if `sink` stopped the encoding, else `true`.
    /// - Throws: as ``encode(_:as:)``.
    /// - Complexity: O(samples); allocates one piece buffer.
    @discardableResult
    public static func encode(
        _ images: [NetpbmImage], as format: NetpbmFormat? = nil, pieceBytes: Int = 1 << 20,
        to sink: (UnsafeRawBufferPointer) -> Bool
    ) throws(NetpbmError) -> Bool {
        guard !images.isEmpty else { throw .nothingToWrite }
        for image in images { try check(image, as: format ?? image.format) }
        return withoutActuallyEscaping(sink) { sink in
            // `output` holds the sink only for the duration of this call.
            var output = ByteOutput(pieceBytes: max(pieceBytes, 1), sink: sink)
            for image in images where !output.stopped {
                appendChecked(image, as: format ?? image.format, to: &output)
            }
            output.flush()
            return !output.stopped
        }
    }

    /// Encodes `image` and writes it to `url` atomically: the bytes go to a temporary file
    /// in the same directory, which is then renamed over `url`, so readers never see a
    /// partial file and a failed write leaves any existing file untouched.
    ///
    /// - Throws: as ``encode(_:as:)``, or ``NetpbmError/writeFailed(path:reason:)``.
    public static func write(_ image: NetpbmImage, as format: NetpbmFormat? = nil, to url: URL) throws(NetpbmError) {
        try writeAtomically(encode(image, as: format), to: url)
    }

    /// Writes several images as one stream to `url`, atomically (see ``write(_:as:to:)``).
    public static func write(_ images: [NetpbmImage], as format: NetpbmFormat? = nil, to url: URL) throws(NetpbmError) {
        try writeAtomically(encode(images, as: format), to: url)
    }

    // MARK: - Encoding

    /// Checks that `image` can be stored as `format`, then appends its encoding.
    static func append(_ image: NetpbmImage, as format: NetpbmFormat, to output: inout ByteOutput) throws(NetpbmError) {
        try check(image, as: format)
        appendChecked(image, as: format, to: &output)
    }

    /// Checks that `image` is consistent and can be stored as `format`.
    static func check(_ image: NetpbmImage, as format: NetpbmFormat) throws(NetpbmError) {
        try image.validate()
        if let required = format.fixedDepth, image.depth != required {
            throw .depthMismatch(format: format, depth: image.depth, required: required)
        }
        if format.isBitmap, image.maxval != 1 {
            throw .maxvalMismatch(format: format, maxval: image.maxval, required: 1)
        }
    }

    /// Appends the encoding of an image that passed ``check(_:as:)``.
    static func appendChecked(_ image: NetpbmImage, as format: NetpbmFormat, to output: inout ByteOutput) {
        var header = format.magic + "\n"
        switch format {
        case .pam:
            header += "WIDTH \(image.width)\nHEIGHT \(image.height)\nDEPTH \(image.depth)\nMAXVAL \(image.maxval)\n"
            if !image.tupleType.rawValue.isEmpty {
                header += "TUPLTYPE \(image.tupleType.rawValue)\n"
            }
            header += "ENDHDR\n"
        case .plainPBM, .rawPBM:
            header += "\(image.width) \(image.height)\n"
        case .plainPGM, .plainPPM, .rawPGM, .rawPPM:
            header += "\(image.width) \(image.height)\n\(image.maxval)\n"
        }
        output.bytes.append(contentsOf: header.utf8)

        switch format {
        case .rawPGM, .rawPPM, .pam:
            appendRawSamples(image, to: &output)
        case .rawPBM:
            appendRawBitmap(image, to: &output)
        case .plainPGM, .plainPPM:
            appendPlainSamples(image, to: &output)
        case .plainPBM:
            appendPlainBitmap(image, to: &output)
        }
    }

    /// 1 byte per sample (maxval < 256) or 2 bytes big-endian.
    private static func appendRawSamples(_ image: NetpbmImage, to output: inout ByteOutput) {
        let total = image.samples.count
        let wide = image.maxval >= 256
        let bytesPerSample = wide ? 2 : 1
        image.samples.withUnsafeBufferPointer { samples in
            guard let all = samples.baseAddress else { return }
            var done = 0
            while done < total, !output.stopped {
                // What fills the current piece (everything when building an array).
                let room = max(1, (output.pieceBytes - output.bytes.count) / bytesPerSample)
                let count = min(room, total - done)
                let source = all + done
                let start = output.bytes.count
                output.bytes.append(contentsOf: repeatElement(0, count: count * bytesPerSample))
                output.bytes.withUnsafeMutableBufferPointer { buffer in
                    guard let base = buffer.baseAddress else { return }
                    let target = base + start
                    if wide {
                        for i in 0..<count {
                            let value = source[i]
                            target[2 &* i] = UInt8(truncatingIfNeeded: value &>> 8)
                            target[2 &* i &+ 1] = UInt8(truncatingIfNeeded: value)
                        }
                    } else {
                        for i in 0..<count {
                            target[i] = UInt8(truncatingIfNeeded: source[i])
                        }
                    }
                }
                done += count
                output.flushIfFull()
            }
        }
    }

    /// Rows packed 8 pixels per byte, MSB first, file 1 = black (image sample 0), pad bits 0.
    private static func appendRawBitmap(_ image: NetpbmImage, to output: inout ByteOutput) {
        let width = image.width
        let rowBytes = (width + 7) / 8
        output.bytes.reserveCapacity(output.bytes.count + min(rowBytes * image.height, output.pieceBytes))
        var index = 0
        for _ in 0..<image.height where !output.stopped {
            var byte: UInt8 = 0
            for x in 0..<width {
                if image.samples[index] == 0 {  // black
                    byte |= 0x80 &>> UInt8(x % 8)
                }
                index += 1
                if x % 8 == 7 {
                    output.bytes.append(byte)
                    byte = 0
                }
            }
            if width % 8 != 0 { output.bytes.append(byte) }
            output.flushIfFull()
        }
    }

    /// Decimal tokens, one space apart, each row on a new line, lines ≤ 70 characters.
    private static func appendPlainSamples(_ image: NetpbmImage, to output: inout ByteOutput) {
        let rowLength = image.width * image.depth
        var digits = [UInt8](repeating: 0, count: 5)
        var index = 0
        for _ in 0..<image.height where !output.stopped {
            var lineLength = 0
            for _ in 0..<rowLength {
                // Decimal digits of the sample, most significant first.
                var value = Int(image.samples[index])
                var length = 0
                repeat {
                    digits[4 - length] = UInt8(0x30 + value % 10)
                    value /= 10
                    length += 1
                } while value > 0
                if lineLength > 0, lineLength + 1 + length > maxPlainLineLength {
                    output.bytes.append(0x0A)
                    lineLength = 0
                }
                if lineLength > 0 {
                    output.bytes.append(0x20)
                    lineLength += 1
                }
                output.bytes.append(contentsOf: digits[(5 - length)...])
                lineLength += length
                index += 1
            }
            output.bytes.append(0x0A)
            output.flushIfFull()
        }
    }

    /// `1` for black (sample 0) and `0` for white, no separators, ≤ 70 digits per line.
    private static func appendPlainBitmap(_ image: NetpbmImage, to output: inout ByteOutput) {
        var index = 0
        for _ in 0..<image.height where !output.stopped {
            for x in 0..<image.width {
                if x > 0, x % maxPlainLineLength == 0 { output.bytes.append(0x0A) }
                output.bytes.append(image.samples[index] == 0 ? 0x31 : 0x30)
                index += 1
            }
            output.bytes.append(0x0A)
            output.flushIfFull()
        }
    }

    // MARK: - Files

    /// Writes `bytes` to a temporary file next to `url`, then renames it over `url`.
    static func writeAtomically(_ bytes: [UInt8], to url: URL) throws(NetpbmError) {
        let path = url.path
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(
            ".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        do {
            // A `Data` that borrows the array's storage rather than copying the whole file.
            try bytes.withUnsafeBytes { buffer in
                let data = buffer.baseAddress.map {
                    Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: $0), count: buffer.count, deallocator: .none)
                } ?? Data()
                try data.write(to: temporary, options: .withoutOverwriting)
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw .writeFailed(path: path, reason: NetpbmReader.reason(error))
        }
        // rename(2) replaces the destination atomically on the same file system.
        if rename(temporary.path, path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw .writeFailed(path: path, reason: reason)
        }
    }
}

/// Where the encoders append: one growing array (``NetpbmWriter/encode(_:as:)``), or a
/// piece handed to a sink whenever it reaches `pieceBytes`, then reused.
struct ByteOutput {
    /// The bytes not yet handed over.
    var bytes: [UInt8] = []
    /// The size at which `bytes` is handed to the sink.
    let pieceBytes: Int
    /// `nil`: keep everything in `bytes`.
    let sink: ((UnsafeRawBufferPointer) -> Bool)?
    /// Whether the sink asked to stop.
    private(set) var stopped = false

    /// Collects everything in `bytes`.
    init() {
        pieceBytes = Int.max
        sink = nil
    }

    /// Hands pieces of about `pieceBytes` to `sink`.
    init(pieceBytes: Int, sink: @escaping (UnsafeRawBufferPointer) -> Bool) {
        self.pieceBytes = pieceBytes
        self.sink = sink
        bytes.reserveCapacity(min(pieceBytes, 1 << 20))
    }

    /// Hands `bytes` over once they fill a piece.
    mutating func flushIfFull() {
        if bytes.count >= pieceBytes { flush() }
    }

    /// Hands over whatever is pending.
    mutating func flush() {
        guard let sink, !stopped, !bytes.isEmpty else { return }
        stopped = !bytes.withUnsafeBytes { sink($0) }
        bytes.removeAll(keepingCapacity: true)
    }
}
