/*
 * blocks: the repeated blocks of a network (issue 32 item 9), for screens
 * that fold a 600-layer transformer into a few boxes or group a table by
 * block. A block is a run of consecutive layers named STEM<k>.<part>
 * (the generators' "block3.attn"); a run of blocks is blocks k, k+1, ...
 * of one stem, consecutive in the layer order, each with the same parts of
 * the same types in the same order and the same inputs inside the block.
 */
#ifndef LW_BLOCKS_H
#define LW_BLOCKS_H

#include "model.h"

enum { NET_BLOCK_STEM = 32 };

typedef struct net_block_run {
    int first;                 /* the first layer of the run's first block */
    int len;                   /* layers in each block */
    int count;                 /* blocks in the run (>= 2) */
    int first_index;           /* the number in the first block's name */
    char stem[NET_BLOCK_STEM]; /* "block" */
} net_block_run;

/* The runs of repeated blocks of n, in layer order, at most max of them
 * written to out (out may be NULL with max 0); returns how many there are.
 * Layers outside every run (embeddings, the head) belong to none. */
int net_find_blocks(const network *n, net_block_run *out, int max);

/* The run layer li belongs to among runs[0..n_runs-1] (-1: none), and in
 * *block and *part (may be NULL) which block of it and which layer of that
 * block. */
int net_block_of(const net_block_run *runs, int n_runs, int li, int *block, int *part);

#endif
