// A file's birth (creation) time through statx(2): plain stat(2) has no field for it on Linux.
#define _GNU_SOURCE
#include "wi_system.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

int wi_file_birth_time(int dirfd, const char *name, int64_t *seconds, uint32_t *nanoseconds) {
    struct statx sx;
    if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) != 0) return errno;
    if (!(sx.stx_mask & STATX_BTIME)) return ENOTSUP;
    *seconds = (int64_t)sx.stx_btime.tv_sec;
    *nanoseconds = sx.stx_btime.tv_nsec;
    return 0;
}
