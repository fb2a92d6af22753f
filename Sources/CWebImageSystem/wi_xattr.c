#include "wi_system.h"
#include <sys/xattr.h>
#include <errno.h>

int wi_xattr_set(const char *path, const char *name, const void *value, size_t size) {
    return setxattr(path, name, value, size, 0) == 0 ? 0 : errno;
}

int wi_xattr_fset(int fd, const char *name, const void *value, size_t size) {
    return fsetxattr(fd, name, value, size, 0) == 0 ? 0 : errno;
}

long wi_xattr_fget(int fd, const char *name, void *value, size_t size) {
    ssize_t n = fgetxattr(fd, name, value, size);
    return n < 0 ? -1 : (long)n;
}

long wi_xattr_get(const char *path, const char *name, void *value, size_t size) {
    ssize_t n = getxattr(path, name, value, size);
    return n < 0 ? -1 : (long)n;
}

void wi_xattr_remove(const char *path, const char *name) {
    removexattr(path, name);
}
