/*
 * The cost model's output pinned bit for bit: for a fixed set of settings,
 * 64-bit hashes (FNV-1a over the doubles' bytes) of the t_c, t_s and t_x
 * tables and of the optimum the search finds on them (its configs, cost,
 * Eq. 1 total and memory per GPU), against values recorded from the code
 * and data as they were before src/cost.c was split into parts (commit
 * d11705e; the data is kept in tests/fixtures/hash). The
 * settings reach every path a table entry can take: the closed form
 * receiver by receiver (p100-4x4: 4 GPUs a node) and node by node
 * (h100-8x8: 8), the pair form on per-pair links (dgx1-32x8), the
 * per-piece sums (a link between nodes; the reference), the oracle, a
 * flatten edge across nodes (VGG-16, AlexNet), fp16, a memory limit that
 * moves the optimum, the what-ifs that re-price kept counts, and single
 * evaluations on a model without tables.
 *
 * A change meant to move a number records the new hashes here (the
 * failure message prints them) and says why in its commit message; a
 * refactor must leave them as they are.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "cost.h"
#include "plan.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The networks and clusters as they were when the hashes were recorded
 * (tests/fixtures/hash: d11705e's lenet5, alexnet, vgg16, inception_v3,
 * resnet50, p100-4x4 and h100-8x8), so that a change to the shipped data
 * (the CNNs completed with their ReLU and BatchNorm layers, a GPU refitted)
 * does not move them: these hashes pin the cost model's code. */
__attribute__((constructor)) static void use_the_recorded_data(void)
{
    setenv("LAYERWISE_DATA", "tests/fixtures/hash", 1);
}

/* ---------------------------------------------------------------- hashing */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

static uint64_t fnv_d(uint64_t h, double x)
{
    return fnv(h, &x, sizeof x);
}

static uint64_t fnv_i(uint64_t h, long x)
{
    return fnv(h, &x, sizeof x);
}

#define FNV_BASIS 1469598103934665603ULL

typedef struct table_hashes {
    uint64_t tc, ts, tx;
} table_hashes;

/* Every layer's configs with t_c and whether a profile gave it; t_s; every
 * edge's t_x, entries in order. */
static table_hashes hash_tables(const cost_model *m)
{
    table_hashes h = {FNV_BASIS, FNV_BASIS, FNV_BASIS};
    for (int i = 0; i < m->n_layers; i++) {
        h.tc = fnv_i(h.tc, m->n_configs[i]);
        for (int k = 0; k < m->n_configs[i]; k++) {
            /* the tensor's four degrees, as recorded; a CNN layer has no
             * contraction split or replicas */
            h.tc = fnv(h.tc, m->configs[i][k].deg, sizeof(int) * NDIMS);
            cr_assert(m->configs[i][k].deg[DIM_R] == 1 && m->configs[i][k].deg[DIM_X] == 1);
            h.tc = fnv_d(h.tc, m->t_c[i][k]);
            h.tc = fnv_i(h.tc, m->t_c_profiled[i][k]);
            h.ts = fnv_d(h.ts, m->t_s[i][k]);
        }
    }
    for (int e = 0; e < m->n_edges; e++) {
        long n = (long)m->n_configs[m->e_from[e]] * m->n_configs[m->e_to[e]];
        h.tx = fnv_i(h.tx, m->e_from[e] * 65536L + m->e_to[e]);
        h.tx = fnv(h.tx, m->t_x[e], sizeof(double) * (size_t)n);
    }
    return h;
}

/* The optimum: each layer's config, the search's cost, Eq. 1's total and
 * bytes moved, the memory on every GPU and how it relates to the limit. */
static uint64_t hash_optimum(const plan *p)
{
    const cost_model *m = p->cm;
    uint64_t h = fnv(FNV_BASIS, p->best, sizeof(int) * (size_t)m->n_layers);
    h = fnv_d(h, p->sr->cost);
    h = fnv_d(h, p->best_eval.total_ms);
    h = fnv_d(h, p->best_eval.bytes_per_step);
    double *per_gpu = calloc((size_t)m->gpus, sizeof(double));
    h = fnv_d(h, cost_memory(m, p->best, per_gpu));
    h = fnv(h, per_gpu, sizeof(double) * (size_t)m->gpus);
    free(per_gpu);
    h = fnv_i(h, p->mem.constrained * 4 + p->mem.fits * 2 + p->mem.proven_optimal);
    return h;
}

/* ------------------------------------------------------------ the settings */

/* Two nodes of 4 GPUs with one faster link between GPU 0 and GPU 4: links
 * not uniform between nodes, so every t_x entry is the per-piece sum
 * (tx_eval's loop over the pieces each consumer task receives). */
