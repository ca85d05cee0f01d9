// Encoding samples as a raster, any number at a time, into a fixed output buffer.
//
// Output layout (SPEC §9; pbm(5), pgm(5), ppm(5), pam(5)): 1 byte per sample when
// maxval < 256, else 2 bytes big-endian; P4 rows packed MSB first, 1 = black, pad bits
// zero; plain rows start on a new line, tokens one space apart (P1: no separator), lines
// wrapped so none exceeds 70 characters, the last line ended by LF. The encoder keeps what
// a slice boundary needs (the column, the plain line length, a half-filled P4 byte), so a
// raster written in pieces of any size is byte for byte the raster written at once.

import Foundation

/// The fixed buffer encoded bytes go through, and where it is emptied to.
struct OutputBuffer {
    /// Where full buffers go.
    enum Destination {
        /// write(2) on a file descriptor (not owned here).
        case descriptor(Int32)
        /// Appended to ``OutputBuffer/memory``.
        case memory
        /// Handed to a closure in pieces of at most `pieceBytes`; the closure returns
        /// `false` to stop.
        case pieces(Int, (UnsafeRawBufferPointer) -> Bool)
    }

    private let storage: ChunkStorage
    /// Bytes in the buffer not yet emptied.
    var count = 0
    let destination: Destination
    /// Names the destination in I/O errors.
    let name: String
    /// Everything emptied so far, for the memory destination.
    var memory: [UInt8] = []
    /// Whether a ``Destination/pieces(_:_:)`` closure asked to stop; later bytes are dropped.
    private(set) var stopped = false

    init(destination: Destination, capacity: Int, name: String) {
        storage = ChunkStorage(capacity: capacity)
        self.destination = destination
        self.name = name
    }

    /// Free bytes in the buffer.
    @inline(__always)
    var room: Int { storage.capacity &- count }

    /// The first free byte.
    @inline(__always)
    var next: UnsafeMutablePointer<UInt8> { storage.base + count }

    /// The bytes not yet emptied.
    var pending: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage.base, count: count) }

    /// Empties the buffer to the destination.
    ///
    /// - Throws: ``NetpbmError/brokenPipe(path:)`` when write(2) reports `EPIPE`,
    ///   ``NetpbmError/writeFailed(path:reason:)`` for any other write(2) failure.
    mutating func flush() throws(NetpbmError) {
        guard count > 0 else { return }
        let bytes = count
        count = 0
        switch destination {
        case .memory:
            memory.append(contentsOf: UnsafeBufferPointer(start: storage.base, count: bytes))
        case .pieces(let pieceBytes, let sink):
            var start = 0
            while start < bytes, !stopped {
                let length = min(pieceBytes, bytes - start)
                stopped = !sink(UnsafeRawBufferPointer(start: storage.base + start, count: length))
                start += length
            }
        case .descriptor(let descriptor):
            try Self.writeAll(descriptor, storage.base, bytes, name: name)
        }
    }

    /// Copies `bytes` in, emptying the buffer whenever it fills.
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) throws(NetpbmError) {
        guard var source = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            if room == 0 { try flush() }
            let n = min(room, left)
            next.update(from: source, count: n)
            count += n
            source += n
            left -= n
        }
    }

    /// write(2) until every byte is written, retrying after signals and short writes.
    private static func writeAll(
        _ descriptor: Int32, _ base: UnsafePointer<UInt8>, _ count: Int, name: String
    ) throws(NetpbmError) {
        var done = 0
        while done < count {
            let written = write(descriptor, base + done, count - done)
            if written > 0 {
                done += written
                continue
            }
            let code = written == 0 ? EIO : errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                // A non-blocking descriptor: wait until it takes more instead of spinning.
                var request = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&request, 1, -1)
                continue
            }
            if code == EPIPE { throw .brokenPipe(path: name) }
            throw .writeFailed(path: name, reason: String(cString: strerror(code)))
        }
    }
}

/// The position within one image's raster while it is written, and the loops that encode
/// samples. Samples are assumed checked (each ≤ maxval, at most `remaining` of them).
struct RasterEncoder {
    private enum Kind { case raw8, raw16, rawBitmap, plainBitmap, plainSamples }

    /// The most bytes one plain sample can produce: a line break or a space, five digits,
    /// the row's closing line feed.
    private static let plainSampleBytes = 7

