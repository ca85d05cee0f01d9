// The list of benchmarks: KernelCatalog × KernelVariant, the end-to-end sample
// pipeline, edit plans on app pixel buffers (premultiplied, padded, a preview), the
// sample ⇄ Float conversions, Netpbm decode/encode, and the memory-copy rooflines.

import PhotoKernels

/// A buffer class whose plain memory copy is the roofline of the workloads that
/// stream through it.
enum CopyBuffer: String, Sendable, CaseIterable {
    /// The `Float` RGBA image: 16 bytes per pixel. Roofline of the in-place kernels.
    case floatRGBA = "float-rgba"
    /// An interleaved RGBA raster of `UInt8` samples, 4 bytes per pixel. Roofline of
    /// the 8-bit pipeline.
    case samplesRGBA8 = "samples-rgba8"
    /// An interleaved RGBA raster of `UInt16` samples, 8 bytes per pixel. Roofline of
    /// the 16-bit pipeline and of Netpbm (whose decoded samples are `UInt16`).
    case samplesRGBA16 = "samples-rgba16"

    /// Bytes per pixel of the buffer.
    var bytesPerPixel: Int {
        switch self {
        case .floatRGBA: return MemoryLayout<SIMD4<Float>>.stride
        case .samplesRGBA8: return 4 * MemoryLayout<UInt8>.stride
        case .samplesRGBA16: return 4 * MemoryLayout<UInt16>.stride
        }
    }

    /// The raster class of a sample depth.
    static func samples(_ depth: SampleDepth) -> CopyBuffer {
        depth == .eight ? .samplesRGBA8 : .samplesRGBA16
    }
}

/// The integer sample depth of the end-to-end and Netpbm workloads.
enum SampleDepth: Int, Sendable, CaseIterable {
    case eight = 8
    case sixteen = 16

    /// 255 or 65535.
    var maxval: Int { self == .eight ? 255 : 65535 }
    /// Bytes per sample in a raw Netpbm file (1 below maxval 256, else 2).
    var fileBytesPerSample: Int { self == .eight ? 1 : 2 }
}

/// The destination of an export from the premultiplied BGRA8 app buffer, rows packed:
/// straight RGBA at 8 or 16 bits a sample, RGBA half floats with straight or
/// premultiplied alpha, or one grey half-float sample a pixel.
enum ExportFormat: String, Sendable, CaseIterable {
    /// Straight 8-bit RGBA (vImage `RGBA8888`, an 8-bit PNG export).
    case rgba8
    /// 16-bit words (vImage `RGBA16U`, a PNG export).
    case rgba16
    /// 16-bit words, premultiplied alpha (a 16-bit CoreGraphics bitmap context,
    /// `premultipliedLast`): the same block, its colour clamped and multiplied by alpha.
    case rgba16Premultiplied = "rgba16-premultiplied"
    /// `Float16`s, straight alpha (vImage `RGBA16F`; Core Image's `RGBAh` with
    /// `outputPremultiplied` false): the widening block with a half-precision ending.
    case rgba16f
    /// `Float16`s, premultiplied alpha (Core Image's `RGBAh`, premultiplied by default):
    /// the same block, its colour clamped to [0, 1] and multiplied by alpha.
    case rgba16fPremultiplied = "rgba16f-premultiplied"
    /// One grey `Float16` a pixel, the luma (vImage `Planar16F`, CoreVideo
    /// `OneComponent16Half`): the per-sample codec, whose halves the default x86-64
    /// build converts a few hundred at a time.
    case gray16f

    /// The formats this platform has (no `Float16` on Intel Macs).
    static var available: [ExportFormat] {
        #if (os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64)
        return [.rgba8, .rgba16, .rgba16Premultiplied]
        #else
        return allCases
        #endif
    }

    /// Bytes a pixel of the destination: 4 at 8 bits, 8 at 16, or 2 for grey.
    var bytesPerPixel: Int {
        switch self {
        case .rgba8: 4
        case .rgba16, .rgba16Premultiplied, .rgba16f, .rgba16fPremultiplied: 8
        case .gray16f: 2
        }
    }

