/// Rec. 709 / sRGB luma (SPEC §1).
///
/// `Y = 0.2126 R + 0.7152 G + 0.0722 B` (SPEC §1), the W3C Filter Effects draft's
/// `luminanceToAlpha` weights; its `saturate` and `hueRotate` matrices print them to
/// three decimals (0.213, 0.715, 0.072). Every matrix here uses these four-decimal
/// weights, with the complements computed as `1 − w` exactly (docs/adjustments.md).
public enum Luma {
    /// `(wR, wG, wB)` in double precision, the source of every matrix.
    public static let weightsDouble = SIMD3<Double>(0.2126, 0.7152, 0.0722)
    /// `(wR, wG, wB, 0)` rounded to `Float`, for the scalar references and the
    /// SIMD4 kernels that compute `Y` per pixel.
    public static let weights = SIMD4<Float>(0.2126, 0.7152, 0.0722, 0)

    /// The luma of one pixel, `wR·R + wG·G + wB·B`, summed left to right in `Float`.
    @inline(__always)
    public static func of(_ r: Float, _ g: Float, _ b: Float) -> Float {
        weights.x * r + weights.y * g + weights.z * b
    }
}

/// An affine colour transform `C' = M·C + t` on `(R, G, B)`; alpha is not part of it.
///
/// Every affine stage of the library — the four adjustments, sepia, the photo-effect
/// looks — is one of these, and consecutive stages compose into one (SPEC §2
/// "fused form"). The matrix and offset are held in `Double`; a kernel rounds them to
/// `Float` once (`ColorMatrixKernel`), so a chain of stages costs one rounding, not one
/// per stage (SPEC §0).
///
/// `rows[i]` is row `i` of `M`: `C'[i] = rows[i] · C + offset[i]`.
public struct ColorMatrix: Sendable, Hashable {
    /// The rows of the 3×3 matrix `M`.
    public var rows: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>)
    /// The offset `t` added after the product.
    public var offset: SIMD3<Double>

    /// The transform `C' = M·C + t` with `M`'s rows given top to bottom.
    public init(_ r0: SIMD3<Double>, _ r1: SIMD3<Double>, _ r2: SIMD3<Double>, offset: SIMD3<Double> = .zero) {
        rows = (r0, r1, r2)
        self.offset = offset
    }

    /// The identity: `M = I`, `t = 0`.
    public static let identity = ColorMatrix(SIMD3(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1))

    /// Whether this is exactly the identity (then a pipeline skips it).
    public var isIdentity: Bool { self == .identity }

    /// Whether the transform maps every grey to a grey: the rows of `M` share one sum and
    /// the three offsets are equal, each to within 10⁻¹² of the magnitudes involved
    /// (rounding in `Double`). The saturation, contrast, brightness and hue matrices and
    /// their products do.
    public var preservesGrey: Bool { greyRowSum != nil }

    /// The common sum `s` of the rows when every row sums to it and the offsets are
    /// equal, `nil` otherwise: then the transform maps every grey `g` to the grey
    /// `s·g + t` (saturation and hue give s = 1, contrast its factor).
    ///
    /// Composing in `Double` leaves the sums and offsets a few ulps apart (a hue rotation
    /// after a contrast), ulps of the coefficients rather than of the sums: a saturation
    /// of 10⁶ has entries near 10⁶ whose row sums are 1 to within about 10⁻¹⁰. So the
    /// sums must agree within 10⁻¹² of the largest row's sum of magnitudes (at least 1),
    /// the offsets within 10⁻¹² of that or of the largest offset. A matrix that the
    /// rule takes for grey-preserving while it is not changes by far less than its own
    /// `Float` rounding.
    var greyRowSum: Double? {
        let sums = SIMD3((rows.0).sum(), (rows.1).sum(), (rows.2).sum())
        func magnitude(_ r: SIMD3<Double>) -> Double { abs(r.x) + abs(r.y) + abs(r.z) }
        let scale = max(1, magnitude(rows.0), magnitude(rows.1), magnitude(rows.2))
        let tolerance = 1e-12 * scale
        let offsetTolerance = 1e-12 * max(scale, abs(offset.x), abs(offset.y), abs(offset.z))
        guard abs(sums.y - sums.x) <= tolerance, abs(sums.z - sums.x) <= tolerance,
              abs(offset.y - offset.x) <= offsetTolerance, abs(offset.z - offset.x) <= offsetTolerance else { return nil }
        return sums.x
    }

    /// Whether each row's sum of magnitudes, offset included, is finite as a `Float`:
    /// then no coefficient rounds to infinity and no row's result on channels in
    /// [−1, 1] overflows.
    var fitsInFloat: Bool {
        func fits(_ r: SIMD3<Double>, _ t: Double) -> Bool {
            Float(abs(r.x) + abs(r.y) + abs(r.z) + abs(t)).isFinite
        }
        return fits(rows.0, offset.x) && fits(rows.1, offset.y) && fits(rows.2, offset.z)
    }

    /// The same transform on `(B, G, R)`: rows and columns 0 and 2 exchanged, and the
    /// offsets with them.
    var exchangingRedAndBlue: ColorMatrix {
        func exchanged(_ row: SIMD3<Double>) -> SIMD3<Double> { SIMD3(row.z, row.y, row.x) }
        return ColorMatrix(exchanged(rows.2), exchanged(rows.1), exchanged(rows.0), offset: exchanged(offset))
    }

    /// The same transform with its red and blue results exchanged: rows 0 and 2 and
    /// their offsets, the columns as they are.
    var exchangingRedAndBlueResults: ColorMatrix {
        ColorMatrix(rows.2, rows.1, rows.0, offset: SIMD3(offset.z, offset.y, offset.x))
    }

    /// Applies the transform to one colour in double precision (the reference the
    /// tests compare kernels against).
    public func applied(to c: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3((rows.0 * c).sum(), (rows.1 * c).sum(), (rows.2 * c).sum()) + offset
    }

    /// The transform that applies `self` first, then `next`:
    /// `next ∘ self`, i.e. `M = M_next·M_self`, `t = M_next·t_self + t_next`.
    ///
    /// - Complexity: O(1), in `Double`.
    public func then(_ next: ColorMatrix) -> ColorMatrix {
        let columns = (SIMD3(rows.0.x, rows.1.x, rows.2.x),
                       SIMD3(rows.0.y, rows.1.y, rows.2.y),
                       SIMD3(rows.0.z, rows.1.z, rows.2.z))
        func row(_ r: SIMD3<Double>) -> SIMD3<Double> {
            SIMD3((r * columns.0).sum(), (r * columns.1).sum(), (r * columns.2).sum())
        }
        return ColorMatrix(row(next.rows.0), row(next.rows.1), row(next.rows.2),
                           offset: next.applied(to: offset))
    }

    /// Exact equality of every coefficient and offset.
    public static func == (a: ColorMatrix, b: ColorMatrix) -> Bool {
        a.rows.0 == b.rows.0 && a.rows.1 == b.rows.1 && a.rows.2 == b.rows.2 && a.offset == b.offset
    }

    /// Hashes every coefficient and offset.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rows.0); hasher.combine(rows.1); hasher.combine(rows.2); hasher.combine(offset)
    }
}

