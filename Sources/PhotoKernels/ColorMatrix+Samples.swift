// The colour matrix straight from integer samples to integer samples: the fast path
// that `SamplePipeline` takes when a recipe fuses to one matrix and the raster is
// RGBA in and out at one maxval.
//
// Why it is fast: 16 pixels (8 for 16-bit samples) are loaded as whole 32-bit lanes
// and the channels are picked out with shifts and masks, so the block is in
// structure-of-arrays form without a single shuffle; a sample becomes a `Float` by
// OR-ing it into the mantissa of 2²³ and subtracting 2²³ (no conversion
// instruction); the result is rounded half to even by adding 2²³ and read back from
// the low mantissa bits; everything else is plain `*`, `+` and lane masks.
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
        let block = PackedMatrix16(self, maxval: maxval)
        forEachBlock(of: 16, bytesPerPixel: 4, count: count, UnsafeRawPointer(source), UnsafeMutableRawPointer(destination),
                     block.apply8)
    }

    /// Applies the matrix to `count` RGBA pixels of 16-bit samples at `maxval`
    /// (1…65535), from `source` to `destination` (which may be the same memory).
    /// Alpha is copied unchanged.
    ///
    /// - Complexity: O(count); no allocation.
    func applyRGBA16(_ source: UnsafePointer<UInt16>, _ destination: UnsafeMutablePointer<UInt16>,
                     count: Int, maxval: Int) {
        let block = PackedMatrix8(self, maxval: maxval)
        forEachBlock(of: 8, bytesPerPixel: 8, count: count, UnsafeRawPointer(source), UnsafeMutableRawPointer(destination),
                     block.apply16)
    }
}

/// Runs `body` on every whole block of `pixels` pixels, then on the tail through a
/// zero-padded 64-byte copy, so every pixel of the image sees the same block code.
@inline(__always)
private func forEachBlock(of pixels: Int, bytesPerPixel: Int, count: Int,
                          _ source: UnsafeRawPointer, _ destination: UnsafeMutableRawPointer,
                          _ body: (UnsafeRawPointer, UnsafeMutableRawPointer) -> Void) {
    let blockBytes = pixels * bytesPerPixel  // 64: one SIMD16<UInt32>
    let whole = count - count % pixels
    var offset = 0
    while offset < whole * bytesPerPixel {
        body(source + offset, destination + offset)
        offset += blockBytes
    }
    let tailBytes = (count - whole) * bytesPerPixel
    guard tailBytes > 0 else { return }
    withUnsafeTemporaryAllocation(byteCount: blockBytes, alignment: 16) { tail in
        let bytes = tail.baseAddress!
        bytes.initializeMemory(as: UInt8.self, repeating: 0, count: blockBytes)
        bytes.copyMemory(from: source + offset, byteCount: tailBytes)
        body(UnsafeRawPointer(bytes), bytes)
        (destination + offset).copyMemory(from: bytes, byteCount: tailBytes)
    }
}

/// 2²³: adding it to a `Float` in [0, 2²³) rounds to an integer (half to even) and
/// leaves that integer in the low mantissa bits; OR-ing an integer below 2²³ into its
/// bit pattern and subtracting it converts the integer to `Float` exactly.
private let magic: Float = 8_388_608
private let magicBits: UInt32 = 0x4B00_0000

/// The matrix broadcast across 16 lanes, for 16 pixels of 8-bit RGBA at a time.
/// Held in local `let`s of one struct so the compiler keeps them in registers.
private struct PackedMatrix16 {
    let m00, m01, m02, m10, m11, m12, m20, m21, m22: SIMD16<Float>
    let t0, t1, t2: SIMD16<Float>
    let low, high: SIMD16<Float>

    init(_ k: ColorMatrixKernel, maxval: Int) {
        let m = Float(maxval)
        (m00, m10, m20) = (.init(repeating: k.column0.x), .init(repeating: k.column0.y), .init(repeating: k.column0.z))
        (m01, m11, m21) = (.init(repeating: k.column1.x), .init(repeating: k.column1.y), .init(repeating: k.column1.z))
        (m02, m12, m22) = (.init(repeating: k.column2.x), .init(repeating: k.column2.y), .init(repeating: k.column2.z))
        (t0, t1, t2) = (.init(repeating: k.translation.x * m), .init(repeating: k.translation.y * m),
                        .init(repeating: k.translation.z * m))
        (low, high) = (.init(repeating: magic), .init(repeating: magic + m))
    }

    /// `round(clamp(y, 0, maxval))` in the low bits of the result (y already + 2²³).
    @inline(__always)
    func encode(_ y: SIMD16<Float>) -> SIMD16<UInt32> {
        var y = y
        y.replace(with: low, where: y .< low)
        y.replace(with: high, where: y .> high)
        return unsafeBitCast(y, to: SIMD16<UInt32>.self) & 0xFFFF
    }

    @inline(__always)
    func apply8(_ source: UnsafeRawPointer, _ destination: UnsafeMutableRawPointer) {
        let v = source.loadUnaligned(as: SIMD16<UInt32>.self)
        let byte = SIMD16<UInt32>(repeating: 0xFF)
        let r = unsafeBitCast((v & byte) | magicBits, to: SIMD16<Float>.self) - low
        let g = unsafeBitCast(((v &>> 8) & byte) | magicBits, to: SIMD16<Float>.self) - low
        let b = unsafeBitCast(((v &>> 16) & byte) | magicBits, to: SIMD16<Float>.self) - low
        let red = encode(m00 * r + m01 * g + m02 * b + t0 + low)
        let green = encode(m10 * r + m11 * g + m12 * b + t1 + low)
        let blue = encode(m20 * r + m21 * g + m22 * b + t2 + low)
        let out = red | (green &<< 8) | (blue &<< 16) | (v & 0xFF00_0000)
        destination.storeBytes(of: out, as: SIMD16<UInt32>.self)
    }
}

/// The matrix broadcast across 8 lanes, for 8 pixels of 16-bit RGBA at a time: each
/// pixel is two 32-bit lanes, `R | G << 16` and `B | A << 16`, split into even and
/// odd lanes. It computes exactly what the scalar path computes.
private struct PackedMatrix8 {
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
    func apply16(_ source: UnsafeRawPointer, _ destination: UnsafeMutableRawPointer) {
        let v = source.loadUnaligned(as: SIMD16<UInt32>.self)
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
        destination.storeBytes(of: out, as: SIMD16<UInt32>.self)
    }
}
