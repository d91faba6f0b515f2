/*
 * profile: measured layer times ("layerwise-profile/1") that override the
 * analytical t_c where an entry matches a task's exact shape.
 *
 *   {"format": "layerwise-profile/1", "gpu": "P100-SXM2",
 *    "entries": [{"type": "conv2d", "input": [32, 64, 56, 56],
 *                 "output": [32, 64, 56, 56], "kernel": [3, 3],
 *                 "stride": [1, 1], "padding": [1, 1],
 *                 "forward_ms": 1.9, "backward_ms": 3.8}, ...]}
 *
 * "input" and "output" are one task's blocks (n, c, h, w); kernel, stride and
 * padding are needed for conv2d and pool2d only; "inputs" (the number of
 * inputs of an add or concat, whose cost depends on it) is optional: an
 * entry without it matches any count. Unknown fields are errors. A profile applies to a
 * cluster whose gpu.name equals its "gpu". The profile owns its entries.
 */
#ifndef LW_PROFILE_H
#define LW_PROFILE_H

#include "model.h"

typedef struct profile_entry {
    int type;               /* layer_type */
    long in[4], out[4];
    int k[2], s[2], p[2];
    int n_inputs;           /* "inputs": the layer's input count (add, concat); 0 in a file: any */
    double forward_ms, backward_ms;
} profile_entry;

typedef struct profile {
    char *gpu;
    char *path;
    int n;
    profile_entry *e;
} profile;

profile *profile_from_json(const char *text, size_t len, const char *label, lw_error *err);
profile *profile_load_file(const char *path, lw_error *err);
void profile_free(profile *p);

/* Forward + backward ms of the matching entry, or -1 if none. */
double profile_lookup(const profile *p, const profile_entry *key);

#endif
