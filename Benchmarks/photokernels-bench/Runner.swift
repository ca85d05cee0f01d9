// Runs the plan: for each size, build the buffers, then verify, warm up and time
// every workload.

import CommandLineKit
import Foundation
import Netpbm
import PhotoKernels

/// Executes a list of workloads and returns their measurements.
///
/// Exists to keep the order of events in one place: buffers are filled before any
/// timing; every workload gets one untimed warm-up run, which doubles as the
/// verification run of non-scalar variants; then timed samples, each preceded by an
/// untimed restore of the input where the workload overwrites it. The timed regions
/// call only library functions (`PreparedEditPlan.run` on a `FloatImage`, on RGBA
/// samples and on a pixel buffer, the plan prepared before sampling,
/// `FloatImage.decode(from:…)`, `FloatImage.encode(into:…)`, `NetpbmReader.read`,
/// `NetpbmWriter.encode`) or `memcpy` (the roofline).
final class Runner {
    let policy: SamplingPolicy
    /// What the library is told (`nil` = every core).
    let libraryThreads: Int?
    /// The resolved count, for our own copies and for the report.
    let threads: Int
    let seed: UInt64
    /// The pages under the fixtures' buffers.
    let pages: PageChoice
    let quiet: Bool

    init(options: Options) {
        policy = options.samplingPolicy
        libraryThreads = options.threads
        threads = options.threads ?? ProcessInfo.processInfo.activeProcessorCount
        seed = options.seed
        pages = options.pages
        quiet = options.quiet
    }

    /// Runs `plan` (grouped by size, in order).
    ///
    /// A workload whose verification fails (a variant disagrees with the scalar
    /// reference, a Netpbm round trip is not exact) is not timed: it is recorded as a
    /// `Failure` and the run goes on, so one run names every broken kernel. The
    /// caller exits with status 1 if there is any failure.
    func run(_ plan: [Workload]) -> RunOutcome {
        planKeys = Set(plan.filter { $0.variant != nil && $0.variant != .scalar }.map(\.scalarKey))
        let early = preflight(plan)
        var outcome = RunOutcome()
        var sizes: [ImageSize] = []
        for workload in plan where !sizes.contains(workload.size) { sizes.append(workload.size) }
        var done = 0
        for size in sizes {
            // The photo is generated in the fixture's initialiser, so that is what is timed.
            let start = Clock.wallNanoseconds()
            let fixture = Fixture(size: size, seed: seed, threads: threads, pages: pages)
            let label = size.label == size.dimensions ? size.label : "\(size.label) (\(size.dimensions))"
            progress("prepared the \(label) photo in \(formatTime(Double(Clock.wallNanoseconds() - start)))")
            for workload in plan where workload.size == size {
                done += 1
                if let message = early[workload.familyName] {
                    outcome.failures.append(Failure(workload: workload, message: message))
                    progress("[\(done)/\(plan.count)] \(workload.name): FAILED verification (preflight), not timed")
                    continue
                }
                do {
                    let measurement = Measurement(workload: workload, samples: try measure(workload, in: fixture))
                    outcome.measurements.append(measurement)
                    progress("[\(done)/\(plan.count)] \(workload.name): median \(formatTime(measurement.wall.median)), "
                             + "\(measurement.wall.count) samples")
                } catch {
                    outcome.failures.append(Failure(workload: workload, message: error.message))
                    progress("[\(done)/\(plan.count)] \(workload.name): FAILED, not timed")
                }
            }
        }
        outcome.measurements = Results.derive(outcome.measurements)
        return outcome
    }

    /// Checks every selected non-scalar variant against the scalar reference, and every
    /// sample ⇄ Float conversion against the scalar formulas, on a
    /// small image with odd dimensions (259 × 67: exercises any tail loop) before
    /// anything is timed, so a wrong kernel is known in seconds, not after the 12 MP
    /// runs. Skipped when every size is at most 1 MP: the warm-up check there is as quick.
    ///
    /// - Returns: failure messages by `Workload.familyName`.
    func preflight(_ plan: [Workload]) -> [String: String] {
        guard plan.contains(where: { $0.size.pixelCount > 1_000_000 }) else { return [:] }
        let fixture = Fixture(size: ImageSize(width: 259, height: 67), seed: seed, threads: threads, pages: pages)
        var checked = Set<String>()
        var failures: [String: String] = [:]
        for workload in plan {
            let small = Workload(kind: workload.kind, size: fixture.size)
            let checkable: Bool
            if case .convert = small.kind { checkable = true } else { checkable = small.variant.map { $0 != .scalar } ?? false }
            guard checkable, checked.insert(small.familyName).inserted else { continue }
            do { try verify(small, in: fixture) } catch { failures[small.familyName] = error.message }
        }
        return failures
    }

