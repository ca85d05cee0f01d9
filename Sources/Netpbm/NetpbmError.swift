// Typed errors for Netpbm reading and writing.
//
// Modelled on swift-png: one case per distinct problem, grouped by the phase that detects
// it, each carrying the offending values and, for input problems, the byte offset (from the
// start of the input, 0-based) where the problem was found. `description` is one English
// sentence that names the problem and the offset.

/// Everything that can go wrong reading or writing Netpbm data.
///
/// Cases are grouped by ``phase``:
/// - ``Phase/signature``: the first bytes are not a supported Netpbm magic number.
/// - ``Phase/header``: a P1–P6 header token or a PAM header line is wrong.
/// - ``Phase/limits``: the image is larger than ``NetpbmLimits`` allow, or its size overflows.
/// - ``Phase/raster``: the pixel data is short or holds a sample above maxval.
/// - ``Phase/image``: a ``NetpbmImage`` value is inconsistent (construction or writing).
/// - ``Phase/writing``: the image cannot be stored in the requested format.
/// - ``Phase/io``: the file system or a stream failed.
/// - ``Phase/usage``: a stream reader or writer was asked for something its current state
///   does not allow (a programming error, reported instead of trapping).
///
/// Every `offset` is a byte offset from the start of the input given to the reader
/// (for a stream, from the first byte read).
///
/// ``NetpbmStreamReader`` wraps every error it throws in ``inFrame(_:_:)``, which names the
/// image (1-based) the error belongs to; ``frame`` and ``underlying`` take it apart.
public enum NetpbmError: Error, Sendable, Equatable, CustomStringConvertible {

    /// The header item a reader was looking for when it failed.
    public enum Field: String, Sendable, Hashable {
        /// The two-byte magic number `P1` … `P7`.
        case magic = "magic number"
        /// The image width (P1–P6 token or PAM `WIDTH`).
        case width
        /// The image height (P1–P6 token or PAM `HEIGHT`).
        case height
        /// PAM `DEPTH`.
        case depth
        /// The maximum sample value (P2, P3, P5, P6 token or PAM `MAXVAL`).
        case maxval
        /// A sample of a plain (P1–P3) raster.
        case sample
        /// The end of a PAM header line (only spaces may follow a value).
        case lineEnd = "end of the line"
        /// The single whitespace byte (or comment) that ends a raw header.
        case rasterSeparator = "whitespace byte before the raster"
        /// The PAM `ENDHDR` line.
        case endOfHeader = "ENDHDR line"
    }

    /// The stage of reading or writing that detects an error.
    public enum Phase: String, Sendable, Hashable {
        /// Identifying the format from the first two bytes.
        case signature
        /// Parsing the P1–P6 header tokens or the PAM header lines.
        case header
        /// Comparing the image size with ``NetpbmLimits`` and with `Int`.
        case limits
        /// Decoding the pixel data.
        case raster
        /// Checking a ``NetpbmImage`` value (initializer, writer).
        case image
        /// Matching an image to the requested output format.
        case writing
        /// Reading or writing files and streams.
        case io
        /// Calling a stream reader or writer out of order (too many samples, a sample type
        /// too narrow for the maxval, an image left incomplete).
        case usage
    }

    // MARK: Signature

    /// The input does not start with `P1` … `P7`. `found` holds the first (up to two) bytes.
    case invalidMagic(found: [UInt8], offset: Int)
    /// The input is a related format this module deliberately does not read:
    /// PFM (`PF`/`Pf`) or an XV thumbnail (`P7 332`).
    case unsupportedFormat(name: String, offset: Int)

    // MARK: Header

