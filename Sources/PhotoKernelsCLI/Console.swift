import Foundation

/// Where the tool's text goes: standard output for what the user asked to see
/// (help, lists, the strip's grid order, images written to `-`), standard error for
/// status lines, notes and errors, so a pipeline's data stays clean.
enum Console {
    /// Writes `text` to standard output; a closed pipe is ignored (nothing to report to).
    static func out(_ text: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
    }

    /// Writes `text` to standard error.
    static func err(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }
}
