/*
 * Tests of the memory-constrained search (src/memsearch.c) against brute
 * force on random small graphs with random memory tables: the answer is the
 * constrained optimum, it fits, the lower bound never exceeds the true
 * optimum (also when the search is stopped early), "nothing fits" is right
 * and names the smallest peak, and without a budget the answer is the
 * unconstrained optimum. The brute force below shares no code with the
 * search: it sums costs and memory itself.
 */
#include "memsearch.h"
#include "test_helpers.h"

#include "cost.h"
#include "cost_sharding.h"
#include "data.h"
#include "net_json.h"
#include "netgen.h"
#include "plan.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MAXN = 16 };

typedef struct instance {
    cost_graph *g;
    mem_table *t;
    double limit[8];
} instance;

/* A random graph (chain, branch and join, or random DAG), costs in [0, 10),
 * memory per GPU in [0, 100) with some configs using fewer GPUs, a random
 * share of the pinned-out configs, and limits drawn between the least and
 * the most memory each GPU can take. */
static void gen(rng *R, instance *in, int allow_inf)
{
    int n = rng_int(R, 2, 7), G = rng_int(R, 1, 4), nc[MAXN];
    for (int v = 0; v < n; v++) nc[v] = rng_int(R, 1, 4);
    int kind = rng_int(R, 0, 2), ef[64], et[64], ne = 0;
    if (kind == 0)
        for (int v = 0; v + 1 < n; v++) ef[ne] = v, et[ne++] = v + 1;
    else if (kind == 1) {
        for (int v = 1; v + 1 < n; v++) {
            ef[ne] = 0, et[ne++] = v;
            ef[ne] = v, et[ne++] = n - 1;
        }
        if (n == 2) ef[ne] = 0, et[ne++] = 1;
    } else
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++)
                if (rng_unit(R) < 0.4) ef[ne] = a, et[ne++] = b;
    cost_graph *g = cg_new(n, nc, ne);
    for (int v = 0; v < n; v++)
        for (int k = 0; k < nc[v]; k++) g->node_cost[v][k] = 10 * rng_unit(R);
    if (allow_inf)
        for (int v = 0; v < n; v++)
            if (nc[v] > 1 && rng_int(R, 0, 5) == 0) g->node_cost[v][rng_int(R, 0, nc[v] - 1)] = HUGE_VAL;
    for (int e = 0; e < ne; e++) {
        int id = cg_add_edge(g, ef[e], et[e]);
        for (int i = 0; i < nc[ef[e]] * nc[et[e]]; i++) g->edge_cost[id][i] = 10 * rng_unit(R);
    }
    int *tasks[MAXN], tk[MAXN][4];
    for (int v = 0; v < n; v++) {
        for (int k = 0; k < nc[v]; k++) tk[v][k] = rng_int(R, 0, 2) ? G : rng_int(R, 1, G);
        tasks[v] = tk[v];
    }
    mem_table *t = mt_new(n, nc, G, tasks);
    cr_assert_not_null(t);
    for (int v = 0; v < n; v++)
        for (int k = 0; k < nc[v]; k++)
            for (int j = 0; j < tk[v][k]; j++) mt_at(t, v, k)[j] = 100 * rng_unit(R);
    for (int j = 0; j < G; j++) {
        double lo = 0, hi = 0;
        for (int v = 0; v < n; v++) {
            double a = HUGE_VAL, b = 0;
            for (int k = 0; k < nc[v]; k++) {
                double x = j < tk[v][k] ? mt_at(t, v, k)[j] : 0;
                if (x < a) a = x;
                if (x > b) b = x;
            }
            lo += a;
            hi += b;
        }
        /* mostly between, sometimes below the least (nothing fits) */
        in->limit[j] = lo + (rng_unit(R) * 1.1 - 0.05) * (hi - lo);
    }
    in->g = g;
    in->t = t;
}

