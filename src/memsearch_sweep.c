/*
 * memsearch_sweep: the search under a memory limit as a sweep over the
 * nodes in their order, exact, for graphs that keep few nodes open at a
 * time (memsearch_internal.h).
 *
 * Why: on a chain of identical blocks (a transformer) the Lagrangian bound
 * of memsearch.c gives every block the same config, while the optimum under
 * the limit mixes them (some blocks lean on memory, the others fast); its
 * branching on one node at a time cannot close that gap across 48 blocks
 * that are each other's mirror images. A sweep that keeps, per state of the
 * open nodes, every (time, bytes) pair that no other beats on both (a
 * Pareto set of labels, as in resource-constrained shortest paths) counts
 * each mix once, whatever block holds which config.
 *
 * Method. Nodes are taken in index order; after node i the open nodes are
 * those before it with an edge to a later node, and a state is one config
 * per open node. Memory is a vector over GPUs; the sweep keeps bytes of a
 * set S of GPUs in its labels (first the GPU the unconstrained optimum
 * overflows most), which relaxes the limit to S's GPUs: its optimum is a
 * lower bound, and the answer when it fits every GPU; where it overflows
 * another, that GPU joins S and the sweep runs again. Labels are pruned
 *  - by bytes: a label's bytes plus the least any completion adds (a
 *    backward sweep per GPU of S) over a GPU's limit cannot fit;
 *  - by time: the Lagrangian bound t + lam.(m - limit) + h_lam(state),
 *    h_lam the exact least relaxed cost of the rest (a backward sweep),
 *    over a cut: no completion of it costs cut or less. The multiplier is
 *    the best of a one-dimensional cutting-plane ascent on the first GPU
 *    of S. The cut starts just above that bound and rises (to the cost of
 *    the best assignment found that fits S, which the next pass must then
 *    find or beat) until a pass finds an assignment within it.
 *  - by dominance: within a state, a label no faster and no leaner than
 *    another on every GPU of S (across carried configs of a long edge's
 *    early end, allowing for what the edge may still cost: below).
 * So an answer is proven when it fits every GPU: no pruned label led to a
 * cheaper one.
 */
#include "memsearch_internal.h"

#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SW_MAX_OPEN = 8 };
#define SW_MAX_WORK 3e8        /* transitions (state x config) of one sweep (Llama-2-7B stages of 32 GPUs: 6e7) */
#define SW_MAX_CANDIDATES 4e6  /* labels made at one node before dominance */
#define SW_MAX_LABELS 6e6      /* labels kept over the whole pass */
#define SW_DOMINANCE_SCAN 512  /* kept labels a candidate is compared with where S has several GPUs */

typedef struct sw_step {
    int v, nc;                      /* the node taken, its configs */
    int n_old;                      /* nodes open before it */
    int old_node[SW_MAX_OPEN];
    int old_radix[SW_MAX_OPEN];
    long old_stride[SW_MAX_OPEN];
    long keep_stride[SW_MAX_OPEN];  /* its stride in the state after; -1 where it closes here */
    long v_stride;                  /* v's stride in the state after; 0 where v closes at once */
    long n_old_states;
    long key_stride[SW_MAX_OPEN];   /* the open node's stride in the edge key; 0 where no edge joins it to v */
    long n_keys;                    /* edge keys: the configs of the open nodes v has an edge with */
    int n_inc;                      /* edges between v and the open nodes (or v itself) */
    int *inc_pos;                   /* the other end's position among the open; -1: an edge v -> v */
    const double **inc_tab;
    unsigned char *inc_v_to;        /* 1: v is the consumer */
} sw_step;

typedef struct sw_stop {          /* when the sweep stops unsettled (sw_out_of_time) */
    double deadline;                /* lw_now() value; 0: none */
    long max_labels, labels;        /* > 0: once labels (kept over all passes) passes it */
    const atomic_int *cancel;
    int stopped, cancelled;
} sw_stop;

typedef struct sw {
    const cost_graph *g;
    const mem_table *t;
    const double *limit;
    int N, G;
    sw_step *st;                    /* [N] */
    long *loff;                     /* [N + 2] first entry of level i (the states before step i) in a table */
    long total;                     /* entries of a table over every level */
    long *coff;                     /* [N + 1] first cell of node v */
    double *cellc;                  /* [cells] scratch: a sweep's cost per node and config */
    double *ec;                     /* [max configs] scratch */
    double *ectab;                  /* [max n_keys * configs] scratch: a step's config costs per edge key */
    double *rmin;                   /* [max n_keys] scratch: the least of each */
    int carry;                      /* the node whose long edges labels carry (its config in each label); -1 none */
    int n_long, *long_e, long_end;  /* the long edges (g's indices); the last later end */
    unsigned char *is_long;         /* [n_edges] */
    double **long_min;              /* [n_long][configs of the later end] the least over the carried node's configs */
    double *delta;                  /* [nc(carry)^2] (a, b): the most the long edges can cost a over b */
    unsigned char **long_ok;        /* [n_long][configs of the later end] may be in an assignment within the cut */
    double *corr;                   /* [nc(carry)] the least the long edges add over long_min (one far end) */
    double *long_lb;                /* [cells] at a long edge's far end, each config's bound; valid if long_lb_ok */
    int long_lb_ok;
    sw_stop stop;
    long sweeps;
} sw;

static double tol_of(double x) { return 1e-9 * (fabs(x) > 1 ? fabs(x) : 1); }

static int sw_out_of_time(sw *w)
{
    sw_stop *s = &w->stop;
    if (s->cancel && atomic_load(s->cancel)) return s->stopped = s->cancelled = 1;
    if (s->deadline > 0 && lw_now() >= s->deadline) return s->stopped = 1;
    if (s->max_labels > 0 && s->labels > s->max_labels) return s->stopped = 1;
    return s->stopped;
}

static double cell_bytes(const mem_table *t, int v, int k, int gpu)
{
    return gpu < t->tasks[v][k] ? mt_at(t, v, k)[gpu] : 0;
}

/* Each step's edges to the open nodes (every edge's earlier end is open
 * when its later end is taken). */
