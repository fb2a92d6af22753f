// Preloaded under valgrind by instructions.sh. Swift's libdispatch parks a thread with sigsuspend()
// on a mask in its read-only data; valgrind (3.24) edits the caller's mask in place before the system call
// (it removes its own kill signal) and dies on the write. This passes a writable copy instead.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>

int sigsuspend(const sigset_t *mask) {
    static int (*next)(const sigset_t *);
    if (!next) next = (int (*)(const sigset_t *))dlsym(RTLD_NEXT, "sigsuspend");
    if (!mask) return next(mask);
    sigset_t copy = *mask;
    return next(&copy);
}
