/*
 * t_x has two implementations: the reference sums every piece a task
 * receives from every other task; the closed form (clusters with uniform
 * links within and between nodes) gets the same sums per task from
 * per-dimension running sums. Every table entry must agree.
 */
#include "plan.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>

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
