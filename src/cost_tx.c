/*
 * cost_tx: t_x of one entry, the time to move an edge's tensor from the
 * producer's tasks in one config to the consumer's in another, forward and
 * backward (the gradients), in the paper's model: each GPU receives its
 * pieces one after another, GPUs in parallel, a node's traffic to other
 * nodes shared by its NICs. Three ways to the same sums: piece by piece
 * (tx_pieces; a flatten always, tx_flatten), the closed form receiver by
 * receiver (gather_lists, gather_dense; per-pair links within nodes:
 * gather_pairs), and node by node for table builds (cost_tx_nodes.c).
 */
#include "cost_internal.h"

#include <stdlib.h>
#include <string.h>

/* Read once per model, when it is set up (model_setup). */
int cost_tx_reference;
int cost_tx_oracle;

/* Time of one direction: GPUs receive in parallel, each its pieces one after
 * another; a node's inter-node traffic shares its NICs. */
double phase_time(const cost_model_priv *pm, const double *recv, const double *nic_in, const double *nic_out)
{
    const cost_model *m = &pm->pub;
    double t = 0;
    for (int g = 0; g < m->gpus; g++)
        if (recv[g] > t) t = recv[g];
    if (pm->nodes_used > 1) {
        double nic_bw = m->cl->inter.bandwidth_gbs * 1e9 * m->cl->nics_per_node;
        for (int n = 0; n < pm->nodes_used; n++) {
            double b = nic_in[n] > nic_out[n] ? nic_in[n] : nic_out[n];
            if (b / nic_bw > t) t = b / nic_bw;
        }
    }
    return t;
}

/* ---- the per-piece sums ---- */

/* What the per-piece sums of one entry add up (tx_flatten, tx_pieces).
 * Links are symmetric, so a forward piece p -> k and its gradient k -> p
 * take the same time: the forward time is charged to receiver k (rf while
 * k is summed, then recv_f[k]), the backward one to p (recv_b[p]). The
 * bytes k receives from each node are folded into the NIC totals once per
 * consumer task rather than once per piece, over the nodes it received
 * from, listed as met (on_node, n_on): a task's sources come in ascending
 * order, and a GPU's node is its index / GPUs per node, so the list is
 * ascending and the fold adds in node order without visiting every node.
 * A local of its caller: the helpers below are inlined, so its fields
 * live in registers as the locals they replace did. */
typedef struct piece_sums {
    const cost_model_priv *pm;
    const int *node;          /* [gpus] node of each GPU */
    double elem_b;            /* bytes per element */
    int multi_node;
    double *recv_f, *recv_b;  /* [gpus] seconds each GPU receives, forward and backward */
    double *nic_in_f, *nic_out_f, *nic_in_b, *nic_out_b; /* [nodes] bytes */
    double *from_node;        /* [nodes] bytes the consumer task being summed got from each node */
    int *on_node, n_on, last_node; /* the nodes it got them from, ascending; the last one */
    const double *lat_k, *inv_k; /* [gpus] its links from each GPU */
    double rf;                /* its forward time so far */
    double elems;             /* forward elements moved */
} piece_sums;

/* The sums of an entry, nothing moved yet (the NIC totals: tx_eval's). */
static inline __attribute__((always_inline)) piece_sums piece_sums_begin(const cost_model_priv *pm,
                                                                         const tx_scratch *sc)
{
    const size_t G = (size_t)pm->pub.gpus;
    memset(sc->recv_f, 0, sizeof(double) * G);
    memset(sc->recv_b, 0, sizeof(double) * G);
    return (piece_sums){.pm = pm,
                        .node = pm->node_of,
                        .elem_b = pm->pub.elem_bytes,
                        .multi_node = pm->nodes_used > 1,
                        .recv_f = sc->recv_f,
                        .recv_b = sc->recv_b,
                        .nic_in_f = sc->nic_in_f,
                        .nic_out_f = sc->nic_out_f,
                        .nic_in_b = sc->nic_in_b,
                        .nic_out_b = sc->nic_out_b,
                        .from_node = sc->from_node,
                        .on_node = sc->list_i, /* t_s's replica list, free here */
                        .last_node = -1};
}

/* Consumer task k's pieces follow: its row of the link matrix. */
static inline __attribute__((always_inline)) void piece_task_begin(piece_sums *s, int k)
{
    const cost_model *m = &s->pm->pub;
    s->lat_k = &m->lat_s[k * m->gpus];
    s->inv_k = &m->inv_bw[k * m->gpus];
    s->rf = 0;
}

