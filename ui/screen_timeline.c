/*
 * screen_timeline: one training step of the current optimum as the step
 * simulator (src/sim.h) runs it — a Gantt chart with a row per GPU and per
 * link or NIC that carried traffic, time across, each cell the kind of work
 * that filled most of it (F forward, B input gradient, W weight gradient,
 * X transfer, S sync, . idle), in colour where there is colour. A cursor
 * names the task under it; } and { zoom around it, the arrows move it (and pan),
 * ] and [ go to the next and previous task on the row, / finds a layer's tasks.
 * The header sets the simulated step beside Eq. 1's. It shows the strategy
 * the other screens show (the optimum, or its refinement after F), simulated
 * once per change by shown.c (app_sim).
 *
 * e draws the step as SVG, PNG or PDF (src/draw_cairo.h), or writes it as
 * Chrome trace-event JSON (.trace.json), like `layerwise simulate --trace`.
 *
 * A pipelined plan (plan_stage_count > 1) shows its pipelined step instead,
 * as pipeline_sim.c simulates it micro-batch by micro-batch: a row per
 * stage's group of GPUs ("s2 gpu 4-7"), each bar its kind and micro-batch
 * ("F3fff" forward of micro-batch 3, "B3bbb", "Sss" the sync), idle cells the
 * bubble; e draws or traces that step.
 * The screen's state lives here, behind a->st[SCR_TIMELINE], created on
 * first use.
 */
#include "draw.h"
#include "find.h"
#include "list.h"
#include "shown.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost_sharding.h"
#include "draw_cairo.h"
#include "pipeline.h"
#include "sim.h"

#define LABEL_W 12

struct timeline_state {
    const sim_result *sim; /* the shown strategy's (app_sim), indexed below; NULL: not indexed yet */
    int n_res;         /* resources indexed (on, n_on) */
    int n_rows;
    int *rows;         /* [n_rows] resources shown: every GPU, then the links and NICs used */
    int **on;          /* [n_res] tasks on each resource, by start */
    int *n_on;
    double t0, ms_per_col; /* the view: time at the first column, zoom */
    int fit;           /* 1: zoom to the whole step at the next draw */
    int row, top;      /* cursor row (into rows) and first row shown */
    int col;           /* cursor column */
    int cols;          /* columns of the chart at the last draw */
    int pick;          /* the task n / p went to, named while under the cursor; -1 none */
    pipe_sim *pipe;    /* a pipelined plan: its step (plan_pipe_simulate), rows the stages; sim NULL */
};

static void tl_clear(struct timeline_state *t)
{
    /* t->sim may be gone already (shown.c drops it first): n_res is ours */
    for (int r = 0; t->on && r < t->n_res; r++) free(t->on[r]);
    t->n_res = 0;
    free(t->on);
    free(t->n_on);
    free(t->rows);
    pipe_sim_free(t->pipe);
    t->pipe = NULL;
    t->sim = NULL;
    t->pick = -1;
    t->on = NULL;
    t->n_on = NULL;
    t->rows = NULL;
    t->n_rows = 0;
}

/* The screen's state lives in a->st[SCR_TIMELINE], made when first used. */
#define TL(a) ((struct timeline_state *)(a)->st[SCR_TIMELINE])

static void timeline_state_free(app *a, void *st)
{
    (void)a;
    if (!st) return;
    tl_clear(st);
    free(st);
}

/* A what-if, or F: the index of the old simulation is dropped (made again when drawn). */
static void timeline_invalidate(app *a, int settings)
{
    (void)settings;
    if (TL(a)) tl_clear(TL(a));
}

static struct timeline_state *tl_get(app *a)
{
    if (!TL(a)) {
        struct timeline_state *t = lw_calloc(1, sizeof *t);
        t->fit = 1;
        t->pick = -1;
        a->st[SCR_TIMELINE] = t;
    }
    return TL(a);
}

static const sim_result *sort_sim; /* for cmp_start (qsort has no user pointer) */
static int cmp_start(const void *x, const void *y)
{
    const sim_task *a = &sort_sim->tasks[*(const int *)x], *b = &sort_sim->tasks[*(const int *)y];
    if (a->start_ms != b->start_ms) return a->start_ms < b->start_ms ? -1 : 1;
    return *(const int *)x - *(const int *)y;
}

