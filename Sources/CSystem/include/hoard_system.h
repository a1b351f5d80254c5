#ifndef HOARD_SYSTEM_H
#define HOARD_SYSTEM_H

/// Flushes every dirty page of the file system that holds `fd` (Linux `syncfs`); elsewhere fsyncs `fd` only.
/// Returns 0 on success, -1 with errno set.
int hoard_syncfs(int fd);

#endif
