#include "net_json.h"

#include "json_util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Line of the first `"key":` in text, or 1. */
static int json_line_of_key(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = strchr(text, '"'); p; p = strchr(p + 1, '"')) {
        if (strncmp(p + 1, key, kl) != 0 || p[1 + kl] != '"') continue;
        const char *q = p + 2 + kl;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
        if (*q != ':') continue;
        int line, col;
        json_line_col(text, (size_t)(p - text), &line, &col);
        return line;
    }
    return 1;
}

/* Line of `"key":` inside the top-level "input" object (layers use the
 * same keys: "height" must not be found in one), or of "input" itself. */
static int input_line_of_key(const char *text, const char *key)
{
    int at = json_line_of_key(text, "input");
    for (const char *p = strstr(text, "\"input\""); p; p = strstr(p + 1, "\"input\"")) {
        const char *q = p + 7;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
        if (*q != ':') continue;
        const char *end = strchr(q, '}'); /* the input object holds no nested object */
        char quoted[40];
        snprintf(quoted, sizeof quoted, "\"%s\"", key);
        const char *k = end ? strstr(q, quoted) : NULL;
        if (!k || k > end) return at;
        int line, col;
        json_line_col(text, (size_t)(k - text), &line, &col);
        return line;
    }
    return at;
}

/* Line of the nth (1-based) `"name": "<name>"` in text, or 0. */
static int line_of_nth_name(const char *text, const char *name, int nth)
{
    size_t nl = strlen(name);
    int seen = 0;
    for (const char *p = strstr(text, "\"name\""); p; p = strstr(p + 1, "\"name\"")) {
        const char *q = p + 6;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
        if (*q != ':') continue;
        q++;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
        if (*q == '"' && strncmp(q + 1, name, nl) == 0 && q[1 + nl] == '"' && ++seen == nth) {
            int line, col;
            json_line_col(text, (size_t)(q - text), &line, &col);
            return line;
        }
    }
    return 0;
}

/* Parse context: where messages point. */
typedef struct pctx {
    const char *text;
    const char *label;
    lw_error *err;
    size_t *item_off; /* where each element of "layers" starts */
    int n_items;
    int raw_index;    /* layer_fail's index is the position in "layers" (not the sorted one) */
} pctx;

/* A number as written: 4.0000000001 is not "4". */
static const char *num_str(double v, char *buf, size_t n)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

static int layer_fail(pctx *p, const char *lname, int index, const char *fmt, const char *what)
{
    char where[256];
    int line = 0;
    /* the layer's own "name": the first one after "layers" begins (the
     * network and the input may carry the same name before it) */
    size_t from = p->n_items > 0 ? p->item_off[0] : 0;
    if (!p->text) {
        /* a network built in memory (net_finish): no lines to point at */
    } else if (p->raw_index && index >= 0 && index < p->n_items) {
        int col;
        json_line_col(p->text, p->item_off[index], &line, &col);
        int l2 = lname ? json_line_of_name(p->text + p->item_off[index], lname) : 0;
        if (l2) line += l2 - 1; /* the line of its "name", when found */
    } else if (lname) {
        int l2 = json_line_of_name(p->text + from, lname), col;
        if (l2) {
            json_line_col(p->text, from, &line, &col);
            line += l2 - 1;
        }
    }
    if (lname && line)
        snprintf(where, sizeof where, "%s:%d: layer \"%s\"", p->label, line, lname);
    else if (lname)
        snprintf(where, sizeof where, "%s: layer \"%s\"", p->label, lname);
    else if (line)
        snprintf(where, sizeof where, "%s:%d: layers[%d]", p->label, line, index);
    else
        snprintf(where, sizeof where, "%s: layers[%d]", p->label, index);
    char msg[512];
    snprintf(msg, sizeof msg, fmt, what ? what : "");
    return lw_fail(p->err, 2, "%s: %s", where, msg);
}

/* Reads an integer field; accepts a number or (pair=1) an [h, w] array.
 * Returns 1 if present and valid, 0 if absent, -1 on error (message set). */
static int get_int_field(pctx *p, const cJSON *obj, const char *key, int pair, long lo, long hi,
                         long *a, long *b, const char *lname, int index)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return 0;
    double x[2];
    int n = 0;
    if (cJSON_IsNumber(v)) {
        x[0] = x[1] = v->valuedouble;
        n = 1;
    } else if (pair && cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2 &&
               cJSON_IsNumber(cJSON_GetArrayItem(v, 0)) && cJSON_IsNumber(cJSON_GetArrayItem(v, 1))) {
        x[0] = cJSON_GetArrayItem(v, 0)->valuedouble;
        x[1] = cJSON_GetArrayItem(v, 1)->valuedouble;
        n = 2;
    } else {
        char m[128];
        snprintf(m, sizeof m, "\"%s\" must be %s", key, pair ? "an integer or [h, w]" : "an integer");
        return layer_fail(p, lname, index, "%s", m);
    }
    for (int i = 0; i < 2; i++) {
        if (!isfinite(x[i]) || x[i] != floor(x[i]) || x[i] < (double)lo || x[i] > (double)hi) {
            char m[160], nb[40];
            snprintf(m, sizeof m, "\"%s\" is %s; it must be an integer from %ld to %ld", key,
                     num_str(x[i], nb, sizeof nb), lo, hi);
            return layer_fail(p, lname, index, "%s", m);
        }
    }
    (void)n;
    *a = (long)x[0];
    if (b) *b = (long)x[1];
    return 1;
}

static const char *const common_keys[] = {"name", "type", "inputs", "comment", NULL};
static const char *const conv_keys[] = {"out_channels", "kernel", "stride", "padding", "bias", NULL};
static const char *const pool_keys[] = {"mode", "kernel", "stride", "padding", NULL};
static const char *const linear_keys[] = {"out_features", "bias", NULL};
static const char *const no_keys[] = {NULL};
static const char *const embedding_keys[] = {"vocab", "hidden", "positions", "segments", NULL};
static const char *const attention_keys[] = {"heads", "kv_heads", "head_dim", "causal", "rotary", "bias", NULL};
static const char *const lm_head_keys[] = {"vocab", "tied", "bias", NULL};
static const char *const patch_keys[] = {"patch", "hidden", NULL};
static const char *const select_keys[] = {"index", NULL};

/* Reads a boolean field into *out (left alone when absent). 0, or -1 with
 * the error set. */
static int get_bool_field(pctx *p, const cJSON *o, const char *key, int *out, const char *lname, int index)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return 0;
    if (!cJSON_IsBool(v)) {
        char m[96];
        snprintf(m, sizeof m, "\"%s\" must be true or false", key);
        return layer_fail(p, lname, index, "%s", m);
    }
    *out = cJSON_IsTrue(v);
    return 0;
}

