/*
 * t_x has two implementations: the reference sums every piece a task
 * receives from every other task; the closed form (clusters with uniform
 * links within and between nodes) gets the same sums per task from
 * per-dimension running sums. Every table entry must agree.
 */
#include "plan.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Criterion may run each case in a fresh process: no pointers in params. */
typedef struct tx_case {
    char net[16], cluster[16];
    int gpus;
} tx_case;

ParameterizedTestParameters(tx_paths, same_tables)
{
    static tx_case cases[] = {
        {"lenet5", "p100-4x4", 16},  {"alexnet", "p100-4x4", 16},    {"alexnet", "p100-4x4", 6},
        {"vgg16", "p100-4x4", 12},   {"vgg16", "p100-4x4", 8},       {"resnet50", "p100-4x4", 4},
        {"inception_v3", "p100-4x4", 16}, {"inception_v3", "h100-8x8", 16}, {"resnet50", "dgx-a100", 8},
        {"alexnet", "h100-8x8", 32},
    };
    return cr_make_param_array(tx_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(tx_case *c, tx_paths, same_tables)
{
    lw_error err = {0};
    network *net = plan_load_network(c->net, &err);
    cr_assert(net, "%s", err.msg);
    cluster *cl = plan_load_cluster(c->cluster, &err);
    cr_assert(cl, "%s", err.msg);
    cost_tx_reference = 1;
    cost_model *ref = cost_model_build(net, cl, NULL, c->gpus, 32L * c->gpus, &err);
    cost_tx_reference = 0;
    cost_model *fast = cost_model_build(net, cl, NULL, c->gpus, 32L * c->gpus, &err);
    cr_assert(ref && fast, "%s", err.msg);
    long nonzero = 0;
    for (int e = 0; e < ref->n_edges; e++) {
        long n = (long)ref->n_configs[ref->e_from[e]] * ref->n_configs[ref->e_to[e]];
        for (long i = 0; i < n; i++) {
            double a = ref->t_x[e][i], b = fast->t_x[e][i];
            if (a > 0) nonzero++;
            cr_assert(fabs(a - b) <= 1e-9 * fabs(a) + 1e-12, "%s %s %d GPUs: edge %s -> %s entry %ld: %.17g vs %.17g",
                      c->net, c->cluster, c->gpus, net->layers[ref->e_from[e]].name, net->layers[ref->e_to[e]].name,
                      i, a, b);
        }
    }
    cr_assert(nonzero > 0, "no transfer at all: the comparison would prove nothing");
    /* bytes too */
    config *cp = &ref->configs[ref->e_from[0]][ref->n_configs[ref->e_from[0]] - 1];
    config *cc = &ref->configs[ref->e_to[0]][0];
    double b1, b2;
    cost_tx_reference = 1;
    cost_t_x(ref, 0, cp, cc, &b1);
    cost_tx_reference = 0;
    cost_t_x(fast, 0, cp, cc, &b2);
    cr_assert(fabs(b1 - b2) <= 1e-9 * b1, "bytes %.17g vs %.17g", b1, b2);
    cost_model_free(ref);
    cost_model_free(fast);
    net_free(net);
    cluster_free(cl);
}

/* Table builds compute the closed form node by node; the receiver-by-receiver
 * form (cost_tx_oracle) is the oracle. They must agree to the bit, on every
 * entry, and keep the same candidates for a repricing: a what-if priced from
 * either build must agree to the bit as well. */
typedef struct oracle_case {
    char net[16], cluster[16];
    int gpus;
    int nodes;    /* 0: as the file says */
    int gpn;      /* GPUs per node; 0: as the file says */
    int fp16;     /* 2-byte elements */
    int reprice;  /* also compare what-ifs priced from the kept candidates */
} oracle_case;

ParameterizedTestParameters(tx_paths, node_wise_equals_receiver_wise)
{
    static oracle_case cases[] = {
        {"lenet5", "p100-4x4", 4, 0, 0, 0, 1},       {"lenet5", "p100-4x4", 16, 0, 0, 0, 1},
        {"alexnet", "p100-4x4", 4, 0, 0, 0, 1},      {"alexnet", "p100-4x4", 16, 0, 0, 0, 1},
        {"vgg16", "p100-4x4", 4, 0, 0, 0, 1},        {"vgg16", "p100-4x4", 16, 0, 0, 0, 1},
        {"resnet50", "p100-4x4", 4, 0, 0, 0, 1},     {"resnet50", "p100-4x4", 16, 0, 0, 0, 1},
        {"inception_v3", "p100-4x4", 4, 0, 0, 0, 1}, {"inception_v3", "p100-4x4", 16, 0, 0, 0, 1},
        {"lenet5", "h100-8x8", 16, 0, 0, 1, 1},      {"alexnet", "h100-8x8", 16, 0, 0, 0, 1},
        {"vgg16", "h100-8x8", 16, 0, 0, 1, 1},       {"resnet50", "h100-8x8", 16, 0, 0, 0, 1},
        {"inception_v3", "h100-8x8", 16, 0, 0, 1, 1}, {"lenet5", "h100-8x8", 64, 0, 0, 0, 0},
        {"alexnet", "h100-8x8", 64, 0, 0, 0, 0},     {"vgg16", "h100-8x8", 64, 0, 0, 0, 0},
        {"resnet50", "h100-8x8", 64, 0, 0, 0, 0},    {"inception_v3", "h100-8x8", 64, 0, 0, 0, 0},
        {"resnet50", "dgx-a100", 8, 0, 0, 0, 1},     {"inception_v3", "dgx-a100", 16, 3, 0, 1, 1},
        {"inception_v3", "p100-4x4", 12, 0, 0, 0, 1}, {"vgg16", "p100-4x4", 6, 0, 0, 0, 1},
        {"alexnet", "dgx-a100", 24, 3, 0, 0, 1},
        /* 16 and 32 GPUs a node: boxes of 16 and 32 receivers */
        {"inception_v3", "h100-8x8", 32, 2, 16, 0, 1}, {"resnet50", "h100-8x8", 64, 2, 32, 1, 0},
        {"vgg16", "h100-8x8", 64, 4, 16, 0, 0},
    };
    return cr_make_param_array(oracle_case, cases, sizeof cases / sizeof cases[0]);
}

static void expect_bit_equal_tx(const cost_model *a, const cost_model *b, const network *net, const char *what)
{
    cr_assert_eq(a->n_edges, b->n_edges);
    long nonzero = 0;
    for (int e = 0; e < a->n_edges; e++) {
        long n = (long)a->n_configs[a->e_from[e]] * a->n_configs[a->e_to[e]];
        for (long i = 0; i < n; i++) {
            double x = a->t_x[e][i], y = b->t_x[e][i];
            if (x > 0) nonzero++;
            cr_assert(memcmp(&x, &y, sizeof x) == 0, "%s: edge %s -> %s entry %ld: %a vs %a", what,
                      net->layers[a->e_from[e]].name, net->layers[a->e_to[e]].name, i, x, y);
        }
    }
    cr_assert(nonzero > 0, "%s: no transfer at all: the comparison would prove nothing", what);
}

ParameterizedTest(oracle_case *c, tx_paths, node_wise_equals_receiver_wise)
{
    lw_error err = {0};
    network *net = plan_load_network(c->net, &err);
    cr_assert(net, "%s", err.msg);
    cluster *cl = plan_load_cluster(c->cluster, &err);
    cr_assert(cl, "%s", err.msg);
    if (c->nodes) cl->nodes = c->nodes;
    if (c->gpn) cl->gpus_per_node = c->gpn;
    if (c->fp16) cl->precision = PREC_FP16;
    char what[96];
    snprintf(what, sizeof what, "%s %s%s %d GPUs, %d a node", c->net, c->cluster, c->fp16 ? " fp16" : "", c->gpus,
             cl->gpus_per_node);
    long batch = 32L * c->gpus;
    cost_model *oracle, *fast;
    if (c->reprice) {
        cost_tx_oracle = 1;
        oracle = cost_model_build_for_whatifs(net, cl, NULL, c->gpus, batch, NULL, NULL, &err);
        cost_tx_oracle = 0;
        cr_assert(oracle, "%s", err.msg);
        fast = cost_model_build_for_whatifs(net, cl, NULL, c->gpus, batch, NULL, NULL, &err);
    } else {
        cost_tx_oracle = 1;
        oracle = cost_model_build(net, cl, NULL, c->gpus, batch, &err);
        cost_tx_oracle = 0;
        cr_assert(oracle, "%s", err.msg);
        fast = cost_model_build(net, cl, NULL, c->gpus, batch, &err);
    }
    cr_assert(fast, "%s", err.msg);
    expect_bit_equal_tx(oracle, fast, net, what);
    if (c->reprice) {
        /* other prices on every link, some extreme so that each count in
         * turn decides which receiver is slowest: both price from what they
         * kept, which must be the same candidates */
        for (int k = 0; k < 5; k++) {
            cluster *x = cluster_clone(cl);
            double f[5][4] = {{0.37, 3, 1.9, 0.5}, {1e-3, 1, 1, 1}, {1, 1, 1e-3, 1}, {1, 1e3, 1, 1}, {1, 1, 1, 1e3}};
            x->inter.bandwidth_gbs *= f[k][0];
            x->inter.latency_us = x->inter.latency_us * f[k][1] + 1;
            x->intra.bandwidth_gbs *= f[k][2];
            x->intra.latency_us = x->intra.latency_us * f[k][3] + 0.25;
            cost_model *ro = cost_model_reprice(oracle, x), *rf = cost_model_reprice(fast, x);
            cr_assert(ro && rf, "%s: a repricing was declined", what);
            char w2[160];
            snprintf(w2, sizeof w2, "%s, repriced (%d)", what, k);
            expect_bit_equal_tx(ro, rf, net, w2);
            cost_model_free(ro);
            cost_model_free(rf);
            cluster_free(x);
        }
    }
    cost_model_free(oracle);
    cost_model_free(fast);
    net_free(net);
    cluster_free(cl);
}

/* Per-pair links within nodes (a DGX-1's hybrid cube-mesh, one node or a
 * pod of them): the pair form, node by node in table builds, receiver by
 * receiver for the oracle and single entries. */
typedef struct pair_case {
    char net[16], cluster[48];
    int gpus;
    int cross; /* 1: add a link between two nodes, 2: give node 1 a link node 0 has not (the pair form steps aside) */
} pair_case;

static cluster *pair_cluster(const pair_case *c, lw_error *err)
{
    cluster *cl = plan_load_cluster(c->cluster, err);
    if (cl && c->cross == 1) { /* GPU 1 of node 0 to GPU 2 of node 1, much faster than the network */
        cl->overrides = realloc(cl->overrides, sizeof *cl->overrides * (size_t)(cl->n_overrides + 1));
        cl->overrides[cl->n_overrides] = (link_override){1, cl->gpus_per_node + 2, {400, 1}};
        cl->n_overrides++;
    }
    for (int i = 0; cl && c->cross == 2 && i < cl->n_overrides; i++)
        if (cl->overrides[i].a / cl->gpus_per_node == 1) { /* one pair of node 1, 50x slower than node 0's */
            cl->overrides[i].link.bandwidth_gbs /= 50;
            break;
        }
    return cl;
}

/* The case's network and cluster, and the model built the way flag (the
 * reference or the oracle) asks, then the fast one. */
static void pair_models(const pair_case *c, int *flag, network **net, cluster **cl, cost_model **slow,
                        cost_model **fast)
{
    lw_error err = {0};
    *net = plan_load_network(c->net, &err);
    cr_assert(*net, "%s", err.msg);
    *cl = pair_cluster(c, &err);
    cr_assert(*cl, "%s", err.msg);
    long batch = 32L * c->gpus;
    *flag = 1;
    *slow = cost_model_build(*net, *cl, NULL, c->gpus, batch, &err);
    *flag = 0;
    cr_assert(*slow, "%s", err.msg);
    *fast = cost_model_build(*net, *cl, NULL, c->gpus, batch, &err);
    cr_assert(*fast, "%s", err.msg);
}

ParameterizedTestParameters(tx_paths, pairs_equal_reference)
{
    static pair_case cases[] = {
        {"alexnet", "dgx1-v100", 8, 0},
        {"inception_v3", "dgx1-v100", 8, 0},
        {"resnet50", "dgx1-v100", 4, 0},
        {"vgg16", "tests/fixtures/clusters/dgx1-32x8.json", 16, 0},
        {"inception_v3", "tests/fixtures/clusters/dgx1-32x8.json", 16, 0},
        {"resnet50", "tests/fixtures/clusters/dgx1-32x8.json", 32, 0},
        {"alexnet", "tests/fixtures/clusters/dgx1-32x8.json", 32, 1},
        {"lenet5", "tests/fixtures/clusters/dgx1-32x8.json", 16, 1},
        {"resnet50", "tests/fixtures/clusters/dgx1-32x8.json", 16, 2},
    };
    return cr_make_param_array(pair_case, cases, sizeof cases / sizeof cases[0]);
}

/* The pair form against the per-piece reference, to rounding (the two add
 * the same terms in another order); where a link joins two nodes the pair
 * form does not apply, and the build must give the reference's tables. */
ParameterizedTest(pair_case *c, tx_paths, pairs_equal_reference)
{
    network *net;
    cluster *cl;
    cost_model *ref, *fast;
    pair_models(c, &cost_tx_reference, &net, &cl, &ref, &fast);
    long nonzero = 0;
    for (int e = 0; e < ref->n_edges; e++) {
        long n = (long)ref->n_configs[ref->e_from[e]] * ref->n_configs[ref->e_to[e]];
        for (long i = 0; i < n; i++) {
            double a = ref->t_x[e][i], b = fast->t_x[e][i];
            nonzero += a > 0;
            cr_assert(fabs(a - b) <= 1e-9 * fabs(a) + 1e-12, "%s %s%s %d GPUs: edge %s -> %s entry %ld: %.17g vs %.17g",
                      c->net, c->cluster, c->cross == 1 ? " (+ a link between nodes)" : c->cross ? " (node 1 differs)" : "",
                      c->gpus,
                      net->layers[ref->e_from[e]].name, net->layers[ref->e_to[e]].name, i, a, b);
        }
    }
    cr_assert(nonzero > 0, "no transfer at all: the comparison would prove nothing");
    cost_model_free(ref);
    cost_model_free(fast);
    net_free(net);
    cluster_free(cl);
}

ParameterizedTestParameters(tx_paths, pairs_node_wise_equals_receiver_wise)
{
    static pair_case cases[] = {
        {"inception_v3", "tests/fixtures/clusters/dgx1-32x8.json", 16, 0},
        {"resnet50", "tests/fixtures/clusters/dgx1-32x8.json", 32, 0},
        {"vgg16", "tests/fixtures/clusters/dgx1-32x8.json", 64, 0},
        {"alexnet", "dgx1-v100", 8, 0},
    };
    return cr_make_param_array(pair_case, cases, sizeof cases / sizeof cases[0]);
}

/* Table builds go node by node (slices, the node cache, bounds); the
 * receiver-by-receiver pair form is the oracle: the same doubles. And a
 * single entry, from the lists rather than the dense sums, is the same
 * double as the table's. */
ParameterizedTest(pair_case *c, tx_paths, pairs_node_wise_equals_receiver_wise)
{
    network *net;
    cluster *cl;
    cost_model *oracle, *fast;
    pair_models(c, &cost_tx_oracle, &net, &cl, &oracle, &fast);
    lw_error err = {0};
    cost_model *single = cost_model_open(net, cl, NULL, c->gpus, 32L * c->gpus, &err);
    cr_assert(single, "%s", err.msg);
    char what[96];
    snprintf(what, sizeof what, "%s %s %d GPUs", c->net, c->cluster, c->gpus);
    expect_bit_equal_tx(oracle, fast, net, what);
    for (int e = 0; e < fast->n_edges; e++) {
        int na = fast->n_configs[fast->e_from[e]], nb = fast->n_configs[fast->e_to[e]];
        for (int q = e % 13; q < na * nb; q += 13) {
            double t = cost_edge_ms(single, e, q / nb, q % nb, NULL), x = fast->t_x[e][q];
            cr_assert(memcmp(&t, &x, sizeof t) == 0, "%s: edge %d entry %d: table %a, single %a", what, e, q, x, t);
        }
    }
    cost_model_free(oracle);
    cost_model_free(fast);
    cost_model_free(single);
    net_free(net);
    cluster_free(cl);
}
