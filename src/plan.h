/*
 * plan: one what-if setting end to end — a network, a cluster (with any
 * what-if edits), a GPU count and a batch — its cost model, the search
 * result and the optimal strategy's evaluation. The CLI and the TUI both
 * drive the engine through it.
 *
 * plan_open takes and owns the network, cluster and profile; plan_apply
 * applies a what-if (a plan_change: GPU count, batch, cluster, sync, pins)
 * and either commits the new model and optimum or leaves the plan exactly
 * as it was. A plan owns everything it points to; plan_free releases it all.
 *
 * A plan is opaque to the front ends: they read it through the accessors
 * below (plan_read.c) and change it only through plan_apply,
 * plan_set_cancel and the prefetch calls.
 */
#ifndef LW_PLAN_H
#define LW_PLAN_H

#include "blocks.h"
#include "data.h"
#include "memsearch.h"
#include "refine.h"
#include "strategy.h"

#define DEFAULT_BATCH_PER_GPU 32
/* The largest batch per GPU a setting takes (the global batch: COST_MAX_BATCH). */
#define PLAN_MAX_BATCH_PER_GPU 1000000L

/* Pipeline parallelism (pipeline.h, issue 35); all zero: none, the plan
 * exactly as without it. */
typedef struct plan_pipe_settings {
    int stages;              /* p; 0 or 1: not pipelined */
    int microbatches;        /* m; 0: the count the search picks (pipe_options.microbatches) */
    int schedule;            /* 0: the default (1F1B); else 1 + a pipe_schedule (plan_schedule_from_name) */
    int vp;                  /* interleaved: virtual stages per group; 0: 2 interleaved, else 1 */
    int megatron;            /* non-zero: Megatron-LM's plan of p equal stages (pipe_megatron), not the search */
    int tp;                  /* megatron: its tensor-parallel degree T (megatron_options.tp; 0: the default) */
} plan_pipe_settings;

typedef struct plan_settings {
    int gpus;                /* 0: all of the cluster's */
    long batch_per_gpu;      /* used when global_batch is 0 */
    long global_batch;       /* > 0: fixed global batch */
    int no_fold;             /* non-zero: the paper's Algorithm 1 only, no folds (search_options.fold) */
} plan_settings;

/* The memory side of a setting (all zero: the defaults). */
typedef struct plan_memory_settings {
    double limit;            /* bytes per GPU: 0 the cluster's GPU memory, < 0 none (the paper's search) */
    optimizer_kind optimizer;
    double time_s;           /* time budget of the search under the limit; 0: PLAN_MEMSEARCH_TIME_S */
} plan_memory_settings;

#define PLAN_MEMSEARCH_TIME_S 30.0

/* What the search under the memory limit found for the plan's optimum. */
typedef struct plan_memory {
    double limit_bytes;      /* per GPU, workspace included; +inf: none */
    int constrained;         /* the paper's optimum did not fit, so the memory search ran */
    int fits;                /* best fits the limit */
    int proven_optimal;      /* best is the fastest strategy that fits (or the limit is off) */
    double lower_bound_ms;   /* no fitting strategy is faster; +inf when none fits */
    double min_peak_bytes;   /* nothing fits: the smallest peak per GPU found (workspace included) */
    double min_peak_lower;   /* and a proven lower bound on it (equal when proven) */
    long subproblems, searches;
    double ms;
    int *unconstrained;      /* [n_layers] the paper's optimum (no memory limit) */
    double unconstrained_ms, unconstrained_peak;
} plan_memory;

/* A plan is opaque outside the engine (its definition: plan_internal.h,
 * for src/plan*.c and the tests): front ends read it through the
 * accessors below and change it only through plan_apply, plan_set_cancel
 * and the prefetch calls. */
typedef struct plan plan;

/* How a plan is opened (all zero but set: a one-shot plan, searched at
 * once, memory settings the defaults). */
typedef struct plan_options {
    plan_settings set;
    plan_memory_settings mem;    /* all zero: the defaults */
    /* called during a long final step, so that it can be shown (the CLI on
     * a terminal); NULL: none */
    search_progress_fn progress;
    void *progress_user;
    /* an interactive front end (the TUI), where what-ifs follow: what they
     * reuse, the counts of its models' transfers, is kept from the first
     * model on, on the prefetch worker after each answer (plan_counts_wait:
     * about 60% more build time, and memory, which one-shot CLI commands
     * do not pay) */
    int whatifs;
    /* opening gives up ("cancelled", NULL) once *cancel is raised (NULL:
     * not cancellable; plan_set_cancel for the what-ifs after) */
    atomic_int *cancel;
    /* a plan for evaluating given strategies only: its model has no tables
     * (cost_model_open: any shipped network at COST_EVAL_MAX_GPUS in well
     * under a second) and it runs no search (cg, sr NULL; best all zero,
     * best_eval empty; mem gives the optimizer the memory figures count).
     * plan_apply keeps it so for new settings, a cluster or a sync scheme;
     * pins, memory settings and plan_search turn it into a full plan. */
    int unsearched;
    /* stages > 1: the plan also keeps the pipeline (plan_stage_count) */
    plan_pipe_settings pipe;
} plan_options;

