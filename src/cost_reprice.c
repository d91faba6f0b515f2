/*
 * cost_reprice: what-ifs from the counts a build kept (cost_tables.c). A
 * closed-form entry's time is linear in the prices with counts that do not
 * depend on them, so a model at other prices, at another batch or on fewer
 * GPUs prices its entries from those counts instead of computing them,
 * bit for bit as a build would; the entries the counts do not cover are
 * computed, and a table build prices an edge that is another's problem up
 * to a whole factor the same way (fill_scaled_edge).
 */
#include "cost_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A kept element count scaled: x * num / den, exact (x is a multiple of
 * den where cost_model_reuse scales to another batch, num / den =
 * rp_num / rp_den, or a build prices an edge from another's counts,
 * scale_num / scale_den; and stays below 2^53); -1 where it is not, which
 * cannot happen while the counts scale as those argue (the entry is then
 * computed). */
static inline double rp_scaled(double num, double den, double x)
{
    if (den == 1 && num == 1) return x;
    double q = x / den;
    if (q != floor(q) || q * num > 9007199254740992.0) return -1;
    return q * num;
}

/* A kept candidate unpacked, its element counts times num / den
 * (rp_scaled: -1 where that is not exact). */
static inline rp_cand rp_unpack(const rp_pack *c, double num, double den)
{
    return (rp_cand){(double)(c->own >> RP_ELEM_BITS), rp_scaled(num, den, (double)(c->own & RP_ELEM_MASK)),
                     (double)(c->far >> RP_ELEM_BITS), rp_scaled(num, den, (double)(c->far & RP_ELEM_MASK))};
}

/* Entry q of edge r at the prices (and batch) of model pm, whose cluster
 * has the closed form's uniform links: the closed form's sums in the same
 * order. -1 where a count does not scale exactly (the caller recomputes). */
static double rp_price(const cost_model_priv *pm, const rp_edge *r, long q, double num, double den)
{
    const cluster *cl = pm->pub.cl;
    const double elem_b = pm->pub.elem_bytes;
    const tx_prices pr = tx_prices_of(cl, elem_b);
    double dir[2];
    for (int k = 0; k < 2; k++) {
        double slowest = 0;
        uint32_t id = r->list[2 * q + k];
        for (uint32_t a = r->start[id]; a < r->start[id + 1]; a++) {
            const rp_cand c = rp_unpack(&r->cand[a], num, den);
            if (c.own < 0 || c.far < 0) return -1;
            double t = tx_time(&pr, c.own_n, c.own, c.far_n, c.far);
            if (t > slowest) slowest = t;
        }
        if (pm->nodes_used > 1) {
            double nic = r->nic ? rp_scaled(num, den, r->nic[2 * q + k]) : 0;
            if (nic < 0) return -1;
            double nic_bw = cl->inter.bandwidth_gbs * 1e9 * cl->nics_per_node, b = nic * elem_b;
            if (b / nic_bw > slowest) slowest = b / nic_bw;
        }
        dir[k] = slowest;
    }
    return 1e3 * (dir[0] + dir[1]);
}

/* Where model pm's configs sit among rp's: pm->rp_map (NULL rows where a
 * layer's configs are rp's, NULL altogether where every layer's are; -1 for
 * a config rp's build never had). Returns 1 where every config is among
 * rp's, 0 where some are not, -1 where the layers are not rp's. */
static int rp_map_configs(cost_model_priv *pm, const tx_reprice *rp)
{
    cost_model *m = &pm->pub;
    if (rp->n_layers != m->n_layers) return -1;
    int all = 1;
    for (int i = 0; i < m->n_layers; i++) {
        if (m->n_configs[i] == rp->n_configs[i] &&
            memcmp(m->configs[i], rp->configs[i], sizeof(config) * (size_t)m->n_configs[i]) == 0)
            continue;
        if (!pm->rp_map) pm->rp_map = lw_calloc((size_t)m->n_layers + 1, sizeof(int *));
        pm->rp_map[i] = lw_malloc(sizeof(int) * ((size_t)m->n_configs[i] + 1));
        for (int k = 0; k < m->n_configs[i]; k++)
            if ((pm->rp_map[i][k] = config_find(rp->configs[i], rp->n_configs[i], &m->configs[i][k])) < 0) all = 0;
    }
    return all;
}

/* Frees pm's map into another build's configs (rp_map_configs). */
void rp_map_free(cost_model_priv *pm)
{
    if (pm->rp_map)
        for (int i = 0; i < pm->pub.n_layers; i++) free(pm->rp_map[i]);
    free(pm->rp_map);
    pm->rp_map = NULL;
}

