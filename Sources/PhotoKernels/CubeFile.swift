// `.cube` LUT files (Adobe Cube LUT Specification 1.0, plus DaVinci Resolve's
// LUT_1D_INPUT_RANGE / LUT_3D_INPUT_RANGE): a strict reader and a writer.
//
// Hardened like the Netpbm reader: the table size is checked against CubeLimits before
// anything is allocated, and the allocation is also bounded by the bytes present; every
// line is bounded in length before it is read; no input can trap (sizes are range-checked
// before they are multiplied) and every loop advances through the input, so nothing hangs.

import Foundation

/// Size limits for reading `.cube` files, checked before allocating.
///
/// A 3D table of size N needs N³ entries of 16 bytes in memory (``ColorCube`` pads each
/// entry to four `Float`s): 33³ is 0.6 MB, 65³ 4.4 MB, 129³ 34 MB, 256³ 268 MB. LUTs
/// in the wild are 17³, 33³ or 65³ (Resolve's largest export), so ``default`` allows up
/// to 129³ and ``large`` the format's maximum, 256³.
public struct CubeLimits: Sendable, Hashable {
    /// The largest number of table entries (N³ for 3D, N for 1D); default 129³ = 2 146 689.
    public var maxEntries: Int
    /// The longest line in bytes, its line end excluded; default 1024. (Adobe's
    /// specification caps lines at 250 characters; longer titles occur in the wild.)
    public var maxLineBytes: Int
    /// The largest file ``CubeFile/init(contentsOf:limits:)`` reads; default 256 MiB
    /// (a 129³ file of 6-decimal values is about 60 MB).
    public var maxFileBytes: Int

    /// 129³ entries, 1024-byte lines, 256 MiB files.
    public static let `default` = CubeLimits()
    /// The format's maximum: 256³ entries (268 MB in memory), 1 GiB files.
    public static let large = CubeLimits(maxEntries: 256 * 256 * 256, maxFileBytes: 1 << 30)

    /// Limits; the defaults are those of ``default``.
    public init(maxEntries: Int = 129 * 129 * 129, maxLineBytes: Int = 1024, maxFileBytes: Int = 256 << 20) {
        self.maxEntries = maxEntries
        self.maxLineBytes = maxLineBytes
        self.maxFileBytes = maxFileBytes
    }
}

