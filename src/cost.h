/*
 * cost: the cost model of the paper (Eq. 1) for one setting — a network, a
 * cluster, a GPU count and a global batch:
 *   t_c(l, c)        forward + backward time of one task of layer l (ms)
 *   t_s(l, c)        parameter synchronisation time (ms)
 *   t_x(e, ci, cj)   time to move the tensor of edge e between the tasks of
 *                    its producer and consumer, forward and backward (ms)
 * The cost_model owns every table it holds; the network, cluster and profile
 * it points to stay the caller's and must outlive it.
 */
#ifndef LW_COST_H
#define LW_COST_H

#include <stdatomic.h>

#include "cluster.h"
#include "configs.h"
#include "profile.h"
#include "search.h"

/* fp32 bytes per element: weights (master copies) and the default; the
 * bytes of activations and gradients are the model's elem_bytes. */
#define BYTES_PER_ELEM 4.0

/* The optimizer whose state the memory model counts (--optimizer); the
 * default, momentum (the paper's SGD with momentum), is 0. */
typedef enum { OPT_MOMENTUM, OPT_SGD, OPT_ADAM } optimizer_kind;
const char *optimizer_name(optimizer_kind o);
int optimizer_from_name(const char *s); /* -1 if unknown */
/* Activation recompute (--recompute; Korthikanti et al. 2022): none keeps
 * every layer's activations; selective recomputes attention's scores in
 * backward (not kept); full keeps only each block's input and runs the
 * block's forward again in backward (charged in t_c). */
typedef enum { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL } recompute_kind;
const char *recompute_name(recompute_kind r);
int recompute_from_name(const char *s); /* -1 if unknown */
/* The attention kernel (--attention): flash keeps no s x s scores in
 * memory and moves none through it; standard writes and reads them. */
typedef enum { ATTENTION_FLASH, ATTENTION_STANDARD } attention_kind;
const char *attention_name(attention_kind a);
int attention_from_name(const char *s); /* -1 if unknown */
/* Fixed allowance per GPU that hosts a task, for what the per-layer terms
 * leave out: the CUDA context, cuDNN/cuBLAS workspaces, the transient
 * gradients of backward and allocator slack (see data/doc/cost-model.md, Memory per GPU). */
#define COST_WORKSPACE_BYTES (1024.0 * 1048576.0)
/* Bytes per gradient element a data-parallel sync moves (t_s, the
 * simulator's buckets) at every precision: in mixed precision (fp16, bf16)
 * PyTorch DDP, Horovod and Megatron-LM keep fp32 parameters and sum the
 * fp32 gradients (torch.cuda.amp casts activations, not parameters;
 * Megatron's accumulate_allreduce_grads_in_fp32), issue 34. */
#define COST_GRAD_SYNC_BYTES 4.0

/* Limits that keep a cost model within minutes and a few GB, refused with
 * a message rather than tried. A layer has up to C(log2(G) + 4, 4)
 * configs on G GPUs (495 at 256, 1001 at 1024) and an edge's t_x table the
 * square of that: a build with tables takes up to COST_MAX_GPUS, and within
 * that is refused up front where its entries pass COST_MAX_TX_ENTRIES or
 * its estimated time or memory pass COST_MAX_BUILD_S or 3/4 of the
 * machine's (on the development machine: VGG-16 at 1024 GPUs builds and
 * searches in about 23 s and 640 MB; Inception-v3 and ResNet-50 at 1024
 * pass the entries' limit). */
#define COST_MAX_GPUS 1024
/* A model without tables (cost_model_open) evaluates given strategies; it
 * holds a link matrix of gpus^2 entries (16 MB at 1024) and every layer's
 * configs (up to C(log2(G) + 4, 4): 1001 at 1024). */
#define COST_EVAL_MAX_GPUS 1024
/* The largest global batch a cost model takes. */
#define COST_MAX_BATCH 100000000L
/* t_x entries over all edges (8 bytes each; the search copies them). */
#define COST_MAX_TX_ENTRIES (1L << 26)
/* A build estimated (from entries timed before it starts) to take longer
 * than this, or to need more than 3/4 of the machine's memory with the
 * search, is refused with both estimates instead of started (the
 * environment's LAYERWISE_MAX_BUILD_S, seconds, replaces the time limit). */
#define COST_MAX_BUILD_S 600

/* A tie (issue 32): the LM head that shares the token embedding's table
 * and the embedding, two layers that are not neighbours in the graph. Its
 * term t_tie(ce, ch) moves the table between the embedding's layout (config
 * ce) and the LM head's (ch), which keeps it: the tiles the embedding reads
 * in forward, and its gradient into the LM head's layout before the LM
 * head's sync (cost_tie.c, data/doc/cost-model.md). The search sees it as
 * an edge embed -> lm_head; Eq. 1 charges it to the LM head. */
