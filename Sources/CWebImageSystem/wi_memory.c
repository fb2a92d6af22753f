// glibc's allocator tuning for long-running servers: a fixed mmap threshold.
#include "wi_system.h"
#include <malloc.h>

size_t wi_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

int wi_set_mmap_threshold(size_t bytes) {
    if (bytes > (size_t)0x7fffffff) return 0;
    return mallopt(M_MMAP_THRESHOLD, (int)bytes);
}

// A thread of its own that gives the heaps' free pages back to the system (malloc_trim) at an
// interval: what glibc keeps of a busy moment's freed blocks in the middle of its arenas is
// released, so the resident size follows what is held rather than what was once needed.
#include <pthread.h>
#include <time.h>

static pthread_once_t trimmer_once = PTHREAD_ONCE_INIT;
static unsigned trimmer_interval_ms;

static size_t trimmer_slack;

static void *trim_loop(void *unused) {
    (void)unused;
    struct timespec pause = { (time_t)(trimmer_interval_ms / 1000), (long)(trimmer_interval_ms % 1000) * 1000000L };
    for (;;) {
        nanosleep(&pause, NULL);
        // Only when the heaps hold more free bytes than the slack: a trim's released pages are
        // faulted in again by the next allocations, which a steady (warm) load would pay for
        // every second for nothing.
        struct mallinfo2 info = mallinfo2();
        if (info.fordblks > trimmer_slack) malloc_trim(0);
    }
    return NULL;
}

static void start_trimmer(void) {
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, 64 << 10);
    pthread_create(&thread, &attributes, trim_loop, NULL);
    pthread_attr_destroy(&attributes);
}

int wi_start_heap_trimmer(unsigned interval_ms, size_t slack_bytes) {
    if (interval_ms == 0) return 0;
    trimmer_interval_ms = interval_ms;
    trimmer_slack = slack_bytes;
    pthread_once(&trimmer_once, start_trimmer);
    return 1;
}
