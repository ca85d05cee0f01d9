// The public corpus (/work/shared/corpus/pnm-public, see its SOURCES.md): every file either
// decodes or throws a NetpbmError; known-valid files decode with the documented sizes;
// known-invalid files fail for the documented reason; plain/raw pairs agree; hand-checked
// pixels.

import Foundation
import Testing
@testable import Netpbm

@Suite("Netpbm corpus")
struct NetpbmCorpusTests {

    struct Expected {
        var width: Int, height: Int, depth: Int, maxval: Int, format: NetpbmFormat, tupleType: TupleType
    }

    /// Every known-valid file (SOURCES.md) with its size, maxval and format.
    static let valid: [String: Expected] = {
        func e(_ w: Int, _ h: Int, _ d: Int, _ m: Int, _ f: NetpbmFormat, _ t: TupleType) -> Expected {
            Expected(width: w, height: h, depth: d, maxval: m, format: f, tupleType: t)
        }
        return [
            "image-rs/pnm/pam/l1.pam": e(9, 7, 1, 1, .pam, .blackAndWhite),
            "image-rs/pnm/pam/l8.pam": e(9, 7, 1, 5, .pam, .grayscale),
            "image-rs/pnm/pam/l16.pam": e(9, 7, 1, 65535, .pam, .grayscale),
            "image-rs/pnm/pam/la1.pam": e(9, 7, 2, 1, .pam, .blackAndWhiteAlpha),
            "image-rs/pnm/pam/la8.pam": e(9, 7, 2, 255, .pam, .grayscaleAlpha),
            "image-rs/pnm/pam/la16.pam": e(9, 7, 2, 13107, .pam, .grayscaleAlpha),
            "image-rs/pnm/pam/r8.pam": e(9, 7, 3, 255, .pam, .rgb),
            "image-rs/pnm/pam/r16.pam": e(9, 7, 3, 4369, .pam, .rgb),
            "image-rs/pnm/pam/ra8.pam": e(9, 7, 4, 3, .pam, .rgbAlpha),
            "image-rs/pnm/pam/ra16.pam": e(9, 7, 4, 65535, .pam, .rgbAlpha),
            "image-rs/pnm/pbm/issue-794.pbm": e(10, 10, 1, 1, .rawPBM, .blackAndWhite),
            "image-rs/pnm/pbm/l1a.pbm": e(9, 7, 1, 1, .plainPBM, .blackAndWhite),
            "image-rs/pnm/pbm/l1b.pnm": e(9, 7, 1, 1, .rawPBM, .blackAndWhite),
            "image-rs/pnm/pbm/narrow.pbm": e(1, 9, 1, 1, .rawPBM, .blackAndWhite),
            "image-rs/pnm/pgm/l8a.pgm": e(9, 7, 1, 85, .plainPGM, .grayscale),
            "image-rs/pnm/pgm/l8b.pgm": e(9, 7, 1, 255, .rawPGM, .grayscale),
            "image-rs/pnm/pgm/l16a.pgm": e(9, 7, 1, 1285, .plainPGM, .grayscale),
            "image-rs/pnm/pgm/l16b.pnm": e(9, 7, 1, 65535, .rawPGM, .grayscale),
            "image-rs/pnm/ppm/r8a.ppm": e(9, 7, 3, 51, .plainPPM, .rgb),
            "image-rs/pnm/ppm/r8b.pnm": e(9, 7, 3, 255, .rawPPM, .rgb),
            "image-rs/pnm/ppm/r16a.ppm": e(9, 7, 3, 3855, .plainPPM, .rgb),
            "image-rs/pnm/ppm/r16b.ppm": e(9, 7, 3, 65535, .rawPPM, .rgb),
            "netpbm/maze.pbm": e(57, 59, 1, 1, .rawPBM, .blackAndWhite),
            "netpbm/testgrid.pbm": e(14, 16, 1, 1, .rawPBM, .blackAndWhite),
            "netpbm/testimg.ppm": e(227, 149, 3, 255, .rawPPM, .rgb),
            "pillow/16_bit_binary.pgm": e(20, 100, 1, 65535, .rawPGM, .grayscale),
            "pillow/hopper.pnm": e(128, 128, 3, 255, .rawPPM, .rgb),
            "pillow/hopper.ppm": e(128, 128, 3, 255, .rawPPM, .rgb),
            "pillow/hopper_16bit.pgm": e(128, 128, 1, 65535, .rawPGM, .grayscale),
            "pillow/hopper_16bit_plain.pgm": e(128, 128, 1, 65535, .plainPGM, .grayscale),
            "pillow/hopper_1bit.pbm": e(128, 128, 1, 1, .rawPBM, .blackAndWhite),
            "pillow/hopper_1bit_plain.pbm": e(128, 128, 1, 1, .plainPBM, .blackAndWhite),
            "pillow/hopper_8bit.pgm": e(128, 128, 1, 255, .rawPGM, .grayscale),
            "pillow/hopper_8bit_plain.pgm": e(128, 128, 1, 255, .plainPGM, .grayscale),
            "pillow/hopper_8bit.ppm": e(128, 128, 3, 255, .rawPPM, .rgb),
            "pillow/hopper_8bit_plain.ppm": e(128, 128, 3, 255, .plainPPM, .rgb),
            "pillow/ppm/9_bit.pgm": e(128, 128, 1, 511, .rawPGM, .grayscale),
            "pillow/ppm/10_bit.pgm": e(128, 128, 1, 1023, .rawPGM, .grayscale),
            "pillow/ppm/11_bit.pgm": e(128, 128, 1, 2047, .rawPGM, .grayscale),
            "pillow/ppm/12_bit.pgm": e(128, 128, 1, 4095, .rawPGM, .grayscale),
            "pillow/ppm/13_bit.pgm": e(128, 128, 1, 8191, .rawPGM, .grayscale),
            "pillow/ppm/14_bit.pgm": e(128, 128, 1, 16383, .rawPGM, .grayscale),
            "pillow/ppm/15_bit.pgm": e(128, 128, 1, 32767, .rawPGM, .grayscale),
            "twelvemonkeys/pam/rgba.pam": e(4, 2, 4, 255, .pam, .rgbAlpha),
            "twelvemonkeys/pam/snail2.pam": e(256, 256, 3, 255, .pam, .rgb),
            "twelvemonkeys/pbm/MARBLES.PBM": e(1152, 813, 1, 1, .rawPBM, .blackAndWhite),
            "twelvemonkeys/pbm/circle2.pnm": e(200, 200, 1, 1, .rawPBM, .blackAndWhite),
            "twelvemonkeys/pbm/j.pbm": e(6, 10, 1, 1, .plainPBM, .blackAndWhite),
            "twelvemonkeys/pgm/feep.pgm": e(24, 7, 1, 15, .plainPGM, .grayscale),
            "twelvemonkeys/pgm/feep16.pgm": e(24, 7, 1, 4095, .plainPGM, .grayscale),
            "twelvemonkeys/pgm/house.l.pgm": e(367, 241, 1, 255, .rawPGM, .grayscale),
            "twelvemonkeys/pgm/rays2.pnm": e(200, 200, 1, 255, .rawPGM, .grayscale),
            "twelvemonkeys/ppm/Matisse-Small.ppm": e(227, 237, 3, 255, .rawPPM, .rgb),
            "twelvemonkeys/ppm/colors.ppm": e(3, 2, 3, 255, .plainPPM, .rgb),
            "twelvemonkeys/ppm/gogol.ppm": e(203, 256, 3, 255, .rawPPM, .rgb),
            "twelvemonkeys/ppm/snail2.pnm": e(256, 256, 3, 255, .rawPPM, .rgb),
        ]
    }()

