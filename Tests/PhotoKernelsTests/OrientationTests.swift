import Foundation
import Synchronization
import Testing
@testable import PhotoKernels

/// A raster as rows of pixel ids, and the three moves every orientation is made of,
/// written as plain array operations — independent of `Orientation.sourcePixel`.
private typealias Grid = [[Int]]

private func mirrorHorizontally(_ g: Grid) -> Grid { g.map { Array($0.reversed()) } }
private func mirrorVertically(_ g: Grid) -> Grid { Array(g.reversed()) }
private func transposed(_ g: Grid) -> Grid {
    (0..<g[0].count).map { column in g.map { $0[column] } }
}

/// What each EXIF orientation does to the stored grid to show it upright.
private func upright(_ g: Grid, _ orientation: Orientation) -> Grid {
    switch orientation.rawValue {
    case 1: g
    case 2: mirrorHorizontally(g)
    case 3: mirrorVertically(mirrorHorizontally(g))
    case 4: mirrorVertically(g)
    case 5: transposed(g)
    case 6: mirrorHorizontally(transposed(g))          // rows become columns, read bottom-up
    case 7: mirrorVertically(mirrorHorizontally(transposed(g)))
    default: mirrorVertically(transposed(g))            // 8
    }
}

/// A `width × height` grid whose pixel ids are `y · width + x`.
private func grid(_ width: Int, _ height: Int) -> Grid {
    (0..<height).map { y in (0..<width).map { x in y * width + x } }
}

/// Bytes of pixel `id` at pixel size `n`: distinct per pixel and per byte.
private func pixelBytes(_ id: Int, _ n: Int) -> [UInt8] {
    (0..<n).map { UInt8(truncatingIfNeeded: id &* 131 &+ $0 &* 29 &+ 7) }
}

/// Runs `orient` on `g` packed at `bytesPerPixel`, with `padding` spare bytes after each
/// row on both sides (the destination's filled with a guard byte), and compares the
/// destination byte for byte with `expected` packed the same way. Returns nil when they
/// agree, else the first differing pixel (ids can repeat in 1-byte pixels, so bytes are
/// compared, not ids).
private func orientMismatch(_ g: Grid, _ orientation: Orientation, expected: Grid, bytesPerPixel n: Int, padding: Int = 0,
                            tileSide: Int? = nil) throws -> String? {
    let h = g.count, w = g[0].count
    let out = orientation.orientedSize(width: w, height: h)
    guard out.width == expected[0].count, out.height == expected.count else { return "size \(out)" }
    let sourceStride = w * n + padding, destinationStride = out.width * n + padding
    func pack(_ g: Grid, stride: Int, fill: UInt8) -> [UInt8] {
        var bytes = [UInt8](repeating: fill, count: stride * g.count)
        for (y, row) in g.enumerated() {
            for (x, id) in row.enumerated() {
                bytes.replaceSubrange((y * stride + x * n)..<(y * stride + x * n + n), with: pixelBytes(id, n))
            }
        }
        return bytes
    }
    let guardByte: UInt8 = 0x5A
    let source = pack(g, stride: sourceStride, fill: 0xA5)
    let wanted = pack(expected, stride: destinationStride, fill: guardByte)
    var destination = [UInt8](repeating: guardByte, count: destinationStride * out.height)
    try source.withUnsafeBytes { s in
        try destination.withUnsafeMutableBytes { d in
            if let tileSide {
                orientation.moveRaster(source: s.baseAddress!, width: w, height: h, bytesPerPixel: n, sourceBytesPerRow: sourceStride,
                                       into: d.baseAddress!, destinationBytesPerRow: destinationStride, tileSide: tileSide)
            } else {
                try orientation.orient(source: s.baseAddress!, width: w, height: h, bytesPerPixel: n, sourceBytesPerRow: sourceStride,
                                       into: d.baseAddress!, destinationBytesPerRow: destinationStride)
            }
        }
    }
    guard let i = destination.indices.first(where: { destination[$0] != wanted[$0] }) else { return nil }
    let y = i / destinationStride, x = (i % destinationStride) / n
    return x < out.width ? "pixel (\(x), \(y)) differs: expected id \(expected[y][x])" : "padding of row \(y) written"
}

