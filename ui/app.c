/*
 * app: a TUI session — opening the plan, applying what-if changes and
 * reporting what they changed, pins, baselines, sorting, export, and the
 * background work the scaling and "why not" screens need. No drawing here.
 */
#include "app.h"
#include "history.h"
#include "shown.h"

#include "draw.h"
#include "export_dot.h"
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const screen_ops *const app_screens[SCR__COUNT] = {
    [SCR_TABLE] = &screen_table_ops,     [SCR_GRAPH] = &screen_graph_ops,   [SCR_STEPS] = &screen_steps_ops,
    [SCR_SCALE] = &screen_scale_ops,     [SCR_CLUSTER] = &screen_cluster_ops, [SCR_WHYNOT] = &screen_whynot_ops,
    [SCR_EXPLAIN] = &screen_explain_ops, [SCR_COMPARE] = &screen_compare_ops,
    [SCR_HELP] = &screen_help_ops,       [SCR_TIMELINE] = &screen_timeline_ops,
    [SCR_OPEN] = &screen_open_ops,       [SCR_LECTURE] = &screen_lecture_ops,
};

int config_class(const config *c)
{
    return (int)split_class_of(c);
}

void app_set_status(app *a, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->status, sizeof a->status, fmt, ap);
    va_end(ap);
    a->status_error = error;
    a->status_gen++;
}

/* Every screen's state, made afresh for the plan (app_open, app_adopt_plan). */
static void states_new(app *a)
{
    for (int s = 0; s < SCR__COUNT; s++) {
        const screen_ops *o = app_screens[s];
        a->st[s] = o->state_new ? o->state_new(a) : o->state_size ? lw_calloc(1, o->state_size) : NULL;
    }
}

static void states_free(app *a)
{
    for (int s = 0; s < SCR__COUNT; s++) {
        if (app_screens[s]->state_free) app_screens[s]->state_free(a, a->st[s]);
        else free(a->st[s]);
        a->st[s] = NULL;
    }
}

/* What is sized by the network's layers. */
static void layer_arrays_new(app *a)
{
    int n = plan_net(a->p)->n_layers;
    a->prev.changed = lw_calloc((size_t)n, 1);
    a->order = lw_malloc(sizeof(int) * (size_t)n);
    a->base.ci = lw_calloc((size_t)n, sizeof(int));
    a->prev.configs = lw_calloc((size_t)n, sizeof(config));
}

static void layer_arrays_free(app *a)
{
    free(a->prev.changed);
    free(a->order);
    free(a->base.ci);
    free(a->prev.configs);
    strategy_eval_free(&a->prev.eval); /* the previous strategy: of these layers */
}

app *app_open(const tui_args *args, lw_error *err)
{
    const char *nn = args && args->net ? args->net : DEFAULT_NETWORK;
    const char *cn = args && args->cluster ? args->cluster : DEFAULT_CLUSTER;
    network *net = plan_load_network(nn, err);
    if (!net) return NULL;
    cluster *cl = plan_load_cluster(cn, err);
    if (!cl) {
        net_free(net);
        return NULL;
    }
    settings_apply_sync(cl, args ? args->sync : -1);
    if (args) settings_apply_links(cl, args->intra_bw, args->inter_bw);
    if (args && settings_apply_precision(cl, args->precision_set ? args->precision : -1,
                                    args->bucket_set ? args->bucket_mb : -1, err) != 0) {
        net_free(net);
        cluster_free(cl);
        return NULL;
    }
    profile *prof = NULL;
    if (args && args->profile) {
        prof = plan_load_profile(args->profile, err);
        if (!prof || profile_check_cluster(prof, cl, err) < 0) { /* another GPU or precision: refused */
            profile_free(prof);
            net_free(net);
            cluster_free(cl);
            return NULL;
        }
    }
    cluster *orig = cluster_clone(cl);
    plan_settings set = args ? args->set : (plan_settings){0};
    /* no count given (all of them) on a cluster larger than a search of a
     * few seconds takes: that many, which the status line says, rather
     * than a search of minutes or a refusal before the first screen (+ and
     * g ask for more, up to what the search takes) */
    const int capped_from = set.gpus == 0 && cluster_gpus(cl) > PLAN_AUTO_SEARCH_MAX_GPUS ? cluster_gpus(cl) : 0;
    if (capped_from) set.gpus = PLAN_AUTO_SEARCH_MAX_GPUS;
    plan_options po = {.set = set, .whatifs = 1};
    if (args) po.mem = args->mset, po.pipe = args->pipe;
    plan *p = plan_open(net, cl, prof, &po, err);
    if (!p) {
        cluster_free(orig);
        return NULL;
    }
    if (args && settings_apply_pins(p, args->pins, args->n_pins, err) != 0) {
        plan_free(p);
        cluster_free(orig);
        return NULL;
    }
    app *a = lw_calloc(1, sizeof *a);
    a->p = p;
    a->src.cluster_loaded = orig;
    a->src.gpus_capped_from = capped_from;
    a->src.net_name = lw_strdup(nn);
    a->src.cluster_name = lw_strdup(cn);
    a->src.profile_name = args && args->profile ? lw_strdup(args->profile) : NULL;
    layer_arrays_new(a);
    a->base.kind = -1;
    a->screen = a->prev_screen = a->help_from = SCR_TABLE;
    states_new(a);
    app_sort_rows(a);
    history_reset(&a->hist, a->p, a->src.cluster_loaded, a->src.cluster_name);
    app_status_opened(a);
    return a;
}

void app_adopt_plan(app *a, plan *p)
{
    app_shown_free(a); /* F's search and the simulation belong to the old plan */
    states_free(a);
    layer_arrays_free(a);
    strategy_eval_free(&a->base.eval);
    a->base.valid = 0;
    plan_free(a->p);
    a->p = p;
    layer_arrays_new(a);
    a->sel = 0;
    states_new(a);
    app_sort_rows(a);
    history_reset(&a->hist, a->p, a->src.cluster_loaded, a->src.cluster_name);
}

