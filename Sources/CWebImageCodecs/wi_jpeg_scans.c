// The scans of a progressive JPEG that a decode at 1/8 scale does not read: a component whose
// blocks come out one pixel each (libjpeg's DCT_scaled_size 1) takes only its DC coefficient,
// so the AC scans of that component (always single-component ones) are dropped before libjpeg
// sees the file, and their entropy data is never decoded.
#include "wi_jpeg_internal.h"
#include <stdlib.h>
#include <string.h>

/// Coefficients 0...9 of each component, as libjpeg's block smoothing looks at them.
#define WI_SMOOTHED_COEFS 10

/// The frame's components: their ids, and the point transform (Al) each of the first ten
/// coefficients was last sent with, -1 before any scan sent it.
typedef struct {
    int count;
    int ids[MAX_COMPONENTS];
    int bits[MAX_COMPONENTS][WI_SMOOTHED_COEFS];
} wi_scan_components;

static int component_index(const wi_scan_components *frame, int id) {
    for (int i = 0; i < frame->count; i++)
        if (frame->ids[i] == id) return i;
    return -1;
}

/// Where the entropy data starting at `from` ends: the 0xFF of the first marker that is not a
/// stuffed byte or a restart marker; 0 when the data runs out first.
static size_t entropy_end(const uint8_t *data, size_t length, size_t from) {
    for (size_t q = from; q + 1 < length; q++) {
        if (data[q] != 0xFF) continue;
        uint8_t next = data[q + 1];
        if (next == 0x00 || (next >= 0xD0 && next <= 0xD7)) { q++; continue; }
        if (next == 0xFF) continue;
        return q;
    }
    return 0;
}

/// Checks a scan header (`segment` after its length bytes, `size` of them) as libjpeg will
/// and records which coefficients it sends. Returns whether the scan is an AC scan of one of
/// `dc_ids`, or -1 for a header libjpeg would refuse.
static int read_scan(const uint8_t *segment, size_t size, wi_scan_components *frame, const int *dc_ids, int dc_count) {
    if (size < 1) return -1;
    int n = segment[0];
    if (n < 1 || n > MAX_COMPS_IN_SCAN || size != (size_t)(1 + 2 * n + 3)) return -1;
    int ss = segment[1 + 2 * n], se = segment[2 + 2 * n], ah = segment[3 + 2 * n] >> 4, al = segment[3 + 2 * n] & 15;
    // libjpeg's own checks of a progressive scan (jdphuff.c).
    if (ss == 0 ? se != 0 : (ss > se || se >= DCTSIZE2 || n != 1)) return -1;
    if ((ah != 0 && al != ah - 1) || al > 13) return -1;
    int skipped = 0;
    for (int i = 0; i < n; i++) {
        int c = component_index(frame, segment[1 + 2 * i]);
        if (c < 0) return -1;
        for (int k = ss; k <= se && k < WI_SMOOTHED_COEFS; k++) frame->bits[c][k] = al;
        for (int d = 0; ss > 0 && d < dc_count; d++) skipped |= dc_ids[d] == frame->ids[c];
    }
    return skipped;
}

uint8_t *wi_jpeg_without_ac_scans(const uint8_t *data, size_t length, const int *dc_ids, int dc_count,
                                  size_t *out_length) {
    *out_length = 0;
    if (dc_count <= 0 || length < 4 || data[0] != 0xFF || data[1] != 0xD8) return NULL;
    uint8_t *copy = malloc(length);
    if (!copy) return NULL;
    wi_scan_components frame = { .count = 0 };
    memset(frame.bits, 0xFF, sizeof frame.bits);
    size_t pos = 2, kept = 2;
    int scans = 0, dropped = 0, progressive = 0, ended = 0;
    memcpy(copy, data, 2);
    while (!ended) {
        // A marker: 0xFF, any fill bytes, its code.
        if (pos + 1 >= length || data[pos] != 0xFF) break;
        while (pos + 1 < length && data[pos + 1] == 0xFF) pos++;
        if (pos + 1 >= length) break;
        uint8_t code = data[pos + 1];
        if (code == 0xD9) {
            copy[kept++] = 0xFF; copy[kept++] = 0xD9;
            ended = 1;
            break;
        }
        if (code == 0x00 || code == 0x01 || (code >= 0xD0 && code <= 0xD8) || pos + 4 > length) break;
        size_t size = ((size_t)data[pos + 2] << 8) | data[pos + 3];
        if (size < 2 || pos + 2 + size > length) break;
        const uint8_t *segment = data + pos + 4;
        size_t end = pos + 2 + size;
        if (code == 0xC2) {
            // Progressive, Huffman-coded: the components.
            if (progressive || size < 8) break;
            int n = segment[5];
            if (n < 1 || n > MAX_COMPONENTS || size != (size_t)(8 + 3 * n)) break;
            frame.count = n;
            for (int i = 0; i < n; i++) frame.ids[i] = segment[6 + 3 * i];
            progressive = 1;
        } else if ((code >= 0xC0 && code <= 0xCF && code != 0xC4 && code != 0xC8 && code != 0xCC)) {
            break;  // any other frame type: not one whose scans are dropped here
        } else if (code == 0xDA) {
            if (!progressive || ++scans > WI_JPEG_MAX_SCANS) break;
            int skip = read_scan(segment, size - 2, &frame, dc_ids, dc_count);
            size_t stop = skip < 0 ? 0 : entropy_end(data, length, end);
            if (!stop) break;
            if (skip) {
                dropped++;
            } else {
                memcpy(copy + kept, data + pos, stop - pos);
                kept += stop - pos;
            }
            pos = stop;
            continue;
        }
        memcpy(copy + kept, data + pos, end - pos);
        kept += end - pos;
        pos = end;
    }
    // Every coefficient block smoothing looks at must be final in every component: then the
    // whole file is not smoothed either, and the copy decodes to the same pixels.
    int exact = ended && dropped > 0;
    for (int c = 0; exact && c < frame.count; c++)
        for (int k = 0; k < WI_SMOOTHED_COEFS; k++) exact &= frame.bits[c][k] == 0;
    if (!exact) {
        free(copy);
        return NULL;
    }
    *out_length = kept;
    return copy;
}
