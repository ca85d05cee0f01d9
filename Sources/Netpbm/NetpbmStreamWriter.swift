// Writing a Netpbm stream image by image and band by band, in constant memory.

import Foundation

/// Writes Netpbm images to a file descriptor (or to memory) one at a time, each image's
/// samples in pieces of any size, through one fixed 1 MiB buffer.
///
/// ```swift
/// let writer = NetpbmStreamWriter(fileDescriptor: STDOUT_FILENO, name: "standard output")
/// try writer.beginImage(NetpbmHeader(format: .rawPPM, width: 640, height: 480, maxval: 255))
/// for band in bands { try writer.writeSamples(band) }   // UnsafeBufferPointer<UInt8> or <UInt16>
/// try writer.endImage()
/// try writer.flush()
/// ```
///
/// The bytes are exactly those ``NetpbmWriter/encode(_:as:)`` produces for the same image,
/// however the samples are sliced: the header (no comments, LF line ends, PAM without a
/// `TUPLTYPE` line when the tuple type is empty), then the raster — 1 byte per sample
/// below maxval 256, else 2 bytes big-endian; P4 rows packed MSB first with 1 = black and
/// zero pad bits; plain rows on new lines, lines of at most 70 characters. Samples are
/// given as ``NetpbmImage/samples`` holds them (PBM: 1 = white).
///
/// Output goes out with write(2) whenever the buffer fills and on ``flush()``; nothing is
/// flushed when the writer is released, so call ``flush()`` at the end. With `SIGPIPE`
/// ignored (the caller's choice), writing to a pipe whose reader has gone throws
/// ``NetpbmError/brokenPipe(path:)``; other write(2) failures throw
/// ``NetpbmError/writeFailed(path:reason:)``. After an I/O error the writer stays failed
/// and throws that error on every call. Usage errors and samples above maxval write
/// nothing of the call that caused them and leave the writer usable.
///
/// Memory: one 1 MiB buffer (plus, for the in-memory writer, the bytes written). The
/// writer is a reference type because it owns its destination's position; it is not
/// `Sendable`.
public final class NetpbmStreamWriter {
    /// The size of the output buffer: 1 MiB.
    public static let bufferBytes = 1 << 20

    /// The header of the image being written, `nil` between images.
    public private(set) var header: NetpbmHeader?
    /// The number of images begun so far (the current one's 1-based index).
    public private(set) var frame = 0

    private var output: OutputBuffer
    private var encoder: RasterEncoder?
    private var failure: NetpbmError?
    /// Keeps a caller's `FileHandle` (and so its descriptor) open while writing.
    private let handle: FileHandle?

    /// Writes to a file descriptor (standard output is `STDOUT_FILENO`), which the writer
    /// does not close.
    ///
    /// - Parameter name: how I/O errors name the destination.
    public init(fileDescriptor: Int32, name: String = "<stream>") {
        output = OutputBuffer(destination: .descriptor(fileDescriptor), capacity: Self.bufferBytes, name: name)
        handle = nil
    }

    /// Writes to `fileHandle`'s descriptor; the handle is kept open while the writer lives
    /// and is not closed by it.
    public init(fileHandle: FileHandle, name: String = "<stream>") {
        output = OutputBuffer(
            destination: .descriptor(fileHandle.fileDescriptor), capacity: Self.bufferBytes, name: name)
        handle = fileHandle
    }

    /// Writes to memory; ``bytes`` returns what was written.
    public init() {
        output = OutputBuffer(destination: .memory, capacity: 1 << 16, name: "<memory>")
        handle = nil
    }

    /// Everything written so far, for a writer created with ``init()`` (empty for a file
    /// descriptor). Includes bytes not yet flushed.
    public var bytes: [UInt8] {
        guard case .memory = output.destination else { return [] }
        return output.memory + output.pending
    }

    /// The samples the current image still needs (0 between images).
    public var remainingSamples: Int { encoder?.remaining ?? 0 }

    /// Starts an image: writes its header.
    ///
    /// - Throws: ``NetpbmError/incompleteImage(expected:written:)`` if the previous image
    ///   still needs samples; ``NetpbmError/invalidTupleType(_:)`` for P7 output with a
    ///   tuple type that cannot be written (possible for a header read from a file);
    ///   the stored I/O error of a failed writer; I/O errors while the header goes out.
    public func beginImage(_ header: NetpbmHeader) throws(NetpbmError) {
        if let failure { throw failure }
        if let encoder, encoder.remaining > 0, let current = self.header {
            throw .incompleteImage(expected: current.sampleCount, written: current.sampleCount - encoder.remaining)
        }
        if header.format == .pam, !NetpbmImage.isWritableTupleType(header.tupleType.rawValue) {
            throw .invalidTupleType(header.tupleType.rawValue)
        }
        self.header = header
        encoder = RasterEncoder(header: header)
        frame += 1
        let text = RasterEncoder.headerBytes(header)
        try run { (output: inout OutputBuffer) throws(NetpbmError) in
            try text.withUnsafeBufferPointer { (bytes) throws(NetpbmError) in try output.append(bytes) }
        }
    }

