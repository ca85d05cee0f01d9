// The fused one-pass schedule of an edit plan on four-channel integer pixels: decode
// (through the tone table when the plan has leading tone stages), one colour matrix,
// one positional gain, encode — a block of 8 pixels per step (16 where the build
// targets AVX-512), held in registers from load to store. `EditPlan` takes it when the
// fused stages are exactly that shape (the sliders, the looks, sepia, exposure and the
// vignette in any combination) and the pixels are 8-bit or 16-bit with four channels
// in any byte order.
//
// Why it is exact (SPEC §8): the block computes the reference's real number with the
// scaling by maxval `m` folded into the matrix — `m·M·x + m·t` on table entries `x`,
// `M·v + m·t` straight on the integer samples `v` (no division), or, where the tones are
// a line `G·x + o`, `G·M·u + m·(t + o·M·1)` on samples and on table entries given as
// coordinates `u` on the line — clamps to [0, m] and
// rounds half to even. That is the same value rounded differently, within a few `Float`
// ulps of the exact one, so every sample is the correctly rounded value except within
// τ = 2⁻²⁰ of a tie, where either neighbour is right (and where the folded sum often
// lands on the tie exactly and rounds to even). The release-built exhaustive check
// (`photokernels-bench exactness`, run by CI) holds it against a `Double` evaluation on
// all 2²⁴ RGB triples for tie-heavy matrices and the catalog. The relative-to-green form
// keeps greys grey exactly: on integer samples `v_R − v_G` is exact.
//
// Premultiplied 8-bit pixels (SPEC §10) run the same block: the straight colour is the
// stored sample times `m/A` (one division per block), or, with tone tables, an entry
// of a 2D table indexed by `(A, c)` that holds the tones of `c/A`; the clamped result
// is multiplied by `A/m` before rounding, so A = 0 gives 0; into straight pixels the
// factor is 1, or 0 where A = 0.
//
// Why it is fast: 8 pixels of 8-bit samples are one 256-bit load (16 one 512-bit load),
// split into channels with shifts and masks (structure of arrays without a shuffle);
// table entries are scalar loads (24 per 8 pixels) indexed by the bytes in memory, or,
// where the tones are a line (exposure above its dark band) and all the block's samples
// lie on it, the samples themselves: the line is folded into the matrix, and the
// tables hold each entry as its coordinate on the line (the sample itself where it
// lies on it), so the path never changes a result; the matrix broadcasts stay in
// registers; the result is clamped with two lane selects (one `max`, one `min`),
// rounded by adding 2²³, and repacked from the low mantissa bits with shifts and ORs
// (the baseline build's RGBA and BGRA loops, straight and premultiplied: SSE2's
// conversion and packs instead, `BytePacking.rgbaBlock` and
// `BytePacking.premultipliedRGBABlock`; the 16-bit loops where the build targets
// AVX2: the conversion and a saturating pack, `PairLanes.packing`; the baseline
// build's 16-bit loops: SSE2's conversion after the two clamps, `ChannelWords.packing`,
// or at maxval 65535 without gains the conversion and a signed saturating pack,
// `ChannelWords.signedPacking`).
// Every combination of table, matrix form and gain is its own loop (`@inline(never)`
// entry, `@_transparent` body), so no flag is tested per pixel; the loops come twice,
// with RGBA's channel positions as constants (BGRA too, red and blue exchanged) and
// with the block's positions read at run time (`BlockLayout`), and the 8-bit ones once
// for each ending (`BlockEnding`): straight or premultiplied pixels in, 8-bit pixels
// out, straight or premultiplied, or 16-bit ones (a widening block: the same
// arithmetic on the 16-bit scale, packed by `WordPacking`).
//
// `FusedFloatBlock`, at the end, is the one-pass schedule of `Float` rows whose tones
// are a line: exposure, one matrix and the gains.

/// 2²³: adding it to a `Float` in [0, 2²³) rounds to an integer (half to even) and
/// leaves that integer in the low mantissa bits.
private let magic: Float = 8_388_608

// The block's width: 16 pixels per step where the build targets AVX-512 (a channel of
// 16 pixels is one 512-bit register), 8 elsewhere (one 256-bit register where the
// build targets AVX2, two 128-bit ones in the baseline build). The loops are written
// once on these concrete types; a body generic over `SIMD` compiled to lane loops.
#if canImport(TargetFeatures.AVX512)
/// One channel of a block's pixels as `Float`s.
typealias BlockFloats = SIMD16<Float>
/// One 32-bit lane per pixel: an 8-bit pixel's four samples, or one channel.
typealias BlockWords = SIMD16<UInt32>
/// A block of 16-bit pixels, two 32-bit lanes each.
typealias BlockPixelWords16 = SIMD32<UInt32>
/// A lane mask over a block's channel (or half a block of 16-bit pixels).
typealias BlockMask = SIMDMask<SIMD16<Int32>>
/// Half a block of 16-bit pixels, one 64-bit lane each.
typealias PixelQuads = SIMD8<UInt64>
/// Half a block's channel.
typealias HalfBlockFloats = SIMD8<Float>
/// Pixels per block.
let blockPixels = 16
#else
typealias BlockFloats = SIMD8<Float>
typealias BlockWords = SIMD8<UInt32>
typealias BlockPixelWords16 = SIMD16<UInt32>
typealias BlockMask = SIMDMask<SIMD8<Int32>>
typealias PixelQuads = SIMD4<UInt64>
typealias HalfBlockFloats = SIMD4<Float>
let blockPixels = 8
#endif
/// Bytes of a block of 8-bit pixels (the 16-bit block's are twice as many).
let blockBytes8 = 4 * blockPixels

/// Whether any bit of `v` is set: its 64-bit lanes OR-reduced (SIMD `==` and `!=`
/// compile to lane loops).
@_transparent
func anyBitSet(_ v: BlockWords) -> Bool {
    #if canImport(TargetFeatures.AVX512)
    let q = unsafeBitCast(v, to: SIMD8<UInt64>.self), h = q.lowHalf | q.highHalf
    return h[0] | h[1] | h[2] | h[3] != 0
    #else
    let q = unsafeBitCast(v, to: SIMD4<UInt64>.self)
    return q[0] | q[1] | q[2] | q[3] != 0
    #endif
}

/// A block's lanes `at(0)`, `at(1)`, …: one scalar load each for the table lookups.
@_transparent
func blockLanes(_ at: (Int) -> Float) -> BlockFloats {
    #if canImport(TargetFeatures.AVX512)
    BlockFloats(at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7),
                at(8), at(9), at(10), at(11), at(12), at(13), at(14), at(15))
    #else
    BlockFloats(at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7))
    #endif
}

/// The table pointer of a block without tables: never read.
nonisolated(unsafe) private let noTable = UnsafePointer(UnsafeMutablePointer<Float>.allocate(capacity: 1))

/// Where the channels of a four-channel pixel sit: the byte (8-bit) or 16-bit word
/// (16-bit) index of R, G, B and of the fourth sample (alpha or padding), each 0…3.
struct ChannelPositions: Sendable, Hashable {
    var red, green, blue, fourth: Int

    /// `R G B A` in memory order.
    static let rgba = ChannelPositions(red: 0, green: 1, blue: 2, fourth: 3)

    /// The same positions with red and blue exchanged.
    var exchangingRedAndBlue: ChannelPositions { ChannelPositions(red: blue, green: green, blue: red, fourth: fourth) }

    /// The positions as the blocks run them: red before blue (exchanged where red
    /// follows blue, `FusedBlock.init`).
    var redBeforeBlue: ChannelPositions { red > blue ? exchangingRedAndBlue : self }

    /// Whether green, blue and the fourth sample follow red round the pixel (RGBA and
    /// ARGB, with alpha or padding): RGBA's positions rotated by whole samples, which
    /// the 16-bit block requires of `redBeforeBlue`.
    var isRotationOfRGBA: Bool { green == (red + 1) & 3 && blue == (red + 2) & 3 && fourth == (red + 3) & 3 }
}

/// Where the 8-bit loops take the channel positions from: compile-time constants, so
/// that the shifts, masks and table offsets that split and repack a pixel are
/// immediates and the channel in byte 0 needs no shift at all (8–10 % faster), or the
/// block's positions, read at run time (`nil`).
protocol BlockLayout {
    static var positions: ChannelPositions? { get }
}

/// `R G B` then the fourth sample: RGBA and RGBX, and BGRA and BGRX once red and blue
/// are exchanged (`FusedBlock.init`).
enum FourthSampleLast: BlockLayout {
    static var positions: ChannelPositions? { .rgba }
}

/// The block's own positions: ARGB, ABGR, XRGB and XBGR. With their positions as
/// constants the baseline (SSE2) build turns the clamps into compares and shuffles,
/// 1.7× the instructions.
enum PositionsOfTheBlock: BlockLayout {
    static var positions: ChannelPositions? { nil }
}

/// What the 8-bit loops read and write besides their shared decoding, tables and
/// matrix: straight or premultiplied pixels in; 8-bit pixels out, or 16-bit integers
/// or `Float16`s (a widening block, `FusedBlock.runWidening`), each straight or
/// premultiplied. Compile-time constants, so that each loop is its own code, with no
/// flag tested per block; each ending states the flags it sets, the others are false.
protocol BlockEnding {
    /// Whether the source pixels are premultiplied (divided by alpha as they decode).
    static var premultiplied: Bool { get }
    /// Whether the results are multiplied by alpha (premultiplied pixels out).
    static var premultipliesResults: Bool { get }
    /// Whether the results are 16-bit pixels.
    static var widening: Bool { get }
    /// Whether those 16-bit samples are `Float16`s (else integers).
    static var halfPrecision: Bool { get }
}

extension BlockEnding {
    static var premultiplied: Bool { false }
    static var premultipliesResults: Bool { false }
    static var widening: Bool { false }
    static var halfPrecision: Bool { false }

    /// Whether a transparent source pixel must be cleared to all zero (SPEC §10): a
    /// premultiplied source into straight results, where its colour's quotient `c/A`
    /// left whatever the stages gave.
    static var clearsTransparent: Bool { premultiplied && !premultipliesResults }
}

/// Straight (or padded) 8-bit pixels in and out.
enum StraightBytes: BlockEnding {}

/// Premultiplied 8-bit pixels in and out (SPEC §10 inside the block).
enum PremultipliedBytes: BlockEnding {
    static var premultiplied: Bool { true }
    static var premultipliesResults: Bool { true }
}

/// Premultiplied 8-bit pixels in, straight 8-bit ones out (an export from a display
/// buffer).
enum UnpremultipliedBytes: BlockEnding {
    static var premultiplied: Bool { true }
}

/// Straight 8-bit pixels in, premultiplied 8-bit ones out (a decoded image into a
/// display buffer).
enum PremultiplyingBytes: BlockEnding {
    static var premultipliesResults: Bool { true }
}

/// Straight 8-bit pixels in, straight 16-bit ones out.
enum StraightWords: BlockEnding {
    static var widening: Bool { true }
}

/// Premultiplied 8-bit pixels in, straight 16-bit ones out.
enum UnpremultipliedWords: BlockEnding {
    static var premultiplied: Bool { true }
    static var widening: Bool { true }
}

/// Premultiplied 8-bit pixels in, premultiplied 16-bit ones out (a display buffer
/// into a 16-bit CoreGraphics context, whose alpha is premultiplied).
enum PremultipliedWords: BlockEnding {
    static var premultiplied: Bool { true }
    static var premultipliesResults: Bool { true }
    static var widening: Bool { true }
}

/// Straight 8-bit pixels in, premultiplied 16-bit ones out.
enum PremultiplyingWords: BlockEnding {
    static var premultipliesResults: Bool { true }
    static var widening: Bool { true }
}

/// Straight 8-bit pixels in, straight `Float16` ones out.
enum StraightHalves: BlockEnding {
    static var widening: Bool { true }
    static var halfPrecision: Bool { true }
}

/// Premultiplied 8-bit pixels in, straight `Float16` ones out.
enum UnpremultipliedHalves: BlockEnding {
    static var premultiplied: Bool { true }
    static var widening: Bool { true }
    static var halfPrecision: Bool { true }
}

/// Premultiplied 8-bit pixels in, premultiplied `Float16` ones out.
enum PremultipliedHalves: BlockEnding {
    static var premultiplied: Bool { true }
    static var premultipliesResults: Bool { true }
    static var widening: Bool { true }
    static var halfPrecision: Bool { true }
}

/// Straight 8-bit pixels in, premultiplied `Float16` ones out.
enum PremultiplyingHalves: BlockEnding {
    static var premultipliesResults: Bool { true }
    static var widening: Bool { true }
    static var halfPrecision: Bool { true }
}

extension ColorMatrix {
    /// The matrix that follows a tone line `G·x + o`, without its gain: `M·(G·x + o) + t`
    /// is `G·M·x + (t + o·M·1)`, so this is `M` with the offset `t + o·M·1`, and the
    /// caller scales the rows by `G`. A grey-preserving matrix's rows share one sum,
    /// used for all three, so its offsets stay one value.
    func afterLine(offset o: Double) -> ColorMatrix {
        let r = rows
        let sums = greyRowSum.map { SIMD3(repeating: $0) } ?? SIMD3(r.0.sum(), r.1.sum(), r.2.sum())
        return ColorMatrix(r.0, r.1, r.2, offset: offset + o * sums)
    }
}

/// One colour matrix of a block schedule on the samples' scale, broadcast across a
/// block's lanes (column 1 unused in the relative form).
struct BlockMatrix {
    let m00, m01, m02, m10, m11, m12, m20, m21, m22: BlockFloats
    let t0, t1, t2: BlockFloats
    /// The factor on green in the relative form: the rows' common sum, times maxval on
    /// table entries (times the line's gain on coordinates on it).
    let greenGain: BlockFloats

