#include "wi_pdf.h"
#include <poppler.h>
#include <stdlib.h>
#include <string.h>

struct wi_pdf {
    PopplerDocument *document;
};

wi_pdf *wi_pdf_open(const uint8_t *data, size_t length, wi_pdf_info *info, int *status) {
    memset(info, 0, sizeof *info);
    *status = WI_ERR_CORRUPT;
    if (!data || length == 0) { wi_say(info->message, "no data"); return NULL; }
    // The bytes are the caller's for the document's life: GLib neither copies nor frees them.
    GBytes *bytes = g_bytes_new_static(data, length);
    GError *error = NULL;
    PopplerDocument *document = poppler_document_new_from_bytes(bytes, NULL, &error);
    g_bytes_unref(bytes);
    if (!document) {
        if (error && error->domain == POPPLER_ERROR && error->code == POPPLER_ERROR_ENCRYPTED) *status = WI_ERR_UNSUPPORTED;
        wi_say(info->message, "%s", error && error->message ? error->message : "the PDF document does not parse");
        if (error) g_error_free(error);
        return NULL;
    }
    int pages = poppler_document_get_n_pages(document);
    if (pages < 1) {
        g_object_unref(document);
        wi_say(info->message, "the PDF document has no page");
        return NULL;
    }
    wi_pdf *pdf = malloc(sizeof *pdf);
    if (!pdf) { g_object_unref(document); *status = WI_ERR_NO_MEMORY; return NULL; }
    pdf->document = document;
    info->pages = pages;
    *status = WI_OK;
    return pdf;
}

int wi_pdf_page_size(wi_pdf *pdf, int index, double *width, double *height) {
    *width = *height = 0;
    PopplerPage *page = index >= 0 ? poppler_document_get_page(pdf->document, index) : NULL;
    if (!page) return WI_ERR_ARGUMENT;
    poppler_page_get_size(page, width, height);
    g_object_unref(page);
    return WI_OK;
}

int wi_pdf_render(wi_pdf *pdf, int index, uint32_t width, uint32_t height, wi_image *out) {
    memset(out, 0, sizeof *out);
    if (width == 0 || height == 0 || width > 32767 || height > 32767) return WI_ERR_ARGUMENT;
    PopplerPage *page = index >= 0 ? poppler_document_get_page(pdf->document, index) : NULL;
    if (!page) { wi_say(out->message, "the PDF document has no page %d", index + 1); return WI_ERR_ARGUMENT; }
    double page_width = 0, page_height = 0;
    poppler_page_get_size(page, &page_width, &page_height);
    if (!(page_width > 0 && page_height > 0)) {
        g_object_unref(page);
        wi_say(out->message, "the page has no size");
        return WI_ERR_CORRUPT;
    }
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)width, (int)height);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(surface);
        g_object_unref(page);
        wi_say(out->message, "out of memory");
        return WI_ERR_NO_MEMORY;
    }
    cairo_t *cr = cairo_create(surface);
    // White paper under the page, as pdftoppm and viewers draw it.
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_scale(cr, (double)width / page_width, (double)height / page_height);
    poppler_page_render(page, cr);
    cairo_status_t drawn = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_flush(surface);
    g_object_unref(page);
    if (drawn != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(surface);
        wi_say(out->message, "the page does not draw: %s", cairo_status_to_string(drawn));
        return WI_ERR_CORRUPT;
    }
    int status = wi_image_from_argb32(cairo_image_surface_get_data(surface), (size_t)cairo_image_surface_get_stride(surface),
                                      width, height, out);
    cairo_surface_destroy(surface);
    return status;
}

void wi_pdf_close(wi_pdf *pdf) {
    if (!pdf) return;
    g_object_unref(pdf->document);
    free(pdf);
}
