import Foundation
import Testing
@testable import PhotoKernels

/// A 2³ table with unrelated, exactly representable corners (not affine), indexed
/// `i + 2j + 4k`: c000, c100, c010, c110, c001, c101, c011, c111.
let handCube = try! ColorCube(size: 2, entries: [
    SIMD3(0, 1, 0.25), SIMD3(0.5, 0.75, 0.25), SIMD3(0.25, 0.5, 1), SIMD3(1, 0.25, 0),
    SIMD3(0.125, 0, 0.5), SIMD3(0.75, 0.625, 0.75), SIMD3(0.375, 0.125, 0.875), SIMD3(0.875, 0.5, 0.125),
])

/// A smooth nonlinear map for sampled tables.
func curvy(_ c: SIMD3<Double>) -> SIMD3<Double> {
    SIMD3(c.x * c.x + 0.1 * c.z, (c.y + c.x * c.z) / 2, c.z * (1.2 - 0.4 * c.y) - 0.05)
}

/// Tables the equivalence tests sweep: small, odd-sized, with a domain of their own,
/// trilinear, at half intensity, and 1D ones.
let cubeSamples: [ColorCube] = {
    var list = [handCube]
    list.append(try! ColorCube.sampled(size: 17, from: curvy))
    list.append(try! ColorCube.sampled(size: 5, domainMin: SIMD3(-0.5, 0, 0.25), domainMax: SIMD3(1.5, 2, 0.75), from: curvy))
    var trilinear = try! ColorCube.sampled(size: 9, from: curvy)
    trilinear.interpolation = .trilinear
    list.append(trilinear)
    var half = try! ColorCube.sampled(size: 9, from: curvy)
    half.intensity = 0.5
    list.append(half)
    var halfTrilinear = half
    halfTrilinear.interpolation = .trilinear
    list.append(halfTrilinear)
    list.append(try! ColorCube.sampled(.oneDimensional, size: 1024) { c in c * c })
    var curve = try! ColorCube.sampled(.oneDimensional, size: 2, domainMin: SIMD3(repeating: -1),
                                       domainMax: SIMD3(repeating: 2)) { c in SIMD3(1 - c.x, c.y / 2, 0.5) }
    curve.intensity = 0.25
    list.append(curve)
    return list
}()

/// A one-row image of RGB triples, alpha 1.
func row(_ colours: [SIMD3<Float>], alpha: Float = 1) throws -> FloatImage {
    try FloatImage(width: colours.count, height: 1, pixels: colours.map { SIMD4($0, alpha) })
}

@Suite("Colour lookup tables (SPEC §11)")
struct ColorCubeTests {
    @Test("identity tables of size 2, 17, 33, 65 return the input, clamped to [0, 1], both interpolations")
    func identity() throws {
        let input = try randomImage(width: 23, height: 5, seed: 71)
        var clamped = input
        for i in clamped.pixels.indices {
            for c in 0..<3 { clamped[pixel: i][c] = min(max(clamped.pixels[i][c], 0), 1) }
        }
        for size in [2, 17, 33, 65] {
            var cube = try ColorCube.identity(size: size)
            for interpolation in ColorCube.Interpolation.allCases {
                cube.interpolation = interpolation
                for variant in KernelVariant.allCases {
                    expectClose(run([cube], on: input, variant), clamped, input: input, tolerance: 1e-6,
                                "identity \(size) \(interpolation) \(variant)")
                }
            }
        }
        for size in [2, 256, 65536] {
            let curves = try ColorCube.identity(.oneDimensional, size: size)
            for variant in KernelVariant.allCases {
                expectClose(run([curves], on: input, variant), clamped, input: input, tolerance: 1e-6, "1D identity \(size) \(variant)")
            }
        }
    }

