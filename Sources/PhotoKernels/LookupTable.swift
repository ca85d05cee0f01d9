import Foundation

// The `lut` family: a recipe refers to a `.cube` file by path and records the SHA-256
// of its bytes, so a saved recipe re-applied with a different file is an error, not a
// silently different picture. The table itself is `ColorCube` (its kernels) read by
// `CubeFile` (its parser).

/// A colour lookup table in a recipe (SPEC §11): a `.cube` file by path and SHA-256,
/// with its intensity and interpolation.
///
/// JSON: `{"path": "looks/film.cube", "sha256": "…64 hex digits…", "intensity": 1,
/// "interpolation": "tetrahedral"}`. A relative path is resolved against the folder of
/// the recipe file (`Recipe.decode(from:relativeTo:)`), or the current directory; on
/// encoding it is written relative to the recipe's folder (with `..` where needed)
/// where the two share a folder below the root, absolute otherwise.
/// Decoding reads the file, and throws when its SHA-256 differs from the recorded one.
public struct LookupTable: RecipeOperation {
    /// The path as written in the recipe.
    public let path: String
    /// The SHA-256 of the file's bytes, 64 lowercase hex digits.
    public let sha256: String
    /// The file's location, resolved when it was read.
    public let url: URL
    /// The table, with `intensity` and `interpolation` applied.
    public let cube: ColorCube

    /// The mix with the input, clamped to [0, 1]; identity 0, default 1.
    public var intensity: Double { cube.intensity }
    /// The 3D interpolation; default tetrahedral.
    public var interpolation: ColorCube.Interpolation { cube.interpolation }

    /// Reads the `.cube` file at `url`.
    ///
    /// - Parameters:
    ///   - url: the file.
    ///   - path: what the recipe writes for it (default: `url.path`).
    ///   - expectedSHA256: when given, the file must have this digest.
    ///   - intensity, interpolation: as in `ColorCube`.
    /// - Throws: `RecipeError.invalidValue` naming `lut.path` for a file that cannot be
    ///   read or parsed (with the `.cube` error's line), or `lut.sha256` for a digest
    ///   that does not match.
    public init(contentsOf url: URL, path: String? = nil, expectedSHA256: String? = nil, intensity: Double = 1,
                interpolation: ColorCube.Interpolation = .tetrahedral, limits: CubeLimits = .default) throws(RecipeError) {
        let bytes: Data
        do throws(CubeFileError) {
            bytes = try CubeFile.bytes(at: url, limits: limits)
        } catch {
            if case .readFailed(_, let reason) = error.reason {
                // A path relative to a recipe's folder: say where it was looked for.
                let resolved = path.map { $0 == url.path ? "" : " (\(url.path))" } ?? ""
                throw .invalidValue(field: "lut.path", value: "\"\(path ?? url.path)\"",
                                    reason: "cannot be read\(resolved): \(reason)")
            }
            throw .invalidValue(field: "lut.path", value: "\"\(path ?? url.path)\"", reason: error.description)
        }
        let digest = SHA256Hasher.hash(bytes).hex
        if let expectedSHA256, expectedSHA256.lowercased() != digest {
            throw .invalidValue(field: "lut.sha256", value: expectedSHA256,
                                reason: "the file \(path ?? url.path) has SHA-256 \(digest): it is not the table this recipe was saved with")
        }
        let file: CubeFile
        do {
            file = try CubeFile.parse(bytes, limits: limits)
        } catch {
            throw .invalidValue(field: "lut.path", value: "\"\(path ?? url.path)\"", reason: error.description)
        }
        var cube = file.cube
        cube.intensity = intensity
        cube.interpolation = interpolation
        self.init(path: path ?? url.path, sha256: digest, url: url, cube: cube)
    }

    /// A table already in memory, recorded under `path` with digest `sha256`.
    public init(path: String, sha256: String, url: URL, cube: ColorCube) {
        (self.path, self.sha256, self.url, self.cube) = (path, sha256, url, cube)
    }

