import Synchronization
// Running a prepared plan on app pixel buffers (SPEC §10): any channel order, alpha
// mode and sample type, padded rows, in place or from one format to another, a tile of
// the whole image or all of it.

extension PreparedEditPlan {
    /// Runs the plan in place on `buffer`, the tile of the prepared image whose top-left
    /// pixel is `origin` (the whole image when the buffer has the prepared size and the
    /// origin is (0, 0)). Positional stages use whole-image coordinates, so tiles rendered
    /// separately equal the whole render.
    ///
    /// Premultiplied buffers follow SPEC §10: colour is divided by alpha, the stages run
    /// on straight colour, and the result is clamped to [0, 1] and multiplied by alpha,
    /// rounded once; an A = 0 pixel comes out all zero. The padding sample of an X
    /// order keeps the destination's value.
    ///
    /// - Parameters:
    ///   - buffer: the pixels; its padding bytes are never touched.
    ///   - origin: the buffer's place in the prepared image.
    ///   - variant: `.simd4` (fused) or `.scalar` (the reference).
    /// - Throws: `EditPlanError.regionOutside` when the tile does not fit the image.
    /// - Complexity: O(pixels × stages); no pixel memory allocated, except once per plan
    ///   with tone stages: the tone tables of the source's sample type (256 entries a
    ///   channel for 8-bit samples, 65 536 for 16-bit ones), and for premultiplied 8-bit
    ///   pixels the 2D tone tables (256 KiB a channel) at the first translucent pixel,
    ///   unless a plan with equal tone stages built them (`SharedToneTables`).
    public func run(_ buffer: PixelBuffer, origin: (x: Int, y: Int) = (0, 0),
                    variant: KernelVariant = .simd4) throws(EditPlanError) {
        guard plan.orientation == .up else { throw .orientationNeedsDestination }
        try run(from: buffer, to: buffer, origin: origin, variant: variant)
    }

