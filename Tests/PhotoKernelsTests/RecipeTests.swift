import Foundation
import Testing
@testable import PhotoKernels

@Suite("Recipe: SPEC §6 order, fusing, JSON (PHAdjustmentData-style)")
struct RecipeTests {
    /// Recipes that exercise every stage, alone and together.
    static let recipes: [Recipe] = [
        KernelCatalog.sampleRecipe,
        Recipe(exposure: -1, adjustments: .noir, effect: .look(.fade, intensity: 1)),
        Recipe(adjustments: .dream, effect: Effect(name: "monochrome", intensity: 0.7, color: SIMD3(0.2, 0.5, 0.9)),
               vignette: .vignetteEffect(center: SIMD2(3, 2), radius: 4, intensity: 0.6, falloff: 0.3)),
        Recipe(effect: .look(.instant, intensity: 0.5)),
        Recipe(exposure: 2),
    ]

    @Test("the fused plan equals the unfused step-by-step reference on Float images")
    func fusedMatchesSequential() throws {
        for (n, recipe) in Self.recipes.enumerated() {
            for (w, h) in [(1, 1), (9, 5), (33, 3), (40, 31)] {
                let input = try randomImage(width: w, height: h, seed: UInt64(n), nanEvery: 11)
                let plan = try EditPlan(stages: recipe.stages).prepared(width: w, height: h, threads: 1)
                var reference = input, fused = input
                try plan.run(&reference, variant: .scalar)
                try plan.run(&fused, variant: .simd4)
                expectClose(fused, reference, input: input, "recipe \(n)")
                expectClose(run(recipe.kernels, on: input, .simd4), reference, input: input, "recipe \(n) kernels")
            }
        }
    }

    @Test("stages run in SPEC §6 order: exposure before the sliders, the effect after them, the vignette last")
    func order() throws {
        // Brightness then sepia differs from sepia then brightness; the recipe must do the former.
        let recipe = Recipe(exposure: 1, adjustments: Adjustments(brightness: 0.1), effect: .sepia(intensity: 1),
                            vignette: .vignette(intensity: 0.5, radius: 1))
        let input = try randomPhoto(width: 5, height: 3, seed: 1)
        let expected = run([Exposure(ev: 1), Brightness(0.1), Sepia(intensity: 1), Vignette.vignette(intensity: 0.5, radius: 1)],
                           on: input, .scalar)
        expectClose(run(recipe.kernels, on: input, .simd4), expected, input: input, "SPEC order")
        let wrongOrder = run([Sepia(intensity: 1), Brightness(0.1), Exposure(ev: 1), Vignette.vignette(intensity: 0.5, radius: 1)],
                             on: input, .scalar)
        #expect(zip(expected.pixels, wrongOrder.pixels).contains { abs($0.x - $1.x) > 1e-3 }, "order must matter here")
    }

    @Test("the identity recipe has no kernels and returns the input bytes at 8 and 16 bits")
    func identityReturnsInput() throws {
        #expect(Recipe.identity.kernels.isEmpty && Recipe.identity.isIdentity)
        let zeroIntensities = Recipe(effect: .sepia(intensity: 0), vignette: .vignette(intensity: 0, radius: 1))
        #expect(zeroIntensities.kernels.isEmpty && zeroIntensities.isIdentity)
        for maxval in [255, 65535] {
            var rng = SeededGenerator(seed: 99)
            let samples = (0..<(23 * 7 * 4)).map { _ in UInt16.random(in: 0...UInt16(maxval), using: &rng) }
            for variant in KernelVariant.allCases {
                let out = try SamplePipeline.run(zeroIntensities.kernels, width: 23, height: 7, samples: samples, layout: .rgba,
                                                 maxval: maxval, variant: variant, threads: 2)
                #expect(out == samples, "maxval \(maxval) \(variant)")
            }
        }
    }

