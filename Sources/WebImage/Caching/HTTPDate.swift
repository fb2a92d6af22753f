import Foundation

/// HTTP dates (RFC 9110 §5.6.7): the IMF-fixdate every origin sends (`Sun, 06 Nov 1994
/// 08:49:37 GMT`), and the two obsolete forms a recipient must still read (RFC 850's
/// `Sunday, 06-Nov-94 08:49:37 GMT` and asctime's `Sun Nov  6 08:49:37 1994`). English names
/// whatever the locale; no `DateFormatter`.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The date `value` names, or nil when it is not an HTTP date (an `Expires` that is not one
    /// counts as past, RFC 9111 §5.3).
    static func parse(_ value: String?) -> Date? {
        guard let value, value.utf8.count < 64 else { return nil }
        let tokens = value.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" || $0 == "\t" })
        guard tokens.count >= 5 else { return nil }
        // The weekday comes first in every form; it is not checked against the date.
        var day: Int?, month: Int?, year: Int?, clock: [Int]?
        for token in tokens.dropFirst() {
            if token.contains(":") {
                let parts = token.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
                guard clock == nil, parts.count == 3, parts.allSatisfy({ $0 != nil }) else { return nil }
                clock = parts.map { $0! }
            } else if let index = months.firstIndex(of: token.lowercased()) {
                guard month == nil else { return nil }
                month = index + 1
            } else if token == "GMT" || token == "UTC" {
                continue
            } else if let number = Int(token), token.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                if day == nil, token.count <= 2 { day = number } else if year == nil { year = number } else { return nil }
            } else {
                return nil
            }
        }
        guard let day, let month, var year, let clock else { return nil }
        if year < 100 { year += year < 70 ? 2000 : 1900 }   // RFC 850's two digits (RFC 9110 §5.6.7)
        guard (1...31).contains(day), (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2]),
              (1600...9999).contains(year) else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]))
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
    static func format(_ date: Date) -> String {
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
