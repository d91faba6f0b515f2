#include "info.h"

#include "data.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void net_info_compute(const network *net, net_info *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < net->n_layers; i++) {
        const layer *l = &net->layers[i];
        o->activation_bytes += 4.0 * (double)shape_elems(l->out);
        if (l->type == LT_INPUT) continue;
        o->layers++;
        o->by_type[l->type]++;
        o->parameters += l->n_params;
        double f = layer_flops_per_sample(net, i), mm = layer_matmul_flops_per_sample(net, i);
        o->forward_flops += mm;
        o->elementwise_flops += f - mm;
    }
}

/* Letters of the degrees a layer's configs may have: "nchw", a sequence
 * layer's "ncs", and r (contraction) and x (replicas) where allowed. */
static void split_dims(const layer *l, char *buf)
{
    int k = 0;
    const char *letters = l->out.rank == 3 ? "ncswrx" : "nchwrx";
    for (int d = 0; d < NCDIMS; d++)
        if (l->dims & DIMMASK(d)) buf[k++] = letters[d];
    buf[k] = 0;
}

char *net_info_json(const network *net)
{
    net_info in;
    net_info_compute(net, &in);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "format", "layerwise-info/1");
    cJSON_AddStringToObject(r, "network", net->name);
    cJSON_AddNumberToObject(r, "layers", in.layers);
    cJSON_AddNumberToObject(r, "parameters", (double)in.parameters);
    cJSON_AddNumberToObject(r, "forward_flops_per_sample", in.forward_flops);
    cJSON_AddNumberToObject(r, "elementwise_flops_per_sample", in.elementwise_flops);
    cJSON_AddNumberToObject(r, "activation_bytes_per_sample", in.activation_bytes);
    cJSON *bt = cJSON_AddObjectToObject(r, "by_type");
    for (int t = 1; t < LT__COUNT; t++)
        if (in.by_type[t]) cJSON_AddNumberToObject(bt, layer_type_name((layer_type)t), in.by_type[t]);
    const layer *l0 = &net->layers[0];
    cJSON *inp = cJSON_AddObjectToObject(r, "input");
    cJSON_AddStringToObject(inp, "name", l0->name);
    cJSON_AddNumberToObject(inp, "channels", (double)l0->out.c);
    cJSON_AddNumberToObject(inp, "height", (double)l0->out.h);
    cJSON_AddNumberToObject(inp, "width", (double)l0->out.w);
    cJSON *arr = cJSON_AddArrayToObject(r, "per_layer");
    for (int i = 0; i < net->n_layers; i++) {
        const layer *l = &net->layers[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", l->name);
        cJSON_AddStringToObject(o, "type", layer_type_name(l->type));
        cJSON *sh = cJSON_AddArrayToObject(o, "output");
        if (l->out.rank == 3) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)l->out.h)); /* [sequence, features] */
        cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)l->out.c));
        if (l->out.rank == 4) {
            cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)l->out.h));
            cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)l->out.w));
        }
        cJSON_AddNumberToObject(o, "parameters", (double)l->n_params);
        cJSON_AddNumberToObject(o, "flops_per_sample", layer_flops_per_sample(net, i));
        char d[NCDIMS + 1];
        split_dims(l, d);
        cJSON *sp = cJSON_AddArrayToObject(o, "splits");
        for (int k = 0; d[k]; k++) {
            char s[2] = {d[k], 0};
            cJSON_AddItemToArray(sp, cJSON_CreateString(s));
        }
        cJSON_AddItemToArray(arr, o);
    }
    char *s = cJSON_Print(r);
    cJSON_Delete(r);
    return s;
}

/* 25557032 -> "25,557,032" */
static void thousands(double v, char *buf, size_t n)
{
    char raw[40];
    snprintf(raw, sizeof raw, "%.0f", v);
    size_t len = strlen(raw), k = 0;
    for (size_t i = 0; i < len && k + 2 < n; i++) {
        buf[k++] = raw[i];
        if (raw[i] != '-' && (len - i - 1) % 3 == 0 && i + 1 < len) buf[k++] = ',';
    }
    buf[k] = 0;
}