    /// The same table at another intensity.
    public func with(intensity: Double) -> LookupTable {
        var c = cube
        c.intensity = intensity
        return LookupTable(path: path, sha256: sha256, url: url, cube: c)
    }

    /// The same table with another interpolation.
    public func with(interpolation: ColorCube.Interpolation) -> LookupTable {
        var c = cube
        c.interpolation = interpolation
        return LookupTable(path: path, sha256: sha256, url: url, cube: c)
    }

    /// The file, as an absolute path with `.` and `..` resolved: what equality compares.
    var resolvedPath: String { url.absoluteURL.standardizedFileURL.path }

    /// The same file (`url`, resolved), the same digest, intensity and interpolation.
    /// The path as written may differ: a recipe saved relative to its folder and read
    /// back there equals the one saved, whose path was absolute.
    public static func == (a: LookupTable, b: LookupTable) -> Bool {
        a.resolvedPath == b.resolvedPath && a.sha256 == b.sha256 && a.intensity == b.intensity
            && a.interpolation == b.interpolation
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(resolvedPath); hasher.combine(sha256); hasher.combine(intensity); hasher.combine(interpolation)
    }

    // MARK: RecipeOperation

    /// The `lut` family.
    public static let family = KernelFamily(
        key: "lut",
        summary: "a colour lookup table from a .cube file, tetrahedral or trilinear (CIColorCube, ffmpeg lut3d)",
        kind: .pixel,
        parameters: [
            FamilyParameter("path", identity: "—", range: "a .cube file", help: "relative to the recipe's folder"),
            FamilyParameter("sha256", identity: "—", range: "64 hex digits", help: "the file's digest, checked when read"),
            FamilyParameter("intensity", identity: "0", range: "0…1", help: "the mix with the input; 1 is the table"),
            FamilyParameter("interpolation", identity: "—", range: "tetrahedral, trilinear", help: "for 3D tables"),
        ],
        options: [
            FamilyOption("lut", valueName: "file", help: "Apply the colour lookup table of a .cube file (1D or 3D).") {
                recipe, text throws(RecipeError) in
                let old = recipe[LookupTable.self]
                recipe[LookupTable.self] = try LookupTable(contentsOf: URL(fileURLWithPath: text), path: text,
                                                           intensity: old?.intensity ?? 1,
                                                           interpolation: old?.interpolation ?? .tetrahedral)
            },
            FamilyOption("lut-intensity", valueName: "x", help: "The lookup table's mix with the input, clamped to 0…1 (default 1).") {
                recipe, text throws(RecipeError) in
                guard let x = Double(text), x.isFinite, Float(x).isFinite else {
                    throw .invalidValue(field: "--lut-intensity", value: text,
                                        reason: "must be a finite number of at most 3.4e38 in magnitude")
                }
                guard let lut = recipe[LookupTable.self] else {
                    throw .invalidValue(field: "--lut-intensity", value: text, reason: "refines a table: give --lut FILE first")
                }
                recipe[LookupTable.self] = lut.with(intensity: x)
            },
            FamilyOption("lut-interpolation", valueName: "name", help: "tetrahedral (default) or trilinear, for 3D tables.") {
                recipe, text throws(RecipeError) in
                guard let mode = ColorCube.Interpolation(rawValue: text) else {
                    throw .invalidValue(field: "--lut-interpolation", value: text, reason: "must be tetrahedral or trilinear")
                }
                guard let lut = recipe[LookupTable.self] else {
                    throw .invalidValue(field: "--lut-interpolation", value: text, reason: "refines a table: give --lut FILE first")
                }
                recipe[LookupTable.self] = lut.with(interpolation: mode)
            },
        ],
        examples: [("lut.tetrahedral", LookupTable.example(.tetrahedral)), ("lut.trilinear", LookupTable.example(.trilinear))],
        identity: LookupTable.example(.tetrahedral).with(intensity: 0), type: LookupTable.self)

