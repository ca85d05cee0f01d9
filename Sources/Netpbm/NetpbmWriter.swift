// Writing Netpbm images.
//
// Output layout (no comments anywhere, LF line ends):
//
//     P1/P2/P3:  "P2\n<width> <height>\n<maxval>\n" then the raster as text: every image row
//                starts on a new line, tokens separated by one space (P1: digits with no
//                separator), lines wrapped so none exceeds 70 characters, last line ends
//                with LF. P1 has no maxval line.
//     P4/P5/P6:  "P5\n<width> <height>\n<maxval>\n" then the raw raster (P4: no maxval line;
//                rows packed MSB first, 1 = black, pad bits zero).
//     P7:        "P7\nWIDTH w\nHEIGHT h\nDEPTH d\nMAXVAL m\nTUPLTYPE t\nENDHDR\n" then the
//                raw raster (the TUPLTYPE line is left out when the tuple type is empty,
//                as libnetpbm does).
//
// Samples use 1 byte when maxval < 256, else 2 bytes big-endian. The image's maxval is
// kept. Source: pbm(5), pgm(5), ppm(5), pam(5); libnetpbm's pnm_writepaminit checks.
//
// The bytes come from RasterEncoder, the encoder NetpbmStreamWriter uses, so a whole image
// and the same image written band by band are identical.

import Foundation

/// Encodes ``NetpbmImage`` values as P1–P7 bytes and writes files atomically.
public enum NetpbmWriter {

    /// The longest plain-format line written, in characters (pbm(5): "No line should be
    /// longer than 70 characters").
    public static let maxPlainLineLength = 70

    /// Encodes one image.
    ///
    /// - Parameters:
    ///   - image: the image; every invariant is re-checked.
    ///   - format: the output format; `nil` means `image.format`.
    /// - Returns: the complete file contents.
    /// - Throws: image-phase errors if `image` is inconsistent;
    ///   ``NetpbmError/depthMismatch(format:depth:required:)`` unless depth is 1 for PBM/PGM,
    ///   3 for PPM; ``NetpbmError/maxvalMismatch(format:maxval:required:)`` unless maxval is
    ///   1 for PBM.
    /// - Complexity: O(samples).
    public static func encode(_ image: NetpbmImage, as format: NetpbmFormat? = nil) throws(NetpbmError) -> [UInt8] {
        try encode([image], as: format)
    }

    /// Encodes several images one after another in one stream (each in `format`, or its own
    /// format when `format` is `nil`). ``NetpbmReader/readAll(_:limits:)`` reads them back.
    ///
    /// - Throws: ``NetpbmError/nothingToWrite`` for an empty array, otherwise as ``encode(_:as:)``.
    public static func encode(_ images: [NetpbmImage], as format: NetpbmFormat? = nil) throws(NetpbmError) -> [UInt8] {
        guard !images.isEmpty else { throw .nothingToWrite }
        let headers = try check(images, as: format)
        // Raw output has a known size: reserve it so the result is not regrown.
        var size = 0
        for header in headers where !header.format.isPlain {
            size = size.addingReportingOverflow(RasterDecoder(header: header, rasterStart: 0).rasterBytes &+ 512).partialValue
        }
        var output = OutputBuffer(destination: .memory, capacity: 1 << 20, name: "<memory>")
        output.memory.reserveCapacity(max(0, size))
        writeChecked(images, headers, to: &output)
        return output.memory
    }

