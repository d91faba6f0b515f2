/*
 * Unit tests: loading networks, clusters and profiles (shapes, parameter
 * counts, topological order, every kind of bad input), and the
 * configurations of a layer.
 *
 * Run from the repository root (make check does): paths are relative to it.
 */
#include <criterion/criterion.h>

#include "cluster.h"
#include "configs.h"
#include "net_json.h"
#include "plan.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "profile.h"
#include "test_helpers.h"

#include <cjson/cJSON.h>
#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FIX "tests/fixtures/"
#define BAD FIX "bad/"

/* Bare names (plan_load_network("vgg16")) resolve to this tree's data/,
 * not to an installed copy, unless LAYERWISE_DATA says otherwise. */
__attribute__((constructor)) static void use_this_trees_data(void)
{
    setenv("LAYERWISE_DATA", "data", 0);
}

/* ---------------------------------------------------------------- helpers */

static network *load_net(const char *path)
{
    lw_error err = {0};
    network *n = net_load_file(path, &err);
    cr_assert_not_null(n, "%s should load, got: %s", path, err.msg);
    return n;
}

static const layer *find_layer(const network *n, const char *name)
{
    int i = net_find(n, name);
    cr_assert(i >= 0, "network %s has no layer \"%s\"", n->name, name);
    return &n->layers[i];
}

static void assert_shape(const network *n, const char *name, long c, long h, long w)
{
    const layer *l = find_layer(n, name);
    cr_assert(l->out.c == c && l->out.h == h && l->out.w == w, "%s/%s: output %ldx%ldx%ld, expected %ldx%ldx%ld",
              n->name, name, l->out.c, l->out.h, l->out.w, c, h, w);
}

/* Every input of a layer comes before it; layer 0 is the input. */
static void assert_topological(const network *n)
{
    cr_assert(n->n_layers >= 1);
    cr_assert_eq(n->layers[0].type, LT_INPUT, "%s: layers[0] is not the input", n->name);
    cr_assert_eq(n->layers[0].n_inputs, 0);
    for (int i = 1; i < n->n_layers; i++) {
        const layer *l = &n->layers[i];
        cr_assert_neq(l->type, LT_INPUT, "%s: a second input at %d", n->name, i);
        cr_assert(l->n_inputs >= 1, "%s: layer %s has no inputs", n->name, l->name);
        for (int k = 0; k < l->n_inputs; k++)
            cr_assert(l->inputs[k] >= 0 && l->inputs[k] < i, "%s: layer %s (at %d) takes input %d, not earlier",
                      n->name, l->name, i, l->inputs[k]);
    }
    /* n_outputs counts consumers */
    for (int i = 0; i < n->n_layers; i++) {
        int c = 0;
        for (int j = 0; j < n->n_layers; j++)
            for (int k = 0; k < n->layers[j].n_inputs; k++) c += n->layers[j].inputs[k] == i;
        cr_assert_eq(n->layers[i].n_outputs, c, "%s: %s has %d consumers, n_outputs says %d", n->name,
                     n->layers[i].name, c, n->layers[i].n_outputs);
    }
}

/* Two loads of one network (in any layer order) describe the same graph. */
static void assert_same_network(const network *a, const network *b)
{
    cr_assert_eq(a->n_layers, b->n_layers);
    cr_assert_str_eq(a->layers[0].name, b->layers[0].name);
    for (int i = 0; i < a->n_layers; i++) {
        const layer *la = &a->layers[i];
        int j = net_find(b, la->name);
        cr_assert(j >= 0, "layer %s lost", la->name);
        const layer *lb = &b->layers[j];
        cr_assert_eq(la->type, lb->type, "%s: type differs", la->name);
        cr_assert(la->out.c == lb->out.c && la->out.h == lb->out.h && la->out.w == lb->out.w &&
                      la->out.rank == lb->out.rank,
                  "%s: shape differs", la->name);
        cr_assert_eq(la->n_params, lb->n_params, "%s: params differ", la->name);
        cr_assert_eq(la->dims, lb->dims);
        cr_assert_eq(la->n_inputs, lb->n_inputs);
        for (int k = 0; k < la->n_inputs; k++)
            cr_assert_str_eq(a->layers[la->inputs[k]].name, b->layers[lb->inputs[k]].name,
                             "%s: input %d differs", la->name, k);
        cr_assert_eq(la->kh, lb->kh);
        cr_assert_eq(la->kw, lb->kw);
        cr_assert_eq(la->sh, lb->sh);
        cr_assert_eq(la->sw, lb->sw);
        cr_assert_eq(la->ph, lb->ph);
        cr_assert_eq(la->pw, lb->pw);
    }
    cr_assert_eq(net_params(a), net_params(b));
}

static int count_type(const network *n, layer_type t)
{
    int c = 0;
    for (int i = 0; i < n->n_layers; i++) c += n->layers[i].type == t;
    return c;
}

static char *read_text(const char *path, size_t *len)
{
    lw_error err = {0};
    char *t = lw_read_file(path, len, &err);
    cr_assert_not_null(t, "%s: %s", path, err.msg);
    return t;
}

/* ---------------------------------------------------------- shipped nets */

Test(networks, every_shipped_network_loads_and_is_in_the_fixture)
{
    size_t len;
    char *text = read_text(FIX "expected_networks.json", &len);
    cJSON *exp = cJSON_Parse(text);
    cr_assert_not_null(exp);
    glob_t g;
    cr_assert_eq(glob("data/networks/*.json", 0, NULL, &g), 0, "no data/networks/*.json (run from the repo root)");
    cr_assert(g.gl_pathc >= 5, "only %zu shipped networks", g.gl_pathc);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        network *n = load_net(g.gl_pathv[i]);
        assert_topological(n);
        /* the file is named after the network */
        char want[256];
        snprintf(want, sizeof want, "data/networks/%s.json", n->name);
        cr_assert_str_eq(g.gl_pathv[i], want);
        int found = 0;
        for (cJSON *e = exp->child; e; e = e->next)
            found |= strcmp(cJSON_GetObjectItem(e, "name")->valuestring, n->name) == 0;
        cr_assert(found, "%s is not in tests/fixtures/expected_networks.json", n->name);
        /* the bare name resolves to the same network */
        lw_error err = {0};
        network *m = plan_load_network(n->name, &err);
        cr_assert_not_null(m, "%s", err.msg);
        assert_same_network(n, m);
        net_free(m);
        net_free(n);
    }
    globfree(&g);
    cJSON_Delete(exp);
    free(text);
}

Test(networks, counts_equal_the_independent_python_count)
{
    size_t len;
    char *text = read_text(FIX "expected_networks.json", &len);
    cJSON *exp = cJSON_Parse(text);
    cr_assert(cJSON_IsArray(exp));
    int checked = 0;
    for (cJSON *e = exp->child; e; e = e->next) {
        const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
        char path[256];
        snprintf(path, sizeof path, "data/networks/%s.json", name);
        network *n = load_net(path);
        cr_assert_eq(n->n_layers - 1, cJSON_GetObjectItem(e, "layers")->valueint, "%s: layer count", name);
        cr_assert_eq(net_params(n), (long)cJSON_GetObjectItem(e, "params")->valuedouble, "%s: %ld params, expected %.0f",
                     name, net_params(n), cJSON_GetObjectItem(e, "params")->valuedouble);
        const cJSON *o = cJSON_GetObjectItem(e, "output");
        const layer *last = &n->layers[n->n_layers - 1];
        cr_assert(last->out.c == cJSON_GetArrayItem(o, 0)->valueint && last->out.h == cJSON_GetArrayItem(o, 1)->valueint &&
                      last->out.w == cJSON_GetArrayItem(o, 2)->valueint,
                  "%s: output %ldx%ldx%ld", name, last->out.c, last->out.h, last->out.w);
        cr_assert_eq(count_type(n, LT_CONV2D), cJSON_GetObjectItem(e, "conv2d")->valueint, "%s: conv2d", name);
        cr_assert_eq(count_type(n, LT_POOL2D), cJSON_GetObjectItem(e, "pool2d")->valueint, "%s: pool2d", name);
        cr_assert_eq(count_type(n, LT_CONCAT), cJSON_GetObjectItem(e, "concat")->valueint, "%s: concat", name);
        cr_assert_eq(count_type(n, LT_ADD), cJSON_GetObjectItem(e, "add")->valueint, "%s: add", name);
        cr_assert_eq(count_type(n, LT_BATCHNORM), cJSON_GetObjectItem(e, "batchnorm")->valueint, "%s: batchnorm", name);
        cr_assert_eq(count_type(n, LT_RELU), cJSON_GetObjectItem(e, "relu")->valueint, "%s: relu", name);
        cr_assert_eq(count_type(n, LT_DROPOUT), cJSON_GetObjectItem(e, "dropout")->valueint, "%s: dropout", name);
        net_free(n);
        checked++;
    }
    cr_assert_eq(checked, 10);
    cJSON_Delete(exp);
    free(text);
}

static void assert_params_near(const char *name, double published)
{
    char path[256];
    snprintf(path, sizeof path, "data/networks/%s.json", name);
    network *n = load_net(path);
    double p = (double)net_params(n);
    cr_assert(fabs(p - published) <= 0.01 * published, "%s: %.0f parameters, published %.0f (more than 1%% off)", name,
              p, published);
    net_free(n);
}

Test(networks, parameter_counts_match_the_published_ones)
{
    assert_params_near("alexnet", 61.1e6);
    assert_params_near("vgg16", 138.4e6);
    assert_params_near("inception_v3", 23.8e6);
    assert_params_near("resnet50", 25.6e6);
}

/* The trainable parameters (weights, biases, batch norm's scale and shift;
 * not its running statistics) of torchvision's models, exactly: sum(p.numel()
 * for p in model.parameters()) for alexnet(), vgg16(), resnet50() and
 * inception_v3(aux_logits=False) (with the auxiliary classifier, which the
 * shipped file leaves out: 27,161,264). */
Test(networks, trainable_parameters_equal_torchvisions_exactly)
{
    static const struct {
        const char *name;
        long params;
    } ref[] = {{"alexnet", 61100840}, {"vgg16", 138357544}, {"inception_v3", 23834568}, {"resnet50", 25557032}};
    for (size_t k = 0; k < sizeof ref / sizeof ref[0]; k++) {
        char path[256];
        snprintf(path, sizeof path, "data/networks/%s.json", ref[k].name);
        network *n = load_net(path);
        cr_assert_eq(net_params(n), ref[k].params, "%s: %ld trainable parameters, torchvision has %ld", ref[k].name,
                     net_params(n), ref[k].params);
        net_free(n);
    }
}

/* The one consumer of layer `name`, which must be of type t and named
 * base + suffix (base NULL: name; the naming of tests/gen_cnns.py). */
static const layer *only_consumer(const network *n, const char *name, layer_type t, const char *base,
                                  const char *suffix)
{
    int i = net_find(n, name);
    cr_assert(i >= 0, "%s: no layer %s", n->name, name);
    cr_assert_eq(n->layers[i].n_outputs, 1, "%s: %s has %d consumers, expected its %s alone", n->name, name,
                 n->layers[i].n_outputs, layer_type_name(t));
    for (int j = i + 1; j < n->n_layers; j++)
        for (int k = 0; k < n->layers[j].n_inputs; k++)
            if (n->layers[j].inputs[k] == i) {
                const layer *c = &n->layers[j];
                char want[256];
                snprintf(want, sizeof want, "%s%s", base ? base : name, suffix);
                cr_assert_eq(c->type, t, "%s: %s feeds %s (%s), expected a %s", n->name, name, c->name,
                             layer_type_name(c->type), layer_type_name(t));
                cr_assert_str_eq(c->name, want, "%s: %s's %s", n->name, name, layer_type_name(t));
                return c;
            }
    cr_assert_fail("%s: %s has no consumer", n->name, name);
    return NULL;
}

