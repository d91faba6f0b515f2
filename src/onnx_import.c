/*
 * onnx_import: ONNX -> layerwise-net/1. See onnx_import.h.
 *
 * The walk: the model unpacked (onnx_read.c), its initializers and graph
 * inputs into the value table, each node imported in order (onnx_ops.c),
 * then the layers written as a layerwise-net/1 document. See
 * onnx_internal.h for the values and who owns what.
 */
#define _POSIX_C_SOURCE 200809L
#include "onnx_internal.h"

#include "net_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        return ox_fail(c, "graph input \"%.100s\" has no shape; give it with --input-shape %.100s=1x3x224x224", vi->name,
                       vi->name);
    int rank = ng ? ng : (int)sh->n_dim;
    if (rank > MAX_RANK) return ox_fail(c, "graph input \"%.100s\" has %d dimensions (at most %d)", vi->name, rank, MAX_RANK);
    if (ng && sh && sh->n_dim != (size_t)ng)
        return ox_fail(c, "--input-shape gives %.100s %d dimensions, but the model declares %zu", vi->name, ng, sh->n_dim);
    v->rank = rank;
    for (int k = 0; k < rank; k++) {
        const Onnx__TensorShapeProto__Dimension *d = sh ? sh->dim[k] : NULL;
        int64_t x = ng ? g[k] : d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? d->dim_value : -1;
        if (x < 0 && is_data && k == 0) x = 1; /* a symbolic batch */
        if (x < 1 || x > NET_MAX_DIM) {
            char ex[128] = "";
            if (is_data && rank == 4) snprintf(ex, sizeof ex, "1x3x224x224");
            else snprintf(ex, sizeof ex, "DIMS");
            return ox_fail(c,
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

/* ---- the document ------------------------------------------------------ */

/* The layerwise-net/1 document of the imported layers: a network that
 * borrows their names and inputs, written by the network writer
 * (net_to_json), the input's shape from the graph input's dims. */
static char *write_json(ctx *c, const char *name, const int64_t *in_dims, int in_rank)
{
    network net = {.name = (char *)name, .n_layers = c->n_layers};
    net.layers = lw_calloc((size_t)c->n_layers, sizeof *net.layers);
    for (int i = 0; i < c->n_layers; i++) {
        olayer *o = &c->layers[i];
        layer *l = &net.layers[i];
        l->name = o->name;
        l->type = o->type;
        l->n_inputs = o->n_in;
        l->inputs = o->in;
        l->out_channels = o->out_ch;
        l->out_features = o->out_features;
        l->kh = o->kh, l->kw = o->kw, l->sh = o->sh, l->sw = o->sw, l->ph = o->ph, l->pw = o->pw;
        l->pool_max = o->pool_max;
        l->bias = o->bias;
    }
    net.layers[0].out.c = in_dims[1];
    net.layers[0].out.h = in_rank == 4 ? in_dims[2] : 1;
    net.layers[0].out.w = in_rank == 4 ? in_dims[3] : 1;
    char *s = net_to_json(&net);
    free(net.layers);
    return s;
}

/* ---- the walk ---------------------------------------------------------- */

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
    return ox_val_find(c, name) != NULL;
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
            if (v.rank == 3)
                return ox_fail(c, "graph input \"%.100s\" is a sequence (3 dimensions)%s", vi->name,
                               ox_transformer_note);
            if (v.rank != 4 && v.rank != 2)
                return ox_fail(c, "graph input \"%.100s\" has %d dimensions: layerwise takes (samples, channels, height, "
                                  "width) or (samples, features)",
                               vi->name, v.rank);
            c->batch = v.dims[0];
            memcpy(in_dims, v.dims, sizeof(int64_t) * MAX_RANK);
            *in_rank = v.rank;
            c->n_layers = c->cap_layers = 1;
            c->layers = lw_calloc(1, sizeof(olayer));
            c->layers[0].type = LT_INPUT;
            c->layers[0].lw_rank = 4;
            c->layers[0].name = ox_unique_name(c, vi->name);
            v.layer = 0;
        }
        ox_val_put(c, vi->name, &v);
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
        if (ox_tensor_value(c, t, &v) < 0) return NULL;
        ox_val_put(c, t->name, &v);
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
        if (ox_import_node(c) < 0) return NULL;
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
    Onnx__ModelProto *m = ox_unpack_model(data, len, label, err);
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
    void *map;
    size_t size;
    if (ox_map_file(path, &map, &size, err) < 0) return NULL;
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
    char *json = onnx_to_net_json(map, size, path, name, opt, counts, err);
    ox_unmap_file(map, size);
    if (!json) return NULL;
    network *net = net_from_json(json, strlen(json), path, err);
    if (net && json_out) *json_out = json;
    else free(json);
    return net;
}
