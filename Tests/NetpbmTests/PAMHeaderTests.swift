// PAM header rules: keywords exactly once in any order, TUPLTYPE joining, comments, blank
// lines, CRLF, line and tuple-type length limits, depth versus tuple type.

import Foundation
import Testing
@testable import Netpbm

@Suite("PAM header")
struct PAMHeaderTests {

    /// A PAM file from header lines (joined with LF, `P7` and `ENDHDR` added) and raster.
    func pam(_ lines: [String], raster: [UInt8] = [0]) -> [UInt8] {
        ascii((["P7"] + lines + ["ENDHDR"]).joined(separator: "\n") + "\n") + raster
    }

    let basic = ["WIDTH 1", "HEIGHT 1", "DEPTH 1", "MAXVAL 255"]

    @Test("Keywords in any order, comments, blank lines, indentation")
    func anyOrder() throws {
        let image = try NetpbmReader.read(pam(
            ["# made by hand", "MAXVAL 9", "", "   ", "\tDEPTH 2 ", "HEIGHT 1", "  WIDTH\t2", "TUPLTYPE GRAYSCALE_ALPHA", "# just before ENDHDR"],
            raster: [1, 9, 0, 3]))
        #expect(image.width == 2 && image.height == 1 && image.depth == 2 && image.maxval == 9)
        #expect(image.tupleType == .grayscaleAlpha)
        #expect(image.samples == [1, 9, 0, 3])
        #expect(image.format == .pam)
    }

    @Test("Missing keywords", arguments: ["WIDTH", "HEIGHT", "DEPTH", "MAXVAL"])
    func missing(keyword: String) {
        let bytes = pam(basic.filter { !$0.hasPrefix(keyword) })
        #expect(readError(bytes) == .pamMissingKeyword(keyword: keyword, offset: offset(of: "ENDHDR", in: bytes)))
    }

