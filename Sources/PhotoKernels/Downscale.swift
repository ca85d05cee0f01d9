import Foundation

// Downscaling by area (SPEC §10), the box filter: each output pixel is the mean of the
// input over its footprint, taken on premultiplied values so transparent pixels add
// nothing to the colour. The filter is separable; the column weights are computed once
// per call, every input row is reduced across once, and output rows accumulate their
// reduced input rows, so the scratch is a few rows whatever the image size.

/// What is wrong with a downscale request.
public enum DownscaleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A target width or height below 1.
    case invalidSize(width: Int, height: Int)
    /// A target wider or taller than the source: this filter only shrinks.
    case targetLargerThanSource(sourceWidth: Int, sourceHeight: Int, targetWidth: Int, targetHeight: Int)
    /// A pair of sizes whose footprint arithmetic (`W × W'` or `H × H'`) overflows.
    case sizeOverflow(source: Int, target: Int)
    /// Source and destination memory overlap.
    case overlappingBuffers

    /// One sentence naming what is wrong.
    public var description: String {
        switch self {
        case .invalidSize(let w, let h): "downscale target \(w)×\(h) is invalid (each side at least 1)"
        case .targetLargerThanSource(let sw, let sh, let tw, let th):
            "downscale target \(tw)×\(th) is larger than the \(sw)×\(sh) source in width or height"
        case .sizeOverflow(let s, let t): "a downscale from \(s) to \(t) pixels overflows the footprint arithmetic"
        case .overlappingBuffers: "the downscale source and destination buffers overlap"
        }
    }
}

/// Downscaling by area: every output pixel is the mean of the input over the rectangle
/// it covers (SPEC §10) [own; the box filter of Pillow's `BOX` resampling, and Core
/// Image's `CIAreaAverage` taken over each output pixel's rectangle].
///
/// **Footprint.** Output pixel `(X, Y)` of a `W' × H'` target covers the input rectangle
/// `[X·W/W', (X+1)·W/W') × [Y·H/H', (Y+1)·H/H')`, a box of `W/W' × H/H'` input pixels,
/// any `W' ≤ W` and `H' ≤ H` (the two ratios need not be equal or whole numbers). An
/// input pixel counts with the area of it inside the box, over the box's area:
/// ```
/// w_x(X) = |[x, x+1) ∩ [X·W/W', (X+1)·W/W')| / (W/W')        (and w_y(Y) likewise)
/// out(X, Y) = Σ_y Σ_x  w_y(Y) · w_x(X) · P(x, y)
/// ```
/// The overlaps are computed exactly in integers (`W'·x` against `W·X`), then divided
/// once; each output's weights sum to 1.
///
/// **Alpha.** `P` is the premultiplied pixel `(a·R, a·G, a·B, a)` (a premultiplied
/// source as it is stored; a source without alpha has `a = 1`), so a transparent pixel
/// contributes nothing to the colour and an edge between an opaque and a transparent
/// region keeps its colour — no dark halo. The mean is written in the destination's
/// format: premultiplied it stays premultiplied (stored as `clamp(C, 0, 1)·a` with
/// `C = c/a`, SPEC §10, so `c ≤ a`); straight alpha divides the colour by the mean
/// alpha (`C = c/a`; all zero where `a = 0`); a destination without alpha stores the
/// straight colour (as `PreparedEditPlan` converts to such a format), a grey one its
/// Rec. 709 luma. Integer samples decode and encode by SPEC §0; float samples are taken
/// as they are.
///
/// **Precision.** Weights and sums are in `Double`, the straight colour divided in
/// `Double`, and the mean rounded to `Float` once: within about 10⁻¹³ of the exact
/// mean however many terms each output sums (`⌈W/W'⌉ + 1` across, `⌈H/H'⌉ + 1`
/// down), so an integer sample is the correctly rounded mean except within SPEC §8's
/// τ = 2⁻²⁰ of a tie, and a constant image stays constant (exactly, in integer
/// formats). (Sums in `Float` would err by up to about 10⁻⁵ for reductions by hundreds.)
///
/// **Cost.** `O(W·H)` time: one multiply-add in `Double` per input pixel across, then
/// one per reduced pixel and input row down. Memory: the weights (`W + W'` entries)
/// and, per thread, three rows of `W'` pixels (plus one input row of `W` pixels for
/// formats without a direct path). 8-bit, 16-bit and 32-bit float four-channel formats (every
/// channel order) are read directly; the others through a row decoder.
public enum Downscale {
    /// Downscales `source` into `destination` by area; see the type's documentation.
    ///
    /// - Parameters:
    ///   - source: any format; never written.
    ///   - destination: any format, at most as wide and as tall as `source`; every pixel
    ///     is written, its padding bytes never (an X order's padding sample keeps its value).
    ///   - threads: threads to use, `nil` for every active core; small images use fewer
    ///     (at least 64 K source pixels per thread). The result never depends on it.
    /// - Throws: `DownscaleError.targetLargerThanSource`, `.overlappingBuffers`, or
    ///   `.sizeOverflow` for sizes whose products `W·W'`, `H·H'` (or the scratch,
    ///   `32·(W + W')` bytes) do not fit an `Int`.
    /// - Complexity: O(W·H + W'·H'); allocates O(W + W') per thread.
    public static func area(from source: PixelBuffer, to destination: PixelBuffer, threads: Int? = nil) throws(DownscaleError) {
        try area(from: source, to: destination, threads: threads, minimumBandPixels: 65_536)
    }