    /// The destination's pixel format.
    ///
    /// - Throws: `PixelBufferError` for the `Float16` formats where `Float16` does not exist.
    func pixelFormat() throws(PixelBufferError) -> PixelFormat {
        switch self {
        case .rgba8: .rgba8
        case .rgba16: .rgba16
        case .rgba16Premultiplied: .rgba16Premultiplied
        case .rgba16f: try PixelFormat(.rgba, alpha: .straight, sample: .float16)
        case .rgba16fPremultiplied: try PixelFormat(.rgba, alpha: .premultiplied, sample: .float16)
        case .gray16f: try PixelFormat(.gray, alpha: .none, sample: .float16)
        }
    }
}

/// An app's pixel buffer, as a CoreGraphics bitmap context, a `CVPixelBuffer` or a
/// `vImage_Buffer` holds it: the format, the row stride and the alpha it carries.
enum AppBuffer: String, Sendable, CaseIterable {
    /// 8-bit BGRA, premultiplied (a bitmap context's "premultiplied first, 32-bit little
    /// endian", `kCVPixelFormatType_32BGRA`), rows packed: opaque except a soft-edged
    /// translucent disc on about 6 % of the image (`AppBufferSet`).
    case bgra8Premultiplied = "bgra8-premultiplied"
    /// 8-bit RGBA, straight alpha (the `pipeline/rgba8` raster), each row padded to the
    /// next multiple of 64 bytes above `width × 4`.
    case rgba8Padded = "rgba8-padded"
    /// A preview: `bgra8Premultiplied`'s pixels at `ImageSize.preview`, rows rounded up to
    /// a multiple of 64 bytes (1000 pixels: 4032 bytes), as Core Video allocates them.
    case preview = "preview"

    /// The first part of the benchmark name: `pipeline`, or `preview` for the preview.
    var group: String { self == .preview ? "preview" : "pipeline" }

    /// The buffer part of the benchmark name, e.g. `bgra8-premultiplied`.
    var label: String { self == .rgba8Padded ? "rgba8-padded" : "bgra8-premultiplied" }

    /// The pixel format.
    var format: PixelFormat { self == .rgba8Padded ? .rgba8 : .bgra8Premultiplied }

    /// Bytes per row for an image `width` pixels wide.
    ///
    /// The padded buffer takes the next multiple of 64 strictly above `width × 4`, so it
    /// has padding even where `width × 4` is a multiple of 64 already (4032 and 8064
    /// pixels: 16 128 and 32 256 bytes would be unpadded); the others round up.
    func bytesPerRow(width: Int) -> Int {
        switch self {
        case .bgra8Premultiplied: return width * 4
        case .rgba8Padded: return (width * 4 / 64 + 1) * 64
        case .preview: return (width * 4 + 63) / 64 * 64
        }
    }
}

/// Which way a conversion between an RGBA integer raster and the `Float` image runs.
enum ConversionDirection: Sendable, CaseIterable {
    /// `FloatImage.decode(from:layout:maxval:threads:)`: samples → the preallocated `Float` image.
    case toFloat
    /// `FloatImage.encode(into:layout:maxval:threads:)`: the `Float` image → a preallocated raster.
    case fromFloat

    /// `rgba8-to-float`, `float-to-rgba16`, …: the middle part of the benchmark name.
    func label(_ depth: SampleDepth) -> String {
        self == .toFloat ? "rgba\(depth.rawValue)-to-float" : "float-to-rgba\(depth.rawValue)"
    }
}

