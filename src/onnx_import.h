/*
 * onnx_import: an ONNX model (the graph of torch.onnx.export, tf2onnx,
 * jax2onnx) as a layerwise network.
 *
 * The file is decoded by protobuf-c with the C code generated at build time
 * from the system's onnx.proto; weights are never read (only their shapes),
 * external data is never opened. Shapes are inferred here, node by node, and
 * constant subgraphs (Shape, Gather of a shape, Concat of constants, ...) are
 * folded. Each ONNX node becomes a layer (named after the node), folds into
 * its producer, or is refused with a message naming the file, the node, its
 * op type, the opset and why (code 2). The importer writes a layerwise-net/1
 * document, which net_from_json then loads: an imported network is exactly
 * what `layerwise import` writes.
 */
#ifndef LW_ONNX_IMPORT_H
#define LW_ONNX_IMPORT_H

#include "model.h"

#include <stddef.h>

/* Files above this are refused before they are read (protobuf's own limit:
 * larger models keep their weights as external data). */
#define ONNX_MAX_FILE_BYTES ((size_t)2 << 30)
#define ONNX_MAX_INPUT_SHAPES 8

/* --input-shape NAME=1x3x224x224: fixes a graph input's dimensions. */
typedef struct onnx_options {
    int n_shapes;
    const char *shapes[ONNX_MAX_INPUT_SHAPES];
} onnx_options;

/* What an import did, for its summary. */
typedef struct onnx_counts {
    int nodes;  /* ONNX nodes in the graph */
    int mapped; /* nodes that became a layer */
    int folded; /* nodes folded away: constants, shape arithmetic, views, element-wise work merged into
                   its producer */
    int opset;
    long parameters; /* trainable, as the file holds them: a weight that several layers use (tied) once */
} onnx_counts;

/* Checks one --input-shape value: 0, or -1 with err set (code 2). */
int onnx_check_input_shape(const char *spec, lw_error *err);

/* The network file (layerwise-net/1) of an ONNX model held in data[0..len):
 * a string the caller frees, or NULL with err set (code 2). label names the
 * file in messages; name is the network's name. counts may be NULL. */
char *onnx_to_net_json(const unsigned char *data, size_t len, const char *label, const char *name,
                       const onnx_options *opt, onnx_counts *counts, lw_error *err);

/* Reads the file at path (mapped, never copied whole) and imports it;
 * *json_out (if non-NULL) receives the document. The network is owned by the
 * caller (net_free). */
network *onnx_load_file(const char *path, const onnx_options *opt, onnx_counts *counts, char **json_out,
                        lw_error *err);

/* The options `-n FILE.onnx` uses wherever a network is loaded (the CLI sets
 * them once from --input-shape); the pointer is kept, not copied. */
void onnx_set_default_options(const onnx_options *opt);
const onnx_options *onnx_default_options(void);

/* A path names an ONNX file (".onnx", any case). */
int onnx_is_path(const char *path);

#endif