/// A malformed or oversized `.cube` file: what is wrong and on which line.
///
/// `line` counts from 1; a line ends at LF, CR LF or a lone CR. Errors about the whole
/// file (it cannot be read, or it is too large to read) have `line` 0.
public struct CubeFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: Sendable, Equatable {
        /// The line is longer than ``CubeLimits/maxLineBytes`` (line end excluded).
        case lineTooLong(limit: Int)
        /// The line starts with a word that is not a `.cube` keyword (shown up to 40 bytes).
        case unknownKeyword(String)
        /// A keyword appears a second time; it first appeared on `firstLine`.
        case duplicateKeyword(String, firstLine: Int)
        /// Two keywords that cannot both appear: `LUT_1D_SIZE` and `LUT_3D_SIZE`, a
        /// `DOMAIN_…` keyword and an `…_INPUT_RANGE`, or an input range for the other
        /// dimension. `other` appeared on `otherLine`.
        case conflictingKeywords(String, other: String, otherLine: Int)
        /// A keyword after the first table entry (the header must come first).
        case keywordAfterData(String)
        /// Neither `LUT_1D_SIZE` nor `LUT_3D_SIZE` precedes the table (or the file has no
        /// size at all); the line is the first entry, or the last line of the file.
        case missingSize
        /// The size is not an integer in 2…256 (3D) or 2…65536 (1D); `value` as written.
        case sizeOutOfRange(keyword: String, value: String, range: ClosedRange<Int>)
        /// The table needs more entries than ``CubeLimits/maxEntries``.
        case tableTooLarge(entries: Int, limit: Int)
        /// A keyword or a table entry has the wrong number of values; `keyword` is `nil`
        /// for a table entry (which needs 3).
        case wrongValueCount(keyword: String?, expected: Int, found: Int)
        /// A value is not a decimal number (shown up to 40 bytes).
        case invalidNumber(String)
        /// A value is NaN, infinite, or beyond `Float`'s range (as written).
        case nonFiniteValue(String)
        /// `TITLE` is not followed by one double-quoted string and nothing else.
        case invalidTitle
        /// On `channel` (0 = R, 1 = G, 2 = B) the domain's min is not below its max; the
        /// line is the later of the keywords that set them.
        case invalidDomain(channel: Int, min: Float, max: Float)
        /// The file ends after `found` of the `expected` entries.
        case tooFewEntries(expected: Int, found: Int)
        /// The line holds an entry beyond the `expected` ones.
        case tooManyEntries(expected: Int)
        /// The file holds more than ``CubeLimits/maxFileBytes`` bytes.
        case fileTooLarge(bytes: Int, limit: Int)
        /// The file cannot be read; `reason` is the system's message.
        case readFailed(path: String, reason: String)
    }

    /// The 1-based line number, 0 for errors about the whole file.
    public var line: Int
    /// What is wrong.
    public var reason: Reason

    /// An error on `line`.
    public init(line: Int, _ reason: Reason) {
        self.line = line
        self.reason = reason
    }

    /// One English sentence: the line and the problem.
    public var description: String {
        let what: String
        switch reason {
        case .lineTooLong(let limit): what = "the line is longer than \(limit) bytes"
        case .unknownKeyword(let word): what = "unknown keyword \"\(quotedText(word))\""
        case .duplicateKeyword(let word, let first): what = "\(word) appears again (first on line \(first))"
        case .conflictingKeywords(let word, let other, let otherLine):
            what = "\(word) conflicts with \(other) on line \(otherLine)"
        case .keywordAfterData(let word): what = "keyword \(word) after the first table entry"
        case .missingSize: what = "no LUT_1D_SIZE or LUT_3D_SIZE before the table"
        case .sizeOutOfRange(let word, let value, let range):
            what = "\(word) \(value) is not an integer in \(range.lowerBound)…\(range.upperBound)"
        case .tableTooLarge(let entries, let limit):
            what = "the table needs \(entries) entries, more than the limit \(limit) (CubeLimits.maxEntries)"
        case .wrongValueCount(let word, let expected, let found):
            what = "\(word ?? "a table entry") needs \(expected) value\(expected == 1 ? "" : "s"), found \(found)"
        case .invalidNumber(let text): what = "\"\(quotedText(text))\" is not a decimal number"
        case .nonFiniteValue(let text): what = "\"\(quotedText(text))\" is not a finite Float value"
        case .invalidTitle: what = "TITLE needs one double-quoted string"
        case .invalidDomain(let channel, let min, let max):
            what = "the domain of \(["R", "G", "B"][channel]) is \(min)…\(max); min must be below max"
        case .tooFewEntries(let expected, let found): what = "the file ends after \(found) of \(expected) table entries"
        case .tooManyEntries(let expected): what = "more than the \(expected) table entries"
        case .fileTooLarge(let bytes, let limit): return "the .cube file has \(bytes) bytes, more than the limit \(limit)"
        case .readFailed(let path, let reason): return "cannot read \(path): \(reason)"
        }
        return "line \(line): \(what)"
    }
}

/// A `.cube` LUT file: an optional title and its table as a ``ColorCube``.
///
/// The subset read (Adobe Cube LUT Specification 1.0 [doc], with DaVinci Resolve's
/// input-range keywords [doc: Resolve's "Cube LUT Format Specification"]):
/// ```
/// # comment                          lines starting with # (after spaces), anywhere
/// TITLE "text"                       optional
/// LUT_3D_SIZE N                      2…256, or LUT_1D_SIZE N, 2…65536: exactly one
/// DOMAIN_MIN r g b                   optional, default 0 0 0
/// DOMAIN_MAX r g b                   optional, default 1 1 1; min < max per channel
/// LUT_3D_INPUT_RANGE lo hi           optional (Resolve): DOMAIN lo lo lo … hi hi hi;
/// LUT_1D_INPUT_RANGE lo hi             not with DOMAIN_…; 1D range only in 1D files
/// r g b                              N³ (3D, red index fastest) or N (1D) entries
/// ```
/// Keywords come before the first entry, in any order, each at most once; keywords are
/// case-sensitive. Values are separated by spaces or tabs and written as decimal
/// numbers (`Float(_:)` syntax without hexadecimal, NaN or infinity); each must be
/// finite as a `Float`. Lines end with LF, CR LF or CR; a leading UTF-8 byte-order mark
/// is skipped; blank lines are ignored. The title's bytes are decoded as UTF-8 (invalid
/// bytes become U+FFFD). Not read: Resolve's shaper files (1D and 3D tables in one file)
/// and `LUT_IN_VIDEO_RANGE`/`LUT_OUT_VIDEO_RANGE` (unknown keywords, an error).
public struct CubeFile: Sendable, Equatable {
    /// The `TITLE`, if the file has one.
    public var title: String?
    /// The table, with tetrahedral interpolation and intensity 1.
    public var cube: ColorCube

