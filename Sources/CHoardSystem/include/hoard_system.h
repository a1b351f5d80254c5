#ifndef HOARD_SYSTEM_H
#define HOARD_SYSTEM_H

/// Flushes every dirty page of the file system that holds `fd` (Linux `syncfs`); elsewhere fsyncs `fd` only.
/// Returns 0 on success, -1 with errno set.
int hoard_syncfs(int fd);


/// Starts writing `fd`'s dirty pages to disk without waiting (Linux `sync_file_range` with
/// SYNC_FILE_RANGE_WRITE); a later `hoard_syncfs` then has less left to wait for. Does nothing elsewhere.
void hoard_start_writeback(int fd);

#endif
