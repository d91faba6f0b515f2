/*
 * Fuzz harness: a network that passes the loader, all the way through the
 * engine — cost model on a tiny cluster (2 nodes x 2 GPUs), Algorithm 1,
 * the strategy's evaluation, the baselines, "why not this config", the
 * sync what-if and the strategy document's round trip — so shapes that the
 * loader lets through but the cost model or the search cannot take are
 * found.
 *
 * The GPU count (1 to 4), the global batch (some smaller than the GPU
 * count) and the sync scheme come from a hash of the input. Networks of
 * more than FUZZ_MAX_LAYERS layers are skipped to keep each run short.
 *
 * Properties: every t_c, t_s and t_x is finite and non-negative; the search
 * returns a strategy (or refuses a too-large final step with
 * SEARCH_TOO_LARGE) whose cost is its evaluation, and is the brute-force
 * minimum where that is small enough to enumerate; pinning a layer never
 * beats the optimum; a sync what-if (plan_apply) gives the same t_s as a fresh model, or
 * fails leaving the t_s tables as they were.
 */
#include "fuzz_common.h"

#include "cluster.h"
#include "cost.h"
#include "net_json.h"
#include "plan.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "strategy.h"

#include <math.h>

#define FUZZ_MAX_LAYERS 200

static const char cluster_json[] =
    "{\"format\": \"layerwise-cluster/1\", \"name\": \"fuzz-2x2\", \"nodes\": 2, \"gpus_per_node\": 2,"
    " \"gpu\": {\"name\": \"FuzzGPU\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 700,"
    "         \"saturation_gflop\": 1, \"step_overhead_ms\": 1},"
    " \"intra_node\": {\"bandwidth_gbs\": 20, \"latency_us\": 5},"
    " \"inter_node\": {\"bandwidth_gbs\": 10, \"latency_us\": 8, \"nics_per_node\": 1},"
    " \"links\": [{\"gpus\": [0, 3], \"bandwidth_gbs\": 40, \"latency_us\": 2}]}";

static cluster *base;

static void cleanup(void)
{
    cluster_free(base);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    lw_error err = {0};
    base = cluster_from_json(cluster_json, strlen(cluster_json), "fuzz-2x2", &err);
    if (!base) {
        fprintf(stderr, "fuzz_search: %s\n", err.msg);
        abort();
    }
    atexit(cleanup);
    return 0;
}

static int finite_nonneg(double x)
{
    return isfinite(x) && x >= 0;
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(a) > fabs(b) ? fabs(a) : fabs(b)) + 1e-12;
}

