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
    /// The result reuses `image`'s sample storage whenever it has the input's layout
    /// (the kernels then run in place), so a big image costs one raster, not two; in
    /// exchange `image` is left with no samples.
    ///
    /// - Throws: exit 65 for a PAM whose planes the tool cannot interpret.
    func process(_ image: inout NetpbmImage, source: String) throws(CLIError) -> Output {
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

        // Taken out of `image` so that this is the storage's only reference and running
        // in place does not copy it.
        var input = image.samples
        image.samples = []
        let layout: SampleLayout
        var samples: [UInt16]
        if inputLayout.isGray && adaptive {
            // Compute in colour, then keep grey only if the result is still grey.
            let color = SampleLayout(gray: false, alpha: alpha)
            samples = run(&input, image, inputLayout, color, outputMaxval)
            if Self.keepGrayOnly(&samples, alpha: alpha) {
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
            samples = run(&input, image, inputLayout, layout, outputMaxval)
        }

        let output: NetpbmImage
        do {
            output = try NetpbmImage(width: image.width, height: image.height, depth: layout.channelCount,
                                     maxval: outputMaxval, tupleType: layout.tupleType, samples: samples,
                                     format: format.netpbmFormat)
        } catch {
            throw .software("internal error building the output image: \(error.description)")
        }
        return Output(image: output, droppedAlpha: inputLayout.hasAlpha && !format.carriesAlpha)
    }

    /// The kernels over `input` (`image`'s samples), re-encoded as `layout` at `maxval`:
    /// in place when the layout stays the same (the input is not needed afterwards, and
    /// is left empty), else into a new raster.
    private func run(_ input: inout [UInt16], _ image: NetpbmImage, _ inputLayout: SampleLayout,
                     _ layout: SampleLayout, _ maxval: Int) -> [UInt16] {
        if layout == inputLayout {
            var samples = input
            input = []  // `samples` is now the storage's only reference: no copy on write
            SamplePipeline.runInPlace(kernels, width: image.width, height: image.height, samples: &samples,
                                      layout: inputLayout, maxval: image.maxval, outputMaxval: maxval,
                                      variant: variant, threads: threads)
            return samples
        }
        let samples = SamplePipeline.run(kernels, width: image.width, height: image.height,
                                         samples: input, layout: inputLayout, maxval: image.maxval,
                                         outputLayout: layout, outputMaxval: maxval, variant: variant, threads: threads)
        input = []
        return samples
    }

    /// If every pixel of the RGB or RGBA raster `samples` has R = G = B, replaces it by
    /// its grey (and alpha) samples, in the same storage, and returns `true`; otherwise
    /// leaves it unchanged and returns `false`.
    static func keepGrayOnly(_ samples: inout [UInt16], alpha: Bool) -> Bool {
        let stride = alpha ? 4 : 3
        let keep = alpha ? 2 : 1
        let pixels = samples.count / stride
        let gray = samples.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            // Check first: compacting overwrites the colour samples.
            for p in 0..<pixels {
                let r = base[p * stride]
                guard base[p * stride + 1] == r, base[p * stride + 2] == r else { return false }
            }
            // Pixel p moves from p × stride to p × keep ≤ p × stride: each is read before
            // anything overwrites it.
            for p in 0..<pixels {
                base[p * keep] = base[p * stride]
                if alpha { base[p * keep + 1] = base[p * stride + 3] }
            }
            return true
        }
        // Shrinking keeps the storage: no new raster.
        if gray { samples.removeLast(samples.count - pixels * keep) }
        return gray
    }
}