typedef struct brute {
    double best_cost;    /* least cost that fits; +inf if none */
    double min_peak;     /* least peak over finite-cost assignments */
    int n_fit;
} brute;

/* Every assignment: its own sums of costs and of memory per GPU. */
static brute brute_force(const instance *in)
{
    const cost_graph *g = in->g;
    const mem_table *t = in->t;
    int n = g->n_nodes, x[MAXN] = {0};
    brute b = {HUGE_VAL, HUGE_VAL, 0};
    for (;;) {
        double cost = 0;
        for (int v = 0; v < n; v++) cost += g->node_cost[v][x[v]];
        for (int e = 0; e < g->n_edges; e++)
            cost += g->edge_cost[e][x[g->edge_from[e]] * g->n_configs[g->edge_to[e]] + x[g->edge_to[e]]];
        if (isfinite(cost)) {
            int fits = 1;
            double peak = 0;
            for (int j = 0; j < t->n_gpus; j++) {
                double m = 0;
                for (int v = 0; v < n; v++)
                    if (j < t->tasks[v][x[v]]) m += t->bytes[v][t->off[v][x[v]] + j];
                if (m > in->limit[j]) fits = 0;
                if (m > peak) peak = m;
            }
            if (peak < b.min_peak) b.min_peak = peak;
            if (fits) {
                b.n_fit++;
                if (cost < b.best_cost) b.best_cost = cost;
            }
        }
        int v = 0;
        while (v < n && ++x[v] == g->n_configs[v]) x[v++] = 0;
        if (v == n) break;
    }
    return b;
}

static void drop(instance *in)
{
    cg_free(in->g);
    mt_free(in->t);
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * (1 + fabs(b)); }

/* Both methods (the sweep, where the graph suits it, and branch and bound
 * alone) on the same random graphs against brute force. */
static void random_graphs_equal_brute_force(int no_sweep)
{
    rng R = {0x9e3779b97f4a7c15ULL};
    int n_opt = 0, n_infeasible = 0, n_binding = 0;
    memsearch_options o;
    memsearch_options_init(&o);
    o.no_sweep = no_sweep;
    for (int i = 0; i < 400; i++) {
        instance in;
        gen(&R, &in, i % 3 == 0);
        brute b = brute_force(&in);
        memsearch_result *r = memsearch_run(in.g, in.t, in.limit, &o);
        cr_assert_not_null(r);
        if (isfinite(b.best_cost)) {
            cr_assert_eq(r->status, MEMSEARCH_OPTIMAL, "graph %d: status %d, brute force %g", i, r->status,
                         b.best_cost);
            cr_assert(r->proven_optimal);
            cr_assert(close_to(r->cost, b.best_cost), "graph %d: %.12g vs brute force %.12g", i, r->cost, b.best_cost);
            cr_assert(close_to(cg_evaluate(in.g, r->config), r->cost));
            cr_assert(mt_fits(in.t, r->config, in.limit), "graph %d: the answer does not fit", i);
            cr_assert(r->lower_bound <= b.best_cost + 1e-9 * (1 + b.best_cost));
            cr_assert(close_to(r->lower_bound, r->cost));
            n_opt++;
            search_result *u = search_run(in.g, NULL, NULL);
            if (u->cost < b.best_cost - 1e-9) n_binding++;
            search_result_free(u);
        } else {
            cr_assert_eq(r->status, MEMSEARCH_INFEASIBLE, "graph %d: status %d but nothing fits", i, r->status);
            cr_assert_null(r->config);
            cr_assert(!r->proven_optimal);
            cr_assert(close_to(r->min_peak, b.min_peak), "graph %d: min peak %.12g vs %.12g", i, r->min_peak,
                      b.min_peak);
            cr_assert(close_to(r->min_peak_lower, r->min_peak));
            cr_assert(close_to(mt_peak(in.t, r->min_peak_config, NULL), r->min_peak));
            cr_assert(isfinite(cg_evaluate(in.g, r->min_peak_config)));
            n_infeasible++;
        }
        memsearch_result_free(r);
        drop(&in);
    }
    /* the draw covers each case many times */
    cr_assert(n_opt >= 200 && n_infeasible >= 20 && n_binding >= 100, "optimal %d (budget binding %d), infeasible %d",
              n_opt, n_binding, n_infeasible);
}

