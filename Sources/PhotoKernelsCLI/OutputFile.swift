import Foundation

/// Writing results without ever destroying data: the same-file check, the atomic
/// temporary-file-and-rename write, and standard output for `-`.
///
/// A half-written file is worse than none, and an output that is also the input would
/// be truncated before it is read; both are ruled out here, in one place, for the
/// image and the `--save-recipe` file alike.
enum OutputFile {
    /// Whether `path` means standard input or output.
    static func isStandardStream(_ path: String) -> Bool { path == "-" }

    /// Whether two paths name the same existing file: after resolving symbolic links,
    /// the same path, or the same device and inode (hard links, `./a` vs `a`).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        guard !isStandardStream(a), !isStandardStream(b) else { return false }
        let ra = URL(fileURLWithPath: a).standardizedFileURL.resolvingSymlinksInPath()
        let rb = URL(fileURLWithPath: b).standardizedFileURL.resolvingSymlinksInPath()
        if ra.path == rb.path { return true }
        guard let ia = identity(ra.path), let ib = identity(rb.path) else { return false }
        return ia == ib
    }

    /// The device and inode of an existing file, or `nil`.
    private static func identity(_ path: String) -> [UInt64]? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let device = (attributes[.systemNumber] as? NSNumber)?.uint64Value,
              let inode = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value
        else { return nil }
        return [device, inode]
    }

    /// Refuses (exit 73) to write `output` when it is the file `input`, unless `force`.
    static func checkNotOverwriting(input: String, output: String, what: String, force: Bool) throws(CLIError) {
        guard !force, sameFile(input, output) else { return }
        throw .cantCreate("\(what) '\(output)' is the input file '\(input)'; refusing to overwrite it "
                          + "(choose another name, or pass --force to replace the input)")
    }

    /// Checks early, before any work, that `path` can be created: its directory exists
    /// and it is not itself a directory. (Permissions are only known by trying.)
    ///
    /// - Throws: exit 73.
    static func checkDestination(_ path: String) throws(CLIError) {
        guard !isStandardStream(path) else { return }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .cantCreate("cannot create '\(path)': directory '\(directory.path)' does not exist")
        }
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .cantCreate("cannot create '\(path)': it is a directory")
        }
    }

    /// Produces a file's bytes in pieces: it calls `piece` for each one, in order, and
    /// stops as soon as `piece` returns `false` (writing failed; the caller reports why).
    /// A piece is only read during the call.
    typealias Producer = (_ piece: (UnsafeRawBufferPointer) -> Bool) throws(CLIError) -> Void

    /// Writes `data` to `path` (`-` for standard output); see ``write(to:_:)``.
    static func write(_ data: Data, to path: String) throws(CLIError) {
        try write(to: path) { piece in data.withUnsafeBytes { _ = piece($0) } }
    }

    /// Writes `bytes` to `path` (`-` for standard output); see ``write(to:_:)``.
    static func write(_ bytes: [UInt8], to path: String) throws(CLIError) {
        try write(to: path) { piece in bytes.withUnsafeBytes { _ = piece($0) } }
    }

    /// Writes the bytes `produce` hands over to `path` (`-` for standard output), piece
    /// by piece, so a big image never has to exist as one encoded buffer.
    ///
    /// A regular file (or a new one) is written to a temporary file in the same
    /// directory, then renamed over it with rename(2), which is atomic on one file
    /// system: readers see the old file or the new one, never a partial one, and a
    /// failure leaves no trace. A symbolic link is followed, so the file it points to
    /// is replaced and the link stays a link; the replaced file's permissions are kept.
    /// Anything else that already exists — a FIFO, a terminal, `/dev/stdout` — is not
    /// a file to replace, so it is opened and written in place.
    ///
    /// - Throws: exit 73 when the directory is missing, the path is a directory, or
    ///   writing or renaming fails; whatever `produce` throws, unchanged (a temporary
    ///   file is removed first).
    static func write(to path: String, _ produce: Producer) throws(CLIError) {
        if isStandardStream(path) {
            try feed(produce, to: FileHandle.standardOutput) { "cannot write to standard output: \($0)" }
            return
        }
        var status = stat()
        let exists = stat(path, &status) == 0  // follows symbolic links
        if exists, status.st_mode & S_IFMT != S_IFREG, status.st_mode & S_IFMT != S_IFDIR {
            try writeInPlace(produce, to: path)
            return
        }
        // The file a symbolic link names, so the rename replaces it and not the link.
        let target = exists ? (realpath(path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? path) : path
        try checkDestination(target)
        let url = URL(fileURLWithPath: target)
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        let handle: FileHandle
        do {
            // Created by Foundation exactly as a whole-`Data` write creates it (exclusive,
            // mode 0666 less the umask), then filled through a handle.
            try Data().write(to: temporary, options: .withoutOverwriting)
            handle = try FileHandle(forWritingTo: temporary)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw .cantCreate("cannot create '\(path)': \(reason(error))")
        }
        do {
            defer { try? handle.close() }
            try feed(produce, to: handle) { "cannot create '\(path)': \($0)" }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        if exists {
            chmod(temporary.path, status.st_mode & 0o7777)
        }
        if rename(temporary.path, target) != 0 {
            let message = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw .cantCreate("cannot write '\(path)': \(message)")
        }
    }

    /// Writes what `produce` hands over into an existing non-regular file (a FIFO or a device).
    private static func writeInPlace(_ produce: Producer, to path: String) throws(CLIError) {
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw .cantCreate("cannot open '\(path)' for writing: \(String(cString: strerror(errno)))")
        }
        defer { try? handle.close() }
        try feed(produce, to: handle) { "cannot write '\(path)': \($0)" }
    }

    /// Writes each piece `produce` hands over to `handle`; the first failure stops it
    /// and is thrown as exit 73 with `message(reason)`.
    private static func feed(_ produce: Producer, to handle: FileHandle,
                             message: (String) -> String) throws(CLIError) {
        var failure: (any Error)?
        try produce { piece in
            do {
                // As a `Data` (borrowing the piece, not copying it): FileHandle reports
                // errors for `Data` as the tool always has.
                guard let base = piece.baseAddress else { return true }
                try handle.write(contentsOf: Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base),
                                                  count: piece.count, deallocator: .none))
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw .cantCreate(message(reason(failure))) }
    }

    /// A short human reason for a Foundation error.
    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? any Error,
           (underlying as NSError).domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32((underlying as NSError).code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        return nsError.localizedDescription
    }
}

/// Where the tool's text goes: standard output for what the user asked to see
/// (help, lists, the strip's grid order, images written to `-`), standard error for
/// status lines, notes and errors, so a pipeline's data stays clean.
enum Console {
    /// Writes `text` to standard output; a closed pipe is ignored (nothing to report to).
    static func out(_ text: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
    }

    /// Writes `text` to standard error.
    static func err(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }
}
