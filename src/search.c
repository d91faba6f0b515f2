/*
 * search: Algorithm 1 of Jia et al. (ICML 2018, §5.2) over a cost_graph.
 *
 * Three phases:
 *  1. Reduction. Node and edge eliminations (and folds, unless
 *     options.fold is 0) until none applies, each one logged as an
 *     elim_step that owns its new edge's table. The order is fixed so that
 *     two runs on one graph log the same steps:
 *       - an edge elimination goes first whenever one exists: at the
 *         lowest-numbered node that has two alive out-edges with the same
 *         head; of those, the lowest head; the two lowest edge ids to it
 *         (e1 < e2) are merged;
 *       - otherwise a fold: the lowest-numbered node j with exactly one
 *         alive edge e1 (in or out) whose other end u has another alive
 *         edge; e2 is the lowest id among u's other alive edges. j's best
 *         config per config of u, h(cu) = min_cj node_cost[cj] + t1, is a
 *         cost of u alone, added to e2's table along u's axis (C_u * C_j
 *         work, against C^3 for a node elimination). A fold never adds an
 *         edge or a parallel pair, so edge eliminations stay done;
 *       - otherwise the lowest-numbered node with exactly one in-edge
 *         (i -> j) and one out-edge (j -> k), i, j, k pairwise different,
 *         is eliminated (i == k would make a self loop).
 *  2. Final step on the K nodes left. Nodes with no edge take their
 *     cheapest config. If the product of the config counts of the others
 *     is at most options.enumeration_limit, every assignment is enumerated
 *     (Algorithm 1 as written), by depth-first search with partial sums.
 *     Otherwise exact variable elimination (bucket elimination over min-sum
 *     factor tables, greedy min-fill order, ties to the smaller table, then
 *     the lower node), which refuses with SEARCH_TOO_LARGE before it
 *     allocates more than options.table_limit entries.
 *  3. Undo. The eliminated nodes, in reverse order of elimination, take the
 *     argmin config logged for their two neighbours' configs (a folded
 *     node: for its one neighbour's config).
 *
 * The cost is recomputed at the end with cg_evaluate on the original graph,
 * so it is the true cost of the configs returned, whatever the rounding of
 * the summed tables.
 */
#include "search.h"
#include "util.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------- small allocation helpers (never malloc(0), overflow-checked) */

static void *alloc_array(size_t n, size_t size)
{
    if (n == 0) n = 1;
    if (size != 0 && n > SIZE_MAX / size) return NULL;
    return malloc(n * size);
}

static void *zalloc_array(size_t n, size_t size)
{
    return calloc(n ? n : 1, size ? size : 1);
}

/* ---------- cost_graph */

cost_graph *cg_new(int n_nodes, const int *n_configs, int max_edges)
{
    if (n_nodes < 0 || max_edges < 0 || (n_nodes > 0 && !n_configs)) return NULL;
    for (int v = 0; v < n_nodes; v++)
        if (n_configs[v] < 1) return NULL;
    cost_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->n_nodes = n_nodes;
    g->edge_capacity = max_edges > 0 ? max_edges : 1;
    g->n_configs = zalloc_array((size_t)n_nodes, sizeof *g->n_configs);
    g->node_cost = zalloc_array((size_t)n_nodes, sizeof *g->node_cost);
    g->edge_from = zalloc_array((size_t)g->edge_capacity, sizeof *g->edge_from);
    g->edge_to = zalloc_array((size_t)g->edge_capacity, sizeof *g->edge_to);
    g->edge_cost = zalloc_array((size_t)g->edge_capacity, sizeof *g->edge_cost);
    g->edge_borrowed = zalloc_array((size_t)g->edge_capacity, 1);
    if (!g->n_configs || !g->node_cost || !g->edge_from || !g->edge_to || !g->edge_cost || !g->edge_borrowed) {
        cg_free(g);
        return NULL;
    }
    for (int v = 0; v < n_nodes; v++) {
        g->n_configs[v] = n_configs[v];
        g->node_cost[v] = zalloc_array((size_t)n_configs[v], sizeof(double));
        if (!g->node_cost[v]) {
            cg_free(g);
            return NULL;
        }
    }
    return g;
}

/* Room for one more edge; 0 when there is none. */
static int cg_edge_room(cost_graph *g)
{
    if (g->n_edges < g->edge_capacity) return 1;
    if (g->edge_capacity > INT_MAX / 2) return 0;
    int cap = g->edge_capacity > 0 ? 2 * g->edge_capacity : 4;
    int *nf = realloc(g->edge_from, (size_t)cap * sizeof *nf);
    if (!nf) return 0;
    g->edge_from = nf;
    int *nt = realloc(g->edge_to, (size_t)cap * sizeof *nt);
    if (!nt) return 0;
    g->edge_to = nt;
    double **nc = realloc(g->edge_cost, (size_t)cap * sizeof *nc);
    if (!nc) return 0;
    g->edge_cost = nc;
    unsigned char *nb = realloc(g->edge_borrowed, (size_t)cap);
    if (!nb) return 0;
    g->edge_borrowed = nb;
    g->edge_capacity = cap;
    return 1;
}

static int cg_put_edge(cost_graph *g, int from, int to, double *t, int borrowed)
{
    int e = g->n_edges++;
    g->edge_from[e] = from;
    g->edge_to[e] = to;
    g->edge_cost[e] = t;
    g->edge_borrowed[e] = (unsigned char)borrowed;
    return e;
}

int cg_add_edge(cost_graph *g, int from, int to)
{
    if (!g || from < 0 || to < 0 || from >= g->n_nodes || to >= g->n_nodes || !cg_edge_room(g)) return -1;
    double *t = zalloc_array((size_t)g->n_configs[from] * (size_t)g->n_configs[to], sizeof(double));
    if (!t) return -1;
    return cg_put_edge(g, from, to, t, 0);
}

int cg_add_edge_borrowed(cost_graph *g, int from, int to, const double *table)
{
    if (!g || !table || from < 0 || to < 0 || from >= g->n_nodes || to >= g->n_nodes || !cg_edge_room(g)) return -1;
    return cg_put_edge(g, from, to, (double *)table, 1); /* never written: see search.h */
}

void cg_free(cost_graph *g)
{
    if (!g) return;
    if (g->node_cost)
        for (int v = 0; v < g->n_nodes; v++) free(g->node_cost[v]);
    if (g->edge_cost)
        for (int e = 0; e < g->n_edges; e++)
            if (!g->edge_borrowed[e]) free(g->edge_cost[e]);
    free(g->edge_borrowed);
    free(g->n_configs);
    free(g->node_cost);
    free(g->edge_from);
    free(g->edge_to);
    free(g->edge_cost);
    free(g);
}

double cg_evaluate(const cost_graph *g, const int *config)
{
    double sum = 0.0;
    for (int v = 0; v < g->n_nodes; v++) sum += g->node_cost[v][config[v]];
    for (int e = 0; e < g->n_edges; e++) {
        int i = g->edge_from[e], k = g->edge_to[e];
        sum += g->edge_cost[e][(size_t)config[i] * (size_t)g->n_configs[k] + (size_t)config[k]];
    }
    return sum;
}

static int graph_valid(const cost_graph *g)
{
    if (!g || g->n_nodes < 0 || g->n_edges < 0) return 0;
    if (g->n_nodes > 0 && (!g->n_configs || !g->node_cost)) return 0;
    if (g->n_edges > 0 && (!g->edge_from || !g->edge_to || !g->edge_cost)) return 0;
    for (int v = 0; v < g->n_nodes; v++)
        if (g->n_configs[v] < 1 || !g->node_cost[v]) return 0;
    for (int e = 0; e < g->n_edges; e++) {
        int i = g->edge_from[e], k = g->edge_to[e];
        if (i < 0 || k < 0 || i >= g->n_nodes || k >= g->n_nodes || !g->edge_cost[e]) return 0;
    }
    return 1;
}

/* ---------- options, status */

void search_options_init(search_options *o)
{
    o->enumeration_limit = SEARCH_DEFAULT_ENUMERATION_LIMIT;
    o->table_limit = SEARCH_DEFAULT_TABLE_LIMIT;
    o->progress_min_work = SEARCH_DEFAULT_PROGRESS_MIN_WORK;
    o->cancel = NULL;
    o->fold = 1;
    o->keep_tables = 1;
}

const char *search_status_message(search_status s)
{
    switch (s) {
    case SEARCH_OK: return "ok";
    case SEARCH_OUT_OF_MEMORY: return "out of memory";
    case SEARCH_TOO_LARGE: return "graph left after the eliminations is too large to solve exactly";
    case SEARCH_INVALID_GRAPH: return "invalid cost graph";
    case SEARCH_CANCELLED: return "cancelled";
    }
    return "unknown status";
}

/* ---------- progress: at most ~100 calls, only for a long final step */

typedef struct progress {
    search_progress_fn fn;
    void *user;
    double total;   /* work units of the whole final step */
    double next;    /* report when done reaches this */
    double last;    /* the last fraction reported */
    int on;
} progress;

static void progress_start(progress *p, search_progress_fn fn, void *user, double total,
                           double min_work)
{
    p->fn = fn;
    p->user = user;
    p->total = total > 0 ? total : 1;
    p->on = fn != NULL && total >= min_work;
    p->next = p->total / 100.0;
    p->last = 0.0;
    if (p->on) p->fn(0.0, p->user);
}

static void progress_report(progress *p, double done)
{
    double f = done / p->total;
    if (f > 1.0) f = 1.0;
    /* the next multiple of 1% strictly above f: one call per percent at most */
    p->next = (floor(f * 100.0) + 1.0) / 100.0 * p->total;
    p->last = f;
    p->fn(f, p->user);
}

