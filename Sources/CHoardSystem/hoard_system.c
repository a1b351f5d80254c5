#define _GNU_SOURCE
#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <unistd.h>
#include "hoard_system.h"

int hoard_syncfs(int fd) {
#if defined(__linux__)
    return syncfs(fd);
#else
    return fsync(fd);
#endif
}

void hoard_start_writeback(int fd) {
#if defined(__linux__)
    (void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd;
#endif
}

void hoard_fix_mmap_threshold(int bytes) {
#if defined(__GLIBC__)
    (void)mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
#endif
}