int app_memory_over(const app *a, double *need)
{
    const plan *p = a->p;
    if (!plan_search_result(p) || !plan_has_model(p)) return 0;
    double cap = plan_memory_limit(plan_memory_settings_of(p), plan_cluster(p));
    if (!isfinite(cap)) cap = plan_cluster(p)->gpu.memory_gib * 1073741824.0;
    double peak = plan_peak_memory(p, plan_best(p), NULL);
    if (need) *need = peak;
    return peak > cap;
}

/* ", but it needs 30.9 GiB per GPU of 16.0": what the status adds when the
 * optimum does not fit (as the CLI warns); "" when it does. */
static const char *memory_warning(const app *a, char *buf, size_t n)
{
    double need;
    buf[0] = 0;
    if (!app_memory_over(a, &need)) return buf;
    const plan *p = a->p;
    double cap = plan_memory_limit(plan_memory_settings_of(p), plan_cluster(p));
    int limited = isfinite(cap);
    if (!limited) cap = plan_cluster(p)->gpu.memory_gib * 1073741824.0;
    snprintf(buf, n, "; DOES NOT FIT: needs %.2f GiB per GPU of %.2f%s", need / 1073741824.0, cap / 1073741824.0,
             !limited ? " (no limit set: M sets one)" : plan_memory_of(p)->min_peak_bytes > 0 ? " (no strategy fits)" : "");
    return buf;
}

void app_status_opened(app *a)
{
    const plan *p = a->p;
    char warn[160];
    if (!plan_search_result(p)) return;
    memory_warning(a, warn, sizeof warn);
    char capped[160] = "";
    if (a->src.gpus_capped_from)
        snprintf(capped, sizeof capped, "%d of the cluster's %d GPUs (opened at %d: more take tens of seconds, + or g); ",
                 plan_gpus(p), a->src.gpus_capped_from, PLAN_AUTO_SEARCH_MAX_GPUS);
    app_set_status(a, warn[0] != 0, "%soptimum found in %.0f ms: %.2f ms/step, %.1f img/s (Eq. 1)%s%s", capped,
                   plan_search_ms(p) + plan_build_ms(p), plan_best_eval(p)->total_ms, plan_best_eval(p)->images_per_s,
                   warn, warn[0] ? "" : ". ? for help");
}

int app_pins_held(const app *a)
{
    return plan_pins_held(a->p);
}

/* Which layers' pins are on hold now ([n_layers], caller frees). */
static unsigned char *held_now(const plan *p)
{
    int L = plan_net(p)->n_layers;
    unsigned char *h = lw_malloc((size_t)(L ? L : 1));
    for (int i = 0; i < L; i++) h[i] = (unsigned char)plan_pin_held(p, i);
    return h;
}

/* After a what-if: what became of the pins on hold (the plan keeps them
 * and pins them again, in the what-if's own search, on a setting that has
 * their config). was_held: held_now before it. note: what happened, for
 * the status. */
static void pins_note(const app *a, const unsigned char *was_held, char *note, size_t n)
{
    const plan *p = a->p;
    int L = plan_net(p)->n_layers, back = 0, held = 0, first_held = -1;
    note[0] = 0;
    if (a->hist.move) return; /* undo and redo put back a state exactly, held pins included */
    for (int i = 0; i < L; i++) {
        back += was_held[i] && plan_pinned(p)[i] >= 0;
        if (plan_pin_held(p, i)) {
            held++;
            if (first_held < 0) first_held = i;
        }
    }
    if (back) snprintf(note, n, "; %d pin%s back", back, back == 1 ? "" : "s");
    if (held) {
        char cb[48];
        size_t k = strlen(note);
        plan_format_config(p, first_held, plan_pin_config(p, first_held), cb, sizeof cb);
        snprintf(note + k, n - k, "; pin %s = %s on hold (not a config on %d GPUs)%s", plan_net(p)->layers[first_held].name,
                 cb, plan_gpus(p), held > 1 ? " and others" : "");
    }
}

void app_free(app *a)
{
    if (!a) return;
    app_shown_free(a);
    states_free(a);
    history_free(&a->hist);
    plan_free(a->p);
    cluster_free(a->src.cluster_loaded);
    cluster_free(a->pending.cl);
    free(a->src.net_name);
    free(a->src.cluster_name);
    free(a->src.profile_name);
    layer_arrays_free(a);
    strategy_eval_free(&a->base.eval);
    free(a->pending.opened_cluster);
    net_free(a->pending.open_net);
    free(a->pending.open_net_name);
    free(a->pending.pins);
    free(a);
}

/* ---- derived state ------------------------------------------------------- */

static int cmp_val_desc(const double *v, int i, int j)
{
    if (v[i] > v[j]) return -1;
    if (v[i] < v[j]) return 1;
    return i - j;
}

void app_sort_rows(app *a)
{
    int n = plan_net(a->p)->n_layers;
    for (int i = 0; i < n; i++) a->order[i] = i;
    const strategy_eval *ev = app_shown_eval(a);
    if (a->sort == SORT_LAYER || !ev->layers) return;
    double *v = lw_malloc(sizeof(double) * (size_t)n);
    plan_pipeline_summary ps;
    int piped = plan_pipeline_info(a->p, &ps);
    for (int i = 0; i < n; i++) {
        layer_eval stage_le;
        plan_stage_layer f;
        const layer_eval *le = &ev->layers[i];
        if (piped && plan_stage_layer_figures(a->p, i, &f) == 0) { /* as the table's rows: per micro-batch in its stage */
            stage_le = (layer_eval){f.t_c_ms, f.t_s_ms / ps.microbatches, f.t_x_ms, 0, 0, 0};
            le = &stage_le;
        }
        switch (a->sort) {
        case SORT_TC: v[i] = le->compute_ms; break;
        case SORT_TS: v[i] = le->sync_ms; break;
        case SORT_TX: v[i] = le->transfer_ms; break;
        default: v[i] = le->compute_ms + le->sync_ms + le->transfer_ms; break;
        }
    }
    /* insertion sort: n is a few hundred at most and it is stable */
    for (int i = 1; i < n; i++) {
        int x = a->order[i], j = i - 1;
        while (j >= 0 && cmp_val_desc(v, a->order[j], x) > 0) {
            a->order[j + 1] = a->order[j];
            j--;
        }
        a->order[j + 1] = x;
    }
    free(v);
}

