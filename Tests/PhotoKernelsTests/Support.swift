import Foundation
import Testing
@testable import PhotoKernels

/// A small, fast, seeded generator (SplitMix64) so random tests are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Eight values for the packing tests of the blocks: each, at random, one of `specials`
/// or uniform in −2…maxval + 2.
func packingLanes(_ specials: [Float], maxval: Int, using rng: inout SeededGenerator) -> SIMD8<Float> {
    SIMD8((0..<8).map { _ in
        Bool.random(using: &rng) ? specials.randomElement(using: &rng)! : Float.random(in: -2...Float(maxval + 2), using: &rng)
    })
}

/// Widths 1…33 cover every remainder of an 8- or 16-pixel block; the heights are odd.
let testWidths = Array(1...33)
let testHeights = [1, 3, 5]

/// Shapes used by the scalar-vs-SIMD equivalence tests: every width with each odd height.
let testShapes: [(width: Int, height: Int)] = testWidths.flatMap { w in testHeights.map { (w, $0) } }

/// A seeded random image whose R, G, B and A lie in [−1, 2] (SPEC §8's input range),
/// with a few exact 0/1 values and, if `nanEvery` > 0, a NaN channel every `nanEvery` pixels.
func randomImage(width: Int, height: Int, seed: UInt64, nanEvery: Int = 0) throws -> FloatImage {
    var rng = SeededGenerator(seed: seed &+ UInt64(width * 1000 + height))
    var pixels = (0..<(width * height)).map { _ in
        SIMD4<Float>(Float.random(in: -1...2, using: &rng), Float.random(in: -1...2, using: &rng),
                     Float.random(in: -1...2, using: &rng), Float.random(in: 0...1, using: &rng))
    }
    for i in stride(from: 0, to: pixels.count, by: 7) { pixels[i] = SIMD4(0, 1, 0.5, 1) }
    if nanEvery > 0 {
        for i in stride(from: nanEvery / 2, to: pixels.count, by: nanEvery) {
            pixels[i][i % 3] = .nan
        }
    }
    return try FloatImage(width: width, height: height, pixels: pixels)
}

/// A seeded random image with every channel in [0, 1] (a photo's range).
func randomPhoto(width: Int, height: Int, seed: UInt64) throws -> FloatImage {
    var rng = SeededGenerator(seed: seed)
    return try FloatImage(width: width, height: height, pixels: (0..<(width * height)).map { _ in
        SIMD4<Float>(Float.random(in: 0...1, using: &rng), Float.random(in: 0...1, using: &rng),
                     Float.random(in: 0...1, using: &rng), Float.random(in: 0...1, using: &rng))
    })
}

/// Checks SPEC §8's float bound channel by channel: `|a − b| ≤ tolerance`, NaN only
/// where the other is NaN. On failure it records the pixel, its input, both values
/// and the error, for the first few offending channels.
func expectClose(_ observed: FloatImage, _ expected: FloatImage, input: FloatImage? = nil, tolerance: Float = 1e-5,
                 _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(observed.width == expected.width && observed.height == expected.height, "\(what): size", sourceLocation: sourceLocation)
    var failures = 0
    for i in 0..<min(observed.pixelCount, expected.pixelCount) {
        for c in 0..<4 {
            let a = observed.pixels[i][c], b = expected.pixels[i][c]
            let ok = (a.isNaN && b.isNaN) || (!a.isNaN && !b.isNaN && abs(a - b) <= tolerance) || a == b
            if !ok {
                failures += 1
                if failures <= 3 {
                    let x = i % observed.width, y = i / observed.width
                    let inputText = input.map { " input \($0.pixels[i])" } ?? ""
                    Issue.record("\(what) \(observed.width)×\(observed.height): pixel (\(x), \(y)) channel \(c)\(inputText): expected \(b), observed \(a), error \(abs(a - b))",
                                 sourceLocation: sourceLocation)
                }
            }
        }
    }
    if failures > 3 {
        Issue.record("\(what): \(failures) channels out of tolerance in all", sourceLocation: sourceLocation)
    }
}

