import CWebImageCodecs
import Foundation

/// BMP, decoded by our own small decoder (no library in the set reads BMP well): the DIB
/// variants browsers show: 1, 2, 4 and 8 bits through a palette, 16 and 32 bits with the default
/// or explicit bit fields (an alpha field included), 24 bits, RLE8 and RLE4, bottom-up and
/// top-down rows, Windows 3.x to V5 headers and OS/2 1.x core headers. A palette index past the
/// palette is black, RLE pixels never written are the palette's first colour (as Pillow shows
/// them). The size is checked against the pixel limit before the pixels are allocated; a
/// file cut short is `ImageError.undecodable`, never a half image. Decode only.
public struct BMPCoder: ImageCoder {
    /// The BMP coder.
    public init() {}

    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == .bmp }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        let bitmap = try BMPCoder.decodeDIB(data, iconDIB: false, format: .bmp, options: options)
        let finishing = DecodeFinishing(width: bitmap.width, height: bitmap.height, exifOrientation: nil, options: options)
        let frame = ImageFrame(bitmap: finishing(bitmap))
        return Image(firstFrame: frame, frames: .preloaded([frame]), format: .bmp, loopCount: nil, scale: options.scale,
                     exifOrientation: nil, orientationApplied: false)
    }

    /// A BMP file, or (`iconDIB`) a DIB inside an icon, as stored pixels.
    static func decodeDIB(_ data: Data, iconDIB: Bool, format: ImageFormat, options: ImageDecodingOptions) throws -> Bitmap {
        var out = wi_image()
        let status = data.withBytePointer { wi_bmp_decode($0, $1, iconDIB ? 1 : 0, CodecBridge.pixelLimit(options), &out) }
        guard status == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else {
            throw CodecBridge.error(status, format: format, message: CodecBridge.message(out.message), width: out.width,
                                    height: out.height, limit: options.pixelLimit)
        }
        return bitmap
    }

    public func canEncode(_ format: ImageFormat) -> Bool { false }

    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        throw ImageError.encodingFailed(format, reason: "the BMP coder does not write BMP")
    }
}
