import Foundation
import WebImage

extension ImageProcessor {
    /// The status and one-line reason for a failed load.
    static func refusal(for error: any Error) -> ProcessingRequestError {
        guard let error = error as? ImageError else {
            if error is CancellationError { return ProcessingRequestError(503, "the request was cancelled") }
            return ProcessingRequestError(500, "\(error)")
        }
        switch error {
        case .decodingFailed(let reason, _, _):
            return refusal(for: reason)
        case .badStatusCode(let code, _) where code == 404 || code == 410:
            return ProcessingRequestError(404, "the source answered \(code)")
        case .badStatusCode(let code, _):
            return ProcessingRequestError(502, "the source answered \(code)")
        case .timedOut:
            return ProcessingRequestError(504, "the source did not answer in time")
        case .network(_, let reason):
            return ProcessingRequestError(502, "the source could not be fetched: \(reason)")
        case .redirectNotAllowed:
            return ProcessingRequestError(403, "the source redirects to a URL the server does not fetch")
        case .unreadableFile:
            // Nothing of the file system (a path, the kind of file) is told to the client.
            return ProcessingRequestError(404, "no such local file")
        case .addressNotAllowed(_, let address):
            return ProcessingRequestError(403, "the source leads to \(address), which is not a public address")
        case .responseTooLarge(_, let limit):
            return ProcessingRequestError(422, "the source is larger than \(limit) bytes")
        case .animationTooLarge(let width, let height, let frames, let limit):
            return ProcessingRequestError(422, "the source's \(frames) frames of \(width)x\(height) are over \(limit) pixels in all")
        case .decodeTimedOut:
            return ProcessingRequestError(504, "the source was not decoded in time")
        case .tooLarge(let width, let height, let limit):
            return ProcessingRequestError(422, "the source is \(width)x\(height), over \(limit) pixels")
        case .invalidURL:
            return ProcessingRequestError(400, "the source is not a URL the server fetches")
        case .transformFailed(let reason):
            return ProcessingRequestError(422, "the image could not be processed: \(reason)")
        case .blacklistedURL:
            return ProcessingRequestError(404, "the source failed before and is not tried again for now")
        case .emptyData, .unsupportedFormat, .undecodable, .invalidContentType:
            return ProcessingRequestError(422, "the source is not an image the server decodes")
        default:
            return ProcessingRequestError(500, error.description)
        }
    }
}
