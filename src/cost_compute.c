/*
 * cost_compute: t_c, the forward and backward time of one task of a layer
 * (the largest piece of each dimension, so the slowest task): a roofline
 * per phase over the GPU's constants at the model's precision, with a cost
 * per kernel launch, unless a profile measured the task's shape.
 */
#include "cost_internal.h"

#include <math.h>
#include <string.h>

/* The operator class whose efficiency a layer's kernels reach (gpu_consts). */
static int op_class(layer_type t)
{
    switch (t) {
    case LT_CONV2D: return OPC_CONV;
    case LT_LINEAR:
    case LT_ATTENTION:
    case LT_LM_HEAD:
    case LT_PATCH_EMBED: return OPC_LINEAR;
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
        /* only the GEMM-like operators have enough work per kernel to
         * saturate; saturation_gflop is the work of about 20 us at the
         * conv rate, and a linear GEMM's is the same 20 us at its own rate
         * (issue 32 fits the two efficiencies apart) */
        double half = (opc == OPC_CONV || opc == OPC_LINEAR) ? nk * g->saturation_gflop * 1e9 : 0;
        if (opc == OPC_LINEAR && g->efficiency[OPC_CONV] > 0 && g->efficiency[OPC_LINEAR] != g->efficiency[OPC_CONV])
            half *= g->efficiency[OPC_LINEAR] / g->efficiency[OPC_CONV];
        t_flop = (flops + half) / (g->peak_tflops * 1e12 * g->efficiency[opc]);
    }
    double t_mem = bytes / (mem_bw_gbs * 1e9 * g->memory_efficiency);
    return (t_flop > t_mem ? t_flop : t_mem) + nk * g->kernel_overhead_us * 1e-6;
}

/* Winograd F(m x m, r x r) for an r x r stride-1 convolution (r = 3 or 5;
 * 0 otherwise; Lavin & Gray, CVPR 2016). The fitted winograd_speedup is
 * the arithmetic saving s3 of the 3x3 case, (3m / (m + 2))^2, which fixes
 * the output tile m (2.25: F(2x2,3x3)); a 5x5 convolution runs the same
 * tile, F(m x m, 5x5), saving (5m / (m + 4))^2 (2.78 at m = 2). cuDNN
 * runs 3x3 filters fused (WINOGRAD: the transforms in on-chip memory, no
 * extra traffic) and 5x5 only non-fused (WINOGRAD_NONFUSED, cuDNN 5.1 on):
 * its transforms are kernels of their own that write the transformed input
 * and output, (m + r - 1)^2 / m^2 times their elements, to memory and read
 * them back, memory-bound work that a convolution with few channels does
 * not earn back, so cuDNN's autotuner keeps the direct (implicit GEMM)
 * algorithm there. *grow gets that ratio where the transforms go through
 * memory (5x5; 0 for 3x3); returns the saving (1: none). */
static double winograd_saving(double s3, int r, double *grow)
{
    *grow = 0;
    if (r == 0 || s3 <= 1 || s3 >= 9) return 1;
    const double q = sqrt(s3), mt = 2 * q / (3 - q), a = mt + r - 1;
    if (r == 5) *grow = (a / mt) * (a / mt);
    return (r * mt / a) * (r * mt / a);
}

/* Filter size r of a convolution Winograd can run (3x3 or 5x5, stride 1); 0 if none. */
static int winograd_r(const layer *l)
{
    if (l->type != LT_CONV2D || l->kh != l->kw || l->sh != 1 || l->sw != 1) return 0;
    return l->kh == 3 || l->kh == 5 ? l->kh : 0;
}

/* The forward and backward times (ms) of a convolution of `flops` (before
 * any Winograd saving) on constants g: the faster of the direct algorithm
 * and Winograd (its GEMMs at flops / saving, its transforms at memory
 * bandwidth: in and out elements transformed once forward, twice
 * backward, data and weight gradients), as cuDNN's autotuner picks. */
