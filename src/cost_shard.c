/*
 * cost_shard: t_x piece by piece for the entries the closed forms do not
 * describe: a producer or consumer config with a contraction split (r,
 * partial sums) or replicas (x). The semantics (data/doc/cost-model.md,
 * Partial sums and replicas):
 *  - a producer with r > 1 reduces its partial sums first: a ring
 *    reduce-scatter among each group of r tasks (consecutive GPUs) into the
 *    scattered layout (r folded into the scatter dimension: the sequence of
 *    a rank-3 tensor), then the ordinary transfer from that layout. In
 *    backward each of its r tasks needs the gradient of its whole piece:
 *    free where it finds all of it on its own GPU (a replicated consumer
 *    there), else the ordinary transfer to the scattered layout and a ring
 *    all-gather among the r;
 *  - a producer with x > 1 serves each consumer task from the replica
 *    nearest to it (its own GPU, else its node, else the lowest-numbered);
 *    its replicas need the gradient of the whole piece, as the r above,
 *    except where the readers of each piece are exactly its replicas' GPUs,
 *    one each, reading all of it (partial input gradients: a
 *    column-parallel linear reading a replicated LayerNorm): one ring
 *    all-reduce among them (allreduce_groups);
 *  - a consumer with x > 1: its replicas need the same input: free where
 *    each finds it on its own GPU, else received once in the scattered
 *    layout (x folded into the scatter dimension) and ring all-gathered
 *    among them. In backward only the replica nearest a receiver sends it
 *    the gradient (they hold the same);
 *  - a consumer with r > 1 reads, in its task with r coordinate j, slice j
 *    of r of the producer's features (edge_desc rslice; an embedding reads
 *    every id).
 * A transfer is the paper's: every receiver takes its pieces one after
 * another, receivers in parallel, a node's inter-node bytes shared by its
 * NICs (phase_time). The collectives come from cost_collective.c
 * (groups_allreduce_s: a reduce-scatter or an all-gather is half of it).
 * These entries are never kept for re-pricing (their counts are not the
 * closed form's): what-ifs compute them again.
 */
#include "cost_internal.h"

#include <stdlib.h>
#include <string.h>

/* How a tensor is laid out over GPUs: pieces per dimension (row-major),
 * then per piece `sub` consecutive GPUs. On the producer side the sub GPUs
 * of a piece are replicas of it; on the consumer side they are its r
 * tasks (rslice: each needs its slice of the features; else all needing
 * the same) times its x replicas (rep). */
typedef struct layout {
    int deg[NDIMS];
    int r;     /* consumer: r tasks per piece, distinct */
    int rep;   /* replicas per piece (or per r task), consecutive, innermost */
} layout;

static int layout_pieces(const layout *l)
{
    return l->deg[0] * l->deg[1] * l->deg[2] * l->deg[3];
}

/* The scatter dimension of a rank-`rank` tensor of sizes S for a layout of
 * degrees deg folded f ways: the sequence (rank 3) where it has room,
 * else the features where nothing outside them is split after them (task
 * numbers stay the same: the folded degree is innermost of the tensor's). */
static int scatter_dim(int rank, const long *S, const int *deg, int f)
{
    if (rank == 3 && S[DIM_H] >= (long)deg[DIM_H] * f) return DIM_H;
    if (deg[DIM_H] == 1 && deg[DIM_W] == 1) return DIM_C;
    return DIM_H;
}

/* The producer's layouts: its own (each of its r x x GPUs of a piece
 * holding, or needing, the whole piece) and the scattered one. */
static layout prod_own(const config *cp)
{
    layout l = {{cp->deg[0], cp->deg[1], cp->deg[2], cp->deg[3]}, 1, cp->deg[DIM_R] * cp->deg[DIM_X]};
    return l;
}

static layout fold(const layout *own, int rank, const long *S, int f)
{
    layout l = *own;
    l.deg[scatter_dim(rank, S, own->deg, f)] *= f;
    l.rep /= f;
    return l;
}

/* What the evaluation reads, in one place. */
typedef struct shard_ctx {
    const cost_model_priv *pm;
    const tx_scratch *sc;
    const edge_desc *d;
    int G;
    int gpn;
    double eb;
    /* per dimension (and the consumer's r slices along C), scratch lists
     * of overlapping pieces: index and overlap */
    int *idx[NDIMS];
    long *ov[NDIMS];
    long *clo[NDIMS], *chi[NDIMS]; /* backward: each consumer piece's need range, per dimension */
} shard_ctx;

