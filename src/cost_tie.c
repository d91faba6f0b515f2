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
#include "cost_sharding.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Where the LM head's tasks for GPU g sit: the task in the same replica
 * slot (n, sequence, x) as its own task on GPU g (g modulo its task count)
 * holding tile (vocab piece a, hidden piece b) and replica x is
 * base + a * stride + b * X + x (tasks row-major over n, c, h, w, r, x). */
typedef struct tie_slot {
    int base, stride, x;
} tie_slot;

static tie_slot tie_slot_of(const config *ch, int g)
{
    int coord[NDIMS], r0, x0;
    int t = g % config_tasks(ch);
    config_task_coords(ch, t, coord);
    config_task_rx(ch, t, &r0, &x0);
    coord[DIM_C] = 0;
    return (tie_slot){config_task_index(ch, coord), ch->deg[DIM_H] * ch->deg[DIM_W] * ch->deg[DIM_R] * ch->deg[DIM_X],
                      x0};
}

static long overlap(long S, int D1, int i1, int D2, int i2)
{
    long lo = piece_lo(S, D1, i1), hi = piece_hi(S, D1, i1);
    long lo2 = piece_lo(S, D2, i2), hi2 = piece_hi(S, D2, i2);
    if (lo2 > lo) lo = lo2;
    if (hi2 < hi) hi = hi2;
    return hi > lo ? hi - lo : 0;
}

/* A piece of D2 at or before the first one that meets piece i1 of D1
 * over S (pieces are in order: the loops start there and stop past it). */
static int first_piece(long S, int D1, int i1, int D2)
{
    long lo = piece_lo(S, D1, i1);
    int a = (int)((double)lo * D2 / (double)S) - 1;
    if (a < 0) a = 0;
    while (a > 0 && piece_hi(S, D2, a) > lo) a--; /* rounding: never past the first */
    return a;
}

/* Every move of the tie's entry (ce, ch), in a fixed order (cost.h's
 * cost_tie_moves); a move between tasks on one GPU is not one. Inlined
 * into tie_eval with its sums, and into cost_tie_moves. */
static inline __attribute__((always_inline)) void tie_walk(const cost_model *m, int tie, const config *ce,
                                                           const config *ch, cost_tie_visit visit, void *user)
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
        const tie_slot sl = tie_slot_of(ch, i);
        for (int a = first_piece(V, Re, r, Vh); a < Vh; a++) {
            long ov = overlap(V, Re, r, Vh, a);
            if (ov == 0) {
                if (piece_lo(V, Vh, a) >= piece_hi(V, Re, r)) break; /* past the embedding's piece */
                continue;
            }
            for (int b = first_piece(H, Ce, coord[DIM_C], Hh); b < Hh; b++) {
                double vol = (double)ov * (double)overlap(H, Ce, coord[DIM_C], Hh, b);
                if (vol == 0) {
                    if (piece_lo(H, Hh, b) >= piece_hi(H, Ce, coord[DIM_C])) break;
                    continue;
                }
                /* forward: the tile's piece from the holder in this GPU's slot */
                const int held = sl.base + a * sl.stride + b * Xh;
                int src = held + sl.x;
                if (src != i) visit(user, 0, src, i, vol, vol * wb);
                /* backward: this replica's contribution to the sync groups x
                 * it answers for (x mod Xe), one holder each */
                for (int xh = x; xh < Xh; xh += Xe) {
                    int dst = held + xh;
                    if (dst != i) visit(user, 1, i, dst, vol, vol * gb);
                }
            }
        }
    }
}

void cost_tie_moves(const cost_model *m, int tie, const config *ce, const config *ch, cost_tie_visit visit,
                    void *user)
{
    tie_walk(m, tie, ce, ch, visit, user);
}

/* The sums of tie_eval: each receiver's time per direction, and the NICs'. */
typedef struct tie_sums {
    const cost_model_priv *pm;
    const tx_scratch *sc;
    double elems_f, elems_b, bytes;
} tie_sums;

static inline __attribute__((always_inline)) void tie_sum(void *user, int backward, int src, int dst, double elems,
                                                          double bytes)
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
    tie_walk(m, tie, ce, ch, tie_sum, &s); /* inlined: the sums in the loops */
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

/* The copy of the table a stage holding the embedding without its LM
 * head keeps (cost.h): laid out as the embedding's config lays its tiles
 * (c splits the hidden features, r the vocabulary), each task its tile's
 * weights, gradient and optimizer state as cost_memory_task counts a
 * layer's weights (sharded likewise under ZeRO). */
double cost_tie_copy_bytes(const cost_model *m, int tie, const config *ce, int task)
{
    const cost_tie *t = &m->ties[tie];
    const double table = (double)m->net->layers[t->lm_head].vocab * (double)m->net->layers[t->embed].out_features;
    const double shard = table / (ce->deg[DIM_C] * ce->deg[DIM_R]);
    const double eb = m->elem_bytes > 0 ? m->elem_bytes : BYTES_PER_ELEM;
    memory_parts p = {0};
    p.weights = shard * (BYTES_PER_ELEM + (eb < BYTES_PER_ELEM ? eb : 0));
    p.gradients = shard * eb;
    p.optimizer = shard * BYTES_PER_ELEM * (m->optimizer == OPT_ADAM ? 2 : m->optimizer == OPT_MOMENTUM ? 1 : 0);
    if (m->cl->sync >= SYNC_ZERO1) cost_shard_memory(m, shard, cost_shard_group(m, ce, task), &p);
    return p.weights + p.gradients + p.optimizer;
}

/* The embedding group's all-reduce across stages (cost.h): min(na, nb)
 * pairs (a0 + r, b0 + r), each all-reducing its share of the table's
 * gradient, all at once. */
