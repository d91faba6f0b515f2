/*
 * onnx_ops: one ONNX node at a time (c->node): its output shapes inferred,
 * constants folded, and the layerwise layers it becomes, or a refusal that
 * says why. See onnx_internal.h.
 */
#include "onnx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- layers ------------------------------------------------------------ */

/* A name a layerwise file accepts: printable UTF-8 of at most LW_NAME_MAX
 * characters (other bytes become '_'), unique (a suffix _2, _3, ...). */
char *ox_unique_name(ctx *c, const char *want)
{
    char base[LW_NAME_MAX + 1];
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)(want ? want : ""); *p && k < 180; p++)
        base[k++] = (*p < 0x20 || *p >= 0x7f) ? '_' : (char)*p;
    base[k] = 0;
    if (!k) snprintf(base, sizeof base, "layer");
    char cand[LW_NAME_MAX + 16];
    snprintf(cand, sizeof cand, "%s", base);
    for (int s = 2;; s++) {
        int taken = 0;
        for (int i = 0; i < c->n_names && !taken; i++) taken = strcmp(c->names[i], cand) == 0;
        if (!taken) break;
        snprintf(cand, sizeof cand, "%s_%d", base, s);
    }
    if (c->n_names % 64 == 0) c->names = lw_realloc(c->names, sizeof(char *) * (size_t)(c->n_names + 64));
    c->names[c->n_names++] = lw_strdup(cand);
    return lw_strdup(cand);
}

static const char *node_label(const Onnx__NodeProto *n)
{
    if (n->name && n->name[0]) return n->name;
    if (n->n_output && n->output[0] && n->output[0][0]) return n->output[0];
    return n->op_type ? n->op_type : "node";
}

/* A new layer for the current node (suffix: for a second layer of one node). */
static olayer *new_layer(ctx *c, layer_type t, const char *suffix)
{
    if (c->n_layers >= NET_MAX_LAYERS) {
        ox_fail(c, "more than %d layers", NET_MAX_LAYERS);
        return NULL;
    }
    if (c->n_layers == c->cap_layers) {
        c->cap_layers = c->cap_layers ? c->cap_layers * 2 : 64;
        c->layers = lw_realloc(c->layers, sizeof(olayer) * (size_t)c->cap_layers);
    }
    olayer *l = &c->layers[c->n_layers++];
    memset(l, 0, sizeof *l);
    char want[LW_NAME_MAX + 32];
    snprintf(want, sizeof want, "%.180s%s", c->node ? node_label(c->node) : "data", suffix ? suffix : "");
    l->name = ox_unique_name(c, want);
    l->type = t;
    return l;
}

static void add_in(ctx *c, olayer *l, int from)
{
    if (l->n_in == 0)
        l->lw_rank = l->type == LT_LINEAR || l->type == LT_FLATTEN ? 2 : c->layers[from].lw_rank;
    l->in[l->n_in++] = from;
    c->layers[from].consumers++;
}

/* Layer li as flat features: itself, or a flatten layer after it (an
 * activation ONNX holds as (samples, features) may come from a layer
 * layerwise shapes (c, 1, 1), like the graph's input). -1 on error. */
static int as_flat(ctx *c, int li, int k)
{
    if (c->layers[li].lw_rank == 2) return li;
    char suf[32];
    snprintf(suf, sizeof suf, "/flatten%d", k);
    olayer *f = new_layer(c, LT_FLATTEN, suf);
    if (!f) return -1;
    add_in(c, f, li);
    return c->n_layers - 1;
}

/* ---- shape helpers ----------------------------------------------------- */

static int norm_axis(int64_t a, int rank, int *out)
{
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return -1;
    *out = (int)a;
    return 0;
}

/* Numpy broadcasting of two shapes. */
static int broadcast(const oval *a, const oval *b, int64_t *dims, int *rank)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    for (int k = 0; k < r; k++) {
        int ia = k - (r - a->rank), ib = k - (r - b->rank);
        int64_t x = ia >= 0 ? a->dims[ia] : 1, y = ib >= 0 ? b->dims[ib] : 1;
        if (x != y && x != 1 && y != 1) return -1;
        dims[k] = x == 1 ? y : x;
    }
    *rank = r;
    return 0;
}

static oval *in_val(ctx *c, int k)
{
    const Onnx__NodeProto *n = c->node;
    if ((size_t)k >= n->n_input || !n->input[k] || !n->input[k][0]) return NULL;
    return ox_val_find(c, n->input[k]);
}

/* Input k, which must exist. */
static oval *need_in(ctx *c, int k)
{
    const Onnx__NodeProto *n = c->node;
    if ((size_t)k >= n->n_input || !n->input[k] || !n->input[k][0]) {
        ox_fail(c, "input %d is missing", k);
        return NULL;
    }
    oval *v = ox_val_find(c, n->input[k]);
    if (!v) ox_fail(c, "input \"%.100s\" is not produced by an earlier node, an initializer or a graph input", n->input[k]);
    return v;
}

static int set_out(ctx *c, int k, const oval *v)
{
    const Onnx__NodeProto *n = c->node;
    if ((size_t)k >= n->n_output || !n->output[k] || !n->output[k][0]) {
        free(v->data);
        return 0;
    }
    ox_val_put(c, n->output[k], v);
    return 0;
}

static oval act_of(const oval *src, int li)
{
    oval v = *src;
    v.kind = V_ACT;
    v.layer = li;
    v.data = NULL;
    v.n_data = 0;
    return v;
}

static int check_sample(ctx *c, const int64_t *dims, int rank, const char *what)
{
    if (rank < 1 || dims[0] != c->batch) {
        char b[160];
        ox_fmt_dims(dims, rank, b, sizeof b);
        return ox_fail(c, "%s would make the activation %s: its sample dimension (%lld) would change", what, b,
                       (long long)c->batch);
    }
    return 0;
}

/* An activation given new dimensions without its elements moving (Reshape,
 * Flatten, Squeeze, Unsqueeze, a Transpose of ones): the same layer, or a
 * flatten layer when (c, h, w) becomes (features). */