    /// `scale·M` and `offsetScale·t + offsetShift`, computed in `Double` and rounded
    /// once; the relative form multiplies green by `greenGain` (the rows' sum times
    /// `scale`).
    init(_ matrix: ColorMatrix, scale: Double, offsetScale: Double, greenGain: Double, offsetShift: Double = 0) {
        let r = matrix.rows, t = matrix.offset
        func broadcast(_ x: Double) -> BlockFloats { BlockFloats(repeating: Float(x)) }
        (m00, m01, m02) = (broadcast(scale * r.0.x), broadcast(scale * r.0.y), broadcast(scale * r.0.z))
        (m10, m11, m12) = (broadcast(scale * r.1.x), broadcast(scale * r.1.y), broadcast(scale * r.1.z))
        (m20, m21, m22) = (broadcast(scale * r.2.x), broadcast(scale * r.2.y), broadcast(scale * r.2.z))
        (t0, t1, t2) = (broadcast(offsetScale * t.x + offsetShift), broadcast(offsetScale * t.y + offsetShift),
                        broadcast(offsetScale * t.z + offsetShift))
        assert(matrix.greyRowSum == nil || (t.x == t.y && t.y == t.z), "a grey-preserving matrix has one offset")
        self.greenGain = broadcast(greenGain)
    }

    /// The matrix on decoded channels: the relative form
    /// `m00·(R − G) + m02·(B − G) + (s·G + t0)` keeps greys grey exactly (`G·greenGain`
    /// computed once for all three rows); the plain form sums `(m00·R + m02·B) + m01·G
    /// + t0`. Both are symmetric in R and B (the first sum commutes), so a block with
    /// red and blue exchanged, matrix included, gives the same results to the bit.
    ///
    /// The relative form's three offsets are one value (`ColorMatrixKernel` makes
    /// them so for every grey-preserving matrix), so `s·G + t` is computed once for
    /// the three rows: the same sum, two additions fewer per block.
    ///
    /// `greenBias`: the relative form's channels arrive as `bias + c` (exact), whose
    /// differences are the channels' differences; green alone is unbiased.
    @_transparent
    func apply(_ r: BlockFloats, _ g: BlockFloats, _ b: BlockFloats, relative: Bool,
               greenBias: BlockFloats? = nil) -> (BlockFloats, BlockFloats, BlockFloats) {
        if relative {
            return applyRelative(r - g, b - g, green: greenBias == nil ? g : g - greenBias.unsafelyUnwrapped)
        }
        return (m00 * r + m02 * b + m01 * g + t0, m10 * r + m12 * b + m11 * g + t1, m20 * r + m22 * b + m21 * g + t2)
    }

    /// The relative form on the steps `R − G` and `B − G` and on green itself.
    @_transparent
    func applyRelative(_ rg: BlockFloats, _ bg: BlockFloats, green g: BlockFloats) -> (BlockFloats, BlockFloats, BlockFloats) {
        let green = g * greenGain + t0
        return (m00 * rg + m02 * bg + green, m10 * rg + m12 * bg + green, m20 * rg + m22 * bg + green)
    }
}

/// A `BlockMatrix` for 16-bit pixels in pair lanes (`FusedBlock.body16` where the
/// build targets AVX2, and in the portable build; the baseline x86-64 build's channel
/// form reads only `fourthLanes`, through `mostlyOnLine16`): each lane's
/// coefficients are its own channel's row. The red-blue lanes take the row of red or
/// blue, the green-fourth lanes green's row or, for the fourth sample, 0, 0, 1 and no
/// offset, which give back the sample exactly. The terms are `BlockMatrix.apply`'s,
/// summed in another order (and fused where the build targets FMA), so the results may
/// differ from the 8-bit arithmetic's only as SPEC §8 allows, near a tie. Red's and
/// blue's lanes take the same steps, so exchanging red and blue (BGRA) gives the same
/// bits.
struct PairMatrix {
    /// Red-blue lanes: the coefficients on the lane's own channel (`m00`, `m22`), on the
    /// other of red and blue (`m02`, `m20`) and on green (`m01`, `m21`); the offsets.
    let own, other, onGreen, offset: BlockFloats
    /// Green's coefficients on red and blue, each in its channel's lane (`m10`, `m12`).
    let onRedBlue: BlockFloats
    /// Green-fourth lanes: the coefficient on the lane's own sample and the offset.
    let ownGreen, greenRowOffset: BlockFloats
    /// All ones in the green lanes, zeros in the fourth's.
    let greenLaneBits: BlockWords
    /// The relative form's green term `G·greenGain + t0` in every lane, and in the
    /// green-fourth lanes, where the fourth lanes take `1` and `0` instead.
    let greenGain, greenOffset, greenGainOwn, greenOffsetOwn: BlockFloats
    /// The fourth sample's lanes: every pixel's second lane.
    ///
    /// Held as values the optimiser cannot see, like every constant here: where it knew
    /// the pattern of the lanes, it split each vector into its even and odd lanes and
    /// merged them again around every step (about twice the instructions).
    let fourthLanes: BlockMask
    /// The clamp's upper bound in the green-fourth lanes: maxval, and 65535 in the
    /// fourth's, which every fourth sample passes.
    let ceiling: BlockFloats
    /// Whether maxval is below 65535, so that the colour lanes need their clamp above
    /// (`PairLanes.packing`).
    let clamps: Bool
    /// The shuffles and packing.
    let lanes = PairLanes()

    init(_ m: BlockMatrix, maxval: Float) {
        let fourth = unsafeBitCast(PixelQuads(repeating: 0xFFFF_FFFF_0000_0000), to: BlockMask.self)
        func lanes(_ first: BlockFloats, _ second: Float) -> BlockFloats {
            BlockFloats(repeating: first[0]).replacing(with: second, where: fourth)
        }
        own = lanes(m.m00, m.m22[0]); other = lanes(m.m02, m.m20[0])
        onGreen = lanes(m.m01, m.m21[0]); offset = lanes(m.t0, m.t2[0])
        onRedBlue = lanes(m.m10, m.m12[0])
        greenLaneBits = BlockWords(repeating: .max).replacing(with: 0, where: fourth)
        ownGreen = lanes(m.m11, 1); greenRowOffset = lanes(m.t1, 0)
        greenGain = BlockFloats(repeating: m.greenGain[0]); greenOffset = BlockFloats(repeating: m.t0[0])
        greenGainOwn = lanes(m.greenGain, 1); greenOffsetOwn = lanes(m.t0, 0)
        fourthLanes = fourth
        ceiling = lanes(BlockFloats(repeating: maxval), 65535)
        clamps = maxval < 65535
    }
}

/// The constants of one fused block schedule, prepared once per plan and maxval.
///
/// `@unchecked Sendable`: its pointers name tone tables that are never written after
/// they are built and live as long as the plan that holds them, so a block may be
/// handed from the thread that made it to the others of a run.
struct FusedBlock: @unchecked Sendable {
    /// The matrix on decoded samples or table entries.
    let matrix: BlockMatrix
    /// `matrix` for 16-bit pixels in pair lanes (`PairMatrix`).
    let pairMatrix: PairMatrix
    /// Whether the tone tables have a line (`ToneTables.line`): samples `v` with
    /// `v − lineFrom ≤ lineSpan` (unsigned) lie on it, where the tables hold `v` itself
    /// (`ToneTables.coordinates`) and the matrix has the line folded in.
    let hasLine: Bool
    /// The segment's first sample, repeated in every byte (8-bit), and as one value with
    /// the width of the range (8-bit: to 255, the tables cover every byte; 16-bit: to
    /// maxval, samples above it take the table, which clamps them).
    let lineBytes: BlockWords
    let lineFrom: BlockWords, lineSpan: BlockWords
    /// The results' maxval: the samples' (`sampleMaxval`), 65535 in a widening block,
    /// or 1 in a half-precision one, whose results are the plan's on the [0, 1] scale.
    let maxval: BlockFloats
    /// The source samples' maxval, for the straight colour `c·m/A` of premultiplied
    /// pixels.
    let sampleMaxval: BlockFloats
    /// Whether the block widens 8-bit pixels into 16-bit ones (`runWidening`): its
    /// results are on the 16-bit scale and in the destination's colour order.
    let widens: Bool
    /// Whether a widening block's destination holds alpha first (ARGB, ABGR) rather
    /// than last.
    let alphaFirst: Bool
    /// Whether a widening block's results are `Float16`s (unclamped where alpha is
    /// straight: SPEC §10, a float destination keeps the extended range), rather than
    /// 16-bit integers.
    let halfPrecision: Bool
    let relativeToGreen: Bool
    /// Whether samples decode through tone tables (else plainly).
    let hasTables: Bool
    /// The tone tables of R, G, B (as coordinates on the tones' line where they have
    /// one) as plain pointers for the loops (a placeholder, never read, when there are
    /// none), so no optional is tested per block.
    let red, green, blue: UnsafePointer<Float>
    /// The largest valid table index (`maxval`; 255 for 8-bit tables, which cover every byte).
    let lastIndex: Int
    /// 0, as a value the optimiser cannot see: the 8-bit table lookups read their
    /// indices through `source ^ opaqueZero` (see `body8`).
    let opaqueZero: Int
    /// The channels' positions as the block sees them: red before blue in memory
    /// (`init` exchanges them, with the matrix and the tables, where red follows blue).
    let positions: ChannelPositions
    /// Whether the positions are RGBA's, so the 8-bit loops take `FourthSampleLast`.
    let rgbaPositions: Bool
    /// Whether the source pixels are premultiplied (8-bit only; tables are then 2D,
    /// `(A, c)`).
    let premultiplied: Bool
    /// Whether the results (8-bit, or `Float16`) are premultiplied: as the source, or
    /// converted from one alpha mode to the other (`BlockEnding`).
    let premultipliesResults: Bool
    /// 1/m, for the premultiplied result's `A/m`.
    let inverseMaxval: BlockFloats
    /// Whether the baseline build may round and clamp the block's straight 8-bit
    /// results by saturating packs alone (`BytePacking.rgbaBlock`): maxval 255, and
    /// every result before rounding within ±2³⁰ (`largestResult`), where the
    /// conversion to `Int32` is exact.
    let packsBySaturation: Bool
    /// Whether every result the block computes before rounding stays within
    /// `largestWellConditionedResult` (`largestResult`). Beyond it the plan takes the
    /// row path instead: near `Float`'s range the block's arithmetic overflows where the
    /// reference's, on the [0, 1] scale, does not (a huge contrast or saturation), and
    /// with a line, a sample off it is the difference of two large terms (at +64 EV the
    /// coordinate of a black sample is −14 and the line's offset 1.5·10⁹, whose `Float`
    /// rounding alone is 64 sample units).
    let isWellConditioned: Bool
    /// `matrix` with 32768 taken from its offsets, for the baseline x86-64 build's
    /// 16-bit blocks without gains where `packsWordsBySaturation` (no other build reads
    /// it): results 32768 below the samples' scale, which signed packs clamp
    /// (`ChannelWords.signedPacking`).
    let signedWordMatrix: BlockMatrix
    /// Whether those blocks may round and clamp their results so: maxval 65535, and
    /// every result of `signedWordMatrix` before rounding within ±2³⁰ (`largestResult`),
    /// where the conversion to `Int32` is exact.
    let packsWordsBySaturation: Bool
    /// 0xFFFF_0000 in every lane, the fourth sample's bits in a pixel's second lane, as
    /// a value the optimiser cannot see: with the constant it took the fourth samples
    /// apart by eight word shuffles per block (`ChannelWords.signedPacking`).
    let fourthSampleBits = SIMD4<UInt32>(repeating: 0xFFFF_0000)
    /// 1 in every lane, as a value the optimiser cannot see: the alpha by which the
    /// 8-bit loops from premultiplied pixels into straight ones encode an opaque block
    /// (`body8`).
    let unity = BlockFloats(repeating: 1)

    /// The bound of `isWellConditioned`, in units of the samples: 2²⁴, up to which a
    /// `Float` holds every integer, so that each of the block's few roundings, the
    /// coordinates' included, costs at most half a unit. The bound adds magnitudes, so
    /// it is far above any result of a real image: every preset and look, with exposures
    /// to ±8 EV and a strong vignette, stays within it at 8 and 16 bits (tested).
    static let largestWellConditionedResult = 0x1p24

