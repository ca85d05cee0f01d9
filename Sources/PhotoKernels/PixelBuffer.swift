// Pixel buffers as apps hold them (SPEC §10, after vImage's `vImage_Buffer` and
// `vImage_CGImageFormat`): a base address, a size, bytes per row (rows may be padded),
// and a pixel format — channel order, alpha mode, sample type. An edit plan runs on a
// buffer in place or from one buffer to another of another format, through the same
// fused schedules as integer rasters; the codecs here turn one row piece into straight
// RGBA `Float` and back for the stages that need it.

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
import _Builtin_intrinsics.intel
#endif

/// The order of the channels in one pixel, in memory order (lowest address first).
///
/// The X variants carry a padding byte (or word) where alpha would be; it is read as
/// opacity 1 and never changed: it keeps whatever the buffer holds (the encoders may
/// store it back with its own value, as part of a whole pixel or group of pixels).
public enum ChannelOrder: String, Sendable, CaseIterable {
    /// R G B A (PAM, PNG, CoreGraphics "premultiplied last" in big-endian order).
    case rgba
    /// B G R A (CoreGraphics "premultiplied first, 32-bit little endian", CVPixelBuffer 32BGRA).
    case bgra
    /// A R G B (vImage's ARGB8888).
    case argb
    /// A B G R.
    case abgr
    /// R G B and a padding sample (CoreGraphics "none skip last").
    case rgbx
    /// B G R and a padding sample.
    case bgrx
    /// A padding sample, then R G B (CoreGraphics "none skip first").
    case xrgb
    /// A padding sample, then B G R.
    case xbgr
    /// R G B, three samples.
    case rgb
    /// B G R, three samples.
    case bgr
    /// One grey sample: decodes to R = G = B; encodes the Rec. 709 luma (SPEC §1).
    case gray
    /// Grey then alpha.
    case grayAlpha

    /// Samples per pixel: 4, 3, 2 or 1.
    public var channelCount: Int {
        switch self {
        case .rgba, .bgra, .argb, .abgr, .rgbx, .bgrx, .xrgb, .xbgr: 4
        case .rgb, .bgr: 3
        case .gray: 1
        case .grayAlpha: 2
        }
    }

    /// Whether one sample is opacity.
    public var hasAlpha: Bool { alphaIndex != nil }

    /// The sample index of R, G and B (all three the same for grey).
    var colorIndices: (red: Int, green: Int, blue: Int) {
        switch self {
        case .rgba, .rgbx, .rgb: (0, 1, 2)
        case .bgra, .bgrx, .bgr: (2, 1, 0)
        case .argb, .xrgb: (1, 2, 3)
        case .abgr, .xbgr: (3, 2, 1)
        case .gray, .grayAlpha: (0, 0, 0)
        }
    }

    /// The sample index of alpha, if the order has it.
    var alphaIndex: Int? {
        switch self {
        case .rgba, .bgra: 3
        case .argb, .abgr: 0
        case .grayAlpha: 1
        default: nil
        }
    }

    /// The index of the fourth sample (alpha or padding) of a four-channel order.
    var fourthIndex: Int? {
        switch self {
        case .rgba, .bgra, .rgbx, .bgrx: 3
        case .argb, .abgr, .xrgb, .xbgr: 0
        default: nil
        }
    }
}

/// How a buffer stores opacity.
public enum AlphaMode: String, Sendable, CaseIterable {
    /// Colour independent of alpha (PAM, PNG, Core Image's unpremultiplied images).
    case straight
    /// Colour already multiplied by alpha (CoreGraphics bitmap contexts, CVPixelBuffer
    /// BGRA, vImage's default ARGB8888).
    case premultiplied
    /// No alpha: the order has none, or its fourth sample is padding.
    case none
}

/// The type of one sample.
public enum SampleType: String, Sendable, CaseIterable {
    /// 8 bits, 0…255 meaning 0…1.
    case uint8
    /// 16 bits in native byte order, 0…65535 meaning 0…1.
    case uint16
    /// IEEE binary32, taken as it is (extended range kept; a premultiplied buffer's
    /// colour is written clamped to [0, 1] times alpha, SPEC §10).
    case float32
    /// IEEE binary16, taken as it is (where the platform has `Float16`), as `float32`.
    case float16

    /// Bytes per sample.
    public var byteCount: Int {
        switch self {
        case .uint8: 1
        case .uint16, .float16: 2
        case .float32: 4
        }
    }

    /// The integer maxval (255 or 65535), or `nil` for floating-point samples.
    public var maxval: Int? {
        switch self {
        case .uint8: 255
        case .uint16: 65535
        case .float32, .float16: nil
        }
    }
}

/// A pixel format: channel order, alpha mode and sample type.
public struct PixelFormat: Sendable, Hashable, CustomStringConvertible {
    /// The channels in memory order.
    public let channelOrder: ChannelOrder
    /// How alpha is stored.
    public let alphaMode: AlphaMode
    /// The sample type.
    public let sampleType: SampleType

