/*
 * screen_help: every key, read from the key tables themselves (so help
 * cannot drift from what the keys do): first the keys of the screen help was
 * opened from, then the global ones, then every other screen's; then the
 * mouse and what the marks and colours mean. Long lines are word-wrapped to
 * the width, key descriptions under their own column.
 */
#include "draw.h"
#include "find.h"
#include "keys.h"
#include "list.h"
#include "screens.h"

#include <stdlib.h>
#include <string.h>

typedef struct line {
    int st;
    const char *key;   /* NULL: a heading or a sentence */
    const char *text;
} line;

#define MAX_LINES 256
#define MAX_ROWS 512
#define KEY_W 20

static int add_section(line *out, int n, const char *title, const keybind *t)
{
    if (!t || !t->fn || n >= MAX_LINES - 2) return n;
    if (n) out[n++] = (line){ST_NORMAL, NULL, ""};
    out[n++] = (line){ST_BOLD, NULL, title};
    for (const keybind *b = t; b->fn && n < MAX_LINES; b++) out[n++] = (line){ST_NORMAL, b->label, b->help};
    return n;
}

/* title: room for the first section's heading (out points into it). */
static int collect(const app *a, line *out, char *title, size_t title_n)
{
    int n = 0;
    screen_id here = a->screen == SCR_HELP ? a->help_from : app_base_screen(a);
    snprintf(title, title_n, "This screen: %s", app_screens[here]->title ? app_screens[here]->title : "");
    n = add_section(out, n, title, app_screens[here]->keys);
    n = add_section(out, n, "Everywhere", app_global_keys);
    for (int s = 0; s < SCR__COUNT; s++)
        if (s != (int)here) n = add_section(out, n, app_screens[s]->title, app_screens[s]->keys);
    static const char *const notes[] = {
        "",
        "Mouse",
        "A click on a tab opens that screen; in the table a click selects a row and a double click asks why not; "
        "the wheel moves the selection (or scrolls) as Up and Down do.",
        "",
        "Marks and colours",
        "P  the layer is pinned to a config (why-not, Enter)",
        "*  the layer's config changed with the last what-if, or with F's refinement",
        "Config colours: the split dimensions, in the exports' colours too: n (sample) blue, c (channel) orange, "
        "h/w (spatial) green, mixed purple, one GPU grey. Without colour, bold, underline and dim say the same, "
        "and the config text (\"n4 h2 w2\") always does.",
        "t_c compute, t_s parameter sync, t_x transfer of the layer's inputs; times are ms per training step "
        "(Eq. 1, the paper's additive model, unless marked simulated).",
        "Set NO_COLOR to turn colours off; LAYERWISE_ASCII=1 for plain ASCII lines.",
    };
    for (size_t i = 0; i < sizeof notes / sizeof notes[0] && n < MAX_LINES; i++)
        out[n++] = (line){i == 1 || i == 4 ? ST_BOLD : ST_NORMAL, NULL, notes[i]};
    return n;
}

/* One row on screen: a line's key (on its first row) and a piece of its
 * text, cut at a word boundary to the width. */
typedef struct hrow {
    const line *l;
    int first;
    char text[256];
} hrow;

/* Wraps the lines into rows of width w; returns how many. */
static int layout_rows(const line *lines, int n, int w, hrow *rows)
{
    int k = 0;
    for (int i = 0; i < n && k < MAX_ROWS; i++) {
        const line *l = &lines[i];
        int tw = l->key ? w - 2 - KEY_W : w;
        if (tw < 10) tw = 10;
        const char *s = l->text;
        int first = 1;
        do {
            /* take words while they fit (a word wider than the row is cut) */
            size_t len = 0;
            int cols = 0;
            const char *q = s;
            while (*q) {
                const char *e = q;
                while (*e && *e != ' ') e++;
                char word[256];
                snprintf(word, sizeof word, "%.*s", (int)(e - q < 255 ? e - q : 255), q);
                int ww = ui_width(word), need = (cols ? 1 : 0) + ww;
                if (cols && cols + need > tw) break;
                if (len + (size_t)(e - q) + 2 >= sizeof rows[k].text) break;
                if (cols) rows[k].text[len++] = ' ';
                memcpy(rows[k].text + len, q, (size_t)(e - q));
                len += (size_t)(e - q);
                cols += need;
                q = e;
                while (*q == ' ') q++;
            }
            if (q == s && *q) q++; /* never stall */
            rows[k].text[len] = 0;
            rows[k].l = l;
            rows[k].first = first;
            first = 0;
            k++;
            s = q;
        } while (*s && k < MAX_ROWS);
    }
    return k;
}

