// Colour lookup tables (SPEC §11): a 3D cube interpolated tetrahedrally (or
// trilinearly), or three 1D curves interpolated linearly, as `.cube` files hold them.
// Not affine, so it cannot fuse into a ColorMatrix: it runs as its own kernel.

/// Why a table cannot become a ``ColorCube``.
public enum ColorCubeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `size` lies outside ``ColorCube/sizeRange(_:)`` for the dimension.
    case sizeOutOfRange(size: Int, range: ClosedRange<Int>)
    /// The table holds `found` entries; a 3D table of size N needs N³, a 1D table N.
    case entryCountMismatch(expected: Int, found: Int)
    /// Entry `index` (0-based, red index fastest) has a NaN or infinite channel.
    case nonFiniteEntry(index: Int)
    /// On `channel` (0 = R, 1 = G, 2 = B) the domain is not a finite interval with
    /// `min < max`.
    case invalidDomain(channel: Int, min: Float, max: Float)

    /// One English sentence naming the problem.
    public var description: String {
        switch self {
        case .sizeOutOfRange(let size, let range):
            return "the table size \(size) is outside \(range.lowerBound)…\(range.upperBound)"
        case .entryCountMismatch(let expected, let found):
            return "the table needs \(expected) entries but has \(found)"
        case .nonFiniteEntry(let index):
            return "table entry \(index) is NaN or infinite"
        case .invalidDomain(let channel, let min, let max):
            return "the domain of channel \(["R", "G", "B"][channel]) is [\(min), \(max)]; it needs finite min < max"
        }
    }
}

/// A colour lookup table (SPEC §11, CIColorCube- and `.cube`-like): a 3D cube of
/// output colours, or three 1D curves, over an input domain.
///
/// **3D** (`size` N, 2…256): entry `(i, j, k)` is the output for the input
/// `lo + (i, j, k)·(hi − lo)/(N − 1)`, stored at index `i + N·j + N²·k` (red index
/// fastest, as in a `.cube` file and CIColorCube's data). A colour `C` is looked up as:
/// ```
/// c  = clamp(C, lo, hi)                          per channel (the domain)
/// t  = min((c − lo)·s, N − 1)                    s = (N − 1)/(hi − lo), rounded to Float once
/// i  = min(⌊t⌋, N − 2),  f = t − i               cell (ir, ig, ib), fractions (fr, fg, fb) in [0, 1]
/// ```
/// **Tetrahedral** (the default, as DaVinci Resolve, OpenColorIO and ffmpeg's `lut3d`
/// do): the cell is split along its diagonal c000–c111 into six tetrahedra, chosen by
/// the order of the fractions; with that order `fmax ≥ fmid ≥ fmin` and the corners met
/// walking from c000 along the axes of `fmax`, then `fmid`, then `fmin`:
/// ```
/// lut(C) = (1 − fmax)·c000 + (fmax − fmid)·c_first + (fmid − fmin)·c_second + fmin·c111
///
///   order of the fractions   c_first  c_second      order            c_first  c_second
///   fr > fg > fb             c100     c110          fb > fg ≥ fr     c001     c011
///   fr > fb ≥ fg             c100     c101          fg ≥ fb > fr     c010     c011
///   fb ≥ fr > fg             c001     c101          fg ≥ fr ≥ fb     c010     c110
/// ```
/// (ties as ffmpeg's `interp_tetrahedral` breaks them; either side of a tie gives the
/// same value). Four corners per lookup; any affine map sampled into the table is
/// reproduced exactly, and a grey axis (R = G = B) stays on the c000–c111 diagonal.
/// **Trilinear** (on request): `lerp` along R, then G, then B over the cell's eight
/// corners, `lerp(a, b, f) = a + f·(b − a)`.
///
/// **1D** (`size` N, 2…65536): entry `i` holds the outputs of the three channels for the
/// input `lo + i·(hi − lo)/(N − 1)`; each channel is looked up on its own column,
/// linearly: `out = e[i] + f·(e[i + 1] − e[i])` with `i`, `f` as above.
///
/// Then, on R, G, B (alpha unchanged, the output never clamped):
/// `C' = C + a·(lut(C) − C)` with `a = clamp(intensity, 0, 1)` (NaN counts as 0); at
/// `a = 1` the output is `lut(C)` itself, at `a = 0` the kernel returns at once.
///
/// - Values are looked up as they are (sRGB-encoded in this library's working space).
/// - NaN: the lookup never reads outside the table (a NaN coordinate indexes the
///   domain's low end), and the output is NaN where the input is: in a 3D lookup a NaN
///   in R, G or B makes all three outputs of that pixel NaN (each depends on all three
///   inputs); in a 1D lookup only that channel is NaN. No other pixel is affected.
///   ±∞ clamps to the domain like any value outside it (the mix at `a < 1` then gives
///   NaN, `∞ − ∞`).
/// - Source: tetrahedral interpolation after Kasson, Nin, Plouffe & Hafner, "Performing
///   color space conversions with three-dimensional linear interpolation", J. Electronic
///   Imaging 4(3), 1995, and FilmLight's Truelight note FL-TL-TN-0057, in the form of
///   ffmpeg's `vf_lut3d.c` and OpenColorIO's `Lut3DOpCPU.cpp` [impl], checked against
///   ffmpeg 5.1's float output; table layout and domain from the Adobe Cube LUT
///   Specification 1.0 [doc]; intensity mix and NaN rules [own].
///
/// Schedules: `.scalar` is the formula per channel, one pixel at a time, with a branch
/// per tetrahedron. `.simd4` works in chunks of 64 pixels and two passes: four pixels
/// per step with one channel per `SIMD4<Float>` for the cells (⌊t⌋ by the 2²³ rounding
/// trick), the tetrahedron (compare-and-select on the fractions, no branch) and the
/// weights, kept in a stack scratch; then per pixel four `SIMD4` loads from the table
/// (padded to four lanes) and the weighted sum in the reference's order. The two agree
/// to the bit (the tests check it; SPEC §8 asks for 1e-5).
///
/// Complexity: O(n) per row of n pixels; 4 (tetrahedral) or 8 (trilinear) table reads
/// per pixel, 3 pairs per pixel in 1D; no allocation. Memory: 16 bytes per entry
/// (a 65³ cube 4.4 MB, 129³ 34 MB, 256³ 268 MB).
public struct ColorCube: PixelKernel, Equatable {
    /// Whether the table is a 3D cube or three 1D curves.
    public enum Dimension: String, Sendable, Hashable, CaseIterable, Codable {
        /// Three curves, one per channel: `size` entries.
        case oneDimensional = "1D"
        /// A cube: `size`³ entries.
        case threeDimensional = "3D"
    }

