import Foundation

// The vignette (SPEC §4): a radial gain that darkens (or, with negative intensity,
// brightens) pixels by their distance from a centre. Two parameterisations share one
// core: Core Image's CIVignette (radius relative to the half-diagonal, no inner
// radius) and CIVignetteEffect (centre, radius and falloff in pixels). Geometry is
// resolved per row from the image size, so one `Vignette` value fits any image.

/// A radial darkening `C' = g·C` with `g = 1 − i·smoothstep(r0, r1, |p − c|)`
/// (SPEC §4); alpha unchanged, never clamped.
///
/// **Geometry.** Pixel `(x, y)` of a `W × H` image is sampled at its centre
/// `p = (x + 0.5, y + 0.5)`, in pixels, origin at the top-left corner, y down. With
/// `d = |p − c|`:
/// ```
/// u = clamp((d − r0)/(r1 − r0), 0, 1),  t = u²·(3 − 2u)      (smoothstep)
/// if r1 ≤ r0:  t = (d ≥ r0) ? 1 : 0                           (a hard edge)
/// g = 1 − i·t
/// ```
/// so `g = 1` inside `r0`, `g = 1 − i` beyond `r1`, and a smooth S-curve between.
///
/// **Forms.**
/// - `vignette(intensity:radius:)` (CIVignette-like): `c = (W/2, H/2)`,
///   `D = √((W/2)² + (H/2)²)` (the half-diagonal), `r0 = 0`, `r1 = radius·D`.
/// - `vignetteEffect(center:radius:intensity:falloff:)` (CIVignetteEffect-like):
///   `r0 = R·(1 − φ)`, `r1 = R·(1 + φ)`; centre defaults to the image centre and
///   `R` to `min(W, H)/2`.
///
/// **Properties.** The result depends only on the pixel position and the image
/// size: it is symmetric under transposition (a `W × H` result transposed equals the
/// `H × W` result of the transposed input, bit for bit, for the CIVignette form and
/// any effect form whose centre is transposed with it), mirror-symmetric about a
/// centred `c`, and the centre pixel of an odd-sized image is unchanged when
/// `r1 > 0`. Intensity 0 is the identity to the bit (the kernel returns at once).
///
/// **JSON** (`Codable`): a keyed object with a `"form"` discriminator,
/// ```
/// {"form": "vignette", "intensity": 1, "radius": 1}
/// {"form": "effect", "center": [x, y], "radius": R, "intensity": 1, "falloff": 0.5}
/// {"form": "relativeEffect", "center": [0.5, 0.4], "radius": 0.8, "intensity": 1, "falloff": 0.5}
/// ```
/// (`relativeEffect`: the centre as fractions of (W, H), the radius as a fraction of
/// min(W, H)/2, so the look does not change with the image size.)
/// `center` and `radius` of the effect form are omitted when they are the
/// per-image defaults. When decoding, `"form"` may be left out: an object with
/// `center` or `falloff` is the effect form, otherwise the CIVignette form. Missing
/// numbers take Core Image's defaults (CIVignette: intensity 0, radius 1; effect:
/// intensity 1, falloff 0.5). NaN or infinite numbers, a `center` that is not two
/// numbers, an unknown form, or a key of the other form are decoding errors.
///
/// **Precision.** An `EditPlan` computes each gain from the geometry in `Double` and
/// rounds it once to `Float` (`preparedGains(imageWidth:imageHeight:)`), so that its
/// integer and half-precision samples meet SPEC §8's tie-aware rule even on a narrow
/// ring; the `Float` kernel below (`apply`, and a plan's runs on a `FloatImage`,
/// `preparedFloatGains`) computes in `Float`, about 3× cheaper per gain, with an error
/// that grows as the ring narrows (see `apply`).
///
/// **Schedules** (of the `Float` kernel). `.scalar` computes each pixel as written: a square root, then
/// `u = clamp((d − r0)·w, 0, 1)` with `w = 1/(r1 − r0)` rounded once per row. Both
/// schedules multiply by the one `w` rather than divide by `r1 − r0`: the same formula,
/// rounded the same way in both, so they agree to the bit. (Dividing in the reference
/// would put its gains an ulp from the SIMD4 schedule's, and up to 0.097 % of 16-bit
/// samples 1 LSB apart: agreement only within SPEC §8's tie window.)
///
/// `.simd4` first splits the row into spans of constant gain (wholly
/// inside `r0` or beyond `r1`, found from the row's `dy` and checked at their ends)
/// and the band between. In the band it computes the gains of eight neighbouring
/// pixels in the lanes of one `SIMD8<Float>`: it compares `d²` against the squared
/// radii (exact thresholds, so it picks "inside", "band" or "outside" exactly as the
/// scalar does), takes a vector square root, multiplies by `w`, clamps `u` to 1 as the
/// scalar does (a `d` just below `r1` can round `u` an ulp above 1). It stores the
/// gains to a small stack buffer, and a second pass scales the pixels by them (two
/// pixels per `SIMD8` where the build targets AVX2). A plan's run
/// on a `FloatImage` whose rows pair up holds each row's gains instead
/// (`PreparedGains.scale(_:count:y:x0:by:)`), so that a centred vignette computes them
/// for a quarter of the pixels, except where `PreparedEditPlan.pairsRowsToScale` is
/// false; its runs to samples always do, with the `Double` gains.
///
/// Complexity: O(n) per row of n pixels plus O(1) to resolve the geometry; no heap
/// allocation (the SIMD4 schedule uses 1 KiB of stack).
///
/// Sources: CIVignette and CIVignetteEffect parameter names, ranges and defaults
/// (Core Image Filter Reference) [doc]; the smoothstep curve follows GLSL's
/// `smoothstep` [doc: GLSL spec]; the exact radii in pixels are this library's
/// choice [own] — Core Image does not document its curve.
public struct Vignette: PositionalStage, Codable, Hashable {
    /// The two parameterisations of SPEC §4.
    public enum Form: Sendable, Hashable {
        /// CIVignette: `intensity` (Core Image range −1…1, default 0; larger values are
        /// allowed, negative brightens) and `radius` as a fraction of the half-diagonal
        /// (Core Image range 0…2, default 1).
        case vignette(intensity: Double, radius: Double)
        /// CIVignetteEffect: `center` in pixels from the top-left corner (`nil`: the
        /// image centre), `radius` in pixels (`nil`: `min(W, H)/2`), `intensity`
        /// (default 1) and `falloff` as a fraction of the radius (default 0.5).
        case effect(center: SIMD2<Double>?, radius: Double?, intensity: Double, falloff: Double)
        /// CIVignetteEffect with positions relative to the image (SPEC §10), so one recipe
        /// gives the same look on a preview and on the full image: `center` as fractions
        /// of (W, H) from the top-left (`nil`: (0.5, 0.5)), `radius` as a fraction of
        /// min(W, H)/2 (`nil`: 1), `intensity` (default 1), `falloff` (default 0.5).
        case relativeEffect(center: SIMD2<Double>?, radius: Double?, intensity: Double, falloff: Double)
    }

    /// Which form, with its parameters.
    public var form: Form

    /// A vignette of the given form.
    public init(_ form: Form) { self.form = form }

    /// The CIVignette form: darken towards the corners of the whole frame.
    ///
    /// - Parameters:
    ///   - intensity: how dark the outside gets, `g = 1 − intensity` at and beyond
    ///     `r1`; identity 0; Core Image's slider is −1…1, negative brightens. Not
    ///     clamped.
    ///   - radius: `r1` as a fraction of the half-diagonal `D = √((W/2)² + (H/2)²)`;
    ///     1 reaches the corners exactly, 2 is gentler; 0 gives a uniform gain of
    ///     `1 − intensity`.
    public static func vignette(intensity: Double, radius: Double) -> Vignette {
        Vignette(.vignette(intensity: intensity, radius: radius))
    }

