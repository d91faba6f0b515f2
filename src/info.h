/*
 * info: what a network is, in numbers (`layerwise info`), and the two
 * commands that report on a network without a cluster: info and import.
 *
 * net_info_compute fills a struct the caller owns; the documents and texts
 * are strings the caller frees. Counts come from the engine's own
 * per-layer figures (layer n_params, layer_flops_per_sample), so they are
 * the numbers the cost model uses.
 */
#ifndef LW_INFO_H
#define LW_INFO_H

#include "model.h"
#include "onnx_import.h"

typedef struct net_info {
    int layers;                   /* layers of the file (the input not counted) */
    int by_type[LT__COUNT];
    long parameters;              /* trainable: conv/linear weights and biases, batchnorm scale and shift */
    double forward_flops;         /* per sample: 2 x multiply-adds of conv2d and linear layers */
    double elementwise_flops;     /* per sample: pooling, normalisation, activations, add, softmax */
    double activation_bytes;      /* per sample: every layer's output (the input's too), fp32 */
} net_info;

void net_info_compute(const network *net, net_info *out);

/* The "layerwise-info/1" document (caller frees). */
char *net_info_json(const network *net);
/* The same for people (caller frees). */
char *net_info_text(const network *net);

/* `layerwise info -n NET [--json] [-o FILE]`: exit status. */
int info_command(const char *net_name, int json, const char *out);
/* `layerwise import FILE.onnx [-o NET.json]`: exit status. */
int import_command(const char *path, const char *out, const onnx_options *opt);

#endif
