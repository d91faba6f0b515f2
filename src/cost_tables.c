/*
 * cost_tables: building a model's tables. The node tables (t_c, t_s) layer
 * by layer; the t_x tables edge by edge on worker threads, where edges
 * that are the same problem share one table, a symmetric table computes
 * half of itself, and an edge that is another's problem up to a whole
 * factor is priced from that one's counts (cost_reprice.c). A build for
 * what-ifs keeps, for every entry, the counts a re-pricing needs. A build
 * this machine cannot finish in reasonable time and memory is refused up
 * front.
 */
#include "cost_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- counts kept while tables are computed (for cost_reprice.c) ---- */

/* Drops one reference to rp (NULL: nothing), freeing it with the last. */
void rp_free(tx_reprice *rp)
{
    if (!rp || atomic_fetch_sub(&rp->refs, 1) > 1) return;
    for (int e = 0; e < rp->n_edges; e++) {
        free(rp->e[e].list);
        free(rp->e[e].nic);
        free(rp->e[e].start);
        free(rp->e[e].cand);
        free(rp->e[e].hash);
    }
    free(rp->e);
    free(rp->same);
    free(rp->todo);
    for (int i = 0; i < rp->n_layers; i++) free(rp->configs[i]);
    free(rp->configs);
    free(rp->n_configs);
    free(rp);
}

/* A list's digest (FNV-1a over its packed counts, folded). */
static uint64_t rp_hash(const rp_pack *c, int n)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)n;
    for (int i = 0; i < n; i++) {
        h = (h ^ c[i].own) * 1099511628211ULL;
        h = (h ^ c[i].far) * 1099511628211ULL;
        h ^= h >> 29;
    }
    return h;
}

/* The id of the list c[0..n-1] among edge r's, added if new; RP_NONE where
 * a count does not pack exactly. */
uint32_t rp_intern(rp_edge *r, const rp_cand *c, int n)
{
    rp_pack p[RP_MAXC];
    for (int i = 0; i < n; i++) {
        if (!(c[i].own_n >= 0 && c[i].own_n < 65536 && c[i].far_n >= 0 && c[i].far_n < 65536 && c[i].own >= 0 &&
              c[i].own < (double)RP_ELEM_MASK && c[i].far >= 0 && c[i].far < (double)RP_ELEM_MASK))
            return RP_NONE;
        p[i].own = (uint64_t)c[i].own_n << RP_ELEM_BITS | (uint64_t)c[i].own;
        p[i].far = (uint64_t)c[i].far_n << RP_ELEM_BITS | (uint64_t)c[i].far;
    }
    if (2 * (r->n_lists + 1) > r->hcap) { /* grow the table, placing the lists again by their hashes */
        long cap = r->hcap ? 2 * r->hcap : 1024;
        uint64_t *h = lw_calloc((size_t)cap, sizeof(uint64_t));
        for (long k = 0; k < r->hcap; k++) {
            if (!r->hash[k]) continue;
            long at = (long)((r->hash[k] >> 32) & (uint64_t)(cap - 1));
            while (h[at]) at = (at + 1) & (cap - 1);
            h[at] = r->hash[k];
        }
        free(r->hash);
        r->hash = h;
        r->hcap = cap;
    }
    const uint64_t h64 = rp_hash(p, n), fp = (uint32_t)(h64 ^ h64 >> 32);
    long at = (long)(fp & (uint64_t)(r->hcap - 1));
    for (; r->hash[at]; at = (at + 1) & (r->hcap - 1)) {
        if (r->hash[at] >> 32 != fp) continue;
        const uint32_t k = (uint32_t)r->hash[at] - 1;
        if (r->start[k + 1] - r->start[k] != (uint32_t)n) continue;
        const rp_pack *q = r->cand + r->start[k];
        int i = 0;
        while (i < n && q[i].own == p[i].own && q[i].far == p[i].far) i++;
        if (i == n) return k;
    }
    if (r->n_lists + 2 > r->cap_lists) {
        r->cap_lists = 2 * r->cap_lists + 64;
        r->start = lw_realloc(r->start, sizeof(uint32_t) * (size_t)r->cap_lists);
    }
    if (r->n_cand + n > r->cap_cand) {
        r->cap_cand = 2 * (r->n_cand + n) + 64;
        r->cand = lw_realloc(r->cand, sizeof(rp_pack) * (size_t)r->cap_cand);
    }
    if (r->n_cand + n >= (long)RP_NONE || r->n_lists + 1 >= (long)RP_NONE) return RP_NONE;
    if (n) memcpy(r->cand + r->n_cand, p, sizeof(rp_pack) * (size_t)n);
    r->start[r->n_lists] = (uint32_t)r->n_cand;
    r->n_cand += n;
    r->start[++r->n_lists] = (uint32_t)r->n_cand;
    r->hash[at] = fp << 32 | (uint64_t)r->n_lists;
    return (uint32_t)r->n_lists - 1;
}

