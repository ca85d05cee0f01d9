// Decoding a raster into samples, any number at a time.
//
// The decoder keeps only what a slice boundary needs (samples left, the column within a
// P4 row), so a caller may ask for a whole image, a band of rows, a slice of one row or
// one sample, and gets the same samples in every case. It reads through an InputWindow,
// so the same code serves the whole-image reader (the window is the input) and the stream
// reader (the window is a refilled chunk buffer).
//
// Sample layout produced: row-major, `depth` interleaved samples per pixel, each in
// 0...maxval; P1/P4 pixels as 1 = white, 0 = black (the files store 1 = black).

/// The position within one image's raster, and the loops that decode it.
struct RasterDecoder {
    let format: NetpbmFormat
    let width: Int
    let maxval: Int
    /// `width × height × depth`.
    let sampleCount: Int
    /// The absolute offset of the raster's first byte.
    let rasterStart: Int
    /// Raw formats: the raster's exact length. Plain formats: the least it can be (one
    /// byte per P1 pixel; a digit per P2/P3 sample and a separator between samples).
    let rasterBytes: Int
    /// Samples not yet decoded.
    private(set) var remaining: Int
    /// P4: the pixel within the current row; the byte holding it is the window's next byte
    /// until the row or the byte is finished.
    private var column = 0

    init(header: NetpbmHeader, rasterStart: Int) {
        format = header.format
        width = header.width
        maxval = header.maxval
        sampleCount = header.sampleCount
        self.rasterStart = rasterStart
        remaining = sampleCount
        // No overflow: the header guarantees width × height × depth × 2 fits in Int, and
        // every product here is at most that.
        switch header.format {
        case .rawPGM, .rawPPM, .pam:
            rasterBytes = sampleCount &* header.bytesPerSample
        case .rawPBM:
            rasterBytes = (header.width / 8 &+ (header.width % 8 == 0 ? 0 : 1)) &* header.height
        case .plainPBM:
            rasterBytes = sampleCount
        case .plainPGM, .plainPPM:
            rasterBytes = 2 &* sampleCount &- 1
        }
    }

    /// The error for an input that ends inside a raw raster.
    func truncated(_ window: InputWindow) -> NetpbmError {
        .truncatedRaster(
            expectedBytes: rasterBytes, availableBytes: window.inputEnd - rasterStart, offset: rasterStart)
    }

    /// The error for an input that ends inside a plain raster after `found` samples: the
    /// lower bound on its length, if the input is shorter than that (the error the
    /// whole-image reader reports before decoding), else the count of missing samples.
    private func plainEnd(_ window: InputWindow, found: Int) -> NetpbmError {
        let available = window.inputEnd - rasterStart
        if rasterBytes > available {
            return .truncatedRaster(expectedBytes: rasterBytes, availableBytes: available, offset: rasterStart)
        }
        return .missingSamples(expected: sampleCount, found: found, offset: window.inputEnd)
    }

    // MARK: - Entry points

    /// Decodes the next `count` samples into `out`.
    ///
    /// - Precondition (checked by callers): `count ≤ remaining`.
    /// - Throws: raster errors (truncation, a sample above maxval, a bad plain byte) and
    ///   the window's I/O errors. After a throw the decoder's state is unspecified.
    mutating func decode(_ window: inout InputWindow, into out: UnsafeMutablePointer<UInt16>, count: Int) throws(NetpbmError) {
        switch format {
        case .rawPGM, .rawPPM, .pam:
            if maxval < 256 {
                try decodeRaw8(&window, into: out, count: count)
            } else {
                try decodeRaw16(&window, into: out, count: count)
            }
        case .rawPBM:
            try decodeRawBitmap(&window, into: out, count: count)
        case .plainPBM:
            try decodePlainBitmap(&window, into: out, count: count)
        case .plainPGM, .plainPPM:
            try decodePlainSamples(&window, into: out, count: count)
        }
        remaining -= count
    }

