import Foundation

/// What the manager keeps in a disk entry's extended data: the validators that revalidate it
/// and the response's freshness (RFC 9111 §4.2), written with the data in one step and read
/// in the same trip to the disk thread. Entries written before freshness was kept hold the
/// validators alone (`webimage-validators`) and read as responses that said nothing.
struct CacheEntryMetadata: Sendable, Equatable {
    var validators: CacheValidators?
    /// When the response arrived (the manager's clock), in seconds since 1970.
    var responseTime: Double
    /// Its age on arrival: the larger of `Age` and the time since its `Date` (RFC 9111 §4.2.3).
    var initialAge: Double
    /// How long it is fresh from its origin's view; nil when the response said nothing (the
    /// cache's own limits then decide, as with `.ignoreHeaders`).
    var lifetime: Double?
    var noCache = false
    var mustRevalidate = false
    var noStore = false
    /// Seconds after it goes stale that it may still be served while it is revalidated.
    var staleWhileRevalidate: Double = 0
    /// The request headers the response varies on (lowercase names) and the values it was
    /// requested with; empty without `Vary`.
    var vary: [String: String] = [:]
    /// `Vary: *`: no later request can be known to match.
    var variesOnEverything = false
    /// `private`: for one user's cache only.
    var isPrivate = false
    /// Whether it was reckoned for a shared cache (`HTTPCachePolicy.respectHeadersShared`):
    /// `s-maxage` and `proxy-revalidate` counted, `private` and `Vary: *` kept nowhere.
    var shared = false

    /// The longest heuristic freshness given from `Last-Modified` (RFC 9111 §4.2.2 leaves it open;
    /// a week, as Firefox).
    static let heuristicLimit: Double = 7 * 24 * 3600

    /// The metadata of a response with `headers` (lowercase names) that arrived at `now`, asked
    /// with `requestHeaders` (for `Vary`), for a private cache or a `shared` one.
    init(headers: [String: String], requestHeaders: [String: String], now: Date, shared: Bool = false) {
        self.shared = shared
        validators = CacheValidators(headers: headers)
        let control = CacheControl(headers["cache-control"])
        responseTime = now.timeIntervalSince1970
        let date = HTTPDate.parse(headers["date"])
        let dateSeconds = date?.timeIntervalSince1970 ?? responseTime
        let age = CacheControl.delta(headers["age"].map { Substring($0).trimmingSpaces }).map(Double.init) ?? 0
        initialAge = max(max(0, responseTime - dateSeconds), age)
        if shared, let sharedMaxAge = control.sharedMaxAge {
            lifetime = Double(sharedMaxAge)
        } else if let maxAge = control.maxAge {
            lifetime = Double(maxAge)
        } else if let expires = headers["expires"] {
            // An Expires that is not a date (such as "0") is in the past (RFC 9111 §5.3).
            lifetime = HTTPDate.parse(expires).map { max(0, $0.timeIntervalSince1970 - dateSeconds) } ?? 0
        } else if let modified = HTTPDate.parse(headers["last-modified"]) {
            lifetime = min(CacheEntryMetadata.heuristicLimit, max(0, (dateSeconds - modified.timeIntervalSince1970) / 10))
        }
        noCache = control.noCache
        // s-maxage implies proxy-revalidate (RFC 9111 §5.2.2.10).
        mustRevalidate = control.mustRevalidate || (shared && (control.proxyRevalidate || control.sharedMaxAge != nil))
        isPrivate = control.isPrivate
        noStore = control.noStore
        staleWhileRevalidate = Double(control.staleWhileRevalidate ?? 0)
        if let names = headers["vary"] {
            let requested = CacheEntryMetadata.lowercased(requestHeaders)
            for name in CacheControl.split(names).map({ $0.trimmingSpaces.lowercased() }) where !name.isEmpty {
                if name == "*" { variesOnEverything = true } else { vary[name] = requested[name] ?? "" }
            }
        }
    }