static int view_change(ctx *c, const oval *x, const int64_t *dims, int rank, const char *what)
{
    if (check_sample(c, dims, rank, what) < 0) return -1;
    oval v = *x;
    v.rank = rank;
    memcpy(v.dims, dims, sizeof(int64_t) * (size_t)rank);
    if (ox_elems(&v) != ox_elems(x)) return ox_fail(c, "%s changes the number of elements", what);
    if (rank == x->rank && memcmp(dims, x->dims, sizeof(int64_t) * (size_t)rank) == 0) {
        c->counts.folded++;
        return set_out(c, 0, &v);
    }
    if ((rank == 2 && x->rank == 4 && c->layers[x->layer].lw_rank == 2) ||
        (rank == 4 && x->rank == 2 && dims[2] == 1 && dims[3] == 1)) {
        c->counts.folded++; /* features and (features, 1, 1): the same layer */
        return set_out(c, 0, &v);
    }
    if (rank == 2 && x->rank == 4) {
        olayer *l = new_layer(c, LT_FLATTEN, NULL);
        if (!l) return -1;
        add_in(c, l, x->layer);
        c->counts.mapped++;
        v.layer = c->n_layers - 1;
        return set_out(c, 0, &v);
    }
    char a[160], b[160];
    ox_fmt_dims(x->dims, x->rank, a, sizeof a);
    ox_fmt_dims(dims, rank, b, sizeof b);
    if (rank == 3 || x->rank == 3)
        return ox_fail(c, "%s turns activation %s into %s: a sequence%s", what, a, b, ox_transformer_note);
    return ox_fail(c, "%s turns activation %s into %s: layerwise has no layer that regroups an activation's dimensions "
                      "(only (c, h, w) -> features, as flatten)", what, a, b);
}

/* Integer values of a constant input, or an error naming it. */
static const int64_t *const_ints(ctx *c, const oval *v, int k, long *n)
{
    if (!v || v->kind != V_CONST || !v->data) {
        ox_fail(c, "input %d (\"%.100s\") must be a constant of integers known at import (a shape, axes or indices)%s", k,
                c->node->n_input > (size_t)k && c->node->input[k] ? c->node->input[k] : "",
                v && v->kind == V_ACT ? ": it is computed from the data" : "");
        return NULL;
    }
    *n = v->n_data;
    return v->data;
}

/* Counts input k of the node as a trainable tensor, once however many
 * layers use it. */
static void count_weight(ctx *c, int k)
{
    oval *w = in_val(c, k);
    if (!w || w->kind != V_CONST || w->counted) return;
    w->counted = 1;
    c->counts.parameters += ox_elems(w);
}

/* ---- ops --------------------------------------------------------------- */

/* The kernel of a Conv or pool node, k[0] x k[1], and its output channels
 * *M: a convolution takes both from its weight (M x C x KH x KW, with an
 * optional bias of M values, *bias set); a pool keeps the input's C channels
 * and a global pool's window is the whole H x W. */
static int window_kernel(ctx *c, int conv, int global, const oval *x, int64_t k[2], int64_t *M, int *bias)
{
    const Onnx__NodeProto *n = c->node;
    int64_t C = x->dims[1];
    *M = C;
    if (conv) {
        oval *w = need_in(c, 1);
        if (!w) return -1;
        if (w->kind != V_CONST) return ox_fail(c, "%s", "its weight is computed from the data (a dynamic convolution)");
        int64_t g = ox_attr_int(n, "group", 1);
        if (g != 1)
            return ox_fail(c, "grouped convolution (group=%lld) is not supported: layerwise's conv2d has no groups",
                           (long long)g);
        if (w->rank != 4 || w->dims[1] != C) {
            char b[160];
            ox_fmt_dims(w->dims, w->rank, b, sizeof b);
            return ox_fail(c, "weight \"%.100s\" is %s; a %lld-channel input needs Mx%lldxKHxKW", n->input[1], b,
                           (long long)C, (long long)C);
        }
        *M = w->dims[0];
        k[0] = w->dims[2];
        k[1] = w->dims[3];
        oval *bv = in_val(c, 2);
        if (bv) {
            if (bv->kind != V_CONST || ox_elems(bv) != *M)
                return ox_fail(c, "bias \"%.100s\" is not a constant of %lld values", n->input[2], (long long)*M);
            *bias = 1;
        }
    } else if (global) {
        k[0] = x->dims[2];
        k[1] = x->dims[3];
    } else {
        size_t na;
        const int64_t *a = ox_attr_ints(n, "kernel_shape", &na);
        if (!a || na != 2) return ox_fail(c, "%s", "needs a kernel_shape of 2 values");
        k[0] = a[0];
        k[1] = a[1];
    }
    return 0;
}

/* Pads from auto_pad, which ONNX resolves against the input in[0] x in[1]:
 * SAME_* pads so that the output is ceil(in / stride), VALID pads nothing.
 * Unset (or NOTSET) leaves p as the pads attribute gave it. */
static int window_auto_pad(ctx *c, const int64_t in[2], const int64_t k[2], const int64_t s[2], int64_t p[4])
{
    char ap[32];
    const char *autopad = ox_attr_str(c->node, "auto_pad", ap, sizeof ap);
    if (autopad && (strcmp(autopad, "SAME_UPPER") == 0 || strcmp(autopad, "SAME_LOWER") == 0)) {
        for (int d = 0; d < 2; d++) {
            if (s[d] < 1) break;
            int64_t out = (in[d] + s[d] - 1) / s[d];
            int64_t total = (out - 1) * s[d] + k[d] - in[d];
            if (total < 0) total = 0;
            if (total % 2)
                return ox_fail(c, "auto_pad %s pads %s unevenly (%lld in all): layerwise pads both sides alike", autopad,
                               d ? "the width" : "the height", (long long)total);
            p[d] = p[d + 2] = total / 2;
        }
    } else if (autopad && strcmp(autopad, "VALID") == 0) {
        memset(p, 0, sizeof(int64_t) * 4);
    } else if (autopad && autopad[0] && strcmp(autopad, "NOTSET") != 0) {
        return ox_fail(c, "auto_pad \"%.20s\" is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", autopad);
    }
    return 0;
}

/* Strides and pads of a windowed node from its attributes (a global pool
 * has none), refusing what layerwise's layers cannot express: dilations,
 * a kernel_shape other than the weight's. */
static int window_attrs(ctx *c, const int64_t in[2], const int64_t k[2], int64_t s[2], int64_t p[4])
{
    const Onnx__NodeProto *n = c->node;
    size_t na;
    const int64_t *a = ox_attr_ints(n, "kernel_shape", &na);
    if (a && (na != 2 || a[0] != k[0] || a[1] != k[1])) return ox_fail(c, "%s", "kernel_shape does not match the weight");
    a = ox_attr_ints(n, "strides", &na);
    if (a) {
        if (na != 2) return ox_fail(c, "%s", "strides must have 2 values");
        s[0] = a[0];
        s[1] = a[1];
    }
    for (int d = 0; d < 2; d++) {
        if (k[d] < 1 || k[d] > NET_MAX_DIM) return ox_fail(c, "kernel %lld is out of range", (long long)k[d]);
        if (s[d] < 1 || s[d] > NET_MAX_DIM) return ox_fail(c, "stride %lld is out of range", (long long)s[d]);
    }
    a = ox_attr_ints(n, "dilations", &na);
    if (a && (na != 2 || a[0] != 1 || a[1] != 1))
        return ox_fail(c, "%s", "dilated windows (dilations other than 1) are not supported by layerwise's layers");
    a = ox_attr_ints(n, "pads", &na);
    if (a) {
        if (na != 4) return ox_fail(c, "%s", "pads must have 4 values");
        memcpy(p, a, sizeof(int64_t) * 4);
    }
    return window_auto_pad(c, in, k, s, p);
}

