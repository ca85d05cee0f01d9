import Testing
@testable import PhotoKernels

/// The blocked RGBA and RGB loops of `SampleConversion` against the per-sample
/// formulas of `SampleCoding` (SPEC §0), bit for bit.
///
/// The RGBA decoder works in blocks of 4 pixels (two 8-sample halves), the other
/// loops in blocks of 2 (the RGB decoder only while a third pixel follows); counts
/// 1…33 put every sample position of a block, and every tail length, under test.
/// Each call writes into a buffer with sentinel guards after `count` pixels, so a
/// block or tail that writes past the end fails too.
@Suite("Sample conversion fast paths: bit-identical to SampleCoding (SPEC §0)")
struct SampleConversionFastPathTests {
    /// 1…33, and 2059: past the 2048 pixels from which the encoder's blocks (and the
    /// RGBA decoder's, from 1024, but at maxval 255 where the build targets AVX2) go as
    /// four interleaved streams where the walk interleaves (`MemoryStreams`), with a
    /// tail.
    static let counts = Array(1...33) + [2059]
    static let layouts: [SampleLayout] = [.rgb, .rgba]
    /// Guard pixels / samples after the `count` the loop may write.
    static let guardCount = 8

    // MARK: decode

    /// Decodes `samples` (`channels · count` of them) through the fast path, into pixel
    /// `start` of a 64-byte-aligned buffer (the RGBA loop takes the pixels before a
    /// 64-byte boundary alone: `start` 0…3 gives it 0…3 of them), and returns the
    /// mismatches against `SampleCoding.decode` (and alpha 1 for RGB), compared as bit
    /// patterns; `streaming` takes the loop's streaming stores.
    static func decodeMismatches<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        _ samples: [Sample], layout: SampleLayout, maxval: Int, start: Int = 0, streaming: Bool = false) -> [String] {
        let channels = layout.channelCount
        precondition(samples.count % channels == 0)
        let count = samples.count / channels
        let sentinel = SIMD4<Float>(repeating: -12345)
        let out = inPlace([SIMD4<Float>](repeating: sentinel, count: count + guardCount), start: start) { destination in
            samples.withUnsafeBufferPointer { source in
                SampleConversion.decode(source.baseAddress!, layout: layout, maxval: maxval, into: destination, count: count,
                                        streaming: streaming)
            }
        }
        var failures: [String] = []
        for (k, v) in samples.enumerated() {
            let expected = SampleCoding.decode(v, maxval: Float(maxval))
            let observed = out[k / channels][k % channels]
            if observed.bitPattern != expected.bitPattern {
                failures.append("\(layout) count \(count), sample \(k) (value \(v)): \(observed) instead of \(expected)")
            }
        }
        if channels == 3, let p = out[..<count].firstIndex(where: { $0.w.bitPattern != Float(1).bitPattern }) {
            failures.append("rgb count \(count), pixel \(p): alpha \(out[p].w) instead of 1")
        }
        if out[count...] != [SIMD4<Float>](repeating: sentinel, count: guardCount)[...] {
            failures.append("\(layout) count \(count): wrote past the last pixel")
        }
        return failures
    }

    @Test("8-bit RGB and RGBA decode: all 256 values at every sample position, counts 1…33 and 2059",
          arguments: [1, 15, 100, 254, 255])
    func decode8Exhaustive(maxval: Int) {
        // Rotation r puts value (r + k) mod 256 at sample k, so over the 256 rotations
        // every value visits every position of every block and of the tail, from each
        // 16-byte place in a cache line (`start` r mod 4), with ordinary and streaming
        // stores. Values
        // above maxval are included: the fast path must not assume they are absent.
        var failures: [String] = []
        for layout in Self.layouts {
            for count in Self.counts {
                for r in 0..<256 {
                    let samples = (0..<(layout.channelCount * count)).map { UInt8(truncatingIfNeeded: r + $0) }
                    failures += Self.decodeMismatches(samples, layout: layout, maxval: maxval, start: r % 4,
                                                      streaming: r % 8 >= 4)
                }
            }
        }
        #expect(failures.isEmpty, "maxval \(maxval): \(failures.count) mismatches, first \(failures.prefix(3))")
    }

    @Test("8-bit decoding multiplies by a split reciprocal for every maxval 1…255, exactly as the division")
    func reciprocalSplit() {
        var missing: [Int] = []
        for maxval in 1...255 {
            guard let (h, l) = SampleCoding.reciprocalSplit(maxval: maxval) else { missing.append(maxval); continue }
            #expect(h.bitPattern & 0xFFF == 0 && l != 0 || maxval & (maxval - 1) == 0, "maxval \(maxval): high has more than 12 bits")
            // The RGBA decoder takes the split at every maxval but 255: every byte.
            let samples = (0..<256).map { UInt8($0) }
            #expect(Self.decodeMismatches(samples, layout: .rgba, maxval: maxval).isEmpty, "maxval \(maxval)")
        }
        #expect(missing.isEmpty, "no exact split for maxvals \(missing)")
        #expect(SampleCoding.reciprocalSplit(maxval: 256) == nil && SampleCoding.reciprocalSplit(maxval: 0) == nil)
    }

    @Test("a byte's quotient by 255 from the bits of Float(v · 0x010101) is the division, for all 256 bytes")
    func byteQuotient() {
        // The AVX2 decoder's form at maxval 255, scalar and in eight lanes;
        // decode8Exhaustive holds the loop itself to the division in builds that
        // target AVX2.
        var wrong: [UInt8] = []
        for v in UInt8.min...UInt8.max
        where SampleCoding.byteQuotient(v).bitPattern != SampleCoding.decode(v, maxval: 255).bitPattern {
            wrong.append(v)
        }
        #expect(wrong.isEmpty, "wrong for bytes \(wrong.prefix(8))")
        // The eight-lane form, every byte in every lane: lane k of group g holds
        // (g + 37k) mod 256.
        var wrongLanes: [String] = []
        for g in 0..<256 {
            let bytes = SIMD8<UInt8>((0..<8).map { UInt8(truncatingIfNeeded: g + 37 * $0) })
            let x = byteQuotients(bytes)
            for k in 0..<8 where x[k].bitPattern != SampleCoding.decode(bytes[k], maxval: 255).bitPattern {
                wrongLanes.append("lane \(k) byte \(bytes[k])")
            }
        }
        #expect(wrongLanes.isEmpty, "\(wrongLanes.prefix(8))")
        // Hand-computed: 1/255 is 0x3B808081 (significand 0x808081, the byte 0x01
        // three times plus one ulp), 128/255 is 0x3F008081 and 255/255 is 1.
        #expect(SampleCoding.byteQuotient(1).bitPattern == 0x3B80_8081)
        #expect(SampleCoding.byteQuotient(128).bitPattern == 0x3F00_8081)
        #expect(SampleCoding.byteQuotient(255) == 1 && SampleCoding.byteQuotient(0).bitPattern == 0)
    }

    @Test("clamped(_:upTo:) is x > 0 ? min(x, m) : 0 in every lane, bit for bit: NaNs, ±0, ±∞, subnormals, m itself")
    func laneClamps() {
        // The clamp every encoder applies before rounding; the baseline x86-64 build
        // takes it from SSE's maxps and minps, whose operand order decides NaN and ±0.
        let specials: [Float] = [.nan, -.nan, .signalingNaN, Float(nan: 0x1234, signaling: false),
                                 -Float(nan: 5, signaling: true), 0.0, -0.0, .infinity, -.infinity,
                                 .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude,
                                 -1, 0.5, 1, 1.5, 254.5, 255, 255.00002, 256, 65535, 65536, -65536]
        func expected(_ x: Float, _ m: Float) -> Float { x > 0 ? (x > m ? m : x) : 0 }
        func lanes(_ k: Int, _ j: Int) -> Float { specials[(k + 3 * j) % specials.count] }
        var wrong: [String] = []
        for m: Float in [1, 255, 65535] {
            for k in specials.indices {
                // Every value in every lane: lane j holds specials[(k + 3j) mod n].
                let four = SIMD4<Float>((0..<4).map { lanes(k, $0) })
                let eight = SIMD8<Float>((0..<8).map { lanes(k, $0) })
                let sixteen = SIMD16<Float>((0..<16).map { lanes(k, $0) })
                let c4 = clamped(four, upTo: SIMD4(repeating: m)), c8 = clamped(eight, upTo: SIMD8(repeating: m))
                let c16 = clamped(sixteen, upTo: SIMD16(repeating: m))
                let p4 = positivePart(four), p8 = positivePart(eight), p16 = positivePart(sixteen)
                for j in 0..<16 {
                    let x = lanes(k, j), clamp = expected(x, m).bitPattern, positive = expected(x, .infinity).bitPattern
                    if c16[j].bitPattern != clamp || p16[j].bitPattern != positive { wrong.append("16 lanes: \(x) at m = \(m)") }
                    if j < 8, c8[j].bitPattern != clamp || p8[j].bitPattern != positive { wrong.append("8 lanes: \(x) at m = \(m)") }
                    if j < 4, c4[j].bitPattern != clamp || p4[j].bitPattern != positive { wrong.append("4 lanes: \(x) at m = \(m)") }
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(8))")
        // Hand-computed: NaN and −0 give +0 (bits 0), 300 gives 255.
        let c = clamped(SIMD4<Float>(.nan, -0.0, 300, 7.25), upTo: SIMD4(repeating: 255))
        #expect(c[0].bitPattern == 0 && c[1].bitPattern == 0 && c[2] == 255 && c[3] == 7.25)
    }

    @Test("a tripled byte times the Float nearest 1/765 is the division by 255, for all 256 bytes; the plain reciprocal is not")
    func tripledReciprocal() {
        // The other builds' form at maxval 255; decode8Exhaustive holds their loop to
        // the division.
        let r = SampleCoding.tripledReciprocal
        let wrong = (0...255).filter { Float(3 * $0) * r != SampleCoding.decode(UInt8($0), maxval: 255) }
        #expect(wrong.isEmpty, "wrong for bytes \(wrong.prefix(8))")
        #expect(r.bitPattern == 0x3AAB_5601, "the Float nearest 1/765")
        // The vector widening that feeds it, in this build's form, every byte in each
        // of the sixteen places of a block.
        var bytes = [UInt8](repeating: 0, count: 256 + 16)
        for v in 0..<bytes.count { bytes[v] = UInt8(truncatingIfNeeded: v) }
        var wrongLanes: [String] = []
        bytes.withUnsafeBytes { raw in
            for offset in 0..<256 {
                let (low, high) = tripledBytes(raw.baseAddress!, offset: offset)
                for k in 0..<16 {
                    let v = bytes[offset + k], tripled = k < 8 ? low[k] : high[k - 8]
                    if tripled != 3 * UInt32(v) || Float(tripled) * r != SampleCoding.decode(v, maxval: 255) {
                        wrongLanes.append("offset \(offset) lane \(k)")
                    }
                }
            }
        }
        #expect(wrongLanes.isEmpty, "\(wrongLanes.prefix(8))")
        // Why the tripling: one multiply by the Float nearest 1/255 misses 126 bytes.
        let plain = Float(1.0 / 255.0)
        #expect((0...255).filter { Float($0) * plain != SampleCoding.decode(UInt8($0), maxval: 255) }.count == 126)
    }

    @Test("rasters past the streaming-store threshold decode and encode exactly as the formulas")
    func streamingStores() throws {
        // 1024 × 1024: the Float image is 16 MiB and the 8-bit raster 4 MiB, both at or
        // past the threshold, so both directions take their streaming stores.
        let (w, h) = (1024, 1024)
        #expect(w * h * 4 >= StreamingStores.threshold)
        var rng = SeededGenerator(seed: 11)
        let bytes = (0..<(w * h * 4)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let image = try FloatImage(width: w, height: h, layout: .rgba, samples: bytes)
        var wrongDecode = 0
        for i in stride(from: 0, to: bytes.count, by: 97) where image.pixels[i / 4][i % 4] != SampleCoding.decode(bytes[i], maxval: 255) {
            wrongDecode += 1
        }
        #expect(wrongDecode == 0)
        var out = [UInt8](repeating: 0, count: bytes.count)
        try out.withUnsafeMutableBufferPointer { try image.encode(into: $0, layout: .rgba) }
        #expect(out == bytes, "decode then encode returns every byte")
    }

    @Test("16-bit RGB and RGBA decode: every value 0…maxval, counts 1…33 and 2059", arguments: [1023, 65535])
    func decode16Exhaustive(maxval: Int) {
        // For each count the values 0…maxval run through consecutive buffers, so each
        // value is decoded once per count; the buffer start advances by one sample
        // less than a buffer, so a value's sample position shifts from count to count.
        var failures: [String] = []
        let values = maxval + 1
        for layout in Self.layouts {
            for count in Self.counts {
                let n = layout.channelCount * count
                var start = 0, buffers = 0
                while start < values + n {
                    let samples = (0..<n).map { UInt16((start + $0) % values) }
                    failures += Self.decodeMismatches(samples, layout: layout, maxval: maxval, start: buffers % 4)
                    start += max(n - 1, 1)
                    buffers += 1
                }
            }
        }
        #expect(failures.isEmpty, "maxval \(maxval): \(failures.count) mismatches, first \(failures.prefix(3))")
    }

    @Test("decode(from:) and encode(into:) equal the formulas for any thread count, RGB and RGBA, 8 and 16 bits")
    func threadsBitIdentical() throws {
        var rng = SeededGenerator(seed: 6)
        let (w, h) = (33, 7)
        for layout in Self.layouts {
            let channels = layout.channelCount
            let bytes = (0..<(w * h * channels)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let words = (0..<(w * h * channels)).map { _ in UInt16.random(in: 0...65535, using: &rng) }
            // The decoded samples, alpha dropped for RGB, as bit patterns.
            func decoded(_ image: FloatImage) -> [UInt32] {
                image.pixels.flatMap { [$0.x, $0.y, $0.z, $0.w].prefix(channels) }.map(\.bitPattern)
            }
            let floats = try randomImage(width: w, height: h, seed: 61, nanEvery: 5)
            let values = floats.pixels.flatMap { [$0.x, $0.y, $0.z, $0.w].prefix(channels) }
            for threads in [1, 2, 3] {
                var image = try FloatImage(width: w, height: h)
                try bytes.withUnsafeBufferPointer { try image.decode(from: $0, layout: layout, threads: threads) }
                #expect(decoded(image) == bytes.map { SampleCoding.decode($0, maxval: 255).bitPattern },
                        "8-bit \(layout), \(threads) threads")
                #expect(layout == .rgba || image.isOpaque, "8-bit \(layout): alpha 1")
                try words.withUnsafeBufferPointer { try image.decode(from: $0, layout: layout, maxval: 65535, threads: threads) }
                #expect(decoded(image) == words.map { SampleCoding.decode($0, maxval: 65535).bitPattern },
                        "16-bit \(layout), \(threads) threads")
                var out8 = [UInt8](repeating: 0, count: w * h * channels)
                try out8.withUnsafeMutableBufferPointer { try floats.encode(into: $0, layout: layout, threads: threads) }
                #expect(out8 == values.map { UInt8(SampleCoding.encode($0, maxval: 255)) }, "8-bit encode \(layout), \(threads) threads")
                var out16 = [UInt16](repeating: 0, count: w * h * channels)
                try out16.withUnsafeMutableBufferPointer { try floats.encode(into: $0, layout: layout, maxval: 1023, threads: threads) }
                #expect(out16 == values.map { SampleCoding.encode($0, maxval: 1023) }, "16-bit encode \(layout), \(threads) threads")
            }
        }
    }

    // MARK: encode

    /// Encodes `values` (`4 · count` of them, RGBA pixels) through the fast path and
    /// returns the mismatches against `SampleCoding.encode` narrowed to `Sample`; RGB
    /// drops each fourth value. The pixels start at pixel `sourceStart` of a
    /// 64-byte-aligned buffer and the samples at sample `destinationStart` of another
    /// (the 8-bit RGBA blocks take the pixels before their boundary alone: with
    /// streaming stores a 32-byte boundary of a 4-byte-aligned destination where the
    /// build targets AVX2 and a 16-byte one elsewhere; without, a 32-byte boundary of
    /// the source where the build targets AVX2); `streaming` takes the loop's
    /// streaming stores.
    static func encodeMismatches<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        _ values: [Float], layout: SampleLayout, maxval: Int, as _: Sample.Type,
        sourceStart: Int = 0, destinationStart: Int = 0, streaming: Bool = false) -> [String] {
        precondition(values.count % 4 == 0)
        let count = values.count / 4, channels = layout.channelCount
        let pixels = stride(from: 0, to: values.count, by: 4).map {
            SIMD4(values[$0], values[$0 + 1], values[$0 + 2], values[$0 + 3])
        }
        let sentinel = Sample(truncatingIfNeeded: 0xA5A5)
        let length = destinationStart + count * channels + guardCount
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: length * MemoryLayout<Sample>.stride, alignment: 64)
        defer { buffer.deallocate() }
        let samples = buffer.bindMemory(to: Sample.self, capacity: length)
        samples.initialize(repeating: sentinel, count: length)
        _ = inPlace(pixels, start: sourceStart) { source in
            SampleConversion.encode(source, count: count, layout: layout, maxval: maxval,
                                    into: samples + destinationStart, streaming: streaming)
        }
        let out = Array(UnsafeBufferPointer(start: samples + destinationStart, count: length - destinationStart))
        if !UnsafeBufferPointer(start: samples, count: destinationStart).allSatisfy({ $0 == sentinel }) {
            return ["\(layout) count \(count): wrote before the first pixel"]
        }
        var failures: [String] = []
        for p in 0..<count {
            for c in 0..<channels {
                let x = values[4 * p + c], k = channels * p + c
                let expected = Sample(truncatingIfNeeded: SampleCoding.encode(x, maxval: Float(maxval)))
                if out[k] != expected {
                    failures.append("\(layout) count \(count), sample \(k) (x \(x)): \(out[k]) instead of \(expected)")
                }
            }
        }
        if out[(count * channels)...] != [Sample](repeating: sentinel, count: guardCount)[...] {
            failures.append("\(layout) count \(count): wrote past the last pixel")
        }
        return failures
    }

    static let specials: [Float] = [
        .nan, -.nan, .signalingNaN, .infinity, -.infinity, 0, -0.0, 1, -1, 0.5, 1.5, 2, -0.25,
        Float(1).nextUp, Float(1).nextDown, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude,
        -.greatestFiniteMagnitude, .ulpOfOne,
    ]

    /// Values whose scaled product `x · maxval` lies on or next to a .5 tie, for up to
    /// `limit` integers k, and how many of them are exact ties in `Float`.
    static func ties(maxval: Int, limit: Int = 1024) -> (values: [Float], exact: Int) {
        let m = Float(maxval)
        var values: [Float] = [], exact = 0
        for k in stride(from: 0, to: maxval, by: max(1, maxval / limit)) {
            let x = (Float(k) + 0.5) / m
            for candidate in [x.nextDown, x, x.nextUp] {
                values.append(candidate)
                if candidate * m == Float(k) + 0.5 { exact += 1 }
            }
        }
        // x = 0.5 is an exact tie for every odd maxval.
        values.append(0.5)
        if maxval % 2 == 1 { exact += 1 }
        return (values, exact)
    }

    static func encodeAll<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        maxval: Int, as type: Sample.Type) -> (failures: [String], exactTies: Int) {
        var rng = SeededGenerator(seed: UInt64(maxval))
        let (tieValues, exactTies) = ties(maxval: maxval)
        let random = (0..<512).map { _ in Float.random(in: -0.5...1.5, using: &rng) }
        let pool = tieValues + random
        var failures: [String] = []
        for layout in layouts {
            for count in counts {
                let n = 4 * count
                // Every special value at every sample position of a block and of the
                // tail; buffer b starts at each 16-byte place of the source, with
                // streaming stores in every other one: the even b at each 4-byte place
                // of 32 bytes of the destination (b = 0, 2, … 14: 0, 4, … 28), then at
                // places that are not 4-byte aligned, the odd b at 5·b mod 32. So the
                // 8-bit blocks run after each of their heads: with streaming stores the
                // pixels to the destination's 16-byte boundary in the default build
                // (0–3) and to its 32-byte boundary where the build targets AVX2
                // (0–7); without, 0 or 1 from the source's place where the build
                // targets AVX2.
                func mismatches(_ values: [Float], buffer b: Int) -> [String] {
                    let place = b % 2 == 0 ? (4 * (b / 2) + b / 16 * 2) % 32 : 5 * b % 32
                    return encodeMismatches(values, layout: layout, maxval: maxval, as: type, sourceStart: b % 4,
                                            destinationStart: place, streaming: b % 2 == 0)
                }
                for r in 0..<specials.count {
                    failures += mismatches((0..<n).map { specials[(r + $0) % specials.count] }, buffer: r)
                }
                // Ties and random values, the pool split into consecutive buffers.
                for (b, start) in stride(from: 0, to: pool.count, by: n).enumerated() {
                    failures += mismatches((0..<n).map { pool[(start + $0) % pool.count] }, buffer: b)
                }
            }
        }
        return (failures, exactTies)
    }

    @Test("8-bit RGB and RGBA encode: ties, NaN, ±∞, negatives, > 1 and random values, counts 1…33 and 2059",
          arguments: [1, 15, 100, 255])
    func encode8(maxval: Int) {
        let (failures, exactTies) = Self.encodeAll(maxval: maxval, as: UInt8.self)
        #expect(exactTies > 0, "maxval \(maxval): the tie values include no exact tie")
        #expect(failures.isEmpty, "maxval \(maxval): \(failures.count) mismatches, first \(failures.prefix(3))")
    }

    @Test("16-bit RGB and RGBA encode: ties, NaN, ±∞, negatives, > 1 and random values, counts 1…33 and 2059",
          arguments: [1023, 65535])
    func encode16(maxval: Int) {
        let (failures, exactTies) = Self.encodeAll(maxval: maxval, as: UInt16.self)
        #expect(exactTies > 0, "maxval \(maxval): the tie values include no exact tie")
        #expect(failures.isEmpty, "maxval \(maxval): \(failures.count) mismatches, first \(failures.prefix(3))")
    }

    @Test("the 8-bit RGBA encoder's blocks start on their boundary: its first pixels, for every alignment")
    func encoderLeadingPixels() throws {
        // The bytes are the same whichever pixels go alone, so `encodeMismatches` cannot
        // tell whether the blocks reach their boundary; this asks the helper directly.
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 64)
        defer { raw.deallocate() }
        for sourceOffset in stride(from: 0, to: 64, by: 16) {
            for destinationOffset in 0..<32 {
                for streaming in [false, true] {
                    let head = BytePacking.leadingPixels(source: UnsafeRawPointer(raw + sourceOffset),
                                                         destination: raw + 64 + destinationOffset,
                                                         streaming: streaming)
                    #if canImport(TargetFeatures.AVX2)
                    // With streaming stores, the pixels before a 32-byte boundary of a
                    // 4-byte-aligned destination (0, 7, 6, … 1 pixels from offsets 0, 4,
                    // 8, … 28); otherwise, and for a destination that never reaches
                    // one, a 32-byte boundary of the source.
                    let sourceHead = sourceOffset % 32 == 0 ? 0 : 1
                    let expected = streaming && destinationOffset % 4 == 0 ? (32 - destinationOffset) % 32 / 4 : sourceHead
                    #else
                    // With streaming stores, the pixels before a 16-byte boundary of a
                    // 4-byte-aligned destination: 0, 3, 2, 1 pixels from offsets 0, 4, 8, 12
                    // (and 16…28).
                    let expected = streaming && destinationOffset % 4 == 0 ? (16 - destinationOffset % 16) % 16 / 4 : 0
                    #endif
                    #expect(head == expected, "source +\(sourceOffset), destination +\(destinationOffset), streaming \(streaming)")
                }
            }
        }
    }

    @Test("pixelsBeforeBoundary: the pixels to the next boundary, or nil when pixels never reach one")
    func pixelsBeforeBoundaries() {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 64)
        defer { raw.deallocate() }
        for (boundary, pixelBytes) in [(16, 4), (32, 16), (64, 16), (64, 8), (64, 4)] {
            for offset in 0..<boundary {
                let expected: Int? = offset % pixelBytes == 0 ? ((boundary - offset) % boundary) / pixelBytes : nil
                #expect(pixelsBeforeBoundary(raw + offset, boundary: boundary, pixelBytes: pixelBytes) == expected,
                        "boundary \(boundary), \(pixelBytes)-byte pixels, offset \(offset)")
            }
        }
    }

    @Test("the encoder's exact ties round half to even")
    func tiesRoundToEven() throws {
        // 0.5 · 255 = 127.5 → 128; 0.5 · 65535 = 32767.5 → 32768; 0.125 · 100 = 12.5 → 12;
        // 0.375 · 100 = 37.5 → 38. Four pixels of each, so the block loop (not only the
        // tail) produces them.
        let cases: [(x: Float, maxval: Int, expected: UInt16)] = [
            (0.5, 255, 128), (0.5, 65535, 32768), (0.125, 100, 12), (0.375, 100, 38), (0.5, 1, 0),
        ]
        for (x, maxval, expected) in cases {
            let image = try FloatImage(width: 4, height: 1, pixels: Array(repeating: SIMD4(repeating: x), count: 4))
            #expect(try image.samples(layout: .rgba, maxval: maxval) == Array(repeating: expected, count: 16),
                    "\(x) · \(maxval)")
            if maxval <= 255 {
                var bytes = [UInt8](repeating: 0, count: 16)
                try bytes.withUnsafeMutableBufferPointer { try image.encode(into: $0, layout: .rgba, maxval: maxval, threads: 1) }
                #expect(bytes == Array(repeating: UInt8(expected), count: 16), "\(x) · \(maxval), 8-bit")
            }
        }
    }
}
