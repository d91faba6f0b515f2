#include "netgen.h"

#include "net_json.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const family_names[NG__COUNT] = {"gpt", "llama", "bert", "vit"};

#define OPT(n, field, mx) {n, offsetof(netgen_params, field), mx}
const netgen_option netgen_options[] = {
    OPT("--layers", layers, 1024),   OPT("--hidden", hidden, 65536),  OPT("--heads", heads, 4096),
    OPT("--kv-heads", kv_heads, 4096), OPT("--ffn", ffn, 262144),     OPT("--seq", seq, 1048576),
    OPT("--vocab", vocab, 4194304),  OPT("--patch", patch, 4096),    OPT("--image", image, 16384),
    OPT("--classes", classes, 1048576),
};
#undef OPT
const int netgen_n_options = (int)(sizeof netgen_options / sizeof netgen_options[0]);

/* The options each family takes, by index into netgen_options: layers,
 * hidden, heads, kv-heads, ffn, seq, vocab, patch, image, classes. */
static const char takes[NG__COUNT][10] = {
    {1, 1, 1, 0, 1, 1, 1, 0, 0, 0}, /* gpt */
    {1, 1, 1, 1, 1, 1, 1, 0, 0, 0}, /* llama */
    {1, 1, 1, 0, 1, 1, 1, 0, 0, 0}, /* bert */
    {1, 1, 1, 0, 1, 0, 0, 1, 1, 1}, /* vit */
};

static long *field(netgen_params *p, int k)
{
    return (long *)((char *)p + netgen_options[k].offset);
}

static long get(const netgen_params *p, int k)
{
    return *(const long *)((const char *)p + netgen_options[k].offset);
}

int netgen_family_from_name(const char *s)
{
    for (int f = 0; s && f < NG__COUNT; f++)
        if (strcmp(s, family_names[f]) == 0) return f;
    return -1;
}

const char *netgen_family_name(netgen_family f)
{
    return family_names[f];
}

/* Llama's FFN width for a hidden size: 2/3 of 4H rounded up to a multiple
 * of 256 (the reference code's `multiple_of`; 11008 for 4096). */
static long llama_ffn(long hidden)
{
    long f = 2 * (4 * hidden) / 3;
    return (f + 255) / 256 * 256;
}

/* The FFN width and KV heads a family has for the other sizes. */
static void derived_defaults(netgen_family f, netgen_params *p, const netgen_params *given)
{
    if (!given->ffn) p->ffn = f == NG_LLAMA ? llama_ffn(p->hidden) : 4 * p->hidden;
    if (!given->kv_heads) p->kv_heads = p->heads;
}

void netgen_defaults(netgen_family f, netgen_params *p)
{
    memset(p, 0, sizeof *p);
    switch (f) {
    case NG_GPT: /* GPT-2 small (Radford et al. 2019) */
        *p = (netgen_params){.layers = 12, .hidden = 768, .heads = 12, .seq = 1024, .vocab = 50257};
        break;
    case NG_LLAMA: /* Llama-2-7B (Touvron et al. 2023) */
        *p = (netgen_params){.layers = 32, .hidden = 4096, .heads = 32, .seq = 4096, .vocab = 32000};
        break;
    case NG_BERT: /* BERT-base (Devlin et al. 2019), uncased vocabulary */
        *p = (netgen_params){.layers = 12, .hidden = 768, .heads = 12, .seq = 512, .vocab = 30522};
        break;
    default: /* ViT-B/16 (Dosovitskiy et al. 2021) on ImageNet-1k */
        *p = (netgen_params){.layers = 12, .hidden = 768, .heads = 12, .patch = 16, .image = 224, .classes = 1000};
        break;
    }
    netgen_params none = {0};
    derived_defaults(f, p, &none);
}

/* "--hidden 1000" or "--hidden 1000 (the default)" into buf. */
static const char *said(const netgen_params *given, const netgen_params *p, int k, char *buf, size_t n)
{
    snprintf(buf, n, "%s %ld%s", netgen_options[k].name, get(p, k), get(given, k) ? "" : " (the default)");
    return buf;
}

