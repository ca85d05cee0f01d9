// The fused schedule of an edit plan whose middle is a 3D tetrahedral LUT, on
// four-channel 8-bit pixels: decode (through the tone table when the plan has leading
// tone stages), at most one colour matrix, the LUT, one positional gain, encode. Bytes
// in, bytes out: no row of `Float` pixels in between.
//
// Why it is exact (SPEC §8): it computes the reference's real number with the scalings
// folded. The matrix, the decoding by 1/maxval and the LUT's `(x − lo)·(N − 1)/(hi − lo)`
// compose into one affine map from samples to grid coordinates (in `Double`, rounded
// once), and the table entries are scaled by `maxval·intensity` once per plan. The
// tetrahedron, the corners and the weights are the reference's (SPEC §11), so every
// sample is the same value rounded differently, within a few `Float` ulps. The
// release-built exhaustive check (`photokernels-bench exactness`) holds a 17³ LUT,
// alone, after a matrix and at part intensity, against a `Double` evaluation on all
// 2²⁴ RGB triples.
//
// Why it is fast: two passes over chunks of 64 pixels. Pass 1 takes 8 pixels per step,
// one channel per `SIMD8<Float>` (structure of arrays): coordinates, cells, the
// tetrahedron by compare-and-select, corner offsets and weights, stored to a small
// scratch as whole vectors. Pass 2 takes one pixel at a time: four corner loads of
// `SIMD4<Float>` (the entries are stored with their channels in the pixel's byte order),
// the weighted sum, rounding by adding 2²³, and one 32-bit store. No branch depends on
// the data, and nothing is converted to or from `Float` rows.

/// 2²³: adding it to a `Float` in [0, 2²³) rounds to an integer (half to even) and
/// leaves that integer in the low mantissa bits.
private let magic: Float = 8_388_608

/// A 3D LUT's entries prepared for one maxval, intensity and byte order: each entry
/// times `maxval·intensity`, R, G and B at their byte positions, the fourth lane 0.
/// Immutable once built; shared by the runs of a prepared plan.
final class FusedCubeTable: @unchecked Sendable {
    let entries: UnsafePointer<SIMD4<Float>>
    /// The largest magnitude among the prepared entries.
    let largestEntry: Float
    private let storage: UnsafeMutablePointer<SIMD4<Float>>

    init(_ cube: ColorCube, scale: Float, positions: ChannelPositions) {
        let count = cube.table.count
        let storage = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: count)
        var largest: Float = 0
        cube.table.withUnsafeBufferPointer { t in
            for i in 0..<count {
                let e = t[i]
                var v = SIMD4<Float>.zero
                v[positions.red] = e.x * scale
                v[positions.green] = e.y * scale
                v[positions.blue] = e.z * scale
                storage[i] = v
                largest = max(largest, v.x.magnitude, v.y.magnitude, v.z.magnitude, v.w.magnitude)
            }
        }
        largestEntry = largest
        self.storage = storage
        entries = UnsafePointer(storage)
    }

    deinit { storage.deallocate() }
}

/// The constants of the fused LUT schedule, prepared once per run from the plan.
struct FusedCubeBlock {
    /// Grid coordinates from samples, `t_c = Σ_j a_cj·x_j + b_c`, broadcast (with a
    /// matrix; else only the diagonal `a_cc` is used).
    let a00, a01, a02, a10, a11, a12, a20, a21, a22: SIMD8<Float>
    let b0, b1, b2: SIMD8<Float>
    /// N − 1 and N − 2, and N and N² (index strides along G and B).
    let top, below, sizeG, sizeB: SIMD8<Float>
    /// Byte offsets of one step along R, G and B, and of the far corner (1, 1, 1).
    let stepR, stepG, stepB: SIMD8<Int32>
    let farOffset: Int
    let hasMatrix: Bool
    let hasTables: Bool
    /// The tone tables of R, G, B (never read without tables).
    let red, green, blue: UnsafePointer<Float>
    let positions: ChannelPositions
    /// The prepared entries (kept alive by `storage`).
    let entries: UnsafeRawPointer
    let storage: FusedCubeTable
    /// Whether the result is mixed with the input, and `(1 − intensity)` in the colour
    /// lanes (0 in the fourth).
    let mixing: Bool
    let keep: SIMD4<Float>
    let maxval: SIMD4<Float>
    /// Whether the block's coordinates and results stay within the matrix block's bound
    /// (`FusedBlock.isWellConditioned`); false where a coefficient or an entry is not finite.
    let isWellConditioned: Bool

