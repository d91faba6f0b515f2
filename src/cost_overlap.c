/*
 * cost_overlap: the geometry of an edge. Which part of the producer's
 * output each consumer task reads (a window with its halo, the whole
 * range, an offset into a concat, a flatten's row-major range), how much
 * of it each producer task holds, and the per-dimension lists of those
 * overlaps that the transfer model sums (cost_tx.c).
 */
#include "cost_internal.h"

#include <stdlib.h>
#include <string.h>

/* Edge e's description: both outputs' sizes at the model's batch and, per
 * dimension, how the consumer reads the producer's output (by its layer
 * type: a window, the whole range, an offset into a concat, or as it is). */
void edge_describe(const cost_model *m, int e, edge_desc *d)
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
        /* on a (sequence, features) tensor it reads whole features and
         * keeps the sequence */
        d->kind[DIM_C] = MAP_ALL;
        if (L->out.rank != 3) d->kind[DIM_H] = d->kind[DIM_W] = MAP_ALL;
        break;
    case LT_ATTENTION: /* every head reads every feature; the K/V of other sequence pieces: t_c's */
    case LT_LM_HEAD:
    case LT_EMBEDDING: /* the ids of its sequence piece */
        d->kind[DIM_C] = MAP_ALL;
        break;
    case LT_PATCH_EMBED: /* patches of the whole image: never split by sequence */
        d->kind[DIM_C] = d->kind[DIM_H] = d->kind[DIM_W] = MAP_ALL;
        break;
    case LT_SWIGLU: /* output features piece j: gate and up columns piece j (Megatron's layout) */
        d->kind[DIM_C] = MAP_PROP;
        break;
    case LT_SELECT_TOKEN:
        d->kind[DIM_H] = MAP_SELECT;
        d->p[DIM_H] = L->index;
        break;
    case LT_CLS_TOKEN: /* position i > 0 is input position i - 1 */
        d->kind[DIM_H] = MAP_OFFSET;
        d->p[DIM_H] = 1;
        break;
    case LT_FLATTEN:
        /* a (C, H, W) tensor read in row-major order: a box of it is not a
         * range of the flat index (flat, per task pair) unless H = W = 1
         * (a global pool's output: ResNet-50's, Inception-v3's), where the
         * flat index is the channel and every dimension maps as it is (the
         * same overlaps, in the closed form) */
        if (P->out.rank == 4 && (P->out.h != 1 || P->out.w != 1)) d->flat = 1;
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
    if (P->out.rank == 3 || L->out.rank == 3) { /* CNN edges keep their descriptions (and shared tables) */
        d->prank = P->out.rank;
        d->crank = L->out.rank;
        d->rslice = (L->dims & DIMMASK(DIM_R)) && m->e_slot[e] == 0 && (L->type == LT_LINEAR || L->type == LT_LM_HEAD);
        d->pcontract = P->contract;
        d->ccontract = L->contract;
        d->pheads = P->type == LT_ATTENTION ? P->heads : 0;
        d->cheads = L->type == LT_ATTENTION ? L->heads : 0;
        for (int f = 0; f < e && !d->rs_done; f++) d->rs_done = m->e_from[f] == m->e_from[e];
    }
}

/* Range of the producer's dimension k needed by consumer piece j of D
 * (clipped to the producer's size; empty: *hi == *lo). */
void need_range(const edge_desc *d, int k, int D, int j, long *lo, long *hi)
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
    case MAP_PROP:
        a = piece_lo(d->Sp[k], D, j), b = piece_hi(d->Sp[k], D, j);
        break;
    case MAP_SELECT:
        a = d->p[k], b = d->p[k] + 1;
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

/* Length of the overlap of [a0, a1) and [b0, b1). */
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

/* Elements consumer task `task` needs from producer task `ptask` (cost.h). */
double cost_overlap(const cost_model *m, int edge, const config *cp, int ptask, const config *cc, int task)
{
    const cost_model_priv *pm = (const cost_model_priv *)m;
    int pc[NDIMS], cco[NDIMS];
    config_task_coords(cp, ptask, pc);
    config_task_coords(cc, task, cco);
    return task_overlap(&pm->desc[edge], cp, pc, cc, cco);
}

/* The pieces of S / D that can meet [lo, hi): [*first, *end), consecutive
 * (empty where hi <= lo). */
static void piece_span(long S, int D, long lo, long hi, int *first, int *end)
{
    int i = (int)((double)lo * D / (double)S) - 1; /* pieces are equal splits: start near lo */
    if (i < 0) i = 0;
    while (i < D && piece_hi(S, D, i) <= lo) i++;
    int j = i;
    while (j < D && piece_lo(S, D, j) < hi) j++;
    *first = i;
    *end = hi > lo ? j : i;
}

