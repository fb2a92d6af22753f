// zlib inflation of small metadata (a PNG iCCP chunk's profile), bounded before it grows.
#include "wi_internal.h"
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int wi_inflate(const uint8_t *data, size_t length, size_t max_output, wi_buffer *out) {
    memset(out, 0, sizeof *out);
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit(&stream) != Z_OK) return WI_ERR_NO_MEMORY;
    size_t capacity = length * 4 < 4096 ? 4096 : length * 4;
    if (capacity > max_output) capacity = max_output ? max_output : 1;
    out->data = malloc(capacity);
    if (!out->data) {
        inflateEnd(&stream);
        return WI_ERR_NO_MEMORY;
    }
    out->capacity = capacity;
    stream.next_in = (Bytef *)data;
    stream.avail_in = (uInt)length;
    int status = WI_OK;
    for (;;) {
        stream.next_out = out->data + out->size;
        stream.avail_out = (uInt)(out->capacity - out->size);
        int result = inflate(&stream, Z_NO_FLUSH);
        out->size = out->capacity - stream.avail_out;
        if (result == Z_STREAM_END) break;
        if (result != Z_OK && result != Z_BUF_ERROR) { status = WI_ERR_CORRUPT; break; }
        if (stream.avail_out == 0) {
            if (out->capacity >= max_output) { status = WI_ERR_TOO_LARGE; break; }
            size_t grown_capacity = out->capacity * 2 > max_output ? max_output : out->capacity * 2;
            uint8_t *grown = realloc(out->data, grown_capacity);
            if (!grown) { status = WI_ERR_NO_MEMORY; break; }
            out->data = grown;
            out->capacity = grown_capacity;
        } else if (stream.avail_in == 0) {
            status = WI_ERR_TRUNCATED;
            break;
        }
    }
    inflateEnd(&stream);
    if (status != WI_OK) {
        free(out->data);
        out->data = NULL;
        out->size = out->capacity = 0;
    }
    return status;
}