/* VOL elements from producer task p to the consumer task being summed,
 * which receives them after those before (its time grows by the pair's
 * latency and the bytes at its bandwidth); p's GPU receives their
 * gradient as long in the backward phase. */
static inline __attribute__((always_inline)) void piece_move(piece_sums *s, int p, double vol)
{
    const double b = vol * s->elem_b;
    const double t = s->lat_k[p] + b * s->inv_k[p];
    s->rf += t;
    s->recv_b[p] += t;
    s->elems += vol;
    s->from_node[s->node[p]] += b;
    if (s->node[p] != s->last_node) s->on_node[s->n_on++] = s->last_node = s->node[p];
}

/* Consumer task k done: its forward time, and what it got from other
 * nodes into both nodes' NIC totals, each way (the gradients go back). */
static inline __attribute__((always_inline)) void piece_task_end(piece_sums *s, int k)
{
    s->recv_f[k] += s->rf;
    const int nk = s->node[k];
    for (int t = 0; t < s->n_on; t++) {
        const int n = s->on_node[t];
        const double b = s->from_node[n];
        s->from_node[n] = 0;
        if (!s->multi_node || n == nk || b == 0) continue;
        s->nic_in_f[nk] += b;
        s->nic_out_f[n] += b;
        s->nic_in_b[n] += b;
        s->nic_out_b[nk] += b;
    }
    s->n_on = 0;
    s->last_node = -1;
}

/* The entry from its sums: milliseconds, and the bytes moved forward and
 * backward in *bytes_out (may be NULL). */
static inline __attribute__((always_inline)) double piece_sums_end(const piece_sums *s, double *bytes_out)
{
    const double bytes = 2 * s->elems * s->elem_b;
    if (bytes_out) *bytes_out = bytes;
    if (bytes == 0) return 0;
    return 1e3 * (phase_time(s->pm, s->recv_f, s->nic_in_f, s->nic_out_f) +
                  phase_time(s->pm, s->recv_b, s->nic_in_b, s->nic_out_b));
}

/* t_x where the consumer flattens a (c, h, w) producer (edge_desc flat): a
 * box of the producer's output is not a range of the flat index, so each
 * consumer task asks the producer tasks it can meet for their volumes
 * (flat_sources, its own task left out: that stays put). */
static double tx_flatten(const cost_model_priv *pm, const tx_scratch *sc, const edge_desc *d, const config *cp,
                         const config *cc, double *bytes_out)
{
    piece_sums s = piece_sums_begin(pm, sc);
    const int nt_c = config_tasks(cc);
    int *src = sc->flat_p;
    double *src_v = sc->flat_v;
    int cco[NDIMS];
    for (int k = 0; k < nt_c; k++) {
        piece_task_begin(&s, k);
        config_task_coords(cc, k, cco);
        const int ns = flat_sources(d, cp, cc, cco, k, src, src_v);
        for (int q = 0; q < ns; q++) piece_move(&s, src[q], src_v[q]);
        piece_task_end(&s, k);
    }
    return piece_sums_end(&s, bytes_out);
}

/* t_x piece by piece, on links the closed and pair forms do not cover (a
 * link between nodes of its own, nodes whose pairs differ, GPUs per node
 * not a power of two) or as the reference (cost_tx_reference): each
 * consumer task receives from every producer task it overlaps the product
 * over dimensions of their overlaps (the lists), one piece after another,
 * at that pair's link. */