/* The producer tasks that flatten consumer task cco (its coordinates in
 * cc) reads from, ascending, with their volumes (task_overlap's): only the
 * tasks whose samples meet the consumer's and whose channels meet those its
 * flat range [f0, f1) spans, every row and column of those, are asked; the
 * others hold none of it. A task of volume 0 is left out. Returns how many
 * (at most config_tasks(cp)); where skip >= 0, that task is left out too.
 * The same tasks and doubles, in the same order, as asking every task. */
int flat_sources(const edge_desc *d, const config *cp, const config *cc, const int *cco, int skip, int *ptask,
                 double *vol)
{
    const long HW = d->Sp[DIM_H] * d->Sp[DIM_W];
    const long f0 = piece_lo(d->Sc[1], cc->deg[1], cco[1]), f1 = piece_hi(d->Sc[1], cc->deg[1], cco[1]);
    int a0, a1, b0, b1;
    piece_span(d->Sp[0], cp->deg[0], piece_lo(d->Sc[0], cc->deg[0], cco[0]), piece_hi(d->Sc[0], cc->deg[0], cco[0]),
               &a0, &a1);
    if (f1 > f0)
        piece_span(d->Sp[1], cp->deg[1], f0 / HW, (f1 - 1) / HW + 1, &b0, &b1);
    else
        b0 = b1 = 0;
    const int D1 = cp->deg[1], D2 = cp->deg[2], D3 = cp->deg[3];
    int n = 0, pc[NDIMS];
    for (pc[0] = a0; pc[0] < a1; pc[0]++)
        for (pc[1] = b0; pc[1] < b1; pc[1]++)
            for (pc[2] = 0; pc[2] < D2; pc[2]++)
                for (pc[3] = 0; pc[3] < D3; pc[3]++) {
                    const int p = ((pc[0] * D1 + pc[1]) * D2 + pc[2]) * D3 + pc[3];
                    if (p == skip) continue;
                    const double v = task_overlap(d, cp, pc, cc, cco);
                    if (v > 0) ptask[n] = p, vol[n++] = v;
                }
    return n;
}

/* How many producer pieces of Sp / Dp overlap [lo, hi) (hi > lo); where
 * piece is non-NULL, writes them ascending with their overlaps (ov). */
static int overlapping(long Sp, int Dp, long lo, long hi, int *piece, long *ov)
{
    int n = 0;
    /* first producer piece that can overlap: pieces are equal splits */
    int i = (int)((double)lo * Dp / (double)Sp) - 1;
    if (i < 0) i = 0;
    for (; i < Dp && piece_lo(Sp, Dp, i) < hi; i++) {
        long o = overlap1(lo, hi, piece_lo(Sp, Dp, i), piece_hi(Sp, Dp, i));
        if (o) {
            if (piece) piece[n] = i, ov[n] = o;
            n++;
        }
    }
    return n;
}

/* Every producer task holding part of what consumer task `task` needs,
 * with cost_overlap's value for each (cost.h); where the producer has
 * partial sums or replicas, one task of each piece's group. */
