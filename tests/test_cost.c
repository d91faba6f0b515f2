/*
 * Unit tests of the cost model (paper Eq. 1): t_x overlaps (halo, whole
 * input, concat offsets, flatten), t_x times on a simple cluster, t_s for
 * the parameter server and ring all-reduce, NIC sharing, t_c, profiles and
 * memory. Expected values are worked out by hand in the comments, on
 * clusters whose links make the arithmetic easy (10 GB/s = 1e10 bytes/s,
 * no latency), and checked against an element-by-element reference.
 *
 * Run from the repository root (make check does).
 */
#include <criterion/criterion.h>

#include "cost.h"
#include "net_json.h"
#include "plan.h"
#include "plan_internal.h" /* white-box: the tests read the plan's fields */
#include "strategy.h"
#include "test_helpers.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Bare names (plan_load_network("vgg16")) resolve to this tree's data/,
 * not to an installed copy, unless LAYERWISE_DATA says otherwise. */
__attribute__((constructor)) static void use_this_trees_data(void)
{
    setenv("LAYERWISE_DATA", "data", 0);
}

/* ---------------------------------------------------------------- helpers */

/* A cluster of nodes x gpn GPUs; bandwidths in GB/s, latency in us (of a
 * transfer; all-reduce calls here have no latency, so ring cases check the
 * bandwidth terms alone: tests/test_collectives.c checks the latency). */
