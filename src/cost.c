#include "cost.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* What a what-if on prices, the batch or fewer GPUs reuses
 * (cost_model_reprice, cost_model_reuse). In the closed form
 * a receiving task's time is own_n x intra latency + own x bytes per
 * element / intra bandwidth + the same for the pieces (far_n) and elements
 * (far) from other nodes: linear in the prices with counts that do not
 * depend on them. So each table entry keeps, per direction, the count
 * vectors of its receivers that no other receiver's vector dominates (only
 * these can be the slowest at any prices: the time grows with each count),
 * and the most elements one node's NICs carry. */
typedef struct rp_cand {
    double own_n, own, far_n, far;
} rp_cand;
enum { RP_MAXC = 32 }; /* candidates kept per direction; more: the entry is recomputed instead */
/* Where one entry's evaluation leaves them. */
typedef struct rp_sink {
    rp_cand c[2][RP_MAXC]; /* [forward, backward] */
    int n[2];
    int over;              /* a direction had more than RP_MAXC */
    double nic[2];         /* most elements one node sends or receives over its NICs */
    double elems;          /* forward elements moved (0: the entry is 0) */
} rp_sink;
/* A kept candidate, packed: own_n x 2^48 + own, and the same for far
 * (exact: a piece count is at most the sender's tasks, below 2^16, and an
 * element count below 2^48, else the entry is not kept). */
typedef struct rp_pack {
    uint64_t own, far;
} rp_pack;
#define RP_ELEM_BITS 48
#define RP_ELEM_MASK ((1ULL << RP_ELEM_BITS) - 1)
#define RP_NONE UINT32_MAX /* an entry not kept: computed again */
/* One edge's kept counts. Entries share most candidate lists (Inception-v3
 * at 64 GPUs: 5 M lists, 0.6 M distinct), so the edge keeps each distinct
 * list once and an entry names its two; an entry with nothing to move
 * names empty ones. */
typedef struct rp_edge {
    uint32_t *list;        /* [2 x entries]: entry q's forward (2q) and backward (2q + 1) list; RP_NONE: not kept */
    double *nic;           /* [2 x entries]: most elements one node's NICs carry; NULL on one node */
    uint32_t *start;       /* [n_lists + 1]: list k is cand[start[k] .. start[k + 1]) */
    rp_pack *cand;
    long n_lists, n_cand, cap_lists, cap_cand;
    uint64_t *hash;        /* while the table is computed: per list, a 32-bit digest of its content
                            * (which also places it) in the high 32 bits and 1 + its id in the low 32;
                            * hcap slots (0: free) */
    long hcap;
} rp_edge;
/* Shared by the models priced from it (refs); the tables it describes are
 * those of the edges todo[0..n_todo-1], the others copy same[e]'s, for the
 * configs, GPU count and batch of the build that kept them (a model priced
 * from it may use a subset of those configs and another batch: see
 * cost_model_reuse). */
typedef struct tx_reprice {
    atomic_int refs;
    int n_edges, n_todo;
    int *same, *todo;
    rp_edge *e;            /* [n_edges] */
    atomic_long bytes;     /* kept so far, against RP_MAX_BYTES */
    atomic_int dropped;    /* over the limit: the model keeps none */
    long batch;            /* the build's global batch, */
    int gpus, gpus_per_node; /* GPU count and cluster layout, */
    int n_layers;
    int *n_configs;        /* and every layer's configs ([layer][config]) */
    config **configs;
} tx_reprice;
/* A build keeps them where they stay within RP_MAX_BYTES: 8 bytes an entry
 * (16 more where the model spans nodes), 16 a distinct candidate and 4 a
 * distinct list; where the entries alone would pass it, the build keeps
 * none from the start, else it stops keeping once the lists pass it.
 * Inception-v3 at 16 GPUs computes 0.29 M entries and keeps about 10 MB; at
 * 64 GPUs 2.5 M entries, about 81 MB. A build past the limit keeps none:
 * a what-if there builds. The limit bounds what a TUI holds besides its
 * tables (the search copies those, and the prefetcher holds up to four
 * more models). */
#define RP_MAX_BYTES (256L << 20)

/* Scratch for one t_x or t_s evaluation: each caller brings its own (one
 * allocation, scratch_init), so evaluations on one model may run on several
 * threads at once. */
typedef struct tx_scratch {
    rp_sink *sink;                      /* NULL, or where the closed form leaves what a repricing needs */
    double *recv_f, *recv_b;            /* [gpus] seconds */
    double *nic_in_f, *nic_out_f, *nic_in_b, *nic_out_b; /* [nodes] bytes */
    int *list_i;                        /* [gpus]: replicas of a shard, for t_s */
    int *flat_p;                        /* [gpus]: a flatten's producer tasks for one consumer task, */
    double *flat_v;                     /* [gpus]: and their volumes (flat_sources) */
    double *from_node;                  /* [nodes] bytes one consumer task gets per node */
    struct gn_memo *memo;               /* lent to one edge's table at a time (memo_lend) */
    long evaluated;                     /* entries compute_entry evaluated with this scratch */
} tx_scratch;

typedef struct cost_model_priv {
    cost_model pub;
    edge_desc *desc;                    /* [n_edges] */
    int *node_of;                       /* [gpus] cluster node of each GPU */
    int *first_edge;                    /* [layers]: edge of layer i's input slot s is first_edge[i] + s */
    int closed_form_ok;                 /* uniform links, power-of-two GPUs per node */
    /* Per-pair links within nodes (pair_form_ok: every override joins two
     * GPUs of one node, and every node's pairs have the links node 0's
     * have; power-of-two GPUs per node): the node-local links, [a * gpn +
     * b], seconds and seconds per byte, and their largest off the
     * diagonal (a bound's prices) */
    int pair_form_ok;
    double *pair_lat, *pair_inv;
    double *node_bw;                    /* [gpus * gpus_per_node]: link_tab's, where the cluster has overrides */
    double pair_lat_max, pair_inv_max;
    int tx_reference;                   /* cost_tx_reference when the model was set up */
    int tx_oracle;                      /* cost_tx_oracle when the model was set up */
    const profile *prof_given;          /* the profile asked for (pub.prof: NULL for another GPU or precision) */
    tx_reprice *rp;                     /* NULL: what-ifs on prices rebuild */
    /* how this model's entries sit in rp: rp_map[layer] (NULL: the same
     * configs) gives each config's index among rp's; kept element counts
     * times rp_num / rp_den are this model's (another batch) */
    int **rp_map;
    double rp_num, rp_den;
    int nodes_used;
    atomic_long n_repriced;             /* rp_fill_edge: entries priced from kept counts */
    /* Edges that are the same problem as another up to a whole factor on
     * every element count (plan_edge_tables): edge e's table is priced from
     * the kept counts of edge scale_src[e] (-1: none), times scale_num[e] /
     * scale_den[e]. A build that keeps no counts of its own keeps those of
     * such source edges in scale_rp while it builds. */
    int *scale_src;
    double *scale_num, *scale_den;
    unsigned char *scale_is_src;        /* [n_edges]: 1 where some edge's table is priced from e's counts */
    /* [n_edges]: 1 where t_x[e] is another edge's table (the same problem:
     * plan_edge_tables), which that edge owns */
    unsigned char *tx_shared;
    tx_reprice *scale_rp;
    atomic_long n_scaled;               /* entries of such tables priced so (the rest computed) */
    atomic_long n_evaluated;            /* entries evaluated (tx_pairs_evaluated), when the workers end */
    atomic_long *evaluated_live;        /* NULL, or the same counted as it goes (EVAL_REPORT at a time), for
                                         * another thread (cost_model_reuse_cancellable) */
} cost_model_priv;