    /// Known-invalid files and the exact error each must produce.
    static let invalid: [String: NetpbmError] = [
        "pillow/courB08.pbm": .invalidMagic(found: [0x89, 0x50], offset: 0),  // a PNG
        "pillow/negative_size.ppm": .numberTooLarge(field: .height, digits: "358888888632", limit: 2147483647, offset: 5),
        "twelvemonkeys/not-netpbm-iff/ASH.PBM": .invalidMagic(found: ascii("FO"), offset: 0),  // IFF FORM
        "twelvemonkeys/xv-thumb/xv-thumb.xvt": .unsupportedFormat(name: "XV thumbnail (\"P7 332\")", offset: 0),
        "pillow/hopper.pfm": .unsupportedFormat(name: "PFM (Portable Float Map, \"PF\"/\"Pf\")", offset: 0),
        "pillow/hopper_be.pfm": .unsupportedFormat(name: "PFM (Portable Float Map, \"PF\"/\"Pf\")", offset: 0),
    ]

    /// Plain/raw (and PAM/PPM) pairs that SOURCES.md lists as equal after normalisation.
    static let pairs: [(String, String)] = [
        ("image-rs/pnm/pbm/l1a.pbm", "image-rs/pnm/pbm/l1b.pnm"),
        ("image-rs/pnm/pam/l1.pam", "image-rs/pnm/pbm/l1b.pnm"),
        ("image-rs/pnm/pgm/l8a.pgm", "image-rs/pnm/pgm/l8b.pgm"),
        ("image-rs/pnm/pgm/l16a.pgm", "image-rs/pnm/pgm/l16b.pnm"),
        ("image-rs/pnm/ppm/r8a.ppm", "image-rs/pnm/ppm/r8b.pnm"),
        ("image-rs/pnm/ppm/r16a.ppm", "image-rs/pnm/ppm/r16b.ppm"),
        ("pillow/hopper_16bit_plain.pgm", "pillow/hopper_16bit.pgm"),
        ("pillow/hopper_1bit_plain.pbm", "pillow/hopper_1bit.pbm"),
        ("pillow/hopper_8bit_plain.pgm", "pillow/hopper_8bit.pgm"),
        ("pillow/hopper_8bit_plain.ppm", "pillow/hopper_8bit.ppm"),
        ("twelvemonkeys/pam/snail2.pam", "twelvemonkeys/ppm/snail2.pnm"),
    ]

