import PhotoKernels

/// The built-in demo photo, "Lake at sunrise" from the sliders demo, drawn from
/// scratch so the tool can show every kernel without any file to start from.
///
/// The scene, 1000 × 800 pixels, origin top-left, straight-alpha RGBA, every pixel
/// opaque (colours are Apple's light-mode system colours in 8-bit sRGB, used as the
/// working values `c / 255`; gradients are linear in those values, evenly spaced
/// stops, evaluated at pixel centres `y + 0.5`):
///
/// 1. Sky, `y` 0…460: blue (0, 122, 255) → pink (255, 45, 85) → orange (255, 149, 0).
/// 2. Water, `y` 460…800: orange → teal (48, 176, 199) → indigo (88, 86, 214).
/// 3. Sun: a yellow (255, 204, 0) disc of radius 100 at (500, 340), i.e. the box
///    x 400…600, y 240…440, over the sky.
/// 4. Hills: green (52, 199, 89) at 80 % opacity, composited source-over on top of
///    sky, sun and water, filling the region between the cubic Bézier curve from
///    (0, 470) to (1000, 470) with control points (300, 250) and (700, 620) and the
///    straight chord back to (0, 470). The curve's x(t) is strictly increasing, so the
///    region is, in each column, the vertical span between the curve and y = 470: a
///    hill above the chord on the left and a dip below it on the right, both filled
///    under the nonzero rule (each has winding number ±1), as SwiftUI's `Path.fill()`
///    fills them.
///
/// Edges are anti-aliased: the disc by 4 × 4 supersampling of the pixels its edge
/// crosses; the hills by exact vertical coverage of each pixel by the span, averaged
/// over 4 sub-columns. The chord lies on the pixel boundary y = 470, so it needs none.
///
/// Cost: the background is one colour per row, and only the few thousand edge pixels
/// need more than one evaluation, so a debug build renders it in a fraction of a second.
enum DemoPhoto {
    /// The photo's title, as the demo names it.
    static let title = "Lake at sunrise"
    /// The size in pixels.
    static let width = 1000, height = 800
    /// The horizon: sky above, water from here down.
    static let horizon = 460

    /// The system colours, sRGB 8-bit.
    enum Palette {
        static let blue = rgb(0, 122, 255)
        static let pink = rgb(255, 45, 85)
        static let orange = rgb(255, 149, 0)
        static let yellow = rgb(255, 204, 0)
        static let teal = rgb(48, 176, 199)
        static let indigo = rgb(88, 86, 214)
        static let green = rgb(52, 199, 89)

        static func rgb(_ r: Int, _ g: Int, _ b: Int) -> SIMD3<Float> {
            SIMD3(Float(r) / 255, Float(g) / 255, Float(b) / 255)
        }
    }

    /// The sun disc.
    static let sunCenter = SIMD2<Float>(500, 340), sunRadius: Float = 100
    /// The hill outline: the Bézier's control points, and the opacity of its fill.
    static let hillCurve = (SIMD2<Float>(0, 470), SIMD2<Float>(300, 250), SIMD2<Float>(700, 620), SIMD2<Float>(1000, 470))
    static let hillOpacity: Float = 0.8

    /// Renders the photo.
    ///
    /// - Throws: `RasterError` only if the type's fixed size were invalid.
    /// - Complexity: O(width × height), with a small constant (see the type's notes).
    static func render() throws(RasterError) -> FloatImage {
        var pixels = [SIMD4<Float>](repeating: SIMD4(0, 0, 0, 1), count: width * height)
        pixels.withUnsafeMutableBufferPointer { buffer in
            // 1–2. One gradient colour per row.
            for y in 0..<height {
                let c = backgroundColor(row: y)
                let pixel = SIMD4<Float>(c.x, c.y, c.z, 1)
                let start = y * width
                for x in 0..<width { buffer[start + x] = pixel }
            }
            drawSun(into: buffer)
            drawHills(into: buffer)
        }
        return try FloatImage(width: width, height: height, pixels: pixels)
    }

    /// The sky or water colour at the centre of row `y`.
    static func backgroundColor(row y: Int) -> SIMD3<Float> {
        let centre = Float(y) + 0.5
        if y < horizon {
            return gradient(Palette.blue, Palette.pink, Palette.orange, at: centre / Float(horizon))
        }
        return gradient(Palette.orange, Palette.teal, Palette.indigo,
                        at: (centre - Float(horizon)) / Float(height - horizon))
    }

