/*
 * tui: the terminal's life cycle and the event loop. Everything else in
 * ui/ draws into a WINDOW it is given; this is the one place that owns the
 * real terminal: it opens it, restores it on every way out (q, an error,
 * Ctrl-C, SIGTERM, SIGHUP, exit), and runs the loop:
 *
 *   draw a frame -> wait for a key (or, while a screen has background work,
 *   poll and do a slice of it) -> dispatch -> rebuild if a what-if asked.
 */
#define _POSIX_C_SOURCE 200809L
#include "tui.h"

#include "app.h"
#include "draw.h"
#include "settings.h"

#include <locale.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <time.h>
#include <unistd.h>

#define IDLE_SLICE_S 0.05  /* background work per loop turn: keys stay responsive */

static volatile sig_atomic_t got_signal;
/* The terminal: 0 not ours, 1 in curses, 2 being restored, 3 restored. */
static atomic_int term_state;
static _Atomic pthread_t restorer;
/* The fatal message: 0 not yet, 1 being written, 2 written. */
static atomic_int fatal_said;

/* Seconds the loop has, after a signal, to restore the terminal and end by
 * itself; past them (a write to a FIFO whose reader stopped reading, any
 * I/O that blocks) the watchdog ends it. */
#define SIGNAL_GRACE_S 2

/* Only sets a flag: endwin is not async-signal-safe, so the loop (which
 * the signal interrupts out of its read) restores the terminal; and arms
 * the watchdog in case the loop is held in blocking I/O. */
static void on_signal(int sig)
{
    if (!got_signal) alarm(SIGNAL_GRACE_S);
    got_signal = sig;
}

void (*tui__restore_delay)(void);

