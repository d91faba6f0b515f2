/*
 * screen_lecture: "by sample or by channel?" for every layer at once, a
 * view to teach from. Per layer, in the network's order: the bytes of
 * weights it would sync split by sample (data parallelism's config, t_s)
 * as a bar leftwards of its name, the bytes of activations it would move
 * split by channel (every layer by channel, t_x in) rightwards, both on
 * one log scale, each in the colour of the split the optimum chose. The
 * numbers are the engine's (explain_lecture); e draws the same chart for
 * slides (draw_lecture: SVG, PNG, PDF).
 */
#include "draw.h"
#include "draw_cairo.h"
#include "list.h"
#include "palette.h"
#include "screens.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LS(a) lecture_of(a)

/* The rows for the current optimum, computed when first needed; 0, or -1
 * with the status line saying why. */
static int lecture_ensure(app *a)
{
    lecture_state *ls = LS(a);
    if (ls->valid) return 0;
    int n = plan_net(a->p)->n_layers;
    free(ls->rows);
    ls->rows = lw_calloc((size_t)(n > 0 ? n : 1), sizeof *ls->rows);
    lw_error err = {0};
    if (!plan_search_result(a->p) || explain_lecture(a->p, ls->rows, &err) != 0) {
        app_set_status(a, 1, "lecture: %s", plan_search_result(a->p) ? err.msg : "there is no strategy to show");
        return -1;
    }
    ls->n = n;
    ls->valid = 1;
    return 0;
}

/* The decades [*lo, *hi] the bars share. */
static void lecture_range(const lecture_state *ls, double *lo, double *hi)
{
    double mx = 0, mn = INFINITY;
    for (int i = 0; i < ls->n; i++) {
        double v[2] = {ls->rows[i].sync_bytes, ls->rows[i].move_bytes};
        for (int k = 0; k < 2; k++)
            if (v[k] > 0 && isfinite(v[k])) {
                if (v[k] > mx) mx = v[k];
                if (v[k] < mn) mn = v[k];
            }
    }
    *hi = pow(10, ceil(log10(mx > 0 ? mx : 1e6)));
    *lo = pow(10, floor(log10(isfinite(mn) ? mn : *hi / 1e3)));
    if (*lo >= *hi) *lo = *hi / 10;
    if (*hi / *lo > 1e8) *lo = *hi / 1e8;
}

/* Cells of a bar of v over bw columns on [lo, hi]: at least 1 when v > 0. */
static int bar_cells(double v, double lo, double hi, int bw)
{
    if (!(v > 0) || !isfinite(v) || bw <= 0) return 0;
    double f = (log10(v) - log10(lo)) / (log10(hi) - log10(lo));
    int c = (int)lround(f * bw);
    return c < 1 ? 1 : c > bw ? bw : c;
}

static int lecture_class(const app *a, int li)
{
    return config_class(plan_config(a->p, li, LS(a)->rows[li].chosen));
}

/* One layer's row at y: left bar, sync bytes, name and chosen config, move bytes, right bar. */
static void lecture_row(app *a, WINDOW *w, int y, rect r, int li, int bw, int nw, double lo, double hi)
{
    const explain_lecture_row *row = &LS(a)->rows[li];
    const layer *l = &plan_net(a->p)->layers[li];
    int cls = lecture_class(a, li), sel = li == a->sel;
    char b[32], name[64], cfg[48];
    int x = r.x, n = bar_cells(row->sync_bytes, lo, hi, bw);
    for (int i = 0; i < n; i++) ui_put(w, y, x + bw - n + i, 1, ST_CLASS0 + cls, G->eighths[8]);
    x += bw + 1;
    lw_format_bytes(row->sync_bytes, b, sizeof b);
    ui_put_right(w, y, x, 9, ST_SYNC, row->sync_bytes > 0 ? b : "-");
    x += 10;
    plan_format_config(a->p, li, plan_config(a->p, li, row->chosen), cfg, sizeof cfg);
    int cw = ui_width(cfg) < 9 ? ui_width(cfg) : 9;
    ui_fit_mid(l->name, nw - cw - 1, name, sizeof name);
    if (sel) ui_fill(w, y, x, nw, ST_SELECTED);
    ui_put(w, y, x, nw - cw - 1, sel ? ST_SELECTED : ST_NORMAL, name);
    ui_put_right(w, y, x + nw - cw, cw, sel ? ST_SELECTED : ST_CLASS0 + cls, cfg);
    x += nw + 1;
    lw_format_bytes(row->move_bytes, b, sizeof b);
    ui_put_right(w, y, x, 9, ST_TRANSFER, row->move_bytes > 0 ? b : "-");
    x += 10;
    n = bar_cells(row->move_bytes, lo, hi, bw);
    for (int i = 0; i < n; i++) ui_put(w, y, x + i, 1, ST_CLASS0 + cls, G->eighths[8]);
}

