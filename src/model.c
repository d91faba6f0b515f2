#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[LT__COUNT] = {
    [LT_INPUT] = "input",     [LT_CONV2D] = "conv2d",   [LT_POOL2D] = "pool2d",
    [LT_LINEAR] = "linear",   [LT_FLATTEN] = "flatten", [LT_CONCAT] = "concat",
    [LT_ADD] = "add",         [LT_SOFTMAX] = "softmax", [LT_RELU] = "relu",
    [LT_BATCHNORM] = "batchnorm", [LT_DROPOUT] = "dropout",
    [LT_EMBEDDING] = "embedding", [LT_LAYERNORM] = "layernorm", [LT_RMSNORM] = "rmsnorm",
    [LT_ATTENTION] = "attention", [LT_GELU] = "gelu",           [LT_SWIGLU] = "swiglu",
    [LT_LM_HEAD] = "lm_head",     [LT_PATCH_EMBED] = "patch_embed", [LT_CLS_TOKEN] = "cls_token",
    [LT_SELECT_TOKEN] = "select_token",
};

const char *layer_type_name(layer_type t)
{
    return (t >= 0 && t < LT__COUNT) ? type_names[t] : "?";
}

int layer_type_from_name(const char *s)
{
    for (int t = 1; t < LT__COUNT; t++) /* "input" is not a layer type in files */
        if (strcmp(s, type_names[t]) == 0) return t;
    return -1;
}

int net_find(const network *net, const char *name)
{
    for (int i = 0; i < net->n_layers; i++)
        if (strcmp(net->layers[i].name, name) == 0) return i;
    return -1;
}

long net_params(const network *net)
{
    long s = 0;
    for (int i = 0; i < net->n_layers; i++) s += net->layers[i].n_params;
    return s;
}

long shape_elems(shape s)
{
    return s.c * s.h * s.w;
}

long layer_dim_size(const layer *l, int d, long batch)
{
    switch (d) {
    case DIM_N: return batch;
    case DIM_C: return l->out.c;
    case DIM_H: return l->out.h;
    default: return l->out.w;
    }
}

/* Forward FLOPs of an attention layer for one sample, its matrix products
 * (QKV projection, scores, weighted sum) apart from the rest (softmax). */
static void attention_flops(const network *net, const layer *l, double *mm, double *ew)
{
    const layer *in = &net->layers[l->inputs[0]];
    double s = (double)l->out.h, F = (double)in->out.c, d = (double)l->head_dim;
    double a = l->heads, kv = l->kv_heads;
    *mm = 2.0 * s * F * (a + 2 * kv) * d + 2.0 * 2.0 * s * s * a * d;
    *ew = 5.0 * a * s * s + (l->rotary ? 6.0 * s * (a + kv) * d : 0);
}

double layer_matmul_flops_per_sample(const network *net, int li)
{
    const layer *l = &net->layers[li];
    double out = (double)shape_elems(l->out);
    switch (l->type) {
    case LT_CONV2D: {
        const layer *in = &net->layers[l->inputs[0]];
        return 2.0 * out * (double)in->out.c * l->kh * l->kw;
    }
    case LT_LINEAR: {
        const layer *in = &net->layers[l->inputs[0]];
        /* on a sequence: every position's features times the matrix */
        if (in->out.rank == 3) return 2.0 * out * (double)in->out.c;
        return 2.0 * out * (double)shape_elems(in->out);
    }
    case LT_LM_HEAD: return 2.0 * out * (double)net->layers[l->inputs[0]].out.c;
    case LT_PATCH_EMBED: {
        const layer *in = &net->layers[l->inputs[0]];
        return 2.0 * out * (double)in->out.c * l->patch * l->patch;
    }
    case LT_ATTENTION: {
        double mm, ew;
        attention_flops(net, l, &mm, &ew);
        return mm;
    }
    default: return 0.0;
    }
}

double layer_flops_per_sample(const network *net, int li)
{
    const layer *l = &net->layers[li];
    double out = (double)shape_elems(l->out);
    switch (l->type) {
    case LT_CONV2D:
    case LT_LINEAR:
    case LT_PATCH_EMBED: return layer_matmul_flops_per_sample(net, li);
    case LT_POOL2D: return out * l->kh * l->kw;
    case LT_ADD: return out * (l->n_inputs - 1);
    case LT_SOFTMAX: return out * 5.0; /* exp, sum, divide, max, subtract */
    case LT_BATCHNORM: return out * 4.0;
    case LT_RELU: case LT_DROPOUT: return out;
    /* transformer layers: the element-wise work per output element, as
     * counted by hand (mean, variance, normalise, scale and shift) */
    case LT_LAYERNORM: return out * 5.0;
    case LT_RMSNORM: return out * 4.0;
    case LT_GELU: return out * 8.0;    /* the tanh form: a cube, a tanh and five more */
    case LT_SWIGLU: return out * 5.0;  /* silu (exp, add, divide, multiply) and the product */
    case LT_EMBEDDING: return out * (1.0 + (l->positions > 0) + (l->segments > 0)); /* the adds of the rows */
    case LT_CLS_TOKEN: return out;     /* the positions added */
    case LT_LM_HEAD: return layer_matmul_flops_per_sample(net, li) + 5.0 * out; /* and the cross-entropy */
    case LT_ATTENTION: {
        double mm, ew;
        attention_flops(net, l, &mm, &ew);
        return mm + ew;
    }
    default: return 0.0; /* input, flatten, concat, select_token move data only */
    }
}

long layer_weights(const network *net, int li)
{
    const layer *l = &net->layers[li];
    if (l->tied < 0) return l->n_params;
    if (l->type == LT_LM_HEAD) return l->n_params + l->vocab * net->layers[l->tied].out_features;
    if (l->type == LT_EMBEDDING) return l->n_params - l->vocab * l->out_features;
    return l->n_params;
}

double net_model_flops_per_sample(const network *net)
{
    double f = 0;
    for (int i = 1; i < net->n_layers; i++) f += layer_matmul_flops_per_sample(net, i);
    return f;
}

void shape_format(shape s, char *buf, size_t n)
{
    if (s.rank == 2)
        snprintf(buf, n, "%ld", s.c);
    else if (s.rank == 3)
        snprintf(buf, n, "%ldx%ld", s.h, s.c); /* sequence x features */
    else
        snprintf(buf, n, "%ldx%ldx%ld", s.c, s.h, s.w);
}

void net_free(network *net)
{
    if (!net) return;
    for (int i = 0; i < net->n_layers; i++) {
        free(net->layers[i].name);
        free(net->layers[i].inputs);
    }
    free(net->layers);
    free(net->name);
    free(net->path);
    free(net);
}
