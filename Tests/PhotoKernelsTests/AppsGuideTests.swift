import Foundation
import Testing
@testable import PhotoKernels

/// Every code block of docs/apps.md, run on Linux against simulated Apple buffers:
/// memory laid out exactly as a CoreGraphics bitmap context, a `CVPixelBuffer` or a
/// `vImage_Buffer` lays it out, behind the same names. Each result is checked per sample
/// against a `Double` evaluation (SPEC §8, §10).
@Suite("The apps guide (docs/apps.md)")
struct AppsGuideTests {
    // MARK: Apple's types, simulated (names, fields, constants and layouts as documented)

    final class CGColorSpace {
        static let sRGB = "kCGColorSpaceSRGB"
        init?(name: String) {}
    }

    struct CGBitmapInfo: OptionSet {
        let rawValue: UInt32
        static let alphaInfoMask = CGBitmapInfo(rawValue: 0x1F)
        static let floatComponents = CGBitmapInfo(rawValue: 1 << 8)
        static let byteOrderMask = CGBitmapInfo(rawValue: 0x7000)
        static let byteOrderDefault = CGBitmapInfo([])
        static let byteOrder16Little = CGBitmapInfo(rawValue: 1 << 12)
        static let byteOrder32Little = CGBitmapInfo(rawValue: 2 << 12)
        static let byteOrder16Big = CGBitmapInfo(rawValue: 3 << 12)
        static let byteOrder32Big = CGBitmapInfo(rawValue: 4 << 12)
    }

    enum CGImageAlphaInfo: UInt32 {
        case none, premultipliedLast, premultipliedFirst, last, first, noneSkipLast, noneSkipFirst, alphaOnly
    }

    enum CGColorRenderingIntent { case defaultIntent }

    /// A bitmap context: with `data: nil` and `bytesPerRow: 0` it allocates its rows,
    /// padded to a multiple of 64 bytes, and frees them with the context.
    final class CGContext {
        let data: UnsafeMutableRawPointer?
        let width: Int, height: Int, bitsPerComponent: Int, bytesPerRow: Int
        let bitmapInfo: CGBitmapInfo
        private let owned: Bool

        init?(data: UnsafeMutableRawPointer?, width: Int, height: Int, bitsPerComponent: Int, bytesPerRow: Int,
              space: CGColorSpace, bitmapInfo: UInt32) {
            let rowBytes = bytesPerRow > 0 ? bytesPerRow : (width * 4 + 63) / 64 * 64
            self.data = data ?? .allocate(byteCount: rowBytes * height, alignment: 64)
            owned = data == nil
            if owned { self.data!.initializeMemory(as: UInt8.self, repeating: 0xA5, count: rowBytes * height) }
            (self.width, self.height, self.bitsPerComponent, self.bytesPerRow) = (width, height, bitsPerComponent, rowBytes)
            self.bitmapInfo = CGBitmapInfo(rawValue: bitmapInfo)
        }

        deinit { if owned { data?.deallocate() } }
    }

    /// A Core Video pixel buffer: one plane, rows padded to a multiple of 64 bytes.
    final class CVPixelBuffer {
        let base: UnsafeMutableRawPointer
        let width: Int, height: Int, bytesPerRow: Int
        let pixelFormatType: UInt32
        var locks = 0

        init(width: Int, height: Int, pixelFormatType: UInt32) {
            (self.width, self.height, self.pixelFormatType) = (width, height, pixelFormatType)
            bytesPerRow = (width * 4 + 63) / 64 * 64
            base = .allocate(byteCount: bytesPerRow * height, alignment: 64)
            base.initializeMemory(as: UInt8.self, repeating: 0xA5, count: bytesPerRow * height)
        }

        deinit { base.deallocate() }
    }

    struct CVPixelBufferLockFlags: OptionSet {
        let rawValue: UInt64
        static let readOnly = CVPixelBufferLockFlags(rawValue: 1)
    }

