// The no-library floor of a loader that keeps libcurl on a thread of its own, as ours does:
// one multi handle on one plain thread, URLs handed over from any thread, each completion
// reported through a callback on that thread. Nothing else: no priorities, no limits besides
// libcurl's per-host connection limit, no header or status checks, bodies counted, not kept.
#ifndef RAW_CURL_H
#define RAW_CURL_H

#include <stddef.h>

typedef struct raw_curl_engine raw_curl_engine;

/// Called on the engine's thread when transfer `id` ends: its libcurl result and body size.
typedef void (*raw_curl_done)(void *context, long id, int result, size_t bytes);

/// Starts the thread; at most `max_host_connections` connections to a host. With `like_ours`,
/// each transfer also gets the libcurl options our loader sets (a reset of the reused handle,
/// timeouts, a stall limit, every content encoding, HTTP/2 over TLS, redirects, a size limit,
/// an error buffer, two request headers, a header callback): what those options cost in libcurl.
raw_curl_engine *raw_curl_engine_new(long max_host_connections, int like_ours, raw_curl_done done, void *context);
/// Queues `url` (copied) as transfer `id` and wakes the thread. Any thread.
void raw_curl_engine_add(raw_curl_engine *engine, const char *url, long id);
/// Stops the thread once its transfers end and frees the engine.
void raw_curl_engine_free(raw_curl_engine *engine);

#endif