    /// Whether the block can run `cube`: a 3D tetrahedral table small enough for
    /// indices exact in `Float` (N ≤ 203), and mixing only straight on the samples.
    static func accepts(_ cube: ColorCube, tables: Bool, matrix: Bool) -> Bool {
        cube.dimension == .threeDimensional && cube.interpolation == .tetrahedral && cube.size <= 203
            && (cube.mixAmount == 1 || (!tables && !matrix))
    }

    /// - Parameters:
    ///   - matrix: the fused matrix before the LUT, if any.
    ///   - table: `cube`'s entries prepared for `maxval` and `positions`.
    ///   - largestGain: a bound on the magnitude of the gains the block will be given
    ///     (`PreparedGains.largestGainMagnitude`); 1 without gains.
    init(matrix: ColorMatrix?, cube: ColorCube, table: FusedCubeTable, maxval: Int, tables: ToneTables?,
         positions: ChannelPositions, largestGain: Float) {
        let g = cube.geometry
        // x_j is the integer sample (1/m folded in) or a decoded table entry.
        let unit = tables == nil ? 1 / Double(maxval) : 1
        let rows = matrix.map { [$0.rows.0, $0.rows.1, $0.rows.2] }
            ?? [SIMD3<Double>(1, 0, 0), SIMD3<Double>(0, 1, 0), SIMD3<Double>(0, 0, 1)]
        let offset = matrix?.offset ?? .zero
        var a = [[SIMD8<Float>]](), b = [SIMD8<Float>]()
        for c in 0..<3 {
            let s = Double(g.scale[c]), lo = Double(g.lo[c])
            a.append((0..<3).map { j in SIMD8(repeating: Float(s * rows[c][j] * unit)) })
            b.append(SIMD8(repeating: Float(s * (offset[c] - lo))))
        }
        (a00, a01, a02) = (a[0][0], a[0][1], a[0][2])
        (a10, a11, a12) = (a[1][0], a[1][1], a[1][2])
        (a20, a21, a22) = (a[2][0], a[2][1], a[2][2])
        (b0, b1, b2) = (b[0], b[1], b[2])
        top = SIMD8(repeating: g.top)
        below = SIMD8(repeating: g.below)
        sizeG = SIMD8(repeating: Float(g.strideG))
        sizeB = SIMD8(repeating: Float(g.strideB))
        let entryBytes = MemoryLayout<SIMD4<Float>>.stride
        stepR = SIMD8(repeating: Int32(entryBytes))
        stepG = SIMD8(repeating: Int32(entryBytes * g.strideG))
        stepB = SIMD8(repeating: Int32(entryBytes * g.strideB))
        farOffset = entryBytes * (1 + g.strideG + g.strideB)
        hasMatrix = matrix != nil
        hasTables = tables != nil
        let none = UnsafePointer<Float>(bitPattern: MemoryLayout<Float>.alignment)!
        (red, green, blue) = tables.map { ($0.red, $0.green, $0.blue) } ?? (none, none, none)
        self.positions = positions
        storage = table
        entries = UnsafeRawPointer(table.entries)
        let mix = cube.mixAmount
        mixing = mix != 1
        var k = SIMD4<Float>(repeating: 1 - mix)
        k[positions.fourth] = 0
        keep = k
        self.maxval = SIMD4(repeating: Float(maxval))
        // The grid coordinates from samples (at most maxval; 1/m is folded into `a`) or
        // table entries, and the interpolated entries times the gain, within the matrix
        // block's bound: beyond it the row path.
        let input = Double(tables?.largestEntry ?? Float(maxval))
        let coordinate = (0..<3).map { c in
            (0..<3).map { j in Double(a[c][j][0].magnitude) }.reduce(0, +) * input + Double(b[c][0].magnitude)
        }.max()!
        let result = Double(table.largestEntry) * max(Double(largestGain.magnitude), 1)
        isWellConditioned = coordinate <= FusedBlock.largestWellConditionedResult
            && result <= FusedBlock.largestWellConditionedResult
    }

    /// Pixels per chunk: the scratch (7 vectors per 8 pixels, 1.8 KB) stays in L1.
    static let chunk = 64