/* A plan for net on cl (prof may be NULL) as o says: its model built and
 * searched (unless o->unsearched). Takes ownership of net, cl and prof
 * (even on failure: NULL with err set). */
plan *plan_open(network *net, cluster *cl, profile *prof, const plan_options *o, lw_error *err);
void plan_free(plan *p);

/* The most GPUs at which what searches on the side searches by itself:
 * compare and scale (above: the baselines alone), eval's comparison line
 * (EVAL_SEARCH_MAX_GPUS, lower), the TUI opened without a count on a larger
 * cluster, the prefetcher's builds ahead. A search above it takes tens of
 * seconds (VGG-16 and ResNet-50 at 512 GPUs: 7 and 10 s on the development
 * machine) to minutes; `search` (and fit, costs, export) take counts up to
 * COST_MAX_GPUS, refused up front where the tables would not fit the
 * machine's time or memory. */
#define PLAN_AUTO_SEARCH_MAX_GPUS 256

/* Builds the tables and searches (nothing to do for a plan that has an
 * optimum). 0 on success; on failure the plan stays unsearched. */
int plan_search(plan *p, lw_error *err);
/* A plan's search keeps no step tables (search_options.keep_tables 0:
 * less memory and time); this searches its graph again keeping them, for
 * the stepper and a diagram of a step, and gives them to p->sr, which
 * stays where it is (search_keep_tables). 0 (also where they are kept
 * already or the plan is unsearched), -1 with err set where memory ran
 * out (the plan's result stays as it was). */
int plan_step_tables(plan *p, lw_error *err);

/* An interactive plan (plan_options.whatifs) answers a what-if that
 * computes transfer entries (its first model, more GPUs, a batch some
 * sample degree does not divide) without keeping their counts, and has
 * the prefetch worker build the same model again keeping them; the next
 * what-if adopts them, waiting for them if they are not done yet. This
 * waits for them now: 1 when the plan's model keeps counts (for tests and
 * the benchmark), 0 where it keeps none (a one-shot plan, too many to
 * keep, a cancelled build). */
int plan_counts_wait(plan *p);
/* A what-if on a model whose counts are still being kept (on the worker):
 * whether waiting for them is expected to answer sooner than giving them
 * up and answering as that model was answered (computing its entries
 * again without counts: about answer_s, the model's own build time).
 * total: the entries the model evaluated (the job evaluates the same
 * ones, keeping their counts); done: those the job has evaluated in
 * ran_s seconds. Waiting costs the rest at the job's rate so far; a job
 * not started (done 0) has every entry ahead of it, each slower than the
 * answer's: not worth waiting for. */
int plan_counts_worth_waiting(long total, long done, double ran_s, double answer_s);
/* plan_counts_wait, then waits for the background worker's thread to
 * end where it has nothing else queued (builds ahead, a probe): 1 where
 * none of the plan's threads runs afterwards, 0 where the worker carries
 * on. Before a fork (the scale screen's worker process): a lock another
 * thread holds at the fork stays held in the child. */
int plan_background_join(plan *p);

/* ---- what-ifs --------------------------------------------------------- */

/* One layer's pin: config is an index into the layer's configs in the
 * plan's current model, or -1 to unpin it. */
typedef struct plan_pin {
    int layer;
    int config;
} plan_pin;

/* A what-if as a value. Every field's zero means "keep", so a change is
 * written `plan_change c = {.set = &s}` and a new kind of change is a new
 * field whose zero keeps the plan as it is (plus its handling in
 * plan_apply). */