    static func read(_ relativePath: String, in root: URL) throws(NetpbmError) -> NetpbmImage {
        try NetpbmReader.read(contentsOf: root.appendingPathComponent(relativePath))
    }

    @Test("Every corpus file decodes or throws NetpbmError; the known ones as documented")
    func walkCorpus() throws {
        guard let root = corpusRoot() else { return }
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        var decoded = 0
        var rejected = 0
        var seenValid = Set<String>()
        var seenInvalid = Set<String>()
        while let url = enumerator?.nextObject() as? URL {
            guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true,
                  url.lastPathComponent != "SOURCES.md" else { continue }
            let relative = String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))
            // Both entry points must terminate cleanly; the type system guarantees that any
            // error is a NetpbmError.
            let all: Result<[NetpbmImage], NetpbmError> = Result { () throws(NetpbmError) in try NetpbmReader.readAll(contentsOf: url) }
            do {
                let image = try NetpbmReader.read(contentsOf: url)
                decoded += 1
                #expect(image.samples.count == image.width * image.height * image.depth, "\(relative)")
                #expect(image.samples.allSatisfy { Int($0) <= image.maxval }, "\(relative)")
                if let expected = Self.valid[relative] {
                    seenValid.insert(relative)
                    #expect(image.width == expected.width, "\(relative)")
                    #expect(image.height == expected.height, "\(relative)")
                    #expect(image.depth == expected.depth, "\(relative)")
                    #expect(image.maxval == expected.maxval, "\(relative)")
                    #expect(image.format == expected.format, "\(relative)")
                    #expect(image.tupleType == expected.tupleType, "\(relative)")
                    // Known-valid files hold exactly one image plus at most whitespace.
                    #expect((try? all.get()) == [image], "\(relative)")
                }
                if Self.invalid[relative] != nil {
                    Issue.record("\(relative) should have been rejected")
                }
            } catch {
                rejected += 1
                #expect(!error.description.isEmpty)
                if let expected = Self.invalid[relative] {
                    seenInvalid.insert(relative)
                    #expect(error == expected, "\(relative): \(error)")
                }
                if Self.valid[relative] != nil {
                    Issue.record("\(relative) should decode but threw \(error)")
                }
            }
        }
        print("Netpbm corpus: \(decoded) decoded, \(rejected) rejected")
        #expect(seenValid == Set(Self.valid.keys))
        #expect(seenInvalid == Set(Self.invalid.keys))
        #expect(decoded + rejected == 354)
    }

    @Test("Streaming every corpus file in bands of 1, 7 and 65536 samples gives readAll's images or its error",
          arguments: [1, 7, 1 << 16])
    func streamingAgrees(band: Int) throws {
        guard let root = corpusRoot() else { return }
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        var compared = 0
        while let url = enumerator?.nextObject() as? URL {
            guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true,
                  url.lastPathComponent != "SOURCES.md" else { continue }
            let name = url.lastPathComponent
            let whole = Result { () throws(NetpbmError) in try NetpbmReader.readAll(contentsOf: url) }
            // Through a real file descriptor, read(2) by read(2).
            let streamed = Result { () throws(NetpbmError) in
                try NetpbmStreamTests.readImages(NetpbmStreamReader(contentsOf: url), band: band)
            }
            compared += 1
            switch (whole, streamed) {
            case (.success(let images), .success(let streamedImages)):
                #expect(streamedImages == images, "\(name)")
                if band == 7, images.allSatisfy({ $0.maxval <= 255 }) {
                    #expect(try NetpbmStreamTests.readImages8(NetpbmStreamReader(contentsOf: url), band: band) == images, "\(name)")
                }
            case (.failure(let error), .failure(let streamError)):
                #expect(streamError.frame != nil, "\(name)")
                // The same error, except where readAll refuses a raster too short for its
                // samples before decoding it and the stream finds an earlier bad byte.
                if streamError.underlying != error {
                    guard case .truncatedRaster = error else {
                        Issue.record("\(name): readAll threw \(error) but the stream \(streamError)")
                        continue
                    }
                }
            default:
                Issue.record("\(name): readAll gave \(whole) but the stream \(streamed)")
            }
        }
        #expect(compared == 354)
    }

    @Test("Plain/raw pairs decode to equal normalised values")
    func pairsAgree() throws {
        guard let root = corpusRoot() else { return }
        for (first, second) in Self.pairs {
            let a = try Self.read(first, in: root)
            let b = try Self.read(second, in: root)
            #expect(sameNormalisedValues(a, b), "\(first) vs \(second)")
        }
        // The seven n-bit Pillow files are one picture at 9…15 bits. They are not exact
        // rescalings of hopper_8bit.pgm (a different conversion), but agree with each other:
        // scaled to the 9-bit file's range they differ by at most 2 units of 511.
        let nine = try Self.read("pillow/ppm/9_bit.pgm", in: root)
        for bits in 10...15 {
            let image = try Self.read("pillow/ppm/\(bits)_bit.pgm", in: root)
            #expect(image.maxval == (1 << bits) - 1)
            let worst = zip(image.samples, nine.samples).map { v, r in
                abs(Int(v) * nine.maxval - Int(r) * image.maxval)
            }.max() ?? 0
            #expect(worst <= 2 * image.maxval, "\(bits)-bit vs 9-bit: \(Double(worst) / Double(image.maxval)) units")
        }
    }

    @Test("Decoded corpus files survive re-encoding in every compatible format")
    func corpusRoundTrip() throws {
        guard let root = corpusRoot() else { return }
        for path in Self.valid.keys.sorted() {
            let image = try Self.read(path, in: root)
            for format in NetpbmFormat.allCases {
                if let depth = format.fixedDepth, depth != image.depth { continue }
                if format.isBitmap, image.maxval != 1 { continue }
                let decoded = try NetpbmReader.read(NetpbmWriter.encode(image, as: format))
                #expect(decoded.samples == image.samples, "\(path) as \(format)")
                #expect(decoded.maxval == image.maxval, "\(path) as \(format)")
            }
        }
    }

    // MARK: Hand-checked pixels

    @Test("colors.ppm: red, green, blue / yellow, white, black")
    func colors() throws {
        guard let root = corpusRoot() else { return }
        let image = try Self.read("twelvemonkeys/ppm/colors.ppm", in: root)
        #expect(image.samples == [
            255, 0, 0, 0, 255, 0, 0, 0, 255,
            255, 255, 0, 255, 255, 255, 0, 0, 0,
        ])
    }

    @Test("rgba.pam: colours and straight alpha 255 then 127")
    func rgbaAlpha() throws {
        guard let root = corpusRoot() else { return }
        let image = try Self.read("twelvemonkeys/pam/rgba.pam", in: root)
        #expect(image.tupleType.hasAlpha)
        let alpha = stride(from: 3, to: image.samples.count, by: 4).map { image.samples[$0] }
        #expect(alpha == [255, 255, 255, 255, 127, 127, 127, 127])
        #expect(Array(image.samples[0..<16]) == [0, 0, 255, 255, 0, 255, 0, 255, 255, 0, 0, 255, 255, 255, 255, 255])
    }

    @Test("l1.pam is BLACKANDWHITE with 1 = white; PBM decodes with the same convention")
    func blackAndWhite() throws {
        guard let root = corpusRoot() else { return }
        let pam = try Self.read("image-rs/pnm/pam/l1.pam", in: root)
        // First row in the file: 00 01 01 00 00 01 01 01 00 (1 = white).
        #expect(Array(pam.samples[0..<9]) == [0, 1, 1, 0, 0, 1, 1, 1, 0])
        // l1a.pbm's first row is "100110001" with 1 = black: the inverse.
        let plain = try Self.read("image-rs/pnm/pbm/l1a.pbm", in: root)
        #expect(Array(plain.samples[0..<9]) == [0, 1, 1, 0, 0, 1, 1, 1, 0])
        #expect(plain.samples == pam.samples)
    }

    @Test("feep.pgm and j.pbm match the Netpbm manual's examples")
    func manualExamples() throws {
        guard let root = corpusRoot() else { return }
        let feep = try Self.read("twelvemonkeys/pgm/feep.pgm", in: root)
        // Second row of FEEP: "0  3  3  3  3  0  0  7  7  7  7  0  0 11 11 11 11  0  0 15 15 15 15  0".
        #expect(Array(feep.samples[24..<48]) == [0, 3, 3, 3, 3, 0, 0, 7, 7, 7, 7, 0, 0, 11, 11, 11, 11, 0, 0, 15, 15, 15, 15, 0])
        let j = try Self.read("twelvemonkeys/pbm/j.pbm", in: root)
        // Row 0 of the "J": 0 0 0 0 1 0 (1 = black in the file), so white except x = 4.
        #expect(Array(j.samples[0..<6]) == [1, 1, 1, 1, 0, 1])
    }
}
