// A census of Swift reference counting, for diagnosis only (never linked into the library):
// preloaded into a benchmark, it counts every swift_retain and swift_release made through the
// dynamic linker (calls inside libswiftCore itself are not seen), per object, with the threads
// that touched it, and at exit writes the objects most often counted with their types.
// An object counted from several threads is a cache line the cores pass between them.
/* Usage:
     gcc -shared -fPIC -O2 refcount-census.c -o /tmp/refcount-census.so -ldl \
         -L/opt/swift/usr/lib/swift/linux -lswiftCore
     RC_OUT=/tmp/census.txt LD_PRELOAD=/tmp/refcount-census.so \
         WEBIMAGE_OVERHEAD=3 WEBIMAGE_OVERHEAD_ONLY=pipeline .build/release/ManagerBenchmarks FIXTURES ANCHORS URL
     swift demangle --simplified < /tmp/census.txt
   RC_TOP=N lists the N most counted objects (40 by default). */
// The table is fixed (4 M slots, open addressing, 64 probes): an object that finds no slot is
// not counted. An address freed and reused by another object adds to the same row.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct { const char *data; size_t length; } TypeName;
extern TypeName swift_getTypeName(const void *type, int qualified);

#define SLOTS (1u << 22)
static uintptr_t objects[SLOTS];
static const void *types[SLOTS];
static uint64_t counts[SLOTS], threads[SLOTS];
static __thread int threadIndex = -1;
static int threadCount;

static void record(void *object) {
    if (!object) return;
    if (threadIndex < 0) threadIndex = __atomic_fetch_add(&threadCount, 1, __ATOMIC_RELAXED) & 63;
    uintptr_t key = (uintptr_t)object;
    uint32_t slot = (uint32_t)((key >> 4) * 2654435761u) & (SLOTS - 1);
    for (int probe = 0; probe < 64; probe++, slot = (slot + 1) & (SLOTS - 1)) {
        uintptr_t current = __atomic_load_n(&objects[slot], __ATOMIC_RELAXED);
        if (current == 0) {
            uintptr_t empty = 0;
            if (__atomic_compare_exchange_n(&objects[slot], &empty, key, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
                types[slot] = *(void **)object;
                current = key;
            } else {
                current = empty;
            }
        }
        if (current == key) {
            __atomic_fetch_add(&counts[slot], 1, __ATOMIC_RELAXED);
            __atomic_fetch_or(&threads[slot], 1ull << threadIndex, __ATOMIC_RELAXED);
            return;
        }
    }
}

void *swift_retain(void *object) {
    static void *(*next)(void *);
    if (!next) next = (void *(*)(void *))dlsym(RTLD_NEXT, "swift_retain");
    record(object);
    return next(object);
}

void swift_release(void *object) {
    static void (*next)(void *);
    if (!next) next = (void (*)(void *))dlsym(RTLD_NEXT, "swift_release");
    record(object);
    next(object);
}

static int byCount(const void *a, const void *b) {
    uint64_t x = counts[*(const uint32_t *)a], y = counts[*(const uint32_t *)b];
    return x < y ? 1 : x > y ? -1 : 0;
}

__attribute__((destructor)) static void report(void) {
    static uint32_t order[SLOTS];
    uint32_t used = 0;
    uint64_t total = 0, shared = 0;
    for (uint32_t slot = 0; slot < SLOTS; slot++) {
        if (!objects[slot]) continue;
        order[used++] = slot;
        total += counts[slot];
        if (__builtin_popcountll(threads[slot]) > 1) shared += counts[slot];
    }
    qsort(order, used, sizeof order[0], byCount);
    const char *path = getenv("RC_OUT");
    FILE *out = fopen(path ? path : "/tmp/refcount-census.txt", "w");
    if (!out) return;
    fprintf(out, "objects %u, retains and releases %llu, of them on objects seen by more than one thread %llu\n",
            used, (unsigned long long)total, (unsigned long long)shared);
    const char *top = getenv("RC_TOP");
    uint32_t listed = top ? (uint32_t)strtoul(top, NULL, 10) : 40;
    for (uint32_t rank = 0; rank < used && rank < listed; rank++) {
        uint32_t slot = order[rank];
        Dl_info info;
        char name[300] = "?";
        if (types[slot] && dladdr(types[slot], &info) && info.dli_sname) {
            snprintf(name, sizeof name, "%s", info.dli_sname);
        } else if ((uintptr_t)types[slot] > 4096) {
            TypeName type = swift_getTypeName(types[slot], 1);
            snprintf(name, sizeof name, "%.*s", (int)type.length, type.data);
        }
        fprintf(out, "%10llu  threads %d  %s\n", (unsigned long long)counts[slot], __builtin_popcountll(threads[slot]), name);
    }
    fclose(out);
}
