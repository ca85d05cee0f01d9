import Foundation
import Testing
@testable import PhotoKernels

/// The `lut` recipe family: a `.cube` file by path and SHA-256 (the table's own
/// interpolation is tested in ColorCubeTests; the family laws run over its examples).
@Suite("LUT in a recipe")
struct LookupTableTests {
    /// A temporary folder holding `looks/warm.cube`.
    final class Folder {
        let url: URL
        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("lut-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url.appendingPathComponent("looks"), withIntermediateDirectories: true)
            let cube = try ColorCube.sampled(size: 5) { c in SIMD3(c.x * 0.9 + 0.1, c.y * c.y, (c.z + c.x) / 2) }
            try Data(CubeFile(title: "warm", cube: cube).encoded()).write(to: url.appendingPathComponent("looks/warm.cube"))
        }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    @Test("a recipe's relative path resolves against its folder, round-trips with its digest, and re-applies the same")
    func roundTrip() throws {
        let folder = try Folder()
        let file = folder.url.appendingPathComponent("looks/warm.cube")
        let digest = SHA256Hasher.hash(try Data(contentsOf: file)).hex
        let json = """
            {"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.1",
             "lut": {"path": "looks/warm.cube", "sha256": "\(digest)", "intensity": 0.6, "interpolation": "trilinear"}}
            """
        let recipe = try Recipe.decode(from: Data(json.utf8), relativeTo: folder.url)
        let lut = try #require(recipe[LookupTable.self])
        #expect(lut.sha256 == digest && lut.intensity == 0.6 && lut.interpolation == .trilinear && lut.cube.size == 5)
        let saved = try recipe.encodedJSON(relativeTo: folder.url)
        #expect(String(decoding: saved, as: UTF8.self).contains("\"path\" : \"looks/warm.cube\""))
        let again = try Recipe.decode(from: saved, relativeTo: folder.url)
        #expect(again == recipe)
        // Both give the same pixels, through the table at 0.6 trilinear.
        let image = try randomPhoto(width: 9, height: 4, seed: 3)
        #expect(run(recipe.kernels, on: image, .simd4).pixels == run(again.kernels, on: image, .simd4).pixels)
    }

    @Test("a saved recipe records its table relative to its own folder, beside or below it; absolute across trees")
    func savedPaths() throws {
        let folder = try Folder()
        let file = folder.url.appendingPathComponent("looks/warm.cube")
        var recipe = Recipe()
        recipe[LookupTable.self] = try LookupTable(contentsOf: file)
        let sub = folder.url.appendingPathComponent("recipes/film")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        let saved = try recipe.encodedJSON(relativeTo: sub)
        #expect(String(decoding: saved, as: UTF8.self).contains("\"path\" : \"../../looks/warm.cube\""))
        // Read back from that folder, it names the same file, and the recipe is equal to the
        // one saved (whose path was absolute), hash included; so it does after the whole
        // folder moves.
        let readBack = try Recipe.decode(from: saved, relativeTo: sub)
        #expect(readBack[LookupTable.self]?.path == "../../looks/warm.cube")
        #expect(readBack == recipe && readBack.hashValue == recipe.hashValue)
        #expect(readBack[LookupTable.self]?.sha256 == recipe[LookupTable.self]?.sha256)
        // Another file with the same bytes is another table.
        let copy = folder.url.appendingPathComponent("looks/copy.cube")
        try FileManager.default.copyItem(at: file, to: copy)
        var other = Recipe()
        other[LookupTable.self] = try LookupTable(contentsOf: copy)
        #expect(other != recipe)
        let moved = FileManager.default.temporaryDirectory.appendingPathComponent("lut-moved-\(UUID().uuidString)")
        try FileManager.default.moveItem(at: folder.url, to: moved)
        defer { try? FileManager.default.moveItem(at: moved, to: folder.url) }
        #expect(try Recipe.decode(from: saved, relativeTo: moved.appendingPathComponent("recipes/film"))[LookupTable.self] != nil)

        func path(_ file: String, _ folder: String) -> String {
            LookupTable.path(of: URL(fileURLWithPath: file), relativeTo: URL(fileURLWithPath: folder, isDirectory: true))
        }
        #expect(path("/tmp/a/looks/x.cube", "/tmp/a") == "looks/x.cube")
        #expect(path("/tmp/a/looks/x.cube", "/tmp/a/sub") == "../looks/x.cube")
        #expect(path("/tmp/a/x.cube", "/tmp/a/b/c") == "../../x.cube")
        #expect(path("/tmp/a/./b/../x.cube", "/tmp/a/") == "x.cube")
        #expect(path("/usr/share/looks/x.cube", "/home/me/recipes") == "/usr/share/looks/x.cube")
        #expect(path("/tmp/a", "/tmp/a") == "../a")
    }

