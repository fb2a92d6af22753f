// Pixel buffers recycled between decodes. A decoded image of a few hundred KiB is above glibc's
// mmap threshold at first, then in a thread's heap arena; when the buffers of several images
// in flight are freed together, the arena gives the top of its heap back to the system (the
// trim threshold) and the next decode faults every page in again (what that cost is in
// Benchmarks/README.md, "Figures once in source comments").
// Freed buffers of a middle size wait here, a few MiB at most, for the next image of the same
// byte count; every buffer handed out is malloc'd, so free() stays correct for any of them.
// Under AddressSanitizer a buffer waiting here is poisoned, so a read or write through a pointer
// kept after its image was freed is still reported, as it would be without the pool.
#include "wi_codecs.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define WI_POOL_POISON(pointer, size) ASAN_POISON_MEMORY_REGION(pointer, size)
#define WI_POOL_UNPOISON(pointer, size) ASAN_UNPOISON_MEMORY_REGION(pointer, size)
#define WI_POOL_IS_POISONED(pointer) (__asan_address_is_poisoned(pointer) != 0)
#endif
#endif
#ifndef WI_POOL_POISON
#define WI_POOL_POISON(pointer, size) ((void)(pointer), (void)(size))
#define WI_POOL_UNPOISON(pointer, size) ((void)(pointer), (void)(size))
#define WI_POOL_IS_POISONED(pointer) ((void)(pointer), -1)
#endif

#define WI_POOL_SLOTS 32

typedef struct { uint8_t *pointer; size_t size; } wi_pool_slot;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static wi_pool_slot pool_slots[WI_POOL_SLOTS];
static size_t pool_count = 0, pool_bytes = 0;
static size_t pool_limit = (size_t)16 << 20;

int wi_pixel_pool_recycles(size_t size) {
    return size >= WI_POOL_MIN_BUFFER && size <= WI_POOL_MAX_BUFFER;
}

uint8_t *wi_pixel_pool_take(size_t size) {
    if (!wi_pixel_pool_recycles(size)) return NULL;
    uint8_t *found = NULL;
    pthread_mutex_lock(&pool_lock);
    // The most recently freed buffer of this size: its pages are the likeliest to be in cache.
    for (size_t i = pool_count; i-- > 0;) {
        if (pool_slots[i].size != size) continue;
        found = pool_slots[i].pointer;
        pool_bytes -= size;
        memmove(&pool_slots[i], &pool_slots[i + 1], (pool_count - i - 1) * sizeof *pool_slots);
        pool_count--;
        break;
    }
    pthread_mutex_unlock(&pool_lock);
    if (found) WI_POOL_UNPOISON(found, size);
    return found;
}

void wi_pixel_pool_give(uint8_t *pointer, size_t size) {
    if (!pointer) return;
    if (!wi_pixel_pool_recycles(size)) { free(pointer); return; }
    uint8_t *evicted = NULL;
    pthread_mutex_lock(&pool_lock);
    if (size > pool_limit) {
        evicted = pointer;
    } else {
        // Room made by freeing the oldest buffers.
        while (pool_count > 0 && (pool_count == WI_POOL_SLOTS || pool_bytes + size > pool_limit)) {
            uint8_t *oldest = pool_slots[0].pointer;
            WI_POOL_UNPOISON(oldest, pool_slots[0].size);
            pool_bytes -= pool_slots[0].size;
            memmove(&pool_slots[0], &pool_slots[1], (pool_count - 1) * sizeof *pool_slots);
            pool_count--;
            pthread_mutex_unlock(&pool_lock);
            free(oldest);
            pthread_mutex_lock(&pool_lock);
        }
        if (pool_count < WI_POOL_SLOTS && pool_bytes + size <= pool_limit) {
            WI_POOL_POISON(pointer, size);
            pool_slots[pool_count++] = (wi_pool_slot){ pointer, size };
            pool_bytes += size;
        } else {
            evicted = pointer;
        }
    }
    pthread_mutex_unlock(&pool_lock);
    free(evicted);
}

size_t wi_pixel_pool_drain(void) {
    wi_pool_slot slots[WI_POOL_SLOTS];
    pthread_mutex_lock(&pool_lock);
    size_t count = pool_count, bytes = pool_bytes;
    memcpy(slots, pool_slots, count * sizeof *slots);
    pool_count = 0;
    pool_bytes = 0;
    pthread_mutex_unlock(&pool_lock);
    for (size_t i = 0; i < count; i++) {
        WI_POOL_UNPOISON(slots[i].pointer, slots[i].size);
        free(slots[i].pointer);
    }
    return bytes;
}

size_t wi_pixel_pool_set_limit(size_t bytes) {
    pthread_mutex_lock(&pool_lock);
    size_t previous = pool_limit, held = pool_bytes;
    pool_limit = bytes;
    pthread_mutex_unlock(&pool_lock);
    if (held > bytes) wi_pixel_pool_drain();   // over the new limit: start afresh
    return previous;
}

size_t wi_pixel_pool_limit(void) {
    pthread_mutex_lock(&pool_lock);
    size_t limit = pool_limit;
    pthread_mutex_unlock(&pool_lock);
    return limit;
}

size_t wi_pixel_pool_bytes(void) {
    pthread_mutex_lock(&pool_lock);
    size_t bytes = pool_bytes;
    pthread_mutex_unlock(&pool_lock);
    return bytes;
}

int wi_pixel_pool_poisoned(const uint8_t *pointer) {
    return WI_POOL_IS_POISONED(pointer);
}
