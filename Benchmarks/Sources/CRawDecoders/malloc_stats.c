// The allocator's own figures, for the memory soak: what is in use against what the process holds.
#include <malloc.h>
#include "raw_decoders.h"

void raw_malloc_stats(size_t *in_use, size_t *heap_free, size_t *mapped) {
    struct mallinfo2 info = mallinfo2();
    *in_use = info.uordblks + info.hblkhd;
    *heap_free = info.fordblks;
    *mapped = info.hblkhd;
}

int raw_malloc_trim(void) { return malloc_trim(0); }