/// Checks that two images are equal to the bit (NaN payloads included).
func expectBitEqual(_ a: FloatImage, _ b: FloatImage, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let same = a.pixels.count == b.pixels.count && zip(a.pixels, b.pixels).allSatisfy { p, q in
        (0..<4).allSatisfy { p[$0].bitPattern == q[$0].bitPattern }
    }
    #expect(same, "\(what): images differ in bits", sourceLocation: sourceLocation)
}

/// Runs `kernels` with `variant` on a copy of `image`, single-threaded.
func run(_ kernels: [any PixelKernel], on image: FloatImage, _ variant: KernelVariant, threads: Int = 1) -> FloatImage {
    image.applying(kernels, variant: variant, threads: threads)
}

/// The shared double-precision reference vectors (`Vectors/kernels.json`, a copy of
/// `../shared/vectors/kernels.json`).
struct ReferenceVectors: Decodable {
    struct Case: Decodable {
        var kernel: String
        var parameters: [String: Parameter]
        var input: Input
        var expected: [[Double]]?
        var width: Int?
        var height: Int?
        var expected_gain_rows: [[Double]]?
    }
    /// A parameter value: a number, a string or a list of numbers.
    enum Parameter: Decodable {
        case number(Double), text(String), list([Double])
        init(from decoder: Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let d = try? c.decode(Double.self) { self = .number(d) }
            else if let s = try? c.decode(String.self) { self = .text(s) }
            else { self = .list(try c.decode([Double].self)) }
        }
        var number: Double { if case .number(let d) = self { return d }; fatalError("not a number: \(self)") }
        var text: String { if case .text(let s) = self { return s }; fatalError("not text: \(self)") }
        var list: [Double] { if case .list(let l) = self { return l }; fatalError("not a list: \(self)") }
    }
    /// Pixels, or a description such as "all pixels (1, 1, 1, 1)" for the vignette cases.
    enum Input: Decodable {
        case pixels([[Double]]), text(String)
        init(from decoder: Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let p = try? c.decode([[Double]].self) { self = .pixels(p) } else { self = .text(try c.decode(String.self)) }
        }
    }
    var cases: [Case]

    static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Vectors/kernels.json")
    static let shared: ReferenceVectors = {
        let data = try! Data(contentsOf: url)
        return try! JSONDecoder().decode(ReferenceVectors.self, from: data)
    }()

    /// The cases of one kernel name.
    static func cases(_ kernel: String) -> [Case] { shared.cases.filter { $0.kernel == kernel } }
}

extension ReferenceVectors.Case {
    /// The input pixels as a one-row image.
    var inputImage: FloatImage {
        get throws {
            guard case .pixels(let rows) = input else { fatalError("case \(kernel) has no pixel input") }
            return try FloatImage(width: rows.count, height: 1, pixels: rows.map { SIMD4(Float($0[0]), Float($0[1]), Float($0[2]), Float($0[3])) })
        }
    }
    /// The expected pixels as a one-row image.
    var expectedImage: FloatImage {
        get throws {
            let rows = expected!
            return try FloatImage(width: rows.count, height: 1, pixels: rows.map { SIMD4(Float($0[0]), Float($0[1]), Float($0[2]), Float($0[3])) })
        }
    }
}

