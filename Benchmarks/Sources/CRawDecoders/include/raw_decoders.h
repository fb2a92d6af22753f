// Direct calls into libjpeg-turbo, libpng, libwebp and giflib, decoding to RGBA8 and freeing
// the result: the in-process floor for the codec benchmarks. Each returns 0 on success.
#ifndef RAW_DECODERS_H
#define RAW_DECODERS_H
#include <stddef.h>
#include <stdint.h>
int raw_jpeg_decode(const uint8_t *data, size_t length, int scale_num);
int raw_png_decode(const uint8_t *data, size_t length);
/// An 8-bit RGB PNG's rows inflated by libpng into one row buffer (the image is not kept).
int raw_png_rows(const uint8_t *data, size_t length);
/// A 16-bit RGB or RGBA PNG read by libpng with its 16-bit samples kept (RGBA16).
int raw_png_decode_16(const uint8_t *data, size_t length);
int raw_webp_decode(const uint8_t *data, size_t length);
int raw_webp_anim_decode_all(const uint8_t *data, size_t length);
int raw_gif_decode_all(const uint8_t *data, size_t length);
/// RGBA16 pixels narrowed to RGBA8 by each sample's high byte: the memory a tone map reads and
/// writes, with nothing computed (its floor).
void raw_narrow_16_to_8(const uint16_t *in, size_t pixels, uint8_t *out);
/// malloc's figures (mallinfo2): bytes in use (heap and mmapped chunks), free bytes held in the
/// heaps, and the mmapped part of what is in use.
void raw_malloc_stats(size_t *in_use, size_t *heap_free, size_t *mapped);
/// malloc_trim(0): gives the heaps' free pages back to the system.
int raw_malloc_trim(void);

#endif
