// The context block: which machine, build and commit produced a run.

import Foundation

/// How this binary was built and where it runs — the `context` object of the JSON
/// report, in google-benchmark's layout (`date`, `host_name`, `executable`,
/// `num_cpus`, `mhz_per_cpu`, `cpu_scaling_enabled`, `caches`, `load_avg`,
/// `library_build_type`, `json_schema_version`) plus our own keys.
///
/// Exists because a timing without its context cannot be compared: `compare` warns
/// when two runs differ in build type, code generation, threads, pages, seed or host.
/// Every field but `date` is optional when decoding, so plain google-benchmark
/// files load too.
struct RunContext: Codable, Sendable {
    /// One CPU cache as google-benchmark lists it.
    struct Cache: Codable, Sendable {
        var type: String
        var level: Int
        var size: Int
        var numSharing: Int

        enum CodingKeys: String, CodingKey {
            case type, level, size
            case numSharing = "num_sharing"
        }
    }

    var date: String
    var hostName: String?
    var executable: String?
    var numCPUs: Int?
    var mhzPerCPU: Int?
    var cpuScalingEnabled: Bool?
    var caches: [Cache]?
    var loadAverage: [Double]?
    var libraryBuildType: String?
    var jsonSchemaVersion: Int?
    // Ours.
    var cpuModel: String?
    var cpuFeatures: [String]?
    var os: String?
    var swiftVersion: String?
    var targetCPU: String?
    var gitCommit: String?
    var threads: Int?
    /// The pages the images and rasters were advised to, where the advice takes effect
    /// (`PageChoice.effective`): `huge` or `base`.
    var pages: String?
    /// `--seed` of the synthetic photo.
    var seed: UInt64?
    var commandLine: String?
    var photokernelsSchemaVersion: Int?

    enum CodingKeys: String, CodingKey {
        case date
        case hostName = "host_name"
        case executable
        case numCPUs = "num_cpus"
        case mhzPerCPU = "mhz_per_cpu"
        case cpuScalingEnabled = "cpu_scaling_enabled"
        case caches
        case loadAverage = "load_avg"
        case libraryBuildType = "library_build_type"
        case jsonSchemaVersion = "json_schema_version"
        case cpuModel = "cpu_model"
        case cpuFeatures = "cpu_features"
        case os
        case swiftVersion = "swift_version"
        case targetCPU = "target_cpu"
        case gitCommit = "git_commit"
        case threads
        case pages
        case seed
        case commandLine = "command_line"
        case photokernelsSchemaVersion = "photokernels_schema_version"
    }

    /// The version of our additions to google-benchmark's layout.
    static let schemaVersion = 1

    /// The context of this process, run with `threads` threads on `pages`, its photo
    /// made from `seed`.
    static func current(threads: Int, pages: PageChoice, seed: UInt64) -> RunContext {
        let cpuinfo = CPUInfo.read()
        return RunContext(
            date: ISO8601DateFormatter().string(from: Date()),
            hostName: ProcessInfo.processInfo.hostName,
            executable: CommandLine.arguments.first,
            numCPUs: ProcessInfo.processInfo.activeProcessorCount,
            mhzPerCPU: cpuinfo.mhz,
            cpuScalingEnabled: CPUInfo.scalingEnabled(),
            caches: CPUInfo.caches(),
            loadAverage: CPUInfo.loadAverage(),
            libraryBuildType: BuildInfo.buildType,
            jsonSchemaVersion: 1,
            cpuModel: cpuinfo.model,
            cpuFeatures: cpuinfo.features,
            os: BuildInfo.operatingSystem,
            swiftVersion: BuildInfo.swiftVersion,
            targetCPU: CodegenProbe.targetCPU,
            gitCommit: GitInfo.commit(from: FileManager.default.currentDirectoryPath),
            threads: threads,
            pages: pages.effective.rawValue,
            seed: seed,
            commandLine: CommandLine.arguments.dropFirst().map(shellQuoted).joined(separator: " "),
            photokernelsSchemaVersion: schemaVersion)
    }
}

/// Facts fixed when the binary was compiled.
enum BuildInfo {
    /// `"debug"` or `"release"`: SwiftPM passes `-DDEBUG` to every debug build
    /// (checked with `swift build -v`), and `-c release` does not.
    static var buildType: String {
        #if DEBUG
        return "debug"
        #else
        return "release"
        #endif
    }