/* Edge r's storage for n entries, before its table is computed. */
static void rp_edge_begin(rp_edge *r, long n, int multi_node)
{
    r->list = lw_malloc(sizeof(uint32_t) * (size_t)(2 * n + 1));
    r->nic = multi_node ? lw_calloc((size_t)(2 * n + 1), sizeof(double)) : NULL;
    r->start = lw_malloc(sizeof(uint32_t) * 64);
    r->cap_lists = 64;
    r->start[0] = 0;
}

/* Records entry q's candidates (sink filled by tx_closed_form, n[0] < 0
 * where another path ran) in edge r. */
static void rp_record(rp_edge *r, long q, const rp_sink *sink)
{
    uint32_t f = RP_NONE, b = RP_NONE;
    if (sink->n[0] >= 0 && !sink->over) {
        f = rp_intern(r, sink->c[0], sink->n[0]);
        b = f == RP_NONE ? RP_NONE : rp_intern(r, sink->c[1], sink->n[1]);
    }
    r->list[2 * q] = b == RP_NONE ? RP_NONE : f;
    r->list[2 * q + 1] = b;
    if (r->nic) {
        r->nic[2 * q] = sink->nic[0];
        r->nic[2 * q + 1] = sink->nic[1];
    }
}

/* After edge r's n entries were recorded: drops the lookup table, trims
 * the lists, and counts the bytes against RP_MAX_BYTES. */
static void rp_edge_end(tx_reprice *rp, rp_edge *r, long n)
{
    free(r->hash);
    r->hash = NULL;
    r->hcap = 0;
    r->start = lw_realloc(r->start, sizeof(uint32_t) * (size_t)(r->n_lists + 1));
    r->cand = lw_realloc(r->cand, sizeof(rp_pack) * (size_t)(r->n_cand + 1));
    r->cap_lists = r->n_lists + 1;
    r->cap_cand = r->n_cand + 1;
    long bytes = 8 * n + (r->nic ? 16 * n : 0) + 4 * (r->n_lists + 1) + (long)sizeof(rp_pack) * r->n_cand;
    if (atomic_fetch_add(&rp->bytes, bytes) + bytes > RP_MAX_BYTES) atomic_store(&rp->dropped, 1);
}

/* Whether model pm's entries can keep counts: the closed form's t_x, and
 * the entries alone within RP_MAX_BYTES (8 bytes an entry, 24 across
 * nodes). */
int counts_fit(const cost_model_priv *pm)
{
    return pm->closed_form_ok && !pm->tx_reference &&
           pm->pub.tx_pairs_computed * (pm->nodes_used > 1 ? 24 : 8) <= RP_MAX_BYTES;
}

/* Empty kept counts for model pm's tables (edges todo, the others copy
 * same[e]'s), to be recorded as they are computed; NULL where the model
 * cannot keep them (not the closed form, or too many entries). */
tx_reprice *rp_new(const cost_model_priv *pm, const int *same, const int *todo, int n_todo)
{
    const cost_model *m = &pm->pub;
    if (!counts_fit(pm)) return NULL;
    int ne = m->n_edges;
    tx_reprice *rp = lw_calloc(1, sizeof *rp);
    atomic_init(&rp->refs, 1);
    rp->n_edges = ne;
    rp->n_todo = n_todo;
    rp->same = lw_malloc(sizeof(int) * ((size_t)ne + 1));
    rp->todo = lw_malloc(sizeof(int) * ((size_t)ne + 1));
    memcpy(rp->same, same, sizeof(int) * (size_t)ne);
    memcpy(rp->todo, todo, sizeof(int) * (size_t)n_todo);
    rp->e = lw_calloc((size_t)ne + 1, sizeof(rp_edge));
    rp->batch = m->batch;
    rp->gpus = m->gpus;
    rp->gpus_per_node = m->cl->gpus_per_node;
    rp->n_layers = m->n_layers;
    rp->n_configs = lw_malloc(sizeof(int) * ((size_t)m->n_layers + 1));
    rp->configs = lw_calloc((size_t)m->n_layers + 1, sizeof(config *));
    for (int i = 0; i < m->n_layers; i++) {
        rp->n_configs[i] = m->n_configs[i];
        rp->configs[i] = lw_malloc(sizeof(config) * ((size_t)m->n_configs[i] + 1));
        memcpy(rp->configs[i], m->configs[i], sizeof(config) * (size_t)m->n_configs[i]);
    }
    return rp;
}

/* Where the model keeps no counts but some tables are priced from
 * others' (todo[n_first..n_todo-1]): room for the counts of those others,
 * for this build only (scale_rp). */
void scale_rp_begin(cost_model_priv *pm, int n_first, int n_todo)
{
    if (pm->rp || n_first >= n_todo) return;
    pm->scale_rp = lw_calloc(1, sizeof *pm->scale_rp);
    atomic_init(&pm->scale_rp->refs, 1);
    pm->scale_rp->n_edges = pm->pub.n_edges;
    pm->scale_rp->e = lw_calloc((size_t)pm->pub.n_edges + 1, sizeof(rp_edge));
}

/* A model's kept counts that went over RP_MAX_BYTES while its tables were
 * computed: dropped (a what-if on it then builds). */
