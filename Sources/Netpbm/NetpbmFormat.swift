// The seven Netpbm formats and the PAM tuple types.
//
// Source of the rules: the Netpbm manual pages pbm(5), pgm(5), ppm(5), pam(5)
// (netpbm.sourceforge.net/doc), and libnetpbm's behaviour where the manual is silent.

/// One of the seven Netpbm formats, named by its two-byte magic number.
///
/// | case        | magic | samples per pixel | raster                                   |
/// |-------------|-------|-------------------|------------------------------------------|
/// | `plainPBM`  | `P1`  | 1                 | ASCII `0`/`1`, `1` = black               |
/// | `plainPGM`  | `P2`  | 1                 | ASCII decimal samples                    |
/// | `plainPPM`  | `P3`  | 3 (R G B)         | ASCII decimal samples                    |
/// | `rawPBM`    | `P4`  | 1                 | 1 bit per pixel, MSB first, rows padded to bytes, 1 = black |
/// | `rawPGM`    | `P5`  | 1                 | 1 byte per sample if maxval < 256, else 2 bytes big-endian |
/// | `rawPPM`    | `P6`  | 3 (R G B)         | as P5                                    |
/// | `pam`       | `P7`  | `DEPTH`           | as P5                                    |
///
/// The reader chooses the format from the first two bytes of the input, never from a file name.
public enum NetpbmFormat: Sendable, Hashable, CaseIterable {
    /// `P1`: plain (ASCII) bitmap.
    case plainPBM
    /// `P2`: plain (ASCII) greymap.
    case plainPGM
    /// `P3`: plain (ASCII) pixmap.
    case plainPPM
    /// `P4`: raw (binary) bitmap, 8 pixels per byte.
    case rawPBM
    /// `P5`: raw (binary) greymap.
    case rawPGM
    /// `P6`: raw (binary) pixmap.
    case rawPPM
    /// `P7`: PAM, the arbitrary-depth format with a keyword header and a raw raster.
    case pam

    /// The two-character magic number that starts a file of this format, `"P1"` … `"P7"`.
    public var magic: String {
        "P" + String(UnicodeScalar(magicDigit))
    }

    /// `true` for the ASCII formats P1, P2 and P3.
    public var isPlain: Bool {
        switch self {
        case .plainPBM, .plainPGM, .plainPPM: return true
        case .rawPBM, .rawPGM, .rawPPM, .pam: return false
        }
    }

    /// `true` for the bitmap formats P1 and P4 (maxval 1, depth 1, 1 = black on disk).
    public var isBitmap: Bool { self == .plainPBM || self == .rawPBM }

    /// The number of samples per pixel this format implies: 1 for PBM and PGM, 3 for PPM,
    /// `nil` for PAM (its header says `DEPTH`).
    public var fixedDepth: Int? {
        switch self {
        case .plainPBM, .rawPBM, .plainPGM, .rawPGM: return 1
        case .plainPPM, .rawPPM: return 3
        case .pam: return nil
        }
    }

    /// Creates the format whose magic number is `magic` (`"P1"` … `"P7"`), or `nil`.
    public init?(magic: String) {
        guard let format = NetpbmFormat.allCases.first(where: { $0.magic == magic }) else { return nil }
        self = format
    }

    /// The ASCII digit after `P` (`0x31` … `0x37`).
    var magicDigit: UInt8 {
        switch self {
        case .plainPBM: return 0x31
        case .plainPGM: return 0x32
        case .plainPPM: return 0x33
        case .rawPBM: return 0x34
        case .rawPGM: return 0x35
        case .rawPPM: return 0x36
        case .pam: return 0x37
        }
    }

    /// The format whose magic digit is `digit` (the byte after `P`), or `nil`.
    init?(magicDigit digit: UInt8) {
        switch digit {
        case 0x31: self = .plainPBM
        case 0x32: self = .plainPGM
        case 0x33: self = .plainPPM
        case 0x34: self = .rawPBM
        case 0x35: self = .rawPGM
        case 0x36: self = .rawPPM
        case 0x37: self = .pam
        default: return nil
        }
    }
}

