// What a Netpbm header says, and the one parser both readers use.

/// The header of one Netpbm image: its format, size, maxval and tuple type, without the
/// raster.
///
/// ``NetpbmStreamReader/nextImage()`` returns one per image; ``NetpbmStreamWriter`` takes
/// one to start each image. The raster a header describes has ``sampleCount`` samples,
/// row-major, top row first, ``depth`` interleaved samples per pixel, each in `0...maxval`
/// — exactly the layout of ``NetpbmImage/samples`` (PBM as maxval 1 with 1 = white).
///
/// Invariants (checked by ``init(format:width:height:depth:maxval:tupleType:)``, and by the
/// reader before it returns a header):
/// - `width`, `height`, `depth` ≥ 1, and `width × height × depth × 2` fits in `Int`;
/// - `1 ≤ maxval ≤ 65535`;
/// - `depth` is 1 for PBM and PGM, 3 for PPM; PBM has maxval 1;
/// - `depth ≥ tupleType.minimumDepth`.
///
/// A header made by the public initializer also has a tuple type that can be written on a
/// PAM header line; one read from a PAM file keeps whatever tuple type the file had, which
/// ``NetpbmStreamWriter/beginImage(_:)`` refuses for P7 output if it cannot be written.
public struct NetpbmHeader: Sendable, Hashable {
    /// The format: read from the magic number, or the one to write.
    public let format: NetpbmFormat
    /// Columns, at least 1.
    public let width: Int
    /// Rows, at least 1.
    public let height: Int
    /// Samples per pixel: 1 for PBM and PGM, 3 for PPM, `DEPTH` for PAM.
    public let depth: Int
    /// The largest sample value, 1...65535 (1 for PBM).
    public let maxval: Int
    /// What the planes mean; PBM, PGM and PPM read as `blackAndWhite`, `grayscale`, `rgb`.
    public let tupleType: TupleType

    /// Bytes per sample in a raw (P5, P6, P7) raster: 1 if maxval < 256, else 2
    /// (big-endian). Also tells which sample type can hold the samples: 1 means `UInt8`
    /// will do, 2 means `UInt16` is needed, whatever the format.
    public var bytesPerSample: Int { maxval < 256 ? 1 : 2 }

    /// `width × depth`: the samples of one row.
    public var samplesPerRow: Int { width &* depth }

    /// `width × height × depth`: the samples of the whole raster.
    public var sampleCount: Int { width &* height &* depth }

    /// Creates a header after checking the invariants listed on the type.
    ///
    /// - Parameters:
    ///   - format: the format to write.
    ///   - depth: `nil` means the format's depth (1 for PBM and PGM, 3 for PPM), or for PAM
    ///     the tuple type's minimum depth (1 without a tuple type).
    ///   - tupleType: `nil` means `blackAndWhite` for PBM, `grayscale` for PGM, `rgb` for
    ///     PPM, and no `TUPLTYPE` line (`.other("")`) for PAM.
    /// - Throws: ``NetpbmError/invalidImageSize(width:height:depth:)``,
    ///   ``NetpbmError/invalidMaxval(_:)``,
    ///   ``NetpbmError/imageDepthTooSmallForTupleType(depth:tupleType:required:)``,
    ///   ``NetpbmError/invalidTupleType(_:)``,
    ///   ``NetpbmError/depthMismatch(format:depth:required:)``,
    ///   ``NetpbmError/maxvalMismatch(format:maxval:required:)`` — checked in that order.
    /// - Complexity: O(1) (O(tuple type length) for the tuple type check).
    public init(
        format: NetpbmFormat, width: Int, height: Int, depth: Int? = nil, maxval: Int,
        tupleType: TupleType? = nil
    ) throws(NetpbmError) {
        let depth = depth ?? format.fixedDepth ?? tupleType?.minimumDepth ?? 1
        let tupleType = tupleType ?? Self.impliedTupleType(format, depth: depth)
        guard width >= 1, height >= 1, depth >= 1 else {
            throw .invalidImageSize(width: width, height: height, depth: depth)
        }
        let (pixels, o1) = width.multipliedReportingOverflow(by: height)
        let (count, o2) = pixels.multipliedReportingOverflow(by: depth)
        let (_, o3) = count.multipliedReportingOverflow(by: 2)
        guard !o1, !o2, !o3 else { throw .invalidImageSize(width: width, height: height, depth: depth) }
        guard (1...65535).contains(maxval) else { throw .invalidMaxval(maxval) }
        guard depth >= tupleType.minimumDepth else {
            throw .imageDepthTooSmallForTupleType(depth: depth, tupleType: tupleType, required: tupleType.minimumDepth)
        }
        guard NetpbmImage.isWritableTupleType(tupleType.rawValue) else {
            throw .invalidTupleType(tupleType.rawValue)
        }
        if let required = format.fixedDepth, depth != required {
            throw .depthMismatch(format: format, depth: depth, required: required)
        }
        if format.isBitmap, maxval != 1 {
            throw .maxvalMismatch(format: format, maxval: maxval, required: 1)
        }
        self.init(unchecked: format, width: width, height: height, depth: depth, maxval: maxval, tupleType: tupleType)
    }

