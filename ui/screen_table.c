/*
 * screen_table: the strategy table — one row per layer with its config and
 * t_c, t_s, t_x and total, sortable by any time column, a baseline's config
 * and total beside it, and a footer with the totals, throughput, bytes
 * moved, peak memory and a compute/sync/transfer bar, and a memory line: a
 * bar of the fullest GPU against the memory limit, one level per GPU, and a
 * warning whenever the strategy shown does not fit (or why the paper's
 * optimum was passed over). The mem column is what the layer's task keeps
 * on GPU 0.
 *
 * A pipelined plan's rows show each layer in its stage (stage_row): its
 * config on the stage's group, GPUs within it, times per micro-batch.
 *
 * Columns that do not fit the width are dropped least important first, so
 * the table reads at 80 columns and uses more when there is more.
 */
#include "draw.h"
#include "find.h"
#include "list.h"
#include "screens.h"
#include "shown.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    C_MARK, C_NAME, C_TYPE, C_OUT, C_CFG, C_GPUS, C_TC, C_TS, C_TX, C_PARAMS, C_WBYTES, C_ABYTES, C_TOTAL, C_BCFG,
    C_BTC, C_BTS, C_BTX, C_BTOTAL, C_MEM, C__COUNT
};

/* The column sets v cycles through: the optimum's times; the layer's
 * sizes; the baseline's t_c, t_s and t_x beside the optimum's total. */
enum { SET_TIMES, SET_SIZES, SET_BASELINE, SET__COUNT };
static const char *const set_names[SET__COUNT] = {"times (t_c, t_s, t_x)",
                                                  "sizes (parameters, weight and activation bytes, memory per GPU)",
                                                  "the baseline's t_c, t_s and t_x"};

typedef struct col {
    const char *head;
    int w;
    int prio;     /* dropped first: highest */
    int right;    /* right-aligned */
    int sort;     /* sort_key this column sorts by, or -1 */
} col;

/* A row code below every group header's (-1 - unit): stage st's header. */
#define ROW_STAGE(n_units, st) (-1 - (n_units) - (st))
static int row_stage(const table_state *ts, int code) { return code < -ts->fd.n_units ? -1 - ts->fd.n_units - code : -1; }

/* The configs the table groups blocks by, [n_layers], caller frees: a
 * pipelined plan's layers' configs in their stage, found among the plan's
 * model's configs (the shown one's where the model lacks it), so that
 * blocks of a stage group where their stage configs agree. */
static int *group_configs(const app *a)
{
    int n = plan_net(a->p)->n_layers;
    int *ci = lw_malloc(sizeof(int) * (size_t)n);
    memcpy(ci, app_shown_configs(a), sizeof(int) * (size_t)n);
    for (int li = 0; li < n && plan_stage_count(a->p) > 1; li++) {
        plan_stage_layer f;
        int k = plan_stage_layer_figures(a->p, li, &f) == 0 ? plan_config_index(a->p, li, &f.c) : -1;
        if (k >= 0) ci[li] = k;
    }
    return ci;
}

/* The rows: a->order (the current sort), or in layer order where the
 * network has repeated blocks or the plan is pipelined: a header row per
 * stage (pipelined), and inside it a header row per run of blocks that
 * have the same configs with the layers of one of its blocks beneath
 * (unless f collapsed them). Built again at every draw and key: O(layers). */
static void build_rows(app *a)
{
    table_state *ts = table_of(a);
    int n = plan_net(a->p)->n_layers, stages = plan_stage_count(a->p);
    free(ts->rows);
    ts->rows = NULL;
    fold_free(&ts->fd);
    ts->n_rows = n;
    if (a->sort != SORT_LAYER || (!plan_blocks(a->p, NULL, 0) && stages < 2)) return;
    int *ci = group_configs(a);
    fold_build(&ts->fd, a->p, NULL, ci, 1);
    free(ci);
    int nu = ts->fd.n_units;
    ts->rows = lw_malloc(sizeof(int) * (size_t)(n + nu + stages));
    int k = 0, stage = -1;
    for (int u = 0; u < nu; u++) {
        const fold_unit *fu = &ts->fd.units[u];
        int st = plan_stage_of(a->p, fu->first);
        if (stages > 1 && st != stage) ts->rows[k++] = ROW_STAGE(nu, st);
        stage = st;
        if (!fu->blocks) {
            ts->rows[k++] = fu->first;
            continue;
        }
        ts->rows[k++] = -1 - u;
        for (int j = 0; j < fu->len && !ts->collapsed; j++) ts->rows[k++] = fu->first + j;
    }
    ts->n_rows = k;
}

/* The folded unit of a grouped table that layer li is in, or NULL. */
static const fold_unit *group_of(const app *a, int li)
{
    const table_state *ts = table_of(a);
    if (!ts->rows || li < 0) return NULL;
    const fold_unit *u = &ts->fd.units[ts->fd.unit_of[li]];
    return u->blocks ? u : NULL;
}

/* The layer row k shows (a header: its group's first layer). A group's
 * rows show its first block's layers, or the selected layer where it is
 * in another block of the group, in its part's row. */
static int row_layer(const app *a, int k)
{
    const table_state *ts = table_of(a);
    if (!ts->rows) return a->order[k];
    int code = ts->rows[k];
    if (row_stage(ts, code) >= 0) {
        plan_stage_summary ss;
        return plan_stage_info(a->p, row_stage(ts, code), &ss) == 0 ? ss.first : 0;
    }
    if (code < 0) return ts->fd.units[-1 - code].first;
    const fold_unit *u = group_of(a, code);
    if (u && group_of(a, a->sel) == u && (a->sel - u->first) % u->len == code - u->first) return a->sel;
    return code;
}

