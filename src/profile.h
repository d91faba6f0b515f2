/*
 * profile: measured layer times ("layerwise-profile/1") that override the
 * analytical t_c where an entry matches a task's exact shape.
 *
 *   {"format": "layerwise-profile/1", "gpu": "P100-SXM2", "precision": "fp32",
 *    "entries": [{"type": "conv2d", "input": [32, 64, 56, 56],
 *                 "output": [32, 64, 56, 56], "kernel": [3, 3],
 *                 "stride": [1, 1], "padding": [1, 1],
 *                 "forward_ms": 1.9, "backward_ms": 3.8}, ...]}
 *
 * "input" and "output" are one task's blocks (n, c, h, w); kernel, stride and
 * padding are needed for conv2d and pool2d only; "inputs" (the number of
 * inputs of an add or concat, whose cost depends on it) is optional: an
 * entry without it matches any count. Unknown fields are errors, and so is
 * one task shape given twice. A profile applies to a cluster whose gpu.name
 * equals its "gpu", training at its "precision" (optional: profiles written
 * before the field cannot be checked and apply at any precision).
 * The profile owns its entries.
 */
#ifndef LW_PROFILE_H
#define LW_PROFILE_H

#include "cluster.h"
#include "model.h"

#include <stdint.h>

typedef struct profile_entry {
    int type;               /* layer_type */
    long in[4], out[4];
    int k[2], s[2], p[2];
    int n_inputs;           /* "inputs": the layer's input count (add, concat); 0 in a file: any */
    double forward_ms, backward_ms;
} profile_entry;

typedef struct profile {
    char *gpu;
    int precision;           /* the precision it was measured at; -1: not recorded */
    char *path;
    int n;
    profile_entry *e;
    /* entries by shape (profile_shape_hash), open addressing, 1 + the
     * entry's index, 0 free; the entries of one shape in file order
     * (profile_from_json makes it; NULL: profile_lookup scans) */
    int *index;
    int index_cap;           /* a power of two, over 2n */
} profile;

profile *profile_from_json(const char *text, size_t len, const char *label, lw_error *err);
profile *profile_load_file(const char *path, lw_error *err);
void profile_free(profile *p);

/* Whether p was made for the GPU and precision cl runs: 0 yes; 1 the GPU
 * is cl's but p does not record its precision (an older profile: the
 * caller warns that it cannot be checked); -1 with err set (exit 2) naming
 * p's file, what it was made for and what cl uses. */
int profile_check_cluster(const profile *p, const cluster *cl, lw_error *err);
/* Whether the cost model uses p on cl: the same GPU name and, where p
 * records one, the same precision (a what-if may change cl's). */
int profile_applies(const profile *p, const cluster *cl);

/* Forward + backward ms of the matching entry (the first in the file:
 * same type and shapes, and the key's input count or an entry's 0), or -1
 * if none. */
double profile_lookup(const profile *p, const profile_entry *key);
/* A digest of an entry's type and shapes (not its input count), and
 * whether two entries are the same task shape (input count included). */
uint64_t profile_shape_hash(const profile_entry *e);
int profile_same_shape(const profile_entry *a, const profile_entry *b);
/* Adds key to set (a profile used as a set of shapes: start from one
 * zeroed, free its e and index) unless an entry of the same shape is in it:
 * 1 added, 0 there already. */
int profile_add_shape(profile *set, const profile_entry *key);

#endif
