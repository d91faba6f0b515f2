/*
 * onnx_read: the ONNX file as the importer sees it: mapped, guarded against
 * nesting that would overflow protobuf-c's recursion, unpacked; and the
 * tables the walk fills from it (values by name, a node's attributes,
 * constants from tensors). See onnx_internal.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "onnx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- messages ---------------------------------------------------------- */

int ox_fail(ctx *c, const char *fmt, ...)
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

const char ox_transformer_note[] =
    "; the importer maps CNN operators only: a transformer (attention, layer normalisation, embeddings) is "
    "written by `layerwise net gpt|llama|bert|vit`";

/* ---- values ------------------------------------------------------------ */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

oval *ox_val_find(ctx *c, const char *name)
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
oval *ox_val_put(ctx *c, const char *name, const oval *v)
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
    oval *o = ox_val_find(c, name);
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
int64_t ox_elems(const oval *v)
{
    int64_t n = 1;
    for (int k = 0; k < v->rank; k++) {
        if (v->dims[k] == 0) return 0;
        n = n > (DIM_LIMIT + 1) / v->dims[k] ? DIM_LIMIT + 1 : n * v->dims[k];
    }
    return n;
}

void ox_fmt_dims(const int64_t *d, int rank, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    if (rank == 0) snprintf(buf, n, "a scalar");
    for (int i = 0; i < rank && k + 24 < n; i++) k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "x" : "", (long long)d[i]);
}

/* ---- attributes -------------------------------------------------------- */

const Onnx__AttributeProto *ox_attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i] && n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
            return n->attribute[i];
    return NULL;
}

int64_t ox_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = ox_attr(n, name);
    return a && a->has_i ? a->i : def;
}

/* The ints of an attribute (NULL if absent). */
const int64_t *ox_attr_ints(const Onnx__NodeProto *n, const char *name, size_t *count)
{
    const Onnx__AttributeProto *a = ox_attr(n, name);
    *count = a ? a->n_ints : 0;
    return a && a->n_ints ? a->ints : NULL;
}

const char *ox_attr_str(const Onnx__NodeProto *n, const char *name, char *buf, size_t bn)
{
    const Onnx__AttributeProto *a = ox_attr(n, name);
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
int ox_tensor_value(ctx *c, const Onnx__TensorProto *t, oval *v)
{
    memset(v, 0, sizeof *v);
    v->kind = V_CONST;
    if (t->n_dims > MAX_RANK) return ox_fail(c, "tensor \"%.100s\" has %zu dimensions (at most %d)", t->name ? t->name : "",
                                             t->n_dims, MAX_RANK);
    v->rank = (int)t->n_dims;
    for (int k = 0; k < v->rank; k++) {
        if (t->dims[k] < 0 || t->dims[k] > DIM_LIMIT)
            return ox_fail(c, "tensor \"%.100s\" has dimension %lld", t->name ? t->name : "", (long long)t->dims[k]);
        v->dims[k] = t->dims[k];
    }
    int64_t n = ox_elems(v);
    if (n < 0 || n > DIM_LIMIT) return ox_fail(c, "tensor \"%.100s\" is too large", t->name ? t->name : "");
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

/* ---- unpacking --------------------------------------------------------- */

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
Onnx__ModelProto *ox_unpack_model(const unsigned char *data, size_t len, const char *label, lw_error *err)
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


/* ---- the file ---------------------------------------------------------- */

/* Maps the file read-only rather than reading it: a model is up to 2 GiB and
 * only its graph (a small part beside the weights) is looked at. Refuses
 * what is not a regular file, an empty file and one over protobuf's limit. */
int ox_map_file(const char *path, void **data, size_t *len, lw_error *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return lw_fail(err, 2, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return lw_fail(err, 2, "%s: not a regular file", path);
    }
    if ((size_t)st.st_size > ONNX_MAX_FILE_BYTES) {
        close(fd);
        return lw_fail(err, 2, "%s: %lld bytes, more than protobuf's 2 GiB: export the weights as external data", path,
                       (long long)st.st_size);
    }
    if (st.st_size == 0) {
        close(fd);
        return lw_fail(err, 2, "%s: empty file, not an ONNX model", path);
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return lw_fail(err, 2, "%s: cannot read: %s", path, strerror(errno));
    *data = map;
    *len = (size_t)st.st_size;
    return 0;
}

void ox_unmap_file(void *data, size_t len)
{
    munmap(data, len);
}
