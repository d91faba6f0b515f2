/*
 * screen_compare: two strategies side by side — the current one (pinned or
 * not), the free optimum, a baseline, the strategy before the last what-if,
 * or a strategy file — per layer each one's config and time (Eq. 1), the
 * difference, and the layers whose config differs marked *. `a` and `b`
 * choose the sides, `f` reads a strategy file into B.
 */
#include "draw.h"
#include "list.h"
#include "screens.h"
#include "diff.h"
#include "prompt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CS(a) compare_of(a)

static const char *const source_names[CMP__COUNT] = {"current", "optimum", "data", "model", "owt", "previous", "file"};

static void side_clear(compare_side *s)
{
    free(s->cfg);
    free(s->le);
    memset(s, 0, sizeof *s);
}

/* Fills s from configs ci (indices into the plan's model), evaluated there. */
static void side_from_indices(app *a, compare_side *s, const int *ci)
{
    const plan *p = a->p;
    int L = plan_net(p)->n_layers;
    strategy_eval ev;
    plan_evaluate(p, ci, &ev);
    for (int i = 0; i < L; i++) s->cfg[i] = *plan_config(p, i, ci[i]);
    memcpy(s->le, ev.layers, sizeof(layer_eval) * (size_t)L);
    s->total_ms = ev.total_ms;
    s->images_per_s = ev.images_per_s;
    s->ok = 1;
    strategy_eval_free(&ev);
}

/* Resolves side k's source for the current plan. */
static void side_resolve(app *a, int k)
{
    compare_state *cs = CS(a);
    compare_side *s = &cs->side[k];
    const plan *p = a->p;
    int L = plan_net(p)->n_layers, src = cs->src[k];
    side_clear(s);
    s->cfg = lw_calloc((size_t)L, sizeof(config));
    s->le = lw_calloc((size_t)L, sizeof(layer_eval));
    int *ci = lw_calloc((size_t)L, sizeof(int));
    int pins = plan_pin_count(p);
    switch (src) {
    case CMP_CURRENT:
        snprintf(s->label, sizeof s->label, "%s", pins ? "pinned" : "current");
        side_from_indices(a, s, plan_best(p));
        break;
    case CMP_OPTIMUM:
        snprintf(s->label, sizeof s->label, "optimum%s", pins ? " (no pins)" : "");
        if (!pins) side_from_indices(a, s, plan_best(p));
        else if (plan_unpinned_best(p, ci) == 0) side_from_indices(a, s, ci);
        else snprintf(s->why, sizeof s->why, "no strategy without pins found");
        break;
    case CMP_DATA:
    case CMP_MODEL:
    case CMP_OWT:
        snprintf(s->label, sizeof s->label, "%s", baseline_name((baseline_kind)(src - CMP_DATA)));
        if (strategy_pick(p, baseline_name((baseline_kind)(src - CMP_DATA)), ci, NULL) == 0) side_from_indices(a, s, ci);
        break;
    case CMP_PREVIOUS:
        if (!a->prev.eval.layers) {
            snprintf(s->label, sizeof s->label, "previous");
            snprintf(s->why, sizeof s->why, "no what-if yet: change something (+ - > < s ...) first");
            break;
        }
        /* as it was: its own setting and times */
        if (a->prev.gpus != plan_gpus(p) || a->prev.batch != plan_batch(p))
            snprintf(s->label, sizeof s->label, "previous (%d GPUs, batch %ld)", a->prev.gpus, a->prev.batch);
        else
            snprintf(s->label, sizeof s->label, "previous");
        memcpy(s->cfg, a->prev.configs, sizeof(config) * (size_t)L);
        memcpy(s->le, a->prev.eval.layers, sizeof(layer_eval) * (size_t)L);
        s->total_ms = a->prev.eval.total_ms;
        s->images_per_s = a->prev.eval.images_per_s;
        s->ok = 1;
        break;
    default: {
        snprintf(s->label, sizeof s->label, "%s", cs->file[0] ? cs->file : "file");
        if (!cs->file[0]) {
            snprintf(s->why, sizeof s->why, "no file yet: f types one");
            break;
        }
        lw_error err = {0};
        if (plan_strategy_file(p, cs->file, ci, &err) == 0) side_from_indices(a, s, ci);
        else snprintf(s->why, sizeof s->why, "%.250s", err.msg);
        break;
    }
    }
    free(ci);
}

