import Foundation
import Netpbm
import PhotoKernels

// `apply` streams: an image is never held whole. A reader thread decodes a band of rows
// (or, for a very long row, a slice of it) into one of a few fixed buffers, the calling
// thread runs the prepared edit plan on the band (on the plan's own threads), and a
// writer thread encodes it, so reading, computing and writing overlap. Memory is the
// buffers, the reader's and the writer's 1 MiB buffers and the plan's scratch, whatever
// the image size or the number of frames (and, kept by a batch's worker, of files).

/// What one input is processed with: the compiled recipe, the output rules, and how to
/// cut and schedule the work.
struct StreamSettings: Sendable {
    /// The compiled recipe.
    var plan: EditPlan
    /// The output rules for this input's target.
    var rules: OutputRules
    /// The plan's schedule: `.simd4` (fused) or `.scalar` (the reference).
    var variant: KernelVariant = .simd4
    /// Threads for each band's computation; `nil` means every core.
    var threads: Int?
    /// The header limits (`--max-pixels`).
    var limits: NetpbmLimits = .default
    /// The most samples (input or output, whichever has more channels) one band holds.
    var bandSamples: Int = StreamSettings.defaultBandSamples
    /// Band buffers in flight: one being read, one computed, one written, one spare.
    var slots: Int = 4

    /// 2²⁰ samples: a band's 16-bit buffer is 2 MiB, big enough that the per-band
    /// fork and join of the plan's threads costs nothing measurable, small enough that
    /// the buffers in flight stay far below the memory target.
    static let defaultBandSamples = 1 << 20

    /// `PHOTOKERNELS_BAND_SAMPLES` from the environment (at least 4, so a pixel of four
    /// channels fits, and at most ``defaultBandSamples``), else ``defaultBandSamples``: a
    /// knob for tests that need bands of a few pixels, not an option, because the
    /// result never depends on it.
    static var bandSamplesFromEnvironment: Int {
        guard let text = ProcessInfo.processInfo.environment["PHOTOKERNELS_BAND_SAMPLES"],
              let value = Int(text), value >= 1 else { return defaultBandSamples }
        return min(max(4, value), defaultBandSamples)
    }
}

/// What one input produced: the frames written and their output headers.
struct StreamSummary: Sendable {
    /// Frames written.
    var frames = 0
    /// The distinct output headers, in order of first appearance (the first four).
    var headers: [NetpbmHeader] = []
    /// Whether some input alpha could not be stored.
    var droppedAlpha = false
    /// Pixels processed.
    var pixels = 0

    /// `4032×3024, P6, maxval 255`; for a stream `90 frames, 1920×1080, P7, maxval 255`,
    /// or, when the frames differ, `2 frames: 4×3, P6, maxval 255; 2×2, P6, maxval 255`.
    var description: String {
        func describe(_ h: NetpbmHeader) -> String { "\(h.width)×\(h.height), \(h.format.magic), maxval \(h.maxval)" }
        guard let first = headers.first else { return "no frames" }
        if frames == 1 { return describe(first) }
        if headers.count == 1 { return "\(frames) frames, " + describe(first) }
        return "\(frames) frames: " + headers.prefix(3).map(describe).joined(separator: "; ")
            + (headers.count > 3 ? "; …" : "")
    }

    mutating func record(_ header: NetpbmHeader, droppedAlpha dropped: Bool) {
        frames += 1
        pixels += header.width * header.height
        droppedAlpha = droppedAlpha || dropped
        if headers.count < 4, !headers.contains(header) { headers.append(header) }
    }
}