/* The selected layer in words, at the foot. */
static void lecture_foot(app *a, WINDOW *w, int y, rect r)
{
    int li = a->sel >= 0 && a->sel < LS(a)->n ? a->sel : 0;
    const explain_lecture_row *row = &LS(a)->rows[li];
    char cn[48], cc[48], ch[48], sb[32], mb[32], line[320];
    plan_format_config(a->p, li, plan_config(a->p, li, row->sample_config), cn, sizeof cn);
    plan_format_config(a->p, li, plan_config(a->p, li, row->channel_config), cc, sizeof cc);
    plan_format_config(a->p, li, plan_config(a->p, li, row->chosen), ch, sizeof ch);
    lw_format_bytes(row->sync_bytes, sb, sizeof sb);
    lw_format_bytes(row->move_bytes, mb, sizeof mb);
    snprintf(line, sizeof line, "%s: as %s it syncs %s (t_s %.2f ms); as %s it moves %s (t_x %.2f ms); chosen %s",
             plan_net(a->p)->layers[li].name, cn, sb, row->sync_ms, cc, mb, row->move_ms, ch);
    ui_wrap(w, (rect){y, r.x, 2, r.w}, ST_NORMAL, line);
}

static void draw_lecture_screen(app *a, WINDOW *w, rect r)
{
    lecture_state *ls = LS(a);
    if (lecture_ensure(a) != 0) {
        ui_put(w, r.y, r.x, r.w, ST_DIM, "No strategy to show.");
        return;
    }
    ui_fill(w, r.y, r.x, r.w, ST_HEADER);
    ui_put(w, r.y, r.x, r.w, ST_HEADER, "lecture: by sample or by channel? (bytes a step, log scale)");
    int nw = 24, bw = (r.w - nw - 2 * 10 - 2) / 2;
    if (bw < 4) bw = 4;
    /* the column heads, the longer words where they fit */
    const char *hl = bw + 10 >= 30 ? "weights synced by sample, t_s" : "synced by sample";
    const char *hr = r.w - bw - 12 - nw >= 33 ? "activations moved by channel, t_x" : "moved by channel";
    ui_put_right(w, r.y + 1, r.x, bw + 10, ST_SYNC, hl);
    ui_put(w, r.y + 1, r.x + bw + 11, nw, ST_DIM, "layer            chosen");
    ui_put(w, r.y + 1, r.x + bw + 12 + nw, r.w - bw - 12 - nw, ST_TRANSFER, hr);
    int rows = r.h - 5;
    if (rows < 1) rows = 1;
    ls->cur.sel = a->sel >= 0 && a->sel < ls->n ? a->sel : 0;
    list_fit(&ls->cur, ls->n, rows, 1);
    double lo, hi;
    lecture_range(ls, &lo, &hi);
    for (int i = 0; i < rows && ls->cur.top + i < ls->n; i++)
        lecture_row(a, w, r.y + 2 + i, r, ls->cur.top + i, bw, nw, lo, hi);
    int present[SPLIT__COUNT] = {0};
    for (int i = 0; i < ls->n; i++) present[lecture_class(a, i)] = 1;
    int fy = r.y + r.h - 3;
    int lx = ui_class_legend(w, fy, r.x, r.w, present);
    char scale[96], b1[32], b2[32];
    lw_format_bytes(lo, b1, sizeof b1);
    lw_format_bytes(hi, b2, sizeof b2);
    snprintf(scale, sizeof scale, "  bars: %s to %s, log", b1, b2);
    ui_put(w, fy, r.x + lx, r.w - lx, ST_DIM, scale);
    lecture_foot(a, w, fy + 1, r);
}

