/*
 * Unit tests: the transformer generators (`layerwise net`, src/netgen.c):
 * trainable parameters against the published counts through the loader,
 * the layout of each family's blocks and ends, the sizes refused, and the
 * shipped files equal to what the generator writes.
 *
 * Run from the repository root (make check does): paths are relative to it.
 */
#include <criterion/criterion.h>

#include "blocks.h"
#include "cost.h"
#include "memsearch.h"
#include "net_json.h"
#include "netgen.h"
#include "plan.h"
#include "search.h"
#include "test_helpers.h"

#include <stdlib.h>
#include <string.h>

/* The network of a family with the given sizes (0: the default), through
 * its JSON and the loader, as `layerwise net` writes it and any command
 * reads it. */
static network *generate(netgen_family f, netgen_params given)
{
    netgen_params p;
    lw_error err = {0};
    cr_assert_eq(netgen_resolve(f, &given, &p, &err), 0, "%s", err.msg);
    network *g = netgen_build(f, &p);
    char *src = netgen_source(f, &p);
    char *doc = netgen_json(g, src);
    network *n = net_from_json(doc, strlen(doc), "generated", &err);
    cr_assert_not_null(n, "the generated %s network should load: %s", netgen_family_name(f), err.msg);
    /* the file keeps the generator's order and shapes (net_to_json reads
     * the attention's input width); built_network_equals_the_loaded_one
     * compares every other field */
    cr_assert_eq(n->n_layers, g->n_layers);
    for (int i = 0; i < n->n_layers; i++) {
        shape a = g->layers[i].out, b = n->layers[i].out;
        cr_assert_str_eq(g->layers[i].name, n->layers[i].name, "the loader keeps the generator's order");
        cr_assert(a.c == b.c && a.h == b.h && a.w == b.w && a.rank == b.rank,
                  "%s: the generator says %ldx%ldx%ld rank %d, the loader %ldx%ldx%ld rank %d", n->layers[i].name,
                  a.c, a.h, a.w, a.rank, b.c, b.h, b.w, b.rank);
    }
    free(doc);
    free(src);
    net_free(g);
    return n;
}

static const layer *find(const network *n, const char *name)
{
    int i = net_find(n, name);
    cr_assert_geq(i, 0, "%s has no layer %s", n->name, name);
    return &n->layers[i];
}

static const char *input_name(const network *n, const layer *l, int k)
{
    return n->layers[l->inputs[k]].name;
}

/* ------------------------------------------------------------ parameters */

/* Published trainable parameters (sum(p.numel() for p in
 * model.parameters()), a tied table counted once):
 * - GPT-2 124M and 1.5B: Hugging Face's GPT2LMHeadModel, "gpt2" and
 *   "gpt2-xl": 124,439,808 and 1,557,611,200 (Radford et al. 2019 give
 *   117M and 1542M, counted otherwise).
 * - Llama-2-7B: 6,738,415,616 (Hugging Face's LlamaForCausalLM, meta-llama/
 *   Llama-2-7b-hf; Touvron et al. 2023 say 7B).
 * - BERT-large: Hugging Face's BertForMaskedLM "bert-large-uncased",
 *   335,174,458: the encoder (BertModel without its pooler, 334,092,288)
 *   plus the MLM head's transform (dense 1024x1024 + bias, LayerNorm) and
 *   the decoder's own bias (30,522), its weight tied to the embedding.
 *   BertModel with the pooler is 335,141,888; Devlin et al. say 340M.
 * - ViT-B/16: torchvision's vit_b_16, 86,567,656 with 1000 classes. */
Test(netgen, parameters_equal_the_published_counts)
{
    static const struct {
        netgen_family f;
        netgen_params given;
        const char *name;
        long params;
    } ref[] = {
        {NG_GPT, {0}, "gpt2", 124439808L},
        {NG_GPT, {.layers = 48, .hidden = 1600, .heads = 25}, "gpt2_xl", 1557611200L},
        {NG_LLAMA, {0}, "llama2_7b", 6738415616L},
        {NG_BERT, {.layers = 24, .hidden = 1024, .heads = 16}, "bert_large", 335174458L},
        {NG_BERT, {0}, "bert_base", 109514298L},
        {NG_VIT, {0}, "vit_b16", 86567656L},
    };
    for (size_t k = 0; k < sizeof ref / sizeof ref[0]; k++) {
        network *n = generate(ref[k].f, ref[k].given);
        cr_assert_str_eq(n->name, ref[k].name);
        cr_assert_eq(net_params(n), ref[k].params, "%s: %ld parameters, published %ld", n->name, net_params(n),
                     ref[k].params);
        net_free(n);
    }
}