    /// A 17³ table of a smooth, strongly non-linear look, held in memory: the family's
    /// example for the catalog and the tests.
    static func example(_ interpolation: ColorCube.Interpolation) -> LookupTable {
        exampleTable.with(interpolation: interpolation)
    }

    /// Built once, on first use.
    private static let exampleTable: LookupTable = {
        let cube = try! ColorCube.sampled(size: 17, interpolation: .tetrahedral) { c in
            SIMD3(c.x * c.x * 0.9 + 0.05 * c.z, (c.y + c.x * c.z) / 2, (c.z * c.z * c.z + c.y) / 2)
        }
        let file = CubeFile(title: "example", cube: cube).encoded()
        return LookupTable(path: "example.cube", sha256: SHA256Hasher.hash(file).hex,
                           url: URL(fileURLWithPath: "example.cube"), cube: cube)
    }()

    /// Whether the mix is 0 (or the table is the identity at every grid point).
    public var isIdentity: Bool { cube.isIdentity }

    /// `[.pixel(cube)]`.
    public var stages: [Stage] { [cube.stage] }

    /// Checks the intensity is finite (the table was checked when read).
    public func validate() throws(RecipeError) { try validateFinite("lut.intensity", intensity) }

    /// The table in `Double` (SPEC §11): the input clamped to the domain, tetrahedral or
    /// trilinear between the grid points (linear per channel for 1D), mixed by intensity.
    public func evaluate(_ color: SIMD4<Double>, x: Int, y: Int, width: Int, height: Int) -> SIMD4<Double> {
        let c = SIMD3(color.x, color.y, color.z)
        let lo = SIMD3<Double>(cube.domainMin), hi = SIMD3<Double>(cube.domainMax)
        let n = cube.size
        // Position on the grid, per channel.
        var p = SIMD3<Double>()
        for i in 0..<3 {
            let v = c[i].isNaN ? lo[i] : min(max(c[i], lo[i]), hi[i])
            p[i] = (v - lo[i]) / (hi[i] - lo[i]) * Double(n - 1)
        }
        func entry(_ r: Int, _ g: Int, _ b: Int) -> SIMD3<Double> { SIMD3<Double>(cube[r + n * (g + n * b)]) }
        var out = SIMD3<Double>()
        if cube.dimension == .oneDimensional {
            for i in 0..<3 {
                let k = min(Int(p[i]), n - 2), f = p[i] - Double(k)
                out[i] = Double(cube[k][i]) * (1 - f) + Double(cube[k + 1][i]) * f
            }
        } else {
            let k = SIMD3(min(Int(p.x), n - 2), min(Int(p.y), n - 2), min(Int(p.z), n - 2))
            let f = p - SIMD3(Double(k.x), Double(k.y), Double(k.z))
            func at(_ d: SIMD3<Int>) -> SIMD3<Double> { entry(k.x + d.x, k.y + d.y, k.z + d.z) }
            switch interpolation {
            case .trilinear:
                for corner in 0..<8 {
                    let d = SIMD3(corner & 1, (corner >> 1) & 1, corner >> 2)
                    let w = (d.x == 1 ? f.x : 1 - f.x) * (d.y == 1 ? f.y : 1 - f.y) * (d.z == 1 ? f.z : 1 - f.z)
                    out += w * at(d)
                }
            case .tetrahedral:
                // Walk from corner 000 to 111 along the axes in decreasing order of fraction.
                let order = [0, 1, 2].sorted { f[$0] > f[$1] || (f[$0] == f[$1] && $0 < $1) }
                var d = SIMD3<Int>(0, 0, 0), previous = at(d)
                out = previous
                for axis in order {
                    d[axis] = 1
                    let next = at(d)
                    out += f[axis] * (next - previous)
                    previous = next
                }
            }
        }
        let a = min(max(intensity, 0), 1)
        let mixed = c + a * (out - c)
        return SIMD4(mixed.x, mixed.y, mixed.z, color.w)
    }

