/*
 * tui_screen: the headless terminal the screen tests draw into (ncurses'
 * own in-memory screen: newterm on /dev/null, a fixed size by resizeterm),
 * read back cell by cell as tig's tests do, and the few ways they drive an
 * app (keys through the same handler the event loop uses). Every helper is
 * static inline, so a test file uses only what it needs; each test opens
 * its own SCREEN, so tests stay independent under --jobs and ASan.
 */
#ifndef LW_TUI_SCREEN_H
#define LW_TUI_SCREEN_H

#include "app.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "draw.h"
#include "keys.h"

#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

/* ---------- a virtual terminal */

static SCREEN *scr;
static FILE *term_in, *term_out;

static inline void term_open(int h, int w, int utf8)
{
    setlocale(LC_ALL, utf8 ? "C.UTF-8" : "C");
    term_out = fopen("/dev/null", "w");
    term_in = fopen("/dev/null", "r");
    cr_assert(term_out && term_in);
    scr = newterm("xterm-256color", term_out, term_in);
    cr_assert_not_null(scr, "newterm failed (is the xterm-256color terminfo entry installed?)");
    set_term(scr);
    resizeterm(h, w);
    ui_styles_init(0);
    ui_glyphs_init(utf8);
}

static inline void term_close(void)
{
    endwin();
    delscreen(scr);
    fclose(term_in);
    fclose(term_out);
}

static inline void term_resize(int h, int w)
{
    resizeterm(h, w);
    cr_assert_eq(LINES, h);
    cr_assert_eq(COLS, w);
}

/* Row y of the virtual screen as UTF-8, trailing blanks dropped. */
static inline const char *row(int y)
{
    static char buf[4096];
    size_t k = 0;
    mbstate_t ms;
    memset(&ms, 0, sizeof ms);
    for (int x = 0; x < COLS && k + 8 < sizeof buf; x++) {
        cchar_t cc;
        if (mvwin_wch(stdscr, y, x, &cc) == ERR) break;
        wchar_t wc[CCHARW_MAX + 1];
        attr_t at;
        short pair;
        getcchar(&cc, wc, &at, &pair, NULL);
        size_t n = wcrtomb(buf + k, wc[0] ? wc[0] : L' ', &ms);
        if (n == (size_t)-1) buf[k++] = '?';
        else k += n;
    }
    while (k > 0 && buf[k - 1] == ' ') k--;
    buf[k] = 0;
    return buf;
}

/* Whole screen, for failure messages. */
static inline const char *dump(void)
{
    static char buf[65536];
    size_t k = 0;
    for (int y = 0; y < LINES && k < sizeof buf - 600; y++) k += (size_t)snprintf(buf + k, sizeof buf - k, "%s\n", row(y));
    return buf;
}

/* First row containing needle, or -1. */
static inline int find_row(const char *needle)
{
    for (int y = 0; y < LINES; y++)
        if (strstr(row(y), needle)) return y;
    return -1;
}

/* Last row containing needle, or -1. */
static inline int find_last_row(const char *needle)
{
    for (int y = LINES - 1; y >= 0; y--)
        if (strstr(row(y), needle)) return y;
    return -1;
}

/* First row containing both strings, or -1. */
static inline int find_row2(const char *a, const char *b)
{
    for (int y = 0; y < LINES; y++) {
        const char *r = row(y);
        if (strstr(r, a) && strstr(r, b)) return y;
    }
    return -1;
}

/* The table's column header and its totals row. */
static inline int header_row(void) { return find_row2(" layer ", " config"); }
static inline int totals_row(void) { return find_row("─total"); }

static inline attr_t attr_at(int y, int x)
{
    cchar_t cc;
    mvwin_wch(stdscr, y, x, &cc);
    wchar_t wc[CCHARW_MAX + 1];
    attr_t at;
    short pair;
    getcchar(&cc, wc, &at, &pair, NULL);
    return at;
}

