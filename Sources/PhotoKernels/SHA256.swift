// SHA-256 (FIPS 180-4 §6.2) over bytes, incremental: enough to name a LUT file or a
// recipe's inputs by their content without a package dependency. Not constant-time and
// not meant for secrets; the digests are the standard ones (checked against the NIST
// examples and `sha256sum`).

import Foundation

/// An incremental SHA-256 hash (FIPS 180-4): feed bytes with `update`, read the
/// 32-byte digest with `finalize()`.
///
/// ```swift
/// var hasher = SHA256Hasher()
/// hasher.update("ab".utf8)
/// hasher.update("c".utf8)
/// hasher.finalize().hex   // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// SHA256Hasher.hash("abc".utf8) == hasher.finalize()   // true
/// ```
///
/// - The digest depends only on the concatenation of all bytes given, not on how they
///   were split between calls.
/// - `finalize()` does not change the hasher: more bytes may follow, and a later
///   `finalize()` hashes everything given so far.
/// - Messages up to 2⁶¹ − 1 bytes, the standard's limit of 2⁶⁴ − 1 bits; the bit length
///   is kept modulo 2⁶⁴ beyond that, without trapping.
/// - Named `SHA256Hasher` so it does not clash with CryptoKit's `SHA256` where both are
///   imported.
///
/// Complexity: O(n) for n bytes, one 64-round compression per 64-byte block; no
/// allocation per call beyond the hasher's 64-byte block buffer.
/// Source: NIST FIPS 180-4, *Secure Hash Standard*, §4.1.2 (functions), §4.2.2
/// (constants), §5.1.1 (padding), §5.3.3 (initial value), §6.2.2 (computation) [doc].
public struct SHA256Hasher: Sendable {
    /// A SHA-256 digest: 32 bytes, big-endian words `H0 … H7` as the standard prints them.
    public struct Digest: Sendable, Hashable, CustomStringConvertible {
        /// The 32 digest bytes, most significant byte of `H0` first.
        public let bytes: [UInt8]

        /// The digest as 64 lowercase hexadecimal digits, as `sha256sum` prints it.
        public var hex: String {
            let digits = Array("0123456789abcdef".utf8)
            var text = [UInt8]()
            text.reserveCapacity(64)
            for byte in bytes {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 15)])
            }
            return String(decoding: text, as: UTF8.self)
        }

        /// `hex`.
        public var description: String { hex }
    }

    // H0 … H7, the running hash value (§6.2.2 step 4).
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)
    // The bytes of a block not yet compressed; fewer than 64 after every `update`.
    private var pending: [UInt8]
    // The message length in bytes, modulo 2⁶⁴.
    private var length: UInt64

    /// A hasher over the empty message, at the initial hash value H⁽⁰⁾ (§5.3.3).
    public init() {
        state = (0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a,
                 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)
        pending = []
        pending.reserveCapacity(64)
        length = 0
    }

    /// Appends `bytes` to the message.
    ///
    /// - Complexity: O(bytes.count); whole blocks are compressed straight from `bytes`.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var rest = bytes[...]
        if !pending.isEmpty {
            let take = min(64 - pending.count, rest.count)
            pending.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { Self.compress(&state, block: $0.baseAddress!) }
            pending.removeAll(keepingCapacity: true)
        }
        guard let base = bytes.baseAddress else { return }
        var offset = rest.startIndex
        while rest.endIndex - offset >= 64 {
            Self.compress(&state, block: base + offset)
            offset += 64
        }
        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<rest.endIndex]))
    }

    /// Appends `bytes` (`[UInt8]`, `Data`, an `ArraySlice`, `String.UTF8View`, …) to
    /// the message; a collection without contiguous storage is copied once.
    ///
    /// - Complexity: O(bytes.count).
    public mutating func update<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil {
            Array(bytes).withUnsafeBytes { update($0) }
        }
    }

    /// The digest of every byte given so far; the hasher is unchanged.
    ///
    /// Pads the message as §5.1.1 says: a 1 bit, zeros up to 56 bytes mod 64, then the
    /// length in bits as a 64-bit big-endian integer.
    /// - Complexity: O(1) (one or two blocks).
    public func finalize() -> Digest {
        var copy = self
        let bits = length &* 8
        var tail: [UInt8] = [0x80]
        let zeros = (55 &- pending.count) & 63
        tail.append(contentsOf: repeatElement(0, count: zeros))
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
        tail.withUnsafeBytes { copy.update($0) }
        let h = copy.state
        var bytes = [UInt8]()
        bytes.reserveCapacity(32)
        for word in [h.0, h.1, h.2, h.3, h.4, h.5, h.6, h.7] {
            bytes.append(UInt8(truncatingIfNeeded: word >> 24))
            bytes.append(UInt8(truncatingIfNeeded: word >> 16))
            bytes.append(UInt8(truncatingIfNeeded: word >> 8))
            bytes.append(UInt8(truncatingIfNeeded: word))
        }
        return Digest(bytes: bytes)
    }

    /// The digest of `bytes` in one call.
    ///
    /// - Complexity: O(bytes.count).
    public static func hash<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Digest {
        var hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The digest of the raw bytes `bytes` in one call.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> Digest {
        var hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    // K, the first 32 bits of the fractional parts of the cube roots of the first 64
    // primes (§4.2.2).
    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 &- n)) }

    /// One compression of the 64-byte block at `block` into `state` (§6.2.2 steps 1–4).
    private static func compress(_ state: inout (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32),
                                 block: UnsafeRawPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            // 1. The message schedule W0 … W63: 16 big-endian words, then σ0/σ1 mixing.
            for t in 0..<16 {
                w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t &* 4, as: UInt32.self))
            }
            for t in 16..<64 {
                let x = w[t &- 15], y = w[t &- 2]
                let s0 = Self.rotr(x, 7) ^ Self.rotr(x, 18) ^ (x >> 3)
                let s1 = Self.rotr(y, 17) ^ Self.rotr(y, 19) ^ (y >> 10)
                w[t] = w[t &- 16] &+ s0 &+ w[t &- 7] &+ s1
            }
            // 2–3. Sixty-four rounds over the working variables a … h.
            var (a, b, c, d, e, f, g, h) = state
            Self.k.withUnsafeBufferPointer { k in
                for t in 0..<64 {
                    let sum1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
                    let choose = (e & f) ^ (~e & g)
                    let t1 = h &+ sum1 &+ choose &+ k[t] &+ w[t]
                    let sum0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    let t2 = sum0 &+ majority
                    h = g; g = f; f = e; e = d &+ t1
                    d = c; c = b; b = a; a = t1 &+ t2
                }
            }
            // 4. The intermediate hash value H⁽ⁱ⁾.
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d,
                     state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
        }
    }
}
