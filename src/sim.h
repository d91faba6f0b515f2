/*
 * sim: an event-by-event simulation of one training step of a strategy,
 * beside Eq. 1's additive estimate. The step becomes a task graph:
 *   forward        one task per layer task, on its GPU
 *   backward-data  the input gradient of a layer task, on its GPU
 *   backward-weight the weight gradient (layers with parameters), on its GPU
 *   transfer       one task per cross-GPU piece of an edge's tensor (forward:
 *                  producer task p -> consumer task k; backward: the gradient
 *                  k -> p), on the link p -> k (and across nodes, on one NIC
 *                  of each node)
 *   sync           one collective per gradient bucket, started when the
 *                  last weight gradient in it is ready, on the links (and
 *                  NICs) its replicas use
 *   all-gather, reduce-scatter  the sharded schemes' collectives (below)
 * Durations come from the same cost model as Eq. 1: a task's forward and
 * backward parts of t_c, a piece's latency + bytes / bandwidth of its link,
 * a bucket's t_s. Only the schedule differs:
 *   SIM_OVERLAP_NONE  Eq. 1's schedule: every layer's and edge's work in a
 *                     phase of its own, one after another (GPUs work in
 *                     parallel inside a phase, a receiver takes its pieces
 *                     one after another, a node's NICs bound its traffic);
 *                     the step equals Eq. 1's total.
 *   SIM_OVERLAP_FULL  data flow: a task starts when its inputs are ready and
 *                     its resources are free (one compute stream per GPU,
 *                     one channel per link direction, a node's NICs shared,
 *                     first ready first served); communication overlaps
 *                     computation and independent branches run at once.
 * Deterministic: ties go to the task created first.
 *
 * sim_run returns a sim_result the caller frees with sim_free; it points to
 * nothing of the cost model's and may outlive it.
 */
#ifndef LW_SIM_H
#define LW_SIM_H

#include <stdio.h>

#include "cost.h"

/* SIM_ALLGATHER, SIM_REDUCE_SCATTER: the collectives of the sharded sync
 * schemes (cost_sharding.h), one per layer: zero3 and hsdp all-gather a
 * layer's weights before its forward and again before its backward, one
 * layer ahead (a gather waits until the layer two back has run: two
 * layers gathered at most, as FSDP's prefetch), and reduce-scatter its
 * gradients once its weight gradient is done, behind the backward; hsdp's
 * cross-node all-reduce of the gradient shard follows as a sync task.
 * zero1 and zero2 reduce-scatter, then all-gather the updated weights.
 * SIM_REDUCE: an edge whose configs have partial sums or replicas (r, x),
 * one task per direction: the reduction and the transfers around it. */
typedef enum {
    SIM_FORWARD,
    SIM_BACKWARD_DATA,
    SIM_BACKWARD_WEIGHT,
    SIM_TRANSFER,
    SIM_SYNC,
    SIM_ALLGATHER,
    SIM_REDUCE_SCATTER,
    SIM_REDUCE,
    SIM_OPTIMIZER,
    SIM__KINDS
} sim_kind;
/* SIM_OVERLAP_DDP: data flow as SIM_OVERLAP_FULL, scheduled as PyTorch
 * DistributedDataParallel and Horovod run a step (the CLI's default):
 * - gradients go in buckets in reverse layer order (the order backward
 *   produces them) of the cluster's collectives.bucket_mb (opt->bucket_bytes
 *   when set), the first bucket capped at SIM_DDP_FIRST_BUCKET_MIB (DDP's
 *   _DEFAULT_FIRST_BUCKET_BYTES, so the first all-reduce starts early);
 * - the optimizer step (kind SIM_OPTIMIZER, one task per GPU holding
 *   weights) runs after every bucket's all-reduce is done (backward() returns
 *   when the last bucket is reduced; optimizer.step() follows), so the last
 *   bucket and the optimizer are exposed: SGD with momentum reads the fp32
 *   weight, its gradient and momentum and writes weight and momentum,
 *   SIM_DDP_OPTIMIZER_BYTES per weight at the GPU's memory rate, one kernel;
 * - a compute task on a GPU while an all-reduce that GPU takes part in runs
 *   is slowed by SIM_DDP_CONTENTION of the time they overlap: NCCL's kernels
 *   occupy SMs (one CTA per channel, up to 16-32 channels on NVLink systems
 *   beside 80-132 SMs) and memory bandwidth. An assumption, not a fit: no
 *   multi-GPU figure sets it. */