Test(memsearch, random_graphs_equal_brute_force)
{
    random_graphs_equal_brute_force(0);
}

Test(memsearch, branch_and_bound_alone_equals_brute_force)
{
    random_graphs_equal_brute_force(1);
}

/* r, of graph i, against brute force b: stopped early (returns 1), it is
 * not proven, whatever it returns fits and costs no less than the optimum,
 * and its lower bound never exceeds the optimum; else it is the optimum, or
 * infeasible where nothing fits. */
static int check_stopped_or_exact(int i, const instance *in, const brute *b, const memsearch_result *r)
{
    if (r->status == MEMSEARCH_TIME_LIMIT) {
        cr_assert(!r->proven_optimal);
        cr_assert(r->lower_bound <= b->best_cost + 1e-9 * (1 + fabs(b->best_cost)), "graph %d: bound %.12g > %.12g", i,
                  r->lower_bound, b->best_cost);
        if (r->config) {
            cr_assert(mt_fits(in->t, r->config, in->limit));
            cr_assert(r->cost >= b->best_cost - 1e-9 * (1 + b->best_cost));
            cr_assert(r->lower_bound <= r->cost);
        }
        return 1;
    }
    if (r->status == MEMSEARCH_OPTIMAL) {
        cr_assert(close_to(r->cost, b->best_cost));
    } else {
        cr_assert_eq(r->status, MEMSEARCH_INFEASIBLE);
        cr_assert(!isfinite(b->best_cost));
    }
    return 0;
}

/* 300 random graphs from seed, each searched with the options set gives
 * graph i and checked by check_stopped_or_exact; with again, searched a
 * second time for the very same answer, and where none fits, no smallest
 * peak asked (set gives no_min_peak). Counts the stops of even and odd i. */
static void stops_against_brute_force(uint64_t seed, void (*set)(int i, memsearch_options *o), int again,
                                      int stopped[2])
{
    rng R = {seed};
    stopped[0] = stopped[1] = 0;
    for (int i = 0; i < 300; i++) {
        instance in;
        gen(&R, &in, 0);
        brute b = brute_force(&in);
        memsearch_options o;
        memsearch_options_init(&o);
        set(i, &o);
        memsearch_result *r = memsearch_run(in.g, in.t, in.limit, &o);
        stopped[i % 2] += check_stopped_or_exact(i, &in, &b, r);
        if (again) {
            memsearch_result *r2 = memsearch_run(in.g, in.t, in.limit, &o);
            cr_assert_eq(r2->status, r->status, "graph %d", i);
            cr_assert(r2->cost == r->cost || (isinf(r->cost) && isinf(r2->cost)), "graph %d", i);
            cr_assert(r2->lower_bound == r->lower_bound || (isinf(r->lower_bound) && isinf(r2->lower_bound)));
            cr_assert_eq(!r->config, !r2->config);
            if (r->config) cr_assert_arr_eq(r->config, r2->config, sizeof(int) * (size_t)in.g->n_nodes);
            if (!r->config) cr_assert(!r->min_peak_config && isinf(r->min_peak), "graph %d: no smallest peak asked", i);
            memsearch_result_free(r2);
        }
        memsearch_result_free(r);
        drop(&in);
    }
}

static void by_subproblems(int i, memsearch_options *o)
{
    o->max_subproblems = 1 + i % 3;
    o->no_sweep = 1;
}

