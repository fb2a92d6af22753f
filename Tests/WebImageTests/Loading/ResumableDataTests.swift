import Foundation
import Testing
@testable import WebImage

/// Resumable downloads (Nuke's `ResumableData`): what arrived before a reset or a cancellation
/// is kept, and the next transfer of the URL asks only for the rest.
@Suite(.serialized) struct ResumableDataTests {
    static let body = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
    static let etag = "\"v1\""

    func withLoader(_ configuration: HTTPImageLoader.Configuration = .init(),
                    _ body: (TestHTTPServer, HTTPImageLoader) async throws -> Void) async throws {
        let server = TestHTTPServer()
        try await server.start()
        let loader = HTTPImageLoader(configuration: configuration)
        do { try await body(server, loader) } catch { await server.stop(); throw error }
        await server.stop()
    }

    func rangeHeader(_ server: TestHTTPServer, _ path: String) -> String? {
        server.headers(of: path).first { $0.0.lowercased() == "range" }?.1
    }

    @Test func aResetTransferIsResumedWithOnlyTheRest() async throws {
        try await withLoader { server, loader in
            server.route("/big", .sequence([.ranged(etag: Self.etag, body: Self.body, resetAfter: 100_000),
                                            .ranged(etag: Self.etag, body: Self.body)]))
            let request = ImageLoaderRequest(url: server.url("/big"))
            await #expect(throws: ImageError.self) { try await loader.data(for: request) }
            let kept = loader.resumableDataBytes
            #expect(kept > 0 && kept <= 100_000, "kept \(kept) bytes")
            let before = server.bodyBytesSent
            let (data, response) = try await loader.data(for: request)
            #expect(data == Self.body, "the kept part and the rest make the body")
            #expect(response.statusCode == 200 && response.expectedContentLength == Int64(Self.body.count))
            #expect(server.bodyBytesSent - before == Self.body.count - kept, "only the rest was sent")
            #expect(rangeHeader(server, "/big") == "bytes=\(kept)-")
            #expect(loader.resumableDataBytes == 0)
        }
    }

    /// A resumed transfer that fails before any of the rest arrives (an error status, a
    /// connection dropped before the response) keeps the body it had for the next try.
    @Test func aFailureBeforeTheRestKeepsTheBody() async throws {
        try await withLoader { server, loader in
            server.route("/big", .sequence([.ranged(etag: Self.etag, body: Self.body, resetAfter: 100_000),
                                            .respond(status: 503, contentType: "text/plain", body: Data("busy".utf8)),
                                            .dropConnection,
                                            .ranged(etag: Self.etag, body: Self.body)]))
            let request = ImageLoaderRequest(url: server.url("/big"))
            await #expect(throws: ImageError.self) { try await loader.data(for: request) }
            let kept = loader.resumableDataBytes
            #expect(kept > 0 && kept <= 100_000, "kept \(kept) bytes")
            await #expect(throws: ImageError.self) { try await loader.data(for: request) }
            #expect(loader.resumableDataBytes == kept, "a 503 keeps the body")
            await #expect(throws: ImageError.self) { try await loader.data(for: request) }
            #expect(loader.resumableDataBytes == kept, "a connection dropped before the response keeps the body")
            let (data, _) = try await loader.data(for: request)
            #expect(data == Self.body)
            #expect(rangeHeader(server, "/big") == "bytes=\(kept)-")
            #expect(server.requestCount("/big") == 4)
        }
    }

    @Test func aChangedImageStartsAgain() async throws {
        let changed = Data(Self.body.reversed())
        try await withLoader { server, loader in
            server.route("/big", .sequence([.ranged(etag: Self.etag, body: Self.body, resetAfter: 100_000),
                                            .ranged(etag: "\"v2\"", body: changed)]))
            let request = ImageLoaderRequest(url: server.url("/big"))
            await #expect(throws: ImageError.self) { try await loader.data(for: request) }
            let (data, _) = try await loader.data(for: request)
            #expect(data == changed, "If-Range did not match: the whole new body")
            #expect(rangeHeader(server, "/big") != nil)
        }
    }