    /// Encodes several images as ``encode(_:as:)`` does, but hands the
    /// bytes to `sink` in consecutive pieces instead of returning the whole stream, so
    /// the encoding costs one piece of memory rather than the file's size.
    ///
    /// The pieces, concatenated, are exactly the bytes `encode` returns. Every image is
    /// checked before the first piece is handed over, so a thrown error means `sink`
    /// was never called.
    ///
    /// - Parameters:
    ///   - pieceBytes: the largest piece, at least 1 (and taken as at most 16 MiB). Pieces
    ///     are cut from one buffer of `pieceBytes` bytes (at least 4 KiB), so almost all
    ///     are that size; none is empty.
    ///   - sink: receives each piece, valid only during the call; returns `false` to
    ///     stop early (the caller keeps its own reason).
    /// - Returns: `false` if `sink` stopped the encoding, else `true`.
    /// - Throws: as ``encode(_:as:)``.
    /// - Complexity: O(samples); allocates one piece buffer.
    @discardableResult
    public static func encode(
        _ images: [NetpbmImage], as format: NetpbmFormat? = nil, pieceBytes: Int = 1 << 20,
        to sink: (UnsafeRawBufferPointer) -> Bool
    ) throws(NetpbmError) -> Bool {
        guard !images.isEmpty else { throw .nothingToWrite }
        let headers = try check(images, as: format)
        let pieceBytes = max(pieceBytes, 1)
        return withoutActuallyEscaping(sink) { sink in
            // `output` holds the sink only for the duration of this call.
            var output = OutputBuffer(
                destination: .pieces(pieceBytes, sink), capacity: min(max(pieceBytes, 1 << 12), 1 << 24),
                name: "<memory>")
            writeChecked(images, headers, to: &output)
            return !output.stopped
        }
    }

    /// Encodes `image` and writes it to `url` atomically: the bytes go to a temporary file
    /// in the same directory, which is then renamed over `url`, so readers never see a
    /// partial file and a failed write leaves any existing file untouched. Where `url`
    /// is a symbolic link, the file it names is replaced (or created, where it names
    /// nothing yet) and the link stays a link; a replaced file keeps its permissions.
    /// A destination that exists and is not a regular file or a directory (a device such
    /// as `/dev/stdout`, a pipe) is not a file to replace: it is opened and written in
    /// place, as the command-line tool writes it.
    ///
    /// - Throws: as ``encode(_:as:)`` (before any file is opened), or
    ///   ``NetpbmError/writeFailed(path:reason:)`` naming `url`'s path (a directory, a
    ///   loop of links, a failed create, write, close or rename).
    /// - Complexity: O(samples); the bytes go to the file through one 1 MiB buffer, so
    ///   the memory does not grow with the image.
    public static func write(_ image: NetpbmImage, as format: NetpbmFormat? = nil, to url: URL) throws(NetpbmError) {
        try write([image], as: format, to: url)
    }

    /// Writes several images as one stream to `url`, atomically (see ``write(_:as:to:)``).
    ///
    /// - Throws: ``NetpbmError/nothingToWrite`` for an empty array, otherwise as
    ///   ``write(_:as:to:)``.
    public static func write(_ images: [NetpbmImage], as format: NetpbmFormat? = nil, to url: URL) throws(NetpbmError) {
        guard !images.isEmpty else { throw .nothingToWrite }
        let headers = try check(images, as: format)
        try writeAtomically(to: url) { (descriptor) throws(NetpbmError) in
            var output = OutputBuffer(
                destination: .descriptor(descriptor), capacity: NetpbmStreamWriter.bufferBytes, name: url.path)
            try write(images, headers, to: &output)
        }
    }

    // MARK: - Encoding

    /// Checks that every image is consistent and can be stored in its output format, and
    /// returns the headers to write.
    static func check(_ images: [NetpbmImage], as format: NetpbmFormat?) throws(NetpbmError) -> [NetpbmHeader] {
        var headers: [NetpbmHeader] = []
        headers.reserveCapacity(images.count)
        for image in images {
            try image.validate()
            headers.append(try NetpbmHeader(image, as: format))
        }
        return headers
    }

    /// Encodes checked images with the stream writer's encoder, into a buffer whose
    /// destination cannot fail (memory or a piece sink).
    static func writeChecked(_ images: [NetpbmImage], _ headers: [NetpbmHeader], to output: inout OutputBuffer) {
        do throws(NetpbmError) {
            try write(images, headers, to: &output)
        } catch {
            // Only a file descriptor destination throws, and none is used here.
            assertionFailure("in-memory Netpbm output failed: \(error)")
        }
    }

    /// Encodes checked images with the stream writer's encoder into `output`, and
    /// empties it at the end.
    ///
    /// - Throws: what the destination throws (a file descriptor's write errors).
    static func write(_ images: [NetpbmImage], _ headers: [NetpbmHeader], to output: inout OutputBuffer) throws(NetpbmError) {
        for (image, header) in zip(images, headers) where !output.stopped {
            try RasterEncoder.headerBytes(header).withUnsafeBufferPointer { (bytes) throws(NetpbmError) in
                try output.append(bytes)
            }
            var encoder = RasterEncoder(header: header)
            try image.samples.withUnsafeBufferPointer { (samples) throws(NetpbmError) in
                if let base = samples.baseAddress {
                    try encoder.encode(base, count: samples.count, to: &output)
                }
            }
        }
        try output.flush()
    }