static cluster *make_cluster(int nodes, int gpn, double intra_bw, double inter_bw, double lat_us, int nics,
                             const char *sync)
{
    char t[1024];
    snprintf(t, sizeof t,
             "{\"format\": \"layerwise-cluster/1\", \"name\": \"test\", \"nodes\": %d, \"gpus_per_node\": %d,"
             " \"gpu\": {\"name\": \"TestGPU\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
             " \"intra_node\": {\"bandwidth_gbs\": %.17g, \"latency_us\": %.17g},"
             " \"inter_node\": {\"bandwidth_gbs\": %.17g, \"latency_us\": %.17g, \"nics_per_node\": %d},"
             " \"collectives\": {\"call_latency_us\": 0, \"intra_step_us\": 0, \"inter_step_us\": 0},"
             " \"sync\": \"%s\"}",
             nodes, gpn, intra_bw, lat_us, inter_bw, lat_us, nics, sync);
    lw_error err = {0};
    cluster *c = cluster_from_json(t, strlen(t), "test-cluster.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    return c;
}

/* 4 GPUs on one node, 10 GB/s, no latency. */
static cluster *uniform4(const char *sync)
{
    return make_cluster(1, 4, 10, 10, 0, 1, sync);
}

static cost_model *build(const network *n, const cluster *c, const profile *p, int gpus, long batch)
{
    lw_error err = {0};
    cost_model *m = cost_model_build(n, c, p, gpus, batch, &err);
    cr_assert_not_null(m, "%s", err.msg);
    return m;
}

static int layer_id(const cost_model *m, const char *name)
{
    int i = net_find(m->net, name);
    cr_assert(i >= 0, "no layer %s", name);
    return i;
}

static int edge_id(const cost_model *m, const char *from, const char *to, int slot)
{
    int a = layer_id(m, from), b = layer_id(m, to);
    for (int e = 0; e < m->n_edges; e++)
        if (m->e_from[e] == a && m->e_to[e] == b && m->e_slot[e] == slot) return e;
    cr_assert_fail("no edge %s -> %s (slot %d)", from, to, slot);
    return -1;
}

static config C(int n, int c, int h, int w)
{
    config x = {{n, c, h, w, 1, 1}};
    return x;
}

static int config_index(const cost_model *m, int li, config c)
{
    int k = config_find(m->configs[li], m->n_configs[li], &c);
    cr_assert(k >= 0, "layer %s has no config n%d c%d h%d w%d", m->net->layers[li].name, c.deg[0], c.deg[1],
              c.deg[2], c.deg[3]);
    return k;
}

/* ------------------------------------------- reference overlaps, by element */

/* Marks the elements of producer P's output (batch B, row-major n, c, h, w)
 * that consumer task t of L (config cc) reads through input slot `slot`.
 * Written independently of cost.c: it walks the consumer's output block and
 * marks what each output element reads. */
static void needed_mask(const network *net, int pi, int li, int slot, long B, const config *cc, int t,
                        unsigned char *mask)
{
    const layer *P = &net->layers[pi], *L = &net->layers[li];
    long PC = P->out.c, PH = P->out.h, PW = P->out.w;
    long tot = B * PC * PH * PW;
    memset(mask, 0, (size_t)tot);
    int co[NDIMS];
    config_task_coords(cc, t, co);
    long lo[NDIMS], hi[NDIMS];
    for (int d = 0; d < NDIMS; d++) {
        long S = layer_dim_size(L, d, B);
        lo[d] = piece_lo(S, cc->deg[d], co[d]);
        hi[d] = piece_hi(S, cc->deg[d], co[d]);
    }
#define MARK(n_, c_, h_, w_) mask[(((n_) * PC + (c_)) * PH + (h_)) * PW + (w_)] = 1
    for (long n = lo[0]; n < hi[0]; n++) {
        switch (L->type) {
        case LT_CONV2D:
        case LT_POOL2D: {
            /* The rows and columns the block's windows touch; the input block
             * is the box from the first to the last of them (with a stride
             * above the kernel, rows in between are skipped by the windows
             * but still lie inside the block, as in the paper's rectangles). */
            long h0 = PH, h1 = -1, w0 = PW, w1 = -1;
            for (long oh = lo[2]; oh < hi[2]; oh++)
                for (int kh = 0; kh < L->kh; kh++) {
                    long ih = oh * L->sh - L->ph + kh;
                    if (ih < 0 || ih >= PH) continue;
                    if (ih < h0) h0 = ih;
                    if (ih > h1) h1 = ih;
                }
            for (long ow = lo[3]; ow < hi[3]; ow++)
                for (int kw = 0; kw < L->kw; kw++) {
                    long iw = ow * L->sw - L->pw + kw;
                    if (iw < 0 || iw >= PW) continue;
                    if (iw < w0) w0 = iw;
                    if (iw > w1) w1 = iw;
                }
            long c0 = L->type == LT_CONV2D ? 0 : lo[1], c1 = L->type == LT_CONV2D ? PC : hi[1];
            for (long c = c0; c < c1; c++)
                for (long ih = h0; ih <= h1; ih++)
                    for (long iw = w0; iw <= w1; iw++) MARK(n, c, ih, iw);
            break;
        }
        case LT_LINEAR:
            for (long c = 0; c < PC; c++)
                for (long h = 0; h < PH; h++)
                    for (long w = 0; w < PW; w++) MARK(n, c, h, w);
            break;
        case LT_FLATTEN:
            for (long f = lo[1]; f < hi[1]; f++) {
                long c = f / (PH * PW), h = f / PW % PH, w = f % PW;
                MARK(n, c, h, w);
            }
            break;
        case LT_CONCAT: {
            long off = 0;
            for (int s = 0; s < slot; s++) off += net->layers[L->inputs[s]].out.c;
            for (long c = lo[1]; c < hi[1]; c++) {
                long pc = c - off;
                if (pc < 0 || pc >= PC) continue;
                for (long h = lo[2]; h < hi[2]; h++)
                    for (long w = lo[3]; w < hi[3]; w++) MARK(n, pc, h, w);
            }
            break;
        }
        default: /* element-wise */
            for (long c = lo[1]; c < hi[1]; c++)
                for (long h = lo[2]; h < hi[2]; h++)
                    for (long w = lo[3]; w < hi[3]; w++) MARK(n, c, h, w);
            break;
        }
    }
#undef MARK
}

/* Elements of mask inside producer task p's block (config cp). */
static double count_in_block(const layer *P, long B, const config *cp, int p, const unsigned char *mask)
{
    long PC = P->out.c, PH = P->out.h, PW = P->out.w;
    int co[NDIMS];
    config_task_coords(cp, p, co);
    long lo[NDIMS], hi[NDIMS];
    for (int d = 0; d < NDIMS; d++) {
        long S = layer_dim_size(P, d, B);
        lo[d] = piece_lo(S, cp->deg[d], co[d]);
        hi[d] = piece_hi(S, cp->deg[d], co[d]);
    }
    double v = 0;
    for (long n = lo[0]; n < hi[0]; n++)
        for (long c = lo[1]; c < hi[1]; c++)
            for (long h = lo[2]; h < hi[2]; h++)
                for (long w = lo[3]; w < hi[3]; w++) v += mask[((n * PC + c) * PH + h) * PW + w];
    return v;
}

/* The documented transfer model, written out plainly: a piece of v elements
 * from producer GPU p to consumer GPU k costs latency + 4v / bandwidth of the
 * link; forward, every GPU receives its pieces one after another and GPUs
 * receive in parallel; backward the gradients go back over the same pieces;
 * with several nodes in use, a node's inter-node bytes in each direction
 * also share its NICs (inter-node bandwidth x NICs). ms. */
typedef struct tx_ref {
    const cost_model *m;
    double *recv_f, *recv_b, *in_f, *out_f, *in_b, *out_b;
} tx_ref;

static void tx_ref_reset(tx_ref *r)
{
    int G = r->m->gpus;
    memset(r->recv_f, 0, sizeof(double) * (size_t)G);
    memset(r->recv_b, 0, sizeof(double) * (size_t)G);
    memset(r->in_f, 0, sizeof(double) * (size_t)G);
    memset(r->out_f, 0, sizeof(double) * (size_t)G);
    memset(r->in_b, 0, sizeof(double) * (size_t)G);
    memset(r->out_b, 0, sizeof(double) * (size_t)G);
}

static void tx_ref_piece(tx_ref *r, int p, int k, double elems)
{
    const cluster *cl = r->m->cl;
    double b = elems * 4;
    r->recv_f[k] += cluster_transfer_s(cl, p, k, b);
    r->recv_b[p] += cluster_transfer_s(cl, k, p, b);
    int np = cluster_node_of(cl, p), nk = cluster_node_of(cl, k);
    if (np != nk) {
        r->in_f[nk] += b;
        r->out_f[np] += b;
        r->in_b[np] += b;
        r->out_b[nk] += b;
    }
}

static double tx_ref_time(const tx_ref *r)
{
    const cost_model *m = r->m;
    const cluster *cl = m->cl;
    int nodes = (m->gpus + cl->gpus_per_node - 1) / cl->gpus_per_node;
    double nic = cl->inter.bandwidth_gbs * 1e9 * cl->nics_per_node;
    double f = 0, b = 0;
    for (int g = 0; g < m->gpus; g++) {
        f = fmax(f, r->recv_f[g]);
        b = fmax(b, r->recv_b[g]);
    }
    if (nodes > 1)
        for (int n = 0; n < nodes; n++) {
            f = fmax(f, fmax(r->in_f[n], r->out_f[n]) / nic);
            b = fmax(b, fmax(r->in_b[n], r->out_b[n]) / nic);
        }
    return (f + b) * 1e3;
}

/* Every edge, every config pair, every task pair: cost_overlap equals the
 * element reference, the producer blocks cover exactly what each consumer
 * task needs, the bytes t_x reports are forward + backward of the pieces
 * that change GPU, t_x equals the plain model above, and the table holds
 * the same value. */
static void check_all_overlaps(const cost_model *m)
{
    const network *net = m->net;
    long B = m->batch;
    int G = m->gpus;
    tx_ref r = {m, calloc((size_t)G, 8), calloc((size_t)G, 8), calloc((size_t)G, 8),
                calloc((size_t)G, 8), calloc((size_t)G, 8), calloc((size_t)G, 8)};
    for (int e = 0; e < m->n_edges; e++) {
        int pi = m->e_from[e], li = m->e_to[e];
        const layer *P = &net->layers[pi];
        long tot = B * P->out.c * P->out.h * P->out.w;
        unsigned char *mask = malloc((size_t)tot);
        for (int a = 0; a < m->n_configs[pi]; a++)
            for (int b = 0; b < m->n_configs[li]; b++) {
                const config *cp = &m->configs[pi][a], *cc = &m->configs[li][b];
                tx_ref_reset(&r);
                double moved = 0;
                for (int t = 0; t < config_tasks(cc); t++) {
                    needed_mask(net, pi, li, m->e_slot[e], B, cc, t, mask);
                    double need = 0;
                    for (long i = 0; i < tot; i++) need += mask[i];
                    double got = 0;
                    for (int p = 0; p < config_tasks(cp); p++) {
                        double ref = count_in_block(P, B, cp, p, mask);
                        double ov = cost_overlap(m, e, cp, p, cc, t);
                        cr_assert_eq(ov, ref,
                                     "edge %s -> %s, producer config %d task %d, consumer config %d task %d: "
                                     "overlap %.0f, reference %.0f",
                                     P->name, net->layers[li].name, a, p, b, t, ov, ref);
                        got += ov;
                        if (p != t && ov > 0) {
                            moved += ov;
                            tx_ref_piece(&r, p, t, ov);
                        }
                    }
                    cr_assert_eq(got, need, "the producer blocks do not cover what the consumer task needs");
                }
                double bytes = -1;
                double tx = cost_t_x(m, e, cp, cc, &bytes);
                cr_assert_eq(bytes, 2 * 4 * moved, "edge %d configs %d,%d: %.0f bytes, expected %.0f", e, a, b, bytes,
                             2 * 4 * moved);
                double want = moved > 0 ? tx_ref_time(&r) : 0;
                cr_assert(REL_EQ(tx, want, 1e-12), "edge %s -> %s configs %d,%d: t_x %.17g ms, expected %.17g",
                          P->name, net->layers[li].name, a, b, tx, want);
                ASSERT_REL(m->t_x[e][a * m->n_configs[li] + b], tx, 1e-12);
            }
        free(mask);
    }
    free(r.recv_f);
    free(r.recv_b);
    free(r.in_f);
    free(r.out_f);
    free(r.in_b);
    free(r.out_b);
}

/* check_all_overlaps on 4 GPUs of c at a batch of 3 (pieces of unequal
 * size) and of 4. */
static void check_odd_and_even_batch(const network *n, const cluster *c)
{
    for (long batch = 3; batch <= 4; batch++) {
        cost_model *m = build(n, c, NULL, 4, batch);
        check_all_overlaps(m);
        cost_model_free(m);
    }
}

/* ------------------------------------------------------------ halo (h, w) */

static const char *const two_convs =
    "{\"format\": \"layerwise-net/1\", \"name\": \"halo\","
    " \"input\": {\"name\": \"data\", \"channels\": 4, \"height\": 8, \"width\": 8},"
    " \"layers\": ["
    "  {\"name\": \"conv1\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 4, \"kernel\": 3, \"padding\": 1},"
    "  {\"name\": \"conv2\", \"type\": \"conv2d\", \"inputs\": [\"conv1\"], \"out_channels\": 4, \"kernel\": 3, \"padding\": 1}]}";

Test(t_x, halo_of_a_3x3_conv_split_on_h)
{
    network *n = net_ok(two_convs);
    cluster *c = uniform4("parameter-server");
    cost_model *m = build(n, c, NULL, 4, 2);
    int e = edge_id(m, "conv1", "conv2", 0);
    config h4 = C(1, 1, 4, 1);
    /* conv1 split h4: task p holds rows [2p, 2p+2). conv2 task t computes rows
     * [2t, 2t+2) and needs rows [2t-1, 2t+3) clipped to [0, 8): its own two
     * rows and one of each neighbour. A row is batch 2 x 4 channels x 8 = 64
     * elements (channels: a conv needs all of them; conv1 is not split on c). */
    const double want[4][4] = {/* [t][p] */
                               {128, 64, 0, 0},
                               {64, 128, 64, 0},
                               {0, 64, 128, 64},
                               {0, 0, 64, 128}};
    for (int t = 0; t < 4; t++)
        for (int p = 0; p < 4; p++)
            cr_assert_eq(cost_overlap(m, e, &h4, p, &h4, t), want[t][p], "consumer %d, producer %d: %.0f", t, p,
                         cost_overlap(m, e, &h4, p, &h4, t));
    /* Pieces that change GPU: 1->0, 0->1, 2->1, 1->2, 3->2, 2->3, each 64
     * elements = 256 bytes. Forward, GPUs 1 and 2 receive two pieces each
     * (512 bytes, one after the other); backward, the gradients go back and
     * GPUs 1 and 2 again receive two each. t_x = (512 + 512) B / 1e10 B/s =
     * 1.024e-7 s = 1.024e-4 ms; bytes moved = 2 x 6 x 256 = 3072. */
    double bytes = 0;
    double tx = cost_t_x(m, e, &h4, &h4, &bytes);
    ASSERT_REL(tx, 1.024e-4, 1e-12);
    cr_assert_eq(bytes, 3072);
    ASSERT_REL(m->t_x[e][config_index(m, 1, h4) * m->n_configs[2] + config_index(m, 2, h4)], 1.024e-4, 1e-12);

    /* Producer on GPU 0 alone, consumer h4: task 0 (GPU 0) has what it needs;
     * tasks 1 and 2 need 4 rows (256 elements, 1024 B), task 3 rows [5, 8)
     * (768 B). Forward the slowest receiver takes 1024 B; backward GPU 0
     * receives all three gradients, 2816 B, one after another:
     * t_x = (1024 + 2816) / 1e10 s = 3.84e-4 ms. */
    config one = C(1, 1, 1, 1);
    cr_assert_eq(cost_overlap(m, e, &one, 0, &h4, 1), 256);
    cr_assert_eq(cost_overlap(m, e, &one, 0, &h4, 3), 192);
    tx = cost_t_x(m, e, &one, &h4, &bytes);
    ASSERT_REL(tx, 3.84e-4, 1e-12);
    cr_assert_eq(bytes, 2.0 * 4 * (256 + 256 + 192));
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

Test(t_x, halo_of_a_3x3_conv_split_on_h_and_w)
{
    network *n = net_ok(two_convs);
    cluster *c = uniform4("parameter-server");
    cost_model *m = build(n, c, NULL, 4, 2);
    int e = edge_id(m, "conv1", "conv2", 0);
    config q = C(1, 1, 2, 2);
    /* Task 0 computes rows [0,4) x cols [0,4) and needs rows [0,5) x cols
     * [0,5): 4x4 of its own, a 4x1 strip of task 1 (cols 4..), a 1x4 strip
     * of task 2 (rows 4..) and the 1x1 corner of task 3; times batch 2 x 4
     * channels = 8. */
    cr_assert_eq(cost_overlap(m, e, &q, 0, &q, 0), 128);
    cr_assert_eq(cost_overlap(m, e, &q, 1, &q, 0), 32);
    cr_assert_eq(cost_overlap(m, e, &q, 2, &q, 0), 32);
    cr_assert_eq(cost_overlap(m, e, &q, 3, &q, 0), 8);
    cr_assert_eq(cost_overlap(m, e, &q, 0, &q, 3), 8);
    /* by symmetry every GPU receives 32 + 32 + 8 = 72 elements = 288 B each
     * way: t_x = 2 x 288 / 1e10 s */
    double bytes;
    ASSERT_REL(cost_t_x(m, e, &q, &q, &bytes), 2 * 288 / 1e10 * 1e3, 1e-12);
    cr_assert_eq(bytes, 2.0 * 4 * 288);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

Test(t_x, strided_pool_needs_no_halo_when_aligned)
{
    network *n = net_ok("{\"format\": \"layerwise-net/1\", \"name\": \"pool\","
                         " \"input\": {\"name\": \"data\", \"channels\": 2, \"height\": 8, \"width\": 8},"
                         " \"layers\": ["
                         "  {\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"data\"]},"
                         "  {\"name\": \"p\", \"type\": \"pool2d\", \"inputs\": [\"r\"], \"kernel\": 2},"
                         "  {\"name\": \"q\", \"type\": \"pool2d\", \"inputs\": [\"r\"], \"kernel\": 3, \"stride\": 2, \"padding\": 1}]}");
    cluster *c = uniform4("parameter-server");
    cost_model *m = build(n, c, NULL, 4, 4);
    config h4 = C(1, 1, 4, 1), h2 = C(1, 1, 2, 1), c2h2 = C(1, 2, 2, 1);
    int e = edge_id(m, "r", "p", 0);
    double bytes = -1;
    /* p (2x2/2, 4 output rows) split h2: task 0 computes rows 0, 1 and reads
     * rows [0, 4) of r, which r split h4 keeps on tasks 0 and 1 (2 rows x 2
     * channels x 8 columns x batch 4 each) */
    cr_assert_eq(cost_overlap(m, e, &h4, 0, &h2, 0), 4 * 2 * 2 * 8);
    cr_assert_eq(cost_overlap(m, e, &h4, 1, &h2, 0), 4 * 2 * 2 * 8);
    cr_assert_eq(cost_overlap(m, e, &h4, 2, &h2, 0), 0);
    /* h4 into h4: output row t reads rows 2t, 2t+1, exactly task t's */
    cr_assert_eq(cost_overlap(m, e, &h4, 1, &h4, 0), 0);
    cr_assert_eq(cost_t_x(m, e, &h4, &h4, &bytes), 0);
    cr_assert_eq(bytes, 0);
    /* pool is per channel: c2 h2 into c2 h2, aligned, moves nothing */
    cr_assert_eq(cost_t_x(m, e, &c2h2, &c2h2, &bytes), 0);
    cr_assert_eq(bytes, 0);
    /* 3x3/2 pad 1: output row o reads rows [2o-1, 2o+2) */
    int e2 = edge_id(m, "r", "q", 0);
    /* q has 4 rows; task 1 computes rows 2, 3 and reads rows [3, 8): one row
     * of task 0 (rows [0, 4)) and all four of task 1 */
    cr_assert_eq(cost_overlap(m, e2, &h2, 0, &h2, 1), 1 * 4 * 2 * 8);
    cr_assert_eq(cost_overlap(m, e2, &h2, 1, &h2, 1), 4 * 4 * 2 * 8);
    cr_assert_eq(cost_overlap(m, e2, &h2, 1, &h2, 0), 0);
    check_all_overlaps(m);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* ------------------------------------------------------ linear: all input */

static const char *const mlp =
    "{\"format\": \"layerwise-net/1\", \"name\": \"mlp\","
    " \"input\": {\"name\": \"data\", \"channels\": 16, \"height\": 4, \"width\": 4},"
    " \"layers\": ["
    "  {\"name\": \"flat\", \"type\": \"flatten\", \"inputs\": [\"data\"]},"
    "  {\"name\": \"fc1\", \"type\": \"linear\", \"inputs\": [\"flat\"], \"out_features\": 64},"
    "  {\"name\": \"fc2\", \"type\": \"linear\", \"inputs\": [\"fc1\"], \"out_features\": 32},"
    "  {\"name\": \"prob\", \"type\": \"softmax\", \"inputs\": [\"fc2\"]}]}";

Test(t_x, channel_split_linear_needs_the_whole_input)
{
    network *n = net_ok(mlp);
    cluster *c = uniform4("parameter-server");
    cost_model *m = build(n, c, NULL, 4, 8);
    int e = edge_id(m, "fc1", "fc2", 0);
    config c4 = C(1, 4, 1, 1), n4 = C(4, 1, 1, 1);
    /* fc1 c4: task p holds features [16p, 16p+16) of all 8 samples (128
     * elements). Every fc2 task needs all 64 features of all 8 samples: one
     * block of its own, three from the other GPUs. */
    for (int t = 0; t < 4; t++)
        for (int p = 0; p < 4; p++) cr_assert_eq(cost_overlap(m, e, &c4, p, &c4, t), 128);
    /* each GPU receives 3 x 512 B forward and 3 x 512 B of gradients back:
     * t_x = 2 x 1536 / 1e10 s = 3.072e-4 ms; 12 pieces x 512 B x 2 moved */
    double bytes;
    ASSERT_REL(cost_t_x(m, e, &c4, &c4, &bytes), 3.072e-4, 1e-12);
    cr_assert_eq(bytes, 12288);
    /* fc1 n4 (task p holds samples 2p, 2p+1, all features) into fc2 c4: the
     * same volumes */
    for (int t = 0; t < 4; t++)
        for (int p = 0; p < 4; p++) cr_assert_eq(cost_overlap(m, e, &n4, p, &c4, t), 128);
    ASSERT_REL(cost_t_x(m, e, &n4, &c4, &bytes), 3.072e-4, 1e-12);
    /* fc1 c4 into fc2 n4: task t needs samples 2t, 2t+1 of every feature:
     * 2 x 16 from each producer block */
    for (int t = 0; t < 4; t++)
        for (int p = 0; p < 4; p++) cr_assert_eq(cost_overlap(m, e, &c4, p, &n4, t), 32);
    /* n4 into n4: nothing moves */
    cr_assert_eq(cost_t_x(m, e, &n4, &n4, &bytes), 0);
    cr_assert_eq(bytes, 0);
    check_all_overlaps(m);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* ------------------------------------------------------------ concat offsets */

static const char *const concat_net =
    "{\"format\": \"layerwise-net/1\", \"name\": \"cat\","
    " \"input\": {\"name\": \"data\", \"channels\": 3, \"height\": 8, \"width\": 8},"
    " \"layers\": ["
    "  {\"name\": \"a\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 64, \"kernel\": 1},"
    "  {\"name\": \"b\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 32, \"kernel\": 1},"
    "  {\"name\": \"cat\", \"type\": \"concat\", \"inputs\": [\"a\", \"b\"]}]}";

Test(t_x, concat_offsets)
{
    network *n = net_ok(concat_net);
    cluster *c = uniform4("parameter-server");
    cost_model *m = build(n, c, NULL, 4, 2);
    cr_assert_eq(m->net->layers[layer_id(m, "cat")].out.c, 96);
    int ea = edge_id(m, "a", "cat", 0), eb = edge_id(m, "b", "cat", 1);
    config c2 = C(1, 2, 1, 1);
    const double ch = 2 * 8 * 8; /* elements per channel: batch 2 x 8 x 8 */
    /* cat c2: task 0 holds concat channels [0, 48), task 1 [48, 96).
     * a c2: [0, 32) on GPU 0, [32, 64) on GPU 1 (concat channels 0..63).
     * b c2: [0, 16) on GPU 0, [16, 32) on GPU 1 (concat channels 64..95). */
    cr_assert_eq(cost_overlap(m, ea, &c2, 0, &c2, 0), 32 * ch);
    cr_assert_eq(cost_overlap(m, ea, &c2, 1, &c2, 0), 16 * ch);
    cr_assert_eq(cost_overlap(m, ea, &c2, 0, &c2, 1), 0);
    cr_assert_eq(cost_overlap(m, ea, &c2, 1, &c2, 1), 16 * ch);
    cr_assert_eq(cost_overlap(m, eb, &c2, 0, &c2, 0), 0);
    cr_assert_eq(cost_overlap(m, eb, &c2, 1, &c2, 0), 0);
    cr_assert_eq(cost_overlap(m, eb, &c2, 0, &c2, 1), 16 * ch);
    cr_assert_eq(cost_overlap(m, eb, &c2, 1, &c2, 1), 16 * ch);
    /* a: GPU 1 -> GPU 0, 16 channels = 2048 elements = 8192 B, gradients back
     * to GPU 1: t_x = 2 x 8192 / 1e10 s. b: GPU 0 -> GPU 1, the same. */
    double bytes;
    ASSERT_REL(cost_t_x(m, ea, &c2, &c2, &bytes), 2 * 8192 / 1e10 * 1e3, 1e-12);
    cr_assert_eq(bytes, 16384);
    ASSERT_REL(cost_t_x(m, eb, &c2, &c2, &bytes), 2 * 8192 / 1e10 * 1e3, 1e-12);
    cr_assert_eq(bytes, 16384);
    /* cat c4: tasks of 24 channels: [0,24) [24,48) [48,72) [72,96) */
    config c4 = C(1, 4, 1, 1), one = C(1, 1, 1, 1);
    cr_assert_eq(cost_overlap(m, eb, &one, 0, &c4, 2), 8 * ch);  /* 64..71 */
    cr_assert_eq(cost_overlap(m, eb, &one, 0, &c4, 3), 24 * ch); /* 72..95 */
    cr_assert_eq(cost_overlap(m, ea, &one, 0, &c4, 3), 0);
    check_all_overlaps(m);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* ------------------------------------------------------------------ flatten */

static const char *const flat_net =
    "{\"format\": \"layerwise-net/1\", \"name\": \"flat\","
    " \"input\": {\"name\": \"data\", \"channels\": 3, \"height\": 4, \"width\": 4},"
    " \"layers\": ["
    "  {\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"data\"]},"
    "  {\"name\": \"flat\", \"type\": \"flatten\", \"inputs\": [\"r\"]},"
    "  {\"name\": \"fc\", \"type\": \"linear\", \"inputs\": [\"flat\"], \"out_features\": 5}]}";

Test(t_x, flatten_of_an_h_split_producer_into_a_channel_split_flatten)
{
    network *n = net_ok(flat_net);
    cluster *c = uniform4("parameter-server");
    cost_model *m = build(n, c, NULL, 4, 2);
    int e = edge_id(m, "r", "flat", 0);
    config h2 = C(1, 1, 2, 1), c4 = C(1, 4, 1, 1);
    /* Feature f = c*16 + h*4 + w over 48 features; flat c4 takes [0,12)
     * [12,24) [24,36) [36,48). r h2: task 0 rows 0-1, task 1 rows 2-3.
     *  t0 = c0 rows 0,1,2: 8 from p0, 4 from p1
     *  t1 = c0 row 3, c1 rows 0,1: 8 from p0, 4 from p1
     *  t2 = c1 rows 2,3, c2 row 0: 4 from p0, 8 from p1
     *  t3 = c2 rows 1,2,3: 4 from p0, 8 from p1
     * per sample; batch 2 doubles them. */
    const double want[4][2] = {{16, 8}, {16, 8}, {8, 16}, {8, 16}};
    double sum = 0;
    for (int t = 0; t < 4; t++)
        for (int p = 0; p < 2; p++) {
            double v = cost_overlap(m, e, &h2, p, &c4, t);
            cr_assert_eq(v, want[t][p], "t%d p%d: %.0f", t, p, v);
            sum += v;
        }
    cr_assert_eq(sum, 2 * 48, "the overlaps must cover the tensor exactly once");
    /* Moving: t0 (GPU 0) gets 8 from GPU 1; t1 (GPU 1) gets 16 from GPU 0;
     * t2 (GPU 2) gets 8 + 16; t3 (GPU 3) gets 8 + 16. Forward the slowest
     * receiver takes 24 elements = 96 B; backward GPU 0 receives 16 + 8 + 8
     * = 32 elements and GPU 1 8 + 16 + 16 = 40 = 160 B.
     * t_x = (96 + 160) / 1e10 s. */
    double bytes;
    ASSERT_REL(cost_t_x(m, e, &h2, &c4, &bytes), 256 / 1e10 * 1e3, 1e-12);
    cr_assert_eq(bytes, 2.0 * 4 * (8 + 16 + 24 + 24));
    /* every config pair, against the element-by-element reference */
    check_all_overlaps(m);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* A flatten's consumer task asks only the producer tasks whose samples
 * and channels can meet its flat range (flat_sources): on 32 GPUs, odd
 * sizes and an odd batch (uneven pieces everywhere), cost_overlaps_of lists,
 * for every config pair and consumer task, exactly the producer tasks of
 * volume above 0, ascending, with cost_overlap's volumes (which asks a pair
 * alone). The volumes of each consumer task add up to what it reads. */
Test(t_x, a_flatten_asks_the_tasks_it_can_meet_and_misses_none)
{
    network *n = net_ok("{\"format\": \"layerwise-net/1\", \"name\": \"flat_odd\","
                        " \"input\": {\"name\": \"data\", \"channels\": 7, \"height\": 5, \"width\": 6},"
                        " \"layers\": ["
                        "  {\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"data\"]},"
                        "  {\"name\": \"flat\", \"type\": \"flatten\", \"inputs\": [\"r\"]},"
                        "  {\"name\": \"fc\", \"type\": \"linear\", \"inputs\": [\"flat\"], \"out_features\": 5}]}");
    cluster *c = make_cluster(4, 8, 10, 1, 2, 1, "parameter-server");
    lw_error err = {0};
    cost_model *m = cost_model_open(n, c, NULL, 32, 37, &err);
    cr_assert_not_null(m, "%s", err.msg);
    const int e = edge_id(m, "r", "flat", 0), a = m->e_from[e], b = m->e_to[e];
    int ptask[32], want_p[32];
    double vol[32], want_v[32];
    long pairs = 0, listed = 0;
    for (int i = 0; i < m->n_configs[a]; i++)
        for (int j = 0; j < m->n_configs[b]; j++) {
            const config *cp = &m->configs[a][i], *cc = &m->configs[b][j];
            for (int t = 0; t < config_tasks(cc); t++) {
                int nw = 0;
                for (int p = 0; p < config_tasks(cp); p++) {
                    double v = cost_overlap(m, e, cp, p, cc, t);
                    if (v > 0) want_p[nw] = p, want_v[nw++] = v;
                }
                int got = cost_overlaps_of(m, e, cp, cc, t, ptask, vol);
                cr_assert_eq(got, nw, "configs %d, %d, task %d: %d tasks listed, %d overlap", i, j, t, got, nw);
                for (int q = 0; q < nw; q++) {
                    cr_assert_eq(ptask[q], want_p[q], "configs %d, %d, task %d: entry %d", i, j, t, q);
                    cr_assert_eq(vol[q], want_v[q], "configs %d, %d, task %d: entry %d", i, j, t, q);
                }
                listed += nw;
            }
            pairs++;
        }
    cr_assert_gt(pairs, 1000, "%ld config pairs", pairs);
    cr_assert_gt(listed, pairs, "a consumer task reads from one producer task at least");
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* Uneven splits, odd sizes, every edge kind, every config pair on 4 GPUs. */
Test(t_x, every_edge_kind_matches_the_element_reference)
{
    network *n = net_ok("{\"format\": \"layerwise-net/1\", \"name\": \"mix\","
                         " \"input\": {\"name\": \"data\", \"channels\": 3, \"height\": 7, \"width\": 6},"
                         " \"layers\": ["
                         "  {\"name\": \"c1\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 5, \"kernel\": 3, \"padding\": 1},"
                         "  {\"name\": \"c2\", \"type\": \"conv2d\", \"inputs\": [\"c1\"], \"out_channels\": 3, \"kernel\": [3, 1], \"stride\": 2, \"padding\": [1, 0]},"
                         "  {\"name\": \"c3\", \"type\": \"conv2d\", \"inputs\": [\"c1\"], \"out_channels\": 6, \"kernel\": [5, 3], \"stride\": 2, \"padding\": [2, 1]},"
                         "  {\"name\": \"p\", \"type\": \"pool2d\", \"mode\": \"avg\", \"inputs\": [\"c1\"], \"kernel\": 3, \"stride\": 2, \"padding\": 1},"
                         "  {\"name\": \"cat\", \"type\": \"concat\", \"inputs\": [\"c2\", \"p\", \"c3\"]},"
                         "  {\"name\": \"bn\", \"type\": \"batchnorm\", \"inputs\": [\"cat\"]},"
                         "  {\"name\": \"sum\", \"type\": \"add\", \"inputs\": [\"bn\", \"cat\"]},"
                         "  {\"name\": \"flat\", \"type\": \"flatten\", \"inputs\": [\"sum\"]},"
                         "  {\"name\": \"fc\", \"type\": \"linear\", \"inputs\": [\"flat\"], \"out_features\": 6},"
                         "  {\"name\": \"prob\", \"type\": \"softmax\", \"inputs\": [\"fc\"]}]}");
    cluster *c = uniform4("parameter-server");
    check_odd_and_even_batch(n, c);
    cluster_free(c);
    net_free(n);
}

/* A flatten of a global pool's 1x1 map (ResNet-50's and Inception-v3's
 * last pool) is the channel dimension read as it is, which the closed form
 * takes (not the flat path, per task pair): every config pair against the
 * element reference, on one node and on two, with an odd batch. */
static const char *const gap_net =
    "{\"format\": \"layerwise-net/1\", \"name\": \"gap\","
    " \"input\": {\"name\": \"data\", \"channels\": 3, \"height\": 4, \"width\": 4},"
    " \"layers\": ["
    "  {\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 12, \"kernel\": 3, \"padding\": 1},"
    "  {\"name\": \"gap\", \"type\": \"pool2d\", \"mode\": \"avg\", \"inputs\": [\"c\"], \"kernel\": 4},"
    "  {\"name\": \"flat\", \"type\": \"flatten\", \"inputs\": [\"gap\"]},"
    "  {\"name\": \"fc\", \"type\": \"linear\", \"inputs\": [\"flat\"], \"out_features\": 6}]}";

Test(t_x, flatten_of_a_one_by_one_map_is_its_channel_dimension)
{
    network *n = net_ok(gap_net);
    int gi = -1;
    for (int i = 0; i < n->n_layers; i++)
        if (strcmp(n->layers[i].name, "gap") == 0) gi = i;
    cr_assert(gi >= 0 && n->layers[gi].out.h == 1 && n->layers[gi].out.w == 1);
    cluster *c = uniform4("parameter-server");
    check_odd_and_even_batch(n, c);
    cluster_free(c);
    const char *t = "{\"format\": \"layerwise-cluster/1\", \"name\": \"two\", \"nodes\": 2, \"gpus_per_node\": 4,"
                    " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
                    " \"intra_node\": {\"bandwidth_gbs\": 20, \"latency_us\": 2},"
                    " \"inter_node\": {\"bandwidth_gbs\": 3, \"latency_us\": 7, \"nics_per_node\": 2}}";
    lw_error err = {0};
    c = cluster_from_json(t, strlen(t), "two.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cost_model *m = build(n, c, NULL, 8, 8);
    check_all_overlaps(m);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* Eight GPUs on two nodes with latency and a link override: the plain
 * model (per-GPU queues, NIC sharing) against the tables, every pair. */
Test(t_x, two_nodes_with_latency_and_an_override_match_the_plain_model)
{
    network *n = net_ok(flat_net);
    const char *t = "{\"format\": \"layerwise-cluster/1\", \"name\": \"two\", \"nodes\": 2, \"gpus_per_node\": 4,"
                    " \"gpu\": {\"name\": \"G\", \"peak_tflops\": 10, \"memory_gib\": 16, \"memory_bandwidth_gbs\": 500},"
                    " \"intra_node\": {\"bandwidth_gbs\": 20, \"latency_us\": 2},"
                    " \"inter_node\": {\"bandwidth_gbs\": 3, \"latency_us\": 7, \"nics_per_node\": 2},"
                    " \"links\": [{\"gpus\": [1, 2], \"bandwidth_gbs\": 0.5, \"latency_us\": 1}]}";
    lw_error err = {0};
    cluster *c = cluster_from_json(t, strlen(t), "two.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cost_model *m = build(n, c, NULL, 8, 8);
    check_all_overlaps(m);
    cost_model_free(m);
    /* six GPUs: one node and a half */
    m = build(n, c, NULL, 6, 6);
    check_all_overlaps(m);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* ----------------------------------------------------- same blocks: no t_x */

Test(t_x, zero_when_blocks_sit_on_the_same_gpus)
{
    network *n = net_ok("{\"format\": \"layerwise-net/1\", \"name\": \"ew\","
                         " \"input\": {\"name\": \"data\", \"channels\": 8, \"height\": 8, \"width\": 8},"
                         " \"layers\": ["
                         "  {\"name\": \"conv\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 8, \"kernel\": 3, \"padding\": 1},"
                         "  {\"name\": \"relu\", \"type\": \"relu\", \"inputs\": [\"conv\"]},"
                         "  {\"name\": \"bn\", \"type\": \"batchnorm\", \"inputs\": [\"relu\"]},"
                         "  {\"name\": \"drop\", \"type\": \"dropout\", \"inputs\": [\"bn\"]},"
                         "  {\"name\": \"sum\", \"type\": \"add\", \"inputs\": [\"drop\", \"conv\"]}]}");
    cluster *c = make_cluster(2, 4, 10, 1, 5, 1, "parameter-server");
    cost_model *m = build(n, c, NULL, 8, 16);
    int checked = 0;
    for (int e = 0; e < m->n_edges; e++) {
        int a = m->e_from[e], b = m->e_to[e];
        if (a == 0) continue; /* data -> conv: a window */
        cr_assert_eq(m->n_configs[a], m->n_configs[b]);
        for (int k = 0; k < m->n_configs[b]; k++) {
            cr_assert(config_equal(&m->configs[a][k], &m->configs[b][k]));
            double bytes = -1;
            cr_assert_eq(cost_t_x(m, e, &m->configs[a][k], &m->configs[b][k], &bytes), 0);
            cr_assert_eq(bytes, 0);
            cr_assert_eq(m->t_x[e][k * m->n_configs[b] + k], 0);
            checked++;
        }
        /* and a different config does cost something */
        config one = C(1, 1, 1, 1), n8 = C(8, 1, 1, 1);
        cr_assert(cost_t_x(m, e, &one, &n8, NULL) > 0);
    }
    cr_assert(checked > 100);
    /* a conv split on n only finds its whole input block on its own GPU */
    int e0 = edge_id(m, "data", "conv", 0);
    config n8 = C(8, 1, 1, 1);
    cr_assert_eq(cost_t_x(m, e0, &n8, &n8, NULL), 0);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* ------------------------------------------------------- nodes and NICs */

Test(t_x, across_nodes_is_slower_than_within_a_node)
{
    network *n = net_ok(mlp);
    /* the same two GPUs, in one node (10 GB/s) or in two nodes (1 GB/s) */
    cluster *one = make_cluster(1, 2, 10, 1, 0, 1, "parameter-server");
    cluster *two = make_cluster(2, 1, 10, 1, 0, 1, "parameter-server");
    cost_model *m1 = build(n, one, NULL, 2, 8), *m2 = build(n, two, NULL, 2, 8);
    int e = edge_id(m1, "fc1", "fc2", 0);
    config c2 = C(1, 2, 1, 1);
    double b1, b2;
    double t1 = cost_t_x(m1, e, &c2, &c2, &b1), t2 = cost_t_x(m2, e, &c2, &c2, &b2);
    cr_assert_eq(b1, b2);
    /* each GPU gets one block of 32 features x 8 samples = 1024 B each way */
    ASSERT_REL(t1, 2 * 1024 / 1e10 * 1e3, 1e-12);
    ASSERT_REL(t2, 2 * 1024 / 1e9 * 1e3, 1e-12);
    cost_model_free(m1);
    cost_model_free(m2);
    cluster_free(one);
    cluster_free(two);

    /* the shipped 4x4 P100 cluster: NVLink inside a node beats InfiniBand */
    lw_error err = {0};
    cluster *p = plan_load_cluster("p100-4x4", &err);
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert(cluster_transfer_s(p, 0, 1, 1e8) < cluster_transfer_s(p, 0, 4, 1e8));
    cr_assert(cluster_transfer_s(p, 5, 6, 1e8) < cluster_transfer_s(p, 5, 9, 1e8));
    /* an all-to-all on 8 GPUs (two nodes) costs more per byte than on 4 */
    network *v = plan_load_network("vgg16", &err);
    cr_assert_not_null(v, "%s", err.msg);
    cost_model *m4 = build(v, p, NULL, 4, 128), *m8 = build(v, p, NULL, 8, 128);
    int ef = edge_id(m4, "fc6_dropout", "fc7", 0);
    config c4 = C(1, 4, 1, 1), c8 = C(1, 8, 1, 1);
    double x4, x8;
    double t4 = cost_t_x(m4, ef, &c4, &c4, &x4), t8 = cost_t_x(m8, ef, &c8, &c8, &x8);
    cr_assert(t8 / x8 > t4 / x4, "per byte: 8 GPUs %.3g, 4 GPUs %.3g", t8 / x8, t4 / x4);
    cost_model_free(m4);
    cost_model_free(m8);
    net_free(v);
    cluster_free(p);
    net_free(n);
}

Test(t_x, a_node_s_inter_node_traffic_shares_its_nics)
{
    network *n = net_ok(mlp);
    /* 2 nodes x 4 GPUs; intra-node links practically free (1e6 GB/s),
     * inter-node 1 GB/s; one or four NICs per node */
    cluster *c1 = make_cluster(2, 4, 1e6, 1, 0, 1, "parameter-server");
    cluster *c4 = make_cluster(2, 4, 1e6, 1, 0, 4, "parameter-server");
    cost_model *m1 = build(n, c1, NULL, 8, 8), *m4 = build(n, c4, NULL, 8, 8);
    int e = edge_id(m1, "fc1", "fc2", 0);
    config c8 = C(1, 8, 1, 1);
    /* fc1 c8: each GPU holds 8 features x 8 samples = 64 elements = 256 B.
     * Every fc2 task needs all of them: 3 blocks from its own node and 4
     * from the other. One GPU alone: 4 x 256 B / 1e9 + 3 x 256 / 1e15 s.
     * But the 4 GPUs of a node together pull 16 blocks = 4096 B through the
     * node's NICs: with one NIC that takes 4096 / 1e9 s, which bounds the
     * phase; with four it is 1024 / 1e9 s and the per-GPU time rules.
     * Backward is symmetric. */
    double per_gpu = 4 * 256 / 1e9 + 3 * 256 / 1e15;
    double b1, b4;
    ASSERT_REL(cost_t_x(m1, e, &c8, &c8, &b1), 2 * 4096 / 1e9 * 1e3, 1e-12);
    ASSERT_REL(cost_t_x(m4, e, &c8, &c8, &b4), 2 * per_gpu * 1e3, 1e-12);
    cr_assert_eq(b1, 2.0 * 8 * 7 * 256);
    cr_assert_eq(b1, b4);
    /* traffic inside one node does not touch the NICs: on 4 GPUs both agree */
    cost_model *m1b = build(n, c1, NULL, 4, 8), *m4b = build(n, c4, NULL, 4, 8);
    config q = C(1, 4, 1, 1);
    ASSERT_REL(cost_t_x(m1b, e, &q, &q, NULL), cost_t_x(m4b, e, &q, &q, NULL), 1e-15);
    cost_model_free(m1);
    cost_model_free(m4);
    cost_model_free(m1b);
    cost_model_free(m4b);
    cluster_free(c1);
    cluster_free(c4);
    net_free(n);
}

Test(t_x, gradients_into_one_node_share_its_nics)
{
    network *n = net_ok(mlp);
    /* 4 nodes x 2 GPUs, intra-node practically free, 1 GB/s between nodes */
    cluster *c = make_cluster(4, 2, 1e6, 1, 0, 1, "parameter-server");
    cost_model *m = build(n, c, NULL, 8, 8);
    int e = edge_id(m, "fc1", "fc2", 0);
    config c2 = C(1, 2, 1, 1), c8 = C(1, 8, 1, 1);
    /* fc1 c2 lives on node 0 (GPUs 0, 1: 32 features x 8 samples = 1024 B
     * each); fc2 c8 on all 8 GPUs needs both blocks everywhere. Forward,
     * node 0 sends 6 consumers x 2 blocks = 12288 B through its NIC:
     * 12.288 us (each remote GPU alone would take 2.048 us). Backward, the
     * 12 gradients from the other nodes come back into node 0's NIC:
     * 12.288 us again, though GPU 0 and GPU 1 each receive only 6 of them
     * (6.144 us). t_x = 24.576 us. */
    double bytes;
    ASSERT_REL(cost_t_x(m, e, &c2, &c8, &bytes), 2 * 12288 / 1e9 * 1e3, 1e-9);
    cr_assert_eq(bytes, 2.0 * (6 * 2 + 2) * 1024);
    check_all_overlaps(m);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

Test(t_x, latency_is_paid_per_piece)
{
    network *n = net_ok(mlp);
    cluster *c = make_cluster(1, 4, 10, 10, 5, 1, "parameter-server");
    cost_model *m = build(n, c, NULL, 4, 8);
    int e = edge_id(m, "fc1", "fc2", 0);
    config c4 = C(1, 4, 1, 1);
    /* three pieces of 512 B each way, each 5 us + 512 / 1e10 s */
    ASSERT_REL(cost_t_x(m, e, &c4, &c4, NULL), 2 * 3 * (5e-6 + 512 / 1e10) * 1e3, 1e-12);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* --------------------------------------------------------------------- t_s */

static const char *const one_conv =
    "{\"format\": \"layerwise-net/1\", \"name\": \"sync\","
    " \"input\": {\"name\": \"data\", \"channels\": 4, \"height\": 8, \"width\": 8},"
    " \"layers\": ["
    "  {\"name\": \"conv\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 8, \"kernel\": 3, \"padding\": 1},"
    "  {\"name\": \"pool\", \"type\": \"pool2d\", \"inputs\": [\"conv\"], \"kernel\": 2}]}";

Test(t_s, zero_with_one_replica)
{
    network *n = net_ok(one_conv);
    const char *syncs[] = {"parameter-server", "ring-allreduce"};
    for (int s = 0; s < 2; s++) {
        cluster *c = uniform4(syncs[s]);
        cost_model *m = build(n, c, NULL, 4, 8);
        int li = layer_id(m, "conv");
        cr_assert_eq(m->net->layers[li].n_params, 8 * (4 * 9 + 1));
        double bytes = -1;
        config one = C(1, 1, 1, 1), c2 = C(1, 2, 1, 1), c4 = C(1, 4, 1, 1);
        cr_assert_eq(cost_t_s(m, li, &one, &bytes), 0);
        cr_assert_eq(bytes, 0);
        cr_assert_eq(cost_t_s(m, li, &c2, &bytes), 0);
        cr_assert_eq(cost_t_s(m, li, &c4, &bytes), 0);
        cr_assert_eq(bytes, 0);
        /* layers without parameters never sync */
        int pl = layer_id(m, "pool");
        for (int k = 0; k < m->n_configs[pl]; k++) cr_assert_eq(m->t_s[pl][k], 0);
        for (int k = 0; k < m->n_configs[0]; k++) cr_assert_eq(m->t_s[0][k], 0);
        cost_model_free(m);
        /* one GPU: nothing syncs */
        cost_model *m1 = build(n, c, NULL, 1, 8);
        cr_assert_eq(m1->n_configs[li], 1);
        cr_assert_eq(m1->t_s[li][0], 0);
        cost_model_free(m1);
        cluster_free(c);
    }
    net_free(n);
}

Test(t_s, replicas_sync_on_a_uniform_node)
{
    network *n = net_ok(one_conv);
    /* 296 parameters = 1184 bytes. n4: four replicas of the whole weights.
     * Parameter server (sharded over the replicas): each GPU receives 3
     * gradient pieces of 1184/4 = 296 B, then 3 weight pieces: t_s =
     * 2 x 3 x 296 / 1e10 s = 1.776e-4 ms. Ring all-reduce: 2(r-1) = 6 steps
     * of 296 B: the same on uniform links. Bytes: every replica sends and
     * receives (r-1)/r of the weights twice: 2 x 3 x 1184 = 7104. */
    const char *syncs[] = {"parameter-server", "ring-allreduce"};
    for (int s = 0; s < 2; s++) {
        cluster *c = uniform4(syncs[s]);
        cost_model *m = build(n, c, NULL, 4, 8);
        int li = layer_id(m, "conv");
        double bytes;
        config n4 = C(4, 1, 1, 1), h2w2 = C(1, 1, 2, 2), n2c2 = C(2, 2, 1, 1), n2 = C(2, 1, 1, 1);
        ASSERT_REL(cost_t_s(m, li, &n4, &bytes), 1.776e-4, 1e-12);
        cr_assert_eq(bytes, 7104);
        ASSERT_REL(m->t_s[li][config_index(m, li, n4)], 1.776e-4, 1e-12);
        /* h and w splits replicate the weights just the same */
        ASSERT_REL(cost_t_s(m, li, &h2w2, &bytes), 1.776e-4, 1e-12);
        cr_assert_eq(bytes, 7104);
        /* n2: two replicas exchange halves: 2 x 592 / 1e10 s */
        ASSERT_REL(cost_t_s(m, li, &n2, &bytes), 2 * 592 / 1e10 * 1e3, 1e-12);
        cr_assert_eq(bytes, 2.0 * 1184);
        /* n2 c2: two shards of 592 B, each with two replicas (tasks 0, 2 and
         * 1, 3) exchanging 296 B pieces at the same time */
        ASSERT_REL(cost_t_s(m, li, &n2c2, &bytes), 2 * 296 / 1e10 * 1e3, 1e-12);
        cr_assert_eq(bytes, 2.0 * 1 * 592 * 2);
        cost_model_free(m);
        cluster_free(c);
    }
    net_free(n);
}

Test(t_s, latency_per_message)
{
    network *n = net_ok(one_conv);
    const char *syncs[] = {"parameter-server", "ring-allreduce"};
    for (int s = 0; s < 2; s++) {
        cluster *c = make_cluster(1, 4, 10, 10, 5, 1, syncs[s]);
        cost_model *m = build(n, c, NULL, 4, 8);
        int li = layer_id(m, "conv");
        config n4 = C(4, 1, 1, 1);
        /* PS: six messages in a row on the busiest GPU, each with the
         * link's latency; a ring all-reduce is one NCCL call whose latency
         * is the cluster's collectives figures (zero here), not the links' */
        ASSERT_REL(cost_t_s(m, li, &n4, NULL), (s == 0 ? 6 * (5e-6 + 296 / 1e10) : 6 * 296 / 1e10) * 1e3, 1e-12);
        cost_model_free(m);
        cluster_free(c);
    }
    net_free(n);
}

Test(t_s, parameter_server_and_ring_differ_across_nodes)
{
    network *n = net_ok(one_conv);
    /* 2 nodes x 2 GPUs, 10 GB/s inside a node, 1 GB/s between, one NIC.
     * n4, pieces of 296 B.
     * PS: GPU 0 receives from GPU 1 (intra) and 2, 3 (inter):
     *   296/1e10 + 2 x 296/1e9 s; but node 0's NIC takes 4 pieces in
     *   (from 2, 3 to 0, 1) = 1184 B / 1e9 s, which bounds each phase:
     *   t_s = 2 x 1184 / 1e9 s = 2.368e-3 ms.
     * Ring 0 -> 1 -> 2 -> 3 -> 0: a step lasts as long as the slowest link
     *   (296 B over 1 GB/s; each NIC carries one piece each way):
     *   t_s = 2 x 3 x 296 / 1e9 s = 1.776e-3 ms. */
    cluster *ps = make_cluster(2, 2, 10, 1, 0, 1, "parameter-server");
    cluster *ring = make_cluster(2, 2, 10, 1, 0, 1, "ring-allreduce");
    cost_model *mp = build(n, ps, NULL, 4, 8), *mr = build(n, ring, NULL, 4, 8);
    int li = layer_id(mp, "conv");
    config n4 = C(4, 1, 1, 1);
    double bp, br;
    ASSERT_REL(cost_t_s(mp, li, &n4, &bp), 2.368e-3, 1e-12);
    ASSERT_REL(cost_t_s(mr, li, &n4, &br), 1.776e-3, 1e-12);
    cr_assert_eq(bp, 7104);
    cr_assert_eq(br, 7104);
    /* n2 on the first node only: no NIC involved, 2 x 592 / 1e10 s */
    config n2 = C(2, 1, 1, 1);
    ASSERT_REL(cost_t_s(mp, li, &n2, NULL), 2 * 592 / 1e10 * 1e3, 1e-12);
    ASSERT_REL(cost_t_s(mr, li, &n2, NULL), 2 * 592 / 1e10 * 1e3, 1e-12);
    cost_model_free(mp);
    cost_model_free(mr);
    cluster_free(ps);
    cluster_free(ring);
    net_free(n);
}

Test(t_s, the_rings_of_all_shards_share_the_nics)
{
    network *n = net_ok(one_conv);
    /* 2 nodes x 4 GPUs, intra practically free, 1 GB/s between nodes.
     * conv n2 c4 on 8 GPUs: 4 shards of 1184/4 = 296 B, each replicated on
     * GPU j (node 0) and GPU 4 + j (node 1), exchanging 148 B pieces. Alone
     * a piece takes 148 ns; but the 4 shards cross node 0's NIC at once:
     * 592 ns with one NIC, 148 ns with four. Both schemes: 2 x that. */
    const char *syncs[] = {"parameter-server", "ring-allreduce"};
    for (int s = 0; s < 2; s++) {
        cluster *c1 = make_cluster(2, 4, 1e6, 1, 0, 1, syncs[s]);
        cluster *c4 = make_cluster(2, 4, 1e6, 1, 0, 4, syncs[s]);
        cost_model *m1 = build(n, c1, NULL, 8, 8), *m4 = build(n, c4, NULL, 8, 8);
        int li = layer_id(m1, "conv");
        config q = C(2, 4, 1, 1);
        double b1, b4;
        ASSERT_REL(cost_t_s(m1, li, &q, &b1), 2 * 592e-9 * 1e3, 1e-9);
        ASSERT_REL(cost_t_s(m4, li, &q, &b4), 2 * 148e-9 * 1e3, 1e-9);
        cr_assert_eq(b1, 2.0 * 1 * 296 * 4);
        cr_assert_eq(b1, b4);
        cost_model_free(m1);
        cost_model_free(m4);
        cluster_free(c1);
        cluster_free(c4);
    }
    net_free(n);
}

Test(t_s, grows_with_n_split_on_a_big_layer)
{
    lw_error err = {0};
    network *v = plan_load_network("vgg16", &err);
    cr_assert_not_null(v, "%s", err.msg);
    cluster *p = plan_load_cluster("p100-4x4", &err);
    cr_assert_not_null(p, "%s", err.msg);
    cost_model *m = build(v, p, NULL, 16, 512);
    int fc6 = layer_id(m, "fc6");
    double prev = 0;
    for (int d = 2; d <= 16; d *= 2) {
        config c = C(d, 1, 1, 1);
        double t = cost_t_s(m, fc6, &c, NULL);
        cr_assert(t > prev, "t_s(fc6, n%d) = %g, not above %g", d, t, prev);
        prev = t;
    }
    /* 102.8 M weights = 411 MB over links of at most tens of GB/s */
    cr_assert(prev > 10, "t_s(fc6, n16) = %g ms is implausibly small", prev);
    config c16 = C(1, 16, 1, 1);
    cr_assert_eq(cost_t_s(m, fc6, &c16, NULL), 0);
    cost_model_free(m);
    cluster_free(p);
    net_free(v);
}

/* --------------------------------------------------------------------- t_c */

Test(t_c, splitting_a_big_conv_over_more_gpus_is_faster)
{
    lw_error err = {0};
    network *v = plan_load_network("vgg16", &err);
    cr_assert_not_null(v, "%s", err.msg);
    cluster *p = plan_load_cluster("p100-4x4", &err);
    cr_assert_not_null(p, "%s", err.msg);
    cost_model *m = build(v, p, NULL, 16, 512);
    const char *layers[] = {"conv1_2", "conv3_2", "conv5_1"};
    for (int k = 0; k < 3; k++) {
        int li = layer_id(m, layers[k]);
        for (int dim = 0; dim < NDIMS; dim++) {
            double prev = INFINITY;
            for (int d = 1; d <= 16; d *= 2) {
                config c = C(1, 1, 1, 1);
                c.deg[dim] = d;
                if (config_find(m->configs[li], m->n_configs[li], &c) < 0) break;
                double t = cost_t_c(m, li, &c, NULL);
                cr_assert(t > 0 && isfinite(t));
                cr_assert(t < prev, "%s: t_c with %c%d = %g ms, not below %g", layers[k], config_dim_letter[dim], d, t,
                          prev);
                prev = t;
            }
        }
        /* and the tables hold what cost_t_c says */
        for (int i = 0; i < m->n_configs[li]; i++) {
            int prof = -1;
            cr_assert_eq(m->t_c[li][i], cost_t_c(m, li, &m->configs[li][i], &prof));
            cr_assert_eq(prof, 0);
            cr_assert_eq(m->t_c_profiled[li][i], 0);
        }
    }
    /* a flatten is a view: nothing to compute; the input carries only the
     * per-step overhead, the same for every config */
    int fl = layer_id(m, "flat");
    for (int i = 0; i < m->n_configs[fl]; i++) cr_assert_eq(m->t_c[fl][i], 0);
    for (int i = 0; i < m->n_configs[0]; i++) {
        cr_assert_eq(m->t_c[0][i], m->t_c[0][0]);
        cr_assert_eq(m->t_c[0][i], p->gpu.step_overhead_ms);
    }
    cost_model_free(m);
    cluster_free(p);
    net_free(v);
}

/* Winograd on 5x5 filters (cuDNN's WINOGRAD_NONFUSED): the output tile
 * the 3x3 saving fixes (P100: 4, F(4x4,3x3)) gives a 5x5 filter
 * F(4x4,5x5), (5*4/8)^2 = 6.25 times fewer multiplies, its transforms
 * through memory. With 256 channels each way the GEMM saving wins: a 5x5
 * convolution costs less than the direct algorithm's flops alone at the
 * GEMM rate. With 3 input channels (a first layer) the transforms of its
 * 64 output channels cost more than the saving: it stays direct, no
 * faster than those flops. */
static const char *const conv5_net =
    "{\"format\": \"layerwise-net/1\", \"name\": \"c5\","
    " \"input\": {\"name\": \"data\", \"channels\": 3, \"height\": 224, \"width\": 224},"
    " \"layers\": ["
    "  {\"name\": \"first\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 64, \"kernel\": 5,"
    "   \"padding\": 2},"
    "  {\"name\": \"pool\", \"type\": \"pool2d\", \"mode\": \"max\", \"inputs\": [\"first\"], \"kernel\": 8,"
    "   \"stride\": 8},"
    "  {\"name\": \"widen\", \"type\": \"conv2d\", \"inputs\": [\"pool\"], \"out_channels\": 256, \"kernel\": 1},"
    "  {\"name\": \"big\", \"type\": \"conv2d\", \"inputs\": [\"widen\"], \"out_channels\": 256, \"kernel\": 5,"
    "   \"padding\": 2}]}";

Test(t_c, a_5x5_conv_with_many_channels_runs_winograd_one_with_few_stays_direct)
{
    lw_error err = {0};
    network *n = net_from_json(conv5_net, strlen(conv5_net), "c5.json", &err);
    cr_assert_not_null(n, "%s", err.msg);
    cluster *p = plan_load_cluster("p100-4x4", &err);
    cr_assert_not_null(p, "%s", err.msg);
    cost_model *m = build(n, p, NULL, 1, 64);
    gpu_consts k;
    cr_assert_eq(cluster_gpu_consts(p, PREC_FP32, &k), 0);
    const double rate = k.peak_tflops * 1e12 * k.efficiency[OPC_CONV];
    config one = C(1, 1, 1, 1);
    /* big: 64 x 28 x 28 outputs of 256 channels, 256 x 25 multiply-adds each */
    int big = layer_id(m, "big");
    double f = 2.0 * 64 * 28 * 28 * 256 * 256 * 25, fwd, bwd;
    cost_t_c_parts(m, big, &one, NULL, &fwd, &bwd);
    cr_assert(fwd + bwd < 3 * f / rate * 1e3, "big 5x5: %g ms, not below the direct flops' %g", fwd + bwd,
              3 * f / rate * 1e3);
    cr_assert(fwd + bwd > 3 * f / 6.25 / rate * 1e3, "but not below F(4x4,5x5)'s multiplies");
    /* first: 3 input channels */
    int first = layer_id(m, "first");
    f = 2.0 * 64 * 224 * 224 * 64 * 3 * 25;
    cost_t_c_parts(m, first, &one, NULL, &fwd, &bwd);
    cr_assert(fwd >= f / rate * 1e3, "first 5x5: %g ms forward, below its direct flops' %g", fwd, f / rate * 1e3);
    cost_model_free(m);
    cluster_free(p);
    net_free(n);
}

static const char *const attn_net =
    "{\"format\": \"layerwise-net/1\", \"name\": \"att\", \"input\": {\"name\": \"tokens\", \"sequence\": 512},"
    " \"layers\": ["
    "  {\"name\": \"embed\", \"type\": \"embedding\", \"inputs\": [\"tokens\"], \"vocab\": 1000, \"hidden\": 1024,"
    "   \"positions\": 512},"
    "  {\"name\": \"attn\", \"type\": \"attention\", \"inputs\": [\"embed\"], \"heads\": 16}]}";

/* Standard (unfused) attention runs its scale, mask, softmax and dropout
 * as kernels of their own between the batched GEMMs: each reads and writes
 * the b x heads x s x s scores (the dropout also a byte of mask a score)
 * at memory bandwidth, after the GEMMs, not hidden under their flops.
 * BERT-large's attention at sequence 512, batch 8: 33.6 M scores, 8
 * element passes of 2 bytes and a mask byte forward. */
Test(t_c, standard_attention_s_score_kernels_add_to_its_gemms)
{
    lw_error err = {0};
    network *n = net_from_json(attn_net, strlen(attn_net), "att.json", &err);
    cr_assert_not_null(n, "%s", err.msg);
    cluster *v = plan_load_cluster("dgx1-v100", &err);
    cr_assert_not_null(v, "%s", err.msg);
    cr_assert_eq(cluster_set_precision(v, PREC_FP16, &err), 0, "%s", err.msg);
    cost_model *m = build(n, v, NULL, 1, 8);
    const gpu_consts *g = &m->gk;
    const double B = 8, S = 512, F = 1024, A = 16, eb = m->elem_bytes;
    cr_assert_eq(eb, 2);
    const double gemm = 2 * B * S * F * 3 * F + 4 * B * A * S * S * (F / A), scores = B * A * S * S;
    const double t_gemm = gemm / (g->peak_tflops * 1e12 * g->efficiency[OPC_LINEAR]) * 1e3;
    const double bw = v->gpu.memory_bandwidth_gbs * 1e9 * g->memory_efficiency;
    const double t_scores = scores * (8 * eb + 1) / bw * 1e3, t_scores_b = scores * (7 * eb + 1) / bw * 1e3;
    config one = C(1, 1, 1, 1);
    const int at = layer_id(m, "attn");
    double ff, fb, sf, sb;
    cost_t_c_parts(m, at, &one, NULL, &ff, &fb);
    m->attention = ATTENTION_STANDARD;
    cost_t_c_parts(m, at, &one, NULL, &sf, &sb);
    cr_assert(sf >= t_gemm + t_scores, "standard forward %g ms, below its GEMMs' %g + its score kernels' %g", sf,
              t_gemm, t_scores);
    cr_assert(sf - ff >= t_scores, "standard %g ms, flash %g: the scores' passes (%g ms) hidden", sf, ff, t_scores);
    cr_assert(sb - fb >= t_scores_b, "backward: standard %g ms, flash %g, scores %g", sb, fb, t_scores_b);
    cost_model_free(m);
    cluster_free(v);
    net_free(n);
}

static const char *const prof_net =
    "{\"format\": \"layerwise-net/1\", \"name\": \"prof\","
    " \"input\": {\"name\": \"data\", \"channels\": 4, \"height\": 8, \"width\": 8},"
    " \"layers\": ["
    "  {\"name\": \"conv\", \"type\": \"conv2d\", \"inputs\": [\"data\"], \"out_channels\": 8, \"kernel\": 3, \"padding\": 1}]}";

static profile *prof_str(const char *gpu)
{
    char t[1024];
    /* n2 of a batch of 4: one task computes [2, 8, 8, 8] from [2, 4, 8, 8].
     * h2: a task computes rows [4, 8) (4 rows) and reads rows [3, 8) (5). */
    snprintf(t, sizeof t,
             "{\"format\": \"layerwise-profile/1\", \"gpu\": \"%s\", \"entries\": ["
             " {\"type\": \"conv2d\", \"input\": [2, 4, 8, 8], \"output\": [2, 8, 8, 8], \"kernel\": 3,"
             "  \"stride\": 1, \"padding\": 1, \"forward_ms\": 1.25, \"backward_ms\": 2.5},"
             " {\"type\": \"conv2d\", \"input\": [4, 4, 5, 8], \"output\": [4, 8, 4, 8], \"kernel\": [3, 3],"
             "  \"stride\": [1, 1], \"padding\": [1, 1], \"forward_ms\": 0.5, \"backward_ms\": 0.25},"
             " {\"type\": \"conv2d\", \"input\": [2, 4, 8, 8], \"output\": [2, 8, 8, 8], \"kernel\": 3,"
             "  \"stride\": 1, \"padding\": 0, \"forward_ms\": 100, \"backward_ms\": 100}]}",
             gpu);
    lw_error err = {0};
    profile *p = profile_from_json(t, strlen(t), "prof.json", &err);
    cr_assert_not_null(p, "%s", err.msg);
    return p;
}

Test(t_c, a_profile_entry_overrides_exactly_when_gpu_and_shape_match)
{
    network *n = net_ok(prof_net);
    cluster *c = uniform4("parameter-server"); /* gpu.name "TestGPU" */
    cost_model *plain = build(n, c, NULL, 4, 4);
    profile *p = prof_str("TestGPU");
    cost_model *m = build(n, c, p, 4, 4);
    int li = layer_id(m, "conv");
    config n2 = C(2, 1, 1, 1), h2 = C(1, 1, 2, 1), one = C(1, 1, 1, 1), n4 = C(4, 1, 1, 1);
    int k = config_index(m, li, n2);
    int prof = 0;
    cr_assert_eq(cost_t_c(m, li, &n2, &prof), 3.75);
    cr_assert_eq(prof, 1);
    cr_assert_eq(m->t_c[li][k], 3.75);
    cr_assert_eq(m->t_c_profiled[li][k], 1);
    cr_assert_eq(cost_t_c(m, li, &h2, &prof), 0.75);
    cr_assert_eq(prof, 1);
    /* other shapes keep the analytical estimate */
    for (int i = 0; i < m->n_configs[li]; i++) {
        const config *ci = &m->configs[li][i];
        if (config_equal(ci, &n2) || config_equal(ci, &h2)) continue;
        cr_assert_eq(m->t_c_profiled[li][i], 0, "config %d marked profiled", i);
        cr_assert_eq(m->t_c[li][i], plain->t_c[li][i]);
    }
    cr_assert_neq(cost_t_c(m, li, &one, NULL), 3.75);
    cr_assert_eq(cost_t_c(m, li, &n4, &prof), plain->t_c[li][config_index(plain, li, n4)]);
    cr_assert_eq(prof, 0);
    /* strategy evaluation reports the profiled layer */
    int *ci = calloc((size_t)m->n_layers, sizeof(int));
    ci[li] = k;
    strategy_eval ev;
    strategy_evaluate(m, ci, &ev);
    cr_assert_eq(ev.layers[li].profiled, 1);
    cr_assert_eq(ev.layers[li].compute_ms, 3.75);
    strategy_eval_free(&ev);
    free(ci);
    cost_model_free(m);
    profile_free(p);

    /* a profile measured on another GPU does not apply */
    profile *other = prof_str("OtherGPU");
    cost_model *mo = build(n, c, other, 4, 4);
    cr_assert_null(mo->prof);
    for (int i = 0; i < mo->n_configs[li]; i++) {
        cr_assert_eq(mo->t_c[li][i], plain->t_c[li][i]);
        cr_assert_eq(mo->t_c_profiled[li][i], 0);
    }
    cost_model_free(mo);
    profile_free(other);
    cost_model_free(plain);
    cluster_free(c);
    net_free(n);
}

/* Issue 31: a profile measured at one precision is not applied at another
 * (a what-if such as the TUI's P changes the cluster's precision under it);
 * at its own precision, or where it records none, it is. */
Test(t_c, a_profile_applies_only_at_the_precision_it_was_measured_at)
{
    network *n = net_ok(prof_net);
    cluster *c = uniform4("parameter-server");
    gpu_consts k;
    cr_assert_eq(cluster_gpu_consts(c, PREC_FP32, &k), 0);
    k.peak_tflops *= 4;
    c->gpu.prec[PREC_FP16] = k;
    c->gpu.has_prec[PREC_FP16] = 1;
    profile *p = prof_str("TestGPU");
    const config n2 = C(2, 1, 1, 1);
    p->precision = PREC_FP16;
    lw_error err = {0};
    for (int round = 0; round < 3; round++) {
        /* 0: fp32 (not its precision), 1: fp16 (its own), 2: unrecorded at fp32 */
        if (round == 2) p->precision = -1;
        cr_assert_eq(cluster_set_precision(c, round == 1 ? PREC_FP16 : PREC_FP32, &err), 0, "%s", err.msg);
        cost_model *plain = build(n, c, NULL, 4, 4), *m = build(n, c, p, 4, 4);
        int li = layer_id(m, "conv"), ci = config_index(m, li, n2);
        int used = round != 0;
        cr_assert_eq(m->prof != NULL, used, "round %d", round);
        cr_assert_eq(m->t_c_profiled[li][ci], used, "round %d", round);
        cr_assert_eq(m->t_c[li][ci], used ? 3.75 : plain->t_c[li][ci], "round %d: %g", round, m->t_c[li][ci]);
        cost_model_free(m);
        cost_model_free(plain);
    }
    profile_free(p);
    cluster_free(c);
    net_free(n);
}

/* ------------------------------------------------------------------ memory */

Test(memory, data_parallel_vgg16_holds_full_weights_on_every_gpu)
{
    lw_error err = {0};
    network *v = plan_load_network("vgg16", &err);
    cr_assert_not_null(v, "%s", err.msg);
    cluster *p = plan_load_cluster("p100-4x4", &err);
    cr_assert_not_null(p, "%s", err.msg);
    cost_model *m = build(v, p, NULL, 4, 128);
    m->optimizer = OPT_SGD; /* plain SGD keeps no state; no fixed workspace: the per-layer terms alone */
    m->workspace_bytes = 0;
    int *ci = calloc((size_t)m->n_layers, sizeof(int));
    strategy_baseline(m, BASE_DATA, ci);
    for (int i = 0; i < m->n_layers; i++) cr_assert(config_equal(&m->configs[i][ci[i]], &(config){{4, 1, 1, 1, 1, 1}}));
    /* weights + gradients (2 x 4 bytes x 138.4 M) and, per layer, the 32
     * samples' outputs kept for backward (a flatten is a view: nothing) */
    double act = 0;
    for (int i = 0; i < v->n_layers; i++)
        if (v->layers[i].type != LT_FLATTEN) act += 32.0 * (double)shape_elems(v->layers[i].out) * 4;
    double want = 2 * 4 * (double)net_params(v) + act;
    double per[4];
    double peak = cost_memory(m, ci, per);
    for (int g = 0; g < 4; g++) ASSERT_REL(per[g], want, 1e-12);
    ASSERT_REL(peak, want, 1e-12);
    ASSERT_REL(cost_memory(m, ci, NULL), want, 1e-12);
    cr_assert(want > 2 * 4 * 138e6);

    /* model parallel: fc6's weights are split four ways */
    strategy_baseline(m, BASE_MODEL, ci);
    int fc6 = layer_id(m, "fc6");
    cr_assert_eq(m->configs[fc6][ci[fc6]].deg[DIM_C], 4);
    double pm = cost_memory(m, ci, per);
    cr_assert(pm < want - 2 * 4 * 0.7 * 102.7e6, "model parallel peak %g vs data parallel %g", pm, want);
    cost_model_free(m);
    free(ci);
    cluster_free(p);
    net_free(v);
}

Test(memory, single_gpu_holds_everything_and_others_nothing)
{
    network *n = net_ok(one_conv);
    cluster *c = uniform4("parameter-server");
    cost_model *m = build(n, c, NULL, 4, 8);
    m->optimizer = OPT_SGD;
    m->workspace_bytes = 0;
    int ci[3] = {0, 0, 0};
    double per[4];
    /* data 4x8x8, conv 8x8x8, pool 8x4x4 for 8 samples; 296 weights */
    double want = 2 * 4 * 296.0 + 8 * 4 * (256 + 512 + 128);
    ASSERT_REL(cost_memory(m, ci, per), want, 1e-12);
    ASSERT_REL(per[0], want, 1e-12);
    cr_assert_eq(per[1], 0);
    cr_assert_eq(per[3], 0);
    /* conv c2: each half holds half the weights and half the channels */
    ci[1] = config_index(m, 1, C(1, 2, 1, 1));
    cost_memory(m, ci, per);
    ASSERT_REL(per[1], 2 * 4 * 148.0 + 8 * 4 * 256, 1e-12);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* Each term of the memory model by hand on the one-conv network (296
 * weights; conv output 8x8x8 per sample, 8 samples): optimizer state, mixed
 * precision's master weights, and the workspace on the GPUs that host a
 * task only. */
Test(memory, terms_per_optimizer_precision_and_workspace)
{
    network *n = net_ok(one_conv);
    cluster *c = uniform4("parameter-server");
    cost_model *m = build(n, c, NULL, 4, 8);
    cr_assert_eq(m->optimizer, OPT_MOMENTUM, "momentum is the default (the paper's SGD with momentum)");
    cr_assert_eq(m->workspace_bytes, COST_WORKSPACE_BYTES);
    config one = C(1, 1, 1, 1), c2 = C(1, 2, 1, 1), n2 = C(2, 1, 1, 1);
    memory_parts p;
    /* fp32, momentum: weights 4 + gradients 4 + momentum 4 bytes a weight */
    double t = cost_memory_task(m, 1, &one, 0, &p);
    ASSERT_REL(p.weights, 4 * 296.0, 1e-12);
    ASSERT_REL(p.gradients, 4 * 296.0, 1e-12);
    ASSERT_REL(p.optimizer, 4 * 296.0, 1e-12);
    ASSERT_REL(p.activations, 8 * 4 * 512.0, 1e-12);
    ASSERT_REL(t, 12 * 296.0 + 8 * 4 * 512.0, 1e-12);
    /* Adam: two fp32 moments */
    m->optimizer = OPT_ADAM;
    cost_memory_task(m, 1, &one, 0, &p);
    ASSERT_REL(p.optimizer, 8 * 296.0, 1e-12);
    /* mixed precision (2-byte elements): fp32 master + fp16 copy, fp16
     * gradients, fp32 moments, fp16 activations: 16 bytes a weight with
     * Adam (ZeRO, Rajbhandari et al. 2020, section 3.1) */
    m->elem_bytes = 2;
    t = cost_memory_task(m, 1, &one, 0, &p);
    ASSERT_REL(p.weights, 6 * 296.0, 1e-12);
    ASSERT_REL(p.gradients, 2 * 296.0, 1e-12);
    ASSERT_REL(t, 16 * 296.0 + 8 * 2 * 512.0, 1e-12);
    /* c2 halves weights and activations; n2 halves only the activations */
    m->optimizer = OPT_SGD;
    m->elem_bytes = 4;
    ASSERT_REL(cost_memory_task(m, 1, &c2, 1, NULL), 8 * 148.0 + 8 * 4 * 256.0, 1e-12);
    ASSERT_REL(cost_memory_task(m, 1, &n2, 1, NULL), 8 * 296.0 + 4 * 4 * 512.0, 1e-12);
    /* the workspace sits on GPUs 0 and 1 (conv in c2), not on 2 and 3 */
    int ci[3] = {0, config_index(m, 1, c2), 0};
    double per[4], sum[4] = {0};
    for (int l = 0; l < 3; l++)
        for (int k = 0; k < config_tasks(&m->configs[l][ci[l]]); k++)
            sum[k] += cost_memory_task(m, l, &m->configs[l][ci[l]], k, NULL);
    double peak = cost_memory(m, ci, per);
    ASSERT_REL(per[0], sum[0] + COST_WORKSPACE_BYTES, 1e-12);
    ASSERT_REL(per[1], sum[1] + COST_WORKSPACE_BYTES, 1e-12);
    cr_assert_eq(per[2], 0);
    cr_assert_eq(per[3], 0);
    ASSERT_REL(peak, per[0] > per[1] ? per[0] : per[1], 1e-12);
    cr_assert_eq(optimizer_from_name("adam"), OPT_ADAM);
    cr_assert_eq(optimizer_from_name("Adam"), -1);
    cr_assert_str_eq(optimizer_name(OPT_MOMENTUM), "momentum");
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* ----------------------------------------------------- tables and graph */

/* The tables the model builds (threads, reuse of equal edges) hold exactly
 * what the single evaluations give, and cost_model_graph copies them. Per
 * edge at most about max_pairs (producer, consumer) pairs are evaluated
 * again, spread evenly over the table (every pair when it is small). */
static void check_tables(const char *netname, const char *clname, int gpus, int max_pairs)
{
    lw_error err = {0};
    network *v = plan_load_network(netname, &err);
    cr_assert_not_null(v, "%s", err.msg);
    cluster *p = plan_load_cluster(clname, &err);
    cr_assert_not_null(p, "%s", err.msg);
    cost_model *m = build(v, p, NULL, gpus, 32L * gpus);
    cost_graph *g = cost_model_graph(m);
    cr_assert_eq(g->n_nodes, m->n_layers);
    cr_assert_eq(g->n_edges, m->n_edges);
    for (int i = 0; i < m->n_layers; i++) {
        cr_assert_eq(g->n_configs[i], m->n_configs[i]);
        for (int k = 0; k < m->n_configs[i]; k++) {
            const config *c = &m->configs[i][k];
            cr_assert_eq(m->t_c[i][k], cost_t_c(m, i, c, NULL));
            cr_assert_eq(m->t_s[i][k], cost_t_s(m, i, c, NULL));
            cr_assert_eq(g->node_cost[i][k], m->t_c[i][k] + m->t_s[i][k]);
            cr_assert(m->t_c[i][k] >= 0 && m->t_s[i][k] >= 0 && isfinite(m->t_c[i][k]) && isfinite(m->t_s[i][k]));
        }
    }
    for (int e = 0; e < m->n_edges; e++) {
        int a = m->e_from[e], b = m->e_to[e];
        cr_assert_eq(g->edge_from[e], a);
        cr_assert_eq(g->edge_to[e], b);
        int pairs = m->n_configs[a] * m->n_configs[b];
        int step = (pairs + max_pairs - 1) / max_pairs;
        for (int q = (e * 7) % step; q < pairs; q += step) {
            int i = q / m->n_configs[b], j = q % m->n_configs[b];
            double t = cost_t_x(m, e, &m->configs[a][i], &m->configs[b][j], NULL);
            double tab = m->t_x[e][i * m->n_configs[b] + j];
            cr_assert(REL_EQ(tab, t, 1e-12), "%s on %d GPUs: edge %s -> %s, configs %d,%d: table %.17g, direct %.17g",
                      netname, gpus, v->layers[a].name, v->layers[b].name, i, j, tab, t);
            cr_assert_eq(g->edge_cost[e][i * m->n_configs[b] + j], tab);
        }
        for (int q = 0; q < pairs; q++) {
            double tab = m->t_x[e][q];
            cr_assert(tab >= 0 && isfinite(tab));
            cr_assert_eq(g->edge_cost[e][q], tab);
        }
    }
    cg_free(g);
    cost_model_free(m);
    cluster_free(p);
    net_free(v);
}

Test(tables, equal_single_evaluations_alexnet_8_gpus)
{
    check_tables("alexnet", "p100-4x4", 8, 400);
}

Test(tables, equal_single_evaluations_inception_4_gpus)
{
    check_tables("inception_v3", "p100-4x4", 4, 60);
}

Test(tables, equal_single_evaluations_resnet50_ring_2_gpus)
{
    check_tables("resnet50", "workstation-4x-pcie", 2, 25);
}

Test(tables, edges_follow_consumers_and_input_slots)
{
    network *n = net_ok(concat_net);
    cluster *c = uniform4("parameter-server");
    cost_model *m = build(n, c, NULL, 4, 2);
    cr_assert_eq(m->n_edges, 4);
    int k = 0;
    for (int i = 0; i < m->n_layers; i++)
        for (int s = 0; s < n->layers[i].n_inputs; s++, k++) {
            cr_assert_eq(m->e_to[k], i);
            cr_assert_eq(m->e_slot[k], s);
            cr_assert_eq(m->e_from[k], n->layers[i].inputs[s]);
        }
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

Test(tables, bad_settings_are_refused)
{
    network *n = net_ok(one_conv);
    cluster *c = uniform4("parameter-server");
    lw_error err = {0};
    cr_assert_null(cost_model_build(n, c, NULL, 0, 8, &err));
    cr_assert_eq(err.code, 2);
    cr_assert_null(cost_model_build(n, c, NULL, 5, 8, &err));
    cr_assert_eq(err.code, 2);
    cr_assert(strstr(err.msg, "5") && strstr(err.msg, "4"), "%s", err.msg);
    cr_assert_null(cost_model_build(n, c, NULL, 2, 0, &err));
    cr_assert_eq(err.code, 2);
    cluster_free(c);
    net_free(n);
}

/* A build nobody wants any more (the TUI's prefetch) gives up: NULL and
 * "cancelled", nothing leaked; with the flag clear it builds as usual. */
Test(tables, a_cancelled_build_says_so)
{
    network *n = net_ok(concat_net);
    cluster *c = uniform4("parameter-server");
    lw_error err = {0};
    atomic_int flag = 1;
    cr_assert_null(cost_model_build_cancellable(n, c, NULL, 4, 8, &flag, &err));
    cr_assert_str_eq(err.msg, "cancelled");
    atomic_store(&flag, 0);
    cost_model *m = cost_model_build_cancellable(n, c, NULL, 4, 8, &flag, &err);
    cr_assert_not_null(m, "%s", err.msg);
    cost_model *ref = build(n, c, NULL, 4, 8);
    for (int e = 0; e < m->n_edges; e++)
        cr_assert_arr_eq(m->t_x[e], ref->t_x[e],
                         sizeof(double) * (size_t)m->n_configs[m->e_from[e]] * (size_t)m->n_configs[m->e_to[e]]);
    cost_model_free(ref);
    cost_model_free(m);
    cluster_free(c);
    net_free(n);
}

/* Edges that are the same problem share one computed table (Inception's
 * 1x1 convolutions reading one concat), the same allocation: every entry (every stride-th, from
 * an offset that differs per edge) of every table, shared ones included,
 * equals a fresh evaluation of that edge alone in a model without tables,
 * bit for bit. */
static void shared_tables_equal_fresh(const char *netname, const char *clname, int gpus, int stride)
{
    lw_error err = {0};
    network *v = plan_load_network(netname, &err);
    cluster *p = plan_load_cluster(clname, &err);
    cr_assert(v && p, "%s", err.msg);
    cost_model *m = build(v, p, NULL, gpus, 32L * gpus);
    cost_model *fresh = cost_model_open(v, p, NULL, gpus, 32L * gpus, &err);
    cr_assert_not_null(fresh, "%s", err.msg);
    cr_assert(m->tx_pairs_reused > 0, "%s on %d GPUs: no table shared", netname, gpus);
    /* shared, not copied: an edge whose table is another's holds the very
     * same doubles (one allocation, freed once by cost_model_free) */
    long aliased = 0;
    for (int e = 0; e < m->n_edges; e++)
        for (int f = 0; f < e; f++)
            if (m->t_x[f] == m->t_x[e]) {
                aliased += (long)m->n_configs[m->e_from[e]] * m->n_configs[m->e_to[e]];
                break;
            }
    cr_assert_eq(aliased, m->tx_pairs_reused, "%s on %d GPUs: %ld entries share a table, %ld reused", netname, gpus,
                 aliased, (long)m->tx_pairs_reused);
    for (int e = 0; e < m->n_edges; e++) {
        int na = m->n_configs[m->e_from[e]], nb = m->n_configs[m->e_to[e]];
        for (int q = e % stride; q < na * nb; q += stride) {
            double t = cost_edge_ms(fresh, e, q / nb, q % nb, NULL);
            cr_assert(t == m->t_x[e][q], "%s on %s, %d GPUs: edge %s -> %s entry %d: table %.17g, fresh %.17g",
                      netname, clname, gpus, v->layers[m->e_from[e]].name, v->layers[m->e_to[e]].name, q,
                      m->t_x[e][q], t);
        }
    }
    cost_model_free(fresh);
    cost_model_free(m);
    cluster_free(p);
    net_free(v);
}

Test(tables, shared_tables_equal_fresh_inception_8_gpus_two_nodes)
{
    shared_tables_equal_fresh("inception_v3", "p100-4x4", 8, 5);
}

Test(tables, shared_tables_equal_fresh_inception_4_gpus_per_pair_links)
{
    shared_tables_equal_fresh("inception_v3", "dgx1-v100", 4, 1);
}

/* cost_t_x and cost_t_s only read the model (cost.h): two threads
 * evaluating every entry of one model at once get exactly the tables'
 * values. Per-pair links (the piece-by-piece path, which writes the most
 * scratch) and two nodes (the NIC sums). */
typedef struct eval_job {
    const cost_model *m;
    int parity;   /* this thread takes the entries of this parity first, then the others */
    long wrong;
} eval_job;

static void *eval_everything(void *arg)
{
    eval_job *j = arg;
    const cost_model *m = j->m;
    for (int round = 0; round < 2; round++)
        for (int e = 0; e < m->n_edges; e++) {
            int a = m->e_from[e], b = m->e_to[e], na = m->n_configs[a], nb = m->n_configs[b];
            for (int q = e % 5; q < na * nb; q += 5) { /* every fifth entry: seconds, not a minute */
                if ((q / 5) % 2 != (j->parity + round) % 2) continue;
                double t = cost_t_x(m, e, &m->configs[a][q / nb], &m->configs[b][q % nb], NULL);
                j->wrong += t != m->t_x[e][q];
            }
            for (int k = 0; k < m->n_configs[b]; k++)
                j->wrong += cost_t_s(m, b, &m->configs[b][k], NULL) != m->t_s[b][k];
        }
    return NULL;
}

Test(tables, evaluations_on_one_model_may_run_on_two_threads_at_once)
{
    const char *clusters[] = {"dgx1-v100", "p100-4x4"};
    for (int c = 0; c < 2; c++) {
        lw_error err = {0};
        network *v = plan_load_network("inception_v3", &err);
        cluster *p = plan_load_cluster(clusters[c], &err);
        cr_assert(v && p, "%s", err.msg);
        cost_model *m = build(v, p, NULL, 8, 256);
        eval_job jobs[2] = {{m, 0, 0}, {m, 1, 0}};
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, eval_everything, &jobs[0]), 0);
        eval_everything(&jobs[1]);
        pthread_join(th, NULL);
        cr_assert(jobs[0].wrong == 0 && jobs[1].wrong == 0, "%s: %ld and %ld entries differ from the tables",
                  clusters[c], jobs[0].wrong, jobs[1].wrong);
        cost_model_free(m);
        cluster_free(p);
        net_free(v);
    }
}

/* A what-if on prices (cost_model_reprice) gives the tables of a fresh
 * build of the edited cluster, bit for bit: every t_c, t_s and t_x entry,
 * for each kind of edit, on one node and on two (the NICs' share), and
 * after the model it came from was freed (what it kept is shared). Where
 * the counts change (GPUs per node) or cannot be kept (per-pair links) it
 * declines, and the caller builds. */
static void expect_same_tables(const cost_model *a, const cost_model *b, const char *what)
{
    cr_assert_eq(a->n_layers, b->n_layers);
    for (int i = 0; i < a->n_layers; i++) {
        cr_assert_eq(a->n_configs[i], b->n_configs[i], "%s", what);
        for (int k = 0; k < a->n_configs[i]; k++) {
            cr_assert(a->t_c[i][k] == b->t_c[i][k], "%s: t_c layer %d config %d: %.17g vs %.17g", what, i, k,
                      a->t_c[i][k], b->t_c[i][k]);
            cr_assert(a->t_s[i][k] == b->t_s[i][k], "%s: t_s layer %d config %d: %.17g vs %.17g", what, i, k,
                      a->t_s[i][k], b->t_s[i][k]);
        }
    }
    long nonzero = 0;
    for (int e = 0; e < a->n_edges; e++) {
        long n = (long)a->n_configs[a->e_from[e]] * a->n_configs[a->e_to[e]];
        for (long q = 0; q < n; q++) {
            cr_assert(a->t_x[e][q] == b->t_x[e][q], "%s: t_x edge %d entry %ld: %.17g vs %.17g", what, e, q,
                      a->t_x[e][q], b->t_x[e][q]);
            nonzero += a->t_x[e][q] > 0;
        }
    }
    cr_assert_gt(nonzero, 0, "%s: nothing moves, the comparison proves nothing", what);
}

static cost_model *build_keeping(const network *n, const cluster *c, int gpus, long batch)
{
    lw_error err = {0};
    cost_model *m = cost_model_build_for_whatifs(n, c, NULL, gpus, batch, NULL, NULL, &err);
    cr_assert_not_null(m, "%s", err.msg);
    return m;
}

typedef enum { ED_INTER_BW, ED_INTRA_BW, ED_INTER_LAT, ED_INTRA_LAT, ED_NICS, ED_PRECISION, ED_SYNC, ED_ALL } edit_kind;

static cluster *edited(const cluster *c, edit_kind k)
{
    cluster *x = cluster_clone(c);
    if (k == ED_INTER_BW || k == ED_ALL) x->inter.bandwidth_gbs *= 2.5;
    if (k == ED_INTRA_BW || k == ED_ALL) x->intra.bandwidth_gbs *= 0.3;
    if (k == ED_INTER_LAT || k == ED_ALL) x->inter.latency_us *= 7;
    if (k == ED_INTRA_LAT || k == ED_ALL) x->intra.latency_us *= 3;
    if (k == ED_NICS || k == ED_ALL) x->nics_per_node += 1;
    if (k == ED_SYNC || k == ED_ALL)
        x->sync = x->sync == SYNC_PARAMETER_SERVER ? SYNC_RING_ALLREDUCE : SYNC_PARAMETER_SERVER;
    if (k == ED_PRECISION || k == ED_ALL) {
        gpu_consts g;
        for (int q = 0; q < PREC__COUNT; q++)
            if (q != (int)x->precision && precision_elem_bytes((precision)q) != precision_elem_bytes(x->precision) &&
                cluster_gpu_consts(x, (precision)q, &g) == 0) {
                x->precision = (precision)q;
                break;
            }
        cr_assert_neq(precision_elem_bytes(x->precision), precision_elem_bytes(c->precision),
                      "%s has no precision of another element size", c->name);
    }
    return x;
}

Test(tables, a_repriced_model_equals_a_fresh_build)
{
    lw_error err = {0};
    network *v = plan_load_network("inception_v3", &err);
    cluster *c = plan_load_cluster("h100-8x8", &err); /* it has precisions of 4 and 2 bytes */
    cr_assert(v && c, "%s", err.msg);
    c->gpus_per_node = 4; /* two nodes at 8 GPUs */
    c->nodes = 16;
    int gpus[] = {4, 8};
    for (int g = 0; g < 2; g++) {
        cost_model *m = build_keeping(v, c, gpus[g], 16L * gpus[g]);
        cost_model *chain = NULL;
        for (int k = ED_INTER_BW; k <= ED_ALL; k++) {
            cluster *x = edited(c, (edit_kind)k);
            cost_model *r = cost_model_reprice(m, x);
            cr_assert_not_null(r, "%d GPUs, edit %d: declined", gpus[g], k);
            cost_model *fresh = build(v, x, NULL, gpus[g], 16L * gpus[g]);
            char what[64];
            snprintf(what, sizeof what, "%d GPUs, edit %d", gpus[g], k);
            expect_same_tables(r, fresh, what);
            cost_model_free(fresh);
            if (k == ED_ALL) {
                /* priced again from the repriced one, its origin freed: back to the start */
                cost_model_free(m);
                m = NULL;
                chain = cost_model_reprice(r, c);
                cr_assert_not_null(chain);
                cost_model *orig = build(v, c, NULL, gpus[g], 16L * gpus[g]);
                expect_same_tables(chain, orig, "priced back");
                cost_model_free(orig);
            }
            cost_model_free(r);
            cluster_free(x);
        }
        cost_model_free(chain);
    }
    /* other GPUs per node: the counts change */
    cost_model *m = build_keeping(v, c, 8, 128);
    cluster *x = cluster_clone(c);
    x->gpus_per_node = 8;
    x->nodes = 2;
    cr_assert_null(cost_model_reprice(m, x));
    cluster_free(x);
    cost_model_free(m);
    /* per-pair links: nothing kept */
    cluster *d = plan_load_cluster("dgx1-v100", &err);
    cr_assert_not_null(d, "%s", err.msg);
    m = build_keeping(v, d, 4, 64);
    x = edited(d, ED_INTRA_BW);
    cr_assert_null(cost_model_reprice(m, x));
    cluster_free(x);
    cost_model_free(m);
    /* a plain build keeps nothing */
    m = build(v, c, NULL, 4, 64);
    x = edited(c, ED_INTER_BW);
    cr_assert_null(cost_model_reprice(m, x));
    cluster_free(x);
    cost_model_free(m);
    cluster_free(d);
    cluster_free(c);
    net_free(v);
}

/* Edges that are the same problem but for a whole factor on every element
 * count (convolutions reading channel counts that are different multiples
 * of the GPU count) are priced from one another's kept counts, scaled:
 * every entry (every stride-th) equals a fresh evaluation of that edge
 * alone in a model without tables, bit for bit, in a plain build (which
 * keeps those counts only while it builds), in one that keeps counts for
 * what-ifs, after a what-if on prices that re-prices it (the counts it
 * carried over scaled), and after a what-if to that GPU count from a build
 * at half of it (the entries new there computed, then the scaled tables
 * priced from those). */
static void scaled_tables_equal_fresh(const char *netname, const char *clname, int gpus, int stride, edit_kind edit)
{
    lw_error err = {0};
    network *v = plan_load_network(netname, &err);
    cluster *c = plan_load_cluster(clname, &err);
    cr_assert(v && c, "%s", err.msg);
    long batch = 32L * gpus;
    cost_model *m = build(v, c, NULL, gpus, batch), *k = build_keeping(v, c, gpus, batch);
    cr_assert_gt(m->tx_pairs_scaled, m->tx_pairs_computed / 10, "%s on %d GPUs: %ld of %ld entries scaled", netname,
                 gpus, m->tx_pairs_scaled, m->tx_pairs_computed);
    cr_assert_eq(k->tx_pairs_scaled, m->tx_pairs_scaled);
    cluster *x = edited(c, edit);
    cost_model *r = cost_model_reprice(k, x);
    cr_assert_not_null(r, "%s: the what-if declined", netname);
    cost_model *half = build_keeping(v, c, gpus / 2, batch / 2);
    cost_model *up = cost_model_reuse(half, c, gpus, batch);
    cr_assert_not_null(up, "%s: the what-if to %d GPUs declined", netname, gpus);
    cr_assert_eq(up->tx_reused, 2, "%s: nothing computed going to %d GPUs", netname, gpus);
    cr_assert_gt(up->tx_pairs_scaled, 0, "%s: nothing scaled going to %d GPUs", netname, gpus);
    cost_model *fresh = cost_model_open(v, c, NULL, gpus, batch, &err);
    cost_model *fresh_x = cost_model_open(v, x, NULL, gpus, batch, &err);
    cr_assert(fresh && fresh_x, "%s", err.msg);
    long nonzero = 0;
    for (int e = 0; e < m->n_edges; e++) {
        int na = m->n_configs[m->e_from[e]], nb = m->n_configs[m->e_to[e]];
        for (int q = e % stride; q < na * nb; q += stride) {
            double t = cost_edge_ms(fresh, e, q / nb, q % nb, NULL), tx = cost_edge_ms(fresh_x, e, q / nb, q % nb, NULL);
            cr_assert(t == m->t_x[e][q] && t == k->t_x[e][q] && tx == r->t_x[e][q] && t == up->t_x[e][q],
                      "%s on %s, %d GPUs: edge %s -> %s entry %d: built %.17g, kept %.17g, from %d GPUs %.17g, "
                      "fresh %.17g; re-priced %.17g, fresh %.17g",
                      netname, clname, gpus, v->layers[m->e_from[e]].name, v->layers[m->e_to[e]].name, q,
                      m->t_x[e][q], k->t_x[e][q], gpus / 2, up->t_x[e][q], t, r->t_x[e][q], tx);
            nonzero += t > 0;
        }
    }
    cr_assert_gt(nonzero, 0, "nothing moves: the comparison proves nothing");
    cost_model_free(fresh_x);
    cost_model_free(fresh);
    cost_model_free(up);
    cost_model_free(half);
    cost_model_free(r);
    cluster_free(x);
    cost_model_free(k);
    cost_model_free(m);
    cluster_free(c);
    net_free(v);
}

Test(tables, scaled_tables_equal_fresh_resnet50_16_gpus_two_nodes_of_8)
{
    scaled_tables_equal_fresh("resnet50", "h100-8x8", 16, 3, ED_ALL);
}

Test(tables, scaled_tables_equal_fresh_inception_16_gpus_four_nodes_of_4)
{
    scaled_tables_equal_fresh("inception_v3", "p100-4x4", 16, 7, ED_INTER_LAT);
}

/* A what-if on the batch or to fewer GPUs reuses what the build kept
 * (cost_model_reuse): along the sample dimension each piece boundary scales
 * with the batch where every degree divides both batches, and a config on
 * k GPUs sits on GPUs 0..k-1 whatever the count. Bit for bit a fresh
 * build, on every shipped network (every kind of edge: convolution and
 * pooling windows, linear layers, the flatten of a 4-D tensor, concat
 * offsets, adds), on two nodes (the NICs' share) and one; where a batch
 * some degree does not divide, or more GPUs, bring entries the build did
 * not keep, those are computed. */
Test(tables, a_model_reused_for_another_batch_or_gpu_count_equals_a_fresh_build, .timeout = 600)
{
    lw_error err = {0};
    const char *nets[] = {"lenet5", "alexnet", "vgg16", "inception_v3", "resnet50"};
    cluster *c = plan_load_cluster("h100-8x8", &err); /* it has precisions of 4 and 2 bytes */
    cr_assert_not_null(c, "%s", err.msg);
    c->gpus_per_node = 4; /* 8 GPUs are two nodes */
    c->nodes = 16;
    int kinds[LT__COUNT] = {0}, flat4 = 0, edges_checked = 0;
    struct {
        int gpus;
        long batch;
    } to[] = {{8, 256}, {8, 192}, {8, 64}, {4, 64}, {4, 128}, {2, 24}, {1, 48}};
    for (size_t n = 0; n < sizeof nets / sizeof *nets; n++) {
        network *v = plan_load_network(nets[n], &err);
        cr_assert_not_null(v, "%s", err.msg);
        for (int i = 0; i < v->n_layers; i++) {
            const layer *l = &v->layers[i];
            kinds[l->type]++;
            if (l->type == LT_FLATTEN && v->layers[l->inputs[0]].out.rank == 4) flat4++;
        }
        cost_model *m = build_keeping(v, c, 8, 128);
        cr_assert_gt(cost_model_kept_bytes(m), 0, "%s: the build kept nothing", nets[n]);
        edges_checked += m->n_edges;
        cost_model *last = NULL;
        for (size_t k = 0; k < sizeof to / sizeof *to; k++) {
            cost_model *r = cost_model_reuse(last ? last : m, c, to[k].gpus, to[k].batch);
            cr_assert_not_null(r, "%s, %d GPUs, batch %ld: declined", nets[n], to[k].gpus, to[k].batch);
            cr_assert_gt(cost_model_kept_bytes(r), 0);
            cost_model *fresh = build(v, c, NULL, to[k].gpus, to[k].batch);
            char what[96];
            snprintf(what, sizeof what, "%s, %d GPUs, batch %ld", nets[n], to[k].gpus, to[k].batch);
            if (to[k].gpus > 1) expect_same_tables(r, fresh, what); /* on one GPU nothing moves */
            cost_model_free(fresh);
            cost_model_free(last); /* the next is priced from this one, what m kept shared */
            last = r;
        }
        /* back to the build's own setting from the last one, at new prices */
        cluster *x = edited(c, ED_ALL);
        cost_model_free(m);
        cost_model *back = cost_model_reuse(last, x, 8, 128);
        cr_assert_not_null(back, "%s: back to 8 GPUs declined", nets[n]);
        cost_model *fresh = build(v, x, NULL, 8, 128);
        expect_same_tables(back, fresh, "back to the build's setting");
        cost_model_free(fresh);
        cost_model_free(back);
        /* Entries the kept counts cannot give are computed, the rest
         * re-priced, and the model keeps counts of its own (carried over
         * and computed) that price the next what-if: 100 is not a multiple
         * of 8 (configs split 8 ways along the sample dimension no longer
         * scale; 4 ways do), and 4 -> 8 GPUs brings configs the build never
         * saw. Each then at new prices, from the model's own counts. */
        cost_model *more = build_keeping(v, c, 4, 64);
        struct {
            const cost_model *from;
            int gpus;
            long batch;
        } part[] = {{last, 8, 100}, {more, 8, 128}, {more, 8, 100}};
        for (int k = 0; k < 3; k++) {
            cost_model *r = cost_model_reuse(part[k].from, c, part[k].gpus, part[k].batch);
            cr_assert_not_null(r, "%s, %d GPUs, batch %ld: declined", nets[n], part[k].gpus, part[k].batch);
            cost_model *want = build(v, c, NULL, part[k].gpus, part[k].batch);
            char what[96];
            snprintf(what, sizeof what, "%s, part re-priced %d: %d GPUs, batch %ld", nets[n], k, part[k].gpus,
                     part[k].batch);
            expect_same_tables(r, want, what);
            cost_model_free(want);
            cr_assert_gt(cost_model_kept_bytes(r), 0, "%s: no counts of its own", what);
            cost_model *next = cost_model_reuse(r, x, part[k].gpus, part[k].batch);
            cr_assert_not_null(next, "%s: new prices declined", what);
            want = build(v, x, NULL, part[k].gpus, part[k].batch);
            expect_same_tables(next, want, what);
            cost_model_free(want);
            cost_model_free(next);
            cost_model_free(r);
            /* answering first (the TUI): the same tables, no counts, until
             * it adopts those of the same what-if done keeping them; then
             * new prices re-price from them into a fresh build's tables */
            cost_model *fast = cost_model_reuse_fast(part[k].from, c, part[k].gpus, part[k].batch, NULL);
            cr_assert_not_null(fast, "%s: answering first declined", what);
            cr_assert_eq(fast->tx_reused, 2, "%s: nothing computed", what);
            cr_assert_eq(cost_model_kept_bytes(fast), 0, "%s: answering first kept counts", what);
            want = build(v, c, NULL, part[k].gpus, part[k].batch);
            expect_same_tables(fast, want, what);
            cost_model_free(want);
            cr_assert_null(cost_model_reuse(fast, x, part[k].gpus, part[k].batch), "%s: priced without counts", what);
            cost_model *donor = cost_model_reuse_cancellable(part[k].from, c, part[k].gpus, part[k].batch, NULL, NULL);
            cr_assert_not_null(donor);
            cr_assert(cost_model_adopt_counts(fast, donor), "%s: counts not adopted", what);
            cr_assert_eq(cost_model_kept_bytes(fast), cost_model_kept_bytes(donor));
            cr_assert_not(cost_model_adopt_counts(fast, donor), "%s: adopted twice", what);
            cost_model_free(donor); /* shared: fast keeps them */
            next = cost_model_reuse(fast, x, part[k].gpus, part[k].batch);
            cr_assert_not_null(next, "%s: new prices declined after adopting", what);
            cr_assert_eq(next->tx_reused, 1, "%s: adopted counts did not price every entry", what);
            want = build(v, x, NULL, part[k].gpus, part[k].batch);
            expect_same_tables(next, want, what);
            cost_model_free(want);
            cost_model_free(next);
            cost_model_free(fast);
        }
        cost_model_free(more);
        cost_model_free(last);
        cluster_free(x);
        net_free(v);
    }
    cr_assert(kinds[LT_CONV2D] && kinds[LT_POOL2D] && kinds[LT_LINEAR] && kinds[LT_CONCAT] && kinds[LT_ADD] && flat4,
              "an edge kind is missing from the networks checked");
    cr_assert_gt(edges_checked, 100);
    cluster_free(c);
}

/* A plain build (the TUI's first model, answering first) adopts the
 * counts of the same build done keeping them (at other prices: counts do
 * not depend on them), and a what-if then re-prices into a fresh build's
 * tables; counts of another batch, GPU count or
 * layout, a donor that kept none, or a model that keeps some already are
 * refused, leaving the model as it was. */
Test(tables, a_plain_build_adopts_the_counts_of_the_same_build_only)
{
    lw_error err = {0};
    network *v = plan_load_network("inception_v3", &err);
    cluster *c = plan_load_cluster("h100-8x8", &err); /* two nodes of 8; precisions of 4 and 2 bytes */
    cr_assert(v && c, "%s", err.msg);
    cost_model *m = build(v, c, NULL, 16, 512);
    cr_assert(cost_model_could_keep_counts(m));
    cr_assert_eq(cost_model_kept_bytes(m), 0);
    cost_model *other_batch = build_keeping(v, c, 16, 256), *other_gpus = build_keeping(v, c, 8, 512),
               *plain = build(v, c, NULL, 16, 512);
    cluster *dear = edited(c, ED_INTER_BW); /* counts do not depend on prices: a donor at others will do */
    cost_model *donor = build_keeping(v, dear, 16, 512);
    cluster *two = cluster_clone(c);
    two->gpus_per_node = 4;
    two->nodes = 16;
    cost_model *other_layout = build_keeping(v, two, 16, 512);
    const cost_model *refused[] = {other_batch, other_gpus, plain, other_layout};
    for (int k = 0; k < 4; k++) {
        cr_assert_not(cost_model_adopt_counts(m, refused[k]), "donor %d adopted", k);
        cr_assert_eq(cost_model_kept_bytes(m), 0, "donor %d: counts left behind", k);
    }
    cr_assert(cost_model_adopt_counts(m, donor));
    cost_model_free(donor);
    cr_assert_not(cost_model_adopt_counts(m, other_batch), "adopted over counts of its own");
    cluster *x = edited(c, ED_ALL);
    cost_model *r = cost_model_reuse(m, x, 16, 512);
    cr_assert_not_null(r, "new prices declined after adopting");
    cr_assert_eq(r->tx_reused, 1);
    cost_model *want = build(v, x, NULL, 16, 512);
    expect_same_tables(r, want, "adopted, then new prices");
    cost_model_free(want);
    cost_model_free(r);
    cluster_free(x);
    for (int k = 0; k < 4; k++) cost_model_free((cost_model *)refused[k]);
    cluster_free(two);
    cluster_free(dear);
    cost_model_free(m);
    cluster_free(c);
    net_free(v);
}

/* At 64 GPUs on eight nodes the build keeps its counts too (compactly:
 * each distinct candidate list once per edge), and a change of prices, of
 * batch, or to fewer GPUs re-prices them into a fresh build's tables. */
Test(tables, at_64_gpus_what_ifs_reprice_into_a_fresh_build, .timeout = 600)
{
    lw_error err = {0};
    network *v = plan_load_network("vgg16", &err);
    cluster *c = plan_load_cluster("h100-8x8", &err);
    cr_assert(v && c, "%s", err.msg);
    cost_model *m = build_keeping(v, c, 64, 64L * 32);
    long kept = cost_model_kept_bytes(m);
    cr_assert_gt(kept, 0, "64 GPUs: nothing kept");
    /* 24 bytes an entry (two list ids, the NICs' two counts), the lists
     * shared: kept one by one they took 33 bytes plus 32 a candidate */
    cr_assert_lt(kept, 40L * m->tx_pairs_computed, "%ld bytes for %ld entries: not compact", kept,
                 m->tx_pairs_computed);
    cluster *x = edited(c, ED_ALL);
    struct {
        const cluster *cl;
        int gpus;
        long batch;
    } to[] = {{x, 64, 64L * 32}, {c, 64, 64L * 48}, {x, 32, 32L * 32}};
    for (int k = 0; k < 3; k++) {
        cost_model *r = cost_model_reuse(m, to[k].cl, to[k].gpus, to[k].batch);
        cr_assert_not_null(r, "what-if %d declined", k);
        cost_model *fresh = build(v, to[k].cl, NULL, to[k].gpus, to[k].batch);
        char what[64];
        snprintf(what, sizeof what, "64 GPUs, what-if %d", k);
        expect_same_tables(r, fresh, what);
        cost_model_free(fresh);
        cost_model_free(r);
    }
    cost_model_free(m);
    cluster_free(x);
    cluster_free(c);
    net_free(v);
}

/* cost_overlaps_of (the simulator's and the diagrams' transfers) lists, for
 * a consumer task, exactly the producer tasks cost_overlap finds a positive
 * overlap with, ascending, with the same doubles: every shipped network's
 * every edge (windows, concat offsets, a flatten, linear layers, adds), a
 * spread of config pairs, every consumer task. */
Test(overlaps, the_overlapping_tasks_are_those_cost_overlap_finds)
{
    lw_error err = {0};
    const char *nets[] = {"lenet5", "alexnet", "vgg16", "inception_v3", "resnet50"};
    cluster *c = plan_load_cluster("h100-8x8", &err);
    cr_assert_not_null(c, "%s", err.msg);
    long pairs = 0, listed = 0;
    for (size_t n = 0; n < sizeof nets / sizeof *nets; n++) {
        network *v = plan_load_network(nets[n], &err);
        cr_assert_not_null(v, "%s", err.msg);
        cost_model *m = cost_model_open(v, c, NULL, 16, 16 * 8, &err);
        cr_assert_not_null(m, "%s", err.msg);
        int ps[16];
        double vs[16];
        for (int e = 0; e < m->n_edges; e++) {
            int P = m->e_from[e], C = m->e_to[e];
            for (int a = e % 5; a < m->n_configs[P]; a += 11)
                for (int b = e % 3; b < m->n_configs[C]; b += 13) {
                    const config *cp = &m->configs[P][a], *cc = &m->configs[C][b];
                    for (int k = 0; k < config_tasks(cc); k++) {
                        int got = cost_overlaps_of(m, e, cp, cc, k, ps, vs), x = 0;
                        for (int p = 0; p < config_tasks(cp); p++) {
                            double want = cost_overlap(m, e, cp, p, cc, k);
                            if (want <= 0) continue;
                            cr_assert_lt(x, got, "%s edge %d: task %d of %d missing", nets[n], e, p, k);
                            cr_assert_eq(ps[x], p, "%s edge %d consumer task %d: producer %d listed, %d wanted",
                                         nets[n], e, k, ps[x], p);
                            cr_assert_eq(vs[x], want, "%s edge %d: %.17g vs %.17g", nets[n], e, vs[x], want);
                            x++;
                        }
                        cr_assert_eq(x, got, "%s edge %d consumer task %d: %d listed, %d overlap", nets[n], e, k,
                                     got, x);
                        pairs++;
                        listed += got;
                    }
                }
        }
        cost_model_free(m);
        net_free(v);
    }
    cr_assert_gt(pairs, 10000);
    cr_assert_gt(listed, pairs, "too few overlaps for the comparison to mean much");
    cluster_free(c);
}
