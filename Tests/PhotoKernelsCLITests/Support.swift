import Foundation
import Netpbm
import PhotoKernels
import Testing

/// Runs the built `photokernels` binary as a subprocess, the way a user does, so the
/// tests see real exit statuses, real standard streams and real files.
enum Tool {
    /// The binary: `$PHOTOKERNELS_CLI` if set, else `photokernels` in the build
    /// products directory that holds this test bundle. On Linux the test bundle is
    /// itself an executable (`…/debug/PhotoKernelsPackageTests.xctest`) whose directory
    /// holds every product; on macOS the `.xctest` bundle sits in that directory too.
    static let url: URL? = {
        let fileManager = FileManager.default
        if let path = ProcessInfo.processInfo.environment["PHOTOKERNELS_CLI"] {
            return URL(fileURLWithPath: path)
        }
        var starts: [URL] = []
        if let executable = Bundle.main.executableURL { starts.append(executable) }
        starts += Bundle.allBundles.map(\.bundleURL).filter { $0.pathExtension == "xctest" }
        starts.append(URL(fileURLWithPath: CommandLine.arguments[0]))
        for start in starts {
            var directory = start.resolvingSymlinksInPath()
            for _ in 0..<4 {
                directory = directory.deletingLastPathComponent()
                let candidate = directory.appendingPathComponent("photokernels")
                if fileManager.isExecutableFile(atPath: candidate.path) { return candidate }
            }
        }
        return nil
    }()

    /// What one run produced.
    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs the tool with `arguments` in `sandbox.work`, feeding `stdin` (or nothing),
    /// with `environment` added to the test's own. Standard output goes to a file that
    /// starts with `stdoutPrefix`, open at its end (as a shell's `>>` leaves it).
    static func run(_ arguments: [String], in sandbox: Sandbox, stdin: Data? = nil,
                    environment: [String: String] = [:], stdoutPrefix: Data = Data()) throws -> Result {
        let executable = try #require(url, "photokernels binary not found next to the test bundle; set PHOTOKERNELS_CLI")
        let id = UUID().uuidString
        let outURL = sandbox.io.appendingPathComponent("\(id).out")
        let errURL = sandbox.io.appendingPathComponent("\(id).err")
        let inURL = sandbox.io.appendingPathComponent("\(id).in")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: stdoutPrefix)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: inURL.path, contents: stdin ?? Data())
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        try out.seekToEnd()
        let input = try FileHandle(forReadingFrom: inURL)
        defer { try? out.close(); try? err.close(); try? input.close() }

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = sandbox.work
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        try process.run()
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: try Data(contentsOf: outURL),
                      stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }
}

extension Tool {
    /// Runs the tool with `arguments` (paths absolute: it runs in the test's own
    /// directory), its standard streams on `/dev/null`, and returns its exit status and
    /// its own peak resident memory in KiB: the `VmHWM` of its `/proc/<pid>/status`,
    /// read every 2 ms until it exits (the last reading). Not `wait4`'s `ru_maxrss`:
    /// Linux carries the spawning process's peak into it across `exec`, so it would
    /// never read below the test runner's own size. `nil` memory where `/proc` has none.
    static func peakMemory(_ arguments: [String]) throws -> (status: Int32, kilobytes: Int?) {
        let executable = try #require(url, "photokernels binary not found next to the test bundle; set PHOTOKERNELS_CLI")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, environ)
        try #require(spawned == 0, "posix_spawn: \(spawned)")
        var status: Int32 = 0, peak: Int?
        while true {
            // Read before asking whether it ended: a process that has ended has no VmHWM.
            if let value = peakResidentKiB(of: pid) { peak = max(peak ?? 0, value) }
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped == -1 && errno != EINTR) { break }
            usleep(2000)
        }
        let exited = status & 0x7f == 0
        return (exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), peak)
    }

    /// `VmHWM` (the peak resident set) of a running process, in KiB.
    static func peakResidentKiB(of pid: Int32) -> Int? {
        // Read to the end: a /proc file reports a size of 0.
        guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/status") else { return nil }
        defer { try? handle.close() }
        let status = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }
}

/// A temporary directory for one test: `work` is the tool's current directory (and
/// holds nothing but what the test and the tool put there), `io` the captured streams.
final class Sandbox {
    let root: URL
    let work: URL
    let io: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("photokernels-cli-\(UUID().uuidString)")
        work = root.appendingPathComponent("work")
        io = root.appendingPathComponent("io")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// The path of `name` inside `work`.
    func url(_ name: String) -> URL { work.appendingPathComponent(name) }

    /// Writes `bytes` to `work/name`.
    @discardableResult
    func write(_ name: String, _ bytes: some Sequence<UInt8>) throws -> URL {
        let url = url(name)
        try Data(bytes).write(to: url)
        return url
    }

    /// The bytes of `work/name`.
    func read(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }

    /// Decodes every image of `work/name`.
    func images(_ name: String) throws -> [NetpbmImage] { try NetpbmReader.readAll(read(name)) }

    /// The names in `work`, sorted.
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: work.path).sorted()
    }
}

/// Small hand-made test images: every one holds dark, light, saturated and mid
/// values, so each kernel has something to change.
enum Fixtures {
    /// An image from interleaved samples.
    static func image(_ width: Int, _ height: Int, depth: Int, maxval: Int, tupleType: TupleType,
                      format: NetpbmFormat, samples: [Int]) -> NetpbmImage {
        try! NetpbmImage(width: width, height: height, depth: depth, maxval: maxval, tupleType: tupleType,
                         samples: samples.map { UInt16($0) }, format: format)
    }

