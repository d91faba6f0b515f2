#include "strategy.h"

#include "json_util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void strategy_evaluate(const cost_model *m, const int *ci, strategy_eval *out)
{
    memset(out, 0, sizeof *out);
    out->n_layers = m->n_layers;
    out->layers = lw_calloc((size_t)m->n_layers, sizeof(layer_eval));
    /* from the tables where the model has them, otherwise just these entries */
    for (int i = 0; i < m->n_layers; i++) {
        layer_eval *le = &out->layers[i];
        const config *c = &m->configs[i][ci[i]];
        double sync_ms = cost_t_s(m, i, c, &le->sync_bytes);
        if (m->t_c) {
            le->compute_ms = m->t_c[i][ci[i]];
            le->profiled = m->t_c_profiled[i][ci[i]];
            le->sync_ms = m->t_s[i][ci[i]];
        } else {
            le->compute_ms = cost_t_c(m, i, c, &le->profiled);
            le->sync_ms = sync_ms;
        }
    }
    for (int e = 0; e < m->n_edges; e++) {
        int a = m->e_from[e], b = m->e_to[e];
        layer_eval *le = &out->layers[b];
        double bytes = 0;
        le->transfer_ms += cost_edge_ms(m, e, ci[a], ci[b], &bytes);
        le->transfer_bytes += bytes;
    }
    for (int k = 0; k < m->n_ties; k++) { /* Eq. 1's tie terms, charged to the layer that keeps the table */
        const cost_tie *t = &m->ties[k];
        layer_eval *le = &out->layers[t->lm_head];
        double bytes = 0;
        double ms = cost_tie_ms(m, k, ci[t->embed], ci[t->lm_head], &bytes);
        le->transfer_ms += ms;
        le->transfer_bytes += bytes;
    }
    for (int i = 0; i < m->n_layers; i++) {
        const layer_eval *le = &out->layers[i];
        out->compute_ms += le->compute_ms;
        out->sync_ms += le->sync_ms;
        out->transfer_ms += le->transfer_ms;
        out->bytes_per_step += le->transfer_bytes + le->sync_bytes;
    }
    out->total_ms = out->compute_ms + out->sync_ms + out->transfer_ms;
    out->images_per_s = out->total_ms > 0 ? (double)m->batch / (out->total_ms * 1e-3) : 0;
    out->peak_memory_bytes = cost_memory(m, ci, NULL);
    for (int i = 0; i < m->n_layers; i++) {
        int t = config_tasks(&m->configs[i][ci[i]]);
        if (t > out->gpus_used) out->gpus_used = t;
    }
    out->model_flops_per_step = strategy_model_flops_per_step(m);
    strategy_achieved(m, out->total_ms, out->gpus_used, &out->tflops_per_gpu, &out->mfu);
}

double strategy_model_flops_per_step(const cost_model *m)
{
    return 3.0 * (double)m->batch * net_model_flops_per_sample(m->net);
}

void strategy_achieved(const cost_model *m, double step_ms, int gpus_used, double *tflops_per_gpu, double *mfu)
{
    double t = 0;
    if (step_ms > 0 && gpus_used > 0) t = strategy_model_flops_per_step(m) / (step_ms * 1e-3) / gpus_used / 1e12;
    *tflops_per_gpu = t;
    *mfu = m->gk.peak_tflops > 0 ? t / m->gk.peak_tflops : 0;
}

double strategy_eval_mfu(const strategy_eval *ev)
{
    return ev->mfu;
}

void strategy_eval_free(strategy_eval *e)
{
    free(e->layers);
    e->layers = NULL;
}

static const char *const base_names[BASE__COUNT] = {"data", "model", "owt"};

const char *const strategy_compared_names[STRATEGY_COMPARED] = {"data", "model", "owt", "layer-wise"};

int strategy_evaluate_compared(const cost_model *m, const int *layerwise, strategy_eval ev[STRATEGY_COMPARED],
                               int *configs)
{
    int *ci = lw_calloc((size_t)m->n_layers, sizeof(int));
    int rc = 0;
    for (int s = 0; s < STRATEGY_COMPARED; s++) {
        ev[s] = (strategy_eval){0};
        if (s < BASE__COUNT) {
            strategy_baseline(m, (baseline_kind)s, ci);
        } else if (layerwise) {
            memcpy(ci, layerwise, sizeof(int) * (size_t)m->n_layers);
        } else {
            cost_graph *g = cost_model_graph(m);
            search_result *r = search_optimum(g);
            if (r) memcpy(ci, r->config, sizeof(int) * (size_t)m->n_layers);
            else rc = -1;
            search_result_free(r);
            cg_free(g);
            if (rc) break;
        }
        strategy_evaluate(m, ci, &ev[s]);
        if (configs) memcpy(configs + (size_t)s * (size_t)m->n_layers, ci, sizeof(int) * (size_t)m->n_layers);
    }
    free(ci);
    return rc;
}

