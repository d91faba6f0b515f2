/*
 * cost_tie: the tie term, a cost between two layers that share a weight
 * table without being neighbours in the graph (GPT's token embedding and
 * its LM head, "tied" in the network file; issue 32).
 *
 * The table (vocab x hidden) is kept once, in the LM head's layout
 * (layer_weights gives it to the lm_head, whose matrix product makes most
 * of its gradient; the memory model counts it there). The embedding's
 * config lays the table out its own way: its c degree splits the hidden
 * features (columns), its r degree the vocabulary (rows); the LM head's c
 * degree splits the vocabulary and its r degree the hidden features. Every
 * other degree (n, sequence, x) holds a whole tile. So, per step:
 *   forward:  each embedding task reads its tile of the current table from
 *             the LM head's tasks that hold it (the working copy, elem_bytes);
 *   backward: each of the embedding's gradient contributions (one per
 *             sample/sequence piece: partial sums; x replicas hold the same
 *             one) is added into the LM head's gradient in the LM head's
 *             layout before the LM head's sync, once per sync group (the
 *             LM head's x replicas sync apart), at the sync's bytes per
 *             element (cluster_grad_sync_bytes: fp32 gradients).
 * Megatron-LM instead keeps a copy of the table in each layout and
 * all-reduces the two gradients (its "embedding group"): the gradient goes
 * one way and the sum comes back, the same bytes as the forward read here
 * and the gradient move, over the same pairs; one copy is what this
 * model's memory already counts.
 *
 * Which task of the LM head holds a tile for GPU g: the one in the same
 * replica slot (n, sequence, x) as the LM head's own task on GPU g (g
 * modulo its task count), with the tile's c and r coordinates. A move
 * between tasks on one GPU is free; the others are priced as t_x prices
 * its pieces (each receiver takes its pieces one after another at the
 * pair's latency and bandwidth, a node's inter-node traffic shares its
 * NICs; phase_time).
 */
#include "cost_internal.h"

#include <stdlib.h>
#include <string.h>

/* The LM head's task holding tile (vocab piece a, hidden piece b) and
 * replica x for GPU g. */
static int tie_holder(const config *ch, int g, int a, int b, int x)
{
    int coord[NDIMS], r0, x0;
    int base = g % config_tasks(ch);
    config_task_coords(ch, base, coord);
    config_task_rx(ch, base, &r0, &x0);
    coord[DIM_C] = a;
    return config_task_index(ch, coord) + b * ch->deg[DIM_X] + (x < 0 ? x0 : x);
}

static long overlap(long S, int D1, int i1, int D2, int i2)
{
    long lo = piece_lo(S, D1, i1), hi = piece_hi(S, D1, i1);
    long lo2 = piece_lo(S, D2, i2), hi2 = piece_hi(S, D2, i2);
    if (lo2 > lo) lo = lo2;
    if (hi2 < hi) hi = hi2;
    return hi > lo ? hi - lo : 0;
}

/* Every move of the tie's entry (ce, ch), in a fixed order: forward reads
 * first for each embedding task, then its gradient's moves; a move between
 * tasks on one GPU is not one. */
void cost_tie_moves(const cost_model *m, int tie, const config *ce, const config *ch, cost_tie_visit visit,
                    void *user)
{
    const layer *lm = &m->net->layers[m->ties[tie].lm_head];
    const long V = lm->vocab, H = m->net->layers[m->ties[tie].embed].out_features;
    const double wb = m->elem_bytes, gb = cluster_grad_sync_bytes(m->cl);
    const int Re = ce->deg[DIM_R], Ce = ce->deg[DIM_C], Xe = ce->deg[DIM_X];
    const int Vh = ch->deg[DIM_C], Hh = ch->deg[DIM_R], Xh = ch->deg[DIM_X];
    for (int i = 0; i < config_tasks(ce); i++) {
        int coord[NDIMS], r, x;
        config_task_coords(ce, i, coord);
        config_task_rx(ce, i, &r, &x);
        for (int a = 0; a < Vh; a++) {
            long ov = overlap(V, Re, r, Vh, a);
            if (ov == 0) continue;
            for (int b = 0; b < Hh; b++) {
                double vol = (double)ov * (double)overlap(H, Ce, coord[DIM_C], Hh, b);
                if (vol == 0) continue;
                /* forward: the tile's piece from the holder in this GPU's slot */
                int src = tie_holder(ch, i, a, b, -1);
                if (src != i) visit(user, 0, src, i, vol, vol * wb);
                /* backward: this replica's contribution to the sync groups x
                 * it answers for (x mod Xe), one holder each */
                for (int xh = x; xh < Xh; xh += Xe) {
                    int dst = tie_holder(ch, i, a, b, xh);
                    if (dst != i) visit(user, 1, i, dst, vol, vol * gb);
                }
            }
        }
    }
}

/* The sums of tie_eval: each receiver's time per direction, and the NICs'. */
typedef struct tie_sums {
    const cost_model_priv *pm;
    const tx_scratch *sc;
    double elems_f, elems_b, bytes;
} tie_sums;

