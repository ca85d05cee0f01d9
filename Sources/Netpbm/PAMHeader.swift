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

/// A parsed PAM header; the window is left at its raster's first byte.
struct PAMHeader {
    var width: Int
    var height: Int
    var depth: Int
    var maxval: Int
    var tupleType: TupleType

    private static let lineFeed: UInt8 = 0x0A
    private static let carriageReturn: UInt8 = 0x0D

    /// Parses the header of the PAM image whose `P7` is at `imageStart`, with the window
    /// just past the `P7`.
    ///
    /// Each line is made contiguous in the window before it is examined (it is at most
    /// ``NetpbmLimits/maxPAMHeaderLineBytes`` long, or an error), so the same code reads a
    /// header in memory and one arriving through a pipe.
    ///
    /// - Complexity: O(header length).
    /// - Throws: see ``NetpbmError`` (header phase) — every error names the byte offset.
    static func parse(_ window: inout InputWindow, imageStart: Int) throws(NetpbmError) -> PAMHeader {
        // The rest of the magic line: only whitespace, or the XV thumbnail's " 332".
        while let byte = try window.peek(), byte != lineFeed, InputWindow.isWhitespace(byte) {
            window.position += 1
        }
        try window.ensure(3)
        if window.available >= 3, window.base[window.position] == 0x33,
           window.base[window.position + 1] == 0x33, window.base[window.position + 2] == 0x32 {
            throw .unsupportedFormat(name: "XV thumbnail (\"P7 332\")", offset: imageStart)
        }
        guard let byte = try window.peek() else {
            throw .unexpectedEnd(expected: .endOfHeader, offset: window.offset)
        }
        guard byte == lineFeed else {
            throw .unexpectedByte(found: byte, expected: .lineEnd, offset: window.offset)
        }
        window.position += 1

        var width: Int?, height: Int?, depth: Int?, maxval: Int?
        var depthOffset = 0
        var tupleBytes: [UInt8] = []
        let lineLimit = NetpbmLimits.maxPAMHeaderLineBytes

        while true {
            // The longest allowed line (content, optional CR, LF), so a megabyte-long line
            // fails fast and a valid one is whole in the window.
            try window.ensure(lineLimit + 2)
            let bytes = UnsafeBufferPointer(start: window.base, count: window.position + window.available)
            let count = bytes.count
            let origin = window.origin
            let lineStart = window.position
            guard lineStart < count else { throw .unexpectedEnd(expected: .endOfHeader, offset: origin + count) }

            let searchEnd = min(count, lineStart + lineLimit + 2)
            var lineFeedAt = lineStart
            while lineFeedAt < searchEnd, bytes[lineFeedAt] != lineFeed { lineFeedAt += 1 }
            if lineFeedAt == searchEnd, searchEnd < count || !window.exhausted {
                throw .pamHeaderLineTooLong(limit: lineLimit, offset: origin + lineStart)
            }
            var contentEnd = lineFeedAt
            if contentEnd > lineStart, bytes[contentEnd - 1] == carriageReturn { contentEnd -= 1 }
            guard contentEnd - lineStart <= lineLimit else {
                throw .pamHeaderLineTooLong(limit: lineLimit, offset: origin + lineStart)
            }
            // At the end of input the line simply ends there (like fgets).
            let nextLine = min(lineFeedAt + 1, count)

            // Comment lines: '#' in the first column.
            if bytes[lineStart] == InputWindow.hash {
                window.position = nextLine
                continue
            }

            // Split into keyword and value, trimming whitespace on both sides.
            var keywordStart = lineStart
            while keywordStart < contentEnd, InputWindow.isWhitespace(bytes[keywordStart]) { keywordStart += 1 }
            if keywordStart == contentEnd {  // blank line
                window.position = nextLine
                continue
            }
            var keywordEnd = keywordStart
            while keywordEnd < contentEnd, !InputWindow.isWhitespace(bytes[keywordEnd]) { keywordEnd += 1 }
            var valueStart = keywordEnd
            while valueStart < contentEnd, InputWindow.isWhitespace(bytes[valueStart]) { valueStart += 1 }
            var valueEnd = contentEnd
            while valueEnd > valueStart, InputWindow.isWhitespace(bytes[valueEnd - 1]) { valueEnd -= 1 }

            let keyword = Keyword(UnsafeBufferPointer(rebasing: bytes[keywordStart..<keywordEnd]))
            switch keyword {
            case .endOfHeader:
                guard valueStart == valueEnd else {
                    throw .unexpectedByte(found: bytes[valueStart], expected: .lineEnd, offset: origin + valueStart)
                }
                let at = origin + keywordStart
                guard let width else { throw .pamMissingKeyword(keyword: "WIDTH", offset: at) }
                guard let height else { throw .pamMissingKeyword(keyword: "HEIGHT", offset: at) }
                guard let depth else { throw .pamMissingKeyword(keyword: "DEPTH", offset: at) }
                guard let maxval else { throw .pamMissingKeyword(keyword: "MAXVAL", offset: at) }
                let tupleType = TupleType(rawValue: String(decoding: tupleBytes, as: UTF8.self))
                guard depth >= tupleType.minimumDepth else {
                    throw .depthTooSmallForTupleType(
                        depth: depth, tupleType: tupleType, required: tupleType.minimumDepth,
                        offset: depthOffset)
                }
                window.position = nextLine
                return PAMHeader(width: width, height: height, depth: depth, maxval: maxval, tupleType: tupleType)

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
                    throw .pamDuplicateKeyword(keyword: keyword.name, offset: origin + keywordStart)
                }
                let value = try parseValue(
                    bytes, origin: origin, field: field, valueStart: valueStart, valueEnd: valueEnd,
                    contentEnd: contentEnd, limit: field == .maxval ? 65535 : Int(Int32.max))
                switch keyword {
                case .width: width = value
                case .height: height = value
                case .depth: depth = value; depthOffset = origin + keywordStart
                default: maxval = value
                }

            case .tupleType:
                let length = valueEnd - valueStart
                if length > 0 {
                    let joined = tupleBytes.isEmpty ? length : tupleBytes.count + 1 + length
                    guard joined <= NetpbmLimits.maxTupleTypeBytes else {
                        throw .pamTupleTypeTooLong(
                            length: joined, limit: NetpbmLimits.maxTupleTypeBytes, offset: origin + keywordStart)
                    }
                    if !tupleBytes.isEmpty { tupleBytes.append(0x20) }
                    tupleBytes.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[valueStart..<valueEnd]))
                }

