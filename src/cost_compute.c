/*
 * cost_compute: t_c, the forward and backward time of one task of a layer
 * (the largest piece of each dimension, so the slowest task): a roofline
 * per phase over the GPU's constants at the model's precision, with a cost
 * per kernel launch, unless a profile measured the task's shape.
 */
#include "cost_internal.h"

#include <string.h>

/* The operator class whose efficiency a layer's kernels reach (gpu_consts). */
static int op_class(layer_type t)
{
    switch (t) {
    case LT_CONV2D: return OPC_CONV;
    case LT_LINEAR: return OPC_LINEAR;
    case LT_POOL2D: return OPC_POOL;
    default: return OPC_ELEMENTWISE;
    }
}

/* One phase (forward or backward) of nk kernels: roofline per phase plus a
 * fixed launch cost per kernel. A kernel of F flops reaches the fraction
 * F / (F + F_half) of its operator's efficiency (F_half =
 * saturation_gflop): small kernels cannot fill every SM. Seconds. */
static double phase_s(const gpu_consts *g, double mem_bw_gbs, int opc, double flops, double bytes, int nk)
{
    if (nk == 0) return 0;
    double t_flop = 0;
    if (flops > 0) {
        /* only the GEMM-like operators have enough work per kernel to saturate */
        double half = (opc == OPC_CONV || opc == OPC_LINEAR) ? nk * g->saturation_gflop * 1e9 : 0;
        t_flop = (flops + half) / (g->peak_tflops * 1e12 * g->efficiency[opc]);
    }
    double t_mem = bytes / (mem_bw_gbs * 1e9 * g->memory_efficiency);
    return (t_flop > t_mem ? t_flop : t_mem) + nk * g->kernel_overhead_us * 1e-6;
}

/* With TF32 allowed, cuDNN's heuristics still choose among the FP32
 * algorithms (Winograd among them) and take the fastest: a convolution in
 * tf32 never costs more than in fp32 (same 4-byte tensors). flops: the
 * convolution's before any Winograd saving; *tf, *tb (ms) the tf32 times,
 * replaced by fp32's where those are less. */
static void tf32_conv_or_fp32(const cost_model *m, int winograd, double flops, double bytes_f, double bytes_b, int nk_b,
                              double *tf, double *tb)
{
    gpu_consts g32;
    if (cluster_gpu_consts(m->cl, PREC_FP32, &g32) != 0) return;
    const double mbw = m->cl->gpu.memory_bandwidth_gbs;
    double f32 = winograd ? flops / g32.winograd_speedup : flops;
    double tf2 = phase_s(&g32, mbw, OPC_CONV, f32, bytes_f, 1) * 1e3;
    double tb2 = phase_s(&g32, mbw, OPC_CONV, 2 * f32, bytes_b, nk_b) * 1e3;
    if (tf2 + tb2 < *tf + *tb) *tf = tf2, *tb = tb2;
}

/* Largest piece of S over D. */
static long max_piece(long S, int D)
{
    return (S + D - 1) / D;
}

/* t_c with its parts: the profile key of the task's shape (key may be
 * NULL), the analytical forward and backward times (ms), and whether the
 * profile supplied the result. Returns the t_c the model uses. */