static void sw_edges(sw *w)
{
    const cost_graph *g = w->g;
    int *cnt = lw_calloc((size_t)w->N + 1, sizeof(int));
    for (int e = 0; e < g->n_edges; e++) {
        int a = g->edge_from[e], b = g->edge_to[e];
        if (!w->is_long || !w->is_long[e]) cnt[a > b ? a : b]++;
    }
    for (int v = 0; v < w->N; v++) {
        sw_step *s = &w->st[v];
        s->inc_pos = lw_malloc(sizeof(int) * (size_t)(cnt[v] + 1));
        s->inc_tab = lw_malloc(sizeof(double *) * (size_t)(cnt[v] + 1));
        s->inc_v_to = lw_malloc((size_t)cnt[v] + 1);
    }
    for (int e = 0; e < g->n_edges; e++) {
        if (w->is_long && w->is_long[e]) continue;
        int a = g->edge_from[e], b = g->edge_to[e], hi = a > b ? a : b, lo = a > b ? b : a;
        sw_step *s = &w->st[hi];
        int p = -1;
        for (int j = 0; j < s->n_old && a != b; j++)
            if (s->old_node[j] == lo) p = j;
        s->inc_pos[s->n_inc] = p;
        s->inc_tab[s->n_inc] = g->edge_cost[e];
        s->inc_v_to[s->n_inc] = (unsigned char)(b == hi);
        s->n_inc++;
    }
    free(cnt);
    for (int v = 0; v < w->N; v++) {
        sw_step *s = &w->st[v];
        s->n_keys = 1;
        for (int j = 0; j < s->n_old; j++) {
            int joined = 0;
            for (int e = 0; e < s->n_inc && !joined; e++) joined = s->inc_pos[e] == j;
            s->key_stride[j] = joined ? s->n_keys : 0;
            if (joined) s->n_keys *= s->old_radix[j];
        }
    }
}

/* ---- long edges ----
 * A node whose edges reach much further than any other's (GPT's token
 * embedding, tied to the LM head at the graph's end) would stay open in
 * every state from it to that far end: the states, and the labels, would
 * multiply by its configs. Instead its edges that reach more than twice as
 * far as any other node's are "long": the node closes at its last short
 * edge, each label carries the node's config, and a long edge is priced per
 * label where its later end is taken. The backward sweeps price it at its
 * least over the carried node's configs (so h stays a lower bound), and
 * dominance between labels of different carried configs a, b allows for the
 * most the long edges can cost a more than b (delta), which keeps it exact:
 * a label (a, t', m') beats (b, t, m) when t' + delta(a, b) <= t, m' <= m. */

/* Long edge e's cost with the carried node at config cc, its other end at k. */
static double long_cost(const sw *w, int e, int cc, int k)
{
    const cost_graph *g = w->g;
    if (g->edge_from[e] == w->carry) return g->edge_cost[e][(long)cc * g->n_configs[g->edge_to[e]] + k];
    return g->edge_cost[e][(long)k * g->n_configs[w->carry] + cc];
}

static int long_other(const sw *w, int e)
{
    return w->g->edge_from[e] == w->carry ? w->g->edge_to[e] : w->g->edge_from[e];
}

/* delta and corr from the far ends' configs that long_ok allows. */
static void long_delta(sw *w)
{
    const cost_graph *g = w->g;
    int nc = g->n_configs[w->carry], one_end = 1;
    memset(w->delta, 0, sizeof(double) * (size_t)nc * (size_t)nc);
    memset(w->corr, 0, sizeof(double) * (size_t)nc);
    for (int i = 1; i < w->n_long; i++) one_end &= long_other(w, w->long_e[i]) == long_other(w, w->long_e[0]);
    for (int i = 0; i < w->n_long; i++) {
        int e = w->long_e[i], nk = g->n_configs[long_other(w, e)], n_ok = 0;
        int *ks = lw_malloc(sizeof(int) * (size_t)nk); /* the configs allowed: the loops below are nc^2 times these */
        for (int k = 0; k < nk; k++)
            if (w->long_ok[i][k]) ks[n_ok++] = k;
        for (int a = 0; a < nc; a++) {
            double least = HUGE_VAL;
            for (int j = 0; j < n_ok; j++)
                if (long_cost(w, e, a, ks[j]) - w->long_min[i][ks[j]] < least)
                    least = long_cost(w, e, a, ks[j]) - w->long_min[i][ks[j]];
            if (one_end) w->corr[a] += least;
            for (int b = 0; b < nc; b++) {
                double most = -HUGE_VAL;
                for (int j = 0; j < n_ok && most < HUGE_VAL; j++) {
                    int k = ks[j];
                    double cb = long_cost(w, e, b, k), ca = long_cost(w, e, a, k);
                    if (!isfinite(cb)) continue; /* b cannot take k: nothing to allow for */
                    double x = isfinite(ca) ? ca - cb : HUGE_VAL;
                    if (x > most) most = x;
                }
                if (w->n_long > 1 && most < 0) most = 0; /* an edge already priced may not lower the rest's */
                w->delta[a * nc + b] += most;
            }
        }
        free(ks);
    }
}

/* long_min, and delta and corr over every config of the far ends. */
static void long_tables(sw *w)
{
    const cost_graph *g = w->g;
    int nc = g->n_configs[w->carry];
    w->long_min = lw_malloc(sizeof(double *) * (size_t)w->n_long);
    w->long_ok = lw_malloc(sizeof(unsigned char *) * (size_t)w->n_long);
    w->delta = lw_malloc(sizeof(double) * (size_t)nc * (size_t)nc);
    w->corr = lw_malloc(sizeof(double) * (size_t)nc);
    for (int i = 0; i < w->n_long; i++) {
        int e = w->long_e[i], nk = g->n_configs[long_other(w, e)];
        double *mn = w->long_min[i] = lw_malloc(sizeof(double) * (size_t)nk);
        w->long_ok[i] = lw_malloc((size_t)nk);
        memset(w->long_ok[i], 1, (size_t)nk);
        for (int k = 0; k < nk; k++) {
            mn[k] = HUGE_VAL;
            for (int c = 0; c < nc; c++)
                if (long_cost(w, e, c, k) < mn[k]) mn[k] = long_cost(w, e, c, k);
        }
    }
    long_delta(w);
}

/* The long edges of g (w->carry -1 where there are none); last[] (each
 * node's last neighbour after it) lowered for the carried node to its last
 * short edge. */
static void sw_long_edges(sw *w, int *last)
{
    const cost_graph *g = w->g;
    int N = w->N, c = 0, span2 = 0, short_last, n_long = 0;
    w->carry = -1;
    for (int v = 1; v < N; v++)
        if (last[v] - v > last[c] - c) c = v;
    for (int v = 0; v < N; v++)
        if (v != c && last[v] - v > span2) span2 = last[v] - v;
    if (span2 < 1) return;
    short_last = c;
    for (int e = 0; e < g->n_edges; e++) {
        int a = g->edge_from[e], b = g->edge_to[e], o = a == c ? b : a;
        if ((a != c && b != c) || a == b || o < c) continue;
        if (o > c + 2 * span2) n_long++;
        else if (o > short_last) short_last = o;
    }
    if (!n_long) return;
    w->carry = c, w->n_long = 0, w->long_end = c;
    w->is_long = lw_calloc((size_t)g->n_edges, 1);
    w->long_e = lw_malloc(sizeof(int) * (size_t)n_long);
    for (int e = 0; e < g->n_edges; e++) {
        int a = g->edge_from[e], b = g->edge_to[e], o = a == c ? b : a;
        if ((a != c && b != c) || a == b || o <= c + 2 * span2) continue;
        w->is_long[e] = 1;
        w->long_e[w->n_long++] = e;
        if (o > w->long_end) w->long_end = o;
    }
    last[c] = short_last;
    long_tables(w);
}