/* Indexes the tasks of the shown strategy's simulation (app_sim: once per
 * what-if) by resource. */
static int tl_ensure(app *a)
{
    struct timeline_state *t = tl_get(a);
    if (t->sim || t->pipe) return 0;
    if (!plan_search_result(a->p) || !plan_best(a->p)) return -1;
    if (plan_stage_count(a->p) > 1) {
        t->pipe = plan_pipe_simulate(a->p);
        if (!t->pipe) return -1;
        t->n_rows = t->pipe->p;
        if (t->row >= t->n_rows) t->row = t->n_rows - 1;
        if (t->row < 0) t->row = 0;
        t->fit = 1;
        return 0;
    }
    t->sim = app_sim(a);
    if (!t->sim) return -1;
    const sim_result *s = t->sim;
    t->n_res = s->n_res;
    t->n_on = lw_calloc((size_t)s->n_res, sizeof(int));
    t->on = lw_calloc((size_t)s->n_res, sizeof(int *));
    t->rows = lw_malloc(sizeof(int) * (size_t)s->n_res);
    for (int k = 0; k < s->n_tasks; k++)
        for (int i = 0; i < s->tasks[k].n_res; i++) t->n_on[s->res_of[s->tasks[k].res0 + i]]++;
    for (int r = 0; r < s->n_res; r++) {
        t->on[r] = lw_malloc(sizeof(int) * (size_t)(t->n_on[r] + 1));
        t->n_on[r] = 0;
    }
    for (int k = 0; k < s->n_tasks; k++)
        for (int i = 0; i < s->tasks[k].n_res; i++) {
            int r = s->res_of[s->tasks[k].res0 + i];
            t->on[r][t->n_on[r]++] = k;
        }
    sort_sim = s;
    for (int r = 0; r < s->n_res; r++) qsort(t->on[r], (size_t)t->n_on[r], sizeof(int), cmp_start);
    t->n_rows = 0;
    for (int r = 0; r < s->n_res; r++)
        if (s->res[r].kind == SIM_RES_GPU || t->n_on[r] > 0) t->rows[t->n_rows++] = r;
    if (t->row >= t->n_rows) t->row = t->n_rows - 1;
    if (t->row < 0) t->row = 0;
    t->fit = 1;
    return 0;
}

static const char kind_letter[SIM__KINDS] = {'F', 'B', 'W', 'X', 'S', 'G', 'R', 'P', 'O'};

/* One palette with the export (palette.h's sim_kind_colours; issue 36,
 * bug 9: transfers were red here and green there). */
static int kind_style(sim_kind k)
{
    return k >= 0 && k < SIM__KINDS ? ST_KIND0 + (int)k : ST_NORMAL;
}

/* The task on resource r covering time x, or -1. */
static int task_at(const struct timeline_state *t, int r, double x0, double x1)
{
    const sim_result *s = t->sim;
    int best = -1;
    double best_ov = 0;
    for (int i = 0; i < t->n_on[r]; i++) {
        const sim_task *k = &s->tasks[t->on[r][i]];
        if (k->start_ms >= x1) break;
        double ov = fmin(k->end_ms, x1) - fmax(k->start_ms, x0);
        if (ov > best_ov) best_ov = ov, best = t->on[r][i];
    }
    return best;
}

static void res_label(const sim_resource *r, char *buf, size_t n)
{
    switch (r->kind) {
    case SIM_RES_GPU: snprintf(buf, n, "gpu %d", r->a); break;
    case SIM_RES_LINK: snprintf(buf, n, "%d->%d", r->a, r->b); break;
    case SIM_RES_NIC_OUT: snprintf(buf, n, "nic%d out%d", r->a, r->b); break;
    case SIM_RES_NIC_IN: snprintf(buf, n, "nic%d in%d", r->a, r->b); break;
    }
}