/* The output height and width of the window over in[0] x in[1], after
 * checking it fits layerwise's conv2d and pool2d: sizes in range, the same
 * padding on both sides, padding smaller than the kernel, and (for a pool)
 * no ceil_mode that would add a window. */
static int window_output(ctx *c, int conv, const int64_t in[2], const int64_t k[2], const int64_t s[2],
                         const int64_t p[4], int64_t out[2])
{
    for (int d = 0; d < 2; d++) {
        if (k[d] < 1 || k[d] > NET_MAX_DIM) return ox_fail(c, "kernel %lld is out of range", (long long)k[d]);
        if (s[d] < 1 || s[d] > NET_MAX_DIM) return ox_fail(c, "stride %lld is out of range", (long long)s[d]);
        if (p[d] < 0 || p[d] > NET_MAX_DIM || p[d + 2] < 0) return ox_fail(c, "%s", "pads are out of range");
        if (p[d] != p[d + 2])
            return ox_fail(c, "pads %lld and %lld on the two sides of the %s differ: layerwise pads both sides alike",
                           (long long)p[d], (long long)p[d + 2], d ? "width" : "height");
        if (p[d] > 0 && p[d] >= k[d])
            return ox_fail(c, "padding %lld is not smaller than the kernel %lld", (long long)p[d], (long long)k[d]);
    }
    for (int d = 0; d < 2; d++) {
        int64_t span = in[d] + 2 * p[d] - k[d];
        if (span < 0)
            return ox_fail(c, "kernel %lld is larger than the padded input %lld", (long long)k[d], (long long)(in[d] + 2 * p[d]));
        out[d] = span / s[d] + 1;
        if (!conv && ox_attr_int(c->node, "ceil_mode", 0) && span % s[d] != 0)
            return ox_fail(c, "%s", "ceil_mode gives a window more than layerwise's pool2d (which rounds down)");
    }
    return 0;
}

/* Conv, MaxPool, AveragePool and their Global forms: a conv2d or pool2d
 * layer on a (samples, channels, height, width) activation. */
static int op_conv_pool(ctx *c, const char *op)
{
    int conv = strcmp(op, "Conv") == 0;
    int global = strncmp(op, "Global", 6) == 0;
    oval *x = need_in(c, 0);
    if (!x) return -1;
    if (x->kind != V_ACT) return ox_fail(c, "its input is a constant, not an activation");
    if (x->rank == 4 && c->layers[x->layer].lw_rank != 4)
        return ox_fail(c, "its input comes from flat features (\"%.100s\", made (features, 1, 1) by a reshape): "
                          "layerwise's conv2d and pool2d take (c, h, w) from a layer that has it",
                       c->layers[x->layer].name);
    if (x->rank != 4) {
        char a[160];
        ox_fmt_dims(x->dims, x->rank, a, sizeof a);
        return ox_fail(c, "input is %s: only 2-D %s (a 4-D input: samples, channels, height, width) is supported", a,
                       conv ? "convolution" : "pooling");
    }
    int64_t C = x->dims[1], in[2] = {x->dims[2], x->dims[3]};
    int64_t k[2], s[2] = {1, 1}, p[4] = {0, 0, 0, 0}, M, out[2];
    int bias = 0;
    if (window_kernel(c, conv, global, x, k, &M, &bias) < 0) return -1;
    if (!global && window_attrs(c, in, k, s, p) < 0) return -1;
    if (window_output(c, conv, in, k, s, p, out) < 0) return -1;
    if (conv && (double)M * ((double)C * k[0] * k[1] + 1) > 4e10) return ox_fail(c, "%s", "more than 4e10 parameters");
    if (M < 1 || M > NET_MAX_DIM) return ox_fail(c, "%lld output channels are out of range", (long long)M);
    olayer *l = new_layer(c, conv ? LT_CONV2D : LT_POOL2D, NULL);
    if (!l) return -1;
    add_in(c, l, x->layer);
    l->out_ch = M;
    l->kh = (int)k[0];
    l->kw = (int)k[1];
    l->sh = (int)s[0];
    l->sw = (int)s[1];
    l->ph = (int)p[0];
    l->pw = (int)p[1];
    l->bias = bias;
    l->pool_max = strstr(op, "Max") != NULL;
    if (conv) {
        count_weight(c, 1);
        count_weight(c, 2);
    }
    c->counts.mapped++;
    oval v = act_of(x, c->n_layers - 1);
    v.dims[1] = M;
    v.dims[2] = out[0];
    v.dims[3] = out[1];
    return set_out(c, 0, &v);
}

static int op_linear(ctx *c, int gemm)
{
    const Onnx__NodeProto *n = c->node;
    oval *a = need_in(c, 0), *b = a ? need_in(c, 1) : NULL;
    if (!b) return -1;
    if (a->kind == V_ACT && b->kind == V_ACT)
        return ox_fail(c, "a product of two activations (attention)%s", ox_transformer_note);
    if (a->kind != V_ACT) return ox_fail(c, "%s", "its first operand is a constant: only activation x weight is supported");
    if (gemm && ox_attr_int(n, "transA", 0)) return ox_fail(c, "%s", "transA=1 on an activation is not supported");
    if (a->rank != 2) {
        char s[160];
        ox_fmt_dims(a->dims, a->rank, s, sizeof s);
        if (a->rank == 3) return ox_fail(c, "its input is %s, a sequence%s", s, ox_transformer_note);
        return ox_fail(c, "its input is %s: a linear layer takes (samples, features); flatten it first", s);
    }
    if (b->rank != 2) return ox_fail(c, "%s", "its weight is not a matrix");
    int tb = gemm && ox_attr_int(n, "transB", 0);
    int64_t K = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
    if (K != a->dims[1])
        return ox_fail(c, "weight \"%.100s\" has %lld rows for %lld input features", n->input[1], (long long)K,
                       (long long)a->dims[1]);
    if (N < 1 || N > NET_MAX_DIM) return ox_fail(c, "%lld output features are out of range", (long long)N);
    olayer *l = new_layer(c, LT_LINEAR, NULL);
    if (!l) return -1;
    add_in(c, l, a->layer);
    l->out_features = N;
    oval *cv = gemm ? in_val(c, 2) : NULL;
    l->bias = cv != NULL;
    if (cv && cv->kind != V_CONST) return ox_fail(c, "%s", "its bias C is computed from the data");
    count_weight(c, 1);
    if (gemm) count_weight(c, 2);
    c->counts.mapped++;
    oval v = act_of(a, c->n_layers - 1);
    v.dims[1] = N;
    return set_out(c, 0, &v);
}