void app_baseline_ensure(app *a)
{
    if (a->base.kind < 0 || a->base.valid || !plan_has_model(a->p)) return;
    strategy_eval_free(&a->base.eval);
    plan_baseline(a->p, (baseline_kind)a->base.kind, a->base.ci);
    plan_evaluate(a->p, a->base.ci, &a->base.eval);
    a->base.valid = 1;
}

static void invalidate_all(app *a, int settings)
{
    for (int s = 0; s < SCR__COUNT; s++)
        if (app_screens[s]->invalidate) app_screens[s]->invalidate(a, settings);
}

void app_invalidate_settings(app *a)
{
    invalidate_all(a, 1);
}

void app_invalidate_view(app *a)
{
    a->base.valid = 0;
    app_sort_rows(a);
    invalidate_all(a, 0);
}

void app_invalidate(app *a)
{
    app_shown_plan_changed(a);
    app_invalidate_view(a);
}

/* ---- the strategy shown: shown.c, handed the session ---------------------- */

static shown_host host_of(app *a)
{
    return (shown_host){&a->shown, a->p, a->status, sizeof a->status, &a->status_error, &a->status_gen,
                        a->prev.changed, 0};
}

/* After a shown.c call through h: the screens drop what they derived from
 * the strategy shown, if it changed. */
static void host_done(app *a, const shown_host *h)
{
    if (h->view_changed) app_invalidate_view(a);
}

const int *app_shown_configs(const app *a) { return shown_configs(a->shown, a->p); }
const strategy_eval *app_shown_eval(const app *a) { return shown_eval(a->shown, a->p); }
int app_shown_refined(const app *a) { return shown_refined(a->shown); }
const char *app_shown_label(const app *a) { return shown_label(a->shown); }
double app_sim_step_ms(const app *a) { return shown_sim_step_ms(a->shown); }
int app_refining(const app *a) { return shown_refining(a->shown); }
int app_shown_busy(const app *a) { return shown_busy(a->shown, a->p); }
void app_shown_plan_changed(app *a) { shown_plan_changed(a->shown); }
void app_shown_free(app *a) { shown_free(&a->shown); }

const sim_result *app_sim(app *a)
{
    shown_host h = host_of(a);
    return shown_sim(&h);
}

action app_refine_key(app *a)
{
    shown_host h = host_of(a);
    shown_refine_key(&h);
    host_done(a, &h);
    return ACT_REDRAW;
}

void app_refine_cancel(app *a)
{
    shown_host h = host_of(a);
    shown_refine_cancel(&h);
}

void app_shown_whatif(app *a, double sim_before_ms)
{
    shown_host h = host_of(a);
    shown_whatif(&h, sim_before_ms);
}

int app_shown_idle(app *a, double budget_s)
{
    shown_host h = host_of(a);
    int more = shown_idle(&h, budget_s);
    host_done(a, &h);
    return more;
}

/* ---- what-if ------------------------------------------------------------- */

static void change_reset(app *a)
{
    cluster_free(a->pending.cl);
    a->pending.cl = NULL;
    free(a->pending.pins);
    a->pending.pins = NULL;
    a->pending.change = (plan_change){0};
}

void app_whatif_begin(app *a, const char *what)
{
    const plan *p = a->p;
    snprintf(a->pending.what, sizeof a->pending.what, "%s", what);
    change_reset(a);
    a->prev.total_ms = plan_search_result(p) ? plan_best_eval(p)->total_ms : 0;
    a->prev.ips = plan_search_result(p) ? plan_best_eval(p)->images_per_s : 0;
    a->prev.batch = plan_batch(p);
    for (int i = 0; i < plan_net(p)->n_layers; i++)
        a->prev.configs[i] = plan_has_model(p) && plan_search_result(p) ? *plan_config(p, i, plan_best(p)[i]) : (config){{0, 0, 0, 0, 0, 0}};
    /* its times too, for the compare view's "previous" */
    strategy_eval_free(&a->prev.eval);
    if (plan_search_result(p) && plan_best_eval(p)->layers) {
        a->prev.eval = *plan_best_eval(p);
        size_t bytes = sizeof(layer_eval) * (size_t)plan_best_eval(p)->n_layers;
        a->prev.eval.layers = lw_malloc(bytes);
        memcpy(a->prev.eval.layers, plan_best_eval(p)->layers, bytes);
        a->prev.gpus = plan_gpus(p);
    }
}

plan_settings *app_change_settings(app *a)
{
    if (!a->pending.change.set) {
        a->pending.set = *plan_run_settings(a->p);
        a->pending.change.set = &a->pending.set;
    }
    return &a->pending.set;
}

cluster *app_change_cluster(app *a)
{
    if (!a->pending.cl) {
        a->pending.cl = cluster_clone(plan_cluster(a->p));
        a->pending.change.cl = a->pending.cl;
    }
    return a->pending.cl;
}

/* The status after a what-if: its label, then the numbers from the state
 * before it to the state after it. An undo's label names the what-if it
 * takes back ("undo 1/1: 16→8 GPUs"), so its numbers read the same way,
 * from the state the undo restores to the one it leaves, and then say where
 * the undo has landed. */
