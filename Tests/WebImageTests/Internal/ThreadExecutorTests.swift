import Foundation
import Testing
@testable import WebImage

/// The executor threads that keep blocking I/O off the cooperative pool.
@Suite struct ThreadExecutorTests {
    @Test func systemNamesFitLinuxsFifteenBytes() {
        #expect(ThreadExecutor.systemName("webimage.disk-cache") == "wi.disk-cache")
        #expect(ThreadExecutor.systemName("webimage.memory-pressure") == "wi.memory-press")
        #expect(ThreadExecutor.systemName("webimage.memcached-12") == "wi.memcached-12")
        #expect(ThreadExecutor.systemName("short") == "short")
        #expect(ThreadExecutor.systemName("an-other-very-long-name") == "an-other-very-l")
        // Seven two-byte characters and one more: the fifteenth byte would split it.
        #expect(ThreadExecutor.systemName("ééééééééé") == "ééééééé")
    }

    @Test func theThreadCarriesItsSystemName() async {
        let executor = ThreadExecutor(name: "webimage.thread-name-probe")
        defer { executor.stop() }
        actor OnExecutor {
            let executor: ThreadExecutor
            init(_ executor: ThreadExecutor) { self.executor = executor }
            nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
            func systemName() -> String { Self.systemNameOfThisThread() }
            static func systemNameOfThisThread() -> String {
                ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
                    .trimmingCharacters(in: .newlines)
            }
        }
        #expect(await OnExecutor(executor).systemName() == "wi.thread-name-")
    }
}