/* As the reference models run in training: every convolution of AlexNet and
 * VGG-16 followed by a ReLU, their classifiers with ReLU and Dropout in
 * torchvision's order, every Inception-v3 convolution a BasicConv2d (no
 * bias, batch norm, ReLU), every ResNet-50 convolution followed by a batch
 * norm. */
Test(networks, every_convolution_has_its_normalisation_and_activation)
{
    network *v = load_net("data/networks/vgg16.json");
    for (int i = 0; i < v->n_layers; i++)
        if (v->layers[i].type == LT_CONV2D) only_consumer(v, v->layers[i].name, LT_RELU, NULL, "_relu");
    /* torchvision's classifier: fc6, ReLU, Dropout, fc7, ReLU, Dropout, fc8 */
    only_consumer(v, only_consumer(v, "fc6", LT_RELU, NULL, "_relu")->name, LT_DROPOUT, "fc6", "_dropout");
    cr_assert_str_eq(v->layers[find_layer(v, "fc7")->inputs[0]].name, "fc6_dropout");
    only_consumer(v, only_consumer(v, "fc7", LT_RELU, NULL, "_relu")->name, LT_DROPOUT, "fc7", "_dropout");
    cr_assert_str_eq(v->layers[find_layer(v, "fc8")->inputs[0]].name, "fc7_dropout");
    cr_assert_str_eq(v->layers[find_layer(v, "pool1")->inputs[0]].name, "conv1_2_relu");
    cr_assert_eq(count_type(v, LT_RELU), 15);
    net_free(v);

    network *a = load_net("data/networks/alexnet.json");
    for (int i = 0; i < a->n_layers; i++)
        if (a->layers[i].type == LT_CONV2D) only_consumer(a, a->layers[i].name, LT_RELU, NULL, "_relu");
    /* torchvision's classifier: Dropout, fc6, ReLU, Dropout, fc7, ReLU, fc8 */
    only_consumer(a, "flat", LT_DROPOUT, NULL, "_dropout");
    cr_assert_str_eq(a->layers[find_layer(a, "fc6")->inputs[0]].name, "flat_dropout");
    only_consumer(a, "fc6_relu", LT_DROPOUT, "fc6", "_dropout");
    only_consumer(a, "fc6", LT_RELU, NULL, "_relu");
    cr_assert_str_eq(a->layers[find_layer(a, "fc7")->inputs[0]].name, "fc6_dropout");
    only_consumer(a, "fc7", LT_RELU, NULL, "_relu");
    cr_assert_str_eq(a->layers[find_layer(a, "fc8")->inputs[0]].name, "fc7_relu");
    net_free(a);

    network *g = load_net("data/networks/inception_v3.json");
    int convs = 0;
    for (int i = 0; i < g->n_layers; i++)
        if (g->layers[i].type == LT_CONV2D) {
            const layer *c = &g->layers[i];
            cr_assert_eq(c->bias, 0, "inception_v3: %s has a bias (BasicConv2d has none)", c->name);
            cr_assert_eq(c->n_params, c->out_channels * g->layers[c->inputs[0]].out.c * c->kh * c->kw);
            const layer *bn = only_consumer(g, c->name, LT_BATCHNORM, NULL, "_bn");
            cr_assert_eq(bn->n_params, 2 * c->out_channels, "%s: scale and shift, no running statistics", bn->name);
            only_consumer(g, bn->name, LT_RELU, c->name, "_relu");
            convs++;
        }
    cr_assert_eq(convs, 94);
    only_consumer(g, "pool3", LT_DROPOUT, NULL, "_dropout");
    cr_assert_str_eq(g->layers[find_layer(g, "flat")->inputs[0]].name, "pool3_dropout");
    net_free(g);

    network *r = load_net("data/networks/resnet50.json");
    for (int i = 0; i < r->n_layers; i++)
        if (r->layers[i].type == LT_CONV2D) {
            int b = net_find(r, r->layers[i].name);
            cr_assert_eq(r->layers[b].n_outputs, 1);
            int found = 0;
            for (int j = b + 1; j < r->n_layers; j++)
                found |= r->layers[j].n_inputs == 1 && r->layers[j].inputs[0] == b && r->layers[j].type == LT_BATCHNORM;
            cr_assert(found, "resnet50: %s is not followed by a batch norm", r->layers[i].name);
        }
    net_free(r);
}

/* The shipped AlexNet, VGG-16 and Inception-v3 are what tests/gen_cnns.py
 * writes (edit the script, not the files). */
Test(networks, shipped_cnns_are_what_the_generator_writes)
{
    int rc = system("python3 tests/gen_cnns.py --check");
    cr_assert_eq(rc, 0, "python3 tests/gen_cnns.py --check exited with %d: run python3 tests/gen_cnns.py", rc);
}

Test(networks, inception_v3_has_94_convs_14_pools_11_concats)
{
    network *n = load_net("data/networks/inception_v3.json");
    cr_assert_eq(count_type(n, LT_CONV2D), 94);
    cr_assert_eq(count_type(n, LT_POOL2D), 14);
    cr_assert_eq(count_type(n, LT_CONCAT), 11);
    assert_shape(n, "data", 3, 299, 299);
    assert_shape(n, "pool2", 192, 35, 35);
    assert_shape(n, "mixed_5b/concat", 256, 35, 35);
    assert_shape(n, "mixed_5c/concat", 288, 35, 35);
    assert_shape(n, "mixed_5d/concat", 288, 35, 35);
    assert_shape(n, "mixed_6a/concat", 768, 17, 17);
    assert_shape(n, "mixed_7a/concat", 1280, 8, 8);
    assert_shape(n, "mixed_7c/concat", 2048, 8, 8);
    /* a 7c concat has six inputs (1x1, 1x3, 3x1, 1x3, 3x1, pool) */
    cr_assert_eq(find_layer(n, "mixed_7c/concat")->n_inputs, 6);
    net_free(n);
}

Test(networks, output_shapes_of_known_layers)
{
    network *v = load_net("data/networks/vgg16.json");
    assert_shape(v, "conv1_1", 64, 224, 224);
    assert_shape(v, "pool1", 64, 112, 112);
    assert_shape(v, "conv4_3", 512, 28, 28);
    assert_shape(v, "pool5", 512, 7, 7);
    assert_shape(v, "flat", 25088, 1, 1);
    assert_shape(v, "fc6", 4096, 1, 1);
    assert_shape(v, "prob", 1000, 1, 1);
    cr_assert_eq(find_layer(v, "fc6")->n_params, 25088L * 4096 + 4096);
    cr_assert_eq(find_layer(v, "conv1_1")->n_params, 64L * 3 * 9 + 64);
    cr_assert_eq(find_layer(v, "flat")->out.rank, 2);
    cr_assert_eq(find_layer(v, "pool5")->out.rank, 4);
    net_free(v);

    network *a = load_net("data/networks/alexnet.json");
    assert_shape(a, "conv1", 64, 55, 55);
    assert_shape(a, "pool1", 64, 27, 27);
    assert_shape(a, "conv2", 192, 27, 27);
    assert_shape(a, "pool2", 192, 13, 13);
    assert_shape(a, "conv5", 256, 13, 13);
    assert_shape(a, "pool3", 256, 6, 6);
    assert_shape(a, "fc6", 4096, 1, 1);
    cr_assert_eq(find_layer(a, "fc6")->n_params, 9216L * 4096 + 4096);
    net_free(a);

    network *r = load_net("data/networks/resnet50.json");
    assert_shape(r, "conv1", 64, 112, 112);
    assert_shape(r, "maxpool", 64, 56, 56);
    assert_shape(r, "layer1.0.add", 256, 56, 56);
    net_free(r);

    network *l = load_net("data/networks/lenet5.json");
    assert_shape(l, "conv1", 6, 28, 28);
    assert_shape(l, "pool2", 16, 5, 5);
    assert_shape(l, "flat", 400, 1, 1);
    net_free(l);
}

Test(networks, parallelizable_dimensions)
{
    network *v = load_net("data/networks/vgg16.json");
    unsigned all = DIMMASK(DIM_N) | DIMMASK(DIM_C) | DIMMASK(DIM_H) | DIMMASK(DIM_W);
    unsigned nc = DIMMASK(DIM_N) | DIMMASK(DIM_C);
    cr_assert_eq(find_layer(v, "data")->dims, all);
    cr_assert_eq(find_layer(v, "conv3_1")->dims, all);
    cr_assert_eq(find_layer(v, "pool5")->dims, all);
    cr_assert_eq(find_layer(v, "flat")->dims, nc);
    cr_assert_eq(find_layer(v, "fc7")->dims, nc);
    cr_assert_eq(find_layer(v, "prob")->dims, nc);
    net_free(v);
}

/* Deterministic shuffle of the "layers" array of a network document. */
static char *shuffled(const char *text, unsigned seed)
{
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root);
    cJSON *layers = cJSON_DetachItemFromObject(root, "layers");
    int n = cJSON_GetArraySize(layers);
    cJSON **items = malloc(sizeof(cJSON *) * (size_t)n);
    for (int i = n - 1; i >= 0; i--) items[i] = cJSON_DetachItemFromArray(layers, i);
    unsigned s = seed * 2654435761u + 1;
    for (int i = n - 1; i > 0; i--) {
        s = s * 1103515245u + 12345u;
        int j = (int)((s >> 8) % (unsigned)(i + 1));
        cJSON *t = items[i];
        items[i] = items[j];
        items[j] = t;
    }
    if (seed == 0) /* seed 0: exactly reversed */
        for (int i = 0; i < n / 2; i++) {
            cJSON *t = items[i];
            items[i] = items[n - 1 - i];
            items[n - 1 - i] = t;
        }
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(layers, items[i]);
    cJSON_AddItemToObject(root, "layers", layers);
    char *out = cJSON_Print(root);
    cJSON_Delete(root);
    free(items);
    return out;
}

Test(networks, shuffled_layers_load_into_a_topological_order)
{
    const char *names[] = {"lenet5", "inception_v3", "resnet50"};
    for (int k = 0; k < 3; k++) {
        char path[256];
        snprintf(path, sizeof path, "data/networks/%s.json", names[k]);
        network *ref = load_net(path);
        size_t len;
        char *text = read_text(path, &len);
        for (unsigned seed = 0; seed < 4; seed++) {
            char *s = shuffled(text, seed);
            lw_error err = {0};
            network *n = net_from_json(s, strlen(s), "shuffled.json", &err);
            cr_assert_not_null(n, "%s shuffled (seed %u): %s", names[k], seed, err.msg);
            assert_topological(n);
            assert_same_network(ref, n);
            net_free(n);
            free(s);
        }
        free(text);
        net_free(ref);
    }
}

Test(networks, file_order_is_kept_when_already_topological)
{
    network *n = load_net("data/networks/vgg16.json");
    const char *order[] = {"data", "conv1_1", "conv1_1_relu", "conv1_2", "conv1_2_relu", "pool1", "conv2_1"};
    for (int i = 0; i < 7; i++) cr_assert_str_eq(n->layers[i].name, order[i]);
    cr_assert_str_eq(n->layers[n->n_layers - 1].name, "prob");
    net_free(n);
}

Test(networks, net_to_json_round_trips)
{
    const char *names[] = {"alexnet", "inception_v3", "resnet50"};
    for (int k = 0; k < 3; k++) {
        char path[256];
        snprintf(path, sizeof path, "data/networks/%s.json", names[k]);
        network *a = load_net(path);
        char *s = net_to_json(a);
        lw_error err = {0};
        network *b = net_from_json(s, strlen(s), "roundtrip.json", &err);
        cr_assert_not_null(b, "%s: %s", names[k], err.msg);
        assert_same_network(a, b);
        free(s);
        net_free(a);
        net_free(b);
    }
}