    /// `area(from:to:threads:)` with the least number of source pixels worth a thread of
    /// its own (tests lower it to split small images).
    static func area(from source: PixelBuffer, to destination: PixelBuffer, threads: Int?,
                     minimumBandPixels: Int) throws(DownscaleError) {
        let (w, h, tw, th) = (source.width, source.height, destination.width, destination.height)
        guard tw <= w, th <= h else {
            throw .targetLargerThanSource(sourceWidth: w, sourceHeight: h, targetWidth: tw, targetHeight: th)
        }
        guard !w.multipliedReportingOverflow(by: tw).overflow, w <= Int.max / 32 else { throw .sizeOverflow(source: w, target: tw) }
        guard !h.multipliedReportingOverflow(by: th).overflow, h <= Int.max / 32 else { throw .sizeOverflow(source: h, target: th) }
        guard !source.span.overlaps(destination.span) else { throw .overlappingBuffers }
        let reader = SourceReader(source.format)
        let columns = Footprints(source: w, target: tw, scale: reader.scale)
        let rows = Footprints(source: h, target: th, scale: 1)
        let threads = max(1, threads ?? ProcessInfo.processInfo.activeProcessorCount)
        let (pixels, overflow) = w.multipliedReportingOverflow(by: h)
        let bands = min(threads, th, overflow ? threads : max(1, pixels / max(1, minimumBandPixels)))
        let job = DownscaleJob(source: source, destination: destination, reader: reader, columns: columns, rows: rows)
        if bands == 1 {
            job.run(rows: 0..<th)
        } else {
            // Band b starts at b·q + min(b, r): no product larger than th.
            let (q, r) = th.quotientAndRemainder(dividingBy: bands)
            DispatchQueue.concurrentPerform(iterations: bands) { band in
                let start = band * q + min(band, r)
                job.run(rows: start..<(start + q + (band < r ? 1 : 0)))
            }
        }
    }
}

