import Foundation
import Testing
@testable import WebImage

/// The failed-URL blacklist: which failures put a URL on it (SDWebImage's rule) and how it comes off.
@Suite struct FailedURLTests {
    func failure(_ manager: ImageManager, _ url: URL, options: ImageOptions = []) async -> (any Error)? {
        do {
            _ = try await manager.image(for: url, options: options)
            return nil
        } catch { return error }
    }

    @Test func aNotFoundURLIsBlacklistedUntilRetriedOrRemoved() async throws {
        let h = try await ManagerHarness()
        let url = h.url("/missing.png")
        let first = await failure(h.manager, url)
        #expect(first as? ImageError == .badStatusCode(404, url: url))
        #expect(await failure(h.manager, url) as? ImageError == .blacklistedURL(url))
        #expect(h.server.requestCount("/missing.png") == 1)
        // retryFailed tries again; once the URL works it comes off the list.
        h.server.route("/missing.png", .respond(body: ManagerHarness.png))
        _ = try await h.manager.image(for: url, options: .retryFailed)
        #expect(await h.manager.isFailedURL(url) == false)
        #expect(h.server.requestCount("/missing.png") == 2)
        // removeFailedURL and removeAllFailedURLs.
        h.server.route("/gone.png", .respond(status: 410, contentType: "text/html", body: Data("gone".utf8)))
        _ = await failure(h.manager, h.url("/gone.png"))
        #expect(await h.manager.isFailedURL(h.url("/gone.png")))
        await h.manager.removeFailedURL(h.url("/gone.png"))
        #expect(await failure(h.manager, h.url("/gone.png")) as? ImageError == .badStatusCode(410, url: h.url("/gone.png")))
        await h.manager.removeAllFailedURLs()
        #expect(await h.manager.isFailedURL(h.url("/gone.png")) == false)
        await h.finish()
    }

    @Test func transientFailuresAreNotBlacklisted() async throws {
        var configuration = HTTPImageLoader.Configuration()
        configuration.timeout = .milliseconds(300)
        let h = try await ManagerHarness(loaderConfiguration: configuration)
        h.server.route("/error.png", .respond(status: 500, contentType: "text/html", body: Data("<h1>oops</h1>".utf8)))
        h.server.route("/slow.png", .delayed(.seconds(2), .respond(body: ManagerHarness.png)))
        h.server.route("/busy.png", .respond(status: 429, contentType: "text/plain", body: Data("later".utf8)))
        let refused = URL(string: "http://127.0.0.1:1/a.png")!
        for url in [h.url("/error.png"), h.url("/slow.png"), h.url("/busy.png"), refused] {
            let error = await failure(h.manager, url)
            #expect(error != nil)
            #expect(await h.manager.isFailedURL(url) == false, "\(url) blacklisted after \(String(describing: error))")
        }
        // A cancelled load does not blacklist either.
        h.server.route("/stall.png", .stallAfter(bytes: 10, body: ManagerHarness.png))
        let manager = h.manager, stall = h.url("/stall.png")
        let task = Task { try await manager.image(for: stall) }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        _ = await task.result
        #expect(await h.manager.isFailedURL(stall) == false)
        await h.finish()
    }

    @Test func undecodableDataAndARedirectToAPageAreBlacklisted() async throws {
        let h = try await ManagerHarness()
        h.server.route("/corrupt.png", .respond(body: ManagerHarness.png.prefix(40)))
        h.server.route("/redirect.png", .redirect(to: "/page"))
        h.server.route("/page", .respond(contentType: "text/html", body: Data("<html><body>not an image</body></html>".utf8)))
        h.server.route("/empty.png", .respond(body: Data()))
        let corrupt = await failure(h.manager, h.url("/corrupt.png"))
        guard case .undecodable(.png, _) = (corrupt as? ImageError)?.decodeFailure else { Issue.record("\(String(describing: corrupt))"); return }
        #expect((await failure(h.manager, h.url("/redirect.png")) as? ImageError)?.decodeFailure == .unsupportedFormat(.unknown))
        #expect((await failure(h.manager, h.url("/empty.png")) as? ImageError)?.decodeFailure == .emptyData)
        for path in ["/corrupt.png", "/redirect.png", "/empty.png"] {
            #expect(await h.manager.isFailedURL(h.url(path)), "\(path)")
        }
        await h.finish()
    }

    @Test func theBlockHookReplacesTheRule() async throws {
        var configuration = ImageManager.Configuration()
        configuration.shouldBlockFailedURL = { _, error in (error as? ImageError).map { if case .badStatusCode(500, _) = $0 { true } else { false } } ?? false }
        let h = try await ManagerHarness(configuration: configuration)
        h.server.route("/error.png", .respond(status: 500, contentType: "text/html", body: Data("x".utf8)))
        _ = await failure(h.manager, h.url("/error.png"))
        _ = await failure(h.manager, h.url("/missing.png"))
        #expect(await h.manager.isFailedURL(h.url("/error.png")))
        #expect(await h.manager.isFailedURL(h.url("/missing.png")) == false)
        await h.finish()
    }
}

/// Transfers that go wrong reach every caller of the shared work as the same typed error.
@Suite struct SharedFailureTests {
    @Test func aResetMidBodyFailsEveryCallerAndDoesNotBlacklist() async throws {
        let h = try await ManagerHarness()
        h.server.route("/reset.jpg", .delayed(.milliseconds(100), .resetAfter(bytes: 2000, body: ManagerHarness.jpeg)))
        let manager = h.manager, url = h.url("/reset.jpg")
        let errors = await withTaskGroup(of: ImageError?.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    do { _ = try await manager.image(for: url); return nil } catch { return error as? ImageError }
                }
            }
            return await group.reduce(into: [ImageError?]()) { $0.append($1) }
        }
        #expect(errors.count == 5)
        for error in errors {
            guard case .network(let failed, _) = error else { Issue.record("\(String(describing: error))"); continue }
            #expect(failed == url)
        }
        #expect(h.server.requestCount("/reset.jpg") == 1)
        #expect(await h.manager.isFailedURL(url) == false)
        await h.finish()
    }

    @Test func hugeDimensionsFailBeforeAllocatingAndBlacklist() async throws {
        let h = try await ManagerHarness()
        h.server.route("/huge.png", .respond(body: Fixtures.pngHeader(width: 100_000, height: 100_000)))
        do {
            _ = try await h.manager.image(for: h.url("/huge.png"))
            Issue.record("decoded a 10-gigapixel image")
        } catch let error as ImageError {
            guard case .tooLarge(let width, let height, _) = error.decodeFailure else { Issue.record("\(error)"); return }
            #expect(width == 100_000 && height == 100_000)
        }
        #expect(await h.manager.isFailedURL(h.url("/huge.png")))
        // scaleDownLargeImages bounds the output, not the input: the pixel limit still applies.
        await #expect(throws: ImageError.self) {
            _ = try await h.manager.image(for: h.url("/huge.png"), options: [.retryFailed, .scaleDownLargeImages])
        }
        await h.finish()
    }

    @Test func aLyingContentLengthIsANetworkError() async throws {
        let h = try await ManagerHarness()
        h.server.route("/short.png", .lyingLength(claimed: ManagerHarness.png.count + 500, body: ManagerHarness.png))
        do {
            _ = try await h.manager.image(for: h.url("/short.png"))
            Issue.record("loaded a short body")
        } catch let error as ImageError {
            guard case .network = error else { Issue.record("\(error)"); return }
        }
        #expect(await h.manager.isFailedURL(h.url("/short.png")) == false)
        await h.finish()
    }
}
