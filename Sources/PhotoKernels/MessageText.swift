// Text read from files (a LUT's keywords, a recipe's keys and values) goes into error
// messages, and messages go to terminals: escaped, a hostile file cannot send escape
// sequences.

/// `text` as it may stand between double quotes in a message: control characters (C0,
/// DEL, C1), `"` and `\` escaped as in a Swift string literal. O(n).
func quotedText(_ text: String) -> String {
    escapedText(text) { $0 == "\"" || $0 == "\\" }
}

/// `text` as it may stand unquoted in a message: control characters (C0, DEL, C1)
/// escaped as in a Swift string literal, everything else as it is. O(n).
func printableText(_ text: String) -> String {
    escapedText(text) { _ in false }
}

private func escapedText(_ text: String, quoting: (Unicode.Scalar) -> Bool) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        if quoting(scalar) {
            out += "\\" + String(scalar)
        } else if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
            out += "\\u{" + String(scalar.value, radix: 16) + "}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}
