// Text read from files (a LUT's keywords, a recipe's keys and values) goes into error
// messages, and messages go to terminals: escaped, a hostile file cannot send escape
// sequences, nor reorder what a reader sees with bidirectional controls.

/// `text` as it may stand between double quotes in a message: control characters (C0,
/// DEL, C1), format characters (Unicode's Cf: bidirectional overrides and isolates,
/// zero-width characters), `"` and `\` escaped as in a Swift string literal. O(n).
func quotedText(_ text: String) -> String {
    escapedText(text) { $0 == "\"" || $0 == "\\" }
}

/// `text` as it may stand unquoted in a message: control and format characters escaped
/// as in a Swift string literal, everything else as it is. O(n).
func printableText(_ text: String) -> String {
    escapedText(text) { _ in false }
}

private func escapedText(_ text: String, quoting: (Unicode.Scalar) -> Bool) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        if quoting(scalar) {
            out += "\\" + String(scalar)
        } else if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                    || scalar.properties.generalCategory == .format {
            out += "\\u{" + String(scalar.value, radix: 16) + "}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}