typedef struct plan_change {
    const plan_settings *set; /* new run settings (GPU count, batch, ...): the cost model is rebuilt */
    const cluster *cl;        /* a new cluster, copied (an edited clone of p->cl): the cost model is rebuilt */
    int sync_set;             /* 1: switch the sync scheme to sync (alone: only t_s is recomputed) */
    sync_scheme sync;
    int clear_pins;           /* 1: unpin every layer, before the pins below */
    int n_pins;               /* pins to set or clear (alone: only the search runs again) */
    const plan_pin *pins;     /* config -1 unpins the layer (and drops a pin on hold) */
    const plan_memory_settings *mem; /* new memory settings (alone: only the search runs again) */
    /* [n_layers] every layer's pin as a config, found in the new setting's
     * model (deg all 0: not pinned); replaces the pins above. For putting
     * back pins the current model may lack (plan_state_change). */
    const config *pin_configs;
    /* new pipeline settings (alone: only the pipeline is computed again) */
    const plan_pipe_settings *pipe;
} plan_change;

/* Applies c: recomputes what it touches (the cost model for new settings
 * or a new cluster, the t_s tables for a sync switch, only the search for
 * pins; pins are carried over to a new model by config, and a config the
 * new setting lacks holds its pin until a setting has it again:
 * plan_pin_held) and commits the new model and optimum,
 * returning 0. On failure (a bad change: code 2; a search over the limits
 * or cancelled through p->cancel: code 1) it returns non-zero with err set
 * and the plan is exactly as it was: the previous settings, cluster, pins,
 * model and optimum. A change that changes nothing returns 0 at once. */
int plan_apply(plan *p, const plan_change *c, lw_error *err);

/* ---- what-if states, for undo ------------------------------------------ */

/* Everything plan_apply changes, as one value: the run settings, the
 * cluster (with its sync scheme, precision and edits), the memory settings
 * and the pins, as configs so that they outlive the model they were made
 * in (those on hold included). Not the model or the optimum: plan_apply computes those again. */
typedef struct plan_state {
    plan_settings set;
    cluster *cl;             /* a copy, owned */
    plan_memory_settings mem;
    int n_layers;
    config *pins;            /* [n_layers] owned; deg all 0: the layer is not pinned */
    plan_pipe_settings pipe;
} plan_state;

/* The plan's state now (plan_state_free releases the copies). */
plan_state plan_state_get(const plan *p);
void plan_state_free(plan_state *s);
/* 1 when the plan is in state s. */
int plan_state_is(const plan *p, const plan_state *s);
/* The change that puts the plan back into state s (a state of the same
 * network), naming only what differs, so that a pin alone runs only the
 * search. It points into s, which must outlive the plan_apply. */
plan_change plan_state_change(const plan *p, const plan_state *s);

/* p->cancel for the plan_apply calls to come (NULL: not cancellable). */
void plan_set_cancel(plan *p, atomic_int *cancel);
/* How many layers are pinned. */
int plan_pin_count(const plan *p);
/* Layer li's pin is on hold: asked for, but its config is not one of the
 * current setting's (a GPU count that lacks it). plan_apply keeps it and
 * pins it again, within the what-if's own search, on a setting that has
 * the config; unpinning the layer (config -1) or clear_pins drops it. */
int plan_pin_held(const plan *p, int li);
/* How many pins are on hold. */
int plan_pins_held(const plan *p);
/* Layer li's pin as asked for (held or not), or NULL where it has none. */
const config *plan_pin_config(const plan *p, int li);
/* How many searches the plan has run (a what-if runs one, pins on hold
 * included): for tests. */
long plan_search_count(const plan *p);

/* The constraints the plan's search had, for refining its optimum under
 * the simulator (refine.h): its pins and its memory limit (+inf: none).
 * Points into p: valid until the next plan_apply. */
refine_bounds plan_refine_bounds(const plan *p);

/* A setting to build ahead: run settings, and a cluster (NULL: the plan's
 * own; otherwise an edited copy, which plan_prefetch_list clones). */
typedef struct plan_prefetch_item {
    plan_settings set;
    const cluster *cl;
} plan_prefetch_item;

/* Builds, on a background thread at the lowest priority and one after
 * another in the order given, the cost tables and optimum of up to
 * PLAN_PREFETCH_MAX other settings (the ones the next what-if keys would
 * ask for), so that a later plan_apply to exactly one of them (GPU count,
 * batch and cluster equal) takes its result instead of recomputing, waiting
 * for it if it is being built. A new list keeps what it names that is built
 * or being built, and cancels the rest. */
#define PLAN_PREFETCH_MAX 4 /* prefetch.h's PREFETCH_MAX */
void plan_prefetch_list(plan *p, const plan_prefetch_item *items, int n);
/* Settings still queued or being built in the background. */
int plan_prefetch_pending(plan *p);
/* plan_prefetch_list of one setting on the plan's cluster. */
void plan_prefetch(plan *p, plan_settings next);

