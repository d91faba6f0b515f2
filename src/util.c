#define _GNU_SOURCE /* fopencookie; POSIX 2008 besides */
#include "util.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdint.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <fcntl.h>
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

/* ---------- out of memory: one policy (util.h) ---------- */

static void (*fatal_cleanup)(void);
static atomic_int oom_taken;        /* a thread is reporting: the others wait */
static _Atomic pthread_t oom_owner;
static atomic_long alloc_countdown; /* tests: the allocation that fails */

void lw_set_fatal_cleanup(void (*fn)(void)) { fatal_cleanup = fn; }

void lw__fail_allocation(long nth) { atomic_store(&alloc_countdown, nth > 0 ? nth : 0); }

/* Whether this allocation is the one a test asked to fail. */
static int injected_failure(void)
{
    if (atomic_load_explicit(&alloc_countdown, memory_order_relaxed) <= 0) return 0;
    return atomic_fetch_sub(&alloc_countdown, 1) == 1;
}

_Noreturn void lw_out_of_memory(size_t n)
{
    int was = atomic_exchange(&oom_taken, 1);
    if (was && !pthread_equal(atomic_load(&oom_owner), pthread_self())) {
        /* another thread is reporting and will end the process: its
         * cleanup must finish, so this one must not end it first */
        for (;;) pause();
    }
    if (!was) {
        atomic_store(&oom_owner, pthread_self());
        /* a second failure inside the cleanup comes back here: the
         * message and the exit, without the cleanup again */
        if (fatal_cleanup) fatal_cleanup();
    }
    char msg[80];
    int k = snprintf(msg, sizeof msg, "layerwise: out of memory (%zu bytes)\n", n);
    if (k > 0) {
        ssize_t w = write(STDERR_FILENO, msg, (size_t)k < sizeof msg ? (size_t)k : sizeof msg - 1);
        (void)w;
    }
    _exit(LW_EXIT_OOM);
}
#define oom lw_out_of_memory

void *lw_malloc(size_t n)
{
    void *p = injected_failure() ? NULL : malloc(n ? n : 1);
    if (!p) lw_out_of_memory(n);
    return p;
}

void *lw_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) lw_out_of_memory(SIZE_MAX);
    void *p = injected_failure() ? NULL : calloc(n ? n : 1, size ? size : 1);
    if (!p) lw_out_of_memory(n * size);
    return p;
}

void *lw_realloc(void *p, size_t n)
{
    void *q = injected_failure() ? NULL : realloc(p, n ? n : 1);
    if (!q) lw_out_of_memory(n);
    return q;
}

/* The guard around the font libraries (util.h). The message is made
 * before the call: nothing but write and _exit is safe in the handler. */
static char guard_msg[600];
static size_t guard_len;
static const int guard_sigs[] = {SIGSEGV, SIGBUS, SIGTRAP, SIGABRT};
#define N_GUARD_SIGS (int)(sizeof guard_sigs / sizeof *guard_sigs)
static struct sigaction guard_old[N_GUARD_SIGS];
static int guard_on;

static void on_library_crash(int sig)
{
    (void)sig;
    int was = atomic_exchange(&oom_taken, 1);
    if (was) /* out of memory on another thread: it reports and exits */
        for (;;) pause();
    if (fatal_cleanup) fatal_cleanup();
    ssize_t w = write(STDERR_FILENO, guard_msg, guard_len);
    (void)w;
    _exit(LW_EXIT_OOM);
}

