// Clamps of `Float` lanes to [0, m], one `maxps` and one `minps` per 128 bits in every
// x86-64 build. Written as selects (`zero.replacing(with: x, where: x .> zero)`), the
// native build gets `vmaxps` and `vminps`, but the baseline x86-64 build (SSE2) turns
// the select against 0 into an AND of the comparison's mask with x (`xorps`, `cmpltps`,
// `andps`) and copies m before each `minps`. There the clamps call SSE's `maxps` and
// `minps` through the Clang module of Intel intrinsics, like the byte packing; other
// builds keep the selects, which give the same lanes.

#if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && !canImport(TargetFeatures.AVX2)
import _Builtin_intrinsics.intel
#endif

/// `x > 0 ? x : 0` in every lane: NaN, −0 and negative lanes give +0.
///
/// In the baseline x86-64 build `maxps(x, 0)`, which returns its second operand when
/// either is NaN or both are zero: the same lanes.
@_transparent
func positivePart(_ x: SIMD4<Float>) -> SIMD4<Float> {
    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && !canImport(TargetFeatures.AVX2)
    return _mm_max_ps(x, SIMD4<Float>())
    #else
    let zero = SIMD4<Float>()
    return zero.replacing(with: x, where: x .> zero)
    #endif
}

/// `positivePart` on eight lanes (two 128-bit halves in the baseline x86-64 build).
@_transparent
func positivePart(_ x: SIMD8<Float>) -> SIMD8<Float> {
    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && !canImport(TargetFeatures.AVX2)
    return SIMD8(lowHalf: positivePart(x.lowHalf), highHalf: positivePart(x.highHalf))
    #else
    let zero = SIMD8<Float>()
    return zero.replacing(with: x, where: x .> zero)
    #endif
}

/// `positivePart` on sixteen lanes (the blocks of builds that target AVX-512).
@_transparent
func positivePart(_ x: SIMD16<Float>) -> SIMD16<Float> {
    let zero = SIMD16<Float>()
    return zero.replacing(with: x, where: x .> zero)
}

/// `x` clamped to [0, m] in every lane, NaN to 0: `positivePart(x)`, then `m` where
/// that exceeds it (`m` positive, not NaN).
///
/// In the baseline x86-64 build `minps(c, m)`, `c < m ? c : m`: the same lanes, as `c`
/// is never NaN and `m` is positive, and `c` is the register it overwrites, so `m` is
/// not copied first.
@_transparent
func clamped(_ x: SIMD4<Float>, upTo m: SIMD4<Float>) -> SIMD4<Float> {
    let c = positivePart(x)
    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && !canImport(TargetFeatures.AVX2)
    return _mm_min_ps(c, m)
    #else
    return c.replacing(with: m, where: c .> m)
    #endif
}

/// `clamped(_:upTo:)` on eight lanes.
@_transparent
func clamped(_ x: SIMD8<Float>, upTo m: SIMD8<Float>) -> SIMD8<Float> {
    let c = positivePart(x)
    #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && !canImport(TargetFeatures.AVX2)
    return SIMD8(lowHalf: _mm_min_ps(c.lowHalf, m.lowHalf), highHalf: _mm_min_ps(c.highHalf, m.highHalf))
    #else
    return c.replacing(with: m, where: c .> m)
    #endif
}

/// `clamped(_:upTo:)` on sixteen lanes.
@_transparent
func clamped(_ x: SIMD16<Float>, upTo m: SIMD16<Float>) -> SIMD16<Float> {
    let c = positivePart(x)
    return c.replacing(with: m, where: c .> m)
}
