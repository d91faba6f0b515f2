#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

int lw_fail(lw_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return -1;
}

static void oom(size_t n)
{
    fprintf(stderr, "layerwise: out of memory (%zu bytes)\n", n);
    abort();
}

void *lw_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *lw_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *lw_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *lw_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = lw_malloc(n);
    memcpy(d, s, n);
    return d;
}

char *lw_read_file(const char *path, size_t *len, lw_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        lw_fail(err, 2, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = lw_malloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            if (cap >= ((size_t)256 << 20)) {
                fclose(f);
                free(buf);
                lw_fail(err, 2, "%s: file larger than 256 MiB", path);
                return NULL;
            }
            cap *= 2;
            buf = lw_realloc(buf, cap);
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        lw_fail(err, 2, "%s: read error", path);
        return NULL;
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

int lw_write_file_atomic(const char *path, lw_writer_fn write, void *user, lw_error *err)
{
    size_t n = strlen(path);
    char *tmp = lw_malloc(n + 16);
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        lw_fail(err, 1, "%s: cannot create: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(tmp);
        free(tmp);
        return lw_fail(err, 1, "%s: cannot open for writing", path);
    }
    int rc = write(f, user, err);
    if (fflush(f) != 0 && rc == 0) rc = lw_fail(err, 1, "%s: write failed: %s", path, strerror(errno));
    if (fclose(f) != 0 && rc == 0) rc = lw_fail(err, 1, "%s: write failed: %s", path, strerror(errno));
    if (rc == 0) {
        /* mkstemp makes 0600; give the usual 0644 less umask */
        mode_t um = umask(0);
        umask(um);
        chmod(tmp, 0666 & ~um);
        if (rename(tmp, path) != 0) rc = lw_fail(err, 1, "%s: cannot rename into place: %s", path, strerror(errno));
    }
    if (rc != 0) unlink(tmp);
    free(tmp);
    return rc;
}

double lw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void lw_buf_printf(lw_buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if (b->s && (size_t)k < room) {
            b->len += (size_t)k;
            return;
        }
        size_t need = b->len + (size_t)k + 1;
        b->cap = b->cap ? b->cap * 2 : 256;
        while (b->cap < need) b->cap *= 2;
        b->s = lw_realloc(b->s, b->cap);
    }
}

void lw_buf_free(lw_buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}