    @Test("a table sampled from an affine map reproduces it inside the domain (both interpolations)")
    func affineIsExact() throws {
        let matrices: [(String, ColorMatrix)] = [
            ("sepia", .sepia(intensity: 1)),
            ("adjustments", Adjustments(saturation: 1.3, contrast: 1.2, brightness: 0.05, hue: 20).matrix),
        ]
        let input = try randomPhoto(width: 31, height: 3, seed: 73)
        for (name, matrix) in matrices {
            var cube = try ColorCube.sampled(size: 9) { matrix.applied(to: $0) }
            let expected = try FloatImage(width: input.width, height: input.height, pixels: input.pixels.map { p in
                let c = matrix.applied(to: SIMD3(Double(p.x), Double(p.y), Double(p.z)))
                return SIMD4(Float(c.x), Float(c.y), Float(c.z), p.w)
            })
            for interpolation in ColorCube.Interpolation.allCases {
                cube.interpolation = interpolation
                for variant in KernelVariant.allCases {
                    // Float rounding of the entries, the coordinates and the sums: a few ulps of 2.
                    expectClose(run([cube], on: input, variant), expected, input: input, tolerance: 2e-6,
                                "\(name) \(interpolation) \(variant)")
                }
            }
        }
    }

    @Test("hand-computed tetrahedral values, one point in each of the six tetrahedra, and on the diagonal")
    func tetrahedralByHand() throws {
        // (0.5, 0.25, 0.125): fr > fg > fb, corners c000 c100 c110 c111, weights
        // (1 − 0.5, 0.5 − 0.25, 0.25 − 0.125, 0.125) = (0.5, 0.25, 0.125, 0.125):
        // R = 0.5·0 + 0.25·0.5 + 0.125·1 + 0.125·0.875 = 0.359375, and so on.
        let points: [(SIMD3<Float>, SIMD3<Float>)] = [
            (SIMD3(0.5, 0.25, 0.125), SIMD3(0.359375, 0.78125, 0.203125)),    // R > G > B: c100, c110
            (SIMD3(0.5, 0.125, 0.25), SIMD3(0.328125, 0.828125, 0.296875)),   // R > B > G: c100, c101
            (SIMD3(0.25, 0.125, 0.5), SIMD3(0.234375, 0.640625, 0.359375)),   // B > R > G: c001, c101
            (SIMD3(0.125, 0.25, 0.5), SIMD3(0.1875, 0.578125, 0.375)),        // B > G > R: c001, c011
            (SIMD3(0.125, 0.5, 0.25), SIMD3(0.21875, 0.703125, 0.5)),         // G > B > R: c010, c011
            (SIMD3(0.25, 0.5, 0.125), SIMD3(0.296875, 0.71875, 0.390625)),    // G > R > B: c010, c110
            (SIMD3(0.375, 0.375, 0.375), SIMD3(0.328125, 0.8125, 0.203125)),  // grey: 0.625·c000 + 0.375·c111
            (SIMD3(0.75, 0.75, 0.25), SIMD3(0.71875, 0.5, 0.09375)),          // tie R = G: 0.25, 0, 0.5, 0.25
            (SIMD3(0, 0, 0), SIMD3(0, 1, 0.25)),                              // the corners themselves
            (SIMD3(1, 1, 1), SIMD3(0.875, 0.5, 0.125)),
            (SIMD3(1, 0, 1), SIMD3(0.75, 0.625, 0.75)),
        ]
        let input = try row(points.map(\.0), alpha: 0.5)
        let expected = try row(points.map(\.1), alpha: 0.5)
        for variant in KernelVariant.allCases {
            expectClose(run([handCube], on: input, variant), expected, input: input, tolerance: 1e-7, "tetrahedral \(variant)")
        }
    }

