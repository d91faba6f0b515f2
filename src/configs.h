/*
 * configs: the configurations of a layer (paper §3): a degree per
 * parallelizable dimension of its output tensor. Degrees are powers of two,
 * their product (the number of tasks) is at most the GPU count, and no
 * degree exceeds the size of its dimension. Task k of a layer runs on GPU k,
 * tasks numbered row-major over (n, c, h, w, r, x). Blocks are equal splits:
 * piece i of D over a dimension of size S is [floor(i*S/D), floor((i+1)*S/D)).
 *
 * Layers of rank-3 tensors (transformers) have two more degrees, innermost
 * in the task order so that their groups are consecutive GPUs: r, a
 * contraction split (task j of r reads piece j of its input's features and
 * computes partial sums of its whole output piece, reduced before anyone
 * reads them), and x, replicas (x tasks compute the same piece). Never both.
 * Every degree of a config is at least 1; CNN layers have r = x = 1.
 */
#ifndef LW_CONFIGS_H
#define LW_CONFIGS_H

#include "model.h"

typedef struct config {
    int deg[NCDIMS]; /* n, c, h, w, then r (contraction) and x (replicas) */
} config;

/* A config of one task on one GPU. */
#define CONFIG_ONE ((config){{1, 1, 1, 1, 1, 1}})

/* All configs of a layer, in a fixed order (the single-GPU config first).
 * Returns the count; *out is allocated (caller frees). */
int configs_enumerate(const layer *l, long batch, int gpus, config **out);

int config_tasks(const config *c);
/* Tasks that hold distinct pieces of the output, or distinct partial sums:
 * config_tasks without the replicas. */
int config_pieces(const config *c);
/* "n4 h2 w2", or "1" for one GPU. */
void config_format(const config *c, char *buf, size_t n);
/* The same, naming a rank-3 layer's sequence degree s rather than h. */
void config_format_layer(const layer *l, const config *c, char *buf, size_t n);
/* Parses the short form "n4 c2" (also "n4c2", "n=4,c=2", "1"; s for h,
 * r and x for the contraction and replica degrees). 0 on success. */
int config_parse(const char *s, config *c);
int config_equal(const config *a, const config *b);
/* Why c cannot be a config of l whatever the GPU count: a degree above 1
 * on a dimension l cannot split. Writes "a linear layer cannot be split
 * on h" to why and returns 1; 0 (why untouched) if every split dimension
 * is one of l's. The strategy reader and --pin share this text. */
int config_unsplittable(const layer *l, const config *c, char *why, size_t n);
/* Index of c in list, or -1. */
int config_find(const config *list, int n, const config *c);

/* Piece i of D over size S. */
static inline long piece_lo(long S, int D, int i) { return (long)((double)S * i / D); }
static inline long piece_hi(long S, int D, int i) { return (long)((double)S * (i + 1) / D); }

/* Task index -> per-dimension piece index (of the tensor's dimensions),
 * and back (the task with r and x coordinates 0). */
void config_task_coords(const config *c, int task, int coord[NDIMS]);
int config_task_index(const config *c, const int coord[NDIMS]);
/* A task's coordinates along r and x. */
void config_task_rx(const config *c, int task, int *r, int *x);

extern const char config_dim_letter[NCDIMS]; /* "nchwrx" */

#endif
