import CommandLineKit
import Foundation
import Netpbm
import PhotoKernels

/// The file kinds the tool writes, by their `--format` names.
///
/// Output rules live here, apart from the commands, because `apply` and `demo` share
/// them: which format a file name asks for, which sample layout each format can hold,
/// and how a Netpbm tuple type maps to the library's `SampleLayout`.
enum OutputFormat: String, CaseIterable, Sendable {
    /// P5, raw greymap.
    case pgm
    /// P6, raw pixmap.
    case ppm
    /// P7, PAM: grey or colour, with or without alpha.
    case pam
    /// P2, plain (ASCII) greymap.
    case plainPGM = "plain-pgm"
    /// P3, plain (ASCII) pixmap.
    case plainPPM = "plain-ppm"

    /// The Netpbm format written.
    var netpbmFormat: NetpbmFormat {
        switch self {
        case .pgm: .rawPGM
        case .ppm: .rawPPM
        case .pam: .pam
        case .plainPGM: .plainPGM
        case .plainPPM: .plainPPM
        }
    }

    /// The file name extension of the format: `pgm`, `ppm`, `pam` (plain ones share
    /// their raw sibling's).
    var fileExtension: String {
        switch self {
        case .pgm, .plainPGM: "pgm"
        case .ppm, .plainPPM: "ppm"
        case .pam: "pam"
        }
    }

    /// Whether the format can store an alpha plane (only PAM).
    var carriesAlpha: Bool { self == .pam }

    /// The same kind of file as `format`: PBM becomes PGM (its pixels turn grey
    /// levels, maxval 255), plain stays plain, raw stays raw.
    init(like format: NetpbmFormat) {
        switch format {
        case .plainPBM, .plainPGM: self = .plainPGM
        case .rawPBM, .rawPGM: self = .pgm
        case .plainPPM: self = .plainPPM
        case .rawPPM: self = .ppm
        case .pam: self = .pam
        }
    }

    /// This format's colour sibling (PGM → PPM), for a grey input whose result gained colour.
    var colorVariant: OutputFormat {
        switch self {
        case .pgm: .ppm
        case .plainPGM: .plainPPM
        default: self
        }
    }

    /// Whether the format holds only grey (PGM), only colour (PPM), or either (PAM).
    var colorModel: ColorModel {
        switch self {
        case .pgm, .plainPGM: .gray
        case .ppm, .plainPPM: .color
        case .pam: .either
        }
    }

    /// What a format can hold.
    enum ColorModel { case gray, color, either }
}

/// What an output's name (or `--format`, or `-`) asks for.
enum OutputTarget: Equatable, Sendable {
    /// Always this format (`.ppm`, `.pgm`, `.pam`, or `--format`).
    case fixed(OutputFormat)
    /// The same kind as each input image (`.pnm`, or `-` without `--format`); a grey
    /// input whose result gained colour is written as colour.
    case likeInput

    /// The target for `path`: `--format` if given, else the extension
    /// (`.ppm`, `.pgm`, `.pam`, `.pnm`, any letter case); `-`, and a stream whose name
    /// has no extension at all (`/dev/null`, `/dev/stdout`, `/dev/fd/3`, a FIFO:
    /// `OutputFile.isStream`), mean the input's kind.
    ///
    /// - Returns: `nil` when the name says nothing, it is no stream and there is no
    ///   `--format`; always for another extension (`.pbm`, `.jpg`), stream or not.
    init?(path: String, format: OutputFormat?) {
        if let format { self = .fixed(format); return }
        if path == "-" { self = .likeInput; return }
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "ppm": self = .fixed(.ppm)
        case "pgm": self = .fixed(.pgm)
        case "pam": self = .fixed(.pam)
        case "pnm": self = .likeInput
        case "":
            guard OutputFile.isStream(path) else { return nil }
            self = .likeInput
        default: return nil
        }
    }

    /// Why `path` names no output format ``init(path:format:)`` accepts: a PBM name
    /// (the tool reads PBM but writes PPM, PGM and PAM), or an unknown one.
    static func unknownFormat(_ path: String) -> String {
        let known = "use a .ppm, .pgm, .pam or .pnm name"
        if URL(fileURLWithPath: path).pathExtension.lowercased() == "pbm" {
            return "'\(path)' names a PBM file, which this tool reads but does not write; " + known
        }
        return "cannot tell the output format from '\(path)'; " + known
    }
}

extension SampleLayout {
    /// How the library reads the samples of an image with `header`, from its tuple type
    /// (a PAM without a standard tuple type is read by its depth: 1 grey, 2 grey +
    /// alpha, 3 RGB, 4 RGBA).
    ///
    /// - Throws: exit 65 if the depth does not match (e.g. extra planes after RGB),
    ///   naming `source`, the frame and the byte offset of its header (`offset`), the
    ///   tuple type escaped.
    init(of header: NetpbmHeader, frame: Int, offset: Int, source: String) throws(CLIError) {
        let layout: SampleLayout?
        switch TupleType(rawValue: header.tupleType.rawValue) {
        case .blackAndWhite, .grayscale: layout = .gray
        case .blackAndWhiteAlpha, .grayscaleAlpha: layout = .grayAlpha
        case .rgb: layout = .rgb
        case .rgbAlpha: layout = .rgba
        case .other: layout = SampleLayout(channelCount: header.depth)
        }
        guard let layout, layout.channelCount == header.depth else {
            let type = header.tupleType.rawValue.isEmpty ? "no tuple type" : "tuple type \"\(header.tupleType.printable)\""
            throw .data("\(source): frame \(frame): a PAM with \(type) and depth \(header.depth) is not supported "
                        + "(GRAYSCALE, RGB, BLACKANDWHITE and their _ALPHA variants, without extra planes, are) "
                        + "(its header at byte offset \(offset))")
        }
        self = layout
    }

    /// The PAM tuple type that names this layout.
    var tupleType: TupleType {
        switch self {
        case .gray: .grayscale
        case .grayAlpha: .grayscaleAlpha
        case .rgb: .rgb
        case .rgba: .rgbAlpha
        }
    }
}