static action k_move(app *a, int key)
{
    lecture_state *ls = LS(a);
    if (lecture_ensure(a) != 0) return ACT_REDRAW;
    ls->cur.sel = a->sel;
    list_key(&ls->cur, key, ls->n, 1, 0);
    a->sel = ls->cur.sel; /* i explains the row's layer */
    return ACT_REDRAW;
}

static const keybind lecture_keys[] = {
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "select a layer (i explains it)", k_move},
    {{KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END}, "PgUp PgDn Home End", "page / first / last layer", k_move},
    {{0}, NULL, NULL, NULL},
};

void app_lecture_open(app *a)
{
    if (!plan_search_result(a->p)) {
        app_set_status(a, 1, "lecture: there is no strategy to show");
        return;
    }
    app_open_screen(a, SCR_LECTURE);
}

static void lecture_free(app *a, void *st)
{
    (void)a;
    lecture_state *ls = st;
    free(ls->rows);
    free(ls);
}

static void lecture_invalidate(app *a, int settings)
{
    (void)settings;
    LS(a)->valid = 0;
}

static void lecture_export_name(const app *a, char *buf, size_t n)
{
    snprintf(buf, n, "layerwise-%s-lecture.svg", plan_net(a->p)->name);
}

/* e: the chart for slides; a plain .json is the strategy (app_export's). */
static int lecture_export_file(app *a, const char *path, const char **what, lw_error *err)
{
    if (lw_ends_with_ci(path, ".json")) return 1;
    if (!draw_format_known(path))
        return lw_fail(err, 2, "%s: the lecture chart is drawn as %s; .json: the strategy", path, draw_formats_help());
    if (lecture_ensure(a) != 0) return lw_fail(err, 1, "there is no strategy to draw");
    lecture_state *ls = LS(a);
    const plan *p = a->p;
    draw_lecture_row *dr = lw_calloc((size_t)ls->n, sizeof *dr);
    char (*cfg)[48] = lw_calloc((size_t)ls->n, sizeof *cfg);
    for (int i = 0; i < ls->n; i++) {
        plan_format_config(p, i, plan_config(p, i, ls->rows[i].chosen), cfg[i], sizeof cfg[i]);
        dr[i] = (draw_lecture_row){plan_net(p)->layers[i].name, cfg[i], lecture_class(a, i), ls->rows[i].sync_bytes,
                                   ls->rows[i].move_bytes};
    }
    char title[256];
    snprintf(title, sizeof title, "%s on %s, %d GPUs, batch %ld: by sample or by channel? (bytes a step, Eq. 1)",
             plan_net(p)->name, plan_cluster(p)->name, plan_gpus(p), plan_batch(p));
    *what = "lecture chart";
    int rc = draw_lecture(title, dr, ls->n, path, err);
    free(cfg);
    free(dr);
    return rc;
}

const screen_ops screen_lecture_ops = {
    .tab = NULL,
    .title = "Lecture (L)",
    .hints = "Up/Dn:layer i:explain e:export Esc:back",
    .draw = draw_lecture_screen,
    .keys = lecture_keys,
    .overlay = " lecture ",
    .state_size = sizeof(lecture_state),
    .state_free = lecture_free,
    .invalidate = lecture_invalidate,
    .export_name = lecture_export_name,
    .export_file = lecture_export_file,
    .export_formats = ".svg .png .pdf .json",
};