    @Test("hand-computed trilinear values on the same 2³ table")
    func trilinearByHand() throws {
        // (0.5, 0.25, 0.125): weight of corner (i, j, k) is Π (f or 1 − f), e.g. c000
        // 0.5·0.75·0.875 = 0.328125; R = Σ weight·R(corner) = 0.361328125.
        let points: [(SIMD3<Float>, SIMD3<Float>)] = [
            (SIMD3(0.5, 0.25, 0.125), SIMD3(0.361328125, 0.6953125, 0.34765625)),
            (SIMD3(0.125, 0.5, 0.25), SIMD3(0.232421875, 0.5703125, 0.5859375)),
            (SIMD3(0.375, 0.375, 0.375), SIMD3(0.361083984375, 0.54150390625, 0.466796875)),
            (SIMD3(0.75, 0.75, 0.25), SIMD3(0.705078125, 0.43359375, 0.2890625)),
        ]
        var cube = handCube
        cube.interpolation = .trilinear
        let input = try row(points.map(\.0)), expected = try row(points.map(\.1))
        for variant in KernelVariant.allCases {
            expectClose(run([cube], on: input, variant), expected, input: input, tolerance: 1e-7, "trilinear \(variant)")
        }
    }

    @Test("hand-computed 1D lookups: linear per channel between neighbouring entries")
    func oneDimensionalByHand() throws {
        // Entries at inputs 0, 0.5, 1: R (0, 0.2, 1), G (1, 0.5, 0), B (0.25, 0.25, 0.75).
        let curves = try ColorCube(dimension: .oneDimensional, size: 3, entries: [
            SIMD3(0, 1, 0.25), SIMD3(0.2, 0.5, 0.25), SIMD3(1, 0, 0.75),
        ])
        // 0.25 is halfway through the first interval, 0.75 through the second.
        let input = try row([SIMD3(0.25, 0.75, 0.5), SIMD3(0.75, 0.25, 1), SIMD3(-3, 7, 0.875)])
        let expected = try row([SIMD3(0.1, 0.25, 0.25), SIMD3(0.6, 0.75, 0.75), SIMD3(0, 0, 0.625)])
        for variant in KernelVariant.allCases {
            expectClose(run([curves], on: input, variant), expected, input: input, tolerance: 1e-7, "1D \(variant)")
        }
    }

    @Test("input outside the domain is clamped to it, per channel")
    func domainClamping() throws {
        let lo = SIMD3<Float>(-0.5, 0, 0.25), hi = SIMD3<Float>(1.5, 2, 0.75)
        for dimension in ColorCube.Dimension.allCases {
            let cube = try ColorCube.sampled(dimension, size: dimension == .threeDimensional ? 5 : 64,
                                             domainMin: lo, domainMax: hi, from: curvy)
            let outside = try row([SIMD3(-4, 9, 0), SIMD3(.infinity, -.infinity, 1e30), SIMD3(-0.6, 2.5, 0.8)])
            let inside = try row([SIMD3(-0.5, 2, 0.25), SIMD3(1.5, 0, 0.75), SIMD3(-0.5, 2, 0.75)])
            for variant in KernelVariant.allCases {
                expectBitEqual(run([cube], on: outside, variant), run([cube], on: inside, variant), "\(dimension) \(variant)")
            }
            // The grid points sit at lo + i·(hi − lo)/(N − 1): the corners are the table's.
            let corners = run([cube], on: try row([lo, hi]), .simd4).pixels
            #expect(SIMD3(corners[0].x, corners[0].y, corners[0].z) == cube[0])
            #expect(SIMD3(corners[1].x, corners[1].y, corners[1].z) == cube[cube.entryCount - 1])
        }
    }