static void conv_times(const cost_model *m, const gpu_consts *g, int r, double flops, double in, double out,
                       double bytes_f, double bytes_b, int nk_b, double *tf, double *tb)
{
    const double mbw = m->cl->gpu.memory_bandwidth_gbs;
    *tf = phase_s(g, mbw, OPC_CONV, flops, bytes_f, 1) * 1e3;
    *tb = phase_s(g, mbw, OPC_CONV, 2 * flops, bytes_b, nk_b) * 1e3;
    double grow;
    const double s = winograd_saving(g->winograd_speedup, r, &grow);
    if (s <= 1) return;
    const double t_tr = 2 * grow * (in + out) * m->elem_bytes / (mbw * 1e9 * g->memory_efficiency) * 1e3;
    const double wf = phase_s(g, mbw, OPC_CONV, flops / s, bytes_f, 1) * 1e3 + t_tr;
    const double wb = phase_s(g, mbw, OPC_CONV, 2 * flops / s, bytes_b, nk_b) * 1e3 + 2 * t_tr;
    if (wf + wb < *tf + *tb) *tf = wf, *tb = wb;
}

/* With TF32 allowed, cuDNN's heuristics still choose among the FP32
 * algorithms (Winograd among them) and take the fastest: a convolution in
 * tf32 never costs more than in fp32 (same 4-byte tensors). flops: the
 * convolution's before any Winograd saving; *tf, *tb (ms) the tf32 times,
 * replaced by fp32's where those are less. */
static void tf32_conv_or_fp32(const cost_model *m, int r, double flops, double in, double out, double bytes_f,
                              double bytes_b, int nk_b, double *tf, double *tb)
{
    gpu_consts g32;
    if (cluster_gpu_consts(m->cl, PREC_FP32, &g32) != 0) return;
    double tf2, tb2;
    conv_times(m, &g32, r, flops, in, out, bytes_f, bytes_b, nk_b, &tf2, &tb2);
    if (tf2 + tb2 < *tf + *tb) *tf = tf2, *tb = tb2;
}

/* A stack that keeps fp16/bf16 activations in NCHW (stack "conv_layout":
 * "nchw"; PyTorch's default memory format) runs each convolution on
 * cuDNN's Tensor Core kernels, which work in NHWC, between layout
 * transposes: forward its input in and its output back, backward the
 * output's gradient in and the input's gradient back, and for the weight
 * gradient the input and the output's gradient again (NVIDIA's
 * DeepLearningExamples train AMP with --memory-format nhwc to avoid
 * them). Each transpose reads and writes its tensor at memory bandwidth,
 * a kernel of its own. Adds to *tf and *tb (ms). */
static void nchw_transposes(const cost_model *m, const gpu_consts *g, double in, double out, double *tf, double *tb)
{
    const cluster *cl = m->cl;
    if (!cl->stack.given || !cl->stack.conv_nchw || (cl->precision != PREC_FP16 && cl->precision != PREC_BF16))
        return;
    const double t = 2 * (in + out) * m->elem_bytes / (cl->gpu.memory_bandwidth_gbs * 1e9 * g->memory_efficiency) * 1e3;
    *tf += t + 2 * g->kernel_overhead_us * 1e-3;
    *tb += 2 * t + 4 * g->kernel_overhead_us * 1e-3;
}

/* Largest piece of S over D. */
static long max_piece(long S, int D)
{
    return (S + D - 1) / D;
}

/* A layer of a transformer block (what full recompute runs again): rank
 * 3, not the embeddings, the class token and its selection, or the head. */
static int block_layer(const layer *l)
{
    switch (l->type) {
    case LT_INPUT: case LT_EMBEDDING: case LT_PATCH_EMBED: case LT_CLS_TOKEN: case LT_SELECT_TOKEN:
    case LT_LM_HEAD: return 0;
    default: return l->out.rank == 3;
    }
}

/* The work of one attention task (the largest piece: b samples, q query
 * positions, a of the heads, kv of the key/value heads): the QKV GEMM
 * (gemm), the scores and the weighted sum (core: 2 b a q S d each, half
 * under a causal mask) with the softmax (5 per score), and the scores it
 * holds (b a q S, half under a causal mask), which the standard (unfused)
 * kernels move through memory (score_kernels_ms).
 * Context parallelism (h > 1): the task's K and V of the whole sequence
 * are all-gathered among the h tasks of its samples and heads forward and
 * their gradients reduce-scattered backward (ring collectives, kv_ms). */
typedef struct attn_work {
    double gemm, core, softmax, scores, kv_ms;
} attn_work;