Test(networks, defaults_for_stride_padding_and_pool_stride)
{
    lw_error err = {0};
    network *n = net_str("{\"format\": \"layerwise-net/1\", \"name\": \"d\","
                         " \"input\": {\"name\": \"x\", \"channels\": 2, \"height\": 9, \"width\": 12},"
                         " \"layers\": ["
                         "  {\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"x\"], \"out_channels\": 5, \"kernel\": [3, 5], \"bias\": false},"
                         "  {\"name\": \"p\", \"type\": \"pool2d\", \"inputs\": [\"c\"], \"kernel\": 2},"
                         "  {\"name\": \"q\", \"type\": \"pool2d\", \"mode\": \"avg\", \"inputs\": [\"p\"], \"kernel\": 3, \"stride\": 1, \"padding\": 1},"
                         "  {\"name\": \"bn\", \"type\": \"batchnorm\", \"inputs\": [\"q\"]},"
                         "  {\"name\": \"f\", \"type\": \"flatten\", \"inputs\": [\"bn\"]},"
                         "  {\"name\": \"fc\", \"type\": \"linear\", \"inputs\": [\"f\"], \"out_features\": 7}]}",
                         &err);
    cr_assert_not_null(n, "%s", err.msg);
    cr_assert_str_eq(n->layers[0].name, "x");
    assert_shape(n, "c", 5, 7, 8);
    cr_assert_eq(find_layer(n, "c")->n_params, 5L * 2 * 3 * 5); /* no bias */
    assert_shape(n, "p", 5, 3, 4);                              /* pool stride = kernel */
    cr_assert_eq(find_layer(n, "p")->sh, 2);
    cr_assert_eq(find_layer(n, "p")->pool_max, 1);
    assert_shape(n, "q", 5, 3, 4);
    cr_assert_eq(find_layer(n, "q")->pool_max, 0);
    cr_assert_eq(find_layer(n, "bn")->n_params, 10);
    assert_shape(n, "f", 60, 1, 1);
    cr_assert_eq(find_layer(n, "fc")->n_params, 7L * 60 + 7);
    cr_assert_eq(net_params(n), 150 + 10 + 427);
    net_free(n);
}

/* ------------------------------------------------------------- bad input */

/* A conv2d fed a sequence: the message says it is a sequence of tokens x
 * features, not that the input is "flat" (it is not). */
Test(networks, conv2d_on_a_sequence_says_sequence)
{
    lw_error err = {0};
    network *n = net_str("{\"format\": \"layerwise-net/1\", \"name\": \"s\","
                         " \"input\": {\"name\": \"tokens\", \"sequence\": 32},"
                         " \"layers\": ["
                         "  {\"name\": \"embed\", \"type\": \"embedding\", \"inputs\": [\"tokens\"], \"vocab\": 512,"
                         "   \"hidden\": 64, \"positions\": 32},"
                         "  {\"name\": \"ln_f\", \"type\": \"layernorm\", \"inputs\": [\"embed\"]},"
                         "  {\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"ln_f\"], \"out_channels\": 4, \"kernel\": 1}]}",
                         &err);
    cr_assert_null(n, "a conv2d on a sequence loaded");
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "\"ln_f\" gives a sequence (32 tokens x 64 features)") &&
                  strstr(err.msg, "C x H x W") && !strstr(err.msg, "flat"),
              "%s", err.msg);
}


/* Loads path, expects failure with code 2 and every needle in the message. */
static void expect_net_error(const char *path, const char *const *needles)
{
    lw_error err = {0};
    network *n = net_load_file(path, &err);
    cr_assert_null(n, "%s loaded but should have failed", path);
    cr_assert_eq(err.code, 2, "%s: code %d (%s)", path, err.code, err.msg);
    cr_assert(strstr(err.msg, path) != NULL, "message does not name the file: %s", err.msg);
    for (; *needles; needles++)
        cr_assert(strstr(err.msg, *needles) != NULL, "message \"%s\" lacks \"%s\"", err.msg, *needles);
}

#define EXPECT_NET_ERROR(file, ...)                                                                                \
    do {                                                                                                           \
        const char *const needles_[] = {__VA_ARGS__, NULL};                                                        \
        expect_net_error(BAD file, needles_);                                                                      \
    } while (0)

Test(bad_network, malformed_json_gives_line_and_column)
{
    /* a missing comma: the error is the '{' that starts line 7, column 5 */
    EXPECT_NET_ERROR("net_malformed.json", BAD "net_malformed.json:7:5:", "malformed JSON");
}

Test(bad_network, truncated_json)
{
    /* the file stops after line 6: the error is at its end */
    lw_error err = {0};
    network *n = net_load_file(BAD "net_truncated.json", &err);
    cr_assert_null(n);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "malformed JSON") != NULL, "%s", err.msg);
    cr_assert(strstr(err.msg, BAD "net_truncated.json:6:") != NULL || strstr(err.msg, BAD "net_truncated.json:7:") != NULL,
              "%s", err.msg);
}

Test(bad_network, text_after_the_document)
{
    /* a stray '}' on line 10 after the document closed on line 9 */
    EXPECT_NET_ERROR("net_trailing.json", BAD "net_trailing.json:10:1:", "malformed JSON");
}

Test(bad_network, malformed_json_line_and_column_from_a_string)
{
    const char *t = "{\n  \"format\": \"layerwise-net/1\",\n\t\"name\": [1, 2,, 3]\n}";
    lw_error err = {0};
    network *n = net_str(t, &err);
    cr_assert_null(n);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "inline.json:3:16:") != NULL, "%s", err.msg);
}

Test(bad_network, unknown_layer_type)
{
    EXPECT_NET_ERROR("net_unknown_type.json", BAD "net_unknown_type.json:7: layer \"conv2\"", "unknown layer type",
                     "conv3d");
}

Test(bad_network, unknown_input_name)
{
    EXPECT_NET_ERROR("net_unknown_input.json", BAD "net_unknown_input.json:7: layer \"pool1\"", "\"conv_1\"");
}

Test(bad_network, cycle_names_a_layer_on_the_cycle)
{
    lw_error err = {0};
    network *n = net_load_file(BAD "net_cycle.json", &err);
    cr_assert_null(n);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "cycle") != NULL, "%s", err.msg);
    /* "after" depends on the cycle a -> b -> a but is not on it */
    cr_assert(strstr(err.msg, BAD "net_cycle.json:8: layer \"a\"") != NULL ||
                  strstr(err.msg, BAD "net_cycle.json:9: layer \"b\"") != NULL,
              "message should name a or b with its line: %s", err.msg);
    cr_assert(strstr(err.msg, "\"after\"") == NULL, "\"after\" is not on the cycle: %s", err.msg);
}

Test(bad_network, a_layer_taking_itself_as_input)
{
    EXPECT_NET_ERROR("net_self_input.json", BAD "net_self_input.json:7: layer \"a\"", "cycle");
}

Test(bad_network, concat_of_mismatched_heights)
{
    EXPECT_NET_ERROR("net_concat_mismatch.json", BAD "net_concat_mismatch.json:8: layer \"cat\"", "8x16x16",
                     "8x8x8");
}

Test(bad_network, add_of_mismatched_shapes)
{
    EXPECT_NET_ERROR("net_add_mismatch.json", BAD "net_add_mismatch.json:8: layer \"sum\"", "8x16x16", "16x16x16");
}

Test(bad_network, kernel_larger_than_its_input)
{
    EXPECT_NET_ERROR("net_kernel_too_big.json", BAD "net_kernel_too_big.json:7: layer \"conv2\"", "5x5", "4x4");
}

Test(bad_network, zero_out_channels)
{
    EXPECT_NET_ERROR("net_zero_channels.json", BAD "net_zero_channels.json:7: layer \"conv2\"", "out_channels");
}

Test(bad_network, negative_out_features)
{
    EXPECT_NET_ERROR("net_negative_features.json", BAD "net_negative_features.json:7: layer \"fc\"", "out_features");
}

Test(bad_network, negative_input_height)
{
    lw_error err = {0};
    network *n = net_load_file(BAD "net_negative_height.json", &err);
    cr_assert_null(n);
    cr_assert_eq(err.code, 2);
    /* the line of the input's "height" (line 4), as every other loader error names its line */
    cr_assert(strstr(err.msg, BAD "net_negative_height.json:4: input \"height\"") != NULL, "%s", err.msg);
}

Test(bad_network, duplicate_names)
{
    /* the second "conv1" is on line 8 */
    EXPECT_NET_ERROR("net_duplicate.json", BAD "net_duplicate.json:8: layer \"conv1\"", "name");
}

Test(bad_network, duplicate_of_the_input_name)
{
    lw_error err = {0};
    network *n = net_str("{\"format\": \"layerwise-net/1\", \"name\": \"d\","
                         " \"input\": {\"name\": \"x\", \"channels\": 2, \"height\": 4, \"width\": 4},"
                         " \"layers\": [{\"name\": \"x\", \"type\": \"relu\", \"inputs\": [\"x\"]}]}",
                         &err);
    cr_assert_null(n);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "inline.json") && strstr(err.msg, "\"x\""), "%s", err.msg);
}

Test(bad_network, missing_format)
{
    EXPECT_NET_ERROR("net_no_format.json", BAD "net_no_format.json:", "\"format\"", "layerwise-net/1", "missing");
}

Test(bad_network, wrong_format)
{
    EXPECT_NET_ERROR("net_wrong_format.json", BAD "net_wrong_format.json:3:", "layerwise-net/1");
}

Test(bad_network, unknown_field)
{
    EXPECT_NET_ERROR("net_unknown_field.json", BAD "net_unknown_field.json:7: layer \"conv2\"", "unknown field",
                     "\"out_channel\"");
}

Test(bad_network, non_integer_kernel)
{
    EXPECT_NET_ERROR("net_float_kernel.json", BAD "net_float_kernel.json:7: layer \"pool1\"", "\"kernel\"", "2.5");
    EXPECT_NET_ERROR("net_string_kernel.json", BAD "net_string_kernel.json:6: layer \"conv1\"", "\"kernel\"");
}

Test(bad_network, missing_file)
{
    lw_error err = {0};
    network *n = net_load_file(BAD "no_such_file.json", &err);
    cr_assert_null(n);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, BAD "no_such_file.json"), "%s", err.msg);
}

/* A table of small broken documents: every one fails with code 2, names the
 * label, and says what is wrong. */
Test(bad_network, assorted_inline_errors)
{
    static const struct {
        const char *json, *needle;
    } cases[] = {
        {"[]", "object"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4}}",
         "layers"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": []}",
         "layers"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"layers\": [{\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"data\"]}]}",
         "input"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1.5, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"data\"]}]}",
         "channels"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"r\", \"type\": \"relu\"}]}",
         "\"r\""},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"data\", \"data\"]}]}",
         "\"r\""},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"s\", \"type\": \"add\", \"inputs\": [\"data\"]}]}",
         "\"s\""},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"kernel\": 3}]}",
         "out_channels"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 2}]}",
         "kernel"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 2, \"kernel\": 3, \"stride\": 0}]}",
         "stride"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"p\", \"type\": \"pool2d\", \"mode\": \"median\", \"inputs\": [\"data\"], \"kernel\": 2}]}",
         "mode"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"f\", \"type\": \"flatten\", \"inputs\": [\"data\"]},"
         " {\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"f\"], \"out_channels\": 2, \"kernel\": 1}]}",
         "\"c\""},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"data\"], \"kernel\": 3}]}",
         "unknown field"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 2, \"kernel\": [3, 3, 3]}]}",
         "kernel"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 2, \"kernel\": 3, \"padding\": 3}]}",
         "padding"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 1e12, \"kernel\": 3}]}",
         "out_channels"},
        {"{\"format\": \"layerwise-net/1\", \"name\": \"x\", \"input\": {\"channels\": 1, \"height\": 4, \"width\": 4},"
         " \"layers\": [{\"name\": \"c\", \"type\": \"linear\", \"inputs\": [\"data\"], \"out_features\": 4, \"bias\": 1}]}",
         "bias"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lw_error err = {0};
        network *n = net_str(cases[i].json, &err);
        cr_assert_null(n, "case %zu loaded: %s", i, cases[i].json);
        cr_assert_eq(err.code, 2, "case %zu: code %d", i, err.code);
        cr_assert(strncmp(err.msg, "inline.json", 11) == 0, "case %zu: message does not start with the file: %s", i,
                  err.msg);
        cr_assert(strstr(err.msg, cases[i].needle) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, err.msg,
                  cases[i].needle);
    }
}