    /// The CIVignetteEffect form: a ring of given centre, radius and softness.
    ///
    /// - Parameters:
    ///   - center: the ring's centre in pixels, origin top-left, y down; `nil` is the
    ///     image centre `(W/2, H/2)`. (Core Image's origin is bottom-left: a Core
    ///     Image centre `(cx, cy)` is `(cx, H − cy)` here.)
    ///   - radius: `R` in pixels; `nil` is `min(W, H)/2`.
    ///   - intensity: the gain beyond `r1` is `1 − intensity`; identity 0, default 1.
    ///   - falloff: the half-width of the soft band as a fraction of `R`:
    ///     `r0 = R·(1 − falloff)`, `r1 = R·(1 + falloff)`; 0 is a hard edge; default 0.5.
    public static func vignetteEffect(center: SIMD2<Double>? = nil, radius: Double? = nil,
                                      intensity: Double = 1, falloff: Double = 0.5) -> Vignette {
        Vignette(.effect(center: center, radius: radius, intensity: intensity, falloff: falloff))
    }

    /// The CIVignetteEffect form with positions relative to the image: `center` as
    /// fractions of (W, H) (`nil`: the centre), `radius` as a fraction of min(W, H)/2
    /// (`nil`: 1). The same value gives the same look at every image size.
    public static func relativeVignetteEffect(center: SIMD2<Double>? = nil, radius: Double? = nil,
                                              intensity: Double = 1, falloff: Double = 0.5) -> Vignette {
        Vignette(.relativeEffect(center: center, radius: radius, intensity: intensity, falloff: falloff))
    }

    /// `"vignette"`, `"vignetteEffect"` or `"relativeVignetteEffect"`.
    public var name: String {
        switch form {
        case .vignette: "vignette"
        case .effect: "vignetteEffect"
        case .relativeEffect: "relativeVignetteEffect"
        }
    }

    /// The intensity of either form; 0 is the identity.
    public var intensity: Double {
        switch form {
        case .vignette(let i, _): i
        case .effect(_, _, let i, _), .relativeEffect(_, _, let i, _): i
        }
    }

    /// Whether the vignette changes nothing (intensity 0).
    public var isIdentity: Bool { intensity == 0 }

    /// Every number of the form, named by its JSON field (`"center[0]"`,
    /// `"center[1]"`, `"radius"`, `"intensity"`, `"falloff"`), for validation and
    /// reports. Defaults (`nil` centre or radius) are not listed.
    public var parameters: [(name: String, value: Double)] {
        switch form {
        case .vignette(let i, let radius):
            return [("intensity", i), ("radius", radius)]
        case .effect(let center, let radius, let i, let falloff),
             .relativeEffect(let center, let radius, let i, let falloff):
            var list: [(name: String, value: Double)] = []
            if let center { list += [("center[0]", center.x), ("center[1]", center.y)] }
            if let radius { list.append(("radius", radius)) }
            return list + [("intensity", i), ("falloff", falloff)]
        }
    }

    /// The geometry of one image, in double precision.
    public struct Geometry: Sendable, Equatable {
        /// The centre `c`, in pixels from the top-left corner.
        public var center: SIMD2<Double>
        /// The inner radius `r0`, in pixels: the gain is 1 inside it.
        public var innerRadius: Double
        /// The outer radius `r1`, in pixels: the gain is `1 − intensity` beyond it.
        public var outerRadius: Double
        /// The intensity `i`.
        public var intensity: Double

        /// The gain `g = 1 − i·smoothstep(r0, r1, |p − c|)` at pixel `(x, y)`, in
        /// `Double`: the reference the kernels are tested against.
        public func gain(x: Int, y: Int) -> Double {
            let dx = Double(x) + 0.5 - center.x, dy = Double(y) + 0.5 - center.y
            return 1 - intensity * Vignette.smoothstep(innerRadius, outerRadius, (dx * dx + dy * dy).squareRoot())
        }
    }

    /// Resolves the form for a `width × height` image (SPEC §4).
    ///
    /// - Complexity: O(1).
    public func geometry(width: Int, height: Int) -> Geometry {
        let w = Double(width), h = Double(height)
        switch form {
        case .vignette(let i, let radius):
            let halfDiagonal = ((w / 2) * (w / 2) + (h / 2) * (h / 2)).squareRoot()
            return Geometry(center: SIMD2(w / 2, h / 2), innerRadius: 0, outerRadius: radius * halfDiagonal, intensity: i)
        case .effect(let center, let radius, let i, let falloff):
            let r = radius ?? min(w, h) / 2
            return Geometry(center: center ?? SIMD2(w / 2, h / 2), innerRadius: r * (1 - falloff),
                            outerRadius: r * (1 + falloff), intensity: i)
        case .relativeEffect(let center, let radius, let i, let falloff):
            let r = (radius ?? 1) * min(w, h) / 2
            let c = center.map { SIMD2($0.x * w, $0.y * h) } ?? SIMD2(w / 2, h / 2)
            return Geometry(center: c, innerRadius: r * (1 - falloff), outerRadius: r * (1 + falloff), intensity: i)
        }
    }

    /// SPEC §4's smoothstep, including the hard edge when `r1 ≤ r0`.
    static func smoothstep<T: BinaryFloatingPoint>(_ r0: T, _ r1: T, _ d: T) -> T {
        if r1 <= r0 { return d >= r0 ? 1 : 0 }
        let u = min(max((d - r0) / (r1 - r0), 0), 1)
        return u * u * (3 - 2 * u)
    }

    /// The geometry rounded to `Float` once, plus the constants of the SIMD4 schedule.
    struct Resolved {
        var cx, cy, r0, r1, intensity: Float
        /// `1/(r1 − r0)`, or 0 for the hard edge.
        var inverseWidth: Float
        /// The least `s ≥ 0` with `√s ≥ r0` (`Float` square root): `d < r0 ⟺ d² < s`;
        /// 0 when a radius is NaN.
        var inner2: Float
        /// The same for `r1`; equals `inner2` for the hard edge (no band); NaN when a
        /// radius is NaN (no pixel beyond r1).
        var outer2: Float

        init(_ g: Geometry) {
            cx = Float(g.center.x); cy = Float(g.center.y)
            r0 = Float(g.innerRadius); r1 = Float(g.outerRadius)
            intensity = Float(g.intensity)
            let hardEdge = r1 <= r0
            inverseWidth = hardEdge ? 0 : 1 / (r1 - r0)
            // A NaN radius makes the reference's u, and every gain, NaN: with `inner2`
            // 0 and `outer2` NaN no pixel lies inside r0 or beyond r1, so every lane
            // takes the band formula, which gives that NaN too (r0 = +∞ beside a NaN r1
            // included).
            let nanRadius = r0.isNaN || r1.isNaN
            inner2 = nanRadius ? 0 : Resolved.squaredThreshold(r0)
            outer2 = nanRadius ? .nan : hardEdge ? inner2 : Resolved.squaredThreshold(r1)
        }

        /// `dx = (x + 0.5) − cx` of column `x`, as a lane of `BandFormula` computes it.
        func dx(_ x: Int) -> Float { (Float(x) + 0.5) - cx }

        /// `d² = dx² + dy²` of column `x` in a row whose `dy²` is `dy2`, as a lane of
        /// `BandFormula` computes it.
        func squaredDistance(_ x: Int, dy2: Float) -> Float { dx(x) * dx(x) + dy2 }

        /// `m = 2·cx − 1` when it is an integer and the columns end by `end ≤ 2^22`:
        /// then column `m − x` mirrors column `x`, `dx` exact for both with only its
        /// sign differing, so their gains are equal to the bit. `nil` otherwise.
        func mirrorSum(columnsEndingBy end: Int) -> Int? {
            let twice = 2 * cx
            guard twice.rounded() == twice, abs(twice) < 0x1p22, end <= 1 << 22 else { return nil }
            return Int(twice) - 1
        }

