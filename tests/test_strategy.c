/*
 * Integration tests: the search optimum through the plan, strategy
 * evaluation, the baselines, the "layerwise-strategy/1" document (written
 * and read back), bad strategy files, and brute force over the cost model's
 * own tables on small networks.
 *
 * Run from the repository root (make check does).
 */
#include <criterion/criterion.h>

#include "net_json.h"
#include "plan.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "test_helpers.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FIX "tests/fixtures/"
#define BAD FIX "bad/"

/* Bare names (plan_load_network("vgg16")) resolve to this tree's data/,
 * not to an installed copy, unless LAYERWISE_DATA says otherwise. */
__attribute__((constructor)) static void use_this_trees_data(void)
{
    setenv("LAYERWISE_DATA", "data", 0);
}

/* ---------------------------------------------------------------- helpers */

static double graph_cost(const cost_model *m, const int *ci)
{
    cost_graph *g = cost_model_graph(m);
    double v = cg_evaluate(g, ci);
    cg_free(g);
    return v;
}

/* Eq. 1 summed by hand from the model's tables. */
static double eq1(const cost_model *m, const int *ci)
{
    double t = 0;
    for (int i = 0; i < m->n_layers; i++) t += m->t_c[i][ci[i]] + m->t_s[i][ci[i]];
    for (int e = 0; e < m->n_edges; e++) t += m->t_x[e][ci[m->e_from[e]] * m->n_configs[m->e_to[e]] + ci[m->e_to[e]]];
    return t;
}

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    cr_assert_not_null(v, "JSON lacks \"%s\"", k);
    return v;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    cr_assert(cJSON_IsNumber(v), "\"%s\" is not a number", k);
    return v->valuedouble;
}

static int pow2_floor(long x)
{
    int p = 1;
    while ((long)p * 2 <= x) p *= 2;
    return p;
}

/* The strategy document has every field design.md lists, and its numbers
 * are those of the evaluation. */
static void check_document(const plan *p, const int *ci, const strategy_eval *ev, const char *doc,
                           const char *algorithm, int nodes_left)
{
    const cost_model *m = p->cm;
    cJSON *root = cJSON_Parse(doc);
    cr_assert_not_null(root, "strategy_to_json wrote invalid JSON");
    cr_assert_str_eq(get(root, "format")->valuestring, "layerwise-strategy/1");
    cr_assert_str_eq(get(root, "network")->valuestring, p->net->name);
    cr_assert_str_eq(get(root, "cluster")->valuestring, p->cl->name);
    cr_assert_eq((int)num(root, "gpus"), p->gpus);
    cr_assert_eq((long)num(root, "batch"), p->batch);
    cr_assert_str_eq(get(root, "algorithm")->valuestring, algorithm);
    if (nodes_left >= 0) cr_assert_eq((int)num(root, "nodes_left"), nodes_left);
    const cJSON *layers = get(root, "layers");
    cr_assert(cJSON_IsArray(layers));
    cr_assert_eq(cJSON_GetArraySize(layers), m->n_layers, "every layer, the input included, is listed");
    int i = 0;
    double sum_c = 0, sum_s = 0, sum_x = 0;
    for (const cJSON *l = layers->child; l; l = l->next, i++) {
        const layer *ly = &p->net->layers[i];
        const config *c = &m->configs[i][ci[i]];
        cr_assert_str_eq(get(l, "name")->valuestring, ly->name);
        const cJSON *cfg = get(l, "config");
        cr_assert(cJSON_IsObject(cfg));
        int keys = 0;
        for (const cJSON *d = cfg->child; d; d = d->next) {
            keys++;
            cr_assert_eq(strlen(d->string), 1);
            int dim = (int)(strchr("nchw", d->string[0]) - "nchw");
            cr_assert(dim >= 0 && dim < NDIMS && (ly->dims & DIMMASK(dim)), "%s: config names dimension %s", ly->name,
                      d->string);
            cr_assert_eq((int)d->valuedouble, c->deg[dim]);
        }
        cr_assert_eq(keys, __builtin_popcount(ly->dims), "%s: the config names its parallelizable dimensions",
                     ly->name);
        const cJSON *dev = get(l, "devices");
        cr_assert_eq(cJSON_GetArraySize(dev), config_tasks(c));
        int k = 0;
        for (const cJSON *d = dev->child; d; d = d->next, k++) cr_assert_eq((int)d->valuedouble, k);
        ASSERT_REL(num(l, "compute_ms"), ev->layers[i].compute_ms, 1e-12);
        ASSERT_REL(num(l, "sync_ms"), ev->layers[i].sync_ms, 1e-12);
        ASSERT_REL(num(l, "transfer_ms"), ev->layers[i].transfer_ms, 1e-12);
        sum_c += num(l, "compute_ms");
        sum_s += num(l, "sync_ms");
        sum_x += num(l, "transfer_ms");
    }
    /* the input comes first */
    cr_assert_eq(p->net->layers[0].type, LT_INPUT);
    cr_assert_str_eq(get(layers->child, "name")->valuestring, p->net->layers[0].name);
    ASSERT_REL(num(root, "total_ms"), ev->total_ms, 1e-12);
    ASSERT_REL(num(root, "compute_ms"), sum_c, 1e-9);
    ASSERT_REL(num(root, "sync_ms") + 1, sum_s + 1, 1e-9);
    ASSERT_REL(num(root, "transfer_ms") + 1, sum_x + 1, 1e-9);
    ASSERT_REL(num(root, "total_ms"), num(root, "compute_ms") + num(root, "sync_ms") + num(root, "transfer_ms"), 1e-9);
    cr_assert(fabs(num(root, "images_per_s") - p->batch / (ev->total_ms * 1e-3)) <= 0.05 + 1e-9,
              "images_per_s %.3f, batch / step = %.3f", num(root, "images_per_s"), p->batch / (ev->total_ms * 1e-3));
    cr_assert(fabs(num(root, "bytes_per_step") - ev->bytes_per_step) <= 0.5);
    cr_assert(fabs(num(root, "peak_memory_bytes") - ev->peak_memory_bytes) <= 0.5);
    cr_assert(num(root, "peak_memory_bytes") > 0);
    cJSON_Delete(root);
}

/* ------------------------------------------------------ the search's optimum */

static void check_optimum(const char *netname, const char *clname, int gpus)
{
    plan *p = open_plan(netname, clname, gpus, 0);
    const cost_model *m = p->cm;
    cr_assert_eq(p->gpus, gpus);
    cr_assert_eq(p->batch, 32L * gpus);
    cr_assert_not_null(p->sr);
    double opt = p->sr->cost;
    /* search cost == the graph's evaluation == Eq. 1 by hand == strategy_evaluate */
    for (int i = 0; i < m->n_layers; i++) {
        cr_assert(p->best[i] >= 0 && p->best[i] < m->n_configs[i]);
        cr_assert_eq(p->best[i], p->sr->config[i]);
    }
    ASSERT_REL(cg_evaluate(p->cg, p->best), opt, 1e-9);
    ASSERT_REL(graph_cost(m, p->best), opt, 1e-9);
    ASSERT_REL(eq1(m, p->best), opt, 1e-9);
    ASSERT_REL(p->best_eval.total_ms, opt, 1e-9);
    ASSERT_REL(p->best_eval.total_ms, p->best_eval.compute_ms + p->best_eval.sync_ms + p->best_eval.transfer_ms, 1e-12);
    ASSERT_REL(p->best_eval.images_per_s, p->batch / (p->best_eval.total_ms * 1e-3), 1e-12);
    /* per-layer transfer is the t_x of the layer's incoming edges */
    for (int i = 0; i < m->n_layers; i++) {
        double tx = 0;
        for (int e = 0; e < m->n_edges; e++)
            if (m->e_to[e] == i) tx += m->t_x[e][p->best[m->e_from[e]] * m->n_configs[i] + p->best[i]];
        ASSERT_REL(p->best_eval.layers[i].transfer_ms + 1, tx + 1, 1e-12);
        cr_assert_eq(p->best_eval.layers[i].compute_ms, m->t_c[i][p->best[i]]);
        cr_assert_eq(p->best_eval.layers[i].sync_ms, m->t_s[i][p->best[i]]);
    }
    cr_assert(p->best_eval.peak_memory_bytes > 0);
    ASSERT_REL(p->best_eval.peak_memory_bytes, cost_memory(m, p->best, NULL), 1e-12);

    /* no baseline beats it; each baseline's configs are valid and as
     * documented */
    int G = pow2_floor(gpus);
    int *ci = calloc((size_t)m->n_layers, sizeof(int));
    int first_linear = m->n_layers;
    for (int i = 0; i < m->n_layers; i++)
        if (p->net->layers[i].type == LT_LINEAR) {
            first_linear = i;
            break;
        }
    for (int b = 0; b < BASE__COUNT; b++) {
        strategy_baseline(m, (baseline_kind)b, ci);
        for (int i = 0; i < m->n_layers; i++) {
            cr_assert(ci[i] >= 0 && ci[i] < m->n_configs[i], "%s: layer %d config %d of %d", baseline_name(b), i,
                      ci[i], m->n_configs[i]);
            const config *c = &m->configs[i][ci[i]];
            const layer *l = &p->net->layers[i];
            int model = b == BASE_MODEL || (b == BASE_OWT && i >= first_linear);
            if (model) {
                int want = G;
                while (want > l->out.c) want /= 2;
                cr_assert(c->deg[DIM_C] == want && c->deg[DIM_N] == 1 && c->deg[DIM_H] == 1 && c->deg[DIM_W] == 1,
                          "%s: %s should be c%d", baseline_name(b), l->name, want);
            } else {
                cr_assert(c->deg[DIM_N] == G && c->deg[DIM_C] == 1 && c->deg[DIM_H] == 1 && c->deg[DIM_W] == 1,
                          "%s: %s should be n%d", baseline_name(b), l->name, G);
            }
        }
        strategy_eval ev;
        strategy_evaluate(m, ci, &ev);
        cr_assert(ev.total_ms >= opt * (1 - 1e-12), "%s on %d GPUs: baseline %s (%.6f ms) beats the optimum (%.6f ms)",
                  netname, gpus, baseline_name(b), ev.total_ms, opt);
        ASSERT_REL(ev.total_ms, eq1(m, ci), 1e-9);
        strategy_eval_free(&ev);
    }

    /* the document, and reading it back */
    char *doc = strategy_to_json(m, p->best, &p->best_eval, "elimination", p->sr->n_left, plan_final_method_name(p));
    check_document(p, p->best, &p->best_eval, doc, "elimination", p->sr->n_left);
    lw_error err = {0};
    for (int i = 0; i < m->n_layers; i++) ci[i] = -1;
    cr_assert_eq(strategy_from_json(m, doc, strlen(doc), "doc.json", ci, &err), 0, "%s", err.msg);
    for (int i = 0; i < m->n_layers; i++) cr_assert_eq(ci[i], p->best[i], "layer %d read back differently", i);
    free(doc);
    free(ci);
    plan_free(p);
}

