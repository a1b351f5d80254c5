#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/types.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <unistd.h>
#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#elif defined(__APPLE__)
#include <pthread.h>
#include <sys/qos.h>
#endif
#include "hoard_system.h"

int hoard_syncfs(int fd) {
#if defined(__linux__)
    return syncfs(fd);
#else
    return fsync(fd);
#endif
}

int hoard_lower_thread_priority(int niceness) {
#if defined(__linux__)
    // On Linux a nice value is a thread's own (PRIO_PROCESS with a thread id); threads it starts inherit it.
    pid_t thread = (pid_t)syscall(SYS_gettid);
    int current = getpriority(PRIO_PROCESS, (id_t)thread);
    if (current >= niceness) return 0;
    return setpriority(PRIO_PROCESS, (id_t)thread, niceness);
#elif defined(__APPLE__)
    (void)niceness;
    return pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0) == 0 ? 0 : -1;
#else
    (void)niceness;
    return 0;
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

void hoard_limit_malloc_arenas(int count) {
#if defined(__GLIBC__)
    (void)mallopt(M_ARENA_MAX, count);
#else
    (void)count;
#endif
}

static int hoard_spawn_stream(posix_spawn_file_actions_t *actions, int descriptor, int target, int flags) {
    if (descriptor == HOARD_SPAWN_INHERIT) return 0;
    if (descriptor == HOARD_SPAWN_NULL) return posix_spawn_file_actions_addopen(actions, target, "/dev/null", flags, 0);
    return posix_spawn_file_actions_adddup2(actions, descriptor, target);
}

int hoard_spawn(const char *path, char *const argv[], char *const envp[], const char *directory, int input, int output,
                int errors) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int status = posix_spawn_file_actions_init(&actions);
    if (status != 0) { errno = status; return -1; }
    status = posix_spawnattr_init(&attributes);
    if (status != 0) {
        posix_spawn_file_actions_destroy(&actions);
        errno = status;
        return -1;
    }
    if (status == 0) status = hoard_spawn_stream(&actions, input, 0, O_RDONLY);
    if (status == 0) status = hoard_spawn_stream(&actions, output, 1, O_WRONLY);
    if (status == 0) status = hoard_spawn_stream(&actions, errors, 2, O_WRONLY);
    if (status == 0 && directory != NULL) status = posix_spawn_file_actions_addchdir_np(&actions, directory);
#if defined(__linux__)
    if (status == 0) status = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#elif defined(__APPLE__)
    if (status == 0) status = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_CLOEXEC_DEFAULT);
#endif
    pid_t pid = -1;
    if (status == 0) status = posix_spawn(&pid, path, &actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (status != 0) { errno = status; return -1; }
    return (int)pid;
}
