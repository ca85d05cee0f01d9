import Foundation
import Testing
@testable import PhotoKernels

/// `n` bytes of "a".
private func a(_ n: Int) -> [UInt8] { [UInt8](repeating: 0x61, count: n) }

@Suite("SHA-256 (FIPS 180-4)")
struct SHA256Tests {
    @Test("the FIPS 180-4 / NIST examples: \"abc\", the two-block 448-bit message, the empty string")
    func nistExamples() {
        #expect(SHA256Hasher.hash("abc".utf8).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256Hasher.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8).hex
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256Hasher.hash([UInt8]()).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        // The 896-bit message of the NIST examples (FIPS 180-2 appendix B and the SHA-2 test vectors).
        #expect(SHA256Hasher.hash("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".utf8).hex
                == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    }

    @Test("one million \"a\" (FIPS 180-2 appendix B.3), fed in uneven pieces")
    func millionA() {
        var hasher = SHA256Hasher()
        let piece = a(999)
        var fed = 0
        while fed < 1_000_000 {
            let n = min(piece.count, 1_000_000 - fed)
            hasher.update(piece[..<n])
            fed += n
        }
        #expect(hasher.finalize().hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("padding boundaries: 55, 56, 63, 64, 65, 119, 120, 127, 128 bytes (digests from sha256sum)")
    func boundaries() {
        // `head -c N /dev/zero | tr '\0' a | sha256sum`
        let expected: [Int: String] = [
            55: "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318",
            56: "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a",
            63: "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34",
            64: "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb",
            65: "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0",
            119: "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb",
            120: "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c",
            127: "c57e9278af78fa3cab38667bef4ce29d783787a2f731d4e12200270f0c32320a",
            128: "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e",
        ]
        for (n, hex) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(SHA256Hasher.hash(a(n)).hex == hex, "\(n) bytes")
        }
    }

    @Test("every split of a 768-byte message into two updates gives the one-shot digest")
    func incremental() {
        // python3 -c "import hashlib; print(hashlib.sha256(bytes(range(256))*3).hexdigest())"
        let message = [UInt8]((0..<768).map { UInt8($0 & 255) })
        let whole = "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363"
        #expect(SHA256Hasher.hash(message).hex == whole)
        for split in 0...message.count {
            var hasher = SHA256Hasher()
            hasher.update(message[..<split])
            hasher.update(message[split...])
            #expect(hasher.finalize().hex == whole, "split at \(split)")
        }
    }

    @Test("finalize leaves the hasher usable; Data, raw buffers and arrays hash alike")
    func finalizeAndInputs() {
        var hasher = SHA256Hasher()
        hasher.update("ab".utf8)
        let early = hasher.finalize()
        hasher.update("c".utf8)
        #expect(early == SHA256Hasher.hash("ab".utf8))
        #expect(hasher.finalize().hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let bytes = Array("abc".utf8)
        #expect(SHA256Hasher.hash(Data(bytes)) == hasher.finalize())
        #expect(bytes.withUnsafeBytes { SHA256Hasher.hash($0) } == hasher.finalize())
        // A collection without contiguous storage is copied, not mishandled.
        #expect(SHA256Hasher.hash(bytes.lazy.map { $0 }) == hasher.finalize())
        #expect(hasher.finalize().bytes.count == 32)
        #expect(hasher.finalize().description == hasher.finalize().hex)
    }
}