/* Entries a worker evaluates between two reports to evaluated_live. */
enum { EVAL_REPORT = 256 };

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
static int flat_sources(const edge_desc *d, const config *cp, const config *cc, const int *cco, int skip, int *ptask,
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

/* Per dimension, for consumer piece j of Dc, the producer pieces of Dp it
 * overlaps and by how much. Built once per edge and degree pair. */
typedef struct dim_list {
    int *start;  /* [Dc + 1] */
    int *piece;  /* producer piece index */
    long *ov;    /* overlap length */
    /* for the closed form (built on first use, O(entries)): running sums of
     * ov over the entries (cum[a]: the entries before a), and the same
     * lists the other way round: for producer piece i, the consumer pieces
     * that need part of it, ascending, with their running sums */
    double *cum;  /* [entries + 1] */
    int *tstart;  /* [Dp + 1] */
    int *tpiece;  /* consumer piece index */
    double *tcum; /* [entries + 1] */
    /* the first sender piece of each receiver piece's list, each way; the
     * pieces of a list are consecutive (a need range is one interval, and
     * need ranges move monotonically with the consumer piece), which
     * dim_list_build_sums checks: contig = 0 would fall back to searching */
    int *first, *tfirst; /* [Dc], [Dp] */
    int contig;
    /* the same sums dense, for table builds (built on first use, O(Dp x
     * Dc), then every config pair of the edge reads them in O(1)): the
     * overlap matrix, and for each consumer piece the running sums and
     * counts of its overlaps over producer pieces [0, i), and the same the
     * other way */
    long *mat;      /* [Dp][Dc] */
    double *pf_sum; /* [Dc][Dp + 1] */
    int *pf_cnt;
    double *pb_sum; /* [Dp][Dc + 1] */
    int *pb_cnt;
    /* every consumer piece needs as many elements and pieces as every
     * other (uni_f; the same for producer pieces backward: uni_b) */
    int uni_f, uni_b;
} dim_list;

#define MAX_LOG2 13 /* degrees up to 4096 */

typedef struct edge_lists {
    dim_list l[NDIMS][MAX_LOG2][MAX_LOG2];
    struct gn_memo *memo; /* gather_nodes' slices and nodes over the edge's table, a scratch's (memo_lend) */
} edge_lists;

static int ilog2(int x) /* floor of log2 x, x >= 1 */
{
    return 31 - __builtin_clz((unsigned)x);
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
    return n;
}


static void dim_list_build(const edge_desc *d, int k, int Dp, int Dc, dim_list *out)
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

static void dim_list_build_sums(dim_list *l, int Dp, int Dc)
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

static void dim_list_build_dense(dim_list *l, int Dp, int Dc)
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

static const dim_list *lists_get(edge_lists *el, const edge_desc *d, int k, int Dp, int Dc)
{
    dim_list *l = &el->l[k][ilog2(Dp)][ilog2(Dc)];
    if (!l->start) dim_list_build(d, k, Dp, Dc, l);
    return l;
}

static void lists_free(edge_lists *el)
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

int cost_tx_reference;

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

/* Whether counts a dominate (are at least) counts b. Comparisons joined
 * by & rather than &&: one branch, not four that the data decide. */
static inline int cand_dominates(const rp_cand *a, const rp_cand *b)
{
    return (a->own_n >= b->own_n) & (a->own >= b->own) & (a->far_n >= b->far_n) & (a->far >= b->far);
}

/* Keeps counts y among the n candidates c[] unless one kept dominates
 * them; drops those they dominate, the others staying in order, and adds
 * y last unless cap are left (then sets *over). Returns how many are kept.
 * c may hold y's source past n: nothing past the first n is read. */
static inline int cand_keep(rp_cand *c, int n, const rp_cand y, int cap, int *over)
{
    /* the last kept first: most receivers repeat the one before, which it
     * is or dominates */
    for (int i = n - 1; i >= 0; i--)
        if (cand_dominates(&c[i], &y)) return n;
    int k = 0;
    for (int i = 0; i < n; i++) { /* keeps those y does not dominate, in order (k <= i) */
        c[k] = c[i];
        k += !cand_dominates(&y, &c[i]);
    }
    if (k == cap) {
        *over = 1;
        return k;
    }
    c[k++] = y;
    return k;
}

/* Keeps a receiver's counts among direction dir's candidates (cand_keep,
 * at most RP_MAXC). */
static inline void rp_keep(rp_sink *s, int dir, double own_n, double own, double far_n, double far)
{
    s->n[dir] = cand_keep(s->c[dir], s->n[dir], (rp_cand){own_n, own, far_n, far}, RP_MAXC, &s->over);
}

/* The prices of moving data: per piece and per element, within a node and
 * between nodes. Every place that turns a receiver's counts into its time
 * (the table builds and the re-pricing) goes through tx_time, so a
 * re-priced entry is the same double as a freshly built one. */
typedef struct tx_prices {
    double lat_in, inv_in, lat_x, inv_x, elem_b;
} tx_prices;

static inline tx_prices tx_prices_of(const cluster *cl, double elem_b)
{
    return (tx_prices){cl->intra.latency_us * 1e-6, 1.0 / (cl->intra.bandwidth_gbs * 1e9), cl->inter.latency_us * 1e-6,
                       1.0 / (cl->inter.bandwidth_gbs * 1e9), elem_b};
}

static inline double tx_time(const tx_prices *p, double own_n, double own, double far_n, double far)
{
    return own_n * p->lat_in + own * p->elem_b * p->inv_in + far_n * p->lat_x + far * p->elem_b * p->inv_x;
}

/* One receiver, from what it needs (all_n pieces, all elements), what of it
 * the sender's tasks on its node hold (own_n, own) and the overlap v with
 * the sender's task on its own GPU (0: none), which stays put: keeps the
 * slowest time and the element count, offers the counts to the sink.
 * Returns its elements from other nodes. */
typedef struct gn_rec gn_rec;
static inline void gn_rec_add(gn_rec *rec, double own_n, double own, double far_n, double far);

static inline __attribute__((always_inline)) double receiver_done(const tx_prices *p, double own_n, double own,
                                                                  double all_n, double all, double v, rp_sink *sink,
                                                                  int dir, double *slowest, double *elems,
                                                                  gn_rec *rec)
{
    /* v is an integer, at least 0: arithmetic rather than a branch that
     * the data decide (subtracting 0 changes nothing) */
    const double one = v < 1 ? v : 1;
    own -= v;
    own_n -= one;
    all -= v;
    all_n -= one;
    double far = all - own, far_n = all_n - own_n;
    double t = tx_time(p, own_n, own, far_n, far);
    *slowest = t > *slowest ? t : *slowest; /* a select, not a branch */
    if (sink) rp_keep(sink, dir, own_n, own, far_n, far);
    if (rec) gn_rec_add(rec, own_n, own, far_n, far);
    *elems += all;
    return far;
}

/* Where every degree of c is a power of two: the coordinates of task t
 * (shifts and masks where config_task_coords divides) and, as node_box, the
 * box of the `block` tasks from `first` (aligned: first is a multiple of
 * block, both powers of two). */
static inline void box_pow2(const config *c, int first, int block, int lo[NDIMS], int hi[NDIMS])
{
    int t = first, rem = block;
    for (int d = NDIMS - 1; d >= 0; d--) {
        int D = c->deg[d];
        int co = t & (D - 1);
        t >>= __builtin_ctz((unsigned)D);
        if (rem >= D) {
            lo[d] = 0;
            hi[d] = D;
            rem >>= __builtin_ctz((unsigned)D);
        } else {
            lo[d] = co;
            hi[d] = co + rem;
            rem = 1;
        }
    }
}

static inline int pow2_degrees(const config *c)
{
    for (int d = 0; d < NDIMS; d++)
        if (c->deg[d] < 1 || (c->deg[d] & (c->deg[d] - 1))) return 0;
    return 1;
}

/* A task's coordinates in config c (every degree a power of two) by
 * shifts and masks: coordinate d of task t is (t >> sh[d]) & mask[d]. */
static inline void task_shifts(const config *c, int sh[NDIMS], int mask[NDIMS])
{
    for (int d = NDIMS - 1, s = 0; d >= 0; d--) {
        sh[d] = s;
        mask[d] = c->deg[d] - 1;
        s += __builtin_ctz((unsigned)c->deg[d]);
    }
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

/* One direction's dense tables, per dimension: the running sums and counts
 * of each receiver piece's overlaps over the sender's pieces (rows of
 * row = sender degree + 1), and where a receiver and a sender piece's
 * overlap sits in mat (receiver piece x ms_r + sender piece x ms_s). */
static inline void dir_tables(const dim_list *const dl[NDIMS], const config *rcv, const config *snd, int forward,
                       const double *sum[NDIMS], const int *cnt[NDIMS], const long *mat[NDIMS], int row[NDIMS],
                       int ms_r[NDIMS], int ms_s[NDIMS])
{
    for (int d = 0; d < NDIMS; d++) {
        sum[d] = forward ? dl[d]->pf_sum : dl[d]->pb_sum;
        cnt[d] = forward ? dl[d]->pf_cnt : dl[d]->pb_cnt;
        mat[d] = dl[d]->mat; /* [producer piece][consumer piece] */
        row[d] = snd->deg[d] + 1;
        ms_r[d] = forward ? 1 : snd->deg[d];
        ms_s[d] = forward ? rcv->deg[d] : 1;
    }
}

/* One direction of the closed form: every task of config `rcv` gathers
 * what it needs from the tasks of config `snd`. Forward, the consumer's
 * tasks gather from the producer's (the lists); backward, the
 * producer's gather gradients from the consumer's (the lists turned round). Adds the bytes
 * that cross nodes to nic_in (receiving node) and nic_out_rev (the same
 * node sends them in the other direction). Returns the slowest receiver's
 * time in seconds. */
/* Inlined into its two callers, each with dense constant. */
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
static double gather_dense(const cost_model_priv *pm, const dim_list *const dl[NDIMS], const config *rcv,
                           const config *snd, int forward, double *nic_in, double *nic_out_rev, double *elems_out,
                           rp_sink *sink)
{
    return gather_impl(pm, dl, rcv, snd, forward, nic_in, nic_out_rev, elems_out, sink, 1);
}

static double gather_lists(const cost_model_priv *pm, const dim_list *const dl[NDIMS], const config *rcv,
                           const config *snd, int forward, double *nic_in, double *nic_out_rev, double *elems_out,
                           rp_sink *sink)
{
    return gather_impl(pm, dl, rcv, snd, forward, nic_in, nic_out_rev, elems_out, sink, 0);
}

/* What gather_small needs of one direction. */
typedef struct small_ctx {
    const double *sum[NDIMS];
    const int *cnt[NDIMS];
    const long *mat[NDIMS];
    int row[NDIMS], ms_r[NDIMS], ms_s[NDIMS], rsh[NDIMS], rmask[NDIMS], ssh[NDIMS], smask[NDIMS];
    int lo[NDIMS], hi[NDIMS]; /* the sender's box on the receivers' node */
    tx_prices pr;
    rp_sink *sink;
    int dir;
    double slowest, elems;
} small_ctx;

/* Receivers [ra, rb) of one node; own: the sender has tasks on the node;
 * self: each has the sender's task of its index on its GPU (rb <= Ts).
 * Returns their elements from other nodes. */
static inline __attribute__((always_inline)) double small_run(small_ctx *c, int ra, int rb, const int own_on,
                                                              const int self_on)
{
    double node_far = 0;
    for (int r = ra; r < rb; r++) {
        const size_t i0 = (size_t)((r >> c->rsh[0]) & c->rmask[0]), i1 = (size_t)((r >> c->rsh[1]) & c->rmask[1]),
                     i2 = (size_t)((r >> c->rsh[2]) & c->rmask[2]), i3 = (size_t)((r >> c->rsh[3]) & c->rmask[3]);
        const double *s0 = c->sum[0] + i0 * c->row[0], *s1 = c->sum[1] + i1 * c->row[1],
                     *s2 = c->sum[2] + i2 * c->row[2], *s3 = c->sum[3] + i3 * c->row[3];
        double all = s0[c->row[0] - 1] * s1[c->row[1] - 1] * s2[c->row[2] - 1] * s3[c->row[3] - 1];
        if (all == 0) continue;
        const int *n0 = c->cnt[0] + i0 * c->row[0], *n1 = c->cnt[1] + i1 * c->row[1],
                  *n2 = c->cnt[2] + i2 * c->row[2], *n3 = c->cnt[3] + i3 * c->row[3];
        double all_n = (double)n0[c->row[0] - 1] * n1[c->row[1] - 1] * n2[c->row[2] - 1] * n3[c->row[3] - 1];
        double own = 0, own_n = 0, v = 0;
        if (own_on) {
            own = (s0[c->hi[0]] - s0[c->lo[0]]) * (s1[c->hi[1]] - s1[c->lo[1]]) * (s2[c->hi[2]] - s2[c->lo[2]]) *
                  (s3[c->hi[3]] - s3[c->lo[3]]);
            own_n = (double)(n0[c->hi[0]] - n0[c->lo[0]]) * (n1[c->hi[1]] - n1[c->lo[1]]) *
                    (n2[c->hi[2]] - n2[c->lo[2]]) * (n3[c->hi[3]] - n3[c->lo[3]]);
        }
        if (self_on) /* the sender's task on the same GPU: nothing to move */
            v = (double)c->mat[0][i0 * c->ms_r[0] + (size_t)((r >> c->ssh[0]) & c->smask[0]) * c->ms_s[0]] *
                (double)c->mat[1][i1 * c->ms_r[1] + (size_t)((r >> c->ssh[1]) & c->smask[1]) * c->ms_s[1]] *
                (double)c->mat[2][i2 * c->ms_r[2] + (size_t)((r >> c->ssh[2]) & c->smask[2]) * c->ms_s[2]] *
                (double)c->mat[3][i3 * c->ms_r[3] + (size_t)((r >> c->ssh[3]) & c->smask[3]) * c->ms_s[3]];
        node_far += receiver_done(&c->pr, own_n, own, all_n, all, v, c->sink, c->dir, &c->slowest, &c->elems, NULL);
    }
    return node_far;
}

/* gather_dense where every degree and the GPUs per node are powers of two
 * (table builds): the same receivers in the same order, the same products
 * in the same order, so the same doubles and the same counts offered to the
 * sink in the same order, with fewer branches that depend on the data (most
 * of gather_dense's time went to mispredicted ones: the coordinate
 * odometers, the node change, the self overlap). A receiver's coordinates
 * come from shifts and masks; a node's receivers with the sender's task of
 * their index on their GPU, those without, and the nodes without sender
 * tasks each go through a loop of their own; the self overlap's removal is
 * arithmetic (subtracting a zero overlap changes nothing); a node's
 * elements to other nodes are summed before they reach its NIC totals
 * (integers below 2^53: exact in any order). */
static double gather_small(const cost_model_priv *pm, const dim_list *const dl[NDIMS], const config *rcv,
                           const config *snd, int forward, double *nic_in, double *nic_out_rev, double *elems_out,
                           rp_sink *sink)
{
    const cluster *cl = pm->pub.cl;
    const int gpn = cl->gpus_per_node;
    const int Tr = config_tasks(rcv), Ts = config_tasks(snd);
    const int Bs = Ts < gpn ? Ts : gpn;
    const int multi_node = pm->nodes_used > 1;
    small_ctx c;
    c.pr = tx_prices_of(cl, pm->pub.elem_bytes);
    c.sink = sink;
    c.dir = forward ? 0 : 1;
    c.slowest = c.elems = 0;
    dir_tables(dl, rcv, snd, forward, c.sum, c.cnt, c.mat, c.row, c.ms_r, c.ms_s);
    task_shifts(rcv, c.rsh, c.rmask);
    task_shifts(snd, c.ssh, c.smask);
    for (int r0 = 0; r0 < Tr; r0 += gpn) {
        const int r1 = r0 + gpn < Tr ? r0 + gpn : Tr;
        double node_far;
        if (r0 < Ts) {
            const int rs = r1 < Ts ? r1 : Ts;
            box_pow2(snd, r0, Bs, c.lo, c.hi);
            node_far = small_run(&c, r0, rs, 1, 1);
            if (rs < r1) node_far += small_run(&c, rs, r1, 1, 0);
        } else {
            node_far = small_run(&c, r0, r1, 0, 0);
        }
        if (multi_node && node_far > 0) {
            nic_in[r0 / gpn] += node_far * c.pr.elem_b;
            nic_out_rev[r0 / gpn] += node_far * c.pr.elem_b;
        }
    }
    *elems_out = c.elems;
    return c.slowest;
}

/* A receiver's time on per-pair links: tin, the sum over the senders on
 * its node of each one's latency and its elements at that link's
 * bandwidth (pair_add), then its pieces and elements from other nodes
 * (pair_done). Both forms (gather_pairs, gn_visit_pairs) add the same
 * terms in the same order: the senders in task order. */
typedef struct pair_acc {
    double tin, own, own_n, v; /* time and counts from the node's other GPUs; overlap with its own */
} pair_acc;

/* Sender task of overlap o (elements) at the pair's link (lat, inv),
 * self: on the receiver's own GPU. */
static inline void pair_add(pair_acc *a, int self, double o, double lat, double inv, double elem_b)
{
    if (self) {
        a->v = o; /* nothing to move */
    } else if (o > 0) {
        a->tin += lat + o * elem_b * inv;
        a->own += o;
        a->own_n += 1;
    }
}

/* The receiver done: its time (kept if the slowest), its elements moved
 * added to *elems; returns its elements from other nodes. */
static inline double pair_done(const tx_prices *p, double all, double all_n, const pair_acc *a, double *slowest,
                               double *elems)
{
    const double far = all - a->v - a->own, far_n = all_n - (a->v > 0) - a->own_n;
    const double t = a->tin + far_n * p->lat_x + far * p->elem_b * p->inv_x;
    if (t > *slowest) *slowest = t;
    *elems += all - a->v;
    return far;
}

/* One direction of the pair form, receiver by receiver (the closed form
 * where links within a node differ per pair: pair_form_ok): as
 * gather_impl, but what a receiver gets from its own node is summed over
 * the node's sender tasks, each at its own link; what it gets from other
 * nodes is the rest of what it needs, as in the closed form. Overlaps from
 * the dense matrix (dense) or the lists. No sink: nothing is kept for
 * what-ifs on such links. */
static double gather_pairs(const cost_model_priv *pm, const dim_list *const dl[NDIMS], const config *rcv,
                           const config *snd, int forward, double *nic_in, double *nic_out_rev, double *elems_out,
                           int dense)
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

int cost_tx_oracle;

/* gather_dense node by node, for table builds. The receivers on one
 * cluster node form a box of piece indices (node_box), so each dimension's
 * running sums are read once per piece of the box, the products over
 * dimensions are hoisted out of the inner loops, and coordinates come from
 * shifts. Visiting a node's receivers in order gives the same sums
 * (integers, so exactly), the same times, and the same candidates offered to
 * the sink in the same order as gather_dense.
 *
 * Without a sink and where the exact element count is not wanted, many nodes
 * are not visited at all (branch and bound): a node's bytes to other nodes are
 * separable (the sum over its box of all - own is the product over dimensions
 * of the box's sums of all, minus the same for own; the self overlap cancels
 * in all - own), so they come in O(dimensions x box) per node; and each
 * node's slowest receiver is bounded above by the time of the per-dimension
 * maxima of own_n, own and all_n, all less the minima of own_n, own (the time
 * grows with each count, and so does its rounding). A node whose bound is
 * at most the slowest time found so far (nodes in order) is left out: none
 * of its receivers can be slower. Then *elems_out is only right in sign (any
 * element moves or none: a node is left out only once a receiver's time is
 * positive, which some moved element makes it). All sums are of integers
 * below 2^53 (tensor elements), exact in any order. */
enum { GN_BOX = 64 }; /* most pieces of one dimension in a node's box */

/* What gather_nodes remembers over one edge's table (every entry of it).
 *
 * A slice is one dimension of one node's problem: the receiver pieces
 * [rlo, rlo + e) of the node's box, the sender's box [lo, hi) in that
 * dimension (lo = hi = 0: the sender has no task on the node) and the
 * direction. Its content is what gn_fill reads from the dense sums (per
 * receiver piece: the elements and pieces it needs and what of them the
 * sender's box holds), the box extents e and hi - lo, and the block of the
 * overlap matrix at those receiver and sender pieces. The same slice comes
 * back for many entries (every config pair with these degrees in this
 * dimension), so it is read once per edge; slices of equal content share an
 * id.
 *
 * A node's receivers (their slowest time, their elements and their
 * elements from other nodes, visited in order) are a function of its four
 * slices' contents, in either direction: the values, the self overlaps,
 * and the box shapes, which say which of the node's GPUs holds which
 * receiver and which sender task (both boxes are aligned, so a node's GPUs
 * hold them in row-major order of the box; a sender with no task on the
 * node has empty boxes). So a node whose four ids were visited before need
 * not be visited again: its results are the same doubles. The edge keeps
 * the last node visited at each of GN_NODES places (190 KB, well inside a
 * core's L2), where no sink wants the receivers' counts. */
enum { GN_CHUNK = 1 << 16, GN_NODES = 1 << 12, GN_GENS = 1 << 29 };
/* One content of slices (its id is its index in gn_memo's slice). */
typedef struct gn_slice {
    uint64_t chash;  /* of v's doubles */
    const double *v; /* e, hi - lo, then va, vn, vo, von [e] each, then the overlap block [e][hi - lo] */
    double agg[8];   /* gn_fill's sums, maxima and minima over the box */
} gn_slice;
typedef struct gn_node {
    uint32_t id[NDIMS];
    uint32_t tag; /* 0: empty; else gn_tag: the memo's generation and gn_ctx's held */
    double slowest, elems, far;
} gn_node;
/* A node as a sink saw it (gn_visit_sink_memo): its results and its
 * receivers' front of counts (a node's is 1 or 2 counts mostly: Inception-v3
 * at 64 GPUs, 7.5 M nodes computed: 5.5 M of 1, 1.4 M of 2, 1.2 k of more
 * than 4). */
enum { GN_OFFERS = 4, GN_SNODES = 1 << 11 };
typedef struct gn_snode {
    uint32_t id[NDIMS];
    uint32_t tag; /* 0: empty; else gn_tag */
    int n;        /* offers */
    double slowest, elems, far;
    rp_cand offer[GN_OFFERS];
} gn_snode;
/* Every count a node's receivers offer a sink, in order (gn_visit). */
struct gn_rec {
    int n;
    rp_cand c[GN_BOX];
};
static inline void gn_rec_add(gn_rec *rec, double own_n, double own, double far_n, double far)
{
    rec->c[rec->n++] = (rp_cand){own_n, own, far_n, far};
}

/* Slice keys come in families: a dimension, a direction, the two degrees
 * and the box's extent e. Within one, the receiver box starts at a multiple
 * of e and the sender's box [lo, hi) is aligned too (both are boxes of
 * aligned power-of-two blocks of tasks), so a key has a place of its own:
 * (rlo / e) x 2 Ds + the sender box's place in a heap over the Ds pieces
 * (0: no box; Ds / se + lo / se for a box of se pieces). */
enum { GN_LOG2_BOX = 7 }; /* values of log2 e: e up to GN_BOX */
enum { GN_FAMS = NDIMS * 2 * MAX_LOG2 * MAX_LOG2 * GN_LOG2_BOX }; /* dimension, direction, each degree, e */

typedef struct gn_memo {
    gn_slice *slice; /* the distinct contents */
    uint32_t n_slice, cap_slice;
    /* per key family (see GN_FAMS), allocated on first use: each key's
     * content id + 1 (0: not seen in this edge); the families used in this
     * edge, to clear */
    uint32_t *fam[GN_FAMS];
    size_t fam_len[GN_FAMS];
    unsigned char fam_on[GN_FAMS]; /* used in this edge: listed in fam_used */
    int fam_used[GN_FAMS], n_fam_used;
    /* [cap_hash], half full at most: each content's id + 1 */
    uint32_t *by_content;
    uint32_t cap_hash;
    double **chunk; /* slice contents, in chunks that never move: n_chunk of them, [cur] filling */
    int n_chunk, cur, used;
    gn_node *node;   /* [GN_NODES], NULL until a node is visited */
    gn_snode *snode; /* [GN_SNODES], the same where a sink wants the counts */
    uint32_t gen;    /* one more each reset: a cached node of an edge before has another in its tag */
} gn_memo;

typedef struct gn_ctx {
    const double *sum[NDIMS];
    const int *cnt[NDIMS];
    const long *mat[NDIMS];
    int row[NDIMS], ms_r[NDIMS], ms_s[NDIMS];
    const config *rcv, *snd;
    int Tr, Ts, Br, Bs, dir;
    tx_prices pr;
    tx_prices prb;                   /* the bound's prices: pr, or with the largest per-pair link within a node */
    const double *plat, *pinv;       /* per-pair links within a node (pair_form_ok), or NULL */
    int gpn;
    gn_memo *memo;
    /* per dimension, the node's slice: for the pieces of the box, everything
     * the receiver piece needs (elements, pieces) and what of it the
     * sender's tasks on the node hold */
    int rlo[NDIMS], ext[NDIMS];
    const double *va[NDIMS], *vn[NDIMS], *vo[NDIMS], *von[NDIMS];
    const uint64_t *nz[NDIMS]; /* on per-pair links: per receiver piece, the sender pieces it overlaps (bits) */
    uint32_t id[NDIMS];
    /* what the slices above are of: per dimension, the sender's box
     * [lo, hi), whether the sender had tasks on that node (held: 0 none
     * yet), and the slices' sums, maxima and minima */
    int lo[NDIMS], hi[NDIMS], held;
    double agg[NDIMS][8];
} gn_ctx;

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static int slice_len(const double *v)
{
    int e = (int)v[0], se = (int)v[1];
    return 2 + 4 * e + e * se;
}

static void memo_free(gn_memo *mm)
{
    if (!mm) return;
    for (int i = 0; i < mm->n_chunk; i++) free(mm->chunk[i]);
    free(mm->chunk);
    free(mm->slice);
    for (int f = 0; f < GN_FAMS; f++) free(mm->fam[f]);
    free(mm->by_content);
    free(mm->node);
    free(mm->snode);
    free(mm);
}

/* Forgets every slice and node, keeping the room for the next edge. */
static void memo_reset(gn_memo *mm)
{
    mm->n_slice = 0;
    for (int k = 0; k < mm->n_fam_used; k++) {
        const int f = mm->fam_used[k];
        memset(mm->fam[f], 0, sizeof(uint32_t) * mm->fam_len[f]);
        mm->fam_on[f] = 0;
    }
    mm->n_fam_used = 0;
    if (mm->by_content) memset(mm->by_content, 0, sizeof *mm->by_content * mm->cap_hash);
    mm->cur = -1;
    mm->used = 0;
    /* the node caches (550 KB together) are not cleared, which took a
     * fifth of a small build's time, but their tags made stale; cleared
     * only when the generations run out */
    if (++mm->gen == GN_GENS) {
        mm->gen = 0;
        if (mm->node) memset(mm->node, 0, sizeof *mm->node * GN_NODES);
        if (mm->snode) memset(mm->snode, 0, sizeof *mm->snode * GN_SNODES);
    }
}

/* Lends el (one edge's lists, fresh) the memo of sc (one thread's
 * scratch), reset: the room of the edges before, warm in the caches,
 * without asking the system for it again. Every edge_lists that tx_eval is
 * given has one. */
static void memo_lend(tx_scratch *sc, edge_lists *el)
{
    if (!sc->memo) {
        sc->memo = lw_calloc(1, sizeof *sc->memo);
        sc->memo->cur = -1;
    } else {
        memo_reset(sc->memo);
    }
    el->memo = sc->memo;
}

static void memo_put(uint32_t *tab, uint32_t cap, uint64_t h, uint32_t idx)
{
    uint32_t i = (uint32_t)h & (cap - 1);
    while (tab[i]) i = (i + 1) & (cap - 1);
    tab[i] = idx + 1;
}

static void memo_rehash(gn_memo *mm, uint32_t cap)
{
    free(mm->by_content);
    mm->by_content = lw_calloc(cap, sizeof(uint32_t));
    for (uint32_t k = 0; k < mm->n_slice; k++) memo_put(mm->by_content, cap, mm->slice[k].chash, k);
    mm->cap_hash = cap;
}

/* Where the key of dimension d's slice [rlo, rlo + e) x [lo, hi) sits in
 * its family's table (allocated, and listed for clearing, on first use). */
static uint32_t *memo_place(gn_ctx *g, int d, int rlo, int e, int lo, int hi)
{
    gn_memo *mm = g->memo;
    const int ls = ilog2(g->snd->deg[d]), lr = ilog2(g->rcv->deg[d]), le = ilog2(e), se = hi - lo;
    const int f = (((d * 2 + g->dir) * MAX_LOG2 + ls) * MAX_LOG2 + lr) * GN_LOG2_BOX + le;
    const size_t Ds = (size_t)g->snd->deg[d];
    if (!mm->fam[f]) {
        mm->fam_len[f] = (size_t)(g->rcv->deg[d] >> le) * 2 * Ds;
        mm->fam[f] = lw_calloc(mm->fam_len[f], sizeof(uint32_t));
    }
    if (!mm->fam_on[f]) {
        mm->fam_on[f] = 1;
        mm->fam_used[mm->n_fam_used++] = f;
    }
    /* se, Ds and lo / se's divisor are powers of two (aligned boxes): shifts, not divisions */
    const int lse = se ? ilog2(se) : 0;
    return &mm->fam[f][(size_t)(rlo >> le) * 2 * Ds + (se ? (Ds >> lse) + (size_t)(lo >> lse) : 0)];
}

/* Room for a slice's content of len doubles at the arena's end. */
static double *memo_space(gn_memo *mm, int len)
{
    if (mm->cur < 0 || mm->used + len > GN_CHUNK) {
        if (++mm->cur == mm->n_chunk) {
            mm->chunk = lw_realloc(mm->chunk, sizeof(double *) * (size_t)(mm->n_chunk + 1));
            mm->chunk[mm->n_chunk++] = lw_malloc(sizeof(double) * GN_CHUNK);
        }
        mm->used = 0;
    }
    return mm->chunk[mm->cur] + mm->used;
}

/* Dimension d's slice of the node whose receiver pieces are [rlo, rlo + e)
 * and sender box [lo, hi) (lo = hi = 0: none): the id of its content,
 * remembered, or read from the dense sums and remembered. */
static uint32_t memo_slice(gn_ctx *g, int d, int rlo, int e, int lo, int hi)
{
    gn_memo *mm = g->memo;
    uint32_t *place = memo_place(g, d, rlo, e, lo, hi);
    if (*place) return *place - 1;
    if (2 * (mm->n_slice + 1) > mm->cap_hash) memo_rehash(mm, mm->cap_hash ? 2 * mm->cap_hash : 1024);
    const int se = hi - lo, len = 2 + 4 * e + e * se, rw = g->row[d];
    const int bits_len = g->plat ? e : 0; /* gn_visit_pairs' bits after the content (gn_ctx nz) */
    double *v = memo_space(mm, len + bits_len), *va = v + 2, *vn = va + e, *vo = vn + e, *von = vo + e,
           *blk = von + e;
    v[0] = e;
    v[1] = se;
    const double *ps = g->sum[d] + (size_t)rlo * rw;
    const int *pn = g->cnt[d] + (size_t)rlo * rw;
    double ta = 0, to = 0, xa = 0, xn = 0, xo = 0, xon = 0, io = 1e300, ion = 1e300;
    for (int k = 0; k < e; k++, ps += rw, pn += rw) {
        const double a = ps[rw - 1], n = pn[rw - 1], o = se ? ps[hi] - ps[lo] : 0, on = se ? pn[hi] - pn[lo] : 0;
        va[k] = a, vn[k] = n, vo[k] = o, von[k] = on;
        ta += a, to += o;
        xa = a > xa ? a : xa, xn = n > xn ? n : xn, xo = o > xo ? o : xo, xon = on > xon ? on : xon;
        io = o < io ? o : io, ion = on < ion ? on : ion;
        for (int j = 0; j < se; j++)
            blk[k * se + j] = (double)g->mat[d][(size_t)(rlo + k) * (size_t)g->ms_r[d] +
                                                (size_t)(lo + j) * (size_t)g->ms_s[d]];
    }
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int k = 0; k < len; k++) {
        uint64_t w;
        memcpy(&w, &v[k], sizeof w);
        h = mix64(h ^ w);
    }
    uint32_t c = (uint32_t)h & (mm->cap_hash - 1), id;
    for (; mm->by_content[c]; c = (c + 1) & (mm->cap_hash - 1)) {
        const gn_slice *t = &mm->slice[mm->by_content[c] - 1];
        if (t->chash == h && slice_len(t->v) == len && !memcmp(t->v, v, sizeof(double) * (size_t)len))
            break; /* the same content: the room at the arena's end stays free */
    }
    if (mm->by_content[c]) {
        id = mm->by_content[c] - 1;
    } else {
        if (mm->n_slice == mm->cap_slice) {
            mm->cap_slice = mm->cap_slice ? 2 * mm->cap_slice : 256;
            mm->slice = lw_realloc(mm->slice, sizeof(gn_slice) * mm->cap_slice);
        }
        id = mm->n_slice++;
        mm->slice[id] = (gn_slice){.chash = h, .v = v, .agg = {ta, to, xa, xn, xo, xon, io, ion}};
        uint64_t *nz = (uint64_t *)(v + len); /* the arena's doubles, untyped until stored to */
        for (int k = 0; k < bits_len; k++) {
            uint64_t b = 0;
            for (int j = 0; j < se; j++) b |= (uint64_t)(blk[k * se + j] != 0) << j;
            nz[k] = b;
        }
        mm->used += len + bits_len;
        mm->by_content[c] = id + 1;
    }
    *place = id + 1;
    return id;
}

/* Fills the per-dimension values of the node whose receivers start at r0;
 * where bound is non-NULL, also returns its receivers' elements from other
 * nodes (exactly) in *far_sum and, where it is not the same problem as the
 * node before (below), a bound on its slowest receiver's time in
 * *bound.
 *
 * Each dimension's values are its slice (gn_memo: read from the sums once
 * per edge); nodes in order, a dimension whose receiver pieces and sender
 * box are those of the node before is not looked up again. Returns 1 where
 * the node is the same problem as the node before: every dimension's slice
 * of the same content (values, box extents and self overlaps) and the
 * sender with tasks on both or on neither. Then its receivers have the same
 * counts in the same order, so the same slowest time, elements and elements
 * from other nodes. */
static inline int gn_fill(gn_ctx *g, int r0, double *far_sum, double *bound)
{
    int rlo[NDIMS], rhi[NDIMS], lo[NDIMS] = {0, 0, 0, 0}, hi[NDIMS] = {0, 0, 0, 0};
    const int box_ok = r0 < g->Ts; /* the sender has tasks on this node */
    const int held = box_ok ? 2 : 1;
    box_pow2(g->rcv, r0, g->Br, rlo, rhi);
    if (box_ok) box_pow2(g->snd, r0, g->Bs, lo, hi);
    int same = g->held == held;
    for (int d = 0; d < NDIMS; d++) {
        if (g->held != held || rlo[d] != g->rlo[d] || lo[d] != g->lo[d] || hi[d] != g->hi[d]) {
            const int e = rhi[d] - rlo[d];
            const uint32_t id = memo_slice(g, d, rlo[d], e, lo[d], hi[d]);
            g->rlo[d] = rlo[d];
            g->lo[d] = lo[d];
            g->hi[d] = hi[d];
            if (id == g->id[d]) continue; /* the same content: the values and sums held already */
            same = 0;
            const gn_slice *s = &g->memo->slice[id];
            g->id[d] = id;
            g->ext[d] = e;
            g->va[d] = s->v + 2;
            g->vn[d] = g->va[d] + e;
            g->vo[d] = g->vn[d] + e;
            g->von[d] = g->vo[d] + e;
            g->nz[d] = (const uint64_t *)(g->von[d] + e + e * (hi[d] - lo[d])); /* after the content */
            memcpy(g->agg[d], s->agg, sizeof s->agg);
        }
    }
    g->held = held;
    if (bound) { /* the bound only where the node is not the one before */
        const double(*ag)[8] = g->agg;
#define GN_PROD(q) (ag[0][q] * ag[1][q] * ag[2][q] * ag[3][q])
        *far_sum = GN_PROD(0) - GN_PROD(1);
        if (!same) *bound = tx_time(&g->prb, GN_PROD(5), GN_PROD(4), GN_PROD(3) - GN_PROD(7), GN_PROD(2) - GN_PROD(6));
        /* per-pair links: a receiver's time is a sum over its node's senders,
         * each term at most the largest link's; the relative rounding of
         * such a sum (up to 64 terms) is far below 1e-12 */
        if (!same && g->plat) *bound *= 1 + 1e-12;
#undef GN_PROD
    }
    return same;
}

/* Visits the receivers of the node whose box gn_fill left, in order: the
 * slowest one's time; adds their elements to *elems and their elements from
 * other nodes to *far_sum, and offers their counts to the sink. */
/* self: 0 no receiver of the node has a sender task on its GPU, 1 every
 * one has, 2 some (a constant in each of gn_visit's calls, so that the
 * check per receiver and the self overlap go where none is). */
static inline __attribute__((always_inline)) double gn_visit_impl(const gn_ctx *g, int r0, double *elems_io,
                                                                  double *far_sum_io, rp_sink *sink, gn_rec *rec,
                                                                  const int self)
{
    /* locals, not g->: the sink's stores could alias g for all the compiler knows */
    const int Ts = g->Ts, dir = g->dir;
    const tx_prices pr = g->pr;
    const int e0 = g->ext[0], e1 = g->ext[1], e2 = g->ext[2], e3 = g->ext[3];
    const double *va0 = g->va[0], *va1 = g->va[1], *va2 = g->va[2], *va3 = g->va[3];
    const double *vn0 = g->vn[0], *vn1 = g->vn[1], *vn2 = g->vn[2], *vn3 = g->vn[3];
    const double *vo0 = g->vo[0], *vo1 = g->vo[1], *vo2 = g->vo[2], *vo3 = g->vo[3];
    const double *von0 = g->von[0], *von1 = g->von[1], *von2 = g->von[2], *von3 = g->von[3];
    const long *mr[NDIMS]; /* the self overlap's row of each dimension's matrix at the receiver's piece */
    size_t ms_r[NDIMS], ms_s[NDIMS];
    /* receiver r's coordinates in the sender's config, while r < Ts (its
     * GPU holds a sender task: what overlaps it stays put), from shifts */
    int ssh[NDIMS], smask[NDIMS];
    task_shifts(g->snd, ssh, smask);
    for (int d = 0; d < NDIMS; d++) {
        ms_r[d] = (size_t)g->ms_r[d];
        ms_s[d] = (size_t)g->ms_s[d];
    }
    double slowest = 0, elems = 0, far_sum = 0;
    int r = r0;
    for (int i0 = 0; i0 < e0; i0++) {
        const double a0 = 1 * va0[i0], n0 = 1 * vn0[i0], o0 = 1 * vo0[i0], on0 = 1 * von0[i0];
        mr[0] = g->mat[0] + (size_t)(g->rlo[0] + i0) * ms_r[0];
        for (int i1 = 0; i1 < e1; i1++) {
            const double a1 = a0 * va1[i1], n1 = n0 * vn1[i1], o1 = o0 * vo1[i1], on1 = on0 * von1[i1];
            mr[1] = g->mat[1] + (size_t)(g->rlo[1] + i1) * ms_r[1];
            for (int i2 = 0; i2 < e2; i2++) {
                const double a2 = a1 * va2[i2], n2 = n1 * vn2[i2], o2 = o1 * vo2[i2], on2 = on1 * von2[i2];
                mr[2] = g->mat[2] + (size_t)(g->rlo[2] + i2) * ms_r[2];
                const long *mr3 = g->mat[3] + (size_t)g->rlo[3] * ms_r[3];
                for (int i3 = 0; i3 < e3; i3++, r++, mr3 += ms_r[3]) {
                    double all = a2 * va3[i3], all_n = n2 * vn3[i3], own = o2 * vo3[i3], own_n = on2 * von3[i3];
                    if (all != 0) {
                        double v = 0; /* the sender's task on the same GPU: nothing to move */
                        if (self == 1 || (self == 2 && r < Ts))
                            v = (double)mr[0][(size_t)((r >> ssh[0]) & smask[0]) * ms_s[0]] *
                                (double)mr[1][(size_t)((r >> ssh[1]) & smask[1]) * ms_s[1]] *
                                (double)mr[2][(size_t)((r >> ssh[2]) & smask[2]) * ms_s[2]] *
                                (double)mr3[(size_t)((r >> ssh[3]) & smask[3]) * ms_s[3]];
                        far_sum +=
                            receiver_done(&pr, own_n, own, all_n, all, v, sink, dir, &slowest, &elems, rec);
                    }
                }
            }
        }
    }
    *elems_io += elems;
    *far_sum_io += far_sum;
    return slowest;
}

/* gn_visit on per-pair links (pair_form_ok): gather_pairs' sums for the
 * receivers of the node gn_fill left, from its slices: a receiver's
 * overlap with each sender task on the node is the product over dimensions
 * of the slices' overlap blocks; senders in task order (row-major over the
 * sender's box), receivers too. The node's GPUs hold receiver i and sender
 * j in that order, so the node-local link of the pair is (i, j): every
 * node has node 0's (pair_form_ok), and a node's results are a function of
 * its slices as in the uniform form (the node cache holds). */
static double gn_visit_pairs(const gn_ctx *g, double *elems_io, double *far_sum_io)
{
    const int gpn = g->gpn;
    const tx_prices pr = g->pr;
    const int e0 = g->ext[0], e1 = g->ext[1], e2 = g->ext[2], e3 = g->ext[3];
    int se[NDIMS];
    const double *blk[NDIMS];
    const uint64_t *const *nz = g->nz;
    for (int d = 0; d < NDIMS; d++) {
        se[d] = g->held == 2 ? g->hi[d] - g->lo[d] : 0;
        blk[d] = g->von[d] + g->ext[d];
    }
    const double *va0 = g->va[0], *va1 = g->va[1], *va2 = g->va[2], *va3 = g->va[3];
    const double *vn0 = g->vn[0], *vn1 = g->vn[1], *vn2 = g->vn[2], *vn3 = g->vn[3];
    double slowest = 0, elems = 0, far_sum = 0;
    int li = 0; /* the receiver's GPU on the node */
    for (int i0 = 0; i0 < e0; i0++) {
        const double a0 = 1 * va0[i0], n0 = 1 * vn0[i0];
        for (int i1 = 0; i1 < e1; i1++) {
            const double a1 = a0 * va1[i1], n1 = n0 * vn1[i1];
            for (int i2 = 0; i2 < e2; i2++) {
                const double a2 = a1 * va2[i2], n2 = n1 * vn2[i2];
                for (int i3 = 0; i3 < e3; i3++, li++) {
                    const double all = a2 * va3[i3], all_n = n2 * vn3[i3];
                    if (all == 0) continue;
                    pair_acc acc = {0, 0, 0, 0};
                    const double *lat = g->plat + (size_t)li * gpn, *inv = g->pinv + (size_t)li * gpn;
                    /* the senders whose overlap is not 0 (each factor not
                     * 0), in task order: those pair_add would skip add
                     * nothing, so the sums are the same doubles */
                    for (uint64_t m0 = nz[0][i0]; m0; m0 &= m0 - 1) {
                        const int j0 = __builtin_ctzll(m0);
                        const double b0 = blk[0][i0 * se[0] + j0];
                        for (uint64_t m1 = nz[1][i1]; m1; m1 &= m1 - 1) {
                            const int j1 = __builtin_ctzll(m1), j01 = j0 * se[1] + j1;
                            const double b1 = b0 * blk[1][i1 * se[1] + j1];
                            for (uint64_t m2 = nz[2][i2]; m2; m2 &= m2 - 1) {
                                const int j2 = __builtin_ctzll(m2), j012 = j01 * se[2] + j2;
                                const double b2 = b1 * blk[2][i2 * se[2] + j2];
                                for (uint64_t m3 = nz[3][i3]; m3; m3 &= m3 - 1) {
                                    const int j3 = __builtin_ctzll(m3), j = j012 * se[3] + j3; /* its GPU */
                                    pair_add(&acc, j == li, b2 * blk[3][i3 * se[3] + j3], lat[j], inv[j],
                                             pr.elem_b);
                                }
                            }
                        }
                    }
                    far_sum += pair_done(&pr, all, all_n, &acc, &slowest, &elems);
                }
            }
        }
    }
    *elems_io += elems;
    *far_sum_io += far_sum;
    return slowest;
}

static double gn_visit(const gn_ctx *g, int r0, double *elems_io, double *far_sum_io, rp_sink *sink, gn_rec *rec)
{
    if (g->plat) return gn_visit_pairs(g, elems_io, far_sum_io); /* no sink: nothing kept on such links */
    if (r0 >= g->Ts) return gn_visit_impl(g, r0, elems_io, far_sum_io, sink, rec, 0);
    if (r0 + g->Br <= g->Ts) return gn_visit_impl(g, r0, elems_io, far_sum_io, sink, rec, 1);
    return gn_visit_impl(g, r0, elems_io, far_sum_io, sink, rec, 2);
}

/* The place of the node gn_fill left in a cache of `places` (a power of
 * two), from its four slice ids and held (its tag). */
static inline size_t gn_place(const gn_ctx *g, size_t places)
{
    /* the ids are small integers: one odd multiplier each (the products
     * independent of each other), then one multiply spreads the sum's low
     * bits to the high bits kept */
    uint64_t h = (uint64_t)g->id[0] * 0x9e3779b97f4a7c15ULL + (uint64_t)g->id[1] * 0xc2b2ae3d27d4eb4fULL +
                 (uint64_t)g->id[2] * 0x165667b19e3779f9ULL + (uint64_t)g->id[3] * 0xd6e8feb86659fd93ULL +
                 (uint64_t)g->held;
    h ^= h >> 32;
    h *= 0xbf58476d1ce4e5b9ULL;
    return (size_t)(h >> 40) & (places - 1);
}

/* A cached node's tag: the memo's generation and held (1 or 2), never 0. */
static inline uint32_t gn_tag(const gn_ctx *g)
{
    return g->memo->gen << 2 | (uint32_t)g->held;
}

/* Whether a cached node (its ids and tag) is the node gn_fill left. */
static inline int gn_is(const uint32_t id[NDIMS], uint32_t tag, const gn_ctx *g)
{
    return tag == gn_tag(g) && id[0] == g->id[0] && id[1] == g->id[1] && id[2] == g->id[2] &&
           id[3] == g->id[3];
}

/* gn_visit of a node where no sink wants its receivers' counts, through
 * the edge's cache of nodes (gn_memo): adds the same elements and elements
 * from other nodes, returns the same slowest time. */
static double gn_visit_memo(const gn_ctx *g, int r0, double *elems_io, double *far_sum_io)
{
    gn_memo *mm = g->memo;
    if (!mm->node) mm->node = lw_calloc(GN_NODES, sizeof *mm->node);
    gn_node *n = &mm->node[gn_place(g, GN_NODES)];
    if (gn_is(n->id, n->tag, g)) {
        *elems_io += n->elems;
        *far_sum_io += n->far;
        return n->slowest;
    }
    double elems = 0, far = 0, t = gn_visit(g, r0, &elems, &far, NULL, NULL);
    *n = (gn_node){{g->id[0], g->id[1], g->id[2], g->id[3]}, gn_tag(g), t, elems, far};
    *elems_io += elems;
    *far_sum_io += far;
    return t;
}

/* The counts of cand[0..n) that the sink would keep of them alone, in
 * place and in the order it would hold them (rp_keep without its limit):
 * those no other dominates, the first of equal ones. Returns how many. */
static int cand_front(rp_cand *c, int n)
{
    if (n == 0) return 0;
    /* mostly one count dominates the others: it equals their maxima, and
     * is all the front (the first such) */
    rp_cand mx = c[0];
    for (int q = 1; q < n; q++) {
        mx.own_n = c[q].own_n > mx.own_n ? c[q].own_n : mx.own_n;
        mx.own = c[q].own > mx.own ? c[q].own : mx.own;
        mx.far_n = c[q].far_n > mx.far_n ? c[q].far_n : mx.far_n;
        mx.far = c[q].far > mx.far ? c[q].far : mx.far;
    }
    int top = -1;
    for (int q = n - 1; q >= 0; q--) {
        int eq = (c[q].own_n == mx.own_n) & (c[q].own == mx.own) & (c[q].far_n == mx.far_n) & (c[q].far == mx.far);
        top = eq ? q : top;
    }
    if (top >= 0) {
        c[0] = c[top];
        return 1;
    }
    int k = 0, over = 0; /* the kept ones in c[0..k), k <= q: c[q] not yet overwritten */
    for (int q = 0; q < n; q++) k = cand_keep(c, k, c[q], n + 1, &over);
    return k;
}

/* gn_visit of a node whose receivers' counts sink wants, through the
 * edge's cache of such nodes: offers the sink the node's own front of
 * counts (cand_front of its receivers' counts), first seen or cached.
 * The sink ends each node as it would after every receiver's offer: what
 * it holds is always the front of all it was offered (a count dominated
 * within the node is dominated by one of the node's front, which the sink
 * then keeps or dominates), in the order of first offers. (Past RP_MAXC
 * the sink gives up on the entry, which is then computed again when
 * priced: a node's front can at most change when that happens, not what
 * an entry costs.) */
static double gn_visit_sink_memo(const gn_ctx *g, int r0, double *elems_io, double *far_sum_io, rp_sink *sink)
{
    gn_memo *mm = g->memo;
    if (!mm->snode) mm->snode = lw_calloc(GN_SNODES, sizeof *mm->snode);
    gn_snode *n = &mm->snode[gn_place(g, GN_SNODES)];
    if (gn_is(n->id, n->tag, g)) {
        for (int k = 0; k < n->n; k++)
            rp_keep(sink, g->dir, n->offer[k].own_n, n->offer[k].own, n->offer[k].far_n, n->offer[k].far);
        *elems_io += n->elems;
        *far_sum_io += n->far;
        return n->slowest;
    }
    gn_rec rec;
    rec.n = 0;
    double elems = 0, far = 0, t = gn_visit(g, r0, &elems, &far, NULL, &rec);
    *elems_io += elems;
    *far_sum_io += far;
    const int kept = cand_front(rec.c, rec.n);
    for (int k = 0; k < kept; k++) rp_keep(sink, g->dir, rec.c[k].own_n, rec.c[k].own, rec.c[k].far_n, rec.c[k].far);
    if (kept > GN_OFFERS) { /* too many to keep: this node is visited again next time */
        n->tag = 0;
        return t;
    }
    memcpy(n->offer, rec.c, sizeof(rp_cand) * (size_t)kept);
    memcpy(n->id, g->id, sizeof n->id);
    n->tag = gn_tag(g);
    n->n = kept;
    n->slowest = t;
    n->elems = elems;
    n->far = far;
    return t;
}

static double gather_nodes(const cost_model_priv *pm, gn_memo *memo, const dim_list *const dl[NDIMS],
                           const config *rcv, const config *snd, int forward, double *nic_in, double *nic_out_rev,
                           double *elems_out, rp_sink *sink, int exact_elems)
{
    const cluster *cl = pm->pub.cl;
    const int gpn = cl->gpus_per_node, Tr = config_tasks(rcv);
    const int pow2 = pow2_degrees(rcv) && pow2_degrees(snd) && (gpn & (gpn - 1)) == 0;
    /* with fewer than 8 receivers a node, receiver by receiver is as fast */
    if (!pow2 || gpn < 8 || gpn > GN_BOX || Tr < 8) {
        if (pm->pair_form_ok) return gather_pairs(pm, dl, rcv, snd, forward, nic_in, nic_out_rev, elems_out, 1);
        return pow2 && (gpn <= 8 || Tr <= 8)
                   ? gather_small(pm, dl, rcv, snd, forward, nic_in, nic_out_rev, elems_out, sink)
                   : gather_dense(pm, dl, rcv, snd, forward, nic_in, nic_out_rev, elems_out, sink);
    }
    gn_ctx g;
    g.rcv = rcv;
    g.snd = snd;
    g.Tr = Tr;
    g.Ts = config_tasks(snd);
    g.Br = g.Tr < gpn ? g.Tr : gpn;
    g.Bs = g.Ts < gpn ? g.Ts : gpn;
    g.dir = forward ? 0 : 1;
    g.pr = g.prb = tx_prices_of(cl, pm->pub.elem_bytes);
    g.plat = g.pinv = NULL;
    g.gpn = gpn;
    if (pm->pair_form_ok) {
        g.plat = pm->pair_lat;
        g.pinv = pm->pair_inv;
        g.prb.lat_in = pm->pair_lat_max;
        g.prb.inv_in = pm->pair_inv_max;
    }
    g.memo = memo;
    dir_tables(dl, rcv, snd, forward, g.sum, g.cnt, g.mat, g.row, g.ms_r, g.ms_s);
    for (int d = 0; d < NDIMS; d++) g.id[d] = UINT32_MAX; /* no slice yet */
    const int multi_node = pm->nodes_used > 1;
    /* nodes may be left out where the time grows with each count (prices
     * not negative), the element count is not wanted exactly, and no sink
     * wants every receiver's counts (and the exact count) */
    const int bound = !exact_elems && !sink && g.prb.lat_in >= 0 && g.pr.lat_x >= 0 && g.prb.inv_in >= 0 &&
                      g.pr.inv_x >= 0 && g.pr.elem_b >= 0;
    /* The nodes from r0 = Ts on hold no sender task (the tail): nothing
     * stays on them, and each receiver's counts are products of what its
     * pieces need. Where every dimension the nodes' boxes move along needs
     * as much for every piece, every tail node is the same problem as the
     * first: its receivers in order have the same counts. */
    int tail_same = g.Ts < g.Tr;
    if (tail_same) {
        int rl[NDIMS], rh[NDIMS];
        box_pow2(rcv, 0, g.Br, rl, rh);
        for (int d = 0; d < NDIMS; d++)
            if (rh[d] - rl[d] < rcv->deg[d] && !(forward ? dl[d]->uni_f : dl[d]->uni_b)) tail_same = 0;
    }
    const int tail0 = (g.Ts + g.Br - 1) / g.Br * g.Br; /* the first tail node */
    double slowest = 0, elems = 0, node_elems = 0, node_far = 0, tail_far = 0;
    int tail_filled = 0; /* a tail node was filled: tail_far (and node_elems) are its */
    g.held = 0;
    /* With the bound, the last node first: the tail's receivers get
     * everything from other nodes and are mostly the slowest, so more of
     * the other nodes fall under the bound (Inception-v3 at 64 GPUs: 20%
     * fewer nodes visited). The slowest time is a maximum over every node
     * and each node's elements from other nodes go to its own NIC totals,
     * in any order. With a sink, nodes in order: it keeps counts in the
     * order they are first offered. */
    const int n_nodes = g.Tr / g.Br;
    for (int k = 0; k < n_nodes; k++) {
        const int r0 = (bound ? n_nodes - 1 - k : k) * g.Br;
        double far_sum = 0, ub_t = 0;
        if (tail_same && r0 >= tail0 && tail_filled) { /* as the first tail node filled, which gn_fill would find */
            far_sum = tail_far;
            if (!bound) elems += node_elems;
        } else if (bound) {
            int same = gn_fill(&g, r0, &far_sum, &ub_t);
            /* no receiver here is slower than one already seen (the same
             * problem as the node before was seen, or bounded, already) */
            if (!same && !(slowest > 0 && ub_t <= slowest)) {
                double unused = 0;
                double t = gn_visit_memo(&g, r0, &elems, &unused);
                if (t > slowest) slowest = t;
            }
        } else {
            /* the same problem as the node before: the same counts, which
             * the sink holds already */
            if (!gn_fill(&g, r0, NULL, NULL)) {
                node_elems = node_far = 0;
                double t = sink ? gn_visit_sink_memo(&g, r0, &node_elems, &node_far, sink)
                                : gn_visit_memo(&g, r0, &node_elems, &node_far);
                if (t > slowest) slowest = t;
            }
            elems += node_elems;
            far_sum = node_far;
        }
        if (r0 >= tail0 && !tail_filled) {
            tail_far = far_sum;
            tail_filled = 1;
        }
        if (multi_node && far_sum > 0) {
            nic_in[r0 / gpn] += far_sum * g.pr.elem_b;
            nic_out_rev[r0 / gpn] += far_sum * g.pr.elem_b;
        }
    }
    *elems_out = elems;
    return slowest;
}

/* The same sums as the per-piece loop of tx_eval, in closed form, for a
 * cluster whose links are uniform within a node and between nodes. What a
 * task receives splits into three classes: from its own GPU (free), from
 * the other GPUs of its node, and from other nodes. The volume (and number
 * of pieces) it needs from all tasks is a product of per-dimension sums; from
 * the tasks on its own node, a product of sums over that node's box; the
 * rest comes over the network. So each task costs O(dimensions), not
 * O(tasks it overlaps). Returns seconds. *elems_out: the forward elements
 * moved, exactly where exact_elems, else only its sign (table builds). */
static double tx_closed_form(const cost_model_priv *pm, const tx_scratch *sc, gn_memo *memo,
                             const dim_list *const dl[NDIMS], const config *cp, const config *cc, double *elems_out,
                             int exact_elems)
{
    double back_elems, max_f, max_b;
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
    if (sink) sink->elems = *elems_out;
    return max_f + max_b;
}

/* t_x of one (producer config, consumer config) pair. Links are symmetric,
 * so the forward piece p -> k and its gradient k -> p cost the same time;
 * the forward time is charged to receiver k, the backward one to p. */
static double tx_eval(const cost_model_priv *pm, const tx_scratch *sc, edge_lists *el, const edge_desc *d,
                      const config *cp, const config *cc, double *bytes_out)
{
    const cost_model *m = &pm->pub;
    int G = m->gpus;
    double *recv_f = sc->recv_f, *recv_b = sc->recv_b;
    int multi_node = pm->nodes_used > 1;
    if (multi_node) {
        size_t nb = sizeof(double) * (size_t)pm->nodes_used;
        memset(sc->nic_in_f, 0, nb);
        memset(sc->nic_out_f, 0, nb);
        memset(sc->nic_in_b, 0, nb);
        memset(sc->nic_out_b, 0, nb);
    }
    const int *node = pm->node_of;
    double elems = 0;
    int nt_c = config_tasks(cc);
    /* bytes consumer task k receives from each node, folded into the NIC
     * totals once per consumer task rather than once per piece; the nodes
     * it received from listed as met (on_node, n_on): a task's sources come
     * in ascending order, and a GPU's node is its index / GPUs per node, so
     * the list is ascending and the fold adds in node order without
     * visiting every node (list_i: t_s's, free here) */
    double *from_node = sc->from_node;
    int *on_node = sc->list_i, n_on = 0, last_node = -1;
#define MOVE(P, K, VOL)                                                                                            \
    do {                                                                                                           \
        double b_ = (VOL) * m->elem_bytes;                                                                         \
        double t_ = lat_k[P] + b_ * inv_k[P];                                                                      \
        rf += t_;                                                                                                  \
        recv_b[P] += t_;                                                                                           \
        elems += (VOL);                                                                                            \
        from_node[node[P]] += b_;                                                                                  \
        if (node[P] != last_node) on_node[n_on++] = last_node = node[P];                                           \
    } while (0)
#define FOLD_NIC(K)                                                                                                \
    do {                                                                                                           \
        const int nk_ = node[K];                                                                                   \
        for (int t_ = 0; t_ < n_on; t_++) {                                                                        \
            const int n_ = on_node[t_];                                                                            \
            double b_ = from_node[n_];                                                                             \
            from_node[n_] = 0;                                                                                     \
            if (!multi_node || n_ == nk_ || b_ == 0) continue;                                                     \
            sc->nic_in_f[nk_] += b_;                                                                               \
            sc->nic_out_f[n_] += b_;                                                                               \
            sc->nic_in_b[n_] += b_;                                                                                \
            sc->nic_out_b[nk_] += b_;                                                                              \
        }                                                                                                          \
        n_on = 0;                                                                                                  \
        last_node = -1;                                                                                            \
    } while (0)
    if (d->flat) {
        memset(recv_f, 0, sizeof(double) * (size_t)G);
        memset(recv_b, 0, sizeof(double) * (size_t)G);
        int cco[NDIMS];
        int *src = sc->flat_p;
        double *src_v = sc->flat_v;
        for (int k = 0; k < nt_c; k++) {
            const double *lat_k = &m->lat_s[k * G], *inv_k = &m->inv_bw[k * G];
            double rf = 0;
            config_task_coords(cc, k, cco);
            const int ns = flat_sources(d, cp, cc, cco, k, src, src_v);
            for (int q = 0; q < ns; q++) MOVE(src[q], k, src_v[q]);
            recv_f[k] += rf;
            FOLD_NIC(k);
        }
    } else {
        edge_lists local;
        edge_lists *L = el;
        if (!L) {
            memset(&local, 0, sizeof local);
            L = &local;
        }
        const dim_list *dl[NDIMS];
        for (int q = 0; q < NDIMS; q++) dl[q] = lists_get(L, d, q, cp->deg[q], cc->deg[q]);
        if ((pm->closed_form_ok || pm->pair_form_ok) && !pm->tx_reference) {
            for (int q = 0; q < NDIMS; q++)
                if (L == &local) {
                    if (!dl[q]->cum) dim_list_build_sums((dim_list *)dl[q], cp->deg[q], cc->deg[q]);
                } else if (!dl[q]->mat) {
                    dim_list_build_dense((dim_list *)dl[q], cp->deg[q], cc->deg[q]);
                }
            double t = tx_closed_form(pm, sc, L->memo, dl, cp, cc, &elems, bytes_out != NULL);
            if (L == &local) lists_free(&local);
            if (bytes_out) *bytes_out = 2 * elems * m->elem_bytes;
            return elems > 0 ? 1e3 * t : 0;
        }
        memset(recv_f, 0, sizeof(double) * (size_t)G);
        memset(recv_b, 0, sizeof(double) * (size_t)G);
        const int d1 = cp->deg[1], d2 = cp->deg[2], d3 = cp->deg[3];
        int cco[NDIMS] = {0, 0, 0, 0};
        for (int k = 0; k < nt_c; k++) {
            if (k) /* next coordinate, row-major: cheaper than dividing per task */
                for (int q = NDIMS - 1; q >= 0; q--) {
                    if (++cco[q] < cc->deg[q]) break;
                    cco[q] = 0;
                }
            const double *lat_k = &m->lat_s[k * G], *inv_k = &m->inv_bw[k * G];
            double rf = 0;
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
                            if (p == k) continue;
                            double vol = vc * (double)dl[3]->ov[e];
                            MOVE(p, k, vol);
                        }
                    }
                }
            }
            recv_f[k] += rf;
            FOLD_NIC(k);
        }
        if (L == &local) lists_free(&local);
    }
