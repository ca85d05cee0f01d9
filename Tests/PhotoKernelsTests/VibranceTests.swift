import Foundation
import Testing
@testable import PhotoKernels

/// Vibrance's own formula (SPEC §5); the family laws cover schedules, alpha, NaN,
/// threads, identity and SPEC §8.
@Suite("Vibrance")
struct VibranceTests {
    /// One pixel through the kernel.
    func vibrance(_ amount: Double, _ p: SIMD4<Float>, _ variant: KernelVariant) -> SIMD4<Float> {
        var row = [p]
        row.withUnsafeMutableBufferPointer {
            Vibrance(amount: amount).apply($0, at: RowLocation(y: 0, imageWidth: 1, imageHeight: 1), variant: variant)
        }
        return row[0]
    }

    @Test("hand-computed pixels: a muted colour gets most of the change, a saturated one none")
    func handComputed() {
        // (0.6, 0.5, 0.4): spread 0.2, s = 1 + 0.5·0.8 = 1.4;
        // Y = 0.2126·0.6 + 0.7152·0.5 + 0.0722·0.4 = 0.51404; C' = Y + 1.4·(C − Y).
        let y = 0.2126 * 0.6 + 0.7152 * 0.5 + 0.0722 * 0.4
        let expected = [0.6, 0.5, 0.4].map { y + 1.4 * ($0 - y) }
        for variant in KernelVariant.allCases {
            let out = vibrance(0.5, SIMD4(0.6, 0.5, 0.4, 0.25), variant)
            for c in 0..<3 { #expect(abs(Double(out[c]) - expected[c]) < 1e-6, "\(variant) channel \(c): \(out)") }
            #expect(out.w == 0.25)
            // Pure red has spread 1: s = 1, unchanged to the bit.
            #expect(vibrance(0.8, SIMD4(1, 0, 0, 1), variant) == SIMD4(1, 0, 0, 1))
        }
        #expect(abs(expected[0] - 0.634384) < 1e-9 && abs(expected[2] - 0.354384) < 1e-9)
    }

    @Test("greys stay grey, negative amounts desaturate muted colours toward their luma")
    func greysAndNegatives() {
        for variant in KernelVariant.allCases {
            let g = vibrance(2, SIMD4(0.3, 0.3, 0.3, 1), variant)
            #expect(g.x == g.y && g.y == g.z)
            // v = −1 on a colour with spread 0.1: s = 1 − 0.9 = 0.1, a tenth of the chroma left.
            let p = SIMD4<Float>(0.5, 0.45, 0.4, 1)
            let y = Luma.of(0.5, 0.45, 0.4)
            let out = vibrance(-1, p, variant)
            #expect(abs(out.x - (y + 0.1 * (0.5 - y))) < 1e-6 && abs(out.z - (y + 0.1 * (0.4 - y))) < 1e-6)
        }
    }

    @Test("the schedule equals the scalar reference to the bit, widths 1…33 and across its 64-pixel chunks, special values included; alpha kept to the bit",
          arguments: [-2.5, -1, -0.3, 0.6, 3])
    func scheduleMatchesReference(_ amount: Double) {
        let specials: [Float] = [
            .nan, Float(bitPattern: 0x7FC1_2345), Float(bitPattern: 0xFFA0_0042), .infinity, -.infinity,
            3e38, -3e38, 0, -0.0, 1, 2, -0.5, Float(bitPattern: 0x0000_0001), 0.25, 0.5, 0.75,
        ]
        let alphas: [UInt32] = [0x7FC1_2345, 0x7F80_0001, 0xFFA0_0042, 0x8000_0000, 0x3F80_0000, 0x3E80_0000]
        var rng = SeededGenerator(seed: 41)
        for width in Array(1...33) + [63, 64, 65, 127, 130, 1027] {
            // Row 0: ordinary colours, equal channels and equal zeros of either sign;
            // row 1: a special value in one channel or in all three.
            for row in 0..<2 {
                let input = (0..<width).map { i -> SIMD4<Float> in
                    var c = SIMD4<Float>((0..<4).map { _ in Float.random(in: -0.25...1.25, using: &rng) })
                    if i % 5 == 1 { c.y = c.x }
                    if i % 7 == 2 { (c.x, c.y, c.z) = (0, -0.0, i % 2 == 0 ? 0 : 0.5) }
                    if row == 1 {
                        let s = specials[(i + width) % specials.count]
                        if i % 3 == 0 { (c.x, c.y, c.z) = (s, s, s) } else { c[i % 3] = s }
                    }
                    c.w = Float(bitPattern: alphas[(i + width + row) % alphas.count])
                    return c
                }
                var reference = input, scheduled = input
                reference.withUnsafeMutableBufferPointer { Vibrance.applyScalar($0.baseAddress!, count: width, amount: Float(amount)) }
                scheduled.withUnsafeMutableBufferPointer { Vibrance.applySIMD4($0.baseAddress!, count: width, amount: Float(amount)) }
                for i in 0..<width {
                    for c in 0..<4 {
                        let (x, y) = (reference[i][c], scheduled[i][c])
                        #expect(x.bitPattern == y.bitPattern || (c < 3 && x.isNaN && y.isNaN),
                                "amount \(amount), width \(width), row \(row), pixel \(i) \(input[i]): \(reference[i]) vs \(scheduled[i])")
                    }
                }
            }
        }
    }

    @Test("the recipe key, the option and the registry line")
    func registration() throws {
        #expect(KernelFamilies.named("vibrance")?.kind == .pixel)
        let json = #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.1", "vibrance": 0.3}"#
        let recipe = try Recipe.decode(from: Data(json.utf8))
        #expect(recipe[Vibrance.self] == Vibrance(amount: 0.3))
        #expect(try Recipe.decode(from: recipe.encodedJSON()) == recipe)
        #expect(throws: RecipeError.unknownKey("vibrancy", closest: "vibrance")) {
            try Recipe.decode(from: Data(#"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.1", "vibrancy": 1}"#.utf8))
        }
    }
}
