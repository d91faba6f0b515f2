#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <errno.h>
#include <signal.h>
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

_Noreturn void lw_out_of_memory(size_t n)
{
    fprintf(stderr, "layerwise: out of memory (%zu bytes)\n", n);
    abort();
}

void *lw_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) lw_out_of_memory(n);
    return p;
}

void *lw_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) lw_out_of_memory(n * size);
    return p;
}

void *lw_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) lw_out_of_memory(n);
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

/* While a temporary exists, SIGINT, SIGTERM, SIGHUP and SIGQUIT first
 * remove it, then get their previous disposition (so `timeout` or Ctrl-C
 * during a long render leaves no PATH.tmp.XXXXXX behind). Only SIGKILL
 * can still leave one. */
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_CLEANUP_SIGNALS (int)(sizeof cleanup_signals / sizeof cleanup_signals[0])
static struct sigaction cleanup_old[N_CLEANUP_SIGNALS];
static char *volatile cleanup_tmp;

static void cleanup_on_signal(int sig)
{
    char *t = cleanup_tmp;
    if (t) unlink(t);
    for (int i = 0; i < N_CLEANUP_SIGNALS; i++)
        if (cleanup_signals[i] == sig) sigaction(sig, &cleanup_old[i], NULL);
    raise(sig); /* delivered once this handler returns, to the old disposition */
}

static void cleanup_arm(char *tmp)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cleanup_on_signal;
    sigemptyset(&sa.sa_mask);
    cleanup_tmp = tmp;
    for (int i = 0; i < N_CLEANUP_SIGNALS; i++) sigaction(cleanup_signals[i], &sa, &cleanup_old[i]);
}

static void cleanup_disarm(void)
{
    for (int i = 0; i < N_CLEANUP_SIGNALS; i++) {
        struct sigaction cur;
        /* a signal handled meanwhile already put its old action back */
        if (sigaction(cleanup_signals[i], NULL, &cur) == 0 && cur.sa_handler == cleanup_on_signal)
            sigaction(cleanup_signals[i], &cleanup_old[i], NULL);
    }
    cleanup_tmp = NULL;
}

int lw_write_file_atomic(const char *path, lw_writer_fn write, void *user, lw_error *err)
{
    size_t n = strlen(path);
    char *tmp = lw_malloc(n + 16);
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
    sigset_t block, prev;
    sigemptyset(&block);
    for (int i = 0; i < N_CLEANUP_SIGNALS; i++) sigaddset(&block, cleanup_signals[i]);
    /* no signal between creating the temporary and arming its removal */
    pthread_sigmask(SIG_BLOCK, &block, &prev);
    int fd = mkstemp(tmp);
    if (fd >= 0) cleanup_arm(tmp);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    if (fd < 0) {
        lw_fail(err, 1, "%s: cannot create: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(tmp);
        cleanup_disarm();
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
    cleanup_disarm();
    free(tmp);
    return rc;
}

int lw_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, prev;
    sigfillset(&all);
    /* faults stay with the thread that causes them */
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    sigdelset(&all, SIGABRT);
    sigdelset(&all, SIGTRAP);
    pthread_sigmask(SIG_BLOCK, &all, &prev); /* the new thread inherits this mask */
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
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

const char *lw_format_bytes(double b, char *buf, size_t n)
{
    if (b < 1e3) snprintf(buf, n, "%.0f B", b);
    else if (b < 1e6) snprintf(buf, n, "%.1f KB", b / 1e3);
    else if (b < 1e9) snprintf(buf, n, "%.1f MB", b / 1e6);
    else if (b < 1e12) snprintf(buf, n, "%.2f GB", b / 1e9);
    else snprintf(buf, n, "%.2f TB", b / 1e12);
    return buf;
}
