// The kinds of work one step of an edit does. The kind, not the kernel, decides how an
// edit plan may fuse and schedule a step: per-sample tone stages fold into a lookup
// table for integer samples, affine stages compose into one matrix, per-pixel stages
// run as row kernels, positional stages become one gain per pixel prepared for the
// image size. Kernels know nothing of files, layouts, bands or threads.

/// One step of an edit, by the kind of work it does (SPEC §6 and §11 give the order).
///
/// - `tone`: a function of each colour sample alone, the same or different per channel
///   (exposure, tone curves). For integer samples the plan folds leading tone stages,
///   with the decoding, into one lookup table over `0…maxval`.
/// - `affine`: `C' = M·C + t` in `Double` (the sliders, sepia, the looks). Consecutive
///   affine stages compose into one matrix, rounded to `Float` once (SPEC §0).
/// - `pixel`: any other per-pixel function of R, G, B (monochrome, vibrance, LUTs).
/// - `positional`: a gain `C' = g(x, y)·C` that depends on the pixel's place in the
///   whole image (the vignette); its constants are prepared once per image size.
public enum Stage: Sendable {
    /// A per-sample tone function.
    case tone(any ToneStage)
    /// An affine colour transform.
    case affine(any AffineStage)
    /// A per-pixel colour function.
    case pixel(any PixelKernel)
    /// A positional gain.
    case positional(any PositionalStage)

    /// The stage as a row kernel: what the unfused reference runs.
    public var kernel: any PixelKernel {
        switch self {
        case .tone(let k): k
        case .affine(let k): k
        case .pixel(let k): k
        case .positional(let k): k
        }
    }
}

/// A per-sample tone function (SPEC §3, §11): each output colour channel depends only
/// on the same input channel; alpha is never touched.
///
/// The row kernel (`PixelKernel.apply`) is the vector schedule for `Float` pixels and
/// `map` its scalar reference. Leading tone stages on integer samples take neither:
/// every path (the fused blocks, the row paths, `.scalar`) reads them from lookup
/// tables filled with `evaluate`, the stage in `Double` rounded to `Float` once (a
/// translucent premultiplied 16-bit pixel: `evaluate` on `c/A` itself), so a steep
/// tone curve does not multiply the `Float` error of the tones before it (SPEC §8). A
/// tone stage after another kind of stage runs as a row kernel on that stage's `Float`
/// results.
public protocol ToneStage: PixelKernel {
    /// The stage's value for one colour sample `x` of channel `channel` (0 red,
    /// 1 green, 2 blue) in `Float`: the scalar reference of the row kernel.
    func map(_ x: Float, channel: Int) -> Float
    /// The stage's value for one colour sample `x` of channel `channel` in `Double`:
    /// the formula as written, what integer samples' tone tables hold. The default
    /// widens `map`, so a stage without a `Double` form tabulates its `Float` reference.
    func evaluate(_ x: Double, channel: Int) -> Double
    /// Whether `map` is the same function on all three channels (the plan then keeps
    /// one table instead of three).
    var isChannelUniform: Bool { get }
    /// Where `map` is exactly affine on every channel, or `nil` if it is nowhere (the
    /// default). The fused blocks fold it into their colour matrix: the integer ones
    /// then take a group of pixels whose samples all lie in it as they are, instead of
    /// loading table entries, and the `Float` one takes such pixels' values.
    var affineSegment: AffineToneSegment? { get }
}

extension ToneStage {
    /// `nil`: no affine segment is declared.
    public var affineSegment: AffineToneSegment? { nil }

    /// `map` on `Float(x)`, widened: the `Float` reference where a stage declares no
    /// `Double` form.
    public func evaluate(_ x: Double, channel: Int) -> Double { Double(map(Float(x), channel: channel)) }
}

/// A part of a tone curve that is a straight line: `f(x) = gain·x + offset` for every
/// `x > lowerBound`, in real arithmetic. `x` and `f(x)` are in the stage's own units,
/// the encoded sample value with 1 the full scale (`v / maxval` for integer samples).
/// The identity line is `gain` 1, `offset` 0 everywhere (`identity`).
///
/// Exposure has one (SPEC §3): where sRGB decoding and encoding both use their power
/// segments the two powers cancel, `f(x) = 2^(ev/2.4)·(x + 0.055) − 0.055`.
public struct AffineToneSegment: Sendable, Hashable {
    /// The segment holds for `x > lowerBound` (−∞: everywhere).
    public var lowerBound: Double
    /// The slope; the segment composes with a following one only when it is positive.
    public var gain: Double
    /// The value at 0 of the line.
    public var offset: Double

    /// The line `gain·x + offset` above `lowerBound`.
    public init(lowerBound: Double, gain: Double, offset: Double) {
        (self.lowerBound, self.gain, self.offset) = (lowerBound, gain, offset)
    }

    /// The identity line, everywhere.
    public static let identity = AffineToneSegment(lowerBound: -.infinity, gain: 1, offset: 0)