        /// The least non-negative `Float` `s` whose correctly rounded square root is
        /// at least `r` (0 when `r ≤ 0` or NaN), so that for every `d²`,
        /// `(d²).squareRoot() ≥ r ⟺ d² ≥ s`: comparing squares then makes exactly the
        /// scalar reference's decisions. Starts from `r·r` and moves a few ulps.
        static func squaredThreshold(_ r: Float) -> Float {
            guard r > 0 else { return 0 }
            var s = r * r
            while s > 0, s.nextDown.squareRoot() >= r { s = s.nextDown }
            while s.squareRoot() < r { s = s.nextUp }
            return s
        }
    }

    /// Applies the vignette in place to a row piece: pixels `location.x0 ..<
    /// location.x0 + row.count` of row `location.y` of a
    /// `location.imageWidth × location.imageHeight` image (straight-alpha RGBA, A
    /// kept); returns at once when the intensity is 0.
    ///
    /// The gains are computed in `Float` from the geometry rounded to `Float`, and this
    /// schedule matches its scalar reference to the bit (SPEC §8's `Float` rule). Their
    /// error against the exact gain is a few 10⁻⁷ on a broad ring and grows as the ring
    /// narrows, the band's slope `1.5·i/(r1 − r0)` amplifying the distance's rounding
    /// (about 5·10⁻⁵ for a band of 2 pixels at a radius of 1000, 2·10⁻³ for one of 1
    /// pixel at 22 000; centres or radii beyond about 10¹⁹ pixels overflow its squares).
    /// An `EditPlan`
    /// resolves the geometry once per image size instead, and for integer and
    /// half-precision samples computes each gain in `Double`
    /// (`preparedGains(imageWidth:imageHeight:)`); this entry point resolves it per call.
    /// No location traps: columns outside the image take the reference's gains, and
    /// beyond ±2^62 the columns wrap like `&+`.
    ///
    /// - Complexity: O(row.count) plus O(1) to resolve the geometry; no heap allocation.
    public func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {
        guard !isIdentity, let base = row.baseAddress else { return }
        let gains = FloatGains(self, imageWidth: location.imageWidth, imageHeight: location.imageHeight)
        gains.scale(base, count: row.count, y: location.y, x0: location.x0, variant: variant)
    }

    /// Resolves the geometry for one image size: the positional constants of an
    /// `EditPlan`, each gain computed from the geometry in `Double` and rounded once to
    /// `Float` (within half an ulp of the exact gain), so that the plan's integer and
    /// half-precision samples meet SPEC §8's tie-aware rule even on a narrow ring. Its
    /// methods take any row and columns without trapping, as `apply` does, and give
    /// columns outside the image the reference's gains in both variants.
    ///
    /// - Complexity: O(1).
    public func preparedGains(imageWidth: Int, imageHeight: Int) -> any PreparedGains {
        PreparedVignette(self, imageWidth: imageWidth, imageHeight: imageHeight)
    }

    /// The `Float` kernel's gains (`apply`'s) for one image size, for an edit plan's runs
    /// on a `FloatImage`: each gain computed in `Float` from the geometry rounded to
    /// `Float`, a few 10⁻⁷ from the exact gain on a broad ring and more on a narrow one
    /// (see `apply`), where `preparedGains`' are within half an ulp. Its methods take any
    /// row and columns without trapping, as `apply` does.
    ///
    /// - Complexity: O(1).
    public func preparedFloatGains(imageWidth: Int, imageHeight: Int) -> any PreparedGains {
        FloatGains(self, imageWidth: imageWidth, imageHeight: imageHeight)
    }

    /// The reference gain of every pixel `x0 ..< x0 + count` of a row whose centre lies
    /// `dy` below the vignette's centre: `d = √(dx² + dy²)`, SPEC §4's smoothstep with
    /// the division as a multiplication by `w = 1/(r1 − r0)`, `g = 1 − i·t`.
    static func referenceGains(_ out: UnsafeMutablePointer<Float>, x0: Int, count: Int, dy: Float, _ g: Resolved) {
        for i in 0..<count {
            let dx = (Float(x0 &+ i) + 0.5) - g.cx
            let d = (dx * dx + dy * dy).squareRoot()
            let t: Float
            if g.r1 <= g.r0 {
                t = d >= g.r0 ? 1 : 0
            } else {
                let u = min(max((d - g.r0) * g.inverseWidth, 0), 1)
                t = u * u * (3 - 2 * u)
            }
            out[i] = 1 - g.intensity * t
        }
    }

    /// The schedule's gains for pixels `x0 ..< x0 + count` of a row `imageWidth`
    /// pixels wide:
    ///
    /// 1. Split the whole row into spans of constant gain, `[0, a)` and `[e, W)` beyond
    ///    `r1` (`g = 1 − i·1`) and `[b, c)` inside `r0` (`g = 1 − i·0`), and the band
    ///    `[a, b)`, `[c, e)` between (`constantSpans`). No square root is taken in a
    ///    constant span.
    /// 2. Band: `bandGains` computes the gains eight lanes at a time, branch-free,
    ///    straight into `out` (a lane's gain depends on its own x alone; from 2^24 on,
    ///    in blocks that start on a multiple of 8 of the whole row, through a 1 KiB
    ///    stack buffer, so a tile's gains are still the whole render's, bit for bit).
    ///
    /// Every gain is computed with the reference's operations in the same order, so
    /// the two agree to the bit (for rows of up to 2^24 pixels; see `bandGains`).
    /// `spans`: the row's `constantSpans`, when the caller has them already (they
    /// depend on the row alone, not on the piece).
    static func scheduledGains(_ out: UnsafeMutablePointer<Float>, x0: Int, count: Int, imageWidth: Int,
                               dy: Float, _ g: Resolved, spans: (a: Int, b: Int, c: Int, e: Int)? = nil) {
        guard isInside(x0: x0, count: count, imageWidth: imageWidth) else {
            return referenceGains(out, x0: x0, count: count, dy: dy, g)
        }
        let spans = spans ?? constantSpans(count: imageWidth, dy: dy, g)
        let end = x0 &+ count
        // Pixel m − x mirrors pixel x about the centre (`mirrorSum`): the right part of
        // the piece whose mirrors lie in its left part is copied from them, reversed,
        // instead of computed.
        guard let m = g.mirrorSum(columnsEndingBy: end) else {
            return directGains(out, x0: x0, count: count, imageWidth: imageWidth, dy: dy, g, spans: spans)
        }
        let lo = max(x0, (m + 2) / 2), hi = min(end, m - x0 + 1)
        guard hi - lo >= 64 else {
            return directGains(out, x0: x0, count: count, imageWidth: imageWidth, dy: dy, g, spans: spans)
        }
        directGains(out, x0: x0, count: lo - x0, imageWidth: imageWidth, dy: dy, g, spans: spans)
        if end > hi { directGains(out + (hi - x0), x0: hi, count: end - hi, imageWidth: imageWidth, dy: dy, g, spans: spans) }
        reverseCopy(from: out + (m - (hi - 1) - x0), into: out + (lo - x0), count: hi - lo)
    }

    /// `into[k] = from[count − 1 − k]` for `k < count` (the ranges do not overlap):
    /// eight gains per step, reversed in a register.
    static func reverseCopy(from source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float>, count: Int) {
        let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(destination)
        var k = 0
        while k &+ 8 <= count {
            let v = from.loadUnaligned(fromByteOffset: 4 &* (count &- k &- 8), as: SIMD8<Float>.self)
            to.storeBytes(of: SIMD8(v[7], v[6], v[5], v[4], v[3], v[2], v[1], v[0]), toByteOffset: 4 &* k, as: SIMD8<Float>.self)
            k &+= 8
        }
        while k < count {
            destination[k] = source[count &- 1 &- k]
            k &+= 1
        }
    }