int cost_overlaps_of(const cost_model *m, int edge, const config *cp, const config *cc, int task, int *ptask,
                     double *vol)
{
    const edge_desc *d = &((const cost_model_priv *)m)->desc[edge];
    int cco[NDIMS], n = 0;
    config_task_coords(cc, task, cco);
    if (d->flat) /* a flatten reads the (c, h, w) box in row-major order: not a product over dimensions */
        return flat_sources(d, cp, cc, cco, -1, ptask, vol);
    /* per dimension the producer pieces the need range meets (overlapping,
     * ascending), then every combination in row-major order: ascending
     * tasks, and the product over dimensions in task_overlap's order */
    enum { ON_STACK = 64 };
    int pcs[NDIMS][ON_STACK], cnt[NDIMS], *pc[NDIMS] = {NULL, NULL, NULL, NULL};
    long ovs[NDIMS][ON_STACK], *ov[NDIMS] = {NULL, NULL, NULL, NULL};
    for (int k = 0; k < NDIMS; k++) {
        int big = cp->deg[k] > ON_STACK;
        pc[k] = big ? lw_malloc(sizeof(int) * (size_t)cp->deg[k]) : pcs[k];
        ov[k] = big ? lw_malloc(sizeof(long) * (size_t)cp->deg[k]) : ovs[k];
        long lo, hi;
        need_range(d, k, cc->deg[k], cco[k], &lo, &hi);
        cnt[k] = overlapping(d->Sp[k], cp->deg[k], lo, hi, pc[k], ov[k]);
    }
    for (int a = 0; a < cnt[0]; a++) {
        double va = 1 * (double)ov[0][a];
        for (int b = 0; b < cnt[1]; b++) {
            double vb = va * (double)ov[1][b];
            for (int c = 0; c < cnt[2]; c++) {
                double vc = vb * (double)ov[2][c];
                int p0 = ((pc[0][a] * cp->deg[1] + pc[1][b]) * cp->deg[2] + pc[2][c]) * cp->deg[3];
                for (int e = 0; e < cnt[3]; e++) {
                    ptask[n] = p0 + pc[3][e];
                    vol[n++] = vc * (double)ov[3][e];
                }
            }
        }
    }
    for (int k = 0; k < NDIMS; k++)
        if (pc[k] != pcs[k]) free(pc[k]), free(ov[k]);
    /* partial sums or replicas (cost_shard.c): piece i is held by tasks
     * [i g, i g + g); name the one nearest the consumer's GPU (itself, else
     * the first on its node, else the first) */
    const int g = cp->deg[DIM_R] * cp->deg[DIM_X], gpn = m->cl->gpus_per_node;
    for (int i = 0; g > 1 && i < n; i++) {
        const int base = ptask[i] * g, lo = task / gpn * gpn, first = base > lo ? base : lo;
        ptask[i] = task >= base && task < base + g ? task : first < base + g && first < lo + gpn ? first : base;
    }
    return n;
}


/* Dimension k's lists for degrees Dp and Dc: for each consumer piece, the
 * producer pieces it overlaps, ascending, and by how much (start, piece,
 * ov). The other fields stay NULL until a form asks for them
 * (dim_list_build_sums, dim_list_build_dense). */
void dim_list_build(const edge_desc *d, int k, int Dp, int Dc, dim_list *out)
{
    long Sp = d->Sp[k];
    size_t cap = 1;
    for (int j = 0; j < Dc; j++) { /* count first: Dc x Dp is 1M pairs at 1024 x 1024 */
        long lo, hi;
        need_range(d, k, Dc, j, &lo, &hi);
        if (hi > lo) cap += (size_t)overlapping(Sp, Dp, lo, hi, NULL, NULL);
    }
    out->start = lw_malloc(sizeof(int) * ((size_t)Dc + 1));
    out->piece = lw_malloc(sizeof(int) * cap);
    out->ov = lw_malloc(sizeof(long) * cap);
    int n = 0;
    for (int j = 0; j < Dc; j++) {
        out->start[j] = n;
        long lo, hi;
        need_range(d, k, Dc, j, &lo, &hi);
        if (hi > lo) n += overlapping(Sp, Dp, lo, hi, out->piece + n, out->ov + n);
    }
    out->start[Dc] = n;
}

/* For the closed form of a single evaluation (O(entries)): the running
 * sums of the overlaps, the lists turned round (producer piece to the
 * consumer pieces that read it) with theirs, each list's first piece, and
 * whether every list's pieces are consecutive (contig). */
void dim_list_build_sums(dim_list *l, int Dp, int Dc)
{
    int n = l->start[Dc];
    l->cum = lw_malloc(sizeof(double) * ((size_t)n + 1));
    l->cum[0] = 0;
    for (int a = 0; a < n; a++) l->cum[a + 1] = l->cum[a] + (double)l->ov[a];
    l->tstart = lw_calloc((size_t)Dp + 1, sizeof(int));
    l->tpiece = lw_malloc(sizeof(int) * ((size_t)n + 1));
    long *tov = lw_malloc(sizeof(long) * ((size_t)n + 1));
    for (int a = 0; a < n; a++) l->tstart[l->piece[a] + 1]++;
    for (int i = 0; i < Dp; i++) l->tstart[i + 1] += l->tstart[i];
    int *fill = lw_malloc(sizeof(int) * ((size_t)Dp + 1));
    memcpy(fill, l->tstart, sizeof(int) * ((size_t)Dp + 1));
    for (int j = 0; j < Dc; j++)
        for (int a = l->start[j]; a < l->start[j + 1]; a++) {
            int t = fill[l->piece[a]]++;
            l->tpiece[t] = j;
            tov[t] = l->ov[a];
        }
    l->tcum = lw_malloc(sizeof(double) * ((size_t)n + 1));
    l->tcum[0] = 0;
    for (int a = 0; a < n; a++) l->tcum[a + 1] = l->tcum[a] + (double)tov[a];
    l->first = lw_malloc(sizeof(int) * (size_t)Dc);
    l->tfirst = lw_malloc(sizeof(int) * (size_t)Dp);
    l->contig = 1;
    for (int j = 0; j < Dc; j++) {
        int a = l->start[j], b = l->start[j + 1];
        l->first[j] = a < b ? l->piece[a] : 0;
        if (a < b && l->piece[b - 1] - l->piece[a] != b - 1 - a) l->contig = 0;
    }
    for (int i = 0; i < Dp; i++) {
        int a = l->tstart[i], b = l->tstart[i + 1];
        l->tfirst[i] = a < b ? l->tpiece[a] : 0;
        if (a < b && l->tpiece[b - 1] - l->tpiece[a] != b - 1 - a) l->contig = 0;
    }
    free(fill);
    free(tov);
}

