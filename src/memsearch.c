#include "memsearch_internal.h"

#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the memory table ---- */

mem_table *mt_new(int n_nodes, const int *n_configs, int n_gpus, int *const *tasks)
{
    if (n_nodes < 0 || n_gpus < 1) return NULL;
    for (int v = 0; v < n_nodes; v++)
        for (int c = 0; c < n_configs[v]; c++)
            if (tasks[v][c] < 1 || tasks[v][c] > n_gpus) return NULL;
    mem_table *t = lw_calloc(1, sizeof *t);
    t->n_nodes = n_nodes;
    t->n_gpus = n_gpus;
    t->n_configs = lw_malloc(sizeof(int) * (size_t)(n_nodes ? n_nodes : 1));
    t->tasks = lw_calloc((size_t)(n_nodes ? n_nodes : 1), sizeof(int *));
    t->off = lw_calloc((size_t)(n_nodes ? n_nodes : 1), sizeof(long *));
    t->bytes = lw_calloc((size_t)(n_nodes ? n_nodes : 1), sizeof(double *));
    for (int v = 0; v < n_nodes; v++) {
        int n = n_configs[v];
        t->n_configs[v] = n;
        t->tasks[v] = lw_malloc(sizeof(int) * (size_t)n);
        t->off[v] = lw_malloc(sizeof(long) * (size_t)n);
        long sum = 0;
        for (int c = 0; c < n; c++) {
            t->tasks[v][c] = tasks[v][c];
            t->off[v][c] = sum;
            sum += tasks[v][c];
        }
        t->bytes[v] = lw_calloc((size_t)(sum ? sum : 1), sizeof(double));
    }
    return t;
}

void mt_free(mem_table *t)
{
    if (!t) return;
    for (int v = 0; v < t->n_nodes; v++) {
        free(t->tasks[v]);
        free(t->off[v]);
        free(t->bytes[v]);
    }
    free(t->n_configs);
    free(t->tasks);
    free(t->off);
    free(t->bytes);
    free(t);
}

double mt_peak(const mem_table *t, const int *config, double *per_gpu)
{
    int G = t->n_gpus;
    double *mem = per_gpu ? per_gpu : lw_malloc(sizeof(double) * (size_t)G);
    for (int g = 0; g < G; g++) mem[g] = 0;
    for (int v = 0; v < t->n_nodes; v++) {
        const double *b = mt_at(t, v, config[v]);
        for (int k = 0; k < t->tasks[v][config[v]]; k++) mem[k] += b[k];
    }
    double peak = 0;
    for (int g = 0; g < G; g++)
        if (mem[g] > peak) peak = mem[g];
    if (!per_gpu) free(mem);
    return peak;
}

int mt_fits(const mem_table *t, const int *config, const double *limit)
{
    double *mem = lw_malloc(sizeof(double) * (size_t)t->n_gpus);
    mt_peak(t, config, mem);
    int ok = 1;
    for (int g = 0; g < t->n_gpus && ok; g++) ok = mem[g] <= limit[g];
    free(mem);
    return ok;
}

void memsearch_options_init(memsearch_options *o)
{
    memset(o, 0, sizeof *o);
}

void memsearch_result_free(memsearch_result *r)
{
    if (!r) return;
    free(r->config);
    free(r->min_peak_config);
    free(r);
}

/* time the smallest peak is looked for after a search found nothing fits */
#define MEMSEARCH_MIN_PEAK_S 3.0

/* ---- shared state of one run ---- */

typedef struct bb_item {
    unsigned char *mask; /* [cells] 1 where a node may take the config */
    double bound;        /* a lower bound on the subproblem (its parent's) */
    double *lambda;      /* [G] multipliers to start from */
} bb_item;

typedef struct ctx {
    const cost_graph *g;
    const mem_table *t;
    const double *limit;
    int N, G;
    long cells;
    long *moff;          /* [N] node's first cell */
    double *tol_limit;   /* [G] limit with a rounding margin, for pruning only */
    double *minv;        /* [N * G] least bytes node v can put on GPU g under the mask */
    double *minsum;      /* [G] */
    double *mem;         /* [G] scratch */
    cost_graph g2;       /* g with its own node costs (edges shared) */
    double *nc2;         /* storage of g2's node costs */
    int *inc;            /* best fitting assignment found */
    double inc_cost;
    double deadline;     /* lw_now() value; 0: none */
    const memsearch_options *o;
    search_status fail;
    int stopped;         /* time ran out or cancelled */
    long searches, bb_nodes;
    double *marg_store;
    double **marg;
    int *inc_start, *inc_edge; /* edges touching node v: inc_edge[inc_start[v] .. inc_start[v + 1]) */
    int *rx;             /* scratch assignment for the repair */
    double *rdt;         /* [cells] the repair's cost change per config against rx */
    double *rup;         /* [cells] bytes a config frees at most against rx (freed_up) */
    int *rseen;          /* the repair's assignment its cycle check compares with */
} ctx;

static double tol_of(double x) { return 1e-9 * (fabs(x) > 1 ? fabs(x) : 1); }

static int out_of_time(ctx *c)
{
    if (c->o->cancel && atomic_load(c->o->cancel)) {
        c->fail = SEARCH_CANCELLED;
        return c->stopped = 1;
    }
    if (c->deadline > 0 && lw_now() >= c->deadline) return c->stopped = 1;
    if (c->o->max_searches > 0 && c->searches >= c->o->max_searches) return c->stopped = 1;
    return 0;
}

