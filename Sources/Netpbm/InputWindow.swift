// The reader's view of its input, and the byte-level grammar that headers and plain
// rasters share.
//
// One window type serves both readers: `NetpbmReader` looks at the whole input in memory;
// `NetpbmStreamReader` looks at a fixed buffer that is refilled from a file descriptor with
// read(2). Everything above this file (header parsing, raster decoding) is written once,
// against the window, so both readers accept exactly the same bytes.
//
// Grammar (pbm(5), pgm(5), ppm(5); libnetpbm's pm_getuint/pm_getc for the details):
// - tokens are runs of ASCII decimal digits, no sign;
// - between tokens: any of the six ASCII whitespace bytes (space, HT, LF, VT, FF, CR) and
//   comments; a comment runs from `#` through the next CR or LF and acts as whitespace,
//   so a comment glued to a number ends it (`3#c\n1` is 3 then 1), as in libnetpbm;
// - the magic number is exactly two bytes; like libnetpbm, the first token may follow it
//   without a separator (`P632 …` reads width 32);
// - a raw header ends with exactly one byte after its last token: a whitespace byte, or a
//   comment through its CR/LF (libnetpbm returns the comment's line end as that byte).

import Foundation

/// A fixed byte buffer owned by a stream reader or writer, freed with its owner.
final class ChunkStorage {
    let base: UnsafeMutablePointer<UInt8>
    let capacity: Int

    /// - Parameter capacity: at least 1; callers pass fixed sizes (never a header value).
    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }
}

/// A window of input bytes, `base[position..<end]` unread, with more to come from the
/// source unless `exhausted`.
///
/// Offsets reported in errors are absolute: `origin + index`, counted from the first byte
/// of the input. The window never grows: a descriptor source moves the unread bytes to the
/// front of its fixed buffer and reads after them, so memory stays at the buffer's size
/// whatever the input's length.
struct InputWindow {
    /// Where bytes come from once the window runs out.
    enum Source {
        /// The whole input is already in the window.
        case memory
        /// read(2) on a file descriptor (not owned here).
        case descriptor(Int32)
        /// Bytes in memory handed over at most `readSize` at a time, as a pipe might: lets
        /// tests put chunk boundaries anywhere.
        case chunkedMemory(UnsafeBufferPointer<UInt8>, next: Int, readSize: Int)
    }

    /// The bytes; for a descriptor source, the fixed buffer.
    let base: UnsafePointer<UInt8>
    /// The next unread byte.
    var position: Int
    /// One past the last valid byte.
    private(set) var end: Int
    /// The absolute offset of `base[0]`.
    private(set) var origin: Int
    /// `true` once the source has no more bytes beyond `end`.
    private(set) var exhausted: Bool
    private var source: Source
    /// Keeps a descriptor source's buffer alive.
    private let storage: ChunkStorage?
    /// Names the source in I/O errors.
    let name: String

    /// A window over bytes in memory, starting at `position`.
    init(memory bytes: UnsafeBufferPointer<UInt8>, position: Int = 0) {
        // An empty input has no base address; the placeholder is never dereferenced because
        // `end` is 0.
        base = bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!
        self.position = position
        end = bytes.count
        origin = 0
        exhausted = true
        source = .memory
        storage = nil
        name = "<memory>"
    }

    /// A window refilled from `source` into `storage`.
    init(source: Source, storage: ChunkStorage, name: String) {
        base = UnsafePointer(storage.base)
        position = 0
        end = 0
        origin = 0
        exhausted = false
        self.source = source
        self.storage = storage
        self.name = name
    }

    /// The absolute offset of the next unread byte.
    @inline(__always)
    var offset: Int { origin &+ position }

    /// Unread bytes in the window.
    @inline(__always)
    var available: Int { end &- position }

    /// The absolute offset where the input ends; meaningful once `exhausted`.
    var inputEnd: Int { origin &+ end }

    /// The bytes left to read, unread window bytes included, where the input's length is
    /// known: bytes in memory, or a regular file of nonzero size (its size less the
    /// descriptor's position); `nil` for a pipe, a terminal or a socket, whose length
    /// shows only at its end, and for an empty-looking file such as `/proc`'s.
    var knownRemainingBytes: Int? {
        if exhausted { return end &- position }
        switch source {
        case .memory:
            return end &- position
        case .chunkedMemory(let bytes, let next, _):
            return end &- position &+ (bytes.count &- next)
        case .descriptor(let descriptor):
            var status = stat()
            // A regular file of size 0 may be a kernel's (`/proc`), whose bytes show only
            // when read: its length is not known.
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size > 0 else { return nil }
            let position = lseek(descriptor, 0, SEEK_CUR)
            guard position >= 0 else { return nil }
            return end &- self.position &+ max(0, Int(status.st_size) &- Int(position))
        }
    }

