// photokernels-bench: times every PhotoKernels kernel × variant, the end-to-end
// sample pipeline and Netpbm I/O against a memory-copy roofline; saves and compares
// baselines. See docs/benchmarks.md and `photokernels-bench --help`.

import Foundation

exit(BenchmarkTool.main(Array(CommandLine.arguments.dropFirst())))