    /// Whether this is a debug build.
    static var isDebug: Bool { buildType == "debug" }

    /// The compiler that built this binary, from compile-time `#if compiler` checks
    /// (the patch level is the highest one tested below; a newer compiler than the
    /// ladder knows shows as `>= <top>`).
    static var swiftVersion: String {
        #if compiler(>=7.0)
        return ">= 7.0"
        #elseif compiler(>=6.4)
        return "6.4"
        #elseif compiler(>=6.3.3)
        return "6.3.3"
        #elseif compiler(>=6.3.2)
        return "6.3.2"
        #elseif compiler(>=6.3.1)
        return "6.3.1"
        #elseif compiler(>=6.3)
        return "6.3"
        #elseif compiler(>=6.2)
        return "6.2"
        #elseif compiler(>=6.1)
        return "6.1"
        #elseif compiler(>=6.0)
        return "6.0"
        #else
        return "< 6.0"
        #endif
    }

    /// `uname` system and release, plus the distribution's PRETTY_NAME if known.
    static var operatingSystem: String {
        var name = utsname()
        uname(&name)
        func string<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        var text = "\(string(name.sysname)) \(string(name.release)) \(string(name.machine))"
        if let release = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8),
           let line = release.split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") }) {
            text += " (" + line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) + ")"
        }
        return text
    }
}

/// What the host CPU is, from Linux's `/proc` and `/sys` (absent elsewhere: the
/// fields are then omitted).
enum CPUInfo {
    /// `model name`, `cpu MHz` and the SIMD flags that matter here.
    static func read() -> (model: String?, mhz: Int?, features: [String]?) {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return (nil, nil, nil) }
        var model: String?, mhz: Int?, features: [String]?
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let key = parts[0].trimmingCharacters(in: .whitespaces)
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            switch key {
            case "model name" where model == nil: model = value
            case "cpu MHz" where mhz == nil: mhz = Double(value).map { Int($0.rounded()) }
            case "flags" where features == nil:
                let flags = Set(value.split(separator: " ").map(String.init))
                features = ["sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512vl"].filter(flags.contains)
            default: break
            }
        }
        return (model, mhz, features)
    }

    /// google-benchmark's rule: scaling is on unless the governor is `performance`.
    static func scalingEnabled() -> Bool? {
        guard let governor = try? String(contentsOfFile: "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
                                         encoding: .utf8) else { return nil }
        return governor.trimmingCharacters(in: .whitespacesAndNewlines) != "performance"
    }

    /// The caches of CPU 0 (`/sys/devices/system/cpu/cpu0/cache/index*`).
    static func caches() -> [RunContext.Cache]? {
        let root = "/sys/devices/system/cpu/cpu0/cache"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: root) else { return nil }
        var caches: [RunContext.Cache] = []
        for entry in entries.sorted() where entry.hasPrefix("index") {
            func field(_ name: String) -> String? {
                (try? String(contentsOfFile: "\(root)/\(entry)/\(name)", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard let type = field("type"), let level = field("level").flatMap({ Int($0) }),
                  let sizeText = field("size") else { continue }
            var size = Int(sizeText.filter(\.isNumber)) ?? 0
            if sizeText.hasSuffix("K") { size *= 1024 } else if sizeText.hasSuffix("M") { size *= 1024 * 1024 }
            let sharing = field("shared_cpu_list").map(countCPUs) ?? 1
            caches.append(.init(type: type, level: level, size: size, numSharing: sharing))
        }
        return caches.isEmpty ? nil : caches
    }

    /// Counts CPUs in a list such as `0-3,8`.
    static func countCPUs(_ list: String) -> Int {
        list.split(separator: ",").reduce(0) { total, part in
            let bounds = part.split(separator: "-").compactMap { Int($0) }
            return total + (bounds.count == 2 ? bounds[1] - bounds[0] + 1 : 1)
        }
    }

    /// The 1, 5 and 15 minute load averages: a busy machine explains a noisy run.
    static func loadAverage() -> [Double]? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
        let values = text.split(separator: " ").prefix(3).compactMap { Double($0) }
        return values.count == 3 ? values : nil
    }
}

