// Entry point of `photokernels`: parse → run → exit status (see PhotoKernelsTool).
import Foundation

// A closed pipe (`photokernels apply in.ppm -o - | head -c 10`) must become a write
// error the tool reports, not a SIGPIPE that kills it.
signal(SIGPIPE, SIG_IGN)
exit(PhotoKernelsTool.run(Array(CommandLine.arguments.dropFirst())).rawValue)
