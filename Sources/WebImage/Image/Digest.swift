import CWebImageCodecs
import Foundation

/// MD5 and SHA-256 from OpenSSL's libcrypto, as lowercase hexadecimal, and HMAC-SHA256.
///
/// MD5 names the disk cache's files (SDWebImage's `SDDiskCacheFileNameForKey`); it is not used
/// for security. SHA-256 fingerprints pixels (`webimage info`, the conformance tests).
public enum Digest {
    /// The MD5 of `bytes`, 32 lowercase hex digits.
    public static func md5(_ bytes: some ContiguousBytes) -> String {
        hex(count: 16, bytes) { wi_md5($0, $1, $2) }
    }

    /// The MD5 of the UTF-8 bytes of `text`.
    public static func md5(_ text: String) -> String {
        var text = text
        return text.withUTF8 { utf8 in hex(count: 16, UnsafeRawBufferPointer(utf8)) { wi_md5($0, $1, $2) } }
    }

    /// The MD5 of the UTF-8 bytes of `text` as hex, then `.` and `suffix` when there is one, built
    /// as one string (the disk cache's file names).
    static func md5(_ text: String, suffix: String?) -> String {
        var text = text, suffix = suffix
        return text.withUTF8 { utf8 in
            guard suffix != nil else { return md5(utf8, suffix: nil) }
            return suffix!.withUTF8 { md5(utf8, suffix: $0) }
        }
    }

    /// The MD5 of `bytes` as hex, then `.` and the `suffix` bytes when there are some.
    static func md5(_ bytes: UnsafeBufferPointer<UInt8>, suffix: UnsafeBufferPointer<UInt8>?) -> String {
        var digest: (UInt64, UInt64) = (0, 0)
        let status = withUnsafeMutableBytes(of: &digest) { wi_md5(bytes.baseAddress, bytes.count, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        precondition(status == WI_OK, "OpenSSL's libcrypto did not compute the digest")
        let suffixCount = suffix.map { $0.count + 1 } ?? 0
        return String(unsafeUninitializedCapacity: 32 + suffixCount) { out in
            let digits: StaticString = "0123456789abcdef"
            withUnsafeBytes(of: &digest) { bytes in
                for (i, byte) in bytes.enumerated() {
                    out[2 * i] = digits.utf8Start[Int(byte >> 4)]
                    out[2 * i + 1] = digits.utf8Start[Int(byte & 0x0F)]
                }
            }
            guard let suffix else { return 32 }
            out[32] = UInt8(ascii: ".")
            _ = out[33...].initialize(fromContentsOf: suffix)
            return 32 + suffixCount
        }
    }

    /// The SHA-256 of `bytes`, 64 lowercase hex digits.
    public static func sha256(_ bytes: some ContiguousBytes) -> String {
        hex(count: 32, bytes) { wi_sha256($0, $1, $2) }
    }

    /// The HMAC-SHA256 of `message` under `key`, 32 bytes (OpenSSL's HMAC).
    public static func hmacSHA256(key: some ContiguousBytes, message: some ContiguousBytes) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        let status = key.withUnsafeBytes { key in
            message.withUnsafeBytes { message in
                out.withUnsafeMutableBufferPointer { wi_hmac_sha256(key.baseAddress, key.count, message.baseAddress, message.count, $0.baseAddress) }
            }
        }
        precondition(status == WI_OK, "OpenSSL's libcrypto did not compute the HMAC")
        return out
    }

    /// Whether `a` and `b` hold the same bytes, compared in constant time (for secrets such as
    /// signatures); false when their lengths differ.
    public static func equalInConstantTime(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { a in b.withUnsafeBytes { b in wi_equal_constant_time(a.baseAddress, b.baseAddress, a.count) == 1 } }
    }

    private static func hex(count: Int, _ bytes: some ContiguousBytes,
                            _ digest: (UnsafeRawPointer?, Int, UnsafeMutablePointer<UInt8>?) -> Int32) -> String {
        var out = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeBytes { raw in out.withUnsafeMutableBufferPointer { digest(raw.baseAddress, raw.count, $0.baseAddress) } }
        // libcrypto refuses only when MD5 or SHA-256 is unavailable (a FIPS-only configuration).
        precondition(status == WI_OK, "OpenSSL's libcrypto did not compute the digest")
        return out.lowercaseHex
    }
}

extension Sequence<UInt8> {
    /// The bytes as lowercase hexadecimal.
    var lowercaseHex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
