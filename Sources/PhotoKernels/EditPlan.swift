import Dispatch
import Foundation
import Synchronization

// An edit compiled once: the stages of a recipe in order (the reference), and the same
// stages fused (the schedule). Preparing the plan for an image size resolves every
// positional constant and allocates the scratch rows; the prepared plan then runs on
// any number of images or frames of that size, on a Float image or on integer samples,
// in bands of rows and pieces of rows, so sources and sinks of any kind (a whole
// raster, a band read from a stream, a tile of a larger image) drive the same code.

/// A compiled edit: the recipe's stages in order, and their fused schedule.
///
/// **Compiling** keeps the stage list as given (the unfused reference, run with scalar
/// loops by `.scalar`) and fuses it for `.simd4`:
/// - leading tone stages (exposure, tone curves) stay apart, so that for integer
///   samples they fold with the decoding into one lookup table over `0…maxval`, whose
///   entries are the scalar reference itself;
/// - consecutive affine stages compose into one `ColorMatrix` in `Double`, rounded to
///   `Float` once (SPEC §0); an exact identity disappears;
/// - a trailing positional stage (the vignette) becomes one gain per pixel, computed
///   once per row piece from constants prepared once per image size.
///
/// A plan is a `Sendable` value; `prepared(width:height:threads:)` binds it to an image
/// size.
///
/// **Values are not checked here.** A plan computes whatever its stages say, so a
/// parameter that is NaN, infinite or beyond `Float`'s range gives NaN or ±∞ samples
/// (encoded as 0 or the maxval) or no visible change, without an error. Values that
/// come from outside the app (a file, a text field, arithmetic that can overflow) go
/// through `Recipe.validate()` first, which throws `RecipeError.invalidValue` naming
/// the field; decoding a recipe from JSON and the command line do that already.
public struct EditPlan: Sendable {
    /// The stages in order, unfused: what `.scalar` runs.
    public let stages: [Stage]
    /// The orientation to undo before every stage (SPEC §11); `.up` for none. A plan
    /// with another orientation is prepared for the oriented (upright) size.
    public let orientation: Orientation
    /// Leading tone stages.
    let tones: [any ToneStage]
    /// How many of `stages` the leading tones stand for: up to the last of them, with
    /// any identity affine stages among or before them (which change nothing).
    let toneStageCount: Int
    /// The fused middle: composed matrices and other row kernels, in order.
    let steps: [FusedStep]
    /// The trailing positional stage, if any.
    let gain: (any PositionalStage)?
    /// The one-pass `Float` schedule, when the fused stages are tones with a common
    /// segment, at most one matrix and the gains.
    let floatBlock: FusedFloatBlock?
    /// The one-pass `Float` schedule of what follows the tones, when that is at most one
    /// matrix and the gains: for rows whose tones a table has applied.
    let floatBlockAfterTones: FusedFloatBlock?

    enum FusedStep: Sendable {
        case matrix(ColorMatrixKernel)
        case kernel(any PixelKernel)
    }

    /// Compiles `stages`, applied in order.
    ///
    /// - Complexity: O(stages.count); the matrices compose in `Double`.
    public init(stages: [Stage]) {
        self.init(stages: stages, orientation: .up)
    }

    /// Compiles a recipe: its orientation, then its stages in order.
    public init(_ recipe: Recipe) {
        self.init(stages: recipe.stages, orientation: recipe[Orientation.self] ?? .up)
    }

    /// Compiles `stages` after `orientation`.
    public init(stages: [Stage], orientation: Orientation) {
        self.stages = stages
        self.orientation = orientation
        var tones: [any ToneStage] = []
        var toneStageCount = 0
        var steps: [FusedStep] = []
        var gain: (any PositionalStage)?
        var matrix: ColorMatrix?
        var names: [String] = []
        func flush() {
            if let m = matrix, !m.isIdentity { steps.append(.matrix(ColorMatrixKernel(m, name: names.joined(separator: "+")))) }
            matrix = nil
            names = []
        }
        for (index, stage) in stages.enumerated() {
            switch stage {
            case .tone(let t) where steps.isEmpty && (matrix?.isIdentity ?? true):
                // Identity affine stages before it are dropped in any case (`flush`):
                // the tone still leads, and takes the tables on integer samples.
                (matrix, names) = (nil, [])
                tones.append(t)
                toneStageCount = index + 1
            case .affine(let a):
                // Stages whose product `Float` cannot hold (a saturation of 10¹⁰, then a
                // contrast of 10³⁰) stay apart, each its own matrix, as the reference
                // runs them; a product would turn greys into NaN.
                if let m = matrix, !m.then(a.matrix).fitsInFloat { flush() }
                matrix = matrix.map { $0.then(a.matrix) } ?? a.matrix
                names.append(a.name)
            case .positional(let p) where index == stages.count - 1:
                flush()
                gain = p
            default:
                flush()
                steps.append(.kernel(stage.kernel))
            }
        }
        flush()
        self.tones = tones
        self.toneStageCount = toneStageCount
        switch steps.count {
        case 0:
            floatBlock = FusedFloatBlock(tones: tones, matrix: nil)
            // After table tones, nothing but a gain may be left to do.
            floatBlockAfterTones = tones.isEmpty || gain == nil ? nil : FusedFloatBlock(afterTonesWith: nil)
        case 1:
            if case .matrix(let m) = steps[0] {
                floatBlock = FusedFloatBlock(tones: tones, matrix: m)
                floatBlockAfterTones = tones.isEmpty ? nil : FusedFloatBlock(afterTonesWith: m)
            } else {
                (floatBlock, floatBlockAfterTones) = (nil, nil)
            }
        default: (floatBlock, floatBlockAfterTones) = (nil, nil)
        }
        self.steps = steps
        self.gain = gain
    }

    /// Compiles the stages of `kernels`, applied in order.
    public init(kernels: [any PixelKernel]) {
        self.init(stages: kernels.map(\.stage))
    }

    /// Whether the plan has no stage at all (it then copies or converts samples only).
    public var isEmpty: Bool { stages.isEmpty && orientation == .up }

    /// Binds the plan to images of `width × height` pixels.
    ///
    /// - Parameters:
    ///   - width, height: the whole image's size after the orientation (the upright
    ///     size; for orientations 5–8 the stored image is `height × width`); a run may
    ///     cover any band or tile of it.
    ///   - threads: how many threads a run may use; `nil` means every active core, a
    ///     value below 1 means 1. It is resolved here, once, and capped at what the
    ///     image can use (one thread per 64 K pixels), so scratch is allocated for no
    ///     more; small runs use fewer threads (no thread is started for work that cannot
    ///     gain from it). The result never depends on it.
    /// - Throws: `EditPlanError.invalidSize` unless both sizes are at least 1 and
    ///   their product does not overflow; `EditPlanError.outOfMemory` when the scratch
    ///   rows (about 4 bytes per pixel of a row, per thread; twice that with an
    ///   orientation) cannot be allocated.
    /// - Complexity: O(1) plus the positional constants; allocates one scratch row
    ///   piece per thread.
    public func prepared(width: Int, height: Int, threads: Int? = nil) throws(EditPlanError) -> PreparedEditPlan {
        try prepared(width: width, height: height, threads: threads, minimumBandPixels: 65_536)
    }

    /// `prepared(width:height:threads:)` with the least number of pixels worth a
    /// thread of its own (tests lower it to split small images) and the cache of tone
    /// tables shared with other plans (tests take `nil`, tables of the plan's own).
    func prepared(width: Int, height: Int, threads: Int?, minimumBandPixels: Int,
                  toneTableCache: SharedToneTables? = .shared) throws(EditPlanError) -> PreparedEditPlan {
        guard width >= 1, height >= 1, !width.multipliedReportingOverflow(by: height).overflow else {
            throw .invalidSize(width: width, height: height)
        }
        return try PreparedEditPlan(self, width: width, height: height, threads: threads, minimumBandPixels: minimumBandPixels,
                                    toneTableCache: toneTableCache)
    }
}

/// What is wrong with a request to an edit plan.
public enum EditPlanError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An image size below 1 or whose pixel count overflows.
    case invalidSize(width: Int, height: Int)
    /// A region that does not lie inside the prepared image.
    case regionOutside(x: Int, y: Int, width: Int, height: Int, imageWidth: Int, imageHeight: Int)
    /// A maxval outside 1…65535, or above what the sample type holds.
    case invalidMaxval(Int, sampleBits: Int)
    /// A buffer with the wrong number of samples.
    case sampleCountMismatch(buffer: String, expected: Int, found: Int)
    /// A Float image whose size is not the prepared size.
    case imageSizeMismatch(width: Int, height: Int, preparedWidth: Int, preparedHeight: Int)
    /// A pixel buffer that cannot be used as described.
    case buffer(PixelBufferError)
    /// A plan with an orientation run in place: pixels move, so it needs a source and a
    /// destination of the upright size.
    case orientationNeedsDestination
    /// Memory the plan needs could not be allocated: `bytes`, or `nil` where the size
    /// does not fit in `Int` (a size no machine holds on the threads asked for). Preparing
    /// allocates the scratch rows (about 4 bytes per pixel of a row, per thread); a run
    /// with an orientation, the upright copy of its source.
    case outOfMemory(bytes: Int?)

    /// One sentence naming what is wrong.
    public var description: String {
        switch self {
        case .invalidSize(let w, let h): "image size \(w)×\(h) is invalid (each side at least 1, and the pixel count must fit)"
        case .regionOutside(let x, let y, let w, let h, let iw, let ih):
            "region \(w)×\(h) at (\(x), \(y)) does not lie inside the \(iw)×\(ih) image"
        case .invalidMaxval(let m, let bits): "maxval \(m) is invalid for \(bits)-bit samples (1…\((1 << min(bits, 16)) - 1))"
        case .sampleCountMismatch(let buffer, let expected, let found):
            "the \(buffer) buffer holds \(found) samples; \(expected) expected"
        case .imageSizeMismatch(let w, let h, let pw, let ph):
            "the image is \(w)×\(h) but the plan was prepared for \(pw)×\(ph)"
        case .buffer(let error): error.description
        case .orientationNeedsDestination:
            "a plan with an orientation writes a new upright image: give a source and a destination"
        case .outOfMemory(let bytes):
            "cannot allocate \(bytes.map { "\($0) bytes" } ?? "more bytes than an address can count") for the plan"
        }
    }
}