/* A required (need = 1) or optional integer field from lo to hi. */
static int get_count(pctx *p, const cJSON *o, const char *key, int need, long lo, long hi, long *out,
                     const char *type, const char *lname, int index)
{
    int rc = get_int_field(p, o, key, 0, lo, hi, out, NULL, lname, index);
    if (rc < 0) return -1;
    if (rc == 0 && need) {
        char m[96];
        snprintf(m, sizeof m, "%s needs \"%s\"", type, key);
        return layer_fail(p, lname, index, "%s", m);
    }
    return 0;
}

static int in_list(const char *const *list, const char *k)
{
    for (; *list; list++)
        if (strcmp(*list, k) == 0) return 1;
    return 0;
}

static int check_keys(pctx *p, const cJSON *obj, const char *const *allowed, const char *lname, int index)
{
    for (const cJSON *it = obj->child; it; it = it->next) {
        if (in_list(common_keys, it->string) || in_list(allowed, it->string)) continue;
        return layer_fail(p, lname, index, "unknown field \"%s\"", it->string);
    }
    return 0;
}

/* A convolution's or pooling's output shape and parameters from its
 * input s (in0): the window must fit the padded input and the padding be
 * smaller than the window. 0, or -1 with the error set. */
static int infer_window(pctx *p, layer *l, int i, const layer *in0)
{
    const char *ln = l->name;
    shape s = in0->out;
    char m[256];
    if (s.rank == 3) {
        snprintf(m, sizeof m,
                 "needs a C x H x W input, but \"%s\" gives a sequence (%ld tokens x %ld features); conv2d and "
                 "pooling cannot take a sequence",
                 in0->name, s.h, s.c);
        return layer_fail(p, ln, i, "%s", m);
    }
    if (s.rank != 4) return layer_fail(p, ln, i, "needs a (c, h, w) input, but \"%s\" is flat", in0->name);
    long H = s.h + 2L * l->ph, W = s.w + 2L * l->pw;
    if (l->kh > H || l->kw > W) {
        snprintf(m, sizeof m, "kernel %dx%d is larger than its padded input %ldx%ld (from \"%s\")", l->kh,
                 l->kw, H, W, in0->name);
        return layer_fail(p, ln, i, "%s", m);
    }
    if (l->ph > 0 && l->ph >= l->kh) {
        snprintf(m, sizeof m, "padding %d is not smaller than kernel %d", l->ph, l->kh);
        return layer_fail(p, ln, i, "%s", m);
    }
    if (l->pw > 0 && l->pw >= l->kw) {
        snprintf(m, sizeof m, "padding %d is not smaller than kernel %d", l->pw, l->kw);
        return layer_fail(p, ln, i, "%s", m);
    }
    l->out.rank = 4;
    l->out.h = (H - l->kh) / l->sh + 1;
    l->out.w = (W - l->kw) / l->sw + 1;
    if (l->type == LT_CONV2D) {
        l->out.c = l->out_channels;
        /* in double first: channels and kernel within their limits can
         * still multiply past a long (2^24 * 2^24 * 4096 * 4096) */
        if ((double)l->out_channels * ((double)s.c * l->kh * l->kw + 1) > 4e10) {
            snprintf(m, sizeof m, "%ld filters of %ldx%dx%d weights are more than 4e10 parameters",
                     l->out_channels, s.c, l->kh, l->kw);
            return layer_fail(p, ln, i, "%s", m);
        }
        l->n_params = l->out_channels * (s.c * l->kh * l->kw + (l->bias ? 1 : 0));
    } else {
        l->out.c = s.c;
    }
    return 0;
}

static int check_size(pctx *p, const layer *l, int i);
static int infer_seq(pctx *p, network *net, int i);
static int is_seq_type(int t);

/* Shape inference for layer i (inputs already resolved and earlier). */
static int infer(pctx *p, network *net, int i)
{
    layer *l = &net->layers[i];
    const char *ln = l->name;
    layer *in0 = &net->layers[l->inputs[0]];
    shape s = in0->out;
    char m[256];
    if (is_seq_type(l->type) || (l->type == LT_LINEAR && s.rank == 3)) {
        if (infer_seq(p, net, i) < 0) return -1;
        return check_size(p, l, i);
    }
    switch (l->type) {
    case LT_CONV2D:
    case LT_POOL2D: {
        int rc = infer_window(p, l, i, in0);
        if (rc != 0) return rc;
        break;
    }
    case LT_LINEAR: {
        long in = shape_elems(s);
        l->out.rank = 2;
        l->out.c = l->out_features;
        l->out.h = l->out.w = 1;
        l->n_params = l->out_features * (in + (l->bias ? 1 : 0));
        break;
    }
    case LT_FLATTEN:
        l->out.rank = 2;
        l->out.c = shape_elems(s);
        l->out.h = l->out.w = 1;
        break;
    case LT_CONCAT:
        l->out = s;
        for (int k = 1; k < l->n_inputs; k++) {
            const layer *x = &net->layers[l->inputs[k]];
            if (x->out.rank != s.rank || x->out.h != s.h || x->out.w != s.w) {
                char a[64], b[64];
                shape_format(s, a, sizeof a);
                shape_format(x->out, b, sizeof b);
                snprintf(m, sizeof m,
                         "concat inputs must match in height and width: \"%s\" is %s but \"%s\" is %s",
                         in0->name, a, x->name, b);
                return layer_fail(p, ln, i, "%s", m);
            }
            l->out.c += x->out.c;
        }
        break;
    case LT_ADD:
        l->out = s;
        for (int k = 1; k < l->n_inputs; k++) {
            const layer *x = &net->layers[l->inputs[k]];
            if (x->out.rank != s.rank || x->out.c != s.c || x->out.h != s.h || x->out.w != s.w) {
                char a[64], b[64];
                shape_format(s, a, sizeof a);
                shape_format(x->out, b, sizeof b);
                snprintf(m, sizeof m, "add inputs must have the same shape: \"%s\" is %s but \"%s\" is %s",
                         in0->name, a, x->name, b);
                return layer_fail(p, ln, i, "%s", m);
            }
        }
        break;
    case LT_BATCHNORM:
        l->out = s;
        l->n_params = 2 * s.c;
        break;
    default: /* softmax, relu, dropout */
        l->out = s;
        break;
    }
    if (check_size(p, l, i) < 0) return -1;
    if (l->type == LT_LINEAR && (double)l->out_features * (double)shape_elems(s) > 4e10)
        return layer_fail(p, ln, i, "%s", "weight matrix has more than 4e10 entries");
    if (s.rank == 3) {
        /* a CNN layer on a sequence: its splits, and replicas where it is element-wise */
        l->dims = DIMMASK(DIM_N) | DIMMASK(DIM_C) | DIMMASK(DIM_H);
        if (l->type == LT_ADD || l->type == LT_RELU || l->type == LT_DROPOUT || l->type == LT_SOFTMAX)
            l->dims |= DIMMASK(DIM_X);
        if (l->out.rank == 2) l->dims = DIMMASK(DIM_N) | DIMMASK(DIM_C); /* a flatten */
        return 0;
    }
    l->dims = l->out.rank == 4 ? (DIMMASK(DIM_N) | DIMMASK(DIM_C) | DIMMASK(DIM_H) | DIMMASK(DIM_W))
                               : (DIMMASK(DIM_N) | DIMMASK(DIM_C));
    return 0;
}