/* ---------------------------------------------------------------- clusters */

static cluster *load_cluster(const char *path)
{
    lw_error err = {0};
    cluster *c = cluster_load_file(path, &err);
    cr_assert_not_null(c, "%s should load, got: %s", path, err.msg);
    return c;
}

Test(clusters, shipped_clusters_load)
{
    glob_t g;
    cr_assert_eq(glob("data/clusters/*.json", 0, NULL, &g), 0);
    cr_assert(g.gl_pathc >= 1);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        cluster *c = load_cluster(g.gl_pathv[i]);
        char want[256];
        snprintf(want, sizeof want, "data/clusters/%s.json", c->name);
        cr_assert_str_eq(g.gl_pathv[i], want);
        cr_assert(cluster_gpus(c) >= 1);
        cr_assert(c->gpu.peak_tflops > 0 && c->intra.bandwidth_gbs > 0 && c->inter.bandwidth_gbs > 0);
        cr_assert(c->nics_per_node >= 1);
        cluster_free(c);
    }
    globfree(&g);
    cluster *p = load_cluster("data/clusters/p100-4x4.json");
    cr_assert_eq(p->nodes, 4);
    cr_assert_eq(p->gpus_per_node, 4);
    cr_assert_eq(cluster_gpus(p), 16);
    cr_assert_eq(p->sync, SYNC_PARAMETER_SERVER);
    cluster_free(p);
}

/* A cluster found by name in a data directory is labelled with its real
 * path (the TUI's cluster screen and messages show it), not the detour it
 * was found by ("bin/../data/..."). */
Test(clusters, found_by_name_labelled_by_real_path)
{
    char *old = getenv("LAYERWISE_DATA") ? strdup(getenv("LAYERWISE_DATA")) : NULL;
    setenv("LAYERWISE_DATA", "tests/../data", 1);
    lw_error err = {0};
    cluster *c = plan_load_cluster("p100-4x4", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_not_null(c->path);
    cr_assert(c->path[0] == '/' && !strstr(c->path, "/../") && !strstr(c->path, "/./"), "%s", c->path);
    const char *tail = "/data/clusters/p100-4x4.json";
    size_t n = strlen(c->path);
    cr_assert(n > strlen(tail) && strcmp(c->path + n - strlen(tail), tail) == 0, "%s", c->path);
    cluster_free(c);
    if (old) setenv("LAYERWISE_DATA", old, 1);
    else unsetenv("LAYERWISE_DATA");
    free(old);
}

Test(clusters, devices_are_node_major_and_links_follow)
{
    lw_error err = {0};
    const char *t = "{\"format\": \"layerwise-cluster/1\", \"name\": \"two\", \"nodes\": 2, \"gpus_per_node\": 2,"
                    " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
                    " \"intra_node\": {\"bandwidth_gbs\": 20, \"latency_us\": 1},"
                    " \"inter_node\": {\"bandwidth_gbs\": 5, \"latency_us\": 10, \"nics_per_node\": 2},"
                    " \"links\": [{\"gpus\": [1, 0], \"bandwidth_gbs\": 40, \"latency_us\": 0.5}],"
                    " \"sync\": \"ring-allreduce\"}";
    cluster *c = cluster_from_json(t, strlen(t), "two.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(cluster_gpus(c), 4);
    cr_assert_eq(cluster_node_of(c, 0), 0);
    cr_assert_eq(cluster_node_of(c, 1), 0);
    cr_assert_eq(cluster_node_of(c, 2), 1);
    cr_assert_eq(cluster_node_of(c, 3), 1);
    cr_assert_eq(c->nics_per_node, 2);
    cr_assert_eq(c->sync, SYNC_RING_ALLREDUCE);
    cr_assert_float_eq(cluster_link(c, 0, 1).bandwidth_gbs, 40, 1e-12); /* override, either order */
    cr_assert_float_eq(cluster_link(c, 1, 0).bandwidth_gbs, 40, 1e-12);
    cr_assert_float_eq(cluster_link(c, 2, 3).bandwidth_gbs, 20, 1e-12);
    cr_assert_float_eq(cluster_link(c, 1, 2).bandwidth_gbs, 5, 1e-12);
    cr_assert_float_eq(cluster_link(c, 3, 0).latency_us, 10, 1e-12);
    cr_assert_float_eq(cluster_transfer_s(c, 2, 2, 1e9), 0, 0);
    cr_assert_float_eq(cluster_transfer_s(c, 2, 3, 2e9), 1e-6 + 0.1, 1e-12);
    cr_assert_float_eq(cluster_transfer_s(c, 0, 3, 1e9), 10e-6 + 0.2, 1e-12);
    cluster *d = cluster_clone(c);
    cr_assert_str_eq(d->name, "two");
    cr_assert_float_eq(cluster_link(d, 0, 1).bandwidth_gbs, 40, 1e-12);
    cluster_free(c);
    cluster_free(d);
    cr_assert_eq(sync_scheme_from_name("ps"), SYNC_PARAMETER_SERVER);
    cr_assert_eq(sync_scheme_from_name("ring-allreduce"), SYNC_RING_ALLREDUCE);
    cr_assert_eq(sync_scheme_from_name("gossip"), -1);
    cr_assert_str_eq(sync_scheme_name(SYNC_RING_ALLREDUCE), "ring-allreduce");
}

Test(clusters, single_node_cluster_needs_no_inter_node)
{
    cluster *c = load_cluster(FIX "clusters/uniform4.json");
    cr_assert_eq(cluster_gpus(c), 4);
    cr_assert_float_eq(c->intra.bandwidth_gbs, 10, 1e-12);
    cr_assert_float_eq(c->intra.latency_us, 0, 0);
    cr_assert_str_eq(c->gpu.name, "TestGPU");
    /* defaults */
    cr_assert_float_eq(c->gpu.memory_efficiency, 0.8, 1e-12);
    cr_assert_float_eq(c->gpu.efficiency[OPC_CONV], 0.6, 1e-12);
    cluster_free(c);
}

static void expect_cluster_error(const char *path, const char *const *needles)
{
    lw_error err = {0};
    cluster *c = cluster_load_file(path, &err);
    cr_assert_null(c, "%s loaded but should have failed", path);
    cr_assert_eq(err.code, 2, "%s: code %d (%s)", path, err.code, err.msg);
    cr_assert(strstr(err.msg, path) != NULL, "message does not name the file: %s", err.msg);
    for (; *needles; needles++)
        cr_assert(strstr(err.msg, *needles) != NULL, "message \"%s\" lacks \"%s\"", err.msg, *needles);
}

#define EXPECT_CLUSTER_ERROR(file, ...)                                                                            \
    do {                                                                                                           \
        const char *const needles_[] = {__VA_ARGS__, NULL};                                                        \
        expect_cluster_error(BAD file, needles_);                                                                  \
    } while (0)

Test(bad_cluster, malformed_json)
{
    EXPECT_CLUSTER_ERROR("cluster_malformed.json", BAD "cluster_malformed.json:7:38:", "malformed JSON");
}

Test(bad_cluster, missing_gpu)
{
    EXPECT_CLUSTER_ERROR("cluster_no_gpu.json", "\"gpu\"");
}

Test(bad_cluster, negative_bandwidth_names_the_right_line)
{
    /* the bad value is inter_node's, on line 8, not intra_node's line 7 */
    EXPECT_CLUSTER_ERROR("cluster_negative_bw.json", BAD "cluster_negative_bw.json:8:", "inter_node.bandwidth_gbs");
}

Test(bad_cluster, unknown_sync)
{
    EXPECT_CLUSTER_ERROR("cluster_unknown_sync.json", BAD "cluster_unknown_sync.json:8:", "\"sync\"",
                         "parameter-server");
}

Test(bad_cluster, zero_nodes)
{
    EXPECT_CLUSTER_ERROR("cluster_zero_nodes.json", BAD "cluster_zero_nodes.json:4:", "\"nodes\"");
}

Test(bad_cluster, unknown_field)
{
    EXPECT_CLUSTER_ERROR("cluster_unknown_field.json", BAD "cluster_unknown_field.json:9:", "unknown field",
                         "\"synch\"");
}

Test(bad_cluster, assorted_inline_errors)
{
    static const struct {
        const char *json, *needle;
    } cases[] = {
        {"{\"format\": \"layerwise-cluster/2\", \"name\": \"x\"}", "format"},
        {"{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 1.5, \"gpus_per_node\": 4}", "nodes"},
        {"{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 1, \"gpus_per_node\": 0}", "gpus_per_node"},
        {"{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 2, \"gpus_per_node\": 4,"
         " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
         " \"intra_node\": {\"bandwidth_gbs\": 10}}",
         "inter_node"},
        {"{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 1, \"gpus_per_node\": 4,"
         " \"gpu\": {\"name\": \"G\", \"peak_tflops\": -1, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
         " \"intra_node\": {\"bandwidth_gbs\": 10}}",
         "peak_tflops"},
        {"{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 1, \"gpus_per_node\": 4,"
         " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
         " \"intra_node\": {\"bandwidth_gbs\": 0}}",
         "bandwidth_gbs"},
        {"{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 1, \"gpus_per_node\": 4,"
         " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
         " \"intra_node\": {\"bandwidth_gbs\": 10},"
         " \"links\": [{\"gpus\": [0, 4], \"bandwidth_gbs\": 1}]}",
         "links[0]"},
        {"{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 1, \"gpus_per_node\": 4,"
         " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
         " \"intra_node\": {\"bandwidth_gbs\": 10},"
         " \"links\": [{\"gpus\": [2, 2], \"bandwidth_gbs\": 1}]}",
         "links[0]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lw_error err = {0};
        cluster *c = cluster_from_json(cases[i].json, strlen(cases[i].json), "inline.json", &err);
        cr_assert_null(c, "case %zu loaded", i);
        cr_assert_eq(err.code, 2, "case %zu: code %d", i, err.code);
        cr_assert(strncmp(err.msg, "inline.json", 11) == 0, "case %zu: %s", i, err.msg);
        cr_assert(strstr(err.msg, cases[i].needle) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, err.msg,
                  cases[i].needle);
    }
}

/* ---------------------------------------------------------------- profiles */

Test(profiles, a_profile_loads_and_looks_up_exact_shapes)
{
    const char *t = "{\"format\": \"layerwise-profile/1\", \"gpu\": \"TestGPU\", \"entries\": ["
                    " {\"type\": \"conv2d\", \"input\": [2, 4, 8, 8], \"output\": [2, 8, 8, 8], \"kernel\": 3,"
                    "  \"stride\": 1, \"padding\": [1, 1], \"forward_ms\": 1.25, \"backward_ms\": 2.5},"
                    " {\"type\": \"linear\", \"input\": [8, 64, 1, 1], \"output\": [8, 10, 1, 1],"
                    "  \"forward_ms\": 0.5, \"backward_ms\": 0.75}]}";
    lw_error err = {0};
    profile *p = profile_from_json(t, strlen(t), "p.json", &err);
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert_eq(p->n, 2);
    cr_assert_str_eq(p->gpu, "TestGPU");
    profile_entry k = {.type = LT_CONV2D, .in = {2, 4, 8, 8}, .out = {2, 8, 8, 8}, .k = {3, 3}, .s = {1, 1}, .p = {1, 1}};
    cr_assert_float_eq(profile_lookup(p, &k), 3.75, 1e-12);
    k.p[0] = 0;
    cr_assert_float_eq(profile_lookup(p, &k), -1, 0);
    profile_entry l = {.type = LT_LINEAR, .in = {8, 64, 1, 1}, .out = {8, 10, 1, 1}};
    cr_assert_float_eq(profile_lookup(p, &l), 1.25, 1e-12);
    l.out[0] = 4;
    cr_assert_float_eq(profile_lookup(p, &l), -1, 0);
    profile_free(p);
}

/* The index profile_lookup goes through finds what a scan of the entries
 * in file order finds: for every entry of a profile with many shapes, for
 * keys one field off them, and where entries of one shape repeat (the
 * first in the file that matches wins, an input count of 0 matching any).
 * Each shape comes three times, for 2 and 3 inputs and then for any count
 * (a shape repeated with one count, or after "any", is refused: issue 31). */
Test(profiles, indexed_lookups_find_the_first_matching_entry_in_file_order)
{
    enum { N = 3 * 997 };
    size_t cap = 256 + (size_t)N * 200;
    char *t = malloc(cap), *w = t;
    w += sprintf(w, "{\"format\": \"layerwise-profile/1\", \"gpu\": \"G\", \"entries\": [");
    for (int i = 0; i < N; i++) {
        /* few distinct shapes among many entries: repeats, input counts 2, 3 and 0 */
        int c = i % 997, r = i / 997, ni = r == 2 ? 0 : 2 + r;
        char inputs[32] = ""; /* absent: any input count (0) */
        if (ni) snprintf(inputs, sizeof inputs, "\"inputs\": %d, ", ni);
        w += sprintf(w, "%s{\"type\": \"add\", %s\"input\": [4, %d, 8, 8], \"output\": [4, %d, 8, 8], "
                        "\"forward_ms\": %d, \"backward_ms\": 0}",
                     i ? ", " : "", inputs, c + 1, c + 1, i + 1);
    }
    w += sprintf(w, "]}");
    lw_error err = {0};
    profile *p = profile_from_json(t, strlen(t), "many.json", &err);
    free(t);
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert_not_null(p->index);
    int *index = p->index;
    for (int i = 0; i < N; i++)
        for (int v = 0; v < 4; v++) {
            profile_entry k = p->e[i];
            k.n_inputs = v == 0 ? 2 : v == 1 ? 3 : k.n_inputs;
            if (v == 3) k.out[1] += 5000; /* no such shape */
            p->index = index;
            double indexed = profile_lookup(p, &k);
            p->index = NULL; /* the scan */
            double scanned = profile_lookup(p, &k);
            cr_assert_eq(indexed, scanned, "entry %d, key %d: %g indexed, %g scanned", i, v, indexed, scanned);
            if (v == 3) cr_assert_eq(indexed, -1);
        }
    p->index = index;
    /* shape 0: entry 0 for 2 inputs, entry 997 for 3, entry 1994 (no
     * "inputs") for any other count */
    profile_entry k = p->e[1994];
    k.n_inputs = 2;
    cr_assert_eq(profile_lookup(p, &k), 1);
    k.n_inputs = 3;
    cr_assert_eq(profile_lookup(p, &k), 998);
    k.n_inputs = 5;
    cr_assert_eq(profile_lookup(p, &k), 1995);
    profile_free(p);
}

Test(bad_profile, malformed_json)
{
    lw_error err = {0};
    profile *p = profile_load_file(BAD "profile_malformed.json", &err);
    cr_assert_null(p);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, BAD "profile_malformed.json:6:") != NULL, "%s", err.msg);
    cr_assert(strstr(err.msg, "malformed JSON") != NULL, "%s", err.msg);
}

Test(bad_profile, bad_entry)
{
    lw_error err = {0};
    profile *p = profile_load_file(BAD "profile_bad_entry.json", &err);
    cr_assert_null(p);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, BAD "profile_bad_entry.json") != NULL, "%s", err.msg);
    cr_assert(strstr(err.msg, "entries[1]") != NULL, "%s", err.msg);
}

