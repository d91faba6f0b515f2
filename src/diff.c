/*
 * diff: two strategies of one setting side by side.
 */
#include "diff.h"
#include "plan_internal.h" /* an engine module: it reads the plan's model */

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int strategy_pick(const plan *p, const char *name, int *ci, lw_error *err)
{
    return strategy_pick_with(p, name, NULL, ci, err);
}

int strategy_pick_with(const plan *p, const char *name, const megatron_options *mo, int *ci, lw_error *err)
{
    if (strcmp(name, "megatron") == 0) return strategy_megatron(p->cm, mo, ci, err);
    if (strcmp(name, "optimum") == 0) {
        if (!p->sr) return lw_fail(err, 1, "there is no optimum: the plan was not searched");
        memcpy(ci, p->best, sizeof(int) * (size_t)p->net->n_layers);
        return 0;
    }
    int b = baseline_from_name(name);
    if (b >= 0) {
        plan_baseline(p, (baseline_kind)b, ci);
        return 0;
    }
    return plan_strategy_file(p, name, ci, err);
}

static double layer_ms(const layer_eval *le)
{
    return le->compute_ms + le->sync_ms + le->transfer_ms;
}

static int differs(const plan *p, const diff_side *a, const diff_side *b, int i)
{
    return !config_equal(plan_config(p, i, a->ci[i]), plan_config(p, i, b->ci[i]));
}

int diff_changed(const plan *p, const diff_side *a, const diff_side *b)
{
    int n = 0;
    for (int i = 0; i < p->net->n_layers; i++) n += differs(p, a, b, i);
    return n;
}

static cJSON *side_json(const plan *p, const diff_side *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "strategy", s->label);
    cJSON_AddNumberToObject(o, "total_ms", s->ev->total_ms);
    cJSON_AddNumberToObject(o, "compute_ms", s->ev->compute_ms);
    cJSON_AddNumberToObject(o, "sync_ms", s->ev->sync_ms);
    cJSON_AddNumberToObject(o, "transfer_ms", s->ev->transfer_ms);
    cJSON_AddNumberToObject(o, "images_per_s", s->ev->images_per_s);
    doc_add_throughput(o, p->cm, "eq1", s->ev->total_ms, s->ev->gpus_used);
    cJSON_AddNumberToObject(o, "bytes_per_step", s->ev->bytes_per_step);
    cJSON_AddNumberToObject(o, "gpus_used", s->ev->gpus_used);
    return o;
}

static cJSON *layer_json(const plan *p, const diff_side *s, int i)
{
    const layer_eval *le = &s->ev->layers[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "config", config_to_json(&p->net->layers[i], &p->cm->configs[i][s->ci[i]]));
    cJSON_AddNumberToObject(o, "compute_ms", le->compute_ms);
    cJSON_AddNumberToObject(o, "sync_ms", le->sync_ms);
    cJSON_AddNumberToObject(o, "transfer_ms", le->transfer_ms);
    cJSON_AddNumberToObject(o, "total_ms", layer_ms(le));
    return o;
}

char *diff_json(const plan *p, const diff_side *a, const diff_side *b)
{
    cJSON *root = doc_new("layerwise-diff/1", p->cm, -1);
    cJSON_AddStringToObject(root, "model", "Eq. 1");
    cJSON_AddItemToObject(root, "a", side_json(p, a));
    cJSON_AddItemToObject(root, "b", side_json(p, b));
    cJSON_AddNumberToObject(root, "delta_ms", b->ev->total_ms - a->ev->total_ms);
    cJSON_AddNumberToObject(root, "layers_changed", diff_changed(p, a, b));
    cJSON *arr = cJSON_AddArrayToObject(root, "layers");
    for (int i = 0; i < p->net->n_layers; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", p->net->layers[i].name);
        cJSON_AddBoolToObject(o, "changed", differs(p, a, b, i));
        cJSON_AddItemToObject(o, "a", layer_json(p, a, i));
        cJSON_AddItemToObject(o, "b", layer_json(p, b, i));
        cJSON_AddNumberToObject(o, "delta_ms", layer_ms(&b->ev->layers[i]) - layer_ms(&a->ev->layers[i]));
        cJSON_AddItemToArray(arr, o);
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

char *diff_text(const plan *p, const diff_side *a, const diff_side *b)
{
    lw_buf out = {0};
    int L = p->net->n_layers, w = 5;
    for (int i = 0; i < L; i++) {
        int l = (int)strlen(p->net->layers[i].name);
        if (l > w) w = l;
    }
    if (w > 40) w = 40;
    lw_buf_printf(&out, "A: %s   B: %s   (%s on %s, %d GPU%s, batch %ld, %s, %s; ms per step, Eq. 1)\n\n", a->label,
                  b->label, p->net->name, p->cl->name, p->gpus, p->gpus == 1 ? "" : "s", p->batch,
                  precision_name(p->cl->precision), sync_scheme_name(p->cl->sync));
    lw_buf_printf(&out, "  %-*s %-12s %9s  %-12s %9s %9s  %8s %8s %8s\n", w, "layer", "A config", "A ms", "B config",
                  "B ms", "B-A ms", "B-A t_c", "t_s", "t_x");
    for (int i = 0; i < L; i++) {
        const layer_eval *la = &a->ev->layers[i], *lb = &b->ev->layers[i];
        char ca[48], cb[48];
        config_format_layer(&p->net->layers[i], &p->cm->configs[i][a->ci[i]], ca, sizeof ca);
        config_format_layer(&p->net->layers[i], &p->cm->configs[i][b->ci[i]], cb, sizeof cb);
        int ch = differs(p, a, b, i);
        lw_buf_printf(&out, "%c %-*.*s %-12s %9.3f  %-12s %9.3f %+9.3f  %+8.3f %+8.3f %+8.3f\n", ch ? '*' : ' ', w, w,
                      p->net->layers[i].name, ca, layer_ms(la), cb, layer_ms(lb), layer_ms(lb) - layer_ms(la),
                      lb->compute_ms - la->compute_ms, lb->sync_ms - la->sync_ms, lb->transfer_ms - la->transfer_ms);
    }
    double ta = a->ev->total_ms, tb = b->ev->total_ms;
    lw_buf_printf(&out, "\n  %-*s %-12s %9.3f  %-12s %9.3f %+9.3f  %+8.3f %+8.3f %+8.3f\n", w, "total (Eq. 1)", "", ta,
                  "", tb, tb - ta, b->ev->compute_ms - a->ev->compute_ms, b->ev->sync_ms - a->ev->sync_ms,
                  b->ev->transfer_ms - a->ev->transfer_ms);
    int n = diff_changed(p, a, b);
    lw_buf_printf(&out,
                  "\nB - A: %+.2f ms per step (%+.1f%%; Eq. 1), %.1f -> %.1f images/s, MFU %.1f%% -> %.1f%%; %d of %d "
                  "layers differ%s\n",
                  tb - ta, ta > 0 ? (tb - ta) / ta * 100 : 0.0, a->ev->images_per_s, b->ev->images_per_s,
                  a->ev->mfu * 100, b->ev->mfu * 100, n, L, n ? " (marked *)" : "");
    return out.s;
}