/* The output within the supported sizes. 0, or -1 with the error set. */
static int check_size(pctx *p, const layer *l, int i)
{
    const char *ln = l->name;
    char m[256];
    if (l->out.c < 1 || l->out.h < 1 || l->out.w < 1)
        return layer_fail(p, ln, i, "%s", "output would be empty");
    if (l->out.c > NET_MAX_DIM || l->out.h > NET_MAX_DIM || l->out.w > NET_MAX_DIM ||
        (double)l->out.c * l->out.h * l->out.w > (double)NET_MAX_ELEMS) {
        snprintf(m, sizeof m, "output %ldx%ldx%ld is beyond the supported size (each dimension at most %ld, %ld elements)",
                 l->out.c, l->out.h, l->out.w, NET_MAX_DIM, NET_MAX_ELEMS);
        return layer_fail(p, ln, i, "%s", m);
    }
    return 0;
}

/* Raw layer as read, before ordering. */
typedef struct raw_layer {
    layer l;
    const cJSON *inputs;
    const char *tied;    /* lm_head: the embedding it shares, by name (resolved when built) */
} raw_layer;

/* The fields of a transformer layer (type t) into r. 0, or -1 with the
 * error set. */
static int parse_seq_layer(pctx *p, const cJSON *o, int index, int t, raw_layer *r)
{
    layer *l = &r->l;
    const char *ln = l->name;
    const char *tn = layer_type_name((layer_type)t);
    long v = 0;
    switch (t) {
    case LT_EMBEDDING:
        if (check_keys(p, o, embedding_keys, ln, index) || get_count(p, o, "vocab", 1, 1, NET_MAX_DIM, &l->vocab, tn, ln, index) ||
            get_count(p, o, "hidden", 1, 1, NET_MAX_DIM, &l->out_features, tn, ln, index) ||
            get_count(p, o, "positions", 0, 0, NET_MAX_DIM, &l->positions, tn, ln, index) ||
            get_count(p, o, "segments", 0, 0, NET_MAX_DIM, &l->segments, tn, ln, index))
            return -1;
        break;
    case LT_ATTENTION:
        l->causal = 0;
        if (check_keys(p, o, attention_keys, ln, index) || get_count(p, o, "heads", 1, 1, 65536, &v, tn, ln, index))
            return -1;
        l->heads = (int)v;
        v = l->heads;
        if (get_count(p, o, "kv_heads", 0, 1, 65536, &v, tn, ln, index)) return -1;
        l->kv_heads = (int)v;
        if (l->heads % l->kv_heads != 0) {
            char m[128];
            snprintf(m, sizeof m, "\"kv_heads\" %d does not divide \"heads\" %d", l->kv_heads, l->heads);
            return layer_fail(p, ln, index, "%s", m);
        }
        if (get_count(p, o, "head_dim", 0, 1, NET_MAX_DIM, &l->head_dim, tn, ln, index) ||
            get_bool_field(p, o, "causal", &l->causal, ln, index) || get_bool_field(p, o, "rotary", &l->rotary, ln, index) ||
            get_bool_field(p, o, "bias", &l->bias, ln, index))
            return -1;
        break;
    case LT_LM_HEAD: {
        l->bias = 0;
        if (check_keys(p, o, lm_head_keys, ln, index) || get_count(p, o, "vocab", 1, 1, NET_MAX_DIM, &l->vocab, tn, ln, index) ||
            get_bool_field(p, o, "bias", &l->bias, ln, index))
            return -1;
        const cJSON *tied = cJSON_GetObjectItemCaseSensitive(o, "tied");
        if (tied && (!cJSON_IsString(tied) || !tied->valuestring[0]))
            return layer_fail(p, ln, index, "%s", "\"tied\" must name an embedding layer");
        r->tied = tied ? tied->valuestring : NULL;
        break;
    }
    case LT_PATCH_EMBED:
        if (check_keys(p, o, patch_keys, ln, index) || get_count(p, o, "patch", 1, 1, 4096, &v, tn, ln, index) ||
            get_count(p, o, "hidden", 1, 1, NET_MAX_DIM, &l->out_features, tn, ln, index))
            return -1;
        l->patch = (int)v;
        break;
    case LT_SELECT_TOKEN:
        if (check_keys(p, o, select_keys, ln, index) || get_count(p, o, "index", 0, 0, NET_MAX_DIM, &l->index, tn, ln, index))
            return -1;
        break;
    default: /* layernorm, rmsnorm, gelu, swiglu, cls_token */
        if (check_keys(p, o, no_keys, ln, index)) return -1;
        break;
    }
    return 0;
}

/* An attention layer's heads, output and parameters from its input in0.
 * 0, or -1 with the error set. */
static int infer_attention(pctx *p, layer *l, int i, const layer *in0)
{
    const char *ln = l->name;
    shape s = in0->out;
    char m[256];
    if (!l->head_dim) {
        if (s.c % l->heads) {
            snprintf(m, sizeof m, "%d heads do not divide the %ld features of \"%s\" (give \"head_dim\")", l->heads,
                     s.c, in0->name);
            return layer_fail(p, ln, i, "%s", m);
        }
        l->head_dim = s.c / l->heads;
    }
    if ((double)l->heads * l->head_dim > (double)NET_MAX_DIM) return layer_fail(p, ln, i, "%s", "heads x head_dim is too large");
    l->out.c = l->heads * l->head_dim;
    {
        long qkv = (long)(l->heads + 2 * l->kv_heads) * l->head_dim;
        if ((double)qkv * s.c > 4e10) return layer_fail(p, ln, i, "%s", "QKV weights have more than 4e10 entries");
        l->n_params = qkv * (s.c + (l->bias ? 1 : 0));
    }
    l->dims = DIMMASK(DIM_N) | DIMMASK(DIM_H) | DIMMASK(DIM_C);
    return 0;
}

/* A layer of a sequence (rank-3) tensor: its output, parameters and
 * splits (see data/doc/formats.md). Inputs of rank 3 except patch_embed's
 * image. 0, or -1 with the error set. */