static attn_work attention_work(const cost_model *m, const layer *l, const config *c)
{
    attn_work w = {0, 0, 0, 0, 0};
    const layer *x = &m->net->layers[l->inputs[0]];
    const double b = (double)max_piece(m->batch, c->deg[DIM_N]), S = (double)l->out.h;
    const double q = (double)max_piece(l->out.h, c->deg[DIM_H]);
    const int heads = l->heads > 0 ? l->heads : 1, kvh = l->kv_heads > 0 ? l->kv_heads : heads;
    const double a = (double)max_piece(heads, c->deg[DIM_C]), kv = (double)max_piece(kvh, c->deg[DIM_C]);
    const double d = l->head_dim > 0 ? (double)l->head_dim : (double)l->out.c / heads;
    const double mask = l->causal ? 0.5 : 1.0;
    w.gemm = 2.0 * b * q * (double)x->out.c * (a + 2 * kv) * d;
    w.core = 2.0 * 2.0 * b * a * q * S * d * mask;
    w.softmax = 5.0 * b * a * q * S * mask;
    w.scores = b * a * q * S * mask;
    if (c->deg[DIM_H] > 1) {
        const double kv_bytes = 2.0 * b * S * kv * d * m->elem_bytes;
        const int groups = c->deg[DIM_N] * c->deg[DIM_C];
        w.kv_ms = 1e3 * groups_allreduce_s((const cost_model_priv *)m, groups, c->deg[DIM_H], kv_bytes);
    }
    return w;
}

/* The element-wise kernels of standard (unfused) attention between its two
 * batched GEMMs, as BERT's and GPT-2's reference code runs them (scores /
 * sqrt(d), + mask, softmax, dropout: NVIDIA DeepLearningExamples'
 * PyTorch BERT modeling.py, BertSelfAttention): each its own kernel that
 * reads the s x s scores and writes them back, the dropout also its
 * one-byte keep mask; backward the dropout's (gradient and mask read,
 * written), the softmax's (gradient and output read, written) and the
 * scale's. Memory-bound kernels of their own, so their time adds to the
 * GEMMs' (a roofline over the layer's kernels together hid them under the
 * GEMM flops). *fwd_ms, *bwd_ms: their forward and backward times. */
static void score_kernels_ms(const cost_model *m, const attn_work *a, double *fwd_ms, double *bwd_ms)
{
    const double mbw = m->cl->gpu.memory_bandwidth_gbs, eb = m->elem_bytes;
    *fwd_ms = phase_s(&m->gk, mbw, OPC_ELEMENTWISE, a->softmax, a->scores * (8 * eb + 1), 4) * 1e3;
    *bwd_ms = phase_s(&m->gk, mbw, OPC_ELEMENTWISE, 2 * a->softmax, a->scores * (7 * eb + 1), 3) * 1e3;
}

/* The forward flops, bytes and kernels of a transformer layer's task
 * (out: its output elements, in: its input elements, w: its weights);
 * recompute_ms: what recompute runs again in backward, extra_ms: the
 * collectives it runs itself. 0 for a CNN layer (t_c_eval's own cases). */