void lw_library_guard(const char *what)
{
    if (!what) {
        if (guard_on)
            for (int i = 0; i < N_GUARD_SIGS; i++) sigaction(guard_sigs[i], &guard_old[i], NULL);
        guard_on = 0;
        return;
    }
    lw_buf b = {0};
    lw_buf_printf(&b, "layerwise: ");
    lw_text_printable(&b, what);
    lw_buf_printf(&b, ": the font library (fontconfig, pango) crashed, as it does when memory runs out: out of memory\n");
    guard_len = b.len < sizeof guard_msg ? b.len : sizeof guard_msg - 1;
    memcpy(guard_msg, b.s, guard_len);
    if (guard_msg[guard_len - 1] != '\n') guard_msg[guard_len - 1] = '\n';
    lw_buf_free(&b);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_library_crash;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_GUARD_SIGS; i++) sigaction(guard_sigs[i], &sa, &guard_old[i]);
    guard_on = 1;
}

/* cJSON allocates through the same policy: its results need no check for
 * NULL (a NULL from cJSON_Parse is then always a syntax error), and a
 * document is never printed with a part missing. Set before main, so every
 * program built on src/ (the CLI, the tests, the fuzzers) has it. */
static void *cjson_malloc(size_t n) { return lw_malloc(n); }

__attribute__((constructor)) static void cjson_policy(void)
{
    cJSON_Hooks h = {cjson_malloc, free};
    cJSON_InitHooks(&h);
}

char *lw_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = lw_malloc(n);
    memcpy(d, s, n);
    return d;
}

/* What a path that is not a regular file names, for the refusal. */
static const char *file_kind_name(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO or pipe";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

char *lw_read_file(const char *path, size_t *len, lw_error *err)
{
    /* opened without blocking (a FIFO with no writer would wait in open()
     * for good), then only a regular file is read: a FIFO, a pipe or a
     * terminal (/dev/stdin in the TUI) could block the read for good, and
     * the TUI's keys with it */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        lw_fail(err, 2, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = errno;
        close(fd);
        if (S_ISREG(st.st_mode)) lw_fail(err, 2, "%s: cannot open: %s", path, strerror(e));
        else lw_fail(err, 2, "%s: is %s; inputs are read from regular files only", path, file_kind_name(st.st_mode));
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        lw_fail(err, 1, "%s: cannot open: %s", path, strerror(errno));
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
 * during a long render leaves no PATH.tmp.XXXXXX behind); SIGPIPE and
 * SIGXFSZ are ignored while writing, so they come back as errors. SIGKILL
 * and a crash (SIGSEGV, an abort) can still leave one. A signal the process
 * ignores (SIGHUP under nohup) keeps being ignored: it must not remove the
 * temporary of a write that goes on. */
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_CLEANUP_SIGNALS (int)(sizeof cleanup_signals / sizeof cleanup_signals[0])
static struct sigaction cleanup_old[N_CLEANUP_SIGNALS];
static unsigned char cleanup_armed[N_CLEANUP_SIGNALS];
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
    for (int i = 0; i < N_CLEANUP_SIGNALS; i++) {
        cleanup_armed[i] = 0;
        if (sigaction(cleanup_signals[i], NULL, &cleanup_old[i]) != 0) continue;
        if (cleanup_old[i].sa_handler == SIG_IGN) continue; /* nohup: stays ignored */
        if (sigaction(cleanup_signals[i], &sa, NULL) == 0) cleanup_armed[i] = 1;
    }
}

static void cleanup_disarm(void)
{
    for (int i = 0; i < N_CLEANUP_SIGNALS; i++) {
        struct sigaction cur;
        /* a signal handled meanwhile already put its old action back */
        if (cleanup_armed[i] && sigaction(cleanup_signals[i], NULL, &cur) == 0 &&
            cur.sa_handler == cleanup_on_signal)
            sigaction(cleanup_signals[i], &cleanup_old[i], NULL);
        cleanup_armed[i] = 0;
    }
    cleanup_tmp = NULL;
}

/* ---- output files ---- */

/* Where a write to a path lands, by the rules in util.h. */
typedef struct out_target {
    int fd;         /* >= 0: a descriptor of this process, written through */
    int in_place;   /* a FIFO or character device, opened by its path */
    int exists;     /* a regular file is there (st is its stat) */
    char *real;     /* the regular file's path, links followed (malloc'd) */
    struct stat st; /* what is there (of the descriptor for fd >= 0) */
} out_target;

/* N of a descriptor's number written in decimal, or -1. */
static int fd_number(const char *s)
{
    long v = 0;
    if (!*s) return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 1000000) return -1;
        v = v * 10 + (*s - '0');
    }
    return (int)v;
}

