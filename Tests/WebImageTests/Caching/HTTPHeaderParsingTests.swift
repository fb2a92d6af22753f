import Foundation
import Testing
@testable import WebImage

/// The parts of RFC 9111 read from headers: Cache-Control, HTTP dates, and an entry's freshness.
@Suite struct HTTPHeaderParsingTests {
    @Test func cacheControlDirectives() {
        let c = CacheControl("public, Max-Age=60, no-cache, MUST-REVALIDATE, stale-while-revalidate=30, no-store, x-unknown=\"a,b\"")
        #expect(c.maxAge == 60 && c.noCache && c.mustRevalidate && c.staleWhileRevalidate == 30 && c.noStore)
        #expect(CacheControl(nil) == CacheControl(""))
        #expect(CacheControl("private").maxAge == nil)
    }

    @Test func malformedCacheControlIsReadSafely() {
        #expect(CacheControl("max-age=\"60\"").maxAge == 60, "quoted: accepted")
        #expect(CacheControl("max-age=-5").maxAge == 0, "negative: stale")
        #expect(CacheControl("max-age=abc").maxAge == 0, "not a number: stale")
        #expect(CacheControl("max-age").maxAge == 0, "no argument: stale")
        #expect(CacheControl("max-age=99999999999999999999999").maxAge == CacheControl.largestDelta, "huge: 2^31")
        #expect(CacheControl("max-age=60, max-age=5").maxAge == 5, "duplicated: the most restrictive")
        #expect(CacheControl("max-age=5, max-age=60").maxAge == 5)
        #expect(CacheControl("stale-while-revalidate=x").staleWhileRevalidate == 0)
        #expect(CacheControl(",,, ,=,==,max-age=7,").maxAge == 7, "empty and odd pieces are skipped")
        #expect(CacheControl("x=\"no-store, max-age=1\"") == CacheControl(""), "commas inside quotes do not split")
    }

    @Test func httpDatesInTheirThreeForms() throws {
        let expected = Date(timeIntervalSince1970: 784_111_777)   // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 8:9:7 GMT") == Date(timeIntervalSince1970: 784_111_777 - 40 * 60 - 30), "one-digit clock parts")
        for bad in ["0", "-1", "", "yesterday", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
                    "Sun, 06 Foo 1994 08:49:37 GMT", String(repeating: "9", count: 100),
                    // A clock of two or four parts, an empty part, a part of five digits or a letter.
                    "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Nov 1994 08:49:37:01 GMT", "Sun, 06 Nov 1994 08::37 GMT",
                    "Sun, 06 Nov 1994 08:49: GMT", "Sun, 06 Nov 1994 :49:37 GMT", "Sun, 06 Nov 1994 08:49:00037 GMT",
                    "Sun, 06 Nov 1994 08:4x:37 GMT"] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
        #expect(HTTPDate.format(expected) == "Sun, 06 Nov 1994 08:49:37 GMT")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(HTTPDate.parse(HTTPDate.format(now)) == now)
    }

