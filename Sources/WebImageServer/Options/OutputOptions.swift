import Foundation
import WebImage

extension ProcessingOptions {
    /// The answer: `f`, `q`, `fq`, `mb`, `sm`, `strip`, `kcr`, `cs`, `pg`, `depth`, `ff`, `info`,
    /// `raw`, `exp`, `fn`, `att`.
    static let output: [([String], Apply)] = [
        (["f", "format", "ext"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            try request.setFormat(a[0])
        }),
        (["q", "quality"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            guard let value = Int(a[0]), (1...100).contains(value) else { throw a.bad("the quality must be from 1 to 100, not \"\(a[0])\"") }
            request.quality = value
        }),
        (["fq", "format_quality"], { request, a throws(ProcessingRequestError) in
            guard a.count >= 2, a.count % 2 == 0 else { throw a.bad("\(a.name) takes pairs of a format and a quality") }
            for pair in stride(from: 0, to: a.count, by: 2) {
                let name = a[pair].lowercased() == "jpg" ? "jpeg" : a[pair].lowercased()
                guard let format = ProcessingRequest.OutputFormat(rawValue: name), format != .auto else {
                    throw a.bad("unknown format \"\(a[pair])\" in \(a.name)")
                }
                request.formatQuality[format] = try a.integer(pair + 1, "the quality of \(name)", 1...100)
            }
        }),
        (["mb", "max_bytes"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            let bytes = try a.integer(0, "max_bytes", 0...(1 << 30))
            request.maximumBytes = bytes > 0 ? bytes : nil
        }),
        (["strip"], { request, a throws(ProcessingRequestError) in
            try a.expect(0...0)
            request.stripMetadata = true
        }),
        (["sm", "strip_metadata"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.stripMetadata = try a.bool(0)
        }),
        (["kcr", "keep_copyright"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.keepCopyright = try a.bool(0)
        }),
        (["cs", "colorspace"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            guard let space = ImageColorSpace(rawValue: a[0].lowercased()) else {
                throw a.bad("the colour space must be srgb or original, not \"\(a[0])\"")
            }
            request.colorSpace = space
        }),
        (["pg", "page"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.page = try a.integer(0, "the page", 0...9999)
        }),
        (["depth", "bit_depth"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            switch a[0].lowercased() {
            case "8": request.bitDepth = .eight
            case "source", "16": request.bitDepth = .source
            default: throw a.bad("the depth must be 8 or source, not \"\(a[0])\"")
            }
        }),
        (["ff"], { request, a throws(ProcessingRequestError) in
            try a.expect(0...0)
            request.firstFrameOnly = true
        }),
        (["info"], { request, a throws(ProcessingRequestError) in
            try a.expect(0...0)
            request.info = true
        }),
        (["raw"], { request, a throws(ProcessingRequestError) in
            try a.expect(0...1)
            request.raw = a.count == 0 ? true : try a.bool(0)
        }),
        (["exp", "expires"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.expires = try a.integer(0, "the expiry", 0...Int(Int32.max) * 4)
        }),
        (["fn", "filename"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...2)
            var name = a[0]
            if a.has(1), try a.bool(1) {
                guard let data = Base64URL.decode(name), let text = String(data: data, encoding: .utf8) else {
                    throw a.bad("the filename is not valid base64url")
                }
                name = text
            } else {
                name = name.removingPercentEncoding ?? name
            }
            guard !name.isEmpty, name.count <= 255, !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "\"" || $0 == "/" || $0 == "\\" }) else {
                throw a.bad("the filename must be 1 to 255 characters without quotes, slashes or control characters")
            }
            request.filename = name
        }),
        (["att", "return_attachment"], { request, a throws(ProcessingRequestError) in
            try a.expect(1...1)
            request.attachment = try a.bool(0)
        }),
    ]
}
