import CommandLineKit
import Foundation

/// The progress line of `apply` on standard error, redrawn in place (`\r`), at most ten
/// times a second, and only when standard error is a terminal: a log file or a pipe
/// gets nothing.
///
/// - several files: `3/10 files, 145.2 MP, 96.4 MP/s`;
/// - one file: `photo.ppm: 37%, 96.4 MP/s`, per band, so a huge image shows its way;
///   in a stream `video.pam: frame 12, 37%, 96.4 MP/s` (the percentage of the frame).
///
/// Thread-safe: every band of every job reports here.
final class ProgressLine: @unchecked Sendable {
    private let lock = NSLock()
    private let files: Int
    private let name: String
    private var filesDone = 0
    private var pixelsDone = 0
    private var frame = 0
    private var framePixels = 0
    private var frameDone = 0
    private var visible = false
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private var lastDraw: ContinuousClock.Instant

    /// A progress line for `files` files (`name` names the only one), or `nil` when
    /// standard error is not a terminal.
    static func make(files: Int, name: String) -> ProgressLine? {
        isatty(STDERR_FILENO) == 1 ? ProgressLine(files: files, name: name) : nil
    }

    private init(files: Int, name: String) {
        self.files = files
        self.name = name.count > 40 ? "…" + name.suffix(39) : name
        start = clock.now
        lastDraw = start
    }

    /// A frame of `pixels` pixels begins (1-based `index` within its file).
    func beginFrame(_ index: Int, pixels: Int) {
        lock.lock()
        defer { lock.unlock() }
        frame = index
        framePixels = pixels
        frameDone = 0
    }

    /// `pixels` more pixels are done.
    func advance(pixels: Int) {
        lock.lock()
        defer { lock.unlock() }
        pixelsDone += pixels
        frameDone += pixels
        drawIfDue()
    }

    /// One more file is done (successfully or not).
    func fileDone() {
        lock.lock()
        defer { lock.unlock() }
        filesDone += 1
        drawIfDue()
    }

    /// Prints `text` (whole lines) on standard error, above the progress line, its
    /// control characters escaped (`Console.printable`).
    func print(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        put((visible ? "\r\u{1B}[K" : "") + Console.printable(text))
        visible = false
    }

    /// Clears the line for good.
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        if visible { put("\r\u{1B}[K") }
        visible = false
    }

    private func drawIfDue() {
        let now = clock.now
        guard now - lastDraw >= .milliseconds(100) else { return }
        lastDraw = now
        let seconds = Double((now - start).components.attoseconds) / 1e18 + Double((now - start).components.seconds)
        let rate = seconds > 0 ? Double(pixelsDone) / 1e6 / seconds : 0
        let line: String
        if files > 1 {
            line = "\(filesDone)/\(files) files, \(Self.decimal(Double(pixelsDone) / 1e6)) MP, \(Self.decimal(rate)) MP/s"
        } else {
            let percent = framePixels > 0 ? min(100, frameDone * 100 / framePixels) : 0
            line = "\(Console.printable(name)): " + (frame > 1 ? "frame \(frame), " : "") + "\(percent)%, \(Self.decimal(rate)) MP/s"
        }
        put("\r" + line + "\u{1B}[K")
        visible = true
    }

    private func put(_ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { _ = try? OutputFile.writeAll($0, to: STDERR_FILENO, name: "standard error") }
    }

    /// One decimal: `96.4`.
    static func decimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
