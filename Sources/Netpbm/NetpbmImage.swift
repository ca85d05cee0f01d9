// The decoded form of one Netpbm image, and the size limits the reader enforces.

/// One Netpbm image as integer samples, exactly as stored in the file.
///
/// Layout (the same for every format):
/// - `samples` holds `width × height × depth` values, no padding;
/// - rows go top to bottom, pixels left to right within a row;
/// - each pixel is `depth` consecutive samples (planes), in file order:
///   grey for PBM/PGM, R G B for PPM, the PAM tuple order otherwise (alpha last for the
///   `_ALPHA` tuple types, straight and linear);
/// - every sample is in `0...maxval`.
///
/// Bitmaps: PBM files store 1 = black, but a decoded PBM image has `maxval` 1,
/// ``TupleType/blackAndWhite`` and **1 = white, 0 = black**, like PAM `BLACKANDWHITE`, so that
/// `sample / maxval` is brightness for every format. The writer inverts again for P1/P4.
///
/// Converting to the library's floats (`x = v / maxval`) and back lives in the PhotoKernels
/// module; this type only carries the integers.
///
/// The stored properties are `var` for convenience; ``NetpbmWriter`` re-checks every
/// invariant before writing, so a value edited into an invalid state fails with a
/// ``NetpbmError`` instead of producing a broken file.
public struct NetpbmImage: Sendable, Equatable {
    /// Columns, at least 1.
    public var width: Int
    /// Rows, at least 1.
    public var height: Int
    /// Samples per pixel: 1 for PBM and PGM, 3 for PPM, `DEPTH` for PAM; at least 1.
    public var depth: Int
    /// The largest sample value, 1...65535. Files store samples in 1 byte when
    /// maxval < 256, else 2 bytes big-endian. Any maxval is valid (e.g. 15, 1023, 4095).
    public var maxval: Int
    /// What the planes mean.
    public var tupleType: TupleType
    /// The raster: `width × height × depth` samples, row-major, planes interleaved.
    public var samples: [UInt16]
    /// The format the image was read from; the writer's default output format.
    public var format: NetpbmFormat

    /// Creates an image after checking it.
    ///
    /// - Throws: ``NetpbmError/invalidImageSize(width:height:depth:)`` if a dimension is
    ///   below 1 or `width × height × depth` overflows;
    ///   ``NetpbmError/invalidMaxval(_:)`` unless `1 ≤ maxval ≤ 65535`;
    ///   ``NetpbmError/sampleCountMismatch(expected:found:)``;
    ///   ``NetpbmError/sampleOutOfRange(value:maxval:index:)`` for the first sample above maxval;
    ///   ``NetpbmError/imageDepthTooSmallForTupleType(depth:tupleType:required:)``;
    ///   ``NetpbmError/invalidTupleType(_:)`` if the tuple type could not be written in a
    ///   PAM header.
    /// - Complexity: O(`samples.count`).
    /// - Note: `format` is not checked against `depth` (it is only a default); the writer
    ///   rejects, say, a depth-4 image written as PPM.
    public init(
        width: Int, height: Int, depth: Int, maxval: Int, tupleType: TupleType,
        samples: [UInt16], format: NetpbmFormat
    ) throws(NetpbmError) {
        self.init(
            unchecked: width, height: height, depth: depth, maxval: maxval,
            tupleType: tupleType, samples: samples, format: format)
        try validate()
    }

    /// Creates an image without checks: the reader has already validated everything.
    init(
        unchecked width: Int, height: Int, depth: Int, maxval: Int, tupleType: TupleType,
        samples: [UInt16], format: NetpbmFormat
    ) {
        self.width = width
        self.height = height
        self.depth = depth
        self.maxval = maxval
        self.tupleType = tupleType
        self.samples = samples
        self.format = format
    }

