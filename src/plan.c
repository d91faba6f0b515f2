/*
 * plan: one what-if setting end to end, and plan_apply, the one call that
 * changes it. Data files: data.c; background builds: prefetch.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "plan_internal.h"

#include "cost_sharding.h"
#include "pipeline.h"
#include "prefetch.h"

/* A probe's question (plan_probe_pair, plan_probe_post) by value. */
typedef struct plan_probe_q {
    int gpus;
    long batch;
    const cluster *cl;       /* borrowed: the caller's or the plan's */
    plan_memory_settings ms; /* the plan's (searched within explain_bounds) */
    int limited;             /* plan_limit_applies: asked within ms's limit */
    config *pins;            /* [n_layers] */
} plan_probe_q;

#include <math.h>
#include <stdlib.h>
#include <string.h>

long plan_batch_for(const plan_settings *s, int gpus)
{
    if (s->global_batch > 0) return s->global_batch;
    return (s->batch_per_gpu > 0 ? s->batch_per_gpu : DEFAULT_BATCH_PER_GPU) * (long)gpus;
}

/* The plan's background worker (prefetch.h), made on first use. */
static prefetcher *prefetcher_of(plan *p)
{
    if (!p->prefetch) p->prefetch = prefetcher_new(p->net, p->prof);
    return p->prefetch;
}

static void drop_results(plan *p)
{
    search_result_free(p->sr);
    p->sr = NULL;
    cg_free(p->cg);
    p->cg = NULL;
    strategy_eval_free(&p->best_eval);
}

/* The search's graph of model m with pins applied (pins[i] >= 0: every
 * other config of layer i costs +inf), layer free_layer (-1: none) left
 * free whatever its pin. */
static cost_graph *graph_with_pins(const cost_model *m, const int *pins, int free_layer)
{
    cost_graph *g = cost_model_graph(m);
    for (int i = 0; i < m->n_layers; i++) {
        if (pins[i] < 0 || i == free_layer) continue;
        for (int k = 0; k < g->n_configs[i]; k++)
            if (k != pins[i]) g->node_cost[i][k] = HUGE_VAL;
    }
    return g;
}

/* ---- memory ---- */

double plan_memory_limit(const plan_memory_settings *s, const cluster *cl)
{
    if (s->limit < 0) return HUGE_VAL;
    if (s->limit > 0) return s->limit;
    return cl->gpu.memory_gib * 1073741824.0;
}

mem_table *plan_mem_table(const cost_model *m)
{
    int L = m->n_layers;
    int **tasks = lw_malloc(sizeof(int *) * (size_t)(L ? L : 1));
    for (int i = 0; i < L; i++) {
        tasks[i] = lw_malloc(sizeof(int) * (size_t)m->n_configs[i]);
        for (int k = 0; k < m->n_configs[i]; k++) tasks[i][k] = config_tasks(&m->configs[i][k]);
    }
    mem_table *t = mt_new(L, m->n_configs, m->gpus, tasks);
    for (int i = 0; i < L; i++) {
        for (int k = 0; k < m->n_configs[i]; k++)
            for (int j = 0; j < tasks[i][k]; j++)
                mt_at(t, i, k)[j] = cost_memory_task(m, i, &m->configs[i][k], j, NULL);
        free(tasks[i]);
    }
    free(tasks);
    return t;
}

static void memory_free(plan_memory *m)
{
    free(m->unconstrained);
    memset(m, 0, sizeof *m);
}

/* The search under the limit that explain asks of each config: bounded by
 * counts, not seconds, so that the same question gets the same answer on
 * any machine and under any load; and without the smallest-peak hint, as
 * explain asks only what fits. */
static void explain_bounds(memsearch_options *o)
{
    memsearch_options_init(o);
    o->max_labels = PLAN_EXPLAIN_MEM_LABELS;
    o->max_searches = PLAN_EXPLAIN_MEM_SEARCHES;
    o->no_min_peak = 1;
}

/* From the paper's optimum sr of graph cg (pins applied) on model cm: the
 * fastest strategy within the setting's memory limit, in best (n_layers),
 * and what is known of it in *mo (caller frees with memory_free). The
 * search under the limit runs only when the paper's optimum does not fit,
 * within bounds (NULL: the setting's time budget, the plan's own search). */
static int memory_step(const plan_memory_settings *set, const cluster *cl, const cost_model *cm, const cost_graph *cg,
                       const search_result *sr, const memsearch_options *bounds, const atomic_int *cancel, int *best,
                       plan_memory *mo, lw_error *err)
{
    int L = cm->n_layers, G = cm->gpus;
    memset(mo, 0, sizeof *mo);
    mo->limit_bytes = plan_memory_limit(set, cl);
    mo->unconstrained = lw_malloc(sizeof(int) * (size_t)(L ? L : 1));
    memcpy(mo->unconstrained, sr->config, sizeof(int) * (size_t)L);
    memcpy(best, sr->config, sizeof(int) * (size_t)L);
    mo->unconstrained_ms = sr->cost;
    mo->unconstrained_peak = cost_memory(cm, sr->config, NULL);
    mo->fits = mo->proven_optimal = 1;
    mo->lower_bound_ms = sr->cost;
    if (mo->unconstrained_peak <= mo->limit_bytes) return 0;
    mo->constrained = 1;
    mem_table *t = plan_mem_table(cm);
    double *room = lw_malloc(sizeof(double) * (size_t)G);
    for (int g = 0; g < G; g++) room[g] = mo->limit_bytes - cost_fixed_bytes(cm);
    memsearch_options o;
    if (bounds) {
        o = *bounds;
    } else {
        memsearch_options_init(&o);
        o.time_limit_s = set->time_s > 0 ? set->time_s : PLAN_MEMSEARCH_TIME_S;
    }
    o.cancel = cancel;
    double t0 = lw_now();
    memsearch_result *r = memsearch_run(cg, t, room, &o);
    mo->ms = (lw_now() - t0) * 1e3;
    mo->subproblems = r->bb_nodes;
    mo->searches = r->searches;
    int rc = 0;
    if (r->status == MEMSEARCH_FAILED) {
        rc = r->failure == SEARCH_CANCELLED
                 ? lw_fail(err, 1, "cancelled")
                 : lw_fail(err, 1, "search under the memory limit failed: %s", search_status_message(r->failure));
    } else if (r->config) {
        memcpy(best, r->config, sizeof(int) * (size_t)L);
        mo->proven_optimal = r->proven_optimal;
        mo->lower_bound_ms = r->proven_optimal ? r->cost : (r->lower_bound > sr->cost ? r->lower_bound : sr->cost);
    } else { /* nothing fits (or none found in time): keep the paper's optimum, and say how small it can get */
        mo->fits = mo->proven_optimal = 0;
        mo->lower_bound_ms = r->status == MEMSEARCH_INFEASIBLE ? HUGE_VAL
                                                               : (r->lower_bound > sr->cost ? r->lower_bound : sr->cost);
        mo->min_peak_bytes = r->min_peak + cost_fixed_bytes(cm);
        mo->min_peak_lower = r->min_peak_lower + cost_fixed_bytes(cm);
    }
    memsearch_result_free(r);
    free(room);
    mt_free(t);
    return rc;
}

