import Foundation
import Netpbm
import PhotoKernels
@testable import PhotoKernelsCLI
import Testing

/// The demo photo's content (tested on the renderer directly), and the demo, effects,
/// help and version commands through the binary.
@Suite("demo, effects, help")
struct DemoTests {
    /// The photo, rendered once for all pixel checks.
    static let photo = try! DemoPhoto.render()  // a fixed size: cannot throw

    /// The 8-bit sRGB colour of a pixel.
    static func rgb8(_ x: Int, _ y: Int) -> SIMD3<Int> {
        let p = photo[x, y]
        return SIMD3(Int((p.x * 255).rounded()), Int((p.y * 255).rounded()), Int((p.z * 255).rounded()))
    }

    /// Whether two colours are within `tolerance` per channel; prints both when not.
    static func close(_ a: SIMD3<Int>, _ b: SIMD3<Int>, within tolerance: Int) -> Bool {
        let d = a &- b
        return abs(d.x) <= tolerance && abs(d.y) <= tolerance && abs(d.z) <= tolerance
    }

    @Test("the photo: size, opacity and landmark colours")
    func photoColors() {
        let photo = Self.photo
        #expect(photo.width == 1000 && photo.height == 800)
        #expect(photo.isOpaque)
        // Sky top ≈ blue; bottom of the sky ≈ orange; the middle of the sky is pink.
        #expect(Self.close(Self.rgb8(100, 0), SIMD3(0, 122, 255), within: 2), "\(Self.rgb8(100, 0))")
        #expect(Self.close(Self.rgb8(20, 230), SIMD3(255, 45, 85), within: 2), "\(Self.rgb8(20, 230))")
        #expect(Self.close(Self.rgb8(950, 459), SIMD3(255, 149, 0), within: 2), "\(Self.rgb8(950, 459))")
        // Sun centre yellow, and the sun ends at its radius.
        #expect(Self.rgb8(500, 340) == SIMD3(255, 204, 0))
        #expect(Self.rgb8(420, 340) == SIMD3(255, 204, 0))
        #expect(Self.rgb8(500, 236) != SIMD3(255, 204, 0))
        // Water: orange at the horizon, teal in the middle, indigo at the bottom.
        #expect(Self.close(Self.rgb8(950, 460), SIMD3(255, 149, 0), within: 2), "\(Self.rgb8(950, 460))")
        #expect(Self.close(Self.rgb8(100, 630), SIMD3(48, 176, 199), within: 2), "\(Self.rgb8(100, 630))")
        #expect(Self.close(Self.rgb8(100, 799), SIMD3(88, 86, 214), within: 2), "\(Self.rgb8(100, 799))")
        // A hill pixel over the sky: 80 % green over the sky colour of its row.
        let y = 450
        let sky = DemoPhoto.backgroundColor(row: y)
        let green = SIMD3<Float>(52, 199, 89) / 255
        let mixed = green * 0.8 + sky * 0.2
        let expected = SIMD3(Int((mixed.x * 255).rounded()), Int((mixed.y * 255).rounded()), Int((mixed.z * 255).rounded()))
        #expect(Self.close(Self.rgb8(250, y), expected, within: 1), "\(Self.rgb8(250, y)) vs \(expected)")
        // The dip below the chord, over the water, is hill too; above the curve is sky.
        let dip = DemoPhoto.backgroundColor(row: 480)
        let dipMixed = green * 0.8 + dip * 0.2
        #expect(Self.close(Self.rgb8(800, 480),
                           SIMD3(Int((dipMixed.x * 255).rounded()), Int((dipMixed.y * 255).rounded()),
                                 Int((dipMixed.z * 255).rounded())), within: 1))
        #expect(Self.close(Self.rgb8(250, 380), Self.rgb8(900, 380), within: 0))
    }

    @Test("the hill outline is the Bézier curve, anti-aliased")
    func hillEdge() {
        // Where the curve crosses x = 150.5, the pixel containing it is partly covered.
        let y = DemoPhoto.hillY(atX: 150.5)
        #expect(y > 400 && y < 470)
        let row = Int(y)
        let above = Self.photo[150, row - 2], edge = Self.photo[150, row], below = Self.photo[150, row + 2]
        let sky = DemoPhoto.backgroundColor(row: row - 2)
        #expect(abs(above.y - sky.y) < 1e-6)
        #expect(edge.y != below.y || y == Float(row))
        // Endpoints and the chord crossing (t = 220/370).
        #expect(abs(DemoPhoto.bezier(0).y - 470) < 1e-4 && abs(DemoPhoto.bezier(1).y - 470) < 1e-4)
        #expect(abs(DemoPhoto.bezier(220.0 / 370.0).y - 470) < 1e-3)
    }

    @Test("box-filter thumbnails average the covered pixels")
    func thumbnail() throws {
        let image = try FloatImage(width: 4, height: 2, pixels: [
            SIMD4(0, 0, 0, 1), SIMD4(1, 1, 1, 1), SIMD4(0.5, 0, 0, 1), SIMD4(0.5, 0, 0, 1),
            SIMD4(1, 1, 1, 1), SIMD4(0, 0, 0, 1), SIMD4(0.5, 0, 0, 1), SIMD4(0.5, 0, 0, 1),
        ])
        let small = try ContactSheet.thumbnail(of: image, width: 2, height: 1)
        #expect(small.pixels == [SIMD4(0.5, 0.5, 0.5, 1), SIMD4(0.5, 0, 0, 1)])
    }

    @Test("demo writes a 1000×800 P6 and says what it did")
    func demoCommand() throws {
        let sandbox = try Sandbox()
        let result = try Tool.run(["demo", "--preset", "noir", "--threads", "2"], in: sandbox)
        try #require(result.status == 0, "\(result.stderr)")
        #expect(result.stderr == "rendered \"Lake at sunrise\" (1000×800), applied preset noir "
                + "(saturation 0, contrast 1.35, brightness -0.05, hue 0°), wrote demo-noir.ppm\n")
        let image = try #require(try sandbox.images("demo-noir.ppm").first)
        #expect(image.format == .rawPPM && image.width == 1000 && image.height == 800 && image.maxval == 255)
        let expected = try DemoTests.photo.applying(Recipe(adjustments: .noir).kernels).samples(layout: .rgb, maxval: 255)
        #expect(maxDifference(image.samples, expected) <= 1)
        #expect(try sandbox.contents() == ["demo-noir.ppm"])
    }

    @Test("--original writes the photo unedited, for apply to start from")
    func original() throws {
        let sandbox = try Sandbox()
        let result = try Tool.run(["demo", "--original"], in: sandbox)
        try #require(result.status == 0, "\(result.stderr)")
        #expect(result.stderr == "rendered \"Lake at sunrise\" (1000×800), wrote demo-original.ppm\n")
        let image = try #require(try sandbox.images("demo-original.ppm").first)
        #expect(image.format == .rawPPM && image.width == 1000 && image.height == 800 && image.maxval == 255)
        #expect(image.samples == (try DemoTests.photo.samples(layout: .rgb, maxval: 255)))
        #expect(try sandbox.contents() == ["demo-original.ppm"])
    }

    @Test("no arguments runs the demo with the vivid preset")
    func defaultCommand() throws {
        let sandbox = try Sandbox()
        let result = try Tool.run([], in: sandbox)
        try #require(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("applied preset vivid (saturation 1.7, contrast 1.2, brightness 0.05, hue 0°)"))
        #expect(try sandbox.contents() == ["demo-vivid.ppm"])
    }

    @Test("--strip: a contact sheet of the photo, every effect, B&W and every preset")
    func strip() throws {
        let sandbox = try Sandbox()
        let result = try Tool.run(["demo", "--strip", "-o", "sheet.ppm"], in: sandbox)
        try #require(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText == """
            row 1: original, sepia, monochrome, tonal, mono
            row 2: noir, chrome, fade, instant, process
            row 3: transfer, B&W, preset vivid, preset noir, preset dream

            """)
        let sheet = try #require(try sandbox.images("sheet.ppm").first)
        #expect(sheet.width == 5 * 250 + 6 * 10 && sheet.height == 3 * 200 + 4 * 10)
    }

    @Test("effects lists all ten effects and three presets")
    func effects() throws {
        let sandbox = try Sandbox()
        let result = try Tool.run(["effects"], in: sandbox)
        #expect(result.status == 0)
        let lines = result.stdoutText.split(separator: "\n")
        for name in Effect.names + Preset.allCases.map(\.rawValue) {
            #expect(lines.contains { $0.hasPrefix("  \(name) ") }, "\(name) missing")
        }
        #expect(Effect.names.count == 10)
        // Every description, and every wrapped continuation, starts in one column.
        let entries = lines.filter { $0.hasPrefix("  ") }
        let columns = Set(entries.map { line in
            let name = line.dropFirst(2).prefix { $0 != " " }
            return 2 + name.count + line.dropFirst(2 + name.count).prefix { $0 == " " }.count
        })
        #expect(columns.count == 1, "\(columns)")
        #expect(entries.allSatisfy { $0.count <= 80 })
    }

    @Test("--help has USAGE, ARGUMENTS and OPTIONS, globally and per command", arguments: [
        ["--help"], ["-h"], ["help"], ["apply", "--help"], ["apply", "-h"], ["help", "apply"], ["demo", "--help"],
        ["effects", "--help"], ["apply", "in.ppm", "--bogus", "--help"],
    ])
    func help(arguments: [String]) throws {
        let sandbox = try Sandbox()
        let result = try Tool.run(arguments, in: sandbox)
        #expect(result.status == 0)
        for section in ["OVERVIEW:", "USAGE:", "ARGUMENTS:", "OPTIONS:"] {
            #expect(result.stdoutText.contains(section), "\(arguments) lacks \(section)")
        }
        #expect(result.stderr.isEmpty)
        #expect(try sandbox.contents().isEmpty)
    }

    @Test("apply --help documents every option")
    func applyHelpOptions() throws {
        let sandbox = try Sandbox()
        let help = try Tool.run(["apply", "--help"], in: sandbox).stdoutText
        for option in ApplyCommand.options {
            #expect(help.contains("--\(option.name)"), "--\(option.name) missing")
        }
        #expect(help.contains("PBM input becomes 255"))
    }

    @Test("--version")
    func version() throws {
        let sandbox = try Sandbox()
        let result = try Tool.run(["--version"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stdoutText == "photokernels 0.1.0\n")
    }
}
