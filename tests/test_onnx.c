/*
 * Unit tests: ONNX import (src/onnx_import.c) and the network summary of
 * `layerwise info` (src/info.c), on the fixtures tests/make_onnx_fixtures.py
 * writes into tests/fixtures/onnx/. Every expected number is worked by hand
 * in the comment beside it.
 *
 * Run from the repository root (make check does): paths are relative to it.
 */
#include <criterion/criterion.h>

#include "data.h"
#include "info.h"
#include "net_json.h"
#include "onnx_import.h"
#include "test_helpers.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define OX "tests/fixtures/onnx/"

__attribute__((constructor)) static void use_this_trees_data(void)
{
    setenv("LAYERWISE_DATA", "data", 0);
}

static network *import_ok(const char *path, const onnx_options *opt, onnx_counts *cnt)
{
    lw_error err = {0};
    network *n = onnx_load_file(path, opt, cnt, NULL, &err);
    cr_assert_not_null(n, "%s should import, got: %s", path, err.msg);
    return n;
}

static const layer *L(const network *n, const char *name)
{
    int i = net_find(n, name);
    cr_assert(i >= 0, "no layer \"%s\"", name);
    return &n->layers[i];
}

static void assert_shape(const network *n, const char *name, layer_type t, long c, long h, long w, int rank)
{
    const layer *l = L(n, name);
    cr_assert_eq(l->type, t, "%s is a %s", name, layer_type_name(l->type));
    cr_assert(l->out.c == c && l->out.h == h && l->out.w == w && l->out.rank == rank,
              "%s: %ldx%ldx%ld rank %d, expected %ldx%ldx%ld rank %d", name, l->out.c, l->out.h, l->out.w, l->out.rank,
              c, h, w, rank);
}

static void import_fails(const char *path, const onnx_options *opt, const char *const *parts)
{
    lw_error err = {0};
    char *json = (char *)1;
    network *n = onnx_load_file(path, opt, NULL, &json, &err);
    cr_assert_null(n, "%s should be refused", path);
    cr_assert_null(json, "no document for a refused file");
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, path) != NULL, "the message names the file: %s", err.msg);
    for (; *parts; parts++) cr_assert(strstr(err.msg, *parts) != NULL, "\"%s\" not in: %s", *parts, err.msg);
}

/* conv1: 8 x (3*3*3 + 1) = 224; bn1: 2 x 8 = 16; conv2: 16 x 8*3*3 = 1152 (no bias);
 * fc: 10 x (16 + 1) = 170; total 1562.
 * Forward FLOPs (2 per multiply-add): conv1 2*8*32*32*27 = 442,368; conv2 (SAME_UPPER, pad 1 on 16x16)
 * 2*16*16*16*72 = 589,824; fc 2*10*16 = 320; total 1,032,512. */
static void check_small_cnn(const network *n)
{
    cr_assert_eq(n->n_layers, 11);
    assert_shape(n, "x", LT_INPUT, 3, 32, 32, 4);
    assert_shape(n, "conv1", LT_CONV2D, 8, 32, 32, 4);
    assert_shape(n, "bn1", LT_BATCHNORM, 8, 32, 32, 4);
    assert_shape(n, "relu1", LT_RELU, 8, 32, 32, 4);
    assert_shape(n, "pool1", LT_POOL2D, 8, 16, 16, 4);
    assert_shape(n, "conv2", LT_CONV2D, 16, 16, 16, 4);
    assert_shape(n, "act2", LT_RELU, 16, 16, 16, 4); /* Sigmoid: layerwise's element-wise layer */
    assert_shape(n, "gap", LT_POOL2D, 16, 1, 1, 4);
    assert_shape(n, "flat", LT_FLATTEN, 16, 1, 1, 2);
    assert_shape(n, "fc", LT_LINEAR, 10, 1, 1, 2);
    assert_shape(n, "prob", LT_SOFTMAX, 10, 1, 1, 2);
    cr_assert_eq(L(n, "conv1")->n_params, 224);
    cr_assert_eq(L(n, "bn1")->n_params, 16);
    cr_assert_eq(L(n, "conv2")->n_params, 1152);
    cr_assert_eq(L(n, "fc")->n_params, 170);
    cr_assert_eq(L(n, "conv2")->ph, 1);
    cr_assert_eq(L(n, "pool1")->sh, 2);
    net_info in;
    net_info_compute(n, &in);
    cr_assert_eq(in.parameters, 1562);
    cr_assert_eq(in.layers, 10);
    ASSERT_REL(in.forward_flops, 1032512.0, 1e-12);
    /* bn 4*8192 + relu 8192 + maxpool 2048*4 + sigmoid 4096 + global pool 16*256 + softmax 5*10 */
    ASSERT_REL(in.elementwise_flops, 57394.0, 1e-12);
    /* outputs: 3072 + 3*8192 + 2048 + 2*4096 + 16 + 16 + 10 + 10 = 37,940 elements of 4 bytes */
    ASSERT_REL(in.activation_bytes, 151760.0, 1e-12);
    cr_assert_eq(in.by_type[LT_CONV2D], 2);
    cr_assert_eq(in.by_type[LT_RELU], 2);
}