/// Runs one input stream through the edit plan band by band, into one output stream.
///
/// Three stages, connected by queues:
/// 1. the **reader** thread reads each header, decides the frame's layouts
///    (``OutputRules``), and reads its bands into free buffers;
/// 2. the **calling** thread runs the prepared plan on each band, with the band's
///    `ImageRegion`, so positional stages see whole-image coordinates and a band's
///    result is exactly that part of the whole-image result;
/// 3. the **writer** thread writes the header, the bands in order, and flushes after
///    each frame.
///
/// Guarantees:
/// - at most ``StreamSettings/slots`` band buffers exist, each of
///   ``StreamSettings/bandSamples`` 16-bit samples for the input and as many for the
///   output (the output shares the input's memory when channel counts and sample
///   widths match);
/// - samples stay 8-bit from reader to writer when both maxvals are below 256;
/// - frame k is written and flushed before the header of frame k + 2 is read;
/// - an input error (a truncated frame 57) arrives at the writer after every band read
///   before it: frames 1…56 are written and flushed, the partial frame is not flushed
///   (so a frame smaller than the writer's 1 MiB buffer never appears in part), and
///   the error, naming the frame and byte offset, is thrown;
/// - an output error (a full disk, a closed pipe) stops the reader at its next band.
///
/// Prepared plans are cached by image size, so a stream of frames of one size prepares
/// once.
final class BandPipeline: @unchecked Sendable {
    /// One band's buffers and where the band lies.
    final class Band: @unchecked Sendable {
        let input: UnsafeMutableRawPointer
        let output: UnsafeMutableRawPointer
        /// The 16-bit samples each buffer holds.
        let samples: Int
        var region = ImageRegion(x: 0, y: 0, width: 1, height: 1)
        /// Whether the band returns to the pool after writing (a whole-frame band of an
        /// oriented image does not: it is freed).
        var pooled = true

        /// Buffers for `samples` 16-bit samples in and out, or `nil` when the system
        /// cannot provide them (or their size does not fit in `Int`): a whole frame's
        /// band is sized by the input's header, so its allocation must fail cleanly, not
        /// trap.
        init?(samples: Int) {
            guard let bytes = Band.bufferBytes(samples: samples), bytes > 0 else { return nil }
            var input: UnsafeMutableRawPointer?, output: UnsafeMutableRawPointer?
            guard posix_memalign(&input, 64, bytes) == 0, let input else { return nil }
            guard posix_memalign(&output, 64, bytes) == 0, let output else {
                Foundation.free(input)
                return nil
            }
            self.input = input
            self.output = output
            self.samples = samples
        }

        deinit {
            Foundation.free(input)
            Foundation.free(output)
        }

        /// The bytes of one of a band's two buffers for `samples` 16-bit samples, or `nil`
        /// where that does not fit in `Int`.
        static func bufferBytes(samples: Int) -> Int? {
            let (bytes, overflow) = samples.multipliedReportingOverflow(by: 2)
            return overflow ? nil : bytes
        }

        /// The bytes of both buffers, as an out-of-memory error reports them.
        static func totalBytes(samples: Int) -> Int? {
            guard let one = bufferBytes(samples: samples) else { return nil }
            let (both, overflow) = one.multipliedReportingOverflow(by: 2)
            return overflow ? nil : both
        }
    }

    /// Everything about one frame that the stages share; immutable once made.
    final class Job: @unchecked Sendable {
        let index: Int
        let header: NetpbmHeader
        let frame: OutputRules.Frame
        /// `nil` when the samples pass through unchanged (no stage, same layout and maxval).
        let plan: PreparedEditPlan?
        let inputEightBit: Bool, outputEightBit: Bool
        /// Whether the output is written from the input buffer (in place, or passed through).
        let outputInInput: Bool

        init(index: Int, header: NetpbmHeader, frame: OutputRules.Frame, plan: PreparedEditPlan?) {
            self.index = index
            self.header = header
            self.frame = frame
            self.plan = plan
            inputEightBit = header.maxval <= 255
            outputEightBit = frame.output.maxval <= 255
            outputInInput = plan == nil
                || (frame.inputLayout.channelCount == frame.outputLayout.channelCount && inputEightBit == outputEightBit)
        }
    }

    /// What travels between the stages, in stream order.
    enum Message: @unchecked Sendable {
        case begin(Job)
        case band(Job, Band)
        case end(Job)
        /// The input failed here; everything before it is valid.
        case failed(CLIError)
        case finished
    }

