import Foundation
import Testing
@testable import PhotoKernels

/// The eight entries of a 2³ identity table, red fastest, one per line.
let identityEntries2 = "0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n"

/// Parses `text`, expecting an error on `line` with `reason`.
func expectCubeError(_ text: String, line: Int, _ reason: CubeFileError.Reason, limits: CubeLimits = .default,
                     sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        let file = try CubeFile.parse(Array(text.utf8), limits: limits)
        Issue.record("parsed a \(file.cube.size)-entry table; expected line \(line): \(reason)", sourceLocation: sourceLocation)
    } catch {
        #expect(error == CubeFileError(line: line, reason), sourceLocation: sourceLocation)
    }
}

@Suite("`.cube` files (Adobe Cube LUT Specification 1.0)")
struct CubeFileTests {
    @Test("a 3D file: title, comments, blank lines, entries red index fastest, default domain")
    func threeDimensional() throws {
        let text = "# Created by hand\nTITLE \"Two by two\"\n\n  # indented comment\nLUT_3D_SIZE 2\n"
            + "0 0 0\n0.5 0 0\n0 0.25 0\n1 1 0\n0 0 1\n1 0 1\n\t0\t1 1  \n1 1 1\n# trailing comment\n\n"
        let file = try CubeFile.parse(Array(text.utf8))
        #expect(file.title == "Two by two")
        #expect(file.cube.dimension == .threeDimensional && file.cube.size == 2)
        #expect(file.cube.domainMin == SIMD3(0, 0, 0) && file.cube.domainMax == SIMD3(1, 1, 1))
        #expect(file.cube[1] == SIMD3(0.5, 0, 0))
        #expect(file.cube[2] == SIMD3(0, 0.25, 0))
        #expect(file.cube[6] == SIMD3(0, 1, 1))
        #expect(file.cube.interpolation == .tetrahedral && file.cube.intensity == 1)
    }

    @Test("a 1D file with DOMAIN_MIN/MAX, and Resolve's LUT_1D_INPUT_RANGE / LUT_3D_INPUT_RANGE")
    func domains() throws {
        let one = try CubeFile.parse(Array("LUT_1D_SIZE 3\nDOMAIN_MIN -0.5 0 0.25\nDOMAIN_MAX 1.5 2 0.75\n0 0 0\n0.5 0.5 0.5\n1 1 1\n".utf8))
        #expect(one.title == nil)
        #expect(one.cube.dimension == .oneDimensional && one.cube.size == 3 && one.cube.entryCount == 3)
        #expect(one.cube.domainMin == SIMD3(-0.5, 0, 0.25) && one.cube.domainMax == SIMD3(1.5, 2, 0.75))
        let range1 = try CubeFile.parse(Array("LUT_1D_SIZE 2\nLUT_1D_INPUT_RANGE -0.25 4\n0 0 0\n1 1 1\n".utf8))
        #expect(range1.cube.domainMin == SIMD3(repeating: -0.25) && range1.cube.domainMax == SIMD3(repeating: 4))
        let range3 = try CubeFile.parse(Array(("LUT_3D_INPUT_RANGE 0 2\nLUT_3D_SIZE 2\n" + identityEntries2).utf8))
        #expect(range3.cube.domainMin == SIMD3(repeating: 0) && range3.cube.domainMax == SIMD3(repeating: 2))
    }

    @Test("line ends LF, CR LF and CR; a UTF-8 byte-order mark; no final line end; Data input")
    func lineEnds() throws {
        let lf = "TITLE \"x\"\nLUT_3D_SIZE 2\n" + identityEntries2
        let expected = try CubeFile.parse(Array(lf.utf8))
        let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
        let cr = lf.replacingOccurrences(of: "\n", with: "\r")
        #expect(try CubeFile.parse(Array(crlf.utf8)) == expected)
        #expect(try CubeFile.parse(Array(cr.utf8)) == expected)
        #expect(try CubeFile.parse([0xEF, 0xBB, 0xBF] + Array(lf.utf8)) == expected)
        #expect(try CubeFile.parse(Array(lf.dropLast().utf8)) == expected)
        #expect(try CubeFile.parse(Data(lf.utf8)) == expected)
        // Line numbers count a CR LF once.
        expectCubeError("LUT_3D_SIZE 2\r\nBAD\r\n", line: 2, .unknownKeyword("BAD"))
    }