extension ColorMatrix {
    /// `L`: the 3×3 matrix whose every row is the luma weights; `L·C = (Y, Y, Y)`.
    static let luma = ColorMatrix(Luma.weightsDouble, Luma.weightsDouble, Luma.weightsDouble)

    /// `a·A + b·B` for 3×3 parts (offsets ignored); used to build the W3C matrices.
    static func blend(_ a: Double, _ x: ColorMatrix, _ b: Double, _ y: ColorMatrix) -> ColorMatrix {
        ColorMatrix(a * x.rows.0 + b * y.rows.0, a * x.rows.1 + b * y.rows.1, a * x.rows.2 + b * y.rows.2)
    }

    /// Per-channel gain `C' = (r·R, g·G, b·B)`; identity `(1, 1, 1)`. Used by the
    /// photo-effect looks (SPEC §5, own).
    public static func gain(_ r: Double, _ g: Double, _ b: Double) -> ColorMatrix {
        ColorMatrix(SIMD3(r, 0, 0), SIMD3(0, g, 0), SIMD3(0, 0, b))
    }

    /// Lift `C' = l + k·C` on every channel; identity `(0, 1)`. Used by the
    /// photo-effect looks (SPEC §5, own).
    public static func lift(_ l: Double, _ k: Double) -> ColorMatrix {
        ColorMatrix(SIMD3(k, 0, 0), SIMD3(0, k, 0), SIMD3(0, 0, k), offset: SIMD3(repeating: l))
    }
}

