/// Runs kernels from integer samples to integer samples in one pass over row bands:
/// each row is decoded into a small `Float` scratch row (in cache), passed through
/// every kernel, and encoded straight into the output — no full `Float` image in
/// between.
///
/// Input and output are interleaved rasters (rows top to bottom, `layout.channelCount`
/// samples per pixel, no padding). Decoding and encoding follow SPEC §0 exactly
/// (`v / maxval`; clamp once, round half to even), through the same functions as
/// `FloatImage(width:height:layout:maxval:samples:)` and `FloatImage.samples(layout:maxval:)`,
/// so this path gives the same samples as decoding to a `FloatImage`, applying the
/// kernels and encoding it.
public enum SamplePipeline {
    /// Applies `kernels` to a `width × height` raster.
    ///
    /// - Parameters:
    ///   - kernels: applied in order to each row; empty means decode → encode only
    ///     (which returns the input samples unchanged when layouts and maxvals match).
    ///   - input: `width × height × inputLayout.channelCount` samples ≤ `inputMaxval`,
    ///     `UInt8` (maxval ≤ 255) or `UInt16`; likewise `output`.
    ///   - inputLayout, inputMaxval: how to read `input` (maxval 1…65535).
    ///   - output: room for `width × height × outputLayout.channelCount` samples.
    ///   - outputLayout, outputMaxval: how to write `output`.
    ///   - variant: the kernels' inner loop.
    ///   - threads: thread count, `nil` for every core; the result never depends on it.
    /// - Precondition: the buffer sizes match (programming error).
    /// - Complexity: O(width × height × kernels.count); allocates one scratch row per band.
    public static func run(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        input: UnsafeBufferPointer<UInt8>, inputLayout: SampleLayout, inputMaxval: Int,
        output: UnsafeMutableBufferPointer<UInt8>, outputLayout: SampleLayout, outputMaxval: Int,
        variant: KernelVariant = .simd4, threads: Int? = nil
    ) {
        runRows(kernels, width: width, height: height, input: input, inputLayout: inputLayout, inputMaxval: inputMaxval,
                output: output, outputLayout: outputLayout, outputMaxval: outputMaxval, variant: variant, threads: threads)
    }

    /// The same, from `UInt16` to `UInt16` samples.
    public static func run(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        input: UnsafeBufferPointer<UInt16>, inputLayout: SampleLayout, inputMaxval: Int,
        output: UnsafeMutableBufferPointer<UInt16>, outputLayout: SampleLayout, outputMaxval: Int,
        variant: KernelVariant = .simd4, threads: Int? = nil
    ) {
        runRows(kernels, width: width, height: height, input: input, inputLayout: inputLayout, inputMaxval: inputMaxval,
                output: output, outputLayout: outputLayout, outputMaxval: outputMaxval, variant: variant, threads: threads)
    }

    /// The same, from `UInt8` to `UInt16` samples.
    public static func run(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        input: UnsafeBufferPointer<UInt8>, inputLayout: SampleLayout, inputMaxval: Int,
        output: UnsafeMutableBufferPointer<UInt16>, outputLayout: SampleLayout, outputMaxval: Int,
        variant: KernelVariant = .simd4, threads: Int? = nil
    ) {
        runRows(kernels, width: width, height: height, input: input, inputLayout: inputLayout, inputMaxval: inputMaxval,
                output: output, outputLayout: outputLayout, outputMaxval: outputMaxval, variant: variant, threads: threads)
    }

    /// The same, from `UInt16` to `UInt8` samples.
    public static func run(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        input: UnsafeBufferPointer<UInt16>, inputLayout: SampleLayout, inputMaxval: Int,
        output: UnsafeMutableBufferPointer<UInt8>, outputLayout: SampleLayout, outputMaxval: Int,
        variant: KernelVariant = .simd4, threads: Int? = nil
    ) {
        runRows(kernels, width: width, height: height, input: input, inputLayout: inputLayout, inputMaxval: inputMaxval,
                output: output, outputLayout: outputLayout, outputMaxval: outputMaxval, variant: variant, threads: threads)
    }

