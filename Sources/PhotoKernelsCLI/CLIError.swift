import CommandLineKit
import Netpbm
import PhotoKernels

/// A failure of one run of `photokernels`: the kit's error, printed by `main` as
/// `Error: …` (plus, for usage errors, where to find help) and turned into the exit
/// status (docs/cli.md lists them: 64 usage, 65 bad data, 66 missing input,
/// 70 internal error, 71 out of memory, 73 cannot create the output, 141 a closed output pipe).
typealias CLIError = CommandLineError

extension CommandLineError {
    /// A Netpbm reading or writing error: I/O problems on the input are 66, on the
    /// output 73, a closed output pipe is ``brokenPipe``, anything about the bytes
    /// themselves 65. `source` names the input. The message keeps the reader's
    /// `frame N` and byte offset.
    static func netpbm(_ error: NetpbmError, source: String) -> CommandLineError {
        switch error.underlying {
        case .readFailed:
            return .noInput("cannot read \(source): \(error.description)")
        case .writeFailed:
            return .cantCreate(error.description)
        case .brokenPipe:
            return .brokenPipe
        case .exceedsPixelLimit:
            return .data("\(source): \(error.description) (raise the limit with --max-pixels)")
        default:
            return .data("\(source): \(error.description)")
        }
    }

    /// A recipe that cannot be used (exit 65), naming the file; a file the recipe names
    /// (a LUT) that cannot be read is missing input (66), as `--lut` makes it.
    static func recipe(_ error: RecipeError, file: String) -> CommandLineError {
        if error.isUnreadableFile { return .noInput("\(file): \(error.description)") }
        return .data("\(file): \(error.description)")
    }

    /// Memory the system would not provide (exit 71): `bytes` (`nil`: more than an
    /// address can count) to hold `purpose`.
    static func outOfMemory(bytes: Int?, purpose: String) -> CommandLineError {
        let amount = bytes.map { "\($0) bytes" } ?? "more bytes than an address can count"
        return CommandLineError("cannot allocate \(amount) to hold \(purpose)", status: .osError)
    }

    /// A failure whose details are already on standard error (each failed file of a
    /// batch has had its `Error:` line): only the status remains.
    static func reported(status: ExitCode) -> CommandLineError {
        CommandLineError("", status: status)
    }

    /// Whether there is nothing left to print (``brokenPipe``, ``reported(status:)``).
    var isSilent: Bool { message.isEmpty }
}
