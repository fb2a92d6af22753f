import Foundation

/// Polls the kernel's memory-pressure signals and calls back when they rise: the cgroup v2
/// `memory.events` counters `high` and `max`, and `/proc/pressure/memory` ("some avg10" over a
/// threshold). The files are read on a thread of the watcher's own, off the cooperative pool.
actor MemoryPressureWatcher {
    private nonisolated let executor = ThreadExecutor(name: "webimage.memory-pressure")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private var task: Task<Void, Never>?
    private var lastEvents = 0

    /// Starts polling every `interval`; `onPressure` runs each time pressure is seen.
    func start(interval: Duration = .seconds(2), cgroupRoot: String = "/sys/fs/cgroup",
               onPressure: @escaping @Sendable () async -> Void) {
        lastEvents = MemoryPressureWatcher.eventCount(try? String(contentsOfFile: "\(cgroupRoot)/memory.events", encoding: .utf8))
        task = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if self.poll(cgroupRoot: cgroupRoot) { await onPressure() }
            }
        }
    }

    /// Stops polling, then the watcher's thread. The polling task runs on that thread: it is
    /// cancelled and awaited first, or it would wait forever for a stopped thread (and leak with
    /// everything it holds; AddressSanitizer's leak check found it).
    func stop() async {
        let polling = task
        task = nil
        polling?.cancel()
        await polling?.value
        executor.stop()
    }

    private func poll(cgroupRoot: String) -> Bool {
        let events = MemoryPressureWatcher.eventCount(try? String(contentsOfFile: "\(cgroupRoot)/memory.events", encoding: .utf8))
        defer { lastEvents = events }
        if events > lastEvents { return true }
        let psi = try? String(contentsOfFile: "/proc/pressure/memory", encoding: .utf8)
        return (MemoryPressureWatcher.someAverage10(psi) ?? 0) >= 10
    }

    /// The sum of the `high` and `max` counters of a cgroup `memory.events` file.
    static func eventCount(_ text: String?) -> Int {
        guard let text else { return 0 }
        var total = 0
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, parts[0] == "high" || parts[0] == "max", let value = Int(parts[1]) { total += value }
        }
        return total
    }

    /// The `avg10` of the `some` line of a PSI file, in percent.
    static func someAverage10(_ text: String?) -> Double? {
        guard let line = text?.split(separator: "\n").first(where: { $0.hasPrefix("some ") }) else { return nil }
        for field in line.split(separator: " ") where field.hasPrefix("avg10=") { return Double(field.dropFirst(6)) }
        return nil
    }
}
