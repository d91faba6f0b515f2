/*
 * test_oom: the one out-of-memory policy (util.h) and the fatal paths that
 * give the terminal back. Every scenario runs in a child process (it ends
 * the process by design); the parent looks at how it ended and at what it
 * wrote. Allocation failures are injected (lw__fail_allocation: the Nth
 * allocation fails, ours or cJSON's), so each is exact and repeatable;
 * one case also runs under a real address-space limit, as `ulimit -v` does.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "tui.h"
#include "util.h"

#include <criterion/criterion.h>
#include <curses.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* ---------- running the CLI in a child ---------- */

typedef struct outcome {
    int status;     /* waitpid's */
    char *out, *err; /* what it wrote (NUL-terminated) */
    size_t out_len;
} outcome;

static char *slurp_path(const char *path, size_t *len)
{
    lw_error e = {0};
    size_t n = 0;
    char *s = lw_read_file(path, &n, &e);
    cr_assert_not_null(s, "%s", e.msg);
    if (len) *len = n;
    return s;
}

static void outcome_free(outcome *o)
{
    free(o->out);
    free(o->err);
}

/* Runs `layerwise ARGS...` through cli_main in a child; fail_at > 0 makes
 * that allocation fail; as_kb > 0 limits the address space. */
static outcome run_cli(long fail_at, long as_kb, char **argv)
{
    char out_path[] = "/tmp/lw_oom_out_XXXXXX", err_path[] = "/tmp/lw_oom_err_XXXXXX";
    int fo = mkstemp(out_path), fe = mkstemp(err_path);
    cr_assert(fo >= 0 && fe >= 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(fo, STDOUT_FILENO);
        dup2(fe, STDERR_FILENO);
        if (as_kb > 0) {
            struct rlimit rl = {(rlim_t)as_kb * 1024, (rlim_t)as_kb * 1024};
            setrlimit(RLIMIT_AS, &rl);
        }
        int argc = 0;
        while (argv[argc]) argc++;
        lw__fail_allocation(fail_at);
        int rc = cli_main(argc, argv, NULL);
        fflush(stdout);
        _exit(rc);
    }
    outcome o = {0};
    waitpid(pid, &o.status, 0);
    close(fo);
    close(fe);
    o.out = slurp_path(out_path, &o.out_len);
    o.err = slurp_path(err_path, NULL);
    unlink(out_path);
    unlink(err_path);
    return o;
}

static int count_of(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* The policy's promise for one run: either the whole, right result (as
 * the run without a failure wrote it), or exit status LW_EXIT_OOM with the
 * one message, never a signal, never a result with a part missing, never
 * a parse error. Returns 1 when the run got to the end untouched. */
static int check_run(const outcome *o, const outcome *ref, long n, const char *what)
{
    cr_assert(WIFEXITED(o->status), "%s, allocation %ld failing: ended by signal %d; stderr: %s", what, n,
              WIFSIGNALED(o->status) ? WTERMSIG(o->status) : 0, o->err);
    int rc = WEXITSTATUS(o->status);
    if (rc == 0) {
        cr_assert(o->out_len == ref->out_len && memcmp(o->out, ref->out, o->out_len) == 0,
                  "%s, allocation %ld failing: exit 0 with %zu bytes of output where the whole is %zu", what, n,
                  o->out_len, ref->out_len);
        return 1;
    }
    cr_assert_eq(rc, LW_EXIT_OOM, "%s, allocation %ld failing: exit %d, stderr: %s", what, n, rc, o->err);
    cr_assert_eq(count_of(o->err, "layerwise: out of memory ("), 1, "%s, allocation %ld failing: stderr: %s", what,
                 n, o->err);
    cr_assert_null(strstr(o->err, "malformed"), "%s, allocation %ld: %s", what, n, o->err);
    return 0;
}

/* Fails allocation 1, 2, 3, ... dense at first (the loading and parsing),
 * then spaced by `ratio`, up to a run that never reaches its failure. */
static void sweep(char **argv, const char *what, int dense, double ratio)
{
    outcome ref = run_cli(0, 0, argv);
    cr_assert(WIFEXITED(ref.status) && WEXITSTATUS(ref.status) == 0, "%s: %s", what, ref.err);
    cr_assert(ref.out_len > 0);
    int runs = 0;
    for (long n = 1;; n = n < dense ? n + 1 : (long)(n * ratio) + 1) {
        outcome o = run_cli(n, 0, argv);
        int whole = check_run(&o, &ref, n, what);
        outcome_free(&o);
        runs++;
        if (whole) break;
        cr_assert(n < 100000000L, "%s: never ran to the end", what);
    }
    cr_assert(runs > dense, "%s: only %d runs", what, runs);
    outcome_free(&ref);
}

/* issue 31 #4: `search --json` exits 0 only with the whole document. Every
 * allocation of the first 300 (loading lenet5's JSON through cJSON, the
 * tables, the search) fails once, then every 7th of a factor 1.2 apart. */
Test(oom, search_json_whole_or_out_of_memory, .timeout = 240)
{
    char *argv[] = {"layerwise", "search", "-n", "lenet5", "-c", "p100-4x4", "-g", "4", "--json", NULL};
    sweep(argv, "search --json", 300, 1.2);
}

/* A failed allocation while parsing a network file is out of memory, not
 * "malformed JSON" (the dense part of the sweep is the parse). */
Test(oom, parse_failure_is_out_of_memory, .timeout = 120)
{
    char *argv[] = {"layerwise", "eval", "-n", "tests/fixtures/nets/branchy.json", "-c", "p100-4x4", "-g", "2",
                    "-s", "data", "--json", NULL};
    if (access(argv[3], R_OK) != 0) argv[3] = "alexnet";
    sweep(argv, "eval of a network file", 200, 1.5);
}