    /// A three-stop linear gradient (stops at 0, ½, 1) at `t` in [0, 1].
    static func gradient(_ a: SIMD3<Float>, _ b: SIMD3<Float>, _ c: SIMD3<Float>, at t: Float) -> SIMD3<Float> {
        let t = min(max(t, 0), 1)
        if t <= 0.5 { return mix(a, b, t * 2) }
        return mix(b, c, (t - 0.5) * 2)
    }

    /// `a + (b − a)·t`, written per channel (fast in debug builds too).
    static func mix(_ a: SIMD3<Float>, _ b: SIMD3<Float>, _ t: Float) -> SIMD3<Float> {
        SIMD3(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t)
    }

    /// Composites `color` with opacity `alpha` over the opaque pixel `p` ("source over").
    static func over(_ color: SIMD3<Float>, alpha: Float, onto p: SIMD4<Float>) -> SIMD4<Float> {
        SIMD4(p.x + (color.x - p.x) * alpha, p.y + (color.y - p.y) * alpha, p.z + (color.z - p.z) * alpha, 1)
    }

    /// 3. The sun: full coverage inside, 4 × 4 supersampling where the edge passes.
    static func drawSun(into buffer: UnsafeMutableBufferPointer<SIMD4<Float>>) {
        let (cx, cy, r) = (sunCenter.x, sunCenter.y, sunRadius)
        let x0 = Int(cx - r), x1 = Int(cx + r), y0 = Int(cy - r), y1 = Int(cy + r)
        for y in y0..<y1 {
            for x in x0..<x1 {
                let dx = Float(x) + 0.5 - cx, dy = Float(y) + 0.5 - cy
                let d = (dx * dx + dy * dy).squareRoot()
                let coverage: Float
                if d <= r - 0.75 {
                    coverage = 1
                } else if d >= r + 0.75 {
                    continue
                } else {
                    var inside = 0
                    for sy in 0..<4 {
                        for sx in 0..<4 {
                            let px = Float(x) + (Float(sx) + 0.5) / 4 - cx
                            let py = Float(y) + (Float(sy) + 0.5) / 4 - cy
                            if px * px + py * py <= r * r { inside += 1 }
                        }
                    }
                    coverage = Float(inside) / 16
                }
                let i = y * width + x
                buffer[i] = over(Palette.yellow, alpha: coverage, onto: buffer[i])
            }
        }
    }

    /// 4. The hills: per sub-column, the exact overlap of the span between the curve
    /// and the chord with the pixel's rows.
    static func drawHills(into buffer: UnsafeMutableBufferPointer<SIMD4<Float>>) {
        let subcolumns = 4
        let chord = hillCurve.0.y
        // The curve's y at the centre of every sub-column.
        var curve = [Float](repeating: chord, count: width * subcolumns)
        for s in curve.indices {
            curve[s] = hillY(atX: (Float(s) + 0.5) / Float(subcolumns))
        }
        let top = max(0, Int((curve.min() ?? chord).rounded(.down)))
        let bottom = min(height, Int((curve.max() ?? chord).rounded(.up)) + 1)
        for x in 0..<width {
            for y in top..<bottom {
                var covered: Float = 0
                for s in 0..<subcolumns {
                    let c = curve[x * subcolumns + s]
                    let low = min(c, chord), high = max(c, chord)
                    covered += max(0, min(high, Float(y + 1)) - max(low, Float(y)))
                }
                guard covered > 0 else { continue }
                let i = y * width + x
                buffer[i] = over(Palette.green, alpha: hillOpacity * covered / Float(subcolumns), onto: buffer[i])
            }
        }
    }

    /// The hill curve's y where its x equals `x` (0…1000): x(t) is strictly increasing,
    /// so bisection on t finds the one parameter (to well below a thousandth of a pixel).
    static func hillY(atX x: Float) -> Float {
        var low: Float = 0, high: Float = 1
        for _ in 0..<30 {
            let mid = (low + high) / 2
            if bezier(mid).x < x { low = mid } else { high = mid }
        }
        return bezier((low + high) / 2).y
    }

    /// The hill curve at parameter `t`.
    static func bezier(_ t: Float) -> SIMD2<Float> {
        let (p0, p1, p2, p3) = hillCurve
        let u = 1 - t
        let (a, b, c, d) = (u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t)
        return SIMD2(a * p0.x + b * p1.x + c * p2.x + d * p3.x,
                     a * p0.y + b * p1.y + c * p2.y + d * p3.y)
    }
}
