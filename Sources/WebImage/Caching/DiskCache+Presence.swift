import CWebImageSystem
import Foundation
import Synchronization

// The negative lookup: a key that is not on disk answered without a system call, and without
// a hop to the disk thread.
//
// `KnownNames` holds the folder's entry names, under a lock any thread may take. Whether they
// are still all the names, when other processes write the same folder, is told by a counter
// in the folder's `.generation` file, mapped shared: each process adds one after every change
// it makes to the folder's names (a store, a removal, a migration); the first writer creates
// the file. While the counter reads what it read when the names were last listed (plus this
// cache's own changes), a name they lack is not on disk. Otherwise the disk thread lists the
// folder again, at most once a second while others keep writing; in between, lookups ask the
// file system as before. A file another program put there without this library is found once
// the names are listed again (a cleanup, or another process's write).
extension DiskCache {
    /// Whether the entry of `key` (current or legacy name) is known not to be in the folder,
    /// answered on the caller's thread. False when unsure, or when additional directories may
    /// hold it.
    nonisolated func isKnownAbsent(_ name: String) -> Bool {
        configuration.negativeLookup && configuration.additionalDirectories.isEmpty
            && knownNames.lacks(name, legacy: DiskCache.legacyFileName(forKey: "", current: name))
    }

    /// On the disk thread: whether the entry named `name` may be on disk; when the names are
    /// not known to be current, the folder is listed again (at most once a second).
    func mayHold(_ name: String) -> Bool {
        guard configuration.negativeLookup, configuration.additionalDirectories.isEmpty else { return true }
        if let answer = knownNames.answer(name, legacy: DiskCache.legacyFileName(forKey: "", current: name)) { return answer }
        guard sharedGeneration() != nil else { return true }
        if let listed = namesListed, ContinuousClock.now - listed < .seconds(1) { return true }
        namesListed = .now
        let before = knownNames.counterValue
        index = nil
        ensureIndex()
        if indexListedFolder, let index, let before { knownNames.replace(with: index.keys, at: before) }
        return knownNames.answer(name, legacy: DiskCache.legacyFileName(forKey: "", current: name)) ?? true
    }

    /// The folder's shared change counter, mapped on first use; nil where it cannot be (tried
    /// again at most once a second). A reader never creates it (a lookup leaves no file
    /// behind): until a writer has, misses ask the file system. A writer (`creating`) makes it.
    @discardableResult
    private func sharedGeneration(creating: Bool = false) -> SharedGeneration? {
        if let counter = knownNames.counter { return counter }
        if !creating, let tried = generationTried, ContinuousClock.now - tried < .seconds(1) { return nil }
        generationTried = .now
        guard let counter = SharedGeneration(path: path(".generation"), create: creating) else { return nil }
        knownNames.attach(counter)
        return counter
    }

    /// Tells the other processes (and this cache's negative lookup) that the folder's names
    /// changed: `added` is now there, `removed` no longer is (nil for either: none; both nil
    /// with `unknown`: the names must be listed again). When no other process changed them
    /// since they were listed, they stay current.
    func namesChanged(added: String? = nil, removed: String? = nil, unknown: Bool = false) {
        // A writer always counts its change, even one that never looked anything up.
        guard sharedGeneration(creating: true) != nil else { return }
        knownNames.change(added: added, removed: removed, unknown: unknown)
    }
}

/// A cache folder's entry names and whether they are current, under a lock (see
/// `DiskCache+Presence`).
final class KnownNames: Sendable {
    private struct State {
        var names: Set<String> = []
        /// The shared counter's value when `names` were all the names; nil: not known to be.
        var currentAt: UInt64?
        var counter: SharedGeneration?
    }
    private let state = Mutex(State())

    var counter: SharedGeneration? { state.withLock { $0.counter } }
    var counterValue: UInt64? { state.withLock { $0.counter?.value } }

    func attach(_ counter: SharedGeneration) { state.withLock { $0.counter = $0.counter ?? counter } }

    /// True when the names are current and hold neither `name` nor `legacy`.
    func lacks(_ name: String, legacy: String?) -> Bool { answer(name, legacy: legacy) == false }

    /// Whether `name` (or `legacy`) is there, when the names are current; nil when they are not.
    func answer(_ name: String, legacy: String?) -> Bool? {
        state.withLock { state in
            guard let counter = state.counter, let at = state.currentAt, counter.value == at else { return nil }
            return state.names.contains(name) || legacy.map { state.names.contains($0) } ?? false
        }
    }

    /// The folder was listed when the counter read `value`: these are its names.
    func replace(with names: some Sequence<String>, at value: UInt64) {
        let set = Set(names)
        state.withLock { state in
            state.names = set
            state.currentAt = value
        }
    }

    /// This process changed the names: the counter goes up one; the names stay current when
    /// they were (no other writer in between).
    func change(added: String?, removed: String?, unknown: Bool) {
        state.withLock { state in
            guard let counter = state.counter else { return }
            let before = counter.bump()
            guard !unknown, let at = state.currentAt, at == before else {
                state.currentAt = nil
                return
            }
            if let removed { state.names.remove(removed) }
            if let added { state.names.insert(added) }
            state.currentAt = before &+ 1
        }
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
