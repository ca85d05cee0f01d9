// libFuzzer target for the `.cube` reader, with write-and-read-back and kernel oracles.
//
// Not part of the SwiftPM package (fuzzing needs `-sanitize=fuzzer`, which the package
// cannot ask for without unsafeFlags). Tests/Scripts/fuzz-cube.sh builds it by compiling
// the PhotoKernels sources and this file into ONE module:
//
//     swiftc -sanitize=fuzzer,address -use-ld=lld -parse-as-library -O -swift-version 6 \
//         -module-name CubeFuzzer Sources/PhotoKernels/*.swift Tests/Fuzz/CubeFuzzer.swift -o cube-fuzzer
//
// Because the library is compiled into this module, this file has no `import PhotoKernels`.
//
// What counts as a finding (libFuzzer stops and writes an artifact):
// - a crash, trap or ASan report in the reader, the writer or the kernel;
// - an input that takes longer than `-timeout` (a hang) or allocates past `-rss_limit_mb`;
// - an oracle failure (`fatalError`):
//   - an error whose line number lies outside the input's lines;
//   - a parsed file that `encoded()` does not write back to an equal file;
//   - the table's vector schedule and scalar reference differing in any bit on a row of
//     probe pixels (inside and outside the domain, ±∞, NaN), for both interpolations and
//     two intensities, or a finite probe pixel giving a non-finite colour at intensity 1.

import Foundation

/// At most 2¹⁸ entries (4 MiB as a table), far under libFuzzer's `-rss_limit_mb=2048`.
private let fuzzLimits = CubeLimits(maxEntries: 1 << 18, maxLineBytes: 1024, maxFileBytes: 1 << 20)

/// Probe pixels: corners, middles, outside the default domain, huge, infinite and NaN.
private let probes: [SIMD4<Float>] = {
    var pixels: [SIMD4<Float>] = [
        SIMD4(0, 0, 0, 1), SIMD4(1, 1, 1, 0.5), SIMD4(0.5, 0.25, 0.75, 0), SIMD4(0.999, 0.001, 0.5, 1),
        SIMD4(-0.5, 1.5, 0.3, 1), SIMD4(1e30, -1e30, 0.6, 1), SIMD4(.infinity, -.infinity, 0.2, 1),
        SIMD4(.nan, 0.5, 0.5, 1), SIMD4(0.1, 0.2, 0.3, .nan), SIMD4(-0.0, 0.7, 0.4, -0.0),
    ]
    // Fractions that tie and order every way.
    for (a, b, c) in [(0.2, 0.2, 0.7), (0.7, 0.2, 0.2), (0.3, 0.6, 0.6), (0.4, 0.4, 0.4), (0.9, 0.1, 0.5),
                      (0.1, 0.9, 0.5), (0.5, 0.1, 0.9)] as [(Float, Float, Float)] {
        pixels.append(SIMD4(a, b, c, 1))
    }
    return pixels
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let file: CubeFile
    do {
        file = try CubeFile.parse(bytes, limits: fuzzLimits)
    } catch {
        // Lines end at LF, CR LF or CR; an empty input reports line 1.
        var lines = 0, i = 0
        while i < size {
            if bytes[i] == 0x0A || bytes[i] == 0x0D {
                lines += 1
                if bytes[i] == 0x0D, i + 1 < size, bytes[i + 1] == 0x0A { i += 1 }
            }
            i += 1
        }
        let last = size > 0 && bytes[size - 1] != 0x0A && bytes[size - 1] != 0x0D ? lines + 1 : max(lines, 1)
        guard error.line >= 1 && error.line <= last, !error.description.isEmpty else {
            fatalError("error on line \(error.line) of a \(last)-line input: \(error)")
        }
        return 0
    }

    // Write and read back. The title may grow (an invalid UTF-8 byte becomes three bytes of
    // U+FFFD), so the read-back allows long lines.
    let readBack: CubeFile
    do {
        readBack = try CubeFile.parse(file.encoded(), limits: CubeLimits(maxEntries: fuzzLimits.maxEntries,
                                                                         maxLineBytes: 1 << 16))
    } catch {
        fatalError("reading back the encoded file failed: \(error)")
    }
    guard readBack == file else { fatalError("encoded() changed the file: \(file.title ?? "")") }

    // Both schedules on the probe row, at two widths (every tail of a 4-pixel group).
    var cube = file.cube
    for interpolation in ColorCube.Interpolation.allCases {
        cube.interpolation = interpolation
        for intensity in [1.0, 0.5] {
            cube.intensity = intensity
            for width in [probes.count, 5] {
                var vector = Array(probes.prefix(width)), scalar = vector
                let location = RowLocation(y: 0, imageWidth: width, imageHeight: 1)
                vector.withUnsafeMutableBufferPointer { cube.apply($0, at: location, variant: .simd4) }
                scalar.withUnsafeMutableBufferPointer { cube.apply($0, at: location, variant: .scalar) }
                for (n, (v, s)) in zip(vector, scalar).enumerated() {
                    let same = (0..<3).allSatisfy { v[$0].bitPattern == s[$0].bitPattern || (v[$0].isNaN && s[$0].isNaN) }
                        && v.w.bitPattern == probes[n].w.bitPattern && s.w.bitPattern == probes[n].w.bitPattern
                    guard same else {
                        fatalError("\(cube.dimension) \(interpolation) intensity \(intensity): pixel \(n) \(probes[n]) gave \(v) (vector) and \(s) (scalar)")
                    }
                    let p = probes[n]
                    if intensity == 1, p.x.isFinite, p.y.isFinite, p.z.isFinite,
                       !(v.x.isFinite && v.y.isFinite && v.z.isFinite) {
                        fatalError("\(cube.dimension) \(interpolation): finite pixel \(p) gave \(v)")
                    }
                }
            }
        }
    }
    return 0
}