/* Unary ops that keep the shape: activation functions become relu, the
 * element-wise layer of layerwise; on constants they fold. */
static const char *const unary_ops[] = {"Relu", "LeakyRelu", "PRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish",
                                        "Tanh", "Erf", "Gelu", "Elu", "Selu", "Celu", "Softplus", "Softsign", "Mish",
                                        "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Floor", "Ceil", "Round",
                                        "Sign", "Not", "ThresholdedRelu", NULL};

static int in_list(const char *const *l, const char *s)
{
    for (; *l; l++)
        if (strcmp(*l, s) == 0) return 1;
    return 0;
}

static int op_unary(ctx *c, layer_type t)
{
    oval *x = need_in(c, 0);
    if (!x) return -1;
    if (x->kind == V_CONST) {
        oval v = *x;
        v.data = NULL;
        v.n_data = 0;
        c->counts.folded++;
        return set_out(c, 0, &v);
    }
    olayer *l = new_layer(c, t, NULL);
    if (!l) return -1;
    add_in(c, l, x->layer);
    c->counts.mapped++;
    oval v = act_of(x, c->n_layers - 1);
    return set_out(c, 0, &v);
}

static int op_binary(ctx *c, const char *op)
{
    const Onnx__NodeProto *n = c->node;
    oval *a = need_in(c, 0), *b = a ? need_in(c, 1) : NULL;
    if (!b) return -1;
    oval v = {0};
    if (broadcast(a, b, v.dims, &v.rank) < 0) {
        char x[160], y[160];
        ox_fmt_dims(a->dims, a->rank, x, sizeof x);
        ox_fmt_dims(b->dims, b->rank, y, sizeof y);
        return ox_fail(c, "shapes %s and %s do not broadcast", x, y);
    }
    if (a->kind == V_CONST && b->kind == V_CONST) {
        v.kind = V_CONST;
        int64_t ne = ox_elems(&v);
        if (a->data && b->data && ne <= MAX_DATA && (a->n_data == 1 || a->n_data == ne) && (b->n_data == 1 || b->n_data == ne)) {
            v.data = lw_malloc(sizeof(int64_t) * (size_t)(ne ? ne : 1));
            v.n_data = (long)ne;
            for (int64_t i = 0; i < ne; i++) {
                int64_t x = a->data[a->n_data == 1 ? 0 : i], y = b->data[b->n_data == 1 ? 0 : i], r;
                switch (op[0]) {
                case 'A': r = (int64_t)((uint64_t)x + (uint64_t)y); break;
                case 'S': r = (int64_t)((uint64_t)x - (uint64_t)y); break;
                case 'M': r = (int64_t)((uint64_t)x * (uint64_t)y); break;
                default: r = (y == 0 || (x == INT64_MIN && y == -1)) ? 0 : x / y; break;
                }
                v.data[i] = r;
            }
        }
        c->counts.folded++;
        return set_out(c, 0, &v);
    }
    if (a->kind == V_ACT && b->kind == V_ACT) {
        if (a->rank != b->rank || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) != 0) {
            char x[160], y[160];
            ox_fmt_dims(a->dims, a->rank, x, sizeof x);
            ox_fmt_dims(b->dims, b->rank, y, sizeof y);
            return ox_fail(c, "activations %s and %s broadcast: layerwise's add takes two activations of one shape", x, y);
        }
        int la = a->layer, lb = b->layer;
        if (c->layers[la].lw_rank != c->layers[lb].lw_rank && ((la = as_flat(c, la, 0)) < 0 || (lb = as_flat(c, lb, 1)) < 0))
            return -1;
        olayer *l = new_layer(c, LT_ADD, NULL);
        if (!l) return -1;
        add_in(c, l, la);
        add_in(c, l, lb);
        c->counts.mapped++;
        oval o = act_of(a, c->n_layers - 1);
        return set_out(c, 0, &o);
    }
    /* an activation and a constant: folded into the activation's producer */
    const oval *x = a->kind == V_ACT ? a : b, *k = a->kind == V_ACT ? b : a;
    if (v.rank != x->rank || memcmp(v.dims, x->dims, sizeof(int64_t) * (size_t)v.rank) != 0)
        return ox_fail(c, "the constant \"%.100s\" broadcasts the activation to a larger shape",
                       n->input[a->kind == V_ACT ? 1 : 0]);
    /* a MatMul's bias comes as an Add of a vector: the linear layer gets it */
    olayer *pl = &c->layers[x->layer];
    if (op[0] == 'A' && pl->type == LT_LINEAR && !pl->bias && pl->consumers == 0 && ox_elems(k) == pl->out_features) {
        pl->bias = 1;
        count_weight(c, a->kind == V_ACT ? 1 : 0);
    }
    c->counts.folded++;
    oval o = *x;
    return set_out(c, 0, &o);
}

static int op_batchnorm(ctx *c)
{
    oval *x = need_in(c, 0);
    if (!x) return -1;
    if (x->kind != V_ACT) return ox_fail(c, "%s", "its input is a constant");
    if (x->rank != 4 && x->rank != 2) return ox_fail(c, "%s", "only 2-D and 4-D inputs are supported");
    for (int k = 1; k <= 4; k++) {
        oval *p = need_in(c, k);
        if (!p) return -1;
        if (p->kind != V_CONST || ox_elems(p) != x->dims[1])
            return ox_fail(c, "input %d (\"%.100s\") is not a constant of %lld values", k, c->node->input[k],
                           (long long)x->dims[1]);
    }
    olayer *l = new_layer(c, LT_BATCHNORM, NULL);
    if (!l) return -1;
    add_in(c, l, x->layer);
    count_weight(c, 1); /* scale and shift; the running statistics are not trained */
    count_weight(c, 2);
    c->counts.mapped++;
    oval v = act_of(x, c->n_layers - 1);
    return set_out(c, 0, &v);
}