    /// This segment followed by `next`: where `x` lies in this one and its image in
    /// `next`'s, or `nil` unless this gain is positive (an increasing line maps the
    /// half-line `x > b` onto a half-line).
    public func then(_ next: AffineToneSegment) -> AffineToneSegment? {
        guard gain > 0 else { return nil }
        let bound = Swift.max(lowerBound, (next.lowerBound - offset) / gain)
        return AffineToneSegment(lowerBound: bound, gain: gain * next.gain, offset: next.gain * offset + next.offset)
    }

    /// The segment shared by `tones` applied in order: `nil` unless each is the same on
    /// all three channels and declares one.
    static func composed(_ tones: [any ToneStage]) -> AffineToneSegment? {
        var segment = AffineToneSegment.identity
        for t in tones {
            guard t.isChannelUniform, let next = t.affineSegment, let s = segment.then(next) else { return nil }
            segment = s
        }
        return segment
    }
}

/// An affine colour transform `C' = M·C + t` (SPEC §2, §5): the row kernel is its
/// readable reference (the slider's own formula), `matrix` what the plan composes.
public protocol AffineStage: PixelKernel {
    /// The transform in `Double`, as the plan composes it before rounding once.
    var matrix: ColorMatrix { get }
}

/// A positional gain (SPEC §4, §10): `C' = g(x, y)·C` on R, G, B, alpha kept, where
/// `(x, y)` is the pixel's place in the whole image, so tiles and bands of an image
/// get exactly the pixels of the whole render.
public protocol PositionalStage: PixelKernel {
    /// Resolves every constant that depends on the image size, once per size.
    ///
    /// - Parameters:
    ///   - imageWidth, imageHeight: the whole image's size in pixels, each ≥ 1.
    /// - Complexity: O(1) for the vignette.
    func preparedGains(imageWidth: Int, imageHeight: Int) -> any PreparedGains

    /// The gains for a run whose results stay `Float` (an `EditPlan` in place on a
    /// `FloatImage`), which SPEC §8 holds to its `Float` tolerance, 1e-5, rather than to
    /// the tie-aware rule of integer and half-precision samples that
    /// `preparedGains(imageWidth:imageHeight:)` must meet. The vignette's are its `Float`
    /// kernel's, about 3× cheaper per gain; by default `preparedGains`.
    ///
    /// - Parameters:
    ///   - imageWidth, imageHeight: the whole image's size in pixels, each ≥ 1.
    /// - Complexity: O(1) for the vignette.
    func preparedFloatGains(imageWidth: Int, imageHeight: Int) -> any PreparedGains
}

extension PositionalStage {
    /// `preparedGains(imageWidth:imageHeight:)`: gains precise enough for every output.
    ///
    /// - Complexity: that of `preparedGains`.
    public func preparedFloatGains(imageWidth: Int, imageHeight: Int) -> any PreparedGains {
        preparedGains(imageWidth: imageWidth, imageHeight: imageHeight)
    }
}

/// The gains of a positional stage for one image size.
public protocol PreparedGains: Sendable {
    /// Writes the gains of pixels `x0 ..< x0 + count` of row `y` (whole-image
    /// coordinates) to `gains[0 ..< count]`.
    ///
    /// - Parameter variant: `.scalar` evaluates the reference formula per pixel;
    ///   `.simd4` the vector schedule. They agree to the bit for the vignette.
    /// - Complexity: O(count); no allocation.
    func rowGains(y: Int, x0: Int, count: Int, variant: KernelVariant, into gains: UnsafeMutablePointer<Float>)

    /// Multiplies R, G and B of the straight-alpha `Float` RGBA pixels
    /// `pixels[0 ..< count]`, pixels `x0 ..< x0 + count` of row `y` (whole-image
    /// coordinates), by their gains in place; alpha is kept bit for bit. Each product
    /// is the gain of `rowGains(variant:)` times the sample, to the bit, except that
    /// a pixel whose gain is exactly 1 may be left unread (then a signalling NaN stays
    /// signalling). The vignette computes its band's gains between the constant spans,
    /// in chunks ahead of the pixels they scale.
    ///
    /// - Complexity: O(count); no heap allocation.
    func scale(_ pixels: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int, variant: KernelVariant)

    /// Multiplies R, G and B of the straight-alpha `Float` RGBA pixels
    /// `pixels[0 ..< count]`, pixels `x0 ..< x0 + count` of row `y` (whole-image
    /// coordinates), by `gains[0 ..< count]` in place, where `gains` holds the `count`
    /// values `rowGains(variant: .simd4)` writes for those pixels; alpha is kept bit for
    /// bit. The products are those of `scale(variant: .simd4)`, to the bit, with the
    /// same licence for gains of exactly 1.
    ///
    /// A plan calls this when `scalesInOnePass` is `false` and its run's first and last
    /// rows have the same gains (`rowWithSameGains`): it computes each row's gains once,
    /// for every piece of the row and for the row's mirror, and scales each piece by
    /// them.
    ///
    /// - Complexity: O(count); no allocation.
    func scale(_ pixels: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int, by gains: UnsafePointer<Float>)

