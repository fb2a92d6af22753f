// See wi_isolation.h. Every call retries on EINTR; nothing here allocates on the heap after a
// worker's lock-down except what libseccomp needs while building its filter.
#define _GNU_SOURCE
#include "wi_isolation.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int wi_isolation_socketpair(int fds[2]) {
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0 ? 0 : errno;
}

int wi_isolation_spawn(const char *path, char *const argv[], char *const envp[], int child_fd, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    int status = posix_spawn_file_actions_init(&actions);
    if (status != 0) return status;
    // dup2 clears close-on-exec on the duplicate; the original keeps it and closes at exec.
    if ((status = posix_spawn_file_actions_adddup2(&actions, child_fd, 3)) == 0
        && (status = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) == 0) {
        posix_spawnattr_t attributes;
        if ((status = posix_spawnattr_init(&attributes)) == 0) {
            // The worker starts with default signal handling and nothing blocked, whatever the
            // server's threads had set.
            sigset_t all, none;
            sigfillset(&all);
            sigemptyset(&none);
            posix_spawnattr_setsigdefault(&attributes, &all);
            posix_spawnattr_setsigmask(&attributes, &none);
            posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
            status = posix_spawn(pid, path, &actions, &attributes, argv, envp);
            posix_spawnattr_destroy(&attributes);
        }
    }
    posix_spawn_file_actions_destroy(&actions);
    return status;
}

int wi_isolation_send(int sock, const void *bytes, size_t length, int fd) {
    struct iovec vector = { .iov_base = (void *)bytes, .iov_len = length };
    union { struct cmsghdr header; char space[CMSG_SPACE(sizeof(int))]; } control;
    struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1 };
    if (fd >= 0) {
        memset(&control, 0, sizeof control);
        message.msg_control = control.space;
        message.msg_controllen = sizeof control.space;
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(header), &fd, sizeof(int));
    }
    for (;;) {
        ssize_t sent = sendmsg(sock, &message, MSG_NOSIGNAL);
        if (sent == (ssize_t)length) return 0;
        if (sent >= 0) return EMSGSIZE;
        if (errno != EINTR) return errno;
    }
}

int wi_isolation_receive(int sock, void *bytes, size_t capacity, size_t *length, int *fd, int timeout_ms) {
    *fd = -1;
    *length = 0;
    struct pollfd watched = { .fd = sock, .events = POLLIN };
    // A signal (a worker's SIGCHLD) interrupts the wait: it goes on for what is left of it.
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int left = timeout_ms;
    for (;;) {
        int ready = poll(&watched, 1, left);
        if (ready > 0) break;
        if (ready == 0) return ETIMEDOUT;
        if (errno != EINTR) return errno;
        if (timeout_ms >= 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            long long spent = (now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1000000;
            if (spent >= timeout_ms) return ETIMEDOUT;
            left = (int)(timeout_ms - spent);
        }
    }
    struct iovec vector = { .iov_base = bytes, .iov_len = capacity };
    // Room for several descriptors, so that a message carrying too many is seen and closed.
    union { struct cmsghdr header; char space[CMSG_SPACE(sizeof(int) * 8)]; } control;
    struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.space,
                              .msg_controllen = sizeof control.space };
    ssize_t received;
    do { received = recvmsg(sock, &message, MSG_CMSG_CLOEXEC); } while (received < 0 && errno == EINTR);
    if (received < 0) return errno;
    int count = 0, refused = (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) { refused = 1; continue; }
        size_t fds = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t index = 0; index < fds; index++) {
            int descriptor;
            memcpy(&descriptor, CMSG_DATA(header) + index * sizeof(int), sizeof(int));
            if (count++ == 0) *fd = descriptor; else close(descriptor);
        }
    }
    if (count > 1 || refused) {
        if (*fd >= 0) close(*fd);
        *fd = -1;
        return EBADMSG;
    }
    *length = (size_t)received;
    return 0;
}