    @Test("encoded() round-trips: sampled tables, odd domains, 1D, titles with quotes")
    func roundTrip() throws {
        var files = [
            CubeFile(title: "say \"cheese\"\nnow", cube: try ColorCube.sampled(size: 5, from: curvy)),
            CubeFile(cube: try ColorCube.sampled(size: 3, domainMin: SIMD3(-1e-5, 0.1, 3), domainMax: SIMD3(1e-5, 0.2, 1e6), from: curvy)),
            CubeFile(title: "ünïcødé", cube: try ColorCube.sampled(.oneDimensional, size: 7) { -$0 * 1e-30 }),
        ]
        files.append(CubeFile(title: "", cube: try ColorCube(size: 2, entries: Array(repeating: SIMD3(-0.0, 3e38, .leastNonzeroMagnitude), count: 8))))
        for file in files {
            let parsed = try CubeFile.parse(file.encoded())
            #expect(parsed.cube == file.cube)
            #expect(parsed.title == file.title.map { $0.replacingOccurrences(of: "\"", with: "'").replacingOccurrences(of: "\n", with: " ") })
        }
        let text = String(decoding: files[1].encoded(), as: UTF8.self)
        #expect(text.hasPrefix("LUT_3D_SIZE 3\nDOMAIN_MIN -1e-05 0.1 3.0\nDOMAIN_MAX 1e-05 0.2 1000000.0\n"))
    }

    @Test("a title with NUL, a vertical tab and invalid UTF-8 survives encoded() (a fuzzer finding)")
    func titleBytes() throws {
        let bytes: [UInt8] = Array("TITLE \"a\u{0}b\u{0B}c".utf8) + [0x88] + Array("\u{85}d\"\nLUT_1D_SIZE 2\n0 0 0\n1 1 1\n".utf8)
        let file = try CubeFile.parse(bytes)
        #expect(file.title == "a\u{0}b\u{0B}c\u{FFFD}\u{85}d")
        #expect(try CubeFile.parse(file.encoded()) == file)
    }

