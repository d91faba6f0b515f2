/*
 * Tests of the elimination engine (src/search.c): hand-made graphs whose
 * tables are worked out by hand, then a few hundred random graphs of the
 * shapes CNNs have (and some they do not), each checked against brute force
 * and step by step against the definitions of node and edge elimination.
 * Random graphs come from a seeded xorshift generator, so a failure names
 * a family and an index that reproduce it.
 */
#include "search.h"
#include "test_helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------- helpers */

static int close_rel(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

static int edge_from(const cost_graph *g, const search_result *r, int e)
{
    return e < g->n_edges ? g->edge_from[e] : r->steps[e - g->n_edges].from;
}

static int edge_to(const cost_graph *g, const search_result *r, int e)
{
    return e < g->n_edges ? g->edge_to[e] : r->steps[e - g->n_edges].to;
}

static const double *edge_table(const cost_graph *g, const search_result *r, int e)
{
    return e < g->n_edges ? g->edge_cost[e] : r->steps[e - g->n_edges].table;
}

static void set_table(cost_graph *g, int e, const double *vals)
{
    int n = g->n_configs[g->edge_from[e]] * g->n_configs[g->edge_to[e]];
    memcpy(g->edge_cost[e], vals, (size_t)n * sizeof(double));
}

/*
 * What the order rule of search.c says the next step must be, from the
 * state after `s` steps: an edge elimination at the lowest node with two
 * out-edges to one head (lowest head, two lowest ids), else (with `fold`)
 * the fold of the lowest node with one alive edge whose other end has
 * another (the lowest id of those), else the node elimination of the
 * lowest eligible node, else nothing (kind = -1).
 */
static void expected_step(const cost_graph *g, const search_result *r, int fold, const unsigned char *an,
                          const unsigned char *ae, int *kind, int *node, int *into, int *e1, int *e2)
{
    int ne = g->n_edges + r->n_steps;
    *kind = -1;
    *into = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        int head = -1;
        for (int a = 0; a < ne; a++) {
            if (!ae[a] || edge_from(g, r, a) != i) continue;
            for (int b = a + 1; b < ne; b++)
                if (ae[b] && edge_from(g, r, b) == i && edge_to(g, r, b) == edge_to(g, r, a) &&
                    (head < 0 || edge_to(g, r, a) < head))
                    head = edge_to(g, r, a);
        }
        if (head < 0) continue;
        int lo = -1, lo2 = -1;
        for (int a = 0; a < ne; a++)
            if (ae[a] && edge_from(g, r, a) == i && edge_to(g, r, a) == head) {
                if (lo < 0) lo = a;
                else if (lo2 < 0) lo2 = a;
            }
        *kind = ELIM_EDGE;
        *node = -1;
        *e1 = lo;
        *e2 = lo2;
        return;
    }
    for (int j = 0; fold && j < g->n_nodes; j++) {
        if (!an[j]) continue;
        int deg = 0, only = -1;
        for (int a = 0; a < ne; a++) {
            if (!ae[a]) continue;
            deg += (edge_from(g, r, a) == j) + (edge_to(g, r, a) == j); /* a self loop counts twice */
            if (edge_from(g, r, a) == j || edge_to(g, r, a) == j) only = a;
        }
        if (deg != 1) continue;
        int u = edge_from(g, r, only) == j ? edge_to(g, r, only) : edge_from(g, r, only), other = -1;
        for (int a = 0; a < ne && other < 0; a++)
            if (ae[a] && a != only && (edge_from(g, r, a) == u || edge_to(g, r, a) == u)) other = a;
        if (other < 0) continue;
        *kind = ELIM_FOLD;
        *node = j;
        *into = u;
        *e1 = only;
        *e2 = other;
        return;
    }
    for (int j = 0; j < g->n_nodes; j++) {
        if (!an[j]) continue;
        int nin = 0, nout = 0, ein = -1, eout = -1;
        for (int a = 0; a < ne; a++) {
            if (!ae[a]) continue;
            if (edge_to(g, r, a) == j) nin++, ein = a;
            if (edge_from(g, r, a) == j) nout++, eout = a;
        }
        if (nin != 1 || nout != 1) continue;
        int i = edge_from(g, r, ein), k = edge_to(g, r, eout);
        if (i == j || k == j || i == k) continue;
        *kind = ELIM_NODE;
        *node = j;
        *e1 = ein;
        *e2 = eout;
        return;
    }
}

/* A fold against its definition: h(cu) = min over cj of node_cost[cj] +
 * t1 (summed in that order, so equality is exact), the lowest argmin, and
 * the new table e2's plus h along u's axis. */
static void check_fold(const cost_graph *g, const search_result *r, int s)
{
    const elim_step *st = &r->steps[s];
    int j = st->node, u = st->into, cu_n = g->n_configs[u], cj_n = g->n_configs[j];
    const double *t1 = edge_table(g, r, st->e1), *t2 = edge_table(g, r, st->e2);
    int u_from = edge_from(g, r, st->e1) == u;
    cr_assert(u_from ? edge_to(g, r, st->e1) == j : edge_from(g, r, st->e1) == j && edge_to(g, r, st->e1) == u,
              "step %d: e1 joins the folded node and its neighbour", s);
    cr_assert_eq(st->from, edge_from(g, r, st->e2), "step %d: from", s);
    cr_assert_eq(st->to, edge_to(g, r, st->e2), "step %d: to", s);
    cr_assert(st->from == u || st->to == u, "step %d: e2 touches the neighbour", s);
    cr_assert_not_null(st->argmin);
    double h[64];
    cr_assert(cu_n <= 64);
    for (int cu = 0; cu < cu_n; cu++) {
        int arg = -1;
        for (int cj = 0; cj < cj_n; cj++) {
            double v = g->node_cost[j][cj] + t1[u_from ? cu * cj_n + cj : cj * cu_n + cu];
            if (arg < 0 || v < h[cu]) h[cu] = v, arg = cj;
        }
        cr_assert_eq(st->argmin[cu], arg, "step %d: argmin(%d)", s, cu);
    }
    int f_n = g->n_configs[st->from], t_n = g->n_configs[st->to];
    for (int a = 0; a < f_n; a++)
        for (int b = 0; b < t_n; b++)
            cr_assert_eq(st->table[a * t_n + b], t2[a * t_n + b] + h[st->from == u ? a : b], "step %d: t'(%d,%d)", s,
                         a, b);
}

/*
 * Every step against its definition: the right step by the order rule
 * (folds only when `fold`), endpoints, a table equal to t1 + t2 (edge), to
 * the min over cj (node, computed the same way so it must match exactly)
 * or to t2 plus j's best along u's axis (fold), the lowest argmin; the
 * reduction is maximal; search_state_at agrees with left/edges_left; the
 * undo order is the reverse of the node eliminations and folds.
 */