typedef struct cost_tie {
    int embed, lm_head;      /* layer indices */
    double *t_tie;           /* [ce * n_configs[lm_head] + ch], ms; NULL in a model without tables */
} cost_tie;

typedef struct cost_model {
    const network *net;
    const cluster *cl;
    const profile *prof;     /* applied only on its GPU and precision (profile_applies) */
    int gpus;
    long batch;              /* global batch */
    precision prec;          /* the cluster's, when built */
    gpu_consts gk;           /* the GPU's compute constants at that precision */
    int n_layers;
    int *n_configs;          /* [layer] */
    config **configs;        /* [layer][config] */
    double **t_c, **t_s;     /* [layer][config], ms; NULL in a model without tables */
    unsigned char **t_c_profiled; /* [layer][config]: 1 where a profile entry gave t_c */
    int n_edges;             /* one per (consumer, input slot) */
    int *e_from, *e_to, *e_slot;
    double **t_x;            /* [edge][ci * n_configs[to] + cj], ms; NULL without tables */
    /* link matrix over the GPUs in use */
    double *lat_s, *inv_bw;  /* [gpus * gpus], seconds and seconds per byte */
    /* memory model (cost_memory_task); cost_model_build sets the defaults:
     * momentum, and COST_WORKSPACE_BYTES; elem_bytes follows the cluster's
     * precision (precision_elem_bytes) */
    optimizer_kind optimizer;
    recompute_kind recompute; /* transformer layers only; default none */
    attention_kind attention; /* default flash */
    double elem_bytes;       /* bytes of an activation or gradient element; < 4 means mixed
                                precision (fp32 master weights plus a working copy) */
    double workspace_bytes;  /* fixed allowance on every GPU that hosts a task */
    double build_ms;
    long tx_pairs_computed, tx_pairs_reused; /* table cache statistics */
    long tx_pairs_repriced;  /* of the computed: priced from another model's kept counts (cost_model_reuse) */
    long tx_pairs_scaled;    /* of the computed: priced from the kept counts of an edge that is the same problem
                                but for a whole factor on every element count (a build) */
    long tx_pairs_evaluated; /* of the computed: evaluated by the transfer model (not re-priced, scaled, or
                                the mirror of another entry): what the build's time goes to */
    int n_ties;              /* tied tables (an lm_head sharing an embedding's table): the tie terms */
    struct cost_tie *ties;   /* [n_ties] */
    int tx_reused;           /* 0: built; cost_model_reuse: 1 every config and the batch are the kept build's
                                (its counts re-priced), 2 some are not (more GPUs, a batch some sample degree
                                does not divide): their entries computed, the rest re-priced */
} cost_model;

cost_model *cost_model_build(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                             lw_error *err);
/* The same, giving up (NULL, "cancelled") soon after *cancel becomes
 * non-zero: for builds on a background thread that may no longer be wanted. */
cost_model *cost_model_build_cancellable(const network *net, const cluster *cl, const profile *prof, int gpus,
                                         long batch, const atomic_int *cancel, lw_error *err);
/* The same, keeping what cost_model_reprice and cost_model_reuse need
 * where it can (uniform links, the closed form's t_x, within 256 MB): for a
 * model what-ifs may follow. Costs more build time (about 60% more for
 * Inception-v3 at 64 GPUs) and about 30 bytes a computed entry
 * (Inception-v3: 10 MB at 16 GPUs, 81 MB at 64; cost_model_kept_bytes
 * says). Where evaluated is not NULL, the entries evaluated so far are
 * added to it as the build goes (a few hundred at a time, each thread;
 * m->tx_pairs_evaluated in all once done), for another thread to judge how
 * far it has come. */
cost_model *cost_model_build_for_whatifs(const network *net, const cluster *cl, const profile *prof, int gpus,
                                         long batch, const atomic_int *cancel, atomic_long *evaluated,
                                         lw_error *err);
void cost_model_free(cost_model *m);

/* A model without tables (t_c, t_s, t_c_profiled and t_x NULL): the links,
 * every layer's configs and every edge's description, in milliseconds even
 * at COST_EVAL_MAX_GPUS. For evaluating given strategies (strategy_evaluate,
 * cost_node_ms, cost_edge_ms compute just the entries they are asked for);
 * cost_model_graph needs a built model. Freed with cost_model_free. */
cost_model *cost_model_open(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                            lw_error *err);