/* issue 31 #4: `costs -n inception_v3 -g 16 --json` printed a document of
 * NULLs (strlen of NULL: a segfault) when cJSON's allocations failed. */
Test(oom, costs_json_inception, .timeout = 300)
{
    char *argv[] = {"layerwise", "costs", "-n", "inception_v3", "-g", "16", "--json", NULL};
    sweep(argv, "costs --json", 4, 9.0);
}

/* The same under `ulimit -v 60000` (the finding as filed). ASan reserves
 * terabytes of address space, so only the plain build can run it. */
Test(oom, costs_json_under_ulimit, .timeout = 120)
{
    if (UNDER_ASAN) cr_skip_test("address-space limits do not apply under ASan");
    char *argv[] = {"layerwise", "costs", "-n", "inception_v3", "-g", "16", "--json", NULL};
    outcome ref = run_cli(0, 0, argv);
    for (long kb = 40000; kb <= 120000; kb += 20000) {
        outcome o = run_cli(0, kb, argv);
        char what[64];
        snprintf(what, sizeof what, "costs --json under ulimit -v %ld", kb);
        check_run(&o, &ref, 0, what);
        outcome_free(&o);
    }
    outcome_free(&ref);
}

/* An export's font libraries crash rather than fail when memory runs out;
 * a crash inside the guard ends by the policy (status, message), not by
 * the signal. */
static void guarded_crash(int sig)
{
    lw_library_guard("out/diagram.svg");
    raise(sig);
}

Test(oom, font_library_crash_is_reported, .timeout = 30)
{
    const int sigs[] = {SIGSEGV, SIGTRAP, SIGABRT};
    for (int i = 0; i < 3; i++) {
        char err_path[] = "/tmp/lw_oom_err_XXXXXX";
        int fe = mkstemp(err_path);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            dup2(fe, STDERR_FILENO);
            guarded_crash(sigs[i]);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        close(fe);
        char *err = slurp_path(err_path, NULL);
        unlink(err_path);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == LW_EXIT_OOM, "signal %d: status %#x, stderr %s", sigs[i], st,
                  err);
        cr_assert(strstr(err, "layerwise: out/diagram.svg: the font library") && strstr(err, "out of memory"), "%s",
                  err);
        free(err);
    }
    /* after the call the guard is gone: the previous action is back */
    struct sigaction before, after;
    sigaction(SIGSEGV, NULL, &before);
    lw_library_guard("x.svg");
    lw_library_guard(NULL);
    sigaction(SIGSEGV, NULL, &after);
    cr_assert_eq((void *)before.sa_handler, (void *)after.sa_handler);
}

/* ---------- issue 31 #9: the terminal restored once, completely ---------- */

static pthread_barrier_t start_together;
static int crash_kind; /* 0: out of memory; else the signal */

static void slow_restore(void) { usleep(150 * 1000); }

static void *crash_thread(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start_together);
    if (crash_kind) raise(crash_kind); /* to this thread */
    lw_out_of_memory(4096);
}

/* A child opens curses on a file as the TUI opens the terminal (alternate
 * screen, mouse on), arms the fatal paths, and has two threads fail at the
 * same moment while the restore is slow. What reached the "terminal" must
 * end with the alternate screen left and the mouse off, once. */
static void two_threads_fail(int kind)
{
    char term_path[] = "/tmp/lw_oom_term_XXXXXX", err_path[] = "/tmp/lw_oom_err_XXXXXX";
    int ft = mkstemp(term_path), fe = mkstemp(err_path);
    cr_assert(ft >= 0 && fe >= 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fe, STDERR_FILENO);
        FILE *out = fdopen(ft, "w"), *in = fopen("/dev/null", "r");
        SCREEN *s = newterm("xterm", out, in);
        if (!s) _exit(99);
        set_term(s);
        cbreak();
        noecho();
        keypad(stdscr, TRUE);
        mousemask(BUTTON1_CLICKED | BUTTON4_PRESSED, NULL);
        mvaddstr(1, 1, "a frame");
        refresh();
        tui__arm_fatal();
        tui__restore_delay = slow_restore;
        crash_kind = kind;
        pthread_barrier_init(&start_together, NULL, 2);
        pthread_t a, b;
        pthread_create(&a, NULL, crash_thread, NULL);
        pthread_create(&b, NULL, crash_thread, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        _exit(98);
    }
    int st;
    waitpid(pid, &st, 0);
    close(ft);
    close(fe);
    size_t n;
    char *term = slurp_path(term_path, &n), *err = slurp_path(err_path, NULL);
    unlink(term_path);
    unlink(err_path);
    if (kind) cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == kind, "status %#x; stderr %s", st, err);
    else cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == LW_EXIT_OOM, "status %#x; stderr %s", st, err);
    const char *smcup = strstr(term, "\033[?1049h");
    cr_assert_not_null(smcup, "the test's terminal never entered the alternate screen");
    cr_assert_eq(count_of(term, "\033[?1049l"), 1, "alternate screen left %d times", count_of(term, "\033[?1049l"));
    cr_assert_not_null(strstr(term, "1000l"), "mouse reporting left on");
    cr_assert_eq(count_of(err, "layerwise: "), 1, "one message: %s", err);
    free(term);
    free(err);
}

Test(oom, tui_two_threads_out_of_memory, .timeout = 30)
{
    for (int i = 0; i < 3; i++) two_threads_fail(0);
}

Test(oom, tui_two_threads_crash, .timeout = 30)
{
    for (int i = 0; i < 3; i++) two_threads_fail(SIGSEGV);
}
