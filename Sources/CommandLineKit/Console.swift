import Foundation

/// Where a tool's text goes: standard output for what the user asked to see (help,
/// lists, images or reports written to `-`), standard error for status lines, notes
/// and errors, so a pipeline's data stays clean. Neither write can stop the process:
/// a tool that ignores `SIGPIPE` would otherwise trap on a closed pipe.
public enum Console {
    /// Writes `text` to standard output; a failure is ignored (for text whose loss
    /// does not matter; a result goes through ``OutputFile/write(_:to:)-(Data,_)``,
    /// which reports one).
    public static func out(_ text: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
    }

    /// Writes `text` to standard error; a failure is ignored (there is nowhere left to
    /// report it).
    public static func err(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }
}