/// A rectangle of an image, in pixels from the top-left corner: the part of the whole
/// image that a run's buffers hold (a band of rows, a tile, or a piece of one row).
public struct ImageRegion: Sendable, Hashable {
    /// The first column.
    public var x: Int
    /// The first row.
    public var y: Int
    /// The number of columns, at least 1.
    public var width: Int
    /// The number of rows, at least 1.
    public var height: Int

    /// The rectangle `width × height` at `(x, y)`.
    public init(x: Int, y: Int, width: Int, height: Int) {
        (self.x, self.y, self.width, self.height) = (x, y, width, height)
    }
}

/// The tone tables of one input maxval: entry `v` of channel `c` is the leading tone
/// stages of `v / maxval` in `Double` (`ToneStage.evaluate`), rounded to `Float` once,
/// so a lookup decodes and tones at once; where the tones are one line (`ToneLine`),
/// the entry is the line's value instead. Every integer path reads its tones here, the
/// `.scalar` reference included (translucent premultiplied 16-bit pixels evaluate the
/// same `Double` form per sample), so no two paths differ by the tones: a steep tone
/// curve would multiply the few ulps of a `Float` evaluation before it by its slope.
final class ToneTables: @unchecked Sendable {
    let red, green, blue: UnsafePointer<Float>
    /// With a line, the same entries as coordinates on it, for the fused matrix blocks,
    /// which fold the line into their matrix (`ColorMatrix.afterLine`): entry `x` as the
    /// sample the line maps to it, `u = (x − o)·m/G` computed in `Double` and rounded
    /// once, and exactly `v` where the entry is the line's value at sample `v`. A sample
    /// on the line then gives the same result whether its block loads the entry or
    /// takes the sample itself, so no result depends on a pixel's neighbours. They
    /// double the tables' memory (a 16-bit table over 0…65535, one for all channels:
    /// 512 KiB instead of 256), built once per plan and maxval. Present exactly when
    /// `line` is.
    let coordinates: (red: UnsafePointer<Float>, green: UnsafePointer<Float>, blue: UnsafePointer<Float>)?
    /// Entries per channel.
    let count: Int
    /// The line the entries follow from its first sample on, if any.
    let line: ToneLine?
    /// The largest magnitude among the values the fused matrix block reads (the
    /// coordinates where there is a line, else the entries); +∞ if one is NaN. It
    /// bounds its results (`FusedBlock.largestResult`). For the 2D premultiplied tables,
    /// over the valid pixels only (colour at most alpha): a colour above alpha, whose
    /// straight value reaches 255, would otherwise refuse at +9 EV a block that the
    /// straight block beside it keeps.
    let largestBlockInput: Float
    /// The largest magnitude among the entries themselves, which the LUT block reads;
    /// +∞ if one is NaN.
    let largestEntry: Float
    private let storage: UnsafeMutablePointer<Float>

    /// Tables over `0…maxval`, or over every byte for 8-bit samples (entries above
    /// maxval decode above 1, as the plain decoding does).
    convenience init(_ tones: [any ToneStage], maxval: Int, eightBit: Bool) {
        let m = Double(maxval)
        let line = ToneLine(tones, maxval: maxval, eightBit: eightBit)
        self.init(tones, count: eightBit ? 256 : maxval + 1, maxval: maxval, line: line) { i in
            if let line, i >= line.from, i <= line.last { return .toned(line.value(i), sample: i) }
            return .sample(Double(i) / m)
        }
    }

    /// 2D tables for 8-bit premultiplied samples: entry `A·256 + c` holds the tones of
    /// the straight colour `c/A` (0 where A = 0, whose result is 0 in any case); row
    /// A = 255, the opaque pixels, follows the line as the 1D table does, and holds the
    /// 1D table's entries everywhere.
    ///
    /// Entries whose straight colours are equal share one evaluation: `c/A` is the
    /// correctly rounded quotient, so `Double(k·c)/Double(k·A)` has the bits of
    /// `Double(c)/Double(A)`, and each fraction in lowest terms is evaluated once and
    /// copied to its multiples (39 641 evaluations instead of 65 536, A = 0 one of them).
    convenience init(premultiplied tones: [any ToneStage]) {
        let line = ToneLine(tones, maxval: 255, eightBit: true)
        // The line's entries of row 255 are their own.
        var source = Self.lowestTerms
        if let line { for c in line.from..<256 { source[255 << 8 | c] = Int32(255 << 8 | c) } }
        self.init(tones, count: 65_536, maxval: 255, line: line, bounding: { ($0 & 0xFF) <= $0 >> 8 },
                  source: source) { index in
            let a = index >> 8, c = index & 0xFF
            if a == 255, let line, c >= line.from { return .toned(line.value(c), sample: c) }
            return .sample(a == 0 ? 0 : Double(c) / Double(a))
        }
    }

    /// For each entry `A·256 + c` of a 2D premultiplied table, the entry of the same
    /// fraction `c/A` in lowest terms (itself, or one in an earlier row); A = 0 is
    /// entry 0. Built once for every plan.
    private static let lowestTerms: [Int32] = {
        var source = [Int32](repeating: -1, count: 65_536)
        for c in 0..<256 { source[c] = 0 }
        for a in 1..<256 {
            for c in 0..<256 where source[a << 8 | c] < 0 {
                let i = a << 8 | c
                source[i] = Int32(i)
                var k = 2
                while k * a < 256 && k * c < 256 {
                    let j = (k * a) << 8 | (k * c)
                    if source[j] < 0 { source[j] = Int32(i) }
                    k += 1
                }
            }
        }
        return source
    }()

    /// What one entry holds before its channel's tones: a sample on the `[0, 1]` scale,
    /// to be toned, or the line's value at an integer sample, already toned.
    private enum Entry {
        case sample(Double)
        case toned(Float, sample: Int)
    }

    /// Entry `i` of channel `c` is the tones of `value(i)` on channel `c` in `Double`,
    /// rounded once, or the line's value where `value(i)` is one; one table for all
    /// three channels when every tone stage treats them alike.
    ///
    /// `source[i]`, where given, names an earlier entry with the same value: entry `i`
    /// is then a copy of it.
    private init(_ tones: [any ToneStage], count: Int, maxval: Int, line: ToneLine?,
                 bounding counts: (Int) -> Bool = { _ in true }, source: [Int32]? = nil,
                 value: (Int) -> Entry) {
        let uniform = tones.allSatisfy(\.isChannelUniform)
        let channels = uniform ? 1 : 3
        let tables = line == nil ? 1 : 2
        storage = .allocate(capacity: count * channels * tables)
        let coordinates = storage + count * channels
        for c in 0..<channels {
            for i in 0..<count {
                if let source, Int(source[i]) != i {
                    let j = c * count + Int(source[i])
                    storage[c * count + i] = storage[j]
                    if line != nil { coordinates[c * count + i] = coordinates[j] }
                    continue
                }
                let x: Float, lineSample: Int?
                switch value(i) {
                case .sample(let v):
                    x = Float(tones.reduce(v) { v, t in t.evaluate(v, channel: c) })
                    lineSample = nil
                case .toned(let y, let sample):
                    (x, lineSample) = (y, sample)
                }
                storage[c * count + i] = x
                if let segment = line?.segment {
                    coordinates[c * count + i] = lineSample.map(Float.init)
                        ?? Float((Double(x) - segment.offset) * Double(maxval) / segment.gain)
                }
            }
        }
        func channel(_ base: UnsafeMutablePointer<Float>, _ c: Int) -> UnsafePointer<Float> {
            UnsafePointer(base + (uniform ? 0 : c * count))
        }
        (red, green, blue) = (channel(storage, 0), channel(storage, 1), channel(storage, 2))
        self.coordinates = line == nil ? nil : (channel(coordinates, 0), channel(coordinates, 1), channel(coordinates, 2))
        self.count = count
        self.line = line
        func largest(_ values: UnsafeMutablePointer<Float>) -> Float {
            var largest: Float = 0
            for c in 0..<channels {
                for i in 0..<count where counts(i) {
                    let x = values[c * count + i]
                    largest = x.isNaN ? .infinity : max(largest, x.magnitude)
                }
            }
            return largest
        }
        largestEntry = largest(storage)
        largestBlockInput = line == nil ? largestEntry : largest(coordinates)
    }

    deinit { storage.deallocate() }
}

/// Tone tables that plans built, kept for later plans with equal tone stages: an app
/// compiles a new plan for every slider change, and each rebuilt its tables though the
/// tones had not moved (on one core of a Zen 3, the 2D premultiplied ones 1.7 ms for
/// exposure and 3.2 ms with a curve, a 16-bit table 0.6 and 5.4 ms; the 8-bit tables,
/// 256 entries, are not kept). `shared` keeps the four most
/// recently used, keyed by the tone stages themselves (the library's exposure and
/// curves; a plan with another tone stage keeps its own tables only) and the tables'
/// kind. Equal stages build equal tables, to the bit, so no result depends on which
/// plan built them. At most four tables' memory, held for the process's life: a
/// uniform 2D or 16-bit table holds 256 KiB, 512 KiB with its coordinates on a line,
/// three times that per channel.
final class SharedToneTables: Sendable {
    /// `@unchecked`: `AnyHashable` is not `Sendable`, but what it holds here is a tone
    /// stage, and every `PixelKernel` is.
    struct Key: Hashable, @unchecked Sendable {
        let tones: [AnyHashable]
        /// The plans' cache key: maxval for 16-bit tables, 0 for 2D (8-bit tables,
        /// −maxval, are not kept).
        let kind: Int
    }