    /// How a 3D table is interpolated between its grid points (1D tables are linear).
    public enum Interpolation: String, Sendable, Hashable, CaseIterable, Codable {
        /// Four corners of one of the cell's six tetrahedra (the default; Resolve, OCIO).
        case tetrahedral
        /// All eight corners, linear along R, then G, then B.
        case trilinear
    }

    /// The valid sizes: 2…256 for 3D, 2…65536 for 1D (the `.cube` format's ranges).
    public static func sizeRange(_ dimension: Dimension) -> ClosedRange<Int> {
        dimension == .threeDimensional ? 2...256 : 2...65536
    }

    /// Cube or curves.
    public let dimension: Dimension
    /// N: grid points per axis (3D) or entries per curve (1D).
    public let size: Int
    /// The input value of the first grid point on each channel, `lo`; default 0.
    public let domainMin: SIMD3<Float>
    /// The input value of the last grid point on each channel, `hi > lo`; default 1.
    public let domainMax: SIMD3<Float>
    /// The 3D interpolation; default `.tetrahedral`. Ignored by 1D tables.
    public var interpolation: Interpolation
    /// The mix with the input, clamped to [0, 1] when applied; identity 0, default 1.
    public var intensity: Double

    /// `"lut"`.
    public var name: String { "lut" }

    // The entries as (R, G, B, 0): one aligned 16-byte load per corner.
    let table: [SIMD4<Float>]
    // The domain and scale as SIMD4 with alpha lane 0, resolved once.
    let geometry: Geometry
    // The alpha masks of the vector schedule.
    let alpha = AlphaMasks()

    /// A table from its entries.
    ///
    /// - Parameters:
    ///   - dimension: `.threeDimensional` (default) or `.oneDimensional`.
    ///   - size: N, in ``sizeRange(_:)``.
    ///   - entries: N³ (3D, red index fastest) or N (1D) output colours, finite.
    ///   - domainMin, domainMax: the input range per channel, finite with min < max;
    ///     default [0, 1].
    ///   - interpolation: for 3D; default tetrahedral.
    ///   - intensity: default 1.
    /// - Throws: ``ColorCubeError`` for a size out of range, a wrong entry count, a
    ///   non-finite entry or an empty or reversed domain.
    /// - Complexity: O(entries.count): one copy into the padded table.
    public init(dimension: Dimension = .threeDimensional, size: Int, entries: [SIMD3<Float>],
                domainMin: SIMD3<Float> = .zero, domainMax: SIMD3<Float> = .one,
                interpolation: Interpolation = .tetrahedral, intensity: Double = 1) throws(ColorCubeError) {
        try ColorCube.check(dimension: dimension, size: size, count: entries.count, domainMin: domainMin,
                            domainMax: domainMax)
        var table = [SIMD4<Float>]()
        table.reserveCapacity(entries.count)
        for (index, e) in entries.enumerated() {
            guard e.x.isFinite && e.y.isFinite && e.z.isFinite else { throw .nonFiniteEntry(index: index) }
            table.append(SIMD4(e, 0))
        }
        self.init(checked: dimension, size: size, table: table, domainMin: domainMin, domainMax: domainMax,
                  interpolation: interpolation, intensity: intensity)
    }

    /// The unchecked initializer behind the public ones and the `.cube` parser:
    /// `table` holds finite `(R, G, B, 0)` entries, `size` and the domain are valid.
    init(checked dimension: Dimension, size: Int, table: [SIMD4<Float>], domainMin: SIMD3<Float>,
         domainMax: SIMD3<Float>, interpolation: Interpolation = .tetrahedral, intensity: Double = 1) {
        self.dimension = dimension
        self.size = size
        self.domainMin = domainMin
        self.domainMax = domainMax
        self.interpolation = interpolation
        self.intensity = intensity
        self.table = table
        geometry = Geometry(size: size, domainMin: domainMin, domainMax: domainMax)
    }

    /// Checks a size, an entry count and a domain before any table is built.
    static func check(dimension: Dimension, size: Int, count: Int, domainMin: SIMD3<Float>,
                      domainMax: SIMD3<Float>) throws(ColorCubeError) {
        let range = sizeRange(dimension)
        guard range.contains(size) else { throw .sizeOutOfRange(size: size, range: range) }
        let expected = dimension == .threeDimensional ? size * size * size : size
        guard count == expected else { throw .entryCountMismatch(expected: expected, found: count) }
        for c in 0..<3 {
            let lo = domainMin[c], hi = domainMax[c]
            guard lo.isFinite && hi.isFinite && lo < hi else { throw .invalidDomain(channel: c, min: lo, max: hi) }
        }
    }