    /// Runs the plan from `source` to `destination`, which may have another format (e.g.
    /// premultiplied BGRA8 in, straight RGBA16 out) but the same size; see
    /// `run(_:origin:variant:)`. With an orientation, `source` is the whole image at the
    /// stored size (`storedSize`), `destination` the whole upright image (the prepared
    /// size), and `origin` is not used. A plan without stages between two buffers of one
    /// format copies the pixels as they are (in place, leaves them): premultiplied
    /// pixels too, an invalid one (colour above a zero alpha) included.
    ///
    /// - Throws: `EditPlanError.buffer(.sizeMismatch)`, `.buffer(.overlappingBuffers)`
    ///   when the two overlap other than exactly (same base, stride and pixel size), or
    ///   `.regionOutside`; with an orientation, `.outOfMemory` where the upright copy of
    ///   the source (kept for the next run) cannot be allocated.
    public func run(from source: PixelBuffer, to destination: PixelBuffer, origin: (x: Int, y: Int) = (0, 0),
                    variant: KernelVariant = .simd4) throws(EditPlanError) {
        if plan.orientation != .up {
            return try runOriented(from: source, to: destination, variant: variant)
        }
        guard source.width == destination.width, source.height == destination.height else {
            throw .buffer(.sizeMismatch(source: "\(source.width)×\(source.height)",
                                        destination: "\(destination.width)×\(destination.height)"))
        }
        let same = source.baseAddress == destination.baseAddress && source.bytesPerRow == destination.bytesPerRow
            && source.format.bytesPerPixel == destination.format.bytesPerPixel
        if !same, source.span.overlaps(destination.span) { throw .buffer(.overlappingBuffers) }
        let region = ImageRegion(x: origin.x, y: origin.y, width: source.width, height: source.height)
        try check(region)
        if plan.isEmpty && source.format == destination.format {
            if same { return }
            for y in 0..<source.height {
                destination.address(x: 0, y: y).copyMemory(from: source.address(x: 0, y: y),
                                                           byteCount: source.width * source.format.bytesPerPixel)
            }
            return
        }
        let block = fusedBlock(source.format, destination.format, inPlace: same, variant: variant)
        let premultipliedBlock = premultipliedBlock(source.format, destination.format, variant: variant, building: false)
        // Without the 2D tone tables yet, the block that has them, made at the first
        // translucent pixel: every translucent pixel takes it, so that its result never
        // depends on the run, the tile or the plan's earlier runs (the row path rounds
        // differently near ties), and an opaque image never pays for the tables.
        let lateBlock = premultipliedBlock == nil && !plan.tones.isEmpty
            && premultipliedBlockApplies(source.format, destination.format, variant: variant)
            ? LateBlock { self.premultipliedBlock(source.format, destination.format, variant: variant, building: true) }
            : nil
        let decoder = RowCodec(format: source.format), encoder = RowCodec(format: destination.format)
        let premultiplied = source.format.alphaMode == .premultiplied
        // SPEC §10: a transparent premultiplied pixel comes out all zero in any format.
        // A premultiplied destination's encoder multiplies its colour by alpha, 0; for
        // the others the row path clears it (the stages may have given black colour).
        let clearsTransparent = premultiplied && destination.format.alphaMode != .premultiplied
        let alphaByte = source.format.sampleType == .uint8 && source.format.channelOrder.fourthIndex != nil
            ? source.format.channelOrder.alphaIndex : nil
        // The blocks take longer pieces than the row path's `Float` scratch holds; where
        // a piece may still take the row path (a translucent premultiplied run without
        // the premultiplied block), it does so a scratch's length at a time. With a late
        // block that is only where the block cannot be made.
        let blocksOnly = premultipliedBlock != nil || (block != nil && !premultiplied) || lateBlock != nil
        // The row path takes an integer source's leading tones from the tables, as the
        // blocks and `.scalar` do (`toneSamples`).
        let sourceTables = source.format.sampleType.maxval.flatMap { toneTables(maxval: $0, eightBit: $0 == 255) }
        let holding = holdsRowGains(variant, in: region)
        // The blocks share their gains between mirror rows; the row path only where it
        // holds them.
        forEachPiece(region, piece: blocksOnly ? Self.blockPiece : Self.piece,
                     pairingRows: holding || block != nil || premultipliedBlock != nil) { y, x0, count, slot in
            let s = source.address(x: x0 - origin.x, y: y - origin.y)
            let d = destination.address(x: x0 - origin.x, y: y - origin.y)
            let pixelBytes = source.format.bytesPerPixel, resultBytes = destination.format.bytesPerPixel
            // A premultiplied block (8-bit in, 8- or 16-bit out) on pixels `start…` of the piece.
            func runPremultiplied(_ block: FusedBlock, from start: Int, count n: Int, _ gains: UnsafePointer<Float>?) {
                let source = UnsafePointer((s + start * pixelBytes).assumingMemoryBound(to: UInt8.self))
                let g = gains.map { $0 + start }
                if block.widens {
                    block.runWidening(source, (d + start * resultBytes).assumingMemoryBound(to: UInt16.self), count: n, gains: g)
                } else {
                    block.run8(source, (d + start * resultBytes).assumingMemoryBound(to: UInt8.self), count: n, gains: g)
                }
            }
            if let premultipliedBlock {
                let gains = self.pieceGains(y: y, x0: x0, count: count, slot: slot)
                return runPremultiplied(premultipliedBlock, from: 0, count: count, gains)
            }
            func general(_ start: Int, _ n: Int) {
                var start = start, n = n
                while n > Self.piece {
                    general(start, Self.piece)
                    (start, n) = (start + Self.piece, n - Self.piece)
                }
                decoder.decode(UnsafeRawPointer(s + start * pixelBytes), count: n, into: slot.pixels)
                if let sourceTables {
                    self.toneSamples(UnsafeRawPointer(s + start * pixelBytes), source.format, tables: sourceTables,
                                     into: slot.pixels, count: n)
                }
                self.runFloat(slot.pixels, count: n, y: y, x0: x0 + start, slot: slot, variant: variant,
                              tonesDone: sourceTables != nil, holdingGains: holding)
                if clearsTransparent {
                    Self.clearTransparent(slot.pixels, count: n, source: s + start * pixelBytes, alphaByte: alphaByte)
                }
                encoder.encode(slot.pixels, count: n, into: d + start * resultBytes)
            }
            guard let block else { return general(0, count) }
            func fused(_ start: Int, _ n: Int, _ gains: UnsafePointer<Float>?) {
                let g = gains.map { $0 + start }
                if block.block.widens {
                    block.block.runWidening(UnsafePointer((s + start * pixelBytes).assumingMemoryBound(to: UInt8.self)),
                                            (d + start * resultBytes).assumingMemoryBound(to: UInt16.self), count: n, gains: g)
                } else if block.sampleBytes == 1 {
                    block.block.run8(UnsafePointer((s + start * pixelBytes).assumingMemoryBound(to: UInt8.self)),
                                     (d + start * resultBytes).assumingMemoryBound(to: UInt8.self), count: n, gains: g)
                } else {
                    block.block.run16(UnsafePointer((s + start * pixelBytes).assumingMemoryBound(to: UInt16.self)),
                                      (d + start * resultBytes).assumingMemoryBound(to: UInt16.self), count: n, gains: g)
                }
            }
            let gains = self.pieceGains(y: y, x0: x0, count: count, slot: slot)
            guard premultiplied else { return fused(0, count, gains) }
            // Once a run has made the premultiplied block with its 2D tables, it takes
            // whole pieces: it gives an opaque pixel the straight block's bits.
            func late(_ block: FusedBlock, from start: Int) {
                runPremultiplied(block, from: start, count: count - start, gains)
            }
            if let made = lateBlock?.madeBlock { return late(made, from: 0) }
            // An opaque premultiplied pixel is its own straight colour (c / 1): the opaque
            // groups of a block's width before the first translucent one take the straight
            // block, the rest of the piece the premultiplied block, made now. Where the
            // plan has none (another shape), runs of opaque groups take the straight
            // block and the translucent runs the row path; both read the row's gains
            // from the slot.
            let group = blockPixels, groups = (count + group - 1) / group, fourth = block.block.positions.fourth
            @inline(__always) func opaque(_ k: Int) -> Bool {
                Self.isOpaque(s + group * k * pixelBytes, count: min(group, count - group * k), block.sampleBytes, fourth: fourth)
            }
            var first = Self.opaqueGroups(s, count: count, block.sampleBytes, fourth: fourth)
            while first < groups && opaque(first) { first += 1 }
            if first > 0 { fused(0, min(group * first, count), gains) }
            guard first < groups else { return }
            if let made = lateBlock?.block { return late(made, from: group * first) }
            func runs(opaque wanted: Bool) {
                var k = first
                while k < groups {
                    guard opaque(k) == wanted else { k += 1; continue }
                    var e = k + 1
                    while e < groups && opaque(e) == wanted { e += 1 }
                    let start = group * k, n = min(group * e, count) - start
                    if wanted { fused(start, n, gains) } else { general(start, n) }
                    k = e
                }
            }
            runs(opaque: true)
            runs(opaque: false)
        }
    }