/* 1 unless even the most memory every layer can take fits the limit
 * (bytes per GPU, +inf: none) on model m. */
static int limit_may_bind(const cost_model *m, double limit)
{
    if (!isfinite(limit)) return 0;
    double *most = lw_calloc((size_t)m->gpus, sizeof(double));
    for (int i = 0; i < m->n_layers; i++) {
        for (int g = 0; g < m->gpus; g++) {
            double hi = 0;
            for (int k = 0; k < m->n_configs[i]; k++)
                if (g < config_tasks(&m->configs[i][k])) {
                    double b = cost_memory_task(m, i, &m->configs[i][k], g, NULL);
                    if (b > hi) hi = b;
                }
            most[g] += hi;
        }
    }
    int may = 0;
    for (int g = 0; g < m->gpus && !may; g++) may = most[g] + cost_fixed_bytes(m) > limit;
    free(most);
    return may;
}

double plan_min_peak(const plan *p, double time_s, int *cfg, double *lower)
{
    mem_table *t = plan_mem_table(p->cm);
    cost_graph *g = graph_with_pins(p->cm, p->pinned, -1);
    int *x = lw_malloc(sizeof(int) * (size_t)(p->net->n_layers + 1));
    double lo, peak = memsearch_min_peak(g, t, time_s, x, &lo);
    if (cfg) memcpy(cfg, x, sizeof(int) * (size_t)p->net->n_layers);
    if (lower) *lower = lo + cost_fixed_bytes(p->cm);
    free(x);
    cg_free(g);
    mt_free(t);
    return peak + cost_fixed_bytes(p->cm);
}

/* Why a search returned nothing, in numbers a person can read: how big the
 * final step was, and which limit it is over. */
static int search_failure(const search_info *info, lw_error *err)
{
    if (info->status == SEARCH_CANCELLED) return lw_fail(err, 1, "cancelled");
    if (info->status == SEARCH_OUT_OF_MEMORY) /* during the eliminations: what is left says nothing */
        return lw_fail(err, 1, "search failed: out of memory for its elimination tables (fewer GPUs need fewer)");
    char space[64], why[160] = "";
    if (isfinite(info->final_space)) snprintf(space, sizeof space, "%.3g combinations", info->final_space);
    else snprintf(space, sizeof space, "more than 1e308 combinations");
    if (info->status == SEARCH_TOO_LARGE && info->ve_entries > SEARCH_DEFAULT_TABLE_LIMIT)
        snprintf(why, sizeof why, "; variable elimination would need over %.3g table entries, the limit is %.0f",
                 info->ve_entries, SEARCH_DEFAULT_TABLE_LIMIT);
    else if (info->status == SEARCH_TOO_LARGE && info->n_left > SEARCH_MAX_VE_NODES)
        snprintf(why, sizeof why, "; the final step takes at most %d layers", SEARCH_MAX_VE_NODES);
    return lw_fail(err, 1, "search failed: %s (%d layers left after the eliminations, %s%s)",
                   search_status_message(info->status), info->n_left, space, why);
}

/* Searches model m under pins: the graph and result, or NULL with err set
 * (nothing left to free). */
static search_result *search_pinned(const plan *p, const plan_settings *set, const cost_model *m, const int *pins,
                                    cost_graph **cg, double *ms, lw_error *err)
{
    *cg = graph_with_pins(m, pins, -1);
    ((plan *)p)->searches++; /* a count for tests (plan_search_count), not part of the result */
    search_options opt;
    search_options_init(&opt);
    opt.cancel = p->cancel;
    opt.fold = !set->no_fold;
    opt.keep_tables = 0; /* plan_step_tables, where wanted */
    search_info info;
    double t0 = lw_now();
    search_result *sr = search_run_with(*cg, &opt, p->progress, p->progress_user, &info);
    *ms = (lw_now() - t0) * 1e3;
    if (!sr) {
        cg_free(*cg);
        *cg = NULL;
        search_failure(&info, err);
    }
    return sr;
}

/* Makes a searched result the plan's: its graph, result and pins, and the
 * model when cm is not NULL (else the plan's own stays). */
static void commit(plan *p, cost_model *cm, cost_graph *cg, search_result *sr, const int *pins, const config *want,
                   double search_ms, int adopted, const int *best, plan_memory *mo, const plan_memory_settings *ms)
{
    drop_results(p);
    if (cm) {
        cost_model_free(p->cm);
        p->cm = cm;
        p->gpus = cm->gpus;
        p->batch = cm->batch;
        p->from_prefetch = adopted;
    }
    p->cg = cg;
    p->sr = sr;
    memcpy(p->pinned, pins, sizeof(int) * (size_t)p->net->n_layers);
    if (want != p->pin_want) memcpy(p->pin_want, want, sizeof(config) * (size_t)p->net->n_layers);
    p->search_ms = search_ms;
    memcpy(p->best, best, sizeof(int) * (size_t)p->net->n_layers);
    memory_free(&p->mem);
    p->mem = *mo; /* taken */
    p->mset = *ms;
    p->cm->optimizer = ms->optimizer;
    strategy_evaluate(p->cm, p->best, &p->best_eval);
}

/* After search_pinned: the fastest strategy of cg within the memory
 * settings ms on cluster cl, the one m was built for (a new cluster's GPU
 * memory sets the limit, not the plan's cluster being replaced): best
 * (n_layers) and what is known of it (*mo). Model m's
 * optimizer is ms's afterwards only on success. */