/* Branch and bound stopped after k subproblems: whatever it returns fits,
 * and its lower bound never exceeds the true constrained optimum. (The
 * sweep would settle these small graphs before any stop.) */
Test(memsearch, stopped_early_bound_is_valid)
{
    int stopped[2];
    stops_against_brute_force(0x1234567ULL, by_subproblems, 0, stopped);
    cr_assert(stopped[0] + stopped[1] >= 30, "only %d runs stopped early", stopped[0] + stopped[1]);
}

/* odd i: branch and bound alone, after 1-5 relaxed searches; even i: the
 * sweep, after 1-7 labels */
static void by_counts(int i, memsearch_options *o)
{
    o->no_sweep = i % 2;
    if (o->no_sweep) o->max_searches = 1 + i % 5;
    else o->max_labels = 1 + i % 7;
    o->no_min_peak = 1;
}

/* Stopped by counts instead of time (the sweep's labels, branch and bound's
 * searches: explain's bounds): whatever it returns is valid as above, a
 * second run returns exactly the same, and with no_min_peak nothing is
 * spent on the smallest peak. */
Test(memsearch, stopped_by_counts_is_valid_and_repeatable)
{
    int stopped[2];
    stops_against_brute_force(0x7654321ULL, by_counts, 1, stopped);
    cr_assert(stopped[0] >= 30 && stopped[1] >= 30, "stopped by labels %d, by searches %d", stopped[0], stopped[1]);
}

/* No budget (infinite limits): the unconstrained optimum, unchanged. */
Test(memsearch, no_budget_is_the_plain_search)
{
    rng R = {0xabcdefULL};
    for (int i = 0; i < 200; i++) {
        instance in;
        gen(&R, &in, i % 2);
        for (int j = 0; j < in.t->n_gpus; j++) in.limit[j] = HUGE_VAL;
        search_result *u = search_run(in.g, NULL, NULL);
        memsearch_result *r = memsearch_run(in.g, in.t, in.limit, NULL);
        cr_assert_eq(r->status, MEMSEARCH_OPTIMAL);
        cr_assert_eq(r->cost, u->cost);
        cr_assert_eq(memcmp(r->config, u->config, sizeof(int) * (size_t)in.g->n_nodes), 0);
        cr_assert_eq(r->searches, 1);
        search_result_free(u);
        memsearch_result_free(r);
        drop(&in);
    }
}

/* A two-node example by hand: the cheap configs overflow, so the answer
 * trades time for memory. Node 0: config 0 costs 1 and takes 60 bytes,
 * config 1 costs 3 and takes 20. Node 1: 0 costs 1 (60 B), 1 costs 2 (30 B).
 * Edge costs 0. Limit 90: (0,1) = 3 with 90 B fits; (1,0) = 4 with 80 B. */
Test(memsearch, by_hand)
{
    int nc[2] = {2, 2}, t0[2] = {1, 1}, t1[2] = {1, 1};
    int *tasks[2] = {t0, t1};
    cost_graph *g = cg_new(2, nc, 1);
    cg_add_edge(g, 0, 1);
    g->node_cost[0][0] = 1;
    g->node_cost[0][1] = 3;
    g->node_cost[1][0] = 1;
    g->node_cost[1][1] = 2;
    mem_table *t = mt_new(2, nc, 1, tasks);
    mt_at(t, 0, 0)[0] = 60;
    mt_at(t, 0, 1)[0] = 20;
    mt_at(t, 1, 0)[0] = 60;
    mt_at(t, 1, 1)[0] = 30;
    double lim = 90;
    memsearch_result *r = memsearch_run(g, t, &lim, NULL);
    cr_assert_eq(r->status, MEMSEARCH_OPTIMAL);
    cr_assert_eq(r->cost, 3);
    cr_assert(r->config[0] == 0 && r->config[1] == 1);
    memsearch_result_free(r);
    lim = 49; /* the least is 20 + 30 = 50: nothing fits */
    r = memsearch_run(g, t, &lim, NULL);
    cr_assert_eq(r->status, MEMSEARCH_INFEASIBLE);
    cr_assert_eq(r->min_peak, 50);
    cr_assert(r->min_peak_config[0] == 1 && r->min_peak_config[1] == 1);
    memsearch_result_free(r);
    cr_assert_null(mt_new(2, nc, 0, tasks));
    mt_free(t);
    cg_free(g);
}