    /// A format; an order with alpha needs `.straight` or `.premultiplied`, one without
    /// (or with padding) needs `.none`.
    ///
    /// - Throws: `PixelBufferError.alphaModeMismatch`, or `.unsupportedSampleType` for
    ///   `Float16` on a platform without it.
    public init(_ channelOrder: ChannelOrder, alpha: AlphaMode, sample: SampleType) throws(PixelBufferError) {
        guard channelOrder.hasAlpha == (alpha != .none) else {
            throw .alphaModeMismatch(order: channelOrder.rawValue, alpha: alpha.rawValue)
        }
        #if (os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64)
        if sample == .float16 { throw .unsupportedSampleType(sample.rawValue) }
        #endif
        (self.channelOrder, self.alphaMode, self.sampleType) = (channelOrder, alpha, sample)
    }

    private init(unchecked order: ChannelOrder, _ alpha: AlphaMode, _ sample: SampleType) {
        (channelOrder, alphaMode, sampleType) = (order, alpha, sample)
    }

    /// 8-bit BGRA, premultiplied: a CoreGraphics bitmap context's "premultiplied first,
    /// 32-bit little endian" and `kCVPixelFormatType_32BGRA`.
    public static let bgra8Premultiplied = PixelFormat(unchecked: .bgra, .premultiplied, .uint8)
    /// 8-bit RGBA, straight alpha.
    public static let rgba8 = PixelFormat(unchecked: .rgba, .straight, .uint8)
    /// 8-bit RGBA, premultiplied (CoreGraphics "premultiplied last", big-endian order).
    public static let rgba8Premultiplied = PixelFormat(unchecked: .rgba, .premultiplied, .uint8)
    /// 16-bit RGBA, straight alpha, native byte order.
    public static let rgba16 = PixelFormat(unchecked: .rgba, .straight, .uint16)
    /// 16-bit RGBA, premultiplied, native byte order: a 16-bit CoreGraphics bitmap
    /// context (`premultipliedLast` + `byteOrder16Little`), which has no straight alpha.
    public static let rgba16Premultiplied = PixelFormat(unchecked: .rgba, .premultiplied, .uint16)
    /// 32-bit float RGBA, straight alpha: the library's working format.
    public static let rgbaFloat = PixelFormat(unchecked: .rgba, .straight, .float32)
    #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
    /// 16-bit float RGBA, straight alpha (`Float16` samples): vImage's `RGBA16F`,
    /// CoreGraphics 16-bit `last` + `floatComponents` + `byteOrder16Little`. Not on Intel
    /// Macs, which have no `Float16` (there `init` throws `unsupportedSampleType`).
    public static let rgbaFloat16 = PixelFormat(unchecked: .rgba, .straight, .float16)
    /// 16-bit float RGBA, premultiplied (`Float16` samples): what `CIContext`'s
    /// `render(_:toBitmap:rowBytes:bounds:format:colorSpace:)` writes for `RGBAh` by
    /// default (`outputPremultiplied`), CoreGraphics 16-bit `premultipliedLast` +
    /// `floatComponents` + `byteOrder16Little`. Not on Intel Macs.
    public static let rgbaFloat16Premultiplied = PixelFormat(unchecked: .rgba, .premultiplied, .float16)
    #endif

    /// Bytes per pixel.
    public var bytesPerPixel: Int { channelOrder.channelCount * sampleType.byteCount }

    /// E.g. `"bgra premultiplied uint8"`.
    public var description: String { "\(channelOrder.rawValue) \(alphaMode.rawValue) \(sampleType.rawValue)" }
}

/// What is wrong with a pixel buffer description.
public enum PixelBufferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A width or height below 1.
    case invalidSize(width: Int, height: Int)
    /// Rows shorter than `width × bytesPerPixel`.
    case bytesPerRowTooSmall(bytesPerRow: Int, needed: Int)
    /// `bytesPerRow × height` overflows.
    case sizeOverflow(width: Int, height: Int, bytesPerRow: Int)
    /// A base address or row stride not aligned to the sample size. The description
    /// gives a row stride's value, and of an address only how far it lies past a
    /// multiple of `alignment`; `value` holds the address.
    case misaligned(what: String, value: Int, alignment: Int)
    /// An order with alpha without an alpha mode, or the reverse.
    case alphaModeMismatch(order: String, alpha: String)
    /// A sample type this platform lacks.
    case unsupportedSampleType(String)
    /// Source and destination memory overlap, other than as the same memory with the same pixel size.
    case overlappingBuffers
    /// Source and destination sizes differ.
    case sizeMismatch(source: String, destination: String)

    /// One sentence naming what is wrong.
    public var description: String {
        switch self {
        case .invalidSize(let w, let h): "pixel buffer size \(w)×\(h) is invalid (each side at least 1)"
        case .bytesPerRowTooSmall(let b, let n): "bytes per row \(b) is less than width × bytes per pixel = \(n)"
        case .sizeOverflow(let w, let h, let b): "a \(w)×\(h) buffer with \(b) bytes per row overflows the address space"
        case .misaligned(let what, let v, let a) where what.hasSuffix("address"):
            // Where it lies past a multiple, not the address itself: a message an app
            // shows its users should not tell them the memory layout (`value` has it).
            "\(what) is \(Self.bytes(UInt(bitPattern: v) % UInt(max(a, 1)))) past a multiple of \(a)"
        case .misaligned(let what, let v, let a): "\(what) \(v) is not a multiple of \(a)"
        case .alphaModeMismatch(let o, let a): "channel order \(o) does not go with alpha mode \(a)"
        case .unsupportedSampleType(let s): "sample type \(s) is not available on this platform"
        case .overlappingBuffers: "the source and destination buffers overlap (only the same memory with the same pixel size is allowed)"
        case .sizeMismatch(let s, let d): "the source is \(s) but the destination is \(d)"
        }
    }

    /// "1 byte", "2 bytes".
    private static func bytes(_ n: UInt) -> String { n == 1 ? "1 byte" : "\(n) bytes" }
}