/* Global batch for a setting. */
long plan_batch_for(const plan_settings *s, int gpus);

/* Best total when layer li is forced to config k (all else optimal, the
 * other layers' pins holding; li's own pin is ignored), and that strategy
 * (n_layers, may be NULL). For "why not this config?". */
double plan_cost_with_pin(const plan *p, int li, int k, int *config_out);

/* The same for every config of layer li at once (li asked about as if it
 * were free, the other pins as they stand): totals[k] for each of its configs, +inf where no finite
 * total exists, from one search and its min-marginals (search_min_marginals)
 * instead of one search per config. 0, or -1 where the final step needed
 * variable elimination: ask plan_cost_with_pin per config then. */
int plan_whynot_totals(const plan *p, int li, double *totals);

/* plan_whynot_totals, or where it cannot (-1), plan_cost_with_pin for
 * each config: totals[k] for every config of layer li. */
void plan_whynot_all(const plan *p, int li, double *totals);
/* plan_cost_with_pin and plan_whynot_all for the paper's search: memory
 * not limited (Eq. 1 alone; a strategy that does not fit counts too). A
 * question under a memory limit can take the memory search's time budget
 * per config; these take about one search each. */
double plan_cost_with_pin_eq1(const plan *p, int li, int k, int *config_out);
void plan_whynot_all_eq1(const plan *p, int li, double *totals);
/* plan_whynot_all_eq1 that gives up (-1, totals unset) soon after *cancel
 * is raised (NULL: never; explain on a thread); 0 when done. */
int plan_whynot_all_eq1_cancellable(const plan *p, int li, double *totals, const atomic_int *cancel);
/* plan_cost_with_pin with the search under the memory limit bounded by
 * counts, not time: the sweep's labels (PLAN_EXPLAIN_MEM_LABELS, about a
 * second of a loaded 2-core host on VGG-16's hardest), branch and bound's
 * relaxed searches (PLAN_EXPLAIN_MEM_SEARCHES); where they run out, the
 * fastest fitting strategy it found, +inf if none. For explain, which asks
 * it of many configs and, through plan_probe_pair, of many settings: the
 * same question gets the same answer on any machine and under any load. */
#define PLAN_EXPLAIN_MEM_LABELS 300000
#define PLAN_EXPLAIN_MEM_SEARCHES 4
double plan_cost_with_pin_within(const plan *p, int li, int k, int *config_out);
/* A config of one layer with its best total: the why-not lists' rows. */
typedef struct plan_ranked {
    int k;
    double total;
} plan_ranked;
/* totals[0..n-1] (from plan_whynot_all*) as rows, least total first, ties
 * by config index (+inf last); the caller frees the array. */
plan_ranked *plan_rank_configs(const double *totals, int n);
/* The optimum with no layer pinned (within the memory limit, as the plan
 * searches), in config_out (n_layers): what the plan's pins cost. 0, or -1
 * when no finite strategy exists. */
int plan_unpinned_best(const plan *p, int *config_out);

/* Whether the "why not?" questions of explain are asked under the memory
 * limit: it is finite and the plan's optimum fits it (else the plan keeps
 * the paper's optimum, and they are asked as it: memory not limited). */
int plan_limit_applies(const plan *p);

/* The same question asked of another setting, without changing the plan
 * and, as plan_limit_applies says, within the memory limit (plan_cost_with_pin's)
 * with plan_cost_with_pin_within's bounded search, or with memory not limited
 * (plan_whynot_all_eq1's): the best totals
 * with layer li forced to each of two configs (given by value; the other
 * pins kept by config, as plan_apply carries them), on a
 * cost model built for run settings set (NULL: the plan's) and cluster cl
 * (NULL: the plan's). totals[i] is +inf where that setting lacks config i
 * or no finite total exists. 0, or -1 with err set when the model cannot
 * be built (a bad setting: code 2; too big or cancelled: code 1). For
 * "at what bandwidth or batch would the runner-up win?" (explain.h). */
int plan_probe_pair(const plan *p, const plan_settings *set, const cluster *cl, int li, const config two[2],
                    double totals[2], lw_error *err);

/* plan_probe_pair on the prefetcher's background thread (the one that
 * builds what-if settings ahead; a probe goes before them): posts the
 * question and returns at once, cancelling any probe posted before. 0, or
 * -1 with err set for a bad setting (nothing posted). */
int plan_probe_post(plan *p, const plan_settings *set, const cluster *cl, int li, const config two[2], lw_error *err);
/* The posted probe: 0 while it runs; 1 when done, with totals (and the
 * probe forgotten); -1 when it failed (err set) or none is posted. */
