/*
 * Precision and collectives: the cluster fields that carry them (old files
 * still load), --precision's effect on t_c, t_x and t_s, and ring
 * all-reduce as NCCL runs it (ring order, latency per call and per step,
 * gradient buckets, NICs). Every expected figure is worked out by hand in
 * the comment beside it.
 */
#include <criterion/criterion.h>

#include "cost.h"
#include "net_json.h"
#include "plan.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */

#include <math.h>
#include <stdio.h>
#include <string.h>

#define REL_EQ(a, b, tol) (fabs((a) - (b)) <= (tol) * fmax(fabs(a), fabs(b)) + 1e-300)
#define ASSERT_REL(a, b, tol)                                                                                      \
    cr_assert(REL_EQ((double)(a), (double)(b), tol), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

static config C(int n, int c, int h, int w)
{
    config x = {{n, c, h, w, 1, 1}};
    return x;
}

static network *net_str(const char *json)
{
    lw_error err = {0};
    network *n = net_from_json(json, strlen(json), "inline.json", &err);
    cr_assert_not_null(n, "%s", err.msg);
    return n;
}

static cluster *cluster_str(const char *json)
{
    lw_error err = {0};
    cluster *c = cluster_from_json(json, strlen(json), "inline-cluster.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

static int cluster_error(const char *json, const char *want)
{
    lw_error err = {0};
    cluster *c = cluster_from_json(json, strlen(json), "bad.json", &err);
    cr_assert_null(c, "accepted: %s", json);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, want), "message \"%s\" lacks \"%s\"", err.msg, want);
    cr_assert(strstr(err.msg, "bad.json"), "message \"%s\" does not name the file", err.msg);
    return 0;
}

static cost_model *build(const network *n, const cluster *c, int gpus, long batch)
{
    lw_error err = {0};
    cost_model *m = cost_model_build(n, c, NULL, gpus, batch, &err);
    cr_assert_not_null(m, "%s", err.msg);
    return m;
}

/* 1000 -> 1000 fully-connected: 1 001 000 parameters. */
static const char *fc_net =
    "{\"format\": \"layerwise-net/1\", \"name\": \"fc\","
    " \"input\": {\"name\": \"data\", \"channels\": 1000, \"height\": 1, \"width\": 1},"
    " \"layers\": [{\"name\": \"fc\", \"type\": \"linear\", \"inputs\": [\"data\"], \"out_features\": 1000}]}";

/* One node of 4 GPUs at 10 GB/s; an fp32 GPU of 10 TFLOPS with linear
 * efficiency 0.5 and a tf32 set of 80 TFLOPS at 0.25; no kernel overhead,
 * no saturation, memory so fast it never bounds. Collectives as given. */
static cluster *fc_cluster(const char *sync, const char *prec, const char *coll)
{
    char t[2048];
    snprintf(t, sizeof t,
             "{\"format\": \"layerwise-cluster/1\", \"name\": \"pc\", \"nodes\": 1, \"gpus_per_node\": 4,"
             " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 1e6,"
             "  \"efficiency\": {\"linear\": 0.5}, \"kernel_overhead_us\": 0, \"saturation_gflop\": 0,"
             "  \"precisions\": {\"tf32\": {\"peak_tflops\": 80, \"efficiency\": {\"linear\": 0.25}},"
             "                   \"fp16\": {\"peak_tflops\": 160}}},"
             " \"intra_node\": {\"bandwidth_gbs\": 10, \"latency_us\": 5},"
             " \"inter_node\": {\"bandwidth_gbs\": 1, \"latency_us\": 5, \"nics_per_node\": 1},"
             " %s%s%s \"sync\": \"%s\"}",
             prec ? "\"precision\": \"" : "", prec ? prec : "", prec ? "\"," : "", sync);
    /* the collectives object, if any, goes in front of "sync" */
    if (coll) {
        char u[2048];
        char *at = strstr(t, " \"sync\"");
        snprintf(u, sizeof u, "%.*s \"collectives\": %s, %s", (int)(at - t), t, coll, at);
        snprintf(t, sizeof t, "%s", u);
    }
    return cluster_str(t);
}

/* ---- cluster fields ---- */

Test(precision, names_round_trip_and_element_sizes)
{
    for (int p = 0; p < PREC__COUNT; p++) cr_assert_eq(precision_from_name(precision_name((precision)p)), p);
    cr_assert_eq(precision_from_name("fp8"), -1);
    cr_assert_eq(precision_from_name("FP32"), -1);
    cr_assert_eq(precision_elem_bytes(PREC_FP32), 4);
    cr_assert_eq(precision_elem_bytes(PREC_TF32), 4);
    cr_assert_eq(precision_elem_bytes(PREC_FP16), 2);
    cr_assert_eq(precision_elem_bytes(PREC_BF16), 2);
}

/* A file of the first round (no precisions, precision or collectives)
 * loads as fp32 at its peak_tflops, with NCCL's ring/Simple latencies and
 * a 25 MiB bucket. */
Test(precision, old_files_load_with_the_documented_defaults)
{
    cluster *c = cluster_str(
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"old\", \"nodes\": 1, \"gpus_per_node\": 2,"
        " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 12.5, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
        " \"intra_node\": {\"bandwidth_gbs\": 10}}");
    cr_assert_eq(c->precision, PREC_FP32);
    gpu_consts k;
    cr_assert_eq(cluster_gpu_consts(c, PREC_FP32, &k), 0);
    cr_assert_eq(k.peak_tflops, 12.5);
    for (int p = 1; p < PREC__COUNT; p++) cr_assert_eq(cluster_gpu_consts(c, (precision)p, &k), -1);
    cr_assert_eq(c->coll.call_latency_us, 8.4);
    cr_assert_eq(c->coll.intra_step_us, 3.4);
    cr_assert_eq(c->coll.inter_step_us, 9.6);
    cr_assert_eq(c->coll.bucket_mb, 25);
    lw_error err = {0};
    cr_assert_eq(cluster_set_precision(c, PREC_TF32, &err), -1);
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "tf32") && strstr(err.msg, "it has fp32"), "%s", err.msg);
    cr_assert_eq(c->precision, PREC_FP32);
    cluster_free(c);
}