    let kCVPixelFormatType_32BGRA: UInt32 = 0x4247_5241                      // 'BGRA'
    let kCVPixelFormatType_420YpCbCr8BiPlanarFullRange: UInt32 = 0x3432_3066  // '420f'

    @discardableResult func CVPixelBufferLockBaseAddress(_ b: CVPixelBuffer, _ flags: CVPixelBufferLockFlags) -> Int32 {
        b.locks += 1
        return 0
    }
    @discardableResult func CVPixelBufferUnlockBaseAddress(_ b: CVPixelBuffer, _ flags: CVPixelBufferLockFlags) -> Int32 {
        b.locks -= 1
        return 0
    }
    func CVPixelBufferGetPixelFormatType(_ b: CVPixelBuffer) -> UInt32 { b.pixelFormatType }
    func CVPixelBufferGetBaseAddress(_ b: CVPixelBuffer) -> UnsafeMutableRawPointer? { b.locks > 0 ? b.base : nil }
    func CVPixelBufferGetWidth(_ b: CVPixelBuffer) -> Int { b.width }
    func CVPixelBufferGetHeight(_ b: CVPixelBuffer) -> Int { b.height }
    func CVPixelBufferGetBytesPerRow(_ b: CVPixelBuffer) -> Int { b.bytesPerRow }

    /// vImage's buffer: the C struct's four fields; rows padded to a multiple of 64 bytes.
    struct vImage_Buffer {
        var data: UnsafeMutableRawPointer!
        var height: UInt
        var width: UInt
        var rowBytes: Int

        init(width: Int, height: Int, bitsPerPixel: UInt32) throws {
            (self.width, self.height) = (UInt(width), UInt(height))
            rowBytes = (width * Int(bitsPerPixel) / 8 + 63) / 64 * 64
            data = .allocate(byteCount: rowBytes * height, alignment: 64)
            data.initializeMemory(as: UInt8.self, repeating: 0xA5, count: rowBytes * height)
        }

        func free() { data.deallocate() }
    }

    struct vImage_CGImageFormat {
        var bitsPerComponent: UInt32
        var bitsPerPixel: UInt32
        var colorSpace: Unmanaged<CGColorSpace>?
        var bitmapInfo: CGBitmapInfo
        var version: UInt32
        var decode: UnsafePointer<CGFloat>?
        var renderingIntent: CGColorRenderingIntent
    }

    // MARK: The guide's code (docs/apps.md), as written there

    /// The `PixelFormat` of a CoreGraphics or vImage RGB bitmap layout, or `nil` when
    /// PhotoKernels has no such format (big-endian 16-bit components, alpha only, …).
    func pixelFormat(bitsPerComponent: Int, bitsPerPixel: Int, bitmapInfo: CGBitmapInfo) -> PixelFormat? {
        guard let alphaInfo = CGImageAlphaInfo(rawValue: bitmapInfo.rawValue & CGBitmapInfo.alphaInfoMask.rawValue)
        else { return nil }
        let alpha: AlphaMode
        var order: ChannelOrder  // as a big-endian word holds the channels
        switch alphaInfo {
        case .premultipliedFirst: (alpha, order) = (.premultiplied, .argb)
        case .premultipliedLast: (alpha, order) = (.premultiplied, .rgba)
        case .first: (alpha, order) = (.straight, .argb)
        case .last: (alpha, order) = (.straight, .rgba)
        case .noneSkipFirst: (alpha, order) = (.none, .xrgb)
        case .noneSkipLast: (alpha, order) = (.none, .rgbx)
        case .none: (alpha, order) = (.none, .rgb)
        case .alphaOnly: return nil
        }
        let byteOrder = bitmapInfo.intersection(.byteOrderMask)
        let sample: SampleType
        switch (bitsPerComponent, bitmapInfo.contains(.floatComponents)) {
        case (8, false):
            if byteOrder == .byteOrder32Little {
                // A little-endian 32-bit word keeps its four bytes in reverse order.
                let reversed: [ChannelOrder: ChannelOrder] = [.argb: .bgra, .rgba: .abgr, .xrgb: .bgrx, .rgbx: .xbgr]
                guard let r = reversed[order] else { return nil }
                order = r
            } else if byteOrder != .byteOrderDefault && byteOrder != .byteOrder32Big {
                return nil
            }
            sample = .uint8
        case (16, false), (16, true), (32, true):
            // 16- and 32-bit components in the CPU's (little-endian) order, as they are.
            let little: CGBitmapInfo = bitsPerComponent == 16 ? .byteOrder16Little : .byteOrder32Little
            guard byteOrder == little else { return nil }
            sample = bitsPerComponent == 32 ? .float32 : bitmapInfo.contains(.floatComponents) ? .float16 : .uint16
        default:
            return nil
        }
        guard bitsPerPixel == order.channelCount * bitsPerComponent else { return nil }
        return try? PixelFormat(order, alpha: alpha, sample: sample)
    }