    /// Runs `count` pixels of 8-bit samples from `source` to `destination` (which may
    /// be the same memory), `gains` holding one gain per pixel or `nil`. The last 1…7
    /// pixels go through pass 1 from a zero-padded copy.
    func run8(_ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>, count: Int,
              gains: UnsafePointer<Float>?) {
        withUnsafeTemporaryAllocation(of: SIMD8<Float>.self, capacity: Self.chunk / 8 * 7) { scratch in
            let s = UnsafeMutableRawPointer(scratch.baseAddress!)
            var start = 0
            while start < count {
                let n = min(Self.chunk, count - start)
                let whole = n & ~7
                let from = source + 4 * start, to = destination + 4 * start
                prepare(UnsafeRawPointer(from), groups: whole / 8, into: s)
                if whole < n {
                    var pixels = SIMD8<UInt32>()
                    withUnsafeMutableBytes(of: &pixels) {
                        $0.baseAddress!.copyMemory(from: from + 4 * whole, byteCount: 4 * (n - whole))
                    }
                    withUnsafeBytes(of: pixels) { prepare($0.baseAddress!, groups: 1, into: s + 28 * whole) }
                }
                finish(UnsafeRawPointer(from), to, count: n, scratch: UnsafeRawPointer(s), gains: gains.map { $0 + start })
                start += n
            }
        }
    }

    // MARK: Pass 1

    private func prepare(_ p: UnsafeRawPointer, groups: Int, into s: UnsafeMutableRawPointer) {
        switch (hasTables, hasMatrix) {
        case (false, false): prepareTD(p, groups, s)
        case (false, true): prepareTM(p, groups, s)
        case (true, false): prepareLD(p, groups, s)
        case (true, true): prepareLM(p, groups, s)
        }
    }

    // One loop per combination: T plain decoding / L table, D diagonal / M matrix.
    @inline(never) func prepareTD(_ p: UnsafeRawPointer, _ n: Int, _ s: UnsafeMutableRawPointer) { prepareBody(p, n, s, table: false, matrix: false) }
    @inline(never) func prepareTM(_ p: UnsafeRawPointer, _ n: Int, _ s: UnsafeMutableRawPointer) { prepareBody(p, n, s, table: false, matrix: true) }
    @inline(never) func prepareLD(_ p: UnsafeRawPointer, _ n: Int, _ s: UnsafeMutableRawPointer) { prepareBody(p, n, s, table: true, matrix: false) }
    @inline(never) func prepareLM(_ p: UnsafeRawPointer, _ n: Int, _ s: UnsafeMutableRawPointer) { prepareBody(p, n, s, table: true, matrix: true) }

    /// The grid coordinate `t` clamped to [0, N − 1], its cell `⌊t⌋` capped at N − 2
    /// (whole numbers in `Float`; ⌊t⌋ by adding and subtracting 2²³, less 1 where that
    /// rounded up) and the fraction `t − ⌊t⌋`.
    @_transparent
    func cell(_ t: SIMD8<Float>) -> (f: SIMD8<Float>, floor: SIMD8<Float>) {
        let m = SIMD8<Float>(repeating: magic)
        let c = clamped(t, upTo: top)
        let nearest = (c + m) - m
        let up = unsafeBitCast(nearest .> c, to: SIMD8<Int32>.self)
            & unsafeBitCast(SIMD8<Float>(repeating: 1), to: SIMD8<Int32>.self)
        var floor = nearest - unsafeBitCast(up, to: SIMD8<Float>.self)
        floor = floor.replacing(with: below, where: floor .> below)
        return (c - floor, floor)
    }

