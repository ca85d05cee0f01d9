// Tone curve (SPEC §11): a master curve and optional per-channel curves through a few
// control points, interpolated by monotone cubic Hermite splines (Fritsch–Carlson), so
// the curve never overshoots its points. Per sample, so for integer sources the whole
// kernel folds into one lookup table per channel (`makeLookupTable(maxval:)`).

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
import _Builtin_intrinsics.intel
#endif

/// A tone curve (CIToneCurve-like, generalised; SPEC §11): a master curve applied to
/// R, G and B, then an optional curve per channel, each through 2…16 control points.
///
/// On each channel `C` of R, G, B (alpha unchanged, never clamped):
/// ```
/// C' = channel_C(master(C))          a missing curve is the identity
/// ```
/// Each curve is the monotone cubic Hermite spline through its points `(x_k, y_k)`,
/// `k = 0 … n−1`, with `x` strictly increasing in [0, 1] and `y` any finite value
/// (Fritsch & Carlson 1980 [doc]; the steps are SPEC §11's):
/// ```
/// 1. secants   d_k = (y_{k+1} − y_k) / (x_{k+1} − x_k)               k = 0 … n−2
/// 2. tangents  m_0 = d_0,  m_{n−1} = d_{n−2},
///              m_k = (d_{k−1} + d_k) / 2                               k = 1 … n−2
///              m_k = 0   where d_{k−1} and d_k differ in sign or either is 0
/// 3. limit     for k = 0 … n−2 in order, where d_k ≠ 0:
///              α = m_k / d_k,  β = m_{k+1} / d_k
///              if α² + β² > 9:  m_k ← τ·m_k, m_{k+1} ← τ·m_{k+1},  τ = 3 / √(α² + β²)
/// 4. on [x_k, x_{k+1}] with h = x_{k+1} − x_k and t = (x − x_k) / h:
///              p(x) = h00(t)·y_k + h10(t)·h·m_k + h01(t)·y_{k+1} + h11(t)·h·m_{k+1}
///              h00 = 2t³ − 3t² + 1,  h10 = t³ − 2t² + t,  h01 = −2t³ + 3t²,  h11 = t³ − t²
/// 5. outside:  p(x) = y_0 + m_0·(x − x_0)              for x < x_0
///              p(x) = y_{n−1} + m_{n−1}·(x − x_{n−1})  for x ≥ x_{n−1}
/// ```
/// Step 3 keeps `(α, β)` inside the circle of radius 3, one of Fritsch and Carlson's
/// sufficient conditions for monotonicity, so on every interval the curve stays between
/// its two end values: no overshoot, no ringing. It passes exactly through every
/// control point (`t = 0` gives `y_k`), is C¹, and is a straight line outside
/// `[x_0, x_{n−1}]`. Two points give a straight line through them.
///
/// - Identity: a curve whose points all lie on `y = x` (a missing curve is one). Such a
///   curve is skipped, so it returns its input to the bit; `isIdentity` is true when
///   every given curve is one, and `apply` then returns without touching a pixel.
/// - NaN stays NaN in its own channel; ±∞ follows the end line (NaN where the end is
///   flat, `0 · ∞`). No other channel or pixel is affected.
/// - Source: the interpolant is Fritsch & Carlson, "Monotone Piecewise Cubic
///   Interpolation", SIAM J. Numer. Anal. 17(2), 1980 [doc]; a master curve with
///   per-channel curves after it, and points in [0, 1], follow Core Image's
///   `CIToneCurve` (five points, one curve) and the curves tools of photo editors
///   [own]; Core Image does not document its spline.
///
/// JSON (`Codable`): `{"master": [[0, 0], [0.5, 0.6], [1, 1]], "red": [[0, 0.05], [1, 1]]}`;
/// the keys `master`, `red`, `green` and `blue` are each optional (null counts as
/// missing), but at least one must be present.
///
/// Schedules: `.scalar` is the formula above in `Float` (points and tangents computed
/// in `Double`, rounded once), one channel at a time. `.simd4` precomputes each
/// interval's cubic in `init` as `p = a + b·t + c·t² + d·t³` (in `Double`, rounded
/// once) and evaluates it by Horner's rule; where the build targets AVX2 it runs two
/// pixels per `SIMD8<Float>`, four per step, and finds each lane's interval by comparing
/// it with each knot and selecting that interval's coefficients (one `vblendvps` per
/// coefficient and knot; on arm64 too, NEON's `bsl`); on x86-64 without AVX2 (SSE2,
/// whose select takes three instructions) it counts the knots each lane has passed and
/// loads that interval's coefficients, one pixel per `SIMD4<Float>`; the two forms do
/// the same arithmetic on the same coefficients, to the bit. Both schedules take the
/// distance from a knot as from its `Float` with the rounding's remainder accounted
/// for, and pass a knot at the least `Float` at or above it, so a steep segment stays
/// exact. `.scalar` and `.simd4` agree within SPEC §8's 1e-5 on inputs in [−1, 2]
/// (measured ≤ 2.4e-7 on the test curves, each within 4.8e-7 of the `Double` curve;
/// within 1e-6 on curves with knots 1e-6 apart), and both hit the control points whose
/// abscissa is a `Float` exactly.
///
/// Complexity: `init` O(points); `apply` O(n·k) per row of n pixels, k the number of
/// knots of the curves in use (at most 32); no allocation.
public struct ToneCurve: PixelKernel, Hashable {
    /// Which curve: the master or one channel's; names the curve in errors and in JSON.
    public enum Channel: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
        /// The curve applied first, to R, G and B alike.
        case master
        /// The red channel's curve, applied after the master.
        case red
        /// The green channel's curve, applied after the master.
        case green
        /// The blue channel's curve, applied after the master.
        case blue

