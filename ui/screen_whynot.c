/*
 * screen_whynot: "why not this config?" for one layer. Every config of the
 * layer with the best whole-strategy total when the layer is forced to it
 * (every other layer re-optimised), sorted, the delta against the current
 * strategy, and how many other layers would change. The layer's own t_c
 * and t_s are the config's; its t_x (incoming edges) depends on its
 * producers' configs in that strategy, so it comes with "others". Enter pins the
 * selected config and re-optimises around it.
 *
 * The totals come at once from one search and its min-marginals
 * (plan_whynot_totals: about the time of one search). The "others" column
 * needs each forced strategy itself, one search per config (70 configs on
 * Inception-v3 at 16 GPUs, tens of ms each), so it fills in a few entries
 * per idle slice, best first. Where the min-marginals do not apply (a graph
 * whose final step is variable elimination) the totals come that way too.
 */
#include "draw.h"
#include "find.h"
#include "list.h"
#include "screens.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W(a) whynot_of(a)

static int *display_order(const app *a);

int whynot_step(app *a, double budget_s)
{
    const plan *p = a->p;
    int li = W(a)->layer;
    if (li < 0 || !W(a)->e || !plan_search_result(p)) return 0;
    double t0 = lw_now();
    /* a pinned layer is asked about as if it were free (the engine's
     * plan_whynot_totals and plan_cost_with_pin ignore its own pin) */
    int pin = plan_pinned(p)[li];
    if (W(a)->marginals == 0) {
        double *tot = lw_malloc(sizeof(double) * (size_t)plan_n_configs(p, li));
        W(a)->marginals = plan_whynot_totals(p, li, tot) == 0 ? 1 : -1;
        if (W(a)->marginals > 0) {
            for (int i = 0; i < W(a)->n; i++) {
                whynot_entry *e = &W(a)->e[i];
                e->total_ms = tot[e->config];
                e->done = 1;
            }
            W(a)->done = W(a)->n;
        }
        free(tot);
    }
    /* the current optimum needs no search */
    for (int i = 0; i < W(a)->n; i++) {
        whynot_entry *e = &W(a)->e[i];
        if (e->config != plan_best(p)[li] || pin >= 0 || e->counted) continue;
        if (!e->done) W(a)->done++;
        e->total_ms = plan_best_eval(p)->total_ms;
        e->tx_ms = plan_best_eval(p)->layers[li].transfer_ms;
        e->changed = 0;
        e->done = e->counted = 1;
        W(a)->counted++;
    }
    int *ord = display_order(a);
    for (int q = 0; q < W(a)->n && lw_now() - t0 < budget_s; q++) {
        whynot_entry *e = &W(a)->e[ord[q]];
        if (e->counted) continue;
        double c = plan_cost_with_pin(p, li, e->config, W(a)->tmp);
        if (!e->done) {
            e->total_ms = c;
            e->done = 1;
            W(a)->done++;
        }
        e->changed = 0;
        e->tx_ms = 0;
        if (isfinite(c)) {
            e->changed = plan_layers_changed(p, li, W(a)->tmp);
            e->tx_ms = plan_tx_in(p, li, e->config, W(a)->tmp);
        }
        e->counted = 1;
        W(a)->counted++;
    }
    free(ord);
    return W(a)->counted < W(a)->n;
}

/* Display order: computed entries by total (the current config first among
 * equals), then those still to come. */
static int *display_order(const app *a)
{
    int n = W(a)->n;
    int *ord = lw_malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) ord[i] = i;
    int cur = plan_best(a->p)[W(a)->layer];
    for (int i = 1; i < n; i++) {
        int x = ord[i], j = i - 1;
        for (; j >= 0; j--) {
            const whynot_entry *p = &W(a)->e[ord[j]], *q = &W(a)->e[x];
            int before; /* q goes before p */
            if (p->done != q->done) before = q->done;
            else if (!q->done) before = 0;
            else if (q->total_ms < p->total_ms - 1e-9) before = 1;
            else if (q->total_ms > p->total_ms + 1e-9) before = 0;
            else before = q->config == cur && p->config != cur;
            if (!before) break;
            ord[j + 1] = ord[j];
        }
        ord[j + 1] = x;
    }
    return ord;
}