    /// Deterministic pseudo-random samples in 0...maxval (a fixed LCG).
    static func samples(_ count: Int, maxval: Int, seed: UInt64) -> [Int] {
        var state = seed
        return (0..<count).map { i in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            switch i % 7 {
            case 0: return 0
            case 1: return maxval
            default: return Int((state >> 33) % UInt64(maxval + 1))
            }
        }
    }

    static let rgb8 = image(4, 3, depth: 3, maxval: 255, tupleType: .rgb, format: .rawPPM,
                            samples: samples(36, maxval: 255, seed: 1))
    static let rgb16 = image(3, 2, depth: 3, maxval: 65535, tupleType: .rgb, format: .rawPPM,
                             samples: samples(18, maxval: 65535, seed: 2))
    static let gray8 = image(5, 2, depth: 1, maxval: 255, tupleType: .grayscale, format: .rawPGM,
                             samples: samples(10, maxval: 255, seed: 3))
    static let rgba8 = image(3, 3, depth: 4, maxval: 255, tupleType: .rgbAlpha, format: .pam,
                             samples: samples(36, maxval: 255, seed: 4))
    static let rgba16 = image(2, 3, depth: 4, maxval: 65535, tupleType: .rgbAlpha, format: .pam,
                              samples: samples(24, maxval: 65535, seed: 5))
    /// A plain P3 written by hand (maxval 1000, comments and uneven spacing).
    static let plainP3Text = "P3\n# hand-made\n3 2\n1000\n0 0 0   1000 1000 1000  250 500 750\n"
        + "1000 0 0\n0 1000 0 # green\n12 345 678\n"

    static func bytes(_ image: NetpbmImage) -> [UInt8] { try! NetpbmWriter.encode(image) }
}

/// The library's own whole-image path, independent of the CLI: the whole raster through
/// one run of the recipe's prepared `EditPlan`, with the sample types `apply` uses
/// (8-bit where a maxval is below 256) — what `apply`, band by band, must reproduce
/// sample for sample.
func libraryPath(_ image: NetpbmImage, layout: SampleLayout, recipe: Recipe, outputLayout: SampleLayout,
                 maxval: Int? = nil, variant: KernelVariant = .simd4) -> [UInt16] {
    let outputMaxval = maxval ?? image.maxval
    let plan = try! EditPlan(stages: recipe.stages).prepared(width: image.width, height: image.height, threads: 1)
    let count = image.width * image.height * outputLayout.channelCount
    func run<In: FixedWidthInteger, Out: FixedWidthInteger>(
        _ input: [In], _ output: Out.Type,
        _ body: (UnsafeBufferPointer<In>, UnsafeMutableBufferPointer<Out>) throws(EditPlanError) -> Void
    ) -> [UInt16] {
        var out = [Out](repeating: 0, count: count)
        input.withUnsafeBufferPointer { i in out.withUnsafeMutableBufferPointer { o in try! body(i, o) } }
        return out.map { UInt16(truncatingIfNeeded: $0) }
    }
    let (m, om) = (image.maxval, outputMaxval)
    let bytes = image.samples.map { UInt8(truncatingIfNeeded: $0) }
    switch (m <= 255, om <= 255) {
    case (true, true):
        return run(bytes, UInt8.self) { i, o throws(EditPlanError) in
            try plan.run(input: i, inputLayout: layout, inputMaxval: m, output: o, outputLayout: outputLayout,
                         outputMaxval: om, variant: variant)
        }
    case (true, false):
        return run(bytes, UInt16.self) { i, o throws(EditPlanError) in
            try plan.run(input: i, inputLayout: layout, inputMaxval: m, output: o, outputLayout: outputLayout,
                         outputMaxval: om, variant: variant)
        }
    case (false, true):
        return run(image.samples, UInt8.self) { i, o throws(EditPlanError) in
            try plan.run(input: i, inputLayout: layout, inputMaxval: m, output: o, outputLayout: outputLayout,
                         outputMaxval: om, variant: variant)
        }
    case (false, false):
        return run(image.samples, UInt16.self) { i, o throws(EditPlanError) in
            try plan.run(input: i, inputLayout: layout, inputMaxval: m, output: o, outputLayout: outputLayout,
                         outputMaxval: om, variant: variant)
        }
    }
}

/// The file the whole-image path writes: `image` through ``libraryPath(_:layout:recipe:outputLayout:maxval:variant:)``,
/// encoded as `format` with the layout's tuple type (for PAM).
func libraryFile(_ image: NetpbmImage, layout: SampleLayout, recipe: Recipe, outputLayout: SampleLayout,
                 format: NetpbmFormat, maxval: Int? = nil) -> [UInt8] {
    let samples = libraryPath(image, layout: layout, recipe: recipe, outputLayout: outputLayout, maxval: maxval)
    let tupleType: TupleType = switch outputLayout {
    case .gray: .grayscale
    case .grayAlpha: .grayscaleAlpha
    case .rgb: .rgb
    case .rgba: .rgbAlpha
    }
    let output = try! NetpbmImage(width: image.width, height: image.height, depth: outputLayout.channelCount,
                                  maxval: maxval ?? image.maxval, tupleType: tupleType, samples: samples, format: format)
    return try! NetpbmWriter.encode(output)
}

/// The largest difference between two equally long sample arrays.
func maxDifference(_ a: [UInt16], _ b: [UInt16]) -> Int {
    zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
}