    struct Entry: Sendable {
        let key: Key
        let tables: ToneTables
    }

    /// The cache every plan uses.
    static let shared = SharedToneTables(capacity: 4)

    let capacity: Int
    /// Most recently used first.
    private let recent = Mutex<[Entry]>([])

    init(capacity: Int) { self.capacity = capacity }

    /// The key of `tones`' tables of `kind`, or `nil` unless every stage is the
    /// library's own (`Exposure`, `ToneCurve`), whose equality implies equal maps: a
    /// caller's `Hashable` stage may compare fewer things than its `map` reads.
    static func key(_ tones: [any ToneStage], kind: Int) -> Key? {
        var keys: [AnyHashable] = []
        for t in tones {
            switch t {
            case let e as Exposure: keys.append(e)
            case let c as ToneCurve: keys.append(c)
            default: return nil
            }
        }
        return Key(tones: keys, kind: kind)
    }

    /// The tables of equal stages another plan built, else `build()`'s when `building`
    /// (kept for later plans), else `nil`. Two plans may build the same tables at once;
    /// either's are right.
    func tables(for tones: [any ToneStage], kind: Int, building: Bool, build: () -> ToneTables) -> ToneTables? {
        // 8-bit tables (kind −maxval) cost 256 evaluations: not worth a place.
        guard kind >= 0, let key = Self.key(tones, kind: kind) else { return building ? build() : nil }
        let found: ToneTables? = recent.withLock { list in
            guard let i = list.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = list.remove(at: i)
            list.insert(entry, at: 0)
            return entry.tables
        }
        if let found { return found }
        guard building else { return nil }
        let built = build()
        recent.withLock { list in
            if list.contains(where: { $0.key == key }) { return }
            list.insert(Entry(key: key, tables: built), at: 0)
            if list.count > capacity { list.removeLast(list.count - capacity) }
        }
        return built
    }
}

/// The leading tones' affine segment on integer samples: from sample `from` to `last`
/// the tones are `v·gain + offset` with `gain = G/m` and `offset = o` rounded to
/// `Float` once, evaluated with two roundings (the tone tables' entries there).
struct ToneLine: Sendable {
    let from: Int, last: Int
    let gain: Float, offset: Float
    /// The tones' segment on the `[0, 1]` scale, unrounded (for the fused blocks,
    /// which fold it into their matrix).
    let segment: AffineToneSegment

    /// The line of `tones` at `maxval`, or `nil` when they have no common segment, it
    /// starts above the last sample, or (8-bit) above 128, where the blocks' byte test
    /// no longer holds, or its gain and offset are not finite as `Float`s, scaled by
    /// maxval (the coordinates on it divide by the gain, and the fused blocks' matrix
    /// takes both: `ToneTables.coordinates`).
    init?(_ tones: [any ToneStage], maxval: Int, eightBit: Bool) {
        guard !tones.isEmpty, let segment = AffineToneSegment.composed(tones),
              segment.gain > 0, Float(segment.gain).isFinite, Float(segment.offset * Double(maxval)).isFinite,
              let from = Self.firstSample(above: segment.lowerBound, maxval: maxval, eightBit: eightBit),
              !eightBit || from <= 128 else { return nil }
        self.from = from
        self.segment = segment
        last = eightBit ? 255 : maxval
        gain = Float(segment.gain / Double(maxval))
        offset = Float(segment.offset)
    }

    /// The line's value at sample `v`.
    @inline(__always)
    func value(_ v: Int) -> Float { Float(v) * gain + offset }

    /// The least sample `v` whose value `v/maxval` lies above `bound` by a margin far
    /// wider than `Float` rounding (the line and the tones meet at the bound, so the
    /// margin only leaves a few samples to the tones), or `nil` when there is none up to
    /// the last sample (maxval; 255 for 8-bit tables).
    static func firstSample(above bound: Double, maxval: Int, eightBit: Bool) -> Int? {
        let limit = eightBit ? 255 : maxval
        guard bound.isFinite else { return bound < 0 ? 0 : nil }
        let v = max(0, (bound + 1e-6) * Double(maxval)).rounded(.down) + 1
        return v <= Double(limit) ? Int(v) : nil
    }
}

/// A block schedule chosen for one run: the fused matrix block or the fused LUT block.
enum FusedRows {
    case matrix(FusedBlock)
    case cube(FusedCubeBlock)

    var positions: ChannelPositions {
        switch self {
        case .matrix(let b): b.positions
        case .cube(let b): b.positions
        }
    }

    func run8(_ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>, count: Int,
              gains: UnsafePointer<Float>?) {
        switch self {
        case .matrix(let b): b.run8(source, destination, count: count, gains: gains)
        case .cube(let b): b.run8(source, destination, count: count, gains: gains)
        }
    }

    /// Whether the rows widen 8-bit pixels into 16-bit ones (`FusedBlock.runWidening`).
    var widens: Bool {
        if case .matrix(let b) = self { b.widens } else { false }
    }

    /// 8-bit pixels into 16-bit ones; only for a widening `.matrix` block (`widens`).
    func runWidening(_ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt16>, count: Int,
                     gains: UnsafePointer<Float>?) {
        guard case .matrix(let b) = self else { return assertionFailure("only a matrix block widens") }
        b.runWidening(source, destination, count: count, gains: gains)
    }

    /// 16-bit samples; only for `.matrix` (`fusedRows` builds `.cube` for 8-bit only).
    func run16(_ source: UnsafePointer<UInt16>, _ destination: UnsafeMutablePointer<UInt16>, count: Int,
               gains: UnsafePointer<Float>?) {
        if case .matrix(let b) = self { b.run16(source, destination, count: count, gains: gains) }
    }
}

/// The cache key of a prepared LUT table: the plan has at most one LUT in the fused shape.
struct CubeTableKey: Hashable {
    let maxval: Int
    let positions: ChannelPositions
}

/// An `EditPlan` bound to one image size: positional constants resolved, the thread
/// count fixed, scratch allocated. Reuse it for every image or frame of that size: a
/// run allocates no pixel memory, only a few small objects (closure contexts, under
/// 1 KB), and a first run at a new input maxval builds that maxval's tone table once
/// and keeps it.
///
/// Runs may overlap in time (the prepared plan is `Sendable`); a run that finds the
/// scratch in use by another allocates its own, or, where the system cannot provide
/// it, waits for the plan's.
public final class PreparedEditPlan: @unchecked Sendable {
    /// The compiled plan.
    public let plan: EditPlan
    /// The whole image's size.
    public let width: Int, height: Int
    /// The most threads a run uses: the thread count asked for, capped at one per
    /// 64 K pixels of the image.
    public let threads: Int

    /// The fused steps as the `Float` row path runs them, one per `plan.steps`: a
    /// matrix by its schedule in `floatMatrices`, any other kernel by its index in
    /// `plan.steps`. The plan's own memory, written once.
    ///
    /// A row reads its matrices and gains where the plan keeps them. A copy of one (a
    /// `ColorMatrixKernel` out of `plan.steps`, the gains out of their optional) is
    /// written to the stack and read back as the row's loop starts; that read waits for
    /// the write, and the write retires only after the previous row's loads, which are
    /// still missing the cache, so each row would start with nothing in flight. On a
    /// Zen 4, a 12 MP `Float` image in place runs 1.15–1.2× faster without such a copy
    /// per row. (The one-pass block, `plan.floatBlock`, is still copied for each piece
    /// of a plan that has one.)
    private let floatSteps: UnsafeMutableBufferPointer<FloatStep>
    /// The schedules of the fused matrices, in the order of `plan.steps`.
    private let floatMatrices: UnsafeMutableBufferPointer<MatrixSchedule>
    /// Whether `plan.floatBlock` and `plan.floatBlockAfterTones` are there: asked
    /// first, so that a plan without one does not copy the optional for every row.
    let hasFloatBlock: Bool, hasFloatBlockAfterTones: Bool
    /// `gains` and `floatGains` in the plan's own memory, called in place (see
    /// `floatSteps`).
    private let storedGains: UnsafeMutablePointer<any PreparedGains>?
    private let storedFloatGains: UnsafeMutablePointer<any PreparedGains>?

    /// A fused step of the `Float` row path: a matrix, by its index in `floatMatrices`,
    /// a positional stage that is not the trailing gain, by its index in `stepGains`
    /// and `floatStepGains`, or any other kernel, by its index in `plan.steps`.
    enum FloatStep {
        case matrix(Int)
        case positional(Int)
        case kernel(Int)
    }

    /// The fused trailing gain and the reference's positional stages, resolved: for
    /// integer and half-precision samples (`preparedGains`), and for runs in place on a
    /// `FloatImage`, whose results stay `Float` (`preparedFloatGains`; a vignette's
    /// `Float` kernel, about 3× cheaper per gain than its `Double` gains, within SPEC
    /// §8's `Float` tolerance).
    let gains: (any PreparedGains)?
    let referenceGains: [Int: any PreparedGains]
    let floatGains: (any PreparedGains)?
    let floatReferenceGains: [Int: any PreparedGains]
    /// The positional stages among `plan.steps` (not the trailing gain), resolved the
    /// same two ways: the `.simd4` schedule scales by them in place.
    private let stepGains: [any PreparedGains]
    private let floatStepGains: [any PreparedGains]
    private let tables = Mutex<[Int: ToneTables]>([:])
    private let cubeTables = Mutex<[CubeTableKey: FusedCubeTable]>([:])
    private let scratch: Scratch
    /// 1 while `scratch` is free: a run takes it without waiting, or, where it cannot
    /// allocate scratch of its own, waits for it.
    private let scratchFree = DispatchSemaphore(value: 1)