static void check_steps_with(const cost_graph *g, const search_result *r, int fold)
{
    int n = g->n_nodes, m0 = g->n_edges, ne = m0 + r->n_steps;
    unsigned char *an = malloc((size_t)n + 1), *ae = malloc((size_t)ne + 1);
    cr_assert(an && ae);
    cr_assert_eq(r->n_nodes, n);
    cr_assert_eq(r->n_edges_original, m0);
    cr_assert(r->n_steps <= m0);

    search_state_at(r, 0, an, ae);
    for (int v = 0; v < n; v++) cr_assert_eq(an[v], 1, "node %d not alive at step 0", v);
    for (int e = 0; e < ne; e++) cr_assert_eq(ae[e], e < m0, "edge %d wrong at step 0", e);

    for (int s = 0; s <= r->n_steps; s++) {
        search_state_at(r, s, an, ae);
        int kind, node = -1, into = -1, e1 = -1, e2 = -1;
        expected_step(g, r, fold, an, ae, &kind, &node, &into, &e1, &e2);
        if (s == r->n_steps) {
            cr_assert_eq(kind, -1, "reduction stopped early: step %d still applies", s);
            break;
        }
        const elim_step *st = &r->steps[s];
        cr_assert_eq((int)st->kind, kind, "step %d: kind", s);
        cr_assert_eq(st->node, node, "step %d: node", s);
        cr_assert_eq(st->into, into, "step %d: into", s);
        cr_assert_eq(st->e1, e1, "step %d: e1", s);
        cr_assert_eq(st->e2, e2, "step %d: e2", s);
        cr_assert_eq(st->new_edge, m0 + s);
        cr_assert(ae[st->e1] && ae[st->e2] && st->e1 != st->e2);
        if (st->kind == ELIM_FOLD) {
            check_fold(g, r, s);
            continue;
        }
        int i = edge_from(g, r, st->e1);
        cr_assert_eq(st->from, i);
        const double *t1 = edge_table(g, r, st->e1), *t2 = edge_table(g, r, st->e2);
        if (st->kind == ELIM_EDGE) {
            int k = edge_to(g, r, st->e1);
            cr_assert_eq(st->to, k);
            cr_assert_eq(edge_from(g, r, st->e2), i);
            cr_assert_eq(edge_to(g, r, st->e2), k);
            cr_assert_null(st->argmin);
            for (int x = 0; x < g->n_configs[i] * g->n_configs[k]; x++)
                cr_assert_eq(st->table[x], t1[x] + t2[x], "step %d: summed table", s);
        } else {
            int j = st->node, k = edge_to(g, r, st->e2);
            cr_assert_eq(edge_to(g, r, st->e1), j);
            cr_assert_eq(edge_from(g, r, st->e2), j);
            cr_assert_eq(st->to, k);
            cr_assert_not_null(st->argmin);
            int ci_n = g->n_configs[i], cj_n = g->n_configs[j], ck_n = g->n_configs[k];
            for (int ci = 0; ci < ci_n; ci++)
                for (int ck = 0; ck < ck_n; ck++) {
                    double best = 0;
                    int arg = -1;
                    for (int cj = 0; cj < cj_n; cj++) {
                        double v = (g->node_cost[j][cj] + t1[ci * cj_n + cj]) + t2[cj * ck_n + ck];
                        if (arg < 0 || v < best) best = v, arg = cj;
                    }
                    cr_assert_eq(st->table[ci * ck_n + ck], best, "step %d: t'(%d,%d)", s, ci, ck);
                    cr_assert_eq(st->argmin[ci * ck_n + ck], arg, "step %d: argmin(%d,%d)", s, ci, ck);
                }
        }
    }

    /* after every step: exactly r->left and r->edges_left */
    search_state_at(r, r->n_steps, an, ae);
    int nl = 0;
    for (int v = 0; v < n; v++)
        if (an[v]) {
            cr_assert(nl < r->n_left);
            cr_assert_eq(r->left[nl], v, "left[%d]", nl);
            nl++;
        }
    cr_assert_eq(nl, r->n_left);
    int nel = 0;
    for (int e = 0; e < ne; e++)
        if (ae[e]) {
            cr_assert(nel < r->n_edges_left);
            cr_assert_eq(r->edges_left[nel], e);
            nel++;
        }
    cr_assert_eq(nel, r->n_edges_left);

    /* undo order: node eliminations and folds, last first */
    int u = 0;
    for (int s = r->n_steps - 1; s >= 0; s--)
        if (r->steps[s].kind != ELIM_EDGE) {
            cr_assert(u < r->n_undo);
            cr_assert_eq(r->undo_node[u], r->steps[s].node);
            u++;
        }
    cr_assert_eq(u, r->n_undo);
    free(an);
    free(ae);
}

/* With the fold setting the search ran with. */
static void check_steps(const cost_graph *g, const search_result *r)
{
    check_steps_with(g, r, r->fold);
}

/* Algorithm 1 as the paper has it: node and edge eliminations only. */
static search_result *paper_search(const cost_graph *g)
{
    search_options o;
    search_options_init(&o);
    o.fold = 0;
    return search_run_with(g, &o, NULL, NULL, NULL);
}

/* search_run against brute force; returns the result for more checks. */
static search_result *check_optimal(const cost_graph *g, const search_options *opt,
                                    const char *what, int idx)
{
    search_info info;
    search_result *r = search_run_with(g, opt, NULL, NULL, &info);
    cr_assert_not_null(r, "%s #%d: search failed: %s", what, idx, search_status_message(info.status));
    cr_assert_eq(info.status, SEARCH_OK);
    cr_assert_eq(info.n_left, r->n_left);
    int *best = calloc((size_t)g->n_nodes + 1, sizeof(int));
    double bf = search_brute_force(g, best, 1e7);
    cr_assert(bf >= 0, "%s #%d: brute force refused", what, idx);
    for (int v = 0; v < g->n_nodes; v++)
        cr_assert(r->config[v] >= 0 && r->config[v] < g->n_configs[v], "%s #%d: config range", what, idx);
    cr_assert_eq(r->cost, cg_evaluate(g, r->config), "%s #%d: cost is not the configs' cost", what, idx);
    cr_assert(close_rel(r->cost, bf), "%s #%d: search %.17g, brute force %.17g", what, idx, r->cost, bf);
    double space = 1;
    for (int a = 0; a < r->n_left; a++) space *= g->n_configs[r->left[a]];
    cr_assert_eq(r->final_space, space);
    free(best);
    return r;
}

/* ---------- hand-made graphs */

static cost_graph *graph_of(int n, const int *nc)
{
    cost_graph *g = cg_new(n, nc, 1); /* 1: let cg_add_edge grow the arrays */
    cr_assert_not_null(g);
    return g;
}

Test(search_hand, chain_of_three)
{
    /* A(2) -> B(3) -> C(2). Eliminating B by hand:
     * ci=0: cj=0: 1+0+[1,6]=[2,7]  cj=1: 0+4+[2,2]=[6,6]  cj=2: 5+1+[0,0]=[6,6]
     *       -> [2 (cj 0), 6 (cj 1; cj 2 ties, the lower wins)]
     * ci=1: cj=0: 1+2+[1,6]=[4,9]  cj=1: 0+0+[2,2]=[2,2]  cj=2: 5+3+0=[8,8]
     *       -> [2 (cj 1), 2 (cj 1)]
     * Final over A, C: (0,0) 0+2+2=4, (0,1) 0+0+6=6, (1,0) 3+2+2=7, (1,1) 3+0+2=5. */
    int nc[3] = {2, 3, 2};
    cost_graph *g = graph_of(3, nc);
    double na[] = {0, 3}, nb[] = {1, 0, 5}, ncc[] = {2, 0};
    memcpy(g->node_cost[0], na, sizeof na);
    memcpy(g->node_cost[1], nb, sizeof nb);
    memcpy(g->node_cost[2], ncc, sizeof ncc);
    cr_assert_eq(cg_add_edge(g, 0, 1), 0);
    cr_assert_eq(cg_add_edge(g, 1, 2), 1);
    double t1[] = {0, 4, 1, 2, 0, 3}, t2[] = {1, 6, 2, 2, 0, 0};
    set_table(g, 0, t1);
    set_table(g, 1, t2);

    search_result *r = paper_search(g);
    cr_assert_not_null(r);
    cr_assert_eq(r->n_steps, 1);
    const elim_step *st = &r->steps[0];
    cr_assert_eq(st->kind, ELIM_NODE);
    cr_assert_eq(st->node, 1);
    cr_assert_eq(st->e1, 0);
    cr_assert_eq(st->e2, 1);
    cr_assert_eq(st->new_edge, 2);
    cr_assert_eq(st->from, 0);
    cr_assert_eq(st->to, 2);
    double want[] = {2, 6, 2, 2};
    int want_arg[] = {0, 1, 1, 1};
    for (int x = 0; x < 4; x++) {
        cr_assert_eq(st->table[x], want[x], "t'[%d]", x);
        cr_assert_eq(st->argmin[x], want_arg[x], "argmin[%d]", x);
    }
    cr_assert_eq(r->n_left, 2);
    cr_assert_eq(r->left[0], 0);
    cr_assert_eq(r->left[1], 2);
    cr_assert_eq(r->n_edges_left, 1);
    cr_assert_eq(r->edges_left[0], 2);
    cr_assert_eq(r->method, FINAL_ENUMERATION);
    cr_assert_eq(r->final_space, 4.0);
    cr_assert_eq(r->cost, 4.0);
    cr_assert_eq(r->config[0], 0);
    cr_assert_eq(r->config[1], 0);
    cr_assert_eq(r->config[2], 0);
    cr_assert_eq(r->n_undo, 1);
    cr_assert_eq(r->undo_node[0], 1);
    check_steps(g, r);
    search_result_free(r);
    cg_free(g);
}

/* An edge may borrow its table (cost_model_graph lends the model's): the
 * search reads it where it is and gives what a copy gives; cg_free leaves
 * it to its owner (ASan reports a double free otherwise), and the table is
 * unchanged after the search. */