static void report_change(app *a, int undo)
{
    const plan *p = a->p;
    int n = 0;
    for (int i = 0; i < plan_net(p)->n_layers; i++) {
        a->prev.changed[i] = !config_equal(&a->prev.configs[i], plan_config(p, i, plan_best(p)[i]));
        n += a->prev.changed[i];
    }
    double t0 = a->prev.total_ms, t1 = plan_best_eval(p)->total_ms;
    double i0 = a->prev.ips, i1 = plan_best_eval(p)->images_per_s;
    char layers[160], back[64] = "";
    int used = plan_best_eval(p)->gpus_used, batch_changed = a->prev.batch != plan_batch(p);
    if (undo) {
        if (batch_changed) snprintf(back, sizeof back, "undone: back to %.0f img/s, ", i1);
        else snprintf(back, sizeof back, "undone: back to %.1f ms/step, ", t1);
        double t = t0, i = i0;
        t0 = t1, t1 = t, i0 = i1, i1 = i;
    }
    if (used > 0 && used < plan_gpus(p))
        snprintf(layers, sizeof layers, "%s%d layer%s changed config, %d of the %d GPUs used (%.2f s)", back, n,
                 n == 1 ? "" : "s", used, plan_gpus(p), a->prev.rebuild_s);
    else
        snprintf(layers, sizeof layers, "%s%d layer%s changed config (%.2f s)", back, n, n == 1 ? "" : "s",
                 a->prev.rebuild_s);
    if (batch_changed) {
        /* a step of another batch is not comparable: lead with throughput */
        double pct = i0 > 0 ? (i1 - i0) / i0 * 100 : 0;
        app_set_status(a, 0, "%s: %.0f %s %.0f img/s (%+.1f%%), %.1f %s %.1f ms/step, %s", a->pending.what, i0,
                       G->arrow_right, i1, pct, t0, G->arrow_right, t1, layers);
    } else {
        double pct = t0 > 0 ? (t1 - t0) / t0 * 100 : 0;
        app_set_status(a, 0, "%s: %.1f %s %.1f ms/step (%+.1f%%), %.0f %s %.0f img/s, %s", a->pending.what, t0,
                       G->arrow_right, t1, pct, i0, G->arrow_right, i1, layers);
    }
}

void app_pipeline_text(const app *a, char *buf, size_t n)
{
    plan_pipeline_summary s;
    if (!plan_pipeline_info(a->p, &s)) {
        snprintf(buf, n, "%s", "");
        return;
    }
    char v[24] = "";
    if (s.vp > 1) snprintf(v, sizeof v, ", v %d", s.vp);
    snprintf(buf, n, "%d stages x %d (%s%s%s)", s.stages, s.microbatches, s.megatron ? "Megatron, " : "",
             s.schedule_name, v);
}

/* The status after a what-if on a pipelined plan, or one that changed the
 * pipeline: the pipelined step and its bubble beside the one-stage
 * optimum's (report_change's line, which is kept otherwise). */
static void report_pipeline(app *a, const plan_pipeline_summary *was)
{
    plan_pipeline_summary now;
    int piped = plan_pipeline_info(a->p, &now);
    int changed = was->stages != now.stages || was->microbatches != now.microbatches ||
                  was->schedule != now.schedule || was->vp != now.vp || was->megatron != now.megatron;
    if (!piped && !changed) return;
    double one = plan_best_eval(a->p)->total_ms;
    if (!piped) {
        app_set_status(a, 0, "%s: one stage (not pipelined): %.2f ms/step, the pipeline's was %.2f ms", a->pending.what,
                       one, was->step_ms);
        return;
    }
    char text[96];
    app_pipeline_text(a, text, sizeof text);
    double ips = now.step_ms > 0 ? plan_batch(a->p) * 1000.0 / now.step_ms : 0;
    char line[400];
    snprintf(line, sizeof line, "pipelined, %s: %.2f ms/step (one stage %.2f, %+.1f%%), bubble %.1f%%, %.0f img/s%s",
             text, now.step_ms, one, one > 0 ? (now.step_ms - one) / one * 100 : 0, 100 * now.bubble_fraction, ips,
             now.fits ? "" : ", over the memory limit");
    if (changed) {
        app_set_status(a, !now.fits, "%s: %s", a->pending.what, line);
    } else {
        size_t k = strlen(a->status);
        snprintf(a->status + k, sizeof a->status - k, "; %s", line);
    }
}

