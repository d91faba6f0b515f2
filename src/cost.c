#include "cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How a consumer's output range along one dimension maps to the range of
 * the producer's output it needs. */
enum { MAP_SAME, MAP_ALL, MAP_WINDOW, MAP_OFFSET };

typedef struct edge_desc {
    long Sp[NDIMS], Sc[NDIMS];
    unsigned pdims, cdims;
    int kind[NDIMS];
    long k[NDIMS], s[NDIMS], p[NDIMS]; /* window; p doubles as the concat offset */
    int flat;                           /* consumer flattens a (c, h, w) producer */
    int pad_;
} edge_desc;

/* Scratch for one t_x evaluation. */
typedef struct tx_scratch {
    double *recv_f, *recv_b;            /* [gpus] seconds */
    double *nic_in_f, *nic_out_f, *nic_in_b, *nic_out_b; /* [nodes] bytes */
    int *list_i;                        /* per dim, per consumer piece: producer pieces overlapping */
    long *list_ov;
    int *list_start;                    /* [NDIMS][gpus + 1] */
} tx_scratch;

typedef struct cost_model_priv {
    cost_model pub;
    edge_desc *desc;                    /* [n_edges] */
    tx_scratch sc;
    int nodes_used;
} cost_model_priv;

static void edge_describe(const cost_model *m, int e, edge_desc *d)
{
    memset(d, 0, sizeof *d);
    const layer *P = &m->net->layers[m->e_from[e]];
    const layer *L = &m->net->layers[m->e_to[e]];
    for (int k = 0; k < NDIMS; k++) {
        d->Sp[k] = layer_dim_size(P, k, m->batch);
        d->Sc[k] = layer_dim_size(L, k, m->batch);
        d->kind[k] = MAP_SAME;
    }
    d->pdims = P->dims;
    d->cdims = L->dims;
    switch (L->type) {
    case LT_CONV2D:
        d->kind[DIM_C] = MAP_ALL;
        /* fall through */
    case LT_POOL2D:
        d->kind[DIM_H] = d->kind[DIM_W] = MAP_WINDOW;
        d->k[DIM_H] = L->kh, d->s[DIM_H] = L->sh, d->p[DIM_H] = L->ph;
        d->k[DIM_W] = L->kw, d->s[DIM_W] = L->sw, d->p[DIM_W] = L->pw;
        break;
    case LT_LINEAR:
        d->kind[DIM_C] = d->kind[DIM_H] = d->kind[DIM_W] = MAP_ALL;
        break;
    case LT_FLATTEN:
        if (P->out.rank == 4) d->flat = 1;
        break;
    case LT_CONCAT: {
        long off = 0;
        for (int s = 0; s < m->e_slot[e]; s++) off += m->net->layers[L->inputs[s]].out.c;
        d->kind[DIM_C] = MAP_OFFSET;
        d->p[DIM_C] = off;
        break;
    }
    default:
        break;
    }
}

/* Range of the producer's dimension k needed by consumer piece j of D. */
static void need_range(const edge_desc *d, int k, int D, int j, long *lo, long *hi)
{
    long a = piece_lo(d->Sc[k], D, j), b = piece_hi(d->Sc[k], D, j);
    switch (d->kind[k]) {
    case MAP_ALL:
        a = 0, b = d->Sp[k];
        break;
    case MAP_WINDOW:
        a = a * d->s[k] - d->p[k];
        b = (b - 1) * d->s[k] - d->p[k] + d->k[k];
        break;
    case MAP_OFFSET:
        a -= d->p[k];
        b -= d->p[k];
        break;
    default:
        break;
    }
    if (a < 0) a = 0;
    if (b > d->Sp[k]) b = d->Sp[k];
    if (b < a) b = a;
    *lo = a;
    *hi = b;
}

