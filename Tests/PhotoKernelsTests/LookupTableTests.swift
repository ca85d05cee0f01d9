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
        #expect(String(decoding: saved, as: UTF8.self).contains("\"path\" : \"looks\\/warm.cube\""))
        let again = try Recipe.decode(from: saved, relativeTo: folder.url)
        #expect(again == recipe)
        // Both give the same pixels, through the table at 0.6 trilinear.
        let image = randomPhoto(width: 9, height: 4, seed: 3)
        #expect(run(recipe.kernels, on: image, .simd4).pixels == run(again.kernels, on: image, .simd4).pixels)
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
        #expect(throws: RecipeError.self) { try decode("looks/none.cube", good) }
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
    }

    @Test("the Double evaluation matches the kernel on the grid and inside cells (the family's SPEC §8 oracle)")
    func oracle() throws {
        for interpolation in ColorCube.Interpolation.allCases {
            let lut = LookupTable.example(interpolation)
            let image = randomPhoto(width: 17, height: 3, seed: 9)
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