static double cell_mem(const ctx *c, int v, int k, int gpu)
{
    return gpu < c->t->tasks[v][k] ? mt_at(c->t, v, k)[gpu] : 0;
}

static int same_memory(const ctx *c, int v, int k1, int k2)
{
    int n = c->t->tasks[v][k1];
    return n == c->t->tasks[v][k2] && memcmp(mt_at(c->t, v, k1), mt_at(c->t, v, k2), sizeof(double) * (size_t)n) == 0;
}

/* Least memory per GPU under the mask, and configs that would overflow a
 * GPU even with every other node at its least removed, until nothing
 * changes. 0 if the subproblem has no fitting assignment. */
static int propagate(ctx *c, unsigned char *mask)
{
    int N = c->N, G = c->G;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int g = 0; g < G; g++) c->minsum[g] = 0;
        for (int v = 0; v < N; v++) {
            double *mv = c->minv + (long)v * G;
            int any = 0;
            for (int g = 0; g < G; g++) mv[g] = HUGE_VAL;
            for (int k = 0; k < c->g->n_configs[v]; k++) {
                if (!mask[c->moff[v] + k]) continue;
                any = 1;
                for (int g = 0; g < G; g++) {
                    double b = cell_mem(c, v, k, g);
                    if (b < mv[g]) mv[g] = b;
                }
            }
            if (!any) return 0;
            for (int g = 0; g < G; g++) c->minsum[g] += mv[g];
        }
        for (int g = 0; g < G; g++)
            if (c->minsum[g] > c->tol_limit[g]) return 0;
        for (int v = 0; v < N; v++) {
            const double *mv = c->minv + (long)v * G;
            for (int k = 0; k < c->g->n_configs[v]; k++) {
                if (!mask[c->moff[v] + k]) continue;
                const double *b = mt_at(c->t, v, k);
                for (int g = 0; g < c->t->tasks[v][k]; g++)
                    if (c->minsum[g] - mv[g] + b[g] > c->tol_limit[g]) {
                        mask[c->moff[v] + k] = 0;
                        changed = 1;
                        break;
                    }
            }
        }
    }
    return 1;
}

/* The relaxed problem for multipliers lam under the mask, in c->g2. */
static void relax(ctx *c, const unsigned char *mask, const double *lam)
{
    for (int v = 0; v < c->N; v++)
        for (int k = 0; k < c->g->n_configs[v]; k++) {
            if (!mask[c->moff[v] + k]) {
                c->g2.node_cost[v][k] = HUGE_VAL;
                continue;
            }
            double x = c->g->node_cost[v][k];
            const double *b = mt_at(c->t, v, k);
            for (int g = 0; g < c->t->tasks[v][k]; g++) x += lam[g] * b[g];
            c->g2.node_cost[v][k] = x;
        }
}

static double lam_dot_limit(const ctx *c, const double *lam)
{
    double s = 0;
    for (int g = 0; g < c->G; g++)
        if (lam[g] > 0) s += lam[g] * c->limit[g]; /* an infinite limit has lam 0 */
    return s;
}

/* keep: the step tables stay (search_min_marginals reads them); else
 * only the optimum is read, and they are freed as the search goes. */
static search_result *run_relaxed(ctx *c, int keep)
{
    search_options so;
    if (c->o->search) so = *c->o->search;
    else search_options_init(&so);
    if (c->o->cancel) so.cancel = c->o->cancel;
    so.keep_tables = keep;
    search_info info;
    c->searches++;
    search_result *r = search_run_with(&c->g2, &so, NULL, NULL, &info);
    if (!r) c->fail = info.status;
    return r;
}

static void offer(ctx *c, const int *x)
{
    if (!mt_fits(c->t, x, c->limit)) return;
    double v = cg_evaluate(c->g, x);
    if (v < c->inc_cost) {
        c->inc_cost = v;
        memcpy(c->inc, x, sizeof(int) * (size_t)c->N);
    }
}

static void push(bb_item **stack, int *n, int *cap, bb_item it)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *stack = lw_realloc(*stack, sizeof(bb_item) * (size_t)*cap);
    }
    (*stack)[(*n)++] = it;
}

static void item_free(bb_item *it)
{
    free(it->mask);
    free(it->lambda);
}

/* Cost of node v taking config k, with its neighbours as in x. */
static double local_cost(const ctx *c, const int *x, int v, int k)
{
    const cost_graph *g = c->g;
    double s = g->node_cost[v][k];
    for (int i = c->inc_start[v]; i < c->inc_start[v + 1]; i++) {
        int e = c->inc_edge[i], a = g->edge_from[e], b = g->edge_to[e];
        int ka = a == v ? k : x[a], kb = b == v ? k : x[b];
        s += g->edge_cost[e][ka * g->n_configs[b] + kb];
    }
    return s;
}

/* Cost change of each config of node v against its config in x, into dt
 * (computed as local_cost(k) - local_cost(x[v]), as the repair compares). */
static void local_deltas(const ctx *c, const int *x, int v, double *dt)
{
    double here = local_cost(c, x, v, x[v]);
    for (int k = 0; k < c->g->n_configs[v]; k++) dt[k] = local_cost(c, x, v, k) - here;
}

/* After node bv changed config in x: the cost changes of bv and of every
 * node that shares an edge with it (no other node's change moved). */