/// A rectangle of pixels in memory: a base address, a size, bytes per row and a format
/// (vImage's `vImage_Buffer` with its format attached). Row `y` starts at
/// `baseAddress + y × bytesPerRow`; the bytes between `width × bytesPerPixel` and
/// `bytesPerRow` are padding and are never read or written.
///
/// The buffer does not own its memory: the caller keeps it alive and valid for
/// `height × bytesPerRow` bytes (the last row needs only `width × bytesPerPixel`).
public struct PixelBuffer: @unchecked Sendable {
    /// The first byte of the first row.
    public let baseAddress: UnsafeMutableRawPointer
    /// Pixels per row, at least 1.
    public let width: Int
    /// Rows, at least 1.
    public let height: Int
    /// The distance between rows in bytes, at least `width × format.bytesPerPixel`.
    public let bytesPerRow: Int
    /// The pixel format.
    public let format: PixelFormat

    /// Describes a buffer, checking everything that can be checked.
    ///
    /// - Throws: `PixelBufferError` for a size below 1, rows too short, a size that
    ///   overflows, or a base address or row stride not aligned to the sample size.
    /// - Complexity: O(1).
    public init(baseAddress: UnsafeMutableRawPointer, width: Int, height: Int, bytesPerRow: Int,
                format: PixelFormat) throws(PixelBufferError) {
        guard width >= 1, height >= 1 else { throw .invalidSize(width: width, height: height) }
        let (rowBytes, o1) = width.multipliedReportingOverflow(by: format.bytesPerPixel)
        guard !o1 else { throw .sizeOverflow(width: width, height: height, bytesPerRow: bytesPerRow) }
        guard bytesPerRow >= rowBytes else { throw .bytesPerRowTooSmall(bytesPerRow: bytesPerRow, needed: rowBytes) }
        let (byteCount, o2) = bytesPerRow.multipliedReportingOverflow(by: height)
        // The end address, unsigned: a base address near the top of the address space
        // must not wrap around.
        let (_, o3) = UInt(bitPattern: baseAddress).addingReportingOverflow(UInt(bitPattern: byteCount))
        guard !o2, !o3 else { throw .sizeOverflow(width: width, height: height, bytesPerRow: bytesPerRow) }
        let alignment = format.sampleType.byteCount
        guard Int(bitPattern: baseAddress) % alignment == 0 else {
            throw .misaligned(what: "the base address", value: Int(bitPattern: baseAddress), alignment: alignment)
        }
        guard bytesPerRow % alignment == 0 else {
            throw .misaligned(what: "bytes per row", value: bytesPerRow, alignment: alignment)
        }
        self.baseAddress = baseAddress
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.format = format
    }

    /// The bytes from the first pixel to the end of the last pixel, as unsigned
    /// addresses (`init` checked that the end does not wrap; a signed one could overflow
    /// near the top of the address space).
    var span: Range<UInt> {
        let start = UInt(bitPattern: baseAddress)
        return start..<(start + UInt((height - 1) * bytesPerRow + width * format.bytesPerPixel))
    }

    /// The first byte of pixel `x` of row `y`.
    func address(x: Int, y: Int) -> UnsafeMutableRawPointer {
        baseAddress + y * bytesPerRow + x * format.bytesPerPixel
    }
}

// MARK: Row codecs

/// Reading and writing one sample of each type as a `Float` (SPEC §0 for integers).
protocol BufferSample {
    static func load(_ p: UnsafeRawPointer, _ i: Int) -> Float
    static func store(_ x: Float, _ p: UnsafeMutableRawPointer, _ i: Int)
    /// The sample as stored, as a `Float`: an integer's own value (exact), a float's.
    static func loadStored(_ p: UnsafeRawPointer, _ i: Int) -> Float
}

extension BufferSample where Self: FixedWidthInteger & UnsignedInteger {
    @inline(__always) static func loadStored(_ p: UnsafeRawPointer, _ i: Int) -> Float {
        Float(p.load(fromByteOffset: MemoryLayout<Self>.stride &* i, as: Self.self))
    }
}

extension BufferSample where Self: BinaryFloatingPoint {
    @inline(__always) static func loadStored(_ p: UnsafeRawPointer, _ i: Int) -> Float { load(p, i) }
}

