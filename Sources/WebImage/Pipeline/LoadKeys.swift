import Foundation

// The keys under which loads share work, nested the way each stage depends on the one before:
// the download key is part of the work key and of the data key. Each is built from a
// `LoadRequest` by `init(_:)`, hashed once, and keeps a reference to the request instead of a copy
// of its fields; equality compares the fields that stage depends on. A request that cannot be
// compared (`isShareable == false`) gives keys equal only to keys of the same request.

/// What makes two loads the same transfer: URL, loader, and the request's transfer settings.
struct DownloadKey: Hashable, Sendable {
    let request: LoadRequest
    private let hash: Int

    init(_ request: LoadRequest) {
        self.request = request
        hash = keyHash(request, options: nil)
    }

    /// Whether `x` and `y` ask for the same transfer.
    static func same(_ x: LoadRequest, _ y: LoadRequest) -> Bool {
        if x === y { return true }
        guard x.isShareable, y.isShareable else { return false }
        let mask: ImageOptions = [.handleCookies, .allowInvalidSSLCertificates, .refreshCached]
        return x.urlString == y.urlString && x.options.intersection(mask) == y.options.intersection(mask)
            && x.timeout == y.timeout && x.loaderID == y.loaderID
    }

    static func == (a: Self, b: Self) -> Bool { a.hash == b.hash && same(a.request, b.request) }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}

/// What makes two loads the same work (disk query, transfer, decode, transform, store): the same
/// transfer, decoded the same way, processed and cached the same way. Priority and
/// `.retryFailed` are not part of it: callers that differ only there share the work (and the
/// most urgent caller's priority wins). Hashed once, when made.
///
/// A work made by a call with no options and no context of its own is also found by its
/// alias, `WorkKey(plainURL:)`: every such call of a URL makes the same request, so a caller
/// finds the work by the URL alone, without building the request.
struct WorkKey: Hashable, Sendable {
    private enum Form: Sendable {
        case request(LoadRequest)
        case plain(String)
    }
    private let form: Form
    private let hash: Int

    init(_ request: LoadRequest) {
        form = .request(request)
        hash = keyHash(request, options: request.options.subtracting(WorkKey.ignoredOptions))
    }

    /// The alias of the work of a plain call of `url` (see `LoadRequest.isPlain`). Hashed as the
    /// string alone, by the table's own hasher: one pass, as a key that is a string.
    init(plainURL url: String) {
        form = .plain(url)
        hash = 0
    }

    /// The request of a work's own key (the table gives out only those).
    var request: LoadRequest {
        guard case .request(let request) = form else { preconditionFailure("an alias key has no request") }
        return request
    }

    /// Options that do not change what the work does.
    static let ignoredOptions: ImageOptions = [.retryFailed, .lowPriority, .highPriority, .queryMemoryData]

    static func == (a: Self, b: Self) -> Bool {
        // One form at a time: a switch over the pair copied both keys into a tuple.
        switch a.form {
        case .plain(let x):
            if case .plain(let y) = b.form { return x == y }
            return false
        case .request(let x):
            if case .request(let y) = b.form { return a.hash == b.hash && same(x, y) }
            return false
        }
    }

    /// Whether `x` and `y` make the same work.
    private static func same(_ x: LoadRequest, _ y: LoadRequest) -> Bool {
        if x === y { return true }
        return DownloadKey.same(x, y) && x.decodeOptions == y.decodeOptions && x.coderID == y.coderID
            && x.cacheKey == y.cacheKey && x.settings.transformerKey == y.settings.transformerKey
            && x.settings.thumbnailSize == y.settings.thumbnailSize && x.settings.fillSize == y.settings.fillSize
            && x.settings.fillAnchor == y.settings.fillAnchor && x.preservesAspectRatio == y.preservesAspectRatio
            && x.options.subtracting(ignoredOptions) == y.options.subtracting(ignoredOptions)
            && x.queryType == y.queryType && x.storeType == y.storeType
            && x.originalQueryType == y.originalQueryType && x.originalStoreType == y.originalStoreType
            && x.cacheID == y.cacheID && x.settings.respectsHTTPHeaders == y.settings.respectsHTTPHeaders && x.settings.isSharedCache == y.settings.isSharedCache
            && x.settings.dataCachePolicy == y.settings.dataCachePolicy && x.settings.cacheEncoding == y.settings.cacheEncoding
            && x.settings.storesPreviews == y.settings.storesPreviews && x.settings.formatHint == y.settings.formatHint
            && x.settings.originalCacheID == y.settings.originalCacheID
    }

    func hash(into hasher: inout Hasher) {
        if case .plain(let url) = form { hasher.combine(url) } else { hasher.combine(hash) }
    }
}

/// The hash of a key: the URL, the options that matter to it, and the request itself when it
/// cannot be compared with others.
private func keyHash(_ request: LoadRequest, options: ImageOptions?) -> Int {
    var hasher = Hasher()
    hasher.combine(request.urlString)
    if let options { hasher.combine(options.rawValue) }
    if !request.isShareable { hasher.combine(ObjectIdentifier(request)) }
    return hasher.finalize()
}

/// The key of a data load (`ImageManager.data(for:)`): the transfer's key, and what decides
/// where the bytes are looked for and stored.
struct DataKey: Hashable, Sendable {
    let request: LoadRequest
    private let hash: Int

    init(_ request: LoadRequest) {
        self.request = request
        hash = keyHash(request, options: request.options.subtracting(WorkKey.ignoredOptions))
    }

    static func == (a: Self, b: Self) -> Bool {
        guard a.hash == b.hash else { return false }
        let (x, y) = (a.request, b.request)
        if x === y { return true }
        return DownloadKey.same(x, y) && x.originalKey == y.originalKey
            && x.options.subtracting(WorkKey.ignoredOptions) == y.options.subtracting(WorkKey.ignoredOptions)
            && x.queryType == y.queryType && x.storeType == y.storeType && x.cacheID == y.cacheID
            && x.settings.respectsHTTPHeaders == y.settings.respectsHTTPHeaders && x.settings.isSharedCache == y.settings.isSharedCache
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}
