/*
 * Sharded data parallelism (cost_sharding.c): ZeRO 1-3, FSDP and HSDP as
 * sync schemes. Memory per GPU against the ZeRO paper's formulas
 * (Rajbhandari et al., SC 2020, section 5 and Figure 1), bytes per step
 * against the textbook counts (stages 1 and 2 move what an all-reduce
 * moves, stage 3 half as much again), times worked by hand, and the search
 * with the schemes against brute force.
 */
#include <criterion/criterion.h>

#include "cost.h"
#include "cost_sharding.h"
#include "explain.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "memsearch.h"
#include "net_json.h"
#include "plan.h"
#include "sim.h"
#include "strategy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define REL_EQ(a, b, tol) (fabs((a) - (b)) <= (tol) * fmax(fabs(a), fabs(b)) + 1e-300)
#define ASSERT_REL(a, b, tol)                                                                                      \
    cr_assert(REL_EQ((double)(a), (double)(b), tol), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

static config C(int n, int c, int h, int w)
{
    config x = {{n, c, h, w, 1, 1}};
    return x;
}

static network *net_str(const char *json)
{
    lw_error err = {0};
    network *n = net_from_json(json, strlen(json), "inline.json", &err);
    cr_assert_not_null(n, "%s", err.msg);
    return n;
}

/* `nodes` nodes of `gpn` GPUs: 10 GB/s inside a node, 1 GB/s between
 * (one NIC), fp32 and fp16; NCCL's default collectives (8.4 us a call,
 * 3.4 us a step inside a node, 9.6 across, 25 MiB buckets). */
static cluster *mk_cluster(int nodes, int gpn, const char *sync, const char *prec)
{
    char t[2048];
    snprintf(t, sizeof t,
             "{\"format\": \"layerwise-cluster/1\", \"name\": \"zc\", \"nodes\": %d, \"gpus_per_node\": %d,"
             " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 1e6,"
             "  \"precisions\": {\"fp16\": {\"peak_tflops\": 160}}},"
             " \"intra_node\": {\"bandwidth_gbs\": 10, \"latency_us\": 5},"
             " \"inter_node\": {\"bandwidth_gbs\": 1, \"latency_us\": 5, \"nics_per_node\": 1},"
             " \"precision\": \"%s\", \"sync\": \"%s\"}",
             nodes, gpn, prec, sync);
    lw_error err = {0};
    cluster *c = cluster_from_json(t, strlen(t), "zc.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

static cost_model *open_model(const network *n, const cluster *c, int gpus, long batch)
{
    lw_error err = {0};
    cost_model *m = cost_model_open(n, c, NULL, gpus, batch, &err);
    cr_assert_not_null(m, "%s", err.msg);
    return m;
}

/* A linear layer of in x out weights and out biases. */
static network *fc_net(long in, long out)
{
    char t[512];
    snprintf(t, sizeof t,
             "{\"format\": \"layerwise-net/1\", \"name\": \"fc\","
             " \"input\": {\"name\": \"data\", \"channels\": %ld, \"height\": 1, \"width\": 1},"
             " \"layers\": [{\"name\": \"fc\", \"type\": \"linear\", \"inputs\": [\"data\"], \"out_features\": %ld}]}",
             in, out);
    return net_str(t);
}

/* Weights + gradients + optimizer state of task 0 (the activations left out). */
static double model_state(const cost_model *m, const config *c, int task)
{
    memory_parts p;
    cost_memory_task(m, 1, c, task, &p);
    return p.weights + p.gradients + p.optimizer;
}

Test(sharding, names_round_trip_and_fsdp_is_zero3)
{
    for (int s = 0; s < SYNC__COUNT; s++)
        cr_assert_eq(sync_scheme_from_name(sync_scheme_name((sync_scheme)s)), s, "%s", sync_scheme_name(s));
    cr_assert_eq(sync_scheme_from_name("fsdp"), SYNC_ZERO3);
    cr_assert_eq(sync_scheme_from_name("zero4"), -1);
    cr_assert_eq(sync_shard_level(SYNC_RING_ALLREDUCE), 0);
    cr_assert_eq(sync_shard_level(SYNC_ZERO1), 1);
    cr_assert_eq(sync_shard_level(SYNC_ZERO2), 2);
    cr_assert_eq(sync_shard_level(SYNC_ZERO3), 3);
    cr_assert_eq(sync_shard_level(SYNC_HSDP), 3);
}

/* The ZeRO paper's worked example (section 5.1 and Figure 1): a
 * 7.5-billion-parameter model, mixed-precision Adam (K = 12), Nd = 64:
 * 120 GB a GPU replicated, 31.4 GB with Pos (2Psi + 2Psi + K Psi / Nd),
 * 16.6 GB with Pos+g (2Psi + (2 + K) Psi / Nd), 1.88 GB with Pos+g+p
 * ((2 + 2 + K) Psi / Nd). One linear layer of 75000 x 100000 weights
 * (and 1e5 biases: Psi = 7.5001e9), data parallel over 64 GPUs. */
Test(sharding, memory_matches_the_zero_paper_worked_example)
{
    network *n = fc_net(75000, 100000);
    const double psi = 75000.0 * 100000 + 100000;
    cr_assert_eq(n->layers[1].n_params, (long)psi);
    const char *sync[] = {"ring", "zero1", "zero2", "zero3"};
    const double paper_gb[] = {120, 31.4, 16.6, 1.88};
    const double formula[] = {16 * psi, 2 * psi + 2 * psi + 12 * psi / 64, 2 * psi + 14 * psi / 64, 16 * psi / 64};
    config dp = C(64, 1, 1, 1);
    for (int i = 0; i < 4; i++) {
        cluster *c = mk_cluster(16, 4, sync[i], "fp16");
        cost_model *m = open_model(n, c, 64, 64);
        m->optimizer = OPT_ADAM;
        for (int task = 0; task < 64; task += 21) {
            ASSERT_REL(model_state(m, &dp, task), formula[i], 1e-12);
            ASSERT_REL(model_state(m, &dp, task) / 1e9, paper_gb[i], 0.005); /* the paper rounds to 3 digits */
        }
        cost_model_free(m);
        cluster_free(c);
    }
    net_free(n);
}

/* The parts one by one, fp16 Adam and fp32 momentum, Nd = 4 on one node:
 * fp32 master weights count with the optimizer state (ZeRO's K). In fp32
 * the weights are the master copy, so zero1 leaves them whole. */
Test(sharding, memory_parts_per_stage_and_precision)
{
    network *n = fc_net(1000, 1000);
    const double psi = 1001000;
    config dp = C(4, 1, 1, 1), mp = C(1, 4, 1, 1);
    struct {
        const char *sync, *prec;
        int adam;
        double w, g, o;
    } want[] = {
        {"ring", "fp16", 1, 6 * psi, 2 * psi, 8 * psi},
        {"zero1", "fp16", 1, 2 * psi + psi, 2 * psi, 2 * psi},      /* 2 + 4/4 ; 8/4 */
        {"zero2", "fp16", 1, 3 * psi, 0.5 * psi, 2 * psi},          /* gradients 2/4 */
        {"zero3", "fp16", 1, 1.5 * psi, 0.5 * psi, 2 * psi},        /* (2 + 4)/4 */
        {"ring", "fp32", 0, 4 * psi, 4 * psi, 4 * psi},
        {"zero1", "fp32", 0, 4 * psi, 4 * psi, psi},
        {"zero2", "fp32", 0, 4 * psi, psi, psi},
        {"zero3", "fp32", 0, psi, psi, psi},
        {"hsdp", "fp32", 0, psi, psi, psi}, /* one node: hsdp is zero3 */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        cluster *c = mk_cluster(1, 4, want[i].sync, want[i].prec);
        cost_model *m = open_model(n, c, 4, 32);
        m->optimizer = want[i].adam ? OPT_ADAM : OPT_MOMENTUM;
        memory_parts p;
        cost_memory_task(m, 1, &dp, 3, &p);
        ASSERT_REL(p.weights, want[i].w, 1e-12);
        ASSERT_REL(p.gradients, want[i].g, 1e-12);
        ASSERT_REL(p.optimizer, want[i].o, 1e-12);
        /* a channel split has one replica per shard: nothing to divide */
        cost_memory_task(m, 1, &mp, 0, &p);
        double eb = want[i].prec[2] == '1' ? 2 : 4, per = want[i].adam ? 8 : 4;
        ASSERT_REL(p.weights + p.gradients + p.optimizer, psi / 4 * ((eb < 4 ? 4 + eb : 4) + eb + per), 1e-12);
        cr_assert_eq(cost_shard_group(m, &mp, 0), 1);
        cost_model_free(m);
        cluster_free(c);
    }
    net_free(n);
}

/* HSDP on 2 nodes of 4: a data-parallel config of 8 divides each GPU's
 * state over its node's 4, zero3 over all 8; a config of 4 tasks stays on
 * node 0, where hsdp is zero3. */
Test(sharding, hsdp_divides_over_the_node)
{
    network *n = fc_net(1000, 1000);
    const double psi = 1001000;
    config d8 = C(8, 1, 1, 1), d4c2 = C(4, 2, 1, 1), d4 = C(4, 1, 1, 1);
    cluster *h = mk_cluster(2, 4, "hsdp", "fp32"), *z = mk_cluster(2, 4, "zero3", "fp32");
    cost_model *mh = open_model(n, h, 8, 64), *mz = open_model(n, z, 8, 64);
    cr_assert_eq(cost_shard_group(mh, &d8, 5), 4);
    cr_assert_eq(cost_shard_group(mz, &d8, 5), 8);
    cr_assert_eq(cost_shard_group(mh, &d4c2, 0), 2); /* shard 0's replicas: tasks 0, 2 on node 0; 4, 6 on node 1 */
    cr_assert_eq(cost_shard_group(mh, &d4, 0), 4);
    ASSERT_REL(model_state(mh, &d8, 7), 12 * psi / 4, 1e-12);
    ASSERT_REL(model_state(mz, &d8, 7), 12 * psi / 8, 1e-12);
    /* zero3 holds two gathered layers (fp32 working copies) at once: here
     * the one layer with weights, and nothing for the input */
    ASSERT_REL(cost_shard_gather_bytes(mz), 4 * psi, 1e-12);
    ASSERT_REL(cost_fixed_bytes(mz), mz->workspace_bytes + 4 * psi, 1e-12);
    cost_model_free(mh);
    cost_model_free(mz);
    cluster_free(h);
    cluster_free(z);
    net_free(n);
}

/* Bytes per step, the sum over replicas of what each sends: all-reduce
 * 2(r - 1) x shard bytes; zero1 and zero2 a reduce-scatter and an
 * all-gather, (r - 1) each: the same; zero3 an all-gather more: 1.5x.
 * hsdp over 2 nodes of 4 (r = 8, g = 4): 3 (g - 1) (r / g) in the nodes
 * plus 2 (r / g - 1) across = 20 shards' bytes, against 14 for ring. */
Test(sharding, bytes_per_step_are_the_textbook_counts)
{
    network *n = fc_net(1000, 1000);
    const double ws = 1001000 * 4.0;
    config d8 = C(8, 1, 1, 1), d4c2 = C(4, 2, 1, 1);
    const char *sync[] = {"ring", "zero1", "zero2", "zero3", "hsdp"};
    const double want8[] = {14 * ws, 14 * ws, 14 * ws, 21 * ws, 20 * ws};
    /* 2 half shards of 4 replicas each: ring 2 x 3 half shards each = 6 ws;
     * hsdp g = 2: 3 x 1 x 2 + 2 x 1 = 8 half shards each = 8 ws */
    const double want42[] = {6 * ws, 6 * ws, 6 * ws, 9 * ws, 8 * ws};
    for (int i = 0; i < 5; i++) {
        cluster *c = mk_cluster(2, 4, sync[i], "fp32");
        cost_model *m = open_model(n, c, 8, 64);
        double b;
        cost_t_s(m, 1, &d8, &b);
        ASSERT_REL(b, want8[i], 1e-12);
        cost_t_s(m, 1, &d4c2, &b);
        ASSERT_REL(b, want42[i], 1e-12);
        cost_model_free(m);
        cluster_free(c);
    }
    net_free(n);
}

/* Times on one node of 4 at 10 GB/s, fp32: a shard of ws = 4.004e6 bytes,
 * a ring step moves ws / 4 = 1.001e6 bytes in 1.001e-4 s. A layer pays
 * ws / 25 MiB of a call's latency. All-reduce: 6 steps + (8.4 + 6 x 3.4)
 * us; a reduce-scatter or all-gather: 3 steps + (8.4 + 3 x 3.4) us. */
Test(sharding, times_on_one_node_by_hand)
{
    network *n = fc_net(1000, 1000);
    const double ws = 1001000 * 4.0, step = ws / 4 / 10e9, calls = ws / (25 * 1048576.0);
    const double half = (3 * step + calls * (8.4 + 3 * 3.4) * 1e-6) * 1e3;
    const double ring = (6 * step + calls * (8.4 + 6 * 3.4) * 1e-6) * 1e3;
    config dp = C(4, 1, 1, 1);
    const char *sync[] = {"ring", "zero1", "zero2", "zero3", "hsdp"};
    const double want[] = {ring, 2 * half, 2 * half, 3 * half, 3 * half};
    for (int i = 0; i < 5; i++) {
        cluster *c = mk_cluster(1, 4, sync[i], "fp32");
        cost_model *m = open_model(n, c, 4, 32);
        ASSERT_REL(cost_t_s(m, 1, &dp, NULL), want[i], 1e-12);
        shard_comm sc;
        int any = cost_shard_comm(m, 1, &dp, &sc);
        cr_assert_eq(any, i > 0);
        if (any) {
            ASSERT_REL(sc.ag_ms, half, 1e-12);
            ASSERT_REL(sc.rs_ms, half, 1e-12);
            cr_assert_eq(sc.ar_ms, 0);
            cr_assert_eq(sc.n_ag, i >= 3 ? 2 : 1);
        }
        cost_model_free(m);
        cluster_free(c);
    }
    net_free(n);
}

/* hsdp across 2 nodes of 4 (one NIC of 1 GB/s each): the intra-node
 * collectives as on one node (4 rings at once, one per node and shard,
 * no NIC); the cross-node all-reduce of each GPU's quarter (ws / 4) over
 * 2 GPUs: 2 steps of ws / 8, each node's NIC carrying 4 rings' pieces
 * (4 x ws / 8 bytes a step at 1 GB/s), latency 8.4 + 2 x 9.6 us (both
 * steps cross), ws / 4 of a bucket. */
Test(sharding, hsdp_cross_node_all_reduce_by_hand)
{
    network *n = fc_net(1000, 1000);
    const double ws = 1001000 * 4.0, calls = ws / (25 * 1048576.0);
    const double half = (3 * (ws / 4 / 10e9) + calls * (8.4 + 3 * 3.4) * 1e-6) * 1e3;
    const double ar = (2 * (4 * ws / 8 / 1e9) + calls / 4 * (8.4 + 2 * 9.6) * 1e-6) * 1e3;
    cluster *c = mk_cluster(2, 4, "hsdp", "fp32");
    cost_model *m = open_model(n, c, 8, 64);
    config d8 = C(8, 1, 1, 1);
    shard_comm sc;
    cr_assert_eq(cost_shard_comm(m, 1, &d8, &sc), 1);
    cr_assert_eq(sc.group, 4);
    ASSERT_REL(sc.ag_ms, half, 1e-12);
    ASSERT_REL(sc.ar_ms, ar, 1e-12);
    ASSERT_REL(cost_t_s(m, 1, &d8, NULL), 3 * half + ar, 1e-12);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* A small CNN: conv, pool, linear, softmax at 4 GPUs. */
static const char *small_cnn =
    "{\"format\": \"layerwise-net/1\", \"name\": \"small\","
    " \"input\": {\"name\": \"data\", \"channels\": 3, \"height\": 8, \"width\": 8},"
    " \"layers\": ["
    "  {\"name\": \"conv\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 16, \"kernel\": 3,"
    "   \"padding\": 1},"
    "  {\"name\": \"flat\", \"type\": \"flatten\", \"inputs\": [\"conv\"]},"
    "  {\"name\": \"fc\", \"type\": \"linear\", \"inputs\": [\"flat\"], \"out_features\": 512},"
    "  {\"name\": \"fc2\", \"type\": \"linear\", \"inputs\": [\"fc\"], \"out_features\": 10}]}";

/* Every assignment of g's configs in turn: the cheapest whose memory (mt)
 * fits room on every GPU (+inf: none), and the cheapest over all. */
static void brute(const cost_graph *g, const mem_table *mt, const double *room, double *best_fit, double *best)
{
    int L = g->n_nodes, x[16] = {0};
    *best_fit = *best = HUGE_VAL;
    for (;;) {
        double v = cg_evaluate(g, x);
        if (v < *best) *best = v;
        if (v < *best_fit && mt_fits(mt, x, room)) *best_fit = v;
        int i = 0;
        while (i < L && ++x[i] == g->n_configs[i]) x[i++] = 0;
        if (i == L) break;
    }
}

/* Searched once per scheme (the scheme a global choice), the optimum and
 * the optimum under a memory limit equal brute force over every
 * assignment, for every scheme; and the best over the schemes is the
 * smallest of the per-scheme optima, so the choice of scheme is exact. */
Test(sharding, search_per_scheme_is_exact_by_brute_force)
{
    network *n = net_str(small_cnn);
    double overall = HUGE_VAL, overall_bf = HUGE_VAL;
    for (int s = 0; s < SYNC__COUNT; s++) {
        cluster *c = mk_cluster(2, 2, sync_scheme_name((sync_scheme)s), "fp32");
        lw_error err = {0};
        cost_model *m = cost_model_build(n, c, NULL, 4, 64, &err);
        cr_assert_not_null(m, "%s", err.msg);
        cost_graph *g = cost_model_graph(m);
        double space = 1;
        for (int i = 0; i < g->n_nodes; i++) space *= g->n_configs[i];
        cr_assert(space < 2e6 && g->n_nodes <= 16, "%g assignments", space);
        search_result *r = search_run(g, NULL, NULL);
        mem_table *mt = plan_mem_table(m);
        /* a limit between the least and the most any strategy needs */
        double lo = HUGE_VAL, hi = 0;
        int x[16] = {0};
        for (;;) {
            double pk = mt_peak(mt, x, NULL);
            lo = fmin(lo, pk);
            hi = fmax(hi, pk);
            int i = 0;
            while (i < g->n_nodes && ++x[i] == g->n_configs[i]) x[i++] = 0;
            if (i == g->n_nodes) break;
        }
        double room[4];
        for (int k = 0; k < 4; k++) room[k] = lo + 0.3 * (hi - lo);
        double bf_fit, bf;
        brute(g, mt, room, &bf_fit, &bf);
        ASSERT_REL(r->cost, bf, 1e-12);
        memsearch_result *ms = memsearch_run(g, mt, room, NULL);
        cr_assert_eq(ms->status, MEMSEARCH_OPTIMAL, "%s", sync_scheme_name((sync_scheme)s));
        ASSERT_REL(ms->cost, bf_fit, 1e-12);
        /* the strategy's own evaluation agrees with the tables */
        strategy_eval ev;
        strategy_evaluate(m, r->config, &ev);
        ASSERT_REL(ev.total_ms, r->cost, 1e-9);
        ASSERT_REL(ev.peak_memory_bytes, mt_peak(mt, r->config, NULL) + cost_fixed_bytes(m), 1e-12);
        strategy_eval_free(&ev);
        overall = fmin(overall, r->cost);
        overall_bf = fmin(overall_bf, bf);
        memsearch_result_free(ms);
        mt_free(mt);
        search_result_free(r);
        cg_free(g);
        cost_model_free(m);
        cluster_free(c);
    }
    ASSERT_REL(overall, overall_bf, 1e-12);
    net_free(n);
}

/* ---- the simulator ---- */

static sim_result *sim_of(const cost_model *m, const int *ci, sim_overlap ov)
{
    sim_options o = {.overlap = ov};
    sim_result *s = sim_run(m, ci, &o);
    cr_assert_not_null(s);
    return s;
}

/* Data parallelism of the small CNN over 2 nodes of 2: with the schemes'
 * collectives as tasks of their own, the serial schedule is Eq. 1's total
 * under every scheme; zero3 and hsdp gather each layer with weights twice
 * and reduce-scatter it once, zero1 and zero2 once each, hsdp all-reduces
 * across nodes; the trace names the kinds. */
Test(sharding, simulator_has_the_collectives_and_none_equals_eq1)
{
    network *n = net_str(small_cnn);
    for (int s = 0; s < SYNC__COUNT; s++) {
        cluster *c = mk_cluster(2, 2, sync_scheme_name((sync_scheme)s), "fp32");
        cost_model *m = open_model(n, c, 4, 64);
        int ci[8];
        strategy_baseline(m, BASE_DATA, ci);
        sim_result *none = sim_of(m, ci, SIM_OVERLAP_NONE), *full = sim_of(m, ci, SIM_OVERLAP_FULL);
        ASSERT_REL(none->step_ms, none->eq1_ms, 1e-9);
        cr_assert(full->step_ms <= none->step_ms * (1 + 1e-9));
        int kinds[SIM__KINDS] = {0};
        for (int k = 0; k < none->n_tasks; k++) kinds[none->tasks[k].kind]++;
        int with_weights = 3; /* conv, fc, fc2 */
        int level = sync_shard_level((sync_scheme)s);
        cr_assert_eq(kinds[SIM_ALLGATHER], level == 3 ? 2 * with_weights : level ? with_weights : 0, "%s",
                     sync_scheme_name(s));
        cr_assert_eq(kinds[SIM_REDUCE_SCATTER], level ? with_weights : 0);
        if (level == 0) cr_assert(kinds[SIM_SYNC] > 0); /* buckets */
        else cr_assert_eq(kinds[SIM_SYNC], s == SYNC_HSDP ? with_weights : 0); /* hsdp: across the 2 nodes */
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        lw_error err = {0};
        cr_assert_eq(sim_write_trace(f, full, m, &err), 0, "%s", err.msg);
        fclose(f);
        cr_assert_eq(strstr(buf, "\"all-gather\"") != NULL, level > 0, "%s", sync_scheme_name(s));
        cr_assert_eq(strstr(buf, "\"reduce-scatter\"") != NULL, level > 0);
        free(buf);
        sim_free(none);
        sim_free(full);
        cost_model_free(m);
        cluster_free(c);
    }
    net_free(n);
}

/* FSDP's overlap under zero3: a layer's forward starts after its gather
 * ends; the backward's gathers come before the layer's input gradient; a
 * gather starts no earlier than the end of the forward (or backward) of
 * the layer gathered two before it (two layers gathered at most); a
 * reduce-scatter starts after the layer's weight gradient; and with data
 * flow the step is shorter than the serial one (gathers overlap compute). */
Test(sharding, simulator_prefetches_one_layer_ahead)
{
    network *n = net_str(small_cnn);
    cluster *c = mk_cluster(2, 2, "zero3", "fp32");
    cost_model *m = open_model(n, c, 4, 64);
    int ci[8];
    strategy_baseline(m, BASE_DATA, ci);
    sim_result *s = sim_of(m, ci, SIM_OVERLAP_FULL), *none = sim_of(m, ci, SIM_OVERLAP_NONE);
    cr_assert(s->step_ms < none->step_ms);
    int order[16], no = 0; /* gathers in creation order: forward conv, fc, fc2, then backward fc2, fc, conv */
    for (int k = 0; k < s->n_tasks; k++)
        if (s->tasks[k].kind == SIM_ALLGATHER) order[no++] = k;
    cr_assert_eq(no, 6);
    for (int i = 0; i < no; i++) {
        const sim_task *g = &s->tasks[order[i]];
        sim_kind use = i < 3 ? SIM_FORWARD : SIM_BACKWARD_DATA;
        for (int k = 0; k < s->n_tasks; k++) {
            const sim_task *t = &s->tasks[k];
            if (t->layer == g->layer && t->kind == use) cr_assert(t->start_ms >= g->end_ms - 1e-9);
            if (i >= 2) {
                const sim_task *two = &s->tasks[order[i - 2]];
                sim_kind used = i - 2 < 3 ? SIM_FORWARD : SIM_BACKWARD_DATA;
                if (t->layer == two->layer && t->kind == used) cr_assert(g->start_ms >= t->end_ms - 1e-9);
            }
            if (t->kind == SIM_REDUCE_SCATTER)
                for (int q = 0; q < s->n_tasks; q++)
                    if (s->tasks[q].layer == t->layer && s->tasks[q].kind == SIM_BACKWARD_WEIGHT)
                        cr_assert(t->start_ms >= s->tasks[q].end_ms - 1e-9);
        }
    }
    sim_free(s);
    sim_free(none);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* ---- explain ---- */

/* Every layer with weights says why its state is sharded or not: under
 * zero3, a layer whose shard has replicas is sharded over them (its state
 * a GPU divided by the replicas, fp16 Adam: 16 bytes a parameter
 * replicated), a layer split by channels alone needs none; under ring the
 * same layers are "Replicated" and zero3's price is named. */
Test(sharding, explain_says_why_sharded_or_replicated)
{
    const char *sync[] = {"zero3", "ring"};
    int sharded_seen = 0;
    for (int i = 0; i < 2; i++) {
        network *n = net_str(small_cnn);
        cluster *c = mk_cluster(2, 2, sync[i], "fp16");
        lw_error err = {0};
        plan_memory_settings ms = {0};
        ms.optimizer = OPT_ADAM;
        plan *p = plan_open(n, c, NULL, &(plan_options){.set = (plan_settings){4, 32, 0, 0}, .mem = ms}, &err);
        cr_assert_not_null(p, "%s", err.msg);
        config n4 = C(4, 1, 1, 1); /* conv data parallel: 4 replicas */
        plan_pin pin = {1, config_find(p->cm->configs[1], p->cm->n_configs[1], &n4)};
        cr_assert_eq(plan_apply(p, &(plan_change){.n_pins = 1, .pins = &pin}, &err), 0, "%s", err.msg);
        for (int li = 0; li < p->net->n_layers; li++) {
            if (p->net->layers[li].n_params == 0) continue;
            explain e;
            cr_assert_eq(explain_layer(p, li, &e, &err), 0, "%s", err.msg);
            char *text = explain_text(p, &e, 80), *js = explain_json(p, &e);
            const config *cf = &p->cm->configs[li][p->best[li]];
            int r = cf->deg[DIM_N] * cf->deg[DIM_H] * cf->deg[DIM_W];
            const char *want = r == 1 ? "Sharding: none needed." : i == 0 ? "Sharding (zero3):" : "Replicated (ring-allreduce):";
            cr_assert(strstr(text, want), "%s: no \"%s\" in\n%s", p->net->layers[li].name, want, text);
            double psi = (double)p->net->layers[li].n_params / cf->deg[DIM_C];
            char num[160];
            snprintf(num, sizeof num, "\"replicated_state_bytes\":\t%.17g", 16 * psi);
            cr_assert(strstr(js, "\"sharding\"") && strstr(js, num), "%s lacks %s", js, num);
            if (i == 0 && r > 1) {
                sharded_seen++;
                snprintf(num, sizeof num, "\"state_bytes\":\t%.17g", 16 * psi / r);
                cr_assert(strstr(js, num), "%s lacks %s", js, num);
                cr_assert(strstr(js, "\"all_gathers_per_step\":\t2"));
            }
            free(text);
            free(js);
        }
        plan_free(p);
    }
    cr_assert(sharded_seen > 0, "no layer of the small CNN has replicas at 4 GPUs");
}

/* HSDP's group against counting, for every config of a conv layer on 16
 * GPUs in nodes of 2, 4, 8 and 16 (the closed form) and on 12 GPUs in
 * nodes of 6 (counted): the replicas of a shard on one node when every node
 * holding some holds as many, else all of them (zero3). */
Test(sharding, hsdp_group_is_the_replicas_on_a_node)
{
    network *n = net_str(small_cnn);
    const int gpn[] = {2, 4, 8, 16, 6}, gpus[] = {16, 16, 16, 16, 12};
    for (int q = 0; q < 5; q++) {
        cluster *c = mk_cluster(gpus[q] / gpn[q], gpn[q], "hsdp", "fp32");
        cost_model *m = open_model(n, c, gpus[q], 192);
        for (int k = 0; k < m->n_configs[1]; k++) {
            const config *cf = &m->configs[1][k];
            int T = config_tasks(cf), r = cf->deg[DIM_N] * cf->deg[DIM_H] * cf->deg[DIM_W], want = -1;
            for (int j = 0; j < cf->deg[DIM_C]; j++) {
                int count[16] = {0};
                for (int t = 0; t < T; t++) {
                    int co[NDIMS];
                    config_task_coords(cf, t, co);
                    if (co[DIM_C] == j) count[t / gpn[q]]++;
                }
                for (int nd = 0; nd < 16; nd++) {
                    if (!count[nd]) continue;
                    if (want == -1) want = count[nd];
                    else if (want != count[nd]) want = -2;
                }
            }
            if (want < 0 || r <= 1) want = r;
            int got = cost_shard_group(m, cf, 0);
            char b[64];
            config_format(cf, b, sizeof b);
            cr_assert_eq(got, want, "%s on nodes of %d: group %d, counted %d", b, gpn[q], got, want);
        }
        cost_model_free(m);
        cluster_free(c);
    }
    net_free(n);
}
