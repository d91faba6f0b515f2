/*
 * onnx_import: ONNX -> layerwise-net/1. See onnx_import.h.
 *
 * Every value (an ONNX tensor name) is either an activation, held by a layer
 * of the network being built, or a constant: an initializer, a graph input
 * that carries a weight, or something folded (Shape of an activation, a
 * Gather of it, ...). Constants keep their shape, and their values where they
 * are small integers (shapes, axes, indices): that is all shape arithmetic
 * needs. The sample dimension (axis 0 of an activation) is the graph input's
 * batch: its literal value, or 1 where it is symbolic.
 */
#define _POSIX_C_SOURCE 200809L
#include "onnx_import.h"

#include "net_json.h"
#include "onnx.pb-c.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_RANK 8
#define MAX_DATA 4096 /* integer constants kept with their values up to this many elements */
#define DIM_LIMIT ((int64_t)1 << 40)

enum { V_ACT = 1, V_CONST };

typedef struct oval {
    const char *name;
    int kind;
    int rank;
    int64_t dims[MAX_RANK];
    int layer;     /* V_ACT: index into ctx.layers (0: the input) */
    int64_t *data; /* V_CONST: the values when known (owned), else NULL */
    long n_data;
    int counted;   /* V_CONST: a trainable weight already counted (tied weights count once) */
} oval;

typedef struct olayer {
    char *name;
    layer_type type;
    int n_in;
    int in[NET_MAX_INPUTS];
    long out_ch, out_features;
    int kh, kw, sh, sw, ph, pw;
    int pool_max, bias;
    int consumers;
    int lw_rank; /* of its output in layerwise: 4 (c, h, w) or 2 (features) */
} olayer;

typedef struct ctx {
    const char *label;
    lw_error *err;
    int opset;
    int64_t batch;
    const Onnx__NodeProto *node; /* being imported, for messages */
    /* values: open addressing on the name */
    oval *vals;
    size_t cap, n_vals;
    olayer *layers;
    int n_layers, cap_layers;
    /* names given to layers, for deduplication */
    char **names;
    int n_names;
    const onnx_options *opt;
    onnx_counts counts;
} ctx;

/* ---- messages ---------------------------------------------------------- */

static int nfail(ctx *c, const char *fmt, ...) LW_PRINTF(2, 3);
static int nfail(ctx *c, const char *fmt, ...)
{
    char why[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (c->node)
        return lw_fail(c->err, 2, "%s: node \"%.120s\" (%.60s, opset %d): %s", c->label,
                       c->node->name && c->node->name[0] ? c->node->name
                       : c->node->n_output && c->node->output[0] ? c->node->output[0]
                                                                  : "",
                       c->node->op_type ? c->node->op_type : "", c->opset, why);
    return lw_fail(c->err, 2, "%s: %s", c->label, why);
}

static const char transformer_note[] =
    "; transformer layers (attention, layer normalisation, embeddings) are not layer types of layerwise yet";

/* ---- values ------------------------------------------------------------ */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static oval *val_find(ctx *c, const char *name)
{
    if (!name || !name[0] || !c->cap) return NULL;
    size_t i = hash_str(name) & (c->cap - 1);
    while (c->vals[i].name) {
        if (strcmp(c->vals[i].name, name) == 0) return &c->vals[i];
        i = (i + 1) & (c->cap - 1);
    }
    return NULL;
}

/* A new value under name (replacing one of the same name: ONNX forbids
 * that, but a hostile file is not refused for it). */
static oval *val_put(ctx *c, const char *name, const oval *v)
{
    if ((c->n_vals + 1) * 2 > c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 256;
        oval *nv = lw_calloc(ncap, sizeof *nv);
        for (size_t k = 0; k < c->cap; k++) {
            if (!c->vals[k].name) continue;
            size_t i = hash_str(c->vals[k].name) & (ncap - 1);
            while (nv[i].name) i = (i + 1) & (ncap - 1);
            nv[i] = c->vals[k];
        }
        free(c->vals);
        c->vals = nv;
        c->cap = ncap;
    }
    oval *o = val_find(c, name);
    if (o) {
        free(o->data);
    } else {
        size_t i = hash_str(name) & (c->cap - 1);
        while (c->vals[i].name) i = (i + 1) & (c->cap - 1);
        o = &c->vals[i];
        c->n_vals++;
    }
    *o = *v;
    o->name = name;
    return o;
}

/* Elements, saturated past DIM_LIMIT (hostile dimensions must not overflow). */
static int64_t elems(const oval *v)
{
    int64_t n = 1;
    for (int k = 0; k < v->rank; k++) {
        if (v->dims[k] == 0) return 0;
        n = n > (DIM_LIMIT + 1) / v->dims[k] ? DIM_LIMIT + 1 : n * v->dims[k];
    }
    return n;
}

static void fmt_dims(const int64_t *d, int rank, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    if (rank == 0) snprintf(buf, n, "a scalar");
    for (int i = 0; i < rank && k + 24 < n; i++) k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "x" : "", (long long)d[i]);
}

/* ---- attributes -------------------------------------------------------- */

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i] && n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
            return n->attribute[i];
    return NULL;
}

static int64_t attr_int(const Onnx__NodeProto *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = attr(n, name);
    return a && a->has_i ? a->i : def;
}

/* The ints of an attribute (NULL if absent). */
static const int64_t *attr_ints(const Onnx__NodeProto *n, const char *name, size_t *count)
{
    const Onnx__AttributeProto *a = attr(n, name);
    *count = a ? a->n_ints : 0;
    return a && a->n_ints ? a->ints : NULL;
}

static const char *attr_str(const Onnx__NodeProto *n, const char *name, char *buf, size_t bn)
{
    const Onnx__AttributeProto *a = attr(n, name);
    if (!a || !a->has_s) return NULL;
    size_t k = a->s.len < bn - 1 ? a->s.len : bn - 1;
    if (k) memcpy(buf, a->s.data, k);
    buf[k] = 0;
    return buf;
}

/* ---- tensors ----------------------------------------------------------- */

static int is_int_type(int t)
{
    return t == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || t == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ||
           t == ONNX__TENSOR_PROTO__DATA_TYPE__INT16 || t == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 ||
           t == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 || t == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
}

/* A constant from a TensorProto: its shape, and its values if it holds a
 * few integers inside the file (external data is never opened). */