const char *baseline_name(baseline_kind b)
{
    return (b >= 0 && b < BASE__COUNT) ? base_names[b] : "?";
}

int baseline_from_name(const char *s)
{
    for (int b = 0; b < BASE__COUNT; b++)
        if (strcmp(s, base_names[b]) == 0) return b;
    return -1;
}

int strategy_find_config(const cost_model *m, int li, const config *want)
{
    config c = *want;
    for (;;) {
        int k = config_find(m->configs[li], m->n_configs[li], &c);
        if (k >= 0) return k;
        /* halve the largest degree that is above 1 and try again */
        int best = -1;
        for (int d = 0; d < NDIMS; d++)
            if (c.deg[d] > 1 && (best < 0 || c.deg[d] >= c.deg[best])) best = d;
        if (best < 0) return 0; /* the single-GPU config is always first */
        c.deg[best] /= 2;
    }
}

static int pow2_floor(long x)
{
    int p = 1;
    while ((long)p * 2 <= x) p *= 2;
    return p;
}

void strategy_baseline(const cost_model *m, baseline_kind b, int *ci)
{
    int G = pow2_floor(m->gpus);
    int first_linear = m->n_layers;
    for (int i = 0; i < m->n_layers; i++)
        if (m->net->layers[i].type == LT_LINEAR) {
            first_linear = i;
            break;
        }
    for (int i = 0; i < m->n_layers; i++) {
        config want = {{1, 1, 1, 1, 1, 1}};
        int model = b == BASE_MODEL || (b == BASE_OWT && i >= first_linear);
        if (model)
            want.deg[DIM_C] = G;
        else
            want.deg[DIM_N] = G;
        ci[i] = strategy_find_config(m, i, &want);
    }
}

int strategy_is_builtin(const char *name)
{
    return baseline_from_name(name) >= 0 || strcmp(name, "megatron") == 0;
}

int strategy_megatron_applies(const network *net)
{
    for (int i = 0; i < net->n_layers; i++)
        if (net->layers[i].type == LT_ATTENTION) return 1;
    return 0;
}

/* The first attention layer whose heads t does not divide, or -1. */
static int heads_not_divided(const network *net, int t)
{
    for (int i = 0; i < net->n_layers; i++)
        if (net->layers[i].type == LT_ATTENTION && net->layers[i].heads % t != 0) return i;
    return -1;
}

int strategy_megatron_default_tp(const cost_model *m)
{
    int t = pow2_floor(m->cl->gpus_per_node < m->gpus ? m->cl->gpus_per_node : m->gpus);
    while (t > 1 && heads_not_divided(m->net, t) >= 0) t /= 2;
    return t;
}

/* How Megatron splits a layer: by the sample only (n), its output features
 * (column-parallel: c), its input features (row-parallel: r, partial
 * sums), replicated in the tensor-parallel group (x, or s with sequence
 * parallelism), or as the input (the sequence, or the image's rows). */
typedef enum { MG_N, MG_COL, MG_ROW, MG_REPL, MG_INPUT } megatron_role;

static megatron_role megatron_role_of(const layer *l, int input_col)
{
    int seq = l->out.rank == 3;
    switch (l->type) {
    case LT_INPUT: return MG_INPUT;
    case LT_ATTENTION: case LT_LM_HEAD: case LT_PATCH_EMBED: return MG_COL;
    case LT_EMBEDDING: return MG_ROW;
    case LT_LINEAR: return !seq ? MG_N : input_col ? MG_ROW : MG_COL;
    case LT_GELU: case LT_RELU: case LT_SWIGLU: case LT_DROPOUT: case LT_CLS_TOKEN: case LT_SELECT_TOKEN:
        if (input_col && (l->dims & DIMMASK(DIM_C))) return MG_COL;
        break;
    default: break;
    }
    return seq && (l->dims & DIMMASK(DIM_X)) ? MG_REPL : MG_N;
}

