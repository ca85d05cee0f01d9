import Foundation

/// Writing results without ever destroying data: the same-file check, the atomic
/// temporary-file-and-rename write (for a whole buffer, pieces, or a descriptor that a
/// stream writer fills), and standard output for `-`.
///
/// A half-written file is worse than none, and an output that is also the input would
/// be truncated before it is read; the tools rule both out through these functions
/// for every file they write. A device, FIFO or terminal given as the output is
/// written in place, never replaced.
public enum OutputFile {
    /// Whether `path` means standard input or output.
    public static func isStandardStream(_ path: String) -> Bool { path == "-" }

    /// The path a standard stream means: `-` as an input is `/dev/stdin`, as an output
    /// `/dev/stdout`; any other path is itself. For comparing files (`sameFile`).
    public static func path(of stream: String, output: Bool) -> String {
        isStandardStream(stream) ? (output ? "/dev/stdout" : "/dev/stdin") : stream
    }

    /// The process's own open descriptor that writing `path` goes through, in place:
    /// the one it names (`descriptor(named:)`), or standard output or standard error
    /// where `path` leads to the very regular file that stream is open on (`//dev/stdout`,
    /// a link to `/dev/stdout`, `/proc/thread-self/fd/1`, or the file a shell's `>> log`
    /// opened). Opening such a file anew would start it from its beginning, and
    /// replacing it would cut it off from the shell that holds it open (`>> log` losing
    /// its earlier lines). `nil` for any other path.
    public static func inPlaceDescriptor(for path: String) -> Int32? {
        if let named = descriptor(named: path) { return named }
        guard let file = identity(path) else { return nil }
        for stream in [STDOUT_FILENO, STDERR_FILENO] {
            var status = stat()
            if fstat(stream, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
               [UInt64(status.st_dev), UInt64(status.st_ino)] == file {
                return stream
            }
        }
        return nil
    }

    /// The process's own open descriptor that `path` names, for `/dev/stdout`,
    /// `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N`; else `nil`. Such a path is
    /// written through that descriptor, in place (see `inPlaceDescriptor(for:)`).
    public static func descriptor(named path: String) -> Int32? {
        switch path {
        case "/dev/stdout": return STDOUT_FILENO
        case "/dev/stderr": return STDERR_FILENO
        default:
            for prefix in ["/dev/fd/", "/proc/self/fd/"] where path.hasPrefix(prefix) {
                return Int32(path.dropFirst(prefix.count)).flatMap { $0 >= 0 ? $0 : nil }
            }
            return nil
        }
    }

    /// The path of the file that writing `path` creates or replaces: `path` itself, or,
    /// where it is a symbolic link, where its chain of links leads, followed to the end
    /// even when the last link names nothing yet (then that name is created, as a
    /// shell's `>` would create it), each relative link read against its own directory.
    /// `nil` for a chain of more than 40 links (a loop, say). The links are read by
    /// name, so the kernel's protection of links in sticky directories
    /// (`fs.protected_symlinks`) does not apply to them.
    ///
    /// Every check of an output path (`sameFile`, `checkDestination`) and the write
    /// itself (`withDestination`) go through it, so that they all mean the same file.
    public static func destination(_ path: String) -> String? {
        var current = path
        for _ in 0...40 {
            guard let next = try? FileManager.default.destinationOfSymbolicLink(atPath: current) else { return current }
            let directory = (current as NSString).deletingLastPathComponent
            current = next.hasPrefix("/") || directory.isEmpty ? next : directory + "/" + next
        }
        return nil
    }

    /// The file that writing `path` creates or replaces (`destination`) as one absolute
    /// path free of links, `.` and `..`: its own real path where it exists, else its
    /// directory's real path and its name; the name as given where the directory does
    /// not exist either. Two paths that lead to the same name give the same key, whatever
    /// links to directories lie on the way (`d/../x` is resolved through `d`, as the
    /// kernel resolves it, not by text). `nil` as for `destination`.
    public static func key(_ path: String) -> String? {
        guard let target = destination(path) else { return nil }
        if let full = realPath(target) { return full }
        // A name for a directory, or in a directory that does not exist: no file can be
        // made there (`checkDestination` says why), so the key is the path as given,
        // `..` kept, which matches no existing file.
        let directory = (target as NSString).deletingLastPathComponent, name = (target as NSString).lastPathComponent
        guard !target.hasSuffix("/"), let base = realPath(directory.isEmpty ? "." : directory) else {
            return target.hasPrefix("/") ? target : FileManager.default.currentDirectoryPath + "/" + target
        }
        return base == "/" ? "/" + name : base + "/" + name
    }

    /// `realpath(3)`: the absolute path of an existing file, free of links; else `nil`.
    private static func realPath(_ path: String) -> String? {
        realpath(path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        }
    }

    /// Whether two paths name the same file, existing or to be created: the same `key`
    /// (symbolic links followed, links to nothing included), or the same device and
    /// inode (hard links).
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        guard !isStandardStream(a), !isStandardStream(b), let ka = key(a), let kb = key(b) else { return false }
        if ka == kb { return true }
        guard let ia = identity(ka), let ib = identity(kb) else { return false }
        return ia == ib
    }