/* The names that mean one of the process's descriptors whatever the
 * filesystem: /dev/stdout, /dev/stderr, /dev/stdin, /dev/fd/N,
 * /proc/self/fd/N. -1 for any other. */
static int named_descriptor(const char *path)
{
    if (strcmp(path, "/dev/stdin") == 0) return 0;
    if (strcmp(path, "/dev/stdout") == 0) return 1;
    if (strcmp(path, "/dev/stderr") == 0) return 2;
    if (strncmp(path, "/dev/fd/", 8) == 0) return fd_number(path + 8);
    if (strncmp(path, "/proc/self/fd/", 14) == 0) return fd_number(path + 14);
    if (strncmp(path, "/proc/thread-self/fd/", 21) == 0) return fd_number(path + 21);
    return -1;
}

static int same_inode(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The directory part of path ("." for a bare name), malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? lw_strdup(path) : lw_strdup(".");
    if (slash) dir[slash == path ? 1 : slash - path] = 0;
    return dir;
}

/* A symbolic link met on the way: is it one of this process's descriptors
 * (a link in /proc/self/fd, however it was reached: 1 with *fd set), another
 * link of /proc (-1, refused: opening it anew would write from the start of a
 * file another process has open), or the kernel's protected_symlinks case
 * (-1)? 0 for a link to follow. */
static int check_link(const char *path, const char *link, const struct stat *lst, int *fd, lw_error *err)
{
    struct stat proc, ds;
    if (stat("/proc/self", &proc) == 0 && lst->st_dev == proc.st_dev) {
        char *dir = dir_of(link);
        struct stat own;
        int mine = stat(dir, &ds) == 0 &&
                   ((stat("/proc/self/fd", &own) == 0 && same_inode(&ds, &own)) ||
                    (stat("/proc/thread-self/fd", &own) == 0 && same_inode(&ds, &own)));
        free(dir);
        const char *base = strrchr(link, '/');
        *fd = mine ? fd_number(base ? base + 1 : link) : -1;
        if (*fd >= 0) return 1;
        return lw_fail(err, 2, "%s: %s is a link of /proc that is not one of this program's descriptors; not written",
                       path, link);
    }
    /* The kernel follows a link in a sticky directory that anyone may write
     * (/tmp) only for the link's owner or when the directory's owner owns
     * the link too (fs.protected_symlinks); reading the link here and
     * renaming onto its target must not get round that, whatever the
     * setting. */
    char *dir = dir_of(link);
    int guarded = stat(dir, &ds) == 0 && (ds.st_mode & S_ISVTX) && (ds.st_mode & S_IWOTH) &&
                  lst->st_uid != ds.st_uid && lst->st_uid != geteuid();
    free(dir);
    if (guarded)
        return lw_fail(err, 2,
                       "%s: the symbolic link %s is in a sticky directory anyone may write, and neither you nor the "
                       "directory's owner owns it (the kernel's protected_symlinks rule); not followed",
                       path, link);
    return 0;
}

/* Follows symbolic links to where a write to path lands (a dangling one to
 * the file it names) and checks it by the rules in util.h. 0 with t filled
 * (free t->real), or -1 with err set. */