@Suite("Orientation (SPEC §11)")
struct OrientationTests {
    @Test("a 3×2 raster, every orientation written out by hand")
    func handWritten() throws {
        // a b c
        // d e f      (ids 0…5)
        let stored: Grid = [[0, 1, 2], [3, 4, 5]]
        let expected: [Orientation: Grid] = [
            .up: [[0, 1, 2], [3, 4, 5]],
            .upMirrored: [[2, 1, 0], [5, 4, 3]],
            .down: [[5, 4, 3], [2, 1, 0]],
            .downMirrored: [[3, 4, 5], [0, 1, 2]],
            .leftMirrored: [[0, 3], [1, 4], [2, 5]],       // a d / b e / c f
            .right: [[3, 0], [4, 1], [5, 2]],              // d a / e b / f c: turned clockwise
            .rightMirrored: [[5, 2], [4, 1], [3, 0]],      // f c / e b / d a
            .left: [[2, 5], [1, 4], [0, 3]],               // c f / b e / a d: turned counter-clockwise
        ]
        for o in Orientation.allCases {
            #expect(upright(stored, o) == expected[o], "the test's own model, \(o)")
            for n in [1, 3, 4, 16] {
                #expect(try orientMismatch(stored, o, expected: expected[o]!, bytesPerPixel: n) == nil, "\(o) at \(n) bytes")
            }
        }
    }

    @Test("every orientation × every pixel size 1…16 on 1×N, N×1, 5×3 and block-edge sizes")
    func everyPixelSize() throws {
        let sizes = [(1, 1), (1, 7), (7, 1), (1, 17), (17, 1), (5, 3), (3, 5), (8, 8), (9, 4), (4, 9), (16, 11), (33, 17), (19, 64)]
        for (w, h) in sizes {
            let g = grid(w, h)
            for o in Orientation.allCases {
                let expected = upright(g, o)
                for n in 1...16 {
                    let mismatch = try orientMismatch(g, o, expected: expected, bytesPerPixel: n)
                    #expect(mismatch == nil, "\(w)×\(h) \(o) at \(n) bytes")
                }
            }
        }
    }

    @Test("small tiles: blocks and tile edges cross on small rasters, at the block sizes 1, 2, 4 and others")
    func tileEdges() throws {
        for (w, h) in [(21, 13), (13, 21), (40, 9), (8, 33)] {
            let g = grid(w, h)
            for o in Orientation.allCases where o.swapsAxes {
                for n in [1, 2, 3, 4, 8, 16] {
                    for tile in [1, 4, 8, 12, 16] {
                        let mismatch = try orientMismatch(g, o, expected: upright(g, o), bytesPerPixel: n, tileSide: tile)
                        #expect(mismatch == nil, "\(w)×\(h) \(o) at \(n) bytes, tile \(tile)")
                    }
                }
            }
        }
    }

    @Test("padded rows: padding is neither read as pixels nor written")
    func paddedRows() throws {
        let g = grid(5, 3)
        for o in Orientation.allCases {
            for n in [1, 2, 4, 12] {
                for padding in [1, 3, 64] {
                    let mismatch = try orientMismatch(g, o, expected: upright(g, o), bytesPerPixel: n, padding: padding)
                    #expect(mismatch == nil, "\(o) at \(n) bytes, padding \(padding)")
                }
            }
        }
    }

    @Test("sourcePixel and orientedSize agree with the hand-made moves")
    func sourcePixelMatches() {
        for (w, h) in [(5, 3), (1, 4), (4, 1)] {
            let g = grid(w, h)
            for o in Orientation.allCases {
                let expected = upright(g, o)
                let size = o.orientedSize(width: w, height: h)
                #expect(size.width == expected[0].count && size.height == expected.count, "\(o) size")
                #expect(o.swapsAxes == (o.rawValue >= 5))
                for y in 0..<size.height {
                    for x in 0..<size.width {
                        let s = o.sourcePixel(x: x, y: y, sourceWidth: w, sourceHeight: h)
                        #expect(g[s.y][s.x] == expected[y][x], "\(o) (\(x), \(y))")
                    }
                }
            }
        }
    }

