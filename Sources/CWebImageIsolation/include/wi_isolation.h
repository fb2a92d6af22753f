// The operating-system calls of decoding workers: starting one, passing descriptors over its
// socket, shared memory, and the worker's own lock-down (resource limits, no new privileges,
// the parent-death signal, a seccomp filter through libseccomp). Swift sees plain functions
// that return 0 or an errno; nothing here decodes.
#ifndef WI_ISOLATION_H
#define WI_ISOLATION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/// A connected pair of SOCK_SEQPACKET sockets (message boundaries kept, descriptors passable),
/// both close-on-exec. 0 or the errno.
int wi_isolation_socketpair(int fds[2]);

/// Starts `path` with `argv` and `envp` (NULL-terminated), its descriptor 3 a duplicate of
/// `child_fd`, standard input /dev/null, standard output and error inherited. 0 and the pid in
/// `pid`, or the errno.
int wi_isolation_spawn(const char *path, char *const argv[], char *const envp[], int child_fd, pid_t *pid);

/// Sends `length` bytes as one message, with `fd` attached when it is not -1. 0 or the errno.
int wi_isolation_send(int sock, const void *bytes, size_t length, int fd);

/// Receives one message of at most `capacity` bytes into `bytes` (its length in `length`; 0 is
/// the end of the stream) and at most one attached descriptor into `fd` (-1 when none; a
/// message with more than one descriptor, or cut short, is refused with EBADMSG and every
/// descriptor it carried is closed). Waits at most `timeout_ms` (-1: no limit): ETIMEDOUT.
/// 0 or the errno.
int wi_isolation_receive(int sock, void *bytes, size_t capacity, size_t *length, int *fd, int timeout_ms);

/// An anonymous shared-memory file (memfd), close-on-exec and sealable, of `size` bytes. The descriptor, or
/// -1 with errno set.
int wi_isolation_memfd(const char *name, uint64_t size);

/// Seals the size of the memfd `fd` for good (no shrinking, no growing, no more seals): a
/// process that maps it cannot be made to fault past its end by whoever else holds it. 0 or
/// the errno.
int wi_isolation_seal_size(int fd);

/// Whether the size of the memfd `fd` is sealed (wi_isolation_seal_size).
int wi_isolation_size_is_sealed(int fd);

/// Fixes glibc's mmap threshold and trim threshold at `bytes` (M_MMAP_THRESHOLD,
/// M_TRIM_THRESHOLD): a block that large gets a mapping of its own, returned when freed, and
/// more free memory than that at the heap's top is given back. By default both grow with the
/// largest block freed so far (to 32 and 64 MiB), so one large decode leaves a worker holding
/// that much for good. 1 when the allocator took both.
int wi_isolation_fix_malloc_thresholds(int bytes);

/// The size of the open file `fd` (a memfd received from a worker), or -1.
int64_t wi_isolation_file_size(int fd);

/// Ends the process `pid` with SIGKILL and reaps it. The signal that ended it (0 when it exited
/// by itself; its status in `exit_status`), or -1 when it could not be reaped.
int wi_isolation_kill_and_reap(pid_t pid, int *exit_status);

/// Reaps `pid` if it has ended, without waiting: 1 and how it ended (`signal` 0 for an exit,
/// with `exit_status`), 0 while it runs, -1 on error.
int wi_isolation_try_reap(pid_t pid, int *signal, int *exit_status);

/// The bytes of address space this process has mapped now (VmSize), or 0 when unknown.
uint64_t wi_isolation_address_space(void);

/// Locks the calling process down for decoding (a worker calls it once, after start-up):
/// SIGKILL when its parent dies (and an exit now if the parent is already gone), no new
/// privileges, no core dumps, every descriptor above 3 closed, the address space limited to
/// `address_space_bytes` (0: unchanged), and a seccomp filter that allows what decoding needs
/// (memory, threads, time, the socket on descriptor 3, shared-memory files) and refuses the
/// rest: opening files and making sockets fail with EACCES, every other call outside the list
/// with EPERM. 0 or the errno of the step that failed.
int wi_isolation_lock_down(uint64_t address_space_bytes);

/// Limits the CPU time the process may still use to about `seconds` more than it has used:
/// the kernel ends it with SIGXCPU there. 0 or the errno.
int wi_isolation_limit_cpu(unsigned seconds);

#endif
