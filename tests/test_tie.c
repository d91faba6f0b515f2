/*
 * The tie term (issue 32): a tied LM head keeps the token embedding's
 * table in its own layout, so the embedding reads its tiles from it in
 * forward and adds its gradient into it in backward (cost_tie.c). Checked
 * against the overlap of the two layouts' pieces at the link's rate, 0
 * where the layouts agree, and the search's optimum with the term as an
 * edge between two layers that are not neighbours against brute force and
 * against Eq. 1.
 */
#include <criterion/criterion.h>

#include "cost.h"
#include "net_json.h"
#include "pipeline.h"
#include "search.h"
#include "sim.h"
#include "strategy.h"

#include <math.h>
#include <string.h>

#define MINI "tests/fixtures/nets/tied_mini.json"
#define REL_EQ(a, b) (fabs((a) - (b)) <= 1e-12 * fmax(fabs(a), fabs(b)) + 1e-300)

/* 4 GPUs on one node: 10 GB/s, 3 us each pair; fp32 */
static cluster *one_node(int nodes)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"format\": \"layerwise-cluster/1\", \"name\": \"t\", \"nodes\": %d, \"gpus_per_node\": 4,"
             " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
             " \"intra_node\": {\"bandwidth_gbs\": 10, \"latency_us\": 3}, \"inter_node\": {\"bandwidth_gbs\": 1,"
             " \"latency_us\": 8, \"nics_per_node\": 1}}",
             nodes);
    lw_error err = {0};
    cluster *c = cluster_from_json(buf, strlen(buf), "inline-cluster.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

static network *mini(void)
{
    lw_error err = {0};
    network *n = net_load_file(MINI, &err);
    cr_assert_not_null(n, "%s", err.msg);
    return n;
}

/* tied_mini on gpus GPUs of one_node's cluster (4 a node), batch the
 * global batch, with tables (cost_model_build) or without
 * (cost_model_open); *n and *c its network and cluster. tied_free frees
 * all three. */
static cost_model *tied_mini(int gpus, long batch, int tables, network **n, cluster **c)
{
    *n = mini();
    *c = one_node(gpus > 4 ? gpus / 4 : 1);
    lw_error err = {0};
    cost_model *m = tables ? cost_model_build(*n, *c, NULL, gpus, batch, &err)
                           : cost_model_open(*n, *c, NULL, gpus, batch, &err);
    cr_assert_not_null(m, "%s", err.msg);
    return m;
}

static void tied_free(cost_model *m, cluster *c, network *n)
{
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

static config CFG(int n, int c, int h, int r, int x)
{
    return (config){{n, c, h, 1, r, x}};
}

Test(tie, one_tie_from_the_embedding_to_its_lm_head)
{
    network *n;
    cluster *c;
    cost_model *m = tied_mini(4, 8, 0, &n, &c);
    cr_assert_eq(m->n_ties, 1);
    cr_assert_eq(m->ties[0].embed, net_find(n, "embed"));
    cr_assert_eq(m->ties[0].lm_head, net_find(n, "lm_head"));
    cr_assert_null(m->ties[0].t_tie, "a model without tables has no tie table");
    tied_free(m, c, n);
}

/* The embedding data-parallel (every task holds the whole table) and the LM
 * head split by vocabulary over 4 GPUs (task a holds rows a): in forward
 * each GPU reads the 3 quarters it lacks, one from each other GPU; in
 * backward each GPU's partial gradient of every other quarter goes to that
 * quarter's holder. Each phase: a receiver takes 3 pieces of V/4 x H
 * elements, one after another at 3 us and 10 GB/s. */
Test(tie, equals_the_overlap_bytes_over_the_link_rate)
{
    network *n;
    cluster *c;
    cost_model *m = tied_mini(4, 8, 0, &n, &c);
    const double V = 512, H = 64, lat = 3e-6, bw = 10e9;
    const double wb = m->elem_bytes, gb = COST_GRAD_SYNC_BYTES;
    config dp = CFG(4, 1, 1, 1, 1), vocab = CFG(1, 4, 1, 1, 1);
    double fwd, bwd, bytes;
    double t = cost_t_tie_parts(m, 0, &dp, &vocab, &fwd, &bwd, &bytes);
    double piece = V / 4 * H;
    cr_assert(REL_EQ(fwd, 1e3 * 3 * (lat + piece * wb / bw)), "forward %.17g", fwd);
    cr_assert(REL_EQ(bwd, 1e3 * 3 * (lat + piece * gb / bw)), "backward %.17g", bwd);
    cr_assert(REL_EQ(t, fwd + bwd));
    cr_assert(REL_EQ(bytes, 4 * 3 * piece * (wb + gb)), "bytes %.17g", bytes);
    /* the embedding splits the features (c4), the LM head the vocabulary
     * (c4): each GPU needs its feature quarter of every vocabulary quarter */
    config feat = CFG(1, 4, 1, 1, 1);
    t = cost_t_tie_parts(m, 0, &feat, &vocab, &fwd, &bwd, &bytes);
    piece = V / 4 * H / 4;
    cr_assert(REL_EQ(fwd, 1e3 * 3 * (lat + piece * wb / bw)), "forward %.17g", fwd);
    cr_assert(REL_EQ(bwd, 1e3 * 3 * (lat + piece * gb / bw)), "backward %.17g", bwd);
    cr_assert(REL_EQ(bytes, 4 * 3 * piece * (wb + gb)));
    /* layouts that agree move nothing: both data-parallel; the embedding
     * by vocabulary (r4) as the LM head (c4); by features (c4) as the LM
     * head's contraction split (r4); replicas reading a data-parallel table */
    const config same[][2] = {{dp, dp},
                              {CFG(1, 1, 1, 4, 1), vocab},
                              {feat, CFG(1, 1, 1, 4, 1)},
                              {CFG(1, 1, 1, 1, 4), dp},
                              {CFG(2, 1, 1, 2, 1), CFG(2, 2, 1, 1, 1)}};
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
        cr_assert_eq(cost_t_tie(m, 0, &same[k][0], &same[k][1], &bytes), 0.0, "pair %zu", k);
        cr_assert_eq(bytes, 0.0, "pair %zu", k);
    }
    /* an LM head of replicas (x4) does not sync: each replica needs every
     * partial gradient of the data-parallel embedding (3 each way in) */
    config rep = CFG(1, 1, 1, 1, 4);
    t = cost_t_tie_parts(m, 0, &dp, &rep, &fwd, &bwd, &bytes);
    cr_assert_eq(fwd, 0.0, "each GPU holds the whole table");
    cr_assert(REL_EQ(bwd, 1e3 * 3 * (lat + V * H * gb / bw)), "backward %.17g", bwd);
    tied_free(m, c, n);
}

/* The table (built once per pair of equivalent configs, tie_key) equals
 * every entry computed alone, bit for bit. */
static void same_as_single_entries(const cost_model *m)
{
    const cost_tie *t = &m->ties[0];
    const int ne = m->n_configs[t->embed], nh = m->n_configs[t->lm_head];
    for (int i = 0; i < ne; i++)
        for (int j = 0; j < nh; j++) {
            double v = cost_t_tie(m, 0, &m->configs[t->embed][i], &m->configs[t->lm_head][j], NULL);
            cr_assert_eq(t->t_tie[i * nh + j], v, "entry (%d, %d): table %.17g, alone %.17g", i, j,
                         t->t_tie[i * nh + j], v);
        }
}

/* The search sees the term as an edge embed -> lm_head: its optimum equals
 * brute force over the graph, and Eq. 1 of its configs (with and without
 * tables) equals its cost. */
static void search_is_exact(int gpus, long batch)
{
    network *n;
    cluster *c;
    cost_model *m = tied_mini(gpus, batch, 1, &n, &c);
    lw_error err = {0};
    cr_assert_not_null(m->ties[0].t_tie);
    cost_graph *g = cost_model_graph(m);
    cr_assert_eq(g->n_edges, m->n_edges + 1, "the tie is one more edge");
    cr_assert_eq(g->edge_from[m->n_edges], m->ties[0].embed);
    cr_assert_eq(g->edge_to[m->n_edges], m->ties[0].lm_head);
    int nonzero = 0, ne = m->n_configs[m->ties[0].embed], nh = m->n_configs[m->ties[0].lm_head];
    for (int i = 0; i < ne * nh; i++) nonzero += m->ties[0].t_tie[i] > 0;
    cr_assert(nonzero > 0, "the tie table is not all zero");
    same_as_single_entries(m);
    search_result *r = search_run(g, NULL, NULL);
    cr_assert_not_null(r);
    double bf = search_brute_force(g, NULL, 1e8);
    cr_assert(bf >= 0, "brute force refused");
    cr_assert(REL_EQ(r->cost, bf), "%d GPUs: search %.17g, brute force %.17g", gpus, r->cost, bf);
    cost_model *o = cost_model_open(n, c, NULL, gpus, batch, &err);
    cr_assert_not_null(o, "%s", err.msg);
    strategy_eval ev, eo;
    strategy_evaluate(m, r->config, &ev);
    strategy_evaluate(o, r->config, &eo);
    cr_assert(REL_EQ(ev.total_ms, r->cost), "Eq. 1 %.17g, search %.17g", ev.total_ms, r->cost);
    cr_assert_eq(ev.total_ms, eo.total_ms, "tables %.17g, single entries %.17g", ev.total_ms, eo.total_ms);
    int lm = m->ties[0].lm_head, em = m->ties[0].embed;
    double tie = cost_tie_ms(m, 0, r->config[em], r->config[lm], NULL);
    cr_assert_eq(tie, m->ties[0].t_tie[r->config[em] * nh + r->config[lm]]);
    /* and a strategy whose layouts disagree pays the term in Eq. 1 */
    int *ci = calloc((size_t)m->n_layers, sizeof(int));
    memcpy(ci, r->config, sizeof(int) * (size_t)m->n_layers);
    int worst = 0;
    for (int k = 0; k < nh; k++)
        if (m->ties[0].t_tie[ci[em] * nh + k] > m->ties[0].t_tie[ci[em] * nh + worst]) worst = k;
    ci[lm] = worst;
    strategy_eval ew;
    strategy_evaluate(m, ci, &ew);
    cr_assert(cost_tie_ms(m, 0, ci[em], ci[lm], NULL) > 0);
    cr_assert(REL_EQ(ew.total_ms, cg_evaluate(g, ci)), "Eq. 1 %.17g, graph %.17g", ew.total_ms, cg_evaluate(g, ci));
    char ce[64], ch[64];
    config_format(&m->configs[em][r->config[em]], ce, sizeof ce);
    config_format(&m->configs[lm][r->config[lm]], ch, sizeof ch);
    cr_log_info("tied_mini at %d GPUs, batch %ld: optimum %.6g ms (embed %s, lm_head %s), tie %.6g ms", gpus, batch,
                r->cost, ce, ch, tie);
    free(ci);
    strategy_eval_free(&ew);
    strategy_eval_free(&ev);
    strategy_eval_free(&eo);
    search_result_free(r);
    cg_free(g);
    cost_model_free(o);
    tied_free(m, c, n);
}

Test(tie, search_equals_brute_force_on_a_tied_gpt, .timeout = 300)
{
    search_is_exact(2, 8);
    search_is_exact(4, 8);
    search_is_exact(2, 512);
    search_is_exact(4, 512);
}

/* The simulator: Eq. 1's schedule (no overlap) pays the term as two
 * transfer phases, so its step equals Eq. 1; in data flow the LM head's
 * sync starts only after the embedding's gradient pieces have arrived. */
Test(tie, simulator_moves_the_pieces_before_the_lm_heads_sync)
{
    network *n;
    cluster *c;
    cost_model *m = tied_mini(8, 64, 1, &n, &c);
    same_as_single_entries(m); /* 8 GPUs on 2 nodes */
    int em = m->ties[0].embed, lm = m->ties[0].lm_head;
    int *ci = calloc((size_t)m->n_layers, sizeof(int));
    config dp = CFG(8, 1, 1, 1, 1), vocab = CFG(2, 4, 1, 1, 1);
    for (int i = 0; i < m->n_layers; i++) ci[i] = config_find(m->configs[i], m->n_configs[i], &dp);
    ci[lm] = config_find(m->configs[lm], m->n_configs[lm], &vocab);
    cr_assert(ci[em] >= 0 && ci[lm] >= 0);
    double fwd, bwd, bytes;
    cost_t_tie_parts(m, 0, &dp, &vocab, &fwd, &bwd, &bytes);
    cr_assert(fwd > 0 && bwd > 0);
    strategy_eval ev;
    strategy_evaluate(m, ci, &ev);
    sim_options none = {.overlap = SIM_OVERLAP_NONE}, full = {.overlap = SIM_OVERLAP_FULL};
    sim_result *z = sim_run(m, ci, &none), *f = sim_run(m, ci, &full);
    cr_assert_not_null(z);
    cr_assert_not_null(f);
    cr_assert(fabs(z->step_ms - ev.total_ms) <= 1e-9 * ev.total_ms,
              "no overlap %.17g, Eq. 1 %.17g", z->step_ms, ev.total_ms);
    double tie_bytes = 0, last_piece = 0, sync_start = -1;
    int pieces = 0;
    for (int t = 0; t < f->n_tasks; t++) {
        const sim_task *tk = &f->tasks[t];
        if (tk->kind == SIM_TRANSFER && tk->edge < 0) {
            pieces++;
            tie_bytes += tk->bytes;
            if (tk->backward && tk->end_ms > last_piece) last_piece = tk->end_ms;
        }
        if (tk->kind == SIM_SYNC && tk->layer == lm) sync_start = tk->start_ms;
    }
    cr_assert(pieces > 0);
    cr_assert(REL_EQ(tie_bytes, bytes), "pieces %.17g, the term %.17g", tie_bytes, bytes);
    cr_assert(sync_start >= last_piece && last_piece > 0, "sync at %g, last piece %g", sync_start, last_piece);
    char *doc = sim_to_json(f, m, "test");
    cr_assert(strstr(doc, "\"term\":\"tie\"") != NULL);
    free(doc);
    sim_free(z);
    sim_free(f);
    strategy_eval_free(&ev);
    free(ci);
    tied_free(m, c, n);
}

/* A pipeline stage that holds both tied layers searches with the tie's
 * edge, once a step (scaled as t_s by 1/m per micro-batch): one stage of
 * one micro-batch is the plain search. */
Test(tie, a_pipeline_stage_holding_both_layers_has_the_edge)
{
    network *n;
    cluster *c;
    cost_model *m = tied_mini(4, 64, 1, &n, &c);
    cost_graph *whole = cost_model_graph(m), *one = pipe_stage_graph(m, 0, m->n_layers, -1, 1.0, NULL);
    cost_graph *half = pipe_stage_graph(m, 0, m->n_layers, -1, 0.5, NULL);
    cr_assert_eq(one->n_edges, m->n_edges + 1);
    cr_assert_eq(half->n_edges, m->n_edges + 1);
    const cost_tie *t = &m->ties[0];
    for (int q = 0; q < m->n_configs[t->embed] * m->n_configs[t->lm_head]; q++)
        cr_assert_eq(half->edge_cost[m->n_edges][q], t->t_tie[q] * 0.5);
    search_result *a = search_optimum(whole), *b = search_optimum(one);
    cr_assert_eq(a->cost, b->cost);
    /* a stage without the lm_head has no tie edge */
    cost_graph *front = pipe_stage_graph(m, 0, t->lm_head, -1, 1.0, NULL);
    cr_assert_not_null(front);
    for (int e = 0; e < front->n_edges; e++) cr_assert(front->edge_to[e] < t->lm_head);
    cr_assert_eq(front->n_edges, m->n_edges - 1, "all but the edge into the lm_head");
    search_result_free(a);
    search_result_free(b);
    cg_free(front);
    cg_free(half);
    cg_free(one);
    cg_free(whole);
    tied_free(m, c, n);
}

/* Across pipeline stages (issue 35, Megatron-LM's embedding group): the
 * two groups' corresponding ranks all-reduce the table's gradient, spread
 * over the pairs, at once; the copy on the embedding's stage is the
 * table's weights, gradient and optimizer state in the embedding's tiles. */
Test(tie, across_stages_the_groups_ranks_allreduce_the_tables_gradient)
{
    network *n;
    cluster *c;
    cost_model *m = tied_mini(8, 8, 0, &n, &c);
    const double table = 512.0 * 64, gb = cluster_grad_sync_bytes(c);
    double bytes = 0;
    /* one GPU each, GPUs 0 and 1 of node 0: one two-rank all-reduce of the whole gradient */
    double t = cost_tie_cross_ms(m, 0, 0, 1, 1, 1, &bytes);
    cr_assert(REL_EQ(bytes, table * gb));
    cr_assert(REL_EQ(t, 1e3 * cost_allreduce_s(c, (int[]){0, 1}, 2, table * gb)), "%g", t);
    /* a pair's all-reduce: 2 steps of half the bytes at 10 GB/s and the call's latency */
    cr_assert(t > 1e3 * table * gb / 10e9, "%g", t);
    /* groups of 2 in one node (GPUs 0-1 and 2-3): two pairs, each half the table */
    double t2 = cost_tie_cross_ms(m, 0, 0, 2, 2, 2, NULL);
    cr_assert(REL_EQ(t2, 1e3 * cost_allreduce_s(c, (int[]){0, 2}, 2, table * gb / 2)), "%g", t2);
    /* node 0 against node 1 (4 pairs), sharing node 0's one NIC: the rings together, not one pair's time */
    int rings[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    double t4 = cost_tie_cross_ms(m, 0, 0, 4, 4, 4, NULL);
    cr_assert(REL_EQ(t4, 1e3 * cost_allreduce_rings_s(c, rings, 4, 2, table * gb / 4)), "%g", t4);
    cr_assert(t4 > 1e3 * cost_allreduce_s(c, (int[]){0, 4}, 2, table * gb / 4), "the pairs share the NIC");
    /* different sizes: min(na, nb) pairs */
    cr_assert(REL_EQ(cost_tie_cross_ms(m, 0, 0, 1, 4, 4, NULL), 1e3 * cost_allreduce_s(c, (int[]){0, 4}, 2, table * gb)));
    /* the copy: fp32 weights, gradient, momentum (the default optimizer) of the embedding's tile */
    config dp = CFG(8, 1, 1, 1, 1), split = CFG(1, 4, 1, 2, 1);
    double per = (m->optimizer == OPT_ADAM ? 16 : m->optimizer == OPT_MOMENTUM ? 12 : 8);
    cr_assert(REL_EQ(cost_tie_copy_bytes(m, 0, &dp, 3), table * per), "%g", cost_tie_copy_bytes(m, 0, &dp, 3));
    cr_assert(REL_EQ(cost_tie_copy_bytes(m, 0, &split, 5), table / 8 * per));
    tied_free(m, c, n);
}