/// The commit of the checkout the benchmark runs in.
enum GitInfo {
    /// Finds `.git` upward from `directory`, reads `HEAD`, follows `ref: …` to the loose
    /// ref file or `packed-refs`; a `.git` *file* (worktree) is followed to its
    /// `gitdir`. Returns `"unknown"` outside a repository or before the first commit.
    /// Reads files only: no `git` process, so it works where git is not installed.
    static func commit(from directory: String) -> String {
        var url = URL(fileURLWithPath: directory, isDirectory: true).standardizedFileURL
        while true {
            let dotGit = url.appendingPathComponent(".git")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: dotGit.path, isDirectory: &isDirectory) {
                var gitDir = dotGit
                if !isDirectory.boolValue {
                    guard let text = try? String(contentsOf: dotGit, encoding: .utf8),
                          let line = text.split(separator: "\n").first(where: { $0.hasPrefix("gitdir:") }) else { return "unknown" }
                    let path = line.dropFirst("gitdir:".count).trimmingCharacters(in: .whitespaces)
                    gitDir = path.hasPrefix("/") ? URL(fileURLWithPath: path) : url.appendingPathComponent(path)
                }
                return resolveHead(gitDir) ?? "unknown"
            }
            let parent = url.deletingLastPathComponent()
            if parent.path == url.path { return "unknown" }
            url = parent
        }
    }

    private static func resolveHead(_ gitDir: URL) -> String? {
        guard let head = try? String(contentsOf: gitDir.appendingPathComponent("HEAD"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines) else { return nil }
        guard head.hasPrefix("ref:") else { return isHash(head) ? head : nil }
        let ref = head.dropFirst(4).trimmingCharacters(in: .whitespaces)
        // A worktree keeps refs in the common directory.
        var roots = [gitDir]
        if let common = try? String(contentsOf: gitDir.appendingPathComponent("commondir"), encoding: .utf8) {
            let path = common.trimmingCharacters(in: .whitespacesAndNewlines)
            roots.append(path.hasPrefix("/") ? URL(fileURLWithPath: path) : gitDir.appendingPathComponent(path))
        }
        for root in roots {
            if let hash = try? String(contentsOf: root.appendingPathComponent(ref), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines), isHash(hash) {
                return hash
            }
            if let packed = try? String(contentsOf: root.appendingPathComponent("packed-refs"), encoding: .utf8) {
                for line in packed.split(separator: "\n") where line.hasSuffix(" " + ref) {
                    let hash = String(line.prefix { $0 != " " })
                    if isHash(hash) { return hash }
                }
            }
        }
        return nil
    }

    private static func isHash(_ text: String) -> Bool {
        (text.count == 40 || text.count == 64) && text.allSatisfy(\.isHexDigit)
    }
}

/// Tells how the compiler generated vector code for this binary, by reading the
/// machine code of three probe functions compiled into it.
///
/// The flags are not recorded in the binary, `#if canImport(TargetFeatures.AVX2)`
/// says what the build targets rather than what the compiler emitted (a test holds
/// the two to agree), and the host's `/proc/cpuinfo` says what the *machine* can do,
/// not what the *binary* uses. So we look at our own
/// code: three `@convention(c)` closures — the closure body itself in optimised builds,
/// a thunk that calls it in debug builds (followed) — are scanned for
///
/// - a 256-bit `vpaddd` (VEX prefix with L = 1, opcode 0xFE): the `SIMD8<Int32>` add
///   compiled for AVX2; a baseline x86-64 build uses two SSE2 `paddd` instead;
/// - a 512-bit `vpaddd` (EVEX prefix 0x62 with L'L = 10, opcode 0xFE): the
///   `SIMD16<Int32>` add compiled for AVX-512; an AVX2 build uses two 256-bit ones;
/// - an FMA3 instruction (3-byte VEX, map 0F38, opcode 0x96–0xBF):
///   `Float.addingProduct` compiled for FMA; a baseline build calls `fmaf`;
/// - any VEX `vzeroupper` (C5 F8 77): AVX without AVX2.
///
/// The result is `"x86-64 avx2 fma"` for `-target-cpu native` (or haswell, znver3…) on
/// a modern x86, `"x86-64 avx2 fma avx512"` for the same on a CPU with AVX-512 (or
/// skylake-avx512…), `"x86-64 baseline (sse2)"` for the default, and the architecture
/// name elsewhere. It describes how our module was compiled; the PhotoKernels library is
/// compiled with the same flags in a SwiftPM build.
enum CodegenProbe {
    /// A `SIMD8<Int32>` add in memory.
    private static let vectorProbe: @convention(c) (UnsafeMutableRawPointer) -> Void = { pointer in
        let v = pointer.assumingMemoryBound(to: SIMD8<Int32>.self)
        v[0] = v[0] &+ v[1]
    }