int plan_probe_poll(plan *p, double totals[2], lw_error *err);
/* Cancels the posted probe, if any (its build stops at the next check). */
void plan_probe_cancel(plan *p);

const char *plan_final_method_name(const plan *p);

/* The memory limit a setting applies: bytes per GPU, +inf for none. */
double plan_memory_limit(const plan_memory_settings *s, const cluster *cl);
/* The memory table of a cost model for memsearch: per layer, config and
 * task, the bytes of cost_memory_task (the workspace left out). */
mem_table *plan_mem_table(const cost_model *m);
/* The smallest per-GPU peak (workspace included) of any strategy on the
 * plan's current model, ignoring time (exact unless time_s > 0 runs out;
 * *lower then a proven bound). Fills config (n_layers) if non-NULL. */
double plan_min_peak(const plan *p, double time_s, int *cfg, double *lower);

/* ---- a plan's parts ------------------------------------------------------
 * (plan_read.c) What a plan holds, read-only; pointers into the plan are
 * valid until the next plan_apply (net and prof: until plan_free). */
const network *plan_net(const plan *p);
const cluster *plan_cluster(const plan *p);       /* with the what-if edits, sync scheme and precision */
const profile *plan_profile(const plan *p);       /* NULL: none */
const plan_settings *plan_run_settings(const plan *p);
const plan_memory_settings *plan_memory_settings_of(const plan *p);
int plan_gpus(const plan *p);                     /* the GPU count of the model */
long plan_batch(const plan *p);                   /* its global batch */
/* The search's result; NULL for an unsearched plan (no optimum). */
const search_result *plan_search_result(const plan *p);
const cost_graph *plan_graph(const plan *p);      /* the graph it searched; NULL unsearched */
const int *plan_best(const plan *p);              /* [n_layers] the optimum's config indices */
const strategy_eval *plan_best_eval(const plan *p);
const plan_memory *plan_memory_of(const plan *p); /* how the optimum relates to the memory limit */
const int *plan_pinned(const plan *p);            /* [n_layers] -1 or the config a layer is pinned to */
double plan_search_ms(const plan *p);             /* the last search's time */
int plan_from_prefetch(const plan *p);            /* the last model change took a prefetched model */
int plan_repriced(const plan *p);                 /* and re-priced the transfers (1 all, 2 some; 0 built) */
int plan_counts_given_up(const plan *p);
atomic_int *plan_cancel_flag(const plan *p);      /* plan_set_cancel's, NULL: none */
int plan_unsearched(const plan *p);               /* plan_options.unsearched, not searched since */

/* ---- reading a plan: what the front ends show ---------------------------
 * (plan_read.c) Everything a screen shows of the plan's model comes through
 * these, so that no front end reads the cost model's fields. Layers are
 * indices into p->net, configs indices into the layer's configs in the
 * plan's current model (valid until the next plan_apply); a strategy is an
 * array of n_layers config indices. */

/* The plan has a cost model (a plan made by plan_open always has). */
int plan_has_model(const plan *p);
/* The runs of repeated blocks of the plan's network (blocks.h), for the
 * screens that fold or group them: how many, at most max written to out. */
int plan_blocks(const plan *p, net_block_run *out, int max);
int plan_n_configs(const plan *p, int li);
/* Config k of layer li (points into the model: valid until the next plan_apply). */
const config *plan_config(const plan *p, int li, int k);
/* Config c of layer li as text, with the layer's letters (s for a
 * sequence layer's sequence; config_format_layer). */
void plan_format_config(const plan *p, int li, const config *c, char *buf, size_t n);
/* The index of a config equal to c among layer li's, or -1. */
int plan_config_index(const plan *p, int li, const config *c);
/* Layer li's t_c and t_s in config k, ms (from the tables where built). */
double plan_t_c(const plan *p, int li, int k);
double plan_t_s(const plan *p, int li, int k);
/* How long the model's build took, ms (0 without a model). */
double plan_build_ms(const plan *p);
/* The model's fixed allowance on every GPU that hosts a task, bytes. */
double plan_workspace_bytes(const plan *p);
/* The precision the model was built at, and the GPU's peak TFLOPS at it. */
precision plan_precision(const plan *p);
double plan_peak_tflops(const plan *p);
/* The model's edges (one per consumer and input slot): edge e runs from
 * layer *from to layer *to. */