static double tx_pieces(const cost_model_priv *pm, const tx_scratch *sc, const dim_list *const dl[NDIMS],
                        const config *cp, const config *cc, double *bytes_out)
{
    piece_sums s = piece_sums_begin(pm, sc);
    const int nt_c = config_tasks(cc);
    const int d1 = cp->deg[1], d2 = cp->deg[2], d3 = cp->deg[3];
    int cco[NDIMS] = {0, 0, 0, 0};
    for (int k = 0; k < nt_c; k++) {
        if (k) /* next coordinate, row-major: cheaper than dividing per task */
            for (int q = NDIMS - 1; q >= 0; q--) {
                if (++cco[q] < cc->deg[q]) break;
                cco[q] = 0;
            }
        piece_task_begin(&s, k);
        for (int a = dl[0]->start[cco[0]]; a < dl[0]->start[cco[0] + 1]; a++) {
            int pa = dl[0]->piece[a] * d1;
            double va = (double)dl[0]->ov[a];
            for (int b = dl[1]->start[cco[1]]; b < dl[1]->start[cco[1] + 1]; b++) {
                int pb = (pa + dl[1]->piece[b]) * d2;
                double vb = va * (double)dl[1]->ov[b];
                for (int c = dl[2]->start[cco[2]]; c < dl[2]->start[cco[2] + 1]; c++) {
                    int pc = (pb + dl[2]->piece[c]) * d3;
                    double vc = vb * (double)dl[2]->ov[c];
                    for (int e = dl[3]->start[cco[3]]; e < dl[3]->start[cco[3] + 1]; e++) {
                        int p = pc + dl[3]->piece[e];
                        if (p == k) continue; /* its own GPU's piece stays put */
                        piece_move(&s, p, vc * (double)dl[3]->ov[e]);
                    }
                }
            }
        }
        piece_task_end(&s, k);
    }
    return piece_sums_end(&s, bytes_out);
}

/* ---- the closed form, receiver by receiver ---- */

/* Tasks of a config on one cluster node form a box of piece indices: with
 * power-of-two degrees and GPUs per node, an aligned run of task indices
 * spans the trailing dimensions and part of one more. */
static void node_box(const config *c, int first_task, int block, int lo[NDIMS], int hi[NDIMS])
{
    int co[NDIMS];
    config_task_coords(c, first_task, co);
    int rem = block;
    for (int d = NDIMS - 1; d >= 0; d--) {
        if (rem >= c->deg[d]) {
            lo[d] = 0;
            hi[d] = c->deg[d];
            rem /= c->deg[d];
        } else {
            lo[d] = co[d];
            hi[d] = co[d] + rem;
            rem = 1;
        }
    }
}

/* Among entries a..b-1 of one receiver piece's list (sender pieces
 * ascending, the first f), the first whose sender piece is at least x. */
static inline int first_at(int contig, const int *piece, int f, int a, int b, int x)
{
    if (contig) {
        int k = x - f;
        return k <= 0 ? a : k >= b - a ? b : a + k;
    }
    while (a < b) {
        int mid = (a + b) >> 1;
        if (piece[mid] < x) a = mid + 1;
        else b = mid;
    }
    return a;
}

/* One direction's lists, per dimension: for each receiver piece, the
 * sender pieces it overlaps (ascending, the first fs), and the running
 * sums. Returns whether every list's pieces are consecutive. */
static int dir_lists(const dim_list *const dl[NDIMS], int forward, const int *st[NDIMS], const int *pc[NDIMS],
                     const int *fs[NDIMS], const double *cum[NDIMS])
{
    int contig = 1;
    for (int d = 0; d < NDIMS; d++) {
        st[d] = forward ? dl[d]->start : dl[d]->tstart;
        pc[d] = forward ? dl[d]->piece : dl[d]->tpiece;
        fs[d] = forward ? dl[d]->first : dl[d]->tfirst;
        cum[d] = forward ? dl[d]->cum : dl[d]->tcum;
        contig &= dl[d]->contig;
    }
    return contig;
}

/* One direction of the closed form: every task of config `rcv` gathers
 * what it needs from the tasks of config `snd`. Forward, the consumer's
 * tasks gather from the producer's (the lists); backward, the producer's
 * gather gradients from the consumer's (the lists turned round). Adds the
 * bytes that cross nodes to nic_in (receiving node) and nic_out_rev (the
 * same node sends them in the other direction). Returns the slowest
 * receiver's time in seconds. Inlined into its two callers, each with
 * dense constant: the dense tables (table builds) or the lists' running
 * sums (single evaluations). */
