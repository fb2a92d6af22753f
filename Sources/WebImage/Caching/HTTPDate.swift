import Foundation

/// HTTP dates (RFC 9110 §5.6.7): the IMF-fixdate every origin sends (`Sun, 06 Nov 1994
/// 08:49:37 GMT`), and the two obsolete forms a recipient must still read (RFC 850's
/// `Sunday, 06-Nov-94 08:49:37 GMT` and asctime's `Sun Nov  6 08:49:37 1994`). English names
/// whatever the locale; no `DateFormatter`.
package enum HTTPDate {
    private static let months: [String] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    /// The months' three letters as one lowercase number each, for a look-up without a string.
    private static let monthCodes: [UInt32] = months.map { name in name.utf8.reduce(0) { $0 << 8 | UInt32($1) } }

    /// The date `value` names, or nil when it is not an HTTP date (an `Expires` that is not one
    /// counts as past, RFC 9111 §5.3). Read on its bytes: every response that is stored has a
    /// `Date` and often a `Last-Modified`.
    package static func parse(_ value: String?) -> Date? {
        guard var value, value.utf8.count < 64 else { return nil }
        return value.withUTF8 { parse(bytes: $0) }
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var day: Int?, month: Int?, year: Int?, clock: (Int, Int, Int)?
        var index = 0, first = true
        while index < bytes.count {
            // The next token: up to a space, comma, dash or tab.
            let start = index
            while index < bytes.count, !isSeparator(bytes[index]) { index += 1 }
            let token = UnsafeBufferPointer(rebasing: bytes[start..<index])
            index += 1
            if token.isEmpty { continue }
            // The weekday comes first in every form; it is not checked against the date.
            if first { first = false; continue }
            if token.contains(0x3A) {
                guard clock == nil, let parts = clockParts(token) else { return nil }
                clock = parts
            } else if token.count == 3, token.allSatisfy({ $0 >= 0x41 }) {
                let code = token.reduce(UInt32(0)) { $0 << 8 | UInt32($1 | 0x20) }
                if code == 0x676D74 || code == 0x757463 { continue }   // "gmt", "utc"
                guard month == nil, let found = monthCodes.firstIndex(of: code) else { return nil }
                month = found + 1
            } else if let number = digits(token) {
                if day == nil, token.count <= 2 { day = number } else if year == nil { year = number } else { return nil }
            } else {
                return nil
            }
        }
        guard let day, let month, var year, let clock else { return nil }
        if year < 100 { year += year < 70 ? 2000 : 1900 }   // RFC 850's two digits (RFC 9110 §5.6.7)
        guard (1...31).contains(day), (0...23).contains(clock.0), (0...59).contains(clock.1), (0...60).contains(clock.2),
              (1600...9999).contains(year) else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + clock.0 * 3600 + clock.1 * 60 + clock.2))
    }

    /// A run of 1 to 4 ASCII digits as a number.
    private static func digits(_ token: UnsafeBufferPointer<UInt8>) -> Int? {
        guard (1...4).contains(token.count), token.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return token.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// `HH:MM:SS`, read in place (a split into an array of parts cost more than the rest of
    /// the date).
    private static func clockParts(_ token: UnsafeBufferPointer<UInt8>) -> (Int, Int, Int)? {
        var parts = (0, 0, 0), count = 0, start = 0
        for end in 0...token.count where end == token.count || token[end] == 0x3A {
            guard count < 3, let number = digits(UnsafeBufferPointer(rebasing: token[start..<end])) else { return nil }
            switch count {
            case 0: parts.0 = number
            case 1: parts.1 = number
            default: parts.2 = number
            }
            count += 1
            start = end + 1
        }
        return count == 3 ? parts : nil
    }

    /// A byte that ends a token: a space, comma, dash or tab.
    private static func isSeparator(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x2C || byte == 0x2D || byte == 0x09
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `date` as an IMF-fixdate.
    package static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - days * 86_400
        // The civil date of `days` (the inverse of daysSince1970).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let weekday = weekdays[((days % 7) + 7) % 7]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let name = months[month - 1].prefix(1).uppercased() + months[month - 1].dropFirst()
        return "\(weekday), \(two(day)) \(name) \(year) \(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60)) GMT"
    }
}