    private let reader: NetpbmStreamReader
    private let writer: NetpbmStreamWriter
    private let settings: StreamSettings
    private let source: String
    private let progress: ProgressLine?
    private let bands: [Band]
    private let free = Channel<Band>()
    private let toCompute = Channel<Message>()
    private let toWrite = Channel<Message>()
    private let gate = FrameGate()
    private let failure = FirstFailure()
    /// Written by the writer thread only; read after it has finished.
    private var summary = StreamSummary()
    /// Used by the reader thread only.
    private var plans: [SIMD2<Int>: PreparedEditPlan] = [:]

    private init(reader: NetpbmStreamReader, writer: NetpbmStreamWriter, settings: StreamSettings, source: String,
                 progress: ProgressLine?, pool: BandPool?) throws(CLIError) {
        self.reader = reader
        self.writer = writer
        self.settings = settings
        self.source = source
        self.progress = progress
        let samples = max(4, settings.bandSamples), count = max(2, settings.slots)
        var bands = pool?.take(count: count, samples: samples) ?? []
        while bands.count < count {
            guard let band = Band(samples: samples) else {
                throw .outOfMemory(bytes: Band.totalBytes(samples: samples), purpose: "a band's buffers")
            }
            bands.append(band)
        }
        self.bands = bands
        for band in bands { free.send(band) }
    }

    /// Band buffers kept from one input to the next (a batch worker's): the later inputs
    /// take the pages the first one faulted in, rather than new buffers each.
    final class BandPool: @unchecked Sendable {
        private var bands: [Band] = []

        /// The kept bands that hold `samples` samples each, at most `count` of them.
        fileprivate func take(count: Int, samples: Int) -> [Band] {
            defer { bands = [] }
            return Array(bands.lazy.filter { $0.samples == samples }.prefix(count))
        }

        /// Keeps `bands` for the next input.
        fileprivate func keep(_ bands: [Band]) { self.bands = bands }
    }

    /// Reads every image of `reader`, applies the plan, writes the results to `writer`
    /// and flushes it.
    ///
    /// - Parameter source: how messages name the input (`photo.ppm`, `standard input`).
    /// - Throws: exit 65 for bad input data (the message names the frame and byte
    ///   offset), 66 when reading fails, 73 when writing fails, ``CLIError/brokenPipe``
    ///   for a closed output pipe, 70 for an internal error. Frames before the failure
    ///   have been written and flushed.
    static func run(_ reader: NetpbmStreamReader, to writer: NetpbmStreamWriter, settings: StreamSettings,
                    source: String, progress: ProgressLine? = nil, pool: BandPool? = nil) throws(CLIError) -> StreamSummary {
        let pipeline = try BandPipeline(reader: reader, writer: writer, settings: settings, source: source,
                                        progress: progress, pool: pool)
        let readerDone = pipeline.start { $0.readLoop() }
        let writerDone = pipeline.start { $0.writeLoop() }
        pipeline.computeLoop()
        readerDone.wait()
        writerDone.wait()
        // Every thread has finished with the bands.
        pool?.keep(pipeline.bands)
        if let error = pipeline.failure.error { throw error }
        return pipeline.summary
    }

    /// Runs `body` on a new thread; the semaphore is signalled when it returns.
    private func start(_ body: @escaping @Sendable (BandPipeline) -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            body(self)
            done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
        return done
    }

    // MARK: Reader