    /// The device and inode of an existing file (links followed), or `nil`.
    public static func identity(_ path: String) -> [UInt64]? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return [UInt64(status.st_dev), UInt64(status.st_ino)]
    }

    /// Refuses (exit 73) to write `output` when it is the file `input` (`-` meaning
    /// standard input and output: `apply - -o in.ppm < in.ppm`), unless `force`; the
    /// message ends with `remedy`, what the user can do instead. An output written in
    /// place through an open descriptor (`inPlaceDescriptor(for:)`) is refused even
    /// with `force`: it would overwrite the input while the input is being read.
    public static func checkNotOverwriting(input: String, output: String, what: String, force: Bool,
                                           remedy: String) throws(CommandLineError) {
        let (i, o) = (path(of: input, output: false), path(of: output, output: true))
        guard sameFile(i, o) else { return }
        let source = isStandardStream(input) ? "standard input" : "the input file '\(input)'"
        if inPlaceDescriptor(for: o) != nil {
            throw .cantCreate("\(what) '\(output)' is \(source), written in place while it is read; "
                              + "refusing to write it, even with --force")
        }
        guard !force else { return }
        throw .cantCreate("\(what) '\(output)' is \(source); refusing to overwrite it (\(remedy))")
    }

    /// Checks early, before any work, that `path` can be created: the file it names
    /// (`destination`, past symbolic links) has a directory that exists and that this
    /// process may create files in, unless it is an existing FIFO, terminal or device,
    /// written in place (`directoryProblem`: a read-only file system or a
    /// directory without write permission is refused here, not after the work), and
    /// is not itself a directory. A descriptor named as a path (`/dev/fd/N`,
    /// `/dev/stdout`) must be open, and open for writing. (Other failures, a full
    /// disk or a quota, are only known by trying.)
    ///
    /// - Throws: exit 73.
    public static func checkDestination(_ path: String) throws(CommandLineError) {
        guard !isStandardStream(path) else { return }
        if let descriptor = descriptor(named: path) {
            let flags = fcntl(descriptor, F_GETFL)
            guard flags != -1 else {
                throw .cantCreate("cannot write '\(path)': it names no open descriptor")
            }
            guard flags & O_ACCMODE != O_RDONLY else {
                throw .cantCreate("cannot write '\(path)': descriptor \(descriptor) is open for reading only")
            }
            return
        }
        guard inPlaceDescriptor(for: path) == nil else { return }
        guard let target = destination(path) else {
            throw .cantCreate("cannot create '\(path)': too many levels of symbolic links")
        }
        if target.hasSuffix("/"), !FileManager.default.fileExists(atPath: target) {
            throw .cantCreate("cannot create '\(path)': '\(target)' ends in '/', the name of a directory, not of a file")
        }
        // An existing FIFO, terminal or device is opened and written in place
        // (`withDestination`): nothing is created in its directory (`/dev/null` as any user).
        var status = stat()
        if stat(target, &status) == 0, isWrittenInPlace(status) { return }
        let directory = (target as NSString).deletingLastPathComponent
        if let problem = directoryProblem(directory.isEmpty ? "." : directory) {
            throw .cantCreate("cannot create '\(path)': \(problem)")
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .cantCreate("cannot create '\(path)': it is a directory")
        }
    }

    /// Whether `path` is written as a stream rather than as a file: a descriptor it
    /// names (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`:
    /// `descriptor(named:)`), or an existing FIFO, terminal or device (`/dev/null`),
    /// links followed. A regular file is no stream, even one that standard output or
    /// error is open on. One `stat` at most.
    public static func isStream(_ path: String) -> Bool {
        if descriptor(named: path) != nil { return true }
        var status = stat()
        return stat(path, &status) == 0 && isWrittenInPlace(status)
    }

    /// Whether an existing file of this status is opened and written in place rather
    /// than replaced: anything but a regular file or a directory (a FIFO, a terminal,
    /// a device).
    private static func isWrittenInPlace(_ status: stat) -> Bool {
        status.st_mode & S_IFMT != S_IFREG && status.st_mode & S_IFMT != S_IFDIR
    }

    /// Why the directory `path` cannot hold new files, as a clause that names it ("'x'
    /// does not exist", "'x' is a file, not a directory", "'x' is not writable: …");
    /// `nil` when it can be tried. One `stat`, following symbolic links, and one
    /// `faccessat(2)` for write and search permission with the effective IDs, as
    /// `open(2)` checks them (which also reports a read-only file system); any other
    /// answer of `faccessat` leaves the question to the write itself.
    public static func directoryProblem(_ path: String) -> String? {
        // "file/" asks the system for a directory that is not there; the file is what to name.
        let name = path.lastIndex(where: { $0 != "/" }).map { String(path[...$0]) } ?? (path.isEmpty ? "." : "/")
        var info = stat()
        guard stat(name, &info) == 0 else {
            switch errno {
            case ENOENT: return "'\(name)' does not exist"
            case ENOTDIR: return "'\(name)' cannot be reached: part of it is a file, not a directory"
            case let code: return "'\(name)' cannot be reached: \(String(cString: strerror(code)).lowercased())"
            }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "'\(name)' is a file, not a directory" }
        // A new file, and the temporary file an output is written to first, are made by
        // name in the directory. Only a clear answer refuses: another error (a container
        // whose filter rejects the `faccessat2` call with EPERM, say) leaves it to `open`.
        guard faccessat(AT_FDCWD, name, W_OK | X_OK, AT_EACCESS) == 0 else {
            let code = errno
            guard code == EACCES || code == EROFS else { return nil }
            return code == EROFS ? "'\(name)' lies on a read-only file system"
                : "'\(name)' is not writable: permission denied (creating a file needs write and search permission)"
        }
        return nil
    }

    /// Produces a file's bytes in pieces: it calls `piece` for each one, in order, and
    /// stops as soon as `piece` returns `false` (writing failed; the caller reports why).
    /// A piece is only read during the call.
    public typealias Producer = (_ piece: (UnsafeRawBufferPointer) -> Bool) throws(CommandLineError) -> Void

    /// Writes `data` to `path` (`-` for standard output); see ``write(to:_:)``.
    public static func write(_ data: Data, to path: String) throws(CommandLineError) {
        try write(to: path) { piece in data.withUnsafeBytes { _ = piece($0) } }
    }

    /// Writes `bytes` to `path` (`-` for standard output); see ``write(to:_:)``.
    public static func write(_ bytes: [UInt8], to path: String) throws(CommandLineError) {
        try write(to: path) { piece in bytes.withUnsafeBytes { _ = piece($0) } }
    }

    /// Writes the bytes `produce` hands over to `path` (`-` for standard output), piece
    /// by piece, so a big image never has to exist as one encoded buffer; see
    /// ``withDestination(_:_:)`` for how the file is made.
    ///
    /// - Throws: as ``withDestination(_:_:)``; a write that fails is exit 73, a closed
    ///   pipe ``CommandLineError/brokenPipe``.
    public static func write(to path: String, _ produce: Producer) throws(CommandLineError) {
        try withDestination(path) { descriptor, name throws(CommandLineError) in
            var failure: CommandLineError?
            try produce { piece in
                do throws(CommandLineError) {
                    try writeAll(piece, to: descriptor, name: name)
                    return true
                } catch {
                    failure = error
                    return false
                }
            }
            if let failure { throw failure }
        }
    }

    /// Opens `path` for writing (`-`: standard output), runs `body` with the descriptor
    /// and a name for messages (`'out.ppm'`, `standard output`), and makes the result
    /// appear only when `body` returns.
    ///
    /// A regular file (or a new one) is written to a temporary file in the same
    /// directory, then renamed over it with rename(2), which is atomic on one file
    /// system: readers see the old file or the new one, never a partial one, and a
    /// failure — `body` throwing, a full disk — leaves no trace. The input is never
    /// opened for writing, so an output that is the input (where a tool allows that) replaces it
    /// only once it has been read to the end. A symbolic link is followed (`destination`),
    /// so the file it points to is replaced, or created where it names nothing yet, and
    /// the link stays a link; a replaced file's permissions are kept. `/dev/stdout`, the
    /// other names of an open descriptor, and any path that leads to the regular file
    /// standard output or error is open on (`inPlaceDescriptor(for:)`) are written
    /// through that descriptor. Anything else that already exists and is not a regular
    /// file — a FIFO, a terminal, a device — is not a file to replace, so it is opened
    /// and written in place.
    ///
    /// - Throws: exit 73 when the directory is missing, the path is a directory, or
    ///   creating, closing or renaming fails; whatever `body` throws, unchanged (a
    ///   temporary file is removed first).
    public static func withDestination(_ path: String, _ body: (Int32, String) throws(CommandLineError) -> Void) throws(CommandLineError) {
        if isStandardStream(path) {
            try body(STDOUT_FILENO, "standard output")
            return
        }
        if let descriptor = inPlaceDescriptor(for: path) {
            try checkDestination(path)  // that the descriptor is open
            try body(descriptor, "'\(path)'")
            return
        }
        var status = stat()
        let exists = stat(path, &status) == 0  // follows symbolic links
        if exists, isWrittenInPlace(status) {
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw .cantCreate("cannot open '\(path)' for writing: \(String(cString: strerror(errno)))")
            }
            defer { close(descriptor) }
            try body(descriptor, "'\(path)'")
            return
        }
        // The file a symbolic link names, by its real directory, so the rename replaces or
        // creates it and not the link, and the temporary file lies beside it.
        try checkDestination(path)
        guard let target = key(path) else {
            throw .cantCreate("cannot create '\(path)': too many levels of symbolic links")
        }
        let url = URL(fileURLWithPath: target)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp").path
        // Readable by others only once it has the mode it replaces.
        let (descriptor, error) = TemporaryFiles.create(temporary, mode: exists ? 0o600 : 0o666)
        guard descriptor >= 0 else {
            throw .cantCreate("cannot create '\(path)': \(String(cString: strerror(error)))")
        }
        defer { TemporaryFiles.remove(temporary) }
        do throws(CommandLineError) {
            try body(descriptor, "'\(path)'")
            // A file system that keeps no modes (some network and FUSE mounts) refuses;
            // the file then stays the owner's alone, the safe side.
            if exists && fchmod(descriptor, status.st_mode & 0o7777) != 0
                && errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP {
                throw .cantCreate("cannot write '\(path)': \(String(cString: strerror(errno)))")
            }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        // close(2) reports the last deferred write errors of some file systems.
        if close(descriptor) != 0 {
            let message = String(cString: strerror(errno))
            unlink(temporary)
            throw .cantCreate("cannot write '\(path)': \(message)")
        }
        if rename(temporary, target) != 0 {
            let message = String(cString: strerror(errno))
            unlink(temporary)
            throw .cantCreate("cannot write '\(path)': \(message)")
        }
    }

    /// Writes all of `bytes` to `descriptor`, retrying short writes and `EINTR`.
    ///
    /// - Throws: ``CommandLineError/brokenPipe`` for `EPIPE`; exit 73 for any other failure.
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, name: String) throws(CommandLineError) {
        guard var next = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let written = Foundation.write(descriptor, next, left)
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE { throw .brokenPipe }
                throw .cantCreate("cannot write \(name): \(String(cString: strerror(errno)))")
            }
            next += written
            left -= written
        }
    }

    /// A short reason for a Foundation file error on a file a tool reads: "no such
    /// file", "it is a directory", else the system's message in lower case
    /// ("permission denied"), else the error's description.
    public static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        // Foundation keeps the errno as its underlying error (a `POSIXError` value on
        // Linux, which bridges through `any Error` but not by a cast to `NSError`).
        let posix = nsError.domain == NSPOSIXErrorDomain
            ? nsError : (nsError.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        guard let posix, posix.domain == NSPOSIXErrorDomain else { return nsError.localizedDescription }
        switch Int32(truncatingIfNeeded: posix.code) {
        case ENOENT: return "no such file"
        case EISDIR: return "it is a directory"
        case let code: return String(cString: strerror(code)).lowercased()
        }
    }
}

