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

double layer_flops_per_sample(const network *net, int li)
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
        return 2.0 * out * (double)shape_elems(in->out);
    }
    case LT_POOL2D: return out * l->kh * l->kw;
    case LT_ADD: return out * (l->n_inputs - 1);
    case LT_SOFTMAX: return out * 5.0; /* exp, sum, divide, max, subtract */
    case LT_BATCHNORM: return out * 4.0;
    case LT_RELU: case LT_DROPOUT: return out;
    default: return 0.0; /* input, flatten, concat move data only */
    }
}

void shape_format(shape s, char *buf, size_t n)
{
    if (s.rank == 2)
        snprintf(buf, n, "%ld", s.c);
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
