import Foundation

// The vignette's gains as an edit plan uses them: each from the geometry in `Double`,
// rounded once to `Float`. A plan's 16-bit and half-precision outputs are held to SPEC
// §8's tie-aware rule, and a gain carried in `Float` is not precise enough for it: the
// centre rounded to `Float` moves the ring by up to half an ulp of its coordinate
// (3·10⁻⁵ pixels at x = 1229.1), and a narrow ring turns such an error into a gain error
// of a few 10⁻⁶, several times the rule's window. The `Float` kernel (`apply`, and a
// plan's runs on a `FloatImage`) keeps its `Float` arithmetic: its outputs are `Float`,
// which SPEC §8 holds to their scalar reference.

extension Vignette {
    /// The geometry of one image size in `Double`, with the thresholds of the spans of
    /// constant gain.
    struct PlanGeometry {
        let cx, cy, r0, intensity: Double
        /// `1/(r1 − r0)`; unused for the hard edge and a subnormal band.
        let inverseWidth: Double
        /// `r1 ≤ r0`: `t = (d ≥ r0) ? 1 : 0`.
        let hardEdge: Bool
        /// `r1 − r0` subnormal, too narrow for its reciprocal (∞, and `0·∞` NaN at
        /// `d = r0`): `u = (d − r0)/(r1 − r0)` as SPEC §4 writes it, pixel by pixel.
        let subnormalBand: Bool
        /// `r1 − r0`.
        let bandWidth: Double
        /// Every pixel whose exact distance `d` is below `insideBelow` gets `t = 0`, and
        /// every pixel whose `d` is at least `outsideFrom` gets `t = 1`, with the
        /// formula's rounding: each lies a relative 2⁻⁴⁰ of its radius (and 2⁻²⁰ of the
        /// band's width) inside the true threshold, thousands of times the error of a
        /// `Double` distance (and for radii below 10⁹ pixels under a thousandth of a
        /// pixel: the spans lose no more than a pixel at each end).
        let insideBelow, outsideFrom: Double
        /// The gains `1 − i·0` and `1 − i·1`, rounded to `Float` as the formula rounds them.
        let insideGain, outsideGain: Float

        init(_ g: Geometry) {
            cx = g.center.x; cy = g.center.y
            r0 = g.innerRadius
            intensity = g.intensity
            let r1 = g.outerRadius
            // A NaN radius is no hard edge: the formula's NaN goes through, as in SPEC §4.
            hardEdge = r1 <= r0
            bandWidth = r1 - r0
            inverseWidth = hardEdge ? 0 : 1 / bandWidth
            subnormalBand = !hardEdge && inverseWidth == .infinity
            let width = hardEdge ? 0 : bandWidth
            insideBelow = r0 - width * 0x1p-20 - r0.magnitude * 0x1p-40
            outsideFrom = (hardEdge ? r0 : r1) + width * 0x1p-20 + (hardEdge ? r0 : r1).magnitude * 0x1p-40
            insideGain = Float(1 - intensity * 0)
            outsideGain = Float(1 - intensity * 1)
        }

        /// The gain of the pixel `dx` right of the centre in a row whose `dy²` is `dy2`:
        /// `d = √(dx² + dy²)`, `u = clamp((d − r0)·w, 0, 1)`, `t = u²(3 − 2u)` (or the
        /// hard edge), `g = 1 − i·t`, all in `Double`, rounded once to `Float`. The lanes
        /// of `gains(centres:dy:)` make the same operations in the same order.
        @inline(__always)
        func gain(dx: Double, dy2: Double) -> Float {
            let d = (dx * dx + dy2).squareRoot()
            let t: Double
            if hardEdge {
                t = d >= r0 ? 1 : 0
            } else {
                var u = subnormalBand ? (d - r0) / bandWidth : (d - r0) * inverseWidth
                if u < 0 { u = 0 }
                if u > 1 { u = 1 }
                t = u * u * (3 - 2 * u)
            }
            return Float(1 - intensity * t)
        }

        /// `gain(dx:dy2:)` on four neighbouring pixels whose column centres `x + 0.5` are
        /// the lanes of `centres`, for a smooth band (not the hard edge, nor a subnormal
        /// band). `dy` is squared
        /// here, beside the root, as `BandFormula` does, so that the compiler sees
        /// `d² ≥ 0` and emits one vector square root.
        @_transparent
        func gains(centres: SIMD4<Double>, dy: Double) -> SIMD4<Float> {
            let dx = centres - SIMD4(repeating: cx)
            let d = (dx * dx + SIMD4(repeating: dy * dy)).squareRoot()
            var u = (d - SIMD4(repeating: r0)) * SIMD4(repeating: inverseWidth)
            u = u.replacing(with: 0, where: u .< 0)
            u = u.replacing(with: 1, where: u .> 1)
            return SIMD4<Float>(1 - SIMD4(repeating: intensity) * (u * u * (3 - 2 * u)))
        }