#undef MOVE
#undef FOLD_NIC
    double bytes = 2 * elems * m->elem_bytes;
    if (bytes_out) *bytes_out = bytes;
    if (bytes == 0) return 0;
    return 1e3 * (phase_time(pm, recv_f, sc->nic_in_f, sc->nic_out_f) +
                  phase_time(pm, recv_b, sc->nic_in_b, sc->nic_out_b));
}

static void scratch_init(tx_scratch *sc, int G, int nn);
static void scratch_free(tx_scratch *sc);

double cost_t_x(const cost_model *m, int edge, const config *cp, const config *cc, double *bytes)
{
    const cost_model_priv *pm = (const cost_model_priv *)m;
    tx_scratch sc;
    scratch_init(&sc, m->gpus, pm->nodes_used);
    double t = tx_eval(pm, &sc, NULL, &pm->desc[edge], cp, cc, bytes);
    scratch_free(&sc);
    return t;
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
 * fixed launch cost per kernel. A kernel of F flops reaches the fraction
 * F / (F + F_half) of its operator's efficiency (F_half =
 * saturation_gflop): small kernels cannot fill every SM. Seconds. */
static double phase_s(const gpu_consts *g, double mem_bw_gbs, int opc, double flops, double bytes, int nk)
{
    if (nk == 0) return 0;
    double t_flop = 0;
    if (flops > 0) {
        /* only the GEMM-like operators have enough work per kernel to saturate */
        double half = (opc == OPC_CONV || opc == OPC_LINEAR) ? nk * g->saturation_gflop * 1e9 : 0;
        t_flop = (flops + half) / (g->peak_tflops * 1e12 * g->efficiency[opc]);
    }
    double t_mem = bytes / (mem_bw_gbs * 1e9 * g->memory_efficiency);
    return (t_flop > t_mem ? t_flop : t_mem) + nk * g->kernel_overhead_us * 1e-6;
}