static int fit_memory(const plan *p, const cluster *cl, cost_model *m, const cost_graph *cg, const search_result *sr,
                      const plan_memory_settings *ms, int *best, plan_memory *mo, double *search_ms, lw_error *err)
{
    optimizer_kind was = m->optimizer;
    m->optimizer = ms->optimizer;
    double t0 = lw_now();
    int rc = memory_step(ms, cl, m, cg, sr, NULL, p->cancel, best, mo, err);
    *search_ms += (lw_now() - t0) * 1e3;
    if (rc != 0) {
        m->optimizer = was;
        memory_free(mo);
    }
    return rc;
}

/* Only the search again, under new pins (indices into the plan's model;
 * want: the same pins as asked for, held ones included) and memory settings. */
static int research(plan *p, const int *pins, const config *want, const plan_memory_settings *mset, lw_error *err)
{
    cost_graph *cg;
    double ms;
    search_result *sr = search_pinned(p, &p->set, p->cm, pins, &cg, &ms, err);
    if (!sr) return -1;
    int *best = lw_malloc(sizeof(int) * (size_t)(p->net->n_layers + 1));
    plan_memory mo;
    if (fit_memory(p, p->cl, p->cm, cg, sr, mset, best, &mo, &ms, err) != 0) {
        p->cm->optimizer = p->mset.optimizer;
        free(best);
        search_result_free(sr);
        cg_free(cg);
        return -1;
    }
    commit(p, NULL, cg, sr, pins, want, ms, 0, best, &mo, mset);
    free(best);
    return 0;
}


/* rebuild of an unsearched plan: a model without tables, no search. */
static int rebuild_unsearched(plan *p, const plan_settings *set, cluster *cl, int gpus, long batch,
                              const plan_memory_settings *mset, lw_error *err)
{
    cost_model *cm = cost_model_open(p->net, cl, p->prof, gpus, batch, err);
    if (!cm) return -1;
    drop_results(p);
    memory_free(&p->mem);
    cost_model_free(p->cm);
    p->cm = cm;
    p->mset = *mset;
    cm->optimizer = mset->optimizer;
    p->gpus = gpus;
    p->batch = batch;
    p->search_ms = 0;
    p->from_prefetch = 0;
    p->repriced = 0;
    memset(p->best, 0, sizeof(int) * (size_t)p->net->n_layers);
    for (int i = 0; i < p->net->n_layers; i++) p->pinned[i] = -1;
    p->set = *set;
    if (cl != p->cl) {
        cluster_free(p->cl);
        p->cl = cl;
    }
    return 0;
}

/* The counts posted for the plan's model (prefetch_counts_post), adopted
 * once built (waiting for them); any posted for another model dropped. */
static void counts_settle(plan *p)
{
    if (!p->cm || cost_model_kept_bytes(p->cm) > 0) {
        prefetch_counts_drop(p->prefetch);
        return;
    }
    cost_model *donor = prefetch_counts_take(p->prefetch, p->cm, p->cancel);
    if (donor) (void)cost_model_adopt_counts(p->cm, donor);
    cost_model_free(donor);
}

int plan_counts_worth_waiting(long total, long done, double ran_s, double answer_s)
{
    if (done <= 0 || total <= 0) return 0;
    if (done >= total) return 1;
    return ran_s * (double)(total - done) / (double)done <= answer_s;
}

/* Before a what-if on p->cm (whatifs): its counts adopted, waited for
 * (counts_settle), or, where waiting is expected to take longer
 * (p->counts_wait, plan_counts_worth_waiting), given up: then returns 1
 * with the model they were reusing in *base and its cluster in *base_cl
 * (NULL, NULL: they were built from scratch), for the what-if to reuse
 * instead, as p->cm was answered. 0: settled. */
static int counts_settle_or_give_up(plan *p, cost_model **base, cluster **base_cl)
{
    *base = NULL;
    *base_cl = NULL;
    long done;
    double ran_s;
    if (p->counts_wait <= 0 && p->cm && cost_model_kept_bytes(p->cm) == 0 &&
        prefetch_counts_progress(p->prefetch, p->cm, &done, &ran_s) &&
        (p->counts_wait < 0 ||
         !plan_counts_worth_waiting(p->cm->tx_pairs_evaluated, done, ran_s, p->cm->build_ms / 1e3)) &&
        prefetch_counts_give_up(p->prefetch, p->cm, base, base_cl))
        return 1;
    counts_settle(p);
    return 0;
}

/* A what-if that gave up p->cm's counts (counts_settle_or_give_up) and
 * did not get as far as a new model: they are posted again, as before. */
static void counts_restore(plan *p, int gave_up, cost_model *base, cluster *base_cl)
{
    if (gave_up) prefetch_counts_post(prefetcher_of(p), p->cm, base);
    cluster_free(base_cl);
}

int plan_counts_wait(plan *p)
{
    counts_settle(p);
    return p->cm && cost_model_kept_bytes(p->cm) > 0;
}

int plan_background_join(plan *p)
{
    counts_settle(p);
    return prefetch_join_idle(p->prefetch);
}

/* The pins in the new model cm, by index: pins are configs, not indices,
 * so they are carried over by value (want: the configs asked for, deg[0]
 * 0 for none, held ones included). A config the new setting lacks holds
 * its pin (-1 here, kept in want). *any_pin: some pin was asked for. */
static int *carry_pins(const plan *p, const cost_model *cm, const config *want, int *any_pin)
{
    int L = p->net->n_layers;
    int *pins = lw_malloc(sizeof(int) * (size_t)(L ? L : 1));
    for (int i = 0; i < L; i++) {
        pins[i] = -1;
        if (!want[i].deg[0]) continue;
        pins[i] = config_find(cm->configs[i], cm->n_configs[i], &want[i]);
        *any_pin = 1;
    }
    return pins;
}

/* The failure path of rebuild after the model was made: everything it
 * built freed, the given-up counts restored. Returns -1. */
static int rebuild_undo(plan *p, cost_model *cm, cost_graph *cg, search_result *sr, int *pins, int gave_up,
                        cost_model *given_base, cluster *given_cl)
{
    search_result_free(sr);
    cg_free(cg);
    cost_model_free(cm);
    free(pins);
    counts_restore(p, gave_up, given_base, given_cl);
    return -1;
}

/* A new cost model and optimum for settings set on cluster cl (the plan's
 * own, or a new one the plan takes on success), pins given as configs
 * (want, held ones included: they come back where the new model has
 * their config, in the same search). On failure nothing changed (cl is
 * the caller's to free). */
