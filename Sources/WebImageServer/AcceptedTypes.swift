/// The media types a request's `Accept` names, with their weights (RFC 9110 §12.5.1): what
/// `f:auto` chooses from. Only a type named outright counts (`image/*` and `*/*` say nothing
/// about whether a browser decodes AVIF); `q=0` means "not this".
struct AcceptedTypes {
    /// Weight by lowercased type, the first mention of each.
    private var weights: [Substring: Double] = [:]

    /// The types of an `Accept` value; a malformed weight makes its type "not this".
    init(_ header: String) {
        for item in header.lowercased().split(separator: ",") {
            var parameters = item.split(separator: ";").map { $0.trimmingSpaces }
            guard let type = parameters.first, !type.isEmpty, weights[type] == nil else { continue }
            parameters.removeFirst()
            var weight = 1.0
            for parameter in parameters {
                let parts = parameter.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingSpaces == "q" else { continue }
                weight = Self.qvalue(parts[1].trimmingSpaces) ?? 0
            }
            weights[type] = weight
        }
    }

    /// A qvalue: 0 to 1 with at most three decimals; nil when it is not one.
    private static func qvalue(_ text: Substring) -> Double? {
        guard let first = text.first, first == "0" || first == "1", text.count <= 5,
              text.dropFirst().allSatisfy({ $0 == "." || $0.isASCII && $0.isNumber }),
              let value = Double(text), (0...1).contains(value) else { return nil }
        return value
    }

    /// The weight of `type` (a MIME type), 0 when it is not named or is refused.
    func weight(of type: String) -> Double { weights[Substring(type)] ?? 0 }

    /// The first of `candidates` with the highest weight above 0 (ties go to the earlier), or nil.
    func preferred<T>(among candidates: [T], type: (T) -> String) -> T? {
        var best: (T, Double)?
        for candidate in candidates {
            let weight = weight(of: type(candidate))
            if weight > 0, weight > (best?.1 ?? 0) { best = (candidate, weight) }
        }
        return best?.0
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while let first = s.first, first == " " || first == "\t" { s.removeFirst() }
        while let last = s.last, last == " " || last == "\t" { s.removeLast() }
        return s
    }
}
