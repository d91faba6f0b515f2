/*
 * The paper's set-up (4 nodes x 4 P100, per-GPU batch 32): the calibrated
 * constants must keep the one-GPU throughputs near the paper's, the 16-GPU
 * orderings the paper reports must hold, and Table 5's VGG-16 strategy on
 * 4 GPUs is pinned as this model gives it, with the paper's own strategy
 * checked to be a near-tie (see data/doc/reproduce.md, "Reproducing the paper").
 */
#include "plan.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "test_helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

static double baseline_ips(plan *p, baseline_kind b)
{
    int *ci = calloc((size_t)p->net->n_layers, sizeof(int));
    strategy_baseline(p->cm, b, ci);
    strategy_eval ev;
    strategy_evaluate(p->cm, ci, &ev);
    double v = ev.images_per_s;
    strategy_eval_free(&ev);
    free(ci);
    return v;
}

Test(paper, one_gpu_throughput_within_10_percent)
{
    const char *nets[] = {"alexnet", "vgg16", "inception_v3"};
    const double paper[] = {720, 175, 150};
    for (int i = 0; i < 3; i++) {
        plan *p = open_plan(nets[i], "p100-4x4", 1, 0);
        double ips = p->best_eval.images_per_s;
        cr_expect(fabs(ips / paper[i] - 1) <= 0.10, "%s: %.1f images/s on one P100, paper ~%.0f", nets[i], ips,
                  paper[i]);
        plan_free(p);
    }
}

Test(paper, sixteen_gpus_layerwise_beats_data_and_owt)
{
    const char *nets[] = {"alexnet", "vgg16", "inception_v3"};
    for (int i = 0; i < 3; i++) {
        plan *p = open_plan(nets[i], "p100-4x4", 16, 0);
        double lw = p->best_eval.images_per_s;
        double data = baseline_ips(p, BASE_DATA), model = baseline_ips(p, BASE_MODEL), owt = baseline_ips(p, BASE_OWT);
        cr_expect(lw > data, "%s: layer-wise %.0f <= data %.0f", nets[i], lw, data);
        cr_expect(lw > owt, "%s: layer-wise %.0f <= owt %.0f", nets[i], lw, owt);
        cr_expect(lw >= model, "%s: layer-wise %.0f < model %.0f", nets[i], lw, model);
        if (strcmp(nets[i], "inception_v3") == 0)
            cr_expect(model < data && model < owt, "inception: model parallelism (%.0f) is not the worst", model);
        plan_free(p);
    }
}

static const char *cfg_of(plan *p, const char *layer_name, char *buf, size_t n)
{
    int li = net_find(p->net, layer_name);
    cr_assert(li >= 0, "no layer %s", layer_name);
    config_format(&p->cm->configs[li][p->best[li]], buf, n);
    return buf;
}

