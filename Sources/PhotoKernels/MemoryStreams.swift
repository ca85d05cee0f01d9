// Several sequential memory streams in flight at once, for the loops that stream a
// large image through the core, on the processors where that pays.

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel.cpuid) && !PHOTOKERNELS_NO_INTRINSICS
import _Builtin_intrinsics.intel.cpuid
#endif

/// Visits a span's blocks as four interleaved sub-spans, on the processors where that
/// pays, and in order elsewhere.
///
/// A loop that walks one span of memory front to back keeps few of its cache lines in
/// flight: the hardware prefetcher follows a stream one 4 KiB page at a time, and each
/// new page starts with misses to DRAM that the core's reorder window cannot cover.
/// Walking four sub-spans at once, one block of each in turn, keeps four such streams
/// going, so their misses overlap.
///
/// Where the loop says what it reads, each stream also prefetches its lines a little
/// ahead (`Prefetch`), which hides the start of each page as well, unless the loop
/// leaves that to a processor whose own prefetcher keeps ahead (`prefetcherKeepsAhead`).
///
/// The sub-spans start 1 KiB or 3 KiB apart modulo 4 KiB, never a whole number of
/// pages: a load whose address matches a store still in flight in its low 12 bits
/// waits for it (4K aliasing), and sub-spans a multiple of 4 KiB apart would meet that
/// on every block.
///
/// Whether the streams pay depends on the core's own prefetchers, so the walk asks
/// `interleaves`: on an Intel Xeon (Emerald Rapids) the four streams make the in-place
/// `Float` kernels 1.3–1.4× faster at 12 MP, while on AMD's Zen cores one stream in
/// order is the faster walk (Zen 4: the same kernels 1.17–1.32× faster in order; the
/// first-generation Zen: the 8-bit decoder 1.13×). See docs/performance-log.md.
enum MemoryStreams {
    /// Whether `forEachBlock` walks a long span as four interleaved streams: everywhere
    /// but on Zen cores (`interleaves(vendor:)`), which walk in order. Read once, from
    /// the processor the process runs on; builds without the CPUID module (arm64,
    /// `PHOTOKERNELS_NO_INTRINSICS`) interleave.
    static let interleaves: Bool = processor.map { interleaves(vendor: $0.vendor) } ?? true