/// A `ColorMatrix` rounded to `Float` once, as a row kernel: the fused form of any
/// chain of affine stages.
///
/// Scalar reference: each channel from itself first, then from the next and the
/// previous channel round the wheel R → G → B → R, then the offset, summed left to
/// right:
///
///     R' = m00·R + m01·G + m02·B + t0
///     G' = m11·G + m12·B + m10·R + t1
///     B' = m22·B + m20·R + m21·G + t2
///
/// SIMD4 schedule: the three coefficients of each place as `SIMD4<Float>` (the
/// diagonal `(m00, m11, m22)`, `(m01, m12, m20)` and `(m02, m10, m21)`), `C' =
/// diagonal·C + onNext·(G, B, R) + onPrevious·(B, R, G) + t`: the pixel itself and two
/// rotations of it, two shuffles where broadcasting R, G and B takes three, and the
/// same products and sums in the same order per channel, so the two agree to the bit
/// (a NaN's payload aside: where two NaNs meet, the compiler may add the operands in
/// either order, and any NaN counts as NaN, SPEC §8);
/// where the build targets FMA the schedule fuses each product with its sum
/// (`matrixTerms`), within SPEC §8 of the reference. Where the build targets AVX2 the
/// schedule runs two pixels per `SIMD8<Float>` (the coefficients in both halves),
/// otherwise one pixel per `SIMD4<Float>`, lane for lane the same arithmetic either
/// way. Alpha is restored from the input by a lane mask (bit-exact, even beside NaN).
///
/// A zero offset is held as −0 in its lane, which no addition can tell from none
/// (`x + (−0)` is `x`, for `x = −0` too; only a signalling NaN, which no arithmetic
/// here leaves signalling, would come out quieted), so a schedule that does not fuse
/// leaves out adding an offset that is zero in every lane (sepia, a saturation or a
/// hue alone): one SSE2 instruction fewer per pixel, the same bits.
///
/// **Greys stay grey, exactly** (SPEC §8). When the matrix maps greys to greys
/// (rows with one common sum `s`, equal offsets), the reference and the schedules use
/// the same transform written with each channel relative to itself, through the three
/// steps around the colour wheel `G − R`, `B − G`, `R − B`:
///
///     R' = m01·(G − R) − m02·(R − B) + (s·R + t)
///     G' = m12·(B − G) − m10·(G − R) + (s·G + t)
///     B' = m20·(R − B) − m21·(B − G) + (s·B + t)
///
/// On a grey pixel the steps are 0, so every channel is `s·G + t` to the bit (fused or
/// not), where the plain sum rounds each row's three products differently (saturation
/// 100 turned 16-bit grey 49869 into (49869, 49869, 49870)). It is the same real number
/// from as many products, with rounding errors of the same order as the plain form's
/// (every sample of all 2²⁴ 8-bit RGB triples came out correctly rounded under SPEC §8
/// for the presets, looks, saturations and hues checked). On infinite inputs it gives
/// NaN more often than the plain sum (`∞ − ∞` in a step); SPEC §8 bounds inputs in
/// [−1, 2] only. The schedules take the three steps from one shuffle and one
/// subtraction, `(G, B, R) − (R, G, B)`, and their second operands from one more shuffle.
///
/// Complexity: 9 multiplies and 9 additions per pixel (9 multiplies and 12 additions or
/// subtractions in the grey-preserving form, 3 of them the steps); no allocation.
public struct ColorMatrixKernel: AffineStage {
    /// The transform in double precision, as built (a grey-preserving one with its
    /// three offsets made one).
    public let matrix: ColorMatrix
    /// A short name for reports, e.g. "adjustments".
    public let name: String
    /// The `Float` constants that the reference and the schedules read.
    let schedule: MatrixSchedule

    /// Rounds `matrix` to `Float` once.
    public init(_ matrix: ColorMatrix, name: String = "matrix") {
        // A transform that maps greys to greys gets one offset for all three rows (their
        // mean; they differ by a few `Double` ulps at most), so that no rounding can
        // tell the rows apart on a grey.
        var matrix = matrix
        let t = matrix.offset
        if matrix.greyRowSum != nil, !(t.x == t.y && t.y == t.z) {
            matrix.offset = SIMD3(repeating: (t.x + t.y + t.z) / 3)
        }
        self.matrix = matrix
        self.name = name
        schedule = MatrixSchedule(matrix)
    }

    /// The matrix's first column in `Float`, alpha lane 0.
    var column0: SIMD4<Float> { schedule.column0 }
    /// The matrix's second column in `Float`, alpha lane 0.
    var column1: SIMD4<Float> { schedule.column1 }
    /// The matrix's third column in `Float`, alpha lane 0.
    var column2: SIMD4<Float> { schedule.column2 }
    /// The offset in `Float`, alpha lane 0, a zero lane held as −0.
    var translation: SIMD4<Float> { schedule.translation }
    /// Whether the reference and the schedules use the grey-preserving form (see the
    /// type's comment).
    var relativeForm: Bool { schedule.relativeForm }
    /// The rows' common sum `s` in the grey-preserving form.
    var rowSum: Float { schedule.rowSum }

    /// Applies `C' = M·C + t` in place to `row` (RGBA `Float` pixels, alpha untouched);
    /// `location` is unused. O(row.count), no allocation.
    public func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {
        switch variant {
        case .scalar: applyScalar(row)
        case .simd4: applySIMD4(row)
        }
    }

    /// The reference: one channel at a time, in plain `Float`.
    func applyScalar(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>) {
        let (m00, m10, m20) = (column0.x, column0.y, column0.z)
        let (m01, m11, m21) = (column1.x, column1.y, column1.z)
        let (m02, m12, m22) = (column2.x, column2.y, column2.z)
        let (t0, t1, t2) = (translation.x, translation.y, translation.z)
        if relativeForm {
            let s = rowSum
            for i in row.indices {
                let r = row[i].x, g = row[i].y, b = row[i].z
                let gr = g - r, bg = b - g, rb = r - b
                row[i].x = m01 * gr - m02 * rb + (s * r + t0)
                row[i].y = m12 * bg - m10 * gr + (s * g + t1)
                row[i].z = m20 * rb - m21 * bg + (s * b + t2)
            }
            return
        }
        for i in row.indices {
            let r = row[i].x, g = row[i].y, b = row[i].z
            row[i].x = m00 * r + m01 * g + m02 * b + t0
            row[i].y = m11 * g + m12 * b + m10 * r + t1
            row[i].z = m22 * b + m20 * r + m21 * g + t2
        }
    }

