import CommandLineKit
import Foundation
import Testing

/// Output paths through symbolic links: which file a write creates or replaces, and
/// that the checks mean the same file.
@Suite("Output files and symbolic links")
struct OutputFileTests {
    /// A fresh directory, removed by the caller.
    private func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("outputfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private func link(_ at: URL, to destination: String) throws {
        try FileManager.default.createSymbolicLink(atPath: at.path, withDestinationPath: destination)
    }

    /// `text` written to `path` through `OutputFile.withDestination`.
    private func write(_ text: String, to path: String) throws(CommandLineError) {
        let bytes: [UInt8] = Array(text.utf8)
        try OutputFile.withDestination(path) { descriptor, name throws(CommandLineError) in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
            defer { buffer.deallocate() }
            buffer.copyBytes(from: bytes)
            try OutputFile.writeAll(UnsafeRawBufferPointer(buffer), to: descriptor, name: name)
        }
    }

    @Test("destination: a plain path is itself; links are followed to their end, a link to nothing included, relative ones against their own directory; a loop is nil")
    func destination() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: true)
        #expect(OutputFile.destination(dir.appendingPathComponent("new.ppm").path) == dir.appendingPathComponent("new.ppm").path)
        #expect(OutputFile.destination("relative.ppm") == "relative.ppm")
        // sub/a → b (in sub) → ../c (nothing there yet)
        try link(dir.appendingPathComponent("sub/a"), to: "b")
        try link(dir.appendingPathComponent("sub/b"), to: "../c")
        #expect(OutputFile.destination(dir.appendingPathComponent("sub/a").path) == dir.path + "/sub/../c")
        // An absolute link.
        try link(dir.appendingPathComponent("abs"), to: dir.appendingPathComponent("sub/target").path)
        #expect(OutputFile.destination(dir.appendingPathComponent("abs").path) == dir.appendingPathComponent("sub/target").path)
        // x → y → x
        try link(dir.appendingPathComponent("x"), to: "y")
        try link(dir.appendingPathComponent("y"), to: "x")
        #expect(OutputFile.destination(dir.appendingPathComponent("x").path) == nil)
    }

    @Test("key and sameFile resolve `..` after a link to a directory as the kernel does, not by text")
    func linkedDirectories() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        try fm.createDirectory(at: dir.appendingPathComponent("real/sub"), withIntermediateDirectories: true)
        try fm.createDirectory(at: dir.appendingPathComponent("w"), withIntermediateDirectories: true)
        try Data("input".utf8).write(to: dir.appendingPathComponent("real/in.ppm"))
        try Data("other".utf8).write(to: dir.appendingPathComponent("w/in.ppm"))
        // w/d → real/sub, and real/sub/out.ppm → ../in.ppm: w/d/out.ppm is real/in.ppm.
        try link(dir.appendingPathComponent("w/d"), to: dir.appendingPathComponent("real/sub").path)
        try link(dir.appendingPathComponent("real/sub/out.ppm"), to: "../in.ppm")
        let out = dir.appendingPathComponent("w/d/out.ppm").path
        #expect(OutputFile.sameFile(out, dir.appendingPathComponent("real/in.ppm").path))
        #expect(!OutputFile.sameFile(out, dir.appendingPathComponent("w/in.ppm").path))
        // A name not yet created, reached through the linked directory and by its real path.
        #expect(OutputFile.key(dir.appendingPathComponent("w/d/new.ppm").path)
                == OutputFile.key(dir.appendingPathComponent("real/sub/new.ppm").path))
        #expect(OutputFile.sameFile(dir.appendingPathComponent("w/d/new.ppm").path,
                                    dir.appendingPathComponent("real/sub/../sub/new.ppm").path))
    }

    @Test("/dev/fd/N and the like are written through the open descriptor, in place: a file opened for appending keeps its inode and its earlier bytes")
    func descriptorNames() throws {
        #expect(OutputFile.descriptor(named: "/dev/stdout") == 1 && OutputFile.descriptor(named: "/dev/stderr") == 2)
        #expect(OutputFile.descriptor(named: "/proc/self/fd/7") == 7 && OutputFile.descriptor(named: "/dev/fd/x") == nil)
        #expect(OutputFile.descriptor(named: "/dev/null") == nil && OutputFile.descriptor(named: "out.ppm") == nil)
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("log.txt")
        try Data("earlier\n".utf8).write(to: log)
        var before = stat()
        #expect(stat(log.path, &before) == 0)
        let descriptor = open(log.path, O_WRONLY | O_APPEND | O_CLOEXEC)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        try write("later\n", to: "/dev/fd/\(descriptor)")
        var after = stat()
        #expect(stat(log.path, &after) == 0 && after.st_ino == before.st_ino, "the file must not be replaced")
        #expect(try String(contentsOf: log, encoding: .utf8) == "earlier\nlater\n")
        try OutputFile.checkDestination("/dev/fd/\(descriptor)")
    }

    @Test("a descriptor open for reading only is refused before any work (73), by each of its names")
    func readOnlyDescriptor() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("in.txt")
        try Data("kept\n".utf8).write(to: file)
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        for name in ["/dev/fd/\(descriptor)", "/proc/self/fd/\(descriptor)"] {
            #expect(throws: CommandLineError("cannot write '\(name)': descriptor \(descriptor) is open for reading only",
                                             status: .cantCreate)) {
                try OutputFile.checkDestination(name)
            }
            #expect(throws: CommandLineError.self) { try write("lost", to: name) }
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "kept\n")
    }

    @Test("a directory this process may not write to is refused before any work (73), naming it and why; a FIFO or device in it is not",
          .enabled(if: geteuid() != 0, "root may write to any directory of a writable file system"))
    func unwritableDirectory() throws {
        let dir = try directory()
        defer {
            chmod(dir.path, 0o755)
            try? FileManager.default.removeItem(at: dir)
        }
        let fifo = dir.appendingPathComponent("fifo")
        #expect(mkfifo(fifo.path, 0o666) == 0)
        #expect(chmod(dir.path, 0o555) == 0)
        let out = dir.appendingPathComponent("out.txt")
        let why = "'\(dir.path)' is not writable: permission denied (creating a file needs write and search permission)"
        #expect(throws: CommandLineError("cannot create '\(out.path)': \(why)", status: .cantCreate)) {
            try OutputFile.checkDestination(out.path)
        }
        #expect(OutputFile.directoryProblem(dir.path) == why)
        #expect(OutputFile.directoryProblem(FileManager.default.temporaryDirectory.path) == nil)
        // A FIFO or a device is written in place: nothing is created beside it.
        try OutputFile.checkDestination(fifo.path)
        try OutputFile.checkDestination("/dev/null")
    }

    @Test("a link to a name ending in '/' is refused before any work (73)")
    func linkToDirectoryName() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out.ppm")
        try link(out, to: "nd/")
        #expect(throws: CommandLineError("cannot create '\(out.path)': '\(dir.path)/nd/' ends in '/', the name of a directory, not of a file",
                                         status: .cantCreate)) {
            try OutputFile.checkDestination(out.path)
        }
    }

    @Test("replacing a file, the temporary file is the owner's alone while it is written, then takes the replaced file's mode")
    func temporaryMode() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let target = dir.appendingPathComponent("out.ppm")
        try write("old", to: target.path)
        #expect(chmod(target.path, 0o644) == 0)
        try OutputFile.withDestination(target.path) { descriptor, _ throws(CommandLineError) in
            var status = stat()
            #expect(fstat(descriptor, &status) == 0 && status.st_mode & 0o777 == 0o600)
        }
        let mode = try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o644)
    }

    @Test("a link to nothing: the write creates the file it names and the link stays a link")
    func writeThroughDanglingLink() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out.txt"), target = dir.appendingPathComponent("target.txt")
        try link(out, to: "target.txt")
        try write("new", to: out.path)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: out.path) == "target.txt")
        #expect(try String(contentsOf: target, encoding: .utf8) == "new")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(left == ["out.txt", "target.txt"], "no temporary file left: \(left)")
    }

    @Test("sameFile and checkDestination follow a link to nothing: it is the file it names, and its directory is that file's")
    func checksFollowDanglingLinks() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out.txt")
        try link(out, to: "target.txt")
        #expect(OutputFile.sameFile(out.path, dir.appendingPathComponent("target.txt").path))
        #expect(!OutputFile.sameFile(out.path, dir.appendingPathComponent("other.txt").path))
        try OutputFile.checkDestination(out.path)

        let lost = dir.appendingPathComponent("lost.txt")
        try link(lost, to: "missing/target.txt")
        #expect(throws: CommandLineError("cannot create '\(lost.path)': '\(dir.path)/missing' does not exist", status: .cantCreate)) {
            try OutputFile.checkDestination(lost.path)
        }
        let loop = dir.appendingPathComponent("loop.txt")
        try link(loop, to: "loop.txt")
        #expect(throws: CommandLineError("cannot create '\(loop.path)': too many levels of symbolic links", status: .cantCreate)) {
            try OutputFile.checkDestination(loop.path)
        }
        #expect(throws: CommandLineError("cannot create '\(loop.path)': too many levels of symbolic links", status: .cantCreate)) {
            try OutputFile.withDestination(loop.path) { _, _ throws(CommandLineError) in }
        }
    }
}