static void moved(ctx *c, const int *x, int bv)
{
    const cost_graph *g = c->g;
    local_deltas(c, x, bv, c->rdt + c->moff[bv]);
    for (int i = c->inc_start[bv]; i < c->inc_start[bv + 1]; i++) {
        int e = c->inc_edge[i], u = g->edge_from[e] == bv ? g->edge_to[e] : g->edge_from[e];
        if (u != bv) local_deltas(c, x, u, c->rdt + c->moff[u]);
    }
}

/* Overflowing bytes freed by node v moving from config kx to k (bytes it
 * would push over a GPU's limit count against it). GPUs neither config uses
 * add nothing, so only the first max(tasks) are looked at. */
static double freed_bytes(const ctx *c, const double *mem, int v, int kx, int k)
{
    const double *bx = mt_at(c->t, v, kx), *bk = mt_at(c->t, v, k);
    int nx = c->t->tasks[v][kx], nk = c->t->tasks[v][k], n = nx > nk ? nx : nk;
    double freed = 0;
    for (int g = 0; g < n; g++) {
        double d = (g < nx ? bx[g] : 0) - (g < nk ? bk[g] : 0);
        if (mem[g] > c->limit[g]) freed += d;
        else if (mem[g] - d > c->limit[g]) freed -= mem[g] - d - c->limit[g]; /* would overflow it */
    }
    return freed;
}

/* An upper bound on freed_bytes(v, kx, k) under any memory state: the
 * bytes k frees, GPU by GPU, none counted against it. It is summed in
 * freed_bytes' order from terms no smaller than its, so the rounded sums
 * keep the order too (rounding is monotonic): freed <= this, exactly. Into
 * up[k] for every config k of v. */
static void freed_up(const ctx *c, int v, int kx, double *up)
{
    const double *bx = mt_at(c->t, v, kx);
    int nx = c->t->tasks[v][kx];
    for (int k = 0; k < c->g->n_configs[v]; k++) {
        const double *bk = mt_at(c->t, v, k);
        int nk = c->t->tasks[v][k], n = nx > nk ? nx : nk;
        double s = 0;
        for (int g = 0; g < n; g++) {
            double d = (g < nx ? bx[g] : 0) - (g < nk ? bk[g] : 0);
            s += d > 0 ? d : 0;
        }
        up[k] = s;
    }
}

/* A fitting assignment near x, offered as a candidate: while a GPU
 * overflows, the config change (within the mask) that frees the most
 * overflowing bytes per ms it adds; then, while one exists, a change that
 * saves time and keeps everything within the limits. Each config's cost
 * change is kept in rdt and redone only around the node that moved: on a
 * transformer's 532 layers the repair was nearly all of the capped
 * search's time when every step recomputed every one. */
static void repair(ctx *c, const unsigned char *mask, const int *x0)
{
    int N = c->N, G = c->G;
    int *x = c->rx;
    memcpy(x, x0, sizeof(int) * (size_t)N);
    double *mem = c->mem;
    mt_peak(c->t, x, mem);
    for (int v = 0; v < N; v++) {
        local_deltas(c, x, v, c->rdt + c->moff[v]);
        freed_up(c, v, x[v], c->rup + c->moff[v]);
    }
    memcpy(c->rseen, x, sizeof(int) * (size_t)N);
    for (int step = 0, power = 1, lam = 0; step < 4 * N + 16; step++) {
        int over = 0;
        for (int g = 0; g < G; g++) over |= mem[g] > c->limit[g];
        if (!over) break;
        /* Each step depends on x alone: an x seen before repeats the same
         * cycle of overflowing assignments up to the step limit, which then
         * gives up; it gives up now instead (Brent's cycle finding). */
        if (step > 0 && memcmp(c->rseen, x, sizeof(int) * (size_t)N) == 0) return;
        if (++lam == power) {
            memcpy(c->rseen, x, sizeof(int) * (size_t)N);
            power *= 2;
            lam = 0;
        }
        int bv = -1, bk = -1;
        double best = -1;
        for (int v = 0; v < N; v++) {
            const double *dtv = c->rdt + c->moff[v], *upv = c->rup + c->moff[v];
            for (int k = 0; k < c->g->n_configs[v]; k++) {
                if (k == x[v] || !mask[c->moff[v] + k] || !isfinite(dtv[k])) continue;
                double per = dtv[k] > 1e-9 ? dtv[k] : 1e-9;
                /* freed <= upv[k]: where that cannot free bytes or beat the
                 * best score, neither can freed (the same skip, sooner) */
                if (upv[k] <= 0 || upv[k] / per <= best) continue;
                double freed = freed_bytes(c, mem, v, x[v], k);
                if (freed <= 0) continue;
                double score = freed / per;
                if (score > best) {
                    best = score;
                    bv = v;
                    bk = k;
                }
            }
        }
        if (bv < 0) return;
        x[bv] = bk;
        mt_peak(c->t, x, mem);
        moved(c, x, bv);
        freed_up(c, bv, bk, c->rup + c->moff[bv]);
    }
    if (!mt_fits(c->t, x, c->limit)) return;
    for (int step = 0; step < 4 * N + 16; step++) { /* faster, still fitting */
        int bv = -1, bk = -1;
        double best = 0;
        for (int v = 0; v < N; v++) {
            const double *dtv = c->rdt + c->moff[v];
            for (int k = 0; k < c->g->n_configs[v]; k++) {
                if (k == x[v] || !mask[c->moff[v] + k]) continue;
                double dt = dtv[k];
                if (!(dt < best)) continue;
                int ok = 1;
                for (int g = 0; g < G && ok; g++)
                    ok = mem[g] - cell_mem(c, v, x[v], g) + cell_mem(c, v, k, g) <= c->limit[g];
                if (ok) {
                    best = dt;
                    bv = v;
                    bk = k;
                }
            }
        }
        if (bv < 0) break;
        x[bv] = bk;
        mt_peak(c->t, x, mem);
        moved(c, x, bv);
    }
    offer(c, x);
}

