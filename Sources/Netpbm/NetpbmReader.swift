// Reading Netpbm images: P1–P7 from memory, files and streams.
//
// What is read: PBM (P1, P4), PGM (P2, P5), PPM (P3, P6) and PAM (P7), any maxval
// 1...65535, one or several images per stream. What is not: PFM (`PF`/`Pf`), XV thumbnails
// (`P7 332`), and anything whose first two bytes are not `P1`…`P7` — the file name or
// extension is never consulted.
//
// Safety: every size comes from an overflow-checked product, is compared with
// NetpbmLimits and with the bytes actually present, and only then allocated. No input can
// trap (no force unwraps, no unchecked arithmetic on header values, every index checked)
// and every loop advances through the input, so nothing hangs.

import Foundation

/// Decodes Netpbm images into ``NetpbmImage`` values.
///
/// Each decoded image keeps the file's integers: `samples` are row-major, top row first,
/// `depth` interleaved samples per pixel, each in `0...maxval`; PBM is returned as
/// maxval 1 with **1 = white** (the file's 1 = black is inverted), like PAM BLACKANDWHITE.
///
/// Byte offsets in errors count from the first byte of the input (0-based).
public enum NetpbmReader {

    /// Decodes the first image in `bytes`. Bytes after its raster are ignored.
    ///
    /// - Parameters:
    ///   - bytes: the encoded image: `[UInt8]`, `Data`, an `ArraySlice`, … (collections
    ///     without contiguous storage are copied once).
    ///   - limits: size limits checked before allocating (see ``NetpbmLimits``).
    /// - Returns: the image, with `format` set to the format read.
    /// - Throws: ``NetpbmError`` of the signature, header, limits or raster phase.
    /// - Complexity: O(header + raster bytes); raw rasters decode in one pass over an
    ///   `UnsafeBufferPointer`.
    public static func read<Bytes: Collection<UInt8>>(
        _ bytes: Bytes, limits: NetpbmLimits = .default
    ) throws(NetpbmError) -> NetpbmImage {
        try withContiguousBytes(bytes) { buffer throws(NetpbmError) in
            try decodeImage(buffer, at: 0, limits: limits, usedBytes: 0).image
        }
    }

    /// Decodes every image of a stream: images follow each other directly, and whitespace
    /// between or after them is skipped (libnetpbm's `pm_nextimage`).
    ///
    /// After the last image only whitespace may remain: any other byte must start another
    /// image, otherwise its decoding error is thrown (usually
    /// ``NetpbmError/invalidMagic(found:offset:)`` at that byte). Plain images may also be
    /// followed by further images, as libnetpbm allows, although pbm(5) says a plain file
    /// holds one. ``NetpbmLimits/maxBytes`` bounds the decoded samples of all images together.
    ///
    /// - Returns: at least one image.
    /// - Throws: ``NetpbmError``; an empty input throws
    ///   ``NetpbmError/unexpectedEnd(expected:offset:)`` for the magic number.
    public static func readAll<Bytes: Collection<UInt8>>(
        _ bytes: Bytes, limits: NetpbmLimits = .default
    ) throws(NetpbmError) -> [NetpbmImage] {
        try withContiguousBytes(bytes) { buffer throws(NetpbmError) in
            var images: [NetpbmImage] = []
            var position = 0
            var usedBytes = 0
            repeat {
                let (image, end) = try decodeImage(buffer, at: position, limits: limits, usedBytes: usedBytes)
                images.append(image)
                usedBytes += image.samples.count * 2  // within maxBytes: checked by decodeImage
                position = end
                while position < buffer.count, HeaderScanner.isWhitespace(buffer[position]) { position += 1 }
            } while position < buffer.count
            return images
        }
    }

