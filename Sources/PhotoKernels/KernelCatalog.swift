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

    /// The entries: every registered family's examples in recipe order (their stages),
    /// then the sliders fused (`adjustments`), a 33³ tetrahedral LUT, a master curve,
    /// the full `recipe`, and `recipe-curve` (the recipe with the curve after its
    /// exposure: what a curve costs in a whole edit). Families that move pixels (orientation) have no colour
    /// stages and are left out.
    public static let entries: [CatalogEntry] = {
        var entries: [CatalogEntry] = []
        for family in KernelFamilies.all where family.kind != .geometric {
            entries += family.examples.map { CatalogEntry($0.name, $0.operation.stages.map(\.kernel)) }
        }
        entries.append(CatalogEntry("adjustments", [Adjustments.dream.kernel]))
        let film = try! ColorCube.sampled(size: 33, interpolation: .tetrahedral) { c in
            SIMD3(c.x * c.x * 0.9 + 0.05 * c.z, (c.y + c.x * c.z) / 2, (c.z * c.z * c.z + c.y) / 2)
        }
        entries.append(CatalogEntry("lut3d-33-tetrahedral", [film]))
        let curve = try! ToneCurve(masterPoints: [SIMD2(0, 0), SIMD2(0.25, 0.18), SIMD2(0.75, 0.85), SIMD2(1, 1)])
        entries.append(CatalogEntry("curve", [curve]))
        entries.append(CatalogEntry("recipe", sampleRecipe.kernels))
        var withCurve = sampleRecipe
        withCurve[ToneCurve.self] = curve
        entries.append(CatalogEntry("recipe-curve", withCurve.kernels))
        return entries
    }()

    /// The entry called `name`, if any.
    public static func entry(named name: String) -> CatalogEntry? {
        entries.first { $0.name == name }
    }
}