    /// A table sampled from `transform` at its grid points.
    ///
    /// 3D: entry `(i, j, k)` is `transform(lo + (i, j, k)·(hi − lo)/(N − 1))`, computed in
    /// `Double` and rounded to `Float` once. 1D: entry `i` is `transform((x, x, x))` with
    /// `x = lo + i·(hi − lo)/(N − 1)` per channel — meaningful for a transform that acts
    /// on each channel alone. The last grid point is `hi` exactly.
    ///
    /// A 3D table sampled from an affine map (a ``ColorMatrix``) reproduces it exactly
    /// under tetrahedral and trilinear interpolation, up to `Float` rounding, for inputs
    /// inside the domain.
    /// - Throws: ``ColorCubeError`` for a size out of range, a bad domain, or a
    ///   `transform` value that is NaN or infinite once rounded to `Float`.
    /// - Complexity: N³ (3D) or N (1D) calls of `transform`; 16 bytes per entry.
    public static func sampled(_ dimension: Dimension = .threeDimensional, size: Int,
                               domainMin: SIMD3<Float> = .zero, domainMax: SIMD3<Float> = .one,
                               interpolation: Interpolation = .tetrahedral,
                               from transform: (SIMD3<Double>) -> SIMD3<Double>) throws(ColorCubeError) -> ColorCube {
        let range = sizeRange(dimension)
        guard range.contains(size) else { throw .sizeOutOfRange(size: size, range: range) }
        let count = dimension == .threeDimensional ? size * size * size : size
        try check(dimension: dimension, size: size, count: count, domainMin: domainMin, domainMax: domainMax)
        let lo = SIMD3<Double>(Double(domainMin.x), Double(domainMin.y), Double(domainMin.z))
        let hi = SIMD3<Double>(Double(domainMax.x), Double(domainMax.y), Double(domainMax.z))
        let last = Double(size - 1)
        func grid(_ i: Int, _ c: Int) -> Double {
            i == size - 1 ? hi[c] : lo[c] + Double(i) * (hi[c] - lo[c]) / last
        }
        var table = [SIMD4<Float>]()
        table.reserveCapacity(count)
        for index in 0..<count {
            let (i, j, k) = dimension == .threeDimensional
                ? (index % size, index / size % size, index / (size * size)) : (index, index, index)
            let out = transform(SIMD3(grid(i, 0), grid(j, 1), grid(k, 2)))
            let e = SIMD4<Float>(Float(out.x), Float(out.y), Float(out.z), 0)
            guard e.x.isFinite && e.y.isFinite && e.z.isFinite else { throw .nonFiniteEntry(index: index) }
            table.append(e)
        }
        return ColorCube(checked: dimension, size: size, table: table, domainMin: domainMin, domainMax: domainMax,
                         interpolation: interpolation)
    }

    /// The identity table of `size` on [0, 1]: every grid point maps to itself, so
    /// every lookup returns its input (clamped to [0, 1]) up to `Float` rounding.
    ///
    /// - Throws: ``ColorCubeError/sizeOutOfRange(size:range:)``.
    public static func identity(_ dimension: Dimension = .threeDimensional, size: Int) throws(ColorCubeError) -> ColorCube {
        try sampled(dimension, size: size) { $0 }
    }

    /// The number of entries, N³ or N.
    public var entryCount: Int { table.count }

    /// Entry `index` (0-based; in 3D `i + N·j + N²·k`, red index fastest).
    ///
    /// - Precondition: `0 ≤ index < entryCount` (like an array subscript).
    public subscript(index: Int) -> SIMD3<Float> {
        let e = table[index]
        return SIMD3(e.x, e.y, e.z)
    }

    /// All entries in file order. O(entryCount), a copy.
    public var entries: [SIMD3<Float>] { table.map { SIMD3($0.x, $0.y, $0.z) } }

    /// `clamp(intensity, 0, 1)`, NaN as 0.
    var mixAmount: Float {
        intensity.isNaN ? 0 : Float(min(max(intensity, 0), 1))
    }

    /// Whether the kernel changes nothing (intensity ≤ 0 after clamping).
    public var isIdentity: Bool { mixAmount == 0 }

    /// Applies the table in place to one row of straight-alpha RGBA pixels (A kept);
    /// returns at once when the clamped intensity is 0. The row's position is not used.
    ///
    /// - Complexity: O(row.count); no allocation.
    public func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {
        let a = mixAmount
        guard a > 0, let base = row.baseAddress else { return }
        table.withUnsafeBufferPointer { t in
            let entries = t.baseAddress!
            switch (dimension, interpolation, variant) {
            case (.threeDimensional, .tetrahedral, .scalar):
                ColorCube.tetrahedralScalar(base, count: row.count, entries, geometry, mix: a)
            case (.threeDimensional, .tetrahedral, .simd4):
                ColorCube.tetrahedralVector(base, count: row.count, entries, geometry, mix: a, alpha)
            case (.threeDimensional, .trilinear, .scalar):
                ColorCube.trilinearScalar(base, count: row.count, entries, geometry, mix: a)
            case (.threeDimensional, .trilinear, .simd4):
                ColorCube.trilinearVector(base, count: row.count, entries, geometry, mix: a, alpha)
            case (.oneDimensional, _, .scalar):
                ColorCube.linearScalar(base, count: row.count, entries, geometry, mix: a)
            case (.oneDimensional, _, .simd4):
                ColorCube.linearVector(base, count: row.count, entries, geometry, mix: a, alpha)
            }
        }
    }