enum { O_LAYERS, O_HIDDEN, O_HEADS, O_KV, O_FFN, O_SEQ, O_VOCAB, O_PATCH, O_IMAGE, O_CLASSES };

/* Products of sizes within the loader's limits: weight matrices of at most
 * 4e10 entries, tensors of at most NET_MAX_ELEMS elements a sample. */
static int check_products(netgen_family f, const netgen_params *g, const netgen_params *p, lw_error *err)
{
    char a[64], b[64];
    const double wmax = 4e10, emax = (double)NET_MAX_ELEMS;
    double ffn_out = f == NG_LLAMA ? 2.0 * p->ffn : (double)p->ffn;
    if ((double)p->hidden * ffn_out > wmax)
        return lw_fail(err, 2, "%s with %s: fc1's weight matrix would have %.3g entries; at most 4e10 are supported",
                       said(g, p, O_FFN, a, sizeof a), said(g, p, O_HIDDEN, b, sizeof b), (double)p->hidden * ffn_out);
    if (f != NG_VIT && (double)p->hidden * p->vocab > wmax)
        return lw_fail(err, 2, "%s with %s: the embedding table would have %.3g entries; at most 4e10 are supported",
                       said(g, p, O_VOCAB, a, sizeof a), said(g, p, O_HIDDEN, b, sizeof b), (double)p->hidden * p->vocab);
    if (f == NG_VIT && (double)p->hidden * p->classes > wmax)
        return lw_fail(err, 2, "%s with %s: the head's weight matrix would have %.3g entries; at most 4e10 are "
                       "supported", said(g, p, O_CLASSES, a, sizeof a), said(g, p, O_HIDDEN, b, sizeof b),
                       (double)p->hidden * p->classes);
    if (f == NG_VIT && 3.0 * p->patch * p->patch * p->hidden > wmax)
        return lw_fail(err, 2, "%s with %s: the patch embedding would have %.3g weights; at most 4e10 are supported",
                       said(g, p, O_PATCH, a, sizeof a), said(g, p, O_HIDDEN, b, sizeof b),
                       3.0 * p->patch * p->patch * p->hidden);
    long seq = f == NG_VIT ? (p->image / p->patch) * (p->image / p->patch) + 1 : p->seq;
    if (seq > NET_MAX_DIM)
        return lw_fail(err, 2, "%s with %s: %ld patches; a sequence of at most %ld is supported",
                       said(g, p, O_IMAGE, a, sizeof a), said(g, p, O_PATCH, b, sizeof b), seq - 1, NET_MAX_DIM);
    double widest = (double)(p->hidden > ffn_out ? (double)p->hidden : ffn_out);
    if (f != NG_VIT && (double)p->vocab > widest) widest = (double)p->vocab;
    if ((double)seq * widest > emax) {
        const int k = f == NG_VIT ? O_IMAGE : O_SEQ;
        return lw_fail(err, 2, "%s: a sample's widest tensor would have %ld x %.0f = %.3g elements; at most %.3g are "
                       "supported", said(g, p, k, a, sizeof a), seq, widest, (double)seq * widest, emax);
    }
    return 0;
}