void app_perform(app *a, action act)
{
    if (act != ACT_REBUILD && act != ACT_RESEARCH && act != ACT_RESYNC) return;
    app_explain_stop(a); /* its thread reads the plan about to change */
    if (a->pending.open_net && a->pending.perform) { /* another network: a new plan, not a change of this one */
        a->pending.perform(a);
        return;
    }
    lw_error err = {0};
    double sim_before = app_shown_refined(a) ? NAN : app_sim_step_ms(a);
    unsigned char *was_held = held_now(a->p);
    plan_pipeline_summary pipe_before;
    plan_pipeline_info(a->p, &pipe_before);
    double t0 = lw_now();
    int rc = plan_apply(a->p, &a->pending.change, &err);
    a->prev.rebuild_s = lw_now() - t0;
    change_reset(a);
    char *opened = a->pending.opened_cluster;
    a->pending.opened_cluster = NULL;
    if (rc == 0 && opened) { /* a cluster file opened (O): R resets to it from now on */
        cluster_free(a->src.cluster_loaded);
        a->src.cluster_loaded = cluster_clone(plan_cluster(a->p));
        free(a->src.cluster_name);
        a->src.cluster_name = opened;
    } else {
        free(opened);
    }
    if (rc != 0) {
        free(was_held);
        a->hist.move = 0;
        /* the plan is as it was: the previous setting and its optimum */
        if (strcmp(err.msg, "cancelled") == 0)
            app_set_status(a, 0, "%s: cancelled (kept the previous setting)", a->pending.what);
        else
            app_set_status(a, 1, "%s: %s (kept the previous setting)", a->pending.what, err.msg);
        app_invalidate(a);
        return;
    }
    char note[256], warn[160];
    pins_note(a, was_held, note, sizeof note); /* before the history moves */
    free(was_held);
    int undo = a->hist.move < 0; /* history_record clears it */
    if (history_record(&a->hist, a->p, a->pending.what, a->src.cluster_loaded, a->src.cluster_name)) {
        /* an undo or redo: the state's reset target (a cluster file opened with O) is the session's again */
        const cluster *to;
        const char *name;
        history_reset_target(&a->hist, &to, &name);
        cluster *copy = to ? cluster_clone(to) : NULL;
        cluster_free(a->src.cluster_loaded);
        a->src.cluster_loaded = copy;
        char *nm = name ? lw_strdup(name) : NULL;
        free(a->src.cluster_name);
        a->src.cluster_name = nm;
    }
    report_change(a, undo);
    report_pipeline(a, &pipe_before);
    memory_warning(a, warn, sizeof warn);
    if (note[0] || warn[0]) {
        size_t k = strlen(a->status);
        snprintf(a->status + k, sizeof a->status - k, "%s%s", note, warn);
        a->status_error = warn[0] != 0;
    }
    app_invalidate(a);
    app_shown_whatif(a, sim_before);
    if (a->prefetch && (act == ACT_REBUILD || act == ACT_RESYNC)) app_prefetch_next(a);
}

/* The settings a batch of per_gpu per GPU means (1 to PLAN_MAX_BATCH_PER_GPU): what the batch
 * keys (> and <) and the batch prompt ask for. */
static plan_settings batch_setting(const app *a, long per_gpu)
{
    plan_settings s = *plan_run_settings(a->p);
    if (per_gpu < 1) per_gpu = 1;
    if (per_gpu > PLAN_MAX_BATCH_PER_GPU) per_gpu = PLAN_MAX_BATCH_PER_GPU;
    if (s.global_batch > 0)
        s.global_batch = per_gpu * plan_gpus(a->p);
    else
        s.batch_per_gpu = per_gpu;
    return s;
}

screen_id app_base_screen(const app *a)
{
    return app_screens[a->screen]->overlay ? a->prev_screen : a->screen;
}

/* The screen shown (or under an overlay) builds other clusters ahead. */
static int base_prefetches(const app *a)
{
    return app_screens[app_base_screen(a)]->prefetch != NULL;
}

/* While the person reads the new screen, build in the background what the
 * next what-if keys would ask for: what the screen's prefetch hook names
 * (on the cluster screen, the selected field doubled and halved: Right,
 * Left); then the next GPU count up (or
 * down at the top), the batch doubled and halved, the GPU count the other
 * way, as far as PLAN_PREFETCH_MAX goes. A large model (over
 * PREFETCH_ALL_ENTRIES transfer table entries, 8 bytes each) gets only the
 * first, to bound the memory. */
#define PREFETCH_ALL_ENTRIES 4000000L

void app_prefetch_next(app *a)
{
    plan *p = a->p;
    plan_prefetch_item next[6]; /* two field neighbours, two GPU counts, two batches */
    cluster *edited[2] = {NULL, NULL};
    const screen_ops *base = app_screens[app_base_screen(a)];
    int n = 0, ne = base->prefetch ? base->prefetch(a, edited) : 0;
    for (int i = 0; i < ne; i++) {
        next[n] = (plan_prefetch_item){*plan_run_settings(p), edited[i]};
        /* as an edit does: a smaller cluster keeps as many GPUs as it has */
        if (next[n].set.gpus > cluster_gpus(edited[i])) next[n].set.gpus = cluster_gpus(edited[i]);
        n++;
    }
    int up = app_gpu_step(a, +1), down = app_gpu_step(a, -1);
    int first = up != plan_gpus(p) ? up : down, other = first == up ? down : up;
    long b = app_batch_per_gpu(a);
    if (first != plan_gpus(p)) {
        next[n] = (plan_prefetch_item){*plan_run_settings(p), NULL};
        next[n++].set.gpus = first;
    }
    if (b < PLAN_MAX_BATCH_PER_GPU) next[n++] = (plan_prefetch_item){batch_setting(a, b * 2), NULL};
    if (b > 1) next[n++] = (plan_prefetch_item){batch_setting(a, b / 2), NULL};
    if (other != plan_gpus(p) && other != first) {
        next[n] = (plan_prefetch_item){*plan_run_settings(p), NULL};
        next[n++].set.gpus = other;
    }
    if (plan_tx_entries(p) > PREFETCH_ALL_ENTRIES && n > 1) n = 1;
    if (n > PLAN_PREFETCH_MAX) n = PLAN_PREFETCH_MAX;
    if (n) plan_prefetch_list(p, next, n);
    cluster_free(edited[0]);
    cluster_free(edited[1]);
}

action app_set_gpus(app *a, int gpus)
{
    int total = cluster_gpus(plan_cluster(a->p));
    if (gpus < 1) gpus = 1;
    if (gpus > total) gpus = total;
    if (gpus == plan_gpus(a->p)) {
        app_set_status(a, 0, "already at %d GPU%s (the cluster has %d)", gpus, gpus == 1 ? "" : "s", total);
        return ACT_REDRAW;
    }
    char what[64];
    snprintf(what, sizeof what, "%d%s%d GPUs", plan_gpus(a->p), G->arrow_right, gpus);
    app_whatif_begin(a, what);
    app_change_settings(a)->gpus = gpus;
    return ACT_REBUILD;
}

