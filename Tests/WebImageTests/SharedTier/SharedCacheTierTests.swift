import Foundation
import Testing
@testable import WebImage
@testable import WebImageMemcached

/// The shared tier against real memcached nodes: machines share images, a burst reaches the
/// origin once for the whole fleet, and faults (a dead node, corrupt bytes, an entry too large,
/// no memcached at all) are misses, never errors.
@Suite(.serialized) struct SharedCacheTierTests {
    static let png = ManagerHarness.png

    @Test func aSecondMachineLoadsFromTheTierWithoutTheOrigin() async throws {
        let fleet = try await Fleet(machines: 2)
        fleet.origin.route("/a.png", .respond(body: Self.png))
        let (a, b) = (fleet.machines[0], fleet.machines[1])
        let first = try await a.manager.result(for: fleet.url("/a.png"))
        #expect(first.cacheType == .none)
        await a.manager.waitForPendingStores()
        let second = try await b.manager.result(for: fleet.url("/a.png"))
        #expect(fleet.origin.requestCount("/a.png") == 1, "the second machine found it in the tier")
        #expect(second.cacheType == .disk && second.data == Self.png)
        #expect(second.image.bitmap == first.image.bitmap)
        #expect(b.tier.statistics.hits == 1)
        // The tier hit went into the second machine's own caches.
        #expect(try await b.manager.result(for: fleet.url("/a.png")).cacheType == .memory)
        #expect(await b.cache.base.containsImage(forKey: fleet.url("/a.png").absoluteString, in: .disk) == .disk)
        #expect(fleet.warnings.warnings.isEmpty)
        await fleet.finish()
    }