    /// One untimed warm-up run that also verifies, then the timed samples.
    private func measure(_ workload: Workload, in fixture: Fixture) throws(ToolError) -> SampleSet {
        let threads = self.threads, libraryThreads = self.libraryThreads
        switch workload.kind {
        case .copy(let buffer):
            // Copy pristine → work (Float) or raster → output (samples); a copy is idempotent.
            switch buffer {
            case .floatRGBA:
                fixture.allocateFloatBuffers()
                let source = fixture.pristine
                return source.withUnsafePixels { src in
                    fixture.work.withUnsafeMutablePixels { dst in
                        let from = UnsafeRawPointer(src.baseAddress!), to = UnsafeMutableRawPointer(dst.baseAddress!)
                        let bytes = src.count * MemoryLayout<SIMD4<Float>>.stride
                        Parallel.copy(to, from: from, byteCount: bytes, threads: threads)  // warm-up
                        return Sampler.measure(policy: policy) {
                            Parallel.copy(to, from: from, byteCount: bytes, threads: threads)
                        }
                    }
                }
            case .samplesRGBA8:
                return copySamples(fixture.samples8())
            case .samplesRGBA16:
                return copySamples(fixture.samples16())
            }

        case .kernel(let entry, let variant):
            try verify(workload, in: fixture)  // leaves the warm-up output in `work`
            if variant == .scalar, hasOtherVariants(of: workload) {
                fixture.keepReference(named: workload.scalarKey)
            }
            // The entry's edit plan, prepared once for the size, as an app reuses it per frame.
            let plan = try Self.plan(entry, width: fixture.work.width, height: fixture.work.height, threads: libraryThreads)
            let buffer = fixture.work.withUnsafePixels { $0.baseAddress }
            let samples = Sampler.measure(policy: policy, prepare: fixture.restoreWork) {
                try? plan.run(&fixture.work, variant: variant)
            }
            // A moved buffer means a copy-on-write copy ran inside the timed region.
            guard fixture.work.withUnsafePixels({ $0.baseAddress }) == buffer else {
                throw ToolError("\(workload.name): the image was copied during timing (copy-on-write); "
                                + "the timings would include a full copy.", status: .failure)
            }
            return samples

        case .pipeline(let depth, _, _):
            switch depth {
            case .eight: return try measurePipeline(workload, fixture.samples8())
            case .sixteen: return try measurePipeline(workload, fixture.samples16())
            }

        case .appBuffer(let kind, let entry, let variant):
            let buffers = fixture.appBuffers(kind)
            // Prepared once, as an app prepares the plan once per size and runs it per frame;
            // the warm-up runs this plan too, so that its tables are built before timing.
            let plan = try Self.plan(entry, width: buffers.width, height: buffers.height, threads: libraryThreads)
            try verifyAppBuffer(workload, buffers, plan)
            let buffer = try buffers.buffer(buffers.work)
            return Sampler.measure(policy: policy, prepare: { buffers.restoreWork(threads: threads) }) {
                try? plan.run(buffer, variant: variant)
            }

        case .export(let format, let entry, let variant):
            let buffers = fixture.appBuffers(.bgra8Premultiplied)
            let plan = try Self.plan(entry, width: buffers.width, height: buffers.height, threads: libraryThreads)
            try verifyExport(workload, buffers, plan)
            let source = try buffers.buffer(buffers.input)
            let destination = try buffers.exportBuffer(buffers.exportMemory().output, format)
            // The input is never written, so every sample starts from it without a restore.
            return Sampler.measure(policy: policy) { try? plan.run(from: source, to: destination, variant: variant) }

        case .importing(let entry, let variant):
            let (source, destination) = (fixture.appBuffers(.rgba8Padded), fixture.appBuffers(.bgra8Premultiplied))
            let plan = try Self.plan(entry, width: destination.width, height: destination.height, threads: libraryThreads)
            try verifyImport(workload, source, destination, plan)
            let input = try source.buffer(source.input), output = try destination.buffer(destination.work)
            // Every byte of the output is written, so nothing is restored between samples.
            return Sampler.measure(policy: policy) { try? plan.run(from: input, to: output, variant: variant) }

        case .convert(let direction, let depth):
            switch depth {
            case .eight: return try measureConversion(workload, direction, fixture.samples8(), in: fixture)
            case .sixteen: return try measureConversion(workload, direction, fixture.samples16(), in: fixture)
            }

        case .netpbmDecode:
            try verify(workload, in: fixture)
            let file = try netpbmInput(workload, in: fixture)
            do {
                return try Sampler.measure(policy: policy, prepare: { fixture.lastDecoded = nil }) {
                    // The reader allocates its result; it is freed in `prepare`, untimed.
                    fixture.lastDecoded = try NetpbmReader.read(file.bytes)
                }
            } catch {
                throw ToolError("\(workload.name): \(error)", status: .failure)
            }

        case .netpbmEncode:
            try verify(workload, in: fixture)
            let image = try netpbmInput(workload, in: fixture).image
            do {
                return try Sampler.measure(policy: policy, prepare: { fixture.lastEncoded = [] }) {
                    fixture.lastEncoded = try NetpbmWriter.encode(image, as: .rawPPM)
                }
            } catch {
                throw ToolError("\(workload.name): \(error)", status: .failure)
            }
        }
    }