    /// The headers with lowercase names.
    static func lowercased(_ headers: [String: String]) -> [String: String] {
        Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// Whether a response with this metadata may be written to disk at all under
    /// `.respectHeaders`: not `no-store`, not `Vary: *`, and not a `Vary` when a request
    /// modifier may change the headers after they were compared (`modifiesRequests`).
    func isStorable(modifiesRequests: Bool) -> Bool {
        !noStore && !variesOnEverything && !(modifiesRequests && !vary.isEmpty) && !keptFromSharedCache
    }

    /// Whether a shared cache keeps it nowhere, memory included: `private` or `Vary: *`.
    var keptFromSharedCache: Bool { shared && (isPrivate || variesOnEverything) }

    /// How an entry with this metadata may be used at `now` by a request that sends `requestHeaders`.
    enum Use: Equatable {
        /// Fresh: served without asking the origin.
        case fresh
        /// Stale within `stale-while-revalidate`: served, and revalidated in the background.
        case staleWhileRevalidate
        /// Revalidated before use (stale, `no-cache`, or `must-revalidate` once stale).
        case revalidate
        /// Made for other request headers (`Vary`): not this request's response.
        case otherVariant
    }

    func use(at now: Date, requestHeaders: [String: String]) -> Use {
        if variesOnEverything { return .otherVariant }
        if !vary.isEmpty {
            let sent = CacheEntryMetadata.lowercased(requestHeaders)
            for (name, value) in vary where (sent[name] ?? "") != value { return .otherVariant }
        }
        if noCache { return .revalidate }
        guard let lifetime else { return .fresh }
        let age = currentAge(at: now)
        if age < lifetime { return .fresh }
        if !mustRevalidate, age < lifetime + staleWhileRevalidate { return .staleWhileRevalidate }
        return .revalidate
    }

    /// The entry's age at `now` (RFC 9111 §4.2.3).
    func currentAge(at now: Date) -> Double { initialAge + max(0, now.timeIntervalSince1970 - responseTime) }

    /// How many more seconds it is fresh at `now` (0 when stale or to be revalidated on each
    /// use); nil when the origin said nothing.
    func remainingLifetime(at now: Date) -> Double? {
        guard let lifetime else { return nil }
        return noCache ? 0 : max(0, lifetime - currentAge(at: now))
    }

    /// What a result made from this entry at `now` carries (`ImageResult.freshness`).
    func freshness(at now: Date) -> HTTPFreshness {
        var freshness = HTTPFreshness(date: now, lifetime: remainingLifetime(at: now), noStore: noStore || (shared && variesOnEverything),
                                      noCache: noCache)
        freshness.isPrivate = isPrivate
        freshness.etag = validators?.etag
        freshness.lastModified = validators?.lastModified
        return freshness
    }

    /// How long a decoded image made from this entry may stay in memory from `now`: nil for
    /// as long as the memory cache keeps it; zero when it must not be kept (`no-store`,
    /// `no-cache`, or stale).
    func memoryLifetime(at now: Date) -> Duration? {
        if noStore || noCache || keptFromSharedCache { return .zero }
        return remainingLifetime(at: now).map { Duration.milliseconds(Int64(min($0, 1e12) * 1000)) }
    }

    /// This entry after a 304 answered its revalidation at `now` (RFC 9111 §4.3.4): the 304's
    /// freshness headers replace the stored ones when it has any, its validators the stored
    /// ones when it sends them; the variant stays the one stored.
    func refreshed(by headers: [String: String], now: Date) -> CacheEntryMetadata {
        var updated = CacheEntryMetadata(headers: headers, requestHeaders: [:], now: now, shared: shared)
        updated.vary = vary
        updated.variesOnEverything = variesOnEverything
        if updated.validators == nil { updated.validators = validators }
        if headers["cache-control"] == nil, headers["expires"] == nil {
            updated.lifetime = lifetime
            updated.noCache = noCache
            updated.mustRevalidate = mustRevalidate
            updated.isPrivate = isPrivate
            updated.staleWhileRevalidate = staleWhileRevalidate
        }
        return updated
    }

    // MARK: - Stored form

    private static let header = "webimage-cache 2"

    /// One line per field, `name=value`; values never hold a line break (validators with one
    /// are dropped when read from the response, header values here are cleaned).
    var stored: Data {
        var lines = [CacheEntryMetadata.header]
        if let etag = validators?.etag { lines.append("etag=" + etag) }
        if let modified = validators?.lastModified { lines.append("last-modified=" + modified) }
        lines.append("time=\(responseTime)")
        lines.append("age=\(initialAge)")
        if let lifetime { lines.append("lifetime=\(lifetime)") }
        if noCache { lines.append("no-cache") }
        if mustRevalidate { lines.append("must-revalidate") }
        if noStore { lines.append("no-store") }
        if staleWhileRevalidate > 0 { lines.append("stale-while-revalidate=\(staleWhileRevalidate)") }
        if variesOnEverything { lines.append("vary-all") }
        if isPrivate { lines.append("private") }
        if shared { lines.append("shared") }
        for (name, value) in vary.sorted(by: { $0.key < $1.key }) {
            lines.append("vary=" + CacheEntryMetadata.clean(name) + ":" + CacheEntryMetadata.clean(value))
        }
        return Data(lines.joined(separator: "\n").utf8)
    }

    private static func clean(_ value: String) -> String {
        String(value.unicodeScalars.filter { $0 != "\n" && $0 != "\r" && $0 != "\0" })
    }

    /// The metadata stored in `data`: this form, or the validators-only form of earlier
    /// versions; nil for anything else (a damaged side file reads as no metadata). Read on its
    /// bytes, line by line (a disk hit reads it under `.respectHeaders`).
    init?(stored data: Data) {
        if data.starts(with: CacheEntryMetadata.legacyHeader) {
            guard let validators = CacheValidators(stored: data) else { return nil }
            self.validators = validators
            responseTime = 0
            initialAge = 0
            return
        }
        let bytes = [UInt8](data)
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)[...]
        guard let first = lines.popFirst(), first.elementsEqual(CacheEntryMetadata.header.utf8) else { return nil }
        var etag: String?, modified: String?, time: Double?, age: Double?
        responseTime = 0
        initialAge = 0
        for var line in lines {
            // A line ending "\r\n": the "\r" goes with it (a bare "\r" inside stays, and a
            // validator holding one is dropped).
            if line.last == 0x0D { line = line.dropLast() }
            let equals = line.firstIndex(of: 0x3D)
            let name = String(decoding: line[..<(equals ?? line.endIndex)], as: UTF8.self)
            let value = equals.map { String(decoding: line[line.index(after: $0)...], as: UTF8.self) } ?? ""
            switch name {
            case "etag": etag = value
            case "last-modified": modified = value
            case "time": time = Double(value)
            case "age": age = Double(value)
            case "lifetime": lifetime = Double(value).map { max(0, $0) }
            case "no-cache": noCache = true
            case "must-revalidate": mustRevalidate = true
            case "no-store": noStore = true
            case "stale-while-revalidate": staleWhileRevalidate = max(0, Double(value) ?? 0)
            case "vary-all": variesOnEverything = true
            case "private": isPrivate = true
            case "shared": shared = true
            case "vary":
                guard let colon = value.firstIndex(of: ":") else { return nil }
                vary[String(value[..<colon])] = String(value[value.index(after: colon)...])
            default: break
            }
        }
        guard let time, let age, time.isFinite, age.isFinite else { return nil }
        responseTime = time
        initialAge = max(0, age)
        validators = CacheValidators(etag: etag, lastModified: modified)
    }

    private static let legacyHeader = Data("webimage-validators\n".utf8)
}