/* k identical blocks of b nodes chained through a residual stream, as a
 * transformer's: node 0 feeds block 0; in each block node 1 reads the
 * block's input, node j reads node j - 1, and the last node also reads the
 * block's input (the residual add), its output the next block's input.
 * Every block has the same tables. 2 GPUs, configs on 1 or 2 of them.
 * tie: an edge from node 0 to the last node too (GPT's tied table: a long
 * edge), its costs up to 30, some 0 (matching layouts), some pinned out. */
static void gen_blocks(rng *R, instance *in, int k, int b, int tie)
{
    int n = 1 + k * b, nc[MAXN], bc[4], tk[4][3];
    double cost[4][3], mem[4][3][2], etab[4][9], res[9];
    nc[0] = 3;
    for (int j = 0; j < b; j++) {
        bc[j] = j == b - 1 ? 3 : rng_int(R, 2, 3); /* the block's output has its input's configs */
        for (int c = 0; c < bc[j]; c++) {
            cost[j][c] = 10 * rng_unit(R);
            tk[j][c] = rng_int(R, 1, 2);
            for (int q = 0; q < 2; q++) mem[j][c][q] = 100 * rng_unit(R);
        }
        for (int i = 0; i < 9; i++) etab[j][i] = 10 * rng_unit(R);
    }
    for (int i = 0; i < 9; i++) res[i] = 10 * rng_unit(R);
    for (int v = 1; v < n; v++) nc[v] = bc[(v - 1) % b];
    cost_graph *g = cg_new(n, nc, 2 * n);
    int *tasks[MAXN], tv[MAXN][3];
    for (int c = 0; c < 3; c++) g->node_cost[0][c] = 10 * rng_unit(R), tv[0][c] = 2;
    tasks[0] = tv[0];
    for (int blk = 0; blk < k; blk++) {
        int first = 1 + blk * b, input = blk ? first - 1 : 0;
        for (int j = 0; j < b; j++) {
            int v = first + j, from = j ? v - 1 : input;
            for (int c = 0; c < nc[v]; c++) g->node_cost[v][c] = cost[j][c], tv[v][c] = tk[j][c];
            tasks[v] = tv[v];
            int e = cg_add_edge(g, from, v);
            for (int i = 0; i < nc[from] * nc[v]; i++) g->edge_cost[e][i] = etab[j][i];
        }
        if (b > 1) {
            int e = cg_add_edge(g, input, first + b - 1);
            for (int i = 0; i < 9; i++) g->edge_cost[e][i] = res[i];
        }
    }
    if (tie) {
        int e = cg_add_edge(g, 0, n - 1);
        for (int i = 0; i < nc[0] * nc[n - 1]; i++) {
            double u = rng_unit(R);
            g->edge_cost[e][i] = u < 0.3 ? 0 : u < 0.4 ? HUGE_VAL : 30 * rng_unit(R);
        }
    }
    mem_table *t = mt_new(n, nc, 2, tasks);
    for (int c = 0; c < 3; c++) mt_at(t, 0, c)[0] = mt_at(t, 0, c)[1] = 10;
    for (int v = 1; v < n; v++)
        for (int c = 0; c < nc[v]; c++)
            for (int q = 0; q < tv[v][c]; q++) mt_at(t, v, c)[q] = mem[(v - 1) % b][c][q];
    for (int q = 0; q < 2; q++) {
        double lo = 0, hi = 0;
        for (int v = 0; v < n; v++) {
            double a = HUGE_VAL, z = 0;
            for (int c = 0; c < nc[v]; c++) {
                double x = q < tv[v][c] ? mt_at(t, v, c)[q] : 0;
                a = x < a ? x : a;
                z = x > z ? x : z;
            }
            lo += a, hi += z;
        }
        in->limit[q] = lo + (0.2 + 0.6 * rng_unit(R)) * (hi - lo);
    }
    in->g = g;
    in->t = t;
}

