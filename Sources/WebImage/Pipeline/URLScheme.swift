/// Whether a URL string starts with a scheme (RFC 3986: a letter, then letters, digits, `+`,
/// `-` or `.`, then `:`), without asking Foundation's URL to parse it out.
enum URLScheme {
    static func isPresent(in string: String) -> Bool {
        // A native string scans its bytes in place; any other is copied once. Not generic: the
        // generic scan was not specialized (Benchmarks/README.md, instruction counts).
        string.utf8.withContiguousStorageIfAvailable(startsWithScheme)
            ?? Array(string.utf8).withUnsafeBufferPointer(startsWithScheme)
    }

    private static func startsWithScheme(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count > 1, isLetter(bytes[0]) else { return false }
        // An index loop: iterating a slice of the buffer is not specialized as well.
        var index = 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ":") { return true }
            let isSchemeByte = isLetter(byte) || byte &- UInt8(ascii: "0") < 10
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            if !isSchemeByte { return false }
            index &+= 1
        }
        return false
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) &- UInt8(ascii: "a") < 26 }
}
