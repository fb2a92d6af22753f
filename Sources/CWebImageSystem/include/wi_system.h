// The OS calls the library makes outside the C standard library's reach from Swift: extended
// attributes, a file's birth time, the thread's name, and glibc's allocator tuning. One family
// per shim: codecs live in CWebImageCodecs, OS calls here.
#ifndef WI_SYSTEM_H
#define WI_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

// ---- Extended attributes (for the disk cache's extended data)
/// 0 on success, else the errno (ENOTSUP where the file system has no user xattrs).
int wi_xattr_set(const char *path, const char *name, const void *value, size_t size);
/// The attribute's size (value NULL) or bytes read; -1 when absent or unsupported.
/// The same on an open file (a temporary file before it is renamed into place).
int wi_xattr_fset(int fd, const char *name, const void *value, size_t size);
long wi_xattr_get(const char *path, const char *name, void *value, size_t size);
/// The same on an open file (an entry read with its attribute through one open).
long wi_xattr_fget(int fd, const char *name, void *value, size_t size);
void wi_xattr_remove(const char *path, const char *name);

/// Names the calling thread for the system (at most 15 bytes are kept). 0 or the errno.
int wi_thread_set_name(const char *name);

/// The birth time of `name` in the folder `dirfd` (AT_FDCWD: a path), by statx; 0 on success,
/// else the errno (ENOTSUP where the file system does not record it).
int wi_file_birth_time(int dirfd, const char *name, int64_t *seconds, uint32_t *nanoseconds);

// ---- A counter shared by the processes that use one cache folder
/// Maps the 8-byte counter in the file at `path` (created when missing if `create`), shared
/// between processes; NULL when it cannot be opened or mapped.
uint64_t *wi_generation_map(const char *path, int create);
/// The counter's value (an atomic load).
uint64_t wi_generation_load(const uint64_t *counter);
/// Adds one and returns the value before (an atomic read-modify-write).
uint64_t wi_generation_bump(uint64_t *counter);
/// Unmaps a counter from wi_generation_map.
void wi_generation_unmap(uint64_t *counter);

// ---- glibc allocator
/// Allocations of `bytes` or more get their own mapping, returned to the system when freed
/// (mallopt M_MMAP_THRESHOLD; fixing it also stops glibc from raising it). 1 on success.
int wi_set_mmap_threshold(size_t bytes);
/// Starts (once per process) a thread that, every `interval_ms`, calls malloc_trim(0) when glibc's
/// heaps hold more than `slack_bytes` free: those pages go back to the system. 1 when started
/// (or already running).
int wi_start_heap_trimmer(unsigned interval_ms, size_t slack_bytes);
/// The bytes glibc's allocator holds in use for the program: blocks in its heaps and blocks it
/// mapped on their own (mallinfo2's uordblks and hblkhd).
size_t wi_heap_bytes_in_use(void);

#endif
