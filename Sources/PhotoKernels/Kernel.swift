import Dispatch
import Foundation

/// Which inner loop a kernel runs. Every kernel has both; they compute the same
/// formula and agree within SPEC §8 (`|a − b| ≤ 1e-5` on inputs in [−1, 2]).
public enum KernelVariant: String, Sendable, CaseIterable, Codable {
    /// The readable reference: one `Float` channel at a time, written like the formula.
    case scalar
    /// The schedule: one `SIMD4<Float>` per pixel, matrix columns broadcast.
    case simd4
}

/// Where a row lies in its image, for kernels whose result depends on position
/// (the vignette). Colour kernels ignore it.
public struct RowLocation: Sendable, Equatable {
    /// The row index in the whole image, 0 at the top.
    public var y: Int
    /// The column, in the whole image, of the row's first pixel: 0 unless the row is a
    /// piece of a tile or band.
    public var x0: Int = 0
    /// The whole image's width in pixels.
    public var imageWidth: Int
    /// The image's height in pixels.
    public var imageHeight: Int

    /// A row `y` of an image `imageWidth × imageHeight`.
    public init(y: Int, x0: Int = 0, imageWidth: Int, imageHeight: Int) {
        self.y = y
        self.x0 = x0
        self.imageWidth = imageWidth
        self.imageHeight = imageHeight
    }
}

/// A per-pixel operation that runs in place over one row of straight-alpha RGBA
/// `Float` pixels (SPEC §0).
///
/// A kernel is a small `Sendable` value holding its parameters, resolved once (a
/// matrix rounded to `Float`, a radius squared); `apply` neither allocates, throws,
/// nor knows about files or threads — the row-band driver (`FloatImage.apply(_:variant:threads:)`)
/// does that. Colour kernels never change alpha and never clamp.
public protocol PixelKernel: Sendable {
    /// A short name for reports and benchmarks, e.g. `"saturation"`.
    var name: String { get }

    /// Applies the kernel in place to `row`, the pixels `x = 0 ..< row.count` of row
    /// `location.y`, with the inner loop `variant`.
    ///
    /// - Complexity: O(row.count).
    func apply(_ row: UnsafeMutableBufferPointer<SIMD4<Float>>, at location: RowLocation, variant: KernelVariant)

    /// The kind of work the kernel does, which tells an `EditPlan` how it may fuse it:
    /// `.pixel(self)` unless the kernel declares itself a tone, affine or positional
    /// stage.
    var stage: Stage { get }
}

/// The whole pixels of `pixelBytes` bytes (a power of two) from `p` to the next
/// `boundary`-byte boundary (a power of two, at least `pixelBytes`): 0 when `p` is on
/// one, `nil` when pixels starting at `p` never reach one (`p` not aligned to
/// `pixelBytes`). The fused blocks, the RGBA decoder and the 8-bit encoder count
/// the pixels they take alone with it; the two-pixel `Float` schedules keep the 0-or-1
/// form below (written through this one, the native colour matrix compiled to
/// another, shorter `applySIMD4` that was not measured).
@inline(__always)
func pixelsBeforeBoundary(_ p: UnsafeRawPointer, boundary: Int, pixelBytes: Int) -> Int? {
    let offset = Int(bitPattern: p) & (boundary &- 1)
    guard offset & (pixelBytes &- 1) == 0 else { return nil }
    return ((boundary &- offset) & (boundary &- 1)) / pixelBytes
}

/// The pixels (0 or 1) that a two-pixel schedule takes alone at the start of a run of
/// `count` pixels at `p`, so that its `SIMD8<Float>` loads and stores fall on 32-byte
/// boundaries where the build targets AVX2. Pixels of `SIMD4<Float>` are only 16-byte
/// aligned (a large array's elements start 48 bytes into a page), and otherwise every
/// other 32-byte access would span two cache lines: a split load or store, which on
/// Intel cores takes a second access. Other builds split a `SIMD8` into 16-byte
/// accesses, which never span two lines: 0 there.
@inline(__always)
func pixelsBeforePairBoundary(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int) -> Int {
    #if canImport(TargetFeatures.AVX2)
    min(count, (Int(bitPattern: p) &>> 4) & 1)
    #else
    0
    #endif
}