/* The long edges' extra over their least (long_min) for step v's config k
 * and a label carrying cc; +inf where k may not follow cc. */
static double long_extra(const sw *w, int v, int cc, int k)
{
    double x = 0;
    for (int i = 0; i < w->n_long; i++)
        if (long_other(w, w->long_e[i]) == v) x += long_cost(w, w->long_e[i], cc, k) - w->long_min[i][k];
    return x;
}

static void sw_free(sw *w)
{
    for (int i = 0; w->long_min && i < w->n_long; i++) free(w->long_min[i]), free(w->long_ok[i]);
    free(w->long_min);
    free(w->long_ok);
    free(w->corr);
    free(w->long_lb);
    free(w->long_e);
    free(w->is_long);
    free(w->delta);
    if (w->st)
        for (int v = 0; v < w->N; v++) {
            free(w->st[v].inc_pos);
            free(w->st[v].inc_tab);
            free(w->st[v].inc_v_to);
        }
    free(w->st);
    free(w->loff);
    free(w->coff);
    free(w->cellc);
    free(w->ec);
    free(w->ectab);
    free(w->rmin);
}

/* The steps of g in node order. 0 where more than SW_MAX_OPEN nodes are
 * open at once or a sweep would make more than SW_MAX_WORK transitions
 * (then w is freed by the caller all the same). */
static int sw_init(sw *w, const cost_graph *g, const mem_table *t, const double *limit)
{
    memset(w, 0, sizeof *w);
    w->carry = -1;
    w->g = g, w->t = t, w->limit = limit, w->N = g->n_nodes, w->G = t->n_gpus;
    int N = w->N;
    if (N < 1) return 0;
    int *last = lw_malloc(sizeof(int) * (size_t)N);
    for (int v = 0; v < N; v++) last[v] = v;
    for (int e = 0; e < g->n_edges; e++) {
        int a = g->edge_from[e], b = g->edge_to[e], lo = a < b ? a : b, hi = a < b ? b : a;
        if (last[lo] < hi) last[lo] = hi;
    }
    sw_long_edges(w, last);
    w->st = lw_calloc((size_t)N, sizeof(sw_step));
    w->loff = lw_malloc(sizeof(long) * (size_t)(N + 2));
    w->coff = lw_malloc(sizeof(long) * (size_t)(N + 1));
    int open[SW_MAX_OPEN + 1], n_open = 0, ok = 1, maxc = 1;
    double work = 0;
    long cells = 0;
    for (int v = 0; v < N && ok; v++) {
        sw_step *s = &w->st[v];
        s->v = v, s->nc = g->n_configs[v], s->n_old = n_open;
        if (s->nc > maxc) maxc = s->nc;
        w->coff[v] = cells;
        cells += s->nc;
        long stride = 1;
        for (int j = 0; j < n_open; j++) {
            s->old_node[j] = open[j], s->old_radix[j] = g->n_configs[open[j]], s->old_stride[j] = stride;
            stride *= s->old_radix[j];
        }
        s->n_old_states = stride;
        w->loff[v] = w->total;
        w->total += stride;
        work += (double)stride * s->nc;
        /* v first: its configs are the innermost index of the state after */
        int n2 = 0, next[SW_MAX_OPEN + 2];
        double ns = 1;
        s->v_stride = 0;
        if (last[v] > v) {
            s->v_stride = 1;
            ns = s->nc;
            next[n2++] = v;
        }
        for (int j = 0; j < n_open; j++) {
            s->keep_stride[j] = -1;
            if (last[open[j]] <= v) continue;
            s->keep_stride[j] = (long)ns;
            ns *= s->old_radix[j];
            next[n2++] = open[j];
        }
        for (int j = 0; j < n2 && j <= SW_MAX_OPEN; j++) open[j] = next[j];
        n_open = n2;
        ok = n_open <= SW_MAX_OPEN && work <= SW_MAX_WORK && ns <= 1e7;
    }
    free(last);
    if (!ok) return 0;
    w->loff[N] = w->total;
    w->total += 1; /* after the last node nothing is open: one state */
    w->loff[N + 1] = w->total;
    w->coff[N] = cells;
    w->cellc = lw_malloc(sizeof(double) * (size_t)(cells + 1));
    w->ec = lw_malloc(sizeof(double) * (size_t)maxc);
    sw_edges(w);
    long most = 1, most_rows = 1;
    for (int v = 0; v < N; v++) {
        if (w->st[v].n_keys * w->st[v].nc > most) most = w->st[v].n_keys * w->st[v].nc;
        if (w->st[v].n_keys > most_rows) most_rows = w->st[v].n_keys;
    }
    w->ectab = lw_malloc(sizeof(double) * (size_t)most);
    w->rmin = lw_malloc(sizeof(double) * (size_t)most_rows);
    return 1;
}

/* Each config's cost for v of step st (cellc and, with edges, its edges to
 * the open nodes, whose configs are d) into ec, +inf where it may not be
 * taken. */
static void ec_row(const sw *w, const sw_step *st, const int *d, int edges, double *ec)
{
    int nc = st->nc;
    memcpy(ec, w->cellc + w->coff[st->v], sizeof(double) * (size_t)nc);
    for (int e = 0; edges && e < st->n_inc; e++) {
        const double *tab = st->inc_tab[e];
        int p = st->inc_pos[e];
        if (p < 0) {
            for (int k = 0; k < nc; k++) ec[k] += tab[(long)k * nc + k];
        } else if (st->inc_v_to[e]) {
            const double *row = tab + (long)d[p] * nc;
            for (int k = 0; k < nc; k++) ec[k] += row[k];
        } else {
            int nu = st->old_radix[p];
            for (int k = 0; k < nc; k++) ec[k] += tab[(long)k * nu + d[p]];
        }
    }
    for (int i = 0; edges && i < w->n_long; i++)
        if (long_other(w, w->long_e[i]) == st->v)
            for (int k = 0; k < nc; k++) ec[k] += w->long_min[i][k];
}

/* For state s before step st: ec_row into w->ec; returns the state after
 * it, less k * v_stride. */
static long sw_expand(const sw *w, const sw_step *st, long s, int edges)
{
    int d[SW_MAX_OPEN];
    long base = 0;
    for (int j = 0; j < st->n_old; j++) {
        d[j] = (int)((s / st->old_stride[j]) % st->old_radix[j]);
        if (st->keep_stride[j] >= 0) base += d[j] * st->keep_stride[j];
    }
    ec_row(w, st, d, edges, w->ec);
    return base;
}