/* Llama's FFN width by the reference code's rule (2/3 of 4H, a multiple of
 * 256): 11008 for 4096, 13824 for Llama-2-13B's 5120; --ffn overrides it. */
Test(netgen, llama_ffn_default_follows_the_reference_rule)
{
    netgen_params p;
    netgen_params g = {.hidden = 5120, .heads = 40, .layers = 40};
    cr_assert_eq(netgen_resolve(NG_LLAMA, &g, &p, NULL), 0);
    cr_assert_eq(p.ffn, 13824);
    cr_assert_eq(p.kv_heads, 40);
    g.ffn = 1000;
    cr_assert_eq(netgen_resolve(NG_LLAMA, &g, &p, NULL), 0);
    cr_assert_eq(p.ffn, 1000);
    netgen_params d;
    netgen_defaults(NG_LLAMA, &d);
    cr_assert_eq(d.ffn, 11008);
    netgen_defaults(NG_GPT, &d);
    cr_assert_eq(d.ffn, 3072);
}

/* ------------------------------------------------------------------ layout */

Test(netgen, gpt_is_pre_ln_with_a_tied_head)
{
    network *n = generate(NG_GPT, (netgen_params){.layers = 2});
    cr_assert_eq(n->n_layers, 1 + 1 + 2 * 11 + 2, "input, embed, 11 a block, ln_f, lm_head: %d", n->n_layers);
    const layer *e = find(n, "embed");
    cr_assert_eq(e->type, LT_EMBEDDING);
    cr_assert_eq(e->vocab, 50257);
    cr_assert_eq(e->positions, 1024);
    cr_assert_eq(e->segments, 0);
    static const char *const order[] = {"ln1", "attn", "proj", "drop1", "add1", "ln2",
                                        "fc1", "gelu", "fc2",  "drop2", "add2"};
    static const layer_type types[] = {LT_LAYERNORM, LT_ATTENTION, LT_LINEAR, LT_DROPOUT, LT_ADD, LT_LAYERNORM,
                                       LT_LINEAR,    LT_GELU,      LT_LINEAR, LT_DROPOUT, LT_ADD};
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < 11; k++) {
            char name[32];
            snprintf(name, sizeof name, "block%d.%s", b, order[k]);
            const layer *l = &n->layers[2 + 11 * b + k];
            cr_assert_str_eq(l->name, name);
            cr_assert_eq(l->type, types[k], "%s", name);
        }
    const layer *a = find(n, "block1.attn");
    cr_assert(a->causal && !a->rotary && a->bias && a->heads == 12 && a->kv_heads == 12);
    cr_assert_str_eq(input_name(n, a, 0), "block1.ln1");
    const layer *add1 = find(n, "block1.add1");
    cr_assert_str_eq(input_name(n, add1, 0), "block0.add2");
    cr_assert_str_eq(input_name(n, add1, 1), "block1.drop1");
    cr_assert_eq(find(n, "block0.fc1")->out_features, 3072);
    const layer *h = find(n, "lm_head");
    cr_assert_str_eq(input_name(n, h, 0), "ln_f");
    cr_assert_eq(h->tied, net_find(n, "embed"));
    cr_assert_eq(h->n_params, 0, "a tied head's table is counted at the embedding");
    net_free(n);
}

