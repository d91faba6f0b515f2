/*
 * The cost model on transformer layers (issue 32): partial sums (r) and
 * replicas (x) in t_x (cost_shard.c) against the collectives they amount
 * to, t_s of replicas and contraction splits, the generic evaluator
 * against the closed forms where both apply, and the search against brute
 * force on small transformer graphs. Networks are made by hand (shapes,
 * dims, contraction sizes and parameters as the loader sets them), so
 * these tests pin the cost model alone.
 */
#include <criterion/criterion.h>

#include "cost.h"
#include "net_json.h"
#include "search.h"
#include "sim.h"
#include "strategy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REL_EQ(a, b, tol) (fabs((a) - (b)) <= (tol) * fmax(fabs(a), fabs(b)) + 1e-300)
#define ASSERT_REL(a, b, tol)                                                                                      \
    cr_assert(REL_EQ((double)(a), (double)(b), tol), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

#define NDX (DIMMASK(DIM_N) | DIMMASK(DIM_H) | DIMMASK(DIM_X))          /* norms */
#define NHC (DIMMASK(DIM_N) | DIMMASK(DIM_H) | DIMMASK(DIM_C))          /* attention */
#define NHCR (NHC | DIMMASK(DIM_R))                                     /* linear, lm_head, embedding */
#define NHCX (NHC | DIMMASK(DIM_X))                                     /* element-wise */
#define NH (DIMMASK(DIM_N) | DIMMASK(DIM_H))                            /* the input */

/* One layer of a hand-made network: rank 3, features c, sequence h. */
typedef struct lspec {
    const char *name;
    layer_type type;
    int in0, in1; /* -1: none */
    long c, h;
    unsigned dims;
    long contract;
    int heads;
    long params;
} lspec;

static network *mknet(const lspec *s, int n)
{
    network *net = calloc(1, sizeof *net);
    net->name = strdup("hand");
    net->n_layers = n;
    net->layers = calloc((size_t)n, sizeof(layer));
    for (int i = 0; i < n; i++) {
        layer *l = &net->layers[i];
        l->name = strdup(s[i].name);
        l->type = s[i].type;
        l->n_inputs = (s[i].in0 >= 0) + (s[i].in1 >= 0);
        l->inputs = calloc(2, sizeof(int));
        if (s[i].in0 >= 0) l->inputs[0] = s[i].in0;
        if (s[i].in1 >= 0) l->inputs[1] = s[i].in1;
        l->out = (shape){s[i].c, s[i].h, 1, 3};
        l->dims = s[i].dims;
        l->contract = s[i].contract;
        l->heads = l->kv_heads = s[i].heads;
        l->head_dim = s[i].heads ? s[i].c / s[i].heads : 0;
        l->n_params = s[i].params;
        l->tied = -1;
        for (int k = 0; k < l->n_inputs; k++) net->layers[l->inputs[k]].n_outputs++;
    }
    return net;
}

/* A pre-LN MLP block: x -> ln -> fc1 (4x) -> gelu -> fc2 -> add(x, .) */
static network *mlp_block(long F, long S)
{
    const lspec s[] = {
        {"x", LT_INPUT, -1, -1, F, S, NH, 0, 0, 0},
        {"ln", LT_LAYERNORM, 0, -1, F, S, NDX, 0, 0, 2 * F},
        {"fc1", LT_LINEAR, 1, -1, 4 * F, S, NHCR, F, 0, F * 4 * F + 4 * F},
        {"gelu", LT_GELU, 2, -1, 4 * F, S, NHCX, 0, 0, 0},
        {"fc2", LT_LINEAR, 3, -1, F, S, NHCR, 4 * F, 0, 4 * F * F + F},
        {"add", LT_ADD, 0, 4, F, S, NHCX, 0, 0, 0},
    };
    return mknet(s, (int)(sizeof s / sizeof s[0]));
}

static cluster *cluster_str(const char *json)
{
    lw_error err = {0};
    cluster *c = cluster_from_json(json, strlen(json), "inline-cluster.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

/* 2 nodes x 4 GPUs, uniform links, NCCL latencies */
static cluster *two_nodes(void)
{
    return cluster_str(
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"x\", \"nodes\": 2, \"gpus_per_node\": 4,"
        " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
        " \"intra_node\": {\"bandwidth_gbs\": 10, \"latency_us\": 3}, \"inter_node\": {\"bandwidth_gbs\": 1,"
        " \"latency_us\": 8, \"nics_per_node\": 2},"
        " \"collectives\": {\"call_latency_us\": 10, \"intra_step_us\": 2, \"inter_step_us\": 7},"
        " \"sync\": \"ring-allreduce\"}");
}

static cost_model *open_model(const network *n, const cluster *c, int gpus, long batch)
{
    lw_error err = {0};
    cost_model *m = cost_model_open(n, c, NULL, gpus, batch, &err);
    cr_assert_not_null(m, "%s", err.msg);
    return m;
}

static config CFG(int n, int c, int h, int r, int x)
{
    return (config){{n, c, h, 1, r, x}};
}

/* The edge into layer `to`'s input slot `slot`. */
static int edge_of(const cost_model *m, int to, int slot)
{
    for (int e = 0; e < m->n_edges; e++)
        if (m->e_to[e] == to && m->e_slot[e] == slot) return e;
    cr_assert_fail("no edge into %d slot %d", to, slot);
    return -1;
}

static double ring_allreduce_ms(const cluster *c, int first, int n, double bytes)
{
    int ring[64];
    for (int i = 0; i < n; i++) ring[i] = first + i;
    cost_ring_order(c, ring, n);
    return 1e3 * cost_allreduce_s(c, ring, n, bytes);
}

/* issue 32's "How we will know": a contraction split (fc2, r = 4, its
 * partial sums of the whole output on GPUs 0-3) feeding a consumer
 * replicated on the same GPUs (add, x = 4) costs exactly one ring
 * all-reduce of the piece's bytes: a reduce-scatter and an all-gather in
 * forward, nothing in backward (each replica's gradient is on its GPU). */
Test(partial_sums, into_replicas_is_one_allreduce)
{
    const long F = 64, S = 32, B = 4;
    network *n = mlp_block(F, S);
    cluster *c = two_nodes();
    for (int gpus = 2; gpus <= 8; gpus *= 2) {
        cost_model *m = open_model(n, c, gpus, B);
        const int e = edge_of(m, 5, 1);
        config cp = CFG(1, 1, 1, gpus, 1), cc = CFG(1, 1, 1, 1, gpus);
        const double piece = (double)B * S * F * m->elem_bytes, want = ring_allreduce_ms(c, 0, gpus, piece);
        double bytes = 0, f = 0, b = 0;
        const double t = cost_t_x(m, e, &cp, &cc, &bytes);
        cr_assert_eq(t, want, "%d GPUs: t_x %.17g, all-reduce %.17g", gpus, t, want);
        cost_t_x_parts(m, e, &cp, &cc, &f, &b);
        cr_assert_eq(f, want);
        cr_assert_eq(b, 0);
        /* bytes: (n - 1) / n of the buffer from each of n GPUs, twice */
        ASSERT_REL(bytes, 2.0 * (gpus - 1) * piece, 1e-15);
        /* the same with a sample split outside: two groups at once, each
         * its own all-reduce of its half */
        if (gpus >= 4) {
            cp = CFG(2, 1, 1, gpus / 2, 1), cc = CFG(2, 1, 1, 1, gpus / 2);
            const double t2 = cost_t_x(m, e, &cp, &cc, NULL);
            const double one = ring_allreduce_ms(c, 0, gpus / 2, piece / 2);
            if (gpus == 4) cr_assert_eq(t2, one, "two rings on one node: %.17g, one alone %.17g", t2, one);
            cr_assert(t2 >= one);
        }
        cost_model_free(m);
    }
    cluster_free(c);
    net_free(n);
}

/* An lm_head split by its hidden features (r) holds partial sums of its
 * logits; the loss needs them summed, and the head is the last layer, so
 * no edge charges it: its t_c does, one ring all-reduce of the task's
 * logits among the r tasks (a reduce-scatter forward, the gradient's
 * all-gather backward). Before, the sum was free and the search split
 * GPT-2's head c2 r4. Checked as the difference between two clusters that
 * differ only in their links (the GEMM's time is the same on both). */
Test(partial_sums, lm_head_pays_the_reduction_of_its_logits)
{
    const long F = 64, S = 32, V = 1000, B = 4;
    const lspec sp[] = {
        {"x", LT_INPUT, -1, -1, F, S, NH, 0, 0, 0},
        {"lm_head", LT_LM_HEAD, 0, -1, V, S, NHCR, F, 0, F * V},
    };
    network *n = mknet(sp, 2);
    cluster *slow = two_nodes();
    cluster *fast = cluster_str(
        "{\"format\": \"layerwise-cluster/1\", \"name\": \"y\", \"nodes\": 2, \"gpus_per_node\": 4,"
        " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
        " \"intra_node\": {\"bandwidth_gbs\": 1000, \"latency_us\": 0}, \"inter_node\": {\"bandwidth_gbs\": 100,"
        " \"latency_us\": 0, \"nics_per_node\": 2},"
        " \"collectives\": {\"call_latency_us\": 0, \"intra_step_us\": 0, \"inter_step_us\": 0},"
        " \"sync\": \"ring-allreduce\"}");
    for (int r = 2; r <= 4; r *= 2) {
        cost_model *a = open_model(n, slow, r, B), *b = open_model(n, fast, r, B);
        config c = CFG(1, 1, 1, r, 1);
        const double piece = (double)B * S * V * a->elem_bytes;
        const double want = ring_allreduce_ms(slow, 0, r, piece) - ring_allreduce_ms(fast, 0, r, piece);
        const double got = cost_t_c(a, 1, &c, NULL) - cost_t_c(b, 1, &c, NULL);
        cr_assert_gt(want, 0);
        ASSERT_REL(got, want, 1e-9);
        /* split by vocabulary alone, nothing to reduce: the same t_c on both */
        config v = CFG(1, r, 1, 1, 1);
        cr_assert_eq(cost_t_c(a, 1, &v, NULL), cost_t_c(b, 1, &v, NULL));
        cost_model_free(a);
        cost_model_free(b);
    }
    cluster_free(slow);
    cluster_free(fast);
    net_free(n);
}

/* A producer with partial sums (r) feeding two consumers (an embedding
 * read by a block's LayerNorm and by its residual add) reduce-scatters
 * them once: the sum, in the scattered layout, serves both, so only its
 * first out-edge carries the reduce-scatter; each consumer still pays its
 * own transfer and, backward, its own gradient's all-gather. Before, each
 * edge charged the reduce-scatter. */
Test(partial_sums, two_consumers_share_one_reduce_scatter)
{
    const long F = 64, S = 32, B = 4;
    const lspec sp[] = {
        {"x", LT_INPUT, -1, -1, F, S, NH, 0, 0, 0},
        {"fc", LT_LINEAR, 0, -1, F, S, NHCR, F, 0, F * F + F},
        {"a", LT_GELU, 1, -1, F, S, NHCX, 0, 0, 0},
        {"b", LT_GELU, 1, -1, F, S, NHCX, 0, 0, 0},
        {"sum", LT_ADD, 2, 3, F, S, NHCX, 0, 0, 0},
    };
    network *n = mknet(sp, 5);
    cluster *c = two_nodes();
    for (int gpus = 2; gpus <= 8; gpus *= 2) {
        cost_model *m = open_model(n, c, gpus, B);
        const int ea = edge_of(m, 2, 0), eb = edge_of(m, 3, 0);
        config cp = CFG(1, 1, 1, gpus, 1), cc = CFG(1, 1, gpus, 1, 1);
        const double piece = (double)B * S * F * m->elem_bytes;
        int ring[8];
        for (int i = 0; i < gpus; i++) ring[i] = i;
        cost_ring_order(c, ring, gpus);
        const double rs = 1e3 * cost_reduce_scatter_s(c, ring, gpus, piece);
        const double ag = 1e3 * cost_allgather_s(c, ring, gpus, piece);
        double fa, ba, fb, bb;
        cost_t_x_parts(m, ea, &cp, &cc, &fa, &ba);
        cost_t_x_parts(m, eb, &cp, &cc, &fb, &bb);
        cr_assert_eq(fa, rs, "%d GPUs: the first consumer's edge carries the reduce-scatter", gpus);
        cr_assert_eq(fb, 0, "%d GPUs: the second reads the same sum: %.17g ms", gpus, fb);
        ASSERT_REL(ba, ag, 1e-12);
        ASSERT_REL(bb, ag, 1e-12);
        cost_model_free(m);
    }
    cluster_free(c);
    net_free(n);
}

/* Sequence parallelism: fc2's partial sums feeding a consumer split by
 * sequence r ways on the same GPUs: a reduce-scatter forward, the
 * all-gather of the gradient backward, nothing else. */
Test(partial_sums, into_sequence_split_is_reduce_scatter)
{
    const long F = 64, S = 32, B = 4;
    network *n = mlp_block(F, S);
    cluster *c = two_nodes();
    for (int gpus = 2; gpus <= 8; gpus *= 2) {
        cost_model *m = open_model(n, c, gpus, B);
        const int e = edge_of(m, 5, 1);
        config cp = CFG(1, 1, 1, gpus, 1), cc = CFG(1, 1, gpus, 1, 1);
        const double piece = (double)B * S * F * m->elem_bytes;
        int ring[8];
        for (int i = 0; i < gpus; i++) ring[i] = i;
        cost_ring_order(c, ring, gpus);
        double f, b;
        const double t = cost_t_x_parts(m, e, &cp, &cc, &f, &b);
        cr_assert_eq(f, 1e3 * cost_reduce_scatter_s(c, ring, gpus, piece));
        ASSERT_REL(b, 1e3 * cost_allgather_s(c, ring, gpus, piece), 1e-12);
        cr_assert_eq(t, cost_t_x(m, e, &cp, &cc, NULL));
        /* one of each is the all-reduce, exactly */
        cr_assert_eq(cost_reduce_scatter_s(c, ring, gpus, piece) + cost_allgather_s(c, ring, gpus, piece),
                     cost_allreduce_s(c, ring, gpus, piece));
        cost_model_free(m);
    }
    cluster_free(c);
    net_free(n);
}

/* Megatron's column-parallel fc1 (split by output features, c = 4)
 * reading a LayerNorm replicated on its GPUs (x = 4): nothing forward
 * (each reads its own replica); in backward each fc1 task holds a partial
 * gradient of the whole LayerNorm output, and the replicas need the sum:
 * one ring all-reduce among the 4, exactly. Where the readers are not the
 * replicas' own GPUs, the gradients go to the scattered layout and are
 * all-gathered. */
Test(replicas, column_parallel_reading_replicas_pays_allreduce_backward)
{
    const long F = 256, S = 64, B = 8;
    network *n = mlp_block(F, S);
    cluster *c = two_nodes();
    cost_model *m = open_model(n, c, 8, B);
    const int e = edge_of(m, 2, 0);
    config cp = CFG(1, 1, 1, 1, 4), cc = CFG(1, 4, 1, 1, 1);
    const double eb = m->elem_bytes, piece = (double)B * S * F * eb;
    double f, b, bytes;
    cost_t_x_parts(m, e, &cp, &cc, &f, &b);
    cost_t_x(m, e, &cp, &cc, &bytes);
    cr_assert_eq(f, 0);
    int ptask[8];
    double vol[8];
    cr_assert_eq(cost_overlaps_of(m, e, &cp, &cc, 2, ptask, vol), 1);
    cr_assert_eq(ptask[0], 2, "the reader on GPU 2 reads the replica there");
    ASSERT_REL(vol[0], (double)B * S * F, 1e-15);
    const double ar = ring_allreduce_ms(c, 0, 4, piece);
    cr_assert_eq(b, ar, "backward %.17g, all-reduce %.17g", b, ar);
    ASSERT_REL(bytes, 2 * 3 * piece, 1e-15);
    /* the same with a sample split outside: two groups at once */
    config cp2 = CFG(2, 1, 1, 1, 4), cc2 = CFG(2, 4, 1, 1, 1);
    cost_t_x_parts(m, e, &cp2, &cc2, &f, &b);
    cr_assert_eq(f, 0);
    cr_assert(b >= ring_allreduce_ms(c, 0, 4, piece / 2));
    /* readers on other GPUs than the replicas (x = 2 on GPUs 0-1, c = 4 on
     * 0-3): by hand, GPU 0 gets half the piece from GPUs 1, 2, 3 (3 us +
     * bytes / 10 GB/s each), then the all-gather among GPUs 0-1 */
    config cp3 = CFG(1, 1, 1, 1, 2);
    cost_t_x_parts(m, e, &cp3, &cc, &f, &b);
    const double p2p = 3 * (3e-6 + piece / 2 / 10e9);
    ASSERT_REL(b, 1e3 * p2p + ring_allreduce_ms(c, 0, 2, piece) / 2, 1e-12);
    /* a consumer replicated on the same GPUs reading replicas: free */
    config cx = CFG(1, 1, 1, 1, 4);
    cr_assert_eq(cost_t_x(m, edge_of(m, 5, 0), &cp, &cx, NULL), 0);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* Replicas and contraction splits in t_s: replicas sync only with tasks of
 * other sample / sequence coordinates (one ring per replica index), and r
 * shards the weights as c does. */
Test(sync, replicas_and_contraction)
{
    const long F = 64, S = 32, B = 8;
    network *n = mlp_block(F, S);
    cluster *c = two_nodes();
    cost_model *m = open_model(n, c, 8, B);
    double b1, b2;
    config n2 = CFG(2, 1, 1, 1, 1), n2x2 = CFG(2, 1, 1, 1, 2), x4 = CFG(1, 1, 1, 1, 4);
    const double t1 = cost_t_s(m, 1, &n2, &b1), t2 = cost_t_s(m, 1, &n2x2, &b2);
    cr_assert(t1 > 0);
    cr_assert_eq(t2, t1, "rings {0,2} and {1,3} on one node take as long as {0,1}: %.17g, %.17g", t2, t1);
    ASSERT_REL(b2, 2 * b1, 1e-15);
    cr_assert_eq(cost_t_s(m, 1, &x4, NULL), 0); /* replicas alone: nothing to sync */
    config n2r2 = CFG(2, 1, 1, 2, 1), n2c2 = CFG(2, 2, 1, 1, 1), s2r2 = CFG(1, 1, 2, 2, 1), r4 = CFG(1, 1, 1, 4, 1);
    double br, bc;
    cr_assert_eq(cost_t_s(m, 2, &n2r2, &br), cost_t_s(m, 2, &n2c2, &bc));
    ASSERT_REL(br, bc, 1e-15);
    cr_assert_eq(cost_t_s(m, 2, &s2r2, NULL), cost_t_s(m, 2, &n2c2, NULL)); /* sequence syncs as samples do */
    cr_assert_eq(cost_t_s(m, 2, &r4, NULL), 0);
    /* memory: r shards the weights, x replicates them */
    memory_parts pr, px, p1;
    config one = CONFIG_ONE;
    cost_memory_task(m, 2, &r4, 3, &pr);
    cost_memory_task(m, 2, &one, 0, &p1);
    ASSERT_REL(pr.weights, p1.weights / 4, 1e-15);
    cost_memory_task(m, 1, &x4, 3, &px);
    cost_memory_task(m, 1, &one, 0, &p1);
    ASSERT_REL(px.weights, p1.weights, 1e-15);
    ASSERT_REL(px.activations, p1.activations, 1e-15);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* An attention block, Llama's MLP with SwiGLU, and a ViT's tail (class
 * token, its selection, a head), for the checks over every edge. */
static network *attn_block(long F, long S, int heads)
{
    const lspec s[] = {
        {"x", LT_INPUT, -1, -1, F, S, NH, 0, 0, 0},
        {"ln", LT_LAYERNORM, 0, -1, F, S, NDX, 0, 0, 2 * F},
        {"attn", LT_ATTENTION, 1, -1, F, S, NHC, 0, heads, 3 * F * F + 3 * F},
        {"proj", LT_LINEAR, 2, -1, F, S, NHCR, F, 0, F * F + F},
        {"add", LT_ADD, 0, 3, F, S, NHCX, 0, 0, 0},
    };
    return mknet(s, (int)(sizeof s / sizeof s[0]));
}

static network *swiglu_block(long F, long S)
{
    const lspec s[] = {
        {"x", LT_INPUT, -1, -1, F, S, NH, 0, 0, 0},
        {"ln", LT_RMSNORM, 0, -1, F, S, NDX, 0, 0, F},
        {"fc1", LT_LINEAR, 1, -1, 6 * F, S, NHCR, F, 0, F * 6 * F},
        {"swiglu", LT_SWIGLU, 2, -1, 3 * F, S, NHCX, 0, 0, 0},
        {"fc2", LT_LINEAR, 3, -1, F, S, NHCR, 3 * F, 0, 3 * F * F},
        {"add", LT_ADD, 0, 4, F, S, NHCX, 0, 0, 0},
    };
    return mknet(s, (int)(sizeof s / sizeof s[0]));
}

static network *vit_tail(long F, long S)
{
    const unsigned NCX = DIMMASK(DIM_N) | DIMMASK(DIM_C) | DIMMASK(DIM_X);
    const lspec s[] = {
        {"x", LT_INPUT, -1, -1, F, S, NH, 0, 0, 0},
        {"cls", LT_CLS_TOKEN, 0, -1, F, S + 1, NCX, 0, 0, F + (S + 1) * F},
        {"ln", LT_LAYERNORM, 1, -1, F, S + 1, NDX, 0, 0, 2 * F},
        {"sel", LT_SELECT_TOKEN, 2, -1, F, 1, NCX, 0, 0, 0},
        {"head", LT_LM_HEAD, 3, -1, 10, 1, NHCR, F, 0, 10 * F},
    };
    return mknet(s, (int)(sizeof s / sizeof s[0]));
}

/* Where neither config has r or x, the generic evaluator's sums are the
 * paper's model: equal to the closed form (and to the per-piece reference)
 * on every rank-3 edge kind (features read whole, sequence kept, swiglu's
 * proportional features, the class token's offset, a selected position). */
static void generic_matches_closed_form(network *n, int gpus, long batch)
{
    cluster *c = two_nodes();
    cost_model *m = open_model(n, c, gpus, batch);
    cost_tx_reference = 1;
    cost_model *ref = open_model(n, c, gpus, batch);
    cost_tx_reference = 0;
    long checked = 0;
    for (int e = 0; e < m->n_edges; e++) {
        const int a = m->e_from[e], b = m->e_to[e];
        for (int i = 0; i < m->n_configs[a]; i++)
            for (int j = 0; j < m->n_configs[b]; j++) {
                const config *cp = &m->configs[a][i], *cc = &m->configs[b][j];
                double bc, bg, br, f, bw;
                const double tc = cost_t_x(m, e, cp, cc, &bc), tr = cost_t_x(ref, e, cp, cc, &br);
                const double tg = cost_t_x_parts(m, e, cp, cc, &f, &bw);
                if (cp->deg[DIM_R] > 1 || cp->deg[DIM_X] > 1 || cc->deg[DIM_R] > 1 || cc->deg[DIM_X] > 1) {
                    cr_assert_eq(tc, tr, "r/x entries take one path"); /* the generic one, either way */
                    cr_assert(tc >= 0 && f >= 0 && bw >= -1e-9 * tc);
                    ASSERT_REL(tg, tc, 1e-12);
                    continue;
                }
                char s1[32], s2[32];
                config_format(cp, s1, sizeof s1);
                config_format(cc, s2, sizeof s2);
                cr_assert(REL_EQ(tc, tr, 1e-12), "edge %d %s -> %s: closed %.17g reference %.17g", e, s1, s2, tc, tr);
                cr_assert(REL_EQ(tg, tc, 1e-12), "edge %d %s -> %s: generic %.17g closed %.17g", e, s1, s2, tg, tc);
                cost_t_x(m, e, cp, cc, &bg);
                ASSERT_REL(bc, br, 1e-15);
                checked++;
            }
    }
    cr_assert(checked > 50);
    cost_model_free(ref);
    cost_model_free(m);
    cluster_free(c);
}

Test(generic, equals_closed_form_on_rank3_edges)
{
    network *nets[] = {mlp_block(16, 8), attn_block(16, 8, 4), swiglu_block(16, 8), vit_tail(16, 7)};
    for (int i = 0; i < 4; i++) {
        generic_matches_closed_form(nets[i], 4, 4);
        generic_matches_closed_form(nets[i], 8, 2);
        net_free(nets[i]);
    }
}

/* The search's optimum on small transformer graphs at 2-4 GPUs equals
 * brute force over every combination of configs, and a model without
 * tables (what `costs --json` and eval use) evaluates it to the same
 * total. */
static void search_equals_brute_force(network *n, int gpus, long batch)
{
    cluster *c = two_nodes();
    lw_error err = {0};
    cost_model *m = cost_model_build(n, c, NULL, gpus, batch, &err);
    cr_assert_not_null(m, "%s", err.msg);
    cost_graph *g = cost_model_graph(m);
    double space = 1;
    for (int i = 0; i < m->n_layers; i++) space *= m->n_configs[i];
    int *best = calloc((size_t)m->n_layers, sizeof(int));
    const double bf = search_brute_force(g, best, 2e7);
    cr_assert(bf >= 0, "brute force refused (%g combinations)", space);
    search_result *r = search_optimum(g);
    cr_assert_not_null(r);
    cr_assert(REL_EQ(r->cost, bf, 1e-12), "%d GPUs: search %.17g, brute force %.17g", gpus, r->cost, bf);
    cost_model *o = open_model(n, c, gpus, batch);
    strategy_eval ev, eo;
    strategy_evaluate(m, r->config, &ev);
    strategy_evaluate(o, r->config, &eo);
    ASSERT_REL(ev.total_ms, r->cost, 1e-12);
    cr_assert_eq(ev.total_ms, eo.total_ms, "tables %.17g, single entries %.17g", ev.total_ms, eo.total_ms);
    int uses_rx = 0;
    for (int i = 0; i < m->n_layers; i++)
        uses_rx |= m->configs[i][r->config[i]].deg[DIM_R] > 1 || m->configs[i][r->config[i]].deg[DIM_X] > 1;
    cr_log_info("%s at %d GPUs: %g combinations, optimum %.6g ms%s", n->name, gpus, space, bf,
                uses_rx ? " (with r or x)" : "");
    strategy_eval_free(&ev);
    strategy_eval_free(&eo);
    search_result_free(r);
    free(best);
    cg_free(g);
    cost_model_free(o);
    cost_model_free(m);
    cluster_free(c);
}

Test(search, equals_brute_force_on_transformer_blocks, .timeout = 300)
{
    for (int gpus = 2; gpus <= 4; gpus *= 2) {
        network *a = mlp_block(512, 128), *b = attn_block(512, 128, 8), *s = swiglu_block(256, 64);
        search_equals_brute_force(a, gpus, 8);
        search_equals_brute_force(b, gpus, 8);
        search_equals_brute_force(s, gpus, 8);
        net_free(a);
        net_free(b);
        net_free(s);
    }
    network *v = vit_tail(256, 64);
    search_equals_brute_force(v, 4, 16);
    net_free(v);
}

/* t_c of the transformer layers: replicas each pay the piece's t_c, r
 * divides the GEMM, attention charges context parallelism's K/V
 * all-gather (forward) and reduce-scatter (backward), a standard kernel
 * moves its scores, recompute runs forward work again. */
Test(compute, transformer_layers)
{
    const long F = 512, S = 256, B = 8;
    network *n = attn_block(F, S, 8);
    network *mb = mlp_block(F, S);
    cluster *c = two_nodes();
    cost_model *m = open_model(n, c, 8, B), *mm = open_model(mb, c, 8, B);
    config one = CONFIG_ONE, x4 = CFG(1, 1, 1, 1, 4), r2 = CFG(1, 1, 1, 2, 1), r4 = CFG(1, 1, 1, 4, 1);
    config n2 = CFG(2, 1, 1, 1, 1), h2 = CFG(1, 1, 2, 1, 1), c2 = CFG(1, 2, 1, 1, 1);
    cr_assert_eq(cost_t_c(m, 1, &x4, NULL), cost_t_c(m, 1, &one, NULL));
    cr_assert_eq(cost_t_c(mm, 3, &x4, NULL), cost_t_c(mm, 3, &one, NULL));
    const double l1 = cost_t_c(mm, 2, &one, NULL), l2 = cost_t_c(mm, 2, &r2, NULL), l4 = cost_t_c(mm, 2, &r4, NULL);
    cr_assert(l2 < l1 && l4 < l2, "fc1 r1 %g r2 %g r4 %g", l1, l2, l4);
    /* the GEMM: 2 B S F 4F flops over the model's linear rate; r = 4 a quarter */
    double f1, b1, f4, b4;
    cost_t_c_parts(mm, 2, &one, NULL, &f1, &b1);
    cost_t_c_parts(mm, 2, &r4, NULL, &f4, &b4);
    cr_assert(f4 < f1 / 3 && f4 > f1 / 5, "forward r1 %g r4 %g", f1, f4);
    /* attention: split by sequence costs what a sample split does plus the
     * K/V all-gather and its reduce-scatter: one ring all-reduce of K and V
     * (2 B S F elements) over GPUs 0-1 */
    const double tn = cost_t_c(m, 2, &n2, NULL), th = cost_t_c(m, 2, &h2, NULL);
    ASSERT_REL(th - tn, ring_allreduce_ms(c, 0, 2, 2.0 * B * S * F * m->elem_bytes), 1e-9);
    cr_assert(cost_t_c(m, 2, &c2, NULL) < cost_t_c(m, 2, &one, NULL));
    const double flash = cost_t_c(m, 2, &one, NULL);
    m->attention = ATTENTION_STANDARD;
    const double standard = cost_t_c(m, 2, &one, NULL);
    cr_assert(standard > flash, "standard %g, flash %g", standard, flash);
    m->recompute = RECOMPUTE_SELECTIVE;
    cr_assert(cost_t_c(m, 2, &one, NULL) > standard);
    /* full recompute: every block layer's forward once more in backward */
    mm->recompute = RECOMPUTE_FULL;
    for (int li = 1; li < mm->n_layers; li++) {
        double f, b;
        const double t = cost_t_c_parts(mm, li, &one, NULL, &f, &b);
        mm->recompute = RECOMPUTE_NONE;
        const double t0 = cost_t_c(mm, li, &one, NULL);
        mm->recompute = RECOMPUTE_FULL;
        ASSERT_REL(t, t0 + f, 1e-12);
    }
    cost_model_free(m);
    cost_model_free(mm);
    cluster_free(c);
    net_free(n);
    net_free(mb);
}

/* Configs per layer of a GPT-2-small-like block (hidden 768, 12 heads,
 * sequence 1024, vocabulary 50257, 32 samples a GPU) at 8, 64 and 256
 * GPUs, printed for data/doc/search.md. Where nothing bounds a degree, a
 * layer of k splittable degrees has C(log2 G + k, k) configs (attention:
 * c only 1, 2 or 4, whole heads of 12); r (bounded
 * by the sequence) and x each count as one more degree, never together. */
Test(configs, counts_per_layer)
{
    const long F = 768, S = 1024, V = 50257;
    const lspec s[] = {
        {"tokens", LT_INPUT, -1, -1, 1, S, NH, 0, 0, 0},
        {"embed", LT_EMBEDDING, 0, -1, F, S, NHCR, V, 0, (V + S) * F},
        {"ln", LT_LAYERNORM, 1, -1, F, S, NDX, 0, 0, 2 * F},
        {"attn", LT_ATTENTION, 2, -1, F, S, NHC, 0, 12, 3 * F * F + 3 * F},
        {"proj", LT_LINEAR, 3, -1, F, S, NHCR, F, 0, F * F + F},
        {"gelu", LT_GELU, 4, -1, F, S, NHCX, 0, 0, 0},
        {"lm_head", LT_LM_HEAD, 5, -1, V, S, NHCR, F, 0, 0},
    };
    network *n = mknet(s, 7);
    const int want[3][7] = {{10, 35, 20, 19, 35, 35, 35}, {28, 210, 84, 64, 210, 210, 210},
                            {45, 495, 165, 109, 495, 495, 495}};
    const int gs[3] = {8, 64, 256};
    for (int t = 0; t < 3; t++) {
        char line[256];
        int k = snprintf(line, sizeof line, "%3d GPUs:", gs[t]);
        for (int i = 0; i < 7; i++) {
            config *list;
            int nc = configs_enumerate(&n->layers[i], 32L * gs[t], gs[t], &list);
            k += snprintf(line + k, sizeof line - (size_t)k, " %s %d", s[i].name, nc);
            cr_expect_eq(nc, want[t][i], "%s at %d GPUs: %d configs, expected %d", s[i].name, gs[t], nc, want[t][i]);
            free(list);
        }
        cr_log_info("%s", line);
    }
    net_free(n);
}

/* The shipped loader's tiny GPT: tables built three ways (closed form,
 * oracle, per-piece reference) agree, a build for what-ifs re-priced on
 * another bandwidth equals a fresh build bit for bit (the r/x entries
 * are not kept: computed again), and the optimum evaluates to the same
 * total without tables. */
static cost_model *build_gpt(const network *n, const cluster *c, int gpus, int whatifs)
{
    lw_error err = {0};
    cost_model *m = whatifs ? cost_model_build_for_whatifs(n, c, NULL, gpus, 8L * gpus, NULL, NULL, &err)
                            : cost_model_build(n, c, NULL, gpus, 8L * gpus, &err);
    cr_assert_not_null(m, "%s", err.msg);
    return m;
}

static void same_tables(const cost_model *a, const cost_model *b, double tol)
{
    for (int i = 0; i < a->n_layers; i++)
        for (int k = 0; k < a->n_configs[i]; k++) {
            cr_assert_eq(a->t_c[i][k], b->t_c[i][k]);
            cr_assert_eq(a->t_s[i][k], b->t_s[i][k]);
        }
    for (int e = 0; e < a->n_edges; e++) {
        long n = (long)a->n_configs[a->e_from[e]] * a->n_configs[a->e_to[e]];
        for (long q = 0; q < n; q++)
            cr_assert(tol == 0 ? a->t_x[e][q] == b->t_x[e][q] : REL_EQ(a->t_x[e][q], b->t_x[e][q], tol),
                      "edge %d entry %ld: %.17g, %.17g", e, q, a->t_x[e][q], b->t_x[e][q]);
    }
}

Test(tables, tiny_gpt_paths_and_whatifs, .timeout = 300)
{
    lw_error err = {0};
    network *n = net_load_file("tests/fixtures/nets/tiny_gpt.json", &err);
    cr_assert_not_null(n, "%s", err.msg);
    cluster *c = two_nodes();
    cost_model *m = build_gpt(n, c, 8, 1);
    cost_tx_oracle = 1;
    cost_model *o = build_gpt(n, c, 8, 0);
    cost_tx_oracle = 0;
    cost_tx_reference = 1;
    cost_model *r = build_gpt(n, c, 8, 0);
    cost_tx_reference = 0;
    same_tables(m, o, 0);
    same_tables(m, r, 1e-12);
    /* a what-if on the bandwidth: priced from kept counts where kept */
    cluster *c2 = two_nodes();
    c2->inter.bandwidth_gbs *= 3;
    cost_model *p = cost_model_reprice(m, c2);
    cr_assert_not_null(p, "no re-pricing");
    cost_model *f = build_gpt(n, c2, 8, 0);
    same_tables(p, f, 0);
    /* the optimum, with and without tables */
    cost_graph *g = cost_model_graph(m);
    search_result *s = search_optimum(g);
    cost_model *op = open_model(n, c, 8, 64);
    strategy_eval ev, eo;
    strategy_evaluate(m, s->config, &ev);
    strategy_evaluate(op, s->config, &eo);
    cr_assert_eq(ev.total_ms, eo.total_ms);
    ASSERT_REL(ev.total_ms, s->cost, 1e-12);
    strategy_eval_free(&ev);
    strategy_eval_free(&eo);
    search_result_free(s);
    cg_free(g);
    cost_model_free(op);
    cost_model_free(f);
    cost_model_free(p);
    cost_model_free(r);
    cost_model_free(o);
    cost_model_free(m);
    cluster_free(c2);
    cluster_free(c);
    net_free(n);
}

/* A GPT block (pre-LN, attention with a = heads, GELU MLP of 4h). */
static network *gpt_block(long h, long S, int heads)
{
    const unsigned NHX = NHCX;
    const lspec s[] = {
        {"x", LT_INPUT, -1, -1, h, S, NH, 0, 0, 0},
        {"block0.ln1", LT_LAYERNORM, 0, -1, h, S, NDX, 0, 0, 2 * h},
        {"block0.attn", LT_ATTENTION, 1, -1, h, S, NHC, 0, heads, 3 * h * h + 3 * h},
        {"block0.proj", LT_LINEAR, 2, -1, h, S, NHCR, h, 0, h * h + h},
        {"block0.drop1", LT_DROPOUT, 3, -1, h, S, NHX, 0, 0, 0},
        {"block0.add1", LT_ADD, 0, 4, h, S, NHX, 0, 0, 0},
        {"block0.ln2", LT_LAYERNORM, 5, -1, h, S, NDX, 0, 0, 2 * h},
        {"block0.fc1", LT_LINEAR, 6, -1, 4 * h, S, NHCR, h, 0, 4 * h * h + 4 * h},
        {"block0.gelu", LT_GELU, 7, -1, 4 * h, S, NHX, 0, 0, 0},
        {"block0.fc2", LT_LINEAR, 8, -1, h, S, NHCR, 4 * h, 0, 4 * h * h + h},
        {"block0.drop2", LT_DROPOUT, 9, -1, h, S, NHX, 0, 0, 0},
        {"block0.add2", LT_ADD, 5, 10, h, S, NHX, 0, 0, 0},
    };
    return mknet(s, (int)(sizeof s / sizeof s[0]));
}

/* The activations one GPU (task 0) keeps for the block's layers. */
static double block_activations(const cost_model *m, const config *cfg)
{
    double sum = 0;
    for (int li = 1; li < m->n_layers; li++) {
        memory_parts p;
        cost_memory_task(m, li, &cfg[li], 0, &p);
        sum += p.activations;
    }
    return sum;
}

/* Korthikanti et al. 2022 (section 4, 2-byte activations): a block keeps
 * s b h (34 + 5 a s / h) without parallelism and standard attention; 34
 * s b h with flash attention or selective recompute; 2 s b h (its input)
 * under full recompute; with Megatron's tensor parallelism of degree t
 * (norms, dropouts and adds replicated, attention and fc1 by columns,
 * proj and fc2 by rows) s b h (10 + 24 / t + 5 a s / (h t)) per GPU. */
Test(memory, korthikanti_per_block)
{
    const long h = 256, S = 128, B = 4;
    const int a = 8;
    network *n = gpt_block(h, S, a);
    cluster *c = two_nodes();
    cost_model *m = open_model(n, c, 8, B);
    m->elem_bytes = 2;
    m->attention = ATTENTION_STANDARD;
    config one[12];
    for (int i = 0; i < 12; i++) one[i] = CONFIG_ONE;
    const double sbh = (double)S * B * h;
    ASSERT_REL(block_activations(m, one), sbh * (34 + 5.0 * a * S / h), 1e-15);
    m->recompute = RECOMPUTE_SELECTIVE;
    ASSERT_REL(block_activations(m, one), sbh * 34, 1e-15);
    m->recompute = RECOMPUTE_NONE;
    m->attention = ATTENTION_FLASH;
    ASSERT_REL(block_activations(m, one), sbh * 34, 1e-15);
    m->recompute = RECOMPUTE_FULL;
    ASSERT_REL(block_activations(m, one), sbh * 2, 1e-15);
    m->recompute = RECOMPUTE_NONE;
    m->attention = ATTENTION_STANDARD;
    for (int t = 2; t <= 8; t *= 2) {
        config tp[12];
        const config X = CFG(1, 1, 1, 1, t), Cc = CFG(1, t, 1, 1, 1), R = CFG(1, 1, 1, t, 1);
        const config plan[12] = {CONFIG_ONE, X, Cc, R, X, X, X, Cc, Cc, R, X, X};
        memcpy(tp, plan, sizeof tp);
        ASSERT_REL(block_activations(m, tp), sbh * (10 + 24.0 / t + 5.0 * a * S / (h * t)), 1e-15);
    }
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* simulate on a transformer: a strategy with r and x (every layer that
 * allows one on 8 tasks with degree 2, the rest data parallel); each edge
 * whose configs have either is one "reduce" task a direction, and without
 * overlap the simulated step is Eq. 1's total. */
Test(simulate, reductions_are_their_own_kind)
{
    lw_error err = {0};
    network *n = net_load_file("tests/fixtures/nets/tiny_gpt.json", &err);
    cr_assert_not_null(n, "%s", err.msg);
    cluster *c = two_nodes();
    cost_model *m = build_gpt(n, c, 8, 0);
    int *ci = calloc((size_t)m->n_layers, sizeof(int));
    for (int i = 0; i < m->n_layers; i++) {
        int data = 0, rx = -1;
        for (int k = 0; k < m->n_configs[i]; k++) {
            const config *q = &m->configs[i][k];
            if (config_tasks(q) != 8) continue;
            if (q->deg[DIM_N] == 8) data = k;
            if (rx < 0 && q->deg[DIM_N] == 4 && (q->deg[DIM_R] == 2 || q->deg[DIM_X] == 2)) rx = k;
        }
        ci[i] = rx >= 0 ? rx : data;
    }
    int rx_edges = 0;
    for (int e = 0; e < m->n_edges; e++) {
        const config *cp = &m->configs[m->e_from[e]][ci[m->e_from[e]]];
        const config *cc = &m->configs[m->e_to[e]][ci[m->e_to[e]]];
        rx_edges += cp->deg[DIM_R] > 1 || cp->deg[DIM_X] > 1 || cc->deg[DIM_R] > 1 || cc->deg[DIM_X] > 1;
    }
    cr_assert(rx_edges > 10, "%d edges with r or x", rx_edges);
    strategy_eval ev;
    strategy_evaluate(m, ci, &ev);
    sim_options none = {.overlap = SIM_OVERLAP_NONE};
    sim_result *z = sim_run(m, ci, &none), *s = sim_run(m, ci, NULL);
    cr_assert_not_null(z);
    cr_assert_not_null(s);
    ASSERT_REL(z->step_ms, z->eq1_ms, 1e-9);
    ASSERT_REL(z->eq1_ms, ev.total_ms, 1e-12);
    int reduces = 0;
    for (int t = 0; t < s->n_tasks; t++) reduces += s->tasks[t].kind == SIM_REDUCE;
    cr_assert_eq(reduces, 2 * rx_edges, "%d reduce tasks for %d edges", reduces, rx_edges);
    cr_assert_str_eq(sim_kind_name(SIM_REDUCE), "reduce");
    cr_assert(s->step_ms <= s->eq1_ms * (1 + 1e-9));
    sim_free(z);
    sim_free(s);
    strategy_eval_free(&ev);
    free(ci);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}