    /// - Parameters:
    ///   - tables: the tone tables, with their line (`ToneTables.line`) if the tones
    ///     have an affine segment.
    ///   - premultiplied: 8-bit premultiplied pixels; `tables`, if any, must be the 2D
    ///     tables (`ToneTables(premultiplied:)`).
    ///   - premultipliesResults: whether the results are premultiplied (by default as
    ///     the source is; a widening block's by default straight).
    ///   - largestGain: a bound on the magnitude of the gains the block will be given
    ///     (`PreparedGains.largestGainMagnitude`); 1 without gains.
    ///   - resultPositions: where the destination holds R, G, B and alpha, when its
    ///     format is not the samples': for a widening block (`widening`, 8-bit pixels
    ///     in, 16-bit out, `runWidening`) a rotation of RGBA or BGRA; for 8-bit pixels
    ///     out, `positions` or them with red and blue exchanged. `nil`: the samples'
    ///     format.
    ///   - halfPrecision: a widening block's results are `Float16`s, not integers.
    init(matrix k: ColorMatrixKernel, maxval: Int, tables: ToneTables?, positions: ChannelPositions,
         premultiplied: Bool = false, premultipliesResults: Bool? = nil, resultPositions: ChannelPositions? = nil,
         widening: Bool = false, halfPrecision: Bool = false, largestGain: Float) {
        assert(!widening || resultPositions != nil, "a widening block's destination positions")
        assert(!halfPrecision || widening, "half-precision results widen")
        // Red after blue in memory (BGRA, ABGR): the block runs as RGBA or ARGB with red
        // and blue exchanged in the matrix and the tables, which gives the same results
        // to the bit (`BlockMatrix.apply`), so that BGRA takes RGBA's loops, whose
        // positions are constants.
        let exchange = positions.red > positions.blue
        let positions = exchange ? positions.exchangingRedAndBlue : positions
        rgbaPositions = positions == .rgba
        // Built in Double, rounded once: `m·M` on decoded table entries, `M` itself on
        // integer samples (v = m·x), and `m·t` in both (with a line, below).
        let m = Double(maxval)
        // A widening block's products are on the 16-bit scale: 257 times the 8-bit one,
        // folded into the matrix, so the block's arithmetic is the same; a half-precision
        // block's on the [0, 1] scale, 1/255 of it.
        let resultMaxval = halfPrecision ? 1 : widening ? 65535 : m
        let resultScale = resultMaxval / m
        let scale = (tables == nil ? 1 : m) * resultScale
        // On the segment the tones are the line `G·x + o`, and the matrix after them
        // `M·(G·v/m + o) + t` on a sample v: the block takes the one matrix
        // `G·M·v + m·(t + o·M·1)` (built in `Double`, rounded once) on the tables'
        // coordinates on the line, which are `v` itself there, so a group whose samples
        // all lie on it takes its samples instead of loading their entries, with the
        // same result.
        // The line is folded before red and blue are exchanged, so that the exchange
        // permutes the same rounded coefficients and BGRA keeps RGBA's bits.
        let source: ColorMatrix, rowScale: Double
        if let toneLine = tables?.line {
            rowScale = toneLine.segment.gain * resultScale
            source = k.matrix.afterLine(offset: toneLine.segment.offset)
            hasLine = true
            lineBytes = BlockWords(repeating: UInt32(toneLine.from) &* 0x0101_0101)
            lineFrom = BlockWords(repeating: UInt32(toneLine.from))
            lineSpan = BlockWords(repeating: UInt32(toneLine.last - toneLine.from))
        } else {
            (source, rowScale) = (k.matrix, scale)
            hasLine = false
            (lineBytes, lineFrom, lineSpan) = (.zero, .zero, .zero)
        }
        var exchanged = exchange ? source.exchangingRedAndBlue : source
        // A block into another format gives its results in the destination's colour
        // order: where its red and blue lie the other way round, the matrix's rows (not
        // its columns, which follow the source) are exchanged, each row's arithmetic
        // unchanged.
        if let resultPositions, (resultPositions.red > resultPositions.blue) != exchange {
            exchanged = exchanged.exchangingRedAndBlueResults
        }
        matrix = BlockMatrix(exchanged, scale: rowScale, offsetScale: resultMaxval, greenGain: rowScale * Double(k.rowSum))
        signedWordMatrix = BlockMatrix(exchanged, scale: rowScale, offsetScale: resultMaxval,
                                       greenGain: rowScale * Double(k.rowSum), offsetShift: -32768)
        pairMatrix = PairMatrix(matrix, maxval: Float(resultMaxval))
        self.maxval = .init(repeating: Float(resultMaxval))
        sampleMaxval = .init(repeating: Float(maxval))
        widens = widening
        alphaFirst = widening && resultPositions?.fourth == 0
        self.halfPrecision = halfPrecision
        relativeToGreen = k.relativeForm
        hasTables = tables != nil
        (red, green, blue) = tables.map {
            let t = $0.coordinates ?? ($0.red, $0.green, $0.blue)
            return exchange ? (t.blue, t.green, t.red) : (t.red, t.green, t.blue)
        } ?? (noTable, noTable, noTable)
        lastIndex = tables.map { $0.count - 1 } ?? 0
        opaqueZero = 0
        self.positions = positions
        self.premultiplied = premultiplied
        self.premultipliesResults = widening ? premultipliesResults == true : premultipliesResults ?? premultiplied
        inverseMaxval = BlockFloats(repeating: Float(1 / Double(maxval)))
        // The block reads samples (at most maxval) or, with tables, their entries or
        // coordinates (which include the samples on a line); the packs must hold for
        // every byte.
        let largestInput = tables?.largestBlockInput ?? Float(maxval)
        // Half-precision results are held to the 16-bit block's bound, on its scale.
        isWellConditioned = Self.largestResult(matrix, input: largestInput, gain: largestGain) * (halfPrecision ? 65535 : 1)
            <= Self.largestWellConditionedResult
        packsBySaturation = resultMaxval == 255 && !premultiplied && !self.premultipliesResults
            && Self.largestResult(matrix, input: max(255, tables?.largestBlockInput ?? 255), gain: largestGain) <= 0x1p30
        packsWordsBySaturation = maxval == 65535 && Self.largestResult(signedWordMatrix, input: largestInput, gain: 1) <= 0x1p30
    }

    /// A bound on |x| for every result `x` of `scaled` (before rounding), and on the
    /// matrix's result before the gain, whose inputs (samples, table entries or
    /// coordinates) are at most `input` in magnitude and whose gain is at most `gain`:
    /// per row, the coefficients' magnitudes (red's and blue's twice, for the relative
    /// form's differences, and the relative form's green gain) times `input`, plus the
    /// offset's, times the larger of `gain` and 1 (a small gain does not keep the
    /// matrix's own result finite); the largest row's. NaN or +∞ where an operand is.
    /// The few roundings of the block's arithmetic stay far inside the factor of 2 that
    /// `packsBySaturation` and `packsWordsBySaturation` leave below 2³¹.
    static func largestResult(_ m: BlockMatrix, input: Float, gain: Float) -> Double {
        func row(_ c0: BlockFloats, _ c1: BlockFloats, _ c2: BlockFloats, _ t: BlockFloats) -> Double {
            let coefficients = 2 * Double(c0[0].magnitude) + Double(c1[0].magnitude) + 2 * Double(c2[0].magnitude)
                + Double(m.greenGain[0].magnitude)
            return (coefficients * Double(input) + Double(t[0].magnitude)) * max(Double(gain.magnitude), 1)
        }
        let rows = [row(m.m00, m.m01, m.m02, m.t0), row(m.m10, m.m11, m.m12, m.t1), row(m.m20, m.m21, m.m22, m.t2)]
        return rows.contains { $0.isNaN } ? .nan : rows.max()!
    }

    /// The integer samples as `Float`s (exact below 2²⁴ through `Int32` lanes): the
    /// plain matrix takes them as they are.
    @_transparent
    func decode(_ v: BlockWords) -> BlockFloats {
        exactFloats(v)
    }

    /// Bytes as `2²³ + v`, exactly: their bits with 2²³'s exponent.
    @_transparent
    func biased(_ v: BlockWords) -> BlockFloats {
        unsafeBitCast(v | BlockWords(repeating: 0x4B00_0000), to: BlockFloats.self)
    }

    /// A value already scaled by maxval, clamped to [0, m] (NaN → 0), times `alpha`
    /// (`A/m`) when premultiplied, and rounded half to even; the integer is left in the
    /// low mantissa bits.
    ///
    /// Without `alpha` the value is rounded first and clamped to [2²³, 2²³ + m] after,
    /// which gives the same integer for every input (below 2²³ every value clamps to
    /// 0, and rounding is monotone), and the lower bound is then not 0: the
    /// baseline (SSE2) build emits `maxps` for it, where a select against 0 becomes a
    /// compare and a mask. With `alpha` the clamp comes first (`clamped(_:upTo:)`).
    @_transparent
    func encode(_ y: BlockFloats, _ alpha: BlockFloats?) -> BlockWords {
        guard let alpha else {
            // The comparison and the replacement use the same operands: the shape the
            // compiler emits as one `max` / `min` instruction.
            let low = BlockFloats(repeating: magic), high = maxval + magic
            var c = y + magic
            c = low.replacing(with: c, where: c .> low)
            c = c.replacing(with: high, where: c .> high)
            return unsafeBitCast(c, to: BlockWords.self)
        }
        return unsafeBitCast(clamped(y, upTo: maxval) * alpha + magic, to: BlockWords.self)
    }

    /// `matrix` on decoded samples, on table entries, or (where the tones have a line)
    /// on samples and entries as coordinates on the line; times the gains, encoded.
    @_transparent
    func transform(_ r: BlockFloats, _ g: BlockFloats, _ b: BlockFloats, relative: Bool, gain: BlockFloats?,
                   alpha: BlockFloats? = nil, greenBias: BlockFloats? = nil)
        -> (BlockWords, BlockWords, BlockWords) {
        let (x, y, z) = scaled(r, g, b, relative: relative, gain: gain, greenBias: greenBias)
        return (encode(x, alpha), encode(y, alpha), encode(z, alpha))
    }

    /// `matrix` (`signedWordMatrix` for `signedWords`) times the gains, before encoding.
    @_transparent
    func scaled(_ r: BlockFloats, _ g: BlockFloats, _ b: BlockFloats, relative: Bool, gain: BlockFloats?,
                greenBias: BlockFloats? = nil, signedWords: Bool = false) -> (BlockFloats, BlockFloats, BlockFloats) {
        var (x, y, z) = (signedWords ? signedWordMatrix : matrix).apply(r, g, b, relative: relative, greenBias: greenBias)
        if let gain {
            x = gain * x; y = gain * y; z = gain * z
        }
        return (x, y, z)
    }

    /// The relative form from the steps `R − G`, `B − G` and green, without gains.
    @_transparent
    func scaledSteps(_ rg: BlockFloats, _ bg: BlockFloats, green g: BlockFloats,
                     signedWords: Bool) -> (BlockFloats, BlockFloats, BlockFloats) {
        (signedWords ? signedWordMatrix : matrix).applyRelative(rg, bg, green: g)
    }

    /// Whether every colour byte of a block of 8-bit pixels is at least the segment's first
    /// sample `n` (≤ 128): the fourth bytes set to 255 so they pass, then the word test
    /// for a byte below `n`, `(x − n·0x01010101) & ~x & 0x80808080` (exact for the
    /// whole word when n ≤ 128; "Bit Twiddling Hacks", Anderson), OR-reduced through
    /// 64-bit lanes (`anyBitSet`).
    @_transparent
    func allOnLine(_ v: BlockWords, _ fourthMask: BlockWords) -> Bool {
        let x = v | fourthMask
        let below = (x &- lineBytes) & ~x & BlockWords(repeating: 0x8080_8080)
        return !anyBitSet(below)
    }

    /// Whether at least 5 in 8 of the piece's first 16 groups lie on the line (8-bit).
    /// Then the loop that takes such groups' samples instead of their table entries
    /// pays; otherwise its test is a badly predicted branch and the table loop is faster
    /// (the tables hold the samples themselves there, so the choice never changes a
    /// result). The first groups are the ones the loop reads next: groups spread over
    /// the piece cost a cache miss each, 10 % of the recipe row.
    func mostlyOnLine8(_ s: UnsafePointer<UInt8>, blocks: Int) -> Bool {
        let fourthMask = BlockWords(repeating: 0xFF << UInt32(8 * positions.fourth))
        return Self.mostly(blocks) { j in
            allOnLine(UnsafeRawPointer(s).loadUnaligned(fromByteOffset: blockBytes8 &* j, as: BlockWords.self), fourthMask)
        }
    }

    /// `mostlyOnLine8` for 16-bit samples.
    func mostlyOnLine16(_ s: UnsafePointer<UInt16>, blocks: Int) -> Bool {
        let rotation = UInt64(16 &* positions.red)
        @_transparent func onLine(_ offset: Int) -> Bool {
            let v = PairLanes.rotating(UnsafeRawPointer(s).loadUnaligned(fromByteOffset: offset, as: BlockWords.self), right: rotation)
            return pairsOnLine(v & BlockWords(repeating: 0xFFFF), v &>> 16, pairMatrix.fourthLanes)
        }
        return Self.mostly(blocks) { j in onLine(2 &* blockBytes8 &* j) && onLine((2 &* j &+ 1) &* blockBytes8) }
    }

    /// Whether `onLine(j)` holds for at least 5 in 8 of the first 16 groups `j` of
    /// `blocks` (false for none).
    @inline(__always)
    private static func mostly(_ blocks: Int, _ onLine: (Int) -> Bool) -> Bool {
        let sampled = min(blocks, 16)
        var on = 0
        for j in 0..<sampled where onLine(j) { on += 1 }
        return sampled > 0 && 8 * on >= 5 * sampled
    }

    /// A block's table entries, indexed by the bytes at `s[c]`, `s[c + 4]`, … (one
    /// channel of a block of 8-bit pixels); 8-bit tables cover every byte, so no index
    /// is clamped.
    @_transparent
    func lookup(_ t: UnsafePointer<Float>, _ s: UnsafePointer<UInt8>, _ c: Int) -> BlockFloats {
        // The entry's address as an integer: indexing the pointer directly let the
        // optimiser turn the loads into a gather, 20 % slower on AMD Zen.
        let base = Int(bitPattern: t)
        @_transparent func at(_ i: Int) -> Float {
            UnsafePointer<Float>(bitPattern: base &+ Int(s[c &+ 4 &* i]) &<< 2).unsafelyUnwrapped.pointee
        }
        return blockLanes(at)
    }

    /// The entry of the table at address `base` for a 16-bit sample `v`, its index
    /// clamped to the table (`lastIndex`, maxval): one scalar load, as in `lookup`.
    @_transparent
    func clampedEntry(_ base: Int, _ v: UInt16) -> Float {
        let i = Int(v)
        // Not `min`: in the baseline build's loops it became a call.
        return UnsafePointer<Float>(bitPattern: base &+ (i < lastIndex ? i : lastIndex) &<< 2).unsafelyUnwrapped.pointee
    }