    /// `scale(_:count:y:x0:by:)` with the gains it scales by computed as it goes: on
    /// return `gains[0 ..< count]` holds the values `rowGains(variant: .simd4)` writes
    /// for pixels `x0 ..< x0 + count` of row `y`, and the pixels are scaled by them as
    /// `scale(_:count:y:x0:by:)` scales (the same products, the same licence for gains
    /// of exactly 1). A plan that holds row gains calls it for a row's first piece when
    /// that piece is the whole row of its run; the row's mirror then scales by `gains`.
    /// The vignette computes a chunk of gains just ahead of the pixels it scales, so
    /// that their arithmetic overlaps the pixels' memory traffic.
    ///
    /// - Complexity: O(count); no heap allocation.
    func scale(_ pixels: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int,
               writingGainsTo gains: UnsafeMutablePointer<Float>)

    /// Whether `scale(variant: .simd4)` computes each gain in the loop that applies it,
    /// so that the gains' arithmetic overlaps the pixels' memory traffic. When it does
    /// not, a plan may hold each row's gains instead (see `scale(_:count:y:x0:by:)`).
    ///
    /// - Complexity: O(1).
    var scalesInOnePass: Bool { get }

    /// A row whose gains equal row `y`'s to the bit in every column, such as its mirror
    /// image about a centre line, or `y` itself (the result may lie outside the image).
    /// A plan's integer blocks, and its `Float` row path when it holds row gains, visit
    /// the rows in groups of up to 8 from both ends of a run whose first and last rows
    /// are such a pair, and compute each pair's gains once.
    ///
    /// - Complexity: O(1).
    func rowWithSameGains(as y: Int) -> Int

    /// An upper bound on |g| over every gain `rowGains` writes, either variant; +∞ (or
    /// NaN) where none is known. A plan's 8-bit blocks in the baseline x86-64 build,
    /// and its 16-bit blocks at maxval 65535 where the build targets AVX2, round and
    /// clamp their results by saturating integer packs alone when this bound, the
    /// matrix and the tone tables keep every result far inside Int32's range, so a
    /// bound below a gain actually written gives wrong samples there.
    ///
    /// - Complexity: O(1).
    var largestGainMagnitude: Float { get }
}

extension PreparedGains {
    /// `y`: no other row is known to share its gains.
    public func rowWithSameGains(as y: Int) -> Int { y }

    /// +∞: no bound is known.
    ///
    /// - Complexity: O(1).
    public var largestGainMagnitude: Float { .infinity }

    /// `false`: the default `scale` takes two passes.
    ///
    /// - Complexity: O(1).
    public var scalesInOnePass: Bool { false }

    /// The products one pixel at a time, `gains[i]` times R, G and B of `pixels[i]`,
    /// alpha untouched: the default `scale(variant:)`'s products, to the bit, when
    /// `gains` holds its gains.
    ///
    /// - Complexity: O(count); no allocation.
    public func scale(_ pixels: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int,
                      by gains: UnsafePointer<Float>) {
        multiply(pixels, count: count, by: gains)
    }

    /// `rowGains(variant: .simd4)` into `gains`, then `scale(_:count:y:x0:by:)`.
    ///
    /// - Complexity: O(count); no allocation.
    public func scale(_ pixels: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int,
                      writingGainsTo gains: UnsafeMutablePointer<Float>) {
        rowGains(y: y, x0: x0, count: count, variant: .simd4, into: gains)
        scale(pixels, count: count, y: y, x0: x0, by: gains)
    }

    /// `gains[i]` times R, G and B of `pixels[i]` for `i < count`, alpha untouched: the
    /// products of both default `scale`s.
    private func multiply(_ pixels: UnsafeMutablePointer<SIMD4<Float>>, count: Int, by gains: UnsafePointer<Float>) {
        for i in 0..<count {
            pixels[i].x = gains[i] * pixels[i].x
            pixels[i].y = gains[i] * pixels[i].y
            pixels[i].z = gains[i] * pixels[i].z
        }
    }

    /// `rowGains` 256 pixels at a time into a stack buffer, then the products.
    public func scale(_ pixels: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int, variant: KernelVariant) {
        let chunk = 256
        withUnsafeTemporaryAllocation(of: Float.self, capacity: chunk) { buffer in
            let gains = buffer.baseAddress!
            var done = 0
            while done < count {
                let n = min(chunk, count - done)
                rowGains(y: y, x0: x0 + done, count: n, variant: variant, into: gains)
                multiply(pixels + done, count: n, by: gains)
                done += n
            }
        }
    }
}

extension PixelKernel {
    /// A kernel with no declared kind is a per-pixel stage.
    public var stage: Stage { .pixel(self) }
}

extension ToneStage {
    /// A tone stage is `.tone(self)`.
    public var stage: Stage { .tone(self) }
}

extension AffineStage {
    /// An affine stage is `.affine(self)`.
    public var stage: Stage { .affine(self) }
}

extension PositionalStage {
    /// A positional stage is `.positional(self)`.
    public var stage: Stage { .positional(self) }
}
