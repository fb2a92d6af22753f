// Plain C interface over libjxl (the WebImageJXL plug-in). Same conventions as wi_codecs.h:
// status codes, RGBA8 straight-alpha pixels in malloc'd buffers the caller frees.
#ifndef WI_JXL_H
#define WI_JXL_H

#include "wi_codecs.h"

/// What the codestream's header says.
typedef struct {
    uint32_t width;            // as displayed: the codestream orientation applied
    uint32_t height;
    uint32_t frame_count;
    uint32_t bits_per_sample;
    int has_alpha;
    int orientation;           // the codestream's orientation (EXIF values, 1 = as stored)
    int has_animation;
    uint32_t loop_count;       // num_loops: 0 = forever
    int has_cicp;              // the colour encoding as CICP code points, when it has one
    uint16_t color_primaries;
    uint16_t transfer_characteristics;
    char message[WI_MESSAGE_SIZE];
} wi_jxl_info;

typedef struct wi_jxl wi_jxl;

/// Reads the header, colour encoding and every frame header (no pixel is decoded). Keeps its own
/// copy of the data. Refuses an image over `max_pixels` (WI_ERR_TOO_LARGE) from its header.
wi_jxl *wi_jxl_open(const uint8_t *data, size_t length, uint64_t max_pixels, wi_jxl_info *info, int *status);
/// Frame `index`'s duration in seconds (0 for a still image).
double wi_jxl_frame_duration(const wi_jxl *jxl, uint32_t index);
/// Decodes frame `index` (composited on the full canvas) to RGBA8, oriented, alpha un-premultiplied.
int wi_jxl_render(wi_jxl *jxl, uint32_t index, wi_image *out);
/// The same; with `deep`, an image of more than 8 bits a sample comes out at 16 bits a
/// channel (wi_image.deep).
int wi_jxl_render_at(wi_jxl *jxl, uint32_t index, int deep, wi_image *out);
/// The ICC profile of the decoded pixels (a pointer into the decoder's state), or 0.
size_t wi_jxl_icc(const wi_jxl *jxl, const uint8_t **bytes);
void wi_jxl_close(wi_jxl *jxl);

/// A still JPEG XL decoded as its bytes arrive, each byte once: libjxl keeps its state and this
/// keeps only the bytes it has not consumed yet. Previews are the passes decoded so far.
typedef struct wi_jxl_stream wi_jxl_stream;
wi_jxl_stream *wi_jxl_stream_create(uint64_t max_pixels);
/// Adds bytes and decodes as far as they go: WI_NEED_MORE, WI_HEADER (once, when the header was
/// read: wi_jxl_stream_header tells it), WI_OK (the whole first frame is in), or an error.
int wi_jxl_stream_append(wi_jxl_stream *stream, const uint8_t *data, size_t length);
/// The ICC profile of the decoded pixels once the colour encoding was read (a pointer into the
/// stream's state), or 0.
size_t wi_jxl_stream_icc(const wi_jxl_stream *stream, const uint8_t **bytes);
/// The header once WI_HEADER was returned.
int wi_jxl_stream_header(const wi_jxl_stream *stream, wi_jxl_info *info);
/// The image as far as it is decoded (final = 0: WI_NEED_MORE when no new pass since the last
/// call), or the finished image (final = 1). Pixels are the caller's.
int wi_jxl_stream_render(wi_jxl_stream *stream, int final, wi_image *out);
const char *wi_jxl_stream_message(const wi_jxl_stream *stream);
/// How many bytes the stream keeps that libjxl has not consumed yet.
size_t wi_jxl_stream_pending(const wi_jxl_stream *stream);
void wi_jxl_stream_destroy(wi_jxl_stream *stream);

/// Encodes RGBA frames as JPEG XL (8 bits a sample, or 16 when `deep`): distance 0 with `lossless` (modular, exact), else the
/// distance for `quality` (0...100, cjxl's mapping); effort 1...9 (0: libjxl's default, 7).
/// Without `icc`, the colour encoding is sRGB's, or the CICP `primaries` (1, 9, 12) with the
/// PQ (16) or HLG (18) `transfer` of an HDR image.
typedef struct wi_jxl_encoder wi_jxl_encoder;
wi_jxl_encoder *wi_jxl_encoder_create(uint32_t width, uint32_t height, int has_alpha, int deep, int animated, uint32_t loop_count,
                                      int quality, int lossless, int effort, const uint8_t *icc, size_t icc_length,
                                      int primaries, int transfer, char message[WI_MESSAGE_SIZE]);
/// Writes the EXIF block (a TIFF structure) in an `Exif` box and the XMP packet in an `xml `
/// box (either may be empty): call it before the first frame.
int wi_jxl_encoder_set_metadata(wi_jxl_encoder *encoder, const uint8_t *exif, size_t exif_length,
                                const uint8_t *xmp, size_t xmp_length);
/// `rgba`: RGBA8 pixels, or native-endian 16-bit samples for an encoder created `deep`.
int wi_jxl_encoder_add(wi_jxl_encoder *encoder, const uint8_t *rgba, uint32_t duration_ms);
int wi_jxl_encoder_finish(wi_jxl_encoder *encoder, wi_buffer *out);
void wi_jxl_encoder_destroy(wi_jxl_encoder *encoder);

#endif