typedef enum { SIM_OVERLAP_NONE, SIM_OVERLAP_FULL, SIM_OVERLAP_DDP } sim_overlap;
#define SIM_DDP_FIRST_BUCKET_MIB 1.0
#define SIM_DDP_OPTIMIZER_BYTES 20.0
#define SIM_DDP_CONTENTION 0.15

typedef struct sim_options {
    sim_overlap overlap;
    /* Gradient buckets: consecutive layers (in backward order) whose
     * replicas are the same GPUs are synchronised together until a bucket
     * holds at least this many bytes of gradients. 0: one bucket per layer.
     * A bucket costs the sum of its layers' t_s. */
    double bucket_bytes;
    /* > 0: give up (sim_run returns NULL) on a task graph larger than
     * this, e.g. a model-parallel step of a million pieces where a summary
     * must stay quick. 0: no limit. */
    long max_tasks;
    /* 1: leave eq1_ms and gpus_used at 0 (a caller that wants only the
     * step: Eq. 1's evaluation is about a third of a small step's time) */
    int skip_eq1;
    /* Optional: called at once, then about every 0.2 s while sim_run
     * works, and with fraction 1 at the end: fraction of the work done
     * (the build of the task graph the first half, its schedule the
     * second), seconds spent, and the seconds the whole is projected to
     * take from the rate so far (the build's alone while it builds).
     * Non-zero from it stops the run: sim_run returns NULL. */
    int (*progress)(double fraction, double spent_s, double projected_s, void *user);
    void *progress_user;
} sim_options;

/* A resource: a GPU's compute stream, a link direction, or one NIC of a
 * node in one direction. */
typedef enum { SIM_RES_GPU, SIM_RES_LINK, SIM_RES_NIC_OUT, SIM_RES_NIC_IN } sim_res_kind;

typedef struct sim_resource {
    sim_res_kind kind;
    int a, b;         /* GPU: a; link: a -> b; NIC: node a, slot b */
    int node;         /* the cluster node it belongs to (a link: its source's) */
    double busy_ms;   /* time occupied during the step */
} sim_resource;

typedef struct sim_task {
    sim_kind kind;
    int layer;        /* compute: its layer; transfer: the edge's consumer; sync: the bucket's first layer */
    int edge;         /* transfer: the edge; -1 for a tie's piece (cost_tie: layer is the receiving one); otherwise -1 */
    int backward;     /* transfer: 1 for the gradient direction */
    int gpu;          /* compute: its GPU; transfer: the sender; sync: -1 */
    int dst;          /* transfer: the receiver; otherwise -1 */
    int n_layers;     /* sync: layers in its bucket (layer .. in backward order) */
    double bytes;     /* transfer: the piece; sync: bytes the collective moves */
    double lat_ms;    /* transfer: its link's latency; in data flow paid before the piece takes the link */
    double dur_ms, start_ms, end_ms;
    int res0, n_res;  /* resources it occupied: res_of[res0 .. res0 + n_res) */
    int crit;         /* the task whose end set its start (-1: none) */
} sim_task;

typedef struct sim_result {
    sim_overlap overlap;
    int gpus, nodes;
    long batch;
    int n_tasks;
    sim_task *tasks;
    int n_res;
    sim_resource *res;   /* GPUs first (index = GPU), then links and NICs as used */
    int *res_of;         /* the resources of every task, see sim_task.res0 */
    double step_ms;      /* the simulated step */
    double eq1_ms;       /* Eq. 1's total for the same strategy */
    int gpus_used;       /* the GPUs the strategy really uses (strategy_eval.gpus_used) */
    double images_per_s; /* batch / step_ms */
    int n_crit;
    int *crit;           /* the critical path, first task first */
} sim_result;

/* NULL only when opt->max_tasks is exceeded or opt->progress said stop. */
sim_result *sim_run(const cost_model *m, const int *config_index, const sim_options *opt);
void sim_free(sim_result *s);

