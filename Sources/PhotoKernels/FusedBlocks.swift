// The fused one-pass schedule of an edit plan on four-channel integer pixels: decode
// (through the tone table when the plan has leading tone stages), one colour matrix,
// one positional gain, encode — eight pixels per step, held in registers from load to
// store. `EditPlan` takes it when the fused stages are exactly that shape (the sliders,
// the looks, sepia, exposure and the vignette in any combination) and the pixels are
// 8-bit or 16-bit with four channels in any byte order.
//
// Why it is exact (SPEC §8): the block computes the reference's real number with the
// scaling by maxval `m` folded into the matrix — `m·M·x + m·t` on table entries `x`, or
// `M·v + m·t` straight on the integer samples `v` (no division) — clamps to [0, m] and
// rounds half to even. That is the same value rounded differently, within a few `Float`
// ulps of the exact one, so every sample is the correctly rounded value except within
// τ = 2⁻²⁰ of a tie, where either neighbour is right (and where the folded sum often
// lands on the tie exactly and rounds to even). The release-built exhaustive check
// (`photokernels-bench exactness`, run by CI) holds it against a `Double` evaluation on
// all 2²⁴ RGB triples for tie-heavy matrices and the catalog. The relative-to-green form
// keeps greys grey exactly: on integer samples `v_R − v_G` is exact.
//
// Premultiplied 8-bit pixels (SPEC §10) run the same block: the straight colour is the
// stored sample times `m/A` (one division per 8 pixels), or, with tone tables, an entry
// of a 2D table indexed by `(A, c)` that holds the tones of `c/A`; the clamped result
// is multiplied by `A/m` before rounding, so A = 0 gives 0.
//
// Why it is fast: 8 pixels of 8-bit samples are one 256-bit load, split into channels
// with shifts and masks (structure of arrays without a shuffle); table entries are 24
// scalar loads indexed by the bytes in memory; the matrix broadcasts stay in registers;
// the result is clamped with two lane selects (one `max`, one `min`), rounded by adding
// 2²³, and repacked from the low mantissa bits with shifts and ORs. Every combination of
// table, matrix form and gain is its own loop (`@inline(never)` entry, `@_transparent`
// body), so no flag is tested per pixel.

/// 2²³: adding it to a `Float` in [0, 2²³) rounds to an integer (half to even) and
/// leaves that integer in the low mantissa bits.
private let magic: Float = 8_388_608

/// The table pointer of a block without tables: never read.
nonisolated(unsafe) private let noTable = UnsafePointer(UnsafeMutablePointer<Float>.allocate(capacity: 1))

/// Where the channels of a four-channel pixel sit: the byte (8-bit) or 16-bit word
/// (16-bit) index of R, G, B and of the fourth sample (alpha or padding), each 0…3.
struct ChannelPositions: Sendable, Hashable {
    var red, green, blue, fourth: Int

    /// `R G B A` in memory order.
    static let rgba = ChannelPositions(red: 0, green: 1, blue: 2, fourth: 3)
}

/// The constants of one fused block schedule, prepared once per plan and maxval.
struct FusedBlock {
    // The matrix broadcast across 8 lanes (column 1 unused in the relative form).
    let m00, m01, m02, m10, m11, m12, m20, m21, m22: SIMD8<Float>
    let t0, t1, t2: SIMD8<Float>
    let maxval: SIMD8<Float>
    let relativeToGreen: Bool
    /// Whether samples decode through tone tables (else plainly).
    let hasTables: Bool
    /// The tone tables of R, G, B as plain pointers for the loops (a placeholder, never
    /// read, when there are none), so no optional is tested per block.
    let red, green, blue: UnsafePointer<Float>
    /// The largest valid table index (`maxval`; 255 for 8-bit tables, which cover every byte).
    let lastIndex: Int
    let positions: ChannelPositions
    /// Whether the pixels are premultiplied (8-bit only; tables are then 2D, `(A, c)`).
    let premultiplied: Bool
    /// 1/m, for the premultiplied result's `A/m`.
    let inverseMaxval: SIMD8<Float>

