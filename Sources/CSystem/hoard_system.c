#define _GNU_SOURCE
#include <unistd.h>
#include "hoard_system.h"

int hoard_syncfs(int fd) {
#if defined(__linux__)
    return syncfs(fd);
#else
    return fsync(fd);
#endif
}