        /// `dy = (y + 0.5) − cy` of row `y`.
        func dy(_ y: Int) -> Double { (Double(y) + 0.5) - cy }

        /// `m = 2·c − 1` when it is an integer below 2⁵⁰ and the columns (or rows) end
        /// by `end ≤ 2⁵⁰`: then `m − x` mirrors `x`, `dx` exact for both with only its
        /// sign differing, so their gains are equal to the bit. `nil` otherwise.
        static func mirrorSum(_ c: Double, endingBy end: Int) -> Int? {
            let twice = 2 * c
            guard twice.rounded() == twice, abs(twice) < 0x1p50, end <= 1 << 50 else { return nil }
            return Int(twice) - 1
        }

        /// The row's spans of constant gain, `0 ≤ a ≤ b ≤ c ≤ e ≤ count`: the pixels of
        /// `[0, a)` and `[e, count)` lie at least `outsideFrom` from the centre and those
        /// of `[b, c)` less than `insideBelow`; the rest, the band, take the formula. The
        /// ends are found in `Double` with a pixel to spare, and with the thresholds'
        /// margins that puts every span pixel where the formula gives the span's gain.
        /// The spans may be shorter than the true ones, never longer; a row whose
        /// numbers are beyond 2⁵⁰ is all band.
        ///
        /// - Complexity: O(1).
        func spans(count: Int, dy: Double) -> (a: Int, b: Int, c: Int, e: Int) {
            let dy2 = dy * dy
            // A NaN threshold (a NaN radius, or −∞ + ∞) decides nothing: all band.
            guard cx.isFinite, abs(cx) < 0x1p50, abs(dy) < 0x1p50, count <= 1 << 50, !outsideFrom.isNaN else {
                return (0, 0, 0, count)
            }
            // Every pixel has d ≥ |dy|.
            if outsideFrom <= dy.magnitude { return (count, count, count, count) }
            func clamp(_ x: Double) -> Int { Int(min(max(x, 0), Double(count))) }
            // |x + 0.5 − cx| ≥ reach puts pixel x at d ≥ outsideFrom; the square's
            // cancellation is covered by the 2⁻⁴⁸ term, the root's rounding by the factor.
            let out2 = outsideFrom * outsideFrom
            let reach = (max(out2 - dy2, 0) + out2 * 0x1p-48).squareRoot() * (1 + 0x1p-40) + 1
            let a = clamp((cx - reach - 0.5).rounded(.down) + 1)
            let e = max(clamp((cx + reach - 0.5).rounded(.up)), a)
            guard insideBelow > 0 else { return (a, a, a, e) }
            // |x + 0.5 − cx| ≤ radius puts pixel x at d < insideBelow.
            let in2 = insideBelow * insideBelow
            let radius = (max(in2 - dy2 - in2 * 0x1p-48, 0)).squareRoot() * (1 - 0x1p-40) - 1
            guard radius > 0 else { return (a, a, a, e) }
            let b = max(clamp((cx - radius - 0.5).rounded(.up)), a)
            let c = min(clamp((cx + radius - 0.5).rounded(.down) + 1), e)
            return b < c ? (a, b, c, e) : (a, a, a, e)
        }
    }

    /// An edit plan's vignette gains for one image size: SPEC §4's formula on the
    /// geometry in `Double`, each gain rounded once to `Float` (`PlanGeometry`).
    /// `.scalar` evaluates it per pixel; `.simd4` splits each row into spans of constant
    /// gain and the band between, computes the band four gains at a time in a
    /// `SIMD4<Double>` with the same operations (so the two agree to the bit), and copies
    /// the gains of a centred vignette's right half from its left (`mirrorSum`).
    struct PreparedVignette: PreparedGains {
        let geometry: PlanGeometry
        let imageWidth: Int

        init(_ vignette: Vignette, imageWidth: Int, imageHeight: Int) {
            geometry = PlanGeometry(vignette.geometry(width: imageWidth, height: imageHeight))
            self.imageWidth = imageWidth
        }

        func rowGains(y: Int, x0: Int, count: Int, variant: KernelVariant, into gains: UnsafeMutablePointer<Float>) {
            let dy = geometry.dy(y)
            switch variant {
            case .scalar: referenceGains(gains, x0: x0, count: count, dy: dy)
            case .simd4: scheduledGains(gains, x0: x0, count: count, dy: dy)
            }
        }