Test(search_hand, borrowed_tables_search_as_copies_and_stay_their_owners)
{
    int nc[3] = {2, 3, 2};
    double na[] = {0, 3}, nb[] = {1, 0, 5}, ncc[] = {2, 0};
    double t1[] = {0, 4, 1, 2, 0, 3}, t2[] = {1, 6, 2, 2, 0, 0};
    double *own = malloc(sizeof t2);
    memcpy(own, t2, sizeof t2);
    cost_graph *g[2];
    search_result *r[2];
    for (int b = 0; b < 2; b++) {
        g[b] = graph_of(3, nc);
        memcpy(g[b]->node_cost[0], na, sizeof na);
        memcpy(g[b]->node_cost[1], nb, sizeof nb);
        memcpy(g[b]->node_cost[2], ncc, sizeof ncc);
        cr_assert_eq(cg_add_edge(g[b], 0, 1), 0);
        set_table(g[b], 0, t1);
        if (b) {
            cr_assert_eq(cg_add_edge_borrowed(g[b], 1, 2, own), 1);
            cr_assert_eq(g[b]->edge_cost[1], own, "the table itself, not a copy");
        } else {
            cr_assert_eq(cg_add_edge(g[b], 1, 2), 1);
            set_table(g[b], 1, t2);
        }
        r[b] = paper_search(g[b]);
        cr_assert_not_null(r[b]);
        check_steps(g[b], r[b]);
    }
    cr_assert_eq(r[1]->cost, r[0]->cost);
    cr_assert_eq(r[1]->cost, 4.0);
    for (int i = 0; i < 3; i++) cr_assert_eq(r[1]->config[i], r[0]->config[i]);
    for (int x = 0; x < 4; x++) cr_assert_eq(r[1]->steps[0].table[x], r[0]->steps[0].table[x]);
    cr_assert_eq(cg_add_edge_borrowed(g[1], 0, 3, own), -1, "a node out of range");
    cr_assert_eq(cg_add_edge_borrowed(g[1], 0, 1, NULL), -1, "no table");
    for (int b = 0; b < 2; b++) {
        search_result_free(r[b]);
        cg_free(g[b]);
    }
    for (int x = 0; x < 6; x++) cr_assert_eq(own[x], t2[x], "the owner's table is untouched");
    free(own);
}

/* The same chain with folds (the default): A has one edge, to B, and B has
 * another, so A folds into B: h(cB) = min over cA of nA[cA] + t1(cA, cB):
 * cB=0: min(0+0, 3+2) = 0 (cA 0); cB=1: min(0+4, 3+0) = 3 (cA 1);
 * cB=2: min(0+1, 3+3) = 1 (cA 0). The new edge B -> C is t2 plus h along
 * B's rows: {1,6, 2+3,2+3, 0+1,0+1}. B and C are left (nothing more folds:
 * C has no other edge). Final over B, C: (0,0) 1+2+1 = 4 is the least. */
Test(search_hand, chain_of_three_folds_its_end)
{
    int nc[3] = {2, 3, 2};
    cost_graph *g = graph_of(3, nc);
    double na[] = {0, 3}, nb[] = {1, 0, 5}, ncc[] = {2, 0};
    memcpy(g->node_cost[0], na, sizeof na);
    memcpy(g->node_cost[1], nb, sizeof nb);
    memcpy(g->node_cost[2], ncc, sizeof ncc);
    cg_add_edge(g, 0, 1);
    cg_add_edge(g, 1, 2);
    double t1[] = {0, 4, 1, 2, 0, 3}, t2[] = {1, 6, 2, 2, 0, 0};
    set_table(g, 0, t1);
    set_table(g, 1, t2);

    search_result *r = search_run(g, NULL, NULL);
    cr_assert_not_null(r);
    cr_assert(r->fold);
    cr_assert_eq(r->n_steps, 1);
    const elim_step *st = &r->steps[0];
    cr_assert_eq(st->kind, ELIM_FOLD);
    cr_assert_eq(st->node, 0);
    cr_assert_eq(st->into, 1);
    cr_assert_eq(st->e1, 0);
    cr_assert_eq(st->e2, 1);
    cr_assert_eq(st->new_edge, 2);
    cr_assert_eq(st->from, 1);
    cr_assert_eq(st->to, 2);
    double want[] = {1, 6, 5, 5, 1, 1};
    int want_arg[] = {0, 1, 0};
    for (int x = 0; x < 6; x++) cr_assert_eq(st->table[x], want[x], "t'[%d]", x);
    for (int x = 0; x < 3; x++) cr_assert_eq(st->argmin[x], want_arg[x], "argmin[%d]", x);
    cr_assert_eq(r->n_left, 2);
    cr_assert_eq(r->left[0], 1);
    cr_assert_eq(r->left[1], 2);
    cr_assert_eq(r->n_edges_left, 1);
    cr_assert_eq(r->edges_left[0], 2);
    cr_assert_eq(r->final_space, 6.0);
    cr_assert_eq(r->cost, 4.0);
    for (int v = 0; v < 3; v++) cr_assert_eq(r->config[v], 0);
    cr_assert_eq(r->n_undo, 1);
    cr_assert_eq(r->undo_node[0], 0);
    /* the stepper after the fold: A and its edge gone, e1 replaced by e2 */
    unsigned char an[3], ae[3];
    search_state_at(r, 1, an, ae);
    unsigned char wn[] = {0, 1, 1}, we[] = {0, 0, 1};
    cr_assert_arr_eq(an, wn, 3);
    cr_assert_arr_eq(ae, we, 3);
    check_steps(g, r);
    /* every config of every node against brute force: A at 1 costs 3 + t1(1, cB) + ... */
    double mem[7], *marg[3] = {mem, mem + 2, mem + 5};
    cr_assert_eq(search_min_marginals(g, r, marg), 0);
    double wantm[] = {4, 5, 4, 5, 6, 4, 5};
    for (int x = 0; x < 7; x++) cr_assert_eq(mem[x], wantm[x], "marginal %d: %g", x, mem[x]);
    search_result_free(r);
    cg_free(g);
}

/* A chain folds from its lowest end, one node per step, each into the
 * next; the stepper's state after each fold has that node and its edge
 * gone and the next edge replaced. */
Test(search_hand, a_chain_is_folded_node_by_node)
{
    enum { N = 7 };
    int nc[N] = {3, 2, 4, 3, 2, 5, 3};
    cost_graph *g = graph_of(N, nc);
    rng R = {5150};
    for (int v = 0; v < N; v++)
        for (int c = 0; c < nc[v]; c++) g->node_cost[v][c] = rng_int(&R, 0, 9);
    for (int v = 0; v + 1 < N; v++) {
        int e = cg_add_edge(g, v, v + 1);
        for (int x = 0; x < nc[v] * nc[v + 1]; x++) g->edge_cost[e][x] = rng_int(&R, 0, 9);
    }
    search_result *r = check_optimal(g, NULL, "folded chain", 0);
    cr_assert_eq(r->n_steps, N - 2);
    unsigned char an[N], ae[N - 1 + N - 2];
    for (int s = 0; s < N - 2; s++) {
        const elim_step *st = &r->steps[s];
        cr_assert_eq(st->kind, ELIM_FOLD, "step %d", s);
        cr_assert_eq(st->node, s);
        cr_assert_eq(st->into, s + 1);
        cr_assert_eq(st->e1, s == 0 ? 0 : N - 1 + s - 1); /* the edge the last fold made */
        cr_assert_eq(st->e2, s + 1);
        cr_assert_eq(st->from, s + 1);
        cr_assert_eq(st->to, s + 2);
        search_state_at(r, s + 1, an, ae);
        for (int v = 0; v < N; v++) cr_assert_eq(an[v], v > s, "after step %d: node %d", s, v);
        for (int e = 0; e < N - 1 + N - 2; e++) {
            int alive = e < N - 1 ? e > s + 1 : e == N - 1 + s;
            cr_assert_eq(ae[e], alive, "after step %d: edge %d", s, e);
        }
    }
    cr_assert_eq(r->n_left, 2);
    cr_assert_eq(r->left[0], N - 2);
    cr_assert_eq(r->left[1], N - 1);
    check_steps(g, r);
    /* the paper's Algorithm 1 on the same chain: node eliminations only, the same optimum */
    search_result *p = paper_search(g);
    cr_assert_not_null(p);
    cr_assert_eq(p->n_steps, N - 2);
    for (int s = 0; s < N - 2; s++) cr_assert_eq(p->steps[s].kind, ELIM_NODE, "step %d", s);
    cr_assert_eq(p->left[0], 0);
    cr_assert_eq(p->left[1], N - 1);
    cr_assert_eq(p->cost, r->cost);
    check_steps(g, p);
    search_result_free(p);
    search_result_free(r);
    cg_free(g);
}

/* Folds of every shape and direction: j the tail or the head of its edge,
 * the neighbour the tail or the head of the edge it keeps, config counts
 * 1-40, ties. */
Test(search_hand, fold_tables_of_many_shapes_and_directions)
{
    rng R = {8086};
    for (int i = 0; i < 64; i++) {
        int nc[3] = {rng_int(&R, 1, 40), rng_int(&R, 1, 40), rng_int(&R, 1, 40)};
        cost_graph *g = graph_of(3, nc);
        /* node 0 has one edge, to or from node 1; node 1's other edge goes to or comes from node 2 */
        if (i & 1) cg_add_edge(g, 0, 1);
        else cg_add_edge(g, 1, 0);
        if (i & 2) cg_add_edge(g, 1, 2);
        else cg_add_edge(g, 2, 1);
        int ties = (i >> 2) & 1;
        for (int v = 0; v < 3; v++)
            for (int c = 0; c < nc[v]; c++) g->node_cost[v][c] = ties ? rng_int(&R, 0, 2) : rng_unit(&R);
        for (int e = 0; e < 2; e++)
            for (int x = 0; x < nc[g->edge_from[e]] * nc[g->edge_to[e]]; x++)
                g->edge_cost[e][x] = ties ? rng_int(&R, 0, 2) : rng_unit(&R);
        search_result *r = search_run(g, NULL, NULL);
        cr_assert_not_null(r);
        cr_assert_eq(r->n_steps, 1);
        cr_assert_eq(r->steps[0].kind, ELIM_FOLD);
        cr_assert_eq(r->steps[0].node, 0);
        check_steps(g, r); /* t' and argmin against the definition */
        cr_assert_eq(r->cost, cg_evaluate(g, r->config));
        if ((double)nc[0] * nc[1] * nc[2] <= 1e5)
            cr_assert(close_rel(r->cost, search_brute_force(g, NULL, 1e5)));
        search_result_free(r);
        cg_free(g);
    }
}