    @Test("sourcePixel outside the image wraps rather than trap, at the ends of Int")
    func sourcePixelWraps() {
        #expect(Orientation.down.sourcePixel(x: 0, y: 0, sourceWidth: Int.min, sourceHeight: Int.min) == (Int.max, Int.max))
        #expect(Orientation.upMirrored.sourcePixel(x: Int.min, y: Int.min, sourceWidth: 10, sourceHeight: 10)
                == (Int.min + 9, Int.min))
        #expect(Orientation.right.sourcePixel(x: 1, y: 1, sourceWidth: Int.min, sourceHeight: Int.min) == (1, Int.max - 1))
        #expect(Orientation.left.sourcePixel(x: Int.max, y: Int.min, sourceWidth: Int.max, sourceHeight: 3)
                == (-2, Int.max))
        for o in Orientation.allCases {
            for v in [Int.min, -1, Int.max] {
                let s = o.sourcePixel(x: v, y: v, sourceWidth: v, sourceHeight: v)
                #expect([s.x, s.y].allSatisfy { [v, v &- 1 &- v].contains($0) }, "\(o) \(v)")
            }
        }
    }

    @Test("rowSource says exactly which stored rows each oriented row uses")
    func rowSources() {
        let (w, h) = (5, 3)
        for o in Orientation.allCases {
            let size = o.orientedSize(width: w, height: h)
            for y in 0..<size.height {
                let rows = Set((0..<size.width).map { o.sourcePixel(x: $0, y: y, sourceWidth: w, sourceHeight: h).y })
                switch o.rowSource {
                case .sameRow: #expect(rows == [y], "\(o) row \(y)")
                case .oppositeRow: #expect(rows == [h - 1 - y], "\(o) row \(y)")
                case .everyRow: #expect(rows == Set(0..<h), "\(o) row \(y)")
                }
            }
            #expect(o.reordersRows == (o.rawValue >= 3))
        }
        #expect(Orientation.allCases.map(\.rowSource) == [.sameRow, .sameRow, .oppositeRow, .oppositeRow,
                                                           .everyRow, .everyRow, .everyRow, .everyRow])
    }

    @Test("composition: 6 then 8 and 8 then 6 are the identity; 3, 5, 7, 2, 4 are their own inverses; 6 twice is 3")
    func composition() throws {
        let image = try randomImage(width: 7, height: 4, seed: 91, nanEvery: 5)
        func bits(_ i: FloatImage) -> [UInt32] { i.pixels.flatMap { p in (0..<4).map { p[$0].bitPattern } } }
        for o in Orientation.allCases {
            let back = image.oriented(o).oriented(o.inverse)
            #expect(back.width == image.width && back.height == image.height && bits(back) == bits(image), "\(o) then its inverse")
        }
        #expect(Orientation.right.inverse == .left && Orientation.left.inverse == .right)
        for o in [Orientation.down, .leftMirrored, .rightMirrored, .upMirrored, .downMirrored] {
            #expect(o.inverse == o)
            #expect(bits(image.oriented(o).oriented(o)) == bits(image), "\(o) twice")
        }
        #expect(bits(image.oriented(.right).oriented(.right)) == bits(image.oriented(.down)), "6 twice is 3")
        #expect(bits(image.oriented(.right).oriented(.right).oriented(.right)) == bits(image.oriented(.left)), "6 thrice is 8")
        #expect(bits(image.oriented(.leftMirrored).oriented(.down)) == bits(image.oriented(.rightMirrored)),
                "transpose then 180° is the transverse")
        #expect(bits(image.oriented(.up)) == bits(image))
    }

    @Test("FloatImage.oriented moves pixels bit for bit: NaN payloads, signed zeros, infinities")
    func floatBits() throws {
        let specials: [SIMD4<Float>] = [
            SIMD4(Float(bitPattern: 0x7FA0_0001), -0.0, .infinity, Float(bitPattern: 0xFFC0_BEEF)),   // signalling NaN first
            SIMD4(-.infinity, Float(bitPattern: 1), -Float.greatestFiniteMagnitude, Float(bitPattern: 0x7FC0_1234)),
            SIMD4(0.25, 0.5, 0.75, 1), SIMD4(1, 2, 3, 4), SIMD4(5, 6, 7, 8), SIMD4(9, 10, 11, 12),
        ]
        let image = try FloatImage(width: 3, height: 2, pixels: specials)
        for o in Orientation.allCases {
            let out = image.oriented(o)
            let size = o.orientedSize(width: 3, height: 2)
            #expect(out.width == size.width && out.height == size.height)
            for y in 0..<size.height {
                for x in 0..<size.width {
                    let s = o.sourcePixel(x: x, y: y, sourceWidth: 3, sourceHeight: 2)
                    let a = out[x, y], b = image[s.x, s.y]
                    #expect((0..<4).allSatisfy { a[$0].bitPattern == b[$0].bitPattern }, "\(o) (\(x), \(y))")
                }
            }
        }
    }

    @Test("tags: 1…8 accepted, others rejected with the value; Codable as the tag number")
    func tags() throws {
        for t in 1...8 { #expect(try Orientation(tag: t).rawValue == t) }
        for t in [0, 9, -1, 255] {
            #expect(throws: OrientationError.invalidTag(t)) { try Orientation(tag: t) }
        }
        #expect(try JSONDecoder().decode([Orientation].self, from: Data("[6, 8]".utf8)) == [.right, .left])
        #expect(String(decoding: try JSONEncoder().encode(Orientation.down), as: UTF8.self) == "3")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Orientation.self, from: Data("9".utf8)) }
        #expect(Orientation.right.description == "6 (rotate 90° clockwise)")
    }

    @Test("bad rasters are typed errors and write nothing")
    func errors() {
        var source = [UInt8](repeating: 1, count: 64)
        var destination = [UInt8](repeating: 0, count: 64)
        func run(_ o: Orientation = .right, w: Int = 4, h: Int = 4, n: Int = 4, sbpr: Int = 16, dbpr: Int = 16) -> OrientationError? {
            source.withUnsafeBytes { s -> OrientationError? in
                destination.withUnsafeMutableBytes { d -> OrientationError? in
                    do throws(OrientationError) {
                        try o.orient(source: s.baseAddress!, width: w, height: h, bytesPerPixel: n, sourceBytesPerRow: sbpr,
                                     into: d.baseAddress!, destinationBytesPerRow: dbpr)
                        return nil
                    } catch { return error }
                }
            }
        }
        #expect(run(w: 0) == .invalidSize(width: 0, height: 4))
        #expect(run(h: -3) == .invalidSize(width: 4, height: -3))
        #expect(run(n: 0) == .invalidPixelSize(bytesPerPixel: 0))
        #expect(run(n: 17) == .invalidPixelSize(bytesPerPixel: 17))
        #expect(run(sbpr: 15) == .sourceRowTooShort(bytesPerRow: 15, needed: 16))
        #expect(run(sbpr: -16) == .sourceRowTooShort(bytesPerRow: -16, needed: 16))
        // 4 wide × 2 high turns 2 wide: 8 bytes a row.
        #expect(run(w: 4, h: 2, dbpr: 7) == .destinationRowTooShort(bytesPerRow: 7, needed: 8))
        #expect(run(.up, w: 4, h: 2, dbpr: 15) == .destinationRowTooShort(bytesPerRow: 15, needed: 16))
        #expect(run(w: Int.max / 2, h: 1, n: 4, sbpr: Int.max) == .sizeOverflow(width: Int.max / 2, height: 1, bytesPerPixel: 4))
        // Two strides of 2⁶² bytes overflow `Int`: rejected before any byte is touched.
        #expect(run(.up, w: 1, h: 3, n: 1, sbpr: Int.max / 2 + 1, dbpr: 1) == .sizeOverflow(width: 1, height: 3, bytesPerPixel: 1))
        #expect(destination.allSatisfy { $0 == 0 }, "an error must write nothing")
        // Overlap: the destination starts inside the source.
        let overlap = source.withUnsafeMutableBytes { s -> OrientationError? in
            do throws(OrientationError) {
                try Orientation.down.orient(source: s.baseAddress!, width: 4, height: 2, bytesPerPixel: 4, sourceBytesPerRow: 16,
                                            into: s.baseAddress! + 16, destinationBytesPerRow: 16)
                return nil
            } catch { return error }
        }
        #expect(overlap == .overlappingBuffers)
        #expect(OrientationError.sourceRowTooShort(bytesPerRow: 15, needed: 16).description.contains("15"))
    }

    @Test("in a plan the orientation comes first: positional stages see the upright image (Float, 8-bit, buffers)")
    func planAppliesOrientationFirst() throws {
        var recipe = Recipe(adjustments: .vivid, vignette: .vignetteEffect(center: SIMD2(1, 1), radius: 2, intensity: 1))
        recipe[Orientation.self] = .right
        let stored = try randomPhoto(width: 5, height: 3, seed: 21)
        let plan = try EditPlan(recipe).prepared(width: 3, height: 5, threads: 1)
        #expect(plan.storedSize == (5, 3))
        var image = stored
        try plan.run(&image)
        var expected = stored.oriented(.right)
        try EditPlan(stages: recipe.stages).prepared(width: 3, height: 5, threads: 1).run(&expected)
        #expect(image.width == 3 && image.height == 5 && zip(image.pixels, expected.pixels).allSatisfy { sameBits($0, $1) })

        // 8-bit samples: the same as orienting the raster by hand, then the stages.
        var rng = SeededGenerator(seed: 22)
        let samples = (0..<(5 * 3 * 4)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        var byHand = [UInt8](repeating: 0, count: samples.count)
        for y in 0..<5 { for x in 0..<3 {
            let s = Orientation.right.sourcePixel(x: x, y: y, sourceWidth: 5, sourceHeight: 3)
            for c in 0..<4 { byHand[(y * 3 + x) * 4 + c] = samples[(s.y * 5 + s.x) * 4 + c] }
        } }
        func run(_ plan: PreparedEditPlan, _ input: [UInt8]) throws -> [UInt8] {
            var out = [UInt8](repeating: 0, count: input.count)
            try input.withUnsafeBufferPointer { i in
                try out.withUnsafeMutableBufferPointer { o in
                    try plan.run(input: i, inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba, outputMaxval: 255)
                }
            }
            return out
        }
        let unoriented = try EditPlan(stages: recipe.stages).prepared(width: 3, height: 5, threads: 1)
        #expect(try run(plan, samples) == run(unoriented, byHand))

        // Buffers: stored 5×3 BGRA in, upright 3×5 out; in place is an error.
        var source = samples, destination = [UInt8](repeating: 0, count: samples.count)
        try source.withUnsafeMutableBytes { s in
            try destination.withUnsafeMutableBytes { d in
                let from = try PixelBuffer(baseAddress: s.baseAddress!, width: 5, height: 3, bytesPerRow: 20, format: .rgba8)
                let to = try PixelBuffer(baseAddress: d.baseAddress!, width: 3, height: 5, bytesPerRow: 12, format: .rgba8)
                try plan.run(from: from, to: to)
                #expect(throws: EditPlanError.orientationNeedsDestination) { try plan.run(from) }
                // The stored size given for the upright one: the message names both.
                let wrong = try PixelBuffer(baseAddress: s.baseAddress!, width: 3, height: 5, bytesPerRow: 12, format: .rgba8)
                #expect(throws: EditPlanError.buffer(.sizeMismatch(
                    source: "3×5 (the plan's orientation reads the stored 5×3)",
                    destination: "3×5 (the plan writes the upright 3×5)"))) { try plan.run(from: wrong, to: to) }
            }
        }
        #expect(destination == (try run(unoriented, byHand)))
    }

    @Test("the recipe key orientation: 6 round-trips, 9 and the CLI's 0 are errors")
    func recipeKey() throws {
        let json = #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.1", "orientation": 6}"#
        let recipe = try Recipe.decode(from: Data(json.utf8))
        #expect(recipe[Orientation.self] == .right)
        #expect(try Recipe.decode(from: recipe.encodedJSON()) == recipe)
        do {
            _ = try Recipe.decode(from: Data(#"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.1", "orientation": 9}"#.utf8))
            Issue.record("orientation 9 was accepted")
        } catch {
            #expect(error.description == "recipe: orientation: tag 9 is not one of 1…8", "\(error)")
        }
        let option = try #require(Orientation.family.options.first)
        guard case .text(let parse) = option.value else { Issue.record("not a text option"); return }
        var r = Recipe()
        try parse(&r, "8")
        #expect(r[Orientation.self] == .left)
        try parse(&r, " 6 ")
        #expect(r[Orientation.self] == .right)
        for text in ["0", "9", "six", "6 6", ""] {
            #expect(throws: RecipeError.invalidValue(field: "--orientation", value: text, reason: "must be a whole number from 1 to 8")) {
                try parse(&r, text)
            }
        }
    }
}