    /// Pixels per row piece: a piece's Float scratch (16 KiB) and gains (4 KiB) stay in
    /// L1 between the passes of the general schedule.
    static let piece = 1024

    /// Pixels per row piece where the plan runs in place on `Float` pixels: four times
    /// `piece`, so that where the SIMD loops that stream the pixels through the core
    /// walk four streams (`MemoryStreams`), each is 16 KiB long. In place there is no
    /// scratch row to keep in L1; the piece's gains (16 KiB) stay in L2.
    static let floatPiece = 4 * piece

    /// Pixels per row piece of the one-pass blocks, which keep no `Float` row: their
    /// gains (16 KiB) and, for R G B samples, the widened bytes (16 KiB, in the `Float`
    /// row's memory). Fewer, longer pieces spend less on the per-piece set-up.
    static let blockPiece = 4 * piece

    /// The least number of pixels worth a thread of its own.
    let minimumBandPixels: Int
    /// Where the plan finds tone tables other plans built, and keeps its own for them.
    let toneTableCache: SharedToneTables?

    /// With an orientation: the stages alone, prepared for the upright size.
    let upright: PreparedEditPlan?
    /// With an orientation: the upright copy's memory, kept for the next run (grown when
    /// a run needs more); a run that finds it in use takes a temporary one.
    /// (The address is kept as an integer: a pointer is not `Sendable` out of the lock.)
    private let uprightStorage = Mutex<(address: Int, bytes: Int, busy: Bool)>((0, 0, false))

    init(_ plan: EditPlan, width: Int, height: Int, threads: Int?, minimumBandPixels: Int,
         toneTableCache: SharedToneTables?) throws(EditPlanError) {
        self.plan = plan
        self.minimumBandPixels = max(1, minimumBandPixels)
        self.toneTableCache = toneTableCache
        self.width = width
        self.height = height
        // No run of this image can use more threads than its pixels' bands (the same
        // bound as `forEachPiece`'s), so more would only allocate scratch.
        let usable = max(1, width * height / self.minimumBandPixels)  // width × height fits: checked by `prepared`
        self.threads = min(max(1, threads ?? ProcessInfo.processInfo.activeProcessorCount), usable)
        gains = plan.gain?.preparedGains(imageWidth: width, imageHeight: height)
        floatGains = plan.gain?.preparedFloatGains(imageWidth: width, imageHeight: height)
        var reference: [Int: any PreparedGains] = [:], floatReference: [Int: any PreparedGains] = [:]
        for (i, stage) in plan.stages.enumerated() {
            guard case .positional(let p) = stage else { continue }
            reference[i] = p.preparedGains(imageWidth: width, imageHeight: height)
            floatReference[i] = p.preparedFloatGains(imageWidth: width, imageHeight: height)
        }
        referenceGains = reference
        floatReferenceGains = floatReference
        guard let scratch = Scratch(slots: self.threads, piece: Self.piece, rowWidth: width) else {
            throw .outOfMemory(bytes: Scratch.bytes(slots: self.threads, piece: Self.piece, rowWidth: width))
        }
        self.scratch = scratch
        upright = plan.orientation == .up ? nil
            : try PreparedEditPlan(EditPlan(stages: plan.stages), width: width, height: height, threads: threads,
                                   minimumBandPixels: minimumBandPixels, toneTableCache: toneTableCache)
        // Last, after everything that can throw (a class that fails to initialise does
        // not deinitialise).
        hasFloatBlock = plan.floatBlock != nil
        hasFloatBlockAfterTones = plan.floatBlockAfterTones != nil
        func stored(_ gains: (any PreparedGains)?) -> UnsafeMutablePointer<any PreparedGains>? {
            gains.map { gains in
                let storage = UnsafeMutablePointer<any PreparedGains>.allocate(capacity: 1)
                storage.initialize(to: gains)
                return storage
            }
        }
        storedGains = stored(gains)
        storedFloatGains = stored(floatGains)
        var matrices: [MatrixSchedule] = []
        var positional: [any PreparedGains] = [], floatPositional: [any PreparedGains] = []
        let steps = plan.steps.indices.map { i -> FloatStep in
            switch plan.steps[i] {
            case .matrix(let m):
                matrices.append(m.schedule)
                return .matrix(matrices.count - 1)
            case .kernel(let k as any PositionalStage):
                positional.append(k.preparedGains(imageWidth: width, imageHeight: height))
                floatPositional.append(k.preparedFloatGains(imageWidth: width, imageHeight: height))
                return .positional(positional.count - 1)
            case .kernel:
                return .kernel(i)
            }
        }
        stepGains = positional
        floatStepGains = floatPositional
        floatSteps = .allocate(capacity: steps.count)
        _ = floatSteps.initialize(from: steps)
        floatMatrices = .allocate(capacity: matrices.count)
        _ = floatMatrices.initialize(from: matrices)
    }

    deinit {
        _ = floatSteps.deinitialize()
        floatSteps.deallocate()
        _ = floatMatrices.deinitialize()
        floatMatrices.deallocate()
        storedGains?.deinitialize(count: 1).deallocate()
        storedFloatGains?.deinitialize(count: 1).deallocate()
        uprightStorage.withLock { free(UnsafeMutableRawPointer(bitPattern: $0.address)) }
    }

    /// Runs `body` on `bytes` bytes (64-byte aligned) for the upright copy of an oriented
    /// run: the plan's own storage, allocated once, unless another run holds it.
    func withUprightStorage(bytes: Int, _ body: (UnsafeMutableRawPointer) throws(EditPlanError) -> Void) throws(EditPlanError) {
        // Allocated with `posix_memalign`, which fails cleanly where `allocate` would trap.
        func allocate() -> UnsafeMutableRawPointer? {
            var memory: UnsafeMutableRawPointer?
            return posix_memalign(&memory, 64, max(bytes, 1)) == 0 ? memory : nil
        }
        let address: Int? = uprightStorage.withLock { state in
            guard !state.busy else { return 0 }
            if state.bytes < bytes {
                guard let grown = allocate() else { return nil }
                free(UnsafeMutableRawPointer(bitPattern: state.address))
                state.address = Int(bitPattern: grown)
                state.bytes = bytes
            }
            state.busy = true
            return state.address
        }
        guard let address else { throw .outOfMemory(bytes: bytes) }
        guard let claimed = UnsafeMutableRawPointer(bitPattern: address) else {
            guard let temporary = allocate() else { throw .outOfMemory(bytes: bytes) }
            defer { free(temporary) }
            return try body(temporary)
        }
        defer { uprightStorage.withLock { $0.busy = false } }
        try body(claimed)
    }

    /// The tone tables for `maxval`, built on first use (or taken from an earlier plan
    /// with equal tone stages, `SharedToneTables`).
    func toneTables(maxval: Int, eightBit: Bool) -> ToneTables? {
        guard !plan.tones.isEmpty else { return nil }
        let key = eightBit ? -maxval : maxval
        return tables.withLock { cache in
            if let t = cache[key] { return t }
            let tones = plan.tones, build = { ToneTables(tones, maxval: maxval, eightBit: eightBit) }
            let t = toneTableCache?.tables(for: tones, kind: key, building: true, build: build) ?? build()
            cache[key] = t
            return t
        }
    }

    /// The 2D tone tables of 8-bit premultiplied pixels (`ToneTables(premultiplied:)`):
    /// the plan's own once built, or an earlier plan's for equal tone stages
    /// (`SharedToneTables`), else built now when `building`, else `nil`. They cost
    /// 39 641 tone evaluations per channel in `Double` (about 1.7 ms for exposure and
    /// 3.2 ms with a curve on one core of a Zen 3), so a run builds them at its first
    /// translucent pixel, not for an opaque image, and keeps them for the plan's later
    /// runs and for later plans.
    func premultipliedToneTables(building: Bool) -> ToneTables? {
        guard !plan.tones.isEmpty else { return nil }
        return tables.withLock { cache in
            // Key 0: no maxval is 0, and the 1D tables use ±maxval.
            if let t = cache[0] { return t }
            let tones = plan.tones, build = { ToneTables(premultiplied: tones) }
            let t = toneTableCache.map { $0.tables(for: tones, kind: 0, building: building, build: build) }
                ?? (building ? build() : nil)
            cache[0] = t
            return t
        }
    }

    // MARK: Running

    /// The size of the image as stored, before the orientation.
    public var storedSize: (width: Int, height: Int) {
        plan.orientation.swapsAxes ? (height, width) : (width, height)
    }

