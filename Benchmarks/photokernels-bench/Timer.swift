// Clocks and the sampling loop.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The two clocks a sample reads: wall time (monotonic) and the CPU time of the whole
/// process (all threads).
///
/// Exists so the timed region reads exactly two `clock_gettime` calls at each end
/// (vDSO, ~20 ns for the monotonic clock) and nothing else.
enum Clock {
    /// Monotonic wall-clock nanoseconds (`CLOCK_MONOTONIC`; never jumps with NTP steps).
    @inline(__always)
    static func wallNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// CPU nanoseconds consumed by every thread of the process
    /// (`CLOCK_PROCESS_CPUTIME_ID`): a kernel on 2 threads shows about 2× its wall time.
    @inline(__always)
    static func cpuNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}

/// How many timed samples a benchmark gets.
///
/// Sampling continues while `count < minSamples`, or while the timed total is below
/// `minTotalSeconds` and `count < maxSamples`: long runs (a 48 MP kernel) stop at the
/// minimum, short ones collect enough samples for a stable median and p90.
struct SamplingPolicy: Sendable, Equatable {
    /// At least this many samples (≥ 1).
    var minSamples: Int
    /// Keep sampling until the samples add up to this many seconds…
    var minTotalSeconds: Double
    /// …or this many samples were taken.
    var maxSamples: Int

    /// The default: ≥ 5 samples, more until 0.3 s or 50 samples.
    static func standard(minSamples: Int? = nil) -> SamplingPolicy {
        let n = minSamples ?? 5
        return SamplingPolicy(minSamples: n, minTotalSeconds: 0.3, maxSamples: max(n, 50))
    }

    /// `--quick`: ≥ 3 samples, more until 0.05 s or 20 samples.
    static func quick(minSamples: Int? = nil) -> SamplingPolicy {
        let n = minSamples ?? 3
        return SamplingPolicy(minSamples: n, minTotalSeconds: 0.05, maxSamples: max(n, 20))
    }

    /// Whether another sample is due after `count` samples totalling `totalNanoseconds`.
    func wantsMore(count: Int, totalNanoseconds: UInt64) -> Bool {
        if count < minSamples { return true }
        return count < maxSamples && Double(totalNanoseconds) < minTotalSeconds * 1e9
    }
}

/// The raw timings of one benchmark: one wall and one CPU duration per sample, in
/// nanoseconds per iteration (one iteration = one pass over the whole image).
struct SampleSet: Sendable {
    var wallNanoseconds: [Double] = []
    var cpuNanoseconds: [Double] = []
}

/// The sampling loop shared by every workload.
enum Sampler {
    /// Times `body` under `policy`.
    ///
    /// Each sample runs `prepare` (untimed: restore the input the previous sample
    /// overwrote), then reads both clocks, runs `body` once, and reads them again.
    /// Nothing is allocated between the clock reads by this code: the sample arrays
    /// are reserved up front and appended to after the second read.
    static func measure(
        policy: SamplingPolicy,
        prepare: () -> Void = {},
        _ body: () throws -> Void
    ) rethrows -> SampleSet {
        var set = SampleSet()
        set.wallNanoseconds.reserveCapacity(policy.maxSamples)
        set.cpuNanoseconds.reserveCapacity(policy.maxSamples)
        var total: UInt64 = 0
        while policy.wantsMore(count: set.wallNanoseconds.count, totalNanoseconds: total) {
            prepare()
            let c0 = Clock.cpuNanoseconds()
            let t0 = Clock.wallNanoseconds()
            try body()
            let t1 = Clock.wallNanoseconds()
            let c1 = Clock.cpuNanoseconds()
            total += t1 - t0
            set.wallNanoseconds.append(Double(t1 - t0))
            set.cpuNanoseconds.append(Double(c1 &- c0))
        }
        return set
    }
}

/// Keeps a value alive as far as the optimiser can tell, so a result nobody reads
/// is not computed away.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