    /// A block's entries of a 2D premultiplied table, indexed by `A·256 + c` of one
    /// channel `c` and the alpha `A` of each 8-bit pixel; scalar loads, as in `lookup`.
    @_transparent
    func lookup2D(_ t: UnsafePointer<Float>, _ s: UnsafePointer<UInt8>, _ c: Int, alpha a: Int) -> BlockFloats {
        let base = Int(bitPattern: t)
        @_transparent func at(_ i: Int) -> Float {
            let index = Int(s[c &+ 4 &* i]) | Int(s[a &+ 4 &* i]) &<< 8
            return UnsafePointer<Float>(bitPattern: base &+ index &<< 2).unsafelyUnwrapped.pointee
        }
        return blockLanes(at)
    }

    /// The pixels before the first `blockBytes`-byte boundary of `destination` (a
    /// power of two up to 64), which pixels aligned to their size reach, where the
    /// build targets AVX2; 0 when `destination` is on a boundary, its pixels are not
    /// aligned, the boundary lies `count` pixels away or further, and in other builds,
    /// which split the block's accesses into 16-byte ones. A large array's elements
    /// start 16 bytes past a 32-byte boundary, so without this every other 32-byte
    /// store of an 8-pixel 8-bit block, and every 64-byte store of a 16-pixel one (and,
    /// in a run in place or between two such arrays, their loads), would span two lines
    /// (`pipeline/rgba8/adjustments/simd4` with 8-pixel blocks: 1.08× faster with it on
    /// a Xeon).
    @inline(__always)
    static func leadingPixels(_ destination: UnsafeMutableRawPointer, pixelBytes: Int, blockBytes: Int, count: Int) -> Int {
        #if canImport(TargetFeatures.AVX2)
        guard let head = pixelsBeforeBoundary(destination, boundary: blockBytes, pixelBytes: pixelBytes),
              head < count else { return 0 }
        return head
        #else
        return 0
        #endif
    }

    // MARK: 8-bit

    /// Runs `count` pixels of 8-bit samples from `source` to `destination` (which may
    /// be the same memory), `gains` holding one gain per pixel or `nil`. The last
    /// pixels short of a block go through the same block via a zero-padded copy, and so
    /// do, where the build targets AVX2, the pixels before the first block-sized (32- or,
    /// with AVX-512, 64-byte) boundary of a 4-byte-aligned destination, so that no
    /// block's store spans two cache lines, nor its load where the source has the
    /// destination's alignment (`leadingPixels`).
    func run8(_ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>, count: Int,
              gains: UnsafePointer<Float>?) {
        let head = Self.leadingPixels(destination, pixelBytes: 4, blockBytes: blockBytes8, count: count)
        if head != 0 {
            run8(source, destination, count: head, gains: gains)
            return run8(source + 4 &* head, destination + 4 &* head, count: count &- head, gains: gains.map { $0 + head })
        }
        let whole = count / blockPixels
        dispatch8(source, destination, blocks: whole, gains: gains)
        let rest = count - whole * blockPixels
        guard rest > 0 else { return }
        var pixels = BlockWords(), tailGains = BlockFloats()
        withUnsafeMutableBytes(of: &pixels) { $0.baseAddress!.copyMemory(from: source + whole * blockBytes8, byteCount: rest * 4) }
        if let gains {
            withUnsafeMutableBytes(of: &tailGains) { $0.baseAddress!.copyMemory(from: gains + whole * blockPixels, byteCount: rest * 4) }
        }
        withUnsafeMutableBytes(of: &pixels) { p in
            withUnsafeBytes(of: tailGains) { g in
                let bytes = p.baseAddress!.assumingMemoryBound(to: UInt8.self)
                dispatch8(bytes, bytes, blocks: 1, gains: gains == nil ? nil : g.baseAddress!.assumingMemoryBound(to: Float.self))
            }
        }
        withUnsafeBytes(of: pixels) { (destination + whole * blockBytes8).update(from: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: rest * 4) }
    }

    /// The loops of the block's alpha modes in and out.
    private func dispatch8(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, blocks: Int,
                           gains: UnsafePointer<Float>?) {
        switch (premultiplied, premultipliesResults) {
        case (false, false): dispatch8(s, d, blocks: blocks, gains: gains, StraightBytes.self)
        case (true, true): dispatch8(s, d, blocks: blocks, gains: gains, PremultipliedBytes.self)
        case (true, false): dispatch8(s, d, blocks: blocks, gains: gains, UnpremultipliedBytes.self)
        case (false, true): dispatch8(s, d, blocks: blocks, gains: gains, PremultiplyingBytes.self)
        }
    }