/* The why-not table's columns, their titles and widths. */
enum { K_CFG, K_GPUS, K_TC, K_TS, K_TX, K_TOTAL, K_DMS, K_DPCT, K_OTHERS, K__COUNT };
static const char *const heads[K__COUNT] = {"config", "GPUs", "t_c", "t_s", "t_x", "best total", "delta ms", "delta",
                                            "others"};
static const int widths[K__COUNT] = {11, 4, 7, 7, 7, 10, 9, 7, 6};

/* Entry e's row at line yy (columns at cx): its mark, config, GPUs, t_c,
 * t_s, t_x, the best total with it and the difference to the optimum, and
 * how many other layers change; an ellipsis while it is computed. best:
 * the lowest total computed so far. */
static void draw_whynot_row(app *a, WINDOW *w, rect r, const int *cx, const whynot_entry *e, int yy, int sel,
                            double best)
{
    const plan *p = a->p;
    int li = W(a)->layer;
    int cur = e->config == plan_best(p)[li];
    int base = sel ? ST_SELECTED : ST_NORMAL;
    if (sel) ui_fill(w, yy, r.x, r.w, ST_SELECTED);
    const config *c = plan_config(p, li, e->config);
    char b[64];
    const char *mark = plan_pinned(p)[li] == e->config ? "P" : cur ? G->star : " ";
    ui_put(w, yy, r.x, 1, sel ? base : plan_pinned(p)[li] == e->config ? ST_PINNED : ST_GOOD, mark);
    plan_format_config(p, li, c, b, sizeof b);
    ui_put(w, yy, cx[0], widths[0], sel ? base : ST_CLASS0 + config_class(c), b);
    snprintf(b, sizeof b, "%d", config_tasks(c));
    ui_put_right(w, yy, cx[K_GPUS], widths[K_GPUS], base, b);
    snprintf(b, sizeof b, "%.2f", plan_t_c(p, li, e->config));
    ui_put_right(w, yy, cx[K_TC], widths[K_TC], base, b);
    snprintf(b, sizeof b, "%.2f", plan_t_s(p, li, e->config));
    ui_put_right(w, yy, cx[K_TS], widths[K_TS], base, b);
    snprintf(b, sizeof b, "%.2f", e->tx_ms);
    ui_put_right(w, yy, cx[K_TX], widths[K_TX], e->counted || sel ? base : ST_DIM,
                 e->counted && isfinite(e->total_ms) ? b : e->counted ? "-" : G->ellipsis);
    if (!e->done) {
        ui_put_right(w, yy, cx[K_TOTAL], widths[K_TOTAL], sel ? base : ST_DIM, G->ellipsis);
        return;
    }
    double d = e->total_ms - W(a)->opt_ms;
    int dst = sel ? base : fabs(d) < 1e-9 ? ST_GOOD : d > 0 ? ST_BAD : ST_GOOD;
    if (!isfinite(e->total_ms)) {
        ui_put_right(w, yy, cx[K_TOTAL], widths[K_TOTAL], dst, "inf");
        return;
    }
    snprintf(b, sizeof b, "%.2f", e->total_ms);
    ui_put_right(w, yy, cx[K_TOTAL], widths[K_TOTAL], sel ? base : e->total_ms <= best + 1e-9 ? ST_GOOD : ST_NORMAL,
                 b);
    snprintf(b, sizeof b, "%+.2f", fabs(d) < 5e-3 ? 0.0 : d);
    ui_put_right(w, yy, cx[K_DMS], widths[K_DMS], dst, b);
    snprintf(b, sizeof b, "%+.1f%%", W(a)->opt_ms > 0 && fabs(d) >= 5e-3 ? d / W(a)->opt_ms * 100 : 0.0);
    ui_put_right(w, yy, cx[K_DPCT], widths[K_DPCT], dst, b);
    snprintf(b, sizeof b, "%d", e->changed);
    int ox = cx[K_OTHERS], ow = widths[K_OTHERS];
    if (ox + ow <= r.x + r.w)
        ui_put_right(w, yy, ox, ow, e->counted || sel ? base : ST_DIM, e->counted ? b : G->ellipsis);
    if (cur && ox + ow + 10 <= r.x + r.w)
        ui_put(w, yy, ox + ow + 1, r.x + r.w - ox - ow - 1, sel ? base : ST_GOOD,
               plan_pinned(p)[li] >= 0 ? "current" : "optimum");
}

