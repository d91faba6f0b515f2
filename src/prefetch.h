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
/* Cancels and frees every background build, waiting for the worker. */
void prefetch_discard(plan *p);

#endif