    @Test("reading from a file; a file over the byte limit; a missing file")
    func files() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cube-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("a.cube")
        let bytes = Array(("LUT_3D_SIZE 2\n" + identityEntries2).utf8)
        try Data(bytes).write(to: url)
        #expect(try CubeFile(contentsOf: url) == CubeFile.parse(bytes))
        #expect(throws: CubeFileError(line: 0, .fileTooLarge(bytes: bytes.count, limit: 20))) {
            try CubeFile(contentsOf: url, limits: CubeLimits(maxFileBytes: 20))
        }
        do {
            _ = try CubeFile(contentsOf: directory.appendingPathComponent("missing.cube"))
            Issue.record("read a missing file")
        } catch {
            guard case .readFailed(let path, let reason) = error.reason else { Issue.record("\(error)"); return }
            #expect(error.line == 0 && path.hasSuffix("missing.cube"))
            #expect(reason == "No such file or directory", "the system's words for a missing file: \(reason)")
        }
    }

    @Test("keyword errors name the line: unknown, duplicate, conflicting, after the table")
    func keywordErrors() {
        expectCubeError("LUT_3D_SIZE 2\nLUT_IN_VIDEO_RANGE\n" + identityEntries2, line: 2, .unknownKeyword("LUT_IN_VIDEO_RANGE"))
        expectCubeError("lut_3d_size 2\n", line: 1, .unknownKeyword("lut_3d_size"))
        expectCubeError("TITLE \"a\"\nLUT_3D_SIZE 2\nTITLE \"b\"\n", line: 3, .duplicateKeyword("TITLE", firstLine: 1))
        expectCubeError("LUT_3D_SIZE 2\nDOMAIN_MIN 0 0 0\n\nDOMAIN_MIN 0 0 0\n", line: 4, .duplicateKeyword("DOMAIN_MIN", firstLine: 2))
        expectCubeError("LUT_3D_SIZE 2\nLUT_1D_SIZE 2\n", line: 2, .conflictingKeywords("LUT_1D_SIZE", other: "LUT_3D_SIZE", otherLine: 1))
        expectCubeError("DOMAIN_MAX 1 1 1\nLUT_3D_INPUT_RANGE 0 1\n", line: 2,
                        .conflictingKeywords("LUT_3D_INPUT_RANGE", other: "DOMAIN_MAX", otherLine: 1))
        expectCubeError("LUT_1D_INPUT_RANGE 0 1\nLUT_3D_SIZE 2\n", line: 2,
                        .conflictingKeywords("LUT_3D_SIZE", other: "LUT_1D_INPUT_RANGE", otherLine: 1))
        expectCubeError("LUT_3D_SIZE 2\n0 0 0\nTITLE \"late\"\n", line: 3, .keywordAfterData("TITLE"))
        expectCubeError("LUT_3D_SIZE 2\n0 0 0\nLUT_3D_SIZE 2\n", line: 3, .keywordAfterData("LUT_3D_SIZE"))
        expectCubeError("LUT_3D_SIZE 2\n0 0 0\nEND\n", line: 3, .unknownKeyword("END"))
        expectCubeError("TITLE unquoted\n", line: 1, .invalidTitle)
        expectCubeError("TITLE \"open\n", line: 1, .invalidTitle)
        expectCubeError("TITLE \"a\" b\n", line: 1, .invalidTitle)
        expectCubeError("TITLE\n", line: 1, .invalidTitle)
    }

    @Test("size errors: missing, out of range, not an integer, over the entry limit")
    func sizeErrors() {
        expectCubeError("", line: 1, .missingSize)
        expectCubeError("# only a comment\nTITLE \"t\"\n", line: 2, .missingSize)
        expectCubeError("TITLE \"t\"\n0 0 0\n", line: 2, .missingSize)
        let range3 = 2...256, range1 = 2...65536
        for value in ["1", "0", "257", "-3", "+17", "17.0", "0x11", "99999999999999999999999"] {
            expectCubeError("LUT_3D_SIZE \(value)\n", line: 1, .sizeOutOfRange(keyword: "LUT_3D_SIZE", value: value, range: range3))
        }
        expectCubeError("LUT_1D_SIZE 65537\n", line: 1, .sizeOutOfRange(keyword: "LUT_1D_SIZE", value: "65537", range: range1))
        expectCubeError("LUT_3D_SIZE\n", line: 1, .wrongValueCount(keyword: "LUT_3D_SIZE", expected: 1, found: 0))
        expectCubeError("LUT_3D_SIZE 2 2\n", line: 1, .wrongValueCount(keyword: "LUT_3D_SIZE", expected: 1, found: 2))
        // Checked at the size line, before any table exists.
        expectCubeError("LUT_3D_SIZE 130\n", line: 1, .tableTooLarge(entries: 130 * 130 * 130, limit: 129 * 129 * 129))
        expectCubeError("\nLUT_3D_SIZE 2\n", line: 2, .tableTooLarge(entries: 8, limit: 7), limits: CubeLimits(maxEntries: 7))
        expectCubeError("LUT_1D_SIZE 8\n", line: 1, .tableTooLarge(entries: 8, limit: 7), limits: CubeLimits(maxEntries: 7))
    }

    @Test("entry errors: too few, too many, wrong value count, non-numeric, non-finite")
    func entryErrors() {
        let header = "LUT_3D_SIZE 2\n"
        expectCubeError(header + "0 0 0\n1 0 0\n", line: 3, .tooFewEntries(expected: 8, found: 2))
        expectCubeError(header + "0 0 0\n1 0 0\n\n# nothing more\n", line: 5, .tooFewEntries(expected: 8, found: 2))
        expectCubeError("LUT_3D_SIZE 2\n", line: 1, .tooFewEntries(expected: 8, found: 0))
        #expect((try? CubeFile.parse(Array((header + identityEntries2 + "\n# done\n\n").utf8))) != nil)
        expectCubeError(header + identityEntries2 + "0.5 0.5 0.5\n", line: 10, .tooManyEntries(expected: 8))
        expectCubeError(header + "0 0\n", line: 2, .wrongValueCount(keyword: nil, expected: 3, found: 2))
        expectCubeError(header + "0 0 0 0\n", line: 2, .wrongValueCount(keyword: nil, expected: 3, found: 4))
        expectCubeError(header + "0 0 0\n0 x 0\n", line: 3, .invalidNumber("x"))
        expectCubeError(header + "0 0 0\n0 0x1p-2 0\n", line: 3, .invalidNumber("0x1p-2"))
        expectCubeError(header + "0 1e 0\n", line: 2, .invalidNumber("1e"))
        expectCubeError(header + "0 0,5 0\n", line: 2, .invalidNumber("0,5"))
        expectCubeError(header + "0 0 0 # comment\n", line: 2, .wrongValueCount(keyword: nil, expected: 3, found: 5))
        expectCubeError(header + "nan 0 0\n", line: 2, .nonFiniteValue("nan"))
        expectCubeError(header + "0 -inf 0\n", line: 2, .nonFiniteValue("-inf"))
        expectCubeError(header + "0 0 1e39\n", line: 2, .nonFiniteValue("1e39"))
        expectCubeError(header + "0 0 Infinity\n", line: 2, .nonFiniteValue("Infinity"))
        expectCubeError("DOMAIN_MIN 0 nan 0\n", line: 1, .nonFiniteValue("nan"))
        expectCubeError("DOMAIN_MAX 1 1\n", line: 1, .wrongValueCount(keyword: "DOMAIN_MAX", expected: 3, found: 2))
        expectCubeError("LUT_1D_INPUT_RANGE 0\n", line: 1, .wrongValueCount(keyword: "LUT_1D_INPUT_RANGE", expected: 2, found: 1))
    }

    @Test("domain errors name the later keyword's line")
    func domainErrors() {
        expectCubeError("LUT_3D_SIZE 2\nDOMAIN_MIN 0 0.5 0\nDOMAIN_MAX 1 0.5 1\n0 0 0\n", line: 3,
                        .invalidDomain(channel: 1, min: 0.5, max: 0.5))
        expectCubeError("DOMAIN_MAX 1 1 0.25\nDOMAIN_MIN 0 0 0.5\nLUT_3D_SIZE 2\n", line: 2,
                        .invalidDomain(channel: 2, min: 0.5, max: 0.25))
        // Against the default max of 1; reported when the table starts (or the file ends).
        expectCubeError("DOMAIN_MIN 2 2 2\nLUT_1D_SIZE 2\n0 0 0\n1 1 1\n", line: 1, .invalidDomain(channel: 0, min: 2, max: 1))
        expectCubeError("LUT_1D_SIZE 2\nLUT_1D_INPUT_RANGE 1 -1\n", line: 2, .invalidDomain(channel: 0, min: 1, max: -1))
    }

    @Test("a line longer than the limit is an error on that line; one at the limit is not")
    func lineLength() throws {
        let limits = CubeLimits(maxLineBytes: 40)
        let padded = "0 0 0" + String(repeating: " ", count: 35)  // 40 bytes
        let ok = "LUT_3D_SIZE 2\n" + padded + "\n" + identityEntries2.split(separator: "\n").dropFirst().joined(separator: "\n")
        #expect((try? CubeFile.parse(Array(ok.utf8), limits: limits)) != nil)
        expectCubeError("LUT_3D_SIZE 2\n" + padded + " \n", line: 2, .lineTooLong(limit: 40), limits: limits)
        expectCubeError("TITLE \"" + String(repeating: "x", count: 2000) + "\"\n", line: 1, .lineTooLong(limit: 1024))
        // A megabyte without a line end fails after reading one line's worth.
        expectCubeError(String(repeating: "7", count: 1 << 20), line: 1, .lineTooLong(limit: 1024))
    }

    @Test("hostile headers: a 256³ size with three entries fails fast, without a 268 MB table")
    func hostileSizes() {
        expectCubeError("LUT_3D_SIZE 256\n0 0 0\n0 0 0\n0 0 0\n", line: 4,
                        .tooFewEntries(expected: 256 * 256 * 256, found: 3), limits: .large)
        expectCubeError("LUT_1D_SIZE 65536\n0 0 0\n", line: 2, .tooFewEntries(expected: 65536, found: 1))
    }

    @Test("every truncation and many one-byte changes of a valid file parse or throw, never trap")
    func mutations() throws {
        let text = Array(("TITLE \"m\"\nDOMAIN_MIN -1 0 0\nLUT_3D_SIZE 2\n" + identityEntries2).utf8)
        var outcomes = [Bool]()
        for end in 0...text.count {
            outcomes.append((try? CubeFile.parse(text[..<end])) != nil)
        }
        // Only the whole file and the file without its final line end parse.
        #expect(outcomes.filter { $0 }.count == 2)
        let replacements: [UInt8] = [0, 0x09, 0x0A, 0x0D, 0x20, 0x22, 0x23, 0x2D, 0x2E, 0x30, 0x39, 0x45, 0x65, 0x6E, 0x7F, 0xFF]
        for i in text.indices {
            for b in replacements {
                var mutated = text
                mutated[i] = b
                do {
                    let file = try CubeFile.parse(mutated)
                    #expect(file.cube.entryCount == 8)
                } catch {
                    #expect(error.line >= 1 && error.line <= 13, "\(error)")
                }
            }
        }
    }

    @Test("descriptions name the line and the problem")
    func descriptions() {
        #expect(CubeFileError(line: 12, .tooManyEntries(expected: 8)).description == "line 12: more than the 8 table entries")
        #expect(CubeFileError(line: 3, .invalidNumber("x")).description == "line 3: \"x\" is not a decimal number")
        #expect(CubeFileError(line: 2, .wrongValueCount(keyword: nil, expected: 3, found: 2)).description
                == "line 2: a table entry needs 3 values, found 2")
        #expect(CubeFileError(line: 0, .fileTooLarge(bytes: 30, limit: 20)).description
                == "the .cube file has 30 bytes, more than the limit 20")
    }
}
