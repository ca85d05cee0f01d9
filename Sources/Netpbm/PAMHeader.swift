// The PAM (P7) header.
//
// Grammar (pam(5), with libnetpbm's readpaminitrest for the details):
//
//     P7 <LF>
//     { line <LF> }          each line one of:
//        WIDTH <n> | HEIGHT <n> | DEPTH <n> | MAXVAL <n> | TUPLTYPE <text>
//        # comment           ('#' in the first column)
//        <blank>             (only whitespace)
//     ENDHDR <LF>
//     raster
//
// - WIDTH, HEIGHT, DEPTH, MAXVAL exactly once each, in any order (libnetpbm lets a
//   repeat win silently; repeats are an error here because pam(5) says "exactly once").
// - Several TUPLTYPE lines are joined with single spaces; empty ones are ignored.
// - Keywords are case-sensitive. An unknown keyword is an error, as in libnetpbm
//   ("Unrecognized header line ... Possible missing ENDHDR line?").
// - A CR before the LF is tolerated (it is whitespace), so CRLF headers read; the raster
//   starts after the LF of the ENDHDR line.
// - Numbers are decimal digits only: no sign, no `0x`, nothing after them but spaces.
// - The first line is `P7` plus optional whitespace. `P7 332` is an XV thumbnail, which
//   shares the magic number; it is rejected as unsupported rather than misread.

/// A parsed PAM header and where its raster starts.
struct PAMHeader {
    var width: Int
    var height: Int
    var depth: Int
    var maxval: Int
    var tupleType: TupleType
    /// Offset of the first raster byte.
    var rasterStart: Int

    private static let lineFeed: UInt8 = 0x0A
    private static let carriageReturn: UInt8 = 0x0D

    /// Parses the header of the PAM image whose `P7` is at `imageStart`.
    ///
    /// - Complexity: O(header length); each line is bounded by
    ///   ``NetpbmLimits/maxPAMHeaderLineBytes`` before it is examined.
    /// - Throws: see ``NetpbmError`` (header phase) — every error names the byte offset.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, imageStart: Int) throws(NetpbmError) -> PAMHeader {
        let count = bytes.count
        var p = imageStart + 2

        // The rest of the magic line: only whitespace, or the XV thumbnail's " 332".
        while p < count, bytes[p] != lineFeed, HeaderScanner.isWhitespace(bytes[p]) { p += 1 }
        if p + 3 <= count, bytes[p] == 0x33, bytes[p + 1] == 0x33, bytes[p + 2] == 0x32 {
            throw .unsupportedFormat(name: "XV thumbnail (\"P7 332\")", offset: imageStart)
        }
        guard p < count else { throw .unexpectedEnd(expected: .endOfHeader, offset: p) }
        guard bytes[p] == lineFeed else {
            throw .unexpectedByte(found: bytes[p], expected: .lineEnd, offset: p)
        }
        var lineStart = p + 1

        var width: Int?, height: Int?, depth: Int?, maxval: Int?
        var depthOffset = 0
        var tupleBytes: [UInt8] = []
        let lineLimit = NetpbmLimits.maxPAMHeaderLineBytes