    /// `scheduledGains` without the mirror: every gain computed.
    private static func directGains(_ out: UnsafeMutablePointer<Float>, x0: Int, count: Int, imageWidth: Int,
                                    dy: Float, _ g: Resolved, spans: (a: Int, b: Int, c: Int, e: Int)) {
        guard count > 0 else { return }
        let insideGain = 1 - g.intensity * 0, outsideGain = 1 - g.intensity * 1
        let (a, b, c, e) = spans
        let end = x0 &+ count
        // Each span of the whole row, clipped to [x0, end).
        func fill(_ lower: Int, _ upper: Int, _ gain: Float) {
            let l = max(lower, x0), u = min(upper, end)
            if l < u { (out + (l - x0)).update(repeating: gain, count: u - l) }
        }
        fill(0, a, outsideGain)
        fill(b, c, insideGain)
        fill(e, imageWidth, outsideGain)
        withUnsafeTemporaryAllocation(of: SIMD8<Float>.self, capacity: chunk / 8) { buffer in
            let gains = buffer.baseAddress!
            func band(_ lower: Int, _ upper: Int) {
                let l = max(lower, x0), u = min(upper, end)
                guard l < u else { return }
                if u <= 1 << 24 {
                    // Below 2^24 a lane's gain depends on its own x alone, so the blocks may
                    // start anywhere: the whole ones go straight to `out`, the rest through
                    // the buffer.
                    let whole = (u - l) / 8, rest = (u - l) % 8
                    bandGains(UnsafeMutableRawPointer(out + (l - x0)), from: l, blocks: whole, dy: dy, g)
                    if rest > 0 {
                        let x = l + 8 * whole
                        bandGains(UnsafeMutableRawPointer(gains), from: x, blocks: 1, dy: dy, g)
                        (out + (x - x0)).update(from: UnsafeRawPointer(gains).assumingMemoryBound(to: Float.self), count: rest)
                    }
                    return
                }
                var x = l & ~7
                while x < u {
                    let stop = min(x + chunk, u), first = max(x, l)
                    bandGains(UnsafeMutableRawPointer(gains), from: x, blocks: (stop - x + 7) / 8, dy: dy, g)
                    (out + (first - x0)).update(from: UnsafeRawPointer(gains).assumingMemoryBound(to: Float.self) + (first - x),
                                                count: stop - first)
                    x = stop
                }
            }
            band(a, b)
            band(c, e)
        }
    }

    /// Whether columns `x0 ..< x0 + count` lie within ±2^62, where the schedules' index
    /// arithmetic cannot overflow. No image has other columns; a caller who asks for
    /// them gets the reference's gains, the columns wrapping like `&+`, rather than a
    /// trap.
    static func isOrdinary(x0: Int, count: Int) -> Bool {
        x0.magnitude < 1 << 62 && (0..<(1 << 62)).contains(count)
    }

    /// Whether columns `x0 ..< x0 + count` lie in a row `imageWidth` pixels wide, where
    /// the schedules split the row into its spans. Columns outside it (which a plan never
    /// asks for) take the reference's gains, as `.scalar` does.
    static func isInside(x0: Int, count: Int, imageWidth: Int) -> Bool {
        isOrdinary(x0: x0, count: count) && x0 >= 0 && x0 + count <= imageWidth
    }

    /// Walks pixels `x0 ..< x0 + count` a chunk (`chunk`) at a time, writing their
    /// gains to `gains[0 ..< count]` and then scaling them: `compute(l, u)` writes the
    /// gains of columns `l ..< u`, except that the columns whose mirror `m − x`
    /// (`mirrorSum`) lies earlier in the piece, written already, are copied from it,
    /// reversed; then `scale(first, stop)` scales the chunk's pixels. Each chunk's
    /// gains are computed just before the pixels they scale, so that their arithmetic
    /// overlaps the memory traffic of the pixels already on their way.
    @inline(__always)
    static func forEachChunk(x0: Int, count: Int, mirrorSum m: Int?, gains: UnsafeMutablePointer<Float>,
                             compute: (Int, Int) -> Void, scale: (Int, Int) -> Void) {
        let end = x0 &+ count
        var first = x0
        while first < end {
            let stop = min(first &+ chunk, end)
            // Columns copyLo ..< copyHi mirror columns x0 ..< first, written already.
            var copyLo = stop, copyHi = stop
            if let m {
                copyLo = max(first, min(stop, m &- first &+ 1))
                copyHi = max(copyLo, min(stop, m &- x0 &+ 1))
            }
            if copyLo > first { compute(first, copyLo) }
            if let m, copyHi > copyLo {
                reverseCopy(from: gains + (m &- (copyHi &- 1) &- x0), into: gains + (copyLo &- x0), count: copyHi &- copyLo)
            }
            if stop > copyHi { compute(copyHi, stop) }
            scale(first, stop)
            first = stop
        }
    }

    /// Walks a row's five spans in order — beyond `r1` `[0, a)`, the band `[a, b)`,
    /// inside `r0` `[b, c)`, the band `[c, e)`, beyond `r1` `[e, imageWidth)` — each
    /// clipped to columns `x0 ..< end`, skipping the empty ones: `constant(l, u, gain)`
    /// for a span of constant gain, `band(l, u)` for a part of the band.
    @inline(__always)
    static func forEachSpan(_ spans: (a: Int, b: Int, c: Int, e: Int), from x0: Int, to end: Int, imageWidth: Int,
                            outsideGain: Float, insideGain: Float,
                            constant: (Int, Int, Float) -> Void, band: (Int, Int) -> Void) {
        @inline(__always) func span(_ lower: Int, _ upper: Int, _ gain: Float?) {
            let l = max(lower, x0), u = min(upper, end)
            guard l < u else { return }
            if let gain { constant(l, u, gain) } else { band(l, u) }
        }
        span(0, spans.a, outsideGain)
        span(spans.a, spans.b, nil)
        span(spans.b, spans.c, insideGain)
        span(spans.c, spans.e, nil)
        span(spans.e, imageWidth, outsideGain)
    }

    /// Pixels per chunk of the band: their gains fill 1 KiB, which
    /// `withUnsafeTemporaryAllocation` places on the stack without a size check, and
    /// which stays in L1 between the two passes. A multiple of 8. Also the chunk of a
    /// piece whose gains are written as it is scaled
    /// (`scale(_:count:y:x0:writingGainsTo:)`), its pixels about as far as the walk
    /// prefetches ahead.
    static var chunk: Int { 256 }

    /// The `Float` kernel's gains for one image size (`apply`, and an edit plan's runs
    /// on a `FloatImage`: `preparedFloatGains`): the geometry rounded to `Float` once
    /// (`Resolved`), each gain computed in `Float`.
    struct FloatGains: PreparedGains {
        let resolved: Resolved
        let imageWidth: Int

        init(_ vignette: Vignette, imageWidth: Int, imageHeight: Int) {
            resolved = Resolved(vignette.geometry(width: imageWidth, height: imageHeight))
            self.imageWidth = imageWidth
        }

        func rowGains(y: Int, x0: Int, count: Int, variant: KernelVariant, into gains: UnsafeMutablePointer<Float>) {
            let dy = (Float(y) + 0.5) - resolved.cy
            switch variant {
            case .scalar: Vignette.referenceGains(gains, x0: x0, count: count, dy: dy, resolved)
            case .simd4: Vignette.scheduledGains(gains, x0: x0, count: count, imageWidth: imageWidth, dy: dy, resolved)
            }
        }

