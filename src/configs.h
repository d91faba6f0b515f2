/*
 * configs: the configurations of a layer (paper §3): a degree per
 * parallelizable dimension of its output tensor. Degrees are powers of two,
 * their product (the number of tasks) is at most the GPU count, and no
 * degree exceeds the size of its dimension. Task k of a layer runs on GPU k,
 * tasks numbered row-major over (n, c, h, w). Blocks are equal splits: piece
 * i of D over a dimension of size S is [floor(i*S/D), floor((i+1)*S/D)).
 */
#ifndef LW_CONFIGS_H
#define LW_CONFIGS_H

#include "model.h"

typedef struct config {
    int deg[NDIMS];
} config;

/* All configs of a layer, in a fixed order (the single-GPU config first).
 * Returns the count; *out is allocated (caller frees). */
int configs_enumerate(const layer *l, long batch, int gpus, config **out);

int config_tasks(const config *c);
/* "n4 h2 w2", or "1" for one GPU. */
void config_format(const config *c, char *buf, size_t n);
/* Parses the short form "n4 c2" (also "n4c2", "n=4,c=2", "1"). 0 on success. */
int config_parse(const char *s, config *c);
int config_equal(const config *a, const config *b);
/* Index of c in list, or -1. */
int config_find(const config *list, int n, const config *c);

/* Piece i of D over size S. */
static inline long piece_lo(long S, int D, int i) { return (long)((double)S * i / D); }
static inline long piece_hi(long S, int D, int i) { return (long)((double)S * (i + 1) / D); }

/* Task index -> per-dimension piece index, and back. */
void config_task_coords(const config *c, int task, int coord[NDIMS]);
int config_task_index(const config *c, const int coord[NDIMS]);

extern const char config_dim_letter[NDIMS]; /* "nchw" */

#endif