/* The selected layer's row: the cursor's where it shows the layer, else
 * the first that does, else its group's header (collapsed). */
static int row_of_sel(const app *a)
{
    const table_state *ts = table_of(a);
    int cur = ts->cur.sel;
    if (cur >= 0 && cur < ts->n_rows && row_layer(a, cur) == a->sel) return cur;
    for (int k = 0; k < ts->n_rows; k++)
        if ((!ts->rows || ts->rows[k] >= 0) && row_layer(a, k) == a->sel) return k;
    const fold_unit *u = group_of(a, a->sel);
    for (int k = 0; u && k < ts->n_rows; k++)
        if (ts->rows[k] == -1 - (int)(u - ts->fd.units)) return k;
    return 0;
}

static const col cols_def[C__COUNT] = {
    [C_MARK] = {"", 1, 0, 0, -1},
    [C_NAME] = {"layer", 8, 0, 0, SORT_LAYER},
    [C_TYPE] = {"type", 9, 6, 0, -1},
    [C_OUT] = {"output", 11, 5, 0, -1},
    [C_CFG] = {"config", 6, 1, 0, -1},
    [C_GPUS] = {"GPUs", 4, 4, 1, -1},
    [C_TC] = {"t_c", 7, 2, 1, SORT_TC},
    [C_TS] = {"t_s", 7, 3, 1, SORT_TS},
    [C_TX] = {"t_x", 7, 3, 1, SORT_TX},
    [C_PARAMS] = {"params", 7, 2, 1, -1},
    [C_WBYTES] = {"weights", 7, 3, 1, -1},
    [C_ABYTES] = {"acts", 7, 3, 1, -1},
    [C_TOTAL] = {"total", 8, 1, 1, SORT_TOTAL},
    [C_BCFG] = {"", 8, 2, 0, -1},
    [C_BTC] = {"", 7, 3, 1, -1},
    [C_BTS] = {"", 7, 3, 1, -1},
    [C_BTX] = {"", 7, 3, 1, -1},
    [C_BTOTAL] = {"", 8, 1, 1, -1},
    [C_MEM] = {"mem", 6, 7, 1, -1},
};

/* Whether column c is in the table's current set. */
static int in_set(const app *a, int c)
{
    int set = table_of(a)->colset, base = a->base.kind >= 0;
    switch (c) {
    case C_TC:
    case C_TS:
    case C_TX: return set == SET_TIMES;
    case C_PARAMS:
    case C_WBYTES:
    case C_ABYTES: return set == SET_SIZES;
    case C_BCFG:
    case C_BTOTAL: return base;
    case C_BTC:
    case C_BTS:
    case C_BTX: return base && set == SET_BASELINE;
    case C_MEM: return set != SET_BASELINE;
    default: return 1;
    }
}

/* A column's priority in the current set (dropped first: highest): the
 * memory column belongs with the sizes there. */
static int prio(const app *a, int c)
{
    return c == C_MEM && table_of(a)->colset == SET_SIZES ? 2 : cols_def[c].prio;
}

typedef struct colset {
    int on[C__COUNT];
    int w[C__COUNT];
    int x[C__COUNT];
} colset;

static double total_of(const layer_eval *le) { return le->compute_ms + le->sync_ms + le->transfer_ms; }

/* A pipelined plan's rows show each layer in its stage: its config on the
 * stage's group and its times on the stage's model per micro-batch (t_s
 * its step's sync over m: the row's share of f_i), from
 * plan_stage_layer_figures. Layer li's row terms into *le and its figures
 * into *f (f may be NULL); 0 where the plan is not pipelined (the shown
 * strategy's row, as ever). */
static int stage_row(const app *a, int li, layer_eval *le, plan_stage_layer *f)
{
    plan_pipeline_summary ps;
    plan_stage_layer mine;
    if (!f) f = &mine;
    if (!plan_pipeline_info(a->p, &ps) || plan_stage_layer_figures(a->p, li, f) != 0) {
        *le = app_shown_eval(a)->layers[li];
        return 0;
    }
    *le = (layer_eval){f->t_c_ms, f->t_s_ms / ps.microbatches, f->t_x_ms, 0, 0, 0};
    return 1;
}

/* The config shown in layer li's row, as text. */
static void row_config_text(const app *a, int li, char *b, size_t n)
{
    layer_eval le;
    plan_stage_layer f;
    if (stage_row(a, li, &le, &f)) plan_format_config(a->p, li, &f.c, b, n);
    else plan_format_config(a->p, li, plan_config(a->p, li, app_shown_configs(a)[li]), b, n);
}