    /// The loops of the block's layout with the ending `E`.
    private func dispatch8<E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, blocks: Int,
                                           gains: UnsafePointer<Float>?, _ e: E.Type) {
        if rgbaPositions {
            dispatch8(s, d, blocks: blocks, gains: gains, FourthSampleLast.self, e)
        } else {
            dispatch8(s, d, blocks: blocks, gains: gains, PositionsOfTheBlock.self, e)
        }
    }

    /// The loop for the block's tables, line, matrix form and gains, with the layout `L`
    /// and the ending `E`.
    private func dispatch8<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>,
                                                           blocks: Int, gains: UnsafePointer<Float>?, _ l: L.Type, _ e: E.Type) {
        switch (hasTables, hasLine && mostlyOnLine8(s, blocks: blocks), relativeToGreen, gains) {
        case (false, _, false, nil): loop8TF(s, d, blocks, l, e)
        case (false, _, true, nil): loop8TR(s, d, blocks, l, e)
        case (true, false, false, nil): loop8LF(s, d, blocks, l, e)
        case (true, false, true, nil): loop8LR(s, d, blocks, l, e)
        case (true, true, false, nil): loop8SF(s, d, blocks, l, e)
        case (true, true, true, nil): loop8SR(s, d, blocks, l, e)
        case (false, _, false, let g?): loop8TFG(s, d, blocks, g, l, e)
        case (false, _, true, let g?): loop8TRG(s, d, blocks, g, l, e)
        case (true, false, false, let g?): loop8LFG(s, d, blocks, g, l, e)
        case (true, false, true, let g?): loop8LRG(s, d, blocks, g, l, e)
        case (true, true, false, let g?): loop8SFG(s, d, blocks, g, l, e)
        case (true, true, true, let g?): loop8SRG(s, d, blocks, g, l, e)
        }
    }

    // One loop per combination: T plain decoding / L table / S table and the tones'
    // line, F plain / R relative form, G with gains; each for every layout and ending.
    @inline(never) func loop8TF<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ l: L.Type, _ e: E.Type) { body8(s, d, n, nil, table: false, relative: false, l, e) }
    @inline(never) func loop8TFG<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>, _ l: L.Type, _ e: E.Type) { body8(s, d, n, g, table: false, relative: false, l, e) }
    @inline(never) func loop8TR<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ l: L.Type, _ e: E.Type) { body8(s, d, n, nil, table: false, relative: true, l, e) }
    @inline(never) func loop8TRG<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>, _ l: L.Type, _ e: E.Type) { body8(s, d, n, g, table: false, relative: true, l, e) }
    @inline(never) func loop8LF<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ l: L.Type, _ e: E.Type) { body8(s, d, n, nil, table: true, relative: false, l, e) }
    @inline(never) func loop8LFG<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>, _ l: L.Type, _ e: E.Type) { body8(s, d, n, g, table: true, relative: false, l, e) }
    @inline(never) func loop8LR<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ l: L.Type, _ e: E.Type) { body8(s, d, n, nil, table: true, relative: true, l, e) }
    @inline(never) func loop8LRG<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>, _ l: L.Type, _ e: E.Type) { body8(s, d, n, g, table: true, relative: true, l, e) }
    @inline(never) func loop8SF<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ l: L.Type, _ e: E.Type) { body8(s, d, n, nil, table: true, line: true, relative: false, l, e) }
    @inline(never) func loop8SFG<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>, _ l: L.Type, _ e: E.Type) { body8(s, d, n, g, table: true, line: true, relative: false, l, e) }
    @inline(never) func loop8SR<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ l: L.Type, _ e: E.Type) { body8(s, d, n, nil, table: true, line: true, relative: true, l, e) }
    @inline(never) func loop8SRG<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ n: Int, _ g: UnsafePointer<Float>, _ l: L.Type, _ e: E.Type) { body8(s, d, n, g, table: true, line: true, relative: true, l, e) }

    // MARK: 8-bit in, 16-bit out

    /// Runs `count` 8-bit pixels from `source` into 16-bit ones (native byte order) at
    /// `destination`, which must not overlap it: integer results on the 16-bit scale in
    /// the destination's positions (`resultPositions`), alpha `257·A`, or with
    /// `halfPrecision` the bits of `Float16` results, alpha `Float16(A/255)`. Straight
    /// integers are clamped as they round, straight halves left unclamped; premultiplied
    /// results (`premultipliesResults`) are clamped to the scale (NaN to 0) and
    /// multiplied by `A/255` before they round (SPEC §10). Premultiplied pixels are
    /// divided by their alpha as in `run8`, and a transparent one is all zero (in any
    /// destination: straight results are cleared, premultiplied ones multiplied by
    /// alpha 0). The last pixels short of a block, and
    /// where the build targets AVX2 those before the destination's first 64-byte
    /// boundary, go through the same block via a zero-padded copy (see `run8`).
    func runWidening(_ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt16>, count: Int,
                     gains: UnsafePointer<Float>?) {
        assert(widens, "a widening block")
        let head = Self.leadingPixels(destination, pixelBytes: 8, blockBytes: 64, count: count)
        if head != 0 {
            runWidening(source, destination, count: head, gains: gains)
            return runWidening(source + 4 &* head, destination + 4 &* head, count: count &- head,
                               gains: gains.map { $0 + head })
        }
        let whole = count / blockPixels
        dispatchWidening(source, destination, blocks: whole, gains: gains)
        let rest = count - whole * blockPixels
        guard rest > 0 else { return }
        var pixels = BlockWords(), tailGains = BlockFloats(), results = BlockPixelWords16()
        withUnsafeMutableBytes(of: &pixels) { $0.baseAddress!.copyMemory(from: source + whole * blockBytes8, byteCount: rest * 4) }
        if let gains {
            withUnsafeMutableBytes(of: &tailGains) { $0.baseAddress!.copyMemory(from: gains + whole * blockPixels, byteCount: rest * 4) }
        }
        withUnsafeBytes(of: pixels) { p in
            withUnsafeBytes(of: tailGains) { g in
                withUnsafeMutableBytes(of: &results) { r in
                    dispatchWidening(p.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                     r.baseAddress!.assumingMemoryBound(to: UInt16.self), blocks: 1,
                                     gains: gains == nil ? nil : g.baseAddress!.assumingMemoryBound(to: Float.self))
                }
            }
        }
        withUnsafeBytes(of: results) {
            UnsafeMutableRawPointer(destination + whole * 4 * blockPixels).copyMemory(from: $0.baseAddress!, byteCount: rest * 8)
        }
    }

    private func dispatchWidening(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt16>, blocks: Int,
                                  gains: UnsafePointer<Float>?) {
        let bytes = UnsafeMutableRawPointer(d).assumingMemoryBound(to: UInt8.self)
        switch (premultiplied, halfPrecision, premultipliesResults) {
        case (false, false, false): dispatch8(s, bytes, blocks: blocks, gains: gains, StraightWords.self)
        case (true, false, false): dispatch8(s, bytes, blocks: blocks, gains: gains, UnpremultipliedWords.self)
        case (true, false, true): dispatch8(s, bytes, blocks: blocks, gains: gains, PremultipliedWords.self)
        case (false, false, true): dispatch8(s, bytes, blocks: blocks, gains: gains, PremultiplyingWords.self)
        case (false, true, false): dispatch8(s, bytes, blocks: blocks, gains: gains, StraightHalves.self)
        case (true, true, false): dispatch8(s, bytes, blocks: blocks, gains: gains, UnpremultipliedHalves.self)
        case (true, true, true): dispatch8(s, bytes, blocks: blocks, gains: gains, PremultipliedHalves.self)
        case (false, true, true): dispatch8(s, bytes, blocks: blocks, gains: gains, PremultiplyingHalves.self)
        }
    }

    /// `blocks` blocks of `blockPixels` pixels; every block loads its pixels before storing, so
    /// the source and destination may be the same memory (but for a widening ending,
    /// whose destination advances twice as fast). With `line`, a group whose
    /// colour samples all lie on the tones' line (straight or opaque) takes its samples
    /// instead of loading its table entries, which hold the same numbers.
    @_transparent
    func body8<L: BlockLayout, E: BlockEnding>(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ blocks: Int,
                                               _ gains: UnsafePointer<Float>?, table: Bool, line: Bool = false, relative: Bool,
                                               _ layout: L.Type, _ ending: E.Type) {
        // Read from the types, so that the nested loop is specialised on them.
        let premultiplied = E.premultiplied, premultipliesResults = E.premultipliesResults, widening = E.widening
        let byte = BlockWords(repeating: 0xFF)
        let p = L.positions ?? positions
        let (rs, gs, bs, fs) = (UInt32(8 * p.red), UInt32(8 * p.green), UInt32(8 * p.blue), UInt32(8 * p.fourth))
        let fourthMask = BlockWords(repeating: 0xFF << UInt32(8 * p.fourth))
        // An encoded result is `2²³ + c`, c ≤ 255: its bits are 0x4B0000cc. A shift by
        // 8 or 16 pushes the exponent's byte out, so only a result for byte 0 needs its
        // mask (with positions read at run time the shift may be 0, and all keep it).
        // The loops on premultiplied pixels, in or out, keep every mask: without them the
        // native build's premultiplied loops were shorter but 5 % slower (the others
        // were measured with them only).
        @_transparent func place(_ c: BlockWords, _ shift: UInt32) -> BlockWords {
            L.positions != nil && !premultiplied && !premultipliesResults && shift >= 8 ? c &<< shift : (c & byte) &<< shift
        }
        let input = UnsafeRawPointer(s), output = UnsafeMutableRawPointer(d)
        // The lookups' indices come from the same bytes as `v`, and where `v` is also
        // tested (the line, opacity) the optimiser took them out of `v` (a `vpextrd` and
        // a `movzbl` per index, 16 of the 24 indices of an 8-pixel block) rather than
        // load each byte (one `movzbl`): through a pointer it cannot prove to be `s`,
        // each index is its own load (`pipeline/rgba8/recipe/simd4` 1.09× faster on a
        // Xeon, 8-pixel blocks). The 16-bit loop's lookups were loads already.
        let indices = UnsafePointer<UInt8>(bitPattern: Int(bitPattern: s) ^ opaqueZero).unsafelyUnwrapped
        // One loop per packing, chosen once: with the choice inside the loop both
        // packings' registers stay live, and the baseline build's blocks spill their
        // coefficients. Transparent, not `@inline(__always)`, which left one of the two
        // calls a call to a copy taking the flags at run time.
        @_transparent func run(saturating: Bool) {
            var offset = 0
            let inPlace = input == UnsafeRawPointer(output)
            for j in 0..<blocks {
                // The piece is walked front to back: the destination its ordinary stores
                // would first read, and a separate source, are asked for 4 KiB ahead.
                if widening {
                    Prefetch.block(at: offset, bytes: blockBytes8, source: input, destination: output,
                                   destinationOffset: 2 &* offset, destinationBytes: 2 &* blockBytes8)
                } else {
                    Prefetch.block(at: offset, bytes: blockBytes8, destination: output, source: input, inPlace: inPlace)
                }
                let v = input.loadUnaligned(fromByteOffset: offset, as: BlockWords.self)
                var r, g, b: BlockFloats
                // Premultiplied results: A/m for the result. A block of opaque pixels (the
                // common case, tested with one OR-reduction) is its own straight colour: the
                // 1D decoding, or the 2D table's row A = 255, and A/m = 1 exactly.
                var alpha: BlockFloats? = nil, bias: BlockFloats? = nil
                let opaque = (premultiplied || premultipliesResults) && Self.isOpaque(v, fourthMask)
                if premultipliesResults { alpha = BlockFloats(repeating: 1) }
                // Straight pixels into premultiplied ones: A/m, decided before the lookups,
                // whose entries would otherwise stay live across the test of `opaque`
                // (spilled where the build targets AVX-512, 1.5× slower).
                if premultipliesResults && !premultiplied && !opaque {
                    alpha = decode((v &>> fs) & byte) * inverseMaxval
                }
                if line && (!premultiplied || opaque) && allOnLine(v, fourthMask) {
                    r = decode((v &>> rs) & byte); g = decode((v &>> gs) & byte); b = decode((v &>> bs) & byte)
                } else if table && premultiplied && !opaque {
                    let at = indices + offset
                    r = lookup2D(red, at, p.red, alpha: p.fourth)
                    g = lookup2D(green, at, p.green, alpha: p.fourth)
                    b = lookup2D(blue, at, p.blue, alpha: p.fourth)
                    if premultipliesResults { alpha = decode((v &>> fs) & byte) * inverseMaxval }
                } else if table {
                    let at = indices + offset, row = premultiplied ? 255 &<< 8 : 0
                    r = lookup(red + row, at, p.red)
                    g = lookup(green + row, at, p.green)
                    b = lookup(blue + row, at, p.blue)
                } else if relative && !premultiplied {
                    // 2²³ + c from the bits (exact): the differences need no conversion.
                    r = biased((v &>> rs) & byte); g = biased((v &>> gs) & byte); b = biased((v &>> bs) & byte)
                    bias = BlockFloats(repeating: magic)
                } else {
                    r = decode((v &>> rs) & byte); g = decode((v &>> gs) & byte); b = decode((v &>> bs) & byte)
                    if premultiplied && !opaque {
                        // The straight colour on the samples' scale, c·m/A (A = 0: not finite,
                        // and the result is 0 after the clamp and the multiply by A/m).
                        let a = decode((v &>> fs) & byte)
                        let k = sampleMaxval / a
                        r *= k; g *= k; b *= k
                        if premultipliesResults { alpha = a * inverseMaxval }
                    }
                }
                // Straight 8-bit results from premultiplied pixels: encoded as premultiplied
                // ones are, with alpha 1, or 0 where A = 0 ((A + 255) >> 8), so that a
                // transparent pixel is all zero (SPEC §10) whatever its colour's quotient
                // gave; clamping before rounding gives the same integers as `encode`
                // without alpha. Straight encoding and a mask on the packed pixels, or 1
                // as a constant, were taken apart lane by lane where the build targets
                // AVX-512 (2× slower); `unity` is 1 the optimiser cannot see. Here after the
                // lookups: before them, the loop was taken apart too (1.5× slower).
                if E.clearsTransparent && !widening {
                    alpha = opaque ? unity : decode((((v &>> fs) & byte) &+ 255) &>> 8)
                }
                let gain = gains.map { UnsafeRawPointer($0).loadUnaligned(fromByteOffset: MemoryLayout<BlockFloats>.size &* j, as: BlockFloats.self) }
                if widening {
                    // 16-bit results; a transparent premultiplied pixel is all zero (SPEC
                    // §10), whatever its colour's quotient gave.
                    var (x, y, z) = scaled(r, g, b, relative: relative, gain: gain, greenBias: bias)
                    // Premultiplied results: the colour clamped to the scale, [0, 1] or
                    // [0, 65535] (NaN to 0), times A/m (SPEC §10); at A = 0 all zero.
                    if E.premultipliesResults, let alpha {
                        (x, y, z) = (clamped(x, upTo: maxval) * alpha, clamped(y, upTo: maxval) * alpha,
                                     clamped(z, upTo: maxval) * alpha)
                    }
                    let pixels = widened(x, y, z, alpha: (v &>> fs) & byte, halfPrecision: E.halfPrecision,
                                         clearingTransparent: E.clearsTransparent && !opaque)
                    output.storeBytes(of: pixels, toByteOffset: 2 &* offset, as: BlockPixelWords16.self)
                    offset &+= blockBytes8
                    continue
                }
                #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && !canImport(TargetFeatures.AVX2)
                // The baseline build rounds, clamps and packs R G B A, straight or
                // premultiplied, with SSE2's conversion and packs (`BytePacking`).
                if L.positions == .rgba {
                    let (x, y, z) = scaled(r, g, b, relative: relative, gain: gain, greenBias: bias)
                    let out = if let alpha {
                        BytePacking.premultipliedRGBABlock(x, y, z, alpha: alpha, maxval: maxval, fourth: v & fourthMask)
                    } else {
                        BytePacking.rgbaBlock(x, y, z, maxval: maxval, fourth: v & fourthMask, saturating: saturating)
                    }
                    output.storeBytes(of: out, toByteOffset: offset, as: BlockWords.self)
                    offset &+= blockBytes8
                    continue
                }
                #endif
                let (x, y, z) = transform(r, g, b, relative: relative, gain: gain, alpha: alpha, greenBias: bias)
                let out = place(x, rs) | place(y, gs) | place(z, bs) | (v & fourthMask)
                output.storeBytes(of: out, toByteOffset: offset, as: BlockWords.self)
                offset &+= blockBytes8
            }
        }
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && !canImport(TargetFeatures.AVX2)
        if packsBySaturation && L.positions == .rgba && !premultiplied && !premultipliesResults && !widening {
            run(saturating: true)
        } else {
            run(saturating: false)
        }
        #else
        run(saturating: false)
        #endif
    }

    /// A widening block's 16-bit pixels as they lie in memory, from its three results
    /// (in the destination's colour order) before rounding, on the 16-bit scale or with
    /// `halfPrecision` on the [0, 1] scale, and its 8-bit alphas `a`, which become
    /// `257·a`, or `Float16(a/255)`. Each colour is rounded and clamped as `encode` does
    /// at maxval 65535 (`WordPacking.words`: in the baseline build it may take the other
    /// neighbour within 2⁻⁹ of a tie), or rounded to `Float16` as it is
    /// (`HalfPacking.halfWords`, the bits of `Float16(x)`); the pixel's words in the
    /// order first colour, green, other colour, alpha, or alpha first (`alphaFirst`).
    /// With `clearingTransparent`, a pixel whose alpha is 0 is all zero, whatever its
    /// colours' quotients c/A gave.
    @_transparent
    func widened(_ x: BlockFloats, _ y: BlockFloats, _ z: BlockFloats, alpha a: BlockWords,
                 halfPrecision: Bool, clearingTransparent: Bool) -> BlockPixelWords16 {
        // All ones where a > 0 ((a + 255) >> 8 is 1 there, 0 at a = 0), applied to the
        // colours' integers: on the floats, LLVM took the mask apart lane by lane.
        let visible = clearingTransparent ? BlockWords.zero &- ((a &+ 255) &>> 8) : nil
        // The half-precision bits are words too, packed as the 16-bit integers are.
        @_transparent func halves(_ v: BlockFloats) -> BlockWords { HalfPacking.halfWords(v) }
        #if arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS
        @_transparent func words(_ v: BlockFloats) -> BlockWords {
            halfPrecision ? WordPacking.alphaWords(halves(v)) : WordPacking.words(v)
        }
        var (wx, wy, wz) = (words(x), words(y), words(z))
        if let visible {
            let hidden = ~visible & WordPacking.hidden
            (wx, wy, wz) = ((wx & visible) | hidden, (wy & visible) | hidden, (wz & visible) | hidden)
        }
        let wa = WordPacking.alphaWords(halfPrecision ? halves(decode(a) * inverseMaxval) : (a &<< 8) | a)
        let (w0, w1, w2, w3) = alphaFirst ? (wa, wx, wy, wz) : (wx, wy, wz, wa)
        #if canImport(TargetFeatures.AVX512)
        let pixels = BlockPixelWords16(lowHalf: WordPacking.pixels(w0.lowHalf, w1.lowHalf, w2.lowHalf, w3.lowHalf),
                                       highHalf: WordPacking.pixels(w0.highHalf, w1.highHalf, w2.highHalf, w3.highHalf))
        #else
        let pixels = WordPacking.pixels(w0, w1, w2, w3)
        #endif
        #else
        let word = visible.map { $0 & 0xFFFF } ?? BlockWords(repeating: 0xFFFF)
        @_transparent func words(_ v: BlockFloats) -> BlockWords { halfPrecision ? halves(v) : encode(v, nil) }
        let (wx, wy, wz) = (words(x) & word, words(y) & word, words(z) & word)
        let wa = halfPrecision ? halves(decode(a) * inverseMaxval) : (a &<< 8) | a
        let (w0, w1, w2, w3) = alphaFirst ? (wa, wx, wy, wz) : (wx, wy, wz, wa)
        let pixels = Self.interleaving(w0 | (w1 &<< 16), w2 | (w3 &<< 16))
        #endif
        return pixels
    }

    /// The lanes of `first` and `second` alternating: `first₀, second₀, first₁, …`.
    @_transparent
    static func interleaving(_ f: BlockWords, _ s: BlockWords) -> BlockPixelWords16 {
        #if canImport(TargetFeatures.AVX512)
        BlockPixelWords16(lowHalf: BlockWords(f[0], s[0], f[1], s[1], f[2], s[2], f[3], s[3],
                                              f[4], s[4], f[5], s[5], f[6], s[6], f[7], s[7]),
                          highHalf: BlockWords(f[8], s[8], f[9], s[9], f[10], s[10], f[11], s[11],
                                               f[12], s[12], f[13], s[13], f[14], s[14], f[15], s[15]))
        #else
        BlockPixelWords16(lowHalf: BlockWords(f[0], s[0], f[1], s[1], f[2], s[2], f[3], s[3]),
                          highHalf: BlockWords(f[4], s[4], f[5], s[5], f[6], s[6], f[7], s[7]))
        #endif
    }

    /// Whether the fourth sample of every 8-bit pixel of a block is 255: the missing
    /// alpha bits OR-reduced through 64-bit lanes (SIMD `==` compiles to a lane loop).
    @_transparent
    static func isOpaque(_ v: BlockWords, _ fourthMask: BlockWords) -> Bool {
        return !anyBitSet(~v & fourthMask)
    }

    // MARK: 16-bit

    /// Runs `count` pixels of 16-bit samples (native byte order); see `run8`. Where the
    /// build targets AVX2 the blocks start at a 64-byte boundary of an 8-byte-aligned
    /// destination.
    func run16(_ source: UnsafePointer<UInt16>, _ destination: UnsafeMutablePointer<UInt16>, count: Int,
               gains: UnsafePointer<Float>?) {
        assert(positions.isRotationOfRGBA, "the 16-bit block rotates its pixels into RGBA's positions")
        let head = Self.leadingPixels(destination, pixelBytes: 8, blockBytes: 64, count: count)
        if head != 0 {
            run16(source, destination, count: head, gains: gains)
            return run16(source + 4 &* head, destination + 4 &* head, count: count &- head, gains: gains.map { $0 + head })
        }
        let whole = count / blockPixels
        dispatch16(source, destination, blocks: whole, gains: gains)
        let rest = count - whole * blockPixels
        guard rest > 0 else { return }
        var pixels = BlockPixelWords16(), tailGains = BlockFloats()
        withUnsafeMutableBytes(of: &pixels) { $0.baseAddress!.copyMemory(from: source + whole * 4 * blockPixels, byteCount: rest * 8) }
        if let gains {
            withUnsafeMutableBytes(of: &tailGains) { $0.baseAddress!.copyMemory(from: gains + whole * blockPixels, byteCount: rest * 4) }
        }
        withUnsafeMutableBytes(of: &pixels) { p in
            withUnsafeBytes(of: tailGains) { g in
                let words = p.baseAddress!.assumingMemoryBound(to: UInt16.self)
                dispatch16(words, words, blocks: 1, gains: gains == nil ? nil : g.baseAddress!.assumingMemoryBound(to: Float.self))
            }
        }
        withUnsafeBytes(of: pixels) { (destination + whole * 4 * blockPixels).update(from: $0.baseAddress!.assumingMemoryBound(to: UInt16.self), count: rest * 4) }
    }

    private func dispatch16(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, blocks: Int,
                            gains: UnsafePointer<Float>?) {
        if rgbaPositions {
            dispatch16(s, d, blocks: blocks, gains: gains, FourthSampleLast.self)
        } else {
            dispatch16(s, d, blocks: blocks, gains: gains, PositionsOfTheBlock.self)
        }
    }

    private func dispatch16<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, blocks: Int,
                                            gains: UnsafePointer<Float>?, _ l: L.Type) {
        switch (hasTables, hasLine && mostlyOnLine16(s, blocks: blocks), relativeToGreen, gains) {
        case (false, _, false, nil): loop16TF(s, d, blocks, l)
        case (false, _, true, nil): loop16TR(s, d, blocks, l)
        case (true, false, false, nil): loop16LF(s, d, blocks, l)
        case (true, false, true, nil): loop16LR(s, d, blocks, l)
        case (true, true, false, nil): loop16SF(s, d, blocks, l)
        case (true, true, true, nil): loop16SR(s, d, blocks, l)
        case (false, _, false, let g?): loop16TFG(s, d, blocks, g, l)
        case (false, _, true, let g?): loop16TRG(s, d, blocks, g, l)
        case (true, false, false, let g?): loop16LFG(s, d, blocks, g, l)
        case (true, false, true, let g?): loop16LRG(s, d, blocks, g, l)
        case (true, true, false, let g?): loop16SFG(s, d, blocks, g, l)
        case (true, true, true, let g?): loop16SRG(s, d, blocks, g, l)
        }
    }

    @inline(never) func loop16TF<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ l: L.Type) { body16(s, d, n, nil, table: false, relative: false, l) }
    @inline(never) func loop16TFG<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ g: UnsafePointer<Float>, _ l: L.Type) { body16(s, d, n, g, table: false, relative: false, l) }
    @inline(never) func loop16TR<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ l: L.Type) { body16(s, d, n, nil, table: false, relative: true, l) }
    @inline(never) func loop16TRG<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ g: UnsafePointer<Float>, _ l: L.Type) { body16(s, d, n, g, table: false, relative: true, l) }
    @inline(never) func loop16LF<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ l: L.Type) { body16(s, d, n, nil, table: true, relative: false, l) }
    @inline(never) func loop16LFG<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ g: UnsafePointer<Float>, _ l: L.Type) { body16(s, d, n, g, table: true, relative: false, l) }
    @inline(never) func loop16LR<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ l: L.Type) { body16(s, d, n, nil, table: true, relative: true, l) }
    @inline(never) func loop16LRG<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ g: UnsafePointer<Float>, _ l: L.Type) { body16(s, d, n, g, table: true, relative: true, l) }
    @inline(never) func loop16SF<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ l: L.Type) { body16(s, d, n, nil, table: true, line: true, relative: false, l) }
    @inline(never) func loop16SFG<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ g: UnsafePointer<Float>, _ l: L.Type) { body16(s, d, n, g, table: true, line: true, relative: false, l) }
    @inline(never) func loop16SR<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ l: L.Type) { body16(s, d, n, nil, table: true, line: true, relative: true, l) }
    @inline(never) func loop16SRG<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ n: Int, _ g: UnsafePointer<Float>, _ l: L.Type) { body16(s, d, n, g, table: true, line: true, relative: true, l) }

    #if !(arch(x86_64) && canImport(_Builtin_intrinsics.intel) && !PHOTOKERNELS_NO_INTRINSICS && !canImport(TargetFeatures.AVX2))
    /// `blocks` blocks of `blockPixels` pixels of 16-bit samples, each half a block in
    /// one block-wide vector as it lies in memory, two 32-bit lanes per pixel: a mask
    /// gives every pixel's words 0 and 2 (red and blue), a shift its words 1 and 3
    /// (green and the fourth sample), and each lane runs its own channel's row of the
    /// matrix (`PairMatrix`), the fourth sample's keeping it as it is. The pixels never
    /// leave their lanes, so there is no transpose: the only shuffles are within each
    /// pixel, two that bring a lane the channels it does not hold and one that sums
    /// green's terms on red and blue across the pixel's lanes. Pixels whose red is not
    /// word 0 (ARGB and XRGB, and ABGR and XBGR once red and blue are exchanged) are
    /// rotated by whole words to RGBA's positions on load and back on store. `line` as
    /// in `body8`.
    @_transparent
    func body16<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ blocks: Int,
                                _ gains: UnsafePointer<Float>?, table: Bool, line: Bool = false, relative: Bool,
                                _ layout: L.Type) {
        let p = L.positions ?? positions
        let rotation = UInt64(16 &* p.red)
        let m = pairMatrix, lanes = m.lanes
        let word = BlockWords(repeating: 0xFFFF)
        let (fourthLanes, ceiling, colourCeiling) = (m.fourthLanes, m.ceiling, maxval)
        let one = BlockFloats(repeating: 1)
        @_transparent func madd(_ a: BlockFloats, _ b: BlockFloats, _ c: BlockFloats) -> BlockFloats {
            PairLanes.multiplyAdd(a, b, c)
        }
        let input = UnsafeRawPointer(s), output = UnsafeMutableRawPointer(d)
        // Half a block at `offset`, with its pixels' gains.
        @inline(__always) func group(_ offset: Int, _ gain: HalfBlockFloats?) {
            var v = input.loadUnaligned(fromByteOffset: offset, as: BlockWords.self)
            if L.positions == nil { v = PairLanes.rotating(v, right: rotation) }
            let (redBlue, greenFourth) = (v & word, v &>> 16)
            // x: red and blue (or their table entries), y: green and the fourth sample.
            let y0 = PairLanes.floats(greenFourth)
            var x, y: BlockFloats
            if table && !(line && pairsOnLine(redBlue, greenFourth, fourthLanes)) {
                let at = s + offset / 2
                x = lookupPairs(red, blue, at, p.red, p.blue)
                y = lookupGreen(green, at, p.green).replacing(with: y0, where: fourthLanes)
            } else {
                (x, y) = (PairLanes.floats(redBlue), y0)
            }
            // Each lane's other colour channels: blue beside red and red beside blue, and
            // green in both lanes. Red's and blue's lanes take the same steps, on their own
            // channel and then the other, so that exchanging red and blue (BGRA) gives
            // the same bits. Green's terms on red and blue are each lane's own product,
            // `(m10·R, m12·B)`, summed with the pixel's other lane (which commutes, for
            // the same reason) and kept in the green lane.
            let xx = lanes.exchanging(x), g = lanes.first(y)
            var rb, gf: BlockFloats
            @_transparent func greenTerms(_ v: BlockFloats) -> BlockFloats {
                let q = m.onRedBlue * v, sum = q + lanes.exchanging(q)
                return unsafeBitCast(unsafeBitCast(sum, to: BlockWords.self) & m.greenLaneBits, to: BlockFloats.self)
            }
            if relative {
                let d0 = x - g
                let green = madd(g, m.greenGain, m.greenOffset)
                rb = madd(m.own, d0, madd(m.other, xx - g, green))
                gf = greenTerms(d0) + madd(y, m.greenGainOwn, m.greenOffsetOwn)
            } else {
                rb = madd(m.own, x, madd(m.other, xx, madd(m.onGreen, g, m.offset)))
                gf = greenTerms(x) + madd(m.ownGreen, y, m.greenRowOffset)
            }
            if let gain {
                let paired = PairLanes.pairing(gain)
                rb = paired * rb
                gf = paired.replacing(with: one, where: fourthLanes) * gf
            }
            var out = lanes.packing(rb, gf, colourCeiling: colourCeiling, ceiling: ceiling, clamps: m.clamps)
            if L.positions == nil { out = PairLanes.rotating(out, right: 64 &- rotation) }
            output.storeBytes(of: out, toByteOffset: offset, as: BlockWords.self)
        }
        let inPlace = input == UnsafeRawPointer(output)
        // Half a block per step: the loop's body once (twice over, the baseline build's
        // loops outgrew the inliner, and loads and `min` became calls).
        var offset = 0
        for k in 0..<(2 &* blocks) {
            // As in `body8`: the destination and a separate source, 4 KiB ahead.
            Prefetch.block(at: offset, bytes: blockBytes8, destination: output, source: input, inPlace: inPlace)
            group(offset, gains.map {
                UnsafeRawPointer($0).loadUnaligned(fromByteOffset: MemoryLayout<HalfBlockFloats>.size &* k, as: HalfBlockFloats.self)
            })
            offset &+= blockBytes8
        }
    }

    #else
    /// `blocks` blocks of `blockPixels` pixels of 16-bit samples in `body8`'s channel
    /// form, the baseline build's: each pixel is two 32-bit lanes as it lies in memory,
    /// red and green in the first and blue and the fourth sample in the second, so one
    /// `shufps` per half block gathers the block's first lanes and one its second lanes
    /// (`ChannelWords.lanes`); a mask and a shift then give each channel, and the
    /// fourth samples stay in the second lanes until `ChannelWords.packing` puts the
    /// pixels back. Four shuffles per four pixels where the pair lanes, in 128-bit
    /// halves without `vpermilps`, took ten; and the fourth sample is neither converted
    /// nor multiplied (the baseline build's `pipeline/rgba16/adjustments/simd4` 1.57×
    /// as fast). The arithmetic is `body8`'s (`BlockMatrix.apply`), the relative form's
    /// channels as `2²³ + c` like its bytes, or in the loops without tables and gains
    /// its steps `R − G` and `B − G` taken in `Int32` and converted (the same numbers,
    /// one instruction fewer per half block), so the results may differ from the pair
    /// lanes' only as SPEC §8 allows, near a tie. Pixels whose red is not word 0 are
    /// rotated by whole words to RGBA's positions on load and back on store. `line` as
    /// in `body8`. At maxval 65535 without gains (`packsWordsBySaturation`) the
    /// results are computed 32768 below the samples' scale (`signedWordMatrix`) and
    /// packed by `ChannelWords.signedPacking`, with no `maxps` or `minps`. The two
    /// together: `pipeline/rgba16/adjustments/simd4` 1.07–1.08× at 12 MP on a Zen 3.
    @_transparent
    func body16<L: BlockLayout>(_ s: UnsafePointer<UInt16>, _ d: UnsafeMutablePointer<UInt16>, _ blocks: Int,
                                _ gains: UnsafePointer<Float>?, table: Bool, line: Bool = false, relative: Bool,
                                _ layout: L.Type) {
        let p = L.positions ?? positions
        let rotation = UInt64(16 &* p.red)
        let word = BlockWords(repeating: 0xFFFF)
        let input = UnsafeRawPointer(s), output = UnsafeMutableRawPointer(d)
        let inPlace = input == UnsafeRawPointer(output)
        // Half a block: one `BlockWords` of memory.
        let half = MemoryLayout<BlockWords>.size
        @inline(__always) func run(signedWords: Bool) {
            var offset = 0
            for j in 0..<blocks {
                // As in `body8`: the destination and a separate source, 4 KiB ahead.
                Prefetch.block(at: offset, bytes: 2 &* half, destination: output, source: input, inPlace: inPlace)
                var v0 = input.loadUnaligned(fromByteOffset: offset, as: BlockWords.self)
                var v1 = input.loadUnaligned(fromByteOffset: offset &+ half, as: BlockWords.self)
                if L.positions == nil {
                    v0 = PairLanes.rotating(v0, right: rotation); v1 = PairLanes.rotating(v1, right: rotation)
                }
                let (first, second) = ChannelWords.lanes(v0, v1)
                let (rw, gw, bw) = (first & word, first &>> 16, second & word)
                let gain = gains.map {
                    UnsafeRawPointer($0).loadUnaligned(fromByteOffset: MemoryLayout<BlockFloats>.size &* j, as: BlockFloats.self)
                }
                let (x, y, z): (BlockFloats, BlockFloats, BlockFloats)
                if relative && !table && gains == nil {
                    // The steps between channels taken in Int32 and converted, exactly:
                    // no bias to set and take away again. The loops with tables keep
                    // the biased channels, which their lookups' path shares (a second
                    // copy of the arithmetic there was slower), and so do those with
                    // gains (measured slower too).
                    (x, y, z) = scaledSteps(exactFloats(rw &- gw), exactFloats(bw &- gw), green: decode(gw),
                                            signedWords: signedWords)
                } else {
                    var r, g, b: BlockFloats
                    var bias: BlockFloats? = nil
                    if table && !(line && channelsOnLine(rw, gw, bw)) {
                        let at = s + offset / 2
                        r = lookup16(red, at, p.red); g = lookup16(green, at, p.green); b = lookup16(blue, at, p.blue)
                    } else if relative {
                        // 2²³ + c from the bits (exact): the differences need no conversion.
                        r = biased(rw); g = biased(gw); b = biased(bw)
                        bias = BlockFloats(repeating: magic)
                    } else {
                        r = decode(rw); g = decode(gw); b = decode(bw)
                    }
                    (x, y, z) = scaled(r, g, b, relative: relative, gain: gain, greenBias: bias, signedWords: signedWords)
                }
                var (o0, o1) = signedWords ? ChannelWords.signedPacking(x, y, z, second: second, fourthBits: fourthSampleBits)
                    : ChannelWords.packing(x, y, z, maxval: maxval, second: second)
                if L.positions == nil {
                    o0 = PairLanes.rotating(o0, right: 64 &- rotation); o1 = PairLanes.rotating(o1, right: 64 &- rotation)
                }
                output.storeBytes(of: o0, toByteOffset: offset, as: BlockWords.self)
                output.storeBytes(of: o1, toByteOffset: offset &+ half, as: BlockWords.self)
                offset &+= 2 &* half
            }
        }
        if gains == nil && packsWordsBySaturation { run(signedWords: true) } else { run(signedWords: false) }
    }

    /// Whether a block's red, green and blue samples (`body16`'s channel form) all lie
    /// on the tones' line.
    @_transparent
    func channelsOnLine(_ r: BlockWords, _ g: BlockWords, _ b: BlockWords) -> Bool {
        let off = ((r &- lineFrom) .> lineSpan) .| ((g &- lineFrom) .> lineSpan) .| ((b &- lineFrom) .> lineSpan)
        return !anyBitSet(BlockWords(repeating: 0).replacing(with: 1, where: off))
    }

    /// A block's entries of table `t` indexed by channel `c`'s 16-bit samples, one load
    /// each, indices clamped (`clampedEntry`).
    @_transparent
    func lookup16(_ t: UnsafePointer<Float>, _ s: UnsafePointer<UInt16>, _ c: Int) -> BlockFloats {
        let base = Int(bitPattern: t)
        return blockLanes { clampedEntry(base, s[c &+ 4 &* $0]) }
    }
    #endif

    /// Whether the red, blue and green samples of half a block of 16-bit pixels, in
    /// their two lanes (the pair lanes' `body16`, and `mostlyOnLine16` in every build),
    /// all lie on the tones' line.
    @_transparent
    func pairsOnLine(_ redBlue: BlockWords, _ greenFourth: BlockWords, _ fourthLanes: BlockMask) -> Bool {
        let green = greenFourth.replacing(with: lineFrom, where: fourthLanes)
        let off = ((redBlue &- lineFrom) .> lineSpan) .| ((green &- lineFrom) .> lineSpan)
        let flags = BlockWords(repeating: 0).replacing(with: 1, where: off)
        return !anyBitSet(flags)
    }

    /// Half a block's table entries in pair lanes: `first` indexed by channel `c0`'s
    /// samples in each pixel's first lane, `second` by channel `c1`'s in its second;
    /// indices clamped to the tables (`clampedEntry`).
    @_transparent
    func lookupPairs(_ first: UnsafePointer<Float>, _ second: UnsafePointer<Float>, _ s: UnsafePointer<UInt16>,
                     _ c0: Int, _ c1: Int) -> BlockFloats {
        let (base0, base1) = (Int(bitPattern: first), Int(bitPattern: second))
        @_transparent func at(_ i: Int) -> Float {
            clampedEntry(i & 1 == 0 ? base0 : base1, s[(i & 1 == 0 ? c0 : c1) &+ 4 &* (i &>> 1)])
        }
        return blockLanes(at)
    }

    /// Half a block's entries of table `t` indexed by channel `c`'s samples, each in
    /// both lanes of its pixel (one load each); indices clamped (`clampedEntry`).
    @_transparent
    func lookupGreen(_ t: UnsafePointer<Float>, _ s: UnsafePointer<UInt16>, _ c: Int) -> BlockFloats {
        let base = Int(bitPattern: t)
        @_transparent func at(_ i: Int) -> Float { clampedEntry(base, s[c &+ 4 &* i]) }
        #if canImport(TargetFeatures.AVX512)
        return PairLanes.pairing(HalfBlockFloats(at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7)))
        #else
        return PairLanes.pairing(HalfBlockFloats(at(0), at(1), at(2), at(3)))
        #endif
    }
}