static int op_concat(ctx *c)
{
    const Onnx__NodeProto *n = c->node;
    if (n->n_input < 1) return ox_fail(c, "%s", "no inputs");
    oval *first = need_in(c, 0);
    if (!first) return -1;
    int axis;
    if (norm_axis(ox_attr_int(n, "axis", 1), first->rank, &axis) < 0) return ox_fail(c, "%s", "axis is out of range");
    int acts = 0;
    oval v = *first;
    v.data = NULL;
    v.n_data = 0;
    v.dims[axis] = 0;
    long nd = 0;
    for (size_t i = 0; i < n->n_input; i++) {
        oval *x = need_in(c, (int)i);
        if (!x) return -1;
        if (x->rank != first->rank) return ox_fail(c, "%s", "inputs of different ranks");
        for (int d = 0; d < x->rank; d++)
            if (d != axis && x->dims[d] != first->dims[d]) return ox_fail(c, "input %zu differs in dimension %d", i, d);
        v.dims[axis] += x->dims[axis];
        if (v.dims[axis] > DIM_LIMIT) return ox_fail(c, "%s", "the concatenation is too large");
        acts += x->kind == V_ACT;
        nd += x->data ? x->n_data : 0;
    }
    if (!acts) {
        v.kind = V_CONST;
        if (first->rank == 1 && nd == v.dims[0] && nd <= MAX_DATA) {
            v.data = lw_malloc(sizeof(int64_t) * (size_t)(nd ? nd : 1));
            long k = 0;
            int all = 1;
            for (size_t i = 0; i < n->n_input; i++) {
                oval *x = in_val(c, (int)i);
                if (!x->data) all = 0;
                for (long j = 0; all && j < x->n_data; j++) v.data[k++] = x->data[j];
            }
            if (all) v.n_data = nd;
            else {
                free(v.data);
                v.data = NULL;
            }
        }
        c->counts.folded++;
        return set_out(c, 0, &v);
    }
    if (acts != (int)n->n_input) return ox_fail(c, "%s", "a concatenation of activations and constants is not supported");
    if (axis != 1) return ox_fail(c, "concatenation on axis %d: layerwise concatenates channels (axis 1) only", axis);
    if (n->n_input > NET_MAX_INPUTS) return ox_fail(c, "more than %d inputs", NET_MAX_INPUTS);
    if (n->n_input == 1) {
        c->counts.folded++;
        return set_out(c, 0, &v);
    }
    olayer *l = new_layer(c, LT_CONCAT, NULL);
    if (!l) return -1;
    for (size_t i = 0; i < n->n_input; i++) add_in(c, l, in_val(c, (int)i)->layer);
    c->counts.mapped++;
    v.kind = V_ACT;
    v.layer = c->n_layers - 1;
    return set_out(c, 0, &v);
}

/* Reshape's result: the shape from its second input (its attribute before
 * opset 5), where 0 copies the input's dimension (unless allowzero) and one
 * -1 takes what the other dimensions leave. */
static int dims_of_reshape(ctx *c, const oval *x, int64_t *dims, int *rank)
{
    const Onnx__NodeProto *n = c->node;
    size_t na = 0;
    const int64_t *a = NULL;
    long nl = 0;
    if (c->opset < 5) {
        a = ox_attr_ints(n, "shape", &na);
        if (!a) return ox_fail(c, "%s", "no shape attribute");
    } else {
        oval *s = need_in(c, 1);
        if (!s) return -1;
        a = const_ints(c, s, 1, &nl);
        if (!a) return -1;
        na = (size_t)nl;
    }
    if (na > MAX_RANK) return ox_fail(c, "%s", "too many dimensions");
    int allowzero = (int)ox_attr_int(n, "allowzero", 0), minus = -1;
    int64_t known = 1;
    for (size_t k = 0; k < na; k++) {
        int64_t d = a[k];
        if (d == 0 && !allowzero) {
            if ((int)k >= x->rank) return ox_fail(c, "%s", "a 0 in the shape copies a dimension the input lacks");
            d = x->dims[k];
        }
        if (d == -1) {
            if (minus >= 0) return ox_fail(c, "%s", "two -1 in the shape");
            minus = (int)k;
            d = 1;
        } else if (d < 0 || d > DIM_LIMIT) {
            return ox_fail(c, "dimension %lld in the shape", (long long)d);
        }
        dims[k] = d;
        if (d && known > DIM_LIMIT / d) return ox_fail(c, "%s", "the shape is too large");
        known *= d;
    }
    if (minus >= 0) {
        if (known == 0 || ox_elems(x) % known) return ox_fail(c, "%s", "-1 in the shape cannot be inferred");
        dims[minus] = ox_elems(x) / known;
    }
    *rank = (int)na;
    return 0;
}

/* Flatten's result: (the dimensions before axis, the ones from it on). */
static int dims_of_flatten(ctx *c, const oval *x, int64_t *dims, int *rank)
{
    int64_t ax = ox_attr_int(c->node, "axis", 1);
    if (ax < 0) ax += x->rank;
    if (ax < 0 || ax > x->rank) return ox_fail(c, "%s", "axis out of range");
    oval lo = *x, hi = *x;
    lo.rank = (int)ax;
    hi.rank = x->rank - (int)ax;
    memmove(hi.dims, x->dims + ax, sizeof(int64_t) * (size_t)hi.rank);
    dims[0] = ox_elems(&lo);
    dims[1] = ox_elems(&hi);
    *rank = 2;
    return 0;
}

/* Transpose's result (perm, or the dimensions reversed). On an activation
 * it is accepted only when no element moves, i.e. the dimensions other than
 * ones keep their order: layerwise has no layer that permutes (c, h, w). */
static int dims_of_transpose(ctx *c, const oval *x, int64_t *dims, int *rank)
{
    size_t na = 0;
    const int64_t *a = ox_attr_ints(c->node, "perm", &na);
    if (a && na != (size_t)x->rank) return ox_fail(c, "%s", "perm does not match the rank");
    int seen[MAX_RANK] = {0};
    for (int k = 0; k < x->rank; k++) {
        int64_t p = a ? a[k] : x->rank - 1 - k;
        if (p < 0 || p >= x->rank || seen[p]++) return ox_fail(c, "%s", "perm is not a permutation");
        dims[k] = x->dims[p];
    }
    /* moving only dimensions of size 1 moves no element */
    int last = -1;
    for (int k = 0; k < x->rank && x->kind == V_ACT; k++) {
        int64_t p = a ? a[k] : x->rank - 1 - k;
        if (x->dims[p] == 1) continue;
        if (p < last) {
            char s[160];
            ox_fmt_dims(x->dims, x->rank, s, sizeof s);
            return ox_fail(c, "a transpose of activation %s moves its elements: layerwise's layers keep (c, h, w) "
                              "in that order%s",
                           s, x->rank == 3 ? ox_transformer_note : "");
        }
        last = (int)p;
    }
    *rank = x->rank;
    return 0;
}

/* Squeeze's or Unsqueeze's result (sq: Squeeze). The axes are an input
 * from opset 13, an attribute before; a Squeeze without axes drops every
 * dimension of size 1 except an activation's sample dimension. */