/* Whether the counts of config c's entries kept at rp's batch scale
 * exactly to pm's. Along the sample dimension every piece boundary is
 * i x batch / D: where
 * D divides both batches, every overlap there, and so every element count
 * a receiver gets (a product with one sample-dimension factor), scales by
 * batch / rp->batch, while piece counts and which overlaps are empty do
 * not; a receiver dominating another still does, so the kept candidates of
 * an entry whose two configs both scale are those of a build at this
 * batch, scaled. */
static int rp_scales(const cost_model_priv *pm, const tx_reprice *rp, const config *c)
{
    long D = c->deg[DIM_N];
    return pm->pub.batch == rp->batch || (pm->pub.batch % D == 0 && rp->batch % D == 0);
}

/* Entry q of edge r carried into entry qn of edge nr, the element counts
 * times num / den (exact: rp_price priced it at that scale). carried[id]:
 * 1 + the list of nr that r's list id became, 0 if not yet (one edge's
 * carry, at one scale: entries share most lists, which are then neither
 * unpacked nor looked up again). */
static void rp_carry(const rp_edge *r, long q, rp_edge *nr, long qn, double num, double den, uint32_t *carried)
{
    for (int k = 0; k < 2; k++) {
        uint32_t id = r->list[2 * q + k];
        if (nr->nic) nr->nic[2 * qn + k] = r->nic ? rp_scaled(num, den, r->nic[2 * q + k]) : 0;
        if (carried[id]) { /* carried before: the same content, so the same list of nr */
            nr->list[2 * qn + k] = carried[id] - 1;
            continue;
        }
        rp_cand c[RP_MAXC];
        int n = 0;
        for (uint32_t a = r->start[id]; a < r->start[id + 1]; a++, n++) c[n] = rp_unpack(&r->cand[a], num, den);
        nr->list[2 * qn + k] = rp_intern(nr, c, n);
        if (nr->list[2 * qn + k] != RP_NONE) carried[id] = nr->list[2 * qn + k] + 1;
    }
    if (nr->list[2 * qn] == RP_NONE || nr->list[2 * qn + 1] == RP_NONE) nr->list[2 * qn] = nr->list[2 * qn + 1] = RP_NONE;
}

/* Entry (a, b) of edge e, at qn in its table: t where it was priced from
 * entry q of r (t >= 0; its counts carried into nr at num / den, and
 * *priced counted), else computed (its counts into nr), with lists
 * borrowed on first need (*el, the caller frees). */
static double priced_or_computed(cost_model_priv *pm, tx_scratch *sc, edge_lists **el, int e, int a, int b,
                                 double t, const rp_edge *r, long q, rp_edge *nr, long qn, double num, double den,
                                 uint32_t *carried, long *priced)
{
    if (t >= 0) {
        (*priced)++;
        if (nr) rp_carry(r, q, nr, qn, num, den, carried);
        return t;
    }
    if (!*el) {
        *el = lw_calloc(1, sizeof **el);
        memo_lend(sc, *el);
    }
    return compute_entry(pm, sc, *el, e, a, b, nr);
}

/* Edge e's table of model pm from what rp kept for edge src (e itself, or
 * the edge whose table e's was in rp's build); entries that were not kept,
 * whose configs rp's build did not have, or that do not scale exactly, are
 * computed. Where pm keeps counts of its own (pm->rp, not rp: some entries
 * are computed), each entry's go there, carried over or computed. */
void rp_fill_edge(cost_model_priv *pm, const tx_reprice *rp, tx_scratch *sc, int e, int src)
{
    cost_model *m = &pm->pub;
    int from = m->e_from[e], to = m->e_to[e];
    int np = m->n_configs[from], nc = m->n_configs[to], rnc = rp->n_configs[to];
    const int *mp = pm->rp_map ? pm->rp_map[from] : NULL, *mc = pm->rp_map ? pm->rp_map[to] : NULL;
    const rp_edge *r = &rp->e[src];
    /* src's table was e's in rp's build: the same configs at both ends */
    int fs = m->e_from[src], ts = m->e_to[src];
    int kept = r->list != NULL;
    if (src != e && (rp->n_configs[fs] != rp->n_configs[from] || rp->n_configs[ts] != rnc ||
                     memcmp(rp->configs[fs], rp->configs[from], sizeof(config) * (size_t)rp->n_configs[from]) ||
                     memcmp(rp->configs[ts], rp->configs[to], sizeof(config) * (size_t)rnc)))
        kept = 0;
    rp_edge *nr = pm->rp != rp ? record_begin(pm, sc, e) : NULL;
    uint32_t *carried = nr && kept ? lw_calloc((size_t)r->n_lists + 1, sizeof *carried) : NULL;
    edge_lists *el = NULL;
    long priced = 0;
    const int mirror = edge_mirrors(pm, e);
    for (int a = 0; a < np; a++) {
        int ra = mp ? mp[a] : a, sa = rp_scales(pm, rp, &m->configs[from][a]);
        for (int b = 0; b < nc; b++) {
            if (mirror && b < a) { /* as compute_edge_table: (b, a) turned round */
                mirror_entry(m->t_x[e], nr, (long)a * nc + b, (long)b * nc + a);
                continue;
            }
            int rb = mc ? mc[b] : b;
            long q = (long)ra * rnc + rb, qn = (long)a * nc + b;
            double t = kept && ra >= 0 && rb >= 0 && sa && rp_scales(pm, rp, &m->configs[to][b]) &&
                               r->list[2 * q] != RP_NONE
                           ? rp_price(pm, r, q, pm->rp_num, pm->rp_den)
                           : -1;
            m->t_x[e][qn] =
                priced_or_computed(pm, sc, &el, e, a, b, t, r, q, nr, qn, pm->rp_num, pm->rp_den, carried, &priced);
        }
    }
    free(carried);
    if (pm->rp != rp) record_end(pm, sc, e, nr);
    atomic_fetch_add(&pm->n_repriced, priced);
    if (el) lists_free(el);
    free(el);
}