/* A precision's block inherits every constant it does not give from fp32. */
Test(precision, blocks_inherit_from_fp32)
{
    cluster *c = fc_cluster("ring-allreduce", "tf32", NULL);
    cr_assert_eq(c->precision, PREC_TF32);
    gpu_consts k;
    cr_assert_eq(cluster_gpu_consts(c, PREC_TF32, &k), 0);
    cr_assert_eq(k.peak_tflops, 80);
    cr_assert_eq(k.efficiency[OPC_LINEAR], 0.25);
    cr_assert_eq(k.efficiency[OPC_CONV], c->gpu.efficiency[OPC_CONV]);
    cr_assert_eq(k.kernel_overhead_us, 0);
    cr_assert_eq(cluster_gpu_consts(c, PREC_FP16, &k), 0);
    cr_assert_eq(k.peak_tflops, 160);
    cr_assert_eq(k.efficiency[OPC_LINEAR], 0.5);
    cr_assert_eq(cluster_gpu_consts(c, PREC_BF16, &k), -1);
    /* clones keep them; a different precision is a different cluster */
    cluster *d = cluster_clone(c);
    cr_assert(cluster_equal(c, d));
    lw_error err = {0};
    cr_assert_eq(cluster_set_precision(d, PREC_FP16, &err), 0, "%s", err.msg);
    cr_assert_not(cluster_equal(c, d));
    cluster_free(d);
    cluster_free(c);
}

#define GPU_OK "\"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500"
#define HEAD "{\"format\": \"layerwise-cluster/1\", \"name\": \"b\", \"nodes\": 1, \"gpus_per_node\": 2, "
#define LINKS ", \"intra_node\": {\"bandwidth_gbs\": 10}"