        /// The JSON key, e.g. `"red"`.
        public var description: String { rawValue }
    }

    /// The master curve; `nil` is the identity.
    public let master: Points?
    /// The red channel's curve, applied after the master; `nil` is the identity.
    public let red: Points?
    /// The green channel's curve, applied after the master; `nil` is the identity.
    public let green: Points?
    /// The blue channel's curve, applied after the master; `nil` is the identity.
    public let blue: Points?

    /// The vector schedule's tables, derived from the curves in `init`.
    let schedule: Schedule

    /// `"toneCurve"`.
    public var name: String { "toneCurve" }

    /// A tone curve from validated control points; missing curves are the identity.
    ///
    /// - Complexity: O(total points); builds the vector schedule's tables once.
    public init(master: Points? = nil, red: Points? = nil, green: Points? = nil, blue: Points? = nil) {
        self.master = master
        self.red = red
        self.green = green
        self.blue = blue
        schedule = Schedule(master: master, channels: [red, green, blue])
    }

    /// A curve on the master only, CIToneCurve-like: `ToneCurve(master: …)`.
    ///
    /// - Throws: `ToneCurveError` naming the master curve and the point (see `Points`).
    public init(masterPoints: [SIMD2<Double>]) throws(ToneCurveError) {
        self.init(master: try Points(masterPoints, curve: .master))
    }

    /// The curve of `channel` as given (`nil` where missing).
    public subscript(channel: Channel) -> Points? {
        switch channel {
        case .master: master
        case .red: red
        case .green: green
        case .blue: blue
        }
    }

    /// Whether every given curve is an identity (points on `y = x`); `apply` then
    /// returns at once and the image is unchanged to the bit.
    public var isIdentity: Bool {
        Channel.allCases.allSatisfy { self[$0]?.isIdentity ?? true }
    }

    /// The curve's output for input `x` on `channel`, in `Double`:
    /// `channel(master(x))`, identity curves skipped; for `.master`, `master(x)`.
    /// The reference the tests hold both schedules against.
    ///
    /// - Complexity: O(points).
    public func value(at x: Double, channel: Channel) -> Double {
        var v = x
        if let master, !master.isIdentity { v = master.value(at: v) }
        if channel != .master, let curve = self[channel], !curve.isIdentity { v = curve.value(at: v) }
        return v
    }

    /// The curve's output for input `x` on `channel`, in `Float`, exactly as the
    /// `.scalar` schedule computes it.
    ///
    /// - Complexity: O(points).
    public func value(at x: Float, channel: Channel) -> Float {
        var v = x
        if let master, !master.isIdentity { v = master.value(at: v) }
        if channel != .master, let curve = self[channel], !curve.isIdentity { v = curve.value(at: v) }
        return v
    }

    /// The scalar result for every sample of an integer raster, per channel: entry `v`
    /// of `red` is `value(at: Float(v) / Float(maxval), channel: .red)` for
    /// `v = 0 … maxval`, and so on.
    ///
    /// An integer pipeline can look samples up instead of running the kernel: the
    /// tables are the `.scalar` schedule itself, to the bit (an edit plan's tables hold
    /// the `Double` curve, `evaluate(_:channel:)`, rounded once). A channel
    /// whose curves are all identities gets the decoded samples `v / maxval` unchanged.
    ///
    /// - Parameter maxval: the raster's maximum sample value, 1…65535.
    /// - Returns: three tables of `maxval + 1` values (unclamped: encode afterwards).
    /// - Throws: `RasterError.invalidMaxval` for a maxval outside 1…65535.
    /// - Complexity: O(maxval × points); allocates the tables.
    public func makeLookupTable(maxval: Int) throws(RasterError) -> (red: [Float], green: [Float], blue: [Float]) {
        try RasterError.check(maxval: maxval, for: UInt16.self)
        let m = Float(maxval)
        func table(_ channel: Channel) -> [Float] {
            (0...maxval).map { value(at: SampleCoding.decode(UInt16(truncatingIfNeeded: $0), maxval: m), channel: channel) }
        }
        return (table(.red), table(.green), table(.blue))
    }

    /// Applies the curves in place to one row of straight-alpha RGBA pixels (R, G, B
    /// changed, A kept); returns at once when `isIdentity`. The row's position is not used.
    ///
    /// - Complexity: O(row.count × knots); no allocation.
    public func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {
        guard let base = row.baseAddress, schedule.masterKnots + schedule.channelKnots > 0 else { return }
        switch variant {
        case .scalar:
            ToneCurve.applyScalar(base, count: row.count, master: schedule.activeMaster,
                                  channels: schedule.activeChannels)
        case .simd4:
            #if canImport(TargetFeatures.AVX2) || !arch(x86_64)
            applyPairs(base, count: row.count)
            #else
            applyGathered(base, count: row.count)
            #endif
        }
    }

    /// The `SIMD8` schedule on `count` pixels (`applyVector`): where a select is one
    /// instruction (AVX2's `vblendvps`, NEON's `bsl`).
    func applyPairs(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int) {
        schedule.table.withUnsafeBufferPointer { table in
            schedule.masterBySegment.withUnsafeBufferPointer { bySegment in
                ToneCurve.applyVector(p, count: count, table: table.baseAddress!,
                                      masterKnots: schedule.masterKnots, channelKnots: schedule.channelKnots,
                                      channelOffset: schedule.channelOffset,
                                      masterKeep: schedule.masterKeep, channelKeep: schedule.channelKeep,
                                      masterBySegment: bySegment.isEmpty ? nil : bySegment.baseAddress)
            }
        }
    }

    /// The gathering schedule on `count` pixels (`applyGathered(_:count:bounds:segments:…)`):
    /// where a select takes three instructions (x86-64 without AVX2: SSE2).
    func applyGathered(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int) {
        schedule.bounds.withUnsafeBufferPointer { bounds in
            schedule.segments.withUnsafeBufferPointer { segments in
                ToneCurve.applyGathered(p, count: count, bounds: bounds.baseAddress!, segments: segments.baseAddress!,
                                        masterKnots: schedule.masterKnots, channelKnots: schedule.channelKnots,
                                        masterKeep: schedule.masterKeepOfPixel,
                                        channelKeep: schedule.channelKeepOfPixel)
            }
        }
    }

    /// The reference: SPEC §11 as written, one channel at a time, identity curves
    /// skipped (`nil`).
    static func applyScalar(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, master: Points?,
                            channels: (Points?, Points?, Points?)) {
        for i in 0..<count {
            var r = p[i].x, g = p[i].y, b = p[i].z
            if let master {
                r = master.value(at: r)
                g = master.value(at: g)
                b = master.value(at: b)
            }
            if let curve = channels.0 { r = curve.value(at: r) }
            if let curve = channels.1 { g = curve.value(at: g) }
            if let curve = channels.2 { b = curve.value(at: b) }
            p[i].x = r
            p[i].y = g
            p[i].z = b
        }
    }

    /// The schedule: two pixels per `SIMD8<Float>`, four pixels (two vectors) per step,
    /// the master stage then the channel stage, each restoring the lanes it must not
    /// change (alpha; identity channels) by mask. Two vectors per step because the
    /// interval search is a chain of selects, one link per knot: two independent
    /// chains keep the core busy while each waits on its previous link. A last pair
    /// runs alone, and an odd last pixel runs with itself in both halves; every lane
    /// does the same arithmetic whichever way it is grouped, so the bits do not depend
    /// on the row's length or a pixel's place. A first pixel off a 32-byte boundary goes
    /// alone (`pixelsBeforePairBoundary`).
    ///
    /// `masterBySegment` (`Schedule.masterBySegment`, or `nil`): where the build targets
    /// AVX2, the two-vector steps take the master stage's coefficients by permutes
    /// (`evaluatePermuted`), the same bits as the chain, which the last pair and pixel
    /// keep.
    @inline(never)
    static func applyVector(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, table: UnsafePointer<SIMD8<Float>>,
                            masterKnots: Int, channelKnots: Int, channelOffset: Int,
                            masterKeep: SIMDMask<SIMD8<Int32>>, channelKeep: SIMDMask<SIMD8<Int32>>,
                            masterBySegment: UnsafePointer<SIMD8<Float>>?) {
        if pixelsBeforePairBoundary(p, count: count) != 0, count > 1 {
            applyVector(p, count: 1, table: table, masterKnots: masterKnots, channelKnots: channelKnots,
                        channelOffset: channelOffset, masterKeep: masterKeep, channelKeep: channelKeep,
                        masterBySegment: masterBySegment)
            return applyVector(p + 1, count: count &- 1, table: table, masterKnots: masterKnots,
                               channelKnots: channelKnots, channelOffset: channelOffset,
                               masterKeep: masterKeep, channelKeep: channelKeep, masterBySegment: masterBySegment)
        }
        typealias V = SIMD8<Float>
        let channelTable = table + channelOffset
        @inline(__always)
        func curves(_ v: V) -> V {
            var v = v
            if masterKnots > 0 {
                v = evaluate(v, table, knots: masterKnots).replacing(with: v, where: masterKeep)
            }
            if channelKnots > 0 {
                v = evaluate(v, channelTable, knots: channelKnots).replacing(with: v, where: channelKeep)
            }
            return v
        }
        let raw = UnsafeMutableRawPointer(p)
        var offset = 0
        for _ in 0..<(count &>> 2) {
            var v0 = raw.loadUnaligned(fromByteOffset: offset, as: V.self)
            var v1 = raw.loadUnaligned(fromByteOffset: offset &+ 32, as: V.self)
            if masterKnots > 0 {
                #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
                let (y0, y1) = masterBySegment.map { evaluatePermuted(v0, v1, table, knots: masterKnots, bySegment: $0) }
                    ?? evaluate(v0, v1, table, knots: masterKnots)
                #else
                let (y0, y1) = evaluate(v0, v1, table, knots: masterKnots)
                #endif
                v0 = y0.replacing(with: v0, where: masterKeep)
                v1 = y1.replacing(with: v1, where: masterKeep)
            }
            if channelKnots > 0 {
                let (y0, y1) = evaluate(v0, v1, channelTable, knots: channelKnots)
                v0 = y0.replacing(with: v0, where: channelKeep)
                v1 = y1.replacing(with: v1, where: channelKeep)
            }
            raw.storeBytes(of: v0, toByteOffset: offset, as: V.self)
            raw.storeBytes(of: v1, toByteOffset: offset &+ 32, as: V.self)
            offset &+= 64
        }
        if count & 2 != 0 {
            let v = raw.loadUnaligned(fromByteOffset: offset, as: V.self)
            raw.storeBytes(of: curves(v), toByteOffset: offset, as: V.self)
        }
        if count & 1 != 0 {
            let last = p + (count &- 1)
            let v = last.pointee
            last.pointee = curves(SIMD8(lowHalf: v, highHalf: v)).lowHalf
        }
    }

    /// One stage's piecewise cubic on eight lanes, each lane with its own curve.
    ///
    /// `table` holds `[first knot, last knot, knot_0 … knot_{k−1}]`, then `k + 1`
    /// segments of six vectors `(base, 1/h, a, b, c, d)`: segment 0 is the line left of
    /// the first knot, segment `s` the interval starting at knot `s − 1`, the last one
    /// the line right of the last knot. A lane's segment is the number of its knots
    /// `≤ x`: walking the knots in order and selecting where `x ≥ knot` leaves exactly
    /// that one (knots past a lane's count are NaN and never selected; NaN `x` selects
    /// nothing, stays on segment 0 and gives NaN). Then `a + b·t + c·t² + d·t³` by
    /// Horner's rule with `t = (x − base)/h`; outside the knots the line `a + b·t`, so
    /// ±∞ follows the end slope instead of making `∞ · 0`.
    @inline(__always)
    static func evaluate(_ x: SIMD8<Float>, _ table: UnsafePointer<SIMD8<Float>>, knots: Int) -> SIMD8<Float> {
        var segment = table + (2 &+ knots)
        var base = segment[0], inverseWidth = segment[1]
        var a = segment[2], b = segment[3], c = segment[4], d = segment[5]
        for k in 0..<knots {
            let inside = x .>= table[2 &+ k]
            segment += 6
            base = base.replacing(with: segment[0], where: inside)
            inverseWidth = inverseWidth.replacing(with: segment[1], where: inside)
            a = a.replacing(with: segment[2], where: inside)
            b = b.replacing(with: segment[3], where: inside)
            c = c.replacing(with: segment[4], where: inside)
            d = d.replacing(with: segment[5], where: inside)
        }
        let t = (x - base) * inverseWidth
        let cubic = a + t * (b + t * (c + t * d))
        return cubic.replacing(with: a + b * t, where: (x .< table[0]) .| (x .>= table[1]))
    }

    /// `evaluate` on two vectors at once, their select chains interleaved; lane for lane
    /// the same operations, so the same bits.
    @inline(__always)
    static func evaluate(_ x0: SIMD8<Float>, _ x1: SIMD8<Float>, _ table: UnsafePointer<SIMD8<Float>>,
                         knots: Int) -> (SIMD8<Float>, SIMD8<Float>) {
        var segment = table + (2 &+ knots)
        var base0 = segment[0], inverseWidth0 = segment[1]
        var a0 = segment[2], b0 = segment[3], c0 = segment[4], d0 = segment[5]
        var base1 = base0, inverseWidth1 = inverseWidth0, a1 = a0, b1 = b0, c1 = c0, d1 = d0
        for k in 0..<knots {
            let knot = table[2 &+ k]
            let inside0 = x0 .>= knot, inside1 = x1 .>= knot
            segment += 6
            base0 = base0.replacing(with: segment[0], where: inside0)
            base1 = base1.replacing(with: segment[0], where: inside1)
            inverseWidth0 = inverseWidth0.replacing(with: segment[1], where: inside0)
            inverseWidth1 = inverseWidth1.replacing(with: segment[1], where: inside1)
            a0 = a0.replacing(with: segment[2], where: inside0)
            a1 = a1.replacing(with: segment[2], where: inside1)
            b0 = b0.replacing(with: segment[3], where: inside0)
            b1 = b1.replacing(with: segment[3], where: inside1)
            c0 = c0.replacing(with: segment[4], where: inside0)
            c1 = c1.replacing(with: segment[4], where: inside1)
            d0 = d0.replacing(with: segment[5], where: inside0)
            d1 = d1.replacing(with: segment[5], where: inside1)
        }
        let first = table[0], last = table[1]
        let t0 = (x0 - base0) * inverseWidth0, t1 = (x1 - base1) * inverseWidth1
        let cubic0 = a0 + t0 * (b0 + t0 * (c0 + t0 * d0)), cubic1 = a1 + t1 * (b1 + t1 * (c1 + t1 * d1))
        return (cubic0.replacing(with: a0 + b0 * t0, where: (x0 .< first) .| (x0 .>= last)),
                cubic1.replacing(with: a1 + b1 * t1, where: (x1 .< first) .| (x1 .>= last)))
    }

    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
    /// `evaluate(_:_:_:knots:)` for a stage whose colour lanes run one curve of at most
    /// seven knots (the master): each lane's segment counted as its knots `≤ x` (a
    /// compare and a subtraction per knot, where the select chain takes seven), then
    /// each of the six coefficients picked by one `vpermps` from `bySegment`, whose
    /// vector `j` holds coefficient `j` of segment `s` in lane `s`
    /// (`Schedule.masterBySegment`). The same segment and the same arithmetic, so the
    /// same bits: NaN and lanes without knots (alpha) count none, as they select none.
    @_transparent
    static func evaluatePermuted(_ x0: SIMD8<Float>, _ x1: SIMD8<Float>, _ table: UnsafePointer<SIMD8<Float>>,
                                 knots: Int, bySegment: UnsafePointer<SIMD8<Float>>) -> (SIMD8<Float>, SIMD8<Float>) {
        var s0 = SIMD8<Int32>(), s1 = SIMD8<Int32>()
        for k in 0..<knots {
            let knot = table[2 &+ k]
            s0 &-= unsafeBitCast(x0 .>= knot, to: SIMD8<Int32>.self)
            s1 &-= unsafeBitCast(x1 .>= knot, to: SIMD8<Int32>.self)
        }
        let i0 = unsafeBitCast(s0, to: __m256i.self), i1 = unsafeBitCast(s1, to: __m256i.self)
        @_transparent func pick(_ j: Int, _ i: __m256i) -> SIMD8<Float> { _mm256_permutevar8x32_ps(bySegment[j], i) }
        let base0 = pick(0, i0), inverseWidth0 = pick(1, i0), a0 = pick(2, i0), b0 = pick(3, i0)
        let c0 = pick(4, i0), d0 = pick(5, i0)
        let base1 = pick(0, i1), inverseWidth1 = pick(1, i1), a1 = pick(2, i1), b1 = pick(3, i1)
        let c1 = pick(4, i1), d1 = pick(5, i1)
        let first = table[0], last = table[1]
        let t0 = (x0 - base0) * inverseWidth0, t1 = (x1 - base1) * inverseWidth1
        let cubic0 = a0 + t0 * (b0 + t0 * (c0 + t0 * d0)), cubic1 = a1 + t1 * (b1 + t1 * (c1 + t1 * d1))
        return (cubic0.replacing(with: a0 + b0 * t0, where: (x0 .< first) .| (x0 .>= last)),
                cubic1.replacing(with: a1 + b1 * t1, where: (x1 .< first) .| (x1 .>= last)))
    }
    #endif

    /// The schedule for builds without AVX2: one pixel per `SIMD4<Float>`, each stage
    /// restoring the lanes it must not change (alpha; identity channels) by mask.
    ///
    /// A lane's interval is the number of its knots `≤ x`, counted by one comparison
    /// and one subtraction per knot (the comparison's all-ones lanes are −1), where the
    /// `SIMD8` schedule selects six coefficients per knot, three SSE2 instructions each.
    /// Each lane then loads its interval's `(a, b, c, d)` and `(base, 1/h)` from
    /// `segments`, and a transpose gives the four coefficient vectors: the values the
    /// select chain leaves, so the same bits (`evaluateGathered`).
    @inline(never)
    static func applyGathered(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, bounds: UnsafePointer<SIMD4<Float>>,
                              segments: UnsafePointer<SIMD4<Float>>, masterKnots: Int, channelKnots: Int,
                              masterKeep: SIMDMask<SIMD4<Int32>>, channelKeep: SIMDMask<SIMD4<Int32>>) {
        let channelBounds = bounds + (masterKnots > 0 ? 2 &+ masterKnots : 0)
        let channelSegments = segments + (masterKnots > 0 ? 6 &* (masterKnots &+ 1) : 0)
        for i in 0..<count {
            var v = p[i]
            if masterKnots > 0 {
                v = evaluateGathered(v, bounds, segments, knots: masterKnots).replacing(with: v, where: masterKeep)
            }
            if channelKnots > 0 {
                v = evaluateGathered(v, channelBounds, channelSegments, knots: channelKnots)
                    .replacing(with: v, where: channelKeep)
            }
            p[i] = v
        }
    }

    /// One stage's piecewise cubic on one pixel's four lanes, each lane with its own
    /// curve: `evaluate`'s arithmetic on the coefficients it would select.
    ///
    /// `bounds` holds `[first knot, last knot, knot_0 … knot_{k−1}]` (lanes R G B A,
    /// NaN past a lane's knots and in alpha), `segments` for each of R, G and B its
    /// `k + 1` segments as two vectors, `(a, b, c, d)` and `(base, 1/h, 0, 0)`. Alpha
    /// takes red's coefficients; the caller keeps its input.
    @inline(__always)
    static func evaluateGathered(_ x: SIMD4<Float>, _ bounds: UnsafePointer<SIMD4<Float>>,
                                 _ segments: UnsafePointer<SIMD4<Float>>, knots: Int) -> SIMD4<Float> {
        var passed = SIMD4<Int32>()
        for k in 0..<knots {
            passed &-= SIMD4<Int32>().replacing(with: -1, where: x .>= bounds[2 &+ k])
        }
        let lane = 2 &* (knots &+ 1)
        let r = segments + 2 &* Int(passed[0])
        let g = segments + (lane &+ 2 &* Int(passed[1]))
        let b = segments + (2 &* lane &+ 2 &* Int(passed[2]))
        let (a, slope, c, d) = transposed(r[0], g[0], b[0], r[0])
        let (base, inverseWidth, _, _) = transposed(r[1], g[1], b[1], r[1])
        let t = (x - base) * inverseWidth
        let cubic = a + t * (slope + t * (c + t * d))
        return cubic.replacing(with: a + slope * t, where: (x .< bounds[0]) .| (x .>= bounds[1]))
    }

    /// The columns of four rows: `(p.x, q.x, r.x, s.x)`, then the `y`, `z` and `w` columns.
    @inline(__always)
    static func transposed(_ p: SIMD4<Float>, _ q: SIMD4<Float>, _ r: SIMD4<Float>, _ s: SIMD4<Float>)
        -> (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>) {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
        let low0 = _mm_unpacklo_ps(p, q), low1 = _mm_unpacklo_ps(r, s)
        let high0 = _mm_unpackhi_ps(p, q), high1 = _mm_unpackhi_ps(r, s)
        return (_mm_movelh_ps(low0, low1), _mm_movehl_ps(low1, low0),
                _mm_movelh_ps(high0, high1), _mm_movehl_ps(high1, high0))
        #else
        return (SIMD4(p.x, q.x, r.x, s.x), SIMD4(p.y, q.y, r.y, s.y), SIMD4(p.z, q.z, r.z, s.z), SIMD4(p.w, q.w, r.w, s.w))
        #endif
    }

    /// The precomputed tables of both schedules.
    struct Schedule: Sendable {
        /// The master, or `nil` when it is missing or an identity (skipped).
        let activeMaster: Points?
        /// The red, green and blue curves, `nil` where missing or identity (skipped).
        let activeChannels: (Points?, Points?, Points?)
        /// The master stage's knot count (0: no master stage); its table starts at 0.
        let masterKnots: Int
        /// The channel stage's knot count, the most of the three (0: no channel stage).
        let channelKnots: Int
        /// Where the channel stage's table starts in `table`.
        let channelOffset: Int
        /// Both stages' tables (see `evaluate`), lanes `R G B A R G B A`.
        let table: [SIMD8<Float>]
        /// The master stage's six coefficients by segment for `evaluatePermuted`: vector
        /// `j` holds coefficient `j` (`base, 1/h, a, b, c, d`) of segment `s` in lane `s`.
        /// Empty without a master, with more than seven knots (more than eight
        /// segments), and where the build does not target AVX2 (which alone reads it).
        let masterBySegment: [SIMD8<Float>]
        /// Both stages' knots for `applyGathered` (`evaluateGathered`), lanes `R G B A`.
        let bounds: [SIMD4<Float>]
        /// Both stages' coefficients for `applyGathered`, by stage, channel and segment.
        let segments: [SIMD4<Float>]
        /// Lanes the master stage keeps: alpha.
        let masterKeep: SIMDMask<SIMD8<Int32>>
        /// Lanes the channel stage keeps: alpha and the identity channels.
        let channelKeep: SIMDMask<SIMD8<Int32>>
        /// `masterKeep` on one pixel's four lanes.
        let masterKeepOfPixel: SIMDMask<SIMD4<Int32>>
        /// `channelKeep` on one pixel's four lanes.
        let channelKeepOfPixel: SIMDMask<SIMD4<Int32>>

        init(master: Points?, channels: [Points?]) {
            let active = { (p: Points?) in p.flatMap { $0.isIdentity ? nil : $0 } }
            let m = active(master)
            let c = channels.map(active)
            activeMaster = m
            activeChannels = (c[0], c[1], c[2])
            let masterTable = m.map { Schedule.stageTable(lanes: [$0, $0, $0]) } ?? []
            let channelTable = c.contains { $0 != nil } ? Schedule.stageTable(lanes: c) : []
            masterKnots = m?.count ?? 0
            channelKnots = c.map { $0?.count ?? 0 }.max() ?? 0
            channelOffset = masterTable.count
            table = masterTable + channelTable
            #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
            let knots = masterKnots
            masterBySegment = knots == 0 || knots > 7 ? [] : (0..<6).map { j in
                var v = SIMD8<Float>(repeating: 0)
                for s in 0...knots { v[s] = masterTable[2 + knots + 6 * s + j][0] }
                return v
            }
            #else
            masterBySegment = []
            #endif
            let masterGathered = Schedule.gatheredTables(masterTable, knots: masterKnots)
            let channelGathered = Schedule.gatheredTables(channelTable, knots: channelKnots)
            bounds = masterGathered.bounds + channelGathered.bounds
            segments = masterGathered.segments + channelGathered.segments
            var keep = SIMDMask<SIMD8<Int32>>(repeating: false)
            keep[3] = true
            keep[7] = true
            masterKeep = keep
            for lane in 0..<3 where c[lane] == nil {
                keep[lane] = true
                keep[lane + 4] = true
            }
            channelKeep = keep
            masterKeepOfPixel = SIMDMask(SIMD4<Int32>(0, 0, 0, -1))
            channelKeepOfPixel = SIMDMask(SIMD4<Int32>((0..<4).map { keep[$0] ? -1 : 0 }))
        }

        /// One stage's `stageTable` (with `knots` knots) rearranged for `evaluateGathered`:
        /// its bounds on four lanes, and for each of R, G and B each segment's
        /// `(a, b, c, d)` and `(base, 1/h, 0, 0)`. Empty for an empty stage.
        static func gatheredTables(_ stage: [SIMD8<Float>], knots: Int) -> (bounds: [SIMD4<Float>], segments: [SIMD4<Float>]) {
            guard !stage.isEmpty else { return ([], []) }
            let bounds = stage[0..<(2 + knots)].map(\.lowHalf)
            var segments: [SIMD4<Float>] = []
            for lane in 0..<3 {
                for segment in 0...knots {
                    let v = { (j: Int) in stage[2 + knots + 6 * segment + j][lane] }
                    segments += [SIMD4(v(2), v(3), v(4), v(5)), SIMD4(v(0), v(1), 0, 0)]
                }
            }
            return (bounds, segments)
        }

        /// The table of one stage whose lanes 0–2 (and 4–6) run `lanes[0…2]`; see `evaluate`.
        static func stageTable(lanes: [Points?]) -> [SIMD8<Float>] {
            let knots = lanes.map { $0?.count ?? 0 }.max() ?? 0
            var table = [SIMD8<Float>](repeating: SIMD8(repeating: .nan), count: 2 + knots)
            table += [SIMD8<Float>](repeating: SIMD8(repeating: 0), count: 6 * (knots + 1))
            for (lane, curve) in lanes.enumerated() {
                guard let curve else { continue }
                let n = curve.count
                func set(_ index: Int, _ value: Double) {
                    table[index][lane] = Float(value)
                    table[index][lane + 4] = Float(value)
                }
                set(0, Double(curve.knots[0].start))
                set(1, Double(curve.knots[n - 1].start))
                for k in 0..<n { set(2 + k, Double(curve.knots[k].start)) }
                for (s, coefficients) in curve.segmentCoefficients.enumerated() {
                    for (j, value) in coefficients.enumerated() { set(2 + knots + 6 * s + j, value) }
                }
            }
            return table
        }
    }

    public static func == (lhs: ToneCurve, rhs: ToneCurve) -> Bool {
        lhs.master == rhs.master && lhs.red == rhs.red && lhs.green == rhs.green && lhs.blue == rhs.blue
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(master)
        hasher.combine(red)
        hasher.combine(green)
        hasher.combine(blue)
    }
}