Test(netgen, llama_has_rmsnorm_swiglu_rotary_gqa_and_no_biases)
{
    network *n = generate(NG_LLAMA, (netgen_params){.layers = 1, .hidden = 512, .heads = 8, .kv_heads = 2,
                                                    .seq = 128, .vocab = 1000});
    cr_assert_eq(find(n, "embed")->positions, 0);
    cr_assert_eq(find(n, "block0.ln1")->type, LT_RMSNORM);
    cr_assert_eq(find(n, "ln_f")->type, LT_RMSNORM);
    const layer *a = find(n, "block0.attn");
    cr_assert(a->causal && a->rotary && !a->bias && a->heads == 8 && a->kv_heads == 2 && a->head_dim == 64);
    /* fc1 gives gate and up: 2F outputs; swiglu halves them */
    cr_assert_eq(find(n, "block0.fc1")->out_features, 2 * 1536);
    cr_assert_eq(find(n, "block0.swiglu")->type, LT_SWIGLU);
    cr_assert_str_eq(input_name(n, find(n, "block0.fc2"), 0), "block0.swiglu");
    cr_assert_eq(net_find(n, "block0.drop1"), -1, "Llama has no dropout");
    for (int i = 1; i < n->n_layers; i++)
        if (n->layers[i].type == LT_LINEAR || n->layers[i].type == LT_ATTENTION || n->layers[i].type == LT_LM_HEAD)
            cr_assert(!n->layers[i].bias, "%s has a bias", n->layers[i].name);
    const layer *h = find(n, "lm_head");
    cr_assert_eq(h->tied, -1);
    cr_assert_eq(h->n_params, 512L * 1000);
    net_free(n);
}

Test(netgen, bert_is_post_ln_with_segments_and_the_mlm_head)
{
    network *n = generate(NG_BERT, (netgen_params){.layers = 2});
    const layer *e = find(n, "embed");
    cr_assert(e->positions == 512 && e->segments == 2 && e->vocab == 30522);
    cr_assert_str_eq(input_name(n, find(n, "embed_ln"), 0), "embed");
    cr_assert_str_eq(input_name(n, find(n, "block0.attn"), 0), "embed_ln");
    cr_assert(!find(n, "block0.attn")->causal);
    /* post-LN: the norm after each residual add, and the next add reads the norm */
    cr_assert_str_eq(input_name(n, find(n, "block0.ln1"), 0), "block0.add1");
    cr_assert_str_eq(input_name(n, find(n, "block0.add2"), 0), "block0.ln1");
    cr_assert_str_eq(input_name(n, find(n, "block0.ln2"), 0), "block0.add2");
    cr_assert_str_eq(input_name(n, find(n, "block1.attn"), 0), "block0.ln2");
    cr_assert_str_eq(input_name(n, find(n, "mlm_fc"), 0), "block1.ln2");
    const layer *h = find(n, "lm_head");
    cr_assert_str_eq(input_name(n, h, 0), "mlm_ln");
    cr_assert_eq(h->tied, net_find(n, "embed"));
    cr_assert(h->bias);
    cr_assert_eq(h->n_params, 30522, "the decoder's own bias only");
    net_free(n);
}

Test(netgen, vit_reads_patches_and_classifies_the_class_token)
{
    network *n = generate(NG_VIT, (netgen_params){.layers = 1, .classes = 10});
    cr_assert_eq(n->layers[0].out.rank, 4);
    cr_assert(n->layers[0].out.c == 3 && n->layers[0].out.h == 224 && n->layers[0].out.w == 224);
    cr_assert_eq(find(n, "patch_embed")->patch, 16);
    cr_assert_eq(find(n, "cls_token")->out.h, 197, "196 patches and the class token");
    cr_assert(!find(n, "block0.attn")->causal);
    cr_assert_str_eq(input_name(n, find(n, "select_token"), 0), "ln_f");
    const layer *h = find(n, "head");
    cr_assert_eq(h->type, LT_LINEAR);
    cr_assert_eq(h->out_features, 10);
    cr_assert_str_eq(n->layers[n->n_layers - 1].name, "head");
    net_free(n);
}

/* ------------------------------------------------------------- bad sizes */

static void refused(netgen_family f, netgen_params g, const char *a, const char *b)
{
    netgen_params p;
    lw_error err = {0};
    cr_assert_eq(netgen_resolve(f, &g, &p, &err), -1, "should be refused (%s)", a);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, a), "\"%s\" lacks %s", err.msg, a);
    if (b) cr_assert(strstr(err.msg, b), "\"%s\" lacks %s", err.msg, b);
}