Test(onnx, small_cnn_shapes_parameters_flops)
{
    onnx_counts cnt;
    network *n = import_ok(OX "small_cnn.onnx", NULL, &cnt);
    check_small_cnn(n);
    cr_assert_eq(cnt.nodes, 10);
    cr_assert_eq(cnt.mapped, 10);
    cr_assert_eq(cnt.folded, 0);
    cr_assert_eq(cnt.opset, 13);
    cr_assert_eq(cnt.parameters, 1562, "as the file holds them: BatchNorm's running statistics not counted");
    cr_assert_str_eq(n->name, "small_cnn");
    net_free(n);
}

/* The same model exported without its parameters: weights are graph inputs with shapes only. */
Test(onnx, model_without_initializers)
{
    network *n = import_ok(OX "small_cnn_noinit.onnx", NULL, NULL);
    check_small_cnn(n);
    net_free(n);
}

/* conv 5x5 stride 2 on 28x28: (28-5)/2+1 = 12, so 4x12x12 = 576 features; view(x.size(0), -1) through
 * Shape/Gather/Unsqueeze/Concat/Reshape becomes a flatten; MatMul + Add(bias) one linear with a bias:
 * 7 x (576 + 1) = 4039; conv 4 x (25 + 1) = 104. Folded: Shape, Constant, Gather, Unsqueeze, Concat, the
 * bias Add, Identity = 7; mapped: conv, the Reshape's flatten, MatMul, Dropout, Tanh = 5. */
Test(onnx, dynamic_reshape_folded)
{
    onnx_counts cnt;
    network *n = import_ok(OX "dynamic_reshape.onnx", NULL, &cnt);
    assert_shape(n, "conv", LT_CONV2D, 4, 12, 12, 4);
    assert_shape(n, "view", LT_FLATTEN, 576, 1, 1, 2);
    assert_shape(n, "fc", LT_LINEAR, 7, 1, 1, 2);
    cr_assert(L(n, "fc")->bias, "the Add of a vector is the linear layer's bias");
    assert_shape(n, "drop", LT_DROPOUT, 7, 1, 1, 2);
    assert_shape(n, "tanh", LT_RELU, 7, 1, 1, 2);
    cr_assert_eq(net_params(n), 4143);
    cr_assert_eq(cnt.mapped, 5);
    cr_assert_eq(cnt.folded, 7);
    /* FLOPs: conv 2*576*25 = 28,800; linear 2*7*576 = 8,064 */
    net_info in;
    net_info_compute(n, &in);
    ASSERT_REL(in.forward_flops, 36864.0, 1e-12);
    net_free(n);
}

/* stem 1x1 2->4: 8; branch 3x3 4->4: 144; fc 8->3 without bias: 24; total 176. The residual Add of two
 * activations is an add layer; Mul/Div/Sub/Add with a constant fold; the decomposed GELU's Erf is a relu
 * and its Mul of two activations an add; Concat on channels 4 + 4 = 8; avg pool 8x8 -> 1x1; Squeeze then
 * Unsqueeze fold; Flatten makes 8 features. */