/// The temporary files being written (`OutputFile.withDestination`), so that an
/// interrupted run removes them (`removeOnInterrupt()`).
public enum TemporaryFiles {
    private static let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private static var paths: Set<String> = []
    // The signal sources, kept alive for the life of the process.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    /// Creates `path` for writing, exclusively, with `mode` less the umask (0666: what a
    /// plain create gives), and records it, both under the lock the signal handler takes: a
    /// signal that arrives meanwhile is handled once the file is recorded, so it cannot
    /// fall between the creation and the record and leave the file behind. Returns the
    /// descriptor (−1 on failure) and `errno` as open(2) left it.
    static func create(_ path: String, mode: mode_t = 0o666) -> (descriptor: Int32, error: Int32) {
        lock.withLock {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            let error = errno
            if descriptor >= 0 { paths.insert(path) }
            return (descriptor, error)
        }
    }

    static func remove(_ path: String) { lock.withLock { _ = paths.remove(path) } }

    /// From now on, `SIGINT`, `SIGTERM` and `SIGHUP` (Ctrl-C, `timeout`, `kill`, a closed
    /// terminal) first remove the temporary files being written, then end the process
    /// as the signal's default action does (the shell sees 130, 143 or 129), so an
    /// interrupted run leaves neither a partial output nor a hidden `.NAME.UUID.tmp`.
    /// A signal the process was started ignoring (`nohup`, a background job) stays
    /// ignored. Call once, at the start of `main`. (`SIGKILL` cannot be caught: its
    /// temporary files stay.)
    public static func removeOnInterrupt() {
        for number in [SIGINT, SIGTERM, SIGHUP] {
            // Ignored, so the dispatch source alone sees it; kept if it already was.
            let previous = signal(number, SIG_IGN)
            if let previous, unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                continue
            }
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                lock.withLock {
                    for path in paths { unlink(path) }
                    paths.removeAll()
                }
                // Delivered to this thread, unblocked here: dispatch reads the signal
                // through a descriptor while every thread may block it (a mask inherited
                // from the parent blocks it in the main thread too), and a signal sent
                // to the process would come back to this handler.
                signal(number, SIG_DFL)
                var only = sigset_t()
                sigemptyset(&only)
                sigaddset(&only, number)
                pthread_sigmask(SIG_UNBLOCK, &only, nil)
                raise(number)
            }
            source.resume()
            lock.withLock { sources.append(source) }
        }
    }
}
