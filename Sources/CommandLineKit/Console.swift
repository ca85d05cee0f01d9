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

    /// Writes `text` to standard error, its control characters escaped
    /// (``printable(_:)``); a failure is ignored (there is nowhere left to report it).
    public static func err(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data(printable(text).utf8))
    }

    /// `text` with every control character but newline and tab — C0, DEL and C1 — and
    /// every format character (Unicode's Cf: bidirectional overrides and isolates,
    /// zero-width characters) written as a Swift escape (`\u{1b}`, `\u{202e}`):
    /// messages quote file names and text read from files, which must not move a
    /// terminal's cursor, clear its screen, set its title or reorder what a reader sees.
    /// O(n).
    public static func printable(_ text: String) -> String {
        func isControl(_ s: Unicode.Scalar) -> Bool {
            let v = s.value
            return (v < 0x20 && v != 0x0A && v != 0x09) || (0x7F...0x9F).contains(v) || s.properties.generalCategory == .format
        }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
