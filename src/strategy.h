/*
 * strategy: a configuration for every layer (paper §3), its evaluation by
 * the cost model with a per-layer breakdown, the baselines (data, model,
 * OWT), and the "layerwise-strategy/1" JSON document.
 *
 * A strategy is an array of config indices into cost_model.configs[layer];
 * the caller owns it. strategy_eval fills a caller-owned strategy_eval
 * (strategy_eval_free releases its arrays).
 */
#ifndef LW_STRATEGY_H
#define LW_STRATEGY_H

#include "cost.h"

typedef enum { BASE_DATA, BASE_MODEL, BASE_OWT, BASE__COUNT } baseline_kind;

typedef struct layer_eval {
    double compute_ms, sync_ms, transfer_ms; /* transfer: t_x of incoming edges; an lm_head's adds its tie term (cost_tie) */
    double transfer_bytes, sync_bytes;
    int profiled;
} layer_eval;

typedef struct strategy_eval {
    int n_layers;
    layer_eval *layers;
    double total_ms, compute_ms, sync_ms, transfer_ms;
    double images_per_s;
    double bytes_per_step;
    double peak_memory_bytes;
    int gpus_used;           /* GPUs the strategy really uses: the most tasks of any layer (task k on GPU k) */
    /* what the step achieves at Eq. 1's total (strategy_achieved) */
    double model_flops_per_step, tflops_per_gpu, mfu;
} strategy_eval;

void strategy_evaluate(const cost_model *m, const int *config_index, strategy_eval *out);
void strategy_eval_free(strategy_eval *e);

/* Model FLOPs of one training step of m: forward + backward (3 x the
 * forward's), 2 per multiply-add, matmul-like work only (convolutions,
 * linear layers, attention's products, the LM head; element-wise work and
 * recompute excluded): 3 x batch x net_model_flops_per_sample. The same
 * for every strategy of a setting. */
double strategy_model_flops_per_step(const cost_model *m);
/* What a step of step_ms on gpus_used GPUs achieves: model TFLOPS per GPU
 * (model FLOPs / step / GPUs) and MFU, that over the dense peak per GPU of
 * the model's precision (a fraction). Both 0 where step_ms or gpus_used is
 * not positive. */
void strategy_achieved(const cost_model *m, double step_ms, int gpus_used, double *tflops_per_gpu, double *mfu);
/* The MFU of an evaluated strategy at its Eq. 1 step (a fraction; 0 for an
 * empty evaluation): for front ends, which show it beside the throughput. */
double strategy_eval_mfu(const strategy_eval *ev);

const char *baseline_name(baseline_kind b);
int baseline_from_name(const char *s); /* -1 if unknown */
/* Fills config_index (n_layers) with the baseline. Data: every layer on n
 * over all GPUs (as far as the batch allows). Model: every layer split on
 * its channel dimension over all GPUs (as far as its channels allow). OWT:
 * data parallel for every layer up to the first linear layer, model
 * parallel from there on. */
void strategy_baseline(const cost_model *m, baseline_kind b, int *config_index);

/* Megatron-LM's plan (Shoeybi et al. 2019; sequence parallelism:
 * Korthikanti et al. 2022) on a transformer: tensor parallelism of degree T
 * on consecutive GPUs (a node's, where T fits one) and data parallelism of
 * degree N = G / T over the groups (G the GPU count's power of two, N at most
 * the batch's). Per layer, with n = N on every one: attention c = T (heads),
 * a linear reading a column-split layer (the output projection, fc2) r = T
 * (row-parallel: partial sums, reduced), any other linear (fc1) c = T
 * (column-parallel), gelu/swiglu/relu/dropout after a column-split layer
 * c = T, embedding r = T (vocab-parallel), lm_head c = T (vocab),
 * patch_embed c = T; layernorm, rmsnorm, add, and element-wise layers after
 * a replicated one x = T (replicas), or with sp s = T (sequence parallel;
 * x = T where the sequence is shorter than T); the input n = N, h = T (each
 * rank of a group reads a slice of the sequence, or of the image's rows,
 * and the group gathers it). */