    /// Reads the file at `url` and decodes its first image.
    ///
    /// - Throws: ``NetpbmError/inputTooLarge(limit:offset:)`` if the file is longer than
    ///   `limits.maxBytes`; ``NetpbmError/readFailed(path:reason:)``; decoding errors as
    ///   for ``read(_:limits:)``.
    public static func read(contentsOf url: URL, limits: NetpbmLimits = .default) throws(NetpbmError) -> NetpbmImage {
        try read(readFile(url, limit: limits.maxBytes), limits: limits)
    }

    /// Reads the file at `url` and decodes all its images (see ``readAll(_:limits:)``).
    public static func readAll(contentsOf url: URL, limits: NetpbmLimits = .default) throws(NetpbmError) -> [NetpbmImage] {
        try readAll(readFile(url, limit: limits.maxBytes), limits: limits)
    }

    /// Reads `handle` (a pipe such as standard input, or a file) to its end in chunks, then
    /// decodes every image (see ``readAll(_:limits:)``).
    ///
    /// At most `limits.maxBytes` bytes are buffered: reading stops with
    /// ``NetpbmError/inputTooLarge(limit:offset:)`` as soon as the stream proves longer.
    /// - Throws: ``NetpbmError/readFailed(path:reason:)`` (path `"<stream>"`) if reading fails.
    public static func read(from handle: FileHandle, limits: NetpbmLimits = .default) throws(NetpbmError) -> [NetpbmImage] {
        try readAll(readStream(handle, limit: limits.maxBytes, name: "<stream>"), limits: limits)
    }

    // MARK: - Input

