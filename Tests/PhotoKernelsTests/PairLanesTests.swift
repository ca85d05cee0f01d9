import Testing
@testable import PhotoKernels

/// The lane helpers of the fused 16-bit block: shuffles within each pixel's two lanes,
/// and the packing that rounds and clamps a pixel's samples into its 64 bits. This
/// build's forms (the intrinsics where it targets AVX2, the portable ones elsewhere)
/// against values worked out lane by lane.
@Suite("Pair lanes")
struct PairLanesTests {
    let lanes = PairLanes()
    let count = BlockFloats.scalarCount

    func floats(_ f: (Int) -> Float) -> BlockFloats {
        var v = BlockFloats()
        for i in 0..<count { v[i] = f(i) }
        return v
    }

    @Test("exchanging swaps each pixel's two lanes, first copies its first lane into both, pairing puts one value per pixel in both")
    func shuffles() {
        let v = floats { Float(10 + $0) }
        let exchanged = lanes.exchanging(v), first = lanes.first(v)
        var half = HalfBlockFloats()
        for i in 0..<HalfBlockFloats.scalarCount { half[i] = Float(100 + i) }
        let paired = PairLanes.pairing(half)
        for i in 0..<count {
            #expect(exchanged[i] == Float(10 + (i ^ 1)), "lane \(i)")
            #expect(first[i] == Float(10 + (i & ~1)), "lane \(i)")
            #expect(paired[i] == Float(100 + i / 2), "lane \(i)")
        }
    }

