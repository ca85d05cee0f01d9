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
        return 0
    }

    guard case .success(let image) = first, image == images.first else {
        fatalError("readAll's first image differs from read's result \(first)")
    }
    for image in images {
        checkRoundTrip(image)
    }
    return 0
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
