/*
 * onnx_internal: what the ONNX importer's three files share, private to them
 * (the public API is onnx_import.h).
 *
 *   onnx_read.c    the file: mapping it, the nesting guard, unpacking; the
 *                  value table, attributes, tensors and the node messages
 *   onnx_ops.c     one node at a time: shape inference, constant folding,
 *                  the layers a node becomes
 *   onnx_import.c  the walk over the graph, the graph's inputs, the
 *                  layerwise-net/1 writer and the public entry points
 *
 * Every value (an ONNX tensor name) is either an activation, held by a layer
 * of the network being built, or a constant: an initializer, a graph input
 * that carries a weight, or something folded (Shape of an activation, a
 * Gather of it, ...). Constants keep their shape, and their values where they
 * are small integers (shapes, axes, indices): that is all shape arithmetic
 * needs. The sample dimension (axis 0 of an activation) is the graph input's
 * batch: its literal value, or 1 where it is symbolic.
 *
 * Everything a ctx holds (values, their data, layers, names) is owned by it
 * and freed with it; the names of values point into the unpacked model,
 * which must outlive the ctx. Functions returning int give 0, or -1 with
 * c->err set (code 2).
 *
 * onnx.pb-c.h is generated into $(BUILD)/gen at build time (-I$(BUILD)/gen).
 */
#ifndef LW_ONNX_INTERNAL_H
#define LW_ONNX_INTERNAL_H

#include "net_json.h"
#include "onnx.pb-c.h"
#include "onnx_import.h"

#include <stdint.h>

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

/* ---- onnx_read.c ------------------------------------------------------- */

/* The message of a refusal: the file, and the node being imported if any
 * (its name, op type and the opset), then why. Always returns -1. */
int ox_fail(ctx *c, const char *fmt, ...) LW_PRINTF(2, 3);
/* Appended to refusals of what transformers need. */
extern const char ox_transformer_note[];

/* The value named name, or NULL. */
oval *ox_val_find(ctx *c, const char *name);
/* Stores *v under name (the table takes v->data); name must outlive c. */
oval *ox_val_put(ctx *c, const char *name, const oval *v);
/* Elements of a value, saturated past DIM_LIMIT. */
int64_t ox_elems(const oval *v);
/* "AxBxC" (or "a scalar") into buf[0..n). */
void ox_fmt_dims(const int64_t *d, int rank, char *buf, size_t n);

/* Attribute name of node n, or NULL. */
const Onnx__AttributeProto *ox_attr(const Onnx__NodeProto *n, const char *name);
int64_t ox_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def);
const int64_t *ox_attr_ints(const Onnx__NodeProto *n, const char *name, size_t *count);
/* A string attribute copied into buf (truncated to bn - 1), or NULL. */
const char *ox_attr_str(const Onnx__NodeProto *n, const char *name, char *buf, size_t bn);

/* A constant from a TensorProto into *v (v->data owned by the caller). */
int ox_tensor_value(ctx *c, const Onnx__TensorProto *t, oval *v);

/* The model in data[0..len), or NULL with err set (code 2); free it with
 * onnx__model_proto__free_unpacked. */
Onnx__ModelProto *ox_unpack_model(const unsigned char *data, size_t len, const char *label, lw_error *err);
/* The file at path mapped read-only into *data, *len (release with
 * ox_unmap_file); -1 with err set (code 2). */
int ox_map_file(const char *path, void **data, size_t *len, lw_error *err);
void ox_unmap_file(void *data, size_t len);

/* ---- onnx_ops.c -------------------------------------------------------- */

/* A layer name made from want, unique among the ctx's names (a copy the
 * caller owns). */
char *ox_unique_name(ctx *c, const char *want);
/* Imports c->node: a layer, a folded constant, or a refusal. */
int ox_import_node(ctx *c);

#endif
