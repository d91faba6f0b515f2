/*
 * Megatron-LM's plan as a baseline (issue 32 item 4): its configs per
 * layer, its refusals, its place inside the search's space, and its round
 * trip through a strategy file.
 */
#include <criterion/criterion.h>

#include "diff.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "plan.h"
#include "test_helpers.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GPT "tests/fixtures/nets/tiny_gpt.json"

__attribute__((constructor)) static void use_this_trees_data(void)
{
    setenv("LAYERWISE_DATA", "data", 0);
}

/* The config of layer `name` in strategy ci, in the text form ("n2 c4"). */
static const char *cfg_of(const plan *p, const int *ci, const char *name, char *buf, size_t n)
{
    int li = net_find(p->net, name);
    cr_assert(li >= 0, "%s", name);
    config_format_layer(&p->net->layers[li], &p->cm->configs[li][ci[li]], buf, n);
    return buf;
}

static void expect_cfg(const plan *p, const int *ci, const char *name, const char *want)
{
    char buf[64];
    cr_assert_str_eq(cfg_of(p, ci, name, buf, sizeof buf), want, "%s", name);
}

/* 8 GPUs, T = 4: data parallel 2 outside, r and x innermost (configs.h) so
 * that each tensor-parallel group is 4 consecutive GPUs. */
Test(megatron, configs_per_layer_without_and_with_sp)
{
    plan *p = open_plan(GPT, "p100-4x4", 8, 0);
    int *ci = calloc((size_t)p->net->n_layers, sizeof(int));
    lw_error err = {0};
    megatron_options mo = {.tp = 4};
    cr_assert_eq(strategy_megatron(p->cm, &mo, ci, &err), 0, "%s", err.msg);
    static const char *const want[][2] = {
        {"tokens", "n2 s4"},      {"embed", "n2 r4"},       {"block0.ln1", "n2 x4"}, {"block0.attn", "n2 c4"},
        {"block0.proj", "n2 r4"}, {"block0.drop1", "n2 x4"}, {"block0.add1", "n2 x4"}, {"block0.ln2", "n2 x4"},
        {"block0.fc1", "n2 c4"},  {"block0.gelu", "n2 c4"},  {"block0.fc2", "n2 r4"}, {"block0.drop2", "n2 x4"},
        {"block0.add2", "n2 x4"}, {"block1.attn", "n2 c4"},  {"block1.fc2", "n2 r4"}, {"ln_f", "n2 x4"},
        {"lm_head", "n2 c4"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) expect_cfg(p, ci, want[i][0], want[i][1]);
    /* every layer uses all 8 GPUs */
    for (int i = 0; i < p->net->n_layers; i++) cr_assert_eq(config_tasks(&p->cm->configs[i][ci[i]]), 8);
    /* sequence parallelism: the replicated layers split by sequence instead */
    mo.sp = 1;
    cr_assert_eq(strategy_megatron(p->cm, &mo, ci, &err), 0, "%s", err.msg);
    static const char *const sp[][2] = {
        {"block0.ln1", "n2 s4"}, {"block0.attn", "n2 c4"}, {"block0.proj", "n2 r4"}, {"block0.drop1", "n2 s4"},
        {"block0.add1", "n2 s4"}, {"block0.gelu", "n2 c4"}, {"block0.drop2", "n2 s4"}, {"ln_f", "n2 s4"},
        {"lm_head", "n2 c4"},    {"embed", "n2 r4"},
    };
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) expect_cfg(p, ci, sp[i][0], sp[i][1]);
    /* T = 1 is data parallelism over all 8 */
    mo = (megatron_options){.tp = 1};
    cr_assert_eq(strategy_megatron(p->cm, &mo, ci, &err), 0, "%s", err.msg);
    expect_cfg(p, ci, "block0.fc2", "n8");
    expect_cfg(p, ci, "block0.ln1", "n8");
    free(ci);
    plan_free(p);
}

static void expect_refused(plan *p, megatron_options mo, const char *needle)
{
    int *ci = calloc((size_t)p->net->n_layers, sizeof(int));
    lw_error err = {0};
    cr_assert_neq(strategy_megatron(p->cm, &mo, ci, &err), 0, "tp %d refused", mo.tp);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, needle), "\"%s\" in: %s", needle, err.msg);
    free(ci);
}