    /// Whether this build's SIMD4 schedules fuse their multiply-adds (`matrixTerms`):
    /// where it targets FMA.
    static var fusesMultiplyAdd: Bool {
        #if canImport(TargetFeatures.FMA)
        true
        #else
        false
        #endif
    }

    /// The SIMD4 schedule (`MatrixSchedule.applySIMD4`).
    func applySIMD4(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>) {
        schedule.applySIMD4(row)
    }
}

/// A `ColorMatrixKernel`'s matrix rounded to `Float` once, in the forms its scalar
/// reference and SIMD4 schedules read, and the schedules themselves.
///
/// Plain numbers only (no name, no `Double` matrix): an edit plan keeps its matrices
/// in this form in its own memory, and its row path calls `applySIMD4(_:to:)` on them
/// where they lie (see `PreparedEditPlan`'s `floatSteps`).
struct MatrixSchedule: Sendable {
    // Columns of the Float matrix, alpha lane 0. A zero offset is held as −0 in its
    // lane: adding −0 changes no number (−0 + −0 is −0, where +0 would make it +0), so
    // a schedule may leave out the addition of an offset that is zero in every lane.
    let column0, column1, column2, translation: SIMD4<Float>
    /// Whether some lane of the offset is not zero (else the schedules skip adding it).
    let hasOffset: Bool
    // The plain form's coefficients in lane order, each row read from its own channel
    // round the wheel R → G → B → R: (m₀₀, m₁₁, m₂₂) on (R, G, B) itself, (m₀₁, m₁₂, m₂₀)
    // on the next channels (G, B, R), (m₀₂, m₁₀, m₂₁) on the previous ones (B, R, G).
    let diagonal, onNext, onPrevious: SIMD4<Float>
    /// Whether the reference and the schedules use the grey-preserving form, each
    /// channel relative to itself (see `ColorMatrixKernel`).
    let relativeForm: Bool
    /// The rows' common sum `s` in the grey-preserving form (1 for saturation and hue),
    /// the factor on each channel itself.
    let rowSum: Float
    // The grey-preserving form's coefficients in lane order: (m₀₁, m₁₂, m₂₀) on the steps
    // (G − R, B − G, R − B), and (−m₀₂, −m₁₀, −m₂₁) on the same steps shuffled,
    // (R − B, G − R, B − G). Negated here, so that the schedules add where the
    // reference subtracts, which gives the same number.
    let towardNext, fromPrevious: SIMD4<Float>
    // `rowSum` in every lane, read from memory: a splat the optimiser can see becomes
    // a scalar multiply and a shuffle, two instructions more per pixel in SSE2.
    let rowSums: SIMD4<Float>
    // The alpha masks of the two-pixel schedule and its one-pixel head and tail.
    let alpha = AlphaMasks()

    /// `matrix` rounded to `Float`, each coefficient once.
    init(_ matrix: ColorMatrix) {
        let r = matrix.rows
        column0 = SIMD4(Float(r.0.x), Float(r.1.x), Float(r.2.x), 0)
        column1 = SIMD4(Float(r.0.y), Float(r.1.y), Float(r.2.y), 0)
        column2 = SIMD4(Float(r.0.z), Float(r.1.z), Float(r.2.z), 0)
        let offset = SIMD4(Float(matrix.offset.x), Float(matrix.offset.y), Float(matrix.offset.z), 0)
        translation = Self.heldOffset(offset)
        hasOffset = offset.x != 0 || offset.y != 0 || offset.z != 0
        diagonal = SIMD4(column0.x, column1.y, column2.z, 0)
        onNext = SIMD4(column1.x, column2.y, column0.z, 0)
        onPrevious = SIMD4(column2.x, column0.y, column1.z, 0)
        // A diagonal grey-preserving matrix is a gain and an offset on each channel (its
        // off-diagonal products are ±0): the plain sum is already exact on greys.
        let isDiagonal = r.0.y == 0 && r.0.z == 0 && r.1.x == 0 && r.1.z == 0 && r.2.x == 0 && r.2.y == 0
        let rowSum = matrix.greyRowSum
        relativeForm = rowSum != nil && !isDiagonal
        self.rowSum = Float(rowSum ?? 1)
        rowSums = SIMD4(repeating: self.rowSum)
        towardNext = SIMD4(column1.x, column2.y, column0.z, 0)
        fromPrevious = SIMD4(-column2.x, -column0.y, -column1.z, 0)
    }