    /// Eight table entries indexed by one channel's bytes of eight pixels.
    @_transparent
    func lookup(_ t: UnsafePointer<Float>, _ p: UnsafeRawPointer, _ c: Int) -> SIMD8<Float> {
        let s = p.assumingMemoryBound(to: UInt8.self)
        @_transparent func at(_ i: Int) -> Float { t[Int(s[c &+ 4 &* i])] }
        return SIMD8(at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7))
    }

    /// Per group of 8 pixels, 7 vectors: the byte offsets of corners 0, 1 and 2
    /// (`Int32`; corner 3 is corner 0 plus the far offset) and the weights w0…w3.
    /// The tetrahedron: the first step (largest fraction) is along B where `br ∧ ¬gb`,
    /// else along G where `¬rg ∧ gb`, else along R; the last (smallest) along R where
    /// `¬rg ∧ br`, else along G where `rg ∧ ¬gb`, else along B (`rg = fr > fg`,
    /// `gb = fg > fb`, `br = fb > fr`), as in `ColorCube.tetrahedralVector`.
    @_transparent
    func prepareBody(_ p: UnsafeRawPointer, _ groups: Int, _ s: UnsafeMutableRawPointer, table: Bool, matrix: Bool) {
        let byte = SIMD8<UInt32>(repeating: 0xFF)
        let q = positions
        let (rs, gs, bs) = (UInt32(8 * q.red), UInt32(8 * q.green), UInt32(8 * q.blue))
        let one = SIMD8<Float>(repeating: 1)
        let diagonal = stepR &+ stepG &+ stepB
        let gStep = stepG &- stepR, bStep = stepB &- stepR
        let gFromB = stepB &- stepG, rFromB = stepB &- stepR
        let magicBits = SIMD8<Int32>(repeating: 0x4B00_0000), m = SIMD8<Float>(repeating: magic)
        @_transparent func bits(_ m: SIMDMask<SIMD8<Int32>>) -> SIMD8<Int32> { unsafeBitCast(m, to: SIMD8<Int32>.self) }
        for j in 0..<groups {
            let at = p + 32 &* j
            let x, y, z: SIMD8<Float>
            if table {
                x = lookup(red, at, q.red); y = lookup(green, at, q.green); z = lookup(blue, at, q.blue)
            } else {
                // A byte v as `Float`: the bits of 2²³ + v, less 2²³ (exact).
                let v = at.loadUnaligned(as: SIMD8<UInt32>.self)
                @_transparent func float(_ b: SIMD8<UInt32>) -> SIMD8<Float> {
                    unsafeBitCast(b | unsafeBitCast(magicBits, to: SIMD8<UInt32>.self), to: SIMD8<Float>.self) - m
                }
                x = float((v &>> rs) & byte); y = float((v &>> gs) & byte); z = float((v &>> bs) & byte)
            }
            let tr, tg, tb: SIMD8<Float>
            if matrix {
                tr = a00 * x + a01 * y + a02 * z + b0
                tg = a10 * x + a11 * y + a12 * z + b1
                tb = a20 * x + a21 * y + a22 * z + b2
            } else {
                tr = a00 * x + b0; tg = a11 * y + b1; tb = a22 * z + b2
            }
            let (fr, ir) = cell(tr), (fg, ig) = cell(tg), (fb, ib) = cell(tb)
            let rg = fr .> fg, gb = fg .> fb, br = fb .> fr
            let firstB = br .& .!gb, firstG = .!rg .& gb
            let lastR = .!rg .& br, lastG = rg .& .!gb
            let first = stepR &+ (bits(firstG) & gStep) &+ (bits(firstB) & bStep)
            let last = stepB &- (bits(lastG) & gFromB) &- (bits(lastR) & rFromB)
            // r + N·g + N²·b is a whole number below 2²³: its integer from the bits of
            // the sum plus 2²³, times the entry size.
            let index = unsafeBitCast(ir + ig * sizeG + ib * sizeB + m, to: SIMD8<Int32>.self) &- magicBits
            let i0 = index &<< 4
            let i1 = i0 &+ first, i2 = i0 &+ diagonal &- last
            let high = fr.replacing(with: fg, where: fg .> fr), low = fr.replacing(with: fg, where: fg .< fr)
            let fmax = high.replacing(with: fb, where: fb .> high), fmin = low.replacing(with: fb, where: fb .< low)
            let capped = high.replacing(with: fb, where: fb .< high)
            let fmid = capped.replacing(with: low, where: low .> capped)
            let base = s + 224 &* j
            base.storeBytes(of: i0, toByteOffset: 0, as: SIMD8<Int32>.self)
            base.storeBytes(of: i1, toByteOffset: 32, as: SIMD8<Int32>.self)
            base.storeBytes(of: i2, toByteOffset: 64, as: SIMD8<Int32>.self)
            base.storeBytes(of: one - fmax, toByteOffset: 96, as: SIMD8<Float>.self)
            base.storeBytes(of: fmax - fmid, toByteOffset: 128, as: SIMD8<Float>.self)
            base.storeBytes(of: fmid - fmin, toByteOffset: 160, as: SIMD8<Float>.self)
            base.storeBytes(of: fmin, toByteOffset: 192, as: SIMD8<Float>.self)
        }
    }

    // MARK: Pass 2

    private func finish(_ p: UnsafeRawPointer, _ d: UnsafeMutablePointer<UInt8>, count: Int, scratch: UnsafeRawPointer,
                        gains: UnsafePointer<Float>?) {
        switch (mixing, gains) {
        case (false, nil): finishP(p, d, count, scratch, nil)
        case (true, nil): finishX(p, d, count, scratch, nil)
        case (false, let g?): finishPG(p, d, count, scratch, g)
        case (true, let g?): finishXG(p, d, count, scratch, g)
        }
    }

    // P the LUT's result as it is / X mixed with the input, G with gains.
    @inline(never) func finishP(_ p: UnsafeRawPointer, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ s: UnsafeRawPointer, _ g: UnsafePointer<Float>?) { finishBody(p, d, n, s, nil, mixing: false) }
    @inline(never) func finishX(_ p: UnsafeRawPointer, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ s: UnsafeRawPointer, _ g: UnsafePointer<Float>?) { finishBody(p, d, n, s, nil, mixing: true) }
    @inline(never) func finishPG(_ p: UnsafeRawPointer, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ s: UnsafeRawPointer, _ g: UnsafePointer<Float>) { finishBody(p, d, n, s, g, mixing: false) }
    @inline(never) func finishXG(_ p: UnsafeRawPointer, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ s: UnsafeRawPointer, _ g: UnsafePointer<Float>) { finishBody(p, d, n, s, g, mixing: true) }

    /// One pixel at a time: the four corners weighted in the reference's order, the
    /// mix, the gain, clamped to [0, m], rounded, and the fourth byte kept. Each pixel
    /// is read before it is written, so the source may be the destination.
    @_transparent
    func finishBody(_ p: UnsafeRawPointer, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ s: UnsafeRawPointer,
                    _ gains: UnsafePointer<Float>?, mixing: Bool) {
        let fourthMask = UInt32(0xFF) << UInt32(8 * positions.fourth)
        let e = entries, far = entries + farOffset
        let out = UnsafeMutableRawPointer(d)
        let offsets = s.assumingMemoryBound(to: Int32.self), weights = s.assumingMemoryBound(to: Float.self)
        @_transparent func pixel(_ x: Int, _ at: Int) {
            let o0 = Int(offsets[at]), o1 = Int(offsets[at &+ 8]), o2 = Int(offsets[at &+ 16])
            var y = SIMD4(repeating: weights[at &+ 24]) * e.load(fromByteOffset: o0, as: SIMD4<Float>.self)
                + SIMD4(repeating: weights[at &+ 32]) * e.load(fromByteOffset: o1, as: SIMD4<Float>.self)
                + SIMD4(repeating: weights[at &+ 40]) * e.load(fromByteOffset: o2, as: SIMD4<Float>.self)
                + SIMD4(repeating: weights[at &+ 48]) * far.load(fromByteOffset: o0, as: SIMD4<Float>.self)
            let word = p.loadUnaligned(fromByteOffset: 4 &* x, as: UInt32.self)
            if mixing {
                let v = SIMD4<UInt32>(word & 0xFF, (word &>> 8) & 0xFF, (word &>> 16) & 0xFF, word &>> 24)
                y += keep * SIMD4<Float>(SIMD4<Int32>(truncatingIfNeeded: v))
            }
            if let gains { y *= SIMD4(repeating: gains[x]) }
            let r = unsafeBitCast(clamped(y, upTo: maxval) + magic, to: SIMD4<UInt32>.self)
            let packed = unsafeBitCast(SIMD4<UInt8>(truncatingIfNeeded: r), to: UInt32.self)
            out.storeBytes(of: packed | (word & fourthMask), toByteOffset: 4 &* x, as: UInt32.self)
        }
        // Pixel j of group k: lane j of the group's 7 × 8 values at 56·k.
        let groups = n / 8
        for k in 0..<groups {
            for j in 0..<8 { pixel(8 &* k &+ j, 56 &* k &+ j) }
        }
        for j in 0..<(n &- 8 &* groups) { pixel(8 &* groups &+ j, 56 &* groups &+ j) }
    }
}
