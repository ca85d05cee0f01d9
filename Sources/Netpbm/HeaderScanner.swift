// Tokens of P1–P6 headers and of plain rasters.
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

/// Reads header tokens and plain raster samples from a byte buffer.
///
/// Positions are absolute offsets into `bytes`. Every read is bounds-checked against
/// `bytes.count`; nothing here allocates except the digit string of an error.
struct HeaderScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var position: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>, position: Int) {
        self.bytes = bytes
        self.position = position
    }

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

    /// Skips whitespace and comments, stopping at the first other byte or the end.
    /// - Throws: ``NetpbmError/unterminatedComment(offset:)`` if a comment reaches the end.
    mutating func skipSeparators() throws(NetpbmError) {
        while position < bytes.count {
            let byte = bytes[position]
            if Self.isWhitespace(byte) {
                position += 1
            } else if byte == Self.hash {
                try skipComment()
            } else {
                return
            }
        }
    }

    /// With `position` on a `#`, moves past the CR or LF that ends the comment.
    mutating func skipComment() throws(NetpbmError) {
        let start = position
        var p = position + 1
        while p < bytes.count {
            let byte = bytes[p]
            if byte == 0x0A || byte == 0x0D {
                position = p + 1
                return
            }
            p += 1
        }
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
        guard position < bytes.count else { throw .unexpectedEnd(expected: field, offset: position) }
        let start = position
        guard Self.isDigit(bytes[start]) else {
            throw .unexpectedByte(found: bytes[start], expected: field, offset: start)
        }
        let value = try readDigits(field, limit: limit)
        guard value > 0 else { throw .zeroValue(field: field, offset: start) }
        return value
    }

    /// Reads the run of digits at `position` (which must hold a digit) and moves past it.
    ///
    /// At most ``NetpbmLimits/maxTokenDigits`` digits are examined, so a megabyte of digits
    /// fails in constant time; accumulation is overflow-checked in `UInt64`.
    /// For `.sample`, a value above `limit` (the maxval) throws `sampleAboveMaxval`; for other
    /// fields it throws `numberTooLarge`.
    @inline(__always)
    mutating func readDigits(_ field: NetpbmError.Field, limit: Int) throws(NetpbmError) -> Int {
        let start = position
        let end = bytes.count
        var p = start
        var value: UInt64 = 0
        var overflow = false
        while p < end {
            let digit = bytes[p] &- 0x30
            guard digit < 10 else { break }
            if p - start == NetpbmLimits.maxTokenDigits {
                throw .tokenTooLong(field: field, limit: NetpbmLimits.maxTokenDigits, offset: start)
            }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(digit))
            overflow = overflow || o1 || o2
            value = sum
            p += 1
        }
        position = p
        if overflow || value > UInt64(limit) {
            if field == .sample, !overflow, value <= UInt64(Int.max) {
                throw .sampleAboveMaxval(value: Int(value), maxval: limit, offset: start)
            }
            let digits = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<p]), as: UTF8.self)
            throw .numberTooLarge(field: field, digits: digits, limit: limit, offset: start)
        }
        return Int(value)
    }

    /// Consumes the single byte that ends a raw header (after its last token) and returns
    /// the raster's first offset.
    ///
    /// That byte must be whitespace; a `#` starts a comment whose CR/LF plays that role
    /// (libnetpbm). Whatever follows is raster, even whitespace or `#`.
    mutating func consumeRasterSeparator() throws(NetpbmError) -> Int {
        guard position < bytes.count else {
            throw .unexpectedEnd(expected: .rasterSeparator, offset: position)
        }
        let byte = bytes[position]
        if Self.isWhitespace(byte) {
            position += 1
        } else if byte == Self.hash {
            try skipComment()
        } else {
            throw .unexpectedByte(found: byte, expected: .rasterSeparator, offset: position)
        }
        return position
    }
}