/// One benchmark: what runs, on which size, and how many bytes it moves.
///
/// Exists so the runner, the reports and `--list` all read one description; the
/// name is the key baselines are compared by, so it is built in one place (`name`).
struct Workload: Sendable {
    /// What is timed.
    enum Kind: Sendable {
        /// A parallel `memcpy` of the buffer class: the roofline.
        case copy(CopyBuffer)
        /// A catalog entry applied in place to the `Float` image.
        case kernel(CatalogEntry, KernelVariant)
        /// A prepared edit plan's `run(input:…)` from RGBA samples to RGBA samples of the same depth
        /// (`UInt8` at 8 bits, `UInt16` at 16); a nil entry means no kernels
        /// (decode → encode only), where the variant is moot.
        case pipeline(SampleDepth, CatalogEntry?, KernelVariant?)
        /// `PreparedEditPlan.run(_:variant:)` in place on an app pixel buffer, the plan
        /// prepared once for the size, as an app prepares it once and runs it per frame.
        case appBuffer(AppBuffer, CatalogEntry, KernelVariant)
        /// `PreparedEditPlan.run(from:to:variant:)` from the `bgra8-premultiplied` app
        /// buffer (never written) into a straight RGBA8, RGBA16, RGBA `Float16` or grey
        /// `Float16` buffer, rows packed: an export of the edited photo, the plan
        /// prepared once for the size.
        case export(ExportFormat, CatalogEntry, KernelVariant)
        /// `PreparedEditPlan.run(from:to:variant:)` from the `rgba8-padded` app buffer
        /// (straight RGBA8, opaque, never written) into the `bgra8-premultiplied` one's
        /// memory: a decoded image brought into the display buffer with the edit, the
        /// plan prepared once for the size.
        case importing(CatalogEntry, KernelVariant)
        /// `FloatImage.decode(from:layout: .rgba, …)` or `FloatImage.encode(into:layout: .rgba, …)`
        /// between an RGBA raster of the depth and a preallocated `Float` image or raster.
        case convert(ConversionDirection, SampleDepth)
        /// `NetpbmReader.read` of a raw P6 file.
        case netpbmDecode(SampleDepth)
        /// `NetpbmWriter.encode` of an RGB `NetpbmImage` as raw P6.
        case netpbmEncode(SampleDepth)
    }

    let kind: Kind
    let size: ImageSize

    /// The benchmark name, `group/…/size`, e.g. `kernel/sepia/simd4/12MP`.
    var name: String {
        let parts: [String]
        switch kind {
        case .copy(let buffer):
            parts = ["copy", buffer.rawValue]
        case .kernel(let entry, let variant):
            parts = ["kernel", entry.name, variant.rawValue]
        case .pipeline(let depth, let entry, let variant):
            parts = ["pipeline", "rgba\(depth.rawValue)", entry?.name ?? "identity"] + (variant.map { [$0.rawValue] } ?? [])
        case .appBuffer(let buffer, let entry, let variant):
            parts = [buffer.group, buffer.label, entry.name, variant.rawValue]
        case .export(let format, let entry, let variant):
            parts = ["pipeline", "\(AppBuffer.bgra8Premultiplied.label)-to-\(format.rawValue)", entry.name, variant.rawValue]
        case .importing(let entry, let variant):
            parts = ["pipeline", "\(AppBuffer.rgba8Padded.label)-to-\(AppBuffer.bgra8Premultiplied.label)", entry.name,
                     variant.rawValue]
        case .convert(let direction, let depth):
            parts = ["convert", direction.label(depth)]
        case .netpbmDecode(let depth):
            parts = ["netpbm", "decode", "p6-\(depth.rawValue)bit"]
        case .netpbmEncode(let depth):
            parts = ["netpbm", "encode", "p6-\(depth.rawValue)bit"]
        }
        return (parts + [size.label]).joined(separator: "/")
    }

    /// The name without its size: the same benchmark at every size.
    var familyName: String { String(name.dropLast(size.label.count + 1)) }

    /// `copy`, `kernel`, `pipeline`, `preview`, `convert` or `netpbm`.
    var group: String { String(name.prefix { $0 != "/" }) }

    /// The catalog entry's name (`identity` for the kernel-less pipeline); nil for copies
    /// and Netpbm.
    var kernelName: String? {
        switch kind {
        case .kernel(let entry, _): return entry.name
        case .pipeline(_, let entry, _): return entry?.name ?? "identity"
        case .appBuffer(_, let entry, _), .export(_, let entry, _), .importing(let entry, _): return entry.name
        default: return nil
        }
    }

    /// The variant, for kernels and kernel pipelines.
    var variant: KernelVariant? {
        switch kind {
        case .kernel(_, let variant): return variant
        case .pipeline(_, _, let variant): return variant
        case .appBuffer(_, _, let variant), .export(_, _, let variant), .importing(_, let variant): return variant
        default: return nil
        }
    }

    /// The name without its variant: the key that pairs a variant with its scalar run.
    var scalarKey: String {
        var parts = name.split(separator: "/").map(String.init)
        if let variant, let i = parts.firstIndex(of: variant.rawValue) { parts.remove(at: i) }
        return parts.joined(separator: "/")
    }