extension FloatImage {
    /// The image downscaled by area to `width × height` (SPEC §10): each pixel the mean
    /// of the premultiplied pixels it covers, stored straight (colour divided by the
    /// mean alpha, all zero where that is 0). See `Downscale`.
    ///
    /// - Parameters:
    ///   - width, height: the target size, `1…self.width` and `1…self.height`; the
    ///     aspect ratio may change.
    ///   - threads: as for `Downscale.area(from:to:threads:)`.
    /// - Throws: `DownscaleError.invalidSize` for a side below 1,
    ///   `.targetLargerThanSource` for one above the source's.
    /// - Complexity: O(self.width × self.height); allocates the result.
    public func downscaled(width: Int, height: Int, threads: Int? = nil) throws(DownscaleError) -> FloatImage {
        guard width >= 1, height >= 1 else { throw .invalidSize(width: width, height: height) }
        guard width <= self.width, height <= self.height else {
            throw .targetLargerThanSource(sourceWidth: self.width, sourceHeight: self.height, targetWidth: width, targetHeight: height)
        }
        var result = FloatImage(checkedWidth: width, height: height,
                                pixels: Array(repeating: .zero, count: width * height))
        let stride = MemoryLayout<SIMD4<Float>>.stride
        // Both descriptions are valid by construction (sizes ≥ 1, Float-aligned storage).
        var failure: DownscaleError?
        withUnsafePixels { input in
            result.withUnsafeMutablePixels { output in
                guard let s = try? PixelBuffer(baseAddress: UnsafeMutableRawPointer(mutating: input.baseAddress!),
                                               width: self.width, height: self.height, bytesPerRow: self.width * stride,
                                               format: .rgbaFloat),
                      let d = try? PixelBuffer(baseAddress: UnsafeMutableRawPointer(output.baseAddress!),
                                               width: width, height: height, bytesPerRow: width * stride, format: .rgbaFloat)
                else { return }
                do throws(DownscaleError) { try Downscale.area(from: s, to: d, threads: threads) } catch { failure = error }
            }
        }
        if let failure { throw failure }
        return result
    }
}

// MARK: Footprints

/// The footprints of one axis: for every output index, the first input index it
/// covers, how many, and their weights (in one flat array), each multiplied by
/// `scale` (the source's `1/maxval` on the horizontal axis, so the direct paths
/// accumulate raw samples).
final class Footprints: @unchecked Sendable {
    let first: UnsafeMutablePointer<Int>
    let count: UnsafeMutablePointer<Int>
    let offset: UnsafeMutablePointer<Int>
    let weights: UnsafeMutablePointer<Double>
    let targetCount: Int

    /// Footprints from `source` input pixels to `target ≤ source` output pixels; the
    /// caller has checked that `source × target` fits an `Int`.
    init(source n: Int, target m: Int, scale: Double) {
        targetCount = m
        first = .allocate(capacity: m)
        count = .allocate(capacity: m)
        offset = .allocate(capacity: m)
        // Each output covers ⌈n/m⌉ + 1 inputs at most, and consecutive outputs share at
        // most one, so the weights number fewer than n + m.
        weights = .allocate(capacity: n + m)
        // In units of 1/m input pixels: input x is [x·m, (x+1)·m), output X is [X·n, (X+1)·n).
        var k = 0
        for X in 0..<m {
            let lower = X * n, upper = lower + n
            let x0 = lower / m, x1 = (upper - 1) / m
            first[X] = x0
            count[X] = x1 - x0 + 1
            offset[X] = k
            for x in x0...x1 {
                let covered = min((x + 1) * m, upper) - max(x * m, lower)
                weights[k] = Double(covered) / Double(n) * scale
                k += 1
            }
        }
    }

    deinit {
        first.deallocate()
        count.deallocate()
        offset.deallocate()
        weights.deallocate()
    }
}

// MARK: Reading the source

/// How the rows of one source format are reduced across: directly from the samples for
/// four-channel 8-bit, 16-bit and 32-bit float formats (lanes in memory order, raw
/// sample units, the weights carrying `1/maxval`), through a row decoder into
/// premultiplied RGBA `Float` otherwise.
struct SourceReader {
    enum Path { case direct8, direct16, direct32, decoded }
    let format: PixelFormat
    let path: Path
    /// The lane of alpha to multiply the colour by (straight sources), or `nil`.
    let straightAlphaLane: Int?
    /// The factor the horizontal weights carry: `1/maxval` on the direct integer paths.
    let scale: Double
    /// Where R, G, B and alpha sit in the reduced lanes; `alpha` is `nil` when opaque.
    let lanes: (red: Int, green: Int, blue: Int, alpha: Int?)
    /// For a straight source, `1/maxval` in the colour lanes and 0 in alpha's, and 1 in
    /// alpha's lane only: a pixel `v` premultiplies as `v · (a·scale + one)`.
    let premultiply: (scale: SIMD4<Double>, one: SIMD4<Double>)

