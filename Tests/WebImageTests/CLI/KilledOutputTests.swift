import Foundation
import Testing
@testable import WebImage

/// `webimage convert` killed with SIGKILL at random moments: its output is the old file or the
/// whole new one, and nothing else is left in the folder.
@Suite struct KilledOutputTests {
    @Test func killedConvertLeavesTheOldOutputOrTheNewOneAndNoTemporaryFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let input = directory.url.appendingPathComponent("in.png")
        try Image(bitmap: Fixtures.gradient(width: 1600, height: 1200)).encoded(as: .png).write(to: input)
        let output = directory.url.appendingPathComponent("out.webp")
        // The whole new output, from a run that is not interrupted. Its time sets the window the
        // kills are drawn from (half as long again), so that some come after it ended and some
        // before, however slow the build (under ThreadSanitizer a run took longer than 400 ms).
        let start = ContinuousClock.now
        let complete = try CLIRunner.run(["convert", input.path, output.path])
        let elapsed = ContinuousClock.now - start
        try #require(complete.status == 0, "\(complete.stderr)")
        let window = max(400, Int(elapsed / .milliseconds(1) * 1.5))
        let new = try Data(contentsOf: output)
        let old = try Image(bitmap: Fixtures.gradient(width: 8, height: 8)).encoded(as: .webp)

        var generator = SeededGenerator(seed: 13)
        var (killed, gotOld, gotNew) = (0, 0, 0)
        for trial in 0..<20 {
            try old.write(to: output)
            let running = try CLIRunner.start(["convert", input.path, output.path])
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...window, using: &generator)))
            running.signal(SIGKILL)
            let result = running.wait()
            if result.status != 0 { killed += 1 }
            let now = try Data(contentsOf: output)
            #expect(now == old || now == new, "trial \(trial): \(now.count) bytes")
            if now == old { gotOld += 1 } else if now == new { gotNew += 1 }
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
            #expect(names == ["in.png", "out.webp"], "trial \(trial)")
        }
        // Kills that came early and late: both outcomes were seen.
        #expect(killed > 0 && gotOld > 0 && gotNew > 0, "killed \(killed), old \(gotOld), new \(gotNew), window \(window) ms")
    }
}