static void pause_briefly(void)
{
    struct timespec ts = {0, 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Exactly once, and complete before any caller returns: a thread that
 * arrives while another restores waits for it (two threads out of memory
 * at once must not end the process half-way through the first one's
 * endwin, leaving the alternate screen and the mouse on). The one
 * exception is the restorer itself, interrupted by a fatal signal inside
 * endwin: waiting for itself would hang. */
static void restore_terminal(void)
{
    int expect = 1;
    if (atomic_compare_exchange_strong(&term_state, &expect, 2)) {
        atomic_store(&restorer, pthread_self());
        if (tui__restore_delay) tui__restore_delay();
        endwin();
        atomic_store(&term_state, 3);
        return;
    }
    while (atomic_load(&term_state) == 2 && !pthread_equal(atomic_load(&restorer), pthread_self())) pause_briefly();
}

/* The loop did not come back within SIGNAL_GRACE_S of a signal: restore
 * the terminal as a fatal error does (best effort: endwin is not
 * async-signal-safe, but a terminal left raw is worse) and end by that
 * signal's default action, so the status is what it would have been. */
static void on_watchdog(int alrm)
{
    (void)alrm;
    int sig = got_signal ? got_signal : SIGTERM;
    restore_terminal();
    static const char msg[] = "layerwise: interrupted (in blocking I/O); the terminal was restored\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w;
    signal(sig, SIG_DFL);
    sigset_t un;
    sigemptyset(&un);
    sigaddset(&un, sig);
    pthread_sigmask(SIG_UNBLOCK, &un, NULL);
    raise(sig);
    _exit(128 + sig);
}

/* A fatal error (a crash; out of memory goes through util.h's policy,
 * which calls restore_terminal the same way): nothing can be trusted any
 * more, but a terminal left in raw mode without echo is worse than a
 * best-effort endwin, which is what htop does too. Every thread that gets
 * here waits for the restore and the one message; then the default
 * action, so the exit status and any core dump stay what they would have
 * been. */
static void on_fatal(int sig)
{
    restore_terminal();
    int expect = 0;
    if (atomic_compare_exchange_strong(&fatal_said, &expect, 1)) {
        static const char msg[] = "layerwise: fatal error; the terminal was restored\n";
        ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)w;
        atomic_store(&fatal_said, 2);
    } else {
        while (atomic_load(&fatal_said) == 1) pause_briefly();
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void arm_fatal(void)
{
    lw_set_fatal_cleanup(restore_terminal);
    struct sigaction fatal;
    memset(&fatal, 0, sizeof fatal);
    fatal.sa_handler = on_fatal;
    sigemptyset(&fatal.sa_mask);
    fatal.sa_flags = 0; /* not reset: a second thread's crash must wait for the first one's restore */
    sigaction(SIGABRT, &fatal, NULL);
    sigaction(SIGSEGV, &fatal, NULL);
    sigaction(SIGBUS, &fatal, NULL);
    sigaction(SIGFPE, &fatal, NULL);
}

void tui__arm_fatal(void)
{
    atomic_store(&term_state, 1);
    arm_fatal();
}

/* Interrupted while the first build runs (before curses): wipe the
 * "building..." line, then the default action. */
static void on_signal_loading(int sig)
{
    static const char wipe[] = "\r\033[K";
    ssize_t w = write(STDERR_FILENO, wipe, sizeof wipe - 1);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* app_perform on a thread while this one watches the keyboard: Esc (or a
 * signal) raises the plan's cancel flag and the rebuild gives up within a
 * table row. Nothing is drawn meanwhile (the plan is being replaced); other
 * keys are dropped. */
typedef struct perform_job {
    app *a;
    action act;
    atomic_int done;
} perform_job;

static void *perform_main(void *arg)
{
    perform_job *j = arg;
    app_perform(j->a, j->act);
    atomic_store(&j->done, 1);
    return NULL;
}

static void perform_cancellable(app *a, action act)
{
    atomic_int cancel = 0;
    perform_job job = {a, act, 0};
    plan_set_cancel(a->p, &cancel);
    pthread_t th;
    if (lw_thread_start(&th, perform_main, &job) != 0) {
        app_perform(a, act); /* no thread to be had: not cancellable, but done */
        plan_set_cancel(a->p, NULL);
        return;
    }
    /* Keys typed meanwhile (`R` then `6` in one go) are kept and given
     * back in order once the change is done; only Esc is taken, as the
     * cancel. A mouse event cannot be given back with its position and
     * is dropped. */
    int ahead[64], n_ahead = 0;
    wtimeout(stdscr, 50);
    while (!atomic_load(&job.done)) {
        int ch = wgetch(stdscr);
        if (got_signal || ch == 27) atomic_store(&cancel, 1);
        else if (ch != ERR && ch != KEY_MOUSE && n_ahead < (int)(sizeof ahead / sizeof *ahead)) ahead[n_ahead++] = ch;
    }
    pthread_join(th, NULL);
    plan_set_cancel(a->p, NULL);
    while (n_ahead > 0) ungetch(ahead[--n_ahead]); /* the queue is a stack: the last first */
}

static int want_color(void)
{
    const char *nc = getenv("NO_COLOR");
    return has_colors() && !(nc && nc[0]);
}

static void show(app *a)
{
    app_draw(a, stdscr);
    wnoutrefresh(stdscr);
    doupdate();
}

/* Why the TUI cannot run here, or NULL: checked before anything is built
 * (Inception-v3 on 64 GPUs takes seconds and 160 MB). A terminal that
 * cannot move the cursor (TERM=dumb, or unset) draws nothing useful. */
static const char *terminal_problem(char *buf, size_t n)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return "the TUI needs a terminal; for scripts use a command such as `layerwise search` (see layerwise --help)";
    const char *term = getenv("TERM");
    int errret = 0;
    if (!term || !*term || setupterm((char *)term, STDOUT_FILENO, &errret) != OK) {
        snprintf(buf, n, "cannot open the terminal (TERM=%s)", term && *term ? term : "unset");
        return buf;
    }
    const char *cup = tigetstr("cup");
    int ok = cup && cup != (char *)-1;
    del_curterm(cur_term);
    if (!ok) {
        snprintf(buf, n, "cannot open the terminal (TERM=%s cannot move the cursor; set TERM to your terminal's type, "
                         "such as xterm-256color)", term);
        return buf;
    }
    return NULL;
}

/* Messages quote names and paths: escaped as the CLI does (util.h). */
static void say_text(const char *msg) { lw_say("layerwise: %s\n", msg); }

static void say_error(const lw_error *e) { say_text(e->msg); }

/* Bad input is reported as such first (reading the files takes
 * milliseconds); then a terminal that cannot run the TUI is refused before
 * the cost tables are built. Returns 0, or the exit status with the message
 * printed. A profile that does not record its precision is warned of. */
static int check_input(const tui_args *args)
{
    lw_error lerr = {0};
    network *n = plan_load_network(args && args->net ? args->net : DEFAULT_NETWORK, &lerr);
    cluster *c = n ? plan_load_cluster(args && args->cluster ? args->cluster : DEFAULT_CLUSTER, &lerr) : NULL;
    profile *pr = c && args && args->profile ? plan_load_profile(args->profile, &lerr) : NULL;
    int bad_input = !n || !c || (args && args->profile && !pr) ||
                    (args && args->precision_set && cluster_set_precision(c, (precision)args->precision, &lerr) != 0) ||
                    (pr && profile_check_cluster(pr, c, &lerr) < 0) ||
                    (args && settings_check_pins(n, args->pins, args->n_pins, &lerr) != 0);
    if (!bad_input && pr && pr->precision < 0) { /* seen once the TUI ends */
        lw_buf b = {0};
        lw_text_printable(&b, pr->path);
        fprintf(stderr, "layerwise: warning: %s does not record the precision it was measured at: applied at %s "
                "unchecked\n", b.s, precision_name(c->precision));
        lw_buf_free(&b);
    }
    net_free(n);
    cluster_free(c);
    profile_free(pr);
    if (bad_input) {
        say_error(&lerr);
        return lerr.code ? lerr.code : 2;
    }
    return 0;
}

/* Signals while curses runs (SIGINT, SIGTERM, SIGHUP, SIGQUIT end the
 * loop; a fatal one restores the terminal first) and the terminal's modes:
 * keys as typed, no echo, the mouse's clicks and wheel. */
static void curses_setup(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: the blocking read returns and the loop sees the flag */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);
    struct sigaction dog;
    memset(&dog, 0, sizeof dog);
    dog.sa_handler = on_watchdog;
    sigemptyset(&dog.sa_mask);
    sigaction(SIGALRM, &dog, NULL);
    arm_fatal();
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    mousemask(BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
                  | BUTTON5_PRESSED
#endif
              ,
              NULL);
}

/* The key loop: draw when something changed, run in-process work between
 * keys, apply each key's action (a rebuild cancellable with Esc), until q
 * or a signal. */
static void run_loop(app *a)
{
    int dirty = 1;
    while (!a->quit && !got_signal) {
        if (dirty) {
            show(a);
            dirty = 0;
        }
        int busy = app_busy(a);
        /* in-process work runs between keys; a worker's is polled for. Even
         * idle, never block for good: a signal landing between the check of
         * got_signal above and the read would otherwise wait for a key */
        wtimeout(stdscr, !busy ? 250 : app_waiting(a) ? 50 : 0);
        int ch = wgetch(stdscr);
        if (got_signal) break;
        if (ch == ERR) {
            if (busy) {
                app_idle(a, IDLE_SLICE_S);
                dirty = 1;
            }
            continue;
        }
        action act = app_key(a, ch);
        if (act == ACT_QUIT) break;
        if (act == ACT_REBUILD) {
            /* a rebuild can take seconds on big settings: say so, and let
             * Esc cancel it (the previous setting stays) */
            app_set_status(a, 0, "%s: rebuilding the cost tables and searching%s (Esc cancels)", a->pending.what,
                           G->ellipsis);
            show(a);
            perform_cancellable(a, act);
            if (got_signal) break;
        } else if (act == ACT_RESEARCH || act == ACT_RESYNC) {
            app_set_status(a, 0, "%s: searching%s", a->pending.what, G->ellipsis);
            show(a);
            app_perform(a, act);
        }
        if (act != ACT_NONE) dirty = 1;
    }
}

int tui_main(const tui_args *args)
{
    setlocale(LC_ALL, "");
    int rc = check_input(args);
    if (rc) return rc;
    char why_buf[256];
    const char *why = terminal_problem(why_buf, sizeof why_buf);
    if (why) {
        say_text(why);
        return 1;
    }
    /* load and search before touching the terminal, so bad input reads as
     * an ordinary error message */
    lw_error err = {0};
    /* a big setting takes seconds to build (Inception-v3 on 64 GPUs: ~2.5 s):
     * say so on the terminal rather than leave it blank, then wipe the line */
    int say = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
    static const int loading_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    if (say) {
        struct sigaction ls;
        memset(&ls, 0, sizeof ls);
        ls.sa_handler = on_signal_loading;
        sigemptyset(&ls.sa_mask);
        for (size_t i = 0; i < sizeof loading_signals / sizeof *loading_signals; i++)
            sigaction(loading_signals[i], &ls, NULL);
        /* one line, with room for the "^C" a terminal echoes after it, so
         * that \r and erase-line wipe it all */
        char line[512];
        snprintf(line, sizeof line, "layerwise: building the cost tables and searching (network %s, cluster %s)...",
                 args && args->net ? args->net : DEFAULT_NETWORK, args && args->cluster ? args->cluster : DEFAULT_CLUSTER);
        struct winsize ws;
        if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 4 && strlen(line) > (size_t)ws.ws_col - 4)
            line[ws.ws_col - 4] = 0;
        lw_buf shown = {0};
        lw_text_printable(&shown, line);
        fputs(shown.s, stderr);
        lw_buf_free(&shown);
    }
    app *a = app_open(args, &err);
    if (say) {
        fprintf(stderr, "\r\033[K");
        for (size_t i = 0; i < sizeof loading_signals / sizeof *loading_signals; i++)
            signal(loading_signals[i], SIG_DFL);
    }
    if (!a) {
        say_error(&err);
        return err.code ? err.code : 1;
    }
    /* the next GPU count's tables build while the person reads the screen */
    a->prefetch = 1;
    app_prefetch_next(a);
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr) {
        const char *term = getenv("TERM");
        char msg[512];
        snprintf(msg, sizeof msg, "cannot open the terminal (TERM=%s)", term ? term : "unset");
        say_text(msg);
        app_free(a);
        return 1;
    }
    set_term(scr);
    atomic_store(&term_state, 1);
    atexit(restore_terminal);
    curses_setup();
    a->workers = 1;
    ui_styles_init(want_color());
    ui_glyphs_init(ui_locale_is_utf8());
    /* the status set by app_open was written before the glyphs were known */
    app_status_opened(a);

    run_loop(a);
    /* a terminal without an alternate screen (TERM=vt100, linux) would keep
     * the last frame under the shell's prompt: blank it first */
    const char *rmcup = tigetstr("rmcup");
    if (!rmcup || rmcup == (char *)-1 || !*rmcup) {
        werase(stdscr);
        wrefresh(stdscr);
    }
    restore_terminal();
    lw_set_fatal_cleanup(NULL);
    delscreen(scr);
    alarm(0); /* out of the loop and the terminal restored: the watchdog is not needed */
    int sig = got_signal;
    app_free(a);
    if (sig) {
        fprintf(stderr, "layerwise: interrupted\n");
        return 128 + sig;
    }
    return 0;
}