extension ToneCurve {
    /// One curve's control points, validated, with its Fritsch–Carlson tangents.
    ///
    /// Rules (checked by every initializer; the error names the point's index, 0-based):
    /// 2…16 points; `x` and `y` finite; `x` in [0, 1] and strictly increasing; and,
    /// because the kernels run in `Float`, `|y|` and every secant `|d_k|` at most
    /// `Float.greatestFiniteMagnitude` (and the precomputed cubic coefficients finite
    /// in `Float`).
    ///
    /// CLI form (`init(parsing:)`, `description`): the points as `x,y` tokens separated
    /// by spaces, e.g. `"0,0 0.25,0.2 0.75,0.8 1,1"` — an S-curve.
    public struct Points: Sendable, Hashable, CustomStringConvertible {
        /// The control points `(x, y)`, `x` strictly increasing in [0, 1].
        public let points: [SIMD2<Double>]
        /// The tangent `m_k` at each point after SPEC §11's steps 1–3, in `Double`.
        public let tangents: [Double]
        /// `points` and `tangents` rounded to `Float` once, for the scalar schedule.
        let knots: [Knot]
        /// Per segment (left line, each interval, right line): `(base, 1/h, a, b, c, d)`
        /// of `p = a + b·t + c·t² + d·t³`, `t = (x − base)/h`, in `Double`, with `base`
        /// the knot's `Float` value (the polynomial re-centred there, so that `x − base`
        /// is the distance from the `Float` that a schedule subtracts).
        let segmentCoefficients: [[Double]]

