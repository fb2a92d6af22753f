import Foundation

/// What a load writes to the disk cache (Nuke's `ImagePipeline.DataCachePolicy`), per manager
/// (its default context) or per call (`ImageContext.dataCachePolicy`). "Original" is the bytes
/// the server sent, under the original's key (the key filter's); "processed" is a thumbnail,
/// fill-size or transformed image, encoded, under its own key (SDWebImage's key rule).
///
/// Kingfisher's `preferCacheOriginalData` is `.storeOriginalData`; SDWebImage's behaviour is
/// `.automatic` with its `originalStoreCacheType`.
public enum DataCachePolicy: Sendable, Hashable {
    /// The default: a plain load stores the original bytes; a processed one stores the processed
    /// image encoded, and the original where `ImageContext.originalStoreCacheType` says (the
    /// disk by default).
    case automatic
    /// Only the original bytes, always: a processed image is made again from them when it is
    /// asked for (disk space for CPU).
    case storeOriginalData
    /// Only encoded images, plain ones included (re-encoded with `ImageContext.cacheEncoding`):
    /// never the original bytes of a processed load.
    case storeEncodedImages
    /// The original bytes and, for a processed load, the processed image encoded as well.
    case storeAll
}

/// How an image is encoded for the disk cache when it is stored without its bytes (a processed
/// image, or any image under `.storeEncodedImages`): SDWebImage's encode options with
/// `maxFileSize`, Kingfisher's serializer with its compression quality.
public struct CacheEncoding: Sendable, Equatable {
    /// The format; nil keeps the image's own (PNG when it has transparency and its own cannot
    /// be encoded, else JPEG; an animation stays animated).
    public var format: ImageFormat?
    /// Quality, losslessness and effort.
    public var options: ImageEncodingOptions
    /// The largest file wanted, in bytes: a lossy encoding larger than this is made again at a
    /// lower quality, step by step down to 0.1, and the smallest one is kept (as SDWebImage's
    /// `maxFileSize`); nil: no limit.
    public var maxByteCount: Int?

    /// An encoding; every argument has the documented default.
    public init(format: ImageFormat? = nil, options: ImageEncodingOptions = .init(), maxByteCount: Int? = nil) {
        self.format = format
        self.options = options
        self.maxByteCount = maxByteCount
    }

    /// `image` encoded with this encoding by `coders`.
    /// - Throws: `ImageError.encodingFailed` when no coder writes the format.
    func encode(_ image: Image, coders: ImageCoders) throws -> Data {
        let format = self.format ?? ImageCache.diskFormat(for: image)
        var options = self.options
        var data = try coders.encode(image, as: format, options: options)
        guard let limit = maxByteCount, data.count > limit, !options.lossless, format.isLossyEncodable else { return data }
        while data.count > limit, options.quality > 0.1 {
            options.quality = max(0.1, options.quality - 0.1)
            let smaller = try coders.encode(image, as: format, options: options)
            if smaller.count < data.count { data = smaller }
        }
        return data
    }
}

extension ImageFormat {
    /// Whether its quality setting changes the encoded size (the lossy formats).
    var isLossyEncodable: Bool { [.jpeg, .webp, .avif, .heic, .jxl].contains(self) }
}