/* One row of the chart: per column, the kind that fills most of it. */
static void draw_row(app *a, WINDOW *w, int y, int x, int cols, int r, int cursor_row)
{
    struct timeline_state *t = TL(a);
    const sim_result *s = t->sim;
    double fill[SIM__KINDS];
    int i = 0;
    for (int c = 0; c < cols; c++) {
        double x0 = t->t0 + c * t->ms_per_col, x1 = x0 + t->ms_per_col;
        memset(fill, 0, sizeof fill);
        while (i < t->n_on[r] && s->tasks[t->on[r][i]].end_ms <= x0) i++;
        for (int j = i; j < t->n_on[r]; j++) {
            const sim_task *k = &s->tasks[t->on[r][j]];
            if (k->start_ms >= x1) break;
            double ov = fmin(k->end_ms, x1) - fmax(k->start_ms, x0);
            if (ov > 0) fill[k->kind] += ov;
        }
        int best = -1;
        for (int k = 0; k < SIM__KINDS; k++)
            if (fill[k] > 0 && (best < 0 || fill[k] > fill[best])) best = k;
        char ch[2] = {best < 0 ? (x0 < s->step_ms ? '.' : ' ') : kind_letter[best], 0};
        int st = best < 0 ? ST_DIM : kind_style((sim_kind)best);
        if (cursor_row && c == t->col) st = ST_SELECTED;
        ui_put(w, y, x + c, 1, st, ch);
    }
}

/* The chart's columns for a screen width w, and the view (zoomed to the
 * whole step when asked). */
static int tl_view(struct timeline_state *t, int w)
{
    int cols = w - LABEL_W - 1;
    if (cols < 10) cols = 10;
    t->cols = cols;
    if (t->fit || t->ms_per_col <= 0) {
        t->t0 = 0;
        double step = t->pipe ? t->pipe->step_ms : t->sim->step_ms;
        t->ms_per_col = (step > 0 ? step : 1) / cols;
        t->fit = 0;
    }
    return cols;
}

/* ---- a pipelined plan's step ---- */

/* The task of stage i's row that fills most of [x0, x1), or -1. */
static int pipe_task_at(const pipe_sim *r, int i, double x0, double x1)
{
    int best = -1;
    double best_ov = 0;
    for (int k = 0; k < r->n_tasks; k++) {
        const pipe_sim_task *q = &r->tasks[k];
        if (q->stage != i) continue;
        double ov = fmin(q->end_ms, x1) - fmax(q->start_ms, x0);
        if (ov > best_ov) best_ov = ov, best = k;
    }
    return best;
}

/* A bar's text: its kind and micro-batch ("F3", "B3"), "S" the sync. */
static void pipe_bar_label(const pipe_sim_task *q, char *buf, size_t n)
{
    if (q->micro < 0) snprintf(buf, n, "S");
    else snprintf(buf, n, "%c%d", q->kind == PIPE_SIM_FORWARD ? 'F' : 'B', q->micro);
}

static int pipe_style(pipe_sim_kind k)
{
    return kind_style(k == PIPE_SIM_FORWARD ? SIM_FORWARD : k == PIPE_SIM_BACKWARD ? SIM_BACKWARD_DATA : SIM_SYNC);
}

static void pipe_row_label(const app *a, int i, char *buf, size_t n)
{
    plan_stage_summary s;
    if (plan_stage_info(a->p, i, &s) != 0) s = (plan_stage_summary){0};
    if (s.gpus > 1) snprintf(buf, n, "s%d gpu %d-%d", i + 1, s.gpu0, s.gpu0 + s.gpus - 1);
    else snprintf(buf, n, "s%d gpu %d", i + 1, s.gpu0);
}

/* One stage's row: each bar starts with its label, then its kind's letter
 * in lower case, so that bars of one kind side by side stay apart. */
static void pipe_draw_row(const struct timeline_state *t, WINDOW *w, int y, int x, int cols, int i, int cursor_row)
{
    const pipe_sim *r = t->pipe;
    int prev = -1, at = 0;
    char lab[16];
    for (int c = 0; c < cols; c++) {
        double x0 = t->t0 + c * t->ms_per_col;
        int k = pipe_task_at(r, i, x0, x0 + t->ms_per_col);
        char ch[2] = {x0 < r->step_ms ? '.' : ' ', 0};
        int st = ST_DIM;
        if (k >= 0) {
            const pipe_sim_task *q = &r->tasks[k];
            if (k != prev) at = 0, pipe_bar_label(q, lab, sizeof lab);
            ch[0] = at < (int)strlen(lab) ? lab[at] : (char)(lab[0] - 'A' + 'a'); /* "F3fff" */
            at++;
            st = pipe_style(q->kind);
        }
        prev = k;
        if (cursor_row && c == t->col) st = ST_SELECTED;
        ui_put(w, y, x + c, 1, st, ch);
    }
}