void rp_drop_if_over(cost_model_priv *pm)
{
    if (pm->rp && atomic_load(&pm->rp->dropped)) {
        rp_free(pm->rp);
        pm->rp = NULL;
    }
}

/* Where edge e's counts are kept: the model's (pm->rp), or, in a build
 * that keeps none, the build's own for an edge other tables are priced from
 * (scale_rp); NULL: none. */
tx_reprice *record_rp(const cost_model_priv *pm, int e)
{
    if (pm->rp) return pm->rp;
    return pm->scale_rp && pm->scale_is_src[e] ? pm->scale_rp : NULL;
}

/* Where edge e's counts are kept (record_rp, not dropped over
 * RP_MAX_BYTES): its storage there, begun, with sc's sink to leave each
 * entry's in; NULL where nothing is recorded. record_end finishes it. */
rp_edge *record_begin(cost_model_priv *pm, tx_scratch *sc, int e)
{
    const cost_model *m = &pm->pub;
    tx_reprice *rp = record_rp(pm, e);
    if (!rp || atomic_load(&rp->dropped)) return NULL;
    rp_edge *r = &rp->e[e];
    rp_edge_begin(r, (long)m->n_configs[m->e_from[e]] * m->n_configs[m->e_to[e]], pm->nodes_used > 1);
    sc->sink = lw_malloc(sizeof *sc->sink);
    return r;
}

/* Edge e's counts done (record_begin's r, or NULL), and the sink freed. */
void record_end(cost_model_priv *pm, tx_scratch *sc, int e, rp_edge *r)
{
    const cost_model *m = &pm->pub;
    if (r) rp_edge_end(record_rp(pm, e), r, (long)m->n_configs[m->e_from[e]] * m->n_configs[m->e_to[e]]);
    free(sc->sink);
    sc->sink = NULL;
}

/* ---- one edge's table ---- */

/* 1 where edge e's table is symmetric, so that a table build computes
 * half of it: the consumer reads the producer's tensor as it is (every
 * dimension the same size, nothing windowed, offset or read whole) and both
 * layers have the same configs. Then entry (b, a) moves what (a, b) moves,
 * turned round: its forward gather is (a, b)'s backward one and the reverse,
 * the same integer sums on the same code path, so the same slowest receiver
 * and NIC loads each way and the same sum of the two (the sign of the moved
 * elements too: two partitions of one tensor into non-empty pieces, each
 * piece on its own GPU, either agree everywhere or move something both
 * ways). Per-pair links within nodes too (the pair form): a link is the
 * same both ways, and the pair form reads receiver and sender GPUs alike
 * in either direction. The closed and pair forms only: the per-piece
 * reference and the oracles compute every entry (tests compare them). */
int edge_mirrors(const cost_model_priv *pm, int e)
{
    const cost_model *m = &pm->pub;
    const edge_desc *d = &pm->desc[e];
    if (d->flat || !(pm->closed_form_ok || pm->pair_form_ok) || pm->tx_reference || pm->tx_oracle ||
        d->pdims != d->cdims || (d->pdims & (DIMMASK(DIM_R) | DIMMASK(DIM_X))))
        return 0; /* partial sums and replicas are not symmetric (cost_shard.c) */
    for (int k = 0; k < NDIMS; k++)
        if (d->kind[k] != MAP_SAME || d->Sp[k] != d->Sc[k]) return 0;
    int a = m->e_from[e], b = m->e_to[e];
    if (m->n_configs[a] != m->n_configs[b]) return 0;
    for (int i = 0; i < m->n_configs[a]; i++)
        for (int k = 0; k < NDIMS; k++)
            if (m->configs[a][i].deg[k] != m->configs[b][i].deg[k]) return 0;
    return 1;
}

/* Entry q of a symmetric table (edge_mirrors) from entry t, the same pair
 * of configs the other way round: the same time, and the kept counts (r:
 * NULL, none kept) with their directions swapped. */
void mirror_entry(double *tab, rp_edge *r, long q, long t)
{
    tab[q] = tab[t];
    if (!r) return;
    r->list[2 * q] = r->list[2 * t + 1];
    r->list[2 * q + 1] = r->list[2 * t];
    if (r->nic) {
        r->nic[2 * q] = r->nic[2 * t + 1];
        r->nic[2 * q + 1] = r->nic[2 * t];
    }
}

/* Entry (a, b) of edge e computed; its counts recorded in r (record_begin)
 * where one is given. */
double compute_entry(cost_model_priv *pm, tx_scratch *sc, edge_lists *el, int e, int a, int b, rp_edge *r)
{
    const cost_model *m = &pm->pub;
    if (r) sc->sink->n[0] = -1;
    if (++sc->evaluated % EVAL_REPORT == 0 && pm->evaluated_live)
        atomic_fetch_add_explicit(pm->evaluated_live, EVAL_REPORT, memory_order_relaxed);
    double t = tx_eval(pm, sc, el, &pm->desc[e], &m->configs[m->e_from[e]][a], &m->configs[m->e_to[e]][b], NULL);
    if (r) rp_record(r, (long)a * m->n_configs[m->e_to[e]] + b, sc->sink);
    return t;
}