Test(search_hand, parallel_edges_are_summed)
{
    int nc[2] = {2, 2};
    cost_graph *g = graph_of(2, nc);
    cg_add_edge(g, 0, 1);
    cg_add_edge(g, 0, 1);
    cg_add_edge(g, 0, 1);
    double a[] = {1, 2, 3, 4}, b[] = {0, 5, 1, 0}, c[] = {2, 0, 0, 0};
    set_table(g, 0, a);
    set_table(g, 1, b);
    set_table(g, 2, c);
    search_result *r = search_run(g, NULL, NULL);
    cr_assert_not_null(r);
    /* (0,1) -> 3, then (2,3) -> 4 */
    cr_assert_eq(r->n_steps, 2);
    cr_assert_eq(r->steps[0].kind, ELIM_EDGE);
    cr_assert_eq(r->steps[0].node, -1);
    cr_assert_eq(r->steps[0].e1, 0);
    cr_assert_eq(r->steps[0].e2, 1);
    cr_assert_null(r->steps[0].argmin);
    double s01[] = {1, 7, 4, 4}, s012[] = {3, 7, 4, 4};
    for (int x = 0; x < 4; x++) cr_assert_eq(r->steps[0].table[x], s01[x]);
    cr_assert_eq(r->steps[1].e1, 2);
    cr_assert_eq(r->steps[1].e2, 3);
    for (int x = 0; x < 4; x++) cr_assert_eq(r->steps[1].table[x], s012[x]);
    cr_assert_eq(r->n_edges_left, 1);
    cr_assert_eq(r->edges_left[0], 4);
    cr_assert_eq(r->n_undo, 0);
    cr_assert_eq(r->cost, 3.0);
    cr_assert_eq(r->config[0], 0);
    cr_assert_eq(r->config[1], 0);
    check_steps(g, r);
    search_result_free(r);
    cg_free(g);
}

Test(search_hand, order_rule_edge_eliminations_first_lowest_head_first)
{
    /* node 0 has two edges to 2 (e0, e1), then two to 1 (e2, e3); 1 -> 2.
     * Rule: the lowest head first, so (e2, e3) -> e5, then (e0, e1) -> e6,
     * then node 1 (e5, e4) -> e7, then (e6, e7) -> e8. */
    int nc[3] = {2, 3, 2};
    cost_graph *g = graph_of(3, nc);
    cg_add_edge(g, 0, 2);
    cg_add_edge(g, 0, 2);
    cg_add_edge(g, 0, 1);
    cg_add_edge(g, 0, 1);
    cg_add_edge(g, 1, 2);
    rng R = {4242};
    for (int e = 0; e < 5; e++)
        for (int x = 0; x < nc[g->edge_from[e]] * nc[g->edge_to[e]]; x++)
            g->edge_cost[e][x] = rng_int(&R, 0, 5);
    search_result *r = check_optimal(g, NULL, "order", 0);
    int kinds[] = {ELIM_EDGE, ELIM_EDGE, ELIM_NODE, ELIM_EDGE};
    int e1s[] = {2, 0, 5, 6}, e2s[] = {3, 1, 4, 7};
    cr_assert_eq(r->n_steps, 4);
    for (int k = 0; k < 4; k++) {
        cr_assert_eq((int)r->steps[k].kind, kinds[k], "step %d", k);
        cr_assert_eq(r->steps[k].e1, e1s[k], "step %d", k);
        cr_assert_eq(r->steps[k].e2, e2s[k], "step %d", k);
    }
    cr_assert_eq(r->steps[2].node, 1);
    check_steps(g, r);
    search_result_free(r);
    cg_free(g);
}

Test(search_hand, diamond_two_node_eliminations_then_an_edge_elimination)
{
    /* 0 -> 1 -> 3 and 0 -> 2 -> 3 */
    int nc[4] = {3, 2, 4, 3};
    cost_graph *g = graph_of(4, nc);
    cg_add_edge(g, 0, 1); /* e0 */
    cg_add_edge(g, 1, 3); /* e1 */
    cg_add_edge(g, 0, 2); /* e2 */
    cg_add_edge(g, 2, 3); /* e3 */
    rng R = {12345};
    for (int v = 0; v < 4; v++)
        for (int c = 0; c < nc[v]; c++) g->node_cost[v][c] = rng_int(&R, 0, 9);
    for (int e = 0; e < 4; e++)
        for (int x = 0; x < nc[g->edge_from[e]] * nc[g->edge_to[e]]; x++)
            g->edge_cost[e][x] = rng_int(&R, 0, 9);
    search_result *r = check_optimal(g, NULL, "diamond", 0);
    cr_assert_eq(r->n_steps, 3);
    cr_assert_eq(r->steps[0].kind, ELIM_NODE);
    cr_assert_eq(r->steps[0].node, 1);
    cr_assert_eq(r->steps[0].new_edge, 4);
    cr_assert_eq(r->steps[1].kind, ELIM_NODE);
    cr_assert_eq(r->steps[1].node, 2);
    cr_assert_eq(r->steps[1].new_edge, 5);
    cr_assert_eq(r->steps[2].kind, ELIM_EDGE);
    cr_assert_eq(r->steps[2].e1, 4);
    cr_assert_eq(r->steps[2].e2, 5);
    cr_assert_eq(r->n_left, 2);
    cr_assert_eq(r->left[0], 0);
    cr_assert_eq(r->left[1], 3);
    cr_assert_eq(r->n_edges_left, 1);
    cr_assert_eq(r->edges_left[0], 6);
    cr_assert_eq(r->n_undo, 2);
    cr_assert_eq(r->undo_node[0], 2);
    cr_assert_eq(r->undo_node[1], 1);

    /* the stepper, one step at a time */
    unsigned char an[4], ae[7];
    search_state_at(r, 1, an, ae);
    unsigned char n1[] = {1, 0, 1, 1}, e1[] = {0, 0, 1, 1, 1, 0, 0};
    cr_assert_arr_eq(an, n1, 4);
    cr_assert_arr_eq(ae, e1, 7);
    search_state_at(r, 2, an, ae);
    unsigned char n2[] = {1, 0, 0, 1}, e2[] = {0, 0, 0, 0, 1, 1, 0};
    cr_assert_arr_eq(an, n2, 4);
    cr_assert_arr_eq(ae, e2, 7);
    search_state_at(r, 3, an, ae);
    unsigned char e3[] = {0, 0, 0, 0, 0, 0, 1};
    cr_assert_arr_eq(an, n2, 4);
    cr_assert_arr_eq(ae, e3, 7);
    check_steps(g, r);
    search_result_free(r);
    cg_free(g);
}

Test(search_hand, opposite_edges_are_not_merged_and_no_self_loop_is_made)
{
    /* 0 -> 1 -> 2 -> 0: every node has one in- and one out-edge; node 0 is
     * the lowest (new edge 3: 2 -> 1). Then 1 and 2 still have one of each,
     * but eliminating either would make a self loop, and 1 -> 2 and 2 -> 1
     * are different endpoints: no edge elimination either. */
    int nc[3] = {3, 2, 3};
    cost_graph *g = graph_of(3, nc);
    cg_add_edge(g, 0, 1);
    cg_add_edge(g, 1, 2);
    cg_add_edge(g, 2, 0);
    rng R = {777};
    for (int v = 0; v < 3; v++)
        for (int c = 0; c < nc[v]; c++) g->node_cost[v][c] = rng_unit(&R);
    for (int e = 0; e < 3; e++)
        for (int x = 0; x < nc[g->edge_from[e]] * nc[g->edge_to[e]]; x++)
            g->edge_cost[e][x] = rng_unit(&R) * 4;
    search_result *r = check_optimal(g, NULL, "triangle", 0);
    cr_assert_eq(r->n_steps, 1);
    cr_assert_eq(r->steps[0].node, 0);
    cr_assert_eq(r->steps[0].from, 2);
    cr_assert_eq(r->steps[0].to, 1);
    cr_assert_eq(r->n_left, 2);
    cr_assert_eq(r->n_edges_left, 2);
    cr_assert_eq(r->edges_left[0], 1);
    cr_assert_eq(r->edges_left[1], 3);
    check_steps(g, r);
    search_result_free(r);

    /* same with variable elimination */
    search_options o;
    search_options_init(&o);
    o.enumeration_limit = 0;
    r = check_optimal(g, &o, "triangle/VE", 0);
    cr_assert_eq(r->method, FINAL_VARIABLE_ELIMINATION);
    search_result_free(r);
    cg_free(g);

    /* a two-cycle: nothing applies */
    int nc2[2] = {2, 3};
    g = graph_of(2, nc2);
    cg_add_edge(g, 0, 1);
    cg_add_edge(g, 1, 0);
    for (int x = 0; x < 6; x++) g->edge_cost[0][x] = x % 4, g->edge_cost[1][x] = (5 * x) % 7;
    r = check_optimal(g, NULL, "two-cycle", 0);
    cr_assert_eq(r->n_steps, 0);
    cr_assert_eq(r->n_left, 2);
    check_steps(g, r);
    search_result_free(r);
    cg_free(g);
}