    /// The input ends where `expected` should be.
    case unexpectedEnd(expected: Field, offset: Int)
    /// A `#` comment is not ended by CR or LF before the input ends; `offset` is the `#`.
    case unterminatedComment(offset: Int)
    /// A byte that cannot start or continue `expected` (e.g. a sign, a letter, a NUL).
    case unexpectedByte(found: UInt8, expected: Field, offset: Int)
    /// A decimal token is longer than ``NetpbmLimits/maxTokenDigits`` digits; `offset` is its
    /// first digit. Checked before the rest of the token is read, so megabyte-long digit
    /// strings fail fast.
    case tokenTooLong(field: Field, limit: Int, offset: Int)
    /// A number is larger than the field allows (`limit`): 2147483647 for width, height and
    /// depth, 65535 for maxval. `digits` is the token as written.
    case numberTooLarge(field: Field, digits: String, limit: Int, offset: Int)
    /// Width, height, depth or maxval is 0.
    case zeroValue(field: Field, offset: Int)
    /// A PAM header line (without its line end) is longer than
    /// ``NetpbmLimits/maxPAMHeaderLineBytes``; `offset` is the line's first byte.
    case pamHeaderLineTooLong(limit: Int, offset: Int)
    /// A PAM header line starts with a word that is not `WIDTH`, `HEIGHT`, `DEPTH`, `MAXVAL`,
    /// `TUPLTYPE` or `ENDHDR` (libnetpbm rejects these too).
    case pamUnknownKeyword(keyword: String, offset: Int)
    /// `WIDTH`, `HEIGHT`, `DEPTH` or `MAXVAL` appears a second time; `offset` is the repeat.
    case pamDuplicateKeyword(keyword: String, offset: Int)
    /// `WIDTH`, `HEIGHT`, `DEPTH` or `MAXVAL` is absent; `offset` is the `ENDHDR` line.
    case pamMissingKeyword(keyword: String, offset: Int)
    /// The joined `TUPLTYPE` value is longer than ``NetpbmLimits/maxTupleTypeBytes``.
    case pamTupleTypeTooLong(length: Int, limit: Int, offset: Int)
    /// `DEPTH` is smaller than the tuple type needs (e.g. `RGB_ALPHA` with `DEPTH 3`);
    /// `offset` is the `DEPTH` line.
    case depthTooSmallForTupleType(depth: Int, tupleType: TupleType, required: Int, offset: Int)

    // MARK: Limits

    /// width × height is larger than ``NetpbmLimits/maxPixels``; `offset` is the image's
    /// first byte (its magic number).
    case exceedsPixelLimit(width: Int, height: Int, limit: Int, offset: Int)
    /// The decoded samples (2 bytes each, summed over all images of a `readAll`; of one
    /// image for ``NetpbmStreamReader``) need more than ``NetpbmLimits/maxBytes``; `offset`
    /// is the image's first byte.
    case exceedsByteLimit(bytes: Int, limit: Int, offset: Int)
    /// width × height × depth (or the byte count) overflows `Int`.
    case sizeOverflow(width: Int, height: Int, depth: Int, offset: Int)
    /// A stream or file read whole by ``NetpbmReader`` holds more than
    /// ``NetpbmLimits/maxBytes`` bytes; reading stopped at `offset`.
    case inputTooLarge(limit: Int, offset: Int)

    // MARK: Raster

    /// A raw raster needs `expectedBytes` but only `availableBytes` remain; a plain raster
    /// needs at least `expectedBytes` (one byte per P1 pixel, two per P2/P3 sample but the
    /// last). `offset` is the raster's first byte, so the input ends at
    /// `offset + availableBytes`. ``NetpbmReader`` checks this before allocating;
    /// ``NetpbmStreamReader`` reports it when the stream ends inside the raster.
    case truncatedRaster(expectedBytes: Int, availableBytes: Int, offset: Int)
    /// A plain raster ends after `found` of `expected` samples; `offset` is the end of input.
    case missingSamples(expected: Int, found: Int, offset: Int)
    /// A sample is larger than maxval; `offset` is its first byte (raw) or first digit (plain).
    case sampleAboveMaxval(value: Int, maxval: Int, offset: Int)

    // MARK: FloatImage (construction and writing)

    /// Width, height or depth is below 1, or their product overflows `Int`.
    case invalidImageSize(width: Int, height: Int, depth: Int)
    /// maxval is outside 1...65535.
    case invalidMaxval(Int)
    /// `samples.count` is not width × height × depth.
    case sampleCountMismatch(expected: Int, found: Int)
    /// `samples[index]` is larger than maxval.
    case sampleOutOfRange(value: Int, maxval: Int, index: Int)
    /// The image's depth is smaller than its tuple type needs.
    case imageDepthTooSmallForTupleType(depth: Int, tupleType: TupleType, required: Int)
    /// The tuple type cannot appear in a PAM header: it must be printable ASCII
    /// (0x20–0x7E), not start or end with a space, and be at most 255 bytes.
    case invalidTupleType(String)

    // MARK: Writing

