// Non-temporal (streaming) stores: a large destination that is written once and not
// read back soon — a fresh Float image decoded from 8-bit samples, 16 bytes per pixel —
// goes to memory without first being read into the cache (a normal store reads each
// line before writing it, a third more traffic). Reached from pure Swift through the
// toolchain's Clang module of Intel intrinsics; everywhere else the portable store is
// the fallback. In-place work and small, cache-resident buffers keep ordinary stores.
// `PHOTOKERNELS_NO_INTRINSICS` (a `-D` compilation condition) turns off every use of
// that module here and in BytePacking.swift, so that an x86-64 build
// compiles and tests the fallbacks that builds without it (arm64) run; it also turns
// off the prefetch hints of Prefetch.swift and the CPUID vendor check of
// MemoryStreams.swift (such a build walks in four streams on every processor).

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
import _Builtin_intrinsics.intel
#endif
import Synchronization

enum StreamingStores {
    /// Destinations at least this large (bytes) take streaming stores: well past the
    /// last-level cache share of one core, where the data would be evicted anyway.
    static let threshold = 4 << 20

    /// Whether this build has streaming stores.
    static var available: Bool {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
        true
        #else
        false
        #endif
    }

    /// Stores 8 floats at `p` bypassing the cache where available: one 32-byte store
    /// where the build targets AVX2 (`p` 32-byte aligned), two 16-byte ones in other
    /// x86-64 builds (`p` 16-byte aligned).
    @inline(__always)
    static func store(_ v: SIMD8<Float>, to p: UnsafeMutableRawPointer) {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        _mm256_stream_ps(p, v)
        #elseif arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
        let f = p.assumingMemoryBound(to: Float.self)
        _mm_stream_ps(f, v.lowHalf)
        _mm_stream_ps(f + 4, v.highHalf)
        #else
        p.storeBytes(of: v, as: SIMD8<Float>.self)
        #endif
    }

    /// Stores 16 floats, one 64-byte line at `p` (64-byte aligned), bypassing the cache
    /// where available: one store where the build targets AVX-512, else as two `store`s.
    @inline(__always)
    static func storeLine(_ v: SIMD16<Float>, to p: UnsafeMutableRawPointer) {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX512)
        _mm512_stream_ps(p, v)
        #else
        store(v.lowHalf, to: p)
        store(v.highHalf, to: p + 32)
        #endif
    }

    /// Stores 16 bytes at `p` (16-byte aligned) bypassing the cache where available.
    @inline(__always)
    static func store(_ v: SIMD16<UInt8>, to p: UnsafeMutableRawPointer) {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
        _mm_stream_si128(p.assumingMemoryBound(to: __m128i.self), unsafeBitCast(v, to: __m128i.self))
        #else
        p.storeBytes(of: v, as: SIMD16<UInt8>.self)
        #endif
    }

    /// Stores 32 bytes at `p` bypassing the cache where available: one 32-byte store
    /// where the build targets AVX2 (`p` 32-byte aligned), two 16-byte ones in other
    /// x86-64 builds (`p` 16-byte aligned), ordinary stores elsewhere.
    @inline(__always)
    static func store(_ v: SIMD32<UInt8>, to p: UnsafeMutableRawPointer) {
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && canImport(TargetFeatures.AVX2)
        _mm256_stream_si256(p.assumingMemoryBound(to: __m256i.self), unsafeBitCast(v, to: __m256i.self))
        #else
        store(v.lowHalf, to: p)
        store(v.highHalf, to: p + 16)
        #endif
    }

    /// Orders the streaming stores before anything that follows (they are weakly
    /// ordered): an `mfence`, which the standard library reaches portably.
    @inline(__always)
    static func fence() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
    }
}