        /// The formula per pixel, columns wrapping like `&+`.
        func referenceGains(_ out: UnsafeMutablePointer<Float>, x0: Int, count: Int, dy: Double) {
            let dy2 = dy * dy
            for i in 0..<count {
                out[i] = geometry.gain(dx: (Double(x0 &+ i) + 0.5) - geometry.cx, dy2: dy2)
            }
        }

        /// The schedule's gains of pixels `x0 ..< x0 + count`: the spans, the band, and
        /// the columns whose mirror lies earlier in the piece copied from it.
        func scheduledGains(_ out: UnsafeMutablePointer<Float>, x0: Int, count: Int, dy: Double) {
            guard Vignette.isInside(x0: x0, count: count, imageWidth: imageWidth) else {
                return referenceGains(out, x0: x0, count: count, dy: dy)
            }
            let spans = geometry.spans(count: imageWidth, dy: dy), end = x0 &+ count
            guard let m = PlanGeometry.mirrorSum(geometry.cx, endingBy: end) else {
                return directGains(out, x0: x0, count: count, dy: dy, spans: spans)
            }
            let lo = max(x0, (m + 2) / 2), hi = min(end, m - x0 + 1)
            guard hi - lo >= 64 else { return directGains(out, x0: x0, count: count, dy: dy, spans: spans) }
            directGains(out, x0: x0, count: lo - x0, dy: dy, spans: spans)
            if end > hi { directGains(out + (hi - x0), x0: hi, count: end - hi, dy: dy, spans: spans) }
            Vignette.reverseCopy(from: out + (m - (hi - 1) - x0), into: out + (lo - x0), count: hi - lo)
        }

        /// Every gain of pixels `x0 ..< x0 + count` computed: the constant spans filled,
        /// the band four lanes at a time (`bandGains`).
        func directGains(_ out: UnsafeMutablePointer<Float>, x0: Int, count: Int, dy: Double,
                         spans: (a: Int, b: Int, c: Int, e: Int)) {
            guard count > 0 else { return }
            Vignette.forEachSpan(spans, from: x0, to: x0 &+ count, imageWidth: imageWidth,
                                 outsideGain: geometry.outsideGain, insideGain: geometry.insideGain,
                                 constant: { l, u, gain in (out + (l - x0)).update(repeating: gain, count: u - l) },
                                 band: { l, u in bandGains(out + (l - x0), from: l, count: u - l, dy: dy) })
        }

        /// The gains of pixels `x0 ..< x0 + count` by the formula: four lanes at a time
        /// for a smooth band below 2⁵⁰, where the lanes' `Double(x) + 0.5` are exact, the
        /// last pixels, a hard edge's few band pixels (and a subnormal band's) and columns
        /// from 2⁵⁰ on one at a time.
        @inline(never)
        func bandGains(_ out: UnsafeMutablePointer<Float>, from x0: Int, count: Int, dy: Double) {
            let g = geometry
            var done = 0
            if !g.hardEdge, !g.subnormalBand, x0 >= 0, x0 &+ count <= 1 << 50 {
                let raw = UnsafeMutableRawPointer(out)
                var centres = SIMD4<Double>(0, 1, 2, 3) + (Double(x0) + 0.5)
                while done &+ 4 <= count {
                    raw.storeBytes(of: g.gains(centres: centres, dy: dy), toByteOffset: 4 &* done, as: SIMD4<Float>.self)
                    centres += 4
                    done &+= 4
                }
            }
            referenceGains(out + done, x0: x0 &+ done, count: count &- done, dy: dy)
        }

        /// Row `m − y` when `m = 2·cy − 1` is an integer (below 2⁵⁰, as is `y`): then
        /// `dy` is exact for both rows and only its sign differs, and every gain depends
        /// on `dy²` alone.
        func rowWithSameGains(as y: Int) -> Int {
            guard y.magnitude < 1 << 50, let m = PlanGeometry.mirrorSum(geometry.cy, endingBy: 0) else { return y }
            return m - y
        }

        /// `|1 − i·t| ≤ 1 + |i|` for `t` in [0, 1]; the factor covers the roundings.
        /// Infinite for an intensity beyond `Float`'s range.
        var largestGainMagnitude: Float { Float((1 + geometry.intensity.magnitude) * (1 + 0x1p-16)) }

