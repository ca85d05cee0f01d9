// Reading a Netpbm stream image by image and band by band, in constant memory.
//
// The reader holds one fixed chunk buffer (1 MiB) and refills it with read(2); the caller
// holds the samples. Nothing is allocated from a header value, so an image of any size and
// a stream of any number of images are read with the same memory. Grammar, limits and
// errors are those of NetpbmReader (the two share their header parser and raster
// decoder); errors additionally name the image they belong to.

import Foundation

/// Reads the images of a Netpbm stream one at a time, and each image's samples in pieces
/// of any size the caller chooses.
///
/// ```swift
/// let reader = NetpbmStreamReader(fileDescriptor: STDIN_FILENO, name: "standard input")
/// let band = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: 1 << 20)
/// defer { band.deallocate() }
/// while let header = try reader.nextImage() {
///     // Whole rows per band, or part of a row when one row is longer than the band.
///     let step = header.samplesPerRow <= band.count
///         ? band.count / header.samplesPerRow * header.samplesPerRow : band.count
///     while reader.remainingSamples > 0 {
///         let slice = UnsafeMutableBufferPointer(rebasing: band[..<min(step, reader.remainingSamples)])
///         try reader.readSamples(into: slice)
///         // … use slice …
///     }
/// }
/// ```
///
/// What is read: P1–P7 exactly as ``NetpbmReader`` reads them (same header grammar, same
/// raster rules, same limits, same error cases), images following each other with
/// whitespace between them skipped (libnetpbm's `pm_nextimage`). Samples come out as
/// ``NetpbmImage/samples`` would hold them: row-major, `depth` interleaved samples per
/// pixel, each in `0...maxval`, PBM as maxval 1 with **1 = white**.
///
/// Differences from ``NetpbmReader/readAll(_:limits:)``, all because a stream cannot be
/// seen whole:
/// - ``NetpbmLimits/maxBytes`` bounds each image's decoded samples (2 bytes per sample),
///   not the sum over the stream, and the stream's length is not limited;
/// - a raster is checked as it is read: an input that ends inside a raster is reported
///   when the end is reached (the same ``NetpbmError/truncatedRaster(expectedBytes:availableBytes:offset:)``
///   or ``NetpbmError/missingSamples(expected:found:offset:)`` error), so a sample above
///   maxval before the end is reported first.
///
/// Errors: every input or I/O error is thrown as ``NetpbmError/inFrame(_:_:)`` with the
/// 1-based index of the image, wrapping the same case the whole-image reader throws, with
/// byte offsets counted from the first byte of the stream. Its description reads like
/// `Netpbm raster, frame 57: the raster needs 300 bytes but the input ends after 120 of
/// them, at byte offset 9120 (raster at byte offset 9000)`. After such an error the reader
/// stays failed and throws it again on every call. Usage errors
/// (``NetpbmError/tooManySamples(requested:remaining:)``,
/// ``NetpbmError/sampleTypeTooNarrow(maxval:)``) are thrown unwrapped, consume nothing and
/// leave the reader usable.
///
/// Memory: one ``chunkBytes`` buffer plus a few kilobytes, whatever the input. The reader
/// is a reference type because it consumes its source; it is not `Sendable` (use one from
/// one thread at a time).
public final class NetpbmStreamReader {
    /// The size of the chunk buffer and of each read(2): 1 MiB.
    public static let chunkBytes = 1 << 20

    /// The limits each image's header is checked against.
    public let limits: NetpbmLimits
    /// The current image's header: set by ``nextImage()``, `nil` before the first image
    /// and after the end of the stream.
    public private(set) var header: NetpbmHeader?
    /// The 1-based index of the current image (the one whose header was read last, or is
    /// being read); 0 before the first call to ``nextImage()``.
    public private(set) var frame = 0
    /// The byte offset of the current image's header (its magic number); 0 before the
    /// first call to ``nextImage()``.
    public private(set) var headerOffset = 0

    private var window: InputWindow
    private var decoder: RasterDecoder?
    private var failure: NetpbmError?
    private var finished = false
    /// Scratch samples for skipping the unread rest of an image.
    private let scratch: UnsafeMutablePointer<UInt16>
    private static let scratchCount = 4096
    /// What the reader must release: an in-memory copy of the input, an opened file.
    private let ownedBytes: UnsafeMutableBufferPointer<UInt8>?
    private let ownedDescriptor: Int32?
    /// Keeps a caller's `FileHandle` (and so its descriptor) open while reading.
    private let handle: FileHandle?

    /// Reads from a file descriptor (standard input is `STDIN_FILENO`), which the reader
    /// does not close. Reading starts at the descriptor's current position.
    ///
    /// - Parameters:
    ///   - name: how I/O errors name the source (e.g. a path, or `"standard input"`).
    public convenience init(fileDescriptor: Int32, limits: NetpbmLimits = .default, name: String = "<stream>") {
        self.init(
            limits: limits, source: .descriptor(fileDescriptor), capacity: Self.chunkBytes, name: name,
            ownedBytes: nil, ownedDescriptor: nil, handle: nil)
    }

