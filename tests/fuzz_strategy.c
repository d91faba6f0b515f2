/*
 * Fuzz harness: the strategy loader (strategy_from_json) against a fixed
 * cost model, LeNet-5 on 4 GPUs of p100-4x4, built once.
 *
 * Whatever the bytes: 0 with a valid config index for every layer, or -1
 * with a message; no crash, leak or undefined behaviour. An accepted
 * strategy evaluates to finite times, and strategy_to_json's document of it
 * reads back to the same configs.
 */
#include "fuzz_common.h"

#include "cluster.h"
#include "cost.h"
#include "net_json.h"
#include "strategy.h"

#include <math.h>

static network *net;
static cluster *cl;
static cost_model *cm;

static void cleanup(void)
{
    cost_model_free(cm);
    cluster_free(cl);
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
    cl = cluster_from_json(t, len, "p100-4x4", &err);
    if (!net || !cl) {
        fprintf(stderr, "fuzz_strategy: %s\n", err.msg);
        abort();
    }
    cm = cost_model_build(net, cl, NULL, 4, 128, &err);
    if (!cm) {
        fprintf(stderr, "fuzz_strategy: %s\n", err.msg);
        abort();
    }
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    int *ci = calloc((size_t)cm->n_layers, sizeof(int));
    lw_error err = {0};
    if (strategy_from_json(cm, text, size, "fuzz.json", ci, &err) != 0) {
        fuzz_check_error(&err);
        free(ci);
        free(text);
        return 0;
    }
    for (int i = 0; i < cm->n_layers; i++)
        FUZZ_CHECK(ci[i] >= 0 && ci[i] < cm->n_configs[i], "layer %d: config index %d of %d", i, ci[i],
                   cm->n_configs[i]);
    strategy_eval ev;
    strategy_evaluate(cm, ci, &ev);
    FUZZ_CHECK(isfinite(ev.total_ms) && ev.total_ms >= 0, "total %g ms", ev.total_ms);
    char *doc = strategy_to_json(cm, ci, &ev, "file", -1, NULL);
    int *ci2 = calloc((size_t)cm->n_layers, sizeof(int));
    lw_error err2 = {0};
    FUZZ_CHECK(strategy_from_json(cm, doc, strlen(doc), "roundtrip.json", ci2, &err2) == 0,
               "strategy_to_json's output does not read back: %s", err2.msg);
    FUZZ_CHECK(memcmp(ci, ci2, sizeof(int) * (size_t)cm->n_layers) == 0, "configs changed in the round trip");
    free(ci2);
    free(doc);
    strategy_eval_free(&ev);
    free(ci);
    free(text);
    return 0;
}