    init(_ format: PixelFormat) {
        self.format = format
        let order = format.channelOrder
        let fourChannels = order.fourthIndex != nil
        switch format.sampleType {
        case .uint8 where fourChannels: path = .direct8
        case .uint16 where fourChannels: path = .direct16
        case .float32 where fourChannels: path = .direct32
        default: path = .decoded
        }
        if path == .decoded {
            straightAlphaLane = nil
            scale = 1
            lanes = (0, 1, 2, order.hasAlpha ? 3 : nil)
        } else {
            straightAlphaLane = format.alphaMode == .straight ? order.alphaIndex : nil
            scale = format.sampleType.maxval.map { 1 / Double($0) } ?? 1
            let (r, g, b) = order.colorIndices
            lanes = (r, g, b, order.alphaIndex)
        }
        let unit = scale
        let alpha = SIMD4<Int64>(0, 1, 2, 3) .== SIMD4(repeating: Int64(straightAlphaLane ?? -1))
        premultiply = (SIMD4(repeating: unit).replacing(with: 0, where: alpha), SIMD4(repeating: 0).replacing(with: 1, where: alpha))
    }
}

/// One downscale: the buffers, the reader and both axes' footprints.
struct DownscaleJob: @unchecked Sendable {
    let source: PixelBuffer
    let destination: PixelBuffer
    let reader: SourceReader
    let columns: Footprints
    let rows: Footprints