static void compare_ensure(app *a)
{
    compare_state *cs = CS(a);
    if (cs->valid || !plan_search_result(a->p)) return;
    side_resolve(a, 0);
    side_resolve(a, 1);
    cs->valid = 1;
}

void app_compare_open(app *a)
{
    if (!plan_search_result(a->p)) return;
    compare_state *cs = CS(a);
    if (!cs->opened) { /* the first time: the current strategy against what it replaced, or a baseline */
        cs->src[0] = CMP_CURRENT;
        cs->src[1] = a->prev.eval.layers ? CMP_PREVIOUS : a->base.kind >= 0 ? CMP_DATA + a->base.kind : CMP_DATA;
        cs->opened = 1;
    }
    cs->valid = 0;
    app_open_screen(a, SCR_COMPARE);
}

static action compare_file_set(app *a, const char *path)
{
    compare_state *cs = CS(a);
    compare_ensure(a);
    /* a file that does not give a strategy leaves the view as it was: B
     * keeps its source, and the status line says why */
    compare_side keep = cs->side[1];
    int keep_src = cs->src[1];
    char keep_file[sizeof cs->file];
    snprintf(keep_file, sizeof keep_file, "%s", cs->file);
    memset(&cs->side[1], 0, sizeof cs->side[1]); /* keep owns the old side's arrays */
    snprintf(cs->file, sizeof cs->file, "%s", path);
    cs->src[1] = CMP_FILE;
    side_resolve(a, 1);
    if (!cs->side[1].ok) {
        app_set_status(a, 1, "compare: %s (B stays %s)", cs->side[1].why, keep.label);
        side_clear(&cs->side[1]);
        cs->side[1] = keep;
        cs->src[1] = keep_src;
        snprintf(cs->file, sizeof cs->file, "%s", keep_file);
        return ACT_REDRAW;
    }
    side_clear(&keep);
    app_set_status(a, 0, "compare: B is %s", cs->file);
    return ACT_REDRAW;
}

static double layer_ms(const layer_eval *le) { return le->compute_ms + le->sync_ms + le->transfer_ms; }