        /// Row `m − y` when `m = 2·cy − 1` is an integer (below 2^22, as is `y`): then
        /// `dy = (y + 0.5) − cy` is exact for both rows and only its sign differs, and
        /// every gain depends on `dy²` alone.
        func rowWithSameGains(as y: Int) -> Int {
            let twice = 2 * resolved.cy
            guard twice.rounded() == twice, abs(twice) < 0x1p22, y.magnitude < 1 << 22 else { return y }
            return Int(twice) - 1 - y
        }

        /// `|1 − i·t| ≤ 1 + |i|` for `t` in [0, 1]; the factor covers the rounding of the
        /// product and the difference (and a `t` an ulp above 1). Infinite for an
        /// intensity beyond `Float`'s range.
        var largestGainMagnitude: Float { Float((1 + Double(resolved.intensity.magnitude)) * (1 + 0x1p-16)) }

        /// Multiplies R, G, B of `count` pixels by `gains`, span by span of the row as
        /// `scale(variant: .simd4)` does (`scaleBySpans`), the band by its gains.
        func scale(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int, by gains: UnsafePointer<Float>) {
            let keep = AlphaMasks()
            guard Vignette.isInside(x0: x0, count: count, imageWidth: imageWidth) else {
                return Vignette.scaleRow(p, count: count, by: UnsafeRawPointer(gains), keep)
            }
            scaleBySpans(p, count: count, x0: x0, dy: (Float(y) + 0.5) - resolved.cy, keep) { l, u in
                Vignette.scaleRow(p + (l &- x0), count: u &- l, by: UnsafeRawPointer(gains + (l &- x0)), keep)
            }
        }

        /// Walks the row's five spans in order, each clipped to pixels `x0 ..< x0 +
        /// count`: a constant span is scaled by its gain, the reference's `1 − i·t` at
        /// t = 1 and t = 0 to the bit (an infinite intensity makes the gain inside r0 NaN
        /// there too), and not even read when that gain is 1, which leaves every sample
        /// as it is (a quiet NaN too); each part of the band is handed to `band` as
        /// whole-row columns `l ..< u`.
        /// `spans`: the row's `constantSpans`, when the caller has them already.
        @inline(__always)
        func scaleBySpans(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, x0: Int, dy: Float, _ keep: AlphaMasks,
                          spans: (a: Int, b: Int, c: Int, e: Int)? = nil, band: (Int, Int) -> Void) {
            let spans = spans ?? Vignette.constantSpans(count: imageWidth, dy: dy, resolved)
            Vignette.forEachSpan(spans, from: x0, to: x0 &+ count, imageWidth: imageWidth,
                                 outsideGain: 1 - resolved.intensity * 1, insideGain: 1 - resolved.intensity * 0,
                                 constant: { l, u, gain in
                if gain != 1 { Vignette.scaleSpan(p + (l &- x0), count: u &- l, by: gain, keep) }
            }, band: band)
        }

        /// `scale(_:count:y:x0:by:)` with the gains computed a chunk at a time (`chunk`)
        /// just before the pixels they scale, so that the gains' arithmetic overlaps the
        /// memory traffic of the pixels already on their way. Each chunk's gains are
        /// `scheduledGains`' values for the whole piece: the columns whose mirror about
        /// the centre lies earlier in the piece are copied from it, reversed, the rest
        /// computed (`directGains`), so a centred vignette computes half of each row.
        func scale(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int,
                   writingGainsTo gains: UnsafeMutablePointer<Float>) {
            guard Vignette.isInside(x0: x0, count: count, imageWidth: imageWidth) else {
                rowGains(y: y, x0: x0, count: count, variant: .simd4, into: gains)
                return scale(p, count: count, y: y, x0: x0, by: UnsafePointer(gains))
            }
            let dy = (Float(y) + 0.5) - resolved.cy, keep = AlphaMasks(), g = resolved
            let spans = Vignette.constantSpans(count: imageWidth, dy: dy, g)
            Vignette.forEachChunk(x0: x0, count: count, mirrorSum: g.mirrorSum(columnsEndingBy: x0 &+ count), gains: gains,
                                  compute: { l, u in
                Vignette.directGains(gains + (l &- x0), x0: l, count: u &- l, imageWidth: imageWidth, dy: dy, g, spans: spans)
            }, scale: { first, stop in
                scaleBySpans(p + (first &- x0), count: stop &- first, x0: first, dy: dy, keep, spans: spans) { l, u in
                    Vignette.scaleRow(p + (l &- x0), count: u &- l, by: UnsafeRawPointer(gains + (l &- x0)), keep)
                }
            })
        }

        /// Multiplies R, G, B of `count` pixels by their gains: `.simd4` span by span of
        /// the row (a constant gain, or the band a chunk of gains at a time: see
        /// `bandGains` for why not in one pass), from 2^24 on a chunk of scheduled gains
        /// at a time; `.scalar` a chunk of reference gains at a time.
        func scale(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int, variant: KernelVariant) {
            let dy = (Float(y) + 0.5) - resolved.cy
            if variant == .simd4, Vignette.isInside(x0: x0, count: count, imageWidth: imageWidth), x0 + count <= 1 << 24 {
                let keep = AlphaMasks(), g = resolved
                scaleBySpans(p, count: count, x0: x0, dy: dy, keep) { l, u in
                    // A chunk of gains, then its pixels: the gains stay in L1.
                    withUnsafeTemporaryAllocation(of: Float.self, capacity: Vignette.chunk) { buffer in
                        let gains = buffer.baseAddress!
                        var x = l
                        while x < u {
                            let m = min(Vignette.chunk, u &- x)
                            Vignette.bandGains(UnsafeMutableRawPointer(gains), from: x, blocks: (m &+ 7) / 8, dy: dy, g)
                            Vignette.scaleRow(p + (x &- x0), count: m, by: UnsafeRawPointer(gains), keep)
                            x &+= m
                        }
                    }
                }
                return
            }
            let spans = Vignette.constantSpans(count: imageWidth, dy: dy, resolved)
            withUnsafeTemporaryAllocation(of: Float.self, capacity: Vignette.chunk) { buffer in
                let gains = buffer.baseAddress!
                var done = 0
                while done < count {
                    let n = min(Vignette.chunk, count - done)
                    switch variant {
                    case .scalar: rowGains(y: y, x0: x0 &+ done, count: n, variant: .scalar, into: gains)
                    case .simd4:
                        Vignette.scheduledGains(gains, x0: x0 &+ done, count: n, imageWidth: imageWidth, dy: dy, resolved,
                                                spans: spans)
                    }
                    switch variant {
                    case .scalar:
                        for i in 0..<n {
                            p[done + i].x = gains[i] * p[done + i].x
                            p[done + i].y = gains[i] * p[done + i].y
                            p[done + i].z = gains[i] * p[done + i].z
                        }
                    case .simd4:
                        Vignette.scaleRow(p + done, count: n, by: UnsafeRawPointer(gains), AlphaMasks())
                    }
                    done += n
                }
            }
        }
    }