    /// The (kernel or pipeline, size) keys of the plan that have non-scalar variants.
    private var planKeys: Set<String> = []

    /// Whether the plan holds a non-scalar variant of the same kernel and size (then the
    /// scalar warm-up output is kept as the reference, saving one scalar run).
    private func hasOtherVariants(of workload: Workload) -> Bool { planKeys.contains(workload.scalarKey) }

    /// The catalog entry's edit plan prepared for one size.
    static func plan(_ entry: CatalogEntry, width: Int, height: Int, threads: Int?) throws(ToolError) -> PreparedEditPlan {
        try plan(entry.kernels, named: entry.name, width: width, height: height, threads: threads)
    }

    /// The edit plan of `kernels` prepared for one size; a refusal names `name`.
    static func plan(_ kernels: [any PixelKernel], named name: String, width: Int, height: Int,
                     threads: Int?) throws(ToolError) -> PreparedEditPlan {
        do {
            return try EditPlan(kernels: kernels).prepared(width: width, height: height, threads: threads)
        } catch {
            throw ToolError("\(name): \(error.description)", status: .failure)
        }
    }

    /// Runs `workload` once, untimed, and checks its output:
    /// - kernels and kernel pipelines: the non-scalar variants against the scalar
    ///   reference (computed here if the plan did not time the scalar variant first);
    /// - the kernel-less pipeline: decode → encode at one depth returns the input
    ///   unchanged (SPEC §0);
    /// - conversions: exact, see `verifyConversion`;
    /// - Netpbm: decoding returns the samples written, encoding the bytes read.
    func verify(_ workload: Workload, in fixture: Fixture) throws(ToolError) {
        let size = workload.size
        switch workload.kind {
        case .copy:
            return
        case .kernel(let entry, let variant):
            if variant != .scalar, fixture.referenceName != workload.scalarKey {
                fixture.restoreWork()
                try? Self.plan(entry, width: size.width, height: size.height, threads: libraryThreads)
                    .run(&fixture.work, variant: .scalar)
                fixture.keepReference(named: workload.scalarKey)
            }
            fixture.restoreWork()
            try? Self.plan(entry, width: size.width, height: size.height, threads: libraryThreads)
                .run(&fixture.work, variant: variant)
            guard variant != .scalar else { return }
            let report = Verification.compare(reference: fixture.reference, candidate: fixture.work)
            if !report.passed {
                throw ToolError(Verification.message(report, workload: workload, width: size.width), status: .failure)
            }

        case .pipeline(let depth, _, _):
            let plan = try pipelinePlan(workload)
            switch depth {
            case .eight: try verifyPipeline(workload, fixture.samples8(), plan)
            case .sixteen: try verifyPipeline(workload, fixture.samples16(), plan)
            }

        case .appBuffer(let kind, let entry, _):
            let buffers = fixture.appBuffers(kind)
            try verifyAppBuffer(workload, buffers,
                                try Self.plan(entry, width: buffers.width, height: buffers.height, threads: libraryThreads))

        case .export(_, let entry, _):
            let buffers = fixture.appBuffers(.bgra8Premultiplied)
            try verifyExport(workload, buffers,
                             try Self.plan(entry, width: buffers.width, height: buffers.height, threads: libraryThreads))

        case .importing(let entry, _):
            let destination = fixture.appBuffers(.bgra8Premultiplied)
            try verifyImport(workload, fixture.appBuffers(.rgba8Padded), destination,
                             try Self.plan(entry, width: destination.width, height: destination.height, threads: libraryThreads))

        case .convert(let direction, let depth):
            switch depth {
            case .eight: try verifyConversion(workload, direction, fixture.samples8(), in: fixture)
            case .sixteen: try verifyConversion(workload, direction, fixture.samples16(), in: fixture)
            }

        case .netpbmDecode:
            let (file, image) = try netpbmInput(workload, in: fixture)
            do {
                let decoded = try NetpbmReader.read(file)
                guard decoded.width == image.width, decoded.height == image.height,
                      decoded.maxval == image.maxval, decoded.samples == image.samples else {
                    throw ToolError("\(workload.name): decoding the P6 file does not return the samples written "
                                    + "(\(decoded.width)×\(decoded.height) maxval \(decoded.maxval)).", status: .failure)
                }
                fixture.lastDecoded = decoded
            } catch let error as ToolError {
                throw error
            } catch {
                throw ToolError("\(workload.name): \(error)", status: .failure)
            }

        case .netpbmEncode:
            let (file, image) = try netpbmInput(workload, in: fixture)
            do {
                let encoded = try NetpbmWriter.encode(image, as: .rawPPM)
                guard encoded == file else {
                    throw ToolError("\(workload.name): encoding is not deterministic (\(encoded.count) bytes, "
                                    + "expected \(file.count)).", status: .failure)
                }
                fixture.lastEncoded = encoded
            } catch let error as ToolError {
                throw error
            } catch {
                throw ToolError("\(workload.name): \(error)", status: .failure)
            }
        }
    }