    /// Runs the plan in place on a Float image of the stored size (`storedSize`; the
    /// prepared size when the plan has no orientation), which it replaces by the
    /// upright result.
    ///
    /// - Parameter variant: `.simd4`, the fused schedule, or `.scalar`, the unfused
    ///   stages with scalar loops (the reference).
    /// - Throws: `EditPlanError.imageSizeMismatch`.
    /// - Complexity: O(width × height × stages); no pixel memory allocated without an
    ///   orientation (with one, the upright image).
    public func run(_ image: inout FloatImage, variant: KernelVariant = .simd4) throws(EditPlanError) {
        if plan.orientation != .up {
            let stored = storedSize
            guard image.width == stored.width, image.height == stored.height else {
                throw .imageSizeMismatch(width: image.width, height: image.height, preparedWidth: stored.width,
                                         preparedHeight: stored.height)
            }
            // Pixels move first (bit for bit), so every stage sees the upright image.
            image = image.oriented(plan.orientation)
        }
        guard image.width == width, image.height == height else {
            throw .imageSizeMismatch(width: image.width, height: image.height, preparedWidth: width, preparedHeight: height)
        }
        guard !plan.isEmpty else { return }
        let w = width
        image.withUnsafeMutablePixels { buffer in
            let base = SendablePointer(base: buffer.baseAddress!)
            let region = ImageRegion(x: 0, y: 0, width: width, height: height)
            let holding = holdsFloatImageRowGains(variant, in: region, floatBlockRuns: hasFloatBlock)
            forEachPiece(region, piece: Self.floatPiece, pairingRows: holding) { y, x0, count, slot in
                let row = base.base + y * w + x0
                self.runFloat(row, count: count, y: y, x0: x0, slot: slot, variant: variant, holdingGains: holding,
                              floatResults: true)
            }
        }
    }

    /// Runs the plan from 8-bit samples to 8-bit samples.
    ///
    /// - Parameters:
    ///   - input: `region.width × region.height × inputLayout.channelCount` samples,
    ///     interleaved, rows top to bottom, no padding, each ≤ `inputMaxval` (larger
    ///     values decode above 1; they never trap. With tone stages, a 16-bit sample
    ///     above maxval takes maxval's tones: the tone tables end there).
    ///   - inputLayout, inputMaxval: how to read them (maxval 1…255).
    ///   - output: room for the same pixels in `outputLayout`; may be the same memory as
    ///     `input` when the layouts have the same channel count and sample width, and
    ///     must not otherwise overlap it (then it throws `.buffer(.overlappingBuffers)`;
    ///     with an orientation, whose run reads the whole input first, it may).
    ///   - outputLayout, outputMaxval: how to write them.
    ///   - region: where the buffers lie in the prepared image; `nil` is the whole image.
    ///   - variant: `.simd4` (fused) or `.scalar` (the reference).
    /// - Throws: `EditPlanError` for a maxval, region or buffer size that does not fit,
    ///   or buffers that overlap other than as the same memory; with an orientation,
    ///   `.outOfMemory` where the upright copy of the input cannot be allocated.
    /// - Complexity: O(pixels × stages); no pixel memory allocated without an
    ///   orientation (with one, the upright copy, kept for the next run).
    public func run(input: UnsafeBufferPointer<UInt8>, inputLayout: SampleLayout, inputMaxval: Int,
                    output: UnsafeMutableBufferPointer<UInt8>, outputLayout: SampleLayout, outputMaxval: Int,
                    region: ImageRegion? = nil, variant: KernelVariant = .simd4) throws(EditPlanError) {
        try runSamples(input, inputLayout, inputMaxval, output, outputLayout, outputMaxval, region, variant)
    }

    /// The same from 16-bit samples to 16-bit samples (native byte order).
    public func run(input: UnsafeBufferPointer<UInt16>, inputLayout: SampleLayout, inputMaxval: Int,
                    output: UnsafeMutableBufferPointer<UInt16>, outputLayout: SampleLayout, outputMaxval: Int,
                    region: ImageRegion? = nil, variant: KernelVariant = .simd4) throws(EditPlanError) {
        try runSamples(input, inputLayout, inputMaxval, output, outputLayout, outputMaxval, region, variant)
    }

    /// The same from 8-bit to 16-bit samples.
    public func run(input: UnsafeBufferPointer<UInt8>, inputLayout: SampleLayout, inputMaxval: Int,
                    output: UnsafeMutableBufferPointer<UInt16>, outputLayout: SampleLayout, outputMaxval: Int,
                    region: ImageRegion? = nil, variant: KernelVariant = .simd4) throws(EditPlanError) {
        try runSamples(input, inputLayout, inputMaxval, output, outputLayout, outputMaxval, region, variant)
    }

    /// The same from 16-bit to 8-bit samples.
    public func run(input: UnsafeBufferPointer<UInt16>, inputLayout: SampleLayout, inputMaxval: Int,
                    output: UnsafeMutableBufferPointer<UInt8>, outputLayout: SampleLayout, outputMaxval: Int,
                    region: ImageRegion? = nil, variant: KernelVariant = .simd4) throws(EditPlanError) {
        try runSamples(input, inputLayout, inputMaxval, output, outputLayout, outputMaxval, region, variant)
    }

    func check(_ region: ImageRegion) throws(EditPlanError) {
        let r = region
        guard r.width >= 1, r.height >= 1, r.x >= 0, r.y >= 0,
              r.x <= width - r.width, r.y <= height - r.height else {
            throw .regionOutside(x: r.x, y: r.y, width: r.width, height: r.height, imageWidth: width, imageHeight: height)
        }
    }

    /// Throws `invalidMaxval` unless each maxval lies in 1…2^bits − 1, then
    /// `sampleCountMismatch` unless each buffer holds `pixels` pixels of its layout (an
    /// output count of `nil` is not checked): the checks of every sample run, which
    /// `SamplePipeline` also makes before it prepares a plan.
    static func checkSamples(pixels: Int, input: (layout: SampleLayout, maxval: Int, bits: Int, count: Int),
                             output: (layout: SampleLayout, maxval: Int, bits: Int, count: Int?)) throws(EditPlanError) {
        for (maxval, bits) in [(input.maxval, input.bits), (output.maxval, output.bits)] {
            guard maxval >= 1, maxval <= (1 << bits) - 1 else { throw .invalidMaxval(maxval, sampleBits: bits) }
        }
        for (buffer, layout, count) in [("input", input.layout, input.count), ("output", output.layout, output.count)] {
            guard let count else { continue }
            let (expected, overflow) = pixels.multipliedReportingOverflow(by: layout.channelCount)
            guard !overflow, count == expected else {
                throw .sampleCountMismatch(buffer: buffer, expected: overflow ? Int.max : expected, found: count)
            }
        }
    }