/* One subproblem's Lagrangian dual: the multipliers (one per GPU) it is at,
 * the best bound found and the multipliers that gave it, and the relaxed
 * assignment at that bound (bx), which branching starts from. */
typedef struct {
    double *lam, *best_lam;
    int *bx, have_bx;
    double best_L;
} dual;

static void dual_init(dual *d, const ctx *c, const double *lambda)
{
    size_t gb = sizeof(double) * (size_t)c->G;
    d->lam = lw_malloc(gb);
    d->best_lam = lw_malloc(gb);
    memcpy(d->lam, lambda, gb);
    memcpy(d->best_lam, lambda, gb);
    d->bx = lw_malloc(sizeof(int) * (size_t)c->N);
    d->have_bx = 0;
    d->best_L = -HUGE_VAL;
}

static void dual_free(dual *d)
{
    free(d->lam);
    free(d->best_lam);
    free(d->bx);
}

/* Raises the subproblem's bound by subgradient steps on the multipliers
 * (60 at the root, 6 below it), offering each relaxed solution (repaired
 * to fit in the first steps) as an incumbent. Returns -1 if a search
 * failed, 1 if time ran out, else 0; *pruned when the bound reaches the
 * incumbent or nothing finite is left. */
static int ascend(ctx *c, bb_item *it, int root, dual *d, int *pruned)
{
    int N = c->N, G = c->G;
    double theta = 1.0, *lam = d->lam;
    int iters = root ? 60 : 6, stale = 0;
    for (int i = 0; i < iters; i++) {
        if (out_of_time(c)) return 1;
        relax(c, it->mask, lam);
        search_result *r = run_relaxed(c, 0);
        if (!r) return -1;
        if (!isfinite(r->cost)) { /* every assignment left has an infinite cost */
            search_result_free(r);
            *pruned = 1;
            return 0;
        }
        double L = r->cost - lam_dot_limit(c, lam);
        if (i < 3 || !isfinite(c->inc_cost)) repair(c, it->mask, r->config);
        mt_peak(c->t, r->config, c->mem);
        offer(c, r->config);
        if (L > d->best_L + tol_of(d->best_L)) {
            d->best_L = L;
            memcpy(d->best_lam, lam, sizeof(double) * (size_t)G);
            stale = 0;
        } else if (++stale >= 2) {
            theta *= 0.5;
            stale = 0;
        }
        if (!d->have_bx || L >= d->best_L) {
            memcpy(d->bx, r->config, sizeof(int) * (size_t)N);
            d->have_bx = 1;
        }
        search_result_free(r);
        if (L > it->bound) it->bound = L;
        if (it->bound >= c->inc_cost - tol_of(c->inc_cost)) {
            *pruned = 1;
            return 0;
        }
        /* subgradient step towards the best fitting cost (or a guess) */
        double norm2 = 0;
        for (int g = 0; g < G; g++) {
            double s = c->mem[g] - c->limit[g];
            if (s > 0 || lam[g] > 0) norm2 += s * s;
        }
        if (norm2 == 0) break;
        double target = isfinite(c->inc_cost) ? c->inc_cost : L + 0.1 * (fabs(L) > 1e-3 ? fabs(L) : 1e-3);
        double step = theta * (target - L) / norm2;
        for (int g = 0; g < G; g++) {
            lam[g] += step * (c->mem[g] - c->limit[g]);
            if (lam[g] < 0) lam[g] = 0;
        }
        if (theta < 1e-4) break;
    }
    return 0;
}

/* Removes the configs that cannot beat the best fitting assignment: the
 * min-marginals of the relaxed problem at the best multipliers. Returns -1
 * if the search failed, else 0; *pruned when no assignment is left. */
static int prune_by_marginals(ctx *c, bb_item *it, const double *best_lam, int *pruned)
{
    relax(c, it->mask, best_lam);
    search_result *r = run_relaxed(c, 1);
    if (!r) return -1;
    double ld = lam_dot_limit(c, best_lam);
    if (search_min_marginals(&c->g2, r, c->marg) == 0)
        for (int v = 0; v < c->N; v++)
            for (int k = 0; k < c->g->n_configs[v]; k++)
                if (it->mask[c->moff[v] + k] && c->marg[v][k] - ld >= c->inc_cost - tol_of(c->inc_cost))
                    it->mask[c->moff[v] + k] = 0;
    search_result_free(r);
    if (!propagate(c, it->mask)) *pruned = 1;
    return 0;
}

/* The node to branch on, and in *key the config whose memory group is one
 * branch: the node whose config in bx puts the most avoidable memory on the
 * most overflowed GPU of bx; without such saving, the node with the most
 * configs left. Configs of a node with the same bytes on every GPU are one
 * choice as far as memory goes: branches split a node's configs between
 * such groups, never inside one. -1 when every node's memory is settled. */