    /// Times the roofline copy of a raster: `input` → `output`.
    private func copySamples<Sample>(_ buffers: SampleBuffers<Sample>) -> SampleSet {
        buffers.allocate()
        let threads = self.threads
        return buffers.input.withUnsafeBytes { src in
            buffers.output.withUnsafeMutableBytes { dst in
                Parallel.copy(dst.baseAddress!, from: src.baseAddress!, byteCount: src.count, threads: threads)  // warm-up
                return Sampler.measure(policy: policy) {
                    Parallel.copy(dst.baseAddress!, from: src.baseAddress!, byteCount: src.count, threads: threads)
                }
            }
        }
    }

    /// The pipeline's kernels, maxval and variant for `workload`.
    private func pipelineParameters(_ workload: Workload) -> (kernels: [any PixelKernel], maxval: Int, variant: KernelVariant?) {
        guard case .pipeline(let depth, let entry, let variant) = workload.kind else { preconditionFailure("not a pipeline") }
        return (entry?.kernels ?? [], depth.maxval, variant)
    }

    /// The pipeline's edit plan, prepared for the size, which the warm-up and every timed
    /// pass then run: as the CLI prepares one per input size and an app one per frame
    /// size, so that no pass pays for preparing it (or for building its tone tables,
    /// which it keeps: 65 536 tone evaluations per channel at 16 bits).
    private func pipelinePlan(_ workload: Workload) throws(ToolError) -> PreparedEditPlan {
        try Self.plan(pipelineParameters(workload).kernels, named: workload.name, width: workload.size.width,
                      height: workload.size.height, threads: libraryThreads)
    }