Test(search_hand, isolated_nodes_self_loops_and_empty_graphs)
{
    /* node 2 has no edge: it takes its cheapest config (the lower on a tie) */
    int nc[4] = {2, 2, 3, 2};
    cost_graph *g = graph_of(4, nc);
    cg_add_edge(g, 0, 1);
    cg_add_edge(g, 3, 3); /* a self loop: only its diagonal counts */
    double n2[] = {4, 1, 1};
    memcpy(g->node_cost[2], n2, sizeof n2);
    double t[] = {5, 1, 0, 3}, loop[] = {2, -100, -100, 1};
    set_table(g, 0, t);
    set_table(g, 1, loop);
    for (int pass = 0; pass < 2; pass++) {
        search_options o;
        search_options_init(&o);
        o.enumeration_limit = pass ? 0 : 1e9;
        search_result *r = check_optimal(g, &o, "isolated", pass);
        cr_assert_eq(r->config[2], 1);
        cr_assert_eq(r->config[3], 1);
        cr_assert_eq(r->cost, 0.0 + 1.0 + 1.0);
        cr_assert_eq(r->n_left, 4);
        cr_assert_eq(r->final_space, 24.0);
        search_result_free(r);
    }
    cg_free(g);

    int one = 3;
    g = graph_of(1, &one);
    g->node_cost[0][0] = 2, g->node_cost[0][1] = 0.5, g->node_cost[0][2] = 0.5;
    search_result *r = search_run(g, NULL, NULL);
    cr_assert_not_null(r);
    cr_assert_eq(r->config[0], 1);
    cr_assert_eq(r->cost, 0.5);
    cr_assert_eq(r->n_steps, 0);
    search_result_free(r);
    cg_free(g);

    g = cg_new(0, NULL, 0);
    cr_assert_not_null(g);
    r = search_run(g, NULL, NULL);
    cr_assert_not_null(r);
    cr_assert_eq(r->cost, 0.0);
    cr_assert_eq(r->n_left, 0);
    search_result_free(r);
    cg_free(g);
}

Test(search_hand, invalid_graphs_are_refused)
{
    int bad[2] = {2, 0};
    cr_assert_null(cg_new(2, bad, 1));
    int nc[2] = {2, 2};
    cost_graph *g = graph_of(2, nc);
    cr_assert_eq(cg_add_edge(g, 0, 2), -1);
    cr_assert_eq(cg_add_edge(g, -1, 0), -1);
    cr_assert_eq(cg_add_edge(g, 0, 1), 0);
    g->edge_to[0] = 5; /* corrupted by hand */
    search_info info;
    cr_assert_null(search_run_with(g, NULL, NULL, NULL, &info));
    cr_assert_eq(info.status, SEARCH_INVALID_GRAPH);
    g->edge_to[0] = 1;
    cg_free(g);
}

/* ---------- random graphs */

enum { MAXN = 24, MAXE = 96, BF_CAP = 30000 };

typedef struct shape {
    int n, ne;
    int nc[MAXN];
    int ef[MAXE], et[MAXE];
} shape;

static int add_node(shape *s)
{
    return s->n++;
}

static void add_edge(shape *s, int a, int b)
{
    s->ef[s->ne] = a;
    s->et[s->ne] = b;
    s->ne++;
}

typedef enum {
    FAM_CHAIN,
    FAM_BRANCH_JOIN, /* fan out to 2-4 branches of length 1-3, join (Inception A-D) */
    FAM_RESIDUAL,    /* chains with skip edges, plain or through a projection */
    FAM_CONCAT,      /* nested: a branch splits again before the concat (Inception E) */
    FAM_DENSE,       /* every node feeds every later one: irreducible */
    FAM_DAG,         /* random DAG, some parallel edges */
    N_FAMILIES
} family;

static const char *family_name[N_FAMILIES] = {"chain", "branch-join", "residual",
                                              "concat", "dense block", "random DAG"};

/* Builds a shape of the family; returns the number of nodes the paper's
 * reduction must leave, or -1 where it depends on the draw; *expect_fold
 * (if not NULL) the same with folds, which also take the dangling chains. */
static int gen_shape(rng *R, family f, shape *s, int *expect_fold)
{
    int ef = -1;
    memset(s, 0, sizeof *s);
    int expect = -1;
    switch (f) {
    case FAM_CHAIN: {
        int n = rng_int(R, 2, 10);
        for (int v = 0; v < n; v++) add_node(s);
        for (int v = 0; v + 1 < n; v++) add_edge(s, v, v + 1);
        expect = 2;
        break;
    }
    case FAM_BRANCH_JOIN: {
        int cur = add_node(s);
        int modules = rng_int(R, 1, 2);
        for (int m = 0; m < modules; m++) {
            int nb = rng_int(R, 2, modules == 1 ? 4 : 3), last[4];
            for (int b = 0; b < nb; b++) {
                int len = rng_int(R, 1, modules == 1 ? 3 : 2), prev = cur;
                for (int l = 0; l < len; l++) {
                    int v = add_node(s);
                    add_edge(s, prev, v);
                    prev = v;
                }
                last[b] = prev;
            }
            int join = add_node(s);
            for (int b = 0; b < nb; b++) add_edge(s, last[b], join);
            cur = join;
        }
        add_edge(s, cur, add_node(s));
        expect = 2;
        break;
    }
    case FAM_RESIDUAL: {
        int cur = add_node(s);
        int blocks = rng_int(R, 1, 3);
        for (int b = 0; b < blocks; b++) {
            int len = rng_int(R, 1, 3), prev = cur;
            for (int l = 0; l < len; l++) {
                int v = add_node(s);
                add_edge(s, prev, v);
                prev = v;
            }
            int sum = add_node(s);
            add_edge(s, prev, sum);
            if (rng_int(R, 0, 2) == 0) { /* projection shortcut */
                int p = add_node(s);
                add_edge(s, cur, p);
                add_edge(s, p, sum);
            } else {
                add_edge(s, cur, sum);
            }
            cur = sum;
        }
        add_edge(s, cur, add_node(s));
        expect = 2;
        break;
    }
    case FAM_CONCAT: {
        int in = add_node(s);
        int nb = rng_int(R, 2, 3), split_at = rng_int(R, 0, nb - 1);
        int ends[8], n_ends = 0;
        for (int b = 0; b < nb; b++) {
            int len = rng_int(R, 1, 2), prev = in;
            for (int l = 0; l < len; l++) {
                int v = add_node(s);
                add_edge(s, prev, v);
                prev = v;
            }
            if (b == split_at || rng_int(R, 0, 1)) { /* 1x3 and 3x1 on one input */
                int a = add_node(s), c = add_node(s);
                add_edge(s, prev, a);
                add_edge(s, prev, c);
                ends[n_ends++] = a;
                ends[n_ends++] = c;
            } else {
                ends[n_ends++] = prev;
            }
        }
        int concat = add_node(s);
        for (int e = 0; e < n_ends; e++) add_edge(s, ends[e], concat);
        add_edge(s, concat, add_node(s));
        expect = 2;
        break;
    }
    case FAM_DENSE: {
        int k = rng_int(R, 4, 7), with_in = rng_int(R, 0, 1), with_out = rng_int(R, 0, 1);
        int first = -1, last = -1, d0 = -1;
        if (with_in) {
            first = add_node(s);
            int pre = add_node(s);
            add_edge(s, first, pre);
            first = pre;
        }
        d0 = s->n;
        for (int a = 0; a < k; a++) add_node(s);
        for (int a = 0; a < k; a++)
            for (int b = a + 1; b < k; b++) add_edge(s, d0 + a, d0 + b);
        if (with_in) add_edge(s, first, d0);
        if (with_out) {
            int post = add_node(s);
            add_edge(s, d0 + k - 1, post);
            last = add_node(s);
            add_edge(s, post, last);
        }
        expect = k + with_in + with_out;
        ef = k;
        break;
    }
    case FAM_DAG: {
        int n = rng_int(R, 3, 8);
        double p = 0.25 + 0.35 * rng_unit(R);
        for (int v = 0; v < n; v++) add_node(s);
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++)
                if (rng_unit(R) < p) {
                    add_edge(s, a, b);
                    if (rng_int(R, 0, 9) == 0) add_edge(s, a, b);
                }
        break;
    }
    default:
        cr_assert_fail("family");
    }
    cr_assert(s->n <= MAXN && s->ne <= MAXE);
    if (expect_fold) *expect_fold = f == FAM_DENSE ? ef : expect;
    /* 2-5 configs each, then fewer until brute force stays cheap */
    double space = 1;
    for (int v = 0; v < s->n; v++) space *= (s->nc[v] = rng_int(R, 2, 5));
    while (space > BF_CAP) {
        int v = rng_int(R, 0, s->n - 1);
        if (s->nc[v] > 2) space = space / s->nc[v] * (s->nc[v] - 1), s->nc[v]--;
        else {
            int all2 = 1;
            for (int u = 0; u < s->n; u++) all2 &= s->nc[u] == 2;
            if (all2) break;
        }
    }
    return expect;
}

