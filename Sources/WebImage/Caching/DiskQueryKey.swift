/// What makes two disk queries the same read and decode: the key, the decode options, and
/// whether the extended data is read too.
struct DiskQueryKey: Hashable, Sendable {
    var key: String
    var options: ImageDecodingOptions
    var extended: Bool
}