    @Test("floats converts every integer lane exactly, up to 2²³ − 1")
    func conversion() {
        var v = BlockWords()
        let samples: [UInt32] = [0, 1, 255, 256, 4095, 32768, 65535, 65536, 8_388_607]
        for i in 0..<count { v[i] = samples[i % samples.count] }
        let f = PairLanes.floats(v)
        for i in 0..<count { #expect(f[i] == Float(v[i]), "lane \(i)") }
    }

    @Test("rotating turns each 64-bit pixel by whole words and back: ARGB's samples in RGBA's places")
    func rotation() {
        var v = BlockWords()
        // Pixel p holds the words A R G B = (4p, 4p + 1, 4p + 2, 4p + 3).
        for i in 0..<count {
            let word = UInt32(2 * i)
            v[i] = word | (word + 1) << 16
        }
        let rgba = PairLanes.rotating(v, right: 16)
        for p in 0..<(count / 2) {
            let base = UInt32(4 * p)
            #expect(rgba[2 * p] == (base + 1) | (base + 2) << 16, "pixel \(p): R G")
            #expect(rgba[2 * p + 1] == (base + 3) | base << 16, "pixel \(p): B A")
        }
        #expect(PairLanes.rotating(rgba, right: 64 - 16) == v)
        #expect(PairLanes.rotating(v, right: 0) == v)
        #expect(PairLanes.rotating(v, right: 64) == v)
    }

    /// `round_half_even(clamp(x, 0, c))`, NaN → 0.
    func expected(_ x: Float, _ c: Float) -> UInt32 {
        x.isNaN ? 0 : UInt32(Swift.min(Swift.max(x, 0), c).rounded(.toNearestOrEven))
    }

    @Test("packing rounds half to even and clamps each lane to its ceiling (NaN → 0; with the clamp, +∞ and values past 2³¹ too): maxval in the colour lanes, 65535 in the fourth's", arguments: [4095, 65535])
    func packing(_ maxval: Int) {
        let m = Float(maxval)
        // Without the clamp (maxval 65535) every value must lie below 2³¹.
        let unbounded: [Float] = maxval < 65535 ? [.infinity, 3e9] : []
        let values: [Float] = unbounded + [.nan, -.infinity, -1e9, -0.75, -0.5, -0.0, 0, 0.25, 0.5, Float(0.5).nextUp, 1.5, 2.5, 1234.5, 1235.5,
                               m - 0.5, (m - 0.5).nextDown, m, m + 0.5, m + 1, 65534.5, 65535, 65535.5, 70000, 16_000_000]
        let fourth = unsafeBitCast(PixelQuads(repeating: 0xFFFF_FFFF_0000_0000), to: BlockMask.self)
        let colourCeiling = BlockFloats(repeating: m)
        let ceiling = colourCeiling.replacing(with: 65535, where: fourth)
        for start in stride(from: 0, to: values.count, by: 2) {
            let redBlue = floats { values[(start + $0) % values.count] }
            let greenFourth = floats { values[(start + 2 * $0 + 1) % values.count] }
            let out = lanes.packing(redBlue, greenFourth, colourCeiling: colourCeiling, ceiling: ceiling,
                                    clamps: maxval < 65535)
            for i in 0..<count {
                #expect(out[i] & 0xFFFF == expected(redBlue[i], m), "maxval \(maxval), lane \(i): \(redBlue[i])")
                #expect(out[i] >> 16 == expected(greenFourth[i], ceiling[i]), "maxval \(maxval), lane \(i): \(greenFourth[i])")
            }
        }
    }

    @Test("the 16-bit block keeps every fourth sample as it is, above maxval too, and clamps colour to maxval, in every channel order and count 1…33")
    func fourthSampleKept() {
        let maxval = 4095
        let kernel = Adjustments(saturation: 1.6, contrast: 1.4, brightness: 0.2, hue: 25).kernel
        var rng = SeededGenerator(seed: 5)
        // Memory places of R, G, B and the fourth sample.
        let orders: [[Int]] = [[0, 1, 2, 3], [2, 1, 0, 3], [1, 2, 3, 0], [3, 2, 1, 0]]
        for order in orders {
            let positions = ChannelPositions(red: order[0], green: order[1], blue: order[2], fourth: order[3])
            let block = FusedBlock(matrix: kernel, maxval: maxval, tables: nil, positions: positions, largestGain: 1)
            for count in 1...33 {
                var pixels = [UInt16](repeating: 0, count: 4 * count)
                for i in 0..<count {
                    for c in 0..<3 { pixels[4 * i + order[c]] = UInt16.random(in: 0...UInt16(maxval), using: &rng) }
                    pixels[4 * i + order[3]] = [0, UInt16(maxval), 4096, 65535, 40000][i % 5]
                }
                var out = [UInt16](repeating: 0, count: pixels.count)
                pixels.withUnsafeBufferPointer { s in
                    out.withUnsafeMutableBufferPointer { block.run16(s.baseAddress!, $0.baseAddress!, count: count, gains: nil) }
                }
                for i in 0..<count {
                    #expect(out[4 * i + order[3]] == pixels[4 * i + order[3]], "\(order), count \(count), pixel \(i)")
                    for c in 0..<3 { #expect(out[4 * i + order[c]] <= UInt16(maxval), "\(order), count \(count), pixel \(i)") }
                }
            }
        }
    }

    @Test("the 16-bit block's colour samples above maxval: with tone tables (a line or not) they take the last entry, as maxval does; without, they decode as v/m (SPEC §8 against Double); every channel order, counts 1…33")
    func coloursAboveMaxval() throws {
        let maxval = 4095
        let kernel = Adjustments(saturation: 1.3, contrast: 1.2, brightness: 0.05, hue: 10).kernel
        let curve = try ToneCurve(masterPoints: [SIMD2(0, 0), SIMD2(0.3, 0.2), SIMD2(1, 1)])
        let exposure = ToneTables([Exposure(ev: 0.7)], maxval: maxval, eightBit: false)
        let curved = ToneTables([curve], maxval: maxval, eightBit: false)
        #expect(exposure.line != nil && curved.line == nil)
        var rng = SeededGenerator(seed: 7)
        let orders: [[Int]] = [[0, 1, 2, 3], [2, 1, 0, 3], [1, 2, 3, 0], [3, 2, 1, 0]]
        for order in orders {
            let positions = ChannelPositions(red: order[0], green: order[1], blue: order[2], fourth: order[3])
            func run(_ block: FusedBlock, _ pixels: [UInt16]) -> [UInt16] {
                var out = [UInt16](repeating: 0, count: pixels.count)
                pixels.withUnsafeBufferPointer { s in
                    out.withUnsafeMutableBufferPointer { block.run16(s.baseAddress!, $0.baseAddress!, count: pixels.count / 4, gains: nil) }
                }
                return out
            }
            for count in 1...33 {
                // Colour samples above maxval in about a third of the places, the rest
                // within; the fourth sample anything.
                var pixels = [UInt16](repeating: 0, count: 4 * count)
                for i in 0..<count {
                    for c in 0..<3 {
                        pixels[4 * i + order[c]] = Int.random(in: 0..<3, using: &rng) == 0
                            ? UInt16.random(in: UInt16(maxval + 1)...65535, using: &rng)
                            : UInt16.random(in: 0...UInt16(maxval), using: &rng)
                    }
                    pixels[4 * i + order[3]] = UInt16.random(in: 0...65535, using: &rng)
                }
                var clamped = pixels
                for i in 0..<count { for c in 0..<3 { clamped[4 * i + order[c]] = min(pixels[4 * i + order[c]], UInt16(maxval)) } }
                for (name, tables) in [("exposure", exposure), ("curve", curved)] {
                    let block = FusedBlock(matrix: kernel, maxval: maxval, tables: tables, positions: positions, largestGain: 1)
                    #expect(run(block, pixels) == run(block, clamped), "\(name), \(order), count \(count)")
                }
                if order == [0, 1, 2, 3] {
                    let block = FusedBlock(matrix: kernel, maxval: maxval, tables: nil, positions: positions, largestGain: 1)
                    let report = SamplePipelineTests.tieAware(kernel, run(block, pixels), pixels, width: count, height: 1,
                                                              maxval: maxval)
                    #expect(report.failures == 0, "no tables, count \(count): \(report)")
                }
            }
        }
    }

    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && !canImport(TargetFeatures.AVX2)
    @Test("the baseline build's channel form: lanes takes each pixel's first and second lanes in pixel order; packing gives the portable encoding's words (NaN, ±∞, −0, negatives, ties, past maxval; maxval 1, 1000, 65535), every fourth sample kept, and puts the lanes back")
    func channelWords() {
        // Pixel p of the block: lanes 2p and 2p + 1 of the two halves in memory order.
        let v0 = SIMD8<UInt32>((0..<8).map { UInt32(100 + $0) }), v1 = SIMD8<UInt32>((0..<8).map { UInt32(108 + $0) })
        let (first, second) = ChannelWords.lanes(v0, v1)
        for p in 0..<8 {
            #expect(first[p] == UInt32(100 + 2 * p), "pixel \(p): first lane")
            #expect(second[p] == UInt32(101 + 2 * p), "pixel \(p): second lane")
        }
        let specials: [Float] = [.nan, .infinity, -.infinity, -0.0, -0.4, -0.5, -1e10, -3e9, 0.5, 1.5, 2.5, 999.5,
                                 1000.5, 65534.5, 65535.5, 65536, 3e9, 1e10]
        var rng = SeededGenerator(seed: 6)
        for maxval in [1, 1000, 65535] {
            let block = FusedBlock(matrix: ColorMatrixKernel(.identity), maxval: maxval, tables: nil, positions: .rgba,
                                   largestGain: 1)
            for _ in 0..<256 {
                let r = packingLanes(specials, maxval: maxval, using: &rng), g = packingLanes(specials, maxval: maxval, using: &rng)
                let b = packingLanes(specials, maxval: maxval, using: &rng)
                let second = SIMD8<UInt32>((0..<8).map { _ in UInt32.random(in: 0...UInt32.max, using: &rng) })
                let (o0, o1) = ChannelWords.packing(r, g, b, maxval: block.maxval, second: second)
                let word = SIMD8<UInt32>(repeating: 0xFFFF)
                let portableFirst = block.encode(r, nil) & word | (block.encode(g, nil) & word) &<< 16
                let portableSecond = block.encode(b, nil) & word | second & ~word
                let (back0, back1) = ChannelWords.lanes(o0, o1)
                #expect(back0 == portableFirst, "maxval \(maxval): \(r), \(g): \(back0) vs \(portableFirst)")
                #expect(back1 == portableSecond, "maxval \(maxval): \(b): \(back1) vs \(portableSecond)")
            }
        }
    }

    @Test("the baseline build's signed packing at maxval 65535: on channels 32768 below the samples' scale, the portable encoding's words of the samples (ties to even, below 0, past 65535, to ±2³⁰), every fourth sample kept")
    func signedChannelWords() {
        let block = FusedBlock(matrix: ColorMatrixKernel(.identity), maxval: 65535, tables: nil, positions: .rgba,
                               largestGain: 1)
        #expect(block.packsWordsBySaturation)
        // Samples whose value less 32768 is exact in Float (below 2^24 in magnitude,
        // halves included), and the ends of the range the block allows.
        let specials: [Float] = [-0x1p30, -1e9, -65536, -1.5, -0.5, -0.25, 0, 0.5, 1.5, 2.5, 32767.5, 32768.5,
                                 65533.5, 65534.5, 65535, 65535.25, 65535.5, 65536, 1e9, 0x1p30]
        var rng = SeededGenerator(seed: 7)
        func samples() -> SIMD8<Float> {
            SIMD8((0..<8).map { _ in
                Bool.random(using: &rng) ? specials.randomElement(using: &rng)!
                    : Float(Int.random(in: -8...131_078, using: &rng)) / 2
            })
        }
        let word = SIMD8<UInt32>(repeating: 0xFFFF), shift = SIMD8<Float>(repeating: 32768)
        for _ in 0..<2048 {
            let (r, g, b) = (samples(), samples(), samples())
            let second = SIMD8<UInt32>((0..<8).map { _ in UInt32.random(in: 0...UInt32.max, using: &rng) })
            let (o0, o1) = ChannelWords.signedPacking(r - shift, g - shift, b - shift, second: second,
                                                      fourthBits: block.fourthSampleBits)
            let portableFirst = block.encode(r, nil) & word | (block.encode(g, nil) & word) &<< 16
            let portableSecond = block.encode(b, nil) & word | second & ~word
            let (back0, back1) = ChannelWords.lanes(o0, o1)
            #expect(back0 == portableFirst, "\(r), \(g): \(back0) vs \(portableFirst)")
            #expect(back1 == portableSecond, "\(b): \(back1) vs \(portableSecond)")
        }
        // Hand-computed: 2.5 → 2 and 3.5 → 4 (ties to even), −3 → 0, 70000 → 65535, and
        // 0, 65535, 1 and 32768 as they are.
        let r = SIMD8<Float>(2.5, 3.5, -3, 70000, 0, 65535, 1, 32768) - shift
        let (o0, o1) = ChannelWords.signedPacking(r, r, r, second: SIMD8(repeating: 0xABCD_0000),
                                                  fourthBits: block.fourthSampleBits)
        #expect(o0 == SIMD8<UInt32>(0x0002_0002, 0xABCD_0002, 0x0004_0004, 0xABCD_0004,
                                    0, 0xABCD_0000, 0xFFFF_FFFF, 0xABCD_FFFF))
        #expect(o1 == SIMD8<UInt32>(0, 0xABCD_0000, 0xFFFF_FFFF, 0xABCD_FFFF,
                                    0x0001_0001, 0xABCD_0001, 0x8000_8000, 0xABCD_8000))
    }
    #endif
}
