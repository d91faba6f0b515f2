/*
 * prefetch (engine-internal: plan.c's helper): one background worker
 * thread, at the lowest priority, that builds ahead the cost models and
 * optima of other settings, answers posted probes first, and keeps the
 * counts of a model (cost_model_build_for_whatifs) after the foreground
 * answered without them. It knows nothing of a plan: plan.c hands it the
 * network and profile once, and every call the setting or model it is
 * about; plan.h declares the public calls (plan_prefetch_list, ...).
 *
 * prefetcher_new makes one (no thread until work is posted);
 * prefetcher_free cancels everything and waits for the worker. What a
 * take hands back is the caller's to free; everything else stays the
 * prefetcher's. Every call but prefetcher_new takes NULL (no work).
 */
#ifndef LW_PREFETCH_H
#define LW_PREFETCH_H

#include <stdatomic.h>

#include "cost.h"
#include "search.h"

/* The most settings built ahead at once. */
#define PREFETCH_MAX 4

typedef struct prefetcher prefetcher;

/* net and prof (may be NULL) must outlive the prefetcher. */
prefetcher *prefetcher_new(const network *net, const profile *prof);
/* Cancels and frees every background build, waiting for the worker. */
void prefetcher_free(prefetcher *f);

/* One setting to build ahead: its cluster is cloned. */
typedef struct prefetch_setting {
    int gpus;
    long batch;
    const cluster *cl;
} prefetch_setting;
/* Builds these, one after another in the order given (up to PREFETCH_MAX,
 * a setting listed twice once); keeps what they name that is built or
 * being built and cancels the rest. */
void prefetch_list(prefetcher *f, const prefetch_setting *s, int n);
/* Settings still queued or being built. */
int prefetch_pending(prefetcher *f);
/* Takes the model, graph and result built (or being built: it waits,
 * unless *cancel, may be NULL, is raised) for exactly gpus / batch /
 * cluster cl: 1 with them handed over (the model's cluster set to cl), 0
 * if there is none. The other queued settings carry on. */
int prefetch_take(prefetcher *f, int gpus, long batch, const cluster *cl, const atomic_int *cancel, cost_model **cm,
                  cost_graph **cg, search_result **sr);

/* A question answered on the worker before any build: fn(arg, cancel,
 * totals, err) returns 0 with totals, or -1 with err set, and gives up soon
 * after *cancel is raised; arg_free(arg) releases the question once it is
 * answered or dropped. */
typedef int (*prefetch_probe_fn)(void *arg, const atomic_int *cancel, double totals[2], lw_error *err);
/* Posts a probe (taking arg), cancelling any posted before. */
void prefetch_probe_post(prefetcher *f, prefetch_probe_fn fn, void *arg, void (*arg_free)(void *));
/* The posted probe: 0 while it runs; 1 when done, with totals (and the
 * probe forgotten); -1 when it failed (err set) or none is posted. */
int prefetch_probe_poll(prefetcher *f, double totals[2], lw_error *err);
/* Cancels the posted probe, if any. */
void prefetch_probe_cancel(prefetcher *f);

/* Posts, for model `model` (built keeping no counts; only compared, never
 * read after this call), its counts: the same model built again on the
 * worker keeping them, from base's (the model before, which the job takes
 * and frees) or, base NULL, from scratch; before any other build, after a
 * probe. Replaces any counts posted before. */
void prefetch_counts_post(prefetcher *f, const cost_model *model, cost_model *base);
/* The model with the counts posted for `model`, waiting for them while
 * they are being built, unless *cancel is raised (then NULL, the job left
 * running); NULL where none were posted for it (any posted for another
 * model are dropped) or they failed. The caller adopts and frees it. */
cost_model *prefetch_counts_take(prefetcher *f, const cost_model *model, const atomic_int *cancel);
/* Whether counts posted for `model` are still to come (1), queued or being
 * built: then, while built, the entries evaluated so far and the seconds
 * since the worker took them (0 and 0 while queued). 0: none posted for
 * it, or ended. */
int prefetch_counts_progress(prefetcher *f, const cost_model *model, long *evaluated, double *running_s);
/* Gives up the counts posted for `model` (stopping the worker's build of
 * them and waiting for it to stop: a table's row at most) and hands back
 * their base, the model before they were reusing (NULL where they were
 * built from scratch), with the cluster clone its cl points to: both the
 * caller's to free (the model first) or to post again. 1 given up; 0 where
 * none were posted for it, or they were done before they stopped (then
 * prefetch_counts_take has them). */
int prefetch_counts_give_up(prefetcher *f, const cost_model *model, cost_model **base, cluster **base_cl);
/* Drops any counts posted (cancelled; a running job is freed by the worker). */
void prefetch_counts_drop(prefetcher *f);
/* Joins the worker where it has nothing left to do (1: no worker thread
 * runs now), else 0 (it carries on). */
int prefetch_join_idle(prefetcher *f);

#endif