/* ec_row for every edge key of step st into w->ectab (one key without
 * edges); the least of each row into rmin. */
static void ec_table(const sw *w, const sw_step *st, int edges, double *rmin)
{
    long n = edges ? st->n_keys : 1;
    int d[SW_MAX_OPEN] = {0};
    for (long key = 0; key < n; key++) {
        for (int j = 0; j < st->n_old; j++)
            if (st->key_stride[j]) d[j] = (int)((key / st->key_stride[j]) % st->old_radix[j]);
        double *row = w->ectab + key * st->nc, m = HUGE_VAL;
        ec_row(w, st, d, edges, row);
        for (int k = 0; k < st->nc; k++)
            if (row[k] < m) m = row[k];
        rmin[key] = m;
    }
}

/* cellc: node cost plus lam times the bytes on GPU gpu (lam 0: Eq. 1's). */
static void cells_relaxed(sw *w, int gpu, double lam)
{
    for (int v = 0; v < w->N; v++)
        for (int k = 0; k < w->g->n_configs[v]; k++) {
            double c = w->g->node_cost[v][k];
            if (lam > 0 && isfinite(c)) c += lam * cell_bytes(w->t, v, k, gpu);
            w->cellc[w->coff[v] + k] = c;
        }
}

/* cellc: the bytes on GPU gpu, +inf where the node cost is (a pin). */
static void cells_bytes(sw *w, int gpu)
{
    for (int v = 0; v < w->N; v++)
        for (int k = 0; k < w->g->n_configs[v]; k++)
            w->cellc[w->coff[v] + k] = isfinite(w->g->node_cost[v][k]) ? cell_bytes(w->t, v, k, gpu) : HUGE_VAL;
}

/* The backward sweep: H[loff[v] + s], the least cellc-cost (with the edges'
 * costs when edges) of the nodes from v on, given state s of the nodes open
 * before v. -1 when time ran out. */
static int sw_back(sw *w, double *H, int edges)
{
    w->sweeps++;
    H[w->loff[w->N]] = 0;
    for (int v = w->N - 1; v >= 0; v--) {
        if (sw_out_of_time(w)) return -1;
        const sw_step *st = &w->st[v];
        const double *Hn = H + w->loff[v + 1];
        double *Ho = H + w->loff[v];
        int nc = st->nc;
        ec_table(w, st, edges, w->rmin);
        for (long s = 0; s < st->n_old_states; s++) {
            long base = 0, key = 0;
            for (int j = 0; j < st->n_old; j++) {
                long dj = (s / st->old_stride[j]) % st->old_radix[j];
                if (st->keep_stride[j] >= 0) base += dj * st->keep_stride[j];
                key += dj * st->key_stride[j];
            }
            if (!edges) key = 0;
            if (st->v_stride == 0) { /* v closes at once: the state after does not hold it */
                Ho[s] = w->rmin[key] + Hn[base];
                continue;
            }
            const double *row = w->ectab + key * nc, *hp = Hn + base;
            double b0 = HUGE_VAL, b1 = HUGE_VAL, b2 = HUGE_VAL, b3 = HUGE_VAL;
            int k = 0;
            for (; k + 4 <= nc; k += 4) { /* four chains: the minimum's latency, not its count, bounds the loop */
                double x0 = row[k] + hp[k], x1 = row[k + 1] + hp[k + 1];
                double x2 = row[k + 2] + hp[k + 2], x3 = row[k + 3] + hp[k + 3];
                b0 = x0 < b0 ? x0 : b0;
                b1 = x1 < b1 ? x1 : b1;
                b2 = x2 < b2 ? x2 : b2;
                b3 = x3 < b3 ? x3 : b3;
            }
            for (; k < nc; k++) {
                double x = row[k] + hp[k];
                b0 = x < b0 ? x : b0;
            }
            b0 = b1 < b0 ? b1 : b0;
            b2 = b3 < b2 ? b3 : b2;
            Ho[s] = b2 < b0 ? b2 : b0;
        }
    }
    return 0;
}

/* The assignment H (a backward sweep of the current cellc) is the cost of. */
static void sw_trace(sw *w, const double *H, int *x)
{
    long s = 0;
    for (int v = 0; v < w->N; v++) {
        const sw_step *st = &w->st[v];
        const double *Hn = H + w->loff[v + 1];
        long base = sw_expand(w, st, s, 1);
        int bk = 0;
        double best = HUGE_VAL;
        for (int k = 0; k < st->nc; k++) {
            double c = w->ec[k] + Hn[base + k * st->v_stride];
            if (c < best) best = c, bk = k;
        }
        x[v] = bk;
        s = base + bk * st->v_stride;
    }
}

static double bytes_on(const sw *w, const int *x, int gpu)
{
    double m = 0;
    for (int v = 0; v < w->N; v++) m += cell_bytes(w->t, v, x[v], gpu);
    return m;
}

/* ---- the multiplier: a cutting-plane ascent in one dimension ---- */

typedef struct sw_dual {
    int gpu;
    double lam, lb;   /* the best multiplier found and its bound */
    double *H, *Hs;   /* [total] h at lam; scratch */
    int *x;           /* [N] scratch: a relaxed optimum */
    int *ub_x;        /* [N] the cheapest relaxed optimum that fits every GPU */
    double ub;
} sw_dual;

/* f(lam) = the relaxed optimum less lam times the limit, its slope (bytes
 * of the relaxed optimum on the GPU less the limit) in *slope; the best
 * bound so far kept with its table, a relaxed optimum that fits offered.
 * NAN when time ran out. */
static double sw_point(sw *w, sw_dual *d, double lam, double *slope)
{
    cells_relaxed(w, d->gpu, lam);
    if (sw_back(w, d->Hs, 1) < 0) return NAN;
    sw_trace(w, d->Hs, d->x);
    *slope = bytes_on(w, d->x, d->gpu) - w->limit[d->gpu];
    double f = d->Hs[0] - lam * w->limit[d->gpu];
    if (f > d->lb) {
        double *tmp = d->H;
        d->H = d->Hs, d->Hs = tmp;
        d->lb = f, d->lam = lam;
    }
    if (*slope <= 0 && mt_fits(w->t, d->x, w->limit)) {
        double c = cg_evaluate(w->g, d->x);
        if (c < d->ub) {
            d->ub = c;
            memcpy(d->ub_x, d->x, sizeof(int) * (size_t)w->N);
        }
    }
    return f;
}

/* The multiplier for d->gpu: from 0, then from the last GPU's multiplier
 * (or a guess) up by factors of 8 until the relaxed
 * optimum fits the GPU, then Kelley's cuts between the two sides (the
 * dual is concave and piecewise linear: each point's value and slope is a
 * line above it). -1 when time ran out. */
