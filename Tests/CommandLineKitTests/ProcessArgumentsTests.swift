import CommandLineKit
import Foundation
import Testing

@Suite("Process arguments")
struct ProcessArgumentsTests {
    /// `read` of C strings built from `arguments` (each its bytes, NUL-terminated).
    func read(_ arguments: [[UInt8]]) -> Result<[String], ProcessArguments.ArgumentError> {
        let pointers = arguments.map { bytes -> UnsafeMutablePointer<CChar>? in
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (i, b) in bytes.enumerated() { p[i] = CChar(bitPattern: b) }
            p[bytes.count] = 0
            return p
        }
        defer { for p in pointers { p?.deallocate() } }
        var argv = pointers + [nil]
        return argv.withUnsafeMutableBufferPointer { ProcessArguments.read(Int32(arguments.count), $0.baseAddress!) }
    }

    @Test("UTF-8 arguments are read as they are, the program name dropped; the first that is not UTF-8 is a usage error naming its position and bytes")
    func utf8() {
        #expect((try? read([Array("tool".utf8), Array("apply".utf8), Array("é.ppm".utf8)]).get()) == ["apply", "é.ppm"])
        #expect((try? read([Array("tool".utf8)]).get()) == [])
        let bad = read([Array("tool".utf8), Array("apply".utf8), Array("bad".utf8) + [0xFF] + Array(".ppm".utf8),
                        [0xC3]])
        guard case .failure(let e) = bad else { Issue.record("accepted: \(bad)"); return }
        #expect(e.position == 2 && e.shown == #"bad\xFF.ppm"#)
        #expect(e.description.hasPrefix(#"argument 2 ("bad\xFF.ppm") is not valid UTF-8"#))
    }
}