/* The status under the chart: the task under the cursor, or idle. */
static void pipe_cursor_info(app *a, WINDOW *w, int y, rect r)
{
    const struct timeline_state *t = TL(a);
    double x0 = t->t0 + t->col * t->ms_per_col;
    int k = pipe_task_at(t->pipe, t->row, x0, x0 + t->ms_per_col);
    char lab[32];
    pipe_row_label(a, t->row, lab, sizeof lab);
    if (k < 0) {
        ui_putf(w, y, r.x, r.w, ST_DIM, " stage %s: idle at %.3f ms (the bubble)", lab, x0);
        return;
    }
    const pipe_sim_task *q = &t->pipe->tasks[k];
    static const char *const kinds[] = {"forward", "backward", "sync"};
    char mb[48] = "";
    if (q->micro >= 0) snprintf(mb, sizeof mb, " of micro-batch %d", q->micro);
    char chunk[24] = "";
    plan_pipeline_summary ps;
    if (plan_pipeline_info(a->p, &ps) && ps.vp > 1 && q->micro >= 0) snprintf(chunk, sizeof chunk, ", chunk %d", q->chunk + 1);
    ui_putf(w, y, r.x, r.w, ST_STATUS, " stage %s: %s%s%s %s %.3f-%.3f ms (%.3f)", lab, kinds[q->kind], mb, chunk, G->dot,
            q->start_ms, q->end_ms, q->end_ms - q->start_ms);
}

static void draw_pipe_timeline(app *a, WINDOW *w, rect r)
{
    struct timeline_state *t = TL(a);
    const pipe_sim *s = t->pipe;
    int cols = tl_view(t, r.w);
    if (t->col >= cols) t->col = cols - 1;
    plan_pipeline_summary ps;
    plan_pipeline_info(a->p, &ps);
    char what[96];
    app_pipeline_text(a, what, sizeof what);
    int y = r.y;
    ui_putf(w, y++, r.x, r.w, ST_BOLD, " pipelined step: simulated %.2f ms %s model %.2f ms %s bubble %.1f%% %s %s",
            s->step_ms, G->dot, ps.step_ms, G->dot, 100 * s->bubble_fraction, G->dot, what);
    ui_put(w, y, r.x, LABEL_W, ST_HEADER, " ms");
    for (int c = 0; c + 8 < cols; c += 16)
        ui_putf(w, y, r.x + LABEL_W + 1 + c, 10, ST_HEADER, "|%.4g", t->t0 + c * t->ms_per_col);
    y++;
    int info_y = r.y + r.h - 2, legend_y = r.y + r.h - 1, rows_h = info_y - y > 0 ? info_y - y : 1;
    if (t->row < t->top) t->top = t->row;
    if (t->row >= t->top + rows_h) t->top = t->row - rows_h + 1;
    for (int i = 0; i < rows_h && t->top + i < t->n_rows; i++) {
        char lab[32];
        pipe_row_label(a, t->top + i, lab, sizeof lab);
        int cur = t->top + i == t->row;
        ui_putf(w, y + i, r.x, LABEL_W, cur ? ST_SELECTED : ST_NORMAL, " %-*s", LABEL_W - 1, lab);
        pipe_draw_row(t, w, y + i, r.x + LABEL_W + 1, cols, t->top + i, cur);
    }
    pipe_cursor_info(a, w, info_y, r);
    int x = r.x + 1;
    static const char *const names[] = {"forward", "backward", "sync"};
    static const char letters[] = "FBS";
    for (int q = 0; q < 3; q++) {
        char ch[2] = {letters[q], 0};
        x += ui_put(w, legend_y, x, r.x + r.w - x, pipe_style((pipe_sim_kind)q), ch);
        x += ui_putf(w, legend_y, x, r.x + r.w - x, ST_DIM, " %s  ", names[q]);
    }
    char scale[64];
    snprintf(scale, sizeof scale, "F3: micro-batch 3  . idle (bubble)  %.3g ms/col", t->ms_per_col);
    ui_put(w, legend_y, x, r.x + r.w - x, ST_DIM, ui_width(scale) <= r.x + r.w - x ? scale : ". bubble");
}

