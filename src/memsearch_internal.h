/*
 * memsearch_internal: what memsearch.c and memsearch_sweep.c share. Not for
 * other modules: memsearch.h is the interface.
 */
#ifndef LW_MEMSEARCH_INTERNAL_H
#define LW_MEMSEARCH_INTERNAL_H

#include "memsearch.h"

/* The sweep (memsearch_sweep.c): an exact search under the limit for
 * graphs whose layers, in node order, keep few nodes "open" (with an edge
 * to a later node) at a time: chains, residual chains, transformer blocks.
 * It first runs the plain search (options so), whose optimum is the answer
 * when it fits. Returns 1 when it settled the problem: r's status, config,
 * cost, lower_bound and proven_optimal set (OPTIMAL, INFEASIBLE,
 * TIME_LIMIT or FAILED with r->failure), searches and bb_nodes counted; 0
 * when the graph does not suit it or its labels outgrew their budget (r
 * untouched but for its counts: then branch and bound runs). deadline:
 * lw_now() value, 0 for none; max_labels > 0: it stops as at the deadline
 * once its passes have kept more labels than that in all (a count: the
 * same answer on any machine). */
int memsearch_sweep(const cost_graph *g, const mem_table *t, const double *limit, const search_options *so,
                    double deadline, long max_labels, const atomic_int *cancel, memsearch_result *r);

#endif