static void check_tables(const cost_model *m)
{
    for (int i = 0; i < m->n_layers; i++) {
        FUZZ_CHECK(m->n_configs[i] >= 1, "layer %d has no config", i);
        FUZZ_CHECK(config_tasks(&m->configs[i][0]) == 1, "layer %d: first config is not the single-GPU one", i);
        for (int k = 0; k < m->n_configs[i]; k++) {
            FUZZ_CHECK(config_tasks(&m->configs[i][k]) <= m->gpus, "layer %d config %d: too many tasks", i, k);
            FUZZ_CHECK(finite_nonneg(m->t_c[i][k]), "t_c[%d][%d] = %g", i, k, m->t_c[i][k]);
            FUZZ_CHECK(finite_nonneg(m->t_s[i][k]), "t_s[%d][%d] = %g", i, k, m->t_s[i][k]);
        }
    }
    for (int e = 0; e < m->n_edges; e++) {
        size_t n = (size_t)m->n_configs[m->e_from[e]] * (size_t)m->n_configs[m->e_to[e]];
        for (size_t k = 0; k < n; k++) FUZZ_CHECK(finite_nonneg(m->t_x[e][k]), "t_x[%d][%zu] = %g", e, k, m->t_x[e][k]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    lw_error err = {0};
    network *net = net_from_json(text, size, "fuzz.json", &err);
    free(text);
    if (!net) return 0;
    if (net->n_layers > FUZZ_MAX_LAYERS) {
        net_free(net);
        return 0;
    }
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
    int gpus = 1 + (int)(h % 4);
    static const long batches[] = {0, 1, 3, 7, 0};
    long batch = batches[(h >> 2) % 5];
    if (!batch) batch = 32L * gpus;
    cluster *cl = cluster_clone(base);
    cl->sync = (h >> 5) & 1 ? SYNC_RING_ALLREDUCE : SYNC_PARAMETER_SERVER;

    plan_settings set = {gpus, 0, batch, 0};
    plan *p = plan_open(net, cl, NULL, &(plan_options){.set = set}, &err); /* owns net and cl from here */
    if (!p) {
        /* the only refusal allowed for a loaded network on a small cluster */
        FUZZ_CHECK(strstr(err.msg, "too large") != NULL, "plan_open failed: %s", err.msg);
        return 0;
    }
    const cost_model *m = p->cm;
    check_tables(m);
    const search_result *r = p->sr;
    FUZZ_CHECK(finite_nonneg(r->cost), "optimum %g", r->cost);
    FUZZ_CHECK(close_to(r->cost, cg_evaluate(p->cg, r->config)), "search cost %g is not its evaluation", r->cost);
    FUZZ_CHECK(close_to(r->cost, p->best_eval.total_ms), "search cost %g, strategy total %g", r->cost,
               p->best_eval.total_ms);
    FUZZ_CHECK(finite_nonneg(p->best_eval.peak_memory_bytes), "peak memory %g", p->best_eval.peak_memory_bytes);
    int *best = calloc((size_t)m->n_layers, sizeof(int));
    double bf = search_brute_force(p->cg, best, 20000);
    if (bf >= 0) FUZZ_CHECK(r->cost <= bf * (1 + 1e-9) + 1e-12, "search %.17g, brute force %.17g", r->cost, bf);

    /* baselines */
    int *ci = calloc((size_t)m->n_layers, sizeof(int));
    for (int b = 0; b < BASE__COUNT; b++) {
        strategy_baseline(m, (baseline_kind)b, ci);
        for (int i = 0; i < m->n_layers; i++)
            FUZZ_CHECK(ci[i] >= 0 && ci[i] < m->n_configs[i], "baseline %d layer %d: index %d", b, i, ci[i]);
        strategy_eval ev;
        strategy_evaluate(m, ci, &ev);
        FUZZ_CHECK(finite_nonneg(ev.total_ms), "baseline %d: %g ms", b, ev.total_ms);
        FUZZ_CHECK(ev.total_ms >= r->cost * (1 - 1e-9) - 1e-9, "baseline %d (%g ms) beats the optimum (%g ms)", b,
                   ev.total_ms, r->cost);
        strategy_eval_free(&ev);
    }

    /* the optimum's document reads back to the same configs */
    char *doc = strategy_to_json(m, p->best, &p->best_eval, "elimination", r->n_left, plan_final_method_name(p));
    FUZZ_CHECK(strategy_from_json(m, doc, strlen(doc), "roundtrip.json", ci, &err) == 0,
               "the optimum's document does not read back: %s", err.msg);
    FUZZ_CHECK(memcmp(ci, p->best, sizeof(int) * (size_t)m->n_layers) == 0, "configs changed in the round trip");
    free(doc);

    /* why not the last config of one layer? never better than the optimum,
     * and what the min-marginals say (when the final step allows them) */
    int li = (int)((h >> 7) % (uint32_t)m->n_layers);
    double pinned = plan_cost_with_pin(p, li, m->n_configs[li] - 1, ci);
    if (isfinite(pinned)) FUZZ_CHECK(pinned >= r->cost * (1 - 1e-9) - 1e-12, "a pin beats the optimum");
    double *tot = malloc(sizeof(double) * (size_t)m->n_configs[li]);
    if (plan_whynot_totals(p, li, tot) == 0) {
        double last = tot[m->n_configs[li] - 1];
        FUZZ_CHECK(isfinite(pinned) ? fabs(last - pinned) <= 1e-9 * pinned + 1e-12 : !isfinite(last),
                   "why-not total %.17g, pinned search %.17g", last, pinned);
        FUZZ_CHECK(close_to(tot[p->best[li]], r->cost), "the optimum's own config: %.17g vs %.17g",
                   tot[p->best[li]], r->cost);
    }
    free(tot);

    /* sync what-if: the fast path's t_s equals a fresh model's */
    /* any other scheme, the sharded ones included (never the one in use) */
    sync_scheme other = (sync_scheme)((p->cl->sync + 1 + (h >> 6) % (SYNC__COUNT - 1)) % SYNC__COUNT);
    double ts0 = m->t_s[0][m->n_configs[0] - 1];
    if (plan_apply(p, &(plan_change){.sync_set = 1, .sync = other}, &err) == 0) {
        cost_model *fresh = cost_model_build(p->net, p->cl, NULL, p->gpus, p->batch, &err);
        FUZZ_CHECK(fresh != NULL, "rebuild: %s", err.msg);
        for (int i = 0; i < m->n_layers; i++)
            for (int k = 0; k < m->n_configs[i]; k++)
                FUZZ_CHECK(close_to(p->cm->t_s[i][k], fresh->t_s[i][k]), "t_s[%d][%d] %g after the what-if, %g fresh",
                           i, k, p->cm->t_s[i][k], fresh->t_s[i][k]);
        cost_model_free(fresh);
    } else {
        FUZZ_CHECK(strstr(err.msg, "too large") != NULL, "the sync what-if failed: %s", err.msg);
        FUZZ_CHECK(p->cl->sync != other && p->cm->t_s[0][m->n_configs[0] - 1] == ts0,
                   "a failed sync what-if changed the plan");
    }
    free(ci);
    free(best);
    plan_free(p);
    return 0;
}