Test(onnx, branches_and_elementwise)
{
    onnx_counts cnt;
    network *n = import_ok(OX "branches.onnx", NULL, &cnt);
    assert_shape(n, "residual", LT_ADD, 4, 8, 8, 4);
    assert_shape(n, "gelu_erf", LT_RELU, 4, 8, 8, 4);
    assert_shape(n, "gelu_mul", LT_ADD, 4, 8, 8, 4);
    assert_shape(n, "mix", LT_CONCAT, 8, 8, 8, 4);
    assert_shape(n, "avg", LT_POOL2D, 8, 1, 1, 4);
    cr_assert(!L(n, "avg")->pool_max);
    assert_shape(n, "fc", LT_LINEAR, 3, 1, 1, 2);
    cr_assert_eq(net_params(n), 176);
    cr_assert_eq(cnt.mapped, 9);
    cr_assert_eq(cnt.folded, 6);
    /* the concat's second input is the stem itself: the constant ops left no layer between */
    const layer *mix = L(n, "mix");
    cr_assert_str_eq(n->layers[mix->inputs[0]].name, "gelu_mul");
    cr_assert_str_eq(n->layers[mix->inputs[1]].name, "stem");
    net_free(n);
}

/* Opset 9: Slice and Split take attributes. conv 3x3 on 8x8: 6x6x6 (6 x 27 = 162 parameters); max pool
 * 3x3 stride 1 pad 1 keeps 6x6; the shape [1, 6*6*6] computed by Shape/Slice/Split/Mul/Concat makes the
 * Reshape a flatten of 216; fc 5 x (216 + 1) = 1085; total 1247. */
Test(onnx, opset9_attributes)
{
    network *n = import_ok(OX "opset9.onnx", NULL, NULL);
    assert_shape(n, "conv", LT_CONV2D, 6, 6, 6, 4);
    assert_shape(n, "pool", LT_POOL2D, 6, 6, 6, 4);
    assert_shape(n, "reshape", LT_FLATTEN, 216, 1, 1, 2);
    assert_shape(n, "fc", LT_LINEAR, 5, 1, 1, 2);
    cr_assert_eq(net_params(n), 1247);
    net_free(n);
}

/* torchvision's resnet50: 25,557,032 parameters (BatchNorm's scale and shift counted, its running
 * statistics not); 4.09 G multiply-adds, so 2 x 4.1e9 FLOPs within 5%. 53 conv, 53 batchnorm, 49 relu,
 * 16 add, max pool, global pool, flatten, fc = 175 layers. */
Test(onnx, resnet50_counts)
{
    onnx_counts cnt;
    network *n = import_ok(OX "resnet50.onnx", NULL, &cnt);
    cr_assert_eq(cnt.parameters, 25557032L);
    net_info in;
    net_info_compute(n, &in);
    cr_assert_eq(in.parameters, 25557032L);
    cr_assert(fabs(in.forward_flops / 2 - 4.1e9) <= 0.05 * 4.1e9, "%.4g multiply-adds", in.forward_flops / 2);
    cr_assert_eq(in.layers, 175);
    cr_assert_eq(in.by_type[LT_CONV2D], 53);
    cr_assert_eq(in.by_type[LT_BATCHNORM], 53);
    cr_assert_eq(in.by_type[LT_ADD], 16);
    assert_shape(n, "layer4.2.relu3", LT_RELU, 2048, 7, 7, 4);
    assert_shape(n, "fc", LT_LINEAR, 1000, 1, 1, 2);
    net_free(n);
}

/* The same network as PyTorch 1.13 exports torchvision's resnet50 (training mode, without its weights):
 * torch's own names ("/layer4/layer4.2/relu_2/Relu") are the layer names, and the counts are torchvision's. */
Test(onnx, resnet50_exported_by_pytorch)
{
    onnx_counts cnt;
    network *n = import_ok(OX "resnet50_torch.onnx", NULL, &cnt);
    net_info in;
    net_info_compute(n, &in);
    cr_assert_eq(cnt.parameters, 25557032L);
    cr_assert_eq(in.parameters, 25557032L);
    cr_assert(fabs(in.forward_flops / 2 - 4.1e9) <= 0.05 * 4.1e9, "%.4g multiply-adds", in.forward_flops / 2);
    cr_assert_eq(in.layers, 175);
    assert_shape(n, "/fc/Gemm", LT_LINEAR, 1000, 1, 1, 2);
    assert_shape(n, "/conv1/Conv", LT_CONV2D, 64, 112, 112, 4);
    assert_shape(n, "/maxpool/MaxPool", LT_POOL2D, 64, 56, 56, 4);
    net_free(n);
}