    /// `offset` with each zero lane as −0, which no addition can tell from none (see
    /// `translation`): how every schedule holds an offset.
    static func heldOffset(_ offset: SIMD4<Float>) -> SIMD4<Float> {
        offset.replacing(with: -0.0, where: offset .== 0)
    }

    /// The SIMD4 schedule. Where the build targets AVX2, two pixels per `SIMD8<Float>`
    /// (one 256-bit register, `applyGreyPreservingMatrixSIMD4` / `applyMatrixSIMD4`);
    /// otherwise (the baseline x86-64 build, arm64: 128-bit vectors) one pixel per
    /// `SIMD4<Float>` (`applyGreyPreservingMatrixPixels` / `applyMatrixPixels`), whose
    /// shuffles take fewer SSE2 instructions than the two-pixel form split in halves,
    /// and which keeps alpha by memory instead of a blend (`forEachPixelInPlace`).
    /// Both give the reference's numbers to the bit, or where the build targets FMA the
    /// same fused numbers (`matrixTerms`, `greyPreservingTerms`), within SPEC §8 of the
    /// reference.
    func applySIMD4(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>) {
        withUnsafePointer(to: self) { Self.applySIMD4($0, to: row) }
    }

    /// `applySIMD4` with the constants read where they lie. A method called on a
    /// schedule kept in memory receives a copy of it, written to the stack just before
    /// the loop's first reads of it, which must then wait for the write (see
    /// `PreparedEditPlan`'s `floatSteps`); the plan's row path calls this instead.
    static func applySIMD4(_ schedule: UnsafePointer<MatrixSchedule>, to row: UnsafeMutableBufferPointer<SIMD4<Float>>) {
        guard let p = row.baseAddress else { return }
        #if canImport(TargetFeatures.AVX2)
        applyPairs(schedule, p, count: row.count)
        #else
        applyPixels(schedule, p, count: row.count)
        #endif
    }

    /// The two-pixel schedule on `count` pixels in place; an odd last pixel alone.
    @inline(__always)
    static func applyPairs(_ k: UnsafePointer<MatrixSchedule>, _ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int) {
        if k.pointee.relativeForm {
            applyGreyPreservingMatrixSIMD4(p, count: count, k.pointee.towardNext, k.pointee.fromPrevious,
                                           k.pointee.translation, k.pointee.rowSums, k.pointee.alpha)
        } else {
            applyMatrixSIMD4(p, count: count, k.pointee.diagonal, k.pointee.onNext, k.pointee.onPrevious,
                             k.pointee.translation, k.pointee.alpha)
        }
    }

    /// The one-pixel schedule on `count` pixels in place. Where the build does not
    /// fuse, an offset of zero in every lane is not added (one instruction fewer per
    /// pixel: sepia, a saturation or a hue alone); fused builds keep it, as a fused
    /// first product with −0 is the product itself and saves no operation.
    @inline(__always)
    static func applyPixels(_ k: UnsafePointer<MatrixSchedule>, _ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int) {
        let t = k.pointee.hasOffset || ColorMatrixKernel.fusesMultiplyAdd ? k.pointee.translation : nil
        if k.pointee.relativeForm {
            applyGreyPreservingMatrixPixels(p, count: count, k.pointee.towardNext, k.pointee.fromPrevious, t,
                                            k.pointee.rowSums)
        } else {
            applyMatrixPixels(p, count: count, k.pointee.diagonal, k.pointee.onNext, k.pointee.onPrevious, t)
        }
    }
}

/// The alpha-lane masks of the two-pixel schedules (where the build targets AVX2) and
/// of their one-pixel heads and tails: lanes 3 and 7 of a `SIMD8` (two pixels) and
/// lane 3 of a `SIMD4` (one pixel). The one-pixel loops of builds without AVX2 keep
/// alpha by memory instead (`replaceColour(ofPixelAt:_:)`).
///
/// Every loop that blends receives them as a value (stored in the kernel, or passed to a
/// non-inlined loop function), never as literals in the loop, on purpose.
/// With a constant mask the optimiser knows lanes 3 and 7 of the sum are discarded
/// and splits the loop into scalar and 128-bit pieces joined by shuffles (about 25
/// instructions per pixel in a native scratch build); a mask loaded from the kernel
/// stays one `vblendvps` per two pixels. A literal one-pixel mask was also not folded
/// in the odd-pixel tail: it became an array instantiation and a call.
struct AlphaMasks: Sendable {
    /// Lanes 3 and 7: the alphas of two pixels in one `SIMD8<Float>`.
    let pair: SIMDMask<SIMD8<Int32>>
    /// Lane 3: the alpha of one pixel.
    let pixel: SIMDMask<SIMD4<Int32>>
    /// Lanes 0–2: the colour channels of one pixel.
    var colour: SIMDMask<SIMD4<Int32>> { .!pixel }

    init() {
        var pair = SIMDMask<SIMD8<Int32>>(repeating: false)
        pair[3] = true
        pair[7] = true
        self.pair = pair
        var pixel = SIMDMask<SIMD4<Int32>>(repeating: false)
        pixel[3] = true
        self.pixel = pixel
    }
}