    /// The format needs a different depth (PBM and PGM 1, PPM 3).
    case depthMismatch(format: NetpbmFormat, depth: Int, required: Int)
    /// PBM (P1, P4) needs maxval 1.
    case maxvalMismatch(format: NetpbmFormat, maxval: Int, required: Int)
    /// `write` or `encode` was given an empty array of images.
    case nothingToWrite

    // MARK: I/O

    /// Reading a file or stream failed; `reason` is the system's message.
    case readFailed(path: String, reason: String)
    /// Writing or renaming the output file failed; `reason` is the system's message.
    case writeFailed(path: String, reason: String)
    /// `write(2)` failed with `EPIPE`: the reading end of the pipe was closed, so nobody
    /// wants the rest of the output. A command-line tool usually ends quietly on this one
    /// (with `SIGPIPE` ignored, which is what lets `write(2)` return `EPIPE` at all).
    case brokenPipe(path: String)

    // MARK: Usage (stream reader and writer)

    /// A stream reader or writer was asked to read or write `requested` samples when only
    /// `remaining` are left in the current image (0 before the first image or after the
    /// last).
    case tooManySamples(requested: Int, remaining: Int)
    /// Samples were requested as `UInt8` but the image's maxval does not fit in 8 bits.
    case sampleTypeTooNarrow(maxval: Int)
    /// A stream writer began a new image, or ended this one, after `written` of its
    /// `expected` samples.
    case incompleteImage(expected: Int, written: Int)

    // MARK: Streams

    /// `error` happened while ``NetpbmStreamReader`` read image number `frame` of the
    /// stream (1-based; the image whose header was being read, or whose raster).
    indirect case inFrame(_ frame: Int, _ error: NetpbmError)

    /// The 1-based image index of an ``inFrame(_:_:)`` error, otherwise `nil`.
    public var frame: Int? {
        if case .inFrame(let frame, _) = self { return frame }
        return nil
    }

    /// The error without its ``inFrame(_:_:)`` wrapper (the error itself if it has none),
    /// for matching the case: `if case .brokenPipe = error.underlying { … }`.
    public var underlying: NetpbmError {
        if case .inFrame(_, let error) = self { return error.underlying }
        return self
    }

    /// The stage that detected this error.
    public var phase: Phase {
        switch self {
        case .inFrame(_, let error):
            return error.phase
        case .invalidMagic, .unsupportedFormat:
            return .signature
        case .unexpectedEnd(let field, _), .unexpectedByte(_, let field, _),
             .tokenTooLong(let field, _, _), .numberTooLarge(let field, _, _, _):
            return field == .sample ? .raster : .header
        case .unterminatedComment, .zeroValue, .pamHeaderLineTooLong, .pamUnknownKeyword,
             .pamDuplicateKeyword, .pamMissingKeyword, .pamTupleTypeTooLong,
             .depthTooSmallForTupleType:
            return .header
        case .exceedsPixelLimit, .exceedsByteLimit, .sizeOverflow, .inputTooLarge:
            return .limits
        case .truncatedRaster, .missingSamples, .sampleAboveMaxval:
            return .raster
        case .invalidImageSize, .invalidMaxval, .sampleCountMismatch, .sampleOutOfRange,
             .imageDepthTooSmallForTupleType, .invalidTupleType:
            return .image
        case .depthMismatch, .maxvalMismatch, .nothingToWrite:
            return .writing
        case .readFailed, .writeFailed, .brokenPipe:
            return .io
        case .tooManySamples, .sampleTypeTooNarrow, .incompleteImage:
            return .usage
        }
    }

