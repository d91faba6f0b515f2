/*
 * cost_internal: what the parts of the cost model share, private to them
 * (src/cost*.c; the rest of the program sees cost.h). The parts:
 *   cost.c            the model's lifecycle: set-up (links, configs, edges), free, single entries
 *   cost_overlap.c    overlap geometry: which producer pieces a consumer piece reads, the overlap lists
 *   cost_tx.c         t_x of one entry: the per-piece sums, the closed and pair forms receiver by receiver
 *   cost_tx_nodes.c   the closed form node by node, with its memo (table builds)
 *   cost_tables.c     building the tables: workers, shared and scaled tables, the counts kept for what-ifs
 *   cost_reprice.c    what-ifs priced from kept counts (cost_model_reprice, cost_model_reuse)
 *   cost_compute.c    t_c
 *   cost_collective.c t_s and the all-reduce model
 *   cost_memory.c     memory per task and per GPU
 * The hot path, tx_eval and what it calls per receiver, keeps each of its
 * loops within one file; the kernels several files share are static inline
 * here, so each part compiles them into its own loops as before.
 */
#ifndef LW_COST_INTERNAL_H
#define LW_COST_INTERNAL_H

#include "cost.h"
#include "cost_sharding.h"

#include <stdint.h>

/* ---- an edge ---- */

/* How a consumer's output range along one dimension maps to the range of
 * the producer's output it needs. */
enum { MAP_SAME, MAP_ALL, MAP_WINDOW, MAP_OFFSET, MAP_PROP, MAP_SELECT };
/* MAP_PROP: consumer piece j of D reads producer piece j of D (a range in
 * proportion: swiglu's features, 2F -> F); MAP_SELECT: every consumer
 * piece reads [p, p + 1) (select_token's position). */

/* What one edge moves: the sizes of the producer's and the consumer's
 * outputs (n, c, h, w at the model's batch) and how each dimension of the
 * consumer's output maps to the range of the producer's it reads. */
typedef struct edge_desc {
    long Sp[NDIMS], Sc[NDIMS];
    unsigned pdims, cdims;
    int kind[NDIMS];
    long k[NDIMS], s[NDIMS], p[NDIMS]; /* window; p doubles as the concat offset */
    int flat;                           /* consumer flattens a (c, h, w) producer */
    int rslice;                         /* the consumer's r tasks read slice r of the producer's features */
    int prank, crank;                   /* tensor ranks (the scatter dimension of r and x); no padding
                                         * anywhere: descriptions are compared with memcmp (plan_edge_tables) */
    /* what, besides the sizes and dims, decides the two layers' configs */
    long pcontract, ccontract;
    long pheads, cheads;
    long rs_done; /* 1: an earlier out-edge of the producer carries its reduce-scatter of partial sums (r): one
                   * sum, in the scattered layout, serves every consumer (issue 32: an embedding feeding a
                   * block's LayerNorm and its residual add paid it twice) */
} edge_desc;

/* Whether the entry (cp, cc) of edge d is computed by the generic
 * evaluator (cost_shard.c): either config has r > 1 or x > 1. */
static inline int entry_sharded(const config *cp, const config *cc)
{
    return cp->deg[DIM_R] > 1 || cp->deg[DIM_X] > 1 || cc->deg[DIM_R] > 1 || cc->deg[DIM_X] > 1;
}

/* ---- counts kept for what-ifs ---- */

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

/* ---- the model ---- */

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

/* The model behind a cost_model pointer (pub first: the pointer is
 * either): what the evaluations read besides the public fields, and the
 * build's bookkeeping. */
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

/* ---- overlap lists (cost_overlap.c) ---- */

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

/* Most pieces of one dimension in a node's box: GPUs per node the node-by-node forms take. */
enum { GN_BOX = 64 };

/* floor of log2 x, x >= 1 */
static inline int ilog2(int x)
{
    return 31 - __builtin_clz((unsigned)x);
}

/* cost_overlap.c */
void edge_describe(const cost_model *m, int e, edge_desc *d);
void need_range(const edge_desc *d, int k, int D, int j, long *lo, long *hi);
int flat_sources(const edge_desc *d, const config *cp, const config *cc, const int *cco, int skip, int *ptask,
                 double *vol);
void dim_list_build(const edge_desc *d, int k, int Dp, int Dc, dim_list *out);
void dim_list_build_sums(dim_list *l, int Dp, int Dc);
void dim_list_build_dense(dim_list *l, int Dp, int Dc);
void lists_free(edge_lists *el);

/* The lists of dimension k for degrees Dp (producer) and Dc (consumer),
 * built on first use. */
static inline const dim_list *lists_get(edge_lists *el, const edge_desc *d, int k, int Dp, int Dc)
{
    dim_list *l = &el->l[k][ilog2(Dp)][ilog2(Dc)];
    if (!l->start) dim_list_build(d, k, Dp, Dc, l);
    return l;
}

/* ---- kernels of the transfer model, shared by its forms ---- */

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

/* Every count a node's receivers offer a sink, in order (gn_visit). */
typedef struct gn_rec {
    int n;
    rp_cand c[GN_BOX];
} gn_rec;
static inline void gn_rec_add(gn_rec *rec, double own_n, double own, double far_n, double far)
{
    rec->c[rec->n++] = (rp_cand){own_n, own, far_n, far};
}

/* One receiver, from what it needs (all_n pieces, all elements), what of it
 * the sender's tasks on its node hold (own_n, own) and the overlap v with
 * the sender's task on its own GPU (0: none), which stays put: keeps the
 * slowest time and the element count, offers the counts to the sink.
 * Returns its elements from other nodes. */
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

/* Whether every degree of c is a power of two. */
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

