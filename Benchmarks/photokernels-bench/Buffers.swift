// The preallocated buffers of one image size, the synthetic photo that fills them,
// the app pixel buffers made from it, and the parallel memory copy (the roofline, and
// the untimed restore between samples).

import Foundation
import Netpbm
import PhotoKernels

/// A value that crosses into `concurrentPerform` although the compiler cannot prove
/// it safe: every use below gives each iteration its own disjoint memory.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Contiguous chunks on several threads — the same split the library's row-band
/// driver uses, for the copies and the data generation that are ours.
enum Parallel {
    /// Runs `body` over `parts` contiguous chunks of `0..<count`, concurrently.
    static func forEachChunk(count: Int, parts: Int, _ body: (Range<Int>) -> Void) {
        let parts = max(1, min(parts, count))
        if parts == 1 {
            body(0..<count)
            return
        }
        withoutActuallyEscaping(body) { body in
            let box = UncheckedSendable(body)
            DispatchQueue.concurrentPerform(iterations: parts) { i in
                box.value(count * i / parts ..< count * (i + 1) / parts)
            }
        }
    }

    /// Copies the pixels of `source` into `destination`, an image of the same size.
    static func copy(_ source: FloatImage, into destination: inout FloatImage, threads: Int) {
        precondition(source.pixelCount == destination.pixelCount, "copy: sizes differ")
        source.withUnsafePixels { from in
            destination.withUnsafeMutablePixels { to in
                copy(UnsafeMutableRawPointer(to.baseAddress!), from: UnsafeRawPointer(from.baseAddress!),
                     byteCount: from.count * MemoryLayout<SIMD4<Float>>.stride, threads: threads)
            }
        }
    }

    /// Copies `byteCount` bytes with `threads` concurrent `memcpy`s
    /// (`UnsafeMutableRawPointer.copyMemory`), split at 4 KiB boundaries.
    ///
    /// This is the roofline: the fastest way to read and write every byte once with
    /// the same number of threads as the kernels get.
    static func copy(_ destination: UnsafeMutableRawPointer, from source: UnsafeRawPointer,
                     byteCount: Int, threads: Int) {
        let page = 4096
        let pages = (byteCount + page - 1) / page
        let pointers = UncheckedSendable((destination, source))
        forEachChunk(count: pages, parts: threads) { range in
            let start = range.lowerBound * page
            let end = min(range.upperBound * page, byteCount)
            guard start < end else { return }
            (pointers.value.0 + start).copyMemory(from: pointers.value.1 + start, byteCount: end - start)
        }
    }
}

/// A deterministic, photo-like test image.
///
/// Real photos are smooth with fine noise, so a benchmark on random bytes or a flat
/// colour would mislead (branches in a kernel, denormals, rounding ties). Each
/// channel is a sum of smooth column and row gradients (low-frequency sines), a
/// diagonal `u·v` term and uniform noise of ±3 % (alpha ±5 %), clamped to [0, 1];
/// alpha varies across the frame. The noise comes from SplitMix64 seeded per row, so
/// the image depends only on the size and the seed, never on the thread count.
enum PhotoData {
    /// A `size.width × size.height` image for `seed`, generated on `threads` threads,
    /// on `pages`.
    static func image(_ size: ImageSize, seed: UInt64, threads: Int, pages: PageChoice) -> FloatImage {
        let w = size.width, h = size.height
        let tau = 2 * Float.pi
        let columns: [SIMD4<Float>] = (0..<w).map { x in
            let u = (Float(x) + 0.5) / Float(w)
            return SIMD4(0.10 + 0.55 * u + 0.08 * sin(tau * 1.7 * u),
                         0.05 + 0.25 * u + 0.07 * sin(tau * 2.3 * u + 1),
                         0.55 - 0.35 * u + 0.06 * cos(tau * 1.1 * u),
                         0.45 + 0.30 * sin(tau * 0.8 * u))
        }
        let rows: [SIMD4<Float>] = (0..<h).map { y in
            let v = (Float(y) + 0.5) / Float(h)
            return SIMD4(0.10 * v + 0.05 * cos(tau * 0.9 * v),
                         0.45 * v + 0.04 * sin(tau * 1.3 * v),
                         0.10 - 0.15 * v,
                         0.20 * cos(tau * 0.6 * v))
        }
        let diagonal = SIMD4<Float>(0.20, -0.10, 0.15, 0)
        let noiseAmplitude = SIMD4<Float>(0.06, 0.06, 0.06, 0.10)
        let pixels: [SIMD4<Float>] = LargeBuffer.array(count: w * h, pages) { buffer in
            let base = UncheckedSendable(buffer.baseAddress!)
            Parallel.forEachChunk(count: h, parts: threads * 4) { band in
                for y in band {
                    var rng = SplitMix64(seed: seed ^ (UInt64(y) &* 0x9E37_79B9_7F4A_7C15))
                    let v = (Float(y) + 0.5) / Float(h)
                    let row = base.value + y * w
                    for x in 0..<w {
                        let u = (Float(x) + 0.5) / Float(w)
                        let bits = rng.next()
                        let noise = SIMD4<Float>(Float(bits & 0xFFFF), Float((bits >> 16) & 0xFFFF),
                                                 Float((bits >> 32) & 0xFFFF), Float(bits >> 48)) / 65535 - 0.5
                        var p = columns[x] + rows[y] + diagonal * (u * v) + noise * noiseAmplitude
                        p = p.clamped(lowerBound: SIMD4(repeating: 0), upperBound: SIMD4(repeating: 1))
                        (row + x).initialize(to: p)
                    }
                }
            }
        }
        return FloatImage(size, pixels: pixels)
    }
}

