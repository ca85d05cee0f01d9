// The memory pages under the benchmark's large buffers.
//
// Every peer in `compare.sh` holds its images in numpy arrays, and numpy asks Linux to
// back each array of 4 MiB or more with transparent huge pages (2 MiB,
// `madvise(MADV_HUGEPAGE)`). A 12 MP `Float` image then needs 96 TLB entries instead of
// 49 152, and a streaming loop misses the TLB once per 2 MiB instead of once per 4 KiB.
// On 4 KiB pages this benchmark's `Float` rows ran 5–8 % slower than on huge pages (an
// AMD EPYC 9004, 12 MP, one thread), which is the harness, not the kernels; so its
// buffers get the same advice as the peers', and `--pages base` measures them on 4 KiB
// pages.

#if canImport(Glibc)
import Glibc
#endif

/// Which pages back the benchmark's images and rasters (`--pages`).
enum PageChoice: String, CaseIterable, Sendable {
    /// 2 MiB transparent huge pages where Linux offers them on request (its
    /// `transparent_hugepage/enabled` is `always` or `madvise`), as numpy's arrays get.
    case huge
    /// 4 KiB pages (`MADV_NOHUGEPAGE`, so even where Linux makes huge pages unasked).
    case base

    /// Linux's transparent huge page mode (`always`, `madvise` or `never`), or nil where
    /// the system has none (not Linux, or a kernel without them).
    static let systemMode: String? = {
        guard let text = try? String(contentsOfFile: "/sys/kernel/mm/transparent_hugepage/enabled", encoding: .utf8),
              let open = text.firstIndex(of: "["), let close = text[open...].firstIndex(of: "]")
        else { return nil }
        return String(text[text.index(after: open)..<close])
    }()

    /// What the buffers actually get: `huge` only where it was asked for and the system
    /// grants it on request; the report's `pages`.
    var effective: PageChoice {
        self == .huge && (Self.systemMode == "always" || Self.systemMode == "madvise") ? .huge : .base
    }
}

/// Large buffers for the fixture, advised to the kernel before their first write, when
/// the page choice is still open.
enum LargeBuffer {
    /// The huge page size on x86-64 and on arm64 with 4 KiB base pages.
    static let hugePageBytes = 2 << 20

    /// Gives Linux `pages` as advice for the whole huge pages inside
    /// `start ..< start + byteCount`. Call it before the memory is first written: a page
    /// already faulted in keeps its size. Failure is harmless (the pages stay as they
    /// are), so it is ignored. Does nothing outside Linux.
    static func advise(_ start: UnsafeMutableRawPointer, byteCount: Int, _ pages: PageChoice) {
        #if os(Linux)
        let first = Int(bitPattern: start)
        let lower = (first &+ hugePageBytes &- 1) & ~(hugePageBytes &- 1)
        let upper = (first &+ byteCount) & ~(hugePageBytes &- 1)
        guard upper > lower, let aligned = UnsafeMutableRawPointer(bitPattern: lower) else { return }
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
        array(count: source.count, pages) { buffer in
            source.withUnsafeBufferPointer { source in
                for i in 0..<source.count { (buffer.baseAddress! + i).initialize(to: transform(source[i])) }
            }
        }
    }

    /// `byteCount` bytes aligned to `alignment`, on `pages`, uninitialised.
    static func allocate(byteCount: Int, alignment: Int, _ pages: PageChoice) -> UnsafeMutableRawPointer {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: alignment)
        advise(buffer, byteCount: byteCount, pages)
        return buffer
    }
}