    /// The processor the process runs on, read once from CPUID: leaf 0's vendor and
    /// leaf 1's family and model (both 0 where leaf 1 is not answered). `nil` in builds
    /// without the CPUID module (arm64, `PHOTOKERNELS_NO_INTRINSICS`) and where CPUID
    /// answers no leaf.
    private static let processor: (vendor: (UInt32, UInt32, UInt32), family: Int, model: Int)? = {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel.cpuid) && !PHOTOKERNELS_NO_INTRINSICS
        var leaves: UInt32 = 0, b: UInt32 = 0, c: UInt32 = 0, d: UInt32 = 0
        guard __get_cpuid(0, &leaves, &b, &c, &d) != 0 else { return nil }
        let vendor = (b, d, c)
        var signature: UInt32 = 0
        if leaves < 1 || __get_cpuid(1, &signature, &b, &c, &d) == 0 { signature = 0 }
        let (family, model) = familyAndModel(signature: signature)
        return (vendor, family, model)
        #else
        return nil
        #endif
    }()

    /// Whether a processor of the CPUID vendor `vendor` (leaf 0's EBX, EDX, ECX: twelve
    /// ASCII bytes, little-endian) gains from interleaved streams: all but AMD's
    /// ("AuthenticAMD") and Hygon's ("HygonGenuine", a Zen core).
    static func interleaves(vendor: (UInt32, UInt32, UInt32)) -> Bool {
        !(vendor == amd || vendor == hygon)
    }

    /// Whether the processor's own prefetcher keeps ahead of a loop that walks one span
    /// in order, so that software prefetches there only cost: on a Zen 4, not on a
    /// Zen 3 (`prefetcherKeepsAhead(vendor:family:model:)`). The loops with streaming
    /// stores (`forEachBlock(_:blockBytes:prefetchingInOrder:ahead:_:)`) and the
    /// colour matrices (the 128-bit schedules' `forEachPixelInPlace`, the two-pixel
    /// schedules' `forEachPair(from:to:pairBytes:prefetchingUnlessAhead:_:last:)`) ask.
    /// Read once, from the processor the process runs on; false in builds without the
    /// CPUID module, where those loops prefetch as every other does (and the streaming
    /// stores' walk, which interleaves there, takes none).
    static let prefetcherKeepsAhead: Bool = processor.map {
        prefetcherKeepsAhead(vendor: $0.vendor, family: $0.family, model: $0.model)
    } ?? false

    /// Whether a processor of the CPUID vendor `vendor`, `family` and `model` is one of
    /// the Zen 4 and Zen 4c EPYC and Ryzen models: AMD's family 19h, models 10h–1Fh,
    /// 60h–7Fh and A0h–AFh (80h–9Fh, which hold other Zen 4 parts, are left out). On
    /// one (an EPYC 9004, model 11h), at 12 MP and one thread, without software
    /// prefetches: the `Float` → 8-bit RGBA encoder with streaming stores ran 1.15–1.27×
    /// as fast natively and 1.05–1.08× in the default build, on 2 MiB and on 4 KiB pages
    /// (at two threads 0.98–1.00×); the default build's one-pixel colour matrices
    /// 1.02–1.14× on 2 MiB pages and 1.01–1.07× on 4 KiB, the native two-pixel ones
    /// 1.03–1.08× and 0.99–1.04× (docs/performance-log.md). The same family's Zen 3
    /// models (00h–0Fh, 20h–5Fh) gained from them (the matrices 1.11–1.27×); later
    /// families are unmeasured and keep them.
    static func prefetcherKeepsAhead(vendor: (UInt32, UInt32, UInt32), family: Int, model: Int) -> Bool {
        vendor == amd && family == 0x19 && (0x10...0x1F ~= model || 0x60...0x7F ~= model || 0xA0...0xAF ~= model)
    }

    /// The family and model of a CPUID signature (leaf 1's EAX), as the vendors'
    /// manuals compose them: the extended family added where the base family is 0Fh,
    /// the extended model prefixed where the base family is 0Fh or 6.
    static func familyAndModel(signature: UInt32) -> (family: Int, model: Int) {
        let baseFamily = Int(signature >> 8 & 0xF), baseModel = Int(signature >> 4 & 0xF)
        let extendedFamily = Int(signature >> 20 & 0xFF), extendedModel = Int(signature >> 16 & 0xF)
        let family = baseFamily == 0xF ? baseFamily + extendedFamily : baseFamily
        let model = baseFamily == 0xF || baseFamily == 6 ? extendedModel << 4 | baseModel : baseModel
        return (family, model)
    }

    // CPUID leaf 0's vendors, EBX, EDX, ECX.
    private static let amd: (UInt32, UInt32, UInt32) = (0x6874_7541, 0x6974_6E65, 0x444D_4163)    // "Auth" "enti" "cAMD"
    private static let hygon: (UInt32, UInt32, UInt32) = (0x6F67_7948, 0x6E65_476E, 0x656E_6975)  // "Hygo" "nGen" "uine"

    /// Spans of fewer blocks go in order: split, their sub-spans would be shorter than
    /// a page or two (48–64 blocks of 64 bytes, 56–64 of 128), too short to be worth a
    /// stream of their own.
    static let minimumBlocks = 256

    /// The blocks per sub-span for `blocks` blocks of `blockBytes` bytes (a power of two,
    /// 16…1024): 0 below `minimumBlocks` blocks, otherwise the largest
    /// `q ≤ blocks / 4` that puts `q × blockBytes` 1 KiB or 3 KiB past a multiple of
    /// 4 KiB (at most half a page's blocks fewer).
    @inline(__always)
    static func blocksPerStream(_ blocks: Int, blockBytes: Int) -> Int {
        guard blocks >= minimumBlocks else { return 0 }
        let q = blocks &>> 2, perPage = 4096 / blockBytes
        let near = perPage &>> 2, far = 3 &* near, r = q % perPage
        return q &- (r >= far ? r &- far : r >= near ? r &- near : r &+ perPage &- far)
    }

    /// Calls `body(k)` once for every `k` in `0..<blocks`, blocks of `blockBytes` bytes
    /// (the largest of the loop's arrays): in the order 0, q, 2q, 3q, 1, q + 1, …, q − 1,
    /// …, 4q − 1 (q = `blocksPerStream`), then the rest in order; in order where q is 0
    /// or `interleaved` is false (`interleaved` defaults to `interleaves`).
    /// `body` must not depend on the order (every block its own pixels).
    ///
    /// No prefetches: `forEachBlock(_:blockBytes:prefetching:ahead:interleaved:_:)` asks
    /// for them. (Two functions, not one with an optional source: an optional chosen at
    /// run time keeps the prefetch a closure whose context is retained on every block,
    /// 50× slower in an encoder.)
    @inline(__always)
    static func forEachBlock(_ blocks: Int, blockBytes: Int, interleaved: Bool = interleaves,
                             _ body: (Int) -> Void) {
        forEachBlock(blocks, blockBytes: blockBytes, requesting: nil, interleaved: interleaved, body)
    }

    /// `forEachBlock(_:blockBytes:interleaved:_:)` with prefetches: every stream
    /// prefetches the lines of `source`, the memory the loop reads (`blockBytes` of it
    /// per block), `ahead` bytes ahead, by default `Prefetch.streamDistance(interleaved:)`
    /// (`forEachBlock(_:blockBytes:requesting:ahead:interleaved:_:)`).
    @inline(__always)
    static func forEachBlock(_ blocks: Int, blockBytes: Int, prefetching source: UnsafeRawPointer,
                             ahead: Int? = nil, interleaved: Bool = interleaves, _ body: (Int) -> Void) {
        forEachBlock(blocks, blockBytes: blockBytes, requesting: { Prefetch.read(source, offset: $0) },
                     ahead: ahead, interleaved: interleaved, body)
    }

    /// `forEachBlock(_:blockBytes:prefetching:ahead:interleaved:_:)` where the walk is
    /// in order (`interleaves` false), and without prefetches where it interleaves or
    /// the processor's own prefetcher keeps ahead (`prefetcherKeepsAhead`):
    /// for loops with streaming stores, which hold the line fill buffers that four
    /// streams' prefetches would also take (on a Xeon an encoder ran 0.93× with them),
    /// while one stream in order gains from them on a Zen 3 (its encoders 1.15–1.2×)
    /// and loses on a Zen 4 (its `Float` → 8-bit encoder 1.05–1.27× as fast without
    /// them).
    @inline(__always)
    static func forEachBlock(_ blocks: Int, blockBytes: Int, prefetchingInOrder source: UnsafeRawPointer,
                             ahead: Int, _ body: (Int) -> Void) {
        if interleaves || prefetcherKeepsAhead {
            forEachBlock(blocks, blockBytes: blockBytes, body)
        } else {
            forEachBlock(blocks, blockBytes: blockBytes, prefetching: source, ahead: ahead, body)
        }
    }

    /// `forEachBlock(_:blockBytes:prefetching:ahead:interleaved:_:)` with each prefetch given to `request`
    /// as a byte offset from the start of the span: in each stream the line `d` bytes
    /// past the first byte of each block that starts a line (of every line of a block
    /// of 128 bytes or more), before the blocks it visits at that step, where `d` is
    /// `ahead`, by default `Prefetch.streamDistance(interleaved: interleaved)`, the
    /// processor's distance whether or not this span is long enough to interleave. Over the walk
    /// every line from `d` to `d` past the span's end is requested once (past the end:
    /// the next row's, or harmless, as a prefetch never faults), before its block is
    /// visited, except the first `d` bytes of the second, third and fourth sub-spans:
    /// the sub-span before each asks for them as it ends, after they were read, as the
    /// first lines of any stream are missed.
    @inline(__always)
    static func forEachBlock(_ blocks: Int, blockBytes: Int, requesting request: ((Int) -> Void)?,
                             ahead: Int? = nil, interleaved: Bool = interleaves, _ body: (Int) -> Void) {
        let q = interleaved ? blocksPerStream(blocks, blockBytes: blockBytes) : 0
        // Blocks per line less one (a mask; blocks are a power of two bytes), and lines
        // per block.
        let lineMask = blockBytes >= 64 ? 0 : 63 / max(blockBytes, 1), lines = max(1, blockBytes &>> 6)
        // The lines of block `k` and of the blocks `q`, `2q`, `3q` after it (`streams`
        // of them), `ahead` bytes ahead.
        let ahead = ahead ?? Prefetch.streamDistance(interleaved: interleaved)
        @inline(__always) func prefetch(_ k: Int, streams: Int) {
            guard let request, k & lineMask == 0 else { return }
            let offset = k &* blockBytes &+ ahead
            for stream in 0..<streams {
                for line in 0..<lines {
                    request(offset &+ stream &* q &* blockBytes &+ line &* 64)
                }
            }
        }
        var k = 0
        while k < q {
            prefetch(k, streams: 4)
            body(k)
            body(k &+ q)
            body(k &+ 2 &* q)
            body(k &+ 3 &* q)
            k &+= 1
        }
        k = 4 &* q
        while k < blocks {
            prefetch(k, streams: 1)
            body(k)
            k &+= 1
        }
    }

    /// Calls `pair(x)` for the pixel pairs `x, x + 1` of pixels `start ..< count`, and
    /// `pixel(x)` for a last pixel left alone: two pairs (`2 × pairBytes` bytes) to a
    /// block of `forEachBlock`, an odd pair after the blocks. The two-pixel loops
    /// (`SIMD8<Float>`, a pair per register) go through it. Each block prefetches the
    /// lines of `source`, the memory the loop reads, ahead (`forEachBlock`).
    @inline(__always)
    static func forEachPair(from start: Int, to count: Int, pairBytes: Int, prefetching source: UnsafeRawPointer,
                            _ pair: (Int) -> Void, last pixel: (Int) -> Void) {
        forEachPair(from: start, to: count, pairBytes: pairBytes,
                    requesting: { Prefetch.read(source, offset: $0) }, pair, last: pixel)
    }

    /// `forEachPair(from:to:pairBytes:prefetching:_:last:)` without the prefetches where
    /// the processor's own prefetcher keeps ahead of the walk (`prefetcherKeepsAhead`),
    /// for the in-place colour matrices: on a Zen 4 the native build's ran 1.03–1.08× as
    /// fast at 12 MP without them on 2 MiB pages in runs of 5 rounds (0.99–1.09× in
    /// runs of 3, by which binary went first), 0.99–1.04× on 4 KiB ones
    /// (docs/performance-log.md). The choice is a test before each block's prefetch, not
    /// a second copy of the walk: with two copies the optimiser called each pair through
    /// a closure.
    @inline(__always)
    static func forEachPair(from start: Int, to count: Int, pairBytes: Int,
                            prefetchingUnlessAhead source: UnsafeRawPointer,
                            _ pair: (Int) -> Void, last pixel: (Int) -> Void) {
        let prefetches = !prefetcherKeepsAhead
        forEachPair(from: start, to: count, pairBytes: pairBytes,
                    requesting: { if prefetches { Prefetch.read(source, offset: $0) } }, pair, last: pixel)
    }

    /// `forEachPair(from:to:pairBytes:prefetching:_:last:)` with each prefetch given to
    /// `request` as a byte offset from pixel 0 (`forEachBlock(_:blockBytes:requesting:ahead:interleaved:_:)`
    /// on the blocks from pixel `start`).
    @inline(__always)
    static func forEachPair(from start: Int, to count: Int, pairBytes: Int, requesting request: ((Int) -> Void)?,
                            _ pair: (Int) -> Void, last pixel: (Int) -> Void) {
        let pairs = (count &- start) &>> 1
        @inline(__always) func block(_ k: Int) {
            pair(start &+ 4 &* k)
            pair(start &+ 4 &* k &+ 2)
        }
        let first = start &* (pairBytes &>> 1)
        forEachBlock(pairs &>> 1, blockBytes: 2 &* pairBytes,
                     requesting: request.map { request in { request(first &+ $0) } }, block)
        var x = start &+ 4 &* (pairs &>> 1)
        if pairs & 1 != 0 {
            pair(x)
            x &+= 2
        }
        if x < count { pixel(x) }
    }
}