extension FloatImage {
    /// An image of `size` holding `pixels` (`size.pixelCount` of them). The runner's
    /// sizes are its named ones or those its options parser accepted (each side at
    /// least 1, at most 2²⁸ pixels), so this cannot throw.
    init(_ size: ImageSize, pixels: [SIMD4<Float>]) {
        do { self = try FloatImage(width: size.width, height: size.height, pixels: pixels) }
        catch { preconditionFailure("ImageSize \(size) with \(pixels.count) pixels: \(error)") }
    }

    /// An opaque black image of `size` on `pages`.
    init(_ size: ImageSize, pages: PageChoice) {
        self.init(size, pixels: LargeBuffer.array(repeating: SIMD4(0, 0, 0, 1), count: size.pixelCount, pages))
    }

    /// `samples(layout: .rgba, maxval:)` at one of the runner's own maxvals (255 or
    /// 65535), which cannot throw.
    func rgbaSamples(maxval: Int) -> [UInt16] {
        do { return try samples(layout: .rgba, maxval: maxval) }
        catch { preconditionFailure("maxval \(maxval): \(error)") }
    }
}

/// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): one 64-bit state, good enough for test data, trivially seedable.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Every buffer the workloads of one size need, allocated and filled before any
/// timing, and reused by every sample.
///
/// Exists so the timed regions touch only memory that is already allocated and
/// faulted in: the `Float` input (`pristine`, never written after creation), the
/// `work` image the kernels write in place, the scalar `reference` output, integer
/// rasters and Netpbm files. Built lazily: a `--filter` that selects only kernels
/// never allocates the Netpbm files.
final class Fixture {
    let size: ImageSize
    /// Thread count for our own copies (the library gets the same number).
    let threads: Int
    /// The pages under every image and raster of the fixture.
    let pages: PageChoice

    /// Generates the input photo; the other buffers are allocated on first use.
    init(size: ImageSize, seed: UInt64, threads: Int, pages: PageChoice) {
        self.size = size
        self.threads = threads
        self.pages = pages
        pristine = PhotoData.image(size, seed: seed, threads: threads, pages: pages)
    }

    // The buffers below are plain stored properties, never `lazy`: mutating a lazy
    // property goes through a getter and a setter, so `work.apply(…)` would run on a
    // second reference to the storage and copy-on-write all of it inside the timed
    // region. `Runner` also checks that the base addresses stay put while sampling.

    /// The input photo; read-only.
    let pristine: FloatImage
    /// The image kernels run on; restored from `pristine` before every sample.
    var work = FloatImage(ImageSize(width: 1, height: 1), pixels: [SIMD4(0, 0, 0, 1)])
    /// The scalar output of the entry named `referenceName`.
    var reference = FloatImage(ImageSize(width: 1, height: 1), pixels: [SIMD4(0, 0, 0, 1)])
    /// Which kernel `reference` currently holds.
    var referenceName: String?

