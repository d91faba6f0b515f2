/*
 * pipeline: pipeline parallelism (issue 35). A pipeline plan cuts the
 * network, in its topological order, into p stages; stage i runs on its own
 * group of GPUs (contiguous, a power of two, aligned to its size, so a group
 * is part of one node or whole nodes); the global batch B is split into m
 * micro-batches of B/m; a schedule (GPipe, 1F1B, interleaved 1F1B with v
 * virtual stages, Narayanan et al. 2021) runs them.
 *
 * Cuts: only where a single tensor crosses (between transformer blocks,
 * between the layers of a CNN chain): position k (1 <= k < layers) when
 * exactly one layer before k has a consumer at or after k.
 *
 * Model (data/doc/cost-model.md, "Pipelines"): stage i's per-micro-batch
 * time t_i = f_i + c_i, where f_i is Eq. 1 of the stage's sub-graph (today's
 * per-layer model: its layers' t_c + t_s / m, the t_x of every edge into
 * them) on its g_i GPUs at batch B/m, the stage's input (the tensor crossing
 * its first cut) arriving in whatever layout the stage wants (a node of cost
 * 0 with the producer's configs); c_i the point-to-point send of the
 * crossing activation to stage i+1 and of its gradient back (one message
 * each way, between the two groups' first GPUs). The step:
 *     GPipe, 1F1B:  T = sum_i t_i + (m - 1) max_i t_i        (Alpa's form)
 *     interleaved:  T = sum_i t_i / v + (m - 1/v) max_i t_i
 * which for p equal stages is (m + p - 1) t and m t + (p - 1) t / v: the
 * bubbles (p-1)/m and (p-1)/(v m) of the ideal m t.
 *
 * Interleaved 1F1B (Narayanan et al. 2021, Megatron-LM's virtual stages):
 * the network is cut into p v contiguous chunks; chunk j runs on group
 * j mod p, so each group holds v chunks, and a micro-batch's forward goes
 * group 0, 1, .., p-1, 0, 1, .. (v passes). Chunk j's time is its range's
 * f plus its own send to chunk j + 1 (the last group sends to the first
 * between passes); t_i above is then group i's load, the sum of its
 * chunks', and its memory what Megatron's order of its chunks' forwards
 * and backwards holds at its peak (the first group holds the most).
 *
 * Search (pipe_search): the exact minimum of T over the cuts, the groups,
 * the micro-batch counts tried and every layer's config, by Alpa's
 * inter-operator dynamic programme (enumerate the bound on max_i t_i, a DP
 * minimising sum_i t_i), each stage's inner optimum from a min-plus
 * composition of per-segment tables that today's search produces (one
 * search per distinct segment, identical blocks sharing it).
 *
 * Ownership: a pipe_plan owns its stages, their configs and the cost models
 * they index (one per group size); pipe_plan_free frees them. The network,
 * cluster and profile stay the caller's and must outlive the plan.
 */
#ifndef LW_PIPELINE_H
#define LW_PIPELINE_H

#include <stdio.h>

#include "cost.h"
#include "strategy.h"

typedef enum { PIPE_GPIPE, PIPE_1F1B, PIPE_INTERLEAVED } pipe_schedule;
const char *pipe_schedule_name(pipe_schedule s);
int pipe_schedule_from_name(const char *s); /* -1 if unknown */

/* Refused up front (exit 2) past these: PIPE_MAX_DP_WORK bounds the work
 * of one DP pass, P K^2 G log2(G) (data/doc/search.md). */
#define PIPE_MAX_STAGES 64
#define PIPE_MAX_DP_WORK 2e9
/* The same for the interleaved chunk search (il_work's count of a group's
 * chunk starts and ends over every choice of the passes' starts, times
 * sizes squared: 0.05-0.06 us each here with its pruning, so some 30 s). */
#define PIPE_MAX_IL_WORK 5e8
/* Rounds of the DP under the memory limit (lazy: a range is checked against
 * the limit once the DP chooses it) one micro-batch count takes at most
 * before its plan is the unconstrained one (search.md). */
#define PIPE_CAP_ROUNDS 12
/* The same for the interleaved groups (il_capped): a round checks at most
 * the p groups of its optimum, and a group's bound (its chunks'
 * unconstrained optima) is loose where the embedding's group keeps the tied
 * table's copy (GPT-2 on dgx-a100, P 2 V 2 M 8 under 7GiB: 32 rounds). */
#define PIPE_IL_CAP_ROUNDS 48
/* Subproblems one stage's memory search runs at most (a count, not a time,
 * so that the DP and the plan it returns price a range the same). */
