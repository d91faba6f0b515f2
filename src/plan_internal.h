/*
 * plan_internal: the definition of struct plan, private to the engine's
 * plan modules (plan.c, plan_read.c) and the white-box tests. Front ends
 * read a plan through plan.h's accessors.
 */
#ifndef LW_PLAN_INTERNAL_H
#define LW_PLAN_INTERNAL_H

#include "plan.h"

struct plan {
    network *net;
    cluster *cl;
    profile *prof;           /* may be NULL */
    plan_settings set;
    plan_memory_settings mset; /* memory limit, optimizer, time budget (plan_change.mem) */
    int gpus;
    long batch;
    cost_model *cm;
    cost_graph *cg;
    search_result *sr;
    int *best;               /* [n_layers] optimal config index */
    strategy_eval best_eval;
    plan_memory mem;         /* how best relates to the memory limit */
    int *pinned;             /* [n_layers] -1 or a config index the layer is forced to */
    config *pin_want;        /* [n_layers] the pins as asked for, by config (deg[0] 0: none): a pin whose
                                config the current model lacks is held (pinned -1) and comes back, in the
                                same search, with a setting that has it (plan_pin_held) */
    long searches;           /* searches run so far (plan_search_count: for tests) */
    double search_ms;
    int from_prefetch;       /* the last model change took a prefetched model */
    int repriced;            /* the last model change re-priced the transfers the previous model's
                                build kept instead of building (cost_model_reuse): 1 all of them (prices,
                                batch, fewer GPUs), 2 some (more GPUs, a batch some sample degree does not
                                divide: those entries computed); 0 built */
    int whatifs;             /* what-ifs follow (plan_options.whatifs): every model gets counts (plan_counts_wait) */
    int counts_wait;         /* a what-if while the model's counts are still being kept: 0 waits for them or gives
                                them up, whichever is expected to answer sooner (plan_counts_worth_waiting); 1
                                always waits; -1 always gives them up (tests, the benchmark) */
    int counts_given_up;     /* the last model change gave up the counts being kept for the model before */
    atomic_int *cancel;      /* optional (plan_set_cancel): raised, a plan_apply in progress gives up ("cancelled") */
    search_progress_fn progress; /* optional: called during a long final step */
    void *progress_user;
    struct prefetcher *prefetch; /* the background worker (prefetch.h; plan_prefetch_list) */
    int unsearched;          /* plan_options.unsearched: cm has no tables, cg and sr are NULL */
    plan_pipe_settings pset; /* the pipeline settings (plan_options.pipe, plan_change.pipe) */
    struct pipe_plan *pipe;  /* pset.stages > 1: the pipeline (plan_stage_count); NULL otherwise */
};

/* The pipeline q asks for (q->stages > 1, not range-checked: pipe_search
 * and pipe_megatron refuse what they cannot do) of p's network and profile
 * on cluster cl at gpus GPUs and the batch under mset (plan.c): NULL with
 * err set on failure. For plan.c's settings and the scaling rows. */
struct pipe_plan *plan_pipe_run(const plan *p, const plan_pipe_settings *q, const cluster *cl, int gpus, long batch,
                                const plan_memory_settings *mset, lw_error *err);

#endif