Test(megatron, refusals)
{
    plan *p = open_plan(GPT, "h100-8x8", 16, 0);
    expect_refused(p, (megatron_options){.tp = 3}, "power of two");
    expect_refused(p, (megatron_options){.tp = 8}, "does not divide the 4 heads of attention layer \"block0.attn\"");
    expect_refused(p, (megatron_options){.tp = 32}, "more than the 16 GPUs");
    plan_free(p);
    p = open_plan(GPT, "p100-4x4", 12, 0);
    expect_refused(p, (megatron_options){.tp = 16}, "more than the 8 GPUs a plan of powers of two uses of 12");
    plan_free(p);
    p = open_plan("lenet5", "p100-4x4", 4, 0);
    expect_refused(p, (megatron_options){0}, "no transformer layers");
    cr_assert_not(strategy_megatron_applies(p->net));
    plan_free(p);
}

/* The default T: the GPUs per node, capped by the GPU count, halved until
 * it divides the heads (tiny_gpt has 4). */
Test(megatron, default_tensor_parallel_degree)
{
    plan *p = open_plan(GPT, "p100-4x4", 2, 0);
    cr_assert_eq(strategy_megatron_default_tp(p->cm), 2);
    plan_free(p);
    p = open_plan(GPT, "p100-4x4", 16, 0);
    cr_assert_eq(strategy_megatron_default_tp(p->cm), 4);
    plan_free(p);
    p = open_plan(GPT, "h100-8x8", 8, 0);
    cr_assert_eq(strategy_megatron_default_tp(p->cm), 4, "8 per node, 4 heads");
    int *ci = calloc((size_t)p->net->n_layers, sizeof(int));
    lw_error err = {0};
    cr_assert_eq(strategy_megatron(p->cm, NULL, ci, &err), 0, "%s", err.msg);
    expect_cfg(p, ci, "block1.attn", "n2 c4");
    free(ci);
    plan_free(p);
}

/* Megatron's plan lies in the search's space: the optimum is never worse
 * under the same model (with and without sequence parallelism, several
 * GPU counts and degrees). */
Test(megatron, the_optimum_is_never_worse)
{
    static const struct {
        const char *cl;
        int gpus, tp;
    } cases[] = {{"p100-4x4", 2, 2}, {"p100-4x4", 4, 4}, {"p100-4x4", 4, 2}, {"p100-4x4", 8, 4}, {"h100-8x8", 8, 4}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        plan *p = open_plan(GPT, cases[k].cl, cases[k].gpus, 0);
        int *ci = calloc((size_t)p->net->n_layers, sizeof(int));
        for (int sp = 0; sp < 2; sp++) {
            lw_error err = {0};
            megatron_options mo = {.tp = cases[k].tp, .sp = sp};
            cr_assert_eq(strategy_megatron(p->cm, &mo, ci, &err), 0, "%s", err.msg);
            strategy_eval ev;
            strategy_evaluate(p->cm, ci, &ev);
            cr_assert(p->best_eval.total_ms <= ev.total_ms * (1 + 1e-12), "%s %d GPUs tp %d sp %d: optimum %.6f > megatron %.6f",
                      cases[k].cl, cases[k].gpus, cases[k].tp, sp, p->best_eval.total_ms, ev.total_ms);
            /* and the tables' sum is the evaluation's */
            cost_graph *g = cost_model_graph(p->cm);
            ASSERT_REL(cg_evaluate(g, ci), ev.total_ms, 1e-9);
            cg_free(g);
            strategy_eval_free(&ev);
        }
        free(ci);
        plan_free(p);
    }
}

/* Written as a strategy file and read back, the plan is the same configs
 * and the same document; strategy_pick_with takes "megatron". */
