import CommandLineKit
import Testing

/// The sysexits statuses and the error that carries one.
@Suite("Exit codes and errors")
struct ExitCodeTests {
    @Test("the shared statuses have their sysexits(3) values")
    func values() {
        let statuses: [(ExitCode, Int32)] = [
            (.success, 0), (.usage, 64), (.dataError, 65), (.noInput, 66), (.software, 70), (.osError, 71), (.cantCreate, 73),
            (.ioError, 74), (.brokenPipe, 141),
        ]
        for (status, value) in statuses {
            #expect(status.rawValue == value && status.description == String(value))
            #expect(ExitCode(rawValue: value) == status)
        }
        #expect(Set(statuses.map(\.0)).count == statuses.count)
        #expect(ExitCode(rawValue: 2) != .usage)
    }

    @Test("each constructor sets its status; only usage errors point to help")
    func constructors() {
        let cases: [(CommandLineError, ExitCode)] = [
            (.usage("u", command: "tool sub"), .usage), (.data("d"), .dataError), (.noInput("n"), .noInput),
            (.software("s"), .software), (.cantCreate("c"), .cantCreate), (.ioError("i"), .ioError),
            (CommandLineError("x", status: ExitCode(rawValue: 2)), ExitCode(rawValue: 2)), (.brokenPipe, .brokenPipe),
        ]
        for (error, status) in cases {
            #expect(error.status == status)
            #expect((error.helpCommand != nil) == (status == .usage))
        }
        #expect(CommandLineError.usage("u", command: "tool sub").helpCommand == "tool sub")
        #expect(CommandLineError.data("d").description == "d")
    }

    @Test("the report is 'Error: …', plus where to find help for a usage error")
    func report() {
        #expect(CommandLineError.usage("unknown option '--x'", command: "tool sub").report
                == "Error: unknown option '--x'\nRun 'tool sub --help' for usage.\n")
        #expect(CommandLineError.noInput("cannot read 'a': no such file").report
                == "Error: cannot read 'a': no such file\n")
        #expect(CommandLineError("two\nlines", status: .software).report == "Error: two\nlines\n")
    }
}