    /// The 8-bit rasters (created on first use).
    private var rasters8: SampleBuffers<UInt8>?
    /// The 16-bit rasters (created on first use).
    private var rasters16: SampleBuffers<UInt16>?
    /// The app pixel buffers (created on first use).
    private var appBufferSets: [AppBuffer: AppBufferSet] = [:]
    /// RGB images (depth 3) at each depth, as the Netpbm encoder takes them.
    private var rgbImages: [SampleDepth: NetpbmImage] = [:]
    /// Raw P6 files at each depth, written by the Netpbm encoder.
    private var p6Files: [SampleDepth: [UInt8]] = [:]
    /// The last decode or encode result, kept so it is freed outside the timed region.
    var lastDecoded: NetpbmImage?
    var lastEncoded: [UInt8] = []

    /// Allocates `work` (and, with `reference: true`, `reference`) at full size, once.
    func allocateFloatBuffers(reference needsReference: Bool = false) {
        if work.pixelCount != size.pixelCount { work = FloatImage(size, pages: pages) }
        if needsReference, reference.pixelCount != size.pixelCount {
            reference = FloatImage(size, pages: pages)
        }
    }

    /// The RGBA rasters at 8 bits: `UInt8` samples, maxval 255, encoded from
    /// `pristine` by the library (SPEC §0).
    func samples8() -> SampleBuffers<UInt8> {
        if let rasters8 { return rasters8 }
        let buffers = SampleBuffers(input: LargeBuffer.array(pristine.rgbaSamples(maxval: 255), pages) { UInt8($0) },
                                    pages: pages)
        rasters8 = buffers
        return buffers
    }

    /// The RGBA rasters at 16 bits: `UInt16` samples, maxval 65535.
    func samples16() -> SampleBuffers<UInt16> {
        if let rasters16 { return rasters16 }
        let buffers = SampleBuffers(input: LargeBuffer.array(pristine.rgbaSamples(maxval: 65535), pages) { $0 },
                                    pages: pages)
        rasters16 = buffers
        return buffers
    }

    /// The app pixel buffers of `kind`, made from the 8-bit raster (created on first use).
    func appBuffers(_ kind: AppBuffer) -> AppBufferSet {
        if let set = appBufferSets[kind] { return set }
        let set = AppBufferSet(kind, raster: samples8().input, width: size.width, height: size.height, pages: pages)
        appBufferSets[kind] = set
        return set
    }

    /// Copies `pristine` into `work` (untimed, between samples): the kernels are not
    /// idempotent, so every sample must start from the same input.
    func restoreWork() {
        allocateFloatBuffers()
        Parallel.copy(pristine, into: &work, threads: threads)
    }

    /// Copies `work` into `reference` (untimed) and records whose output it is.
    func keepReference(named name: String) {
        allocateFloatBuffers(reference: true)
        Parallel.copy(work, into: &reference, threads: threads)
        referenceName = name
    }

    /// The RGB Netpbm image of `depth` (created on first use).
    func rgbImage(_ depth: SampleDepth) throws(ToolError) -> NetpbmImage {
        if let image = rgbImages[depth] { return image }
        do {
            let image = try NetpbmImage(width: size.width, height: size.height, depth: 3, maxval: depth.maxval,
                                        tupleType: .rgb, samples: try pristine.samples(layout: .rgb, maxval: depth.maxval),
                                        format: .rawPPM)
            rgbImages[depth] = image
            return image
        } catch {
            throw ToolError("cannot build the \(depth.rawValue)-bit RGB test image: \(error)", status: .failure)
        }
    }

    /// The raw P6 file of `depth` (created on first use, by the Netpbm writer).
    func p6File(_ depth: SampleDepth) throws(ToolError) -> [UInt8] {
        if let file = p6Files[depth] { return file }
        let image = try rgbImage(depth)
        do {
            let file = try NetpbmWriter.encode(image, as: .rawPPM)
            p6Files[depth] = file
            return file
        } catch {
            throw ToolError("cannot encode the \(depth.rawValue)-bit P6 test file: \(error)", status: .failure)
        }
    }
}