/// Whether `a` equals `b` to the bit, except that a colour channel where both are
/// NaN passes whatever the payloads. Which NaN payload survives `x + y` when both are
/// NaN is decided by the instruction's operand order, which the compiler may choose
/// differently for two correct schedules (SPEC §8 asks only "NaN where the other is
/// NaN"). Alpha is compared to the bit always: it is copied, never computed.
func sameBits(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> Bool {
    (0..<3).allSatisfy { c in a[c].bitPattern == b[c].bitPattern || (a[c].isNaN && b[c].isNaN) }
        && a.w.bitPattern == b.w.bitPattern
}

/// Runs `kernel` (`.simd4`) on `count` pixels placed at `start` in a 64-byte-aligned
/// buffer with guard pixels around them; returns the row and whether the guards are
/// untouched. An even `start` puts the row on a 32-byte boundary, an odd one 16 bytes
/// past it (where the two-pixel schedules take the first pixel alone), and `start`
/// 0…3 gives every 16-byte offset within a cache line.
func runRow(_ kernel: any PixelKernel, _ pixels: [SIMD4<Float>], start: Int,
                    variant: KernelVariant = .simd4) -> (row: [SIMD4<Float>], guardsIntact: Bool) {
    let guardPixel = SIMD4<Float>(Float(bitPattern: 0x7FC0_BEEF), -1234.5, .infinity, Float(bitPattern: 0xFFC0_0ABC))
    let total = start + pixels.count + 3
    let raw = UnsafeMutableRawPointer.allocate(byteCount: 16 * total, alignment: 64)
    defer { raw.deallocate() }
    let all = raw.initializeMemory(as: SIMD4<Float>.self, repeating: guardPixel, count: total)
    (all + start).update(from: pixels, count: pixels.count)
    kernel.apply(UnsafeMutableBufferPointer(start: all + start, count: pixels.count),
                 at: RowLocation(y: 0, imageWidth: pixels.count, imageHeight: 1), variant: variant)
    let buffer = Array(UnsafeBufferPointer(start: all, count: total))
    let guards = buffer[..<start] + buffer[(start + pixels.count)...]
    let intact = guards.allSatisfy { p in (0..<4).allSatisfy { p[$0].bitPattern == guardPixel[$0].bitPattern } }
    return (Array(buffer[start..<(start + pixels.count)]), intact)
}

/// `pixels` after `body` ran on them in place at pixel `start` of a 64-byte-aligned
/// buffer: an even `start` is on a 32-byte boundary, an odd one 16 bytes past it.
func inPlace(_ pixels: [SIMD4<Float>], start: Int, _ body: (UnsafeMutablePointer<SIMD4<Float>>) -> Void) -> [SIMD4<Float>] {
    let raw = UnsafeMutableRawPointer.allocate(byteCount: 16 * (start + pixels.count), alignment: 64)
    defer { raw.deallocate() }
    let row = raw.bindMemory(to: SIMD4<Float>.self, capacity: start + pixels.count) + start
    row.initialize(from: pixels, count: pixels.count)
    body(row)
    return Array(UnsafeBufferPointer(start: row, count: pixels.count))
}

/// `count` pixels, seeded: RGB mostly in [−1, 2] with one of `specials` in about
/// one channel in five, alpha either random in [0, 1] or a special value (NaN payloads included).
func fastPathPixels(_ count: Int, seed: UInt64, specials: [Float]) -> [SIMD4<Float>] {
    var rng = SeededGenerator(seed: seed)
    return (0..<count).map { _ in
        var p = SIMD4<Float>(Float.random(in: -1...2, using: &rng), Float.random(in: -1...2, using: &rng),
                             Float.random(in: -1...2, using: &rng), Float.random(in: 0...1, using: &rng))
        for c in 0..<4 where Int.random(in: 0..<5, using: &rng) == 0 {
            p[c] = specials[Int.random(in: 0..<specials.count, using: &rng)]
        }
        return p
    }
}

/// `samples` (interleaved R G B A, each ≤ `maxval`) through `plan` at their real width:
/// as `UInt8` for maxval 255, the type of the 8-bit fused block, else as `UInt16`; the
/// result widened to `UInt16`.
func runRGBA(_ plan: PreparedEditPlan, _ samples: [UInt16], maxval: Int, variant: KernelVariant = .simd4) throws -> [UInt16] {
    if maxval == 255 {
        let bytes = samples.map { UInt8($0) }
        var result = [UInt8](repeating: 0, count: bytes.count)
        try bytes.withUnsafeBufferPointer { i in
            try result.withUnsafeMutableBufferPointer { o in
                try plan.run(input: i, inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba, outputMaxval: 255,
                             variant: variant)
            }
        }
        return result.map(UInt16.init)
    }
    var result = [UInt16](repeating: 0, count: samples.count)
    try samples.withUnsafeBufferPointer { i in
        try result.withUnsafeMutableBufferPointer { o in
            try plan.run(input: i, inputLayout: .rgba, inputMaxval: maxval, output: o, outputLayout: .rgba, outputMaxval: maxval,
                         variant: variant)
        }
    }
    return result
}

/// What a row encoder stores for the straight pixel `x` in `mode` (SPEC §10): a
/// premultiplied pixel's colour clamped to [0, 1] (NaN to 0) and times alpha, alpha as
/// it is; otherwise `x` itself.
func encoderInput(_ x: SIMD4<Float>, _ mode: AlphaMode) -> SIMD4<Float> {
    guard mode == .premultiplied else { return x }
    func clamp(_ c: Float) -> Float { c > 0 ? min(c, 1) : 0 }
    return SIMD4(clamp(x.x) * x.w, clamp(x.y) * x.w, clamp(x.z) * x.w, x.w)
}

/// A random row of `width` pixels of four integer samples, with the alphas a row
/// decoder's opacity test must tell apart: every third pixel's alpha one of `cycle`;
/// at even widths opaque runs (groups of four or eight opaque pixels take a path of
/// their own) broken every seventh pixel; at odd widths from 9, white colour under
/// alphas short of opaque, group by group of four pixels one short, the top bit clear,
/// or only the low half set (0xFFFE, 0x7FFF, 0x00FF at 16 bits), opaque every eleventh
/// pixel: a test of the wrong sample, or of part of it, would take them for opaque.
/// `places`: the memory places of R, G, B and alpha.
func rowWithAlphaPatterns<Sample: FixedWidthInteger & UnsignedInteger>(
    width: Int, places: [Int], cycle: [Sample], using rng: inout SeededGenerator) -> [Sample] {
    var row = (0..<(4 * width)).map { _ in Sample.random(in: 0...Sample.max, using: &rng) }
    for i in stride(from: 0, to: width, by: 3) { row[4 * i + places[3]] = cycle[(i / 3) % cycle.count] }
    if width % 2 == 0 { for i in 0..<width where i % 7 != 5 { row[4 * i + places[3]] = Sample.max } }
    if width % 2 == 1, width >= 9 {
        for i in 0..<width {
            for k in 0..<3 { row[4 * i + places[k]] = Sample.max }
            let short = [Sample.max - 1, Sample.max >> 1, Sample.max >> (Sample.bitWidth / 2)][(i / 4) % 3]
            row[4 * i + places[3]] = i % 11 == 10 ? Sample.max : short
        }
    }
    return row
}

/// SPEC §0 and §10's decoding of one pixel whose samples, in R G B A order, are the
/// integers `v` at maxval `m`, as the generic row loop computes it: `v / m`, alpha 1
/// without alpha; premultiplied `c / A` of the integers and `A / m`, all zero at A = 0.
func decodedPixel(_ v: [Float], _ mode: AlphaMode, maxval m: Float) -> SIMD4<Float> {
    switch mode {
    case .none: SIMD4(v[0] / m, v[1] / m, v[2] / m, 1)
    case .straight: SIMD4(v[0] / m, v[1] / m, v[2] / m, v[3] / m)
    case .premultiplied: v[3] == 0 ? SIMD4() : SIMD4(v[0] / v[3], v[1] / v[3], v[2] / v[3], v[3] / m)
    }
}
