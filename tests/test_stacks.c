/*
 * test_stacks: software stacks (issue 34, item 2), a "stack" block or
 * --stack file apart from the GPU: its per-kernel and per-step overheads
 * and GEMM scale reach the GPU's constants only when a stack is given (a
 * cluster without one prices bit for bit as its file says), a second stack
 * replaces the first, the gradient sync runs at the stack's precision, and
 * a bad stack file is refused naming the file and line.
 */
#include "cost.h"
#include "net_json.h"
#include "plan.h"
#include "test_helpers.h"

#include <stdlib.h>
#include <string.h>

static cluster *load(const char *name)
{
    lw_error err = {0};
    cluster *c = plan_load_cluster(name, &err);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

static stack_spec stack_of(const char *json)
{
    stack_spec s;
    lw_error err = {0};
    cr_assert_eq(stack_from_json(json, strlen(json), "t.json", &s, &err), 0, "%s", err.msg);
    return s;
}

Test(stacks, none_leaves_the_gpu_constants_as_the_file_has_them)
{
    cluster *c = load("dgx-a100");
    gpu_consts k;
    cr_assert_eq(c->stack.given, 0);
    cr_assert_eq(cluster_gpu_consts(c, PREC_FP16, &k), 0);
    cr_assert(memcmp(&k, &c->gpu.prec[PREC_FP16], sizeof k) == 0, "no stack: fp16 constants as read");
    cr_assert_eq(cluster_gpu_consts(c, PREC_FP32, &k), 0);
    cr_assert_eq(k.efficiency[OPC_CONV], c->gpu.efficiency[OPC_CONV]);
    cr_assert_eq(k.kernel_overhead_us, c->gpu.kernel_overhead_us);
    cr_assert_eq(cluster_grad_sync_bytes(c), COST_GRAD_SYNC_BYTES);
    cluster_free(c);
}

Test(stacks, overheads_and_gemm_scale_apply_and_a_second_stack_replaces_the_first)
{
    cluster *c = load("dgx-a100");
    gpu_consts base, k;
    cr_assert_eq(cluster_gpu_consts(c, PREC_FP16, &base), 0);
    stack_spec a = stack_of("{\"format\": \"layerwise-stack/1\", \"name\": \"a\", \"kernel_overhead_us\": 20, "
                            "\"step_overhead_ms\": 3, \"gemm_scale\": {\"fp16\": 0.5}, \"bucket_mb\": 64}");
    cluster_set_stack(c, &a);
    cr_assert_eq(cluster_gpu_consts(c, PREC_FP16, &k), 0);
    cr_assert_eq(k.kernel_overhead_us, 20);
    cr_assert_eq(k.step_overhead_ms, 3);
    ASSERT_REL(k.efficiency[OPC_CONV], base.efficiency[OPC_CONV] * 0.5, 1e-12);
    ASSERT_REL(k.efficiency[OPC_LINEAR], base.efficiency[OPC_LINEAR] * 0.5, 1e-12);
    cr_assert_eq(k.efficiency[OPC_POOL], base.efficiency[OPC_POOL], "only GEMMs scale");
    cr_assert_eq(k.memory_efficiency, base.memory_efficiency);
    cr_assert_eq(c->coll.bucket_mb, 64);
    /* tf32 not named: scale 1, the overheads still the stack's */
    gpu_consts t;
    cr_assert_eq(cluster_gpu_consts(c, PREC_TF32, &t), 0);
    cr_assert_eq(t.efficiency[OPC_CONV], c->gpu.prec[PREC_TF32].efficiency[OPC_CONV]);
    cr_assert_eq(t.kernel_overhead_us, 20);
    /* a second stack replaces the first: the GEMM scale does not compound */
    stack_spec b = stack_of("{\"format\": \"layerwise-stack/1\", \"name\": \"b\", \"gemm_scale\": {\"fp16\": 0.5}}");
    cluster_set_stack(c, &b);
    cr_assert_eq(cluster_gpu_consts(c, PREC_FP16, &k), 0);
    ASSERT_REL(k.efficiency[OPC_CONV], base.efficiency[OPC_CONV] * 0.5, 1e-12);
    cr_assert_eq(k.kernel_overhead_us, base.kernel_overhead_us, "not given: the GPU's");
    cr_assert_eq(k.step_overhead_ms, base.step_overhead_ms);
    cluster_free(c);
}

/* Eq. 1's t_s of ResNet-50 data parallel on 8 GPUs of (a copy of) c. */
static double data_parallel_sync_ms(const cluster *c)
{
    lw_error err = {0};
    network *n = plan_load_network("resnet50", &err);
    cr_assert_not_null(n, "%s", err.msg);
    plan_settings ps = {.gpus = 8, .batch_per_gpu = 64};
    plan *p = plan_open(n, cluster_clone(c), NULL, &(plan_options){.set = ps, .unsearched = 1}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    int *cfg = lw_calloc((size_t)plan_net(p)->n_layers, sizeof *cfg);
    strategy_eval ev;
    plan_baseline(p, BASE_DATA, cfg);
    plan_evaluate(p, cfg, &ev);
    double ms = ev.sync_ms;
    strategy_eval_free(&ev);
    free(cfg);
    plan_free(p);
    return ms;
}

Test(stacks, gradient_sync_at_the_stack_precision)
{
    cluster *c = load("dgx-a100");
    lw_error err = {0};
    cr_assert_eq(cluster_set_precision(c, PREC_FP16, &err), 0, "%s", err.msg);
    stack_spec s = stack_of("{\"format\": \"layerwise-stack/1\", \"name\": \"s\", \"grad_sync\": \"training\"}");
    cluster_set_stack(c, &s);
    cr_assert_eq(cluster_grad_sync_bytes(c), 2.0, "fp16 gradients summed in fp16");
    s = stack_of("{\"format\": \"layerwise-stack/1\", \"name\": \"s\"}");
    cluster_set_stack(c, &s);
    cr_assert_eq(cluster_grad_sync_bytes(c), 4.0, "the default: fp32");
    /* t_s of data parallelism: fewer bytes with the fp16 sync */
    double t32 = data_parallel_sync_ms(c);
    s = stack_of("{\"format\": \"layerwise-stack/1\", \"name\": \"s\", \"grad_sync\": \"training\"}");
    cluster_set_stack(c, &s);
    double t16 = data_parallel_sync_ms(c);
    cr_assert_gt(t32, 0);
    cr_assert_lt(t16, t32 * 0.75, "fp16 sync %.3f ms, fp32 %.3f ms", t16, t32);
    cluster_free(c);
}

Test(stacks, every_shipped_stack_loads)
{
    const char *const *names = data_builtin_names("stacks");
    int n = 0;
    for (; names[n]; n++) {
        stack_spec s;
        lw_error err = {0};
        cr_assert_eq(plan_load_stack(names[n], &s, &err), 0, "%s: %s", names[n], err.msg);
        cr_assert_str_eq(s.name, names[n], "a stack file's name is its file's");
    }
    cr_assert_geq(n, 6);
}

Test(stacks, bad_stack_files_name_the_file_and_line)
{
    static const struct {
        const char *json, *want;
    } bad[] = {
        {"{\"format\": \"layerwise-stack/1\", \"name\": \"x\",\n \"overlap\": \"some\"}", "t.json:2: \"overlap\" must be"},
        {"{\"format\": \"layerwise-stack/1\", \"name\": \"x\",\n \"gemm_scale\": {\"fp64\": 1}}", "t.json:2: gemm_scale: unknown field \"fp64\""},
        {"{\"format\": \"layerwise-stack/1\", \"name\": \"x\",\n \"kernel_overhead_us\": -1}", "t.json:2: \"kernel_overhead_us\" must be"},
        {"{\"format\": \"layerwise-stack/1\",\n \"frame\": 1, \"name\": \"x\"}", "t.json:2: stack file: unknown field \"frame\""},
        {"{\"format\": \"layerwise-cluster/1\", \"name\": \"x\"}", "t.json:1: \"format\" must be \"layerwise-stack/1\""},
        {"{\"format\": \"layerwise-stack/1\"}", "t.json: \"name\" must be a non-empty string"},
        {"{\"format\": \"layerwise-stack/1\", \"name\": \"x\",\n \"conv_layout\": \"nchwc\"}", "t.json:2: \"conv_layout\" must be"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        stack_spec s;
        lw_error err = {0};
        cr_assert_eq(stack_from_json(bad[i].json, strlen(bad[i].json), "t.json", &s, &err), -1, "%s", bad[i].json);
        cr_assert_eq(err.code, 2);
        cr_assert(strstr(err.msg, bad[i].want), "got \"%s\", want \"%s\"", err.msg, bad[i].want);
    }
}

Test(stacks, a_cluster_block_is_read_and_a_file_block_names_its_line)
{
    lw_error err = {0};
    cluster *c = load("dgx-a100");
    cluster_free(c);
    static const char *const good =
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"t\", \"nodes\": 1, \"gpus_per_node\": 2,\n"
        " \"gpu\": {\"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 700},\n"
        " \"intra_node\": {\"bandwidth_gbs\": 20},\n"
        " \"stack\": {\"name\": \"tf\", \"framework\": \"TensorFlow\", \"kernel_overhead_us\": 30, \"overlap\": \"none\"}}";
    c = cluster_from_json(good, strlen(good), "c.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(c->stack.given, 1);
    cr_assert_str_eq(c->stack.framework, "TensorFlow");
    cr_assert_eq(c->stack.overlap, 0, "none");
    gpu_consts k;
    cr_assert_eq(cluster_gpu_consts(c, PREC_FP32, &k), 0);
    cr_assert_eq(k.kernel_overhead_us, 30);
    cluster_free(c);
    static const char *const badj =
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"t\", \"nodes\": 1, \"gpus_per_node\": 2,\n"
        " \"gpu\": {\"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 700},\n"
        " \"intra_node\": {\"bandwidth_gbs\": 20},\n"
        " \"stack\": {\"name\": \"tf\",\n \"bucket_mb\": \"big\"}}";
    c = cluster_from_json(badj, strlen(badj), "c.json", &err);
    cr_assert_null(c);
    cr_assert(strstr(err.msg, "c.json:5: \"stack.bucket_mb\" must be"), "%s", err.msg);
}

/* Trust marks (issue 36, item 4): each GPU constant says whether it was
 * fitted, a datasheet figure, derived, copied from another GPU or assumed;
 * a precision block inherits the trust of the constants it inherits, and a
 * constant it gives without saying is unknown. */
Test(trust, provenance_per_precision_and_inherited)
{
    cluster *c = load("dgx-a100");
    cr_assert_eq(cluster_const_trust(c, PREC_TF32, GC_GEMM), TRUST_FITTED);
    cr_assert_eq(cluster_const_trust(c, PREC_BF16, GC_GEMM), TRUST_DERIVED);
    cr_assert_eq(cluster_const_trust(c, PREC_FP32, GC_GEMM), TRUST_COPIED, "the V100's");
    cr_assert_eq(cluster_const_trust(c, PREC_FP16, GC_PEAK), TRUST_DATASHEET);
    cr_assert_eq(cluster_const_trust(c, PREC_FP16, GC_KERNEL), TRUST_COPIED, "inherited from fp32");
    cr_assert(trust_unfitted(TRUST_DERIVED) && trust_unfitted(TRUST_COPIED) && !trust_unfitted(TRUST_FITTED) &&
              !trust_unfitted(TRUST_DATASHEET) && !trust_unfitted(TRUST_UNKNOWN));
    cr_assert_str_eq(trust_name(TRUST_COPIED), "copied");
    cluster_free(c);
    c = load("p100-4x4");
    cr_assert_eq(cluster_const_trust(c, PREC_FP32, GC_STEP), TRUST_FITTED);
    cr_assert_eq(cluster_const_trust(c, PREC_FP16, GC_GEMM), TRUST_UNKNOWN, "no fp16 figures");
    cluster_free(c);
    static const char *const base =
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"t\", \"nodes\": 1, \"gpus_per_node\": 2,\n"
        " \"gpu\": {\"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 700,\n"
        "  \"provenance\": {\"efficiency\": \"fitted\", \"kernel_overhead_us\": \"assumed\"},\n"
        "  \"precisions\": {\"fp16\": {\"peak_tflops\": 40, \"efficiency\": {\"conv\": 0.5}}}},\n"
        " \"intra_node\": {\"bandwidth_gbs\": 20}}";
    lw_error err = {0};
    c = cluster_from_json(base, strlen(base), "c.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(cluster_const_trust(c, PREC_FP16, GC_GEMM), TRUST_UNKNOWN, "given without a provenance");
    cr_assert_eq(cluster_const_trust(c, PREC_FP16, GC_KERNEL), TRUST_ASSUMED, "inherited");
    cluster_free(c);
    static const char *const bad =
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"t\", \"nodes\": 1, \"gpus_per_node\": 2,\n"
        " \"gpu\": {\"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 700,\n"
        "  \"provenance\": {\"efficiency\": \"guessed\"}},\n"
        " \"intra_node\": {\"bandwidth_gbs\": 20}}";
    c = cluster_from_json(bad, strlen(bad), "c.json", &err);
    cr_assert_null(c);
    cr_assert(strstr(err.msg, "c.json:3: gpu.provenance.efficiency must be \"fitted\""), "%s", err.msg);
}

/* "conv_layout": "nchw" (Lambda's runs: PyTorch's default memory format,
 * no --memory-format nhwc): an fp16 convolution pays layout transposes
 * around cuDNN's NHWC Tensor Core kernels, its input and output read and
 * written once forward and twice backward, each a kernel; tf32 and a
 * stack without the key price as before. By hand: batch 32, 64 channels
 * of 56 x 56 in and out, 2 bytes: 12.85 MB each way. */
static double conv_t_c(const cluster *c)
{
    static const char *const net =
        "{\"format\": \"layerwise-net/1\", \"name\": \"one\","
        " \"input\": {\"name\": \"data\", \"channels\": 64, \"height\": 56, \"width\": 56},"
        " \"layers\": [{\"name\": \"conv\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 64,"
        " \"kernel\": 3, \"padding\": 1}]}";
    lw_error err = {0};
    network *n = net_from_json(net, strlen(net), "one.json", &err);
    cr_assert_not_null(n, "%s", err.msg);
    cost_model *m = cost_model_build(n, c, NULL, 1, 32, &err);
    cr_assert_not_null(m, "%s", err.msg);
    config one = {.deg = {1, 1, 1, 1, 1, 1}};
    double t = cost_t_c(m, net_find(n, "conv"), &one, NULL);
    cost_model_free(m);
    net_free(n);
    return t;
}

Test(stacks, nchw_layout_transposes_around_fp16_convolutions)
{
    cluster *c = load("dgx-a100");
    lw_error err = {0};
    stack_spec nhwc = stack_of("{\"format\": \"layerwise-stack/1\", \"name\": \"a\"}");
    stack_spec nchw = stack_of("{\"format\": \"layerwise-stack/1\", \"name\": \"b\", \"conv_layout\": \"nchw\"}");
    cr_assert_eq(nhwc.conv_nchw, 0, "the default: NHWC, as NVIDIA's AMP runs");
    cr_assert_eq(nchw.conv_nchw, 1);
    cr_assert_eq(cluster_set_precision(c, PREC_FP16, &err), 0, "%s", err.msg);
    cluster_set_stack(c, &nhwc);
    double base = conv_t_c(c);
    cluster_set_stack(c, &nchw);
    double with = conv_t_c(c);
    gpu_consts k;
    cr_assert_eq(cluster_gpu_consts(c, PREC_FP16, &k), 0);
    const double bytes = 32.0 * 64 * 56 * 56 * 2; /* each of input and output */
    const double one_way = 2 * (bytes + bytes) / (c->gpu.memory_bandwidth_gbs * 1e9 * k.memory_efficiency) * 1e3;
    ASSERT_REL(with - base, 3 * one_way + 6 * k.kernel_overhead_us * 1e-3, 1e-9);
    /* tf32: 4-byte tensors the Tensor Core kernels read as they are here */
    cr_assert_eq(cluster_set_precision(c, PREC_TF32, &err), 0, "%s", err.msg);
    double t32 = conv_t_c(c);
    cluster_set_stack(c, &nhwc);
    cr_assert_eq(conv_t_c(c), t32);
    cluster_free(c);
}
