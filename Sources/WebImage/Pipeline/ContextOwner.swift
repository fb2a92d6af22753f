import Synchronization

/// What a manager worked out from each context its calls passed (`ImageContext.settings(for:make:)`),
/// so that a context passed again (as most callers that pass one do: copies share their values)
/// is merged once, not on every call (merging and reading a context costs many times a memory
/// hit). Neither side keeps the other: the manager holds each context's values
/// weakly, and the values hold their managers weakly and take their entries out when they go.
/// A context that outlives its manager keeps nothing of it (not its cache, with the images in
/// memory), and a manager keeps nothing of a context after it (not a priority handle).
final class ContextOwner: Sendable {
    private struct Entry {
        /// The context's values (compared, never used) and their version: an entry whose values
        /// were changed in place, or whose address now holds other values, is not found.
        weak var values: (AnyObject & Sendable)?
        let version: Int
        let settings: LoadRequest.Settings
        let isShareable: Bool
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    /// How many contexts have entries (tests check that a context's entry goes with it).
    var entryCount: Int { entries.withLock { $0.count } }

    /// The settings kept for `values` at `version`, or those `make` works out, then kept. The
    /// values must call `forget(_:)` when they go (`make` is where they note this owner).
    func settings(for values: AnyObject & Sendable, version: Int,
                  make: () -> (LoadRequest.Settings, Bool)) -> (LoadRequest.Settings, Bool) {
        let id = ObjectIdentifier(values)
        let found = entries.withLock { entries -> (LoadRequest.Settings, Bool)? in
            guard let entry = entries[id], entry.version == version, entry.values === values else { return nil }
            return (entry.settings, entry.isShareable)
        }
        if let found { return found }
        let made = make()
        // The entry replaced is let go of outside the lock.
        let replaced = entries.withLock {
            $0.updateValue(Entry(values: values, version: version, settings: made.0, isShareable: made.1), forKey: id)
        }
        _ = replaced
        return made
    }

    /// The values with this identity are going: their entry goes too (released outside the lock).
    func forget(_ id: ObjectIdentifier) {
        let removed = entries.withLock { entries -> Entry? in
            guard let entry = entries[id], entry.values == nil else { return nil }
            return entries.removeValue(forKey: id)
        }
        _ = removed
    }
}
