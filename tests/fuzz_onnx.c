/*
 * Fuzz harness: the ONNX importer (onnx_to_net_json, then net_from_json on
 * what it writes).
 *
 * Whatever the bytes (a truncated or hostile protobuf), the importer returns
 * a document or an error with a message, without a crash, a leak or
 * undefined behaviour. A document it writes is checked by the network
 * loader like any file (which may still refuse it, with a message: a limit
 * of layerwise's such as a kernel over 4096); one it accepts has shapes
 * inside the documented limits.
 */
#include "fuzz_common.h"

#include "model.h"
#include "net_json.h"
#include "onnx_import.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lw_error err = {0};
    onnx_counts cnt = {0};
    char *json = onnx_to_net_json(data, size, "fuzz.onnx", "fuzz", NULL, &cnt, &err);
    if (!json) {
        fuzz_check_error(&err);
        return 0;
    }
    FUZZ_CHECK(cnt.mapped + cnt.folded <= cnt.nodes, "%d mapped + %d folded of %d nodes", cnt.mapped, cnt.folded,
               cnt.nodes);
    lw_error err2 = {0};
    network *net = net_from_json(json, strlen(json), "imported.json", &err2);
    if (!net) {
        fuzz_check_error(&err2);
        free(json);
        return 0;
    }
    for (int i = 0; i < net->n_layers; i++) {
        const layer *l = &net->layers[i];
        FUZZ_CHECK(l->out.c >= 1 && l->out.h >= 1 && l->out.w >= 1, "layer \"%s\" has an empty output", l->name);
        double f = layer_flops_per_sample(net, i);
        FUZZ_CHECK(isfinite(f) && f >= 0, "layer \"%s\": %g FLOPs", l->name, f);
    }
    net_free(net);
    free(json);
    return 0;
}