static int branch_node(ctx *c, const bb_item *it, const int *bx, int *key)
{
    int N = c->N, G = c->G;
    mt_peak(c->t, bx, c->mem);
    int gs = 0;
    double worst = -HUGE_VAL;
    for (int g = 0; g < G; g++) {
        double over = (c->mem[g] - c->limit[g]) / (c->limit[g] > 1 ? c->limit[g] : 1);
        if (over > worst) {
            worst = over;
            gs = g;
        }
    }
    int bv = -1, most_v = -1, most = 0;
    double score = 0;
    *key = -1;
    for (int v = 0; v < N; v++) {
        int groups = 0, first = -1;
        for (int k = 0; k < c->g->n_configs[v]; k++) {
            if (!it->mask[c->moff[v] + k]) continue;
            if (first < 0) first = k;
            else if (groups < 2 && !same_memory(c, v, k, first)) groups = 2;
        }
        if (groups < 2) continue; /* its memory is settled */
        int alive = 0;
        for (int k = 0; k < c->g->n_configs[v]; k++) alive += it->mask[c->moff[v] + k];
        if (alive > most) {
            most = alive;
            most_v = v;
        }
        if (!it->mask[c->moff[v] + bx[v]]) continue;
        double sc = cell_mem(c, v, bx[v], gs) - c->minv[(long)v * G + gs];
        if (sc > score) {
            score = sc;
            bv = v;
        }
    }
    if (bv >= 0) *key = bx[bv];
    else if (most_v >= 0) {
        bv = most_v;
        if (it->mask[c->moff[bv] + bx[bv]]) *key = bx[bv];
        else
            for (int k = 0; k < c->g->n_configs[bv]; k++)
                if (it->mask[c->moff[bv] + k] && (*key < 0 || cell_mem(c, bv, k, gs) < cell_mem(c, bv, *key, gs)))
                    *key = k;
    }
    return bv;
}

/* Every node's memory is settled: what is left is the plain search, which
 * the ascent offered already if its best multipliers were zero; else it is
 * run and offered here. Returns -1 if the search failed, else 0. */
static int settle_plain(ctx *c, bb_item *it, double *lam, const double *best_lam)
{
    int zero_ok = 1;
    for (int g = 0; g < c->G; g++) zero_ok = zero_ok && best_lam[g] == 0;
    if (zero_ok) return 0;
    for (int g = 0; g < c->G; g++) lam[g] = 0;
    relax(c, it->mask, lam);
    search_result *r = run_relaxed(c, 0);
    if (!r) return -1;
    if (isfinite(r->cost)) offer(c, r->config);
    search_result_free(r);
    return 0;
}

/* Pushes the two children of branching node bv: a, every memory group but
 * key's (popped first); b, key's group. */
static void branch(ctx *c, const bb_item *it, int bv, int key, const double *best_lam, bb_item **stack, int *n,
                   int *cap)
{
    size_t gb = sizeof(double) * (size_t)c->G;
    bb_item a = {lw_malloc((size_t)c->cells), it->bound, lw_malloc(gb)};
    bb_item b = {lw_malloc((size_t)c->cells), it->bound, lw_malloc(gb)};
    memcpy(a.mask, it->mask, (size_t)c->cells);
    memcpy(b.mask, it->mask, (size_t)c->cells);
    memcpy(a.lambda, best_lam, gb);
    memcpy(b.lambda, best_lam, gb);
    for (int k = 0; k < c->g->n_configs[bv]; k++) {
        if (!it->mask[c->moff[bv] + k]) continue;
        int same = same_memory(c, bv, k, key);
        a.mask[c->moff[bv] + k] = !same;
        b.mask[c->moff[bv] + k] = (unsigned char)same;
    }
    push(stack, n, cap, b);
    push(stack, n, cap, a); /* popped first */
}

/* Processes one subproblem: bound it, prune it, or branch it onto the
 * stack. Returns -1 if a search failed; 1 if time ran out before it was
 * settled (then *it is pushed back unchanged in bound), else 0. */
static int process(ctx *c, bb_item *it, int root, bb_item **stack, int *n, int *cap)
{
    if (!propagate(c, it->mask)) return 0;
    dual d;
    dual_init(&d, c, it->lambda);
    int pruned = 0;
    int rc = ascend(c, it, root, &d, &pruned);
    if (rc == 0 && !pruned && isfinite(c->inc_cost) && isfinite(d.best_L))
        rc = prune_by_marginals(c, it, d.best_lam, &pruned);
    if (rc != 0 || pruned || !d.have_bx) {
        if (rc == 1) { /* give it back for the lower bound */
            bb_item back = {it->mask, it->bound, d.lam};
            push(stack, n, cap, back);
            it->mask = NULL;
            d.lam = NULL;
        }
        dual_free(&d);
        return rc < 0 ? -1 : rc;
    }
    int key;
    int bv = branch_node(c, it, d.bx, &key);
    if (bv < 0) rc = settle_plain(c, it, d.lam, d.best_lam);
    else branch(c, it, bv, key, d.best_lam, stack, n, cap);
    dual_free(&d);
    return rc;
}

/* The search's working state for graph g: config offsets per node, the
 * relaxed graph g2 over its own node costs, the min-marginal rows, and each
 * node's incident edges (CSR). */