    /// Runs `body` over the bytes as one contiguous buffer, copying only when needed.
    static func withContiguousBytes<Bytes: Collection<UInt8>, Result>(
        _ bytes: Bytes, _ body: (UnsafeBufferPointer<UInt8>) throws(NetpbmError) -> Result
    ) throws(NetpbmError) -> Result {
        // `withContiguousStorageIfAvailable` rethrows untyped errors; carry the typed one
        // out in a Swift.Result instead.
        if let outcome = bytes.withContiguousStorageIfAvailable({ buffer in
            Swift.Result { () throws(NetpbmError) -> Result in try body(buffer) }
        }) {
            return try outcome.get()
        }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer in
            Swift.Result { () throws(NetpbmError) -> Result in try body(buffer) }
        }.get()
    }

    /// Loads a file, refusing files longer than `limit`. Regular files are checked by size
    /// first and then read whole (not memory-mapped: a file truncated while mapped would
    /// crash the process); anything else (FIFOs, devices) is read as a stream.
    static func readFile(_ url: URL, limit: Int) throws(NetpbmError) -> Data {
        let path = url.path
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw .readFailed(path: path, reason: Self.reason(error))
        }
        let isRegular = (attributes[.type] as? FileAttributeType) == .typeRegular
        if isRegular {
            let size = (attributes[.size] as? NSNumber)?.intValue ?? (attributes[.size] as? Int) ?? 0
            if size > limit { throw .inputTooLarge(limit: limit, offset: max(limit, 0)) }
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw .readFailed(path: path, reason: Self.reason(error))
            }
            // The file may have grown since it was measured.
            if data.count > limit { throw .inputTooLarge(limit: limit, offset: max(limit, 0)) }
            return data
        }
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw .readFailed(path: path, reason: Self.reason(error))
        }
        defer { try? handle.close() }
        return Data(try readStream(handle, limit: limit, name: path))
    }

    /// Reads `handle` to its end in chunks of up to 1 MiB, never holding more than `limit`
    /// bytes.
    static func readStream(_ handle: FileHandle, limit: Int, name: String) throws(NetpbmError) -> [UInt8] {
        let limit = max(limit, 0)
        let chunkSize = 1 << 20
        var buffer: [UInt8] = []
        while true {
            let room = limit - buffer.count
            // Ask for one byte more than fits, so a stream exactly `limit` long is accepted
            // and a longer one is detected without reading further.
            let request = room >= chunkSize ? chunkSize : room + 1
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: request)
            } catch {
                throw .readFailed(path: name, reason: Self.reason(error))
            }
            guard let chunk, !chunk.isEmpty else { break }
            if chunk.count > room { throw .inputTooLarge(limit: limit, offset: limit) }
            buffer.append(contentsOf: chunk)
        }
        return buffer
    }

    static func reason(_ error: any Error) -> String {
        (error as NSError).localizedDescription
    }

    // MARK: - One image

    /// The header fields every format reduces to.
    struct Header {
        var format: NetpbmFormat
        var width: Int
        var height: Int
        var depth: Int
        var maxval: Int
        var tupleType: TupleType
        /// First raster byte; for plain formats the byte after the last header digit.
        var rasterStart: Int
    }

    /// Decodes the image whose magic number is at `start`.
    ///
    /// - Parameter usedBytes: sample bytes already decoded by earlier images of the same
    ///   `readAll`, counted against `limits.maxBytes`.
    /// - Returns: the image and the offset just past its raster.
    static func decodeImage(
        _ bytes: UnsafeBufferPointer<UInt8>, at start: Int, limits: NetpbmLimits, usedBytes: Int
    ) throws(NetpbmError) -> (image: NetpbmImage, end: Int) {
        let header = try readHeader(bytes, at: start)
        let sampleCount = try checkSize(header, limits: limits, usedBytes: usedBytes, imageStart: start)

        let samples: [UInt16]
        let end: Int
        switch header.format {
        case .plainPBM:
            (samples, end) = try decodePlainBitmap(bytes, header: header, count: sampleCount)
        case .plainPGM, .plainPPM:
            (samples, end) = try decodePlainSamples(bytes, header: header, count: sampleCount)
        case .rawPBM:
            (samples, end) = try decodeRawBitmap(bytes, header: header, count: sampleCount)
        case .rawPGM, .rawPPM, .pam:
            (samples, end) = try decodeRawSamples(bytes, header: header, count: sampleCount)
        }
        let image = NetpbmImage(
            unchecked: header.width, height: header.height, depth: header.depth,
            maxval: header.maxval, tupleType: header.tupleType, samples: samples,
            format: header.format)
        return (image, end)
    }

    /// Reads the magic number and the header that follows it.
    static func readHeader(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) throws(NetpbmError) -> Header {
        let format = try readSignature(bytes, at: start)
        if format == .pam {
            let pam = try PAMHeader.parse(bytes, imageStart: start)
            return Header(
                format: .pam, width: pam.width, height: pam.height, depth: pam.depth,
                maxval: pam.maxval, tupleType: pam.tupleType, rasterStart: pam.rasterStart)
        }
        var scanner = HeaderScanner(bytes, position: start + 2)
        let dimensionLimit = Int(Int32.max)  // libnetpbm's INT_MAX
        let width = try scanner.readHeaderNumber(.width, limit: dimensionLimit)
        let height = try scanner.readHeaderNumber(.height, limit: dimensionLimit)
        let maxval = format.isBitmap ? 1 : try scanner.readHeaderNumber(.maxval, limit: 65535)
        // Raw formats: exactly one separator byte; plain formats: the raster tokenizer skips
        // separators itself.
        let rasterStart = format.isPlain ? scanner.position : try scanner.consumeRasterSeparator()
        let depth = format.fixedDepth ?? 1
        let tupleType: TupleType = format.isBitmap ? .blackAndWhite : (depth == 3 ? .rgb : .grayscale)
        return Header(
            format: format, width: width, height: height, depth: depth, maxval: maxval,
            tupleType: tupleType, rasterStart: rasterStart)
    }

    /// Identifies the format from the two bytes at `start`.
    static func readSignature(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) throws(NetpbmError) -> NetpbmFormat {
        let available = bytes.count - start
        guard available > 0 else { throw .unexpectedEnd(expected: .magic, offset: start) }
        let first = bytes[start]
        guard first == 0x50 else {  // "P"
            throw .invalidMagic(found: Array(UnsafeBufferPointer(rebasing: bytes[start..<start + min(2, available)])), offset: start)
        }
        guard available > 1 else { throw .unexpectedEnd(expected: .magic, offset: start + 1) }
        let second = bytes[start + 1]
        if second == 0x46 || second == 0x66 {  // "PF", "Pf"
            throw .unsupportedFormat(name: "PFM (Portable Float Map, \"PF\"/\"Pf\")", offset: start)
        }
        guard let format = NetpbmFormat(magicDigit: second) else {
            throw .invalidMagic(found: [first, second], offset: start)
        }
        return format
    }

    /// Checks width × height × depth against the limits and returns the sample count.
    /// Every product is overflow-checked; nothing is allocated yet.
    static func checkSize(
        _ header: Header, limits: NetpbmLimits, usedBytes: Int, imageStart: Int
    ) throws(NetpbmError) -> Int {
        let (w, h, d) = (header.width, header.height, header.depth)
        let (pixels, o1) = w.multipliedReportingOverflow(by: h)
        guard !o1 else { throw .sizeOverflow(width: w, height: h, depth: d, offset: imageStart) }
        guard pixels <= limits.maxPixels else {
            throw .exceedsPixelLimit(width: w, height: h, limit: limits.maxPixels, offset: imageStart)
        }
        let (count, o2) = pixels.multipliedReportingOverflow(by: d)
        let (sampleBytes, o3) = count.multipliedReportingOverflow(by: MemoryLayout<UInt16>.size)
        guard !o2, !o3 else { throw .sizeOverflow(width: w, height: h, depth: d, offset: imageStart) }
        let (total, o4) = usedBytes.addingReportingOverflow(sampleBytes)
        guard !o4, total <= limits.maxBytes else {
            throw .exceedsByteLimit(bytes: o4 ? Int.max : total, limit: limits.maxBytes, offset: imageStart)
        }
        return count
    }

    // MARK: - Rasters

    /// P5, P6, P7: `count` samples of 1 byte (maxval < 256) or 2 bytes big-endian.
    static func decodeRawSamples(
        _ bytes: UnsafeBufferPointer<UInt8>, header: Header, count: Int
    ) throws(NetpbmError) -> ([UInt16], Int) {
        let bytesPerSample = header.maxval < 256 ? 1 : 2
        let needed = count * bytesPerSample  // ≤ the sample byte count already checked
        let start = header.rasterStart
        let available = bytes.count - start
        guard needed <= available, let base = bytes.baseAddress else {
            throw .truncatedRaster(expectedBytes: needed, availableBytes: available, offset: start)
        }
        let source = base + start
        var largest: UInt16 = 0
        let samples = [UInt16](unsafeUninitializedCapacity: count) { output, initialized in
            guard let target = output.baseAddress else { initialized = 0; return }
            // Tight loops over raw pointers; tracking the maximum keeps them branch-free
            // (and vectorisable) while still catching samples above maxval.
            if bytesPerSample == 1 {
                var high: UInt8 = 0
                for i in 0..<count {
                    let value = source[i]
                    target[i] = UInt16(value)
                    high = max(high, value)
                }
                largest = UInt16(high)
            } else {
                var high: UInt16 = 0
                for i in 0..<count {
                    let value = UInt16(source[2 &* i]) &<< 8 | UInt16(source[2 &* i &+ 1])
                    target[i] = value
                    high = max(high, value)
                }
                largest = high
            }
            initialized = count
        }
        if largest > header.maxval, let index = samples.firstIndex(where: { $0 > header.maxval }) {
            throw .sampleAboveMaxval(
                value: Int(samples[index]), maxval: header.maxval, offset: start + index * bytesPerSample)
        }
        return (samples, start + needed)
    }

    /// P4: rows of ⌈width / 8⌉ bytes, most significant bit first, 1 = black; pad bits ignored.
    /// Decoded as maxval 1 with 1 = white.
    static func decodeRawBitmap(
        _ bytes: UnsafeBufferPointer<UInt8>, header: Header, count: Int
    ) throws(NetpbmError) -> ([UInt16], Int) {
        let width = header.width
        let height = header.height
        let rowBytes = width / 8 + (width % 8 == 0 ? 0 : 1)
        let needed = rowBytes * height  // ≤ pixels, already checked
        let start = header.rasterStart
        let available = bytes.count - start
        guard needed <= available, let base = bytes.baseAddress else {
            throw .truncatedRaster(expectedBytes: needed, availableBytes: available, offset: start)
        }
        let source = base + start
        let samples = [UInt16](unsafeUninitializedCapacity: count) { output, initialized in
            guard let target = output.baseAddress else { initialized = 0; return }
            let fullBytes = width / 8
            let tailBits = width % 8
            for y in 0..<height {
                let row = source + y * rowBytes
                let out = target + y * width
                for b in 0..<fullBytes {
                    let inverted = ~row[b]  // 1 = white after inversion
                    let o = out + b * 8
                    for k in 0..<8 {
                        o[k] = UInt16((inverted &>> UInt8(7 - k)) & 1)
                    }
                }
                if tailBits > 0 {
                    let inverted = ~row[fullBytes]
                    let o = out + fullBytes * 8
                    for k in 0..<tailBits {
                        o[k] = UInt16((inverted &>> UInt8(7 - k)) & 1)
                    }
                }
            }
            initialized = count
        }
        return (samples, start + needed)
    }

    /// P1: one `0` (white) or `1` (black) per pixel; whitespace and comments may appear
    /// anywhere between pixels but are not required.
    static func decodePlainBitmap(
        _ bytes: UnsafeBufferPointer<UInt8>, header: Header, count: Int
    ) throws(NetpbmError) -> ([UInt16], Int) {
        let start = header.rasterStart
        let available = bytes.count - start
        // Each pixel needs at least one byte: refuse before allocating more than the input
        // could fill.
        guard count <= available else {
            throw .truncatedRaster(expectedBytes: count, availableBytes: available, offset: start)
        }
        var samples = [UInt16](repeating: 0, count: count)
        var scanner = HeaderScanner(bytes, position: start)
        for i in 0..<count {
            try scanner.skipSeparators()
            guard scanner.position < bytes.count else {
                throw .missingSamples(expected: count, found: i, offset: bytes.count)
            }
            switch bytes[scanner.position] {
            case 0x30: samples[i] = 1  // '0' = white
            case 0x31: samples[i] = 0  // '1' = black
            case let other:
                throw .unexpectedByte(found: other, expected: .sample, offset: scanner.position)
            }
            scanner.position += 1
        }
        return (samples, scanner.position)
    }

    /// P2, P3: decimal samples separated by whitespace or comments.
    static func decodePlainSamples(
        _ bytes: UnsafeBufferPointer<UInt8>, header: Header, count: Int
    ) throws(NetpbmError) -> ([UInt16], Int) {
        let start = header.rasterStart
        let available = bytes.count - start
        // Each sample needs a digit and all but the last a separator after it.
        let minimum = 2 * count - 1
        guard minimum <= available else {
            throw .truncatedRaster(expectedBytes: minimum, availableBytes: available, offset: start)
        }
        var samples = [UInt16](repeating: 0, count: count)
        var scanner = HeaderScanner(bytes, position: start)
        let maxval = header.maxval
        for i in 0..<count {
            try scanner.skipSeparators()
            guard scanner.position < bytes.count else {
                throw .missingSamples(expected: count, found: i, offset: bytes.count)
            }
            let byte = bytes[scanner.position]
            guard HeaderScanner.isDigit(byte) else {
                throw .unexpectedByte(found: byte, expected: .sample, offset: scanner.position)
            }
            samples[i] = UInt16(truncatingIfNeeded: try scanner.readDigits(.sample, limit: maxval))
        }
        return (samples, scanner.position)
    }
}