    /// Computes output rows `range`: each input row of their footprints reduced across
    /// once (a row shared by two consecutive outputs is kept), accumulated down, and
    /// encoded.
    func run(rows range: Range<Int>) {
        guard !range.isEmpty else { return }
        let tw = destination.width
        let reduced = UnsafeMutablePointer<SIMD4<Double>>.allocate(capacity: tw)
        let sum = UnsafeMutablePointer<SIMD4<Double>>.allocate(capacity: tw)
        let means = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: tw)
        let decoded: UnsafeMutablePointer<SIMD4<Float>>? = reader.path == .decoded ? .allocate(capacity: source.width) : nil
        defer {
            reduced.deallocate()
            sum.deallocate()
            means.deallocate()
            decoded?.deallocate()
        }
        var cached = -1
        let encoder = RowCodec(format: destination.format)
        for Y in range {
            let y0 = rows.first[Y], n = rows.count[Y], k0 = rows.offset[Y]
            for j in 0..<n {
                let y = y0 + j
                if y != cached {
                    reduceRow(y, into: reduced, decoded: decoded)
                    cached = y
                }
                let w = SIMD4<Double>(repeating: rows.weights[k0 + j])
                if j == 0 {
                    for X in 0..<tw { sum[X] = reduced[X] * w }
                } else {
                    for X in 0..<tw { sum[X] = reduced[X] * w + sum[X] }
                }
            }
            Self.straighten(sum, into: means, count: tw, lanes: reader.lanes)
            encoder.encode(UnsafePointer(means), count: tw, into: destination.address(x: 0, y: Y))
        }
    }

    /// Row `y` of the source reduced across to the target width, premultiplied.
    private func reduceRow(_ y: Int, into out: UnsafeMutablePointer<SIMD4<Double>>, decoded: UnsafeMutablePointer<SIMD4<Float>>?) {
        let p = UnsafeRawPointer(source.address(x: 0, y: y))
        switch (reader.path, reader.straightAlphaLane) {
        case (.direct8, nil): Self.reduce(p, out, columns, UInt8.self, alphaLane: nil)
        case (.direct8, 3?): Self.reduce(p, out, columns, UInt8.self, alphaLane: 3, premultiply: reader.premultiply)
        case (.direct8, _?): Self.reduce(p, out, columns, UInt8.self, alphaLane: 0, premultiply: reader.premultiply)
        case (.direct16, nil): Self.reduce(p, out, columns, UInt16.self, alphaLane: nil)
        case (.direct16, 3?): Self.reduce(p, out, columns, UInt16.self, alphaLane: 3, premultiply: reader.premultiply)
        case (.direct16, _?): Self.reduce(p, out, columns, UInt16.self, alphaLane: 0, premultiply: reader.premultiply)
        case (.direct32, nil): Self.reduce(p, out, columns, Float.self, alphaLane: nil)
        case (.direct32, 3?): Self.reduce(p, out, columns, Float.self, alphaLane: 3, premultiply: reader.premultiply)
        case (.direct32, _?): Self.reduce(p, out, columns, Float.self, alphaLane: 0, premultiply: reader.premultiply)
        case (.decoded, _):
            let row = decoded!
            PremultipliedDecoder.decode(p, format: reader.format, count: source.width, into: row)
            Self.reduce(UnsafeRawPointer(row), out, columns, Float.self, alphaLane: nil)
        }
    }

    /// The weighted sums across of one row of four-channel pixels, in memory lane
    /// order; with `alphaLane` (3 or 0), colour lanes are first multiplied by that lane
    /// over maxval (the weights carry the other `1/maxval`).
    @inline(__always)
    private static func reduce<S: FourLaneSample>(_ p: UnsafeRawPointer, _ out: UnsafeMutablePointer<SIMD4<Double>>,
                                                  _ f: Footprints, _: S.Type, alphaLane: Int?,
                                                  premultiply: (scale: SIMD4<Double>, one: SIMD4<Double>) = (.zero, .zero)) {
        // v · (a·(u, u, u, 0) + (0, 0, 0, 1)) with u = 1/maxval for alpha in lane 3 (the
        // mirror for lane 0), whole-vector operations. Alpha is loaded again as a scalar,
        // and the two constant vectors come from the reader: given a lane of the vector or
        // constants with zeros in them, the compiler splits the load into scalars.
        let (scale, one) = (premultiply.scale, premultiply.one)
        @inline(__always) func pixel(_ x: Int) -> SIMD4<Double> {
            let v = SIMD4<Double>(S.load(p, x))
            switch alphaLane {
            case 3?: return v * (SIMD4(repeating: Double(S.sample(p, 4 &* x &+ 3))) * scale + one)
            case _?: return v * (SIMD4(repeating: Double(S.sample(p, 4 &* x))) * scale + one)
            case nil: return v
            }
        }
        let weights = f.weights
        for X in 0..<f.targetCount {
            let x0 = f.first[X], k0 = f.offset[X], n = f.count[X]
            // Two sums, even and odd terms: half the chain of dependent multiply-adds.
            var even = SIMD4<Double>(repeating: 0), odd = SIMD4<Double>(repeating: 0)
            var j = 0
            while j &+ 1 < n {
                even = pixel(x0 &+ j) * SIMD4(repeating: weights[k0 &+ j]) + even
                odd = pixel(x0 &+ j &+ 1) * SIMD4(repeating: weights[k0 &+ j &+ 1]) + odd
                j &+= 2
            }
            if j < n { even = pixel(x0 &+ j) * SIMD4(repeating: weights[k0 &+ j]) + even }
            out[X] = even + odd
        }
    }

    /// Premultiplied RGBA sums (in the reader's lanes) to straight RGBA means in
    /// `Float`: colour over alpha (divided in `Double`, rounded once), all zero where
    /// alpha is 0; alpha 1 for an opaque source.
    private static func straighten(_ p: UnsafePointer<SIMD4<Double>>, into out: UnsafeMutablePointer<SIMD4<Float>>,
                                   count: Int, lanes: (red: Int, green: Int, blue: Int, alpha: Int?)) {
        for i in 0..<count {
            let v = p[i]
            guard let al = lanes.alpha else {
                out[i] = SIMD4(Float(v[lanes.red]), Float(v[lanes.green]), Float(v[lanes.blue]), 1)
                continue
            }
            let a = v[al]
            out[i] = a == 0 ? .zero : SIMD4(Float(v[lanes.red] / a), Float(v[lanes.green] / a), Float(v[lanes.blue] / a), Float(a))
        }
    }
}

