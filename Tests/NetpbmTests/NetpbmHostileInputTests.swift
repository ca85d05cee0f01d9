// Hostile and unusual inputs, each a tiny file built here. Every test asserts either the
// exact decoded samples or the exact error case with its byte offset.

import Foundation
import Testing
@testable import Netpbm

/// The byte offset where `field` starts in `header(format, …)`: found by putting a unique
/// placeholder there (the offset does not depend on the token's length).
func fieldOffset(_ format: NetpbmFormat, _ field: NetpbmError.Field) -> Int {
    let marker = "@"
    let text: String
    switch field {
    case .width: text = header(format, width: marker, height: "1")
    case .height: text = header(format, width: "1", height: marker)
    case .depth: text = header(format, width: "1", height: "1", depth: marker)
    default: text = header(format, width: "1", height: "1", maxval: marker)
    }
    return offset(of: marker, in: ascii(text))
}

let rawFormats: [NetpbmFormat] = [.rawPBM, .rawPGM, .rawPPM, .pam]
let formatsWithMaxval: [NetpbmFormat] = [.plainPGM, .plainPPM, .rawPGM, .rawPPM, .pam]

@Suite("Netpbm hostile input")
struct NetpbmHostileInputTests {

    // MARK: Numbers

    @Test("Width and height overflowing 32 and 64 bits", arguments: NetpbmFormat.allCases)
    func overflowingDimensions(format: NetpbmFormat) {
        for digits in ["2147483648", "4294967296", "9223372036854775808", "18446744073709551616", "99999999999999999999"] {
            let wide = ascii(header(format, width: digits, height: "1") + "0")
            #expect(readError(wide) == .numberTooLarge(
                field: .width, digits: digits, limit: 2147483647, offset: fieldOffset(format, .width)))
            let tall = ascii(header(format, width: "1", height: digits) + "0")
            #expect(readError(tall) == .numberTooLarge(
                field: .height, digits: digits, limit: 2147483647, offset: fieldOffset(format, .height)))
        }
        // The largest allowed value passes the header (and then hits the pixel limit).
        let largest = ascii(header(format, width: "2147483647", height: "1") + "0")
        #expect(readError(largest) == .exceedsPixelLimit(width: 2147483647, height: 1, limit: 1 << 28, offset: 0))
    }

    @Test("Maxval and depth overflowing", arguments: formatsWithMaxval)
    func overflowingMaxval(format: NetpbmFormat) {
        for digits in ["65536", "4294967296", "18446744073709551616"] {
            let bytes = ascii(header(format, width: "1", height: "1", maxval: digits) + "0")
            #expect(readError(bytes) == .numberTooLarge(
                field: .maxval, digits: digits, limit: 65535, offset: fieldOffset(format, .maxval)))
        }
        if format == .pam {
            let bytes = ascii(header(.pam, width: "1", height: "1", depth: "4294967296"))
            #expect(readError(bytes) == .numberTooLarge(
                field: .depth, digits: "4294967296", limit: 2147483647, offset: fieldOffset(.pam, .depth)))
        }
    }

    @Test("Zero width, height, depth and maxval", arguments: NetpbmFormat.allCases)
    func zeroFields(format: NetpbmFormat) {
        #expect(readError(ascii(header(format, width: "0", height: "1") + "0"))
            == .zeroValue(field: .width, offset: fieldOffset(format, .width)))
        #expect(readError(ascii(header(format, width: "1", height: "000") + "0"))
            == .zeroValue(field: .height, offset: fieldOffset(format, .height)))
        if !format.isBitmap {
            #expect(readError(ascii(header(format, width: "1", height: "1", maxval: "0") + "0"))
                == .zeroValue(field: .maxval, offset: fieldOffset(format, .maxval)))
        }
        if format == .pam {
            #expect(readError(ascii(header(.pam, width: "1", height: "1", depth: "0")))
                == .zeroValue(field: .depth, offset: fieldOffset(.pam, .depth)))
        }
    }

    @Test("A sign before a number is rejected", arguments: NetpbmFormat.allCases)
    func signs(format: NetpbmFormat) {
        for sign in ["-", "+"] {
            let bytes = ascii(header(format, width: sign + "3", height: "1") + "000")
            #expect(readError(bytes) == .unexpectedByte(
                found: ascii(sign)[0], expected: .width, offset: fieldOffset(format, .width)))
        }
        // Also on a plain sample.
        #expect(readError(ascii("P2 2 1 4\n1 -1")) == .unexpectedByte(found: 0x2D, expected: .sample, offset: 11))
        #expect(readError(ascii("P1 2 1\n1-")) == .unexpectedByte(found: 0x2D, expected: .sample, offset: 8))
    }

    @Test("Megabyte-long digit strings fail fast", arguments: NetpbmFormat.allCases)
    func megabyteTokens(format: NetpbmFormat) {
        let digits = String(repeating: "7", count: 1 << 20)
        let start = ContinuousClock.now
        let error = readError(ascii(header(format, width: digits, height: "1")))
        if format == .pam {
            // The PAM line is too long before its value is even looked at.
            #expect(error == .pamHeaderLineTooLong(limit: 1024, offset: 3))
            let thousand = String(repeating: "1", count: 1000)
            #expect(readError(ascii(header(.pam, width: thousand, height: "1")))
                == .tokenTooLong(field: .width, limit: 20, offset: fieldOffset(.pam, .width)))
        } else {
            #expect(error == .tokenTooLong(field: .width, limit: 20, offset: 3))
        }
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test("Token length: 20 digits with leading zeros pass, 21 do not")
    func tokenLengthBoundary() {
        #expect(samples(ascii("P5 00000000000000000001 1 255\n") + [9]) == [9])
        #expect(readError(ascii("P5 000000000000000000001 1 255\n") + [9])
            == .tokenTooLong(field: .width, limit: 20, offset: 3))
        // A megabyte sample in a plain raster.
        #expect(readError(ascii("P2 1 1 255\n" + String(repeating: "1", count: 1 << 20)))
            == .tokenTooLong(field: .sample, limit: 20, offset: 11))
        // A sample that overflows 64 bits.
        #expect(readError(ascii("P2 1 1 255\n18446744073709551616"))
            == .numberTooLarge(field: .sample, digits: "18446744073709551616", limit: 255, offset: 11))
    }

    // MARK: Sizes

    @Test("A tiny file claiming 60000×60000 fails fast, before allocating", arguments: NetpbmFormat.allCases)
    func hugeClaims(format: NetpbmFormat) {
        let text = header(format, width: "60000", height: "60000")
        let bytes = ascii(text + "0 1")
        let start = ContinuousClock.now
        #expect(readError(bytes) == .exceedsPixelLimit(width: 60000, height: 60000, limit: 1 << 28, offset: 0))

        // Without limits the raster check still fails before any allocation.
        let unlimited = NetpbmLimits(maxPixels: .max, maxBytes: .max)
        let pixels = 60000 * 60000
        let expected: Int
        let rasterStart: Int
        switch format {
        case .plainPBM: expected = pixels; rasterStart = text.utf8.count - 1
        case .plainPGM: expected = 2 * pixels - 1; rasterStart = text.utf8.count - 1
        case .plainPPM: expected = 2 * 3 * pixels - 1; rasterStart = text.utf8.count - 1
        case .rawPBM: expected = 7500 * 60000; rasterStart = text.utf8.count
        case .rawPGM, .pam: expected = pixels; rasterStart = text.utf8.count
        case .rawPPM: expected = 3 * pixels; rasterStart = text.utf8.count
        }
        #expect(readError(bytes, limits: unlimited) == .truncatedRaster(
            expectedBytes: expected, availableBytes: bytes.count - rasterStart, offset: rasterStart))

        // A small custom limit.
        let small = NetpbmLimits(maxPixels: 99, maxBytes: .max)
        #expect(readError(ascii(header(format, width: "10", height: "10")), limits: small)
            == .exceedsPixelLimit(width: 10, height: 10, limit: 99, offset: 0))
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test("width × height × depth overflow is reported, not trapped")
    func sizeOverflow() {
        let unlimited = NetpbmLimits(maxPixels: .max, maxBytes: .max)
        let bytes = ascii(header(.pam, width: "2147483647", height: "2147483647", depth: "2147483647"))
        #expect(readError(bytes, limits: unlimited)
            == .sizeOverflow(width: 2147483647, height: 2147483647, depth: 2147483647, offset: 0))
        // Product fits, ×2 bytes per sample does not.
        let bytes2 = ascii(header(.pam, width: "2147483647", height: "2147483647", depth: "2"))
        #expect(readError(bytes2, limits: unlimited)
            == .sizeOverflow(width: 2147483647, height: 2147483647, depth: 2, offset: 0))
    }

    // MARK: Maxval and samples

    @Test("Odd maxvals decode exactly: 11, 15, 1023, 4095")
    func oddMaxvals() {
        #expect(samples(ascii("P5 3 1 11\n") + [0, 5, 11]) == [0, 5, 11])
        #expect(samples(ascii("P2 3 1 15\n0 7 15") ) == [0, 7, 15])
        #expect(samples(ascii("P5 3 1 1023\n") + [0x00, 0x00, 0x02, 0x00, 0x03, 0xFF]) == [0, 512, 1023])
        #expect(samples(ascii("P6 1 1 4095\n") + [0x00, 0x01, 0x08, 0x00, 0x0F, 0xFF]) == [1, 2048, 4095])
        #expect(samples(ascii("P3 1 1 4095\n1 2048 4095\n")) == [1, 2048, 4095])
        #expect(samples(ascii(header(.pam, width: "2", height: "1", maxval: "11")) + [3, 11]) == [3, 11])
        #expect(samples(ascii(header(.pam, width: "2", height: "1", maxval: "256")) + [0x01, 0x00, 0x00, 0xFF]) == [256, 255])
    }

    @Test("A sample above maxval, raw and plain")
    func samplesAboveMaxval() {
        #expect(readError(ascii("P5 2 1 11\n") + [5, 12]) == .sampleAboveMaxval(value: 12, maxval: 11, offset: 11))
        #expect(readError(ascii("P6 1 1 1023\n") + [0, 1, 0x04, 0x00, 0, 2])
            == .sampleAboveMaxval(value: 1024, maxval: 1023, offset: 14))
        let pam = ascii(header(.pam, width: "2", height: "1", depth: "2", maxval: "3"))
        #expect(readError(pam + [0, 1, 2, 4]) == .sampleAboveMaxval(value: 4, maxval: 3, offset: pam.count + 3))
        #expect(readError(ascii("P2 2 1 4\n3 5\n")) == .sampleAboveMaxval(value: 5, maxval: 4, offset: 11))
        #expect(readError(ascii("P3 1 1 4095\n0 4096 0"))
            == .sampleAboveMaxval(value: 4096, maxval: 4095, offset: 14))
        #expect(readError(ascii("P1 2 1\n02")) == .unexpectedByte(found: 0x32, expected: .sample, offset: 8))
        // maxval 65535 accepts every 16-bit value; maxval 255 every byte.
        #expect(samples(ascii("P5 1 1 65535\n") + [0xFF, 0xFF]) == [65535])
        #expect(samples(ascii("P5 1 1 255\n") + [0xFF]) == [255])
    }

    // MARK: Truncation

    @Test("Truncated rasters")
    func truncatedRasters() {
        #expect(readError(ascii("P1 5 1\n01")) == .truncatedRaster(expectedBytes: 5, availableBytes: 3, offset: 6))
        #expect(readError(ascii("P1 2 2\n0 1 0")) == .missingSamples(expected: 4, found: 3, offset: 12))
        #expect(readError(ascii("P2 2 2 255\n1 2 3")) == .truncatedRaster(expectedBytes: 7, availableBytes: 6, offset: 10))
        #expect(readError(ascii("P2 2 2 255\n1 2 3 \n\n")) == .missingSamples(expected: 4, found: 3, offset: 19))
        #expect(readError(ascii("P3 1 1 255\n1 2    ")) == .missingSamples(expected: 3, found: 2, offset: 18))
        #expect(readError(ascii("P4 10 2\n") + [0, 0, 0]) == .truncatedRaster(expectedBytes: 4, availableBytes: 3, offset: 8))
        #expect(readError(ascii("P5 2 2 255\n") + [1, 2, 3]) == .truncatedRaster(expectedBytes: 4, availableBytes: 3, offset: 11))
        #expect(readError(ascii("P6 1 1 65535\n") + [1, 2, 3, 4, 5]) == .truncatedRaster(expectedBytes: 6, availableBytes: 5, offset: 13))
        let pam = ascii(header(.pam, width: "2", height: "2", depth: "3", maxval: "255"))
        #expect(readError(pam + [UInt8](repeating: 0, count: 11))
            == .truncatedRaster(expectedBytes: 12, availableBytes: 11, offset: pam.count))
        // ENDHDR without a line feed at the very end: the raster is empty.
        let noLineFeed = ascii("P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR")
        #expect(readError(noLineFeed) == .truncatedRaster(expectedBytes: 1, availableBytes: 0, offset: noLineFeed.count))
    }

    @Test("Truncated headers")
    func truncatedHeaders() {
        #expect(readError([]) == .unexpectedEnd(expected: .magic, offset: 0))
        #expect(readError(ascii("P")) == .unexpectedEnd(expected: .magic, offset: 1))
        #expect(readError(ascii("P6")) == .unexpectedEnd(expected: .width, offset: 2))
        #expect(readError(ascii("P6 1")) == .unexpectedEnd(expected: .height, offset: 4))
        #expect(readError(ascii("P5 2 2")) == .unexpectedEnd(expected: .maxval, offset: 6))
        #expect(readError(ascii("P5 2 2 255")) == .unexpectedEnd(expected: .rasterSeparator, offset: 10))
        #expect(readError(ascii("P4 1 1")) == .unexpectedEnd(expected: .rasterSeparator, offset: 6))
        #expect(readError(ascii("P1 1 1")) == .truncatedRaster(expectedBytes: 1, availableBytes: 0, offset: 6))
        #expect(readError(ascii("P2 1 1 255")) == .truncatedRaster(expectedBytes: 1, availableBytes: 0, offset: 10))
        #expect(readError(ascii("P7")) == .unexpectedEnd(expected: .endOfHeader, offset: 2))
        #expect(readError(ascii("P7\nWIDTH 1\n")) == .unexpectedEnd(expected: .endOfHeader, offset: 11))
        #expect(readError(ascii("P7\nWIDTH 1")) == .unexpectedEnd(expected: .endOfHeader, offset: 10))
    }

    @Test("EOF inside a comment", arguments: NetpbmFormat.allCases.filter { $0 != .pam })
    func unterminatedComments(format: NetpbmFormat) {
        #expect(readError(ascii("\(format.magic) # comment")) == .unterminatedComment(offset: 3))
        #expect(readError(ascii("\(format.magic) 1 #")) == .unterminatedComment(offset: 5))
    }

    @Test("EOF inside a comment: raster separator, plain raster, PAM")
    func unterminatedCommentsElsewhere() {
        #expect(readError(ascii("P5 1 1 255#c")) == .unterminatedComment(offset: 10))
        #expect(readError(ascii("P4 1 1#")) == .unterminatedComment(offset: 6))
        #expect(readError(ascii("P2 2 1 4\n1 # x")) == .unterminatedComment(offset: 11))
        // A PAM comment line that reaches the end of input just ends the header early.
        #expect(readError(ascii("P7\n# comment")) == .unexpectedEnd(expected: .endOfHeader, offset: 12))
    }

    // MARK: Comments and separators

    @Test("Comments glued to numbers, several in a row, ended by CR alone")
    func comments() {
        #expect(samples(ascii("P2#c\n3#c\n1#c\n4#c\n0 2 4")) == [0, 2, 4])
        #expect(samples(ascii("P3\n#a\n#b\n\n#c\n1 1\n#d\n#e\n255\n#f\n1 2 3")) == [1, 2, 3])
        #expect(samples(ascii("P2\r#c\r3 1\r4\r0 2 4")) == [0, 2, 4])
        #expect(samples(ascii("P2 3 1 4\n0#x\n2#y\r4")) == [0, 2, 4])
        #expect(samples(ascii("P1 4 1\n0#c\n101")) == [1, 0, 1, 0])
        #expect(samples(ascii("P6\r#c\r1 1\r255\r") + [1, 2, 3]) == [1, 2, 3])
        // Any of the six whitespace bytes separates tokens.
        #expect(samples(ascii("P2\u{0B}3\u{0C}1\t4\r\n0 2 4")) == [0, 2, 4])
        // Non-ASCII bytes inside a comment are fine.
        #expect(samples(ascii("P5 #") + [0xA8, 0xFF] + ascii("\n1 1 255\n") + [42]) == [42])
    }

    @Test("A comment right after the last raw header token ends the header at its line end")
    func commentBeforeRaster() {
        // libnetpbm: the comment (through LF or CR) is the single separator byte.
        #expect(samples(ascii("P5#c\n2#c\n1#c\n255#c\n") + [0x23, 0x0A]) == [35, 10])
        #expect(samples(ascii("P4 8 1#c\n") + [0xF0]) == [0, 0, 0, 0, 1, 1, 1, 1])
        // A comment ended by CR: the LF after it is already raster.
        #expect(samples(ascii("P5 2 1 255#c\r\n") + [7]) == [10, 7])
        // Whitespace then '#': the '#' is raster.
        #expect(samples(ascii("P5 2 1 255 #c")) == [35, 99])
    }

    @Test("One-line headers with a single space before the raster")
    func oneLineHeaders() {
        #expect(samples(ascii("P5 2 1 255 ") + [0, 255]) == [0, 255])
        #expect(samples(ascii("P4 8 1 ") + [0x0F]) == [1, 1, 1, 1, 0, 0, 0, 0])
        #expect(samples(ascii("P6 1 1 255 ") + [1, 2, 3]) == [1, 2, 3])
        #expect(samples(ascii("P2 2 1 255 7 8")) == [7, 8])
        #expect(samples(ascii("P632 1 255 ") + [UInt8](repeating: 5, count: 96))?.count == 96)  // no space after magic, as libnetpbm
    }

    @Test("A raw raster may start with whitespace or '#'")
    func rasterLooksLikeHeader() {
        #expect(samples(ascii("P5 3 1 255\n\n #")) == [10, 32, 35])
        #expect(samples(ascii("P5 3 1 255\r") + [0x0D, 0x0A, 0x09]) == [13, 10, 9])
        #expect(samples(ascii("P4 8 1\n") + [0x20]) == [1, 1, 0, 1, 1, 1, 1, 1])
        #expect(samples(ascii("P6 1 1 255\n#\n ")) == [35, 10, 32])
        #expect(samples(ascii(header(.pam, width: "3", height: "1") + "# \n")) == [35, 32, 10])
    }

    @Test("Junk where a separator must be")
    func junkAfterTokens() {
        #expect(readError(ascii("P5 1 1 255!") + [0]) == .unexpectedByte(found: 0x21, expected: .rasterSeparator, offset: 10))
        #expect(readError(ascii("P4 1 1x") + [0]) == .unexpectedByte(found: 0x78, expected: .rasterSeparator, offset: 6))
        #expect(readError(ascii("P2 3x1 4\n0 2 4")) == .unexpectedByte(found: 0x78, expected: .height, offset: 4))
        #expect(readError(ascii("P2 3 1 4\n0 2x4")) == .unexpectedByte(found: 0x78, expected: .sample, offset: 12))
        #expect(readError(ascii("P3 0x10 1 255\n")) == .zeroValue(field: .width, offset: 3))
    }

    // MARK: Bitmaps

    @Test("PBM: 1 = black in the file, decoded 1 = white; pad bits ignored")
    func bitmaps() {
        #expect(samples(ascii("P1 4 2\n01011100")) == [1, 0, 1, 0, 0, 0, 1, 1])
        #expect(samples(ascii("P1 3 1\n1 0 1")) == [0, 1, 0])
        #expect(samples(ascii("P4 10 1\n") + [0x00, 0x40]) == [1, 1, 1, 1, 1, 1, 1, 1, 1, 0])
        #expect(samples(ascii("P4 10 1\n") + [0x00, 0x7F]) == [1, 1, 1, 1, 1, 1, 1, 1, 1, 0])  // pad bits set
        #expect(samples(ascii("P4 1 2\n") + [0xFF, 0x7F]) == [0, 1])
        #expect(samples(ascii("P4 16 1\n") + [0xA5, 0x0F]) == [0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0])
        let image = try? NetpbmReader.read(ascii("P4 1 1\n") + [0x80])
        #expect(image?.maxval == 1)
        #expect(image?.tupleType == .blackAndWhite)
    }

    // MARK: Signatures

    @Test("Non-Netpbm bytes and look-alikes are rejected by magic number")
    func signatures() {
        #expect(readError([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == .invalidMagic(found: [0x89, 0x50], offset: 0))
        #expect(readError(ascii("GIF89a")) == .invalidMagic(found: ascii("GI"), offset: 0))
        #expect(readError(ascii("FORM\0\0\0\0PBM ")) == .invalidMagic(found: ascii("FO"), offset: 0))
        #expect(readError(ascii("P0 1 1\n")) == .invalidMagic(found: ascii("P0"), offset: 0))
        #expect(readError(ascii("P8 1 1\n")) == .invalidMagic(found: ascii("P8"), offset: 0))
        #expect(readError(ascii("p5 1 1 255\n")) == .invalidMagic(found: ascii("p5"), offset: 0))
        #expect(readError(ascii("X")) == .invalidMagic(found: ascii("X"), offset: 0))
        #expect(readError(ascii("\nP5 1 1 255\n0")) == .invalidMagic(found: ascii("\nP"), offset: 0))
        let pfm = NetpbmError.unsupportedFormat(name: "PFM (Portable Float Map, \"PF\"/\"Pf\")", offset: 0)
        #expect(readError(ascii("PF\n1 1\n-1.0\n") + [0, 0, 0, 0]) == pfm)
        #expect(readError(ascii("Pf\n1 1\n-1.0\n") + [0, 0, 0, 0]) == pfm)
    }

    @Test("P7 332 is an XV thumbnail, not PAM")
    func xvThumbnail() {
        let xv = NetpbmError.unsupportedFormat(name: "XV thumbnail (\"P7 332\")", offset: 0)
        #expect(readError(ascii("P7 332\n#XVVERSION:Version 2.28  Rev: 9/26/92\n#END_OF_COMMENTS\n48 40 255\n")) == xv)
        #expect(readError(ascii("P7332\n")) == xv)
        #expect(readError(ascii("P7 foo\n")) == .unexpectedByte(found: 0x66, expected: .lineEnd, offset: 3))
        // Spaces or CR after P7 are fine.
        #expect(samples(ascii("P7 \r\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 9\nENDHDR\n") + [9]) == [9])
    }

    // MARK: Streams

    @Test("Several images in one stream; trailing bytes")
    func multipleImages() throws {
        let a = try NetpbmImage(width: 2, height: 1, depth: 1, maxval: 255, tupleType: .grayscale, samples: [1, 2], format: .rawPGM)
        let b = try NetpbmImage(width: 1, height: 1, depth: 3, maxval: 65535, tupleType: .rgb, samples: [1, 2, 65535], format: .rawPPM)
        let c = try NetpbmImage(width: 1, height: 2, depth: 4, maxval: 7, tupleType: .rgbAlpha, samples: [1, 2, 3, 4, 5, 6, 7, 0], format: .pam)
        let d = try NetpbmImage(width: 3, height: 1, depth: 1, maxval: 4, tupleType: .grayscale, samples: [0, 2, 4], format: .plainPGM)
        let e = try NetpbmImage(width: 10, height: 2, depth: 1, maxval: 1, tupleType: .blackAndWhite,
                                samples: (0..<20).map { UInt16($0 % 3 == 0 ? 0 : 1) }, format: .rawPBM)
        let f = try NetpbmImage(width: 2, height: 1, depth: 1, maxval: 1, tupleType: .blackAndWhite, samples: [0, 1], format: .plainPBM)
        let images = [a, b, c, d, e, f]
        let parts = try images.map { try NetpbmWriter.encode($0) }

        let direct = parts.reduce([], +)
        #expect(try NetpbmReader.readAll(direct) == images)
        #expect(try NetpbmReader.read(direct) == a)
        #expect(try NetpbmReader.readAll(NetpbmWriter.encode(images)) == images)

        let spaced = parts.dropFirst().reduce(parts[0]) { $0 + ascii(" \t\r\n") + $1 } + ascii("\n\n \u{0B}\u{0C}")
        #expect(try NetpbmReader.readAll(spaced) == images)

        // After the last image only whitespace may follow.
        let junk = direct + ascii("\nX")
        #expect(readAllError(junk) == .invalidMagic(found: ascii("X"), offset: direct.count + 1))
        #expect(readAllError(direct + [0]) == .invalidMagic(found: [0], offset: direct.count))
        #expect(readAllError(direct + ascii("P")) == .unexpectedEnd(expected: .magic, offset: direct.count + 1))
        #expect(readAllError(direct + ascii("P5 1 1 255\n")) == .truncatedRaster(expectedBytes: 1, availableBytes: 0, offset: direct.count + 11))
        #expect(readAllError([]) == .unexpectedEnd(expected: .magic, offset: 0))
        // `read` ignores whatever follows the first raster.
        #expect(try NetpbmReader.read(junk) == a)
        #expect(samples(ascii("P5 1 1 255\n") + [7] + ascii("garbage")) == [7])
    }

    @Test("Collections without contiguous storage and slices are accepted")
    func otherCollections() throws {
        let bytes = ascii("P5 2 1 255\n") + [3, 4]
        #expect(try NetpbmReader.read(Data(bytes)).samples == [3, 4])
        #expect(try NetpbmReader.read(bytes[...]).samples == [3, 4])
        #expect(try NetpbmReader.read(bytes.lazy.map { $0 }).samples == [3, 4])
        // Offsets count from the start of the collection given, even for a slice.
        let padded = [0xEE] + bytes
        #expect(throws: NetpbmError.truncatedRaster(expectedBytes: 2, availableBytes: 1, offset: 11)) {
            try NetpbmReader.read(padded[1..<padded.count - 1])
        }
    }

    // MARK: Robustness

    @Test("Seeded random corruption never crashes or hangs")
    func randomCorruption() throws {
        var generator = SeededGenerator(seed: 0xBAD_F11E)
        let seeds: [[UInt8]] = [
            ascii("P1 4 2\n0101 1100\n"),
            ascii("P2 3 2 1023\n0 2 4\n1023 # c\n7 8\n"),
            ascii("P3 2 1 255\n1 2 3 4 5 6\n"),
            ascii("P4 10 2\n") + [0xA5, 0xC0, 0x5A, 0x40],
            ascii("P5 2 2 65535\n") + [0, 1, 2, 3, 4, 5, 6, 7],
            ascii("P6 1 2 255\n") + [1, 2, 3, 4, 5, 6],
            ascii("P7\nWIDTH 2\nHEIGHT 1\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n") + [1, 2, 3, 4, 5, 6, 7, 8],
        ]
        let interesting: [UInt8] = ascii("0123456789 #\n\r\t-+P7") + [0, 0xFF, 0x80]
        var decoded = 0
        var rejected = 0
        for _ in 0..<3000 {
            var bytes = seeds[Int.random(in: 0..<seeds.count, using: &generator)]
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[position] = interesting[Int.random(in: 0..<interesting.count, using: &generator)]
                case 1: bytes[position] = UInt8.random(in: 0...255, using: &generator)
                case 2: bytes.removeSubrange(position...)
                default: bytes.insert(interesting[Int.random(in: 0..<interesting.count, using: &generator)], at: position)
                }
                if bytes.isEmpty { break }
            }
            let limits = NetpbmLimits(maxPixels: 1 << 16, maxBytes: 1 << 20)
            do {
                let images = try NetpbmReader.readAll(bytes, limits: limits)
                for image in images { try image.validate() }
                decoded += 1
            } catch {
                #expect(!error.description.isEmpty)
                rejected += 1
            }
        }
        #expect(decoded > 0)
        #expect(rejected > 0)
    }
}