static void draw_timeline(app *a, WINDOW *w, rect r)
{
    if (tl_ensure(a) != 0) {
        ui_put(w, r.y + 1, r.x + 1, r.w - 2, ST_NORMAL, "no strategy to simulate");
        return;
    }
    if (TL(a)->pipe) {
        draw_pipe_timeline(a, w, r);
        return;
    }
    struct timeline_state *t = TL(a);
    const sim_result *s = t->sim;
    int cols = tl_view(t, r.w);
    if (t->col >= cols) t->col = cols - 1;
    int y = r.y;
    int hx = ui_putf(w, y, r.x, r.w, ST_BOLD, " simulated step %.2f ms (overlap) %s Eq. 1 %.2f ms %s saved %.1f%% %s %.0f img/s",
                     s->step_ms, G->dot, s->eq1_ms, G->dot, s->eq1_ms > 0 ? 100.0 * (s->eq1_ms - s->step_ms) / s->eq1_ms : 0,
                     G->dot, s->images_per_s);
    if (app_shown_refined(a) && hx + 10 <= r.w) ui_put(w, y, r.x + hx, r.w - hx, ST_CHANGED, " " "refined");
    y++;
    /* time axis: a label every ~16 columns */
    ui_put(w, y, r.x, LABEL_W, ST_HEADER, " ms");
    for (int c = 0; c + 8 < cols; c += 16)
        ui_putf(w, y, r.x + LABEL_W + 1 + c, 10, ST_HEADER, "|%.4g", t->t0 + c * t->ms_per_col);
    y++;
    int info_y = r.y + r.h - 2, legend_y = r.y + r.h - 1;
    int rows_h = info_y - y;
    if (rows_h < 1) rows_h = 1;
    if (t->row < t->top) t->top = t->row;
    if (t->row >= t->top + rows_h) t->top = t->row - rows_h + 1;
    for (int i = 0; i < rows_h && t->top + i < t->n_rows; i++) {
        int res = t->rows[t->top + i];
        char lab[32];
        res_label(&s->res[res], lab, sizeof lab);
        int cur = t->top + i == t->row;
        ui_putf(w, y + i, r.x, LABEL_W, cur ? ST_SELECTED : ST_NORMAL, " %-*s", LABEL_W - 1, lab);
        draw_row(a, w, y + i, r.x + LABEL_W + 1, cols, res, cur);
    }
    /* the cursor's task */
    int res = t->rows[t->row];
    double x0 = t->t0 + t->col * t->ms_per_col;
    int k = task_at(t, res, x0, x0 + t->ms_per_col);
    if (t->pick >= 0 && t->pick < s->n_tasks && s->tasks[t->pick].start_ms < x0 + t->ms_per_col &&
        s->tasks[t->pick].end_ms > x0)
        for (int i = 0; i < s->tasks[t->pick].n_res; i++)
            if (s->res_of[s->tasks[t->pick].res0 + i] == res) k = t->pick;
    char rn[48];
    sim_resource_name(&s->res[res], rn, sizeof rn);
    if (k >= 0) {
        const sim_task *tk = &s->tasks[k];
        char bytes[48] = "";
        if (tk->bytes > 0) snprintf(bytes, sizeof bytes, " %s %.3g MB", G->dot, tk->bytes / 1e6);
        char extra[64] = "";
        if (tk->kind == SIM_TRANSFER) snprintf(extra, sizeof extra, " gpu %d->%d", tk->gpu, tk->dst);
        ui_putf(w, info_y, r.x, r.w, ST_STATUS, " %s: %s %s%s %s %.3f-%.3f ms (%.3f)%s", rn,
                plan_net(a->p)->layers[tk->layer].name, sim_kind_name(tk->kind), extra, G->dot, tk->start_ms, tk->end_ms,
                tk->dur_ms, bytes);
    } else {
        ui_putf(w, info_y, r.x, r.w, ST_DIM, " %s: idle at %.3f ms", rn, x0);
    }
    int x = r.x + 1;
    const char *names[SIM__KINDS] = {"forward", "input grad", "weight grad", "transfer", "sync", "gather", "scatter",
                                     "reduce", "optimizer"};
    int partial = 0, has_opt = 0; /* reduce (of partial sums) and the optimizer named only where the step has them */
    for (int q = 0; q < s->n_tasks; q++) {
        partial |= s->tasks[q].kind == SIM_REDUCE;
        has_opt |= s->tasks[q].kind == SIM_OPTIMIZER;
    }
    for (int q = 0; q < SIM__KINDS && x < r.x + r.w; q++) {
        if ((q == SIM_ALLGATHER || q == SIM_REDUCE_SCATTER) && !sync_sharded(plan_cluster(a->p)->sync)) continue; /* only the sharded schemes' */
        if (q == SIM_REDUCE && !partial) continue;
        if (q == SIM_OPTIMIZER && !has_opt) continue;
        char ch[2] = {kind_letter[q], 0};
        x += ui_put(w, legend_y, x, r.x + r.w - x, kind_style((sim_kind)q), ch);
        x += ui_putf(w, legend_y, x, r.x + r.w - x, ST_DIM, " %s  ", names[q]);
    }
    char scale[48];
    snprintf(scale, sizeof scale, ". idle  %.3g ms/col", t->ms_per_col);
    ui_put(w, legend_y, x, r.x + r.w - x, ST_DIM, ui_width(scale) <= r.x + r.w - x ? scale : ". idle");
}