static int tensor_value(ctx *c, const Onnx__TensorProto *t, oval *v)
{
    memset(v, 0, sizeof *v);
    v->kind = V_CONST;
    if (t->n_dims > MAX_RANK) return nfail(c, "tensor \"%.100s\" has %zu dimensions (at most %d)", t->name ? t->name : "",
                                           t->n_dims, MAX_RANK);
    v->rank = (int)t->n_dims;
    for (int k = 0; k < v->rank; k++) {
        if (t->dims[k] < 0 || t->dims[k] > DIM_LIMIT)
            return nfail(c, "tensor \"%.100s\" has dimension %lld", t->name ? t->name : "", (long long)t->dims[k]);
        v->dims[k] = t->dims[k];
    }
    int64_t n = elems(v);
    if (n < 0 || n > DIM_LIMIT) return nfail(c, "tensor \"%.100s\" is too large", t->name ? t->name : "");
    int dt = t->has_data_type ? t->data_type : 0;
    if (!is_int_type(dt) || n > MAX_DATA) return 0;
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) return 0;
    int64_t *d = lw_malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 && t->n_int64_data == (size_t)n) {
        if (n) memcpy(d, t->int64_data, sizeof(int64_t) * (size_t)n);
    } else if (dt != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 && t->n_int32_data == (size_t)n) {
        for (int64_t i = 0; i < n; i++) d[i] = t->int32_data[i];
    } else if (t->has_raw_data) {
        size_t w = dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64   ? 8
                   : dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ? 4
                   : dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT16 ? 2
                                                                : 1;
        if (t->raw_data.len != w * (size_t)n) {
            free(d);
            return 0;
        }
        for (int64_t i = 0; i < n; i++) {
            const unsigned char *p = t->raw_data.data + w * (size_t)i;
            uint64_t u = 0;
            for (size_t b = 0; b < w; b++) u |= (uint64_t)p[b] << (8 * b);
            if (w < 8 && dt != ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 && dt != ONNX__TENSOR_PROTO__DATA_TYPE__BOOL &&
                (u >> (8 * w - 1)) & 1)
                u |= ~(uint64_t)0 << (8 * w); /* sign extension */
            memcpy(&d[i], &u, sizeof u);
        }
    } else {
        free(d);
        return 0;
    }
    v->data = d;
    v->n_data = (long)n;
    return 0;
}

/* ---- layers ------------------------------------------------------------ */

/* A name a layerwise file accepts: printable UTF-8 of at most LW_NAME_MAX
 * characters (other bytes become '_'), unique (a suffix _2, _3, ...). */
static char *unique_name(ctx *c, const char *want)
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
        nfail(c, "more than %d layers", NET_MAX_LAYERS);
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
    l->name = unique_name(c, want);
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

/* ---- the graph's inputs ------------------------------------------------ */

static const char *dim_role(int rank, int k)
{
    static const char *const r4[] = {"samples", "channels", "height", "width"};
    if (rank == 4) return r4[k];
    return k == 0 ? "samples" : "features";
}

/* --input-shape NAME=AxBxC... for this input, or 0 dims. */
static int given_shape(ctx *c, const char *name, int64_t *dims)
{
    if (!c->opt) return 0;
    for (int i = 0; i < c->opt->n_shapes; i++) {
        const char *s = c->opt->shapes[i], *eq = strrchr(s, '=');
        if (!eq || (size_t)(eq - s) != strlen(name) || strncmp(s, name, (size_t)(eq - s)) != 0) continue;
        int r = 0;
        const char *p = eq + 1;
        while (*p && r < MAX_RANK) {
            char *end;
            long long v = strtoll(p, &end, 10);
            if (end == p) break;
            dims[r++] = v;
            p = *end == 'x' || *end == 'X' || *end == ',' ? end + 1 : end;
        }
        return r;
    }
    return 0;
}

int onnx_check_input_shape(const char *spec, lw_error *err)
{
    const char *eq = spec ? strrchr(spec, '=') : NULL;
    int ok = eq && eq > spec;
    int r = 0;
    if (ok) {
        const char *p = eq + 1;
        while (ok && *p) {
            char *end;
            errno = 0;
            long long v = strtoll(p, &end, 10);
            if (end == p || errno || v < 1 || v > NET_MAX_DIM) ok = 0;
            else if (*end && *end != 'x' && *end != 'X' && *end != ',') ok = 0;
            else if (*end && !end[1]) ok = 0;
            r++;
            p = *end ? end + 1 : end;
        }
        if (r < 1 || r > MAX_RANK) ok = 0;
    }
    if (!ok)
        return lw_fail(err, 2, "--input-shape \"%s\" must be NAME=DIMS, e.g. input=1x3x224x224 (dimensions from 1 to %ld)",
                       spec ? spec : "", NET_MAX_DIM);
    return 0;
}

/* The value of a graph input: its declared shape, with --input-shape over
 * it; a dimension left symbolic (other than the sample one of the data
 * input) is an error that says which option fixes it. */
static int input_value(ctx *c, const Onnx__ValueInfoProto *vi, int is_data, oval *v)
{
    memset(v, 0, sizeof *v);
    v->kind = is_data ? V_ACT : V_CONST;
    const Onnx__TensorShapeProto *sh = vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
                                               vi->type->tensor_type
                                           ? vi->type->tensor_type->shape
                                           : NULL;
    int64_t g[MAX_RANK];
    int ng = given_shape(c, vi->name, g);
    if (!sh && !ng)
        return nfail(c, "graph input \"%.100s\" has no shape; give it with --input-shape %.100s=1x3x224x224", vi->name,
                     vi->name);
    int rank = ng ? ng : (int)sh->n_dim;
    if (rank > MAX_RANK) return nfail(c, "graph input \"%.100s\" has %d dimensions (at most %d)", vi->name, rank, MAX_RANK);
    if (ng && sh && sh->n_dim != (size_t)ng)
        return nfail(c, "--input-shape gives %.100s %d dimensions, but the model declares %zu", vi->name, ng, sh->n_dim);
    v->rank = rank;
    for (int k = 0; k < rank; k++) {
        const Onnx__TensorShapeProto__Dimension *d = sh ? sh->dim[k] : NULL;
        int64_t x = ng ? g[k] : d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? d->dim_value : -1;
        if (x < 0 && is_data && k == 0) x = 1; /* a symbolic batch */
        if (x < 1 || x > NET_MAX_DIM) {
            char ex[128] = "";
            if (is_data && rank == 4) snprintf(ex, sizeof ex, "1x3x224x224");
            else snprintf(ex, sizeof ex, "DIMS");
            return nfail(c,
                         "graph input \"%.100s\": dimension %d (%s) is %s%.60s%s; it cannot be inferred: give the "
                         "shape with --input-shape %.100s=%s",
                         vi->name, k, dim_role(rank, k),
                         d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? "the symbol \"" : "",
                         d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param
                             ? d->dim_param
                         : x < 0 ? "unknown"
                                 : "out of range",
                         d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? "\"" : "", vi->name,
                         ex);
        }
        v->dims[k] = x;
    }
    return 0;
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
    return val_find(c, n->input[k]);
}