static void draw_whynot(app *a, WINDOW *w, rect r)
{
    const plan *p = a->p;
    int li = W(a)->layer;
    if (li < 0 || !W(a)->e) {
        ui_put(w, r.y, r.x, r.w, ST_DIM, "Select a layer in the table and press w or Enter.");
        return;
    }
    const layer *l = &plan_net(p)->layers[li];
    char cb[64], sh[64];
    plan_format_config(p, li, plan_config(p, li, plan_best(p)[li]), cb, sizeof cb);
    shape_format(l->out, sh, sizeof sh);
    ui_fill(w, r.y, r.x, r.w, ST_HEADER);
    int x = ui_putf(w, r.y, r.x, r.w, ST_HEADER, "why not? %s (%s, %s): %d configs %s now %s%s", l->name,
                    layer_type_name(l->type), sh, W(a)->n, G->dot, cb, plan_pinned(p)[li] >= 0 ? " (pinned)" : "");
    if (W(a)->done < W(a)->n) {
        x += ui_putf(w, r.y, r.x + x, r.w - x, ST_HEADER, " %s computing %d/%d ", G->dot, W(a)->done, W(a)->n);
        ui_progress(w, r.y, r.x + x, r.w - x - 1, W(a)->n ? (double)W(a)->done / W(a)->n : 1);
    } else if (W(a)->counted < W(a)->n) {
        x += ui_putf(w, r.y, r.x + x, r.w - x, ST_HEADER, " %s others %d/%d ", G->dot, W(a)->counted, W(a)->n);
        ui_progress(w, r.y, r.x + x, r.w - x - 1, W(a)->n ? (double)W(a)->counted / W(a)->n : 1);
    }
    /* columns */
    int y = r.y + 1;
    int cx[K__COUNT], xx = r.x + 2;
    for (int c = 0; c < K__COUNT; c++) {
        cx[c] = xx;
        xx += widths[c] + 1;
    }
    ui_fill(w, y, r.x, r.w, ST_BOLD);
    for (int c = 0; c < K__COUNT; c++) {
        if (cx[c] + widths[c] > r.x + r.w) break;
        if (c == 0) ui_put(w, y, cx[c], widths[c], ST_BOLD, heads[c]);
        else ui_put_right(w, y, cx[c], widths[c], ST_BOLD, heads[c]);
    }
    int rows = r.h - 5;
    if (rows < 1) rows = 1;
    list_fit(&W(a)->cur, W(a)->n, rows, 1);
    int *ord = display_order(a);
    double best = INFINITY;
    for (int i = 0; i < W(a)->n; i++)
        if (W(a)->e[i].done && W(a)->e[i].total_ms < best) best = W(a)->e[i].total_ms;
    for (int q = 0; q < rows && W(a)->cur.top + q < W(a)->n; q++) {
        int di = W(a)->cur.top + q;
        draw_whynot_row(a, w, r, cx, &W(a)->e[ord[di]], y + 1 + q, di == W(a)->cur.sel, best);
    }
    free(ord);
    rect t = {r.y + r.h - 3, r.x, 3, r.w};
    char txt[512];
    snprintf(txt, sizeof txt,
             "Each row: %s's t_c, t_s, t_x (incoming edges) and the best step (Eq. 1) with it forced to that "
             "config, the rest re-optimised (min-marginals of one search); \"others\": layers that then change. "
             "Enter pins, x unpins, i explains, Esc back.",
             l->name);
    ui_wrap(w, t, ST_DIM, txt);
}

/* The entry shown at display position wn_sel. */
static int selected_config(app *a)
{
    int *ord = display_order(a);
    int k = W(a)->e[ord[W(a)->cur.sel]].config;
    free(ord);
    return k;
}

static action k_move(app *a, int key)
{
    list_key(&W(a)->cur, key, W(a)->n, 1, 0);
    return ACT_REDRAW;
}

static action pin(app *a, int key)
{
    (void)key;
    if (W(a)->layer < 0 || !W(a)->e || !W(a)->n) return ACT_NONE;
    int k = selected_config(a);
    int li = W(a)->layer;
    app_close_overlay(a);
    if (plan_pinned(a->p)[li] == k) {
        app_set_status(a, 0, "%s is already pinned to that config", plan_net(a->p)->layers[li].name);
        return ACT_REDRAW;
    }
    return app_pin(a, li, k);
}

static action unpin(app *a, int key)
{
    (void)key;
    return app_pin(a, W(a)->layer >= 0 ? W(a)->layer : a->sel, -1);
}

