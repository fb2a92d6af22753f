import CWebImagePDF
import Foundation
import WebImage

/// PDF pages through poppler, drawn with cairo (SDWebImagePDFCoder's counterpart): the first
/// page, or `ImageDecodingOptions.pageIndex` (`ImageContext.pdfPageIndex` for a load), at the
/// size a load asks for (`maxPixelSize`: the longer side fills it, enlarging as a vector page
/// may; `fillSize`: the smallest size that covers the box) or else at the page's own size, one
/// pixel a point (72 per inch), on white paper. The pixel limit is checked before anything is
/// drawn.
///
/// Safe by default: poppler reads only the bytes given. It has no JavaScript engine, follows
/// no link, launch or submit action, and fetches nothing; an encrypted document fails with
/// `ImageError.unsupportedFormat`. Drawing cannot be interrupted, so a page has no time limit
/// of its own: `webimage serve` decodes PDF only when its configuration turns it on, and then
/// in its isolated decoding workers, under their CPU and memory limits.
///
/// Register it once: `PDFCoder.register()` (or `ImageCoders.shared.add(PDFCoder())`).
public struct PDFCoder: ImageCoder {
    /// The PDF coder.
    public init() {}

    /// Adds a PDF coder to `coders` (the shared registry by default), tried before the coders
    /// already there.
    public static func register(in coders: ImageCoders = .shared) {
        coders.add(PDFCoder())
    }

    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == .pdf }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> Image {
        var info = wi_pdf_info()
        var status: Int32 = 0
        return try data.withUnsafeBytes { raw in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress,
                  let pdf = wi_pdf_open(base, raw.count, &info, &status) else {
                if status == WI_ERR_UNSUPPORTED { throw ImageError.unsupportedFormat(.pdf) }
                throw ImageError.undecodable(.pdf, reason: CodecBridge.message(info.message))
            }
            defer { wi_pdf_close(pdf) }
            let page = options.pageIndex
            guard page >= 0, page < Int(info.pages) else {
                throw ImageError.undecodable(.pdf, reason: "the document has \(info.pages) pages; page \(page + 1) was asked for")
            }
            var pointsWide = 0.0, pointsHigh = 0.0
            _ = wi_pdf_page_size(pdf, Int32(page), &pointsWide, &pointsHigh)
            guard pointsWide > 0, pointsHigh > 0, pointsWide.isFinite, pointsHigh.isFinite else {
                throw ImageError.undecodable(.pdf, reason: "page \(page + 1) has no size")
            }
            let (width, height) = options.drawingSize(intrinsic: (pointsWide, pointsHigh), fallback: (1, 1))
            guard !options.exceedsPixelLimit(width: width, height: height), width <= 32767, height <= 32767 else {
                throw ImageError.tooLarge(width: width, height: height, limit: options.pixelLimit)
            }
            var out = wi_image()
            let drawn = wi_pdf_render(pdf, Int32(page), UInt32(width), UInt32(height), &out)
            guard drawn == WI_OK, let bitmap = CodecBridge.takeBitmap(&out) else {
                throw CodecBridge.error(drawn, format: .pdf, message: CodecBridge.message(out.message), limit: options.pixelLimit)
            }
            let frame = ImageFrame(bitmap: bitmap)
            return Image(firstFrame: frame, frames: .preloaded([frame]), format: .pdf, loopCount: nil, scale: options.scale,
                         exifOrientation: nil, orientationApplied: false)
        }
    }

    public func canEncode(_ format: ImageFormat) -> Bool { false }

    public func encode(_ image: Image, as format: ImageFormat, options: ImageEncodingOptions) throws -> Data {
        throw ImageError.encodingFailed(format, reason: "the PDF coder does not write PDF")
    }
}
