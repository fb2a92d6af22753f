import Foundation
import Testing
@testable import WebImage

/// `AddressPolicy.publicOnly`: the HTTP loader refuses to connect to loopback, private,
/// link-local and other non-public addresses, checked on the address libcurl connects to: after
/// name resolution and after a redirect, before anything is sent.
@Suite(.serialized) struct AddressPolicyTests {
    @Test func publicAndNonPublicAddresses() {
        for address in ["8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.1", "172.15.0.1", "172.32.0.1",
                        "192.167.1.1", "198.17.0.1", "2606:4700:4700::1111", "2a00:1450:4001::1", "::ffff:8.8.8.8", "64:ff9b::808:808"] {
            #expect(AddressPolicy.isPublic(address) == true, "\(address)")
        }
        for address in ["0.0.0.0", "0.1.2.3", "10.1.2.3", "100.64.0.1", "127.0.0.1", "127.255.255.254", "169.254.169.254",
                        "172.16.0.1", "172.31.255.255", "192.0.0.8", "192.0.2.1", "192.168.1.1", "198.18.0.1", "198.51.100.7",
                        "203.0.113.9", "224.0.0.1", "240.0.0.1", "255.255.255.255", "::", "::1", "fc00::1", "fd00:ec2::254",
                        "fe80::1", "ff02::1", "2001:db8::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1",
                        "2002:c0a8:0101::1", "100::1"] {
            #expect(AddressPolicy.isPublic(address) == false, "\(address)")
        }
        #expect(AddressPolicy.isPublic("localhost") == nil && AddressPolicy.isPublic("") == nil && AddressPolicy.isPublic("1.2.3") == nil)
    }

    /// IPv4-compatible (`::a.b.c.d`) and SIIT-translated (`::ffff:0:a.b.c.d`) forms are judged by
    /// the IPv4 address they carry (both were public before), as is the local-use NAT64 prefix.
    @Test func everyIPv6FormOfAnIPv4AddressIsJudgedByIt() {
        for address in ["::127.0.0.1", "::7f00:1", "::169.254.169.254", "::10.0.0.1", "::ffff:0:127.0.0.1", "::ffff:0:7f00:1",
                        "::ffff:0:169.254.169.254", "::ffff:0:192.168.1.1", "64:ff9b:1::808:808", "64:ff9b:1::a00:1"] {
            #expect(AddressPolicy.isPublic(address) == false, "\(address)")
        }
        for address in ["::8.8.8.8", "::ffff:0:8.8.8.8", "::ffff:0:1.1.1.1"] {
            #expect(AddressPolicy.isPublic(address) == true, "\(address)")
        }
    }

    @Test func networksAndWhatAPolicyAllows() throws {
        #expect(IPNetwork("10.0.0.0/8") == IPNetwork("10.9.9.9/8"), "the host bits are cleared")
        for bad in ["", "10.0.0.0/33", "::1/129", "10.0.0.0/x", "example.com", "10.0.0.0/"] { #expect(IPNetwork(bad) == nil, "\(bad)") }
        let policy = AddressPolicy.publicOnly(allowing: [try #require(IPNetwork("10.1.0.0/16")), try #require(IPNetwork("::1"))])
        #expect(policy.allows("10.1.2.3") && policy.allows("::1") && policy.allows("8.8.8.8") && policy.allows("::ffff:10.1.0.9"))
        #expect(!policy.allows("10.2.0.1") && !policy.allows("127.0.0.1") && !policy.allows("169.254.169.254") && !policy.allows("nonsense"))
        #expect(AddressPolicy.any.allows("127.0.0.1"))
    }

    func loader(_ policy: AddressPolicy) -> HTTPImageLoader {
        var configuration = HTTPImageLoader.Configuration()
        configuration.addressPolicy = policy
        return HTTPImageLoader(configuration: configuration)
    }

    @Test func aLoopbackServerIsRefusedBeforeAnythingIsSent() async throws {
        let server = TestHTTPServer()
        try await server.start()
        server.route("/a.png", .respond(body: ManagerHarness.png))
        let url = server.url("/a.png")
        await #expect(throws: ImageError.addressNotAllowed(url: url, address: "127.0.0.1")) {
            try await loader(.publicOnly()).data(for: ImageLoaderRequest(url: url))
        }
        // A name that resolves to loopback is refused the same way.
        let named = try #require(URL(string: "http://localhost:\(server.port)/a.png"))
        do {
            _ = try await loader(.publicOnly()).data(for: ImageLoaderRequest(url: named))
            Issue.record("localhost was reached")
        } catch let ImageError.addressNotAllowed(refusedURL, address) {
            #expect(refusedURL == named && ["127.0.0.1", "::1"].contains(address))
        }
        #expect(server.connectionCount == 0, "no connection was made")
        // Allowed by network, and under the default policy.
        let allowed = loader(.publicOnly(allowing: [try #require(IPNetwork("127.0.0.0/8"))]))
        #expect(try await allowed.data(for: ImageLoaderRequest(url: url)).0 == ManagerHarness.png)
        #expect(try await loader(.any).data(for: ImageLoaderRequest(url: url)).0 == ManagerHarness.png)
        await server.stop()
    }

    @Test func aRedirectToANonPublicAddressIsRefused() async throws {
        let inside = TestHTTPServer()
        try await inside.start(host: "127.0.0.2")
        inside.route("/secret.png", .respond(body: ManagerHarness.png))
        let front = TestHTTPServer()
        try await front.start()
        front.route("/a.png", .redirect(to: inside.url("/secret.png").absoluteString))
        let url = front.url("/a.png")
        // The first server is allowed; the redirect leads to another loopback address that is not.
        let guarded = loader(.publicOnly(allowing: [try #require(IPNetwork("127.0.0.1"))]))
        await #expect(throws: ImageError.addressNotAllowed(url: url, address: "127.0.0.2")) {
            try await guarded.data(for: ImageLoaderRequest(url: url))
        }
        #expect(front.requestCount("/a.png") == 1)
        #expect(inside.connectionCount == 0, "the redirect's target was never contacted")
        await front.stop()
        await inside.stop()
    }

    /// Through the manager the refusal is a permanent failure: the URL is blacklisted.
    @Test func theManagerBlacklistsARefusedURL() async throws {
        var configuration = HTTPImageLoader.Configuration()
        configuration.addressPolicy = .publicOnly()
        let h = try await ManagerHarness(loaderConfiguration: configuration)
        h.server.route("/a.png", .respond(body: ManagerHarness.png))
        let url = h.url("/a.png")
        await #expect(throws: ImageError.addressNotAllowed(url: url, address: "127.0.0.1")) { try await h.manager.image(for: url) }
        #expect(await h.manager.isFailedURL(url))
        #expect(h.server.connectionCount == 0)
        await h.finish()
    }
}