    /// A `SIMD16<Int32>` add in memory: one 512-bit `vpaddd` where the build targets
    /// AVX-512.
    private static let wideVectorProbe: @convention(c) (UnsafeMutableRawPointer) -> Void = { pointer in
        let v = pointer.assumingMemoryBound(to: SIMD16<Int32>.self)
        v[0] = v[0] &+ v[1]
    }

    /// A fused multiply-add.
    private static let fmaProbe: @convention(c) (Float, Float, Float) -> Float = { a, b, c in
        c.addingProduct(a, b)
    }

    /// The description stored as `target_cpu`.
    static var targetCPU: String {
        #if arch(x86_64)
        // Run both once, so the probes are real, reachable code.
        var vectors = [SIMD8<Int32>](repeating: SIMD8(repeating: 1), count: 2)
        vectors.withUnsafeMutableBytes { vectorProbe($0.baseAddress!) }
        blackHole(vectors)
        var wideVectors = [SIMD16<Int32>](repeating: SIMD16(repeating: 1), count: 2)
        wideVectors.withUnsafeMutableBytes { wideVectorProbe($0.baseAddress!) }
        blackHole(wideVectors)
        blackHole(fmaProbe(1, 2, 3))
        let vectorCode = code(of: unsafeBitCast(vectorProbe, to: UnsafeRawPointer.self))
        let fmaCode = code(of: unsafeBitCast(fmaProbe, to: UnsafeRawPointer.self))
        var features: [String] = []
        if containsAVX2(vectorCode) { features.append("avx2") } else if containsVZeroUpper(vectorCode + fmaCode) {
            features.append("avx")
        }
        if containsFMA(fmaCode) { features.append("fma") }
        if containsAVX512(code(of: unsafeBitCast(wideVectorProbe, to: UnsafeRawPointer.self))) { features.append("avx512") }
        return features.isEmpty ? "x86-64 baseline (sse2)" : "x86-64 " + features.joined(separator: " ")
        #elseif arch(arm64)
        return "arm64"
        #else
        return "unknown"
        #endif
    }

    /// Up to 256 bytes at `start`, plus (one level deep) the bytes of every function a
    /// direct `call`/`jmp rel32` in the first 16 bytes goes to: the debug-build thunk.
    static func code(of start: UnsafeRawPointer) -> [UInt8] {
        let mappings = readableMappings()
        // Never read past the end of the mapping that holds `p` (a fault would kill the run).
        func bytes(_ p: UnsafeRawPointer, _ n: Int) -> [UInt8] {
            let address = UInt(bitPattern: p)
            guard let range = mappings.first(where: { $0.contains(address) }) else { return [] }
            let count = min(n, Int(range.upperBound - address))
            return (0..<count).map { p.load(fromByteOffset: $0, as: UInt8.self) }
        }
        var result = bytes(start, 256)
        guard result.count >= 32 else { return result }
        for i in 0..<16 where result[i] == 0xE8 || result[i] == 0xE9 {
            let displacement = Int(Int32(bitPattern: UInt32(result[i + 1]) | UInt32(result[i + 2]) << 8
                                          | UInt32(result[i + 3]) << 16 | UInt32(result[i + 4]) << 24))
            // Only nearby targets: our own module's text, never a PLT or another library.
            if abs(displacement) < 1 << 20 {
                let target = start + i + 5 + displacement
                result += bytes(target, 512)
                // The native closure may call one specialised SIMD operator (debug).
                let inner = bytes(target, 512)
                for j in 0..<max(0, inner.count - 5) where inner[j] == 0xE8 {
                    let d = Int(Int32(bitPattern: UInt32(inner[j + 1]) | UInt32(inner[j + 2]) << 8
                                      | UInt32(inner[j + 3]) << 16 | UInt32(inner[j + 4]) << 24))
                    if abs(d) < 1 << 20 { result += bytes(target + j + 5 + d, 256) }
                }
            }
        }
        return result
    }