    /// A file holding `cube`, titled `title`.
    public init(title: String? = nil, cube: ColorCube) {
        self.title = title
        self.cube = cube
    }

    /// Parses a `.cube` file.
    ///
    /// - Parameters:
    ///   - bytes: the file's contents (`[UInt8]`, `Data`, `String.UTF8View`, …;
    ///     non-contiguous collections are copied once).
    ///   - limits: checked before the table is allocated (see ``CubeLimits``).
    /// - Throws: ``CubeFileError`` naming the line and the problem.
    /// - Complexity: O(bytes.count); the table's memory is bounded by both
    ///   `limits.maxEntries` and the bytes present (an entry needs at least 6 bytes).
    public static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes, limits: CubeLimits = .default) throws(CubeFileError) -> CubeFile {
        if let outcome = bytes.withContiguousStorageIfAvailable({ buffer in
            Result { () throws(CubeFileError) -> CubeFile in
                var parser = CubeParser(buffer, limits: limits)
                return try parser.parse()
            }
        }) {
            return try outcome.get()
        }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer in
            Result { () throws(CubeFileError) -> CubeFile in
                var parser = CubeParser(buffer, limits: limits)
                return try parser.parse()
            }
        }.get()
    }

    /// Reads and parses the `.cube` file at `url`.
    ///
    /// - Throws: ``CubeFileError`` with `line` 0 and ``CubeFileError/Reason/fileTooLarge(bytes:limit:)``
    ///   or ``CubeFileError/Reason/readFailed(path:reason:)``; parse errors as for
    ///   ``parse(_:limits:)``.
    public init(contentsOf url: URL, limits: CubeLimits = .default) throws(CubeFileError) {
        self = try CubeFile.parse(CubeFile.bytes(at: url, limits: limits), limits: limits)
    }

    /// The bytes of the file at `url`, at most `limits.maxFileBytes` of them: a regular
    /// file by its size first, a pipe or device in chunks, stopping as soon as it proves
    /// too long.
    ///
    /// - Throws: ``CubeFileError`` with `line` 0: `.fileTooLarge`, or `.readFailed` with
    ///   the system's reason ("No such file or directory", "it is a directory", …).
    public static func bytes(at url: URL, limits: CubeLimits = .default) throws(CubeFileError) -> Data {
        let path = url.path
        var data = Data()
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            let type = attributes[.type] as? FileAttributeType
            if type == .typeDirectory {
                throw CubeFileError(line: 0, .readFailed(path: path, reason: "it is a directory"))
            }
            if type == .typeRegular {
                let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
                guard size <= limits.maxFileBytes else {
                    throw CubeFileError(line: 0, .fileTooLarge(bytes: size, limit: limits.maxFileBytes))
                }
                data = try Data(contentsOf: url)
            } else {
                let handle = try FileHandle(forReadingFrom: url)
                defer { try? handle.close() }
                while let chunk = try handle.read(upToCount: 1 << 16), !chunk.isEmpty {
                    data.append(chunk)
                    guard data.count <= limits.maxFileBytes else {
                        throw CubeFileError(line: 0, .fileTooLarge(bytes: data.count, limit: limits.maxFileBytes))
                    }
                }
            }
        } catch let error as CubeFileError {
            throw error
        } catch {
            throw CubeFileError(line: 0, .readFailed(path: path, reason: systemReason(error)))
        }
        guard data.count <= limits.maxFileBytes else {
            throw CubeFileError(line: 0, .fileTooLarge(bytes: data.count, limit: limits.maxFileBytes))
        }
        return data
    }

    /// The system's message behind a Foundation file error ("No such file or
    /// directory"), else the error's description.
    private static func systemReason(_ error: any Error) -> String {
        let nsError = error as NSError
        // Foundation keeps the errno as its underlying error (a `POSIXError` value on
        // Linux, which bridges through `any Error` but not by a cast to `NSError`).
        let posix = nsError.domain == NSPOSIXErrorDomain
            ? nsError : (nsError.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        guard let posix, posix.domain == NSPOSIXErrorDomain else { return nsError.localizedDescription }
        return String(cString: strerror(Int32(truncatingIfNeeded: posix.code)))
    }

    /// The file as `.cube` text: `TITLE` (if any), the size, `DOMAIN_MIN`/`DOMAIN_MAX`,
    /// then one entry per line, each value in Swift's shortest round-trip form, so
    /// `parse(encoded())` returns an equal file (a title longer than the line limit
    /// aside). In the title, `"` becomes `'` and CR and LF become spaces.
    ///
    /// - Complexity: O(entries).
    public func encoded() -> [UInt8] {
        var text = ""
        if let title {
            // Only what would end the title or its line; the reader keeps every other character.
            var clean = String.UnicodeScalarView()
            for scalar in title.unicodeScalars {
                clean.append(scalar == "\"" ? "'" : (scalar == "\n" || scalar == "\r" ? " " : scalar))
            }
            text += "TITLE \"\(String(clean))\"\n"
        }
        text += "\(cube.dimension == .threeDimensional ? "LUT_3D_SIZE" : "LUT_1D_SIZE") \(cube.size)\n"
        let lo = cube.domainMin, hi = cube.domainMax
        text += "DOMAIN_MIN \(lo.x) \(lo.y) \(lo.z)\nDOMAIN_MAX \(hi.x) \(hi.y) \(hi.z)\n"
        var bytes = Array(text.utf8)
        bytes.reserveCapacity(bytes.count + cube.entryCount * 24)
        for index in 0..<cube.entryCount {
            let e = cube[index]
            bytes.append(contentsOf: "\(e.x) \(e.y) \(e.z)\n".utf8)
        }
        return bytes
    }
}