static void fit_columns(const app *a, int W, colset *cs)
{
    const plan *p = a->p;
    int maxname = 5, maxcfg = 6;
    for (int i = 0; i < plan_net(p)->n_layers; i++) {
        int n = (int)strlen(plan_net(p)->layers[i].name);
        if (n > maxname) maxname = n;
        char b[64];
        row_config_text(a, i, b, sizeof b);
        if ((int)strlen(b) > maxcfg) maxcfg = (int)strlen(b);
        if (a->base.kind >= 0 && a->base.valid) {
            plan_format_config(p, i, plan_config(p, i, a->base.ci[i]), b, sizeof b);
            if ((int)strlen(b) + 0 > maxcfg) maxcfg = (int)strlen(b);
        }
    }
    for (int c = 0; c < C__COUNT; c++) {
        cs->on[c] = in_set(a, c);
        cs->w[c] = cols_def[c].w;
    }
    cs->w[C_NAME] = maxname > 28 ? 28 : maxname;
    cs->w[C_CFG] = maxcfg;
    if (plan_stage_count(p) > 1) { /* "12-15": the GPUs a layer of a stage uses */
        char g[32];
        snprintf(g, sizeof g, "%d-%d", plan_gpus(p) - 1, plan_gpus(p) - 1);
        if ((int)strlen(g) > cs->w[C_GPUS]) cs->w[C_GPUS] = (int)strlen(g);
    }
    if (table_of(a)->colset == SET_SIZES) cs->w[C_MEM] = 7; /* "mem/GPU" */
    /* wide enough for "model cfg" */
    int bh = a->base.kind >= 0 ? (int)strlen(baseline_name((baseline_kind)a->base.kind)) + 4 : 8;
    cs->w[C_BCFG] = maxcfg > bh ? maxcfg : bh;
    cs->w[C_BTOTAL] = bh - 1 > 8 ? bh - 1 : 8;
    for (;;) {
        int sum = 0, n = 0;
        for (int c = 0; c < C__COUNT; c++)
            if (cs->on[c]) {
                sum += cs->w[c];
                n++;
            }
        sum += n - 1;
        if (sum <= W) break;
        /* shrink long names a little before dropping a column */
        if (cs->w[C_NAME] > 16) {
            cs->w[C_NAME] -= sum - W < cs->w[C_NAME] - 16 ? sum - W : cs->w[C_NAME] - 16;
            continue;
        }
        int drop = -1;
        for (int c = 0; c < C__COUNT; c++)
            if (cs->on[c] && prio(a, c) > 0 && (drop < 0 || prio(a, c) > prio(a, drop))) drop = c;
        if (drop < 0 || prio(a, drop) <= 1) {
            if (cs->w[C_NAME] > 8) {
                cs->w[C_NAME]--;
                continue;
            }
            break;
        }
        cs->on[drop] = 0;
    }
    /* spare width: first back to long names, then air between the numbers */
    int used = 0;
    for (int c = 0; c < C__COUNT; c++)
        if (cs->on[c]) used += cs->w[c] + 1;
    int spare = W - used + 1;
    int want = (maxname > 28 ? 28 : maxname) - cs->w[C_NAME];
    if (want > 0 && spare > 0) {
        int give = want < spare ? want : spare;
        cs->w[C_NAME] += give;
        spare -= give;
    }
    for (int round = 0; round < 3 && spare > 0; round++)
        for (int c = C_GPUS; c < C__COUNT && spare > 0; c++)
            if (cs->on[c] && cols_def[c].right) {
                cs->w[c]++;
                spare--;
            }
    int x = 0;
    for (int c = 0; c < C__COUNT; c++) {
        cs->x[c] = x;
        if (cs->on[c]) x += cs->w[c] + 1;
    }
}

static void cell(WINDOW *w, int y, const colset *cs, int c, rect r, int st, const char *s)
{
    if (!cs->on[c]) return;
    char buf[256];
    /* names lose their middle: "mixed_6e/…7dbl_3" keeps module and branch */
    if (c == C_NAME) ui_fit_mid(s, cs->w[c], buf, sizeof buf);
    else ui_fit(s, cs->w[c], buf, sizeof buf);
    if (cols_def[c].right) ui_put_right(w, y, r.x + cs->x[c], cs->w[c], st, buf);
    else ui_put(w, y, r.x + cs->x[c], cs->w[c], st, buf);
}

static void num(char *b, size_t n, double v)
{
    if (!isfinite(v)) snprintf(b, n, "inf");
    else if (v >= 10000) snprintf(b, n, "%.0f", v);
    else snprintf(b, n, "%.2f", v);
}

/* A layer's t_c, t_s and t_x in the three columns from c_tc on (the
 * optimum's C_TC C_TS C_TX, or the baseline's C_BTC C_BTS C_BTX). */
static void term_cells(WINDOW *w, int y, const colset *cs, int c_tc, rect r, int st, const layer_eval *le)
{
    const double v[3] = {le->compute_ms, le->sync_ms, le->transfer_ms};
    char b[32];
    for (int k = 0; k < 3; k++) {
        num(b, sizeof b, v[k]);
        cell(w, y, cs, c_tc + k, r, st, b);
    }
}

/* "12.3G", "456M", "7.8K": at most 6 columns, two significant digits
 * at least (sizes in bytes, and parameter counts) */
static void short_bytes(char *b, size_t n, double v)
{
    if (v >= 1e10) snprintf(b, n, "%.0fG", v / 1e9);
    else if (v >= 1e9) snprintf(b, n, "%.1fG", v / 1e9);
    else if (v >= 1e7) snprintf(b, n, "%.0fM", v / 1e6);
    else if (v >= 1e6) snprintf(b, n, "%.1fM", v / 1e6);
    else if (v >= 1e4) snprintf(b, n, "%.0fK", v / 1e3);
    else if (v >= 1e3) snprintf(b, n, "%.1fK", v / 1e3);
    else snprintf(b, n, "%.0f", v);
}

/* A GPU's memory in binary units, as the memory line and the cluster
 * files state it (data/doc/tui.md): "15.9Gi", "411Mi", at most 6 columns. */
static void short_gib(char *b, size_t n, double v)
{
    const double ki = 1024.0, mi = ki * ki, gi = mi * ki;
    if (v >= 100 * gi) snprintf(b, n, "%.0fGi", v / gi);
    else if (v >= gi) snprintf(b, n, "%.1fGi", v / gi);
    else if (v >= 100 * mi) snprintf(b, n, "%.0fMi", v / mi);
    else if (v >= mi) snprintf(b, n, "%.1fMi", v / mi);
    else if (v >= ki) snprintf(b, n, "%.0fKi", v / ki);
    else snprintf(b, n, "%.0f", v);
}

