import CWebImageCodecs
import Foundation

/// MD5 and SHA-256 from OpenSSL's libcrypto, as lowercase hexadecimal.
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

    /// The SHA-256 of `bytes`, 64 lowercase hex digits.
    public static func sha256(_ bytes: some ContiguousBytes) -> String {
        hex(count: 32, bytes) { wi_sha256($0, $1, $2) }
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