extension OrientationTests {
    @Test("a prepared oriented plan, run again and from several threads at once, gives each input's own result")
    func preparedPlanReuse() throws {
        // 5×3 stored, orientation 6: the plan is prepared for the upright 3×5 and keeps its
        // upright copy's memory from run to run (another run meanwhile takes its own).
        var recipe = Recipe(preset: .vivid)
        recipe[Orientation.self] = .right
        let plan = try EditPlan(recipe).prepared(width: 3, height: 5, threads: 1)
        let inputs: [[UInt8]] = (0..<6).map { k in (0..<60).map { UInt8(truncatingIfNeeded: $0 * 7 + k * 31) } }
        @Sendable func render(_ input: [UInt8], _ plan: PreparedEditPlan) throws -> [UInt8] {
            var out = [UInt8](repeating: 0, count: input.count)
            try input.withUnsafeBufferPointer { i in
                try out.withUnsafeMutableBufferPointer { o in
                    try plan.run(input: i, inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba, outputMaxval: 255)
                }
            }
            return out
        }
        let expected = try inputs.map { try render($0, EditPlan(recipe).prepared(width: 3, height: 5, threads: 1)) }
        for _ in 0..<2 {
            for (input, result) in zip(inputs, expected) { #expect(try render(input, plan) == result) }
        }
        let results = Mutex<[Int: [UInt8]]>([:])
        DispatchQueue.concurrentPerform(iterations: inputs.count) { k in
            let out = try? render(inputs[k], plan)
            results.withLock { $0[k] = out }
        }
        for k in inputs.indices { #expect(results.withLock { $0[k] } == expected[k], "input \(k)") }
    }
}
