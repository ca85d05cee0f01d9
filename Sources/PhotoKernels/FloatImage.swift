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
    /// - Precondition: `width ≥ 1`, `height ≥ 1` and `pixels.count == width × height`
    ///   (a programming error, not a data error, so it traps).
    /// - Complexity: O(1).
    public init(width: Int, height: Int, pixels: [SIMD4<Float>]) {
        precondition(width >= 1 && height >= 1, "FloatImage: width and height must be at least 1")
        precondition(width.multipliedReportingOverflow(by: height) == (pixels.count, false),
                     "FloatImage: pixels.count must equal width × height")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A `width × height` image with every pixel set to `color`
    /// (default opaque black, `(0, 0, 0, 1)`).
    ///
    /// - Precondition: `width ≥ 1`, `height ≥ 1`, and `width × height` does not overflow.
    /// - Complexity: O(width × height).
    public init(width: Int, height: Int, color: SIMD4<Float> = SIMD4(0, 0, 0, 1)) {
        precondition(width >= 1 && height >= 1, "FloatImage: width and height must be at least 1")
        let (count, overflow) = width.multipliedReportingOverflow(by: height)
        precondition(!overflow, "FloatImage: width × height overflows")
        self.init(width: width, height: height, pixels: Array(repeating: color, count: count))
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
