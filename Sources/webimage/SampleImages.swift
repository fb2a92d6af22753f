import Foundation

/// The sample images compiled into the tool (the demo's files and the default input of `info`).
/// They are part of the executable, so a copied or installed `webimage` needs no other file.
enum SampleImages {
    /// Every sample, sorted by name.
    static let all: [(name: String, data: Data)] = encoded.map { sample in
        // The literals are made by scripts/embed-samples.py from real files: always valid base64.
        guard let data = Data(base64Encoded: sample.base64) else { preconditionFailure("sample \(sample.name) is not base64") }
        return (sample.name, data)
    }
}