#define PIPE_CAP_SUBPROBLEMS 48
/* Micro-batch counts one search tries at most. */
#define PIPE_MAX_COUNTS 24

typedef struct pipe_options {
    int stages;                /* p >= 1 */
    int microbatches;          /* m >= 1; 0: each power of two from p to 8p that divides the batch, the fastest
                                  plan that fits the memory limit; where none fits, twice the last while it
                                  divides the batch, until one does (the fastest where none does) */
    pipe_schedule schedule;
    int vp;                    /* interleaved: v >= 2; others 1 */
    optimizer_kind optimizer;  /* for the memory report */
    double memory_limit;       /* bytes per GPU for "fits" (+inf: none) */
    const atomic_int *cancel;
} pipe_options;

void pipe_options_init(pipe_options *o);

typedef struct pipe_stage {
    int first, last;           /* layers [first, last) */
    int group;                 /* interleaved: the GPU group (chunk index mod p) it runs on; else its index */
    int producer;              /* the layer whose output it sends on (-1: the last stage) */
    int gpu0, gpus;            /* GPUs gpu0 .. gpu0 + gpus - 1 */
    const cost_model *cm;      /* the model on `gpus` GPUs at the micro-batch (owned by the plan) */
    int *config;               /* [n_layers of the network]: config index in cm for layers of the stage, -1 elsewhere */
    int input_config;          /* the layout its search chose for the tensor it receives (a config of the previous
                                  stage's producer in cm; node 0 of its graph); -1 for the first stage */
    double f_ms;               /* Eq. 1 of the stage at the micro-batch (t_s / m) */
    double compute_ms, transfer_ms, sync_ms; /* its parts: sum t_c, sum t_x, sum t_s (once per step) */
    double p2p_ms;             /* c_i */
    double t_ms;               /* f + c */
    double held;               /* micro-batches of activations the schedule keeps on its GPUs (interleaved: of this
                                  chunk, the most at once) */
    double memory_bytes;       /* the most any GPU of the group keeps (interleaved: all of the group's chunks), with
                                  the embedding's copy of a tied table whose LM head is on another stage (interleaved:
                                  on another group; one group's chunks hold the table once) */
} pipe_stage;

typedef struct pipe_plan {
    int p, m, v;               /* groups (--pp), micro-batches, chunks per group */
    int n_stages;              /* entries in stages: p, or p v chunks interleaved (chunk j on group j mod p) */
    pipe_schedule schedule;
    int gpus;                  /* G */
    long batch, microbatch;
    pipe_stage *stages;        /* [n_stages], in the network's order */
    double step_ms;            /* T */
    double bubble_fraction;    /* 1 - sum_i m t_i / (p T): the mean idle share of a GPU's step */
    double peak_memory_bytes;
    int fits;
    double limit_bytes;        /* the memory limit each stage's configs were searched within (+inf: none) */
    long capped_searches;      /* stages whose unconstrained optimum did not fit: memory searches run */
    double tie_ms;             /* a tied table's embedding and LM head in different stages: the embedding group's
                                  all-reduce of its gradient across them, once a step, in step_ms (pipe_tie_ms) */
    int unproven;              /* a memory search inside a stage stopped at PIPE_CAP_SUBPROBLEMS: the plan fits,
                                  its step is the best found, not proven the least */
    /* search statistics */
    int cuts;                  /* K: segments between the allowed cuts */
    long segment_searches, dp_runs;
    double search_ms;
    int n_models;
    cost_model **models;       /* owned */
} pipe_plan;

/* The allowed cuts of net: bounds[0] = 0 < bounds[1] < ... < bounds[K] =
 * n_layers, and prod[j] (0 < j < K) the layer whose output crosses cut j.
 * Both arrays need n_layers + 1 entries. Returns K (>= 1). */
int pipe_cuts(const network *net, int *bounds, int *prod);

/* The search's graph of layers [first, last) of model cm (every node cost
 * t_c + t_s * inv_m), with, where first > 0, node 0 the crossing tensor's
 * producer `u` (its configs, cost 0). node_of (n_layers entries, may be
 * NULL) gets each layer's node or -1. Edge tables are cm's, borrowed. */
cost_graph *pipe_stage_graph(const cost_model *cm, int first, int last, int u, double inv_m, int *node_of);

/* c_i: activation of `producer` at the micro-batch forward, its gradient
 * back, between GPUs a and b (ms; v messages each way: the plans send once
 * per stage or chunk, v = 1). */