/// Replaces R, G, B of the pixel at `pixel` (16 bytes, `SIMD4<Float>` RGBA, 16-byte
/// aligned) with lanes 0–2 of `colour(v)`, `v` the pixel; its alpha keeps its bits,
/// whatever they are (a signalling NaN too).
///
/// The 128-bit schedules keep alpha this way: its four bytes are loaded on their own
/// and stored back over the new pixel, two scalar memory operations where a blend would
/// take three instructions on the vector ports that bound these loops (SSE2 has no
/// `blendps`: `and`, `and`, `or`); the fused adjustments at 12 MP ran 1.05–1.21× as
/// fast in the baseline build on a Xeon. The alpha is loaded before the pixel: loaded
/// after it, the optimiser takes it from the vector with a shuffle and a move.
@inline(__always)
func replaceColour(ofPixelAt pixel: UnsafeMutableRawPointer, _ colour: (SIMD4<Float>) -> SIMD4<Float>) {
    let alpha = pixel.load(fromByteOffset: 12, as: UInt32.self)
    let v = pixel.load(as: SIMD4<Float>.self)
    pixel.storeBytes(of: colour(v), as: SIMD4<Float>.self)
    pixel.storeBytes(of: alpha, toByteOffset: 12, as: UInt32.self)
}

/// `colour` with its fourth lane replaced by `pixel`'s, bit for bit (a signalling NaN
/// too): a lane moved, no arithmetic. In SSE2 two `shufps` and no register copy.
@inline(__always)
func keepingAlpha(of pixel: SIMD4<Float>, in colour: SIMD4<Float>) -> SIMD4<Float> {
    var result = colour
    result.w = pixel.w
    return result
}

/// Replaces R, G, B of each of `count` pixels with lanes 0–2 of `colour(v)`, `v` the
/// pixel; alpha keeps its bits (`replaceColour(ofPixelAt:_:)`). Four pixels (one
/// 64-byte block) per step, a long span's blocks through `MemoryStreams`, with
/// `prefetching` asking for the lines ahead, then the last pixels one at a time: every
/// pixel once.
///
/// The prefetches serve even the loops their arithmetic bounds (the 128-bit colour
/// matrices, about 16 instructions a pixel in SSE2) on a Zen 3, where the baseline
/// build's matrices at 12 MP ran 1.11–1.27× as fast with them at one thread and
/// 1.05–1.14× at two, but only cost on a Zen 4, whose own prefetcher keeps ahead of
/// such a loop (`MemoryStreams.prefetcherKeepsAhead`): there the matrices ran
/// 1.02–1.14× as fast without them on 2 MiB pages, 1.01–1.07× on 4 KiB ones
/// (docs/performance-log.md). The choice takes two copies of the walk, each the
/// instructions of a walk chosen at compile time; the vignette's constant spans pass
/// `true`, unmeasured without.
@inline(__always)
func forEachPixelInPlace(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                         prefetching: Bool = !MemoryStreams.prefetcherKeepsAhead,
                         _ colour: (SIMD4<Float>) -> SIMD4<Float>) {
    let raw = UnsafeMutableRawPointer(p)
    @inline(__always) func block(_ k: Int) {
        replaceColour(ofPixelAt: raw + k &* 64, colour)
        replaceColour(ofPixelAt: raw + (k &* 64 &+ 16), colour)
        replaceColour(ofPixelAt: raw + (k &* 64 &+ 32), colour)
        replaceColour(ofPixelAt: raw + (k &* 64 &+ 48), colour)
    }
    if prefetching {
        MemoryStreams.forEachBlock(count &>> 2, blockBytes: 64, prefetching: raw, block)
    } else {
        MemoryStreams.forEachBlock(count &>> 2, blockBytes: 64, block)
    }
    for i in (count & ~3)..<count { replaceColour(ofPixelAt: raw + i &* 16, colour) }
}