    /// Exact equality of dimension, size, domain, interpolation, intensity and every entry.
    public static func == (a: ColorCube, b: ColorCube) -> Bool {
        a.dimension == b.dimension && a.size == b.size && a.domainMin == b.domainMin && a.domainMax == b.domainMax
            && a.interpolation == b.interpolation && a.intensity == b.intensity && a.table == b.table
    }
}

extension ColorCube {
    /// The lookup constants in `Float`, shared by both schedules so they compute the same
    /// cell and fractions: `lo`, `hi`, `scale = (N − 1)/(hi − lo)` (computed in `Double`,
    /// rounded once, at most `Float.greatestFiniteMagnitude`), `N − 1`, `N − 2`, and the
    /// index strides.
    struct Geometry: Sendable {
        /// `lo`, `hi` and `scale` per channel, alpha lane 0.
        let lo, hi, scale: SIMD4<Float>
        /// N − 1 and N − 2.
        let top, below: Float
        /// Strides of one step along G and along B in a 3D table: N and N².
        let strideG, strideB: Int

        init(size: Int, domainMin: SIMD3<Float>, domainMax: SIMD3<Float>) {
            lo = SIMD4(domainMin, 0)
            hi = SIMD4(domainMax, 0)
            var s = SIMD4<Float>.zero
            for c in 0..<3 {
                // Capped to Float's range: a domain narrower than (N − 1)/Float.max would
                // make it infinite, and 0·∞ a NaN coordinate.
                s[c] = Float(min(Double(size - 1) / (Double(domainMax[c]) - Double(domainMin[c])),
                                 Double(Float.greatestFiniteMagnitude)))
            }
            scale = s
            top = Float(size - 1)
            below = Float(size - 2)
            strideG = size
            strideB = size &* size
        }
    }

    // MARK: Scalar references

    /// The cell and fraction of one channel value `v` on channel `c`:
    /// `t = min((clamp(v, lo, hi) − lo)·s, N − 1)`, `i = min(⌊t⌋, N − 2)`, `f = t − i`.
    /// NaN clamps to `lo` (the lookup's result is then discarded). `t ≥ 0` and is never
    /// NaN (`s` is finite); the `min` catches `(hi − lo)·s` rounding above N − 1, or
    /// overflowing.
    @inline(__always)
    static func cell(_ v: Float, _ c: Int, _ g: Geometry) -> (index: Int, fraction: Float) {
        let lo = g.lo[c], hi = g.hi[c]
        let low = v > lo ? v : lo
        let clamped = hi < low ? hi : low
        var t = (clamped - lo) * g.scale[c]
        t = t > g.top ? g.top : t
        var i = t.rounded(.down)
        i = i > g.below ? g.below : i
        return (Int(i), t - i)
    }

    /// The reference 3D tetrahedral lookup: SPEC §11 per channel, a branch per tetrahedron.
    static func tetrahedralScalar(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                                  _ e: UnsafePointer<SIMD4<Float>>, _ g: Geometry, mix a: Float) {
        for x in 0..<count {
            let r = p[x].x, gr = p[x].y, b = p[x].z
            if r.isNaN || gr.isNaN || b.isNaN {
                p[x].x = .nan; p[x].y = .nan; p[x].z = .nan
                continue
            }
            let (ir, fr) = cell(r, 0, g), (ig, fg) = cell(gr, 1, g), (ib, fb) = cell(b, 2, g)
            let n1 = g.strideG, n2 = g.strideB
            let base = ir + ig * n1 + ib * n2
            // Corner cXYZ: X, Y, Z the steps along R, G, B.
            func c(_ dr: Int, _ dg: Int, _ db: Int) -> SIMD4<Float> { e[base + dr + dg * n1 + db * n2] }
            // The corners after c000 and the four weights, tetrahedron by tetrahedron
            // (the branches of ffmpeg's interp_tetrahedral).
            let c1: SIMD4<Float>, c2: SIMD4<Float>, w: (Float, Float, Float, Float)
            if fr > fg {
                if fg > fb {
                    (c1, c2, w) = (c(1, 0, 0), c(1, 1, 0), (1 - fr, fr - fg, fg - fb, fb))
                } else if fr > fb {
                    (c1, c2, w) = (c(1, 0, 0), c(1, 0, 1), (1 - fr, fr - fb, fb - fg, fg))
                } else {
                    (c1, c2, w) = (c(0, 0, 1), c(1, 0, 1), (1 - fb, fb - fr, fr - fg, fg))
                }
            } else {
                if fb > fg {
                    (c1, c2, w) = (c(0, 0, 1), c(0, 1, 1), (1 - fb, fb - fg, fg - fr, fr))
                } else if fb > fr {
                    (c1, c2, w) = (c(0, 1, 0), c(0, 1, 1), (1 - fg, fg - fb, fb - fr, fr))
                } else {
                    (c1, c2, w) = (c(0, 1, 0), c(1, 1, 0), (1 - fg, fg - fr, fr - fb, fb))
                }
            }
            let c0 = c(0, 0, 0), c3 = c(1, 1, 1)
            for ch in 0..<3 {
                let v = p[x][ch]
                let out = w.0 * c0[ch] + w.1 * c1[ch] + w.2 * c2[ch] + w.3 * c3[ch]
                p[x][ch] = a == 1 ? out : v + a * (out - v)
            }
        }
    }

