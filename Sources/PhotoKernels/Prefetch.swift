// Software prefetches: a loop that streams an image through the core asks for the
// lines it will touch a few KiB ahead, so that their misses to DRAM overlap the work on
// the lines before them. The hardware prefetcher follows a stream a 4 KiB page at a
// time and starts each page late, and the reorder window of these loops covers far
// less than one miss to DRAM; a plain load cannot stand in for a prefetch, as it must
// complete before it retires.
//
// Swift has no prefetch of its own, and the toolchain's Clang declares `_m_prefetch`
// as a `const` builtin, which Swift imports as having no effect and deletes. LLVM's own
// intrinsic, `llvm.prefetch`, is reached by declaring it under its LLVM name
// (`@_silgen_name`): the Swift compiler lowers through LLVM, which takes a function of
// that name for the intrinsic on every target (on x86-64 `prefetcht0`, and `prefetchw`
// for a write where the build targets a CPU with it, as `-target-cpu native` does on a
// recent Xeon; `prfm` on arm64). The declaration's types must lower to exactly the
// intrinsic's (`ptr`, three `i32`s: an optional pointer, say, fails LLVM's verifier in a
// debug build), and its last three operands must be constants, as they are here.
// `PHOTOKERNELS_NO_INTRINSICS` turns it off with the other intrinsic uses, and every
// loop then runs without the hints. CI checks that a release build contains them.

#if !PHOTOKERNELS_NO_INTRINSICS
/// LLVM's `llvm.prefetch` on a pointer in address space 0: `write` 0 (to read) or 1 (to
/// write), `locality` 0…3 (3: keep in every cache level), `cache` 1 (data).
@_silgen_name("llvm.prefetch.p0")
private func llvmPrefetch(_ address: UnsafeRawPointer, _ write: Int32, _ locality: Int32, _ cache: Int32)
#endif

/// Prefetch hints for the loops that stream images through the core.
enum Prefetch {
    /// How far ahead a loop that walks its span front to back prefetches, in bytes: at
    /// 12 MP the fused 8-bit blocks ran fastest 4 KiB ahead, of 1, 2 and 4 KiB
    /// (docs/performance.md, "Software prefetches from pure Swift").
    static let distance = 4096

    /// How far ahead `MemoryStreams` prefetches in each of its streams, in bytes, on a
    /// processor whose walk interleaves four streams (`MemoryStreams.interleaves`) or
    /// walks in order: 2 KiB in each of four streams (8 KiB ahead in all), where the
    /// in-place `Float` kernels ran fastest of 1, 2 and 4 KiB on a Xeon; 4 KiB in order,
    /// which ran 1.02–1.06× as fast as 2 KiB on a Zen 4 with the image on 2 MiB pages
    /// (8 KiB no faster; on 4 KiB pages 2 and 4 KiB ran alike, and no prefetch
    /// 0.90–0.93× as fast; docs/performance-log.md). Each is its own measurement, not
    /// `distance`, although the in-order one has the same value.
    @inline(__always)
    static func streamDistance(interleaved: Bool) -> Int { interleaved ? 2048 : 4096 }

    /// Asks for the cache line holding `base + offset`, to be read soon. A hint: it never
    /// faults, and the address may lie past the end of the memory being read (it is
    /// computed as an integer, never as a pointer past the end).
    @inline(__always)
    static func read(_ base: UnsafeRawPointer, offset: Int) {
        #if !PHOTOKERNELS_NO_INTRINSICS
        llvmPrefetch(address(base, offset), 0, 3, 1)
        #endif
    }

    /// Asks for the cache line holding `base + offset`, to be written soon (with ordinary
    /// stores: each store to a line not in the cache first reads it). As `read`, a hint.
    @inline(__always)
    static func write(_ base: UnsafeRawPointer, offset: Int) {
        #if !PHOTOKERNELS_NO_INTRINSICS
        llvmPrefetch(address(base, offset), 1, 3, 1)
        #endif
    }

    /// Asks for the lines of the block of `bytes` bytes at `offset`, `distance` bytes
    /// ahead, in a loop that walks its span front to back: for writing in
    /// `destination` and, where it is another buffer, for reading in `source`. A block
    /// smaller than a line asks at the block that starts each line.
    @inline(__always)
    static func block(at offset: Int, bytes: Int, destination: UnsafeRawPointer, source: UnsafeRawPointer,
                      inPlace: Bool) {
        guard bytes >= 64 || offset & 63 == 0 else { return }
        for line in stride(from: 0, to: max(bytes, 64), by: 64) {
            write(destination, offset: offset &+ distance &+ line)
            if !inPlace { read(source, offset: offset &+ distance &+ line) }
        }
    }

    /// The same for a loop whose destination advances at another rate than its source
    /// (a widening block writes two bytes for each it reads): the lines of the source's
    /// block of `bytes` at `offset`, for reading, and of the destination's block of
    /// `destinationBytes` at `destinationOffset`, for writing, `distance` bytes ahead in each.
    @inline(__always)
    static func block(at offset: Int, bytes: Int, source: UnsafeRawPointer, destination: UnsafeRawPointer,
                      destinationOffset: Int, destinationBytes: Int) {
        if bytes >= 64 || offset & 63 == 0 {
            for line in stride(from: 0, to: max(bytes, 64), by: 64) { read(source, offset: offset &+ distance &+ line) }
        }
        if destinationBytes >= 64 || destinationOffset & 63 == 0 {
            for line in stride(from: 0, to: max(destinationBytes, 64), by: 64) {
                write(destination, offset: destinationOffset &+ distance &+ line)
            }
        }
    }

    /// `base + offset` computed as an integer: the address may lie past the end of
    /// `base`'s memory, which a prefetch may name and pointer arithmetic may not.
    @inline(__always)
    private static func address(_ base: UnsafeRawPointer, _ offset: Int) -> UnsafeRawPointer {
        UnsafeRawPointer(bitPattern: Int(bitPattern: base) &+ offset).unsafelyUnwrapped
    }
}
