// Entry point of `photokernels`: parse → run → exit status (see PhotoKernelsTool).
import CommandLineKit
import Foundation

// A closed pipe (`photokernels apply in.ppm -o - | head -c 10`) must become a write
// error the tool sees (EPIPE), so that files are cleaned up and threads stop, not a
// SIGPIPE that kills it mid-write.
signal(SIGPIPE, SIG_IGN)
// Ctrl-C, `kill` or `timeout` remove the temporary files being written before the
// process ends.
TemporaryFiles.removeOnInterrupt()
switch ProcessArguments.read() {
case .success(let arguments): PhotoKernelsTool.run(arguments).exitProcess()
case .failure(let error):
    Console.err("Error: \(error)\n")
    ExitCode.usage.exitProcess()
}