            case .unknown:
                // The start of a keyword where the input ends: the data stopped inside
                // the header, which is what to say (not that "HEI" is unknown).
                let word = UnsafeBufferPointer(rebasing: bytes[keywordStart..<keywordEnd])
                if lineFeedAt == count, window.exhausted, keywordEnd == contentEnd, Keyword.isPrefixOfOne(word) {
                    throw .unexpectedEnd(expected: .endOfHeader, offset: origin + count)
                }
                let shown = Array(UnsafeBufferPointer(rebasing: bytes[keywordStart..<min(keywordEnd, keywordStart + 32)]))
                throw .pamUnknownKeyword(keyword: NetpbmError.escaped(shown), offset: origin + keywordStart)
            }
            window.position = nextLine
        }
    }

    /// Parses the decimal value of a WIDTH/HEIGHT/DEPTH/MAXVAL line: digits, then nothing.
    /// Indices are into the window's bytes; offsets in errors add `origin`.
    private static func parseValue(
        _ bytes: UnsafeBufferPointer<UInt8>, origin: Int, field: NetpbmError.Field,
        valueStart: Int, valueEnd: Int, contentEnd: Int, limit: Int
    ) throws(NetpbmError) -> Int {
        guard valueStart < valueEnd, let base = bytes.baseAddress else {
            // No value on the line: report the line end found instead.
            guard contentEnd < bytes.count else { throw .unexpectedEnd(expected: field, offset: origin + contentEnd) }
            throw .unexpectedByte(found: bytes[contentEnd], expected: field, offset: origin + contentEnd)
        }
        guard InputWindow.isDigit(bytes[valueStart]) else {
            throw .unexpectedByte(found: bytes[valueStart], expected: field, offset: origin + valueStart)
        }
        let (value, digitsEnd) = try InputWindow.scanDigits(
            base, from: valueStart, to: contentEnd, origin: origin, field: field, limit: limit)
        guard value > 0 else { throw .zeroValue(field: field, offset: origin + valueStart) }
        // Only whitespace may follow; report the first byte that is not.
        var rest = digitsEnd
        while rest < valueEnd, InputWindow.isWhitespace(bytes[rest]) { rest += 1 }
        guard rest == valueEnd else {
            throw .unexpectedByte(found: bytes[rest], expected: .lineEnd, offset: origin + rest)
        }
        return value
    }

    /// The header keywords pam(5) defines.
    private enum Keyword {
        case width, height, depth, maxval, tupleType, endOfHeader, unknown

        /// Every keyword, in pam(5)'s order.
        static let all: [Keyword] = [.width, .height, .depth, .maxval, .tupleType, .endOfHeader]

        init(_ word: UnsafeBufferPointer<UInt8>) {
            self = Keyword.all.first { $0.name.utf8.elementsEqual(word) } ?? .unknown
        }

        /// Whether `word` is the beginning of a keyword, shorter than it.
        static func isPrefixOfOne(_ word: UnsafeBufferPointer<UInt8>) -> Bool {
            all.contains { $0.name.utf8.count > word.count && $0.name.utf8.starts(with: word) }
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
