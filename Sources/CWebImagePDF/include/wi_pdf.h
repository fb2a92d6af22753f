// Plain C interface over poppler's GLib binding (the WebImagePDF plug-in). Same conventions as
// wi_codecs.h: status codes, RGBA8 straight-alpha pixels in malloc'd buffers the caller frees.
#ifndef WI_PDF_H
#define WI_PDF_H

#include "wi_codecs.h"

/// A parsed PDF document.
typedef struct wi_pdf wi_pdf;

/// What the document says of itself.
typedef struct {
    int pages;
    char message[WI_MESSAGE_SIZE];
} wi_pdf_info;

/// Parses `data` (not copied: it must outlive the document) with no password. poppler reads
/// nothing but these bytes: it runs no JavaScript, follows no link or action, and loads no
/// external stream. WI_ERR_CORRUPT with a message when it does not parse, WI_ERR_UNSUPPORTED
/// when it is encrypted with a password.
wi_pdf *wi_pdf_open(const uint8_t *data, size_t length, wi_pdf_info *info, int *status);
/// The size of page `index` (from 0) in points (1/72 inch), as its crop box turned by its
/// rotation. WI_ERR_ARGUMENT for a page that does not exist.
int wi_pdf_page_size(wi_pdf *pdf, int index, double *width, double *height);
/// Draws page `index` on white paper into `width` x `height` pixels (the page stretched to
/// them, as `pdftoppm -scale-to-x/-y` does), RGBA8.
int wi_pdf_render(wi_pdf *pdf, int index, uint32_t width, uint32_t height, wi_image *out);
void wi_pdf_close(wi_pdf *pdf);

#endif