static const char *cross_link_cluster =
    "{\"format\": \"layerwise-cluster/1\", \"name\": \"cross-link\", \"nodes\": 2, \"gpus_per_node\": 4,"
    " \"gpu\": {\"name\": \"TestGPU\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
    " \"intra_node\": {\"bandwidth_gbs\": 20, \"latency_us\": 5},"
    " \"inter_node\": {\"bandwidth_gbs\": 10, \"latency_us\": 8, \"nics_per_node\": 2},"
    " \"links\": [{\"gpus\": [0, 4], \"bandwidth_gbs\": 25, \"latency_us\": 3}],"
    " \"sync\": \"ring-allreduce\"}";

static cluster *load_cluster(const char *name)
{
    lw_error err = {0};
    cluster *c = strcmp(name, "cross-link") == 0
                     ? cluster_from_json(cross_link_cluster, strlen(cross_link_cluster), "cross-link.json", &err)
                     : plan_load_cluster(name, &err);
    cr_assert_not_null(c, "%s: %s", name, err.msg);
    return c;
}

enum { PATH_DEFAULT, PATH_REFERENCE, PATH_ORACLE };

/* Criterion may run each case in a process of its own: no pointers. */
typedef struct hash_case {
    char net[16], cluster[48];
    int gpus;
    int prec;        /* -1: the cluster's */
    double limit_gib; /* memory per GPU; < 0: none */
    int path;
    uint64_t tc, ts, tx, opt; /* expected */
} hash_case;

#define DGX1 "tests/fixtures/clusters/dgx1-32x8.json"