/* fc1 and fc2 use one 8x8 weight: the file holds 64 trainable parameters; the network file, which states
 * no sharing, gives each linear layer its 64. */
Test(onnx, tied_weight_counted_once)
{
    onnx_counts cnt;
    network *n = import_ok(OX "tied.onnx", NULL, &cnt);
    cr_assert_eq(cnt.parameters, 64);
    cr_assert_eq(net_params(n), 128);
    assert_shape(n, "fc2", LT_LINEAR, 8, 1, 1, 2);
    net_free(n);
}

/* -n FILE.onnx: the one loader entry imports it. */
Test(onnx, plan_load_network_dispatches)
{
    lw_error err = {0};
    network *n = plan_load_network(OX "small_cnn.onnx", &err);
    cr_assert_not_null(n, "%s", err.msg);
    check_small_cnn(n);
    net_free(n);
}

Test(onnx, bad_files_named)
{
    import_fails(OX "bad_unsupported.onnx", NULL,
                 (const char *const[]){"node \"upsample\"", "Resize", "opset 13", "not supported", NULL});
    import_fails(OX "bad_grouped.onnx", NULL, (const char *const[]){"\"depthwise\"", "(Conv, opset 13)", "group=4", NULL});
    import_fails(OX "bad_dynamic.onnx", NULL,
                 (const char *const[]){"graph input \"x\"", "dimension 2 (height)", "\"H\"", "--input-shape x=", NULL});
    import_fails(OX "bad_layernorm.onnx", NULL, (const char *const[]){"transformer", NULL});
    import_fails(OX "bad_matmul_acts.onnx", NULL, (const char *const[]){"\"scores\"", "two activations", NULL});
    import_fails(OX "bad_truncated.onnx", NULL, (const char *const[]){"not an ONNX model", NULL});
    import_fails(OX "no_such_file.onnx", NULL, (const char *const[]){"cannot open", NULL});
    import_fails("tests/fixtures/nets/adds.json", NULL, (const char *const[]){NULL});
}

Test(onnx, input_shape_option)
{
    onnx_options o = {1, {"x=1x3x32x32"}};
    network *n = import_ok(OX "bad_dynamic.onnx", &o, NULL);
    check_small_cnn(n);
    net_free(n);
    onnx_options o2 = {1, {"x=1x3x64x48"}};
    n = import_ok(OX "bad_dynamic.onnx", &o2, NULL);
    assert_shape(n, "conv1", LT_CONV2D, 8, 64, 48, 4);
    assert_shape(n, "gap", LT_POOL2D, 16, 1, 1, 4);
    net_free(n);
    onnx_options wrong = {1, {"y=1x3x32x32"}};
    import_fails(OX "bad_dynamic.onnx", &wrong, (const char *const[]){"no input of that name", NULL});
    onnx_options rank = {1, {"x=3x32x32"}};
    import_fails(OX "bad_dynamic.onnx", &rank, (const char *const[]){"3 dimensions", NULL});
    lw_error err = {0};
    cr_assert_eq(onnx_check_input_shape("x=1x3x224x224", &err), 0);
    const char *bad[] = {"x", "=1x2", "x=", "x=1x", "x=0x3", "x=1xax3", "x=-1x3", NULL};
    for (int i = 0; bad[i]; i++) cr_assert_eq(onnx_check_input_shape(bad[i], &err), -1, "%s", bad[i]);
}

/* Every prefix of a valid file is refused or loads, never a crash (ASan build). */
Test(onnx, every_truncation)
{
    size_t len;
    lw_error err = {0};
    char *data = lw_read_file(OX "small_cnn.onnx", &len, &err);
    cr_assert_not_null(data);
    for (size_t k = 0; k < len; k += 1 + k / 64) {
        lw_error e = {0};
        char *j = onnx_to_net_json((const unsigned char *)data, k, "cut.onnx", "cut", NULL, NULL, &e);
        if (j) free(j);
        else cr_assert(e.code == 2 && e.msg[0], "prefix %zu", k);
    }
    free(data);
}

