/*
 * Fuzz harness: the profile loader (profile_from_json), then the cost model
 * of LeNet-5 on 4 GPUs with that profile applied (the cluster's GPU renamed
 * to the profile's, so entries are looked up whatever the name).
 *
 * Whatever the bytes: a profile or an error with a message, no crash, leak
 * or undefined behaviour; every entry finds a time; the cost model built
 * with it has finite, non-negative t_c.
 */
#include "fuzz_common.h"

#include "cluster.h"
#include "cost.h"
#include "net_json.h"
#include "profile.h"

#include <math.h>

static network *net;
static cluster *base;

static void cleanup(void)
{
    cluster_free(base);
    net_free(net);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    size_t len;
    const char *t;
    lw_error err = {0};
    t = fuzz_builtin("networks/lenet5.json", &len);
    net = net_from_json(t, len, "lenet5", &err);
    t = fuzz_builtin("clusters/p100-4x4.json", &len);
    base = cluster_from_json(t, len, "p100-4x4", &err);
    if (!net || !base) {
        fprintf(stderr, "fuzz_profile: %s\n", err.msg);
        abort();
    }
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    lw_error err = {0};
    profile *p = profile_from_json(text, size, "fuzz.json", &err);
    if (!p) {
        fuzz_check_error(&err);
        free(text);
        return 0;
    }
    FUZZ_CHECK(p->gpu && p->n >= 0, "profile without a GPU");
    for (int i = 0; i < p->n && i < 64; i++) {
        double ms = profile_lookup(p, &p->e[i]);
        FUZZ_CHECK(ms >= 0 && isfinite(ms), "entry %d is not found by its own key (%g)", i, ms);
    }
    cluster *c = cluster_clone(base);
    snprintf(c->gpu.name, sizeof c->gpu.name, "%s", p->gpu);
    cost_model *m = cost_model_build(net, c, p, 4, 128, &err);
    FUZZ_CHECK(m != NULL, "cost model with a valid profile: %s", err.msg);
    for (int i = 0; i < m->n_layers; i++)
        for (int k = 0; k < m->n_configs[i]; k++)
            FUZZ_CHECK(isfinite(m->t_c[i][k]) && m->t_c[i][k] >= 0, "t_c[%d][%d] = %g", i, k, m->t_c[i][k]);
    cost_model_free(m);
    cluster_free(c);
    profile_free(p);
    free(text);
    return 0;
}