static int sw_ascend(sw *w, sw_dual *d)
{
    double L = w->limit[d->gpu], slo, shi = 0, fhi = 0, hi = -1, hint = d->lam;
    double flo = sw_point(w, d, 0, &slo), lo = 0;
    if (isnan(flo)) return -1;
    if (!isfinite(flo) || slo <= 0) return 0;
    double lam = hint > 0 ? hint : (fabs(flo) + 1e-3) / (L > 1 ? L : 1);
    for (int i = 0; i < 40 && hi < 0; i++, lam *= 8) {
        double s, f = sw_point(w, d, lam, &s);
        if (isnan(f)) return -1;
        if (s <= 0) hi = lam, fhi = f, shi = s;
        else lo = lam, flo = f, slo = s;
    }
    for (int i = 0; i < 12 && hi > 0 && slo > shi; i++) {
        double lx = (fhi - flo + slo * lo - shi * hi) / (slo - shi);
        if (!(lx > lo && lx < hi)) break;
        double line = flo + slo * (lx - lo), s, f = sw_point(w, d, lx, &s);
        if (isnan(f)) return -1;
        if (f >= line - tol_of(line)) break; /* the top */
        if (s > 0) lo = lx, flo = f, slo = s;
        else hi = lx, fhi = f, shi = s;
    }
    return 0;
}

/* ---- the labels ---- */

typedef struct sw_level { /* the labels before a step, by state */
    long n;
    long *start;          /* [states + 1] */
    double *t, *m;        /* [n] time; [n * nS] bytes on each GPU of S */
    int *prev, *k;        /* [n] the label before (index at the level before), the config taken */
    int *c;               /* [n] the carried node's config; -1 before it */
} sw_level;

typedef struct sw_cand {
    double t, m0;
    long id;
} sw_cand;

typedef struct sw_pass {
    int nS, *S;           /* the GPUs whose bytes labels keep; S[0] the multiplier's */
    unsigned char *inS;   /* [G] */
    double **hmin;        /* [G] least bytes of the rest on a GPU (a backward sweep each), made when first in S */
    double *tol;          /* [G] limit with a rounding margin */
    const double *H;      /* the multiplier's h */
    double lam, cut;
    sw_level *lv;         /* [N + 1] */
    long nc, cap, mcap;   /* the candidates of one step; room in cm (S may grow) */
    double *ct, *cm;
    int *cprev, *ck;
    long *cstate;
    int *ccar;            /* the candidates' carried configs */
    sw_cand *cs;
    long kept;
    long *cl_n, *cl_cap;  /* [nc(carry)] per carried config, the labels kept in the state being kept */
    long **cl;
} sw_pass;

static void level_free(sw_level *l)
{
    free(l->start);
    free(l->t);
    free(l->m);
    free(l->prev);
    free(l->k);
    free(l->c);
    memset(l, 0, sizeof *l);
}

static int cand_cmp(const void *a, const void *b)
{
    const sw_cand *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->m0 != y->m0) return x->m0 < y->m0 ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Adds a candidate; 0 past SW_MAX_CANDIDATES. */
static int cand_add(sw_pass *p, double t, const double *m, const double *db, int prev, int k, long state, int cc)
{
    if (p->nc == p->cap) {
        if (p->cap >= SW_MAX_CANDIDATES) return 0;
        p->cap = p->cap ? p->cap * 2 : 1024;
        p->ct = lw_realloc(p->ct, sizeof(double) * (size_t)p->cap);
        p->cprev = lw_realloc(p->cprev, sizeof(int) * (size_t)p->cap);
        p->ck = lw_realloc(p->ck, sizeof(int) * (size_t)p->cap);
        p->cstate = lw_realloc(p->cstate, sizeof(long) * (size_t)p->cap);
        p->ccar = lw_realloc(p->ccar, sizeof(int) * (size_t)p->cap);
        p->cs = lw_realloc(p->cs, sizeof(sw_cand) * (size_t)p->cap);
    }
    if ((p->nc + 1) * p->nS > p->mcap) {
        p->mcap = p->cap * p->nS;
        p->cm = lw_realloc(p->cm, sizeof(double) * (size_t)p->mcap);
    }
    long i = p->nc++;
    p->ct[i] = t;
    for (int j = 0; j < p->nS; j++) p->cm[i * p->nS + j] = m[j] + db[j];
    p->cprev[i] = prev, p->ck[i] = k, p->cstate[i] = state, p->ccar[i] = cc;
    return 1;
}

/* 1 if one of the last SW_DOMINANCE_SCAN labels kept in b from `from` on
 * (each faster or as fast) is as lean on every GPU of S as candidate i.
 * Looking no further keeps the work linear; a label kept that an older one
 * beats costs room, never the optimum. */
static int dominated(const sw *w, const sw_pass *p, const sw_level *b, long from, long i, int mixed)
{
    const double *m = p->cm + i * p->nS;
    int ci = p->ccar[i], nc = mixed ? w->g->n_configs[w->carry] : 0;
    if (b->n - from > SW_DOMINANCE_SCAN) from = b->n - SW_DOMINANCE_SCAN;
    for (long l = b->n - 1; l >= from; l--) {
        if (mixed && b->c[l] != ci && b->t[l] + w->delta[b->c[l] * nc + ci] > p->ct[i]) continue;
        const double *q = b->m + l * p->nS;
        int all = 1;
        for (int j = 0; j < p->nS && all; j++) all = q[j] <= m[j];
        if (all) return 1;
    }
    return 0;
}

/* With one GPU in S and labels of several carried configs in a state: 1 if
 * a label kept in b (cl: per carried config, in order of time, so leaner
 * each) beats candidate i, allowing for delta. Else i is kept, into cl. */
static int dominated_carry(const sw *w, sw_pass *p, const sw_level *b, long i)
{
    int nc = w->g->n_configs[w->carry], ci = p->ccar[i];
    double t = p->ct[i], m0 = p->cm[i];
    for (int c = 0; c < nc; c++) {
        long n = p->cl_n[c], lo = 0, hi = n; /* the first label of c slower than t less delta */
        if (!n) continue;
        const long *l = p->cl[c];
        double T = c == ci ? t : t - w->delta[c * nc + ci];
        while (lo < hi) {
            long mid = (lo + hi) / 2;
            if (b->t[l[mid]] <= T) lo = mid + 1;
            else hi = mid;
        }
        if (lo > 0 && b->m[l[lo - 1]] <= m0) return 1;
    }
    if (p->cl_n[ci] == p->cl_cap[ci]) {
        p->cl_cap[ci] = p->cl_cap[ci] ? 2 * p->cl_cap[ci] : 64;
        p->cl[ci] = lw_realloc(p->cl[ci], sizeof(long) * (size_t)p->cl_cap[ci]);
    }
    p->cl[ci][p->cl_n[ci]++] = b->n;
    return 0;
}