    @Test func freshnessFromMaxAgeExpiresDateAndAge() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let date = HTTPDate.format(now)
        var m = CacheEntryMetadata(headers: ["cache-control": "max-age=60", "age": "20", "date": date], requestHeaders: [:], now: now)
        #expect(m.lifetime == 60 && m.initialAge == 20)
        #expect(m.use(at: now.addingTimeInterval(39), requestHeaders: [:]) == .fresh)
        #expect(m.use(at: now.addingTimeInterval(40), requestHeaders: [:]) == .revalidate)
        // A Date 30 s in the past: the response was 30 s old on arrival.
        m = CacheEntryMetadata(headers: ["cache-control": "max-age=60", "date": HTTPDate.format(now.addingTimeInterval(-30))],
                               requestHeaders: [:], now: now)
        #expect(m.initialAge == 30)
        // Expires counts from Date; max-age wins over Expires.
        m = CacheEntryMetadata(headers: ["expires": HTTPDate.format(now.addingTimeInterval(100)), "date": date], requestHeaders: [:], now: now)
        #expect(m.lifetime == 100)
        m = CacheEntryMetadata(headers: ["expires": HTTPDate.format(now.addingTimeInterval(100)), "cache-control": "max-age=5"],
                               requestHeaders: [:], now: now)
        #expect(m.lifetime == 5)
        // An Expires that is not a date is already past.
        m = CacheEntryMetadata(headers: ["expires": "0"], requestHeaders: [:], now: now)
        #expect(m.lifetime == 0 && m.use(at: now, requestHeaders: [:]) == .revalidate)
        // Heuristic: a tenth of the time since Last-Modified, at most a week.
        m = CacheEntryMetadata(headers: ["last-modified": HTTPDate.format(now.addingTimeInterval(-1000)), "date": date],
                               requestHeaders: [:], now: now)
        #expect(m.lifetime == 100)
        m = CacheEntryMetadata(headers: ["last-modified": "Sun, 06 Nov 1994 08:49:37 GMT"], requestHeaders: [:], now: now)
        #expect(m.lifetime == CacheEntryMetadata.heuristicLimit)
        // Nothing said: fresh (the cache's own limits decide).
        m = CacheEntryMetadata(headers: [:], requestHeaders: [:], now: now)
        #expect(m.lifetime == nil && m.use(at: now.addingTimeInterval(1e9), requestHeaders: [:]) == .fresh)
    }

    @Test func staleWhileRevalidateNoCacheAndMustRevalidate() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let swr = CacheEntryMetadata(headers: ["cache-control": "max-age=10, stale-while-revalidate=50"], requestHeaders: [:], now: now)
        #expect(swr.use(at: now.addingTimeInterval(5), requestHeaders: [:]) == .fresh)
        #expect(swr.use(at: now.addingTimeInterval(30), requestHeaders: [:]) == .staleWhileRevalidate)
        #expect(swr.use(at: now.addingTimeInterval(61), requestHeaders: [:]) == .revalidate)
        let strict = CacheEntryMetadata(headers: ["cache-control": "max-age=10, stale-while-revalidate=50, must-revalidate"],
                                        requestHeaders: [:], now: now)
        #expect(strict.use(at: now.addingTimeInterval(30), requestHeaders: [:]) == .revalidate)
        let noCache = CacheEntryMetadata(headers: ["cache-control": "no-cache, max-age=600"], requestHeaders: [:], now: now)
        #expect(noCache.use(at: now, requestHeaders: [:]) == .revalidate)
    }

    @Test func varyComparesTheRequestHeaders() {
        let now = Date()
        let m = CacheEntryMetadata(headers: ["vary": "Accept, Accept-Encoding"], requestHeaders: ["Accept": "image/webp"], now: now)
        #expect(m.vary == ["accept": "image/webp", "accept-encoding": ""])
        #expect(m.use(at: now, requestHeaders: ["accept": "image/webp"]) == .fresh)
        #expect(m.use(at: now, requestHeaders: ["ACCEPT": "image/webp"]) == .fresh)
        #expect(m.use(at: now, requestHeaders: ["accept": "image/png"]) == .otherVariant)
        #expect(m.isStorable(modifiesRequests: false) && !m.isStorable(modifiesRequests: true))
        let all = CacheEntryMetadata(headers: ["vary": "*"], requestHeaders: [:], now: now)
        #expect(!all.isStorable(modifiesRequests: false) && all.use(at: now, requestHeaders: [:]) == .otherVariant)
    }

    @Test func storedFormRoundTripsAndOlderFormsRead() throws {
        let now = Date(timeIntervalSince1970: 1_234_567)
        let m = CacheEntryMetadata(headers: ["cache-control": "max-age=60, no-cache, must-revalidate, stale-while-revalidate=9",
                                             "etag": "\"x\"", "last-modified": "Sun, 06 Nov 1994 08:49:37 GMT", "age": "3",
                                             "vary": "accept"],
                                   requestHeaders: ["accept": "image/*"], now: now)
        #expect(CacheEntryMetadata(stored: m.stored) == m)
        let legacy = try #require(CacheEntryMetadata(stored: Data("webimage-validators\n\"v1\"\n".utf8)))
        #expect(legacy.validators?.etag == "\"v1\"" && legacy.lifetime == nil)
        #expect(CacheEntryMetadata(stored: Data("garbage".utf8)) == nil)
        #expect(CacheEntryMetadata(stored: Data("webimage-cache 2\nlifetime=5".utf8)) == nil, "no time: unreadable")
        // A planted line break in a validator never reaches a request.
        let planted = CacheEntryMetadata(stored: Data("webimage-cache 2\netag=\"a\"\rX-Injected: 1\ntime=1\nage=0".utf8))
        #expect(planted != nil && planted?.validators == nil)
    }

    @Test func aNotModifiedResponseRefreshesTheEntry() {
        let then = Date(timeIntervalSince1970: 1_000_000)
        let m = CacheEntryMetadata(headers: ["cache-control": "max-age=60", "etag": "\"v1\"", "vary": "accept"],
                                   requestHeaders: ["accept": "a"], now: then)
        let later = then.addingTimeInterval(100)
        #expect(m.use(at: later, requestHeaders: ["accept": "a"]) == .revalidate)
        let kept = m.refreshed(by: [:], now: later)
        #expect(kept.lifetime == 60 && kept.validators?.etag == "\"v1\"" && kept.vary == ["accept": "a"])
        #expect(kept.use(at: later.addingTimeInterval(30), requestHeaders: ["accept": "a"]) == .fresh)
        let changed = m.refreshed(by: ["cache-control": "max-age=5", "etag": "\"v2\""], now: later)
        #expect(changed.lifetime == 5 && changed.validators?.etag == "\"v2\"")
    }
}