    /// Orients `source` (the stored size) into an upright copy in its own format, then
    /// runs the stages from the copy into `destination` (the prepared size). The copy's
    /// memory is the plan's, kept from run to run; the whole image, no tiles.
    private func runOriented(from source: PixelBuffer, to destination: PixelBuffer,
                             variant: KernelVariant) throws(EditPlanError) {
        let stored = storedSize
        guard source.width == stored.width, source.height == stored.height,
              destination.width == width, destination.height == height else {
            // Name the sizes the plan expects: with a quarter turn the two differ.
            throw .buffer(.sizeMismatch(
                source: "\(source.width)×\(source.height) (the plan's orientation reads the stored \(stored.width)×\(stored.height))",
                destination: "\(destination.width)×\(destination.height) (the plan writes the upright \(width)×\(height))"))
        }
        if source.span.overlaps(destination.span) { throw .buffer(.overlappingBuffers) }
        let pixelBytes = source.format.bytesPerPixel, rowBytes = width * pixelBytes
        try withUprightStorage(bytes: rowBytes * height) { (storage) throws(EditPlanError) in
            do throws(OrientationError) {
                try plan.orientation.orient(source: UnsafeRawPointer(source.baseAddress), width: source.width, height: source.height,
                                            bytesPerPixel: pixelBytes, sourceBytesPerRow: source.bytesPerRow,
                                            into: storage, destinationBytesPerRow: rowBytes)
            } catch {
                throw .invalidSize(width: source.width, height: source.height)
            }
            let uprightBuffer: PixelBuffer
            do throws(PixelBufferError) {
                uprightBuffer = try PixelBuffer(baseAddress: storage, width: width, height: height, bytesPerRow: rowBytes,
                                                format: source.format)
            } catch {
                throw .buffer(error)
            }
            try upright!.run(from: uprightBuffer, to: destination, variant: variant)
        }
    }