static int rebuild_model(plan *p, const plan_settings *set, cluster *cl, const config *want,
                         const plan_memory_settings *mset, lw_error *err)
{
    int L = p->net->n_layers;
    if (set->gpus < 0 || set->gpus > CLUSTER_MAX_GPUS) return lw_fail(err, 2, "GPU count %d is out of range", set->gpus);
    int total = cluster_gpus(cl);
    int gpus = set->gpus > 0 ? set->gpus : total;
    if (gpus > total)
        return lw_fail(err, 2, "%d GPUs requested, but cluster \"%s\" has %d (choose 1 to %d)", gpus, cl->name,
                       total, total);
    long batch = plan_batch_for(set, gpus);
    if (p->unsearched) return rebuild_unsearched(p, set, cl, gpus, batch, mset, err);
    cost_model *cm = NULL;
    cost_graph *cg = NULL;
    search_result *sr = NULL;
    int adopted = prefetch_take(p->prefetch, gpus, batch, cl, p->cancel, &cm, &cg, &sr), repriced = 0, post_counts = 0, gave_up = 0;
    cost_model *given_base = NULL; /* the model the given-up counts were reusing */
    cluster *given_cl = NULL;
    if (adopted) {
        prefetch_counts_drop(p->prefetch); /* the prefetched model keeps counts of its own */
    } else {
        /* a change of prices (the cluster editor, precision), of batch, or
         * GPU count: the transfers' counts the current model's build kept,
         * where they say (cost_model_reuse); the rest computed. An
         * interactive plan answers first: entries computed (and a model
         * built) keep no counts, which the same model built again on the
         * prefetch worker then gives it (post_counts) before the next
         * what-if needs them (counts_settle waits for them). */
        /* Where those counts would take longer to come than answering
         * without them, they are given up, and the what-if reuses what
         * the model itself reused (the model before it, whose counts the
         * job was carrying over), computing the rest again: about the
         * model's own time, where waiting would take the job's rest
         * (keeping counts costs more) and then a re-pricing. */
        if (p->whatifs) gave_up = counts_settle_or_give_up(p, &given_base, &given_cl);
        const cost_model *donor = given_base ? given_base : p->cm;
        if (donor)
            cm = p->whatifs ? cost_model_reuse_fast(donor, cl, gpus, batch, p->cancel)
                            : cost_model_reuse(donor, cl, gpus, batch);
        repriced = cm ? cm->tx_reused : 0;
        if (!cm && p->cm && !p->whatifs) /* a what-if: more may follow */
            cm = cost_model_build_for_whatifs(p->net, cl, p->prof, gpus, batch, p->cancel, NULL, err);
        else if (!cm)
            cm = cost_model_build_cancellable(p->net, cl, p->prof, gpus, batch, p->cancel, err);
        if (!cm) {
            counts_restore(p, gave_up, given_base, given_cl);
            return -1;
        }
        post_counts = p->whatifs && cost_model_kept_bytes(cm) == 0 && cost_model_could_keep_counts(cm);
    }
    int any_pin = 0;
    int *pins = carry_pins(p, cm, want, &any_pin);
    double search_ms = 0;
    if (!adopted || any_pin || set->no_fold) { /* a prefetch searched without pins, with folds */
        search_result_free(sr);
        cg_free(cg);
        sr = search_pinned(p, set, cm, pins, &cg, &search_ms, err);
        if (!sr) return rebuild_undo(p, cm, cg, NULL, pins, gave_up, given_base, given_cl);
    }
    /* the fastest strategy within the memory limit */
    int *best = lw_malloc(sizeof(int) * (size_t)(L + 1));
    plan_memory mo;
    if (fit_memory(p, cl, cm, cg, sr, mset, best, &mo, &search_ms, err) != 0) {
        free(best);
        return rebuild_undo(p, cm, cg, sr, pins, gave_up, given_base, given_cl);
    }
    /* the counts are kept again from the model the entries were priced
     * from where it priced some of them (the model before, or the one the
     * given-up counts were reusing): the job takes it */
    cost_model *base = NULL;
    if (post_counts && repriced == 2) {
        base = given_base ? given_base : p->cm;
        if (given_base) given_base = NULL;
        else p->cm = NULL;
    }
    commit(p, cm, cg, sr, pins, want, search_ms, adopted, best, &mo, mset);
    if (post_counts) prefetch_counts_post(prefetcher_of(p), p->cm, base);
    cost_model_free(given_base); /* then the cluster it pointed to */
    cluster_free(given_cl);
    p->repriced = repriced;
    p->counts_given_up = gave_up;
    free(best);
    free(pins);
    p->set = *set;
    if (cl != p->cl) {
        cluster_free(p->cl);
        p->cl = cl;
    }
    return 0;
}

/* The pipeline q asks for (stages > 1) at GPU count gpus and the batch
 * on cluster cl under mset, into *out (NULL when q asks for none). 0, or
 * -1 with err set. */
static int pipe_for(const plan *p, const plan_pipe_settings *q, const cluster *cl, int gpus, long batch,
                    const plan_memory_settings *mset, pipe_plan **out, lw_error *err)
{
    *out = NULL;
    if (q->stages < 0 || q->stages > PIPE_MAX_STAGES)
        return lw_fail(err, 2, "the stages must be from 1 to %d (asked for %d)", PIPE_MAX_STAGES, q->stages);
    if (q->microbatches < 0 || q->vp < 0 || q->tp < 0 || q->schedule < 0 || q->schedule > PIPE_INTERLEAVED + 1)
        return lw_fail(err, 2, "pipeline: bad micro-batch count, schedule or virtual stages");
    if (q->stages <= 1) return 0;
    *out = plan_pipe_run(p, q, cl, gpus, batch, mset, err);
    return *out ? 0 : -1;
}

pipe_plan *plan_pipe_run(const plan *p, const plan_pipe_settings *q, const cluster *cl, int gpus, long batch,
                         const plan_memory_settings *mset, lw_error *err)
{
    pipe_options po;
    pipe_options_init(&po);
    po.stages = q->stages;
    po.microbatches = q->microbatches;
    if (q->schedule) po.schedule = (pipe_schedule)(q->schedule - 1);
    po.vp = q->vp ? q->vp : po.schedule == PIPE_INTERLEAVED ? 2 : 1;
    po.optimizer = mset->optimizer;
    po.memory_limit = plan_memory_limit(mset, cl);
    po.cancel = p->cancel;
    megatron_options mo = {.tp = q->tp};
    return q->megatron ? pipe_megatron(p->net, cl, p->prof, gpus, batch, &po, &mo, err)
                       : pipe_search(p->net, cl, p->prof, gpus, batch, &po, err);
}