/* Edge e's table, in a build, from the kept counts of edge scale_src[e]
 * (computed before it, the same problem but for a whole factor on every
 * element count: plan_scaled_tables), scaled by scale_num[e] /
 * scale_den[e] and priced as its own entries would be: the same doubles
 * (rp_price's argument, as for another batch). Entries whose counts were
 * not kept are computed. Where the model keeps counts, e's go there,
 * carried over or computed. */
void fill_scaled_edge(cost_model_priv *pm, tx_scratch *sc, int e)
{
    cost_model *m = &pm->pub;
    const int src = pm->scale_src[e];
    const double num = pm->scale_num[e], den = pm->scale_den[e];
    const tx_reprice *from = record_rp(pm, src);
    const rp_edge *r = from ? &from->e[src] : NULL;
    const int kept = r && r->list;
    int np = m->n_configs[m->e_from[e]], nc = m->n_configs[m->e_to[e]];
    rp_edge *nr = record_begin(pm, sc, e);
    uint32_t *carried = nr && kept ? lw_calloc((size_t)r->n_lists + 1, sizeof *carried) : NULL;
    edge_lists *el = NULL;
    long priced = 0;
    const int mirror = edge_mirrors(pm, e);
    for (int a = 0; a < np; a++)
        for (int b = 0; b < nc; b++) {
            long q = (long)a * nc + b;
            if (mirror && b < a) { /* as compute_edge_table: (b, a) turned round */
                mirror_entry(m->t_x[e], nr, q, (long)b * nc + a);
                continue;
            }
            double t = kept && r->list[2 * q] != RP_NONE ? rp_price(pm, r, q, num, den) : -1;
            m->t_x[e][q] = priced_or_computed(pm, sc, &el, e, a, b, t, r, q, nr, q, num, den, carried, &priced);
        }
    free(carried);
    record_end(pm, sc, e, nr);
    atomic_fetch_add(&pm->n_scaled, priced);
    if (el) lists_free(el);
    free(el);
}

/* cost_model_reuse, cost_model_reuse_cancellable (keep 1) and
 * cost_model_reuse_fast (keep 0: the entries computed keep no counts, nor,
 * then, does the model). NULL where it declines or *cancel was raised. */