    /// The reference 3D trilinear lookup: lerp along R, then G, then B, per channel.
    static func trilinearScalar(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                                _ e: UnsafePointer<SIMD4<Float>>, _ g: Geometry, mix a: Float) {
        @inline(__always) func lerp(_ u: Float, _ v: Float, _ f: Float) -> Float { u + f * (v - u) }
        for x in 0..<count {
            let r = p[x].x, gr = p[x].y, b = p[x].z
            if r.isNaN || gr.isNaN || b.isNaN {
                p[x].x = .nan; p[x].y = .nan; p[x].z = .nan
                continue
            }
            let (ir, fr) = cell(r, 0, g), (ig, fg) = cell(gr, 1, g), (ib, fb) = cell(b, 2, g)
            let n1 = g.strideG, n2 = g.strideB
            let base = ir + ig * n1 + ib * n2
            for ch in 0..<3 {
                func c(_ dr: Int, _ dg: Int, _ db: Int) -> Float { e[base + dr + dg * n1 + db * n2][ch] }
                let c00 = lerp(c(0, 0, 0), c(1, 0, 0), fr), c10 = lerp(c(0, 1, 0), c(1, 1, 0), fr)
                let c01 = lerp(c(0, 0, 1), c(1, 0, 1), fr), c11 = lerp(c(0, 1, 1), c(1, 1, 1), fr)
                let out = lerp(lerp(c00, c10, fg), lerp(c01, c11, fg), fb)
                let v = p[x][ch]
                p[x][ch] = a == 1 ? out : v + a * (out - v)
            }
        }
    }

    /// The reference 1D lookup: each channel on its own column, linearly.
    static func linearScalar(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                             _ e: UnsafePointer<SIMD4<Float>>, _ g: Geometry, mix a: Float) {
        for x in 0..<count {
            for ch in 0..<3 {
                let v = p[x][ch]
                guard !v.isNaN else { continue }
                let (i, f) = cell(v, ch, g)
                let out = e[i][ch] + f * (e[i + 1][ch] - e[i][ch])
                p[x][ch] = a == 1 ? out : v + a * (out - v)
            }
        }
    }

    // MARK: Vector schedules

    /// The constants of the vector schedules, one channel per vector, broadcast over the
    /// four pixels of a block.
    struct Lanes {
        let loR, loG, loB, hiR, hiG, hiB, scaleR, scaleG, scaleB, top, below: SIMD4<Float>
        /// 1, N and N² in every lane: the index steps along R, G and B.
        let stepR, stepG, stepB: SIMD4<Int32>
        /// N and N² as `Float`, and whether N³ ≤ 2²³ (indices exact in `Float`).
        let sizeG, sizeB: SIMD4<Float>
        let indicesInFloat: Bool
        let mix: Float

        init(_ g: Geometry, mix: Float) {
            loR = SIMD4(repeating: g.lo.x); loG = SIMD4(repeating: g.lo.y); loB = SIMD4(repeating: g.lo.z)
            hiR = SIMD4(repeating: g.hi.x); hiG = SIMD4(repeating: g.hi.y); hiB = SIMD4(repeating: g.hi.z)
            scaleR = SIMD4(repeating: g.scale.x); scaleG = SIMD4(repeating: g.scale.y)
            scaleB = SIMD4(repeating: g.scale.z)
            top = SIMD4(repeating: g.top); below = SIMD4(repeating: g.below)
            // In a 1D table (up to 65536 entries) the G and B steps are unused; N² would
            // not fit an Int32.
            stepR = SIMD4(repeating: 1)
            stepG = SIMD4(repeating: Int32(truncatingIfNeeded: g.strideG))
            stepB = SIMD4(repeating: Int32(truncatingIfNeeded: g.strideB))
            sizeG = SIMD4(repeating: Float(g.strideG))
            sizeB = SIMD4(repeating: Float(g.strideB))
            indicesInFloat = g.strideB <= (1 << 23) / g.strideG
            self.mix = mix
        }
    }

    /// One channel of four pixels: the fractions and the cells (whole numbers in
    /// `Float`), lane by lane the operations of `cell`. ⌊t⌋ is `(t + 2²³) − 2²³` (round
    /// to nearest) less 1 where that rounded up, exact for `0 ≤ t < 2²³`. The "less 1" is
    /// `1.0 & mask` (one `andps`, not a blend).
    @inline(__always)
    static func cells(_ x: SIMD4<Float>, _ lo: SIMD4<Float>, _ hi: SIMD4<Float>, _ scale: SIMD4<Float>,
                      _ k: Lanes) -> (f: SIMD4<Float>, floor: SIMD4<Float>) {
        let magic = SIMD4<Float>(repeating: 8_388_608)
        // In the forms of maxps and minps: `x > lo ? x : lo` (NaN gives lo), `hi < c ? hi : c`.
        var c = x.replacing(with: lo, where: .!(x .> lo))
        c = c.replacing(with: hi, where: hi .< c)
        var t = (c - lo) * scale
        t = t.replacing(with: k.top, where: t .> k.top)
        let nearest = (t + magic) - magic
        let up = unsafeBitCast(nearest .> t, to: SIMD4<Int32>.self)
            & unsafeBitCast(SIMD4<Float>(repeating: 1), to: SIMD4<Int32>.self)
        var floor = nearest - unsafeBitCast(up, to: SIMD4<Float>.self)
        floor = floor.replacing(with: k.below, where: floor .> k.below)
        return (t - floor, floor)
    }