/* Largest piece of S over D. */
static long max_piece(long S, int D)
{
    return (S + D - 1) / D;
}

/* t_c with its parts: the profile key of the task's shape (key may be
 * NULL), the analytical forward and backward times (ms), and whether the
 * profile supplied the result. Returns the t_c the model uses. */
static double t_c_eval(const cost_model *m, int li, const config *c, profile_entry *key_out, double *fwd_ms,
                       double *bwd_ms, int *profiled)
{
    const layer *l = &m->net->layers[li];
    if (profiled) *profiled = 0;
    if (fwd_ms) *fwd_ms = 0;
    if (bwd_ms) *bwd_ms = 0;
    if (key_out) memset(key_out, 0, sizeof *key_out);
    /* The input layer carries the per-step cost outside the kernels (the
     * same for every config, so it never changes the optimum); a flatten
     * is a view and runs no kernel. */
    if (l->type == LT_INPUT) {
        if (fwd_ms) *fwd_ms = m->gk.step_overhead_ms;
        return m->gk.step_overhead_ms;
    }
    if (l->type == LT_FLATTEN) return 0;
    long o[NDIMS];
    for (int k = 0; k < NDIMS; k++) o[k] = max_piece(layer_dim_size(l, k, m->batch), c->deg[k]);
    double out = (double)o[0] * o[1] * o[2] * o[3];
    /* input block one task reads: the needed range of each input, middle piece */
    double in = 0;
    long in_block[NDIMS] = {0, 0, 0, 0};
    const cost_model_priv *pm = (const cost_model_priv *)m;
    for (int s = 0; s < l->n_inputs; s++) {
        const edge_desc *d = &pm->desc[pm->first_edge[li] + s];
        double v = 1;
        for (int k = 0; k < NDIMS; k++) {
            long lo, hi;
            if (d->flat && k > 0) {
                lo = 0;
                hi = k == 1 ? max_piece(d->Sc[1], c->deg[1]) : 1;
            } else {
                need_range(d, k, c->deg[k], c->deg[k] / 2, &lo, &hi);
            }
            if (s == 0) in_block[k] = hi - lo;
            v *= (double)(hi - lo);
        }
        in += v;
    }
    double shards = c->deg[DIM_C];
    double w = (double)l->n_params / shards;
    const gpu_consts *g = &m->gk;

    profile_entry key;
    memset(&key, 0, sizeof key);
    key.type = l->type;
    key.n_inputs = l->n_inputs; /* an add of 3 inputs costs more than one of 2 with the same shapes */
    for (int k = 0; k < NDIMS; k++) {
        key.in[k] = in_block[k];
        key.out[k] = o[k];
    }
    if (l->type == LT_CONV2D || l->type == LT_POOL2D) {
        key.k[0] = l->kh, key.k[1] = l->kw;
        key.s[0] = l->sh, key.s[1] = l->sw;
        key.p[0] = l->ph, key.p[1] = l->pw;
    }
    if (key_out) *key_out = key;
    double measured = m->prof ? profile_lookup(m->prof, &key) : -1;

    double flops = 0;
    int nk_f = 1, nk_b = 1;
    double bytes_f = (in + out + w) * m->elem_bytes;
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
    const double mbw = m->cl->gpu.memory_bandwidth_gbs;
    double tf = phase_s(g, mbw, opc, flops, bytes_f, nk_f) * 1e3, tb = phase_s(g, mbw, opc, 2 * flops, bytes_b, nk_b) * 1e3;
    if (fwd_ms) *fwd_ms = tf;
    if (bwd_ms) *bwd_ms = tb;
    if (measured >= 0) {
        if (profiled) *profiled = 1;
        return measured;
    }
    return tf + tb;
}

