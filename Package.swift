// swift-tools-version: 6.0
// PhotoKernels: SIMD photo-adjustment kernels, Netpbm I/O, a CLI and a benchmark.
// No dependencies and no unsafe compiler flags, so the package stays usable as a dependency;
// build for speed with `-Xswiftc -target-cpu -Xswiftc native` (see docs/performance.md).
import PackageDescription

let package = Package(
    name: "PhotoKernels",
    products: [
        .library(name: "PhotoKernels", targets: ["PhotoKernels"]),
        .library(name: "Netpbm", targets: ["Netpbm"]),
        .executable(name: "photokernels", targets: ["PhotoKernelsCLI"]),
        .executable(name: "photokernels-bench", targets: ["PhotoKernelsBenchmark"]),
    ],
    targets: [
        // The Float image type, colour matrices, kernels (scalar + SIMD4), recipe and the row-band driver.
        .target(name: "PhotoKernels", dependencies: ["TargetFeatures"]),
        // A module map only, no code: `#if canImport(TargetFeatures.AVX2)` tells whether
        // this build targets a CPU with AVX2 (`-target-cpu native`) or baseline x86-64.
        .systemLibrary(name: "TargetFeatures"),
        // Netpbm reader and writer; knows nothing of kernels.
        .target(name: "Netpbm"),
        // The command-line kit both executables share (not a product): tokenizer, option
        // specs, help pages, exit statuses and the error type.
        .target(name: "CommandLineKit"),
        // The command-line tool: parse, read, apply a recipe, write.
        .executableTarget(
            name: "PhotoKernelsCLI",
            dependencies: ["PhotoKernels", "Netpbm", "CommandLineKit"]
        ),
        // Times every kernel × variant against a memory-copy roofline; baselines and compare.
        .executableTarget(
            name: "PhotoKernelsBenchmark",
            dependencies: ["PhotoKernels", "Netpbm", "CommandLineKit"],
            path: "Benchmarks/photokernels-bench"
        ),
        .testTarget(name: "PhotoKernelsTests", dependencies: ["PhotoKernels"], exclude: ["Vectors", "Fixtures"]),
        .testTarget(name: "NetpbmTests", dependencies: ["Netpbm"]),
        .testTarget(name: "CommandLineKitTests", dependencies: ["CommandLineKit"]),
        .testTarget(name: "PhotoKernelsCLITests",
                    dependencies: ["PhotoKernelsCLI", "PhotoKernels", "Netpbm", "CommandLineKit"]),
        .testTarget(name: "PhotoKernelsBenchmarkTests", dependencies: ["PhotoKernelsBenchmark", "CommandLineKit"]),
    ],
    swiftLanguageModes: [.v6]
)