/* e: the step drawn (SVG, PNG, PDF through cairo) or as Chrome trace JSON;
 * a plain .json is the strategy (app_export's). */
static void timeline_export_name(const app *a, char *buf, size_t n)
{
    snprintf(buf, n, "layerwise-%s-%dgpu-timeline.svg", plan_net(a->p)->name, plan_gpus(a->p));
}

/* The pipelined step drawn or traced. */
static int pipe_export(app *a, const char *path, int trace, const char **what, lw_error *err)
{
    const pipe_sim *r = TL(a)->pipe;
    if (trace) {
        char *doc = plan_pipe_trace(a->p, r);
        if (!doc) return lw_fail(err, 1, "no pipelined step to trace");
        int rc = lw_write_output(path, doc, strlen(doc), err);
        free(doc);
        if (rc == 0) *what = "pipelined step (Chrome trace JSON)";
        return rc;
    }
    char labels[PIPE_MAX_STAGES][32], title[256], sub[256], pt[96];
    const char *rows[PIPE_MAX_STAGES];
    for (int i = 0; i < r->p && i < PIPE_MAX_STAGES; i++) {
        pipe_row_label(a, i, labels[i], sizeof labels[i]);
        rows[i] = labels[i];
    }
    plan_pipeline_summary ps;
    plan_pipeline_info(a->p, &ps);
    app_pipeline_text(a, pt, sizeof pt);
    snprintf(title, sizeof title, "One pipelined training step, simulated: %s on %s, %d GPUs, batch %ld, %s",
             plan_net(a->p)->name, plan_cluster(a->p)->name, plan_gpus(a->p), plan_batch(a->p), pt);
    snprintf(sub, sizeof sub, "Simulated step %.2f ms, bubble %.1f%%  |  the model's step %.2f ms  |  one stage (Eq. 1) %.2f ms",
             r->step_ms, 100 * r->bubble_fraction, ps.step_ms, plan_best_eval(a->p)->total_ms);
    int rc = draw_pipe_step(r, rows, title, sub, path, err);
    if (rc == 0) *what = "pipelined step drawing";
    return rc;
}

static int timeline_export_file(app *a, const char *path, const char **what, lw_error *err)
{
    int trace = lw_ends_with_ci(path, ".trace.json");
    if (!trace && lw_ends_with_ci(path, ".json")) return 1;
    if (!trace && !draw_format_known(path))
        return lw_fail(err, 2, "%s: the timeline is written as %s, or .trace.json (Chrome trace); .json: the strategy",
                       path, draw_formats_help());
    if (tl_ensure(a) != 0) return lw_fail(err, 1, "no strategy to simulate");
    if (TL(a)->pipe) return pipe_export(a, path, trace, what, err);
    if (trace) {
        *what = "simulated step (Chrome trace JSON)";
        return sim_save_trace(path, TL(a)->sim, plan_model(a->p), err);
    }
    *what = "simulated step drawing";
    return draw_sim_step(TL(a)->sim, plan_model(a->p), app_shown_label(a), path, err);
}

/* ---- keys ------------------------------------------------------------- */