    @Test("a changed file, a missing file and a malformed file are errors naming the LUT")
    func errors() throws {
        let folder = try Folder()
        let good = SHA256Hasher.hash(try Data(contentsOf: folder.url.appendingPathComponent("looks/warm.cube"))).hex
        func decode(_ path: String, _ digest: String) throws(RecipeError) -> Recipe {
            let json = #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.1", "lut": {"path": "\#(path)", "sha256": "\#(digest)"}}"#
            return try Recipe.decode(from: Data(json.utf8), relativeTo: folder.url)
        }
        _ = try decode("looks/warm.cube", good)
        let other = String(repeating: "0", count: 64)
        do {
            _ = try decode("looks/warm.cube", other)
            Issue.record("a different digest was accepted")
        } catch {
            guard case .invalidValue(let field, _, let reason) = error else { Issue.record("\(error)"); return }
            #expect(field == "lut.sha256" && reason.contains(good), "\(reason)")
        }
        // A missing file: the message names the path as written and where it was looked for.
        do {
            _ = try decode("looks/none.cube", good)
            Issue.record("a missing file was accepted")
        } catch {
            let resolved = folder.url.appendingPathComponent("looks/none.cube").standardizedFileURL.path
            #expect(error.isUnreadableFile && error.description.contains("\"looks/none.cube\"")
                    && error.description.contains("cannot be read (\(resolved)): "), "\(error)")
        }
        // No digest, an unknown interpolation, a folder instead of a file.
        func decodeJSON(_ lut: String) throws(RecipeError) -> Recipe {
            let json = #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.1", "lut": "# + lut + "}"
            return try Recipe.decode(from: Data(json.utf8), relativeTo: folder.url)
        }
        for (lut, field, words) in [
            (#"{"path": "looks/warm.cube"}"#, "lut.sha256", good),
            (#"{"path": "looks/warm.cube", "sha256": "\#(good)", "interpolation": "cubic"}"#, "lut.interpolation", "tetrahedral or trilinear"),
            (#"{"path": "looks", "sha256": "\#(good)"}"#, "lut.path", "cannot be read (\(folder.url.appendingPathComponent("looks").standardizedFileURL.path)): it is a directory"),
        ] {
            do {
                _ = try decodeJSON(lut)
                Issue.record("accepted: \(lut)")
            } catch {
                guard case .invalidValue(let f, _, let reason) = error else { Issue.record("\(error)"); continue }
                #expect(f == field && reason.contains(words), "\(lut): \(error)")
            }
        }
        // Bytes of the file echoed in a message are escaped: no escape sequence reaches a terminal.
        let hostile = CubeFileError(line: 3, .unknownKeyword("\u{1B}[31mRED\u{7}\"")).description
        #expect(hostile == #"line 3: unknown keyword "\u{1b}[31mRED\u{7}\"""#, "\(hostile)")
        try Data("LUT_3D_SIZE 2\n0 0 0\n".utf8).write(to: folder.url.appendingPathComponent("looks/bad.cube"))
        do {
            _ = try decode("looks/bad.cube", SHA256Hasher.hash(Data("LUT_3D_SIZE 2\n0 0 0\n".utf8)).hex)
            Issue.record("a truncated table was accepted")
        } catch {
            #expect(error.description.contains("bad.cube") && error.description.contains("line"), "\(error)")
        }
    }

    @Test("--lut-intensity and --lut-interpolation refine the table; before --lut they are errors")
    func options() throws {
        let folder = try Folder()
        let options = LookupTable.family.options
        func parse(_ name: String, _ text: String, _ recipe: inout Recipe) throws(RecipeError) {
            guard let option = options.first(where: { $0.name == name }), case .text(let p) = option.value else { return }
            try p(&recipe, text)
        }
        var recipe = Recipe()
        #expect(throws: RecipeError.self) { try parse("lut-intensity", "0.5", &recipe) }
        try parse("lut", folder.url.appendingPathComponent("looks/warm.cube").path, &recipe)
        try parse("lut-intensity", "0.25", &recipe)
        try parse("lut-interpolation", "trilinear", &recipe)
        #expect(recipe[LookupTable.self]?.intensity == 0.25 && recipe[LookupTable.self]?.interpolation == .trilinear)
        #expect(throws: RecipeError.self) { try parse("lut-interpolation", "cubic", &recipe) }
        // Not finite, or not finite as a Float: one error, naming what was typed.
        for text in ["nan", "inf", "1e39"] {
            #expect(throws: RecipeError.invalidValue(field: "--lut-intensity", value: text,
                                                     reason: "must be a finite number of at most 3.4e38 in magnitude")) {
                try parse("lut-intensity", text, &recipe)
            }
        }
    }

