/*
 * util: error messages, checked allocation, and atomic file output.
 *
 * Errors travel as an lw_error filled by the function that failed; the
 * caller prints it.
 *
 * Out of memory, one policy: an allocation failure aborts with a message
 * (lw_malloc and friends, lw_out_of_memory), since there is no sensible
 * recovery in a planning tool and callers need not check. The one
 * exception is what can be as large as the input makes it: the search
 * engine's tables (search.c, a library over abstract graphs whose sizes
 * the caller cannot bound) fail with SEARCH_OUT_OF_MEMORY and cg_new /
 * cg_add_edge return NULL / -1; engine code that builds a graph of a size
 * it already holds (cost_model_graph) treats that as out of memory.
 * lw_write_file_atomic writes to a temporary name beside the target and
 * renames it, so a reader never sees a half-written file.
 */
#ifndef LW_UTIL_H
#define LW_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

typedef struct lw_error {
    int code;           /* exit status to use: 2 bad input, 1 other failure */
    char msg[1024];
} lw_error;

#if defined(__GNUC__)
#define LW_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LW_PRINTF(a, b)
#endif

/* Sets err (if non-NULL) and returns -1, so `return lw_fail(...)` reads well. */
int lw_fail(lw_error *err, int code, const char *fmt, ...) LW_PRINTF(3, 4);

/* Prints "out of memory (n bytes)" and aborts. */
_Noreturn void lw_out_of_memory(size_t n);
void *lw_malloc(size_t n);
void *lw_calloc(size_t n, size_t size);
void *lw_realloc(void *p, size_t n);
char *lw_strdup(const char *s);

/* Reads a whole file; returns a NUL-terminated buffer the caller frees, or
 * NULL with err set. */
char *lw_read_file(const char *path, size_t *len, lw_error *err);

/* Streams produced by `write` go to PATH.tmp.XXXXXX, then rename(2) to
 * path. `write` returns 0 on success; on any failure the temporary is
 * removed and the target is untouched. */
typedef int (*lw_writer_fn)(FILE *f, void *user, lw_error *err);
int lw_write_file_atomic(const char *path, lw_writer_fn write, void *user, lw_error *err);

/* pthread_create for a worker that takes no asynchronous signal (SIGINT,
 * SIGTERM, SIGWINCH, ...): they go to the main thread, whose blocking read
 * they must interrupt; a handler run on a worker would leave the TUI
 * waiting for a key. */
int lw_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* Monotonic clock in seconds, for benchmarks and progress. */
double lw_now(void);

/* "0 B", "812 B", "3.4 KB", "570.1 MB", "3.03 GB", "1.20 TB" (decimal
 * units): every byte count the CLI, the TUI and the diagrams print. */
const char *lw_format_bytes(double b, char *buf, size_t n);

/* Growable string buffer (sds-like): append returns nothing, aborts on OOM. */
typedef struct lw_buf { char *s; size_t len, cap; } lw_buf;
void lw_buf_printf(lw_buf *b, const char *fmt, ...) LW_PRINTF(2, 3);
void lw_buf_free(lw_buf *b);

#endif
