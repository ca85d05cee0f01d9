import Foundation
import Testing
@testable import PhotoKernels

/// App pixel buffers (SPEC §10): layouts, padding, premultiplied alpha, tiles, errors.
@Suite("Pixel buffers")
struct PixelBufferTests {
    /// Owned memory for a buffer, with guard bytes after every row's pixels.
    final class Storage {
        let bytes: UnsafeMutableRawPointer
        let count: Int
        init(count: Int, fill: UInt8 = 0xA5) {
            self.count = count
            bytes = .allocate(byteCount: count, alignment: 64)
            bytes.initializeMemory(as: UInt8.self, repeating: fill, count: count)
        }
        deinit { bytes.deallocate() }
        var array: [UInt8] { Array(UnsafeRawBufferPointer(start: bytes, count: count)) }
    }

    static func buffer(_ storage: Storage, width: Int, height: Int, bytesPerRow: Int, _ format: PixelFormat) throws -> PixelBuffer {
        try PixelBuffer(baseAddress: storage.bytes, width: width, height: height, bytesPerRow: bytesPerRow, format: format)
    }

    static let recipe: Recipe = {
        var r = KernelCatalog.sampleRecipe
        r[Vibrance.self] = Vibrance(amount: 0.3)
        return r
    }()

    @Test("the named formats are the formats their names say, with 4 · sample bytes a pixel")
    func namedFormats() throws {
        var named: [(PixelFormat, PixelFormat, Int)] = [
            (.bgra8Premultiplied, try PixelFormat(.bgra, alpha: .premultiplied, sample: .uint8), 4),
            (.rgba8, try PixelFormat(.rgba, alpha: .straight, sample: .uint8), 4),
            (.rgba8Premultiplied, try PixelFormat(.rgba, alpha: .premultiplied, sample: .uint8), 4),
            (.rgba16, try PixelFormat(.rgba, alpha: .straight, sample: .uint16), 8),
            (.rgba16Premultiplied, try PixelFormat(.rgba, alpha: .premultiplied, sample: .uint16), 8),
            (.rgbaFloat, try PixelFormat(.rgba, alpha: .straight, sample: .float32), 16),
        ]
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        named += [
            (.rgbaFloat16, try PixelFormat(.rgba, alpha: .straight, sample: .float16), 8),
            (.rgbaFloat16Premultiplied, try PixelFormat(.rgba, alpha: .premultiplied, sample: .float16), 8),
        ]
        #endif
        for (format, expected, bytes) in named {
            #expect(format == expected, "\(format)")
            #expect(format.bytesPerPixel == bytes, "\(format)")
        }
    }

    @Test("a padded RGBA8 buffer gives the unpadded raster's samples and never touches its padding")
    func paddedRows() throws {
        let (w, h) = (37, 5)
        let rowBytes = ((w * 4 + 63) / 64) * 64
        var rng = SeededGenerator(seed: 1)
        let raster = (0..<(w * h * 4)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let storage = Storage(count: rowBytes * h)
        for y in 0..<h {
            (storage.bytes + y * rowBytes).copyMemory(from: raster.withUnsafeBytes { $0.baseAddress! + y * w * 4 }, byteCount: w * 4)
        }
        for recipe in [Self.recipe, Recipe(preset: .vivid)] {
            let plan = try EditPlan(stages: recipe.stages).prepared(width: w, height: h, threads: 1)
            var expected = [UInt8](repeating: 0, count: raster.count)
            try raster.withUnsafeBufferPointer { i in
                try expected.withUnsafeMutableBufferPointer { o in
                    try plan.run(input: i, inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba, outputMaxval: 255)
                }
            }
            let copy = Storage(count: storage.count)
            copy.bytes.copyMemory(from: storage.bytes, byteCount: storage.count)
            try plan.run(try Self.buffer(copy, width: w, height: h, bytesPerRow: rowBytes, .rgba8))
            let out = copy.array
            for y in 0..<h {
                #expect(Array(out[(y * rowBytes)..<(y * rowBytes + w * 4)]) == Array(expected[(y * w * 4)..<((y + 1) * w * 4)]),
                        "row \(y)")
                #expect(out[(y * rowBytes + w * 4)..<((y + 1) * rowBytes)].allSatisfy { $0 == 0xA5 }, "row \(y) padding")
            }
        }
    }