extension UInt8: BufferSample {
    @inline(__always) static func load(_ p: UnsafeRawPointer, _ i: Int) -> Float {
        SampleCoding.decode(p.load(fromByteOffset: i, as: UInt8.self), maxval: 255)
    }
    @inline(__always) static func store(_ x: Float, _ p: UnsafeMutableRawPointer, _ i: Int) {
        p.storeBytes(of: UInt8(truncatingIfNeeded: SampleCoding.encode(x, maxval: 255)), toByteOffset: i, as: UInt8.self)
    }
}

extension UInt16: BufferSample {
    @inline(__always) static func load(_ p: UnsafeRawPointer, _ i: Int) -> Float {
        SampleCoding.decode(p.load(fromByteOffset: 2 &* i, as: UInt16.self), maxval: 65535)
    }
    @inline(__always) static func store(_ x: Float, _ p: UnsafeMutableRawPointer, _ i: Int) {
        p.storeBytes(of: SampleCoding.encode(x, maxval: 65535), toByteOffset: 2 &* i, as: UInt16.self)
    }
}

extension Float: BufferSample {
    @inline(__always) static func load(_ p: UnsafeRawPointer, _ i: Int) -> Float {
        p.load(fromByteOffset: 4 &* i, as: Float.self)
    }
    @inline(__always) static func store(_ x: Float, _ p: UnsafeMutableRawPointer, _ i: Int) {
        p.storeBytes(of: x, toByteOffset: 4 &* i, as: Float.self)
    }
}

#if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
extension Float16: BufferSample {
    @inline(__always) static func load(_ p: UnsafeRawPointer, _ i: Int) -> Float {
        Float(p.load(fromByteOffset: 2 &* i, as: Float16.self))
    }
    @inline(__always) static func store(_ x: Float, _ p: UnsafeMutableRawPointer, _ i: Int) {
        p.storeBytes(of: Float16(x), toByteOffset: 2 &* i, as: Float16.self)
    }
}
#endif

/// Decodes and encodes row pieces of one pixel format to and from straight RGBA
/// `Float` (SPEC §10): integers by SPEC §0, floats as they are; premultiplied colour
/// divided by alpha (0 where alpha is 0) on the way in — for integer samples the
/// quotient of the two stored integers, `c / A`, rounded once, which is `(c/m)/(A/m)`
/// without the two intermediate roundings — and on the way out clamped to [0, 1] and
/// multiplied by alpha, rounded once.
///
/// Formats of four samples, 8-bit, 16-bit, `Float` or `Float16`, take vector loops that
/// put each pixel's samples in R G B A order by shuffles (`decodeFourBytes`,
/// FourByteBlocks.swift and FourSampleRows.swift); the others (three samples, grey) the
/// generic per-sample loops (`decode(_:_:_:_:)`, `encode(_:_:_:_:)`), which state the
/// formulas and which the tests hold the vector loops to, bit for bit — for `Float16`,
/// where the build is x86-64 without F16C, on `Float`s, the halves converted four at a
/// time on either side (`decodeHalves`, `encodeHalves`).
struct RowCodec: Sendable {
    let format: PixelFormat

    func decode(_ source: UnsafeRawPointer, count: Int, into destination: UnsafeMutablePointer<SIMD4<Float>>) {
        if format.channelOrder.channelCount == 4 {
            switch format.sampleType {
            case .uint8: return decodeFourBytes(source, count, destination)
            case .uint16, .float32, .float16: return runFourSamples(.decode(source, into: destination), count: count)
            }
        }
        switch format.sampleType {
        case .uint8: decode(UInt8.self, source, count, destination)
        case .uint16: decode(UInt16.self, source, count, destination)
        case .float32: decode(Float.self, source, count, destination)
        case .float16:
            #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
            #if arch(x86_64) && !canImport(TargetFeatures.F16C)
            decodeHalves(source, count, destination)
            #else
            decode(Float16.self, source, count, destination)
            #endif
            #endif
        }
    }

    func encode(_ source: UnsafePointer<SIMD4<Float>>, count: Int, into destination: UnsafeMutableRawPointer) {
        if format.channelOrder.channelCount == 4 {
            switch format.sampleType {
            case .uint8: return encodeFourBytes(source, count, destination)
            case .uint16, .float32, .float16: return runFourSamples(.encode(source, into: destination), count: count)
            }
        }
        switch format.sampleType {
        case .uint8: encode(UInt8.self, source, count, destination)
        case .uint16: encode(UInt16.self, source, count, destination)
        case .float32: encode(Float.self, source, count, destination)
        case .float16:
            #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
            #if arch(x86_64) && !canImport(TargetFeatures.F16C)
            encodeHalves(source, count, destination)
            #else
            encode(Float16.self, source, count, destination)
            #endif
            #endif
        }
    }