static int out_resolve(const char *path, out_target *t, lw_error *err)
{
    memset(t, 0, sizeof *t);
    t->fd = -1;
    if (!path || !*path) return lw_fail(err, 2, "the output file name is empty");
    int fd = named_descriptor(path);
    char *cur = lw_strdup(path);
    struct stat st;
    int hops = 0;
    while (fd < 0) {
        if (lstat(cur, &st) != 0) {
            if (errno == ENOENT || errno == ENOTDIR) break; /* a new file: the directory check says more */
            lw_fail(err, 1, "%s: cannot check the output file: %s", path, strerror(errno));
            free(cur);
            return -1;
        }
        if (!S_ISLNK(st.st_mode)) {
            t->exists = 1;
            break;
        }
        int own = check_link(path, cur, &st, &fd, err);
        if (own < 0) {
            free(cur);
            return -1;
        }
        if (own) break;
        if (++hops > 40) {
            free(cur);
            return lw_fail(err, 2, "%s: too many levels of symbolic links", path);
        }
        char link[4096];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0 || n >= (ssize_t)sizeof link - 1) {
            lw_fail(err, 1, "%s: cannot read the symbolic link %s", path, cur);
            free(cur);
            return -1;
        }
        link[n] = 0;
        char *next;
        const char *slash = strrchr(cur, '/');
        if (link[0] == '/' || !slash) {
            next = lw_strdup(link);
        } else {
            size_t d = (size_t)(slash - cur) + 1;
            next = lw_malloc(d + (size_t)n + 1);
            memcpy(next, cur, d);
            memcpy(next + d, link, (size_t)n + 1);
        }
        free(cur);
        cur = next;
    }
    if (fd >= 0) {
        free(cur);
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fstat(fd, &t->st) != 0) return lw_fail(err, 2, "%s: descriptor %d is not open", path, fd);
        if ((fl & O_ACCMODE) == O_RDONLY)
            return lw_fail(err, 2, "%s: descriptor %d is open for reading only", path, fd);
        t->fd = fd;
        return 0;
    }
    if (t->exists) {
        t->st = st;
        if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
            t->in_place = 1;
            t->exists = 0;
        } else if (S_ISDIR(st.st_mode)) {
            free(cur);
            return lw_fail(err, 2, "%s: is a directory", path);
        } else if (!S_ISREG(st.st_mode)) {
            free(cur);
            return lw_fail(err, 2, "%s: is neither a regular file, a FIFO nor a character device; not replaced", path);
        } else if (st.st_nlink > 1) {
            /* a new file would split the names; writing in place would not be atomic */
            lw_fail(err, 2, "%s: the file has %lu names (hard links); not replaced", path, (unsigned long)st.st_nlink);
            free(cur);
            return -1;
        } else if (geteuid() != 0 && st.st_uid != geteuid()) {
            lw_fail(err, 2, "%s: the file belongs to another user (uid %lu); replacing it would make it yours; not replaced",
                    path, (unsigned long)st.st_uid);
            free(cur);
            return -1;
        } else if (faccessat(AT_FDCWD, cur, W_OK, AT_EACCESS) != 0 && errno == EACCES) {
            lw_fail(err, 2, "%s: the file is read-only (mode %04o); not replaced", path, (unsigned)(st.st_mode & 07777));
            free(cur);
            return -1;
        }
    }
    t->real = cur;
    return 0;
}

int lw_check_output(const char *path, lw_error *err)
{
    out_target t;
    if (out_resolve(path, &t, err) != 0) return -1;
    if (!t.real || t.in_place) {
        free(t.real);
        return 0;
    }
    const char *real = t.real;
    char *dir = dir_of(real);
    int rc = 0;
    struct stat ds;
    if (!t.exists && real[0] && real[strlen(real) - 1] == '/')
        rc = lw_fail(err, 2, "%s: names a directory", path);
    else if (stat(dir, &ds) != 0)
        rc = lw_fail(err, 2, "%s: directory %s does not exist", path, dir);
    else if (!S_ISDIR(ds.st_mode))
        rc = lw_fail(err, 2, "%s: %s is not a directory", path, dir);
    free(dir);
    free(t.real);
    return rc;
}