int plan_n_edges(const plan *p);
void plan_edge(const plan *p, int e, int *from, int *to);
/* Edge e's t_x (ms) from config i of its producer to each config of its
 * consumer (plan_n_configs of it): a row of the model's tables; NULL
 * without tables (an unsearched plan). */
const double *plan_tx_row(const plan *p, int e, int i);
/* The t_x entries the model's tables hold (computed and reused). */
long plan_tx_entries(const plan *p);
/* Bytes of layer li's output over the whole batch at the model's precision
 * (li < 0: every layer's). */
double plan_activation_bytes(const plan *p, int li);
/* Bytes task `task` of layer li in config c keeps on its GPU (cost_memory_task). */
double plan_task_memory(const plan *p, int li, const config *c, int task);
/* The fullest GPU's bytes under strategy cfg, workspace included (per_gpu,
 * p->gpus entries, may be NULL): cost_memory. */
double plan_peak_memory(const plan *p, const int *cfg, double *per_gpu);
/* Strategy cfg evaluated on the plan's model (strategy_eval_free releases ev). */
void plan_evaluate(const plan *p, const int *cfg, strategy_eval *ev);
/* A baseline strategy on the plan's model, into cfg. */
void plan_baseline(const plan *p, baseline_kind kind, int *cfg);
/* A strategy file read and checked against the plan's model into cfg: 0,
 * or -1 with err set (code 2: a bad file, or a pipelined one, which has no
 * one-stage cfg). */
int plan_strategy_file(const plan *p, const char *path, int *cfg, lw_error *err);
/* Strategy cfg with its evaluation as a "layerwise-strategy" document
 * (algorithm: how it was found). Caller frees. */
char *plan_strategy_json(const plan *p, const int *cfg, const strategy_eval *ev, const char *algorithm);
/* The plan's pipeline (plan_stage_count > 1) as the layerwise-strategy/2
 * document `search --pp --json` writes ("algorithm" "pipeline-dp", or
 * "megatron" for Megatron-LM's stages), which `eval -s` and `simulate -s`
 * read back; NULL when the plan is not pipelined. Caller frees. */
char *plan_pipeline_json(const plan *p);
/* The strategy a front end exports, written to path through a temporary
 * renamed into place (lw_write_file_atomic): a pipelined plan's pipeline
 * (plan_pipeline_json; cfg, ev and algorithm unused), else strategy cfg
 * (plan_strategy_json). *format (may be NULL) gets the document's format.
 * 0, or -1 with err set. */
int plan_write_strategy(const plan *p, const int *cfg, const strategy_eval *ev, const char *algorithm,
                        const char *path, const char **format, lw_error *err);
/* Strategy cfg simulated on the plan's model (sim_run; sim_result_free). */
sim_result *plan_simulate(const plan *p, const int *cfg, const sim_options *o);
/* refine_begin on the plan's model (which must outlive the search: a
 * plan_apply ends it first). */
refine_search *plan_refine_begin(const plan *p, const int *start, const refine_bounds *rb, unsigned long long seed);
/* The model, for engine calls that take one (sim_save_trace, draw_sim_step);
 * front ends read none of its fields. */
const cost_model *plan_model(const plan *p);
/* Layers other than li whose config in strategy cfg differs from the
 * plan's optimum (the why-not and explain screens' "others"). */
int plan_layers_changed(const plan *p, int li, const int *cfg);
/* Layer li's t_x in (ms) in its config k: its incoming edges from its
 * producers' configs in strategy cfg. */
double plan_tx_in(const plan *p, int li, int k, const int *cfg);

/* ---- pipelines (settings' stages > 1) ---------------------------------------
 *
 * A plan whose pipeline settings (plan_options.pipe, plan_change.pipe)
 * ask for p > 1 stages keeps, beside its one-stage
 * optimum (plan_best and the rest above, unchanged), the pipeline that
 * pipe_search (or pipe_megatron) finds for the same network, cluster, GPU
 * count, batch and memory settings; plan_apply computes it again for every
 * change that moves it (pipeline settings, run settings, cluster, sync
 * scheme, memory settings:
 * not pins, which hold in the one-stage plan only) and fails, leaving the
 * plan as it was, where the pipeline cannot be had (exit code 2 for a
 * request pipe_search refuses). Not pipelined, these read as one stage:
 * the whole network on all the plan's GPUs. */

/* 1 + the pipe_schedule named s ("gpipe", "1f1b", "interleaved"): a
 * plan_pipe_settings.schedule; -1 if unknown. */
int plan_schedule_from_name(const char *s);
/* The name of a plan_pipe_settings.schedule (0: the default's, "1f1b"). */
const char *plan_schedule_name(int schedule);