int wi_isolation_memfd(const char *name, uint64_t size) {
    int fd = (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    int status;
    do { status = ftruncate(fd, (off_t)size); } while (status != 0 && errno == EINTR);
    if (status != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int wi_isolation_seal_size(int fd) {
    return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0 ? 0 : errno;
}

int wi_isolation_fix_malloc_thresholds(int bytes) {
    return bytes > 0 && mallopt(M_MMAP_THRESHOLD, bytes) == 1 && mallopt(M_TRIM_THRESHOLD, bytes) == 1;
}

int wi_isolation_size_is_sealed(int fd) {
    int seals = fcntl(fd, F_GET_SEALS);
    return seals >= 0 && (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) == (F_SEAL_SHRINK | F_SEAL_GROW);
}

int64_t wi_isolation_file_size(int fd) {
    struct stat info;
    return fstat(fd, &info) == 0 ? (int64_t)info.st_size : -1;
}

static int reaped(int status, int *exit_status) {
    *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

int wi_isolation_kill_and_reap(pid_t pid, int *exit_status) {
    kill(pid, SIGKILL);
    int status;
    pid_t done;
    do { done = waitpid(pid, &status, 0); } while (done < 0 && errno == EINTR);
    return done == pid ? reaped(status, exit_status) : -1;
}

int wi_isolation_try_reap(pid_t pid, int *signal, int *exit_status) {
    int status;
    pid_t done;
    do { done = waitpid(pid, &status, WNOHANG); } while (done < 0 && errno == EINTR);
    if (done == 0) return 0;
    if (done != pid) return -1;
    *signal = reaped(status, exit_status);
    return 1;
}

uint64_t wi_isolation_address_space(void) {
    FILE *file = fopen("/proc/self/statm", "re");
    if (!file) return 0;
    unsigned long long pages = 0;
    int matched = fscanf(file, "%llu", &pages);
    fclose(file);
    return matched == 1 ? (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

/// The seccomp filter: an allow list, EPERM for the rest.
static int install_filter(void) {
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!filter) return ENOMEM;
    static const int allowed[] = {
        // the socket to the parent, the shared-memory files, descriptors already open
        SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(pread64), SCMP_SYS(pwrite64),
        SCMP_SYS(lseek), SCMP_SYS(close), SCMP_SYS(fstat), SCMP_SYS(fcntl), SCMP_SYS(recvmsg), SCMP_SYS(sendmsg),
        SCMP_SYS(recvfrom), SCMP_SYS(sendto), SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(memfd_create), SCMP_SYS(ftruncate),
        // memory
        SCMP_SYS(brk), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(mprotect), SCMP_SYS(madvise),
        SCMP_SYS(membarrier),
        // threads, their synchronisation, signals, time
        SCMP_SYS(futex), SCMP_SYS(set_robust_list), SCMP_SYS(rseq), SCMP_SYS(sched_yield), SCMP_SYS(sched_getaffinity),
        SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid),
        SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack),
        SCMP_SYS(restart_syscall), SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(clock_nanosleep),
        SCMP_SYS(nanosleep), SCMP_SYS(gettimeofday), SCMP_SYS(getrusage), SCMP_SYS(sysinfo), SCMP_SYS(uname),
        SCMP_SYS(getrandom), SCMP_SYS(eventfd2), SCMP_SYS(pipe2), SCMP_SYS(exit), SCMP_SYS(exit_group),
    };
    int status = 0;
    for (size_t index = 0; index < sizeof allowed / sizeof allowed[0] && status == 0; index++) {
        status = seccomp_rule_add(filter, SCMP_ACT_ALLOW, allowed[index], 0);
    }
    // New threads, never new processes; clone3's arguments cannot be inspected, so glibc is
    // told it is missing and falls back to clone.
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                               SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    // fstat through fstatat(fd, "", AT_EMPTY_PATH), as glibc makes it.
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(newfstatat), 1,
                                               SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
    // Its own limits only (the CPU limit is moved before each decode), signals to itself only
    // (abort), its threads' names only.
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1, SCMP_A0(SCMP_CMP_EQ, 0));
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME));
    // fontconfig asks whether each font file it matches is readable before using the face it
    // loaded at start-up: every such question is answered yes without being asked (the file
    // itself can still not be opened, and nothing is learnt of the file system).
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ERRNO(0), SCMP_SYS(access), 0);
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ERRNO(0), SCMP_SYS(faccessat), 0);
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ERRNO(0), SCMP_SYS(faccessat2), 0);
    // Files and the network: refused with the error a library handles as "not allowed".
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(open), 0);
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(openat), 0);
    if (status == 0) status = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 0);
    if (status == 0) status = seccomp_load(filter);
    seccomp_release(filter);
    return status < 0 ? -status : status;
}

int wi_isolation_lock_down(uint64_t address_space_bytes) {
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return errno;
    // The parent may have died before the signal was asked for: then nobody waits for this one.
    if (getppid() != parent || parent == 1) _exit(0);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    struct rlimit none = { 0, 0 };
    setrlimit(RLIMIT_CORE, &none);
    if (syscall(SYS_close_range, 4U, ~0U, 0) != 0) {
        for (int fd = 4; fd < 1024; fd++) close(fd);
    }
    if (address_space_bytes > 0) {
        struct rlimit space = { (rlim_t)address_space_bytes, (rlim_t)address_space_bytes };
        if (setrlimit(RLIMIT_AS, &space) != 0) return errno;
    }
    return install_filter();
}

int wi_isolation_limit_cpu(unsigned seconds) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return errno;
    rlim_t used = (rlim_t)usage.ru_utime.tv_sec + (rlim_t)usage.ru_stime.tv_sec + 1;
    // The soft limit only: an unprivileged process could never raise a hard limit it lowered.
    struct rlimit limit;
    if (getrlimit(RLIMIT_CPU, &limit) != 0) return errno;
    limit.rlim_cur = used + seconds;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_cur > limit.rlim_max) limit.rlim_cur = limit.rlim_max;
    return setrlimit(RLIMIT_CPU, &limit) == 0 ? 0 : errno;
}