        /// The most control points a curve may have.
        public static let maximumCount = 16
        /// The fewest control points a curve may have.
        public static let minimumCount = 2

        /// The identity, `(0, 0)` and `(1, 1)`.
        public static let identity = Points(validated: [SIMD2(0, 0), SIMD2(1, 1)])

        /// The number of control points, 2…16.
        public var count: Int { points.count }

        /// Whether every point lies on `y = x` (exactly, in `Double`); such a curve
        /// is the identity and the kernels skip it. Stored: the `Double` curve asks it
        /// per sample.
        public let isIdentity: Bool

        /// Validates `points` and computes the tangents.
        ///
        /// - Parameters:
        ///   - points: the control points `(x, y)`, in order of increasing `x`.
        ///   - curve: which curve these are, named in an error (`nil`: unnamed).
        /// - Throws: `ToneCurveError` — `.pointCount`, `.nonFinite`, `.xOutOfRange`,
        ///   `.xNotIncreasing`, `.yOutOfRange` or `.slopeOutOfRange` — naming `curve`
        ///   and the first offending point.
        /// - Complexity: O(points).
        public init(_ points: [SIMD2<Double>], curve: Channel? = nil) throws(ToneCurveError) {
            guard (Points.minimumCount...Points.maximumCount).contains(points.count) else {
                throw .pointCount(curve: curve, count: points.count)
            }
            for (k, p) in points.enumerated() {
                guard p.x.isFinite, p.y.isFinite else { throw .nonFinite(curve: curve, index: k, x: p.x, y: p.y) }
                guard p.x >= 0, p.x <= 1 else { throw .xOutOfRange(curve: curve, index: k, x: p.x) }
                if k > 0, !(p.x > points[k - 1].x) {
                    throw .xNotIncreasing(curve: curve, index: k, x: p.x, previous: points[k - 1].x)
                }
                guard abs(p.y) <= Double(Float.greatestFiniteMagnitude) else {
                    throw .yOutOfRange(curve: curve, index: k, y: p.y)
                }
            }
            for k in 0..<(points.count - 1) {
                let d = Points.secant(points[k], points[k + 1])
                guard abs(d) <= Double(Float.greatestFiniteMagnitude) else {
                    throw .slopeOutOfRange(curve: curve, index: k, slope: d)
                }
            }
            self.init(validated: points)
            // Segment s is the left line (s = 0), interval s − 1, or the right line (s = n).
            for (s, coefficients) in segmentCoefficients.enumerated()
            where !coefficients.allSatisfy({ Float($0).isFinite }) {
                let k = min(max(s - 1, 0), points.count - 2)
                throw .slopeOutOfRange(curve: curve, index: k, slope: Points.secant(points[k], points[k + 1]))
            }
        }