    /// Four 8-bit channels in, one pixel per `SIMD4<Float>`: each pixel's four bytes
    /// widened to 32-bit lanes and put in R G B A order by one shuffle, then SPEC §0
    /// (`v / 255`, as `SampleCoding.tripledReciprocal`'s one multiply) or, premultiplied,
    /// SPEC §10's `c / a`: the colour bytes divided by the alpha byte, the quotient of
    /// the two integers rounded once, and alpha `A / 255`. An X order's padding decodes
    /// as alpha 1. The generic loop computes the same values (`decode(_:_:_:_:)`).
    /// Where the build targets AVX2 the loops take two pixels per 256-bit register
    /// first, the same values on each lane (FourByteBlocks.swift).
    private func decodeFourBytes(_ p: UnsafeRawPointer, _ count: Int, _ out: UnsafeMutablePointer<SIMD4<Float>>) {
        runFourBytes(.decode(p, into: out), count: count)
    }

    /// One row codec's work on a row piece.
    enum Job {
        case decode(UnsafeRawPointer, into: UnsafeMutablePointer<SIMD4<Float>>)
        case encode(UnsafePointer<SIMD4<Float>>, into: UnsafeMutableRawPointer)
    }

    /// Runs `job` on `count` pixels in the loop for the format's alpha mode, with the
    /// format's places as a compile-time type (`FourSamplePlaces`).
    private func runFourBytes(_ job: Job, count: Int) {
        let order = format.channelOrder, premultiplied = format.alphaMode == .premultiplied
        func run<P: FourSamplePlaces>(_: P.Type) {
            let lanes = FourByteLanes(P.self)
            switch job {
            case .decode(let p, let out):
                if premultiplied {
                    Self.decodePremultipliedWords(p, count, out, P.self, alphaLane: AlphaMasks().pixel, lanes)
                } else {
                    // Without alpha, the fourth lane reads 0xFF, alpha 1.
                    let opaque = SIMD4<Int32>(0, 0, 0, order.alphaIndex == nil ? 0xFF : 0)
                    Self.decodeWords(p, count, out, P.self, opaque: opaque, lanes)
                }
            case .encode(let source, let p):
                if premultiplied {
                    Self.encodePremultipliedWords(source, count, p, P.self, alphaLane: AlphaMasks().pixel, lanes)
                } else {
                    // Without alpha, the padding byte's bits, kept from the destination.
                    let padding: UInt32 = order.alphaIndex == nil ? 0xFF << UInt32(8 &* (order.fourthIndex ?? 3)) : 0
                    Self.encodeWords(source, count, p, P.self, padding: padding, lanes)
                }
            }
        }
        switch order.colorIndices {
        case (0, 1, 2): run(PlacesRGBA.self)
        case (2, 1, 0): run(PlacesBGRA.self)
        case (1, 2, 3): run(PlacesARGB.self)
        default: run(PlacesABGR.self)
        }
    }

    /// `decodeFourBytes`' loop for straight or no alpha.
    @inline(never)
    private static func decodeWords<P: FourSamplePlaces>(_ p: UnsafeRawPointer, _ count: Int,
                                                         _ out: UnsafeMutablePointer<SIMD4<Float>>, _: P.Type,
                                                         opaque: SIMD4<Int32>, _ lanes: FourByteLanes) {
        let k = SIMD4<Float>(repeating: SampleCoding.tripledReciprocal)
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        let first = decodePairs(p, count, out, opaque: opaque, lanes)
        #else
        let first = 0
        #endif
        for i in first..<count {
            let v = P.rgba(SIMD4<Int32>(truncatingIfNeeded: p.loadUnaligned(fromByteOffset: 4 &* i, as: SIMD4<UInt8>.self)))
            let w = v | opaque
            (out + i).initialize(to: SIMD4<Float>(w &+ w &+ w) * k)
        }
    }

    /// `decodeFourBytes`' loop for premultiplied alpha: four opaque pixels (A = 255) are
    /// their own straight colours, `v / 255` by one multiply as above; any other pixel
    /// takes one division, by `(A, A, A, 255)`, and an A = 0 pixel is all zero by a
    /// select. The divisor's fourth lane comes from a mask held as a value (see
    /// `AlphaMasks`). The branch, on groups of four (eight where the build targets AVX2,
    /// `decodePremultipliedBlocks`), follows the image: the opaque runs
    /// of a photo skip the divider, which bounds the loop otherwise. (Per pixel, the
    /// optimiser rebuilt an opaque pixel's vector lane by lane with its alpha a
    /// constant.)
    @inline(never)
    private static func decodePremultipliedWords<P: FourSamplePlaces>(
        _ p: UnsafeRawPointer, _ count: Int, _ out: UnsafeMutablePointer<SIMD4<Float>>, _: P.Type,
        alphaLane: SIMDMask<SIMD4<Int32>>, _ lanes: FourByteLanes) {
        let m = SIMD4<Float>(repeating: 255), zero = SIMD4<Float>()
        let k = SIMD4<Float>(repeating: SampleCoding.tripledReciprocal)
        let opaque = SIMD4<UInt32>(repeating: (UInt32(0xFF) << UInt32(8 &* P.fourth)).littleEndian)
        @inline(__always) func pixel(_ i: Int) -> SIMD4<Int32> {
            P.rgba(SIMD4<Int32>(truncatingIfNeeded: p.loadUnaligned(fromByteOffset: 4 &* i, as: SIMD4<UInt8>.self)))
        }
        @inline(__always) func divided(_ i: Int) {
            let c = SIMD4<Float>(pixel(i)), a = SIMD4<Float>(repeating: c.w)
            (out + i).initialize(to: (c / a.replacing(with: m, where: alphaLane)).replacing(with: zero, where: a .== zero))
        }
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        var i = decodePremultipliedBlocks(p, count, out, P.self, lanes)
        #else
        var i = 0
        #endif
        while i &+ 4 <= count {
            if all(p.loadUnaligned(fromByteOffset: 4 &* i, as: SIMD4<UInt32>.self) & opaque .== opaque) {
                for j in i..<(i &+ 4) {
                    let v = pixel(j)
                    (out + j).initialize(to: SIMD4<Float>(v &+ v &+ v) * k)
                }
            } else {
                for j in i..<(i &+ 4) { divided(j) }
            }
            i &+= 4
        }
        while i < count {
            divided(i)
            i &+= 1
        }
    }

