/// Converts option values to numbers and choices, with usage errors that name the
/// option and quote what was given.
///
/// Numbers are read with `Double(_:)` (so `1e-3`, `-0.5` and hex floats work) after
/// trimming spaces, and must be finite: `nan`, `inf` and overflowing literals such as
/// `1e999` are usage errors, because one non-finite parameter would poison every
/// pixel (SPEC §0 rejects non-finite parameters at the API boundary).
public struct ValueParser: Sendable {
    /// The command whose `--help` the errors point to.
    public let command: String

    /// A value parser whose errors point to `command --help`.
    public init(command: String) {
        self.command = command
    }

    /// A finite number; with `finiteAsFloat`, also finite once rounded to `Float` (a
    /// value for single-precision kernels, where `1e39` is as infinite as `1e999`).
    ///
    /// - Throws: a usage error if `text` is not a number or not finite, naming the
    ///   `Float` bound with `finiteAsFloat`.
    public func number(_ text: String, for option: String, finiteAsFloat: Bool = false) throws(CommandLineError) -> Double {
        switch read(text, finiteAsFloat: finiteAsFloat) {
        case .value(let value): return value
        case .notANumber: throw .usage("'--\(option)' needs a number, got '\(text)'", command: command)
        case .notFinite:
            throw .usage("'--\(option)' must be \(Self.finiteNumber(finiteAsFloat)), got '\(text)'", command: command)
        }
    }

    /// What `number` and `numbers` make of one number's text.
    private enum Reading {
        case value(Double), notANumber, notFinite
    }

    /// `text`, trimmed, as a finite number (finite as a `Float` too with `finiteAsFloat`).
    private func read(_ text: String, finiteAsFloat: Bool) -> Reading {
        guard let value = Double(trimmed(text)) else { return .notANumber }
        return value.isFinite && (!finiteAsFloat || Float(value).isFinite) ? .value(value) : .notFinite
    }

    /// What a number must be, in the errors' words.
    private static func finiteNumber(_ finiteAsFloat: Bool) -> String {
        finiteAsFloat ? "a finite number of at most 3.4e38 in magnitude" : "a finite number"
    }

    /// A comma-separated list of finite numbers whose length is in `counts`; `shape`
    /// describes the expected list in the error (`"three numbers R,G,B"`);
    /// `finiteAsFloat` as for `number`.
    ///
    /// - Throws: a usage error for a wrong count, or naming the element (by its place in
    ///   the list, counted from 1) that is empty, not a number or not finite.
    public func numbers(_ text: String, for option: String, counts: ClosedRange<Int>,
                        shape: String, finiteAsFloat: Bool = false) throws(CommandLineError) -> [Double] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard counts.contains(parts.count) else {
            throw .usage("'--\(option)' needs \(shape), got '\(text)'", command: command)
        }
        var values: [Double] = []
        for (k, part) in parts.enumerated() {
            let element = trimmed(String(part))
            let problem: String
            switch read(String(part), finiteAsFloat: finiteAsFloat) {
            case .value(let value):
                values.append(value)
                continue
            case .notANumber: problem = element.isEmpty ? "is empty" : "'\(element)' is not a number"
            case .notFinite: problem = "'\(element)' must be \(Self.finiteNumber(finiteAsFloat))"
            }
            throw .usage("'--\(option)' needs \(shape), got '\(text)': number \(k + 1) \(problem)", command: command)
        }
        return values
    }

    /// A whole number in `range`.
    ///
    /// - Throws: a usage error naming the range.
    public func integer(_ text: String, for option: String, in range: ClosedRange<Int>) throws(CommandLineError) -> Int {
        guard let value = Int(trimmed(text)), range.contains(value) else {
            throw .usage("'--\(option)' needs a whole number from \(range.lowerBound) to \(range.upperBound), "
                         + "got '\(text)'", command: command)
        }
        return value
    }

    /// A whole number of at least `range.lowerBound`, up to `Int.max`.
    ///
    /// - Throws: a usage error naming the lower bound.
    public func integer(_ text: String, for option: String, in range: PartialRangeFrom<Int>) throws(CommandLineError) -> Int {
        guard let value = Int(trimmed(text)), range.contains(value) else {
            throw .usage("'--\(option)' needs a whole number of at least \(range.lowerBound), got '\(text)'",
                         command: command)
        }
        return value
    }

    /// One of `choices`, compared exactly.
    ///
    /// - Throws: a usage error listing the choices.
    public func choice(_ text: String, for option: String, from choices: [String]) throws(CommandLineError) -> String {
        guard choices.contains(text) else {
            throw .usage("'--\(option)' must be one of \(choices.joined(separator: ", ")); got '\(text)'",
                         command: command)
        }
        return text
    }

    /// `text` without leading and trailing spaces and tabs.
    private func trimmed(_ text: String) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        var slice = Substring(text)
        while let first = slice.first, isBlank(first) { slice = slice.dropFirst() }
        while let last = slice.last, isBlank(last) { slice = slice.dropLast() }
        return slice
    }
}