static void tie_sum(void *user, int backward, int src, int dst, double elems, double bytes)
{
    tie_sums *s = user;
    const cost_model *m = &s->pm->pub;
    double *recv = backward ? s->sc->recv_b : s->sc->recv_f;
    recv[dst] += m->lat_s[src * m->gpus + dst] + bytes * m->inv_bw[src * m->gpus + dst];
    int ns = s->pm->node_of[src], nd = s->pm->node_of[dst];
    if (ns != nd) {
        (backward ? s->sc->nic_in_b : s->sc->nic_in_f)[nd] += bytes;
        (backward ? s->sc->nic_out_b : s->sc->nic_out_f)[ns] += bytes;
    }
    *(backward ? &s->elems_b : &s->elems_f) += elems;
    s->bytes += bytes;
}

double tie_eval(const cost_model_priv *pm, const tx_scratch *sc, int tie, const config *ce, const config *ch,
                double *fwd_ms, double *bwd_ms, double *bytes_out)
{
    const cost_model *m = &pm->pub;
    const size_t G = (size_t)m->gpus, nn = (size_t)(pm->nodes_used > 0 ? pm->nodes_used : 1);
    memset(sc->recv_f, 0, sizeof(double) * G);
    memset(sc->recv_b, 0, sizeof(double) * G);
    memset(sc->nic_in_f, 0, sizeof(double) * nn);
    memset(sc->nic_out_f, 0, sizeof(double) * nn);
    memset(sc->nic_in_b, 0, sizeof(double) * nn);
    memset(sc->nic_out_b, 0, sizeof(double) * nn);
    tie_sums s = {.pm = pm, .sc = sc};
    cost_tie_moves(m, tie, ce, ch, tie_sum, &s);
    double f = s.elems_f > 0 ? 1e3 * phase_time(pm, sc->recv_f, sc->nic_in_f, sc->nic_out_f) : 0;
    double b = s.elems_b > 0 ? 1e3 * phase_time(pm, sc->recv_b, sc->nic_in_b, sc->nic_out_b) : 0;
    if (fwd_ms) *fwd_ms = f;
    if (bwd_ms) *bwd_ms = b;
    if (bytes_out) *bytes_out = s.bytes;
    return f + b;
}

double cost_t_tie_parts(const cost_model *m, int tie, const config *ce, const config *ch, double *fwd_ms,
                        double *bwd_ms, double *bytes)
{
    const cost_model_priv *pm = (const cost_model_priv *)m;
    tx_scratch sc;
    scratch_init(&sc, m->gpus, pm->nodes_used);
    double t = tie_eval(pm, &sc, tie, ce, ch, fwd_ms, bwd_ms, bytes);
    scratch_free(&sc);
    return t;
}

double cost_t_tie(const cost_model *m, int tie, const config *ce, const config *ch, double *bytes)
{
    return cost_t_tie_parts(m, tie, ce, ch, NULL, NULL, bytes);
}

double cost_tie_ms(const cost_model *m, int tie, int ce, int ch, double *bytes)
{
    const cost_tie *t = &m->ties[tie];
    if (t->t_tie && !bytes) return t->t_tie[ce * m->n_configs[t->lm_head] + ch];
    double v = cost_t_tie(m, tie, &m->configs[t->embed][ce], &m->configs[t->lm_head][ch], bytes);
    return t->t_tie ? t->t_tie[ce * m->n_configs[t->lm_head] + ch] : v;
}

/* Every tie of the network, embedding first: (embed, lm_head) pairs. */
void ties_setup(cost_model_priv *pm)
{
    cost_model *m = &pm->pub;
    const network *net = m->net;
    int n = 0;
    for (int i = 0; i < net->n_layers; i++)
        if (net->layers[i].type == LT_LM_HEAD && net->layers[i].tied >= 0) n++;
    m->n_ties = n;
    m->ties = n ? lw_calloc((size_t)n, sizeof(cost_tie)) : NULL;
    n = 0;
    for (int i = 0; i < net->n_layers; i++)
        if (net->layers[i].type == LT_LM_HEAD && net->layers[i].tied >= 0)
            m->ties[n++] = (cost_tie){.embed = net->layers[i].tied, .lm_head = i, .t_tie = NULL};
}

/* The tie tables, [ce * n_configs[lm_head] + ch] (a build, a what-if). */
void tie_tables_build(cost_model_priv *pm, const tx_scratch *sc)
{
    cost_model *m = &pm->pub;
    for (int k = 0; k < m->n_ties; k++) {
        cost_tie *t = &m->ties[k];
        const int ne = m->n_configs[t->embed], nh = m->n_configs[t->lm_head];
        free(t->t_tie);
        t->t_tie = lw_malloc(sizeof(double) * (size_t)ne * (size_t)nh);
        for (int i = 0; i < ne; i++)
            for (int j = 0; j < nh; j++)
                t->t_tie[(size_t)i * nh + j] =
                    tie_eval(pm, sc, k, &m->configs[t->embed][i], &m->configs[t->lm_head][j], NULL, NULL, NULL);
    }
}

void ties_free(cost_model *m)
{
    for (int k = 0; k < m->n_ties; k++) free(m->ties[k].t_tie);
    free(m->ties);
    m->ties = NULL;
    m->n_ties = 0;
}
