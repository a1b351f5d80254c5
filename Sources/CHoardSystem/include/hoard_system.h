#ifndef HOARD_SYSTEM_H
#define HOARD_SYSTEM_H

/// Flushes every dirty page of the file system that holds `fd` (Linux `syncfs`); elsewhere fsyncs `fd` only.
/// Returns 0 on success, -1 with errno set.
int hoard_syncfs(int fd);


/// Starts writing `fd`'s dirty pages to disk without waiting (Linux `sync_file_range` with
/// SYNC_FILE_RANGE_WRITE); a later `hoard_syncfs` then has less left to wait for. Does nothing elsewhere.
void hoard_start_writeback(int fd);

/// Makes glibc serve every allocation of `bytes` or more with its own mapping, given back to the system when freed.
/// By default glibc raises that threshold after the first such free, so later large arrays come from the heap and
/// their freed space stays resident. Does nothing elsewhere.
void hoard_fix_mmap_threshold(int bytes);

/// Caps glibc's allocation arenas at `count`. Each thread that allocates otherwise may get an arena of its own (up to
/// eight per core), each keeping its freed space. Does nothing elsewhere.
void hoard_limit_malloc_arenas(int count);

/// Lowers the calling thread's CPU priority to `niceness` (0 to 19: higher yields more) unless it is lower already:
/// Linux's per-thread nice value, which threads it then starts inherit; Apple's utility QoS class. A thread at nice 10
/// gets about a tenth of a core that a nice-0 thread also wants. Returns 0, or -1 with errno set.
int hoard_lower_thread_priority(int niceness);

/// For `hoard_spawn`'s `input`, `output` and `errors`: the child gets this process's own descriptor.
#define HOARD_SPAWN_INHERIT (-1)
/// For `hoard_spawn`'s `input`, `output` and `errors`: the child gets /dev/null.
#define HOARD_SPAWN_NULL (-2)

/// Starts the program at `path` with `argv` and `envp` (both NULL-terminated) in `directory` (NULL: this process's):
/// its standard input, output and errors are `input`, `output` and `errors` (a descriptor, `HOARD_SPAWN_INHERIT` or
/// `HOARD_SPAWN_NULL`), and no other descriptor of this process reaches it. `posix_spawn` directly: Foundation's
/// `Process.run()` was seen to crash (a `memmove` inside it) while the process held more than 1,024 descriptors, and
/// once while tests launched programs from several threads. Returns the child's pid, or -1 with errno set.
int hoard_spawn(const char *path, char *const argv[], char *const envp[], const char *directory, int input, int output,
                int errors);

#endif
