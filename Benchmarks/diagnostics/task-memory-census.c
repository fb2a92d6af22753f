// A census of task memory and of malloc, for diagnosis only (never linked into the library):
// preloaded into a benchmark, it counts every swift_task_alloc request (the async frames of
// the tasks' functions, and what a task allocates on its own stack) and every malloc, by size,
// and at exit writes one line per size: "task SIZE COUNT" and "malloc SIZE COUNT" (sizes of
// 16 KB and more share the last row).
/* Usage:
     gcc -shared -fPIC -O2 task-memory-census.c -o /tmp/task-memory-census.so -ldl
     TM_OUT=/tmp/tm-1.txt LD_PRELOAD=/tmp/task-memory-census.so \
         WEBIMAGE_OVERHEAD=1 WEBIMAGE_OVERHEAD_ONLY=pipeline .build/release/ManagerBenchmarks FIXTURES ANCHORS URL
   Run it with 1 and with 6 rounds: the difference over 5,000 is one image, with start-up and
   the fixtures cancelled out. async-frames.py names the function behind a frame's size. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define LAST 16383
static atomic_long taskSizes[LAST + 1], mallocSizes[LAST + 1];
extern void *__libc_malloc(size_t size);
static void *(*realTaskAlloc)(size_t);

static void count(atomic_long *table, size_t size) {
    atomic_fetch_add_explicit(&table[size < LAST ? size : LAST], 1, memory_order_relaxed);
}

void *swift_task_alloc(size_t size) {
    if (!realTaskAlloc) realTaskAlloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "swift_task_alloc");
    count(taskSizes, size);
    return realTaskAlloc(size);
}

void *malloc(size_t size) {
    count(mallocSizes, size);
    return __libc_malloc(size);
}

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("TM_OUT");
    FILE *out = path ? fopen(path, "w") : stderr;
    if (!out) return;
    for (int size = 0; size <= LAST; size++) {
        long tasks = atomic_load(&taskSizes[size]), mallocs = atomic_load(&mallocSizes[size]);
        if (tasks) fprintf(out, "task %d %ld\n", size, tasks);
        if (mallocs) fprintf(out, "malloc %d %ld\n", size, mallocs);
    }
    if (out != stderr) fclose(out);
}
