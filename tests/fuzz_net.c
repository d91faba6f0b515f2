/*
 * Fuzz harness: the network loader (net_from_json).
 *
 * Whatever the bytes, the loader returns a network or an error with a
 * message, without a crash, a leak or undefined behaviour. A network it
 * accepts must be sound: layers in topological order, every shape inside
 * the documented limits, and net_to_json must give back a document that
 * loads to the same shapes and parameter counts.
 */
#include "fuzz_common.h"

#include "model.h"
#include "net_json.h"

#include <math.h>

static void check_network(const network *net)
{
    FUZZ_CHECK(net->n_layers >= 2 && net->n_layers <= NET_MAX_LAYERS + 1, "%d layers", net->n_layers);
    FUZZ_CHECK(net->layers[0].type == LT_INPUT, "layer 0 is not the input");
    for (int i = 0; i < net->n_layers; i++) {
        const layer *l = &net->layers[i];
        FUZZ_CHECK(l->name && l->name[0], "layer %d has no name", i);
        FUZZ_CHECK(net_find(net, l->name) == i, "layer \"%s\" is not found at its own index", l->name);
        FUZZ_CHECK(l->out.c >= 1 && l->out.h >= 1 && l->out.w >= 1, "layer \"%s\" has an empty output", l->name);
        FUZZ_CHECK(l->out.c <= NET_MAX_DIM && l->out.h <= NET_MAX_DIM && l->out.w <= NET_MAX_DIM,
                   "layer \"%s\" output %ldx%ldx%ld is beyond the limits", l->name, l->out.c, l->out.h, l->out.w);
        FUZZ_CHECK(shape_elems(l->out) <= NET_MAX_ELEMS, "layer \"%s\" has too many elements", l->name);
        FUZZ_CHECK(l->n_params >= 0, "layer \"%s\" has %ld parameters", l->name, l->n_params);
        FUZZ_CHECK(i == 0 || (l->n_inputs >= 1 && l->n_inputs <= NET_MAX_INPUTS), "layer \"%s\": %d inputs",
                   l->name, l->n_inputs);
        for (int k = 0; k < l->n_inputs; k++)
            FUZZ_CHECK(l->inputs[k] >= 0 && l->inputs[k] < i, "layer \"%s\" input %d is not earlier", l->name, k);
        double f = layer_flops_per_sample(net, i);
        FUZZ_CHECK(isfinite(f) && f >= 0, "layer \"%s\": %g FLOPs", l->name, f);
        char buf[64];
        shape_format(l->out, buf, sizeof buf);
        for (int d = 0; d < NDIMS; d++) FUZZ_CHECK(layer_dim_size(l, d, 1) >= 1, "dimension %d of \"%s\"", d, l->name);
    }
    (void)net_params(net);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    lw_error err = {0};
    network *net = net_from_json(text, size, "fuzz.json", &err);
    if (!net) {
        fuzz_check_error(&err);
        free(text);
        return 0;
    }
    check_network(net);

    /* round trip: the writer's document loads to the same network */
    char *again = net_to_json(net);
    FUZZ_CHECK(again != NULL, "net_to_json failed");
    lw_error err2 = {0};
    network *net2 = net_from_json(again, strlen(again), "roundtrip.json", &err2);
    FUZZ_CHECK(net2 != NULL, "net_to_json's output does not load: %s\n%s", err2.msg, again);
    FUZZ_CHECK(net2->n_layers == net->n_layers, "%d layers, then %d", net->n_layers, net2->n_layers);
    for (int i = 0; i < net->n_layers; i++) {
        const layer *a = &net->layers[i];
        int j = net_find(net2, a->name);
        FUZZ_CHECK(j >= 0, "layer \"%s\" lost in the round trip", a->name);
        const layer *b = &net2->layers[j];
        FUZZ_CHECK(a->type == b->type && a->out.c == b->out.c && a->out.h == b->out.h && a->out.w == b->out.w &&
                       a->out.rank == b->out.rank && a->n_params == b->n_params,
                   "layer \"%s\" changed in the round trip", a->name);
    }
    net_free(net2);
    free(again);
    net_free(net);
    free(text);
    return 0;
}