    /// Renders the photo's preview with the current recipe, once per display frame.
    final class EditorRenderer {
        let original: PixelBuffer    // the preview of the photo, never edited
        let display: PixelBuffer     // what the screen shows, the same size
        private(set) var recipe: Recipe
        private var plan: PreparedEditPlan

        init(original: PixelBuffer, display: PixelBuffer, recipe: Recipe = .identity) throws {
            (self.original, self.display, self.recipe) = (original, display, recipe)
            plan = try EditPlan(recipe).prepared(width: original.width, height: original.height, threads: 1)
        }

        /// A slider moved: compile the new recipe and prepare it for the preview's size
        /// (microseconds: a few matrix products and one scratch row).
        func update(_ newRecipe: Recipe) throws {
            guard newRecipe != recipe else { return }
            recipe = newRecipe
            plan = try EditPlan(recipe).prepared(width: original.width, height: original.height, threads: 1)
        }

        /// Once per frame: original → display through the prepared plan; no pixel memory
        /// is allocated.
        func renderFrame() throws {
            try plan.run(from: original, to: display)
        }
    }

    // MARK: Checking

    /// Owned memory for a buffer.
    typealias Storage = PixelBufferTests.Storage

    /// The straight colour of premultiplied BGRA8 pixel `(x, y)` (SPEC §10): `c/a`, all
    /// zero where `a = 0`.
    static func straightColour(_ p: PixelBuffer, x: Int, y: Int) -> SIMD4<Double> {
        let bytes = p.baseAddress.advanced(by: y * p.bytesPerRow + 4 * x).assumingMemoryBound(to: UInt8.self)
        let a = Double(bytes[3]) / 255
        guard a > 0 else { return .zero }
        return SIMD4(Double(bytes[2]) / 255 / a, Double(bytes[1]) / 255 / a, Double(bytes[0]) / 255 / a, a)
    }

    /// Checks every sample of `output` (premultiplied BGRA8 or straight RGBA16) against
    /// `recipe` evaluated in `Double` on `input(x, y)` (straight colour), pixel `(x, y)` of
    /// an image of the output's size: SPEC §8, tie-aware; alpha carried over.
    static func expectRendered(_ output: PixelBuffer, _ recipe: Recipe, input: (Int, Int) -> SIMD4<Double>,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        let (w, h) = (output.width, output.height)
        let operations = recipe.operationsInOrder.filter { !$0.isIdentity }
        var failures = 0
        for y in 0..<h {
            for x in 0..<w {
                let c = input(x, y)
                let exact = operations.reduce(c) { $1.evaluate($0, x: x, y: y, width: w, height: h) }
                let pixel = output.baseAddress.advanced(by: y * output.bytesPerRow + x * output.format.bytesPerPixel)
                for channel in 0..<4 {
                    // A transparent pixel has no colour; straight outputs leave it unspecified.
                    if output.format == .rgba16, c.w == 0, channel < 3 { continue }
                    let sample: Int, maxval: Int, expected: Double
                    if output.format == .rgba16 {
                        (sample, maxval) = (Int(pixel.load(fromByteOffset: 2 * channel, as: UInt16.self)), 65535)
                        expected = exact[channel]
                    } else {
                        (sample, maxval) = (Int(pixel.load(fromByteOffset: [2, 1, 0, 3][channel], as: UInt8.self)), 255)
                        expected = channel == 3 ? c.w : min(max(exact[channel], 0), 1) * c.w
                    }
                    if !TieAwareCheck.accepts(sample, expected, maxval: maxval).ok {
                        failures += 1
                        if failures <= 3 {
                            Issue.record("(\(x), \(y)) channel \(channel): got \(sample), exact \(expected * Double(maxval))",
                                         sourceLocation: sourceLocation)
                        }
                    }
                }
            }
        }
        #expect(failures == 0, "\(failures) samples wrong", sourceLocation: sourceLocation)
    }