    /// Moves the unread bytes to the front of the buffer and reads more after them.
    ///
    /// - Returns: `false` if the source had nothing more (the window is then `exhausted`).
    /// - Throws: ``NetpbmError/readFailed(path:reason:)`` if read(2) fails.
    mutating func fill() throws(NetpbmError) -> Bool {
        guard !exhausted, let storage else {
            exhausted = true
            return false
        }
        let buffer = storage.base
        if position > 0 {
            let keep = end - position
            if keep > 0 { memmove(buffer, buffer + position, keep) }
            origin += position
            end = keep
            position = 0
        }
        let room = storage.capacity - end
        guard room > 0 else { return true }
        let count = try readSome(into: buffer + end, room: room)
        if count == 0 {
            exhausted = true
            return false
        }
        end += count
        return true
    }

    /// Makes at least `count` bytes contiguous in the window, unless the input ends first.
    /// `count` is a small constant of the grammar (a token, a PAM header line), far below
    /// the buffer's capacity.
    @inline(__always)
    mutating func ensure(_ count: Int) throws(NetpbmError) {
        while end &- position < count, !exhausted {
            _ = try fill()
        }
    }

    /// The next byte without consuming it, or `nil` at the end of the input.
    @inline(__always)
    mutating func peek() throws(NetpbmError) -> UInt8? {
        if position < end { return base[position] }
        return try peekAfterFill()
    }

    @inline(never)
    private mutating func peekAfterFill() throws(NetpbmError) -> UInt8? {
        while position >= end {
            guard try fill() else { return nil }
        }
        return base[position]
    }

    /// One read(2) (or its in-memory stand-in); 0 only at the end of the input.
    private mutating func readSome(into target: UnsafeMutablePointer<UInt8>, room: Int) throws(NetpbmError) -> Int {
        switch source {
        case .memory:
            return 0
        case .chunkedMemory(let bytes, let next, let readSize):
            let count = min(room, readSize, bytes.count - next)
            guard count > 0, let from = bytes.baseAddress else { return 0 }
            target.update(from: from + next, count: count)
            source = .chunkedMemory(bytes, next: next + count, readSize: readSize)
            return count
        case .descriptor(let descriptor):
            while true {
                let count = read(descriptor, target, room)
                if count >= 0 { return count }
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK {
                    // A non-blocking descriptor: wait until it is readable instead of spinning.
                    var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    _ = poll(&request, 1, -1)
                    continue
                }
                throw .readFailed(path: name, reason: String(cString: strerror(code)))
            }
        }
    }
}

// MARK: - Tokens

