import Foundation

/// How much memory this process may use: the cgroup limit when it runs in a container with one
/// (v2 `memory.max`, or v1 `memory.limit_in_bytes` on hybrid hosts), else physical memory.
enum ProcessMemory {
    static func limit(cgroupRoot: String = "/sys/fs/cgroup") -> UInt64 {
        let physical = ProcessInfo.processInfo.physicalMemory
        // cgroup v2: /proc/self/cgroup holds "0::/path"; the limit is that group's memory.max
        // (or the root's, inside a container with a cgroup namespace).
        // cgroup v1 (hybrid hosts): "N:memory:/path" and memory.limit_in_bytes.
        var candidates = ["\(cgroupRoot)/memory.max"]
        let own = (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)) ?? ""
        for line in own.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = fields[2] == "/" ? "" : String(fields[2])
            if fields[0] == "0" && fields[1].isEmpty {
                if !path.isEmpty { candidates.insert("\(cgroupRoot)\(path)/memory.max", at: 0) }
            } else if fields[1].split(separator: ",").contains("memory") {
                candidates.append("\(cgroupRoot)/memory\(path)/memory.limit_in_bytes")
                candidates.append("\(cgroupRoot)/memory/memory.limit_in_bytes")
            }
        }
        for candidate in candidates {
            if let text = try? String(contentsOfFile: candidate, encoding: .utf8),
               let value = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines)), value > 0 {
                return min(value, physical)
            }
        }
        return physical
    }

    /// The default memory-cache cost limit: 15 % of `limit()`.
    static var defaultCacheCostLimit: Int { Int(Double(limit()) * 0.15) }
}