/* The candidates by state (a counting sort), each state's in order of time,
 * those no other beats kept into level b of n_states states. mixed: a
 * state's labels may carry different configs of w->carry. */
static void sw_keep(const sw *w, sw_pass *p, sw_level *b, long n_states, int mixed)
{
    int nS = p->nS;
    b->start = lw_calloc((size_t)n_states + 2, sizeof(long));
    for (long i = 0; i < p->nc; i++) b->start[p->cstate[i] + 2]++;
    for (long s = 0; s < n_states; s++) b->start[s + 2] += b->start[s + 1];
    for (long i = 0; i < p->nc; i++) {
        long at = b->start[p->cstate[i] + 1]++;
        p->cs[at] = (sw_cand){p->ct[i], p->cm[i * nS], i};
    }
    size_t cap = (size_t)(p->nc ? p->nc : 1);
    b->t = lw_malloc(sizeof(double) * cap);
    b->m = lw_malloc(sizeof(double) * cap * (size_t)nS);
    b->prev = lw_malloc(sizeof(int) * cap);
    b->k = lw_malloc(sizeof(int) * cap);
    b->c = lw_malloc(sizeof(int) * cap);
    b->n = 0;
    long from = 0;
    for (long s = 0; s < n_states; s++) {
        long a0 = from, a1 = b->start[s + 1];
        from = a1;
        b->start[s] = b->n;
        if (a1 - a0 > 1) qsort(p->cs + a0, (size_t)(a1 - a0), sizeof(sw_cand), cand_cmp);
        if (mixed && nS == 1 && a1 > a0) memset(p->cl_n, 0, sizeof(long) * (size_t)w->g->n_configs[w->carry]);
        double least = HUGE_VAL;
        for (long a = a0; a < a1; a++) {
            long i = p->cs[a].id;
            if (mixed && nS == 1 ? dominated_carry(w, p, b, i)
                : nS == 1      ? !(p->cs[a].m0 < least)
                               : dominated(w, p, b, b->start[s], i, mixed))
                continue;
            least = p->cs[a].m0;
            long l = b->n++;
            b->t[l] = p->ct[i];
            memcpy(b->m + l * nS, p->cm + i * nS, sizeof(double) * (size_t)nS);
            b->prev[l] = p->cprev[i], b->k[l] = p->ck[i], b->c[l] = p->ccar[i];
        }
    }
    b->start[n_states] = b->n;
}

/* Level v + 1's labels from level v's: every config of node v after every
 * label, less those the bounds prune (p->cut, the limits of S), less those
 * another beats. cellc holds the node costs. -1 past the budget. */
static int sw_step_labels(sw *w, sw_pass *p, int v)
{
    const sw_step *st = &w->st[v];
    sw_level *a = &p->lv[v], *b = &p->lv[v + 1];
    int nS = p->nS;
    long after = w->loff[v + 1];
    const double *Hn = p->H + after;
    double lam_l = p->lam * w->limit[p->S[0]], db[64], room[64];
    int at_long = 0, pending = w->carry >= 0 && v < w->long_end; /* corr: the long edges still to price */
    for (int i = 0; i < w->n_long; i++) at_long |= long_other(w, w->long_e[i]) == v;
    p->nc = 0;
    for (long s = 0; s < st->n_old_states; s++) {
        long l0 = a->start[s], l1 = a->start[s + 1];
        if (l0 == l1) continue;
        long base = sw_expand(w, st, s, 1);
        for (int k = 0; k < st->nc; k++) {
            double dt = w->ec[k];
            long s2 = base + k * st->v_stride;
            if (!isfinite(dt) || !isfinite(Hn[s2])) continue;
            for (int j = 0; j < nS; j++) {
                db[j] = cell_bytes(w->t, v, k, p->S[j]);
                room[j] = p->tol[p->S[j]] - p->hmin[p->S[j]][after + s2] - db[j];
            }
            double lead = dt + p->lam * db[0] + Hn[s2] - lam_l;
            for (long l = l0; l < l1; l++) {
                const double *m = a->m + l * nS;
                int cc = v == w->carry ? k : a->c[l];
                double x = at_long ? long_extra(w, v, cc, k) : 0, xb = pending && cc >= 0 ? w->corr[cc] : 0;
                if (a->t[l] + x + xb + p->lam * m[0] + lead > p->cut) continue; /* also where x is +inf */
                int j = 0;
                while (j < nS && m[j] <= room[j]) j++;
                if (j < nS) continue;
                if (!cand_add(p, a->t[l] + dt + x, m, db, (int)l, k, s2, cc)) return -1;
            }
        }
    }
    sw_keep(w, p, b, w->loff[v + 2] - after, w->carry >= 0 && v >= w->carry && v < w->long_end);
    p->kept += b->n;
    w->stop.labels += b->n;
    /* what the back-track needs stays: prev and k */
    free(a->t);
    free(a->m);
    free(a->start);
    a->t = a->m = NULL;
    a->start = NULL;
    return p->kept > SW_MAX_LABELS ? -1 : 0;
}

/* Before a pass with long edges: a forward sweep of the multiplier's costs
 * (cellc) meets p->H at each long edge's far end, which bounds every
 * assignment that takes config k there (the Lagrangian bound, as the
 * labels' own); the configs whose bound is over the cut can be in no
 * assignment the pass looks for, so delta and corr need not allow for them.
 * -1 when time ran out. */
static int long_bounds(sw *w, sw_pass *p)
{
    long most = 1;
    for (int v = 0; v <= w->N; v++)
        if (w->loff[v + 1] - w->loff[v] > most) most = w->loff[v + 1] - w->loff[v];
    double *F = lw_malloc(sizeof(double) * (size_t)most), *Fn = lw_malloc(sizeof(double) * (size_t)most);
    double lam_l = p->lam * w->limit[p->S[0]];
    int rc = 0;
    if (!w->long_lb) w->long_lb = lw_malloc(sizeof(double) * (size_t)(w->coff[w->N] + 1));
    cells_relaxed(w, p->S[0], p->lam);
    w->sweeps++;
    F[0] = 0;
    for (int v = 0; v < w->N && rc == 0; v++) {
        const sw_step *st = &w->st[v];
        long n2 = w->loff[v + 2] - w->loff[v + 1];
        const double *Hn = p->H + w->loff[v + 1];
        int at_long = 0;
        for (int i = 0; i < w->n_long; i++) at_long |= long_other(w, w->long_e[i]) == v;
        for (long s2 = 0; s2 < n2; s2++) Fn[s2] = HUGE_VAL;
        double *lbk = w->long_lb + w->coff[v];
        for (int k = 0; k < st->nc; k++) lbk[k] = HUGE_VAL;
        for (long s = 0; s < st->n_old_states; s++) {
            if (!(F[s] < HUGE_VAL)) continue;
            long base = sw_expand(w, st, s, 1);
            for (int k = 0; k < st->nc; k++) {
                double c = F[s] + w->ec[k];
                long s2 = base + k * st->v_stride;
                if (c < Fn[s2]) Fn[s2] = c;
                if (at_long && c + Hn[s2] - lam_l < lbk[k]) lbk[k] = c + Hn[s2] - lam_l;
            }
        }
        double *tmp = F;
        F = Fn, Fn = tmp;
        if (sw_out_of_time(w)) rc = -1;
    }
    free(F);
    free(Fn);
    w->long_lb_ok = rc == 0;
    return rc;
}