    /// Four 8-bit channels out: premultiplied colour clamped and multiplied by alpha,
    /// then SPEC §0's encoding on four lanes (clamp, · 255, round half to even by 2²³),
    /// the results put in the format's order by one shuffle and narrowed to bytes, four
    /// pixels written a step as 16 bytes (an X order keeps the destination's padding
    /// byte).
    ///
    /// The alpha lane is kept by a mask held as a value (see `AlphaMasks`), in a loop of
    /// its own: with the alpha factor written as a literal 1 inside the codec's method,
    /// the optimiser split the clamps into a branch per lane, about 36 cycles a pixel.
    /// Where the build targets AVX2 the loops take eight pixels a step first, two per
    /// 256-bit register, the same values on each lane (FourByteBlocks.swift).
    private func encodeFourBytes(_ source: UnsafePointer<SIMD4<Float>>, _ count: Int, _ p: UnsafeMutableRawPointer) {
        runFourBytes(.encode(source, into: p), count: count)
    }

    /// SPEC §0's encoding of four lanes to four bytes in the format's order, as the
    /// bits of a 32-bit word in memory.
    @inline(__always)
    private static func word<P: FourSamplePlaces>(_ c: SIMD4<Float>, _: P.Type) -> UInt32 {
        let one = SIMD4<Float>(repeating: 1), m = SIMD4<Float>(repeating: 255)
        // The integer sits in the low byte of each lane's pattern (2²³ + k, k ≤ 255).
        let v = P.memory(unsafeBitCast(clamped(c, upTo: one) * m + 8_388_608, to: SIMD4<UInt32>.self))
        return unsafeBitCast(SIMD4<UInt8>(truncatingIfNeeded: v), to: UInt32.self)
    }

    /// `word` of four pixels, in memory order.
    ///
    /// Where the build has the Clang module of Intel intrinsics: SSE2's conversion, which
    /// rounds half to even like the `+ 2²³` above, of `minps(1, x)·255` (NaN kept, and
    /// converted to Int32.min like −∞), then the saturating packs, which clamp below
    /// (see `BytePacking`): five instructions a pixel where the clamps, the masks and
    /// the narrowing of one word took about twenty.
    @inline(__always)
    private static func words<P: FourSamplePlaces>(_ x0: SIMD4<Float>, _ x1: SIMD4<Float>, _ x2: SIMD4<Float>,
                                                   _ x3: SIMD4<Float>, _: P.Type) -> SIMD4<UInt32> {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
        let one = SIMD4<Float>(repeating: 1), m = SIMD4<Float>(repeating: 255)
        @inline(__always) func lanes(_ x: SIMD4<Float>) -> __m128i { _mm_cvtps_epi32(_mm_min_ps(one, P.memory(x)) * m) }
        return unsafeBitCast(_mm_packus_epi16(_mm_packs_epi32(lanes(x0), lanes(x1)), _mm_packs_epi32(lanes(x2), lanes(x3))),
                             to: SIMD4<UInt32>.self)
        #else
        return SIMD4(word(x0, P.self), word(x1, P.self), word(x2, P.self), word(x3, P.self))
        #endif
    }

    /// `encodeFourBytes`' loop for straight or no alpha, four pixels a step; `padding`
    /// holds the destination's bits to keep, as a little-endian word's value (0 where
    /// the format has alpha).
    @inline(never)
    private static func encodeWords<P: FourSamplePlaces>(_ source: UnsafePointer<SIMD4<Float>>, _ count: Int,
                                                         _ p: UnsafeMutableRawPointer, _: P.Type, padding: UInt32,
                                                         _ lanes: FourByteLanes) {
        let padding = padding.littleEndian, kept = SIMD4<UInt32>(repeating: padding)
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        var i = encodeBlocks(source, count, p, padding: padding, lanes)
        #else
        var i = 0
        #endif
        while i &+ 4 <= count {
            var w = words(source[i], source[i &+ 1], source[i &+ 2], source[i &+ 3], P.self)
            let at = p + 4 &* i
            if padding != 0 { w = w & ~kept | at.loadUnaligned(as: SIMD4<UInt32>.self) & kept }
            at.storeBytes(of: w, as: SIMD4<UInt32>.self)
            i &+= 4
        }
        while i < count {
            let at = p + 4 &* i
            let old = padding == 0 ? 0 : at.loadUnaligned(as: UInt32.self)
            at.storeBytes(of: word(source[i], P.self) & ~padding | old & padding, as: UInt32.self)
            i &+= 1
        }
    }

