// The calling thread's name as the system shows it (top -H, perf, /proc): prctl, since glibc
// declares pthread_setname_np only under _GNU_SOURCE, which Swift's Glibc module does not set.
#include "wi_system.h"
#include <sys/prctl.h>
#include <errno.h>

int wi_thread_set_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0) == 0 ? 0 : errno;
}
