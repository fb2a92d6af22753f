// libcurl for Swift: the module's header plus typed wrappers for the variadic
// curl_easy_setopt / curl_easy_getinfo / curl_multi_setopt, which Swift cannot call.
#include <curl/curl.h>

/// The version of the libcurl loaded at run time, as 0xXXYYZZ (major, minor, patch).
static inline unsigned int wi_curl_version_number(void) {
    return curl_version_info(CURLVERSION_NOW)->version_num;
}
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

// MARK: - Address guard: which addresses a transfer may connect to (SSRF protection)

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/// A network a guarded transfer may reach although it is not public: 16 address bytes (an IPv4
/// address as ::ffff:a.b.c.d) and a prefix length over those 16 bytes.
typedef struct wi_network {
    uint8_t bytes[16];
    int prefix;
} wi_network;

/// What a guarded transfer may connect to: public addresses, and the `allowed` networks.
typedef struct wi_address_guard {
    const wi_network *allowed;
    int allowed_count;
    /// The last address refused, as text (empty until one is).
    char refused[INET6_ADDRSTRLEN];
} wi_address_guard;

/// The 16 bytes of `address` (IPv4 mapped into IPv6); 0 for another family.
static inline int wi_address_bytes(const struct sockaddr *address, uint8_t out[16]) {
    if (address->sa_family == AF_INET) {
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        memcpy(out, mapped, 12);
        memcpy(out + 12, &((const struct sockaddr_in *)address)->sin_addr, 4);
        return 1;
    }
    if (address->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)address)->sin6_addr, 16);
        return 1;
    }
    return 0;
}

static inline int wi_address_in(const uint8_t bytes[16], const uint8_t network[16], int prefix) {
    int whole = prefix / 8, rest = prefix % 8;
    if (memcmp(bytes, network, (size_t)whole) != 0) return 0;
    if (rest == 0) return 1;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (bytes[whole] & mask) == (network[whole] & mask);
}

/// Whether an IPv4 address (4 bytes) is public: not "this network", private, shared (CGNAT),
/// loopback, link-local (cloud metadata services among them), IETF protocol assignments,
/// documentation, benchmarking, multicast or reserved.
static inline int wi_ipv4_is_public(const uint8_t a[4]) {
    if (a[0] == 0 || a[0] == 10 || a[0] == 127 || a[0] >= 224) return 0;
    if (a[0] == 100 && (a[1] & 0xc0) == 64) return 0;
    if (a[0] == 169 && a[1] == 254) return 0;
    if (a[0] == 172 && (a[1] & 0xf0) == 16) return 0;
    if (a[0] == 192 && a[1] == 168) return 0;
    if (a[0] == 192 && a[1] == 0 && (a[2] == 0 || a[2] == 2)) return 0;
    if (a[0] == 198 && (a[1] & 0xfe) == 18) return 0;
    if (a[0] == 198 && a[1] == 51 && a[2] == 100) return 0;
    if (a[0] == 203 && a[1] == 0 && a[2] == 113) return 0;
    return 1;
}

/// Whether a 16-byte address is public. IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96,
/// `::a.b.c.d`), SIIT-translated (::ffff:0:0:0/96, `::ffff:0:a.b.c.d`), NAT64 (64:ff9b::/96)
/// and 6to4 (2002::/16) addresses are judged by the IPv4 address they carry; the local-use NAT64
/// prefix (64:ff9b:1::/48) is not public.
static inline int wi_address_is_public(const uint8_t b[16]) {
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const uint8_t translated[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
    static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t nat64_local[6] = {0, 0x64, 0xff, 0x9b, 0, 0x01};
    static const uint8_t zero[15] = {0};
    if (memcmp(b, mapped, 12) == 0 || memcmp(b, translated, 12) == 0 || memcmp(b, nat64, 12) == 0) return wi_ipv4_is_public(b + 12);
    // ::/96 holds :: and ::1 too: their IPv4 reading (0.0.0.0, 0.0.0.1) is "this network".
    if (memcmp(b, zero, 12) == 0) return wi_ipv4_is_public(b + 12);
    if (memcmp(b, nat64_local, 6) == 0) return 0;
    if (b[0] == 0x20 && b[1] == 0x02) return wi_ipv4_is_public(b + 2);
    if ((b[0] & 0xfe) == 0xfc) return 0;                      // fc00::/7 unique local
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return 0;      // fe80::/10 link-local
    if (b[0] == 0xff) return 0;                               // multicast
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) return 0;   // 2001:db8::/32 documentation
    if (b[0] == 0x01 && b[1] == 0 && memcmp(b + 2, zero, 6) == 0) return 0;       // 100::/64 discard
    return 1;
}