static inline app *open_app(const char *net, const char *cl, int gpus)
{
    tui_args args = {.net = net, .cluster = cl, .set = {gpus, 0, 0}, .sync = -1};
    lw_error err = {0};
    app *a = app_open(&args, &err);
    cr_assert_not_null(a, "app_open(%s, %s, %d): %s", net, cl, gpus, err.msg);
    return a;
}

static inline void draw(app *a) { app_draw(a, stdscr); }

/* The index of config `text` (config_parse's form, "c16") among the
 * current model's configs of layer `name`. */
static inline int config_index(app *a, const char *name, const char *text)
{
    int li = net_find(a->p->net, name);
    cr_assert(li >= 0, "no layer %s", name);
    config c;
    cr_assert_eq(config_parse(text, &c), 0, "%s", text);
    int k = config_find(a->p->cm->configs[li], a->p->cm->n_configs[li], &c);
    cr_assert(k >= 0, "%s has no config %s", name, text);
    return k;
}

static inline void type(app *a, const char *s)
{
    for (; *s; s++) app_feed(a, (unsigned char)*s);
}

/* The pipeline what-if as `|` sets it: the prompt opened, its text
 * replaced by text (^U) and submitted; the prompt is closed after, whether
 * the setting was taken or refused. */
static inline void set_pipeline(app *a, const char *text)
{
    app_feed(a, '|');
    cr_assert_eq(a->prompt.kind, PROMPT_PIPELINE);
    app_feed(a, 0x15); /* ^U */
    type(a, text);
    app_feed(a, '\r');
    cr_assert_eq(a->prompt.kind, PROMPT_NONE);
}

static inline void finish_idle(app *a)
{
    /* a worker's work (explain's probes) is polled for, as the loop does */
    double t0 = lw_now();
    for (int i = 0; i < 10000 && app_idle(a, 1.0) && lw_now() - t0 < 600; i++)
        if (app_waiting(a)) usleep(2000);
    cr_assert_not(app_busy(a), "background work did not finish");
}

/* Makes the directory dir names (a mkdtemp template) and keeps the working
 * directory in cwd, for tests that write files and chdir back. */
static inline void temp_dir(char *dir, char *cwd, size_t n)
{
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_not_null(getcwd(cwd, n));
}

/* e on the screen shown writes names[0] (the prompt's default), names[1]
 * and names[2] (typed over it) as SVG, PNG and PDF: the status says "wrote
 * WHAT", each file starts as its format does (and is removed); then bad,
 * another extension, is refused naming the formats and is not written. */
static inline void export_each_format(app *a, const char *what, const char *const names[3], const char *bad)
{
    static const char *const starts[] = {"<?xml", "\x89PNG", "%PDF-"};
    char wrote[80];
    snprintf(wrote, sizeof wrote, "wrote %s", what);
    for (int i = 0; i < 3; i++) {
        app_feed(a, 'e');
        if (!i) {
            cr_assert_str_eq(a->prompt.buf, names[0]);
        } else {
            app_feed(a, 21 /* ^U */);
            type(a, names[i]);
        }
        app_feed(a, '\r');
        cr_assert(!a->status_error && strstr(a->status, wrote), "%s", a->status);
        size_t len;
        char *text = lw_read_file(names[i], &len, NULL);
        cr_assert(text && len > 100 && !strncmp(text, starts[i], strlen(starts[i])), "%s", names[i]);
        free(text);
        unlink(names[i]);
    }
    app_feed(a, 'e');
    app_feed(a, 21 /* ^U */);
    type(a, bad);
    app_feed(a, '\r');
    cr_assert(a->status_error && strstr(a->status, ".svg, .png or .pdf"), "%s", a->status);
    cr_assert_eq(access(bad, F_OK), -1);
}

/* Selects the layer by name through the table's keys (Home, then Down). */
static inline void select_layer(app *a, const char *name)
{
    app_feed(a, KEY_HOME);
    for (int i = 0; i < a->p->net->n_layers; i++) {
        if (strcmp(a->p->net->layers[a->sel].name, name) == 0) return;
        app_feed(a, KEY_DOWN);
    }
    cr_assert_fail("layer %s not reachable in the table", name);
}

#endif