    @Test("Repeated keywords", arguments: ["WIDTH", "HEIGHT", "DEPTH", "MAXVAL"])
    func repeated(keyword: String) {
        let bytes = pam(basic + ["\(keyword) 1"])
        let first = offset(of: keyword, in: bytes)
        #expect(readError(bytes) == .pamDuplicateKeyword(
            keyword: keyword, offset: offset(of: keyword, in: bytes, from: first + 1)))
    }

    @Test("Unknown keywords are errors, as in libnetpbm; keywords are case-sensitive")
    func unknown() {
        for line in ["FOO 1", "width 1", "WIDTH5", "  # indented comment", "ENDHDRX"] {
            let bytes = pam(basic + [line])
            let keyword = line.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
            #expect(readError(bytes) == .pamUnknownKeyword(keyword: keyword, offset: offset(of: keyword, in: bytes)), "\(line)")
        }
        // The beginning of a keyword where the input ends is the input ending inside the
        // header; a word that begins no keyword stays unknown there too.
        for cut in ["HEI", "E", "TUPLTYP", "ENDHD"] {
            let bytes = ascii("P7\nWIDTH 64\n" + cut)
            #expect(readError(bytes) == .unexpectedEnd(expected: .endOfHeader, offset: bytes.count), "\(cut)")
        }
        let cutUnknown = ascii("P7\nWIDTH 64\nHEX")
        #expect(readError(cutUnknown) == .pamUnknownKeyword(keyword: "HEX", offset: 12))
        let prefixThenLine = ascii("P7\nWIDTH 64\nHEI\nENDHDR\n")
        #expect(readError(prefixThenLine) == .pamUnknownKeyword(keyword: "HEI", offset: 12))
        // Non-ASCII keywords are shown escaped.
        let binary = ascii("P7\n") + [0xC3, 0x28] + ascii(" 1\nENDHDR\n")
        #expect(readError(binary) == .pamUnknownKeyword(keyword: "\\xC3(", offset: 3))
    }

    @Test("Bad values")
    func badValues() {
        var bytes = pam(["WIDTH 3x"] + basic.dropFirst())
        #expect(readError(bytes) == .unexpectedByte(found: 0x78, expected: .lineEnd, offset: 10))
        bytes = pam(["WIDTH 3 4"] + basic.dropFirst())
        #expect(readError(bytes) == .unexpectedByte(found: 0x34, expected: .lineEnd, offset: 11))
        bytes = pam(["WIDTH"] + basic.dropFirst())
        #expect(readError(bytes) == .unexpectedByte(found: 0x0A, expected: .width, offset: 8))
        bytes = pam(["WIDTH -1"] + basic.dropFirst())
        #expect(readError(bytes) == .unexpectedByte(found: 0x2D, expected: .width, offset: 9))
        bytes = pam(["WIDTH 0x10"] + basic.dropFirst())
        #expect(readError(bytes) == .zeroValue(field: .width, offset: 9))
        bytes = pam(["WIDTH 1", "HEIGHT 1", "DEPTH 1", "MAXVAL 65536"])
        #expect(readError(bytes) == .numberTooLarge(field: .maxval, digits: "65536", limit: 65535, offset: offset(of: "65536", in: bytes)))
        bytes = ascii("P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR x\n") + [0]
        #expect(readError(bytes) == .unexpectedByte(found: 0x78, expected: .lineEnd, offset: 46))
        bytes = ascii("P7\nWIDTH")
        #expect(readError(bytes) == .unexpectedEnd(expected: .width, offset: 8))
    }

    @Test("DEPTH smaller than the tuple type needs")
    func depthTooSmall() {
        let cases: [(TupleType, Int)] = [(.rgb, 3), (.rgbAlpha, 4), (.grayscaleAlpha, 2), (.blackAndWhiteAlpha, 2)]
        for (type, required) in cases {
            let bytes = pam(["WIDTH 1", "HEIGHT 1", "DEPTH \(required - 1)", "MAXVAL 1", "TUPLTYPE \(type.rawValue)"],
                            raster: [UInt8](repeating: 0, count: 4))
            #expect(readError(bytes) == .depthTooSmallForTupleType(
                depth: required - 1, tupleType: type, required: required, offset: offset(of: "DEPTH", in: bytes)))
        }
        // A larger depth is allowed: extra planes follow.
        let extra = pam(["WIDTH 1", "HEIGHT 1", "DEPTH 5", "MAXVAL 255", "TUPLTYPE RGB"], raster: [1, 2, 3, 4, 5])
        #expect((try? NetpbmReader.read(extra))?.tupleType == .rgb)
    }

    @Test("Several TUPLTYPE lines are joined with single spaces; unknown types keep any depth")
    func tupleTypes() throws {
        let joined = try NetpbmReader.read(pam(basic + ["TUPLTYPE CMYK", "TUPLTYPE   EXTRA  THING  ", "TUPLTYPE"]))
        #expect(joined.tupleType == .other("CMYK EXTRA  THING"))
        let none = try NetpbmReader.read(pam(basic))
        #expect(none.tupleType == .other(""))
        let custom = try NetpbmReader.read(pam(["WIDTH 1", "HEIGHT 1", "DEPTH 7", "MAXVAL 255", "TUPLTYPE SPECTRAL"],
                                              raster: [1, 2, 3, 4, 5, 6, 7]))
        #expect(custom.tupleType == .other("SPECTRAL"))
        #expect(custom.depth == 7)
        let split = try NetpbmReader.read(pam(basic + ["TUPLTYPE RGB", "TUPLTYPE _ALPHA"]))
        #expect(split.tupleType == .other("RGB _ALPHA"))
    }

    @Test("TUPLTYPE longer than 255 bytes")
    func tupleTypeTooLong() {
        let long = pam(basic + ["TUPLTYPE " + String(repeating: "A", count: 256)])
        #expect(readError(long) == .pamTupleTypeTooLong(length: 256, limit: 255, offset: offset(of: "TUPLTYPE", in: long)))
        let twoLines = pam(basic + ["TUPLTYPE " + String(repeating: "A", count: 200), "TUPLTYPE " + String(repeating: "B", count: 55)])
        let second = offset(of: "TUPLTYPE B", in: twoLines)
        #expect(readError(twoLines) == .pamTupleTypeTooLong(length: 256, limit: 255, offset: second))
        let fits = pam(basic + ["TUPLTYPE " + String(repeating: "A", count: 200), "TUPLTYPE " + String(repeating: "B", count: 54)])
        #expect(readError(fits) == nil)
    }

    @Test("Over-long header lines fail fast")
    func longLines() {
        let megabyte = String(repeating: "X", count: 1 << 20)
        for line in ["# " + megabyte, "TUPLTYPE " + megabyte, "WIDTH " + megabyte, megabyte] {
            let bytes = pam([line] + basic)
            #expect(readError(bytes) == .pamHeaderLineTooLong(limit: 1024, offset: 3))
        }
        // Exactly 1024 bytes (plus CR LF) is accepted.
        let comment = "#" + String(repeating: "c", count: 1023)
        #expect(readError(ascii("P7\n" + comment + "\r\n") + pam(basic).dropFirst(3)) == nil)
        #expect(readError(ascii("P7\n" + comment + "c\n") + pam(basic).dropFirst(3)) == .pamHeaderLineTooLong(limit: 1024, offset: 3))
        // Even at the end of input.
        #expect(readError(ascii("P7\n" + comment + "cc")) == .pamHeaderLineTooLong(limit: 1024, offset: 3))
    }

    @Test("CRLF line ends")
    func crlf() throws {
        let bytes = ascii("P7\r\nWIDTH 2\r\nHEIGHT 1\r\nDEPTH 1\r\nMAXVAL 255\r\nTUPLTYPE GRAYSCALE\r\n# c\r\nENDHDR\r\n") + [13, 10]
        let image = try NetpbmReader.read(bytes)
        #expect(image.samples == [13, 10])
        #expect(image.tupleType == .grayscale)
    }

    @Test("BLACKANDWHITE PAM keeps 1 = white; samples are whole bytes, not bits")
    func blackAndWhite() throws {
        let image = try NetpbmReader.read(pam(["WIDTH 3", "HEIGHT 1", "DEPTH 1", "MAXVAL 1", "TUPLTYPE BLACKANDWHITE"], raster: [1, 0, 1]))
        #expect(image.samples == [1, 0, 1])
        #expect(image.tupleType == .blackAndWhite)
        let bad = pam(["WIDTH 3", "HEIGHT 1", "DEPTH 1", "MAXVAL 1"], raster: [1, 2, 1])
        #expect(readError(bad) == .sampleAboveMaxval(value: 2, maxval: 1, offset: bad.count - 2))
    }
}