static long overlap1(long a0, long a1, long b0, long b1)
{
    long lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

/* Number of points of the box [c0,c1) x [h0,h1) x [w0,w1) of a (C, H, W)
 * tensor whose row-major flat index is below X. */
static double flat_count_below(long X, long H, long W, long c0, long c1, long h0, long h1, long w0, long w1)
{
    long HW = H * W;
    long cq = X / HW, rem = X % HW;
    long bh = h1 - h0, bw = w1 - w0;
    double n = 0;
    long full = cq - c0;
    if (full > c1 - c0) full = c1 - c0;
    if (full > 0) n += (double)full * bh * bw;
    if (cq >= c0 && cq < c1) {
        long hq = rem / W, wr = rem % W;
        long fh = hq - h0;
        if (fh > bh) fh = bh;
        if (fh > 0) n += (double)fh * bw;
        if (hq >= h0 && hq < h1) {
            long fw = wr - w0;
            if (fw > bw) fw = bw;
            if (fw > 0) n += (double)fw;
        }
    }
    return n;
}

/* Volume of the producer block of task pt (config cp) that consumer task
 * ct (config cc) needs; both given as per-dimension piece coordinates. */
static double task_overlap(const edge_desc *d, const config *cp, const int *pc, const config *cc, const int *cco)
{
    if (d->flat) {
        long n = overlap1(piece_lo(d->Sp[0], cp->deg[0], pc[0]), piece_hi(d->Sp[0], cp->deg[0], pc[0]),
                          piece_lo(d->Sc[0], cc->deg[0], cco[0]), piece_hi(d->Sc[0], cc->deg[0], cco[0]));
        if (!n) return 0;
        long f0 = piece_lo(d->Sc[1], cc->deg[1], cco[1]), f1 = piece_hi(d->Sc[1], cc->deg[1], cco[1]);
        long b[3][2];
        for (int k = 1; k < NDIMS; k++) {
            b[k - 1][0] = piece_lo(d->Sp[k], cp->deg[k], pc[k]);
            b[k - 1][1] = piece_hi(d->Sp[k], cp->deg[k], pc[k]);
        }
        long H = d->Sp[DIM_H], W = d->Sp[DIM_W];
        double v = flat_count_below(f1, H, W, b[0][0], b[0][1], b[1][0], b[1][1], b[2][0], b[2][1]) -
                   flat_count_below(f0, H, W, b[0][0], b[0][1], b[1][0], b[1][1], b[2][0], b[2][1]);
        return (double)n * v;
    }
    double v = 1;
    for (int k = 0; k < NDIMS; k++) {
        long lo, hi;
        need_range(d, k, cc->deg[k], cco[k], &lo, &hi);
        long o = overlap1(lo, hi, piece_lo(d->Sp[k], cp->deg[k], pc[k]), piece_hi(d->Sp[k], cp->deg[k], pc[k]));
        if (!o) return 0;
        v *= (double)o;
    }
    return v;
}

double cost_overlap(const cost_model *m, int edge, const config *cp, int ptask, const config *cc, int task)
{
    const cost_model_priv *pm = (const cost_model_priv *)m;
    int pc[NDIMS], cco[NDIMS];
    config_task_coords(cp, ptask, pc);
    config_task_coords(cc, task, cco);
    return task_overlap(&pm->desc[edge], cp, pc, cc, cco);
}

/* Adds one piece moved from producer GPU p to consumer GPU k (forward) and
 * its gradient back (backward). */
static inline void move_piece(const cost_model_priv *pm, int p, int k, double vol, double *bytes)
{
    if (p == k || vol <= 0) return;
    const cost_model *m = &pm->pub;
    const tx_scratch *sc = &pm->sc;
    int G = m->gpus;
    double b = vol * BYTES_PER_ELEM;
    sc->recv_f[k] += m->lat_s[p * G + k] + b * m->inv_bw[p * G + k];
    sc->recv_b[p] += m->lat_s[k * G + p] + b * m->inv_bw[k * G + p];
    if (pm->nodes_used > 1) {
        int gpn = m->cl->gpus_per_node;
        int np = p / gpn, nk = k / gpn;
        if (np != nk) {
            sc->nic_in_f[nk] += b;
            sc->nic_out_f[np] += b;
            sc->nic_in_b[np] += b;
            sc->nic_out_b[nk] += b;
        }
    }
    *bytes += 2 * b;
}

/* Time of one direction: GPUs receive in parallel, each its pieces one after
 * another; a node's inter-node traffic shares its NICs. */
static double phase_time(const cost_model_priv *pm, const double *recv, const double *nic_in, const double *nic_out)
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

static double tx_eval(const cost_model_priv *pm, const edge_desc *d, const config *cp, const config *cc,
                      double *bytes_out)
{
    const cost_model *m = &pm->pub;
    const tx_scratch *sc = &pm->sc;
    int G = m->gpus;
    memset(sc->recv_f, 0, sizeof(double) * (size_t)G);
    memset(sc->recv_b, 0, sizeof(double) * (size_t)G);
    if (pm->nodes_used > 1) {
        size_t nb = sizeof(double) * (size_t)pm->nodes_used;
        memset(sc->nic_in_f, 0, nb);
        memset(sc->nic_out_f, 0, nb);
        memset(sc->nic_in_b, 0, nb);
        memset(sc->nic_out_b, 0, nb);
    }
    double bytes = 0;
    int nt_c = config_tasks(cc), nt_p = config_tasks(cp);
    if (d->flat) {
        int pc[NDIMS], cco[NDIMS];
        for (int k = 0; k < nt_c; k++) {
            config_task_coords(cc, k, cco);
            for (int p = 0; p < nt_p; p++) {
                if (p == k) continue;
                config_task_coords(cp, p, pc);
                move_piece(pm, p, k, task_overlap(d, cp, pc, cc, cco), &bytes);
            }
        }
    } else {
        /* separable: per dimension, the producer pieces each consumer piece overlaps */
        int *start = sc->list_start;
        int n = 0;
        for (int k = 0; k < NDIMS; k++) {
            int Dc = cc->deg[k], Dp = cp->deg[k];
            for (int j = 0; j < Dc; j++) {
                start[k * (G + 1) + j] = n;
                long lo, hi;
                need_range(d, k, Dc, j, &lo, &hi);
                for (int i = 0; i < Dp; i++) {
                    long o = overlap1(lo, hi, piece_lo(d->Sp[k], Dp, i), piece_hi(d->Sp[k], Dp, i));
                    if (o) {
                        sc->list_i[n] = i;
                        sc->list_ov[n] = o;
                        n++;
                    }
                }
            }
            start[k * (G + 1) + Dc] = n;
        }
        int cco[NDIMS];
        for (int k = 0; k < nt_c; k++) {
            config_task_coords(cc, k, cco);
            int a0 = start[0 * (G + 1) + cco[0]], a1 = start[0 * (G + 1) + cco[0] + 1];
            int b0 = start[1 * (G + 1) + cco[1]], b1 = start[1 * (G + 1) + cco[1] + 1];
            int c0 = start[2 * (G + 1) + cco[2]], c1 = start[2 * (G + 1) + cco[2] + 1];
            int e0 = start[3 * (G + 1) + cco[3]], e1 = start[3 * (G + 1) + cco[3] + 1];
            for (int a = a0; a < a1; a++)
                for (int b = b0; b < b1; b++)
                    for (int c = c0; c < c1; c++)
                        for (int e = e0; e < e1; e++) {
                            int p = ((sc->list_i[a] * cp->deg[1] + sc->list_i[b]) * cp->deg[2] + sc->list_i[c]) *
                                        cp->deg[3] +
                                    sc->list_i[e];
                            if (p == k) continue;
                            double vol = (double)sc->list_ov[a] * sc->list_ov[b] * sc->list_ov[c] * sc->list_ov[e];
                            move_piece(pm, p, k, vol, &bytes);
                        }
        }
    }
    if (bytes_out) *bytes_out = bytes;
    if (bytes == 0) return 0;
    return 1e3 * (phase_time(pm, sc->recv_f, sc->nic_in_f, sc->nic_out_f) +
                  phase_time(pm, sc->recv_b, sc->nic_in_b, sc->nic_out_b));
}

double cost_t_x(const cost_model *m, int edge, const config *cp, const config *cc, double *bytes)
{
    const cost_model_priv *pm = (const cost_model_priv *)m;
    return tx_eval(pm, &pm->desc[edge], cp, cc, bytes);
}

/* ---- t_c ---- */

static int op_class(layer_type t)
{
    switch (t) {
    case LT_CONV2D: return OPC_CONV;
    case LT_LINEAR: return OPC_LINEAR;
    case LT_POOL2D: return OPC_POOL;
    default: return OPC_ELEMENTWISE;
    }
}

/* One phase (forward or backward) of nk kernels: roofline per phase plus a
 * fixed cost per kernel. Seconds. */
static double phase_s(const gpu_spec *g, int opc, double flops, double bytes, int nk)
{
    if (nk == 0) return 0;
    double t_flop = 0;
    if (flops > 0) {
        double floor_flops = nk * g->saturation_gflop * 1e9;
        t_flop = (flops > floor_flops ? flops : floor_flops) / (g->peak_tflops * 1e12 * g->efficiency[opc]);
    }
    double t_mem = bytes / (g->memory_bandwidth_gbs * 1e9 * g->memory_efficiency);
    return (t_flop > t_mem ? t_flop : t_mem) + nk * g->kernel_overhead_us * 1e-6;
}

/* Largest piece of S over D. */
static long max_piece(long S, int D)
{
    return (S + D - 1) / D;
}

double cost_t_c(const cost_model *m, int li, const config *c, int *profiled)
{
    const layer *l = &m->net->layers[li];
    if (profiled) *profiled = 0;
    if (l->type == LT_INPUT || l->type == LT_FLATTEN) return 0; /* no kernel: a view */
    long o[NDIMS];
    for (int k = 0; k < NDIMS; k++) o[k] = max_piece(layer_dim_size(l, k, m->batch), c->deg[k]);
    double out = (double)o[0] * o[1] * o[2] * o[3];
    /* input block one task reads: the needed range of each input, middle piece */
    double in = 0;
    long in_block[NDIMS] = {0, 0, 0, 0};
    const cost_model_priv *pm = (const cost_model_priv *)m;
    for (int s = 0; s < l->n_inputs; s++) {
        int e = -1;
        for (int k = 0; k < m->n_edges; k++)
            if (m->e_to[k] == li && m->e_slot[k] == s) e = k;
        if (e < 0) continue;
        const edge_desc *d = &pm->desc[e];
        double v = 1;
        for (int k = 0; k < NDIMS; k++) {
            long lo, hi;
            if (d->flat && k > 0) {
                lo = 0;
                hi = k == 1 ? max_piece(d->Sc[1], c->deg[1]) : 1;
            } else {
                need_range(d, k, d->flat ? c->deg[k] : c->deg[k], c->deg[k] / 2, &lo, &hi);
            }
            if (s == 0) in_block[k] = hi - lo;
            v *= (double)(hi - lo);
        }
        in += v;
    }
    double shards = c->deg[DIM_C];
    double w = (double)l->n_params / shards;
    const gpu_spec *g = &m->cl->gpu;

    if (m->prof && strcmp(m->prof->gpu, g->name) == 0) {
        profile_entry key;
        memset(&key, 0, sizeof key);
        key.type = l->type;
        for (int k = 0; k < NDIMS; k++) {
            key.in[k] = in_block[k];
            key.out[k] = o[k];
        }
        if (l->type == LT_CONV2D || l->type == LT_POOL2D) {
            key.k[0] = l->kh, key.k[1] = l->kw;
            key.s[0] = l->sh, key.s[1] = l->sw;
            key.p[0] = l->ph, key.p[1] = l->pw;
        }
        double ms = profile_lookup(m->prof, &key);
        if (ms >= 0) {
            if (profiled) *profiled = 1;
            return ms;
        }
    }

    double flops = 0;
    int nk_f = 1, nk_b = 1;
    double bytes_f = (in + out + w) * BYTES_PER_ELEM;
    double bytes_b = 2 * bytes_f;
    switch (l->type) {
    case LT_CONV2D: {
        const layer *x = &m->net->layers[l->inputs[0]];
        flops = 2.0 * out * (double)x->out.c * l->kh * l->kw;
        if (l->kh == 3 && l->kw == 3 && l->sh == 1 && l->sw == 1) flops /= g->winograd_speedup;
        nk_b = 2; /* data gradient and weight gradient */
        break;
    }
    case LT_LINEAR: {
        const layer *x = &m->net->layers[l->inputs[0]];
        flops = 2.0 * out * (double)shape_elems(x->out);
        nk_b = 2;
        break;
    }
    case LT_POOL2D: flops = out * l->kh * l->kw; break;
    case LT_BATCHNORM: flops = 4.0 * out; break;
    case LT_SOFTMAX: flops = 5.0 * out; break;
    case LT_CONCAT: flops = 0; break;
    default: flops = out; break; /* relu, dropout, add */
    }
    int opc = op_class(l->type);
    double t = phase_s(g, opc, flops, bytes_f, nk_f) + phase_s(g, opc, 2 * flops, bytes_b, nk_b);
    return t * 1e3;
}

/* ---- t_s ---- */

double cost_t_s(const cost_model *m, int li, const config *c, double *bytes_out)
{
    const layer *l = &m->net->layers[li];
    const cost_model_priv *pm = (const cost_model_priv *)m;
    if (bytes_out) *bytes_out = 0;
    int r = c->deg[DIM_N] * c->deg[DIM_H] * c->deg[DIM_W];
    if (l->n_params == 0 || r <= 1) return 0;
    int shards = c->deg[DIM_C];
    double ws = (double)l->n_params * BYTES_PER_ELEM / shards; /* one shard's bytes */
    double piece = ws / r;
    int G = m->gpus, T = config_tasks(c);
    const tx_scratch *sc = &pm->sc;
    int gpn = m->cl->gpus_per_node;
    size_t nb = sizeof(double) * (size_t)(pm->nodes_used > 0 ? pm->nodes_used : 1);
    memset(sc->nic_in_f, 0, nb);
    memset(sc->nic_out_f, 0, nb);
    double bytes = 2.0 * (r - 1) * ws * shards;
    if (bytes_out) *bytes_out = bytes;
    /* replicas of shard j: tasks whose channel coordinate is j */
    int *rep = (int *)sc->list_i; /* scratch, >= G entries */
    double t = 0;
    if (m->cl->sync == SYNC_PARAMETER_SERVER) {
        /* The shard's parameters are spread over its r replicas' GPUs, each
         * serving 1/r of them: every replica pushes r-1 gradient pieces and
         * pulls r-1 weight pieces; a GPU receives its pieces one by one. */
        memset(sc->recv_f, 0, sizeof(double) * (size_t)G);
        for (int j = 0; j < shards; j++) {
            int nr = 0, co[NDIMS];
            for (int k = 0; k < T; k++) {
                config_task_coords(c, k, co);
                if (co[DIM_C] == j) rep[nr++] = k;
            }
            for (int a = 0; a < nr; a++)
                for (int b = 0; b < nr; b++) {
                    if (a == b) continue;
                    int src = rep[a], dst = rep[b];
                    sc->recv_f[dst] += m->lat_s[src * G + dst] + piece * m->inv_bw[src * G + dst];
                    if (src / gpn != dst / gpn) {
                        sc->nic_in_f[dst / gpn] += piece;
                        sc->nic_out_f[src / gpn] += piece;
                    }
                }
        }
        t = 2 * phase_time(pm, sc->recv_f, sc->nic_in_f, sc->nic_out_f);
    } else {
        /* Ring all-reduce over the replicas in GPU order: 2(r-1) steps, each
         * moving 1/r of the shard to the next GPU; a step lasts as long as
         * its slowest link, or the busiest NIC (all shards' rings at once). */
        double step = 0;
        for (int j = 0; j < shards; j++) {
            int nr = 0, co[NDIMS];
            for (int k = 0; k < T; k++) {
                config_task_coords(c, k, co);
                if (co[DIM_C] == j) rep[nr++] = k;
            }
            for (int a = 0; a < nr; a++) {
                int src = rep[a], dst = rep[(a + 1) % nr];
                double s = m->lat_s[src * G + dst] + piece * m->inv_bw[src * G + dst];
                if (s > step) step = s;
                if (src / gpn != dst / gpn) {
                    sc->nic_in_f[dst / gpn] += piece;
                    sc->nic_out_f[src / gpn] += piece;
                }
            }
        }
        if (pm->nodes_used > 1) {
            double nic_bw = m->cl->inter.bandwidth_gbs * 1e9 * m->cl->nics_per_node;
            for (int n = 0; n < pm->nodes_used; n++) {
                double b = sc->nic_in_f[n] > sc->nic_out_f[n] ? sc->nic_in_f[n] : sc->nic_out_f[n];
                if (b / nic_bw > step) step = b / nic_bw;
            }
        }
        t = 2.0 * (r - 1) * step;
    }
    return t * 1e3;
}

/* ---- memory ---- */

double cost_memory(const cost_model *m, const int *ci, double *per_gpu)
{
    int G = m->gpus;
    double *mem = per_gpu ? per_gpu : lw_calloc((size_t)G, sizeof(double));
    if (per_gpu) memset(per_gpu, 0, sizeof(double) * (size_t)G);
    for (int li = 0; li < m->n_layers; li++) {
        const layer *l = &m->net->layers[li];
        const config *c = &m->configs[li][ci[li]];
        int T = config_tasks(c), co[NDIMS];
        double w = (double)l->n_params * BYTES_PER_ELEM / c->deg[DIM_C];
        for (int k = 0; k < T; k++) {
            config_task_coords(c, k, co);
            double v = 1;
            for (int d = 0; d < NDIMS; d++) {
                long S = layer_dim_size(l, d, m->batch);
                v *= (double)(piece_hi(S, c->deg[d], co[d]) - piece_lo(S, c->deg[d], co[d]));
            }
            /* weights and their gradients, plus the output kept for backward
             * (a flatten is a view of its input and keeps nothing) */
            mem[k] += 2 * w + (l->type == LT_FLATTEN ? 0 : v * BYTES_PER_ELEM);
        }
    }
    double peak = 0;
    for (int g = 0; g < G; g++)
        if (mem[g] > peak) peak = mem[g];
    if (!per_gpu) free(mem);
    return peak;
}

/* ---- building the tables ---- */

typedef struct tx_cache_entry {
    edge_desc d;
    int edge;
} tx_cache_entry;

cost_model *cost_model_build(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                             lw_error *err)
{
    int total = cluster_gpus(cl);
    if (gpus < 1 || gpus > total) {
        lw_fail(err, 2, "%d GPUs requested, but cluster \"%s\" has %d (choose 1 to %d)", gpus, cl->name, total, total);
        return NULL;
    }
    if (batch < 1 || batch > 100000000L) {
        lw_fail(err, 2, "batch %ld is out of range (1 to 100000000)", batch);
        return NULL;
    }
    double t0 = lw_now();
    cost_model_priv *pm = lw_calloc(1, sizeof *pm);
    cost_model *m = &pm->pub;
    m->net = net;
    m->cl = cl;
    m->prof = (prof && strcmp(prof->gpu, cl->gpu.name) == 0) ? prof : NULL;
    m->gpus = gpus;
    m->batch = batch;
    m->n_layers = net->n_layers;
    int G = gpus;
    pm->nodes_used = (gpus + cl->gpus_per_node - 1) / cl->gpus_per_node;

    m->lat_s = lw_malloc(sizeof(double) * (size_t)G * G);
    m->inv_bw = lw_malloc(sizeof(double) * (size_t)G * G);
    for (int a = 0; a < G; a++)
        for (int b = 0; b < G; b++) {
            if (a == b) {
                m->lat_s[a * G + b] = m->inv_bw[a * G + b] = 0;
                continue;
            }
            link_spec l = cluster_link(cl, a, b);
            m->lat_s[a * G + b] = l.latency_us * 1e-6;
            m->inv_bw[a * G + b] = 1.0 / (l.bandwidth_gbs * 1e9);
        }
    tx_scratch *sc = &pm->sc;
    sc->recv_f = lw_calloc((size_t)G, sizeof(double));
    sc->recv_b = lw_calloc((size_t)G, sizeof(double));
    int nn = pm->nodes_used;
    sc->nic_in_f = lw_calloc((size_t)nn, sizeof(double));
    sc->nic_out_f = lw_calloc((size_t)nn, sizeof(double));
    sc->nic_in_b = lw_calloc((size_t)nn, sizeof(double));
    sc->nic_out_b = lw_calloc((size_t)nn, sizeof(double));
    size_t lcap = (size_t)NDIMS * (size_t)G * (size_t)(G + 1) + (size_t)G;
    sc->list_i = lw_malloc(sizeof(int) * lcap);
    sc->list_ov = lw_malloc(sizeof(long) * lcap);
    sc->list_start = lw_malloc(sizeof(int) * (size_t)NDIMS * (size_t)(G + 2));

    int L = net->n_layers;
    m->n_configs = lw_calloc((size_t)L, sizeof(int));
    m->configs = lw_calloc((size_t)L, sizeof(config *));
    m->t_c = lw_calloc((size_t)L, sizeof(double *));
    m->t_s = lw_calloc((size_t)L, sizeof(double *));
    m->t_c_profiled = lw_calloc((size_t)L, sizeof(unsigned char *));
    int ne = 0;
    for (int i = 0; i < L; i++) ne += net->layers[i].n_inputs;
    m->n_edges = ne;
    m->e_from = lw_calloc((size_t)ne + 1, sizeof(int));
    m->e_to = lw_calloc((size_t)ne + 1, sizeof(int));
    m->e_slot = lw_calloc((size_t)ne + 1, sizeof(int));
    m->t_x = lw_calloc((size_t)ne + 1, sizeof(double *));
    pm->desc = lw_calloc((size_t)ne + 1, sizeof(edge_desc));
    int e = 0;
    for (int i = 0; i < L; i++)
        for (int s = 0; s < net->layers[i].n_inputs; s++, e++) {
            m->e_from[e] = net->layers[i].inputs[s];
            m->e_to[e] = i;
            m->e_slot[e] = s;
        }
    for (e = 0; e < ne; e++) edge_describe(m, e, &pm->desc[e]);

    for (int i = 0; i < L; i++) {
        int n = configs_enumerate(&net->layers[i], batch, gpus, &m->configs[i]);
        m->n_configs[i] = n;
        m->t_c[i] = lw_malloc(sizeof(double) * (size_t)n);
        m->t_s[i] = lw_malloc(sizeof(double) * (size_t)n);
        m->t_c_profiled[i] = lw_calloc((size_t)n, 1);
        for (int k = 0; k < n; k++) {
            int prof_hit = 0;
            m->t_c[i][k] = cost_t_c(m, i, &m->configs[i][k], &prof_hit);
            m->t_c_profiled[i][k] = (unsigned char)prof_hit;
            m->t_s[i][k] = cost_t_s(m, i, &m->configs[i][k], NULL);
        }
    }
    /* Edges with the same description (shapes, mapping, and hence config
     * lists) have the same table: compute it once. */
    for (e = 0; e < ne; e++) {
        int from = m->e_from[e], to = m->e_to[e];
        int np = m->n_configs[from], nc = m->n_configs[to];
        m->t_x[e] = lw_malloc(sizeof(double) * (size_t)np * (size_t)nc);
        int same = -1;
        for (int f = 0; f < e; f++)
            if (memcmp(&pm->desc[f], &pm->desc[e], sizeof(edge_desc)) == 0) {
                same = f;
                break;
            }
        if (same >= 0) {
            memcpy(m->t_x[e], m->t_x[same], sizeof(double) * (size_t)np * (size_t)nc);
            m->tx_pairs_reused += (long)np * nc;
            continue;
        }
        for (int a = 0; a < np; a++)
            for (int b = 0; b < nc; b++)
                m->t_x[e][a * nc + b] = tx_eval(pm, &pm->desc[e], &m->configs[from][a], &m->configs[to][b], NULL);
        m->tx_pairs_computed += (long)np * nc;
    }
    m->build_ms = (lw_now() - t0) * 1e3;
    return m;
}

cost_graph *cost_model_graph(const cost_model *m)
{
    cost_graph *g = cg_new(m->n_layers, m->n_configs, m->n_edges);
    for (int i = 0; i < m->n_layers; i++)
        for (int k = 0; k < m->n_configs[i]; k++) g->node_cost[i][k] = m->t_c[i][k] + m->t_s[i][k];
    for (int e = 0; e < m->n_edges; e++) {
        int id = cg_add_edge(g, m->e_from[e], m->e_to[e]);
        memcpy(g->edge_cost[id], m->t_x[e],
               sizeof(double) * (size_t)m->n_configs[m->e_from[e]] * (size_t)m->n_configs[m->e_to[e]]);
    }
    return g;
}

void cost_model_free(cost_model *m)
{
    if (!m) return;
    cost_model_priv *pm = (cost_model_priv *)m;
    for (int i = 0; i < m->n_layers; i++) {
        free(m->configs[i]);
        free(m->t_c[i]);
        free(m->t_s[i]);
        free(m->t_c_profiled[i]);
    }
    for (int e = 0; e < m->n_edges; e++) free(m->t_x[e]);
    free(m->n_configs);
    free(m->configs);
    free(m->t_c);
    free(m->t_s);
    free(m->t_c_profiled);
    free(m->e_from);
    free(m->e_to);
    free(m->e_slot);
    free(m->t_x);
    free(m->lat_s);
    free(m->inv_bw);
    free(pm->desc);
    free(pm->sc.recv_f);
    free(pm->sc.recv_b);
    free(pm->sc.nic_in_f);
    free(pm->sc.nic_out_f);
    free(pm->sc.nic_in_b);
    free(pm->sc.nic_out_b);
    free(pm->sc.list_i);
    free(pm->sc.list_ov);
    free(pm->sc.list_start);
    free(pm);
}