/* long_ok and delta, corr for the pass at p->cut (long_bounds once per
 * multiplier). -1 when time ran out. */
static int long_plausible(sw *w, sw_pass *p)
{
    if (!w->long_lb_ok && long_bounds(w, p) < 0) return -1;
    int changed = 0;
    for (int i = 0; i < w->n_long; i++) {
        int v = long_other(w, w->long_e[i]);
        for (int k = 0; k < w->g->n_configs[v]; k++) {
            unsigned char ok = w->long_lb[w->coff[v] + k] <= p->cut + tol_of(p->cut);
            changed |= ok != w->long_ok[i][k];
            w->long_ok[i][k] = ok;
        }
    }
    if (changed) long_delta(w);
    return 0;
}

/* One pass of the labels at p->cut. 1: the cheapest assignment that fits
 * the GPUs of S among what is left (an optimum of the relaxation to S when
 * its cost is within the cut) in x, its cost in *cost; 0: none left; -1
 * past the budget; -2 time ran out. */
static int sw_pass_run(sw *w, sw_pass *p, int *x, double *cost)
{
    int N = w->N, nS = p->nS, rc = 0;
    p->lv = lw_calloc((size_t)N + 1, sizeof(sw_level));
    p->kept = 0;
    sw_level *l0 = &p->lv[0];
    l0->n = 1;
    l0->start = lw_malloc(sizeof(long) * 2);
    l0->start[0] = 0, l0->start[1] = 1;
    l0->t = lw_calloc(1, sizeof(double));
    l0->m = lw_calloc((size_t)nS, sizeof(double));
    l0->prev = lw_calloc(1, sizeof(int));
    l0->k = lw_calloc(1, sizeof(int));
    l0->c = lw_malloc(sizeof(int));
    l0->c[0] = -1;
    if (w->carry >= 0 && long_plausible(w, p) < 0) rc = -2;
    cells_relaxed(w, 0, 0);
    w->sweeps++;
    for (int v = 0; v < N && rc == 0; v++) {
        if (sw_out_of_time(w)) rc = -2;
        else rc = sw_step_labels(w, p, v);
    }
    sw_level *fin = &p->lv[N];
    for (long l = 0; rc == 0 && l < fin->n; l++) { /* in order of time */
        for (int v = N - 1, i = (int)l; v >= 0; v--) {
            x[v] = p->lv[v + 1].k[i];
            i = p->lv[v + 1].prev[i];
        }
        int j = 0;
        while (j < nS && bytes_on(w, x, p->S[j]) <= w->limit[p->S[j]]) j++;
        if (j == nS) {
            *cost = cg_evaluate(w->g, x);
            rc = 1;
        }
    }
    for (int v = 0; v <= N; v++) level_free(&p->lv[v]);
    free(p->lv);
    p->lv = NULL;
    return rc;
}

/* ---- the driver ---- */

enum { SW_MAX_S = 64 };

/* GPU gpu joins S, with its table of least bytes (made once). 1 if even
 * the least overflows it (nothing fits), -1 when time ran out, else 0. */
static int sw_add_gpu(sw *w, sw_pass *p, int gpu)
{
    p->S[p->nS++] = gpu;
    p->inS[gpu] = 1;
    if (!p->hmin[gpu]) {
        p->hmin[gpu] = lw_malloc(sizeof(double) * (size_t)w->total);
        cells_bytes(w, gpu);
        if (sw_back(w, p->hmin[gpu], 0) < 0) return -1;
    }
    return p->hmin[gpu][0] > p->tol[gpu];
}

/* The GPU x overflows most for its limit, not in S; -1 if x fits. */
static int worst_gpu(const sw *w, const sw_pass *p, const int *x)
{
    int worst = -1;
    double most = 0;
    for (int g = 0; g < w->G; g++) {
        if (p->inS[g]) continue;
        double over = (bytes_on(w, x, g) - w->limit[g]) / (w->limit[g] > 1 ? w->limit[g] : 1);
        if (over > most) most = over, worst = g;
    }
    return worst;
}

/* S = {gpu} alone, and the multiplier's h on it (an ascent of its own: the
 * bound of one GPU's multiplier on another's can be far off). *lb raised
 * to its bound. As sw_add_gpu. */
static int sw_single(sw *w, sw_pass *p, sw_dual *d, int gpu, double *lb)
{
    for (int j = 0; j < p->nS; j++) p->inS[p->S[j]] = 0;
    p->nS = 0;
    int rc = sw_add_gpu(w, p, gpu);
    if (rc != 0) return rc;
    if (d->gpu != gpu) {
        d->gpu = gpu;
        d->lb = -HUGE_VAL;
        if (sw_ascend(w, d) < 0) return -1;
    }
    p->H = d->H, p->lam = d->lam;
    w->long_lb_ok = 0; /* a new multiplier: long_bounds again */
    if (d->lb > *lb) *lb = d->lb;
    return 0;
}

/* Passes at rising cuts from lb until one finds the optimum of the
 * relaxation to S (x, *cost). 1 found, 0 nothing fits S, -1 budget, -2 time. */
static int sw_relaxed_optimum(sw *w, sw_pass *p, double lb, double ub, int *x, double *cost, long *passes)
{
    double gap = 1e-6 * (fabs(lb) > 1e-3 ? fabs(lb) : 1e-3);
    p->cut = lb + gap;
    for (int pass = 0; pass < 40; pass++) { /* a few; more is a sign of rounding trouble: branch and bound then */
        if (p->cut >= ub) p->cut = ub + tol_of(ub);
        (*passes)++;
        int rc = sw_pass_run(w, p, x, cost);
        if (rc < 0) return rc;
        if (rc == 1 && *cost <= p->cut + tol_of(p->cut)) return 1;
        if (rc == 0 && !isfinite(p->cut)) return 0;
        if (rc == 1 && *cost < ub) ub = *cost; /* fits S: a pass with a cut at it finds it or better */
        if (p->cut >= ub || gap > fabs(lb) + 1) p->cut = HUGE_VAL;
        else p->cut = lb + (gap *= 2); /* the last pass's labels grow steeply with the cut (GPT-2 XL: 1.3e5
                                        at +5.5 ms, 5.7e6 at +11 ms): small steps */
    }
    return -1;
}