Test(netgen, bad_sizes_are_refused_naming_the_options)
{
    refused(NG_GPT, (netgen_params){.hidden = 1000}, "--hidden 1000", "--heads 12 (the default)");
    refused(NG_GPT, (netgen_params){.hidden = 768, .heads = 7}, "--hidden 768", "--heads 7");
    refused(NG_LLAMA, (netgen_params){.heads = 32, .kv_heads = 5}, "--heads 32", "--kv-heads 5");
    refused(NG_LLAMA, (netgen_params){.kv_heads = 64}, "--heads 32 (the default)", "--kv-heads 64");
    refused(NG_VIT, (netgen_params){.image = 100}, "--image 100", "--patch 16 (the default)");
    refused(NG_GPT, (netgen_params){.kv_heads = 4}, "--kv-heads is not an option of net gpt", NULL);
    refused(NG_VIT, (netgen_params){.vocab = 4}, "--vocab is not an option of net vit", NULL);
    refused(NG_VIT, (netgen_params){.seq = 4}, "--seq is not an option of net vit", NULL);
    refused(NG_BERT, (netgen_params){.classes = 4}, "--classes is not an option of net bert", NULL);
    refused(NG_GPT, (netgen_params){.layers = 1025}, "--layers 1025", "1 to 1024");
    refused(NG_GPT, (netgen_params){.layers = -1}, "--layers -1", NULL);
    /* products past the loader's limits */
    refused(NG_GPT, (netgen_params){.hidden = 65536, .heads = 16, .vocab = 4194304}, "--vocab 4194304",
            "--hidden 65536");
    refused(NG_GPT, (netgen_params){.seq = 1048576, .ffn = 65536}, "--seq 1048576", NULL);
    refused(NG_GPT, (netgen_params){.seq = 1048576, .vocab = 1000000}, "--seq 1048576", NULL);
    refused(NG_VIT, (netgen_params){.image = 16384, .patch = 1}, "--image 16384", NULL);
    refused(NG_VIT, (netgen_params){.hidden = 65536, .heads = 64, .classes = 1048576}, "--classes 1048576",
            "--hidden 65536");
    refused(NG_VIT, (netgen_params){.hidden = 65536, .heads = 64, .image = 4096, .patch = 4096}, "--patch 4096",
            "the patch embedding");
    /* the largest sizes each option takes alone are fine */
    netgen_params p;
    cr_assert_eq(netgen_resolve(NG_GPT, &(netgen_params){.layers = 1024}, &p, NULL), 0);
    cr_assert_eq(netgen_resolve(NG_VIT, &(netgen_params){.patch = 224}, &p, NULL), 0);
}

/* Whatever sizes the generator accepts, the loader takes: every option at 1
 * and at its limit, alone and with the largest hidden size, in every
 * family; a refusal is a message naming an option, never a file the
 * loader would refuse. */
Test(netgen, every_accepted_size_loads, .timeout = 120)
{
    int accepted = 0, refusals = 0;
    for (int f = 0; f < NG__COUNT; f++)
        for (int k = 0; k < netgen_n_options; k++)
            for (int v = 0; v < 4; v++) {
                netgen_params g = {0}, p;
                long *x = (long *)((char *)&g + netgen_options[k].offset);
                *x = v % 2 ? netgen_options[k].max : 1;
                if (v >= 2 && k != 1) {
                    g.hidden = 65536;
                    g.heads = 64;
                }
                lw_error err = {0};
                if (netgen_resolve((netgen_family)f, &g, &p, &err) != 0) {
                    cr_assert(err.code == 2 && strstr(err.msg, "--"), "%s", err.msg);
                    refusals++;
                    continue;
                }
                network *n = generate((netgen_family)f, g);
                net_free(n);
                accepted++;
            }
    cr_assert(accepted > 40 && refusals > 40, "%d accepted, %d refused", accepted, refusals);
}