/* The memory line: the fullest GPU's bar against the limit, a level per
 * GPU, and whether the strategy fits. */
static void draw_memory(const app *a, WINDOW *w, int y, rect r)
{
    const plan *p = a->p;
    const plan_memory *mm = plan_memory_of(p);
    const double gib = 1073741824.0;
    int ng = plan_gpus(p);
    double *per = lw_calloc((size_t)ng, sizeof(double));
    double peak = plan_peak_memory(p, app_shown_configs(a), per);
    double cap = isfinite(mm->limit_bytes) ? mm->limit_bytes : plan_cluster(p)->gpu.memory_gib * gib;
    int fits = peak <= cap;
    int x = r.x, end = r.x + r.w;
    x += ui_put(w, y, x, end - x, ST_DIM, "memory ");
    int bw = r.w / 5 > 24 ? 24 : r.w / 5;
    if (bw >= 4) {
        int fill = (int)lround(peak / cap * bw);
        for (int i = 0; i < bw; i++)
            ui_put(w, y, x + i, 1, i < fill ? (fits ? ST_GOOD : ST_BAD) : ST_DIM, i < fill ? G->hfill[0] : G->hfill[2]);
        x += bw;
    }
    x += ui_putf(w, y, x, end - x, fits ? ST_NORMAL : ST_BAD, " %.2f/%.2f GiB%s", peak / gib, cap / gib,
                 isfinite(mm->limit_bytes) ? "" : " (GPU; no limit)");
    if (!fits)
        x += ui_putf(w, y, x, end - x, ST_BAD, " %s DOES NOT FIT%s", G->dot,
                     isfinite(mm->limit_bytes) ? "" : " the GPU (no limit: the paper's search; M sets one)");
    if (!fits && mm->min_peak_bytes > 0)
        x += ui_putf(w, y, x, end - x, ST_BAD, ": nothing does (smallest peak %.2f GiB)", mm->min_peak_bytes / gib);
    else if (mm->constrained && mm->fits)
        x += ui_putf(w, y, x, end - x, ST_NORMAL, " %s paper's optimum %.2f ms needs %.2f GiB: fastest that fits %s",
                     G->dot, mm->unconstrained_ms, mm->unconstrained_peak / gib,
                     mm->proven_optimal ? "(proven)" : "(time limit)");
    /* one level per GPU, while they fit the line */
    if (end - x >= ng + 6) {
        x += ui_put(w, y, x, end - x, ST_DIM, " GPUs ");
        for (int g = 0; g < ng; g++) {
            int lv = (int)lround(per[g] / cap * 8);
            if (lv > 8) lv = 8;
            if (lv < 1) lv = per[g] > 0; /* a GPU that holds anything shows, however little */
            ui_put(w, y, x + g, 1, per[g] > cap ? ST_BAD : ST_GOOD, G->eighths[lv]);
        }
    }
    free(per);
}

/* What the marks and colours of the rows mean. */
static void draw_legend(const app *a, WINDOW *w, int y, rect r)
{
    int x = r.x, end = r.x + r.w;
    x += ui_put(w, y, x, end - x, ST_PINNED, "P");
    x += ui_put(w, y, x, end - x, ST_DIM, " pinned  ");
    x += ui_put(w, y, x, end - x, ST_CHANGED, "*");
    x += ui_put(w, y, x, end - x, ST_DIM, " changed by the last what-if  ");
    int present[SPLIT__COUNT] = {0};
    for (int i = 0; i < plan_net(a->p)->n_layers; i++)
        present[config_class(plan_config(a->p, i, app_shown_configs(a)[i]))] = 1;
    x += ui_class_legend(w, y, x, end - x, present);
    if (plan_stage_count(a->p) > 1) /* stage_row */
        ui_put(w, y, x, end - x, ST_DIM, "  times: ms per micro-batch in the layer's stage (t_s: its step's / m)");
    else if (x + 22 <= end) ui_put(w, y, x, end - x, ST_DIM, "  times: ms, Eq. 1");
}

/* The header row: each shown column's title, the baseline's name on its
 * columns, the sort mark on the sorted one. */
static void draw_header(app *a, WINDOW *w, rect r, const colset *csp)
{
    ui_fill(w, r.y, r.x, r.w, ST_HEADER);
    for (int c = 0; c < C__COUNT; c++) {
        if (!csp->on[c]) continue;
        char h[64];
        const char *head = cols_def[c].head;
        char bh[32];
        if (c == C_BCFG || c == C_BTOTAL) {
            snprintf(bh, sizeof bh, "%s %s", baseline_name((baseline_kind)a->base.kind), c == C_BCFG ? "cfg" : "ms");
            head = bh;
        } else if (c == C_BTC || c == C_BTS || c == C_BTX) {
            /* "d t_c": the baseline's initial and the term */
            snprintf(bh, sizeof bh, "%c %s", baseline_name((baseline_kind)a->base.kind)[0],
                     c == C_BTC ? "t_c" : c == C_BTS ? "t_s" : "t_x");
            head = bh;
        } else if (c == C_MEM && table_of(a)->colset == SET_SIZES) {
            head = "mem/GPU";
        }
        if (cols_def[c].sort >= 0 && (int)a->sort == cols_def[c].sort && a->sort != SORT_LAYER)
            snprintf(h, sizeof h, "%s%s", head, G->sort_mark);
        else
            snprintf(h, sizeof h, "%s", head);
        cell(w, r.y, csp, c, r, ST_HEADER, h);
    }
}

