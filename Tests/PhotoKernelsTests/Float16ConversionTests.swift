#if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
import Testing
@testable import PhotoKernels

/// `Float16Conversion`, the four-lane conversions the row codecs use where the build has
/// no F16C, against the toolchain's own `Float(h)` and `Float16(x)` (in these
/// unoptimised tests a call into the standard library; in an optimised build with F16C,
/// `vcvtph2ps` and `vcvtps2ph`), bit for bit. The release-built exactness check covers
/// all 2³² floats; here every half and every rounding boundary.
@Suite("Float16 conversion")
struct Float16ConversionTests {
    /// The toolchain's rounding of `x`, as bits.
    static func reference(_ x: Float) -> UInt16 { Float16(x).bitPattern }

    /// Every one of the 2¹⁶ halves, four to a vector in changing lanes.
    @Test func widensEveryHalf() {
        var wrong: [String] = []
        for start in stride(from: 0, to: 1 << 16, by: 4) {
            // Lanes hold halves 16 384 apart, so one vector mixes signs and classes.
            let bits = SIMD4<UInt16>((0..<4).map { UInt16(truncatingIfNeeded: start / 4 + $0 << 14) })
            let result = Float16Conversion.widened(bits)
            for lane in 0..<4 where result[lane].bitPattern != Float(Float16(bitPattern: bits[lane])).bitPattern {
                wrong.append("0x\(String(bits[lane], radix: 16)) → 0x\(String(result[lane].bitPattern, radix: 16))")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) halves widened wrong, first \(wrong.prefix(4))")
    }

    /// Hand-computed values: the classes, a signalling NaN made quiet.
    @Test func widensByHand() {
        let bits = SIMD4<UInt16>(0x3C00, 0x0001, 0x7D00, 0xFBFF)
        let result = Float16Conversion.widened(bits)
        #expect(result[0] == 1)
        #expect(result[1] == 0x1p-24)
        #expect(result[2].bitPattern == 0x7FE0_0000)
        #expect(result[3] == -65504)
        let specials = Float16Conversion.widened(SIMD4(0x8000, 0x7C00, 0xFC00, 0x03FF))
        #expect(specials[0].bitPattern == 0x8000_0000)
        #expect(specials[1] == .infinity && specials[2] == -.infinity)
        #expect(specials[3] == 0x3FFp-24)
    }

    /// For every non-negative half `h` below infinity, and each sign: `h` itself, the
    /// tie halfway to the next half and its two `Float` neighbours, and the neighbours
    /// of `h` — the floats where round-to-nearest-even changes its answer. Exact ties
    /// round to the even half.
    @Test func roundsAtEveryBoundary() {
        var wrong: [String] = []
        var ties = 0
        for magnitude in UInt16(0)..<0x7C00 {
            let low = Float(Float16(bitPattern: magnitude))
            let high = magnitude == 0x7BFF ? Float(65536) : Float(Float16(bitPattern: magnitude + 1))
            let tie = (low + high) / 2  // exact: the halves' significands are shorter
            for sign in [Float(1), -1] {
                let inputs = [low, low.nextUp, tie.nextDown, tie, tie.nextUp, low.nextDown, high.nextDown, tie]
                for quad in stride(from: 0, to: inputs.count, by: 4) {
                    let x = SIMD4<Float>(inputs[quad..<(quad + 4)]) * sign
                    let result = Float16Conversion.rounded(x)
                    for lane in 0..<4 where result[lane] != Self.reference(x[lane]) {
                        wrong.append("\(x[lane]) (0x\(String(x[lane].bitPattern, radix: 16))) → 0x\(String(result[lane], radix: 16))")
                    }
                }
                let r = Float16Conversion.rounded(SIMD4(repeating: tie * sign))[0]
                if r & 1 == 0 { ties += 1 }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first \(wrong.prefix(4))")
        // Every tie went to the even half (one in two of them is `low`'s side).
        #expect(ties == 2 * 0x7C00)
    }

    /// The specials and the edges of the range, by hand and against the toolchain.
    @Test func roundsTheSpecials() {
        let cases: [(Float, UInt16)] = [
            (0, 0x0000), (-0.0, 0x8000), (1, 0x3C00), (65504, 0x7BFF), (65519.996, 0x7BFF), (65520, 0x7C00),
            (65536, 0x7C00), (65600, 0x7C00), (0x1.FFFFFEp16, 0x7C00), (1e9, 0x7C00),
            (.greatestFiniteMagnitude, 0x7C00), (-.infinity, 0xFC00), (0x1p-24, 0x0001), (0x1p-25, 0x0000),
            (0x1.000002p-25, 0x0001), (0x1.8p-24, 0x0002), (0x1p-14, 0x0400), (0x1.FFCp-15, 0x0400), (0x1.FF8p-15, 0x03FF),
            (.leastNonzeroMagnitude, 0x0000), (-.leastNormalMagnitude, 0x8000), (1 + 0x1p-11, 0x3C00),
            ((1 + 0x1p-11 as Float).nextUp, 0x3C01), (1 + 0x3p-11, 0x3C02),
            // NaNs: quiet, sign and the payload's top 9 bits kept.
            (Float(bitPattern: 0x7F80_0001), 0x7E00), (Float(bitPattern: 0x7FA0_0000), 0x7F00),
            (Float(bitPattern: 0xFFC1_2345), 0xFE09), (Float(bitPattern: 0x7FFF_FFFF), 0x7FFF),
        ]
        for quad in stride(from: 0, to: cases.count, by: 4) {
            let chosen = (0..<4).map { cases[min(quad + $0, cases.count - 1)] }
            let result = Float16Conversion.rounded(SIMD4(chosen.map(\.0)))
            for lane in 0..<4 {
                let (x, expected) = chosen[lane]
                #expect(result[lane] == expected, "\(x) (0x\(String(x.bitPattern, radix: 16)))")
                #expect(result[lane] == Self.reference(x), "\(x): the toolchain rounds it otherwise")
            }
        }
    }

    /// Every `Float` exponent, both signs, its significands at a stride of 5039 (a
    /// prime, so the 13 bits rounding drops take values all over their range, above,
    /// below and at the half): a sweep across each class's edges.
    @Test func roundsAcrossEveryExponent() {
        var wrong: [String] = []
        for high in UInt32(0)..<512 {
            var values = stride(from: UInt32(0), to: 1 << 23, by: 5039).map { high << 23 | $0 }
            values += Array(repeating: values[0], count: (4 - values.count % 4) % 4)
            for quad in stride(from: 0, to: values.count, by: 4) {
                let x = unsafeBitCast(SIMD4<UInt32>(values[quad..<(quad + 4)]), to: SIMD4<Float>.self)
                let result = Float16Conversion.rounded(x)
                for lane in 0..<4 where result[lane] != Self.reference(x[lane]) {
                    wrong.append("0x\(String(x[lane].bitPattern, radix: 16)) → 0x\(String(result[lane], radix: 16))")
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first \(wrong.prefix(4))")
    }

    /// The widening block's rounding of its results (`HalfPacking.halfWords`, in this
    /// build's form: `vcvtps2ph`, or in the baseline x86-64 build its SSE2 rounding of
    /// finite values) at the boundaries of `roundsAtEveryBoundary` for every 61st half
    /// and every half at the ends of the normal and subnormal ranges, across every
    /// exponent at a stride, and at the specials (the unoptimised build is slow: the
    /// release-built exactness check holds the block's results on all 2²⁴ RGB triples
    /// to `HalfTolerance`); a NaN gives the toolchain's NaN, or in the baseline x86-64
    /// build an infinity of its sign.
    @Test func blockRounding() {
        let lanes = BlockFloats.scalarCount
        var inputs: [Float] = []
        let magnitudes = Array(stride(from: UInt16(0), to: 0x7C00, by: 61)) + Array(0..<32) + Array(0x3F0..<0x410)
            + Array(0x7BE0..<0x7C00)
        for magnitude in magnitudes {
            let low = Float(Float16(bitPattern: magnitude))
            let high = magnitude == 0x7BFF ? Float(65536) : Float(Float16(bitPattern: magnitude + 1))
            let tie = (low + high) / 2
            inputs += [low, low.nextUp, tie.nextDown, tie, tie.nextUp, low.nextDown, high.nextDown].flatMap { [$0, -$0] }
        }
        for high in UInt32(0)..<512 {
            inputs += stride(from: UInt32(0), to: 1 << 23, by: 524_287).map { Float(bitPattern: high << 23 | $0) }
        }
        inputs += [65520, 65536, 1e9, .greatestFiniteMagnitude, .infinity, -.infinity, 0x1p-25, 0x1.000002p-25,
                   .leastNonzeroMagnitude, -0.0]
        let nans = [Float(bitPattern: 0x7F80_0001), Float(bitPattern: 0xFFC1_2345), .nan]
        inputs += nans
        inputs += Array(repeating: 1, count: (lanes - inputs.count % lanes) % lanes)
        // What a NaN gives in this build's form.
        #if arch(x86_64) && !canImport(TargetFeatures.F16C) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
        let forNaN: (Float) -> UInt32 = { $0.sign == .minus ? 0xFC00 : 0x7C00 }
        #else
        let forNaN: (Float) -> UInt32 = { UInt32(Self.reference($0)) }
        #endif
        var wrong: [String] = [], checkedNaNs = 0
        for start in stride(from: 0, to: inputs.count, by: lanes) {
            let x = BlockFloats(inputs[start..<(start + lanes)])
            let result = HalfPacking.halfWords(x)
            for lane in 0..<lanes {
                let expected = x[lane].isNaN ? forNaN(x[lane]) : UInt32(Self.reference(x[lane]))
                if x[lane].isNaN { checkedNaNs += 1 }
                if result[lane] != expected {
                    wrong.append("0x\(String(x[lane].bitPattern, radix: 16)) → 0x\(String(result[lane], radix: 16))")
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first \(wrong.prefix(4))")
        #expect(checkedNaNs == inputs.count { $0.isNaN } && checkedNaNs > nans.count)
    }

    /// Pseudo-random bit patterns in all four lanes, every class mixed in one vector,
    /// and the round trip of every half.
    @Test func mixedLanesAndRoundTrip() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var wrong = 0
        for _ in 0..<20_000 {
            var lanes = SIMD4<UInt32>()
            for lane in 0..<4 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                lanes[lane] = UInt32(truncatingIfNeeded: state >> 32)
            }
            let x = unsafeBitCast(lanes, to: SIMD4<Float>.self)
            let result = Float16Conversion.rounded(x)
            for lane in 0..<4 where result[lane] != Self.reference(x[lane]) { wrong += 1 }
        }
        #expect(wrong == 0)
        // Widening then rounding gives every half back (a signalling NaN quiet).
        for start in stride(from: 0, to: 1 << 16, by: 4) {
            let bits = SIMD4<UInt16>((0..<4).map { UInt16(start + $0) })
            let back = Float16Conversion.rounded(Float16Conversion.widened(bits))
            for lane in 0..<4 {
                let h = Float16(bitPattern: bits[lane])
                let expected = h.isSignalingNaN ? bits[lane] | 0x0200 : bits[lane]
                if back[lane] != expected { wrong += 1 }
            }
        }
        #expect(wrong == 0)
    }

    /// The `Float16` formats of one to three samples, which the row codecs convert a few
    /// hundred samples at a time on either side of the `Float` loop (where the build has
    /// no F16C); the downscaler's reader does so for every format.
    static let chunkedFormats: [(ChannelOrder, AlphaMode)] = [
        (.gray, .none), (.grayAlpha, .straight), (.grayAlpha, .premultiplied), (.rgb, .none), (.bgr, .none),
    ]

    /// Widths on both sides of the scratch's runs (192 samples: 192, 96, 64 or 48
    /// pixels) and of the four-sample groups.
    static let chunkWidths = Array(1...9) + [47, 48, 49, 63, 64, 65, 95, 96, 97, 191, 192, 193, 385]

    /// Equal bits, or NaN where the formula gives NaN (a quotient's or product's
    /// payload is the hardware's).
    static func same(_ a: Float, _ b: Float) -> Bool { a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN) }

    /// Every lane's bits equal.
    static func identical(_ a: SIMD4<Float>, _ b: SIMD4<Float>) -> Bool {
        unsafeBitCast(a, to: SIMD4<UInt32>.self) == unsafeBitCast(b, to: SIMD4<UInt32>.self)
    }

    /// Runs `body` on a copy of `values` one sample past an aligned address (buffers
    /// need only their sample's alignment), then copies it back.
    static func offByOneSample<T>(_ values: inout [T], _ body: (UnsafeMutableRawPointer) -> Void) {
        let bytes = values.count * MemoryLayout<T>.stride
        let memory = UnsafeMutableRawPointer.allocate(byteCount: bytes + MemoryLayout<T>.stride, alignment: 64)
        defer { memory.deallocate() }
        let at = memory + MemoryLayout<T>.stride
        values.withUnsafeMutableBytes { at.copyMemory(from: $0.baseAddress!, byteCount: bytes) }
        body(at)
        values.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: at, byteCount: bytes) }
    }

    /// Pseudo-random 16-bit patterns: every class of half, NaNs with payloads included.
    static func randomHalves(_ count: Int, _ state: inout UInt64) -> [UInt16] {
        (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt16(truncatingIfNeeded: state >> 40)
        }
    }

    @Test("Float16 formats of one to three samples, widths 1…385 across the scratch's runs, the rows one half past an aligned address: decoding widens every sample as Float(h) (grey as R = G = B, alpha 1 without alpha, premultiplied colour / alpha, alpha 0 all zero), encoding rounds every sample as Float16(x) (grey the luma, premultiplied colour clamped times alpha), nothing past the row written")
    func chunkedRowCodecs() throws {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        let specials: [Float] = [0, -0, 1, 65504, 65519.996, 65520, 1e6, -1e6, .infinity, -.infinity, .nan,
                                 Float(bitPattern: 0x7FC0_1234), Float(bitPattern: 0xFFA0_0000),
                                 0x1p-24, 0x1.8p-24, 0x1p-25, 0x1.0p-14, 0x1.ffcp-15, -0x1p-20, 0.5, 2.5e-5]
        for (order, mode) in Self.chunkedFormats {
            let codec = RowCodec(format: try PixelFormat(order, alpha: mode, sample: .float16))
            let n = order.channelCount, (ri, gi, bi) = order.colorIndices, ai = order.alphaIndex
            for width in Self.chunkWidths {
                let what = "\(order) \(mode) width \(width)"
                // Decoding: random bits, and a few alphas of ±0 and 1.
                var halves = Self.randomHalves(n * width, &state)
                if let ai {
                    for x in stride(from: 0, to: width, by: 5) { halves[x * n + ai] = [0x0000, 0x8000, 0x3C00][x % 3] }
                }
                var decoded = [SIMD4<Float>](repeating: SIMD4(repeating: -7), count: width + 1)
                Self.offByOneSample(&halves) { p in decoded.withUnsafeMutableBufferPointer { codec.decode(p, count: width, into: $0.baseAddress!) } }
                var wrong = 0
                for x in 0..<width {
                    let value = { (c: Int) in Float(Float16(bitPattern: halves[x * n + c])) }
                    var expected = SIMD4<Float>(value(ri), value(gi), value(bi), ai.map(value) ?? 1)
                    if mode == .premultiplied {
                        let a = expected.w
                        expected = a == 0 ? SIMD4() : SIMD4(expected.x / a, expected.y / a, expected.z / a, a)
                    }
                    // Widening alone gives the toolchain's bits; a quotient's NaN may differ.
                    if mode == .premultiplied ? !(0..<4).allSatisfy({ Self.same(decoded[x][$0], expected[$0]) })
                        : !Self.identical(decoded[x], expected) { wrong += 1 }
                }
                #expect(wrong == 0, "\(what): \(wrong) pixels decoded wrong")
                #expect(decoded[width] == SIMD4(repeating: -7), "\(what): decoded past the row")

                // Encoding: random values and specials, and a few alphas of 0 and 1.
                let source: [SIMD4<Float>] = (0..<width).map { x in
                    var p = SIMD4<Float>()
                    for lane in 0..<4 {
                        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                        p[lane] = state >> 63 == 0 ? specials[Int(state >> 33) % specials.count]
                            : Float(Int(truncatingIfNeeded: state >> 40) % 3000) / 2000
                    }
                    if x % 7 == 3 { p.w = [0, 1][x % 2] }
                    return p
                }
                var encoded = [UInt16](repeating: 0xBEEF, count: n * width + 3)
                Self.offByOneSample(&encoded) { p in source.withUnsafeBufferPointer { codec.encode($0.baseAddress!, count: width, into: p) } }
                wrong = 0
                for x in 0..<width {
                    var c = source[x]
                    if mode == .premultiplied {
                        func clamp(_ v: Float) -> Float { let y = v > 0 ? v : 0; return y < 1 ? y : 1 }
                        c = SIMD4(clamp(c.x) * c.w, clamp(c.y) * c.w, clamp(c.z) * c.w, c.w)
                    }
                    var expected = [Float](repeating: 0, count: n)
                    if order == .gray || order == .grayAlpha {
                        expected[0] = Luma.weights.x * c.x + Luma.weights.y * c.y + Luma.weights.z * c.z
                    } else {
                        (expected[ri], expected[gi], expected[bi]) = (c.x, c.y, c.z)
                    }
                    if let ai { expected[ai] = c.w }
                    for k in 0..<n {
                        let (got, want) = (encoded[x * n + k], Float16(expected[k]).bitPattern)
                        if got != want && !(mode == .premultiplied && Float16(bitPattern: got).isNaN && Float16(bitPattern: want).isNaN) {
                            wrong += 1
                        }
                    }
                }
                #expect(wrong == 0, "\(what): \(wrong) samples encoded wrong")
                #expect(encoded[(n * width)...].allSatisfy { $0 == 0xBEEF }, "\(what): wrote past the row")
            }
        }
    }

    @Test("the downscaler's reader widens every Float16 sample as Float(h), in every Float16 format across its runs, the rows one half past an aligned address: straight colour times alpha, premultiplied as stored, grey as R = G = B, alpha 1 without alpha")
    func chunkedPremultipliedDecoder() throws {
        var state: UInt64 = 0xDA94_2042_E4DD_58B5
        let formats = ChannelOrder.allCases.flatMap { order in
            (order.hasAlpha ? [AlphaMode.straight, .premultiplied] : [.none]).map { (order, $0) }
        }
        #expect(formats.count == 17)
        for (order, mode) in formats {
            let format = try PixelFormat(order, alpha: mode, sample: .float16)
            let n = order.channelCount, (ri, gi, bi) = order.colorIndices, ai = order.alphaIndex
            for width in Self.chunkWidths {
                var halves = Self.randomHalves(n * width, &state)
                var decoded = [SIMD4<Float>](repeating: SIMD4(repeating: -7), count: width + 1)
                Self.offByOneSample(&halves) { p in
                    decoded.withUnsafeMutableBufferPointer { PremultipliedDecoder.decode(p, format: format, count: width, into: $0.baseAddress!) }
                }
                var wrong = 0
                for x in 0..<width {
                    let value = { (c: Int) in Float(Float16(bitPattern: halves[x * n + c])) }
                    let a = ai.map(value) ?? 1
                    var expected = SIMD4<Float>(value(ri), value(gi), value(bi), a)
                    if mode == .straight { expected = SIMD4(expected.x * a, expected.y * a, expected.z * a, a) }
                    if mode == .straight ? !(0..<4).allSatisfy({ Self.same(decoded[x][$0], expected[$0]) })
                        : !Self.identical(decoded[x], expected) { wrong += 1 }
                }
                #expect(wrong == 0, "\(order) \(mode) width \(width): \(wrong) pixels wrong")
                #expect(decoded[width] == SIMD4(repeating: -7), "\(order) \(mode) width \(width): past the row")
            }
        }
    }
}
#endif