static int infer_seq(pctx *p, network *net, int i)
{
    layer *l = &net->layers[i];
    const char *ln = l->name;
    const layer *in0 = &net->layers[l->inputs[0]];
    shape s = in0->out;
    char m[256];
    if (l->type == LT_PATCH_EMBED) {
        if (s.rank != 4) return layer_fail(p, ln, i, "needs an image (c, h, w) input, but \"%s\" is not one", in0->name);
        if (s.h % l->patch || s.w % l->patch) {
            snprintf(m, sizeof m, "patch %d does not divide the image %ldx%ld from \"%s\"", l->patch, s.h, s.w, in0->name);
            return layer_fail(p, ln, i, "%s", m);
        }
        l->out = (shape){l->out_features, (s.h / l->patch) * (s.w / l->patch), 1, 3};
        l->n_params = l->out_features * (s.c * l->patch * l->patch + 1);
        l->dims = DIMMASK(DIM_N) | DIMMASK(DIM_C);
        return 0;
    }
    if (s.rank != 3) {
        snprintf(m, sizeof m, "a %s layer needs a (sequence, features) input, but \"%s\" is %s",
                 layer_type_name(l->type), in0->name, s.rank == 4 ? "an image (c, h, w)" : "flat");
        return layer_fail(p, ln, i, "%s", m);
    }
    const unsigned nsc = DIMMASK(DIM_N) | DIMMASK(DIM_H) | DIMMASK(DIM_C);
    l->out = s;
    l->dims = nsc | DIMMASK(DIM_X);
    switch (l->type) {
    case LT_EMBEDDING:
        if (s.c != 1) {
            snprintf(m, sizeof m, "reads token ids (1 feature), but \"%s\" has %ld features", in0->name, s.c);
            return layer_fail(p, ln, i, "%s", m);
        }
        if (l->positions > 0 && l->positions < s.h) {
            snprintf(m, sizeof m, "%ld learned positions are fewer than the sequence's %ld", l->positions, s.h);
            return layer_fail(p, ln, i, "%s", m);
        }
        if ((double)(l->vocab + l->positions + l->segments) * (double)l->out_features > 4e10)
            return layer_fail(p, ln, i, "%s", "the embedding tables have more than 4e10 entries");
        l->out.c = l->out_features;
        l->n_params = (l->vocab + l->positions + l->segments) * l->out_features;
        l->contract = l->vocab;
        l->dims = nsc | DIMMASK(DIM_R);
        break;
    case LT_LAYERNORM:
    case LT_RMSNORM:
        l->n_params = (l->type == LT_LAYERNORM ? 2 : 1) * s.c;
        l->dims = DIMMASK(DIM_N) | DIMMASK(DIM_H) | DIMMASK(DIM_X); /* never the normalised features */
        break;
    case LT_ATTENTION:
        if (infer_attention(p, l, i, in0) < 0) return -1;
        break;
    case LT_LINEAR:
        if ((double)l->out_features * (double)s.c > 4e10)
            return layer_fail(p, ln, i, "%s", "weight matrix has more than 4e10 entries");
        l->out.c = l->out_features;
        l->n_params = l->out_features * (s.c + (l->bias ? 1 : 0));
        l->contract = s.c;
        l->dims = nsc | DIMMASK(DIM_R);
        break;
    case LT_LM_HEAD:
        if (l->tied >= 0) {
            const layer *e = &net->layers[l->tied];
            if (e->vocab != l->vocab || e->out_features != s.c) {
                snprintf(m, sizeof m, "tied to \"%s\" (%ld x %ld), but reads %ld features into %ld words", e->name, e->vocab,
                         e->out_features, s.c, l->vocab);
                return layer_fail(p, ln, i, "%s", m);
            }
        }
        if ((double)l->vocab * (double)s.c > 4e10)
            return layer_fail(p, ln, i, "%s", "weight matrix has more than 4e10 entries");
        l->out.c = l->vocab;
        l->n_params = l->tied >= 0 ? (l->bias ? l->vocab : 0) : l->vocab * (s.c + (l->bias ? 1 : 0));
        l->contract = s.c;
        l->dims = nsc | DIMMASK(DIM_R);
        break;
    case LT_SWIGLU:
        if (s.c % 2) {
            snprintf(m, sizeof m, "needs an even number of features (gate and up), but \"%s\" has %ld", in0->name, s.c);
            return layer_fail(p, ln, i, "%s", m);
        }
        l->out.c = s.c / 2;
        break;
    case LT_CLS_TOKEN:
        l->out.h = s.h + 1;
        l->n_params = s.c + (s.h + 1) * s.c;
        l->dims = DIMMASK(DIM_N) | DIMMASK(DIM_C) | DIMMASK(DIM_X);
        break;
    case LT_SELECT_TOKEN:
        if (l->index >= s.h) {
            snprintf(m, sizeof m, "\"index\" %ld is past the %ld positions of \"%s\"", l->index, s.h, in0->name);
            return layer_fail(p, ln, i, "%s", m);
        }
        l->out.h = 1;
        l->dims = DIMMASK(DIM_N) | DIMMASK(DIM_C) | DIMMASK(DIM_X);
        break;
    default: /* gelu; relu, dropout, softmax, add on a sequence */
        break;
    }
    return 0;
}

static int is_seq_type(int t)
{
    return t >= LT_EMBEDDING && t < LT__COUNT;
}

/* A conv2d's or pool2d's own fields into l (type t): conv2d's
 * out_channels and bias, pool2d's mode, and both's kernel, stride (pool2d:
 * the kernel by default) and padding. 0, or -1 with the error set. */
static int parse_window(pctx *p, const cJSON *o, int index, int t, layer *l)
{
    const char *ln = l->name;
    long a = 0, b = 0;
    int rc;
    if (check_keys(p, o, t == LT_CONV2D ? conv_keys : pool_keys, ln, index)) return -1;
    if (t == LT_CONV2D) {
        rc = get_int_field(p, o, "out_channels", 0, 1, NET_MAX_DIM, &a, NULL, ln, index);
        if (rc < 0) return -1;
        if (rc == 0) return layer_fail(p, ln, index, "%s", "conv2d needs \"out_channels\"");
        l->out_channels = a;
        const cJSON *bias = cJSON_GetObjectItemCaseSensitive(o, "bias");
        if (bias && !cJSON_IsBool(bias)) return layer_fail(p, ln, index, "%s", "\"bias\" must be true or false");
        if (bias) l->bias = cJSON_IsTrue(bias);
    } else {
        const cJSON *mode = cJSON_GetObjectItemCaseSensitive(o, "mode");
        if (!mode) {
            l->pool_max = 1;
        } else if (cJSON_IsString(mode) && strcmp(mode->valuestring, "max") == 0) {
            l->pool_max = 1;
        } else if (cJSON_IsString(mode) && strcmp(mode->valuestring, "avg") == 0) {
            l->pool_max = 0;
        } else {
            return layer_fail(p, ln, index, "%s", "\"mode\" must be \"max\" or \"avg\"");
        }
    }
    rc = get_int_field(p, o, "kernel", 1, 1, 4096, &a, &b, ln, index);
    if (rc < 0) return -1;
    if (rc == 0) return layer_fail(p, ln, index, "%s", "needs \"kernel\"");
    l->kh = (int)a;
    l->kw = (int)b;
    l->sh = t == LT_POOL2D ? l->kh : 1;
    l->sw = t == LT_POOL2D ? l->kw : 1;
    rc = get_int_field(p, o, "stride", 1, 1, 4096, &a, &b, ln, index);
    if (rc < 0) return -1;
    if (rc) {
        l->sh = (int)a;
        l->sw = (int)b;
    }
    rc = get_int_field(p, o, "padding", 1, 0, 4096, &a, &b, ln, index);
    if (rc < 0) return -1;
    if (rc) {
        l->ph = (int)a;
        l->pw = (int)b;
    }
    return 0;
}