    /// `encodeFourBytes`' loop for premultiplied alpha, four pixels a step.
    @inline(never)
    private static func encodePremultipliedWords<P: FourSamplePlaces>(
        _ source: UnsafePointer<SIMD4<Float>>, _ count: Int, _ p: UnsafeMutableRawPointer, _: P.Type,
        alphaLane: SIMDMask<SIMD4<Int32>>, _ lanes: FourByteLanes) {
        let one = SIMD4<Float>(repeating: 1)
        // clamp(C′, 0, 1)·a, alpha kept.
        @inline(__always) func premultiplied(_ i: Int) -> SIMD4<Float> {
            let c = source[i]
            return (clamped(c, upTo: one) * SIMD4(repeating: c.w)).replacing(with: c, where: alphaLane)
        }
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        var i = encodePremultipliedBlocks(source, count, p, lanes)
        #else
        var i = 0
        #endif
        while i &+ 4 <= count {
            let w = words(premultiplied(i), premultiplied(i &+ 1), premultiplied(i &+ 2), premultiplied(i &+ 3), P.self)
            (p + 4 &* i).storeBytes(of: w, as: SIMD4<UInt32>.self)
            i &+= 4
        }
        while i < count {
            (p + 4 &* i).storeBytes(of: word(premultiplied(i), P.self), as: UInt32.self)
            i &+= 1
        }
    }

    /// The per-sample decoding loop for any format: the reference of the vector loops.
    @inline(__always)
    func decode<S: BufferSample>(_: S.Type, _ p: UnsafeRawPointer, _ count: Int,
                                 _ out: UnsafeMutablePointer<SIMD4<Float>>) {
        let order = format.channelOrder, n = order.channelCount
        let (ri, gi, bi) = order.colorIndices
        let ai = order.alphaIndex
        let premultiplied = format.alphaMode == .premultiplied
        for i in 0..<count {
            let base = i &* n
            let a: Float = ai.map { S.load(p, base &+ $0) } ?? 1
            var c = SIMD4<Float>(S.load(p, base &+ ri), S.load(p, base &+ gi), S.load(p, base &+ bi), a)
            if premultiplied, let ai {
                // c / a of the stored values: for integers the quotient of the two
                // integers, rounded once. An A = 0 pixel has no colour; it is written
                // back as all zero.
                let stored = S.loadStored(p, base &+ ai)
                c = a == 0 ? SIMD4(0, 0, 0, 0)
                    : SIMD4(S.loadStored(p, base &+ ri) / stored, S.loadStored(p, base &+ gi) / stored,
                            S.loadStored(p, base &+ bi) / stored, a)
            }
            (out + i).initialize(to: c)
        }
    }

    #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64)) && arch(x86_64) && !canImport(TargetFeatures.F16C)
    /// `decode(Float16.self, …)` for the `Float16` formats of one to three samples where
    /// the build is x86-64 without F16C, the same values: the halves of up to
    /// `HalfChunk.floats` samples at a time widened four at once in SSE2 operations
    /// (`Float16.widen`), then the `Float` loop on them, where `Float(h)` would be a
    /// library call per sample. (With F16C one instruction converts a sample, and the
    /// runs gain nothing.)
    private func decodeHalves(_ p: UnsafeRawPointer, _ count: Int, _ out: UnsafeMutablePointer<SIMD4<Float>>) {
        let n = format.channelOrder.channelCount
        HalfChunk.forEach(count: count, samplesPerPixel: n) { first, pixels, floats in
            Float16.widen(p + 2 &* n &* first, count: n &* pixels, into: floats)
            decode(Float.self, floats, pixels, out + first)
        }
    }

    /// `encode(Float16.self, …)` for the `Float16` formats of one to three samples, the
    /// same bits: the `Float` loop into up to `HalfChunk.floats` samples at a time,
    /// then those rounded four at once (`Float16.narrow`).
    private func encodeHalves(_ source: UnsafePointer<SIMD4<Float>>, _ count: Int, _ p: UnsafeMutableRawPointer) {
        let n = format.channelOrder.channelCount
        HalfChunk.forEach(count: count, samplesPerPixel: n) { first, pixels, floats in
            encode(Float.self, source + first, pixels, UnsafeMutableRawPointer(floats))
            Float16.narrow(floats, count: n &* pixels, into: p + 2 &* n &* first)
        }
    }
    #endif