    /// The row's spans of constant gain, `0 ≤ a ≤ b ≤ c ≤ e ≤ count`: every pixel of
    /// `[0, a)` and `[e, count)` has `d² ≥ outer2` and every pixel of `[b, c)` has
    /// `d² < inner2`, with `d²` computed exactly as the lanes of `bandGains` compute it.
    /// The spans may be shorter than the true ones (the band formula decides the rest
    /// the same way); they are never longer. A hard edge whose centre or row gives a
    /// NaN distance is inside r0 on the whole row, as the reference decides it.
    ///
    /// Why checking a span's ends suffices: `dx = (x + 0.5) − cx` is non-decreasing in
    /// `x` and `d² = dx² + dy²` is non-decreasing in `|dx|` (rounding is monotone), so
    /// the pixels with `d² < inner2` form one interval: if both ends of `[b, c)` are
    /// inside, all of it is. For `[0, a)`, pixel `a − 1` beyond `r1` with `dx ≤ 0`
    /// means every pixel left of it has a larger `|dx|`; the same on the right with
    /// `dx ≥ 0`. The candidate ends come from a `Double` square root, one pixel short.
    ///
    /// - Complexity: O(1).
    static func constantSpans(count: Int, dy: Float, _ g: Resolved) -> (a: Int, b: Int, c: Int, e: Int) {
        // A NaN distance fails the reference's hard-edge test `d ≥ r0`: t = 0, the
        // gain inside r0, on the whole row (the band formula would give NaN).
        if g.r1 <= g.r0, g.cx.isNaN || dy.isNaN { return (0, 0, count, count) }
        let dy2 = dy * dy
        // Beyond 2^24, `Float(x)` of one pixel no longer equals the lanes' `x`.
        guard count <= 1 << 24, g.cx.isFinite, abs(g.cx) < 0x1p30 else { return (0, 0, 0, count) }
        // Every `d² = dx² + dy²` rounds to at least dy², so a row beyond `r1` is
        // beyond it everywhere (dx is never NaN here).
        if dy2 >= g.outer2 { return (count, count, count, count) }
        func dx(_ x: Int) -> Float { g.dx(x) }
        func d2(_ x: Int) -> Float { g.squaredDistance(x, dy2: dy2) }
        func clamp(_ x: Double) -> Int { Int(min(max(x, 0), Double(count))) }
        let cx = Double(g.cx) - 0.5
        // Pixel x lies beyond r1 when |x − cx| ≥ √(outer2 − dy²), roughly.
        let reach = (Double(g.outer2) - Double(dy2)).squareRoot()
        var a = reach.isFinite ? clamp((cx - reach).rounded(.down)) : 0
        if a > 0, !(d2(a - 1) >= g.outer2 && dx(a - 1) <= 0) { a = 0 }
        var e = reach.isFinite ? clamp((cx + reach).rounded(.up) + 1) : count
        if e < count, !(d2(e) >= g.outer2 && dx(e) >= 0) { e = count }
        e = max(e, a)
        // Pixel x lies inside r0 when |x − cx| < √(inner2 − dy²), roughly.
        let radius = (Double(g.inner2) - Double(dy2)).squareRoot()
        var b = a, c = a
        if radius > 1, radius.isFinite {
            b = max(clamp((cx - radius).rounded(.up) + 1), a)
            c = min(clamp((cx + radius).rounded(.down)), e)
            if b >= c || !(d2(b) < g.inner2 && d2(c - 1) < g.inner2) { b = a; c = a }
        }
        return (a, b, c, e)
    }

    /// The gains of pixels `x0 ..< x0 + 8·blocks` of the row (`x0` a multiple of 8 from
    /// 2^24 on), into `out` (any alignment), eight lanes at a time and without a branch per lane: `d²` against the exact
    /// square thresholds, the band formula on every lane (a vector square root), then
    /// t = 0 inside, 1 outside, the band value between; `g = 1 − i·t`.
    ///
    /// Lane `k` of block `j` is at `Float(x0 + 8j) + k` (stepped by 8 while exact),
    /// which rounds like the four-lane schedule's `Float(x + 4) + (k − 4)` while
    /// `x + 4` is a `Float` (every multiple of 4 below 2^26). The formula is
    /// `BandFormula.gains`; where every lane lies in the band (`liesInBand`),
    /// `BandFormula.bandGains`, the same operations without the choice of t, the same
    /// bits: 45 instructions per 8 gains instead of 77 in the SSE2 build.
    ///
    /// The band takes two passes in every build, a chunk of gains into a buffer that
    /// stays in L1, then its pixels (`scaleRow`), rather than computing each block's
    /// gains in the loop that scales its pixels: in AVX2's sixteen `ymm` registers that
    /// loop spills the formula's constants and keeps a `vsqrtps` in every block's chain,
    /// and ran 0.6–0.7× the two passes' speed on a Zen 3 EPYC (0.4–0.5× against the held
    /// row gains two passes let an edit plan use), below it on a Xeon too.
    @inline(never)
    static func bandGains(_ out: UnsafeMutableRawPointer, from x0: Int, blocks: Int, dy: Float, _ g: Resolved) {
        let band = BandFormula(g)
        let laneOffsets = SIMD8<Float>(0, 1, 2, 3, 4, 5, 6, 7)
        if x0 &+ 8 &* blocks <= 1 << 23, blocks > 0, liesInBand(from: x0, to: x0 &+ 8 &* blocks &- 1, dy: dy, g) {
            // Below 2^23 every `Float(x) + 0.5` is exact, so the lanes' centres step by 8.
            var centres = laneOffsets + (Float(x0) + 0.5)
            for j in 0..<blocks {
                out.storeBytes(of: band.bandGains(centres: centres, dy: dy), toByteOffset: 32 &* j, as: SIMD8<Float>.self)
                centres += 8
            }
        } else if x0 &+ 8 &* blocks <= 1 << 24 {
            // Below 2^24 every integer is a `Float`, so stepping the lanes by 8 is exact.
            var xs = laneOffsets + Float(x0)
            for j in 0..<blocks {
                out.storeBytes(of: band.gains(xs, dy: dy), toByteOffset: 32 &* j, as: SIMD8<Float>.self)
                xs += 8
            }
        } else {
            for j in 0..<blocks {
                out.storeBytes(of: band.gains(laneOffsets + Float(x0 &+ 8 &* j), dy: dy), toByteOffset: 32 &* j,
                               as: SIMD8<Float>.self)
            }
        }
    }

    /// Whether every pixel `first ... last` (below 2^23) of a row `dy` below the centre
    /// has `inner2 ≤ d² < outer2`, `d²` computed as the lanes compute it: then t is the
    /// band value on every lane, and `BandFormula.bandGains` gives `gains`'s bits.
    ///
    /// `d² = dx² + dy²` with `dx = (x + 0.5) − cx` is non-increasing in `x` up to the
    /// centre and non-decreasing after it (rounding is monotone), so its largest value
    /// is at `first` or `last` and its least at one of the two pixels around `cx − 0.5`
    /// (clamped to the range). A NaN fails both tests.
    ///
    /// - Complexity: O(1).
    static func liesInBand(from first: Int, to last: Int, dy: Float, _ g: Resolved) -> Bool {
        let dy2 = dy * dy
        func d2(_ x: Int) -> Float { g.squaredDistance(x, dy2: dy2) }
        guard g.cx.isFinite, d2(first) < g.outer2, d2(last) < g.outer2 else { return false }
        // ⌊cx − 0.5⌋ clamped to the range, without `floorf` (a call in the baseline build).
        let centre = min(max(g.cx - 0.5, Float(first)), Float(last))
        var below = Int(centre)
        if Float(below) > centre { below &-= 1 }
        return d2(below) >= g.inner2 && d2(min(below &+ 1, last)) >= g.inner2
    }

    /// The band formula on eight lanes, its constants broadcast once per row piece.
    struct BandFormula {
        let cx, r0, inner2, outer2, inverseWidth, intensity: SIMD8<Float>

        init(_ g: Resolved) {
            cx = SIMD8(repeating: g.cx); r0 = SIMD8(repeating: g.r0)
            inner2 = SIMD8(repeating: g.inner2); outer2 = SIMD8(repeating: g.outer2)
            inverseWidth = SIMD8(repeating: g.inverseWidth); intensity = SIMD8(repeating: g.intensity)
        }

        /// The gains of the pixels whose column numbers are the lanes of `xs`, in a row
        /// `dy` below the centre. `dy` is squared here, where the root is taken: with
        /// `dy²` passed in, the compiler no longer knew `d² ≥ 0` (or NaN) and called
        /// `sqrtf` per lane instead of one `vsqrtps`. Transparent, so that it is always
        /// inlined: `@inline(__always)` has left a call per block in a loop that called
        /// it three times.
        @_transparent
        func gains(_ xs: SIMD8<Float>, dy: Float) -> SIMD8<Float> {
            let zero = SIMD8<Float>(repeating: 0), one = SIMD8<Float>(repeating: 1)
            let (d2, band) = squaredDistanceAndBand(centres: xs + 0.5, dy: dy)
            let inside = d2 .< inner2, outside = d2 .>= outer2
            let t = band.replacing(with: zero.replacing(with: one, where: outside), where: inside .| outside)
            return 1 - intensity * t
        }

