// The colour matrix straight from integer samples to integer samples: the fast path
// that `SamplePipeline` takes when a recipe fuses to one matrix and the raster is
// RGBA in and out at one maxval.
//
// Why it is exact: each block takes the scalar path's own steps in the same order —
// `v / m`, the `Float` matrix summed left to right, clamp to [0, 1], `· m`, round half
// to even — so the result equals the scalar path bit for bit, at 8 and at 16 bits
// (the tests check it, including every 8-bit sample at every 8-bit maxval).
//
// A faster 8-bit block once folded decoding and encoding into the matrix (`M·v + m·t`
// instead of `(M·(v/m) + t)·m`: no divisions). It is the same real number, rounded
// differently, and the difference is not always rare: where the exact value is a
// tie, k + ½, the folded sum lands on the tie and rounds to even, while the scalar
// path lands a rounding error either side of it. Brightness 0.1 (+25.5 at maxval
// 255) made every unclamped sample a tie, and 21 % of samples came out 1 LSB apart;
// contrast 2 gave 37 %, and saturation with brightness 0.1 gave 25 % of a grey image.
// SPEC §8 allows 0.1 %. The divisions cost about a quarter of the block's speed in
// cache (docs/performance.md §2, "Exact ties").
//
// Why it is fast: 8 pixels (one 256-bit register) are loaded as whole 32-bit lanes
// and the channels are picked out with shifts and masks, so the block is in
// structure-of-arrays form without a single shuffle of pixels; a channel becomes a
// `Float` with one integer-to-float conversion (exact below 2²⁴); the result is
// clamped with two lane selects the compiler turns into `max`/`min`, rounded half to
// even by adding 2²³, and repacked from the low mantissa bits with shifts and ORs.
// The 8-bit loop runs two blocks per step with the block inlined, so the matrix stays
// in registers (or one load away) and no block costs a call.
// The matrix is the one `ColorMatrixKernel` rounded to `Float`: one source for both.

extension ColorMatrixKernel {
    /// Applies the matrix to `count` RGBA pixels of 8-bit samples at `maxval`
    /// (1…255), from `source` to `destination` (which may be the same memory).
    /// Alpha is copied unchanged.
    ///
    /// - Complexity: O(count); no allocation.
    func applyRGBA8(_ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>,
                    count: Int, maxval: Int) {
        let block = PackedMatrix(self, maxval: maxval)
        let input = UnsafeRawPointer(source), output = UnsafeMutableRawPointer(destination)
        let whole = count / 8
        block.applyRGBA8(input, output, blocks: whole)
        let rest = count - whole * 8
        guard rest > 0 else { return }
        // The last 1…7 pixels go through the same block code via a zero-padded copy.
        let offset = whole * 32
        var tail = SIMD8<UInt32>()
        withUnsafeMutableBytes(of: &tail) { $0.baseAddress!.copyMemory(from: input + offset, byteCount: rest * 4) }
        withUnsafeMutableBytes(of: &tail) { block.applyRGBA8(UnsafeRawPointer($0.baseAddress!), $0.baseAddress!, blocks: 1) }
        withUnsafeBytes(of: tail) { (output + offset).copyMemory(from: $0.baseAddress!, byteCount: rest * 4) }
    }

    /// Applies the matrix to `count` RGBA pixels of 16-bit samples at `maxval`
    /// (1…65535), from `source` to `destination` (which may be the same memory).
    /// Alpha is copied unchanged.
    ///
    /// - Complexity: O(count); no allocation.
    func applyRGBA16(_ source: UnsafePointer<UInt16>, _ destination: UnsafeMutablePointer<UInt16>,
                     count: Int, maxval: Int) {
        let block = PackedMatrix(self, maxval: maxval)
        let input = UnsafeRawPointer(source), output = UnsafeMutableRawPointer(destination)
        let whole = count / 8
        var offset = 0
        for _ in 0..<whole {
            let pixels = input.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt32>.self)
            output.storeBytes(of: block.rgba16(pixels), toByteOffset: offset, as: SIMD16<UInt32>.self)
            offset &+= 64
        }
        let rest = count - whole * 8
        guard rest > 0 else { return }
        // The last 1…7 pixels go through the same block code via a zero-padded copy.
        var tail = SIMD16<UInt32>()
        withUnsafeMutableBytes(of: &tail) { $0.baseAddress!.copyMemory(from: input + offset, byteCount: rest * 8) }
        let result = block.rgba16(tail)
        withUnsafeBytes(of: result) { (output + offset).copyMemory(from: $0.baseAddress!, byteCount: rest * 8) }
    }
}

/// 2²³: adding it to a `Float` in [0, 2²³) rounds to an integer (half to even) and
/// leaves that integer in the low mantissa bits.
private let magic: Float = 8_388_608

/// The matrix broadcast across 8 lanes, for 8 pixels at a time in structure-of-arrays
/// form: one channel of 8 pixels per `SIMD8`. It computes exactly what the scalar
/// path computes.
private struct PackedMatrix {
    let m00, m01, m02, m10, m11, m12, m20, m21, m22: SIMD8<Float>
    let t0, t1, t2: SIMD8<Float>
    let maxval, low: SIMD8<Float>