    @Test("intensity mixes C + a·(lut(C) − C), clamped to [0, 1]; 0 is the identity to the bit")
    func intensity() throws {
        let input = try randomImage(width: 17, height: 3, seed: 79)
        var cube = try ColorCube.sampled(size: 9, from: curvy)
        let full = run([cube], on: input, .scalar)
        for a in [0.25, 0.5, 0.9] {
            cube.intensity = a
            let expected = try FloatImage(width: input.width, height: input.height, pixels: zip(input.pixels, full.pixels).map { c, l in
                let mixed = c + Float(a) * (l - c)
                return SIMD4(mixed.x, mixed.y, mixed.z, c.w)
            })
            for variant in KernelVariant.allCases {
                expectClose(run([cube], on: input, variant), expected, input: input, tolerance: 1e-6, "intensity \(a) \(variant)")
            }
        }
        for (a, like) in [(0.0, 0.0), (-2, 0), (.nan, 0), (1, 1), (7, 1)] {
            cube.intensity = a
            for variant in KernelVariant.allCases {
                let observed = run([cube], on: input, variant)
                expectBitEqual(observed, like == 0 ? input : full, "intensity \(a) \(variant)")
            }
            #expect(cube.isIdentity == (like == 0))
        }
    }

    @Test("vector schedule equals the scalar reference to the bit on widths 1…33, NaN included, guards intact")
    func vectorMatchesScalar() throws {
        for (n, cube) in cubeSamples.enumerated() {
            for (w, h) in testShapes {
                let input = try randomImage(width: w, height: h, seed: UInt64(800 + n), nanEvery: 5)
                let vector = run([cube], on: input, .simd4), scalar = run([cube], on: input, .scalar)
                expectClose(vector, scalar, input: input, "cube \(n)")
                #expect(zip(vector.pixels, scalar.pixels).allSatisfy(sameBits), "cube \(n) \(w)×\(h): not bit-equal")
            }
            for start in 0..<4 {
                let pixels = fastPathPixels(70, seed: UInt64(900 + n), specials: [.nan, .infinity, -.infinity, -0.0, 1e30])
                let (vector, intact) = runRow(cube, pixels, start: start)
                let (scalar, _) = runRow(cube, pixels, start: start, variant: .scalar)
                #expect(intact, "cube \(n) wrote outside its row at start \(start)")
                #expect(zip(vector, scalar).allSatisfy(sameBits), "cube \(n) start \(start): not bit-equal")
            }
        }
    }

    @Test("NaN stays in its pixel: all three channels in 3D, that channel in 1D; alpha is bit-exact")
    func nanAndAlpha() throws {
        let clean = try randomImage(width: 13, height: 3, seed: 83)
        var dirty = clean
        dirty[pixel: 5] = SIMD4(0.2, .nan, 0.7, 0.25)
        dirty[pixel: 9].w = .nan
        dirty[pixel: 10].w = -0.0
        for (n, cube) in cubeSamples.enumerated() {
            for variant in KernelVariant.allCases {
                let x = run([cube], on: clean, variant), y = run([cube], on: dirty, variant)
                let p = y.pixels[5]
                if cube.dimension == .threeDimensional {
                    #expect(p.x.isNaN && p.y.isNaN && p.z.isNaN, "cube \(n) \(variant): \(p)")
                } else {
                    #expect(!p.x.isNaN && p.y.isNaN && !p.z.isNaN, "cube \(n) \(variant): \(p)")
                }
                #expect(p.w == 0.25)
                for i in x.pixels.indices where i != 5 {
                    #expect((0..<3).allSatisfy { x.pixels[i][$0] == y.pixels[i][$0] }, "cube \(n) \(variant): pixel \(i) changed")
                }
                #expect(zip(y.pixels, dirty.pixels).allSatisfy { $0.w.bitPattern == $1.w.bitPattern }, "cube \(n) \(variant): alpha")
            }
        }
    }