Test(optimum, lenet5_on_4_gpus)
{
    check_optimum("lenet5", "p100-4x4", 4);
}

Test(optimum, alexnet_on_4_gpus)
{
    check_optimum("alexnet", "p100-4x4", 4);
}

Test(optimum, alexnet_on_16_gpus)
{
    check_optimum("alexnet", "p100-4x4", 16);
}

Test(optimum, vgg16_on_4_gpus_ring_allreduce)
{
    check_optimum("vgg16", "workstation-4x-pcie", 4);
}

Test(optimum, inception_v3_on_4_gpus)
{
    check_optimum("inception_v3", "p100-4x4", 4);
}

Test(optimum, resnet50_on_4_gpus_ring_allreduce)
{
    check_optimum("resnet50", "workstation-4x-pcie", 4);
}

Test(optimum, lenet5_on_6_gpus_not_a_power_of_two)
{
    check_optimum("lenet5", "p100-4x4", 6);
}

Test(optimum, one_gpu_every_strategy_is_the_same)
{
    plan *p = open_plan("alexnet", "p100-4x4", 1, 0);
    const cost_model *m = p->cm;
    for (int i = 0; i < m->n_layers; i++) cr_assert_eq(m->n_configs[i], 1);
    cr_assert_eq(p->best_eval.sync_ms, 0);
    cr_assert_eq(p->best_eval.transfer_ms, 0);
    cr_assert_eq(p->best_eval.bytes_per_step, 0);
    int *ci = calloc((size_t)m->n_layers, sizeof(int));
    for (int b = 0; b < BASE__COUNT; b++) {
        strategy_baseline(m, (baseline_kind)b, ci);
        strategy_eval ev;
        strategy_evaluate(m, ci, &ev);
        cr_assert_eq(ev.total_ms, p->best_eval.total_ms);
        strategy_eval_free(&ev);
    }
    free(ci);
    plan_free(p);
}

/* ------------------------------------------ brute force on small networks */

static void check_brute_force(const char *path, const char *clname, int gpus, long global_batch)
{
    plan *p = open_plan(path, clname, gpus, global_batch);
    const cost_model *m = p->cm;
    cost_graph *g = cost_model_graph(m);
    double space = 1;
    for (int i = 0; i < g->n_nodes; i++) space *= g->n_configs[i];
    cr_assert(space <= 2e7, "%s on %d GPUs: %g strategies, too many to brute-force in a test", path, gpus, space);
    int *best = calloc((size_t)g->n_nodes, sizeof(int));
    double bf = search_brute_force(g, best, 2e7);
    cr_assert(bf >= 0, "brute force refused");
    ASSERT_REL(cg_evaluate(g, best), bf, 1e-12);
    ASSERT_REL(p->sr->cost, bf, 1e-9);
    ASSERT_REL(p->best_eval.total_ms, bf, 1e-9);
    /* an independent exhaustive minimum (odometer over every assignment),
     * where that is quick */
    if (space <= 1e6) {
        int *a = calloc((size_t)g->n_nodes, sizeof(int));
        double mn = INFINITY;
        for (;;) {
            double v = eq1(m, a);
            if (v < mn) mn = v;
            int i = 0;
            while (i < g->n_nodes && ++a[i] == g->n_configs[i]) a[i++] = 0;
            if (i == g->n_nodes) break;
        }
        ASSERT_REL(mn, bf, 1e-9);
        free(a);
    }
    free(best);
    cg_free(g);
    plan_free(p);
}

Test(brute_force, branchy_on_2_gpus)
{
    check_brute_force(FIX "nets/branchy.json", "p100-4x4", 2, 0);
}

Test(brute_force, branchy_on_4_gpus)
{
    check_brute_force(FIX "nets/branchy.json", FIX "clusters/uniform4.json", 4, 2);
}

Test(brute_force, k4_on_2_gpus_does_not_reduce)
{
    plan *p = open_plan(FIX "nets/k4.json", "p100-4x4", 2, 0);
    cr_assert(p->sr->n_left >= 4, "a K4 cannot be reduced to %d nodes", p->sr->n_left);
    plan_free(p);
    check_brute_force(FIX "nets/k4.json", "p100-4x4", 2, 0);
}

Test(brute_force, k4_on_4_gpus)
{
    check_brute_force(FIX "nets/k4.json", FIX "clusters/uniform4.json", 4, 2);
}

Test(brute_force, mlp_branch_on_4_gpus_ps_and_ring)
{
    /* parameter server (p100-4x4) and ring all-reduce (the workstation) */
    check_brute_force(FIX "nets/mlp_branch.json", "p100-4x4", 4, 0);
    check_brute_force(FIX "nets/mlp_branch.json", "workstation-4x-pcie", 4, 0);
}

Test(brute_force, lenet5_on_2_gpus)
{
    check_brute_force("lenet5", "p100-4x4", 2, 0);
}

/* -------------------------------------------------- strategy files and pins */

Test(strategy_file, a_hand_written_file_reads_in_any_order)
{
    plan *p = open_plan("lenet5", "p100-4x4", 4, 0);
    const cost_model *m = p->cm;
    size_t len;
    char *text = slurp(FIX "strategies/lenet5_mixed.json", &len);
    int *ci = calloc((size_t)m->n_layers, sizeof(int));
    lw_error err = {0};
    cr_assert_eq(strategy_from_json(m, text, len, FIX "strategies/lenet5_mixed.json", ci, &err), 0, "%s", err.msg);
    const struct {
        const char *name;
        config c;
    } want[] = {
        {"data", {{4, 1, 1, 1, 1, 1}}},  {"conv1", {{4, 1, 1, 1, 1, 1}}}, {"pool1", {{2, 1, 2, 1, 1, 1}}}, {"conv2", {{1, 1, 2, 2, 1, 1}}},
        {"pool2", {{1, 4, 1, 1, 1, 1}}}, {"flat", {{4, 1, 1, 1, 1, 1}}},  {"fc1", {{1, 4, 1, 1, 1, 1}}},   {"fc2", {{1, 2, 1, 1, 1, 1}}},
        {"fc3", {{2, 2, 1, 1, 1, 1}}},   {"prob", {{1, 1, 1, 1, 1, 1}}},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int li = net_find(p->net, want[k].name);
        cr_assert(li >= 0);
        cr_assert(config_equal(&m->configs[li][ci[li]], &want[k].c), "%s read wrongly", want[k].name);
    }
    strategy_eval ev;
    strategy_evaluate(m, ci, &ev);
    ASSERT_REL(ev.total_ms, eq1(m, ci), 1e-12);
    cr_assert(ev.total_ms >= p->sr->cost * (1 - 1e-12));
    /* written out and read back: the same configs */
    char *doc = strategy_to_json(m, ci, &ev, "file", -1, NULL);
    check_document(p, ci, &ev, doc, "file", -1);
    int *back = calloc((size_t)m->n_layers, sizeof(int));
    cr_assert_eq(strategy_from_json(m, doc, strlen(doc), "back.json", back, &err), 0, "%s", err.msg);
    cr_assert_eq(memcmp(back, ci, sizeof(int) * (size_t)m->n_layers), 0);
    free(back);
    free(doc);
    strategy_eval_free(&ev);
    free(ci);
    free(text);
    plan_free(p);
}

