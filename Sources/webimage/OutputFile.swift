import Foundation
import WebImage

/// Writing an output the way curl and ImageMagick users expect: `-` is standard output, a
/// device or pipe (`/dev/null`) is written in place, and a regular file is written atomically
/// (an unnamed file in its folder, named and renamed into place once whole; a hidden temporary
/// file where the file system has no unnamed files), so that an interrupted, killed or failed
/// write leaves either the old file or none, never half of one.
enum OutputFile {
    /// Writes `data` to `path`.
    /// - Throws: `CLIError` "cannot write PATH: REASON", with the system's reason.
    static func write(_ data: Data, to path: String) throws {
        if path == "-" {
            FileHandle.standardOutput.write(data)
            return
        }
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
            if (info.st_mode & S_IFMT) == S_IFDIR { throw CLIError("cannot write \(path): it is a folder") }
            try writeInPlace(data, to: path)
            return
        }
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).webimage-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp").path
        // An unnamed file (O_TMPFILE) where the file system has them: a process killed while
        // writing leaves nothing behind; the file gets a name only once it is whole.
        if try writeUnnamed(data, in: folder, linkingAs: temporary, for: path) == false {
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw failure(path, errno) }
            let code = writeAll(data, to: fd)
            let closed = close(fd) == 0 ? 0 : errno
            if code != 0 || closed != 0 {
                unlink(temporary)
                throw failure(path, code != 0 ? code : closed)
            }
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw failure(path, code)
        }
    }

    /// Writes `data` into an unnamed file in `folder` and links it as `name`: true when done,
    /// false when the file system (or a missing /proc) does not allow it.
    /// - Throws: the write's failure (a full disk), as `CLIError`.
    private static func writeUnnamed(_ data: Data, in folder: String, linkingAs name: String, for path: String) throws -> Bool {
        let fd = open(folder, O_WRONLY | O_CLOEXEC | unnamedFile, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let code = writeAll(data, to: fd)
        if code != 0 { throw failure(path, code) }
        return linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0
    }

    /// Linux's O_TMPFILE (`__O_TMPFILE | O_DIRECTORY`; the C macro does not reach Swift).
    private static let unnamedFile: Int32 = 0o20000000 | O_DIRECTORY

    private static func writeInPlace(_ data: Data, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(path, errno) }
        defer { close(fd) }
        let code = writeAll(data, to: fd)
        if code != 0 { throw failure(path, code) }
    }

    /// Writes every byte; 0, or the errno of the failed write.
    private static func writeAll(_ data: Data, to fd: Int32) -> Int32 {
        data.withUnsafeBytes { raw -> Int32 in
            var offset = 0
            while offset < raw.count {
                do throws(SystemCallError) {
                    offset += try systemCall("write") { Foundation.write(fd, raw.baseAddress! + offset, raw.count - offset) }
                } catch {
                    return error.code
                }
            }
            return 0
        }
    }

    private static func failure(_ path: String, _ code: Int32) -> CLIError {
        CLIError("cannot write \(path): \(String(cString: strerror(code)))")
    }

    /// Makes `path` a folder (with its parents) unless it is one.
    /// - Throws: `CLIError` "cannot create folder PATH: REASON".
    static func makeFolder(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { return }
            throw CLIError("cannot create folder \(path): a file stands there")
        }
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
            throw CLIError("cannot create folder \(path): \(Terminal.reason(error))")
        }
    }
}
