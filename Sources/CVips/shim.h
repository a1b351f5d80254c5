// libvips for HoardImaging, the only target that imports it. libvips' calls take variadic option lists,
// which Swift cannot call, so each call Hoard makes is wrapped here with its options fixed.
#ifndef HOARD_CVIPS_SHIM_H
#define HOARD_CVIPS_SHIM_H

#include <vips/vips.h>

/// Starts libvips once per process (later calls do nothing), turns its operation cache off (every picture is
/// decoded once, so caching would only hold memory) and runs each operation on its calling thread: Hoard already
/// spreads pictures over every core, and libvips' own worker threads would only contend with it (measured: a
/// quarter of the time on 512 px pictures). Returns 0 on success.
static inline int hoard_vips_start(void) {
    if (VIPS_INIT("hoard")) return -1;
    vips_cache_set_max(0);
    vips_concurrency_set(1);
    return 0;
}

/// Replaces *image by a copy of its pixels in memory, evaluating its pipeline once (the decode happens here).
/// Returns 0 on success; *image is released either way on failure.
static inline int hoard_vips_in_memory(VipsImage **image) {
    VipsImage *memory = vips_image_copy_memory(*image);
    g_object_unref(*image);
    *image = memory;
    return memory ? 0 : -1;
}

/// Shrinks an image to fit width×height (never enlarging) into a new image in memory. Returns 0 on success.
static inline int hoard_vips_shrink(VipsImage *in, int width, int height, VipsImage **out) {
    if (vips_thumbnail_image(in, out, width, "height", height, "size", VIPS_SIZE_DOWN, "no_rotate", TRUE, NULL)) return -1;
    return hoard_vips_in_memory(out);
}

/// Decodes an encoded picture and shrinks it to fit width×height (never enlarging) into an image in memory, with
/// streaming access while decoding, so smaller pictures can be made from it without decoding again. Stops at
/// the first decoding warning rather than drawing a damaged picture. Pixels are not rotated by an EXIF orientation,
/// so the output has the source's stored orientation. Returns 0 on success.
///
/// PNG is loaded explicitly and then shrunk: libvips 8.14's thumbnail reports broken PNG data only as a warning
/// whatever its fail_on. JPEG and WebP go through vips_thumbnail_buffer to keep shrink-on-load.
static inline int hoard_vips_thumbnail(const void *buffer, size_t length, int width, int height, int is_png, VipsImage **out) {
    if (!is_png) {
        if (vips_thumbnail_buffer((void *)buffer, length, out, width, "height", height, "size", VIPS_SIZE_DOWN,
                                  "no_rotate", TRUE, "fail_on", VIPS_FAIL_ON_WARNING, NULL)) return -1;
        return hoard_vips_in_memory(out);
    }
    VipsImage *in = vips_image_new_from_buffer(buffer, length, "", "access", VIPS_ACCESS_SEQUENTIAL,
                                               "fail_on", VIPS_FAIL_ON_WARNING, NULL);
    if (!in) return -1;
    int result = hoard_vips_shrink(in, width, height, out);
    g_object_unref(in);
    return result;
}

/// Encodes an image without metadata: format 0 PNG (compression 6), 1 JPEG (quality 85, optimised Huffman
/// tables), 2 WebP (quality 80, effort 4). The same image always gives the same bytes. Returns 0 on success;
/// free *buffer with g_free.
static inline int hoard_vips_save(VipsImage *image, int format, void **buffer, size_t *length) {
    switch (format) {
    case 0: return vips_pngsave_buffer(image, buffer, length, "compression", 6, "strip", TRUE, NULL);
    case 1: return vips_jpegsave_buffer(image, buffer, length, "Q", 85, "optimize_coding", TRUE, "strip", TRUE, NULL);
    case 2: return vips_webpsave_buffer(image, buffer, length, "Q", 80, "effort", 4, "strip", TRUE, NULL);
    default: return -1;
    }
}

/// Releases an image.
static inline void hoard_vips_release(VipsImage *image) { g_object_unref(image); }

/// Releases a buffer libvips allocated.
static inline void hoard_vips_free(void *buffer) { g_free(buffer); }

/// The message of the last libvips error on any thread, then clears it. Copy it before the next libvips call.
static inline const char *hoard_vips_error(void) { return vips_error_buffer(); }

/// Clears libvips' error buffer.
static inline void hoard_vips_clear_error(void) { vips_error_clear(); }

#endif