static config megatron_config(const layer *l, megatron_role role, int n, int t, int sp)
{
    config c = CONFIG_ONE;
    c.deg[DIM_N] = n;
    int seq_fits = (l->dims & DIMMASK(DIM_H)) && l->out.h >= t;
    switch (role) {
    case MG_COL: c.deg[DIM_C] = t; break;
    case MG_ROW: c.deg[DIM_R] = t; break;
    case MG_REPL: c.deg[sp && seq_fits ? DIM_H : DIM_X] = t; break;
    case MG_INPUT: if (seq_fits) c.deg[DIM_H] = t; break;
    case MG_N: break;
    }
    return c;
}

int strategy_megatron_check_tp(const network *net, int gpus, int t, lw_error *err)
{
    if (!strategy_megatron_applies(net))
        return lw_fail(err, 2,
                       "megatron: network \"%s\" has no transformer layers (attention): Megatron's plan splits the "
                       "heads and features of transformer blocks; use data, model or owt",
                       net->name);
    if (t & (t - 1))
        return lw_fail(err, 2, "megatron: the tensor-parallel degree --tp %d must be a power of two", t);
    int G = pow2_floor(gpus);
    if (t > G && G == gpus)
        return lw_fail(err, 2, "megatron: the tensor-parallel degree --tp %d is more than the %d GPU%s", t, G,
                       G == 1 ? "" : "s");
    if (t > G)
        return lw_fail(err, 2, "megatron: the tensor-parallel degree --tp %d is more than the %d GPUs a plan of powers "
                       "of two uses of %d", t, G, gpus);
    int bad = heads_not_divided(net, t);
    if (bad >= 0)
        return lw_fail(err, 2,
                       "megatron: --tp %d does not divide the %d heads of attention layer \"%s\" (each rank takes "
                       "whole heads); the largest power of two that divides them: --tp %d",
                       t, net->layers[bad].heads, net->layers[bad].name,
                       net->layers[bad].heads & -net->layers[bad].heads);
    return 0;
}

int strategy_megatron(const cost_model *m, const megatron_options *opt, int *ci, lw_error *err)
{
    const network *net = m->net;
    int t = opt && opt->tp > 0 ? opt->tp : strategy_megatron_default_tp(m), sp = opt && opt->sp;
    if (strategy_megatron_check_tp(net, m->gpus, t, err) != 0) return -1;
    int G = pow2_floor(m->gpus);
    int n = G / t;
    if (n > pow2_floor(m->batch)) n = pow2_floor(m->batch);
    unsigned char *col = lw_calloc((size_t)net->n_layers, 1);
    int rc = 0;
    for (int i = 0; i < net->n_layers && rc == 0; i++) {
        const layer *l = &net->layers[i];
        megatron_role role = megatron_role_of(l, l->n_inputs > 0 && col[l->inputs[0]]);
        col[i] = role == MG_COL;
        config c = megatron_config(l, role, n, t, sp);
        ci[i] = config_find(m->configs[i], m->n_configs[i], &c);
        if (ci[i] < 0) {
            char buf[64];
            config_format_layer(l, &c, buf, sizeof buf);
            rc = lw_fail(err, 2,
                         "megatron: layer \"%s\" (%s) cannot take its config %s on %d GPUs at batch %ld (a degree "
                         "over its dimension's size, or a partial-sum split longer than its sequence)",
                         l->name, layer_type_name(l->type), buf, m->gpus, m->batch);
        }
    }
    free(col);
    return rc;
}

cJSON *config_to_json(const layer *l, const config *c)
{
    cJSON *o = cJSON_CreateObject();
    for (int d = 0; d < NCDIMS; d++)
        if (l->dims & DIMMASK(d)) {
            /* a rank-3 (transformer) tensor's H is its sequence: "s" */
            char k[2] = {d == DIM_H && l->out.rank == 3 ? 's' : config_dim_letter[d], 0};
            cJSON_AddNumberToObject(o, k, c->deg[d] > 0 ? c->deg[d] : 1);
        }
    return o;
}