    init(_ k: ColorMatrixKernel, maxval: Int) {
        (m00, m10, m20) = (.init(repeating: k.column0.x), .init(repeating: k.column0.y), .init(repeating: k.column0.z))
        (m01, m11, m21) = (.init(repeating: k.column1.x), .init(repeating: k.column1.y), .init(repeating: k.column1.z))
        (m02, m12, m22) = (.init(repeating: k.column2.x), .init(repeating: k.column2.y), .init(repeating: k.column2.z))
        (t0, t1, t2) = (.init(repeating: k.translation.x), .init(repeating: k.translation.y),
                        .init(repeating: k.translation.z))
        (self.maxval, low) = (.init(repeating: Float(maxval)), .init(repeating: magic))
    }

    /// `SampleCoding.decode` on 8 lanes: the sample as a `Float` (exact below 2²⁴;
    /// `Int32` lanes give the one-instruction conversion), divided by maxval.
    @inline(__always)
    func decode(_ v: SIMD8<UInt32>) -> SIMD8<Float> {
        SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: v)) / maxval
    }

    /// `SampleCoding.encode` on 8 lanes: clamp to [0, 1] (NaN → 0), scale, round half
    /// to even. The integer is left in the low mantissa bits, the exponent bits of 2²³
    /// above them.
    @inline(__always)
    func encode(_ y: SIMD8<Float>) -> SIMD8<UInt32> {
        let zero = SIMD8<Float>(repeating: 0), one = SIMD8<Float>(repeating: 1)
        // Written so that the comparison and the replacement use the same operands:
        // that is the shape the compiler emits as one `max` / `min` instruction.
        var c = zero.replacing(with: y, where: y .> zero)
        c = c.replacing(with: one, where: c .> one)
        return unsafeBitCast(c * maxval + low, to: SIMD8<UInt32>.self)
    }

    /// The matrix on decoded channels, each output encoded (low mantissa bits).
    // `@_transparent` for the reason given on `rgba8`: it is inlined at three sites.
    @_transparent
    func transform(_ r: SIMD8<Float>, _ g: SIMD8<Float>, _ b: SIMD8<Float>)
        -> (red: SIMD8<UInt32>, green: SIMD8<UInt32>, blue: SIMD8<UInt32>) {
        (encode(m00 * r + m01 * g + m02 * b + t0),
         encode(m10 * r + m11 * g + m12 * b + t1),
         encode(m20 * r + m21 * g + m22 * b + t2))
    }

    /// Runs `blocks` blocks of 8 pixels of 8-bit RGBA, two per step: two independent
    /// dependency chains for the out-of-order core to overlap. Every block is the same code.
    @inline(never)
    func applyRGBA8(_ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer, blocks: Int) {
        var offset = 0
        for _ in 0..<blocks / 2 {
            let first = input.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt32>.self)
            let second = input.loadUnaligned(fromByteOffset: offset &+ 32, as: SIMD8<UInt32>.self)
            let (a, b) = (rgba8(first), rgba8(second))
            output.storeBytes(of: a, toByteOffset: offset, as: SIMD8<UInt32>.self)
            output.storeBytes(of: b, toByteOffset: offset &+ 32, as: SIMD8<UInt32>.self)
            offset &+= 64
        }
        if blocks % 2 == 1 {
            let last = input.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt32>.self)
            output.storeBytes(of: rgba8(last), toByteOffset: offset, as: SIMD8<UInt32>.self)
        }
    }

    /// 8 pixels of 8-bit RGBA, one pixel per 32-bit lane, R in the low byte.
    // `@_transparent` rather than `@inline(__always)`: with two call sites in the
    // loop, Swift 6.3 inlined `@inline(__always)` into only one and called the other
    // (seen in the disassembly), which costs a call and reloads per 8 pixels.
    @_transparent
    func rgba8(_ v: SIMD8<UInt32>) -> SIMD8<UInt32> {
        let byte = SIMD8<UInt32>(repeating: 0xFF)
        let (red, green, blue) = transform(decode(v & byte), decode((v &>> 8) & byte), decode((v &>> 16) & byte))
        // Shifting left by 8 or 16 pushes the exponent bits out of the lane; red's
        // are masked off. Alpha is the input's own byte.
        return (red & byte) | (green &<< 8) | (blue &<< 16) | (v & 0xFF00_0000)
    }

    /// 8 pixels of 16-bit RGBA: each pixel is two 32-bit lanes, `R | G << 16` and
    /// `B | A << 16`, split into even and odd lanes.
    @_transparent
    func rgba16(_ v: SIMD16<UInt32>) -> SIMD16<UInt32> {
        let (rg, ba) = (v.evenHalf, v.oddHalf)
        let word = SIMD8<UInt32>(repeating: 0xFFFF)
        let (red, green, blue) = transform(decode(rg & word), decode(rg &>> 16), decode(ba & word))
        var out = SIMD16<UInt32>()
        out.evenHalf = (red & word) | (green &<< 16)
        out.oddHalf = (blue & word) | (ba & 0xFFFF_0000)
        return out
    }
}
