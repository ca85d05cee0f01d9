// The eight Core Image photo-effect looks (CIPhotoEffectTonal, …Mono, …Noir, …Chrome,
// …Fade, …Instant, …Process, …Transfer), approximated by short chains of the affine
// kernels of this library (SPEC §5). Apple ships the originals as undocumented colour
// lookup tables; these chains are this project's own documented stand-ins.

/// One of the eight photo-effect looks of a filter strip, each an affine chain of
/// saturation, contrast, brightness, `gain` and `lift` (SPEC §5, [own]).
///
/// | look | chain | character |
/// |---|---|---|
/// | tonal | gray | neutral black and white |
/// | mono | gray → contrast 0.85 | soft black and white |
/// | noir | gray → contrast 1.5 | high-contrast black and white |
/// | chrome | saturation 1.3 → contrast 1.15 | vivid, punchy colour |
/// | fade | saturation 0.6 → lift(0.08, 0.9) | muted colour, lifted blacks |
/// | instant | saturation 0.75 → gain(1.05, 1.0, 0.9) → lift(0.04, 0.96) | warm, faded print |
/// | process | contrast 0.9 → gain(0.92, 1.0, 1.1) → lift(0.03, 0.97) | cool, flat cross-process |
/// | transfer | gain(1.08, 1.02, 0.9) → brightness 0.03 → contrast 1.05 | warm, bright vintage |
///
/// with `gray` = saturation 0, `gain(r, g, b)`: `C' = (r·R, g·G, b·B)`, and
/// `lift(l, k)`: `C' = l + k·C`. Every step is affine and nothing clamps between
/// steps, so each look is one `ColorMatrix` (`matrix`), composed with
/// `ColorMatrix.then` in `Double` and rounded to `Float` once (`kernel`).
/// `sequentialKernels` runs the steps one by one, as the reference the fused form is
/// tested against (agreement within 1e-5, SPEC §8).
///
/// `matrix(intensity:)` blends a look with the identity, `(1 − i)·I + i·M` and
/// offset `i·t` — this library's own extension [own] so a look has a strength like
/// sepia and monochrome; Core Image's looks have none.
///
/// Codable as its raw value, e.g. `"noir"`.
public enum PhotoEffect: String, Sendable, CaseIterable, Codable {
    /// Neutral black and white: `gray`.
    case tonal
    /// Soft black and white: `gray → contrast 0.85`.
    case mono
    /// High-contrast black and white: `gray → contrast 1.5`.
    case noir
    /// Vivid colour: `saturation 1.3 → contrast 1.15`.
    case chrome
    /// Muted colour with lifted blacks: `saturation 0.6 → lift(0.08, 0.9)`.
    case fade
    /// Warm faded print: `saturation 0.75 → gain(1.05, 1.0, 0.9) → lift(0.04, 0.96)`.
    case instant
    /// Cool, flat cross-process: `contrast 0.9 → gain(0.92, 1.0, 1.1) → lift(0.03, 0.97)`.
    case process
    /// Warm, bright vintage: `gain(1.08, 1.02, 0.9) → brightness 0.03 → contrast 1.05`.
    case transfer

    /// One affine step of a look.
    enum Step: Sendable, Equatable, CustomStringConvertible {
        /// Saturation 0: `C' = Y`.
        case gray
        case saturation(Double)
        case contrast(Double)
        case brightness(Double)
        case gain(Double, Double, Double)
        case lift(Double, Double)

        /// The step as a transform in `Double`.
        var matrix: ColorMatrix {
            switch self {
            case .gray: .saturation(0)
            case .saturation(let s): .saturation(s)
            case .contrast(let c): .contrast(c)
            case .brightness(let b): .brightness(b)
            case .gain(let r, let g, let b): .gain(r, g, b)
            case .lift(let l, let k): .lift(l, k)
            }
        }