/* Fills edge e's table; stops early (leaving it incomplete) once *cancel is
 * set, since the model will be thrown away. Where the model keeps what a
 * repricing needs (pm->rp), records it, up to RP_MAX_BYTES over all edges. */
static void compute_edge_table(cost_model_priv *pm, tx_scratch *sc, int e, const atomic_int *cancel)
{
    cost_model *m = &pm->pub;
    int np = m->n_configs[m->e_from[e]], nc = m->n_configs[m->e_to[e]];
    edge_lists *el = lw_calloc(1, sizeof *el);
    memo_lend(sc, el);
    rp_edge *r = record_begin(pm, sc, e);
    const int mirror = edge_mirrors(pm, e);
    for (int a = 0; a < np && !(cancel && atomic_load(cancel)); a++)
        for (int b = 0; b < nc; b++) {
            if (mirror && b < a) /* (a, b) is (b, a) turned round: its forward is that one's backward */
                mirror_entry(m->t_x[e], r, (long)a * nc + b, (long)b * nc + a);
            else
                m->t_x[e][(long)a * nc + b] = compute_entry(pm, sc, el, e, a, b, r);
        }
    record_end(pm, sc, e, r);
    lists_free(el);
    free(el);
}

/* ---- the workers ---- */

/* The t_x tables are independent per edge: worker threads take edges from
 * a shared counter, each with its own scratch. */
typedef struct tx_work {
    cost_model_priv *pm;
    const int *todo;   /* edges whose table must be computed */
    int n_todo;
    int next;
    pthread_mutex_t lock;
    const atomic_int *cancel; /* may be NULL; non-zero: stop taking edges */
    const tx_reprice *from;   /* NULL: compute the tables; else re-price them from these kept counts */
    int scaled;               /* the edges' tables are priced from their scale_src's kept counts */
} tx_work;

/* A worker: takes the next edge of w until none is left (or the build is
 * cancelled) and fills its table as w says, with a scratch of its own. */
static void *tx_worker(void *arg)
{
    tx_work *w = arg;
    tx_scratch sc;
    scratch_init(&sc, w->pm->pub.gpus, w->pm->nodes_used);
    for (;;) {
        pthread_mutex_lock(&w->lock);
        int i = w->next++;
        pthread_mutex_unlock(&w->lock);
        if (i >= w->n_todo || (w->cancel && atomic_load(w->cancel))) break;
        int e = w->todo[i];
        if (w->scaled)
            fill_scaled_edge(w->pm, &sc, e);
        else if (w->from)
            rp_fill_edge(w->pm, w->from, &sc, e, w->from->same[e] >= 0 ? w->from->same[e] : e);
        else
            compute_edge_table(w->pm, &sc, e, w->cancel);
    }
    atomic_fetch_add(&w->pm->n_evaluated, sc.evaluated);
    if (w->pm->evaluated_live) atomic_fetch_add(w->pm->evaluated_live, sc.evaluated % EVAL_REPORT);
    scratch_free(&sc);
    return NULL;
}

/* An edge and its table's entries, for sorting (run_edges). */
typedef struct edge_size {
    long entries;
    int edge;
} edge_size;

/* Bigger tables first, then by edge. */
static int edge_size_cmp(const void *a, const void *b)
{
    const edge_size *x = a, *y = b;
    if (x->entries != y->entries) return x->entries > y->entries ? -1 : 1;
    return (x->edge > y->edge) - (x->edge < y->edge);
}

/* The tables of edges list[0..n-1], on nw threads (workers take edges
 * from a shared counter, each with its own scratch), biggest first:
 * computed, re-priced from `from`, or (scaled) priced from their
 * scale_src's kept counts. */
static void run_edges(cost_model_priv *pm, const int *list, int n, int nw, const atomic_int *cancel,
                      const tx_reprice *from, int scaled)
{
    cost_model *m = &pm->pub;
    if (nw > n) nw = n;
    /* the biggest tables first, so that no thread is left with one big
     * table while the others have finished (longest first scheduling) */
    edge_size *order = lw_malloc(sizeof(edge_size) * ((size_t)n + 1));
    for (int i = 0; i < n; i++)
        order[i] = (edge_size){(long)m->n_configs[m->e_from[list[i]]] * m->n_configs[m->e_to[list[i]]], list[i]};
    qsort(order, (size_t)n, sizeof *order, edge_size_cmp);
    int *by_size = lw_malloc(sizeof(int) * ((size_t)n + 1));
    for (int i = 0; i < n; i++) by_size[i] = order[i].edge;
    free(order);
    tx_work w = {pm, by_size, n, 0, PTHREAD_MUTEX_INITIALIZER, cancel, from, scaled};
    pthread_t th[8];
    int started = 0;
    for (int t = 0; t < nw && nw > 1; t++)
        if (lw_thread_start(&th[t], tx_worker, &w) == 0) started++;
    if (started == 0) tx_worker(&w); /* one worker wanted, or no threads to be had: do it here */
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    pthread_mutex_destroy(&w.lock);
    free(by_size);
}