static void ctx_init(ctx *c, const cost_graph *g, const mem_table *t, const double *limit,
                     const memsearch_options *opt, double t0)
{
    int N = g->n_nodes, G = t->n_gpus;
    *c = (ctx){0};
    c->g = g;
    c->t = t;
    c->limit = limit;
    c->N = N;
    c->G = G;
    c->o = opt;
    c->fail = SEARCH_OK;
    c->deadline = opt->time_limit_s > 0 ? t0 + opt->time_limit_s : 0;
    c->moff = lw_malloc(sizeof(long) * (size_t)(N + 1));
    for (int v = 0; v < N; v++) {
        c->moff[v] = c->cells;
        c->cells += g->n_configs[v];
    }
    c->tol_limit = lw_malloc(sizeof(double) * (size_t)G);
    for (int k = 0; k < G; k++) c->tol_limit[k] = limit[k] + tol_of(limit[k]);
    c->minv = lw_malloc(sizeof(double) * (size_t)N * (size_t)G + sizeof(double));
    c->minsum = lw_malloc(sizeof(double) * (size_t)G);
    c->mem = lw_malloc(sizeof(double) * (size_t)G);
    c->g2 = *g;
    c->nc2 = lw_malloc(sizeof(double) * (size_t)(c->cells + 1));
    c->g2.node_cost = lw_malloc(sizeof(double *) * (size_t)(N + 1));
    c->marg_store = lw_malloc(sizeof(double) * (size_t)(c->cells + 1));
    c->marg = lw_malloc(sizeof(double *) * (size_t)(N + 1));
    for (int v = 0; v < N; v++) {
        c->g2.node_cost[v] = c->nc2 + c->moff[v];
        c->marg[v] = c->marg_store + c->moff[v];
    }
    c->inc = lw_malloc(sizeof(int) * (size_t)(N + 1));
    c->inc_cost = HUGE_VAL;
    c->rx = lw_malloc(sizeof(int) * (size_t)(N + 1));
    c->rdt = lw_malloc(sizeof(double) * (size_t)(c->cells + 1));
    c->rup = lw_malloc(sizeof(double) * (size_t)(c->cells + 1));
    c->rseen = lw_malloc(sizeof(int) * (size_t)(N + 1));
    c->inc_start = lw_calloc((size_t)N + 2, sizeof(int));
    c->inc_edge = lw_malloc(sizeof(int) * (size_t)(2 * g->n_edges + 1));
    for (int e = 0; e < g->n_edges; e++) {
        c->inc_start[g->edge_from[e] + 1]++;
        if (g->edge_to[e] != g->edge_from[e]) c->inc_start[g->edge_to[e] + 1]++;
    }
    for (int v = 0; v < N; v++) c->inc_start[v + 1] += c->inc_start[v];
    int *fill = lw_calloc((size_t)N + 1, sizeof(int));
    for (int e = 0; e < g->n_edges; e++) {
        int a = g->edge_from[e], b = g->edge_to[e];
        c->inc_edge[c->inc_start[a] + fill[a]++] = e;
        if (b != a) c->inc_edge[c->inc_start[b] + fill[b]++] = e;
    }
    free(fill);
}

static void ctx_free(ctx *c)
{
    free(c->moff);
    free(c->tol_limit);
    free(c->minv);
    free(c->minsum);
    free(c->mem);
    free(c->nc2);
    free(c->g2.node_cost);
    free(c->marg_store);
    free(c->marg);
    free(c->inc);
    free(c->rx);
    free(c->rdt);
    free(c->rup);
    free(c->rseen);
    free(c->inc_start);
    free(c->inc_edge);
}

/* Branch and bound from the root (every finite config), depth first.
 * Returns the lower bound: the incumbent's cost, or less where subproblems
 * are left open (their count in *open); *failed when a search failed. */
static double branch_and_bound(ctx *c, int *open, int *failed)
{
    const cost_graph *g = c->g;
    bb_item *stack = NULL;
    int n = 0, cap = 0;
    bb_item root = {lw_malloc((size_t)(c->cells + 1)), -HUGE_VAL, lw_calloc((size_t)c->G, sizeof(double))};
    for (int v = 0; v < c->N; v++)
        for (int k = 0; k < g->n_configs[v]; k++) root.mask[c->moff[v] + k] = isfinite(g->node_cost[v][k]) != 0;
    push(&stack, &n, &cap, root);
    int first = 1;
    *failed = 0;
    while (n > 0) {
        bb_item it = stack[--n];
        if (it.bound >= c->inc_cost - tol_of(c->inc_cost)) {
            item_free(&it);
            continue;
        }
        c->bb_nodes++;
        int rc = process(c, &it, first, &stack, &n, &cap);
        first = 0;
        item_free(&it);
        if (rc < 0) {
            *failed = 1;
            break;
        }
        if (rc == 1) break;
        if (c->o->max_subproblems > 0 && c->bb_nodes >= c->o->max_subproblems) break;
    }
    double lb = c->inc_cost;
    for (int i = 0; i < n; i++)
        if (stack[i].bound < lb) lb = stack[i].bound;
    for (int i = 0; i < n; i++) item_free(&stack[i]);
    free(stack);
    *open = n;
    return lb;
}

/* Branch and bound into res (its counts added to). */
static void run_branch_and_bound(const cost_graph *g, const mem_table *t, const double *limit,
                                 const memsearch_options *opt, double t0, memsearch_result *res)
{
    int N = g->n_nodes;
    ctx c;
    ctx_init(&c, g, t, limit, opt, t0);
    int open, failed;
    double lb = branch_and_bound(&c, &open, &failed);
    res->searches += c.searches;
    if (failed || c.fail == SEARCH_CANCELLED) {
        res->status = MEMSEARCH_FAILED;
        res->failure = c.fail != SEARCH_OK ? c.fail : SEARCH_OUT_OF_MEMORY;
    } else if (open > 0) {
        res->status = MEMSEARCH_TIME_LIMIT;
    } else if (isfinite(c.inc_cost)) {
        res->status = MEMSEARCH_OPTIMAL;
        res->proven_optimal = 1;
        lb = c.inc_cost;
    } else {
        res->status = MEMSEARCH_INFEASIBLE;
        lb = HUGE_VAL;
    }
    res->cost = c.inc_cost;
    res->lower_bound = lb;
    if (isfinite(c.inc_cost)) {
        res->config = lw_malloc(sizeof(int) * (size_t)(N + 1));
        memcpy(res->config, c.inc, sizeof(int) * (size_t)N);
    }
    res->bb_nodes += c.bb_nodes;
    ctx_free(&c);
}

