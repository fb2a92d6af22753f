import Foundation

/// How much memory this process may use: the cgroup v2 limit when it runs in a container with
/// one, else the machine's physical memory.
enum ProcessMemory {
    static func limit(cgroupRoot: String = "/sys/fs/cgroup") -> UInt64 {
        let physical = ProcessInfo.processInfo.physicalMemory
        if let text = try? String(contentsOfFile: "\(cgroupRoot)/memory.max", encoding: .utf8),
           let value = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines)), value > 0 {
            return min(value, physical)
        }
        return physical
    }

    /// The default memory-cache cost limit: 15 % of `limit()`.
    static var defaultCacheCostLimit: Int { Int(Double(limit()) * 0.15) }
}