/* rebuild_model, and the pipeline pipe asks for (plan_stage_count): both
 * or, on failure, neither. */
static int rebuild(plan *p, const plan_settings *set, cluster *cl, const config *want,
                   const plan_memory_settings *mset, const plan_pipe_settings *pipe, lw_error *err)
{
    pipe_plan *pp = NULL;
    int total = cluster_gpus(cl);
    if (set->gpus >= 0 && set->gpus <= total) { /* a bad count: rebuild_model says so */
        int gpus = set->gpus > 0 ? set->gpus : total;
        if (pipe_for(p, pipe, cl, gpus, plan_batch_for(set, gpus), mset, &pp, err) != 0) return -1;
    }
    if (rebuild_model(p, set, cl, want, mset, err) != 0) {
        pipe_plan_free(pp);
        return -1;
    }
    pipe_plan_free(p->pipe); /* its models do not read the cluster rebuild_model may have replaced */
    p->pipe = pp;
    p->pset = *pipe;
    return 0;
}

int plan_search(plan *p, lw_error *err)
{
    if (!p->unsearched) return 0;
    p->unsearched = 0;
    plan_memory_settings mset = p->mset;
    if (rebuild(p, &p->set, p->cl, p->pin_want, &mset, &p->pset, err) == 0) return 0;
    p->unsearched = 1;
    return -1;
}

int plan_step_tables(plan *p, lw_error *err)
{
    if (!p->sr || !p->cg || p->sr->tables_kept) return 0;
    search_info info;
    if (search_keep_tables(p->cg, p->sr, &info) != 0) return search_failure(&info, err);
    return 0;
}

static int pipe_settings_equal(const plan_pipe_settings *a, const plan_pipe_settings *b)
{
    return a->stages == b->stages && a->microbatches == b->microbatches && a->schedule == b->schedule &&
           a->vp == b->vp && a->megatron == b->megatron && a->tp == b->tp;
}

/* c changes only the pipeline settings. */
static int pipe_only_change(const plan *p, const plan_change *c)
{
    return c->pipe && !c->set && !c->cl && !c->sync_set && !c->n_pins && !c->clear_pins && !c->mem &&
           !c->pin_configs && !p->unsearched;
}

/* The pipeline q asks for on the plan's model as it is: 0, or -1 with err
 * set and the plan as it was. */
static int apply_pipe(plan *p, const plan_pipe_settings *q, lw_error *err)
{
    if (pipe_settings_equal(q, &p->pset)) return 0;
    pipe_plan *pp = NULL;
    if (pipe_for(p, q, p->cl, p->gpus, p->batch, &p->mset, &pp, err) != 0) return -1;
    pipe_plan_free(p->pipe);
    p->pipe = pp;
    p->pset = *q;
    return 0;
}

int plan_apply(plan *p, const plan_change *c, lw_error *err)
{
    int L = p->net->n_layers;
    if (pipe_only_change(p, c)) return apply_pipe(p, c->pipe, err);
    if (p->unsearched && !c->set && !c->cl && !c->pipe) {
        if (c->sync_set && ((int)c->sync < 0 || c->sync >= SYNC__COUNT))
            return lw_fail(err, 2, "unknown sync scheme %d", (int)c->sync);
        if (!c->n_pins && !c->clear_pins && !c->mem && !c->pin_configs) { /* no tables: t_s is computed when asked */
            if (c->sync_set) p->cl->sync = c->sync;
            return 0;
        }
        if (plan_search(p, err) != 0) return -1; /* pins and memory settings need the search */
    }
    if (c->sync_set && ((int)c->sync < 0 || c->sync >= SYNC__COUNT))
        return lw_fail(err, 2, "unknown sync scheme %d", (int)c->sync);
    for (int i = 0; i < c->n_pins; i++) {
        const plan_pin *q = &c->pins[i];
        if (q->layer < 0 || q->layer >= L) return lw_fail(err, 2, "pin: no layer %d (%d layers)", q->layer, L);
        if (q->config < -1 || !p->cm || q->config >= p->cm->n_configs[q->layer])
            return lw_fail(err, 2, "pin %s: no config %d", p->net->layers[q->layer].name, q->config);
    }
    if (c->mem && (c->mem->limit != c->mem->limit || !(c->mem->time_s >= 0) || c->mem->optimizer < OPT_MOMENTUM ||
                   c->mem->optimizer > OPT_ADAM))
        return lw_fail(err, 2, "bad memory settings (limit, time budget or optimizer)");
    const plan_memory_settings *mset = c->mem ? c->mem : &p->mset;
    int mset_changed = memcmp(mset, &p->mset, sizeof *mset) != 0;
    /* the pins as asked for (held ones included), then as indices into the current model */
    config *want = lw_calloc((size_t)(L ? L : 1), sizeof(config));
    if (c->pin_configs) memcpy(want, c->pin_configs, sizeof(config) * (size_t)L);
    else if (!c->clear_pins) memcpy(want, p->pin_want, sizeof(config) * (size_t)L);
    if (!c->pin_configs)
        for (int i = 0; i < c->n_pins; i++)
            want[c->pins[i].layer] = c->pins[i].config >= 0 ? p->cm->configs[c->pins[i].layer][c->pins[i].config]
                                                            : (config){{0, 0, 0, 0, 0, 0}};
    int *pins = lw_malloc(sizeof(int) * (size_t)(L ? L : 1));
    for (int i = 0; i < L; i++)
        pins[i] = want[i].deg[0] && p->cm ? config_find(p->cm->configs[i], p->cm->n_configs[i], &want[i]) : -1;
    int rc = 0;
    /* a pipeline depends on the sync scheme and the memory settings too:
     * it is computed again with the model */
    const plan_pipe_settings *pipe = c->pipe ? c->pipe : &p->pset;
    int piped = (pipe->stages > 1 && ((c->sync_set && c->sync != p->cl->sync) || mset_changed)) ||
                (c->pipe && !pipe_settings_equal(c->pipe, &p->pset));
    if (c->set || c->cl || piped) {
        /* a new model: the plan's cluster stays untouched until it commits */
        cluster *cl = p->cl;
        if (c->cl || (c->sync_set && c->sync != p->cl->sync)) cl = cluster_clone(c->cl ? c->cl : p->cl);
        if (c->sync_set) cl->sync = c->sync;
        rc = rebuild(p, c->set ? c->set : &p->set, cl, want, mset, pipe, err);
        if (rc != 0 && cl != p->cl) cluster_free(cl);
    } else if (c->sync_set && c->sync != p->cl->sync) {
        /* only t_s depends on the sync scheme; put it back on failure */
        sync_scheme was = p->cl->sync;
        p->cl->sync = c->sync;
        cost_model_refresh_sync(p->cm);
        rc = research(p, pins, want, mset, err);
        if (rc != 0) {
            p->cl->sync = was;
            cost_model_refresh_sync(p->cm);
        }
    } else if (memcmp(pins, p->pinned, sizeof(int) * (size_t)L) != 0 || mset_changed) {
        rc = research(p, pins, want, mset, err);
    } else {
        /* only pins on hold set or dropped: the optimum stands */
        memcpy(p->pin_want, want, sizeof(config) * (size_t)L);
    }
    free(pins);
    free(want);
    return rc;
}

