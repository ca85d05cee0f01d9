// Statistics over samples, and the figures derived from them.

/// Order statistics of one benchmark's samples, in nanoseconds per iteration.
///
/// Exists because the mean of timings is dragged by one preempted sample; the
/// median (p50) is the figure we compare, the minimum is the best the code can do
/// when nothing interferes, and p90 shows how noisy the machine was.
///
/// Percentiles interpolate linearly between closest ranks (NumPy's default):
/// `p(q) = s[⌊r⌋] + (r − ⌊r⌋)·(s[⌊r⌋+1] − s[⌊r⌋])` with `r = q·(n − 1)` over the
/// sorted samples `s`. The median of an even count is the mean of the middle two.
struct Statistics: Sendable, Equatable {
    /// The fastest sample.
    let min: Double
    /// The 50th percentile.
    let median: Double
    /// The 90th percentile.
    let p90: Double
    /// The slowest sample.
    let max: Double
    /// The arithmetic mean.
    let mean: Double
    /// How many samples.
    let count: Int

    /// - Precondition: `samples` is not empty.
    init(_ samples: [Double]) {
        precondition(!samples.isEmpty, "Statistics of no samples")
        let sorted = samples.sorted()
        count = sorted.count
        min = sorted[0]
        max = sorted[sorted.count - 1]
        mean = sorted.reduce(0, +) / Double(sorted.count)
        median = Statistics.percentile(sorted, 0.5)
        p90 = Statistics.percentile(sorted, 0.9)
    }

    /// The `q`-quantile (0…1) of `sorted`, interpolated linearly.
    static func percentile(_ sorted: [Double], _ q: Double) -> Double {
        let rank = q * Double(sorted.count - 1)
        let lower = Int(rank.rounded(.down))
        let upper = Swift.min(lower + 1, sorted.count - 1)
        let fraction = rank - Double(lower)
        return sorted[lower] + fraction * (sorted[upper] - sorted[lower])
    }

    /// `p90 / min − 1`: the run's own spread, used as a noise band by `compare`.
    var spread: Double { min > 0 ? p90 / min - 1 : 0 }
}

/// One timed benchmark: the workload, its samples and their statistics.
///
/// The derived figures that need *other* results (speedup over scalar, roofline
/// multiple) are filled in by `Results.derive()` once every benchmark has run.
struct Measurement: Sendable {
    /// What was timed.
    let workload: Workload
    /// Wall-time statistics (ns per iteration).
    let wall: Statistics
    /// Median process CPU time per iteration, all threads (ns).
    let cpuMedian: Double
    /// The scalar variant's median divided by this one's; nil when not applicable.
    var speedupOverScalar: Double?
    /// This median divided by the time the roofline copy needs for the same bytes.
    var rooflineMultiple: Double?

    init(workload: Workload, samples: SampleSet) {
        self.workload = workload
        wall = Statistics(samples.wallNanoseconds)
        cpuMedian = Statistics(samples.cpuNanoseconds).median
    }

    /// Pixels per second at the median.
    var pixelsPerSecond: Double { Double(workload.pixels) / (wall.median * 1e-9) }
    /// Bytes read + written per second at the median.
    var bytesPerSecond: Double { Double(workload.bytesMoved) / (wall.median * 1e-9) }
    /// Median nanoseconds per pixel.
    var nanosecondsPerPixel: Double { wall.median / Double(workload.pixels) }
}

/// Derives the cross-benchmark figures.
enum Results {
    /// Fills `speedupOverScalar` (same kernel, pipeline and size, scalar variant) and
    /// `rooflineMultiple` (median ÷ (bytes moved ÷ the size's matching copy bandwidth)).
    ///
    /// A roofline multiple of 1 means the benchmark moves its bytes as fast as a plain
    /// copy of those bytes; 3 means it takes three times as long — compute-bound, or
    /// leaving bandwidth unused.
    static func derive(_ measurements: [Measurement]) -> [Measurement] {
        var scalarMedian: [String: Double] = [:]
        var copyBandwidth: [String: Double] = [:]
        for m in measurements {
            if m.workload.variant == .scalar { scalarMedian[m.workload.scalarKey] = m.wall.median }
            if case .copy(let buffer) = m.workload.kind {
                copyBandwidth["\(buffer.rawValue)@\(m.workload.size.label)"] = m.bytesPerSecond
            }
        }
        return measurements.map { m in
            var m = m
            if m.workload.variant != nil, let scalar = scalarMedian[m.workload.scalarKey] {
                m.speedupOverScalar = scalar / m.wall.median
            }
            if case .copy = m.workload.kind {
                m.rooflineMultiple = 1  // by definition (and without rounding noise)
            } else if let buffer = m.workload.roofline,
               let bandwidth = copyBandwidth["\(buffer.rawValue)@\(m.workload.size.label)"], bandwidth > 0 {
                let copySeconds = Double(m.workload.bytesMoved) / bandwidth
                m.rooflineMultiple = (m.wall.median * 1e-9) / copySeconds
            }
            return m
        }
    }
}
