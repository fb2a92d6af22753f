// See raw_curl.h. The loop is libcurl's own: add what was queued, perform, read what ended,
// poll (woken by curl_multi_wakeup when a URL is queued).
#define _GNU_SOURCE
#include "raw_curl.h"
#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct pending { char *url; long id; struct pending *next; } pending;
typedef struct running { long id; size_t bytes; } running;

struct raw_curl_engine {
    CURLM *multi;
    pthread_t thread;
    pthread_mutex_t lock;
    pending *head, *tail;
    int stopped;
    raw_curl_done done;
    void *context;
    CURL *idle[64];
    int idle_count;
    int like_ours;
    struct curl_slist *headers;
    char error[CURL_ERROR_SIZE];
};

static size_t count_header(char *data, size_t size, size_t count, void *user) {
    (void)data; (void)user;
    return size * count;
}

static size_t count_body(char *data, size_t size, size_t count, void *user) {
    (void)data;
    ((running *)user)->bytes += size * count;
    return size * count;
}

static void start(raw_curl_engine *engine, pending *item) {
    CURL *easy = engine->idle_count > 0 ? engine->idle[--engine->idle_count] : curl_easy_init();
    running *state = calloc(1, sizeof(running));
    state->id = item->id;
    if (engine->like_ours) {
        curl_easy_reset(easy);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 10L);
        curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 15000L);
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 60000L);
        curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, 15L);
        curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
        curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
        curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, engine->error);
        curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)(50 << 20));
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, engine->headers);
        curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, count_header);
    }
    curl_easy_setopt(easy, CURLOPT_URL, item->url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, count_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, state);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, state);
    curl_multi_add_handle(engine->multi, easy);
    free(item->url);
    free(item);
}

static void *loop(void *argument) {
    raw_curl_engine *engine = argument;
    pthread_setname_np(pthread_self(), "raw-curl");
    for (;;) {
        pthread_mutex_lock(&engine->lock);
        pending *list = engine->head;
        engine->head = engine->tail = NULL;
        int stopped = engine->stopped;
        pthread_mutex_unlock(&engine->lock);
        while (list) { pending *next = list->next; start(engine, list); list = next; }
        int still = 0;
        curl_multi_perform(engine->multi, &still);
        CURLMsg *message;
        int left = 0;
        while ((message = curl_multi_info_read(engine->multi, &left))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *easy = message->easy_handle;
            int result = message->data.result;
            running *state = NULL;
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&state);
            curl_multi_remove_handle(engine->multi, easy);
            if (engine->idle_count < 64) engine->idle[engine->idle_count++] = easy; else curl_easy_cleanup(easy);
            engine->done(engine->context, state->id, result, state->bytes);
            free(state);
        }
        if (stopped && still == 0) break;
        curl_multi_poll(engine->multi, NULL, 0, 1000, NULL);
    }
    return NULL;
}

raw_curl_engine *raw_curl_engine_new(long max_host_connections, int like_ours, raw_curl_done done, void *context) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    raw_curl_engine *engine = calloc(1, sizeof(raw_curl_engine));
    engine->like_ours = like_ours;
    if (like_ours) {
        engine->headers = curl_slist_append(NULL, "Accept: image/*,*/*;q=0.8");
        engine->headers = curl_slist_append(engine->headers, "User-Agent: WebImage/0.1 (swift-web-image; libcurl)");
    }
    engine->multi = curl_multi_init();
    curl_multi_setopt(engine->multi, CURLMOPT_MAX_HOST_CONNECTIONS, max_host_connections);
    curl_multi_setopt(engine->multi, CURLMOPT_MAXCONNECTS, max_host_connections);
    engine->done = done;
    engine->context = context;
    pthread_mutex_init(&engine->lock, NULL);
    pthread_create(&engine->thread, NULL, loop, engine);
    return engine;
}

void raw_curl_engine_add(raw_curl_engine *engine, const char *url, long id) {
    pending *item = malloc(sizeof(pending));
    item->url = strdup(url);
    item->id = id;
    item->next = NULL;
    pthread_mutex_lock(&engine->lock);
    if (engine->tail) engine->tail->next = item; else engine->head = item;
    engine->tail = item;
    pthread_mutex_unlock(&engine->lock);
    curl_multi_wakeup(engine->multi);
}

void raw_curl_engine_free(raw_curl_engine *engine) {
    pthread_mutex_lock(&engine->lock);
    engine->stopped = 1;
    pthread_mutex_unlock(&engine->lock);
    curl_multi_wakeup(engine->multi);
    pthread_join(engine->thread, NULL);
    for (int i = 0; i < engine->idle_count; i++) curl_easy_cleanup(engine->idle[i]);
    curl_multi_cleanup(engine->multi);
    curl_slist_free_all(engine->headers);
    pthread_mutex_destroy(&engine->lock);
    free(engine);
}