    /// Checks every invariant listed on ``init(width:height:depth:maxval:tupleType:samples:format:)``.
    func validate() throws(NetpbmError) {
        guard width >= 1, height >= 1, depth >= 1 else {
            throw .invalidImageSize(width: width, height: height, depth: depth)
        }
        let (pixels, o1) = width.multipliedReportingOverflow(by: height)
        let (count, o2) = pixels.multipliedReportingOverflow(by: depth)
        guard !o1, !o2 else { throw .invalidImageSize(width: width, height: height, depth: depth) }
        guard (1...65535).contains(maxval) else { throw .invalidMaxval(maxval) }
        guard samples.count == count else {
            throw .sampleCountMismatch(expected: count, found: samples.count)
        }
        guard depth >= tupleType.minimumDepth else {
            throw .imageDepthTooSmallForTupleType(
                depth: depth, tupleType: tupleType, required: tupleType.minimumDepth)
        }
        guard Self.isWritableTupleType(tupleType.rawValue) else {
            throw .invalidTupleType(tupleType.rawValue)
        }
        let limit = UInt16(maxval)
        if limit != UInt16.max {
            // One branch-free pass for the common valid case; locate the culprit only on failure.
            let largest = samples.withUnsafeBufferPointer { buffer in
                buffer.reduce(UInt16(0)) { Swift.max($0, $1) }
            }
            if largest > limit, let index = samples.firstIndex(where: { $0 > limit }) {
                throw .sampleOutOfRange(value: Int(samples[index]), maxval: maxval, index: index)
            }
        }
    }

    /// A tuple type can be written if it fits on one PAM header line and reads back equal:
    /// printable ASCII, no leading or trailing space (the reader trims those), ≤ 255 bytes.
    static func isWritableTupleType(_ string: String) -> Bool {
        let bytes = Array(string.utf8)
        guard bytes.count <= NetpbmLimits.maxTupleTypeBytes else { return false }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return false }
        return bytes.first != 0x20 && bytes.last != 0x20
    }
}

/// Limits that stop a hostile or damaged header from making the reader allocate or read
/// without bound. Every limit is checked before the raster is allocated.
///
/// - ``maxPixels``: width × height of one image (default 2²⁸ = 268 435 456 pixels, about
///   16384 × 16384).
/// - ``maxBytes``: the bytes of decoded samples (2 bytes per sample, `UInt16`), summed over
///   all images of one `readAll`; and the bytes a stream or file may supply to
///   ``NetpbmReader`` (default 2³² bytes = 4 GiB). ``NetpbmStreamReader`` applies it to each
///   image on its own and does not limit the stream's length.
///
/// Fixed limits (not configurable), so that header parsing is bounded:
/// ``maxTokenDigits``, ``maxPAMHeaderLineBytes``, ``maxTupleTypeBytes``.
public struct NetpbmLimits: Sendable, Hashable {
    /// The largest width × height of one image.
    public var maxPixels: Int
    /// The byte budget for decoded samples and for input read from a stream or file.
    public var maxBytes: Int

    /// `maxPixels` 2²⁸, `maxBytes` 4 GiB.
    public static let `default` = NetpbmLimits()

    /// The longest decimal token accepted, in digits (20 digits hold any `UInt64`, so every
    /// 32- and 64-bit overflow is reported as ``NetpbmError/numberTooLarge(field:digits:limit:offset:)``
    /// and only absurd tokens as ``NetpbmError/tokenTooLong(field:limit:offset:)``).
    /// Leading zeros count.
    public static let maxTokenDigits = 20
    /// The longest PAM header line, line end excluded (libnetpbm reads lines into a
    /// 256-byte buffer; this reader is a little more generous).
    public static let maxPAMHeaderLineBytes = 1024
    /// The longest PAM tuple type after joining `TUPLTYPE` lines (libnetpbm's 255).
    public static let maxTupleTypeBytes = 255

    /// Creates limits; the defaults are those of ``default``.
    public init(maxPixels: Int = 1 << 28, maxBytes: Int = 1 << 32) {
        self.maxPixels = maxPixels
        self.maxBytes = maxBytes
    }
}