action app_set_pipeline(app *a, const plan_pipe_settings *q)
{
    plan_pipe_settings off = {0};
    if (q->stages <= 1) q = &off;
    char was[96], what[160];
    app_pipeline_text(a, was, sizeof was);
    if (q->stages <= 1 && !was[0]) {
        app_set_status(a, 0, "not pipelined already (| 4 8 1f1b: 4 stages, 8 micro-batches)");
        return ACT_REDRAW;
    }
    char sched[48] = "";
    if (q->schedule) snprintf(sched, sizeof sched, " %s", plan_schedule_name(q->schedule));
    char m[32] = "";
    if (q->microbatches) snprintf(m, sizeof m, " x %d", q->microbatches);
    if (q->stages > 1) snprintf(what, sizeof what, "pipeline %d stages%s%s", q->stages, m, sched);
    else snprintf(what, sizeof what, "pipeline off");
    app_whatif_begin(a, what);
    a->pending.pipe = *q;
    a->pending.change.pipe = &a->pending.pipe;
    return ACT_REBUILD;
}

/* Next GPU count up or down: powers of two, and the cluster's total. */
int app_gpu_step(const app *a, int dir)
{
    int cur = plan_gpus(a->p), total = cluster_gpus(plan_cluster(a->p));
    int g;
    if (dir > 0) {
        g = 1;
        while (g <= cur) g *= 2;
        if (g > total) g = total;
    } else {
        g = 1;
        while (g * 2 < cur) g *= 2;
        if (cur <= 1) g = 1;
    }
    return g;
}

action app_set_batch(app *a, long per_gpu)
{
    const plan_settings *s = plan_run_settings(a->p);
    plan_settings n = batch_setting(a, per_gpu);
    char what[96];
    if (s->global_batch > 0) {
        /* a fixed global batch given on the command line: scale that one */
        if (n.global_batch == s->global_batch) return ACT_NONE;
        snprintf(what, sizeof what, "global batch %ld%s%ld", s->global_batch, G->arrow_right, n.global_batch);
    } else {
        long cur = s->batch_per_gpu > 0 ? s->batch_per_gpu : DEFAULT_BATCH_PER_GPU;
        if (n.batch_per_gpu == cur) {
            app_set_status(a, 0, "batch already %ld per GPU", cur);
            return ACT_REDRAW;
        }
        snprintf(what, sizeof what, "batch %ld%s%ld per GPU", cur, G->arrow_right, n.batch_per_gpu);
    }
    app_whatif_begin(a, what);
    *app_change_settings(a) = n;
    app_invalidate_settings(a);
    return ACT_REBUILD;
}

long app_batch_per_gpu(const app *a)
{
    const plan_settings *s = plan_run_settings(a->p);
    if (s->global_batch > 0) return s->global_batch / (plan_gpus(a->p) > 0 ? plan_gpus(a->p) : 1);
    return s->batch_per_gpu > 0 ? s->batch_per_gpu : DEFAULT_BATCH_PER_GPU;
}

action app_toggle_sync(app *a)
{
    return app_set_sync(a, (sync_scheme)((plan_cluster(a->p)->sync + 1) % SYNC__COUNT));
}

action app_set_sync(app *a, sync_scheme to)
{
    sync_scheme from = plan_cluster(a->p)->sync;
    char what[96];
    snprintf(what, sizeof what, "sync %s%s%s", sync_scheme_name(from), G->arrow_right, sync_scheme_name(to));
    app_whatif_begin(a, what);
    a->pending.change.sync_set = 1;
    a->pending.change.sync = to;
    app_invalidate_settings(a);
    return ACT_RESYNC;
}

action app_toggle_folds(app *a)
{
    int to = !plan_run_settings(a->p)->no_fold;
    app_whatif_begin(a, to ? "search: Algorithm 1 only, no folds (the paper's)" : "search: with folds");
    app_change_settings(a)->no_fold = to;
    app_invalidate_settings(a);
    return ACT_REBUILD;
}

action app_cycle_memory_limit(app *a)
{
    const plan *p = a->p;
    double gpu = plan_cluster(p)->gpu.memory_gib * 1073741824.0, cur = plan_memory_limit(plan_memory_settings_of(p), plan_cluster(p));
    /* the GPU's memory -> none -> 3/4 -> 1/2 -> the GPU's memory */
    plan_memory_settings m = *plan_memory_settings_of(p);
    if (!isfinite(cur)) m.limit = 0.75 * gpu;
    else if (cur > 0.74 * gpu && cur < 0.76 * gpu) m.limit = 0.5 * gpu;
    else if (cur == gpu) m.limit = -1;
    else m.limit = 0;
    char what[96], from[32], to[32];
    double next = plan_memory_limit(&m, plan_cluster(p));
    snprintf(from, sizeof from, isfinite(cur) ? "%.1f GiB" : "none", cur / 1073741824.0);
    snprintf(to, sizeof to, isfinite(next) ? "%.1f GiB" : "none", next / 1073741824.0);
    snprintf(what, sizeof what, "memory limit %s%s%s", from, G->arrow_right, to);
    app_whatif_begin(a, what);
    a->pending.mem = m;
    a->pending.change.mem = &a->pending.mem;
    return ACT_RESEARCH;
}

action app_cycle_precision(app *a)
{
    const cluster *c = plan_cluster(a->p);
    precision from = c->precision, to = from;
    gpu_consts k;
    do
        to = (precision)((to + 1) % PREC__COUNT);
    while (to != from && cluster_gpu_consts(c, to, &k) != 0);
    if (to == from) {
        app_set_status(a, 0, "%s gives figures for %s only", c->gpu.name, precision_name(from));
        return ACT_REDRAW;
    }
    char what[160];
    snprintf(what, sizeof what, "precision %s%s%s", precision_name(from), G->arrow_right, precision_name(to));
    const profile *pr = plan_profile(a->p); /* measured at one precision: the model leaves it out at another */
    if (pr && pr->precision >= 0 && (pr->precision == (int)from) != (pr->precision == (int)to)) {
        size_t n = strlen(what);
        snprintf(what + n, sizeof what - n, pr->precision == (int)to ? " (the %s profile applies again)"
                                                                     : " (the %s profile is not used)",
                 precision_name((precision)pr->precision));
    }
    app_whatif_begin(a, what);
    app_change_cluster(a)->precision = to;
    app_invalidate_settings(a);
    return ACT_REBUILD;
}