    // One generic body, specialised by the compiler for each public overload (and for
    // `SamplePipeline`'s).
    func runSamples<In: FixedWidthInteger & UnsignedInteger & SIMDScalar, Out: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        _ input: UnsafeBufferPointer<In>, _ inputLayout: SampleLayout, _ inputMaxval: Int,
        _ output: UnsafeMutableBufferPointer<Out>, _ outputLayout: SampleLayout, _ outputMaxval: Int,
        _ region: ImageRegion?, _ variant: KernelVariant
    ) throws(EditPlanError) {
        if plan.orientation != .up {
            return try runOriented(input, inputLayout, inputMaxval, output, outputLayout, outputMaxval, region, variant)
        }
        let region = region ?? ImageRegion(x: 0, y: 0, width: width, height: height)
        try check(region)
        try Self.checkSamples(pixels: region.width * region.height,  // ≤ width × height, which fits
                              input: (inputLayout, inputMaxval, In.bitWidth, input.count),
                              output: (outputLayout, outputMaxval, Out.bitWidth, output.count))
        // Pixels are written in place only where each one is read before it is written:
        // the same memory, with the same pixel size.
        let (inBytes, outBytes) = (UnsafeRawBufferPointer(input), UnsafeRawBufferPointer(output))
        let inPlace = inBytes.baseAddress == outBytes.baseAddress && In.bitWidth == Out.bitWidth
            && inputLayout.channelCount == outputLayout.channelCount
        if !inPlace, let a = inBytes.baseAddress, let b = outBytes.baseAddress,
           a < b + outBytes.count, b < a + inBytes.count {
            throw .buffer(.overlappingBuffers)
        }
        let source = UncheckedBox(input.baseAddress!), destination = SendablePointer(base: output.baseAddress!)
        let inChannels = inputLayout.channelCount, outChannels = outputLayout.channelCount
        let eightBit = In.self == UInt8.self
        // Both variants read the leading tones from the tables (`ToneTables`).
        let tables = toneTables(maxval: inputMaxval, eightBit: eightBit)
        let block = fusedBlock(in: In.self, out: Out.self, inputLayout, outputLayout, inputMaxval, outputMaxval,
                               tables: tables, variant: variant)
        // The block is unwrapped once per run: unwrapped in the piece closure, its
        // constants (about 1 KiB) were copied for every piece.
        if let block {
            forEachPiece(region, piece: Self.blockPiece, pairingRows: true) { y, x0, count, slot in
                let offset = (y - region.y) * region.width + (x0 - region.x)
                let s = source.value + offset * inChannels, d = destination.base + offset * outChannels
                let g = self.pieceGains(y: y, x0: x0, count: count, slot: slot)
                if In.self == UInt8.self && inChannels == 3 {
                    // R G B pieces run through the four-channel block in the slot's scratch.
                    let wide = UnsafeMutableRawPointer(slot.pixels).assumingMemoryBound(to: UInt8.self)
                    Self.widen(UnsafeRawPointer(s).assumingMemoryBound(to: UInt8.self), into: wide, count: count)
                    block.run8(UnsafePointer(wide), wide, count: count, gains: g)
                    Self.narrow(UnsafePointer(wide), into: UnsafeMutableRawPointer(d).assumingMemoryBound(to: UInt8.self),
                                count: count)
                } else if In.self == UInt8.self {
                    block.run8(UnsafeRawPointer(s).assumingMemoryBound(to: UInt8.self),
                               UnsafeMutableRawPointer(d).assumingMemoryBound(to: UInt8.self), count: count, gains: g)
                } else {
                    block.run16(UnsafeRawPointer(s).assumingMemoryBound(to: UInt16.self),
                                UnsafeMutableRawPointer(d).assumingMemoryBound(to: UInt16.self), count: count, gains: g)
                }
            }
            return
        }
        let holding = holdsRowGains(variant, in: region)
        forEachPiece(region, piece: Self.piece, pairingRows: holding) { y, x0, count, slot in
            let offset = (y - region.y) * region.width + (x0 - region.x)
            let s = source.value + offset * inChannels, d = destination.base + offset * outChannels
            let row = slot.pixels
            if let tables {
                SampleConversion.decode(s, layout: inputLayout, maxval: inputMaxval, tables: tables, into: row, count: count)
            } else {
                SampleConversion.decode(s, layout: inputLayout, maxval: inputMaxval, into: row, count: count)
            }
            self.runFloat(row, count: count, y: y, x0: x0, slot: slot, variant: variant, tonesDone: tables != nil,
                          holdingGains: holding)
            SampleConversion.encode(row, count: count, layout: outputLayout, maxval: outputMaxval, into: d)
        }
    }

    /// The samples oriented into a raster of the upright size (one copy of the input, in
    /// memory the plan keeps between runs), then the stages on it. Orientation reorders
    /// rows, so it needs the whole image: no region.
    private func runOriented<In: FixedWidthInteger & UnsignedInteger & SIMDScalar, Out: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        _ input: UnsafeBufferPointer<In>, _ inputLayout: SampleLayout, _ inputMaxval: Int,
        _ output: UnsafeMutableBufferPointer<Out>, _ outputLayout: SampleLayout, _ outputMaxval: Int,
        _ region: ImageRegion?, _ variant: KernelVariant
    ) throws(EditPlanError) {
        let stored = storedSize
        if let region, region != ImageRegion(x: 0, y: 0, width: width, height: height) {
            throw .regionOutside(x: region.x, y: region.y, width: region.width, height: region.height,
                                 imageWidth: width, imageHeight: height)
        }
        let channels = inputLayout.channelCount
        let (expected, overflow) = (width * height).multipliedReportingOverflow(by: channels)  // width × height fits
        guard !overflow, input.count == expected else {
            throw .sampleCountMismatch(buffer: "input", expected: overflow ? Int.max : expected, found: input.count)
        }
        let pixelBytes = channels * MemoryLayout<In>.stride
        try withUprightStorage(bytes: input.count * MemoryLayout<In>.stride) { (storage) throws(EditPlanError) in
            do throws(OrientationError) {
                try plan.orientation.orient(source: UnsafeRawPointer(input.baseAddress!), width: stored.width, height: stored.height,
                                            bytesPerPixel: pixelBytes, sourceBytesPerRow: stored.width * pixelBytes,
                                            into: storage, destinationBytesPerRow: width * pixelBytes)
            } catch {
                throw .invalidSize(width: stored.width, height: stored.height)
            }
            let samples = UnsafeBufferPointer(start: storage.assumingMemoryBound(to: In.self), count: input.count)
            try upright!.runSamples(samples, inputLayout, inputMaxval, output, outputLayout, outputMaxval, nil, variant)
        }
    }

    /// The one-pass block schedule, when the fused stages and the layouts allow it: four
    /// channels in and out with the same sample type and maxval.
    private func fusedBlock<In, Out>(in: In.Type, out: Out.Type, _ inputLayout: SampleLayout, _ outputLayout: SampleLayout,
                                     _ inputMaxval: Int, _ outputMaxval: Int, tables: ToneTables?,
                                     variant: KernelVariant) -> FusedRows? {
        guard variant == .simd4, In.self == Out.self, inputMaxval == outputMaxval, inputLayout == outputLayout else { return nil }
        // 8-bit R G B is widened to R G B A per piece (`widen`, `narrow`).
        guard inputLayout == .rgba || (inputLayout == .rgb && In.self == UInt8.self) else { return nil }
        return fusedRows(maxval: inputMaxval, eightBit: In.self == UInt8.self, tables: tables, positions: .rgba)
    }

    /// `count` R G B pixels as R G B A with A = 255, into `wide` (4·count bytes): one
    /// 4-byte load per pixel while another follows it (its fourth byte is the next
    /// pixel's R, replaced), the last by bytes.
    static func widen(_ rgb: UnsafePointer<UInt8>, into wide: UnsafeMutablePointer<UInt8>, count: Int) {
        let from = UnsafeRawPointer(rgb), to = UnsafeMutableRawPointer(wide)
        var i = 0
        #if _endian(little)
        while i &+ 1 < count {
            let w = from.loadUnaligned(fromByteOffset: 3 &* i, as: UInt32.self)
            to.storeBytes(of: w | 0xFF00_0000, toByteOffset: 4 &* i, as: UInt32.self)
            i &+= 1
        }
        #endif
        while i < count {
            (wide[4 &* i], wide[4 &* i &+ 1], wide[4 &* i &+ 2], wide[4 &* i &+ 3]) = (rgb[3 &* i], rgb[3 &* i &+ 1], rgb[3 &* i &+ 2], 255)
            i &+= 1
        }
    }

    /// `count` R G B A pixels back to R G B: one 4-byte store per pixel while another
    /// follows (its fourth byte is overwritten by the next store), the last by bytes, so
    /// nothing past the piece is written.
    static func narrow(_ wide: UnsafePointer<UInt8>, into rgb: UnsafeMutablePointer<UInt8>, count: Int) {
        let from = UnsafeRawPointer(wide), to = UnsafeMutableRawPointer(rgb)
        var i = 0
        while i &+ 1 < count {
            to.storeBytes(of: from.load(fromByteOffset: 4 &* i, as: UInt32.self), toByteOffset: 3 &* i, as: UInt32.self)
            i &+= 1
        }
        while i < count {
            (rgb[3 &* i], rgb[3 &* i &+ 1], rgb[3 &* i &+ 2]) = (wide[4 &* i], wide[4 &* i &+ 1], wide[4 &* i &+ 2])
            i &+= 1
        }
    }

    /// The block schedule for the plan's fused stages on four-channel pixels, if they
    /// have one of its shapes: tone table, at most one matrix and positional gain (any
    /// sample width), or tone table, at most one matrix, a 3D tetrahedral LUT and gain
    /// (8-bit samples).
    ///
    /// With `premultiplied` (8-bit only), only the matrix shape qualifies, and `tables`
    /// must be the 2D premultiplied tables. So too (8-bit only) with `resultPositions`,
    /// the destination's positions where its format is not the source's: 16-bit ones
    /// for a widening block (`FusedBlock.runWidening`; `Float16`s with `halfPrecision`),
    /// or 8-bit ones with red and blue where the source has them or exchanged; either
    /// with alpha premultiplied or straight (`premultipliesResults`, by default as the
    /// source's for 8-bit results, straight for a widening block's).
    func fusedRows(maxval: Int, eightBit: Bool, tables: ToneTables?, positions: ChannelPositions,
                   premultiplied: Bool = false, premultipliesResults: Bool? = nil,
                   resultPositions: ChannelPositions? = nil, widening: Bool = false,
                   halfPrecision: Bool = false) -> FusedRows? {
        #if _endian(little)  // the packed lanes assume the first sample in the lowest-addressed bits
        if !plan.tones.isEmpty && tables == nil { return nil }
        var matrix: ColorMatrixKernel?
        var cube: ColorCube?
        for (i, step) in plan.steps.enumerated() {
            switch step {
            case .matrix(let m) where i == 0: matrix = m
            case .kernel(let k as ColorCube) where cube == nil: cube = k
            default: return nil
            }
        }
        // Outside the blocks' conditioning (`FusedBlock.isWellConditioned`), the row path.
        guard let cube else {
            // The 16-bit block rotates other positions into RGBA's (`FusedBlock.body16`).
            guard eightBit || positions.redBeforeBlue.isRotationOfRGBA else { return nil }
            let m = matrix ?? ColorMatrixKernel(.identity, name: "identity")
            let block = FusedBlock(matrix: m, maxval: maxval, tables: tables, positions: positions,
                                   premultiplied: premultiplied, premultipliesResults: premultipliesResults,
                                   resultPositions: resultPositions, widening: widening,
                                   halfPrecision: halfPrecision, largestGain: gains?.largestGainMagnitude ?? 1)
            return block.isWellConditioned ? .matrix(block) : nil
        }
        guard eightBit, maxval <= 255, !premultiplied, premultipliesResults != true, resultPositions == nil,
              FusedCubeBlock.accepts(cube, tables: tables != nil, matrix: matrix != nil) else { return nil }
        let table = cubeTables.withLock { cache in
            let key = CubeTableKey(maxval: maxval, positions: positions)
            if let t = cache[key] { return t }
            let t = FusedCubeTable(cube, scale: Float(maxval) * cube.mixAmount, positions: positions)
            cache[key] = t
            return t
        }
        let block = FusedCubeBlock(matrix: matrix?.matrix, cube: cube, table: table, maxval: maxval, tables: tables,
                                   positions: positions, largestGain: gains?.largestGainMagnitude ?? 1)
        return block.isWellConditioned ? .cube(block) : nil
        #else
        return nil
        #endif
    }

    /// The fused gains of one row piece, or `nil` without a trailing positional stage.
    ///
    /// The slot keeps the gains of the run's whole span for its last `groupRows` rows
    /// (each computed on the first piece of its row, so a vignette mirrors its right
    /// half from its left instead of computing both). A row whose gains equal a held
    /// row's (`rowWithSameGains`, such as its mirror in `forEachPiece`'s paired order)
    /// takes them as they are. The piece's gains start at `x0` in the row's.
    /// `floatResults`: the gains of a run whose results stay `Float` (`floatGains`).
    func pieceGains(y: Int, x0: Int, count: Int, slot: ScratchSlot, floatResults: Bool = false) -> UnsafePointer<Float>? {
        guard let gains = floatResults ? storedFloatGains : storedGains else { return nil }
        let span = slot.span
        let (key, entry) = heldEntry(y: y, gains, slot)
        let row = slot.gains + entry * slot.rowStride
        if slot.heldRows[entry] != key {
            gains.pointee.rowGains(y: y, x0: span.x, count: span.width, variant: .simd4, into: row)
            slot.heldRows[entry] = key
        }
        return UnsafePointer(row + (x0 - span.x))
    }

    /// Row `y`'s key among the held rows (the lesser of `y` and the row with the same
    /// gains) and the slot's row of gains that holds it.
    func heldEntry(y: Int, _ gains: UnsafeMutablePointer<any PreparedGains>, _ slot: ScratchSlot) -> (key: Int, entry: Int) {
        let key = min(y, gains.pointee.rowWithSameGains(as: y))
        return (key, (key % slot.groupRows + slot.groupRows) % slot.groupRows)
    }

    /// Scales a piece of the `Float` row path by its row's held gains (`pieceGains`).
    /// A piece that spans the whole run and whose row's gains are not held yet
    /// computes them as it scales (`scale(_:count:y:x0:writingGainsTo:)`, a chunk of
    /// gains just ahead of the pixels it scales) into the slot's row, for the row's
    /// mirror to take as they are: the gains' arithmetic then overlaps the pixels'
    /// memory traffic, where computing the row's gains first left the memory idle
    /// meanwhile (a vignette centred in a 12 MP image ran 1.01–1.04× as fast so in the
    /// baseline x86-64 build on a Zen 3 EPYC, alternating runs). Out of line: inlined
    /// into `runFloat`, it left the native build's vignette, which does not hold gains
    /// on such a core, 0.91× as fast with the same machine code in every loop.
    @inline(never)
    func scaleByHeldGains(_ row: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int, slot: ScratchSlot,
                          floatResults: Bool) {
        guard let gains = floatResults ? storedFloatGains : storedGains else { return }
        let span = slot.span
        let (key, entry) = heldEntry(y: y, gains, slot)
        if slot.heldRows[entry] != key, x0 == span.x, count == span.width {
            gains.pointee.scale(row, count: count, y: y, x0: x0, writingGainsTo: slot.gains + entry * slot.rowStride)
            slot.heldRows[entry] = key
            return
        }
        guard let held = pieceGains(y: y, x0: x0, count: count, slot: slot, floatResults: floatResults) else { return }
        gains.pointee.scale(row, count: count, y: y, x0: x0, by: held)
    }

    /// Whether the `Float` row path of a run to samples or a pixel buffer scales by the
    /// slot's held row gains (`pieceGains`, rows paired by `forEachPiece`) rather than
    /// letting the positional stage compute them as it scales: so when the stage's own
    /// `scale` takes two passes anyway (`scalesInOnePass` false, as for the vignette)
    /// and the region's rows pair up (`rowsPair`). Then each row's gains are computed
    /// once for the row and its mirror, and a vignette whose `2·cx` is an integer
    /// mirrors half of each row too, so a centred vignette computes a quarter of its
    /// `Double` gains (`preparedGains`). Unlike a `FloatImage` run
    /// (`holdsFloatImageRowGains`), on every processor: a `Double` gain costs about 3×
    /// a `Float` one (0.70 against 0.24 ns natively on a Zen 4, a loop of gains alone),
    /// where the `Float` gains saved less by pairing than the two streams of rows cost
    /// (the rule for the `Double` gains is reasoned from those costs, not timed apart).
    func holdsRowGains(_ variant: KernelVariant, in region: ImageRegion) -> Bool {
        guard variant == .simd4, gains.map({ !$0.scalesInOnePass }) == true else { return false }
        return rowsPair(in: region)
    }

    /// `holdsRowGains` for a `FloatImage` in place, whose positional stage takes its
    /// `Float` gains (`preparedFloatGains`): where the one-pass block runs
    /// (`floatBlockRuns`), or elsewhere where `pairsRowsToScale` is true. With the
    /// `Float` gains, a vignette centred in a 12 MP image took 0.75–0.82× the time of
    /// the stage's own chunks, and an edit with exposure first (the `Float` block)
    /// 0.83× the time of each piece's own gains (baseline x86-64 build, alternating
    /// runs). Without the pairing, a row's gains computed all at once ahead of its
    /// pixels took 1.13× the time of the stage's own chunks of gains and pixels.
    func holdsFloatImageRowGains(_ variant: KernelVariant, in region: ImageRegion, floatBlockRuns: Bool) -> Bool {
        guard variant == .simd4, floatGains.map({ !$0.scalesInOnePass }) == true else { return false }
        guard Self.pairsRowsToScale || floatBlockRuns else { return false }
        return rowsPair(in: region)
    }

    /// Whether a `FloatImage` run holds row gains for mirror-paired rows where the
    /// one-pass block does not run (`holdsFloatImageRowGains`; runs to samples hold
    /// them wherever the rows pair): not where the build targets AVX2
    /// and the processor walks memory in order (`MemoryStreams.interleaves` false, Zen
    /// cores). The pairs keep two streams of rows going, from both ends of the image,
    /// which such a core follows worse than one, and its AVX2 gains are cheap enough
    /// to compute for every row. Measured on a Zen 4 only: the centred vignette ran
    /// 1.13–1.14× as fast without the pairs natively (0.97× in the baseline build,
    /// which keeps them), while with exposure, where the one-pass block runs,
    /// `kernel/recipe/simd4` ran 0.94× as fast without them, so the block keeps them.
    /// The integer blocks keep their own pairs everywhere (not measured without).
    static var pairsRowsToScale: Bool {
        #if canImport(TargetFeatures.AVX2)
        MemoryStreams.interleaves
        #else
        true
        #endif
    }

    /// Whether the fused gains of `region`'s first and last rows are the same
    /// (`rowWithSameGains`, a vignette centred in the region), so that its rows can go
    /// in mirror pairs: for both kinds of gains, the samples' and a `FloatImage`'s,
    /// so that a run pairs its rows only where the gains it holds pair them too.
    func rowsPair(in region: ImageRegion) -> Bool {
        let last = region.y + region.height - 1
        return region.height > 1 && gains.map { $0.rowWithSameGains(as: region.y) == last } == true
            && floatGains.map { $0.rowWithSameGains(as: region.y) == last } == true
    }

    /// The gains of one piece of the `Float` row path, computed for the piece alone in
    /// the slot's own piece of gains (without the row pairing of `holdsRowGains` a row's
    /// gains have nothing to share). With `floatPiece` a 12 MP row is one piece; the
    /// recipe with the `Float` block ran as fast as with 1024-pixel pieces natively and
    /// 1.11× as fast in the default build.
    func floatPieceGains(y: Int, x0: Int, count: Int, slot: ScratchSlot, floatResults: Bool) -> UnsafePointer<Float>? {
        guard let gains = floatResults ? storedFloatGains : storedGains else { return nil }
        assert(count <= Self.floatPiece, "a piece longer than the slot's piece gains")
        gains.pointee.rowGains(y: y, x0: x0, count: count, variant: .simd4, into: slot.pieceGains)
        return UnsafePointer(slot.pieceGains)
    }

    /// The plan on one row piece of Float pixels in place: the fused steps for `.simd4`
    /// (the one-pass `Float` block where the plan has one), the unfused stages with
    /// scalar loops for `.scalar`; either without the leading tone stages with
    /// `tonesDone` (a table already applied them; `.simd4` then takes
    /// `floatBlockAfterTones`). With `holdingGains` (`holdsRowGains`), the trailing
    /// gains come from the slot's held rows (`pieceGains`). With `floatResults` (a
    /// `FloatImage` in place) the positional stages take their `Float` results' gains
    /// (`floatGains`, `floatReferenceGains`); rows on their way to integer or
    /// half-precision samples take `gains` and `referenceGains`.
    func runFloat(_ row: UnsafeMutablePointer<SIMD4<Float>>, count: Int, y: Int, x0: Int, slot: ScratchSlot,
                  variant: KernelVariant, tonesDone: Bool = false, holdingGains: Bool = false, floatResults: Bool = false) {
        let buffer = UnsafeMutableBufferPointer(start: row, count: count)
        let location = RowLocation(y: y, x0: x0, imageWidth: width, imageHeight: height)
        switch variant {
        case .scalar:
            for (i, stage) in plan.stages.enumerated() where !tonesDone || i >= plan.toneStageCount {
                if let g = floatResults ? floatReferenceGains[i] : referenceGains[i] {
                    assert(count <= Self.floatPiece, "a piece longer than the slot's piece gains")
                    let gains = slot.pieceGains
                    g.rowGains(y: y, x0: x0, count: count, variant: .scalar, into: gains)
                    for j in 0..<count {
                        row[j].x = gains[j] * row[j].x
                        row[j].y = gains[j] * row[j].y
                        row[j].z = gains[j] * row[j].z
                    }
                } else {
                    stage.kernel.apply(buffer, at: location, variant: .scalar)
                }
            }
        case .simd4:
            if tonesDone ? hasFloatBlockAfterTones : hasFloatBlock,
               let block = tonesDone ? plan.floatBlockAfterTones : plan.floatBlock {
                let gains = holdingGains ? pieceGains(y: y, x0: x0, count: count, slot: slot, floatResults: floatResults)
                                         : floatPieceGains(y: y, x0: x0, count: count, slot: slot, floatResults: floatResults)
                return block.run(row, count: count, gains: gains)
            }
            if !tonesDone { for t in plan.tones { t.apply(buffer, at: location, variant: .simd4) } }
            for step in floatSteps {
                switch step {
                case .matrix(let index): MatrixSchedule.applySIMD4(floatMatrices.baseAddress.unsafelyUnwrapped + index, to: buffer)
                case .positional(let index):
                    (floatResults ? floatStepGains : stepGains)[index].scale(row, count: count, y: y, x0: x0, variant: .simd4)
                case .kernel(let index):
                    guard case .kernel(let k) = plan.steps[index] else { preconditionFailure("a kernel step's index names a matrix") }
                    k.apply(buffer, at: location, variant: .simd4)
                }
            }
            guard let gains = floatResults ? storedFloatGains : storedGains else { return }
            if holdingGains {
                scaleByHeldGains(row, count: count, y: y, x0: x0, slot: slot, floatResults: floatResults)
            } else {
                gains.pointee.scale(row, count: count, y: y, x0: x0, variant: .simd4)
            }
        }
    }

    // MARK: Bands

    /// Splits `region` into row pieces of at most `piece` pixels (`Self.piece`,
    /// `Self.blockPiece` for the one-pass blocks, `Self.floatPiece` for a `FloatImage` in
    /// place) and calls `body(y, x0, count, slot)` for
    /// each (whole-image coordinates), in contiguous bands on up to `threads` threads;
    /// `slot` names the band's scratch.
    ///
    /// With `pairingRows`, when the fused gains of the region's first and last rows are
    /// the same (`rowWithSameGains`, a vignette centred in the region), the rows go in
    /// pairs of groups from the outside in: the first `groupRows` rows, the last
    /// `groupRows`, the next group from the top, from the bottom…, each group top to
    /// bottom, so that `pieceGains` computes the gains of a row and its mirror once.
    /// Whole groups keep every stream of memory running forwards for `groupRows` rows
    /// (row by row, alternating top and bottom rows ran 15 % slower than top to bottom).
    func forEachPiece(_ region: ImageRegion, piece: Int = PreparedEditPlan.piece, pairingRows: Bool = false,
                      _ body: (Int, Int, Int, ScratchSlot) -> Void) {
        let perRow = (region.width + piece - 1) / piece
        let (units, overflow) = region.height.multipliedReportingOverflow(by: perRow)
        precondition(!overflow)  // height × ⌈width / piece⌉ ≤ width × height
        // About 64 K pixels per thread at the least: below that a thread costs more
        // than it saves.
        let useful = max(1, region.width * region.height / minimumBandPixels)
        let bands = min(threads, units, useful)
        // A run that finds the plan's scratch in use (another run at once) takes scratch
        // of its own, no larger than the plan's; where even that cannot be allocated it
        // waits for the plan's.
        var owned = scratchFree.wait(timeout: .now()) == .success
        let own = owned ? nil : Scratch(slots: bands, piece: Self.piece, rowWidth: width)
        if !owned && own == nil {
            scratchFree.wait()
            owned = true
        }
        let scratchForRun = own ?? scratch
        defer { if owned { scratchFree.signal() } }
        for band in 0..<bands { scratchForRun.slot(band).begin(span: region) }
        let h = region.height, g = scratchForRun.groupRows
        let paired = pairingRows && rowsPair(in: region)
        // Rows 0 ..< 2·g·pairs go group by group from both ends; the middle in order.
        let pairs = paired ? h / (2 * g) : 0
        @inline(__always) func rowAt(_ k: Int) -> Int {
            guard k < 2 * g * pairs else { return k - g * pairs }
            let (t, r) = k.quotientAndRemainder(dividingBy: 2 * g)
            return r < g ? t * g + r : h - (t + 1) * g + (r - g)
        }
        withoutActuallyEscaping(body) { body in
            let run: (Int) -> Void = { band in
                let start = units * band / bands, end = units * (band + 1) / bands
                for unit in start..<end {
                    let row = rowAt(unit / perRow), part = unit % perRow
                    let x0 = region.x + part * piece
                    body(region.y + row, x0, min(piece, region.x + region.width - x0), scratchForRun.slot(band))
                }
            }
            if bands == 1 {
                run(0)
            } else {
                let box = UncheckedBox(run)
                DispatchQueue.concurrentPerform(iterations: bands) { box.value($0) }
            }
        }
    }
}

