/*
 * cost_memory: what a strategy keeps on each GPU: per task, its shard of
 * the weights, their gradients and the optimizer's state, and its output
 * tile kept for the backward pass; per GPU, the sum over layers plus a
 * fixed workspace (cost.h, memory_parts).
 */
#include "cost.h"

#include <stdlib.h>
#include <string.h>

const char *optimizer_name(optimizer_kind o)
{
    return o == OPT_SGD ? "sgd" : o == OPT_ADAM ? "adam" : "momentum";
}

int optimizer_from_name(const char *s)
{
    if (!s) return -1;
    if (strcmp(s, "sgd") == 0) return OPT_SGD;
    if (strcmp(s, "momentum") == 0) return OPT_MOMENTUM;
    if (strcmp(s, "adam") == 0) return OPT_ADAM;
    return -1;
}

recompute_kind cost_recompute = RECOMPUTE_NONE;
attention_kind cost_attention = ATTENTION_FLASH;

const char *recompute_name(recompute_kind r)
{
    return r == RECOMPUTE_SELECTIVE ? "selective" : r == RECOMPUTE_FULL ? "full" : "none";
}

int recompute_from_name(const char *s)
{
    if (!s) return -1;
    if (strcmp(s, "none") == 0) return RECOMPUTE_NONE;
    if (strcmp(s, "selective") == 0) return RECOMPUTE_SELECTIVE;
    if (strcmp(s, "full") == 0) return RECOMPUTE_FULL;
    return -1;
}

const char *attention_name(attention_kind a)
{
    return a == ATTENTION_STANDARD ? "standard" : "flash";
}

int attention_from_name(const char *s)
{
    if (!s) return -1;
    if (strcmp(s, "flash") == 0) return ATTENTION_FLASH;
    if (strcmp(s, "standard") == 0) return ATTENTION_STANDARD;
    return -1;
}

/* Bytes task `task` of layer li in config c keeps on its GPU (cost.h). */
double cost_memory_task(const cost_model *m, int li, const config *c, int task, memory_parts *parts)
{
    const layer *l = &m->net->layers[li];
    int co[NDIMS];
    config_task_coords(c, task, co);
    /* a task holds the weights of its channel block, replicated over the
     * other dimensions */
    double shard = (double)l->n_params / (c->deg[DIM_C] * c->deg[DIM_R]); /* r splits them as c does */
    double eb = m->elem_bytes > 0 ? m->elem_bytes : BYTES_PER_ELEM;
    int mixed = eb < BYTES_PER_ELEM;
    memory_parts p;
    p.weights = shard * (BYTES_PER_ELEM + (mixed ? eb : 0));
    p.gradients = shard * eb;
    p.optimizer = shard * BYTES_PER_ELEM * (m->optimizer == OPT_ADAM ? 2 : m->optimizer == OPT_MOMENTUM ? 1 : 0);
    double v = 1;
    for (int d = 0; d < NDIMS; d++) {
        long S = layer_dim_size(l, d, m->batch);
        v *= (double)(piece_hi(S, c->deg[d], co[d]) - piece_lo(S, c->deg[d], co[d]));
    }
    /* a flatten is a view of its input and keeps nothing */
    p.activations = l->type == LT_FLATTEN ? 0 : v * eb;
    if (parts) *parts = p;
    return p.weights + p.gradients + p.optimizer + p.activations;
}

/* Memory per GPU of a strategy, and the largest (cost.h). */
double cost_memory(const cost_model *m, const int *ci, double *per_gpu)
{
    int G = m->gpus;
    double *mem = per_gpu ? per_gpu : lw_calloc((size_t)G, sizeof(double));
    if (per_gpu) memset(per_gpu, 0, sizeof(double) * (size_t)G);
    int hosts = 0; /* GPUs 0..hosts-1 host a task */
    for (int li = 0; li < m->n_layers; li++) {
        const config *c = &m->configs[li][ci[li]];
        int T = config_tasks(c);
        if (T > hosts) hosts = T;
        for (int k = 0; k < T; k++) mem[k] += cost_memory_task(m, li, c, k, NULL);
    }
    for (int g = 0; g < hosts; g++) mem[g] += m->workspace_bytes;
    double peak = 0;
    for (int g = 0; g < G; g++)
        if (mem[g] > peak) peak = mem[g];
    if (!per_gpu) free(mem);
    return peak;
}