/// `c0·r + c1·g + c2·b + t` lane by lane as this build's schedules compute it: where the
/// build targets FMA, three fused multiply-adds `((t + c0·r) + c1·g) + c2·b`, each
/// rounded once (three operations instead of six: the `Float` matrix at 12 MP ran
/// 1.11–1.17× faster on a Xeon); elsewhere products and sums left to right, the
/// reference's order. Both are within SPEC §8 of the exact value; every schedule of
/// `ColorMatrixKernel` in one build computes the same bits. (FMA is asked of x86-64
/// only: `TargetFeatures.FMA` requires Clang's `fma` feature.)
@inline(__always)
func matrixTerms(_ c0: SIMD8<Float>, _ r: SIMD8<Float>, _ c1: SIMD8<Float>, _ g: SIMD8<Float>,
                 _ c2: SIMD8<Float>, _ b: SIMD8<Float>, _ t: SIMD8<Float>) -> SIMD8<Float> {
    #if canImport(TargetFeatures.FMA)
    t.addingProduct(c0, r).addingProduct(c1, g).addingProduct(c2, b)
    #else
    c0 * r + c1 * g + c2 * b + t
    #endif
}

/// `matrixTerms` on one pixel's lanes.
@inline(__always)
func matrixTerms(_ c0: SIMD4<Float>, _ r: SIMD4<Float>, _ c1: SIMD4<Float>, _ g: SIMD4<Float>,
                 _ c2: SIMD4<Float>, _ b: SIMD4<Float>, _ t: SIMD4<Float>) -> SIMD4<Float> {
    #if canImport(TargetFeatures.FMA)
    t.addingProduct(c0, r).addingProduct(c1, g).addingProduct(c2, b)
    #else
    c0 * r + c1 * g + c2 * b + t
    #endif
}

/// `matrixTerms` with an offset of −0 in every lane, which changes no number, where the
/// build does not fuse: the last addition left out. (Fused builds keep the offset:
/// `MatrixSchedule.applyPixels`.)
@inline(__always)
func matrixTerms(_ c0: SIMD4<Float>, _ r: SIMD4<Float>, _ c1: SIMD4<Float>, _ g: SIMD4<Float>,
                 _ c2: SIMD4<Float>, _ b: SIMD4<Float>) -> SIMD4<Float> {
    c0 * r + c1 * g + c2 * b
}

/// The plain form on one pixel `v` (alpha lane unspecified), each channel read first
/// from itself, then from the next and the previous channel round the wheel:
/// `diagonal·v + onNext·(G, B, R) + onPrevious·(B, R, G) + t` (`matrixTerms`), two
/// shuffles of `v`, lane for lane the reference's arithmetic.
@inline(__always)
func matrixPixel(_ v: SIMD4<Float>, _ diagonal: SIMD4<Float>, _ onNext: SIMD4<Float>, _ onPrevious: SIMD4<Float>,
                 _ t: SIMD4<Float>) -> SIMD4<Float> {
    matrixTerms(diagonal, v, onNext, SIMD4(v.y, v.z, v.x, v.w), onPrevious, SIMD4(v.z, v.x, v.y, v.w), t)
}

/// `matrixPixel` with an offset of −0 in every lane (see `matrixTerms`).
@inline(__always)
func matrixPixel(_ v: SIMD4<Float>, _ diagonal: SIMD4<Float>, _ onNext: SIMD4<Float>, _ onPrevious: SIMD4<Float>)
    -> SIMD4<Float> {
    matrixTerms(diagonal, v, onNext, SIMD4(v.y, v.z, v.x, v.w), onPrevious, SIMD4(v.z, v.x, v.y, v.w))
}

/// The channels of two pixels (one per half) rotated round the wheel, `(G, B, R)` and
/// `(B, R, G)` in each half, one in-lane shuffle each (alpha lanes kept in place).
@inline(__always)
func rotatedChannels(_ v: SIMD8<Float>) -> (next: SIMD8<Float>, previous: SIMD8<Float>) {
    (SIMD8(v[1], v[2], v[0], v[3], v[5], v[6], v[4], v[7]), SIMD8(v[2], v[0], v[1], v[3], v[6], v[4], v[5], v[7]))
}

/// The grey-preserving form `a·d + b·e + (s·v + t)` as this build's schedules compute
/// it (`d`, `e`: the steps between channels and the same shuffled; `v`: the channels
/// themselves): fused `((t + s·v) + a·d) + b·e` where the build targets FMA, the
/// reference's order elsewhere (see `matrixTerms`).
@inline(__always)
func greyPreservingTerms(_ a: SIMD8<Float>, _ d: SIMD8<Float>, _ b: SIMD8<Float>, _ e: SIMD8<Float>,
                         _ s: SIMD8<Float>, _ v: SIMD8<Float>, _ t: SIMD8<Float>) -> SIMD8<Float> {
    #if canImport(TargetFeatures.FMA)
    t.addingProduct(s, v).addingProduct(a, d).addingProduct(b, e)
    #else
    a * d + b * e + (s * v + t)
    #endif
}