    @Test func aBurstForANewImageReachesTheOriginOnceForTheFleet() async throws {
        let fleet = try await Fleet(machines: 3)
        fleet.origin.route("/new.png", .delayed(.milliseconds(300), .respond(body: Self.png)))
        let url = fleet.url("/new.png")
        let widths = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<200 {
                let manager = fleet.machines[index % 3].manager
                group.addTask { try await manager.image(for: url).width }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(widths == Array(repeating: 64, count: 200))
        #expect(fleet.origin.requestCount("/new.png") == 1, "one lease holder fetched; the others waited for its entry")
        let waits = fleet.machines.map(\.tier.statistics.leaseWaits).reduce(0, +)
        #expect(waits == 2, "each of the two other machines waited once (its own callers share its load)")
        await fleet.finish()
    }

    @Test func aDeadNodeMakesMissesAndTheOtherNodesStillHit() async throws {
        let fleet = try await Fleet(machines: 2)
        let (a, b) = (fleet.machines[0], fleet.machines[1])
        let paths = (0..<30).map { "/img\($0).png" }
        for path in paths { fleet.origin.route(path, .respond(body: Self.png)) }
        for path in paths { _ = try await a.manager.image(for: fleet.url(path)) }
        await a.manager.waitForPendingStores()
        var onDeadNode = 0
        for path in paths where await a.tier.server(forKey: fleet.url(path).absoluteString) == fleet.nodes.name(1) { onDeadNode += 1 }
        #expect(onDeadNode > 0 && onDeadNode < 30, "the keys are spread over the nodes")
        fleet.nodes.kill(1)
        for path in paths {
            #expect(try await b.manager.image(for: fleet.url(path)).width == 64, "no error reaches a caller")
        }
        let fetched = paths.map { fleet.origin.requestCount($0) - 1 }.reduce(0, +)
        #expect(fetched == onDeadNode, "only the dead node's keys went back to the origin")
        #expect(b.tier.statistics.hits == 30 - onDeadNode)
        #expect(b.tier.statistics.errors >= 1)
        #expect(fleet.warnings.warnings.count == 1, "one warning for the machine that met the dead node: \(fleet.warnings.warnings)")

        // Restarted (empty), the node is used again once the retry delay has passed.
        try fleet.nodes.start(1)
        try await Task.sleep(for: .milliseconds(2_200))
        let fresh = (0..<30).map { "/fresh\($0).png" }
        for path in fresh { fleet.origin.route(path, .respond(body: Self.png)) }
        for path in fresh { _ = try await a.manager.image(for: fleet.url(path)) }
        await a.manager.waitForPendingStores()
        let restarted = try SharedCacheTier(.init(servers: [fleet.nodes.servers[1]], namespace: "test"))
        var storedThere = 0
        for path in fresh where await restarted.data(forKey: fleet.url(path).absoluteString) != nil { storedThere += 1 }
        #expect(storedThere > 0, "the restarted node holds new entries")
        await fleet.finish()
    }

    @Test func corruptBytesAreAMissAndTheEntryIsReplaced() async throws {
        let fleet = try await Fleet(machines: 2)
        let (a, b) = (fleet.machines[0], fleet.machines[1])
        for (path, planted) in [("/junk.png", Data("not an entry".utf8)),
                                ("/undecodable.png", SharedCacheEntry(data: Data(repeating: 7, count: 100), validators: nil).encoded())] {
            fleet.origin.route(path, .respond(body: Self.png))
            let key = fleet.url(path).absoluteString
            #expect(await a.tier.put(planted, forKey: key))
            let result = try await b.manager.result(for: fleet.url(path))
            #expect(result.cacheType == .none, "a miss: loaded from the origin")
            #expect(fleet.origin.requestCount(path) == 1)
            await b.manager.waitForPendingStores()
            #expect(await a.tier.entry(forKey: key)?.data == Self.png, "the entry was replaced")
        }
        #expect(b.tier.statistics.corrupt == 2)
        await fleet.finish()
    }

    @Test func anEntryOverTheSizeLimitIsSkipped() async throws {
        let fleet = try await Fleet(machines: 2) { $0.maximumEntrySize = 100 }
        fleet.origin.route("/a.png", .respond(body: Self.png))
        let (a, b) = (fleet.machines[0], fleet.machines[1])
        _ = try await a.manager.image(for: fleet.url("/a.png"))
        await a.manager.waitForPendingStores()
        #expect(a.tier.statistics.skippedLarge == 1)
        _ = try await b.manager.image(for: fleet.url("/a.png"))
        #expect(fleet.origin.requestCount("/a.png") == 2, "not in the tier")
        #expect(a.tier.statistics.errors == 0 && b.tier.statistics.errors == 0)
        await fleet.finish()
    }

    @Test func withNoMemcachedRunningTheLibraryWorksAsWithoutTheTier() async throws {
        let fleet = try await Fleet(machines: 1, nodes: 1)
        fleet.nodes.stop()
        let machine = fleet.machines[0]
        for index in 0..<5 {
            fleet.origin.route("/\(index).png", .respond(body: Self.png))
            #expect(try await machine.manager.image(for: fleet.url("/\(index).png")).width == 64)
        }
        await machine.manager.waitForPendingStores()
        #expect(try await machine.manager.result(for: fleet.url("/0.png")).cacheType == .memory)
        #expect(machine.tier.statistics.errors > 0)
        #expect(fleet.warnings.warnings.count == 1, "\(fleet.warnings.warnings)")
        await fleet.finish()
    }

    /// A node that accepts connections and never answers costs one I/O timeout a connection,
    /// then its lookups are misses at once until the retry delay passes (before: a timeout on
    /// every lookup, about 0.3 s a miss).
    @Test(.timeLimit(.minutes(2))) func aNodeThatNeverAnswersIsMarkedFailed() async throws {
        let silent = Canary()
        try await silent.start()
        let configuration = SharedCacheConfiguration(servers: [.init(host: "127.0.0.1", port: silent.port)],
                                                     ioTimeout: .milliseconds(100), retryDelay: .seconds(5), connections: 2)
        let tier = try SharedCacheTier(configuration)
        let start = ContinuousClock.now
        for index in 0..<20 {
            #expect(await tier.data(forKey: "key \(index)") == nil)
            _ = await tier.takeLease(forKey: "key \(index)")
        }
        let took = ContinuousClock.now - start
        #expect(took < .milliseconds(900), "40 operations on a silent node took \(took)")
        #expect(silent.connections >= 1)
        await silent.stop()
    }

    @Test func serverListsKeysAndEntries() throws {
        #expect(try SharedCacheConfiguration.servers(from: "memcached://h1:11211,h2:11212,h3")
            == [.init(host: "h1", port: 11211), .init(host: "h2", port: 11212), .init(host: "h3", port: 11211)])
        for bad in ["h1:11211", "memcached://", "memcached://h1:x", "memcached://h1:0", "memcached://:11211", "memcached://a,,b"] {
            #expect(throws: SharedCacheError.self, "\(bad)") { try SharedCacheConfiguration.servers(from: bad) }
        }
        let tier = try SharedCacheTier(.init(servers: [.init(host: "127.0.0.1")], namespace: "ns"))
        let key = tier.tierKey(String(repeating: "https://example.com/a b\u{1}", count: 100))
        #expect(key.utf8.count <= 250 && !key.contains(" ") && key.hasPrefix("wi1:ns:"))
        #expect(tier.tierKey("a") != tier.tierKey("a", lease: true))
        #expect(throws: SharedCacheError.self) { try SharedCacheTier(.init(servers: [], namespace: "ns")) }
        #expect(throws: SharedCacheError.self) { try SharedCacheTier(.init(servers: [.init(host: "h")], namespace: "a b")) }

        let entry = SharedCacheEntry(data: Data([1, 2, 3]), validators: Data("etag".utf8))
        #expect(SharedCacheEntry(decoding: entry.encoded()) == entry)
        #expect(SharedCacheEntry(decoding: SharedCacheEntry(data: Data([9]), validators: nil).encoded())?.validators == nil)
        var otherVersion = entry.encoded()
        otherVersion[3] = 2
        #expect(SharedCacheEntry(decoding: otherVersion) == nil, "another layout is never read as valid")
        #expect(SharedCacheEntry(decoding: entry.encoded().prefix(10)) == nil, "truncated")
    }
}