    /// The readable address ranges of this process (`/proc/self/maps`).
    static func readableMappings() -> [Range<UInt>] {
        guard let text = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 2, fields[1].first == "r" else { return nil }
            let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            return bounds.count == 2 && bounds[0] < bounds[1] ? bounds[0]..<bounds[1] : nil
        }
    }

    /// A 256-bit `vpaddd`: `C5 [R vvvv 1 01] FE` or `C4 [RXB 00001] [W vvvv 1 01] FE`.
    static func containsAVX2(_ code: [UInt8]) -> Bool {
        for i in 0..<max(0, code.count - 3) {
            if code[i] == 0xC5, code[i + 1] & 0x07 == 0x05, code[i + 2] == 0xFE { return true }
            if code[i] == 0xC4, code[i + 1] & 0x1F == 0x01, code[i + 2] & 0x07 == 0x05, code[i + 3] == 0xFE { return true }
        }
        return false
    }

    /// A 512-bit `vpaddd`: `62 [RXBR' 00 01] [W vvvv 1 01] [z 10 b V' aaa] FE` (EVEX,
    /// vector length 512).
    static func containsAVX512(_ code: [UInt8]) -> Bool {
        for i in 0..<max(0, code.count - 4)
        where code[i] == 0x62 && code[i + 1] & 0x0F == 0x01 && code[i + 2] & 0x87 == 0x05
            && code[i + 3] & 0x60 == 0x40 && code[i + 4] == 0xFE {
            return true
        }
        return false
    }

    /// An FMA3 instruction: `C4 [RXB 00010] [W vvvv L 01] op` with op in 96–9F, A6–AF, B6–BF.
    static func containsFMA(_ code: [UInt8]) -> Bool {
        for i in 0..<max(0, code.count - 3) where code[i] == 0xC4 && code[i + 1] & 0x1F == 0x02 && code[i + 2] & 0x03 == 0x01 {
            let op = code[i + 3]
            if (0x96...0x9F).contains(op) || (0xA6...0xAF).contains(op) || (0xB6...0xBF).contains(op) { return true }
        }
        return false
    }

    #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
    /// A `Float` rounded to `Float16`: `vcvtps2ph` where the build targets F16C, a call
    /// to the library's conversion elsewhere.
    private static let halfProbe: @convention(c) (Float) -> UInt16 = { x in Float16(x).bitPattern }

    /// Whether this module's code rounds `Float` to `Float16` by F16C's instruction
    /// (not part of `targetCPU`, whose strings saved reports hold). Meaningful in an
    /// optimised build only: unoptimised, `Float16(x)` is a call into the standard
    /// library, which is compiled for the baseline.
    static var emitsF16C: Bool {
        blackHole(halfProbe(1))
        return containsF16C(code(of: unsafeBitCast(halfProbe, to: UnsafeRawPointer.self)))
    }
    #endif

    /// A `vcvtps2ph`: `C4 [RXB 00011] [W vvvv L 01] 1D`, or its EVEX form
    /// `62 [RXBR' 0 011] [W vvvv 1 01] [z L'L b V' aaa] 1D`; or, where the CPU has
    /// AVX512-FP16 (which LLVM then prefers for a scalar), `vcvtss2sh` or `vcvtps2phx`:
    /// `62 [RXBR' 0 101] [W vvvv 1 00 or 01] [z L'L b V' aaa] 1D` (map 5).
    static func containsF16C(_ code: [UInt8]) -> Bool {
        for i in 0..<max(0, code.count - 4) {
            if code[i] == 0xC4, code[i + 1] & 0x1F == 0x03, code[i + 2] & 0x03 == 0x01, code[i + 3] == 0x1D { return true }
            if code[i] == 0x62, code[i + 1] & 0x0F == 0x03, code[i + 2] & 0x07 == 0x05, code[i + 4] == 0x1D { return true }
            if code[i] == 0x62, code[i + 1] & 0x0F == 0x05, code[i + 2] & 0x06 == 0x04, code[i + 4] == 0x1D { return true }
        }
        return false
    }

    /// `vzeroupper`.
    static func containsVZeroUpper(_ code: [UInt8]) -> Bool {
        for i in 0..<max(0, code.count - 2) where code[i] == 0xC5 && code[i + 1] == 0xF8 && code[i + 2] == 0x77 {
            return true
        }
        return false
    }
}

/// `argument` as a POSIX shell reads it back: as it is when it holds only characters no
/// shell treats specially, else in single quotes (a quote inside as `'\''`), so a
/// recorded command line can be run again.
func shellQuoted(_ argument: String) -> String {
    let plain = !argument.isEmpty && argument.unicodeScalars.allSatisfy {
        $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_./=:,+@%".unicodeScalars.contains($0))
    }
    return plain ? argument : "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