static int dims_of_squeeze(ctx *c, int sq, const oval *x, int64_t *dims, int *rank)
{
    size_t na = 0;
    const int64_t *a = NULL;
    long nl = 0;
    if (c->opset >= 13) {
        oval *s = in_val(c, 1);
        if (s) {
            a = const_ints(c, s, 1, &nl);
            if (!a) return -1;
            na = (size_t)nl;
        }
    } else {
        a = ox_attr_ints(c->node, "axes", &na);
    }
    if (!sq && !a) return ox_fail(c, "%s", "no axes");
    int out_rank = sq ? x->rank : x->rank + (int)na;
    if (out_rank > MAX_RANK || na > MAX_RANK) return ox_fail(c, "%s", "too many dimensions");
    int mark[MAX_RANK] = {0};
    for (size_t k = 0; k < na; k++) {
        int ax;
        if (norm_axis(a[k], out_rank, &ax) < 0 || mark[ax]) return ox_fail(c, "axis %lld is out of range", (long long)a[k]);
        mark[ax] = 1;
    }
    int r = 0;
    if (sq) {
        for (int k = 0; k < x->rank; k++) {
            int drop = a ? mark[k] : (x->dims[k] == 1 && !(x->kind == V_ACT && k == 0));
            if (drop && x->dims[k] != 1) return ox_fail(c, "axis %d has size %lld, not 1", k, (long long)x->dims[k]);
            if (!drop) dims[r++] = x->dims[k];
        }
    } else {
        int j = 0;
        for (int k = 0; k < out_rank; k++) dims[r++] = mark[k] ? 1 : x->dims[j++];
    }
    *rank = r;
    return 0;
}

/* Result dims of Reshape / Flatten / Squeeze / Unsqueeze / Transpose. */
static int reshape_dims(ctx *c, const char *op, const oval *x, int64_t *dims, int *rank)
{
    if (strcmp(op, "Reshape") == 0) return dims_of_reshape(c, x, dims, rank);
    if (strcmp(op, "Flatten") == 0) return dims_of_flatten(c, x, dims, rank);
    if (strcmp(op, "Transpose") == 0) return dims_of_transpose(c, x, dims, rank);
    return dims_of_squeeze(c, op[0] == 'S', x, dims, rank); /* Squeeze, Unsqueeze */
}

static int op_reshape(ctx *c, const char *op)
{
    oval *x = need_in(c, 0);
    if (!x) return -1;
    int64_t dims[MAX_RANK];
    int rank = 0;
    if (reshape_dims(c, op, x, dims, &rank) < 0) return -1;
    if (x->kind == V_ACT) return view_change(c, x, dims, rank, op);
    oval v = *x;
    v.rank = rank;
    memcpy(v.dims, dims, sizeof(int64_t) * (size_t)rank);
    if (ox_elems(&v) != ox_elems(x)) return ox_fail(c, "%s", "the number of elements changes");
    v.data = NULL;
    v.n_data = 0;
    if (x->data && strcmp(op, "Transpose") != 0) {
        v.data = lw_malloc(sizeof(int64_t) * (size_t)(x->n_data ? x->n_data : 1));
        memcpy(v.data, x->data, sizeof(int64_t) * (size_t)x->n_data);
        v.n_data = x->n_data;
    }
    c->counts.folded++;
    return set_out(c, 0, &v);
}

static int op_shape(ctx *c)
{
    oval *x = need_in(c, 0);
    if (!x) return -1;
    int64_t start = ox_attr_int(c->node, "start", 0), end = ox_attr_int(c->node, "end", x->rank);
    if (start < 0) start += x->rank;
    if (end < 0) end += x->rank;
    if (start < 0) start = 0;
    if (end > x->rank) end = x->rank;
    if (end < start) end = start;
    oval v = {0};
    v.kind = V_CONST;
    v.rank = 1;
    v.dims[0] = end - start;
    v.data = lw_malloc(sizeof(int64_t) * (size_t)(x->rank + 1));
    for (int64_t k = start; k < end; k++) v.data[k - start] = x->dims[k];
    v.n_data = (long)(end - start);
    c->counts.folded++;
    return set_out(c, 0, &v);
}

static int op_gather(ctx *c)
{
    oval *x = need_in(c, 0), *ix = x ? need_in(c, 1) : NULL;
    if (!ix) return -1;
    if (x->kind == V_CONST && ix->kind == V_ACT) return ox_fail(c, "a lookup in a table of weights (an embedding)%s", ox_transformer_note);
    if (x->kind == V_ACT) return ox_fail(c, "%s", "gathering from an activation is not supported");
    int axis;
    if (norm_axis(ox_attr_int(c->node, "axis", 0), x->rank, &axis) < 0) return ox_fail(c, "%s", "axis out of range");
    oval v = {0};
    v.kind = V_CONST;
    v.rank = x->rank - 1 + ix->rank;
    if (v.rank > MAX_RANK) return ox_fail(c, "%s", "too many dimensions");
    int r = 0;
    for (int k = 0; k < axis; k++) v.dims[r++] = x->dims[k];
    for (int k = 0; k < ix->rank; k++) v.dims[r++] = ix->dims[k];
    for (int k = axis + 1; k < x->rank; k++) v.dims[r++] = x->dims[k];
    if (x->rank == 1 && x->data && ix->data) {
        v.data = lw_malloc(sizeof(int64_t) * (size_t)(ix->n_data ? ix->n_data : 1));
        for (long k = 0; k < ix->n_data; k++) {
            int64_t i = ix->data[k];
            if (i < 0) i += x->n_data;
            if (i < 0 || i >= x->n_data) {
                free(v.data);
                return ox_fail(c, "index %lld is out of range", (long long)ix->data[k]);
            }
            v.data[k] = x->data[i];
        }
        v.n_data = ix->n_data;
    }
    c->counts.folded++;
    return set_out(c, 0, &v);
}

static int op_constant(ctx *c)
{
    const Onnx__NodeProto *n = c->node;
    oval v = {0};
    v.kind = V_CONST;
    const Onnx__AttributeProto *a;
    if ((a = ox_attr(n, "value")) && a->t) {
        if (ox_tensor_value(c, a->t, &v) < 0) return -1;
    } else if ((a = ox_attr(n, "value_int")) && a->has_i) {
        v.data = lw_malloc(sizeof(int64_t));
        v.data[0] = a->i;
        v.n_data = 1;
    } else if ((a = ox_attr(n, "value_ints"))) {
        v.rank = 1;
        v.dims[0] = (int64_t)a->n_ints;
        if (a->n_ints <= MAX_DATA) {
            v.data = lw_malloc(sizeof(int64_t) * (a->n_ints + 1));
            if (a->n_ints) memcpy(v.data, a->ints, sizeof(int64_t) * a->n_ints);
            v.n_data = (long)a->n_ints;
        }
    } else if ((a = ox_attr(n, "value_floats"))) {
        v.rank = 1;
        v.dims[0] = (int64_t)a->n_floats;
    } else if (!ox_attr(n, "value_float")) {
        return ox_fail(c, "%s", "a constant without a value this importer reads (value, value_int(s), value_float(s))");
    }
    c->counts.folded++;
    return set_out(c, 0, &v);
}