    /// Fills a premultiplied BGRA8 buffer with a seeded photo: colour ≤ alpha, mostly
    /// opaque, a few translucent and transparent pixels.
    static func fill(_ p: PixelBuffer, seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        for y in 0..<p.height {
            for x in 0..<p.width {
                let a: UInt8 = x % 7 == 3 ? UInt8.random(in: 0...254, using: &rng) : 255
                let pixel = p.baseAddress.advanced(by: y * p.bytesPerRow + 4 * x).assumingMemoryBound(to: UInt8.self)
                for c in 0..<3 { pixel[c] = UInt8.random(in: 0...a, using: &rng) }
                pixel[3] = a
            }
        }
    }

    /// The padding bytes of `p` (after `width × bytesPerPixel` in each row) are all `0xA5`.
    static func paddingUntouched(_ p: PixelBuffer) -> Bool {
        let rowBytes = p.width * p.format.bytesPerPixel
        return (0..<p.height).allSatisfy { y in
            (rowBytes..<p.bytesPerRow).allSatisfy { p.baseAddress.load(fromByteOffset: y * p.bytesPerRow + $0, as: UInt8.self) == 0xA5 }
        }
    }

    static let recipe = KernelCatalog.sampleRecipe

    // MARK: The guide, section by section

    @Test("every Swift block of docs/apps.md appears, line for line, in this file")
    func blocksAreTested() throws {
        let here = URL(fileURLWithPath: #filePath)
        let guide = try String(contentsOf: here.deletingLastPathComponent().appendingPathComponent("../../docs/apps.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let parts = guide.components(separatedBy: "```swift\n").dropFirst()
        #expect(parts.count >= 10, "docs/apps.md has \(parts.count) Swift blocks")
        for part in parts {
            let block = part.components(separatedBy: "```")[0].split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            let found = source.indices.contains { start in
                start + block.count <= source.count && Array(source[start..<(start + block.count)]) == block
            }
            #expect(found, "not in AppsGuideTests.swift:\n\(block.joined(separator: "\n"))")
        }
    }

    @Test("pixelFormat(bitsPerComponent:bitsPerPixel:bitmapInfo:) maps CoreGraphics layouts to PixelFormat")
    func bitmapInfoMapping() throws {
        func info(_ alpha: CGImageAlphaInfo, _ order: CGBitmapInfo, float: Bool = false) -> CGBitmapInfo {
            CGBitmapInfo(rawValue: alpha.rawValue).union(order).union(float ? .floatComponents : [])
        }
        let cases: [(Int, Int, CGBitmapInfo, PixelFormat?)] = [
            (8, 32, info(.premultipliedFirst, .byteOrder32Little), .bgra8Premultiplied),
            (8, 32, info(.premultipliedLast, .byteOrder32Big), .rgba8Premultiplied),
            (8, 32, info(.premultipliedLast, .byteOrderDefault), .rgba8Premultiplied),
            (8, 32, info(.premultipliedFirst, .byteOrderDefault), try PixelFormat(.argb, alpha: .premultiplied, sample: .uint8)),
            (8, 32, info(.last, .byteOrder32Little), try PixelFormat(.abgr, alpha: .straight, sample: .uint8)),
            (8, 32, info(.noneSkipFirst, .byteOrder32Little), try PixelFormat(.bgrx, alpha: .none, sample: .uint8)),
            (8, 32, info(.noneSkipLast, .byteOrderDefault), try PixelFormat(.rgbx, alpha: .none, sample: .uint8)),
            (8, 24, info(.none, .byteOrderDefault), try PixelFormat(.rgb, alpha: .none, sample: .uint8)),
            (16, 64, info(.last, .byteOrder16Little), .rgba16),
            (16, 64, info(.premultipliedFirst, .byteOrder16Little), try PixelFormat(.argb, alpha: .premultiplied, sample: .uint16)),
            (32, 128, info(.last, .byteOrder32Little, float: true), .rgbaFloat),
            (16, 64, info(.last, .byteOrder16Big), nil),
            (8, 24, info(.none, .byteOrder32Little), nil),
            (8, 32, info(.alphaOnly, .byteOrderDefault), nil),
            (8, 24, info(.last, .byteOrderDefault), nil),
        ]
        for (bits, pixel, bitmapInfo, expected) in cases {
            #expect(pixelFormat(bitsPerComponent: bits, bitsPerPixel: pixel, bitmapInfo: bitmapInfo) == expected,
                    "\(bits) bits, \(pixel) per pixel, info 0x\(String(bitmapInfo.rawValue, radix: 16))")
        }
        #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
        #expect(pixelFormat(bitsPerComponent: 16, bitsPerPixel: 64, bitmapInfo: info(.last, .byteOrder16Little, float: true))
                == .rgbaFloat16)
        #endif
    }

    @Test("a CoreGraphics bitmap context (premultiplied first, 32-bit little endian) is premultiplied BGRA8, edited in place")
    func bitmapContext() throws {
        let (width, height) = (23, 9)
        let recipe = Self.recipe
        let context = CGContext(data: nil, width: width, height: height, bitsPerComponent: 8, bytesPerRow: 0,
                                space: CGColorSpace(name: CGColorSpace.sRGB)!,
                                bitmapInfo: CGImageAlphaInfo.premultipliedFirst.rawValue | CGBitmapInfo.byteOrder32Little.rawValue)!
        #expect(context.bytesPerRow == 128)  // 92 bytes of pixels, padded
        let drawn = try PixelBuffer(baseAddress: context.data!, width: width, height: height, bytesPerRow: context.bytesPerRow,
                                    format: .bgra8Premultiplied)
        Self.fill(drawn, seed: 31)  // what drawing into the context leaves there
        let before = Storage(count: context.bytesPerRow * height)
        before.bytes.copyMemory(from: context.data!, byteCount: before.count)
        defer { withExtendedLifetime((before, context)) {} }
        let original = try PixelBuffer(baseAddress: before.bytes, width: width, height: height, bytesPerRow: context.bytesPerRow,
                                       format: .bgra8Premultiplied)

        let photo = try PixelBuffer(baseAddress: context.data!, width: context.width, height: context.height,
                                    bytesPerRow: context.bytesPerRow, format: .bgra8Premultiplied)
        let plan = try EditPlan(recipe).prepared(width: photo.width, height: photo.height)
        try plan.run(photo)   // in place; context.makeImage() now returns the edited image

        Self.expectRendered(photo, recipe) { Self.straightColour(original, x: $0, y: $1) }
        #expect(Self.paddingUntouched(photo))
        #expect(pixelFormat(bitsPerComponent: context.bitsPerComponent, bitsPerPixel: 32, bitmapInfo: context.bitmapInfo)
                == photo.format)
    }

    @Test("a CVPixelBuffer of kCVPixelFormatType_32BGRA is premultiplied BGRA8 with padded rows; 420f is left alone")
    func cvPixelBuffer() throws {
        let framePlan = try EditPlan(Self.recipe).prepared(width: 30, height: 7, threads: 1)
        func process(_ pixelBuffer: CVPixelBuffer) throws {
            CVPixelBufferLockBaseAddress(pixelBuffer, [])
            defer { CVPixelBufferUnlockBaseAddress(pixelBuffer, []) }
            guard CVPixelBufferGetPixelFormatType(pixelBuffer) == kCVPixelFormatType_32BGRA,
                  let base = CVPixelBufferGetBaseAddress(pixelBuffer) else { return }
            let frame = try PixelBuffer(baseAddress: base, width: CVPixelBufferGetWidth(pixelBuffer),
                                        height: CVPixelBufferGetHeight(pixelBuffer),
                                        bytesPerRow: CVPixelBufferGetBytesPerRow(pixelBuffer), format: .bgra8Premultiplied)
            try framePlan.run(frame)
        }
        // A camera frame: opaque.
        let camera = CVPixelBuffer(width: 30, height: 7, pixelFormatType: kCVPixelFormatType_32BGRA)
        #expect(camera.bytesPerRow == 128)
        let frame = try PixelBuffer(baseAddress: camera.base, width: 30, height: 7, bytesPerRow: 128, format: .bgra8Premultiplied)
        var rng = SeededGenerator(seed: 32)
        for y in 0..<7 {
            for x in 0..<30 {
                let pixel: [UInt8] = (0..<3).map { _ in UInt8.random(in: 0...255, using: &rng) } + [255]
                (camera.base + y * 128 + 4 * x).copyMemory(from: pixel, byteCount: 4)
            }
        }
        let before = Storage(count: 128 * 7)
        before.bytes.copyMemory(from: camera.base, byteCount: before.count)
        defer { withExtendedLifetime(before) {} }
        let original = try PixelBuffer(baseAddress: before.bytes, width: 30, height: 7, bytesPerRow: 128, format: .bgra8Premultiplied)
        try process(camera)
        #expect(camera.locks == 0)
        Self.expectRendered(frame, Self.recipe) { Self.straightColour(original, x: $0, y: $1) }
        #expect(Self.paddingUntouched(frame))
        // A bi-planar YUV frame is not a pixel buffer of this library: untouched.
        let yuv = CVPixelBuffer(width: 30, height: 7, pixelFormatType: kCVPixelFormatType_420YpCbCr8BiPlanarFullRange)
        try process(yuv)
        #expect((0..<(128 * 7)).allSatisfy { yuv.base.load(fromByteOffset: $0, as: UInt8.self) == 0xA5 } && yuv.locks == 0)
    }

    @Test("a vImage_Buffer and its vImage_CGImageFormat give the PixelBuffer")
    func vImageBuffer() throws {
        let format = vImage_CGImageFormat(bitsPerComponent: 8, bitsPerPixel: 32, colorSpace: nil,
                                          bitmapInfo: CGBitmapInfo(rawValue: CGImageAlphaInfo.premultipliedFirst.rawValue)
                                              .union(.byteOrder32Little),
                                          version: 0, decode: nil, renderingIntent: .defaultIntent)
        let source = try vImage_Buffer(width: 21, height: 5, bitsPerPixel: format.bitsPerPixel)
        defer { source.free() }
        let filled = try PixelBuffer(baseAddress: source.data, width: 21, height: 5, bytesPerRow: source.rowBytes,
                                     format: .bgra8Premultiplied)
        Self.fill(filled, seed: 33)
        let before = Storage(count: source.rowBytes * 5)
        before.bytes.copyMemory(from: source.data, byteCount: before.count)
        defer { withExtendedLifetime(before) {} }
        let original = try PixelBuffer(baseAddress: before.bytes, width: 21, height: 5, bytesPerRow: source.rowBytes,
                                       format: .bgra8Premultiplied)
        var checked = false
        func edit() throws {
            guard let sourceFormat = pixelFormat(bitsPerComponent: Int(format.bitsPerComponent),
                                                 bitsPerPixel: Int(format.bitsPerPixel), bitmapInfo: format.bitmapInfo)
            else { return }
            let image = try PixelBuffer(baseAddress: source.data, width: Int(source.width), height: Int(source.height),
                                        bytesPerRow: source.rowBytes, format: sourceFormat)
            try EditPlan(Self.recipe).prepared(width: image.width, height: image.height).run(image)
            #expect(image.format == .bgra8Premultiplied && source.rowBytes == 128)
            Self.expectRendered(image, Self.recipe) { Self.straightColour(original, x: $0, y: $1) }
            #expect(Self.paddingUntouched(image))
            checked = true
        }
        try edit()
        #expect(checked)
    }

    /// A photo (premultiplied BGRA8, rows padded to 64 bytes) and its display buffer.
    static func photoAndDisplay(_ width: Int, _ height: Int) throws -> (PixelBuffer, PixelBuffer, Storage, Storage) {
        let rowBytes = (width * 4 + 63) / 64 * 64
        let (a, b) = (Storage(count: rowBytes * height), Storage(count: rowBytes * height))
        let photo = try PixelBuffer(baseAddress: a.bytes, width: width, height: height, bytesPerRow: rowBytes, format: .bgra8Premultiplied)
        let display = try PixelBuffer(baseAddress: b.bytes, width: width, height: height, bytesPerRow: rowBytes, format: .bgra8Premultiplied)
        return (photo, display, a, b)
    }

    @Test("the slider loop: one plan per recipe, reused every frame, the display always the current recipe's render")
    func sliderLoop() throws {
        let (preview, display, a, b) = try Self.photoAndDisplay(40, 30)
        defer { withExtendedLifetime((a, b)) {} }
        Self.fill(preview, seed: 34)
        let untouched = a.array

        let renderer = try EditorRenderer(original: preview, display: display)
        for saturation in [1.0, 1.2, 1.4, 1.6] {          // the slider moves: one recipe per frame
            var recipe = renderer.recipe
            recipe.adjustments.saturation = saturation
            try renderer.update(recipe)
            try renderer.renderFrame()
        }

        #expect(renderer.recipe.adjustments.saturation == 1.6)
        Self.expectRendered(display, renderer.recipe) { Self.straightColour(preview, x: $0, y: $1) }
        #expect(a.array == untouched && Self.paddingUntouched(display))
    }

    @Test("the preview: downscaled once, the relative recipe rendered on it, the export-matching look")
    func preview() throws {
        let (photo, _, p, q) = try Self.photoAndDisplay(64, 48)
        defer { withExtendedLifetime((p, q)) {} }
        Self.fill(photo, seed: 35)

        let previewWidth = photo.width / 4, previewHeight = photo.height / 4
        let previewBytesPerRow = (previewWidth * 4 + 63) / 64 * 64
        let previewMemory = UnsafeMutableRawPointer.allocate(byteCount: previewBytesPerRow * previewHeight, alignment: 64)
        let preview = try PixelBuffer(baseAddress: previewMemory, width: previewWidth, height: previewHeight,
                                      bytesPerRow: previewBytesPerRow, format: .bgra8Premultiplied)
        try Downscale.area(from: photo, to: preview)
        defer { previewMemory.deallocate() }

        // Each preview pixel is the premultiplied mean of its 4 × 4 block.
        for (x, y) in [(0, 0), (3, 2), (15, 11)] {
            for c in 0..<4 {
                var sum = 0.0
                for j in 0..<4 { for i in 0..<4 { sum += Double(photo.baseAddress.load(fromByteOffset: (4 * y + j) * photo.bytesPerRow + 4 * (4 * x + i) + c, as: UInt8.self)) } }
                let got = Int(preview.baseAddress.load(fromByteOffset: y * previewBytesPerRow + 4 * x + c, as: UInt8.self))
                #expect(abs(Double(got) - sum / 16) <= 0.5 + 1e-9, "(\(x), \(y)) sample \(c): \(got) vs \(sum / 16)")
            }
        }

        let (_, display, r, s) = try Self.photoAndDisplay(previewWidth, previewHeight)
        defer { withExtendedLifetime((r, s)) {} }
        let renderer = try EditorRenderer(original: preview, display: display)

        var look = Recipe(preset: .vivid)
        look.vignette = .relativeVignetteEffect(center: SIMD2(0.5, 0.45), radius: 0.9, intensity: 0.6)
        try renderer.update(look)
        try renderer.renderFrame()

        Self.expectRendered(display, look) { Self.straightColour(preview, x: $0, y: $1) }
    }

    @Test("the animation: interpolated(to:at:) per frame; the first and last frames are the two looks, the middle the blend")
    func animation() throws {
        let (preview, display, a, b) = try Self.photoAndDisplay(24, 18)
        defer { withExtendedLifetime((a, b)) {} }
        Self.fill(preview, seed: 36)
        let renderer = try EditorRenderer(original: preview, display: display, recipe: Recipe(preset: .vivid))
        var target = Recipe(preset: .dream)
        target.effect = .sepia(intensity: 0.5)
        let frames = 4
        var snapshots: [[UInt8]] = []
        func present(_ frame: PixelBuffer) {
            snapshots.append(Array(UnsafeRawBufferPointer(start: frame.baseAddress, count: frame.bytesPerRow * frame.height)))
        }

        let start = renderer.recipe
        for frame in 1...frames {
            try renderer.update(start.interpolated(to: target, at: Double(frame) / Double(frames)))
            try renderer.renderFrame()
            present(renderer.display)
        }

        #expect(snapshots.count == frames && renderer.recipe == target)
        Self.expectRendered(display, target) { Self.straightColour(preview, x: $0, y: $1) }
        // Frame 2 of 4 is the recipe halfway.
        let middle = Storage(count: snapshots[1].count)
        middle.bytes.copyMemory(from: snapshots[1], byteCount: snapshots[1].count)
        let halfway = try PixelBuffer(baseAddress: middle.bytes, width: 24, height: 18, bytesPerRow: display.bytesPerRow,
                                      format: .bgra8Premultiplied)
        Self.expectRendered(halfway, start.interpolated(to: target, at: 0.5)) { Self.straightColour(preview, x: $0, y: $1) }
        #expect(snapshots[1] != snapshots[3])
    }

    @Test("the 16-bit export: premultiplied BGRA8 in, straight RGBA16 out, every sample the straight result")
    func export16() throws {
        let (photo, display, a, b) = try Self.photoAndDisplay(33, 12)
        defer { withExtendedLifetime((a, b)) {} }
        Self.fill(photo, seed: 37)
        var look = Recipe(preset: .vivid)
        look.vignette = .relativeVignetteEffect(center: SIMD2(0.4, 0.5), radius: 0.8, intensity: 0.7)
        let renderer = try EditorRenderer(original: photo, display: display, recipe: look)

        let exportBytesPerRow = photo.width * 8
        let exportMemory = UnsafeMutableRawPointer.allocate(byteCount: exportBytesPerRow * photo.height, alignment: 64)
        defer { exportMemory.deallocate() }
        let export = try PixelBuffer(baseAddress: exportMemory, width: photo.width, height: photo.height,
                                     bytesPerRow: exportBytesPerRow, format: .rgba16)
        try EditPlan(renderer.recipe).prepared(width: photo.width, height: photo.height)
            .run(from: photo, to: export)

        Self.expectRendered(export, look) { Self.straightColour(photo, x: $0, y: $1) }
        // Alpha is the 8-bit alpha at 16 bits (a·257), 0 where the photo is transparent.
        for y in 0..<photo.height {
            for x in 0..<photo.width {
                let a = photo.baseAddress.load(fromByteOffset: y * photo.bytesPerRow + 4 * x + 3, as: UInt8.self)
                #expect(exportMemory.load(fromByteOffset: y * exportBytesPerRow + 8 * x + 6, as: UInt16.self) == UInt16(a) * 257)
            }
        }
    }
}
