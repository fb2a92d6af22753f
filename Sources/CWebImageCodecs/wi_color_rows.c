// Colour conversion of rows as a decoder finishes them. A large image gets a helper thread that
// converts finished rows while the decoder makes the next ones (the decoder is one thread, the
// conversion another: on two cores they overlap instead of adding up); once the decode ends,
// the caller's thread converts beside the helper until every row is done. A small image is
// converted by the caller's thread, batch by batch, while its rows are still in the cache.
#include "include/wi_codecs.h"
#include <pthread.h>
#include <stdlib.h>

enum {
    CHUNK_ROWS = 32,                  // rows one claim converts
    THREAD_PIXELS = 1 << 19,          // the fewest pixels worth a helper thread
};

struct wi_color_rows {
    const wi_color_transform *transform;
    uint8_t *pixels;
    size_t width;
    uint32_t height;
    pthread_mutex_t lock;
    pthread_cond_t more;              // signalled when `ready` grows or the decode ends
    uint32_t ready;                   // rows the decoder has finished
    uint32_t claimed;                 // rows a thread has taken to convert
    int ended;                        // no more rows will come (finish or cancel)
    int cancelled;
    int threaded;
    pthread_t helper;
};

static void convert(wi_color_rows *r, uint32_t from, uint32_t to) {
    wi_color_transform_apply(r->transform, r->pixels + (size_t)from * r->width * 4, (size_t)(to - from) * r->width);
}

// Takes the next chunk of finished rows under the lock; 0 when there is none yet.
static int claim(wi_color_rows *r, uint32_t *from, uint32_t *to) {
    if (r->cancelled || r->claimed >= r->ready) return 0;
    *from = r->claimed;
    *to = r->ready - r->claimed > CHUNK_ROWS ? r->claimed + CHUNK_ROWS : r->ready;
    r->claimed = *to;
    return 1;
}

static void *helper(void *context) {
    wi_color_rows *r = context;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        uint32_t from, to;
        if (claim(r, &from, &to)) {
            pthread_mutex_unlock(&r->lock);
            convert(r, from, to);
            pthread_mutex_lock(&r->lock);
        } else if (r->ended) {
            break;
        } else {
            pthread_cond_wait(&r->more, &r->lock);
        }
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

wi_color_rows *wi_color_rows_start(const wi_color_transform *transform, uint8_t *pixels, uint32_t width, uint32_t height) {
    wi_color_rows *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->transform = transform;
    r->pixels = pixels;
    r->width = width;
    r->height = height;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->more, NULL);
    // Without a thread (none allowed, or none worth it) the caller converts every row itself.
    if ((uint64_t)width * height >= THREAD_PIXELS) r->threaded = pthread_create(&r->helper, NULL, helper, r) == 0;
    return r;
}

void wi_color_rows_ready(wi_color_rows *r, uint32_t rows) {
    if (!r) return;
    if (rows > r->height) rows = r->height;
    if (!r->threaded) {
        if (rows > r->claimed) convert(r, r->claimed, rows);
        r->claimed = r->ready = rows > r->claimed ? rows : r->claimed;
        return;
    }
    pthread_mutex_lock(&r->lock);
    // Woken only when a whole chunk waits: fewer switches, the same overlap.
    int wake = rows > r->ready && rows - r->claimed >= CHUNK_ROWS;
    if (rows > r->ready) r->ready = rows;
    if (wake) pthread_cond_signal(&r->more);
    pthread_mutex_unlock(&r->lock);
}

static void end(wi_color_rows *r, int cancelled) {
    if (r->threaded) {
        pthread_mutex_lock(&r->lock);
        r->ended = 1;
        r->cancelled = cancelled;
        pthread_cond_signal(&r->more);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->helper, NULL);
    }
    pthread_cond_destroy(&r->more);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

void wi_color_rows_finish(wi_color_rows *r) {
    if (!r) return;
    if (!r->threaded) {
        wi_color_rows_ready(r, r->height);
        end(r, 0);
        return;
    }
    // Every row is final now (a truncated image's missing rows too, as a whole-image pass
    // would convert them): the caller's thread works beside the helper until none is left.
    pthread_mutex_lock(&r->lock);
    r->ready = r->height;
    pthread_cond_signal(&r->more);
    uint32_t from, to;
    while (claim(r, &from, &to)) {
        pthread_mutex_unlock(&r->lock);
        convert(r, from, to);
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    end(r, 0);
}

void wi_color_rows_cancel(wi_color_rows *r) {
    if (r) end(r, 1);
}