/* For table builds (O(Dp x Dc) once, then O(1) a read for every config
 * pair of the edge): the overlap matrix, each consumer piece's running sums
 * and counts over the producer pieces and each producer piece's over the
 * consumer pieces, and whether all pieces need alike (uni_f, uni_b). */
void dim_list_build_dense(dim_list *l, int Dp, int Dc)
{
    l->mat = lw_calloc((size_t)Dp * (size_t)Dc, sizeof(long));
    for (int j = 0; j < Dc; j++)
        for (int a = l->start[j]; a < l->start[j + 1]; a++) l->mat[(size_t)l->piece[a] * Dc + j] = l->ov[a];
    l->pf_sum = lw_malloc(sizeof(double) * (size_t)Dc * (size_t)(Dp + 1));
    l->pf_cnt = lw_malloc(sizeof(int) * (size_t)Dc * (size_t)(Dp + 1));
    for (int j = 0; j < Dc; j++) {
        double *ps = &l->pf_sum[(size_t)j * (Dp + 1)];
        int *pc = &l->pf_cnt[(size_t)j * (Dp + 1)];
        ps[0] = 0;
        pc[0] = 0;
        for (int i = 0; i < Dp; i++) {
            long o = l->mat[(size_t)i * Dc + j];
            ps[i + 1] = ps[i] + (double)o;
            pc[i + 1] = pc[i] + (o != 0);
        }
    }
    l->uni_f = 1;
    for (int j = 1; j < Dc && l->uni_f; j++)
        l->uni_f = l->pf_sum[(size_t)j * (Dp + 1) + Dp] == l->pf_sum[Dp] &&
                   l->pf_cnt[(size_t)j * (Dp + 1) + Dp] == l->pf_cnt[Dp];
    l->pb_sum = lw_malloc(sizeof(double) * (size_t)Dp * (size_t)(Dc + 1));
    l->pb_cnt = lw_malloc(sizeof(int) * (size_t)Dp * (size_t)(Dc + 1));
    for (int i = 0; i < Dp; i++) {
        double *ps = &l->pb_sum[(size_t)i * (Dc + 1)];
        int *pc = &l->pb_cnt[(size_t)i * (Dc + 1)];
        ps[0] = 0;
        pc[0] = 0;
        for (int j = 0; j < Dc; j++) {
            long o = l->mat[(size_t)i * Dc + j];
            ps[j + 1] = ps[j] + (double)o;
            pc[j + 1] = pc[j] + (o != 0);
        }
    }
    l->uni_b = 1;
    for (int i = 1; i < Dp && l->uni_b; i++)
        l->uni_b = l->pb_sum[(size_t)i * (Dc + 1) + Dc] == l->pb_sum[Dc] &&
                   l->pb_cnt[(size_t)i * (Dc + 1) + Dc] == l->pb_cnt[Dc];
}


/* Frees every list el holds (el stays the caller's) and forgets its memo,
 * which is a scratch's (memo_lend). */
void lists_free(edge_lists *el)
{
    for (int k = 0; k < NDIMS; k++)
        for (int a = 0; a < MAX_LOG2; a++)
            for (int b = 0; b < MAX_LOG2; b++) {
                dim_list *l = &el->l[k][a][b];
                if (!l->start) continue; /* never built: every field NULL (most of the 676) */
                free(l->start);
                free(l->piece);
                free(l->ov);
                free(l->cum);
                free(l->tstart);
                free(l->tpiece);
                free(l->tcum);
                free(l->first);
                free(l->tfirst);
                free(l->mat);
                free(l->pf_sum);
                free(l->pf_cnt);
                free(l->pb_sum);
                free(l->pb_cnt);
                memset(l, 0, sizeof *l);
            }
    el->memo = NULL;
}