    /// Reads from `fileHandle`'s descriptor; the handle is kept open while the reader
    /// lives and is not closed by it.
    public convenience init(fileHandle: FileHandle, limits: NetpbmLimits = .default, name: String = "<stream>") {
        self.init(
            limits: limits, source: .descriptor(fileHandle.fileDescriptor), capacity: Self.chunkBytes,
            name: name, ownedBytes: nil, ownedDescriptor: nil, handle: fileHandle)
    }

    /// Opens the file at `url` and reads it as a stream; the file is closed when the
    /// reader is released.
    ///
    /// - Throws: ``NetpbmError/readFailed(path:reason:)`` if the file cannot be opened.
    public convenience init(contentsOf url: URL, limits: NetpbmLimits = .default) throws(NetpbmError) {
        let path = url.path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .readFailed(path: path, reason: String(cString: strerror(errno)))
        }
        self.init(
            limits: limits, source: .descriptor(descriptor), capacity: Self.chunkBytes, name: path,
            ownedBytes: nil, ownedDescriptor: descriptor, handle: nil)
    }

    /// Reads bytes held in memory (copied once): for tests, and for data that is already
    /// loaded.
    public convenience init<Bytes: Collection<UInt8>>(bytes: Bytes, limits: NetpbmLimits = .default) {
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(bytes.count, 1))
        let count = copy.initialize(fromContentsOf: bytes)
        self.init(
            limits: limits, window: InputWindow(memory: UnsafeBufferPointer(rebasing: copy[..<count])),
            ownedBytes: copy, ownedDescriptor: nil, handle: nil)
    }

    /// Reads bytes in memory as if through a pipe that returns at most `readSize` bytes
    /// per read(2), into a buffer of `capacity` bytes: puts chunk boundaries anywhere.
    convenience init(bytes: [UInt8], readSize: Int, capacity: Int = 4096, limits: NetpbmLimits = .default) {
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(bytes.count, 1))
        let count = copy.initialize(fromContentsOf: bytes)
        // A PAM header line (1026 bytes with its line end) must fit in the buffer.
        self.init(
            limits: limits,
            source: .chunkedMemory(UnsafeBufferPointer(rebasing: copy[..<count]), next: 0, readSize: max(readSize, 1)),
            capacity: max(capacity, 2 * NetpbmLimits.maxPAMHeaderLineBytes), name: "<memory>",
            ownedBytes: copy, ownedDescriptor: nil, handle: nil)
    }

    private convenience init(
        limits: NetpbmLimits, source: InputWindow.Source, capacity: Int, name: String,
        ownedBytes: UnsafeMutableBufferPointer<UInt8>?, ownedDescriptor: Int32?, handle: FileHandle?
    ) {
        let window = InputWindow(source: source, storage: ChunkStorage(capacity: capacity), name: name)
        self.init(limits: limits, window: window, ownedBytes: ownedBytes, ownedDescriptor: ownedDescriptor, handle: handle)
    }

    private init(
        limits: NetpbmLimits, window: InputWindow, ownedBytes: UnsafeMutableBufferPointer<UInt8>?,
        ownedDescriptor: Int32?, handle: FileHandle?
    ) {
        self.limits = limits
        self.window = window
        self.ownedBytes = ownedBytes
        self.ownedDescriptor = ownedDescriptor
        self.handle = handle
        scratch = .allocate(capacity: Self.scratchCount)
    }

    deinit {
        scratch.deallocate()
        ownedBytes?.deallocate()
        if let ownedDescriptor { close(ownedDescriptor) }
    }

    /// The samples of the current image not read yet (0 without a current image).
    public var remainingSamples: Int { decoder?.remaining ?? 0 }

    /// The absolute byte offset of the next byte the reader will look at.
    public var offset: Int { window.offset }

    /// Reads the next image's header, skipping whatever of the current image's raster was
    /// not read (those samples are still decoded and checked).
    ///
    /// The first image must start at the stream's first byte. After each image,
    /// whitespace is skipped; then either the stream ends or another image must start.
    ///
    /// - Returns: the header, also stored in ``header``; `nil` when the stream ends cleanly
    ///   after an image (and on every call after that).
    /// - Throws: ``NetpbmError/inFrame(_:_:)`` wrapping a signature, header, limits, raster
    ///   or I/O error. An empty stream is an error (frame 1: the magic number is missing),
    ///   as is anything after an image that is neither whitespace nor another image (e.g.
    ///   `invalidMagic` for the next frame).
    /// - Complexity: O(header bytes + unread raster bytes of the current image).
    public func nextImage() throws(NetpbmError) -> NetpbmHeader? {
        if let failure { throw failure }
        if finished { return nil }
        if let current = decoder, current.remaining > 0 {
            try skipRest()
        }
        decoder = nil
        header = nil
        frame += 1
        do throws(NetpbmError) {
            if frame > 1 {
                try window.skipWhitespace()
                if try window.peek() == nil {
                    frame -= 1
                    finished = true
                    return nil
                }
            }
            headerOffset = window.offset
            let next = try NetpbmHeader.parse(&window, limits: limits, usedBytes: 0)
            header = next
            decoder = RasterDecoder(header: next, rasterStart: window.offset)
            return next
        } catch {
            throw fail(error)
        }
    }

    /// Checks, before any of the current image's samples are read, that the input still
    /// holds its raster, where the input's length is known (bytes in memory, a regular
    /// file): a caller that must hold an image whole can then refuse a header whose
    /// raster the input lacks before allocating for it. For a pipe, whose length is
    /// unknown until it ends, and after the first sample is read, it checks nothing.
    ///
    /// - Throws: ``NetpbmError/inFrame(_:_:)`` wrapping
    ///   ``NetpbmError/truncatedRaster(expectedBytes:availableBytes:offset:)`` (for a
    ///   plain raster, `expectedBytes` is the least it can take), the error reading the
    ///   samples would end with; the stream is then over, as after that error.
    /// - Complexity: O(1): one `fstat` and one `lseek` for a file.
    public func checkRasterLength() throws(NetpbmError) {
        if let failure { throw failure }
        guard let decoder, decoder.remaining == decoder.sampleCount,
              let left = window.knownRemainingBytes else { return }
        let available = window.offset &- decoder.rasterStart &+ left
        guard available < decoder.rasterBytes else { return }
        throw fail(.truncatedRaster(expectedBytes: decoder.rasterBytes, availableBytes: available,
                                    offset: decoder.rasterStart))
    }

    /// Fills `buffer` with the next `buffer.count` samples of the current image.
    ///
    /// Any count works: a band of rows, part of a row, one sample; consecutive calls
    /// continue where the last one stopped, and the samples are the same however the
    /// raster is sliced.
    ///
    /// - Throws: ``NetpbmError/tooManySamples(requested:remaining:)`` (unwrapped, nothing
    ///   read) if `buffer.count` exceeds ``remainingSamples``;
    ///   ``NetpbmError/inFrame(_:_:)`` wrapping a raster or I/O error, e.g.
    ///   `sampleAboveMaxval` or `truncatedRaster`. On such an error the buffer's contents
    ///   are unspecified.
    /// - Complexity: O(`buffer.count`) plus the raster bytes read.
    public func readSamples(into buffer: UnsafeMutableBufferPointer<UInt16>) throws(NetpbmError) {
        if let failure { throw failure }
        let count = buffer.count
        guard count > 0, let base = buffer.baseAddress else { return }
        try decodeSamples(count: count) { (decoder, window) throws(NetpbmError) in
            try decoder.decode(&window, into: base, count: count)
        }
    }

    /// Fills `buffer` with the next `buffer.count` samples of the current image, for
    /// images whose maxval is at most 255 (``NetpbmHeader/bytesPerSample`` 1).
    ///
    /// - Throws: as ``readSamples(into:)-(UnsafeMutableBufferPointer<UInt16>)``, and
    ///   ``NetpbmError/sampleTypeTooNarrow(maxval:)`` (unwrapped, nothing read) for a
    ///   maxval above 255.
    public func readSamples(into buffer: UnsafeMutableBufferPointer<UInt8>) throws(NetpbmError) {
        if let failure { throw failure }
        let count = buffer.count
        if let header, header.maxval > 255 { throw .sampleTypeTooNarrow(maxval: header.maxval) }
        guard count > 0, let base = buffer.baseAddress else { return }
        try decodeSamples(count: count) { (decoder, window) throws(NetpbmError) in
            try decoder.decode(&window, into: base, count: count)
        }
    }

    /// Runs `decode` for the next `count` samples of the current image on the decoder
    /// and the window; an error ends the stream (`fail`).
    private func decodeSamples(count: Int,
                               _ decode: (inout RasterDecoder, inout InputWindow) throws(NetpbmError) -> Void) throws(NetpbmError) {
        guard var current = decoder, count <= current.remaining else {
            throw .tooManySamples(requested: count, remaining: remainingSamples)
        }
        do throws(NetpbmError) {
            try decode(&current, &window)
        } catch {
            throw fail(error)
        }
        decoder = current
    }

    /// Decodes and drops the rest of the current image's raster.
    private func skipRest() throws(NetpbmError) {
        while let current = decoder, current.remaining > 0 {
            let count = min(current.remaining, Self.scratchCount)
            try readSamples(into: UnsafeMutableBufferPointer(start: scratch, count: count))
        }
    }

    /// Records `error` for the current frame; the reader stays failed.
    private func fail(_ error: NetpbmError) -> NetpbmError {
        let wrapped = NetpbmError.inFrame(frame, error)
        failure = wrapped
        return wrapped
    }
}