/* Inline check, cheap enough for an inner loop. */
#define PROGRESS(p, done) do { if ((p)->on && (done) >= (p)->next) progress_report((p), (done)); } while (0)

static void progress_end(progress *p)
{
    if (p->on && p->last < 1.0) p->fn(1.0, p->user);
}

/* ---------- phase 1: the reduction */

/* A node elimination takes its rows a group at a time
 * (node_elimination_rows): each tile of columns of t2 (cj_n x 16 doubles)
 * is read for every row of the group while it is in the cache, rather than
 * all of t2 once per row (ResNet-50 at 256 GPUs: t2 up to 480 x 480, 1.8
 * MB). Each entry is the same adds and mins in the same order. */
enum { NE_ROW_GROUP = 8 };

typedef struct reducer {
    const cost_graph *g;
    int n, m0;                /* nodes, original edges */
    int *from, *to;           /* [m0 + m0]: original and created edges */
    const double **tab;
    unsigned char *ealive, *nalive;
    /* alive in- and out-edges per node, in slices of one pool: a node's
     * degree never grows (a node elimination swaps an edge for another at
     * i and at k; an edge elimination swaps two for one) */
    int *in_off, *in_cnt, *out_off, *out_cnt, *pool;
    unsigned char *par_dirty; /* node's out-edges may hold two with one head */
    double *scratch;          /* [NE_ROW_GROUP x most configs of a node] for the node elimination */
    int keep;                 /* options.keep_tables: each step's table stays in r */
    search_result *r;
} reducer;

static void reducer_free(reducer *d)
{
    free(d->from);
    free(d->to);
    free(d->tab);
    free(d->ealive);
    free(d->nalive);
    free(d->in_off);
    free(d->in_cnt);
    free(d->out_off);
    free(d->out_cnt);
    free(d->pool);
    free(d->par_dirty);
    free(d->scratch);
}

static int reducer_init(reducer *d, const cost_graph *g, search_result *r)
{
    memset(d, 0, sizeof *d);
    int n = g->n_nodes, m0 = g->n_edges;
    d->g = g;
    d->n = n;
    d->m0 = m0;
    d->r = r;
    d->keep = r->tables_kept;
    size_t cap = 2 * (size_t)m0;
    d->from = alloc_array(cap, sizeof *d->from);
    d->to = alloc_array(cap, sizeof *d->to);
    d->tab = alloc_array(cap, sizeof *d->tab);
    d->ealive = zalloc_array(cap, 1);
    d->nalive = alloc_array((size_t)n, 1);
    d->in_off = alloc_array((size_t)n, sizeof(int));
    d->in_cnt = zalloc_array((size_t)n, sizeof(int));
    d->out_off = alloc_array((size_t)n, sizeof(int));
    d->out_cnt = zalloc_array((size_t)n, sizeof(int));
    d->pool = alloc_array(2 * (size_t)m0, sizeof(int));
    d->par_dirty = alloc_array((size_t)n, 1);
    int maxc = 1;
    for (int v = 0; v < n; v++)
        if (g->n_configs[v] > maxc) maxc = g->n_configs[v];
    d->scratch = alloc_array((size_t)maxc * NE_ROW_GROUP, sizeof(double));
    if (!d->scratch || !d->from || !d->to || !d->tab || !d->ealive || !d->nalive || !d->in_off ||
        !d->in_cnt || !d->out_off || !d->out_cnt || !d->pool || !d->par_dirty)
        return 0;
    for (int e = 0; e < m0; e++) {
        d->from[e] = g->edge_from[e];
        d->to[e] = g->edge_to[e];
        d->tab[e] = g->edge_cost[e];
        d->ealive[e] = 1;
        d->out_cnt[d->from[e]]++;
        d->in_cnt[d->to[e]]++;
    }
    int off = 0;
    for (int v = 0; v < n; v++) {
        d->in_off[v] = off;
        off += d->in_cnt[v];
        d->out_off[v] = off;
        off += d->out_cnt[v];
        d->in_cnt[v] = d->out_cnt[v] = 0;
    }
    for (int e = 0; e < m0; e++) {
        int i = d->from[e], k = d->to[e];
        d->pool[d->out_off[i] + d->out_cnt[i]++] = e;
        d->pool[d->in_off[k] + d->in_cnt[k]++] = e;
    }
    memset(d->nalive, 1, (size_t)(n > 0 ? n : 1));
    memset(d->par_dirty, 1, (size_t)(n > 0 ? n : 1));
    return 1;
}

/* Replaces edge `old` by `neu` in a node's slice of the pool. */
static void slice_replace(int *slice, int cnt, int old, int neu)
{
    for (int p = 0; p < cnt; p++)
        if (slice[p] == old) {
            slice[p] = neu;
            return;
        }
}

static void slice_remove(int *slice, int *cnt, int old)
{
    for (int p = 0; p < *cnt; p++)
        if (slice[p] == old) {
            slice[p] = slice[--*cnt];
            return;
        }
}

/* Two alive out-edges of i with one head, by the order rule above. */
static int find_parallel(const reducer *d, int i, int *e1, int *e2)
{
    const int *out = d->pool + d->out_off[i];
    int c = d->out_cnt[i], head = INT_MAX;
    for (int a = 0; a < c; a++)
        for (int b = a + 1; b < c; b++)
            if (d->to[out[a]] == d->to[out[b]] && d->to[out[a]] < head) head = d->to[out[a]];
    if (head == INT_MAX) return 0;
    int lo = INT_MAX, lo2 = INT_MAX;
    for (int a = 0; a < c; a++) {
        int e = out[a];
        if (d->to[e] != head) continue;
        if (e < lo) {
            lo2 = lo;
            lo = e;
        } else if (e < lo2) {
            lo2 = e;
        }
    }
    *e1 = lo;
    *e2 = lo2;
    return 1;
}

static int node_eliminable(const reducer *d, int j)
{
    if (d->in_cnt[j] != 1 || d->out_cnt[j] != 1) return 0;
    int i = d->from[d->pool[d->in_off[j]]], k = d->to[d->pool[d->out_off[j]]];
    return i != j && k != j && i != k;
}

/*
 * t'(ci, ck) = min over cj of node_cost[cj] + t1(ci, cj) + t2(cj, ck), and
 * the lowest cj that reaches it. This is the O(C^3) heart of the search.
 *
 * Loop order ci, cj, ck: base[cj] = node_cost[cj] + t1(ci, cj) is formed once
 * per ci, and the inner loop walks a row of t2, contiguous. With SSE2 the ck
 * are taken 8 at a time in registers (minpd), and the argmin is tracked only
 * per block of ARG_BLOCK consecutive cj (the first block whose minimum is
 * the least); the exact cj is then found by rescanning that block for the
 * first sum equal to the minimum. The sums are recomputed with the same
 * operands in the same precision (FLT_EVAL_METHOD 0), so equality is exact
 * and the result is identical to the plain scalar loop below.
 */
#if defined(__SSE2__) && defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#include <emmintrin.h>
#define LW_NODE_ELIM_SSE2 1
#endif

enum { ARG_BLOCK = 4 }; /* 4 to 8 measure the same; smaller is a shorter rescan */

/* Column ck alone, scalar. */
static void node_elimination_column(int cj_n, int ck_n, int ck, const double *base,
                                    const double *t2, double *out, int *am)
{
    double best = base[0] + t2[ck];
    int arg = 0;
    for (int cj = 1; cj < cj_n; cj++) {
        double v = base[cj] + t2[(size_t)cj * (size_t)ck_n + (size_t)ck];
        if (v < best) {
            best = v;
            arg = cj;
        }
    }
    out[ck] = best;
    am[ck] = arg;
}

#ifdef LW_NODE_ELIM_SSE2
static inline __m128d blend_pd(__m128d mask, __m128d a, __m128d b)
{
    return _mm_or_pd(_mm_and_pd(mask, a), _mm_andnot_pd(mask, b));
}

/* The lowest cj of the block starting at cj0 whose sum equals `target`.
 * Branchless (scanned downwards), as the answer is unpredictable. */
static int argmin_in_block(int cj0, int cj_n, int ck_n, int ck, const double *base,
                           const double *t2, double target)
{
    int cj1 = cj0 + ARG_BLOCK < cj_n ? cj0 + ARG_BLOCK : cj_n;
    int arg = cj0; /* stays so only for NaN costs */
    for (int cj = cj1 - 1; cj >= cj0; cj--) {
        int eq = base[cj] + t2[(size_t)cj * (size_t)ck_n + (size_t)ck] == target;
        arg = eq ? cj : arg;
    }
    return arg;
}

/* Columns ck, ck + 1: one register. */
static void node_elimination_pair(int cj_n, int ck_n, int ck, const double *base,
                                  const double *t2, double *out, int *am)
{
    __m128d o = _mm_setzero_pd(), k = o;
    for (int cj0 = 0; cj0 < cj_n; cj0 += ARG_BLOCK) {
        int cj1 = cj0 + ARG_BLOCK < cj_n ? cj0 + ARG_BLOCK : cj_n;
        const double *r2 = t2 + (size_t)cj0 * (size_t)ck_n + (size_t)ck;
        __m128d m = _mm_add_pd(_mm_set1_pd(base[cj0]), _mm_loadu_pd(r2));
        for (int cj = cj0 + 1; cj < cj1; cj++) {
            r2 += ck_n;
            m = _mm_min_pd(_mm_add_pd(_mm_set1_pd(base[cj]), _mm_loadu_pd(r2)), m);
        }
        if (cj0 == 0) {
            o = m;
        } else {
            __m128d l = _mm_cmplt_pd(m, o);
            o = blend_pd(l, m, o);
            k = blend_pd(l, _mm_set1_pd((double)cj0), k);
        }
    }
    double blk[2];
    _mm_storeu_pd(out + ck, o);
    _mm_storeu_pd(blk, k);
    am[ck] = argmin_in_block((int)blk[0], cj_n, ck_n, ck, base, t2, out[ck]);
    am[ck + 1] = argmin_in_block((int)blk[1], cj_n, ck_n, ck + 1, base, t2, out[ck + 1]);
}
#endif

