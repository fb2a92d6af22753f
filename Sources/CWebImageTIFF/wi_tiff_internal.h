// What the TIFF plug-in's C files share: libtiff's callbacks that say nothing, and the page
// reader that goes sample by sample.
#ifndef WI_TIFF_INTERNAL_H
#define WI_TIFF_INTERNAL_H

#include "wi_tiff.h"
#include <stdarg.h>
#include <tiffio.h>

/// libtiff's error handler: the first message into `user` (WI_MESSAGE_SIZE bytes), none to stderr.
int wi_tiff_on_error(TIFF *tif, void *user, const char *module, const char *format, va_list args);
/// libtiff's warning handler: silent.
int wi_tiff_on_warning(TIFF *tif, void *user, const char *module, const char *format, va_list args);
/// Client procedures with nothing to do.
int wi_tiff_no_close(thandle_t h);
void wi_tiff_no_unmap(thandle_t h, void *base, toff_t size);

/// The bits of a page read sample by sample (8, or 16 when `deep`), else 0: unsigned samples,
/// RGB, RGBA, grey or grey and alpha (an extra sample described by its tag), in strips or tiles,
/// contiguous or in planes.
int wi_tiff_direct_layout(TIFF *tif, int deep);
/// Reads such a page into RGBA8, or RGBA16 for 16 bits (malloc'd into `*result`).
int wi_tiff_read_direct(TIFF *tif, uint32_t w, uint32_t h, int bits, char message[WI_MESSAGE_SIZE], uint8_t **result);

#endif