action app_pin(app *a, int li, int k)
{
    plan *p = a->p;
    if (li < 0 || li >= plan_net(p)->n_layers || !plan_has_model(p)) return ACT_NONE;
    char what[200], cb[64];
    if (k < 0) {
        if (plan_pin_held(p, li)) { /* the plan drops it without a search */
            lw_error err = {0};
            app_explain_stop(a);
            plan_apply(p, &(plan_change){.n_pins = 1, .pins = &(plan_pin){li, -1}}, &err);
            app_set_status(a, 0, "unpin %s: its pin was on hold; dropped", plan_net(p)->layers[li].name);
            return ACT_REDRAW;
        }
        if (plan_pinned(p)[li] < 0) {
            app_set_status(a, 0, "%s is not pinned", plan_net(p)->layers[li].name);
            return ACT_REDRAW;
        }
        snprintf(what, sizeof what, "unpin %s", plan_net(p)->layers[li].name);
    } else {
        plan_format_config(p, li, plan_config(p, li, k), cb, sizeof cb);
        snprintf(what, sizeof what, "pin %s = %s", plan_net(p)->layers[li].name, cb);
    }
    app_whatif_begin(a, what);
    a->pending.pin = (plan_pin){li, k};
    a->pending.change.n_pins = 1;
    a->pending.change.pins = &a->pending.pin;
    return ACT_RESEARCH;
}

action app_undo(app *a, int dir)
{
    char what[200];
    plan_change c;
    if (history_step(&a->hist, a->p, dir, &c, what, sizeof what) != 0) {
        app_set_status(a, 0, "%s", what);
        return ACT_REDRAW;
    }
    int move = a->hist.move;
    app_whatif_begin(a, what);
    a->pending.change = c;
    a->hist.move = move;
    if (c.set || c.cl) {
        app_invalidate_settings(a);
        return ACT_REBUILD;
    }
    if (c.sync_set) {
        app_invalidate_settings(a);
        return ACT_RESYNC;
    }
    return ACT_RESEARCH;
}

action app_clear_pins(app *a)
{
    int n = plan_pin_count(a->p), held = app_pins_held(a);
    if (!n) {
        lw_error err = {0};
        if (held) {
            app_explain_stop(a);
            plan_apply(a->p, &(plan_change){.clear_pins = 1}, &err); /* no search: none is pinned */
        }
        if (held) app_set_status(a, 0, "dropped %d pin%s on hold", held, held == 1 ? "" : "s");
        else app_set_status(a, 0, "no layer is pinned");
        return ACT_REDRAW;
    }
    char what[64];
    snprintf(what, sizeof what, "clear %d pin%s", n, n == 1 ? "" : "s");
    app_whatif_begin(a, what);
    a->pending.change.clear_pins = 1;
    return ACT_RESEARCH;
}

/* ---- screens and background work ------------------------------------- */

void app_open_screen(app *a, screen_id s)
{
    if (s == a->screen) return;
    if (s == SCR_HELP) {
        /* over whatever is shown: help's keys are those of the screen it
         * was opened over, an overlay (why not?, explain, compare) too */
        a->help_from = a->screen;
        if (!app_screens[a->screen]->overlay) a->prev_screen = a->screen;
        a->screen = SCR_HELP;
        if (app_screens[s]->enter) app_screens[s]->enter(a);
        return;
    }
    if (a->screen == SCR_HELP && a->help_from != SCR_HELP && app_screens[a->help_from]->overlay &&
        app_screens[a->help_from]->leave)
        app_screens[a->help_from]->leave(a); /* help was over it: it closes too */
    int prefetched = base_prefetches(a);
    if (!app_screens[a->screen]->overlay) a->prev_screen = a->screen;
    if (app_screens[a->screen]->leave) app_screens[a->screen]->leave(a);
    a->screen = s;
    if (app_screens[s]->enter) app_screens[s]->enter(a);
    /* the cluster screen's Left/Right keys ask for other settings than + - > < */
    if (a->prefetch && prefetched != base_prefetches(a)) app_prefetch_next(a);
}

void app_close_overlay(app *a)
{
    if (!app_screens[a->screen]->overlay) return;
    if (app_screens[a->screen]->leave) app_screens[a->screen]->leave(a);
    /* help over an overlay closes both, back to the tab beneath (overlays
     * are one level deep) */
    if (a->screen == SCR_HELP && app_screens[a->help_from]->overlay && app_screens[a->help_from]->leave)
        app_screens[a->help_from]->leave(a);
    a->screen = a->prev_screen;
}

/* Background work: the shown strategy's simulation and F's search first
 * (shown.c), then the screen's own. */
int app_busy(const app *a)
{
    const screen_ops *o = app_screens[a->screen];
    return app_shown_busy(a) || (o->busy ? o->busy(a) : 0);
}

int app_waiting(const app *a)
{
    const screen_ops *o = app_screens[a->screen];
    /* the shown strategy's simulation waits a poll at most; F's search should not */
    return !app_refining(a) && app_busy(a) && o->waiting && o->waiting(a);
}

int app_idle(app *a, double budget_s)
{
    const screen_ops *o = app_screens[a->screen];
    int screen_busy = o->busy && o->busy(a);
    if (app_shown_busy(a)) app_shown_idle(a, screen_busy ? budget_s / 2 : budget_s);
    if (screen_busy && o->idle) o->idle(a, app_shown_busy(a) ? budget_s / 2 : budget_s);
    return app_busy(a);
}

