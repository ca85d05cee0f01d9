import Netpbm
import PhotoKernels

/// Runs a recipe's kernels over one decoded Netpbm image and builds the image to
/// write, applying the output rules in one place:
///
/// - **Samples**: integer samples in, integer samples out, through
///   `SamplePipeline.run` (one pass over row bands, SPEC §0 coding), so the result is
///   exactly the library's decode → kernels → encode.
/// - **Maxval**: `--maxval` if given; otherwise the input's, except that a bitmap
///   (PBM, or PAM `BLACKANDWHITE`, maxval 1) becomes maxval 255, since its pixels now
///   hold grey levels.
/// - **Grey or colour**: PGM always stores grey (colour is reduced to Rec. 709 luma by
///   the library's `SampleLayout.gray` encoding), PPM always colour. Where the format
///   may hold either (PAM, or "the input's kind" for `.pnm` and `-`), a grey input
///   stays grey when every output pixel still has R = G = B, and is written in colour
///   when the recipe added colour (sepia on a PGM makes a PPM).
/// - **Alpha**: kept when the format is PAM; PGM and PPM cannot store it, so it is
///   dropped (the caller prints a note).
struct ImageProcessor {
    /// The recipe's kernels, applied in order.
    var kernels: [any PixelKernel]
    /// What the output name asks for.
    var target: OutputTarget
    /// `--maxval`, if given.
    var maxval: Int?
    /// The kernels' inner loop.
    var variant: KernelVariant
    /// Threads for the row bands (`nil`: every core).
    var threads: Int?

    /// The image to write, and whether the input's alpha had to be dropped.
    struct Output {
        var image: NetpbmImage
        var droppedAlpha: Bool
    }

    /// Processes one image; `source` names the input in error messages.
    ///
    /// - Throws: exit 65 for a PAM whose planes the tool cannot interpret.
    func process(_ image: NetpbmImage, source: String) throws(CLIError) -> Output {
        let inputLayout = try SampleLayout(of: image, source: source)
        let isBitmap = image.tupleType == .blackAndWhite || image.tupleType == .blackAndWhiteAlpha
        let outputMaxval = maxval ?? (isBitmap ? 255 : image.maxval)

        var format: OutputFormat
        let adaptive: Bool  // may the format hold grey or colour, as the result needs?
        switch target {
        case .fixed(let fixed):
            format = fixed
            adaptive = fixed.colorModel == .either
        case .likeInput:
            format = OutputFormat(like: image.format)
            adaptive = true
        }
        let alpha = inputLayout.hasAlpha && format.carriesAlpha

        let layout: SampleLayout
        var samples: [UInt16]
        if inputLayout.isGray && adaptive {
            // Compute in colour, then keep grey only if the result is still grey.
            let color = SampleLayout(gray: false, alpha: alpha)
            samples = run(image, inputLayout, color, outputMaxval)
            if let gray = Self.grayOnly(samples, alpha: alpha) {
                samples = gray
                layout = SampleLayout(gray: true, alpha: alpha)
            } else {
                layout = color
                format = format.colorVariant
            }
        } else {
            switch format.colorModel {
            case .gray: layout = .gray
            case .color: layout = .rgb
            case .either: layout = SampleLayout(gray: false, alpha: alpha)
            }
            samples = run(image, inputLayout, layout, outputMaxval)
        }

        let output: NetpbmImage
        do {
            output = try NetpbmImage(width: image.width, height: image.height, depth: layout.channelCount,
                                     maxval: outputMaxval, tupleType: layout.tupleType, samples: samples,
                                     format: format.netpbmFormat)
        } catch {
            throw CLIError(status: .software, message: "internal error building the output image: \(error.description)")
        }
        return Output(image: output, droppedAlpha: inputLayout.hasAlpha && !format.carriesAlpha)
    }

    /// The kernels over `image`'s samples, re-encoded as `layout` at `maxval`.
    private func run(_ image: NetpbmImage, _ inputLayout: SampleLayout, _ layout: SampleLayout, _ maxval: Int) -> [UInt16] {
        SamplePipeline.run(kernels, width: image.width, height: image.height,
                           samples: image.samples, layout: inputLayout, maxval: image.maxval,
                           outputLayout: layout, outputMaxval: maxval, variant: variant, threads: threads)
    }

    /// The grey (and alpha) samples of an RGB or RGBA raster whose every pixel has
    /// R = G = B, or `nil` if any pixel has colour.
    static func grayOnly(_ samples: [UInt16], alpha: Bool) -> [UInt16]? {
        let stride = alpha ? 4 : 3
        var gray: [UInt16] = []
        gray.reserveCapacity(samples.count / stride * (alpha ? 2 : 1))
        var i = 0
        while i < samples.count {
            let r = samples[i]
            guard samples[i + 1] == r, samples[i + 2] == r else { return nil }
            gray.append(r)
            if alpha { gray.append(samples[i + 3]) }
            i += stride
        }
        return gray
    }
}