    /// - Parameter premultiplied: 8-bit premultiplied pixels; `tables`, if any, must be
    ///   the 2D tables (`ToneTables(premultiplied:)`).
    init(matrix k: ColorMatrixKernel, maxval: Int, tables: ToneTables?, positions: ChannelPositions,
         premultiplied: Bool = false) {
        // Built in Double, rounded once: `m·M` on decoded table entries, `M` itself on
        // integer samples (v = m·x), and `m·t` in both.
        let m = Double(maxval), scale = tables == nil ? 1 : m
        let r = k.matrix.rows, t = k.matrix.offset
        func broadcast(_ x: Double) -> SIMD8<Float> { SIMD8(repeating: Float(x)) }
        (m00, m01, m02) = (broadcast(scale * r.0.x), broadcast(scale * r.0.y), broadcast(scale * r.0.z))
        (m10, m11, m12) = (broadcast(scale * r.1.x), broadcast(scale * r.1.y), broadcast(scale * r.1.z))
        (m20, m21, m22) = (broadcast(scale * r.2.x), broadcast(scale * r.2.y), broadcast(scale * r.2.z))
        (t0, t1, t2) = (broadcast(m * t.x), broadcast(m * t.y), broadcast(m * t.z))
        self.maxval = .init(repeating: Float(maxval))
        relativeToGreen = k.relativeToGreen
        hasTables = tables != nil
        (red, green, blue) = tables.map { ($0.red, $0.green, $0.blue) } ?? (noTable, noTable, noTable)
        lastIndex = tables.map { $0.count - 1 } ?? 0
        self.positions = positions
        self.premultiplied = premultiplied
        inverseMaxval = SIMD8(repeating: Float(1 / Double(maxval)))
    }

    /// The integer samples as `Float`s (exact below 2²⁴ through `Int32` lanes): the
    /// folded matrix takes them as they are.
    @_transparent
    func decode(_ v: SIMD8<UInt32>) -> SIMD8<Float> {
        SIMD8<Float>(SIMD8<Int32>(truncatingIfNeeded: v))
    }

    /// A value already scaled by maxval, clamped to [0, m] (NaN → 0), times `alpha`
    /// (`A/m`) when premultiplied, and rounded half to even; the integer is left in the
    /// low mantissa bits.
    @_transparent
    func encode(_ y: SIMD8<Float>, _ alpha: SIMD8<Float>?) -> SIMD8<UInt32> {
        let zero = SIMD8<Float>(repeating: 0)
        // The comparison and the replacement use the same operands: the shape the
        // compiler emits as one `max` / `min` instruction.
        var c = zero.replacing(with: y, where: y .> zero)
        c = c.replacing(with: maxval, where: c .> maxval)
        if let alpha { c = c * alpha }
        return unsafeBitCast(c + magic, to: SIMD8<UInt32>.self)
    }

    /// The matrix on decoded channels, in the reference's form, times the gains.
    @_transparent
    func transform(_ r: SIMD8<Float>, _ g: SIMD8<Float>, _ b: SIMD8<Float>, relative: Bool, gain: SIMD8<Float>?,
                   alpha: SIMD8<Float>? = nil) -> (SIMD8<UInt32>, SIMD8<UInt32>, SIMD8<UInt32>) {
        var (x, y, z): (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>)
        if relative {
            let rg = r - g, bg = b - g
            x = m00 * rg + m02 * bg + (g + t0)
            y = m10 * rg + m12 * bg + (g + t1)
            z = m20 * rg + m22 * bg + (g + t2)
        } else {
            x = m00 * r + m01 * g + m02 * b + t0
            y = m10 * r + m11 * g + m12 * b + t1
            z = m20 * r + m21 * g + m22 * b + t2
        }
        if let gain {
            x = gain * x; y = gain * y; z = gain * z
        }
        return (encode(x, alpha), encode(y, alpha), encode(z, alpha))
    }