ParameterizedTestParameters(cost_hash, tables_and_optimum)
{
    static hash_case cases[] = {
        {"lenet5", "p100-4x4", 16, -1, -1, PATH_DEFAULT,
         0x569ed26a4335cd53ULL, 0xd3d07696b91f188aULL, 0x656748e1880c8c83ULL, 0xd42ea51d5deb0862ULL},
        {"alexnet", "p100-4x4", 16, -1, -1, PATH_DEFAULT,
         0xef92023855042c4dULL, 0x6d8a56109e7596eaULL, 0x19a671b90a4b8114ULL, 0x931bb2eddd2620e4ULL},
        {"vgg16", "p100-4x4", 16, -1, -1, PATH_DEFAULT,
         0x6ae6c1a74fecfa9dULL, 0x357929105961ef2cULL, 0xd346ef25d371f6a5ULL, 0x32dea80e03306e1dULL},
        {"inception_v3", "p100-4x4", 16, -1, -1, PATH_DEFAULT,
         0xfa10bc525b5c414bULL, 0x8f3f258e86dde0dbULL, 0x1a5bdf611a2c48e1ULL, 0xc279b9cb08aee844ULL},
        {"resnet50", "p100-4x4", 16, -1, -1, PATH_DEFAULT,
         0x8bfb480e73e84ce4ULL, 0xca274199441dd932ULL, 0x6fdbb0feedaf57efULL, 0x8846c54c4e9a08efULL},
        {"vgg16", DGX1, 64, -1, -1, PATH_DEFAULT,
         0x5ed0a268d80de1acULL, 0x8d8c3161a4ccbb26ULL, 0x8c2e452fa13d0a27ULL, 0xdf7ddbde52bcacbdULL},
        /* re-recorded for issue 34: a tf32 convolution costs no more than in fp32 (cuDNN picks the
         * faster; h100-8x8 runs tf32), and gradients sync in fp32 at every precision */
        {"resnet50", "h100-8x8", 64, -1, -1, PATH_DEFAULT,
         0x4eea87c2fc5e7f2cULL, 0xf53db7e1656e4cc6ULL, 0x8315183434d280dfULL, 0x4618dc527d7f7fefULL},
        {"inception_v3", "h100-8x8", 16, PREC_FP16, -1, PATH_DEFAULT,
         0xa41de00ad2366400ULL, 0xb5978e1dd4b97125ULL, 0xd43e76fac8242760ULL, 0x5931e9cfe8562771ULL},
        {"vgg16", "p100-4x4", 16, -1, 3.0, PATH_DEFAULT,
         0x6ae6c1a74fecfa9dULL, 0x357929105961ef2cULL, 0xd346ef25d371f6a5ULL, 0xfa784958c78f2659ULL},
        {"alexnet", "cross-link", 8, -1, -1, PATH_DEFAULT,
         0x63505487636cfcc6ULL, 0xc7be44c7b30ad442ULL, 0xd0644dd32be0ddd1ULL, 0xf2e390b6f4591a9dULL},
        {"inception_v3", "cross-link", 8, -1, -1, PATH_DEFAULT,
         0xd024ca1ea60e5544ULL, 0x94369f7188482492ULL, 0xf035b4c9dd3dc76fULL, 0xad4f426b24666c30ULL},
        {"vgg16", "p100-4x4", 16, -1, -1, PATH_REFERENCE,
         0x6ae6c1a74fecfa9dULL, 0x357929105961ef2cULL, 0x54d58d8385b52c93ULL, 0x32dea80e03306e1dULL},
        {"inception_v3", "h100-8x8", 16, -1, -1, PATH_ORACLE,
         0x0d871994ddae65d8ULL, 0xb5978e1dd4b97125ULL, 0xa09056797f285c35ULL, 0xf341c359659d096bULL},
        {"resnet50", DGX1, 16, -1, -1, PATH_ORACLE,
         0xca9f6968b534a25bULL, 0xaa48e38ff1865768ULL, 0xc1be611f81226fd1ULL, 0xf9dc81bac58f5e4fULL},
    };
    return cr_make_param_array(hash_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(hash_case *c, cost_hash, tables_and_optimum, .timeout = 600)
{
    lw_error err = {0};
    network *net = plan_load_network(c->net, &err);
    cr_assert_not_null(net, "%s", err.msg);
    cluster *cl = load_cluster(c->cluster);
    if (c->prec >= 0) cr_assert_eq(cluster_set_precision(cl, (precision)c->prec, &err), 0, "%s", err.msg);
    plan_settings s = {.gpus = c->gpus, .batch_per_gpu = 32};
    /* a budget no load on the machine can exhaust: the memory search
     * proves its optimum, whatever the time it takes */
    plan_memory_settings ms = {.limit = c->limit_gib < 0 ? -1 : c->limit_gib * 1073741824.0, .time_s = 600};
    cost_tx_reference = c->path == PATH_REFERENCE;
    cost_tx_oracle = c->path == PATH_ORACLE;
    plan *p = plan_open(net, cl, NULL, &(plan_options){.set = s, .mem = ms}, &err);
    cost_tx_reference = cost_tx_oracle = 0;
    cr_assert_not_null(p, "%s on %s: %s", c->net, c->cluster, err.msg);
    if (c->limit_gib >= 0) /* the case is there for the limit: it must move the optimum */
        cr_assert(p->mem.constrained && p->mem.fits && p->mem.proven_optimal, "the limit does not apply");
    table_hashes h = hash_tables(p->cm);
    uint64_t opt = hash_optimum(p);
    cr_assert(h.tc == c->tc && h.ts == c->ts && h.tx == c->tx && opt == c->opt,
              "%s on %s, %d GPUs (prec %d, limit %g, path %d): hashes 0x%016llxULL, 0x%016llxULL, 0x%016llxULL, "
              "0x%016llxULL; expected 0x%016llxULL, 0x%016llxULL, 0x%016llxULL, 0x%016llxULL",
              c->net, c->cluster, c->gpus, c->prec, c->limit_gib, c->path, (unsigned long long)h.tc,
              (unsigned long long)h.ts, (unsigned long long)h.tx, (unsigned long long)opt,
              (unsigned long long)c->tc, (unsigned long long)c->ts, (unsigned long long)c->tx,
              (unsigned long long)c->opt);
    plan_free(p);
}

/* ------------------------------------------------------------- what-ifs */

static uint64_t tx_hash_of(const cost_model *m)
{
    cr_assert_not_null(m);
    return hash_tables(m).tx ^ hash_tables(m).ts;
}

/* A model built keeping its counts, then re-priced (inter-node bandwidth
 * doubled), reused at more GPUs (some entries computed) and at another
 * batch, and reused answering first: each model's tables hashed. */
Test(cost_hash, what_ifs_reprice_and_reuse, .timeout = 600)
{
    lw_error err = {0};
    network *net = plan_load_network("inception_v3", &err);
    cluster *cl = load_cluster("p100-4x4");
    cr_assert_not_null(net, "%s", err.msg);
    cost_model *m = cost_model_build_for_whatifs(net, cl, NULL, 8, 256, NULL, NULL, &err);
    cr_assert_not_null(m, "%s", err.msg);
    cr_assert_gt(cost_model_kept_bytes(m), 0);
    cluster *fast = cluster_clone(cl);
    fast->inter.bandwidth_gbs *= 2;
    cost_model *r1 = cost_model_reprice(m, fast);
    cost_model *r2 = cost_model_reuse(m, cl, 16, 512);
    cost_model *r3 = cost_model_reuse(m, cl, 4, 96);
    cost_model *r4 = cost_model_reuse_fast(m, fast, 16, 512, NULL);
    uint64_t got[5] = {tx_hash_of(m), tx_hash_of(r1), tx_hash_of(r2), tx_hash_of(r3), tx_hash_of(r4)};
    static const uint64_t want[5] = {0x1e75197d3a34f58dULL, 0x42e0d32b777789b2ULL, 0x9564faef9cf1a83aULL,
                                      0xf2bb825fb5847addULL, 0xaad9b31415d1d931ULL};
    cr_assert(r1->tx_reused == 1 && r2->tx_reused == 2, "reused %d %d", r1->tx_reused, r2->tx_reused);
    cr_assert(memcmp(got, want, sizeof got) == 0,
              "hashes 0x%016llxULL, 0x%016llxULL, 0x%016llxULL, 0x%016llxULL, 0x%016llxULL",
              (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2],
              (unsigned long long)got[3], (unsigned long long)got[4]);
    cost_model_free(r4);
    cost_model_free(r3);
    cost_model_free(r2);
    cost_model_free(r1);
    cost_model_free(m);
    cluster_free(fast);
    cluster_free(cl);
    net_free(net);
}

/* ------------------------------------------------- single evaluations */

/* On a model without tables (cost_model_open): a spread of t_x entries of
 * every edge (time and bytes: the lists rather than the dense tables),
 * every layer's t_c parts, t_s with its bytes and memory per task, and the
 * overlaps of a consumer task with the producer's. */
static uint64_t hash_single(const char *netname, const char *clname, int gpus)
{
    lw_error err = {0};
    network *net = plan_load_network(netname, &err);
    cr_assert_not_null(net, "%s", err.msg);
    cluster *cl = load_cluster(clname);
    cost_model *m = cost_model_open(net, cl, NULL, gpus, 32L * gpus, &err);
    cr_assert_not_null(m, "%s", err.msg);
    uint64_t h = FNV_BASIS;
    int *ptask = malloc(sizeof(int) * (size_t)gpus);
    double *vol = malloc(sizeof(double) * (size_t)gpus);
    for (int e = 0; e < m->n_edges; e++) {
        const int a = m->e_from[e], b = m->e_to[e];
        const long n = (long)m->n_configs[a] * m->n_configs[b];
        for (long q = e % 7; q < n; q += 1 + n / 23) {
            const config *cp = &m->configs[a][q / m->n_configs[b]], *cc = &m->configs[b][q % m->n_configs[b]];
            double bytes = -1;
            h = fnv_d(h, cost_t_x(m, e, cp, cc, &bytes));
            h = fnv_d(h, bytes);
            h = fnv_d(h, cost_t_x(m, e, cp, cc, NULL));
            const int task = (int)(q % config_tasks(cc));
            const int k = cost_overlaps_of(m, e, cp, cc, task, ptask, vol);
            h = fnv(fnv(h, ptask, sizeof(int) * (size_t)k), vol, sizeof(double) * (size_t)k);
            if (k) h = fnv_d(h, cost_overlap(m, e, cp, ptask[k - 1], cc, task));
        }
    }
    for (int i = 0; i < m->n_layers; i++)
        for (int k = 0; k < m->n_configs[i]; k += 1 + m->n_configs[i] / 17) {
            const config *c = &m->configs[i][k];
            profile_entry key;
            double fwd, bwd, bytes = -1;
            memory_parts parts;
            h = fnv_d(h, cost_t_c_parts(m, i, c, &key, &fwd, &bwd));
            h = fnv_d(fnv_d(h, fwd), bwd);
            h = fnv(h, key.in, sizeof key.in);
            h = fnv(h, key.out, sizeof key.out);
            h = fnv_d(h, cost_t_s(m, i, c, &bytes));
            h = fnv_d(h, bytes);
            h = fnv_d(h, cost_node_ms(m, i, k));
            h = fnv_d(h, cost_memory_task(m, i, c, config_tasks(c) - 1, &parts));
            h = fnv(h, &parts, sizeof parts);
        }
    free(ptask);
    free(vol);
    cost_model_free(m);
    cluster_free(cl);
    net_free(net);
    return h;
}

Test(cost_hash, single_evaluations_without_tables, .timeout = 600)
{
    uint64_t got[4] = {hash_single("vgg16", "p100-4x4", 16), hash_single("inception_v3", "h100-8x8", 64),
                       hash_single("vgg16", DGX1, 64), hash_single("alexnet", "cross-link", 8)};
    static const uint64_t want[4] = {0xa089898ea25bf7feULL, 0x002ade6d8a2fe0c2ULL, 0x141a95f87628e5c9ULL,
                                     0xbf8540105c843803ULL};
    cr_assert(memcmp(got, want, sizeof got) == 0, "hashes 0x%016llxULL, 0x%016llxULL, 0x%016llxULL, 0x%016llxULL",
              (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2],
              (unsigned long long)got[3]);
}