/* One direction's dense tables, per dimension: the running sums and counts
 * of each receiver piece's overlaps over the sender's pieces (rows of
 * row = sender degree + 1), and where a receiver and a sender piece's
 * overlap sits in mat (receiver piece x ms_r + sender piece x ms_s). */
static inline void dir_tables(const dim_list *const dl[NDIMS], const config *rcv, const config *snd, int forward,
                              const double *sum[NDIMS], const int *cnt[NDIMS], const long *mat[NDIMS],
                              int row[NDIMS], int ms_r[NDIMS], int ms_s[NDIMS])
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

/* ---- entry points between the parts (each commented where it is defined) ---- */

/* cost_tx.c */
double tx_eval(const cost_model_priv *pm, const tx_scratch *sc, edge_lists *el, const edge_desc *d, const config *cp,
               const config *cc, double *bytes_out);
double phase_time(const cost_model_priv *pm, const double *recv, const double *nic_in, const double *nic_out);
double gather_dense(const cost_model_priv *pm, const dim_list *const dl[NDIMS], const config *rcv, const config *snd,
                    int forward, double *nic_in, double *nic_out_rev, double *elems_out, rp_sink *sink);
double gather_pairs(const cost_model_priv *pm, const dim_list *const dl[NDIMS], const config *rcv, const config *snd,
                    int forward, double *nic_in, double *nic_out_rev, double *elems_out, int dense);
void scratch_init(tx_scratch *sc, int G, int nn);
void scratch_free(tx_scratch *sc);

/* cost_tx_nodes.c */
struct gn_memo;
double gather_nodes(const cost_model_priv *pm, struct gn_memo *memo, const dim_list *const dl[NDIMS],
                    const config *rcv, const config *snd, int forward, double *nic_in, double *nic_out_rev,
                    double *elems_out, rp_sink *sink, int exact_elems);
void memo_lend(tx_scratch *sc, edge_lists *el);
void memo_free(struct gn_memo *mm);

/* cost_shard.c */
double shard_eval(const cost_model_priv *pm, const tx_scratch *sc, const edge_desc *d, const config *cp,
                  const config *cc, double *bytes_out, double *fwd_ms);

/* cost_collective.c */
double groups_allreduce_s(const cost_model_priv *pm, int n_groups, int n, double bytes);
double t_s_eval(const cost_model_priv *pm, const tx_scratch *sc, int li, const config *c, double *bytes_out);
/* The replicas of shard j of config c (the tasks whose channel coordinate
 * is j), ascending, into rep; returns how many. */
int coll_shard_replicas(const config *c, int j, int *rep);
/* Orders ring[0..n-1] as NCCL would (cost_ring_order) and returns the time
 * of one ring step moving `piece` bytes from each GPU to the next over the
 * links within nodes (seconds); adds the bytes crossing nodes to nic_in /
 * nic_out (per node) and sets *nodes to the nodes the ring spans. */
double coll_ring_step(const cost_model_priv *pm, int *ring, int n, double piece, double *nic_in, double *nic_out,
                      int *nodes);
/* The time the busiest of nodes[0..nodes-1]'s NICs needs for the bytes
 * in nic_in / nic_out (seconds), all of a node's NICs at once. */
double coll_nic_step(const cluster *cl, const double *nic_in, const double *nic_out, int nodes);

/* cost_sharding.c: t_s under the sharded schemes (sync_sharded) */
double shard_t_s_eval(const cost_model_priv *pm, const tx_scratch *sc, int li, const config *c, double *bytes_out);

/* cost_tie.c: the tie terms (cost.h's cost_tie) */
double tie_eval(const cost_model_priv *pm, const tx_scratch *sc, int tie, const config *ce, const config *ch,
                double *fwd_ms, double *bwd_ms, double *bytes_out);
void ties_setup(cost_model_priv *pm);
void tie_tables_build(cost_model_priv *pm);
void ties_free(cost_model *m);

/* cost.c */
cost_model_priv *model_setup(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                             int max_gpus, lw_error *err);

/* cost_tables.c */
int build_node_tables(cost_model_priv *pm, const atomic_int *cancel);
int plan_edge_tables(cost_model_priv *pm, int *same, int *todo, int scale, int *n_first);
int compute_edge_tables(cost_model_priv *pm, const int *same, const int *todo, int n_first, int n_todo, int nw,
                        const atomic_int *cancel, const tx_reprice *from);
double compute_entry(cost_model_priv *pm, tx_scratch *sc, edge_lists *el, int e, int a, int b, rp_edge *r);
int edge_mirrors(const cost_model_priv *pm, int e);
void mirror_entry(double *tab, rp_edge *r, long q, long t);
int counts_fit(const cost_model_priv *pm);
tx_reprice *rp_new(const cost_model_priv *pm, const int *same, const int *todo, int n_todo);
void scale_rp_begin(cost_model_priv *pm, int n_first, int n_todo);
void rp_drop_if_over(cost_model_priv *pm);
void rp_free(tx_reprice *rp);
uint32_t rp_intern(rp_edge *r, const rp_cand *c, int n);
tx_reprice *record_rp(const cost_model_priv *pm, int e);
rp_edge *record_begin(cost_model_priv *pm, tx_scratch *sc, int e);
void record_end(cost_model_priv *pm, tx_scratch *sc, int e, rp_edge *r);

/* cost_reprice.c */
void rp_fill_edge(cost_model_priv *pm, const tx_reprice *rp, tx_scratch *sc, int e, int src);
void fill_scaled_edge(cost_model_priv *pm, tx_scratch *sc, int e);
void rp_map_free(cost_model_priv *pm);

/* Greatest common divisor (a, b > 0). */
static inline long gcd_l(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

#endif