        /// Parses the CLI form: `x,y` tokens separated by spaces or tabs, e.g.
        /// `"0,0 0.5,0.6 1,1"`; then validates as `init(_:curve:)` does.
        ///
        /// - Throws: `ToneCurveError.badToken` naming the token, its index (0-based, the
        ///   point's index) and what is wrong, or any validation error.
        /// - Complexity: O(text length).
        public init(parsing text: String, curve: Channel? = nil) throws(ToneCurveError) {
            let tokens = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
            guard tokens.count <= Points.maximumCount else { throw .pointCount(curve: curve, count: tokens.count) }
            var points: [SIMD2<Double>] = []
            for (k, token) in tokens.enumerated() {
                let parts = token.split(separator: ",", omittingEmptySubsequences: false)
                guard parts.count == 2 else {
                    throw .badToken(curve: curve, index: k, token: String(token), reason: "expected x,y")
                }
                guard let x = Double(parts[0]) else {
                    throw .badToken(curve: curve, index: k, token: String(token), reason: "x is not a number")
                }
                guard let y = Double(parts[1]) else {
                    throw .badToken(curve: curve, index: k, token: String(token), reason: "y is not a number")
                }
                points.append(SIMD2(x, y))
            }
            try self.init(points, curve: curve)
        }

        /// Computes tangents and coefficients of points already known to be valid.
        init(validated points: [SIMD2<Double>]) {
            self.points = points
            isIdentity = points.allSatisfy { $0.x == $0.y }
            let m = Points.tangents(points)
            tangents = m
            let n = points.count
            knots = (0..<n).map { k in
                let x = points[k].x, rounded = Float(x)
                return Knot(x: rounded, xLow: Float(x - Double(rounded)),
                            start: Double(rounded) < x ? rounded.nextUp : rounded,
                            width: k + 1 < n ? Float(points[k + 1].x - x) : 0,
                            y: Float(points[k].y), m: Float(m[k]))
            }
            // p(t) re-centred at the knot's Float value: with t = t' − δ, δ = (x_k − base)/h,
            // p(t' − δ) = a' + b'·t' + c'·t'² + d'·t'³ (Taylor at −δ).
            func recentred(_ x: Double, width h: Double, _ a: Double, _ b: Double, _ c: Double, _ d: Double) -> [Double] {
                let base = Double(Float(x)), delta = (x - base) / h
                return [base, 1 / h, a - delta * (b - delta * (c - delta * d)), b - delta * (2 * c - 3 * delta * d),
                        c - 3 * delta * d, d]
            }
            var segments = [recentred(points[0].x, width: 1, points[0].y, m[0], 0, 0)]
            for k in 0..<(n - 1) {
                let h = points[k + 1].x - points[k].x
                let dy = points[k + 1].y - points[k].y
                let hm0 = h * m[k], hm1 = h * m[k + 1]
                // p(t) = y_k + h·m_k·t + (3Δy − 2h·m_k − h·m_{k+1})·t² + (h·m_k + h·m_{k+1} − 2Δy)·t³:
                // the Hermite basis of step 4 collected by powers of t.
                segments.append(recentred(points[k].x, width: h, points[k].y, hm0, 3 * dy - 2 * hm0 - hm1,
                                          hm0 + hm1 - 2 * dy))
            }
            segments.append(recentred(points[n - 1].x, width: 1, points[n - 1].y, m[n - 1], 0, 0))
            segmentCoefficients = segments
        }