static action move_row(app *a, int key)
{
    struct timeline_state *t = tl_get(a);
    if (tl_ensure(a) != 0) return ACT_NONE;
    int step = key == KEY_NPAGE ? 10 : key == KEY_PPAGE ? -10 : key == KEY_DOWN || key == 'j' ? 1 : -1;
    t->row += step;
    t->pick = -1;
    if (t->row >= t->n_rows) t->row = t->n_rows - 1;
    if (t->row < 0) t->row = 0;
    return ACT_REDRAW;
}

static action move_col(app *a, int key)
{
    struct timeline_state *t = tl_get(a);
    if (tl_ensure(a) != 0 || t->cols <= 0) return ACT_NONE;
    int d = key == KEY_RIGHT || key == 'l' ? 1 : -1;
    t->pick = -1;
    t->col += d;
    if (t->col >= t->cols) { /* pan right by a quarter */
        t->t0 += t->cols / 4 * t->ms_per_col;
        t->col -= t->cols / 4;
    } else if (t->col < 0) {
        double back = t->cols / 4 * t->ms_per_col;
        if (t->t0 > 0) {
            t->t0 = t->t0 > back ? t->t0 - back : 0;
            t->col += t->cols / 4;
        } else {
            t->col = 0;
        }
    }
    return ACT_REDRAW;
}

static action zoom(app *a, int key)
{
    struct timeline_state *t = tl_get(a);
    if (tl_ensure(a) != 0) return ACT_NONE;
    if (key == '0') {
        t->fit = 1;
        return ACT_REDRAW;
    }
    double at = t->t0 + t->col * t->ms_per_col; /* keep the cursor's time under it */
    double f = key == '}' ? 0.5 : 2.0;
    if (key == '}' && t->ms_per_col < 1e-6) return ACT_NONE;
    t->ms_per_col *= f;
    t->t0 = at - t->col * t->ms_per_col;
    if (t->t0 < 0) {
        t->t0 = 0;
        t->col = (int)(at / t->ms_per_col);
    }
    return ACT_REDRAW;
}

/* Puts the cursor on task k (on its first resource's row), panning to it. */
static void goto_task(struct timeline_state *t, int k)
{
    const sim_result *s = t->sim;
    int res = s->res_of[s->tasks[k].res0];
    for (int i = 0; i < t->n_rows; i++)
        if (t->rows[i] == res) t->row = i;
    t->pick = k;
    if (t->ms_per_col <= 0 || t->cols <= 0) { /* not drawn yet: the first frame fits the step */
        t->col = 0;
        return;
    }
    double at = s->tasks[k].start_ms + fmin(s->tasks[k].dur_ms / 2, t->ms_per_col / 2);
    if (at < t->t0 || at >= t->t0 + t->cols * t->ms_per_col) t->t0 = fmax(0, at - t->cols / 2 * t->ms_per_col);
    t->col = (int)((at - t->t0) / t->ms_per_col);
    if (t->col >= t->cols) t->col = t->cols - 1;
}

/* ] / [ on a pipelined step: the next / previous bar of the stage's row. */
static action pipe_next_task(struct timeline_state *t, int key)
{
    const pipe_sim *r = t->pipe;
    double now = t->t0 + (t->col + 0.5) * t->ms_per_col, best = key == ']' ? HUGE_VAL : -HUGE_VAL;
    for (int k = 0; k < r->n_tasks; k++) {
        const pipe_sim_task *q = &r->tasks[k];
        if (q->stage != t->row || !(q->end_ms > q->start_ms)) continue;
        if (key == ']' && q->start_ms > now + t->ms_per_col / 2 && q->start_ms < best) best = q->start_ms;
        if (key == '[' && q->end_ms < now - t->ms_per_col / 2 && q->start_ms > best) best = q->start_ms;
    }
    if (!isfinite(best) || t->ms_per_col <= 0) return ACT_NONE;
    if (best < t->t0 || best >= t->t0 + t->cols * t->ms_per_col) t->t0 = fmax(0, best - t->cols / 2 * t->ms_per_col);
    t->col = (int)((best - t->t0) / t->ms_per_col + 0.5);
    if (t->col >= t->cols) t->col = t->cols - 1;
    return ACT_REDRAW;
}

