/// A failure that ends a run: a message and the exit status it maps to.
///
/// Every error path of a tool ends in one of these (typed throws), so `main` has one
/// place that prints and exits, and nothing deep inside calls `exit` or traps on bad
/// input. `report` is what the tool prints on standard error.
public struct CommandLineError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The exit status.
    public var status: ExitCode
    /// What is wrong, without the `Error: ` prefix. One line where possible; a
    /// multi-line message is printed as given.
    public var message: String
    /// For usage errors, the command whose `--help` explains the fix
    /// (`"photokernels apply"`); `nil` for other errors.
    public var helpCommand: String?

    /// An error with `status`; `helpCommand` adds the pointer to `<helpCommand> --help`.
    public init(_ message: String, status: ExitCode, helpCommand: String? = nil) {
        self.message = message
        self.status = status
        self.helpCommand = helpCommand
    }

    /// The message.
    public var description: String { message }

    /// A bad command line (exit 64); the report points to `<command> --help`.
    public static func usage(_ message: String, command: String) -> CommandLineError {
        CommandLineError(message, status: .usage, helpCommand: command)
    }

    /// Invalid contents of an input (exit 65).
    public static func data(_ message: String) -> CommandLineError {
        CommandLineError(message, status: .dataError)
    }

    /// A missing or unreadable input (exit 66).
    public static func noInput(_ message: String) -> CommandLineError {
        CommandLineError(message, status: .noInput)
    }

    /// An internal error (exit 70).
    public static func software(_ message: String) -> CommandLineError {
        CommandLineError(message, status: .software)
    }

    /// An output that cannot be created or written (exit 73).
    public static func cantCreate(_ message: String) -> CommandLineError {
        CommandLineError(message, status: .cantCreate)
    }

    /// An input/output error on an open file (exit 74).
    public static func ioError(_ message: String) -> CommandLineError {
        CommandLineError(message, status: .ioError)
    }

    /// The reader of the output pipe has gone: nothing to print, status
    /// ``ExitCode/brokenPipe``.
    public static let brokenPipe = CommandLineError("", status: .brokenPipe)

    /// The text for standard error: `Error: <message>`, and for usage errors a second
    /// line `Run '<command> --help' for usage.`; each line ends in a newline.
    public var report: String {
        var text = "Error: \(message)\n"
        if let helpCommand { text += "Run '\(helpCommand) --help' for usage.\n" }
        return text
    }
}