/// A sample type whose four-channel pixels load as one `SIMD4<Float>` of raw values.
protocol FourLaneSample {
    /// Pixel `x` of the row at `p`, its four samples in memory order, undecoded.
    static func load(_ p: UnsafeRawPointer, _ x: Int) -> SIMD4<Float>
    /// Sample `i` of the row at `p`, undecoded.
    static func sample(_ p: UnsafeRawPointer, _ i: Int) -> Float
}

extension UInt8: FourLaneSample {
    @inline(__always) static func load(_ p: UnsafeRawPointer, _ x: Int) -> SIMD4<Float> {
        SIMD4<Float>(SIMD4<Int32>(truncatingIfNeeded: p.loadUnaligned(fromByteOffset: 4 &* x, as: SIMD4<UInt8>.self)))
    }
    @inline(__always) static func sample(_ p: UnsafeRawPointer, _ i: Int) -> Float { Float(p.load(fromByteOffset: i, as: UInt8.self)) }
}

extension UInt16: FourLaneSample {
    @inline(__always) static func load(_ p: UnsafeRawPointer, _ x: Int) -> SIMD4<Float> {
        SIMD4<Float>(SIMD4<Int32>(truncatingIfNeeded: p.loadUnaligned(fromByteOffset: 8 &* x, as: SIMD4<UInt16>.self)))
    }
    @inline(__always) static func sample(_ p: UnsafeRawPointer, _ i: Int) -> Float {
        Float(p.loadUnaligned(fromByteOffset: 2 &* i, as: UInt16.self))
    }
}

extension Float: FourLaneSample {
    @inline(__always) static func load(_ p: UnsafeRawPointer, _ x: Int) -> SIMD4<Float> {
        p.loadUnaligned(fromByteOffset: 16 &* x, as: SIMD4<Float>.self)
    }
    @inline(__always) static func sample(_ p: UnsafeRawPointer, _ i: Int) -> Float {
        p.loadUnaligned(fromByteOffset: 4 &* i, as: Float.self)
    }
}

/// Decodes row pieces of any format into premultiplied RGBA `Float` (SPEC §0 and §10):
/// integers over maxval, floats as they are; straight colour times alpha, premultiplied
/// colour as stored, alpha 1 without an alpha sample; grey as R = G = B.
enum PremultipliedDecoder {
    static func decode(_ p: UnsafeRawPointer, format: PixelFormat, count: Int, into out: UnsafeMutablePointer<SIMD4<Float>>) {
        switch format.sampleType {
        case .uint8: decode(UInt8.self, p, format, count, out)
        case .uint16: decode(UInt16.self, p, format, count, out)
        case .float32: decode(Float.self, p, format, count, out)
        case .float16:
            #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
            #if arch(x86_64) && !canImport(TargetFeatures.F16C)
            // The halves widened four at a time in SSE2 operations, then the `Float`
            // loop: the same values as `decode(Float16.self, …)`, without a library
            // call per sample (`RowCodec.decodeHalves`).
            let n = format.channelOrder.channelCount
            HalfChunk.forEach(count: count, samplesPerPixel: n) { first, pixels, floats in
                Float16.widen(p + 2 &* n &* first, count: n &* pixels, into: floats)
                decode(Float.self, floats, format, pixels, out + first)
            }
            #else
            decode(Float16.self, p, format, count, out)
            #endif
            #endif
        }
    }

    @inline(__always)
    private static func decode<S: BufferSample>(_: S.Type, _ p: UnsafeRawPointer, _ format: PixelFormat, _ count: Int,
                                                _ out: UnsafeMutablePointer<SIMD4<Float>>) {
        let order = format.channelOrder, n = order.channelCount
        let (ri, gi, bi) = order.colorIndices
        let ai = order.alphaIndex
        let straight = format.alphaMode == .straight
        for i in 0..<count {
            let base = i &* n
            let a: Float = ai.map { S.load(p, base &+ $0) } ?? 1
            var c = SIMD4<Float>(S.load(p, base &+ ri), S.load(p, base &+ gi), S.load(p, base &+ bi), a)
            if straight { c = SIMD4(c.x * a, c.y * a, c.z * a, a) }
            (out + i).initialize(to: c)
        }
    }
}