static void expect_strategy_error(const char *file, const char *const *needles)
{
    plan *p = open_plan("lenet5", "p100-4x4", 4, 0);
    size_t len;
    char *text = slurp(file, &len);
    int *ci = calloc((size_t)p->net->n_layers, sizeof(int));
    lw_error err = {0};
    cr_assert_neq(strategy_from_json(p->cm, text, len, file, ci, &err), 0, "%s was accepted", file);
    cr_assert_eq(err.code, 2, "%s: code %d", file, err.code);
    cr_assert(strstr(err.msg, file) != NULL, "message does not name the file: %s", err.msg);
    for (; *needles; needles++) cr_assert(strstr(err.msg, *needles) != NULL, "\"%s\" lacks \"%s\"", err.msg, *needles);
    free(ci);
    free(text);
    plan_free(p);
}

#define EXPECT_STRATEGY_ERROR(file, ...)                                                                           \
    do {                                                                                                           \
        const char *const needles_[] = {__VA_ARGS__, NULL};                                                        \
        expect_strategy_error(BAD file, needles_);                                                                 \
    } while (0)

Test(bad_strategy, unknown_layer)
{
    EXPECT_STRATEGY_ERROR("strategy_unknown_layer.json", BAD "strategy_unknown_layer.json:16: layer \"fc4\"",
                          "lenet5");
}

Test(bad_strategy, missing_layer)
{
    EXPECT_STRATEGY_ERROR("strategy_missing_layer.json", "\"pool2\"", "missing");
}

Test(bad_strategy, degree_3)
{
    EXPECT_STRATEGY_ERROR("strategy_degree3.json", BAD "strategy_degree3.json:8: layer \"conv1\"", "n3");
}

Test(bad_strategy, more_tasks_than_gpus)
{
    EXPECT_STRATEGY_ERROR("strategy_too_many_gpus.json", BAD "strategy_too_many_gpus.json:8: layer \"conv1\"", "n4 c2");
}

Test(bad_strategy, h_split_of_a_linear_layer)
{
    EXPECT_STRATEGY_ERROR("strategy_h_on_linear.json", BAD "strategy_h_on_linear.json:13: layer \"fc1\"", "linear",
                          "h");
}

Test(bad_strategy, unknown_dimension)
{
    EXPECT_STRATEGY_ERROR("strategy_bad_dimension.json", BAD "strategy_bad_dimension.json:14: layer \"fc2\"", "\"q\"");
}

/* x (replicas) is a degree of sequence layers only: a CNN layer refuses it */
Test(bad_strategy, replicas_on_a_cnn_layer)
{
    EXPECT_STRATEGY_ERROR("strategy_replica_cnn.json", BAD "strategy_replica_cnn.json:14: layer \"fc2\"",
                          "a linear layer cannot be split on x");
}

Test(bad_strategy, bad_config_string)
{
    EXPECT_STRATEGY_ERROR("strategy_bad_string.json", BAD "strategy_bad_string.json:15: layer \"fc3\"", "n2 q4");
}

Test(bad_strategy, listed_twice)
{
    EXPECT_STRATEGY_ERROR("strategy_listed_twice.json", "layer \"conv1\"", "twice");
}

Test(bad_strategy, wrong_format)
{
    EXPECT_STRATEGY_ERROR("strategy_wrong_format.json", "layerwise-strategy/1");
}

Test(bad_strategy, malformed_json)
{
    EXPECT_STRATEGY_ERROR("strategy_malformed.json", BAD "strategy_malformed.json:6:65:", "malformed JSON");
}

Test(bad_strategy, a_strategy_for_another_gpu_count)
{
    /* data parallelism on 4 GPUs (n4 everywhere) is not valid on 2 */
    plan *p4 = open_plan("alexnet", "p100-4x4", 4, 0);
    int *d4 = calloc((size_t)p4->net->n_layers, sizeof(int));
    strategy_baseline(p4->cm, BASE_DATA, d4);
    strategy_eval ev;
    strategy_evaluate(p4->cm, d4, &ev);
    char *doc = strategy_to_json(p4->cm, d4, &ev, "data", -1, NULL);
    strategy_eval_free(&ev);
    free(d4);
    plan *p2 = open_plan("alexnet", "p100-4x4", 2, 0);
    int *ci = calloc((size_t)p2->net->n_layers, sizeof(int));
    lw_error err = {0};
    cr_assert_neq(strategy_from_json(p2->cm, doc, strlen(doc), "four.json", ci, &err), 0);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "four.json") && strstr(err.msg, "layer \""), "%s", err.msg);
    free(ci);
    free(doc);
    plan_free(p2);
    plan_free(p4);
}

/* Why-not totals for every config at once (min-marginals) equal one pinned
 * search per config, on real cost tables, with another layer pinned too.
 * The paper's search (no memory limit): under a limit that may bind there
 * are no min-marginals (Inception-v3's 311 layers on 4 P100s: the largest
 * config of every layer together would not fit 16 GiB). */
static void check_whynot(const char *net, int gpus, const char *const *layers, int n_layers, const char *pin_layer)
{
    plan *p = open_plan(net, "p100-4x4", gpus, 0);
    {
        plan_memory_settings none = {.limit = -1};
        lw_error err = {0};
        cr_assert_eq(plan_apply(p, &(plan_change){.mem = &none}, &err), 0, "%s", err.msg);
    }
    if (pin_layer) {
        int pl = net_find(p->net, pin_layer);
        cr_assert(pl >= 0);
        plan_pin pin = {pl, p->best[pl] == 0 ? 1 : 0};
        lw_error err = {0};
        cr_assert_eq(plan_apply(p, &(plan_change){.n_pins = 1, .pins = &pin}, &err), 0, "%s", err.msg);
    }
    for (int q = 0; q < n_layers; q++) {
        int li = net_find(p->net, layers[q]);
        cr_assert(li >= 0, "%s", layers[q]);
        double *tot = malloc(sizeof(double) * (size_t)p->cm->n_configs[li]);
        cr_assert_eq(plan_whynot_totals(p, li, tot), 0, "%s on %d GPUs, %s: no min-marginals (the memory limit may bind)",
                     net, gpus, layers[q]);
        for (int k = 0; k < p->cm->n_configs[li]; k++) {
            double one = plan_cost_with_pin(p, li, k, NULL);
            if (isinf(one)) cr_assert(isinf(tot[k]), "%s %s config %d: %g, one search +inf", net, layers[q], k, tot[k]);
            else ASSERT_REL(tot[k], one, 1e-9);
        }
        free(tot);
    }
    plan_free(p);
}

Test(pins, whynot_totals_equal_one_search_per_config)
{
    const char *alex[] = {"data", "conv1", "conv3", "fc6", "prob"};
    check_whynot("alexnet", 4, alex, 5, NULL);
    check_whynot("alexnet", 16, alex, 5, "fc7");
    const char *inc[] = {"mixed_5b/branch5x5_2", "mixed_6a/concat", "mixed_7c/branch3x3dbl_3a", "fc"};
    check_whynot("inception_v3", 4, inc, 4, "mixed_6e/branch7x7_2");
    const char *res[] = {"layer2.0.conv1", "layer3.1.add", "fc"};
    check_whynot("resnet50", 2, res, 3, NULL);
}