double cost_tie_cross_ms(const cost_model *m, int tie, int a0, int na, int b0, int nb, double *bytes)
{
    const cost_tie *t = &m->ties[tie];
    const int n = na < nb ? na : nb;
    const double table = (double)m->net->layers[t->lm_head].vocab * (double)m->net->layers[t->embed].out_features;
    const double total = table * cluster_grad_sync_bytes(m->cl);
    if (bytes) *bytes = total;
    if (n < 1) return 0;
    int *rings = lw_malloc(sizeof(int) * 2 * (size_t)n);
    for (int r = 0; r < n; r++) rings[2 * r] = a0 + r, rings[2 * r + 1] = b0 + r;
    double s = cost_allreduce_rings_s(m->cl, rings, n, 2, total / n);
    free(rings);
    return 1e3 * s;
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

/* What of a config the tie's moves depend on: which tile and replica
 * each task (GPU) has, and which task holds a tile in a GPU's slot
 * (tie_slot). Tasks are row-major over (n, c, h x w, r, x): with c, r, x
 * and the tasks fixed, only h x w places the c coordinate, and with c = 1
 * nothing does. Configs with the same key give the same entries. */
static void tie_key(const config *c, int key[5])
{
    key[0] = config_tasks(c);
    key[1] = c->deg[DIM_C];
    key[2] = c->deg[DIM_C] > 1 ? c->deg[DIM_H] * c->deg[DIM_W] : 0;
    key[3] = c->deg[DIM_R];
    key[4] = c->deg[DIM_X];
}

/* rep[k]: the first of the n configs with config k's key. */
static void tie_reps(const config *cs, int n, int *rep)
{
    int (*key)[5] = lw_malloc(sizeof *key * (size_t)n);
    for (int k = 0; k < n; k++) {
        tie_key(&cs[k], key[k]);
        rep[k] = k;
        for (int j = 0; j < k; j++)
            if (memcmp(key[j], key[k], sizeof key[k]) == 0) {
                rep[k] = j;
                break;
            }
    }
    free(key);
}

/* One worker of tie_tables_build: the rows i = w, w + nw, ... of one
 * tie's table, the representative entries (the rest are copied after). */
typedef struct tie_work {
    cost_model_priv *pm;
    int tie, w, nw;
    const int *re, *rh;
} tie_work;

static void *tie_rows(void *arg)
{
    tie_work *tw = arg;
    cost_model *m = &tw->pm->pub;
    cost_tie *t = &m->ties[tw->tie];
    const int ne = m->n_configs[t->embed], nh = m->n_configs[t->lm_head];
    tx_scratch sc;
    scratch_init(&sc, m->gpus, tw->pm->nodes_used);
    for (int i = tw->w; i < ne; i += tw->nw)
        for (int j = 0; j < nh && tw->re[i] == i; j++)
            if (tw->rh[j] == j)
                t->t_tie[(size_t)i * nh + j] = tie_eval(tw->pm, &sc, tw->tie, &m->configs[t->embed][i],
                                                        &m->configs[t->lm_head][j], NULL, NULL, NULL);
    scratch_free(&sc);
    return NULL;
}

/* The tie tables, [ce * n_configs[lm_head] + ch] (a build, a what-if):
 * each entry computed once per pair of keys (tie_key), on every worker,
 * and copied to the pairs that share them. Its cost grows as the moves
 * do, up to gpus^2 an entry: GPT-2 at 64 GPUs, 154 x 154 keys, about
 * 0.5 s of one core; at 256 GPUs 375 x 375, about 30 s. */
void tie_tables_build(cost_model_priv *pm)
{
    cost_model *m = &pm->pub;
    for (int k = 0; k < m->n_ties; k++) {
        cost_tie *t = &m->ties[k];
        const int ne = m->n_configs[t->embed], nh = m->n_configs[t->lm_head];
        int *re = lw_malloc(sizeof(int) * (size_t)ne), *rh = lw_malloc(sizeof(int) * (size_t)nh);
        tie_reps(m->configs[t->embed], ne, re);
        tie_reps(m->configs[t->lm_head], nh, rh);
        free(t->t_tie);
        t->t_tie = lw_malloc(sizeof(double) * (size_t)ne * (size_t)nh);
        int nw = lw_worker_count();
        if ((long)ne * nh * m->gpus < 8192L) nw = 1; /* small: no threads (tied_mini at 8 GPUs has them) */
        tie_work *tw = lw_malloc(sizeof *tw * (size_t)nw);
        pthread_t *th = lw_malloc(sizeof *th * (size_t)nw);
        int *started = lw_calloc((size_t)nw, sizeof(int));
        for (int w = 0; w < nw; w++) {
            tw[w] = (tie_work){pm, k, w, nw, re, rh};
            started[w] = w > 0 && lw_thread_start(&th[w], tie_rows, &tw[w]) == 0;
        }
        tie_rows(&tw[0]);
        for (int w = 1; w < nw; w++) {
            if (started[w]) pthread_join(th[w], NULL);
            else tie_rows(&tw[w]); /* no thread: this one does its rows */
        }
        for (int i = 0; i < ne; i++)
            for (int j = 0; j < nh; j++)
                if (re[i] < i || rh[j] < j) t->t_tie[(size_t)i * nh + j] = t->t_tie[(size_t)re[i] * nh + rh[j]];
        free(started);
        free(th);
        free(tw);
        free(re);
        free(rh);
    }
}

void ties_free(cost_model *m)
{
    for (int k = 0; k < m->n_ties; k++) free(m->ties[k].t_tie);
    free(m->ties);
    m->ties = NULL;
    m->n_ties = 0;
}