    /// The one-pass block for a pair of buffer formats: the same four-channel integer
    /// format in and out, straight alpha or padding (premultiplied pieces qualify when
    /// every pixel is opaque), from 8-bit pixels into 16-bit ones where
    /// `wideningPositions` gives the destination's positions, or into other 8-bit ones
    /// where `conversionPositions` does (straight pixels into premultiplied ones
    /// premultiplied; premultiplied pieces as straight ones where every pixel is
    /// opaque), and fused stages of the block's shape. `sampleBytes` is the source's.
    func fusedBlock(_ source: PixelFormat, _ destination: PixelFormat, inPlace: Bool,
                    variant: KernelVariant) -> (block: FusedRows, sampleBytes: Int)? {
        if variant == .simd4, let resultPositions = Self.wideningPositions(source, destination) {
            // A premultiplied destination (16-bit integers or `Float16`s) takes
            // premultiplied results from every block, so that its opaque pixels are the
            // premultiplied block's, clamped.
            return fusedRows(maxval: 255, eightBit: true, tables: toneTables(maxval: 255, eightBit: true),
                             positions: Self.positions(source),
                             premultipliesResults: destination.alphaMode == .premultiplied,
                             resultPositions: resultPositions, widening: true,
                             halfPrecision: destination.sampleType == .float16).map { ($0, 1) }
        }
        if variant == .simd4, let resultPositions = Self.conversionPositions(source, destination) {
            let premultiplying = source.alphaMode == .straight && destination.alphaMode == .premultiplied
            return fusedRows(maxval: 255, eightBit: true, tables: toneTables(maxval: 255, eightBit: true),
                             positions: Self.positions(source), premultipliesResults: premultiplying,
                             resultPositions: resultPositions).map { ($0, 1) }
        }
        guard variant == .simd4, source == destination, let maxval = source.sampleType.maxval,
              source.channelOrder.fourthIndex != nil else { return nil }
        // The block stores whole pixels, padding included: only in place does that keep
        // the destination's padding as it is.
        if !source.channelOrder.hasAlpha && !inPlace { return nil }
        let eightBit = source.sampleType == .uint8
        let tables = toneTables(maxval: maxval, eightBit: eightBit)
        return fusedRows(maxval: maxval, eightBit: eightBit, tables: tables,
                         positions: Self.positions(source)).map { ($0, eightBit ? 1 : 2) }
    }

    /// The one-pass block on premultiplied 8-bit pixels (SPEC §10 inside the block), for
    /// the same four-channel format in and out, into a 16-bit one (a widening block,
    /// `wideningPositions`: integers or `Float16`s, straight or premultiplied) or into
    /// another 8-bit one
    /// (`conversionPositions`: straight or premultiplied, red and blue where the source
    /// has them or exchanged), and fused stages of the matrix block's shape; with tone
    /// stages, only with the plan's 2D premultiplied tables, built now when `building`
    /// (`premultipliedToneTables(building:)`). Without them, a run takes the straight
    /// block, which gives an opaque pixel the same bits, up to the first translucent
    /// pixel, then makes this block (`LateBlock`) for the rest; for other shapes, opaque
    /// runs take the straight block and translucent ones the row path.
    func premultipliedBlock(_ source: PixelFormat, _ destination: PixelFormat,
                                    variant: KernelVariant, building: Bool) -> FusedBlock? {
        #if _endian(little)
        guard premultipliedBlockApplies(source, destination, variant: variant) else { return nil }
        let tables = premultipliedToneTables(building: building)
        if !plan.tones.isEmpty && tables == nil { return nil }
        let widening = Self.wideningPositions(source, destination)
        let resultPositions = widening ?? Self.conversionPositions(source, destination)
        guard case .matrix(let block)? = fusedRows(maxval: 255, eightBit: true, tables: tables, positions: Self.positions(source),
                                                   premultiplied: true,
                                                   premultipliesResults: destination.alphaMode == .premultiplied,
                                                   resultPositions: resultPositions, widening: widening != nil,
                                                   halfPrecision: destination.sampleType == .float16)
        else { return nil }
        return block
        #else
        return nil
        #endif
    }