        /// `gains` for lanes that all lie in the band (`inner2 ≤ d² < outer2`), whose
        /// column centres `x + 0.5` are the lanes of `centres`: t is the band value, so
        /// the inside and outside tests and the choice are left out.
        @_transparent
        func bandGains(centres: SIMD8<Float>, dy: Float) -> SIMD8<Float> {
            1 - intensity * squaredDistanceAndBand(centres: centres, dy: dy).band
        }

        /// `d²` of the lanes whose column centres `x + 0.5` are `centres`, and the band
        /// value `u²(3 − 2u)`, `u = min((d − r0)·w, 1)`, that `gains` and `bandGains`
        /// share.
        @_transparent
        func squaredDistanceAndBand(centres: SIMD8<Float>, dy: Float) -> (d2: SIMD8<Float>, band: SIMD8<Float>) {
            let one = SIMD8<Float>(repeating: 1)
            let dx = centres - cx
            let d2 = dx * dx + SIMD8(repeating: dy * dy)
            // u ≥ 0 in the band (d ≥ r0); it can round an ulp above 1 just below r1.
            var u = (d2.squareRoot() - r0) * inverseWidth
            u = u.replacing(with: one, where: u .> one)
            return (d2, u * u * (3 - 2 * u))
        }
    }

    /// `R, G, B ×= gain` in place for `count` pixels; alpha kept bit for bit:
    /// `scaleSpanPairs` where the build targets AVX2, `scaleSpanPixels` in other builds.
    /// Both give the same bits. `keep`: the two-pixel form's masks.
    @inline(never)
    static func scaleSpan(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, by gain: Float, _ keep: AlphaMasks) {
        #if canImport(TargetFeatures.AVX2)
        scaleSpanPairs(p, count: count, by: gain, keep)
        #else
        scaleSpanPixels(p, count: count, by: gain)
        #endif
    }

    /// `scaleSpan` two pixels per `SIMD8`, alpha put back by a lane mask, a first pixel
    /// off a 32-byte boundary alone (`pixelsBeforePairBoundary`).
    @inline(__always)
    static func scaleSpanPairs(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, by gain: Float, _ keep: AlphaMasks) {
        let g = SIMD8<Float>(repeating: gain)
        let head = pixelsBeforePairBoundary(p, count: count)
        if head != 0 { p[0] = (p[0] * g.lowHalf).replacing(with: p[0], where: keep.pixel) }
        @inline(__always) func pair(_ x: Int) {
            let pixels = UnsafeMutableRawPointer(p + x)
            let v = pixels.loadUnaligned(as: SIMD8<Float>.self)
            pixels.storeBytes(of: (v * g).replacing(with: v, where: keep.pair), as: SIMD8<Float>.self)
        }
        @inline(__always) func last(_ x: Int) {
            let v = p[x]
            p[x] = (v * g.lowHalf).replacing(with: v, where: keep.pixel)
        }
        MemoryStreams.forEachPair(from: head, to: count, pairBytes: 32, prefetching: p, pair, last: last)
    }

    /// `scaleSpan` one pixel per `SIMD4`, alpha put back by memory
    /// (`forEachPixelInPlace`): one `mulps` per pixel on SSE2's vector ports, where the
    /// two-pixel form split into 128-bit halves takes four. It prefetches on every
    /// processor, as the vignette's other loops do: only the colour matrices were
    /// measured without prefetches on a Zen 4.
    @inline(__always)
    static func scaleSpanPixels(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, by gain: Float) {
        let g = SIMD4<Float>(repeating: gain)
        forEachPixelInPlace(p, count: count, prefetching: true) { $0 * g }
    }

    /// `R, G, B ×= gains[x]` for pixels `0 ..< count`, the gains read as `Float`s from
    /// `gains`; alpha kept bit for bit: `scaleRowPairs` where the build targets AVX2,
    /// `scaleRowPixels` in other builds (baseline x86-64, arm64). Both give the same
    /// bits. Both take a long span's blocks of 4 pixels through `MemoryStreams`, as
    /// `scaleSpan` does (on a Xeon the four streams made the vignette at 12 MP 1.59×
    /// as fast in the default build). `keep`: the two-pixel form's masks.
    @inline(never)
    static func scaleRow(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, by gains: UnsafeRawPointer, _ keep: AlphaMasks) {
        #if canImport(TargetFeatures.AVX2)
        scaleRowPairs(p, count: count, by: gains, keep)
        #else
        scaleRowPixels(p, count: count, by: gains)
        #endif
    }

    /// `scaleRow` two pixels per `SIMD8`, each gain broadcast over its pixel's half; a
    /// first pixel off a 32-byte boundary alone (`pixelsBeforePairBoundary`).
    @inline(__always)
    static func scaleRowPairs(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, by gains: UnsafeRawPointer,
                              _ keep: AlphaMasks) {
        let head = pixelsBeforePairBoundary(p, count: count)
        if head != 0 { p[0] = (p[0] * SIMD4(repeating: gains.load(as: Float.self))).replacing(with: p[0], where: keep.pixel) }
        @inline(__always) func pair(_ x: Int) {
            let pixels = UnsafeMutableRawPointer(p + x), gain = gains + 4 &* x
            let v = pixels.loadUnaligned(as: SIMD8<Float>.self)
            let g = SIMD8<Float>(lowHalf: SIMD4(repeating: gain.load(as: Float.self)),
                                 highHalf: SIMD4(repeating: gain.load(fromByteOffset: 4, as: Float.self)))
            pixels.storeBytes(of: (v * g).replacing(with: v, where: keep.pair), as: SIMD8<Float>.self)
        }
        @inline(__always) func last(_ x: Int) {
            let v = p[x]
            p[x] = (v * SIMD4(repeating: gains.load(fromByteOffset: 4 &* x, as: Float.self))).replacing(with: v, where: keep.pixel)
        }
        MemoryStreams.forEachPair(from: head, to: count, pairBytes: 32, prefetching: p, pair, last: last)
    }

    /// `scaleRow` one pixel per `SIMD4`, four gains loaded at once and each broadcast
    /// by a `shufps` (three of them after a register copy, as SSE2's shuffle overwrites
    /// its operand). Alpha goes back by memory (`replaceColour(ofPixelAt:_:)`): two
    /// instructions per pixel on the vector ports, a `shufps` and a `mulps`, where a
    /// blend would take three more. With `insertingAlpha` (the default where the
    /// processor walks memory in order, Zen cores) the input's alpha is moved into the
    /// product's fourth lane instead (`keepingAlpha(of:in:)`): four instructions on the
    /// vector ports (two more `shufps`) but one store a pixel instead of a scalar load
    /// and two stores. That pays where the loop is bound by memory: on a Zen 4 the
    /// baseline build's vignette at 12 MP ran 1.03–1.09× as fast so. (The constant
    /// spans' `scaleSpanPixels` keeps alpha by memory: the same move ran 0.99–1.00×
    /// there.)
    @inline(__always)
    static func scaleRowPixels(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, by gains: UnsafeRawPointer,
                               insertingAlpha: Bool = !MemoryStreams.interleaves) {
        let raw = UnsafeMutableRawPointer(p)
        // Each pixel by its gain through `scale`, four gains loaded per block of four.
        @inline(__always) func walk(_ scale: (UnsafeMutableRawPointer, Float) -> Void) {
            @inline(__always) func block(_ k: Int) {
                let g = gains.loadUnaligned(fromByteOffset: 16 &* k, as: SIMD4<Float>.self), pixels = raw + 64 &* k
                scale(pixels, g.x)
                scale(pixels + 16, g.y)
                scale(pixels + 32, g.z)
                scale(pixels + 48, g.w)
            }
            MemoryStreams.forEachBlock(count &>> 2, blockBytes: 64, prefetching: raw, block)
            for x in (count & ~3)..<count { scale(raw + 16 &* x, gains.load(fromByteOffset: 4 &* x, as: Float.self)) }
        }
        if insertingAlpha {
            walk { pixel, g in
                let v = pixel.load(as: SIMD4<Float>.self)
                pixel.storeBytes(of: keepingAlpha(of: v, in: v * SIMD4(repeating: g)), as: SIMD4<Float>.self)
            }
        } else {
            walk { pixel, g in replaceColour(ofPixelAt: pixel) { $0 * SIMD4(repeating: g) } }
        }
    }

}