/* ---- the phases of a build ---- */

/* Whether a build was asked to give up (cancel NULL: never). */
static int cancelled(const atomic_int *cancel)
{
    return cancel && atomic_load(cancel);
}

/* Phase 1: the node tables t_c, t_s and t_c_profiled (allocated whole, rows
 * filled layer by layer). Returns 1 when cancelled part way. */
int build_node_tables(cost_model_priv *pm, const atomic_int *cancel)
{
    cost_model *m = &pm->pub;
    int L = m->n_layers;
    m->t_c = lw_calloc((size_t)L, sizeof(double *));
    m->t_s = lw_calloc((size_t)L, sizeof(double *));
    m->t_c_profiled = lw_calloc((size_t)L, sizeof(unsigned char *));
    tx_scratch sc;
    scratch_init(&sc, m->gpus, pm->nodes_used);
    int stop = 0;
    for (int i = 0; i < L && !(stop = cancelled(cancel)); i++) {
        int n = m->n_configs[i];
        m->t_c[i] = lw_malloc(sizeof(double) * (size_t)n);
        m->t_s[i] = lw_malloc(sizeof(double) * (size_t)n);
        m->t_c_profiled[i] = lw_calloc((size_t)n, 1);
        for (int k = 0; k < n; k++) {
            int prof_hit = 0;
            m->t_c[i][k] = cost_t_c(m, i, &m->configs[i][k], &prof_hit);
            m->t_c_profiled[i][k] = (unsigned char)prof_hit;
            m->t_s[i][k] = t_s_eval(pm, &sc, i, &m->configs[i][k], NULL);
        }
    }
    scratch_free(&sc);
    if (!stop) tie_tables_build(pm); /* the two layers' configs squared, on every worker */
    return stop;
}

/* Edge description k with every dimension whose element counts scale by a
 * whole factor brought to its smallest form: a dimension the consumer reads
 * as it is (sizes equal), whole, or at an offset (a concat), whose sizes
 * (and offset) are multiples of f, with S / f a multiple of L, the largest
 * degree any config can have (the largest power of two up to the GPU
 * count), becomes the same at S / f. Every piece boundary there, j x S / D
 * for a degree D dividing L, is f times the smaller one's, so every overlap
 * along it is too, while piece counts and which overlaps are empty are
 * not changed: every element count of every receiver of every entry is f
 * times the smaller problem's, and a receiver dominating another still
 * does. Returns the product of the factors (1: nothing scaled). */
static double edge_canon(long L, edge_desc *k)
{
    double f = 1;
    if (k->flat) return 1;
    for (int d = 0; d < NDIMS; d++) {
        long g = k->Sp[d] / L;
        if (g < 2 || k->Sp[d] % L) continue;
        if (k->kind[d] == MAP_SAME && k->Sc[d] == k->Sp[d]) {
            k->Sp[d] = k->Sc[d] = L;
        } else if (k->kind[d] == MAP_ALL) {
            k->Sp[d] = L;
        } else if (k->kind[d] == MAP_OFFSET && k->Sc[d] % g == 0 && (k->Sc[d] / g) % L == 0 && k->p[d] % g == 0) {
            k->Sp[d] = L;
            k->Sc[d] /= g;
            k->p[d] /= g;
        } else {
            continue;
        }
        f *= (double)g;
    }
    return f;
}

/* Whether layers a and b have the same configs. */
static int same_configs(const cost_model *m, int a, int b)
{
    return m->n_configs[a] == m->n_configs[b] &&
           memcmp(m->configs[a], m->configs[b], sizeof(config) * (size_t)m->n_configs[a]) == 0;
}

/* Of the edges todo[0..n_todo-1] (keys: their descriptions, as compared for
 * sharing), those that are the same problem as an earlier one up to a
 * whole factor on every element count (edge_canon), with the same configs
 * at both ends, are priced from its kept counts (scale_src, scale_num /
 * scale_den, in lowest terms): moved to the end of todo, after the edges
 * computed. Only where tables come from the closed form, whose counts are
 * kept. Returns how many are computed. */