    @Test("BGRA, ARGB and ABGR give the RGBA result with their channels in their own places")
    func channelOrders() throws {
        let (w, h) = (21, 3)
        var rng = SeededGenerator(seed: 2)
        let rgba = (0..<(w * h * 4)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let plan = try EditPlan(stages: Self.recipe.stages).prepared(width: w, height: h, threads: 1)
        func run(_ order: ChannelOrder, _ permutation: [Int]) throws -> [UInt8] {
            let storage = Storage(count: rgba.count)
            let p = storage.bytes.assumingMemoryBound(to: UInt8.self)
            for i in 0..<(w * h) { for c in 0..<4 { p[4 * i + permutation[c]] = rgba[4 * i + c] } }
            try plan.run(try Self.buffer(storage, width: w, height: h, bytesPerRow: w * 4,
                                         try PixelFormat(order, alpha: .straight, sample: .uint8)))
            return (0..<(w * h)).flatMap { i in (0..<4).map { p[4 * i + permutation[$0]] } }
        }
        let reference = try run(.rgba, [0, 1, 2, 3])
        #expect(try run(.bgra, [2, 1, 0, 3]) == reference)
        #expect(try run(.argb, [1, 2, 3, 0]) == reference)
        #expect(try run(.abgr, [3, 2, 1, 0]) == reference)
    }

    @Test("the row path in every four-byte order: the RGBA result with each channel in its place, an X order's padding byte kept, premultiplied pixels as their straight colour times alpha")
    func rowPathFourByteOrders() throws {
        let (w, h) = (23, 3)
        var rng = SeededGenerator(seed: 21)
        // Straight RGBA bytes, A = 0 and 255 included; the row path (vibrance is per pixel).
        var rgba = (0..<(w * h * 4)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        for i in stride(from: 0, to: w * h, by: 5) { rgba[4 * i + 3] = [0, 255, 1, 128][i % 4] }
        let plan = try EditPlan(Self.recipe).prepared(width: w, height: h, threads: 1)
        let orders: [(ChannelOrder, [Int])] = [(.rgba, [0, 1, 2, 3]), (.bgra, [2, 1, 0, 3]), (.argb, [1, 2, 3, 0]),
                                               (.abgr, [3, 2, 1, 0]), (.rgbx, [0, 1, 2, 3]), (.bgrx, [2, 1, 0, 3]),
                                               (.xrgb, [1, 2, 3, 0]), (.xbgr, [3, 2, 1, 0])]
        func run(_ format: PixelFormat, _ permutation: [Int], _ pixels: [UInt8]) throws -> [UInt8] {
            let storage = Storage(count: pixels.count)
            let p = storage.bytes.assumingMemoryBound(to: UInt8.self)
            for i in 0..<(w * h) { for c in 0..<4 { p[4 * i + permutation[c]] = pixels[4 * i + c] } }
            try plan.run(try Self.buffer(storage, width: w, height: h, bytesPerRow: w * 4, format))
            return (0..<(w * h)).flatMap { i in (0..<4).map { p[4 * i + permutation[$0]] } }
        }
        let straight = try run(.rgba8, [0, 1, 2, 3], rgba)
        // Opaque: what straight RGBA gives the same colours with alpha 255.
        var opaqueInput = rgba
        for i in 0..<(w * h) { opaqueInput[4 * i + 3] = 255 }
        let opaque = try run(.rgba8, [0, 1, 2, 3], opaqueInput)
        for (order, permutation) in orders {
            if order.alphaIndex != nil {
                #expect(try run(try PixelFormat(order, alpha: .straight, sample: .uint8), permutation, rgba) == straight, "\(order)")
            } else {
                // The padding byte goes in as anything and comes out as it was.
                let out = try run(try PixelFormat(order, alpha: .none, sample: .uint8), permutation, rgba)
                for i in 0..<(w * h) {
                    #expect(Array(out[(4 * i)..<(4 * i + 3)]) == Array(opaque[(4 * i)..<(4 * i + 3)]), "\(order) pixel \(i)")
                    #expect(out[4 * i + 3] == rgba[4 * i + 3], "\(order) pixel \(i): padding")
                }
            }
        }
        // Premultiplied: the straight pixels multiplied by alpha in (rounded), and out as
        // the straight result multiplied by alpha, one rounding: within 1 of
        // round(straight · A / 255) (the straight colour came back from rounded bytes).
        let premultipliedIn = (0..<(w * h)).flatMap { i -> [UInt8] in
            let a = Double(rgba[4 * i + 3])
            return (0..<3).map { UInt8((Double(rgba[4 * i + $0]) * a / 255).rounded()) } + [rgba[4 * i + 3]]
        }
        var reference: [UInt8]?
        for (order, permutation) in orders where order.alphaIndex != nil {
            let out = try run(try PixelFormat(order, alpha: .premultiplied, sample: .uint8), permutation, premultipliedIn)
            if let reference { #expect(out == reference, "\(order) premultiplied") } else { reference = out }
            for i in 0..<(w * h) {
                #expect(out[4 * i + 3] == rgba[4 * i + 3], "\(order) pixel \(i): alpha")
                if rgba[4 * i + 3] == 0 { #expect(Array(out[(4 * i)..<(4 * i + 4)]) == [0, 0, 0, 0]) }
            }
        }
    }

    /// Plans that take the fused block: the relative form with tone tables, its line and
    /// gains (the sample recipe), and the plain form without and with tables (sepia).
    static let blockRecipes: [(String, Recipe)] = [
        ("sample recipe", KernelCatalog.sampleRecipe),
        ("sepia", Recipe(effect: .sepia(intensity: 0.8))),
        ("exposure and sepia", Recipe(exposure: -0.4, effect: .sepia(intensity: 1))),
    ]

    @Test("the fused block gives the RGBA result to the bit in every channel order, 8- and 16-bit, straight and (without tones) premultiplied",
          arguments: 0..<3)
    func blockChannelOrders(_ index: Int) throws {
        let (name, recipe) = Self.blockRecipes[index]
        // Enough samples that a sum whose rounding depends on the order shows (16-bit).
        let (w, h) = (61, 17)
        var rng = SeededGenerator(seed: UInt64(10 + index))
        let rgba = (0..<(w * h * 4)).map { _ in UInt16.random(in: 0...65535, using: &rng) }
        let plan = try EditPlan(stages: recipe.stages).prepared(width: w, height: h, threads: 1)
        let orders: [(ChannelOrder, [Int])] = [(.rgba, [0, 1, 2, 3]), (.bgra, [2, 1, 0, 3]), (.argb, [1, 2, 3, 0]),
                                               (.abgr, [3, 2, 1, 0]), (.rgbx, [0, 1, 2, 3]), (.xbgr, [3, 2, 1, 0])]
        for sample in [SampleType.uint8, .uint16] {
            let eightBit = sample == .uint8, maxval = eightBit ? 255 : 65535
            let tables = plan.toneTables(maxval: maxval, eightBit: eightBit)
            for alpha in [AlphaMode.straight, .premultiplied] where eightBit || alpha == .straight {
                // 8-bit premultiplied pixels keep colour ≤ alpha.
                let pixels = eightBit ? rgba.enumerated().map { i, v in
                    alpha == .premultiplied && i % 4 != 3 ? min(v >> 8, rgba[i | 3] >> 8) : v >> 8 } : rgba
                func run(_ order: ChannelOrder, _ permutation: [Int]) throws -> [UInt16] {
                    let format = try PixelFormat(order, alpha: order.hasAlpha ? alpha : .none, sample: sample)
                    let (r, g, b) = order.colorIndices
                    let positions = ChannelPositions(red: r, green: g, blue: b, fourth: order.fourthIndex!)
                    if alpha == .straight {
                        guard case .matrix? = plan.fusedRows(maxval: maxval, eightBit: eightBit, tables: tables,
                                                             positions: positions) else {
                            Issue.record("\(name), \(order): the fused block is not taken")
                            return []
                        }
                    } else {
                        // The premultiplied block runs (with tone stages, on its 2D tables,
                        // built by the first run with a translucent pixel).
                        #expect(plan.premultipliedBlock(format, format, variant: .simd4, building: true) != nil,
                                "\(name), \(order): premultiplied block")
                    }
                    let size = eightBit ? 1 : 2
                    let storage = Storage(count: pixels.count * size)
                    for i in 0..<(w * h) {
                        for c in 0..<4 {
                            let at = 4 * i + permutation[c], v = pixels[4 * i + c]
                            if eightBit { storage.bytes.storeBytes(of: UInt8(v), toByteOffset: at, as: UInt8.self) }
                            else { storage.bytes.storeBytes(of: v, toByteOffset: 2 * at, as: UInt16.self) }
                        }
                    }
                    try plan.run(try Self.buffer(storage, width: w, height: h, bytesPerRow: w * 4 * size, format))
                    return (0..<(w * h)).flatMap { i in
                        (0..<4).map { c -> UInt16 in
                            let at = 4 * i + permutation[c]
                            return eightBit ? UInt16(storage.bytes.load(fromByteOffset: at, as: UInt8.self))
                                : storage.bytes.load(fromByteOffset: 2 * at, as: UInt16.self)
                        }
                    }
                }
                let reference = try run(.rgba, [0, 1, 2, 3])
                #expect(reference != pixels, "\(name): the plan changes the pixels")
                for (order, permutation) in orders.dropFirst() where order.hasAlpha || alpha == .straight {
                    #expect(try run(order, permutation) == reference, "\(name), \(order), \(sample), \(alpha)")
                }
            }
        }
    }

    @Test("the 2D premultiplied tone tables, which evaluate each fraction c/A once, hold every entry's own evaluation to the bit: entries and coordinates, uniform and per-channel tones, with and without a line")
    func premultipliedTablesShareFractions() throws {
        let curve = try ToneCurve(masterPoints: [SIMD2(0, 0), SIMD2(0.3, 0.2), SIMD2(1, 1)])
        let perChannel = ToneCurve(red: try ToneCurve.Points([SIMD2(0, 0.05), SIMD2(0.5, 0.55), SIMD2(1, 1)]),
                                   blue: try ToneCurve.Points([SIMD2(0, 0), SIMD2(0.6, 0.4), SIMD2(1, 0.9)]))
        let cases: [(String, [any ToneStage])] = [
            ("exposure 0.3", [Exposure(ev: 0.3)]), ("exposure −2.5", [Exposure(ev: -2.5)]), ("curve", [curve]),
            ("exposure + per-channel curve", [Exposure(ev: 1), perChannel]),
        ]
        for (name, tones) in cases {
            let tables = ToneTables(premultiplied: tones)
            let line = ToneLine(tones, maxval: 255, eightBit: true)
            for channel in 0..<3 {
                let entries = [tables.red, tables.green, tables.blue][channel]
                let coordinates = tables.coordinates.map { [$0.red, $0.green, $0.blue][channel] }
                var wrong = 0
                for i in 0..<65_536 {
                    let a = i >> 8, c = i & 0xFF
                    var x: Float, sample: Int?
                    if a == 255, let line, c >= line.from {
                        (x, sample) = (line.value(c), c)
                    } else {
                        // The tones of c/A in Double, rounded once.
                        let straight = a == 0 ? 0 : Double(c) / Double(a)
                        x = Float(tones.reduce(straight) { $1.evaluate($0, channel: channel) })
                    }
                    if entries[i].bitPattern != x.bitPattern { wrong += 1 }
                    if let coordinates, let segment = line?.segment {
                        let u = sample.map(Float.init) ?? Float((Double(x) - segment.offset) * 255 / segment.gain)
                        if coordinates[i].bitPattern != u.bitPattern { wrong += 1 }
                    }
                }
                #expect(wrong == 0, "\(name), channel \(channel): \(wrong) entries differ")
            }
        }
    }

    @Test("the four-byte row codecs, every order and alpha mode, widths 1…33, 64 and 67: decoding is SPEC §0 per byte or SPEC §10's c / A (the quotient of the stored integers, rounded once, as the generic loop computes it); encoding is SampleCoding.encode per lane, NaN, ±∞, ±0 and ties included; an X order keeps its padding byte; nothing past the row is written")
    func fourByteCodecs() throws {
        var rng = SeededGenerator(seed: 33)
        // The memory places of R, G, B and the fourth byte.
        let orders: [(ChannelOrder, [Int])] = [(.rgba, [0, 1, 2, 3]), (.bgra, [2, 1, 0, 3]), (.argb, [1, 2, 3, 0]),
                                               (.abgr, [3, 2, 1, 0]), (.rgbx, [0, 1, 2, 3]), (.bgrx, [2, 1, 0, 3]),
                                               (.xrgb, [1, 2, 3, 0]), (.xbgr, [3, 2, 1, 0])]
        let special: [Float] = [.nan, .infinity, -.infinity, -0.0, 0, 1, -1, 2, 0.5 / 255, 1.5 / 255, 2.5 / 255,
                                127.5 / 255, 254.5 / 255, Float(1).nextDown, Float(1).nextUp, .leastNonzeroMagnitude]
        let greyAlpha = RowCodec(format: try PixelFormat(.grayAlpha, alpha: .premultiplied, sample: .uint8))
        for (order, places) in orders {
            for mode in order.alphaIndex == nil ? [AlphaMode.none] : [.straight, .premultiplied] {
                let codec = RowCodec(format: try PixelFormat(order, alpha: mode, sample: .uint8))
                for width in Array(1...33) + [64, 67] {
                    let bytes: [UInt8] = rowWithAlphaPatterns(width: width, places: places, cycle: [0, 255, 1], using: &rng)
                    // Two guard pixels after the row: the decoder must not write them.
                    var decoded = [SIMD4<Float>](repeating: SIMD4(repeating: -7), count: width + 2)
                    decoded.withUnsafeMutableBufferPointer { codec.decode(bytes, count: width, into: $0.baseAddress!) }
                    #expect(decoded[width...].allSatisfy { $0 == SIMD4(repeating: -7) }, "\(order) \(mode) width \(width): wrote past the row")
                    for i in 0..<width {
                        let expected = decodedPixel(places.map { Float(bytes[4 * i + $0]) }, mode, maxval: 255)
                        if mode == .premultiplied {
                            // The generic loop (grey and alpha) gives red's value.
                            var grey = SIMD4<Float>()
                            greyAlpha.decode([bytes[4 * i + places[0]], bytes[4 * i + places[3]]], count: 1, into: &grey)
                            #expect(grey.x.bitPattern == expected.x.bitPattern, "\(order) \(mode) pixel \(i): generic loop")
                        }
                        for k in 0..<4 {
                            #expect(decoded[i][k].bitPattern == expected[k].bitPattern,
                                    "\(order) \(mode) width \(width) pixel \(i) lane \(k): \(decoded[i][k]), expected \(expected[k])")
                        }
                    }
                    // Encoding: special values and values near every tie, then SPEC §0 per lane.
                    let source = (0..<width).map { _ in
                        SIMD4<Float>((0..<4).map { _ -> Float in
                            Bool.random(using: &rng) ? special.randomElement(using: &rng)!
                                : (Float(Int.random(in: -2...257, using: &rng)) + [0, 0.5, 0.25][Int.random(in: 0...2, using: &rng)]) / 255
                        })
                    }
                    // The destination's bytes at random (an X order keeps each pixel's own
                    // padding byte), and eight guard bytes after the row.
                    let before = (0..<(4 * width + 8)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                    var out = before
                    out.withUnsafeMutableBytes { codec.encode(source, count: width, into: $0.baseAddress!) }
                    #expect(out[(4 * width)...] == before[(4 * width)...], "\(order) \(mode) width \(width): wrote past the row")
                    for i in 0..<width {
                        let x = encoderInput(source[i], mode)
                        for k in 0..<4 {
                            let expected = k == 3 && mode == .none ? before[4 * i + places[3]]
                                : UInt8(SampleCoding.encode(x[k], maxval: 255))
                            #expect(out[4 * i + places[k]] == expected,
                                    "\(order) \(mode) width \(width) pixel \(i) lane \(k): \(source[i])")
                        }
                    }
                }
            }
        }
    }

    @Test("premultiplied 8-bit: every (colour ≤ alpha) pair survives a conversion exactly, through the block and the row path; A = 0 stays all zero")
    func premultipliedRoundTrip() throws {
        // Every pair (c, a) with c ≤ a, as pixel (c, c/2, c, a) in BGRA, converted to RGBA
        // by an empty plan: the block (colour divided by alpha, multiplied back, rounded
        // once) and the scalar reference (through straight `Float`).
        var pixels: [UInt8] = []
        for a in 0...255 { for c in 0...a { pixels += [UInt8(c), UInt8(c / 2), UInt8(c), UInt8(a)] } }
        let count = pixels.count / 4
        let source = Storage(count: pixels.count), destination = Storage(count: pixels.count)
        source.bytes.copyMemory(from: pixels, byteCount: pixels.count)
        let rgbaPremultiplied = try PixelFormat(.rgba, alpha: .premultiplied, sample: .uint8)
        let plan = try EditPlan(stages: []).prepared(width: count, height: 1, threads: 1)
        #expect(plan.premultipliedBlock(.bgra8Premultiplied, rgbaPremultiplied, variant: .simd4, building: false) != nil)
        for variant in [KernelVariant.simd4, .scalar] {
            try plan.run(from: try Self.buffer(source, width: count, height: 1, bytesPerRow: count * 4, .bgra8Premultiplied),
                         to: try Self.buffer(destination, width: count, height: 1, bytesPerRow: count * 4, rgbaPremultiplied),
                         variant: variant)
            let out = destination.array
            for i in 0..<count {
                let (b, g, r, a) = (pixels[4 * i], pixels[4 * i + 1], pixels[4 * i + 2], pixels[4 * i + 3])
                let expected: [UInt8] = a == 0 ? [0, 0, 0, 0] : [r, g, b, a]
                #expect(Array(out[(4 * i)..<(4 * i + 4)]) == expected, "\(variant), pixel \(i): \(Array(pixels[(4 * i)..<(4 * i + 4)]))")
            }
        }
        // The identity recipe in place returns the bytes.
        try EditPlan(stages: Recipe.identity.stages).prepared(width: count, height: 1)
            .run(try Self.buffer(source, width: count, height: 1, bytesPerRow: count * 4, .bgra8Premultiplied))
        #expect(source.array == pixels)
    }

    @Test("premultiplied BGRA8: SPEC §10 and §8 per sample against Double (colour / alpha, recipe, clamp, × alpha), every (c ≤ A); exported into straight RGBA8 the clamped result itself, A = 0 all zero")
    func premultipliedRecipe() throws {
        // A worked pixel: straight (200, 100, 50, 128), stored premultiplied (100, 50, 25, 128).
        var pixels: [UInt8] = [25, 50, 100, 128]
        var rng = SeededGenerator(seed: 3)
        for _ in 0..<2000 {
            let a = UInt8.random(in: 0...255, using: &rng)
            pixels += (0..<3).map { _ in UInt8.random(in: 0...a, using: &rng) } + [a]
        }
        pixels += [0, 0, 0, 0, 7, 7, 7, 255, 255, 255, 255, 255]
        // Every (colour ≤ alpha) pair on one channel, the other two spread over 0…A.
        for a in 0...255 {
            for c in 0...a {
                pixels += [UInt8((c * 7 + 3) % (a + 1)), UInt8((c * 13 + 5) % (a + 1)), UInt8(c), UInt8(a)]
            }
        }
        let count = pixels.count / 4
        var exposedVivid = Recipe(preset: .vivid)
        exposedVivid.exposure = 0.3  // tone tables before the relative form, and their line
        for recipe in [Recipe(preset: .vivid), KernelCatalog.sampleRecipe, Self.recipe, exposedVivid] {
            let stages = recipe.stages, operations = recipe.operationsInOrder
            // The reference; a fresh plan's first run, whose translucent pixels take the
            // premultiplied block with the 2D tables it builds at the first of them; and
            // that plan's second run, the block on every pixel from the start.
            let hasTones = stages.contains { if case .tone = $0 { true } else { false } }
            let matrixShape = !stages.contains { if case .pixel = $0 { true } else { false } }
            // Tables of the plan's own: its first run builds them at the first translucent pixel.
            let simd = try EditPlan(stages: stages).prepared(width: count, height: 1, threads: 1, minimumBandPixels: 65_536,
                                                             toneTableCache: nil)
            let scalar = try EditPlan(stages: stages).prepared(width: count, height: 1, threads: 1, minimumBandPixels: 65_536)
            var firstRun: [UInt8] = []
            for (variant, run) in [(KernelVariant.scalar, 1), (.simd4, 1), (.simd4, 2)] {
                let plan = variant == .scalar ? scalar : simd
                let storage = Storage(count: pixels.count)
                storage.bytes.copyMemory(from: pixels, byteCount: pixels.count)
                let takesBlock = plan.premultipliedBlock(.bgra8Premultiplied, .bgra8Premultiplied, variant: variant,
                                                         building: false) != nil
                #expect(takesBlock == (variant == .simd4 && matrixShape && (!hasTones || run == 2)),
                        "\(variant), run \(run): premultiplied block from the start \(takesBlock)")
                try plan.run(try Self.buffer(storage, width: count, height: 1, bytesPerRow: count * 4, .bgra8Premultiplied),
                             variant: variant)
                let out = storage.array
                // The first run, opaque pixels by the straight block and translucent ones by
                // the late 2D tables, equals the second, every pixel by the 2D tables.
                if variant == .simd4 && run == 1 { firstRun = out }
                if variant == .simd4 && run == 2 {
                    let differing = (0..<pixels.count).filter { out[$0] != firstRun[$0] }
                    #expect(differing.isEmpty, "run 2 differs from run 1 at \(differing.count) samples, first \(differing.first ?? -1)")
                }
                for i in 0..<count {
                    let a = Double(pixels[4 * i + 3]) / 255
                    guard a > 0 else {
                        #expect(Array(out[(4 * i)..<(4 * i + 4)]) == [0, 0, 0, 0]); continue
                    }
                    let straight = SIMD4(Double(pixels[4 * i + 2]) / 255 / a, Double(pixels[4 * i + 1]) / 255 / a,
                                         Double(pixels[4 * i]) / 255 / a, a)
                    let exact = operations.filter { !$0.isIdentity }.reduce(straight) {
                        $1.evaluate($0, x: i, y: 0, width: count, height: 1)
                    }
                    for (c, byte) in [(0, 2), (1, 1), (2, 0)] {
                        let x = min(max(exact[c], 0), 1) * a
                        let verdict = TieAwareCheck.accepts(Int(out[4 * i + byte]), x, maxval: 255)
                        #expect(verdict.ok, "\(variant), run \(run), pixel \(i) channel \(c): got \(out[4 * i + byte]), exact \(x * 255)")
                    }
                    #expect(out[4 * i + 3] == pixels[4 * i + 3])
                }
            }
            // The same pixels into straight RGBA8 (the conversion block for the matrix
            // shape, red and blue exchanged; the row path for the others), by a plan of
            // its own: its first run builds the 2D tables, its second has them.
            let export = try EditPlan(stages: stages).prepared(width: count, height: 1, threads: 1, minimumBandPixels: 65_536,
                                                               toneTableCache: nil)
            for run in 1...2 {
                let source = Storage(count: pixels.count), destination = Storage(count: pixels.count)
                source.bytes.copyMemory(from: pixels, byteCount: pixels.count)
                #expect((export.premultipliedBlock(.bgra8Premultiplied, .rgba8, variant: .simd4, building: false) != nil)
                        == (matrixShape && (!hasTones || run == 2)), "export, run \(run)")
                try export.run(from: try Self.buffer(source, width: count, height: 1, bytesPerRow: count * 4, .bgra8Premultiplied),
                               to: try Self.buffer(destination, width: count, height: 1, bytesPerRow: count * 4, .rgba8))
                let out = destination.array
                for i in 0..<count {
                    let a = Double(pixels[4 * i + 3]) / 255
                    guard a > 0 else {
                        #expect(Array(out[(4 * i)..<(4 * i + 4)]) == [0, 0, 0, 0], "export, run \(run), pixel \(i)"); continue
                    }
                    let exact = operations.filter { !$0.isIdentity }.reduce(Self.straightColour(pixels, i, order: .bgra, premultiplied: true)) {
                        $1.evaluate($0, x: i, y: 0, width: count, height: 1)
                    }
                    for c in 0..<3 {
                        let x = min(max(exact[c], 0), 1)
                        #expect(TieAwareCheck.accepts(Int(out[4 * i + c]), x, maxval: 255).ok,
                                "export, run \(run), pixel \(i) channel \(c): got \(out[4 * i + c]), exact \(x * 255)")
                    }
                    #expect(out[4 * i + 3] == pixels[4 * i + 3])
                }
            }
        }
    }

    @Test("plans with equal tone stages share their tables: a new plan per slider change finds the 2D tables an earlier plan built, not those of other tones; its pixels equal a fresh build's")
    func sharedToneTables() throws {
        let (w, h) = (37, 5)
        var pixels: [UInt8] = []
        for i in 0..<(w * h) {
            let a = UInt8([255, 255, 128, 7, 0][i % 5])
            pixels += (0..<3).map { UInt8((i * (37 + 11 * $0)) % (Int(a) + 1)) } + [a]
        }
        func run(_ recipe: Recipe) throws -> (PreparedEditPlan, [UInt8]) {
            let plan = try EditPlan(recipe).prepared(width: w, height: h, threads: 1)
            let storage = Storage(count: pixels.count)
            storage.bytes.copyMemory(from: pixels, byteCount: pixels.count)
            try plan.run(try Self.buffer(storage, width: w, height: h, bytesPerRow: 4 * w, .bgra8Premultiplied))
            return (plan, storage.array)
        }
        // Exposures no other test uses.
        var first = Recipe(preset: .vivid)
        first.exposure = 0.2917
        let (a, _) = try run(first)
        let built = try #require(a.premultipliedToneTables(building: false))
        // Another slider moved: the new plan takes the same tables before its first run.
        var second = first
        second.adjustments.saturation = 1.35
        let b = try EditPlan(second).prepared(width: w, height: h, threads: 1)
        #expect(b.premultipliedToneTables(building: false) === built)
        // Other tones: none kept.
        var other = first
        other.exposure = 0.2918
        #expect(try EditPlan(other).prepared(width: w, height: h, threads: 1).premultipliedToneTables(building: false) == nil)
        // The shared tables give the pixels the plan's own tables give.
        let (_, shared) = try run(second)
        let own = try EditPlan(second).prepared(width: w, height: h, threads: 1, minimumBandPixels: 65_536, toneTableCache: nil)
        let storage = Storage(count: pixels.count)
        storage.bytes.copyMemory(from: pixels, byteCount: pixels.count)
        try own.run(try Self.buffer(storage, width: w, height: h, bytesPerRow: 4 * w, .bgra8Premultiplied))
        #expect(own.premultipliedToneTables(building: false) !== built)
        #expect(storage.array == shared)
    }

    @Test("the table cache keeps the most recently used tables of the library's tone stages, by kind; other tone stages, even Hashable ones, are built every time")
    func toneTableCache() {
        struct Unhashable: ToneStage {
            var name: String { "unhashable" }
            func map(_ x: Float, channel: Int) -> Float { x * 2 }
            var isChannelUniform: Bool { true }
            func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {}
        }
        // Equality that reads less than `map` does: sharing by it would mix two stages' tables.
        struct LooselyEqual: ToneStage, Hashable {
            let k: Float, tag: Int
            var name: String { "loose" }
            func map(_ x: Float, channel: Int) -> Float { x * k }
            var isChannelUniform: Bool { true }
            func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {}
            static func == (a: Self, b: Self) -> Bool { a.tag == b.tag }
            func hash(into hasher: inout Hasher) { hasher.combine(tag) }
        }
        let cache = SharedToneTables(capacity: 2)
        var builds = 0
        func tables(_ tones: [any ToneStage], kind: Int = 0, building: Bool = true) -> ToneTables? {
            cache.tables(for: tones, kind: kind, building: building) {
                builds += 1
                return ToneTables(tones, maxval: 255, eightBit: true)
            }
        }
        let e1: [any ToneStage] = [Exposure(ev: 1)], e2: [any ToneStage] = [Exposure(ev: 2)]
        let e3: [any ToneStage] = [Exposure(ev: 3)]
        let t1 = tables(e1)
        #expect(tables(e1) === t1 && builds == 1)
        #expect(tables([Exposure(ev: 1)], kind: -255) !== t1 && builds == 2)   // another kind
        #expect(tables(e2, building: false) == nil && builds == 2)
        _ = tables(e2)                                                          // e1 (kind 0) now least recent
        _ = tables(e3)
        #expect(tables(e1, building: false) == nil)
        #expect(tables(e3, building: false) != nil && tables(e2, building: false) != nil)
        let u: [any ToneStage] = [Unhashable()]
        #expect(SharedToneTables.key(u, kind: 0) == nil)
        #expect(SharedToneTables.key([LooselyEqual(k: 1.5, tag: 7)], kind: 0) == nil)
        #expect(SharedToneTables.key([Exposure(ev: 1), ToneCurve(master: .identity)], kind: 0) != nil)
        let before = builds
        _ = tables(u); _ = tables(u)
        #expect(builds == before + 2 && tables(u, building: false) == nil)
    }

    @Test("premultiplied 8-bit pixels build the 2D tables at the first translucent pixel, for the premultiplied block (exposure and a matrix) and for the row path (a per-pixel stage after exposure) alike, not for an opaque image; straight pixels never build them")
    func premultipliedTablesOnlyWhereUsed() throws {
        let count = 40
        var translucent = [UInt8](repeating: 255, count: 4 * count), opaque = translucent
        for i in 0..<count { translucent[4 * i + 3] = UInt8(100 + i); for c in 0..<3 { translucent[4 * i + c] = UInt8(i) } }
        for c in 0..<(4 * count) where c % 4 != 3 { opaque[c] = UInt8(c % 251) }
        var exposed = Recipe(preset: .vivid)
        exposed.exposure = 0.3
        var perPixel = exposed
        perPixel[Vibrance.self] = Vibrance(amount: 0.4)
        for (name, recipe) in [("exposure and vivid", exposed), ("exposure and vibrance", perPixel)] {
            // Tables of the plan's own, none from plans with equal tones.
            let plan = try EditPlan(recipe).prepared(width: count, height: 1, threads: 1, minimumBandPixels: 65_536,
                                                     toneTableCache: nil)
            let storage = Storage(count: 4 * count)
            storage.bytes.copyMemory(from: opaque, byteCount: opaque.count)
            try plan.run(try Self.buffer(storage, width: count, height: 1, bytesPerRow: 4 * count, .bgra8Premultiplied))
            #expect(plan.premultipliedToneTables(building: false) == nil, "\(name): built for an opaque image")
            storage.bytes.copyMemory(from: translucent, byteCount: translucent.count)
            try plan.run(try Self.buffer(storage, width: count, height: 1, bytesPerRow: 4 * count, .rgba8))
            #expect(plan.premultipliedToneTables(building: false) == nil, "\(name): built for straight pixels")
            try plan.run(try Self.buffer(storage, width: count, height: 1, bytesPerRow: 4 * count, .bgra8Premultiplied))
            #expect(plan.premultipliedToneTables(building: false) != nil, "\(name): 2D tables not built")
        }
    }

    @Test("premultiplied BGRA8 in, straight RGBA16 and RGBA Float out: each sample the straight result; a transparent pixel all zero (SPEC §10) there, in grey 8-bit and from premultiplied RGBA16, though the recipe lifts black; row path (a per-pixel stage), block and scalar reference alike")
    func premultipliedToStraight16() throws {
        // Worked pixels, then a row whose transparent pixels sit where the row path's
        // tests of 32 and 8 pixels must find them: several in one group, alone in the
        // last 8 of a group of 32 (90), first in a group of 8 (96), in the last few (109).
        var pixels: [UInt8] = [25, 50, 100, 128, 0, 0, 0, 0, 10, 20, 30, 255, 40, 0, 9, 0]
        for i in 4..<111 {
            let a: UInt8 = [9, 30, 37, 90, 96, 109].contains(i) ? 0 : i % 3 == 0 ? 255 : UInt8(100 + i)
            pixels += [UInt8(i) % (a | 1), UInt8(2 * i) % (a | 1), a == 0 ? 3 : 7, a]
        }
        let count = pixels.count / 4
        let source = Storage(count: pixels.count)
        source.bytes.copyMemory(from: pixels, byteCount: pixels.count)
        var lifted = Recipe(preset: .vivid)
        lifted.adjustments.brightness = 0.3
        var vibrant = lifted
        vibrant[Vibrance.self] = Vibrance(amount: 0.3)
        for recipe in [Recipe(preset: .vivid), lifted, vibrant] {
            for variant in [KernelVariant.simd4, .scalar] {
                let plan = try EditPlan(stages: recipe.stages).prepared(width: count, height: 1)
                let input = try Self.buffer(source, width: count, height: 1, bytesPerRow: pixels.count, .bgra8Premultiplied)
                let words = Storage(count: 8 * count), floats = Storage(count: 16 * count), grey = Storage(count: count)
                try plan.run(from: input, to: try Self.buffer(words, width: count, height: 1, bytesPerRow: 8 * count, .rgba16),
                             variant: variant)
                try plan.run(from: input, to: try Self.buffer(floats, width: count, height: 1, bytesPerRow: 16 * count, .rgbaFloat),
                             variant: variant)
                try plan.run(from: input, to: try Self.buffer(grey, width: count, height: 1, bytesPerRow: count,
                                                              try PixelFormat(.gray, alpha: .none, sample: .uint8)),
                             variant: variant)
                // The same pixels as premultiplied RGBA16 (colour and alpha · 257) into straight
                // Float: the row path's test on decoded alphas.
                let wide = Storage(count: 8 * count), floatsFromWide = Storage(count: 16 * count)
                for i in 0..<count {
                    for (c, byte) in [(0, 2), (1, 1), (2, 0), (3, 3)] {
                        wide.bytes.storeBytes(of: UInt16(pixels[4 * i + byte]) * 257, toByteOffset: 8 * i + 2 * c, as: UInt16.self)
                    }
                }
                try plan.run(from: try Self.buffer(wide, width: count, height: 1, bytesPerRow: 8 * count,
                                                   try PixelFormat(.rgba, alpha: .premultiplied, sample: .uint16)),
                             to: try Self.buffer(floatsFromWide, width: count, height: 1, bytesPerRow: 16 * count, .rgbaFloat),
                             variant: variant)
                let fw = floatsFromWide.bytes.assumingMemoryBound(to: Float.self)
                let out = words.bytes.assumingMemoryBound(to: UInt16.self), f = floats.bytes.assumingMemoryBound(to: Float.self)
                for i in 0..<count {
                    let a = Double(pixels[4 * i + 3]) / 255
                    #expect(out[4 * i + 3] == UInt16(pixels[4 * i + 3]) * 257)
                    guard a > 0 else {
                        #expect(Array(UnsafeBufferPointer(start: out + 4 * i, count: 4)) == [0, 0, 0, 0], "\(variant), pixel \(i)")
                        #expect(Array(UnsafeBufferPointer(start: f + 4 * i, count: 4)) == [0, 0, 0, 0], "\(variant), pixel \(i)")
                        #expect(Array(UnsafeBufferPointer(start: fw + 4 * i, count: 4)) == [0, 0, 0, 0], "\(variant), pixel \(i)")
                        #expect(grey.bytes.load(fromByteOffset: i, as: UInt8.self) == 0, "\(variant), pixel \(i)")
                        continue
                    }
                    let straight = SIMD4(Double(pixels[4 * i + 2]) / 255 / a, Double(pixels[4 * i + 1]) / 255 / a,
                                         Double(pixels[4 * i]) / 255 / a, a)
                    let exact = recipe.operationsInOrder.reduce(straight) { $1.evaluate($0, x: i, y: 0, width: count, height: 1) }
                    for c in 0..<3 {
                        let x = min(max(exact[c], 0), 1)
                        #expect(TieAwareCheck.accepts(Int(out[4 * i + c]), x, maxval: 65535).ok, "\(variant), pixel \(i) channel \(c)")
                        // A Float destination keeps the extended range: the result unclamped.
                        #expect(abs(Double(f[4 * i + c]) - exact[c]) <= 1e-5, "\(variant), pixel \(i) channel \(c): \(f[4 * i + c])")
                    }
                    #expect(f[4 * i + 3] == Float(pixels[4 * i + 3]) / 255)
                }
            }
        }
    }

    /// The exact result of a conversion case for a straight colour (alpha last) at
    /// column `x` of a row `width` wide.
    typealias Exact = (SIMD4<Double>, Int, Int) -> SIMD4<Double>

    /// 300 pixels for the conversion blocks, straight and premultiplied: runs of opaque
    /// pixels (whole blocks, to take the opaque and line paths), translucent pixels and
    /// A = 0, colours at most alpha where premultiplied (but for every fifth transparent
    /// pixel, which keeps its colour: c / 0 is +∞ there, and the pixel must still come
    /// out all zero). R G B A each.
    static func conversionPools() -> (straight: [UInt8], premultiplied: [UInt8]) {
        var rng = SeededGenerator(seed: 11)
        var straightPool: [UInt8] = [], premultipliedPool: [UInt8] = []
        for k in 0..<300 {
            let a: UInt8 = k % 40 < 24 ? 255 : k % 7 == 0 ? 0 : UInt8.random(in: 1...254, using: &rng)
            // Most colours on exposure's line (its segment starts far below 128), so that
            // the loops that take samples as coordinates run; the rest anywhere.
            let colour = (0..<3).map { _ in UInt8.random(in: k % 40 < 32 ? 128...255 : 0...255, using: &rng) }
            straightPool += colour + [a]
            premultipliedPool += colour.map { a == 0 && k % 5 == 0 ? $0 : UInt8((Int($0) * Int(a) + 127) / 255) } + [a]
        }
        return (straightPool, premultipliedPool)
    }

    /// A row of `width` consecutive pixels of a pool (R G B A each), from a place that
    /// depends on the width, in `order`.
    static func conversionRow(_ pool: [UInt8], width: Int, order: ChannelOrder) -> [UInt8] {
        let (r, g, b) = order.colorIndices
        var pixels = [UInt8](repeating: 0, count: 4 * width)
        for i in 0..<width {
            let p = Array(pool[(4 * ((i + 13 * width) % (pool.count / 4)))...].prefix(4))
            (pixels[4 * i + r], pixels[4 * i + g], pixels[4 * i + b]) = (p[0], p[1], p[2])
            pixels[4 * i + order.alphaIndex!] = p[3]
        }
        return pixels
    }

    /// Pixel `i` of an 8-bit row in `order` as straight R G B A in [0, 1], in `Double`
    /// (a premultiplied colour divided by its alpha, A > 0).
    static func straightColour(_ pixels: [UInt8], _ i: Int, order: ChannelOrder, premultiplied: Bool) -> SIMD4<Double> {
        let (r, g, b) = order.colorIndices
        let a = Double(pixels[4 * i + order.alphaIndex!]) / 255, k = premultiplied ? 1 / a : 1
        return SIMD4(Double(pixels[4 * i + r]) / 255 * k, Double(pixels[4 * i + g]) / 255 * k, Double(pixels[4 * i + b]) / 255 * k, a)
    }

    /// The conversion blocks' plans: the matrix forms, tone tables and their line, the
    /// late 2D tables and gains.
    static func conversionCases() -> [(String, [Stage], Exact)] {
        var exposedVivid = Recipe(preset: .vivid)
        exposedVivid.exposure = 0.3
        var vignetted = exposedVivid
        vignetted.vignette = .vignette(intensity: 0.8, radius: 1.2)
        // Black comes out grey: the 2D tables' row A = 0 (tones of 0) would give colour.
        var lifted = exposedVivid
        lifted.adjustments.brightness = 0.3
        let plain = ColorMatrix(SIMD3(0.9, 0.2, 0.05), SIMD3(0.1, 0.8, 0.1), SIMD3(0, 0.3, 0.9), offset: SIMD3(0.02, -0.01, 0.03))
        func recipe(_ name: String, _ r: Recipe) -> (String, [Stage], Exact) {
            let operations = r.operationsInOrder.filter { !$0.isIdentity }
            return (name, r.stages, { c, x, width in operations.reduce(c) { $1.evaluate($0, x: x, y: 0, width: width, height: 1) } })
        }
        return [
            recipe("vivid", Recipe(preset: .vivid)),
            recipe("vivid at +0.3 EV", exposedVivid),
            recipe("vignetted", vignetted),
            recipe("lifted", lifted),
            ("plain matrix", [.affine(ColorMatrixKernel(plain))], { c, _, _ in
                let y = plain.applied(to: SIMD3(c.x, c.y, c.z))
                return SIMD4(y.x, y.y, y.z, c.w)
            }),
        ]
    }

    @Test("8-bit pixels into 16-bit ones through the widening block: every order with alpha in and out, straight and premultiplied in and out, integer and Float16 samples; matrix forms, tone tables, their line, the late 2D tables and gains; widths 1…33 and rows that start off a 64-byte boundary; each sample within SPEC §8 of Double (premultiplied out: clamp(C′)·a; Float16: straight unclamped, the nearest half but within 2⁻²⁰·max(1, |x|) of a rounding boundary), alpha 257·A or Float16(A/255), a transparent premultiplied pixel all zero")
    func wideningBlock() throws {
        let (straightPool, premultipliedPool) = Self.conversionPools()
        let cases = Self.conversionCases()
        let sources: [PixelFormat] = [.rgba8, .bgra8Premultiplied, try PixelFormat(.argb, alpha: .premultiplied, sample: .uint8),
                                      try PixelFormat(.abgr, alpha: .straight, sample: .uint8),
                                      try PixelFormat(.rgba, alpha: .premultiplied, sample: .uint8),
                                      try PixelFormat(.bgra, alpha: .straight, sample: .uint8)]
        var destinations: [PixelFormat] = [.rgba16, try PixelFormat(.bgra, alpha: .straight, sample: .uint16),
                                           try PixelFormat(.argb, alpha: .straight, sample: .uint16),
                                           try PixelFormat(.abgr, alpha: .straight, sample: .uint16)]
        destinations += try [ChannelOrder.rgba, .bgra, .abgr].map { try PixelFormat($0, alpha: .premultiplied, sample: .uint16) }
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        destinations += try [ChannelOrder.rgba, .bgra, .argb, .abgr].map { try PixelFormat($0, alpha: .straight, sample: .float16) }
        destinations += try [ChannelOrder.rgba, .abgr].map { try PixelFormat($0, alpha: .premultiplied, sample: .float16) }
        #endif
        for (name, stages, exact) in cases {
            for source in sources {
                for destination in destinations {
                    let premultiplied = source.alphaMode == .premultiplied
                    let pool = premultiplied ? premultipliedPool : straightPool
                    let s = source.channelOrder, d = destination.channelOrder
                    let (dr, dg, db) = d.colorIndices
                    // Rows of every width 1…33, then the whole pool, each starting 8 bytes past
                    // a 64-byte boundary (a head the block takes alone) or on one, with 8
                    // guard bytes after it; consecutive pixels of the pool, so that the
                    // longer rows hold whole opaque blocks.
                    for width in Array(1...33) + [pool.count / 4] {
                        let offset = width % 2 == 0 ? 8 : 0
                        let input = Storage(count: 4 * width), output = Storage(count: 8 * width + offset + 8)
                        let pixels = Self.conversionRow(pool, width: width, order: s)
                        input.bytes.copyMemory(from: pixels, byteCount: pixels.count)
                        // A plan of its own, whose first run builds the 2D tables at the
                        // first translucent pixel (the late block); its second run has them.
                        let plan = try EditPlan(stages: stages).prepared(width: width, height: 1, threads: 1, minimumBandPixels: 65_536,
                                                                           toneTableCache: nil)
                        #expect(PreparedEditPlan.wideningPositions(source, destination) != nil)
                        let hasTones = stages.contains { if case .tone = $0 { true } else { false } }
                        for run in 1...2 {
                            let takesBlock = premultiplied
                                ? plan.premultipliedBlock(source, destination, variant: .simd4, building: false)?.widens == true
                                : plan.fusedBlock(source, destination, inPlace: false, variant: .simd4)?.block.widens == true
                            // With tones, the premultiplied block comes with its 2D tables, which a
                            // run builds at its first translucent pixel.
                            let translucent = (0..<width).contains { pixels[4 * $0 + s.alphaIndex!] != 255 }
                            #expect(takesBlock == (!premultiplied || !hasTones || (run == 2 && translucent)),
                                    "\(name), \(source) → \(destination), width \(width), run \(run): block \(takesBlock)")
                            try plan.run(from: try PixelBuffer(baseAddress: input.bytes, width: width, height: 1, bytesPerRow: 4 * width,
                                                               format: source),
                                         to: try PixelBuffer(baseAddress: output.bytes + offset, width: width, height: 1,
                                                             bytesPerRow: 8 * width, format: destination))
                            let out = (output.bytes + offset).assumingMemoryBound(to: UInt16.self)
                            let guards = output.array[..<offset] + output.array[(offset + 8 * width)...]
                            #expect(guards.allSatisfy { $0 == 0xA5 }, "\(name), \(source) → \(destination), width \(width): written outside")
                            let halves = destination.sampleType == .float16
                            let premultipliedOut = destination.alphaMode == .premultiplied
                            for i in 0..<width {
                                let alpha = pixels[4 * i + s.alphaIndex!], a = Double(alpha) / 255
                                let where_ = "\(name), \(source) → \(destination), width \(width), run \(run), pixel \(i)"
                                #expect(out[4 * i + d.alphaIndex!] == (halves ? HalfCheck.bits(Float(alpha) / 255) : UInt16(alpha) * 257),
                                        "\(where_): alpha")
                                if premultiplied && a == 0 {
                                    #expect([out[4 * i + dr], out[4 * i + dg], out[4 * i + db]] == [0, 0, 0], "\(where_): A = 0")
                                    continue
                                }
                                let result = exact(Self.straightColour(pixels, i, order: s, premultiplied: premultiplied), i, width)
                                for (c, word) in [(0, dr), (1, dg), (2, db)] {
                                    if halves {
                                        // Premultiplied: the colour clamped, times alpha (SPEC §10).
                                        let x = premultipliedOut ? min(max(result[c], 0), 1) * a : result[c]
                                        #expect(HalfCheck.accepts(out[4 * i + word], x),
                                                "\(where_) channel \(c): got \(HalfCheck.value(out[4 * i + word])), exact \(x)")
                                        continue
                                    }
                                    // Premultiplied: the colour clamped, times alpha (SPEC §10).
                                    let x = min(max(result[c], 0), 1) * (premultipliedOut ? a : 1)
                                    #expect(TieAwareCheck.accepts(Int(out[4 * i + word]), x, maxval: 65535).ok,
                                            "\(where_) channel \(c): got \(out[4 * i + word]), exact \(x * 65535)")
                                }
                            }
                        }
                    }
                }
            }
        }
        // An invalid premultiplied pixel (colour above alpha) whose straight colour, 255,
        // a steep matrix takes far past the scale: 65535, as the 8-bit block and the
        // portable encoding give it (converted unclamped, beyond 2³¹, it would be 0).
        let steep = ColorMatrix(SIMD3(0, 250, 0), SIMD3(0, 250, 0), SIMD3(0, 0, 1))
        let steepPlan = try EditPlan(stages: [.affine(ColorMatrixKernel(steep))]).prepared(width: 40, height: 1, threads: 1)
        #expect(steepPlan.premultipliedBlock(.bgra8Premultiplied, .rgba16, variant: .simd4, building: false)?.widens == true)
        let invalid = Storage(count: 160), steepOut = Storage(count: 320)
        for i in 0..<40 { invalid.bytes.storeBytes(of: i % 2 == 0 ? 0x01_00_FF_00 as UInt32 : 0x02_00_01_00, toByteOffset: 4 * i, as: UInt32.self) }
        try steepPlan.run(from: try Self.buffer(invalid, width: 40, height: 1, bytesPerRow: 160, .bgra8Premultiplied),
                          to: try Self.buffer(steepOut, width: 40, height: 1, bytesPerRow: 320, .rgba16))
        let words = steepOut.bytes.assumingMemoryBound(to: UInt16.self)
        for i in 0..<40 {
            #expect(Array(UnsafeBufferPointer(start: words + 4 * i, count: 4)) == [65535, 65535, 0, i % 2 == 0 ? 257 : 514],
                    "pixel \(i)")
        }
        // Into premultiplied 16-bit words: clamped to 1, times alpha (257·A exactly);
        // with every fourth pixel a third kind of invalid one, (B, G, R, A) = (1, 255,
        // 0, 3), whose blue 1/3 stays within the scale: straight 21845, premultiplied 257.
        let mixed = Storage(count: 160)
        mixed.bytes.copyMemory(from: invalid.bytes, byteCount: 160)
        for i in stride(from: 2, to: 40, by: 4) {
            mixed.bytes.storeBytes(of: 0x03_00_FF_01 as UInt32, toByteOffset: 4 * i, as: UInt32.self)
        }
        func expected(_ i: Int, premultiplied: Bool) -> [UInt16] {
            guard i % 4 != 2 else { return premultiplied ? [771, 771, 257, 771] : [65535, 65535, 21845, 771] }
            let a: UInt16 = i % 2 == 0 ? 257 : 514
            return premultiplied ? [a, a, 0, a] : [65535, 65535, 0, a]
        }
        for destination in [PixelFormat.rgba16, .rgba16Premultiplied] {
            #expect(steepPlan.premultipliedBlock(.bgra8Premultiplied, destination, variant: .simd4, building: false)?.widens == true)
            try steepPlan.run(from: try Self.buffer(mixed, width: 40, height: 1, bytesPerRow: 160, .bgra8Premultiplied),
                              to: try Self.buffer(steepOut, width: 40, height: 1, bytesPerRow: 320, destination))
            for i in 0..<40 {
                #expect(Array(UnsafeBufferPointer(start: words + 4 * i, count: 4))
                        == expected(i, premultiplied: destination.alphaMode == .premultiplied), "\(destination), pixel \(i)")
            }
        }
        // Destinations the block does not write: a padding sample.
        #expect(PreparedEditPlan.wideningPositions(.rgba8, try PixelFormat(.rgbx, alpha: .none, sample: .uint16)) == nil)
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        // The same pixels into Float16: straight, far past 1 and unclamped (250 · 255 and
        // 250 · 0.5); premultiplied, clamped to 1 and multiplied by alpha.
        for alphaOut in [AlphaMode.straight, .premultiplied] {
            let half = try PixelFormat(.rgba, alpha: alphaOut, sample: .float16)
            #expect(steepPlan.premultipliedBlock(.bgra8Premultiplied, half, variant: .simd4, building: false)?.widens == true)
            try steepPlan.run(from: try Self.buffer(invalid, width: 40, height: 1, bytesPerRow: 160, .bgra8Premultiplied),
                              to: try Self.buffer(steepOut, width: 40, height: 1, bytesPerRow: 320, half))
            for i in 0..<40 {
                let a = Double(i % 2 == 0 ? 1 : 2) / 255, colour = i % 2 == 0 ? 250 * 255 : 250 * 0.5
                let expected = alphaOut == .straight ? [colour, colour, 0] : [a, a, 0]
                for c in 0..<3 {
                    #expect(HalfCheck.accepts(words[4 * i + c], expected[c]),
                            "\(half), pixel \(i), channel \(c): got \(HalfCheck.value(words[4 * i + c])), exact \(expected[c])")
                }
                #expect(words[4 * i + 3] == HalfCheck.bits(Float(a * 255) / 255))
            }
        }
        #endif
    }

    #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
    @Test("8-bit pixels into Float16 ones through the block: every alpha byte becomes Float16(A/255), straight and premultiplied in and out; a plan past the block's conditioning takes the row path")
    func halfPrecisionAlphas() throws {
        let pairs = [PixelFormat.rgba8, .bgra8Premultiplied].flatMap { s in [AlphaMode.straight, .premultiplied].map { (s, $0) } }
        for (source, alphaOut) in pairs {
            let half = try PixelFormat(.rgba, alpha: alphaOut, sample: .float16)
            // Alpha i at pixel i, colour at most alpha (valid premultiplied too).
            let input = Storage(count: 4 * 256), output = Storage(count: 8 * 256)
            for i in 0..<256 {
                let c = UInt8(i / 2)
                for (k, v) in [c, c / 2, c / 3, UInt8(i)].enumerated() { input.bytes.storeBytes(of: v, toByteOffset: 4 * i + k, as: UInt8.self) }
            }
            let plan = try EditPlan(Recipe(preset: .vivid)).prepared(width: 256, height: 1, threads: 1)
            let takesBlock = source.alphaMode == .premultiplied
                ? plan.premultipliedBlock(source, half, variant: .simd4, building: false)?.widens == true
                : plan.fusedBlock(source, half, inPlace: false, variant: .simd4)?.block.widens == true
            #expect(takesBlock, "\(source) → \(half)")
            try plan.run(from: try Self.buffer(input, width: 256, height: 1, bytesPerRow: 4 * 256, source),
                         to: try Self.buffer(output, width: 256, height: 1, bytesPerRow: 8 * 256, half))
            let words = output.bytes.assumingMemoryBound(to: UInt16.self)
            for i in 0..<256 {
                #expect(words[4 * i + 3] == Float16(Float(i) / 255).bitPattern, "\(source) → \(half), alpha \(i)")
            }
        }
        // A contrast of 10⁶ is past the block's bound on the 16-bit scale: the row path.
        var recipe = Recipe()
        recipe.adjustments.contrast = 1e6
        let steep = try EditPlan(recipe).prepared(width: 8, height: 1, threads: 1)
        let half = try PixelFormat(.rgba, alpha: .straight, sample: .float16)
        #expect(steep.fusedBlock(.rgba8, half, inPlace: false, variant: .simd4) == nil)
        #expect(steep.fusedBlock(.rgba8, .rgba16, inPlace: false, variant: .simd4) == nil)
        // Destinations the block does not write: a padding sample.
        #expect(PreparedEditPlan.wideningPositions(.rgba8, try PixelFormat(.rgbx, alpha: .none, sample: .float16)) == nil)
    }
    #endif

    @Test("8-bit pixels into another 8-bit format through the block: premultiplied into straight and straight into premultiplied, red and blue where they were or exchanged, alpha first or last; matrix forms, tone tables, their line, the late 2D tables and gains; widths 1…33 and rows off a 32-byte boundary, in place too; each sample within SPEC §8 (and §10) of Double, alpha kept, a transparent premultiplied pixel all zero")
    func byteConversionBlock() throws {
        let (straightPool, premultipliedPool) = Self.conversionPools()
        let groups: [[ChannelOrder]] = [[.rgba, .bgra], [.argb, .abgr]]
        var pairs: [(PixelFormat, PixelFormat)] = []
        for orders in groups {
            let formats = try orders.flatMap { o in try [AlphaMode.straight, .premultiplied].map { try PixelFormat(o, alpha: $0, sample: .uint8) } }
            pairs += formats.flatMap { s in formats.filter { $0 != s }.map { (s, $0) } }
        }
        for (name, stages, exact) in Self.conversionCases() {
            let hasTones = stages.contains { if case .tone = $0 { true } else { false } }
            for (source, destination) in pairs {
                let premultipliedIn = source.alphaMode == .premultiplied, premultipliedOut = destination.alphaMode == .premultiplied
                let pool = premultipliedIn ? premultipliedPool : straightPool
                let s = source.channelOrder, d = destination.channelOrder
                let (dr, dg, db) = d.colorIndices
                #expect(PreparedEditPlan.conversionPositions(source, destination) != nil)
                for width in Array(1...33) + [pool.count / 4] {
                    let offset = width % 2 == 0 ? 4 : 0
                    let input = Storage(count: 4 * width), output = Storage(count: 4 * width + offset + 8)
                    let pixels = Self.conversionRow(pool, width: width, order: s)
                    input.bytes.copyMemory(from: pixels, byteCount: pixels.count)
                    let plan = try EditPlan(stages: stages).prepared(width: width, height: 1, threads: 1, minimumBandPixels: 65_536,
                                                                       toneTableCache: nil)
                    let translucent = (0..<width).contains { pixels[4 * $0 + s.alphaIndex!] != 255 }
                    var first: [UInt8] = []
                    for run in 1...3 {
                        let block = premultipliedIn
                            ? plan.premultipliedBlock(source, destination, variant: .simd4, building: false)
                            : plan.fusedBlock(source, destination, inPlace: false, variant: .simd4).flatMap {
                                if case .matrix(let b) = $0.block { b } else { nil }
                            }
                        // With tones, the premultiplied block comes with its 2D tables, which a
                        // run builds at its first translucent pixel.
                        #expect((block != nil) == (!premultipliedIn || !hasTones || (run > 1 && translucent)),
                                "\(name), \(source) → \(destination), width \(width), run \(run): block \(block != nil)")
                        if let block {
                            #expect(!block.widens && block.premultiplied == premultipliedIn
                                    && block.premultipliesResults == premultipliedOut)
                        }
                        // The third run in place: the source's memory becomes the destination.
                        let inPlace = run == 3
                        let target = inPlace ? input.bytes : output.bytes + offset
                        try plan.run(from: try PixelBuffer(baseAddress: input.bytes, width: width, height: 1, bytesPerRow: 4 * width,
                                                           format: source),
                                     to: try PixelBuffer(baseAddress: target, width: width, height: 1, bytesPerRow: 4 * width,
                                                         format: destination))
                        let out = target.assumingMemoryBound(to: UInt8.self)
                        let written = Array(UnsafeBufferPointer(start: out, count: 4 * width))
                        if inPlace {
                            #expect(written == first, "\(name), \(source) → \(destination), width \(width): in place")
                            continue
                        }
                        if run == 1 { first = written }
                        let guards = output.array[..<offset] + output.array[(offset + 4 * width)...]
                        #expect(guards.allSatisfy { $0 == 0xA5 }, "\(name), \(source) → \(destination), width \(width): written outside")
                        for i in 0..<width {
                            let alpha = pixels[4 * i + s.alphaIndex!], a = Double(alpha) / 255
                            let where_ = "\(name), \(source) → \(destination), width \(width), run \(run), pixel \(i)"
                            #expect(out[4 * i + d.alphaIndex!] == alpha, "\(where_): alpha")
                            if alpha == 0 && (premultipliedIn || premultipliedOut) {
                                #expect([out[4 * i + dr], out[4 * i + dg], out[4 * i + db]] == [0, 0, 0], "\(where_): A = 0")
                                continue
                            }
                            let result = exact(Self.straightColour(pixels, i, order: s, premultiplied: premultipliedIn), i, width)
                            for (c, byte) in [(0, dr), (1, dg), (2, db)] {
                                let x = min(max(result[c], 0), 1) * (premultipliedOut ? a : 1)
                                #expect(TieAwareCheck.accepts(Int(out[4 * i + byte]), x, maxval: 255).ok,
                                        "\(where_) channel \(c): got \(out[4 * i + byte]), exact \(x * 255)")
                            }
                        }
                    }
                }
            }
        }
    }

    @Test("8-bit conversions by the block over a whole image: tiles with their origins and two threads give the whole render's bytes, an empty plan gives each pixel's colour within SPEC §8 of Double (c / A, or c · A), and only the pairs the block takes are routed to it")
    func byteConversionTiles() throws {
        let (w, h) = (50, 30)
        let (straightPool, premultipliedPool) = Self.conversionPools()
        let argbPremultiplied = try PixelFormat(.argb, alpha: .premultiplied, sample: .uint8)
        let abgr = try PixelFormat(.abgr, alpha: .straight, sample: .uint8)
        let vignetted = Self.conversionCases().first { $0.0 == "vignetted" }!
        for (source, destination) in [(PixelFormat.bgra8Premultiplied, PixelFormat.rgba8), (.rgba8, .bgra8Premultiplied),
                                      (argbPremultiplied, abgr)] {
            let premultipliedIn = source.alphaMode == .premultiplied, premultipliedOut = destination.alphaMode == .premultiplied
            let pool = premultipliedIn ? premultipliedPool : straightPool
            let pixels = (0..<h).flatMap { y in Self.conversionRow(Array(pool[(4 * y)...] + pool[..<(4 * y)]), width: w, order: source.channelOrder) }
            let input = Storage(count: pixels.count)
            input.bytes.copyMemory(from: pixels, byteCount: pixels.count)
            let sourceBuffer = try Self.buffer(input, width: w, height: h, bytesPerRow: 4 * w, source)
            // Opaque runs of a premultiplied source take the straight block, the rest the premultiplied one.
            #expect(try EditPlan(stages: vignetted.1).prepared(width: w, height: h)
                .fusedBlock(source, destination, inPlace: false, variant: .simd4) != nil)
            for stages in [vignetted.1, []] {
                let plan = try EditPlan(stages: stages).prepared(width: w, height: h, threads: 2, minimumBandPixels: 64)
                let whole = Storage(count: pixels.count), tiled = Storage(count: pixels.count)
                try plan.run(from: sourceBuffer, to: try Self.buffer(whole, width: w, height: h, bytesPerRow: 4 * w, destination))
                for (x, y, tw, th) in [(0, 0, 17, 11), (17, 0, 33, 11), (0, 11, 50, 19)] {
                    let offset = 4 * (y * w + x)
                    try plan.run(from: try PixelBuffer(baseAddress: input.bytes + offset, width: tw, height: th, bytesPerRow: 4 * w,
                                                       format: source),
                                 to: try PixelBuffer(baseAddress: tiled.bytes + offset, width: tw, height: th, bytesPerRow: 4 * w,
                                                     format: destination), origin: (x, y))
                }
                #expect(tiled.array == whole.array, "\(source) → \(destination), \(stages.count) stages: tiles")
                guard stages.isEmpty else { continue }
                let out = whole.array, d = destination.channelOrder
                let (dr, dg, db) = d.colorIndices
                for i in 0..<(w * h) {
                    let colour = Self.straightColour(pixels, i, order: source.channelOrder, premultiplied: premultipliedIn)
                    #expect(out[4 * i + d.alphaIndex!] == pixels[4 * i + source.channelOrder.alphaIndex!])
                    for (c, byte) in [(0, dr), (1, dg), (2, db)] {
                        let x = colour.w == 0 ? 0 : min(max(colour[c], 0), 1) * (premultipliedOut ? colour.w : 1)
                        #expect(TieAwareCheck.accepts(Int(out[4 * i + byte]), x, maxval: 255).ok,
                                "\(source) → \(destination), empty plan, pixel \(i) channel \(c): got \(out[4 * i + byte]), exact \(x * 255)")
                    }
                }
            }
        }
        // Pairs outside the block: alpha elsewhere, padding, grey, another depth, the same format.
        let rgbx = try PixelFormat(.rgbx, alpha: .none, sample: .uint8), bgrx = try PixelFormat(.bgrx, alpha: .none, sample: .uint8)
        let argb = try PixelFormat(.argb, alpha: .straight, sample: .uint8)
        let greyAlpha = try PixelFormat(.grayAlpha, alpha: .straight, sample: .uint8)
        for (source, destination) in [(PixelFormat.rgba8, argb), (rgbx, bgrx), (.bgra8Premultiplied, bgrx), (greyAlpha, greyAlpha),
                                      (.rgba16, .rgba8), (.rgba8, .rgba8), (.bgra8Premultiplied, .bgra8Premultiplied)] {
            #expect(PreparedEditPlan.conversionPositions(source, destination) == nil, "\(source) → \(destination)")
        }
    }

    @Test("premultiplied rows longer than the row path's scratch: a plan past the blocks' conditioning (exposure, then a contrast of 10⁶) takes the row path in whole block pieces, a scratch's length at a time, and gives the scalar reference's bytes and the tiles' bytes; an opaque image with tone stages gives the straight block's bytes")
    func longPremultipliedPieces() throws {
        let width = 3000
        var rng = SeededGenerator(seed: 21)
        // Opaque at both ends, a translucent run of 2000 pixels (colour ≤ alpha) between.
        let pixels: [UInt8] = (0..<width).flatMap { x -> [UInt8] in
            let a: UInt8 = (500..<2500).contains(x) ? UInt8.random(in: 0...254, using: &rng) : 255
            return (0..<3).map { _ in UInt8.random(in: 0...a, using: &rng) } + [a]
        }
        var steep = Recipe(exposure: 0.3)
        steep.adjustments.contrast = 1e6
        let plan = try EditPlan(steep).prepared(width: width, height: 1, threads: 1)
        #expect(plan.fusedBlock(.bgra8Premultiplied, .bgra8Premultiplied, inPlace: true, variant: .simd4) == nil)
        #expect(plan.premultipliedBlockApplies(.bgra8Premultiplied, .bgra8Premultiplied, variant: .simd4))
        func render(_ plan: PreparedEditPlan, _ pixels: [UInt8], tiles: [Range<Int>], variant: KernelVariant = .simd4,
                    format: PixelFormat = .bgra8Premultiplied) throws -> [UInt8] {
            let storage = Storage(count: pixels.count)
            storage.bytes.copyMemory(from: pixels, byteCount: pixels.count)
            for tile in tiles {
                try plan.run(try PixelBuffer(baseAddress: storage.bytes + 4 * tile.lowerBound, width: tile.count, height: 1,
                                             bytesPerRow: 4 * tile.count, format: format), origin: (tile.lowerBound, 0), variant: variant)
            }
            return storage.array
        }
        let whole = try render(plan, pixels, tiles: [0..<width])
        #expect(whole == (try render(plan, pixels, tiles: [0..<width], variant: .scalar)))
        #expect(whole == (try render(plan, pixels, tiles: stride(from: 0, to: width, by: 700).map { $0..<min($0 + 700, width) })))
        // An opaque image with the recipe's tone stages never builds the 2D tables: its
        // long pieces take the straight block, as the same bytes read as straight BGRA.
        let opaque = (0..<width).flatMap { x in [pixels[4 * x], pixels[4 * x + 1], pixels[4 * x + 2], 255] as [UInt8] }
        // Tables of its own (none shared from other plans), which an opaque run never builds.
        let recipe = try EditPlan(stages: KernelCatalog.sampleRecipe.stages).prepared(width: width, height: 1, threads: 1,
                                                                                   minimumBandPixels: 65_536, toneTableCache: nil)
        let straight = try EditPlan(stages: KernelCatalog.sampleRecipe.stages).prepared(width: width, height: 1, threads: 1)
        #expect(try render(recipe, opaque, tiles: [0..<width])
                == render(straight, opaque, tiles: [0..<width], format: try PixelFormat(.bgra, alpha: .straight, sample: .uint8)))
        #expect(recipe.premultipliedBlock(.bgra8Premultiplied, .bgra8Premultiplied, variant: .simd4, building: false) == nil,
                "an opaque image built the 2D tables")
    }

    @Test("tiles rendered separately with their origins equal the whole render, bit for bit: row path and fused blocks, 8 and 16 bits, premultiplied with translucent pixels, through the same plan or a fresh one")
    func tiles() throws {
        let (w, h) = (50, 30)
        var exposedVivid = Recipe(preset: .vivid)
        exposedVivid.exposure = 0.3
        // The row path (vibrance), and the fused block with exposure's line (tiles at x = 17
        // group the pixels into blocks differently from the whole image).
        // Premultiplied: opaque, with a translucent pixel in about one in ten (colour ≤ alpha),
        // so that some groups of 8 are opaque and some not, in the whole and in each tile.
        var premultipliedRNG = SeededGenerator(seed: 14)
        let premultiplied: [UInt8] = (0..<(w * h)).flatMap { _ -> [UInt8] in
            let a: UInt8 = UInt8.random(in: 0..<10, using: &premultipliedRNG) == 0
                ? UInt8.random(in: 0...254, using: &premultipliedRNG) : 255
            return (0..<3).map { _ in UInt8.random(in: 0...a, using: &premultipliedRNG) } + [a]
        }
        // Strong sliders at +10 EV: the premultiplied block must be kept where the straight
        // block beside it is, or opaque and translucent groups would round apart by tile.
        let bright = Recipe(exposure: 10, adjustments: Adjustments(saturation: 2, contrast: 1.5, brightness: 0.5),
                            vignette: .vignette(intensity: -1, radius: 0.5))
        for recipe in [Self.recipe, KernelCatalog.sampleRecipe, exposedVivid, bright] {
            for format in [PixelFormat.rgba8, .rgba16, .bgra8Premultiplied] {
                let bytesPerPixel = format.bytesPerPixel
                var rng = SeededGenerator(seed: 4)
                let pixels = format == .bgra8Premultiplied ? premultiplied
                    : (0..<(w * h * bytesPerPixel)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let plan = try EditPlan(stages: recipe.stages).prepared(width: w, height: h, threads: 1)
                let whole = Storage(count: pixels.count)
                whole.bytes.copyMemory(from: pixels, byteCount: pixels.count)
                try plan.run(try Self.buffer(whole, width: w, height: h, bytesPerRow: w * bytesPerPixel, format))
                // The tiles through the plan that rendered the whole (whose tables are
                // built), and through a fresh one, which builds its own on the way.
                let fresh = try EditPlan(stages: recipe.stages).prepared(width: w, height: h, threads: 1)
                for (name, tilePlan) in [("the same plan", plan), ("a fresh plan", fresh)] {
                    let tiled = Storage(count: pixels.count)
                    tiled.bytes.copyMemory(from: pixels, byteCount: pixels.count)
                    for (x, y, tw, th) in [(0, 0, 17, 11), (17, 0, 33, 11), (0, 11, 50, 19)] {
                        let tile = try PixelBuffer(baseAddress: tiled.bytes + (y * w + x) * bytesPerPixel, width: tw, height: th,
                                                   bytesPerRow: w * bytesPerPixel, format: format)
                        try tilePlan.run(tile, origin: (x, y))
                    }
                    #expect(tiled.array == whole.array, "\(format), \(name)")
                }
            }
        }
        // A tile that does not fit is an error, not a write past the image.
        let plan = try EditPlan(stages: Self.recipe.stages).prepared(width: w, height: h, threads: 1)
        let tiled = Storage(count: w * h * 4)
        let tile = try PixelBuffer(baseAddress: tiled.bytes, width: 10, height: 10, bytesPerRow: w * 4, format: .rgba8)
        #expect(throws: EditPlanError.regionOutside(x: 45, y: 0, width: 10, height: 10, imageWidth: w, imageHeight: h)) {
            try plan.run(tile, origin: (45, 0))
        }
    }

    @Test("a Float32 buffer gives the FloatImage result; grey formats store luma")
    func floatAndGray() throws {
        let image = try randomPhoto(width: 9, height: 4, seed: 5)
        let plan = try EditPlan(stages: Self.recipe.stages).prepared(width: 9, height: 4, threads: 1)
        var expected = image
        try plan.run(&expected)
        var pixels = image.pixels
        try pixels.withUnsafeMutableBytes { raw in
            try plan.run(try PixelBuffer(baseAddress: raw.baseAddress!, width: 9, height: 4, bytesPerRow: 9 * 16, format: .rgbaFloat))
        }
        for (a, b) in zip(pixels, expected.pixels) { for c in 0..<4 { #expect(abs(a[c] - b[c]) <= 1e-6, "\(a) vs \(b)") } }
    }

    @Test("bad descriptions are thrown errors: short rows, overflow, misalignment, overlap, alpha mismatch")
    func errors() throws {
        let storage = Storage(count: 256)
        #expect(throws: PixelBufferError.bytesPerRowTooSmall(bytesPerRow: 12, needed: 16)) {
            try Self.buffer(storage, width: 4, height: 2, bytesPerRow: 12, .rgba8)
        }
        #expect(throws: PixelBufferError.invalidSize(width: 0, height: 2)) { try Self.buffer(storage, width: 0, height: 2, bytesPerRow: 12, .rgba8) }
        #expect(throws: PixelBufferError.self) { try Self.buffer(storage, width: Int.max / 2, height: 2, bytesPerRow: 16, .rgba8) }
        #expect(throws: PixelBufferError.self) { try Self.buffer(storage, width: 2, height: Int.max / 8, bytesPerRow: 64, .rgba8) }
        // A base address 4 KiB below the top of the address space, 4 MiB long: it wraps.
        let top = UnsafeMutableRawPointer(bitPattern: UInt.max - 4095)!
        #expect(throws: PixelBufferError.sizeOverflow(width: 1024, height: 1024, bytesPerRow: 4096)) {
            try PixelBuffer(baseAddress: top, width: 1024, height: 1024, bytesPerRow: 4096, format: .rgba8)
        }
        #expect(throws: PixelBufferError.misaligned(what: "bytes per row", value: 34, alignment: 4)) {
            try Self.buffer(storage, width: 2, height: 2, bytesPerRow: 34, .rgbaFloat)
        }
        do {
            _ = try PixelBuffer(baseAddress: storage.bytes + 2, width: 2, height: 2, bytesPerRow: 32, format: .rgbaFloat)
            Issue.record("a misaligned base address was accepted")
        } catch {
            // How far past a multiple, not the address (the layout of the app's memory).
            #expect(error.description == "the base address is 2 bytes past a multiple of 4", "\(error)")
            #expect(error == .misaligned(what: "the base address", value: Int(bitPattern: storage.bytes + 2), alignment: 4))
        }
        do {
            _ = try PixelBuffer(baseAddress: storage.bytes + 1, width: 2, height: 2, bytesPerRow: 16, format: .rgba16)
            Issue.record("a misaligned base address was accepted")
        } catch {
            #expect(error.description == "the base address is 1 byte past a multiple of 2", "\(error)")
        }
        #expect(throws: PixelBufferError.alphaModeMismatch(order: "rgbx", alpha: "straight")) {
            try PixelFormat(.rgbx, alpha: .straight, sample: .uint8)
        }
        let a = try Self.buffer(storage, width: 4, height: 2, bytesPerRow: 16, .rgba8)
        let b = try PixelBuffer(baseAddress: storage.bytes + 4, width: 4, height: 2, bytesPerRow: 16, format: .rgba8)
        let plan = try EditPlan(stages: Recipe(preset: .vivid).stages).prepared(width: 4, height: 2)
        #expect(throws: EditPlanError.buffer(.overlappingBuffers)) { try plan.run(from: a, to: b) }
    }

    @Test("buffers at the top of the address space: overlap is found in unsigned addresses, not by an overflow; nothing is touched")
    func topOfAddressSpace() throws {
        let top = try #require(UnsafeMutableRawPointer(bitPattern: UInt(Int.max) - 15))
        let high = try #require(UnsafeMutableRawPointer(bitPattern: UInt.max - 63))
        let plan = try EditPlan(Recipe(preset: .vivid)).prepared(width: 4, height: 2, threads: 1)
        for base in [top, high] {
            let source = try PixelBuffer(baseAddress: base, width: 4, height: 2, bytesPerRow: 16, format: .rgba8)
            let destination = try PixelBuffer(baseAddress: base + 4, width: 4, height: 2, bytesPerRow: 16, format: .rgba8)
            #expect(throws: EditPlanError.buffer(.overlappingBuffers)) { try plan.run(from: source, to: destination) }
        }
        // Rows that would wrap past the last address.
        #expect(throws: PixelBufferError.self) {
            try PixelBuffer(baseAddress: high, width: 4, height: 5, bytesPerRow: 16, format: .rgba8)
        }
    }

    @Test("preparing for a width no image can have is EditPlanError.outOfMemory, not a trap; thread counts are capped")
    func preparingBeyondMemory() throws {
        let plan = EditPlan(Recipe(preset: .vivid)), oriented = EditPlan(stages: Recipe(preset: .vivid).stages, orientation: .right)
        // 2⁴⁶ pixels a row: the scratch rows alone exceed any address space.
        let wide = 1 << 46
        let bytes = try #require(Scratch.bytes(slots: 2, piece: PreparedEditPlan.piece, rowWidth: wide))
        #expect(bytes > 1 << 48)
        for p in [plan, oriented] {
            #expect(throws: EditPlanError.outOfMemory(bytes: bytes)) { try p.prepared(width: wide, height: 1, threads: 2) }
            // Sizes that do not fit in Int at all.
            #expect(throws: EditPlanError.outOfMemory(bytes: nil)) { try p.prepared(width: 1 << 61, height: 1, threads: 2) }
        }
        #expect(EditPlanError.outOfMemory(bytes: 1024).description == "cannot allocate 1024 bytes for the plan")
        #expect(EditPlanError.outOfMemory(bytes: nil).description
                == "cannot allocate more bytes than an address can count for the plan")
        // The sizes still prepare and run as ever.
        #expect(try plan.prepared(width: 64, height: 64, threads: 2).width == 64)
        // A thread count is capped at what the image can use, one thread per 64 K pixels
        // (12 192 768 pixels: 186), so no count asks for scratch no run would use; below 1
        // it means 1.
        for p in [plan, oriented] {
            #expect(try p.prepared(width: 64, height: 64, threads: .max).threads == 1)
            #expect(try p.prepared(width: 4032, height: 3024, threads: .max).threads == 186)
            #expect(try p.prepared(width: 4032, height: 3024, threads: 3).threads == 3)
            #expect(try p.prepared(width: 4032, height: 3024, threads: 0).threads == 1)
            #expect(try p.prepared(width: 4032, height: 3024, threads: -5).threads == 1)
        }
        // An oriented plan counts its input's samples without overflowing: 2⁶² rows of one
        // pixel hold 2⁶⁴ RGBA samples.
        let tall = try oriented.prepared(width: 1, height: 1 << 62, threads: 1)
        let samples = [UInt8](repeating: 0, count: 4)
        var out = samples
        #expect(throws: EditPlanError.sampleCountMismatch(buffer: "input", expected: .max, found: 4)) {
            try samples.withUnsafeBufferPointer { input in
                try out.withUnsafeMutableBufferPointer { output in
                    try tall.run(input: input, inputLayout: .rgba, inputMaxval: 255, output: output, outputLayout: .rgba,
                                 outputMaxval: 255)
                }
            }
        }
    }
}
