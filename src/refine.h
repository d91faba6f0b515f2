/*
 * refine: a local search under the step simulator, from a strategy (the
 * exact Eq. 1 optimum, usually). Eq. 1 adds every term, so its optimum need
 * not be the best strategy once communication overlaps computation; this
 * looks for a better one by single-layer config changes: passes over the
 * layers in a seeded random order, each layer's configs in a seeded random
 * order, keeping the first change that shortens the simulated step (first
 * improvement), until a whole pass finds none (a local optimum) or the time
 * is up. It only ever keeps improvements, so it never returns a strategy
 * slower than its start. Deterministic for a seed when it ends at a local
 * optimum; a time limit may stop it earlier on a slower machine.
 *
 * It keeps the constraints the search that found its start had (bounds):
 * a pinned layer keeps its config, and no change takes the strategy's peak
 * memory per GPU over the limit (or, where the start is over it already,
 * because nothing fits, over the start's peak).
 *
 * The caller owns out->configs (refine_result_free).
 */
#ifndef LW_REFINE_H
#define LW_REFINE_H

#include "sim.h"

typedef struct refine_result {
    int *configs;          /* [n_layers] the refined strategy */
    double start_ms;       /* simulated step of the start */
    double best_ms;        /* simulated step of the result (<= start_ms) */
    int n_changed;         /* layers whose config differs from the start */
    int passes;
    long evaluations;      /* strategies simulated */
    int local_optimum;     /* 1: a whole pass found no improvement */
} refine_result;

/* What the refinement may not change: bounds passed as NULL, or with
 * pinned NULL and memory_limit +inf (or <= 0), leave every layer free. */
typedef struct refine_bounds {
    const int *pinned;     /* [n_layers] -1, or the config index the layer keeps; NULL: none pinned */
    double memory_limit;   /* bytes per GPU, as cost_memory counts them (workspace included); +inf: none */
} refine_bounds;

int sim_refine(const cost_model *m, const int *start, const refine_bounds *bounds, double seconds,
               unsigned long long seed, refine_result *out);
void refine_result_free(refine_result *r);

/* The same search a slice at a time, for a front end that stays live while
 * it runs (the TUI's F key): refine_begin copies start and bounds (m must
 * outlive the search); refine_step searches for about seconds more and returns 1 while
 * more remains, 0 at a local optimum; refine_progress is the result so far
 * (its configs are the search's, valid until the next call); refine_end
 * hands the result to out (the caller frees it) and frees the search; out
 * may be NULL to drop it. The same seed visits the same strategies in the
 * same order however the time is sliced. */
typedef struct refine_search refine_search;
refine_search *refine_begin(const cost_model *m, const int *start, const refine_bounds *bounds,
                             unsigned long long seed);
int refine_step(refine_search *r, double seconds);
const refine_result *refine_progress(const refine_search *r);
void refine_end(refine_search *r, refine_result *out);

#endif
