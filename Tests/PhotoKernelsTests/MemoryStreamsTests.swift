import Foundation
import Testing
@testable import PhotoKernels

@Suite("Memory streams: a span's blocks as four interleaved sub-spans")
struct MemoryStreamsTests {
    /// The blocks `forEachBlock` visits, in its order, as interleaved streams (where the
    /// span is long enough) or in order.
    private func visits(_ blocks: Int, blockBytes: Int = 64, interleaved: Bool) -> [Int] {
        var order: [Int] = []
        MemoryStreams.forEachBlock(blocks, blockBytes: blockBytes, interleaved: interleaved) { order.append($0) }
        return order
    }

    /// What `forEachBlock` does while prefetching, in order: `.visit(k)` for block `k`,
    /// `.request(offset)` for a line it prefetches.
    private enum Event: Equatable {
        case visit(Int)
        case request(Int)
    }

    private func events(_ blocks: Int, blockBytes: Int, interleaved: Bool) -> [Event] {
        var events: [Event] = []
        MemoryStreams.forEachBlock(blocks, blockBytes: blockBytes, requesting: { events.append(.request($0)) },
                                   interleaved: interleaved) {
            events.append(.visit($0))
        }
        return events
    }

    @Test("every block exactly once, for counts around the threshold and with every remainder",
          arguments: [true, false])
    func everyBlockOnce(interleaved: Bool) {
        let threshold = MemoryStreams.minimumBlocks
        for blockBytes in [16, 64, 128] {
            for blocks in [0, 1, 2, 3, 4, 63, 64, threshold - 1, threshold, threshold + 1, threshold + 2, threshold + 3,
                           1024, 4 * threshold + 7, 10_000] {
                #expect(visits(blocks, blockBytes: blockBytes, interleaved: interleaved).sorted() == Array(0..<blocks),
                        "\(blocks) blocks of \(blockBytes) bytes")
            }
        }
    }

    @Test("prefetching visits the same blocks in the same order, for blocks of 16 to 256 bytes",
          arguments: [true, false])
    func prefetchingKeepsTheOrder(interleaved: Bool) {
        let threshold = MemoryStreams.minimumBlocks
        for blockBytes in [16, 32, 64, 128, 256] {
            for blocks in [0, 1, 5, threshold - 1, threshold, threshold + 3, 1030, 4 * threshold + 7] {
                let visited = events(blocks, blockBytes: blockBytes, interleaved: interleaved).compactMap { event -> Int? in
                    if case .visit(let k) = event { return k } else { return nil }
                }
                #expect(visited == visits(blocks, blockBytes: blockBytes, interleaved: interleaved),
                        "\(blocks) blocks of \(blockBytes) bytes")
                let source = UnsafeMutableRawPointer.allocate(byteCount: max(1, blocks * blockBytes), alignment: 64)
                var order: [Int] = []
                MemoryStreams.forEachBlock(blocks, blockBytes: blockBytes, prefetching: source,
                                           interleaved: interleaved) { order.append($0) }
                source.deallocate()
                #expect(order == visited, "\(blocks) blocks of \(blockBytes) bytes, through the source's prefetches")
            }
        }
    }

    @Test("every line from the distance on is requested once, before its block is visited but at the sub-spans' starts",
          arguments: [true, false])
    func prefetchLinesOnceAhead(interleaved: Bool) {
        let threshold = MemoryStreams.minimumBlocks
        for blockBytes in [16, 32, 64, 128, 256] {
            for blocks in [1, 5, threshold - 1, threshold, threshold + 3, 1030, 4 * threshold + 7, 5000] {
                let label = "\(blocks) blocks of \(blockBytes) bytes"
                let q = interleaved ? MemoryStreams.blocksPerStream(blocks, blockBytes: blockBytes) : 0
                let distance = Prefetch.streamDistance(interleaved: interleaved)
                var requested: [Int] = [], seen = Set<Int>(), late = Set<Int>()
                for event in events(blocks, blockBytes: blockBytes, interleaved: interleaved) {
                    switch event {
                    case .request(let offset):
                        requested.append(offset)
                        seen.insert(offset)
                    case .visit(let k):
                        // The block's lines that lie past the distance must have been asked for.
                        for line in stride(from: k * blockBytes / 64 * 64, to: (k + 1) * blockBytes, by: 64)
                        where line >= distance && !seen.contains(line) {
                            late.insert(line)
                        }
                    }
                }
                let end = (blocks * blockBytes + 63) / 64 * 64
                #expect(requested.sorted() == Array(stride(from: distance, to: end + distance, by: 64)), "\(label)")
                // Only the first `distance` bytes of the second to fourth sub-spans come
                // late: the sub-span before each reaches them as it ends.
                let starts = q == 0 ? [] : (1...3).map { $0 * q * blockBytes }
                let unexpected = late.filter { line in !starts.contains { $0 <= line && line < $0 + distance } }
                #expect(unexpected.isEmpty, "\(label): lines visited before their request, from \(unexpected.min() ?? 0)")
                if q * blockBytes >= distance || !interleaved {
                    #expect(late.count == starts.count * distance / 64, "\(label): \(late.count) late lines")
                }
            }
        }
    }

    // Only that the calls are safe: whether the build emits them at all is checked on the
    // release binary by CI.
    @Test("a prefetch is a hint: far past the end of an allocation, or of any mapping, it does not fault")
    func prefetchPastTheEnd() {
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 64)
        defer { bytes.deallocate() }
        bytes.storeBytes(of: 0x5A, as: UInt8.self)
        for offset in [64, Prefetch.distance, Prefetch.streamDistance(interleaved: true), 1 << 30, 1 << 44] {
            Prefetch.read(bytes, offset: offset)
            Prefetch.write(bytes, offset: offset)
        }
        #expect(bytes.load(as: UInt8.self) == 0x5A)
    }

    @Test("a walk in order prefetches farther ahead than each of four interleaved streams, no farther than all four")
    func distances() {
        let alone = Prefetch.streamDistance(interleaved: false), each = Prefetch.streamDistance(interleaved: true)
        #expect(each < alone && alone <= 4 * each, "\(alone) in order, \(each) per stream")
        // Whole lines, so that every line is requested once (`prefetchLinesOnceAhead`).
        #expect(alone % 64 == 0 && each % 64 == 0)
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
        #expect(visits(threshold - 1, interleaved: true) == Array(0..<(threshold - 1)))
        // 1030 blocks of 64 bytes: sub-spans of 240 from 0, 240, 480, 720; blocks 960…1029 follow.
        let order = visits(1030, interleaved: true)
        #expect(Array(order.prefix(8)) == [0, 240, 480, 720, 1, 241, 481, 721])
        #expect(Array(order[956..<960]) == [239, 479, 719, 959])
        #expect(Array(order.suffix(70)) == Array(960..<1030))
    }

    @Test("not interleaved, every length goes in order")
    func inOrder() {
        for blocks in [0, 1, MemoryStreams.minimumBlocks, 1030, 10_000] {
            #expect(visits(blocks, interleaved: false) == Array(0..<blocks), "\(blocks) blocks")
        }
    }

    /// A CPUID vendor string as leaf 0 returns it: EBX, EDX, ECX, four bytes each,
    /// little-endian.
    private func vendor(_ name: String) -> (UInt32, UInt32, UInt32) {
        let bytes = Array(name.utf8)
        func word(_ i: Int) -> UInt32 {
            (0..<4).reduce(0) { $0 | UInt32(bytes[i + $1]) << (8 * UInt32($1)) }
        }
        return (word(0), word(4), word(8))
    }

    @Test("Zen cores walk in order, every other vendor interleaves")
    func interleavesByVendor() {
        #expect(!MemoryStreams.interleaves(vendor: vendor("AuthenticAMD")))
        #expect(!MemoryStreams.interleaves(vendor: vendor("HygonGenuine")))
        #expect(MemoryStreams.interleaves(vendor: vendor("GenuineIntel")))
        #expect(MemoryStreams.interleaves(vendor: vendor("CentaurHauls")))
        // One byte off is another vendor.
        #expect(MemoryStreams.interleaves(vendor: vendor("AuthenticAMC")))
    }

    @Test("CPUID signatures give the family and model the vendors' manuals name: extended family only under base family 0Fh, extended model under 0Fh and 6")
    func familyAndModel() {
        let cases: [(UInt32, Int, Int)] = [
            (0x00A1_0F11, 0x19, 0x11),  // EPYC 9004 (Zen 4)
            (0x00A0_0F11, 0x19, 0x01),  // EPYC 7003 (Zen 3)
            (0x00A6_0F12, 0x19, 0x61),  // Ryzen 7000 (Zen 4)
            (0x0083_0F10, 0x17, 0x31),  // EPYC 7002 (Zen 2)
            (0x00B0_0F21, 0x1A, 0x02),  // EPYC 9005 (Zen 5)
            (0x0090_0F00, 0x18, 0x00),  // Hygon Dhyana
            (0x0008_06F8, 0x06, 0x8F),  // Xeon (Sapphire Rapids)
            (0x0000_0F29, 0x0F, 0x02),  // Pentium 4: base family 0Fh, no extension
            (0x0001_0543, 0x05, 0x04),  // Pentium: the extended model is not read
        ]
        for (signature, family, model) in cases {
            let found = MemoryStreams.familyAndModel(signature: signature)
            #expect(found.family == family && found.model == model,
                    "\(String(signature, radix: 16)): \(found) instead of (\(family), \(model))")
        }
    }

    @Test("software prefetches in the in-order walks that ask (beside streaming stores, in the colour matrices) are left out on Zen 4 models only: AMD family 19h, models 10h–1Fh, 60h–7Fh, A0h–AFh")
    func prefetcherKeepsAheadOnZen4() {
        let amd = vendor("AuthenticAMD")
        let zen4 = [0x10, 0x11, 0x18, 0x1F, 0x60, 0x61, 0x74, 0x78, 0x7F, 0xA0, 0xAF]
        let zen3 = [0x00, 0x01, 0x08, 0x0F, 0x20, 0x21, 0x44, 0x50, 0x5F]
        let others = [0x80, 0x9F, 0xB0, 0xFF]
        for model in zen4 {
            #expect(MemoryStreams.prefetcherKeepsAhead(vendor: amd, family: 0x19, model: model), "model \(model)")
        }
        for model in zen3 + others {
            #expect(!MemoryStreams.prefetcherKeepsAhead(vendor: amd, family: 0x19, model: model), "model \(model)")
        }
        // Other families (Zen 2, Zen 5) and other vendors with a Zen 4's numbers keep them.
        #expect(!MemoryStreams.prefetcherKeepsAhead(vendor: amd, family: 0x17, model: 0x31))
        #expect(!MemoryStreams.prefetcherKeepsAhead(vendor: amd, family: 0x1A, model: 0x11))
        #expect(!MemoryStreams.prefetcherKeepsAhead(vendor: vendor("HygonGenuine"), family: 0x19, model: 0x11))
        #expect(!MemoryStreams.prefetcherKeepsAhead(vendor: vendor("GenuineIntel"), family: 0x19, model: 0x11))
        #expect(!MemoryStreams.prefetcherKeepsAhead(vendor: vendor("AuthenticAMC"), family: 0x19, model: 0x11))
    }

    @Test("the walk this process takes follows the vendor the kernel reports")
    func interleavesOnThisProcessor() throws {
        #if os(Linux) && arch(x86_64) && canImport(_Builtin_intrinsics.intel.cpuid) && !PHOTOKERNELS_NO_INTRINSICS
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let line = try #require(cpuinfo.split(separator: "\n").first { $0.hasPrefix("vendor_id") })
        let name = try #require(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces))
        #expect(MemoryStreams.interleaves == MemoryStreams.interleaves(vendor: vendor(name)), "\(name)")
        #endif
    }

    @Test("whether this process leaves out those prefetches follows the vendor, family and model the kernel reports")
    func prefetcherKeepsAheadOnThisProcessor() throws {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel.cpuid) && !PHOTOKERNELS_NO_INTRINSICS
        #if os(Linux)
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        func field(_ key: String) throws -> String {
            let line = try #require(cpuinfo.split(separator: "\n").first {
                $0.split(separator: ":").first?.trimmingCharacters(in: .whitespaces) == key
            })
            return try #require(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces))
        }
        let name = try field("vendor_id")
        let family = try #require(Int(try field("cpu family"))), model = try #require(Int(try field("model")))
        #expect(MemoryStreams.prefetcherKeepsAhead
                    == MemoryStreams.prefetcherKeepsAhead(vendor: vendor(name), family: family, model: model),
                "\(name) family \(family) model \(model)")
        #endif
        #else
        // Without the CPUID module the value is false: the loops that ask keep their
        // prefetches (and the streaming stores' walk, which interleaves there, takes none).
        #expect(!MemoryStreams.prefetcherKeepsAhead)
        #endif
    }
}