static void draw_compare(app *a, WINDOW *w, rect r)
{
    compare_state *cs = CS(a);
    compare_ensure(a);
    const plan *p = a->p;
    const compare_side *A = &cs->side[0], *B = &cs->side[1];
    int L = plan_net(p)->n_layers;
    /* the header: both totals, labelled, and what differs */
    char head[2048]; /* two labels and reasons, or two labels and totals of any size (-Wformat-truncation) */
    int n = 0;
    if (A->ok && B->ok)
        for (int i = 0; i < L; i++) n += !config_equal(&A->cfg[i], &B->cfg[i]);
    /* the previous strategy of another batch or GPU count: a step is not
     * the same work, so images/s compare (issue 36, bug 11: ms only) */
    int other = a->prev.eval.layers && (a->prev.batch != plan_batch(p) || a->prev.gpus != plan_gpus(p)) &&
                (cs->src[0] == CMP_PREVIOUS || cs->src[1] == CMP_PREVIOUS);
    if (A->ok && B->ok && !other)
        snprintf(head, sizeof head, "A: %s %.2f ms vs B: %s %.2f ms per step (Eq. 1): B-A %+.2f ms (%+.1f%%), %d of "
                                    "%d layers differ (*)",
                 A->label, A->total_ms, B->label, B->total_ms, B->total_ms - A->total_ms,
                 A->total_ms > 0 ? (B->total_ms - A->total_ms) / A->total_ms * 100 : 0.0, n, L);
    else if (A->ok && B->ok)
        snprintf(head, sizeof head, "A: %s %.2f ms vs B: %s %.2f ms per step (Eq. 1), not the same work: images/s A "
                                    "%.0f, B %.0f (%+.1f%%), %d of %d layers differ (*)",
                 A->label, A->total_ms, B->label, B->total_ms, A->images_per_s, B->images_per_s,
                 A->images_per_s > 0 ? (B->images_per_s - A->images_per_s) / A->images_per_s * 100 : 0.0, n, L);
    else
        snprintf(head, sizeof head, "A: %s%s%s  B: %s%s%s", A->label, A->ok ? "" : ": ", A->ok ? "" : A->why, B->label,
                 B->ok ? "" : ": ", B->ok ? "" : B->why);
    ui_fill(w, r.y, r.x, r.w, ST_HEADER);
    ui_fill(w, r.y + 1, r.x, r.w, ST_HEADER);
    ui_wrap(w, (rect){r.y, r.x, 2, r.w}, ST_HEADER, head);
    if (!A->ok || !B->ok) {
        ui_wrap(w, (rect){r.y + 3, r.x, 3, r.w}, ST_DIM, "a and b choose the strategies: current, optimum, data, "
                                                         "model, owt, previous (before the last what-if), file (f "
                                                         "types one).");
        return;
    }
    /* columns */
    int nw = 5;
    for (int i = 0; i < L; i++) {
        int k = ui_width(plan_net(p)->layers[i].name);
        if (k > nw) nw = k;
    }
    if (nw > 16) nw = 16;
    int split = r.w >= 2 + nw + 12 * 2 + 10 * 3 + 9 * 3 + 4; /* room for B-A by term */
    int y = r.y + 2;
    ui_fill(w, y, r.x, r.w, ST_BOLD);
    char b[128];
    if (split)
        snprintf(b, sizeof b, "  %-*s %-11s %9s %-11s %9s %9s %9s %9s %9s", nw, "layer", "A config", "A ms",
                 "B config", "B ms", "B-A ms", "B-A t_c", "t_s", "t_x");
    else
        snprintf(b, sizeof b, "  %-*s %-11s %9s %-11s %9s %9s", nw, "layer", "A config", "A ms", "B config", "B ms",
                 "B-A ms");
    ui_put(w, y, r.x, r.w, ST_BOLD, b);
    int rows = r.h - 5;
    if (rows < 1) rows = 1;
    list_fit(&cs->cur, L, rows, 1);
    for (int q = 0; q < rows && cs->cur.top + q < L; q++) {
        int i = cs->cur.top + q, yy = y + 1 + q;
        int sel = i == cs->cur.sel, ch = !config_equal(&A->cfg[i], &B->cfg[i]);
        int st = sel ? ST_SELECTED : ST_NORMAL;
        if (sel) ui_fill(w, yy, r.x, r.w, ST_SELECTED);
        char ca[48], cb[48], name[64];
        plan_format_config(p, i, &A->cfg[i], ca, sizeof ca);
        plan_format_config(p, i, &B->cfg[i], cb, sizeof cb);
        ui_fit_mid(plan_net(p)->layers[i].name, nw, name, sizeof name);
        double ta = layer_ms(&A->le[i]), tb = layer_ms(&B->le[i]);
        ui_put(w, yy, r.x, 1, sel ? st : ST_CHANGED, ch ? "*" : " ");
        int x = r.x + 2;
        x += ui_put(w, yy, x, nw, st, name);
        x = r.x + 2 + nw + 1;
        ui_put(w, yy, x, 11, sel ? st : ST_CLASS0 + config_class(&A->cfg[i]), ca);
        snprintf(b, sizeof b, "%.2f", ta);
        ui_put_right(w, yy, x + 12, 9, st, b);
        ui_put(w, yy, x + 22, 11, sel ? st : ST_CLASS0 + config_class(&B->cfg[i]), cb);
        snprintf(b, sizeof b, "%.2f", tb);
        ui_put_right(w, yy, x + 34, 9, st, b);
        double d = tb - ta;
        snprintf(b, sizeof b, "%+.2f", fabs(d) < 5e-3 ? 0.0 : d);
        ui_put_right(w, yy, x + 44, 9, sel ? st : d > 5e-3 ? ST_BAD : d < -5e-3 ? ST_GOOD : ST_DIM, b);
        if (split) {
            double dd[3] = {B->le[i].compute_ms - A->le[i].compute_ms, B->le[i].sync_ms - A->le[i].sync_ms,
                            B->le[i].transfer_ms - A->le[i].transfer_ms};
            for (int t = 0; t < 3; t++) {
                snprintf(b, sizeof b, "%+.2f", fabs(dd[t]) < 5e-3 ? 0.0 : dd[t]);
                ui_put_right(w, yy, x + 54 + 10 * t, 9, sel ? st : ST_DIM, b);
            }
        }
    }
    /* the totals */
    int fy = r.y + r.h - 2;
    ui_hline(w, fy, r.x, r.w, ST_DIM);
    snprintf(b, sizeof b, "  %-*s %-11s %9.2f %-11s %9.2f %+9.2f", nw, "total", "Eq. 1", A->total_ms, "Eq. 1",
             B->total_ms, B->total_ms - A->total_ms);
    ui_put(w, fy + 1, r.x, r.w, ST_BOLD, b);
}