/* n chains of 3-4 blocks of 2-3 nodes (gen_blocks, tie: with the long
 * edge) from seed, each against brute force: the sweep finds and proves the
 * optimum under the limit (a strategy of that cost which fits), or proves
 * that nothing fits; stopped at once, what it returns fits and its bound is
 * no more than the optimum. Counts the proven optima, the graphs where
 * nothing fits and the optima whose blocks differ. */
static void blocks_against_brute_force(uint64_t seed, int n, int tie, int *n_opt, int *n_none, int *mixed)
{
    rng R = {seed};
    *n_opt = *n_none = *mixed = 0;
    for (int i = 0; i < n; i++) {
        instance in;
        int k = rng_int(&R, 3, 4), b = rng_int(&R, 2, 3);
        gen_blocks(&R, &in, k, b, tie);
        brute bf = brute_force(&in);
        memsearch_result *r = memsearch_run(in.g, in.t, in.limit, NULL);
        if (!isfinite(bf.best_cost)) {
            cr_assert_eq(r->status, MEMSEARCH_INFEASIBLE, "graph %d: status %d", i, r->status);
            (*n_none)++;
        } else {
            cr_assert_eq(r->status, MEMSEARCH_OPTIMAL, "graph %d: status %d", i, r->status);
            cr_assert(close_to(r->cost, bf.best_cost), "graph %d: %.12g vs brute force %.12g", i, r->cost,
                      bf.best_cost);
            cr_assert(close_to(cg_evaluate(in.g, r->config), r->cost) && mt_fits(in.t, r->config, in.limit));
            (*n_opt)++;
            int differ = 0;
            for (int blk = 1; blk < k; blk++)
                for (int j = 0; j < b; j++) differ |= r->config[1 + blk * b + j] != r->config[1 + j];
            *mixed += differ;
        }
        memsearch_result_free(r);
        memsearch_options o;
        memsearch_options_init(&o);
        o.time_limit_s = 1e-9; /* stopped at once: what it returns fits, its bound is no more than the optimum */
        r = memsearch_run(in.g, in.t, in.limit, &o);
        cr_assert(r->lower_bound <= bf.best_cost + 1e-9 * (1 + fabs(bf.best_cost)), "graph %d: bound %.12g > %.12g", i,
                  r->lower_bound, bf.best_cost);
        if (r->config) cr_assert(mt_fits(in.t, r->config, in.limit));
        memsearch_result_free(r);
        drop(&in);
    }
}

/* The same with a long edge from the first node to the last (a tied table):
 * the sweep carries node 0's config in its labels instead of keeping it open
 * throughout (memsearch_sweep.c's long edges); the answers equal brute
 * force's, also where the limit forces blocks to differ; stopped at once,
 * what it returns fits and its bound is valid. */
Test(memsearch, long_edge_equals_brute_force)
{
    int n_opt, n_none, mixed;
    blocks_against_brute_force(0x71edb10cULL, 80, 1, &n_opt, &n_none, &mixed);
    cr_assert(n_opt >= 40 && mixed >= 10, "optimal %d (none fits %d), blocks unlike each other %d", n_opt, n_none,
              mixed);
}

/* The sweep on chains of identical blocks against brute force: the
 * optimum under the limit is found and proven, and it often gives blocks
 * different configs (what a bound that treats them alike cannot see).
 * Stopped at once, what it returns fits and its bound is no more than the
 * optimum. */