Test(paper, table5_vgg16_on_4_gpus)
{
    plan *p = open_plan("vgg16", "p100-4x4", 4, 0);
    char b[32];
    /* as in the paper: blocks 1-4 on the sample dimension, fc6 and fc7 on channels over 4 */
    const char *n4[] = {"conv1_1", "conv1_1_relu", "conv1_2", "conv1_2_relu", "pool1", "conv2_1", "conv2_1_relu",
                        "conv2_2", "conv2_2_relu", "pool2", "conv3_1", "conv3_1_relu", "conv3_2", "conv3_2_relu",
                        "conv3_3", "conv3_3_relu", "pool3", "conv4_1", "conv4_1_relu", "conv4_2", "conv4_2_relu",
                        "conv4_3", "conv4_3_relu", "pool4"};
    for (size_t i = 0; i < sizeof n4 / sizeof *n4; i++) cr_expect_str_eq(cfg_of(p, n4[i], b, sizeof b), "n4", "%s", n4[i]);
    cr_expect_str_eq(cfg_of(p, "fc6", b, sizeof b), "c4");
    cr_expect_str_eq(cfg_of(p, "fc7", b, sizeof b), "c4");
    /* where this model differs: block 5 stays on n (its analytical t_c is the
     * same for n4 and h2 w2, and h2 w2 adds halo exchanges), fc8 takes c4 */
    const char *b5[] = {"conv5_1", "conv5_1_relu", "conv5_2", "conv5_2_relu", "conv5_3", "conv5_3_relu", "pool5"};
    for (int i = 0; i < 7; i++) cr_expect_str_eq(cfg_of(p, b5[i], b, sizeof b), "n4", "%s", b5[i]);
    cr_expect_str_eq(cfg_of(p, "fc8", b, sizeof b), "c4");
    /* the paper's strategy (block 5's convolutions with their ReLUs) is
     * within 2% of this optimum under this model */
    double opt = p->best_eval.total_ms;
    config hw = {{1, 1, 2, 2, 1, 1}}, c2 = {{1, 2, 1, 1, 1, 1}}, one = {{1, 1, 1, 1, 1, 1}};
    plan_pin pins[9];
    for (int i = 0; i < 7; i++) {
        int li = net_find(p->net, b5[i]);
        pins[i] = (plan_pin){li, config_find(p->cm->configs[li], p->cm->n_configs[li], &hw)};
        cr_assert(pins[i].config >= 0);
    }
    int f8 = net_find(p->net, "fc8"), pr = net_find(p->net, "prob");
    pins[7] = (plan_pin){f8, config_find(p->cm->configs[f8], p->cm->n_configs[f8], &c2)};
    pins[8] = (plan_pin){pr, config_find(p->cm->configs[pr], p->cm->n_configs[pr], &one)};
    lw_error err = {0};
    cr_assert(plan_apply(p, &(plan_change){.n_pins = 9, .pins = pins}, &err) == 0, "%s", err.msg);
    double paper = p->best_eval.total_ms;
    cr_expect(paper >= opt - 1e-9, "pinned strategy %.3f beats the optimum %.3f", paper, opt);
    cr_expect(paper <= opt * 1.02, "the paper's strategy costs %.3f ms, the optimum %.3f ms", paper, opt);
    plan_free(p);
}

/* data/doc/reproduce.md's argument about the paper's OWT figure rests on this: OWT's
 * fully-connected layers gather their inputs to every GPU and reduce the
 * input gradients back, the same traffic per byte as a parameter-server
 * sync of weights, so the model must charge both the same time per byte. */
Test(paper, owt_gather_costs_what_data_parallel_sync_costs_per_byte)
{
    plan *p = open_plan("alexnet", "p100-4x4", 16, 0);
    int *ci = calloc((size_t)p->net->n_layers, sizeof(int));
    strategy_eval dp, owt;
    strategy_baseline(p->cm, BASE_DATA, ci);
    strategy_evaluate(p->cm, ci, &dp);
    strategy_baseline(p->cm, BASE_OWT, ci);
    strategy_evaluate(p->cm, ci, &owt);
    double dp_sync_ms = 0, dp_sync_bytes = 0, fc_ms = 0, fc_bytes = 0;
    for (int i = 0; i < p->net->n_layers; i++) {
        dp_sync_ms += dp.layers[i].sync_ms;
        dp_sync_bytes += dp.layers[i].sync_bytes;
        if (p->net->layers[i].type == LT_LINEAR) {
            fc_ms += owt.layers[i].transfer_ms;
            fc_bytes += owt.layers[i].transfer_bytes;
        }
    }
    cr_assert(dp_sync_bytes > 0 && fc_bytes > 0);
    double dp_rate = dp_sync_ms / dp_sync_bytes, fc_rate = fc_ms / fc_bytes;
    cr_expect(fabs(fc_rate / dp_rate - 1) < 0.05, "per GB: OWT fc transfers %.2f ms, data-parallel sync %.2f ms",
              fc_rate * 1e9, dp_rate * 1e9);
    strategy_eval_free(&dp);
    strategy_eval_free(&owt);
    free(ci);
    plan_free(p);
}