static inline __attribute__((always_inline)) double gather_impl(const cost_model_priv *pm,
                                                                const dim_list *const dl[NDIMS], const config *rcv,
                                                                const config *snd, int forward, double *nic_in,
                                                                double *nic_out_rev, double *elems_out, rp_sink *sink,
                                                                const int dense)
{
    const cluster *cl = pm->pub.cl;
    const double elem_b = pm->pub.elem_bytes;
    const int gpn = cl->gpus_per_node;
    const int Tr = config_tasks(rcv), Ts = config_tasks(snd);
    const int Bs = Ts < gpn ? Ts : gpn;
    const tx_prices pr = tx_prices_of(cl, elem_b);
    const int multi_node = pm->nodes_used > 1, snd_pow2 = pow2_degrees(snd) && (gpn & (gpn - 1)) == 0;
    double slowest = 0, elems = 0;
    int rc[NDIMS] = {0, 0, 0, 0}, sc[NDIMS] = {0, 0, 0, 0}; /* task r's coordinates in rcv and in snd */
    int lo[NDIMS] = {0, 0, 0, 0}, hi[NDIMS] = {0, 0, 0, 0}, box_node = -1, box_ok = 0;
    /* per dimension, this direction's lists: for each receiver piece, the
     * sender pieces it overlaps (ascending) and the running sums */
    const int *st[NDIMS], *pc[NDIMS], *fs[NDIMS];
    const double *cum[NDIMS];
    const int contig = dir_lists(dl, forward, st, pc, fs, cum);
    /* dense: the running sums, one row of Ds + 1 per receiver piece; and
     * where the self-overlap sits in mat */
    const double *sum[NDIMS];
    const int *cnt[NDIMS];
    const long *mat[NDIMS];
    int row[NDIMS], ms_r[NDIMS], ms_s[NDIMS];
    if (dense) dir_tables(dl, rcv, snd, forward, sum, cnt, mat, row, ms_r, ms_s);
    for (int r = 0; r < Tr; r++) {
        if (r) {
            for (int q = NDIMS - 1; q >= 0; q--) {
                if (++rc[q] < rcv->deg[q]) break;
                rc[q] = 0;
            }
            if (r < Ts)
                for (int q = NDIMS - 1; q >= 0; q--) {
                    if (++sc[q] < snd->deg[q]) break;
                    sc[q] = 0;
                }
        }
        int node = r / gpn;
        if (node != box_node) {
            box_node = node;
            box_ok = node * gpn < Ts; /* the sender has tasks on this node */
            if (box_ok && snd_pow2) box_pow2(snd, node * gpn, Bs, lo, hi);
            else if (box_ok) node_box(snd, node * gpn, Bs, lo, hi);
        }
        double all = 1, own = 1, all_n = 1, own_n = 1;
        int ea[NDIMS], eb[NDIMS];
        for (int d = 0; d < NDIMS && dense; d++) {
            const double *ps = sum[d] + (size_t)rc[d] * row[d];
            const int *pn = cnt[d] + (size_t)rc[d] * row[d];
            all *= ps[row[d] - 1];
            all_n *= pn[row[d] - 1];
            own *= ps[hi[d]] - ps[lo[d]];
            own_n *= pn[hi[d]] - pn[lo[d]];
        }
        for (int d = 0; d < NDIMS && !dense; d++) {
            int a = ea[d] = st[d][rc[d]], b = eb[d] = st[d][rc[d] + 1], f = fs[d][rc[d]];
            all *= cum[d][b] - cum[d][a];
            all_n *= b - a;
            int x = first_at(contig, pc[d], f, a, b, lo[d]), y = first_at(contig, pc[d], f, a, b, hi[d]);
            own *= cum[d][y] - cum[d][x];
            own_n *= y - x;
        }
        if (!box_ok) own = own_n = 0;
        if (all == 0) continue;
        double v = 0;
        if (r < Ts) { /* the sender's task on the same GPU: nothing to move */
            v = 1;
            if (dense)
                v = (double)mat[0][(size_t)rc[0] * ms_r[0] + (size_t)sc[0] * ms_s[0]] *
                    (double)mat[1][(size_t)rc[1] * ms_r[1] + (size_t)sc[1] * ms_s[1]] *
                    (double)mat[2][(size_t)rc[2] * ms_r[2] + (size_t)sc[2] * ms_s[2]] *
                    (double)mat[3][(size_t)rc[3] * ms_r[3] + (size_t)sc[3] * ms_s[3]];
            for (int d = 0; d < NDIMS && v > 0 && !dense; d++) {
                int z = first_at(contig, pc[d], fs[d][rc[d]], ea[d], eb[d], sc[d]);
                v *= z < eb[d] && pc[d][z] == sc[d] ? cum[d][z + 1] - cum[d][z] : 0;
            }
        }
        double far = receiver_done(&pr, own_n, own, all_n, all, v, sink, forward ? 0 : 1, &slowest, &elems, NULL);
        if (multi_node && far > 0) {
            nic_in[node] += far * elem_b;
            nic_out_rev[node] += far * elem_b;
        }
    }
    *elems_out = elems;
    return slowest;
}