    // MARK: - Files

    /// Writes a file through `body`, which gets a descriptor open for writing on a new
    /// temporary file next to the file `url` names (past symbolic links, dangling ones
    /// too); then renames it over that file, with an existing file's permissions. On
    /// any failure the temporary file is removed and `url` is left as it was. An
    /// existing destination that is not a regular file is written in place (a device, a
    /// pipe) or refused (a directory): renaming over it would replace it.
    ///
    /// The path can change between these steps (another process replacing a link): the
    /// rename replaces whatever the target names by then, as any such writer does.
    static func writeAtomically(to url: URL, _ body: (Int32) throws(NetpbmError) -> Void) throws(NetpbmError) {
        let path = url.path
        func failure(_ code: Int32) -> NetpbmError { .writeFailed(path: path, reason: String(cString: strerror(code))) }
        // What the kernel finds at the path, following every link.
        var status = stat()
        let existing = stat(path, &status) == 0
        if existing && status.st_mode & S_IFMT == S_IFDIR { throw .writeFailed(path: path, reason: "is a directory") }
        if existing && status.st_mode & S_IFMT != S_IFREG {
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure(errno) }
            defer { close(descriptor) }
            return try body(descriptor)
        }
        // The same file by name, so that the rename replaces it and not a link to it; a
        // name the kernel resolves otherwise (`/proc/self/fd/…`) is refused.
        let target = try destination(of: path)
        if existing {
            var named = stat()
            guard stat(target, &named) == 0, named.st_dev == status.st_dev, named.st_ino == status.st_ino else {
                throw .writeFailed(path: path, reason: "its symbolic links do not lead to the file by name")
            }
        }
        let directory = URL(fileURLWithPath: target).deletingLastPathComponent()
        let name = URL(fileURLWithPath: target).lastPathComponent
        let temporary = directory.appendingPathComponent(".\(name).\(UUID().uuidString).tmp").path
        // A new file (never an existing one, nor through a link): readable by others only
        // once it has the mode it replaces, or, for a new file, the usual mode less the
        // umask, as `Data.write` would make it.
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, existing ? 0o600 : 0o666)
        guard descriptor >= 0 else { throw failure(errno) }
        do throws(NetpbmError) {
            try body(descriptor)
            // A file system that keeps no modes (some network and FUSE mounts) refuses;
            // the file then stays the owner's alone, the safe side.
            if existing && fchmod(descriptor, status.st_mode & 0o7777) != 0
                && errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP { throw failure(errno) }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        // close(2) may report a write the file system had deferred (NFS, quotas); an
        // interrupted close counts as a failure too, which is the safe side.
        if close(descriptor) != 0 {
            let code = errno
            unlink(temporary)
            throw failure(code)
        }
        // rename(2) replaces the destination atomically on the same file system.
        if rename(temporary, target) != 0 {
            let code = errno
            unlink(temporary)
            throw failure(code)
        }
    }

    /// The path a write to `path` replaces: `path`, or where its symbolic links lead
    /// (a dangling link's target, created by the write), so the link stays a link;
    /// relative links against their own directory. The links are read by name, so the
    /// kernel's protection of links in sticky directories (`fs.protected_symlinks`) does
    /// not apply to them. (The command-line tool's `OutputFile.destination` follows them
    /// the same way; the two modules share no code.)
    ///
    /// - Throws: ``NetpbmError/writeFailed(path:reason:)`` for more than 40 links (a loop).
    static func destination(of path: String) throws(NetpbmError) -> String {
        var current = path
        for _ in 0...40 {
            guard let next = try? FileManager.default.destinationOfSymbolicLink(atPath: current) else { return current }
            let directory = (current as NSString).deletingLastPathComponent
            current = next.hasPrefix("/") || directory.isEmpty ? next : directory + "/" + next
        }
        throw .writeFailed(path: path, reason: String(cString: strerror(ELOOP)))
    }
}