    @Test func aCancelledTransferIsResumedToo() async throws {
        try await withLoader { server, loader in
            server.route("/big", .sequence([.headers([("accept-ranges", "bytes"), ("etag", Self.etag)],
                                                     then: .stallAfter(bytes: 120_000, body: Self.body)),
                                            .ranged(etag: Self.etag, body: Self.body)]))
            let request = ImageLoaderRequest(url: server.url("/big"))
            let task = Task { try await loader.data(for: request) }
            for _ in 0..<400 where server.bodyBytesSent < 120_000 { try await Task.sleep(for: .milliseconds(5)) }
            try await Task.sleep(for: .milliseconds(100))
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(loader.resumableDataBytes == 120_000)
            #expect(try await loader.data(for: request).0 == Self.body)
            #expect(rangeHeader(server, "/big") == "bytes=120000-")
        }
    }

    @Test func nothingIsKeptWithoutRangesOrWhenTurnedOff() async throws {
        var off = HTTPImageLoader.Configuration()
        off.resumableDataLimit = 0
        for (configuration, route) in [(HTTPImageLoader.Configuration(), TestHTTPServer.Route.resetAfter(bytes: 100_000, body: Self.body)),
                                       (off, .ranged(etag: Self.etag, body: Self.body, resetAfter: 100_000))] {
            try await withLoader(configuration) { server, loader in
                server.route("/big", route)
                await #expect(throws: ImageError.self) { try await loader.data(for: ImageLoaderRequest(url: server.url("/big"))) }
                #expect(loader.resumableDataBytes == 0)
            }
        }
    }

    /// Through the manager with a retry: the second attempt continues the first one's body.
    @Test func aRetriedLoadContinuesTheBodyItHad() async throws {
        let h = try await ManagerHarness()
        let png = ManagerHarness.jpeg
        h.server.route("/photo.jpg", .sequence([.ranged(etag: Self.etag, body: png, resetAfter: png.count / 2),
                                                .ranged(etag: Self.etag, body: png)]))
        var context = ImageContext()
        context.retryStrategy = RetryStrategy(maxAttempts: 2, backoff: .fixed(.seconds(1)), clock: TestClock())
        let before = h.server.bodyBytesSent
        let image = try await h.manager.image(for: h.url("/photo.jpg"), context: context)
        #expect(image.bitmap.width == 640)
        #expect(h.server.requestCount("/photo.jpg") == 2)
        #expect(h.server.bodyBytesSent - before == png.count, "half, then the other half: the body crossed the wire once")
        await h.finish()
    }

    @Test func theStoreKeepsTheNewestWithinItsLimit() {
        let store = ResumableDataStore(limit: 250)
        store.store(.init(data: Data(count: 100), validator: "a"), for: "u1")
        store.store(.init(data: Data(count: 100), validator: "b"), for: "u2")
        store.store(.init(data: Data(count: 100), validator: "c"), for: "u3")   // u1 goes
        #expect(store.bytes == 200 && store.take("u1") == nil)
        store.store(.init(data: Data(count: 300), validator: "d"), for: "u4")   // larger than the limit: not kept
        #expect(store.take("u4") == nil)
        #expect(store.take("u2")?.validator == "b" && store.take("u2") == nil && store.bytes == 100)
        #expect(ResumableDataStore.contentRange("bytes 100-299/300")! == (100, 300))
        #expect(ResumableDataStore.contentRange("bytes 5-9/*")! == (5, nil))
        #expect(ResumableDataStore.contentRange("items 1-2/3") == nil)
        let weak = ImageLoaderResponse(statusCode: 200, headers: ["accept-ranges": "bytes", "etag": "W/\"x\""], expectedContentLength: nil,
                                       url: URL(string: "http://a/b")!)
        #expect(ResumableDataStore.validator(of: weak) == nil, "If-Range needs a strong ETag")
    }
}