/* Search: the configs in display order, by their text ("n4 c2"). */
typedef struct find_ctx {
    const app *a;
    int *ord;
} find_ctx;

static int config_matches(int di, void *user)
{
    const find_ctx *f = user;
    const app *a = f->a;
    char b[64];
    plan_format_config(a->p, W(a)->layer, plan_config(a->p, W(a)->layer, W(a)->e[f->ord[di]].config), b, sizeof b);
    return app_search_match(a, b);
}

static int find(app *a, int dir, int *nth)
{
    if (W(a)->layer < 0 || !W(a)->e || !W(a)->n) return 0;
    find_ctx f = {a, display_order(a)};
    int n = list_find(&W(a)->cur, W(a)->n, dir, config_matches, &f, nth);
    free(f.ord);
    return n;
}

static const keybind whynot_keys[] = {
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "choose a config", k_move},
    {{KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END}, "PgUp PgDn Home End", "page / first / last config", k_move},
    {{'\n', '\r', KEY_ENTER}, "Enter", "pin the layer to this config; the rest is re-optimised", pin},
    {{'x'}, "x", "unpin this layer", unpin},
    {{0}, NULL, NULL, NULL},
};

/* ---- state ------------------------------------------------------------- */

/* A fresh list for the layer asked about, for the current optimum. */
static void whynot_reset(app *a)
{
    whynot_state *ws = W(a);
    free(ws->e);
    ws->e = NULL;
    ws->n = ws->done = ws->counted = 0;
    ws->marginals = 0;
    if (ws->layer < 0 || !plan_has_model(a->p)) return;
    ws->n = plan_n_configs(a->p, ws->layer);
    ws->e = lw_calloc((size_t)ws->n, sizeof(whynot_entry));
    for (int k = 0; k < ws->n; k++) ws->e[k].config = k;
    ws->opt_ms = plan_best_eval(a->p)->total_ms;
    if (ws->cur.sel >= ws->n) ws->cur.sel = 0;
}

void app_whynot_open(app *a, int li)
{
    if (!plan_has_model(a->p) || !plan_search_result(a->p) || li < 0 || li >= plan_net(a->p)->n_layers) return;
    W(a)->layer = li;
    W(a)->cur.sel = W(a)->cur.top = 0;
    whynot_reset(a);
    app_open_screen(a, SCR_WHYNOT);
    plan_stage_layer f;
    if (plan_stage_count(a->p) > 1 && plan_stage_layer_figures(a->p, li, &f) == 0) {
        /* its configs and totals are the one-stage optimum's (plan_best), not the stage's the table shows */
        char c[64];
        plan_format_config(a->p, li, &f.c, c, sizeof c);
        app_set_status(a, 0, "why-not explains the one-stage optimum on %d GPUs; in the pipeline %s is %s in stage %d",
                       plan_gpus(a->p), plan_net(a->p)->layers[li].name, c, f.stage + 1);
    }
}

static void *whynot_new(app *a)
{
    whynot_state *ws = lw_calloc(1, sizeof *ws);
    ws->layer = -1;
    ws->tmp = lw_calloc((size_t)plan_net(a->p)->n_layers, sizeof(int));
    return ws;
}

static void whynot_free(app *a, void *st)
{
    (void)a;
    whynot_state *ws = st;
    free(ws->e);
    free(ws->tmp);
    free(ws);
}

static void whynot_invalidate(app *a, int settings)
{
    (void)settings;
    if (W(a)->layer >= 0) whynot_reset(a);
}

static int whynot_busy(const app *a)
{
    return W(a)->layer >= 0 && W(a)->e && W(a)->counted < W(a)->n;
}

static int whynot_idle(app *a, double budget_s)
{
    return W(a)->layer >= 0 ? whynot_step(a, budget_s) : 0;
}

const screen_ops screen_whynot_ops = {
    .tab = NULL,
    .title = "Why not? (w or Enter on a layer)",
    .hints = "Up/Dn:config Enter:pin x:unpin Esc:back",
    .draw = draw_whynot,
    .keys = whynot_keys,
    .overlay = " why not? ",
    .state_new = whynot_new,
    .state_free = whynot_free,
    .invalidate = whynot_invalidate,
    .idle = whynot_idle,
    .busy = whynot_busy,
    .find = find,
    .find_what = "config",
};