int netgen_resolve(netgen_family f, const netgen_params *given, netgen_params *p, lw_error *err)
{
    for (int k = 0; k < netgen_n_options; k++)
        if (get(given, k) && !takes[f][k])
            return lw_fail(err, 2, "%s is not an option of net %s", netgen_options[k].name, family_names[f]);
    netgen_defaults(f, p);
    for (int k = 0; k < netgen_n_options; k++)
        if (get(given, k)) *field(p, k) = get(given, k);
    derived_defaults(f, p, given);
    char a[64], b[64];
    for (int k = 0; k < netgen_n_options; k++)
        if (takes[f][k] && (get(p, k) < 1 || get(p, k) > netgen_options[k].max))
            return lw_fail(err, 2, "%s must be a whole number from 1 to %ld", said(given, p, k, a, sizeof a),
                           netgen_options[k].max);
    if (p->hidden % p->heads != 0)
        return lw_fail(err, 2, "%s is not divisible by %s: every head needs the same number of features",
                       said(given, p, O_HIDDEN, a, sizeof a), said(given, p, O_HEADS, b, sizeof b));
    if (f == NG_LLAMA && p->heads % p->kv_heads != 0)
        return lw_fail(err, 2, "%s is not divisible by %s: each key/value head serves the same number of query heads",
                       said(given, p, O_HEADS, a, sizeof a), said(given, p, O_KV, b, sizeof b));
    if (f == NG_VIT && p->image % p->patch != 0)
        return lw_fail(err, 2, "%s is not divisible by %s: the patches must tile the image",
                       said(given, p, O_IMAGE, a, sizeof a), said(given, p, O_PATCH, b, sizeof b));
    return check_products(f, given, p, err);
}

/* ---- building ---- */

typedef struct gen {
    network *net;
    int cap;
} gen;

/* Appends a layer called name ("block<blk>.name" when blk >= 0) of type t
 * reading in0 (none when < 0; in1 too when >= 0); returns its index. */
static int add(gen *g, int blk, const char *name, layer_type t, int in0, int in1)
{
    network *net = g->net;
    if (net->n_layers == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        net->layers = lw_realloc(net->layers, sizeof(layer) * (size_t)g->cap);
    }
    layer *l = &net->layers[net->n_layers];
    memset(l, 0, sizeof *l);
    char buf[64];
    if (blk >= 0) snprintf(buf, sizeof buf, "block%d.%s", blk, name);
    else snprintf(buf, sizeof buf, "%s", name);
    l->name = lw_strdup(buf);
    l->type = t;
    l->tied = -1;
    l->bias = 1;
    l->n_inputs = in0 < 0 ? 0 : in1 < 0 ? 1 : 2;
    if (l->n_inputs) {
        l->inputs = lw_malloc(sizeof(int) * (size_t)l->n_inputs);
        l->inputs[0] = in0;
        if (in1 >= 0) l->inputs[1] = in1;
        l->out = net->layers[in0].out; /* shape-preserving unless the caller says otherwise */
    }
    return net->n_layers++;
}

static layer *L(gen *g, int i)
{
    return &g->net->layers[i];
}

static int linear(gen *g, int blk, const char *name, int in, long out, int bias)
{
    int i = add(g, blk, name, LT_LINEAR, in, -1);
    L(g, i)->out_features = out;
    L(g, i)->bias = bias;
    L(g, i)->out.c = out;
    return i;
}

static int attention(gen *g, netgen_family f, const netgen_params *p, int blk, int in)
{
    int i = add(g, blk, "attn", LT_ATTENTION, in, -1);
    layer *l = L(g, i);
    l->heads = (int)p->heads;
    l->kv_heads = (int)p->kv_heads;
    l->head_dim = p->hidden / p->heads;
    l->causal = f == NG_GPT || f == NG_LLAMA;
    l->rotary = f == NG_LLAMA;
    l->bias = f != NG_LLAMA;
    l->out.c = l->heads * l->head_dim;
    return i;
}

/* The feed-forward part of a block reading x: fc1, the activation, fc2
 * (and, but in Llama, the dropout after it); returns its last layer. */
static int ffn(gen *g, netgen_family f, const netgen_params *p, int blk, int x)
{
    int llama = f == NG_LLAMA;
    int h = linear(g, blk, "fc1", x, llama ? 2 * p->ffn : p->ffn, !llama);
    h = add(g, blk, llama ? "swiglu" : "gelu", llama ? LT_SWIGLU : LT_GELU, h, -1);
    L(g, h)->out.c = p->ffn;
    h = linear(g, blk, "fc2", h, p->hidden, !llama);
    return llama ? h : add(g, blk, "drop2", LT_DROPOUT, h, -1);
}