    /// The integers of whole numbers `0 ≤ x < 2²³` in `Float`, from the bits of `x + 2²³`.
    @inline(__always)
    static func integers(_ x: SIMD4<Float>) -> SIMD4<Int32> {
        unsafeBitCast(x + SIMD4(repeating: 8_388_608), to: SIMD4<Int32>.self) &- 0x4B00_0000
    }

    /// The entry indices `r + N·g + N²·b` of four cells given by their whole-number
    /// coordinates: in `Float` where every index is below 2²³ (N ≤ 203: exact, two
    /// multiplies), else in `Int32` (SSE2 has no 32-bit vector multiply; each costs six
    /// instructions).
    /// `inFloat` must be a constant where this is inlined: the optimiser split the
    /// vectors around a run-time test into per-lane branches.
    @inline(__always)
    static func entryIndices(_ r: SIMD4<Float>, _ g: SIMD4<Float>, _ b: SIMD4<Float>, _ k: Lanes,
                             inFloat: Bool) -> SIMD4<Int32> {
        if inFloat { return integers(r + g * k.sizeG + b * k.sizeB) }
        return integers(r) &+ integers(g) &* k.stepG &+ integers(b) &* k.stepB
    }

    /// Runs `block` over `count` pixels four at a time; the last 1–3 pixels go through
    /// a four-pixel buffer on the stack (padded with copies of the last pixel), so they
    /// see the same arithmetic.
    @inline(__always)
    static func forEachBlock(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                             _ block: (UnsafeMutablePointer<SIMD4<Float>>) -> Void) {
        let whole = count & ~3
        var x = 0
        while x < whole {
            block(p + x)
            x &+= 4
        }
        let rest = count &- whole
        guard rest > 0 else { return }
        withUnsafeTemporaryAllocation(of: SIMD4<Float>.self, capacity: 4) { buffer in
            let q = buffer.baseAddress!
            for j in 0..<4 { (q + j).initialize(to: p[whole &+ min(j, rest &- 1)]) }
            block(q)
            for j in 0..<rest { p[whole &+ j] = q[j] }
        }
    }

    /// Four pixels' R, G, B as three vectors, read from `p[x …]`; a group that runs
    /// past `count` repeats the last pixel (whose results are then not stored).
    @inline(__always)
    static func channels(_ p: UnsafeMutablePointer<SIMD4<Float>>, _ x: Int, count: Int)
        -> (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>) {
        let last = count &- 1
        let v0 = p[x], v1 = p[min(x &+ 1, last)], v2 = p[min(x &+ 2, last)], v3 = p[min(x &+ 3, last)]
        return (SIMD4(v0.x, v1.x, v2.x, v3.x), SIMD4(v0.y, v1.y, v2.y, v3.y), SIMD4(v0.z, v1.z, v2.z, v3.z))
    }

    /// Pixels per chunk of the two-pass 3D schedules: 64 (the scratch, 1.8 KB, stays in L1).
    static let chunk = 64