static int plan_scaled_tables(cost_model_priv *pm, const edge_desc *keys, int *todo, int n_todo)
{
    cost_model *m = &pm->pub;
    if (!pm->closed_form_ok || pm->tx_reference || pm->tx_oracle || n_todo < 2) return n_todo;
    long L = 1;
    while (2 * L <= m->gpus) L *= 2;
    int ne = m->n_edges;
    edge_desc *canon = lw_malloc(sizeof(edge_desc) * ((size_t)n_todo + 1));
    double *f = lw_malloc(sizeof(double) * ((size_t)n_todo + 1));
    int *first = lw_malloc(sizeof(int) * ((size_t)n_todo + 1)), *later = lw_malloc(sizeof(int) * ((size_t)n_todo + 1));
    pm->scale_src = lw_malloc(sizeof(int) * ((size_t)ne + 1));
    pm->scale_num = lw_malloc(sizeof(double) * ((size_t)ne + 1));
    pm->scale_den = lw_malloc(sizeof(double) * ((size_t)ne + 1));
    pm->scale_is_src = lw_calloc((size_t)ne + 1, 1);
    for (int e = 0; e < ne; e++) pm->scale_src[e] = -1;
    int n_first = 0, n_later = 0;
    for (int i = 0; i < n_todo; i++) {
        int e = todo[i], src = -1;
        canon[i] = keys[e];
        f[i] = edge_canon(L, &canon[i]);
        for (int j = 0; j < i && src < 0; j++) {
            int g = todo[j];
            if (pm->scale_src[g] < 0 && memcmp(&canon[j], &canon[i], sizeof(edge_desc)) == 0 &&
                same_configs(m, m->e_from[g], m->e_from[e]) && same_configs(m, m->e_to[g], m->e_to[e])) {
                src = g;
                long a = (long)f[i], b = (long)f[j], c = gcd_l(a, b);
                pm->scale_num[e] = (double)(a / c);
                pm->scale_den[e] = (double)(b / c);
            }
        }
        if (src < 0) {
            first[n_first++] = e;
        } else {
            pm->scale_src[e] = src;
            pm->scale_is_src[src] = 1;
            later[n_later++] = e;
        }
    }
    memcpy(todo, first, sizeof(int) * (size_t)n_first);
    memcpy(todo + n_first, later, sizeof(int) * (size_t)n_later);
    free(canon);
    free(f);
    free(first);
    free(later);
    return n_first;
}

/* Phase 2: which edges' tables to compute. Edges with the same description
 * (shapes, mapping, and hence config lists) have the same table: compute it
 * once (same[e]: the edge whose table e copies, or -1; todo: the edges to
 * compute). Where the consumer needs the whole producer range (MAP_ALL),
 * its own size along that dimension matters only through which degrees it
 * allows, i.e. up to the GPU count: e.g. every 1x1 convolution reading one
 * Inception concat. Allocates the t_x rows of the edges to compute (the
 * others share them: share_tables). */
int plan_edge_tables(cost_model_priv *pm, int *same, int *todo, int scale, int *n_first)
{
    cost_model *m = &pm->pub;
    int ne = m->n_edges, n_todo = 0;
    edge_desc *keys = lw_malloc(sizeof(edge_desc) * ((size_t)ne + 1));
    for (int e = 0; e < ne; e++) {
        keys[e] = pm->desc[e];
        if (!keys[e].flat)
            for (int k = 0; k < NDIMS; k++)
                if (keys[e].kind[k] == MAP_ALL && keys[e].Sc[k] > m->gpus) keys[e].Sc[k] = m->gpus;
    }
    for (int e = 0; e < ne; e++) {
        int np = m->n_configs[m->e_from[e]], nc = m->n_configs[m->e_to[e]];
        same[e] = -1;
        for (int f = 0; f < e; f++)
            if (same[f] < 0 && memcmp(&keys[f], &keys[e], sizeof(edge_desc)) == 0) {
                same[e] = f;
                break;
            }
        if (same[e] < 0) {
            m->t_x[e] = lw_malloc(sizeof(double) * (size_t)np * (size_t)nc);
            todo[n_todo++] = e;
            m->tx_pairs_computed += (long)np * nc;
        } else {
            m->tx_pairs_reused += (long)np * nc;
        }
    }
    *n_first = n_todo;
    if (scale) *n_first = plan_scaled_tables(pm, keys, todo, n_todo);
    free(keys);
    return n_todo;
}

/* Edges that are the same problem as an earlier one (same[e] >= 0) share
 * its table: the same doubles, not a copy (ResNet-50 at 256 GPUs: copies
 * would be 176 of its 225 MB of tables, each page a fault to fill). Nothing
 * writes a table once built; cost_model_free frees the owner's alone. */
static void share_tables(cost_model_priv *pm, const int *same, const atomic_int *cancel)
{
    cost_model *m = &pm->pub;
    if (cancelled(cancel)) return; /* the owners' tables may be part filled: not shared, freed once */
    if (!pm->tx_shared) pm->tx_shared = lw_calloc((size_t)m->n_edges + 1, 1);
    for (int e = 0; e < m->n_edges; e++)
        if (same[e] >= 0) {
            m->t_x[e] = m->t_x[same[e]];
            pm->tx_shared[e] = 1;
        }
}

/* Phase 3: the tables of edges todo[0..n_first-1] (computed, or re-priced
 * from `from`), then those of todo[n_first..n_todo-1], priced from the
 * kept counts of the first ones (plan_scaled_tables); the edges that are
 * the same problem share those (share_tables). Returns 1 when cancelled
 * part way. */
int compute_edge_tables(cost_model_priv *pm, const int *same, const int *todo, int n_first, int n_todo,
                        int nw, const atomic_int *cancel, const tx_reprice *from)
{
    run_edges(pm, todo, n_first, nw, cancel, from, 0);
    if (n_todo > n_first && !cancelled(cancel)) run_edges(pm, todo + n_first, n_todo - n_first, nw, cancel, NULL, 1);
    share_tables(pm, same, cancel);
    return cancelled(cancel);
}

