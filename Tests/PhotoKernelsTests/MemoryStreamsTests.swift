import Testing
@testable import PhotoKernels

@Suite("Memory streams: a span's blocks as four interleaved sub-spans")
struct MemoryStreamsTests {
    /// The blocks `forEachBlock` visits, in its order.
    private func visits(_ blocks: Int, blockBytes: Int = 64) -> [Int] {
        var order: [Int] = []
        MemoryStreams.forEachBlock(blocks, blockBytes: blockBytes) { order.append($0) }
        return order
    }

    @Test("every block exactly once, for counts around the threshold and with every remainder")
    func everyBlockOnce() {
        let threshold = MemoryStreams.minimumBlocks
        for blockBytes in [16, 64, 128] {
            for blocks in [0, 1, 2, 3, 4, 63, 64, threshold - 1, threshold, threshold + 1, threshold + 2, threshold + 3,
                           1024, 4 * threshold + 7, 10_000] {
                #expect(visits(blocks, blockBytes: blockBytes).sorted() == Array(0..<blocks), "\(blocks) blocks of \(blockBytes) bytes")
            }
        }
    }

    @Test("sub-spans 1 KiB or 3 KiB past a whole number of pages, at most half a page's blocks short of a quarter")
    func subSpansOffPageMultiples() {
        for blockBytes in [16, 32, 64, 128, 256] {
            for blocks in 256...1300 {
                let q = MemoryStreams.blocksPerStream(blocks, blockBytes: blockBytes)
                #expect([1024, 3072].contains(q * blockBytes % 4096), "\(blocks) × \(blockBytes) B: q = \(q)")
                #expect(q <= blocks / 4 && blocks / 4 - q < 2048 / blockBytes, "\(blocks) × \(blockBytes) B: q = \(q)")
            }
        }
        // 1024 blocks of 64 bytes (a 4096-pixel piece): 240 per stream, 15 KiB apart.
        #expect(MemoryStreams.blocksPerStream(1024, blockBytes: 64) == 240)
        #expect(MemoryStreams.blocksPerStream(255, blockBytes: 64) == 0)
    }

    @Test("below four streams' worth, in order; from there, one block of each sub-span in turn, then the rest")
    func order() {
        let threshold = MemoryStreams.minimumBlocks
        #expect(visits(threshold - 1) == Array(0..<(threshold - 1)))
        // 1030 blocks of 64 bytes: sub-spans of 240 from 0, 240, 480, 720; blocks 960…1029 follow.
        let order = visits(1030)
        #expect(Array(order.prefix(8)) == [0, 240, 480, 720, 1, 241, 481, 721])
        #expect(Array(order[956..<960]) == [239, 479, 719, 959])
        #expect(Array(order.suffix(70)) == Array(960..<1030))
    }
}

@Suite("Memory streams: the two-pixel loops' pairs and last pixel")
struct MemoryStreamsPairTests {
    @Test("every pixel from start to count once, in pairs and at most one alone at the end")
    func everyPixelOnce() {
        for start in 0...1 {
            for count in [start, start + 1, start + 2, start + 3, 1027, 1030, 2049, 4099] {
                var seen = [Int](repeating: 0, count: count)
                var alone: [Int] = []
                MemoryStreams.forEachPair(from: start, to: count, pairBytes: 32, { x in
                    seen[x] += 1
                    seen[x + 1] += 1
                }, last: { x in
                    seen[x] += 1
                    alone.append(x)
                })
                #expect(seen == (0..<count).map { $0 < start ? 0 : 1 }, "start \(start), count \(count)")
                #expect(alone == ((count - start) % 2 == 1 ? [count - 1] : []), "start \(start), count \(count)")
            }
        }
    }
}
