// libFuzzer target for the Netpbm reader, with a write-and-read-back oracle.
//
// Not part of the SwiftPM package (fuzzing needs `-sanitize=fuzzer`, which the package
// cannot ask for without unsafeFlags). Tests/Scripts/fuzz-netpbm.sh builds it by compiling
// the Netpbm sources and this file into ONE module:
//
//     swiftc -sanitize=fuzzer,address -use-ld=lld -parse-as-library -O -swift-version 6 \
//         -module-name NetpbmFuzzer Sources/Netpbm/*.swift Tests/Fuzz/NetpbmFuzzer.swift -o netpbm-fuzzer
//
// Because the reader is compiled into this module, this file has no `import Netpbm`. It
// drives the reader and writer through their public API only; the one internal name it
// uses is the writer's own tuple-type rule, so the two cannot drift apart.
//
// What counts as a finding (libFuzzer stops and writes an artifact):
// - a crash, trap or ASan report inside the reader or the writer;
// - an input that takes longer than `-timeout` (a hang) or allocates past `-rss_limit_mb`
//   (the limits below keep legitimate decodes far under it);
// - `read` and `readAll` disagreeing about the first image or about the error;
// - the stream reader (`NetpbmStreamReader`, fed through a simulated pipe whose read size
//   and sample slices come from the input) disagreeing with `readAll`: it must decode the
//   same images, or fail where `readAll` fails, with the same error in its frame — except
//   that `readAll` refuses a raster too short for its samples before decoding it, so its
//   `truncatedRaster` may meet an earlier raster error in the stream, and that its byte
//   limit sums all images while the stream's applies to each;
// - an oracle failure (`fatalError`): a decoded image that the writer refuses in a format
//   that can hold it, or that reads back different. Every decoded image is written in every
//   compatible format (P1/P4 for bitmaps, P2/P5 for one plane, P3/P6 for three, P7 always)
//   and must read back with the same width, height, depth, maxval and samples.

import Foundation

/// Limits small enough that no legitimate decode comes near libFuzzer's malloc limit
/// (`-rss_limit_mb=2048`): at most 2^20 pixels per image and 64 MiB of samples in all.
private let fuzzLimits = NetpbmLimits(maxPixels: 1 << 20, maxBytes: 64 << 20)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)

    let first: Result<NetpbmImage, NetpbmError>
    do {
        first = .success(try NetpbmReader.read(bytes, limits: fuzzLimits))
    } catch {
        first = .failure(error)
    }

    let images: [NetpbmImage]
    do {
        images = try NetpbmReader.readAll(bytes, limits: fuzzLimits)
    } catch {
        // `readAll` decodes the first image exactly as `read` does, so if `read` failed the
        // error must be the same; if `read` succeeded, a later image (or trailing bytes) failed.
        if case .failure(let readError) = first, readError != error {
            fatalError("read threw \(readError) but readAll threw \(error)")
        }
        checkStream(bytes, against: .failure(error))
        return 0
    }
    checkStream(bytes, against: .success(images))

    guard case .success(let image) = first, image == images.first else {
        fatalError("readAll's first image differs from read's result \(first)")
    }
    for image in images {
        checkRoundTrip(image)
    }
    return 0
}

/// Reads `bytes` with the stream reader and compares the outcome with `readAll`'s.
private func checkStream(_ bytes: UnsafeBufferPointer<UInt8>, against whole: Result<[NetpbmImage], NetpbmError>) {
    if case .failure(.exceedsByteLimit) = whole { return }  // a sum over the stream: not comparable
    // Chunking and slicing chosen by the input, so the fuzzer explores them too.
    let readSize = 1 + Int(bytes.last ?? 0) % 61
    let band = 1 + bytes.count % 17
    let reader = NetpbmStreamReader(bytes: Array(bytes), readSize: readSize, limits: fuzzLimits)
    var images: [NetpbmImage] = []
    var buffer = [UInt16](repeating: 0, count: band)
    do throws(NetpbmError) {
        while let header = try reader.nextImage() {
            var samples: [UInt16] = []
            while reader.remainingSamples > 0 {
                let count = min(band, reader.remainingSamples)
                try buffer.withUnsafeMutableBufferPointer { (all) throws(NetpbmError) in
                    try reader.readSamples(into: UnsafeMutableBufferPointer(rebasing: all[..<count]))
                }
                samples += buffer[..<count]
            }
            images.append(NetpbmImage(
                unchecked: header.width, height: header.height, depth: header.depth, maxval: header.maxval,
                tupleType: header.tupleType, samples: samples, format: header.format))
        }
    } catch {
        guard error.frame != nil else { fatalError("stream error without its frame: \(error)") }
        switch whole {
        case .success:
            fatalError("readAll decoded the input but the stream threw \(error)")
        case .failure(let wholeError):
            if wholeError == error.underlying { return }
            if case .truncatedRaster = wholeError, error.phase == .raster || error.phase == .header { return }
            fatalError("readAll threw \(wholeError) but the stream threw \(error)")
        }
    }
    switch whole {
    case .success(let wholeImages):
        if images != wholeImages { fatalError("the stream decoded other images than readAll") }
    case .failure(let wholeError):
        fatalError("readAll threw \(wholeError) but the stream decoded \(images.count) images")
    }
}

/// The formats `image` must be writable in, given its depth and maxval.
private func compatibleFormats(_ image: NetpbmImage) -> [NetpbmFormat] {
    var formats: [NetpbmFormat] = [.pam]
    if image.depth == 1 {
        formats += [.plainPGM, .rawPGM]
        if image.maxval == 1 { formats += [.plainPBM, .rawPBM] }
    } else if image.depth == 3 {
        formats += [.plainPPM, .rawPPM]
    }
    return formats
}

/// Writes `image` in every compatible format and reads it back; traps on any difference.
private func checkRoundTrip(_ image: NetpbmImage) {
    var image = image
    // The reader accepts tuple types the writer refuses by design (a tab inside a
    // `TUPLTYPE` value, bytes that are not UTF-8); write those untyped.
    if !NetpbmImage.isWritableTupleType(image.tupleType.rawValue) {
        image.tupleType = .other("")
    }
    for format in compatibleFormats(image) {
        let encoded: [UInt8]
        do {
            encoded = try NetpbmWriter.encode(image, as: format)
        } catch {
            fatalError("writer refused a decoded \(image.width)×\(image.height)×\(image.depth) image, maxval \(image.maxval), as \(format.magic): \(error)")
        }
        let decoded: NetpbmImage
        do {
            decoded = try NetpbmReader.read(encoded, limits: fuzzLimits)
        } catch {
            fatalError("reading back \(format.magic) failed: \(error)")
        }
        guard decoded.format == format,
              decoded.width == image.width, decoded.height == image.height,
              decoded.depth == image.depth, decoded.maxval == image.maxval,
              decoded.samples == image.samples
        else {
            fatalError("\(format.magic) round trip changed the image: \(image.width)×\(image.height)×\(image.depth) maxval \(image.maxval) became \(decoded.width)×\(decoded.height)×\(decoded.depth) maxval \(decoded.maxval)")
        }
        if format == .pam, decoded.tupleType != image.tupleType {
            fatalError("P7 round trip changed TUPLTYPE \"\(image.tupleType.rawValue)\" to \"\(decoded.tupleType.rawValue)\"")
        }
    }
}
