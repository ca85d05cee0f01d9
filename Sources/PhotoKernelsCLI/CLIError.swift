import CommandLineKit
import Netpbm
import PhotoKernels

/// A failure of one run of `photokernels`: the kit's error, printed by `main` as
/// `Error: …` (plus, for usage errors, where to find help) and turned into the exit
/// status (docs/cli.md lists them: 64 usage, 65 bad data, 66 missing input,
/// 70 internal error, 73 cannot create the output).
typealias CLIError = CommandLineError

extension CommandLineError {
    /// A Netpbm reading or writing error: I/O problems on the input are 66, on the
    /// output 73, anything about the bytes themselves 65. `source` names the input.
    static func netpbm(_ error: NetpbmError, source: String) -> CommandLineError {
        switch error {
        case .readFailed:
            return .noInput("cannot read \(source): \(error.description)")
        case .writeFailed:
            return .cantCreate(error.description)
        default:
            return .data("\(source): \(error.description)")
        }
    }

    /// A recipe that cannot be used (exit 65), naming the file.
    static func recipe(_ error: RecipeError, file: String) -> CommandLineError {
        .data("\(file): \(error.description)")
    }
}