/* The help's rows at width w (the caller frees *rows); lines and title
 * are the caller's room for what the rows point at. */
static int help_rows(const app *a, int w, line *lines, char *title, size_t title_n, hrow **rows)
{
    int n = collect(a, lines, title, title_n);
    *rows = lw_malloc(sizeof(hrow) * MAX_ROWS);
    return layout_rows(lines, n, w, *rows);
}

static void draw_help(app *a, WINDOW *w, rect r)
{
    line lines[MAX_LINES];
    char title[96];
    hrow *rows;
    int nr = help_rows(a, r.w, lines, title, sizeof title, &rows);
    list_cursor *c = &help_of(a)->cur;
    /* a help longer than the screen keeps its last row for the counter,
     * so the counter covers no text (issue 36, bug 1) */
    int more = nr > r.h, rows_h = more ? r.h - 1 : r.h;
    if (rows_h < 1) rows_h = 1;
    list_fit(c, nr, rows_h, 0);
    for (int i = 0; i < rows_h && c->top + i < nr; i++) {
        const hrow *h = &rows[c->top + i];
        int y = r.y + i;
        if (h->l->key) {
            if (h->first) ui_put(w, y, r.x + 2, KEY_W, ST_HINT_KEY, h->l->key);
            ui_put(w, y, r.x + 2 + KEY_W, r.w - KEY_W - 2, ST_NORMAL, h->text);
        } else {
            ui_put(w, y, r.x, r.w, h->l->st, h->text);
        }
    }
    if (more && r.h > 1) {
        char b[48];
        snprintf(b, sizeof b, " %d-%d of %d ", c->top + 1, c->top + rows_h < nr ? c->top + rows_h : nr, nr);
        ui_put_right(w, r.y + r.h - 1, r.x, r.w, ST_DIM, b);
    }
    free(rows);
}

static action k_scroll(app *a, int key)
{
    list_key(&help_of(a)->cur, key, MAX_ROWS, 0, 0);
    return ACT_REDRAW;
}

static action k_close(app *a, int key)
{
    (void)key;
    app_close_overlay(a);
    return ACT_REDRAW;
}

/* Search: the rows as the last frame wrapped them (key names and what
 * they do); the match scrolls to the top. */
typedef struct find_ctx {
    const app *a;
    const hrow *rows;
} find_ctx;

static int line_matches(int i, void *user)
{
    const find_ctx *f = user;
    const hrow *h = &f->rows[i];
    return (h->first && app_search_match(f->a, h->l->key)) || app_search_match(f->a, h->text);
}

static int find(app *a, int dir, int *nth)
{
    line lines[MAX_LINES];
    char title[96];
    hrow *rows;
    int n = help_rows(a, a->frame.w > 0 ? a->frame.w : TUI_MIN_W, lines, title, sizeof title, &rows);
    find_ctx f = {a, rows};
    list_cursor *c = &help_of(a)->cur;
    /* from the last match while it is in view, else from the top line */
    if (c->sel < c->top || c->sel >= c->top + (c->rows > 0 ? c->rows : 1)) c->sel = c->top;
    int count = list_find(c, n, dir, line_matches, &f, nth);
    c->top = c->sel;
    free(rows);
    return count;
}

static const keybind help_keys[] = {
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "scroll", k_scroll},
    {{KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END}, "PgUp PgDn Home End", "page / top / bottom", k_scroll},
    {{'?', KEY_F(1), 'q'}, "? F1 q", "close help (as Esc does)", k_close},
    {{0}, NULL, NULL, NULL},
};

static void enter_help(app *a) { help_of(a)->cur.top = 0; }

const screen_ops screen_help_ops = {
    .tab = NULL,
    .title = "Help (?)",
    .hints = "Up/Dn:scroll PgUp/PgDn:page Esc/?/q:close",
    .draw = draw_help,
    .keys = help_keys,
    .enter = enter_help,
    .overlay = " help ",
    .without_strategy = 1,
    .state_size = sizeof(help_state),
    .find = find,
    .find_what = "line",
};