    private func readLoop() {
        var index = 0
        while true {
            // Frame index + 1 may be read once frame index − 1 is written.
            guard gate.wait(untilWritten: index - 1) else { return toCompute.send(.finished) }
            let header: NetpbmHeader?
            do throws(NetpbmError) {
                header = try reader.nextImage()
            } catch {
                return toCompute.send(.failed(.netpbm(error, source: source)))
            }
            guard let header else { return toCompute.send(.finished) }
            index += 1
            // The frame's size comes from its header, so before anything is allocated for
            // it (the plan's scratch rows, about 4 bytes per pixel of a row per thread,
            // and with an orientation the whole frame) the input must hold the raster
            // where its length is known (a file), and the allocation may fail cleanly.
            do throws(NetpbmError) {
                try reader.checkRasterLength()
            } catch {
                return toCompute.send(.failed(.netpbm(error, source: source)))
            }
            // Orientation moves pixels across rows: the frame is held whole, in one band
            // of its own (its input and output), and oriented by the plan.
            let oriented = settings.plan.orientation != .up
            let job: Job
            do throws(CLIError) {
                job = try makeJob(header, index: index, offset: reader.headerOffset)
            } catch {
                return toCompute.send(.failed(error))
            }
            toCompute.send(.begin(job))
            let inChannels = job.frame.inputLayout.channelCount
            let channels = max(inChannels, job.frame.outputLayout.channelCount)
            var frameSamples = 0
            if oriented {
                let (pixels, overflow) = header.width.multipliedReportingOverflow(by: header.height)
                let (samples, overflow2) = pixels.multipliedReportingOverflow(by: channels)
                frameSamples = overflow || overflow2 ? Int.max : samples
            }
            let regions = Regions(width: header.width, height: header.height, channels: channels,
                                  bandSamples: oriented ? frameSamples : settings.bandSamples)
            for region in regions {
                if gate.isCancelled { return toCompute.send(.finished) }
                let band: Band
                if oriented {
                    guard let whole = Band(samples: frameSamples) else {
                        return toCompute.send(.failed(.outOfMemory(
                            bytes: Band.totalBytes(samples: frameSamples),
                            purpose: "frame \(index) of \(source) (\(header.width)×\(header.height)) whole to orient it")))
                    }
                    band = whole
                    band.pooled = false
                } else {
                    band = free.receive()
                }
                band.region = region
                let count = region.width * region.height * inChannels
                do throws(NetpbmError) {
                    if job.inputEightBit {
                        let samples = band.input.bindMemory(to: UInt8.self, capacity: count)
                        try reader.readSamples(into: UnsafeMutableBufferPointer(start: samples, count: count))
                    } else {
                        let samples = band.input.bindMemory(to: UInt16.self, capacity: count)
                        try reader.readSamples(into: UnsafeMutableBufferPointer(start: samples, count: count))
                    }
                } catch {
                    if band.pooled { free.send(band) }
                    return toCompute.send(.failed(.netpbm(error, source: source)))
                }
                toCompute.send(.band(job, band))
            }
            toCompute.send(.end(job))
        }
    }

    /// The frame's rules and prepared plan (cached by size).
    private func makeJob(_ header: NetpbmHeader, index: Int, offset: Int) throws(CLIError) -> Job {
        var frame = try settings.rules.frame(for: header, frame: index, offset: offset, source: source)
        let orientation = settings.plan.orientation
        let upright = orientation.orientedSize(width: header.width, height: header.height)
        if orientation.swapsAxes {
            let o = frame.output
            do throws(NetpbmError) {
                frame.output = try NetpbmHeader(format: o.format, width: upright.width, height: upright.height, depth: o.depth,
                                                maxval: o.maxval, tupleType: o.tupleType)
            } catch {
                throw .software("internal error orienting \(source): \(error.description)")
            }
        }
        let passThrough = settings.plan.isEmpty && frame.inputLayout == frame.outputLayout
            && header.maxval == frame.output.maxval
        guard !passThrough else { return Job(index: index, header: header, frame: frame, plan: nil) }
        let size = SIMD2(header.width, header.height)
        if let plan = plans[size] { return Job(index: index, header: header, frame: frame, plan: plan) }
        let plan: PreparedEditPlan
        do throws(EditPlanError) {
            plan = try settings.plan.prepared(width: upright.width, height: upright.height, threads: settings.threads)
        } catch {
            if case .outOfMemory(let bytes) = error {
                throw .outOfMemory(bytes: bytes, purpose: "the edit's scratch rows for \(source) (\(upright.width)×\(upright.height))")
            }
            throw .software("internal error preparing the edit for \(source): \(error.description)")
        }
        if plans.count >= 4 { plans.removeAll() }
        plans[size] = plan
        return Job(index: index, header: header, frame: frame, plan: plan)
    }

