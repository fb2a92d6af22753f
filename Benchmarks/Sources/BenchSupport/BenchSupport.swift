import Foundation

/// What every benchmark executable shares: its arguments, the anchors measured by
/// ../shared/bench/anchors.sh in the same run, and timing helpers.
public struct BenchRun: Sendable {
    /// The fixtures folder made by ../shared/bench/fixtures.py.
    public let fixtures: URL
    /// Anchor figures in milliseconds, by the name anchors.sh prints.
    public let anchors: [String: Double]

    /// Reads `FIXTURES_DIR [ANCHORS_FILE]` from the command line, or exits with a usage line.
    public init(usage name: String) {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2 else {
            FileHandle.standardError.write(Data("usage: \(name) FIXTURES_DIR [ANCHORS_FILE]\n".utf8))
            exit(2)
        }
        fixtures = URL(fileURLWithPath: arguments[1])
        var anchors: [String: Double] = [:]
        if arguments.count >= 3, let text = try? String(contentsOfFile: arguments[2], encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.count == 3, parts[2] == "ms", let value = Double(parts[1]) { anchors[String(parts[0])] = value }
            }
        }
        self.anchors = anchors
    }

    /// The bytes of a fixture, or exit with a clear line.
    public func load(_ name: String) -> Data {
        guard let data = try? Data(contentsOf: fixtures.appendingPathComponent(name)) else {
            FileHandle.standardError.write(Data("missing fixture \(name): run ../shared/bench/fixtures.py first\n".utf8))
            exit(1)
        }
        return data
    }
}

/// Milliseconds in a duration.
public func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

/// A number with two decimals.
public func formatted(_ value: Double) -> String { String(format: "%.2f", value) }

/// Median wall time in milliseconds of `body` over `runs` runs after one warm-up.
public func medianMilliseconds(runs: Int, _ body: () throws -> Void) rethrows -> Double {
    try body()
    let clock = ContinuousClock()
    var times: [Double] = []
    for _ in 0..<runs { times.append(milliseconds(try clock.measure(body))) }
    return times.sorted()[times.count / 2]
}

/// The figures one job gave over interleaved rounds: their median and spread.
public struct Spread: Sendable {
    /// Every round's figure, in round order.
    public var samples: [Double]
    /// The median round.
    public var median: Double { samples.sorted()[samples.count / 2] }
    /// The lowest round.
    public var low: Double { samples.min() ?? 0 }
    /// The highest round.
    public var high: Double { samples.max() ?? 0 }
    /// Figures in round order.
    public init(samples: [Double]) { self.samples = samples }
    /// "median (low-high)" with two decimals.
    public var text: String { "\(formatted(median)) (\(formatted(low))-\(formatted(high)))" }

    /// Each round's figure over `other`'s in the same round (the two were measured moments
    /// apart, so a slow stretch of the machine slows both): a steadier ratio than the ratio of
    /// the two medians.
    public func ratios(over other: Spread) -> Spread {
        Spread(samples: zip(samples, other.samples).map { $0 / $1 })
    }
}

/// Runs every job once per round, in turn, for `rounds` rounds after one warm-up round, so that
/// a figure and its anchor see the same moments of a noisy machine. Each job returns its own
/// figure for the round (a time, or a time per operation).
public func interleaved(rounds: Int, _ jobs: [() async throws -> Double]) async throws -> [Spread] {
    for job in jobs { _ = try await job() }
    var spreads = jobs.map { _ in Spread(samples: []) }
    for _ in 0..<rounds {
        for (index, job) in jobs.enumerated() { spreads[index].samples.append(try await job()) }
    }
    return spreads
}

/// `interleaved(rounds:_:)` for synchronous jobs.
public func interleaved(rounds: Int, _ jobs: [() throws -> Double]) throws -> [Spread] {
    for job in jobs { _ = try job() }
    var spreads = jobs.map { _ in Spread(samples: []) }
    for _ in 0..<rounds {
        for (index, job) in jobs.enumerated() { spreads[index].samples.append(try job()) }
    }
    return spreads
}

/// Whether the row named `name` runs: every row, unless `WEBIMAGE_BENCH_ROW` is set
/// (`scripts/bench.sh --quick ROW`), and then only rows whose name contains it (any case).
public func wantsRow(_ name: String) -> Bool {
    guard let wanted = ProcessInfo.processInfo.environment["WEBIMAGE_BENCH_ROW"], !wanted.isEmpty else { return true }
    return name.lowercased().contains(wanted.lowercased())
}

/// Instruction counts (`Benchmarks/instructions.sh`, under callgrind): what a run was asked to
/// count instead of timing. `WEBIMAGE_COUNT_LIST=1`: print each countable row's name and its
/// number of sides, run nothing. `WEBIMAGE_COUNT_ROW=NAME`, `WEBIMAGE_COUNT_SIDE=I`,
/// `WEBIMAGE_COUNT_TIMES=N`: run side I of the row named exactly NAME N times, then exit; the
/// script counts N = 1 and N = 3 and keeps half the difference, so start-up, fixtures and the
/// first call's warm-up cancel out.
public enum InstructionCount {
    private static let environment = ProcessInfo.processInfo.environment

    /// Whether this run only lists the countable rows.
    public static var isListing: Bool { environment["WEBIMAGE_COUNT_LIST"] == "1" }

    /// Whether this run counts one row (every other row is skipped, nothing is timed).
    public static var isCounting: Bool { environment["WEBIMAGE_COUNT_ROW"] != nil }

    /// Lists the row, or runs the side asked for and exits when `name` is the row asked for;
    /// returns false (nothing to do) otherwise, and true when the row was only listed. A caller
    /// times the row only when `isListing` and `isCounting` are both false.
    @discardableResult
    public static func handle(_ name: String, sides: [() throws -> Void]) throws -> Bool {
        if listed(name, sides: sides.count) { return true }
        guard let (side, times) = asked(name) else { return false }
        for _ in 0..<times { try sides[side]() }
        exit(0)
    }

    /// The async form of `handle(_:sides:)`;
    /// `cleanup` runs before the exit (a folder the row wrote into).
    @discardableResult
    public static func handle(_ name: String, sides: [() async throws -> Void], cleanup: () -> Void = {}) async throws -> Bool {
        if listed(name, sides: sides.count) { return true }
        guard let (side, times) = asked(name) else { return false }
        for _ in 0..<times { try await sides[side]() }
        cleanup()
        exit(0)
    }

    /// Prints the row when listing; whether it did.
    private static func listed(_ name: String, sides: Int) -> Bool {
        if isListing { print("\(name)\t\(sides)") }
        return isListing
    }

    /// The side and the number of runs asked for, when `name` is the row to count.
    private static func asked(_ name: String) -> (side: Int, times: Int)? {
        guard environment["WEBIMAGE_COUNT_ROW"] == name else { return nil }
        return (Int(environment["WEBIMAGE_COUNT_SIDE"] ?? "0") ?? 0, Int(environment["WEBIMAGE_COUNT_TIMES"] ?? "1") ?? 1)
    }
}
