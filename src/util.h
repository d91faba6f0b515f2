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
 * Output files are written by the rules above lw_check_output: a reader
 * never sees a half-written file and nothing that is not a file is replaced.
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

/* Out of memory: the one policy for every allocation of the program (ours
 * through lw_malloc and friends, cJSON's through its hooks, which util.c
 * sets before main). The first thread to run out runs the fatal cleanup
 * (the TUI gives the terminal back), prints "layerwise: out of memory
 * (N bytes)" and ends the process with status LW_EXIT_OOM (1, "other
 * failure"; no core dump, no half-written output file: outputs are renamed
 * into place only when whole). Any other thread that runs out meanwhile
 * waits for it. */
#define LW_EXIT_OOM 1
_Noreturn void lw_out_of_memory(size_t n);
/* What must run before the message (once, whichever thread gets there
 * first; NULL: nothing). The TUI's terminal restore. */
void lw_set_fatal_cleanup(void (*fn)(void));
/* For tests: the nth allocation from now (1: the next) fails as if memory
 * had run out, whoever makes it (ours or cJSON's); 0 turns it off. */
void lw__fail_allocation(long nth);
/* Graphviz's and cairo's text goes through fontconfig and pango, which
 * crash (a segfault, GLib's trap or abort) instead of failing when memory
 * runs out, and no check beforehand can tell (glibc's thread arenas make
 * the address space a thread will need unknowable). So the call is
 * guarded: lw_library_guard(FILE) before it, lw_library_guard(NULL) after;
 * a crash in between ends the process by the out-of-memory policy above
 * (cleanup, "layerwise: FILE: the font library ... out of memory",
 * status LW_EXIT_OOM), never with a signal. Main thread, not nested. */
void lw_library_guard(const char *what);
void *lw_malloc(size_t n);
void *lw_calloc(size_t n, size_t size);
void *lw_realloc(void *p, size_t n);
char *lw_strdup(const char *s);

/* Reads a whole regular file; returns a NUL-terminated buffer the caller
 * frees, or NULL with err set (code 2): it never blocks in open(), and
 * refuses a FIFO, a pipe, a terminal or other device, or a directory by
 * name (inputs named by path are regular files: the TUI cannot wait on
 * one, and the CLI keeps the same rule). */
char *lw_read_file(const char *path, size_t *len, lw_error *err);

/* Output files. The rules, for every file the program writes:
 *  - a regular file (or a name not yet taken) is replaced atomically: the
 *    data goes to PATH.tmp.XXXXXX beside it, is synced, and renamed over it;
 *    an existing file keeps its mode, owner and group;
 *  - an existing file is refused (code 2), not replaced, when it has more
 *    than one name (hard links: a new file would split them), when the
 *    caller may not write it (read-only: what `>` refuses too; root may), or,
 *    for a caller other than root, when another user owns it (the new file
 *    would be the caller's);
 *  - a symbolic link is written through: the file it points at (followed to
 *    the end, created if missing) is replaced atomically, the link stays;
 *    a link the kernel would not follow for the caller (in a sticky
 *    world-writable directory, owned by neither the caller nor the
 *    directory's owner: protected_symlinks) is refused (code 2);
 *  - one of the process's descriptors (/dev/stdout, /dev/stderr,
 *    /dev/fd/N, /proc/self/fd/N, or a link to one) is written through the
 *    descriptor, in place, at its offset (appended if it was opened for
 *    append), whatever it is; a descriptor that is closed or read-only, or
 *    another process's /proc link, is refused (code 2);
 *  - a FIFO or a character device is opened and written in place, never
 *    replaced (a FIFO blocks until a reader opens it);
 *  - a directory, socket or block device is refused (code 2).
 * On any failure the message names the file, the target is untouched and
 * no temporary is left (SIGINT, SIGTERM, SIGHUP and SIGQUIT remove it too,
 * unless the process ignores them, as under nohup; SIGPIPE and SIGXFSZ are
 * ignored while writing and come back as EPIPE and EFBIG).
 *
 * lw_check_output checks a path before any work is done: not empty, not a
 * directory or other refused kind, its directory exists. 0, or -1 with err
 * set (code 2). */
int lw_check_output(const char *path, lw_error *err);
/* Writes len bytes of data to path by the rules above. */
int lw_write_output(const char *path, const char *data, size_t len, lw_error *err);
/* For tests only: called with the temporary's name once it exists. */
extern void (*lw__temp_created_hook)(const char *tmp);
/* `write` streams the content into a memory buffer, which is then written
 * with lw_write_output; a writer's error is prefixed with the path. */
typedef int (*lw_writer_fn)(FILE *f, void *user, lw_error *err);
int lw_write_file_atomic(const char *path, lw_writer_fn write, void *user, lw_error *err);