/// An integer sample type the end-to-end pipeline and the conversions read and write.
///
/// Exists because `PreparedEditPlan.run(input:…)`, `FloatImage.decode(from:…)` and
/// `FloatImage.encode(into:…)` have one concrete overload per sample type (so each is
/// specialised inside the library); this protocol lets the runner stay generic and
/// still call the concrete overload.
protocol PipelineSample: FixedWidthInteger, UnsignedInteger, Sendable {
    /// `plan.run(input:…)` from an RGBA raster to an RGBA raster at `maxval`.
    static func runPipeline(_ plan: PreparedEditPlan, input: UnsafeBufferPointer<Self>,
                            output: UnsafeMutableBufferPointer<Self>, maxval: Int,
                            variant: KernelVariant) throws(ToolError)
    /// `image.decode(from: samples, layout: .rgba, maxval:, threads:)`: overwrites `image`.
    static func decodeRGBA(_ samples: UnsafeBufferPointer<Self>, into image: inout FloatImage, maxval: Int,
                           threads: Int?) throws(ToolError)
    /// `image.encode(into: samples, layout: .rgba, maxval:, threads:)`: overwrites `samples`.
    static func encodeRGBA(_ image: FloatImage, into samples: UnsafeMutableBufferPointer<Self>, maxval: Int,
                           threads: Int?) throws(ToolError)
}

extension ToolError {
    /// Runs a library call the runner set up itself: a refusal is a defect of the
    /// runner, reported with the library's error.
    static func refusing(_ call: String, _ body: () throws -> Void) throws(ToolError) {
        do { try body() } catch { throw ToolError("\(call) refused the runner's buffers: \(error)", status: .failure) }
    }
}

// One conformance per sample type, each calling that type's overloads.
extension UInt8: PipelineSample {
    static func runPipeline(_ plan: PreparedEditPlan, input: UnsafeBufferPointer<UInt8>,
                            output: UnsafeMutableBufferPointer<UInt8>, maxval: Int,
                            variant: KernelVariant) throws(ToolError) {
        try ToolError.refusing("PreparedEditPlan.run") {
            try plan.run(input: input, inputLayout: .rgba, inputMaxval: maxval,
                         output: output, outputLayout: .rgba, outputMaxval: maxval, variant: variant)
        }
    }

    static func decodeRGBA(_ samples: UnsafeBufferPointer<UInt8>, into image: inout FloatImage, maxval: Int,
                           threads: Int?) throws(ToolError) {
        try ToolError.refusing("FloatImage.decode") {
            try image.decode(from: samples, layout: .rgba, maxval: maxval, threads: threads)
        }
    }

    static func encodeRGBA(_ image: FloatImage, into samples: UnsafeMutableBufferPointer<UInt8>, maxval: Int,
                           threads: Int?) throws(ToolError) {
        try ToolError.refusing("FloatImage.encode") {
            try image.encode(into: samples, layout: .rgba, maxval: maxval, threads: threads)
        }
    }
}

extension UInt16: PipelineSample {
    static func runPipeline(_ plan: PreparedEditPlan, input: UnsafeBufferPointer<UInt16>,
                            output: UnsafeMutableBufferPointer<UInt16>, maxval: Int,
                            variant: KernelVariant) throws(ToolError) {
        try ToolError.refusing("PreparedEditPlan.run") {
            try plan.run(input: input, inputLayout: .rgba, inputMaxval: maxval,
                         output: output, outputLayout: .rgba, outputMaxval: maxval, variant: variant)
        }
    }

    static func decodeRGBA(_ samples: UnsafeBufferPointer<UInt16>, into image: inout FloatImage, maxval: Int,
                           threads: Int?) throws(ToolError) {
        try ToolError.refusing("FloatImage.decode") {
            try image.decode(from: samples, layout: .rgba, maxval: maxval, threads: threads)
        }
    }

    static func encodeRGBA(_ image: FloatImage, into samples: UnsafeMutableBufferPointer<UInt16>, maxval: Int,
                           threads: Int?) throws(ToolError) {
        try ToolError.refusing("FloatImage.encode") {
            try image.encode(into: samples, layout: .rgba, maxval: maxval, threads: threads)
        }
    }
}

/// The integer rasters of one sample depth: the input, the pipeline's output and a
/// scalar reference output, all full size, allocated once and reused.
///
/// A class with plain stored arrays, so `output.withUnsafeMutableBufferPointer` works
/// on the one and only reference to the storage (no copy-on-write).
final class SampleBuffers<Sample: PipelineSample> {
    /// The RGBA input, read-only: `pristine.samples(layout: .rgba, maxval:)` at the
    /// depth's maxval — also the exact expected output of the `float-to-rgba` conversion.
    let input: [Sample]
    /// Where the pipeline, the `float-to-rgba` conversion and the roofline copy write.
    var output: [Sample] = []
    /// The scalar variant's output, when another variant is to be checked against it.
    var reference: [Sample] = []
    /// Which pipeline `reference` holds (`Workload.scalarKey`).
    var referenceName: String?

