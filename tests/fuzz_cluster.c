/*
 * Fuzz harness: the cluster loader (cluster_from_json).
 *
 * Whatever the bytes: a cluster or an error with a message, no crash, leak
 * or undefined behaviour. An accepted cluster has a GPU count within
 * CLUSTER_MAX_GPUS, positive finite link bandwidths, link overrides between
 * real devices, and a clone equal to itself.
 */
#include "fuzz_common.h"

#include "cluster.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    lw_error err = {0};
    cluster *c = cluster_from_json(text, size, "fuzz.json", &err);
    if (!c) {
        fuzz_check_error(&err);
        free(text);
        return 0;
    }
    int n = cluster_gpus(c);
    FUZZ_CHECK(c->nodes >= 1 && c->gpus_per_node >= 1 && n >= 1 && n <= CLUSTER_MAX_GPUS, "%d x %d GPUs", c->nodes,
               c->gpus_per_node);
    FUZZ_CHECK(c->nics_per_node >= 1, "%d NICs", c->nics_per_node);
    FUZZ_CHECK(c->gpu.peak_tflops > 0 && isfinite(c->gpu.peak_tflops), "peak %g", c->gpu.peak_tflops);
    FUZZ_CHECK(memchr(c->gpu.name, 0, sizeof c->gpu.name) != NULL, "GPU name not terminated");
    for (int i = 0; i < c->n_overrides; i++) {
        const link_override *o = &c->overrides[i];
        FUZZ_CHECK(o->a >= 0 && o->a < n && o->b >= 0 && o->b < n && o->a != o->b, "override %d: %d-%d", i, o->a,
                   o->b);
    }
    /* links between a few pairs, the last devices included */
    int pairs[][2] = {{0, n - 1}, {n - 1, 0}, {0, n / 2}, {n / 2, n - 1}};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        int a = pairs[k][0], b = pairs[k][1];
        FUZZ_CHECK(cluster_node_of(c, a) >= 0 && cluster_node_of(c, a) < c->nodes, "node of %d", a);
        double s = cluster_transfer_s(c, a, b, 1e6);
        FUZZ_CHECK(isfinite(s) && s >= 0, "transfer %d -> %d takes %g s", a, b, s);
        if (a != b) {
            link_spec l = cluster_link(c, a, b);
            FUZZ_CHECK(l.bandwidth_gbs > 0 && isfinite(l.bandwidth_gbs), "bandwidth %g", l.bandwidth_gbs);
        }
    }
    cluster *d = cluster_clone(c);
    FUZZ_CHECK(cluster_equal(c, d), "a clone differs");
    cluster_free(d);
    cluster_free(c);
    free(text);
    return 0;
}