    /// The tetrahedral schedule, in chunks of 64 pixels and two passes.
    ///
    /// 1. Four pixels per step, one channel per `SIMD4<Float>` (structure of arrays):
    ///    the cells, the tetrahedron, the corner indices and the four weights, stored to
    ///    a scratch buffer on the stack as whole vectors. No branch depends on the data.
    ///    The tetrahedron is chosen with masks from `rg = fr > fg`, `gb = fg > fb`,
    ///    `br = fb > fr`: the first step is along B where `br ∧ ¬gb`, else along G where
    ///    `¬rg ∧ gb`, else along R; the last (smallest fraction) along R where
    ///    `¬rg ∧ br`, else along G where `rg ∧ ¬gb`, else along B — the reference's six
    ///    cases, a tie either as the reference breaks it or falling to a neighbour whose
    ///    differing corner has weight 0 (the weights need only the sorted fractions:
    ///    max, median and min by compare-and-select). A NaN pixel gets a NaN first
    ///    weight, so its R, G, B come out NaN.
    /// 2. One pixel at a time: its indices and weights read back as scalars, four
    ///    `SIMD4` corner loads, the weighted sum in the reference's order (so the two
    ///    agree to the bit), the mix, alpha restored.
    ///
    /// Why two passes: branching on the order, as the reference does, is unpredictable
    /// wherever neighbouring pixels fall in different tetrahedra; and in one pass the
    /// optimiser turns vector selects whose lanes are read one by one into per-lane
    /// branches. Through memory, pass 1 stays whole vectors and pass 2 plain loads.
    @inline(never)
    static func tetrahedralVector(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                                  _ e: UnsafePointer<SIMD4<Float>>, _ g: Geometry, mix a: Float,
                                  _ alpha: AlphaMasks) {
        let k = Lanes(g, mix: a)
        let diagonal = k.stepR &+ k.stepG &+ k.stepB
        // Offset differences for the first and last steps: G and B over R, G and R under B.
        let gStep = k.stepG &- k.stepR, bStep = k.stepB &- k.stepR
        let gFromB = k.stepB &- k.stepG, rFromB = k.stepB &- k.stepR
        // c111 is c000 one step along every axis.
        let table = UnsafeRawPointer(e), far = UnsafeRawPointer(e + (1 &+ g.strideG &+ g.strideB))
        let mix = SIMD4<Float>(repeating: a), one = SIMD4<Float>(repeating: 1)
        let nan = SIMD4<Float>(repeating: .nan)
        let keep = alpha.pixel
        // Per group of four pixels: i0, i1, i2 (Int32) then w0, w1, w2, w3 (Float).
        withUnsafeTemporaryAllocation(of: SIMD4<Float>.self, capacity: chunk / 4 * 7) { scratch in
            let s = scratch.baseAddress!
            let indices = UnsafeMutableRawPointer(s).assumingMemoryBound(to: Int32.self)
            let weights = UnsafeMutableRawPointer(s).assumingMemoryBound(to: Float.self)
            var start = 0
            while start < count {
                let n = min(chunk, count &- start)
                let q = p + start
                // 1. Cells, tetrahedra and weights, four pixels per step (a loop per index
                // arithmetic).
                @inline(__always) func prepare(indicesInFloat: Bool) {
                var x = 0, slot = 0
                while x < n {
                    let (r, gr, b) = channels(q, x, count: n)
                    let (fr, ir) = cells(r, k.loR, k.hiR, k.scaleR, k)
                    let (fg, ig) = cells(gr, k.loG, k.hiG, k.scaleG, k)
                    let (fb, ib) = cells(b, k.loB, k.hiB, k.scaleB, k)
                    // The first step (largest fraction) is along B where br ∧ ¬gb, else along
                    // G where ¬rg ∧ gb, else along R; the last (smallest) along R where
                    // ¬rg ∧ br, else along G where rg ∧ ¬gb, else along B. As offsets:
                    // 1 + (N − 1)·[along G] + (N² − 1)·[along B], by and on the masks.
                    let rg = fr .> fg, gb = fg .> fb, br = fb .> fr
                    @inline(__always) func bits(_ m: SIMDMask<SIMD4<Int32>>) -> SIMD4<Int32> {
                        unsafeBitCast(m, to: SIMD4<Int32>.self)
                    }
                    // (Each pair of masks is exclusive.)
                    let firstB = br .& .!gb, firstG = .!rg .& gb
                    let lastR = .!rg .& br, lastG = rg .& .!gb
                    let first = k.stepR &+ (bits(firstG) & gStep) &+ (bits(firstB) & bStep)
                    let last = k.stepB &- (bits(lastG) & gFromB) &- (bits(lastR) & rFromB)
                    let i0 = entryIndices(ir, ig, ib, k, inFloat: indicesInFloat)
                    let i1 = i0 &+ first, i2 = i0 &+ diagonal &- last
                    // The sorted fractions: max, median and min by compare-and-select.
                    let high = fr.replacing(with: fg, where: fg .> fr), low = fr.replacing(with: fg, where: fg .< fr)
                    let fmax = high.replacing(with: fb, where: fb .> high), fmin = low.replacing(with: fb, where: fb .< low)
                    let capped = high.replacing(with: fb, where: fb .< high)
                    let fmid = capped.replacing(with: low, where: low .> capped)
                    let isNaN = (r .!= r) .| (gr .!= gr) .| (b .!= b)
                    let w0 = (one - fmax).replacing(with: nan, where: isNaN)
                    let base = s + slot
                    // Byte offsets (×16, one entry): at most 256³·16 = 2²⁸.
                    base[0] = unsafeBitCast(i0 &<< 4, to: SIMD4<Float>.self)
                    base[1] = unsafeBitCast(i1 &<< 4, to: SIMD4<Float>.self)
                    base[2] = unsafeBitCast(i2 &<< 4, to: SIMD4<Float>.self)
                    base[3] = w0
                    base[4] = fmax - fmid
                    base[5] = fmid - fmin
                    base[6] = fmin
                    x &+= 4
                    slot &+= 7
                }
                }
                if k.indicesInFloat { prepare(indicesInFloat: true) } else { prepare(indicesInFloat: false) }
                // 2. Corners and weighted sums, one pixel at a time (a loop per mix, so
                // the test of `a` is not in the loop).
                @inline(__always) func sums(mixing: Bool) {
                    var x = 0, at = 0  // at: the pixel's lane in its group's 7 × 4 values
                    while x < n {
                        let o0 = Int(indices[at]), o1 = Int(indices[at &+ 4]), o2 = Int(indices[at &+ 8])
                        let v = q[x]
                        var out = SIMD4(repeating: weights[at &+ 12]) * table.load(fromByteOffset: o0, as: SIMD4<Float>.self)
                            + SIMD4(repeating: weights[at &+ 16]) * table.load(fromByteOffset: o1, as: SIMD4<Float>.self)
                            + SIMD4(repeating: weights[at &+ 20]) * table.load(fromByteOffset: o2, as: SIMD4<Float>.self)
                            + SIMD4(repeating: weights[at &+ 24]) * far.load(fromByteOffset: o0, as: SIMD4<Float>.self)
                        if mixing { out = v + mix * (out - v) }
                        q[x] = out.replacing(with: v, where: keep)
                        x &+= 1
                        at &+= x & 3 == 0 ? 25 : 1
                    }
                }
                if a == 1 { sums(mixing: false) } else { sums(mixing: true) }
                start &+= n
            }
        }
    }