    private let kind: Kind
    /// Samples per row (plain line breaks, P4 row padding).
    private let samplesPerRow: Int
    /// Samples not yet written.
    private(set) var remaining: Int
    /// The sample's index within its row.
    private var column = 0
    /// Characters on the current plain line.
    private var lineLength = 0
    /// P4: the bits of a byte not yet complete.
    private var pending: UInt8 = 0

    init(header: NetpbmHeader) {
        switch header.format {
        case .rawPGM, .rawPPM, .pam: kind = header.maxval < 256 ? .raw8 : .raw16
        case .rawPBM: kind = .rawBitmap
        case .plainPBM: kind = .plainBitmap
        case .plainPGM, .plainPPM: kind = .plainSamples
        }
        samplesPerRow = header.samplesPerRow
        remaining = header.sampleCount
    }

    /// The header, as `NetpbmWriter` has always written it: no comments, LF line ends;
    /// the PAM `TUPLTYPE` line left out when the tuple type is empty (as libnetpbm does).
    static func headerBytes(_ header: NetpbmHeader) -> [UInt8] {
        var text = header.format.magic + "\n"
        switch header.format {
        case .pam:
            text += "WIDTH \(header.width)\nHEIGHT \(header.height)\nDEPTH \(header.depth)\nMAXVAL \(header.maxval)\n"
            if !header.tupleType.rawValue.isEmpty {
                text += "TUPLTYPE \(header.tupleType.rawValue)\n"
            }
            text += "ENDHDR\n"
        case .plainPBM, .rawPBM:
            text += "\(header.width) \(header.height)\n"
        case .plainPGM, .plainPPM, .rawPGM, .rawPPM:
            text += "\(header.width) \(header.height)\n\(header.maxval)\n"
        }
        return Array(text.utf8)
    }

    /// Encodes `count` checked samples into `out`.
    mutating func encode(_ samples: UnsafePointer<UInt16>, count: Int, to out: inout OutputBuffer) throws(NetpbmError) {
        switch kind {
        case .raw8: try Self.encodeRaw8(samples, count: count, to: &out)
        case .raw16: try Self.encodeRaw16(samples, count: count, to: &out)
        case .rawBitmap: try encodeRawBitmap(samples, count: count, to: &out)
        case .plainBitmap: try encodePlainBitmap(samples, count: count, to: &out)
        case .plainSamples: try encodePlainSamples(samples, count: count, to: &out)
        }
        remaining -= count
    }

    /// Encodes `count` checked samples into `out`.
    mutating func encode(_ samples: UnsafePointer<UInt8>, count: Int, to out: inout OutputBuffer) throws(NetpbmError) {
        switch kind {
        case .raw8: try Self.encodeRaw8(samples, count: count, to: &out)
        case .raw16: try Self.encodeRaw16(samples, count: count, to: &out)
        case .rawBitmap: try encodeRawBitmap(samples, count: count, to: &out)
        case .plainBitmap: try encodePlainBitmap(samples, count: count, to: &out)
        case .plainSamples: try encodePlainSamples(samples, count: count, to: &out)
        }
        remaining -= count
    }

    // MARK: - Raw samples

    // Each loop fills the buffer's free space, then empties it; they stop early once a
    // piece sink asks to stop.

    private static func encodeRaw8(_ source: UnsafePointer<UInt16>, count: Int, to out: inout OutputBuffer) throws(NetpbmError) {
        var done = 0
        while done < count, !out.stopped {
            if out.room == 0 { try out.flush() }
            let n = min(out.room, count - done)
            let target = out.next
            let from = source + done
            for i in 0..<n { target[i] = UInt8(truncatingIfNeeded: from[i]) }
            out.count += n
            done += n
        }
    }

    private static func encodeRaw8(_ source: UnsafePointer<UInt8>, count: Int, to out: inout OutputBuffer) throws(NetpbmError) {
        var done = 0
        while done < count, !out.stopped {
            if out.room == 0 { try out.flush() }
            let n = min(out.room, count - done)
            out.next.update(from: source + done, count: n)
            out.count += n
            done += n
        }
    }

    private static func encodeRaw16(_ source: UnsafePointer<UInt16>, count: Int, to out: inout OutputBuffer) throws(NetpbmError) {
        var done = 0
        while done < count, !out.stopped {
            if out.room < 2 { try out.flush() }
            let n = min(out.room / 2, count - done)
            let target = out.next
            let from = source + done
            for i in 0..<n {
                let value = from[i]
                target[2 &* i] = UInt8(truncatingIfNeeded: value &>> 8)
                target[2 &* i &+ 1] = UInt8(truncatingIfNeeded: value)
            }
            out.count += 2 &* n
            done += n
        }
    }

