// A counter in a small file, mapped shared: every process writing a cache folder adds one after
// each change to the folder's names, so a process can tell with one memory read whether the
// names it knows are still all there are.
#include "wi_system.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t *wi_generation_map(const char *path, int create) {
    int fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
    if (fd < 0) return NULL;
    struct stat info;
    // Growing a new file to 8 bytes zero-fills it; a file already that long keeps its value
    // (two processes creating it at once both grow it to the same length).
    if (fstat(fd, &info) != 0 || (info.st_size < (off_t)sizeof(uint64_t) && ftruncate(fd, sizeof(uint64_t)) != 0)) {
        close(fd);
        return NULL;
    }
    void *mapped = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return mapped == MAP_FAILED ? NULL : (uint64_t *)mapped;
}

uint64_t wi_generation_load(const uint64_t *counter) { return __atomic_load_n(counter, __ATOMIC_ACQUIRE); }

uint64_t wi_generation_bump(uint64_t *counter) { return __atomic_fetch_add(counter, 1, __ATOMIC_ACQ_REL); }

void wi_generation_unmap(uint64_t *counter) { munmap(counter, sizeof(uint64_t)); }
