// glibc's allocator tuning for long-running servers: a fixed mmap threshold.
#include "wi_codecs.h"
#include <malloc.h>

int wi_set_mmap_threshold(size_t bytes) {
    if (bytes > (size_t)0x7fffffff) return 0;
    return mallopt(M_MMAP_THRESHOLD, (int)bytes);
}
