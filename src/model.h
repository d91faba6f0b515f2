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
    /* transformer layers (tensors of rank 3: sample, sequence, features) */
    LT_EMBEDDING,          /* token ids -> vectors: vocab x hidden table, learned positions optionally */
    LT_LAYERNORM,
    LT_RMSNORM,
    LT_ATTENTION,          /* QKV projection, scores, softmax, weighted sum (not the output projection) */
    LT_GELU,
    LT_SWIGLU,             /* silu(gate) x up: features 2F -> F */
    LT_LM_HEAD,            /* hidden -> vocab logits, with the cross-entropy loss */
    LT_PATCH_EMBED,        /* image (c, h, w) -> patches (sequence) x hidden */
    LT_CLS_TOKEN,          /* prepends a learned class token and adds learned positions */
    LT_SELECT_TOKEN,       /* keeps one position of the sequence (ViT's class token) */
    LT__COUNT
} layer_type;

/* Dimensions of an output tensor, in the order configs list them. A
 * transformer's (sample, sequence, features) tensor is rank 3: features in
 * C, the sequence in H, W of size 1. Two more degrees are not dimensions of
 * the tensor (configs.h): DIM_R, a contraction split (partial sums of the
 * whole output), and DIM_X, replicas; geometric loops run over NDIMS. */
enum { DIM_N, DIM_C, DIM_H, DIM_W, NDIMS, DIM_R = NDIMS, DIM_X, NCDIMS };
#define DIMMASK(d) (1u << (d))

typedef struct shape {
    long c, h, w;          /* per sample; h = w = 1 for a 2-D (n, c) tensor; rank 3: c features, h sequence, w 1 */
    int rank;              /* 4 for (n, c, h, w), 3 for (n, sequence, features), 2 for (n, c) */
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
    int bias;              /* conv2d / linear / attention / lm_head: has a bias vector */
    /* transformer layers (0 where not applicable) */
    int heads, kv_heads;   /* attention: query heads, key/value heads (grouped-query attention: fewer) */
    long head_dim;         /* attention: features per head */
    int causal;            /* attention: masked (decoder) */
    int rotary;            /* attention: rotary position embedding applied to Q and K */
    long vocab;            /* embedding, lm_head: vocabulary size */
    long positions;        /* embedding: learned position table rows (0: none) */
    long segments;         /* embedding: token-type rows (BERT: 2; 0: none) */
    int tied;              /* lm_head: index of the embedding whose table it shares, or -1;
                            * embedding: index of the lm_head that shares its table, or -1 */
    int patch;             /* patch_embed: patch side (pixels) */
    long index;            /* select_token: the position kept */
    long contract;         /* derived: size of the dimension a contraction split (DIM_R) divides: input
                            * features (linear, lm_head), vocabulary (embedding); 0: none */
    /* derived */
    shape out;
    long n_params;         /* trainable: weights + biases (batchnorm: scale + shift, not its running statistics) */
    unsigned dims;         /* parallelizable degrees, DIMMASK bits over NCDIMS (DIM_R, DIM_X included) */
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
/* Of those, the matrix products' (convolutions, linear layers, attention's
 * QKV projection, scores and weighted sum, the LM head, the patch
 * embedding): the "model FLOPs" of MFU, as fvcore and Megatron count them. */
double layer_matmul_flops_per_sample(const network *net, int li);
/* The weights layer li syncs, updates and keeps state for: its n_params,
 * except that a tied table (an lm_head sharing an embedding's) belongs to
 * the lm_head, whose matrix product makes most of its gradient (the
 * embedding's lookup adds a few rows); n_params keeps the table at the
 * embedding, as parameter counts do. */
long layer_weights(const network *net, int li);
/* Sum of layer_matmul_flops_per_sample: a forward pass of one sample. */
double net_model_flops_per_sample(const network *net);

/* Output elements per sample. */
long shape_elems(shape s);
/* Size of dimension d of the layer's output for a given batch. */
long layer_dim_size(const layer *l, int d, long batch);

/* Format "64x56x56", "1024x768" (sequence x features) or "4096" into buf. */
void shape_format(shape s, char *buf, size_t n);

void net_free(network *net);

#endif
