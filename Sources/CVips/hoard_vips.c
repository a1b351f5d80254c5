// libvips through dlopen: see hoard_vips.h. Enum values are libvips 8's ABI (soname libvips.so.42), which
// hoard_vips_start checks before anything else is called.
#include "hoard_vips.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

enum { SIZE_DOWN = 2, FAIL_ON_WARNING = 3, ACCESS_SEQUENTIAL = 1, TRUE_ = 1, ABI = 42 };

static struct {
    int (*init)(const char *argv0);
    int (*version)(int flag);
    void (*cache_set_max)(int max);
    void (*concurrency_set)(int concurrency);
    VipsImage *(*image_copy_memory)(VipsImage *image);
    int (*thumbnail_image)(VipsImage *in, VipsImage **out, int width, ...);
    int (*thumbnail_buffer)(void *buf, size_t len, VipsImage **out, int width, ...);
    VipsImage *(*image_new_from_buffer)(const void *buf, size_t len, const char *option_string, ...);
    int (*pngsave_buffer)(VipsImage *in, void **buf, size_t *len, ...);
    int (*jpegsave_buffer)(VipsImage *in, void **buf, size_t *len, ...);
    int (*webpsave_buffer)(VipsImage *in, void **buf, size_t *len, ...);
    int (*image_get_width)(const VipsImage *image);
    int (*image_get_height)(const VipsImage *image);
    const char *(*error_buffer)(void);
    void (*error_clear)(void);
    void (*object_unref)(void *object);
    void (*free)(void *memory);
} vips;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int started = -1;
static char load_error[512];

static void *find(void *library, void *fallback, const char *name, int *missing) {
    void *symbol = dlsym(library, name);
    if (!symbol && fallback) symbol = dlsym(fallback, name);
    if (!symbol && !*missing) {
        *missing = 1;
        snprintf(load_error, sizeof load_error, "libvips has no %s: Hoard needs libvips 8.12 or later", name);
    }
    return symbol;
}

static void load(void) {
    static const char *names[] = {
        "libvips.so.42", "libvips.42.dylib", "/opt/homebrew/lib/libvips.42.dylib", "/usr/local/lib/libvips.42.dylib",
    };
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !library; i++) library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error,
                 "cannot load libvips (%s); install it: apt-get install libvips42, or brew install vips", dlerror());
        return;
    }
    // GObject's and GLib's functions come with libvips (its dependencies); look there first, then globally.
    void *global = dlopen(NULL, RTLD_NOW);
    int missing = 0;
#define FIND(field, name) *(void **)&vips.field = find(library, global, name, &missing)
    FIND(init, "vips_init");
    FIND(version, "vips_version");
    FIND(cache_set_max, "vips_cache_set_max");
    FIND(concurrency_set, "vips_concurrency_set");
    FIND(image_copy_memory, "vips_image_copy_memory");
    FIND(thumbnail_image, "vips_thumbnail_image");
    FIND(thumbnail_buffer, "vips_thumbnail_buffer");
    FIND(image_new_from_buffer, "vips_image_new_from_buffer");
    FIND(pngsave_buffer, "vips_pngsave_buffer");
    FIND(jpegsave_buffer, "vips_jpegsave_buffer");
    FIND(webpsave_buffer, "vips_webpsave_buffer");
    FIND(image_get_width, "vips_image_get_width");
    FIND(image_get_height, "vips_image_get_height");
    FIND(error_buffer, "vips_error_buffer");
    FIND(error_clear, "vips_error_clear");
    FIND(object_unref, "g_object_unref");
    FIND(free, "g_free");
#undef FIND
    if (missing) return;
    if (vips.version(3) - vips.version(5) != ABI) {
        snprintf(load_error, sizeof load_error, "libvips has ABI %d; Hoard needs %d (libvips 8)",
                 vips.version(3) - vips.version(5), ABI);
        return;
    }
    if (vips.init("hoard")) {
        snprintf(load_error, sizeof load_error, "libvips did not start: %s", vips.error_buffer());
        return;
    }
    vips.cache_set_max(0);
    vips.concurrency_set(1);
    started = 0;
}

int hoard_vips_start(void) {
    pthread_once(&once, load);
    return started;
}

/// Replaces *image by a copy held in memory. Returns 0 on success; *image is released either way.
static int in_memory(VipsImage **image) {
    VipsImage *memory = vips.image_copy_memory(*image);
    vips.object_unref(*image);
    *image = memory;
    return memory ? 0 : -1;
}

int hoard_vips_shrink(VipsImage *in, int width, int height, VipsImage **out) {
    if (vips.thumbnail_image(in, out, width, "height", height, "size", SIZE_DOWN, "no_rotate", TRUE_, NULL)) return -1;
    return in_memory(out);
}

int hoard_vips_thumbnail(const void *buffer, size_t length, int width, int height, int is_png, VipsImage **out) {
    if (!is_png) {
        if (vips.thumbnail_buffer((void *)buffer, length, out, width, "height", height, "size", SIZE_DOWN, "no_rotate", TRUE_,
                                  "fail_on", FAIL_ON_WARNING, NULL)) return -1;
        return in_memory(out);
    }
    VipsImage *in = vips.image_new_from_buffer(buffer, length, "", "access", ACCESS_SEQUENTIAL, "fail_on", FAIL_ON_WARNING, NULL);
    if (!in) return -1;
    int result = hoard_vips_shrink(in, width, height, out);
    vips.object_unref(in);
    return result;
}

int hoard_vips_save(VipsImage *image, int format, void **buffer, size_t *length) {
    switch (format) {
    case 0: return vips.pngsave_buffer(image, buffer, length, "compression", 6, "strip", TRUE_, NULL);
    case 1: return vips.jpegsave_buffer(image, buffer, length, "Q", 85, "optimize_coding", TRUE_, "strip", TRUE_, NULL);
    case 2: return vips.webpsave_buffer(image, buffer, length, "Q", 80, "effort", 4, "strip", TRUE_, NULL);
    default: return -1;
    }
}

int hoard_vips_width(VipsImage *image) { return vips.image_get_width(image); }
int hoard_vips_height(VipsImage *image) { return vips.image_get_height(image); }
void hoard_vips_release(VipsImage *image) { vips.object_unref(image); }
void hoard_vips_free(void *buffer) { vips.free(buffer); }

const char *hoard_vips_error(void) {
    if (started != 0) return load_error[0] ? load_error : "libvips is not loaded";
    return vips.error_buffer();
}

void hoard_vips_clear_error(void) {
    if (started == 0) vips.error_clear();
}