char *net_info_text(const network *net)
{
    net_info in;
    net_info_compute(net, &in);
    lw_buf b = {0};
    char p[48], ab[32], sh[64];
    thousands((double)in.parameters, p, sizeof p);
    lw_format_bytes(in.activation_bytes, ab, sizeof ab);
    shape_format(net->layers[0].out, sh, sizeof sh);
    lw_buf_printf(&b, "network %s: input \"%s\" %s, %d layers\n", net->name, net->layers[0].name, sh, in.layers);
    lw_buf_printf(&b, "  parameters (trainable)      %s\n", p);
    lw_buf_printf(&b, "  forward FLOPs per sample    %.4g G (convolutions, linear layers, attention's matrix products; %.4g G multiply-adds)\n",
                  in.forward_flops / 1e9, in.forward_flops / 2e9);
    lw_buf_printf(&b, "  element-wise FLOPs          %.4g G (pooling, normalisation, activations, add, softmax, embeddings)\n",
                  in.elementwise_flops / 1e9);
    lw_buf_printf(&b, "  activations per sample      %s (every layer's output, fp32)\n", ab);
    lw_buf_printf(&b, "  by type:");
    for (int t = 1; t < LT__COUNT; t++)
        if (in.by_type[t]) lw_buf_printf(&b, " %s %d", layer_type_name((layer_type)t), in.by_type[t]);
    lw_buf_printf(&b, "\n\n  %-32s %-9s %-14s %12s %12s  %s\n", "layer", "type", "output", "parameters", "MFLOPs",
                  "splits");
    for (int i = 0; i < net->n_layers; i++) {
        const layer *l = &net->layers[i];
        char d[NCDIMS + 1];
        split_dims(l, d);
        shape_format(l->out, sh, sizeof sh);
        thousands((double)l->n_params, p, sizeof p);
        lw_buf_printf(&b, "  %-32.200s %-9s %-14s %12s %12.3f  %s\n", l->name, layer_type_name(l->type), sh, p,
                      layer_flops_per_sample(net, i) / 1e6, d);
    }
    return b.s;
}

static int fail(const lw_error *e)
{
    lw_buf b = {0};
    lw_text_printable(&b, e->msg);
    fprintf(stderr, "layerwise: %s\n", b.s);
    lw_buf_free(&b);
    return e->code ? e->code : 1;
}

/* The document to out (atomically) or stdout. */
static int put(const char *out, const char *doc)
{
    if (!out) {
        fputs(doc, stdout);
        fputc('\n', stdout);
        return 0;
    }
    lw_buf b = {0};
    lw_buf_printf(&b, "%s\n", doc);
    lw_error err = {0};
    int rc = lw_write_output(out, b.s, b.len, &err);
    lw_buf_free(&b);
    return rc ? fail(&err) : 0;
}

int info_command(const char *net_name, int json, const char *out)
{
    lw_error err = {0};
    network *net = plan_load_network(net_name, &err);
    if (!net) return fail(&err);
    char *doc = json ? net_info_json(net) : net_info_text(net);
    int rc;
    if (json) rc = put(out, doc);
    else if (out) rc = put(out, doc);
    else {
        fputs(doc, stdout);
        rc = 0;
    }
    free(doc);
    net_free(net);
    return rc;
}

int import_command(const char *path, const char *out, const onnx_options *opt)
{
    lw_error err = {0};
    onnx_counts cnt = {0};
    char *json = NULL;
    network *net = onnx_load_file(path, opt, &cnt, &json, &err);
    if (!net) return fail(&err);
    int rc = put(out, json);
    if (rc == 0) {
        net_info in;
        net_info_compute(net, &in);
        char p[48];
        thousands((double)in.parameters, p, sizeof p);
        lw_buf b = {0}, ob = {0};
        lw_text_printable(&b, path);
        if (out) lw_text_printable(&ob, out);
        fprintf(out ? stdout : stderr,
                "imported %s%s%s: %d layers, %s parameters, %.4g GFLOPs forward per sample (%.4g G element-wise); "
                "%d ONNX nodes (opset %d): %d mapped to layers, %d folded\n",
                b.s, out ? " into " : "", out ? ob.s : "", in.layers, p, in.forward_flops / 1e9,
                in.elementwise_flops / 1e9, cnt.nodes, cnt.opset, cnt.mapped, cnt.folded);
        if (cnt.parameters < in.parameters) {
            thousands((double)cnt.parameters, p, sizeof p);
            fprintf(out ? stdout : stderr,
                    "  weights used by more than one layer (tied): %s parameters in the ONNX file; the network "
                    "file counts each layer's\n",
                    p);
        }
        lw_buf_free(&b);
        lw_buf_free(&ob);
    }
    free(json);
    net_free(net);
    return rc;
}