        /// `(y_{k+1} − y_k) / (x_{k+1} − x_k)`.
        @inline(__always)
        static func secant(_ p: SIMD2<Double>, _ q: SIMD2<Double>) -> Double {
            (q.y - p.y) / (q.x - p.x)
        }

        /// SPEC §11's steps 1–3 (Fritsch–Carlson): secants, initial tangents, then the
        /// α² + β² > 9 limit applied interval by interval, first to last, each step
        /// seeing the tangents the previous one left.
        static func tangents(_ p: [SIMD2<Double>]) -> [Double] {
            let n = p.count
            let d = (0..<(n - 1)).map { secant(p[$0], p[$0 + 1]) }
            var m = [Double](repeating: 0, count: n)
            m[0] = d[0]
            m[n - 1] = d[n - 2]
            for k in 1..<max(1, n - 1) {
                let sameSign = (d[k - 1] > 0 && d[k] > 0) || (d[k - 1] < 0 && d[k] < 0)
                m[k] = sameSign ? (d[k - 1] + d[k]) / 2 : 0
            }
            for k in 0..<(n - 1) where d[k] != 0 {
                let alpha = m[k] / d[k], beta = m[k + 1] / d[k]
                let s = alpha * alpha + beta * beta
                if s > 9 {
                    let tau = 3 / s.squareRoot()
                    m[k] = tau * alpha * d[k]
                    m[k + 1] = tau * beta * d[k]
                }
            }
            return m
        }