/* One entry of the tables, from a built model's tables or computed now
 * (equal either way): node cost t_c + t_s of layer li's config k, and t_x of
 * edge for producer config ci and consumer config cj (bytes, if non-NULL,
 * gets the cross-GPU bytes it moves, forward + backward). */
double cost_node_ms(const cost_model *m, int li, int k);
double cost_edge_ms(const cost_model *m, int edge, int ci, int cj, double *bytes);

/* The tie term of tie k (m->ties[k]) for the embedding's config ce and the
 * LM head's ch: ms, and the bytes it moves (forward reads plus backward
 * gradients) in *bytes if non-NULL; the forward and backward parts apart
 * (either may be NULL). 0 where both configs lay the table out alike on
 * the same GPUs. cost_tie_ms takes config indices and reads the table
 * where the model has one, as cost_edge_ms. */
double cost_t_tie(const cost_model *m, int tie, const config *ce, const config *ch, double *bytes);
double cost_t_tie_parts(const cost_model *m, int tie, const config *ce, const config *ch, double *fwd_ms,
                        double *bwd_ms, double *bytes);
double cost_tie_ms(const cost_model *m, int tie, int ce, int ch, double *bytes);
/* The moves the tie's entry (ce, ch) is made of (for the simulator): visit
 * is called once per move, in a fixed order: forward (backward 0: a weight
 * piece from the LM head's task on GPU src to the embedding's on dst) or
 * backward (a gradient piece from the embedding's task src to the LM head's
 * dst), with its elements and bytes; moves within a GPU are none. */
typedef void (*cost_tie_visit)(void *user, int backward, int src, int dst, double elems, double bytes);
void cost_tie_moves(const cost_model *m, int tie, const config *ce, const config *ch, cost_tie_visit visit,
                    void *user);

/* A tie whose two layers sit in different pipeline stages (issue 35):
 * Megatron-LM's "embedding group" (megatron/core/distributed/
 * finalize_model_grads.py, _allreduce_word_embedding_grads). The stage
 * holding the embedding keeps a copy of the table, in the embedding's
 * layout (copy_bytes: what task `task` of config ce keeps of it: weights,
 * gradient, optimizer state, as cost_memory_task counts a layer's), and
 * once per step the two copies' gradients are all-reduced between the two
 * groups' corresponding ranks: GPU a0 + r with b0 + r for r < min(na, nb),
 * concurrent two-rank all-reduces of the table's gradient at the sync's
 * bytes per element spread evenly over the pairs, priced as
 * cost_allreduce_rings_s prices them (ms; *bytes: the table's gradient). */
double cost_tie_copy_bytes(const cost_model *m, int tie, const config *ce, int task);
double cost_tie_cross_ms(const cost_model *m, int tie, int a0, int na, int b0, int nb, double *bytes);

/* The same model at new prices: a cluster that differs from old's only in
 * what the tables price, not what they count (link bandwidths and
 * latencies, NICs per node, precision, sync and collective settings; not
 * GPUs per node or per-pair links), without recomputing the transfers:
 * old's build kept, for every t_x entry, the piece and element counts of
 * the receivers that can be the slowest, and the node tables are
 * recomputed. Equal, bit for bit, to cost_model_build(net, cl, ...) at
 * old's GPU count and batch. NULL where it does not apply (cost_model_build
 * then): another layout, a model without tables or one whose build kept
 * none (not cost_model_build_for_whatifs, per-pair links, the reference
 * t_x, or too many to keep). The new
 * model shares what old kept (either may be freed first) and keeps it for
 * the next. */
cost_model *cost_model_reprice(const cost_model *old, const cluster *cl);
/* The same for another GPU count and batch as well: a model on `gpus`
 * GPUs and global batch `batch`, each t_x entry priced from what old's
 * build kept where that build had both configs (a config on k GPUs uses
 * GPUs 0..k-1, so its transfers do not depend on how many GPUs the cluster
 * has) and, for another batch, both configs' degrees along the sample
 * dimension divide both batches (element counts then scale by the ratio of
 * the batches, exactly); the other entries (more GPUs, a batch some degree
 * does not divide) are computed, on every core, and the model then keeps
 * counts of its own, carried over and computed, for the what-ifs after it
 * (m->tx_reused says which: 1 all priced, 2 some computed). Equal, bit for
 * bit, to cost_model_build(old->net, cl, ..., gpus, batch). NULL where
 * cost_model_reprice declines. */
cost_model *cost_model_reuse(const cost_model *old, const cluster *cl, int gpus, long batch);
/* cost_model_reuse, giving up (NULL) soon after *cancel is raised (NULL:
 * never), for a background thread; the entries it evaluates counted in
 * *evaluated as it goes, as cost_model_build_for_whatifs does (NULL: not). */