static action k_move(app *a, int key)
{
    compare_state *cs = CS(a);
    list_key(&cs->cur, key, plan_net(a->p)->n_layers, 1, 0);
    a->sel = cs->cur.sel; /* i explains the row's layer */
    return ACT_REDRAW;
}

static action k_source(app *a, int key)
{
    compare_state *cs = CS(a);
    int k = key == 'a' ? 0 : 1;
    cs->src[k] = (cs->src[k] + 1) % CMP__COUNT;
    cs->valid = 0;
    compare_ensure(a);
    app_set_status(a, 0, "compare: %c is %s%s%s", k ? 'B' : 'A', source_names[cs->src[k]],
                   cs->side[k].ok ? "" : ": ", cs->side[k].ok ? "" : cs->side[k].why);
    return ACT_REDRAW;
}

/* The strategy file typed for B (paths read as a shell reads them: ~ is the home). */
static action strategy_typed(app *a, const char *text, int arg)
{
    (void)arg;
    char path[sizeof a->prompt.buf];
    if (prompt_expand_home(text, path, sizeof path) != 0) {
        app_set_status(a, 1, "compare: cannot expand \"%s\" (no such user, or too long)", text);
        return ACT_REDRAW;
    }
    return compare_file_set(a, path);
}

static action k_file(app *a, int key)
{
    (void)key;
    prompt_open(a, PROMPT_STRATEGY, "Strategy file for B: ", CS(a)->file, strategy_typed, 0);
    return ACT_REDRAW;
}

static const keybind compare_keys[] = {
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "select a layer (i explains it)", k_move},
    {{KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END}, "PgUp PgDn Home End", "page / first / last layer", k_move},
    {{'a', 'b'}, "a b", "A / B: current optimum data model owt previous file", k_source},
    {{'f'}, "f", "B: type a strategy file (layerwise-strategy/1) to compare", k_file},
    {{0}, NULL, NULL, NULL},
};

static void *compare_new(app *a)
{
    (void)a;
    return lw_calloc(1, sizeof(compare_state));
}

static void compare_free(app *a, void *st)
{
    (void)a;
    compare_state *cs = st;
    side_clear(&cs->side[0]);
    side_clear(&cs->side[1]);
    free(cs);
}

static void compare_invalidate(app *a, int settings)
{
    (void)settings;
    CS(a)->valid = 0;
}

const screen_ops screen_compare_ops = {
    .tab = NULL,
    .title = "Compare (C)",
    .hints = "a/b:strategies f:file Up/Dn:layer i:explain Esc:back",
    .draw = draw_compare,
    .keys = compare_keys,
    .overlay = " compare ",
    .state_new = compare_new,
    .state_free = compare_free,
    .invalidate = compare_invalidate,
};