        /// The curve at `x` in `Double`: SPEC §11's steps 4–5 with the `Double`
        /// tangents; the reference for tests. NaN gives NaN.
        ///
        /// - Complexity: O(points).
        public func value(at x: Double) -> Double {
            let n = points.count
            guard x >= points[0].x else { return points[0].y + tangents[0] * (x - points[0].x) }
            guard x < points[n - 1].x else { return points[n - 1].y + tangents[n - 1] * (x - points[n - 1].x) }
            var k = 0
            while x >= points[k + 1].x { k += 1 }
            let h = points[k + 1].x - points[k].x
            let t = (x - points[k].x) / h
            let t2 = t * t, t3 = t2 * t
            let h00 = 2 * t3 - 3 * t2 + 1, h10 = t3 - 2 * t2 + t
            let h01 = -2 * t3 + 3 * t2, h11 = t3 - t2
            return h00 * points[k].y + h10 * h * tangents[k] + h01 * points[k + 1].y + h11 * h * tangents[k + 1]
        }

        /// The curve at `x` in `Float`, the `.scalar` schedule's arithmetic: steps 4–5
        /// on the points and tangents rounded to `Float` once, the distance from a knot
        /// taken as `(x − Float(x_k)) − remainder` and each width rounded once. NaN gives
        /// NaN; at a control point whose abscissa is a `Float`, that point's `Float(y)`
        /// exactly.
        ///
        /// - Complexity: O(points).
        @inline(__always)
        public func value(at x: Float) -> Float {
            knots.withUnsafeBufferPointer { Points.hermite(x, $0.baseAddress!, count: $0.count) }
        }

        /// Steps 4–5 in `Float` over `count` knots.
        @inline(__always)
        static func hermite(_ x: Float, _ knots: UnsafePointer<Knot>, count n: Int) -> Float {
            // The distance from knot k: from its Float, then the rounding's remainder.
            @inline(__always) func distance(_ k: Int) -> Float { (x - knots[k].x) - knots[k].xLow }
            // `!(x >= x_0)` also catches NaN, which the left line then keeps NaN.
            guard x >= knots[0].start else { return knots[0].y + knots[0].m * distance(0) }
            let last = n &- 1
            guard x < knots[last].start else { return knots[last].y + knots[last].m * distance(last) }
            var k = 0
            while x >= knots[k &+ 1].start { k &+= 1 }
            let h = knots[k].width
            let t = distance(k) / h
            let t2 = t * t, t3 = t2 * t
            let h00 = 2 * t3 - 3 * t2 + 1, h10 = t3 - 2 * t2 + t
            let h01 = -2 * t3 + 3 * t2, h11 = t3 - t2
            return h00 * knots[k].y + h10 * h * knots[k].m + h01 * knots[k &+ 1].y + h11 * h * knots[k &+ 1].m
        }

        /// One control point as the scalar schedule reads it: `x_k` as `x + xLow` (its
        /// `Float` and the rounding's remainder, since `Float(x_k)` alone would move a
        /// knot by up to 3e-8, which a steep segment's slope multiplies), the least `Float`
        /// at or above `x_k` (`start`: a `Float` `x` has passed the knot exactly when
        /// `x ≥ start`, in every schedule, so no input takes a steep interval's cubic
        /// across its knot), the width to the next knot rounded once (0 for the last),
        /// and `y_k`, `m_k` rounded once.
        struct Knot: Sendable {
            let x: Float, xLow: Float, start: Float, width: Float, y: Float, m: Float
        }

        /// The CLI form, `"x,y x,y …"`, with each number in its shortest exact form;
        /// `init(parsing:)` reads it back to the same points.
        public var description: String {
            points.map { "\($0.x),\($0.y)" }.joined(separator: " ")
        }

        public static func == (lhs: Points, rhs: Points) -> Bool { lhs.points == rhs.points }

        public func hash(into hasher: inout Hasher) { hasher.combine(points) }
    }
}

/// What is wrong with a tone curve's points. Every case names the curve (`nil` when
/// the caller did not say which) and, where there is one, the point's index (0-based).
public enum ToneCurveError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Fewer than 2 or more than 16 points.
    case pointCount(curve: ToneCurve.Channel?, count: Int)
    /// A point's `x` or `y` is NaN or infinite.
    case nonFinite(curve: ToneCurve.Channel?, index: Int, x: Double, y: Double)
    /// A point's `x` lies outside [0, 1].
    case xOutOfRange(curve: ToneCurve.Channel?, index: Int, x: Double)
    /// A point's `x` is not greater than the previous point's.
    case xNotIncreasing(curve: ToneCurve.Channel?, index: Int, x: Double, previous: Double)
    /// A point's `|y|` exceeds `Float.greatestFiniteMagnitude`.
    case yOutOfRange(curve: ToneCurve.Channel?, index: Int, y: Double)
    /// The interval from point `index` to the next is too steep for `Float`.
    case slopeOutOfRange(curve: ToneCurve.Channel?, index: Int, slope: Double)
    /// A JSON point is not an array of two numbers.
    case malformedPoint(curve: ToneCurve.Channel?, index: Int, valueCount: Int)
    /// A CLI token is not `x,y` with two numbers.
    case badToken(curve: ToneCurve.Channel?, index: Int, token: String, reason: String)
    /// A JSON tone curve has none of `master`, `red`, `green`, `blue`.
    case noCurve

    /// One English sentence naming the curve, the point and the problem. Points are
    /// counted from 1 here, as a user counts them (`index` 0 is "point 1").
    public var description: String {
        func name(_ curve: ToneCurve.Channel?) -> String { curve.map { "tone curve \($0)" } ?? "tone curve" }
        // An index no array holds (a value made by hand) is shown as it is.
        func point(_ index: Int) -> String {
            let (n, overflow) = index.addingReportingOverflow(1)
            return "point \(overflow ? index : n)"
        }
        switch self {
        case .pointCount(let curve, let count):
            return "\(name(curve)): \(count) point\(count == 1 ? "" : "s"); a curve has \(ToneCurve.Points.minimumCount)…\(ToneCurve.Points.maximumCount)"
        case .nonFinite(let curve, let index, let x, let y):
            return "\(name(curve)): \(point(index)) (\(x), \(y)) is not finite"
        case .xOutOfRange(let curve, let index, let x):
            return "\(name(curve)): \(point(index)) has x = \(x) outside [0, 1]"
        case .xNotIncreasing(let curve, let index, let x, let previous):
            return "\(name(curve)): \(point(index)) has x = \(x), not greater than the previous point's \(previous)"
        case .yOutOfRange(let curve, let index, let y):
            return "\(name(curve)): \(point(index)) has y = \(y), beyond Float's range"
        case .slopeOutOfRange(let curve, let index, let slope):
            return "\(name(curve)): the slope \(slope) from \(point(index)) to the next is beyond Float's range"
        case .malformedPoint(let curve, let index, let valueCount):
            return "\(name(curve)): \(point(index)) has \(valueCount) numbers; expected [x, y]"
        case .badToken(let curve, let index, let token, let reason):
            return "\(name(curve)): \(point(index)) \"\(token)\": \(reason)"
        case .noCurve:
            return "tone curve: none of master, red, green, blue is given"
        }
    }
}

extension ToneCurve: CustomStringConvertible {
    /// The curves that are given, by their points: `ToneCurve(master: (0.0, 0.0)
    /// (0.3, 0.2) (1.0, 1.0))`; with no curve, `ToneCurve()`. (Not the schedule's tables.)
    public var description: String {
        let curves = [("master", master), ("red", red), ("green", green), ("blue", blue)].compactMap { name, points in
            points.map { "\(name): " + $0.points.map { "(\($0.x), \($0.y))" }.joined(separator: " ") }
        }
        return "ToneCurve(" + curves.joined(separator: "; ") + ")"
    }
}

