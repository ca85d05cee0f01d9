// Entry point of `photokernels`: parse → run → exit status (see PhotoKernelsTool).
import Foundation

// A closed pipe (`photokernels apply in.ppm -o - | head -c 10`) must become a write
// error the tool sees (EPIPE), so that files are cleaned up and threads stop, not a
// SIGPIPE that kills it mid-write.
signal(SIGPIPE, SIG_IGN)
let status = PhotoKernelsTool.run(Array(CommandLine.arguments.dropFirst()))
if status == .brokenPipe {
    // Then end as `cat` does in the same place: quietly, by SIGPIPE (the shell's 141).
    signal(SIGPIPE, SIG_DFL)
    raise(SIGPIPE)
}
exit(status.rawValue)