Test(pins, pinning_a_layer_never_beats_the_optimum)
{
    plan *p = open_plan("alexnet", "p100-4x4", 4, 0);
    double opt = p->sr->cost;
    int li = net_find(p->net, "fc6");
    cr_assert(li >= 0);
    int *cfg = calloc((size_t)p->net->n_layers, sizeof(int));
    for (int k = 0; k < p->cm->n_configs[li]; k++) {
        double c = plan_cost_with_pin(p, li, k, cfg);
        cr_assert(c >= opt * (1 - 1e-12), "pinning fc6 to config %d gives %.9f < optimum %.9f", k, c, opt);
        cr_assert_eq(cfg[li], k);
        ASSERT_REL(eq1(p->cm, cfg), c, 1e-9);
        if (k == p->best[li]) ASSERT_REL(c, opt, 1e-9);
    }
    /* a pin through the plan */
    int worst = p->best[li] == 0 ? 1 : 0;
    plan_pin pin = {li, worst};
    lw_error err = {0};
    cr_assert_eq(plan_apply(p, &(plan_change){.n_pins = 1, .pins = &pin}, &err), 0, "%s", err.msg);
    cr_assert_eq(p->pinned[li], worst);
    cr_assert_eq(p->best[li], worst);
    ASSERT_REL(p->best_eval.total_ms, plan_cost_with_pin(p, li, worst, NULL), 1e-9);
    cr_assert(p->best_eval.total_ms >= opt * (1 - 1e-12));
    ASSERT_REL(p->best_eval.total_ms, eq1(p->cm, p->best), 1e-9);
    /* and unpinned again: the optimum comes back */
    pin.config = -1;
    cr_assert_eq(plan_apply(p, &(plan_change){.n_pins = 1, .pins = &pin}, &err), 0, "%s", err.msg);
    cr_assert_eq(p->pinned[li], -1);
    ASSERT_REL(p->best_eval.total_ms, opt, 1e-9);
    free(cfg);
    plan_free(p);
}

/* ------------------------------------------------------------ baselines */

Test(baselines, names_and_nearest_configs)
{
    cr_assert_eq(baseline_from_name("data"), BASE_DATA);
    cr_assert_eq(baseline_from_name("model"), BASE_MODEL);
    cr_assert_eq(baseline_from_name("owt"), BASE_OWT);
    cr_assert_eq(baseline_from_name("layer-wise"), -1);
    cr_assert_str_eq(baseline_name(BASE_OWT), "owt");
    plan *p = open_plan("lenet5", "p100-4x4", 4, 0);
    const cost_model *m = p->cm;
    int fc3 = net_find(p->net, "fc3"), data = 0;
    /* a wish beyond the GPUs or the dimension falls back to a valid config */
    config want = {{16, 1, 1, 1, 1, 1}};
    int k = strategy_find_config(m, fc3, &want);
    cr_assert(config_equal(&m->configs[fc3][k], &(config){{4, 1, 1, 1, 1, 1}}));
    config wide = {{1, 4, 1, 1, 1, 1}}; /* the input has 1 channel */
    k = strategy_find_config(m, data, &wide);
    cr_assert(config_equal(&m->configs[data][k], &(config){{1, 1, 1, 1, 1, 1}}));
    config hw = {{1, 1, 2, 2, 1, 1}};
    k = strategy_find_config(m, data, &hw);
    cr_assert(config_equal(&m->configs[data][k], &hw));
    plan_free(p);
}

Test(baselines, small_batch_limits_data_parallelism)
{
    /* a global batch of 2 on 4 GPUs: data parallelism can use 2 of them */
    plan *p = open_plan("lenet5", "p100-4x4", 4, 2);
    cr_assert_eq(p->batch, 2);
    int *ci = calloc((size_t)p->net->n_layers, sizeof(int));
    strategy_baseline(p->cm, BASE_DATA, ci);
    for (int i = 0; i < p->net->n_layers; i++) cr_assert_eq(p->cm->configs[i][ci[i]].deg[DIM_N], 2);
    free(ci);
    plan_free(p);
}

/* ---------------------------------------------------------- plan settings */

Test(plan, rebuild_for_other_gpu_counts_and_batches)
{
    plan *p = open_plan("lenet5", "p100-4x4", 0, 0);
    cr_assert_eq(p->gpus, 16);
    cr_assert_eq(p->batch, 512);
    lw_error err = {0};
    plan_settings s = p->set;
    s.gpus = 2;
    s.batch_per_gpu = 64;
    cr_assert_eq(plan_apply(p, &(plan_change){.set = &s}, &err), 0, "%s", err.msg);
    cr_assert_eq(p->gpus, 2);
    cr_assert_eq(p->batch, 128);
    ASSERT_REL(p->best_eval.total_ms, p->sr->cost, 1e-9);
    s.gpus = 17;
    cr_assert_neq(plan_apply(p, &(plan_change){.set = &s}, &err), 0);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "17") != NULL, "%s", err.msg);
    plan_free(p);

    s = (plan_settings){.gpus = 8, .batch_per_gpu = 0, .global_batch = 100};
    cr_assert_eq(plan_batch_for(&s, 8), 100);
    s.global_batch = 0;
    cr_assert_eq(plan_batch_for(&s, 8), 8L * DEFAULT_BATCH_PER_GPU);
    s.batch_per_gpu = 3;
    cr_assert_eq(plan_batch_for(&s, 8), 24);
}

Test(plan, missing_names_are_reported)
{
    lw_error err = {0};
    cr_assert_null(plan_load_network("no_such_network", &err));
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "no_such_network") && strstr(err.msg, "vgg16"), "%s", err.msg);
    cr_assert_null(plan_load_cluster("no_such_cluster", &err));
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "p100-4x4"), "%s", err.msg);
    cr_assert_null(plan_load_network(BAD "net_cycle.json", &err));
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, BAD "net_cycle.json"), "%s", err.msg);
}

/* ------------------------------------------------------------- prefetch */

static void expect_same_as_fresh(plan *p, const char *net)
{
    plan *fresh = open_plan(net, "p100-4x4", p->gpus, p->batch);
    cr_expect_eq(fresh->batch, p->batch);
    ASSERT_REL(p->best_eval.total_ms, fresh->best_eval.total_ms, 1e-12);
    for (int i = 0; i < p->net->n_layers; i++)
        cr_expect(config_equal(&p->cm->configs[i][p->best[i]], &fresh->cm->configs[i][fresh->best[i]]),
                  "layer %d differs from a fresh build", i);
    plan_free(fresh);
}

static void post_tui_list(plan *p)
{
    plan_prefetch_item next[4];
    for (int i = 0; i < 4; i++) next[i] = (plan_prefetch_item){p->set, NULL};
    next[0].set.gpus = 8;
    next[1].set.batch_per_gpu = 64;
    next[2].set.batch_per_gpu = 16;
    next[3].set.gpus = 4;
    plan_prefetch_list(p, next, 4);
}

/* The person reads the screen while the queue is built. */
static void wait_prefetch(plan *p)
{
    struct timespec tick = {0, 20 * 1000 * 1000};
    for (int k = 0; k < 3000 && plan_prefetch_pending(p); k++) nanosleep(&tick, NULL);
    cr_assert_eq(plan_prefetch_pending(p), 0, "the prefetch queue did not finish in a minute");
}

/* plan_apply of new run settings: gpus and batch_per_gpu, the rest kept. */
static int apply_set(plan *p, int gpus, long batch_per_gpu, lw_error *err)
{
    plan_settings s = p->set;
    s.gpus = gpus;
    s.batch_per_gpu = batch_per_gpu;
    return plan_apply(p, &(plan_change){.set = &s}, err);
}

/* plan_apply of the plan's cluster with the inter-node bandwidth scaled. */
static int apply_inter_bw(plan *p, double factor, int gpus, lw_error *err)
{
    cluster *c = cluster_clone(p->cl);
    c->inter.bandwidth_gbs *= factor;
    plan_settings s = p->set;
    s.gpus = gpus;
    int rc = plan_apply(p, &(plan_change){.set = &s, .cl = c}, err);
    cluster_free(c);
    return rc;
}

/* A new cluster with other GPUs: the memory limit is its GPUs' memory,
 * not that of the cluster it replaces. */
Test(plan, a_new_cluster_brings_its_own_memory_limit)
{
    plan *p = open_plan("alexnet", "p100-4x4", 16, 0);
    lw_error err = {0};
    cluster *ws = plan_load_cluster("workstation-4x-pcie", &err);
    cr_assert_not_null(ws, "%s", err.msg);
    double gib = 1073741824.0, want = ws->gpu.memory_gib * gib;
    cr_assert_neq(want, p->cl->gpu.memory_gib * gib, "the two clusters' GPUs differ in memory");
    plan_settings s = p->set;
    s.gpus = 4;
    cr_assert_eq(plan_apply(p, &(plan_change){.set = &s, .cl = ws}, &err), 0, "%s", err.msg);
    cr_assert_eq(p->mem.limit_bytes, want, "limit %.0f, the workstation's GPUs have %.0f", p->mem.limit_bytes, want);
    cr_assert_eq(p->mem.limit_bytes, plan_memory_limit(&p->mset, p->cl));
    cluster_free(ws);
    plan_free(p);
}

/* What-if states (undo): every state put back, last first, gives the
 * same plan as it was, to the bit, pins the current model lacks included;
 * a pin alone comes back by the search only. */
