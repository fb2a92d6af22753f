import Foundation
import Synchronization
import WebImage

/// Progress bars, one per transfer: bytes, rate and time left. On a terminal the bars are
/// redrawn in place at most ten times a second; otherwise each transfer prints a line when it
/// starts and when it ends, and previews print one line each.
final class ProgressDisplay: Sendable {
    private struct Bar {
        var label: String
        var received: Int64 = 0
        var expected: Int64?
        var started = ContinuousClock.now
        var note = ""
        var done: String?
    }

    private struct State {
        var bars: [Bar] = []
        var drawnLines = 0
        var lastDraw = ContinuousClock.now - .seconds(1)
    }

    private let state = Mutex(State())
    private let interactive: Bool
    private let width = 24

    /// A display that draws live bars when `interactive`.
    init(interactive: Bool = Terminal.isInteractive) { self.interactive = interactive }

    /// Adds a bar; returns its index.
    func add(_ label: String) -> Int {
        let index = state.withLock { state in
            state.bars.append(Bar(label: label))
            return state.bars.count - 1
        }
        if interactive { redraw(force: true) } else { emit("start  \(label)") }
        return index
    }

    /// Updates a bar's byte counts.
    func update(_ index: Int, _ progress: ImageProgress) {
        state.withLock { state in
            state.bars[index].received = progress.receivedBytes
            state.bars[index].expected = progress.expectedBytes ?? state.bars[index].expected
        }
        if interactive { redraw(force: false) }
    }

    /// Shows a note on a bar (a preview, say); printed as its own line when not interactive.
    func note(_ index: Int, _ text: String) {
        let label = state.withLock { state in
            state.bars[index].note = text
            return state.bars[index].label
        }
        if interactive { redraw(force: false) } else { emit("       \(label): \(text)") }
    }

    /// Ends a bar with a final text.
    func finish(_ index: Int, _ text: String) {
        let label = state.withLock { state in
            state.bars[index].done = text
            return state.bars[index].label
        }
        if interactive { redraw(force: true) } else { emit("done   \(label): \(text)") }
    }

    private func emit(_ line: String) {
        Terminal.write(line + "\n")
    }

    private func redraw(force: Bool) {
        let text: String? = state.withLock { state in
            let now = ContinuousClock.now
            guard force || now - state.lastDraw >= .milliseconds(100) else { return nil }
            state.lastDraw = now
            var out = state.drawnLines > 0 ? "\u{1B}[\(state.drawnLines)A" : ""
            for bar in state.bars { out += "\u{1B}[2K" + render(bar, now: now) + "\n" }
            state.drawnLines = state.bars.count
            return out
        }
        if let text { Terminal.write(text) }
    }

    private func render(_ bar: Bar, now: ContinuousClock.Instant) -> String {
        let label = bar.label.count > 28 ? "…" + bar.label.suffix(27) : bar.label.padding(toLength: 28, withPad: " ", startingAt: 0)
        if let done = bar.done { return "\(label) [\(String(repeating: "#", count: width))] \(done)" }
        let fraction = bar.expected.map { $0 > 0 ? min(1, Double(bar.received) / Double($0)) : 0 } ?? 0
        let filled = Int(fraction * Double(width))
        let elapsed = now - bar.started
        let seconds = max(0.001, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        let rate = Double(bar.received) / seconds
        var eta = ""
        if let expected = bar.expected, rate > 0, bar.received < expected {
            eta = String(format: " ETA %.1fs", Double(expected - bar.received) / rate)
        }
        let total = bar.expected.map { "/" + Terminal.bytes($0) } ?? ""
        let bars = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let note = bar.note.isEmpty ? "" : "  " + bar.note
        return "\(label) [\(bars)] \(Terminal.bytes(bar.received))\(total) \(Terminal.bytes(Int64(rate)))/s\(eta)\(note)"
    }
}
