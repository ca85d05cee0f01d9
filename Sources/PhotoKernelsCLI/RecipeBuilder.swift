import CommandLineKit
import Foundation
import PhotoKernels

/// One recipe-changing option of `apply`, kept in command-line order so that
/// `--recipe` and the options around it combine as documented.
enum RecipeSetting: Equatable, Sendable {
    /// A one-number family option (`--saturation`, `--exposure`, `--vibrance`, …),
    /// by option name: the registry's `FamilyOption.set` applies it.
    case family(String, Double)
    /// A family option whose text the family parses (`--curve "0,0 1,1"`).
    case familyText(String, String)
    case preset(Preset)
    /// `--effect NAME` (already checked against `Effect.names`).
    case effect(String)
    case intensity(Double)
    case color(SIMD3<Double>)
    /// `--vignette INTENSITY[,RADIUS]`.
    case vignette(intensity: Double, radius: Double?)
    /// `--vignette-effect X,Y,RADIUS,INTENSITY[,FALLOFF]`, X and Y in pixels from the top-left.
    case vignetteEffect(x: Double, y: Double, radius: Double, intensity: Double, falloff: Double?)
    /// `--recipe FILE`.
    case recipeFile(String)
}

/// Turns the ordered recipe options into the one `Recipe` that is applied (and saved
/// by `--save-recipe`).
///
/// Rules, chosen so that every combination has one obvious meaning:
/// - Options are processed left to right; a later value of the same setting wins.
/// - `--recipe FILE` replaces everything set before it; options after it override
///   the file's values.
/// - `--preset` sets the four sliders, except those given explicitly
///   (`--saturation` etc., anywhere after the last `--recipe`): explicit values beat
///   the preset's, whichever comes first.
/// - `--intensity` and `--color` refine the effect chosen by `--effect` or by the
///   recipe file, in any order. Choosing a different effect drops the intensity and
///   colour that came from the recipe file (they belonged to the old effect).
///   `--intensity`/`--color` with no effect at all, or `--color` with an effect other
///   than monochrome, is a usage error.
struct RecipeBuilder {
    /// The command name for usage errors.
    let command: String

    /// A value and where it came from.
    private struct Sourced<Value> {
        var value: Value
        var fromOption: Bool
    }

    /// Builds the recipe.
    ///
    /// - Throws: exit 64 for inconsistent effect options, 66 for a missing recipe
    ///   file, 65 for an invalid one.
    func build(_ settings: [RecipeSetting]) throws(CLIError) -> Recipe {
        var recipe = Recipe.identity
        var explicitSliders: Set<String> = []
        var effectName: String?
        var intensity: Sourced<Double>?
        var color: Sourced<SIMD3<Double>>?

        for setting in settings {
            switch setting {
            case .family(let name, let v):
                guard let option = Self.option(name), case .number(let set) = option.value else { break }
                set(&recipe, v)
                explicitSliders.insert(name)
            case .familyText(let name, let text):
                guard let option = Self.option(name), case .text(let parse) = option.value else { break }
                do throws(RecipeError) {
                    try parse(&recipe, text)
                } catch {
                    // A file the option names (a LUT) that cannot be read is missing input
                    // (66); one that is not a valid table is bad data (65); anything else
                    // is a usage error naming the option.
                    if case .invalidValue(let field, _, let reason) = error, field == "lut.path" {
                        let message = "--\(name) \(text): \(reason)"
                        throw error.isUnreadableFile ? .noInput(message) : .data(message)
                    }
                    throw .usage(Self.optionMessage(error), command: command)
                }
            case .preset(let preset):
                let p = preset.adjustments
                if !explicitSliders.contains("brightness") { recipe.adjustments.brightness = p.brightness }
                if !explicitSliders.contains("contrast") { recipe.adjustments.contrast = p.contrast }
                if !explicitSliders.contains("saturation") { recipe.adjustments.saturation = p.saturation }
                if !explicitSliders.contains("hue") { recipe.adjustments.hue = p.hue }
            case .effect(let name):
                if name != effectName {
                    if intensity?.fromOption == false { intensity = nil }
                    if color?.fromOption == false { color = nil }
                }
                effectName = name
            case .intensity(let v): intensity = Sourced(value: v, fromOption: true)
            case .color(let c): color = Sourced(value: c, fromOption: true)
            case .vignette(let i, let r):
                recipe.vignette = makeVignette(intensity: i, radius: r ?? 1)
            case .vignetteEffect(let x, let y, let r, let i, let f):
                recipe.vignette = makeVignetteEffect(x: x, y: y, radius: r, intensity: i, falloff: f ?? 0.5)
            case .recipeFile(let path):
                recipe = try Self.load(path)
                explicitSliders = []
                effectName = recipe.effect?.name
                intensity = recipe.effect.map { Sourced(value: $0.intensity, fromOption: false) }
                if case .monochrome(let m)? = recipe.effect {
                    color = Sourced(value: m.color, fromOption: false)
                } else {
                    color = nil
                }
            }
        }

        guard let effectName else {
            if intensity != nil || color != nil {
                throw .usage("--intensity and --color refine an effect; choose one with --effect NAME", command: command)
            }
            recipe.effect = nil
            return try validated(recipe)
        }
        if color != nil && effectName != "monochrome" {
            throw .usage("--color applies only to --effect monochrome (the effect is \(effectName))", command: command)
        }
        recipe.effect = Effect(name: effectName, intensity: intensity?.value, color: color?.value)
        return try validated(recipe)
    }