extension InputWindow {
    /// Space, HT, LF, VT, FF, CR.
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
    }

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte &- 0x30 < 10
    }

    static let hash: UInt8 = 0x23

    /// Skips whitespace only (what separates images in a stream, libnetpbm's `pm_nextimage`).
    mutating func skipWhitespace() throws(NetpbmError) {
        repeat {
            while position < end {
                guard Self.isWhitespace(base[position]) else { return }
                position += 1
            }
        } while try fill()
    }

    /// Skips whitespace and comments, stopping at the first other byte or the end.
    /// - Throws: ``NetpbmError/unterminatedComment(offset:)`` if a comment reaches the end.
    mutating func skipSeparators() throws(NetpbmError) {
        repeat {
            while position < end {
                let byte = base[position]
                if Self.isWhitespace(byte) {
                    position += 1
                } else if byte == Self.hash {
                    try skipComment()
                } else {
                    return
                }
            }
        } while try fill()
    }

    /// With `position` on a `#`, moves past the CR or LF that ends the comment, however
    /// many refills that takes.
    mutating func skipComment() throws(NetpbmError) {
        let start = offset
        position += 1
        repeat {
            while position < end {
                let byte = base[position]
                position += 1
                if byte == 0x0A || byte == 0x0D { return }
            }
        } while try fill()
        throw .unterminatedComment(offset: start)
    }

    /// Reads one header number: skips separators, then reads digits.
    ///
    /// - Parameters:
    ///   - field: what is being read (for errors).
    ///   - limit: the largest allowed value.
    /// - Returns: the value, at least 1.
    /// - Throws: `unexpectedEnd`, `unexpectedByte` (sign, letter…), `tokenTooLong`,
    ///   `numberTooLarge`, `zeroValue`, `unterminatedComment`.
    mutating func readHeaderNumber(_ field: NetpbmError.Field, limit: Int) throws(NetpbmError) -> Int {
        try skipSeparators()
        guard let byte = try peek() else { throw .unexpectedEnd(expected: field, offset: offset) }
        let start = offset
        guard Self.isDigit(byte) else {
            throw .unexpectedByte(found: byte, expected: field, offset: start)
        }
        let value = try readDigits(field, limit: limit)
        guard value > 0 else { throw .zeroValue(field: field, offset: start) }
        return value
    }

    /// Reads the run of digits at `position` (which must hold a digit) and moves past it.
    /// The token, with the byte after it, is first made contiguous in the window.
    @inline(__always)
    mutating func readDigits(_ field: NetpbmError.Field, limit: Int) throws(NetpbmError) -> Int {
        try ensure(NetpbmLimits.maxTokenDigits + 1)
        let (value, next) = try Self.scanDigits(
            base, from: position, to: end, origin: origin, field: field, limit: limit)
        position = next
        return value
    }

    /// Parses the digits in `base[start..<end]` from `start` up to the first non-digit.
    ///
    /// At most ``NetpbmLimits/maxTokenDigits`` + 1 bytes are examined, so a megabyte of
    /// digits fails in constant time; accumulation is overflow-checked in `UInt64`.
    /// For `.sample`, a value above `limit` (the maxval) throws `sampleAboveMaxval`; for
    /// other fields it throws `numberTooLarge`. Offsets are `origin + index`.
    @inline(__always)
    static func scanDigits(
        _ base: UnsafePointer<UInt8>, from start: Int, to end: Int, origin: Int,
        field: NetpbmError.Field, limit: Int
    ) throws(NetpbmError) -> (value: Int, next: Int) {
        var p = start
        var value: UInt64 = 0
        var overflow = false
        while p < end {
            let digit = base[p] &- 0x30
            guard digit < 10 else { break }
            if p - start == NetpbmLimits.maxTokenDigits {
                throw .tokenTooLong(field: field, limit: NetpbmLimits.maxTokenDigits, offset: origin + start)
            }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(digit))
            overflow = overflow || o1 || o2
            value = sum
            p += 1
        }
        if overflow || value > UInt64(limit) {
            if field == .sample, !overflow, value <= UInt64(Int.max) {
                throw .sampleAboveMaxval(value: Int(value), maxval: limit, offset: origin + start)
            }
            let digits = String(decoding: UnsafeBufferPointer(start: base + start, count: p - start), as: UTF8.self)
            throw .numberTooLarge(field: field, digits: digits, limit: limit, offset: origin + start)
        }
        return (Int(value), p)
    }

    /// Consumes the single byte that ends a raw header (after its last token).
    ///
    /// That byte must be whitespace; a `#` starts a comment whose CR/LF plays that role
    /// (libnetpbm). Whatever follows is raster, even whitespace or `#`.
    mutating func consumeRasterSeparator() throws(NetpbmError) {
        guard let byte = try peek() else {
            throw .unexpectedEnd(expected: .rasterSeparator, offset: offset)
        }
        if Self.isWhitespace(byte) {
            position += 1
        } else if byte == Self.hash {
            try skipComment()
        } else {
            throw .unexpectedByte(found: byte, expected: .rasterSeparator, offset: offset)
        }
    }

    /// Identifies the format from the two bytes at `position` and moves past them.
    mutating func readSignature() throws(NetpbmError) -> NetpbmFormat {
        let start = offset
        try ensure(2)
        let count = available
        guard count > 0 else { throw .unexpectedEnd(expected: .magic, offset: start) }
        let first = base[position]
        guard first == 0x50 else {  // "P"
            throw .invalidMagic(found: Array(UnsafeBufferPointer(start: base + position, count: min(2, count))), offset: start)
        }
        guard count > 1 else { throw .unexpectedEnd(expected: .magic, offset: start + 1) }
        let second = base[position + 1]
        if second == 0x46 || second == 0x66 {  // "PF", "Pf"
            throw .unsupportedFormat(name: "PFM (Portable Float Map, \"PF\"/\"Pf\")", offset: start)
        }
        guard let format = NetpbmFormat(magicDigit: second) else {
            throw .invalidMagic(found: [first, second], offset: start)
        }
        position += 2
        return format
    }
}
