/*
 * net_json: reading "layerwise-net/1" network files.
 *
 * Every error names the file, the line (and column for syntax errors) or the
 * layer, and what is wrong; err->code is 2. The returned network is owned by
 * the caller (net_free).
 */
#ifndef LW_NET_JSON_H
#define LW_NET_JSON_H

#include "model.h"

/* Hard limits that keep absurd files from exhausting memory or time. */
#define NET_MAX_LAYERS 20000
#define NET_MAX_DIM 16777216L      /* any channel count, height or width */
#define NET_MAX_ELEMS (1L << 34)   /* elements of one sample's tensor */
#define NET_MAX_INPUTS 64

/* text is the file's contents; label is what messages call it (a path). */
network *net_from_json(const char *text, size_t len, const char *label, lw_error *err);
network *net_load_file(const char *path, lw_error *err);

/* The loader's last step on a network made in memory: its layers in
 * topological order (the input first) with the fields a file gives, inputs
 * as indices and a tied lm_head's embedding as its index in `tied`. Derives
 * what net_from_json derives (every layer's shape, parameters, contraction,
 * splits and consumers; the embedding's link to its lm_head) and checks the
 * same limits, so the network equals the one its file loads as. 0, or -1
 * with err set (code 2, naming label and the layer). */
int net_finish(network *net, const char *label, lw_error *err);

/* Writes the network back as a layerwise-net/1 document (caller frees). */
char *net_to_json(const network *net);

#endif
