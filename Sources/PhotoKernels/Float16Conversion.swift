// Conversions between `Float` and IEEE 754 half precision (`Float16`, binary16), four
// lanes at once, in integer and `Float` SIMD operations that baseline x86-64 (SSE2)
// has. A build targeting a CPU with F16C converts with `vcvtph2ps` and `vcvtps2ph`;
// the baseline build has no such instruction and converts each lane by a library call
// (`__extendhfsf2`, `__truncsfhf2`), some 10–14 ns a pixel of four samples each way.
// These give the same bits as `Float(h)` and `Float16(x)` for every input, NaNs included
// (widening sets a NaN's quiet bit and keeps its payload; rounding keeps a NaN's sign,
// sets its quiet bit and keeps the top 9 bits of its payload), which the tests check
// against the toolchain's own conversion for all 2¹⁶ halves and the release-built
// exactness check for all 2³² floats.
//
// The method is the known one (F. Giesen, "Half to float done quic", 2012, and his
// float-to-half variants): move the exponent and significand fields by a shift and
// rebias the exponent with an integer addition; subnormal halves go through one `Float`
// operation against a power of two, exact when widening, and when rounding the one
// that rounds them.
//
// The floating-point environment: like Swift itself, these assume the default
// rounding mode, to nearest with ties to even (under another mode the subnormal
// rounding would follow it, and +0 would widen to −0 rounding down, where the
// integer path always rounds to nearest). Flushing subnormals to zero (FTZ, DAZ)
// cannot change a result: the widening subtraction's operands are normal `Float`s and
// its result normal or zero, a `Float` subnormal read as 0 still rounds to ±0, and the
// rounding sum is at least 0.5.

/// `Float` ↔ `Float16` conversions four lanes at a time in SSE2 operations, bit for bit
/// those of `Float(h)` and `Float16(x)`; where the build is x86-64 without F16C, the
/// row codecs' (FourSampleRows.swift, and `HalfChunk` for the formats of one to three
/// samples) and the downscaler's reader's.
enum Float16Conversion {
    /// The `Float` values of four halves given as their bits: exactly `Float(h)` for
    /// every bit pattern (a signalling NaN made quiet, its payload kept).
    ///
    /// Complexity: 17 SIMD operations, no branch.
    @inline(__always)
    static func widened(_ bits: SIMD4<UInt16>) -> SIMD4<Float> {
        let h = SIMD4<UInt32>(truncatingIfNeeded: bits)
        let sign = (h & 0x8000) &<< 16
        let magnitude = h & 0x7FFF
        // Exponent and significand in the `Float`'s fields, the exponent rebiased from
        // 15 to 127 (+112).
        let shifted = magnitude &<< 13
        var w = shifted &+ 0x3800_0000
        let m = SIMD4<Int32>(truncatingIfNeeded: magnitude)
        // Infinity and NaN (exponent 31): the exponent on to 255 (+112 again), and a
        // NaN's quiet bit set.
        let special = m .> 0x7BFF
        w = w.replacing(with: w &+ 0x3800_0000, where: special)
        w = w.replacing(with: w | 0x0040_0000, where: m .> 0x7C00)
        // Zero and subnormals (exponent 0): `m·2⁻²⁴` is `(1 + m/1024)·2⁻¹⁴ − 2⁻¹⁴`,
        // the first term the fields with exponent 113; the subtraction is exact.
        let tiny = unsafeBitCast(w &+ 0x0080_0000, to: SIMD4<Float>.self) - SIMD4<Float>(repeating: 0x1p-14)
        w = w.replacing(with: unsafeBitCast(tiny, to: SIMD4<UInt32>.self), where: m .< 0x0400)
        return unsafeBitCast(w | sign, to: SIMD4<Float>.self)
    }

    /// The bits of four `Float`s rounded to half precision, to nearest with ties to
    /// even: exactly `Float16(x).bitPattern` for every `x` (from 65520, halfway past
    /// the largest half, 65504, on: infinity; a NaN quiet, its payload's top 9 bits
    /// kept).
    ///
    /// Complexity: about 25 SIMD operations, no branch.
    @inline(__always)
    static func rounded(_ x: SIMD4<Float>) -> SIMD4<UInt16> {
        SIMD4<UInt16>(truncatingIfNeeded: roundedWords(x))
    }

    /// `rounded(_:)`'s bits, each in the low half of a 32-bit lane (the high half 0),
    /// for callers that put them together in 32-bit lanes.
    @inline(__always)
    static func roundedWords(_ x: SIMD4<Float>) -> SIMD4<UInt32> {
        let bits = unsafeBitCast(x, to: SIMD4<UInt32>.self)
        let sign = bits & 0x8000_0000
        let f = bits ^ sign
        let m = SIMD4<Int32>(truncatingIfNeeded: f)
        // Normal halves: rebias the exponent (−112), add just under half an ulp of
        // the half plus the kept significand's lowest bit (ties to even), and drop the
        // 13 bits below the half's significand. A carry out of the significand moves
        // the exponent on, up to infinity (0x7C00) from 65520.
        var o = (f &+ 0xC800_0FFF &+ ((f &>> 13) & 1)) &>> 13
        // Below 2⁻¹⁴ (subnormal halves and zero): adding 0.5, whose ulp is 2⁻²⁴, the
        // half's, rounds `|x|` to a multiple of 2⁻²⁴ (ties to even), which the
        // significand's low bits then hold.
        let sum = unsafeBitCast(f, to: SIMD4<Float>.self) + SIMD4<Float>(repeating: 0.5)
        o = o.replacing(with: unsafeBitCast(sum, to: SIMD4<UInt32>.self) &- 0x3F00_0000, where: m .< 0x3880_0000)
        // 65536 and beyond, and infinity.
        o = o.replacing(with: SIMD4(repeating: 0x7C00), where: m .> 0x477F_FFFF)
        // NaN: quiet, the payload's top 9 bits.
        o = o.replacing(with: ((f &>> 13) & 0x01FF) | 0x7E00, where: m .> 0x7F80_0000)
        return o | (sign &>> 16)
    }
}