/* ------------------------------------------------------------ shipped files */

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s (run from the repository root)", path);
    lw_buf b = {0};
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) lw_buf_append(&b, buf, k);
    fclose(f);
    return b.s;
}

/* The shipped transformer files are the generator's output, byte for byte
 * (`make networks` writes them with the same sizes). */
Test(netgen, shipped_files_are_what_the_generator_writes)
{
    static const struct {
        const char *file;
        netgen_family f;
        netgen_params given;
    } ship[] = {
        {"data/networks/gpt2.json", NG_GPT, {0}},
        {"data/networks/gpt2_xl.json", NG_GPT, {.layers = 48, .hidden = 1600, .heads = 25}},
        {"data/networks/bert_large.json", NG_BERT, {.layers = 24, .hidden = 1024, .heads = 16}},
        {"data/networks/llama2_7b.json", NG_LLAMA, {0}},
        {"data/networks/vit_b16.json", NG_VIT, {0}},
    };
    for (size_t k = 0; k < sizeof ship / sizeof ship[0]; k++) {
        netgen_params p;
        cr_assert_eq(netgen_resolve(ship[k].f, &ship[k].given, &p, NULL), 0);
        network *g = netgen_build(ship[k].f, &p);
        char *src = netgen_source(ship[k].f, &p);
        char *doc = netgen_json(g, src);
        char *file = read_all(ship[k].file);
        size_t n = strlen(doc);
        cr_assert(strncmp(file, doc, n) == 0 && strcmp(file + n, "\n") == 0,
                  "%s differs from the generator's output: run make networks", ship[k].file);
        free(file);
        free(doc);
        free(src);
        net_free(g);
    }
}

/* ------------------------------------------------- built equals loaded */

/* Every field of two layers, the loader's derived ones included. */
static void same_layer(const network *a, const network *b, int i)
{
    const layer *x = &a->layers[i], *y = &b->layers[i];
    const char *n = y->name;
    cr_assert_str_eq(x->name, y->name, "layer %d", i);
    cr_assert_eq(x->type, y->type, "%s: type", n);
    cr_assert_eq(x->n_inputs, y->n_inputs, "%s: inputs", n);
    for (int k = 0; k < x->n_inputs; k++) cr_assert_eq(x->inputs[k], y->inputs[k], "%s: input %d", n, k);
    cr_assert(x->out_channels == y->out_channels && x->out_features == y->out_features, "%s: out_features %ld, %ld",
              n, x->out_features, y->out_features);
    cr_assert(x->kh == y->kh && x->kw == y->kw && x->sh == y->sh && x->sw == y->sw && x->ph == y->ph && x->pw == y->pw &&
              x->pool_max == y->pool_max, "%s: window", n);
    cr_assert_eq(x->bias, y->bias, "%s: bias", n);
    cr_assert(x->heads == y->heads && x->kv_heads == y->kv_heads && x->head_dim == y->head_dim, "%s: heads", n);
    cr_assert(x->causal == y->causal && x->rotary == y->rotary, "%s: causal, rotary", n);
    cr_assert(x->vocab == y->vocab && x->positions == y->positions && x->segments == y->segments, "%s: tables", n);
    cr_assert_eq(x->tied, y->tied, "%s: tied built %d, loaded %d", n, x->tied, y->tied);
    cr_assert(x->patch == y->patch && x->index == y->index, "%s: patch, index", n);
    cr_assert_eq(x->contract, y->contract, "%s: contract built %ld, loaded %ld", n, x->contract, y->contract);
    cr_assert(x->out.c == y->out.c && x->out.h == y->out.h && x->out.w == y->out.w && x->out.rank == y->out.rank,
              "%s: shape", n);
    cr_assert_eq(x->n_params, y->n_params, "%s: n_params built %ld, loaded %ld", n, x->n_params, y->n_params);
    cr_assert_eq(x->dims, y->dims, "%s: dims built %#x, loaded %#x", n, x->dims, y->dims);
    cr_assert_eq(x->n_outputs, y->n_outputs, "%s: n_outputs built %d, loaded %d", n, x->n_outputs, y->n_outputs);
}

/* The plain optimum's cost and peak memory of net (taken) on the 8 GPUs of
 * a DGX-1 at fp16, 8 per GPU. */