Test(megatron, a_strategy_file_round_trip)
{
    plan *p = open_plan(GPT, "p100-4x4", 8, 0);
    int L = p->net->n_layers;
    int *ci = calloc((size_t)L, sizeof(int)), *back = calloc((size_t)L, sizeof(int));
    lw_error err = {0};
    megatron_options mo = {.tp = 4, .sp = 1};
    cr_assert_eq(strategy_pick_with(p, "megatron", &mo, ci, &err), 0, "%s", err.msg);
    cr_assert(strategy_is_builtin("megatron") && !strategy_is_builtin("megatron.json"));
    strategy_eval ev;
    strategy_evaluate(p->cm, ci, &ev);
    char *doc = strategy_to_json(p->cm, ci, &ev, "megatron", -1, NULL);
    cr_assert_eq(strategy_from_json(p->cm, doc, strlen(doc), "megatron.json", back, &err), 0, "%s", err.msg);
    cr_assert_eq(memcmp(ci, back, sizeof(int) * (size_t)L), 0);
    strategy_eval ev2;
    strategy_evaluate(p->cm, back, &ev2);
    char *doc2 = strategy_to_json(p->cm, back, &ev2, "megatron", -1, NULL);
    cr_assert_str_eq(doc, doc2);
    free(doc);
    free(doc2);
    strategy_eval_free(&ev);
    strategy_eval_free(&ev2);
    free(ci);
    free(back);
    plan_free(p);
}

/* Megatron's bytes: with T > 1 and no --sp, each block moves 4
 * collectives of b·s·h (issue 32's "How we will know"): forward the
 * all-reduces after the output projection and fc2, backward those of QKV's
 * and fc1's input gradients. A ring all-reduce of P bytes over T GPUs moves
 * 2 (T - 1) P between GPUs; each of the N data-parallel groups reduces its
 * own B / N samples, so a block moves 4 x 2 (T - 1) x B s h e in all, and
 * takes 4 all-reduces' time (the groups run at once). Sequence parallelism
 * moves the same bytes as reduce-scatters and all-gathers. Block 1 of
 * tiny_gpt (h = 64, s = 32): every edge into its layers comes from block 0
 * or block 1, so no embedding's collective is counted. */
static void block_bytes(const char *cl, int gpus, int tp, int sp)
{
    plan *p = open_plan(GPT, cl, gpus, 0);
    const cost_model *m = p->cm;
    int *ci = calloc((size_t)p->net->n_layers, sizeof(int));
    lw_error err = {0};
    megatron_options mo = {.tp = tp, .sp = sp};
    cr_assert_eq(strategy_megatron(m, &mo, ci, &err), 0, "%s", err.msg);
    strategy_eval ev;
    strategy_evaluate(m, ci, &ev);
    double bytes = 0, ms = 0;
    for (int i = 0; i < p->net->n_layers; i++) {
        const char *name = p->net->layers[i].name;
        if (strncmp(name, "block1.", 7) != 0) continue;
        bytes += ev.layers[i].transfer_bytes;
        /* the forward all-reduces are the edges into the dropouts (a
         * reduce-scatter and an all-gather), the backward ones those into
         * QKV and fc1 (one ring all-reduce): all an all-reduce's time */
        ms += ev.layers[i].transfer_ms;
    }
    const double B = (double)p->batch, s = 32, h = 64, N = gpus / tp;
    const double piece = B / N * s * h * m->elem_bytes;
    ASSERT_REL(bytes, 4 * 2.0 * (tp - 1) * B * s * h * m->elem_bytes, 1e-12);
    if (!sp) {
        int ring[64];
        for (int k = 0; k < tp; k++) ring[k] = k;
        cost_ring_order(p->cl, ring, tp);
        ASSERT_REL(ms, 4 * 1e3 * cost_allreduce_s(p->cl, ring, tp, piece), 1e-12);
    }
    strategy_eval_free(&ev);
    free(ci);
    plan_free(p);
}

Test(megatron, four_collectives_of_bsh_per_block)
{
    block_bytes("p100-4x4", 4, 4, 0);
    block_bytes("p100-4x4", 8, 4, 0);
    block_bytes("p100-4x4", 4, 2, 0);
    block_bytes("h100-8x8", 8, 8 / 2, 0);
}

Test(megatron, sequence_parallel_moves_the_same_bytes)
{
    block_bytes("p100-4x4", 4, 4, 1);
    block_bytes("p100-4x4", 8, 4, 1);
}
