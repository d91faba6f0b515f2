/*
 * explain: why one layer of a plan's strategy has the config it has, in the
 * terms of Eq. 1. For the layer: its weights and activations; for the
 * chosen config and the best few alternatives (each with every other layer
 * re-optimised, as the plan's search would: within the memory limit when
 * the plan's optimum fits one, plan_limit_applies; else memory not
 * limited, and a strategy over the limit is marked), its t_c, t_s, t_x in and out and the
 * rest of the step; which term decides against the runner-up; which GPUs
 * and nodes it runs on and what that avoids; and the inter-node (or
 * intra-node) bandwidth and the batch at which the runner-up would win,
 * found by a search over the parameter with a new cost model per probe
 * (plan_probe_pair).
 *
 * An explain is a caller-owned value (explain_layer fills it; nothing in it
 * needs freeing); explain_text and explain_json return strings the caller
 * frees. The plan must outlive nothing here: every call takes it again.
 */
#ifndef LW_EXPLAIN_H
#define LW_EXPLAIN_H

#include "plan.h"

#include <stdatomic.h>

#define EXPLAIN_MAX_ALTS 8

/* The terms of Eq. 1 as one layer sees them. */
typedef enum { TERM_TC, TERM_TS, TERM_TX_IN, TERM_TX_OUT, TERM_REST, TERM__COUNT } explain_term;

/* "t_c", "t_s", "t_x in", "t_x out", "rest" */
const char *explain_term_name(explain_term t);

/* The ways to split a layer explain sets the chosen config against: by
 * sample only (n), channel (features, heads) only (c), height/width or
 * sequence only (h, w), contraction only (r); and data parallelism's own
 * config for the layer (n over every GPU the batch allows). */
typedef enum { FAM_SAMPLE, FAM_CHANNEL, FAM_SPATIAL, FAM_CONTRACTION, FAM_DATA, FAM__COUNT } explain_family;

/* The family of config c of layer l: the one whose degrees alone are over
 * 1 (replicas x at 1), or -1 (one task, or a mix). FAM_DATA is never returned. */
int explain_family_of(const config *c);
/* "sample (n)", "channel (c)" (a sequence layer's "features (c)", an
 * attention's "heads (c)"), "height/width" or "sequence (s)",
 * "contraction (r)", "data parallelism". */
const char *explain_family_name(const layer *l, explain_family f);

typedef struct explain_alt {
    int config;                  /* index into the layer's configs */
    const char *role;            /* "chosen", "runner-up", "next best", "best on 1 node", ... */
    double term_ms[TERM__COUNT]; /* the layer's t_c, t_s, t_x in, t_x out; the rest of the step */
    double total_ms;             /* Eq. 1 total of the strategy (the terms' sum) */
    double sync_bytes, in_bytes, out_bytes;
    double tie_ms, tie_bytes;    /* a tied embedding's or lm_head's tie term (cost_tie), within t_x out (the
                                    embedding's) or t_x in (the lm_head's); 0 elsewhere */
    int gpus, nodes;             /* tasks (on GPUs 0..gpus-1) and the nodes they span */
    int changed;                 /* other layers whose config differs from the plan's */
    double peak_bytes;           /* the strategy's memory on its fullest GPU (cost_memory) */
    int fits;                    /* peak_bytes within the plan's memory limit */
    int family;                  /* explain_family_of the config (-1: a mix or one task) */
} explain_alt;

/* "At what value would the runner-up win?" over one parameter. */
typedef enum { CROSS_INTER_BW, CROSS_INTRA_BW, CROSS_BATCH } explain_param;

typedef struct explain_cross {
    explain_param param;
    double now, lo, hi;          /* the current value and the range searched */
    int done, found, failed;
    double value;                /* found: the value nearest to now at which the runner-up is faster */
    double totals[2];            /* found: the chosen's and the runner-up's best totals there */
    int probes;
    char msg[160];               /* failed: why */
    /* search state: outward doubling from now, then bisection */
    int j, phase;                /* phase 0: doubling, 1: bisection */
    double ok, win;              /* bisection bracket: the chosen still wins at ok, the runner-up at win */
    int dir_done[2];             /* doubling went past the range downwards / upwards */
    double prev;                 /* doubling: the value before the one probed */
} explain_cross;