Test(memsearch, identical_blocks_equal_brute_force)
{
    int n_opt, n_none, mixed;
    blocks_against_brute_force(0x5eedb10cULL, 60, 0, &n_opt, &n_none, &mixed);
    cr_assert(n_opt >= 30 && mixed >= 10, "optimal %d, of them with blocks unlike each other %d", n_opt, mixed);
}

/* A generated GPT of 6 blocks (`layerwise net gpt --layers 6`) on the 8
 * GPUs of a DGX-1 at fp16, 8 per GPU, under a limit halfway between the least peak any
 * strategy has and the plain optimum's: the sweep proves its answer, and
 * branch and bound alone, given a few seconds, finds nothing cheaper that
 * fits and no bound above it. */
Test(memsearch, generated_gpt_is_proven, .timeout = 120)
{
    netgen_params given = {0}, sizes;
    given.layers = 6;
    lw_error err = {0};
    cr_assert_eq(netgen_resolve(NG_GPT, &given, &sizes, &err), 0, "%s", err.msg);
    network *built = netgen_build(NG_GPT, &sizes);
    char *doc = netgen_json(built, NULL); /* as `net gpt -o FILE` writes it and search reads it */
    network *n = net_from_json(doc, strlen(doc), "gpt6.json", &err);
    cr_assert_not_null(n, "%s", err.msg);
    free(doc);
    net_free(built);
    cluster *c = plan_load_cluster("dgx1-v100", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(cluster_set_precision(c, (precision)precision_from_name("fp16"), &err), 0, "%s", err.msg);
    /* the CLI's model (`search -n gpt6.json -c dgx1-v100 -g 8 --precision fp16 --batch-per-gpu 8`) */
    plan *pl = plan_open(n, c, NULL, &(plan_options){.set = {8, 8, 0, 0}}, &err);
    cr_assert_not_null(pl, "%s", err.msg);
    const cost_model *m = plan_model(pl);
    cost_graph *g = cost_model_graph(m);
    mem_table *t = plan_mem_table(m);
    int tie = 0; /* the tied table's edge, embedding -> LM head, spans the graph: the sweep's long edge */
    for (int e = 0; e < g->n_edges; e++) tie |= g->edge_to[e] - g->edge_from[e] > g->n_nodes / 2;
    cr_assert(m->n_ties == 1 && tie, "ties %d, a long edge %d", m->n_ties, tie);
    search_result *u = search_optimum(g);
    int *x = malloc(sizeof(int) * (size_t)g->n_nodes);
    double lower, peak = mt_peak(t, u->config, NULL), least = memsearch_min_peak(g, t, 2, x, &lower);
    cr_assert(least < peak, "least %g, plain %g", least, peak);
    double lim[8];
    for (int k = 0; k < 8; k++) lim[k] = least + 0.5 * (peak - least);
    memsearch_result *r = memsearch_run(g, t, lim, NULL);
    cr_assert_eq(r->status, MEMSEARCH_OPTIMAL, "status %d", r->status);
    cr_assert(r->proven_optimal && mt_fits(t, r->config, lim));
    cr_assert(r->cost > u->cost && close_to(cg_evaluate(g, r->config), r->cost));
    memsearch_options o;
    memsearch_options_init(&o);
    o.no_sweep = 1;
    o.time_limit_s = 2;
    memsearch_result *b = memsearch_run(g, t, lim, &o);
    cr_assert(b->lower_bound <= r->cost * (1 + 1e-9), "branch and bound's bound %.9g > %.9g", b->lower_bound, r->cost);
    if (b->config) cr_assert(b->cost >= r->cost * (1 - 1e-9), "branch and bound found %.9g < %.9g", b->cost, r->cost);
    memsearch_result_free(b);
    memsearch_result_free(r);
    free(x);
    search_result_free(u);
    mt_free(t);
    cg_free(g);
    plan_free(pl);
}
