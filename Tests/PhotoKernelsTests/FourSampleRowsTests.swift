import Testing
@testable import PhotoKernels

/// The row codecs for pixels of four 16-bit, `Float` or `Float16` samples (SPEC §0,
/// §10): every channel order and alpha mode, bit for bit against the generic per-sample
/// loop and against the formulas it states.
@Suite("Four-sample row codecs")
struct FourSampleRowsTests {
    /// Each four-channel order with the memory places of R, G, B and the fourth sample.
    static let orders: [(ChannelOrder, [Int])] = [
        (.rgba, [0, 1, 2, 3]), (.bgra, [2, 1, 0, 3]), (.argb, [1, 2, 3, 0]), (.abgr, [3, 2, 1, 0]),
        (.rgbx, [0, 1, 2, 3]), (.bgrx, [2, 1, 0, 3]), (.xrgb, [1, 2, 3, 0]), (.xbgr, [3, 2, 1, 0]),
    ]

    static let widths = Array(1...33) + [64, 67]

    static func modes(_ order: ChannelOrder) -> [AlphaMode] {
        order.alphaIndex == nil ? [.none] : [.straight, .premultiplied]
    }

    /// NaNs with payloads, signalling and negative, beside the usual specials; the
    /// last two with payload bits that survive rounding to `Float16`.
    static let nans: [Float] = [.nan, Float(bitPattern: 0x7F80_0001), Float(bitPattern: 0x7FC0_1234),
                                Float(bitPattern: 0xFFC0_0000), Float(bitPattern: 0x7FA0_0000),
                                Float(bitPattern: 0xFFD5_4000)]

