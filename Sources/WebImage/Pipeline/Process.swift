import Foundation

/// Stage 5, processing: the context's transformer, on the final image and on previews.
extension ImagePipeline {
    func transform(_ image: Image, request: LoadRequest) throws -> Image {
        guard let transformer = request.transformer else { return image }
        if image.isAnimated, !request.options.contains(.transformAnimatedImage) { return image }
        do {
            return try transformer.transform(image)
        } catch let error as ImageError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            throw ImageError.transformFailed("\(transformer.key): \(error)")
        }
    }

    func transformPreview(_ preview: PartialImage, request: LoadRequest) throws -> PartialImage {
        guard request.isDerived else { return preview }
        var shown = preview
        shown.image = try transform(thumbnail(preview.image, request: request), request: request)
        return shown
    }
}