// MARK: Float pixels

/// The one-pass schedule of an edit plan on `Float` RGBA rows whose leading tone stages
/// share an affine segment (exposure): tones, at most one matrix and the trailing gains
/// in one pass, two pixels per `SIMD8`.
///
/// A pixel whose three colour values all lie in the segment (and are finite) takes one
/// matrix with the tones' line folded in, `G·M·C + (t + o·M·1)`; any other pixel runs
/// the tone stages' own SIMD4 schedule, then the matrix (decided pixel by pixel, so a
/// NaN or a shadow changes no neighbour). Both then take the gains. The fold changes
/// only the rounding, well within SPEC §8's 1e-5 of the scalar reference.
struct FusedFloatBlock: Sendable {
    let tones: [any ToneStage]
    /// The unfolded matrix as the kernel holds it, for its SIMD4 form on the pixels
    /// outside the segment (`matrixPixel`, `greyPreservingPixel`).
    let schedule: MatrixSchedule
    /// The folded matrix's plain form (`matrixPixel`'s, on `G·M`): `G·(m00, m11, m22)`
    /// on each channel itself, `G·(m01, m12, m20)` on the next and `G·(m02, m10, m21)`
    /// on the previous round the wheel; and the folded offset, a zero lane held as −0
    /// as the kernel holds it (`MatrixSchedule.translation`).
    let fDiagonal, fOnNext, fOnPrevious, ft: SIMD8<Float>
    /// The folded matrix's grey-preserving form (`greyPreservingPixel`'s, on `G·M`): its
    /// coefficients on the steps between channels, `G·(m01, m12, m20)` (`fOnNext`) and
    /// `−G·(m02, m10, m21)`, and the factor on each channel itself, `G·s`.
    let fPrevious, rowGain: SIMD8<Float>
    /// How the loops apply the folded matrix. `general` applies the matrix kernel's
    /// grey-preserving form to the pixels outside the segment exactly where it is
    /// `.relative` (the kernel's `relativeForm`).
    let form: Form
    /// Whether a matrix follows the tones (else a NaN must stay in its channel, which
    /// the identity matrix's zeros would spread).
    let hasMatrix: Bool
    /// The bits of the least value in the segment, and the span up to 1e30 (beyond:
    /// the tone stages' schedule, which also handles ±∞ and NaN).
    let low: SIMD8<UInt32>, span: SIMD8<UInt32>
    /// All ones in the colour lanes, zero in the alpha lanes.
    let colour: SIMD8<UInt32>
    let keep: SIMDMask<SIMD8<Int32>>, keepPixel: SIMDMask<SIMD4<Int32>>