    /// The trilinear schedule, in chunks of 64 pixels and two passes as the tetrahedral
    /// one: the cells four pixels per step (index and three fractions to the scratch),
    /// then per pixel eight corner loads and the reference's lerps in its order. A NaN
    /// pixel gets a NaN R fraction, so its R, G, B come out NaN.
    @inline(never)
    static func trilinearVector(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                                _ e: UnsafePointer<SIMD4<Float>>, _ g: Geometry, mix a: Float,
                                _ alpha: AlphaMasks) {
        let k = Lanes(g, mix: a)
        let n1 = g.strideG, n2 = g.strideB
        let mix = SIMD4<Float>(repeating: a), nan = SIMD4<Float>(repeating: .nan)
        let keep = alpha.pixel
        // Per group of four pixels: i0 (Int32) then fr, fg, fb.
        withUnsafeTemporaryAllocation(of: SIMD4<Float>.self, capacity: chunk) { scratch in
            let s = scratch.baseAddress!
            let indices = UnsafeMutableRawPointer(s).assumingMemoryBound(to: Int32.self)
            let fractions = UnsafeMutableRawPointer(s).assumingMemoryBound(to: Float.self)
            var start = 0
            while start < count {
                let n = min(chunk, count &- start)
                let q = p + start
                @inline(__always) func prepare(indicesInFloat: Bool) {
                var x = 0, slot = 0
                while x < n {
                    let (r, gr, b) = channels(q, x, count: n)
                    let (fr, ir) = cells(r, k.loR, k.hiR, k.scaleR, k)
                    let (fg, ig) = cells(gr, k.loG, k.hiG, k.scaleG, k)
                    let (fb, ib) = cells(b, k.loB, k.hiB, k.scaleB, k)
                    let isNaN = (r .!= r) .| (gr .!= gr) .| (b .!= b)
                    let base = s + slot
                    base[0] = unsafeBitCast(entryIndices(ir, ig, ib, k, inFloat: indicesInFloat), to: SIMD4<Float>.self)
                    base[1] = fr.replacing(with: nan, where: isNaN)
                    base[2] = fg
                    base[3] = fb
                    x &+= 4
                    slot &+= 4
                }
                }
                if k.indicesInFloat { prepare(indicesInFloat: true) } else { prepare(indicesInFloat: false) }
                @inline(__always) func lerps(mixing: Bool) {
                    for x in 0..<n {
                        let at = (x &>> 2) &* 16 &+ (x & 3)
                        let c = e + Int(indices[at])
                        let tr = SIMD4(repeating: fractions[at &+ 4]), tg = SIMD4(repeating: fractions[at &+ 8])
                        let tb = SIMD4(repeating: fractions[at &+ 12])
                        let c00 = c[0] + tr * (c[1] - c[0]), c10 = c[n1] + tr * (c[n1 &+ 1] - c[n1])
                        let c01 = c[n2] + tr * (c[n2 &+ 1] - c[n2])
                        let c11 = c[n1 &+ n2] + tr * (c[n1 &+ n2 &+ 1] - c[n1 &+ n2])
                        let c0 = c00 + tg * (c10 - c00), c1 = c01 + tg * (c11 - c01)
                        let v = q[x]
                        var out = c0 + tb * (c1 - c0)
                        if mixing { out = v + mix * (out - v) }
                        q[x] = out.replacing(with: v, where: keep)
                    }
                }
                if a == 1 { lerps(mixing: false) } else { lerps(mixing: true) }
                start &+= n
            }
        }
    }

    /// The 1D schedule: four pixels per step, one channel per vector throughout: the
    /// cells, a gather of the two neighbouring entries per lane, the lerp and the mix;
    /// a NaN channel passes through as the reference leaves it.
    @inline(never)
    static func linearVector(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                             _ e: UnsafePointer<SIMD4<Float>>, _ g: Geometry, mix a: Float,
                             _ alpha: AlphaMasks) {
        let k = Lanes(g, mix: a)
        let mix = SIMD4<Float>(repeating: a)
        let column = UnsafeRawPointer(e).assumingMemoryBound(to: Float.self)
        @inline(__always) func channel(_ x: SIMD4<Float>, _ lo: SIMD4<Float>, _ hi: SIMD4<Float>,
                                       _ scale: SIMD4<Float>, _ c: Int) -> SIMD4<Float> {
            let (f, floor) = cells(x, lo, hi, scale, k)
            let i = integers(floor)
            // Entry n, channel c is Float n·4 + c of the padded table.
            let at = (i &<< 2) &+ Int32(c)
            let low = SIMD4(column[Int(at[0])], column[Int(at[1])], column[Int(at[2])], column[Int(at[3])])
            let high = SIMD4(column[Int(at[0]) &+ 4], column[Int(at[1]) &+ 4], column[Int(at[2]) &+ 4],
                             column[Int(at[3]) &+ 4])
            var out = low + f * (high - low)
            if a != 1 { out = x + mix * (out - x) }
            return out.replacing(with: x, where: x .!= x)
        }
        forEachBlock(p, count: count) { q in
            let v0 = q[0], v1 = q[1], v2 = q[2], v3 = q[3]
            let r = channel(SIMD4(v0.x, v1.x, v2.x, v3.x), k.loR, k.hiR, k.scaleR, 0)
            let gr = channel(SIMD4(v0.y, v1.y, v2.y, v3.y), k.loG, k.hiG, k.scaleG, 1)
            let b = channel(SIMD4(v0.z, v1.z, v2.z, v3.z), k.loB, k.hiB, k.scaleB, 2)
            q[0] = SIMD4(r[0], gr[0], b[0], v0.w)
            q[1] = SIMD4(r[1], gr[1], b[1], v1.w)
            q[2] = SIMD4(r[2], gr[2], b[2], v2.w)
            q[3] = SIMD4(r[3], gr[3], b[3], v3.w)
        }
    }
}
