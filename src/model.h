/*
 * model: layers, tensor shapes and the computation graph.
 *
 * A network is a DAG of layers; layers[0] is always the input. Layers are
 * stored in a topological order (every input of a layer comes before it),
 * whatever order the file gave. Shapes are per sample (c, h, w); the batch is
 * a run setting, not part of the network. The network owns its layers and
 * their input arrays; free it with net_free().
 */
#ifndef LW_MODEL_H
#define LW_MODEL_H

#include "util.h"

typedef enum {
    LT_INPUT,
    LT_CONV2D,
    LT_POOL2D,
    LT_LINEAR,
    LT_FLATTEN,
    LT_CONCAT,
    LT_ADD,
    LT_SOFTMAX,
    LT_RELU,
    LT_BATCHNORM,
    LT_DROPOUT,
    LT__COUNT
} layer_type;

/* Dimensions of an output tensor, in the order configs list them. */
enum { DIM_N, DIM_C, DIM_H, DIM_W, NDIMS };
#define DIMMASK(d) (1u << (d))

typedef struct shape {
    long c, h, w;          /* per sample; h = w = 1 for a 2-D (n, c) tensor */
    int rank;              /* 4 for (n, c, h, w), 2 for (n, c) */
} shape;

typedef struct layer {
    char *name;
    layer_type type;
    int n_inputs;
    int *inputs;           /* indices of earlier layers */
    /* parameters as given (0 where not applicable) */
    long out_channels;     /* conv2d */
    long out_features;     /* linear */
    int kh, kw, sh, sw, ph, pw;
    int pool_max;          /* pool2d: 1 max, 0 avg */
    int bias;              /* conv2d / linear: has a bias vector */
    /* derived */
    shape out;
    long n_params;         /* trainable: weights + biases (batchnorm: scale + shift, not its running statistics) */
    unsigned dims;         /* parallelizable dimensions, DIMMASK bits */
    int n_outputs;         /* consumers */
} layer;

typedef struct network {
    char *name;
    char *path;            /* where it was loaded from, or NULL */
    int n_layers;
    layer *layers;
} network;

const char *layer_type_name(layer_type t);
/* -1 if unknown */
int layer_type_from_name(const char *s);

/* Index of the layer with that name, or -1. */
int net_find(const network *net, const char *name);

/* Trainable parameters of the whole network: every layer's n_params
 * (weights and biases; batchnorm's scale and shift, not its running mean and
 * variance), as torch's sum(p.numel() for p in model.parameters()). */
long net_params(const network *net);

/* Forward FLOPs of the whole layer for one sample (multiply-add = 2). */
double layer_flops_per_sample(const network *net, int li);

/* Output elements per sample. */
long shape_elems(shape s);
/* Size of dimension d of the layer's output for a given batch. */
long layer_dim_size(const layer *l, int d, long batch);

/* Format "64x56x56" or "4096" into buf. */
void shape_format(shape s, char *buf, size_t n);

void net_free(network *net);

#endif
