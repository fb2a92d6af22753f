import Glibc
import Testing
@testable import WebImage

/// The one wrapper for system calls: EINTR is retried, any other failure becomes a typed error
/// naming the call.
@Suite struct SystemCallTests {
    @Test func anInterruptedCallIsRetried() throws {
        var attempts = 0
        let result = try systemCall("read") { () -> Int in
            attempts += 1
            if attempts < 3 {
                errno = EINTR
                return -1
            }
            return 42
        }
        #expect(result == 42 && attempts == 3)
    }

    @Test func aFailureNamesTheCallAndItsErrno() {
        #expect(throws: SystemCallError(call: "close", code: EBADF)) { try systemCall("close") { close(-1) } }
        #expect(SystemCallError(call: "close", code: EBADF).description == "close: Bad file descriptor")
    }
}