/* Layer li's row at line y: its mark (P pinned, * changed), name, type,
 * shape, config, GPUs, terms and total, sizes and the baseline's columns
 * where shown. */
static void draw_row(app *a, WINDOW *w, rect r, const colset *csp, int li, int y, int sel)
{
    plan *p = a->p;
    const layer *l = &plan_net(p)->layers[li];
    layer_eval row;
    plan_stage_layer f;
    const layer_eval *le = &row;
    int piped = stage_row(a, li, &row, &f);
    const config *cf = piped ? &f.c : plan_config(p, li, app_shown_configs(a)[li]);
    int base = sel ? ST_SELECTED : ST_NORMAL;
    if (sel) ui_fill(w, y, r.x, r.w, ST_SELECTED);
    char b[128];
    if (plan_pinned(p)[li] >= 0) cell(w, y, csp, C_MARK, r, sel ? base : ST_PINNED, "P");
    else if (a->prev.changed[li]) cell(w, y, csp, C_MARK, r, sel ? base : ST_CHANGED, "*");
    cell(w, y, csp, C_NAME, r, base, l->name);
    cell(w, y, csp, C_TYPE, r, sel ? base : ST_DIM, layer_type_name(l->type));
    shape_format(l->out, b, sizeof b);
    cell(w, y, csp, C_OUT, r, base, b);
    plan_format_config(p, li, cf, b, sizeof b);
    int cst = plan_pinned(p)[li] >= 0 ? ST_PINNED : a->prev.changed[li] ? ST_CHANGED : ST_CLASS0 + config_class(cf);
    cell(w, y, csp, C_CFG, r, sel ? base : cst, b);
    if (!piped) snprintf(b, sizeof b, "%d", config_tasks(cf));
    else if (f.gpus > 1) snprintf(b, sizeof b, "%d-%d", f.gpu0, f.gpu0 + f.gpus - 1);
    else snprintf(b, sizeof b, "%d", f.gpu0);
    cell(w, y, csp, C_GPUS, r, base, b);
    term_cells(w, y, csp, C_TC, r, base, le);
    num(b, sizeof b, total_of(le));
    cell(w, y, csp, C_TOTAL, r, sel ? base : ST_BOLD, b);
    if (csp->on[C_MEM]) { /* on GPU 0 of the plan's model: none of a stage's */
        if (piped) snprintf(b, sizeof b, "-");
        else short_gib(b, sizeof b, plan_task_memory(p, li, cf, 0));
        cell(w, y, csp, C_MEM, r, sel ? base : ST_DIM, b);
    }
    if (csp->on[C_PARAMS]) {
        short_bytes(b, sizeof b, (double)l->n_params);
        cell(w, y, csp, C_PARAMS, r, base, l->n_params ? b : "-");
        short_bytes(b, sizeof b, (double)l->n_params * BYTES_PER_ELEM);
        cell(w, y, csp, C_WBYTES, r, base, l->n_params ? b : "-");
        short_bytes(b, sizeof b, plan_activation_bytes(p, li));
        cell(w, y, csp, C_ABYTES, r, base, b);
    }
    if (a->base.kind >= 0 && a->base.valid) {
        const config *bc = plan_config(p, li, a->base.ci[li]);
        plan_format_config(p, li, bc, b, sizeof b);
        cell(w, y, csp, C_BCFG, r, sel ? base : config_equal(bc, cf) ? ST_DIM : ST_NORMAL, b);
        const layer_eval *be = &a->base.eval.layers[li];
        double bt = total_of(be);
        num(b, sizeof b, bt);
        cell(w, y, csp, C_BTOTAL, r, sel ? base : bt > total_of(le) + 1e-9 ? ST_BAD : ST_NORMAL, b);
        term_cells(w, y, csp, C_BTC, r, base, be);
    }
}

/* A group's header row: "block 0-47 x48: 11 layers, t 0.51 ms each". */
static void draw_group(app *a, WINDOW *w, rect r, const colset *csp, const fold_unit *u, int y, int sel)
{
    double t = 0;
    for (int li = u->first; li <= u->last; li++) {
        layer_eval le;
        stage_row(a, li, &le, NULL);
        t += total_of(&le);
    }
    char nm[64], b[192];
    fold_name(&table_of(a)->fd, u, nm, sizeof nm);
    if (u->blocks > 1)
        snprintf(b, sizeof b, "%s %s: %d layers, t %.2f ms each, %.2f in all", table_of(a)->collapsed ? "+" : "-", nm,
                 u->len, t / u->blocks, t);
    else /* a block alone: its configs differ from its neighbours' */
        snprintf(b, sizeof b, "%s %s: %d layers, t %.2f ms", table_of(a)->collapsed ? "+" : "-", nm, u->len, t);
    if (sel) ui_fill(w, y, r.x, r.w, ST_SELECTED);
    ui_put(w, y, r.x + csp->x[C_NAME], r.w - csp->x[C_NAME], sel ? ST_SELECTED : ST_BOLD, b);
}

/* A stage's header row, numbered from 1 as the CLI's pipeline table:
 * "stage 1: GPUs 0-3, t_i 84.55 ms (...), memory 14.02 GiB, tokens .. block7.add2". */
static void draw_stage(app *a, WINDOW *w, rect r, int st, int y, int sel)
{
    plan_stage_summary ss;
    if (plan_stage_info(a->p, st, &ss) != 0) return;
    const network *net = plan_net(a->p);
    char b[256];
    snprintf(b, sizeof b, "stage %d: GPUs %d-%d, t_i %.2f ms (f_i %.2f + p2p %.2f), memory %.2f GiB, %s .. %s", st + 1,
             ss.gpu0, ss.gpu0 + ss.gpus - 1, ss.t_ms, ss.f_ms, ss.p2p_ms, ss.memory_bytes / 1073741824.0,
             net->layers[ss.first].name, net->layers[ss.last - 1].name);
    ui_fill(w, y, r.x, r.w, sel ? ST_SELECTED : ST_HEADER);
    ui_put(w, y, r.x, r.w, sel ? ST_SELECTED : ST_HEADER, b);
}