/* The imported document is a network file that loads back to the same network. */
Test(onnx, document_round_trip)
{
    lw_error err = {0};
    char *json = NULL;
    network *n = onnx_load_file(OX "small_cnn.onnx", NULL, NULL, &json, &err);
    cr_assert_not_null(n, "%s", err.msg);
    cr_assert_not_null(json);
    network *m = net_from_json(json, strlen(json), "again.json", &err);
    cr_assert_not_null(m, "%s", err.msg);
    cr_assert_eq(m->n_layers, n->n_layers);
    cr_assert_eq(net_params(m), net_params(n));
    free(json);
    net_free(m);
    net_free(n);
}

/* info's document: the contract's fields, from the engine's counts. VGG-16 (shipped, no ReLU): 138,357,544
 * parameters, as torchvision's vgg16. */
Test(info, json_document)
{
    lw_error err = {0};
    network *n = plan_load_network("vgg16", &err);
    cr_assert_not_null(n, "%s", err.msg);
    char *s = net_info_json(n);
    cJSON *r = cJSON_Parse(s);
    cr_assert_not_null(r);
    cr_assert_str_eq(cJSON_GetObjectItem(r, "format")->valuestring, "layerwise-info/1");
    cr_assert_str_eq(cJSON_GetObjectItem(r, "network")->valuestring, "vgg16");
    cr_assert_eq(cJSON_GetObjectItem(r, "parameters")->valuedouble, 138357544.0);
    cr_assert_eq(cJSON_GetObjectItem(r, "layers")->valueint, n->n_layers - 1);
    const char *keys[] = {"forward_flops_per_sample", "elementwise_flops_per_sample", "activation_bytes_per_sample",
                          "by_type", "input", "per_layer", NULL};
    for (int k = 0; keys[k]; k++) cr_assert_not_null(cJSON_GetObjectItem(r, keys[k]), "%s", keys[k]);
    /* VGG-16's multiply-adds: 15.47 G (torchvision: 15.47 GFLOPS, multiply-adds) */
    double f = cJSON_GetObjectItem(r, "forward_flops_per_sample")->valuedouble;
    cr_assert(fabs(f / 2 - 15.47e9) < 0.01 * 15.47e9, "%.4g", f / 2);
    cJSON *pl = cJSON_GetObjectItem(r, "per_layer");
    cr_assert_eq(cJSON_GetArraySize(pl), n->n_layers);
    cJSON *fc6 = NULL;
    cJSON *it;
    cJSON_ArrayForEach(it, pl) if (strcmp(cJSON_GetObjectItem(it, "name")->valuestring, "fc6") == 0) fc6 = it;
    cr_assert_not_null(fc6);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(fc6, "splits")), 2); /* n and c */
    cJSON_Delete(r);
    free(s);
    net_free(n);
}

/* Graphs nested in attributes 30,000 deep (ModelProto.graph, then GraphProto.node -> NodeProto.attribute ->
 * AttributeProto.g again and again): protobuf-c's unpack recursed once per level and overflowed the stack;
 * the file is refused before it is unpacked. */
static size_t put_varint(unsigned char *p, uint64_t v)
{
    size_t k = 0;
    do {
        p[k] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v) p[k] |= 0x80;
        k++;
    } while (v);
    return k;
}

Test(onnx, deep_nesting_refused)
{
    enum { LEVELS = 30000 };
    size_t cap = (size_t)LEVELS * 3 * 8 + 64;
    unsigned char *buf = malloc(cap), *tmp = malloc(cap);
    cr_assert(buf && tmp);
    size_t len = 0;
    const int fields[3] = {6, 5, 1}; /* innermost first: AttributeProto.g, NodeProto.attribute, GraphProto.node */
    for (int lv = 0; lv < LEVELS; lv++)
        for (int f = 0; f < 3; f++) {
            size_t h = put_varint(tmp, (uint64_t)fields[f] << 3 | 2);
            h += put_varint(tmp + h, len);
            memmove(buf + h, buf, len);
            memcpy(buf, tmp, h);
            len += h;
        }
    size_t h = put_varint(tmp, 7u << 3 | 2); /* ModelProto.graph */
    h += put_varint(tmp + h, len);
    memmove(buf + h, buf, len);
    memcpy(buf, tmp, h);
    len += h;
    lw_error err = {0};
    char *j = onnx_to_net_json(buf, len, "deep.onnx", "deep", NULL, NULL, &err);
    cr_assert_null(j);
    cr_assert(strstr(err.msg, "nested") != NULL, "%s", err.msg);
    free(buf);
    free(tmp);
}