/* ---- a build too large for the machine ---- */

/* The entries of edge e's table its build computes: a symmetric table
 * (edge_mirrors) half of it and its diagonal. */
static double entries_to_compute(const cost_model_priv *pm, int e)
{
    const double np = pm->pub.n_configs[pm->pub.e_from[e]], nc = pm->pub.n_configs[pm->pub.e_to[e]];
    return edge_mirrors(pm, e) ? np * (np + 1) / 2 : np * nc;
}

/* The most memory one thread's overlap lists take while it computes an
 * edge's table: with the closed or pair form, every pair of degrees (Dp,
 * Dc) the edge's configs meet in a dimension gets dense tables of 32
 * bytes per piece pair (dim_list_build_dense), so a dimension costs 32 x
 * (the sum of the producer's degrees) x (the sum of the consumer's); the
 * sample dimension at 1024 GPUs 134 MB an edge. Freed edge by edge. */
static double dense_lists_bytes(const cost_model_priv *pm, const int *todo, int n_todo)
{
    const cost_model *m = &pm->pub;
    if (!(pm->closed_form_ok || pm->pair_form_ok) || pm->tx_reference) return 0;
    double most = 0;
    for (int q = 0; q < n_todo; q++) {
        const int e = todo[q], a = m->e_from[e], b = m->e_to[e];
        if (pm->desc[e].flat) continue; /* task by task: no lists */
        double here = 0;
        for (int d = 0; d < NDIMS; d++) {
            /* the degrees are powers of two: the sum of the distinct ones met is their OR */
            unsigned sum_p = 0, sum_c = 0;
            for (int k = 0; k < m->n_configs[a]; k++) sum_p |= (unsigned)m->configs[a][k].deg[d];
            for (int k = 0; k < m->n_configs[b]; k++) sum_c |= (unsigned)m->configs[b][k].deg[d];
            here += 32.0 * sum_p * sum_c;
        }
        if (here > most) most = here;
    }
    return most;
}

/* Refuses (1, err set) a build this machine cannot finish in reasonable
 * time and memory, before it starts: the time from a sample of the entries
 * to compute, timed here (spread over the entries; the overlap lists, built
 * once per edge and degree pair in a build, left out) and shared among the
 * worker threads; the memory from the entries, which the tables and the
 * search's own tables each hold about once, and each thread's overlap lists
 * (dense_lists_bytes). Small builds (under 2^20 entries to compute) are
 * never refused. */
static int refuse_too_large(cost_model_priv *pm, const int *todo, int n_todo, int threads, double tx_entries,
                            lw_error *err)
{
    const cost_model *m = &pm->pub;
    /* the tables (8 bytes an entry, which the search reads in place) and
     * the search's own, about as many entries again with an argmin each */
    double unique = 0, bytes = tx_entries * (8.0 + 12.0);
    for (int q = 0; q < n_todo; q++) unique += entries_to_compute(pm, todo[q]);
    if (unique < (double)(1L << 20) || n_todo == 0) return 0;
    bytes += dense_lists_bytes(pm, todo, n_todo) * (threads > 0 ? threads : 1);
    enum { SAMPLES = 128 };
    double spent = 0;
    edge_lists *el = lw_calloc(1, sizeof *el);
    tx_scratch sc;
    scratch_init(&sc, m->gpus, pm->nodes_used);
    /* samples spread over the entries, not the edges: an edge's share of
     * them is its share of the entries (a flatten's few entries cost
     * several times a convolution's, and one sample an edge would weigh
     * them as much as an edge of 20 times as many) */
    double seen = 0;
    int at = 0;
    for (int q = 0; q < SAMPLES; q++) {
        const double want = (q + 0.5) * unique / SAMPLES;
        for (;; at++) {
            const double here = entries_to_compute(pm, todo[at]);
            if (seen + here > want || at == n_todo - 1) break;
            seen += here;
        }
        int e = todo[at];
        int np = m->n_configs[m->e_from[e]], nc = m->n_configs[m->e_to[e]];
        long k = ((long)q * 7919L) % ((long)np * nc);
        const config *cp = &m->configs[m->e_from[e]][k / nc], *cc = &m->configs[m->e_to[e]][k % nc];
        /* the first call builds the overlap lists, which a table build
         * shares among the entries of an edge: time the second */
        memo_lend(&sc, el);
        tx_eval(pm, &sc, el, &pm->desc[e], cp, cc, NULL);
        memo_lend(&sc, el); /* but not its slices and nodes, which would make the second call all cache hits */
        double t0 = lw_now();
        tx_eval(pm, &sc, el, &pm->desc[e], cp, cc, NULL);
        spent += lw_now() - t0;
        lists_free(el);
    }
    free(el);
    scratch_free(&sc);
    double secs = spent / SAMPLES * unique / (threads > 0 ? threads : 1);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double phys = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    const char *env = getenv("LAYERWISE_MAX_BUILD_S");
    double limit = env && env[0] ? strtod(env, NULL) : COST_MAX_BUILD_S;
    int slow = secs > limit, big = phys > 0 && bytes > 0.75 * phys;
    if (!slow && !big) return 0;
    lw_fail(err, 1,
            "%s on %d GPUs is too large for this machine: its cost tables hold %.3g entries (%.3g to compute) and "
            "would take about %.0f s on %d thread%s (estimated from %d entries timed now) and about %.0f MB with "
            "the search (this machine has %.0f MB; the limits are %.0f s and 3/4 of the memory); choose fewer GPUs, "
            "or evaluate a given strategy (eval)",
            m->net->name, m->gpus, tx_entries, unique, secs, threads, threads == 1 ? "" : "s", SAMPLES, bytes / 1e6,
            phys / 1e6, limit);
    return 1;
}