/* ] / [: the cursor to the next / previous task on its row. */
static action next_task(app *a, int key)
{
    struct timeline_state *t = tl_get(a);
    if (tl_ensure(a) != 0) return ACT_NONE;
    if (t->pipe) return pipe_next_task(t, key);
    const sim_result *s = t->sim;
    int r = t->rows[t->row];
    double now = t->t0 + (t->col + 0.5) * t->ms_per_col;
    int pick = -1;
    if (key == ']') {
        for (int i = 0; i < t->n_on[r] && pick < 0; i++)
            if (s->tasks[t->on[r][i]].start_ms > now + t->ms_per_col / 2 && s->tasks[t->on[r][i]].dur_ms > 0)
                pick = t->on[r][i];
    } else {
        for (int i = t->n_on[r] - 1; i >= 0 && pick < 0; i--)
            if (s->tasks[t->on[r][i]].end_ms < now - t->ms_per_col / 2 && s->tasks[t->on[r][i]].dur_ms > 0)
                pick = t->on[r][i];
    }
    if (pick < 0) return ACT_NONE;
    /* along the row: a task on several resources (a transfer holds its
     * link and the NICs it crosses) lists this row among them; stay on it */
    int row = t->row;
    goto_task(t, pick);
    t->row = row;
    return ACT_REDRAW;
}

/* Search: the step's tasks that take time, by start, whose layer's name or
 * type matches; from the task under the cursor. */
typedef struct find_ctx {
    const app *a;
    const int *order;
} find_ctx;

static int task_matches(int i, void *user)
{
    const find_ctx *f = user;
    return app_layer_matches(f->a, TL(f->a)->sim->tasks[f->order[i]].layer);
}

static int find(app *a, int dir, int *nth)
{
    if (tl_ensure(a) != 0 || TL(a)->pipe) return 0; /* a pipelined step's bars are stages', not layers' */
    struct timeline_state *t = TL(a);
    const sim_result *s = t->sim;
    tl_view(t, t->cols > 0 ? t->cols + LABEL_W + 1 : a->frame.w > 0 ? a->frame.w : TUI_MIN_W); /* not drawn yet */
    int *order = lw_malloc(sizeof(int) * (size_t)(s->n_tasks + 1)), n = 0;
    for (int k = 0; k < s->n_tasks; k++)
        if (s->tasks[k].dur_ms > 0) order[n++] = k;
    sort_sim = s;
    qsort(order, (size_t)n, sizeof(int), cmp_start);
    /* the cursor: the task picked, else the last one started before the cursor's time */
    double now = t->t0 + t->col * t->ms_per_col;
    list_cursor c = {dir > 0 ? -1 : 0, 0, 0};
    for (int i = 0; i < n; i++) {
        if (order[i] == t->pick) {
            c.sel = i;
            break;
        }
        if (s->tasks[order[i]].start_ms <= now) c.sel = dir > 0 ? i : i + 1;
    }
    find_ctx f = {a, order};
    int count = n ? list_find(&c, n, dir, task_matches, &f, nth) : 0;
    if (count) goto_task(t, order[c.sel]);
    free(order);
    return count;
}

static const keybind timeline_keys[] = {
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "choose a GPU, link or NIC row", move_row},
    {{KEY_PPAGE, KEY_NPAGE}, "PgUp PgDn", "ten rows up / down", move_row},
    {{KEY_LEFT, KEY_RIGHT, 'h', 'l'}, "Left Right h l", "move the cursor in time (pans at the edge)", move_col},
    {{'}', '{', '0'}, "} { 0", "zoom in / out around the cursor; 0 the whole step", zoom},
    {{']', '['}, "] [", "the cursor to the next / previous task on the row", next_task},
    {{0}, NULL, NULL, NULL},
};

const screen_ops screen_timeline_ops = {
    .tab = "Timeline",
    .title = "Timeline (6)",
    .hints = "Up/Dn:row Left/Right:time }/{:zoom 0:fit ]/[:next/prev task /:find-layer +/-:GPUs",
    .draw = draw_timeline,
    .keys = timeline_keys,
    .state_free = timeline_state_free,
    .invalidate = timeline_invalidate,
    .export_name = timeline_export_name,
    .export_file = timeline_export_file,
    .export_formats = ".svg .png .pdf .trace.json .json",
    .find = find,
    .find_what = "task",
};
