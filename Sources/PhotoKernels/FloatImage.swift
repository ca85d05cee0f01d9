/// A width × height image of straight-alpha RGBA `Float` pixels: the working format
/// of every kernel.
///
/// Layout (SPEC §0): one pixel is one `SIMD4<Float>` holding `R G B A` in that
/// order; pixels are stored row by row, top row first, left to right, with no row
/// padding, so pixel `(x, y)` is `pixels[y * width + x]` and the raw memory is the
/// interleaved `Float` sequence `R G B A R G B A …`. Alpha is straight
/// (non-premultiplied) opacity. The nominal range of every channel is [0, 1], but
/// values outside it (extended range) and NaN are kept as they are: kernels never
/// clamp; clamping happens once, when the image is encoded to integer samples
/// (see `FloatImage.samples(layout:maxval:)`).
///
/// `FloatImage` is a value: copies share storage until one of them is written
/// (copy-on-write through `Array`), so it is `Sendable` at no cost.
public struct FloatImage: Sendable, Equatable {
    /// The number of pixels in a row; at least 1.
    public let width: Int
    /// The number of rows; at least 1.
    public let height: Int
    /// The pixels, `width × height` of them, row-major from the top-left corner. Read
    /// only as a whole, so the count always matches the size; change pixels through
    /// `subscript(pixel:)`, `subscript(x:y:)` or `withUnsafeMutablePixels`.
    public private(set) var pixels: [SIMD4<Float>]

    /// The pixel at row-major index `index` (`y × width + x`).
    ///
    /// - Precondition: `0 ≤ index < width × height`.
    public subscript(pixel index: Int) -> SIMD4<Float> {
        get { pixels[index] }
        set { pixels[index] = newValue }
    }

    /// Wraps `pixels` as a `width × height` image.
    ///
    /// - Throws: `RasterError.invalidSize` when a side is below 1 or the image's bytes
    ///   do not fit in `Int`; `RasterError.pixelCountMismatch` when `pixels.count` is
    ///   not `width × height`.
    /// - Complexity: O(1).
    public init(width: Int, height: Int, pixels: [SIMD4<Float>]) throws(RasterError) {
        let count = try RasterError.pixelCount(width: width, height: height)
        guard pixels.count == count else { throw .pixelCountMismatch(expected: count, found: pixels.count) }
        self.init(checkedWidth: width, height: height, pixels: pixels)
    }

    /// A `width × height` image with every pixel set to `color`
    /// (default opaque black, `(0, 0, 0, 1)`).
    ///
    /// The pixels are one `Array`: a size whose bytes fit in `Int` but not in the
    /// machine's memory stops the process, as any Swift allocation does.
    ///
    /// - Throws: `RasterError.invalidSize` when a side is below 1 or the image's bytes
    ///   do not fit in `Int`.
    /// - Complexity: O(width × height).
    public init(width: Int, height: Int, color: SIMD4<Float> = SIMD4(0, 0, 0, 1)) throws(RasterError) {
        let count = try RasterError.pixelCount(width: width, height: height)
        self.init(checkedWidth: width, height: height, pixels: Array(repeating: color, count: count))
    }