/* A pre-LN block (GPT, Llama, ViT) on x; returns its output (add2). */
static int block_pre_ln(gen *g, netgen_family f, const netgen_params *p, int blk, int x)
{
    layer_type norm = f == NG_LLAMA ? LT_RMSNORM : LT_LAYERNORM;
    int h = add(g, blk, "ln1", norm, x, -1);
    h = attention(g, f, p, blk, h);
    h = linear(g, blk, "proj", h, p->hidden, f != NG_LLAMA);
    if (f != NG_LLAMA) h = add(g, blk, "drop1", LT_DROPOUT, h, -1);
    int a1 = add(g, blk, "add1", LT_ADD, x, h);
    h = add(g, blk, "ln2", norm, a1, -1);
    h = ffn(g, f, p, blk, h);
    return add(g, blk, "add2", LT_ADD, a1, h);
}

/* A post-LN block (BERT) on x; returns its output (ln2). */
static int block_post_ln(gen *g, const netgen_params *p, int blk, int x)
{
    int h = attention(g, NG_BERT, p, blk, x);
    h = linear(g, blk, "proj", h, p->hidden, 1);
    h = add(g, blk, "drop1", LT_DROPOUT, h, -1);
    int a1 = add(g, blk, "add1", LT_ADD, x, h);
    int n1 = add(g, blk, "ln1", LT_LAYERNORM, a1, -1);
    h = ffn(g, NG_BERT, p, blk, n1);
    h = add(g, blk, "add2", LT_ADD, n1, h);
    return add(g, blk, "ln2", LT_LAYERNORM, h, -1);
}

/* The input and what turns it into a sequence of hidden vectors; returns
 * the layer the first block reads. */
static int front(gen *g, netgen_family f, const netgen_params *p)
{
    int in = add(g, -1, f == NG_VIT ? "image" : "tokens", LT_INPUT, -1, -1);
    L(g, in)->bias = 0;
    if (f == NG_VIT) {
        L(g, in)->out = (shape){3, p->image, p->image, 4};
        int pe = add(g, -1, "patch_embed", LT_PATCH_EMBED, in, -1);
        L(g, pe)->patch = (int)p->patch;
        L(g, pe)->out_features = p->hidden;
        L(g, pe)->out = (shape){p->hidden, (p->image / p->patch) * (p->image / p->patch), 1, 3};
        int cls = add(g, -1, "cls_token", LT_CLS_TOKEN, pe, -1);
        L(g, cls)->out.h++;
        return cls;
    }
    L(g, in)->out = (shape){1, p->seq, 1, 3};
    int e = add(g, -1, "embed", LT_EMBEDDING, in, -1);
    layer *l = L(g, e);
    l->vocab = p->vocab;
    l->out_features = p->hidden;
    l->out = (shape){p->hidden, p->seq, 1, 3};
    l->positions = f == NG_LLAMA ? 0 : p->seq;
    l->segments = f == NG_BERT ? 2 : 0;
    return f == NG_BERT ? add(g, -1, "embed_ln", LT_LAYERNORM, e, -1) : e;
}

/* After the last block x: the final norm and the head. */
static void back(gen *g, netgen_family f, const netgen_params *p, int x)
{
    if (f == NG_VIT) {
        int h = add(g, -1, "ln_f", LT_LAYERNORM, x, -1);
        h = add(g, -1, "select_token", LT_SELECT_TOKEN, h, -1);
        L(g, h)->out.h = 1;
        linear(g, -1, "head", h, p->classes, 1);
        return;
    }
    int h = x;
    if (f == NG_BERT) { /* the MLM head's transform: dense, GELU, LayerNorm */
        h = linear(g, -1, "mlm_fc", h, p->hidden, 1);
        h = add(g, -1, "mlm_gelu", LT_GELU, h, -1);
        h = add(g, -1, "mlm_ln", LT_LAYERNORM, h, -1);
    } else {
        h = add(g, -1, "ln_f", f == NG_LLAMA ? LT_RMSNORM : LT_LAYERNORM, h, -1);
    }
    int head = add(g, -1, "lm_head", LT_LM_HEAD, h, -1);
    layer *l = L(g, head);
    l->vocab = p->vocab;
    l->tied = f == NG_LLAMA ? -1 : net_find(g->net, "embed");
    l->bias = f == NG_BERT; /* BERT's decoder has a bias of its own */
    l->out.c = p->vocab;
}