plan_state plan_state_get(const plan *p)
{
    int L = p->net->n_layers;
    plan_state s = {p->set, cluster_clone(p->cl), p->mset, L, lw_calloc((size_t)L, sizeof(config)), p->pset};
    memcpy(s.pins, p->pin_want, sizeof(config) * (size_t)L);
    return s;
}

void plan_state_free(plan_state *s)
{
    cluster_free(s->cl);
    free(s->pins);
    *s = (plan_state){0};
}

/* The same cluster but perhaps for the sync scheme. */
static int cluster_same_but_sync(const cluster *a, const cluster *b)
{
    cluster c = *b; /* a shallow copy, only compared */
    c.sync = a->sync;
    return cluster_equal(a, &c) && strcmp(a->name, b->name) == 0;
}

/* Field by field: the structs have padding. */
static int settings_equal(const plan_settings *a, const plan_settings *b)
{
    return a->gpus == b->gpus && a->batch_per_gpu == b->batch_per_gpu && a->global_batch == b->global_batch &&
           a->no_fold == b->no_fold;
}

static int memory_settings_equal(const plan_memory_settings *a, const plan_memory_settings *b)
{
    return a->limit == b->limit && a->optimizer == b->optimizer && a->time_s == b->time_s;
}

/* The plan's pins as asked for (held ones included) are pins. */
static int pins_are(const plan *p, const config *pins)
{
    for (int i = 0; i < p->net->n_layers; i++) {
        int want = pins[i].deg[0] != 0, has = p->pin_want[i].deg[0] != 0;
        if (want != has || (has && !config_equal(&pins[i], &p->pin_want[i]))) return 0;
    }
    return 1;
}

int plan_state_is(const plan *p, const plan_state *s)
{
    return settings_equal(&s->set, &p->set) && cluster_same_but_sync(s->cl, p->cl) && s->cl->sync == p->cl->sync &&
           memory_settings_equal(&s->mem, &p->mset) && pins_are(p, s->pins) && pipe_settings_equal(&s->pipe, &p->pset);
}

plan_change plan_state_change(const plan *p, const plan_state *s)
{
    plan_change c = {0};
    if (!settings_equal(&s->set, &p->set)) c.set = &s->set;
    if (!cluster_same_but_sync(s->cl, p->cl)) c.cl = s->cl;
    else if (s->cl->sync != p->cl->sync) {
        c.sync_set = 1;
        c.sync = s->cl->sync;
    }
    if (!memory_settings_equal(&s->mem, &p->mset)) c.mem = &s->mem;
    if (!pipe_settings_equal(&s->pipe, &p->pset)) c.pipe = &s->pipe;
    if (c.set || c.cl || !pins_are(p, s->pins)) c.pin_configs = s->pins;
    return c;
}

void plan_set_cancel(plan *p, atomic_int *cancel)
{
    p->cancel = cancel;
}

int plan_pin_count(const plan *p)
{
    int n = 0;
    for (int i = 0; i < p->net->n_layers; i++) n += p->pinned[i] >= 0;
    return n;
}

int plan_pin_held(const plan *p, int li)
{
    return p->pin_want[li].deg[0] != 0 && p->pinned[li] < 0;
}

int plan_pins_held(const plan *p)
{
    int n = 0;
    for (int i = 0; i < p->net->n_layers; i++) n += plan_pin_held(p, i);
    return n;
}

const config *plan_pin_config(const plan *p, int li)
{
    return p->pin_want[li].deg[0] ? &p->pin_want[li] : NULL;
}

long plan_search_count(const plan *p)
{
    return p->searches;
}

refine_bounds plan_refine_bounds(const plan *p)
{
    return (refine_bounds){.pinned = p->pinned, .memory_limit = p->mem.limit_bytes};
}

plan *plan_open(network *net, cluster *cl, profile *prof, const plan_options *o, lw_error *err)
{
    plan *p = lw_calloc(1, sizeof *p);
    p->whatifs = o->whatifs;
    p->cancel = o->cancel;
    p->mset = o->mem;
    p->net = net;
    p->cl = cl;
    p->prof = prof;
    p->set = o->set;
    p->progress = o->progress;
    p->progress_user = o->progress_user;
    p->unsearched = o->unsearched;
    p->best = lw_calloc((size_t)net->n_layers, sizeof(int));
    p->pinned = lw_malloc(sizeof(int) * (size_t)net->n_layers);
    for (int i = 0; i < net->n_layers; i++) p->pinned[i] = -1;
    p->pin_want = lw_calloc((size_t)(net->n_layers ? net->n_layers : 1), sizeof(config));
    plan_memory_settings mset = p->mset;
    if (rebuild(p, &p->set, cl, p->pin_want, &mset, &o->pipe, err) != 0) {
        plan_free(p);
        return NULL;
    }
    p->cancel = NULL;
    return p;
}

void plan_free(plan *p)
{
    if (!p) return;
    prefetcher_free(p->prefetch);
    p->prefetch = NULL;
    pipe_plan_free(p->pipe);
    drop_results(p);
    memory_free(&p->mem);
    cost_model_free(p->cm);
    net_free(p->net);
    cluster_free(p->cl);
    profile_free(p->prof);
    free(p->best);
    free(p->pinned);
    free(p->pin_want);
    free(p);
}

/* A "why not?" question asked of a model: m with pins (indices into m,
 * -1 free) and the memory settings ms on cluster cl, layer li free of its
 * own pin. plan_cost_with_pin and plan_whynot_totals ask it of the plan's
 * own model; plan_probe_pair of a model built for another setting. */
