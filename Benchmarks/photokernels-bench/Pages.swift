// The memory pages under the benchmark's large buffers.
//
// Every peer in `compare.sh` holds its images in numpy arrays, and numpy asks Linux to
// back each array of 4 MiB or more with transparent huge pages (2 MiB,
// `madvise(MADV_HUGEPAGE)`). A 12 MP `Float` image (4032 × 3024, 186 MiB) then lies on
// 92 huge pages and a few hundred base pages at its ends instead of 47 628 base pages, and a streaming loop misses the TLB once per 2 MiB instead of once per 4 KiB.
// Side by side on different pages, the comparison would measure the pages rather than
// the kernels (docs/benchmarks.md has the difference), so this benchmark's buffers get
// the same advice as the peers', and `--pages base` measures them on 4 KiB pages.

import Foundation
#if os(Linux)
import Glibc
#endif

/// Which pages the benchmark asks for under its images and rasters (`--pages`).
enum PageChoice: String, CaseIterable, Sendable {
    /// 2 MiB transparent huge pages where Linux grants them on request (its
    /// `transparent_hugepage/enabled` is `always` or `madvise`), as numpy's arrays get.
    case huge
    /// The system's base pages, 4 KiB on x86-64 (`MADV_NOHUGEPAGE`, also where Linux
    /// would make huge pages unasked).
    case base

    /// Linux's transparent huge page mode (`always`, `madvise` or `never`), or nil where
    /// the system has none (not Linux, or a kernel without them).
    static let systemMode: String? = {
        guard let text = try? String(contentsOfFile: "/sys/kernel/mm/transparent_hugepage/enabled", encoding: .utf8)
        else { return nil }
        return mode(fromEnabled: text)
    }()

    /// The bracketed choice of a `transparent_hugepage/enabled` file (`always [madvise]
    /// never` gives `madvise`), or nil if it has none.
    static func mode(fromEnabled text: String) -> String? {
        guard let open = text.firstIndex(of: "["), let close = text[open...].firstIndex(of: "]") else { return nil }
        return String(text[text.index(after: open)..<close])
    }

    /// The advice that takes effect, the report's `pages`: `huge` only where it was
    /// asked for and the system grants huge pages on request. Whether the kernel then
    /// finds free 2 MiB pages at each fault is its own business (it falls back to base
    /// pages), and is not checked.
    var effective: PageChoice {
        self == .huge && (Self.systemMode == "always" || Self.systemMode == "madvise") ? .huge : .base
    }
}

/// Large buffers for the fixture, advised to the kernel before their first write.
enum LargeBuffer {
    /// Gives Linux `pages` as advice for the whole base pages inside
    /// `start ..< start + byteCount`, as numpy advises its arrays; the kernel backs each
    /// 2 MiB-aligned part of an advised range with one huge page as it is first
    /// touched. Only for memory about to be written whole, and not yet written by its
    /// owner: a page already faulted in keeps its size, and `malloc` may hand back
    /// memory that an earlier, freed allocation wrote, so those pages are dropped first
    /// (`MADV_DONTNEED`; the next write faults in a fresh one). Failure is harmless (the
    /// pages stay as they are), so it is ignored. Does nothing outside Linux.
    private static func advise(_ start: UnsafeMutableRawPointer, byteCount: Int, _ pages: PageChoice) {
        #if os(Linux)
        let page = sysconf(Int32(_SC_PAGESIZE))
        guard page > 0 else { return }
        let first = Int(bitPattern: start)
        let lower = (first &+ page &- 1) / page &* page, upper = (first &+ byteCount) / page &* page
        guard upper > lower, let aligned = UnsafeMutableRawPointer(bitPattern: lower) else { return }
        _ = madvise(aligned, upper &- lower, MADV_DONTNEED)
        _ = madvise(aligned, upper &- lower, pages == .huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)
        #endif
    }

    /// An array of `count` elements on `pages`, initialised by `body` after the advice.
    static func array<Element>(count: Int, _ pages: PageChoice,
                               initializingWith body: (UnsafeMutableBufferPointer<Element>) -> Void) -> [Element] {
        [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
            if let base = buffer.baseAddress {
                advise(UnsafeMutableRawPointer(base), byteCount: count * MemoryLayout<Element>.stride, pages)
            }
            body(UnsafeMutableBufferPointer(rebasing: buffer[..<count]))
            initialized = count
        }
    }

    /// `count` copies of `value` on `pages`.
    static func array<Element>(repeating value: Element, count: Int, _ pages: PageChoice) -> [Element] {
        array(count: count, pages) { $0.initialize(repeating: value) }
    }

    /// `source` copied onto `pages`, each element converted by `transform`.
    static func array<Source, Element>(_ source: [Source], _ pages: PageChoice,
                                       _ transform: (Source) -> Element) -> [Element] {
        array(count: source.count, pages) { _ = $0.initialize(from: source.lazy.map(transform)) }
    }

    /// `byteCount` bytes aligned to `alignment`, on `pages`, uninitialised.
    static func allocate(byteCount: Int, alignment: Int, _ pages: PageChoice) -> UnsafeMutableRawPointer {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: alignment)
        advise(buffer, byteCount: byteCount, pages)
        return buffer
    }
}