#ifdef LW_NODE_ELIM_SSE2
/* Columns ck .. ck + 7: four registers. */
static void node_elimination_tile8(int cj_n, int ck_n, int ck, const double *base, const double *t2, double *out,
                                   int *am)
{
    __m128d o0 = _mm_setzero_pd(), o1 = o0, o2 = o0, o3 = o0;
    __m128d k0 = o0, k1 = o0, k2 = o0, k3 = o0;
    for (int cj0 = 0; cj0 < cj_n; cj0 += ARG_BLOCK) {
        int cj1 = cj0 + ARG_BLOCK < cj_n ? cj0 + ARG_BLOCK : cj_n;
        const double *r2 = t2 + (size_t)cj0 * (size_t)ck_n + (size_t)ck;
        __m128d b = _mm_set1_pd(base[cj0]);
        __m128d m0 = _mm_add_pd(b, _mm_loadu_pd(r2));
        __m128d m1 = _mm_add_pd(b, _mm_loadu_pd(r2 + 2));
        __m128d m2 = _mm_add_pd(b, _mm_loadu_pd(r2 + 4));
        __m128d m3 = _mm_add_pd(b, _mm_loadu_pd(r2 + 6));
        for (int cj = cj0 + 1; cj < cj1; cj++) {
            r2 += ck_n;
            b = _mm_set1_pd(base[cj]);
            m0 = _mm_min_pd(_mm_add_pd(b, _mm_loadu_pd(r2)), m0);
            m1 = _mm_min_pd(_mm_add_pd(b, _mm_loadu_pd(r2 + 2)), m1);
            m2 = _mm_min_pd(_mm_add_pd(b, _mm_loadu_pd(r2 + 4)), m2);
            m3 = _mm_min_pd(_mm_add_pd(b, _mm_loadu_pd(r2 + 6)), m3);
        }
        if (cj0 == 0) {
            o0 = m0, o1 = m1, o2 = m2, o3 = m3;
        } else {
            /* strictly less: an earlier block keeps a tie */
            __m128d kb = _mm_set1_pd((double)cj0);
            __m128d l0 = _mm_cmplt_pd(m0, o0), l1 = _mm_cmplt_pd(m1, o1);
            __m128d l2 = _mm_cmplt_pd(m2, o2), l3 = _mm_cmplt_pd(m3, o3);
            o0 = blend_pd(l0, m0, o0), k0 = blend_pd(l0, kb, k0);
            o1 = blend_pd(l1, m1, o1), k1 = blend_pd(l1, kb, k1);
            o2 = blend_pd(l2, m2, o2), k2 = blend_pd(l2, kb, k2);
            o3 = blend_pd(l3, m3, o3), k3 = blend_pd(l3, kb, k3);
        }
    }
    double blk[8];
    _mm_storeu_pd(out + ck, o0);
    _mm_storeu_pd(out + ck + 2, o1);
    _mm_storeu_pd(out + ck + 4, o2);
    _mm_storeu_pd(out + ck + 6, o3);
    _mm_storeu_pd(blk, k0);
    _mm_storeu_pd(blk + 2, k1);
    _mm_storeu_pd(blk + 4, k2);
    _mm_storeu_pd(blk + 6, k3);
    for (int x = 0; x < 8; x++)
        am[ck + x] = argmin_in_block((int)blk[x], cj_n, ck_n, ck + x, base, t2, out[ck + x]);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(LW_NO_AVX2)
#include <immintrin.h>
#define LW_NODE_ELIM_AVX2 1
/* Columns ck .. ck + 15 with AVX2 (four registers of four), where the CPU
 * has it: the same adds, mins and strict comparisons per column as the
 * SSE2 tiles, so the same table and argmins, with half the instructions. */
__attribute__((target("avx2"))) static void node_elimination_tile16(int cj_n, int ck_n, int ck, const double *base,
                                                                   const double *t2, double *out, int *am)
{
    __m256d o0 = _mm256_setzero_pd(), o1 = o0, o2 = o0, o3 = o0;
    __m256d k0 = o0, k1 = o0, k2 = o0, k3 = o0;
    for (int cj0 = 0; cj0 < cj_n; cj0 += ARG_BLOCK) {
        int cj1 = cj0 + ARG_BLOCK < cj_n ? cj0 + ARG_BLOCK : cj_n;
        const double *r2 = t2 + (size_t)cj0 * (size_t)ck_n + (size_t)ck;
        __m256d b = _mm256_set1_pd(base[cj0]);
        __m256d m0 = _mm256_add_pd(b, _mm256_loadu_pd(r2));
        __m256d m1 = _mm256_add_pd(b, _mm256_loadu_pd(r2 + 4));
        __m256d m2 = _mm256_add_pd(b, _mm256_loadu_pd(r2 + 8));
        __m256d m3 = _mm256_add_pd(b, _mm256_loadu_pd(r2 + 12));
        for (int cj = cj0 + 1; cj < cj1; cj++) {
            r2 += ck_n;
            b = _mm256_set1_pd(base[cj]);
            m0 = _mm256_min_pd(_mm256_add_pd(b, _mm256_loadu_pd(r2)), m0);
            m1 = _mm256_min_pd(_mm256_add_pd(b, _mm256_loadu_pd(r2 + 4)), m1);
            m2 = _mm256_min_pd(_mm256_add_pd(b, _mm256_loadu_pd(r2 + 8)), m2);
            m3 = _mm256_min_pd(_mm256_add_pd(b, _mm256_loadu_pd(r2 + 12)), m3);
        }
        if (cj0 == 0) {
            o0 = m0, o1 = m1, o2 = m2, o3 = m3;
        } else {
            /* strictly less: an earlier block keeps a tie */
            __m256d kb = _mm256_set1_pd((double)cj0);
            __m256d l0 = _mm256_cmp_pd(m0, o0, _CMP_LT_OS), l1 = _mm256_cmp_pd(m1, o1, _CMP_LT_OS);
            __m256d l2 = _mm256_cmp_pd(m2, o2, _CMP_LT_OS), l3 = _mm256_cmp_pd(m3, o3, _CMP_LT_OS);
            o0 = _mm256_blendv_pd(o0, m0, l0), k0 = _mm256_blendv_pd(k0, kb, l0);
            o1 = _mm256_blendv_pd(o1, m1, l1), k1 = _mm256_blendv_pd(k1, kb, l1);
            o2 = _mm256_blendv_pd(o2, m2, l2), k2 = _mm256_blendv_pd(k2, kb, l2);
            o3 = _mm256_blendv_pd(o3, m3, l3), k3 = _mm256_blendv_pd(k3, kb, l3);
        }
    }
    double blk[16];
    _mm256_storeu_pd(out + ck, o0);
    _mm256_storeu_pd(out + ck + 4, o1);
    _mm256_storeu_pd(out + ck + 8, o2);
    _mm256_storeu_pd(out + ck + 12, o3);
    _mm256_storeu_pd(blk, k0);
    _mm256_storeu_pd(blk + 4, k1);
    _mm256_storeu_pd(blk + 8, k2);
    _mm256_storeu_pd(blk + 12, k3);
    for (int x = 0; x < 16; x++)
        am[ck + x] = argmin_in_block((int)blk[x], cj_n, ck_n, ck + x, base, t2, out[ck + x]);
}

/* 1 where the CPU runs AVX2 (asked once), unless LAYERWISE_NO_AVX2 is set
 * to something other than 0 (tests and the bench compare both kernels). */
static int use_avx2(void)
{
    static atomic_int known = -1;
    int v = atomic_load(&known);
    if (v < 0) {
        const char *off = getenv("LAYERWISE_NO_AVX2");
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx2") && !(off && *off && strcmp(off, "0") != 0);
        atomic_store(&known, v);
    }
    return v;
}
#endif
#endif

/* Rows ci0 .. ci1 - 1 of a node elimination's table (each row on its own:
 * any split of the rows gives the same table). */
typedef struct ne_rows {
    int ci0, ci1, cj_n, ck_n;
    const double *nc, *t1, *t2;
    double *t, *base; /* base: room for NE_ROW_GROUP rows of cj_n */
    int *arg;
} ne_rows;

static void node_elimination_row_rest(int cj_n, int ck_n, int ck, const double *base, const double *t2, double *out,
                                      int *am)
{
#ifdef LW_NODE_ELIM_SSE2
    for (; ck + 8 <= ck_n; ck += 8) node_elimination_tile8(cj_n, ck_n, ck, base, t2, out, am);
    for (; ck + 2 <= ck_n; ck += 2) node_elimination_pair(cj_n, ck_n, ck, base, t2, out, am);
#endif
    for (; ck < ck_n; ck++) node_elimination_column(cj_n, ck_n, ck, base, t2, out, am);
}

static void node_elimination_rows(const ne_rows *w)
{
    const int cj_n = w->cj_n, ck_n = w->ck_n;
    const double *nc = w->nc, *t1 = w->t1, *t2 = w->t2;
    double *t = w->t, *bases = w->base; /* the group's rows of nc + t1 */
    int *arg = w->arg;
    for (int g0 = w->ci0; g0 < w->ci1; g0 += NE_ROW_GROUP) {
        const int g1 = g0 + NE_ROW_GROUP < w->ci1 ? g0 + NE_ROW_GROUP : w->ci1;
        for (int ci = g0; ci < g1; ci++) {
            const double *r1 = t1 + (size_t)ci * (size_t)cj_n;
            double *base = bases + (size_t)(ci - g0) * (size_t)cj_n;
            for (int cj = 0; cj < cj_n; cj++) base[cj] = nc[cj] + r1[cj];
        }
        int ck = 0;
#if defined(LW_NODE_ELIM_SSE2) && defined(LW_NODE_ELIM_AVX2)
        if (use_avx2())
            for (; ck + 16 <= ck_n; ck += 16)
                for (int ci = g0; ci < g1; ci++)
                    node_elimination_tile16(cj_n, ck_n, ck, bases + (size_t)(ci - g0) * (size_t)cj_n, t2,
                                            t + (size_t)ci * (size_t)ck_n, arg + (size_t)ci * (size_t)ck_n);
#endif
        for (int ci = g0; ci < g1; ci++)
            node_elimination_row_rest(cj_n, ck_n, ck, bases + (size_t)(ci - g0) * (size_t)cj_n, t2,
                                      t + (size_t)ci * (size_t)ck_n, arg + (size_t)ci * (size_t)ck_n);
    }
}

static void *node_elimination_thread(void *a)
{
    node_elimination_rows(a);
    return NULL;
}

/* Below this many min-plus terms a node elimination stays on one thread
 * (starting one costs tens of microseconds). */
#define NE_THREAD_WORK (1 << 21)

/* base: room for NE_ROW_GROUP x cj_n doubles (the reducer's scratch). */
static void node_elimination_table(int ci_n, int cj_n, int ck_n, const double *nc,
                                   const double *t1, const double *t2, double *t, int *arg,
                                   double *base)
{
    {
        /* Stream t2 into the cache in address order first: the loop below
         * reads it by column tiles, which the prefetcher follows less well
         * (measured: ~15% of a 70-config search). */
        double acc = 0;
        size_t sz = (size_t)cj_n * (size_t)ck_n;
        for (size_t x = 0; x < sz; x += 8) acc += t2[x];
        volatile double sink = acc;
        (void)sink;
    }
    ne_rows all = {0, ci_n, cj_n, ck_n, nc, t1, t2, t, base, arg};
    /* a large one: the second half of the rows on a second core, which the
     * search would leave idle (the t_x tables are built by then) */
    if ((double)ci_n * cj_n * ck_n >= NE_THREAD_WORK && ci_n >= 2 && lw_worker_count() > 1) {
        ne_rows two = all;
        two.base = malloc(sizeof(double) * (size_t)cj_n * NE_ROW_GROUP);
        pthread_t th;
        if (two.base) {
            two.ci0 = all.ci1 = ci_n / 2;
            if (lw_thread_start(&th, node_elimination_thread, &two) == 0) {
                node_elimination_rows(&all);
                pthread_join(th, NULL);
                free(two.base);
                return;
            }
            free(two.base);
            all.ci1 = ci_n;
        }
    }
    node_elimination_rows(&all);
}

/* Logs step number r->n_steps and puts its new edge (i -> k, table t) in
 * place of e1 and e2; returns the new edge's id. Both eliminations end so. */
static int record_step(reducer *d, elim_kind kind, int node, int e1, int e2, int i, int k, double *t, int *arg)
{
    search_result *r = d->r;
    int ne = d->m0 + r->n_steps;
    elim_step *st = &r->steps[r->n_steps++];
    st->kind = kind;
    st->node = node;
    st->into = -1;
    st->e1 = e1;
    st->e2 = e2;
    st->new_edge = ne;
    st->from = i;
    st->to = k;
    st->table = t;
    st->argmin = arg;
    d->from[ne] = i;
    d->to[ne] = k;
    d->tab[ne] = t;
    d->ealive[ne] = 1;
    d->ealive[e1] = d->ealive[e2] = 0;
    return ne;
}

/* Where tables are not kept and e is a created edge: its table, taken
 * from its step to be written over by the step being done (the same
 * size), else NULL. */
static double *take_used(reducer *d, int e)
{
    if (d->keep || e < d->m0) return NULL;
    elim_step *st = &d->r->steps[e - d->m0];
    double *t = st->table;
    st->table = NULL;
    return t;
}

/* Where tables are not kept: created edge e's table, which the step
 * being done has read for the last time (every edge is taken by one step
 * at most), is freed; the model's own edges' tables are the caller's. */
static void drop_used(reducer *d, int e)
{
    free(take_used(d, e));
    if (!d->keep && e >= d->m0) d->tab[e] = NULL;
}

static int do_node_elimination(reducer *d, int j)
{
    const cost_graph *g = d->g;
    int e1 = d->pool[d->in_off[j]], e2 = d->pool[d->out_off[j]];
    int i = d->from[e1], k = d->to[e2];
    size_t sz = (size_t)g->n_configs[i] * (size_t)g->n_configs[k];
    double *t = alloc_array(sz, sizeof *t);
    int *arg = alloc_array(sz, sizeof *arg);
    if (!t || !arg) {
        free(t);
        free(arg);
        return 0;
    }
    node_elimination_table(g->n_configs[i], g->n_configs[j], g->n_configs[k], g->node_cost[j],
                           d->tab[e1], d->tab[e2], t, arg, d->scratch);
    int ne = record_step(d, ELIM_NODE, j, e1, e2, i, k, t, arg);
    drop_used(d, e1);
    drop_used(d, e2);
    slice_replace(d->pool + d->out_off[i], d->out_cnt[i], e1, ne);
    slice_replace(d->pool + d->in_off[k], d->in_cnt[k], e2, ne);
    d->in_cnt[j] = d->out_cnt[j] = 0;
    d->nalive[j] = 0;
    d->par_dirty[i] = 1;
    return 1;
}

static int do_edge_elimination(reducer *d, int e1, int e2)
{
    const cost_graph *g = d->g;
    int i = d->from[e1], k = d->to[e1];
    size_t sz = (size_t)g->n_configs[i] * (size_t)g->n_configs[k];
    const double *t1 = d->tab[e1], *t2 = d->tab[e2];
    /* the sum written over a created edge's table, where tables are not
     * kept (a + b is b + a exactly, so over either) */
    double *t = take_used(d, e1);
    if (!t) t = take_used(d, e2);
    if (!t) t = alloc_array(sz, sizeof *t);
    if (!t) return 0;
    for (size_t x = 0; x < sz; x++) t[x] = t1[x] + t2[x];
    int ne = record_step(d, ELIM_EDGE, -1, e1, e2, i, k, t, NULL);
    drop_used(d, e1);
    drop_used(d, e2);
    int *out = d->pool + d->out_off[i], *in = d->pool + d->in_off[k];
    slice_replace(out, d->out_cnt[i], e1, ne);
    slice_remove(out, &d->out_cnt[i], e2);
    slice_replace(in, d->in_cnt[k], e1, ne);
    slice_remove(in, &d->in_cnt[k], e2);
    return 1;
}

/* Node j's only alive edge (into *e1) and its other end (*u), if j has
 * exactly one and u has another alive edge; the lowest id of those goes
 * into *e2. A self loop counts twice, so j == u never happens. */
static int foldable(const reducer *d, int j, int *e1, int *u, int *e2)
{
    if (d->in_cnt[j] + d->out_cnt[j] != 1) return 0;
    int e = d->in_cnt[j] ? d->pool[d->in_off[j]] : d->pool[d->out_off[j]];
    int v = d->from[e] == j ? d->to[e] : d->from[e];
    int best = INT_MAX;
    const int *in = d->pool + d->in_off[v], *out = d->pool + d->out_off[v];
    for (int a = 0; a < d->in_cnt[v]; a++)
        if (in[a] != e && in[a] < best) best = in[a];
    for (int a = 0; a < d->out_cnt[v]; a++)
        if (out[a] != e && out[a] < best) best = out[a];
    if (best == INT_MAX) return 0;
    *e1 = e;
    *u = v;
    *e2 = best;
    return 1;
}

/* Where t1(cu, cj) sits in the table of a fold's edge e1: (u -> j) is
 * [cu * cj_n + cj] when u_is_from, (j -> u) is [cj * cu_n + cu]. */
static inline size_t fold_at(int u_is_from, int cu, int cj, int cu_n, int cj_n)
{
    return u_is_from ? (size_t)cu * (size_t)cj_n + (size_t)cj : (size_t)cj * (size_t)cu_n + (size_t)cu;
}

/* h(cu) = min over cj of nc[cj] + t1(cu, cj), the lowest cj reaching it
 * into arg[cu]; t1 is e1's table, read through fold_at. */
static void fold_min(int cu_n, int cj_n, const double *nc, const double *t1, int u_is_from, double *h, int *arg)
{
    for (int cu = 0; cu < cu_n; cu++) {
        double best = 0;
        int at = -1;
        for (int cj = 0; cj < cj_n; cj++) {
            double v = nc[cj] + t1[fold_at(u_is_from, cu, cj, cu_n, cj_n)];
            if (at < 0 || v < best) {
                best = v;
                at = cj;
            }
        }
        h[cu] = best;
        arg[cu] = at;
    }
}

/* t = t2 (from -> to, ft_n x tt_n) with h added along u's axis: rows when
 * u is the tail (a self loop u -> u too), else columns. */
static void add_along(int f_n, int t_n, const double *t2, const double *h, int rows, double *t)
{
    for (int a = 0; a < f_n; a++)
        for (int b = 0; b < t_n; b++) {
            size_t x = (size_t)a * (size_t)t_n + (size_t)b;
            t[x] = t2[x] + h[rows ? a : b];
        }
}

static int do_fold(reducer *d, int j, int e1, int u, int e2)
{
    const cost_graph *g = d->g;
    int i = d->from[e2], k = d->to[e2];
    int cu_n = g->n_configs[u];
    size_t sz = (size_t)g->n_configs[i] * (size_t)g->n_configs[k];
    int *arg = alloc_array((size_t)cu_n, sizeof *arg);
    double *t = arg ? take_used(d, e2) : NULL; /* e2's table, added to in place */
    if (arg && !t) t = alloc_array(sz, sizeof *t);
    if (!t || !arg) {
        free(t);
        free(arg);
        return 0;
    }
    double *h = d->scratch; /* [most configs of a node] */
    fold_min(cu_n, g->n_configs[j], g->node_cost[j], d->tab[e1], d->from[e1] == u, h, arg);
    add_along(g->n_configs[i], g->n_configs[k], d->tab[e2], h, i == u, t);
    int ne = record_step(d, ELIM_FOLD, j, e1, e2, i, k, t, arg);
    d->r->steps[d->r->n_steps - 1].into = u;
    drop_used(d, e1);
    drop_used(d, e2);
    if (d->from[e1] == u) slice_remove(d->pool + d->out_off[u], &d->out_cnt[u], e1);
    else slice_remove(d->pool + d->in_off[u], &d->in_cnt[u], e1);
    slice_replace(d->pool + d->out_off[i], d->out_cnt[i], e2, ne);
    slice_replace(d->pool + d->in_off[k], d->in_cnt[k], e2, ne);
    d->in_cnt[j] = d->out_cnt[j] = 0;
    d->nalive[j] = 0;
    return 1;
}

/* Every step removes one alive edge, so there are fewer than m0 steps.
 * 1 done, 0 out of memory, -1 cancelled. */
static int reduce(reducer *d, int fold, const atomic_int *cancel)
{
    for (;;) {
        if (cancel && atomic_load(cancel)) return -1;
        int did = 0;
        for (int v = 0; v < d->n && !did; v++) {
            if (!d->par_dirty[v]) continue;
            int e1, e2;
            if (find_parallel(d, v, &e1, &e2)) {
                if (!do_edge_elimination(d, e1, e2)) return 0;
                did = 1;
            } else {
                d->par_dirty[v] = 0;
            }
        }
        for (int j = 0; fold && j < d->n && !did; j++) {
            int e1, u, e2;
            if (d->nalive[j] && foldable(d, j, &e1, &u, &e2)) {
                if (!do_fold(d, j, e1, u, e2)) return 0;
                did = 1;
            }
        }
        for (int j = 0; j < d->n && !did; j++) {
            if (d->nalive[j] && node_eliminable(d, j)) {
                if (!do_node_elimination(d, j)) return 0;
                did = 1;
            }
        }
        if (!did) return 1;
    }
}

/* ---------- phase 2: the final step over the nodes left */

/* The part of the graph the final step solves: `m` nodes that still have an
 * edge, local ids 0..m-1 (ascending original id), and the alive edges. */
typedef struct final_graph {
    int m;
    int *node;              /* [m] original id */
    int *nc;                /* [m] config counts */
    const double **ncost;   /* [m] node cost tables */
    int ne;
    int *ef, *et;           /* [ne] local endpoints */
    const double **et_tab;  /* [ne] tables */
    int *cfg;               /* [m] the answer */
} final_graph;

static void final_graph_free(final_graph *f)
{
    free(f->node);
    free(f->nc);
    free(f->ncost);
    free(f->ef);
    free(f->et);
    free(f->et_tab);
    free(f->cfg);
}

/* Enumeration, depth-first: depth p assigns local node p; partial[p + 1] is
 * the cost of nodes 0..p and of every edge whose endpoints are both among
 * them. An edge is charged at the depth of its later endpoint. */
static int final_enumerate(final_graph *f, progress *pg)
{
    int m = f->m, ok = 0;
    int *att_off = zalloc_array((size_t)m + 1, sizeof(int));
    int *att = alloc_array((size_t)f->ne, sizeof(int));
    int *cfg = zalloc_array((size_t)m, sizeof(int));
    double *partial = zalloc_array((size_t)m + 1, sizeof(double));
    if (!att_off || !att || !cfg || !partial) goto out;
    for (int e = 0; e < f->ne; e++) {
        int late = f->ef[e] > f->et[e] ? f->ef[e] : f->et[e];
        att_off[late + 1]++;
    }
    for (int p = 0; p < m; p++) att_off[p + 1] += att_off[p];
    {
        int *fill = zalloc_array((size_t)m, sizeof(int));
        if (!fill) goto out;
        for (int e = 0; e < f->ne; e++) {
            int late = f->ef[e] > f->et[e] ? f->ef[e] : f->et[e];
            att[att_off[late] + fill[late]++] = e;
        }
        free(fill);
    }

    double best = INFINITY, done = 0;
    int have = 0;
    int p = 0;
    cfg[0] = -1;
    partial[0] = 0.0;
    while (p >= 0) {
        if (++cfg[p] >= f->nc[p]) {
            p--;
            continue;
        }
        double s = partial[p] + f->ncost[p][cfg[p]];
        for (int a = att_off[p]; a < att_off[p + 1]; a++) {
            int e = att[a];
            s += f->et_tab[e][(size_t)cfg[f->ef[e]] * (size_t)f->nc[f->et[e]] + (size_t)cfg[f->et[e]]];
        }
        if (p == m - 1) {
            if (!have || s < best) {
                best = s;
                have = 1;
                memcpy(f->cfg, cfg, (size_t)m * sizeof(int));
            }
            done += 1;
            PROGRESS(pg, done);
        } else {
            partial[p + 1] = s;
            cfg[++p] = -1;
        }
    }
    ok = 1;
out:
    free(att_off);
    free(att);
    free(cfg);
    free(partial);
    return ok;
}

/* Variable elimination. A factor is a min-sum table over a few local nodes;
 * index = sum of config * stride over its variables. */
typedef struct factor {
    int nv;
    int *vars;
    size_t *strides;
    const double *t;
    double *owned_t;        /* t when this module allocated it */
    int alive;
} factor;

/* One elimination: node x's best config for every assignment of scope s. */
typedef struct ve_record {
    int x;
    int ns;
    int *s;
    size_t *strides;
    int *argmin;
} ve_record;

/* Greedy min-fill order; ties to the smaller new table, then the lower node.
 * Returns 1 and the order if the tables fit table_limit, 0 if not (with
 * *entries a lower bound), -1 on no memory. */
static int ve_plan(const final_graph *f, double table_limit, int *order, double *entries,
                   double *work)
{
    int m = f->m;
    unsigned char *adj = zalloc_array((size_t)m * (size_t)m, 1);
    unsigned char *gone = zalloc_array((size_t)m, 1);
    int *nb = alloc_array((size_t)m, sizeof(int));
    if (!adj || !gone || !nb) {
        free(adj);
        free(gone);
        free(nb);
        return -1;
    }
    for (int e = 0; e < f->ne; e++) {
        int a = f->ef[e], b = f->et[e];
        if (a == b) continue;
        adj[(size_t)a * m + b] = adj[(size_t)b * m + a] = 1;
    }
    *entries = 0;
    *work = 0;
    int fits = 1;
    for (int step = 0; step < m && fits; step++) {
        int bx = -1;
        long bfill = 0;
        double bsize = 0;
        for (int v = 0; v < m; v++) {
            if (gone[v]) continue;
            int k = 0;
            double size = 1;
            for (int u = 0; u < m; u++)
                if (!gone[u] && adj[(size_t)v * m + u]) {
                    nb[k++] = u;
                    size *= f->nc[u];
                }
            long fill = 0;
            for (int a = 0; a < k; a++)
                for (int b = a + 1; b < k; b++)
                    if (!adj[(size_t)nb[a] * m + nb[b]]) fill++;
            if (bx < 0 || fill < bfill || (fill == bfill && size < bsize)) {
                bx = v;
                bfill = fill;
                bsize = size;
            }
        }
        int k = 0;
        for (int u = 0; u < m; u++)
            if (!gone[u] && adj[(size_t)bx * m + u]) nb[k++] = u;
        for (int a = 0; a < k; a++)
            for (int b = a + 1; b < k; b++)
                adj[(size_t)nb[a] * m + nb[b]] = adj[(size_t)nb[b] * m + nb[a]] = 1;
        gone[bx] = 1;
        order[step] = bx;
        *entries += bsize;
        *work += bsize * f->nc[bx];
        if (*entries > table_limit || bsize > (double)(SIZE_MAX / 16)) fits = 0;
    }
    free(adj);
    free(gone);
    free(nb);
    return fits;
}

/* Variable elimination's working memory: the factors (node and edge
 * tables, then one new table per elimination), one record per eliminated
 * variable for the back-substitution, and scratch. */
typedef struct ve_work {
    int m;                     /* variables */
    factor *F;
    int nF;
    ve_record *rec;            /* [m] */
    int *mark, *bucket, *cnt;
    size_t *fs, *base;         /* bucket factors' strides along the scope (and x), their offsets */
    double *tmp;               /* [largest config count] */
} ve_work;

static void ve_work_free(ve_work *w)
{
    if (w->F)
        for (int q = 0; q < w->nF; q++) {
            free(w->F[q].vars);
            free(w->F[q].strides);
            free(w->F[q].owned_t);
        }
    if (w->rec)
        for (int v = 0; v < w->m; v++) {
            free(w->rec[v].s);
            free(w->rec[v].strides);
            free(w->rec[v].argmin);
        }
    free(w->F);
    free(w->rec);
    free(w->mark);
    free(w->bucket);
    free(w->cnt);
    free(w->fs);
    free(w->base);
    free(w->tmp);
}

/* The working memory and the first factors: a unary factor per node
 * (its costs) and one per edge (a self loop is a unary factor on its
 * table's diagonal). 0, or -1 out of memory (ve_work_free cleans up). */
static int ve_work_init(ve_work *w, const final_graph *f)
{
    int m = f->m, maxf = 2 * m + f->ne;
    memset(w, 0, sizeof *w);
    w->m = m;
    w->F = zalloc_array((size_t)maxf, sizeof *w->F);
    w->rec = zalloc_array((size_t)m, sizeof *w->rec);
    w->mark = zalloc_array((size_t)m, sizeof(int));
    w->bucket = alloc_array((size_t)maxf, sizeof(int));
    w->cnt = zalloc_array((size_t)m, sizeof(int));
    w->fs = alloc_array((size_t)maxf * ((size_t)m + 1), sizeof(size_t));
    w->base = alloc_array((size_t)maxf, sizeof(size_t));
    int maxc = 1;
    for (int v = 0; v < m; v++)
        if (f->nc[v] > maxc) maxc = f->nc[v];
    w->tmp = alloc_array((size_t)maxc, sizeof(double));
    if (!w->F || !w->rec || !w->mark || !w->bucket || !w->cnt || !w->fs || !w->base || !w->tmp) return -1;
    for (int v = 0; v < m; v++) {
        factor *x = &w->F[w->nF++];
        x->nv = 1;
        x->vars = alloc_array(1, sizeof(int));
        x->strides = alloc_array(1, sizeof(size_t));
        if (!x->vars || !x->strides) return -1;
        x->vars[0] = v;
        x->strides[0] = 1;
        x->t = f->ncost[v];
        x->alive = 1;
    }
    for (int e = 0; e < f->ne; e++) {
        factor *x = &w->F[w->nF++];
        int a = f->ef[e], b = f->et[e];
        x->alive = 1;
        x->vars = alloc_array(2, sizeof(int));
        x->strides = alloc_array(2, sizeof(size_t));
        if (!x->vars || !x->strides) return -1;
        if (a == b) {
            x->nv = 1;
            x->vars[0] = a;
            x->strides[0] = (size_t)f->nc[a] + 1;
        } else {
            x->nv = 2;
            x->vars[0] = a;
            x->strides[0] = (size_t)f->nc[b];
            x->vars[1] = b;
            x->strides[1] = 1;
        }
        x->t = f->et_tab[e];
    }
    return 0;
}

/* Row b of w->fs: bucket factor b's stride along each variable of the new
 * scope R->s, and along x (xv) in slot m (0 where it lacks the variable);
 * each factor's offset w->base[b] starts at 0. */
static void ve_bucket_strides(ve_work *w, const ve_record *R, int nb, int xv, int m)
{
    for (int b = 0; b < nb; b++) {
        const factor *q = &w->F[w->bucket[b]];
        size_t *row = w->fs + (size_t)b * ((size_t)m + 1);
        for (int p = 0; p < R->ns; p++) {
            row[p] = 0;
            for (int a = 0; a < q->nv; a++)
                if (q->vars[a] == R->s[p]) row[p] += q->strides[a];
        }
        row[m] = 0;
        for (int a = 0; a < q->nv; a++)
            if (q->vars[a] == xv) row[m] += q->strides[a];
        w->base[b] = 0;
    }
}

/* Eliminates variable xv (the step-th): the factors that hold it (its
 * bucket) are summed and minimised over xv into one new factor over the
 * rest of their variables, recording the argmin for the back-substitution.
 * 0, or -1 out of memory. */
static int ve_eliminate(ve_work *w, const final_graph *f, int step, int xv, progress *pg, double *done)
{
    int m = w->m, cx = f->nc[xv], nb = 0;
    factor *F = w->F;
    for (int q = 0; q < w->nF; q++) {
        if (!F[q].alive) continue;
        for (int a = 0; a < F[q].nv; a++)
            if (F[q].vars[a] == xv) {
                w->bucket[nb++] = q;
                break;
            }
    }
    /* the new scope: union of the bucket's variables but x, ascending */
    for (int b = 0; b < nb; b++)
        for (int a = 0; a < F[w->bucket[b]].nv; a++) w->mark[F[w->bucket[b]].vars[a]] = 1;
    w->mark[xv] = 0;
    ve_record *R = &w->rec[step];
    R->x = xv;
    R->s = alloc_array((size_t)m, sizeof(int));
    R->strides = alloc_array((size_t)m, sizeof(size_t));
    if (!R->s || !R->strides) return -1;
    R->ns = 0;
    for (int v = 0; v < m; v++)
        if (w->mark[v]) {
            R->s[R->ns++] = v;
            w->mark[v] = 0;
        }
    int ns = R->ns;
    size_t size = 1;
    for (int p = ns - 1; p >= 0; p--) {
        R->strides[p] = size;
        size *= (size_t)f->nc[R->s[p]];
    }
    double *nt = alloc_array(size, sizeof(double));
    R->argmin = alloc_array(size, sizeof(int));
    if (!nt || !R->argmin) {
        free(nt);
        return -1;
    }
    ve_bucket_strides(w, R, nb, xv, m);
    size_t *fs = w->fs, *base = w->base;
    for (int p = 0; p < ns; p++) w->cnt[p] = 0;
    double *tmp = w->tmp;
    for (size_t idx = 0; idx < size; idx++) {
        for (int c = 0; c < cx; c++) tmp[c] = 0.0;
        for (int b = 0; b < nb; b++) {
            const double *t = F[w->bucket[b]].t + base[b];
            size_t sx = fs[(size_t)b * ((size_t)m + 1) + (size_t)m];
            for (int c = 0; c < cx; c++) tmp[c] += t[(size_t)c * sx];
        }
        double best = tmp[0];
        int arg = 0;
        for (int c = 1; c < cx; c++)
            if (tmp[c] < best) {
                best = tmp[c];
                arg = c;
            }
        nt[idx] = best;
        R->argmin[idx] = arg;
        for (int p = ns - 1; p >= 0; p--) {
            for (int b = 0; b < nb; b++) base[b] += fs[(size_t)b * ((size_t)m + 1) + (size_t)p];
            if (++w->cnt[p] < f->nc[R->s[p]]) break;
            for (int b = 0; b < nb; b++) base[b] -= fs[(size_t)b * ((size_t)m + 1) + (size_t)p] * (size_t)f->nc[R->s[p]];
            w->cnt[p] = 0;
        }
        *done += cx;
        PROGRESS(pg, *done);
    }
    for (int b = 0; b < nb; b++) {
        factor *q = &F[w->bucket[b]];
        q->alive = 0;
        free(q->owned_t);
        q->owned_t = NULL;
    }
    factor *x = &F[w->nF++];
    x->nv = ns;
    x->vars = alloc_array((size_t)ns, sizeof(int));
    x->strides = alloc_array((size_t)ns, sizeof(size_t));
    if (!x->vars || !x->strides) {
        free(nt);
        return -1;
    }
    memcpy(x->vars, R->s, (size_t)ns * sizeof(int));
    memcpy(x->strides, R->strides, (size_t)ns * sizeof(size_t));
    x->t = x->owned_t = nt;
    x->alive = 1;
    return 0;
}

/* Exact minimisation of the final graph by variable elimination in the
 * given order, then back-substitution into f->cfg (each scope was
 * eliminated later, so it is known). 1, or 0 out of memory. */
static int final_variable_elimination(final_graph *f, const int *order, progress *pg)
{
    ve_work w;
    int ok = ve_work_init(&w, f) == 0;
    double done = 0;
    for (int step = 0; ok && step < f->m; step++) ok = ve_eliminate(&w, f, step, order[step], pg, &done) == 0;
    for (int step = f->m - 1; ok && step >= 0; step--) {
        const ve_record *R = &w.rec[step];
        size_t idx = 0;
        for (int p = 0; p < R->ns; p++) idx += (size_t)f->cfg[R->s[p]] * R->strides[p];
        f->cfg[R->x] = R->argmin[idx];
    }
    ve_work_free(&w);
    return ok;
}

/* ---------- result */

void search_result_free(search_result *r)
{
    if (!r) return;
    if (r->steps)
        for (int s = 0; s < r->n_steps; s++) {
            free(r->steps[s].table);
            free(r->steps[s].argmin);
        }
    free(r->steps);
    free(r->left);
    free(r->edges_left);
    free(r->config);
    free(r->undo_node);
    free(r);
}

static int cheapest(const double *t, int n)
{
    int best = 0;
    for (int c = 1; c < n; c++)
        if (t[c] < t[best]) best = c;
    return best;
}

static search_result *fail(search_result *r, search_info *info, search_status st)
{
    search_result_free(r);
    if (info) info->status = st;
    return NULL;
}

/* Phase 2a: what the eliminations left. Records the nodes and edges left
 * in r, assigns isolated nodes their cheapest config, and builds the
 * final graph f of the rest (local node ids). 0, or -1 out of memory. */
static int final_graph_build(const cost_graph *g, const reducer *d, search_result *r, final_graph *f)
{
    int n = g->n_nodes, m0 = g->n_edges, rc = -1;
    r->left = alloc_array((size_t)n, sizeof(int));
    r->edges_left = alloc_array((size_t)m0 + (size_t)r->n_steps, sizeof(int));
    int *local = alloc_array((size_t)n, sizeof(int));
    f->node = alloc_array((size_t)n, sizeof(int));
    f->nc = alloc_array((size_t)n, sizeof(int));
    f->ncost = alloc_array((size_t)n, sizeof(double *));
    f->cfg = zalloc_array((size_t)n, sizeof(int));
    if (!r->left || !r->edges_left || !local || !f->node || !f->nc || !f->ncost || !f->cfg) goto done;
    r->final_space = 1.0;
    for (int v = 0; v < n; v++) {
        local[v] = -1;
        if (!d->nalive[v]) continue;
        r->left[r->n_left++] = v;
        r->final_space *= g->n_configs[v];
        if (d->in_cnt[v] + d->out_cnt[v] == 0) {
            r->config[v] = cheapest(g->node_cost[v], g->n_configs[v]);
        } else {
            local[v] = f->m;
            f->node[f->m] = v;
            f->nc[f->m] = g->n_configs[v];
            f->ncost[f->m] = g->node_cost[v];
            f->m++;
        }
    }
    for (int e = 0; e < m0 + r->n_steps; e++)
        if (d->ealive[e]) r->edges_left[r->n_edges_left++] = e;
    f->ne = r->n_edges_left;
    f->ef = alloc_array((size_t)f->ne, sizeof(int));
    f->et = alloc_array((size_t)f->ne, sizeof(int));
    f->et_tab = alloc_array((size_t)f->ne, sizeof(double *));
    if (!f->ef || !f->et || !f->et_tab) goto done;
    for (int a = 0; a < f->ne; a++) {
        int e = r->edges_left[a];
        f->ef[a] = local[d->from[e]];
        f->et[a] = local[d->to[e]];
        f->et_tab[a] = d->tab[e];
    }
    rc = 0;
done:
    free(local);
    return rc;
}

/* Phase 2b: Algorithm 1's final step on f, by enumeration where the space
 * allows, else by exact variable elimination; the configs go into r. */
static search_status final_solve(final_graph *f, search_result *r, const search_options *opt,
                                 search_progress_fn progress_fn, void *user, search_info *info)
{
    double space = 1.0;
    for (int a = 0; a < f->m; a++) space *= f->nc[a];
    progress pg;
    if (f->m == 0) {
        r->method = FINAL_ENUMERATION;
    } else if (space <= opt->enumeration_limit) {
        r->method = FINAL_ENUMERATION;
        progress_start(&pg, progress_fn, user, space, opt->progress_min_work);
        if (!final_enumerate(f, &pg)) return SEARCH_OUT_OF_MEMORY;
        progress_end(&pg);
    } else {
        r->method = FINAL_VARIABLE_ELIMINATION;
        if (f->m > SEARCH_MAX_VE_NODES) return SEARCH_TOO_LARGE;
        int *order = alloc_array((size_t)f->m, sizeof(int));
        double entries = 0, work = 0;
        int fits = order ? ve_plan(f, opt->table_limit, order, &entries, &work) : -1;
        if (info) info->ve_entries = entries;
        if (fits <= 0) {
            free(order);
            return fits == 0 ? SEARCH_TOO_LARGE : SEARCH_OUT_OF_MEMORY;
        }
        progress_start(&pg, progress_fn, user, work, opt->progress_min_work);
        int ok = final_variable_elimination(f, order, &pg);
        free(order);
        if (!ok) return SEARCH_OUT_OF_MEMORY;
        progress_end(&pg);
    }
    for (int a = 0; a < f->m; a++) r->config[f->node[a]] = f->cfg[a];
    return SEARCH_OK;
}

/* Phase 3: the undo, last elimination first: each eliminated node takes
 * its best config given its neighbours'. 0, or -1 out of memory. */
static int undo_eliminations(const cost_graph *g, search_result *r)
{
    r->undo_node = alloc_array((size_t)r->n_steps, sizeof(int));
    if (!r->undo_node) return -1;
    for (int s = r->n_steps - 1; s >= 0; s--) {
        const elim_step *st = &r->steps[s];
        if (st->kind == ELIM_EDGE) continue;
        if (st->kind == ELIM_FOLD) {
            r->config[st->node] = st->argmin[r->config[st->into]];
            r->undo_node[r->n_undo++] = st->node;
            continue;
        }
        int ck = g->n_configs[st->to];
        r->config[st->node] = st->argmin[(size_t)r->config[st->from] * (size_t)ck + (size_t)r->config[st->to]];
        r->undo_node[r->n_undo++] = st->node;
    }
    return 0;
}

search_result *search_run_with(const cost_graph *g, const search_options *opt,
                               search_progress_fn progress_fn, void *user, search_info *info)
{
    search_options defaults;
    if (!opt) {
        search_options_init(&defaults);
        opt = &defaults;
    }
    if (info) {
        memset(info, 0, sizeof *info);
        info->status = SEARCH_OK;
    }
    if (!graph_valid(g)) return fail(NULL, info, SEARCH_INVALID_GRAPH);

    int n = g->n_nodes, m0 = g->n_edges;
    search_result *r = calloc(1, sizeof *r);
    if (!r) return fail(NULL, info, SEARCH_OUT_OF_MEMORY);
    r->n_nodes = n;
    r->n_edges_original = m0;
    r->fold = opt->fold != 0;
    r->tables_kept = opt->keep_tables != 0;
    r->steps = zalloc_array((size_t)m0, sizeof *r->steps);
    r->config = zalloc_array((size_t)n, sizeof(int));
    if (!r->steps || !r->config) return fail(r, info, SEARCH_OUT_OF_MEMORY);

    /* phase 1: the eliminations; then what is left, solved; then the undo */
    reducer d;
    final_graph f;
    memset(&f, 0, sizeof f);
    search_status st = SEARCH_OK;
    int red = reducer_init(&d, g, r) ? reduce(&d, opt->fold, opt->cancel) : 0;
    if (red <= 0) {
        st = red < 0 ? SEARCH_CANCELLED : SEARCH_OUT_OF_MEMORY;
    } else if (final_graph_build(g, &d, r, &f) != 0) {
        st = SEARCH_OUT_OF_MEMORY;
    } else {
        if (info) {
            info->n_left = r->n_left;
            info->final_space = r->final_space;
        }
        if (opt->cancel && atomic_load(opt->cancel)) st = SEARCH_CANCELLED;
        else st = final_solve(&f, r, opt, progress_fn, user, info);
        if (st == SEARCH_OK && undo_eliminations(g, r) != 0) st = SEARCH_OUT_OF_MEMORY;
    }
    final_graph_free(&f);
    reducer_free(&d);
    if (st != SEARCH_OK) return fail(r, info, st);
    r->cost = cg_evaluate(g, r->config);
    return r;
}

search_result *search_run(const cost_graph *g, search_progress_fn progress_fn, void *user)
{
    return search_run_with(g, NULL, progress_fn, user, NULL);
}

int search_keep_tables(const cost_graph *g, search_result *r, search_info *info)
{
    if (r->tables_kept) return 0;
    search_options o;
    search_options_init(&o);
    o.fold = r->fold;
    search_result *k = search_run_with(g, &o, NULL, NULL, info);
    if (!k) return -1;
    if (k->n_steps != r->n_steps) { /* cannot happen: the same graph and options take the same steps */
        search_result_free(k);
        if (info) info->status = SEARCH_INVALID_GRAPH;
        return -1;
    }
    for (int s = 0; s < r->n_steps; s++)
        if (!r->steps[s].table) {
            r->steps[s].table = k->steps[s].table;
            k->steps[s].table = NULL;
        }
    r->tables_kept = 1;
    search_result_free(k);
    return 0;
}

search_result *search_optimum(const cost_graph *g)
{
    search_options o;
    search_options_init(&o);
    o.keep_tables = 0;
    return search_run_with(g, &o, NULL, NULL, NULL);
}

/* ---------- min-marginals: "why not this config?" for every node at once */

void search_edge_ends(const cost_graph *g, const search_result *r, int e, int *from, int *to, const double **tab)
{
    const double *t;
    if (e < g->n_edges) {
        *from = g->edge_from[e];
        *to = g->edge_to[e];
        t = g->edge_cost[e];
    } else {
        const elim_step *st = &r->steps[e - g->n_edges];
        *from = st->from;
        *to = st->to;
        t = st->table;
    }
    if (tab) *tab = t;
}

static double *new_filled(size_t n, double v)
{
    double *t = alloc_array(n ? n : 1, sizeof(double));
    if (t)
        for (size_t i = 0; i < n; i++) t[i] = v;
    return t;
}

/* The final graph's pairwise min-marginals by enumeration: for every edge
 * left, the least total per (config of its tail, config of its head), and
 * for every node left, the least total per config. 0, or -1 out of memory. */
static int final_marginals(const cost_graph *g, const search_result *r, double **M, double **marg)
{
    int n = g->n_nodes, rc = -1;
    int *local = alloc_array((size_t)n + 1, sizeof(int));
    int *node = alloc_array((size_t)n + 1, sizeof(int));
    int *cfg = zalloc_array((size_t)n + 1, sizeof(int));
    int ne = r->n_edges_left;
    int *ef = alloc_array((size_t)ne + 1, sizeof(int)), *et = alloc_array((size_t)ne + 1, sizeof(int));
    const double **tab = alloc_array((size_t)ne + 1, sizeof(double *));
    if (!local || !node || !cfg || !ef || !et || !tab) goto oom;
    for (int v = 0; v < n; v++) local[v] = -1;
    int m = 0;
    double iso = 0;
    for (int a = 0; a < ne; a++) {
        int e = r->edges_left[a], f, t;
        search_edge_ends(g, r, e, &f, &t, &tab[a]);
        for (int k = 0; k < 2; k++) {
            int v = k ? t : f;
            if (local[v] < 0) {
                local[v] = m;
                node[m++] = v;
            }
        }
        ef[a] = local[f];
        et[a] = local[t];
        M[e] = new_filled((size_t)g->n_configs[f] * (size_t)g->n_configs[t], INFINITY);
        if (!M[e]) goto oom;
    }
    /* nodes left without an edge are independent: their cheapest config is
     * in every optimum, and any other costs its difference */
    for (int i = 0; i < r->n_left; i++) {
        int v = r->left[i];
        if (local[v] >= 0) continue;
        double best = g->node_cost[v][cheapest(g->node_cost[v], g->n_configs[v])];
        iso += best;
        for (int k = 0; k < g->n_configs[v]; k++) marg[v][k] = r->cost - best + g->node_cost[v][k];
    }
    for (int u = 0; u < m; u++)
        for (int k = 0; k < g->n_configs[node[u]]; k++) marg[node[u]][k] = INFINITY;
    if (m > 0)
        for (;;) {
            double c = iso;
            for (int u = 0; u < m; u++) c += g->node_cost[node[u]][cfg[u]];
            for (int a = 0; a < ne; a++) c += tab[a][(size_t)cfg[ef[a]] * g->n_configs[node[et[a]]] + cfg[et[a]]];
            for (int a = 0; a < ne; a++) {
                double *x = &M[r->edges_left[a]][(size_t)cfg[ef[a]] * g->n_configs[node[et[a]]] + cfg[et[a]]];
                if (c < *x) *x = c;
            }
            for (int u = 0; u < m; u++)
                if (c < marg[node[u]][cfg[u]]) marg[node[u]][cfg[u]] = c;
            int u = m - 1;
            while (u >= 0 && ++cfg[u] == g->n_configs[node[u]]) cfg[u--] = 0;
            if (u < 0) break;
        }
    rc = 0;
oom:
    free(local);
    free(node);
    free(cfg);
    free(ef);
    free(et);
    free(tab);
    return rc;
}

/* A fold undone: e2's pair minima are the new edge's (it only moved j's
 * best, a cost of u alone, onto it), so M[e2] takes M[new] over. With u at
 * cu, the rest of the graph's least total is R(cu) = min over u's partner
 * of M[new] minus h(cu); fixing j at cj adds node_cost[cj] + t1(cu, cj).
 * 0, or -1 out of memory. */
static int fold_marginals(const cost_graph *g, const search_result *r, const elim_step *st, double **M,
                          double **marg)
{
    int j = st->node, u = st->into, cu_n = g->n_configs[u], cj_n = g->n_configs[j];
    int ci_n = g->n_configs[st->from], ck_n = g->n_configs[st->to], f1, t1_to;
    const double *t1;
    search_edge_ends(g, r, st->e1, &f1, &t1_to, &t1);
    int u_is_from = f1 == u, rows = st->from == u;
    double *M1 = alloc_array((size_t)cu_n * (size_t)cj_n, sizeof(double));
    if (!M1) return -1;
    const double *Mn = M[st->new_edge];
    for (int c = 0; c < cj_n; c++) marg[j][c] = INFINITY;
    for (int cu = 0; cu < cu_n; cu++) {
        double rest = INFINITY;
        int n_other = rows ? ck_n : ci_n;
        for (int b = 0; b < n_other; b++) {
            double v = rows ? Mn[(size_t)cu * (size_t)ck_n + (size_t)b] : Mn[(size_t)b * (size_t)ck_n + (size_t)cu];
            rest = v < rest ? v : rest;
        }
        int a = st->argmin[cu];
        double h = g->node_cost[j][a] + t1[fold_at(u_is_from, cu, a, cu_n, cj_n)]; /* as fold_min summed it */
        rest = isfinite(rest) && isfinite(h) ? rest - h : INFINITY;
        for (int cj = 0; cj < cj_n; cj++) {
            size_t x = fold_at(u_is_from, cu, cj, cu_n, cj_n);
            double v = rest + g->node_cost[j][cj] + t1[x];
            M1[x] = v;
            if (v < marg[j][cj]) marg[j][cj] = v;
        }
    }
    M[st->e1] = M1;
    M[st->e2] = M[st->new_edge];
    M[st->new_edge] = NULL;
    return 0;
}

int search_min_marginals(const cost_graph *g, const search_result *r, double **marg)
{
    if (!g || !r || r->n_nodes != g->n_nodes || r->n_edges_original != g->n_edges) return -1;
    if (r->method != FINAL_ENUMERATION || !r->tables_kept) return -1;
    int m0 = g->n_edges, total = m0 + r->n_steps;
    double **M = zalloc_array((size_t)total + 1, sizeof(double *));
    if (!M) return -2;
    int rc = final_marginals(g, r, M, marg) == 0 ? 0 : -2;
    /* undo the eliminations, last first: each step turns the min-marginals
     * of the edge it made into those of the edges it took, and of the node
     * it removed. Replacing the new edge's entry T'(ci,ck) by the sum it
     * minimised, t(cj) + t1(ci,cj) + t2(cj,ck), gives the least total with
     * all three configs fixed. */
    for (int s = r->n_steps - 1; s >= 0 && rc == 0; s--) {
        const elim_step *st = &r->steps[s];
        double *Mn = M[st->new_edge];
        int ci_n = g->n_configs[st->from], ck_n = g->n_configs[st->to];
        if (!Mn) { /* cannot happen: every new edge is left or taken by a later step */
            rc = -1;
            break;
        }
        if (st->kind == ELIM_EDGE) {
            size_t sz = sizeof(double) * (size_t)ci_n * (size_t)ck_n;
            M[st->e1] = alloc_array(1, sz);
            M[st->e2] = alloc_array(1, sz);
            if (!M[st->e1] || !M[st->e2]) {
                rc = -2;
                break;
            }
            memcpy(M[st->e1], Mn, sz);
            memcpy(M[st->e2], Mn, sz);
        } else if (st->kind == ELIM_FOLD) {
            if (fold_marginals(g, r, st, M, marg) != 0) {
                rc = -2;
                break;
            }
            continue; /* Mn became M[e2] */
        } else {
            int j = st->node, cj_n = g->n_configs[j], f, t;
            const double *t1, *t2, *tn = st->table;
            search_edge_ends(g, r, st->e1, &f, &t, &t1);
            search_edge_ends(g, r, st->e2, &f, &t, &t2);
            double *M1 = new_filled((size_t)ci_n * (size_t)cj_n, INFINITY);
            double *M2 = new_filled((size_t)cj_n * (size_t)ck_n, INFINITY);
            if (!M1 || !M2) {
                free(M1);
                free(M2);
                rc = -2;
                break;
            }
            double *rest = alloc_array((size_t)ck_n, sizeof(double));
            if (!rest) {
                free(M1);
                free(M2);
                rc = -2;
                break;
            }
            M[st->e1] = M1;
            M[st->e2] = M2;
            for (int c = 0; c < cj_n; c++) marg[j][c] = INFINITY;
            for (int a = 0; a < ci_n; a++) {
                /* the rest of the graph's least total through (a, k), without the new edge's entry */
                for (int k = 0; k < ck_n; k++) {
                    double mn = Mn[(size_t)a * ck_n + k], tab = tn[(size_t)a * ck_n + k];
                    rest[k] = isfinite(mn) && isfinite(tab) ? mn - tab : INFINITY;
                }
                for (int c = 0; c < cj_n; c++) {
                    const double base = g->node_cost[j][c] + t1[(size_t)a * cj_n + c];
                    const double *t2r = t2 + (size_t)c * ck_n;
                    double *m2r = M2 + (size_t)c * ck_n, best = INFINITY;
                    for (int k = 0; k < ck_n; k++) {
                        double v = rest[k] + base + t2r[k];
                        best = v < best ? v : best;
                        m2r[k] = v < m2r[k] ? v : m2r[k];
                    }
                    if (best < M1[(size_t)a * cj_n + c]) M1[(size_t)a * cj_n + c] = best;
                    if (best < marg[j][c]) marg[j][c] = best;
                }
            }
            free(rest);
        }
        free(Mn);
        M[st->new_edge] = NULL;
    }
    for (int e = 0; e < total; e++) free(M[e]);
    free(M);
    return rc;
}

/* ---------- the stepper's view */

void search_state_at(const search_result *r, int k, unsigned char *alive_nodes,
                     unsigned char *alive_edges)
{
    if (k < 0) k = 0;
    if (k > r->n_steps) k = r->n_steps;
    if (r->n_nodes > 0) memset(alive_nodes, 1, (size_t)r->n_nodes);
    if (r->n_edges_original > 0) memset(alive_edges, 1, (size_t)r->n_edges_original);
    if (r->n_steps > 0) memset(alive_edges + r->n_edges_original, 0, (size_t)r->n_steps);
    for (int s = 0; s < k; s++) {
        const elim_step *st = &r->steps[s];
        if (st->kind != ELIM_EDGE) alive_nodes[st->node] = 0;
        alive_edges[st->e1] = 0;
        alive_edges[st->e2] = 0;
        alive_edges[st->new_edge] = 1;
    }
}

/* ---------- brute force, for tests */

double search_brute_force(const cost_graph *g, int *best, double max_space)
{
    int n = g->n_nodes;
    double space = 1.0;
    for (int v = 0; v < n; v++) space *= g->n_configs[v];
    if (space > max_space) return -1;
    int *cfg = zalloc_array((size_t)n, sizeof(int));
    if (!cfg) return -1;
    double min = INFINITY;
    for (;;) {
        double c = cg_evaluate(g, cfg);
        if (c < min) {
            min = c;
            if (best) memcpy(best, cfg, (size_t)n * sizeof(int));
        }
        int v = n - 1;
        while (v >= 0 && ++cfg[v] == g->n_configs[v]) cfg[v--] = 0;
        if (v < 0) break;
    }
    free(cfg);
    return min;
}
