// The colour matrix straight from integer samples to integer samples: the fast path
// that `SamplePipeline` takes when a recipe fuses to one matrix and the raster is
// RGBA in and out at one maxval.
//
// Why it is fast: 8 pixels (one 256-bit register) are loaded as whole 32-bit lanes
// and the channels are picked out with shifts and masks, so the block is in
// structure-of-arrays form without a single shuffle of pixels; an 8-bit channel
// becomes a `Float` with one integer-to-float conversion (exact below 2²⁴); the
// result is clamped with two lane selects the compiler turns into `max`/`min`,
// rounded half to even by adding 2²³, and repacked from the low mantissa bits with
// shifts and ORs. One loop function runs two blocks per step with the block inlined,
// so the matrix stays in registers (or one load away) and no block costs a call.
//
// Why it is exact:
// - 16-bit samples take the reference's own steps in the same order — `v / m`, the
//   `Float` matrix summed left to right, clamp, `· m`, round half to even — so the
//   result equals the scalar path bit for bit (the tests check it).
// - 8-bit samples fold decoding and encoding into the matrix: the block computes
//   `M·v + m·t` instead of `(M·(v/m) + t)·m`, the same real number rounded
//   differently in the last bits of a `Float`, which saves three divisions per pixel.
//   At 8 bits that error is ~1e-5 of a step, so the two disagree only where the value
//   lies that close to a .5 tie, by one step: a few samples in 100 000, well inside
//   SPEC §8's 1 LSB in at most 0.1 % (tested, and checked again by the benchmark).
//   At 16 bits the same folding would miss by ~0.1 %, which is why that path divides.
// The matrix is the one `ColorMatrixKernel` rounded to `Float`: one source for both.

extension ColorMatrixKernel {
    /// Applies the matrix to `count` RGBA pixels of 8-bit samples at `maxval`
    /// (1…255), from `source` to `destination` (which may be the same memory).
    /// Alpha is copied unchanged.
    ///
    /// - Complexity: O(count); no allocation.
    func applyRGBA8(_ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>,
                    count: Int, maxval: Int) {
        let block = PackedMatrix8Bit(self, maxval: maxval)
        let input = UnsafeRawPointer(source), output = UnsafeMutableRawPointer(destination)
        let whole = count / 8
        block.apply(input, output, blocks: whole)
        let rest = count - whole * 8
        guard rest > 0 else { return }
        // The last 1…7 pixels go through the same block code via a zero-padded copy.
        let offset = whole * 32
        var tail = SIMD8<UInt32>()
        withUnsafeMutableBytes(of: &tail) { $0.baseAddress!.copyMemory(from: input + offset, byteCount: rest * 4) }
        withUnsafeMutableBytes(of: &tail) { block.apply(UnsafeRawPointer($0.baseAddress!), $0.baseAddress!, blocks: 1) }
        withUnsafeBytes(of: tail) { (output + offset).copyMemory(from: $0.baseAddress!, byteCount: rest * 4) }
    }

    /// Applies the matrix to `count` RGBA pixels of 16-bit samples at `maxval`
    /// (1…65535), from `source` to `destination` (which may be the same memory).
    /// Alpha is copied unchanged.
    ///
    /// - Complexity: O(count); no allocation.
    func applyRGBA16(_ source: UnsafePointer<UInt16>, _ destination: UnsafeMutablePointer<UInt16>,
                     count: Int, maxval: Int) {
        let block = PackedMatrix16Bit(self, maxval: maxval)
        let input = UnsafeRawPointer(source), output = UnsafeMutableRawPointer(destination)
        let whole = count / 8
        var offset = 0
        for _ in 0..<whole {
            let pixels = input.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt32>.self)
            output.storeBytes(of: block.apply(pixels), toByteOffset: offset, as: SIMD16<UInt32>.self)
            offset &+= 64
        }
        let rest = count - whole * 8
        guard rest > 0 else { return }
        // The last 1…7 pixels go through the same block code via a zero-padded copy.
        var tail = SIMD16<UInt32>()
        withUnsafeMutableBytes(of: &tail) { $0.baseAddress!.copyMemory(from: input + offset, byteCount: rest * 8) }
        let result = block.apply(tail)
        withUnsafeBytes(of: result) { (output + offset).copyMemory(from: $0.baseAddress!, byteCount: rest * 8) }
    }
}

