import Foundation
import Testing
@testable import WebImage

/// `HTTPCachePolicy.respectHeaders` against a real nginx that sends caching headers, ETags and
/// 304s (scripts/nginx-integration.sh starts it; skipped otherwise).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["WEBIMAGE_NGINX_HTTP"] != nil, "run scripts/nginx-integration.sh"))
struct HTTPCachePolicyNginxTests {
    let http = ProcessInfo.processInfo.environment["WEBIMAGE_NGINX_HTTP"] ?? ""

    /// The access-log statuses of the requests whose URI contains `marker`.
    func statuses(_ marker: String) throws -> [String] {
        try String(contentsOfFile: ProcessInfo.processInfo.environment["WEBIMAGE_NGINX_LOG"]!, encoding: .utf8)
            .split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            .filter { $0.last?.contains(marker) == true }.map { $0[3] }
    }

    func manager(_ clock: MovableDate, in directory: TemporaryDirectory) -> (ImageManager, ImageCache) {
        var configuration = ImageManager.Configuration()
        configuration.currentDate = clock.source
        configuration.rateLimiter = nil
        let cache = ImageCache(namespace: "nginx", directory: directory.url, config: .init(cleanupInterval: nil))
        return (ImageManager(cache: cache, loaders: ImageLoaders([HTTPImageLoader()]), configuration: configuration), cache)
    }

    @Test func freshThenRevalidatedWithNginxs304() async throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let clock = MovableDate()
        let (manager, cache) = manager(clock, in: directory)
        let url = URL(string: "\(http)/fresh60/badge-alpha.png?policy=\(UUID().uuidString.prefix(8))")!
        _ = try await manager.result(for: url, options: .waitStoreCache)
        await cache.clear(.memory)
        clock.advance(by: 30)
        #expect(try await manager.result(for: url).cacheType == .disk)
        await cache.clear(.memory)
        clock.advance(by: 31)
        #expect(try await manager.result(for: url, options: .waitStoreCache).cacheType == .disk, "304: the stored body")
        try await Task.sleep(for: .milliseconds(200))   // nginx writes its log after the response
        #expect(try statuses(url.query!) == ["200", "304"])
    }

    @Test func noStoreAndVaryFromNginx() async throws {
        let directory = TemporaryDirectory(); defer { directory.remove() }
        let (manager, cache) = manager(MovableDate(), in: directory)
        let marker = UUID().uuidString.prefix(8)
        _ = try await manager.result(for: URL(string: "\(http)/nostore/badge-alpha.png?ns=\(marker)")!, options: .waitStoreCache)
        await manager.waitForPendingStores()
        #expect(await cache.disk.count() == 0, "no-store: nothing on disk")
        let vary = URL(string: "\(http)/vary/badge-alpha.png?vary=\(marker)")!
        _ = try await manager.result(for: vary, options: .waitStoreCache)
        await cache.clear(.memory)
        #expect(try await manager.result(for: vary).cacheType == .disk, "the same Accept: the stored variant")
    }
}