/* The totals row's terms: the shown strategy's, or a pipelined plan's
 * rows summed (per micro-batch: sum over the stages of f_i, t_s / m);
 * 1 when pipelined. */
static int totals_of(const app *a, layer_eval *t)
{
    if (plan_stage_count(a->p) < 2) {
        const strategy_eval *ev = app_shown_eval(a);
        *t = (layer_eval){ev->compute_ms, ev->sync_ms, ev->transfer_ms, 0, 0, 0};
        return 0;
    }
    *t = (layer_eval){0};
    for (int li = 0; li < plan_net(a->p)->n_layers; li++) {
        layer_eval le;
        stage_row(a, li, &le, NULL);
        t->compute_ms += le.compute_ms, t->sync_ms += le.sync_ms, t->transfer_ms += le.transfer_ms;
    }
    return 1;
}

/* A pipelined plan's step line: T as `search --pp` prints it (Eq. 1 per
 * stage, sum t_i + (m - 1) max t_i), images/s, the bubble and the peak. */
static void draw_pipe_step(const app *a, WINDOW *w, int y, rect r)
{
    plan_pipeline_summary ps;
    plan_pipeline_info(a->p, &ps);
    char ms[96], ips[48], bub[48], peak[64], sep[16], b[320];
    snprintf(ms, sizeof ms, "pipelined step %.2f ms (Eq. 1 per stage: sum t_i + (m - 1) max t_i%s)", ps.step_ms,
             ps.vp > 1 ? ", over v" : "");
    snprintf(ips, sizeof ips, "%.1f img/s", ps.step_ms > 0 ? (double)plan_batch(a->p) * 1000.0 / ps.step_ms : 0);
    snprintf(bub, sizeof bub, "%d x %ld per micro-batch, bubble %.1f%%", ps.microbatches, ps.microbatch,
             100 * ps.bubble_fraction);
    snprintf(peak, sizeof peak, "peak %.2f GiB/GPU%s", ps.peak_memory_bytes / 1073741824.0,
             ps.fits ? "" : " DOES NOT FIT");
    const ui_part parts[] = {{ms, NULL, 0}, {ips, NULL, 1}, {bub, NULL, 2}, {peak, NULL, 0}};
    snprintf(sep, sizeof sep, " %s ", G->dot);
    ui_put(w, y, r.x, r.w, ps.fits ? ST_NORMAL : ST_BAD, ui_join_parts(parts, 4, sep, r.w, b, sizeof b));
}

/* The footer's first two lines, from line fy: the totals row (its model
 * named: Eq. 1, and the simulated step where there is room) and the step
 * time, images/s, bytes moved, peak memory and the baseline's ratio. */
