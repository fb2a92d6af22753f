import CWebImageSystem
import Foundation

// The negative lookup: a key that is not on disk answered without a system call.
//
// The index (`DiskCache+Cleanup`) knows every entry's name once it is built. Whether it still
// does, when other processes write the same folder, is told by a counter in the folder's
// `.generation` file, mapped shared: each process adds one after every change it makes to the
// folder's names (a store, a removal, a migration); the first writer creates the file. When the counter still reads what it read
// when this cache's index was last complete (plus this cache's own changes), a name the index
// lacks is not on disk. Otherwise the folder is listed again, at most once a second while
// others keep writing; in between, lookups ask the file system as before. A file another
// program put there without this library is found once the index is rebuilt (a cleanup, or
// another process's write).
extension DiskCache {
    /// Whether the entry named `name` (or its legacy name) may be on disk: false only when the
    /// index is known to hold every name in the folder and holds neither.
    func mayHold(_ name: String, legacy: String?) -> Bool {
        guard configuration.negativeLookup, let index = currentIndex() else { return true }
        return index[name] != nil || legacy.map { index[$0] != nil } ?? false
    }

    /// The index, when it holds every name in the folder now; nil when that is not known.
    private func currentIndex() -> [String: Entry]? {
        guard let counter = sharedGeneration() else { return nil }
        let now = counter.value
        if let index, indexListedFolder, namesCurrentAt == now { return index }
        // Listed again at most once a second: while others keep writing, misses ask the file system.
        if let listed = namesListed, ContinuousClock.now - listed < .seconds(1) { return nil }
        namesListed = .now
        index = nil
        ensureIndex()
        namesCurrentAt = indexListedFolder ? now : nil
        return indexListedFolder ? index : nil
    }

    /// The folder's shared change counter, mapped on first use; nil where it cannot be (tried
    /// again at most once a second). A reader never creates it (a lookup leaves no file
    /// behind): until a writer has, misses ask the file system. A writer (`creating`) makes it.
    private func sharedGeneration(creating: Bool = false) -> SharedGeneration? {
        if let generation { return generation }
        if !creating, let tried = generationTried, ContinuousClock.now - tried < .seconds(1) { return nil }
        generationTried = .now
        generation = SharedGeneration(path: path(".generation"), create: creating)
        return generation
    }

    /// Tells the other processes (and this cache's negative lookup) that the folder's names
    /// changed: called after every store, removal and migration. When no other process
    /// changed them since the index was complete, it stays complete.
    func namesChanged() {
        // A writer always counts its change, even one that never looked anything up.
        guard let counter = sharedGeneration(creating: true) else { return }
        let before = counter.bump()
        namesCurrentAt = namesCurrentAt == before ? before &+ 1 : nil
    }
}

/// The 8-byte counter of a cache folder's `.generation` file, mapped shared between processes.
final class SharedGeneration: @unchecked Sendable {
    // Only touched through the C shim's atomic load and add; the mapping lives as long as this.
    private let counter: UnsafeMutablePointer<UInt64>

    init?(path: String, create: Bool) {
        guard let counter = wi_generation_map(path, create ? 1 : 0) else { return nil }
        self.counter = counter
    }

    deinit { wi_generation_unmap(counter) }

    /// The counter now.
    var value: UInt64 { wi_generation_load(counter) }

    /// Adds one; returns the value before.
    func bump() -> UInt64 { wi_generation_bump(counter) }
}