    // One generic body, specialised by the compiler for each public overload above
    // (a public generic would run unspecialised when called from another module).
    static func runRows<Input: FixedWidthInteger & UnsignedInteger & SIMDScalar, Output: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        input: UnsafeBufferPointer<Input>, inputLayout: SampleLayout, inputMaxval: Int,
        output: UnsafeMutableBufferPointer<Output>, outputLayout: SampleLayout, outputMaxval: Int,
        variant: KernelVariant, threads: Int?
    ) {
        precondition(inputMaxval <= Int(Input.max) && outputMaxval <= Int(Output.max),
                     "maxval does not fit the sample type")
        checkRaster(width: width, height: height, layout: inputLayout, maxval: inputMaxval, count: input.count)
        checkRaster(width: width, height: height, layout: outputLayout, maxval: outputMaxval, count: output.count)
        if variant == .simd4, runMatrixFastPath(kernels, pixels: width * height, input: input, inputLayout: inputLayout,
                                                inputMaxval: inputMaxval, output: output, outputLayout: outputLayout,
                                                outputMaxval: outputMaxval, threads: threads) {
            return
        }
        // Exposure on freshly decoded samples is a function of the sample alone, so the
        // SIMD4 path reads it from a table the scalar formula filled: exact (SPEC §8
        // holds trivially) and one load per sample instead of two powers.
        var kernels = kernels
        var exposureTable: [Float]? = nil
        if variant == .simd4, let exposure = kernels.first as? Exposure {
            exposureTable = exposure.makeLookupTable(maxval: inputMaxval)
            kernels.removeFirst()
        }
        let source = UncheckedBox(input.baseAddress!), destination = SendablePointer(base: output.baseAddress!)
        let inChannels = inputLayout.channelCount, outChannels = outputLayout.channelCount
        let stages = kernels, table = exposureTable
        RowBands.forEach(rows: height, threads: threads) { rows in
            let scratch = UnsafeMutableBufferPointer<SIMD4<Float>>.allocate(capacity: width)
            defer { scratch.deallocate() }
            for y in rows {
                let row = source.value + y * width * inChannels
                if let table {
                    SampleConversion.decode(row, layout: inputLayout, maxval: inputMaxval, colorTable: table,
                                            into: scratch.baseAddress!, count: width)
                } else {
                    SampleConversion.decode(row, layout: inputLayout, maxval: inputMaxval,
                                            into: scratch.baseAddress!, count: width)
                }
                let location = RowLocation(y: y, imageWidth: width, imageHeight: height)
                for kernel in stages { kernel.apply(scratch, at: location, variant: variant) }
                SampleConversion.encode(scratch.baseAddress!, count: width, layout: outputLayout,
                                        maxval: outputMaxval, into: destination.base + y * width * outChannels)
            }
        }
    }

    /// Applies `kernels` to a raster held in an array and returns the new raster;
    /// see `run(_:width:height:input:inputLayout:inputMaxval:output:outputLayout:outputMaxval:variant:threads:)`.
    ///
    /// - Complexity: O(width × height × kernels.count); allocates the output.
    public static func run(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        samples: [UInt16], layout: SampleLayout, maxval: Int,
        outputLayout: SampleLayout? = nil, outputMaxval: Int? = nil,
        variant: KernelVariant = .simd4, threads: Int? = nil
    ) -> [UInt16] {
        let outputLayout = outputLayout ?? layout, outputMaxval = outputMaxval ?? maxval
        let count = width * height * outputLayout.channelCount
        return [UInt16](unsafeUninitializedCapacity: count) { output, initialized in
            samples.withUnsafeBufferPointer { input in
                run(kernels, width: width, height: height, input: input, inputLayout: layout, inputMaxval: maxval,
                    output: output, outputLayout: outputLayout, outputMaxval: outputMaxval,
                    variant: variant, threads: threads)
            }
            initialized = count
        }
    }

    /// Applies `kernels` to a raster held in an array, overwriting it with the result:
    /// the same samples as `run(_:width:height:samples:layout:maxval:outputLayout:outputMaxval:variant:threads:)`
    /// with `outputLayout == layout`, without allocating a second raster.
    ///
    /// Same-memory use is exact because every path reads a span before writing it: the
    /// row path decodes a whole row into its scratch row before encoding back into that
    /// row (input and output rows start at the same offset, since the layout is the
    /// same), and the packed matrix path loads each block of pixels before storing it.
    ///
    /// - Parameters:
    ///   - samples: `width × height × layout.channelCount` samples ≤ `maxval`, interleaved,
    ///     rows top to bottom; on return the result, ≤ `outputMaxval`, in the same layout.
    ///   - layout, maxval: how to read `samples` (maxval 1…65535).
    ///   - outputMaxval: how to write the result; `nil` means `maxval`.
    ///   - variant, threads: as for the other overloads; the result never depends on `threads`.
    /// - Precondition: the sample count matches (programming error).
    /// - Complexity: O(width × height × kernels.count); allocates one scratch row per
    ///   band, and copies `samples` once only if its storage is shared.
    public static func runInPlace(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        samples: inout [UInt16], layout: SampleLayout, maxval: Int, outputMaxval: Int? = nil,
        variant: KernelVariant = .simd4, threads: Int? = nil
    ) {
        let outputMaxval = outputMaxval ?? maxval
        samples.withUnsafeMutableBufferPointer { buffer in
            runRows(kernels, width: width, height: height, input: UnsafeBufferPointer(buffer), inputLayout: layout,
                    inputMaxval: maxval, output: buffer, outputLayout: layout, outputMaxval: outputMaxval,
                    variant: variant, threads: threads)
        }
    }

    /// Takes the packed fast path (`ColorMatrixKernel.applyRGBA8/16`) when the work is
    /// one colour matrix from RGBA to RGBA at one maxval and one sample width; returns
    /// whether it did. Bands of whole rows split the raster across threads as usual.
    private static func runMatrixFastPath<Input: FixedWidthInteger & UnsignedInteger, Output: FixedWidthInteger & UnsignedInteger>(
        _ kernels: [any PixelKernel], pixels: Int,
        input: UnsafeBufferPointer<Input>, inputLayout: SampleLayout, inputMaxval: Int,
        output: UnsafeMutableBufferPointer<Output>, outputLayout: SampleLayout, outputMaxval: Int,
        threads: Int?
    ) -> Bool {
        #if _endian(little)  // the packed lanes assume R in the lowest-addressed bits
        guard kernels.count == 1, let matrix = kernels[0] as? ColorMatrixKernel,
              inputLayout == .rgba, outputLayout == .rgba, inputMaxval == outputMaxval,
              Input.self == Output.self else { return false }
        let source = UncheckedBox(UnsafeRawPointer(input.baseAddress!))
        let destination = UncheckedBox(UnsafeMutableRawPointer(output.baseAddress!))
        let maxval = inputMaxval
        // Bands of pixels rather than rows: rows are contiguous, so any split works.
        let chunk = 4096
        RowBands.forEach(rows: (pixels + chunk - 1) / chunk, threads: threads) { chunks in
            let start = chunks.lowerBound * chunk, end = min(pixels, chunks.upperBound * chunk)
            if Input.self == UInt8.self {
                matrix.applyRGBA8(source.value.assumingMemoryBound(to: UInt8.self) + 4 * start,
                                  destination.value.assumingMemoryBound(to: UInt8.self) + 4 * start,
                                  count: end - start, maxval: maxval)
            } else {
                matrix.applyRGBA16(source.value.assumingMemoryBound(to: UInt16.self) + 4 * start,
                                   destination.value.assumingMemoryBound(to: UInt16.self) + 4 * start,
                                   count: end - start, maxval: maxval)
            }
        }
        return true
        #else
        return false
        #endif
    }
}