/* Input k, which must exist. */
static oval *need_in(ctx *c, int k)
{
    const Onnx__NodeProto *n = c->node;
    if ((size_t)k >= n->n_input || !n->input[k] || !n->input[k][0]) {
        nfail(c, "input %d is missing", k);
        return NULL;
    }
    oval *v = val_find(c, n->input[k]);
    if (!v) nfail(c, "input \"%.100s\" is not produced by an earlier node, an initializer or a graph input", n->input[k]);
    return v;
}

static int set_out(ctx *c, int k, const oval *v)
{
    const Onnx__NodeProto *n = c->node;
    if ((size_t)k >= n->n_output || !n->output[k] || !n->output[k][0]) {
        free(v->data);
        return 0;
    }
    val_put(c, n->output[k], v);
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
        fmt_dims(dims, rank, b, sizeof b);
        return nfail(c, "%s would make the activation %s: its sample dimension (%lld) would change", what, b,
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
    if (elems(&v) != elems(x)) return nfail(c, "%s changes the number of elements", what);
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
    fmt_dims(x->dims, x->rank, a, sizeof a);
    fmt_dims(dims, rank, b, sizeof b);
    if (rank == 3 || x->rank == 3)
        return nfail(c, "%s turns activation %s into %s: a sequence%s", what, a, b, transformer_note);
    return nfail(c, "%s turns activation %s into %s: layerwise has no layer that regroups an activation's dimensions "
                    "(only (c, h, w) -> features, as flatten)", what, a, b);
}

/* Integer values of a constant input, or an error naming it. */
static const int64_t *const_ints(ctx *c, const oval *v, int k, long *n)
{
    if (!v || v->kind != V_CONST || !v->data) {
        nfail(c, "input %d (\"%.100s\") must be a constant of integers known at import (a shape, axes or indices)%s", k,
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
    c->counts.parameters += elems(w);
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
        if (w->kind != V_CONST) return nfail(c, "%s", "its weight is computed from the data (a dynamic convolution)");
        int64_t g = attr_int(n, "group", 1);
        if (g != 1)
            return nfail(c, "grouped convolution (group=%lld) is not supported: layerwise's conv2d has no groups",
                         (long long)g);
        if (w->rank != 4 || w->dims[1] != C) {
            char b[160];
            fmt_dims(w->dims, w->rank, b, sizeof b);
            return nfail(c, "weight \"%.100s\" is %s; a %lld-channel input needs Mx%lldxKHxKW", n->input[1], b,
                         (long long)C, (long long)C);
        }
        *M = w->dims[0];
        k[0] = w->dims[2];
        k[1] = w->dims[3];
        oval *bv = in_val(c, 2);
        if (bv) {
            if (bv->kind != V_CONST || elems(bv) != *M)
                return nfail(c, "bias \"%.100s\" is not a constant of %lld values", n->input[2], (long long)*M);
            *bias = 1;
        }
    } else if (global) {
        k[0] = x->dims[2];
        k[1] = x->dims[3];
    } else {
        size_t na;
        const int64_t *a = attr_ints(n, "kernel_shape", &na);
        if (!a || na != 2) return nfail(c, "%s", "needs a kernel_shape of 2 values");
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
    const char *autopad = attr_str(c->node, "auto_pad", ap, sizeof ap);
    if (autopad && (strcmp(autopad, "SAME_UPPER") == 0 || strcmp(autopad, "SAME_LOWER") == 0)) {
        for (int d = 0; d < 2; d++) {
            if (s[d] < 1) break;
            int64_t out = (in[d] + s[d] - 1) / s[d];
            int64_t total = (out - 1) * s[d] + k[d] - in[d];
            if (total < 0) total = 0;
            if (total % 2)
                return nfail(c, "auto_pad %s pads %s unevenly (%lld in all): layerwise pads both sides alike", autopad,
                             d ? "the width" : "the height", (long long)total);
            p[d] = p[d + 2] = total / 2;
        }
    } else if (autopad && strcmp(autopad, "VALID") == 0) {
        memset(p, 0, sizeof(int64_t) * 4);
    } else if (autopad && autopad[0] && strcmp(autopad, "NOTSET") != 0) {
        return nfail(c, "auto_pad \"%.20s\" is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", autopad);
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
    const int64_t *a = attr_ints(n, "kernel_shape", &na);
    if (a && (na != 2 || a[0] != k[0] || a[1] != k[1])) return nfail(c, "%s", "kernel_shape does not match the weight");
    a = attr_ints(n, "strides", &na);
    if (a) {
        if (na != 2) return nfail(c, "%s", "strides must have 2 values");
        s[0] = a[0];
        s[1] = a[1];
    }
    for (int d = 0; d < 2; d++) {
        if (k[d] < 1 || k[d] > NET_MAX_DIM) return nfail(c, "kernel %lld is out of range", (long long)k[d]);
        if (s[d] < 1 || s[d] > NET_MAX_DIM) return nfail(c, "stride %lld is out of range", (long long)s[d]);
    }
    a = attr_ints(n, "dilations", &na);
    if (a && (na != 2 || a[0] != 1 || a[1] != 1))
        return nfail(c, "%s", "dilated windows (dilations other than 1) are not supported by layerwise's layers");
    a = attr_ints(n, "pads", &na);
    if (a) {
        if (na != 4) return nfail(c, "%s", "pads must have 4 values");
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
        if (k[d] < 1 || k[d] > NET_MAX_DIM) return nfail(c, "kernel %lld is out of range", (long long)k[d]);
        if (s[d] < 1 || s[d] > NET_MAX_DIM) return nfail(c, "stride %lld is out of range", (long long)s[d]);
        if (p[d] < 0 || p[d] > NET_MAX_DIM || p[d + 2] < 0) return nfail(c, "%s", "pads are out of range");
        if (p[d] != p[d + 2])
            return nfail(c, "pads %lld and %lld on the two sides of the %s differ: layerwise pads both sides alike",
                         (long long)p[d], (long long)p[d + 2], d ? "width" : "height");
        if (p[d] > 0 && p[d] >= k[d])
            return nfail(c, "padding %lld is not smaller than the kernel %lld", (long long)p[d], (long long)k[d]);
    }
    for (int d = 0; d < 2; d++) {
        int64_t span = in[d] + 2 * p[d] - k[d];
        if (span < 0)
            return nfail(c, "kernel %lld is larger than the padded input %lld", (long long)k[d], (long long)(in[d] + 2 * p[d]));
        out[d] = span / s[d] + 1;
        if (!conv && attr_int(c->node, "ceil_mode", 0) && span % s[d] != 0)
            return nfail(c, "%s", "ceil_mode gives a window more than layerwise's pool2d (which rounds down)");
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
    if (x->kind != V_ACT) return nfail(c, "its input is a constant, not an activation");
    if (x->rank == 4 && c->layers[x->layer].lw_rank != 4)
        return nfail(c, "its input comes from flat features (\"%.100s\", made (features, 1, 1) by a reshape): "
                        "layerwise's conv2d and pool2d take (c, h, w) from a layer that has it",
                     c->layers[x->layer].name);
    if (x->rank != 4) {
        char a[160];
        fmt_dims(x->dims, x->rank, a, sizeof a);
        return nfail(c, "input is %s: only 2-D %s (a 4-D input: samples, channels, height, width) is supported", a,
                     conv ? "convolution" : "pooling");
    }
    int64_t C = x->dims[1], in[2] = {x->dims[2], x->dims[3]};
    int64_t k[2], s[2] = {1, 1}, p[4] = {0, 0, 0, 0}, M, out[2];
    int bias = 0;
    if (window_kernel(c, conv, global, x, k, &M, &bias) < 0) return -1;
    if (!global && window_attrs(c, in, k, s, p) < 0) return -1;
    if (window_output(c, conv, in, k, s, p, out) < 0) return -1;
    if (conv && (double)M * ((double)C * k[0] * k[1] + 1) > 4e10) return nfail(c, "%s", "more than 4e10 parameters");
    if (M < 1 || M > NET_MAX_DIM) return nfail(c, "%lld output channels are out of range", (long long)M);
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
        return nfail(c, "a product of two activations (attention)%s", transformer_note);
    if (a->kind != V_ACT) return nfail(c, "%s", "its first operand is a constant: only activation x weight is supported");
    if (gemm && attr_int(n, "transA", 0)) return nfail(c, "%s", "transA=1 on an activation is not supported");
    if (a->rank != 2) {
        char s[160];
        fmt_dims(a->dims, a->rank, s, sizeof s);
        if (a->rank == 3) return nfail(c, "its input is %s, a sequence%s", s, transformer_note);
        return nfail(c, "its input is %s: a linear layer takes (samples, features); flatten it first", s);
    }
    if (b->rank != 2) return nfail(c, "%s", "its weight is not a matrix");
    int tb = gemm && attr_int(n, "transB", 0);
    int64_t K = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
    if (K != a->dims[1])
        return nfail(c, "weight \"%.100s\" has %lld rows for %lld input features", n->input[1], (long long)K,
                     (long long)a->dims[1]);
    if (N < 1 || N > NET_MAX_DIM) return nfail(c, "%lld output features are out of range", (long long)N);
    olayer *l = new_layer(c, LT_LINEAR, NULL);
    if (!l) return -1;
    add_in(c, l, a->layer);
    l->out_features = N;
    oval *cv = gemm ? in_val(c, 2) : NULL;
    l->bias = cv != NULL;
    if (cv && cv->kind != V_CONST) return nfail(c, "%s", "its bias C is computed from the data");
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
        fmt_dims(a->dims, a->rank, x, sizeof x);
        fmt_dims(b->dims, b->rank, y, sizeof y);
        return nfail(c, "shapes %s and %s do not broadcast", x, y);
    }
    if (a->kind == V_CONST && b->kind == V_CONST) {
        v.kind = V_CONST;
        int64_t ne = elems(&v);
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
            fmt_dims(a->dims, a->rank, x, sizeof x);
            fmt_dims(b->dims, b->rank, y, sizeof y);
            return nfail(c, "activations %s and %s broadcast: layerwise's add takes two activations of one shape", x, y);
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
        return nfail(c, "the constant \"%.100s\" broadcasts the activation to a larger shape",
                     n->input[a->kind == V_ACT ? 1 : 0]);
    /* a MatMul's bias comes as an Add of a vector: the linear layer gets it */
    olayer *pl = &c->layers[x->layer];
    if (op[0] == 'A' && pl->type == LT_LINEAR && !pl->bias && pl->consumers == 0 && elems(k) == pl->out_features) {
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
    if (x->kind != V_ACT) return nfail(c, "%s", "its input is a constant");
    if (x->rank != 4 && x->rank != 2) return nfail(c, "%s", "only 2-D and 4-D inputs are supported");
    for (int k = 1; k <= 4; k++) {
        oval *p = need_in(c, k);
        if (!p) return -1;
        if (p->kind != V_CONST || elems(p) != x->dims[1])
            return nfail(c, "input %d (\"%.100s\") is not a constant of %lld values", k, c->node->input[k],
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
    if (n->n_input < 1) return nfail(c, "%s", "no inputs");
    oval *first = need_in(c, 0);
    if (!first) return -1;
    int axis;
    if (norm_axis(attr_int(n, "axis", 1), first->rank, &axis) < 0) return nfail(c, "%s", "axis is out of range");
    int acts = 0;
    oval v = *first;
    v.data = NULL;
    v.n_data = 0;
    v.dims[axis] = 0;
    long nd = 0;
    for (size_t i = 0; i < n->n_input; i++) {
        oval *x = need_in(c, (int)i);
        if (!x) return -1;
        if (x->rank != first->rank) return nfail(c, "%s", "inputs of different ranks");
        for (int d = 0; d < x->rank; d++)
            if (d != axis && x->dims[d] != first->dims[d]) return nfail(c, "input %zu differs in dimension %d", i, d);
        v.dims[axis] += x->dims[axis];
        if (v.dims[axis] > DIM_LIMIT) return nfail(c, "%s", "the concatenation is too large");
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
    if (acts != (int)n->n_input) return nfail(c, "%s", "a concatenation of activations and constants is not supported");
    if (axis != 1) return nfail(c, "concatenation on axis %d: layerwise concatenates channels (axis 1) only", axis);
    if (n->n_input > NET_MAX_INPUTS) return nfail(c, "more than %d inputs", NET_MAX_INPUTS);
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
        a = attr_ints(n, "shape", &na);
        if (!a) return nfail(c, "%s", "no shape attribute");
    } else {
        oval *s = need_in(c, 1);
        if (!s) return -1;
        a = const_ints(c, s, 1, &nl);
        if (!a) return -1;
        na = (size_t)nl;
    }
    if (na > MAX_RANK) return nfail(c, "%s", "too many dimensions");
    int allowzero = (int)attr_int(n, "allowzero", 0), minus = -1;
    int64_t known = 1;
    for (size_t k = 0; k < na; k++) {
        int64_t d = a[k];
        if (d == 0 && !allowzero) {
            if ((int)k >= x->rank) return nfail(c, "%s", "a 0 in the shape copies a dimension the input lacks");
            d = x->dims[k];
        }
        if (d == -1) {
            if (minus >= 0) return nfail(c, "%s", "two -1 in the shape");
            minus = (int)k;
            d = 1;
        } else if (d < 0 || d > DIM_LIMIT) {
            return nfail(c, "dimension %lld in the shape", (long long)d);
        }
        dims[k] = d;
        if (d && known > DIM_LIMIT / d) return nfail(c, "%s", "the shape is too large");
        known *= d;
    }
    if (minus >= 0) {
        if (known == 0 || elems(x) % known) return nfail(c, "%s", "-1 in the shape cannot be inferred");
        dims[minus] = elems(x) / known;
    }
    *rank = (int)na;
    return 0;
}

/* Flatten's result: (the dimensions before axis, the ones from it on). */
static int dims_of_flatten(ctx *c, const oval *x, int64_t *dims, int *rank)
{
    int64_t ax = attr_int(c->node, "axis", 1);
    if (ax < 0) ax += x->rank;
    if (ax < 0 || ax > x->rank) return nfail(c, "%s", "axis out of range");
    oval lo = *x, hi = *x;
    lo.rank = (int)ax;
    hi.rank = x->rank - (int)ax;
    memmove(hi.dims, x->dims + ax, sizeof(int64_t) * (size_t)hi.rank);
    dims[0] = elems(&lo);
    dims[1] = elems(&hi);
    *rank = 2;
    return 0;
}

/* Transpose's result (perm, or the dimensions reversed). On an activation
 * it is accepted only when no element moves, i.e. the dimensions other than
 * ones keep their order: layerwise has no layer that permutes (c, h, w). */
static int dims_of_transpose(ctx *c, const oval *x, int64_t *dims, int *rank)
{
    size_t na = 0;
    const int64_t *a = attr_ints(c->node, "perm", &na);
    if (a && na != (size_t)x->rank) return nfail(c, "%s", "perm does not match the rank");
    int seen[MAX_RANK] = {0};
    for (int k = 0; k < x->rank; k++) {
        int64_t p = a ? a[k] : x->rank - 1 - k;
        if (p < 0 || p >= x->rank || seen[p]++) return nfail(c, "%s", "perm is not a permutation");
        dims[k] = x->dims[p];
    }
    /* moving only dimensions of size 1 moves no element */
    int last = -1;
    for (int k = 0; k < x->rank && x->kind == V_ACT; k++) {
        int64_t p = a ? a[k] : x->rank - 1 - k;
        if (x->dims[p] == 1) continue;
        if (p < last) {
            char s[160];
            fmt_dims(x->dims, x->rank, s, sizeof s);
            return nfail(c, "a transpose of activation %s moves its elements: layerwise's layers keep (c, h, w) "
                            "in that order%s",
                         s, x->rank == 3 ? transformer_note : "");
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
        a = attr_ints(c->node, "axes", &na);
    }
    if (!sq && !a) return nfail(c, "%s", "no axes");
    int out_rank = sq ? x->rank : x->rank + (int)na;
    if (out_rank > MAX_RANK || na > MAX_RANK) return nfail(c, "%s", "too many dimensions");
    int mark[MAX_RANK] = {0};
    for (size_t k = 0; k < na; k++) {
        int ax;
        if (norm_axis(a[k], out_rank, &ax) < 0 || mark[ax]) return nfail(c, "axis %lld is out of range", (long long)a[k]);
        mark[ax] = 1;
    }
    int r = 0;
    if (sq) {
        for (int k = 0; k < x->rank; k++) {
            int drop = a ? mark[k] : (x->dims[k] == 1 && !(x->kind == V_ACT && k == 0));
            if (drop && x->dims[k] != 1) return nfail(c, "axis %d has size %lld, not 1", k, (long long)x->dims[k]);
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
    if (elems(&v) != elems(x)) return nfail(c, "%s", "the number of elements changes");
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
    int64_t start = attr_int(c->node, "start", 0), end = attr_int(c->node, "end", x->rank);
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
    if (x->kind == V_CONST && ix->kind == V_ACT) return nfail(c, "a lookup in a table of weights (an embedding)%s", transformer_note);
    if (x->kind == V_ACT) return nfail(c, "%s", "gathering from an activation is not supported");
    int axis;
    if (norm_axis(attr_int(c->node, "axis", 0), x->rank, &axis) < 0) return nfail(c, "%s", "axis out of range");
    oval v = {0};
    v.kind = V_CONST;
    v.rank = x->rank - 1 + ix->rank;
    if (v.rank > MAX_RANK) return nfail(c, "%s", "too many dimensions");
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
                return nfail(c, "index %lld is out of range", (long long)ix->data[k]);
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
    if ((a = attr(n, "value")) && a->t) {
        if (tensor_value(c, a->t, &v) < 0) return -1;
    } else if ((a = attr(n, "value_int")) && a->has_i) {
        v.data = lw_malloc(sizeof(int64_t));
        v.data[0] = a->i;
        v.n_data = 1;
    } else if ((a = attr(n, "value_ints"))) {
        v.rank = 1;
        v.dims[0] = (int64_t)a->n_ints;
        if (a->n_ints <= MAX_DATA) {
            v.data = lw_malloc(sizeof(int64_t) * (a->n_ints + 1));
            if (a->n_ints) memcpy(v.data, a->ints, sizeof(int64_t) * a->n_ints);
            v.n_data = (long)a->n_ints;
        }
    } else if ((a = attr(n, "value_floats"))) {
        v.rank = 1;
        v.dims[0] = (int64_t)a->n_floats;
    } else if (!attr(n, "value_float")) {
        return nfail(c, "%s", "a constant without a value this importer reads (value, value_int(s), value_float(s))");
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
    if (n > MAX_RANK) return nfail(c, "%s", "too many dimensions");
    oval v = {0};
    v.kind = V_CONST;
    v.rank = (int)n;
    for (long k = 0; k < n; k++) {
        if (d[k] < 0 || d[k] > DIM_LIMIT) return nfail(c, "dimension %lld", (long long)d[k]);
        v.dims[k] = d[k];
    }
    int64_t ne = elems(&v);
    if (ne < 0 || ne > DIM_LIMIT) return nfail(c, "%s", "too large");
    const Onnx__AttributeProto *a = attr(c->node, "value");
    oval fill = {0};
    if (a && a->t && tensor_value(c, a->t, &fill) < 0) return -1;
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
        st = attr_ints(n, "starts", &a);
        en = attr_ints(n, "ends", &b);
        ax = attr_ints(n, "axes", &d);
        if (!st || !en) return nfail(c, "%s", "starts and ends are missing");
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
    if (ns != ne || (ax && nax != ns) || (sp && nsp != ns) || ns > x->rank) return nfail(c, "%s", "starts, ends, axes and steps differ in length");
    oval v = *x;
    v.data = NULL;
    v.n_data = 0;
    int64_t off = 0, step0 = 1;
    for (long k = 0; k < ns; k++) {
        int a;
        if (norm_axis(ax ? ax[k] : k, x->rank, &a) < 0) return nfail(c, "%s", "axis out of range");
        int64_t dim = x->dims[a], s = st[k], e = en[k], step = sp ? sp[k] : 1;
        if (step == 0) return nfail(c, "%s", "a step of 0");
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
            return nfail(c, "%s", "a slice of an activation: layerwise has no layer that takes part of an activation");
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
    if (norm_axis(attr_int(n, "axis", 0), x->rank, &axis) < 0) return nfail(c, "%s", "axis out of range");
    long ns = 0;
    size_t na;
    const int64_t *sizes = NULL;
    if (c->opset >= 13) {
        oval *s = in_val(c, 1);
        if (s && !(sizes = const_ints(c, s, 1, &ns))) return -1;
    } else {
        sizes = attr_ints(n, "split", &na);
        ns = (long)na;
    }
    long nout = (long)n->n_output;
    if (nout < 1) return nfail(c, "%s", "no outputs");
    if (sizes && ns != nout) return nfail(c, "%s", "split sizes and outputs differ in number");
    if (x->kind == V_ACT && nout > 1)
        return nfail(c, "%s", "a split of an activation: layerwise has no layer that takes part of an activation");
    int64_t sum = 0, off = 0;
    for (long k = 0; k < nout && sizes; k++) {
        if (sizes[k] < 0 || sizes[k] > DIM_LIMIT) return nfail(c, "split size %lld", (long long)sizes[k]);
        sum += sizes[k];
    }
    if (sizes && sum != x->dims[axis]) return nfail(c, "%s", "split sizes do not add up to the dimension");
    for (long k = 0; k < nout; k++) {
        oval v = *x;
        v.data = NULL;
        v.n_data = 0;
        v.dims[axis] = sizes ? sizes[k] : (x->dims[axis] + nout - 1) / nout;
        if (!sizes && k == nout - 1) v.dims[axis] = x->dims[axis] - off;
        if (v.dims[axis] < 0) return nfail(c, "%s", "a negative split");
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
    const int64_t *a = attr_ints(c->node, "axes", &na);
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
    if (hw && (x->dims[2] > NET_MAX_DIM || x->dims[3] > NET_MAX_DIM)) return nfail(c, "%s", "a window too large");
    if (!hw) {
        if (x->kind == V_CONST) {
            oval v = {0};
            v.kind = V_CONST;
            c->counts.folded++;
            return set_out(c, 0, &v); /* rank 0: only a scalar is ever used */
        }
        return nfail(c, "a mean over other than height and width (layer normalisation?)%s", transformer_note);
    }
    olayer *l = new_layer(c, LT_POOL2D, NULL);
    if (!l) return -1;
    add_in(c, l, x->layer);
    l->kh = l->sh = (int)x->dims[2];
    l->kw = l->sw = (int)x->dims[3];
    c->counts.mapped++;
    oval v = act_of(x, c->n_layers - 1);
    v.dims[2] = v.dims[3] = 1;
    if (!attr_int(c->node, "keepdims", 1)) {
        olayer *f = new_layer(c, LT_FLATTEN, "/flatten");
        if (!f) return -1;
        add_in(c, f, c->n_layers - 2);
        v.layer = c->n_layers - 1;
        v.rank = 2;
    }
    return set_out(c, 0, &v);
}

static int import_node(ctx *c)
{
    const Onnx__NodeProto *n = c->node;
    const char *op = n->op_type ? n->op_type : "";
    if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
        return nfail(c, "operators of domain \"%.60s\" are not supported (only the standard ONNX operators)", n->domain);
    for (size_t k = 0; k < n->n_output; k++)
        if (!n->output[k]) return nfail(c, "%s", "an output without a name");
    for (size_t k = 0; k < n->n_input; k++)
        if (!n->input[k]) return nfail(c, "%s", "an input without a name");
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
        v.data[0] = elems(x);
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
        return nfail(c, "%s", "not supported yet: layer normalisation and attention need the transformer layer types");
    return nfail(c, "operator %.60s is not supported (see README, \"Importing ONNX\", for the operators that are)", op);
}

/* ---- the document ------------------------------------------------------ */

static void pair(cJSON *o, const char *key, int a, int b)
{
    if (a == b) {
        cJSON_AddNumberToObject(o, key, a);
    } else {
        cJSON *arr = cJSON_AddArrayToObject(o, key);
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(a));
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(b));
    }
}

static char *write_json(ctx *c, const char *name, const int64_t *in_dims, int in_rank)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "layerwise-net/1");
    cJSON_AddStringToObject(root, "name", name);
    cJSON *in = cJSON_AddObjectToObject(root, "input");
    cJSON_AddStringToObject(in, "name", c->layers[0].name);
    cJSON_AddNumberToObject(in, "channels", (double)in_dims[1]);
    cJSON_AddNumberToObject(in, "height", (double)(in_rank == 4 ? in_dims[2] : 1));
    cJSON_AddNumberToObject(in, "width", (double)(in_rank == 4 ? in_dims[3] : 1));
    cJSON *arr = cJSON_AddArrayToObject(root, "layers");
    for (int i = 1; i < c->n_layers; i++) {
        const olayer *l = &c->layers[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", l->name);
        cJSON_AddStringToObject(o, "type", layer_type_name(l->type));
        cJSON *ins = cJSON_AddArrayToObject(o, "inputs");
        for (int k = 0; k < l->n_in; k++) cJSON_AddItemToArray(ins, cJSON_CreateString(c->layers[l->in[k]].name));
        if (l->type == LT_CONV2D) cJSON_AddNumberToObject(o, "out_channels", (double)l->out_ch);
        if (l->type == LT_LINEAR) cJSON_AddNumberToObject(o, "out_features", (double)l->out_features);
        if (l->type == LT_POOL2D) cJSON_AddStringToObject(o, "mode", l->pool_max ? "max" : "avg");
        if (l->type == LT_CONV2D || l->type == LT_POOL2D) {
            pair(o, "kernel", l->kh, l->kw);
            pair(o, "stride", l->sh, l->sw);
            pair(o, "padding", l->ph, l->pw);
        }
        if ((l->type == LT_CONV2D || l->type == LT_LINEAR) && !l->bias) cJSON_AddFalseToObject(o, "bias");
        cJSON_AddItemToArray(arr, o);
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

static void ctx_free(ctx *c)
{
    for (size_t k = 0; k < c->cap; k++) free(c->vals[k].data);
    free(c->vals);
    for (int i = 0; i < c->n_layers; i++) free(c->layers[i].name);
    free(c->layers);
    for (int i = 0; i < c->n_names; i++) free(c->names[i]);
    free(c->names);
}

/* Initializers are in the value table before the graph's inputs are read. */
static int is_initializer(ctx *c, const char *name)
{
    return val_find(c, name) != NULL;
}

/* The graph's data input: the one --input-shape names, else the first
 * graph input that is not an initializer. The other inputs are weights
 * (models exported without their parameters list them as inputs). */
static int pick_data_input(ctx *c, const Onnx__GraphProto *g)
{
    int first = -1;
    for (size_t k = 0; k < g->n_input; k++) {
        const Onnx__ValueInfoProto *vi = g->input[k];
        if (!vi || !vi->name || !vi->name[0] || is_initializer(c, vi->name)) continue;
        if (first < 0) first = (int)k;
        int64_t d[MAX_RANK];
        if (given_shape(c, vi->name, d)) return (int)k;
    }
    return first;
}

/* protobuf-c unpacks nested messages by recursion, without a limit: a
 * hostile file of a few hundred kilobytes nests graphs in attributes deep
 * enough to overflow the stack. So the wire format is walked first, by the
 * generated descriptors (which fields are messages), and nesting past
 * MAX_NESTING is refused; anything else malformed is left to unpack. */
#define MAX_NESTING 64
static int varint_at(const unsigned char *p, size_t len, size_t *at, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*at >= len) return -1;
        unsigned char b = p[(*at)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return 0;
    }
    return -1;
}

/* 0: nesting within the limit (or malformed: unpack decides); -1: too deep. */
static int nesting_ok(const ProtobufCMessageDescriptor *d, const unsigned char *p, size_t len, int depth)
{
    if (depth > MAX_NESTING) return -1;
    size_t at = 0;
    while (at < len) {
        uint64_t key, v;
        if (varint_at(p, len, &at, &key) < 0) return 0;
        switch (key & 7) {
        case 0:
            if (varint_at(p, len, &at, &v) < 0) return 0;
            break;
        case 1:
            at += 8;
            break;
        case 5:
            at += 4;
            break;
        case 2: {
            if (varint_at(p, len, &at, &v) < 0 || v > len - at) return 0;
            const ProtobufCFieldDescriptor *f =
                key >> 3 <= 0xffffffffu ? protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3)) : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
                nesting_ok((const ProtobufCMessageDescriptor *)f->descriptor, p + at, (size_t)v, depth + 1) < 0)
                return -1;
            at += (size_t)v;
            break;
        }
        default:
            return 0;
        }
    }
    return 0;
}

/* The model in data[0..len), unpacked by protobuf-c after the nesting guard;
 * NULL with err set when it is too deep or not a protobuf of a model. The
 * caller frees it with onnx__model_proto__free_unpacked. */
static Onnx__ModelProto *unpack_model(const unsigned char *data, size_t len, const char *label, lw_error *err)
{
    if (nesting_ok(&onnx__model_proto__descriptor, data, len, 0) < 0) {
        lw_fail(err, 2, "%s: messages nested more than %d deep: not an ONNX model this program reads", label,
                MAX_NESTING);
        return NULL;
    }
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, data);
    if (!m) lw_fail(err, 2, "%s: not an ONNX model (the protobuf is malformed or truncated)", label);
    return m;
}

/* The version of the standard operators the model imports (the last entry
 * of the default domain wins, clamped to 0..10000); 1 when it lists none. */
static int model_opset(const Onnx__ModelProto *m)
{
    int opset = 0;
    for (size_t k = 0; k < m->n_opset_import; k++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[k];
        if (o && (!o->domain || !o->domain[0] || strcmp(o->domain, "ai.onnx") == 0) && o->has_version)
            opset = o->version > 10000 ? 10000 : o->version < 0 ? 0 : (int)o->version;
    }
    return m->n_opset_import ? opset : 1;
}

/* Every --input-shape must name an input of the graph: an unused one is a
 * mistake (a misspelt name), not something to ignore. */
static int check_shape_names(ctx *c, const Onnx__GraphProto *g)
{
    const onnx_options *opt = c->opt;
    for (int i = 0; opt && i < opt->n_shapes; i++) {
        int found = 0;
        const char *eq = strrchr(opt->shapes[i], '=');
        for (size_t k = 0; k < g->n_input && !found; k++)
            found = g->input[k] && g->input[k]->name && eq && strlen(g->input[k]->name) == (size_t)(eq - opt->shapes[i]) &&
                    strncmp(g->input[k]->name, opt->shapes[i], (size_t)(eq - opt->shapes[i])) == 0;
        if (!found)
            return lw_fail(c->err, 2, "%s: --input-shape %.100s: the graph has no input of that name", c->label,
                           opt->shapes[i]);
    }
    return 0;
}

/* The graph's inputs into the value table: input di (the data) becomes
 * layer 0, the network's input, and its dims and rank go to in_dims and
 * *in_rank; the others (weights listed as inputs) are constants. */
static int read_graph_inputs(ctx *c, const Onnx__GraphProto *g, int di, int64_t *in_dims, int *in_rank)
{
    for (size_t k = 0; k < g->n_input; k++) {
        const Onnx__ValueInfoProto *vi = g->input[k];
        if (!vi || !vi->name || !vi->name[0] || is_initializer(c, vi->name)) continue;
        oval v;
        if (input_value(c, vi, (int)k == di, &v) < 0) return -1;
        if ((int)k == di) {
            if (v.rank == 3) return nfail(c, "graph input \"%.100s\" is a sequence (3 dimensions)%s", vi->name, transformer_note);
            if (v.rank != 4 && v.rank != 2)
                return nfail(c, "graph input \"%.100s\" has %d dimensions: layerwise takes (samples, channels, height, "
                                "width) or (samples, features)",
                             vi->name, v.rank);
            c->batch = v.dims[0];
            memcpy(in_dims, v.dims, sizeof(int64_t) * MAX_RANK);
            *in_rank = v.rank;
            c->n_layers = c->cap_layers = 1;
            c->layers = lw_calloc(1, sizeof(olayer));
            c->layers[0].type = LT_INPUT;
            c->layers[0].lw_rank = 4;
            c->layers[0].name = unique_name(c, vi->name);
            v.layer = 0;
        }
        val_put(c, vi->name, &v);
    }
    return 0;
}

/* The graph of model m as a layerwise-net/1 document: the initializers and
 * inputs into the value table, then every node in order (the graph is
 * topologically sorted, as ONNX requires), then the writer. counts (may be
 * NULL) receives what the import did once every node is in. */
static char *import_graph(ctx *c, const Onnx__ModelProto *m, const char *name, onnx_counts *counts)
{
    const Onnx__GraphProto *g = m->graph;
    int64_t in_dims[MAX_RANK] = {0};
    int in_rank = 0;
    if (!g || g->n_node == 0) {
        lw_fail(c->err, 2, "%s: the ONNX model has no graph (or a graph without nodes)", c->label);
        return NULL;
    }
    if (c->opset < 1) {
        lw_fail(c->err, 2, "%s: the model imports no version of the standard ONNX operators (opset_import)", c->label);
        return NULL;
    }
    c->counts.nodes = (int)g->n_node;
    c->counts.opset = c->opset;
    for (size_t k = 0; k < g->n_initializer; k++) {
        const Onnx__TensorProto *t = g->initializer[k];
        if (!t || !t->name || !t->name[0]) continue;
        oval v;
        if (tensor_value(c, t, &v) < 0) return NULL;
        val_put(c, t->name, &v);
    }
    int di = pick_data_input(c, g);
    if (di < 0) {
        lw_fail(c->err, 2, "%s: the graph has no input that is not a weight", c->label);
        return NULL;
    }
    if (check_shape_names(c, g) < 0 || read_graph_inputs(c, g, di, in_dims, &in_rank) < 0) return NULL;
    for (size_t k = 0; k < g->n_node; k++) {
        c->node = g->node[k];
        if (!c->node) continue;
        if (import_node(c) < 0) return NULL;
    }
    c->node = NULL;
    if (c->n_layers < 2) {
        lw_fail(c->err, 2, "%s: no node of the graph computes anything layerwise models (all %d folded away)", c->label,
                c->counts.nodes);
        return NULL;
    }
    char *out = write_json(c, name, in_dims, in_rank);
    if (counts) *counts = c->counts;
    return out;
}

char *onnx_to_net_json(const unsigned char *data, size_t len, const char *label, const char *name,
                       const onnx_options *opt, onnx_counts *counts, lw_error *err)
{
    Onnx__ModelProto *m = unpack_model(data, len, label, err);
    if (!m) return NULL;
    ctx c = {0};
    c.label = label;
    c.err = err;
    c.opt = opt;
    c.batch = 1;
    c.opset = model_opset(m);
    char *out = import_graph(&c, m, name, counts);
    ctx_free(&c);
    onnx__model_proto__free_unpacked(m, NULL);
    return out;
}

/* ---- files ------------------------------------------------------------- */

int onnx_is_path(const char *path)
{
    return path && lw_ends_with_ci(path, ".onnx");
}

static const onnx_options *default_opt;
void onnx_set_default_options(const onnx_options *opt)
{
    default_opt = opt;
}
const onnx_options *onnx_default_options(void)
{
    return default_opt;
}

network *onnx_load_file(const char *path, const onnx_options *opt, onnx_counts *counts, char **json_out,
                        lw_error *err)
{
    if (json_out) *json_out = NULL;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        lw_fail(err, 2, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        lw_fail(err, 2, "%s: not a regular file", path);
        return NULL;
    }
    if ((size_t)st.st_size > ONNX_MAX_FILE_BYTES) {
        close(fd);
        lw_fail(err, 2, "%s: %lld bytes, more than protobuf's 2 GiB: export the weights as external data", path,
                (long long)st.st_size);
        return NULL;
    }
    if (st.st_size == 0) {
        close(fd);
        lw_fail(err, 2, "%s: empty file, not an ONNX model", path);
        return NULL;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        lw_fail(err, 2, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    /* the network's name: the file's, without directory and suffix */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char name[LW_NAME_MAX + 1];
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)base; *p && k < 120; p++)
        name[k++] = (*p < 0x20 || *p >= 0x7f) ? '_' : (char)*p;
    name[k] = 0;
    if (k > 5 && lw_ends_with_ci(name, ".onnx")) name[k - 5] = 0;
    if (!name[0]) snprintf(name, sizeof name, "onnx");
    char *json = onnx_to_net_json(map, (size_t)st.st_size, path, name, opt, counts, err);
    munmap(map, (size_t)st.st_size);
    if (!json) return NULL;
    network *net = net_from_json(json, strlen(json), path, err);
    if (net && json_out) *json_out = json;
    else free(json);
    return net;
}