    /// The same `Float`, any NaN matching any NaN: for the formulas, which do not fix
    /// a NaN's payload.
    static func same(_ a: Float, _ b: Float) -> Bool { a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN) }

    /// Runs `body` on a copy of `samples` placed `offset` bytes past a 64-byte boundary
    /// (buffers need only their sample's alignment), then copies it back.
    static func atOffset<Sample>(_ samples: inout [Sample], _ offset: Int, _ body: (UnsafeMutableRawPointer) -> Void) {
        let bytes = samples.count * MemoryLayout<Sample>.stride
        let memory = UnsafeMutableRawPointer.allocate(byteCount: bytes + offset, alignment: 64)
        defer { memory.deallocate() }
        samples.withUnsafeMutableBytes { (memory + offset).copyMemory(from: $0.baseAddress!, byteCount: bytes) }
        body(memory + offset)
        samples.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: memory + offset, byteCount: bytes) }
    }

    /// Decodes `width` pixels of `samples` with the vector loop, at the sample's own
    /// alignment and at 64, and with the generic loop; expects the three bit for bit
    /// and nothing written past the row. Returns the decoded pixels.
    static func expectDecoding<Sample: BufferSample>(_ codec: RowCodec, _ samples: [Sample], width: Int, _ what: String,
                                                     sourceLocation: SourceLocation = #_sourceLocation) -> [SIMD4<Float>] {
        let guardPixel = SIMD4<Float>(repeating: -7)
        var reference = [SIMD4<Float>](repeating: guardPixel, count: width + 2)
        var input = samples
        input.withUnsafeBytes { p in
            reference.withUnsafeMutableBufferPointer { codec.decode(Sample.self, p.baseAddress!, width, $0.baseAddress!) }
        }
        var result = reference
        for offset in [0, MemoryLayout<Sample>.stride] {
            var decoded = [SIMD4<Float>](repeating: guardPixel, count: width + 2)
            atOffset(&input, offset) { p in
                decoded.withUnsafeMutableBufferPointer { codec.decode(p, count: width, into: $0.baseAddress!) }
            }
            #expect(decoded[width...].allSatisfy { $0 == guardPixel }, "\(what) offset \(offset): wrote past the row",
                    sourceLocation: sourceLocation)
            // To the bit, NaN payloads included: both loops take the same operations in
            // the same operand order.
            for i in 0..<width where (0..<4).contains(where: { decoded[i][$0].bitPattern != reference[i][$0].bitPattern }) {
                Issue.record("\(what) offset \(offset) pixel \(i): \(decoded[i]), the per-sample loop \(reference[i])",
                             sourceLocation: sourceLocation)
            }
            result = decoded
        }
        return result
    }

    /// Encodes `source` with the vector loop into copies of `before` (which holds four
    /// guard samples after the row), at the sample's own alignment and at 64, and with
    /// the generic loop; expects the three bit for bit, and every sample in its place to
    /// be `stored` of the encoder's input (`encoderInput`), an X order's fourth sample and
    /// the guard samples unchanged.
    static func expectEncoding<Sample: BufferSample>(_ codec: RowCodec, _ source: [SIMD4<Float>], over before: [Sample],
                                                     places: [Int], mode: AlphaMode, _ what: String,
                                                     stored: (Float) -> Sample, same: (Sample, Sample) -> Bool,
                                                     sourceLocation: SourceLocation = #_sourceLocation) {
        let order = codec.format.channelOrder, width = source.count
        var reference = before
        reference.withUnsafeMutableBytes { codec.encode(Sample.self, source, width, $0.baseAddress!) }
        let bits = { (x: [Sample]) in x.withUnsafeBytes { Array($0) } }
        for offset in [0, MemoryLayout<Sample>.stride] {
            var out = before
            atOffset(&out, offset) { codec.encode(source, count: width, into: $0) }
            #expect(bits(out) == bits(reference), "\(order) \(mode) \(what) offset \(offset): not the per-sample loop's bits",
                    sourceLocation: sourceLocation)
        }
        #expect((4 * width..<before.count).allSatisfy { same(reference[$0], before[$0]) },
                "\(order) \(mode) \(what): wrote past the row", sourceLocation: sourceLocation)
        for i in 0..<width {
            let x = encoderInput(source[i], mode)
            for k in 0..<4 {
                let expected = k == 3 && mode == .none ? before[4 * i + places[3]] : stored(x[k])
                #expect(same(reference[4 * i + places[k]], expected),
                        "\(order) \(mode) \(what) pixel \(i) lane \(k): \(reference[4 * i + places[k]]), expected \(expected) from \(source[i])",
                        sourceLocation: sourceLocation)
            }
        }
    }

    @Test("2⁻¹⁶ + Float(1/65535 − 2⁻¹⁶), two products and a sum, decodes every 16-bit sample as the correctly rounded division; one multiply by the Float nearest 1/65535 does not")
    func wordReciprocalSplit() {
        let h = SampleCoding.wordReciprocalHigh, l = SampleCoding.wordReciprocalLow
        #expect(h == 0x1p-16 && l == 0x1.0001p-32)
        var wrong = 0, singleWrong = 0
        for v in 0...65535 {
            let x = Float(v), q = SampleCoding.decode(UInt16(v), maxval: 65535)
            if (x * h + x * l).bitPattern != q.bitPattern { wrong += 1 }
            if (x * Float(1.0 / 65535.0)).bitPattern != q.bitPattern { singleWrong += 1 }
        }
        #expect(wrong == 0)
        #expect(singleWrong > 0, "the split would be needless")
    }

    @Test("16-bit rows, every order and alpha mode, widths 1…33, 64 and 67, aligned and not: decoding is the per-sample loop's, v / 65535 per sample or SPEC §10's c / A (the quotient of the stored integers, rounded once) with alpha A / 65535 and A = 0 all zero; opaque groups and near-opaque ones (0xFFFE, 0x7FFF, 0x00FF) included; nothing past the row is written")
    func decodesUInt16() throws {
        var rng = SeededGenerator(seed: 65)
        for (order, places) in Self.orders {
            for mode in Self.modes(order) {
                let codec = RowCodec(format: try PixelFormat(order, alpha: mode, sample: .uint16))
                for width in Self.widths {
                    let words: [UInt16] = rowWithAlphaPatterns(width: width, places: places, cycle: [0, 65535, 1, 257],
                                                               using: &rng)
                    let decoded = Self.expectDecoding(codec, words, width: width, "\(order) \(mode) width \(width)")
                    for i in 0..<width {
                        let expected = decodedPixel(places.map { Float(words[4 * i + $0]) }, mode, maxval: 65535)
                        #expect(sameBits(decoded[i], expected),
                                "\(order) \(mode) width \(width) pixel \(i): \(decoded[i]), expected \(expected)")
                    }
                }
            }
        }
    }

    @Test("16-bit rows, every order and alpha mode, widths 1…33, 64 and 67, aligned and not: encoding is the per-sample loop's, SampleCoding.encode at 65535 per lane, NaNs, ±∞, ±0, out-of-range values and ties included, premultiplied colour clamped and times alpha first; an X order keeps its padding sample; nothing past the row is written")
    func encodesUInt16() throws {
        var rng = SeededGenerator(seed: 66)
        let special: [Float] = Self.nans + [.infinity, -.infinity, -0.0, 0, 1, -1, 2, 0.5 / 65535, 1.5 / 65535,
                                            32767.5 / 65535, 32768.5 / 65535, 65534.5 / 65535, Float(1).nextDown,
                                            Float(1).nextUp, .leastNonzeroMagnitude]
        for (order, places) in Self.orders {
            for mode in Self.modes(order) {
                let codec = RowCodec(format: try PixelFormat(order, alpha: mode, sample: .uint16))
                for width in Self.widths {
                    let source = (0..<width).map { _ in
                        SIMD4<Float>((0..<4).map { _ -> Float in
                            Bool.random(using: &rng) ? special.randomElement(using: &rng)!
                                : (Float(Int.random(in: -2...65537, using: &rng)) + [0, 0.5, 0.25][Int.random(in: 0...2, using: &rng)]) / 65535
                        })
                    }
                    // The destination's words at random (an X order keeps each pixel's own
                    // padding sample), and four guard words after the row.
                    let before = (0..<(4 * width + 4)).map { _ in UInt16.random(in: 0...65535, using: &rng) }
                    Self.expectEncoding(codec, source, over: before, places: places, mode: mode, "width \(width)",
                                        stored: { SampleCoding.encode($0, maxval: 65535) }, same: ==)
                }
            }
        }
    }

    @Test("Float rows, every order and alpha mode, widths 1…33, 64 and 67, aligned and not: the per-sample loop's bits, NaN payloads included; decoding takes the samples as they are (alpha 1 without alpha; premultiplied colour / alpha, alpha kept, alpha ±0 all zero); encoding writes them back in place (premultiplied colour clamped, NaN to 0, and times alpha), an X order keeps its padding sample; nothing past the row is written")
    func floatRows() throws {
        var rng = SeededGenerator(seed: 67)
        let special: [Float] = Self.nans + [.infinity, -.infinity, -0.0, 0, 1, -1, 2, 0.5, Float(1).nextUp,
                                            .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude]
        try Self.expectFloatRows(Float.self, .float32, special: special, using: &rng) { $0 }
    }

    #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
    @Test("Float16 rows, every order and alpha mode, widths 1…33, 64 and 67, aligned and not: the per-sample loop's bits, NaN payloads included; decoding widens the samples (alpha 1 without alpha; premultiplied colour / alpha, alpha kept, alpha ±0 all zero); encoding rounds them to nearest even (premultiplied colour clamped, NaN to 0, and times alpha first), overflow to ±∞, subnormals and ties included; an X order keeps its padding sample; nothing past the row is written")
    func float16Rows() throws {
        var rng = SeededGenerator(seed: 68)
        let special: [Float] = Self.nans + [.infinity, -.infinity, -0.0, 0, 1, -1, 2, 0.5, 65504, 65520, 70000, -65520,
                                            Float(Float16.leastNonzeroMagnitude), Float(Float16.leastNormalMagnitude),
                                            Float(Float16.leastNormalMagnitude).nextDown, 0x1p-25, 0x1.8p-24,
                                            1 + 0x1p-11, 1 + 0x1p-11 + 0x1p-23, 1 + 0x1p-10 + 0x1p-11,
                                            .leastNonzeroMagnitude]
        // Stored NaNs that no rounding of a `Float` gives: signalling, with payloads.
        let raw = [0x7D00, 0x7E55, 0xFD01, 0x7C01].map { Float16(bitPattern: UInt16($0)) }
        try Self.expectFloatRows(Float16.self, .float16, special: special, raw: raw, using: &rng) { Float16($0) }
    }
    #endif

    /// The decoding and encoding checks of a floating-point sample type: random rows of
    /// `special` values and values in [−0.25, 1.25], every fifth sample of the rows to
    /// decode one of `raw` where given, through every order and alpha mode. `stored`:
    /// the sample the per-sample loop writes for a `Float`.
    static func expectFloatRows<Sample: BinaryFloatingPoint & BufferSample>(
        _: Sample.Type, _ sampleType: SampleType, special: [Float], raw: [Sample] = [], using rng: inout SeededGenerator,
        stored: (Float) -> Sample, sourceLocation: SourceLocation = #_sourceLocation) throws {
        func value() -> Float {
            Bool.random(using: &rng) ? special.randomElement(using: &rng)! : Float.random(in: -0.25...1.25, using: &rng)
        }
        // Equal with the same sign, or both NaN: the formulas do not fix a NaN's payload.
        func same(_ a: Sample, _ b: Sample) -> Bool { (a == b && a.sign == b.sign) || (a.isNaN && b.isNaN) }
        for (order, places) in Self.orders {
            for mode in Self.modes(order) {
                let codec = RowCodec(format: try PixelFormat(order, alpha: mode, sample: sampleType))
                for width in Self.widths {
                    var samples = (0..<(4 * width)).map { _ in stored(value()) }
                    if !raw.isEmpty {
                        for k in stride(from: 0, to: samples.count, by: 5) { samples[k] = raw[(k / 5) % raw.count] }
                    }
                    let decoded = Self.expectDecoding(codec, samples, width: width, "\(order) \(mode) width \(width)",
                                                      sourceLocation: sourceLocation)
                    for i in 0..<width {
                        let v = places.map { Float(samples[4 * i + $0]) }
                        let expected: SIMD4<Float>
                        switch mode {
                        case .none: expected = SIMD4(v[0], v[1], v[2], 1)
                        case .straight: expected = SIMD4(v[0], v[1], v[2], v[3])
                        case .premultiplied: expected = v[3] == 0 ? SIMD4() : SIMD4(v[0] / v[3], v[1] / v[3], v[2] / v[3], v[3])
                        }
                        for k in 0..<4 {
                            #expect(Self.same(decoded[i][k], expected[k]),
                                    "\(order) \(mode) width \(width) pixel \(i) lane \(k): \(decoded[i][k]), expected \(expected[k])",
                                    sourceLocation: sourceLocation)
                        }
                        if mode != .none {
                            #expect(decoded[i].w.bitPattern == v[3].bitPattern || v[3] == 0,
                                    "\(order) \(mode) width \(width) pixel \(i): alpha not kept to the bit",
                                    sourceLocation: sourceLocation)
                        }
                    }
                    let source = (0..<width).map { _ in SIMD4<Float>(value(), value(), value(), value()) }
                    let before = (0..<(4 * width + 4)).map { _ in stored(Float.random(in: -1...1, using: &rng)) }
                    Self.expectEncoding(codec, source, over: before, places: places, mode: mode, "width \(width)",
                                        stored: stored, same: same, sourceLocation: sourceLocation)
                }
            }
        }
    }
}