/* What an output or input path names, to tell two names of one file apart
 * from two files: the file (device and inode), or for an output not yet
 * there its directory and its name in it. lw_output_id follows the output
 * rules above (a descriptor: what it is open on); lw_input_id is stat.
 * 0, or -1 when nothing can be said (no such input, a refused output). */
typedef struct lw_file_id {
    unsigned long long dev, ino;
    int chr;        /* a character device (a terminal, /dev/null): never "the same file" */
    char name[256]; /* an output not yet there: its name in directory dev/ino */
} lw_file_id;
int lw_output_id(const char *path, lw_file_id *id);
int lw_input_id(const char *path, lw_file_id *id);
/* 1 if a and b are one file (character devices excepted). */
int lw_same_file(const lw_file_id *a, const lw_file_id *b);

/* Flushes stdout and checks it for a write error (a full disk, a closed
 * pipe): 0, or -1 with err set (code 1, "standard output: ..."). */
int lw_finish_stdout(lw_error *err);

/* Strict number parsing shared by the CLI and the TUI's fields: the whole
 * string, no overflow, within [lo, hi] (a NaN is never within). 0 or -1. */
int lw_parse_long(const char *s, long lo, long hi, long *out);
int lw_parse_double(const char *s, double lo, double hi, double *out);

/* pthread_create for a worker that takes no asynchronous signal (SIGINT,
 * SIGTERM, SIGWINCH, ...): they go to the main thread, whose blocking read
 * they must interrupt; a handler run on a worker would leave the TUI
 * waiting for a key. */
int lw_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* Threads for the engine's parallel work (t_x tables, large node
 * eliminations): LAYERWISE_THREADS if set, else one per online core; 1 to 8. */
int lw_worker_count(void);

/* Monotonic clock in seconds, for benchmarks and progress. */
double lw_now(void);

/* "0 B", "812 B", "3.4 KB", "570.1 MB", "3.03 GB", "1.20 TB" (decimal
 * units): every byte count the CLI, the TUI and the diagrams print. */
const char *lw_format_bytes(double b, char *buf, size_t n);

/* s ends with suffix, ignoring ASCII case ("A.SVG", ".svg"). */
int lw_ends_with_ci(const char *s, const char *suffix);

/* Growable string buffer (sds-like): append returns nothing, aborts on OOM. */
typedef struct lw_buf { char *s; size_t len, cap; } lw_buf;
void lw_buf_printf(lw_buf *b, const char *fmt, ...) LW_PRINTF(2, 3);
/* Appends n bytes (binary data too: a NUL is kept, s stays NUL-terminated). */
void lw_buf_append(lw_buf *b, const char *data, size_t n);
void lw_buf_free(lw_buf *b);

/* Text that is safe to show: valid UTF-8, no control characters (C0, DEL,
 * C1), at most max_chars characters. 0, or -1 with why ("contains a control
 * character (U+001B at character 3)") filled. Loaders check every name
 * with it. */
int lw_check_text(const char *s, size_t max_chars, char *why, size_t why_n);
#define LW_NAME_MAX 200 /* characters of a network, input, layer, cluster or GPU name */
/* Appends s to b with every control character and invalid UTF-8 byte
 * written as \xNN (newlines kept) and every format character as below:
 * for messages on a terminal. */
void lw_text_printable(lw_buf *b, const char *s);
/* fprintf to stderr with the whole text through lw_text_printable: how
 * the CLI and the TUI print messages that quote names and paths. */
void lw_say(const char *fmt, ...) LW_PRINTF(1, 2);

/* Format characters: Unicode's category Cf (U+202E RIGHT-TO-LEFT OVERRIDE,
 * U+200D ZERO WIDTH JOINER, U+FEFF, ...) and U+2028, U+2029. A name may
 * hold them (they are refused nowhere), but they are never shown raw: a
 * name could display reversed or hide a part. They are written \u202E
 * (beyond U+FFFF as a JSON surrogate pair, \uDB40\uDC01), the same
 * character again when read as JSON. */
int lw_is_format_char(unsigned cp);
/* Bytes of the format character that starts s (0: none there), *cp it. */
size_t lw_text_format_at(const char *s, unsigned *cp);
int lw_text_has_format(const char *s);
/* Appends s to b with its format characters escaped, the rest as it is
 * (text already checked by lw_check_text): the TUI, SVG and DOT labels. */
void lw_text_shown(lw_buf *b, const char *s);
/* A stream that writes to fd with format characters escaped. */
FILE *lw_shown_stream(int fd);
/* When standard output is a terminal, replaces stdout by such a stream (the
 * CLI's text and JSON alike: in JSON the escape is the same character). */
void lw_stdout_shown(void);

#endif