    /// Verifies (the warm-up), then times the prepared plan's `run(input:…)` into the
    /// preallocated output.
    private func measurePipeline<Sample>(_ workload: Workload, _ buffers: SampleBuffers<Sample>) throws(ToolError) -> SampleSet {
        let plan = try pipelinePlan(workload)
        try verifyPipeline(workload, buffers, plan)
        let (_, maxval, variant) = pipelineParameters(workload)
        var failure: ToolError?
        let samples = buffers.input.withUnsafeBufferPointer { input in
            buffers.output.withUnsafeMutableBufferPointer { output in
                Sampler.measure(policy: policy) {
                    do throws(ToolError) {
                        try Sample.runPipeline(plan, input: input, output: output, maxval: maxval,
                                               variant: variant ?? .scalar)
                    } catch { failure = error }
                }
            }
        }
        if let failure { throw failure }
        return samples
    }

    /// Runs the pipeline once into `output` and checks it: the kernel-less pipeline must
    /// return its input exactly (SPEC §0), a non-scalar variant must agree with the
    /// scalar output (≤ 1 LSB in ≤ 1 % of samples; see `Verification`).
    private func verifyPipeline<Sample>(_ workload: Workload, _ buffers: SampleBuffers<Sample>,
                                        _ plan: PreparedEditPlan) throws(ToolError) {
        let (_, maxval, variant) = pipelineParameters(workload)
        let size = workload.size
        let needsReference = variant != nil && (variant != .scalar || hasOtherVariants(of: workload))
        buffers.allocate(reference: needsReference)
        func run(_ variant: KernelVariant, into output: inout [Sample]) throws(ToolError) {
            var failure: ToolError?
            buffers.input.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { output in
                    do throws(ToolError) {
                        try Sample.runPipeline(plan, input: input, output: output, maxval: maxval, variant: variant)
                    } catch { failure = error }
                }
            }
            if let failure { throw failure }
        }
        func compare(_ reference: [Sample]) -> Verification.SampleReport {
            reference.withUnsafeBufferPointer { r in
                buffers.output.withUnsafeBufferPointer { Verification.compare(reference: r, candidate: $0) }
            }
        }
        guard let variant else {
            try run(.scalar, into: &buffers.output)
            let report = compare(buffers.input)
            if report.differing > 0 {
                throw ToolError(Verification.message(report, workload: workload, width: size.width,
                                                     against: "its input (decode → encode must be exact)"),
                                status: .failure)
            }
            return
        }
        if variant == .scalar {
            // The scalar warm-up output becomes the reference when other variants follow.
            if needsReference {
                try run(.scalar, into: &buffers.reference)
                buffers.referenceName = workload.scalarKey
            } else {
                try run(.scalar, into: &buffers.output)
            }
            return
        }
        if buffers.referenceName != workload.scalarKey {
            try run(.scalar, into: &buffers.reference)
            buffers.referenceName = workload.scalarKey
        }
        try run(variant, into: &buffers.output)
        let report = compare(buffers.reference)
        if !report.passed {
            throw ToolError(Verification.message(report, workload: workload, width: size.width,
                                                 against: "the scalar reference"), status: .failure)
        }
    }

    /// Runs `plan` (the entry's, for the buffers' size) once in place on the app buffer
    /// (the warm-up) and checks it: the padding bytes are never written, and a
    /// non-scalar variant agrees with the scalar output (`Verification`'s rule for
    /// integer samples, over every byte of the buffer).
    /// The scalar output is kept as the reference when other variants follow.
    private func verifyAppBuffer(_ workload: Workload, _ buffers: AppBufferSet,
                                 _ plan: PreparedEditPlan) throws(ToolError) {
        guard case .appBuffer(_, _, let variant) = workload.kind else { preconditionFailure("not an app buffer") }
        let threads = self.threads
        let buffer = try buffers.buffer(buffers.work)
        func run(_ variant: KernelVariant) throws(ToolError) {
            buffers.restoreWork(threads: threads)
            do { try plan.run(buffer, variant: variant) } catch {
                throw ToolError("\(workload.name): \(error.description)", status: .failure)
            }
            if let row = buffers.firstRowWithChangedPadding() {
                throw ToolError("\(workload.name): the \(variant.rawValue) run wrote the padding of row \(row).", status: .failure)
            }
        }
        guard try runAfterScalar(workload, variant, referenceHeld: buffers.referenceName == workload.scalarKey, run,
                                 keep: { buffers.keepReference(named: workload.scalarKey, threads: threads) }) else { return }
        try compareWorkWithReference(workload, buffers)
    }

    /// Checks an app buffer's working memory against its reference (the scalar
    /// variant's output) over every byte, by the integer rule (`Verification`).
    private func compareWorkWithReference(_ workload: Workload, _ buffers: AppBufferSet) throws(ToolError) {
        let report = Verification.compare(
            reference: UnsafeBufferPointer(start: buffers.reference.assumingMemoryBound(to: UInt8.self), count: buffers.byteCount),
            candidate: UnsafeBufferPointer(start: buffers.work.assumingMemoryBound(to: UInt8.self), count: buffers.byteCount))
        if !report.passed {
            throw ToolError(Verification.message(report, workload: workload, width: buffers.bytesPerRow / 4,
                                                 against: "the scalar reference"), status: .failure)
        }
    }

    /// The order of an app buffer's verification: where `variant` is not the scalar one
    /// and the reference does not hold the scalar output (`referenceHeld`), runs the
    /// scalar variant and `keep`s its output first; then `variant`. Returns whether
    /// `variant`'s output is to be compared: not the scalar variant's, which is kept
    /// instead when other variants of the workload follow.
    private func runAfterScalar(_ workload: Workload, _ variant: KernelVariant, referenceHeld: Bool,
                                _ run: (KernelVariant) throws(ToolError) -> Void, keep: () -> Void) throws(ToolError) -> Bool {
        if variant != .scalar, !referenceHeld {
            try run(.scalar)
            keep()
        }
        try run(variant)
        if variant == .scalar {
            if hasOtherVariants(of: workload) { keep() }
            return false
        }
        return true
    }

    /// Runs `plan` once from the premultiplied BGRA8 buffer's input into the export
    /// buffer (the warm-up) and checks it: a non-scalar variant agrees with the scalar
    /// export over every sample (`Verification`'s rule for integer samples, or for
    /// `Float16` its float tolerance widened to one half-precision step). The scalar
    /// export is kept as the reference when other variants follow.
    private func verifyExport(_ workload: Workload, _ buffers: AppBufferSet,
                              _ plan: PreparedEditPlan) throws(ToolError) {
        guard case .export(let format, _, let variant) = workload.kind else { preconditionFailure("not an export") }
        let threads = self.threads, memory = buffers.exportMemory()
        let source = try buffers.buffer(buffers.input), destination = try buffers.exportBuffer(memory.output, format)
        func run(_ variant: KernelVariant) throws(ToolError) {
            do { try plan.run(from: source, to: destination, variant: variant) } catch {
                throw ToolError("\(workload.name): \(error.description)", status: .failure)
            }
        }
        guard try runAfterScalar(workload, variant, referenceHeld: buffers.exportReferenceName == workload.scalarKey, run,
                                 keep: { buffers.keepExportReference(named: workload.scalarKey, threads: threads) }) else { return }
        let samples = buffers.width * buffers.height * format.bytesPerPixel / 2
        let reference = UnsafeBufferPointer(start: memory.reference.assumingMemoryBound(to: UInt16.self), count: samples)
        let candidate = UnsafeBufferPointer(start: memory.output.assumingMemoryBound(to: UInt16.self), count: samples)
        switch format {
        case .rgba8:
            let bytes = 2 * samples
            let report = Verification.compare(
                reference: UnsafeBufferPointer(start: memory.reference.assumingMemoryBound(to: UInt8.self), count: bytes),
                candidate: UnsafeBufferPointer(start: memory.output.assumingMemoryBound(to: UInt8.self), count: bytes))
            if !report.passed {
                throw ToolError(Verification.message(report, workload: workload, width: buffers.width,
                                                     against: "the scalar reference"), status: .failure)
            }
        case .rgba16, .rgba16Premultiplied:
            let report = Verification.compare(reference: reference, candidate: candidate)
            if !report.passed {
                throw ToolError(Verification.message(report, workload: workload, width: buffers.width,
                                                     against: "the scalar reference"), status: .failure)
            }
        case .rgba16f, .rgba16fPremultiplied, .gray16f:
            #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
            let grey = format == .gray16f
            let report = Verification.compareHalves(reference: reference, candidate: candidate,
                                                    samplesPerPixel: grey ? 1 : 4)
            if !report.passed {
                throw ToolError(Verification.message(report, workload: workload, width: buffers.width, halves: true,
                                                     channels: grey ? ["Y"] : ["R", "G", "B", "A"]), status: .failure)
            }
            #endif
        }
    }

    /// Runs `plan` once from the straight `rgba8-padded` buffer's input into the
    /// premultiplied BGRA8 buffer's working memory (the warm-up) and checks it: a
    /// non-scalar variant agrees with the scalar import over every byte (the integer
    /// rule). The scalar import is kept as the BGRA8 buffer's reference when other
    /// variants follow.
    private func verifyImport(_ workload: Workload, _ source: AppBufferSet, _ destination: AppBufferSet,
                              _ plan: PreparedEditPlan) throws(ToolError) {
        guard case .importing(_, let variant) = workload.kind else { preconditionFailure("not an import") }
        let threads = self.threads
        let input = try source.buffer(source.input), output = try destination.buffer(destination.work)
        func run(_ variant: KernelVariant) throws(ToolError) {
            do { try plan.run(from: input, to: output, variant: variant) } catch {
                throw ToolError("\(workload.name): \(error.description)", status: .failure)
            }
        }
        guard try runAfterScalar(workload, variant, referenceHeld: destination.referenceName == workload.scalarKey, run,
                                 keep: { destination.keepReference(named: workload.scalarKey, threads: threads) }) else { return }
        try compareWorkWithReference(workload, destination)
    }

    /// Verifies (the warm-up), then times one conversion between the RGBA raster of
    /// `buffers` and a preallocated `Float` buffer:
    /// - `toFloat`: `fixture.work.decode(from: buffers.input, layout: .rgba, …)`;
    ///   idempotent, so no restore between samples;
    /// - `fromFloat`: `fixture.pristine.encode(into: buffers.output, layout: .rgba, …)`.
    private func measureConversion<Sample>(_ workload: Workload, _ direction: ConversionDirection,
                                           _ buffers: SampleBuffers<Sample>, in fixture: Fixture) throws(ToolError) -> SampleSet {
        try verifyConversion(workload, direction, buffers, in: fixture)
        guard case .convert(_, let depth) = workload.kind else { preconditionFailure("not a conversion") }
        let maxval = depth.maxval, libraryThreads = self.libraryThreads
        switch direction {
        case .toFloat:
            let buffer = fixture.work.withUnsafePixels { $0.baseAddress }
            var failure: ToolError?
            let samples = buffers.input.withUnsafeBufferPointer { input in
                Sampler.measure(policy: policy) {
                    do throws(ToolError) { try Sample.decodeRGBA(input, into: &fixture.work, maxval: maxval, threads: libraryThreads) }
                    catch { failure = error }
                }
            }
            if let failure { throw failure }
            // A moved buffer means a copy-on-write copy ran inside the timed region.
            guard fixture.work.withUnsafePixels({ $0.baseAddress }) == buffer else {
                throw ToolError("\(workload.name): the image was copied during timing (copy-on-write); "
                                + "the timings would include a full copy.", status: .failure)
            }
            return samples
        case .fromFloat:
            let image = fixture.pristine
            var failure: ToolError?
            let samples = buffers.output.withUnsafeMutableBufferPointer { output in
                Sampler.measure(policy: policy) {
                    do throws(ToolError) { try Sample.encodeRGBA(image, into: output, maxval: maxval, threads: libraryThreads) }
                    catch { failure = error }
                }
            }
            if let failure { throw failure }
            return samples
        }
    }

    /// Runs one conversion, untimed, and checks it exactly (SPEC §0):
    /// - `toFloat`: every `Float` equals `SampleCoding.decode(v, maxval:)` of its
    ///   sample, bit for bit;
    /// - `fromFloat`: every sample equals `pristine.samples(layout: .rgba, maxval:)` (the
    ///   fixture's raster) and `SampleCoding.encode` of its `Float`, exactly.
    func verifyConversion<Sample>(_ workload: Workload, _ direction: ConversionDirection,
                                  _ buffers: SampleBuffers<Sample>, in fixture: Fixture) throws(ToolError) {
        guard case .convert(_, let depth) = workload.kind else { preconditionFailure("not a conversion") }
        let maxval = depth.maxval, m = Float(depth.maxval), width = workload.size.width
        let channels = ["R", "G", "B", "A"]
        switch direction {
        case .toFloat:
            fixture.allocateFloatBuffers()
            try buffers.input.withUnsafeBufferPointer { (input) throws(ToolError) in
                try Sample.decodeRGBA(input, into: &fixture.work, maxval: maxval, threads: libraryThreads)
            }
            let mismatch: (index: Int, count: Int, expected: Float, actual: Float)? =
                buffers.input.withUnsafeBufferPointer { input in
                    fixture.work.withUnsafePixels { pixels in
                        pixels.withMemoryRebound(to: Float.self) { decoded in
                            var first: (Int, Float, Float)?, count = 0
                            for i in 0..<input.count {
                                let expected = SampleCoding.decode(input[i], maxval: m)
                                if decoded[i].bitPattern != expected.bitPattern {
                                    count += 1
                                    if first == nil { first = (i, expected, decoded[i]) }
                                }
                            }
                            return first.map { ($0.0, count, $0.1, $0.2) }
                        }
                    }
                }
            if let mismatch {
                let pixel = mismatch.index / 4
                throw ToolError("""
                    \(workload.name): \(mismatch.count) of \(buffers.input.count) decoded values differ from \
                    SampleCoding.decode (SPEC §0: exact); first at pixel (\(pixel % width), \(pixel / width)) \
                    channel \(channels[mismatch.index % 4]): expected \(mismatch.expected), got \(mismatch.actual).
                    """, status: .failure)
            }
        case .fromFloat:
            buffers.allocate()
            let image = fixture.pristine
            try buffers.output.withUnsafeMutableBufferPointer { (output) throws(ToolError) in
                try Sample.encodeRGBA(image, into: output, maxval: maxval, threads: libraryThreads)
            }
            let mismatch: (index: Int, count: Int, expected: Int, formula: Int, actual: Int)? =
                buffers.input.withUnsafeBufferPointer { reference in
                    buffers.output.withUnsafeBufferPointer { output in
                        image.withUnsafePixels { pixels in
                            pixels.withMemoryRebound(to: Float.self) { values in
                                var first: (Int, Int, Int, Int)?, count = 0
                                for i in 0..<output.count {
                                    let formula = Int(SampleCoding.encode(values[i], maxval: m))
                                    if output[i] != reference[i] || Int(output[i]) != formula {
                                        count += 1
                                        if first == nil { first = (i, Int(reference[i]), formula, Int(output[i])) }
                                    }
                                }
                                return first.map { ($0.0, count, $0.1, $0.2, $0.3) }
                            }
                        }
                    }
                }
            if let mismatch {
                let pixel = mismatch.index / 4
                throw ToolError("""
                    \(workload.name): \(mismatch.count) of \(buffers.output.count) encoded samples differ from \
                    FloatImage.samples(layout: .rgba, maxval: \(maxval)) or SampleCoding.encode (SPEC §0: exact); first at \
                    pixel (\(pixel % width), \(pixel / width)) channel \(channels[mismatch.index % 4]): expected \
                    \(mismatch.expected) (formula \(mismatch.formula)), got \(mismatch.actual).
                    """, status: .failure)
            }
        }
    }

    /// The P6 file and RGB image of a Netpbm workload's depth.
    private func netpbmInput(_ workload: Workload, in fixture: Fixture) throws(ToolError) -> (bytes: [UInt8], image: NetpbmImage) {
        let depth: SampleDepth
        switch workload.kind {
        case .netpbmDecode(let d), .netpbmEncode(let d): depth = d
        default: preconditionFailure("not a Netpbm workload")
        }
        return (try fixture.p6File(depth), try fixture.rgbImage(depth))
    }

    private func progress(_ line: String) {
        guard !quiet else { return }
        Console.err(line + "\n")
    }
}

/// A benchmark that was not timed, and why (its verification failed).
struct Failure: Sendable {
    let workload: Workload
    let message: String
}

/// What a run produced: the timed benchmarks and the ones that failed.
struct RunOutcome: Sendable {
    var measurements: [Measurement] = []
    var failures: [Failure] = []
}
