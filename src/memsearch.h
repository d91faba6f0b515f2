/*
 * memsearch: the search under a memory budget per GPU. Like search.h it
 * knows nothing of layers: a cost_graph, and a mem_table giving, for every
 * node and config, the bytes each GPU it uses keeps (a config uses GPUs
 * 0 .. tasks-1; task k on GPU k). A GPU's memory under an assignment is the
 * sum over nodes, so the constraint "every GPU g within limit[g]" is a
 * sum of per-node terms, one constraint per GPU.
 *
 * Methods. First the plain search (search_run): its optimum, where it
 * fits, is the answer. Otherwise, where the graph keeps few nodes open in
 * node order (chains, residual and transformer blocks), the sweep of
 * memsearch_sweep.c (Pareto labels of time and bytes per state of the open
 * nodes; memsearch_internal.h); else, or where its labels outgrow their
 * budget, Lagrangian relaxation inside branch and bound, here: for
 * multipliers
 * lambda >= 0 (ms per byte, one per GPU), adding lambda . bytes to each node's
 * cost keeps Eq. 1 a sum of node and edge terms, so Algorithm 1 (search_run,
 * used as a black box) finds the exact minimum of the relaxed problem, and
 * that minimum minus lambda . limit is a lower bound on the constrained
 * optimum. Subgradient steps raise the bound; branching on a node's config
 * (this config / any other) closes the gap; a subproblem is dropped when its
 * bound reaches the best fitting assignment found, or when even the least
 * memory each node can take overflows a GPU. The min-marginals of the relaxed
 * problem remove configs that cannot beat the best found. Where a time limit
 * stops it, the best fitting assignment comes with a proven lower bound.
 */
#ifndef LW_MEMSEARCH_H
#define LW_MEMSEARCH_H

#include "search.h"

typedef struct mem_table {
    int n_nodes, n_gpus;
    int *n_configs;       /* [node] */
    int **tasks;          /* [node][config] GPUs used, 1..n_gpus */
    long **off;           /* [node][config] where the config's bytes start in bytes[node] */
    double **bytes;       /* [node][off[node][config] + k], k < tasks: bytes on GPU k */
} mem_table;

/* tasks[v][c] per node and config (copied); bytes zeroed. NULL on a bad
 * count (tasks outside 1..n_gpus). */
mem_table *mt_new(int n_nodes, const int *n_configs, int n_gpus, int *const *tasks);
void mt_free(mem_table *t);
static inline double *mt_at(const mem_table *t, int v, int c) { return t->bytes[v] + t->off[v][c]; }
/* Memory per GPU of an assignment (per_gpu: n_gpus entries, may be NULL);
 * returns the largest. */
double mt_peak(const mem_table *t, const int *config, double *per_gpu);
/* 1 if every GPU g holds at most limit[g] under config. */
int mt_fits(const mem_table *t, const int *config, const double *limit);

typedef enum {
    MEMSEARCH_OPTIMAL,      /* config is the constrained optimum (proven) */
    MEMSEARCH_TIME_LIMIT,   /* time ran out: config fits (or is NULL), lower_bound holds */
    MEMSEARCH_INFEASIBLE,   /* proven: no assignment of finite cost fits; see min_peak */
    MEMSEARCH_FAILED        /* search_run failed (search_status in `failure`) */
} memsearch_status;

typedef struct memsearch_options {
    double time_limit_s;        /* <= 0: no limit */
    const atomic_int *cancel;   /* raised: stop as at a time limit (status MEMSEARCH_FAILED, SEARCH_CANCELLED) */
    const search_options *search; /* for each relaxed search; NULL: defaults */
    /* Counts, where the answer must not depend on the machine's speed: > 0,
     * the search stops as at a time limit past that many */
    long max_subproblems;       /* branch-and-bound subproblems */
    long max_searches;          /* branch and bound's relaxed searches */
    long max_labels;            /* labels the sweep keeps, over all its passes */
    int no_sweep;               /* 1: branch and bound only, never the sweep (for tests) */
    int no_min_peak;            /* 1: where no fitting assignment is found, no search for the smallest
                                   peak (min_peak_config NULL, min_peak +inf, min_peak_lower 0) */
} memsearch_options;

void memsearch_options_init(memsearch_options *o);

typedef struct memsearch_result {
    memsearch_status status;
    search_status failure;  /* MEMSEARCH_FAILED: why */
    int n_nodes;
    int *config;            /* [n_nodes] the best fitting assignment found; NULL if none */
    double cost;            /* its total cost; +inf if none */
    double lower_bound;     /* no fitting assignment costs less (== cost when optimal; +inf when infeasible) */
    int proven_optimal;
    /* when no fitting assignment was found (INFEASIBLE, or TIME_LIMIT with
     * config NULL): the assignment with the smallest peak found, its peak,
     * and a proven lower bound on the smallest peak (equal when proven) */
    int *min_peak_config;
    double min_peak, min_peak_lower;
    long bb_nodes, searches; /* branch-and-bound subproblems (the sweep: its passes, plus 1), relaxed
                                searches run (the sweep: its backward passes and label passes) */
    double elapsed_s;
} memsearch_result;

/* The least-cost assignment of g whose memory fits limit[g] on every GPU
 * (n_gpus entries: what the strategy may use, bytes). Configs of infinite
 * node cost (pins) are never chosen. NULL only when out of memory. */
memsearch_result *memsearch_run(const cost_graph *g, const mem_table *t, const double *limit,
                                const memsearch_options *o);
void memsearch_result_free(memsearch_result *r);

/* The smallest peak (max over GPUs of memory) of any assignment that gives
 * every node a config of finite node cost, by branch and bound (exact unless
 * time_limit_s > 0 runs out). Fills best (n_nodes), returns the peak and sets
 * *lower to a proven lower bound (equal when exact). */
double memsearch_min_peak(const cost_graph *g, const mem_table *t, double time_limit_s, int *best, double *lower);

#endif