extension Vignette {
    private enum CodingKeys: String, CodingKey, CaseIterable { case form, intensity, radius, center, falloff }

    /// Decodes either form; see the type's documentation for the JSON shape.
    public init(from decoder: Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func number(_ key: CodingKeys) throws -> Double? {
            guard let x = try c.decodeIfPresent(Double.self, forKey: key) else { return nil }
            guard x.isFinite else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c,
                    debugDescription: "\(key.stringValue) must be a finite number, found \(x)")
            }
            return x
        }
        let formName = try c.decodeIfPresent(String.self, forKey: .form)
            ?? (c.contains(.center) || c.contains(.falloff) ? "effect" : "vignette")
        switch formName {
        case "vignette":
            for key in [CodingKeys.center, .falloff] where c.contains(key) {
                throw DecodingError.dataCorruptedError(forKey: key, in: c,
                    debugDescription: "\(key.stringValue) belongs to the \"effect\" form, not \"vignette\"")
            }
            self = .vignette(intensity: try number(.intensity) ?? 0, radius: try number(.radius) ?? 1)
        case "effect", "relativeEffect":
            var center: SIMD2<Double>?
            if let list = try c.decodeIfPresent([Double].self, forKey: .center) {
                guard list.count == 2, list.allSatisfy(\.isFinite) else {
                    throw DecodingError.dataCorruptedError(forKey: .center, in: c,
                        debugDescription: "center must be two finite numbers [x, y] in pixels, found \(list)")
                }
                center = SIMD2(list[0], list[1])
            }
            let (radius, intensity, falloff) = (try number(.radius), try number(.intensity) ?? 1, try number(.falloff) ?? 0.5)
            self = formName == "effect"
                ? .vignetteEffect(center: center, radius: radius, intensity: intensity, falloff: falloff)
                : .relativeVignetteEffect(center: center, radius: radius, intensity: intensity, falloff: falloff)
        default:
            throw DecodingError.dataCorruptedError(forKey: .form, in: c,
                debugDescription: "unknown vignette form \"\(formName)\"; known forms: vignette, effect, relativeEffect")
        }
    }

    /// Encodes with the `"form"` discriminator; defaults of the effect form are omitted.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch form {
        case .vignette(let i, let radius):
            try c.encode("vignette", forKey: .form)
            try c.encode(i, forKey: .intensity)
            try c.encode(radius, forKey: .radius)
        case .effect(let center, let radius, let i, let falloff),
             .relativeEffect(let center, let radius, let i, let falloff):
            if case .effect = form { try c.encode("effect", forKey: .form) } else { try c.encode("relativeEffect", forKey: .form) }
            if let center { try c.encode([center.x, center.y], forKey: .center) }
            try c.encodeIfPresent(radius, forKey: .radius)
            try c.encode(i, forKey: .intensity)
            try c.encode(falloff, forKey: .falloff)
        }
    }
}

extension Vignette: RecipeOperation {
    /// The `vignette` family: either form of SPEC §4.
    public static let family = KernelFamily(
        key: "vignette",
        summary: "radial darkening: CIVignette (intensity, radius × half-diagonal) or CIVignetteEffect (centre, radius, falloff)",
        kind: .positional,
        parameters: [
            FamilyParameter("intensity", identity: "0", range: "−1…1", help: "the gain beyond r1 is 1 − intensity"),
            FamilyParameter("radius", identity: "—", range: "0…2", help: "CIVignette: r1 as a fraction of the half-diagonal; effect: R in pixels"),
            FamilyParameter("center", identity: "—", range: "pixels, or fractions of (W, H) in relativeEffect",
                            help: "effect forms: the centre, from the top-left"),
            FamilyParameter("falloff", identity: "—", range: "0…1", help: "effect form: the soft band's half-width as a fraction of R"),
        ],
        examples: [("vignette", Vignette.vignette(intensity: 1, radius: 1)),
                   ("vignetteEffect", Vignette.vignetteEffect(intensity: 1, falloff: 0.5)),
                   ("relativeVignetteEffect", Vignette.relativeVignetteEffect(center: SIMD2(0.4, 0.6), radius: 0.8))],
        identity: Vignette.vignette(intensity: 0, radius: 1), type: Vignette.self)

    /// `[.positional(self)]`.
    public var stages: [Stage] { [stage] }

    /// Checks that every number is finite as a `Float`.
    public func validate() throws(RecipeError) {
        for (field, value) in parameters { try validateFinite("vignette.\(field)", value) }
    }

    /// The same geometry at intensity 0.
    public var neutral: Vignette {
        switch form {
        case .vignette(_, let r): .vignette(intensity: 0, radius: r)
        case .effect(let c, let r, _, let f): .vignetteEffect(center: c, radius: r, intensity: 0, falloff: f)
        case .relativeEffect(let c, let r, _, let f): .relativeVignetteEffect(center: c, radius: r, intensity: 0, falloff: f)
        }
    }

    /// Every parameter interpolated, when both are the same form with the same defaults
    /// left out; otherwise `nil`.
    public func interpolated(to other: Vignette, at t: Double) -> Vignette? {
        func mix(_ a: Double, _ b: Double) -> Double { (1 - t) * a + t * b }
        func mix(_ a: SIMD2<Double>?, _ b: SIMD2<Double>?) -> SIMD2<Double>?? {
            switch (a, b) {
            case (nil, nil): .some(nil)
            case (let a?, let b?): .some((1 - t) * a + t * b)
            default: nil
            }
        }
        func mix(_ a: Double?, _ b: Double?) -> Double?? {
            switch (a, b) {
            case (nil, nil): .some(nil)
            case (let a?, let b?): .some(mix(a, b))
            default: nil
            }
        }
        switch (form, other.form) {
        case (.vignette(let i, let r), .vignette(let j, let s)):
            return .vignette(intensity: mix(i, j), radius: mix(r, s))
        case (.effect(let c, let r, let i, let f), .effect(let d, let s, let j, let g)):
            guard let center = mix(c, d), let radius = mix(r, s) else { return nil }
            return .vignetteEffect(center: center, radius: radius, intensity: mix(i, j), falloff: mix(f, g))
        case (.relativeEffect(let c, let r, let i, let f), .relativeEffect(let d, let s, let j, let g)):
            guard let center = mix(c, d), let radius = mix(r, s) else { return nil }
            return .relativeVignetteEffect(center: center, radius: radius, intensity: mix(i, j), falloff: mix(f, g))
        default:
            return nil
        }
    }

    /// `g(x, y)·C` in `Double` (`Geometry.gain`); alpha kept.
    public func evaluate(_ color: SIMD4<Double>, x: Int, y: Int, width: Int, height: Int) -> SIMD4<Double> {
        let g = geometry(width: width, height: height).gain(x: x, y: y)
        return SIMD4(g * color.x, g * color.y, g * color.z, color.w)
    }
}