    /// Decodes the next `count` samples into `out`.
    ///
    /// - Precondition (checked by callers): `count ≤ remaining` and `maxval ≤ 255`.
    mutating func decode(_ window: inout InputWindow, into out: UnsafeMutablePointer<UInt8>, count: Int) throws(NetpbmError) {
        switch format {
        case .rawPGM, .rawPPM, .pam:
            try decodeRaw8(&window, into: out, count: count)
        case .rawPBM:
            try decodeRawBitmap(&window, into: out, count: count)
        case .plainPBM:
            try decodePlainBitmap(&window, into: out, count: count)
        case .plainPGM, .plainPPM:
            try decodePlainSamples(&window, into: out, count: count)
        }
        remaining -= count
    }

    // MARK: - Raw samples

    // Each loop runs over the part of the request the window holds, tracking the largest
    // sample instead of branching per sample (so it vectorises), and only when that exceeds
    // maxval goes back for the first offending sample and its offset.

    /// P5, P6, P7 with maxval < 256, one byte per sample.
    private func decodeRaw8(_ window: inout InputWindow, into out: UnsafeMutablePointer<UInt16>, count: Int) throws(NetpbmError) {
        let limit = UInt8(truncatingIfNeeded: maxval)
        var done = 0
        while done < count {
            if window.available == 0 {
                guard try window.fill() else { throw truncated(window) }
            }
            let n = min(window.available, count - done)
            let source = window.base + window.position
            let target = out + done
            var high: UInt8 = 0
            for i in 0..<n {
                let value = source[i]
                target[i] = UInt16(value)
                high = max(high, value)
            }
            if high > limit { try Self.rejectAboveMaxval8(source, count: n, limit: limit, at: window.offset) }
            window.position += n
            done += n
        }
    }

    /// P5, P6, P7 with maxval < 256, into 8-bit samples (a copy and a check).
    private func decodeRaw8(_ window: inout InputWindow, into out: UnsafeMutablePointer<UInt8>, count: Int) throws(NetpbmError) {
        let limit = UInt8(truncatingIfNeeded: maxval)
        var done = 0
        while done < count {
            if window.available == 0 {
                guard try window.fill() else { throw truncated(window) }
            }
            let n = min(window.available, count - done)
            let source = window.base + window.position
            let target = out + done
            target.update(from: source, count: n)
            if limit != UInt8.max {
                var high: UInt8 = 0
                for i in 0..<n { high = max(high, source[i]) }
                if high > limit { try Self.rejectAboveMaxval8(source, count: n, limit: limit, at: window.offset) }
            }
            window.position += n
            done += n
        }
    }

    /// Throws for the first of `count` bytes above `limit`; `at` is the first byte's offset.
    @inline(never)
    private static func rejectAboveMaxval8(
        _ source: UnsafePointer<UInt8>, count: Int, limit: UInt8, at offset: Int
    ) throws(NetpbmError) {
        for i in 0..<count where source[i] > limit {
            throw .sampleAboveMaxval(value: Int(source[i]), maxval: Int(limit), offset: offset + i)
        }
    }

    /// P5, P6, P7 with maxval ≥ 256: two bytes per sample, big-endian. A sample may straddle
    /// two reads; the window is topped up so both bytes are contiguous.
    private func decodeRaw16(_ window: inout InputWindow, into out: UnsafeMutablePointer<UInt16>, count: Int) throws(NetpbmError) {
        let limit = UInt16(truncatingIfNeeded: maxval)
        var done = 0
        while done < count {
            if window.available < 2 {
                try window.ensure(2)
                guard window.available >= 2 else { throw truncated(window) }
            }
            let n = min(window.available / 2, count - done)
            let source = window.base + window.position
            let target = out + done
            var high: UInt16 = 0
            for i in 0..<n {
                let value = UInt16(source[2 &* i]) &<< 8 | UInt16(source[2 &* i &+ 1])
                target[i] = value
                high = max(high, value)
            }
            if high > limit {
                for i in 0..<n where target[i] > limit {
                    throw .sampleAboveMaxval(value: Int(target[i]), maxval: maxval, offset: window.offset + 2 * i)
                }
            }
            window.position += 2 &* n
            done += n
        }
    }

    // MARK: - P4