/* ---- export ---------------------------------------------------------------- */

static export_view current_view(const app *a, int *step)
{
    *step = -1;
    const screen_ops *o = app_screens[a->screen];
    return o->export_view ? (export_view)o->export_view(a, step) : VIEW_STRATEGY;
}

void app_export_default(const app *a, int json, char *buf, size_t n)
{
    int step;
    export_view v = current_view(a, &step);
    const screen_ops *o = app_screens[a->screen];
    if (json) {
        snprintf(buf, n, "layerwise-%s-%dgpu-strategy.json", plan_net(a->p)->name, plan_gpus(a->p));
    } else if (o->export_name) {
        o->export_name(a, buf, n);
    } else if (v == VIEW_REDUCED) {
        snprintf(buf, n, "layerwise-%s-%dgpu-reduced-step%d.svg", plan_net(a->p)->name, plan_gpus(a->p), step);
    } else {
        snprintf(buf, n, "layerwise-%s-%dgpu-%s.svg", plan_net(a->p)->name, plan_gpus(a->p), export_view_name(v));
    }
}

/* A path in a status line is shortened in its middle to this many cells,
 * so that an error's reason stays within the line's rows (a message
 * names the path and often its directory: at 80 columns, three rows). */
#define STATUS_PATH_CELLS 60

/* msg with each occurrence of path, and of its directory, shortened in the
 * middle (ui_fit_mid) to STATUS_PATH_CELLS. */
static void status_paths(const char *msg, const char *path, char *out, size_t n)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 0, path);
    const char *long_ones[2] = {path, dir};
    char cur[1024];
    snprintf(cur, sizeof cur, "%s", msg);
    for (int k = 0; k < 2; k++) {
        const char *s = long_ones[k];
        size_t len = strlen(s);
        if (ui_width(s) <= STATUS_PATH_CELLS) continue;
        char fit[STATUS_PATH_CELLS * 4 + 8], next[sizeof cur];
        ui_fit_mid(s, STATUS_PATH_CELLS, fit, sizeof fit);
        lw_buf b = {0};
        const char *at = cur, *hit;
        while ((hit = strstr(at, s)) != NULL) {
            lw_buf_printf(&b, "%.*s%s", (int)(hit - at), at, fit);
            at = hit + len;
        }
        lw_buf_printf(&b, "%s", at);
        snprintf(next, sizeof next, "%s", b.s ? b.s : "");
        lw_buf_free(&b);
        memcpy(cur, next, sizeof cur);
    }
    snprintf(out, n, "%s", cur);
}

/* The TUI never waits on an export: a FIFO that no process reads would
 * hold open() (and every key with it) for good, so it is tried without
 * blocking first; and a terminal is the screen the TUI draws on. Other
 * FIFOs and devices are written in place, as the CLI writes them. */
static int export_target_ok(const char *path, lw_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) return 0;
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENXIO)
            return lw_fail(err, 1, "%s is a FIFO no process is reading (the TUI does not wait for one): not written",
                           path);
        return 0; /* the write says why */
    }
    int tty = isatty(fd);
    close(fd);
    if (tty) return lw_fail(err, 2, "%s is a terminal: the TUI does not write over its own screen", path);
    return 0;
}

int app_export(app *a, const char *path)
{
    lw_error err = {0};
    plan *p = a->p;
    if (!path || !path[0]) {
        app_set_status(a, 1, "export: no file name given");
        return -1;
    }
    if (!plan_search_result(p)) {
        app_set_status(a, 1, "export: there is no strategy to export");
        return -1;
    }
    if (export_target_ok(path, &err) != 0) {
        app_set_status(a, 1, "export: %s", err.msg);
        return -1;
    }
    const screen_ops *o = app_screens[a->screen];
    const char *what = NULL;
    int rc = o->export_file ? o->export_file(a, path, &what, &err) : 1;
    if (rc != 1) {
        /* the screen's own drawing */
    } else if (lw_ends_with_ci(path, ".json")) {
        int pins = plan_pin_count(p);
        const char *algo = app_shown_refined(a) ? "elimination, refined under the simulator"
                           : pins                 ? "elimination (pinned)"
                                                  : "elimination";
        /* a pipelined plan writes its pipeline (layerwise-strategy/2),
         * which eval -s and simulate -s read back */
        rc = plan_write_strategy(p, app_shown_configs(a), app_shown_eval(a), algo, path, NULL, &err);
        what = plan_stage_count(p) > 1 ? "pipelined strategy JSON (layerwise-strategy/2)" : "strategy JSON";
    } else {
        int step;
        export_view v = current_view(a, &step);
        rc = export_diagram(p, v, step, app_shown_configs(a), path, &err);
        what = v == VIEW_GRAPH ? "graph diagram" : v == VIEW_REDUCED ? "reduced-graph diagram" : "strategy diagram";
    }
    if (rc != 0) {
        char msg[sizeof err.msg], shown[STATUS_PATH_CELLS * 4 + 8];
        /* the engine's message starts with the path the status names
         * already: said once, the reason keeps its room (issue 36, bug 1) */
        const char *why = err.msg[0] ? err.msg : "unknown error";
        size_t pl = strlen(path);
        if (strncmp(why, path, pl) == 0 && why[pl] == ':' && why[pl + 1] == ' ') why += pl + 2;
        status_paths(why, path, msg, sizeof msg);
        ui_fit_mid(path, STATUS_PATH_CELLS, shown, sizeof shown);
        app_set_status(a, 1, "export to %s failed: %s", shown, msg);
        return -1;
    }
    char full[PATH_MAX];
    const char *shown = realpath(path, full) ? full : path;
    app_set_status(a, 0, "wrote %s: %s", what, shown);
    return 0;
}