/* The stage count: 1 when not pipelined; interleaved, the p v chunks
 * (stage i runs on GPU group i mod p, whose GPUs stage i mod p names). */
int plan_stage_count(const plan *p);
/* The stage layer li sits in (0 when not pipelined); -1 for no such layer. */
int plan_stage_of(const plan *p, int li);

/* One stage, by value. */
typedef struct plan_stage_summary {
    int first, last;         /* layers [first, last) in the network's order */
    int gpu0, gpus;          /* GPUs gpu0 .. gpu0 + gpus - 1 */
    double t_ms;             /* t_i = f_i + p2p_ms: per micro-batch (not pipelined: the step, Eq. 1) */
    double f_ms;             /* Eq. 1 of the stage's layers at the micro-batch */
    double p2p_ms;           /* the sends to the next stage and back (0 for the last) */
    double held;             /* micro-batches of activations the schedule keeps on the group */
    double memory_bytes;     /* the fullest GPU of the group */
} plan_stage_summary;
/* Stage i into *s: 0, or -1 (s untouched) where there is no stage i. */
int plan_stage_info(const plan *p, int i, plan_stage_summary *s);

/* The pipeline as a whole, by value. */
typedef struct plan_pipeline_summary {
    int stages, microbatches, vp;
    int schedule;            /* a pipe_schedule; -1 when not pipelined */
    const char *schedule_name; /* static text; "" when not pipelined */
    int megatron;            /* Megatron-LM's plan, not the search's */
    long microbatch;         /* samples per micro-batch (the batch when not pipelined) */
    double step_ms;          /* T (not pipelined: the one-stage optimum's Eq. 1 total) */
    double bubble_fraction;  /* the mean idle share of a GPU's step (0 when not pipelined) */
    double peak_memory_bytes;
    int fits;                /* within the memory limit */
} plan_pipeline_summary;
/* Fills *s; returns 1 when the plan is pipelined, 0 otherwise. */
int plan_pipeline_info(const plan *p, plan_pipeline_summary *s);

/* Layer li's config in its stage (on the stage's GPUs at the
 * micro-batch), into *c (the plan's optimum's config when not
 * pipelined), and its t_c there in ms (may be NULL). 0, or -1 for no such
 * layer. */
int plan_stage_layer_config(const plan *p, int li, config *c, double *t_c_ms);

/* Layer li's figures in its stage (plan_stage_layer_figures). */
typedef struct plan_stage_layer {
    int stage;
    config c;                /* on the stage's group (plan_stage_layer_config) */
    double t_c_ms, t_s_ms;   /* on the stage's model at the micro-batch; t_s once per step */
    double t_x_ms;           /* its incoming edges in the stage's graph (the input's chosen layout for the first) */
    int gpu0, gpus;          /* its tasks run on GPUs gpu0 .. gpu0 + gpus - 1 (the stage's gpu0 on) */
} plan_stage_layer;
/* Layer li's config, t_c, t_s, t_x and GPUs in its stage: per stage, the
 * layers' t_c, t_x and t_s sum to pipeline.h's compute_ms, transfer_ms and
 * sync_ms, and f_i = sum t_c + t_x + t_s / m. Not pipelined: the plan's
 * optimum's (its best_eval's layer terms, on GPUs from 0). 0, or -1 for no
 * such layer. */
int plan_stage_layer_figures(const plan *p, int li, plan_stage_layer *f);

/* Why layer li sits in its stage, briefly (pipe_explain_layer): its stage,
 * t_i, the step and what moving each of the stage's boundaries one allowed
 * cut earlier or later would make of the step, into buf. 0, or -1 (buf
 * holds the reason) when the plan is not pipelined or a move fails. */
int plan_stage_explain(const plan *p, int li, char *buf, size_t n);

/* The pipelined step simulated micro-batch by micro-batch under its
 * schedule (pipe_plan_simulate; pipeline.h's pipe_sim, which
 * pipe_sim_free releases): NULL when the plan is not pipelined. */
struct pipe_sim;
struct pipe_sim *plan_pipe_simulate(const plan *p);
/* Its Chrome trace (pipe_sim_trace: an event per GPU of each stage's
 * group, the micro-batch in each name); the caller frees. */
char *plan_pipe_trace(const plan *p, const struct pipe_sim *r);

/* The pipeline settings the plan has (all zero: none). */
const plan_pipe_settings *plan_pipe_settings_of(const plan *p);

