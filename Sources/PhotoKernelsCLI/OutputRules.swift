import Netpbm
import PhotoKernels

/// The output rules of `apply`, in one place: for each image header read, the layouts
/// the edit plan runs between and the header written.
///
/// - **Maxval**: `--maxval` if given; otherwise the input's, except that a bitmap
///   (PBM, or PAM `BLACKANDWHITE`, maxval 1) becomes maxval 255, since its pixels now
///   hold grey levels.
/// - **Grey or colour**: PGM always stores grey (colour is reduced to Rec. 709 luma by
///   the library's `SampleLayout.gray` encoding), PPM always colour. Where the format
///   may hold either (PAM, or "the input's kind" for `.pnm` and `-`), a grey input
///   stays grey when the recipe keeps grey pixels grey (``keepsGrey(_:)``), and is
///   written in colour when the recipe makes colour (sepia on a PGM makes a PPM). The
///   choice is made from the recipe, before any pixel is read, because the output's
///   header goes out before its last row is computed.
/// - **Alpha**: kept when the format is PAM; PGM and PPM cannot store it, so it is
///   dropped (`--verbose` says so).
///
/// A pure function of the header, so every band, frame and file of a run follows the
/// same rules, and tests can check them without files.
struct OutputRules: Sendable {
    /// What the output's name (or `--format`) asks for.
    var target: OutputTarget
    /// `--maxval`, if given.
    var maxval: Int?
    /// Whether the recipe keeps grey pixels grey: ``keepsGrey(_:)`` of its stages.
    var recipeKeepsGrey: Bool

    /// How one image is read, computed and written.
    struct Frame: Sendable, Equatable {
        /// How the plan reads the input samples.
        var inputLayout: SampleLayout
        /// How the plan writes the output samples.
        var outputLayout: SampleLayout
        /// The header to write (format, size, depth, maxval, tuple type).
        var output: NetpbmHeader
        /// Whether the input had alpha the output format cannot store.
        var droppedAlpha: Bool
    }

    /// The rules for the image whose header is `header`.
    ///
    /// - Throws: exit 65 for a PAM whose planes the tool cannot interpret, naming
    ///   `source`, the frame and the byte offset of its header (`offset`).
    func frame(for header: NetpbmHeader, frame index: Int, offset: Int, source: String) throws(CLIError) -> Frame {
        let inputLayout = try SampleLayout(of: header, frame: index, offset: offset, source: source)
        let isBitmap = header.tupleType == .blackAndWhite || header.tupleType == .blackAndWhiteAlpha
        let outputMaxval = maxval ?? (isBitmap ? 255 : header.maxval)

        var format: OutputFormat
        let adaptive: Bool  // may the format hold grey or colour, as the result needs?
        switch target {
        case .fixed(let fixed):
            format = fixed
            adaptive = fixed.colorModel == .either
        case .likeInput:
            format = OutputFormat(like: header.format)
            adaptive = true
        }
        let alpha = inputLayout.hasAlpha && format.carriesAlpha
        let layout: SampleLayout
        if inputLayout.isGray && adaptive {
            layout = SampleLayout(gray: recipeKeepsGrey, alpha: alpha)
            if !recipeKeepsGrey { format = format.colorVariant }
        } else {
            switch format.colorModel {
            case .gray: layout = .gray
            case .color: layout = .rgb
            case .either: layout = SampleLayout(gray: false, alpha: alpha)
            }
        }
        let output: NetpbmHeader
        do {
            output = try NetpbmHeader(format: format.netpbmFormat, width: header.width, height: header.height,
                                      depth: layout.channelCount, maxval: outputMaxval,
                                      tupleType: format == .pam ? layout.tupleType : nil)
        } catch {
            throw .software("internal error building the output header: \(error.description)")
        }
        return Frame(inputLayout: inputLayout, outputLayout: layout, output: output,
                     droppedAlpha: inputLayout.hasAlpha && !format.carriesAlpha)
    }

    /// Whether applying `stages` in order maps every grey pixel (R = G = B) to a grey
    /// pixel, judged stage by stage:
    /// - a tone stage keeps grey when it is the same function on the three channels
    ///   (exposure);
    /// - an affine stage `C' = M·C + t` when the rows of `M` have equal sums and `t` has
    ///   equal components (each within 1e-12, rounding in `Double`): the sliders, the
    ///   grey looks (tonal, mono, noir), chrome and fade do; sepia and the looks with a
    ///   per-channel gain (instant, process, transfer) do not;
    /// - a positional stage always does: it scales R, G and B by one gain (the vignettes);
    /// - any other per-pixel stage (monochrome, vibrance) when its scalar reference maps
    ///   each of 41 greys from −0.5 to 1.5 to exactly R = G = B: monochrome with a grey
    ///   colour does, with a tint it does not; vibrance always does.
    ///
    /// One stage that makes colour is enough for `false`, even if a later stage would
    /// take it away again or the image happens to hold no pixel it changes.
    ///
    /// - Complexity: O(stages); a per-pixel stage runs once on 41 pixels.
    static func keepsGrey(_ stages: [Stage]) -> Bool {
        stages.allSatisfy { stage in
            switch stage {
            case .tone(let tone): tone.isChannelUniform
            case .affine(let affine): Self.keepsGrey(affine.matrix)
            case .positional: true
            case .pixel(let kernel): Self.keepsGrey(kernel)
            }
        }
    }

    /// Whether `M·(v, v, v) + t` has three equal components for every `v`.
    static func keepsGrey(_ matrix: ColorMatrix) -> Bool {
        let sums = SIMD3(matrix.rows.0.sum(), matrix.rows.1.sum(), matrix.rows.2.sum())
        let t = matrix.offset
        let tolerance = 1e-12
        return abs(sums.x - sums.y) <= tolerance && abs(sums.y - sums.z) <= tolerance
            && abs(t.x - t.y) <= tolerance && abs(t.y - t.z) <= tolerance
    }

    /// Whether `kernel`'s scalar reference keeps 41 greys from −0.5 to 1.5 exactly grey.
    static func keepsGrey(_ kernel: any PixelKernel) -> Bool {
        var probe = (0...40).map { i -> SIMD4<Float> in
            let v = Float(i) / 20 - 0.5
            return SIMD4(v, v, v, 1)
        }
        probe.withUnsafeMutableBufferPointer { row in
            kernel.apply(row, at: RowLocation(y: 0, x0: 0, imageWidth: row.count, imageHeight: 1), variant: .scalar)
        }
        return probe.allSatisfy { $0.x == $0.y && $0.y == $0.z }
    }
}