    @Test("the one-pass sample pipeline equals decode → kernels → encode, every layout, 8 and 16 bits")
    func pipelineMatchesImagePath() throws {
        let recipe = KernelCatalog.sampleRecipe
        for layout in SampleLayout.allCases {
            for maxval in [255, 1023, 65535] {
                var rng = SeededGenerator(seed: UInt64(maxval + layout.rawValue))
                let (w, h) = (19, 6)
                let samples = (0..<(w * h * layout.channelCount)).map { _ in UInt16.random(in: 0...UInt16(maxval), using: &rng) }
                let image = try FloatImage(width: w, height: h, layout: layout, maxval: maxval, samples: samples)
                // The integer plan reads exposure (the first stage) from a table of the
                // scalar formula, then runs the other stages in SIMD4; the Float image path
                // runs them all in SIMD4. The two may differ only by 1 LSB on near-ties
                // (SPEC §8, which `FamilyLawsTests` checks against the Double evaluation).
                let stages = recipe.kernels
                #expect(stages.first is Exposure)
                let expected = try run(Array(stages.dropFirst()), on: run([stages[0]], on: image, .scalar), .simd4)
                    .samples(layout: layout, maxval: maxval)
                for threads in [1, 2, 5] {
                    let out = try SamplePipeline.run(stages, width: w, height: h, samples: samples, layout: layout,
                                                     maxval: maxval, variant: .simd4, threads: threads)
                    let d = sampleDifferences(out, expected)
                    #expect(d.largest <= 1 && d.count * 100 <= out.count, "\(layout) maxval \(maxval) threads \(threads): \(d)")
                }
                if maxval == 255 {
                    // The 8-bit entry points give the same samples.
                    let bytes = samples.map { UInt8($0) }
                    var out8 = [UInt8](repeating: 0, count: bytes.count)
                    try bytes.withUnsafeBufferPointer { input in
                        try out8.withUnsafeMutableBufferPointer { output in
                            try SamplePipeline.run(recipe.kernels, width: w, height: h, input: input, inputLayout: layout,
                                                   inputMaxval: 255, output: output, outputLayout: layout, outputMaxval: 255)
                        }
                    }
                    let d8 = sampleDifferences(out8.map(UInt16.init), expected)
                    #expect(d8.largest <= 1 && d8.count * 100 <= out8.count, "8-bit \(layout): \(d8)")
                }
            }
        }
    }

    @Test("JSON round trip keeps every field; the document has the format identifier and version")
    func jsonRoundTrip() throws {
        for recipe in Self.recipes {
            let data = try recipe.encodedJSON()
            let text = String(decoding: data, as: UTF8.self)
            #expect(text.contains("\"formatIdentifier\" : \"org.photokernels.recipe\""))
            #expect(text.contains("\"formatVersion\" : \"1.1\""))
            #expect(try Recipe.decode(from: data) == recipe)
        }
    }

    @Test("missing fields decode as identity; a newer minor version is read")
    func missingFieldsAreIdentity() throws {
        let json = #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.7", "contrast": 1.5}"#
        let recipe = try Recipe.decode(from: Data(json.utf8))
        #expect(recipe == Recipe(adjustments: Adjustments(contrast: 1.5)))
        let null = #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.0", "saturation": null}"#
        #expect(try Recipe.decode(from: Data(null.utf8)) == .identity)
        let effect = #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.0", "effect": {"name": "monochrome"}}"#
        #expect(try Recipe.decode(from: Data(effect.utf8)).effect == .monochrome(Monochrome()))
    }

