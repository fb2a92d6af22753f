import Foundation
import Synchronization

/// Stage 6, storing: memory before the callers go on when the cache is the library's own (a
/// lock, no suspension), while they go on for any other `ImageCaching` (the work stays joinable
/// until it is done); disk in the background (or before returning, with `.waitStoreCache`).
extension ImagePipeline {
    /// Puts the loaded image into memory, as the request's store type allows, for at most
    /// `lifetime` (its response's freshness; zero: not at all); true when it went there. A
    /// failure is logged: the callers still get the image.
    /// Inlined: a store that does not suspend (none, or a cache with synchronous memory) takes
    /// no async frame of its own.
    @inline(__always)
    func storeInMemory(_ request: LoadRequest, image: Image, lifetime: Duration? = nil) async -> Bool {
        guard let key = request.cacheKey, request.memoryStoreType.includesMemory else { return false }
        if request.settings.hasSynchronousMemory { return request.cache.storeInMemoryNow(image, forKey: key, lifetime: lifetime) }
        return await storeInMemory_slowPath(request, key: key, image: image, lifetime: lifetime)
    }

    /// `storeInMemory` through a cache whose memory store may suspend.
    @inline(never)
    private func storeInMemory_slowPath(_ request: LoadRequest, key: String, image: Image, lifetime: Duration?) async -> Bool {
        if let lifetime, lifetime <= .zero { return false }
        do {
            try await request.cache.store(image, data: nil, extendedData: nil, forKey: key, to: .memory, context: request.context)
            return true
        } catch {
            ImagePipeline.logger.warning("could not cache \(request.urlString) in memory: \(error)")
            return false
        }
    }

    /// Writes a loaded image to disk: in the background (in place of `reservation`) or, with
    /// `.waitStoreCache`, before returning, and then returns why it failed (nil when it did not).
    /// The original of a transformed or thumbnail image goes under its own key as
    /// `originalStoreCacheType` and the data-cache policy say; an image stored without its
    /// bytes is encoded with the context's `cacheEncoding` by `coders`. `metadata` (validators and freshness) is written with each
    /// entry; `storable` false (a `no-store` response under `.respectHeaders`) writes nothing.
    /// Failures are logged: the caller still gets the image.
    /// Inlined: only a write the callers wait for (`.waitStoreCache`) suspends; any other is
    /// planned and started in the background synchronously, with no async frame.
    @discardableResult @inline(__always)
    func storeOnDisk(_ request: LoadRequest, original: Image, image: Image, data: Data?, derived: Bool, coders: ImageCoders,
                     metadata: StoredMetadata, storable: Bool = true, storesOriginal: Bool = true,
                     reservation: PendingStores.Reservation? = nil) async -> ImageError? {
        guard let write = diskWrite(request, original: original, image: image, data: data, derived: derived, coders: coders,
                                    metadata: metadata, storable: storable, storesOriginal: storesOriginal, reservation: reservation)
        else { return nil }
        return await write()
    }

    /// The disk write of `storeOnDisk`: started in the background (in place of `reservation`)
    /// and nil, or with `.waitStoreCache` returned to be awaited; nil when nothing is written.
    @inline(never)
    private func diskWrite(_ request: LoadRequest, original: Image, image: Image, data: Data?, derived: Bool, coders: ImageCoders,
                           metadata: StoredMetadata, storable: Bool, storesOriginal: Bool,
                           reservation: PendingStores.Reservation?) -> (@Sendable () async -> ImageError?)? {
        // A reservation not handed to a write is released, whichever way this returns.
        var started = false
        defer { if let reservation, !started { pendingStores.release(reservation) } }
        guard let key = request.cacheKey, storable else { return nil }
        let cache = request.cache, originalCache = request.settings.originalCache, url = request.url
        let storeType = request.storeType
        let serializer = request.context.cacheSerializer
        let originalStoreType = request.originalStoreType
        let originalKey = request.originalKey
        let thumbnailed = request.settings.reducesDecode
        let policy = request.settings.dataCachePolicy, encoding = request.settings.cacheEncoding
        // The entry under the load's key: none for a processed image when only originals are
        // kept; a plain image re-encoded when only encoded images are.
        let storesEntry = storeType.includesDisk && !(derived && policy == .storeOriginalData)
        let reencodes = policy == .storeEncodedImages
        let asked: ImageCacheType = thumbnailed ? (originalStoreType.includesDisk ? .disk : .none) : originalStoreType
        let originalDestination: ImageCacheType = switch policy {
        case .automatic: asked
        case .storeOriginalData, .storeAll: ImageCacheType(memory: asked.includesMemory, disk: true)
        case .storeEncodedImages: ImageCacheType(memory: asked.includesMemory, disk: false)
        }
        let storesOriginal = derived && storesOriginal && originalKey != key && originalDestination != .none
        guard storesEntry || storesOriginal else { return nil }
        // A write waiting for the disk holds a decoded image only where it needs one (to encode
        // it, for a serializer, or for the original's memory entry): a queue of pending writes
        // must not keep every decoded bitmap of a burst alive.
        let encodedImage: Image? = serializer != nil || derived || reencodes || data == nil ? image : nil
        let originalImage: Image? = !thumbnailed && (originalDestination.includesMemory || data == nil) ? original : nil
        started = true
        return scheduledDiskWrite(request, key: key, reservation: reservation) {
            // Written out here, in the write's own task, not before the callers are resumed.
            let metadata = metadata.data
            if storesOriginal, let originalKey, originalDestination != .none {
                // The full-size original: its data for the disk; its image for memory only when not a thumbnail.
                try await originalCache.store(originalImage, data: data, extendedData: metadata, forKey: originalKey, to: originalDestination,
                                      context: request.context)
            }
            guard storesEntry else { return }
            var bytes: Data? = derived || reencodes ? nil : data
            if let serializer, let encodedImage {
                bytes = serializer.serialize(encodedImage, derived ? nil : data, url)
                guard bytes != nil else { return }   // nil stores nothing, by design
            } else if bytes == nil, let encoding, let encodedImage {
                bytes = try encoding.encode(encodedImage, coders: coders)
            }
            // The metadata is written with the data, in one step; an image made from the
            // response (a thumbnail, a transformed one) keeps the response's freshness.
            try await cache.store(encodedImage, data: bytes, extendedData: metadata, forKey: key, to: .disk, context: request.context)
        }
    }

