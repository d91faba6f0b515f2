/*
 * prefetch (engine-internal: plan.c and prefetch.c only): what plan.c
 * needs of the background builds whose public calls (plan_prefetch_list,
 * plan_prefetch_pending, plan_prefetch) plan.h declares.
 */
#ifndef LW_PREFETCH_H
#define LW_PREFETCH_H

#include "plan.h"

/* Takes the prefetched model, graph and result built (or being built: it
 * waits, unless p->cancel is raised) for exactly gpus / batch / cluster cl:
 * 1 with them handed over (the model's cluster set to cl), 0 if there is
 * none. The other queued settings carry on. */
int prefetch_take(plan *p, int gpus, long batch, const cluster *cl, cost_model **cm, cost_graph **cg,
                  search_result **sr);
/* A probe's question resolved against the plan (plan_probe_resolve): the
 * setting, and what of the plan it needs, by value (pins as configs, deg
 * all 0: not pinned; caller frees pins), so that it can be answered on
 * the worker while the plan changes. */
typedef struct plan_probe_q {
    int gpus;
    long batch;
    const cluster *cl;       /* borrowed: the caller's or the plan's */
    plan_memory_settings ms; /* the plan's, with explain's time budget */
    int limited;             /* plan_limit_applies: asked within ms's limit */
    config *pins;            /* [n_layers] */
} plan_probe_q;
int plan_probe_resolve(const plan *p, const plan_settings *set, const cluster *cl, plan_probe_q *q, lw_error *err);
/* plan_probe_pair's question q answered: a model built for it (given up
 * once *cancel is raised), layer li's two configs searched on it. 0, or -1
 * with err set. */
int plan_probe_answer(const network *net, const profile *prof, const plan_probe_q *q, int li, const config two[2],
                      const atomic_int *cancel, double totals[2], lw_error *err);
/* Posts, for the plan's model (p->cm, built keeping no counts), its
 * counts: the same model built again on the worker keeping them, from
 * base's (the plan's model before, which the job takes and frees) or,
 * base NULL, from scratch; before any other prefetch, after a probe.
 * Replaces any counts posted before. */
void prefetch_counts_post(plan *p, cost_model *base);
/* The model with the counts posted for p->cm, waiting for them while they
 * are being built, unless p->cancel is raised (then NULL, the job left
 * running); NULL where none were posted for p->cm (any posted for
 * another model are dropped) or they failed. The caller adopts and frees
 * it. */
cost_model *prefetch_counts_take(plan *p);
/* Whether counts posted for p->cm are still to come (1), queued or being
 * built: then, while built, the entries evaluated so far and the seconds
 * since the worker took them (0 and 0 while queued). 0: none posted for
 * p->cm, or ended. */
int prefetch_counts_progress(plan *p, long *evaluated, double *running_s);
/* Gives up the counts posted for p->cm (stopping the worker's build of
 * them and waiting for it to stop: a table's row at most) and hands back
 * their base, the model before they were reusing (NULL where they were
 * built from scratch), with the cluster clone its cl points to: both the
 * caller's to free (the model first) or to post again. 1 given up; 0 where
 * none were posted for p->cm, or they were done before they stopped (then
 * prefetch_counts_take has them). */
int prefetch_counts_give_up(plan *p, cost_model **base, cluster **base_cl);
/* Drops any counts posted (cancelled; a running job is freed by the worker). */
void prefetch_counts_drop(plan *p);
/* Joins the worker where it has nothing left to do (1: no worker thread
 * runs now), else 0 (it carries on). */
int prefetch_join_idle(plan *p);
/* Cancels and frees every background build, waiting for the worker. */
void prefetch_discard(plan *p);

#endif