static int parse_layer(pctx *p, const cJSON *o, int index, raw_layer *r)
{
    memset(r, 0, sizeof *r);
    if (!cJSON_IsObject(o)) return layer_fail(p, NULL, index, "%s", "must be an object");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return layer_fail(p, NULL, index, "%s", "needs a non-empty string \"name\"");
    const char *ln = name->valuestring;
    char why[128];
    if (lw_check_text(ln, LW_NAME_MAX, why, sizeof why) != 0) {
        char m[160];
        snprintf(m, sizeof m, "\"name\" %s", why);
        return layer_fail(p, NULL, index, "%s", m);
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, "type");
    if (!cJSON_IsString(type)) return layer_fail(p, ln, index, "%s", "needs a string \"type\"");
    int t = layer_type_from_name(type->valuestring);
    if (t < 0) {
        char m[400];
        snprintf(m, sizeof m,
                 "unknown layer type \"%.100s\" (known: conv2d, pool2d, linear, flatten, concat, add, softmax, "
                 "relu, batchnorm, dropout, embedding, layernorm, rmsnorm, attention, gelu, swiglu, lm_head, "
                 "patch_embed, cls_token, select_token)",
                 type->valuestring);
        return layer_fail(p, ln, index, "%s", m);
    }
    layer *l = &r->l;
    l->type = (layer_type)t;
    l->name = (char *)ln; /* borrowed until copied */
    l->bias = 1;
    l->tied = -1;
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(o, "inputs");
    if (!cJSON_IsArray(inputs) || cJSON_GetArraySize(inputs) < 1)
        return layer_fail(p, ln, index, "%s", "needs \"inputs\": a non-empty array of layer names");
    int ni = cJSON_GetArraySize(inputs);
    int multi = (t == LT_CONCAT || t == LT_ADD);
    if (!multi && ni != 1) {
        char m[128];
        snprintf(m, sizeof m, "a %s layer takes exactly one input, not %d", type->valuestring, ni);
        return layer_fail(p, ln, index, "%s", m);
    }
    if (multi && (ni < 2 || ni > NET_MAX_INPUTS)) {
        char m[128];
        snprintf(m, sizeof m, "a %s layer takes 2 to %d inputs, not %d", type->valuestring, NET_MAX_INPUTS, ni);
        return layer_fail(p, ln, index, "%s", m);
    }
    for (const cJSON *it = inputs->child; it; it = it->next)
        if (!cJSON_IsString(it)) return layer_fail(p, ln, index, "%s", "\"inputs\" must hold layer names (strings)");
    r->inputs = inputs;
    l->n_inputs = ni;

    long a = 0;
    int rc;
    switch (t) {
    case LT_CONV2D:
    case LT_POOL2D:
        if (parse_window(p, o, index, t, l) != 0) return -1;
        break;
    case LT_LINEAR: {
        if (check_keys(p, o, linear_keys, ln, index)) return -1;
        rc = get_int_field(p, o, "out_features", 0, 1, NET_MAX_DIM, &a, NULL, ln, index);
        if (rc < 0) return -1;
        if (rc == 0) return layer_fail(p, ln, index, "%s", "linear needs \"out_features\"");
        l->out_features = a;
        const cJSON *bias = cJSON_GetObjectItemCaseSensitive(o, "bias");
        if (bias && !cJSON_IsBool(bias)) return layer_fail(p, ln, index, "%s", "\"bias\" must be true or false");
        if (bias) l->bias = cJSON_IsTrue(bias);
        break;
    }
    default:
        if (is_seq_type(t)) return parse_seq_layer(p, o, index, t, r);
        if (check_keys(p, o, no_keys, ln, index)) return -1;
        break;
    }
    return 0;
}

/* net_from_json in its phases: the document's header (format, fields, name,
 * input), the layers as written (raw[0] is the input), their inputs resolved
 * by name, a topological order, and the network built in that order with
 * shapes inferred. Each phase reports its own error through lw_fail and
 * returns -1; net_from_json frees what exists in one place. */

/* The top-level object: "format", known fields, "name" and "input". */
typedef struct net_header {
    const char *name;    /* the network's */
    const char *in_name; /* the input's ("data" when absent) */
    long c, h, w;
    long seq;            /* a sequence of token ids (rank 3, one feature): its length; 0: an image */
} net_header;