    /// The header for writing `image` as `format` (`nil`: the image's own format).
    ///
    /// - Throws: as ``init(format:width:height:depth:maxval:tupleType:)``; the samples
    ///   themselves are not looked at.
    public init(_ image: NetpbmImage, as format: NetpbmFormat? = nil) throws(NetpbmError) {
        try self.init(
            format: format ?? image.format, width: image.width, height: image.height,
            depth: image.depth, maxval: image.maxval, tupleType: image.tupleType)
    }

    /// A header whose invariants the caller has established.
    init(unchecked format: NetpbmFormat, width: Int, height: Int, depth: Int, maxval: Int, tupleType: TupleType) {
        self.format = format
        self.width = width
        self.height = height
        self.depth = depth
        self.maxval = maxval
        self.tupleType = tupleType
    }

    /// What PBM, PGM and PPM imply; PAM without a `TUPLTYPE` line has none.
    static func impliedTupleType(_ format: NetpbmFormat, depth: Int) -> TupleType {
        switch format {
        case .plainPBM, .rawPBM: return .blackAndWhite
        case .plainPGM, .rawPGM: return .grayscale
        case .plainPPM, .rawPPM: return .rgb
        case .pam: return .other("")
        }
    }
}

// MARK: - Parsing

extension NetpbmHeader {
    /// Reads the magic number and header at the window's position and checks the size
    /// against `limits`, leaving the window on the raster's first byte (for plain formats,
    /// the byte after the last header token).
    ///
    /// - Parameter usedBytes: sample bytes already decoded by earlier images of the same
    ///   ``NetpbmReader/readAll(_:limits:)``, counted against `limits.maxBytes` (0 for a
    ///   stream, whose limit is per image).
    /// - Throws: signature, header and limits errors; the limit errors' offset is the
    ///   image's first byte.
    static func parse(
        _ window: inout InputWindow, limits: NetpbmLimits, usedBytes: Int
    ) throws(NetpbmError) -> NetpbmHeader {
        let imageStart = window.offset
        let format = try window.readSignature()
        let width: Int, height: Int, depth: Int, maxval: Int, tupleType: TupleType
        if format == .pam {
            let pam = try PAMHeader.parse(&window, imageStart: imageStart)
            (width, height, depth, maxval, tupleType) = (pam.width, pam.height, pam.depth, pam.maxval, pam.tupleType)
        } else {
            let dimensionLimit = Int(Int32.max)  // libnetpbm's INT_MAX
            width = try window.readHeaderNumber(.width, limit: dimensionLimit)
            height = try window.readHeaderNumber(.height, limit: dimensionLimit)
            maxval = format.isBitmap ? 1 : try window.readHeaderNumber(.maxval, limit: 65535)
            // Raw formats: exactly one separator byte; plain formats: the raster tokenizer
            // skips separators itself.
            if !format.isPlain { try window.consumeRasterSeparator() }
            depth = format.fixedDepth ?? 1
            tupleType = impliedTupleType(format, depth: depth)
        }
        try checkSize(
            width: width, height: height, depth: depth, limits: limits, usedBytes: usedBytes,
            imageStart: imageStart)
        return NetpbmHeader(
            unchecked: format, width: width, height: height, depth: depth, maxval: maxval, tupleType: tupleType)
    }

    /// Checks width × height × depth against the limits. Every product is overflow-checked
    /// (including the × 2 bytes per decoded sample, which the header invariant needs);
    /// nothing is allocated.
    static func checkSize(
        width w: Int, height h: Int, depth d: Int, limits: NetpbmLimits, usedBytes: Int, imageStart: Int
    ) throws(NetpbmError) {
        let (pixels, o1) = w.multipliedReportingOverflow(by: h)
        guard !o1 else { throw .sizeOverflow(width: w, height: h, depth: d, offset: imageStart) }
        guard pixels <= limits.maxPixels else {
            throw .exceedsPixelLimit(width: w, height: h, limit: limits.maxPixels, offset: imageStart)
        }
        let (count, o2) = pixels.multipliedReportingOverflow(by: d)
        let (sampleBytes, o3) = count.multipliedReportingOverflow(by: MemoryLayout<UInt16>.size)
        guard !o2, !o3 else { throw .sizeOverflow(width: w, height: h, depth: d, offset: imageStart) }
        let (total, o4) = usedBytes.addingReportingOverflow(sampleBytes)
        guard !o4, total <= limits.maxBytes else {
            throw .exceedsByteLimit(bytes: o4 ? Int.max : total, limit: limits.maxBytes, offset: imageStart)
        }
    }
}
