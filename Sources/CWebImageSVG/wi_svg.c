#include "wi_svg.h"
#include <cairo.h>
#include <glib-object.h>
#include <stdlib.h>
#include <string.h>

// The part of librsvg 2.54's C API used here (librsvg/rsvg.h, stable since 2.52), declared
// here because its header pulls in gio's and gdk-pixbuf's include paths (see CRsvg/shim.h).
typedef struct _RsvgHandle RsvgHandle;
typedef enum { RSVG_UNIT_PERCENT, RSVG_UNIT_PX, RSVG_UNIT_EM, RSVG_UNIT_EX, RSVG_UNIT_IN, RSVG_UNIT_CM, RSVG_UNIT_MM,
               RSVG_UNIT_PT, RSVG_UNIT_PC } RsvgUnit;
typedef struct { double length; RsvgUnit unit; } RsvgLength;
typedef struct { double x, y, width, height; } RsvgRectangle;
RsvgHandle *rsvg_handle_new_from_data(const guint8 *data, gsize data_len, GError **error);
void rsvg_handle_set_dpi(RsvgHandle *handle, double dpi);
gboolean rsvg_handle_get_intrinsic_size_in_pixels(RsvgHandle *handle, gdouble *out_width, gdouble *out_height);
void rsvg_handle_get_intrinsic_dimensions(RsvgHandle *handle, gboolean *out_has_width, RsvgLength *out_width,
                                          gboolean *out_has_height, RsvgLength *out_height, gboolean *out_has_viewbox,
                                          RsvgRectangle *out_viewbox);
gboolean rsvg_handle_render_document(RsvgHandle *handle, cairo_t *cr, const RsvgRectangle *viewport, GError **error);

struct wi_svg {
    RsvgHandle *handle;
};

wi_svg *wi_svg_open(const uint8_t *data, size_t length, wi_svg_info *info, int *status) {
    memset(info, 0, sizeof *info);
    *status = WI_ERR_CORRUPT;
    if (!data || length == 0) { wi_say(info->message, "no data"); return NULL; }
    GError *error = NULL;
    // No base file: nothing but data: URIs can be referenced. No RSVG_HANDLE_FLAG_UNLIMITED:
    // libxml2's limits on entities and depth stay on.
    RsvgHandle *handle = rsvg_handle_new_from_data(data, length, &error);
    if (!handle) {
        wi_say(info->message, "%s", error && error->message ? error->message : "the SVG document does not parse");
        if (error) g_error_free(error);
        return NULL;
    }
    rsvg_handle_set_dpi(handle, 96);
    gdouble width = 0, height = 0;
    if (!rsvg_handle_get_intrinsic_size_in_pixels(handle, &width, &height)) {
        // Percent (or no) width and height: the viewBox's size, as librsvg and rsvg-convert use.
        gboolean has_width, has_height, has_viewbox;
        RsvgLength w, h;
        RsvgRectangle viewbox;
        rsvg_handle_get_intrinsic_dimensions(handle, &has_width, &w, &has_height, &h, &has_viewbox, &viewbox);
        if (has_viewbox) { width = viewbox.width; height = viewbox.height; }
    }
    wi_svg *svg = malloc(sizeof *svg);
    if (!svg) { g_object_unref(handle); *status = WI_ERR_NO_MEMORY; return NULL; }
    svg->handle = handle;
    info->width = width > 0 ? width : 0;
    info->height = height > 0 ? height : 0;
    *status = WI_OK;
    return svg;
}

int wi_svg_render(wi_svg *svg, uint32_t width, uint32_t height, wi_image *out) {
    memset(out, 0, sizeof *out);
    if (width == 0 || height == 0 || width > 32767 || height > 32767) return WI_ERR_ARGUMENT;
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)width, (int)height);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(surface);
        wi_say(out->message, "out of memory");
        return WI_ERR_NO_MEMORY;
    }
    cairo_t *cr = cairo_create(surface);
    RsvgRectangle viewport = { 0, 0, width, height };
    GError *error = NULL;
    gboolean ok = rsvg_handle_render_document(svg->handle, cr, &viewport, &error);
    cairo_destroy(cr);
    cairo_surface_flush(surface);
    if (!ok) {
        wi_say(out->message, "%s", error && error->message ? error->message : "the SVG document does not render");
        if (error) g_error_free(error);
        cairo_surface_destroy(surface);
        return WI_ERR_CORRUPT;
    }
    int status = wi_image_from_argb32(cairo_image_surface_get_data(surface), (size_t)cairo_image_surface_get_stride(surface),
                                      width, height, out);
    cairo_surface_destroy(surface);
    return status;
}

void wi_svg_close(wi_svg *svg) {
    if (!svg) return;
    g_object_unref(svg->handle);
    free(svg);
}
