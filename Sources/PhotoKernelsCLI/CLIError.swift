import Netpbm
import PhotoKernels

/// The process exit status, following sysexits(3), so scripts can tell a typo in the
/// command line from a damaged file or a full disk.
enum ExitStatus: Int32, Sendable {
    /// Everything worked.
    case success = 0
    /// `EX_USAGE`: the command line is wrong (unknown option, missing or bad value).
    case usage = 64
    /// `EX_DATAERR`: an input file is not valid Netpbm, or a recipe is not a valid recipe.
    case dataError = 65
    /// `EX_NOINPUT`: an input file (image or recipe) is missing or cannot be read.
    case noInput = 66
    /// `EX_SOFTWARE`: a bug in this tool (should never be seen).
    case software = 70
    /// `EX_CANTCREAT`: the output cannot be created or written, or writing it would
    /// destroy the input.
    case cantCreate = 73
}

/// A failure of one run, reported as a single `Error: …` line on standard error and
/// turned into the exit status.
///
/// Every error path of the tool ends in one of these (typed throws), so `main` has a
/// single place that prints and exits, and nothing ever traps on bad input.
struct CLIError: Error, Equatable, CustomStringConvertible {
    /// The exit status.
    var status: ExitStatus
    /// What is wrong, one line, without the `Error: ` prefix.
    var message: String
    /// For usage errors, the command whose help explains the fix
    /// (`"photokernels"` or `"photokernels apply"`); `nil` for other errors.
    var helpCommand: String?

    var description: String { message }

    /// A bad command line (exit 64); the report points to `<command> --help`.
    static func usage(_ message: String, command: String) -> CLIError {
        CLIError(status: .usage, message: message, helpCommand: command)
    }

    /// Bad data in an input (exit 65).
    static func data(_ message: String) -> CLIError {
        CLIError(status: .dataError, message: message)
    }

    /// A missing or unreadable input (exit 66).
    static func noInput(_ message: String) -> CLIError {
        CLIError(status: .noInput, message: message)
    }

    /// An output that cannot be created or written (exit 73).
    static func cantCreate(_ message: String) -> CLIError {
        CLIError(status: .cantCreate, message: message)
    }

    /// A Netpbm reading or writing error: I/O problems on the input are 66, on the
    /// output 73, anything about the bytes themselves 65. `source` names the input.
    static func netpbm(_ error: NetpbmError, source: String) -> CLIError {
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
    static func recipe(_ error: RecipeError, file: String) -> CLIError {
        .data("\(file): \(error.description)")
    }

    /// The lines `main` prints on standard error.
    var report: String {
        var text = "Error: \(message)\n"
        if let helpCommand { text += "Run '\(helpCommand) --help' for usage.\n" }
        return text
    }
}