    /// Pixels per iteration (items in google-benchmark's terms).
    var pixels: Int { size.pixelCount }

    /// Bytes read plus bytes written per pixel, counting each buffer once.
    ///
    /// - copy: the buffer read and the buffer written (2 × its bytes per pixel);
    /// - kernel: in place, 16 B read + 16 B written;
    /// - pipeline: the RGBA raster read and written (4 + 4 B at 8 bits, 8 + 8 B at 16);
    ///   an app buffer in place, and the import, likewise 4 + 4 B (row padding is not
    ///   counted); the exports 4 B read + 4 B written (RGBA8), 8 (RGBA words or
    ///   `Float16`s) or 2 (grey);
    /// - convert: the raster (4 or 8 B) plus the `Float` image (16 B), one read and the
    ///   other written: 20 B at 8 bits, 24 B at 16;
    /// - Netpbm: the raw P6 bytes (3 or 6 per pixel) plus the `UInt16` RGB samples (6).
    var bytesPerPixel: Int {
        switch kind {
        case .copy(let buffer): return 2 * buffer.bytesPerPixel
        case .kernel: return 2 * CopyBuffer.floatRGBA.bytesPerPixel
        case .pipeline(let depth, _, _): return 2 * CopyBuffer.samples(depth).bytesPerPixel
        case .appBuffer, .importing: return 2 * CopyBuffer.samplesRGBA8.bytesPerPixel
        case .export(let format, _, _): return CopyBuffer.samplesRGBA8.bytesPerPixel + format.bytesPerPixel
        case .convert(_, let depth): return CopyBuffer.samples(depth).bytesPerPixel + CopyBuffer.floatRGBA.bytesPerPixel
        case .netpbmDecode(let depth), .netpbmEncode(let depth):
            return 3 * depth.fileBytesPerSample + 3 * MemoryLayout<UInt16>.stride
        }
    }

    /// Bytes read + written per iteration.
    var bytesMoved: Int { bytesPerPixel * pixels }

    /// The copy this workload is measured against (nil for the copies themselves,
    /// whose multiple is 1 by definition — they report it anyway via their own class).
    ///
    /// The conversions use the `Float` copy: the 16 B/px `Float` side dominates their
    /// traffic, and the multiple is taken on bytes (median ÷ (20 or 24 B/px ÷ the copy's
    /// bandwidth)), so 1× means streaming the raster and the image as fast as `memcpy`
    /// streams two `Float` images.
    var roofline: CopyBuffer? {
        switch kind {
        case .copy(let buffer): return buffer
        case .kernel, .convert: return .floatRGBA
        case .pipeline(let depth, _, _): return .samples(depth)
        case .appBuffer, .importing: return .samplesRGBA8
        case .export(let format, _, _): return format == .rgba8 ? .samplesRGBA8 : .samplesRGBA16
        case .netpbmDecode, .netpbmEncode: return .samplesRGBA16
        }
    }
}

/// Builds the benchmark list.
///
/// Enumerates `KernelCatalog.entries` × `KernelVariant.allCases` — nothing is listed by
/// hand, so a new kernel or variant is benchmarked (and verified) without touching
/// this file. The scalar variant comes first because it is the reference the others
/// are checked against.
enum WorkloadPlan {
    /// The variants in run order: `.scalar` (the reference), then the rest in declaration order.
    static var variants: [KernelVariant] {
        KernelVariant.allCases.filter { $0 == .scalar } + KernelVariant.allCases.filter { $0 != .scalar }
    }

    /// The catalog entries the end-to-end pipeline runs (besides no kernel at all):
    /// `adjustments` (one colour matrix), `recipe` (the full edit), the 33³ LUT and the
    /// curve alone (the LUT block and the tone table), and `recipe-curve` (set against
    /// `recipe`: a curve folds into the recipe's tone table).
    static var pipelineEntries: [CatalogEntry] {
        ["adjustments", "recipe", "lut3d-33-tetrahedral", "curve", "recipe-curve"].compactMap(KernelCatalog.entry(named:))
    }