typedef struct whynot_ctx {
    const cost_model *m;
    const cluster *cl;
    const plan_memory_settings *ms;
    const int *pins;
    int explain;  /* 1: the search under the limit within explain_bounds, else ms's time budget */
} whynot_ctx;

static double cost_with_pin_on(const whynot_ctx *q, int li, int k, int *config_out)
{
    int L = q->m->n_layers;
    cost_graph *g = graph_with_pins(q->m, q->pins, li);
    for (int j = 0; li >= 0 && j < g->n_configs[li]; j++) /* li < 0: nothing forced */
        if (j != k) g->node_cost[li][j] = HUGE_VAL;
    search_result *r = search_optimum(g);
    double c = r ? r->cost : HUGE_VAL;
    if (r && config_out) memcpy(config_out, r->config, sizeof(int) * (size_t)L);
    if (r && isfinite(plan_memory_limit(q->ms, q->cl))) { /* the fastest that fits, +inf if none */
        int *best = lw_malloc(sizeof(int) * (size_t)L);
        plan_memory mo;
        lw_error err;
        memsearch_options bounds;
        explain_bounds(&bounds);
        if (memory_step(q->ms, q->cl, q->m, g, r, q->explain ? &bounds : NULL, NULL, best, &mo, &err) == 0) {
            c = mo.fits ? cg_evaluate(g, best) : HUGE_VAL;
            if (config_out) memcpy(config_out, best, sizeof(int) * (size_t)L);
        }
        memory_free(&mo);
        free(best);
    }
    search_result_free(r);
    cg_free(g);
    return c;
}

/* whynot_totals_on that gives up (-2) once *cancel is raised (NULL: never):
 * the search stops soon after; the min-marginals are not begun. */
static int whynot_totals_cancellable(const whynot_ctx *q, int li, double *totals, const atomic_int *cancel)
{
    /* under a memory limit the best total of a config is its own search
     * (cost_with_pin_on): min-marginals do not know what fits */
    if (limit_may_bind(q->m, plan_memory_limit(q->ms, q->cl))) return -1;
    cost_graph *g = graph_with_pins(q->m, q->pins, li);
    search_options opt;
    search_options_init(&opt);
    opt.cancel = cancel;
    search_result *r = search_run_with(g, &opt, NULL, NULL, NULL);
    int rc = -1;
    if (!r && cancel && atomic_load(cancel)) {
        cg_free(g);
        return -2;
    }
    if (r) {
        size_t cells = 0;
        for (int i = 0; i < g->n_nodes; i++) cells += (size_t)g->n_configs[i];
        double *mem = lw_malloc(sizeof(double) * cells);
        double **marg = lw_malloc(sizeof(double *) * (size_t)g->n_nodes);
        for (int i = 0, off = 0; i < g->n_nodes; off += g->n_configs[i], i++) marg[i] = mem + off;
        rc = search_min_marginals(g, r, marg);
        if (rc == 0) memcpy(totals, marg[li], sizeof(double) * (size_t)g->n_configs[li]);
        free(marg);
        free(mem);
    }
    search_result_free(r);
    cg_free(g);
    return rc == 0 ? 0 : -1;
}

static int whynot_totals_on(const whynot_ctx *q, int li, double *totals)
{
    return whynot_totals_cancellable(q, li, totals, NULL);
}

static whynot_ctx plan_ctx(const plan *p)
{
    return (whynot_ctx){p->cm, p->cl, &p->mset, p->pinned, 0};
}

double plan_cost_with_pin(const plan *p, int li, int k, int *config_out)
{
    whynot_ctx q = plan_ctx(p);
    return cost_with_pin_on(&q, li, k, config_out);
}

int plan_whynot_totals(const plan *p, int li, double *totals)
{
    whynot_ctx q = plan_ctx(p);
    return whynot_totals_on(&q, li, totals);
}

void plan_whynot_all(const plan *p, int li, double *totals)
{
    if (plan_whynot_totals(p, li, totals) == 0) return;
    for (int k = 0; k < p->cm->n_configs[li]; k++) totals[k] = plan_cost_with_pin(p, li, k, NULL);
}

int plan_unpinned_best(const plan *p, int *config_out)
{
    int L = p->net->n_layers;
    int *none = lw_malloc(sizeof(int) * (size_t)(L ? L : 1));
    for (int i = 0; i < L; i++) none[i] = -1;
    whynot_ctx q = {p->cm, p->cl, &p->mset, none, 0};
    double c = cost_with_pin_on(&q, -1, -1, config_out);
    free(none);
    return isfinite(c) ? 0 : -1;
}

/* The memory settings of the paper's search: no limit. */
static const plan_memory_settings no_limit = {.limit = -1};

double plan_cost_with_pin_eq1(const plan *p, int li, int k, int *config_out)
{
    whynot_ctx q = {p->cm, p->cl, &no_limit, p->pinned, 0};
    return cost_with_pin_on(&q, li, k, config_out);
}

double plan_cost_with_pin_within(const plan *p, int li, int k, int *config_out)
{
    whynot_ctx q = {p->cm, p->cl, &p->mset, p->pinned, 1};
    return cost_with_pin_on(&q, li, k, config_out);
}

static int ranked_cmp(const void *x, const void *y)
{
    const plan_ranked *a = x, *b = y;
    if (a->total < b->total) return -1;
    if (a->total > b->total) return 1;
    return a->k - b->k;
}

plan_ranked *plan_rank_configs(const double *totals, int n)
{
    plan_ranked *r = lw_malloc(sizeof(plan_ranked) * (size_t)(n > 0 ? n : 1));
    for (int k = 0; k < n; k++) r[k] = (plan_ranked){k, totals[k]};
    qsort(r, (size_t)n, sizeof *r, ranked_cmp);
    return r;
}

void plan_whynot_all_eq1(const plan *p, int li, double *totals)
{
    plan_whynot_all_eq1_cancellable(p, li, totals, NULL);
}

int plan_whynot_all_eq1_cancellable(const plan *p, int li, double *totals, const atomic_int *cancel)
{
    whynot_ctx q = {p->cm, p->cl, &no_limit, p->pinned, 0};
    int rc = whynot_totals_cancellable(&q, li, totals, cancel);
    if (rc == 0) return 0;
    for (int k = 0; k < p->cm->n_configs[li]; k++) {
        if (rc == -2 || (cancel && atomic_load(cancel))) return -1;
        totals[k] = cost_with_pin_on(&q, li, k, NULL);
    }
    return 0;
}