static int parse_header(const pctx *p, const cJSON *root, net_header *hd)
{
    const char *text = p->text, *label = p->label;
    lw_error *err = p->err;
    if (!cJSON_IsObject(root)) return lw_fail(err, 2, "%s: the top level must be a JSON object", label);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "layerwise-net/1") != 0) {
        int line = 1, col = 1;
        if (fmt && cJSON_IsString(fmt)) {
            const char *q = strstr(text, fmt->valuestring);
            if (q) json_line_col(text, (size_t)(q - text), &line, &col);
        }
        return lw_fail(err, 2, "%s:%d: \"format\" must be \"layerwise-net/1\"%s", label, line,
                       cJSON_IsString(fmt) ? "" : " (missing)");
    }
    /* a typo ("Layers") is an error, not a silent default */
    static const char *const top[] = {"format", "name", "input", "layers", "comment", "description", "source", NULL};
    for (const cJSON *it = root->child; it; it = it->next)
        if (!in_list(top, it->string))
            return lw_fail(err, 2, "%s:%d: unknown field \"%.100s\" (a network has %s)", label,
                           json_line_of_key(text, it->string), it->string, "format, name, input, layers, comment, description and source");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return lw_fail(err, 2, "%s: needs a non-empty string \"name\"", label);
    char why[128];
    if (lw_check_text(name->valuestring, LW_NAME_MAX, why, sizeof why) != 0)
        return lw_fail(err, 2, "%s:%d: the network's \"name\" %s", label, json_line_of_key(text, "name"), why);
    hd->name = name->valuestring;

    const cJSON *input = cJSON_GetObjectItemCaseSensitive(root, "input");
    if (!cJSON_IsObject(input))
        return lw_fail(err, 2, "%s: needs an \"input\" object {\"name\", \"channels\", \"height\", \"width\"}", label);
    static const char *const keys[] = {"name", "channels", "height", "width", "sequence", "comment", NULL};
    for (const cJSON *it = input->child; it; it = it->next)
        if (!in_list(keys, it->string))
            return lw_fail(err, 2, "%s:%d: input: unknown field \"%.100s\" (an input has name, channels, height and width; or name and sequence)",
                           label, json_line_of_key(text, it->string), it->string);
    const cJSON *iname = cJSON_GetObjectItemCaseSensitive(input, "name");
    if (iname && (!cJSON_IsString(iname) || !iname->valuestring[0]))
        return lw_fail(err, 2, "%s:%d: input \"name\" must be a non-empty string (or absent: \"data\")", label,
                       json_line_of_key(text, "input"));
    hd->in_name = iname ? iname->valuestring : "data";
    if (lw_check_text(hd->in_name, LW_NAME_MAX, why, sizeof why) != 0)
        return lw_fail(err, 2, "%s:%d: input \"name\" %s", label, json_line_of_key(text, "input"), why);
    const cJSON *seq = cJSON_GetObjectItemCaseSensitive(input, "sequence");
    if (seq) {
        /* token ids: (sequence, 1 feature) */
        if (cJSON_GetObjectItemCaseSensitive(input, "channels") || cJSON_GetObjectItemCaseSensitive(input, "height") ||
            cJSON_GetObjectItemCaseSensitive(input, "width"))
            return lw_fail(err, 2, "%s:%d: input has \"sequence\" (token ids) and image dimensions: give one or the other",
                           label, json_line_of_key(text, "sequence"));
        if (!cJSON_IsNumber(seq) || seq->valuedouble != floor(seq->valuedouble) || seq->valuedouble < 1 ||
            seq->valuedouble > (double)NET_MAX_DIM)
            return lw_fail(err, 2, "%s:%d: input \"sequence\" must be an integer from 1 to %ld", label,
                           json_line_of_key(text, "sequence"), NET_MAX_DIM);
        hd->seq = (long)seq->valuedouble;
        hd->c = 1, hd->h = hd->seq, hd->w = 1;
        return 0;
    }
    const char *dim_keys[3] = {"channels", "height", "width"};
    long *dst[3] = {&hd->c, &hd->h, &hd->w};
    for (int k = 0; k < 3; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(input, dim_keys[k]);
        if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 1 ||
            v->valuedouble > (double)NET_MAX_DIM)
            return lw_fail(err, 2, "%s:%d: input \"%s\" must be an integer from 1 to %ld%s", label,
                           input_line_of_key(text, v ? dim_keys[k] : "input"), dim_keys[k], NET_MAX_DIM,
                           v ? "" : " (missing)");
        *dst[k] = (long)v->valuedouble;
    }
    if ((double)hd->c * hd->h * hd->w > (double)NET_MAX_ELEMS)
        return lw_fail(err, 2, "%s:%d: input %ldx%ldx%ld is beyond the supported size", label,
                       json_line_of_key(text, "input"), hd->c, hd->h, hd->w);
    return 0;
}

/* Layer names sorted with their indices, for duplicate checks and lookups
 * (a sort of pairs: no comparator state outside the call). */
typedef struct name_ix {
    const char *name;
    int ix;
} name_ix;

static int cmp_name_ix(const void *a, const void *b)
{
    const name_ix *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->ix > y->ix) - (x->ix < y->ix);
}

static int find_name(const name_ix *sorted, int n, const char *name)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(name, sorted[mid].name);
        if (c == 0) return sorted[mid].ix;
        if (c < 0) hi = mid - 1;
        else lo = mid + 1;
    }
    return -1;
}

/* The first layer that repeats a name (the input's, or an earlier layer's),
 * reported at the line of that repetition. */
static int fail_duplicate(pctx *p, const raw_layer *raw, int n, const char *dn)
{
    int with_input = strcmp(raw[0].l.name, dn) == 0;
    int dup = -1, rank = 0, n_named = 0;
    for (int k = 1; k < n; k++)
        if (strcmp(raw[k].l.name, dn) == 0) {
            n_named++;
            if (dup < 0 && (with_input || n_named == 2)) {
                dup = k;
                rank = n_named;
            }
        }
    /* layers' "name" entries come after the network's and the input's in a
     * usual file: count back from the last one */
    int total = 0;
    while (line_of_nth_name(p->text, dn, total + 1)) total++;
    int line = total >= n_named ? line_of_nth_name(p->text, dn, total - n_named + rank) : 0;
    const char *what = with_input ? "has the same name as the input" : "name used by an earlier layer too";
    if (line) return lw_fail(p->err, 2, "%s:%d: layer \"%s\": %s", p->label, line, dn, what);
    return layer_fail(p, dn, dup - 1, "%s", what);
}

/* Names unique; each layer's "inputs" resolved to indices into raw. */
static int resolve_inputs(pctx *p, raw_layer *raw, int n)
{
    name_ix *sorted = lw_malloc(sizeof *sorted * (size_t)n);
    for (int i = 0; i < n; i++) sorted[i] = (name_ix){raw[i].l.name, i};
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_name_ix);
    int rc = 0;
    for (int i = 1; i < n && rc == 0; i++)
        if (strcmp(sorted[i].name, sorted[i - 1].name) == 0) rc = fail_duplicate(p, raw, n, sorted[i].name);
    for (int i = 1; i < n && rc == 0; i++) {
        raw[i].l.inputs = lw_malloc(sizeof(int) * (size_t)raw[i].l.n_inputs);
        int k = 0;
        for (const cJSON *it = raw[i].inputs->child; it && rc == 0; it = it->next, k++) {
            int found = find_name(sorted, n, it->valuestring);
            if (found < 0) {
                char m[300];
                snprintf(m, sizeof m, "input \"%.200s\" is not a layer of this network", it->valuestring);
                rc = layer_fail(p, raw[i].l.name, i - 1, "%s", m);
            } else if (found == i) {
                rc = layer_fail(p, raw[i].l.name, i - 1, "%s", "takes itself as input (a cycle)");
            } else {
                raw[i].l.inputs[k] = found;
            }
        }
    }
    free(sorted);
    return rc ? -1 : 0;
}

/* A cycle among the layers Kahn's algorithm could not place (indeg > 0),
 * named in data-flow order. */