    /// The catalog entries run on app pixel buffers: `recipe`, the full edit (the fused
    /// blocks), and `vibrance`, a per-pixel stage no block takes (the row path: each
    /// piece decoded to straight `Float`, the stage, encoded back).
    static var appBufferEntries: [CatalogEntry] {
        ["recipe", "vibrance"].compactMap(KernelCatalog.entry(named:))
    }

    /// The catalog entry of the exports: `recipe`, the full edit, as an app exports the
    /// photo it has been editing, into each of `ExportFormat.available`; and of the
    /// import, the way in.
    static var exportEntries: [CatalogEntry] {
        ["recipe"].compactMap(KernelCatalog.entry(named:))
    }

    /// Every workload for `size`, unfiltered, in run order (the preview rows are apart:
    /// `previews`).
    static func all(for size: ImageSize) -> [Workload] {
        var kinds: [Workload.Kind] = CopyBuffer.allCases.map { .copy($0) }
        for entry in KernelCatalog.entries {
            kinds += variants.map { .kernel(entry, $0) }
        }
        for depth in SampleDepth.allCases {
            kinds.append(.pipeline(depth, nil, nil))
            for entry in pipelineEntries { kinds += variants.map { .pipeline(depth, entry, $0) } }
        }
        for buffer in [AppBuffer.bgra8Premultiplied, .rgba8Padded] {
            for entry in appBufferEntries { kinds += variants.map { .appBuffer(buffer, entry, $0) } }
        }
        for format in ExportFormat.available {
            for entry in exportEntries { kinds += variants.map { .export(format, entry, $0) } }
        }
        for entry in exportEntries { kinds += variants.map { .importing(entry, $0) } }
        for depth in SampleDepth.allCases {
            kinds += ConversionDirection.allCases.map { .convert($0, depth) }
        }
        for depth in SampleDepth.allCases {
            kinds += [.netpbmDecode(depth), .netpbmEncode(depth)]
        }
        return kinds.map { Workload(kind: $0, size: size) }
    }

    /// The preview rows, at `ImageSize.preview`: what an app renders per frame while a
    /// slider moves, on the preview of the photo.
    static var previews: [Workload] {
        appBufferEntries.flatMap { entry in variants.map { Workload(kind: .appBuffer(.preview, entry, $0), size: .preview) } }
    }

    /// The workloads selected by `filter` (and, where `rows` is given, named in it) over
    /// all `sizes`, plus the roofline copy of every buffer class a selected workload
    /// streams through (the rooflines always run: every other figure is expressed
    /// against them).
    ///
    /// The preview rows join when a size is at least as large as the preview (the photo
    /// it previews); at the preview size, with its own roofline copy.
    ///
    /// - Throws: a usage error if the filter selects nothing (with `rows`, an empty plan
    ///   is returned).
    static func make(sizes: [ImageSize], filter: String?, rows: Set<String>? = nil) throws(ToolError) -> [Workload] {
        let regex: Regex<AnyRegexOutput>?
        do { regex = try filter.map { try Regex($0) } } catch {
            throw .usage("'--filter' is not a valid regular expression: \(error)")
        }
        var candidates = sizes.map { (size: $0, workloads: all(for: $0)) }
        if sizes.contains(where: { $0.pixelCount >= ImageSize.preview.pixelCount }) {
            if let i = candidates.firstIndex(where: { $0.size == .preview }) {
                candidates[i].workloads += previews
            } else {
                candidates.append((.preview, [Workload(kind: .copy(.samplesRGBA8), size: .preview)] + previews))
            }
        }
        var selected: [Workload] = []
        for (_, all) in candidates {
            let matching = all.filter { workload in
                (regex.map { workload.name.contains($0) } ?? true) && (rows?.contains(workload.name) ?? true)
            }
            let names = Set(matching.map(\.name))
            let rooflines = Set(matching.compactMap { $0.roofline?.rawValue })
            selected += all.filter { workload in
                if case .copy(let buffer) = workload.kind { return rooflines.contains(buffer.rawValue) }
                return names.contains(workload.name)
            }
        }
        // With `rows` (compare's fresh run) an empty plan is the caller's to report,
        // with the baseline's own options.
        guard !selected.isEmpty || rows != nil else {
            throw .usage("'--filter \(filter ?? "")' matches no benchmark at these sizes; --list without --filter prints every name")
        }
        return selected
    }
}