static int op_constant_of_shape(ctx *c)
{
    oval *s = need_in(c, 0);
    if (!s) return -1;
    long n;
    const int64_t *d = const_ints(c, s, 0, &n);
    if (!d) return -1;
    if (n > MAX_RANK) return ox_fail(c, "%s", "too many dimensions");
    oval v = {0};
    v.kind = V_CONST;
    v.rank = (int)n;
    for (long k = 0; k < n; k++) {
        if (d[k] < 0 || d[k] > DIM_LIMIT) return ox_fail(c, "dimension %lld", (long long)d[k]);
        v.dims[k] = d[k];
    }
    int64_t ne = ox_elems(&v);
    if (ne < 0 || ne > DIM_LIMIT) return ox_fail(c, "%s", "too large");
    const Onnx__AttributeProto *a = ox_attr(c->node, "value");
    oval fill = {0};
    if (a && a->t && ox_tensor_value(c, a->t, &fill) < 0) return -1;
    if (ne <= MAX_DATA && (!a || fill.data)) {
        v.data = lw_calloc((size_t)(ne ? ne : 1), sizeof(int64_t));
        for (int64_t k = 0; k < ne; k++) v.data[k] = fill.data && fill.n_data ? fill.data[0] : 0;
        v.n_data = (long)ne;
    }
    free(fill.data);
    c->counts.folded++;
    return set_out(c, 0, &v);
}

static int op_slice(ctx *c)
{
    const Onnx__NodeProto *n = c->node;
    oval *x = need_in(c, 0);
    if (!x) return -1;
    const int64_t *st, *en, *ax = NULL, *sp = NULL;
    long ns, ne, nax = 0, nsp = 0;
    if (c->opset < 10) {
        size_t a, b, d;
        st = ox_attr_ints(n, "starts", &a);
        en = ox_attr_ints(n, "ends", &b);
        ax = ox_attr_ints(n, "axes", &d);
        if (!st || !en) return ox_fail(c, "%s", "starts and ends are missing");
        ns = (long)a;
        ne = (long)b;
        nax = (long)d;
    } else {
        oval *s1 = need_in(c, 1), *s2 = s1 ? need_in(c, 2) : NULL;
        if (!s2) return -1;
        if (!(st = const_ints(c, s1, 1, &ns)) || !(en = const_ints(c, s2, 2, &ne))) return -1;
        oval *s3 = in_val(c, 3), *s4 = in_val(c, 4);
        if (s3 && !(ax = const_ints(c, s3, 3, &nax))) return -1;
        if (s4 && !(sp = const_ints(c, s4, 4, &nsp))) return -1;
    }
    if (ns != ne || (ax && nax != ns) || (sp && nsp != ns) || ns > x->rank) return ox_fail(c, "%s", "starts, ends, axes and steps differ in length");
    oval v = *x;
    v.data = NULL;
    v.n_data = 0;
    int64_t off = 0, step0 = 1;
    for (long k = 0; k < ns; k++) {
        int a;
        if (norm_axis(ax ? ax[k] : k, x->rank, &a) < 0) return ox_fail(c, "%s", "axis out of range");
        int64_t dim = x->dims[a], s = st[k], e = en[k], step = sp ? sp[k] : 1;
        if (step == 0) return ox_fail(c, "%s", "a step of 0");
        /* past the dimension's size a bound or step means the same as at it */
        s = s > DIM_LIMIT ? DIM_LIMIT : s < -DIM_LIMIT ? -DIM_LIMIT : s;
        e = e > DIM_LIMIT ? DIM_LIMIT : e < -DIM_LIMIT ? -DIM_LIMIT : e;
        step = step > DIM_LIMIT ? DIM_LIMIT : step < -DIM_LIMIT ? -DIM_LIMIT : step;
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        if (step > 0) {
            s = s < 0 ? 0 : s > dim ? dim : s;
            e = e < 0 ? 0 : e > dim ? dim : e;
            v.dims[a] = e > s ? (e - s + step - 1) / step : 0;
        } else {
            s = s < 0 ? -1 : s > dim - 1 ? dim - 1 : s;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
            v.dims[a] = s > e ? (s - e + (-step) - 1) / (-step) : 0;
        }
        if (a == 0) {
            off = s;
            step0 = step;
        }
    }
    if (x->kind == V_ACT) {
        if (memcmp(v.dims, x->dims, sizeof(int64_t) * (size_t)x->rank) != 0)
            return ox_fail(c, "%s", "a slice of an activation: layerwise has no layer that takes part of an activation");
        c->counts.folded++;
        return set_out(c, 0, &v);
    }
    if (x->rank == 1 && x->data) {
        v.data = lw_malloc(sizeof(int64_t) * (size_t)(v.dims[0] + 1));
        for (int64_t k = 0; k < v.dims[0]; k++) v.data[k] = x->data[off + k * step0];
        v.n_data = (long)v.dims[0];
    }
    c->counts.folded++;
    return set_out(c, 0, &v);
}

static int op_split(ctx *c)
{
    const Onnx__NodeProto *n = c->node;
    oval *xp = need_in(c, 0);
    if (!xp) return -1;
    oval xv = *xp; /* set_out may move the table */
    const oval *x = &xv;
    int axis;
    if (norm_axis(ox_attr_int(n, "axis", 0), x->rank, &axis) < 0) return ox_fail(c, "%s", "axis out of range");
    long ns = 0;
    size_t na;
    const int64_t *sizes = NULL;
    if (c->opset >= 13) {
        oval *s = in_val(c, 1);
        if (s && !(sizes = const_ints(c, s, 1, &ns))) return -1;
    } else {
        sizes = ox_attr_ints(n, "split", &na);
        ns = (long)na;
    }
    long nout = (long)n->n_output;
    if (nout < 1) return ox_fail(c, "%s", "no outputs");
    if (sizes && ns != nout) return ox_fail(c, "%s", "split sizes and outputs differ in number");
    if (x->kind == V_ACT && nout > 1)
        return ox_fail(c, "%s", "a split of an activation: layerwise has no layer that takes part of an activation");
    int64_t sum = 0, off = 0;
    for (long k = 0; k < nout && sizes; k++) {
        if (sizes[k] < 0 || sizes[k] > DIM_LIMIT) return ox_fail(c, "split size %lld", (long long)sizes[k]);
        sum += sizes[k];
    }
    if (sizes && sum != x->dims[axis]) return ox_fail(c, "%s", "split sizes do not add up to the dimension");
    for (long k = 0; k < nout; k++) {
        oval v = *x;
        v.data = NULL;
        v.n_data = 0;
        v.dims[axis] = sizes ? sizes[k] : (x->dims[axis] + nout - 1) / nout;
        if (!sizes && k == nout - 1) v.dims[axis] = x->dims[axis] - off;
        if (v.dims[axis] < 0) return ox_fail(c, "%s", "a negative split");
        if (x->rank == 1 && x->data && off + v.dims[axis] <= x->n_data) {
            v.data = lw_malloc(sizeof(int64_t) * (size_t)(v.dims[axis] + 1));
            memcpy(v.data, x->data + off, sizeof(int64_t) * (size_t)v.dims[axis]);
            v.n_data = (long)v.dims[axis];
        }
        off += v.dims[axis];
        set_out(c, (int)k, &v);
    }
    c->counts.folded++;
    return 0;
}