/// `greyPreservingTerms` on one pixel's lanes.
@inline(__always)
func greyPreservingTerms(_ a: SIMD4<Float>, _ d: SIMD4<Float>, _ b: SIMD4<Float>, _ e: SIMD4<Float>,
                         _ s: SIMD4<Float>, _ v: SIMD4<Float>, _ t: SIMD4<Float>) -> SIMD4<Float> {
    #if canImport(TargetFeatures.FMA)
    t.addingProduct(s, v).addingProduct(a, d).addingProduct(b, e)
    #else
    a * d + b * e + (s * v + t)
    #endif
}

/// `greyPreservingTerms` with an offset of −0 in every lane, which changes no number,
/// where the build does not fuse: `s·v` not followed by an addition (see
/// `matrixTerms`).
@inline(__always)
func greyPreservingTerms(_ a: SIMD4<Float>, _ d: SIMD4<Float>, _ b: SIMD4<Float>, _ e: SIMD4<Float>,
                         _ s: SIMD4<Float>, _ v: SIMD4<Float>) -> SIMD4<Float> {
    a * d + b * e + s * v
}

/// The grey-preserving form on one pixel `v` (alpha lane unspecified): the steps
/// `d = (G − R, B − G, R − B)`, one shuffle and one subtraction, and `e = (R − B, G − R,
/// B − G)`, one shuffle of `d`, then `towardNext·d + fromPrevious·e + (s·v + t)`
/// (`greyPreservingTerms`), lane for lane the reference's arithmetic (see
/// `MatrixSchedule.towardNext`).
@inline(__always)
func greyPreservingPixel(_ v: SIMD4<Float>, _ towardNext: SIMD4<Float>, _ fromPrevious: SIMD4<Float>,
                         _ s: SIMD4<Float>, _ t: SIMD4<Float>) -> SIMD4<Float> {
    let d = SIMD4(v.y, v.z, v.x, v.w) - v
    let e = SIMD4(d.z, d.x, d.y, d.w)
    return greyPreservingTerms(towardNext, d, fromPrevious, e, s, v, t)
}

/// `greyPreservingPixel` with an offset of −0 in every lane (see `matrixTerms`).
@inline(__always)
func greyPreservingPixel(_ v: SIMD4<Float>, _ towardNext: SIMD4<Float>, _ fromPrevious: SIMD4<Float>,
                         _ s: SIMD4<Float>) -> SIMD4<Float> {
    let d = SIMD4(v.y, v.z, v.x, v.w) - v
    let e = SIMD4(d.z, d.x, d.y, d.w)
    return greyPreservingTerms(towardNext, d, fromPrevious, e, s, v)
}

/// The grey-preserving form's operands on two pixels (one per half): the steps
/// `d = (G − R, B − G, R − B)` of each, one in-lane shuffle and one subtraction, and
/// `e = (R − B, G − R, B − G)`, one more shuffle (alpha lanes unspecified).
@inline(__always)
func greyPreservingSteps(_ v: SIMD8<Float>) -> (d: SIMD8<Float>, e: SIMD8<Float>) {
    let d = rotatedChannels(v).next - v
    return (d, SIMD8(d[2], d[0], d[1], d[3], d[6], d[4], d[5], d[7]))
}

/// The plain form (`matrixPixel`) on `count` pixels in place, alpha kept.
///
/// Two pixels per `SIMD8<Float>`: the channels rotated within each half (one
/// `vshufps` each, `rotatedChannels`), and each lane computes `diagonal·C + onNext·C⁺ + onPrevious·C⁻
/// + t` as `matrixTerms` does (left to right, or fused where the build targets FMA),
/// exactly as the one-pixel formula does, so the result is the same to the bit. An
/// odd last pixel takes the one-pixel formula, and so does a first pixel that would
/// leave the pairs off a 32-byte boundary (`pixelsBeforePairBoundary`). Two pairs
/// make a block; a long span's blocks go through `MemoryStreams`, prefetched ahead
/// unless the processor's own prefetcher keeps ahead (Zen 4).
@inline(__always)
func applyMatrixSIMD4(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                      _ diagonal: SIMD4<Float>, _ onNext: SIMD4<Float>, _ onPrevious: SIMD4<Float>, _ t: SIMD4<Float>,
                      _ alpha: AlphaMasks) {
    let raw = UnsafeMutableRawPointer(p)
    // The coefficients in both halves; the baseline build keeps one register for each.
    let d0 = SIMD8(lowHalf: diagonal, highHalf: diagonal), d1 = SIMD8(lowHalf: onNext, highHalf: onNext)
    let d2 = SIMD8(lowHalf: onPrevious, highHalf: onPrevious), dt = SIMD8(lowHalf: t, highHalf: t)
    let keep = alpha.pair
    @inline(__always) func pixel(_ q: UnsafeMutablePointer<SIMD4<Float>>) {
        let v = q.pointee
        q.pointee = matrixPixel(v, diagonal, onNext, onPrevious, t).replacing(with: v, where: alpha.pixel)
    }
    let head = pixelsBeforePairBoundary(p, count: count)
    if head != 0 { pixel(p) }
    @inline(__always) func pair(_ x: Int) {
        let offset = x &* 16
        let v = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
        let (next, previous) = rotatedChannels(v)
        let out = matrixTerms(d0, v, d1, next, d2, previous, dt)
        raw.storeBytes(of: out.replacing(with: v, where: keep), toByteOffset: offset, as: SIMD8<Float>.self)
    }
    @inline(__always) func last(_ x: Int) { pixel(p + x) }
    MemoryStreams.forEachPair(from: head, to: count, pairBytes: 32, prefetchingUnlessAhead: raw, pair, last: last)
}