/// One band's scratch: a row piece of Float pixels and its gains, and the gains of the
/// last `groupRows` rows of the run's span (for the one-pass blocks, and the `Float` row
/// path when it holds row gains) with the rows they belong to.
struct ScratchSlot {
    let pixels: UnsafeMutablePointer<SIMD4<Float>>
    /// `groupRows` rows of gains, `rowStride` apart.
    let gains: UnsafeMutablePointer<Float>
    let rowStride: Int, groupRows: Int
    /// The gains of one `Float` piece (up to `PreparedEditPlan.floatPiece` values).
    let pieceGains: UnsafeMutablePointer<Float>
    /// `[span x, span width]`, then the row held in each of the `groupRows` rows of
    /// `gains` (`Int.min`: none).
    let state: UnsafeMutablePointer<Int>

    /// For each row of `gains`, the key (`PreparedEditPlan.heldEntry`) of the row it
    /// holds, `Int.min` for none.
    var heldRows: UnsafeMutablePointer<Int> { state + 2 }
    /// The columns of the run.
    var span: (x: Int, width: Int) { (state[0], state[1]) }

    /// Starts a run over `region`: no gains held.
    func begin(span region: ImageRegion) {
        (state[0], state[1]) = (region.x, region.width)
        heldRows.update(repeating: Int.min, count: groupRows)
    }
}