/* Costs: small integers (many ties), mostly zeros, or uniform reals. */
static double draw_cost(rng *R, int mode)
{
    switch (mode) {
    case 0: return rng_int(R, 0, 3);
    case 1: return rng_int(R, 0, 1) ? 0.0 : 10 * rng_unit(R);
    default: return 100 * rng_unit(R);
    }
}

static cost_graph *make_graph(rng *R, const shape *s)
{
    cost_graph *g = cg_new(s->n, s->nc, s->ne / 2); /* grows */
    cr_assert_not_null(g);
    int mode = rng_int(R, 0, 2);
    for (int v = 0; v < s->n; v++)
        for (int c = 0; c < s->nc[v]; c++) g->node_cost[v][c] = draw_cost(R, mode);
    for (int e = 0; e < s->ne; e++) {
        int id = cg_add_edge(g, s->ef[e], s->et[e]);
        cr_assert_eq(id, e);
        for (int x = 0; x < s->nc[s->ef[e]] * s->nc[s->et[e]]; x++)
            g->edge_cost[e][x] = draw_cost(R, mode);
    }
    return g;
}

enum { PER_FAMILY = 60 };

/* Every family, PER_FAMILY graphs each, with `opt`; checks and counts. The
 * same graphs come for every opt. */
static void run_families(const search_options *opt, int want_ve)
{
    for (int f = 0; f < N_FAMILIES; f++) {
        rng R = {0x9E3779B97F4A7C15ULL ^ (uint64_t)(f + 1) * 0x2545F4914F6CDD1DULL};
        int irreducible = 0, reduced = 0;
        for (int i = 0; i < PER_FAMILY; i++) {
            shape s;
            int expect_fold, expect = gen_shape(&R, (family)f, &s, &expect_fold);
            if (opt->fold) expect = expect_fold;
            cost_graph *g = make_graph(&R, &s);
            search_result *r = check_optimal(g, opt, family_name[f], i);
            if (expect >= 0)
                cr_assert_eq(r->n_left, expect, "%s #%d: %d nodes left, expected %d", family_name[f],
                             i, r->n_left, expect);
            if (r->n_left == 2) reduced++;
            else irreducible++;
            int connected_left = r->n_edges_left > 0;
            if (want_ve && connected_left)
                cr_assert_eq(r->method, FINAL_VARIABLE_ELIMINATION, "%s #%d", family_name[f], i);
            if (!want_ve) cr_assert_eq(r->method, FINAL_ENUMERATION, "%s #%d", family_name[f], i);
            check_steps(g, r);
            search_result_free(r);
            cg_free(g);
        }
        if (f == FAM_DENSE) cr_assert_eq(reduced, 0);
        if (f == FAM_DAG) cr_assert(reduced > 0 && irreducible > 0, "DAG family lacks variety");
    }
}

/* Min-marginals by brute force: one pass over every assignment. */
static void brute_marginals(const cost_graph *g, double **bf)
{
    int n = g->n_nodes, cfg[MAXN] = {0};
    for (int v = 0; v < n; v++)
        for (int k = 0; k < g->n_configs[v]; k++) bf[v][k] = INFINITY;
    for (;;) {
        double c = cg_evaluate(g, cfg);
        for (int v = 0; v < n; v++)
            if (c < bf[v][cfg[v]]) bf[v][cfg[v]] = c;
        int v = n - 1;
        while (v >= 0 && ++cfg[v] == g->n_configs[v]) cfg[v--] = 0;
        if (v < 0) break;
    }
}

static void check_marginals(const cost_graph *g, int fold, const char *what, int i)
{
    search_options o;
    search_options_init(&o);
    o.fold = fold;
    search_result *r = search_run_with(g, &o, NULL, NULL, NULL);
    cr_assert_not_null(r);
    double *mem = malloc(sizeof(double) * 2 * MAXN * 8), *marg[MAXN], *bf[MAXN];
    for (int v = 0; v < g->n_nodes; v++) {
        marg[v] = mem + v * 8;
        bf[v] = mem + (MAXN + v) * 8;
    }
    cr_assert_eq(search_min_marginals(g, r, marg), 0, "%s #%d fold %d", what, i, fold);
    brute_marginals(g, bf);
    for (int v = 0; v < g->n_nodes; v++)
        for (int k = 0; k < g->n_configs[v]; k++) {
            if (isinf(bf[v][k])) {
                cr_assert(isinf(marg[v][k]), "%s #%d fold %d: node %d config %d: %g, brute force +inf", what, i, fold,
                          v, k, marg[v][k]);
                continue;
            }
            cr_assert(close_rel(marg[v][k], bf[v][k]), "%s #%d fold %d: node %d config %d: %.17g, brute force %.17g",
                      what, i, fold, v, k, marg[v][k], bf[v][k]);
        }
    /* the optimum's own configs reach the optimum */
    for (int v = 0; v < g->n_nodes; v++) cr_assert(close_rel(marg[v][r->config[v]], r->cost));
    free(mem);
    search_result_free(r);
}

/* Every node's every config, against brute force, on every family (dense
 * blocks through the final enumeration); then with forbidden configs
 * (+inf, as pins make them) scattered over the graphs. */
Test(search_random, min_marginals_equal_brute_force)
{
    for (int f = 0; f < N_FAMILIES; f++) {
        rng R = {0xD1B54A32D192ED03ULL ^ (uint64_t)(f + 1) * 0x9E3779B97F4A7C15ULL};
        for (int i = 0; i < PER_FAMILY; i++) {
            shape s;
            gen_shape(&R, (family)f, &s, NULL);
            cost_graph *g = make_graph(&R, &s);
            for (int fold = 0; fold < 2; fold++) check_marginals(g, fold, family_name[f], i);
            for (int v = 0; v < g->n_nodes; v++) /* forbid about a quarter of the configs, never all of a node */
                for (int k = 1; k < g->n_configs[v]; k++)
                    if (rng_int(&R, 0, 3) == 0) g->node_cost[v][k] = INFINITY;
            for (int fold = 0; fold < 2; fold++) check_marginals(g, fold, family_name[f], i);
            cg_free(g);
        }
    }
}

Test(search_random, all_families_enumeration)
{
    search_options o;
    search_options_init(&o);
    run_families(&o, 0);
    o.fold = 0; /* the paper's Algorithm 1 */
    run_families(&o, 0);
}

Test(search_random, all_families_variable_elimination)
{
    search_options o;
    search_options_init(&o);
    o.enumeration_limit = 0; /* force variable elimination for every final step */
    run_families(&o, 1);
    o.fold = 0;
    run_families(&o, 1);
}

Test(search_random, dense_block_goes_through_variable_elimination)
{
    rng R = {42};
    for (int i = 0; i < 20; i++) {
        shape s;
        int expect_fold, expect = gen_shape(&R, FAM_DENSE, &s, &expect_fold);
        cost_graph *g = make_graph(&R, &s);
        search_options o;
        search_options_init(&o);
        o.enumeration_limit = 10; /* below the dense block's space */
        o.fold = i % 2;
        search_result *r = check_optimal(g, &o, "dense/VE", i);
        cr_assert_eq(r->n_left, o.fold ? expect_fold : expect);
        cr_assert_eq(r->method, FINAL_VARIABLE_ELIMINATION);
        cr_assert(r->final_space > 10);
        search_result *e = check_optimal(g, NULL, "dense/enum", i);
        cr_assert_eq(e->method, FINAL_ENUMERATION);
        cr_assert(close_rel(e->cost, r->cost));
        search_result_free(e);
        search_result_free(r);
        cg_free(g);
    }
}