    /// The same table at intensity 0.
    public var neutral: LookupTable { with(intensity: 0) }

    /// The intensity interpolated for the same file and interpolation; `nil` otherwise.
    public func interpolated(to other: LookupTable, at t: Double) -> LookupTable? {
        guard sha256 == other.sha256, interpolation == other.interpolation else { return nil }
        return with(intensity: (1 - t) * intensity + t * other.intensity)
    }

    // MARK: Codable

    private enum CodingKeys: String, CodingKey, CaseIterable { case path, sha256, intensity, interpolation }

    /// Reads the reference and the file it names (see the type's comment).
    public init(from decoder: Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let path = try c.decode(String.self, forKey: .path)
        let digest = try c.decodeIfPresent(String.self, forKey: .sha256)
        let intensity = try c.decodeIfPresent(Double.self, forKey: .intensity) ?? 1
        let interpolationName = try c.decodeIfPresent(String.self, forKey: .interpolation) ?? "tetrahedral"
        guard let interpolation = ColorCube.Interpolation(rawValue: interpolationName) else {
            throw RecipeError.invalidValue(field: "lut.interpolation", value: "\"\(interpolationName)\"",
                                           reason: "expected \(ColorCube.Interpolation.allCases.map(\.rawValue).joined(separator: " or "))")
        }
        let base = decoder.userInfo[Recipe.baseURLKey] as? URL
        let url = path.hasPrefix("/") || base == nil ? URL(fileURLWithPath: path)
            : base!.appendingPathComponent(path).standardizedFileURL
        try self.init(contentsOf: url, path: path, expectedSHA256: digest, intensity: intensity, interpolation: interpolation)
        // The digest is what makes a saved recipe reproducible: a reference without it
        // would silently take whatever file is there.
        guard digest != nil else {
            throw RecipeError.invalidValue(field: "lut.sha256", value: "missing",
                                           reason: "a recipe records its table's SHA-256; the file \(path) has \(sha256)")
        }
    }

    /// Writes the path, the digest, the intensity and the interpolation. The path is
    /// relative to the recipe's folder (with `..` where the table lies beside or above
    /// it), so that a recipe and its tables move together, where the two share a folder
    /// below the root; absolute otherwise (a table in `/usr/share`, a recipe in a home
    /// folder).
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        var written = path
        if let base = encoder.userInfo[Recipe.baseURLKey] as? URL {
            written = Self.path(of: url, relativeTo: base)
        }
        try c.encode(written, forKey: .path)
        try c.encode(sha256, forKey: .sha256)
        try c.encode(intensity, forKey: .intensity)
        try c.encode(interpolation, forKey: .interpolation)
    }
}

extension LookupTable {
    /// `file`'s path from `folder`, both made absolute and standardised (`.` and `..`
    /// resolved by name): `looks/film.cube`, `../looks/film.cube`; `file`'s absolute path
    /// where they share no folder but the root.
    static func path(of file: URL, relativeTo folder: URL) -> String {
        let target = file.standardizedFileURL.pathComponents, from = folder.standardizedFileURL.pathComponents
        var common = 0
        while common < min(target.count - 1, from.count), target[common] == from[common] { common += 1 }
        guard common > 1 else { return file.standardizedFileURL.path }
        let up = Array(repeating: "..", count: from.count - common)
        return (up + target[common...]).joined(separator: "/")
    }
}

extension RecipeError {
    /// Whether this is a file the recipe names (a LUT's `lut.path`) that cannot be read:
    /// missing, a directory, or without permission — missing input rather than bad data.
    public var isUnreadableFile: Bool {
        if case .invalidValue(let field, _, let reason) = self, field == "lut.path", reason.hasPrefix("cannot be read") {
            return true
        }
        return false
    }
}