    @Test("the Double evaluation matches the kernel on the grid and inside cells (the family's SPEC §8 oracle)")
    func oracle() throws {
        for interpolation in ColorCube.Interpolation.allCases {
            let lut = LookupTable.example(interpolation)
            let image = try randomPhoto(width: 17, height: 3, seed: 9)
            let out = run(lut.kernels, on: image, .scalar)
            for i in 0..<image.pixelCount {
                let p = image.pixels[i]
                let exact = lut.evaluate(SIMD4(Double(p.x), Double(p.y), Double(p.z), Double(p.w)), x: 0, y: 0, width: 1, height: 1)
                for c in 0..<3 { #expect(abs(Double(out.pixels[i][c]) - exact[c]) < 2e-6, "\(interpolation) \(i) \(c)") }
            }
        }
    }
}

private extension LookupTable {
    var kernels: [any PixelKernel] { stages.map(\.kernel) }
}

extension LookupTableTests {
    /// Edits whose fused stages take the 8-bit LUT block: each part of its shape alone
    /// and together.
    static let fusedShapes: [(name: String, operations: [any RecipeOperation])] = {
        let lut = LookupTable.example(.tetrahedral)
        let vignette = Vignette.vignette(intensity: 1.2, radius: 1.1)
        return [
            ("lut", [lut]),
            ("lut at intensity 0.6", [lut.with(intensity: 0.6)]),
            ("exposure → lut", [Exposure(ev: 0.4), lut]),
            ("saturation, contrast → lut", [Saturation(1.6), Contrast(1.3), lut]),
            ("exposure → saturation → lut → vignette", [Exposure(ev: -0.3), Saturation(1.4), lut, vignette]),
            ("lut at intensity 0.6 → vignette", [lut.with(intensity: 0.6), vignette]),
        ]
    }()

    @Test("8-bit pixels take the fused LUT block: SPEC §8 per sample against the Double evaluation, widths 1…33, RGBA and BGRA",
          arguments: 0..<fusedShapes.count)
    func fusedEightBitBlock(_ shape: Int) throws {
        let (name, operations) = Self.fusedShapes[shape]
        let stages = operations.flatMap(\.stages)
        var worst = TieAwareCheck.Report()
        for width in 1...33 {
            let height = 3
            var rng = SeededGenerator(seed: UInt64(width))
            let samples = (0..<width * height * 4).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let plan = try EditPlan(stages: stages).prepared(width: width, height: height, threads: 1)
            // The block is what runs, for both byte orders.
            for positions in [ChannelPositions.rgba, ChannelPositions(red: 2, green: 1, blue: 0, fourth: 3)] {
                let tables = plan.toneTables(maxval: 255, eightBit: true)
                guard case .cube? = plan.fusedRows(maxval: 255, eightBit: true, tables: tables, positions: positions) else {
                    Issue.record("\(name): the fused LUT block is not taken")
                    return
                }
            }
            var rgba = samples
            try samples.withUnsafeBufferPointer { i in
                try rgba.withUnsafeMutableBufferPointer { o in
                    try plan.run(input: i, inputLayout: .rgba, inputMaxval: 255, output: o, outputLayout: .rgba, outputMaxval: 255)
                }
            }
            // The same pixels as BGRA, in place in a padded buffer.
            let bytesPerRow = width * 4 + 12
            var bgra = [UInt8](repeating: 0xA5, count: bytesPerRow * height)
            for y in 0..<height {
                for x in 0..<width {
                    let i = (y * width + x) * 4, o = y * bytesPerRow + x * 4
                    (bgra[o], bgra[o + 1], bgra[o + 2], bgra[o + 3]) = (samples[i + 2], samples[i + 1], samples[i], samples[i + 3])
                }
            }
            let format = try PixelFormat(.bgra, alpha: .straight, sample: .uint8)
            try bgra.withUnsafeMutableBytes { raw in
                let buffer = try PixelBuffer(baseAddress: raw.baseAddress!, width: width, height: height,
                                             bytesPerRow: bytesPerRow, format: format)
                try plan.run(buffer)
            }
            for y in 0..<height {
                for x in 0..<width {
                    let i = (y * width + x) * 4, o = y * bytesPerRow + x * 4
                    #expect([bgra[o + 2], bgra[o + 1], bgra[o], bgra[o + 3]] == Array(rgba[i..<i + 4]),
                            "\(name) width \(width): BGRA differs from RGBA at (\(x), \(y))")
                }
                #expect(bgra[(y * bytesPerRow + width * 4)..<((y + 1) * bytesPerRow)].allSatisfy { $0 == 0xA5 },
                        "\(name) width \(width): row padding written")
            }
            let report = TieAwareCheck.check(rgba.map(UInt16.init), samples.map(UInt16.init), width: width, height: height,
                                             maxval: 255) { c, x, y in
                operations.reduce(c) { $1.evaluate($0, x: x, y: y, width: width, height: height) }
            }
            #expect(report.failures == 0, "\(name) width \(width): \(report)")
            if report.failures > worst.failures || report.nearTies > worst.nearTies { worst = report }
        }
        print("fused 8-bit LUT block, \(name): \(worst)")
    }
}