/// Per-band scratch: one row piece of Float pixels, and the gains of a group of rows,
/// per slot.
final class Scratch: @unchecked Sendable {
    private let pixelStorage: UnsafeMutablePointer<SIMD4<Float>>
    private let gainStorage: UnsafeMutablePointer<Float>
    private let stateStorage: UnsafeMutablePointer<Int>
    private let piece: Int, rowStride: Int, gainsPerSlot: Int
    /// Rows of gains each slot holds (`groupRows(rowWidth:)`).
    let groupRows: Int

    /// Rows of gains a slot holds: up to 8, about 128 KiB of them (in L2).
    static func groupRows(rowWidth: Int) -> Int { min(8, max(1, 32_768 / max(1, rowWidth))) }

    /// `piece` `Float` pixels per slot, the gains of one piece of the in-place `Float`
    /// path (`PreparedEditPlan.floatPiece`), and gains for `groupRows` rows of `rowWidth`
    /// pixels or block pieces (`4 × piece`), whichever is longer.
    ///
    /// `nil` when the system cannot provide the memory or its size does not fit in
    /// `Int` (a size no machine holds on the threads asked for): the sizes come from the
    /// caller, so the allocation must fail cleanly instead of trapping.
    init?(slots: Int, piece: Int, rowWidth: Int) {
        guard let sizes = Scratch.sizes(slots: slots, piece: piece, rowWidth: rowWidth) else { return nil }
        self.piece = piece
        rowStride = sizes.rowStride
        groupRows = sizes.groupRows
        gainsPerSlot = sizes.gainsPerSlot
        guard let pixels = malloc(sizes.pixelBytes) else { return nil }
        guard let gains = malloc(sizes.gainBytes) else {
            free(pixels)
            return nil
        }
        guard let state = malloc(sizes.stateBytes) else {
            free(pixels)
            free(gains)
            return nil
        }
        pixelStorage = pixels.bindMemory(to: SIMD4<Float>.self, capacity: slots * piece)
        gainStorage = gains.bindMemory(to: Float.self, capacity: slots * gainsPerSlot)
        stateStorage = state.bindMemory(to: Int.self, capacity: slots * (2 + groupRows))
        stateStorage.initialize(repeating: 0, count: slots * (2 + groupRows))
    }

    /// The layout of a scratch for `slots` slots of rows `rowWidth` wide, its three
    /// allocations in bytes; `nil` where a count does not fit in `Int`.
    static func sizes(slots: Int, piece: Int, rowWidth: Int)
        -> (rowStride: Int, groupRows: Int, gainsPerSlot: Int, pixelBytes: Int, gainBytes: Int, stateBytes: Int)? {
        func product(_ factors: Int...) -> Int? {
            var result = 1
            for f in factors {
                let (p, overflow) = result.multipliedReportingOverflow(by: f)
                if overflow { return nil }
                result = p
            }
            return result
        }
        let rowStride = max(4 * piece, rowWidth), rows = groupRows(rowWidth: rowWidth)
        guard let held = product(rows, rowStride),
              case let (perSlot, false) = held.addingReportingOverflow(PreparedEditPlan.floatPiece),
              let pixelBytes = product(slots, piece, MemoryLayout<SIMD4<Float>>.stride),
              let gainBytes = product(slots, perSlot, MemoryLayout<Float>.stride),
              let stateBytes = product(slots, 2 + rows, MemoryLayout<Int>.stride) else { return nil }
        return (rowStride, rows, perSlot, pixelBytes, gainBytes, stateBytes)
    }

    /// The bytes `init` asks for, or `nil` where they do not fit in `Int`.
    static func bytes(slots: Int, piece: Int, rowWidth: Int) -> Int? {
        guard let s = sizes(slots: slots, piece: piece, rowWidth: rowWidth) else { return nil }
        let (a, o1) = s.pixelBytes.addingReportingOverflow(s.gainBytes)
        let (b, o2) = a.addingReportingOverflow(s.stateBytes)
        return o1 || o2 ? nil : b
    }

    func slot(_ i: Int) -> ScratchSlot {
        let gains = gainStorage + i * gainsPerSlot
        return ScratchSlot(pixels: pixelStorage + i * piece, gains: gains, rowStride: rowStride, groupRows: groupRows,
                           pieceGains: gains + (gainsPerSlot - PreparedEditPlan.floatPiece), state: stateStorage + (2 + groupRows) * i)
    }

    deinit {
        free(pixelStorage)
        free(gainStorage)
        free(stateStorage)
    }
}