        /// The step as its own kernel (the unfused reference).
        var kernel: any PixelKernel {
            switch self {
            case .gray: Saturation(0)
            case .saturation(let s): Saturation(s)
            case .contrast(let c): Contrast(c)
            case .brightness(let b): Brightness(b)
            case .gain: ColorMatrixKernel(matrix, name: "gain")
            case .lift: ColorMatrixKernel(matrix, name: "lift")
            }
        }

        /// As SPEC §5 writes it, e.g. `"gain(1.05, 1.0, 0.9)"`.
        var description: String {
            switch self {
            case .gray: "gray"
            case .saturation(let s): "saturation \(s)"
            case .contrast(let c): "contrast \(c)"
            case .brightness(let b): "brightness \(b)"
            case .gain(let r, let g, let b): "gain(\(r), \(g), \(b))"
            case .lift(let l, let k): "lift(\(l), \(k))"
            }
        }
    }

    /// The look's steps in order (SPEC §5's table).
    var chain: [Step] {
        switch self {
        case .tonal: [.gray]
        case .mono: [.gray, .contrast(0.85)]
        case .noir: [.gray, .contrast(1.5)]
        case .chrome: [.saturation(1.3), .contrast(1.15)]
        case .fade: [.saturation(0.6), .lift(0.08, 0.9)]
        case .instant: [.saturation(0.75), .gain(1.05, 1.0, 0.9), .lift(0.04, 0.96)]
        case .process: [.contrast(0.9), .gain(0.92, 1.0, 1.1), .lift(0.03, 0.97)]
        case .transfer: [.gain(1.08, 1.02, 0.9), .brightness(0.03), .contrast(1.05)]
        }
    }

    /// The chain as readable steps, e.g. `["gray", "contrast 1.5"]` for noir.
    public var steps: [String] { chain.map(\.description) }

    /// One line for `photokernels effects` and the docs, e.g.
    /// `"gray → contrast 1.5: high-contrast black and white"`.
    public var summary: String {
        let character = switch self {
        case .tonal: "neutral black and white"
        case .mono: "soft, low-contrast black and white"
        case .noir: "high-contrast black and white"
        case .chrome: "vivid colour with deeper contrast"
        case .fade: "muted colour with lifted blacks"
        case .instant: "warm, slightly faded print"
        case .process: "cool, flat cross-processed colour"
        case .transfer: "warm, bright vintage transfer"
        }
        return steps.joined(separator: " → ") + ": " + character
    }

    /// The fused transform: the chain composed with `ColorMatrix.then` in `Double`.
    ///
    /// - Complexity: O(steps), a few dozen `Double` operations.
    public var matrix: ColorMatrix {
        chain.reduce(ColorMatrix.identity) { $0.then($1.matrix) }
    }

    /// The look at strength `intensity`: `(1 − i)·I + i·M` with offset `i·t`
    /// ([own] extension). `i = 0` is `.identity` exactly, `i = 1` is `matrix`
    /// exactly; values outside [0, 1] extrapolate (not clamped).
    public func matrix(intensity i: Double) -> ColorMatrix {
        let m = matrix
        var blended = ColorMatrix.blend(1 - i, .identity, i, m)
        blended.offset = i * m.offset
        return blended
    }

    /// The fused one-matrix kernel, named after the look.
    public var kernel: ColorMatrixKernel { ColorMatrixKernel(matrix, name: rawValue) }

    /// The steps as separate kernels, one pass each: the reference for `kernel`.
    /// `gray`, saturation, contrast and brightness are the SPEC §2 kernels; `gain` and
    /// `lift` are single-step `ColorMatrixKernel`s.
    public var sequentialKernels: [any PixelKernel] { chain.map(\.kernel) }

    /// Whether the look maps every grey `(v, v, v)` to a grey (tonal, mono, noir:
    /// the chains that start with `gray`).
    public var isMonochrome: Bool { chain.first == .gray }
}