int lw_output_id(const char *path, lw_file_id *id)
{
    memset(id, 0, sizeof *id);
    out_target t;
    if (out_resolve(path, &t, NULL) != 0) return -1;
    int rc = 0;
    if (t.fd >= 0 || t.in_place || t.exists) {
        id->dev = t.st.st_dev;
        id->ino = t.st.st_ino;
        id->chr = S_ISCHR(t.st.st_mode);
    } else {
        /* not there yet: its directory and its name in it */
        char *dir = dir_of(t.real);
        struct stat ds;
        const char *base = strrchr(t.real, '/');
        base = base ? base + 1 : t.real;
        if (stat(dir, &ds) != 0 || strlen(base) >= sizeof id->name) {
            rc = -1;
        } else {
            id->dev = ds.st_dev;
            id->ino = ds.st_ino;
            snprintf(id->name, sizeof id->name, "%s", base);
        }
        free(dir);
    }
    free(t.real);
    return rc;
}

int lw_input_id(const char *path, lw_file_id *id)
{
    memset(id, 0, sizeof *id);
    struct stat st;
    if (!path || stat(path, &st) != 0) return -1;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->chr = S_ISCHR(st.st_mode);
    return 0;
}

int lw_same_file(const lw_file_id *a, const lw_file_id *b)
{
    return !a->chr && !b->chr && a->dev == b->dev && a->ino == b->ino && strcmp(a->name, b->name) == 0;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t k = write(fd, data, len);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += k;
        len -= (size_t)k;
    }
    return 0;
}

/* While writing, a reader that goes away (SIGPIPE) and a file past the
 * size limit (SIGXFSZ, `ulimit -f`) are errors the write reports (EPIPE,
 * EFBIG), not a silent death that leaves the temporary. */
static void quiet_signals(struct sigaction old[2])
{
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old[0]);
    sigaction(SIGXFSZ, &ign, &old[1]);
}

static void restore_signals(const struct sigaction old[2])
{
    sigaction(SIGPIPE, &old[0], NULL);
    sigaction(SIGXFSZ, &old[1], NULL);
}

static int write_failed(lw_error *err, const char *path, int e)
{
    return lw_fail(err, 1, "%s: write failed: %s%s", path, strerror(e),
                   e == EFBIG ? " (the file-size limit, ulimit -f)" : "");
}

/* One of the process's descriptors: written at its offset (appended where
 * it was opened for append), as the shell's own writes are. */
static int write_to_fd(const char *path, int fd, const char *data, size_t len, lw_error *err)
{
    fflush(stdout); /* what the program printed before comes first */
    fflush(stderr);
    struct sigaction old[2];
    quiet_signals(old);
    int rc = write_all(fd, data, len) != 0 ? write_failed(err, path, errno) : 0;
    restore_signals(old);
    return rc;
}

/* A FIFO or a device: opened and written as it is, never replaced. */
static int write_in_place(const char *path, const char *data, size_t len, lw_error *err)
{
    struct sigaction old[2];
    quiet_signals(old);
    int rc = 0;
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        rc = lw_fail(err, 1, "%s: cannot open for writing: %s", path, strerror(errno));
    } else {
        if (write_all(fd, data, len) != 0) rc = write_failed(err, path, errno);
        if (close(fd) != 0 && rc == 0) rc = write_failed(err, path, errno);
    }
    restore_signals(old);
    return rc;
}

void (*lw__temp_created_hook)(const char *tmp);