cost_model *cost_model_reuse_cancellable(const cost_model *old, const cluster *cl, int gpus, long batch,
                                         const atomic_int *cancel, atomic_long *evaluated);
/* cost_model_reuse answering first: the entries it computes keep no
 * counts (about 40% less time where most are computed: Inception-v3 from
 * 32 to 64 GPUs), so where any is computed (tx_reused 2) the model keeps
 * none (cost_model_kept_bytes 0) until it adopts them
 * (cost_model_adopt_counts) from the same model built again keeping them,
 * on another thread (cost_model_reuse_cancellable from old, or
 * cost_model_build_for_whatifs). Where every entry is priced it shares
 * old's, as cost_model_reuse. Its tables are the same doubles. */
cost_model *cost_model_reuse_fast(const cost_model *old, const cluster *cl, int gpus, long batch,
                                  const atomic_int *cancel);
/* Whether m, built without keeping counts, could keep them: the closed
 * form's t_x and within RP_MAX_BYTES. */
int cost_model_could_keep_counts(const cost_model *m);
/* Gives m, which keeps no counts, donor's where they were kept for
 * exactly m's entries (the same network, GPUs, batch, layout and
 * configs), shared. 1 adopted, 0 not (m unchanged). Prices may differ:
 * counts do not depend on them. */
int cost_model_adopt_counts(cost_model *m, const cost_model *donor);
/* The bytes of counts m's build kept for what-ifs (shared by the models
 * priced from them); 0: it kept none, and what-ifs on m build. */
long cost_model_kept_bytes(const cost_model *m);

/* Recomputes the t_s tables after the cluster's sync scheme changed (the
 * t_c and t_x tables do not depend on it): a fast what-if. */
void cost_model_refresh_sync(cost_model *m);

/* The abstract graph the search works on (node cost = t_c + t_s, edge cost =
 * t_x), from a built model's tables. Its edge tables are the model's own
 * (borrowed, not copied): free the graph before the model. */
cost_graph *cost_model_graph(const cost_model *m);

/* Single evaluations, for strategies and tests. Bytes are cross-GPU bytes
 * moved (forward + backward for t_x; push + pull for t_s). */
double cost_t_c(const cost_model *m, int layer, const config *c, int *profiled);
/* Every evaluation below only reads the model: each call brings its own
 * scratch (cost_t_s and cost_t_x allocate one per call, the table builders
 * one per thread), so calls on one model may run on several threads at
 * once, as long as no thread changes the model meanwhile (cost_model_free,
 * cost_model_refresh_sync, or a field written by the caller). */
double cost_t_s(const cost_model *m, int layer, const config *c, double *bytes);
/* The analytical forward and backward parts of t_c and the profile key of
 * the task's shape (for writing profile templates). Returns t_c. */
double cost_t_c_parts(const cost_model *m, int layer, const config *c, profile_entry *key, double *fwd_ms,
                      double *bwd_ms);
double cost_t_x(const cost_model *m, int edge, const config *cp, const config *cc, double *bytes);
/* cost_t_x with its forward and backward parts (ms; either may be NULL). */
double cost_t_x_parts(const cost_model *m, int edge, const config *cp, const config *cc, double *fwd_ms,
                      double *bwd_ms);
/* Elements of the producer's output that consumer task `task` needs from
 * producer task `ptask` (for tests and diagrams). */
double cost_overlap(const cost_model *m, int edge, const config *cp, int ptask, const config *cc, int task);
/* Every producer task that holds part of what consumer task `task` needs:
 * their indices (ascending) in ptask[] and cost_overlap's value for each
 * (the same double) in vol[], both with room for config_tasks(cp); returns
 * how many. In the time of the overlapping tasks, not of all of them.
 * Where the producer has partial sums or replicas (r, x), each piece's
 * group of tasks is named by the one nearest the consumer's GPU. */
int cost_overlaps_of(const cost_model *m, int edge, const config *cp, const config *cc, int task, int *ptask,
                     double *vol);

/* Set to 1 to compute every t_x piece by piece (the reference); by default
 * clusters with uniform links within and between nodes use an equivalent
 * closed form that is much faster at many GPUs. Tests compare the two. Read
 * once, when a model is set up (cost_model_build, cost_model_open): that
 * model keeps the choice. */
extern int cost_tx_reference;
/* Set to 1 to build tables with the closed form receiver by receiver (the
 * oracle) rather than node by node; the two must agree bit for bit, which
 * tests check. Read once, when a model is set up, as cost_tx_reference. */
