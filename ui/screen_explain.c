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
#include "keys.h"
#include "list.h"
#include "screens.h"
#include "explain.h"

#include <stdlib.h>
#include <string.h>

#define X(a) explain_of(a)

static int explain_busy(const app *a);

/* The job's answer, if it is in: the explanation, or the status says why
 * not (a cancelled one is dropped without a word: Esc said so). */
static void explain_take(app *a)
{
    explain_state *xs = X(a);
    if (!xs->job) return;
    lw_error err = {0};
    int cancelled = explain_job_cancelled(xs->job);
    int rc = explain_poll(xs->job, &xs->e, &err);
    if (rc == 0) return;
    int li = explain_job_layer(xs->job);
    explain_job_free(xs->job);
    xs->job = NULL;
    if (cancelled) return;
    if (rc < 0) {
        app_set_status(a, 1, "explain: %s", err.msg);
        xs->layer = -1;
        return;
    }
    xs->valid = li == xs->layer;
    if (xs->valid) app_set_status(a, 0, "explained %s (%.1f s)", plan_net(a->p)->layers[li].name, lw_now() - xs->job_t0);
}

/* (Re)computes the explanation of the layer asked about for the current
 * optimum: at once in a test, on a thread in the TUI (a->workers), whose
 * answer explain_take picks up; the status line says why when it cannot. */
static void explain_ensure(app *a)
{
    explain_state *xs = X(a);
    explain_take(a);
    if (xs->layer < 0 || xs->valid) return;
    if (xs->job && !explain_job_cancelled(xs->job) && explain_job_layer(xs->job) == xs->layer) return;
    lw_error err = {0};
    if (!plan_search_result(a->p)) {
        app_set_status(a, 1, "explain: there is no strategy to explain");
        xs->layer = -1;
        return;
    }
    explain_job_free(xs->job); /* a cancelled one, or of another layer: waits for its thread to stop */
    xs->job = a->workers ? explain_start(a->p, xs->layer) : NULL;
    if (xs->job) {
        xs->job_t0 = lw_now();
        app_set_status(a, 0, "explaining %s%s (Esc cancels)", plan_net(a->p)->layers[xs->layer].name, G->ellipsis);
        return;
    }
    if (explain_layer(a->p, xs->layer, &xs->e, &err) != 0) {
        app_set_status(a, 1, "explain: %s", err.msg);
        xs->layer = -1;
        return;
    }
    xs->valid = 1;
}

void app_explain_stop(app *a)
{
    explain_state *xs = X(a);
    if (!xs || !xs->job) return;
    explain_job_free(xs->job);
    xs->job = NULL;
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

/* What the global table does with key (Esc: back). */
static action global_key(app *a, int key)
{
    for (const keybind *b = app_global_keys; b->fn; b++)
        for (int i = 0; i < 4 && b->keys[i]; i++)
            if (b->keys[i] == key) return b->fn(a, key);
    return ACT_NONE;
}

/* Esc while the explanation is being worked out: cancelled (its thread
 * stops at its next check), back to the screen below; else the global Esc. */
static action k_escape(app *a, int key)
{
    explain_state *xs = X(a);
    if (!xs->job || explain_job_cancelled(xs->job)) return global_key(a, key);
    explain_job_cancel(xs->job);
    app_set_status(a, 0, "explain %s: cancelled", plan_net(a->p)->layers[explain_job_layer(xs->job)].name);
    xs->layer = -1;
    app_close_overlay(a);
    return ACT_REDRAW;
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
    if (!xs->valid) { /* on its thread: say so; keys still work */
        ui_fill(w, r.y, r.x, r.w, ST_HEADER);
        ui_putf(w, r.y, r.x, r.w, ST_HEADER, "explain %s: working it out%s", l->name, G->ellipsis);
        ui_putf(w, r.y + 2, r.x, r.w, ST_NORMAL, "Ranking %s's configs with every other layer re-optimised "
                "(%.0f s so far).", l->name, xs->job ? lw_now() - xs->job_t0 : 0.0);
        ui_put(w, r.y + 3, r.x, r.w, ST_DIM, "Esc cancels and goes back.");
        return;
    }
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
    {{27}, "Esc", "back; while the explanation is worked out, cancels it", k_escape},
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
    app_explain_stop(a); /* of the old plan (app_perform stopped it before the change) */
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
    if (xs->job) return 1;
    if (xs->layer < 0 || !xs->valid) return 0;
    return explain_step_async(a->p, &xs->e);
}

/* A probe is out: the loop polls for it instead of spinning. */
static int explain_waiting(const app *a)
{
    const explain_state *xs = X(a);
    return xs->job != NULL || (xs->layer >= 0 && xs->valid && xs->e.posted);
}

/* Leaving the screen cancels the probe out (it is asked again on return). */
static void explain_leave(app *a)
{
    explain_state *xs = X(a);
    if (xs->valid) explain_cancel(a->p, &xs->e);
    if (xs->job && !explain_job_cancelled(xs->job)) { /* another screen: the explanation is not wanted */
        explain_job_cancel(xs->job);
        xs->layer = -1;
    }
}

static void explain_free(app *a, void *st)
{
    (void)a;
    explain_state *xs = st;
    explain_job_free(xs->job);
    free(xs);
}

const screen_ops screen_explain_ops = {
    .tab = NULL,
    .title = "Explain (i on a layer)",
    .hints = "Up/Dn:scroll p:pin runner-up Esc:back",
    .draw = draw_explain,
    .keys = explain_keys,
    .overlay = " explain ",
    .state_new = explain_new,
    .state_free = explain_free,
    .invalidate = explain_invalidate,
    .idle = explain_idle,
    .busy = explain_busy,
    .waiting = explain_waiting,
    .leave = explain_leave,
};