/// 2²³: adding it to a `Float` in [0, 2²³) rounds to an integer (half to even) and
/// leaves that integer in the low mantissa bits; OR-ing an integer below 2²³ into its
/// bit pattern and subtracting 2²³ converts the integer to `Float` exactly (the
/// 16-bit block, whose lanes hold two samples, does that instead of a conversion).
private let magic: Float = 8_388_608
private let magicBits: UInt32 = 0x4B00_0000

/// The matrix broadcast across 8 lanes, for 8 pixels of 8-bit RGBA at a time (one
/// pixel per 32-bit lane, R in the low byte).
private struct PackedMatrix8Bit {
    let m00, m01, m02, m10, m11, m12, m20, m21, m22: SIMD8<Float>
    let t0, t1, t2: SIMD8<Float>
    let maxval, low: SIMD8<Float>

    init(_ k: ColorMatrixKernel, maxval: Int) {
        let m = Float(maxval)
        (m00, m10, m20) = (.init(repeating: k.column0.x), .init(repeating: k.column0.y), .init(repeating: k.column0.z))
        (m01, m11, m21) = (.init(repeating: k.column1.x), .init(repeating: k.column1.y), .init(repeating: k.column1.z))
        (m02, m12, m22) = (.init(repeating: k.column2.x), .init(repeating: k.column2.y), .init(repeating: k.column2.z))
        (t0, t1, t2) = (.init(repeating: k.translation.x * m), .init(repeating: k.translation.y * m),
                        .init(repeating: k.translation.z * m))
        (self.maxval, low) = (.init(repeating: m), .init(repeating: magic))
    }

    /// `round(clamp(y, 0, maxval))` (half to even) in the low mantissa bits; the
    /// exponent bits of 2²³ stay above them. NaN (possible only from absurd matrices
    /// such as ∞ − ∞) becomes 0, as in `SampleCoding.encode`.
    @inline(__always)
    func encode(_ y: SIMD8<Float>) -> SIMD8<UInt32> {
        let zero = SIMD8<Float>(repeating: 0)
        // Written so that the comparison and the replacement use the same operands:
        // that is the shape the compiler emits as one `max` / `min` instruction.
        var c = zero.replacing(with: y, where: y .> zero)
        c = c.replacing(with: maxval, where: c .> maxval)
        return unsafeBitCast(c + low, to: SIMD8<UInt32>.self)
    }

    /// Runs `blocks` blocks of 8 pixels, two per step: two independent dependency
    /// chains for the out-of-order core to overlap. Every block is the same code.
    @inline(never)
    func apply(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, blocks: Int) {
        var offset = 0
        for _ in 0..<blocks / 2 {
            let first = input.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt32>.self)
            let second = input.loadUnaligned(fromByteOffset: offset &+ 32, as: SIMD8<UInt32>.self)
            let (a, b) = (apply(first), apply(second))
            output.storeBytes(of: a, toByteOffset: offset, as: SIMD8<UInt32>.self)
            output.storeBytes(of: b, toByteOffset: offset &+ 32, as: SIMD8<UInt32>.self)
            offset &+= 64
        }
        if blocks % 2 == 1 {
            let last = input.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt32>.self)
            output.storeBytes(of: apply(last), toByteOffset: offset, as: SIMD8<UInt32>.self)
        }
    }

    // `@_transparent` rather than `@inline(__always)`: with two call sites in the
    // loop, Swift 6.3 inlined `@inline(__always)` into only one and called the other
    // (seen in the disassembly), which costs a call and reloads per 8 pixels.
    @_transparent
    func apply(_ v: SIMD8<UInt32>) -> SIMD8<UInt32> {
        let byte = SIMD8<UInt32>(repeating: 0xFF)
        // Integers below 2²⁴ convert to Float exactly; Int32 lanes give the one-instruction conversion.
        let r = SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: v & byte))
        let g = SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: (v &>> 8) & byte))
        let b = SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: (v &>> 16) & byte))
        let red = encode(m00 * r + m01 * g + m02 * b + t0)
        let green = encode(m10 * r + m11 * g + m12 * b + t1)
        let blue = encode(m20 * r + m21 * g + m22 * b + t2)
        // Shifting left by 8 or 16 pushes the exponent bits out of the lane; red's
        // are masked off. Alpha is the input's own byte.
        return (red & byte) | (green &<< 8) | (blue &<< 16) | (v & 0xFF00_0000)
    }
}

