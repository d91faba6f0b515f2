/*
 * fold: a network's repeated blocks (plan_blocks: GPT-2 XL's 48
 * transformer blocks) as the graph and table screens show them, so a
 * 600-layer network reads as an embedding, a few boxes or groups of
 * blocks, and a head. A fold is a list of units in layer order: a single
 * layer, or a stretch of consecutive blocks of one run folded into one.
 * Networks without repeated blocks (the CNNs) get one unit per layer.
 *
 * fold_build fills a fold the caller owns and releases with fold_free.
 */
#ifndef LW_FOLD_H
#define LW_FOLD_H

#include "plan.h"

#include <stddef.h>

typedef struct fold_unit {
    int first, last;  /* its layers, first..last */
    int blocks;       /* 0: one layer; n >= 1: n whole blocks folded into one */
    int block0;       /* the number in the first block's name */
    int len;          /* layers per block (blocks >= 1) */
    int run;          /* the run it belongs to (index into runs), -1: none */
} fold_unit;

typedef struct fold {
    int n_units;
    fold_unit *units;
    int n_layers;
    int *unit_of;         /* [n_layers] the unit each layer is in */
    int n_runs;
    net_block_run *runs;  /* plan_blocks */
} fold;

/* The units of p's network: each run's blocks folded into one unit per
 * stretch of blocks that are not open (open[first layer of a block]
 * non-zero: the block shown as its layers; open may be NULL), split
 * further, where configs is not NULL, wherever a block's configs (a
 * strategy: config indices per layer) differ from the previous block's,
 * and where by_stage is set, wherever a pipelined plan's stage changes
 * (plan_stage_of; a block that straddles two stages shows as its layers),
 * so a unit lies in one stage. */
void fold_build(fold *f, const plan *p, const unsigned char *open, const int *configs, int by_stage);
void fold_free(fold *f);

/* "block 0-47 x48" (one block: "block 5 x1"). */
void fold_name(const fold *f, const fold_unit *u, char *buf, size_t n);

/* Whether every block of u has the same configs, part by part, in the
 * strategy configs (1 also for a single layer or block). */
int fold_blocks_agree(const plan *p, const fold_unit *u, const int *configs);

/* The first layer of the block of its run that layer li is in, or -1
 * where li is in no run. */
int fold_block_start(const fold *f, int li);

#endif