    /// The registry's option called `name`.
    static func option(_ name: String) -> FamilyOption? {
        KernelFamilies.all.lazy.flatMap(\.options).first { $0.name == name }
    }

    /// A family's parse error as a usage message: "--curve "…": reason".
    static func optionMessage(_ error: RecipeError) -> String {
        if case .invalidValue(let field, let value, let reason) = error { return "\(field) \(value): \(reason)" }
        return error.description
    }

    /// The recipe, once every number is checked finite as a `Float` (`--contrast 1e39`
    /// is rejected as `1e999` is).
    ///
    /// - Throws: exit 64 naming the option.
    func validated(_ recipe: Recipe) throws(CLIError) -> Recipe {
        do throws(RecipeError) {
            try recipe.validate()
        } catch {
            guard case .invalidValue(let field, let value, let reason) = error else { throw .usage(error.description, command: command) }
            throw .usage("\(Self.option(forField: field, in: recipe)) \(value): \(reason)", command: command)
        }
        return recipe
    }

    /// The command-line option that sets the recipe field `field` (`effect.color[0]` is
    /// `--color`, a vignette's numbers `--vignette` or `--vignette-effect`).
    static func option(forField field: String, in recipe: Recipe) -> String {
        if field.hasPrefix("effect.color") { return "--color" }
        if field.hasPrefix("effect.intensity") { return "--intensity" }
        if field.hasPrefix("vignette.") {
            if case .vignette? = recipe.vignette?.form { return "--vignette" }
            return "--vignette-effect"
        }
        if field.hasPrefix("lut.") { return "--lut-intensity" }
        return "--" + (field.split(separator: ".").first.map(String.init) ?? field)
    }

    /// The CIVignette form (centre of the image, radius a fraction of the half-diagonal).
    private func makeVignette(intensity: Double, radius: Double) -> Vignette {
        .vignette(intensity: intensity, radius: radius)
    }

    /// The CIVignetteEffect form, centre in pixels from the top-left.
    private func makeVignetteEffect(x: Double, y: Double, radius: Double, intensity: Double, falloff: Double) -> Vignette {
        .vignetteEffect(center: SIMD2(x, y), radius: radius, intensity: intensity, falloff: falloff)
    }

    /// Reads and validates a recipe file.
    ///
    /// - Throws: exit 66 if it cannot be read, 65 if it is not a valid recipe.
    static func load(_ path: String) throws(CLIError) -> Recipe {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .noInput("cannot read recipe '\(path)': \(OutputFile.reason(error))")
        }
        do {
            // Paths inside the recipe (a LUT's) are relative to the recipe file's folder.
            return try Recipe.decode(from: data, relativeTo: URL(fileURLWithPath: path).deletingLastPathComponent())
        } catch {
            throw .recipe(error, file: path)
        }
    }
}