int plan_limit_applies(const plan *p)
{
    return isfinite(plan_memory_limit(&p->mset, p->cl)) && p->mem.fits;
}

/* The pair of layer li's configs searched on model m (built for cl). */
static void probe_on(cost_model *m, const cluster *cl, const plan_memory_settings *ms, int limited, const config *pins,
                     int li, const config two[2], double totals[2])
{
    int L = m->n_layers;
    m->optimizer = ms->optimizer;
    /* pins are configs: carried over by value, as plan_apply does */
    int *pin = lw_malloc(sizeof(int) * (size_t)(L ? L : 1));
    for (int i = 0; i < L; i++) pin[i] = pins[i].deg[0] ? config_find(m->configs[i], m->n_configs[i], &pins[i]) : -1;
    whynot_ctx q = {m, cl, limited ? ms : &no_limit, pin, 1};
    int k[2];
    for (int i = 0; i < 2; i++) k[i] = config_find(m->configs[li], m->n_configs[li], &two[i]);
    double *tot = lw_malloc(sizeof(double) * (size_t)m->n_configs[li]);
    int marg = whynot_totals_on(&q, li, tot) == 0;
    for (int i = 0; i < 2; i++)
        totals[i] = k[i] < 0 ? HUGE_VAL : marg ? tot[k[i]] : cost_with_pin_on(&q, li, k[i], NULL);
    free(tot);
    free(pin);
}

/* plan_probe_pair's question answered: a model built for it (given up
 * once *cancel is raised), layer li's two configs searched on it. 0, or -1
 * with err set. */
static int probe_answer(const network *net, const profile *prof, const plan_probe_q *q, int li, const config two[2],
                        const atomic_int *cancel, double totals[2], lw_error *err)
{
    cost_model *m = cost_model_build_cancellable(net, q->cl, prof, q->gpus, q->batch, cancel, err);
    if (m) probe_on(m, q->cl, &q->ms, q->limited, q->pins, li, two, totals);
    cost_model_free(m);
    return m ? 0 : -1;
}

/* A probe's question resolved against the plan: the setting, and what of
 * the plan it needs, by value (pins as configs, deg all 0: not pinned;
 * caller frees pins), so that it can be answered on the worker while the
 * plan changes. */
static int probe_resolve(const plan *p, const plan_settings *set, const cluster *cl, plan_probe_q *q, lw_error *err)
{
    if (!set) set = &p->set;
    if (!cl) cl = p->cl;
    int L = p->net->n_layers, total = cluster_gpus(cl);
    q->gpus = set->gpus > 0 ? set->gpus : total;
    if (q->gpus > total)
        return lw_fail(err, 2, "%d GPUs requested, but cluster \"%s\" has %d", q->gpus, cl->name, total);
    q->batch = plan_batch_for(set, q->gpus);
    q->cl = cl;
    q->ms = p->mset;
    q->limited = plan_limit_applies(p);
    q->pins = lw_calloc((size_t)(L ? L : 1), sizeof(config));
    memcpy(q->pins, p->pin_want, sizeof(config) * (size_t)L); /* held ones included, as plan_apply carries them */
    return 0;
}

int plan_probe_pair(const plan *p, const plan_settings *set, const cluster *cl, int li, const config two[2],
                    double totals[2], lw_error *err)
{
    plan_probe_q q;
    if (probe_resolve(p, set, cl, &q, err) != 0) return -1;
    int rc = probe_answer(p->net, p->prof, &q, li, two, p->cancel, totals, err);
    free(q.pins);
    return rc;
}

/* A probe posted to the worker: the question by value, its cluster a clone. */
typedef struct probe_post {
    const network *net;
    const profile *prof;
    plan_probe_q q;
    cluster *cl;
    int li;
    config two[2];
} probe_post;

static int probe_post_answer(void *arg, const atomic_int *cancel, double totals[2], lw_error *err)
{
    const probe_post *j = arg;
    return probe_answer(j->net, j->prof, &j->q, j->li, j->two, cancel, totals, err);
}

static void probe_post_free(void *arg)
{
    probe_post *j = arg;
    cluster_free(j->cl);
    free(j->q.pins);
    free(j);
}

int plan_probe_post(plan *p, const plan_settings *set, const cluster *cl, int li, const config two[2], lw_error *err)
{
    plan_probe_q q;
    if (probe_resolve(p, set, cl, &q, err) != 0) return -1;
    probe_post *j = lw_calloc(1, sizeof *j);
    j->net = p->net;
    j->prof = p->prof;
    j->q = q;
    j->q.cl = j->cl = cluster_clone(q.cl);
    j->li = li;
    j->two[0] = two[0];
    j->two[1] = two[1];
    prefetch_probe_post(prefetcher_of(p), probe_post_answer, j, probe_post_free);
    return 0;
}

int plan_probe_poll(plan *p, double totals[2], lw_error *err)
{
    if (!p->prefetch) return lw_fail(err, 1, "no probe posted");
    return prefetch_probe_poll(p->prefetch, totals, err);
}

void plan_probe_cancel(plan *p) { prefetch_probe_cancel(p->prefetch); }

int plan_prefetch_pending(plan *p) { return prefetch_pending(p->prefetch); }

void plan_prefetch_list(plan *p, const plan_prefetch_item *items, int n)
{
    prefetch_setting *s = lw_malloc(sizeof *s * (size_t)(n > 0 ? n : 1));
    int k = 0;
    for (int i = 0; i < n; i++) {
        const cluster *cl = items[i].cl ? items[i].cl : p->cl;
        int total = cluster_gpus(cl);
        int gpus = items[i].set.gpus > 0 ? items[i].set.gpus : total;
        if (gpus > total || gpus > PLAN_AUTO_SEARCH_MAX_GPUS) continue; /* not tens of seconds ahead */
        long batch = plan_batch_for(&items[i].set, gpus);
        if (gpus == p->gpus && batch == p->batch && cluster_equal(cl, p->cl)) continue; /* the current one */
        s[k++] = (prefetch_setting){gpus, batch, cl};
    }
    prefetch_list(prefetcher_of(p), s, k);
    free(s);
}

void plan_prefetch(plan *p, plan_settings next)
{
    plan_prefetch_item it = {next, NULL};
    plan_prefetch_list(p, &it, 1);
}

const char *plan_final_method_name(const plan *p)
{
    if (!p->sr) return "none";
    return p->sr->method == FINAL_ENUMERATION ? "enumeration" : "variable-elimination";
}
