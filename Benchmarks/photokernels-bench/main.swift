// photokernels-bench: times every PhotoKernels kernel × variant, the end-to-end
// sample pipeline and Netpbm I/O against a memory-copy roofline; saves and compares
// baselines. See docs/benchmarks.md and `photokernels-bench --help`.

import CommandLineKit
import Foundation

// A closed pipe (`photokernels-bench show before | head`) becomes a write error the
// tool sees (EPIPE) rather than a SIGPIPE mid-write; it then ends by SIGPIPE.
signal(SIGPIPE, SIG_IGN)
// Ctrl-C, `kill` or `timeout` remove the temporary files being written before the
// process ends.
TemporaryFiles.removeOnInterrupt()
switch ProcessArguments.read() {
case .success(let arguments): BenchmarkTool.main(arguments).exitProcess()
case .failure(let error):
    Console.err("Error: \(error)\n")
    ExitCode.usage.exitProcess()
}