static int transformer_work(const cost_model *m, const layer *l, const config *c, double out, double in, double w,
                            double *flops, double *bytes_f, int *nk_f, int *nk_b, double *extra_ms,
                            double *rerun_flops)
{
    const double r = c->deg[DIM_R], eb = m->elem_bytes;
    const layer *x = l->n_inputs ? &m->net->layers[l->inputs[0]] : NULL;
    *rerun_flops = 0;
    switch (l->type) {
    case LT_LINEAR: /* features read: the input's, sliced by r */
        if (l->out.rank != 3) return 0;
        *flops = 2.0 * out * (double)x->out.c / r;
        *nk_b = 2;
        return 1;
    case LT_LM_HEAD: /* the logits' GEMM and the cross-entropy over them */
        *flops = 2.0 * out * (double)x->out.c / r + 5.0 * out;
        *nk_f = 2;
        *nk_b = 3;
        /* split by hidden features (r), each task holds partial sums of
         * its logits: the loss needs them summed, and no consumer's edge
         * charges it (the head is the last layer), so the layer does:
         * a ring reduce-scatter among each r tasks forward and the
         * all-gather of the logits' gradient backward, one all-reduce */
        if (c->deg[DIM_R] > 1)
            *extra_ms = 1e3 * groups_allreduce_s((const cost_model_priv *)m,
                                                 c->deg[DIM_N] * c->deg[DIM_C] * c->deg[DIM_H] * c->deg[DIM_W],
                                                 c->deg[DIM_R], out * eb);
        return 1;
    case LT_PATCH_EMBED: /* a convolution of stride P: one GEMM over c P^2 pixels a patch */
        *flops = 2.0 * out * (double)x->out.c * l->patch * l->patch;
        *nk_b = 2;
        return 1;
    case LT_EMBEDDING: /* a gather of rows (and its scatter-add backward): memory-bound, no GEMM */
        *flops = out;
        *bytes_f = (in + 2.0 * out) * eb;
        return 1;
    case LT_ATTENTION: {
        attn_work a = attention_work(m, l, c);
        /* standard: the QKV GEMM and the two batched GEMMs here, the
         * score kernels apart (t_c_eval); flash: the QKV GEMM and one
         * fused kernel, softmax inside, the scores never in memory */
        const int standard = m->attention == ATTENTION_STANDARD;
        *flops = a.gemm + a.core + (standard ? 0 : a.softmax);
        *bytes_f = (in + out + w) * eb;
        *nk_f = standard ? 3 : 2;
        *nk_b = 2 * *nk_f;
        *extra_ms = a.kv_ms;
        if (m->recompute == RECOMPUTE_SELECTIVE && standard) *rerun_flops = a.core;
        return 1;
    }
    case LT_LAYERNORM: *flops = 8.0 * out; return 1;
    case LT_RMSNORM: *flops = 5.0 * out; return 1;
    case LT_GELU: *flops = 8.0 * out; return 1;
    case LT_SWIGLU: *flops = 6.0 * out; return 1;
    case LT_CLS_TOKEN: case LT_SELECT_TOKEN: *flops = out; return 1;
    default: return 0;
    }
}

/* Input elements one task of layer li in config c reads: the needed range
 * of each input, middle piece (a contraction split's slice of the
 * features); in_block gets input 0's extents. */
static double input_elems(const cost_model *m, int li, const config *c, long in_block[NDIMS])
{
    const layer *l = &m->net->layers[li];
    double in = 0;
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
            if (k == DIM_C && d->rslice && c->deg[DIM_R] > 1) /* its slice of the features */
                hi = lo + max_piece(hi - lo, c->deg[DIM_R]);
            if (s == 0) in_block[k] = hi - lo;
            v *= (double)(hi - lo);
        }
        in += v;
    }
    return in;
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
    long in_block[NDIMS] = {0, 0, 0, 0};
    const double in = input_elems(m, li, c, in_block);
    double shards = c->deg[DIM_C] * c->deg[DIM_R];
    double w = (double)layer_weights(m->net, li) / shards; /* a tied lm_head reads the table */
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

    double flops = 0, extra_ms = 0, rerun = 0;
    int nk_f = 1, nk_b = 1;
    double bytes_f = (in + out + w) * m->elem_bytes;
    const int tf_layer = transformer_work(m, l, c, out, in, w, &flops, &bytes_f, &nk_f, &nk_b, &extra_ms, &rerun);
    double bytes_b = 2 * bytes_f;
    if (!tf_layer) switch (l->type) {
    case LT_CONV2D: {
        const layer *x = &m->net->layers[l->inputs[0]];
        flops = 2.0 * out * (double)x->out.c * l->kh * l->kw; /* direct; conv_times weighs Winograd */
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
    if (l->type == LT_CONV2D) conv_times(m, g, winograd_r(l), flops, in, out, bytes_f, bytes_b, nk_b, &tf, &tb);
    if (l->type == LT_CONV2D && m->cl->precision == PREC_TF32)
        tf32_conv_or_fp32(m, winograd_r(l), flops, in, out, bytes_f, bytes_b, nk_b, &tf, &tb);
    double score_f = 0, score_b = 0; /* standard attention's element-wise kernels */
    if (l->type == LT_ATTENTION && m->attention == ATTENTION_STANDARD) {
        const attn_work a = attention_work(m, l, c);
        score_kernels_ms(m, &a, &score_f, &score_b);
        tf += score_f;
        tb += score_b;
    }
    if (l->type == LT_CONV2D) nchw_transposes(m, g, in, out, &tf, &tb);
    /* recompute in backward (rank-3 layers only); the layer's own collectives */
    if (m->recompute == RECOMPUTE_FULL && block_layer(l))
        tb += tf;
    else if (rerun > 0)
        tb += phase_s(g, mbw, opc, rerun, 0, 2) * 1e3 + score_f;
    tf += extra_ms / 2;
    tb += extra_ms / 2;
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
