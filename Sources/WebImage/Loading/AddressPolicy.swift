import CCurl

/// Which addresses the HTTP loader may connect to: any (the default), or public addresses only,
/// with networks allowed by name. A service that loads URLs its users give (an image proxy, a
/// link preview) sets `.publicOnly()`, so that a URL cannot reach the machine itself, its
/// private network or a cloud metadata service (server-side request forgery).
///
/// The check is made on the address libcurl is about to connect to, after name resolution and
/// for every connection, those of redirects included: neither a DNS name that resolves to a
/// private address nor a redirect to one gets through. A refused address fails the load with
/// `ImageError.addressNotAllowed(url:address:)` before anything is sent. Through a proxy
/// (`HTTPImageLoader.Configuration.proxy`) the address checked is the proxy's: the proxy must
/// then keep its own rules.
public struct AddressPolicy: Sendable, Hashable {
    /// Whether only public addresses (and `allowedNetworks`) may be reached.
    public let publicOnly: Bool
    /// Networks reachable although they are not public (with `publicOnly`).
    public let allowedNetworks: [IPNetwork]

    /// Any address.
    public static let any = AddressPolicy(publicOnly: false, allowedNetworks: [])

    /// Public addresses only, and `networks`. Not public: "this network" (0.0.0.0/8), private
    /// (10/8, 172.16/12, 192.168/16, fc00::/7), shared (100.64/10), loopback (127/8, ::1),
    /// link-local (169.254/16, fe80::/10, where cloud metadata services answer), IETF and
    /// documentation ranges, benchmarking (198.18/15), multicast and reserved (224/3,
    /// ff00::/8); an IPv4-mapped, NAT64 or 6to4 IPv6 address is judged by its IPv4 address.
    public static func publicOnly(allowing networks: [IPNetwork] = []) -> AddressPolicy {
        AddressPolicy(publicOnly: true, allowedNetworks: networks)
    }

    /// Whether `address` (an IPv4 or IPv6 address as text) is public in this policy's sense;
    /// nil when the text is not an address.
    public static func isPublic(_ address: String) -> Bool? {
        switch wi_address_text_is_public(address) {
        case 1: true
        case 0: false
        default: nil
        }
    }

    /// Whether this policy lets a transfer connect to `address` (as text); false for text that is
    /// not an address.
    public func allows(_ address: String) -> Bool {
        guard publicOnly else { return true }
        guard let isPublic = Self.isPublic(address) else { return false }
        if isPublic { return true }
        guard let network = IPNetwork(address) else { return false }
        return allowedNetworks.contains { $0.contains(network) }
    }
}

/// An IP network: an address and a prefix length (`10.0.0.0/8`, `fd00::/8`, or one address,
/// `127.0.0.1`).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The address, 16 bytes (an IPv4 network as ::ffff:a.b.c.d).
    let bytes: [UInt8]
    /// The prefix length over the 16 bytes.
    let prefix: Int
    /// How it was written.
    public let description: String

    /// The network written as `text` (CIDR, or one address); nil when it is not one.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        var bytes = [UInt8](repeating: 0, count: 16)
        var isIPv4: Int32 = 0
        let parsed = bytes.withUnsafeMutableBufferPointer { buffer in
            String(parts[0]).withCString { wi_address_parse($0, buffer.baseAddress, &isIPv4) }
        }
        guard parsed == 1 else { return nil }
        let width = isIPv4 == 1 ? 32 : 128
        var length = width
        if parts.count == 2 {
            guard let value = Int(parts[1]), (0...width).contains(value) else { return nil }
            length = value
        }
        prefix = length + (128 - width)
        // The bits past the prefix are cleared, so that equal networks compare equal.
        for index in 0..<16 {
            let kept = max(0, min(8, prefix - index * 8))
            bytes[index] &= kept == 8 ? 0xff : UInt8(truncatingIfNeeded: 0xff << (8 - kept))
        }
        self.bytes = bytes
        description = text
    }

    /// Networks are equal when they hold the same addresses, however they were written.
    public static func == (a: IPNetwork, b: IPNetwork) -> Bool { a.bytes == b.bytes && a.prefix == b.prefix }

    /// Hashes the addresses the network holds.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
        hasher.combine(prefix)
    }

    /// Whether `other` lies within this network.
    func contains(_ other: IPNetwork) -> Bool {
        guard other.prefix >= prefix else { return false }
        return bytes.withUnsafeBufferPointer { network in
            other.bytes.withUnsafeBufferPointer { wi_address_in($0.baseAddress, network.baseAddress, Int32(prefix)) == 1 }
        }
    }

    /// The C form the socket guard reads.
    var network: wi_network {
        var network = wi_network()
        withUnsafeMutableBytes(of: &network.bytes) { raw in for (index, byte) in bytes.enumerated() { raw[index] = byte } }
        network.prefix = Int32(prefix)
        return network
    }
}

/// The guard of one transfer: the C structure libcurl's socket callback reads, and the allowed
/// networks it points to, alive as long as the transfer.
final class AddressGuard {
    let pointer: UnsafeMutablePointer<wi_address_guard>
    private let networks: UnsafeMutableBufferPointer<wi_network>

    init(_ policy: AddressPolicy) {
        networks = .allocate(capacity: max(1, policy.allowedNetworks.count))
        for (index, network) in policy.allowedNetworks.enumerated() { networks[index] = network.network }
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: wi_address_guard())
        pointer.pointee.allowed = UnsafePointer(networks.baseAddress)
        pointer.pointee.allowed_count = Int32(policy.allowedNetworks.count)
    }

    deinit {
        pointer.deallocate()
        networks.deallocate()
    }

    /// The address refused last, or nil.
    var refused: String? {
        let text = withUnsafeBytes(of: &pointer.pointee.refused) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return text.isEmpty ? nil : text
    }
}
