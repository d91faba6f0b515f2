/*
 * netgen: transformer networks written from a handful of sizes
 * (`layerwise net gpt|llama|bert|vit`).
 *
 * A family (GPT, Llama, BERT, ViT) fixes the layout of a block and of the
 * ends; the sizes (layers, hidden, heads, ...) come from the command line or
 * the family's defaults (GPT-2 small, Llama-2-7B, BERT-base, ViT-B/16).
 * netgen_resolve fills the defaults and checks the sizes; netgen_build makes
 * the network (a `network` the caller frees with net_free); netgen_json
 * writes it as a layerwise-net/1 document. Layer names follow the shared
 * design: embed, block3.ln1, block3.attn, block3.proj, block3.drop1,
 * block3.add1, block3.ln2, block3.fc1, block3.gelu (swiglu), block3.fc2,
 * block3.drop2, block3.add2, ln_f, lm_head.
 */
#ifndef LW_NETGEN_H
#define LW_NETGEN_H

#include "model.h"

typedef enum { NG_GPT, NG_LLAMA, NG_BERT, NG_VIT, NG__COUNT } netgen_family;

/* The sizes; 0 in what the command line gives means "not given". */
typedef struct netgen_params {
    long layers, hidden, heads, kv_heads, ffn, seq, vocab, patch, image, classes;
} netgen_params;

/* One size option: its spelling, where it goes, the largest value the
 * command line takes. The table is what cli.c parses and checks. */
typedef struct netgen_option {
    const char *name;   /* "--layers" */
    size_t offset;      /* into netgen_params */
    long max;
} netgen_option;
extern const netgen_option netgen_options[];
extern const int netgen_n_options;

/* -1 if unknown. */
int netgen_family_from_name(const char *s);
const char *netgen_family_name(netgen_family f);

/* The sizes a family has when the command line gives none of them. */
void netgen_defaults(netgen_family f, netgen_params *p);

/* given (0: not given) completed with the family's defaults into *p and
 * checked: an option the family does not take, hidden not divisible by
 * heads, heads by kv-heads, the image by the patch, or sizes whose tensors
 * or weights pass the loader's limits. 0, or -1 with err set (code 2,
 * naming the options). */
int netgen_resolve(netgen_family f, const netgen_params *given, netgen_params *p, lw_error *err);

/* The network of resolved sizes (caller frees with net_free), finished by
 * the loader's own step (net_finish): every field, derived ones included,
 * equals those of the network its netgen_json document loads as. Sizes
 * netgen_resolve accepted always finish; others abort. */
network *netgen_build(netgen_family f, const netgen_params *p);

/* Its layerwise-net/1 document (caller frees); source, when not NULL, is
 * written as the network's "source". */
char *netgen_json(const network *net, const char *source);

/* What the network's "source" says: the command line that makes these
 * sizes (the options that differ from the family's defaults: "written by
 * `layerwise net gpt --layers 48 --hidden 1600 --heads 25`") and the
 * family's layout with its reference (caller frees). */
char *netgen_source(netgen_family f, const netgen_params *p);

#endif
