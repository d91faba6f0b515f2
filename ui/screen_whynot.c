/*
 * screen_whynot: "why not this config?" for one layer. Every config of the
 * layer with the best whole-strategy total when the layer is forced to it
 * (every other layer re-optimised), sorted, the delta against the current
 * strategy, and how many other layers would change. Enter pins the
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

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int *display_order(const app *a);

int whynot_step(app *a, double budget_s)
{
    const plan *p = a->p;
    int li = a->wn_layer;
    if (li < 0 || !a->wn || !p->sr) return 0;
    double t0 = lw_now();
    /* a pinned layer is asked about as if it were free (the engine's
     * plan_whynot_totals and plan_cost_with_pin ignore its own pin) */
    int pin = p->pinned[li];
    if (a->wn_marginals == 0) {
        double *tot = lw_malloc(sizeof(double) * (size_t)p->cm->n_configs[li]);
        a->wn_marginals = plan_whynot_totals(p, li, tot) == 0 ? 1 : -1;
        if (a->wn_marginals > 0) {
            for (int i = 0; i < a->wn_n; i++) {
                whynot_entry *e = &a->wn[i];
                e->total_ms = tot[e->config];
                e->done = 1;
            }
            a->wn_done = a->wn_n;
        }
        free(tot);
    }
    /* the current optimum needs no search */
    for (int i = 0; i < a->wn_n; i++) {
        whynot_entry *e = &a->wn[i];
        if (e->config != p->best[li] || pin >= 0 || e->counted) continue;
        if (!e->done) a->wn_done++;
        e->total_ms = p->best_eval.total_ms;
        e->changed = 0;
        e->done = e->counted = 1;
        a->wn_counted++;
    }
    int *ord = display_order(a);
    for (int q = 0; q < a->wn_n && lw_now() - t0 < budget_s; q++) {
        whynot_entry *e = &a->wn[ord[q]];
        if (e->counted) continue;
        double c = plan_cost_with_pin(p, li, e->config, a->wn_tmp);
        if (!e->done) {
            e->total_ms = c;
            e->done = 1;
            a->wn_done++;
        }
        e->changed = 0;
        if (isfinite(c))
            for (int i = 0; i < p->net->n_layers; i++)
                if (i != li && !config_equal(&p->cm->configs[i][a->wn_tmp[i]], &p->cm->configs[i][p->best[i]]))
                    e->changed++;
        e->counted = 1;
        a->wn_counted++;
    }
    free(ord);
    return a->wn_counted < a->wn_n;
}

/* Display order: computed entries by total (the current config first among
 * equals), then those still to come. */