    /// The bands of a `width × height` image, top to bottom: as many whole rows as fit
    /// in `bandSamples` samples of `channels` channels each, or, when one row does not
    /// fit, slices of one row, left to right. Produced one at a time: a tiny band size
    /// on a huge image must not make a list of them.
    struct Regions: Sequence, IteratorProtocol {
        let width: Int, height: Int
        /// Rows per band (whole rows), or 1 with slices of `piece` pixels.
        let rows: Int, piece: Int
        private var x = 0, y = 0

        init(width: Int, height: Int, channels: Int, bandSamples: Int) {
            self.width = width
            self.height = height
            let pixels = Swift.max(bandSamples, channels) / channels
            if width <= pixels {
                rows = pixels / width
                piece = width
            } else {
                rows = 1
                piece = pixels
            }
        }

        mutating func next() -> ImageRegion? {
            guard y < height else { return nil }
            if piece == width {
                let region = ImageRegion(x: 0, y: y, width: width, height: Swift.min(rows, height - y))
                y += rows
                return region
            }
            let region = ImageRegion(x: x, y: y, width: Swift.min(piece, width - x), height: 1)
            x += piece
            if x >= width { (x, y) = (0, y + 1) }
            return region
        }
    }

    // MARK: Compute

    private func computeLoop() {
        while true {
            let message = toCompute.receive()
            switch message {
            case .begin(let job):
                progress?.beginFrame(job.index, pixels: job.header.width * job.header.height)
            case .band(let job, let band):
                // After a failure the bands still go on to the writer, which frees them.
                if let plan = job.plan, !gate.isCancelled {
                    do throws(EditPlanError) {
                        try compute(job, band, plan)
                    } catch {
                        if case .outOfMemory(let bytes) = error {
                            fail(.outOfMemory(bytes: bytes, purpose: "the upright copy of frame \(job.index) of \(source)"))
                        } else {
                            fail(.software("internal error running the edit on \(source): \(error.description)"))
                        }
                    }
                }
                progress?.advance(pixels: band.region.width * band.region.height)
            case .end, .failed, .finished:
                break
            }
            toWrite.send(message)
            if case .failed = message { return }
            if case .finished = message { return }
        }
    }

    /// Runs the plan on one band, through the overload of the frame's sample widths.
    private func compute(_ job: Job, _ band: Band, _ plan: PreparedEditPlan) throws(EditPlanError) {
        let frame = job.frame
        let pixels = band.region.width * band.region.height
        let inCount = pixels * frame.inputLayout.channelCount, outCount = pixels * frame.outputLayout.channelCount
        let out = job.outputInInput ? band.input : band.output
        let (inLayout, outLayout) = (frame.inputLayout, frame.outputLayout)
        let (inMaxval, outMaxval) = (job.header.maxval, frame.output.maxval)
        // An oriented frame is one whole-image band; the plan orients it.
        let region: ImageRegion? = settings.plan.orientation == .up ? band.region : nil
        switch (job.inputEightBit, job.outputEightBit) {
        case (true, true):
            try plan.run(input: UnsafeBufferPointer(start: band.input.assumingMemoryBound(to: UInt8.self), count: inCount),
                         inputLayout: inLayout, inputMaxval: inMaxval,
                         output: UnsafeMutableBufferPointer(start: out.bindMemory(to: UInt8.self, capacity: outCount), count: outCount),
                         outputLayout: outLayout, outputMaxval: outMaxval, region: region, variant: settings.variant)
        case (false, false):
            try plan.run(input: UnsafeBufferPointer(start: band.input.assumingMemoryBound(to: UInt16.self), count: inCount),
                         inputLayout: inLayout, inputMaxval: inMaxval,
                         output: UnsafeMutableBufferPointer(start: out.bindMemory(to: UInt16.self, capacity: outCount), count: outCount),
                         outputLayout: outLayout, outputMaxval: outMaxval, region: region, variant: settings.variant)
        case (true, false):
            try plan.run(input: UnsafeBufferPointer(start: band.input.assumingMemoryBound(to: UInt8.self), count: inCount),
                         inputLayout: inLayout, inputMaxval: inMaxval,
                         output: UnsafeMutableBufferPointer(start: out.bindMemory(to: UInt16.self, capacity: outCount), count: outCount),
                         outputLayout: outLayout, outputMaxval: outMaxval, region: region, variant: settings.variant)
        case (false, true):
            try plan.run(input: UnsafeBufferPointer(start: band.input.assumingMemoryBound(to: UInt16.self), count: inCount),
                         inputLayout: inLayout, inputMaxval: inMaxval,
                         output: UnsafeMutableBufferPointer(start: out.bindMemory(to: UInt8.self, capacity: outCount), count: outCount),
                         outputLayout: outLayout, outputMaxval: outMaxval, region: region, variant: settings.variant)
        }
    }