/// The walk of a two-pass schedule over `count` pixels, 64 at a time: first `group` on
/// each four pixels of a chunk, with the first one's index in the chunk (a last group
/// of one to three padded with zero pixels), each line asked for 4 KiB ahead
/// (`Prefetch`); then `pixel` on each pixel of the chunk, with its index. The
/// schedules keep what the first pass computes in buffers of 64 entries (vibrance's
/// factors and lumas, monochrome's tones): where each pixel took its values straight
/// from the vectors' lanes, the optimiser moved their arithmetic into the pixel's own
/// lanes, with a branch per lane.
@inline(__always)
func forEachChunkInTwoPasses(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                             group: (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, Int) -> Void,
                             pixel: (UnsafeMutablePointer<SIMD4<Float>>, Int) -> Void) {
    var done = 0
    while done < count {
        let q = p + done, n = min(64, count &- done)
        var k = 0
        while k &+ 4 <= n {
            Prefetch.write(UnsafeRawPointer(q + k), offset: Prefetch.distance)
            group(q[k], q[k &+ 1], q[k &+ 2], q[k &+ 3], k)
            k &+= 4
        }
        if k < n {
            let zero = SIMD4<Float>()
            group(q[k], k &+ 1 < n ? q[k &+ 1] : zero, k &+ 2 < n ? q[k &+ 2] : zero, zero, k)
        }
        for j in 0..<n { pixel(q + j, j) }
        done &+= n
    }
}

/// A pointer that may cross into `concurrentPerform`'s closure: each band touches
/// only its own rows, so no two threads write the same memory.
struct SendablePointer<Pointee>: @unchecked Sendable {
    let base: UnsafeMutablePointer<Pointee>
}

/// Splits `rows` rows into bands and runs `body` on each, on up to `threads`
/// threads with `DispatchQueue.concurrentPerform`.
///
/// Bands are contiguous so each thread streams through memory; results never depend
/// on the thread count because every kernel is per pixel.
enum RowBands {
    /// The number of threads to use when a caller passes `nil`: every active core.
    static var defaultThreads: Int { ProcessInfo.processInfo.activeProcessorCount }

    static func forEach(rows: Int, threads: Int?, _ body: (Range<Int>) -> Void) {
        let threads = max(1, min(threads ?? defaultThreads, rows))
        if threads == 1 {
            body(0..<rows)
            return
        }
        // A few bands per thread smooths out an uneven start without costing locality.
        let bands = min(rows, threads * 4)
        withoutActuallyEscaping(body) { body in
            let box = UncheckedBox(body)
            DispatchQueue.concurrentPerform(iterations: bands) { band in
                let start = rows * band / bands, end = rows * (band + 1) / bands
                box.value(start..<end)
            }
        }
    }
}

/// Lets a closure that only writes disjoint memory cross into `concurrentPerform`.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension FloatImage {
    /// Applies `kernel` in place to every row, in row bands on `threads` threads.
    ///
    /// - Parameters:
    ///   - kernel: the operation.
    ///   - variant: `.simd4` (default) or the `.scalar` reference.
    ///   - threads: how many threads; `nil` means every active core, a value below 1
    ///     means 1, and no more than one per row is used. The result is the same for
    ///     every thread count.
    /// - Complexity: O(width × height); no allocation beyond a copy-on-write of
    ///   shared storage.
    public mutating func apply(_ kernel: some PixelKernel, variant: KernelVariant = .simd4, threads: Int? = nil) {
        apply([kernel], variant: variant, threads: threads)
    }

    /// Applies `kernels` in order, each row passing through all of them while it is
    /// in cache (one pass over the image).
    ///
    /// - Complexity: O(width × height × kernels.count).
    public mutating func apply(_ kernels: [any PixelKernel], variant: KernelVariant = .simd4, threads: Int? = nil) {
        guard !kernels.isEmpty else { return }
        let width = self.width, height = self.height
        withUnsafeMutablePixels { buffer in
            let base = SendablePointer(base: buffer.baseAddress!)
            RowBands.forEach(rows: height, threads: threads) { rows in
                for y in rows {
                    let row = UnsafeMutableBufferPointer(start: base.base + y * width, count: width)
                    let location = RowLocation(y: y, imageWidth: width, imageHeight: height)
                    for kernel in kernels {
                        kernel.apply(row, at: location, variant: variant)
                    }
                }
            }
        }
    }

    /// A copy of the image with `kernel` applied; see `apply(_:variant:threads:)`.
    public func applying(_ kernel: some PixelKernel, variant: KernelVariant = .simd4, threads: Int? = nil) -> FloatImage {
        var copy = self
        copy.apply(kernel, variant: variant, threads: threads)
        return copy
    }

    /// A copy of the image with `kernels` applied in order.
    public func applying(_ kernels: [any PixelKernel], variant: KernelVariant = .simd4, threads: Int? = nil) -> FloatImage {
        var copy = self
        copy.apply(kernels, variant: variant, threads: threads)
        return copy
    }
}