    /// Eight table entries, indexed by the samples at `s[c]`, `s[c + 4]`, … (one
    /// channel of eight four-channel pixels), each index clamped to the table.
    @_transparent
    func lookup<Sample: FixedWidthInteger & UnsignedInteger>(
        _ t: UnsafePointer<Float>, _ s: UnsafePointer<Sample>, _ c: Int, clampIndex: Bool
    ) -> SIMD8<Float> {
        // The entry's address as an integer: indexing the pointer directly let the
        // optimiser turn the eight loads into a gather, 20 % slower on AMD Zen.
        let base = Int(bitPattern: t)
        @_transparent func at(_ i: Int) -> Float {
            let v = Int(s[c &+ 4 &* i])
            return UnsafePointer<Float>(bitPattern: base &+ (clampIndex ? min(v, lastIndex) : v) &<< 2).unsafelyUnwrapped.pointee
        }
        return SIMD8(at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7))
    }

    /// Eight entries of a 2D premultiplied table, indexed by `A·256 + c` of one channel
    /// `c` and the alpha `A` of eight 8-bit pixels; scalar loads, as in `lookup`.
    @_transparent
    func lookup2D(_ t: UnsafePointer<Float>, _ s: UnsafePointer<UInt8>, _ c: Int, alpha a: Int) -> SIMD8<Float> {
        let base = Int(bitPattern: t)
        @_transparent func at(_ i: Int) -> Float {
            let index = Int(s[c &+ 4 &* i]) | Int(s[a &+ 4 &* i]) &<< 8
            return UnsafePointer<Float>(bitPattern: base &+ index &<< 2).unsafelyUnwrapped.pointee
        }
        return SIMD8(at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7))
    }

    // MARK: 8-bit

    /// Runs `count` pixels of 8-bit samples from `source` to `destination` (which may
    /// be the same memory), `gains` holding one gain per pixel or `nil`. The last 1…7
    /// pixels go through the same block via a zero-padded copy.
    func run8(_ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>, count: Int,
              gains: UnsafePointer<Float>?) {
        let whole = count / 8
        dispatch8(source, destination, blocks: whole, gains: gains)
        let rest = count - whole * 8
        guard rest > 0 else { return }
        var pixels = SIMD8<UInt32>(), tailGains = SIMD8<Float>()
        withUnsafeMutableBytes(of: &pixels) { $0.baseAddress!.copyMemory(from: source + whole * 32, byteCount: rest * 4) }
        if let gains {
            withUnsafeMutableBytes(of: &tailGains) { $0.baseAddress!.copyMemory(from: gains + whole * 8, byteCount: rest * 4) }
        }
        withUnsafeMutableBytes(of: &pixels) { p in
            withUnsafeBytes(of: tailGains) { g in
                let bytes = p.baseAddress!.assumingMemoryBound(to: UInt8.self)
                dispatch8(bytes, bytes, blocks: 1, gains: gains == nil ? nil : g.baseAddress!.assumingMemoryBound(to: Float.self))
            }
        }
        withUnsafeBytes(of: pixels) { (destination + whole * 32).update(from: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: rest * 4) }
    }

    private func dispatch8(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, blocks: Int,
                           gains: UnsafePointer<Float>?) {
        if premultiplied { return dispatch8Premultiplied(s, d, blocks: blocks, gains: gains) }
        switch (hasTables, relativeToGreen, gains) {
        case (false, false, nil): loop8TF(s, d, blocks)
        case (false, true, nil): loop8TR(s, d, blocks)
        case (true, false, nil): loop8LF(s, d, blocks)
        case (true, true, nil): loop8LR(s, d, blocks)
        case (false, false, let g?): loop8TFG(s, d, blocks, g)
        case (false, true, let g?): loop8TRG(s, d, blocks, g)
        case (true, false, let g?): loop8LFG(s, d, blocks, g)
        case (true, true, let g?): loop8LRG(s, d, blocks, g)
        }
    }

    // One loop per combination: T plain decoding / L table, F plain / R relative form,
    // G with gains.
    @inline(never) func loop8TF(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int) { body8(s, d, n, nil, table: false, relative: false) }
    @inline(never) func loop8TR(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int) { body8(s, d, n, nil, table: false, relative: true) }
    @inline(never) func loop8LF(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int) { body8(s, d, n, nil, table: true, relative: false) }
    @inline(never) func loop8LR(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int) { body8(s, d, n, nil, table: true, relative: true) }
    @inline(never) func loop8TFG(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>) { body8(s, d, n, g, table: false, relative: false) }
    @inline(never) func loop8TRG(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>) { body8(s, d, n, g, table: false, relative: true) }
    @inline(never) func loop8LFG(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>) { body8(s, d, n, g, table: true, relative: false) }
    @inline(never) func loop8LRG(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>) { body8(s, d, n, g, table: true, relative: true) }

    private func dispatch8Premultiplied(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, blocks: Int,
                                        gains: UnsafePointer<Float>?) {
        switch (hasTables, relativeToGreen, gains) {
        case (false, false, nil): loop8TFP(s, d, blocks)
        case (false, true, nil): loop8TRP(s, d, blocks)
        case (true, false, nil): loop8LFP(s, d, blocks)
        case (true, true, nil): loop8LRP(s, d, blocks)
        case (false, false, let g?): loop8TFGP(s, d, blocks, g)
        case (false, true, let g?): loop8TRGP(s, d, blocks, g)
        case (true, false, let g?): loop8LFGP(s, d, blocks, g)
        case (true, true, let g?): loop8LRGP(s, d, blocks, g)
        }
    }

    // The same, P premultiplied.
    @inline(never) func loop8TFP(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int) { body8(s, d, n, nil, table: false, relative: false, premultiplied: true) }
    @inline(never) func loop8TRP(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int) { body8(s, d, n, nil, table: false, relative: true, premultiplied: true) }
    @inline(never) func loop8LFP(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int) { body8(s, d, n, nil, table: true, relative: false, premultiplied: true) }
    @inline(never) func loop8LRP(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int) { body8(s, d, n, nil, table: true, relative: true, premultiplied: true) }
    @inline(never) func loop8TFGP(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>) { body8(s, d, n, g, table: false, relative: false, premultiplied: true) }
    @inline(never) func loop8TRGP(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>) { body8(s, d, n, g, table: false, relative: true, premultiplied: true) }
    @inline(never) func loop8LFGP(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>) { body8(s, d, n, g, table: true, relative: false, premultiplied: true) }
    @inline(never) func loop8LRGP(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>) { body8(s, d, n, g, table: true, relative: true, premultiplied: true) }

    /// `blocks` blocks of 8 pixels; every block loads its pixels before storing, so
    /// the source and destination may be the same memory.
    @_transparent
    func body8(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ blocks: Int,
               _ gains: UnsafePointer<Float>?, table: Bool, relative: Bool, premultiplied: Bool = false) {
        let byte = SIMD8<UInt32>(repeating: 0xFF)
        let p = positions
        let (rs, gs, bs, fs) = (UInt32(8 * p.red), UInt32(8 * p.green), UInt32(8 * p.blue), UInt32(8 * p.fourth))
        let fourthMask = SIMD8<UInt32>(repeating: 0xFF << UInt32(8 * p.fourth))
        let input = UnsafeRawPointer(s), output = UnsafeMutableRawPointer(d)
        var offset = 0
        for j in 0..<blocks {
            let v = input.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt32>.self)
            var r, g, b: SIMD8<Float>
            // Premultiplied: A/m for the result. A group of 8 opaque pixels (the common
            // case, tested with one OR-reduction) is its own straight colour: the 1D
            // decoding, or the 2D table's row A = 255, and A/m = 1 exactly.
            var alpha: SIMD8<Float>? = nil
            let opaque = premultiplied && Self.isOpaque(v, fourthMask)
            if premultiplied { alpha = SIMD8(repeating: 1) }
            if table && premultiplied && !opaque {
                let at = s + offset
                r = lookup2D(red, at, p.red, alpha: p.fourth)
                g = lookup2D(green, at, p.green, alpha: p.fourth)
                b = lookup2D(blue, at, p.blue, alpha: p.fourth)
                alpha = decode((v &>> fs) & byte) * inverseMaxval
            } else if table {
                let at = s + offset, row = premultiplied ? 255 &<< 8 : 0
                r = lookup(red + row, at, p.red, clampIndex: false)
                g = lookup(green + row, at, p.green, clampIndex: false)
                b = lookup(blue + row, at, p.blue, clampIndex: false)
            } else {
                r = decode((v &>> rs) & byte); g = decode((v &>> gs) & byte); b = decode((v &>> bs) & byte)
                if premultiplied && !opaque {
                    // The straight colour on the samples' scale, c·m/A (A = 0: not finite,
                    // and the result is 0 after the clamp and the multiply by A/m).
                    let a = decode((v &>> fs) & byte)
                    let k = maxval / a
                    r *= k; g *= k; b *= k
                    alpha = a * inverseMaxval
                }
            }
            let gain = gains.map { UnsafeRawPointer($0).loadUnaligned(fromByteOffset: 32 &* j, as: SIMD8<Float>.self) }
            let (x, y, z) = transform(r, g, b, relative: relative, gain: gain, alpha: alpha)
            // Shifting left pushes the exponent bits of 2²³ out of each byte.
            let out = ((x & byte) &<< rs) | ((y & byte) &<< gs) | ((z & byte) &<< bs) | (v & fourthMask)
            output.storeBytes(of: out, toByteOffset: offset, as: SIMD8<UInt32>.self)
            offset &+= 32
        }
    }

    /// Whether the fourth sample of all eight 8-bit pixels is 255: the missing alpha
    /// bits OR-reduced through four 64-bit lanes (SIMD `==` compiles to a lane loop).
    @_transparent
    static func isOpaque(_ v: SIMD8<UInt32>, _ fourthMask: SIMD8<UInt32>) -> Bool {
        let q = unsafeBitCast(~v & fourthMask, to: SIMD4<UInt64>.self)
        return q[0] | q[1] | q[2] | q[3] == 0
    }

    // MARK: 16-bit

    /// Runs `count` pixels of 16-bit samples (native byte order); see `run8`.
    func run16(_ source: UnsafePointer<UInt16>, _ destination: UnsafeMutablePointer<UInt16>, count: Int,
               gains: UnsafePointer<Float>?) {
        let whole = count / 8
        dispatch16(source, destination, blocks: whole, gains: gains)
        let rest = count - whole * 8
        guard rest > 0 else { return }
        var pixels = SIMD16<UInt32>(), tailGains = SIMD8<Float>()
        withUnsafeMutableBytes(of: &pixels) { $0.baseAddress!.copyMemory(from: source + whole * 32, byteCount: rest * 8) }
        if let gains {
            withUnsafeMutableBytes(of: &tailGains) { $0.baseAddress!.copyMemory(from: gains + whole * 8, byteCount: rest * 4) }
        }
        withUnsafeMutableBytes(of: &pixels) { p in
            withUnsafeBytes(of: tailGains) { g in
                let words = p.baseAddress!.assumingMemoryBound(to: UInt16.self)
                dispatch16(words, words, blocks: 1, gains: gains == nil ? nil : g.baseAddress!.assumingMemoryBound(to: Float.self))
            }
        }
        withUnsafeBytes(of: pixels) { (destination + whole * 32).update(from: $0.baseAddress!.assumingMemoryBound(to: UInt16.self), count: rest * 4) }
    }

    private func dispatch16(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, blocks: Int,
                            gains: UnsafePointer<Float>?) {
        switch (hasTables, relativeToGreen, gains) {
        case (false, false, nil): loop16TF(s, d, blocks)
        case (false, true, nil): loop16TR(s, d, blocks)
        case (true, false, nil): loop16LF(s, d, blocks)
        case (true, true, nil): loop16LR(s, d, blocks)
        case (false, false, let g?): loop16TFG(s, d, blocks, g)
        case (false, true, let g?): loop16TRG(s, d, blocks, g)
        case (true, false, let g?): loop16LFG(s, d, blocks, g)
        case (true, true, let g?): loop16LRG(s, d, blocks, g)
        }
    }

    @inline(never) func loop16TF(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int) { body16(s, d, n, nil, table: false, relative: false) }
    @inline(never) func loop16TR(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int) { body16(s, d, n, nil, table: false, relative: true) }
    @inline(never) func loop16LF(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int) { body16(s, d, n, nil, table: true, relative: false) }
    @inline(never) func loop16LR(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int) { body16(s, d, n, nil, table: true, relative: true) }
    @inline(never) func loop16TFG(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ g: UnsafePointer<Float>) { body16(s, d, n, g, table: false, relative: false) }
    @inline(never) func loop16TRG(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ g: UnsafePointer<Float>) { body16(s, d, n, g, table: false, relative: true) }
    @inline(never) func loop16LFG(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ g: UnsafePointer<Float>) { body16(s, d, n, g, table: true, relative: false) }
    @inline(never) func loop16LRG(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ g: UnsafePointer<Float>) { body16(s, d, n, g, table: true, relative: true) }

    /// 8 pixels of 16-bit samples per block: two 32-bit lanes per pixel, words 0–1 in
    /// the even lane and 2–3 in the odd lane.
    @_transparent
    func body16(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ blocks: Int,
                _ gains: UnsafePointer<Float>?, table: Bool, relative: Bool) {
        let word = SIMD8<UInt32>(repeating: 0xFFFF)
        let p = positions
        // Word w of a pixel sits in lane half w / 2 at bit 16·(w % 2).
        @_transparent func channel(_ even: SIMD8<UInt32>, _ odd: SIMD8<UInt32>, _ w: Int) -> SIMD8<UInt32> {
            ((w < 2 ? even : odd) &>> UInt32(16 * (w & 1))) & word
        }
        @_transparent func place(_ x: SIMD8<UInt32>, _ w: Int) -> SIMD8<UInt32> { (x & word) &<< UInt32(16 * (w & 1)) }
        // A placed channel goes to the even lanes (words 0–1) or the odd ones (2–3).
        @_transparent func split(_ x: SIMD8<UInt32>, _ w: Int) -> (SIMD8<UInt32>, SIMD8<UInt32>) {
            w < 2 ? (x, .zero) : (.zero, x)
        }
        let input = UnsafeRawPointer(s), output = UnsafeMutableRawPointer(d)
        var offset = 0
        for j in 0..<blocks {
            let v = input.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt32>.self)
            let (even, odd) = (v.evenHalf, v.oddHalf)
            let r, g, b: SIMD8<Float>
            if table {
                let at = s + offset / 2
                r = lookup(red, at, p.red, clampIndex: true)
                g = lookup(green, at, p.green, clampIndex: true)
                b = lookup(blue, at, p.blue, clampIndex: true)
            } else {
                r = decode(channel(even, odd, p.red)); g = decode(channel(even, odd, p.green))
                b = decode(channel(even, odd, p.blue))
            }
            let gain = gains.map { UnsafeRawPointer($0).loadUnaligned(fromByteOffset: 32 &* j, as: SIMD8<Float>.self) }
            let (x, y, z) = transform(r, g, b, relative: relative, gain: gain)
            let fourth = channel(even, odd, p.fourth)
            let (r0, r1) = split(place(x, p.red), p.red), (g0, g1) = split(place(y, p.green), p.green)
            let (b0, b1) = split(place(z, p.blue), p.blue), (a0, a1) = split(place(fourth, p.fourth), p.fourth)
            var out = SIMD16<UInt32>()
            out.evenHalf = r0 | g0 | b0 | a0
            out.oddHalf = r1 | g1 | b1 | a1
            output.storeBytes(of: out, toByteOffset: offset, as: SIMD16<UInt32>.self)
            offset &+= 64
        }
    }
}
