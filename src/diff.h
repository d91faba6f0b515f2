/*
 * diff: two strategies of one setting side by side (`layerwise diff A B`):
 * per layer each one's config and time, the difference, and which layers
 * differ; the totals are Eq. 1's.
 *
 * strategy_pick fills a caller-owned config array; diff_json and diff_text
 * return strings the caller frees.
 */
#ifndef LW_DIFF_H
#define LW_DIFF_H

#include "plan.h"

/* The strategy a name gives on p's model: "optimum" (the plan's own, its
 * pins included), "data", "model", "owt", "megatron", or a strategy file (read and
 * checked against the model). Fills ci (n_layers). 0, or -1 with err set
 * (code 2: a bad file). */
int strategy_pick(const plan *p, const char *name, int *ci, lw_error *err);
/* The same, where "megatron" (Megatron-LM's plan, strategy_megatron) takes
 * mo (NULL: its defaults). */
int strategy_pick_with(const plan *p, const char *name, const megatron_options *mo, int *ci, lw_error *err);

/* One side of a diff: a label ("optimum", "data", a file name), the
 * configs and their evaluation on the plan's model. */
typedef struct diff_side {
    const char *label;
    const int *ci;
    const strategy_eval *ev;
} diff_side;

/* Layers whose config differs between the two sides. */
int diff_changed(const plan *p, const diff_side *a, const diff_side *b);
/* The "layerwise-diff/1" document. */
char *diff_json(const plan *p, const diff_side *a, const diff_side *b);
/* A table: per layer A's config and ms, B's, B - A, changed rows marked *. */
char *diff_text(const plan *p, const diff_side *a, const diff_side *b);

#endif