        /// Walks the row's five spans in order, each clipped to pixels `x0 ..< x0 +
        /// count`: a constant span is scaled by its gain and not even read when that
        /// gain is 1, which leaves every sample as it is (a quiet NaN too); each part of
        /// the band is handed to `band` as whole-row columns `l ..< u`.
        @inline(__always)
        func scaleBySpans(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, x0: Int,
                          spans: (a: Int, b: Int, c: Int, e: Int), band: (Int, Int) -> Void) {
            let keep = AlphaMasks()
            Vignette.forEachSpan(spans, from: x0, to: x0 &+ count, imageWidth: imageWidth,
                                 outsideGain: geometry.outsideGain, insideGain: geometry.insideGain,
                                 constant: { l, u, gain in
                if gain != 1 { Vignette.scaleSpan(p + (l &- x0), count: u &- l, by: gain, keep) }
            }, band: band)
        }

        /// Multiplies R, G, B of `count` pixels by `gains`, span by span: a constant span
        /// by its gain (the same value `gains` holds there), the band by its gains.
        func scale(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int, by gains: UnsafePointer<Float>) {
            guard Vignette.isInside(x0: x0, count: count, imageWidth: imageWidth) else {
                return Vignette.scaleRow(p, count: count, by: UnsafeRawPointer(gains), AlphaMasks())
            }
            let spans = geometry.spans(count: imageWidth, dy: geometry.dy(y)), keep = AlphaMasks()
            scaleBySpans(p, count: count, x0: x0, spans: spans) { l, u in
                Vignette.scaleRow(p + (l &- x0), count: u &- l, by: UnsafeRawPointer(gains + (l &- x0)), keep)
            }
        }

        /// `scale(_:count:y:x0:by:)` with the gains computed a chunk at a time
        /// (`Vignette.chunk`) just before the pixels they scale, so that their arithmetic
        /// overlaps the memory traffic of the pixels already on their way. The gains are
        /// `scheduledGains`' for the whole piece: the columns whose mirror lies earlier in
        /// the piece are copied from it, reversed, the rest computed.
        func scale(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int,
                   writingGainsTo gains: UnsafeMutablePointer<Float>) {
            guard Vignette.isInside(x0: x0, count: count, imageWidth: imageWidth) else {
                rowGains(y: y, x0: x0, count: count, variant: .simd4, into: gains)
                return scale(p, count: count, y: y, x0: x0, by: UnsafePointer(gains))
            }
            let dy = geometry.dy(y), keep = AlphaMasks()
            let spans = geometry.spans(count: imageWidth, dy: dy)
            let m = PlanGeometry.mirrorSum(geometry.cx, endingBy: x0 &+ count)
            Vignette.forEachChunk(x0: x0, count: count, mirrorSum: m, gains: gains, compute: { l, u in
                directGains(gains + (l &- x0), x0: l, count: u &- l, dy: dy, spans: spans)
            }, scale: { first, stop in
                scaleBySpans(p + (first &- x0), count: stop &- first, x0: first, spans: spans) { l, u in
                    Vignette.scaleRow(p + (l &- x0), count: u &- l, by: UnsafeRawPointer(gains + (l &- x0)), keep)
                }
            })
        }

        /// Multiplies R, G, B of `count` pixels by their gains: `.simd4` span by span,
        /// the band a chunk of gains at a time into a stack buffer that stays in L1;
        /// `.scalar` a chunk of reference gains at a time, one product per sample.
        func scale(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int, variant: KernelVariant) {
            let dy = geometry.dy(y)
            withUnsafeTemporaryAllocation(of: Float.self, capacity: Vignette.chunk) { buffer in
                let gains = buffer.baseAddress!
                if variant == .simd4, Vignette.isInside(x0: x0, count: count, imageWidth: imageWidth) {
                    let keep = AlphaMasks()
                    scaleBySpans(p, count: count, x0: x0, spans: geometry.spans(count: imageWidth, dy: dy)) { l, u in
                        var x = l
                        while x < u {
                            let n = min(Vignette.chunk, u &- x)
                            bandGains(gains, from: x, count: n, dy: dy)
                            Vignette.scaleRow(p + (x &- x0), count: n, by: UnsafeRawPointer(gains), keep)
                            x &+= n
                        }
                    }
                    return
                }
                var done = 0
                while done < count {
                    let n = min(Vignette.chunk, count - done)
                    rowGains(y: y, x0: x0 &+ done, count: n, variant: variant, into: gains)
                    for i in 0..<n {
                        p[done + i].x = gains[i] * p[done + i].x
                        p[done + i].y = gains[i] * p[done + i].y
                        p[done + i].z = gains[i] * p[done + i].z
                    }
                    done += n
                }
            }
        }
    }
}
