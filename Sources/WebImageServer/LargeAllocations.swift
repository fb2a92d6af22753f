import CWebImageSystem

extension ImageServer {
    /// Makes glibc give every allocation of `bytes` or more a mapping of its own, returned to the
    /// system when freed (`M_MMAP_THRESHOLD`). By default the threshold grows to the largest
    /// block freed so far, so the pixel buffers of images of many sizes end up in the heap and
    /// the resident size keeps what the busiest moment needed (the figures are in
    /// Benchmarks/README.md, "Figures once in source comments"). Process-wide:
    /// `webimage serve` calls it at start unless `MALLOC_MMAP_THRESHOLD_` is set.
    /// - Returns: whether the allocator took the setting.
    @discardableResult
    public static func mapLargeAllocations(atLeast bytes: Int = 2 << 20) -> Bool {
        bytes > 0 && wi_set_mmap_threshold(bytes) == 1
    }

    /// Starts a thread of its own (once per process) that gives the free pages inside glibc's
    /// heaps back to the system (`malloc_trim`) every `interval` in which they hold more than
    /// `slack` bytes free: the blocks under the mmap threshold that a busy moment freed are
    /// released instead of staying resident, and a steady load, whose heaps hold little free,
    /// does not pay for faulting released pages in again. Off the cooperative pool.
    /// `webimage serve` starts it (a second, 8 MiB) unless `MALLOC_TRIM_INTERVAL_MS` is 0.
    @discardableResult
    public static func trimHeaps(every interval: Duration = .seconds(1), slack: Int = 8 << 20) -> Bool {
        let milliseconds = interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000
        return milliseconds > 0 && wi_start_heap_trimmer(UInt32(clamping: milliseconds), max(0, slack)) == 1
    }
}
