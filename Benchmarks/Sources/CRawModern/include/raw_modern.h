// Direct calls into libavif, libheif and libjxl, decoding to RGBA8 and freeing the result (and
// encoding RGBA8 with the plug-ins' settings): the in-process floor of the modern-format
// benchmarks. Each returns 0 on success.
#ifndef RAW_MODERN_H
#define RAW_MODERN_H
#include <stddef.h>
#include <stdint.h>
int raw_avif_decode(const uint8_t *data, size_t length);
/// The same into RGBA of `depth` bits a channel (8 or 16).
int raw_avif_decode_depth(const uint8_t *data, size_t length, int depth);
int raw_heif_decode(const uint8_t *data, size_t length);
/// The same into RGBA of 16-bit words (the coded values as libheif gives them) for `depth` > 8.
int raw_heif_decode_depth(const uint8_t *data, size_t length, int depth);
int raw_jxl_decode(const uint8_t *data, size_t length);
/// The same into RGBA of 16 bits a channel for `depth` > 8.
int raw_jxl_decode_depth(const uint8_t *data, size_t length, int depth);
/// quality 0...100 (libavif 1.x's quantizer mapping), speed 0...10; writes the file's size.
int raw_avif_encode(const uint8_t *rgba, uint32_t width, uint32_t height, int quality, int speed, size_t *size);
/// distance (Butteraugli), effort 1...9; writes the file's size.
int raw_jxl_encode(const uint8_t *rgba, uint32_t width, uint32_t height, float distance, int effort, size_t *size);
#endif
