/*
 * What a step achieves (issue 32 item 6): model FLOPs per step, TFLOPS per
 * GPU and MFU in strategy_eval and in the strategy and sim documents, each
 * throughput figure with the model that made it ("estimator").
 */
#include <criterion/criterion.h>

#include "plan.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "sim.h"
#include "test_helpers.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void use_this_trees_data(void)
{
    setenv("LAYERWISE_DATA", "data", 0);
}

static const cJSON *item(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    cr_assert_not_null(v, "JSON lacks \"%s\"", k);
    return v;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = item(o, k);
    cr_assert(cJSON_IsNumber(v), "\"%s\" is not a number", k);
    return v->valuedouble;
}

/* LeNet-5 as shipped (28x28 input, conv1 padded by 2), counted by hand, 2
 * per multiply-add: conv1 6x28x28 outputs of 1x5x5, conv2 16x10x10 of 6x5x5,
 * fc1 400 -> 120, fc2 120 -> 84, fc3 84 -> 10; pooling and softmax are not
 * model FLOPs. */
#define LENET5_FWD_FLOPS (2.0 * (6 * 28 * 28 * 25 + 16 * 10 * 10 * 150 + 400 * 120 + 120 * 84 + 84 * 10))

Test(throughput, lenet5_model_flops_tflops_and_mfu)
{
    plan *p = open_plan("lenet5", "p100-4x4", 4, 0);
    const cost_model *m = p->cm;
    cr_assert_eq(LENET5_FWD_FLOPS, 833040.0);
    ASSERT_REL(strategy_model_flops_per_step(m), 3.0 * (double)p->batch * LENET5_FWD_FLOPS, 1e-12);
    int *ci = calloc((size_t)m->n_layers, sizeof(int));
    for (int b = 0; b < BASE__COUNT; b++) {
        strategy_baseline(m, (baseline_kind)b, ci);
        strategy_eval ev;
        strategy_evaluate(m, ci, &ev);
        /* the same work whatever the strategy */
        ASSERT_REL(ev.model_flops_per_step, 3.0 * (double)p->batch * LENET5_FWD_FLOPS, 1e-12);
        double tf = ev.model_flops_per_step / (ev.total_ms * 1e-3) / ev.gpus_used / 1e12;
        ASSERT_REL(ev.tflops_per_gpu, tf, 1e-12);
        /* the P100's fp32 peak, 10.6 TFLOPS (data/clusters/p100-4x4.json) */
        ASSERT_REL(ev.mfu, tf / 10.6, 1e-12);
        ASSERT_REL(strategy_eval_mfu(&ev), ev.mfu, 0);
        cr_assert(ev.mfu > 0 && ev.mfu < 1, "%s: MFU %g", baseline_name((baseline_kind)b), ev.mfu);
        strategy_eval_free(&ev);
    }
    free(ci);
    plan_free(p);
}

/* MFU is against the dense peak of the precision in use: the H100's bf16
 * Tensor Core 989.4 TFLOPS, not its fp32 67. */
Test(throughput, mfu_against_the_precisions_dense_peak)
{
    lw_error err = {0};
    network *n = plan_load_network("alexnet", &err);
    cluster *c = plan_load_cluster("h100-8x8", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(cluster_set_precision(c, PREC_BF16, &err), 0, "%s", err.msg);
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = (plan_settings){.gpus = 8}, .unsearched = 1}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    int *ci = calloc((size_t)p->net->n_layers, sizeof(int));
    strategy_baseline(p->cm, BASE_DATA, ci);
    strategy_eval ev;
    strategy_evaluate(p->cm, ci, &ev);
    ASSERT_REL(ev.mfu, ev.tflops_per_gpu / 989.4, 1e-12);
    double tf, mfu;
    strategy_achieved(p->cm, ev.total_ms / 2, ev.gpus_used, &tf, &mfu);
    ASSERT_REL(tf, 2 * ev.tflops_per_gpu, 1e-12);
    strategy_achieved(p->cm, 0, ev.gpus_used, &tf, &mfu);
    cr_assert(tf == 0 && mfu == 0, "no step, no figures");
    strategy_eval_free(&ev);
    free(ci);
    plan_free(p);
}

/* The strategy document carries "estimator": "eq1" and the three figures of
 * its Eq. 1 step; the sim document "simulated" and those of its simulated
 * step. */
Test(throughput, strategy_and_sim_documents)
{
    plan *p = open_plan("alexnet", "p100-4x4", 4, 0);
    char *doc = strategy_to_json(p->cm, p->best, &p->best_eval, "elimination", -1, NULL);
    cJSON *root = cJSON_Parse(doc);
    cr_assert_str_eq(item(root, "estimator")->valuestring, "eq1");
    ASSERT_REL(num(root, "model_flops_per_step"), p->best_eval.model_flops_per_step, 1e-12);
    ASSERT_REL(num(root, "tflops_per_gpu"), p->best_eval.tflops_per_gpu, 1e-12);
    ASSERT_REL(num(root, "mfu"), p->best_eval.mfu, 1e-12);
    ASSERT_REL(num(root, "tflops_per_gpu"),
               num(root, "model_flops_per_step") / (num(root, "total_ms") * 1e-3) / num(root, "gpus_used") / 1e12, 1e-12);
    cJSON_Delete(root);
    free(doc);

    sim_result *s = sim_run(p->cm, p->best, NULL);
    doc = sim_to_json(s, p->cm, "optimum");
    root = cJSON_Parse(doc);
    cr_assert_str_eq(item(root, "estimator")->valuestring, "simulated");
    ASSERT_REL(num(root, "model_flops_per_step"), p->best_eval.model_flops_per_step, 1e-12);
    double tf = p->best_eval.model_flops_per_step / (s->step_ms * 1e-3) / s->gpus_used / 1e12;
    ASSERT_REL(num(root, "tflops_per_gpu"), tf, 1e-12);
    ASSERT_REL(num(root, "mfu"), tf / 10.6, 1e-12);
    cJSON_Delete(root);
    free(doc);
    sim_free(s);
    plan_free(p);
}

/* A GPT's model FLOPs per step are Narayanan et al.'s (2021, arXiv
 * 2104.04473) count without recompute, 72 B s l h^2 (1 + s/(6h) + V/(12 l h))
 * (see /work/shared/transformer-notes.md): tests/fixtures/nets/tiny_gpt.json
 * has l = 2 blocks, h = 64, s = 32, V = 512; its LM head tied. */
Test(throughput, gpt_model_flops_are_narayanans)
{
    plan *p = open_plan("tests/fixtures/nets/tiny_gpt.json", "p100-4x4", 4, 0);
    double B = (double)p->batch, s = 32, l = 2, h = 64, V = 512;
    double want = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    ASSERT_REL(strategy_model_flops_per_step(p->cm), want, 1e-12);
    ASSERT_REL(p->best_eval.model_flops_per_step, want, 1e-12);
    ASSERT_REL(p->best_eval.tflops_per_gpu, want / (p->best_eval.total_ms * 1e-3) / p->best_eval.gpus_used / 1e12,
               1e-12);
    plan_free(p);
}