        while true {
            guard lineStart < count else { throw .unexpectedEnd(expected: .endOfHeader, offset: count) }

            // Find the line end without looking further than the longest allowed line
            // (content, optional CR, LF), so a megabyte-long line fails fast.
            let searchEnd = min(count, lineStart + lineLimit + 2)
            var lineFeedAt = lineStart
            while lineFeedAt < searchEnd, bytes[lineFeedAt] != lineFeed { lineFeedAt += 1 }
            if lineFeedAt == searchEnd, searchEnd < count {
                throw .pamHeaderLineTooLong(limit: lineLimit, offset: lineStart)
            }
            var contentEnd = lineFeedAt
            if contentEnd > lineStart, bytes[contentEnd - 1] == carriageReturn { contentEnd -= 1 }
            guard contentEnd - lineStart <= lineLimit else {
                throw .pamHeaderLineTooLong(limit: lineLimit, offset: lineStart)
            }
            // At the end of input the line simply ends there (like fgets).
            let nextLine = min(lineFeedAt + 1, count)

            // Comment lines: '#' in the first column.
            if bytes[lineStart] == HeaderScanner.hash {
                lineStart = nextLine
                continue
            }

            // Split into keyword and value, trimming whitespace on both sides.
            var keywordStart = lineStart
            while keywordStart < contentEnd, HeaderScanner.isWhitespace(bytes[keywordStart]) { keywordStart += 1 }
            if keywordStart == contentEnd {  // blank line
                lineStart = nextLine
                continue
            }
            var keywordEnd = keywordStart
            while keywordEnd < contentEnd, !HeaderScanner.isWhitespace(bytes[keywordEnd]) { keywordEnd += 1 }
            var valueStart = keywordEnd
            while valueStart < contentEnd, HeaderScanner.isWhitespace(bytes[valueStart]) { valueStart += 1 }
            var valueEnd = contentEnd
            while valueEnd > valueStart, HeaderScanner.isWhitespace(bytes[valueEnd - 1]) { valueEnd -= 1 }

            let keyword = Keyword(UnsafeBufferPointer(rebasing: bytes[keywordStart..<keywordEnd]))
            switch keyword {
            case .endOfHeader:
                guard valueStart == valueEnd else {
                    throw .unexpectedByte(found: bytes[valueStart], expected: .lineEnd, offset: valueStart)
                }
                guard let width else { throw .pamMissingKeyword(keyword: "WIDTH", offset: keywordStart) }
                guard let height else { throw .pamMissingKeyword(keyword: "HEIGHT", offset: keywordStart) }
                guard let depth else { throw .pamMissingKeyword(keyword: "DEPTH", offset: keywordStart) }
                guard let maxval else { throw .pamMissingKeyword(keyword: "MAXVAL", offset: keywordStart) }
                let tupleType = TupleType(rawValue: String(decoding: tupleBytes, as: UTF8.self))
                guard depth >= tupleType.minimumDepth else {
                    throw .depthTooSmallForTupleType(
                        depth: depth, tupleType: tupleType, required: tupleType.minimumDepth,
                        offset: depthOffset)
                }
                return PAMHeader(
                    width: width, height: height, depth: depth, maxval: maxval,
                    tupleType: tupleType, rasterStart: nextLine)

            case .width, .height, .depth, .maxval:
                let field = keyword.field
                let seen: Bool
                switch keyword {
                case .width: seen = width != nil
                case .height: seen = height != nil
                case .depth: seen = depth != nil
                default: seen = maxval != nil
                }
                if seen {
                    throw .pamDuplicateKeyword(keyword: keyword.name, offset: keywordStart)
                }
                let value = try parseValue(
                    bytes, field: field, valueStart: valueStart, valueEnd: valueEnd,
                    contentEnd: contentEnd, limit: field == .maxval ? 65535 : Int(Int32.max))
                switch keyword {
                case .width: width = value
                case .height: height = value
                case .depth: depth = value; depthOffset = keywordStart
                default: maxval = value
                }

            case .tupleType:
                let length = valueEnd - valueStart
                if length > 0 {
                    let joined = tupleBytes.isEmpty ? length : tupleBytes.count + 1 + length
                    guard joined <= NetpbmLimits.maxTupleTypeBytes else {
                        throw .pamTupleTypeTooLong(
                            length: joined, limit: NetpbmLimits.maxTupleTypeBytes, offset: keywordStart)
                    }
                    if !tupleBytes.isEmpty { tupleBytes.append(0x20) }
                    tupleBytes.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[valueStart..<valueEnd]))
                }

            case .unknown:
                let shown = Array(UnsafeBufferPointer(rebasing: bytes[keywordStart..<min(keywordEnd, keywordStart + 32)]))
                throw .pamUnknownKeyword(keyword: NetpbmError.escaped(shown), offset: keywordStart)
            }
            lineStart = nextLine
        }
    }

    /// Parses the decimal value of a WIDTH/HEIGHT/DEPTH/MAXVAL line: digits, then nothing.
    private static func parseValue(
        _ bytes: UnsafeBufferPointer<UInt8>, field: NetpbmError.Field,
        valueStart: Int, valueEnd: Int, contentEnd: Int, limit: Int
    ) throws(NetpbmError) -> Int {
        guard valueStart < valueEnd else {
            // No value on the line: report the line end found instead.
            guard contentEnd < bytes.count else { throw .unexpectedEnd(expected: field, offset: contentEnd) }
            throw .unexpectedByte(found: bytes[contentEnd], expected: field, offset: contentEnd)
        }
        guard HeaderScanner.isDigit(bytes[valueStart]) else {
            throw .unexpectedByte(found: bytes[valueStart], expected: field, offset: valueStart)
        }
        var scanner = HeaderScanner(bytes, position: valueStart)
        let value = try scanner.readDigits(field, limit: limit)
        guard value > 0 else { throw .zeroValue(field: field, offset: valueStart) }
        // Only whitespace may follow; report the first byte that is not.
        var rest = scanner.position
        while rest < valueEnd, HeaderScanner.isWhitespace(bytes[rest]) { rest += 1 }
        guard rest == valueEnd else {
            throw .unexpectedByte(found: bytes[rest], expected: .lineEnd, offset: rest)
        }
        return value
    }

    /// The header keywords pam(5) defines.
    private enum Keyword {
        case width, height, depth, maxval, tupleType, endOfHeader, unknown

        init(_ word: UnsafeBufferPointer<UInt8>) {
            func equals(_ text: StaticString) -> Bool {
                text.utf8CodeUnitCount == word.count
                    && text.withUTF8Buffer { Array($0) } == Array(word)
            }
            if equals("WIDTH") { self = .width }
            else if equals("HEIGHT") { self = .height }
            else if equals("DEPTH") { self = .depth }
            else if equals("MAXVAL") { self = .maxval }
            else if equals("TUPLTYPE") { self = .tupleType }
            else if equals("ENDHDR") { self = .endOfHeader }
            else { self = .unknown }
        }

        var name: String {
            switch self {
            case .width: return "WIDTH"
            case .height: return "HEIGHT"
            case .depth: return "DEPTH"
            case .maxval: return "MAXVAL"
            case .tupleType: return "TUPLTYPE"
            case .endOfHeader: return "ENDHDR"
            case .unknown: return "?"
            }
        }

        var field: NetpbmError.Field {
            switch self {
            case .width: return .width
            case .height: return .height
            case .depth: return .depth
            case .maxval: return .maxval
            case .tupleType, .endOfHeader, .unknown: return .lineEnd
            }
        }
    }
}