typedef struct explain {
    int layer;
    int pinned;                  /* the layer is pinned: alt 0 is the pin, not the free optimum */
    int n_configs;
    double params, weight_bytes; /* weights and biases; bytes of their fp32 master copy */
    double act_bytes;            /* the layer's output over the whole batch */
    double act_task_bytes;       /* the chosen config's task 0 output tile */
    double mem_task_bytes;       /* what the chosen config's task 0 keeps on its GPU */
    int n_alts;
    explain_alt alt[EXPLAIN_MAX_ALTS]; /* [0] the plan's config, [1] the runner-up (if any) */
    int limited;                 /* the totals are the fastest within the memory limit (plan_limit_applies),
                                    else Eq. 1's with memory not limited */
    int unasked;                 /* configs left out of the ranking under the limit for lack of time */
    int decides;                 /* explain_term that favours alt 0 most over alt 1; -1 with no runner-up,
                                    or one faster than alt 0 (a pin, or the memory limit, holds alt 0) */
    int n_dims;
    explain_alt dim[FAM__COUNT]; /* the best config of each family the layer can split by (dim[i].family; role
                                    "best by ..."), the rest re-optimised as in alt[]; the last, role "data
                                    parallelism", data parallelism's config (family FAM_DATA; it may be the
                                    chosen one). A family with no strategy within the memory limit: its best by
                                    Eq. 1 alone, fits 0 */
    int n_cross;
    explain_cross cross[2];
    int posted;                  /* explain_step_async: a probe is out on the worker */
    int posted_cross;            /* for cross[posted_cross] */
    double posted_value;         /* at this value */
} explain;

/* Seconds the ranking under a memory limit may take (3): configs it has
 * not asked by then are left out of the table and counted (unasked). Tests
 * that check the ranking itself raise it, so a slow machine cannot cut it
 * short; tests of the cut lower it. */
extern double explain_rank_time_s;

/* Fills e for layer li of a searched plan (everything but the crossovers,
 * which explain_step computes: a few searches). 0, or -1 with err set. */
int explain_layer(const plan *p, int li, explain *e, lw_error *err);
/* explain_layer that gives up ("cancelled", code 1) soon after *cancel is
 * raised (NULL: never): the search behind Eq. 1's totals of every config
 * stops, the ranking stops asking; only the min-marginals, once begun
 * (about the search's time again), run to their end. */
int explain_layer_cancellable(const plan *p, int li, explain *e, const atomic_int *cancel, lw_error *err);

/* explain_layer on a thread of its own, for a front end that must stay
 * live (the TUI's explain on Inception-v3 at 64 GPUs takes seconds). The
 * plan is only read, and must not change (plan_apply) nor be freed until
 * explain_job_free has returned. */
typedef struct explain_job explain_job;
/* NULL where no thread could be started (then call explain_layer). */
explain_job *explain_start(const plan *p, int li);
int explain_job_layer(const explain_job *j);
/* 0 while it runs; 1 done, e filled; -1 failed or cancelled (err set:
 * "cancelled"). Never waits. */
int explain_poll(explain_job *j, explain *e, lw_error *err);
/* Raises the job's cancel flag and returns at once. */
void explain_job_cancel(explain_job *j);
int explain_job_cancelled(const explain_job *j);
/* Cancels the job, waits for its thread, frees it (NULL: nothing). */
void explain_job_free(explain_job *j);

/* One probe of the crossover searches (a cost model and a search).
 * Returns 1 while more remain, 0 when all are done. */
int explain_step(const plan *p, explain *e);
/* explain_step for a front end that must stay live: each probe runs on
 * the plan's background worker (plan_probe_post). It takes the answer of
 * the probe out, if done, and posts the next one; never waits. Returns 1
 * while more remain (e->posted: one is out), 0 when all are done. */
int explain_step_async(plan *p, explain *e);
/* Cancels the probe out, if any; explain_step_async asks it again later. */
void explain_cancel(plan *p, explain *e);
/* How many probes are done and (an upper bound) in all, for progress. */
void explain_progress(const explain *e, int *done, int *total);

/* The explanation as text wrapped to width columns (at least 60),
 * lines separated by '\n'. Caller frees. */
char *explain_text(const plan *p, const explain *e, int width);
/* The "layerwise-explain/1" document. Caller frees. */
char *explain_json(const plan *p, const explain *e);

/* ---- the lecture view: for every layer, the weights it would sync split
 * by sample against the activations it would move split by channel ---- */

typedef struct explain_lecture_row {
    int sample_config, channel_config; /* data parallelism's config (by sample over every GPU the batch allows),
                                          the model-parallel baseline's (by channel over every GPU it can) */
    double sync_bytes, sync_ms;        /* in sample_config: the weights synced a step (t_s's bytes), t_s */
    double move_bytes, move_ms;        /* in channel_config, with every layer by channel: the activations moved
                                          into it, forward and backward (t_x in's bytes), t_x in */
    int chosen;                        /* the plan's config (p->best) */
} explain_lecture_row;

/* Fills rows[n_layers] from the data and model baselines evaluated on the
 * plan's model (no search). 0, or -1 with err set (no model). */
int explain_lecture(const plan *p, explain_lecture_row *rows, lw_error *err);

#endif