static void optimum8(network *net, double *cost, double *peak)
{
    lw_error err = {0};
    cluster *c = plan_load_cluster("dgx1-v100", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(cluster_set_precision(c, (precision)precision_from_name("fp16"), &err), 0, "%s", err.msg);
    plan *pl = plan_open(net, c, NULL, &(plan_options){.set = {8, 8, 0, 0}}, &err);
    cr_assert_not_null(pl, "%s", err.msg);
    const cost_model *m = plan_model(pl);
    cost_graph *g = cost_model_graph(m);
    mem_table *t = plan_mem_table(m);
    search_result *u = search_optimum(g);
    *cost = u->cost;
    *peak = mt_peak(t, u->config, NULL);
    search_result_free(u);
    mt_free(t);
    cg_free(g);
    plan_free(pl);
}

/* netgen_build's network, used directly (as tests and the CLI do), is the
 * one its file loads as: every field of every layer at each family's
 * shipped sizes and a GPT of 6 blocks; and the optimum a search finds on 8
 * GPUs (fp16, 8 per GPU) for each but GPT-2 XL, whose search takes half a
 * minute. Before netgen_build ran the loader's finishing step its layers
 * had no parameters, splits, contractions or consumers, and the 6-block
 * GPT's optimum cost 801 ms and 24 GB a GPU against the file's 108 ms and
 * 3.9 GB. */
Test(netgen, built_network_equals_the_loaded_one, .timeout = 300)
{
    static const struct {
        netgen_family f;
        netgen_params given;
        int search;
    } nets[] = {
        {NG_GPT, {0}, 1},
        {NG_GPT, {.layers = 6}, 1},
        {NG_GPT, {.layers = 48, .hidden = 1600, .heads = 25}, 0},
        {NG_BERT, {.layers = 24, .hidden = 1024, .heads = 16}, 1},
        {NG_LLAMA, {0}, 1},
        {NG_VIT, {0}, 1},
    };
    for (size_t k = 0; k < sizeof nets / sizeof nets[0]; k++) {
        netgen_params p;
        lw_error err = {0};
        cr_assert_eq(netgen_resolve(nets[k].f, &nets[k].given, &p, &err), 0, "%s", err.msg);
        network *g = netgen_build(nets[k].f, &p);
        char *doc = netgen_json(g, NULL);
        network *n = net_from_json(doc, strlen(doc), "generated", &err);
        cr_assert_not_null(n, "%s", err.msg);
        free(doc);
        cr_assert_str_eq(g->name, n->name);
        cr_assert_eq(g->n_layers, n->n_layers, "%s", n->name);
        for (int i = 0; i < n->n_layers; i++) same_layer(g, n, i);
        cr_assert_eq(net_params(g), net_params(n), "%s", n->name);
        if (!nets[k].search) {
            net_free(g);
            net_free(n);
            continue;
        }
        char name[128];
        snprintf(name, sizeof name, "%s", n->name);
        double gc, gp, nc, np;
        optimum8(g, &gc, &gp);
        optimum8(n, &nc, &np);
        cr_assert(gc == nc && gp == np, "%s: built %.6g ms, %.4g GB a GPU; loaded %.6g ms, %.4g GB", name, gc,
                  gp / 1e9, nc, np / 1e9);
    }
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* "source" says how to make the file again. */
Test(netgen, source_names_the_command_line)
{
    netgen_params p;
    netgen_params g = {.layers = 48, .hidden = 1600, .heads = 25};
    cr_assert_eq(netgen_resolve(NG_GPT, &g, &p, NULL), 0);
    char *s = netgen_source(NG_GPT, &p);
    cr_assert(starts(s, "written by `layerwise net gpt --layers 48 --hidden 1600 --heads 25`: GPT-2's layout"), "%s", s);
    free(s);
    netgen_defaults(NG_LLAMA, &p);
    p.kv_heads = 8;
    p.ffn = 11008;
    s = netgen_source(NG_LLAMA, &p);
    cr_assert(starts(s, "written by `layerwise net llama --kv-heads 8`: Llama 2's layout"), "%s", s);
    free(s);
}

/* ------------------------------------------------------------ blocks */

/* The repeated blocks the screens fold (issue 32 item 9, src/blocks.c):
 * each family's blocks are one run, its layers before and after in none;
 * a 600-layer GPT is one run of 55; the CNNs have none. */
Test(blocks, each_family_is_one_run_of_its_blocks)
{
    static const struct {
        netgen_family f;
        long layers;
        int len;
    } want[] = {{NG_GPT, 12, 11}, {NG_LLAMA, 4, 9}, {NG_BERT, 24, 11}, {NG_VIT, 12, 11}, {NG_GPT, 55, 11}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        network *n = generate(want[i].f, (netgen_params){.layers = want[i].layers});
        net_block_run r[4];
        cr_assert_eq(net_find_blocks(n, r, 4), 1, "%s: one run", n->name);
        cr_assert_eq(r[0].count, want[i].layers, "%s: %d blocks", n->name, r[0].count);
        cr_assert_eq(r[0].len, want[i].len, "%s: %d layers a block", n->name, r[0].len);
        cr_assert_str_eq(r[0].stem, "block");
        cr_assert_eq(r[0].first_index, 0);
        cr_assert_str_eq(n->layers[r[0].first].name, want[i].f == NG_BERT ? "block0.attn" : n->layers[r[0].first].name);
        int b = -1, part = -1;
        const int last = r[0].first + r[0].len * r[0].count - 1;
        cr_assert_eq(net_block_of(r, 1, last, &b, &part), 0);
        cr_assert_eq(b, r[0].count - 1);
        cr_assert_eq(part, r[0].len - 1);
        cr_assert_eq(net_block_of(r, 1, 0, NULL, NULL), -1, "the input is in no block");
        cr_assert_eq(net_block_of(r, 1, n->n_layers - 1, NULL, NULL), -1, "the head is in no block");
        if (want[i].layers == 55) cr_assert_geq(n->n_layers, 600);
        net_free(n);
    }
}

Test(blocks, a_changed_block_ends_the_run)
{
    network *n = generate(NG_GPT, (netgen_params){.layers = 6});
    net_block_run r[4];
    cr_assert_eq(net_find_blocks(n, r, 4), 1);
    /* block3's fc2 reads the gelu of block 2: no longer the same block */
    int i = net_find(n, "block3.fc2");
    n->layers[i].inputs[0] = net_find(n, "block2.gelu");
    cr_assert_eq(net_find_blocks(n, r, 4), 2, "blocks 0-2, then 4-5");
    cr_assert_eq(r[0].count, 3);
    cr_assert_eq(r[1].count, 2);
    cr_assert_eq(r[1].first_index, 4);
    cr_assert_eq(net_find_blocks(n, NULL, 0), 2, "counted without out");
    net_free(n);
}

Test(blocks, cnns_have_none)
{
    static const char *const nets[] = {"data/networks/resnet50.json", "data/networks/inception_v3.json",
                                       "data/networks/vgg16.json"};
    for (int i = 0; i < 3; i++) {
        size_t len = 0;
        char *t = slurp(nets[i], &len);
        cr_assert_not_null(t);
        lw_error err = {0};
        network *n = net_from_json(t, len, nets[i], &err);
        cr_assert_not_null(n, "%s", err.msg);
        cr_assert_eq(net_find_blocks(n, NULL, 0), 0, "%s", nets[i]);
        net_free(n);
        free(t);
    }
}

/* The screens read them through the engine's API (plan.h). */
Test(blocks, through_the_plan)
{
    lw_error err = {0};
    plan_settings s = {.gpus = 1, .batch_per_gpu = 1};
    plan *p = plan_open(plan_load_network("gpt2", &err), plan_load_cluster("dgx-a100", &err), NULL,
                        &(plan_options){.set = s}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    net_block_run r[2];
    cr_assert_eq(plan_blocks(p, r, 2), 1);
    cr_assert_eq(r[0].count, 12);
    cr_assert_str_eq(plan_net(p)->layers[r[0].first].name, "block0.ln1");
    plan_free(p);
}