/* A regular file or a new name: a temporary beside it, renamed over it. */
static int replace_file(const char *path, const out_target *t, const char *data, size_t len, lw_error *err)
{
    size_t n = strlen(t->real);
    char *tmp = lw_malloc(n + 16);
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", t->real);
    sigset_t block, prev;
    sigemptyset(&block);
    for (int i = 0; i < N_CLEANUP_SIGNALS; i++) sigaddset(&block, cleanup_signals[i]);
    /* no signal between creating the temporary and arming its removal */
    pthread_sigmask(SIG_BLOCK, &block, &prev);
    int fd = mkstemp(tmp);
    if (fd >= 0) cleanup_arm(tmp);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    if (fd < 0) {
        int e = errno;
        int code = (e == ENOENT || e == ENOTDIR) ? 2 : 1;
        lw_fail(err, code, "%s: cannot create: %s", path, strerror(e));
        free(tmp);
        return -1;
    }
    int rc = 0;
    struct sigaction old[2];
    quiet_signals(old);
    if (lw__temp_created_hook) lw__temp_created_hook(tmp);
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0) rc = write_failed(err, path, errno);
    /* mkstemp makes 0600 and the caller's: keep the owner, group and mode
     * of the file replaced (root replacing another's file), or give the
     * usual 0666 less umask to a new one; the owner first, as chown clears
     * set-user-ID bits */
    mode_t mode;
    if (t->exists) {
        mode = t->st.st_mode & 07777;
        struct stat ts;
        if (rc == 0 && fstat(fd, &ts) == 0 && (ts.st_uid != t->st.st_uid || ts.st_gid != t->st.st_gid) &&
            fchown(fd, t->st.st_uid, t->st.st_gid) != 0)
            rc = lw_fail(err, 1, "%s: cannot keep its owner and group (uid %lu, gid %lu): %s", path,
                         (unsigned long)t->st.st_uid, (unsigned long)t->st.st_gid, strerror(errno));
    } else {
        mode_t um = umask(0);
        umask(um);
        mode = 0666 & ~um;
    }
    if (rc == 0 && fchmod(fd, mode) != 0) rc = lw_fail(err, 1, "%s: cannot set its mode: %s", path, strerror(errno));
    if (close(fd) != 0 && rc == 0) rc = write_failed(err, path, errno);
    if (rc == 0 && rename(tmp, t->real) != 0)
        rc = lw_fail(err, 1, "%s: cannot rename into place: %s", path, strerror(errno));
    if (rc != 0) unlink(tmp);
    restore_signals(old);
    cleanup_disarm();
    free(tmp);
    return rc;
}

int lw_write_output(const char *path, const char *data, size_t len, lw_error *err)
{
    out_target t;
    if (out_resolve(path, &t, err) != 0) return -1;
    int rc = t.fd >= 0   ? write_to_fd(path, t.fd, data, len, err)
             : t.in_place ? write_in_place(path, data, len, err)
                          : replace_file(path, &t, data, len, err);
    free(t.real);
    return rc;
}

int lw_write_file_atomic(const char *path, lw_writer_fn write_fn, void *user, lw_error *err)
{
    out_target t;
    if (out_resolve(path, &t, err) != 0) return -1;
    free(t.real);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return lw_fail(err, 1, "%s: out of memory", path);
    int rc = write_fn(m, user, err);
    if (fclose(m) != 0 && rc == 0) rc = lw_fail(err, 1, "%s: out of memory", path);
    if (rc == 0) rc = lw_write_output(path, buf, len, err);
    else if (err && !strstr(err->msg, path)) {
        lw_buf b = {0};
        lw_buf_printf(&b, "%s: %s", path, err->msg);
        snprintf(err->msg, sizeof err->msg, "%s", b.s);
        lw_buf_free(&b);
    }
    free(buf);
    return rc;
}

int lw_finish_stdout(lw_error *err)
{
    errno = 0;
    int bad = fflush(stdout) != 0;
    int e = bad ? errno : 0;
    if (ferror(stdout)) bad = 1;
    if (!bad) return 0;
    /* errno of the failed write is gone if it happened earlier; fflush of
     * the rest usually sets it again */
    return lw_fail(err, 1, "standard output: write failed%s%s", e ? ": " : "", e ? strerror(e) : "");
}

int lw_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s) return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int lw_parse_double(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s) return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= lo && v <= hi)) return -1;
    *out = v;
    return 0;
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