static int fail_cycle(pctx *p, const raw_layer *raw, int n, const int *indeg)
{
    int bad = -1;
    for (int i = 1; i < n && bad < 0; i++)
        if (indeg[i] > 0) bad = i;
    /* a layer left over may only depend on a cycle: walk back along inputs
     * that were never ordered; after n steps we are on it */
    for (int step = 0; step < n; step++) {
        int next = -1;
        for (int k = 0; k < raw[bad].l.n_inputs && next < 0; k++)
            if (indeg[raw[bad].l.inputs[k]] > 0) next = raw[bad].l.inputs[k];
        if (next < 0) break;
        bad = next;
    }
    int *cyc = lw_malloc(sizeof(int) * (size_t)(n + 1));
    int nc = 0, v = bad;
    do {
        cyc[nc++] = v;
        int next = -1;
        for (int k = 0; k < raw[v].l.n_inputs && next < 0; k++)
            if (indeg[raw[v].l.inputs[k]] > 0) next = raw[v].l.inputs[k];
        v = next;
    } while (v >= 0 && v != bad && nc < n);
    lw_buf b = {0};
    lw_buf_printf(&b, "is part of a cycle (");
    for (int k = nc; k >= 0; k--) {
        if (k < nc - 6 && k > 0) {
            if (k == nc - 7) lw_buf_printf(&b, " -> ...");
            continue;
        }
        lw_buf_printf(&b, "%s\"%.60s\"", k == nc ? "" : " -> ", raw[cyc[k % nc]].l.name);
    }
    lw_buf_printf(&b, "): every layer of it takes the one before as input");
    int rc = layer_fail(p, raw[bad].l.name, bad - 1, "%s", b.s);
    lw_buf_free(&b);
    free(cyc);
    return rc;
}

/* A topological order of raw[0..n) that keeps the file's order wherever the
 * graph allows (Kahn's algorithm taking the smallest ready index each round);
 * a cycle is reported. */
static int topo_order(pctx *p, const raw_layer *raw, int n, int *order)
{
    int *indeg = lw_calloc((size_t)n, sizeof(int));
    int *cnt = lw_calloc((size_t)n + 1, sizeof(int)); /* consumers of v: cons[cnt[v]..cnt[v+1]) */
    for (int i = 1; i < n; i++) {
        indeg[i] = raw[i].l.n_inputs;
        for (int k = 0; k < raw[i].l.n_inputs; k++) cnt[raw[i].l.inputs[k] + 1]++;
    }
    for (int i = 0; i < n; i++) cnt[i + 1] += cnt[i];
    int *cons = lw_malloc(sizeof(int) * (size_t)(cnt[n] + 1));
    int *fill = lw_malloc(sizeof(int) * (size_t)n);
    memcpy(fill, cnt, sizeof(int) * (size_t)n);
    for (int i = 1; i < n; i++)
        for (int k = 0; k < raw[i].l.n_inputs; k++) cons[fill[raw[i].l.inputs[k]]++] = i;
    /* ready[head..nr) holds the layers whose inputs are all placed; each
     * round takes the smallest index among them by a linear scan */
    int *ready = lw_malloc(sizeof(int) * (size_t)n);
    int nr = 0, no = 0, head = 0;
    ready[nr++] = 0; /* the input; every other layer has inputs */
    while (head < nr) {
        int best = head;
        for (int k = head + 1; k < nr; k++)
            if (ready[k] < ready[best]) best = k;
        int v = ready[best];
        ready[best] = ready[head];
        ready[head++] = v;
        order[no++] = v;
        for (int k = cnt[v]; k < cnt[v + 1]; k++)
            if (--indeg[cons[k]] == 0) ready[nr++] = cons[k]; /* an input listed twice counts twice */
    }
    int rc = no < n ? fail_cycle(p, raw, n, indeg) : 0;
    free(cnt);
    free(cons);
    free(fill);
    free(ready);
    free(indeg);
    return rc ? -1 : 0;
}

/* What the loader derives once the layers hold what a file gives
 * (net_finish): the input's splits; each tied lm_head's embedding checked
 * and linked back to it; every other layer's output shape, parameters,
 * contraction and splits (infer); and each layer's consumers. 0, or -1
 * with the error set. */
static int finish(pctx *p, network *net)
{
    layer *in = &net->layers[0];
    in->dims = in->out.rank == 3 ? DIMMASK(DIM_N) | DIMMASK(DIM_H)
                                 : DIMMASK(DIM_N) | DIMMASK(DIM_C) | DIMMASK(DIM_H) | DIMMASK(DIM_W);
    for (int k = 1; k < net->n_layers; k++) {
        layer *l = &net->layers[k];
        if (l->type != LT_LM_HEAD || l->tied < 0) continue;
        layer *e = &net->layers[l->tied];
        char m[300];
        if (e->type != LT_EMBEDDING) {
            snprintf(m, sizeof m, "\"tied\": \"%.200s\" is not an embedding layer of this network", e->name);
            return layer_fail(p, l->name, k, "%s", m);
        }
        if (e->tied >= 0 && e->tied != k) {
            snprintf(m, sizeof m, "\"tied\": \"%.200s\" is tied to \"%.60s\" already", e->name,
                     net->layers[e->tied].name);
            return layer_fail(p, l->name, k, "%s", m);
        }
        e->tied = k; /* and the embedding names its lm_head */
    }
    for (int k = 0; k < net->n_layers; k++) net->layers[k].n_outputs = 0;
    for (int k = 1; k < net->n_layers; k++) {
        if (infer(p, net, k) < 0) return -1;
        for (int j = 0; j < net->layers[k].n_inputs; j++) net->layers[net->layers[k].inputs[j]].n_outputs++;
    }
    return 0;
}

int net_finish(network *net, const char *label, lw_error *err)
{
    pctx p = {NULL, label, err, NULL, 0, 0};
    return finish(&p, net);
}

/* The network in topological order, inputs renumbered; shapes inferred. */
static network *build_network(pctx *p, const net_header *hd, const raw_layer *raw, int n, const int *order)
{
    int *pos = lw_malloc(sizeof(int) * (size_t)n);
    for (int k = 0; k < n; k++) pos[order[k]] = k;
    network *net = lw_calloc(1, sizeof *net);
    net->name = lw_strdup(hd->name);
    net->path = lw_strdup(p->label);
    net->n_layers = n;
    net->layers = lw_calloc((size_t)n, sizeof(layer));
    for (int k = 0; k < n; k++) {
        const raw_layer *r = &raw[order[k]];
        layer *l = &net->layers[k];
        *l = r->l;
        l->name = lw_strdup(r->l.name);
        l->inputs = NULL;
        if (r->l.n_inputs) {
            l->inputs = lw_malloc(sizeof(int) * (size_t)r->l.n_inputs);
            for (int j = 0; j < r->l.n_inputs; j++) l->inputs[j] = pos[r->l.inputs[j]];
        }
    }
    free(pos);
    p->raw_index = 0; /* from here a layer index is the network's */
    for (int k = 1; k < n; k++) {
        const char *tied = raw[order[k]].tied;
        if (!tied) continue;
        int e = net_find(net, tied);
        if (e < 0) {
            char m[300];
            snprintf(m, sizeof m, "\"tied\": \"%.200s\" is not an embedding layer of this network", tied);
            layer_fail(p, net->layers[k].name, k, "%s", m);
            net_free(net);
            return NULL;
        }
        net->layers[k].tied = e;
    }
    if (finish(p, net) < 0) {
        net_free(net);
        return NULL;
    }
    return net;
}