/* The GPU among [base, base + n) nearest GPU g: g itself, else the first
 * on g's node, else base. */
static inline int nearest(const shard_ctx *x, int base, int n, int g)
{
    if (n == 1 || (g >= base && g < base + n)) return n == 1 ? base : g;
    /* GPU k is on node k / gpn (cluster_node_of): the node's GPUs are consecutive */
    const int lo = g / x->gpn * x->gpn, first = base > lo ? base : lo;
    return first < base + n && first < lo + x->gpn ? first : base;
}

/* One move of v elements from GPU src to GPU dst (dst receives it after
 * its others): its time, and the NIC bytes across nodes. */
static inline void move(const shard_ctx *x, double *recv, double *nic_in, double *nic_out, int dst, int src, double v)
{
    const cost_model *m = &x->pm->pub;
    const double b = v * x->eb;
    recv[dst] += m->lat_s[(size_t)dst * x->G + src] + b * m->inv_bw[(size_t)dst * x->G + src];
    const int nd = x->pm->node_of[dst], ns = x->pm->node_of[src];
    if (nd != ns) {
        nic_in[nd] += b;
        nic_out[ns] += b;
    }
}

static long ov1(long a0, long a1, long b0, long b1)
{
    long lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

/* The range of the producer's dimension k that consumer piece j (of
 * degree D along k; along C, with rs r slices, j = piece x rs + slice)
 * needs. */
static void cons_range(const edge_desc *d, int k, int D, int rs, int j, long *lo, long *hi)
{
    if (k != DIM_C || rs <= 1) {
        need_range(d, k, D, j, lo, hi);
        return;
    }
    need_range(d, k, D, j / rs, lo, hi);
    long a = piece_lo(d->Sp[DIM_C], rs, j % rs), b = piece_hi(d->Sp[DIM_C], rs, j % rs);
    if (a > *lo) *lo = a;
    if (b < *hi) *hi = b;
    if (*hi < *lo) *hi = *lo;
}

/* Per dimension, the producer pieces (degree Dp along k) that [lo, hi)
 * meets, with their overlaps; returns how many. */
static int prod_span(const edge_desc *d, int k, int Dp, long lo, long hi, int *idx, long *ov)
{
    int n = 0;
    if (hi <= lo) return 0;
    int i = (int)((double)lo * Dp / (double)d->Sp[k]) - 1;
    if (i < 0) i = 0;
    for (; i < Dp && piece_lo(d->Sp[k], Dp, i) < hi; i++) {
        long o = ov1(lo, hi, piece_lo(d->Sp[k], Dp, i), piece_hi(d->Sp[k], Dp, i));
        if (o) idx[n] = i, ov[n++] = o;
    }
    return n;
}

/* Forward into the consumer layout c from the producer layout p (its
 * replicas serving the nearest receiver): every consumer GPU receives what
 * it needs; seconds (phase_time), elements moved added to *elems. */
static double forward_phase(const shard_ctx *x, const layout *p, const layout *c, double *elems, int probe)
{
    const cost_model_priv *pm = x->pm;
    const tx_scratch *sc = x->sc;
    const size_t nn = (size_t)(pm->nodes_used > 0 ? pm->nodes_used : 1);
    memset(sc->recv_f, 0, sizeof(double) * (size_t)x->G);
    memset(sc->nic_in_f, 0, sizeof(double) * nn);
    memset(sc->nic_out_f, 0, sizeof(double) * nn);
    const int rs = x->d->rslice ? c->r : 1;
    int cnt[NDIMS], j[NDIMS] = {0, 0, 0, 0};
    const int units = layout_pieces(c) * c->r;
    for (int u = 0; u < units; u++) {
        /* unit u: piece coordinates (row-major), then its r task */
        int t = u / c->r, rc = u % c->r;
        for (int k = NDIMS - 1; k >= 0; k--) j[k] = t % c->deg[k], t /= c->deg[k];
        for (int k = 0; k < NDIMS; k++) {
            long lo, hi;
            cons_range(x->d, k, c->deg[k], rs, k == DIM_C && rs > 1 ? j[k] * rs + rc : j[k], &lo, &hi);
            cnt[k] = prod_span(x->d, k, p->deg[k], lo, hi, x->idx[k], x->ov[k]);
        }
        for (int q = 0; q < c->rep; q++) {
            const int g = u * c->rep + q;
            for (int a = 0; a < cnt[0]; a++)
                for (int b = 0; b < cnt[1]; b++)
                    for (int e = 0; e < cnt[2]; e++)
                        for (int f = 0; f < cnt[3]; f++) {
                            int piece = ((x->idx[0][a] * p->deg[1] + x->idx[1][b]) * p->deg[2] + x->idx[2][e]) *
                                            p->deg[3] +
                                        x->idx[3][f];
                            int src = nearest(x, piece * p->rep, p->rep, g);
                            if (src == g) continue;
                            if (probe) return -1;
                            double v = (double)x->ov[0][a] * (double)x->ov[1][b] * (double)x->ov[2][e] *
                                       (double)x->ov[3][f];
                            move(x, sc->recv_f, sc->nic_in_f, sc->nic_out_f, g, src, v);
                            *elems += v;
                        }
        }
    }
    return phase_time(pm, sc->recv_f, sc->nic_in_f, sc->nic_out_f);
}

/* Backward: every GPU of the producer layout p receives the gradient of
 * its piece from the consumer tasks (layout c) that read part of it, each
 * from the replica nearest to it; seconds, elements added to *elems. */
static double backward_phase(const shard_ctx *x, const layout *p, const layout *c, double *elems, int probe)
{
    const cost_model_priv *pm = x->pm;
    const tx_scratch *sc = x->sc;
    const size_t nn = (size_t)(pm->nodes_used > 0 ? pm->nodes_used : 1);
    memset(sc->recv_b, 0, sizeof(double) * (size_t)x->G);
    memset(sc->nic_in_b, 0, sizeof(double) * nn);
    memset(sc->nic_out_b, 0, sizeof(double) * nn);
    const int rs = x->d->rslice ? c->r : 1;
    int cnt[NDIMS], i[NDIMS];
    const int pieces = layout_pieces(p);
    for (int k = 0; k < NDIMS; k++)
        for (int jj = 0, n = c->deg[k] * (k == DIM_C ? rs : 1); jj < n; jj++)
            cons_range(x->d, k, c->deg[k], k == DIM_C ? rs : 1, jj, &x->clo[k][jj], &x->chi[k][jj]);
    for (int pc = 0; pc < pieces; pc++) {
        int t = pc;
        for (int k = NDIMS - 1; k >= 0; k--) i[k] = t % p->deg[k], t /= p->deg[k];
        /* per dimension the consumer pieces (along C with their r slices
         * where the consumer slices: index piece x rs + slice) whose need
         * meets this piece */
        for (int k = 0; k < NDIMS; k++) {
            long lo = piece_lo(x->d->Sp[k], p->deg[k], i[k]), hi = piece_hi(x->d->Sp[k], p->deg[k], i[k]);
            const int n = c->deg[k] * (k == DIM_C ? rs : 1);
            cnt[k] = 0;
            for (int jj = 0; jj < n; jj++) {
                long o = ov1(x->clo[k][jj], x->chi[k][jj], lo, hi);
                if (o) x->idx[k][cnt[k]] = jj, x->ov[k][cnt[k]++] = o;
            }
        }
        for (int q = 0; q < p->rep; q++) {
            const int g = pc * p->rep + q;
            for (int a = 0; a < cnt[0]; a++)
                for (int b = 0; b < cnt[1]; b++)
                    for (int e = 0; e < cnt[2]; e++)
                        for (int f = 0; f < cnt[3]; f++) {
                            int jc = x->idx[1][b], rc0 = 0, nr = c->r;
                            if (rs > 1) rc0 = jc % rs, jc /= rs, nr = 1; /* one r task: its slice */
                            int piece = ((x->idx[0][a] * c->deg[1] + jc) * c->deg[2] + x->idx[2][e]) * c->deg[3] +
                                        x->idx[3][f];
                            double v = (double)x->ov[0][a] * (double)x->ov[1][b] * (double)x->ov[2][e] *
                                       (double)x->ov[3][f];
                            for (int rc = rc0; rc < rc0 + nr; rc++) {
                                const int unit = piece * c->r + rc;
                                int src = nearest(x, unit * c->rep, c->rep, g);
                                if (src == g) continue;
                                if (probe) return -1;
                                move(x, sc->recv_b, sc->nic_in_b, sc->nic_out_b, g, src, v);
                                *elems += v;
                            }
                        }
        }
    }
    return phase_time(pm, sc->recv_b, sc->nic_in_b, sc->nic_out_b);
}

/* Whether each producer piece's replicas (layout p: GPUs [i rep, i rep +
 * rep)) are read, every one whole, by exactly the consumer tasks on those
 * GPUs, one on each, and by no other (c not replicated): then each holds
 * a partial gradient of the whole piece (a column-parallel linear reading
 * a replicated LayerNorm), and their sum is one ring all-reduce among
 * them, as Megatron runs it. */
static int allreduce_groups(const shard_ctx *x, const layout *p, const layout *c)
{
    if (c->rep != 1 || p->rep < 2) return 0;
    const int rs = x->d->rslice ? c->r : 1;
    for (int k = 0; k < NDIMS; k++)
        for (int jj = 0, n = c->deg[k] * (k == DIM_C ? rs : 1); jj < n; jj++)
            cons_range(x->d, k, c->deg[k], k == DIM_C ? rs : 1, jj, &x->clo[k][jj], &x->chi[k][jj]);
    int i[NDIMS], cnt[NDIMS];
    for (int pc = 0, pieces = layout_pieces(p); pc < pieces; pc++) {
        int t = pc, total = 1;
        for (int k = NDIMS - 1; k >= 0; k--) i[k] = t % p->deg[k], t /= p->deg[k];
        for (int k = 0; k < NDIMS; k++) {
            long lo = piece_lo(x->d->Sp[k], p->deg[k], i[k]), hi = piece_hi(x->d->Sp[k], p->deg[k], i[k]);
            cnt[k] = 0;
            for (int jj = 0, n = c->deg[k] * (k == DIM_C ? rs : 1); jj < n; jj++) {
                long o = ov1(x->clo[k][jj], x->chi[k][jj], lo, hi);
                if (o && o != hi - lo) return 0; /* a reader of part of it */
                if (o) x->idx[k][cnt[k]++] = jj;
            }
            total *= cnt[k];
        }
        if (total * (rs > 1 ? 1 : c->r) != p->rep) return 0;
        /* the readers' GPUs: the group's own */
        for (int a = 0; a < cnt[0]; a++)
            for (int b = 0; b < cnt[1]; b++)
                for (int e = 0; e < cnt[2]; e++)
                    for (int f = 0; f < cnt[3]; f++) {
                        int jc = x->idx[1][b], rc0 = 0, nr = c->r;
                        if (rs > 1) rc0 = jc % rs, jc /= rs, nr = 1;
                        int piece = ((x->idx[0][a] * c->deg[1] + jc) * c->deg[2] + x->idx[2][e]) * c->deg[3] +
                                    x->idx[3][f];
                        for (int rc = rc0; rc < rc0 + nr; rc++) {
                            int g = piece * c->r + rc;
                            if (g < pc * p->rep || g >= (pc + 1) * p->rep) return 0;
                        }
                    }
    }
    return 1;
}

/* The most elements any consumer piece of layout c needs (no r slices:
 * a replicated consumer has none). */
static double max_need(const edge_desc *d, const layout *c)
{
    double v = 1;
    for (int k = 0; k < NDIMS; k++) {
        long most = 0;
        for (int j = 0; j < c->deg[k]; j++) {
            long lo, hi;
            need_range(d, k, c->deg[k], j, &lo, &hi);
            if (hi - lo > most) most = hi - lo;
        }
        v *= (double)most;
    }
    return v;
}

/* Elements of the largest piece of a layout's tensor (sizes S). */
static double piece_elems(const long *S, const int *deg)
{
    double v = 1;
    for (int k = 0; k < NDIMS; k++) v *= (double)((S[k] + deg[k] - 1) / deg[k]);
    return v;
}

/* Ring bytes one reduce-scatter or all-gather of `bytes` among n_groups
 * groups of n moves across GPUs: (n - 1) / n of the buffer from each. */
static double coll_bytes(int n_groups, int n, double bytes)
{
    return n > 1 ? (double)n_groups * (n - 1) * bytes : 0;
}

/* t_x of the entry (cp, cc) of edge d, in ms (cost_shard.c's head);
 * bytes_out (may be NULL): cross-GPU bytes, forward and backward,
 * collectives included; fwd_ms (may be NULL): the forward part. */
double shard_eval(const cost_model_priv *pm, const tx_scratch *sc, const edge_desc *d, const config *cp,
                  const config *cc, double *bytes_out, double *fwd_ms)
{
    const cost_model *m = &pm->pub;
    shard_ctx x = {.pm = pm, .sc = sc, .d = d, .G = m->gpus, .gpn = m->cl->gpus_per_node, .eb = m->elem_bytes};
    int most = 1;
    for (int k = 0; k < NDIMS; k++) {
        int n = cp->deg[k] > cc->deg[k] * cc->deg[DIM_R] ? cp->deg[k] : cc->deg[k] * cc->deg[DIM_R];
        n *= cp->deg[DIM_R] * cp->deg[DIM_X] * cc->deg[DIM_X]; /* folded degrees */
        if (n > most) most = n;
    }
    int *ib = lw_malloc(sizeof(int) * NDIMS * (size_t)most);
    long *ob = lw_malloc(sizeof(long) * 3 * NDIMS * (size_t)most);
    for (int k = 0; k < NDIMS; k++) {
        x.idx[k] = ib + (size_t)k * most;
        x.ov[k] = ob + (size_t)k * most;
        x.clo[k] = ob + (size_t)(NDIMS + k) * most;
        x.chi[k] = ob + (size_t)(2 * NDIMS + k) * most;
    }

    const int pr = cp->deg[DIM_R], px = cp->deg[DIM_X], cx = cc->deg[DIM_X];
    const int pgroups = config_pieces(cp) / pr, pg = pr * px; /* producer pieces, GPUs per piece */
    const double pbytes = piece_elems(d->Sp, cp->deg) * m->elem_bytes;
    double elems = 0, coll = 0, need = 0, t_f, t_b;
    const layout own = prod_own(cp), scat = fold(&own, d->prank, d->Sp, pg);
    const layout cons = {{cc->deg[0], cc->deg[1], cc->deg[2], cc->deg[3]}, cc->deg[DIM_R], cx};

    /* forward: the partial sums reduce-scattered (once for all the
     * producer's consumers: on its first out-edge), then the transfer */
    const layout *src = pr > 1 ? &scat : &own;
    double rs = 0;
    if (pr > 1 && !d->rs_done) {
        rs = 0.5 * groups_allreduce_s(pm, pgroups, pr, pbytes);
        coll += coll_bytes(pgroups, pr, pbytes);
    }
    /* a replicated consumer: free where every replica finds its input on
     * its own GPU (probed), else received scattered and all-gathered */
    double e_a = 0;
    t_f = forward_phase(&x, src, &cons, &e_a, cx > 1);
    if (t_f < 0) {
        layout cs = cons;
        cs.deg[scatter_dim(d->crank, d->Sc, cons.deg, cx)] *= cx;
        cs.rep = 1;
        const int cgroups = config_tasks(cc) / cx;
        need = max_need(d, &cons);
        e_a = 0;
        t_f = forward_phase(&x, src, &cs, &e_a, 0) +
              0.5 * groups_allreduce_s(pm, cgroups, cx, need * m->elem_bytes);
        coll += coll_bytes(cgroups, cx, need * m->elem_bytes);
    }
    elems += e_a;
    t_f += rs;

    /* backward: the gradients to each producer GPU; a piece's r or x GPUs
     * that do not all find theirs locally (probed) take it scattered and
     * all-gather it */
    double e_b = 0;
    t_b = backward_phase(&x, &own, &cons, &e_b, pg > 1);
    if (t_b < 0 && px > 1 && allreduce_groups(&x, &own, &cons)) {
        e_b = 0;
        t_b = groups_allreduce_s(pm, pgroups, px, pbytes);
        coll += 2 * coll_bytes(pgroups, px, pbytes);
    } else if (t_b < 0) {
        e_b = 0;
        t_b = backward_phase(&x, &scat, &cons, &e_b, 0) + 0.5 * groups_allreduce_s(pm, pgroups, pg, pbytes);
        coll += coll_bytes(pgroups, pg, pbytes);
    }
    elems += e_b;
    free(ib);
    free(ob);
    if (bytes_out) *bytes_out = elems * m->elem_bytes + coll;
    if (fwd_ms) *fwd_ms = 1e3 * t_f;
    return 1e3 * (t_f + t_b);
}

/* cost_t_x with its parts (cost.h): piece by piece, as the generic
 * evaluator sums them (the same model as the closed forms where neither
 * config has r or x: equal to cost_t_x up to the order of the sums). */
double cost_t_x_parts(const cost_model *m, int edge, const config *cp, const config *cc, double *fwd_ms,
                      double *bwd_ms)
{
    const cost_model_priv *pm = (const cost_model_priv *)m;
    tx_scratch sc;
    scratch_init(&sc, m->gpus, pm->nodes_used);
    double f = 0, t = shard_eval(pm, &sc, &pm->desc[edge], cp, cc, NULL, &f);
    scratch_free(&sc);
    if (fwd_ms) *fwd_ms = f;
    if (bwd_ms) *bwd_ms = t - f;
    return t;
}