static void settle(memsearch_result *r, memsearch_status st, const int *x, int N, double cost, double lb)
{
    r->status = st;
    r->cost = x ? cost : HUGE_VAL;
    r->lower_bound = lb;
    r->proven_optimal = st == MEMSEARCH_OPTIMAL;
    if (x) {
        r->config = lw_malloc(sizeof(int) * (size_t)(N + 1));
        memcpy(r->config, x, sizeof(int) * (size_t)N);
    }
}

/* The relaxation to one GPU, the one x0 overflows most; while its optimum
 * overflows another, the relaxation to that one alone (once per GPU), then
 * to S and that one together, until an optimum fits every GPU. Returns as
 * memsearch_sweep. */
static int sw_solve(sw *w, sw_pass *p, sw_dual *d, const int *x0, memsearch_result *r)
{
    int N = w->N, *x = lw_malloc(sizeof(int) * (size_t)(N + 1)), st = 0; /* 1 optimal, 2 none fits, -1 budget, -2 time */
    long passes = 0;
    double lb = cg_evaluate(w->g, x0), cost = HUGE_VAL;
    int g = worst_gpu(w, p, x0);
    if (g < 0) { /* x0 fits but for the rounding margin: branch and bound decides */
        free(x);
        return 0;
    }
    unsigned char *tried = lw_calloc((size_t)w->G, 1);
    tried[g] = 1;
    int rc = sw_single(w, p, d, g, &lb);
    while (st == 0) {
        if (rc) {
            st = rc > 0 ? 2 : -2;
            break;
        }
        rc = sw_relaxed_optimum(w, p, lb, d->ub, x, &cost, &passes);
        if (rc <= 0) {
            st = rc == 0 ? 2 : rc;
            break;
        }
        rc = 0;
        if (cost > lb) lb = cost;
        int h = worst_gpu(w, p, x);
        if (h < 0) st = 1;
        else if (p->nS == 1 && !tried[h]) {
            tried[h] = 1;
            rc = sw_single(w, p, d, h, &lb);
        } else if (p->nS == SW_MAX_S) st = -1;
        else rc = sw_add_gpu(w, p, h);
    }
    free(tried);
    if (st == 1) settle(r, MEMSEARCH_OPTIMAL, x, N, cost, cost);
    else if (st == 2) settle(r, MEMSEARCH_INFEASIBLE, NULL, N, 0, HUGE_VAL);
    else if (st == -2 && w->stop.cancelled) {
        r->status = MEMSEARCH_FAILED;
        r->failure = SEARCH_CANCELLED;
    } else if (st == -2) /* time ran out: the best that fits, and the bound */
        settle(r, MEMSEARCH_TIME_LIMIT, isfinite(d->ub) ? d->ub_x : NULL, N, d->ub, lb < d->ub ? lb : d->ub);
    r->bb_nodes += passes;
    free(x);
    return st != -1;
}

/* The plain optimum (search_run_with, options so): 1 when it fits (r
 * settled), 0 when it does not (in x0), -1 when the search failed (r
 * settled). */
static int plain_fits(const cost_graph *g, const mem_table *t, const double *limit, const search_options *so,
                      int *x0, memsearch_result *r)
{
    search_info info;
    search_result *s0 = search_run_with(g, so, NULL, NULL, &info);
    r->searches++;
    r->bb_nodes = 1;
    if (!s0) {
        r->status = MEMSEARCH_FAILED;
        r->failure = info.status;
        return -1;
    }
    int rc = 0;
    memcpy(x0, s0->config, sizeof(int) * (size_t)g->n_nodes);
    if (!isfinite(s0->cost)) { /* every assignment has an infinite cost */
        settle(r, MEMSEARCH_INFEASIBLE, NULL, g->n_nodes, 0, HUGE_VAL);
        rc = 1;
    } else if (mt_fits(t, x0, limit)) {
        settle(r, MEMSEARCH_OPTIMAL, x0, g->n_nodes, s0->cost, s0->cost);
        rc = 1;
    }
    search_result_free(s0);
    return rc;
}

int memsearch_sweep(const cost_graph *g, const mem_table *t, const double *limit, const search_options *so,
                    double deadline, long max_labels, const atomic_int *cancel, memsearch_result *r)
{
    sw w;
    int ok = sw_init(&w, g, t, limit);
    if (!ok) {
        sw_free(&w);
        return 0;
    }
    w.stop = (sw_stop){.deadline = deadline, .max_labels = max_labels, .cancel = cancel};
    int G = w.G, N = w.N;
    int *x0 = lw_malloc(sizeof(int) * (size_t)(N + 1));
    int plain = plain_fits(g, t, limit, so, x0, r);
    if (plain != 0) {
        free(x0);
        sw_free(&w);
        return 1;
    }
    sw_pass p = {0};
    p.S = lw_malloc(sizeof(int) * SW_MAX_S);
    p.hmin = lw_calloc((size_t)G, sizeof(double *));
    p.inS = lw_calloc((size_t)G, 1);
    p.tol = lw_malloc(sizeof(double) * (size_t)G);
    if (w.carry >= 0) {
        p.cl = lw_calloc((size_t)g->n_configs[w.carry], sizeof(long *));
        p.cl_n = lw_calloc((size_t)g->n_configs[w.carry], sizeof(long));
        p.cl_cap = lw_calloc((size_t)g->n_configs[w.carry], sizeof(long));
    }
    for (int k = 0; k < G; k++) p.tol[k] = limit[k] + tol_of(limit[k]);
    sw_dual d = {0};
    d.lb = -HUGE_VAL, d.ub = HUGE_VAL, d.gpu = -1;
    d.H = lw_malloc(sizeof(double) * (size_t)w.total);
    d.Hs = lw_malloc(sizeof(double) * (size_t)w.total);
    d.x = lw_malloc(sizeof(int) * (size_t)(N + 1));
    d.ub_x = lw_malloc(sizeof(int) * (size_t)(N + 1));
    ok = sw_solve(&w, &p, &d, x0, r);
    r->searches += w.sweeps;
    for (int k = 0; k < G; k++) free(p.hmin[k]);
    free(p.hmin);
    free(p.inS);
    free(p.S);
    free(p.tol);
    free(p.ct);
    free(p.cm);
    free(p.cprev);
    free(p.ck);
    free(p.cstate);
    free(p.ccar);
    free(p.cs);
    for (int c = 0; p.cl && c < g->n_configs[w.carry]; c++) free(p.cl[c]);
    free(p.cl);
    free(p.cl_n);
    free(p.cl_cap);
    free(d.H);
    free(d.Hs);
    free(d.x);
    free(d.ub_x);
    free(x0);
    sw_free(&w);
    return ok;
}