    /// The per-sample encoding loop for any format: the reference of the vector loops.
    @inline(__always)
    func encode<S: BufferSample>(_: S.Type, _ source: UnsafePointer<SIMD4<Float>>, _ count: Int,
                                 _ p: UnsafeMutableRawPointer) {
        let order = format.channelOrder, n = order.channelCount
        let (ri, gi, bi) = order.colorIndices
        let ai = order.alphaIndex
        let premultiplied = format.alphaMode == .premultiplied
        let gray = order == .gray || order == .grayAlpha
        let w = Luma.weights
        for i in 0..<count {
            let base = i &* n
            var c = source[i]
            if premultiplied {
                // clamp(C′, 0, 1)·a: NaN colour becomes 0, as encoding would make it.
                let a = c.w
                @inline(__always) func clamp(_ x: Float) -> Float { let y = x > 0 ? x : 0; return y < 1 ? y : 1 }
                c = SIMD4(clamp(c.x) * a, clamp(c.y) * a, clamp(c.z) * a, a)
            }
            if gray {
                S.store(w.x * c.x + w.y * c.y + w.z * c.z, p, base)
            } else {
                S.store(c.x, p, base &+ ri)
                S.store(c.y, p, base &+ gi)
                S.store(c.z, p, base &+ bi)
            }
            if let ai { S.store(c.w, p, base &+ ai) }
        }
    }
}

#if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64)) && arch(x86_64) && !canImport(TargetFeatures.F16C)
/// A row piece taken a few hundred samples at a time through a scratch of `Float`s on
/// the stack: where the build is x86-64 without F16C, the per-sample loops' `Float16`
/// formats, whose halves are converted four at a time on either side of the `Float`
/// loop (`Float16Conversion`) rather than by a library call each.
enum HalfChunk {
    /// The scratch's samples: 768 bytes, a whole number of pixels of one to four samples.
    static let floats = 192

    /// Calls `body(first, pixels, scratch)` for consecutive runs of at most
    /// `floats / samplesPerPixel` of `count` pixels, front to back.
    @inline(__always)
    static func forEach(count: Int, samplesPerPixel n: Int,
                        _ body: (_ first: Int, _ pixels: Int, _ scratch: UnsafeMutablePointer<Float>) -> Void) {
        withUnsafeTemporaryAllocation(of: Float.self, capacity: floats) { scratch in
            let step = floats / n
            var first = 0
            while first < count {
                let pixels = Swift.min(step, count &- first)
                body(first, pixels, scratch.baseAddress!)
                first &+= pixels
            }
        }
    }
}
#endif

/// Where R, G, B and the fourth sample (alpha or padding) sit in a pixel of four
/// samples (bytes, 16-bit words, `Float`s or `Float16`s), known at compile time so that
/// putting a pixel's lanes in R G B A order, or back in the format's, is one shuffle.
protocol FourSamplePlaces {
    /// The sample index of the fourth sample (alpha or padding).
    static var fourth: Int { get }
    /// The lanes of a pixel in memory order, in R G B A order.
    static func rgba<T: SIMDScalar>(_ m: SIMD4<T>) -> SIMD4<T>
    /// The lanes of an R G B A pixel in memory order.
    static func memory<T: SIMDScalar>(_ c: SIMD4<T>) -> SIMD4<T>
}

/// RGBA and RGBX.
enum PlacesRGBA: FourSamplePlaces {
    static var fourth: Int { 3 }
    @inline(__always) static func rgba<T: SIMDScalar>(_ m: SIMD4<T>) -> SIMD4<T> { m }
    @inline(__always) static func memory<T: SIMDScalar>(_ c: SIMD4<T>) -> SIMD4<T> { c }
}

/// BGRA and BGRX.
enum PlacesBGRA: FourSamplePlaces {
    static var fourth: Int { 3 }
    @inline(__always) static func rgba<T: SIMDScalar>(_ m: SIMD4<T>) -> SIMD4<T> { SIMD4(m.z, m.y, m.x, m.w) }
    @inline(__always) static func memory<T: SIMDScalar>(_ c: SIMD4<T>) -> SIMD4<T> { SIMD4(c.z, c.y, c.x, c.w) }
}

/// ARGB and XRGB.
enum PlacesARGB: FourSamplePlaces {
    static var fourth: Int { 0 }
    @inline(__always) static func rgba<T: SIMDScalar>(_ m: SIMD4<T>) -> SIMD4<T> { SIMD4(m.y, m.z, m.w, m.x) }
    @inline(__always) static func memory<T: SIMDScalar>(_ c: SIMD4<T>) -> SIMD4<T> { SIMD4(c.w, c.x, c.y, c.z) }
}

/// ABGR and XBGR.
enum PlacesABGR: FourSamplePlaces {
    static var fourth: Int { 0 }
    @inline(__always) static func rgba<T: SIMDScalar>(_ m: SIMD4<T>) -> SIMD4<T> { SIMD4(m.w, m.z, m.y, m.x) }
    @inline(__always) static func memory<T: SIMDScalar>(_ c: SIMD4<T>) -> SIMD4<T> { SIMD4(c.w, c.z, c.y, c.x) }
}
