// The matrix-shaper fast path of wi_color.c (not part of the module's interface).
#ifndef WI_COLOR_SHAPER_H
#define WI_COLOR_SHAPER_H
#include <lcms2.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wi_color_shaper wi_color_shaper;
/// The tables converting RGBA8 pixels described by `input` to `srgb`, relative colorimetric,
/// or NULL when either is not a plain RGB matrix-shaper profile (one lcms2 would read through
/// a LUT, say) or their matrix is out of the path's range: lcms2 then converts.
wi_color_shaper *wi_color_shaper_make(cmsHPROFILE input, cmsHPROFILE srgb);
/// Converts `count` RGBA8 pixels in place (alpha kept). Thread-safe: the tables never change.
void wi_color_shaper_apply(const wi_color_shaper *shaper, uint8_t *pixels, size_t count);
void wi_color_shaper_free(wi_color_shaper *shaper);
#endif