double cost_t_c(const cost_model *m, int li, const config *c, int *profiled)
{
    return t_c_eval(m, li, c, NULL, NULL, NULL, profiled);
}

double cost_t_c_parts(const cost_model *m, int li, const config *c, profile_entry *key, double *fwd_ms,
                      double *bwd_ms)
{
    return t_c_eval(m, li, c, key, fwd_ms, bwd_ms, NULL);
}

/* ---- t_s ---- */

/* Where the links of a ring's hops within a node come from: the cluster
 * (cluster_link, a scan of its overrides), or a model's table of them
 * (node_bw[a * gpn + b % gpn], GB/s, a and b on one node: the same doubles,
 * without scanning a DGX-1 pod's 640 overrides for each of the millions of
 * hops a build's t_s looks at). */
typedef struct link_tab {
    const cluster *cl;
    const double *node_bw;
    int gpn;
} link_tab;

/* Bandwidth of the link a-b (two GPUs of one node where t->node_bw). */
static double link_bw(const link_tab *t, int a, int b)
{
    return t->node_bw ? t->node_bw[(size_t)a * t->gpn + b % t->gpn] : cluster_link(t->cl, a, b).bandwidth_gbs;
}

/* Depth-first search for a Hamiltonian cycle over v[0..k-1] using only
 * links of at least `floor` GB/s; path[0] = v[0] is fixed. */