    @Test("entries are stored red index fastest; sampled tables put the last grid point on the domain's max")
    func layout() throws {
        let cube = try ColorCube.identity(size: 5)
        #expect(cube.entryCount == 125)
        #expect(cube[0] == SIMD3(0, 0, 0))
        #expect(cube[1] == SIMD3(0.25, 0, 0))
        #expect(cube[5] == SIMD3(0, 0.25, 0))
        #expect(cube[25] == SIMD3(0, 0, 0.25))
        #expect(cube[124] == SIMD3(1, 1, 1))
        #expect(cube.entries.count == 125 && cube.entries[7] == cube[7])
        let odd = try ColorCube.sampled(size: 3, domainMin: SIMD3(repeating: 0.1), domainMax: SIMD3(repeating: 0.7)) { $0 }
        #expect(odd[26] == SIMD3(0.7, 0.7, 0.7))
        #expect(odd[1].x == Float(0.1 + 0.3))
        let curves = try ColorCube.identity(.oneDimensional, size: 3)
        #expect(curves.entries == [SIMD3(0, 0, 0), SIMD3(0.5, 0.5, 0.5), SIMD3(1, 1, 1)])
    }

    @Test("bad tables are typed errors: size, entry count, non-finite entry, domain")
    func errors() {
        #expect(throws: ColorCubeError.sizeOutOfRange(size: 1, range: 2...256)) { try ColorCube.identity(size: 1) }
        #expect(throws: ColorCubeError.sizeOutOfRange(size: 257, range: 2...256)) { try ColorCube.identity(size: 257) }
        #expect(throws: ColorCubeError.sizeOutOfRange(size: 65537, range: 2...65536)) {
            try ColorCube.identity(.oneDimensional, size: 65537)
        }
        #expect(throws: ColorCubeError.sizeOutOfRange(size: Int.max, range: 2...256)) { try ColorCube.identity(size: Int.max) }
        #expect(throws: ColorCubeError.entryCountMismatch(expected: 8, found: 7)) {
            try ColorCube(size: 2, entries: Array(repeating: .zero, count: 7))
        }
        #expect(throws: ColorCubeError.nonFiniteEntry(index: 3)) {
            try ColorCube(dimension: .oneDimensional, size: 4, entries: [.zero, .zero, .zero, SIMD3(0, .nan, 0)])
        }
        #expect(throws: ColorCubeError.nonFiniteEntry(index: 1)) {
            try ColorCube.sampled(size: 2) { c in c.x > 0 ? SIMD3(1e300, 0, 0) : c }
        }
        #expect(throws: ColorCubeError.invalidDomain(channel: 1, min: 0.5, max: 0.5)) {
            try ColorCube.sampled(size: 2, domainMin: SIMD3(0, 0.5, 0), domainMax: SIMD3(1, 0.5, 1)) { $0 }
        }
        #expect(throws: ColorCubeError.invalidDomain(channel: 2, min: 0, max: .infinity)) {
            try ColorCube.sampled(size: 2, domainMax: SIMD3(1, 1, .infinity)) { $0 }
        }
        #expect(ColorCubeError.sizeOutOfRange(size: 1, range: 2...256).description == "the table size 1 is outside 2…256")
    }

    @Test("a domain so narrow its scale overflows Float still indexes inside the table")
    func extremeDomains() throws {
        let tiny = try ColorCube.sampled(size: 4, domainMin: SIMD3(repeating: 0),
                                         domainMax: SIMD3(repeating: Float.leastNonzeroMagnitude)) { _ in SIMD3(1, 2, 3) }
        let wide = try ColorCube.sampled(size: 4, domainMin: SIMD3(repeating: -Float.greatestFiniteMagnitude),
                                         domainMax: SIMD3(repeating: .greatestFiniteMagnitude)) { _ in SIMD3(1, 2, 3) }
        let input = try row([SIMD3(0, 0, 0), SIMD3(1, -1, 0.5), SIMD3(.infinity, 3e38, -3e38)])
        for cube in [tiny, wide] {
            for variant in KernelVariant.allCases {
                let out = run([cube], on: input, variant).pixels
                #expect(out.allSatisfy { $0.x == 1 && $0.y == 2 && $0.z == 3 }, "\(variant): \(out)")
            }
        }
    }
}

