import Foundation
import PhotoKernels
@testable import PhotoKernelsCLI
import Testing

/// The parser and the recipe rules, in process (fast, no files).
@Suite("arguments")
struct ArgumentsTests {
    static let parser = ArgumentParser(command: "photokernels apply", options: ApplyCommand.options)

    @Test("spellings: --name value, --name=value, -o value, -ovalue, flags, --")
    func spellings() throws {
        let parsed = try Self.parser.parse(["in.ppm", "--hue", "-30", "--contrast=1.5", "-o", "a.ppm", "-ob.ppm",
                                            "--force", "-", "--", "--weird"])
        #expect(parsed == [
            .positional("in.ppm"), .option("hue", value: "-30"), .option("contrast", value: "1.5"),
            .option("output", value: "a.ppm"), .option("output", value: "b.ppm"), .option("force", value: nil),
            .positional("-"), .positional("--weird"),
        ])
    }

    @Test("parser errors are usage errors naming the command")
    func parserErrors() {
        for arguments in [["--nope"], ["-x"], ["--hue"], ["--force=1"]] {
            #expect(throws: CLIError.self) { try Self.parser.parse(arguments) }
            do {
                _ = try Self.parser.parse(arguments)
            } catch {
                #expect(error.status == .usage)
                #expect(error.helpCommand == "photokernels apply")
            }
        }
    }

    @Test("numbers must be finite", arguments: ["nan", "NaN", "inf", "-inf", "infinity", "1e999", "", "1,5", "0x"])
    func nonFinite(text: String) {
        #expect(throws: CLIError.self) { try ValueParser(command: "x").number(text, for: "hue") }
    }

    @Test("numbers parse with Double", arguments: [("1e-3", 0.001), ("-0.5", -0.5), (" 2 ", 2.0), ("0x10", 16.0)])
    func numbers(text: String, value: Double) throws {
        #expect(try ValueParser(command: "x").number(text, for: "hue") == value)
    }

    @Test("last value wins; the preset yields to explicit sliders")
    func builderOrder() throws {
        let builder = RecipeBuilder(command: "photokernels apply")
        let recipe = try builder.build([.hue(10), .preset(.dream), .hue(20), .contrast(0.9), .preset(.noir)])
        #expect(recipe.adjustments == Adjustments(saturation: 0, contrast: 0.9, brightness: -0.05, hue: 20))
        let effect = try builder.build([.intensity(0.3), .effect("monochrome"), .color(SIMD3(1, 0, 0))])
        #expect(effect.effect == Effect(name: "monochrome", intensity: 0.3, color: SIMD3(1, 0, 0)))
        #expect(throws: CLIError.self) { try builder.build([.intensity(0.3)]) }
        #expect(throws: CLIError.self) { try builder.build([.effect("noir"), .color(SIMD3(1, 0, 0))]) }
    }

    @Test("output targets from names and --format")
    func targets() {
        #expect(OutputTarget(path: "a.PPM", format: nil) == .fixed(.ppm))
        #expect(OutputTarget(path: "dir.d/a.pgm", format: nil) == .fixed(.pgm))
        #expect(OutputTarget(path: "a.pam", format: nil) == .fixed(.pam))
        #expect(OutputTarget(path: "a.pnm", format: nil) == .likeInput)
        #expect(OutputTarget(path: "-", format: nil) == .likeInput)
        #expect(OutputTarget(path: "a.png", format: nil) == nil)
        #expect(OutputTarget(path: "noextension", format: nil) == nil)
        #expect(OutputTarget(path: "a.png", format: .plainPPM) == .fixed(.plainPPM))
    }

    @Test("numbers print as people write them")
    func numberFormat() {
        #expect(formatNumber(0) == "0")
        #expect(formatNumber(-0.05) == "-0.05")
        #expect(formatNumber(1.7) == "1.7")
        #expect(formatNumber(60) == "60")
    }
}