extension ToneCurve: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable { case master, red, green, blue }

    /// Decodes `{"master": [[x, y], …], "red": …, "green": …, "blue": …}`; each key is
    /// optional (null counts as missing) but at least one must be present.
    ///
    /// - Throws: `DecodingError.dataCorrupted` at the offending key, whose underlying
    ///   error is the `ToneCurveError` naming the curve and point; `DecodingError` for
    ///   a wrong type.
    public init(from decoder: Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func curve(_ key: CodingKeys, _ channel: Channel) throws -> Points? {
            guard let list = try c.decodeIfPresent([[Double]].self, forKey: key) else { return nil }
            do throws(ToneCurveError) {
                var points: [SIMD2<Double>] = []
                for (k, p) in list.enumerated() {
                    guard p.count == 2 else { throw .malformedPoint(curve: channel, index: k, valueCount: p.count) }
                    points.append(SIMD2(p[0], p[1]))
                }
                return try Points(points, curve: channel)
            } catch {
                throw DecodingError.dataCorrupted(DecodingError.Context(
                    codingPath: c.codingPath + [key], debugDescription: error.description, underlyingError: error))
            }
        }
        let master = try curve(.master, .master), red = try curve(.red, .red)
        let green = try curve(.green, .green), blue = try curve(.blue, .blue)
        guard master != nil || red != nil || green != nil || blue != nil else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: c.codingPath, debugDescription: ToneCurveError.noCurve.description,
                underlyingError: ToneCurveError.noCurve))
        }
        self.init(master: master, red: red, green: green, blue: blue)
    }

    /// Encodes the curves given, each as `[[x, y], …]`; a curve with none given writes
    /// the identity master `[[0, 0], [1, 1]]`, so the output always decodes.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        func list(_ p: Points) -> [[Double]] { p.points.map { [$0.x, $0.y] } }
        let anyCurve = master != nil || red != nil || green != nil || blue != nil
        try c.encodeIfPresent((anyCurve ? master : .identity).map(list), forKey: .master)
        try c.encodeIfPresent(red.map(list), forKey: .red)
        try c.encodeIfPresent(green.map(list), forKey: .green)
        try c.encodeIfPresent(blue.map(list), forKey: .blue)
    }
}

extension ToneCurve: ToneStage, RecipeOperation {
    /// The `curve` family (CIToneCurve-like, SPEC §11).
    public static let family = KernelFamily(
        key: "curve",
        summary: "tone curves, master then per channel, monotone cubic through 2…16 points (CIToneCurve-like)",
        kind: .tone,
        parameters: [
            FamilyParameter("master", identity: "points on y = x", range: "2…16 points (x, y), x increasing in [0, 1]",
                            help: "applied to R, G and B first"),
            FamilyParameter("red / green / blue", identity: "points on y = x", range: "2…16 points",
                            help: "each applied after the master curve to its own channel"),
        ],
        options: Channel.allCases.map { channel in
            let name = channel == .master ? "curve" : "curve-\(channel.rawValue)"
            let which = channel == .master ? "The master tone curve (R, G and B)" : "The \(channel.rawValue) channel's tone curve, after the master"
            return FamilyOption(name, valueName: "points",
                                help: "\(which): 2…16 points \"x,y x,y …\", x increasing in [0, 1]; monotone cubic.") {
                recipe, text throws(RecipeError) in
                let points: Points
                do throws(ToneCurveError) {
                    points = try Points(parsing: text, curve: channel)
                } catch {
                    throw .invalidValue(field: "--\(name)", value: "\"\(text)\"", reason: error.description)
                }
                let old = recipe[ToneCurve.self] ?? ToneCurve()
                recipe[ToneCurve.self] = ToneCurve(
                    master: channel == .master ? points : old.master, red: channel == .red ? points : old.red,
                    green: channel == .green ? points : old.green, blue: channel == .blue ? points : old.blue)
            }
        },
        examples: [
            ("curve.master", try! ToneCurve(masterPoints: [SIMD2(0, 0), SIMD2(0.25, 0.18), SIMD2(0.75, 0.85), SIMD2(1, 1)])),
            ("curve.channels", ToneCurve(
                master: try! Points([SIMD2(0, 0.05), SIMD2(0.5, 0.5), SIMD2(1, 0.95)]),
                red: try! Points([SIMD2(0, 0), SIMD2(0.5, 0.56), SIMD2(1, 1)]),
                blue: try! Points([SIMD2(0, 0), SIMD2(0.5, 0.44), SIMD2(1, 1)]))),
        ],
        identity: ToneCurve(), type: ToneCurve.self)

    /// The scalar reference on one sample: `channel(master(x))`.
    public func map(_ x: Float, channel: Int) -> Float {
        value(at: x, channel: channel == 0 ? .red : channel == 1 ? .green : .blue)
    }

    /// The reference in `Double` on one sample: `channel(master(x))`, as
    /// `value(at:channel:)`; what integer samples' tone tables hold.
    public func evaluate(_ x: Double, channel: Int) -> Double {
        value(at: x, channel: channel == 0 ? .red : channel == 1 ? .green : .blue)
    }

    /// Whether only the master curve bends (the plan then keeps one table).
    public var isChannelUniform: Bool {
        [red, green, blue].allSatisfy { $0?.isIdentity ?? true }
    }

    /// `[.tone(self)]`.
    public var stages: [Stage] { [stage] }

    /// Points are checked when the curve is built (`ToneCurveError`), so a curve that
    /// exists is valid.
    public func validate() throws(RecipeError) {}

    /// The same curves with every point moved onto `y = x`.
    public var neutral: ToneCurve {
        func flat(_ p: Points?) -> Points? { p.flatMap { try? Points($0.points.map { SIMD2($0.x, $0.x) }) } }
        return ToneCurve(master: flat(master), red: flat(red), green: flat(green), blue: flat(blue))
    }

    /// Each curve's points interpolated, when both curves have the same channels with the
    /// same number of points (a convex mix of increasing `x` stays increasing); else `nil`.
    public func interpolated(to other: ToneCurve, at t: Double) -> ToneCurve? {
        func mix(_ a: Points?, _ b: Points?) -> Points?? {
            switch (a, b) {
            case (nil, nil): return .some(nil)
            case (let a?, let b?) where a.count == b.count:
                return (try? Points(zip(a.points, b.points).map { (1 - t) * $0 + t * $1 })).map { .some($0) }
            default: return nil
            }
        }
        guard let m = mix(master, other.master), let r = mix(red, other.red), let g = mix(green, other.green),
              let b = mix(blue, other.blue) else { return nil }
        return ToneCurve(master: m, red: r, green: g, blue: b)
    }

    /// The curves in `Double` on each colour channel; alpha kept.
    public func evaluate(_ color: SIMD4<Double>, x: Int, y: Int, width: Int, height: Int) -> SIMD4<Double> {
        SIMD4(value(at: color.x, channel: .red), value(at: color.y, channel: .green),
              value(at: color.z, channel: .blue), color.w)
    }
}