double pipe_p2p_ms(const cost_model *cm, int producer, int a, int b, int v);

/* Micro-batches of activations stage i of p keeps under a schedule with m
 * micro-batches (1F1B: min(p - i, m); GPipe: m; interleaved, Megatron's
 * warm-up: min(((p - i - 1) 2 + (v - 1) p + 1) / v, m)). */
double pipe_held(pipe_schedule s, int p, int i, int m, int v);

/* Each group's load: T[g] = the sum of t over the stages on group g
 * (interleaved: its v chunks; else stage g's t). T needs pp->p entries. */
void pipe_group_loads(const pipe_plan *pp, const double *t, double *T);

/* Device i's order of work under schedule s (p groups, v chunks each, m
 * micro-batches): 2 m v entries, vstage[k] the virtual stage (chunk c p + i
 * of the network's p v), mb[k] the micro-batch, fwd[k] 1 forward / 0
 * backward (Megatron-LM's warm-up, steady 1F1B and cool-down). */
void pipe_device_order(pipe_schedule s, int p, int v, int i, int m, int *vstage, int *mb, int *fwd);

/* T from the stage times (the formulas above; interleaved, t the groups' loads). */
double pipe_step_ms(pipe_schedule s, int m, int v, const double *t, int p);
/* The bubble: 1 - sum_i m t_i / (p T), the mean share of its step a GPU
 * idles; (p-1)/(m+p-1) for p equal stages, (p-1)/(v m + p - 1) interleaved. */
double pipe_bubble(pipe_schedule s, int m, int v, const double *t, int p);

/* The exact optimum over cuts, groups, micro-batch counts and configs. NULL
 * with err set (code 2: a request it refuses, named; 1 otherwise). */
pipe_plan *pipe_search(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                       const pipe_options *o, lw_error *err);

/* Megatron's plan with p equal stages: the transformer blocks split evenly
 * (the embedding with the first, the head with the last), groups of G/p
 * GPUs, each stage's layers in Megatron's configs (strategy_megatron on the
 * G/p model). NULL with err set (code 2) where it does not apply. */
pipe_plan *pipe_megatron(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                         const pipe_options *o, const megatron_options *mo, lw_error *err);

void pipe_plan_free(pipe_plan *pp);

/* The all-reduce of a tied table's gradient between the stage holding the
 * embedding and the stage holding its LM head, where they differ
 * (Megatron-LM's embedding group: cost_tie_cross_ms between the two
 * stages' groups), summed over the ties: ms once per step; *bytes (may be
 * NULL) the tables' gradients. 0 where every tie is within one stage, or
 * (interleaved) within two chunks of one group, on the same GPUs. */
double pipe_tie_ms(const pipe_plan *pp, double *bytes);

/* Why a layer sits in its stage (explain of boundaries): the effect on the
 * step of moving each boundary of the layer's stage one allowed cut earlier
 * or later, the groups kept, the two stages' configs optimised again for
 * their new ranges (the others as they are). */
typedef struct pipe_move {
    int boundary;              /* between stages boundary and boundary + 1 (0-based) */
    int dir;                   /* -1: one allowed cut earlier, +1: later */
    int from, to;              /* the later stage's first layer before and after */
    int valid;                 /* 0: no allowed cut there, or a stage would be left empty */
    double t_left, t_right;    /* the two stages' t_i after (ms) */
    double max_t, sum_t, step_ms; /* max_i t_i, sum_i t_i and T after (ms) */
} pipe_move;
typedef struct pipe_explain {
    int layer, stage;          /* the layer and its stage (0-based) */
    double max_t, sum_t, step_ms; /* as the plan has them */
    int max_stage;             /* the slowest stage, which sets (m - 1) max t_i (interleaved: the slowest group, whose
                                  load sets (m - 1/v) max_g T_g; max_t and sum_t are then over the groups' loads) */
    int n_moves;
    pipe_move moves[4];        /* the left boundary's moves, then the right's */
} pipe_explain;
/* Fills *e for layer li of pp: 0, or -1 with err set (code 2: no such
 * layer; 1 where a moved stage has no finite strategy). */
int pipe_explain_layer(const pipe_plan *pp, int li, pipe_explain *e, lw_error *err);
/* *e as readable text (the caller frees); names from net. */
char *pipe_explain_text(const pipe_plan *pp, const pipe_explain *e);

/* A strategy file with stages: "format": PIPE_FORMAT, "schedule",
 * "microbatches", "virtual_stages", "stages": [{"layers": [{"name",
 * "config"}...], "gpus": [...], figures...}...], and a "pipeline" summary
 * (step, bubble, memory). Files of format layerwise-strategy/1 (no stages)
 * are read as before (strategy_from_json). */
