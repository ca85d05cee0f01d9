// Checks a variant's output against the scalar reference before it is timed.

import PhotoKernels

/// The agreement rules of SPEC §8, applied to whole buffers.
///
/// Exists because a benchmark that only times would happily report a fast, wrong
/// kernel. Every non-scalar variant is compared with the scalar reference on the same
/// input before its first timed sample; a failure ends the run with exit status 1.
///
/// - Float outputs: `|a − b| ≤ 1e-5` for every channel of every pixel (the synthetic
///   input lies in [0, 1] ⊂ [−1, 2], so SPEC's input condition always holds), and NaN
///   exactly where the reference is NaN.
/// - `Float16` outputs (bit patterns): within the float tolerance or one half-precision
///   step of the larger magnitude, whichever is wider (two results within 1e-5 may round
///   to neighbouring halves), and NaN exactly where the reference is NaN.
/// - Integer outputs: at most 1 LSB apart, in at most 1 % of the samples. SPEC §8 lets
///   two correct paths differ only on samples within τ = 2⁻²⁰ of a tie, and the fused
///   schedule and the unfused reference do (tie-heavy inputs put up to a few tenths of a
///   percent of samples there); this bound is a fast guard against a wrong kernel, while
///   the test suite's family laws check every sample against a `Double` evaluation.
enum Verification {
    /// SPEC §8 float tolerance.
    static let floatTolerance: Float = 1e-5
    /// SPEC §8: the largest integer difference allowed.
    static let maxSampleDifference = 1
    /// The largest fraction of samples allowed to differ (by 1 LSB).
    static let maxDifferingFraction = 0.01

    /// The outcome of a float comparison: how many values are out of tolerance and
    /// the worst one.
    struct FloatReport: Sendable {
        var failures = 0
        var total = 0
        var worstIndex = 0
        var worstChannel = 0
        var worstError: Float = 0
        var expected: Float = 0
        var actual: Float = 0
        var passed: Bool { failures == 0 }

        /// Counts one value out of tolerance, and keeps it as the worst if it is.
        mutating func record(pixel: Int, channel: Int, error: Float, expected: Float, actual: Float) {
            failures += 1
            if failures == 1 || error > worstError {
                worstIndex = pixel
                worstChannel = channel
                worstError = error
                self.expected = expected
                self.actual = actual
            }
        }
    }

    /// Compares `candidate` with `reference` channel by channel.
    ///
    /// - Complexity: O(pixels); one SIMD comparison per pixel, a per-channel look only
    ///   where it fails.
    static func compare(reference: FloatImage, candidate: FloatImage) -> FloatReport {
        precondition(reference.pixelCount == candidate.pixelCount, "compare: sizes differ")
        var report = FloatReport()
        report.total = reference.pixelCount * 4
        let tolerance = SIMD4<Float>(repeating: floatTolerance)
        reference.withUnsafePixels { ref in
            candidate.withUnsafePixels { cand in
                for i in 0..<ref.count {
                    let a = ref[i], b = cand[i]
                    let d = a - b
                    // NaN fails `.<=`, so NaN lanes take the slow path too.
                    if all(pointwiseMax(d, -d) .<= tolerance) { continue }
                    for c in 0..<4 {
                        let x = a[c], y = b[c]
                        if x.isNaN && y.isNaN { continue }
                        let error = (x.isNaN || y.isNaN) ? Float.infinity : abs(x - y)
                        guard !(error <= floatTolerance) else { continue }
                        report.record(pixel: i, channel: c, error: error, expected: x, actual: y)
                    }
                }
            }
        }
        return report
    }

    #if !((os(macOS) || targetEnvironment(macCatalyst)) && arch(x86_64))
    /// Compares two rasters of `Float16` bit patterns, `samplesPerPixel` samples a pixel,
    /// sample by sample (`worstIndex` a pixel, as for `FloatImage`s).
    static func compareHalves(reference: UnsafeBufferPointer<UInt16>, candidate: UnsafeBufferPointer<UInt16>,
                              samplesPerPixel: Int = 4) -> FloatReport {
        precondition(reference.count == candidate.count, "compare: sizes differ")
        var report = FloatReport()
        report.total = reference.count
        for i in 0..<reference.count where reference[i] != candidate[i] {
            let a = Float16(bitPattern: reference[i]), b = Float16(bitPattern: candidate[i])
            if a.isNaN && b.isNaN { continue }
            let step = Float(max(a.magnitude, b.magnitude).ulp)
            let error = (a.isNaN || b.isNaN) ? Float.infinity : abs(Float(a) - Float(b))
            guard !(error <= max(floatTolerance, step)) else { continue }
            report.record(pixel: i / samplesPerPixel, channel: i % samplesPerPixel, error: error, expected: Float(a),
                          actual: Float(b))
        }
        return report
    }
    #endif

    /// The outcome of an integer comparison.
    struct SampleReport: Sendable {
        var differing = 0
        var total = 0
        var worstIndex = 0
        var worstDifference = 0
        var expected = 0
        var actual = 0
        var passed: Bool {
            worstDifference <= maxSampleDifference && Double(differing) <= maxDifferingFraction * Double(total)
        }
    }

    /// Compares two integer rasters sample by sample.
    static func compare<Sample: FixedWidthInteger & UnsignedInteger>(
        reference: UnsafeBufferPointer<Sample>, candidate: UnsafeBufferPointer<Sample>
    ) -> SampleReport {
        precondition(reference.count == candidate.count, "compare: sizes differ")
        var report = SampleReport()
        report.total = reference.count
        for i in 0..<reference.count where reference[i] != candidate[i] {
            let difference = abs(Int(reference[i]) - Int(candidate[i]))
            report.differing += 1
            if difference > report.worstDifference {
                report.worstDifference = difference
                report.worstIndex = i
                report.expected = Int(reference[i])
                report.actual = Int(candidate[i])
            }
        }
        return report
    }

    /// The failure message for a float mismatch of `workload` on a `width`-wide image;
    /// `halves`: the outputs were `Float16`s (`compareHalves`).
    static func message(_ r: FloatReport, workload: Workload, width: Int, halves: Bool = false,
                        channels: [String] = ["R", "G", "B", "A"]) -> String {
        let channel = channels[r.worstChannel]
        let variant = workload.variant?.rawValue ?? "variant"
        let rule = "|a − b| ≤ \(floatTolerance)" + (halves ? " or one half-precision step" : "")
        return """
            \(workload.name) disagrees with the scalar reference (SPEC §8: \(rule)): \
            \(r.failures) of \(r.total) values out of tolerance; worst at pixel (\(r.worstIndex % width), \
            \(r.worstIndex / width)) channel \(channel): scalar \(r.expected), \(variant) \(r.actual) \
            (|Δ| = \(r.worstError)). A fast wrong kernel is not benchmarked.
            """
    }

    /// The failure message for an integer mismatch of `workload`.
    static func message(_ r: SampleReport, workload: Workload, width: Int, against what: String) -> String {
        let pixel = r.worstIndex / 4
        let channel = ["R", "G", "B", "A"][r.worstIndex % 4]
        let percent = 100 * Double(r.differing) / Double(max(r.total, 1))
        return """
            \(workload.name) disagrees with \(what) (SPEC §8: ≤ \(maxSampleDifference) LSB in \
            ≤ \(maxDifferingFraction * 100) % of samples): \(r.differing) of \(r.total) samples differ \
            (\(formatted(percent, digits: 4)) %), worst at pixel (\(pixel % width), \(pixel / width)) \
            channel \(channel): expected \(r.expected), got \(r.actual) (\(r.worstDifference) LSB).
            """
    }
}