    @Test("invalid recipes are rejected with a clear error", arguments: [
        (#"{"formatIdentifier": "com.example.other", "formatVersion": "1.0"}"#,
         RecipeError.unknownFormat(identifier: "com.example.other")),
        (#"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "2.0"}"#,
         RecipeError.unsupportedVersion(found: "2.0", supported: "1.1")),
        (#"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "10.3"}"#,
         RecipeError.unsupportedVersion(found: "10.3", supported: "1.1")),
        (#"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "99999999999999999999.0"}"#,
         RecipeError.unsupportedVersion(found: "99999999999999999999.0", supported: "1.1")),
        (#"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.0", "hue": "ninety"}"#,
         RecipeError.malformed(field: "hue", reason: "expected a number")),
        (#"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.0", "effect": {"intensity": 1}}"#,
         RecipeError.malformed(field: "effect.name", reason: "missing")),
        (#"{"formatVersion": "1.0"}"#, RecipeError.malformed(field: "formatIdentifier", reason:
            #"missing (a recipe starts {"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.1", …})"#)),
    ])
    func rejects(json: String, error: RecipeError) {
        #expect(throws: error) { try Recipe.decode(from: Data(json.utf8)) }
    }

    @Test("a formatVersion that is not \"major.minor\" with major 1 or later is an invalid value, not a newer version",
          arguments: ["1", "1.x", "1.2.3", "0.9", "-1.0", "abc", "", " 1.0", "1.", ".1", "１.0"])
    func rejectsMalformedVersions(_ version: String) {
        let json = #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "\#(version)"}"#
        #expect(throws: RecipeError.invalidValue(field: "formatVersion", value: version,
                                                 reason: #"must be "major.minor" with major 1 or later, such as "1.1""#)) {
            try Recipe.decode(from: Data(json.utf8))
        }
        #expect(throws: Never.self) {
            try Recipe.decode(from: Data(#"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.25"}"#.utf8))
        }
    }

    @Test("a misspelt key inside an operation's object is an error naming it and the closest key, not a default taken silently",
          arguments: [
            (#""effect": {"name": "sepia", "intensty": 0.2}"#, "effect.intensty", "intensity"),
            (#""vignette": {"form": "vignette", "intensity": 0.8, "radiuss": 0.3}"#, "vignette.radiuss", "radius"),
            (#""vignette": {"form": "effect", "centre": [10, 10], "radius": 50}"#, "vignette.centre", "center"),
            (#""effect": {"name": "monochrome", "colour": [1, 0, 0]}"#, "effect.colour", "color"),
            (#""curve": {"master": [[0, 0], [1, 1]], "gren": [[0, 0.2], [1, 1]]}"#, "curve.gren", "green"),
          ])
    func rejectsMisspeltNestedKeys(_ body: String, _ field: String, _ closest: String) {
        let json = #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.1", "# + body + "}"
        do {
            _ = try Recipe.decode(from: Data(json.utf8))
            Issue.record("\(body) was accepted")
        } catch {
            #expect(error.description.hasPrefix("recipe: \(field): unknown key; did you mean \"\(closest)\"?"), "\(error)")
        }
    }

    @Test("what a recipe file puts in a message has its control characters escaped: keys, nested keys, the identifier, the version")
    func escapesFileText() {
        let head = #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.1", "#
        let cases: [(String, String)] = [
            (head + #""\u001b[2J": 1}"#, #"recipe: unknown key "\u{1b}[2J""#),
            (head + #""sat\u202eration": 1}"#, #"recipe: unknown key "sat\u{202e}ration""#),
            (head + #""effect": {"name": "sepia", "\u0007\r": 1}}"#, #"recipe: effect.\u{7}\u{d}: unknown key"#),
            (#"{"formatIdentifier": "x\u001b]0;t\u0007\"", "formatVersion": "1.0"}"#, #"recipe: formatIdentifier "x\u{1b}]0;t\u{7}\"""#),
            (#"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.\u009b"}"#, #"recipe: formatVersion = 1.\u{9b} is invalid"#),
        ]
        for (json, prefix) in cases {
            do {
                _ = try Recipe.decode(from: Data(json.utf8))
                Issue.record("\(json) was accepted")
            } catch {
                #expect(error.description.hasPrefix(prefix), "\(error.description.debugDescription)")
                #expect(!error.description.unicodeScalars.contains {
                    $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.properties.generalCategory == .format
                })
            }
        }
    }

    @Test("an orientation that is not a whole number 1…8 names the field")
    func rejectsFractionalOrientation() {
        for (value, tag) in [("2.5", "2.5"), ("9", "9"), ("0", "0")] {
            let json = #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.1", "orientation": "# + value + "}"
            do {
                _ = try Recipe.decode(from: Data(json.utf8))
                Issue.record("orientation \(value) was accepted")
            } catch {
                #expect(error.description == "recipe: orientation: tag \(tag) is not one of 1…8", "\(error)")
            }
        }
    }

    @Test("non-finite numbers, unknown effects and bad colours are rejected")
    func rejectsBadValues() {
        let cases = [
            #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.0", "exposure": 1e999}"#,
            #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.0", "effect": {"name": "vintage"}}"#,
            #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "1.0", "effect": {"name": "monochrome", "color": [1, 2]}}"#,
            #"{"formatIdentifier": "org.photokernels.recipe", "formatVersion": "x"}"#,
            #"not json"#,
        ]
        for json in cases {
            #expect(throws: RecipeError.self, "\(json)") { try Recipe.decode(from: Data(json.utf8)) }
        }
        // JSONDecoder alone says only "not valid JSON"; the message names the number.
        do {
            _ = try Recipe.decode(from: Data(cases[0].utf8))
            Issue.record("1e999 decoded")
        } catch {
            #expect(error.description.contains("1e999"), "\(error.description)")
        }
        // A value that JSON cannot carry but the API can: validate() names it.
        #expect(throws: RecipeError.invalidValue(field: "hue", value: "nan", reason: "must be a finite number (at most 3.4e38 in magnitude)")) {
            try Recipe(adjustments: Adjustments(hue: .nan)).validate()
        }
    }

    @Test("every catalog entry runs and its SIMD4 variant matches the scalar reference")
    func catalog() throws {
        // Every registered family's examples are in the catalog, under their own names.
        let examples = KernelFamilies.all.filter { $0.kind != .geometric }.flatMap { $0.examples.map(\.name) }
        #expect(KernelCatalog.entries.map(\.name) == examples + ["adjustments", "lut3d-33-tetrahedral", "curve", "recipe", "recipe-curve"])
        #expect(Set(KernelCatalog.entries.map(\.name)).count == KernelCatalog.entries.count)
        let input = try randomImage(width: 21, height: 5, seed: 4, nanEvery: 13)
        for entry in KernelCatalog.entries {
            expectClose(run(entry.kernels, on: input, .simd4), run(entry.kernels, on: input, .scalar),
                        input: input, entry.name)
        }
    }

    @Test("interpolation: ends exact, sliders linear, hue along the shorter arc, different effects cross through identity")
    func interpolation() {
        let a = Recipe(exposure: 0.5, adjustments: Adjustments(saturation: 1.5, hue: 170), effect: .sepia(intensity: 0.8))
        let b = Recipe(exposure: -0.5, adjustments: Adjustments(saturation: 0.5, hue: -170), effect: .look(.noir, intensity: 1),
                       vignette: .vignette(intensity: 1, radius: 1))
        #expect(a.interpolated(to: b, at: 0) == a && a.interpolated(to: b, at: 1) == b)
        let half = a.interpolated(to: b, at: 0.5)
        #expect(half.exposure == 0 && half.adjustments.saturation == 1)
        #expect(abs(abs(half.adjustments.hue) - 180) < 1e-12, "hue \(half.adjustments.hue)")
        #expect(half.effect?.isIdentity == true, "sepia → noir is at strength 0 halfway: \(String(describing: half.effect))")
        #expect(half.vignette == .vignette(intensity: 0.5, radius: 1))
        #expect(a.interpolated(to: b, at: 0.25).effect == .sepia(intensity: 0.4))
        #expect(a.interpolated(to: b, at: 0.75).effect == .look(.noir, intensity: 0.5))
        #expect(Recipe().interpolated(to: b, at: 2) == b && a.interpolated(to: b, at: .nan) == a)
    }

    @Test("interpolation has no jump: 200 frames of an animated transition change each sample by a few levels at most")
    func interpolationIsContinuous() throws {
        let a = Recipe(adjustments: .vivid, effect: .monochrome(Monochrome()), vignette: .vignetteEffect(intensity: 1))
        var b = Recipe(preset: .dream)
        b.effect = .look(.chrome, intensity: 1)
        b.vignette = .vignette(intensity: 0.8, radius: 1.2)
        b[ToneCurve.self] = try ToneCurve(masterPoints: [SIMD2(0, 0.1), SIMD2(1, 0.9)])
        var rng = SeededGenerator(seed: 12)
        let samples = (0..<(16 * 16 * 4)).map { _ in UInt16.random(in: 0...255, using: &rng) }
        var previous: [UInt16]?
        var largest = 0
        for k in 0...200 {
            let r = a.interpolated(to: b, at: Double(k) / 200)
            let out = try SamplePipeline.run(r.kernels, width: 16, height: 16, samples: samples, layout: .rgba, maxval: 255)
            if let previous { largest = max(largest, zip(out, previous).map { abs(Int($0) - Int($1)) }.max()!) }
            previous = out
        }
        #expect(largest <= 6, "largest change between frames: \(largest) levels")
    }
}