int lw_worker_count(void)
{
    const char *env = getenv("LAYERWISE_THREADS");
    long n = env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > 8) n = 8;
    return (int)n;
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

int lw_ends_with_ci(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

void lw_buf_append(lw_buf *b, const char *data, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        b->s = lw_realloc(b->s, cap);
        b->cap = cap;
    }
    if (n) memcpy(b->s + b->len, data, n);
    b->len += n;
    b->s[b->len] = 0;
}

void lw_buf_free(lw_buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

/* ---- text ---- */

/* Length of the valid UTF-8 sequence at s (1-4), 0 if it is not one
 * (overlong, surrogate, beyond U+10FFFF, truncated); *cp its code point. */
static int utf8_seq(const unsigned char *s, unsigned *cp)
{
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    int n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? (c <= 0xEF ? 3 : 0) : c >= 0xC2 ? 2 : 0;
    if (!n) return 0;
    unsigned v = c & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)) || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

static int is_control(unsigned cp)
{
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0);
}

int lw_check_text(const char *s, size_t max_chars, char *why, size_t why_n)
{
    size_t chars = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned cp;
        int n = utf8_seq(p, &cp);
        if (!n) {
            snprintf(why, why_n, "is not valid UTF-8 (byte %zu)", (size_t)(p - (const unsigned char *)s) + 1);
            return -1;
        }
        if (is_control(cp)) {
            snprintf(why, why_n, "contains a control character (U+%04X at character %zu)", cp, chars + 1);
            return -1;
        }
        p += n;
        chars++;
    }
    if (chars > max_chars) {
        snprintf(why, why_n, "is %zu characters long; at most %zu are allowed", chars, max_chars);
        return -1;
    }
    return 0;
}

/* Unicode's general category Cf (format characters: the bidi overrides
 * and isolates, zero-width joiners, the BOM, tags, ...) and U+2028, U+2029
 * (line and paragraph separators): they change how the text around them
 * is shown. From the Unicode Character Database 15.0,
 * extracted/DerivedGeneralCategory.txt. */
