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

/// Starts the program at `path` with `argv` and `envp` (both NULL-terminated) in `directory`: its standard input is
/// `input`, its output `output`, its errors go to /dev/null, and no other descriptor of this process reaches it.
/// `posix_spawn` directly: Foundation's `Process.run()` was seen to crash (a `memmove` inside it) while the process
/// held more than 1,024 descriptors. Returns the child's pid, or -1 with errno set.
int hoard_spawn(const char *path, char *const argv[], char *const envp[], const char *directory, int input, int output);

#endif
