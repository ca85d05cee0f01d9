// Helpers shared by the Netpbm tests: byte builders, error capture, the corpus location
// and a seeded random generator.

import Foundation
import Testing
@testable import Netpbm

/// The bytes of an ASCII string.
func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The offset of the first occurrence of `needle` in `haystack` (test inputs are ASCII).
func offset(of needle: String, in haystack: [UInt8], from start: Int = 0) -> Int {
    let pattern = Array(needle.utf8)
    var i = start
    while i + pattern.count <= haystack.count {
        if Array(haystack[i..<i + pattern.count]) == pattern { return i }
        i += 1
    }
    Issue.record("\"\(needle)\" not found in the test input")
    return -1
}

/// The error `read` throws for `bytes`, or `nil` if it decodes.
func readError(_ bytes: [UInt8], limits: NetpbmLimits = .default) -> NetpbmError? {
    do {
        _ = try NetpbmReader.read(bytes, limits: limits)
        return nil
    } catch {
        return error
    }
}

/// The error `readAll` throws for `bytes`, or `nil` if it decodes.
func readAllError(_ bytes: [UInt8], limits: NetpbmLimits = .default) -> NetpbmError? {
    do {
        _ = try NetpbmReader.readAll(bytes, limits: limits)
        return nil
    } catch {
        return error
    }
}

/// The error `encode` throws, or `nil`.
func encodeError(_ image: NetpbmImage, as format: NetpbmFormat? = nil) -> NetpbmError? {
    do {
        _ = try NetpbmWriter.encode(image, as: format)
        return nil
    } catch {
        return error
    }
}

/// Decodes `bytes` and returns the samples, recording the error as a test failure.
func samples(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> [UInt16]? {
    do {
        return try NetpbmReader.read(bytes).samples
    } catch {
        Issue.record("unexpected error: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A header for `format` with the given header tokens as text, so tests can put any
/// string (huge, signed, zero…) in any field. PBM formats ignore `maxval`.
func header(
    _ format: NetpbmFormat, width: String, height: String, depth: String = "1",
    maxval: String = "255", tupleType: String? = nil
) -> String {
    switch format {
    case .pam:
        var text = "P7\nWIDTH \(width)\nHEIGHT \(height)\nDEPTH \(depth)\nMAXVAL \(maxval)\n"
        if let tupleType { text += "TUPLTYPE \(tupleType)\n" }
        return text + "ENDHDR\n"
    case .plainPBM, .rawPBM:
        return "\(format.magic) \(width) \(height)\n"
    default:
        return "\(format.magic) \(width) \(height) \(maxval)\n"
    }
}

/// The corpus of public Netpbm files, `<package root>/../shared/corpus/pnm-public`.
///
/// Returns `nil` when the folder is missing: that fails the test when the environment
/// variable `CI` is set, and only prints a warning otherwise.
func corpusRoot(sourceLocation: SourceLocation = #_sourceLocation) -> URL? {
    if let root = corpusLocation { return root }
    if ProcessInfo.processInfo.environment["CI"] != nil {
        Issue.record("Netpbm corpus missing beside the package (../shared/corpus/pnm-public)", sourceLocation: sourceLocation)
    }
    return nil
}

/// `../shared/corpus/pnm-public` beside the package root, looked up once (and the
/// warning for a missing corpus printed once, not once per test).
private let corpusLocation: URL? = {
    let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // NetpbmTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root
    let root = packageRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/corpus/pnm-public", isDirectory: true)
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue {
        return root
    }
    if ProcessInfo.processInfo.environment["CI"] == nil {
        print("warning: Netpbm corpus missing at \(root.path); the corpus tests are skipped (see docs/testing.md)")
    }
    return nil
}()

/// SplitMix64: a tiny seeded generator so random tests are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `a / m1 == b / m2` for every sample pair, compared exactly as rationals.
func sameNormalisedValues(_ a: NetpbmImage, _ b: NetpbmImage) -> Bool {
    guard a.width == b.width, a.height == b.height, a.depth == b.depth,
          a.samples.count == b.samples.count else { return false }
    for (x, y) in zip(a.samples, b.samples) where Int(x) * b.maxval != Int(y) * a.maxval {
        return false
    }
    return true
}

/// Runs `body` with a new, empty directory under the system's temporary directory,
/// named `prefix` and a UUID, and removes the directory and its contents afterwards.
func withTemporaryDirectory<T>(_ prefix: String, _ body: (URL) throws -> T) throws -> T {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}