/* Known published sizes and their names. */
typedef struct preset {
    const char *name;
    netgen_family f;
    netgen_params p;
} preset;

static const preset presets[] = {
    {"gpt2", NG_GPT, {12, 768, 12, 12, 3072, 1024, 50257, 0, 0, 0}},
    {"gpt2_medium", NG_GPT, {24, 1024, 16, 16, 4096, 1024, 50257, 0, 0, 0}},
    {"gpt2_large", NG_GPT, {36, 1280, 20, 20, 5120, 1024, 50257, 0, 0, 0}},
    {"gpt2_xl", NG_GPT, {48, 1600, 25, 25, 6400, 1024, 50257, 0, 0, 0}},
    {"llama2_7b", NG_LLAMA, {32, 4096, 32, 32, 11008, 4096, 32000, 0, 0, 0}},
    {"llama2_13b", NG_LLAMA, {40, 5120, 40, 40, 13824, 4096, 32000, 0, 0, 0}},
    {"llama2_70b", NG_LLAMA, {80, 8192, 64, 8, 28672, 4096, 32000, 0, 0, 0}},
    {"bert_base", NG_BERT, {12, 768, 12, 12, 3072, 512, 30522, 0, 0, 0}},
    {"bert_large", NG_BERT, {24, 1024, 16, 16, 4096, 512, 30522, 0, 0, 0}},
    {"vit_b16", NG_VIT, {12, 768, 12, 12, 3072, 0, 0, 16, 224, 1000}},
    {"vit_l16", NG_VIT, {24, 1024, 16, 16, 4096, 0, 0, 16, 224, 1000}},
    {"vit_h14", NG_VIT, {32, 1280, 16, 16, 5120, 0, 0, 14, 224, 1000}},
};

/* The preset's name for these sizes, else the family and the sizes
 * ("gpt_l48_h1600_a25_f6400_s1024_v50257"). */
static char *net_name(netgen_family f, const netgen_params *p)
{
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (presets[i].f == f && memcmp(&presets[i].p, p, sizeof *p) == 0) return lw_strdup(presets[i].name);
    lw_buf b = {0};
    lw_buf_printf(&b, "%s_l%ld_h%ld_a%ld", family_names[f], p->layers, p->hidden, p->heads);
    if (f == NG_LLAMA) lw_buf_printf(&b, "_k%ld", p->kv_heads);
    lw_buf_printf(&b, "_f%ld", p->ffn);
    if (f == NG_VIT) lw_buf_printf(&b, "_p%ld_i%ld_c%ld", p->patch, p->image, p->classes);
    else lw_buf_printf(&b, "_s%ld_v%ld", p->seq, p->vocab);
    return b.s;
}

network *netgen_build(netgen_family f, const netgen_params *p)
{
    gen g = {lw_calloc(1, sizeof(network)), 0};
    g.net->name = net_name(f, p);
    int x = front(&g, f, p);
    for (int blk = 0; blk < (int)p->layers; blk++)
        x = f == NG_BERT ? block_post_ln(&g, p, blk, x) : block_pre_ln(&g, f, p, blk, x);
    back(&g, f, p, x);
    /* what the loader derives (parameters, splits, contractions, consumers,
     * the embedding's link to its head) by the loader's own step, so the
     * network is the one its file loads as */
    lw_error err = {0};
    if (net_finish(g.net, g.net->name, &err) != 0) {
        /* netgen_resolve keeps the sizes within what the loader takes */
        fprintf(stderr, "layerwise: internal error: generated network refused: %s\n", err.msg);
        abort();
    }
    return g.net;
}