    /// An image whose size the caller has already checked: `width, height ≥ 1` and
    /// `pixels.count == width × height`. For the library's own images, whose sizes come
    /// from images that already exist.
    init(checkedWidth width: Int, height: Int, pixels: [SIMD4<Float>]) {
        assert(width >= 1 && height >= 1 && width.multipliedReportingOverflow(by: height) == (pixels.count, false))
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The pixel at column `x`, row `y` (origin top-left).
    ///
    /// - Precondition: `0 ≤ x < width`, `0 ≤ y < height`.
    public subscript(x: Int, y: Int) -> SIMD4<Float> {
        get {
            precondition(x >= 0 && x < width && y >= 0 && y < height, "FloatImage: pixel (\(x), \(y)) is outside the image")
            return pixels[y * width + x]
        }
        set {
            precondition(x >= 0 && x < width && y >= 0 && y < height, "FloatImage: pixel (\(x), \(y)) is outside the image")
            pixels[y * width + x] = newValue
        }
    }

    /// The number of pixels, `width × height`.
    public var pixelCount: Int { pixels.count }

    /// Calls `body` with the pixel storage, `width × height` pixels row-major, for
    /// kernels that write in place. Do not let the pointer escape `body`.
    ///
    /// - Complexity: O(1), plus one copy of the storage if it is shared.
    public mutating func withUnsafeMutablePixels<R, E: Error>(
        _ body: (UnsafeMutableBufferPointer<SIMD4<Float>>) throws(E) -> R
    ) throws(E) -> R {
        var result: Result<R, E>!
        pixels.withUnsafeMutableBufferPointer { buffer in
            do throws(E) { result = .success(try body(buffer)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    /// Calls `body` with read-only access to the pixel storage.
    ///
    /// - Complexity: O(1).
    public func withUnsafePixels<R, E: Error>(
        _ body: (UnsafeBufferPointer<SIMD4<Float>>) throws(E) -> R
    ) throws(E) -> R {
        var result: Result<R, E>!
        pixels.withUnsafeBufferPointer { buffer in
            do throws(E) { result = .success(try body(buffer)) } catch { result = .failure(error) }
        }
        return try result.get()
    }
}

/// What is wrong with the description of an image or an integer raster handed to the
/// library: its size, its maxval, or the number of pixels or samples that should fill it.
public enum RasterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A side below 1, or a size whose bytes (16 per pixel as a `FloatImage`) do not fit
    /// in `Int`.
    case invalidSize(width: Int, height: Int)
    /// An array of pixels whose count is not `width × height`.
    case pixelCountMismatch(expected: Int, found: Int)
    /// A maxval outside 1…65535, or above what the sample type holds (255 for
    /// `UInt8`).
    case invalidMaxval(Int, sampleBits: Int)
    /// A raster whose sample count is not `width × height × channels`.
    case sampleCountMismatch(expected: Int, found: Int)

    /// One sentence naming what is wrong.
    public var description: String {
        switch self {
        case .invalidSize(let w, let h):
            "image size \(w)×\(h) is invalid (each side at least 1, and its bytes, 16 a pixel, countable in Int)"
        case .pixelCountMismatch(let expected, let found): "\(found) pixels given; the size needs \(expected)"
        case .invalidMaxval(let m, let bits):
            "maxval \(m) is invalid for \(bits)-bit samples (1…\((1 << min(bits, 16)) - 1))"
        case .sampleCountMismatch(let expected, let found): "the raster holds \(found) samples; \(expected) expected"
        }
    }

    /// `width × height`, or `invalidSize` where a side is below 1 or the image's bytes
    /// (16 per pixel) would not fit in `Int`.
    static func pixelCount(width: Int, height: Int) throws(RasterError) -> Int {
        let (count, overflow) = width.multipliedReportingOverflow(by: height)
        guard width >= 1, height >= 1, !overflow, count <= Int.max / MemoryLayout<SIMD4<Float>>.stride else {
            throw .invalidSize(width: width, height: height)
        }
        return count
    }

    /// Throws `invalidMaxval` where `maxval` is outside 1…65535 or above what `Sample`
    /// holds.
    static func check<Sample: FixedWidthInteger>(maxval: Int, for _: Sample.Type) throws(RasterError) {
        guard SampleCoding.maxvalRange.contains(maxval), maxval <= Int(Sample.max) else {
            throw .invalidMaxval(maxval, sampleBits: Sample.bitWidth)
        }
    }

    /// Throws `invalidMaxval` as `check(maxval:for:)` does, then `invalidSize` or
    /// `sampleCountMismatch` unless a `width × height` raster of `layout` pixels has
    /// `count` samples: the checks of every conversion between a raster and an image.
    static func check<Sample: FixedWidthInteger>(width: Int, height: Int, layout: SampleLayout, maxval: Int,
                                                 count: Int, of _: Sample.Type) throws(RasterError) {
        try check(maxval: maxval, for: Sample.self)
        let pixels = try pixelCount(width: width, height: height)
        let (samples, overflow) = pixels.multipliedReportingOverflow(by: layout.channelCount)
        guard !overflow else { throw .invalidSize(width: width, height: height) }
        guard samples == count else { throw .sampleCountMismatch(expected: samples, found: count) }
    }
}