static void draw_totals(app *a, WINDOW *w, rect r, const colset *csp, int fy)
{
    plan *p = a->p;
    int n = plan_net(p)->n_layers;
    const strategy_eval *ev = app_shown_eval(a);
    char b[256], b2[64];
    ui_hline(w, fy, r.x, r.w, ST_DIM);
    int pins = 0;
    for (int i = 0; i < n; i++) pins += plan_pinned(p)[i] >= 0;
    /* the totals row names its model, and the simulated step beside it where the columns before t_c leave room */
    double sim = app_sim_step_ms(a);
    layer_eval tot;
    int piped = totals_of(a, &tot);
    const char *what = piped ? "total per micro-batch" : app_shown_refined(a) ? "total, refined" : pins ? "total, pinned" : "total";
    int room = (csp->on[C_TC] ? csp->x[C_TC] : r.w) - csp->x[C_NAME] - 1;
    char simtxt[64];
    if (isfinite(sim)) snprintf(simtxt, sizeof simtxt, "simulated %.2f ms", sim);
    else snprintf(simtxt, sizeof simtxt, "simulated %s", app_shown_busy(a) ? G->ellipsis : "-");
    snprintf(b, sizeof b, "%s (Eq. 1) %s %s", what, G->dot, simtxt);
    if (ui_width(b) > room || piped) snprintf(b, sizeof b, "%s %s %s", what, G->dot, simtxt);
    if (piped) snprintf(b, sizeof b, "%s (sum of f_i)", what);
    if (ui_width(b) > room) snprintf(b, sizeof b, "%s", what);
    if (ui_width(b) > csp->w[C_NAME]) ui_put(w, fy, r.x + csp->x[C_NAME], room, ST_BOLD, b);
    else cell(w, fy, csp, C_NAME, r, ST_BOLD, b);
    num(b, sizeof b, tot.compute_ms);
    cell(w, fy, csp, C_TC, r, ST_BOLD, b);
    num(b, sizeof b, tot.sync_ms);
    cell(w, fy, csp, C_TS, r, ST_BOLD, b);
    num(b, sizeof b, tot.transfer_ms);
    cell(w, fy, csp, C_TX, r, ST_BOLD, b);
    num(b, sizeof b, total_of(&tot));
    cell(w, fy, csp, C_TOTAL, r, ST_GOOD, b);
    if (a->base.kind >= 0 && a->base.valid) {
        num(b, sizeof b, a->base.eval.total_ms);
        cell(w, fy, csp, C_BTOTAL, r, ST_BAD, b);
        num(b, sizeof b, a->base.eval.compute_ms);
        cell(w, fy, csp, C_BTC, r, ST_BOLD, b);
        num(b, sizeof b, a->base.eval.sync_ms);
        cell(w, fy, csp, C_BTS, r, ST_BOLD, b);
        num(b, sizeof b, a->base.eval.transfer_ms);
        cell(w, fy, csp, C_BTX, r, ST_BOLD, b);
    }
    if (csp->on[C_PARAMS]) {
        double params = (double)net_params(plan_net(p));
        short_bytes(b, sizeof b, params);
        cell(w, fy, csp, C_PARAMS, r, ST_BOLD, b);
        short_bytes(b, sizeof b, params * BYTES_PER_ELEM);
        cell(w, fy, csp, C_WBYTES, r, ST_BOLD, b);
        short_bytes(b, sizeof b, plan_activation_bytes(p, -1));
        cell(w, fy, csp, C_ABYTES, r, ST_BOLD, b);
    }
    if (csp->on[C_MEM] && table_of(a)->colset == SET_SIZES && !piped) {
        short_gib(b, sizeof b, ev->peak_memory_bytes);
        cell(w, fy, csp, C_MEM, r, ST_BOLD, b);
    }
    if (piped) draw_pipe_step(a, w, fy + 1, r);
    else {
        /* what a narrow terminal has no room for gives way whole */
        char ms[48], ips[48], moved[64], peak[64], base[96] = "", base_b[64] = "", sep[16];
        snprintf(ms, sizeof ms, "Eq. 1 %.2f ms/step", ev->total_ms);
        snprintf(ips, sizeof ips, "%.1f img/s", ev->images_per_s);
        snprintf(moved, sizeof moved, "%s moved", lw_format_bytes(ev->bytes_per_step, b2, sizeof b2));
        snprintf(peak, sizeof peak, "peak %.2f GiB/GPU", ev->peak_memory_bytes / 1073741824.0);
        if (a->base.kind >= 0 && a->base.valid) {
            double d = ev->total_ms > 0 ? (a->base.eval.total_ms / ev->total_ms) : 0;
            const char *bn = baseline_name((baseline_kind)a->base.kind);
            snprintf(base, sizeof base, "%s %.2f ms (%.2fx slower)", bn, a->base.eval.total_ms, d);
            snprintf(base_b, sizeof base_b, "%s %.2fx slower", bn, d);
        }
        const ui_part parts[] = {{ms, NULL, 0}, {ips, NULL, 0}, {moved, NULL, 3}, {peak, NULL, 2}, {base, base_b, 1}};
        snprintf(sep, sizeof sep, " %s ", G->dot);
        ui_put(w, fy + 1, r.x, r.w, ST_NORMAL, ui_join_parts(parts, 5, sep, r.w, b, sizeof b));
    }
}

static void draw_table(app *a, WINDOW *w, rect r)
{
    app_baseline_ensure(a);
    colset cs;
    fit_columns(a, r.w, &cs);
    build_rows(a);
    table_state *ts = table_of(a);
    int n = ts->n_rows;

    draw_header(a, w, r, &cs);

    int rows = r.h - 6; /* the header, then a footer of five lines */
    if (rows < 1) rows = 1;
    ts->y0 = r.y + 1;
    ts->cur.sel = row_of_sel(a);
    list_fit(&ts->cur, n, rows, 1);

    for (int k = 0; k < rows && ts->cur.top + k < n; k++) {
        int row = ts->cur.top + k, li = row_layer(a, row);
        int sel = ts->rows ? row == ts->cur.sel : li == a->sel;
        if (ts->rows && row_stage(ts, ts->rows[row]) >= 0) draw_stage(a, w, r, row_stage(ts, ts->rows[row]), r.y + 1 + k, sel);
        else if (ts->rows && ts->rows[row] < 0) draw_group(a, w, r, &cs, &ts->fd.units[-1 - ts->rows[row]], r.y + 1 + k, sel);
        else draw_row(a, w, r, &cs, li, r.y + 1 + k, sel);
    }

    int fy = r.y + r.h - 5;
    draw_totals(a, w, r, &cs, fy);
    layer_eval t3;
    int piped = totals_of(a, &t3);
    double tot = total_of(&t3) > 0 ? total_of(&t3) : 1;
    int lx = r.x;
    lx += ui_putf(w, fy + 2, lx, r.w, ST_COMPUTE, "%s compute %.0f%%", G->hfill[0], t3.compute_ms / tot * 100);
    lx += ui_putf(w, fy + 2, lx, r.w, ST_SYNC, " %s sync %.0f%%", G->hfill[1], t3.sync_ms / tot * 100);
    lx += ui_putf(w, fy + 2, lx, r.w, ST_TRANSFER, " %s transfer %.0f%% ", G->hfill[2], t3.transfer_ms / tot * 100);
    ui_time_bar(w, fy + 2, lx, r.x + r.w - lx, t3.compute_ms, t3.sync_ms, t3.transfer_ms);
    if (piped) /* the stages' memory: their headers and the step line's peak */
        ui_put(w, fy + 3, r.x, r.w, ST_DIM, "memory per stage: its header row; the fullest GPU's on the step line");
    else draw_memory(a, w, fy + 3, r);
    draw_legend(a, w, fy + 4, r);
}

/* ---- keys ------------------------------------------------------------- */

static action k_move(app *a, int key)
{
    build_rows(a);
    list_cursor *c = &table_of(a)->cur;
    c->sel = row_of_sel(a);
    list_key(c, key, table_of(a)->n_rows, 1, 0);
    a->sel = row_layer(a, c->sel);
    return ACT_REDRAW;
}