extern int cost_tx_oracle;

/* The recompute and attention settings a model takes when it is set up
 * (cost_model_build, cost_model_open; the CLI's --recompute and
 * --attention set them): the model keeps them in m->recompute and
 * m->attention. Defaults none and flash. */
extern recompute_kind cost_recompute;
extern attention_kind cost_attention;

/* The memory one task of a layer keeps on its GPU, by term (bytes). */
typedef struct memory_parts {
    double weights;      /* the task's shard of the weights (fp32 master, plus a working copy in mixed precision) */
    double gradients;    /* the shard's weight gradients */
    double optimizer;    /* optimizer state of the shard: none, momentum, or Adam's two moments (fp32) */
    double activations;  /* the task's output tile, kept for backward */
} memory_parts;

/* Bytes task `task` of layer li in config c keeps on GPU `task` (the sum of
 * the parts; parts may be NULL). Additive over layers: a GPU's memory under
 * a strategy is the sum over layers of its task's bytes, plus the workspace. */
double cost_memory_task(const cost_model *m, int layer, const config *c, int task, memory_parts *parts);

/* Seconds for one ring all-reduce of `bytes` over the devices ring[0..n-1]
 * taken in that order (ids of the cluster; n >= 2), one call: NCCL's
 * latency (per call plus per step) and bandwidth terms, the inter-node hops
 * sharing each node's NICs. For tests and the bus-bandwidth check. */
double cost_allreduce_s(const cluster *cl, const int *ring, int n, double bytes);
/* NCCL's protocols (tuning.cc): low-latency LL, LL128, and Simple. */
enum { COLL_LL, COLL_LL128, COLL_SIMPLE };
const char *coll_proto_name(int proto);
/* The algorithm (tree 0: ring, 1: tree) and protocol of one all-reduce call
 * and its time in seconds. */
typedef struct coll_pick {
    int tree, proto;
    double seconds;
} coll_pick;
/* NCCL's choice for one all-reduce over n ranks on `nodes` nodes whose
 * ring would move its bytes in ring_bw_s seconds with the Simple protocol
 * (2(n - 1) steps at the slowest hop or NICs): the least time among ring
 * and tree (across nodes only) with LL, LL128 (not over PCIe) and Simple,
 * each its latency plus the ring's bandwidth time over the protocol's share
 * of the bus bandwidth (data/doc/cost-model.md, Collectives). A cluster
 * whose collectives say "algorithms": "ring-simple" (the default) gets
 * ring/Simple alone, as before. */
coll_pick cost_allreduce_pick(const cluster *cl, int n, int nodes, double ring_bw_s);
/* cost_allreduce_s's call with the algorithm and protocol it takes. */
coll_pick cost_allreduce_call(const cluster *cl, const int *ring, int n, double bytes);
/* n_rings concurrent ring all-reduces of `bytes` each, ring k over
 * rings[k n .. k n + n - 1] in that order (ids of the cluster; n >= 2),
 * their inter-node hops sharing the nodes' NICs: cost_allreduce_s's
 * model, several rings at once. Seconds. */
double cost_allreduce_rings_s(const cluster *cl, const int *rings, int n_rings, int n, double bytes);
/* A ring reduce-scatter and a ring all-gather of `bytes` (the whole
 * buffer) over the same ring: each half of cost_allreduce_s (n - 1 of its
 * steps and half its call's latency), so that one of each is exactly the
 * all-reduce. Used for the reduction of partial sums and for replicas. */
double cost_reduce_scatter_s(const cluster *cl, const int *ring, int n, double bytes);
double cost_allgather_s(const cluster *cl, const int *ring, int n, double bytes);
/* The order NCCL would run a ring over these devices: node by node, and
 * within a node the cycle whose slowest link is fastest (so dgx1-v100's
 * ring uses NVLink pairs only). Reorders devs[0..n-1] in place. */
void cost_ring_order(const cluster *cl, int *devs, int n);
/* How many rings the model runs at once for an all-reduce over ring[0..n-1]
 * (in cost_ring_order's order): NCCL's several rings within one node of
 * per-pair links under its algorithms (data/doc/cost-model.md, Several
 * rings), else 1. */
int cost_ring_count(const cluster *cl, const int *ring, int n);

/* Memory per GPU of a strategy (configs indexed per layer): fills per_gpu
 * (gpus entries, may be NULL) and returns the largest. The sum over layers
 * of cost_memory_task, plus m->workspace_bytes on every GPU that hosts a
 * task. */
double cost_memory(const cost_model *m, const int *config_index, double *per_gpu);

#endif
