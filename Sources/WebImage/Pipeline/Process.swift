import Foundation

/// Stage 5, processing: the context's transformer, on the final image and on previews.
extension ImagePipeline {
    func transform(_ image: Image, plan: LoadPlan) throws -> Image {
        guard let transformer = plan.context.transformer else { return image }
        if image.isAnimated, !plan.options.contains(.transformAnimatedImage) { return image }
        do {
            return try transformer.transform(image)
        } catch let error as ImageError {
            throw error
        } catch {
            throw ImageError.transformFailed("\(transformer.key): \(error)")
        }
    }

    func transformPreview(_ preview: PartialImage, plan: LoadPlan) throws -> PartialImage {
        guard plan.context.transformer != nil || plan.context.thumbnailPixelSize != nil else { return preview }
        var shown = preview
        shown.image = try transform(thumbnail(preview.image, plan: plan), plan: plan)
        return shown
    }
}