/* The size of a strategy's step before it is simulated: its compute tasks
 * (exact), transfer pieces (both directions; from SIM_ESTIMATE_SAMPLES
 * consumer tasks of each edge, spread over them, times the edge's
 * consumer tasks), tasks in all, and the bytes sim_run needs for them
 * (SIM_BYTES_PER_TASK each, measured: the task, its dependencies and
 * needs, the schedule's arrays and busy intervals). In the time of the
 * sampled overlaps: well under a second at 1024 GPUs. */
typedef struct sim_size {
    double compute_tasks, pieces, tasks;
    double bytes;
} sim_size;
#define SIM_ESTIMATE_SAMPLES 32
#define SIM_BYTES_PER_TASK 300.0
void sim_size_estimate(const cost_model *m, const int *config_index, sim_size *out);

/* What a step may cost `simulate`: SIM_MAX_S seconds (the environment's
 * LAYERWISE_MAX_SIM_S replaces it), as a search's build (COST_MAX_BUILD_S),
 * and 3/4 of the machine's memory (and no more than the address space
 * `ulimit -v` leaves). Seconds are bounded from below up front by
 * SIM_MIN_S_PER_TASK a task, the fastest rate measured (4-46 us a task on
 * the development machine, more the more contended its links; halved);
 * the real rate is seen while it runs (sim_options.progress). */
#define SIM_MAX_S 600.0
#define SIM_MIN_S_PER_TASK 2e-6
/* sim_to_json's document: bytes (the cJSON tree and its text; 1170
 * measured) and seconds (at least; 19-27 us measured) a task. */
#define SIM_JSON_BYTES_PER_TASK 1200.0
#define SIM_JSON_MIN_S_PER_TASK 5e-6
double sim_time_limit_s(void);
/* Refuses (1, err code 1) a step this machine cannot simulate, before any
 * of it is built: its estimate (in *size) passes the memory above, with
 * extra_bytes_per_task for what the caller makes of each task (a JSON
 * document: SIM_JSON_BYTES_PER_TASK), or at SIM_MIN_S_PER_TASK plus
 * extra_s_per_task a task passes limit_s, or it has more tasks than the
 * simulator counts (2^30). The message names the network, the GPU count,
 * the tasks and both estimates. 0: go on. */
int sim_refuse_too_large(const cost_model *m, const int *config_index, double extra_bytes_per_task,
                         double extra_s_per_task, double limit_s, sim_size *size, lw_error *err);

/* Summaries (search, compare, scale, the TUI's footer) simulate steps of up
 * to this many tasks, to stay quick; a model-parallel step on 64 GPUs has
 * most of a million pieces, and `simulate` still runs it. */
#define SIM_SUMMARY_MAX_TASKS 100000L
/* The simulated step (overlap full, one bucket per layer) of a strategy:
 * ms, or NaN when its task graph has over max_tasks tasks (0: no limit). */
double sim_step_ms(const cost_model *m, const int *config_index, long max_tasks);

const char *sim_kind_name(sim_kind k);       /* "forward", "backward-data", ... */
const char *sim_overlap_name(sim_overlap o); /* "none", "full" */
int sim_overlap_from_name(const char *s);    /* -1 if unknown */
/* "gpu 3", "link 0->4", "nic node 1 out 0" */
void sim_resource_name(const sim_resource *r, char *buf, size_t n);
/* The resource a task is listed under: its GPU, its link, or for a sync
 * its first resource. */
int sim_task_resource(const sim_result *s, int task);

/* The critical path grouped into runs of the same layer and kind. */
typedef struct sim_segment {
    int layer;
    sim_kind kind;
    double ms;
} sim_segment;
/* Fills up to max segments (may be NULL to count); returns how many. */
int sim_critical_segments(const sim_result *s, sim_segment *out, int max);

/* The "layerwise-sim/1" document (caller frees). strategy names where the
 * configs came from ("optimum", "data", a file name). */
char *sim_to_json(const sim_result *s, const cost_model *m, const char *strategy);
/* Chrome trace-event JSON (Perfetto, chrome://tracing): one pid per cluster
 * node, one tid per GPU, link and NIC, complete events in microseconds.
 * 0, or -1 with err set when writing fails. */
int sim_write_trace(FILE *f, const sim_result *s, const cost_model *m, lw_error *err);
/* The same trace written to path by lw_write_file_atomic's rules. */
int sim_save_trace(const char *path, const sim_result *s, const cost_model *m, lw_error *err);

#endif
