/// One named operation with representative parameters, as the tests, the benchmark
/// and the CLI enumerate them.
public struct CatalogEntry: Sendable {
    /// A stable name, e.g. `"saturation"`, `"look.noir"`, `"recipe"`.
    public let name: String
    /// The kernels that make up the operation, applied in order.
    public let kernels: [any PixelKernel]

    /// An entry named `name` running `kernels` in order.
    public init(_ name: String, _ kernels: [any PixelKernel]) {
        self.name = name
        self.kernels = kernels
    }
}

/// Every kernel of the library once, with the parameters of a typical edit — the
/// single list behind "every kernel × every variant" in the tests and the benchmark,
/// so nothing is kept by hand in three places.
public enum KernelCatalog {
    /// A full edit: +0.3 EV, the vivid sliders, sepia at 0.3, and a vignette.
    public static let sampleRecipe = Recipe(
        exposure: 0.3, adjustments: .vivid, effect: .sepia(intensity: 0.3),
        vignette: .vignette(intensity: 0.8, radius: 1.2))

    /// The entries, in the order of SPEC §2–§6.
    public static let entries: [CatalogEntry] = {
        let sliders = Adjustments.vivid
        var entries: [CatalogEntry] = [
            CatalogEntry("saturation", [Saturation(Float(sliders.saturation))]),
            CatalogEntry("contrast", [Contrast(Float(sliders.contrast))]),
            CatalogEntry("brightness", [Brightness(Float(sliders.brightness))]),
            CatalogEntry("hue", [HueRotation(degrees: 60)]),
            CatalogEntry("adjustments", [Adjustments.dream.kernel]),
            CatalogEntry("exposure", [Exposure(ev: 0.7)]),
            CatalogEntry("vignette", [Vignette.vignette(intensity: 1, radius: 1)]),
            CatalogEntry("vignetteEffect", [Vignette.vignetteEffect(intensity: 1, falloff: 0.5)]),
            CatalogEntry("sepia", [Sepia(intensity: 1)]),
            CatalogEntry("monochrome", [Monochrome()]),
        ]
        entries += PhotoEffect.allCases.map { CatalogEntry("look.\($0.rawValue)", [$0.kernel]) }
        entries.append(CatalogEntry("recipe", sampleRecipe.kernels))
        return entries
    }()

    /// The entry called `name`, if any.
    public static func entry(named name: String) -> CatalogEntry? {
        entries.first { $0.name == name }
    }
}