    /// A disk write of `request`'s load (`body`, storing under `key`), the same for an image's
    /// entries and a data load's bytes: timed, its failure logged and typed. With
    /// `.waitStoreCache` it is returned for the load to await (and `reservation` released);
    /// otherwise it starts in the background, in place of `reservation`, and nil is returned.
    func scheduledDiskWrite(_ request: LoadRequest, key: String, reservation: PendingStores.Reservation? = nil,
                            _ body: @escaping @Sendable () async throws -> Void) -> (@Sendable () async -> ImageError?)? {
        let (metrics, url) = (self.metrics, request.url)
        let write: @Sendable () async -> ImageError? = {
            let start = ContinuousClock.now
            defer { metrics.record(.store, .now - start) }
            do {
                try await body()
                return nil
            } catch {
                ImagePipeline.logger.warning("could not cache \(url.absoluteString) on disk: \(error)")
                return error as? ImageError ?? ImageError.cacheWriteFailed(path: key, reason: "\(error)")
            }
        }
        if request.options.contains(.waitStoreCache) {
            if let reservation { pendingStores.release(reservation) }
            return write
        }
        pendingStores.start({ _ = await write() }, reservation: reservation)
        return nil
    }
}

/// The metadata a disk store writes beside an entry: a response's, written out only when the
/// write runs, or the bytes of an entry it was made from.
enum StoredMetadata: Sendable {
    case entry(CacheEntryMetadata)
    case stored(Data?)

    /// The bytes to write.
    var data: Data? {
        switch self {
        case .entry(let metadata): metadata.stored
        case .stored(let data): data
        }
    }
}

/// Background disk writes: started without waiting, awaited by `ImageManager.waitForPendingStores()`.
/// A write can be reserved before it starts (before the callers of its load are resumed), so
/// that a wait that begins in between does not miss it.
final class PendingStores: Sendable {
    /// A write announced but not started yet.
    struct Reservation: Sendable { fileprivate let id: Int }

    private struct State {
        var tasks: [Int: Task<Void, Never>] = [:]
        var reserved: Set<Int> = []
        /// The cache key a reserved or running write stores an original under, by write, and
        /// the latest such write by key.
        var keys: [Int: String] = [:]
        var byKey: [String: Int] = [:]

        /// Forgets write `id`'s key.
        mutating func forgetKey(of id: Int) {
            guard let key = keys.removeValue(forKey: id), byKey[key] == id else { return }
            byKey[key] = nil
        }
        /// Waits for reservations to start or go.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    private let nextID = Atomic<Int>(0)

    /// Announces a write that will start soon; `waitForAll` waits for it from now on, and
    /// `wait(forKey:)` for `key` (the original a derived load stores).
    func reserve(key: String? = nil) -> Reservation {
        let id = nextID.add(1, ordering: .relaxed).newValue
        state.withLock { state in
            state.reserved.insert(id)
            if let key {
                state.keys[id] = key
                state.byKey[key] = id
            }
        }
        return Reservation(id: id)
    }

    /// Forgets a reservation whose write will not happen.
    func release(_ reservation: Reservation) {
        let waiters = state.withLock { state in
            state.reserved.remove(reservation.id)
            state.forgetKey(of: reservation.id)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Starts `write` in the background (in place of `reservation`, if given); it forgets itself when done.
    func start(_ write: @escaping @Sendable () async -> Void, reservation: Reservation? = nil) {
        let id = reservation?.id ?? nextID.add(1, ordering: .relaxed).newValue
        let waiters = state.withLock { state in
            state.tasks[id] = Task.detached(priority: .utility) { [weak self] in
                await write()
                self?.state.withLock { state in
                    state.tasks[id] = nil
                    state.forgetKey(of: id)
                }
            }
            state.reserved.remove(id)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits for the writes reserved or running that store an original under `key`: a load of
    /// another size of that original, made as soon as the first returned, then finds it on
    /// disk instead of downloading it again (SDWebImage's serial I/O queue gives its queries
    /// the same order). Costs one look under the lock when there is none.
    func wait(forKey key: String) async {
        await wait { state in
            guard let id = state.byKey[key] else { return (nil, false) }
            return (state.tasks[id], state.reserved.contains(id))
        }
    }

    /// Waits until every write started or reserved so far (and any started meanwhile) is done.
    func waitForAll() async {
        // One look at both, under one lock: looked at apart, a reservation that started its
        // write in between was in neither, and the wait returned before that write.
        await wait { ($0.tasks.first?.value, !$0.reserved.isEmpty) }
    }

    /// Waits while `look` finds a write running (awaited) or reserved (woken when a
    /// reservation starts its write or goes; then it looks again).
    private func wait(while look: @escaping @Sendable (borrowing State) -> (running: Task<Void, Never>?, reserved: Bool)) async {
        while true {
            let (running, reserved) = state.withLock { look($0) }
            if let running {
                await running.value
                continue
            }
            guard reserved else { return }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if !look(state).reserved { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }
}
