/*
 * Tests of the step simulator (src/sim.c): hand-computed timelines on small
 * graphs (a chain on one GPU, a branch on a second GPU, a data-parallel step
 * whose syncs hide under the backward pass as far as the link allows, a
 * transfer waiting for its producer), the serial schedule against Eq. 1 on
 * every shipped network, and properties of the data-flow schedule on a real
 * strategy (no resource does two things at once, every task after its
 * inputs, deterministic).
 *
 * Run from the repository root (make check does).
 */
#include <criterion/criterion.h>

#include "cost.h"
#include "net_json.h"
#include "plan.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "sim.h"
#include "strategy.h"
#include "test_helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void use_this_trees_data(void)
{
    setenv("LAYERWISE_DATA", "data", 0);
}

#define ASSERT_NEAR(a, b, tol)                                                                                     \
    cr_assert(fabs((double)(a) - (double)(b)) <= (tol), "%s = %.12g, expected %.12g (%s)", #a, (double)(a),         \
              (double)(b), #b)

/* nodes x gpn GPUs, bandwidths in GB/s, no latency (of transfers or of
 * all-reduce calls), a fixed step overhead. */
static cluster *make_cluster(int nodes, int gpn, double intra_bw, double inter_bw, const char *sync)
{
    char t[1024];
    snprintf(t, sizeof t,
             "{\"format\": \"layerwise-cluster/1\", \"name\": \"test\", \"nodes\": %d, \"gpus_per_node\": %d,"
             " \"gpu\": {\"name\": \"TestGPU\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500,"
             " \"step_overhead_ms\": 0.5},"
             " \"intra_node\": {\"bandwidth_gbs\": %.17g, \"latency_us\": 0},"
             " \"inter_node\": {\"bandwidth_gbs\": %.17g, \"latency_us\": 0, \"nics_per_node\": 1},"
             " \"collectives\": {\"call_latency_us\": 0, \"intra_step_us\": 0, \"inter_step_us\": 0},"
             " \"sync\": \"%s\"}",
             nodes, gpn, intra_bw, inter_bw, sync);
    lw_error err = {0};
    cluster *c = cluster_from_json(t, strlen(t), "test-cluster.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

static cost_model *build(const network *n, const cluster *c, int gpus, long batch)
{
    lw_error err = {0};
    cost_model *m = cost_model_build(n, c, NULL, gpus, batch, &err);
    cr_assert_not_null(m, "%s", err.msg);
    return m;
}

static int cfg_index(const cost_model *m, const char *lname, const char *cfg)
{
    int li = net_find(m->net, lname);
    cr_assert(li >= 0, "no layer %s", lname);
    config c;
    cr_assert_eq(config_parse(cfg, &c), 0);
    int k = config_find(m->configs[li], m->n_configs[li], &c);
    cr_assert(k >= 0, "%s has no config %s", lname, cfg);
    return k;
}

/* The task of a layer, kind and GPU (transfers: sender gpu), or fails. */
static const sim_task *find_task(const sim_result *s, const cost_model *m, const char *lname, sim_kind kind, int gpu)
{
    int li = net_find(m->net, lname);
    for (int t = 0; t < s->n_tasks; t++)
        if (s->tasks[t].layer == li && s->tasks[t].kind == kind && s->tasks[t].gpu == gpu) return &s->tasks[t];
    cr_assert_fail("no %s task of %s on GPU %d", sim_kind_name(kind), lname, gpu);
    return NULL;
}

static void parts(const cost_model *m, const char *lname, const char *cfg, double *f, double *b)
{
    int li = net_find(m->net, lname);
    config c;
    config_parse(cfg, &c);
    cost_t_c_parts(m, li, &c, NULL, f, b);
}

/* No resource is used by two tasks at once. */
static void assert_no_resource_overlap(const sim_result *s)
{
    double *busy_until = calloc((size_t)s->n_res, sizeof(double));
    int *order = malloc(sizeof(int) * (size_t)(s->n_tasks ? s->n_tasks : 1));
    for (int t = 0; t < s->n_tasks; t++) order[t] = t;
    /* insertion order by start is enough for the sizes tested here; sort */
    for (int i = 1; i < s->n_tasks; i++) {
        int x = order[i], j = i - 1;
        while (j >= 0 && s->tasks[order[j]].start_ms > s->tasks[x].start_ms) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = x;
    }
    for (int i = 0; i < s->n_tasks; i++) {
        const sim_task *tk = &s->tasks[order[i]];
        if (tk->dur_ms <= 0) continue;
        for (int r = 0; r < tk->n_res; r++) {
            int res = s->res_of[tk->res0 + r];
            cr_assert(tk->start_ms >= busy_until[res] - 1e-9, "resource %d used twice at %.6f ms (busy until %.6f)",
                      res, tk->start_ms, busy_until[res]);
            busy_until[res] = tk->end_ms;
        }
    }
    free(busy_until);
    free(order);
}

/* ------------------------------------------------------------------ tests */

static const char *chain_net =
    "{\"format\": \"layerwise-net/1\", \"name\": \"chain\","
    " \"input\": {\"name\": \"data\", \"channels\": 3, \"height\": 32, \"width\": 32},"
    " \"layers\": ["
    "  {\"name\": \"conv1\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 16, \"kernel\": 3, \"padding\": 1},"
    "  {\"name\": \"relu1\", \"type\": \"relu\", \"inputs\": [\"conv1\"]},"
    "  {\"name\": \"pool1\", \"type\": \"pool2d\", \"mode\": \"max\", \"inputs\": [\"relu1\"], \"kernel\": 2},"
    "  {\"name\": \"flat\", \"type\": \"flatten\", \"inputs\": [\"pool1\"]},"
    "  {\"name\": \"fc\", \"type\": \"linear\", \"inputs\": [\"flat\"], \"out_features\": 10},"
    "  {\"name\": \"prob\", \"type\": \"softmax\", \"inputs\": [\"fc\"]}]}";

Test(sim, a_chain_on_one_gpu_takes_the_sum_of_its_tasks)
{
    network *n = net_ok(chain_net);
    cluster *c = make_cluster(1, 1, 10, 10, "ring-allreduce");
    cost_model *m = build(n, c, 1, 32);
    int ci[7] = {0};
    sim_result *s = sim_run(m, ci, NULL);
    /* by hand: every layer's t_c, one after another on GPU 0; nothing else */
    double sum = 0;
    for (int li = 0; li < n->n_layers; li++) sum += cost_t_c(m, li, &m->configs[li][0], NULL);
    ASSERT_NEAR(s->step_ms, sum, 1e-9);
    ASSERT_NEAR(s->eq1_ms, sum, 1e-9);
    ASSERT_NEAR(s->res[0].busy_ms, sum, 1e-9);
    /* the step overhead first, then conv1 forward right after it */
    const sim_task *d = find_task(s, m, "data", SIM_FORWARD, 0);
    const sim_task *f1 = find_task(s, m, "conv1", SIM_FORWARD, 0);
    ASSERT_NEAR(d->dur_ms, 0.5, 1e-12);
    ASSERT_NEAR(f1->start_ms, 0.5, 1e-12);
    /* backward after the whole forward: prob's input gradient starts when its forward ends */
    const sim_task *pf = find_task(s, m, "prob", SIM_FORWARD, 0);
    const sim_task *pb = find_task(s, m, "prob", SIM_BACKWARD_DATA, 0);
    ASSERT_NEAR(pb->start_ms, pf->end_ms, 1e-12);
    /* conv1's weight gradient is the last task: the critical path is the chain */
    const sim_task *w1 = find_task(s, m, "conv1", SIM_BACKWARD_WEIGHT, 0);
    ASSERT_NEAR(w1->end_ms, sum, 1e-9);
    cr_assert_eq(s->tasks[s->crit[s->n_crit - 1]].layer, net_find(n, "conv1"));
    assert_no_resource_overlap(s);
    sim_free(s);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* data (GPU 0) feeds two branches: a on GPU 0 only, b split in two over
 * GPUs 0 and 1. b's half on GPU 1 needs its half of the input over the
 * link, then runs while GPU 0 is still busy with a and b's other half. */
static const char *branch_net =
    "{\"format\": \"layerwise-net/1\", \"name\": \"branches\","
    " \"input\": {\"name\": \"data\", \"channels\": 64, \"height\": 32, \"width\": 32},"
    " \"layers\": ["
    "  {\"name\": \"a\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 128, \"kernel\": 3, \"padding\": 1},"
    "  {\"name\": \"b\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 64, \"kernel\": 1},"
    "  {\"name\": \"cat\", \"type\": \"concat\", \"inputs\": [\"a\", \"b\"]}]}";

Test(sim, two_branches_on_different_gpus_overlap)
{
    network *n = net_ok(branch_net);
    cluster *c = make_cluster(1, 2, 10, 10, "ring-allreduce");
    cost_model *m = build(n, c, 2, 64);
    int ci[4] = {cfg_index(m, "data", "1"), cfg_index(m, "a", "1"), cfg_index(m, "b", "n2"), cfg_index(m, "cat", "1")};
    sim_result *s = sim_run(m, ci, NULL);
    /* by hand: the input piece b needs on GPU 1 is half the batch, 32 x 64
     * x 32 x 32 floats = 8388608 bytes, 0.8388608 ms at 10 GB/s, sent when
     * data's forward (the 0.5 ms step overhead) ends */
    const sim_task *x = find_task(s, m, "b", SIM_TRANSFER, 0);
    cr_assert_eq(x->dst, 1);
    ASSERT_NEAR(x->bytes, 8388608, 1e-9);
    ASSERT_NEAR(x->start_ms, 0.5, 1e-12);
    ASSERT_NEAR(x->end_ms, 0.5 + 0.8388608, 1e-12);
    const sim_task *b1 = find_task(s, m, "b", SIM_FORWARD, 1);
    ASSERT_NEAR(b1->start_ms, x->end_ms, 1e-12);
    /* GPU 0 runs a's forward (a 3x3 conv, over a millisecond) from 0.5 ms:
     * the two branches run at once */
    const sim_task *a0 = find_task(s, m, "a", SIM_FORWARD, 0);
    ASSERT_NEAR(a0->start_ms, 0.5, 1e-12);
    cr_assert(a0->dur_ms > 1, "a's forward takes %.6f ms", a0->dur_ms);
    cr_assert(b1->start_ms < a0->end_ms && a0->start_ms < b1->end_ms, "branches did not overlap");
    /* so the step is shorter than Eq. 1, which adds b's task time to a's */
    cr_assert(s->step_ms < s->eq1_ms - b1->dur_ms / 2, "step %.6f vs Eq. 1 %.6f", s->step_ms, s->eq1_ms);
    assert_no_resource_overlap(s);
    /* serially, Eq. 1 exactly */
    sim_options none = {.overlap = SIM_OVERLAP_NONE};
    sim_result *z = sim_run(m, ci, &none);
    ASSERT_NEAR(z->step_ms, z->eq1_ms, 1e-9 * z->eq1_ms);
    sim_free(z);
    sim_free(s);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* Three big linear layers, data parallel on 2 GPUs with ring all-reduce:
 * each layer's gradient can be synchronised as soon as its weight gradient
 * is ready, under the backward of the layers before it. */
static const char *dp_net =
    "{\"format\": \"layerwise-net/1\", \"name\": \"dp\","
    " \"input\": {\"name\": \"data\", \"channels\": 1024, \"height\": 1, \"width\": 1},"
    " \"layers\": ["
    "  {\"name\": \"f1\", \"type\": \"linear\", \"inputs\": [\"data\"], \"out_features\": 1024},"
    "  {\"name\": \"f2\", \"type\": \"linear\", \"inputs\": [\"f1\"], \"out_features\": 1024},"
    "  {\"name\": \"f3\", \"type\": \"linear\", \"inputs\": [\"f2\"], \"out_features\": 1024}]}";

static void check_data_parallel(double bw_gbs)
{
    network *n = net_ok(dp_net);
    cluster *c = make_cluster(1, 2, bw_gbs, bw_gbs, "ring-allreduce");
    cost_model *m = build(n, c, 2, 256);
    int ci[4];
    for (int li = 0; li < 4; li++) ci[li] = cfg_index(m, n->layers[li].name, "n2");
    sim_result *s = sim_run(m, ci, NULL);
    /* by hand, from the model's parts: GPU 0's compute is one chain (forward
     * of data, f1, f2, f3; then input and weight gradients of f3, f2, f1),
     * half of each layer's backward for each gradient */
    double f[4], b[4];
    parts(m, "data", "n2", &f[0], &b[0]);
    f[0] = 0.5, b[0] = 0;
    parts(m, "f1", "n2", &f[1], &b[1]);
    parts(m, "f2", "n2", &f[2], &b[2]);
    parts(m, "f3", "n2", &f[3], &b[3]);
    double t = f[0] + f[1] + f[2] + f[3];
    double ready[4];
    for (int li = 3; li >= 1; li--) {
        t += b[li]; /* input gradient then weight gradient */
        ready[li] = t;
    }
    ASSERT_NEAR(s->res[0].busy_ms, t, 1e-9);
    /* t_s of a 1024x1024 (+1024) layer on 2 ring replicas: 2 steps of half
     * the 4 MiB + 4 KiB shard: 2 x 2099200 B / bw */
    double ts = 2 * (1024.0 * 1024 + 1024) * 4 / 2 / (bw_gbs * 1e9) * 1e3;
    for (int li = 1; li <= 3; li++) ASSERT_NEAR(cost_t_s(m, li, &m->configs[li][ci[li]], NULL), ts, 1e-12);
    /* the syncs run one after another on the ring's links, each when its
     * gradient is ready: f3's at ready[3], f2's when both it and the link are */
    double end3 = ready[3] + ts;
    double end2 = fmax(ready[2], end3) + ts;
    double end1 = fmax(ready[1], end2) + ts;
    ASSERT_NEAR(s->step_ms, end1, 1e-9);
    /* Eq. 1 adds all three syncs to the compute */
    ASSERT_NEAR(s->eq1_ms, t + 3 * ts, 1e-9);
    const sim_task *sy3 = NULL;
    for (int k = 0; k < s->n_tasks; k++)
        if (s->tasks[k].kind == SIM_SYNC && s->tasks[k].layer == 3) sy3 = &s->tasks[k];
    cr_assert_not_null(sy3);
    ASSERT_NEAR(sy3->start_ms, ready[3], 1e-9);
    assert_no_resource_overlap(s);
    sim_free(s);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

Test(sim, data_parallel_hides_sync_under_backward_on_a_fast_link)
{
    /* 100 GB/s: 0.042 ms per sync, shorter than a layer's backward: only
     * f1's sync is left after the compute */
    check_data_parallel(100);
}

Test(sim, data_parallel_sync_is_bound_by_a_slow_link)
{
    /* 0.5 GB/s: 8.4 ms per sync, the link is the bottleneck: the step is
     * f3's ready time plus three syncs back to back */
    check_data_parallel(0.5);
}

Test(sim, buckets_group_layers_of_the_same_replicas)
{
    network *n = net_ok(dp_net);
    cluster *c = make_cluster(1, 2, 10, 10, "ring-allreduce");
    cost_model *m = build(n, c, 2, 256);
    int ci[4];
    for (int li = 0; li < 4; li++) ci[li] = cfg_index(m, n->layers[li].name, "n2");
    sim_options o = {.overlap = SIM_OVERLAP_FULL, .bucket_bytes = 5e6}; /* two 4.2 MB layers per bucket */
    sim_result *s = sim_run(m, ci, &o);
    int syncs = 0;
    for (int k = 0; k < s->n_tasks; k++)
        if (s->tasks[k].kind == SIM_SYNC) {
            syncs++;
            /* f3 and f2 together (8.4 MB >= 5 MB), then f1 alone */
            cr_assert_eq(s->tasks[k].n_layers, s->tasks[k].layer == 3 ? 2 : 1);
        }
    cr_assert_eq(syncs, 2);
    sim_free(s);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

Test(sim, a_transfer_waits_for_its_producer)
{
    /* fc split over 2 GPUs by channels needs the whole input on both: the
     * piece to GPU 1 leaves when data's forward on GPU 0 ends, and fc's
     * task on GPU 1 waits for it */
    network *n = net_ok(dp_net);
    cluster *c = make_cluster(1, 2, 1, 1, "ring-allreduce");
    cost_model *m = build(n, c, 2, 64);
    int ci[4] = {cfg_index(m, "data", "1"), cfg_index(m, "f1", "c2"), cfg_index(m, "f2", "c2"), cfg_index(m, "f3", "1")};
    sim_result *s = sim_run(m, ci, NULL);
    const sim_task *d = find_task(s, m, "data", SIM_FORWARD, 0);
    const sim_task *x = find_task(s, m, "f1", SIM_TRANSFER, 0);
    cr_assert_eq(x->dst, 1);
    cr_assert_eq(x->backward, 0);
    ASSERT_NEAR(x->start_ms, d->end_ms, 1e-12);
    /* 64 x 1024 floats at 1 GB/s: 0.262144 ms */
    ASSERT_NEAR(x->dur_ms, 64.0 * 1024 * 4 / 1e9 * 1e3, 1e-12);
    const sim_task *f1 = find_task(s, m, "f1", SIM_FORWARD, 1);
    ASSERT_NEAR(f1->start_ms, x->end_ms, 1e-12);
    /* every transfer starts after its sender's task that produced it */
    for (int k = 0; k < s->n_tasks; k++) {
        const sim_task *t = &s->tasks[k];
        if (t->kind != SIM_TRANSFER || t->backward) continue;
        const sim_task *p = find_task(s, m, n->layers[m->e_from[t->edge]].name, SIM_FORWARD, t->gpu);
        cr_assert(t->start_ms >= p->end_ms - 1e-12);
    }
    assert_no_resource_overlap(s);
    sim_free(s);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* The serial schedule is Eq. 1: every shipped network, at 1, 4 and 16 GPUs
 * of the paper's cluster, for the optimum and the three baselines. */
static void check_serial_equals_eq1(const char *net_name)
{
    lw_error err = {0};
    network *n = plan_load_network(net_name, &err);
    cr_assert_not_null(n, "%s", err.msg);
    cluster *c = plan_load_cluster("p100-4x4", &err);
    cr_assert_not_null(c, "%s", err.msg);
    plan_settings set = {1, 0, 0, 0};
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = set}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    int gpus[3] = {1, 4, 16};
    int *ci = malloc(sizeof(int) * (size_t)p->net->n_layers);
    for (int g = 0; g < 3; g++) {
        if (gpus[g] != p->gpus) {
            plan_settings ns = p->set;
            ns.gpus = gpus[g];
            plan_change ch = {.set = &ns};
            cr_assert_eq(plan_apply(p, &ch, &err), 0, "%s", err.msg);
        }
        for (int which = 0; which < 4; which++) {
            if (which < 3) strategy_baseline(p->cm, (baseline_kind)which, ci);
            else memcpy(ci, p->best, sizeof(int) * (size_t)p->net->n_layers);
            sim_options none = {.overlap = SIM_OVERLAP_NONE};
            sim_result *s = sim_run(p->cm, ci, &none);
            cr_assert(fabs(s->step_ms - s->eq1_ms) <= 0.01 * s->eq1_ms,
                      "%s, %d GPUs, %s: serial %.6f ms, Eq. 1 %.6f ms", net_name, gpus[g],
                      which < 3 ? baseline_name((baseline_kind)which) : "optimum", s->step_ms, s->eq1_ms);
            /* and the data-flow schedule is not slower than serial here */
            sim_result *f = sim_run(p->cm, ci, NULL);
            cr_assert(f->step_ms <= s->step_ms * (1 + 1e-9), "%s %d GPUs: full %.6f > none %.6f", net_name, gpus[g],
                      f->step_ms, s->step_ms);
            sim_free(f);
            sim_free(s);
        }
    }
    free(ci);
    plan_free(p);
}

Test(eq1, serial_schedule_equals_eq1_lenet5) { check_serial_equals_eq1("lenet5"); }
Test(eq1, serial_schedule_equals_eq1_alexnet) { check_serial_equals_eq1("alexnet"); }
Test(eq1, serial_schedule_equals_eq1_vgg16) { check_serial_equals_eq1("vgg16"); }
Test(eq1, serial_schedule_equals_eq1_resnet50) { check_serial_equals_eq1("resnet50"); }
Test(eq1, serial_schedule_equals_eq1_inception_v3) { check_serial_equals_eq1("inception_v3"); }

Test(sim, vgg16_16_gpus_is_consistent_and_deterministic)
{
    lw_error err = {0};
    network *n = plan_load_network("vgg16", &err);
    cluster *c = plan_load_cluster("p100-4x4", &err);
    plan_settings set = {16, 0, 0, 0};
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = set}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    sim_result *a = sim_run(p->cm, p->best, NULL);
    sim_result *b = sim_run(p->cm, p->best, NULL);
    cr_assert_eq(a->n_tasks, b->n_tasks);
    for (int t = 0; t < a->n_tasks; t++) {
        cr_assert_eq(a->tasks[t].start_ms, b->tasks[t].start_ms);
        cr_assert_eq(a->tasks[t].end_ms, b->tasks[t].end_ms);
    }
    assert_no_resource_overlap(a);
    /* a limit on the graph's size is refused, not truncated */
    sim_options small = {.overlap = SIM_OVERLAP_FULL, .max_tasks = a->n_tasks - 1};
    cr_assert_null(sim_run(p->cm, p->best, &small));
    small.max_tasks = a->n_tasks;
    sim_result *c2 = sim_run(p->cm, p->best, &small);
    cr_assert_not_null(c2);
    cr_assert_eq(c2->step_ms, a->step_ms);
    sim_free(c2);
    /* overlap hides some of Eq. 1's sum, and cannot beat the busiest GPU */
    cr_assert(a->step_ms < a->eq1_ms);
    for (int g = 0; g < a->gpus; g++) cr_assert(a->step_ms >= a->res[g].busy_ms - 1e-9);
    /* the critical path covers the step */
    int ns = sim_critical_segments(a, NULL, 0);
    sim_segment *seg = malloc(sizeof *seg * (size_t)ns);
    sim_critical_segments(a, seg, ns);
    double sum = 0;
    for (int i = 0; i < ns; i++) sum += seg[i].ms;
    ASSERT_NEAR(sum, a->step_ms, 1e-6 * a->step_ms);
    free(seg);
    sim_free(a);
    sim_free(b);
    plan_free(p);
}

/* ---------- refine */

#include "refine.h"

Test(refine, never_worse_deterministic_and_its_step_is_the_simulators)
{
    lw_error err = {0};
    network *n = plan_load_network("lenet5", &err);
    cluster *c = plan_load_cluster("p100-4x4", &err);
    plan_settings set = {4, 0, 0, 0};
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = set}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    int L = p->net->n_layers;
    int *start = malloc(sizeof(int) * (size_t)L);
    /* from the model-parallel baseline there is much to gain */
    strategy_baseline(p->cm, BASE_MODEL, start);
    refine_result a, b;
    sim_refine(p->cm, start, NULL, 60, 7, &a);
    sim_refine(p->cm, start, NULL, 60, 7, &b);
    cr_assert(a.local_optimum && b.local_optimum, "60 s is plenty for LeNet-5 on 4 GPUs");
    cr_assert(a.best_ms < a.start_ms, "%.6f !< %.6f", a.best_ms, a.start_ms);
    cr_assert(a.n_changed > 0);
    cr_assert_eq(a.best_ms, b.best_ms);
    cr_assert_eq(memcmp(a.configs, b.configs, sizeof(int) * (size_t)L), 0, "same seed, same result");
    sim_result *s0 = sim_run(p->cm, start, NULL), *s1 = sim_run(p->cm, a.configs, NULL);
    cr_assert_eq(s0->step_ms, a.start_ms);
    cr_assert_eq(s1->step_ms, a.best_ms);
    /* a local optimum: no single-layer change is faster */
    for (int li = 0; li < L; li++)
        for (int k = 0; k < p->cm->n_configs[li]; k++) {
            int keep = a.configs[li];
            a.configs[li] = k;
            sim_result *s = sim_run(p->cm, a.configs, NULL);
            cr_assert(s->step_ms >= a.best_ms * (1 - 1e-9), "layer %d config %d: %.6f < %.6f", li, k, s->step_ms,
                      a.best_ms);
            sim_free(s);
            a.configs[li] = keep;
        }
    /* from the optimum, never worse */
    refine_result o;
    sim_refine(p->cm, p->best, NULL, 60, 1, &o);
    sim_result *so = sim_run(p->cm, p->best, NULL);
    cr_assert(o.best_ms <= so->step_ms);
    sim_free(so);
    refine_result_free(&o);
    sim_free(s0);
    sim_free(s1);
    refine_result_free(&a);
    refine_result_free(&b);
    free(start);
    plan_free(p);
}

/* The search a slice at a time (the TUI's F) visits the same strategies as
 * one call: the same result, evaluations and passes, even in slices of no
 * time (each simulates one strategy); its progress never gets worse; refine_end without out frees everything (ASan checks). */
Test(refine, sliced_search_equals_one_call)
{
    lw_error err = {0};
    plan_settings set = {4, 0, 0, 0};
    plan *p = plan_open(plan_load_network("alexnet", &err), plan_load_cluster("p100-4x4", &err), NULL,
        &(plan_options){.set = set}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    int L = p->net->n_layers;
    int *start = malloc(sizeof(int) * (size_t)L);
    strategy_baseline(p->cm, BASE_MODEL, start);
    refine_result whole;
    sim_refine(p->cm, start, NULL, 600, 3, &whole);
    cr_assert(whole.local_optimum);
    refine_search *r = refine_begin(p->cm, start, NULL, 3);
    double last = refine_progress(r)->best_ms;
    cr_assert_eq(last, whole.start_ms);
    int slices = 0;
    while (refine_step(r, 0)) {
        double now = refine_progress(r)->best_ms;
        cr_assert(now <= last);
        last = now;
        slices++;
    }
    refine_result sliced;
    refine_end(r, &sliced);
    cr_assert(sliced.local_optimum);
    cr_assert_eq(sliced.best_ms, whole.best_ms);
    cr_assert_eq(sliced.evaluations, whole.evaluations);
    /* a slice of no time still simulates one strategy: one per call */
    cr_assert_eq(slices + 1, whole.evaluations, "%d slices for %ld evaluations", slices, whole.evaluations);
    cr_assert_eq(sliced.passes, whole.passes);
    cr_assert_eq(sliced.n_changed, whole.n_changed);
    cr_assert_eq(memcmp(sliced.configs, whole.configs, sizeof(int) * (size_t)L), 0);
    refine_end(refine_begin(p->cm, start, NULL, 3), NULL);
    refine_result_free(&sliced);
    refine_result_free(&whole);
    free(start);
    plan_free(p);
}

/* Refinement keeps the search's constraints: a pinned layer keeps its
 * config, and no change takes the peak per GPU over the memory limit
 * (issue 31, finding 7). AlexNet on 8 GPUs from the optimum, with the
 * optimum's peak as the limit: refined freely, it changes the layer pinned
 * here and passes the limit; bounded, neither, and it is a local optimum
 * among the changes the bounds allow. */
Test(refine, keeps_pins_and_the_memory_limit)
{
    plan *p = open_plan("alexnet", "p100-4x4", 8, 0);
    const cost_model *m = p->cm;
    int L = m->n_layers;
    int *start = malloc(sizeof(int) * (size_t)L), *pins = malloc(sizeof(int) * (size_t)L);
    memcpy(start, p->best, sizeof(int) * (size_t)L);
    refine_result free_r;
    sim_refine(m, start, NULL, 600, 3, &free_r);
    double start_peak = cost_memory(m, start, NULL), free_peak = cost_memory(m, free_r.configs, NULL);
    cr_assert(free_peak > start_peak, "unbounded, the peak grows: %.0f -> %.0f", start_peak, free_peak);
    int pl = -1; /* the first layer the free search changed */
    for (int i = 0; i < L && pl < 0; i++)
        if (free_r.configs[i] != start[i]) pl = i;
    cr_assert(pl >= 0);
    for (int i = 0; i < L; i++) pins[i] = -1;
    pins[pl] = start[pl];
    refine_bounds b = {.pinned = pins, .memory_limit = start_peak};
    refine_result r;
    sim_refine(m, start, &b, 600, 3, &r);
    cr_assert(r.local_optimum);
    cr_assert_eq(r.configs[pl], start[pl], "pinned %s changed", p->net->layers[pl].name);
    cr_assert(cost_memory(m, r.configs, NULL) <= start_peak);
    for (int li = 0; li < L; li++) {
        if (li == pl) continue;
        for (int k = 0; k < m->n_configs[li]; k++) {
            int keep = r.configs[li];
            r.configs[li] = k;
            if (cost_memory(m, r.configs, NULL) <= start_peak) {
                double t = sim_step_ms(m, r.configs, 1L << 40);
                cr_assert(isnan(t) || t >= r.best_ms * (1 - 1e-9), "layer %d config %d: %.6f < %.6f", li, k, t,
                          r.best_ms);
            }
            r.configs[li] = keep;
        }
    }
    /* the same in slices, and the plan gives its own pins and limit */
    refine_search *rs = refine_begin(m, start, &b, 3);
    while (refine_step(rs, 0)) {
    }
    refine_result sliced;
    refine_end(rs, &sliced);
    cr_assert_eq(memcmp(sliced.configs, r.configs, sizeof(int) * (size_t)L), 0);
    refine_bounds pb = plan_refine_bounds(p);
    cr_assert(pb.pinned && pb.pinned[pl] == -1);
    cr_assert_eq(pb.memory_limit, p->mem.limit_bytes);
    refine_result_free(&sliced);
    refine_result_free(&r);
    refine_result_free(&free_r);
    free(pins);
    free(start);
    plan_free(p);
}

/* The size estimate that bounds `simulate` (issue 31, finding 13): compute
 * tasks exactly, transfer pieces from a sample within 2%, bytes the
 * per-task figure; instant even at 1024 GPUs. */
static int count_pieces(const sim_result *s)
{
    int n = 0;
    for (int t = 0; t < s->n_tasks; t++) n += s->tasks[t].kind == SIM_TRANSFER;
    return n;
}

Test(sim_bound, size_estimate_matches_the_task_graph)
{
    struct { const char *net, *cl; int gpus; baseline_kind b; } cases[] = {
        {"inception_v3", "p100-4x4", 16, BASE_MODEL}, {"vgg16", "p100-4x4", 16, BASE_OWT},
        {"resnet50", "p100-4x4", 8, BASE_DATA}, {"alexnet", "dgx1-v100", 8, BASE_MODEL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plan *p = open_plan(cases[i].net, cases[i].cl, cases[i].gpus, 0);
        int *ci = malloc(sizeof(int) * (size_t)p->net->n_layers);
        strategy_baseline(p->cm, cases[i].b, ci);
        sim_size z;
        sim_size_estimate(p->cm, ci, &z);
        sim_result *s = sim_run(p->cm, ci, NULL);
        double pieces = count_pieces(s), compute = s->n_tasks - pieces;
        cr_assert(compute <= z.compute_tasks + p->net->n_layers && compute >= z.compute_tasks,
                  "%s: %.0f compute tasks (and syncs), estimated %.0f", cases[i].net, compute, z.compute_tasks);
        cr_assert(fabs(z.pieces - pieces) <= 0.02 * pieces + 1e-9, "%s: %.0f pieces, estimated %.0f", cases[i].net,
                  pieces, z.pieces);
        cr_assert(z.tasks >= s->n_tasks * 0.98 && z.bytes >= z.tasks * SIM_BYTES_PER_TASK);
        sim_free(s);
        free(ci);
        plan_free(p);
    }
    /* Inception-v3 model-parallel on 1024 GPUs, the case: about 10^7 tasks, estimated at once */
    lw_error err = {0};
    network *n = plan_load_network("inception_v3", &err);
    cluster *c = plan_load_cluster("tests/fixtures/clusters/h100-128x8.json", &err);
    cr_assert(n && c, "%s", err.msg);
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = (plan_settings){.gpus = 1024}, .unsearched = 1}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    int *ci = malloc(sizeof(int) * (size_t)p->net->n_layers);
    strategy_baseline(p->cm, BASE_MODEL, ci);
    double t0 = lw_now();
    sim_size z;
    sim_size_estimate(p->cm, ci, &z);
    cr_assert(lw_now() - t0 < 2.0, "%.2f s", lw_now() - t0);
    cr_assert(z.tasks > 5e6 && z.bytes > 1e9, "%.3g tasks, %.3g bytes", z.tasks, z.bytes);
    /* refused up front under a time limit its least time passes, with the figures */
    cr_assert_eq(sim_refuse_too_large(p->cm, ci, 0, 0, 1.0, NULL, &err), 1);
    cr_assert_eq(err.code, 1);
    cr_assert(strstr(err.msg, "too large") && strstr(err.msg, "1024 GPUs") && strstr(err.msg, "tasks") &&
              strstr(err.msg, "MB") && strstr(err.msg, "LAYERWISE_MAX_SIM_S"), "%s", err.msg);
    cr_assert_eq(sim_refuse_too_large(p->cm, ci, 0, 0, 1e6, NULL, &err), 0, "%s", err.msg);
    /* and with a document of 10^7 tasks, 10^6 GB is past any machine */
    cr_assert_eq(sim_refuse_too_large(p->cm, ci, 1e11, 0, 1e6, NULL, &err), 1);
    cr_assert(strstr(err.msg, "MB"), "%s", err.msg);
    free(ci);
    plan_free(p);
}

/* sim_run's progress: called at once, fractions that never go back, 1 at
 * the end, one as the schedule starts (past half), a projection never
 * below the time spent; non-zero from it stops the run (NULL, nothing
 * leaked: ASan), in the build or in the schedule, in either overlap mode. */
typedef struct progress_log {
    int calls, stop_at, stop_in_schedule, scheduling;
    double last, last_spent;
    int ended;
} progress_log;

static int log_progress(double fraction, double spent_s, double projected_s, void *user)
{
    progress_log *l = user;
    cr_assert(fraction >= l->last && fraction <= 1.0, "%.3f after %.3f", fraction, l->last);
    cr_assert(spent_s >= l->last_spent && projected_s >= 0);
    cr_assert(projected_s >= spent_s, "projected %.3f, spent %.3f", projected_s, spent_s);
    l->last = fraction;
    l->last_spent = spent_s;
    l->calls++;
    if (fraction >= 1.0) l->ended++;
    if (fraction >= 0.5 && fraction < 1.0) l->scheduling++;
    if (l->stop_in_schedule) return fraction >= 0.5 && fraction < 1.0;
    return l->stop_at > 0 && l->calls >= l->stop_at;
}

Test(sim_bound, progress_reports_and_stops)
{
    plan *p = open_plan("inception_v3", "p100-4x4", 16, 0);
    int *ci = malloc(sizeof(int) * (size_t)p->net->n_layers);
    strategy_baseline(p->cm, BASE_MODEL, ci);
    for (int ov = 0; ov < 2; ov++) {
        progress_log l = {0};
        sim_options o = {.overlap = ov ? SIM_OVERLAP_FULL : SIM_OVERLAP_NONE, .progress = log_progress,
                         .progress_user = &l};
        sim_result *s = sim_run(p->cm, ci, &o);
        cr_assert_not_null(s);
        cr_assert(l.calls >= 3 && l.ended == 1 && l.last == 1.0 && l.scheduling >= 1, "%d calls, %d ends, %d scheduling",
                  l.calls, l.ended, l.scheduling);
        sim_result *plain = sim_run(p->cm, ci, &(sim_options){.overlap = o.overlap});
        cr_assert_eq(s->step_ms, plain->step_ms, "progress changes nothing");
        sim_free(plain);
        sim_free(s);
        /* stopped at its first call (the build) */
        l = (progress_log){.stop_at = 1};
        cr_assert_null(sim_run(p->cm, ci, &o));
        cr_assert_eq(l.calls, 1);
        /* stopped as the schedule starts */
        l = (progress_log){.stop_in_schedule = 1};
        cr_assert_null(sim_run(p->cm, ci, &o));
        cr_assert(l.scheduling == 1 && l.ended == 0, "%d, %d", l.scheduling, l.ended);
    }
    free(ci);
    plan_free(p);
}

/* sim_step_ms (summaries, refine) skips Eq. 1's evaluation but simulates
 * the same step; over its task limit it is NaN. */
Test(sim, step_only_equals_the_full_run)
{
    lw_error err = {0};
    plan_settings set = {16, 0, 0, 0};
    plan *p = plan_open(plan_load_network("vgg16", &err), plan_load_cluster("p100-4x4", &err), NULL,
        &(plan_options){.set = set}, &err);
    cr_assert_not_null(p, "%s", err.msg);
    sim_result *s = sim_run(p->cm, p->best, NULL);
    cr_assert(s->eq1_ms > 0);
    cr_assert_eq(sim_step_ms(p->cm, p->best, 0), s->step_ms);
    cr_assert_eq(sim_step_ms(p->cm, p->best, s->n_tasks), s->step_ms);
    cr_assert(isnan(sim_step_ms(p->cm, p->best, s->n_tasks - 1)));
    sim_options o = {.overlap = SIM_OVERLAP_FULL, .skip_eq1 = 1};
    sim_result *q = sim_run(p->cm, p->best, &o);
    cr_assert_eq(q->eq1_ms, 0);
    cr_assert_eq(q->n_tasks, s->n_tasks);
    sim_free(q);
    sim_free(s);
    plan_free(p);
}

/* Issue 34 (1): --overlap ddp schedules a step as PyTorch DDP runs it. The
 * first bucket is capped at 1 MiB (f3 alone), the last holds f2 and f1 and
 * can start only when f1's weight gradient, the last of the backward pass,
 * is done: its all-reduce and the optimizer step after it lie on the
 * critical path and add to the step, where full overlap hides everything
 * but the last bucket. A compute task that shares its GPU with an all-reduce
 * is slowed by SIM_DDP_CONTENTION of the time they overlap. */
Test(sim, ddp_exposes_the_last_bucket_and_the_optimizer_step)
{
    network *n = net_ok(dp_net);
    cluster *c = make_cluster(1, 2, 1, 1, "ring-allreduce");
    cost_model *m = build(n, c, 2, 256);
    int ci[4];
    for (int li = 0; li < 4; li++) ci[li] = cfg_index(m, n->layers[li].name, "n2");
    sim_options od = {.overlap = SIM_OVERLAP_DDP, .bucket_bytes = 5e6}, of = {.overlap = SIM_OVERLAP_FULL, .bucket_bytes = 5e6};
    sim_result *s = sim_run(m, ci, &od);
    sim_result *f = sim_run(m, ci, &of);
    const sim_task *last = NULL;
    int syncs = 0;
    for (int k = 0; k < s->n_tasks; k++) {
        const sim_task *t = &s->tasks[k];
        if (t->kind == SIM_SYNC) {
            syncs++;
            cr_assert_eq(t->n_layers, t->layer == 3 ? 1 : 2, "layer %d: %d layers", t->layer, t->n_layers);
            if (!last || t->end_ms > last->end_ms) last = t;
        }
    }
    cr_assert_eq(syncs, 2);
    cr_assert_eq(last->layer, 2); /* f2 and f1 */
    for (int g = 0; g < 2; g++) {
        const sim_task *w = find_task(s, m, "f1", SIM_BACKWARD_WEIGHT, g);
        cr_assert_geq(last->start_ms, w->end_ms - 1e-12);
        const sim_task *o = find_task(s, m, "data", SIM_OPTIMIZER, g);
        cr_assert_geq(o->start_ms, last->end_ms - 1e-12);
        /* 3 x 1049600 weights x 20 bytes at 500 GB/s x the memory efficiency, one kernel */
        cr_assert_gt(o->dur_ms, 0);
        ASSERT_NEAR(s->step_ms, o->end_ms, 1e-9);
        cr_assert_eq(o->n_res, 1); /* it holds its GPU's compute stream */
        cr_assert_eq(s->res_of[o->res0], g);
    }
    /* the critical path runs through the last bucket's all-reduce into the optimizer step */
    int through = 0;
    for (int i = 0; i < s->n_crit; i++) through |= &s->tasks[s->crit[i]] == last;
    cr_assert(through, "the last bucket's all-reduce is not on the critical path");
    cr_assert_eq(s->tasks[s->crit[s->n_crit - 1]].kind, SIM_OPTIMIZER);
    const sim_task *o0 = find_task(s, m, "data", SIM_OPTIMIZER, 0);
    cr_assert_geq(s->step_ms, last->start_ms + last->dur_ms + o0->dur_ms - 1e-12);
    cr_assert_gt(s->step_ms, f->step_ms);
    /* f3's all-reduce (4.2 MB at 1 GB/s, about 4 ms) runs while f1's
     * weight gradient is computed: slower than under full overlap */
    const sim_task *bd = find_task(s, m, "f1", SIM_BACKWARD_WEIGHT, 0), *bf = find_task(f, m, "f1", SIM_BACKWARD_WEIGHT, 0);
    cr_assert_gt(bd->dur_ms, bf->dur_ms * 1.01);
    cr_assert_leq(bd->dur_ms, bf->dur_ms * (1 + SIM_DDP_CONTENTION) + 1e-12);
    sim_free(s);
    sim_free(f);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}