Test(precision, bad_fields_are_refused_with_the_place)
{
    cluster_error(HEAD GPU_OK "}" LINKS ", \"precision\": \"fp8\"}", "\"precision\" must be");
    cluster_error(HEAD GPU_OK "}" LINKS ", \"precision\": 16}", "\"precision\" must be");
    cluster_error(HEAD GPU_OK "}" LINKS ", \"precision\": \"bf16\"}", "gives no figures");
    cluster_error(HEAD GPU_OK ", \"precisions\": {\"fp8\": {\"peak_tflops\": 1}}}" LINKS "}", "unknown precision");
    cluster_error(HEAD GPU_OK ", \"precisions\": {\"fp32\": {\"peak_tflops\": 1}}}" LINKS "}", "gpu's own fields");
    cluster_error(HEAD GPU_OK ", \"precisions\": {\"tf32\": {}}}" LINKS "}", "peak_tflops");
    cluster_error(HEAD GPU_OK ", \"precisions\": {\"tf32\": {\"peak_tflops\": -3}}}" LINKS "}", "peak_tflops");
    cluster_error(HEAD GPU_OK ", \"precisions\": {\"tf32\": {\"peak_tflops\": 3, \"speed\": 1}}}" LINKS "}",
                  "unknown field \"speed\"");
    cluster_error(HEAD GPU_OK ", \"precisions\": {\"tf32\": {\"peak_tflops\": 3, \"efficiency\": {\"conv\": 2}}}}" LINKS
                  "}", "gpu.precisions.tf32.efficiency.conv");
    cluster_error(HEAD GPU_OK ", \"precisions\": [1]}" LINKS "}", "gpu.precisions");
    cluster_error(HEAD GPU_OK "}" LINKS ", \"collectives\": {\"bucket_mb\": -1}}", "collectives.bucket_mb");
    cluster_error(HEAD GPU_OK "}" LINKS ", \"collectives\": {\"alpha\": 1}}", "unknown field \"alpha\"");
    cluster_error(HEAD GPU_OK "}" LINKS ", \"collectives\": 3}", "collectives");
}

/* ---- precision in the cost model ---- */

/* fc at batch 8 on one GPU: forward 2 x 8 x 1000 x 1000 = 1.6e7 flops,
 * backward twice that: 4.8e7 flops. fp32: 4.8e7 / (10e12 x 0.5) s =
 * 9.6e-3 ms; tf32: 4.8e7 / (80e12 x 0.25) s = 2.4e-3 ms; fp16 (linear
 * efficiency inherited, 0.5): 4.8e7 / 80e12 s = 6e-4 ms. The memory side
 * (a few MB at 1e6 GB/s) stays far below. */
Test(precision, t_c_uses_the_precision_peak_and_efficiency)
{
    network *n = net_str(fc_net);
    const char *precs[] = {"fp32", "tf32", "fp16"};
    const double want[] = {9.6e-3, 2.4e-3, 6e-4};
    for (int i = 0; i < 3; i++) {
        cluster *c = fc_cluster("ring-allreduce", precs[i], NULL);
        cost_model *m = build(n, c, 1, 8);
        config one = C(1, 1, 1, 1);
        ASSERT_REL(cost_t_c(m, 1, &one, NULL), want[i], 1e-3);
        cr_assert_eq(m->prec, (precision)precision_from_name(precs[i]));
        cost_model_free(m);
        cluster_free(c);
    }
    net_free(n);
}

/* fp16 moves 2-byte activations and their gradients between GPUs: t_x and
 * its bytes halve. The weight gradients are synced in fp32 at every
 * precision (COST_GRAD_SYNC_BYTES: PyTorch DDP, Horovod and Megatron sum
 * mixed precision's fp32 gradients, issue 34): t_s does not change. */
