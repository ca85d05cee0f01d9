import CommandLineKit
import Testing

/// Numbers, lists, whole numbers and choices, with the exact wording of each error.
@Suite("ValueParser")
struct ValueParserTests {
    static let values = ValueParser(command: "tool")

    /// The message of the usage error `body` throws, or nil when it does not throw.
    func message(_ body: () throws(CommandLineError) -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            #expect(error.status == .usage && error.helpCommand == "tool")
            return error.message
        }
    }

    @Test("numbers are read by Double(_:) after trimming", arguments: [
        ("1e-3", 0.001), ("-0.5", -0.5), (" 2 ", 2.0), ("\t7", 7.0), ("0x10", 16.0), ("-0", 0.0),
    ])
    func numbers(text: String, value: Double) throws {
        #expect(try Self.values.number(text, for: "hue") == value)
    }

    @Test("numbers must be finite", arguments: ["nan", "NaN", "inf", "-inf", "infinity", "1e999", "-1e999"])
    func nonFinite(text: String) {
        #expect(message { () throws(CommandLineError) in try Self.values.number(text, for: "hue") }
                == "'--hue' must be a finite number, got '\(text)'")
    }

    @Test("finiteAsFloat: also finite as a Float, up to Float's largest magnitude", arguments: [
        ("nan", false), ("1e999", false), ("1e39", false), ("-3.5e38", false), ("3.4e38", true), ("-3.4028234e38", true), ("0.5", true),
    ])
    func finiteAsFloat(text: String, accepted: Bool) throws {
        let error = message { () throws(CommandLineError) in
            _ = try Self.values.number(text, for: "hue", finiteAsFloat: true)
        }
        #expect(error == (accepted ? nil : "'--hue' must be a finite number of at most 3.4e38 in magnitude, got '\(text)'"))
        if accepted { #expect(try Self.values.number(text, for: "hue", finiteAsFloat: true) == Double(text)) }
        // Without it, only Double's finiteness counts.
        if text == "1e39" { #expect(try Self.values.number(text, for: "hue") == 1e39) }
    }

    @Test("anything else is not a number", arguments: ["", "1,5", "0x", "one", "1.2.3", "--"])
    func notNumbers(text: String) {
        #expect(message { () throws(CommandLineError) in try Self.values.number(text, for: "hue") }
                == "'--hue' needs a number, got '\(text)'")
    }

    @Test("lists have a length in range and finite elements")
    func lists() throws {
        #expect(try Self.values.numbers("1,0.5,0", for: "color", counts: 3...3, shape: "R,G,B") == [1, 0.5, 0])
        #expect(try Self.values.numbers("2", for: "vignette", counts: 1...2, shape: "I[,R]") == [2])
        #expect(message { () throws(CommandLineError) in
            try Self.values.numbers("1,0", for: "color", counts: 3...3, shape: "three numbers R,G,B")
        } == "'--color' needs three numbers R,G,B, got '1,0'")
        #expect(message { () throws(CommandLineError) in
            try Self.values.numbers("1,,0", for: "color", counts: 3...3, shape: "R,G,B")
        } == "'--color' needs R,G,B, got '1,,0': number 2 is empty")
        #expect(message { () throws(CommandLineError) in
            try Self.values.numbers("0.8,x", for: "vignette", counts: 1...2, shape: "I[,R]")
        } == "'--vignette' needs I[,R], got '0.8,x': number 2 'x' is not a number")
        #expect(message { () throws(CommandLineError) in
            try Self.values.numbers("1,nan,0", for: "color", counts: 3...3, shape: "R,G,B")
        } == "'--color' needs R,G,B, got '1,nan,0': number 2 'nan' must be a finite number")
        #expect(message { () throws(CommandLineError) in
            try Self.values.numbers("1, 1e39 ,0", for: "color", counts: 3...3, shape: "R,G,B", finiteAsFloat: true)
        } == "'--color' needs R,G,B, got '1, 1e39 ,0': number 2 '1e39' must be a finite number of at most 3.4e38 in magnitude")
        #expect(try Self.values.numbers(" 1, 1e38 ,0", for: "color", counts: 3...3, shape: "R,G,B", finiteAsFloat: true) == [1, 1e38, 0])
    }

    @Test("whole numbers in a closed or a half-open range")
    func integers() throws {
        #expect(try Self.values.integer("1", for: "threads", in: 1...1024) == 1)
        #expect(try Self.values.integer(" 1024 ", for: "threads", in: 1...1024) == 1024)
        #expect(try Self.values.integer("9223372036854775807", for: "samples", in: 1...) == Int.max)
        for text in ["0", "1025", "1.5", "", "ten", "99999999999999999999"] {
            #expect(message { () throws(CommandLineError) in try Self.values.integer(text, for: "threads", in: 1...1024) }
                    == "'--threads' needs a whole number from 1 to 1024, got '\(text)'")
        }
        #expect(message { () throws(CommandLineError) in try Self.values.integer("0", for: "samples", in: 1...) }
                == "'--samples' needs a whole number of at least 1, got '0'")
    }

    @Test("choices match exactly and the error lists them")
    func choices() throws {
        #expect(try Self.values.choice("csv", for: "format", from: ["text", "csv"]) == "csv")
        #expect(message { () throws(CommandLineError) in try Self.values.choice("CSV", for: "format", from: ["text", "csv"]) }
                == "'--format' must be one of text, csv; got 'CSV'")
    }
}