/// What the samples of a pixel mean: the PAM `TUPLTYPE`, also implied by PBM, PGM and PPM.
///
/// Standard types (pam(5)):
///
/// | case                  | raw value             | planes                 | notes |
/// |-----------------------|-----------------------|------------------------|-------|
/// | `blackAndWhite`       | `BLACKANDWHITE`       | 1                      | 0 = black, 1 = white (maxval 1) |
/// | `grayscale`           | `GRAYSCALE`           | 1                      | |
/// | `rgb`                 | `RGB`                 | 3 (R, G, B)            | |
/// | `blackAndWhiteAlpha`  | `BLACKANDWHITE_ALPHA` | 2                      | |
/// | `grayscaleAlpha`      | `GRAYSCALE_ALPHA`     | 2                      | |
/// | `rgbAlpha`            | `RGB_ALPHA`           | 4 (R, G, B, A)         | |
///
/// The alpha plane of an `_ALPHA` type is the last one and holds straight (not
/// premultiplied), linear opacity: 0 = transparent, maxval = opaque.
///
/// Any other string is kept as `.other(...)`; the reader accepts it with any depth (the
/// manual lets applications define their own tuple types). A PAM without a `TUPLTYPE` line
/// reads as `.other("")`.
///
/// Equality and hashing compare ``rawValue``, so `.other("RGB") == .rgb`; create values with
/// ``init(rawValue:)`` to get the canonical case.
public enum TupleType: Sendable, Hashable {
    /// `BLACKANDWHITE`: one plane, maxval 1, 1 = white. Also what PBM decodes to.
    case blackAndWhite
    /// `GRAYSCALE`: one plane of luminance. Also what PGM decodes to.
    case grayscale
    /// `RGB`: red, green, blue. Also what PPM decodes to.
    case rgb
    /// `BLACKANDWHITE_ALPHA`: bitmap value then alpha.
    case blackAndWhiteAlpha
    /// `GRAYSCALE_ALPHA`: grey then alpha.
    case grayscaleAlpha
    /// `RGB_ALPHA`: red, green, blue, alpha.
    case rgbAlpha
    /// Any other tuple type, stored verbatim (several `TUPLTYPE` lines joined by single spaces).
    case other(String)

    /// Maps a `TUPLTYPE` string to its case; unknown strings become `.other(rawValue)`.
    /// Matching is exact and case-sensitive, as in libnetpbm.
    public init(rawValue: String) {
        switch rawValue {
        case "BLACKANDWHITE": self = .blackAndWhite
        case "GRAYSCALE": self = .grayscale
        case "RGB": self = .rgb
        case "BLACKANDWHITE_ALPHA": self = .blackAndWhiteAlpha
        case "GRAYSCALE_ALPHA": self = .grayscaleAlpha
        case "RGB_ALPHA": self = .rgbAlpha
        default: self = .other(rawValue)
        }
    }

    /// The `TUPLTYPE` string, e.g. `"GRAYSCALE_ALPHA"`.
    public var rawValue: String {
        switch self {
        case .blackAndWhite: return "BLACKANDWHITE"
        case .grayscale: return "GRAYSCALE"
        case .rgb: return "RGB"
        case .blackAndWhiteAlpha: return "BLACKANDWHITE_ALPHA"
        case .grayscaleAlpha: return "GRAYSCALE_ALPHA"
        case .rgbAlpha: return "RGB_ALPHA"
        case .other(let string): return string
        }
    }

    /// The tuple type as messages print it: printable ASCII as it is, every other byte
    /// of its UTF-8 (and `"` and `\`) written `\xNN`, so that a file's header cannot
    /// put control characters on a terminal.
    public var printable: String { NetpbmError.escaped(Array(rawValue.utf8)) }

    /// `true` for the three standard `_ALPHA` types (alpha is the last plane).
    /// `.other` types report `false`: their meaning is not known here.
    public var hasAlpha: Bool {
        switch TupleType(rawValue: rawValue) {
        case .blackAndWhiteAlpha, .grayscaleAlpha, .rgbAlpha: return true
        default: return false
        }
    }

    /// The number of colour planes (alpha excluded): 1 for the black-and-white and greyscale
    /// types, 3 for the RGB types, `nil` for `.other`.
    public var colorDepth: Int? {
        switch TupleType(rawValue: rawValue) {
        case .blackAndWhite, .grayscale, .blackAndWhiteAlpha, .grayscaleAlpha: return 1
        case .rgb, .rgbAlpha: return 3
        case .other: return nil
        }
    }

    /// The smallest `DEPTH` this tuple type allows: colour planes plus one for alpha
    /// (1, 1, 3, 2, 2, 4 for the standard types; 1 for `.other`). A larger depth is allowed
    /// (extra planes follow), as pam(5) permits.
    public var minimumDepth: Int {
        (colorDepth ?? 1) + (hasAlpha ? 1 : 0)
    }

    /// Compares the `TUPLTYPE` strings, so `.other("RGB") == .rgb`.
    public static func == (lhs: TupleType, rhs: TupleType) -> Bool {
        lhs.rawValue == rhs.rawValue
    }

    /// Hashes the `TUPLTYPE` string, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rawValue)
    }
}