Test(bad_profile, assorted_inline_errors)
{
    static const char *const cases[] = {
        "{\"format\": \"layerwise-profile/2\", \"gpu\": \"G\", \"entries\": []}",
        "{\"format\": \"layerwise-profile/1\", \"entries\": []}",
        "{\"format\": \"layerwise-profile/1\", \"gpu\": \"G\"}",
        "{\"format\": \"layerwise-profile/1\", \"gpu\": \"G\", \"entries\": [{\"type\": \"conv3d\"}]}",
        "{\"format\": \"layerwise-profile/1\", \"gpu\": \"G\", \"entries\": [{\"type\": \"conv2d\","
        " \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 1, \"backward_ms\": 1}]}", /* no kernel */
        "{\"format\": \"layerwise-profile/1\", \"gpu\": \"G\", \"entries\": [{\"type\": \"relu\","
        " \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": -1, \"backward_ms\": 1}]}",
        "{\"format\": \"layerwise-profile/1\", \"gpu\": \"G\", \"entries\": [7]}",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lw_error err = {0};
        profile *p = profile_from_json(cases[i], strlen(cases[i]), "inline.json", &err);
        cr_assert_null(p, "case %zu loaded", i);
        cr_assert_eq(err.code, 2, "case %zu", i);
        cr_assert(strncmp(err.msg, "inline.json", 11) == 0, "case %zu: %s", i, err.msg);
    }
}

/* ----------------------------------------------------------------- configs */

static const char *const conv_net =
    "{\"format\": \"layerwise-net/1\", \"name\": \"cfg\","
    " \"input\": {\"name\": \"data\", \"channels\": 2, \"height\": 64, \"width\": 64},"
    " \"layers\": ["
    "  {\"name\": \"conv\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 64, \"kernel\": 3, \"padding\": 1},"
    "  {\"name\": \"narrow\", \"type\": \"conv2d\", \"inputs\": [\"conv\"], \"out_channels\": 2, \"kernel\": 3, \"padding\": 1},"
    "  {\"name\": \"thin\", \"type\": \"pool2d\", \"inputs\": [\"narrow\"], \"kernel\": [32, 64]},"
    "  {\"name\": \"flat\", \"type\": \"flatten\", \"inputs\": [\"conv\"]},"
    "  {\"name\": \"fc\", \"type\": \"linear\", \"inputs\": [\"flat\"], \"out_features\": 100},"
    "  {\"name\": \"fc3\", \"type\": \"linear\", \"inputs\": [\"fc\"], \"out_features\": 3},"
    "  {\"name\": \"prob\", \"type\": \"softmax\", \"inputs\": [\"fc\"]}]}";

static network *cfg_net(void)
{
    lw_error err = {0};
    network *n = net_str(conv_net, &err);
    cr_assert_not_null(n, "%s", err.msg);
    return n;
}

static int n_configs(const network *n, const char *name, long batch, int gpus, config **out)
{
    config *list;
    int k = configs_enumerate(find_layer(n, name), batch, gpus, &list);
    if (out)
        *out = list;
    else
        free(list);
    return k;
}

Test(configs, counts_for_conv_and_linear_layers)
{
    network *n = cfg_net();
    cr_assert_eq(n_configs(n, "conv", 64, 1, NULL), 1);
    cr_assert_eq(n_configs(n, "conv", 64, 2, NULL), 5);
    cr_assert_eq(n_configs(n, "conv", 64, 4, NULL), 15);
    cr_assert_eq(n_configs(n, "conv", 64, 8, NULL), 35);
    cr_assert_eq(n_configs(n, "conv", 64, 16, NULL), 70);
    cr_assert_eq(n_configs(n, "data", 64, 4, NULL), 14); /* the input is (n, c, h, w) too; c = 2 rules out c4 */
    cr_assert_eq(n_configs(n, "fc", 64, 1, NULL), 1);
    cr_assert_eq(n_configs(n, "fc", 64, 2, NULL), 3);
    cr_assert_eq(n_configs(n, "fc", 64, 4, NULL), 6);
    cr_assert_eq(n_configs(n, "fc", 64, 16, NULL), 15);
    cr_assert_eq(n_configs(n, "flat", 64, 16, NULL), 15);
    cr_assert_eq(n_configs(n, "prob", 64, 4, NULL), 6);
    /* a non-power-of-two GPU count: products up to 6 -> powers of two up to 4 */
    cr_assert_eq(n_configs(n, "conv", 64, 6, NULL), 15);
    net_free(n);
}

static int has_config(const config *list, int n, int dn, int dc, int dh, int dw)
{
    config c = {{dn, dc, dh, dw, 1, 1}};
    return config_find(list, n, &c) >= 0;
}

Test(configs, degrees_are_bounded_by_the_dimension)
{
    network *n = cfg_net();
    config *l;
    /* 2 output channels: c2 but never c4 */
    int k = n_configs(n, "narrow", 64, 16, &l);
    cr_assert(has_config(l, k, 1, 2, 1, 1));
    cr_assert(has_config(l, k, 4, 2, 2, 1));
    for (int i = 0; i < k; i++) cr_assert(l[i].deg[DIM_C] <= 2, "narrow got c%d", l[i].deg[DIM_C]);
    free(l);
    /* 3 output features: c2 only */
    k = n_configs(n, "fc3", 64, 16, &l);
    cr_assert_eq(k, 5 + 4); /* n in {1..16} with c1, plus n in {1..8} with c2 */
    for (int i = 0; i < k; i++) cr_assert(l[i].deg[DIM_C] <= 2);
    free(l);
    /* pool output 2x2x1: h up to 2, w 1 */
    k = n_configs(n, "thin", 64, 16, &l);
    for (int i = 0; i < k; i++) {
        cr_assert(l[i].deg[DIM_H] <= 2 && l[i].deg[DIM_W] == 1 && l[i].deg[DIM_C] <= 2);
        cr_assert(config_tasks(&l[i]) <= 16);
    }
    free(l);
    /* a batch of 2 bounds n */
    k = n_configs(n, "conv", 2, 16, &l);
    for (int i = 0; i < k; i++) cr_assert(l[i].deg[DIM_N] <= 2);
    cr_assert(has_config(l, k, 2, 1, 1, 1));
    free(l);
    /* linear layers never split h or w */
    k = n_configs(n, "fc", 64, 16, &l);
    for (int i = 0; i < k; i++) cr_assert(l[i].deg[DIM_H] == 1 && l[i].deg[DIM_W] == 1);
    free(l);
    net_free(n);
}

Test(configs, all_valid_distinct_and_single_gpu_first)
{
    network *n = cfg_net();
    long batches[] = {1, 3, 64, 512};
    int gpus[] = {1, 2, 3, 4, 8, 16, 32};
    for (int li = 0; li < n->n_layers; li++)
        for (size_t b = 0; b < 4; b++)
            for (size_t g = 0; g < 7; g++) {
                const layer *ly = &n->layers[li];
                config *l;
                int k = configs_enumerate(ly, batches[b], gpus[g], &l);
                cr_assert(k >= 1);
                for (int d = 0; d < NDIMS; d++) cr_assert_eq(l[0].deg[d], 1, "first config is not the single-GPU one");
                for (int i = 0; i < k; i++) {
                    cr_assert(config_tasks(&l[i]) <= gpus[g]);
                    for (int d = 0; d < NDIMS; d++) {
                        int v = l[i].deg[d];
                        cr_assert(v >= 1 && (v & (v - 1)) == 0, "degree %d is not a power of two", v);
                        cr_assert(v <= layer_dim_size(ly, d, batches[b]) || v == 1);
                        if (!(ly->dims & DIMMASK(d))) cr_assert_eq(v, 1);
                    }
                    for (int j = 0; j < i; j++) cr_assert(!config_equal(&l[i], &l[j]), "config listed twice");
                }
                free(l);
            }
    net_free(n);
}