static inline int wi_address_allowed(const wi_address_guard *guard, const uint8_t bytes[16]) {
    if (wi_address_is_public(bytes)) return 1;
    for (int i = 0; i < guard->allowed_count; i++) {
        if (wi_address_in(bytes, guard->allowed[i].bytes, guard->allowed[i].prefix)) return 1;
    }
    return 0;
}

/// Whether the address written as `text` (IPv4 or IPv6) is public; -1 when it is not an address.
static inline int wi_address_text_is_public(const char *text) {
    uint8_t bytes[16];
    struct in_addr v4;
    if (inet_pton(AF_INET, text, &v4) == 1) {
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        memcpy(bytes, mapped, 12);
        memcpy(bytes + 12, &v4, 4);
    } else if (inet_pton(AF_INET6, text, bytes) != 1) {
        return -1;
    }
    return wi_address_is_public(bytes);
}

/// The 16 bytes of the address written as `text` (IPv4 mapped); 0 when it is not an address.
static inline int wi_address_parse(const char *text, uint8_t out[16], int *is_ipv4) {
    struct in_addr v4;
    if (inet_pton(AF_INET, text, &v4) == 1) {
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        memcpy(out, mapped, 12);
        memcpy(out + 12, &v4, 4);
        *is_ipv4 = 1;
        return 1;
    }
    *is_ipv4 = 0;
    return inet_pton(AF_INET6, text, out) == 1;
}

/// libcurl's socket opener for a guarded transfer: called after name resolution for every
/// connection (the first one and those of redirects), it refuses an address the guard does not
/// allow before anything is sent. libcurl then tries the host's next address, or fails the
/// transfer with CURLE_COULDNT_CONNECT.
static inline curl_socket_t wi_guarded_open_socket(void *context, curlsocktype purpose, struct curl_sockaddr *address) {
    wi_address_guard *guard = (wi_address_guard *)context;
    uint8_t bytes[16];
    if (purpose == CURLSOCKTYPE_IPCXN && (!wi_address_bytes(&address->addr, bytes) || !wi_address_allowed(guard, bytes))) {
        const void *raw = address->family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)&address->addr)->sin6_addr
                                                      : (const void *)&((const struct sockaddr_in *)&address->addr)->sin_addr;
        if (!inet_ntop(address->family, raw, guard->refused, sizeof guard->refused)) strcpy(guard->refused, "?");
        return CURL_SOCKET_BAD;
    }
    return socket(address->family, address->socktype, address->protocol);
}

/// Whether every address `host` resolves to is one `guard` allows: the check of a target that a
/// proxy will connect to (the socket guard then sees only the proxy). 0 with the refused address
/// in `guard->refused`, or with "unresolved" when the name does not resolve. Blocks for the
/// name lookup (an address literal needs none).
#include <netdb.h>
static inline int wi_host_allowed(wi_address_guard *guard, const char *host) {
    struct addrinfo hints, *found = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, NULL, &hints, &found) != 0 || found == NULL) {
        strcpy(guard->refused, "unresolved");
        return 0;
    }
    int allowed = 1;
    for (struct addrinfo *entry = found; entry != NULL && allowed; entry = entry->ai_next) {
        uint8_t bytes[16];
        if (!wi_address_bytes(entry->ai_addr, bytes) || !wi_address_allowed(guard, bytes)) {
            allowed = 0;
            const void *raw = entry->ai_family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)entry->ai_addr)->sin6_addr
                                                           : (const void *)&((const struct sockaddr_in *)entry->ai_addr)->sin_addr;
            if (!inet_ntop(entry->ai_family, raw, guard->refused, sizeof guard->refused)) strcpy(guard->refused, "?");
        }
    }
    freeaddrinfo(found);
    return allowed;
}

/// Puts `guard` in front of every connection `easy` opens.
static inline CURLcode wi_curl_set_address_guard(CURL *easy, wi_address_guard *guard) {
    CURLcode code = curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, wi_guarded_open_socket);
    return code ? code : curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, guard);
}