    /// The pages under `output` and `reference` (`input` comes on them too).
    let pages: PageChoice

    /// Buffers around `input`, which the caller has allocated on `pages`; the others
    /// are allocated on first use (`allocate(reference:)`).
    init(input: [Sample], pages: PageChoice) {
        self.input = input
        self.pages = pages
    }

    /// Allocates `output` (and, with `reference: true`, `reference`) once.
    func allocate(reference needsReference: Bool = false) {
        if output.count != input.count { output = LargeBuffer.array(repeating: 0, count: input.count, pages) }
        if needsReference, reference.count != input.count {
            reference = LargeBuffer.array(repeating: 0, count: input.count, pages)
        }
    }
}

/// The memory of one app pixel buffer workload: the input, the buffer the plan runs on
/// in place, and the scalar variant's output, each `height × bytesPerRow` bytes,
/// allocated and filled once; for the exports from the input, its destination and
/// the scalar variant's export, `height × width × 8` bytes each, allocated on first use.
///
/// The input is the fixture's straight RGBA8 raster (the `pipeline/rgba8` input) in the
/// buffer's layout:
/// - `rgba8-padded`: the same pixels, each row followed by padding bytes `0xA5`;
/// - `bgra8-premultiplied` and `preview`: swizzled to BGRA and premultiplied
///   (`c·a/255`, rounded), with a new alpha: 255 everywhere except a disc of radius
///   `0.16·min(W, H)` centred at `(0.72·W, 0.35·H)`, where it falls smoothly from 255 at
///   the rim to 96 within `0.6` of the radius (`alpha(x:y:)`): about 6 % of the pixels
///   are not opaque. A camera's frames are opaque; this stands for an app's layer with
///   a translucent sticker or a feathered selection on it.
final class AppBufferSet {
    let kind: AppBuffer
    let width: Int, height: Int, bytesPerRow: Int
    /// `height × bytesPerRow`.
    let byteCount: Int
    /// The input; never written after `init`.
    let input: UnsafeMutableRawPointer
    /// Where the plan runs; restored from `input` before every sample.
    let work: UnsafeMutableRawPointer
    /// The scalar output of `referenceName`, when another variant is checked against it.
    let reference: UnsafeMutableRawPointer
    /// Which workload `reference` holds (`Workload.scalarKey`).
    var referenceName: String?
    /// The exports' destination and the scalar variant's export (rows packed,
    /// `exportByteCount` bytes each, the most any format takes), allocated on first use
    /// and shared by every format (`exportReferenceName` says whose export it holds).
    private var export: (output: UnsafeMutableRawPointer, reference: UnsafeMutableRawPointer)?
    /// Which workload the export reference holds (`Workload.scalarKey`).
    var exportReferenceName: String?
    private let pages: PageChoice

    /// The three in-place buffers of `kind` for a `width × height` image on `pages`, the input
    /// filled from `raster` (straight RGBA8, `width × height × 4` bytes).
    init(_ kind: AppBuffer, raster: [UInt8], width: Int, height: Int, pages: PageChoice) {
        self.kind = kind
        self.width = width
        self.height = height
        bytesPerRow = kind.bytesPerRow(width: width)
        byteCount = bytesPerRow * height
        self.pages = pages
        input = LargeBuffer.allocate(byteCount: byteCount, alignment: 64, pages)
        work = LargeBuffer.allocate(byteCount: byteCount, alignment: 64, pages)
        reference = LargeBuffer.allocate(byteCount: byteCount, alignment: 64, pages)
        input.initializeMemory(as: UInt8.self, repeating: 0xA5, count: byteCount)
        reference.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        let out = input.assumingMemoryBound(to: UInt8.self)
        raster.withUnsafeBufferPointer { rgba in
            for y in 0..<height {
                let row = out + y * bytesPerRow, source = rgba.baseAddress! + y * width * 4
                if kind == .rgba8Padded {
                    row.update(from: source, count: width * 4)
                    continue
                }
                for x in 0..<width {
                    let a = Self.alpha(x: x, y: y, width: width, height: height)
                    // round(c·a/255): c·a/255 is never a half (255 is odd), so this is exact.
                    @inline(__always) func premultiplied(_ c: UInt8) -> UInt8 { UInt8((2 * Int(c) * a + 255) / 510) }
                    row[4 * x] = premultiplied(source[4 * x + 2])
                    row[4 * x + 1] = premultiplied(source[4 * x + 1])
                    row[4 * x + 2] = premultiplied(source[4 * x])
                    row[4 * x + 3] = UInt8(a)
                }
            }
        }
        work.copyMemory(from: input, byteCount: byteCount)
    }

