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
    ///   - threads: thread count, `nil` for every core, below 1 one; capped as
    ///     `EditPlan.prepared(width:height:threads:)` caps it. The result never depends on it.
    /// - Throws: `EditPlanError` for a size below 1, a maxval outside 1…65535 or above
    ///   what the sample type holds, or a buffer whose count does not match, before
    ///   anything is written; `.outOfMemory` when the scratch rows cannot be allocated.
    /// - Complexity: O(width × height × kernels.count); allocates one scratch row per band.
    public static func run(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        input: UnsafeBufferPointer<UInt8>, inputLayout: SampleLayout, inputMaxval: Int,
        output: UnsafeMutableBufferPointer<UInt8>, outputLayout: SampleLayout, outputMaxval: Int,
        variant: KernelVariant = .simd4, threads: Int? = nil
    ) throws(EditPlanError) {
        try runRows(kernels, width: width, height: height, input: input, inputLayout: inputLayout, inputMaxval: inputMaxval,
                    output: output, outputLayout: outputLayout, outputMaxval: outputMaxval, variant: variant, threads: threads)
    }

    /// The same, from `UInt16` to `UInt16` samples.
    ///
    /// - Throws: `EditPlanError`, as the 8-bit form does.
    public static func run(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        input: UnsafeBufferPointer<UInt16>, inputLayout: SampleLayout, inputMaxval: Int,
        output: UnsafeMutableBufferPointer<UInt16>, outputLayout: SampleLayout, outputMaxval: Int,
        variant: KernelVariant = .simd4, threads: Int? = nil
    ) throws(EditPlanError) {
        try runRows(kernels, width: width, height: height, input: input, inputLayout: inputLayout, inputMaxval: inputMaxval,
                    output: output, outputLayout: outputLayout, outputMaxval: outputMaxval, variant: variant, threads: threads)
    }

    /// The same, from `UInt8` to `UInt16` samples.
    ///
    /// - Throws: `EditPlanError`, as the 8-bit form does.
    public static func run(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        input: UnsafeBufferPointer<UInt8>, inputLayout: SampleLayout, inputMaxval: Int,
        output: UnsafeMutableBufferPointer<UInt16>, outputLayout: SampleLayout, outputMaxval: Int,
        variant: KernelVariant = .simd4, threads: Int? = nil
    ) throws(EditPlanError) {
        try runRows(kernels, width: width, height: height, input: input, inputLayout: inputLayout, inputMaxval: inputMaxval,
                    output: output, outputLayout: outputLayout, outputMaxval: outputMaxval, variant: variant, threads: threads)
    }

    /// The same, from `UInt16` to `UInt8` samples.
    ///
    /// - Throws: `EditPlanError`, as the 8-bit form does.
    public static func run(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        input: UnsafeBufferPointer<UInt16>, inputLayout: SampleLayout, inputMaxval: Int,
        output: UnsafeMutableBufferPointer<UInt8>, outputLayout: SampleLayout, outputMaxval: Int,
        variant: KernelVariant = .simd4, threads: Int? = nil
    ) throws(EditPlanError) {
        try runRows(kernels, width: width, height: height, input: input, inputLayout: inputLayout, inputMaxval: inputMaxval,
                    output: output, outputLayout: outputLayout, outputMaxval: outputMaxval, variant: variant, threads: threads)
    }

    /// Throws what the plan's run would throw for these arguments, before the plan is
    /// prepared, so that a wrong size, maxval or count is named as such rather than as
    /// the scratch memory its width would need. An output count of `nil` checks the
    /// input alone.
    static func check(width: Int, height: Int,
                      input: (layout: SampleLayout, maxval: Int, bits: Int, count: Int),
                      output: (layout: SampleLayout, maxval: Int, bits: Int, count: Int?)) throws(EditPlanError) {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard width >= 1, height >= 1, !overflow else { throw .invalidSize(width: width, height: height) }
        try PreparedEditPlan.checkSamples(pixels: pixels, input: input, output: output)
    }

    // The plan behind every overload: the kernels' stages, compiled and prepared for
    // this size once the arguments are checked. The plan's sample body knows 8- and
    // 16-bit samples only, which are all the public overloads pass.
    static func runRows<Input: FixedWidthInteger & UnsignedInteger & SIMDScalar, Output: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        input: UnsafeBufferPointer<Input>, inputLayout: SampleLayout, inputMaxval: Int,
        output: UnsafeMutableBufferPointer<Output>, outputLayout: SampleLayout, outputMaxval: Int,
        variant: KernelVariant, threads: Int?
    ) throws(EditPlanError) {
        assert([8, 16].contains(Input.bitWidth) && [8, 16].contains(Output.bitWidth))
        try check(width: width, height: height,
                  input: (inputLayout, inputMaxval, Input.bitWidth, input.count),
                  output: (outputLayout, outputMaxval, Output.bitWidth, output.count))
        let plan = try EditPlan(kernels: kernels).prepared(width: width, height: height, threads: threads)
        try plan.runSamples(input, inputLayout, inputMaxval, output, outputLayout, outputMaxval, nil, variant)
    }

    /// Applies `kernels` to a raster held in an array and returns the new raster;
    /// see `run(_:width:height:input:inputLayout:inputMaxval:output:outputLayout:outputMaxval:variant:threads:)`.
    ///
    /// - Throws: `EditPlanError`, as that method does; the output is allocated only
    ///   once the size, the maxvals and the input's count are known to agree.
    /// - Complexity: O(width × height × kernels.count); allocates the output.
    public static func run(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        samples: [UInt16], layout: SampleLayout, maxval: Int,
        outputLayout: SampleLayout? = nil, outputMaxval: Int? = nil,
        variant: KernelVariant = .simd4, threads: Int? = nil
    ) throws(EditPlanError) -> [UInt16] {
        let outputLayout = outputLayout ?? layout, outputMaxval = outputMaxval ?? maxval
        try check(width: width, height: height, input: (layout, maxval, 16, samples.count),
                  output: (outputLayout, outputMaxval, 16, nil))
        // The input array exists, so width × height is at most its count, far below
        // Int.max / 4: the output's count, at most 4 samples a pixel, fits.
        let count = width * height * outputLayout.channelCount
        var failure: EditPlanError?
        let result = [UInt16](unsafeUninitializedCapacity: count) { output, initialized in
            samples.withUnsafeBufferPointer { input in
                do throws(EditPlanError) {
                    try run(kernels, width: width, height: height, input: input, inputLayout: layout, inputMaxval: maxval,
                            output: output, outputLayout: outputLayout, outputMaxval: outputMaxval,
                            variant: variant, threads: threads)
                    initialized = count
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
        return result
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
    /// - Throws: `EditPlanError`, as the other overloads do; `samples` is then unchanged.
    /// - Complexity: O(width × height × kernels.count); allocates one scratch row per
    ///   band, and copies `samples` once only if its storage is shared.
    public static func runInPlace(
        _ kernels: [any PixelKernel], width: Int, height: Int,
        samples: inout [UInt16], layout: SampleLayout, maxval: Int, outputMaxval: Int? = nil,
        variant: KernelVariant = .simd4, threads: Int? = nil
    ) throws(EditPlanError) {
        let outputMaxval = outputMaxval ?? maxval
        try samples.withUnsafeMutableBufferPointer { (buffer) throws(EditPlanError) in
            try runRows(kernels, width: width, height: height, input: UnsafeBufferPointer(buffer), inputLayout: layout,
                        inputMaxval: maxval, output: buffer, outputLayout: layout, outputMaxval: outputMaxval,
                        variant: variant, threads: threads)
        }
    }
}