    // MARK: Writer

    private func writeLoop() {
        var failed = false
        while true {
            let message = toWrite.receive()
            do throws(NetpbmError) {
                switch message {
                case .begin(let job):
                    if !failed { try writer.beginImage(job.frame.output) }
                case .band(let job, let band):
                    if !failed { try write(job, band) }
                    if band.pooled { free.send(band) }
                case .end(let job):
                    if !failed {
                        try writer.endImage()
                        try writer.flush()
                        summary.record(job.frame.output, droppedAlpha: job.frame.droppedAlpha)
                    }
                    gate.frameWritten()
                case .failed(let error):
                    failure.record(error)
                    gate.cancel()
                    return
                case .finished:
                    if !failed { try writer.flush() }
                    return
                }
            } catch {
                failed = true
                fail(Self.outputError(error))
            }
        }
    }

    private func write(_ job: Job, _ band: Band) throws(NetpbmError) {
        let count = band.region.width * band.region.height * job.frame.outputLayout.channelCount
        let samples = job.outputInInput ? band.input : band.output
        if job.outputEightBit {
            try writer.writeSamples(UnsafeBufferPointer(start: samples.assumingMemoryBound(to: UInt8.self), count: count))
        } else {
            try writer.writeSamples(UnsafeBufferPointer(start: samples.assumingMemoryBound(to: UInt16.self), count: count))
        }
    }

    /// A writing error as the tool reports it.
    static func outputError(_ error: NetpbmError) -> CLIError {
        switch error.underlying {
        case .brokenPipe: .brokenPipe
        case .writeFailed(let path, let reason): .cantCreate("cannot write \(path): \(reason)")
        default: .software("internal error writing the output: \(error.description)")
        }
    }

    /// Records `error` (the first one wins) and stops the reader at its next band.
    private func fail(_ error: CLIError) {
        failure.record(error)
        gate.cancel()
    }
}

/// An unbounded first-in, first-out queue between threads; `receive` waits for an
/// element. The pipeline bounds what is in it by the number of band buffers.
final class Channel<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private var head = 0

    /// Appends `element` and wakes one waiting receiver.
    func send(_ element: Element) {
        condition.lock()
        items.append(element)
        condition.signal()
        condition.unlock()
    }

    /// The oldest element, waiting for one if the queue is empty.
    func receive() -> Element {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count { condition.wait() }
        let element = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return element
    }
}

/// The frames written so far, and whether the run was stopped; the reader waits on it.
final class FrameGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var written = 0
    private var cancelled = false

    /// One more frame is written and flushed.
    func frameWritten() {
        condition.lock()
        written += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the run: waits end, `isCancelled` turns true.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Whether the run was stopped.
    var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    /// Waits until at least `count` frames are written; `false` if the run was stopped.
    func wait(untilWritten count: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while written < count && !cancelled { condition.wait() }
        return !cancelled
    }
}

/// The first error of a run, from whichever thread saw it.
final class FirstFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var first: CLIError?

    /// Keeps `error` unless an earlier one is kept.
    func record(_ error: CLIError) {
        lock.lock()
        if first == nil { first = error }
        lock.unlock()
    }

    /// The first error recorded, if any.
    var error: CLIError? {
        lock.lock()
        defer { lock.unlock() }
        return first
    }
}