    /// The loops' forms of the folded matrix.
    enum Form {
        /// `matrixPixel`'s, on `G·M`.
        case plain
        /// `greyPreservingPixel`'s, on `G·M`.
        case relative
        /// Tones alone, with a positive gain: `G·C + t` (`fDiagonal`, `ft`), neither
        /// fused, as the plain form is not. The plain form's other two terms are `0·x`
        /// with `x ≥ +0` in the segment, `+0`, and `G·C` is not `−0` there, so adding
        /// them changes nothing: the same bits in one multiply and one addition
        /// instead of three of each and two shuffles.
        case diagonal
    }

    /// The block for `tones` followed by `matrix` (identity for none), or `nil` when the
    /// tones have no common affine segment, when their own `Float` evaluation of white
    /// is not finite (from +128 EV, where `2^ev` is ∞ in `Float` and the reference gives
    /// +∞ while the line, finite to about +307 EV, would not), or when the line `G·M`,
    /// `t + o·M·1` is not finite as `Float` (where `G·x + o` would be ∞ − ∞).
    init?(tones: [any ToneStage], matrix: ColorMatrixKernel?) {
        guard !tones.isEmpty, let segment = AffineToneSegment.composed(tones), segment.lowerBound.isFinite else { return nil }
        // Composed only where every stage is the same on all channels: one will do.
        guard tones.reduce(Float(1), { x, t in t.map(x, channel: 0) }).isFinite else { return nil }
        self.init(tones: tones, segment: segment, matrix: matrix)
    }

    /// The block for `matrix` (identity for none) and the gains alone, for pixels whose
    /// tones a table has applied (`EditPlan.floatBlockAfterTones`): the identity line
    /// from 0, so every colour lane from +0 to 1e30 takes the folded form, the rest
    /// the matrix's SIMD4 form (`general`); `nil` where the matrix is not finite as
    /// `Float`.
    init?(afterTonesWith matrix: ColorMatrixKernel?) {
        self.init(tones: [], segment: AffineToneSegment(lowerBound: -1, gain: 1, offset: 0), matrix: matrix)
    }

    private init?(tones: [any ToneStage], segment: AffineToneSegment, matrix: ColorMatrixKernel?) {
        let k = matrix ?? ColorMatrixKernel(.identity, name: "identity")
        self.tones = tones
        hasMatrix = matrix != nil
        form = matrix == nil && segment.gain > 0 ? .diagonal : k.relativeForm ? .relative : .plain
        func pair(_ v: SIMD4<Float>) -> SIMD8<Float> { SIMD8(lowHalf: v, highHalf: v) }
        schedule = k.schedule
        // Columns of G·M and the offset t + o·(row sums), in Double, rounded once.
        let r = k.matrix.rows, g = segment.gain
        func column(_ a: Double, _ b: Double, _ c: Double) -> SIMD8<Float> {
            pair(SIMD4(Float(g * a), Float(g * b), Float(g * c), 0))
        }
        fDiagonal = column(r.0.x, r.1.y, r.2.z)
        fOnNext = column(r.0.y, r.1.z, r.2.x)
        fOnPrevious = column(r.0.z, r.1.x, r.2.y)
        let offset = k.matrix.afterLine(offset: segment.offset).offset
        ft = pair(MatrixSchedule.heldOffset(SIMD4(Float(offset.x), Float(offset.y), Float(offset.z), 0)))
        fPrevious = column(-r.0.z, -r.1.x, -r.2.y)
        rowGain = SIMD8(repeating: Float(g * Double(k.rowSum)))
        let least = Float(segment.lowerBound + 1e-6 * max(1, abs(segment.lowerBound))).nextUp
        low = SIMD8(repeating: max(least, 0).bitPattern)
        span = SIMD8(repeating: Float(1e30).bitPattern &- max(least, 0).bitPattern)
        colour = SIMD8(UInt32.max, UInt32.max, UInt32.max, 0, UInt32.max, UInt32.max, UInt32.max, 0)
        (keep, keepPixel) = (AlphaMasks().pair, AlphaMasks().pixel)
        let constants = [fDiagonal, fOnNext, fOnPrevious, ft, fPrevious, rowGain]
        guard constants.allSatisfy({ v in (0..<8).allSatisfy { v[$0].isFinite } }) else { return nil }
    }

    /// Runs `count` pixels in place; `gains` holds one gain per pixel, or `nil`. A first
    /// pixel off a 32-byte boundary goes alone (`pixelsBeforePairBoundary`).
    func run(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int, gains: UnsafePointer<Float>?) {
        if pixelsBeforePairBoundary(p, count: count) != 0, count > 1 {
            run(p, count: 1, gains: gains)
            return run(p + 1, count: count &- 1, gains: gains.map { $0 + 1 })
        }
        let alpha = AlphaMasks()
        switch (form, gains) {
        case (.plain, nil): loopF(p, count, alpha)
        case (.relative, nil): loopR(p, count, alpha)
        case (.diagonal, nil): loopD(p, count, alpha)
        case (.plain, let g?): loopFG(p, count, g, alpha)
        case (.relative, let g?): loopRG(p, count, g, alpha)
        case (.diagonal, let g?): loopDG(p, count, g, alpha)
        }
        guard count & 1 != 0 else { return }
        // The odd last pixel: its own decision, through the same two-pixel arithmetic.
        let last = p + (count &- 1)
        var pair = (last.pointee, SIMD4<Float>(repeating: 0.5))
        var gain: (Float, Float) = (gains?[count &- 1] ?? 1, 1)
        withUnsafeMutablePointer(to: &pair) { pairs in
            pairs.withMemoryRebound(to: SIMD4<Float>.self, capacity: 2) { two in
                withUnsafePointer(to: &gain) {
                    $0.withMemoryRebound(to: Float.self, capacity: 2) { g in
                        switch (form, gains) {
                        case (.plain, nil): loopF(two, 2, alpha)
                        case (.relative, nil): loopR(two, 2, alpha)
                        case (.diagonal, nil): loopD(two, 2, alpha)
                        case (.plain, _?): loopFG(two, 2, g, alpha)
                        case (.relative, _?): loopRG(two, 2, g, alpha)
                        case (.diagonal, _?): loopDG(two, 2, g, alpha)
                        }
                    }
                }
            }
        }
        last.pointee = pair.0
    }

    // One loop per form: F plain / R grey-preserving / D diagonal, G with gains.
    @inline(never) func loopF(_ p: UnsafeMutablePointer<SIMD4<Float>>, _ n: Int, _ a: AlphaMasks) { pairs(p, n, nil, a, form: .plain) }
    @inline(never) func loopR(_ p: UnsafeMutablePointer<SIMD4<Float>>, _ n: Int, _ a: AlphaMasks) { pairs(p, n, nil, a, form: .relative) }
    @inline(never) func loopD(_ p: UnsafeMutablePointer<SIMD4<Float>>, _ n: Int, _ a: AlphaMasks) { pairs(p, n, nil, a, form: .diagonal) }
    @inline(never) func loopFG(_ p: UnsafeMutablePointer<SIMD4<Float>>, _ n: Int, _ g: UnsafePointer<Float>, _ a: AlphaMasks) { pairs(p, n, g, a, form: .plain) }
    @inline(never) func loopRG(_ p: UnsafeMutablePointer<SIMD4<Float>>, _ n: Int, _ g: UnsafePointer<Float>, _ a: AlphaMasks) { pairs(p, n, g, a, form: .relative) }
    @inline(never) func loopDG(_ p: UnsafeMutablePointer<SIMD4<Float>>, _ n: Int, _ g: UnsafePointer<Float>, _ a: AlphaMasks) { pairs(p, n, g, a, form: .diagonal) }

