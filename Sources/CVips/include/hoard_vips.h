// Hoard's whole use of libvips, behind a handful of functions. libvips is loaded with dlopen on first use
// (hoard_vips_start), not linked: it brings about a hundred shared libraries, and linking them made every
// `hoard` command pay for loading them at start-up (about half of a warm `hoard join`).
#ifndef HOARD_VIPS_H
#define HOARD_VIPS_H

#include <stddef.h>

/// libvips' image object, opaque here.
typedef struct _VipsImage VipsImage;

/// Loads and starts libvips (once per process; later calls return the first result): no operation cache, one
/// thread per operation (the caller runs pictures in parallel). Returns 0, or -1 with hoard_vips_error() set, for
/// example when libvips is not installed.
int hoard_vips_start(void);

/// Shrinks `in` to fit `width`×`height` (never enlarging) into a new image held in memory.
int hoard_vips_shrink(VipsImage *in, int width, int height, VipsImage **out);

/// Decodes an encoded picture and shrinks it to fit `width`×`height` (never enlarging) into an image in memory,
/// stopping at the first decoding warning rather than drawing a damaged picture; pixels are not rotated by an EXIF
/// orientation. PNG is loaded explicitly and then shrunk (libvips 8.14's thumbnail reports broken PNG data only as
/// a warning whatever its fail_on); JPEG and WebP go through vips_thumbnail_buffer to keep shrink-on-load.
int hoard_vips_thumbnail(const void *buffer, size_t length, int width, int height, int is_png, VipsImage **out);

/// Encodes `image` without metadata as PNG (0), JPEG (1) or WebP (2); free *buffer with hoard_vips_free.
int hoard_vips_save(VipsImage *image, int format, void **buffer, size_t *length);

int hoard_vips_width(VipsImage *image);
int hoard_vips_height(VipsImage *image);
void hoard_vips_release(VipsImage *image);
void hoard_vips_free(void *buffer);

/// The last error's text (libvips' error buffer, or why libvips could not be loaded).
const char *hoard_vips_error(void);
void hoard_vips_clear_error(void);

#endif