    private static func encodeRaw16(_ source: UnsafePointer<UInt8>, count: Int, to out: inout OutputBuffer) throws(NetpbmError) {
        var done = 0
        while done < count, !out.stopped {
            if out.room < 2 { try out.flush() }
            let n = min(out.room / 2, count - done)
            let target = out.next
            let from = source + done
            for i in 0..<n {
                target[2 &* i] = 0
                target[2 &* i &+ 1] = from[i]
            }
            out.count += 2 &* n
            done += n
        }
    }

    // MARK: - P4

    /// Rows packed 8 pixels per byte, MSB first, file 1 = black (sample 0), pad bits 0.
    private mutating func encodeRawBitmap<Sample: FixedWidthInteger & UnsignedInteger>(
        _ source: UnsafePointer<Sample>, count: Int, to out: inout OutputBuffer
    ) throws(NetpbmError) {
        var done = 0
        while done < count, !out.stopped {
            if out.room == 0 { try out.flush() }
            // Whole bytes inside the current row.
            if column & 7 == 0 {
                let bytes = min((samplesPerRow - column) >> 3, (count - done) >> 3, out.room)
                if bytes > 0 {
                    let target = out.next
                    for b in 0..<bytes {
                        let s = source + done + 8 &* b
                        var byte: UInt8 = 0
                        for k in 0..<8 where s[k] == 0 { byte |= 0x80 &>> UInt8(k) }
                        target[b] = byte
                    }
                    out.count += bytes
                    column += 8 &* bytes
                    done += 8 &* bytes
                    if column == samplesPerRow { column = 0 }
                    continue
                }
            }
            if source[done] == 0 { pending |= 0x80 &>> UInt8(column & 7) }
            column += 1
            done += 1
            if column & 7 == 0 || column == samplesPerRow {
                out.next.pointee = pending
                out.count += 1
                pending = 0
                if column == samplesPerRow { column = 0 }
            }
        }
    }

    // MARK: - Plain rasters

    /// `1` for black (sample 0) and `0` for white, no separators, ≤ 70 digits per line.
    private mutating func encodePlainBitmap<Sample: FixedWidthInteger & UnsignedInteger>(
        _ source: UnsafePointer<Sample>, count: Int, to out: inout OutputBuffer
    ) throws(NetpbmError) {
        let maxLine = NetpbmWriter.maxPlainLineLength
        for i in 0..<count {
            if out.room < 3 {
                try out.flush()
                if out.stopped { return }
            }
            let target = out.next
            var written = 0
            if column > 0, column % maxLine == 0 {
                target[0] = 0x0A
                written = 1
            }
            target[written] = source[i] == 0 ? 0x31 : 0x30
            written += 1
            column += 1
            if column == samplesPerRow {
                target[written] = 0x0A
                written += 1
                column = 0
            }
            out.count += written
        }
    }

    /// Decimal tokens, one space apart, each row on a new line, lines ≤ 70 characters.
    private mutating func encodePlainSamples<Sample: FixedWidthInteger & UnsignedInteger>(
        _ source: UnsafePointer<Sample>, count: Int, to out: inout OutputBuffer
    ) throws(NetpbmError) {
        let maxLine = NetpbmWriter.maxPlainLineLength
        for i in 0..<count {
            if out.room < Self.plainSampleBytes {
                try out.flush()
                if out.stopped { return }
            }
            let value = Int(source[i])
            let length = value < 10 ? 1 : value < 100 ? 2 : value < 1000 ? 3 : value < 10000 ? 4 : 5
            let target = out.next
            var written = 0
            if lineLength > 0 {
                if lineLength + 1 + length > maxLine {
                    target[0] = 0x0A
                    lineLength = 0
                } else {
                    target[0] = 0x20
                    lineLength += 1
                }
                written = 1
            }
            var rest = value
            var p = written + length - 1
            repeat {
                target[p] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
                rest /= 10
                p -= 1
            } while rest > 0
            written += length
            lineLength += length
            column += 1
            if column == samplesPerRow {
                target[written] = 0x0A
                written += 1
                column = 0
                lineLength = 0
            }
            out.count += written
        }
    }
}