/* The two representations give the same sums (integers, exactly): the
 * dense one for table builds, the lists for single evaluations. */
double gather_dense(const cost_model_priv *pm, const dim_list *const dl[NDIMS], const config *rcv, const config *snd,
                    int forward, double *nic_in, double *nic_out_rev, double *elems_out, rp_sink *sink)
{
    return gather_impl(pm, dl, rcv, snd, forward, nic_in, nic_out_rev, elems_out, sink, 1);
}

static double gather_lists(const cost_model_priv *pm, const dim_list *const dl[NDIMS], const config *rcv,
                           const config *snd, int forward, double *nic_in, double *nic_out_rev, double *elems_out,
                           rp_sink *sink)
{
    return gather_impl(pm, dl, rcv, snd, forward, nic_in, nic_out_rev, elems_out, sink, 0);
}

/* One direction of the pair form, receiver by receiver (the closed form
 * where links within a node differ per pair: pair_form_ok): as
 * gather_impl, but what a receiver gets from its own node is summed over
 * the node's sender tasks, each at its own link; what it gets from other
 * nodes is the rest of what it needs, as in the closed form. Overlaps from
 * the dense matrix (dense) or the lists. No sink: nothing is kept for
 * what-ifs on such links. */
double gather_pairs(const cost_model_priv *pm, const dim_list *const dl[NDIMS], const config *rcv, const config *snd,
                    int forward, double *nic_in, double *nic_out_rev, double *elems_out, int dense)
{
    const cluster *cl = pm->pub.cl;
    const int gpn = cl->gpus_per_node;
    const int Tr = config_tasks(rcv), Ts = config_tasks(snd);
    const tx_prices pr = tx_prices_of(cl, pm->pub.elem_bytes);
    const int multi_node = pm->nodes_used > 1;
    const int *st[NDIMS], *pc[NDIMS], *fs[NDIMS];
    const double *cum[NDIMS], *sum[NDIMS];
    const int *cnt[NDIMS];
    const long *mat[NDIMS];
    int row[NDIMS], ms_r[NDIMS], ms_s[NDIMS];
    const int contig = dir_lists(dl, forward, st, pc, fs, cum);
    dir_tables(dl, rcv, snd, forward, sum, cnt, mat, row, ms_r, ms_s);
    double slowest = 0, elems = 0;
    for (int r = 0; r < Tr; r++) {
        int rc[NDIMS];
        config_task_coords(rcv, r, rc);
        double all = 1, all_n = 1;
        for (int d = 0; d < NDIMS; d++) {
            if (dense) {
                all *= sum[d][(size_t)rc[d] * row[d] + row[d] - 1];
                all_n *= cnt[d][(size_t)rc[d] * row[d] + row[d] - 1];
            } else {
                int a = st[d][rc[d]], b = st[d][rc[d] + 1];
                all *= cum[d][b] - cum[d][a];
                all_n *= b - a;
            }
        }
        if (all == 0) continue;
        const int node = r / gpn, s0 = node * gpn, s1 = s0 + gpn < Ts ? s0 + gpn : Ts, li = r - s0;
        pair_acc acc = {0, 0, 0, 0};
        for (int t = s0; t < s1; t++) {
            int sc[NDIMS];
            config_task_coords(snd, t, sc);
            double o = 1;
            for (int d = 0; d < NDIMS; d++) {
                double od;
                if (dense) {
                    od = (double)mat[d][(size_t)rc[d] * ms_r[d] + (size_t)sc[d] * ms_s[d]];
                } else {
                    int a = st[d][rc[d]], b = st[d][rc[d] + 1];
                    int z = first_at(contig, pc[d], fs[d][rc[d]], a, b, sc[d]);
                    od = z < b && pc[d][z] == sc[d] ? cum[d][z + 1] - cum[d][z] : 0;
                }
                o = d ? o * od : od;
            }
            const int at = li * gpn + (t - s0);
            pair_add(&acc, t == r, o, pm->pair_lat[at], pm->pair_inv[at], pr.elem_b);
        }
        const double far = pair_done(&pr, all, all_n, &acc, &slowest, &elems);
        if (multi_node && far > 0) {
            nic_in[node] += far * pr.elem_b;
            nic_out_rev[node] += far * pr.elem_b;
        }
    }
    *elems_out = elems;
    return slowest;
}