Test(plan, states_put_back_give_the_same_plans)
{
    plan *p = open_plan("alexnet", "p100-4x4", 16, 0);
    lw_error err = {0};
    int L = p->net->n_layers, fc6 = net_find(p->net, "fc6");
    enum { N = 6 };
    plan_state st[N];
    double total[N];
    int *best[N];
    st[0] = plan_state_get(p);
    /* fc6 pinned to a config on all 16 GPUs, which 8 GPUs lack */
    int k16 = -1;
    for (int k = 0; k < p->cm->n_configs[fc6] && k16 < 0; k++)
        if (config_tasks(&p->cm->configs[fc6][k]) == 16 && k != p->best[fc6]) k16 = k;
    cr_assert(k16 >= 0);
    plan_pin pin = {fc6, k16};
    cr_assert_eq(plan_apply(p, &(plan_change){.n_pins = 1, .pins = &pin}, &err), 0, "%s", err.msg);
    st[1] = plan_state_get(p);
    cr_assert_eq(apply_set(p, 8, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(plan_pin_count(p), 0, "8 GPUs have no 16-task config: the pin is dropped");
    st[2] = plan_state_get(p);
    sync_scheme other = p->cl->sync == SYNC_RING_ALLREDUCE ? SYNC_PARAMETER_SERVER : SYNC_RING_ALLREDUCE;
    cr_assert_eq(plan_apply(p, &(plan_change){.sync_set = 1, .sync = other}, &err), 0, "%s", err.msg);
    st[3] = plan_state_get(p);
    plan_memory_settings m = p->mset;
    m.limit = 2.0 * 1073741824.0;
    cr_assert_eq(plan_apply(p, &(plan_change){.mem = &m}, &err), 0, "%s", err.msg);
    st[4] = plan_state_get(p);
    cr_assert_eq(apply_inter_bw(p, 0.25, 8, &err), 0, "%s", err.msg);
    st[5] = plan_state_get(p);
    for (int i = 0; i < N; i++) cr_assert(i == N - 1 || !plan_state_is(p, &st[i]), "state %d differs from the last", i);
    cr_assert(plan_state_is(p, &st[N - 1]));
    /* record each state's plan by putting them back in turn, first to last */
    for (int i = N - 1; i >= 0; i--) {
        plan_change c = plan_state_change(p, &st[i]);
        cr_assert_eq(plan_apply(p, &c, &err), 0, "state %d: %s", i, err.msg);
        cr_assert(plan_state_is(p, &st[i]), "state %d is back", i);
        total[i] = p->best_eval.total_ms;
        best[i] = malloc(sizeof(int) * (size_t)L);
        memcpy(best[i], p->best, sizeof(int) * (size_t)L);
    }
    cr_assert_eq(p->gpus, 16);
    cr_assert_eq(plan_pin_count(p), 0);
    /* forward again (redo) and back again (undo): the same numbers */
    for (int round = 0; round < 2; round++)
        for (int j = 1; j < 2 * N - 1; j++) {
            int i = j < N ? j : 2 * N - 2 - j;
            plan_change c = plan_state_change(p, &st[i]);
            if (i == 1 && j == 1) cr_assert(!c.set && !c.cl && !c.mem && !c.sync_set, "a pin alone: only the search");
            cr_assert_eq(plan_apply(p, &c, &err), 0, "state %d: %s", i, err.msg);
            cr_assert(plan_state_is(p, &st[i]), "state %d", i);
            cr_assert_eq(p->best_eval.total_ms, total[i], "state %d: %.17g ms, was %.17g", i, p->best_eval.total_ms,
                         total[i]);
            cr_assert_arr_eq(p->best, best[i], sizeof(int) * (size_t)L, "state %d's strategy", i);
            if (i == 1) {
                cr_assert_eq(p->gpus, 16);
                cr_assert_eq(p->pinned[fc6], k16, "the pin 8 GPUs lacked is back");
            }
        }
    for (int i = 0; i < N; i++) {
        plan_state_free(&st[i]);
        free(best[i]);
    }
    plan_free(p);
}

/* A pin whose config a setting lacks is held by the plan (its state
 * keeps it), and the what-if back to a setting that has the config pins
 * it again in its one search; unpinning the layer drops the hold without
 * a search. */
Test(plan, a_held_pin_comes_back_in_one_search)
{
    plan *p = open_plan("alexnet", "p100-4x4", 16, 0);
    lw_error err = {0};
    int fc6 = net_find(p->net, "fc6"), k16 = -1;
    for (int k = 0; k < plan_n_configs(p, fc6) && k16 < 0; k++)
        if (config_tasks(plan_config(p, fc6, k)) == 16 && k != p->best[fc6]) k16 = k;
    cr_assert(k16 >= 0);
    config c16 = *plan_config(p, fc6, k16);
    cr_assert_eq(plan_apply(p, &(plan_change){.n_pins = 1, .pins = &(plan_pin){fc6, k16}}, &err), 0, "%s", err.msg);
    cr_assert_eq(apply_set(p, 8, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(plan_pin_count(p), 0);
    cr_assert(plan_pin_held(p, fc6) && plan_pins_held(p) == 1, "the pin 8 GPUs lack is held");
    cr_assert(plan_pin_config(p, fc6) && config_equal(plan_pin_config(p, fc6), &c16));
    long before = plan_search_count(p);
    cr_assert_eq(apply_set(p, 16, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(plan_search_count(p) - before, 1, "one search for the what-if, pin included");
    cr_assert(p->pinned[fc6] >= 0 && config_equal(plan_config(p, fc6, p->pinned[fc6]), &c16));
    cr_assert(config_equal(plan_config(p, fc6, p->best[fc6]), &c16), "the optimum obeys the pin");
    cr_assert_eq(plan_pins_held(p), 0);
    /* held again, then unpinned: dropped without a search */
    cr_assert_eq(apply_set(p, 8, 0, &err), 0, "%s", err.msg);
    before = plan_search_count(p);
    cr_assert_eq(plan_apply(p, &(plan_change){.n_pins = 1, .pins = &(plan_pin){fc6, -1}}, &err), 0, "%s", err.msg);
    cr_assert_eq(plan_search_count(p), before);
    cr_assert_eq(plan_pins_held(p), 0);
    cr_assert_eq(plan_pin_config(p, fc6), NULL);
    cr_assert_eq(apply_set(p, 16, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(plan_pin_count(p), 0, "a dropped pin does not come back");
    plan_free(p);
}

Test(prefetch, a_queued_setting_is_taken_and_equals_a_fresh_build)
{
    plan *p = open_plan("alexnet", "p100-4x4", 16, 0);
    lw_error err = {0};
    cr_assert_eq(apply_set(p, 16, 32, &err), 0, "%s", err.msg);
    for (int k = 0; k < 4; k++) {
        post_tui_list(p);
        wait_prefetch(p);
        cr_assert_eq(apply_set(p, k == 0 ? 8 : k == 3 ? 4 : 16, k == 1 ? 64 : k == 2 ? 16 : 32, &err), 0, "%s",
                     err.msg);
        cr_expect(p->from_prefetch, "step %d: the prefetched model was not taken", k);
        expect_same_as_fresh(p, "alexnet");
        cr_assert_eq(apply_set(p, 16, 32, &err), 0, "%s", err.msg);
    }
    plan_free(p);
}

Test(prefetch, other_settings_and_cluster_edits_are_built_afresh)
{
    plan *p = open_plan("alexnet", "p100-4x4", 16, 0);
    lw_error err = {0};
    cr_assert_eq(apply_set(p, 16, 32, &err), 0, "%s", err.msg);
    /* a setting nobody queued: the queue is cancelled, the result is right */
    post_tui_list(p);
    cr_assert_eq(apply_set(p, 2, 32, &err), 0, "%s", err.msg);
    cr_expect(!p->from_prefetch);
    expect_same_as_fresh(p, "alexnet");
    /* a queued setting, but the cluster changed since: not taken */
    cr_assert_eq(apply_set(p, 16, 32, &err), 0, "%s", err.msg);
    post_tui_list(p);
    cr_assert_eq(apply_inter_bw(p, 2, 8, &err), 0, "%s", err.msg);
    cr_expect(!p->from_prefetch, "a model built for the old cluster was taken");
    plan *fresh = open_plan("alexnet", "p100-4x4", 8, p->batch);
    cr_assert_eq(apply_inter_bw(fresh, 2, 8, &err), 0, "%s", err.msg);
    ASSERT_REL(p->best_eval.total_ms, fresh->best_eval.total_ms, 1e-12);
    plan_free(fresh);
    /* finished results named again by a new list are kept, and taken */
    cr_assert_eq(apply_inter_bw(p, 0.5, 16, &err), 0, "%s", err.msg);
    post_tui_list(p);
    wait_prefetch(p);
    plan_settings again = p->set;
    again.batch_per_gpu = 64;
    plan_prefetch(p, again);
    cr_assert_eq(plan_apply(p, &(plan_change){.set = &again}, &err), 0, "%s", err.msg);
    cr_expect(p->from_prefetch);
    expect_same_as_fresh(p, "alexnet");
    /* freeing a plan with a queue in flight waits for nothing long and leaks nothing */
    post_tui_list(p);
    plan_free(p);
}

/* The optimum of plan p equals (==) that of a fresh plan_open of its
 * network, cluster and settings. */
static void expect_equal_to_fresh_plan(const plan *p, const char *net, const char *what)
{
    lw_error err = {0};
    plan *fresh = plan_open(plan_load_network(net, &err), cluster_clone(p->cl), NULL,
        &(plan_options){.set = p->set}, &err);
    cr_assert_not_null(fresh, "%s", err.msg);
    cr_assert_eq(fresh->batch, p->batch);
    cr_assert(p->best_eval.total_ms == fresh->best_eval.total_ms, "%s: %.17g vs a fresh %.17g", what,
              p->best_eval.total_ms, fresh->best_eval.total_ms);
    for (int i = 0; i < p->net->n_layers; i++)
        cr_expect(config_equal(&p->cm->configs[i][p->best[i]], &fresh->cm->configs[i][fresh->best[i]]),
                  "%s: layer %d differs from a fresh plan", what, i);
    plan_free(fresh);
}

/* A change of prices only (link figures, precision) re-prices the model's
 * transfers instead of building them again, from the second such what-if
 * on (the first builds and keeps what it needs: the first model of a plan
 * for one-shot commands, plan_open without whatifs, does not), and the optimum is a fresh
 * plan's every time; more GPUs than the kept build had re-price part of the
 * entries (those of configs on at most the kept build's GPUs) and compute the rest. */
Test(plan, price_what_ifs_are_repriced_and_equal_a_fresh_plan)
{
    plan *p = open_plan("inception_v3", "p100-4x4", 8, 0);
    lw_error err = {0};
    double factors[] = {2, 0.25, 3};
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(apply_inter_bw(p, factors[k], 8, &err), 0, "%s", err.msg);
        cr_expect_eq(p->repriced, k > 0, "what-if %d: repriced %d", k, p->repriced);
        char what[32];
        snprintf(what, sizeof what, "what-if %d", k);
        expect_equal_to_fresh_plan(p, "inception_v3", what);
    }
    cr_assert_eq(apply_inter_bw(p, 1, 16, &err), 0, "%s", err.msg);
    cr_expect_eq(p->repriced, 2, "more GPUs: repriced %d", p->repriced);
    cr_expect_gt(p->cm->tx_pairs_repriced, 0, "more GPUs: nothing re-priced");
    cr_expect_lt(p->cm->tx_pairs_repriced, p->cm->tx_pairs_computed, "more GPUs: nothing computed");
    expect_equal_to_fresh_plan(p, "inception_v3", "more GPUs");
    plan_free(p);
}

/* The TUI's plan (plan_options.whatifs) has counts from its first model
 * on, so its first what-if re-prices already: the first model answers
 * without them and the prefetch worker builds it again keeping them
 * (plan_counts_wait: adopted); a batch what-if and fewer GPUs re-price too
 * (cost_model_reuse_fast), back to the first count as well; a batch some
 * degree does not divide computes the entries of those configs without
 * counts and re-prices the rest, and the next re-prices from the counts
 * the worker kept for that model. Each optimum is a fresh plan's. */
/* The TUI's plan (plan_options.whatifs) of Inception-v3 on p100-4x4 at
 * `gpus` GPUs, 32 a GPU, with what-ifs before a model's counts are kept
 * waiting for them (counts_wait 1) or giving them up (-1). */
static plan *open_tui_plan(int gpus, int counts_wait)
{
    lw_error err = {0};
    plan_settings s0 = {.gpus = gpus, .batch_per_gpu = 32};
    plan *p = plan_open(plan_load_network("inception_v3", &err), plan_load_cluster("p100-4x4", &err), NULL,
        &(plan_options){.set = s0, .whatifs = 1}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    p->counts_wait = counts_wait;
    return p;
}

Test(plan, the_tuis_first_model_keeps_counts_and_batch_what_ifs_reprice)
{
    lw_error err = {0};
    /* the what-ifs right after one that computed entries wait for its
     * counts here, whatever the job's progress (the next test gives them up) */
    plan *p = open_tui_plan(16, 1);
    cr_assert_eq(cost_model_kept_bytes(p->cm), 0, "the first model answered keeping counts");
    cr_assert(plan_counts_wait(p), "the TUI's first model got no counts");
    cr_assert_gt(cost_model_kept_bytes(p->cm), 0, "the TUI's first model keeps nothing");
    plan *cli = open_plan("inception_v3", "p100-4x4", 16, 0);
    cr_expect_eq(cost_model_kept_bytes(cli->cm), 0, "a one-shot plan pays for counts it never uses");
    plan_free(cli);
    cr_assert_eq(apply_inter_bw(p, 2, 16, &err), 0, "%s", err.msg);
    cr_expect(p->repriced, "the first price what-if built");
    expect_equal_to_fresh_plan(p, "inception_v3", "inter bandwidth doubled");
    struct {
        int gpus;
        long per_gpu, global;
        int repriced;
    } steps[] = {{16, 64, 0, 1}, {16, 24, 0, 1}, {8, 24, 0, 1}, {16, 32, 0, 1}, {16, 0, 600, 2}, {8, 0, 1200, 1}};
    for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
        plan_settings s = {steps[k].gpus, steps[k].per_gpu, steps[k].global, 0};
        cr_assert_eq(plan_apply(p, &(plan_change){.set = &s}, &err), 0, "%s", err.msg);
        char what[64];
        snprintf(what, sizeof what, "%d GPUs, batch %ld", p->gpus, p->batch);
        cr_expect_eq(p->repriced, steps[k].repriced, "%s: repriced %d", what, p->repriced);
        /* entries computed: no counts until the worker's are adopted (the
         * next what-if waits for them; here the odd steps do) */
        cr_expect_eq(cost_model_kept_bytes(p->cm) == 0, p->repriced == 2, "%s: kept %ld", what,
                     cost_model_kept_bytes(p->cm));
        if (k % 2) cr_expect(plan_counts_wait(p), "%s: no counts", what);
        expect_equal_to_fresh_plan(p, "inception_v3", what);
    }
    /* a what-if freed before its counts are built: the job is cancelled
     * (AddressSanitizer's leak check runs these tests) */
    plan_settings s = {16, 0, 520, 0}; /* 16 does not divide 520 */
    cr_assert_eq(plan_apply(p, &(plan_change){.set = &s}, &err), 0, "%s", err.msg);
    cr_expect_eq(p->repriced, 2);
    plan_free(p);
}

/* A what-if that comes while the counts of a model that computed entries
 * are still being kept on the worker may give them up (p->counts_wait -1
 * here: always) and answer as that model was answered: from the model
 * before it, whose counts the job was carrying over, or from scratch where
 * there was none (the first model). Each answer is a fresh plan's; the
 * counts are kept again for the new model (posted with the same model
 * before), and a what-if after them re-prices. A cancelled what-if that
 * gave them up posts them again for the model it leaves in place. */
Test(plan, a_what_if_before_the_counts_are_kept_may_give_them_up)
{
    lw_error err = {0};
    plan *p = open_tui_plan(8, -1);
    /* the first model's counts, from scratch: given up, built again */
    cr_assert_eq(apply_inter_bw(p, 2, 8, &err), 0, "%s", err.msg);
    cr_expect(p->counts_given_up, "the first model's counts were not given up");
    cr_expect_eq(p->repriced, 0, "built from scratch, yet repriced %d", p->repriced);
    expect_equal_to_fresh_plan(p, "inception_v3", "8 GPUs, bandwidth doubled, first counts given up");
    cr_assert(plan_counts_wait(p), "no counts after the first were given up");
    /* more GPUs: the 8-GPU model's counts carried over, the rest computed */
    cr_assert_eq(apply_set(p, 16, 32, &err), 0, "%s", err.msg);
    cr_expect_not(p->counts_given_up, "the counts were there, yet given up");
    cr_assert_eq(p->repriced, 2);
    cr_assert_eq(cost_model_kept_bytes(p->cm), 0);
    /* right after: given up, priced from the 8-GPU model again */
    cr_assert_eq(apply_inter_bw(p, 0.5, 16, &err), 0, "%s", err.msg);
    cr_expect(p->counts_given_up, "16 GPUs: the counts were not given up");
    cr_expect_eq(p->repriced, 2, "16 GPUs: not priced from the model before (repriced %d)", p->repriced);
    expect_equal_to_fresh_plan(p, "inception_v3", "16 GPUs, bandwidth halved, counts given up");
    /* a cancelled what-if gives them up too, and posts them again */
    atomic_int flag = 1;
    plan_set_cancel(p, &flag);
    const cost_model *before = p->cm;
    cr_assert_neq(apply_inter_bw(p, 3, 16, &err), 0);
    cr_assert_str_eq(err.msg, "cancelled");
    plan_set_cancel(p, NULL);
    cr_assert_eq(p->cm, before, "a cancelled what-if changed the model");
    cr_assert(plan_counts_wait(p), "the counts given up by a cancelled what-if were not posted again");
    cr_assert_gt(cost_model_kept_bytes(p->cm), 0);
    /* with them kept: nothing to give up, every entry re-priced */
    cr_assert_eq(apply_set(p, 16, 64, &err), 0, "%s", err.msg);
    cr_expect_not(p->counts_given_up);
    cr_expect_eq(p->repriced, 1, "batch 64: repriced %d", p->repriced);
    expect_equal_to_fresh_plan(p, "inception_v3", "16 GPUs, batch 64 a GPU");
    plan_free(p);
}

/* Whether to wait for counts being kept: the rest of the job at its rate
 * so far, against the answer's own time; a job not started is not worth
 * waiting for, a finished one is. */
Test(plan, counts_are_worth_waiting_for_when_the_rest_is_quicker_than_answering)
{
    cr_expect_not(plan_counts_worth_waiting(1000, 0, 0, 1.0), "not started");
    cr_expect_not(plan_counts_worth_waiting(0, 0, 0, 1.0), "nothing known");
    cr_expect(plan_counts_worth_waiting(1000, 1000, 2.0, 0.1), "all evaluated");
    cr_expect(plan_counts_worth_waiting(1000, 900, 1.0, 0.5), "0.11 s left, 0.5 s to answer");
    cr_expect_not(plan_counts_worth_waiting(1000, 500, 1.0, 0.9), "1 s left, 0.9 s to answer");
    cr_expect(plan_counts_worth_waiting(1000, 500, 1.0, 1.0), "as long either way: waiting keeps the counts");
}

/* A failed or cancelled what-if leaves the plan exactly as it was: the
 * previous settings, cluster, pins, model and optimum (the TUI keeps
 * showing them); whichever path it took (new model, sync, pins). */
Test(plan, a_failed_or_cancelled_rebuild_keeps_the_previous_plan)
{
    plan *p = open_plan("alexnet", "p100-4x4", 8, 0);
    lw_error err = {0};
    int fc7 = net_find(p->net, "fc7"), L = p->net->n_layers;
    plan_pin pin = {fc7, 0};
    cr_assert_eq(plan_apply(p, &(plan_change){.n_pins = 1, .pins = &pin}, &err), 0, "%s", err.msg);
    const cost_model *cm0 = p->cm;
    const cluster *cl0 = p->cl;
    plan_settings set0 = p->set;
    double inter0 = p->cl->inter.bandwidth_gbs;
    double total0 = p->best_eval.total_ms;
    int *best0 = malloc(sizeof(int) * (size_t)L);
    memcpy(best0, p->best, sizeof(int) * (size_t)L);
    double *ts0 = malloc(sizeof(double) * (size_t)p->cm->n_configs[fc7]);
    memcpy(ts0, p->cm->t_s[fc7], sizeof(double) * (size_t)p->cm->n_configs[fc7]);

    cr_assert_neq(apply_set(p, 17, 0, &err), 0); /* more than the cluster has */
    cr_assert_eq(err.code, 2);
    atomic_int flag = 1;
    plan_set_cancel(p, &flag);
    cr_assert_neq(apply_set(p, 16, 0, &err), 0);
    cr_assert_str_eq(err.msg, "cancelled");
    /* a cancelled cluster edit, sync switch and unpin: nothing of them stays */
    cr_assert_neq(apply_inter_bw(p, 2, 8, &err), 0);
    sync_scheme other = p->cl->sync == SYNC_RING_ALLREDUCE ? SYNC_PARAMETER_SERVER : SYNC_RING_ALLREDUCE;
    cr_assert_neq(plan_apply(p, &(plan_change){.sync_set = 1, .sync = other}, &err), 0);
    cr_assert_str_eq(err.msg, "cancelled");
    cr_assert_neq(plan_apply(p, &(plan_change){.clear_pins = 1}, &err), 0);
    plan_set_cancel(p, NULL);
    /* bad changes are refused before anything is done */
    plan_pin bad[] = {{L, 0}, {fc7, p->cm->n_configs[fc7]}, {fc7, -2}};
    for (int i = 0; i < 3; i++) {
        cr_assert_neq(plan_apply(p, &(plan_change){.n_pins = 1, .pins = &bad[i]}, &err), 0);
        cr_assert_eq(err.code, 2);
    }
    cr_assert_neq(plan_apply(p, &(plan_change){.sync_set = 1, .sync = (sync_scheme)7}, &err), 0);
    cr_assert_eq(err.code, 2);
    /* and a change that changes nothing does nothing */
    cr_assert_eq(plan_apply(p, &(plan_change){0}, &err), 0);

    cr_assert_eq(p->cm, cm0);
    cr_assert_eq(p->cl, cl0);
    cr_assert_neq(p->cl->sync, other);
    cr_assert_eq(p->cl->inter.bandwidth_gbs, inter0);
    cr_assert_eq(memcmp(&p->set, &set0, sizeof set0), 0);
    cr_assert_arr_eq(p->cm->t_s[fc7], ts0, sizeof(double) * (size_t)p->cm->n_configs[fc7]);
    cr_assert_eq(p->gpus, 8);
    cr_assert_eq(p->batch, 256);
    cr_assert_eq(p->best_eval.total_ms, total0);
    cr_assert_arr_eq(p->best, best0, sizeof(int) * (size_t)L);
    cr_assert_eq(p->pinned[fc7], 0);
    cr_assert_eq(plan_pin_count(p), 1);
    ASSERT_REL(p->sr->cost, total0, 1e-9);
    /* and the next change goes through, pins carried over by config */
    cr_assert_eq(apply_set(p, 16, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(p->gpus, 16);
    cr_assert_eq(p->pinned[fc7], 0);
    free(ts0);
    free(best0);
    plan_free(p);
}

/* ------------------------------------------------ evaluation without tables */

/* A plan without tables (plan_options.unsearched, cost_model_open) evaluates
 * every strategy exactly as the built tables do: each layer's t_c, t_s, t_x
 * and bytes, bit for bit, for the baselines and the optimum; and single
 * entries (cost_node_ms, cost_edge_ms) equal the tables. */
static void untabled_equals_tables(const char *net, const char *cl, int gpus)
{
    plan *full = open_plan(net, cl, gpus, 0);
    lw_error err = {0};
    network *n = plan_load_network(net, &err);
    cluster *c = plan_load_cluster(cl, &err);
    cr_assert(n && c, "%s", err.msg);
    plan_settings s = {.gpus = gpus, .batch_per_gpu = DEFAULT_BATCH_PER_GPU};
    plan *bare = plan_open(n, c, NULL, &(plan_options){.set = s, .unsearched = 1}, &err);
    cr_assert_not_null(bare, "%s", err.msg);
    cr_assert(bare->unsearched && !bare->sr && !bare->cg && !bare->cm->t_x && !bare->cm->t_c);
    cr_assert_eq(bare->gpus, full->gpus);
    cr_assert_eq(bare->batch, full->batch);
    const cost_model *mf = full->cm, *mb = bare->cm;
    int L = mf->n_layers;
    int *ci = lw_calloc((size_t)L, sizeof(int));
    for (int s4 = 0; s4 < 4; s4++) {
        if (s4 < 3) strategy_baseline(mb, (baseline_kind)s4, ci);
        else memcpy(ci, full->best, sizeof(int) * (size_t)L);
        strategy_eval a, b;
        strategy_evaluate(mf, ci, &a);
        strategy_evaluate(mb, ci, &b);
        for (int i = 0; i < L; i++) {
            const layer_eval *x = &a.layers[i], *y = &b.layers[i];
            cr_assert(x->compute_ms == y->compute_ms && x->sync_ms == y->sync_ms && x->transfer_ms == y->transfer_ms &&
                          x->transfer_bytes == y->transfer_bytes && x->sync_bytes == y->sync_bytes &&
                          x->profiled == y->profiled,
                      "%s on %s, %d GPUs, strategy %d, layer %s: tables %.17g/%.17g/%.17g, without %.17g/%.17g/%.17g",
                      net, cl, gpus, s4, mf->net->layers[i].name, x->compute_ms, x->sync_ms, x->transfer_ms,
                      y->compute_ms, y->sync_ms, y->transfer_ms);
        }
        cr_assert_eq(a.total_ms, b.total_ms);
        cr_assert_eq(a.bytes_per_step, b.bytes_per_step);
        cr_assert_eq(a.peak_memory_bytes, b.peak_memory_bytes);
        if (s4 == 3) cr_assert_eq(b.total_ms, full->best_eval.total_ms);
        strategy_eval_free(&a);
        strategy_eval_free(&b);
    }
    /* single entries, a spread of them per layer and edge */
    for (int i = 0; i < L; i++)
        for (int k = 0; k < mf->n_configs[i]; k += 1 + mf->n_configs[i] / 7)
            cr_assert_eq(cost_node_ms(mb, i, k), mf->t_c[i][k] + mf->t_s[i][k]);
    for (int e = 0; e < mf->n_edges; e++) {
        int na = mf->n_configs[mf->e_from[e]], nb = mf->n_configs[mf->e_to[e]];
        for (int q = e % 5; q < na * nb; q += 1 + na * nb / 11) {
            double t = cost_edge_ms(mb, e, q / nb, q % nb, NULL);
            cr_assert(t == mf->t_x[e][q], "%s on %s: edge %d entry %d: %.17g without tables, %.17g in them", net, cl,
                      e, q, t, mf->t_x[e][q]);
            cr_assert_eq(cost_edge_ms(mf, e, q / nb, q % nb, NULL), t);
        }
    }
    /* plan_search turns it into the full plan */
    cr_assert_eq(plan_search(bare, &err), 0, "%s", err.msg);
    cr_assert(!bare->unsearched && bare->sr);
    cr_assert_arr_eq(bare->best, full->best, sizeof(int) * (size_t)L);
    cr_assert_eq(bare->best_eval.total_ms, full->best_eval.total_ms);
    free(ci);
    plan_free(bare);
    plan_free(full);
}

Test(untabled, equals_tables_vgg16_16_gpus_4_nodes)
{
    untabled_equals_tables("vgg16", "p100-4x4", 16);
}

Test(untabled, equals_tables_inception_v3_8_gpus_per_pair_links)
{
    untabled_equals_tables("inception_v3", "dgx1-v100", 8);
}

Test(untabled, equals_tables_resnet50_16_gpus_ring)
{
    untabled_equals_tables("resnet50", "h100-8x8", 16);
}

Test(untabled, equals_tables_lenet5_6_gpus)
{
    untabled_equals_tables("lenet5", "p100-4x4", 6);
}

/* 1024 GPUs: evaluated without tables; the tables (the search) of
 * ResNet-50 there are refused up front, before any is built, with their
 * size; 2048 GPUs pass what the cost model takes, with or without tables. */
Test(untabled, a_1024_gpu_evaluation_and_the_search_limit)
{
    const char *t = "{\"format\": \"layerwise-cluster/1\", \"name\": \"big\", \"nodes\": 128, \"gpus_per_node\": 8,"
                    " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
                    " \"intra_node\": {\"bandwidth_gbs\": 100, \"latency_us\": 5},"
                    " \"inter_node\": {\"bandwidth_gbs\": 25, \"latency_us\": 10, \"nics_per_node\": 4},"
                    " \"sync\": \"ring-allreduce\"}";
    lw_error err = {0};
    network *n = plan_load_network("resnet50", &err);
    cluster *c = cluster_from_json(t, strlen(t), "big.json", &err);
    cr_assert(n && c, "%s", err.msg);
    cost_model *refused = cost_model_build(n, c, NULL, 1024, 1024 * 32, &err);
    cr_assert_null(refused);
    cr_assert(strstr(err.msg, "resnet50 on 1024 GPUs") && strstr(err.msg, "entries") && strstr(err.msg, "MB") &&
                  strstr(err.msg, "choose fewer GPUs"),
              "%s", err.msg);
    {
        const char *t2 = "{\"format\": \"layerwise-cluster/1\", \"name\": \"bigger\", \"nodes\": 256, \"gpus_per_node\": 8,"
                         " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
                         " \"intra_node\": {\"bandwidth_gbs\": 100, \"latency_us\": 5},"
                         " \"inter_node\": {\"bandwidth_gbs\": 25, \"latency_us\": 10, \"nics_per_node\": 4}}";
        cluster *c2 = cluster_from_json(t2, strlen(t2), "bigger.json", &err);
        cr_assert_not_null(c2, "%s", err.msg);
        cr_assert_null(cost_model_build(n, c2, NULL, 2048, 2048 * 32, &err));
        cr_assert(strstr(err.msg, "2048 GPUs: the cost model takes at most 1024"), "%s", err.msg);
        cr_assert_null(cost_model_open(n, c2, NULL, 2048, 2048 * 32, &err));
        cr_assert(strstr(err.msg, "2048 GPUs: the cost model takes at most 1024"), "%s", err.msg);
        cluster_free(c2);
    }
    plan_settings s = {.gpus = 1024, .batch_per_gpu = DEFAULT_BATCH_PER_GPU};
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = s, .unsearched = 1}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert_eq(p->gpus, 1024);
    int *ci = lw_calloc((size_t)p->net->n_layers, sizeof(int));
    strategy_baseline(p->cm, BASE_DATA, ci);
    strategy_eval ev;
    strategy_evaluate(p->cm, ci, &ev);
    /* data parallel: every layer (the input too) in 1024 sample pieces, the
     * same on each side of every edge, so sync but no transfer */
    int split = 0;
    for (int i = 0; i < p->net->n_layers; i++) split += config_tasks(&p->cm->configs[i][ci[i]]) == 1024;
    cr_assert_eq(split, p->net->n_layers);
    cr_assert(ev.sync_ms > 0 && ev.compute_ms > 0 && isfinite(ev.total_ms));
    cr_assert_eq(ev.transfer_ms, 0);
    strategy_eval_free(&ev);
    free(ci);
    plan_settings s2 = {.gpus = 1025, .batch_per_gpu = DEFAULT_BATCH_PER_GPU};
    plan_change ch = {.set = &s2};
    cr_assert_neq(plan_apply(p, &ch, &err), 0); /* the cluster has 1024 */
    cr_assert_eq(p->gpus, 1024);
    cr_assert(p->unsearched);
    /* a sync switch keeps it unsearched; a smaller setting too */
    plan_change sy = {.sync_set = 1, .sync = SYNC_PARAMETER_SERVER};
    cr_assert_eq(plan_apply(p, &sy, &err), 0, "%s", err.msg);
    cr_assert(p->unsearched && p->cl->sync == SYNC_PARAMETER_SERVER);
    plan_settings s3 = {.gpus = 8, .batch_per_gpu = DEFAULT_BATCH_PER_GPU};
    plan_change ch3 = {.set = &s3};
    cr_assert_eq(plan_apply(p, &ch3, &err), 0, "%s", err.msg);
    cr_assert(p->unsearched && p->gpus == 8 && !p->sr);
    plan_free(p);
}

/* The four compared strategies: the baselines as strategy_baseline gives
 * them, and layer-wise either as given or searched (the same optimum). */
Test(baselines, the_four_compared_strategies)
{
    plan *p = open_plan("alexnet", "p100-4x4", 8, 0);
    strategy_eval given[STRATEGY_COMPARED], searched[STRATEGY_COMPARED];
    int L = p->net->n_layers;
    int *cfg = calloc((size_t)STRATEGY_COMPARED * (size_t)L, sizeof(int));
    cr_assert_eq(strategy_evaluate_compared(p->cm, p->best, given, cfg), 0);
    cr_assert_arr_eq(cfg + 3 * L, p->best, sizeof(int) * (size_t)L, "the layer-wise configs are the ones given");
    int *data = calloc((size_t)L, sizeof(int));
    strategy_baseline(p->cm, BASE_DATA, data);
    cr_assert_arr_eq(cfg, data, sizeof(int) * (size_t)L, "the data-parallel configs come first");
    free(data);
    free(cfg);
    cr_assert_eq(strategy_evaluate_compared(p->cm, NULL, searched, NULL), 0);
    int *ci = calloc((size_t)p->net->n_layers, sizeof(int));
    for (int s = 0; s < STRATEGY_COMPARED; s++) {
        strategy_eval one;
        if (s < BASE__COUNT) {
            strategy_baseline(p->cm, (baseline_kind)s, ci);
            strategy_evaluate(p->cm, ci, &one);
            cr_assert_str_eq(strategy_compared_names[s], baseline_name((baseline_kind)s));
        } else {
            strategy_evaluate(p->cm, p->best, &one);
        }
        ASSERT_REL(given[s].total_ms, one.total_ms, 1e-12);
        ASSERT_REL(searched[s].total_ms, one.total_ms, 1e-9);
        strategy_eval_free(&one);
        strategy_eval_free(&given[s]);
        strategy_eval_free(&searched[s]);
    }
    cr_assert_str_eq(strategy_compared_names[3], "layer-wise");
    free(ci);
    plan_free(p);
}