/* ---- building ---- */

/* A model with its tables: set up, the node tables, then the t_x tables
 * planned (shared, scaled), checked against the machine, and computed;
 * with keep_prices, keeping the counts what-ifs re-price. NULL with err
 * set when refused, out of range or cancelled. */
static cost_model *build_tables(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                                const atomic_int *cancel, atomic_long *evaluated, int keep_prices, lw_error *err)
{
    double t0 = lw_now();
    cost_model_priv *pm = model_setup(net, cl, prof, gpus, batch, COST_MAX_GPUS, err);
    if (!pm) return NULL;
    pm->evaluated_live = evaluated;
    cost_model *m = &pm->pub;
    int ne = m->n_edges;
    int *same = NULL, *todo = NULL;
    m->t_x = lw_calloc((size_t)ne + 1, sizeof(double *));
    double tx_entries = 0;
    for (int e = 0; e < ne; e++) tx_entries += (double)m->n_configs[m->e_from[e]] * m->n_configs[m->e_to[e]];
    if (tx_entries > (double)COST_MAX_TX_ENTRIES) {
        lw_fail(err, 1,
                "%s on %d GPUs: the transfer tables would hold %.3g entries (%.0f MB), more than the %ld supported; "
                "choose fewer GPUs", net->name, gpus, tx_entries, tx_entries * 8 / 1e6, COST_MAX_TX_ENTRIES);
        goto fail;
    }
    if (build_node_tables(pm, cancel)) goto cancel;
    same = lw_malloc(sizeof(int) * ((size_t)ne + 1));
    todo = lw_malloc(sizeof(int) * ((size_t)ne + 1));
    int n_first, n_todo = plan_edge_tables(pm, same, todo, 1, &n_first);
    if (keep_prices) {
        pm->rp = rp_new(pm, same, todo, n_todo);
        pm->rp_num = pm->rp_den = 1;
    }
    scale_rp_begin(pm, n_first, n_todo);
    const int nw = lw_worker_count(); /* run_edges takes no more than a phase has edges */
    if (refuse_too_large(pm, todo, n_first, nw < n_first ? nw : n_first, tx_entries, err)) goto fail;
    if (compute_edge_tables(pm, same, todo, n_first, n_todo, nw, cancel, NULL)) goto cancel;
    m->tx_pairs_scaled = atomic_load(&pm->n_scaled);
    m->tx_pairs_evaluated = atomic_load(&pm->n_evaluated);
    rp_free(pm->scale_rp);
    pm->scale_rp = NULL;
    rp_drop_if_over(pm);
    free(same);
    free(todo);
    pm->evaluated_live = NULL; /* the caller's, for this build only */
    m->build_ms = (lw_now() - t0) * 1e3;
    return m;
cancel:
    lw_fail(err, 1, "cancelled");
fail: /* err is set; frees the tables filled so far (the rest are NULL) */
    free(same);
    free(todo);
    cost_model_free(m);
    return NULL;
}

/* The builds of cost.h. */
cost_model *cost_model_build(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                             lw_error *err)
{
    return cost_model_build_cancellable(net, cl, prof, gpus, batch, NULL, err);
}

cost_model *cost_model_build_cancellable(const network *net, const cluster *cl, const profile *prof, int gpus,
                                         long batch, const atomic_int *cancel, lw_error *err)
{
    return build_tables(net, cl, prof, gpus, batch, cancel, NULL, 0, err);
}

cost_model *cost_model_build_for_whatifs(const network *net, const cluster *cl, const profile *prof, int gpus,
                                         long batch, const atomic_int *cancel, atomic_long *evaluated, lw_error *err)
{
    return build_tables(net, cl, prof, gpus, batch, cancel, evaluated, 1, err);
}

/* The t_s tables again, for another sync scheme (cost.h). */
void cost_model_refresh_sync(cost_model *m)
{
    if (!m->t_s) return; /* no tables: every t_s is computed when asked */
    cost_model_priv *pm = (cost_model_priv *)m;
    tx_scratch sc;
    scratch_init(&sc, m->gpus, pm->nodes_used);
    for (int i = 0; i < m->n_layers; i++)
        for (int k = 0; k < m->n_configs[i]; k++) m->t_s[i][k] = t_s_eval(pm, &sc, i, &m->configs[i][k], NULL);
    scratch_free(&sc);
}
