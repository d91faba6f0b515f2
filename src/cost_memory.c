/*
 * cost_memory: what a strategy keeps on each GPU: per task, its shard of
 * the weights, their gradients and the optimizer's state, and its output
 * tile kept for the backward pass (divided among replicas under the
 * sharded sync schemes, cost_sharding.c); per GPU, the sum over layers
 * plus a fixed workspace (cost.h, memory_parts).
 */
#include "cost_internal.h"
#include "cost_sharding.h"

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

/* Elements of input 0 that task coordinates co (config c) of layer li
 * read: the need range of each dimension, the r task's slice of the
 * features. */
static double input_piece(const cost_model *m, int li, const config *c, const int *co, int rc)
{
    const cost_model_priv *pm = (const cost_model_priv *)m;
    const edge_desc *d = &pm->desc[pm->first_edge[li]];
    double v = 1;
    for (int k = 0; k < NDIMS; k++) {
        long lo, hi;
        need_range(d, k, c->deg[k], co[k], &lo, &hi);
        if (k == DIM_C && d->rslice && c->deg[DIM_R] > 1) {
            long a = piece_lo(d->Sp[DIM_C], c->deg[DIM_R], rc), b = piece_hi(d->Sp[DIM_C], c->deg[DIM_R], rc);
            lo = a > lo ? a : lo;
            hi = b < hi ? b : hi;
        }
        v *= (double)(hi > lo ? hi - lo : 0);
    }
    return v;
}

/* Whether layer li opens a transformer block under full recompute: the
 * first layer, not an add, that reads a tensor from outside its block
 * (names "block3.ln1": the prefix before the first dot), or any rank-3
 * layer of a network whose names have no such prefix. Only its input is
 * kept. */
static int block_entry(const network *net, int li)
{
    const layer *l = &net->layers[li];
    const char *dot = strchr(l->name, '.');
    if (!dot) return 1;
    if (l->type == LT_ADD || l->n_inputs == 0) return 0;
    const char *in = net->layers[l->inputs[0]].name;
    size_t n = (size_t)(dot - l->name);
    return !(strncmp(in, l->name, n) == 0 && in[n] == '.');
}

/* What a task of a rank-3 layer keeps for backward (Korthikanti et al.
 * 2022, Reducing Activation Recomputation in Large Transformer Models,
 * section 4): the input of every layer that needs it (norms, linear
 * layers, gelu, swiglu: e bytes an element), a dropout's mask (1 byte an
 * element), nothing for an add; attention its input, Q, K and V, and
 * with the standard kernel and no recompute the softmax's output, its
 * dropout mask and output (5 bytes a score at e = 2); the head its input
 * and the fp32 logits the cross-entropy keeps. Full recompute: only each
 * block's input (block_entry). At e = 2 a GPT block without parallelism
 * keeps s b h (34 + 5 a s / h). */
static double activations_rank3(const cost_model *m, int li, const config *c, const int *co, int rc, double out,
                                 double eb)
{
    const layer *l = &m->net->layers[li];
    if (l->n_inputs == 0) return out * eb;
    const double in = input_piece(m, li, c, co, rc);
    const int block = l->type != LT_EMBEDDING && l->type != LT_LM_HEAD && l->type != LT_PATCH_EMBED &&
                      l->type != LT_CLS_TOKEN && l->type != LT_SELECT_TOKEN;
    if (m->recompute == RECOMPUTE_FULL && block) return block_entry(m->net, li) ? in * eb : 0;
    switch (l->type) {
    case LT_DROPOUT: return out;
    case LT_ADD: case LT_EMBEDDING: case LT_CLS_TOKEN: case LT_SELECT_TOKEN: return 0;
    case LT_LM_HEAD: return in * eb + out * BYTES_PER_ELEM;
    case LT_ATTENTION: {
        const int heads = l->heads > 0 ? l->heads : 1, kvh = l->kv_heads > 0 ? l->kv_heads : heads;
        const double d = l->head_dim > 0 ? (double)l->head_dim : (double)l->out.c / heads;
        const double b = (double)(piece_hi(m->batch, c->deg[DIM_N], co[DIM_N]) - piece_lo(m->batch, c->deg[DIM_N], co[DIM_N]));
        const double q = (double)(piece_hi(l->out.h, c->deg[DIM_H], co[DIM_H]) - piece_lo(l->out.h, c->deg[DIM_H], co[DIM_H]));
        const double a = (double)(piece_hi(heads, c->deg[DIM_C], co[DIM_C]) - piece_lo(heads, c->deg[DIM_C], co[DIM_C]));
        const double kv = (double)(piece_hi(kvh, c->deg[DIM_C], co[DIM_C]) - piece_lo(kvh, c->deg[DIM_C], co[DIM_C]));
        double bytes = (in + b * q * (a + 2 * kv) * d) * eb;
        if (m->attention == ATTENTION_STANDARD && m->recompute == RECOMPUTE_NONE)
            bytes += b * a * q * (double)l->out.h * (2 * eb + 1);
        return bytes;
    }
    default: return in * eb;
    }
}

/* Bytes task `task` of layer li in config c keeps on its GPU (cost.h). */
double cost_memory_task(const cost_model *m, int li, const config *c, int task, memory_parts *parts)
{
    const layer *l = &m->net->layers[li];
    int co[NDIMS];
    config_task_coords(c, task, co);
    /* a task holds the weights of its channel block, replicated over the
     * other dimensions */
    /* r splits them as c does; a tied table is the lm_head's (layer_weights) */
    double shard = (double)layer_weights(m->net, li) / (c->deg[DIM_C] * c->deg[DIM_R]);
    double eb = m->elem_bytes > 0 ? m->elem_bytes : BYTES_PER_ELEM;
    int mixed = eb < BYTES_PER_ELEM;
    memory_parts p;
    p.weights = shard * (BYTES_PER_ELEM + (mixed ? eb : 0));
    p.gradients = shard * eb;
    p.optimizer = shard * BYTES_PER_ELEM * (m->optimizer == OPT_ADAM ? 2 : m->optimizer == OPT_MOMENTUM ? 1 : 0);
    if (m->cl->sync >= SYNC_ZERO1) cost_shard_memory(m, shard, cost_shard_group(m, c, task), &p); /* sharded */
    double v = 1;
    for (int d = 0; d < NDIMS; d++) {
        long S = layer_dim_size(l, d, m->batch);
        v *= (double)(piece_hi(S, c->deg[d], co[d]) - piece_lo(S, c->deg[d], co[d]));
    }
    /* a flatten is a view of its input and keeps nothing */
    p.activations = l->type == LT_FLATTEN ? 0 : v * eb;
    if (l->out.rank == 3) {
        int rc, xc;
        config_task_rx(c, task, &rc, &xc);
        p.activations = activations_rank3(m, li, c, co, rc, v, eb);
    }
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
    double fixed = cost_fixed_bytes(m);
    for (int g = 0; g < hosts; g++) mem[g] += fixed;
    double peak = 0;
    for (int g = 0; g < G; g++)
        if (mem[g] > peak) peak = mem[g];
    if (!per_gpu) free(mem);
    return peak;
}
