// Sepia (SPEC §5): the W3C `sepia()` matrix blended with the identity.

extension ColorMatrix {
    /// `Ms`, the W3C Filter Effects `sepia(1)` matrix (rows top to bottom):
    /// ```
    /// | 0.393  0.769  0.189 |
    /// | 0.349  0.686  0.168 |
    /// | 0.272  0.534  0.131 |
    /// ```
    /// Rows sum to 1.351, 1.203 and 0.937, so white becomes (1.351, 1.203, 0.937): the
    /// matrix brightens and warms; nothing clamps until encoding.
    public static let sepiaTone = ColorMatrix(SIMD3(0.393, 0.769, 0.189),
                                              SIMD3(0.349, 0.686, 0.168),
                                              SIMD3(0.272, 0.534, 0.131))

    /// Sepia of strength `intensity`: `(1 − a)·I + a·Ms` with `a = clamp(intensity, 0, 1)`
    /// (SPEC §5), no offset.
    ///
    /// - Parameter intensity: unitless; identity 0, full sepia 1 (Core Image's
    ///   CISepiaTone default). Values outside [0, 1] are clamped, as CSS's `sepia()`
    ///   clamps its amount.
    /// - Returns: the matrix in `Double`; `sepia(intensity: 0)` is `.identity` exactly.
    /// - Complexity: O(1).
    /// - Source: W3C Filter Effects 1, `sepia` [doc].
    public static func sepia(intensity: Double) -> ColorMatrix {
        let a = Sepia.clampedAmount(intensity)
        return blend(1 - a, .identity, a, .sepiaTone)
    }
}

/// Sepia tone (CISepiaTone-like, SPEC §5): `C' = ((1 − a)·I + a·Ms)·C` on (R, G, B),
/// alpha unchanged, never clamped.
///
/// - `intensity`: unitless, clamped to [0, 1] when applied; identity 0 (the kernel
///   then returns without touching a pixel), full effect 1, the default.
/// - Every output channel reads the *original* R, G and B of its pixel (no channel
///   sees another's new value), so in place equals out of place.
/// - Not grey-preserving: a grey `v` becomes `(1.351, 1.203, 0.937)·v` at full
///   intensity — sepia tints and brightens.
/// - Source: W3C Filter Effects 1 `sepia()` matrix [doc]; CISepiaTone's own curve is
///   undocumented, this is the CSS one.
///
/// Schedules: both run the one matrix `(1 − a)·I + a·Ms`, blended in `Double` and
/// rounded to `Float` once (SPEC §0's rule for composite matrices), through
/// `ColorMatrixKernel`: `.scalar` its per-channel reference
/// `R' = m00·R + m01·G + m02·B`, `.simd4` its vector schedule, so the two agree to
/// the bit. (Blending per channel in `Float`, `(1 − a)·R + a·(0.393 R + …)`, is the
/// same formula rounded differently: it puts up to 0.13 % of 16-bit samples 1 LSB
/// away from the matrix, so the two would agree only within SPEC §8's tie window.)
///
/// Complexity: O(n) per row of n pixels (a 3×3 product per pixel); no allocation.
public struct Sepia: AffineStage {
    /// The strength, clamped to [0, 1] when applied; identity 0, default 1.
    public var intensity: Double {
        didSet { kernel = Sepia.kernel(intensity) }
    }
    /// `"sepia"`.
    public var name: String { "sepia" }
    // The `.simd4` schedule, built once per intensity rather than once per row.
    private var kernel: ColorMatrixKernel

    /// A sepia kernel; the default `intensity` 1 is full sepia.
    public init(intensity: Double = 1) {
        self.intensity = intensity
        kernel = Sepia.kernel(intensity)
    }

    /// `ColorMatrixKernel(.sepia(intensity:))`, named "sepia".
    private static func kernel(_ intensity: Double) -> ColorMatrixKernel {
        ColorMatrixKernel(.sepia(intensity: intensity), name: "sepia")
    }

    /// `clamp(intensity, 0, 1)`.
    static func clampedAmount(_ intensity: Double) -> Double { min(max(intensity, 0), 1) }

    /// Whether the kernel changes nothing (intensity ≤ 0 after clamping).
    public var isIdentity: Bool { Sepia.clampedAmount(intensity) == 0 }

    /// The transform `(1 − a)·I + a·Ms` in `Double`.
    public var matrix: ColorMatrix { .sepia(intensity: intensity) }

    /// Applies sepia in place to one row of straight-alpha RGBA pixels (A kept);
    /// returns at once when the clamped intensity is 0. The row's position is not used.
    ///
    /// - Complexity: O(row.count); no allocation.
    public func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant) {
        guard !isIdentity else { return }
        switch variant {
        case .scalar: applyScalar(row)
        case .simd4: kernel.apply(row, at: location, variant: .simd4)
        }
    }

    /// The reference: the blended matrix's scalar reference, one row at a time.
    func applyScalar(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>) {
        kernel.applyScalar(row)
    }
}
