// Reading Netpbm images: P1–P7 from memory, files and streams.
//
// What is read: PBM (P1, P4), PGM (P2, P5), PPM (P3, P6) and PAM (P7), any maxval
// 1...65535, one or several images per stream. What is not: PFM (`PF`/`Pf`), XV thumbnails
// (`P7 332`), and anything whose first two bytes are not `P1`…`P7` — the file name or
// extension is never consulted.
//
// The header parser and raster decoder are those of NetpbmStreamReader, run over the whole
// input as one window; what is particular to this reader is that it sees the input's end
// before decoding, so a raster the input cannot hold is refused before it is allocated.
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
                while position < buffer.count, InputWindow.isWhitespace(buffer[position]) { position += 1 }
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
    /// This holds the whole stream and every decoded image in memory; to read image by
    /// image and band by band in constant memory, use ``NetpbmStreamReader``.
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

    /// The system's message behind a Foundation file error ("No such file or
    /// directory"), else the error's description.
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        // Foundation keeps the errno as its underlying error (a `POSIXError` value on
        // Linux, which bridges through `any Error` but not by a cast to `NSError`).
        let posix = nsError.domain == NSPOSIXErrorDomain
            ? nsError : (nsError.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        guard let posix, posix.domain == NSPOSIXErrorDomain else { return nsError.localizedDescription }
        return String(cString: strerror(Int32(truncatingIfNeeded: posix.code)))
    }

    // MARK: - One image

    /// Decodes the image whose magic number is at `start`, with the header parser and
    /// raster decoder ``NetpbmStreamReader`` uses, over the input as one window.
    ///
    /// - Parameter usedBytes: sample bytes already decoded by earlier images of the same
    ///   `readAll`, counted against `limits.maxBytes`.
    /// - Returns: the image and the offset just past its raster.
    static func decodeImage(
        _ bytes: UnsafeBufferPointer<UInt8>, at start: Int, limits: NetpbmLimits, usedBytes: Int
    ) throws(NetpbmError) -> (image: NetpbmImage, end: Int) {
        var window = InputWindow(memory: bytes, position: start)
        let header = try NetpbmHeader.parse(&window, limits: limits, usedBytes: usedBytes)
        var decoder = RasterDecoder(header: header, rasterStart: window.offset)
        // The whole input is at hand: refuse a raster it cannot hold before allocating.
        guard decoder.rasterBytes <= window.available else { throw decoder.truncated(window) }

        let count = header.sampleCount
        var failure: NetpbmError?
        let samples = [UInt16](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = 0
            guard let base = buffer.baseAddress else { return }
            do throws(NetpbmError) {
                try decoder.decode(&window, into: base, count: count)
                initialized = count
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        let image = NetpbmImage(
            unchecked: header.width, height: header.height, depth: header.depth,
            maxval: header.maxval, tupleType: header.tupleType, samples: samples,
            format: header.format)
        return (image, window.offset)
    }
}