memsearch_result *memsearch_run(const cost_graph *g, const mem_table *t, const double *limit,
                                const memsearch_options *opt)
{
    memsearch_options defaults;
    if (!opt) {
        memsearch_options_init(&defaults);
        opt = &defaults;
    }
    double t0 = lw_now(), deadline = opt->time_limit_s > 0 ? t0 + opt->time_limit_s : 0;
    int N = g->n_nodes;
    memsearch_result *res = lw_calloc(1, sizeof *res);
    res->n_nodes = N;
    res->failure = SEARCH_OK;
    search_options so;
    if (opt->search) so = *opt->search;
    else search_options_init(&so);
    if (opt->cancel) so.cancel = opt->cancel;
    so.keep_tables = 0;
    if (opt->no_sweep || !memsearch_sweep(g, t, limit, &so, deadline, opt->max_labels, opt->cancel, res))
        run_branch_and_bound(g, t, limit, opt, t0, res);
    if (!res->config && res->status != MEMSEARCH_FAILED && opt->no_min_peak) {
        res->min_peak = HUGE_VAL;
        res->min_peak_lower = 0;
    } else if (!res->config && res->status != MEMSEARCH_FAILED) {
        res->min_peak_config = lw_malloc(sizeof(int) * (size_t)(N + 1));
        double left = deadline > 0 ? deadline - lw_now() : 0;
        /* at most a few seconds: the smallest peak is a hint, its bound proven either way */
        if (deadline <= 0 || left > MEMSEARCH_MIN_PEAK_S) left = MEMSEARCH_MIN_PEAK_S;
        res->min_peak = memsearch_min_peak(g, t, left > 0.05 ? left : 0.05,
                                           res->min_peak_config, &res->min_peak_lower);
    }
    res->elapsed_s = lw_now() - t0;
    return res;
}

/* ---- the smallest peak ---- */

typedef struct mp_ctx {
    const cost_graph *g;
    const mem_table *t;
    int N, G;
    long *moff;
    long cells;
    double *minv;   /* [N * G] */
    double *mem;    /* [G] */
    int *x, *best;
    double best_peak;
    double deadline;
    int stopped;
    int root_done;
    double root_lb;  /* the bound at the root, weights included */
} mp_ctx;

static double mp_cell(const mp_ctx *c, int v, int k, int g)
{
    return g < c->t->tasks[v][k] ? mt_at(c->t, v, k)[g] : 0;
}

/* max over GPUs of the least memory each node can take under the mask */
static double mp_bound(mp_ctx *c, const unsigned char *mask, int *gs)
{
    double best = -1;
    *gs = 0;
    for (int g = 0; g < c->G; g++) c->mem[g] = 0;
    for (int v = 0; v < c->N; v++) {
        double *mv = c->minv + (long)v * c->G;
        for (int g = 0; g < c->G; g++) mv[g] = HUGE_VAL;
        for (int k = 0; k < c->g->n_configs[v]; k++) {
            if (!mask[c->moff[v] + k]) continue;
            for (int g = 0; g < c->G; g++) {
                double b = mp_cell(c, v, k, g);
                if (b < mv[g]) mv[g] = b;
            }
        }
        for (int g = 0; g < c->G; g++) c->mem[g] += mv[g];
    }
    for (int g = 0; g < c->G; g++)
        if (c->mem[g] > best) {
            best = c->mem[g];
            *gs = g;
        }
    return best;
}

/* Improves c->x one node at a time while that lowers its peak (then its
 * sum over GPUs); returns the peak and leaves per-GPU memory in per. */
static double mp_descend(mp_ctx *c, const unsigned char *mask, double *per)
{
    double peak = mt_peak(c->t, c->x, per);
    for (int moves = 0; moves < 4 * c->N + 16; moves++) {
        int bv = -1, bk = -1;
        double best = peak;
        for (int v = 0; v < c->N; v++) {
            const double *cur = mt_at(c->t, v, c->x[v]);
            int tc = c->t->tasks[v][c->x[v]];
            for (int k = 0; k < c->g->n_configs[v]; k++) {
                if (k == c->x[v] || !mask[c->moff[v] + k]) continue;
                const double *nb = mt_at(c->t, v, k);
                int tn = c->t->tasks[v][k];
                double pk = 0;
                for (int g = 0; g < c->G; g++) {
                    double m = per[g] - (g < tc ? cur[g] : 0) + (g < tn ? nb[g] : 0);
                    if (m > pk) pk = m;
                }
                if (pk < best * (1 - 1e-12)) {
                    best = pk;
                    bv = v;
                    bk = k;
                }
            }
        }
        if (bv < 0) break;
        c->x[bv] = bk;
        peak = mt_peak(c->t, c->x, per);
    }
    return peak;
}