static int cycle_dfs(const link_tab *lt, const int *v, int k, double floor, int *path, unsigned *used, int depth)
{
    if (depth == k) return link_bw(lt, path[k - 1], path[0]) >= floor;
    for (int i = 1; i < k; i++) {
        if (*used & (1u << i)) continue;
        if (link_bw(lt, path[depth - 1], v[i]) < floor) continue;
        *used |= 1u << i;
        path[depth] = v[i];
        if (cycle_dfs(lt, v, k, floor, path, used, depth + 1)) return 1;
        *used &= ~(1u << i);
    }
    return 0;
}

/* Reorders v[0..k-1] (GPUs of one node) into the cycle whose slowest link
 * is fastest, trying the distinct link bandwidths from the highest down;
 * ties keep the first cycle found in GPU order. Then rotates it so that
 * the slowest link closes the cycle (where a ring through several nodes
 * leaves this node). Nodes of up to 16 GPUs with per-pair overrides only:
 * uniform links need no search. */
static void order_node(const link_tab *lt, int *v, int k)
{
    if (k < 3 || k > 16 || lt->cl->n_overrides == 0) return;
    double bws[16 * 15 / 2];
    int nb = 0;
    for (int a = 0; a < k; a++)
        for (int b = a + 1; b < k; b++) {
            double x = link_bw(lt, v[a], v[b]);
            int seen = 0;
            for (int i = 0; i < nb; i++) seen |= bws[i] == x;
            if (!seen) bws[nb++] = x;
        }
    for (int i = 1; i < nb; i++) /* descending */
        for (int j = i; j > 0 && bws[j] > bws[j - 1]; j--) {
            double t = bws[j];
            bws[j] = bws[j - 1];
            bws[j - 1] = t;
        }
    int path[16];
    for (int i = 0; i < nb; i++) {
        unsigned used = 1;
        path[0] = v[0];
        if (cycle_dfs(lt, v, k, bws[i], path, &used, 1)) {
            int weak = 0; /* edge path[weak] -> path[weak + 1] */
            for (int a = 1; a < k; a++)
                if (link_bw(lt, path[a], path[(a + 1) % k]) < link_bw(lt, path[weak], path[(weak + 1) % k])) weak = a;
            for (int a = 0; a < k; a++) v[a] = path[(weak + 1 + a) % k];
            return;
        }
    }
}

static void ring_order(const link_tab *lt, int *devs, int n)
{
    const cluster *cl = lt->cl;
    /* node by node, in node order, stable within a node */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && cluster_node_of(cl, devs[j]) < cluster_node_of(cl, devs[j - 1]); j--) {
            int t = devs[j];
            devs[j] = devs[j - 1];
            devs[j - 1] = t;
        }
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && cluster_node_of(cl, devs[j]) == cluster_node_of(cl, devs[i])) j++;
        order_node(lt, devs + i, j - i);
        i = j;
    }
}

void cost_ring_order(const cluster *cl, int *devs, int n)
{
    ring_order(&(link_tab){cl, NULL, 0}, devs, n);
}

/* Latency of one ring all-reduce call over n devices spanning `nodes`
 * nodes, as NCCL's tuning model charges it: a base per call plus one hop
 * latency per step, 2(n-1) steps of which 2(nodes-1) cross the network.
 * Seconds. */
static double ring_call_latency_s(const cluster *cl, int n, int nodes)
{
    double steps = 2.0 * (n - 1), inter = 2.0 * (nodes - 1);
    return (cl->coll.call_latency_us + (steps - inter) * cl->coll.intra_step_us + inter * cl->coll.inter_step_us) *
           1e-6;
}

/* Per ring step moving `piece` bytes from each device to the next along
 * ring[0..n-1]: the slowest intra-node hop, and the bytes each node sends
 * and receives over its NICs (added to nic_out / nic_in, indexed by node).
 * Returns the hop time in seconds and the number of nodes the ring spans. */
static double ring_hops(const link_tab *lt, const int *ring, int n, double piece, double *nic_in, double *nic_out,
                        int *nodes_out)
{
    const cluster *cl = lt->cl;
    double step = 0;
    int nodes = 1;
    for (int a = 0; a < n; a++) {
        int src = ring[a], dst = ring[(a + 1) % n];
        int ns = cluster_node_of(cl, src), nd = cluster_node_of(cl, dst);
        if (ns != nd) {
            nic_out[ns] += piece;
            nic_in[nd] += piece;
            if (a + 1 < n) nodes++;
        } else {
            double t = piece / (link_bw(lt, src, dst) * 1e9);
            if (t > step) step = t;
        }
    }
    *nodes_out = nodes;
    return step;
}

/* A node's inter-node traffic is spread over all its NICs: NCCL runs one
 * ring channel per NIC. */
static double nic_step(const cluster *cl, const double *nic_in, const double *nic_out, int nodes)
{
    double t = 0, bw = cl->inter.bandwidth_gbs * 1e9 * cl->nics_per_node;
    for (int k = 0; k < nodes; k++) {
        double b = nic_in[k] > nic_out[k] ? nic_in[k] : nic_out[k];
        if (b / bw > t) t = b / bw;
    }
    return t;
}