/// ffmpeg 5.1's `lut3d` filter on the same table and image, float in and float out;
/// the outputs were made by Tests/Scripts/ffmpeg-lut3d-fixture.sh.
@Suite("Colour lookup tables against ffmpeg lut3d")
struct ColorCubeFFmpegTests {
    // Keep in step with Tests/Scripts/ffmpeg-lut3d-fixture.sh: the same closed form,
    // grid and image.
    static func closedForm(_ c: SIMD3<Double>) -> SIMD3<Double> {
        let r = c.x, g = c.y, b = c.z
        return SIMD3(r * r * (1 - 0.3 * g) + 0.2 * b,
                     0.5 * (g + r * b) + 0.25 * g * g,
                     b * (0.6 + 0.4 * r) - 0.1 * g + 0.05)
    }

    static func pixel(_ x: Int, _ y: Int) -> SIMD3<Float> {
        let r: Float = y == 0 ? -0.25 : Float(x) / 31
        let g = Float(y) / 31
        let b: Float = x == 31 ? 1.25 : Float((x * 7 + y * 13) % 32) / 31
        return SIMD3(r, g, b)
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/ffmpeg-lut3d")

    /// A 32×32 planar gbrpf32le file as an image (alpha 1).
    static func planar(_ data: Data) throws -> FloatImage {
        let floats = data.withUnsafeBytes { raw in
            (0..<(raw.count / 4)).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        }
        let n = 32 * 32
        return try FloatImage(width: 32, height: 32, pixels: (0..<n).map { i in SIMD4(floats[2 * n + i], floats[i], floats[n + i], 1) })
    }

    // Measured with ffmpeg 5.1.9 (Debian 12, x86-64): tetrahedral differs by at most
    // 1.19e-7 (one ulp of 1.0; ffmpeg's x86 lut3d code may use fused multiply-adds),
    // trilinear not at all. The bound is two ulps of 1.0.
    @Test("tetrahedral and trilinear agree with ffmpeg's float output within 2.4e-7")
    func ffmpeg() throws {
        // The same table and pixels ffmpeg read: the digests the fixture script printed.
        let sampled = try ColorCube.sampled(size: 17, from: Self.closedForm)
        let text = CubeFile(title: "PhotoKernels ffmpeg lut3d fixture", cube: sampled).encoded()
        #expect(SHA256Hasher.hash(text).hex == "30bff3e1b1b5e24b9b2cfcd12fea4ea71ec8ae9dc1275ffee984fb0d4c337e6c")
        var planes = [UInt8]()
        for plane in [1, 2, 0] {
            for y in 0..<32 { for x in 0..<32 {
                withUnsafeBytes(of: Self.pixel(x, y)[plane].bitPattern.littleEndian) { planes.append(contentsOf: $0) }
            } }
        }
        #expect(SHA256Hasher.hash(planes).hex == "d05de92d94e3a857d4283cb814b49a732901c080316835d0b6edd8efade7ba0e")

        var cube = try CubeFile.parse(text).cube
        #expect(cube == sampled)
        let input = try Self.planar(Data(planes))
        for interpolation in ColorCube.Interpolation.allCases {
            cube.interpolation = interpolation
            let reference = try Self.planar(try Data(contentsOf: Self.fixtures.appendingPathComponent("\(interpolation)-32x32-gbrpf32le.raw")))
            for variant in KernelVariant.allCases {
                let observed = run([cube], on: input, variant)
                var worst: Float = 0
                for (o, r) in zip(observed.pixels, reference.pixels) {
                    for c in 0..<3 { worst = max(worst, abs(o[c] - r[c])) }
                }
                #expect(worst <= 2.4e-7, "\(interpolation) \(variant): worst difference from ffmpeg \(worst)")
                expectClose(observed, reference, input: input, tolerance: 2.4e-7, "ffmpeg \(interpolation) \(variant)")
            }
        }
    }
}