#define PIPE_FORMAT "layerwise-strategy/2"
struct cJSON;
/* Adds those fields to o. */
void pipe_plan_to_json(const pipe_plan *pp, struct cJSON *o);
/* The whole PIPE_FORMAT document `search --pp --json` writes: doc_new's
 * header for m (the one-stage model of the same network, cluster and
 * batch) on gpus, "algorithm", "total_ms", the throughput (eq1),
 * "peak_memory_bytes", "fits" and pipe_plan_to_json's fields. The caller
 * cJSON_Deletes it. */
struct cJSON *pipe_plan_document(const pipe_plan *pp, const cost_model *m, int gpus, const char *algorithm);
/* 1 where text is a PIPE_FORMAT document. */
int pipe_file_is_pipeline(const char *text, size_t len);
/* The plan a PIPE_FORMAT document gives (its stages' configs pinned, each
 * stage's input in its best layout), evaluated. NULL with err set (code 2
 * naming the file and the stage or field) on a bad document. */
pipe_plan *pipe_plan_from_json(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                               const char *text, size_t len, const char *label, optimizer_kind opt, double limit,
                               lw_error *err);
/* A readable table of the stages and the step. */
void pipe_plan_print(const pipe_plan *pp, FILE *f);

/* ---- simulation (pipeline_sim.c) ---- */

/* PIPE_SIM_TIE: a tied table's all-reduce between the groups holding its
 * embedding and its LM head (pipe_tie_ms), on each of the two, after both
 * groups' last backward and before their syncs */
typedef enum { PIPE_SIM_FORWARD, PIPE_SIM_BACKWARD, PIPE_SIM_SYNC, PIPE_SIM_TIE } pipe_sim_kind;
typedef struct pipe_sim_task {
    int stage, micro;          /* micro -1: the sync or the tie's all-reduce */
    pipe_sim_kind kind;
    double start_ms, end_ms;
    int chunk;                 /* interleaved: the virtual stage's chunk on the group (0 ..); 0 otherwise */
} pipe_sim_task;
typedef struct pipe_sim {
    int p, m, n_tasks;
    pipe_sim_task *tasks;      /* [2 p m v + p + 2] */
    double step_ms;            /* the last sync's end */
    double *busy_ms;           /* [p] per GPU of each stage: its forwards, backwards and sync */
    double bubble_fraction;    /* 1 - sum of forwards and backwards / (p step) */
} pipe_sim;
/* The step of p stages, m micro-batches under a schedule: stage i's
 * forward tf[i] and backward tb[i] per micro-batch (interleaved: its v
 * chunks 1/v each), c[i] a send from group i to i+1, each way (c[p-1]: from
 * the last group to the first, interleaved), y[i] its sync after its last
 * backward. Equal stages, no sends, no sync: (m + p - 1)(tf + tb), and
 * interleaved m (tf + tb) + (p - 1)(tf + tb) / v. NULL for v > 1 without
 * interleaving, or m not a multiple of p interleaved. */
pipe_sim *pipe_simulate(pipe_schedule s, int p, int m, int v, const double *tf, const double *tb, const double *c,
                        const double *y);
/* The step chunk by chunk: S = p v virtual stages (chunk j on group j mod
 * p; v = 1 without interleaving), tf[j], tb[j] chunk j's forward and
 * backward per micro-batch, c[j] its send to chunk j + 1 each way (c[S-1]
 * unused), y[i] group i's sync. NULL as pipe_simulate. */
pipe_sim *pipe_simulate_chunks(pipe_schedule s, int p, int m, int v, const double *tf, const double *tb,
                               const double *c, const double *y);
/* The same for a plan: its stages' (chunks') t_c split into forward and
 * backward as the compute model splits it, t_x half each way, c = p2p / 2,
 * y = the group's t_s; a tie across stages (pp->tie_ms) its own task on
 * the two groups before their syncs. */
pipe_sim *pipe_plan_simulate(const pipe_plan *pp);
void pipe_sim_free(pipe_sim *r);
/* Adds the simulation's fields to root and prints it (the caller frees
 * the text, and still owns root). */
char *pipe_sim_to_json(const pipe_sim *r, const pipe_plan *pp, struct cJSON *root);
/* Chrome trace events: a row (tid) per GPU, a pid per node, each event
 * named with its kind, micro-batch and stage. */
char *pipe_sim_trace(const pipe_sim *r, const pipe_plan *pp);

#endif