static void mp_bb(mp_ctx *c, unsigned char *mask)
{
    if (c->stopped) return;
    if (c->deadline > 0 && lw_now() >= c->deadline) {
        c->stopped = 1;
        return;
    }
    int gs;
    double bound = mp_bound(c, mask, &gs);
    if (bound >= c->best_peak) return;
    /* weighted sums of the GPUs' memory: for weights w >= 0 summing to 1,
     * the least of sum_g w_g mem_g is a lower bound on the least peak, and
     * its argmin (node by node) a candidate; the weights move towards the
     * GPUs the candidate fills most */
    double *w = lw_malloc(sizeof(double) * (size_t)c->G), *per = lw_malloc(sizeof(double) * (size_t)c->G);
    for (int g = 0; g < c->G; g++) w[g] = g == gs;
    double eta = 2.0;
    for (int it = 0; it < 12; it++) {
        double lb = 0;
        for (int v = 0; v < c->N; v++) {
            double bs = HUGE_VAL;
            for (int k = 0; k < c->g->n_configs[v]; k++) {
                if (!mask[c->moff[v] + k]) continue;
                double s = 0;
                for (int g = 0; g < c->t->tasks[v][k]; g++) s += w[g] * mt_at(c->t, v, k)[g];
                if (s < bs) {
                    bs = s;
                    c->x[v] = k;
                }
            }
            lb += bs;
        }
        if (lb > bound) bound = lb;
        double peak = mp_descend(c, mask, per);
        if (peak < c->best_peak) {
            c->best_peak = peak;
            memcpy(c->best, c->x, sizeof(int) * (size_t)c->N);
        }
        if (bound >= c->best_peak || peak <= 0) break;
        double sum = 0;
        for (int g = 0; g < c->G; g++) sum += w[g] = it == 0 ? 1 : w[g] * exp(eta * (per[g] / peak - 1));
        for (int g = 0; g < c->G; g++) w[g] /= sum;
        eta *= 0.8;
    }
    free(w);
    if (!c->root_done) {
        c->root_done = 1;
        c->root_lb = bound;
    }
    if (bound >= c->best_peak) {
        free(per);
        return;
    }
    mt_peak(c->t, c->x, per);
    /* the GPU the last candidate fills most, and the node with the most
     * avoidable memory there */
    int gp = 0;
    for (int g = 1; g < c->G; g++)
        if (per[g] > per[gp]) gp = g;
    free(per);
    int bv = -1;
    double spread = -1;
    for (int v = 0; v < c->N; v++) {
        int alive = 0;
        double lo = HUGE_VAL, hi = -HUGE_VAL;
        for (int k = 0; k < c->g->n_configs[v]; k++) {
            if (!mask[c->moff[v] + k]) continue;
            alive++;
            double b = mp_cell(c, v, k, gp);
            if (b < lo) lo = b;
            if (b > hi) hi = b;
        }
        if (alive < 2) continue;
        if (hi - lo > spread) {
            spread = hi - lo;
            bv = v;
        }
    }
    if (bv < 0) return; /* one assignment left: evaluated */
    int nk = c->g->n_configs[bv];
    unsigned char *child = lw_malloc((size_t)c->cells + 1);
    unsigned char *done = lw_calloc((size_t)nk, 1);
    for (;;) { /* each config of bv, least memory on gp first */
        int kk = -1;
        for (int k = 0; k < nk; k++)
            if (mask[c->moff[bv] + k] && !done[k] && (kk < 0 || mp_cell(c, bv, k, gp) < mp_cell(c, bv, kk, gp))) kk = k;
        if (kk < 0) break;
        done[kk] = 1;
        memcpy(child, mask, (size_t)c->cells);
        for (int k = 0; k < nk; k++) child[c->moff[bv] + k] = k == kk;
        mp_bb(c, child);
        if (c->stopped) break;
    }
    free(done);
    free(child);
}

double memsearch_min_peak(const cost_graph *g, const mem_table *t, double time_limit_s, int *best, double *lower)
{
    mp_ctx c = {0};
    c.g = g;
    c.t = t;
    c.N = g->n_nodes;
    c.G = t->n_gpus;
    c.moff = lw_malloc(sizeof(long) * (size_t)(c.N + 1));
    for (int v = 0; v < c.N; v++) {
        c.moff[v] = c.cells;
        c.cells += g->n_configs[v];
    }
    c.minv = lw_malloc(sizeof(double) * (size_t)c.N * (size_t)c.G + sizeof(double));
    c.mem = lw_malloc(sizeof(double) * (size_t)c.G);
    c.x = lw_malloc(sizeof(int) * (size_t)(c.N + 1));
    c.best = best;
    c.best_peak = HUGE_VAL;
    c.deadline = time_limit_s > 0 ? lw_now() + time_limit_s : 0;
    unsigned char *mask = lw_malloc((size_t)c.cells + 1);
    int any_empty = 0;
    for (int v = 0; v < c.N; v++) {
        int alive = 0;
        for (int k = 0; k < g->n_configs[v]; k++) alive += mask[c.moff[v] + k] = isfinite(g->node_cost[v][k]) != 0;
        if (!alive) any_empty = 1;
    }
    int gs;
    double root = any_empty ? HUGE_VAL : mp_bound(&c, mask, &gs);
    if (!any_empty) mp_bb(&c, mask);
    if (c.root_done && c.root_lb > root) root = c.root_lb;
    *lower = c.stopped ? (root < c.best_peak ? root : c.best_peak) : c.best_peak;
    double r = c.best_peak;
    free(mask);
    free(c.moff);
    free(c.minv);
    free(c.mem);
    free(c.x);
    return r;
}
