// Plain C interface over librsvg (the WebImageSVG plug-in). Same conventions as wi_codecs.h:
// status codes, RGBA8 straight-alpha pixels in malloc'd buffers the caller frees.
#ifndef WI_SVG_H
#define WI_SVG_H

#include "wi_codecs.h"

/// A parsed SVG document.
typedef struct wi_svg wi_svg;

/// What the document says of its size, in CSS pixels (96 per inch).
typedef struct {
    double width;              // 0 when the document gives none that librsvg can resolve
    double height;
    char message[WI_MESSAGE_SIZE];
} wi_svg_info;

/// Parses `data` with no base file: librsvg then loads no external resource (no http:, file:
/// or relative reference; data: URIs only), and libxml2 expands no external entity and refuses
/// entity loops and documents deeper than 256 elements. WI_ERR_CORRUPT with a message when
/// the document does not parse.
wi_svg *wi_svg_open(const uint8_t *data, size_t length, wi_svg_info *info, int *status);
/// Renders the whole document into `width` x `height` pixels (its aspect ratio kept by its own
/// preserveAspectRatio, as rsvg-convert does), un-premultiplied RGBA8.
int wi_svg_render(wi_svg *svg, uint32_t width, uint32_t height, wi_image *out);
void wi_svg_close(wi_svg *svg);

#endif