cJSON *doc_new(const char *format, const cost_model *m, int gpus_used)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", format);
    cJSON_AddStringToObject(root, "network", m->net->name);
    cJSON_AddStringToObject(root, "cluster", m->cl->name);
    cJSON_AddNumberToObject(root, "gpus", m->gpus);
    if (gpus_used >= 0) cJSON_AddNumberToObject(root, "gpus_used", gpus_used);
    cJSON_AddNumberToObject(root, "batch", (double)m->batch);
    cJSON_AddStringToObject(root, "precision", precision_name(m->prec));
    return root;
}

void doc_add_throughput(cJSON *o, const cost_model *m, const char *estimator, double step_ms, int gpus_used)
{
    double tflops, mfu;
    strategy_achieved(m, step_ms, gpus_used, &tflops, &mfu);
    cJSON_AddStringToObject(o, "estimator", estimator);
    cJSON_AddNumberToObject(o, "model_flops_per_step", strategy_model_flops_per_step(m));
    cJSON_AddNumberToObject(o, "tflops_per_gpu", tflops);
    cJSON_AddNumberToObject(o, "mfu", mfu);
}

char *strategy_to_json(const cost_model *m, const int *ci, const strategy_eval *ev, const char *algorithm,
                       int nodes_left, const char *final_method_name)
{
    cJSON *root = doc_new("layerwise-strategy/1", m, ev->gpus_used);
    cJSON_AddStringToObject(root, "algorithm", algorithm);
    if (nodes_left >= 0) cJSON_AddNumberToObject(root, "nodes_left", nodes_left);
    if (final_method_name) cJSON_AddStringToObject(root, "final_method", final_method_name);
    cJSON_AddStringToObject(root, "sync", sync_scheme_name(m->cl->sync));
    cJSON *arr = cJSON_AddArrayToObject(root, "layers");
    for (int i = 0; i < m->n_layers; i++) {
        const layer *l = &m->net->layers[i];
        const config *c = &m->configs[i][ci[i]];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", l->name);
        cJSON_AddItemToObject(o, "config", config_to_json(l, c));
        cJSON *dev = cJSON_AddArrayToObject(o, "devices");
        for (int k = 0; k < config_tasks(c); k++) cJSON_AddItemToArray(dev, cJSON_CreateNumber(k));
        cJSON_AddNumberToObject(o, "compute_ms", (ev->layers[i].compute_ms));
        cJSON_AddNumberToObject(o, "sync_ms", (ev->layers[i].sync_ms));
        cJSON_AddNumberToObject(o, "transfer_ms", (ev->layers[i].transfer_ms));
        cJSON_AddItemToArray(arr, o);
    }
    cJSON_AddNumberToObject(root, "total_ms", (ev->total_ms));
    cJSON_AddNumberToObject(root, "compute_ms", (ev->compute_ms));
    cJSON_AddNumberToObject(root, "sync_ms", (ev->sync_ms));
    cJSON_AddNumberToObject(root, "transfer_ms", (ev->transfer_ms));
    cJSON_AddNumberToObject(root, "images_per_s", round(ev->images_per_s * 10) / 10);
    doc_add_throughput(root, m, "eq1", ev->total_ms, ev->gpus_used);
    cJSON_AddNumberToObject(root, "bytes_per_step", round(ev->bytes_per_step));
    cJSON_AddNumberToObject(root, "peak_memory_bytes", round(ev->peak_memory_bytes));
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

/* "FILE:LINE: layer \"NAME\"" (the line of NAME's entry, if found). */
static const char *where_of(char *buf, size_t n, const char *text, const char *label, const char *name)
{
    int line = json_line_of_name(text, name);
    if (line)
        snprintf(buf, n, "%s:%d: layer \"%.200s\"", label, line, name);
    else
        snprintf(buf, n, "%s: layer \"%.200s\"", label, name);
    return buf;
}

/* Where a file's layers or configs do not fit this run, what the file says
 * it was written for, when that differs ("" otherwise): a strategy that
 * search wrote for another network or GPU count is the usual cause. */
static const char *written_for(const cJSON *root, const cost_model *m, char *buf, size_t n)
{
    const cJSON *net = cJSON_GetObjectItemCaseSensitive(root, "network");
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(root, "gpus");
    buf[0] = 0;
    if (cJSON_IsString(net) && strcmp(net->valuestring, m->net->name) != 0) {
        snprintf(buf, n, " (the file is a strategy for network \"%.100s\")", net->valuestring);
    } else if (cJSON_IsNumber(gpus) && gpus->valuedouble > m->gpus)
        snprintf(buf, n, " (the file was written for %.0f GPUs; this run has %d)", gpus->valuedouble, m->gpus);
    return buf;
}

int strategy_from_json(const cost_model *m, const char *text, size_t len, const char *label, int *ci, lw_error *err)
{
    cJSON *root = json_parse_doc(text, len, label, err);
    if (!root) return -1;
    int rc = -1;
    unsigned char *seen = lw_calloc((size_t)m->n_layers, 1);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    if (!cJSON_IsObject(root) || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, "layerwise-strategy/1") != 0) {
        lw_fail(err, 2, "%s: \"format\" must be \"layerwise-strategy/1\"", label);
        goto out;
    }
    if (!cJSON_IsArray(layers)) {
        lw_fail(err, 2, "%s: needs a \"layers\" array of {\"name\", \"config\"}", label);
        goto out;
    }
    int idx = 0;
    char hint[300];
    for (const cJSON *it = layers->child; it; it = it->next, idx++) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
        const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(it, "config");
        if (!cJSON_IsString(name)) {
            lw_fail(err, 2, "%s: layers[%d] needs a string \"name\"", label, idx);
            goto out;
        }
        /* "FILE:LINE: layer NAME", made only for a message: finding the
         * line scans the text, and doing it for every entry made reading a
         * strategy of n layers take time n^2 */
        char where_buf[320];
#define WHERE where_of(where_buf, sizeof where_buf, text, label, name->valuestring)
        int li = net_find(m->net, name->valuestring);
        if (li < 0) {
            lw_fail(err, 2, "%s: not a layer of network \"%s\"%s", WHERE, m->net->name, written_for(root, m, hint, sizeof hint));
            goto out;
        }
        if (seen[li]) {
            lw_fail(err, 2, "%s: listed twice", WHERE);
            goto out;
        }
        seen[li] = 1;
        const layer *l = &m->net->layers[li];
        config c = {{1, 1, 1, 1, 1, 1}};
        if (cJSON_IsString(cfg)) {
            if (config_parse(cfg->valuestring, &c) != 0) {
                lw_fail(err, 2,
                        "%s: config \"%.100s\" is not a config: a degree per dimension, each a power of two, as "
                        "\"n4 c2\" (letters n, c, h, w; s, r, x on sequence layers)",
                        WHERE, cfg->valuestring);
                goto out;
            }
        } else if (cJSON_IsObject(cfg)) {
            for (const cJSON *d = cfg->child; d; d = d->next) {
                const char *p = strlen(d->string) == 1 && d->string[0] ? strchr("nchwrxs", d->string[0]) : NULL;
                double v = cJSON_IsNumber(d) ? d->valuedouble : -1;
                if (!p) {
                    lw_fail(err, 2, "%s: config has unknown dimension \"%.50s\" (use n, c, h, w; s, r, x on sequence layers)",
                            WHERE, d->string);
                    goto out;
                }
                if (v < 1 || v > 1 << 20 || v != floor(v)) {
                    lw_fail(err, 2, "%s: config \"%s\" must be a positive integer", WHERE, d->string);
                    goto out;
                }
                c.deg[*p == 's' ? DIM_H : (int)(p - "nchwrxs")] = (int)v;
            }
        } else {
            lw_fail(err, 2, "%s: needs a \"config\" object such as {\"n\": 4, \"c\": 1}", WHERE);
            goto out;
        }
        char why[96];
        if (config_unsplittable(l, &c, why, sizeof why)) {
            lw_fail(err, 2, "%s: %s", WHERE, why);
            goto out;
        }
        int k = config_find(m->configs[li], m->n_configs[li], &c);
        if (k < 0) {
            char buf[64];
            config_format_layer(l, &c, buf, sizeof buf);
            lw_fail(err, 2,
                    "%s: config %s is not valid here (degrees must be powers of two, their product at most %d "
                    "GPUs, each at most its dimension's size)%s",
                    WHERE, buf, m->gpus, written_for(root, m, hint, sizeof hint));
            goto out;
        }
        ci[li] = k;
    }
#undef WHERE
    for (int i = 0; i < m->n_layers; i++)
        if (!seen[i]) {
            lw_fail(err, 2, "%s: layer \"%s\" of network \"%s\" is missing%s", label, m->net->layers[i].name,
                    m->net->name, written_for(root, m, hint, sizeof hint));
            goto out;
        }
    rc = 0;
out:
    free(seen);
    cJSON_Delete(root);
    return rc;
}
