// The process's arguments as the tools read them. Swift's `CommandLine.arguments`
// repairs bytes that are not UTF-8 into U+FFFD, so a file name with such bytes would
// name another file (an output written under a changed name, an input not found);
// the tools refuse it instead.

import Foundation

/// The arguments after the program name, checked to be UTF-8.
public enum ProcessArguments {
    /// The arguments after the program name, or the usage error naming the first that
    /// is not valid UTF-8 (by its position, 1 the first after the program name, and
    /// its bytes, escaped).
    ///
    /// - Complexity: O(total length of the arguments).
    public static func read() -> Result<[String], ArgumentError> {
        read(CommandLine.argc, CommandLine.unsafeArgv)
    }

    /// `read()` of an `argv` of `argc` C strings (tests pass their own).
    public static func read(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>)
        -> Result<[String], ArgumentError> {
        var arguments: [String] = []
        for i in 1..<max(1, Int(argc)) {
            guard let pointer = argv[i] else { break }
            guard let text = String(validatingCString: pointer) else {
                let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
                let shown = bytes.map { $0 >= 0x20 && $0 < 0x7F && $0 != 0x5C ? String(UnicodeScalar($0)) : String(format: "\\x%02X", $0) }
                return .failure(ArgumentError(position: i, shown: shown.joined()))
            }
            arguments.append(text)
        }
        return .success(arguments)
    }

    /// An argument that is not valid UTF-8.
    public struct ArgumentError: Error, Equatable, CustomStringConvertible {
        /// 1 for the first argument after the program name.
        public let position: Int
        /// Its bytes, printable ASCII as they are and the others `\xNN`.
        public let shown: String

        /// One line naming the argument.
        public var description: String {
            "argument \(position) (\"\(shown)\") is not valid UTF-8; file names and options must be UTF-8 "
                + "(rename the file, or pass it on standard input with '-')"
        }
    }
}