    /// The byte offset in the input where the problem was found, or `nil` for errors that
    /// are not about input bytes (image, writing and I/O errors).
    public var offset: Int? {
        switch self {
        case .invalidMagic(_, let o), .unsupportedFormat(_, let o), .unexpectedEnd(_, let o),
             .unterminatedComment(let o), .unexpectedByte(_, _, let o), .tokenTooLong(_, _, let o),
             .numberTooLarge(_, _, _, let o), .zeroValue(_, let o), .pamHeaderLineTooLong(_, let o),
             .pamUnknownKeyword(_, let o), .pamDuplicateKeyword(_, let o),
             .pamMissingKeyword(_, let o), .pamTupleTypeTooLong(_, _, let o),
             .depthTooSmallForTupleType(_, _, _, let o), .exceedsPixelLimit(_, _, _, let o),
             .exceedsByteLimit(_, _, let o), .sizeOverflow(_, _, _, let o),
             .inputTooLarge(_, let o), .truncatedRaster(_, _, let o),
             .missingSamples(_, _, let o), .sampleAboveMaxval(_, _, let o):
            return o
        case .inFrame(_, let error):
            return error.offset
        case .invalidImageSize, .invalidMaxval, .sampleCountMismatch, .sampleOutOfRange,
             .imageDepthTooSmallForTupleType, .invalidTupleType, .depthMismatch,
             .maxvalMismatch, .nothingToWrite, .readFailed, .writeFailed, .brokenPipe,
             .tooManySamples, .sampleTypeTooNarrow, .incompleteImage:
            return nil
        }
    }