static double t_c_eval(const cost_model *m, int li, const config *c, profile_entry *key_out, double *fwd_ms,
                       double *bwd_ms, int *profiled)
{
    const layer *l = &m->net->layers[li];
    if (profiled) *profiled = 0;
    if (fwd_ms) *fwd_ms = 0;
    if (bwd_ms) *bwd_ms = 0;
    if (key_out) memset(key_out, 0, sizeof *key_out);
    /* The input layer carries the per-step cost outside the kernels (the
     * same for every config, so it never changes the optimum); a flatten
     * is a view and runs no kernel. */
    if (l->type == LT_INPUT) {
        if (fwd_ms) *fwd_ms = m->gk.step_overhead_ms;
        return m->gk.step_overhead_ms;
    }
    if (l->type == LT_FLATTEN) return 0;
    long o[NDIMS];
    for (int k = 0; k < NDIMS; k++) o[k] = max_piece(layer_dim_size(l, k, m->batch), c->deg[k]);
    double out = (double)o[0] * o[1] * o[2] * o[3];
    /* input block one task reads: the needed range of each input, middle piece */
    double in = 0;
    long in_block[NDIMS] = {0, 0, 0, 0};
    const cost_model_priv *pm = (const cost_model_priv *)m;
    for (int s = 0; s < l->n_inputs; s++) {
        const edge_desc *d = &pm->desc[pm->first_edge[li] + s];
        double v = 1;
        for (int k = 0; k < NDIMS; k++) {
            long lo, hi;
            if (d->flat && k > 0) {
                lo = 0;
                hi = k == 1 ? max_piece(d->Sc[1], c->deg[1]) : 1;
            } else {
                need_range(d, k, c->deg[k], c->deg[k] / 2, &lo, &hi);
            }
            if (s == 0) in_block[k] = hi - lo;
            v *= (double)(hi - lo);
        }
        in += v;
    }
    double shards = c->deg[DIM_C];
    double w = (double)l->n_params / shards;
    const gpu_consts *g = &m->gk;

    profile_entry key;
    memset(&key, 0, sizeof key);
    key.type = l->type;
    key.n_inputs = l->n_inputs; /* an add of 3 inputs costs more than one of 2 with the same shapes */
    for (int k = 0; k < NDIMS; k++) {
        key.in[k] = in_block[k];
        key.out[k] = o[k];
    }
    if (l->type == LT_CONV2D || l->type == LT_POOL2D) {
        key.k[0] = l->kh, key.k[1] = l->kw;
        key.s[0] = l->sh, key.s[1] = l->sw;
        key.p[0] = l->ph, key.p[1] = l->pw;
    }
    if (key_out) *key_out = key;
    double measured = m->prof ? profile_lookup(m->prof, &key) : -1;

    double flops = 0;
    int nk_f = 1, nk_b = 1, winograd = 0;
    double bytes_f = (in + out + w) * m->elem_bytes;
    double bytes_b = 2 * bytes_f;
    switch (l->type) {
    case LT_CONV2D: {
        const layer *x = &m->net->layers[l->inputs[0]];
        flops = 2.0 * out * (double)x->out.c * l->kh * l->kw;
        winograd = l->kh == 3 && l->kw == 3 && l->sh == 1 && l->sw == 1;
        if (winograd) flops /= g->winograd_speedup;
        nk_b = 2; /* data gradient and weight gradient */
        break;
    }
    case LT_LINEAR: {
        const layer *x = &m->net->layers[l->inputs[0]];
        flops = 2.0 * out * (double)shape_elems(x->out);
        nk_b = 2;
        break;
    }
    case LT_POOL2D: flops = out * l->kh * l->kw; break;
    case LT_BATCHNORM: flops = 4.0 * out; break;
    case LT_SOFTMAX: flops = 5.0 * out; break;
    case LT_CONCAT: flops = 0; break;
    default: flops = out; break; /* relu, dropout, add */
    }
    int opc = op_class(l->type);
    const double mbw = m->cl->gpu.memory_bandwidth_gbs;
    double tf = phase_s(g, mbw, opc, flops, bytes_f, nk_f) * 1e3, tb = phase_s(g, mbw, opc, 2 * flops, bytes_b, nk_b) * 1e3;
    if (opc == OPC_CONV && m->cl->precision == PREC_TF32) {
        double f32 = winograd ? flops * g->winograd_speedup : flops; /* before any Winograd saving */
        tf32_conv_or_fp32(m, winograd, f32, bytes_f, bytes_b, nk_b, &tf, &tb);
    }
    if (fwd_ms) *fwd_ms = tf;
    if (bwd_ms) *bwd_ms = tb;
    if (measured >= 0) {
        if (profiled) *profiled = 1;
        return measured;
    }
    return tf + tb;
}

/* t_c of layer li's config c (ms); *profiled: 1 where a profile gave it (cost.h). */
double cost_t_c(const cost_model *m, int li, const config *c, int *profiled)
{
    return t_c_eval(m, li, c, NULL, NULL, NULL, profiled);
}

/* t_c with its analytical parts and the task's profile key (cost.h). */
double cost_t_c_parts(const cost_model *m, int li, const config *c, profile_entry *key, double *fwd_ms,
                      double *bwd_ms)
{
    return t_c_eval(m, li, c, key, fwd_ms, bwd_ms, NULL);
}