Test(search_random, deterministic)
{
    rng R = {99};
    for (int i = 0; i < 20; i++) {
        shape s;
        gen_shape(&R, (family)(i % N_FAMILIES), &s, NULL);
        cost_graph *g = make_graph(&R, &s);
        search_result *a = search_run(g, NULL, NULL), *b = search_run(g, NULL, NULL);
        cr_assert(a && b);
        cr_assert_eq(a->n_steps, b->n_steps);
        for (int k = 0; k < a->n_steps; k++) {
            cr_assert_eq(a->steps[k].kind, b->steps[k].kind);
            cr_assert_eq(a->steps[k].node, b->steps[k].node);
            cr_assert_eq(a->steps[k].into, b->steps[k].into);
            cr_assert_eq(a->steps[k].e1, b->steps[k].e1);
            cr_assert_eq(a->steps[k].e2, b->steps[k].e2);
        }
        cr_assert_arr_eq(a->config, b->config, (size_t)g->n_nodes * sizeof(int));
        search_result_free(a);
        search_result_free(b);
        cg_free(g);
    }
}

/* A search that keeps no tables (keep_tables 0: every plan's) takes the
 * same steps to the same argmins, configs and cost as one that keeps them;
 * the tables of the edges left are the same doubles, every other step's
 * is gone, and min-marginals are refused; search_keep_tables gives it the
 * kept search's tables. Counts the steps written over a
 * used table: edge eliminations over either edge, folds over their e2. */
static void lean_matches(const cost_graph *g, int fold, const char *what, int i, int *edge_over, int *fold_over)
{
    search_options keep, lean;
    search_options_init(&keep);
    keep.fold = fold;
    lean = keep;
    lean.keep_tables = 0;
    search_result *a = search_run_with(g, &keep, NULL, NULL, NULL);
    search_result *b = search_run_with(g, &lean, NULL, NULL, NULL);
    cr_assert(a && b);
    cr_assert(a->tables_kept && !b->tables_kept);
    cr_assert_eq(memcmp(&a->cost, &b->cost, sizeof a->cost), 0, "%s #%d: %.17g vs %.17g", what, i, a->cost, b->cost);
    cr_assert_arr_eq(a->config, b->config, (size_t)g->n_nodes * sizeof(int));
    cr_assert_eq(a->n_steps, b->n_steps);
    cr_assert_eq(a->n_edges_left, b->n_edges_left);
    for (int k = 0; k < a->n_steps; k++) {
        const elim_step *x = &a->steps[k], *y = &b->steps[k];
        cr_assert(x->kind == y->kind && x->node == y->node && x->into == y->into && x->e1 == y->e1 &&
                  x->e2 == y->e2 && x->from == y->from && x->to == y->to);
        size_t cells = (size_t)g->n_configs[x->from] * (size_t)g->n_configs[x->to];
        if (x->kind == ELIM_NODE) cr_assert_arr_eq(x->argmin, y->argmin, cells * sizeof(int));
        else if (x->kind == ELIM_FOLD)
            cr_assert_arr_eq(x->argmin, y->argmin, (size_t)g->n_configs[x->into] * sizeof(int));
        int left = 0;
        for (int e = 0; e < a->n_edges_left; e++) left |= a->edges_left[e] == x->new_edge;
        if (left)
            cr_assert_arr_eq(x->table, y->table, cells * sizeof(double), "%s #%d step %d", what, i, k + 1);
        else
            cr_assert_null(y->table, "%s #%d step %d: a used table kept", what, i, k + 1);
        if (x->kind == ELIM_EDGE && (x->e1 >= g->n_edges || x->e2 >= g->n_edges)) (*edge_over)++;
        if (x->kind == ELIM_FOLD && x->e2 >= g->n_edges) (*fold_over)++;
    }
    if (b->method == FINAL_ENUMERATION) {
        size_t cells = 0;
        for (int v = 0; v < g->n_nodes; v++) cells += (size_t)g->n_configs[v];
        double *mem = malloc(sizeof(double) * (cells + 1)), **marg = malloc(sizeof(double *) * (size_t)g->n_nodes);
        cr_assert(mem && marg);
        for (int v = 0, off = 0; v < g->n_nodes; off += g->n_configs[v], v++) marg[v] = mem + off;
        cr_assert_eq(search_min_marginals(g, b, marg), -1);
        cr_assert_eq(search_min_marginals(g, a, marg), 0);
        free(marg);
        free(mem);
    }
    /* asked for afterwards (the stepper), every step's table, in place */
    cr_assert_eq(search_keep_tables(g, b, NULL), 0);
    cr_assert(b->tables_kept);
    for (int k = 0; k < a->n_steps; k++) {
        size_t cells = (size_t)g->n_configs[a->steps[k].from] * (size_t)g->n_configs[a->steps[k].to];
        cr_assert_arr_eq(a->steps[k].table, b->steps[k].table, cells * sizeof(double), "%s #%d step %d", what, i,
                         k + 1);
    }
    search_result_free(a);
    search_result_free(b);
}

Test(search_random, without_kept_tables_the_same_steps_argmins_and_optimum)
{
    int edge_over = 0, fold_over = 0;
    for (int fold = 0; fold < 2; fold++)
        for (int f = 0; f < N_FAMILIES; f++) {
            rng R = {0x51ED2701ULL + (uint64_t)f * 7919 + (uint64_t)fold};
            for (int i = 0; i < PER_FAMILY / 2; i++) {
                shape s;
                gen_shape(&R, (family)f, &s, NULL);
                cost_graph *g = make_graph(&R, &s);
                lean_matches(g, fold, family_name[f], i, &edge_over, &fold_over);
                cg_free(g);
            }
        }
    /* a fold over a created edge: j -> u with two edges u -> k, which an
     * edge elimination merges first; then j folds into u over the merged
     * edge (random graphs have few parallel edges) */
    rng R = {77};
    for (int i = 0; i < 10; i++) {
        shape s = {.n = 3, .ne = 3, .nc = {0}, .ef = {0, 1, 1}, .et = {1, 2, 2}};
        for (int v = 0; v < 3; v++) s.nc[v] = rng_int(&R, 2, 5);
        cost_graph *g = make_graph(&R, &s);
        lean_matches(g, 1, "j -> u => k", i, &edge_over, &fold_over);
        cg_free(g);
    }
    cr_assert(edge_over > 0 && fold_over > 0, "edge eliminations over a created edge: %d, folds: %d", edge_over,
              fold_over);
}

/* One node elimination of a chain of three with nc configs, random costs
 * (small integers where ties, so that many sums tie): t' and argmin against
 * the plain loop (check_steps). */
static void one_node_elimination(rng *R, const int nc[3], int ties)
{
    cost_graph *g = graph_of(3, nc);
    cg_add_edge(g, 0, 1);
    cg_add_edge(g, 1, 2);
    for (int c = 0; c < nc[1]; c++) g->node_cost[1][c] = ties ? rng_int(R, 0, 2) : rng_unit(R);
    for (int e = 0; e < 2; e++)
        for (int x = 0; x < nc[g->edge_from[e]] * nc[g->edge_to[e]]; x++)
            g->edge_cost[e][x] = ties ? rng_int(R, 0, 2) : rng_unit(R);
    search_result *r = paper_search(g);
    cr_assert_not_null(r);
    cr_assert_eq(r->n_steps, 1);
    check_steps(g, r); /* compares t' and argmin with the plain loop */
    search_result_free(r);
    cg_free(g);
}

/* Node elimination tables of every shape the SIMD kernel has paths for
 * (8-wide, pairs, odd columns, partial argmin blocks), with ties. */
Test(search_random, node_elimination_tables_of_many_shapes)
{
    rng R = {2024};
    for (int i = 0; i < 80; i++) {
        int nc[3] = {rng_int(&R, 1, 40), rng_int(&R, 1, 40), rng_int(&R, 1, 40)};
        one_node_elimination(&R, nc, i % 2);
    }
}

/* Node eliminations large enough to be split over two threads (2^21
 * min-plus terms and up), through the AVX2 tiles where the CPU has them and
 * through SSE2 alone: t' and argmin against the plain loop (check_steps),
 * with and without ties, column counts that leave every remainder path. */
static void large_node_eliminations(uint64_t seed)
{
    rng R = {seed};
    int shapes[4][3] = {{130, 140, 163}, {161, 129, 147}, {2, 1200, 1000}, {257, 96, 97}};
    for (int i = 0; i < 4; i++) {
        cr_assert_geq((double)shapes[i][0] * shapes[i][1] * shapes[i][2], (double)(1 << 21), "big enough to be split");
        one_node_elimination(&R, shapes[i], i % 2);
    }
}

Test(search_random, large_node_eliminations_two_threads_avx2)
{
    setenv("LAYERWISE_THREADS", "2", 1);
    unsetenv("LAYERWISE_NO_AVX2");
    large_node_eliminations(77);
}

Test(search_random, large_node_eliminations_two_threads_sse2)
{
    setenv("LAYERWISE_THREADS", "2", 1);
    setenv("LAYERWISE_NO_AVX2", "1", 1);
    large_node_eliminations(78);
}

Test(search_random, large_node_eliminations_one_thread)
{
    setenv("LAYERWISE_THREADS", "1", 1);
    large_node_eliminations(79);
}

/* ---------- limits, progress, size */