    /// One English sentence naming the problem, the values involved and the byte offset,
    /// e.g. `Netpbm header: height 358888888632 is larger than 2147483647 (byte offset 5)`.
    public var description: String {
        switch self {
        case .invalidMagic(let found, let offset):
            return "Netpbm signature: the image starts with \"\(Self.escaped(found))\", which is not a Netpbm magic number P1–P7 (byte offset \(offset))"
        case .unsupportedFormat(let name, let offset):
            return "Netpbm signature: \(name) is not supported (byte offset \(offset))"
        case .unexpectedEnd(let expected, let offset):
            return "\(Self.prefix(expected)): the input ends where the \(expected.rawValue) was expected (byte offset \(offset))"
        case .unterminatedComment(let offset):
            return "Netpbm header: the comment is not ended by CR or LF before the input ends (byte offset \(offset))"
        case .unexpectedByte(let found, let expected, let offset):
            let what = [.width, .height, .depth, .maxval, .sample].contains(expected)
                ? "the \(expected.rawValue) (decimal digits)" : "the \(expected.rawValue)"
            return "\(Self.prefix(expected)): expected \(what) but found \(Self.describe(byte: found)) (byte offset \(offset))"
        case .tokenTooLong(let field, let limit, let offset):
            return "\(Self.prefix(field)): the \(field.rawValue) has more than \(limit) digits (byte offset \(offset))"
        case .numberTooLarge(let field, let digits, let limit, let offset):
            return "\(Self.prefix(field)): \(field.rawValue) \(digits) is larger than \(limit) (byte offset \(offset))"
        case .zeroValue(let field, let offset):
            return "Netpbm header: \(field.rawValue) is 0 but must be at least 1 (byte offset \(offset))"
        case .pamHeaderLineTooLong(let limit, let offset):
            return "Netpbm PAM header: a header line is longer than \(limit) bytes (byte offset \(offset))"
        case .pamUnknownKeyword(let keyword, let offset):
            return "Netpbm PAM header: unknown keyword \"\(keyword)\"; expected WIDTH, HEIGHT, DEPTH, MAXVAL, TUPLTYPE or ENDHDR (byte offset \(offset))"
        case .pamDuplicateKeyword(let keyword, let offset):
            return "Netpbm PAM header: \(keyword) appears more than once (byte offset \(offset))"
        case .pamMissingKeyword(let keyword, let offset):
            return "Netpbm PAM header: \(keyword) is missing before ENDHDR (byte offset \(offset))"
        case .pamTupleTypeTooLong(let length, let limit, let offset):
            return "Netpbm PAM header: TUPLTYPE is \(length) bytes long, more than \(limit) (byte offset \(offset))"
        case .depthTooSmallForTupleType(let depth, let tupleType, let required, let offset):
            return "Netpbm PAM header: tuple type \(tupleType.printable) needs DEPTH \(required) or more but DEPTH is \(depth) (byte offset \(offset))"
        case .exceedsPixelLimit(let width, let height, let limit, let offset):
            // Overflow-checked: a hand-made error value must not trap while being printed.
            let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
            let product = overflow ? "more than \(Int.max)" : "\(pixels)"
            return "Netpbm limits: \(width)×\(height) = \(product) pixels is more than the limit of \(limit) pixels (image at byte offset \(offset))"
        case .exceedsByteLimit(let bytes, let limit, let offset):
            return "Netpbm limits: the decoded samples need \(bytes) bytes, more than the limit of \(limit) bytes (image at byte offset \(offset))"
        case .sizeOverflow(let width, let height, let depth, let offset):
            return "Netpbm limits: the size \(width)×\(height)×\(depth) overflows a \(Int.bitWidth)-bit integer (image at byte offset \(offset))"
        case .inputTooLarge(let limit, let offset):
            return "Netpbm limits: the input is longer than the limit of \(limit) bytes (byte offset \(offset))"
        case .truncatedRaster(let expected, let available, let offset):
            // Overflow-checked: a hand-made error value must not trap while being printed.
            let (end, overflow) = offset.addingReportingOverflow(available)
            let ending = overflow ? "" : ", at byte offset \(end)"
            return "Netpbm raster: the raster needs \(expected) bytes but the input ends after \(available) of them\(ending) (raster at byte offset \(offset))"
        case .missingSamples(let expected, let found, let offset):
            return "Netpbm raster: expected \(expected) samples but the input ends after \(found) (byte offset \(offset))"
        case .sampleAboveMaxval(let value, let maxval, let offset):
            return "Netpbm raster: sample \(value) is larger than maxval \(maxval) (byte offset \(offset))"
        case .invalidImageSize(let width, let height, let depth):
            return "Netpbm image: width \(width), height \(height), depth \(depth) is not a valid size: each must be at least 1 and their product must fit in Int"
        case .invalidMaxval(let maxval):
            return "Netpbm image: maxval \(maxval) is outside 1...65535"
        case .sampleCountMismatch(let expected, let found):
            return "Netpbm image: width × height × depth is \(expected) samples but the image holds \(found)"
        case .sampleOutOfRange(let value, let maxval, let index):
            return "Netpbm image: sample \(value) at index \(index) is larger than maxval \(maxval)"
        case .imageDepthTooSmallForTupleType(let depth, let tupleType, let required):
            return "Netpbm image: tuple type \(tupleType.printable) needs depth \(required) or more but the depth is \(depth)"
        case .invalidTupleType(let string):
            return "Netpbm image: tuple type \"\(Self.escaped(Array(string.utf8.prefix(64))))\" cannot be written: it must be printable ASCII without leading or trailing spaces, at most 255 bytes"
        case .depthMismatch(let format, let depth, let required):
            return "Netpbm writer: \(format.magic) needs depth \(required) but the image has depth \(depth)"
        case .maxvalMismatch(let format, let maxval, let required):
            return "Netpbm writer: \(format.magic) needs maxval \(required) but the image has maxval \(maxval)"
        case .nothingToWrite:
            return "Netpbm writer: there are no images to write"
        case .readFailed(let path, let reason):
            return "Netpbm I/O: cannot read \(path): \(reason)"
        case .writeFailed(let path, let reason):
            return "Netpbm I/O: cannot write \(path): \(reason)"
        case .brokenPipe(let path):
            return "Netpbm I/O: cannot write \(path): the reading end of the pipe is closed (EPIPE)"
        case .tooManySamples(let requested, let remaining):
            return "Netpbm usage: \(requested) samples were requested but the current image has \(remaining) left"
        case .sampleTypeTooNarrow(let maxval):
            return "Netpbm usage: maxval \(maxval) does not fit in UInt8 samples; use UInt16"
        case .incompleteImage(let expected, let written):
            return "Netpbm usage: the image needs \(expected) samples but only \(written) were written"
        case .inFrame(let frame, let error):
            // "Netpbm raster: …" becomes "Netpbm raster, frame 57: …".
            let inner = error.description
            guard let colon = inner.range(of: ": ") else { return "frame \(frame): \(inner)" }
            return "\(inner[..<colon.lowerBound]), frame \(frame)\(inner[colon.lowerBound...])"
        }
    }

    private static func prefix(_ field: Field) -> String {
        field == .sample ? "Netpbm raster" : "Netpbm header"
    }

    /// Bytes as text, printable ASCII kept and everything else written `\xNN`.
    static func escaped(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes {
            if byte >= 0x20, byte < 0x7F, byte != 0x22, byte != 0x5C {
                text.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                text += "\\x" + hex(byte)
            }
        }
        return text
    }

    private static func describe(byte: UInt8) -> String {
        if byte >= 0x21, byte < 0x7F, byte != 0x27 {
            return "'\(UnicodeScalar(byte))' (0x\(hex(byte)))"
        }
        return "byte 0x\(hex(byte))"
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
