import Foundation
import WebImage

/// Signs and checks request paths: the signature is the base64url (no padding) of the
/// HMAC-SHA256, under the key, of the salt followed by the path after the signature (from its
/// slash), as imgproxy signs.
public struct URLSigner: Sendable {
    private let key: [UInt8]
    private let salt: [UInt8]

    /// A signer with `key` and `salt` (bytes; configurations give them in hex).
    public init(key: [UInt8], salt: [UInt8]) {
        self.key = key
        self.salt = salt
    }

    /// The signature of `path` (which starts with `/`).
    public func signature(of path: String) -> String {
        Base64URL.encode(Digest.hmacSHA256(key: key, message: salt + Array(path.utf8)))
    }

    /// Whether `signature` is `path`'s, written exactly as `signature(of:)` writes it (so that
    /// one path has one signature), compared in constant time.
    public func isValid(_ signature: String, for path: String) -> Bool {
        Digest.equalInConstantTime(Array(signature.utf8), Array(self.signature(of: path).utf8))
    }

    /// The signed path for `path` (which starts with `/`): `/SIGNATURE` + `path`.
    public func sign(_ path: String) -> String { "/" + signature(of: path) + path }

    /// Bytes from hexadecimal text; nil when it is not an even number of hex digits.
    public static func bytes(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