    deinit {
        input.deallocate()
        work.deallocate()
        reference.deallocate()
        export?.output.deallocate()
        export?.reference.deallocate()
    }

    /// The bytes of the largest export: `width × 8` per row, rows packed.
    var exportByteCount: Int { width * 8 * height }

    /// The exports' destination and reference memory (allocated on first use).
    func exportMemory() -> (output: UnsafeMutableRawPointer, reference: UnsafeMutableRawPointer) {
        if let export { return export }
        let memory = (output: LargeBuffer.allocate(byteCount: exportByteCount, alignment: 64, pages),
                      reference: LargeBuffer.allocate(byteCount: exportByteCount, alignment: 64, pages))
        memory.output.initializeMemory(as: UInt8.self, repeating: 0, count: exportByteCount)
        memory.reference.initializeMemory(as: UInt8.self, repeating: 0, count: exportByteCount)
        export = memory
        return memory
    }

    /// Copies the export's output into its reference and records whose output it is.
    func keepExportReference(named name: String, threads: Int) {
        let memory = exportMemory()
        Parallel.copy(memory.reference, from: UnsafeRawPointer(memory.output), byteCount: exportByteCount, threads: threads)
        exportReferenceName = name
    }

    /// The export's pixel buffer over `memory` (`exportMemory()`), rows packed.
    func exportBuffer(_ memory: UnsafeMutableRawPointer, _ format: ExportFormat) throws(ToolError) -> PixelBuffer {
        do {
            return try PixelBuffer(baseAddress: memory, width: width, height: height,
                                   bytesPerRow: width * format.bytesPerPixel, format: format.pixelFormat())
        } catch {
            throw ToolError("cannot describe the \(format.rawValue) export buffer: \(error)", status: .failure)
        }
    }

    /// The alpha of pixel `(x, y)` of a premultiplied buffer: 255 outside the disc,
    /// `96 + 159·smoothstep(0.6·R, R, r)` inside, rounded.
    static func alpha(x: Int, y: Int, width: Int, height: Int) -> Int {
        let radius = 0.16 * Double(min(width, height))
        let dx = Double(x) + 0.5 - 0.72 * Double(width), dy = Double(y) + 0.5 - 0.35 * Double(height)
        let r = (dx * dx + dy * dy).squareRoot()
        guard r < radius else { return 255 }
        let u = min(max((r - 0.6 * radius) / (0.4 * radius), 0), 1)
        return Int((96 + 159 * u * u * (3 - 2 * u)).rounded())
    }

    /// The pixel buffer over `memory` (one of `input`, `work`, `reference`).
    func buffer(_ memory: UnsafeMutableRawPointer) throws(ToolError) -> PixelBuffer {
        do {
            return try PixelBuffer(baseAddress: memory, width: width, height: height, bytesPerRow: bytesPerRow,
                                   format: kind.format)
        } catch {
            throw ToolError("cannot describe the \(kind.label) buffer: \(error)", status: .failure)
        }
    }

    /// Copies `input` into `work` (untimed, between samples).
    func restoreWork(threads: Int) {
        Parallel.copy(work, from: UnsafeRawPointer(input), byteCount: byteCount, threads: threads)
    }

    /// Copies `work` into `reference` and records whose output it is.
    func keepReference(named name: String, threads: Int) {
        Parallel.copy(reference, from: UnsafeRawPointer(work), byteCount: byteCount, threads: threads)
        referenceName = name
    }

    /// The fraction of pixels whose alpha is below 255.
    var translucentFraction: Double {
        guard kind != .rgba8Padded else { return 0 }
        var count = 0
        for y in 0..<height { for x in 0..<width where Self.alpha(x: x, y: y, width: width, height: height) < 255 { count += 1 } }
        return Double(count) / Double(width * height)
    }

    /// Whether the padding bytes of `work` (between `width × 4` and `bytesPerRow` in
    /// each row) still equal the input's; returns the first row that differs.
    func firstRowWithChangedPadding() -> Int? {
        let rowBytes = width * 4
        guard bytesPerRow > rowBytes else { return nil }
        for y in 0..<height {
            let offset = y * bytesPerRow + rowBytes
            if memcmp(work + offset, input + offset, bytesPerRow - rowBytes) != 0 { return y }
        }
        return nil
    }
}