static const char *const layouts[NG__COUNT] = {
    "GPT-2's layout (Radford et al. 2019; as Hugging Face's GPT2LMHeadModel): token and learned position "
    "embeddings, pre-LN blocks with causal attention and a GELU MLP, dropout after the attention's projection and "
    "after fc2, a final LayerNorm, and lm_head tied to the token embedding",
    "Llama 2's layout (Touvron et al. 2023): token embedding, pre-norm blocks with RMSNorm, causal rotary "
    "attention with grouped key/value heads and a SwiGLU MLP (fc1 gives gate and up), no biases, a final "
    "RMSNorm, and an untied lm_head",
    "BERT's layout (Devlin et al. 2019; as Hugging Face's BertForMaskedLM): token, position and 2 segment "
    "embeddings then LayerNorm, post-LN blocks with a GELU MLP, the masked-LM head (dense, GELU, LayerNorm, "
    "decoder tied to the token embedding with a bias of its own); no pooler, no next-sentence head",
    "ViT's layout (Dosovitskiy et al. 2021; as torchvision's vit_b_16): patch embedding, class token and learned "
    "positions, pre-LN blocks with a GELU MLP, a final LayerNorm, the class token's vector, a linear head",
};

char *netgen_source(netgen_family f, const netgen_params *p)
{
    netgen_params d, none = {0};
    netgen_defaults(f, &d);
    /* the FFN and KV heads the other sizes imply, as if neither were given */
    netgen_params implied = *p;
    implied.ffn = implied.kv_heads = 0;
    derived_defaults(f, &implied, &none);
    lw_buf b = {0};
    lw_buf_printf(&b, "written by `layerwise net %s", family_names[f]);
    for (int k = 0; k < netgen_n_options; k++) {
        long ref = (k == O_FFN || k == O_KV) ? get(&implied, k) : get(&d, k);
        if (takes[f][k] && get(p, k) != ref) lw_buf_printf(&b, " %s %ld", netgen_options[k].name, get(p, k));
    }
    lw_buf_printf(&b, "`: %s", layouts[f]);
    return b.s;
}

/* ---- writing ---- */

/* A JSON value on one line (cJSON's compact form), appended to b. */
static void put_value(lw_buf *b, const cJSON *v)
{
    char *s = cJSON_PrintUnformatted(v);
    lw_buf_printf(b, "%s", s);
    cJSON_free(s);
}

/* net_to_json's document (the one writer of network files), laid out as the
 * shipped networks are: one layer a line, "source" after the name. */
char *netgen_json(const network *net, const char *source)
{
    char *doc = net_to_json(net);
    cJSON *root = cJSON_Parse(doc);
    free(doc);
    lw_buf b = {0};
    lw_buf_printf(&b, "{\n  \"format\": \"layerwise-net/1\",\n  \"name\": ");
    put_value(&b, cJSON_GetObjectItemCaseSensitive(root, "name"));
    if (source) {
        cJSON *src = cJSON_CreateString(source);
        lw_buf_printf(&b, ",\n  \"source\": ");
        put_value(&b, src);
        cJSON_Delete(src);
    }
    lw_buf_printf(&b, ",\n  \"input\": ");
    put_value(&b, cJSON_GetObjectItemCaseSensitive(root, "input"));
    lw_buf_printf(&b, ",\n  \"layers\": [\n");
    for (const cJSON *l = cJSON_GetObjectItemCaseSensitive(root, "layers")->child; l; l = l->next) {
        lw_buf_printf(&b, "    ");
        put_value(&b, l);
        lw_buf_printf(&b, "%s\n", l->next ? "," : "");
    }
    lw_buf_printf(&b, "  ]\n}");
    cJSON_Delete(root);
    return b.s;
}