    /// The constants of the loops as one local value, so that they are read into
    /// registers once (a load through `self` in the loop could alias the stores).
    struct Constants {
        // The plain form's three coefficients (on each channel, the next, the previous)
        // and offset; the grey-preserving form's two and the factor on each channel; the
        // diagonal form's coefficient and offset are the plain form's first and last.
        let c0, c1, c2, ct, next, previous, rowGain: SIMD8<Float>
        #if canImport(TargetFeatures.AVX2)
        let least, width: SIMD8<UInt32>
        #else
        /// The segment's least bits and span (`low`, `span`), each moved by 2³¹, so that
        /// the unsigned test `bits − least > span` is a signed comparison, which SSE2
        /// has: `(bits − least) ^ 2³¹ = bits − (least ^ 2³¹)`.
        let leastMoved: SIMD8<UInt32>, spanMoved: SIMD8<Int32>
        #endif
        let colour: SIMD8<UInt32>
        let keep: SIMDMask<SIMD8<Int32>>

        #if canImport(TargetFeatures.AVX2)
        /// All ones in the colour lanes of the pair `v` that lie outside the segment.
        @inline(__always)
        func outside(_ v: SIMD8<Float>) -> SIMD8<UInt32> {
            SIMD8(repeating: 0).replacing(with: colour, where: (unsafeBitCast(v, to: SIMD8<UInt32>.self) &- least) .> width)
        }
        #else
        /// All ones in the lanes of the pair `v` that lie outside the segment, alpha's
        /// included: a block ANDs `colour` into the OR of its pairs' once.
        @inline(__always)
        func beyond(_ v: SIMD8<Float>) -> SIMD8<UInt32> {
            let moved = SIMD8<Int32>(truncatingIfNeeded: unsafeBitCast(v, to: SIMD8<UInt32>.self) &- leastMoved)
            return unsafeBitCast(moved .> spanMoved, to: SIMD8<UInt32>.self)
        }

        /// All ones in the colour lanes of the pair `v` that lie outside the segment.
        @inline(__always)
        func outside(_ v: SIMD8<Float>) -> SIMD8<UInt32> {
            beyond(v) & colour
        }
        #endif

        /// The pair `v` through the folded matrix and its two gains at `gains`; alpha kept
        /// (`keepsAlpha`), or left to the caller.
        @inline(__always)
        func transform(_ v: SIMD8<Float>, _ gains: UnsafePointer<Float>?, form: Form, keepsAlpha: Bool = true) -> SIMD8<Float> {
            var out: SIMD8<Float>
            if form == .relative {
                let (d, e) = greyPreservingSteps(v)
                out = next * d + previous * e + (v * rowGain + ct)
            } else if form == .diagonal {
                out = c0 * v + ct
            } else {
                let (next, previous) = rotatedChannels(v)
                out = c0 * v + c1 * next + c2 * previous + ct
            }
            if let gains {
                let gain = UnsafeRawPointer(gains)
                out = out * SIMD8(lowHalf: SIMD4(repeating: gain.load(as: Float.self)),
                                  highHalf: SIMD4(repeating: gain.load(fromByteOffset: 4, as: Float.self)))
            }
            return keepsAlpha ? out.replacing(with: v, where: keep) : out
        }
    }

    /// The loops' constants. Where a `SIMD8` is two 128-bit registers, each is built
    /// from its low half twice (both halves are equal), so that the loop keeps one
    /// register per constant, not two.
    @inline(__always)
    func constants(_ alpha: AlphaMasks) -> Constants {
        #if canImport(TargetFeatures.AVX2)
        Constants(c0: fDiagonal, c1: fOnNext, c2: fOnPrevious, ct: ft, next: fOnNext, previous: fPrevious, rowGain: rowGain,
                  least: low, width: span, colour: colour, keep: alpha.pair)
        #else
        @inline(__always) func twice<T: SIMDScalar>(_ v: SIMD8<T>) -> SIMD8<T> { SIMD8(lowHalf: v.lowHalf, highHalf: v.lowHalf) }
        return Constants(c0: twice(fDiagonal), c1: twice(fOnNext), c2: twice(fOnPrevious), ct: twice(ft), next: twice(fOnNext),
                         previous: twice(fPrevious), rowGain: twice(rowGain), leastMoved: twice(low ^ 0x8000_0000),
                         spanMoved: twice(SIMD8(truncatingIfNeeded: span ^ 0x8000_0000)),
                         colour: twice(colour),
                         keep: unsafeBitCast(twice(unsafeBitCast(alpha.pair, to: SIMD8<Int32>.self)), to: SIMDMask<SIMD8<Int32>>.self))
        #endif
    }

    /// The pairs of `count` pixels from pixel `first` on, up to the first pair with a
    /// pixel outside the segment, whose index, input and halves outside it are returned
    /// (`nil`: all done); the alpha masks come in as a value (see `AlphaMasks`), the
    /// constants are read into registers once.
    @_transparent
    func body(_ p: UnsafeMutablePointer<SIMD4<Float>>, _ count: Int, _ gains: UnsafePointer<Float>?, _ alpha: AlphaMasks,
              form: Form, from first: Int) -> (Int, SIMD8<Float>, Bool, Bool)? {
        let raw = UnsafeMutableRawPointer(p)
        let k = constants(alpha)
        var offset = 16 &* first
        var i = first
        while i &+ 1 < count {
            let v = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            raw.storeBytes(of: k.transform(v, gains == nil ? nil : gains! + i, form: form), toByteOffset: offset, as: SIMD8<Float>.self)
            let q = unsafeBitCast(k.outside(v), to: SIMD4<UInt64>.self)
            // Rare: a pixel outside the segment ends the run; `redo` takes it from its input.
            if q[0] | q[1] | q[2] | q[3] != 0 { return (i, v, q[0] | q[1] != 0, q[2] | q[3] != 0) }
            offset &+= 32
            i &+= 2
        }
        return nil
    }

    /// The pairs of `count` pixels from pair `first` on: runs of `body`, and each pixel
    /// outside the segment that ends a run redone from its input by `general`.
    @_transparent
    func pairs(_ p: UnsafeMutablePointer<SIMD4<Float>>, _ count: Int, _ gains: UnsafePointer<Float>?, _ alpha: AlphaMasks,
               form: Form) {
        var start = 0
        // Whole blocks of eight pixels; one with a pixel outside the segment, left
        // untouched, goes pair by pair.
        while let i = blocks(p, count, gains, alpha, form: form, from: start) {
            let end = i &+ 8
            var pair = i
            while let (j, v, low, high) = body(p, end, gains, alpha, form: form, from: pair) {
                redo(p, j, v, low, high, gains)
                pair = j &+ 2
            }
            start = end
        }
        start = count & ~7
        while let (i, v, low, high) = body(p, count, gains, alpha, form: form, from: start) {
            redo(p, i, v, low, high, gains)
            start = i &+ 2
        }
    }

    /// The whole blocks of eight pixels of `count` from pixel `first` (a multiple of 8)
    /// on, up to the first block with a pixel outside the segment, whose index is
    /// returned with the block not yet written (`nil`: all whole blocks done). One test
    /// per block, not per pair: the four pairs' tests are combined first.
    @_transparent
    func blocks(_ p: UnsafeMutablePointer<SIMD4<Float>>, _ count: Int, _ gains: UnsafePointer<Float>?, _ alpha: AlphaMasks,
                form: Form, from first: Int) -> Int? {
        let raw = UnsafeMutableRawPointer(p)
        let k = constants(alpha)
        var i = first
        #if canImport(TargetFeatures.AVX2)
        @inline(__always) func transform(_ v: SIMD8<Float>, _ i: Int) -> SIMD8<Float> {
            k.transform(v, gains == nil ? nil : gains! + i, form: form)
        }
        while i &+ 8 <= count {
            let offset = 16 &* i
            // In place, front to back: the two lines 4 KiB ahead.
            Prefetch.read(raw, offset: offset &+ Prefetch.distance)
            Prefetch.read(raw, offset: offset &+ (Prefetch.distance &+ 64))
            let v0 = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            let v1 = raw.loadUnaligned(fromByteOffset: offset &+ 32, as: SIMD8<Float>.self)
            let v2 = raw.loadUnaligned(fromByteOffset: offset &+ 64, as: SIMD8<Float>.self)
            let v3 = raw.loadUnaligned(fromByteOffset: offset &+ 96, as: SIMD8<Float>.self)
            let flags = unsafeBitCast(k.outside(v0) | k.outside(v1) | k.outside(v2) | k.outside(v3), to: SIMD4<UInt64>.self)
            // Rare: a pixel outside the segment; the caller takes the block pair by pair.
            if flags[0] | flags[1] | flags[2] | flags[3] != 0 { return i }
            raw.storeBytes(of: transform(v0, i), toByteOffset: offset, as: SIMD8<Float>.self)
            raw.storeBytes(of: transform(v1, i &+ 2), toByteOffset: offset &+ 32, as: SIMD8<Float>.self)
            raw.storeBytes(of: transform(v2, i &+ 4), toByteOffset: offset &+ 64, as: SIMD8<Float>.self)
            raw.storeBytes(of: transform(v3, i &+ 6), toByteOffset: offset &+ 96, as: SIMD8<Float>.self)
            i &+= 8
        }
        #else
        // Where a `SIMD8` is two 128-bit registers, alpha is kept by memory, as the
        // one-pixel schedules keep it (`replaceColour(ofPixelAt:_:)`): its four bytes
        // loaded before the pixels and stored back over them, two scalar memory
        // operations a pixel where the blend takes three vector instructions (SSE2 has no
        // `blendps`); and the colour lanes are masked once for the block's four pairs.
        // The default build's `kernel/exposure/simd4` 1.21–1.28× as fast at 12 MP
        // (0.75–0.81× native before, 0.96–0.99× after), `kernel/recipe/simd4` 1.22–1.24×.
        while i &+ 8 <= count {
            let offset = 16 &* i
            // In place, front to back: the two lines 4 KiB ahead.
            Prefetch.read(raw, offset: offset &+ Prefetch.distance)
            Prefetch.read(raw, offset: offset &+ (Prefetch.distance &+ 64))
            @inline(__always) func alphaBits(_ pixel: Int) -> UInt32 {
                raw.load(fromByteOffset: offset &+ 16 &* pixel &+ 12, as: UInt32.self)
            }
            let alphas = (alphaBits(0), alphaBits(1), alphaBits(2), alphaBits(3), alphaBits(4), alphaBits(5), alphaBits(6), alphaBits(7))
            let v0 = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            let v1 = raw.loadUnaligned(fromByteOffset: offset &+ 32, as: SIMD8<Float>.self)
            let v2 = raw.loadUnaligned(fromByteOffset: offset &+ 64, as: SIMD8<Float>.self)
            let v3 = raw.loadUnaligned(fromByteOffset: offset &+ 96, as: SIMD8<Float>.self)
            let flags = unsafeBitCast((k.beyond(v0) | k.beyond(v1) | k.beyond(v2) | k.beyond(v3)) & k.colour,
                                      to: SIMD4<UInt64>.self)
            // Rare: a pixel outside the segment; the caller takes the block pair by pair.
            if flags[0] | flags[1] | flags[2] | flags[3] != 0 { return i }
            @inline(__always) func store(_ v: SIMD8<Float>, _ pair: Int) {
                raw.storeBytes(of: k.transform(v, gains == nil ? nil : gains! + (i &+ 2 &* pair), form: form, keepsAlpha: false),
                               toByteOffset: offset &+ 32 &* pair, as: SIMD8<Float>.self)
            }
            store(v0, 0); store(v1, 1); store(v2, 2); store(v3, 3)
            @inline(__always) func restore(_ pixel: Int, _ bits: UInt32) {
                raw.storeBytes(of: bits, toByteOffset: offset &+ 16 &* pixel &+ 12, as: UInt32.self)
            }
            restore(0, alphas.0); restore(1, alphas.1); restore(2, alphas.2); restore(3, alphas.3)
            restore(4, alphas.4); restore(5, alphas.5); restore(6, alphas.6); restore(7, alphas.7)
            i &+= 8
        }
        #endif
        return nil
    }

    /// Pixels `i` and `i + 1`, input `v`: `general` on each one outside the segment.
    @inline(never)
    func redo(_ p: UnsafeMutablePointer<SIMD4<Float>>, _ i: Int, _ v: SIMD8<Float>, _ low: Bool, _ high: Bool,
              _ gains: UnsafePointer<Float>?) {
        if low { p[i] = v.lowHalf; general(p + i, pixels: 1, gains: gains.map { $0 + i }) }
        if high { p[i &+ 1] = v.highHalf; general(p + (i &+ 1), pixels: 1, gains: gains.map { $0 + (i &+ 1) }) }
    }

    /// Pixels outside the segment: the tone stages' schedule, the matrix as the matrix
    /// kernel's SIMD4 schedule computes it (`matrixPixel`, `greyPreservingPixel`: fused
    /// where the build targets FMA), the gains.
    @inline(never)
    func general(_ p: UnsafeMutablePointer<SIMD4<Float>>, pixels: Int, gains: UnsafePointer<Float>?) {
        let buffer = UnsafeMutableBufferPointer(start: p, count: pixels)
        let location = RowLocation(y: 0, x0: 0, imageWidth: pixels, imageHeight: 1)
        for t in tones { t.apply(buffer, at: location, variant: .simd4) }
        let k = schedule
        for i in 0..<pixels {
            let v = p[i]
            var out: SIMD4<Float>
            if !hasMatrix {
                out = v
            } else if form == .relative {
                out = greyPreservingPixel(v, k.towardNext, k.fromPrevious, k.rowSums, k.translation)
            } else {
                out = matrixPixel(v, k.diagonal, k.onNext, k.onPrevious, k.translation)
            }
            if let gains { out = out * gains[i] }
            p[i] = out.replacing(with: v, where: keepPixel)
        }
    }
}
