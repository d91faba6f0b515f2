/*
 * fit: the largest per-GPU batch at which some strategy fits the memory
 * limit, for a plan's setting (its GPUs, cluster, pins and memory
 * settings). Memory grows with the batch, so the search doubles the batch
 * per GPU from 1 until nothing fits, then bisects; each probe is a
 * plan_apply at that batch with the memory search given a millisecond (the
 * smallest peak decides whether something fits, plan_min_peak). The CLI's
 * `fit` and the TUI's scaling screen (`f`) share it.
 */
#ifndef LW_FIT_H
#define LW_FIT_H

#include "plan.h"

typedef struct fit_result {
    long per_gpu;     /* the largest batch per GPU that fits; 0: none, even at 1 */
    long most;        /* the largest batch per GPU searched (10^6, or what the global batch limit allows) */
    int found_hi;     /* a batch that does not fit was found (else everything up to most fits) */
    int unsettled;    /* a larger batch was not settled in the time given (a bound below the limit, a peak
                         above it): counted as not fitting, so per_gpu is known to fit */
} fit_result;

/* Searches p's setting for the largest batch per GPU that fits; leaves p
 * searched at that batch (1 where none fits) with its own memory settings
 * (the full search time) back. p's pins hold at every batch (a config at
 * batch 1 per GPU is one at any larger batch). p->cancel (plan_set_cancel)
 * stops it between probes: "cancelled", code 1. 0, or -1 with err set
 * (p then at some batch tried). */
int fit_largest_batch(plan *p, fit_result *r, lw_error *err);

#endif