    /// Whether the premultiplied block can run these formats and this plan, before any
    /// table is built: `.simd4`, a premultiplied four-channel 8-bit format in and the
    /// same out, a 16-bit one (`wideningPositions`) or another 8-bit one
    /// (`conversionPositions`), and fused stages of its shape (tones, then at most one
    /// matrix; a LUT or a per-pixel stage has none). A run makes a `LateBlock` only
    /// then; the row path builds the 2D tables itself at its first translucent pixel
    /// (`toneSamples`).
    func premultipliedBlockApplies(_ source: PixelFormat, _ destination: PixelFormat, variant: KernelVariant) -> Bool {
        guard variant == .simd4, source == destination || Self.wideningPositions(source, destination) != nil
                || Self.conversionPositions(source, destination) != nil,
              source.alphaMode == .premultiplied,
              source.sampleType == .uint8, source.channelOrder.fourthIndex != nil else { return false }
        switch plan.steps.count {
        case 0: return true
        case 1: if case .matrix = plan.steps[0] { return true } else { return false }
        default: return false
        }
    }

    /// Replaces the colour of `count` decoded pixels of an integer `format` with the
    /// leading tones of their source samples, as the blocks and `.scalar` take them
    /// (`ToneTables`): a straight sample `v` (or an opaque pixel's) is entry `v` of
    /// `tables`; a translucent premultiplied pixel's colour `c` under alpha `A` is, for
    /// 8-bit samples, entry `A·256 + c` of the 2D tables (`premultipliedToneTables`,
    /// built at the first such pixel), and for 16-bit ones the tones of `c/A` in
    /// `Double` (`ToneStage.evaluate`), rounded once; A = 0 takes the tones of 0. Alpha
    /// and padding lanes are kept.
    ///
    /// - Complexity: O(count) lookups, and for 16-bit premultiplied pixels one
    ///   evaluation of the tones per colour sample of a translucent pixel.
    func toneSamples(_ source: UnsafeRawPointer, _ format: PixelFormat, tables: ToneTables,
                     into pixels: UnsafeMutablePointer<SIMD4<Float>>, count: Int) {
        let order = format.channelOrder, channels = order.channelCount
        let (r, g, b) = order.colorIndices
        let entries = (tables.red, tables.green, tables.blue)
        let alpha = format.alphaMode == .premultiplied ? order.alphaIndex : nil
        let tones = plan.tones
        func run<Sample: FixedWidthInteger & UnsignedInteger>(_: Sample.Type) {
            @inline(__always) func sample(_ i: Int, _ k: Int) -> Int {
                Int(source.loadUnaligned(fromByteOffset: (channels &* i &+ k) &* MemoryLayout<Sample>.stride, as: Sample.self))
            }
            // Each pixel is stored whole: lanes written one by one, then loaded as vectors
            // by the stages, would stall on store forwarding.
            @inline(__always) func store(_ i: Int, _ x: Float, _ y: Float, _ z: Float) {
                pixels[i] = SIMD4(x, y, z, pixels[i].w)
            }
            guard let alpha else {
                for i in 0..<count {
                    store(i, entries.0[sample(i, r)], entries.1[sample(i, g)], entries.2[sample(i, b)])
                }
                return
            }
            let opaque = Int(Sample.max)
            var plane: ToneTables?
            for i in 0..<count {
                let a = sample(i, alpha)
                let (cr, cg, cb) = (sample(i, r), sample(i, g), sample(i, b))
                if a == opaque {
                    store(i, entries.0[cr], entries.1[cg], entries.2[cb])
                } else if Sample.self == UInt8.self, let t = plane ?? premultipliedToneTables(building: true) {
                    plane = t
                    let row = a << 8
                    store(i, t.red[row | cr], t.green[row | cg], t.blue[row | cb])
                } else {
                    let d = Double(a)
                    var (x, y, z) = a == 0 ? (0, 0, 0) : (Double(cr) / d, Double(cg) / d, Double(cb) / d)
                    for t in tones { (x, y, z) = (t.evaluate(x, channel: 0), t.evaluate(y, channel: 1), t.evaluate(z, channel: 2)) }
                    store(i, Float(x), Float(y), Float(z))
                }
            }
        }
        if format.sampleType == .uint8 { run(UInt8.self) } else { run(UInt16.self) }
    }