/// The line-by-line reader behind ``CubeFile/parse(_:limits:)``.
struct CubeParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let limits: CubeLimits
    private var position = 0
    private var lineNumber = 0

    // The header, with the line of each keyword seen.
    private var title: String?
    private var seen: [String: Int] = [:]
    private var dimension: ColorCube.Dimension?
    private var size = 0
    private var domainMin = SIMD3<Float>(0, 0, 0)
    private var domainMax = SIMD3<Float>(1, 1, 1)

    init(_ bytes: UnsafeBufferPointer<UInt8>, limits: CubeLimits) {
        self.bytes = bytes
        self.limits = limits
        // A UTF-8 byte-order mark, as some Windows tools write.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
    }

    static let keywords = ["TITLE", "LUT_1D_SIZE", "LUT_3D_SIZE", "DOMAIN_MIN", "DOMAIN_MAX",
                           "LUT_1D_INPUT_RANGE", "LUT_3D_INPUT_RANGE"]

    private func error(_ reason: CubeFileError.Reason) -> CubeFileError { CubeFileError(line: lineNumber, reason) }

    @inline(__always)
    private static func isBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }

    /// The next line's byte range (line end excluded), or nil at the end of the input.
    private mutating func nextLine() throws(CubeFileError) -> Range<Int>? {
        guard position < bytes.count else { return nil }
        lineNumber += 1
        let start = position
        // Scan at most one byte past the limit, so a huge line costs no more than a short one.
        let cap = limits.maxLineBytes < Int.max ? max(limits.maxLineBytes, 0) + 1 : Int.max
        let limitEnd = start + min(bytes.count - start, cap)
        var end = start
        while end < limitEnd, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
        if end - start > limits.maxLineBytes { throw error(.lineTooLong(limit: limits.maxLineBytes)) }
        position = end
        if position < bytes.count {
            if bytes[position] == 0x0D, position + 1 < bytes.count, bytes[position + 1] == 0x0A { position += 2 } else { position += 1 }
        }
        return start..<end
    }

    /// The tokens of `line`, split at spaces and tabs.
    private func tokens(_ line: Range<Int>) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var i = line.lowerBound
        while i < line.upperBound {
            while i < line.upperBound, Self.isBlank(bytes[i]) { i += 1 }
            let start = i
            while i < line.upperBound, !Self.isBlank(bytes[i]) { i += 1 }
            if i > start { result.append(start..<i) }
        }
        return result
    }

    /// Up to 40 bytes of `range` as text, for messages.
    private func text(_ range: Range<Int>) -> String {
        let shown = range.lowerBound..<min(range.upperBound, range.lowerBound + 40)
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[shown]), as: UTF8.self)
    }

    /// Whether a line whose first non-blank byte is `b` is a table entry rather than a
    /// keyword: it starts like a number (a digit, a sign, a point) or like `nan`/`inf`.
    private static func startsEntry(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || b == 0x2B || b == 0x2D || b == 0x2E || b == 0x6E || b == 0x69
    }

    /// One decimal value as a finite `Float`.
    private func number(_ range: Range<Int>) throws(CubeFileError) -> Float {
        var decimal = true, letters = false
        for i in range {
            switch bytes[i] {
            case 0x30...0x39, 0x2B, 0x2D, 0x2E, 0x45, 0x65: break  // digits + - . E e
            case 0x41...0x5A, 0x61...0x7A: letters = true; decimal = false
            default: decimal = false
            }
        }
        let token = text(range)
        if decimal,
           let value = Float(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)) {
            guard value.isFinite else { throw error(.nonFiniteValue(token)) }
            return value
        }
        if letters {
            let lower = token.lowercased()
            let unsigned = lower.hasPrefix("-") || lower.hasPrefix("+") ? String(lower.dropFirst()) : lower
            if unsigned.hasPrefix("nan") || unsigned.hasPrefix("inf") { throw error(.nonFiniteValue(token)) }
        }
        throw error(.invalidNumber(token))
    }

    /// Records `keyword` as seen on this line; throws if it was seen before.
    private mutating func note(_ keyword: String) throws(CubeFileError) {
        if let first = seen[keyword] { throw error(.duplicateKeyword(keyword, firstLine: first)) }
        seen[keyword] = lineNumber
    }

    /// Throws if `other` was seen: it cannot appear with `keyword`.
    private func exclude(_ keyword: String, _ other: String) throws(CubeFileError) {
        if let otherLine = seen[other] {
            throw error(.conflictingKeywords(keyword, other: other, otherLine: otherLine))
        }
    }

    /// Parses one keyword line; `words` are its tokens, the keyword first.
    private mutating func keyword(_ words: [Range<Int>], line: Range<Int>) throws(CubeFileError) {
        let word = text(words[0])
        let values = words.count - 1
        func count(_ expected: Int) throws(CubeFileError) {
            guard values == expected else { throw error(.wrongValueCount(keyword: word, expected: expected, found: values)) }
        }
        switch word {
        case "TITLE":
            try note(word)
            title = try titleText(line, after: words[0].upperBound)
        case "LUT_1D_SIZE", "LUT_3D_SIZE":
            try note(word)
            try exclude(word, word == "LUT_1D_SIZE" ? "LUT_3D_SIZE" : "LUT_1D_SIZE")
            if word == "LUT_3D_SIZE" { try exclude(word, "LUT_1D_INPUT_RANGE") }
            try count(1)
            let d: ColorCube.Dimension = word == "LUT_3D_SIZE" ? .threeDimensional : .oneDimensional
            let range = ColorCube.sizeRange(d)
            let digits = words[1]
            let value = digits.allSatisfy { bytes[$0] >= 0x30 && bytes[$0] <= 0x39 } && digits.count <= 9
                ? Int(text(digits)) : nil
            guard let n = value, range.contains(n) else {
                throw error(.sizeOutOfRange(keyword: word, value: text(digits), range: range))
            }
            let entries = d == .threeDimensional ? n * n * n : n  // ≤ 256³: no overflow
            guard entries <= limits.maxEntries else { throw error(.tableTooLarge(entries: entries, limit: limits.maxEntries)) }
            dimension = d
            size = n
        case "DOMAIN_MIN", "DOMAIN_MAX":
            try note(word)
            try exclude(word, "LUT_1D_INPUT_RANGE")
            try exclude(word, "LUT_3D_INPUT_RANGE")
            try count(3)
            let v = SIMD3(try number(words[1]), try number(words[2]), try number(words[3]))
            if word == "DOMAIN_MIN" { domainMin = v } else { domainMax = v }
        case "LUT_1D_INPUT_RANGE", "LUT_3D_INPUT_RANGE":
            try note(word)
            try exclude(word, "DOMAIN_MIN")
            try exclude(word, "DOMAIN_MAX")
            try exclude(word, word == "LUT_1D_INPUT_RANGE" ? "LUT_3D_INPUT_RANGE" : "LUT_1D_INPUT_RANGE")
            if word == "LUT_1D_INPUT_RANGE" { try exclude(word, "LUT_3D_SIZE") }
            try count(2)
            let lo = try number(words[1]), hi = try number(words[2])
            domainMin = SIMD3(repeating: lo)
            domainMax = SIMD3(repeating: hi)
        default:
            throw error(.unknownKeyword(word))
        }
    }

    /// The quoted text after `TITLE`: one `"…"` and only blanks after it.
    private func titleText(_ line: Range<Int>, after start: Int) throws(CubeFileError) -> String {
        var i = start
        while i < line.upperBound, Self.isBlank(bytes[i]) { i += 1 }
        guard i < line.upperBound, bytes[i] == 0x22 else { throw error(.invalidTitle) }
        let open = i + 1
        var close = open
        while close < line.upperBound, bytes[close] != 0x22 { close += 1 }
        guard close < line.upperBound else { throw error(.invalidTitle) }
        var j = close + 1
        while j < line.upperBound, Self.isBlank(bytes[j]) { j += 1 }
        guard j == line.upperBound else { throw error(.invalidTitle) }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[open..<close]), as: UTF8.self)
    }

    /// Checks the header once the table starts (or the file ends): a size is present and
    /// the domain is an interval on every channel.
    private func checkHeader() throws(CubeFileError) {
        guard dimension != nil else { throw error(.missingSize) }
        for c in 0..<3 where !(domainMin[c] < domainMax[c]) {
            let lines = ["DOMAIN_MIN", "DOMAIN_MAX", "LUT_1D_INPUT_RANGE", "LUT_3D_INPUT_RANGE"].compactMap { seen[$0] }
            throw CubeFileError(line: lines.max() ?? lineNumber,
                                .invalidDomain(channel: c, min: domainMin[c], max: domainMax[c]))
        }
    }

    mutating func parse() throws(CubeFileError) -> CubeFile {
        var table: [SIMD4<Float>] = []
        var expected = 0
        var inTable = false
        while let line = try nextLine() {
            var first = line.lowerBound
            while first < line.upperBound, Self.isBlank(bytes[first]) { first += 1 }
            guard first < line.upperBound, bytes[first] != 0x23 else { continue }  // blank or # comment
            let words = tokens(first..<line.upperBound)
            if !Self.startsEntry(bytes[first]) {
                if inTable {
                    let word = text(words[0])
                    throw error(Self.keywords.contains(word) ? .keywordAfterData(word) : .unknownKeyword(word))
                }
                try keyword(words, line: line)
                continue
            }
            if !inTable {
                try checkHeader()
                inTable = true
                expected = dimension == .threeDimensional ? size * size * size : size
                // Bounded by the limit (checked at the size line) and by the bytes left:
                // every entry but the last takes at least 6 bytes ("0 0 0\n").
                table.reserveCapacity(min(expected, (bytes.count - line.lowerBound) / 6 + 1))
            }
            guard table.count < expected else { throw error(.tooManyEntries(expected: expected)) }
            guard words.count == 3 else { throw error(.wrongValueCount(keyword: nil, expected: 3, found: words.count)) }
            table.append(SIMD4(try number(words[0]), try number(words[1]), try number(words[2]), 0))
        }
        lineNumber = max(lineNumber, 1)
        if !inTable {
            try checkHeader()
            expected = dimension == .threeDimensional ? size * size * size : size
        }
        guard table.count == expected else { throw error(.tooFewEntries(expected: expected, found: table.count)) }
        let cube = ColorCube(checked: dimension!, size: size, table: table, domainMin: domainMin, domainMax: domainMax)
        return CubeFile(title: title, cube: cube)
    }
}