Test(precision, fp16_halves_transfers_and_syncs_fp32_gradients)
{
    network *n = net_str(fc_net);
    const char *nolat = "{\"call_latency_us\": 0, \"intra_step_us\": 0, \"inter_step_us\": 0}";
    cluster *c32 = fc_cluster("ring-allreduce", "fp32", nolat), *c16 = fc_cluster("ring-allreduce", "fp16", nolat);
    cost_model *m32 = build(n, c32, 4, 8), *m16 = build(n, c16, 4, 8);
    cr_assert_eq(m32->elem_bytes, 4);
    cr_assert_eq(m16->elem_bytes, 2);
    config n4 = C(4, 1, 1, 1);
    double b32, b16;
    /* ring of 4 over 10 GB/s, 1 001 000 x 4 B: 6 steps of a quarter:
     * 6 x 1 001 000 / 1e10 s = 0.6006 ms, in fp16 too (fp32 gradients) */
    ASSERT_REL(cost_t_s(m32, 1, &n4, &b32), 0.6006, 1e-9);
    ASSERT_REL(cost_t_s(m16, 1, &n4, &b16), 0.6006, 1e-9);
    cr_assert_eq(b32, b16);
    /* data (n4) -> fc (c4): every fc task needs the whole input, 8 x 1000
     * elements, three quarters of it from the other GPUs */
    config c4 = C(1, 4, 1, 1);
    double x32 = cost_t_x(m32, 0, &n4, &c4, &b32), x16 = cost_t_x(m16, 0, &n4, &c4, &b16);
    cr_assert(x32 > 0);
    cr_assert_eq(b32, 2 * b16);
    cr_assert(x16 < x32);
    cost_model_free(m32);
    cost_model_free(m16);
    cluster_free(c32);
    cluster_free(c16);
    net_free(n);
}

/* ---- ring all-reduce ---- */

/* fc (1 001 000 parameters, 4 004 000 B) replicated on 4 GPUs of one node,
 * 10 GB/s: bandwidth term 6 x 1 001 000 / 1e10 s = 600.6 us. One call
 * costs call + 6 x intra step = 10 + 6 x 2 = 22 us. With 8 MiB buckets the
 * layer fills 4 004 000 / 8 388 608 = 0.4773... of one and pays that share
 * of a call: 10.50 us; with 2 MiB buckets it is larger than a bucket and
 * gets one of its own: 22 us, as with bucket 0 (one call per layer). */
Test(allreduce, latency_per_call_spread_over_buckets)
{
    network *n = net_str(fc_net);
    cluster *b8 = fc_cluster("ring-allreduce", NULL,
                             "{\"call_latency_us\": 10, \"intra_step_us\": 2, \"inter_step_us\": 7, \"bucket_mb\": 8}");
    cluster *b2 = fc_cluster("ring-allreduce", NULL,
                             "{\"call_latency_us\": 10, \"intra_step_us\": 2, \"inter_step_us\": 7, \"bucket_mb\": 2}");
    cluster *b0 = fc_cluster("ring-allreduce", NULL,
                             "{\"call_latency_us\": 10, \"intra_step_us\": 2, \"inter_step_us\": 7, \"bucket_mb\": 0}");
    cost_model *m8 = build(n, b8, 4, 8), *m2 = build(n, b2, 4, 8), *m0 = build(n, b0, 4, 8);
    config n4 = C(4, 1, 1, 1);
    double share = 4004000.0 / 8388608.0;
    ASSERT_REL(cost_t_s(m8, 1, &n4, NULL), (600.6 + share * 22) * 1e-3, 1e-9);
    ASSERT_REL(cost_t_s(m2, 1, &n4, NULL), (600.6 + 22) * 1e-3, 1e-9);
    ASSERT_REL(cost_t_s(m0, 1, &n4, NULL), (600.6 + 22) * 1e-3, 1e-9);
    /* the table the search uses holds the same */
    int found = 0;
    for (int k = 0; k < m8->n_configs[1]; k++)
        if (config_equal(&m8->configs[1][k], &n4)) {
            ASSERT_REL(m8->t_s[1][k], (600.6 + share * 22) * 1e-3, 1e-9);
            found = 1;
        }
    cr_assert(found);
    /* two replicas (n2 c2: shards of 2 002 000 B, pieces of 1 001 000 B):
     * 2 steps of 100.1 us; a call is 10 + 2 x 2 = 14 us, of which the
     * shard pays 2 002 000 / 8 388 608 */
    config n2c2 = C(2, 2, 1, 1);
    ASSERT_REL(cost_t_s(m8, 1, &n2c2, NULL), (200.2 + 2002000.0 / 8388608.0 * 14) * 1e-3, 1e-9);
    cost_model_free(m8);
    cost_model_free(m2);
    cost_model_free(m0);
    cluster_free(b8);
    cluster_free(b2);
    cluster_free(b0);
    net_free(n);
}