    /// Sets every one of `count` decoded pixels whose alpha is 0 to all zero, testing
    /// 32 pixels at a time, then each 8 of a group that has one: a group without a
    /// transparent pixel is left as it is (a test and a branch per pixel cost the row
    /// path several times as much). Where the source has four 8-bit samples a pixel
    /// (`alphaByte` the index of alpha), a group is tested on its source bytes:
    /// `(a − 1) & ~a` has its top bit set only where the alpha byte `a` is 0. Elsewhere
    /// on the decoded alphas, their sign bits cleared, which are 0 only where alpha is
    /// ±0.
    @inline(__always)
    private static func clearTransparent(_ p: UnsafeMutablePointer<SIMD4<Float>>, count: Int,
                                         source: UnsafeRawPointer, alphaByte: Int?) {
        let colour = SIMD16<UInt32>(~0, ~0, ~0, 0, ~0, ~0, ~0, 0, ~0, ~0, ~0, 0, ~0, ~0, ~0, 0)
        // Lanes with the top bit set where a pixel of the 8 from `k` is transparent.
        @inline(__always) func transparent(_ k: Int) -> SIMD8<UInt32> {
            if let alphaByte {
                let a = (source.loadUnaligned(fromByteOffset: 4 &* k, as: SIMD8<UInt32>.self) &>> UInt32(8 &* alphaByte)) & 0xFF
                return (a &- 1) & ~a
            }
            @inline(__always) func lanes(_ k: Int) -> SIMD16<UInt32> {
                let x = (UnsafeRawPointer(p + k).loadUnaligned(as: SIMD16<UInt32>.self) | colour) & 0x7FFF_FFFF
                return (x &- 1) & ~x
            }
            let v = lanes(k) | lanes(k &+ 4)
            return v.lowHalf | v.highHalf
        }
        @inline(__always) func any(_ v: SIMD8<UInt32>) -> Bool {
            let q = unsafeBitCast(v, to: SIMD4<UInt64>.self)
            return (q[0] | q[1] | q[2] | q[3]) & 0x8000_0000_8000_0000 != 0
        }
        @inline(__always) func clear(_ range: Range<Int>) {
            for k in range where p[k].w == 0 { p[k] = .zero }
        }
        var i = 0
        while i &+ 32 <= count {
            if any(transparent(i) | transparent(i &+ 8) | transparent(i &+ 16) | transparent(i &+ 24)) {
                for k in stride(from: i, to: i &+ 32, by: 8) where any(transparent(k)) { clear(k ..< k &+ 8) }
            }
            i &+= 32
        }
        while i &+ 8 <= count {
            if any(transparent(i)) { clear(i ..< i &+ 8) }
            i &+= 8
        }
        clear(i ..< count)
    }

    /// Where a widening block (`FusedBlock.runWidening`) writes R, G, B and alpha, if it
    /// runs this pair of formats: four 8-bit channels with alpha in, straight or
    /// premultiplied, and four 16-bit channels with alpha out, in any order: integers
    /// or `Float16`s, straight or premultiplied.
    static func wideningPositions(_ source: PixelFormat, _ destination: PixelFormat) -> ChannelPositions? {
        guard source.sampleType == .uint8, destination.sampleType == .uint16 || destination.sampleType == .float16,
              source.alphaMode != .none, source.channelOrder.fourthIndex != nil,
              destination.alphaMode != .none, let fourth = destination.channelOrder.fourthIndex else { return nil }
        let (r, g, b) = destination.channelOrder.colorIndices
        return ChannelPositions(red: r, green: g, blue: b, fourth: fourth)
    }