typedef struct megatron_options {
    int tp;                  /* T; 0: strategy_megatron_default_tp */
    int sp;                  /* non-zero: sequence parallelism */
} megatron_options;

/* Whether net has a transformer layer (attention) for Megatron's plan. */
int strategy_megatron_applies(const network *net);
/* The default T: the GPUs per node, capped by the GPU count, as a power of
 * two, and halved until it divides every attention layer's heads. */
int strategy_megatron_default_tp(const cost_model *m);
/* Fills ci (n_layers) with Megatron's plan on m. 0, or -1 with err set
 * (code 2) where the network has no transformer layers, T is not a power
 * of two, is more than the GPUs, does not divide some attention's heads,
 * or some layer cannot take its config in m (named). opt NULL: defaults. */
int strategy_megatron(const cost_model *m, const megatron_options *opt, int *ci, lw_error *err);
/* strategy_megatron's checks of T on gpus GPUs that need no cost model
 * (a transformer network, T a power of two, at most the GPUs, dividing
 * every attention's heads), with its messages: for a command to refuse a
 * bad --tp before it searches. 0, or -1 with err set (code 2). */
int strategy_megatron_check_tp(const network *net, int gpus, int t, lw_error *err);
/* 1 where name is a strategy the program makes (data, model, owt,
 * megatron), not a file. */
int strategy_is_builtin(const char *name);

/* The four strategies the paper compares, in its order: data, model, OWT
 * (the baselines) and layer-wise. */
#define STRATEGY_COMPARED 4
/* "data", "model", "owt", "layer-wise". */
extern const char *const strategy_compared_names[STRATEGY_COMPARED];
/* Evaluates the four on m into ev (freed with strategy_eval_free), and
 * their configs into configs (n_layers each, one after another) unless it
 * is NULL: the layer-wise strategy is layerwise (n_layers configs), or,
 * when NULL, the optimum of an unpinned search of m. Returns 0, or -1 when
 * that search failed (ev[3] is then empty: no layers, total 0). */
int strategy_evaluate_compared(const cost_model *m, const int *layerwise, strategy_eval ev[STRATEGY_COMPARED],
                               int *configs);

/* Index of the config nearest to degrees `want` (product clipped to what
 * the layer allows); used by baselines and by files naming configs. */
int strategy_find_config(const cost_model *m, int layer, const config *want);

/* {"n": 4, "c": 1, ...}: the layer's parallelisable dimensions only, as
 * every document writes configs (caller owns the new object). */
struct cJSON;
struct cJSON *config_to_json(const layer *l, const config *c);

/* A new document's common head, in this order: "format", "network",
 * "cluster", "gpus", "gpus_used" (when gpus_used >= 0), "batch" and
 * "precision", all from the cost model (caller owns the object). */
struct cJSON *doc_new(const char *format, const cost_model *m, int gpus_used);

/* Adds a throughput figure's companions to o: "estimator" (the model
 * that made the step: "eq1", the paper's additive Eq. 1, or "simulated"),
 * "model_flops_per_step", "tflops_per_gpu" and "mfu" for a step of step_ms
 * on gpus_used GPUs. */
void doc_add_throughput(struct cJSON *o, const cost_model *m, const char *estimator, double step_ms, int gpus_used);

/* JSON document (caller frees). algorithm: "elimination", "data", ...;
 * nodes_left and method may be -1 / NULL when not from a search. */
char *strategy_to_json(const cost_model *m, const int *config_index, const strategy_eval *ev, const char *algorithm,
                       int nodes_left, const char *final_method_name);

/* Reads a strategy file for this cost model: every layer must be listed
 * with a config valid for it. Returns 0 and fills config_index. */
int strategy_from_json(const cost_model *m, const char *text, size_t len, const char *label, int *config_index,
                       lw_error *err);

#endif