/* Two nodes of two GPUs, fc data parallel: the ring 0 -> 1 -> 2 -> 3 -> 0
 * has 6 steps, 2 of them (2 x (nodes - 1)) charged at the network's step
 * latency: 10 + 4 x 2 + 2 x 7 = 32 us per call (bucket 0). Bandwidth: a
 * step moves a quarter (1 001 000 B) per GPU; each node's NIC (1 GB/s)
 * carries one piece out and one in: 1.001 ms per step, 6.006 ms. */
Test(allreduce, steps_across_nodes_pay_the_network_latency)
{
    network *n = net_str(fc_net);
    cluster *c = cluster_str(
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 2, \"gpus_per_node\": 2,"
        " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
        " \"intra_node\": {\"bandwidth_gbs\": 10}, \"inter_node\": {\"bandwidth_gbs\": 1},"
        " \"collectives\": {\"call_latency_us\": 10, \"intra_step_us\": 2, \"inter_step_us\": 7, \"bucket_mb\": 0},"
        " \"sync\": \"ring-allreduce\"}");
    cost_model *m = build(n, c, 4, 8);
    config n4 = C(4, 1, 1, 1);
    ASSERT_REL(cost_t_s(m, 1, &n4, NULL), 6.006 + 0.032, 1e-9);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

Test(allreduce, cost_of_one_call_by_hand)
{
    /* 2 nodes x 2 GPUs, 10 GB/s inside, 1 GB/s NICs (2 per node) */
    cluster *c = cluster_str(
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 2, \"gpus_per_node\": 2,"
        " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
        " \"intra_node\": {\"bandwidth_gbs\": 10}, \"inter_node\": {\"bandwidth_gbs\": 1, \"nics_per_node\": 2},"
        " \"collectives\": {\"call_latency_us\": 10, \"intra_step_us\": 2, \"inter_step_us\": 7},"
        " \"sync\": \"ring-allreduce\"}");
    int ring[4] = {0, 1, 2, 3};
    /* 4 MB: pieces of 1 MB. Intra hops 1e6 / 1e10 = 100 us; each node sends
     * and receives one piece over its two NICs: 1e6 / 2e9 = 500 us. Six
     * steps of 500 us = 3 ms, plus 10 + 4 x 2 + 2 x 7 = 32 us. */
    ASSERT_REL(cost_allreduce_s(c, ring, 4, 4e6), 3e-3 + 32e-6, 1e-12);
    /* one node only (GPUs 0, 1): 2 steps of 2e6 / 1e10 = 200 us, plus
     * 10 + 2 x 2 = 14 us */
    ASSERT_REL(cost_allreduce_s(c, ring, 2, 4e6), 400e-6 + 14e-6, 1e-12);
    cr_assert_eq(cost_allreduce_s(c, ring, 1, 4e6), 0);
    cluster_free(c);
}

static double busbw_gbs(const cluster *c, int n, double bytes)
{
    int ring[64];
    for (int i = 0; i < n; i++) ring[i] = i;
    cost_ring_order(c, ring, n);
    return 2.0 * (n - 1) / n * bytes / cost_allreduce_s(c, ring, n, bytes) / 1e9;
}

/* The targets on the shipped clusters: 100 MB within 20% of
 * nccl-tests (about 230 GB/s bus bandwidth on 8 A100, about 370 on 8
 * H100), and 1 MB on 8 GPUs in tens of microseconds. */
Test(allreduce, shipped_clusters_near_nccl_tests)
{
    lw_error err = {0};
    cluster *a = plan_load_cluster("dgx-a100", &err);
    cr_assert_not_null(a, "%s", err.msg);
    cluster *h = plan_load_cluster("h100-8x8", &err);
    cr_assert_not_null(h, "%s", err.msg);
    double ba = busbw_gbs(a, 8, 1e8), bh = busbw_gbs(h, 8, 1e8);
    cr_assert(ba > 230 * 0.8 && ba < 230 * 1.2, "A100 bus bandwidth %g GB/s", ba);
    cr_assert(bh > 370 * 0.8 && bh < 370 * 1.2, "H100 bus bandwidth %g GB/s", bh);
    int ring[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    double t1 = cost_allreduce_s(a, ring, 8, 1e6);
    cr_assert(t1 > 10e-6 && t1 < 100e-6, "1 MB on 8 A100: %g s", t1);
    cluster_free(a);
    cluster_free(h);
}

/* dgx1-v100: an all-NVLink ring exists in the hybrid cube-mesh, and the
 * ring is built over it, not in GPU order (0-7 and 3-4 have no NVLink). */
Test(allreduce, dgx1_ring_uses_nvlink_pairs_only)
{
    lw_error err = {0};
    cluster *c = plan_load_cluster("dgx1-v100", &err);
    cr_assert_not_null(c, "%s", err.msg);
    int ring[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    cr_assert(cluster_link(c, 3, 4).bandwidth_gbs < 10, "3-4 should be a SYS pair in the file");
    cost_ring_order(c, ring, 8);
    int seen = 0;
    for (int i = 0; i < 8; i++) {
        seen |= 1 << ring[i];
        double bw = cluster_link(c, ring[i], ring[(i + 1) % 8]).bandwidth_gbs;
        cr_assert(bw >= 22.5, "hop %d-%d is not NVLink (%g GB/s)", ring[i], ring[(i + 1) % 8], bw);
    }
    cr_assert_eq(seen, 0xff, "not a permutation");
    /* and t_s follows it: data parallel fc6 of VGG-16 syncs at NVLink
     * speed, no slower than the single-link pairs allow */
    network *v = plan_load_network("vgg16", &err);
    cr_assert_not_null(v, "%s", err.msg);
    cost_model *m = build(v, c, 8, 256);
    int fc6 = net_find(v, "fc6");
    config n8 = C(8, 1, 1, 1);
    double bytes = (double)v->layers[fc6].n_params * 4;
    double slowest_nvlink = 2.0 * 7 * (bytes / 8) / 22.5e9 * 1e3;
    cr_assert(cost_t_s(m, fc6, &n8, NULL) < slowest_nvlink * 1.05, "t_s %g ms vs %g", cost_t_s(m, fc6, &n8, NULL),
              slowest_nvlink);
    cost_model_free(m);
    net_free(v);
    cluster_free(c);
}

/* Uniform nodes keep GPU order, node by node. */
Test(allreduce, ring_order_is_node_major_and_stable)
{
    lw_error err = {0};
    cluster *h = plan_load_cluster("h100-8x8", &err);
    cr_assert_not_null(h, "%s", err.msg);
    int r[6] = {9, 1, 8, 2, 17, 0};
    cost_ring_order(h, r, 6);
    int want[6] = {1, 2, 0, 9, 8, 17};
    /* nodes 0, 1, 2 in order; within a node the given order is kept */
    cr_assert_arr_eq(r, want, sizeof r);
    cluster_free(h);
}

/* NCCL's choice by size (issue 34, item 4), on a cluster with
 * "algorithms": "nccl": small messages take LL (and the tree across
 * nodes), large ones the ring with Simple; worked by hand on the cluster of
 * cost_of_one_call_by_hand with NCCL's latencies. */
Test(allreduce, protocol_chosen_by_size_as_nccl_does)
{
    static const char *const json =
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 2, \"gpus_per_node\": 4,"
        " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
        " \"intra_node\": {\"bandwidth_gbs\": 100}, \"inter_node\": {\"bandwidth_gbs\": 25, \"nics_per_node\": 4},"
        " \"collectives\": {\"algorithms\": \"nccl\"}, \"sync\": \"ring-allreduce\"}";
    cluster *c = cluster_str(json);
    int ring[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    /* one node, 4 GPUs, 8 bytes: the ring with LL: 6.6 + 6 x 0.47 = 9.42 us
     * beside Simple's 8.4 + 6 x 3.4 = 28.8 us (bandwidth negligible) */
    coll_pick p = cost_allreduce_call(c, ring, 4, 8);
    cr_assert_eq(p.tree, 0);
    cr_assert_eq(p.proto, COLL_LL, "8 B in a node: %s", coll_proto_name(p.proto));
    ASSERT_REL(p.seconds, 9.42e-6, 1e-3); /* + 6 steps of 2 bytes at 100 GB/s / 4 (LL): negligible */
    /* 1 MB over both nodes: the tree with LL (NCCL issue 1244: about 47 us
     * on 16 GPUs), beating every ring */
    p = cost_allreduce_call(c, ring, 8, 1e6);
    cr_assert_eq(p.tree, 1, "1 MB across nodes: the tree");
    cr_assert(p.proto == COLL_LL || p.proto == COLL_LL128, "%s", coll_proto_name(p.proto));
    /* 1 GB: the ring with Simple (the most bandwidth) */
    p = cost_allreduce_call(c, ring, 8, 1e9);
    cr_assert_eq(p.tree, 0);
    cr_assert_eq(p.proto, COLL_SIMPLE, "1 GB: %s", coll_proto_name(p.proto));
    /* and the time never exceeds ring/Simple's, which a ring-simple cluster charges */
    cluster *s = cluster_str(
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 2, \"gpus_per_node\": 4,"
        " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
        " \"intra_node\": {\"bandwidth_gbs\": 100}, \"inter_node\": {\"bandwidth_gbs\": 25, \"nics_per_node\": 4},"
        " \"sync\": \"ring-allreduce\"}");
    for (double b = 8; b < 4e9; b *= 4) {
        double tn = cost_allreduce_s(c, ring, 8, b), ts = cost_allreduce_s(s, ring, 8, b);
        cr_assert(tn <= ts * (1 + 1e-12), "%g bytes: %g s with NCCL's choice, %g with ring/Simple", b, tn, ts);
        cr_assert_eq(cost_allreduce_call(s, ring, 8, b).proto, COLL_SIMPLE);
    }
    cluster_free(s);
    cluster_free(c);
}

/* Over PCIe NCCL leaves LL128 off and charges its PCI latencies. */
Test(allreduce, pcie_has_no_ll128)
{
    cluster *c = cluster_str(
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 1, \"gpus_per_node\": 4,"
        " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
        " \"intra_node\": {\"bandwidth_gbs\": 24},"
        " \"collectives\": {\"algorithms\": \"nccl\", \"intra_fabric\": \"pcie\", \"intra_step_us\": 5.7},"
        " \"sync\": \"ring-allreduce\"}");
    int ring[4] = {0, 1, 2, 3};
    for (double b = 8; b < 4e9; b *= 2) cr_assert_neq(cost_allreduce_call(c, ring, 4, b).proto, COLL_LL128);
    /* 8 bytes: LL at 6.6 + 6 x 1.0 us */
    ASSERT_REL(cost_allreduce_call(c, ring, 4, 8).seconds, 12.6e-6, 1e-3);
    cluster_free(c);
}

/* Several rings (issue 34, item 4): with NCCL's algorithms a node of
 * per-pair links is ringed as NCCL's channel search does, all rings at one
 * speed, each taking it from every link it crosses, in its direction.
 * Worked by hand on 4 GPUs: 0-1 and 2-3 joined by 20 GB/s, every other
 * pair by the default 10 GB/s. At 20 GB/s no cycle exists (only two
 * pairs); at 10, each direction of a pair carries 10 (0-1 and 2-3: 20),
 * and each GPU has 40 GB/s out (20 + 10 + 10): four rings of 10, 40 GB/s
 * bus bandwidth (the rings 0-1-2-3 and 0-1-3-2 each way use 0-1 twice).
 * 4 MB over it: 6 steps of 1 MB / 40 GB/s = 150 us, plus NCCL's ring
 * Simple latency 8.4 + 6 x 3.4 = 28.8 us. The same file without NCCL's
 * algorithms keeps one ring, 10 GB/s. */
Test(allreduce, several_rings_over_per_pair_links)
{
    static const char *const fmt =
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 1, \"gpus_per_node\": 4,"
        " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
        " \"intra_node\": {\"bandwidth_gbs\": 10}, \"inter_node\": {\"bandwidth_gbs\": 1},"
        " \"links\": [{\"gpus\": [0, 1], \"bandwidth_gbs\": 20}, {\"gpus\": [2, 3], \"bandwidth_gbs\": 20}],"
        " \"collectives\": {%s}, \"sync\": \"ring-allreduce\"}";
    char json[1024];
    snprintf(json, sizeof json, fmt, "\"algorithms\": \"nccl\"");
    cluster *c = cluster_str(json);
    snprintf(json, sizeof json, fmt, "\"call_latency_us\": 8.4, \"intra_step_us\": 3.4");
    cluster *one = cluster_str(json);
    int ring[4] = {0, 1, 2, 3};
    cost_ring_order(c, ring, 4);
    coll_pick p = cost_allreduce_call(c, ring, 4, 4e6);
    cr_assert_eq(p.proto, COLL_SIMPLE);
    ASSERT_REL(p.seconds, 150e-6 + 28.8e-6, 1e-9);
    ASSERT_REL(cost_allreduce_s(c, ring, 4, 4e6), 150e-6 + 28.8e-6, 1e-9);
    /* one ring: 6 steps of 1 MB / 10 GB/s */
    ASSERT_REL(cost_allreduce_s(one, ring, 4, 4e6), 600e-6 + 28.8e-6, 1e-9);
    /* two GPUs: one ring, the pair's link */
    ASSERT_REL(cost_allreduce_s(c, ring, 2, 4e6), 2 * 2e6 / 20e9 + (8.4 + 2 * 3.4) * 1e-6, 1e-9);
    cluster_free(one);
    cluster_free(c);
}

/* The shipped DGX-1V: NCCL's six rings over the six NVLinks per GPU, each
 * at one link's 22.5 GB/s (a two-link pair carries two each way): 135
 * GB/s nominal against the one ring's 45, where rings at 45 (the two-link
 * cycle 0-3-2-1-5-6-7-4 each way) would carry 90; the SYS pairs (host
 * memory) carry none. The quad 0-3 has four NVLinks per GPU inside it: 90
 * GB/s. And data-parallel t_s follows. */
Test(allreduce, dgx1_rings_use_all_six_nvlinks)
{
    lw_error err = {0};
    cluster *c = plan_load_cluster("dgx1-v100", &err);
    cr_assert_not_null(c, "%s", err.msg);
    double b8 = busbw_gbs(c, 8, 1e9), b4 = busbw_gbs(c, 4, 1e9);
    int ring[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    cost_ring_order(c, ring, 8);
    cr_assert_eq(cost_ring_count(c, ring, 8), 6);
    cr_assert(b8 > 135 * 0.97 && b8 <= 135, "8 GPUs: %g GB/s", b8);
    cr_assert(b4 > 90 * 0.97 && b4 <= 90, "GPUs 0-3: %g GB/s", b4);
    network *v = plan_load_network("vgg16", &err);
    cr_assert_not_null(v, "%s", err.msg);
    cost_model *m = build(v, c, 8, 256);
    int fc6 = net_find(v, "fc6");
    config n8 = C(8, 1, 1, 1);
    double bytes = (double)v->layers[fc6].n_params * 4;
    double six_links = 2.0 * 7 * (bytes / 8) / 135e9 * 1e3;
    double t = cost_t_s(m, fc6, &n8, NULL);
    cr_assert(t > six_links && t < six_links * 1.05, "t_s %g ms vs %g", t, six_links);
    cost_model_free(m);
    net_free(v);
    cluster_free(c);
}