    /// Where an 8-bit block into another 8-bit format writes R, G, B and alpha, if it
    /// runs this pair: four 8-bit channels with alpha in and out, straight or
    /// premultiplied, green and alpha in the same places and red and blue in the same
    /// or exchanged (RGBA and BGRA, ARGB and ABGR); `nil` for one format in and out.
    static func conversionPositions(_ source: PixelFormat, _ destination: PixelFormat) -> ChannelPositions? {
        guard source != destination, source.sampleType == .uint8, destination.sampleType == .uint8,
              source.alphaMode != .none, destination.alphaMode != .none,
              source.channelOrder.channelCount == 4, destination.channelOrder.channelCount == 4,
              let fourth = source.channelOrder.alphaIndex, destination.channelOrder.alphaIndex == fourth,
              source.channelOrder.colorIndices.green == destination.channelOrder.colorIndices.green else { return nil }
        let (r, g, b) = destination.channelOrder.colorIndices
        return ChannelPositions(red: r, green: g, blue: b, fourth: fourth)
    }

    /// The channel positions of a four-channel format (`fourthIndex` not `nil`), as the
    /// blocks take them.
    private static func positions(_ format: PixelFormat) -> ChannelPositions {
        let (r, g, b) = format.channelOrder.colorIndices
        return ChannelPositions(red: r, green: g, blue: b, fourth: format.channelOrder.fourthIndex!)
    }

    /// How many whole groups of `blockPixels` 8-bit pixels from `p` (of `count`) are
    /// opaque, counted four groups at a time (their bytes ANDed, one test each): up to
    /// the first four with a translucent pixel, so a caller tests the rest group by
    /// group. 0 for 16-bit pixels. An opaque piece of a premultiplied image with tone
    /// stages is scanned so before the straight block runs it: group by group, the scan
    /// took 13 % of the run.
    @inline(__always)
    private static func opaqueGroups(_ p: UnsafeMutableRawPointer, count: Int, _ sampleBytes: Int, fourth: Int) -> Int {
        guard sampleBytes == 1 else { return 0 }
        let mask = BlockWords(repeating: 0xFF << UInt32(8 * fourth))
        var k = 0
        while (k &+ 4) &* blockPixels <= count {
            let q = UnsafeRawPointer(p) + k &* blockBytes8
            let v = q.loadUnaligned(as: BlockWords.self) & q.loadUnaligned(fromByteOffset: blockBytes8, as: BlockWords.self)
                & q.loadUnaligned(fromByteOffset: 2 &* blockBytes8, as: BlockWords.self)
                & q.loadUnaligned(fromByteOffset: 3 &* blockBytes8, as: BlockWords.self)
            guard FusedBlock.isOpaque(v, mask) else { break }
            k &+= 4
        }
        return k
    }

    /// Whether every one of `count` (≤ `blockPixels`) pixels has the largest alpha (255
    /// or 65535): for a whole group of 8-bit pixels, the fused block's own test on one
    /// vector load (`FusedBlock.isOpaque`).
    @inline(__always)
    private static func isOpaque(_ p: UnsafeMutableRawPointer, count: Int, _ sampleBytes: Int, fourth: Int) -> Bool {
        if sampleBytes == 1 {
            if count == blockPixels {
                return FusedBlock.isOpaque(UnsafeRawPointer(p).loadUnaligned(as: BlockWords.self),
                                           BlockWords(repeating: 0xFF << UInt32(8 * fourth)))
            }
            let bytes = UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self)
            var all: UInt8 = 0xFF
            for i in 0..<count { all &= bytes[4 &* i &+ fourth] }
            return all == 0xFF
        }
        let words = UnsafeRawPointer(p).assumingMemoryBound(to: UInt16.self)
        var all: UInt16 = 0xFFFF
        for i in 0..<count { all &= words[4 &* i &+ fourth] }
        return all == 0xFFFF
    }
}

/// A block made at most once, when a run first needs it, by whichever of the run's
/// threads asks first (the others wait for it): the premultiplied block whose 2D tone
/// tables a run builds at its first translucent pixel. `nil` where the plan has no such
/// block.
final class LateBlock: Sendable {
    private let state = Mutex<(made: Bool, block: FusedBlock?)>((false, nil))
    private let make: @Sendable () -> FusedBlock?

    init(_ make: @escaping @Sendable () -> FusedBlock?) { self.make = make }

    /// The block, made now if no one has asked before.
    var block: FusedBlock? {
        state.withLock { state in
            if !state.made { state = (true, make()) }
            return state.block
        }
    }

    /// The block if it has been made, without making it.
    var madeBlock: FusedBlock? {
        state.withLock { $0.block }
    }
}