double cost_allreduce_s(const cluster *cl, const int *ring, int n, double bytes)
{
    if (n < 2 || bytes <= 0) return 0;
    double *nic = lw_calloc(2 * (size_t)cl->nodes, sizeof(double));
    int nodes;
    double step = ring_hops(&(link_tab){cl, NULL, 0}, ring, n, bytes / n, nic, nic + cl->nodes, &nodes);
    double t_nic = nic_step(cl, nic, nic + cl->nodes, cl->nodes);
    free(nic);
    if (t_nic > step) step = t_nic;
    return 2.0 * (n - 1) * step + ring_call_latency_s(cl, n, nodes);
}

/* The tasks of config c whose channel coordinate is j (the replicas of
 * shard j), ascending, into rep; returns how many. Tasks are numbered
 * row-major over (n, c, h, w). */
static int shard_replicas(const config *c, int j, int *rep)
{
    int nr = 0, hw = c->deg[DIM_H] * c->deg[DIM_W];
    for (int n = 0; n < c->deg[DIM_N]; n++)
        for (int q = 0, k = (n * c->deg[DIM_C] + j) * hw; q < hw; q++) rep[nr++] = k + q;
    return nr;
}

/* t_s with the caller's scratch (ms). */
static double t_s_eval(const cost_model_priv *pm, const tx_scratch *sc, int li, const config *c, double *bytes_out)
{
    const cost_model *m = &pm->pub;
    const layer *l = &m->net->layers[li];
    if (bytes_out) *bytes_out = 0;
    int r = c->deg[DIM_N] * c->deg[DIM_H] * c->deg[DIM_W];
    if (l->n_params == 0 || r <= 1) return 0;
    int shards = c->deg[DIM_C];
    double ws = (double)l->n_params * m->elem_bytes / shards; /* one shard's gradient bytes */
    double piece = ws / r;
    int G = m->gpus;
    int gpn = m->cl->gpus_per_node;
    size_t nb = sizeof(double) * (size_t)(pm->nodes_used > 0 ? pm->nodes_used : 1);
    memset(sc->nic_in_f, 0, nb);
    memset(sc->nic_out_f, 0, nb);
    double bytes = 2.0 * (r - 1) * ws * shards;
    if (bytes_out) *bytes_out = bytes;
    /* replicas of shard j: tasks whose channel coordinate is j */
    int *rep = sc->list_i;
    double t = 0;
    if (m->cl->sync == SYNC_PARAMETER_SERVER) {
        /* The shard's parameters are spread over its r replicas' GPUs, each
         * serving 1/r of them: every replica pushes r-1 gradient pieces and
         * pulls r-1 weight pieces; a GPU receives its pieces one by one. */
        memset(sc->recv_f, 0, sizeof(double) * (size_t)G);
        for (int j = 0; j < shards; j++) {
            int nr = shard_replicas(c, j, rep);
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
        /* Ring all-reduce of each shard over its replicas, in the order NCCL
         * would ring them (cost_ring_order): 2(r-1) steps, each moving 1/r
         * of the shard to the next GPU; a step lasts as long as its slowest
         * link, or the busiest node's NICs (all shards' rings at once).
         * Latency is paid per all-reduce call, and frameworks fuse
         * gradients into buckets of coll.bucket_mb: this layer pays the
         * share of a call its bytes fill (ws / bucket bytes), so t_s stays
         * a per-layer sum and the search exact. A layer larger than a
         * bucket gets one of its own (as in PyTorch DDP, which never
         * splits a tensor): one call. bucket_mb 0: one call per layer. */
        double step = 0, lat = 0;
        for (int j = 0; j < shards; j++) {
            int nodes, nr = shard_replicas(c, j, rep);
            const link_tab lt = {m->cl, pm->node_bw, m->cl->gpus_per_node};
            ring_order(&lt, rep, nr);
            double s = ring_hops(&lt, rep, nr, piece, sc->nic_in_f, sc->nic_out_f, &nodes);
            if (s > step) step = s;
            double lj = ring_call_latency_s(m->cl, nr, nodes);
            if (lj > lat) lat = lj;
        }
        if (pm->nodes_used > 1) {
            double tn = nic_step(m->cl, sc->nic_in_f, sc->nic_out_f, pm->nodes_used);
            if (tn > step) step = tn;
        }
        double bucket = m->cl->coll.bucket_mb * 1048576.0;
        double calls = bucket > 0 && ws < bucket ? ws / bucket : 1.0;
        t = 2.0 * (r - 1) * step + calls * lat;
    }
    return t * 1e3;
}

double cost_t_s(const cost_model *m, int li, const config *c, double *bytes)
{
    const cost_model_priv *pm = (const cost_model_priv *)m;
    const layer *l = &m->net->layers[li];
    if (l->n_params == 0 || c->deg[DIM_N] * c->deg[DIM_H] * c->deg[DIM_W] <= 1) { /* nothing to sync: no scratch */
        if (bytes) *bytes = 0;
        return 0;
    }
    tx_scratch sc;
    scratch_init(&sc, m->gpus, pm->nodes_used);
    double t = t_s_eval(pm, &sc, li, c, bytes);
    scratch_free(&sc);
    return t;
}

/* ---- memory ---- */

const char *optimizer_name(optimizer_kind o)
{
    return o == OPT_SGD ? "sgd" : o == OPT_ADAM ? "adam" : "momentum";
}

int optimizer_from_name(const char *s)
{
    if (!s) return -1;
    if (strcmp(s, "sgd") == 0) return OPT_SGD;
    if (strcmp(s, "momentum") == 0) return OPT_MOMENTUM;
    if (strcmp(s, "adam") == 0) return OPT_ADAM;
    return -1;
}

double cost_memory_task(const cost_model *m, int li, const config *c, int task, memory_parts *parts)
{
    const layer *l = &m->net->layers[li];
    int co[NDIMS];
    config_task_coords(c, task, co);
    /* a task holds the weights of its channel block, replicated over the
     * other dimensions */
    double shard = (double)l->n_params / c->deg[DIM_C];
    double eb = m->elem_bytes > 0 ? m->elem_bytes : BYTES_PER_ELEM;
    int mixed = eb < BYTES_PER_ELEM;
    memory_parts p;
    p.weights = shard * (BYTES_PER_ELEM + (mixed ? eb : 0));
    p.gradients = shard * eb;
    p.optimizer = shard * BYTES_PER_ELEM * (m->optimizer == OPT_ADAM ? 2 : m->optimizer == OPT_MOMENTUM ? 1 : 0);
    double v = 1;
    for (int d = 0; d < NDIMS; d++) {
        long S = layer_dim_size(l, d, m->batch);
        v *= (double)(piece_hi(S, c->deg[d], co[d]) - piece_lo(S, c->deg[d], co[d]));
    }
    /* a flatten is a view of its input and keeps nothing */
    p.activations = l->type == LT_FLATTEN ? 0 : v * eb;
    if (parts) *parts = p;
    return p.weights + p.gradients + p.optimizer + p.activations;
}

double cost_memory(const cost_model *m, const int *ci, double *per_gpu)
{
    int G = m->gpus;
    double *mem = per_gpu ? per_gpu : lw_calloc((size_t)G, sizeof(double));
    if (per_gpu) memset(per_gpu, 0, sizeof(double) * (size_t)G);
    int hosts = 0; /* GPUs 0..hosts-1 host a task */
    for (int li = 0; li < m->n_layers; li++) {
        const config *c = &m->configs[li][ci[li]];
        int T = config_tasks(c);
        if (T > hosts) hosts = T;
        for (int k = 0; k < T; k++) mem[k] += cost_memory_task(m, li, c, k, NULL);
    }
    for (int g = 0; g < hosts; g++) mem[g] += m->workspace_bytes;
    double peak = 0;
    for (int g = 0; g < G; g++)
        if (mem[g] > peak) peak = mem[g];
    if (!per_gpu) free(mem);
    return peak;
}

/* ---- building the tables ---- */

/* One zeroed allocation: 2 x G doubles, 5 x nn doubles, G doubles, then 2 x G ints. */
static void scratch_init(tx_scratch *sc, int G, int nn)
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

static void scratch_free(tx_scratch *sc)
{
    free(sc->recv_f);
    memo_free(sc->memo);
    memset(sc, 0, sizeof *sc);
}

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

static void rp_free(tx_reprice *rp)
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
static uint32_t rp_intern(rp_edge *r, const rp_cand *c, int n)
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
static int edge_mirrors(const cost_model_priv *pm, int e)
{
    const cost_model *m = &pm->pub;
    const edge_desc *d = &pm->desc[e];
    if (d->flat || !(pm->closed_form_ok || pm->pair_form_ok) || pm->tx_reference || pm->tx_oracle ||
        d->pdims != d->cdims)
        return 0;
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
static void mirror_entry(double *tab, rp_edge *r, long q, long t)
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

/* Where edge e's counts are kept: the model's (pm->rp), or, in a build
 * that keeps none, the build's own for an edge other tables are priced from
 * (scale_rp); NULL: none. */
static tx_reprice *record_rp(const cost_model_priv *pm, int e)
{
    if (pm->rp) return pm->rp;
    return pm->scale_rp && pm->scale_is_src[e] ? pm->scale_rp : NULL;
}

/* Where edge e's counts are kept (record_rp, not dropped over
 * RP_MAX_BYTES): its storage there, begun, with sc's sink to leave each
 * entry's in; NULL where nothing is recorded. record_end finishes it. */
static rp_edge *record_begin(cost_model_priv *pm, tx_scratch *sc, int e)
{
    const cost_model *m = &pm->pub;
    tx_reprice *rp = record_rp(pm, e);
    if (!rp || atomic_load(&rp->dropped)) return NULL;
    rp_edge *r = &rp->e[e];
    rp_edge_begin(r, (long)m->n_configs[m->e_from[e]] * m->n_configs[m->e_to[e]], pm->nodes_used > 1);
    sc->sink = lw_malloc(sizeof *sc->sink);
    return r;
}

static void record_end(cost_model_priv *pm, tx_scratch *sc, int e, rp_edge *r)
{
    const cost_model *m = &pm->pub;
    if (r) rp_edge_end(record_rp(pm, e), r, (long)m->n_configs[m->e_from[e]] * m->n_configs[m->e_to[e]]);
    free(sc->sink);
    sc->sink = NULL;
}

/* Entry (a, b) of edge e computed; its counts recorded in r (record_begin)
 * where one is given. */
static double compute_entry(cost_model_priv *pm, tx_scratch *sc, edge_lists *el, int e, int a, int b, rp_edge *r)
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

static void rp_fill_edge(cost_model_priv *pm, const tx_reprice *rp, tx_scratch *sc, int e, int src);
static void fill_scaled_edge(cost_model_priv *pm, tx_scratch *sc, int e);

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

typedef struct tx_cache_entry {
    edge_desc d;
    int edge;
} tx_cache_entry;

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
 * worker threads; the memory from the
 * entries, which the tables and the search's own tables each hold about
 * once, and each thread's overlap lists (dense_lists_bytes). Small builds (under 2^20 entries to compute) are never
 * refused. */
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
     * several times a convolution's, and one sample an edge weighed them
     * as much as an edge of 20 times as many: VGG-16 at 1024 GPUs was
     * estimated at 176 s for a 23 s search, AlexNet at 6 s for 13) */
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

cost_model *cost_model_build(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                             lw_error *err)
{
    return cost_model_build_cancellable(net, cl, prof, gpus, batch, NULL, err);
}

/* Everything but the tables: the link matrix, every layer's configs and
 * every edge's description. Cheap: O(gpus^2 + layers x configs). */
/* Whether per-pair links (a cluster's overrides) allow the pair form
 * (gather_pairs, gn_visit_pairs), and its node-local links: power-of-two
 * GPUs per node, every override within one node (so links between nodes
 * are the cluster's inter-node ones), and every node in use with node 0's
 * links between its GPUs (a cluster file that repeats one node's topology,
 * like a DGX-1 pod); prices not negative (the bound). Else the per-piece
 * form. */
static void pair_form_setup(cost_model_priv *pm)
{
    const cost_model *m = &pm->pub;
    const cluster *cl = m->cl;
    const int G = m->gpus, gpn = cl->gpus_per_node, n0 = G < gpn ? G : gpn;
    pm->pair_form_ok = 0;
    if (cl->n_overrides == 0 || gpn < 2 || gpn > GN_BOX || (gpn & (gpn - 1))) return;
    for (int i = 0; i < cl->n_overrides; i++) {
        const link_override *o = &cl->overrides[i];
        if (o->a < G && o->b < G && cluster_node_of(cl, o->a) != cluster_node_of(cl, o->b)) return;
    }
    for (int a = 0; a < G; a++)
        for (int b = 0; b < G; b++) {
            if (a == b || a / gpn != b / gpn) continue;
            const int la = a % gpn, lb = b % gpn;
            if (m->lat_s[a * G + b] != m->lat_s[la * G + lb] || m->inv_bw[a * G + b] != m->inv_bw[la * G + lb] ||
                m->lat_s[a * G + b] < 0 || m->inv_bw[a * G + b] < 0)
                return;
        }
    pm->pair_lat = lw_calloc((size_t)gpn * gpn, sizeof(double));
    pm->pair_inv = lw_calloc((size_t)gpn * gpn, sizeof(double));
    pm->pair_lat_max = pm->pair_inv_max = 0;
    for (int a = 0; a < n0; a++)
        for (int b = 0; b < n0; b++) {
            double l = m->lat_s[a * G + b], v = m->inv_bw[a * G + b];
            pm->pair_lat[a * gpn + b] = l;
            pm->pair_inv[a * gpn + b] = v;
            if (a != b && l > pm->pair_lat_max) pm->pair_lat_max = l;
            if (a != b && v > pm->pair_inv_max) pm->pair_inv_max = v;
        }
    pm->pair_form_ok = 1;
}

static cost_model_priv *model_setup(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                                    int max_gpus, lw_error *err)
{
    int total = cluster_gpus(cl);
    if (gpus < 1 || gpus > total) {
        lw_fail(err, 2, "%d GPUs requested, but cluster \"%s\" has %d (choose 1 to %d)", gpus, cl->name, total, total);
        return NULL;
    }
    if (batch < 1 || batch > COST_MAX_BATCH) {
        lw_fail(err, 2, "batch %ld is out of range (1 to %ld)", batch, COST_MAX_BATCH);
        return NULL;
    }
    if (gpus > max_gpus) { /* with tables (COST_MAX_GPUS) or without (COST_EVAL_MAX_GPUS): both 1024 */
        lw_fail(err, 2, "%d GPUs: the cost model takes at most %d; choose fewer", gpus, max_gpus);
        return NULL;
    }
    cost_model_priv *pm = lw_calloc(1, sizeof *pm);
    cost_model *m = &pm->pub;
    m->net = net;
    m->cl = cl;
    m->prof = profile_applies(prof, cl) ? prof : NULL; /* its GPU, and its precision where it says */
    pm->prof_given = prof;
    m->gpus = gpus;
    m->batch = batch;
    m->prec = cl->precision;
    m->elem_bytes = precision_elem_bytes(cl->precision);
    if (cluster_gpu_consts(cl, cl->precision, &m->gk) != 0) {
        lw_fail(err, 2, "cluster \"%s\" gives no %s figures for its GPU (%s)", cl->name, precision_name(cl->precision),
                cl->gpu.name);
        free(pm);
        return NULL;
    }
    m->n_layers = net->n_layers;
    m->optimizer = OPT_MOMENTUM;
    m->workspace_bytes = COST_WORKSPACE_BYTES;
    int G = gpus;
    pm->nodes_used = (gpus + cl->gpus_per_node - 1) / cl->gpus_per_node;
    pm->node_of = lw_malloc(sizeof(int) * (size_t)gpus);
    for (int g = 0; g < gpus; g++) pm->node_of[g] = cluster_node_of(cl, g);
    pm->closed_form_ok = cl->n_overrides == 0 && (cl->gpus_per_node & (cl->gpus_per_node - 1)) == 0;

    m->lat_s = lw_malloc(sizeof(double) * (size_t)G * G);
    m->inv_bw = lw_malloc(sizeof(double) * (size_t)G * G);
    /* cluster_link for every pair, in O(G^2 + overrides) rather than
     * O(G^2 * overrides): the node links, then the overrides, last first,
     * so the first one listed for a pair wins as in cluster_link */
    /* and, where the cluster has overrides, the bandwidths cluster_link
     * gives between the GPUs of each node (link_tab's table) */
    const int gpn = cl->gpus_per_node;
    pm->node_bw = cl->n_overrides ? lw_calloc((size_t)G * (size_t)gpn, sizeof(double)) : NULL;
    for (int a = 0; a < G; a++)
        for (int b = 0; b < G; b++) {
            if (a == b) {
                m->lat_s[a * G + b] = m->inv_bw[a * G + b] = 0;
                continue;
            }
            const int same_node = cluster_node_of(cl, a) == cluster_node_of(cl, b);
            link_spec l = same_node ? cl->intra : cl->inter;
            m->lat_s[a * G + b] = l.latency_us * 1e-6;
            m->inv_bw[a * G + b] = 1.0 / (l.bandwidth_gbs * 1e9);
            if (pm->node_bw && same_node) pm->node_bw[(size_t)a * gpn + b % gpn] = l.bandwidth_gbs;
        }
    for (int i = cl->n_overrides - 1; i >= 0; i--) {
        const link_override *o = &cl->overrides[i];
        if (o->a == o->b || o->a < 0 || o->b < 0 || o->a >= G || o->b >= G) continue;
        m->lat_s[o->a * G + o->b] = m->lat_s[o->b * G + o->a] = o->link.latency_us * 1e-6;
        m->inv_bw[o->a * G + o->b] = m->inv_bw[o->b * G + o->a] = 1.0 / (o->link.bandwidth_gbs * 1e9);
        if (o->a / gpn == o->b / gpn)
            pm->node_bw[(size_t)o->a * gpn + o->b % gpn] = pm->node_bw[(size_t)o->b * gpn + o->a % gpn] =
                o->link.bandwidth_gbs;
    }
    pair_form_setup(pm);
    pm->tx_reference = cost_tx_reference;
    pm->tx_oracle = cost_tx_oracle;

    int L = net->n_layers;
    m->n_configs = lw_calloc((size_t)L, sizeof(int));
    m->configs = lw_calloc((size_t)L, sizeof(config *));
    int ne = 0;
    for (int i = 0; i < L; i++) ne += net->layers[i].n_inputs;
    m->n_edges = ne;
    m->e_from = lw_calloc((size_t)ne + 1, sizeof(int));
    m->e_to = lw_calloc((size_t)ne + 1, sizeof(int));
    m->e_slot = lw_calloc((size_t)ne + 1, sizeof(int));
    pm->desc = lw_calloc((size_t)ne + 1, sizeof(edge_desc));
    pm->first_edge = lw_calloc((size_t)L + 1, sizeof(int));
    int e = 0;
    for (int i = 0; i < L; i++)
        for (int s = (pm->first_edge[i] = e, 0); s < net->layers[i].n_inputs; s++, e++) {
            m->e_from[e] = net->layers[i].inputs[s];
            m->e_to[e] = i;
            m->e_slot[e] = s;
        }
    for (e = 0; e < ne; e++) edge_describe(m, e, &pm->desc[e]);

    for (int i = 0; i < L; i++) m->n_configs[i] = configs_enumerate(&net->layers[i], batch, gpus, &m->configs[i]);
    return pm;
}

cost_model *cost_model_open(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                            lw_error *err)
{
    double t0 = lw_now();
    cost_model_priv *pm = model_setup(net, cl, prof, gpus, batch, COST_EVAL_MAX_GPUS, err);
    if (!pm) return NULL;
    pm->pub.build_ms = (lw_now() - t0) * 1e3;
    return &pm->pub;
}

static int cancelled(const atomic_int *cancel)
{
    return cancel && atomic_load(cancel);
}

/* Phase 1: the node tables t_c, t_s and t_c_profiled (allocated whole, rows
 * filled layer by layer). Returns 1 when cancelled part way. */
static int build_node_tables(cost_model_priv *pm, const atomic_int *cancel)
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

static long gcd_l(long a, long b);

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
static int plan_edge_tables(cost_model_priv *pm, int *same, int *todo, int scale, int *n_first)
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

typedef struct edge_size {
    long entries;
    int edge;
} edge_size;

static int edge_size_cmp(const void *a, const void *b)
{
    const edge_size *x = a, *y = b;
    if (x->entries != y->entries) return x->entries > y->entries ? -1 : 1;
    return (x->edge > y->edge) - (x->edge < y->edge);
}

/* Edges that are the same problem as an earlier one (same[e] >= 0) share
 * its table: the same doubles, not a copy (ResNet-50 at 256 GPUs: 176 of
 * its 225 MB of tables were copies, each page a fault to fill). Nothing
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

/* Phase 3: the tables of edges todo[0..n_first-1] (computed, or re-priced
 * from `from`), then those of todo[n_first..n_todo-1], priced from the
 * kept counts of the first ones (plan_scaled_tables); the edges that are
 * the same problem share those (share_tables). Returns 1 when cancelled
 * part way. */
static int compute_edge_tables(cost_model_priv *pm, const int *same, const int *todo, int n_first, int n_todo,
                               int nw, const atomic_int *cancel, const tx_reprice *from)
{
    run_edges(pm, todo, n_first, nw, cancel, from, 0);
    if (n_todo > n_first && !cancelled(cancel)) run_edges(pm, todo + n_first, n_todo - n_first, nw, cancel, NULL, 1);
    share_tables(pm, same, cancel);
    return cancelled(cancel);
}

/* A model's kept counts that went over RP_MAX_BYTES while its tables were
 * computed: dropped (a what-if on it then builds). */
static void rp_drop_if_over(cost_model_priv *pm)
{
    if (pm->rp && atomic_load(&pm->rp->dropped)) {
        rp_free(pm->rp);
        pm->rp = NULL;
    }
}

static void rp_map_free(cost_model_priv *pm)
{
    if (pm->rp_map)
        for (int i = 0; i < pm->pub.n_layers; i++) free(pm->rp_map[i]);
    free(pm->rp_map);
    pm->rp_map = NULL;
}

/* Empty kept counts for model pm's tables (edges todo, the others copy
 * same[e]'s), to be recorded as they are computed; NULL where the model
 * cannot keep them (not the closed form, or too many entries). */
/* Whether model pm's entries can keep counts: the closed form's t_x, and
 * the entries alone within RP_MAX_BYTES (8 bytes an entry, 24 across
 * nodes). */
static int counts_fit(const cost_model_priv *pm)
{
    return pm->closed_form_ok && !pm->tx_reference &&
           pm->pub.tx_pairs_computed * (pm->nodes_used > 1 ? 24 : 8) <= RP_MAX_BYTES;
}

static tx_reprice *rp_new(const cost_model_priv *pm, const int *same, const int *todo, int n_todo)
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
static void scale_rp_begin(cost_model_priv *pm, int n_first, int n_todo)
{
    if (pm->rp || n_first >= n_todo) return;
    pm->scale_rp = lw_calloc(1, sizeof *pm->scale_rp);
    atomic_init(&pm->scale_rp->refs, 1);
    pm->scale_rp->n_edges = pm->pub.n_edges;
    pm->scale_rp->e = lw_calloc((size_t)pm->pub.n_edges + 1, sizeof(rp_edge));
}

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

/* Entry q of edge r at the prices (and batch) of model pm, whose cluster
 * has the closed form's uniform links: the closed form's sums in the same
 * order. -1 where a count does not scale exactly (the caller recomputes). */
/* A kept candidate unpacked, its element counts times num / den
 * (rp_scaled: -1 where that is not exact). */
static inline rp_cand rp_unpack(const rp_pack *c, double num, double den)
{
    return (rp_cand){(double)(c->own >> RP_ELEM_BITS), rp_scaled(num, den, (double)(c->own & RP_ELEM_MASK)),
                     (double)(c->far >> RP_ELEM_BITS), rp_scaled(num, den, (double)(c->far & RP_ELEM_MASK))};
}

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

static long gcd_l(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
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

/* Along the sample dimension every piece boundary is i x batch / D: where
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

/* Edge e's table of model pm from what rp kept for edge src (e itself, or
 * the edge whose table e's was in rp's build); entries that were not kept,
 * whose configs rp's build did not have, or that do not scale exactly, are
 * computed. Where pm keeps counts of its own (pm->rp, not rp: some entries
 * are computed), each entry's go there, carried over or computed. */
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

static void rp_fill_edge(cost_model_priv *pm, const tx_reprice *rp, tx_scratch *sc, int e, int src)
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
static void fill_scaled_edge(cost_model_priv *pm, tx_scratch *sc, int e)
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

int cost_model_could_keep_counts(const cost_model *m)
{
    return m->t_x && counts_fit((const cost_model_priv *)m);
}

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

long cost_model_kept_bytes(const cost_model *m)
{
    const tx_reprice *rp = ((const cost_model_priv *)m)->rp;
    return rp ? atomic_load(&rp->bytes) : 0;
}

double cost_node_ms(const cost_model *m, int li, int k)
{
    if (m->t_c) return m->t_c[li][k] + m->t_s[li][k];
    return cost_t_c(m, li, &m->configs[li][k], NULL) + cost_t_s(m, li, &m->configs[li][k], NULL);
}

double cost_edge_ms(const cost_model *m, int edge, int ci, int cj, double *bytes)
{
    int a = m->e_from[edge], b = m->e_to[edge];
    if (m->t_x && !bytes) return m->t_x[edge][ci * m->n_configs[b] + cj];
    double t = cost_t_x(m, edge, &m->configs[a][ci], &m->configs[b][cj], bytes);
    return m->t_x ? m->t_x[edge][ci * m->n_configs[b] + cj] : t;
}

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

cost_graph *cost_model_graph(const cost_model *m)
{
    /* cg_new and cg_add_edge return NULL / -1 when memory runs out: that is
     * the documented out-of-memory abort, not a crash further on */
    cost_graph *g = cg_new(m->n_layers, m->n_configs, m->n_edges);
    if (!g) lw_out_of_memory(sizeof *g); /* the counts are valid: only memory can fail (util.h) */
    for (int i = 0; i < m->n_layers; i++)
        for (int k = 0; k < m->n_configs[i]; k++) g->node_cost[i][k] = m->t_c[i][k] + m->t_s[i][k];
    /* the model's tables themselves: the graph lives no longer than the
     * model (plan and prefetcher free it first) and the search only reads */
    for (int e = 0; e < m->n_edges; e++)
        if (cg_add_edge_borrowed(g, m->e_from[e], m->e_to[e], m->t_x[e]) < 0) lw_out_of_memory(sizeof(double *));
    return g;
}

void cost_model_free(cost_model *m)
{
    if (!m) return;
    cost_model_priv *pm = (cost_model_priv *)m;
    for (int i = 0; i < m->n_layers; i++) {
        free(m->configs[i]);
        if (m->t_c) free(m->t_c[i]);
        if (m->t_s) free(m->t_s[i]);
        if (m->t_c_profiled) free(m->t_c_profiled[i]);
    }
    if (m->t_x)
        for (int e = 0; e < m->n_edges; e++)
            if (!pm->tx_shared || !pm->tx_shared[e]) free(m->t_x[e]);
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
    free(pm->node_of);
    free(pm->first_edge);
    free(pm->scale_src);
    free(pm->scale_num);
    free(pm->scale_den);
    free(pm->scale_is_src);
    free(pm->tx_shared);
    free(pm->pair_lat);
    free(pm->pair_inv);
    free(pm->node_bw);
    rp_free(pm->scale_rp);
    rp_free(pm->rp);
    rp_map_free(pm);
    free(pm);
}