static int op_identity(ctx *c, layer_type t)
{
    oval *x = need_in(c, 0);
    if (!x) return -1;
    if (x->kind == V_ACT && t != LT_INPUT) return op_unary(c, t);
    oval v = *x;
    if (x->data) {
        v.data = lw_malloc(sizeof(int64_t) * (size_t)(x->n_data + 1));
        memcpy(v.data, x->data, sizeof(int64_t) * (size_t)x->n_data);
    }
    c->counts.folded++;
    return set_out(c, 0, &v);
}

/* ReduceMean over height and width: a global average pool. */
static int op_reduce_mean(ctx *c)
{
    oval *x = need_in(c, 0);
    if (!x) return -1;
    size_t na;
    const int64_t *a = ox_attr_ints(c->node, "axes", &na);
    long nl;
    oval *ai = c->opset >= 18 ? in_val(c, 1) : NULL;
    if (ai) {
        if (!(a = const_ints(c, ai, 1, &nl))) return -1;
        na = (size_t)nl;
    }
    int hw = x->kind == V_ACT && x->rank == 4 && na == 2 && a;
    if (hw) {
        int a0, a1;
        hw = norm_axis(a[0], 4, &a0) == 0 && norm_axis(a[1], 4, &a1) == 0 && a0 + a1 == 5 && a0 != a1;
    }
    if (hw && (x->dims[2] > NET_MAX_DIM || x->dims[3] > NET_MAX_DIM)) return ox_fail(c, "%s", "a window too large");
    if (!hw) {
        if (x->kind == V_CONST) {
            oval v = {0};
            v.kind = V_CONST;
            c->counts.folded++;
            return set_out(c, 0, &v); /* rank 0: only a scalar is ever used */
        }
        return ox_fail(c, "a mean over other than height and width (layer normalisation?)%s", ox_transformer_note);
    }
    olayer *l = new_layer(c, LT_POOL2D, NULL);
    if (!l) return -1;
    add_in(c, l, x->layer);
    l->kh = l->sh = (int)x->dims[2];
    l->kw = l->sw = (int)x->dims[3];
    c->counts.mapped++;
    oval v = act_of(x, c->n_layers - 1);
    v.dims[2] = v.dims[3] = 1;
    if (!ox_attr_int(c->node, "keepdims", 1)) {
        olayer *f = new_layer(c, LT_FLATTEN, "/flatten");
        if (!f) return -1;
        add_in(c, f, c->n_layers - 2);
        v.layer = c->n_layers - 1;
        v.rank = 2;
    }
    return set_out(c, 0, &v);
}

int ox_import_node(ctx *c)
{
    const Onnx__NodeProto *n = c->node;
    const char *op = n->op_type ? n->op_type : "";
    if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
        return ox_fail(c, "operators of domain \"%.60s\" are not supported (only the standard ONNX operators)", n->domain);
    for (size_t k = 0; k < n->n_output; k++)
        if (!n->output[k]) return ox_fail(c, "%s", "an output without a name");
    for (size_t k = 0; k < n->n_input; k++)
        if (!n->input[k]) return ox_fail(c, "%s", "an input without a name");
    if (!strcmp(op, "Conv") || !strcmp(op, "MaxPool") || !strcmp(op, "AveragePool") || !strcmp(op, "GlobalAveragePool") ||
        !strcmp(op, "GlobalMaxPool"))
        return op_conv_pool(c, op);
    if (!strcmp(op, "Gemm")) return op_linear(c, 1);
    if (!strcmp(op, "MatMul")) return op_linear(c, 0);
    if (!strcmp(op, "BatchNormalization")) return op_batchnorm(c);
    if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div")) return op_binary(c, op);
    if (!strcmp(op, "Concat")) return op_concat(c);
    if (!strcmp(op, "Reshape") || !strcmp(op, "Flatten") || !strcmp(op, "Transpose") || !strcmp(op, "Squeeze") ||
        !strcmp(op, "Unsqueeze"))
        return op_reshape(c, op);
    if (!strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax")) return op_unary(c, LT_SOFTMAX);
    if (!strcmp(op, "Dropout")) return op_identity(c, LT_DROPOUT);
    if (!strcmp(op, "Identity") || !strcmp(op, "Cast") || !strcmp(op, "CastLike")) return op_identity(c, LT_INPUT);
    if (in_list(unary_ops, op)) return op_unary(c, LT_RELU);
    if (!strcmp(op, "Shape")) return op_shape(c);
    if (!strcmp(op, "Size")) {
        oval *x = need_in(c, 0);
        if (!x) return -1;
        oval v = {0};
        v.kind = V_CONST;
        v.data = lw_malloc(sizeof(int64_t));
        v.data[0] = ox_elems(x);
        v.n_data = 1;
        c->counts.folded++;
        return set_out(c, 0, &v);
    }
    if (!strcmp(op, "Gather")) return op_gather(c);
    if (!strcmp(op, "Constant")) return op_constant(c);
    if (!strcmp(op, "ConstantOfShape")) return op_constant_of_shape(c);
    if (!strcmp(op, "Slice")) return op_slice(c);
    if (!strcmp(op, "Split")) return op_split(c);
    if (!strcmp(op, "ReduceMean")) return op_reduce_mean(c);
    if (!strcmp(op, "LayerNormalization") || !strcmp(op, "SimplifiedLayerNormalization") || !strcmp(op, "Attention"))
        return ox_fail(c, "%s", "not supported yet: layer normalisation and attention need the transformer layer types");
    return ox_fail(c,
                   "operator %.60s is not supported (data/doc/cli.md, \"Importing ONNX\", lists the operators that are)",
                   op);
}
