import Foundation
import WebImage

extension ProcessingRequest {
    /// When the URL stops being served (`exp:`), on the clock the response cache keeps.
    var urlExpiry: ContinuousClock.Instant? {
        expires.map { .now + .milliseconds(Int64((Double($0) - Date().timeIntervalSince1970) * 1000)) }
    }

    /// Whether nothing asked changes the source's pixels or their encoding in `format` (any
    /// format when nil): no transformer, no quality, no watermark, no background to flatten.
    func mayAnswerUnchanged(in format: ImageFormat?) -> Bool {
        let named = format.flatMap { OutputFormat(rawValue: $0.rawValue) }.flatMap { formatQuality[$0] }
        return quality == nil && named == nil && (format != nil || formatQuality.isEmpty) && transformers().isEmpty
            && watermark == nil && background == nil
    }

    /// `Content-Disposition` for a result in `format`: `inline` or `attachment` with the file
    /// name `fn:` gives (else the source's, without its extension) and the format's extension;
    /// nil when the request asks for neither.
    func disposition(format: ImageFormat) -> String? {
        guard filename != nil || attachment else { return nil }
        let base = filename ?? {
            let last = source.deletingPathExtension().lastPathComponent
            return last.isEmpty || last == "/" ? "image" : last
        }()
        let name = base + "." + format.fileExtension
        let ascii = String(name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? Character($0) : "_" })
        var value = (attachment ? "attachment" : "inline") + "; filename=\"\(ascii)\""
        if ascii != name, let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
            value += "; filename*=UTF-8''" + encoded
        }
        return value
    }
}