@Suite("Memory streams: the two-pixel loops' pairs and last pixel")
struct MemoryStreamsPairTests {
    @Test("the pairs' prefetches start from pixel start, 16 bytes a pixel: every line once, the distance ahead")
    func prefetchesFromTheStart() {
        for start in 0...1 {
            for count in [start + 1, 1027, 4099] {
                let distance = Prefetch.streamDistance(interleaved: MemoryStreams.interleaves)
                var requested: [Int] = []
                MemoryStreams.forEachPair(from: start, to: count, pairBytes: 32, requesting: { requested.append($0) },
                                          { _ in }, last: { _ in })
                // The blocks of four pixels from `start`: their bytes from 16·start on.
                let first = 16 * start, blockBytes = (count - start) / 4 * 64
                let end = first + (blockBytes + 63) / 64 * 64
                #expect(requested.sorted() == Array(stride(from: first + distance, to: end + distance, by: 64)),
                        "start \(start), count \(count)")
            }
        }
    }

    @Test("every pixel from start to count once, in pairs and at most one alone at the end")
    func everyPixelOnce() {
        for start in 0...1 {
            for count in [start, start + 1, start + 2, start + 3, 1027, 1030, 2049, 4099] {
                let pixels = UnsafeMutableRawPointer.allocate(byteCount: max(1, 16 * count), alignment: 64)
                defer { pixels.deallocate() }
                for prefetching in [false, true] {
                    var seen = [Int](repeating: 0, count: count)
                    var alone: [Int] = []
                    func pair(_ x: Int) {
                        seen[x] += 1
                        seen[x + 1] += 1
                    }
                    func last(_ x: Int) {
                        seen[x] += 1
                        alone.append(x)
                    }
                    if prefetching {
                        MemoryStreams.forEachPair(from: start, to: count, pairBytes: 32, prefetching: pixels, pair, last: last)
                    } else {
                        MemoryStreams.forEachPair(from: start, to: count, pairBytes: 32, requesting: nil, pair, last: last)
                    }
                    let label = "start \(start), count \(count), \(prefetching ? "prefetching" : "no prefetching")"
                    #expect(seen == (0..<count).map { $0 < start ? 0 : 1 }, "\(label)")
                    #expect(alone == ((count - start) % 2 == 1 ? [count - 1] : []), "\(label)")
                }
            }
        }
    }
}
