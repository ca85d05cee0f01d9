import CommandLineKit
import Testing

@Suite("Console")
struct ConsoleTests {
    @Test("printable escapes C0 (but newline and tab), DEL, C1 and format characters (bidirectional controls) as Swift escapes, and leaves the rest")
    func printable() {
        #expect(Console.printable("sat\u{202E}ration\u{2066}x\u{200B}") == #"sat\u{202e}ration\u{2066}x\u{200b}"#)
        #expect(Console.printable("plain text, é, 𝄞\n\tend") == "plain text, é, 𝄞\n\tend")
        #expect(Console.printable("a\u{1B}[2Jb\rc\u{7}\u{0}\u{7F}\u{85}\u{9B}d")
                == #"a\u{1b}[2Jb\u{d}c\u{7}\u{0}\u{7f}\u{85}\u{9b}d"#)
    }
}