static cost_graph *dense_graph(int k, int configs, uint64_t seed)
{
    int nc[16] = {0};
    for (int v = 0; v < k; v++) nc[v] = configs;
    cost_graph *g = graph_of(k, nc);
    rng R = {seed};
    for (int v = 0; v < k; v++)
        for (int c = 0; c < configs; c++) g->node_cost[v][c] = rng_unit(&R);
    for (int a = 0; a < k; a++)
        for (int b = a + 1; b < k; b++) {
            int e = cg_add_edge(g, a, b);
            for (int x = 0; x < configs * configs; x++) g->edge_cost[e][x] = rng_unit(&R);
        }
    return g;
}

Test(search_limits, too_large_is_refused_without_allocating)
{
    cost_graph *g = dense_graph(10, 40, 5); /* VE would need a 40^9 table */
    search_info info;
    search_result *r = search_run_with(g, NULL, NULL, NULL, &info);
    cr_assert_null(r);
    cr_assert_eq(info.status, SEARCH_TOO_LARGE);
    cr_assert_eq(info.n_left, 10);
    cr_assert_eq(info.final_space, pow(40, 10));
    cr_assert(info.ve_entries >= pow(40, 9));
    cr_assert_str_neq(search_status_message(info.status), search_status_message(SEARCH_OUT_OF_MEMORY));
    cg_free(g);

    /* 6 x 8 configs: VE needs 8^5 + 8^4 + ... entries; refuse below, run above */
    g = dense_graph(6, 8, 6);
    search_options o;
    search_options_init(&o);
    o.enumeration_limit = 0;
    o.table_limit = 1000;
    cr_assert_null(search_run_with(g, &o, NULL, NULL, &info));
    cr_assert_eq(info.status, SEARCH_TOO_LARGE);
    o.table_limit = 1e6;
    r = search_run_with(g, &o, NULL, NULL, &info);
    cr_assert_not_null(r);
    cr_assert_eq(info.status, SEARCH_OK);
    cr_assert_eq(r->method, FINAL_VARIABLE_ELIMINATION);
    cr_assert_eq(info.ve_entries, 32768.0 + 4096 + 512 + 64 + 8 + 1);
    double bf = search_brute_force(g, NULL, 1e7);
    cr_assert(close_rel(r->cost, bf));
    cr_assert_eq(search_brute_force(g, NULL, 1000), -1.0);
    search_result_free(r);
    cg_free(g);
}

/* A cancelled search (a prefetch nobody wants any more) stops with its
 * status and leaks nothing; the flag untouched, the same options run. */
Test(search_limits, a_cancelled_search_says_so)
{
    cost_graph *g = dense_graph(6, 8, 6);
    atomic_int flag = 1;
    search_options o;
    search_options_init(&o);
    cr_assert_null(o.cancel);
    o.cancel = &flag;
    search_info info;
    cr_assert_null(search_run_with(g, &o, NULL, NULL, &info));
    cr_assert_eq(info.status, SEARCH_CANCELLED);
    cr_assert_str_eq(search_status_message(SEARCH_CANCELLED), "cancelled");
    atomic_store(&flag, 0);
    search_result *r = search_run_with(g, &o, NULL, NULL, &info);
    cr_assert_not_null(r);
    cr_assert_eq(info.status, SEARCH_OK);
    cr_assert(close_rel(r->cost, search_brute_force(g, NULL, 1e7)));
    search_result_free(r);
    cg_free(g);
}

typedef struct progress_log {
    int calls;
    double last;
    int monotone;
} progress_log;

static void on_progress(double f, void *user)
{
    progress_log *p = user;
    if (f < p->last || f < 0 || f > 1) p->monotone = 0;
    p->last = f;
    p->calls++;
}

Test(search_limits, progress_is_reported_a_bounded_number_of_times)
{
    cost_graph *g = dense_graph(6, 9, 8); /* 9^6 = 531441 assignments */
    for (int pass = 0; pass < 2; pass++) {
        search_options o;
        search_options_init(&o);
        o.progress_min_work = 0;
        if (pass) o.enumeration_limit = 0;
        progress_log p = {0, 0, 1};
        search_result *r = search_run_with(g, &o, on_progress, &p, NULL);
        cr_assert_not_null(r);
        cr_assert_eq((int)r->method, pass ? FINAL_VARIABLE_ELIMINATION : FINAL_ENUMERATION);
        cr_assert(p.monotone);
        cr_assert(p.calls >= 10 && p.calls <= 102, "%d calls", p.calls);
        cr_assert_eq(p.last, 1.0);
        search_result_free(r);
    }
    /* with the default threshold, a small final step does not report */
    int nc[2] = {3, 3};
    cost_graph *h = graph_of(2, nc);
    cg_add_edge(h, 0, 1);
    progress_log p = {0, 0, 1};
    search_result *r = search_run(h, on_progress, &p);
    cr_assert_eq(p.calls, 0);
    search_result_free(r);
    cg_free(h);
    cg_free(g);
}

/* Inception-like: 250 nodes, modules of 2-4 branches, 70 configs. No timing
 * asserted; it must reduce to the input and the output. */
Test(search_size, chain_of_modules_250_nodes_70_configs)
{
    enum { N = 250, C = 70 };
    int nc[N];
    for (int v = 0; v < N; v++) nc[v] = C;
    cost_graph *g = graph_of(N, nc);
    rng R = {31337};
    int cur = 0, next = 1;
    while (next < N - 1) {
        int nb = rng_int(&R, 2, 4), last[4], b = 0;
        for (; b < nb && next < N - 2; b++) {
            int len = rng_int(&R, 1, 3), prev = cur;
            for (int l = 0; l < len && next < N - 2; l++) {
                cg_add_edge(g, prev, next);
                prev = next++;
            }
            last[b] = prev;
        }
        int join = next++;
        for (int a = 0; a < b; a++) cg_add_edge(g, last[a], join);
        cur = join;
    }
    while (next < N) {
        cg_add_edge(g, cur, next);
        cur = next++;
    }
    for (int v = 0; v < N; v++)
        for (int c = 0; c < C; c++) g->node_cost[v][c] = rng_int(&R, 0, 1) ? 0 : rng_unit(&R);
    for (int e = 0; e < g->n_edges; e++)
        for (int x = 0; x < C * C; x++) g->edge_cost[e][x] = rng_unit(&R);

    search_result *r = paper_search(g);
    cr_assert_not_null(r);
    cr_assert_eq(r->n_left, 2);
    cr_assert_eq(r->left[0], 0);
    cr_assert_eq(r->left[1], N - 1);
    cr_assert_eq(r->n_undo, N - 2);
    cr_assert_eq(r->cost, cg_evaluate(g, r->config));
    /* with folds: the input and the output fold in too, two nodes are left
     * (where depends on the modules), at the same optimum */
    search_result *fr = search_run(g, NULL, NULL);
    cr_assert_not_null(fr);
    cr_assert_eq(fr->n_left, 2);
    cr_assert_eq(fr->n_undo, N - 2);
    int n_fold = 0;
    for (int s = 0; s < fr->n_steps; s++) n_fold += fr->steps[s].kind == ELIM_FOLD;
    cr_assert(n_fold >= 2, "%d folds", n_fold);
    cr_assert(close_rel(fr->cost, r->cost), "folded %.17g, paper %.17g", fr->cost, r->cost);
    search_result_free(fr);
    /* the same optimum through variable elimination on the final pair */
    search_options o;
    search_options_init(&o);
    o.enumeration_limit = 0;
    search_result *v = search_run_with(g, &o, NULL, NULL, NULL);
    cr_assert_not_null(v);
    cr_assert_eq(v->method, FINAL_VARIABLE_ELIMINATION);
    cr_assert(close_rel(v->cost, r->cost));
    /* no strategy that changes one node's config does better */
    int *cfg = malloc(N * sizeof(int));
    memcpy(cfg, r->config, N * sizeof(int));
    for (int u = 0; u < N; u += 7) {
        int keep = cfg[u];
        for (int c = 0; c < C; c++) {
            cfg[u] = c;
            cr_assert(cg_evaluate(g, cfg) >= r->cost - 1e-9);
        }
        cfg[u] = keep;
    }
    free(cfg);
    search_result_free(v);
    search_result_free(r);
    cg_free(g);
}

/* The final step by variable elimination is not covered: the caller is told
 * so and can fall back to one search per config. */
Test(search_limits, min_marginals_refuse_a_variable_elimination_result)
{
    cost_graph *g = dense_graph(5, 3, 7);
    search_options o;
    search_options_init(&o);
    o.enumeration_limit = 0;
    search_result *r = search_run_with(g, &o, NULL, NULL, NULL);
    cr_assert_not_null(r);
    cr_assert_eq(r->method, FINAL_VARIABLE_ELIMINATION);
    double mem[5 * 3], *marg[5];
    for (int v = 0; v < 5; v++) marg[v] = mem + 3 * v;
    cr_assert_eq(search_min_marginals(g, r, marg), -1);
    search_result_free(r);
    cg_free(g);
}