Test(configs, parse_and_format_round_trip)
{
    network *n = cfg_net();
    config *l;
    int k = n_configs(n, "conv", 64, 16, &l);
    for (int i = 0; i < k; i++) {
        char buf[64];
        config_format(&l[i], buf, sizeof buf);
        config c;
        cr_assert_eq(config_parse(buf, &c), 0, "cannot parse \"%s\"", buf);
        cr_assert(config_equal(&c, &l[i]), "\"%s\" parsed differently", buf);
        cr_assert_eq(config_find(l, k, &c), i);
    }
    free(l);
    net_free(n);

    char buf[64];
    config one = {{1, 1, 1, 1, 1, 1}}, c;
    config_format(&one, buf, sizeof buf);
    cr_assert_str_eq(buf, "1");
    config x = {{4, 1, 2, 2, 1, 1}};
    config_format(&x, buf, sizeof buf);
    cr_assert_str_eq(buf, "n4 h2 w2");
    cr_assert_eq(config_parse("1", &c), 0);
    cr_assert(config_equal(&c, &one));
    cr_assert_eq(config_parse("n4c2", &c), 0);
    cr_assert(c.deg[0] == 4 && c.deg[1] == 2 && c.deg[2] == 1 && c.deg[3] == 1);
    cr_assert_eq(config_parse("n=4, c=2", &c), 0);
    cr_assert(c.deg[0] == 4 && c.deg[1] == 2);
    cr_assert_eq(config_parse(" h2 w8", &c), 0);
    cr_assert(c.deg[0] == 1 && c.deg[2] == 2 && c.deg[3] == 8);
    /* the degrees of sequence layers: s is h, r the contraction, x replicas */
    cr_assert_eq(config_parse("n2 s4 r2", &c), 0);
    cr_assert(c.deg[DIM_N] == 2 && c.deg[DIM_H] == 4 && c.deg[DIM_R] == 2 && c.deg[DIM_X] == 1);
    cr_assert_eq(config_tasks(&c), 16);
    cr_assert_eq(config_pieces(&c), 16);
    config_format(&c, buf, sizeof buf);
    cr_assert_str_eq(buf, "n2 h4 r2");
    cr_assert_eq(config_parse("n2 x4", &c), 0);
    cr_assert_eq(config_tasks(&c), 8);
    cr_assert_eq(config_pieces(&c), 2);
    config_format(&c, buf, sizeof buf);
    cr_assert_str_eq(buf, "n2 x4");
    /* r and x innermost: task 5 of n2 x4 is sample piece 1, replica 1 */
    int co[NDIMS], rr, xx;
    config_task_coords(&c, 5, co);
    config_task_rx(&c, 5, &rr, &xx);
    cr_assert(co[DIM_N] == 1 && co[DIM_C] == 0 && rr == 0 && xx == 1);
    cr_assert_eq(config_task_index(&c, co), 4);
    const char *bad[] = {"", "n3", "q2", "r2 x2", "x3", "n2 n2", "n0", "n", "c-2", "n4 q", "h1.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_neq(config_parse(bad[i], &c), 0, "\"%s\" parsed", bad[i]);
}

Test(configs, task_coordinates_are_row_major_over_nchw)
{
    config c = {{2, 4, 2, 1, 1, 1}};
    cr_assert_eq(config_tasks(&c), 16);
    int co[NDIMS];
    for (int t = 0; t < 16; t++) {
        config_task_coords(&c, t, co);
        cr_assert_eq(config_task_index(&c, co), t);
        cr_assert_eq(t, ((co[0] * 4 + co[1]) * 2 + co[2]) * 1 + co[3]);
    }
    config_task_coords(&c, 5, co);
    cr_assert(co[0] == 0 && co[1] == 2 && co[2] == 1 && co[3] == 0);
}

Test(configs, pieces_cover_the_dimension_exactly)
{
    long sizes[] = {1, 2, 3, 7, 13, 55, 224, 1000};
    for (size_t s = 0; s < 8; s++)
        for (int D = 1; D <= 64; D *= 2) {
            if (D > sizes[s]) continue;
            long prev = 0, lo_size = sizes[s], hi_size = 0;
            for (int i = 0; i < D; i++) {
                cr_assert_eq(piece_lo(sizes[s], D, i), prev);
                long sz = piece_hi(sizes[s], D, i) - piece_lo(sizes[s], D, i);
                cr_assert(sz >= 1);
                if (sz < lo_size) lo_size = sz;
                if (sz > hi_size) hi_size = sz;
                prev = piece_hi(sizes[s], D, i);
            }
            cr_assert_eq(prev, sizes[s]);
            cr_assert(hi_size - lo_size <= 1, "pieces of %ld over %d are not equal splits", sizes[s], D);
        }
}

/* ------------------------------------------------ issue 15: lax loaders, names */

#define NET_HEAD "{\"format\": \"layerwise-net/1\", "
#define NET_INPUT "\"input\": {\"name\": \"data\", \"channels\": 1, \"height\": 4, \"width\": 4}"
#define ONE_RELU "\"layers\": [{\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"data\"]}]"