    /// Rows of ⌈width / 8⌉ bytes, most significant bit first, 1 = black; pad bits ignored.
    /// A byte stays unread in the window until its last pixel is decoded, so a request may
    /// end in the middle of a byte.
    private mutating func decodeRawBitmap<Sample: FixedWidthInteger & UnsignedInteger>(
        _ window: inout InputWindow, into out: UnsafeMutablePointer<Sample>, count: Int
    ) throws(NetpbmError) {
        var done = 0
        while done < count {
            // Whole bytes inside the current row, eight pixels each.
            if column & 7 == 0 {
                let bytes = min((width - column) >> 3, (count - done) >> 3, window.available)
                if bytes > 0 {
                    let source = window.base + window.position
                    let target = out + done
                    for b in 0..<bytes {
                        let inverted = ~source[b]  // 1 = white after inversion
                        let o = target + 8 &* b
                        for k in 0..<8 {
                            o[k] = Sample(truncatingIfNeeded: (inverted &>> UInt8(7 &- k)) & 1)
                        }
                    }
                    window.position += bytes
                    column += 8 &* bytes
                    done += 8 &* bytes
                    if column == width { column = 0 }
                    continue
                }
            }
            // Part of a byte: the row's last byte, or the request's end, or a refill.
            guard let byte = try window.peek() else { throw truncated(window) }
            let inverted = ~byte
            let bit = column & 7
            let take = min(8 - bit, width - column, count - done)
            for k in 0..<take {
                out[done + k] = Sample(truncatingIfNeeded: (inverted &>> UInt8(7 &- (bit &+ k))) & 1)
            }
            column += take
            done += take
            if column == width {
                column = 0
                window.position += 1
            } else if column & 7 == 0 {
                window.position += 1
            }
        }
    }

    // MARK: - Plain rasters

    /// P1: one `0` (white) or `1` (black) per pixel; whitespace and comments may appear
    /// anywhere between pixels but are not required.
    private func decodePlainBitmap<Sample: FixedWidthInteger & UnsignedInteger>(
        _ window: inout InputWindow, into out: UnsafeMutablePointer<Sample>, count: Int
    ) throws(NetpbmError) {
        let decoded = sampleCount - remaining
        let base = window.base
        var i = 0
        while i < count {
            // Digits and whitespace in the window are handled in place; comments, window
            // ends and errors take the general path below.
            var p = window.position
            let end = p &+ window.available
            while i < count, p < end {
                let byte = base[p]
                if byte == 0x30 {  // '0' = white
                    out[i] = 1
                } else if byte == 0x31 {  // '1' = black
                    out[i] = 0
                } else if InputWindow.isWhitespace(byte) {
                    p &+= 1
                    continue
                } else {
                    break
                }
                p &+= 1
                i &+= 1
            }
            window.position = p
            guard i < count else { return }
            try window.skipSeparators()
            guard let byte = try window.peek() else { throw plainEnd(window, found: decoded + i) }
            switch byte {
            case 0x30: out[i] = 1
            case 0x31: out[i] = 0
            default: throw .unexpectedByte(found: byte, expected: .sample, offset: window.offset)
            }
            window.position += 1
            i += 1
        }
    }

    /// P2, P3: decimal samples separated by whitespace or comments.
    private func decodePlainSamples<Sample: FixedWidthInteger & UnsignedInteger>(
        _ window: inout InputWindow, into out: UnsafeMutablePointer<Sample>, count: Int
    ) throws(NetpbmError) {
        let decoded = sampleCount - remaining
        let base = window.base
        for i in 0..<count {
            // Usually the separator is plain whitespace and the whole token is in the
            // window: scan it in place. Comments, window ends and errors take the general
            // path below, which handles every case.
            var p = window.position
            let end = p &+ window.available
            while p < end, InputWindow.isWhitespace(base[p]) { p &+= 1 }
            if end &- p > NetpbmLimits.maxTokenDigits, InputWindow.isDigit(base[p]) {
                let (value, next) = try InputWindow.scanDigits(
                    base, from: p, to: end, origin: window.origin, field: .sample, limit: maxval)
                out[i] = Sample(truncatingIfNeeded: value)
                window.position = next
                continue
            }
            window.position = p
            try window.skipSeparators()
            guard let byte = try window.peek() else { throw plainEnd(window, found: decoded + i) }
            guard InputWindow.isDigit(byte) else {
                throw .unexpectedByte(found: byte, expected: .sample, offset: window.offset)
            }
            out[i] = Sample(truncatingIfNeeded: try window.readDigits(.sample, limit: maxval))
        }
    }
}