/* The pipeline of a scaling row (scale --pp, the Scale screen of a
 * pipelined session): pipe_search's optimum (or Megatron-LM's stages,
 * settings' megatron) for the row's setting, or why there is none. */
typedef struct plan_scale_pipe {
    int stages;              /* P asked for; 0: no pipeline asked for (the rest all zero) */
    int found;               /* 1: the figures below; 0: none, why says why */
    int megatron;            /* Megatron-LM's stages, not the search's */
    int microbatches, vp;
    int schedule;            /* a pipe_schedule (plan_schedule_name takes 1 + it) */
    int gpus_used;           /* the pipeline's G */
    double total_ms;         /* T: Eq. 1 per stage, the pipelined step (estimator "eq1") */
    double images_per_s;     /* the batch over T */
    double sim_ips;          /* images/s of the step simulated micro-batch by micro-batch (pipe_plan_simulate) */
    double model_flops, tflops, mfu; /* at T on the row's GPU count (strategy_achieved) */
    double bubble_fraction, peak_memory_bytes;
    int fits;
    char why[256];           /* found 0: P does not divide the count, stages over PLAN_AUTO_SEARCH_MAX_GPUS, a refusal */
} plan_scale_pipe;

/* The pipeline ps asks for (ps->stages > 1; else r->stages 0 and nothing
 * else) at the plan's own GPU count, batch, cluster and memory settings:
 * P not dividing the count and stages of more than
 * PLAN_AUTO_SEARCH_MAX_GPUS GPUs are refused up front with their reason,
 * as is whatever pipe_search refuses. Reads p only. */
void plan_scale_pipe_compute(const plan *p, const plan_pipe_settings *ps, plan_scale_pipe *r);

/* One row of the scaling view: the four strategies compared (data, model,
 * OWT, layer-wise: STRATEGY_COMPARED) at `gpus` GPUs of the plan's cluster,
 * with the plan's batch rule; and the pipeline the plan's pipeline
 * settings ask for (pipe; pipe.stages 0 when the plan is not pipelined). */
typedef struct plan_scale_row {
    int gpus;
    double x;                             /* a sweep's value of its axis (plan_sweep_row_compute) */
    double ips[4], bytes[4], total_ms[4]; /* data, model, owt, layer-wise; Eq. 1 */
    double sim_ips[4];                    /* images/s of the simulated step; NaN over SIM_SUMMARY_MAX_TASKS tasks */
    double mfu[4];                        /* model FLOPs utilisation of the Eq. 1 step (strategy_eval_mfu), 0..1 */
    plan_scale_pipe pipe;                 /* the pipeline at the row's setting (plan_scale_pipe_compute's) */
} plan_scale_row;
/* Fills row (its gpus set by the caller): the plan's own model at its own
 * count, else one built for row->gpus (one without tables above
 * PLAN_AUTO_SEARCH_MAX_GPUS: the baselines alone, layer-wise NaN, as the
 * CLI's scale), and the pipeline at that count where the plan is
 * pipelined (row->pipe). Figures that fail stay NaN (err set where a model
 * could not be built). Reads p only: safe in a forked worker. */
void plan_scale_row_compute(const plan *p, plan_scale_row *row, lw_error *err);
/* The planner's sweeps: one parameter of the setting varied, the rest as
 * the plan has it: the GPU count (the scaling view), the inter-node
 * bandwidth (GB/s), the batch per GPU, the GPUs per node (the cluster's
 * nodes as many as keep its GPU count). */
typedef enum { PLAN_SWEEP_GPUS, PLAN_SWEEP_INTER_BW, PLAN_SWEEP_BATCH, PLAN_SWEEP_GPUS_PER_NODE, PLAN_SWEEP__COUNT } plan_sweep_axis;
/* Fills row for the value row->x of axis: at the plan's GPU count (the
 * GPU axis: x GPUs, as plan_scale_row_compute), a cost model built for
 * the setting so changed, the four strategies searched and evaluated, and
 * where the plan is pipelined its pipeline at that setting (row->pipe).
 * Reads p only: safe in a forked worker. */
void plan_sweep_row_compute(const plan *p, plan_sweep_axis axis, plan_scale_row *row, lw_error *err);

/* "GPUs needed for X images/s": the index of the row with the fewest GPUs
 * among rows[0..n) at which strategy s (0 data, 1 model, 2 OWT, 3
 * layer-wise, 4 the rows' pipeline) reaches ips images/s (simulated:
 * sim_ips, else Eq. 1's); -1 when none does. */
int plan_scale_gpus_for(const plan_scale_row *rows, int n, int s, double ips, int simulated);

#endif