/* Hides or shows the grouped blocks' layer rows. */
static action k_collapse(app *a, int key)
{
    (void)key;
    table_state *ts = table_of(a);
    build_rows(a);
    if (!ts->rows) {
        app_set_status(a, 0, "%s", a->sort != SORT_LAYER ? "blocks are grouped in layer order only (o sorts)"
                                                         : "no repeated blocks to group");
        return ACT_REDRAW;
    }
    if (!plan_blocks(a->p, NULL, 0)) {
        app_set_status(a, 0, "no repeated blocks to group");
        return ACT_REDRAW;
    }
    ts->collapsed = !ts->collapsed;
    return ACT_REDRAW;
}

static action sort_cycle(app *a, int key)
{
    (void)key;
    a->sort = (sort_key)((a->sort + 1) % SORT__COUNT);
    app_sort_rows(a);
    static const char *const names[SORT__COUNT] = {"layer order", "total", "t_c", "t_s", "t_x"};
    app_set_status(a, 0, "sorted by %s%s", names[a->sort], a->sort == SORT_LAYER ? "" : ", largest first");
    return ACT_REDRAW;
}

static action baseline_cycle(app *a, int key)
{
    (void)key;
    a->base.kind = a->base.kind + 1 >= BASE__COUNT ? -1 : a->base.kind + 1;
    a->base.valid = 0;
    if (a->base.kind >= 0) {
        app_baseline_ensure(a);
        double t = app_shown_eval(a)->total_ms, bt = a->base.eval.total_ms;
        app_set_status(a, 0, "baseline %s: %.2f ms/step, %.1f img/s (layer-wise is %.2fx faster)",
                       baseline_name((baseline_kind)a->base.kind), bt, a->base.eval.images_per_s, t > 0 ? bt / t : 0);
    } else {
        app_set_status(a, 0, "no baseline");
    }
    return ACT_REDRAW;
}

static action colset_cycle(app *a, int key)
{
    (void)key;
    table_state *ts = table_of(a);
    ts->colset = (ts->colset + 1) % SET__COUNT;
    if (ts->colset == SET_BASELINE && a->base.kind < 0) ts->colset = SET_TIMES; /* nothing to split */
    app_set_status(a, 0, "columns: %s%s", set_names[ts->colset],
                   ts->colset == SET_TIMES && a->base.kind < 0 ? " (b adds a baseline, whose times v then splits)" : "");
    return ACT_REDRAW;
}

static action open_whynot(app *a, int key)
{
    (void)key;
    app_whynot_open(a, a->sel);
    return ACT_REDRAW;
}

static const keybind table_keys[] = {
    {{KEY_UP, 'k', KEY_DOWN, 'j'}, "Up Down j k", "select a layer", k_move},
    {{KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END}, "PgUp PgDn Home End", "page / first / last layer", k_move},
    {{'o'}, "o", "sort: layer order, total, t_c, t_s, t_x (largest first)", sort_cycle},
    {{'b'}, "b", "baseline beside the optimum: none, data, model, OWT", baseline_cycle},
    {{'v'}, "v", "columns: times, sizes, the baseline's t_c t_s t_x", colset_cycle},
    {{'\n', '\r', KEY_ENTER}, "Enter", "why not? the selected layer's configs (same as w)", open_whynot},
    {{'f'}, "f", "repeated blocks: hide / show the layer rows under each group's header", k_collapse},
    {{0}, NULL, NULL, NULL},
};

/* Search: the rows in display order, by layer name or type; a grouped
 * table searches every layer in layer order (those of folded blocks too). */
static int row_matches(int row, void *user)
{
    const app *a = user;
    return app_layer_matches(a, a->order[row]);
}

static int layer_matches(int li, void *user) { return app_layer_matches(user, li); }

static int find(app *a, int dir, int *nth)
{
    build_rows(a);
    table_state *ts = table_of(a);
    if (ts->rows) {
        list_cursor c = {a->sel, 0, 0};
        int n = list_find(&c, plan_net(a->p)->n_layers, dir, layer_matches, a, nth);
        if (n) a->sel = c.sel;
        return n;
    }
    list_cursor *c = &ts->cur;
    c->sel = row_of_sel(a);
    int n = list_find(c, plan_net(a->p)->n_layers, dir, row_matches, a, nth);
    a->sel = a->order[c->sel];
    return n;
}

/* A click on a row selects its layer; a double click asks why not. */
static action click(app *a, int y, int x, int double_click)
{
    (void)x;
    table_state *ts = table_of(a);
    if (y < ts->y0 || y >= ts->y0 + ts->cur.rows) return ACT_NONE;
    build_rows(a);
    int row = ts->cur.top + y - ts->y0;
    if (row >= ts->n_rows) return ACT_NONE;
    a->sel = row_layer(a, row);
    ts->cur.sel = row;
    if (double_click) app_whynot_open(a, a->sel);
    return ACT_REDRAW;
}

static void *table_new(app *a)
{
    (void)a;
    return lw_calloc(1, sizeof(table_state));
}

static void table_free(app *a, void *st)
{
    (void)a;
    table_state *ts = st;
    fold_free(&ts->fd);
    free(ts->rows);
    free(ts);
}

const screen_ops screen_table_ops = {
    .tab = "Table",
    .title = "Strategy table (1)",
    .hints = "Up/Dn:layer o:sort b:baseline v:columns Enter:why-not i:explain +/-:GPUs e:export",
    .draw = draw_table,
    .keys = table_keys,
    .state_new = table_new,
    .state_free = table_free,
    .click = click,
    .find = find,
    .find_what = "layer",
};
