import Foundation
import Synchronization
import WebImage

/// Progress bars, one per transfer (bytes, rate and time left) or one for a batch (a count of
/// URLs). On a terminal the bars are redrawn in place at most ten times a second; otherwise each
/// bar prints a line when it starts and when it ends, previews print one line each, and a count
/// bar prints a line every 10 % or every five seconds.
final class ProgressDisplay: Sendable {
    /// What a bar counts.
    enum Unit: Sendable {
        /// Bytes of a transfer.
        case bytes
        /// Items of a batch, named in the plural ("URLs").
        case items(String)
    }

    private struct Bar {
        var label: String
        var unit: Unit
        var received: Int64 = 0
        var expected: Int64?
        var started = ContinuousClock.now
        var note = ""
        var done: String?
        var lastLine = ContinuousClock.now
        var lastTenth: Int64 = 0
    }

    private struct State {
        var bars: [Bar] = []
        var drawnLines = 0
        var lastDraw = ContinuousClock.now - .seconds(1)
    }

    private let state = Mutex(State())
    private let interactive: Bool
    private let width = 24

    private let silent: Bool

    /// A display that draws live bars when `interactive`; a `silent` one prints nothing (for
    /// when standard output carries the image itself).
    init(interactive: Bool = Terminal.isInteractive, silent: Bool = false) {
        self.interactive = interactive && !silent
        self.silent = silent
    }

    /// Adds a bar; returns its index.
    func add(_ label: String, unit: Unit = .bytes) -> Int {
        let index = state.withLock { state in
            state.bars.append(Bar(label: label, unit: unit))
            return state.bars.count - 1
        }
        if interactive { redraw(force: true) } else { emit("start  \(label)") }
        return index
    }

    /// Updates a bar's counts (bytes, or items for a count bar).
    func update(_ index: Int, _ progress: ImageProgress) {
        let line: String? = state.withLock { state in
            state.bars[index].received = progress.receivedBytes
            state.bars[index].expected = progress.expectedBytes ?? state.bars[index].expected
            // Without a terminal, a count bar says how far it is now and then.
            guard !interactive, case .items(let name) = state.bars[index].unit else { return nil }
            let bar = state.bars[index], now = ContinuousClock.now
            let tenth = bar.expected.map { $0 > 0 ? bar.received * 10 / $0 : 0 } ?? 0
            guard tenth > bar.lastTenth || now - bar.lastLine >= .seconds(5) else { return nil }
            state.bars[index].lastTenth = tenth
            state.bars[index].lastLine = now
            let percent = bar.expected.map { $0 > 0 ? " (\(bar.received * 100 / $0) %)" : "" } ?? ""
            return "       \(bar.label): \(bar.received)\(bar.expected.map { "/\($0)" } ?? "") \(name)\(percent)"
                + (bar.note.isEmpty ? "" : ", \(bar.note)")
        }
        if interactive { redraw(force: false) } else if let line { emit(line) }
    }

    /// Shows a note on a bar (a preview, say); printed as its own line when not interactive
    /// (count bars show theirs in their periodic lines instead).
    func note(_ index: Int, _ text: String) {
        let (label, unit) = state.withLock { state in
            state.bars[index].note = text
            return (state.bars[index].label, state.bars[index].unit)
        }
        if interactive {
            redraw(force: false)
        } else if case .bytes = unit {
            emit("       \(label): \(text)")
        }
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
        if silent { return }
        Terminal.write(line + "\n")
    }

    private func redraw(force: Bool) {
        let text: String? = state.withLock { state in
            let now = ContinuousClock.now
            guard force || now - state.lastDraw >= .milliseconds(100) else { return nil }
            state.lastDraw = now
            var out = state.drawnLines > 0 ? "\u{1B}[\(state.drawnLines)A" : ""
            // A long finished line wraps: count the rows it takes, so the next redraw starts above it.
            let columns = Terminal.columns
            var rows = 0
            for bar in state.bars {
                let line = render(bar, now: now)
                out += "\u{1B}[2K" + line + "\n"
                rows += max(1, (line.count + columns - 1) / columns)
            }
            state.drawnLines = rows
            return out
        }
        if let text { Terminal.write(text) }
    }

    private func render(_ bar: Bar, now: ContinuousClock.Instant) -> String {
        // A finished bar names its whole URL or path; a live one shows its end, to keep one line.
        if let done = bar.done { return "\(bar.label): \(done)" }
        let label = bar.label.count > 28 ? "…" + bar.label.suffix(27) : bar.label.padding(toLength: 28, withPad: " ", startingAt: 0)
        let fraction = bar.expected.map { $0 > 0 ? min(1, Double(bar.received) / Double($0)) : 0 } ?? 0
        let filled = Int(fraction * Double(width))
        let elapsed = now - bar.started
        let seconds = max(0.001, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        let rate = Double(bar.received) / seconds
        let bars = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let note = bar.note.isEmpty ? "" : "  " + bar.note
        if case .items(let name) = bar.unit {
            return "\(label) [\(bars)] \(bar.received)\(bar.expected.map { "/\($0)" } ?? "") \(name)\(note)"
        }
        var eta = ""
        if let expected = bar.expected, rate > 0, bar.received < expected {
            eta = String(format: " ETA %.1fs", Double(expected - bar.received) / rate)
        }
        let total = bar.expected.map { "/" + Terminal.bytes($0) } ?? ""
        return "\(label) [\(bars)] \(Terminal.bytes(bar.received))\(total) \(Terminal.bytes(Int64(rate)))/s\(eta)\(note)"
    }
}
