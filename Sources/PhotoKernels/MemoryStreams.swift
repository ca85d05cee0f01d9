// Several sequential memory streams in flight at once, for the loops that stream a
// large image through the core.

/// Visits a span's blocks as four interleaved sub-spans.
///
/// A loop that walks one span of memory front to back keeps few of its cache lines in
/// flight: the hardware prefetcher follows a stream one 4 KiB page at a time, and each
/// new page starts with misses to DRAM that the core's reorder window cannot cover.
/// Walking four sub-spans at once, one block of each in turn, keeps four such streams
/// going, so their misses overlap.
///
/// The sub-spans start 1 KiB or 3 KiB apart modulo 4 KiB, never a whole number of
/// pages: a load whose address matches a store still in flight in its low 12 bits
/// waits for it (4K aliasing), and sub-spans a multiple of 4 KiB apart would meet that
/// on every block.
enum MemoryStreams {
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
    /// …, 4q − 1 (q = `blocksPerStream`), then the rest in order; in order where q is 0.
    /// `body` must not depend on the order (every block its own pixels).
    @inline(__always)
    static func forEachBlock(_ blocks: Int, blockBytes: Int, _ body: (Int) -> Void) {
        let q = blocksPerStream(blocks, blockBytes: blockBytes)
        var k = 0
        while k < q {
            body(k)
            body(k &+ q)
            body(k &+ 2 &* q)
            body(k &+ 3 &* q)
            k &+= 1
        }
        k = 4 &* q
        while k < blocks {
            body(k)
            k &+= 1
        }
    }

    /// Calls `pair(x)` for the pixel pairs `x, x + 1` of pixels `start ..< count`, and
    /// `pixel(x)` for a last pixel left alone: two pairs (`2 × pairBytes` bytes) to a
    /// block of `forEachBlock`, an odd pair after the blocks. The two-pixel loops
    /// (`SIMD8<Float>`, a pair per register) go through it.
    @inline(__always)
    static func forEachPair(from start: Int, to count: Int, pairBytes: Int,
                            _ pair: (Int) -> Void, last pixel: (Int) -> Void) {
        let pairs = (count &- start) &>> 1
        @inline(__always) func block(_ k: Int) {
            pair(start &+ 4 &* k)
            pair(start &+ 4 &* k &+ 2)
        }
        forEachBlock(pairs &>> 1, blockBytes: 2 &* pairBytes, block)
        var x = start &+ 4 &* (pairs &>> 1)
        if pairs & 1 != 0 {
            pair(x)
            x &+= 2
        }
        if x < count { pixel(x) }
    }
}
