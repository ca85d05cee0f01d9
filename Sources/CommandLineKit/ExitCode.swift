import Foundation

/// A process exit status, named `ExitCode` as in swift-argument-parser (and so as
/// not to clash with swift-testing's `ExitStatus` in test files).
///
/// The sysexits(3) statuses the tools share are the static members below; a tool
/// that needs a status of its own (`photokernels-bench` exits 1 when a variant
/// disagrees with its reference and 2 when `compare` finds a regression) declares it
/// in an extension, so the kit does not have to know every tool's meanings.
///
/// A struct over the raw value rather than an enum for that reason: an enum would
/// have to list every tool's statuses here. Equality is by `rawValue`.
public struct ExitCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value passed to `exit(3)`, 0…255.
    public let rawValue: Int32

    /// The status `rawValue`.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// 0: everything worked.
    public static let success = ExitCode(rawValue: 0)
    /// 64, `EX_USAGE`: the command line is wrong (unknown option, missing or bad value,
    /// conflicting options).
    public static let usage = ExitCode(rawValue: 64)
    /// 65, `EX_DATAERR`: an input exists but its contents are invalid.
    public static let dataError = ExitCode(rawValue: 65)
    /// 66, `EX_NOINPUT`: an input is missing or cannot be read.
    public static let noInput = ExitCode(rawValue: 66)
    /// 70, `EX_SOFTWARE`: an internal error, a bug in the tool.
    public static let software = ExitCode(rawValue: 70)
    /// 71, `EX_OSERR`: the system could not provide what the run needs (memory).
    public static let osError = ExitCode(rawValue: 71)
    /// 73, `EX_CANTCREAT`: an output cannot be created or written.
    public static let cantCreate = ExitCode(rawValue: 73)
    /// 74, `EX_IOERR`: an input/output error while a file was open.
    public static let ioError = ExitCode(rawValue: 74)
    /// 141 = 128 + `SIGPIPE`: the output pipe's reader went away. A tool that ignores
    /// `SIGPIPE` (to see `EPIPE` and clean up) ends by restoring its default action and
    /// raising it, as `cat` and every GNU tool do in `… | head` (the shell reports 141);
    /// see ``CommandLineError/brokenPipe``.
    public static let brokenPipe = ExitCode(rawValue: 141)

    /// The number, as `exit` sees it.
    public var description: String { String(rawValue) }
}

extension ExitCode {
    /// Ends the process with this status; ``brokenPipe`` ends it as `cat` does in the
    /// same place, quietly by `SIGPIPE` (its default action restored), so the shell
    /// sees 141 the usual way.
    public func exitProcess() -> Never {
        if self == .brokenPipe {
            signal(SIGPIPE, SIG_DFL)
            raise(SIGPIPE)
        }
        exit(rawValue)
    }
}