/* The sums of tx_pieces in closed form, for a cluster whose links are
 * uniform within a node and between nodes (or differ per pair within
 * nodes alike: the pair form). What a task receives splits into three
 * classes: from its own GPU (free), from the other GPUs of its node, and
 * from other nodes. The volume (and number of pieces) it needs from all
 * tasks is a product of per-dimension sums; from the tasks on its own
 * node, a product of sums over that node's box; the rest comes over the
 * network. So each task costs O(dimensions), not O(tasks it overlaps).
 * The lists get their running sums (single: a single evaluation's own
 * lists) or dense tables (a table build's, shared by the edge's entries)
 * on first use. Where no sink wants the counts and bytes_out is NULL (a
 * table build), the forward elements moved are only known in sign, which
 * is all the time needs: 0 where nothing moves. */
static double tx_closed_form(const cost_model_priv *pm, const tx_scratch *sc, edge_lists *L,
                             const dim_list *const dl[NDIMS], const config *cp, const config *cc, int single,
                             double *bytes_out)
{
    for (int q = 0; q < NDIMS; q++)
        if (single) {
            if (!dl[q]->cum) dim_list_build_sums((dim_list *)dl[q], cp->deg[q], cc->deg[q]);
        } else if (!dl[q]->mat) {
            dim_list_build_dense((dim_list *)dl[q], cp->deg[q], cc->deg[q]);
        }
    struct gn_memo *memo = L->memo;
    const int exact_elems = bytes_out != NULL;
    double elems = 0, *elems_out = &elems, back_elems, max_f, max_b;
    rp_sink *sink = sc->sink;
    if (sink) sink->n[0] = sink->n[1] = sink->over = 0, sink->nic[0] = sink->nic[1] = 0;
    if (pm->pair_form_ok && (!dl[0]->mat || pm->tx_oracle)) { /* receiver by receiver: single entries, the oracle */
        const int dense = dl[0]->mat != NULL;
        max_f = gather_pairs(pm, dl, cc, cp, 1, sc->nic_in_f, sc->nic_out_b, elems_out, dense);
        max_b = gather_pairs(pm, dl, cp, cc, 0, sc->nic_in_b, sc->nic_out_f, &back_elems, dense);
    } else if (dl[0]->mat && !pm->tx_oracle) {
        max_f = gather_nodes(pm, memo, dl, cc, cp, 1, sc->nic_in_f, sc->nic_out_b, elems_out, sink, exact_elems);
        max_b = gather_nodes(pm, memo, dl, cp, cc, 0, sc->nic_in_b, sc->nic_out_f, &back_elems, sink, exact_elems);
    } else if (dl[0]->mat) {
        max_f = gather_dense(pm, dl, cc, cp, 1, sc->nic_in_f, sc->nic_out_b, elems_out, sink);
        max_b = gather_dense(pm, dl, cp, cc, 0, sc->nic_in_b, sc->nic_out_f, &back_elems, sink);
    } else {
        max_f = gather_lists(pm, dl, cc, cp, 1, sc->nic_in_f, sc->nic_out_b, elems_out, sink);
        max_b = gather_lists(pm, dl, cp, cc, 0, sc->nic_in_b, sc->nic_out_f, &back_elems, sink);
    }
    if (pm->nodes_used > 1) {
        const cluster *cl = pm->pub.cl;
        double nic_bw = cl->inter.bandwidth_gbs * 1e9 * cl->nics_per_node, most_f = 0, most_b = 0;
        for (int n = 0; n < pm->nodes_used; n++) {
            double bf = sc->nic_in_f[n] > sc->nic_out_f[n] ? sc->nic_in_f[n] : sc->nic_out_f[n];
            double bb = sc->nic_in_b[n] > sc->nic_out_b[n] ? sc->nic_in_b[n] : sc->nic_out_b[n];
            most_f = bf > most_f ? bf : most_f;
            most_b = bb > most_b ? bb : most_b;
        }
        /* the busiest NIC's time: a rounded division by a positive number
         * keeps the order, so dividing the largest volume alone is the
         * same double as the largest of the quotients (one division, not
         * two a node) */
        if (most_f / nic_bw > max_f) max_f = most_f / nic_bw;
        if (most_b / nic_bw > max_b) max_b = most_b / nic_bw;
        if (sink) { /* sums of elements x a power of two: exact in elements */
            sink->nic[0] = most_f / pm->pub.elem_bytes;
            sink->nic[1] = most_b / pm->pub.elem_bytes;
        }
    }
    if (sink) sink->elems = elems;
    if (bytes_out) *bytes_out = 2 * elems * pm->pub.elem_bytes;
    return elems > 0 ? 1e3 * (max_f + max_b) : 0;
}