/// `webimage get` and `prefetch` with `--shared-cache`: two "machines" (two local cache
/// namespaces) share one memcached node.
@Suite(.serialized) struct SharedCacheCLITests {
    @Test func getAndPrefetchShareTheTier() async throws {
        let nodes = try MemcachedNodes(count: 1)
        defer { nodes.stop() }
        let server = TestHTTPServer()
        try await server.start()
        server.route("/photo.jpg", .respond(contentType: "image/jpeg", body: ManagerHarness.jpeg))
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let environment = ["XDG_CACHE_HOME": directory.url.appendingPathComponent("xdg").path]
        let tier = "memcached://127.0.0.1:\(nodes.ports[0])"
        let url = server.url("/photo.jpg").absoluteString
        for (index, namespace) in ["machine1", "machine2"].enumerated() {
            let file = directory.url.appendingPathComponent("out\(index).jpg")
            let result = try CLIRunner.run(["get", url, "-o", file.path, "--namespace", namespace, "--shared-cache", tier], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try Data(contentsOf: file) == ManagerHarness.jpeg)
        }
        #expect(server.requestCount("/photo.jpg") == 1, "the second machine found it in the tier")
        let list = directory.url.appendingPathComponent("urls.txt")
        try Data((url + "\n").utf8).write(to: list)
        let prefetched = try CLIRunner.run(["prefetch", list.path, "--namespace", "machine3", "--shared-cache", tier], environment: environment)
        #expect(prefetched.status == 0, "\(prefetched.stderr)")
        #expect(server.requestCount("/photo.jpg") == 1)
        let refused = try CLIRunner.run(["get", url, "--shared-cache", "redis://x"], environment: environment)
        #expect(refused.status == 2 && refused.stderr.contains("--shared-cache"))
        await server.stop()
    }
}
