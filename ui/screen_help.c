/*
 * screen_help: every key, read from the key tables themselves (the global
 * table, then each screen's), so help cannot drift from what the keys do;
 * then what the marks and colours mean.
 */
#include "draw.h"

#include <stdlib.h>
#include <string.h>

typedef struct line {
    int st;
    const char *key;   /* NULL: a heading or a sentence */
    const char *text;
} line;

#define MAX_LINES 256

static int collect(line *out)
{
    int n = 0;
    out[n++] = (line){ST_BOLD, NULL, "Everywhere"};
    for (const keybind *b = app_global_keys; b->fn && n < MAX_LINES; b++) out[n++] = (line){ST_NORMAL, b->label, b->help};
    for (int s = 0; s < SCR__COUNT && n < MAX_LINES - 2; s++) {
        const keybind *t = app_screens[s]->keys;
        if (!t || !t->fn) continue;
        out[n++] = (line){ST_NORMAL, NULL, ""};
        out[n++] = (line){ST_BOLD, NULL, app_screens[s]->title};
        for (const keybind *b = t; b->fn && n < MAX_LINES; b++) out[n++] = (line){ST_NORMAL, b->label, b->help};
    }
    static const char *const notes[] = {
        "",
        "Marks and colours",
        "P  the layer is pinned to a config (why-not, Enter)",
        "*  the layer's config changed with the last what-if",
        ("config colours: the split dimensions - n (sample), c (channel), h/w (spatial), and their mixes; the "
         "config text (\"n4 h2 w2\") says the same without colour"),
        "t_c compute, t_s parameter sync, t_x transfer of the layer's inputs; times are ms per training step",
        "Set NO_COLOR to turn colours off; LAYERWISE_ASCII=1 for plain ASCII lines.",
    };
    for (size_t i = 0; i < sizeof notes / sizeof notes[0] && n < MAX_LINES; i++)
        out[n++] = (line){i == 1 ? ST_BOLD : ST_NORMAL, NULL, notes[i]};
    return n;
}

static void draw_help(app *a, WINDOW *w, rect r)
{
    line lines[MAX_LINES];
    int n = collect(lines);
    list_cursor *c = &help_of(a)->cur;
    list_fit(c, n, r.h, 0);
    int kw = 20;
    for (int i = 0; i < r.h && c->top + i < n; i++) {
        const line *l = &lines[c->top + i];
        int y = r.y + i;
        if (l->key) {
            ui_put(w, y, r.x + 2, kw, ST_HINT_KEY, l->key);
            ui_put(w, y, r.x + 2 + kw, r.w - kw - 2, ST_NORMAL, l->text);
        } else {
            ui_put(w, y, r.x, r.w, l->st, l->text);
        }
    }
    if (n > r.h) {
        char b[48];
        snprintf(b, sizeof b, " %d-%d of %d ", c->top + 1, c->top + r.h < n ? c->top + r.h : n, n);
        ui_put_right(w, r.y, r.x, r.w, ST_DIM, b);
    }
}

static action k_scroll(app *a, int key)
{
    list_key(&help_of(a)->cur, key, MAX_LINES, 0, 0);
    return ACT_REDRAW;
}

static action k_close(app *a, int key)
{
    (void)key;
    app_close_overlay(a);
    return ACT_REDRAW;
}

/* Search: the lines (key names and what they do); the match scrolls to
 * the top. */
typedef struct find_ctx {
    const app *a;
    const line *lines;
} find_ctx;

static int line_matches(int i, void *user)
{
    const find_ctx *f = user;
    return app_search_match(f->a, f->lines[i].key) || app_search_match(f->a, f->lines[i].text);
}

static int find(app *a, int dir, int *nth)
{
    line lines[MAX_LINES];
    find_ctx f = {a, lines};
    int n = collect(lines);
    list_cursor *c = &help_of(a)->cur;
    /* from the last match while it is in view, else from the top line */
    if (c->sel < c->top || c->sel >= c->top + (c->rows > 0 ? c->rows : 1)) c->sel = c->top;
    int count = list_find(c, n, dir, line_matches, &f, nth);
    c->top = c->sel;
    return count;
}

static const keybind help_keys[] = {
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "scroll", k_scroll},
    {{KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END}, "PgUp PgDn Home End", "page / top / bottom", k_scroll},
    {{'?', KEY_F(1)}, "? F1", "close help (as Esc does)", k_close},
    {{0}, NULL, NULL, NULL},
};

static void enter_help(app *a) { help_of(a)->cur.top = 0; }

const screen_ops screen_help_ops = {
    .tab = NULL,
    .title = "Help (?)",
    .hints = "Up/Dn:scroll PgUp/PgDn:page Esc/?:close",
    .draw = draw_help,
    .keys = help_keys,
    .enter = enter_help,
    .overlay = " help ",
    .without_strategy = 1,
    .state_size = sizeof(help_state),
    .find = find,
    .find_what = "line",
};