/// The grey-preserving form on `count` pixels in place, alpha kept, with the same
/// two-pixel layout as `applyMatrixSIMD4` and lane for lane `greyPreservingPixel` (the
/// reference's arithmetic, or fused where the build targets FMA): each half's steps
/// come from one in-lane shuffle and one subtraction, their second operands from one
/// more shuffle.
@inline(__always)
func applyGreyPreservingMatrixSIMD4(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                                    _ towardNext: SIMD4<Float>, _ fromPrevious: SIMD4<Float>, _ t: SIMD4<Float>,
                                    _ s: SIMD4<Float>, _ alpha: AlphaMasks) {
    let raw = UnsafeMutableRawPointer(p)
    let a = SIMD8(lowHalf: towardNext, highHalf: towardNext), b = SIMD8(lowHalf: fromPrevious, highHalf: fromPrevious)
    let dt = SIMD8(lowHalf: t, highHalf: t), ds = SIMD8(lowHalf: s, highHalf: s)
    let keep = alpha.pair
    @inline(__always) func pixel(_ q: UnsafeMutablePointer<SIMD4<Float>>) {
        let v = q.pointee
        q.pointee = greyPreservingPixel(v, towardNext, fromPrevious, s, t).replacing(with: v, where: alpha.pixel)
    }
    let head = pixelsBeforePairBoundary(p, count: count)
    if head != 0 { pixel(p) }
    @inline(__always) func pair(_ x: Int) {
        let offset = x &* 16
        let v = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
        let (d, e) = greyPreservingSteps(v)
        let out = greyPreservingTerms(a, d, b, e, ds, v, dt)
        raw.storeBytes(of: out.replacing(with: v, where: keep), toByteOffset: offset, as: SIMD8<Float>.self)
    }
    @inline(__always) func last(_ x: Int) { pixel(p + x) }
    MemoryStreams.forEachPair(from: head, to: count, pairBytes: 32, prefetchingUnlessAhead: raw, pair, last: last)
}

/// The plain form on `count` pixels in place, alpha kept, one pixel per `SIMD4<Float>`
/// (`matrixPixel`): the schedule for 128-bit vectors. Eight SSE2 instructions per pixel
/// on the vector ports (two `shufps`, three `mulps`, three `addps`), seven where `t` is
/// `nil`, an offset of −0 in every lane, not added (a loop of its own); alpha goes back
/// by memory (`forEachPixelInPlace`).
@inline(__always)
func applyMatrixPixels(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                       _ diagonal: SIMD4<Float>, _ onNext: SIMD4<Float>, _ onPrevious: SIMD4<Float>, _ t: SIMD4<Float>?) {
    guard let t else {
        return forEachPixelInPlace(p, count: count) { v in
            matrixPixel(v, diagonal, onNext, onPrevious)
        }
    }
    forEachPixelInPlace(p, count: count) { v in
        matrixPixel(v, diagonal, onNext, onPrevious, t)
    }
}

/// The grey-preserving form on `count` pixels in place, alpha kept, one pixel per
/// `SIMD4<Float>` (`greyPreservingPixel`): nine SSE2 instructions per pixel on the
/// vector ports (two `shufps`, one subtraction, three multiplies, three additions; 16.5
/// in all with the loads, stores, two register copies and a quarter of the loop's six
/// and its prefetch, four pixels a step), eight where `t` is `nil`, an offset of −0 in every
/// lane, not added (a loop of its own); alpha goes back by memory
/// (`forEachPixelInPlace`).
@inline(__always)
func applyGreyPreservingMatrixPixels(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                                     _ towardNext: SIMD4<Float>, _ fromPrevious: SIMD4<Float>, _ t: SIMD4<Float>?,
                                     _ s: SIMD4<Float>) {
    guard let t else {
        return forEachPixelInPlace(p, count: count) { v in
            greyPreservingPixel(v, towardNext, fromPrevious, s)
        }
    }
    forEachPixelInPlace(p, count: count) { v in
        greyPreservingPixel(v, towardNext, fromPrevious, s, t)
    }
}