/* ---- one entry ---- */

/* t_x of one (producer config, consumer config) pair of edge d, in ms
 * (bytes_out, may be NULL: the bytes moved forward and backward). el: the
 * edge's lists, shared by a table build's entries (with a scratch's memo:
 * memo_lend), or NULL for lists of this call's own. A flatten sums per
 * piece (tx_flatten); other edges take the closed form where the links
 * allow it (tx_closed_form), else the per-piece sums (tx_pieces). */
double tx_eval(const cost_model_priv *pm, const tx_scratch *sc, edge_lists *el, const edge_desc *d, const config *cp,
               const config *cc, double *bytes_out)
{
    if (entry_sharded(cp, cc)) return shard_eval(pm, sc, d, cp, cc, bytes_out, NULL); /* r or x: piece by piece */
    if (pm->nodes_used > 1) {
        size_t nb = sizeof(double) * (size_t)pm->nodes_used;
        memset(sc->nic_in_f, 0, nb);
        memset(sc->nic_out_f, 0, nb);
        memset(sc->nic_in_b, 0, nb);
        memset(sc->nic_out_b, 0, nb);
    }
    if (d->flat) return tx_flatten(pm, sc, d, cp, cc, bytes_out);
    edge_lists local;
    edge_lists *L = el;
    if (!L) {
        memset(&local, 0, sizeof local);
        L = &local;
    }
    const dim_list *dl[NDIMS];
    for (int q = 0; q < NDIMS; q++) dl[q] = lists_get(L, d, q, cp->deg[q], cc->deg[q]);
    const double t = (pm->closed_form_ok || pm->pair_form_ok) && !pm->tx_reference
                         ? tx_closed_form(pm, sc, L, dl, cp, cc, L == &local, bytes_out)
                         : tx_pieces(pm, sc, dl, cp, cc, bytes_out);
    if (L == &local) lists_free(&local);
    return t;
}

/* One entry of edge `edge`, computed now with a scratch of its own (cost.h). */
double cost_t_x(const cost_model *m, int edge, const config *cp, const config *cc, double *bytes)
{
    const cost_model_priv *pm = (const cost_model_priv *)m;
    tx_scratch sc;
    scratch_init(&sc, m->gpus, pm->nodes_used);
    double t = tx_eval(pm, &sc, NULL, &pm->desc[edge], cp, cc, bytes);
    scratch_free(&sc);
    return t;
}

/* A scratch for a model of G GPUs on nn nodes (tx_scratch), in one zeroed
 * allocation: 2 x G doubles, 5 x nn doubles, G doubles, then 2 x G ints. */
void scratch_init(tx_scratch *sc, int G, int nn)
{
    if (nn < 1) nn = 1;
    double *b = lw_calloc(3 * (size_t)G + 5 * (size_t)nn + 2 * (((size_t)G + 1) / 2), sizeof(double));
    sc->recv_f = b;
    sc->recv_b = b + G;
    sc->nic_in_f = b + 2 * (size_t)G;
    sc->nic_out_f = sc->nic_in_f + nn;
    sc->nic_in_b = sc->nic_out_f + nn;
    sc->nic_out_b = sc->nic_in_b + nn;
    sc->from_node = sc->nic_out_b + nn;
    sc->flat_v = sc->from_node + nn;
    sc->list_i = (int *)(sc->flat_v + G);
    sc->flat_p = sc->list_i + 2 * (((size_t)G + 1) / 2);
    sc->sink = NULL;
    sc->memo = NULL;
    sc->evaluated = 0;
}

/* Frees what scratch_init and the evaluations gave sc (its memo). */
void scratch_free(tx_scratch *sc)
{
    free(sc->recv_f);
    memo_free(sc->memo);
    memset(sc, 0, sizeof *sc);
}