/* Every case is refused with code 2, the file, and the needle. */
Test(bad_network, lax_inputs_of_issue_15_are_refused)
{
    static const struct {
        const char *json, *needle;
    } cases[] = {
        /* duplicate keys: the first no longer silently wins */
        {NET_HEAD "\"name\": \"a\", \"name\": \"b\", " NET_INPUT ", " ONE_RELU "}", "inline.json:1:"},
        {NET_HEAD "\"name\": \"a\", " NET_INPUT ", \"layers\": [{\"name\": \"r\", \"type\": \"relu\", \"type\": \"softmax\", "
                  "\"inputs\": [\"data\"]}]}",
         "twice"},
        /* unknown top-level and input keys */
        {NET_HEAD "\"name\": \"a\", " NET_INPUT ", " ONE_RELU ", \"Layers\": []}", "\"Layers\""},
        {NET_HEAD "\"name\": \"a\", \"input\": {\"name\": \"data\", \"channels\": 1, \"height\": 4, \"width\": 4, "
                  "\"depth\": 2}, " ONE_RELU "}",
         "\"depth\""},
        /* a non-string input name is not silently "data" */
        {NET_HEAD "\"name\": \"a\", \"input\": {\"name\": 7, \"channels\": 1, \"height\": 4, \"width\": 4}, " ONE_RELU "}",
         "input \"name\""},
        /* control characters and invalid UTF-8 in names */
        {NET_HEAD "\"name\": \"a\\u001b[2J\", " NET_INPUT ", " ONE_RELU "}", "control character"},
        {NET_HEAD "\"name\": \"a\", \"input\": {\"name\": \"d\\nx\", \"channels\": 1, \"height\": 4, \"width\": 4}, "
                  "\"layers\": [{\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"d\\nx\"]}]}",
         "control character"},
        {NET_HEAD "\"name\": \"a\", " NET_INPUT ", \"layers\": [{\"name\": \"r\\u0085\", \"type\": \"relu\", "
                  "\"inputs\": [\"data\"]}]}",
         "control character"},
        {NET_HEAD "\"name\": \"a\xff\", " NET_INPUT ", " ONE_RELU "}", "UTF-8"},
        {NET_HEAD "\"name\": \"a\", " NET_INPUT ", \"layers\": [{\"name\": \"r\xc3\", \"type\": \"relu\", "
                  "\"inputs\": [\"data\"]}]}",
         "UTF-8"},
        /* a number reported as written, not rounded by %g */
        {NET_HEAD "\"name\": \"a\", " NET_INPUT ", \"layers\": [{\"name\": \"c\", \"type\": \"conv2d\", "
                  "\"inputs\": [\"data\"], \"kernel\": 1, \"out_channels\": 4.0000000001}]}",
         "4.0000000001"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lw_error err = {0};
        network *n = net_str(cases[i].json, &err);
        cr_assert_null(n, "case %zu loaded: %s", i, cases[i].json);
        cr_assert_eq(err.code, 2, "case %zu: code %d", i, err.code);
        cr_assert(strncmp(err.msg, "inline.json", 11) == 0, "case %zu: %s", i, err.msg);
        cr_assert(strstr(err.msg, cases[i].needle) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, err.msg,
                  cases[i].needle);
    }
}

/* Every name is capped (the network's and the input's had no limit: DOT
 * with a syntax error), in characters, not bytes. */
Test(bad_network, every_name_is_capped)
{
    char longname[LW_NAME_MAX + 2];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    const char *fmts[] = {
        NET_HEAD "\"name\": \"%s\", " NET_INPUT ", " ONE_RELU "}",
        NET_HEAD "\"name\": \"a\", \"input\": {\"name\": \"%s\", \"channels\": 1, \"height\": 4, \"width\": 4}, "
                 "\"layers\": [{\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"data\"]}]}",
        NET_HEAD "\"name\": \"a\", " NET_INPUT ", \"layers\": [{\"name\": \"%s\", \"type\": \"relu\", \"inputs\": [\"data\"]}]}",
    };
    for (int i = 0; i < 3; i++) {
        char json[1024];
        snprintf(json, sizeof json, fmts[i], longname);
        lw_error err = {0};
        network *n = net_str(json, &err);
        cr_assert_null(n, "case %d loaded", i);
        cr_assert_eq(err.code, 2);
        cr_assert(strstr(err.msg, "at most 200") != NULL, "case %d: %s", i, err.msg);
    }
    /* 200 two-byte characters are within the cap */
    char wide[2 * LW_NAME_MAX + 1];
    for (int i = 0; i < LW_NAME_MAX; i++) memcpy(wide + 2 * i, "\xc3\xa9", 2);
    wide[2 * LW_NAME_MAX] = 0;
    char json[1024];
    snprintf(json, sizeof json, fmts[0], wide);
    lw_error err = {0};
    network *n = net_str(json, &err);
    cr_assert_not_null(n, "%s", err.msg);
    net_free(n);
}

/* A layer named like the network: the message points at the layer's line,
 * not at the network's "name" (line 2). */
Test(bad_network, a_layer_named_like_the_network_is_reported_at_its_own_line)
{
    const char *t = "{\"format\": \"layerwise-net/1\",\n"
                    " \"name\": \"net\",\n"
                    " \"input\": {\"name\": \"data\", \"channels\": 1, \"height\": 4, \"width\": 4},\n"
                    " \"layers\": [\n"
                    "  {\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"data\"]},\n"
                    "  {\"name\": \"s\", \"type\": \"relu\", \"inputs\": [\"r\"]},\n"
                    "  {\"name\": \"net\", \"type\": \"relu\", \"inputs\": [\"nope\"]}\n"
                    "]}\n";
    lw_error err = {0};
    network *n = net_str(t, &err);
    cr_assert_null(n);
    cr_assert(strncmp(err.msg, "inline.json:7:", 14) == 0, "%s", err.msg);
}

#define CL_HEAD "{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 2, \"gpus_per_node\": 2, "
#define CL_GPU "\"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500}"
#define CL_LINKS "\"intra_node\": {\"bandwidth_gbs\": 10}"

Test(bad_cluster, lax_inputs_of_issue_15_are_refused)
{
    static const struct {
        const char *json, *needle;
    } cases[] = {
        {CL_HEAD CL_GPU ", " CL_LINKS ", \"inter_node\": {\"bandwidth_gbs\": 10, \"nics_per_node\": 1.5}}", "nics_per_node"},
        {CL_HEAD "\"gpu\": {\"name\": 5, \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500}, " CL_LINKS
                 ", \"inter_node\": {\"bandwidth_gbs\": 10}}",
         "gpu.name"},
        {CL_HEAD "\"gpu\": {\"name\": \"G\\u001b\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500}, "
                 CL_LINKS ", \"inter_node\": {\"bandwidth_gbs\": 10}}",
         "control character"},
        {CL_HEAD CL_GPU ", " CL_LINKS ", \"inter_node\": {\"bandwidth_gbs\": 10, \"bandwidth_gbs\": 20}}", "twice"},
        {"{\"format\": \"layerwise-cluster/1\", \"name\": \"x\\u0007\", \"nodes\": 1, \"gpus_per_node\": 2, " CL_GPU ", "
         CL_LINKS "}",
         "control character"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lw_error err = {0};
        cluster *c = cluster_from_json(cases[i].json, strlen(cases[i].json), "inline.json", &err);
        cr_assert_null(c, "case %zu loaded", i);
        cr_assert_eq(err.code, 2, "case %zu: code %d", i, err.code);
        cr_assert(strncmp(err.msg, "inline.json", 11) == 0, "case %zu: %s", i, err.msg);
        cr_assert(strstr(err.msg, cases[i].needle) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, err.msg,
                  cases[i].needle);
    }
}

Test(bad_profile, unknown_fields_and_duplicate_keys_are_refused)
{
    static const struct {
        const char *json, *needle;
    } cases[] = {
        {"{\"format\": \"layerwise-profile/1\", \"gpu\": \"G\", \"entries\": [], \"extra\": 1}", "\"extra\""},
        {"{\"format\": \"layerwise-profile/1\", \"gpu\": \"G\", \"entries\": [{\"type\": \"relu\","
         " \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 1, \"backward_ms\": 1, \"fwd_ms\": 2}]}",
         "\"fwd_ms\""},
        {"{\"format\": \"layerwise-profile/1\", \"gpu\": \"G\", \"gpu\": \"H\", \"entries\": []}", "twice"},
        {"{\"format\": \"layerwise-profile/1\", \"gpu\": \"G\", \"entries\": [{\"type\": \"add\", \"inputs\": 2.5,"
         " \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 1, \"backward_ms\": 1}]}",
         "inputs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lw_error err = {0};
        profile *p = profile_from_json(cases[i].json, strlen(cases[i].json), "inline.json", &err);
        cr_assert_null(p, "case %zu loaded", i);
        cr_assert_eq(err.code, 2, "case %zu", i);
        cr_assert(strstr(err.msg, cases[i].needle) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, err.msg,
                  cases[i].needle);
    }
}

/* An entry with "inputs" matches only an add of that many inputs; one
 * without matches any (profiles written before the field). */
Test(profiles, the_key_includes_an_adds_input_count)
{
    const char *t = "{\"format\": \"layerwise-profile/1\", \"gpu\": \"G\", \"entries\": ["
                    " {\"type\": \"add\", \"inputs\": 3, \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4],"
                    "  \"forward_ms\": 1, \"backward_ms\": 1},"
                    " {\"type\": \"concat\", \"input\": [1, 1, 4, 4], \"output\": [1, 2, 4, 4],"
                    "  \"forward_ms\": 2, \"backward_ms\": 2}]}";
    lw_error err = {0};
    profile *p = profile_from_json(t, strlen(t), "p.json", &err);
    cr_assert_not_null(p, "%s", err.msg);
    profile_entry k = {.type = LT_ADD, .in = {1, 1, 4, 4}, .out = {1, 1, 4, 4}, .n_inputs = 3};
    cr_assert_float_eq(profile_lookup(p, &k), 2, 1e-12);
    k.n_inputs = 2;
    cr_assert_float_eq(profile_lookup(p, &k), -1, 0);
    profile_entry c = {.type = LT_CONCAT, .in = {1, 1, 4, 4}, .out = {1, 2, 4, 4}, .n_inputs = 2};
    cr_assert_float_eq(profile_lookup(p, &c), 4, 1e-12);
    profile_free(p);
}

/* ------------------------------------------------ issue 31: profiles and links */

static const char *const prof_head = "{\"format\": \"layerwise-profile/1\", \"gpu\": \"G\"";
static const char *const relu_entry = "{\"type\": \"relu\", \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4],"
                                      " \"forward_ms\": 1, \"backward_ms\": 1}";

static profile *prof_with(const char *extra, const char *entries, lw_error *err)
{
    char t[2048];
    snprintf(t, sizeof t, "%s%s, \"entries\": [%s]}", prof_head, extra, entries);
    return profile_from_json(t, strlen(t), "p.json", err);
}

/* A cluster of one node of 4 GPUs named "G" (fp16 figures too), at prec. */
static cluster *g_cluster(const char *gpu, precision prec)
{
    char t[1024];
    snprintf(t, sizeof t,
             "{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 1, \"gpus_per_node\": 4,"
             " \"gpu\": {\"name\": \"%s\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500,"
             " \"precisions\": {\"fp16\": {\"peak_tflops\": 40}}},"
             " \"intra_node\": {\"bandwidth_gbs\": 10}}",
             gpu);
    lw_error err = {0};
    cluster *c = cluster_from_json(t, strlen(t), "x.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(cluster_set_precision(c, prec, &err), 0, "%s", err.msg);
    return c;
}

Test(profiles, a_profile_records_the_precision_it_was_measured_at)
{
    lw_error err = {0};
    profile *p = prof_with(", \"precision\": \"fp16\"", relu_entry, &err);
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert_eq(p->precision, PREC_FP16);
    profile_free(p);
    p = prof_with("", relu_entry, &err); /* before the field: not recorded */
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert_eq(p->precision, -1);
    profile_free(p);
    static const char *const bad[] = {", \"precision\": \"fp8\"", ", \"precision\": 16", ", \"precision\": \"\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err = (lw_error){0};
        p = prof_with(bad[i], relu_entry, &err);
        cr_assert_null(p, "case %zu loaded", i);
        cr_assert_eq(err.code, 2);
        cr_assert(strstr(err.msg, "p.json") && strstr(err.msg, "\"precision\""), "case %zu: %s", i, err.msg);
    }
}

/* The run's GPU and precision against the profile's: a mismatch is an
 * error naming the file, what it was made for and what the run uses; a
 * profile without a precision is accepted, unchecked (1); the cost model
 * applies a profile only where it matches. */
Test(profiles, a_profile_is_checked_against_the_runs_gpu_and_precision)
{
    lw_error err = {0};
    profile *p16 = prof_with(", \"precision\": \"fp16\"", relu_entry, &err);
    profile *old = prof_with("", relu_entry, &err);
    cr_assert(p16 && old);
    cluster *c32 = g_cluster("G", PREC_FP32), *c16 = g_cluster("G", PREC_FP16), *h16 = g_cluster("H", PREC_FP16);

    cr_assert_eq(profile_check_cluster(p16, c16, &err), 0, "%s", err.msg);
    cr_assert(profile_applies(p16, c16));

    err = (lw_error){0};
    cr_assert_eq(profile_check_cluster(p16, c32, &err), -1);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "p.json") && strstr(err.msg, "made for G at fp16") && strstr(err.msg, "uses G at fp32"),
              "%s", err.msg);
    cr_assert_not(profile_applies(p16, c32));

    err = (lw_error){0};
    cr_assert_eq(profile_check_cluster(p16, h16, &err), -1);
    cr_assert(strstr(err.msg, "made for G at fp16") && strstr(err.msg, "uses H at fp16"), "%s", err.msg);
    cr_assert_not(profile_applies(p16, h16));

    cr_assert_eq(profile_check_cluster(old, c32, &err), 1);
    cr_assert_eq(profile_check_cluster(old, c16, &err), 1);
    cr_assert(profile_applies(old, c32) && profile_applies(old, c16));
    err = (lw_error){0};
    cr_assert_eq(profile_check_cluster(old, h16, &err), -1);
    cr_assert(strstr(err.msg, "made for G") && strstr(err.msg, "uses H"), "%s", err.msg);

    cluster_free(c32);
    cluster_free(c16);
    cluster_free(h16);
    profile_free(p16);
    profile_free(old);
}

/* One task shape twice (or after an entry without "inputs", which matches
 * every count): lookups take the first, so the second would be unused
 * without a word. Refused, naming both. A shape for 2 inputs and then for
 * any count is two different entries. */
Test(bad_profile, the_same_task_shape_twice_is_refused_naming_both)
{
    static const struct {
        const char *entries;
        const char *later, *earlier; /* NULL: loads */
    } cases[] = {
        {"{\"type\": \"relu\", \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 1, \"backward_ms\": 1},"
         "{\"type\": \"relu\", \"input\": [1, 1, 4, 8], \"output\": [1, 1, 4, 8], \"forward_ms\": 1, \"backward_ms\": 1},"
         "{\"type\": \"relu\", \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 2, \"backward_ms\": 2}",
         "entries[2]", "entries[0]"},
        {"{\"type\": \"add\", \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 1, \"backward_ms\": 1},"
         "{\"type\": \"add\", \"inputs\": 3, \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 1,"
         " \"backward_ms\": 1}",
         "entries[1]", "entries[0]"},
        {"{\"type\": \"add\", \"inputs\": 2, \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 1,"
         " \"backward_ms\": 1},"
         "{\"type\": \"add\", \"inputs\": 2, \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 1,"
         " \"backward_ms\": 1}",
         "entries[1]", "entries[0]"},
        {"{\"type\": \"conv2d\", \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"kernel\": 3, \"padding\": 1,"
         " \"forward_ms\": 1, \"backward_ms\": 1},"
         "{\"type\": \"conv2d\", \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"kernel\": [3, 3], \"stride\": 1,"
         " \"padding\": [1, 1], \"forward_ms\": 1, \"backward_ms\": 1}",
         "entries[1]", "entries[0]"},
        /* these load: another kernel; 2 inputs, then any count; two types */
        {"{\"type\": \"conv2d\", \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"kernel\": 3, \"padding\": 1,"
         " \"forward_ms\": 1, \"backward_ms\": 1},"
         "{\"type\": \"conv2d\", \"input\": [1, 1, 4, 4], \"output\": [1, 1, 2, 2], \"kernel\": 3,"
         " \"forward_ms\": 1, \"backward_ms\": 1}",
         NULL, NULL},
        {"{\"type\": \"add\", \"inputs\": 2, \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 1,"
         " \"backward_ms\": 1},"
         "{\"type\": \"add\", \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 1, \"backward_ms\": 1}",
         NULL, NULL},
        {"{\"type\": \"relu\", \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 1, \"backward_ms\": 1},"
         "{\"type\": \"dropout\", \"input\": [1, 1, 4, 4], \"output\": [1, 1, 4, 4], \"forward_ms\": 1, \"backward_ms\": 1}",
         NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lw_error err = {0};
        profile *p = prof_with("", cases[i].entries, &err);
        if (!cases[i].later) {
            cr_assert_not_null(p, "case %zu: %s", i, err.msg);
            profile_free(p);
            continue;
        }
        cr_assert_null(p, "case %zu loaded", i);
        cr_assert_eq(err.code, 2);
        cr_assert(strncmp(err.msg, "p.json: ", 8) == 0 && strstr(err.msg, cases[i].later) &&
                      strstr(err.msg, cases[i].earlier) && strstr(err.msg, "same task shape"),
                  "case %zu: %s", i, err.msg);
    }
}

/* A GPU pair twice in "links" ([0, 3] and [3, 0] are one pair): one would
 * be dropped without a word. Refused naming the file and both entries. */
Test(bad_cluster, the_same_gpu_pair_twice_in_links_is_refused_naming_both)
{
    static const char *const head =
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 1, \"gpus_per_node\": 4,"
        " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
        " \"intra_node\": {\"bandwidth_gbs\": 10}, \"links\": [";
    static const struct {
        const char *links, *later, *earlier;
    } cases[] = {
        {"{\"gpus\": [0, 3], \"bandwidth_gbs\": 45}, {\"gpus\": [1, 2], \"bandwidth_gbs\": 45},"
         " {\"gpus\": [3, 0], \"bandwidth_gbs\": 20}",
         "links[2]", "links[0]"},
        {"{\"gpus\": [1, 2], \"bandwidth_gbs\": 45}, {\"gpus\": [0, 3], \"bandwidth_gbs\": 45},"
         " {\"gpus\": [0, 3], \"bandwidth_gbs\": 45}, {\"gpus\": [2, 1], \"bandwidth_gbs\": 45}",
         "links[2]", "links[1]"},
        {"{\"gpus\": [0, 1], \"bandwidth_gbs\": 45}, {\"gpus\": [0, 2], \"bandwidth_gbs\": 45},"
         " {\"gpus\": [1, 2], \"bandwidth_gbs\": 45}, {\"gpus\": [2, 3], \"bandwidth_gbs\": 45}",
         NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char t[2048];
        snprintf(t, sizeof t, "%s%s]}", head, cases[i].links);
        lw_error err = {0};
        cluster *c = cluster_from_json(t, strlen(t), "x.json", &err);
        if (!cases[i].later) {
            cr_assert_not_null(c, "case %zu: %s", i, err.msg);
            cr_assert_eq(c->n_overrides, 4);
            cluster_free(c);
            continue;
        }
        cr_assert_null(c, "case %zu loaded", i);
        cr_assert_eq(err.code, 2);
        cr_assert(strncmp(err.msg, "x.json: ", 8) == 0 && strstr(err.msg, cases[i].later) &&
                      strstr(err.msg, cases[i].earlier),
                  "case %zu: %s", i, err.msg);
    }
}

/* ------------------------------------------------------- transformer layers */

Test(transformer, tiny_gpt_shapes_params_and_splits)
{
    network *n = load_net(FIX "nets/tiny_gpt.json");
    const layer *in = &n->layers[0];
    cr_assert(in->out.rank == 3 && in->out.c == 1 && in->out.h == 32);
    const layer *e = find_layer(n, "embed"), *ln = find_layer(n, "block0.ln1"), *at = find_layer(n, "block0.attn");
    const layer *fc1 = find_layer(n, "block0.fc1"), *head = find_layer(n, "lm_head");
    cr_assert(e->out.rank == 3 && e->out.c == 64 && e->out.h == 32);
    cr_assert_eq(e->n_params, (512 + 32) * 64);
    cr_assert_eq(e->contract, 512);
    cr_assert_eq(at->head_dim, 16);
    cr_assert_eq(at->n_params, 3 * 64 * (64 + 1));
    cr_assert_eq(fc1->out.c, 256);
    cr_assert_eq(fc1->n_params, 256 * (64 + 1));
    cr_assert_eq(fc1->contract, 64);
    cr_assert_eq(head->out.c, 512);
    cr_assert_eq(head->n_params, 0, "tied to the embedding: its table is counted there");
    cr_assert_eq(head->tied, net_find(n, "embed"));
    cr_assert_eq(e->tied, net_find(n, "lm_head"), "the embedding names its lm_head");
    /* the tied table is synced and updated with the lm_head: the weights move, their sum does not */
    cr_assert_eq(layer_weights(n, net_find(n, "embed")), 32 * 64, "the positions alone");
    cr_assert_eq(layer_weights(n, net_find(n, "lm_head")), 512 * 64);
    long sum = 0;
    for (int i = 0; i < n->n_layers; i++) sum += layer_weights(n, i);
    cr_assert_eq(sum, net_params(n));
    /* the GPT-2 count: (V + S) H + L (12 H^2 + 13 H) + 2 H */
    cr_assert_eq(net_params(n), (512 + 32) * 64 + 2 * (12 * 64 * 64 + 13 * 64) + 2 * 64);
    /* splits: layernorm never its features, and replicas; attention no replicas; linear a contraction */
    cr_assert_eq(ln->dims, DIMMASK(DIM_N) | DIMMASK(DIM_H) | DIMMASK(DIM_X));
    cr_assert_eq(at->dims, DIMMASK(DIM_N) | DIMMASK(DIM_C) | DIMMASK(DIM_H));
    cr_assert_eq(fc1->dims, DIMMASK(DIM_N) | DIMMASK(DIM_C) | DIMMASK(DIM_H) | DIMMASK(DIM_R));
    cr_assert(find_layer(n, "block0.add1")->dims & DIMMASK(DIM_X));
    /* a sequence layer's configs read s for the sequence */
    config c = {{2, 1, 4, 1, 2, 1}};
    char buf[64];
    config_format_layer(fc1, &c, buf, sizeof buf);
    cr_assert_str_eq(buf, "n2 s4 r2");
    config_format_layer(&n->layers[0], &c, buf, sizeof buf);
    cr_assert_str_eq(buf, "n2 s4 r2");
    net_free(n);
}

/* Narayanan et al. 2021 (arXiv 2104.04473), without recompute: a step of
 * batch B costs 72 B s l h^2 (1 + s / (6 h) + V / (12 l h)) FLOPs, i.e. 3 x
 * the forward matrix products. */
Test(transformer, model_flops_match_narayanan)
{
    network *n = load_net(FIX "nets/tiny_gpt.json");
    double s = 32, h = 64, l = 2, V = 512, B = 8;
    double want = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    double got = 3 * B * net_model_flops_per_sample(n);
    cr_assert_float_eq(got, want, want * 1e-12, "model FLOPs %g, Narayanan's %g", got, want);
    /* the element-wise work is counted apart */
    cr_assert_gt(layer_flops_per_sample(n, net_find(n, "block0.attn")),
                 layer_matmul_flops_per_sample(n, net_find(n, "block0.attn")));
    cr_assert_eq(layer_matmul_flops_per_sample(n, net_find(n, "block0.ln1")), 0);
    net_free(n);
}

Test(transformer, round_trips_through_net_to_json)
{
    network *a = load_net(FIX "nets/tiny_gpt.json");
    char *s = net_to_json(a);
    lw_error err = {0};
    network *b = net_from_json(s, strlen(s), "roundtrip.json", &err);
    cr_assert_not_null(b, "%s", err.msg);
    assert_same_network(a, b);
    cr_assert_eq(b->layers[net_find(b, "lm_head")].tied, net_find(b, "embed"));
    cr_assert(b->layers[net_find(b, "block1.attn")].causal);
    free(s);
    net_free(a);
    net_free(b);
}

/* A ViT's front: patches, the class token, and the token a head reads. */
Test(transformer, patches_class_token_and_select)
{
    lw_error err = {0};
    network *n = net_str("{\"format\": \"layerwise-net/1\", \"name\": \"v\","
                         " \"input\": {\"name\": \"img\", \"channels\": 3, \"height\": 32, \"width\": 32},"
                         " \"layers\": ["
                         "  {\"name\": \"patch\", \"type\": \"patch_embed\", \"inputs\": [\"img\"], \"patch\": 8, \"hidden\": 48},"
                         "  {\"name\": \"cls\", \"type\": \"cls_token\", \"inputs\": [\"patch\"]},"
                         "  {\"name\": \"ln\", \"type\": \"layernorm\", \"inputs\": [\"cls\"]},"
                         "  {\"name\": \"tok\", \"type\": \"select_token\", \"inputs\": [\"ln\"]},"
                         "  {\"name\": \"head\", \"type\": \"linear\", \"inputs\": [\"tok\"], \"out_features\": 10}]}",
                         &err);
    cr_assert_not_null(n, "%s", err.msg);
    const layer *p = find_layer(n, "patch"), *c = find_layer(n, "cls"), *t = find_layer(n, "tok");
    cr_assert(p->out.rank == 3 && p->out.h == 16 && p->out.c == 48);
    cr_assert_eq(p->n_params, 48 * (3 * 8 * 8 + 1));
    cr_assert_eq(c->out.h, 17);
    cr_assert_eq(c->n_params, 48 + 17 * 48);
    cr_assert_eq(t->out.h, 1);
    cr_assert_eq(find_layer(n, "head")->out.c, 10);
    net_free(n);
}

/* Each bad transformer layer: a message naming the layer and what is wrong. */
Test(transformer, bad_layers)
{
    static const struct {
        const char *layers, *needle;
    } cases[] = {
        {"{\"name\": \"a\", \"type\": \"attention\", \"inputs\": [\"e\"], \"heads\": 5}", "5 heads do not divide the 64 features"},
        {"{\"name\": \"a\", \"type\": \"attention\", \"inputs\": [\"e\"], \"heads\": 4, \"kv_heads\": 3}", "\"kv_heads\" 3 does not divide"},
        {"{\"name\": \"a\", \"type\": \"attention\", \"inputs\": [\"e\"]}", "attention needs \"heads\""},
        {"{\"name\": \"a\", \"type\": \"attention\", \"inputs\": [\"e\"], \"heads\": 4, \"causal\": 1}", "\"causal\" must be true or false"},
        {"{\"name\": \"h\", \"type\": \"lm_head\", \"inputs\": [\"e\"], \"vocab\": 100, \"tied\": \"e2\"}", "is not an embedding layer"},
        {"{\"name\": \"h\", \"type\": \"lm_head\", \"inputs\": [\"e\"], \"vocab\": 99, \"tied\": \"e\"}", "tied to \"e\""},
        {"{\"name\": \"g\", \"type\": \"swiglu\", \"inputs\": [\"x\"]}", "an even number of features"},
        {"{\"name\": \"s\", \"type\": \"select_token\", \"inputs\": [\"e\"], \"index\": 8}", "\"index\" 8 is past the 8 positions"},
        {"{\"name\": \"e3\", \"type\": \"embedding\", \"inputs\": [\"e\"], \"vocab\": 10, \"hidden\": 4}", "reads token ids"},
        {"{\"name\": \"p\", \"type\": \"patch_embed\", \"inputs\": [\"e\"], \"patch\": 2, \"hidden\": 4}", "needs an image"},
        {"{\"name\": \"n\", \"type\": \"layernorm\", \"inputs\": [\"e\"], \"eps\": 1}", "unknown field \"eps\""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char doc[2048];
        snprintf(doc, sizeof doc,
                 "{\"format\": \"layerwise-net/1\", \"name\": \"t\", \"input\": {\"name\": \"ids\", \"sequence\": 8},"
                 " \"layers\": [{\"name\": \"e\", \"type\": \"embedding\", \"inputs\": [\"ids\"], \"vocab\": 100, \"hidden\": 64},"
                 " {\"name\": \"x\", \"type\": \"linear\", \"inputs\": [\"e\"], \"out_features\": 3},"
                 " {\"name\": \"e2\", \"type\": \"layernorm\", \"inputs\": [\"e\"]}, %s]}",
                 cases[k].layers);
        lw_error err = {0};
        network *n = net_str(doc, &err);
        cr_assert_null(n, "case %zu loaded", k);
        cr_assert(strstr(err.msg, cases[k].needle), "case %zu: \"%s\" lacks \"%s\"", k, err.msg, cases[k].needle);
        cr_assert(strstr(err.msg, "layer \""), "case %zu: \"%s\" names no layer", k, err.msg);
    }
    lw_error err = {0};
    cr_assert_null(net_str("{\"format\": \"layerwise-net/1\", \"name\": \"t\", \"input\": {\"sequence\": 8, \"height\": 2},"
                           " \"layers\": [{\"name\": \"e\", \"type\": \"layernorm\", \"inputs\": [\"data\"]}]}", &err));
    cr_assert(strstr(err.msg, "give one or the other"), "%s", err.msg);
}