static const unsigned format_ranges[][2] = {
    {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},   {0x06DD, 0x06DD},   {0x070F, 0x070F},
    {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x180E, 0x180E},   {0x200B, 0x200F},   {0x2028, 0x202E},
    {0x2060, 0x2064},   {0x2066, 0x206F},   {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},
    {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
    {0xE0020, 0xE007F},
};

int lw_is_format_char(unsigned cp)
{
    if (cp < 0xAD) return 0;
    for (size_t i = 0; i < sizeof format_ranges / sizeof *format_ranges; i++)
        if (cp >= format_ranges[i][0] && cp <= format_ranges[i][1]) return 1;
    return 0;
}

/* \u202E; beyond U+FFFF a surrogate pair (\uDB40\uDC01), as JSON writes
 * it, so the escape is also the same character in a JSON string. */
static void put_format_escape(lw_buf *b, unsigned cp)
{
    if (cp < 0x10000) {
        lw_buf_printf(b, "\\u%04X", cp);
    } else {
        unsigned v = cp - 0x10000;
        lw_buf_printf(b, "\\u%04X\\u%04X", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
    }
}

size_t lw_text_format_at(const char *s, unsigned *cp)
{
    unsigned c;
    int n = utf8_seq((const unsigned char *)s, &c);
    if (n > 1 && lw_is_format_char(c)) {
        if (cp) *cp = c;
        return (size_t)n;
    }
    return 0;
}

int lw_text_has_format(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p >= 0xC2 && lw_text_format_at((const char *)p, NULL)) return 1;
    return 0;
}

void lw_text_shown(lw_buf *b, const char *s)
{
    const char *run = s;
    for (const char *p = s; *p;) {
        unsigned cp;
        size_t n = (unsigned char)*p >= 0xC2 ? lw_text_format_at(p, &cp) : 0;
        if (!n) {
            p++;
            continue;
        }
        if (p > run) lw_buf_append(b, run, (size_t)(p - run));
        put_format_escape(b, cp);
        p += n;
        run = p;
    }
    lw_buf_printf(b, "%s", run);
}

void lw_say(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *raw = lw_malloc(n > 0 ? (size_t)n + 1 : 1);
    vsnprintf(raw, n > 0 ? (size_t)n + 1 : 1, fmt, ap2);
    va_end(ap2);
    lw_buf b = {0};
    lw_text_printable(&b, raw);
    fputs(b.s ? b.s : "", stderr);
    lw_buf_free(&b);
    free(raw);
}

void lw_text_printable(lw_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned cp;
        int n = utf8_seq(p, &cp);
        if (n && lw_is_format_char(cp)) {
            put_format_escape(b, cp);
            p += n;
        } else if (n && (!is_control(cp) || cp == '\n')) {
            lw_buf_printf(b, "%.*s", n, (const char *)p);
            p += n;
        } else {
            lw_buf_printf(b, "\\x%02X", *p);
            p++;
        }
    }
    if (!b->s) lw_buf_printf(b, "%s", "");
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

/* ---------- standard output on a terminal ---------- */

/* A write-through stream that escapes format characters (lw_text_shown)
 * on their way to fd; a sequence cut between two writes waits for its
 * end. */
typedef struct shown_stream {
    int fd;
    unsigned char held[4];
    size_t n_held;
} shown_stream;

static ssize_t shown_write(void *cookie, const char *data, size_t len)
{
    shown_stream *st = cookie;
    lw_buf b = {0};
    char *joined = NULL;
    const char *p = data;
    size_t n = len;
    if (st->n_held) { /* the start of a sequence from the last write */
        joined = lw_malloc(st->n_held + len);
        memcpy(joined, st->held, st->n_held);
        memcpy(joined + st->n_held, data, len);
        p = joined;
        n += st->n_held;
        st->n_held = 0;
    }
    size_t end = n;
    /* an incomplete UTF-8 sequence at the end: keep it for the next write */
    for (size_t k = 1; k <= 3 && k <= n; k++) {
        unsigned char c = (unsigned char)p[n - k];
        if ((c & 0xC0) == 0x80) continue;
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (need > k) end = n - k;
        break;
    }
    size_t run = 0;
    for (size_t i = 0; i < end;) {
        unsigned cp;
        size_t k = (unsigned char)p[i] >= 0xC2 && end - i >= 2 ? lw_text_format_at(p + i, &cp) : 0;
        if (k && i + k <= end) {
            lw_buf_append(&b, p + run, i - run);
            put_format_escape(&b, cp);
            i += k;
            run = i;
        } else {
            i++;
        }
    }
    lw_buf_append(&b, p + run, end - run);
    memcpy(st->held, p + end, n - end);
    st->n_held = n - end;
    int bad = write_all(st->fd, b.s, b.len) != 0;
    lw_buf_free(&b);
    free(joined);
    return bad ? -1 : (ssize_t)len;
}

static int shown_close(void *cookie)
{
    shown_stream *st = cookie;
    int bad = st->n_held && write_all(st->fd, (const char *)st->held, st->n_held) != 0;
    free(st);
    return bad ? -1 : 0;
}

FILE *lw_shown_stream(int fd)
{
    shown_stream *st = lw_calloc(1, sizeof *st);
    st->fd = fd;
    cookie_io_functions_t io = {NULL, shown_write, NULL, shown_close};
    FILE *f = fopencookie(st, "w", io);
    if (!f) lw_out_of_memory(sizeof *f);
    return f;
}

void lw_stdout_shown(void)
{
    if (!isatty(STDOUT_FILENO)) return;
    fflush(stdout);
    FILE *f = lw_shown_stream(STDOUT_FILENO);
    setvbuf(f, NULL, _IOLBF, 0);
    stdout = f;
}
