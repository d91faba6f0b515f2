/*
 * screen_explain: why the selected layer has its config (the engine's
 * explain.h) as scrollable text: its weights and activations, its t_c,
 * t_s, t_x in and out against the best alternatives, which term decides,
 * the best config of each way to split it (weights synced against
 * activations moved), its GPUs and nodes, and the bandwidth and batch at
 * which the runner-up would win. The crossover searches build a cost model per probe, so each
 * probe runs on the plan's background worker (explain_step_async) while
 * the text above them is read; leaving the screen cancels the one out.
 */
#include "draw.h"
#include "list.h"
#include "screens.h"
#include "explain.h"

#include <stdlib.h>
#include <string.h>

#define X(a) explain_of(a)

static int explain_busy(const app *a);

/* (Re)computes the explanation of the layer asked about for the current
 * optimum; the status line says why when it cannot. */
static void explain_ensure(app *a)
{
    explain_state *xs = X(a);
    if (xs->layer < 0 || xs->valid) return;
    lw_error err = {0};
    if (!plan_search_result(a->p) || explain_layer(a->p, xs->layer, &xs->e, &err) != 0) {
        app_set_status(a, 1, "explain: %s", plan_search_result(a->p) ? err.msg : "there is no strategy to explain");
        xs->layer = -1;
        return;
    }
    xs->valid = 1;
}

void app_explain_open(app *a, int li)
{
    if (!plan_search_result(a->p) || li < 0 || li >= plan_net(a->p)->n_layers) return;
    explain_state *xs = X(a);
    if (xs->layer != li) {
        xs->cur.sel = xs->cur.top = 0;
        xs->valid = 0;
    }
    xs->layer = li;
    explain_ensure(a);
    if (xs->layer >= 0) app_open_screen(a, SCR_EXPLAIN);
}

static int line_style(const char *s)
{
    if (s[0] == '*') return ST_GOOD;
    if (strncmp(s, "  config ", 9) == 0) return ST_BOLD;
    if (strncmp(s, "Why ", 4) == 0 || strncmp(s, "Placement:", 10) == 0 || strncmp(s, "For the runner-up", 17) == 0 ||
        strncmp(s, "Each way to split", 17) == 0)
        return ST_BOLD;
    return ST_NORMAL;
}

static void draw_explain(app *a, WINDOW *w, rect r)
{
    explain_state *xs = X(a);
    explain_ensure(a);
    if (xs->layer < 0) {
        ui_put(w, r.y, r.x, r.w, ST_DIM, "Select a layer (table or graph) and press i.");
        return;
    }
    const plan *p = a->p;
    const layer *l = &plan_net(p)->layers[xs->layer];
    char cb[64];
    plan_format_config(p, xs->layer, plan_config(p, xs->layer, xs->e.alt[0].config), cb, sizeof cb);
    ui_fill(w, r.y, r.x, r.w, ST_HEADER);
    int x = ui_putf(w, r.y, r.x, r.w, ST_HEADER, "explain %s: %s (Eq. 1)", l->name, cb);
    int done, total;
    explain_progress(&xs->e, &done, &total);
    if (explain_busy(a) && total > 0) {
        x += ui_putf(w, r.y, r.x + x, r.w - x, ST_HEADER, " %s crossovers ", G->dot);
        ui_progress(w, r.y, r.x + x, r.w - x - 1, (double)done / total);
    }
    char *text = explain_text(p, &xs->e, r.w);
    /* the lines, scrolled */
    int n = 0;
    for (const char *s = text; *s; s++) n += *s == '\n';
    int rows = r.h - 2; /* the last row says whether more is below */
    if (rows < 1) rows = 1;
    list_fit(&xs->cur, n, rows, 0);
    const char *s = text;
    for (int i = 0; i < n && *s; i++) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        int y = i - xs->cur.top;
        if (y >= 0 && y < rows) {
            char line[512];
            snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), s);
            ui_put(w, r.y + 1 + y, r.x, r.w, line_style(line), line);
        }
        s += len + (nl != NULL);
    }
    if (xs->cur.top + rows < n)
        ui_put_right(w, r.y + r.h - 1, r.x, r.w, ST_DIM, " more below (Down, PgDn) ");
    xs->lines = n;
    free(text);
}

static action k_scroll(app *a, int key)
{
    list_key(&X(a)->cur, key, X(a)->lines, 0, 0);
    return ACT_REDRAW;
}

static action k_pin_runner(app *a, int key)
{
    (void)key;
    explain_state *xs = X(a);
    if (xs->layer < 0 || !xs->valid || xs->e.n_alts < 2) {
        app_set_status(a, 0, "no alternative to pin");
        return ACT_REDRAW;
    }
    int li = xs->layer, k = xs->e.alt[1].config;
    app_close_overlay(a);
    return app_pin(a, li, k);
}

static const keybind explain_keys[] = {
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "scroll the explanation", k_scroll},
    {{KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END}, "PgUp PgDn Home End", "page / top / bottom", k_scroll},
    {{'p'}, "p", "pin the layer to the runner-up; the rest re-optimised", k_pin_runner},
    {{0}, NULL, NULL, NULL},
};

static void *explain_new(app *a)
{
    (void)a;
    explain_state *xs = lw_calloc(1, sizeof *xs);
    xs->layer = -1;
    return xs;
}

static void explain_invalidate(app *a, int settings)
{
    (void)settings;
    if (X(a)->valid) explain_cancel(a->p, &X(a)->e); /* its answer is of the old plan */
    X(a)->valid = 0; /* recomputed for the new optimum when next drawn, read from the top */
    X(a)->cur.top = 0;
}

/* Crossover probes remain (or the explanation is to be recomputed). */
static int explain_busy(const app *a)
{
    const explain_state *xs = X(a);
    if (xs->layer < 0) return 0;
    if (!xs->valid) return 1;
    for (int i = 0; i < xs->e.n_cross; i++)
        if (!xs->e.cross[i].done) return 1;
    return 0;
}

/* The crossover probes run on the plan's background worker, one at a
 * time: a slice takes the answer of the one out, if done, and posts the
 * next, so keys are answered while a cost model is built. */
static int explain_idle(app *a, double budget_s)
{
    (void)budget_s;
    explain_state *xs = X(a);
    explain_ensure(a);
    if (xs->layer < 0 || !xs->valid) return 0;
    return explain_step_async(a->p, &xs->e);
}

/* A probe is out: the loop polls for it instead of spinning. */
static int explain_waiting(const app *a)
{
    const explain_state *xs = X(a);
    return xs->layer >= 0 && xs->valid && xs->e.posted;
}

/* Leaving the screen cancels the probe out (it is asked again on return). */
static void explain_leave(app *a)
{
    explain_state *xs = X(a);
    if (xs->valid) explain_cancel(a->p, &xs->e);
}

const screen_ops screen_explain_ops = {
    .tab = NULL,
    .title = "Explain (i on a layer)",
    .hints = "Up/Dn:scroll p:pin runner-up Esc:back",
    .draw = draw_explain,
    .keys = explain_keys,
    .overlay = " explain ",
    .state_new = explain_new,
    .invalidate = explain_invalidate,
    .idle = explain_idle,
    .busy = explain_busy,
    .waiting = explain_waiting,
    .leave = explain_leave,
};
