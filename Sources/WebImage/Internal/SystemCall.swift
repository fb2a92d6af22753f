import Glibc

/// A system call that failed: which call, and its `errno`.
package struct SystemCallError: Error, Equatable, CustomStringConvertible {
    /// The call's name (`read`, `write`, ...).
    package let call: String
    /// The `errno` it failed with.
    package let code: Int32

    package var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// The one wrapper for system calls (swift-nio's `syscall(blocking:where:_:)` in spirit): runs
/// `body` again while it fails with `EINTR`, and turns any other failure (a negative result)
/// into a `SystemCallError` naming the call.
@inline(__always)
package func systemCall<Result: BinaryInteger>(_ name: @autoclosure () -> String, _ body: () -> Result) throws(SystemCallError) -> Result {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemCallError(call: name(), code: code)
    }
}