    /// Writes the next `samples.count` samples of the current image (any number: a band,
    /// part of a row, one sample).
    ///
    /// - Throws: ``NetpbmError/tooManySamples(requested:remaining:)`` if more samples are
    ///   given than the image still needs (or no image was begun);
    ///   ``NetpbmError/sampleOutOfRange(value:maxval:index:)`` for the first sample above
    ///   maxval (`index` counts from the image's first sample) — nothing of this call is
    ///   written then; I/O errors.
    /// - Complexity: O(`samples.count`).
    public func writeSamples(_ samples: UnsafeBufferPointer<UInt16>) throws(NetpbmError) {
        if let failure { throw failure }
        guard let base = samples.baseAddress, !samples.isEmpty else { return }
        let current = try check(count: samples.count)
        try Self.checkRange(samples, maxval: current.header.maxval, written: current.written)
        var encoder = current.encoder
        try run { (output: inout OutputBuffer) throws(NetpbmError) in
            try encoder.encode(base, count: samples.count, to: &output)
        }
        self.encoder = encoder
    }

    /// Writes the next `samples.count` samples of the current image, given as 8-bit
    /// values (valid for any maxval; stored in 2 bytes when maxval ≥ 256).
    ///
    /// - Throws: as ``writeSamples(_:)-(UnsafeBufferPointer<UInt16>)``.
    public func writeSamples(_ samples: UnsafeBufferPointer<UInt8>) throws(NetpbmError) {
        if let failure { throw failure }
        guard let base = samples.baseAddress, !samples.isEmpty else { return }
        let current = try check(count: samples.count)
        try Self.checkRange(samples, maxval: current.header.maxval, written: current.written)
        var encoder = current.encoder
        try run { (output: inout OutputBuffer) throws(NetpbmError) in
            try encoder.encode(base, count: samples.count, to: &output)
        }
        self.encoder = encoder
    }

    /// Throws `sampleOutOfRange` for the first of `samples` above `maxval` (`written`
    /// samples of the image came before them). The largest sample is found first, in a
    /// loop without a branch per sample, and the offender only when there is one.
    private static func checkRange<Sample: FixedWidthInteger & UnsignedInteger>(
        _ samples: UnsafeBufferPointer<Sample>, maxval: Int, written: Int
    ) throws(NetpbmError) {
        guard maxval < Int(Sample.max) else { return }
        let limit = Sample(truncatingIfNeeded: maxval)
        var high: Sample = 0
        for value in samples { high = max(high, value) }
        if high > limit, let index = samples.firstIndex(where: { $0 > limit }) {
            throw .sampleOutOfRange(value: Int(samples[index]), maxval: maxval, index: written + index)
        }
    }

    /// Ends the current image (nothing happens between images).
    ///
    /// - Throws: ``NetpbmError/incompleteImage(expected:written:)`` if samples are missing.
    public func endImage() throws(NetpbmError) {
        if let failure { throw failure }
        guard let encoder, let header else { return }
        guard encoder.remaining == 0 else {
            throw .incompleteImage(expected: header.sampleCount, written: header.sampleCount - encoder.remaining)
        }
        self.encoder = nil
        self.header = nil
    }

    /// Writes out whatever the buffer holds.
    ///
    /// - Throws: ``NetpbmError/brokenPipe(path:)``, ``NetpbmError/writeFailed(path:reason:)``.
    public func flush() throws(NetpbmError) {
        if let failure { throw failure }
        try run { (output: inout OutputBuffer) throws(NetpbmError) in try output.flush() }
    }

    /// The current image's encoder, after checking that `count` more samples fit.
    private func check(count: Int) throws(NetpbmError) -> (encoder: RasterEncoder, header: NetpbmHeader, written: Int) {
        guard let encoder, let header, count <= encoder.remaining else {
            throw .tooManySamples(requested: count, remaining: remainingSamples)
        }
        return (encoder, header, header.sampleCount - encoder.remaining)
    }

    /// Runs `body` on the output; an error it throws (only I/O can fail there) fails the
    /// writer for good.
    private func run(_ body: (inout OutputBuffer) throws(NetpbmError) -> Void) throws(NetpbmError) {
        do throws(NetpbmError) {
            try body(&output)
        } catch {
            failure = error
            throw error
        }
    }
}
