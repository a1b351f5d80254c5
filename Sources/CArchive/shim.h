#ifndef HOARD_CARCHIVE_SHIM_H
#define HOARD_CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>
#endif