network *net_from_json(const char *text, size_t len, const char *label, lw_error *err)
{
    pctx p = {text, label, err, NULL, 0, 1};
    cJSON *root = json_parse_doc(text, len, label, err);
    if (!root) return NULL;
    json_scan(text, len, label, "layers", &p.item_off, &p.n_items, NULL);
    network *net = NULL;
    raw_layer *raw = NULL;
    int n_raw = 0, *order = NULL;
    net_header hd = {0};
    if (parse_header(&p, root, &hd) < 0) goto done;

    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    if (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) < 1) {
        lw_fail(err, 2, "%s: needs a non-empty \"layers\" array", label);
        goto done;
    }
    n_raw = cJSON_GetArraySize(layers);
    if (n_raw > NET_MAX_LAYERS) {
        lw_fail(err, 2, "%s: %d layers; at most %d are supported", label, n_raw, NET_MAX_LAYERS);
        n_raw = 0;
        goto done;
    }
    raw = lw_calloc((size_t)n_raw + 1, sizeof *raw);
    raw[0].l.name = (char *)hd.in_name; /* raw[0] is the input */
    raw[0].l.type = LT_INPUT;
    raw[0].l.tied = -1;
    raw[0].l.out = (shape){hd.c, hd.h, hd.w, hd.seq ? 3 : 4}; /* its splits: finish */
    int k = 1;
    for (const cJSON *it = layers->child; it; it = it->next, k++)
        if (parse_layer(&p, it, k - 1, &raw[k]) < 0) goto done;
    int n = n_raw + 1;
    order = lw_malloc(sizeof(int) * (size_t)n);
    if (resolve_inputs(&p, raw, n) < 0 || topo_order(&p, raw, n, order) < 0) goto done;
    net = build_network(&p, &hd, raw, n, order);

done:
    free(p.item_off);
    if (raw)
        for (int i = 0; i <= n_raw; i++) free(raw[i].l.inputs);
    free(raw);
    free(order);
    cJSON_Delete(root);
    return net;
}

network *net_load_file(const char *path, lw_error *err)
{
    size_t len;
    char *text = lw_read_file(path, &len, err);
    if (!text) return NULL;
    network *net = net_from_json(text, len, path, err);
    free(text);
    return net;
}

static void add_pair(cJSON *o, const char *key, int a, int b)
{
    if (a == b) {
        cJSON_AddNumberToObject(o, key, a);
    } else {
        cJSON *arr = cJSON_AddArrayToObject(o, key);
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(a));
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(b));
    }
}

/* A transformer layer's own fields, as parse_seq_layer reads them (only
 * those that differ from the defaults). */
static void seq_fields_to_json(const network *net, const layer *l, cJSON *o)
{
    switch (l->type) {
    case LT_EMBEDDING:
        cJSON_AddNumberToObject(o, "vocab", (double)l->vocab);
        cJSON_AddNumberToObject(o, "hidden", (double)l->out_features);
        if (l->positions) cJSON_AddNumberToObject(o, "positions", (double)l->positions);
        if (l->segments) cJSON_AddNumberToObject(o, "segments", (double)l->segments);
        break;
    case LT_ATTENTION: {
        cJSON_AddNumberToObject(o, "heads", l->heads);
        if (l->kv_heads != l->heads) cJSON_AddNumberToObject(o, "kv_heads", l->kv_heads);
        const layer *in = &net->layers[l->inputs[0]];
        if (l->head_dim * l->heads != in->out.c) cJSON_AddNumberToObject(o, "head_dim", (double)l->head_dim);
        if (l->causal) cJSON_AddTrueToObject(o, "causal");
        if (l->rotary) cJSON_AddTrueToObject(o, "rotary");
        if (!l->bias) cJSON_AddFalseToObject(o, "bias");
        break;
    }
    case LT_LM_HEAD:
        cJSON_AddNumberToObject(o, "vocab", (double)l->vocab);
        if (l->tied >= 0) cJSON_AddStringToObject(o, "tied", net->layers[l->tied].name);
        if (l->bias) cJSON_AddTrueToObject(o, "bias");
        break;
    case LT_PATCH_EMBED:
        cJSON_AddNumberToObject(o, "patch", l->patch);
        cJSON_AddNumberToObject(o, "hidden", (double)l->out_features);
        break;
    case LT_SELECT_TOKEN:
        if (l->index) cJSON_AddNumberToObject(o, "index", (double)l->index);
        break;
    default:
        break;
    }
}

char *net_to_json(const network *net)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "layerwise-net/1");
    cJSON_AddStringToObject(root, "name", net->name);
    cJSON *in = cJSON_AddObjectToObject(root, "input");
    const layer *l0 = &net->layers[0];
    cJSON_AddStringToObject(in, "name", l0->name);
    if (l0->out.rank == 3) {
        cJSON_AddNumberToObject(in, "sequence", (double)l0->out.h);
    } else {
        cJSON_AddNumberToObject(in, "channels", (double)l0->out.c);
        cJSON_AddNumberToObject(in, "height", (double)l0->out.h);
        cJSON_AddNumberToObject(in, "width", (double)l0->out.w);
    }
    cJSON *arr = cJSON_AddArrayToObject(root, "layers");
    for (int i = 1; i < net->n_layers; i++) {
        const layer *l = &net->layers[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", l->name);
        cJSON_AddStringToObject(o, "type", layer_type_name(l->type));
        cJSON *ins = cJSON_AddArrayToObject(o, "inputs");
        for (int k = 0; k < l->n_inputs; k++)
            cJSON_AddItemToArray(ins, cJSON_CreateString(net->layers[l->inputs[k]].name));
        if (l->type == LT_CONV2D) cJSON_AddNumberToObject(o, "out_channels", (double)l->out_channels);
        if (l->type == LT_LINEAR) cJSON_AddNumberToObject(o, "out_features", (double)l->out_features);
        if (l->type == LT_POOL2D) cJSON_AddStringToObject(o, "mode", l->pool_max ? "max" : "avg");
        if (l->type == LT_CONV2D || l->type == LT_POOL2D) {
            add_pair(o, "kernel", l->kh, l->kw);
            add_pair(o, "stride", l->sh, l->sw);
            add_pair(o, "padding", l->ph, l->pw);
        }
        if ((l->type == LT_CONV2D || l->type == LT_LINEAR) && !l->bias) cJSON_AddFalseToObject(o, "bias");
        seq_fields_to_json(net, l, o);
        cJSON_AddItemToArray(arr, o);
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}