static int *display_order(const app *a)
{
    int n = a->wn_n;
    int *ord = lw_malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) ord[i] = i;
    int cur = a->p->best[a->wn_layer];
    for (int i = 1; i < n; i++) {
        int x = ord[i], j = i - 1;
        for (; j >= 0; j--) {
            const whynot_entry *p = &a->wn[ord[j]], *q = &a->wn[x];
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

static void draw_whynot(app *a, WINDOW *w, rect r)
{
    const plan *p = a->p;
    int li = a->wn_layer;
    if (li < 0 || !a->wn) {
        ui_put(w, r.y, r.x, r.w, ST_DIM, "Select a layer in the table and press w or Enter.");
        return;
    }
    const layer *l = &p->net->layers[li];
    const cost_model *m = p->cm;
    char cb[64], sh[64];
    config_format(&m->configs[li][p->best[li]], cb, sizeof cb);
    shape_format(l->out, sh, sizeof sh);
    ui_fill(w, r.y, r.x, r.w, ST_HEADER);
    int x = ui_putf(w, r.y, r.x, r.w, ST_HEADER, "why not? %s (%s, %s): %d configs %s now %s%s", l->name,
                    layer_type_name(l->type), sh, a->wn_n, G->dot, cb, p->pinned[li] >= 0 ? " (pinned)" : "");
    if (a->wn_done < a->wn_n) {
        x += ui_putf(w, r.y, r.x + x, r.w - x, ST_HEADER, " %s computing %d/%d ", G->dot, a->wn_done, a->wn_n);
        ui_progress(w, r.y, r.x + x, r.w - x - 1, a->wn_n ? (double)a->wn_done / a->wn_n : 1);
    } else if (a->wn_counted < a->wn_n) {
        x += ui_putf(w, r.y, r.x + x, r.w - x, ST_HEADER, " %s others %d/%d ", G->dot, a->wn_counted, a->wn_n);
        ui_progress(w, r.y, r.x + x, r.w - x - 1, a->wn_n ? (double)a->wn_counted / a->wn_n : 1);
    }
    /* columns */
    int y = r.y + 1;
    static const char *const heads[] = {"config", "GPUs", "t_c+t_s", "best total", "delta ms", "delta", "others"};
    static const int widths[] = {12, 5, 9, 11, 10, 8, 7};
    int cx[7], xx = r.x + 2;
    for (int c = 0; c < 7; c++) {
        cx[c] = xx;
        xx += widths[c] + 1;
    }
    ui_fill(w, y, r.x, r.w, ST_BOLD);
    for (int c = 0; c < 7; c++) {
        if (cx[c] + widths[c] > r.x + r.w) break;
        if (c == 0) ui_put(w, y, cx[c], widths[c], ST_BOLD, heads[c]);
        else ui_put_right(w, y, cx[c], widths[c], ST_BOLD, heads[c]);
    }
    int rows = r.h - 5;
    if (rows < 1) rows = 1;
    if (a->wn_sel >= a->wn_n) a->wn_sel = a->wn_n - 1;
    if (a->wn_sel < 0) a->wn_sel = 0;
    if (a->wn_sel < a->wn_top) a->wn_top = a->wn_sel;
    if (a->wn_sel >= a->wn_top + rows) a->wn_top = a->wn_sel - rows + 1;
    int *ord = display_order(a);
    double best = INFINITY;
    for (int i = 0; i < a->wn_n; i++)
        if (a->wn[i].done && a->wn[i].total_ms < best) best = a->wn[i].total_ms;
    for (int q = 0; q < rows && a->wn_top + q < a->wn_n; q++) {
        int di = a->wn_top + q;
        const whynot_entry *e = &a->wn[ord[di]];
        int yy = y + 1 + q;
        int sel = di == a->wn_sel;
        int cur = e->config == p->best[li];
        int base = sel ? ST_SELECTED : ST_NORMAL;
        if (sel) ui_fill(w, yy, r.x, r.w, ST_SELECTED);
        const config *c = &m->configs[li][e->config];
        char b[64];
        const char *mark = p->pinned[li] == e->config ? "P" : cur ? G->star : " ";
        ui_put(w, yy, r.x, 1, sel ? base : p->pinned[li] == e->config ? ST_PINNED : ST_GOOD, mark);
        config_format(c, b, sizeof b);
        ui_put(w, yy, cx[0], widths[0], sel ? base : ST_CLASS0 + config_class(c), b);
        snprintf(b, sizeof b, "%d", config_tasks(c));
        ui_put_right(w, yy, cx[1], widths[1], base, b);
        snprintf(b, sizeof b, "%.2f", m->t_c[li][e->config] + m->t_s[li][e->config]);
        ui_put_right(w, yy, cx[2], widths[2], base, b);
        if (!e->done) {
            ui_put_right(w, yy, cx[3], widths[3], sel ? base : ST_DIM, G->ellipsis);
            continue;
        }
        double d = e->total_ms - a->wn_opt_ms;
        int dst = sel ? base : fabs(d) < 1e-9 ? ST_GOOD : d > 0 ? ST_BAD : ST_GOOD;
        if (!isfinite(e->total_ms)) {
            ui_put_right(w, yy, cx[3], widths[3], dst, "inf");
            continue;
        }
        snprintf(b, sizeof b, "%.2f", e->total_ms);
        ui_put_right(w, yy, cx[3], widths[3], sel ? base : e->total_ms <= best + 1e-9 ? ST_GOOD : ST_NORMAL, b);
        snprintf(b, sizeof b, "%+.2f", fabs(d) < 5e-3 ? 0.0 : d);
        ui_put_right(w, yy, cx[4], widths[4], dst, b);
        snprintf(b, sizeof b, "%+.1f%%", a->wn_opt_ms > 0 && fabs(d) >= 5e-3 ? d / a->wn_opt_ms * 100 : 0.0);
        ui_put_right(w, yy, cx[5], widths[5], dst, b);
        snprintf(b, sizeof b, "%d", e->changed);
        if (cx[6] + widths[6] <= r.x + r.w)
            ui_put_right(w, yy, cx[6], widths[6], e->counted || sel ? base : ST_DIM, e->counted ? b : G->ellipsis);
        if (cur && cx[6] + widths[6] + 10 <= r.x + r.w)
            ui_put(w, yy, cx[6] + widths[6] + 1, r.x + r.w - cx[6] - widths[6] - 1, sel ? base : ST_GOOD,
                   p->pinned[li] >= 0 ? "current" : "optimum");
    }
    free(ord);
    rect t = {r.y + r.h - 3, r.x, 3, r.w};
    char txt[512];
    snprintf(txt, sizeof txt,
             "Each row: the best step time with %s forced to that config, the rest re-optimised (all rows "
             "from one search, by min-marginals); \"others\": layers that then change. Enter pins, x unpins, "
             "Esc goes back.",
             l->name);
    ui_wrap(w, t, ST_DIM, txt);
}

/* The entry shown at display position wn_sel. */
static int selected_config(app *a)
{
    int *ord = display_order(a);
    int k = a->wn[ord[a->wn_sel]].config;
    free(ord);
    return k;
}

static action k_move(app *a, int key)
{
    int page = a->frame_h > 12 ? a->frame_h - 12 : 5;
    switch (key) {
    case KEY_UP:
    case 'k': a->wn_sel--; break;
    case KEY_DOWN:
    case 'j': a->wn_sel++; break;
    case KEY_PPAGE: a->wn_sel -= page; break;
    case KEY_NPAGE: a->wn_sel += page; break;
    case KEY_HOME: a->wn_sel = 0; break;
    case KEY_END: a->wn_sel = a->wn_n - 1; break;
    default: break;
    }
    if (a->wn_sel >= a->wn_n) a->wn_sel = a->wn_n - 1;
    if (a->wn_sel < 0) a->wn_sel = 0;
    return ACT_REDRAW;
}

static action pin(app *a, int key)
{
    (void)key;
    if (a->wn_layer < 0 || !a->wn || !a->wn_n) return ACT_NONE;
    int k = selected_config(a);
    int li = a->wn_layer;
    a->screen = a->prev_screen;
    if (a->p->pinned[li] == k) {
        app_set_status(a, 0, "%s is already pinned to that config", a->p->net->layers[li].name);
        return ACT_REDRAW;
    }
    return app_pin(a, li, k);
}

static const keybind whynot_keys[] = {
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "choose a config", k_move},
    {{KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END}, "PgUp PgDn Home End", "page / first / last config", k_move},
    {{'\n', '\r', KEY_ENTER}, "Enter", "pin the layer to this config; the rest is re-optimised", pin},
    {{0}, NULL, NULL, NULL},
};

const screen_ops screen_whynot_ops = {
    NULL,
    "Up/Dn:config Enter:pin x:unpin Esc:back",
    draw_whynot,
    whynot_keys,
    NULL,
};
