// libcurl for Swift: the module's header plus typed wrappers for the variadic
// curl_easy_setopt / curl_easy_getinfo / curl_multi_setopt, which Swift cannot call.
#include <curl/curl.h>

static inline CURLcode wi_curl_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode wi_curl_setopt_offset(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode wi_curl_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode wi_curl_setopt_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode wi_curl_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode wi_curl_setopt_share(CURL *easy, CURLSH *share) {
    return curl_easy_setopt(easy, CURLOPT_SHARE, share);
}
typedef size_t (*wi_curl_data_callback)(char *data, size_t size, size_t count, void *context);
static inline CURLcode wi_curl_setopt_write(CURL *easy, wi_curl_data_callback callback, void *context) {
    CURLcode code = curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, callback);
    return code ? code : curl_easy_setopt(easy, CURLOPT_WRITEDATA, context);
}
static inline CURLcode wi_curl_setopt_header(CURL *easy, wi_curl_data_callback callback, void *context) {
    CURLcode code = curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, callback);
    return code ? code : curl_easy_setopt(easy, CURLOPT_HEADERDATA, context);
}
static inline CURLcode wi_curl_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode wi_curl_getinfo_offset(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode wi_curl_getinfo_string(CURL *easy, CURLINFO info, char **value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode wi_curl_getinfo_pointer(CURL *easy, CURLINFO info, void **value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLMcode wi_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLSHcode wi_curl_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}
/// The message's easy handle and result when it says a transfer is done.
static inline int wi_curl_message_done(CURLMsg *message, CURL **easy, CURLcode *result) {
    if (message->msg != CURLMSG_DONE) return 0;
    *easy = message->easy_handle;
    *result = message->data.result;
    return 1;
}
/// CURLAUTH_BASIC | CURLAUTH_DIGEST (macros with casts do not reach Swift).
static inline long wi_curl_auth_basic_or_digest(void) { return (long)(CURLAUTH_BASIC | CURLAUTH_DIGEST); }