/// The matrix broadcast across 8 lanes, for 8 pixels of 16-bit RGBA at a time: each
/// pixel is two 32-bit lanes, `R | G << 16` and `B | A << 16`, split into even and
/// odd lanes. It computes exactly what the scalar path computes.
private struct PackedMatrix16Bit {
    let m00, m01, m02, m10, m11, m12, m20, m21, m22: SIMD8<Float>
    let t0, t1, t2: SIMD8<Float>
    let low, maxval: SIMD8<Float>

    init(_ k: ColorMatrixKernel, maxval: Int) {
        (m00, m10, m20) = (.init(repeating: k.column0.x), .init(repeating: k.column0.y), .init(repeating: k.column0.z))
        (m01, m11, m21) = (.init(repeating: k.column1.x), .init(repeating: k.column1.y), .init(repeating: k.column1.z))
        (m02, m12, m22) = (.init(repeating: k.column2.x), .init(repeating: k.column2.y), .init(repeating: k.column2.z))
        (t0, t1, t2) = (.init(repeating: k.translation.x), .init(repeating: k.translation.y),
                        .init(repeating: k.translation.z))
        (low, self.maxval) = (.init(repeating: magic), .init(repeating: Float(maxval)))
    }

    /// `SampleCoding.encode` on 8 lanes: clamp to [0, 1], scale, round half to even.
    /// (The inputs are finite: decoded samples through a finite matrix.)
    @inline(__always)
    func encode(_ y: SIMD8<Float>) -> SIMD8<UInt32> {
        var c = y
        c.replace(with: 0, where: c .< 0)
        c.replace(with: 1, where: c .> 1)
        return unsafeBitCast(c * maxval + low, to: SIMD8<UInt32>.self) & 0xFFFF
    }

    @inline(__always)
    func apply(_ v: SIMD16<UInt32>) -> SIMD16<UInt32> {
        let (rg, ba) = (v.evenHalf, v.oddHalf)
        let word = SIMD8<UInt32>(repeating: 0xFFFF)
        // Decode exactly as `SampleCoding.decode`: the integer as a Float, divided by maxval.
        let r = (unsafeBitCast((rg & word) | magicBits, to: SIMD8<Float>.self) - low) / maxval
        let g = (unsafeBitCast((rg &>> 16) | magicBits, to: SIMD8<Float>.self) - low) / maxval
        let b = (unsafeBitCast((ba & word) | magicBits, to: SIMD8<Float>.self) - low) / maxval
        let red = encode(m00 * r + m01 * g + m02 * b + t0)
        let green = encode(m10 * r + m11 * g + m12 * b + t1)
        let blue = encode(m20 * r + m21 * g + m22 * b + t2)
        var out = SIMD16<UInt32>()
        out.evenHalf = red | (green &<< 16)
        out.oddHalf = blue | (ba & 0xFFFF_0000)
        return out
    }
}
