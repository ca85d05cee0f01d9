// Interpolating recipes, for animated transitions (SwiftUI animates a slider's value
// over its duration; an app animating between two looks needs every frame in between).

extension Recipe {
    /// The recipe a fraction `t` of the way from `self` to `other`, continuous in `t`.
    ///
    /// Family by family (each family's `interpolated(to:at:)`): numbers linearly, the
    /// hue along the shorter arc, effects and vignettes of the same kind parameter by
    /// parameter. An operation only one recipe has fades from or to its `neutral`
    /// (strength 0). Two operations that cannot be blended directly — sepia and noir, a
    /// CIVignette and a CIVignetteEffect — cross through strength zero: the first fades
    /// out over `t` in [0, ½] and the second fades in over [½, 1], so at `t = ½` that
    /// family is the identity and nothing jumps.
    ///
    /// - Parameter t: 0 gives `self`, 1 gives `other`; values outside [0, 1] (and NaN,
    ///   taken as 0) are clamped.
    /// - Complexity: O(families).
    public func interpolated(to other: Recipe, at t: Double) -> Recipe {
        let t = t.isNaN ? 0 : min(max(t, 0), 1)
        if t == 0 { return self }
        if t == 1 { return other }
        var result = Recipe()
        for family in KernelFamilies.all {
            let key = family.key
            switch (operations[key], other.operations[key]) {
            case (nil, nil):
                continue
            case (let a?, nil):
                result.operations[key] = fade(a, neutralOf(a), t)
            case (nil, let b?):
                result.operations[key] = fade(neutralOf(b), b, t)
            case (let a?, let b?):
                result.operations[key] = blend(a, b, t)
                    ?? (t < 0.5 ? fade(a, neutralOf(a), 2 * t) : fade(neutralOf(b), b, 2 * t - 1))
            }
        }
        return result
    }
}

/// `a.neutral`, with the existential opened.
private func neutralOf<Operation: RecipeOperation>(_ a: Operation) -> any RecipeOperation { a.neutral }

/// `a.interpolated(to: b, at: t)` when `b` is of `a`'s type.
private func blend<Operation: RecipeOperation>(_ a: Operation, _ b: any RecipeOperation, _ t: Double) -> (any RecipeOperation)? {
    guard let b = b as? Operation else { return nil }
    return a.interpolated(to: b, at: t)
}

/// The same, for a blend that always exists (an operation and its own neutral).
private func fade<Operation: RecipeOperation>(_ a: Operation, _ b: any RecipeOperation, _ t: Double) -> any RecipeOperation {
    guard let b = b as? Operation else { return a }
    return a.interpolated(to: b, at: t) ?? (t < 0.5 ? a : b)
}
