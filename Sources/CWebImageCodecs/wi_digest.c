// Message digests through OpenSSL's libcrypto (the TLS library libcurl is built on here):
// MD5 names disk cache files as SDWebImage does, SHA-256 fingerprints pixels.
#include "wi_codecs.h"
#include <openssl/evp.h>

#include <pthread.h>

static int wi_digest(const EVP_MD *md, const void *data, size_t size, uint8_t *out, unsigned int expected) {
    unsigned int length = 0;
    if (md == NULL || EVP_Digest(data, size, out, &length, md, NULL) != 1 || length != expected) return WI_ERR_ARGUMENT;
    return WI_OK;
}

// The algorithms fetched from the default provider once: `EVP_md5()` and `EVP_sha256()` make
// EVP_Digest look the implementation up again on every call (a hash-table lookup, reference
// counts and a lock), which was most of the cost of naming a disk cache file for a short key.
static EVP_MD *wi_fetched_md5, *wi_fetched_sha256;
static pthread_once_t wi_fetch_once = PTHREAD_ONCE_INIT;

static void wi_fetch_digests(void) {
    wi_fetched_md5 = EVP_MD_fetch(NULL, "MD5", NULL);
    wi_fetched_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
}

int wi_md5(const void *data, size_t size, uint8_t out[16]) {
    pthread_once(&wi_fetch_once, wi_fetch_digests);
    return wi_digest(wi_fetched_md5 ? wi_fetched_md5 : EVP_md5(), data, size, out, 16);
}

int wi_sha256(const void *data, size_t size, uint8_t out[32]) {
    pthread_once(&wi_fetch_once, wi_fetch_digests);
    return wi_digest(wi_fetched_sha256 ? wi_fetched_sha256 : EVP_sha256(), data, size, out, 32);
}

// HMAC-SHA256 (the image server's URL signatures).
#include <openssl/crypto.h>
#include <openssl/hmac.h>

int wi_hmac_sha256(const void *key, size_t key_size, const void *data, size_t size, uint8_t out[32]) {
    unsigned int length = 0;
    static const uint8_t empty = 0;
    if (HMAC(EVP_sha256(), key_size ? key : &empty, (int)key_size, size ? (const unsigned char *)data : &empty, size, out, &length) == NULL
        || length != 32) return WI_ERR_ARGUMENT;
    return WI_OK;
}

int wi_equal_constant_time(const void *a, const void *b, size_t size) {
    return CRYPTO_memcmp(a, b, size) == 0;
}