static cost_model *reuse(const cost_model *old, const cluster *cl, int gpus, long batch, int keep,
                         const atomic_int *cancel, atomic_long *evaluated)
{
    const cost_model_priv *po = (const cost_model_priv *)old;
    tx_reprice *rp = po->rp;
    int ex;
    if (!rp || !old->t_x || cl->n_overrides || cl->gpus_per_node != rp->gpus_per_node || cluster_gpus(cl) < gpus ||
        frexp(precision_elem_bytes(cl->precision), &ex) != 0.5)
        return NULL;
    double t0 = lw_now();
    lw_error err = {0};
    cost_model_priv *pm = model_setup(old->net, cl, po->prof_given, gpus, batch, COST_MAX_GPUS, &err);
    if (!pm) return NULL;
    cost_model *m = &pm->pub;
    pm->evaluated_live = evaluated;
    pm->rp_num = pm->rp_den = 1;
    int all = pm->closed_form_ok && !pm->tx_reference ? rp_map_configs(pm, rp) : -1;
    if (all < 0) goto decline;
    if (batch != rp->batch) {
        long g = gcd_l(batch, rp->batch);
        pm->rp_num = (double)(batch / g);
        pm->rp_den = (double)(rp->batch / g);
        for (int i = 0; i < m->n_layers && all; i++)
            for (int k = 0; k < m->n_configs[i] && all; k++) all = rp_scales(pm, rp, &m->configs[i][k]);
    }
    m->t_x = lw_calloc((size_t)m->n_edges + 1, sizeof(double *));
    build_node_tables(pm, NULL);
    int *same = lw_malloc(sizeof(int) * ((size_t)m->n_edges + 1));
    int *todo = lw_malloc(sizeof(int) * ((size_t)m->n_edges + 1));
    /* every entry re-priced: the model shares rp's counts; else (configs
     * rp's build never had: more GPUs, another batch) some are computed, on
     * every core, and the model keeps counts of its own, those it carried
     * over and those it computed, for the what-ifs after it; then the
     * tables that are others' scaled (plan_scaled_tables) are priced from
     * those, as in a build, rather than half re-priced, half computed */
    int n_first, n_todo = plan_edge_tables(pm, same, todo, !all, &n_first);
    if (all) {
        atomic_fetch_add(&rp->refs, 1);
        pm->rp = rp;
    } else {
        pm->rp = keep ? rp_new(pm, same, todo, n_todo) : NULL;
        scale_rp_begin(pm, n_first, n_todo);
    }
    int nw = all ? 1 : lw_worker_count();
    const int gave_up = compute_edge_tables(pm, same, todo, n_first, n_todo, nw, cancel, rp);
    free(same);
    free(todo);
    if (gave_up) goto decline;
    m->tx_pairs_repriced = atomic_load(&pm->n_repriced);
    m->tx_pairs_scaled = atomic_load(&pm->n_scaled);
    m->tx_pairs_evaluated = atomic_load(&pm->n_evaluated);
    rp_free(pm->scale_rp);
    pm->scale_rp = NULL;
    m->tx_reused = all ? 1 : 2;
    if (!all) {
        /* the model's counts are its own now: its configs, its batch */
        rp_map_free(pm);
        pm->rp_num = pm->rp_den = 1;
        rp_drop_if_over(pm);
    }
    pm->evaluated_live = NULL; /* the caller's, for this build only */
    m->build_ms = (lw_now() - t0) * 1e3;
    return m;
decline:
    cost_model_free(m);
    return NULL;
}

/* The what-ifs of cost.h, from what old's build kept. */
cost_model *cost_model_reuse(const cost_model *old, const cluster *cl, int gpus, long batch)
{
    return reuse(old, cl, gpus, batch, 1, NULL, NULL);
}

cost_model *cost_model_reuse_cancellable(const cost_model *old, const cluster *cl, int gpus, long batch,
                                         const atomic_int *cancel, atomic_long *evaluated)
{
    return reuse(old, cl, gpus, batch, 1, cancel, evaluated);
}

cost_model *cost_model_reuse_fast(const cost_model *old, const cluster *cl, int gpus, long batch,
                                  const atomic_int *cancel)
{
    return reuse(old, cl, gpus, batch, 0, cancel, NULL);
}

/* Whether m could keep counts: the closed form's t_x, within RP_MAX_BYTES (cost.h). */
int cost_model_could_keep_counts(const cost_model *m)
{
    return m->t_x && counts_fit((const cost_model_priv *)m);
}

/* Gives m the counts donor kept for exactly m's entries (cost.h). */
int cost_model_adopt_counts(cost_model *m, const cost_model *donor)
{
    cost_model_priv *pm = (cost_model_priv *)m;
    const cost_model_priv *pd = (const cost_model_priv *)donor;
    tx_reprice *rp = pd->rp;
    /* counts kept for exactly m's entries: the same network, GPUs, batch,
     * layout and configs (m then reads them as they are: no map, no
     * scale) */
    if (pm->rp || !rp || !m->t_x || donor->net != m->net || rp->gpus != m->gpus || rp->batch != m->batch ||
        rp->gpus_per_node != m->cl->gpus_per_node || rp->n_layers != m->n_layers || rp->n_edges != m->n_edges ||
        atomic_load(&rp->dropped))
        return 0;
    for (int i = 0; i < m->n_layers; i++)
        if (rp->n_configs[i] != m->n_configs[i] ||
            memcmp(rp->configs[i], m->configs[i], sizeof(config) * (size_t)m->n_configs[i]))
            return 0;
    atomic_fetch_add(&rp->refs, 1);
    pm->rp = rp;
    pm->rp_num = pm->rp_den = 1;
    return 1;
}

cost_model *cost_model_reprice(const cost_model *old, const cluster *cl)
{
    return cost_model_reuse(old, cl, old->gpus, old->batch);
}


/* The bytes of counts m holds for what-ifs (cost.h). */
long cost_model_kept_bytes(const cost_model *m)
{
    const tx_reprice *rp = ((const cost_model_priv *)m)->rp;
    return rp ? atomic_load(&rp->bytes) : 0;
}
