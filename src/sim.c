#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cost_sharding.h"
#include "strategy.h"

/* A task's need of a resource: a fixed one (>= 0), or a node's NIC pool in
 * one direction, either any one NIC (the least busy) or all of them (a
 * collective saturates the node's network). */
#define NEED_POOL(node, dir, all) (-1 - ((((node) * 2 + (dir)) << 1) | (all)))

/* The none-mode schedule is a list of phases, each a range of tasks. */
enum { PH_COMPUTE, PH_TRANSFER, PH_SYNC };

typedef struct builder {
    const cost_model *m;
    const int *ci;
    int G, gpn, nodes, nics;
    sim_task *t;
    int n, cap;
    int *dep_a, *dep_b; /* dependency a -> b */
    int nd, capd;
    int *need_t, *need_v; /* (task, need) pairs, in any order */
    int nn, capn;
    int *link_res; /* [G * G]: resource of link a -> b, or -1 */
    sim_resource *res;
    int nres, capres;
    int *ph_first, *ph_count, *ph_type;
    int nph, capph;
    long max_tasks;  /* 0: no limit */
    int too_big;     /* the graph passed max_tasks, or progress said stop: stop building */
    struct {                 /* progress (opt->progress): the build, then the schedule */
        const sim_options *opt;
        double t0, build_s;  /* when sim_run started; how long the build took */
        double expect;       /* tasks expected (sim_size_estimate) */
        double next_report;  /* lw_now() of the next call */
        int stopped;         /* progress returned non-zero */
    } pr;
} builder;

/* Calls opt->progress at most every SIM_PROGRESS_EVERY_S: in the build,
 * done tasks built of b->pr.expect; in the schedule (scheduling 1), done
 * tasks scheduled of b->n. The projection is the build's time so far
 * scaled to the expected tasks (the build alone), then the build's time
 * plus the schedule's scaled to all tasks. Returns 1 once it said stop. */
#define SIM_PROGRESS_EVERY_S 0.2
static int report(builder *b, int scheduling, double done)
{
    if (!b->pr.opt->progress || b->pr.stopped) return b->pr.stopped;
    double now = lw_now();
    if (now < b->pr.next_report) return 0;
    b->pr.next_report = now + SIM_PROGRESS_EVERY_S;
    double of = scheduling ? (double)b->n : (b->pr.expect > b->n ? b->pr.expect : (double)b->n);
    double frac = of > 0 ? done / of : 1, projected;
    if (frac > 1) frac = 1;
    if (!scheduling) projected = frac > 0 ? (now - b->pr.t0) / frac : 0;
    else projected = b->pr.build_s + (frac > 0 ? (now - b->pr.t0 - b->pr.build_s) / frac : 0);
    if (projected < now - b->pr.t0) projected = now - b->pr.t0;
    /* the build and the schedule each count for half of the line's percentage */
    double shown = scheduling ? 0.5 + 0.5 * frac : 0.5 * frac;
    if (b->pr.opt->progress(shown, now - b->pr.t0, projected, b->pr.opt->progress_user))
        b->pr.stopped = b->too_big = 1;
    return b->pr.stopped;
}

#define GROW(arr, cnt, cap, extra)                                                                                 \
    do {                                                                                                           \
        if ((cnt) + (extra) > (cap)) {                                                                             \
            (cap) = ((cnt) + (extra)) * 2 + 16;                                                                    \
            (arr) = lw_realloc((arr), sizeof *(arr) * (size_t)(cap));                                              \
        }                                                                                                          \
    } while (0)

static int add_task(builder *b, sim_kind kind, int li, int gpu, double dur)
{
    GROW(b->t, b->n, b->cap, 1);
    sim_task *t = &b->t[b->n];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->layer = li;
    t->edge = -1;
    t->gpu = gpu;
    t->dst = -1;
    t->dur_ms = dur;
    t->crit = -1;
    if (b->max_tasks > 0 && b->n + 1 > b->max_tasks) b->too_big = 1;
    if ((b->n & 4095) == 0 && b->n) report(b, 0, b->n);
    return b->n++;
}

static void add_need(builder *b, int task, int need)
{
    int cap = b->capn;
    GROW(b->need_t, b->nn, b->capn, 1);
    if (cap != b->capn) b->need_v = lw_realloc(b->need_v, sizeof(int) * (size_t)b->capn);
    b->need_t[b->nn] = task;
    b->need_v[b->nn] = need;
    b->nn++;
}

static void add_dep(builder *b, int from, int to)
{
    int cap = b->capd;
    GROW(b->dep_a, b->nd, b->capd, 1);
    if (cap != b->capd) b->dep_b = lw_realloc(b->dep_b, sizeof(int) * (size_t)b->capd);
    b->dep_a[b->nd] = from;
    b->dep_b[b->nd] = to;
    b->nd++;
}

static void add_phase(builder *b, int type, int first, int count)
{
    if (count <= 0) return;
    int cap = b->capph;
    GROW(b->ph_first, b->nph, b->capph, 1);
    if (cap != b->capph) {
        b->ph_count = lw_realloc(b->ph_count, sizeof(int) * (size_t)b->capph);
        b->ph_type = lw_realloc(b->ph_type, sizeof(int) * (size_t)b->capph);
    }
    b->ph_first[b->nph] = first;
    b->ph_count[b->nph] = count;
    b->ph_type[b->nph] = type;
    b->nph++;
}

static int new_resource(builder *b, sim_res_kind kind, int a, int bb, int node)
{
    GROW(b->res, b->nres, b->capres, 1);
    b->res[b->nres] = (sim_resource){kind, a, bb, node, 0};
    return b->nres++;
}

static int link_resource(builder *b, int a, int c)
{
    int *r = &b->link_res[(size_t)a * b->G + c];
    if (*r < 0) *r = new_resource(b, SIM_RES_LINK, a, c, a / b->gpn);
    return *r;
}

static const config *cfg(const builder *b, int li)
{
    return &b->m->configs[li][b->ci[li]];
}

/* Forward and backward parts of t_c (ms), as the cost model splits them; a
 * profiled t_c keeps the analytical proportion. */
static void compute_parts(const builder *b, int li, double *fwd, double *bwd)
{
    int prof = 0;
    double tc = cost_t_c(b->m, li, cfg(b, li), &prof);
    double f = 0, k = 0;
    cost_t_c_parts(b->m, li, cfg(b, li), NULL, &f, &k);
    if (f + k > 0) {
        *fwd = tc * f / (f + k);
        *bwd = tc - *fwd;
    } else {
        *fwd = tc;
        *bwd = 0;
    }
}

/* The tasks of one layer and kind, task k on GPU k; returns the first. A
 * view (flatten) runs no kernel and takes no stream time. */
static int add_layer_tasks(builder *b, sim_kind kind, int li, double dur)
{
    int T = config_tasks(cfg(b, li));
    int first = b->n;
    for (int k = 0; k < T; k++) {
        int t = add_task(b, kind, li, k, dur);
        if (dur > 0) add_need(b, t, k);
    }
    return first;
}

/* One piece of edge e from GPU src to GPU dst: its link and, across nodes,
 * one NIC of each node. */
static int add_piece(builder *b, int e, int backward, int src, int dst, double elems)
{
    const cost_model *m = b->m;
    double bytes = elems * m->elem_bytes;
    size_t ix = (size_t)dst * b->G + src;
    double dur = 1e3 * (m->lat_s[ix] + bytes * m->inv_bw[ix]);
    int t = add_task(b, SIM_TRANSFER, m->e_to[e], src, dur);
    sim_task *tk = &b->t[t];
    tk->edge = e;
    tk->backward = backward;
    tk->dst = dst;
    tk->bytes = bytes;
    tk->lat_ms = 1e3 * m->lat_s[ix];
    add_need(b, t, link_resource(b, src, dst));
    /* Across nodes it also takes one of the receiving node's NICs for its
     * bytes / bandwidth. Holding a sender's NIC too, exclusively, would
     * pack all-to-all traffic worse than real flows, which share the
     * bandwidth of both ends; Eq. 1 bounds each end by bytes / bandwidth. */
    if (src / b->gpn != dst / b->gpn) add_need(b, t, NEED_POOL(dst / b->gpn, 1, 0));
    return t;
}

/* The pieces of edge e in one direction, one phase. Forward: from the
 * producer's task p to the consumer's task k (of: first forward task of each
 * layer). Backward: the gradient of the producer's output, from the
 * consumer's input-gradient task k back to the producer's task p over the
 * same overlaps (of: first backward task; the input layer has none, -1, so
 * its pieces end nowhere). A piece between tasks on the same GPU is only a
 * dependency. */
/* An edge whose configs have partial sums or replicas (cost_shard.c) is
 * one task of kind SIM_REDUCE per direction, as long as its part of t_x
 * (the collectives and the transfers around them), after every task it
 * reads and before every task that reads it, holding the links of a ring
 * over the GPUs both configs use and the NICs of the nodes it crosses. */
static void build_reduce(builder *b, int e, int backward, const int *of)
{
    const cost_model *m = b->m;
    int P = m->e_from[e], C = m->e_to[e];
    const config *cp = cfg(b, P), *cc = cfg(b, C);
    int Tp = config_tasks(cp), Tc = config_tasks(cc), T = Tp > Tc ? Tp : Tc;
    double f, bw, bytes;
    cost_t_x_parts(m, e, cp, cc, &f, &bw);
    cost_t_x(m, e, cp, cc, &bytes);
    int t = add_task(b, SIM_REDUCE, C, -1, backward ? bw : f);
    b->t[t].edge = e;
    b->t[t].backward = backward;
    b->t[t].bytes = bytes / 2;
    unsigned char *node_mark = lw_calloc((size_t)b->nodes, 1);
    for (int g = 0; T > 1 && g < T; g++) {
        int dst = (g + 1) % T;
        add_need(b, t, link_resource(b, g, dst));
        if (g / b->gpn != dst / b->gpn) node_mark[g / b->gpn] = node_mark[dst / b->gpn] = 1;
    }
    for (int nd = 0; nd < b->nodes; nd++)
        if (node_mark[nd]) {
            add_need(b, t, NEED_POOL(nd, 0, 1));
            add_need(b, t, NEED_POOL(nd, 1, 1));
        }
    free(node_mark);
    int from = backward ? of[C] : of[P], n_from = backward ? Tc : Tp, to = backward ? of[P] : of[C];
    for (int k = 0; k < n_from; k++) add_dep(b, from + k, t);
    for (int k = 0; to >= 0 && k < (backward ? Tp : Tc); k++) add_dep(b, t, to + k);
    add_phase(b, PH_TRANSFER, t, 1);
}

static void build_edge(builder *b, int e, int backward, const int *of)
{
    const cost_model *m = b->m;
    int P = m->e_from[e], C = m->e_to[e];
    const config *cp = cfg(b, P), *cc = cfg(b, C);
    int Tp = config_tasks(cp), Tc = config_tasks(cc);
    if (cp->deg[DIM_R] > 1 || cp->deg[DIM_X] > 1 || cc->deg[DIM_R] > 1 || cc->deg[DIM_X] > 1) {
        build_reduce(b, e, backward, of);
        return;
    }
    int first = b->n;
    int *ps = lw_malloc(sizeof(int) * (size_t)Tp);
    double *vs = lw_malloc(sizeof(double) * (size_t)Tp);
    for (int k = 0; k < Tc && !b->too_big; k++)
        for (int x = 0, nx = cost_overlaps_of(m, e, cp, cc, k, ps, vs); x < nx; x++) {
            int p = ps[x];
            double v = vs[x];
            int from = backward ? of[C] + k : of[P] + p;
            int to = backward ? (of[P] >= 0 ? of[P] + p : -1) : of[C] + k;
            if (p != k) {
                int t = backward ? add_piece(b, e, 1, k, p, v) : add_piece(b, e, 0, p, k, v);
                add_dep(b, from, t);
                from = t;
            }
            if (to >= 0) add_dep(b, from, to);
        }
    free(ps);
    free(vs);
    add_phase(b, PH_TRANSFER, first, b->n - first);
}

/* ---- the tie terms (cost_tie): a tied table between two layers ---- */

typedef struct tie_build {
    builder *b;
    int backward, layer, first; /* the direction built; the receiving layer; its first forward task, or the
                                 * embedding's first gradient task (backward) */
    int *pieces;                /* the pieces built, for the dependencies after them */
    int n, cap;
} tie_build;

/* One move of the tie (cost_tie_moves): a transfer from GPU src to dst of
 * its bytes, as add_piece's; forward it precedes the embedding's task on
 * dst, backward it follows the embedding's task on src. */
static void tie_piece(void *user, int backward, int src, int dst, double elems, double bytes)
{
    tie_build *tb = user;
    builder *b = tb->b;
    if (backward != tb->backward || b->too_big) return;
    size_t ix = (size_t)dst * b->G + src;
    int t = add_task(b, SIM_TRANSFER, tb->layer, src, 1e3 * (b->m->lat_s[ix] + bytes * b->m->inv_bw[ix]));
    sim_task *tk = &b->t[t];
    tk->backward = backward;
    tk->dst = dst;
    tk->bytes = bytes;
    tk->lat_ms = 1e3 * b->m->lat_s[ix];
    add_need(b, t, link_resource(b, src, dst));
    if (src / b->gpn != dst / b->gpn) add_need(b, t, NEED_POOL(dst / b->gpn, 1, 0));
    if (backward) add_dep(b, tb->first + src, t);
    else add_dep(b, t, tb->first + dst);
    GROW(tb->pieces, tb->n, tb->cap, 1);
    tb->pieces[tb->n++] = t;
}

/* The pieces of tie k in one direction, one phase: forward, the embedding's
 * reads of its tiles before its forward tasks (from: their first);
 * backward, its gradient into the LM head's layout after its gradient tasks
 * (from: their first). Returns the pieces (caller frees) and their count. */
static int *build_tie(builder *b, int k, int backward, int from, int *n_out)
{
    const cost_model *m = b->m;
    const cost_tie *ti = &m->ties[k];
    tie_build tb = {.b = b, .backward = backward, .layer = backward ? ti->lm_head : ti->embed, .first = from};
    int first = b->n;
    cost_tie_moves(m, k, cfg(b, ti->embed), cfg(b, ti->lm_head), tie_piece, &tb);
    add_phase(b, PH_TRANSFER, first, b->n - first);
    *n_out = tb.n;
    return tb.pieces;
}

/* The tie whose LM head is layer li, or -1. */
static int tie_of_lm_head(const cost_model *m, int li)
{
    for (int k = 0; k < m->n_ties; k++)
        if (m->ties[k].lm_head == li) return k;
    return -1;
}

/* Collective t takes the links between the replicas of each shard of
 * config c (ring: each to the next; parameter server: every pair) and
 * every NIC of the nodes it crosses. */
static void collective_needs(builder *b, int t, const config *c)
{
    const cost_model *m = b->m;
    int T = config_tasks(c), shards = c->deg[DIM_C];
    int ring = m->cl->sync != SYNC_PARAMETER_SERVER;
    int *rep = lw_malloc(sizeof(int) * (size_t)T);
    unsigned char *node_mark = lw_calloc((size_t)b->nodes, 1);
    for (int j = 0; j < shards; j++) {
        int nr = 0, co[NDIMS];
        for (int k = 0; k < T; k++) {
            config_task_coords(c, k, co);
            if (co[DIM_C] == j) rep[nr++] = k;
        }
        if (nr < 2) continue;
        for (int x = 0; x < nr; x++)
            for (int y = ring ? (x + 1) % nr : 0; y < (ring ? (x + 1) % nr + 1 : nr); y++) {
                if (y == x) continue;
                int src = rep[x], dst = rep[y];
                add_need(b, t, link_resource(b, src, dst));
                if (src / b->gpn != dst / b->gpn) node_mark[src / b->gpn] = node_mark[dst / b->gpn] = 1;
            }
    }
    for (int nd = 0; nd < b->nodes; nd++)
        if (node_mark[nd]) {
            add_need(b, t, NEED_POOL(nd, 0, 1));
            add_need(b, t, NEED_POOL(nd, 1, 1));
        }
    free(rep);
    free(node_mark);
}

/* A bucket of layers (backward order) becomes one collective
 * (collective_needs) after their weight gradients; returns its task. */
static int add_sync(builder *b, const int *layers, int n, const int *wgt_of)
{
    const cost_model *m = b->m;
    double dur = 0, bytes = 0;
    for (int i = 0; i < n; i++) {
        double by = 0;
        dur += cost_t_s(m, layers[i], cfg(b, layers[i]), &by);
        bytes += by;
    }
    int t = add_task(b, SIM_SYNC, layers[0], -1, dur);
    b->t[t].n_layers = n;
    b->t[t].bytes = bytes;
    collective_needs(b, t, cfg(b, layers[0]));
    for (int i = 0; i < n; i++) {
        int T2 = config_tasks(cfg(b, layers[i]));
        for (int k = 0; k < T2; k++) add_dep(b, wgt_of[layers[i]] + k, t);
    }
    add_phase(b, PH_SYNC, t, 1);
    return t;
}

/* DDP's optimizer step (sim.h, SIM_OVERLAP_DDP): on every GPU that holds
 * weights, after every sync and that GPU's weight gradients. */
static void add_optimizer(builder *b, const int *syncs, int ns, const int *wgt_of)
{
    const cost_model *m = b->m;
    double *weights = lw_calloc((size_t)b->G, sizeof(double));
    for (int li = 0; li < m->n_layers; li++) {
        if (wgt_of[li] < 0) continue;
        const config *c = cfg(b, li);
        for (int k = 0, T = config_tasks(c); k < T; k++) weights[k] += (double)layer_weights(m->net, li) / (c->deg[DIM_C] * c->deg[DIM_R]);
    }
    double rate = m->cl->gpu.memory_bandwidth_gbs * 1e9 * m->gk.memory_efficiency;
    for (int g = 0; g < b->G; g++) {
        if (weights[g] <= 0) continue;
        double ms = weights[g] * SIM_DDP_OPTIMIZER_BYTES / rate * 1e3 + m->gk.kernel_overhead_us * 1e-3;
        int t = add_task(b, SIM_OPTIMIZER, 0, g, ms);
        add_need(b, t, g); /* the GPU's compute stream */
        add_phase(b, PH_COMPUTE, t, 1);
        for (int i = 0; i < ns; i++) add_dep(b, syncs[i], t);
        for (int li = 0; li < m->n_layers; li++)
            if (wgt_of[li] >= 0 && g < config_tasks(cfg(b, li))) add_dep(b, wgt_of[li] + g, t);
    }
    free(weights);
}

/* ---- the sharded schemes' collectives (sim.h, cost_sharding.h) ---- */

/* One collective of layer li in a phase of its own; -1 if it takes no time. */
static int add_collective(builder *b, sim_kind kind, int li, double ms, double bytes)
{
    if (ms <= 0) return -1;
    int t = add_task(b, kind, li, -1, ms);
    b->t[t].n_layers = 1;
    b->t[t].bytes = bytes;
    collective_needs(b, t, cfg(b, li));
    add_phase(b, PH_SYNC, t, 1);
    return t;
}

/* Dependencies from every task of layer li from `first` (-1: none) to t. */
static void deps_from_layer(builder *b, int li, int first, int t)
{
    if (first < 0 || t < 0) return;
    for (int k = 0, T = config_tasks(cfg(b, li)); k < T; k++) add_dep(b, first + k, t);
}

/* zero3/hsdp: the all-gather of layer li's weights before its forward (or
 * backward: bwd 1) tasks from `first`, after the gather two layers back
 * has been used (*prev: the last two layers gathered, most recent first,
 * and the first task that used each). Returns the gather or -1. */
static int shard_gather(builder *b, int li, int first, int prev[4])
{
    shard_comm sc;
    if (!cost_shard_comm(b->m, li, cfg(b, li), &sc) || sc.level < 3) return -1;
    int t = add_collective(b, SIM_ALLGATHER, li, sc.ag_ms, sc.ag_bytes);
    if (t < 0) return -1;
    if (prev[2] >= 0) deps_from_layer(b, prev[2], prev[3], t); /* two gathered at most */
    for (int k = 0, T = config_tasks(cfg(b, li)); k < T; k++) add_dep(b, t, first + k);
    prev[2] = prev[0];
    prev[3] = prev[1];
    prev[0] = li;
    prev[1] = first;
    return t;
}

/* The gradient side of layer li after its weight gradient (tasks from
 * wgt): the reduce-scatter; hsdp's all-reduce across nodes after it;
 * zero1/zero2's all-gather of the updated weights after that. Returns the
 * first of them, or -1. */
static int shard_reduce(builder *b, int li, int wgt)
{
    shard_comm sc;
    if (!cost_shard_comm(b->m, li, cfg(b, li), &sc)) return -1;
    int rs = add_collective(b, SIM_REDUCE_SCATTER, li, sc.rs_ms, sc.rs_bytes);
    deps_from_layer(b, li, wgt, rs);
    int last = rs;
    if (sc.ar_ms > 0) {
        int ar = add_collective(b, SIM_SYNC, li, sc.ar_ms, sc.ar_bytes);
        if (last >= 0) add_dep(b, last, ar);
        else deps_from_layer(b, li, wgt, ar);
        last = ar;
    }
    int ag = -1;
    if (sc.level < 3) {
        ag = add_collective(b, SIM_ALLGATHER, li, sc.ag_ms, sc.ag_bytes);
        if (last >= 0 && ag >= 0) add_dep(b, last, ag);
    }
    return rs >= 0 ? rs : last >= 0 ? last : ag; /* the first (what a tie's gradient precedes) */
}

static double grad_bytes(const builder *b, int li)
{
    const config *c = cfg(b, li);
    return (double)layer_weights(b->m->net, li) * cluster_grad_sync_bytes(b->m->cl) / (c->deg[DIM_C] * c->deg[DIM_R]);
}

/* At the end of backward, each tie's gradient pieces (after the
 * embedding's gradient tasks), then its LM head's sync, a bucket of its
 * own, after them (or the sharded schemes' collectives); the syncs added
 * go to syncs[], their count returned. */
static int build_tie_syncs(builder *b, const int *wgt_of, const int *bwd_of, int *syncs)
{
    const cost_model *m = b->m;
    int ns = 0;
    for (int k = 0; k < m->n_ties; k++) {
        int em = m->ties[k].embed, lm = m->ties[k].lm_head, np = 0;
        int *pc = build_tie(b, k, 1, wgt_of[em] >= 0 ? wgt_of[em] : bwd_of[em], &np);
        int t = -1;
        if (wgt_of[lm] >= 0 && sync_sharded(m->cl->sync)) {
            t = shard_reduce(b, lm, wgt_of[lm]);
        } else if (wgt_of[lm] >= 0 && cost_t_s(m, lm, cfg(b, lm), NULL) > 0) {
            t = add_sync(b, &lm, 1, wgt_of);
            syncs[ns++] = t;
        }
        for (int i = 0; t >= 0 && i < np; i++) add_dep(b, pc[i], t);
        free(pc);
    }
    return ns;
}

/* The task graph of one step, phases in Eq. 1's order: forward in
 * topological order (a layer's inputs arrive, then it runs), backward in
 * reverse (its output gradient arrives, then input and weight gradients,
 * then the bucket's sync when it is complete). */
static void build(builder *b, const sim_options *opt)
{
    const cost_model *m = b->m;
    int L = m->n_layers;
    int *fwd_of = lw_malloc(sizeof(int) * (size_t)L);
    int *bwd_of = lw_malloc(sizeof(int) * (size_t)L);
    int *wgt_of = lw_malloc(sizeof(int) * (size_t)L);
    double *bwd_ms = lw_malloc(sizeof(double) * (size_t)L);
    int sharded = sync_sharded(m->cl->sync);
    int gathered[4] = {-1, -1, -1, -1}; /* shard_gather's last two layers */
    for (int li = 0; li < L; li++) {
        double f, k;
        compute_parts(b, li, &f, &k);
        bwd_ms[li] = k;
        fwd_of[li] = add_layer_tasks(b, SIM_FORWARD, li, f);
        for (int e = 0; e < m->n_edges; e++)
            if (m->e_to[e] == li) build_edge(b, e, 0, fwd_of);
        for (int q = 0; q < m->n_ties; q++) /* an embedding reads its tiles of a tied table */
            if (m->ties[q].embed == li) {
                int np;
                free(build_tie(b, q, 0, fwd_of[li], &np));
            }
        if (sharded) shard_gather(b, li, fwd_of[li], gathered);
        add_phase(b, PH_COMPUTE, fwd_of[li], config_tasks(cfg(b, li)));
    }
    int *bucket = lw_malloc(sizeof(int) * (size_t)L);
    int *syncs = lw_malloc(sizeof(int) * (size_t)L);
    int nb = 0, ns = 0, ddp = opt->overlap == SIM_OVERLAP_DDP;
    double bucket_bytes = 0, cap = opt->bucket_bytes;
    if (ddp && cap <= 0) cap = m->cl->coll.bucket_mb * 1048576.0;
    /* DDP's first bucket is small, so the first all-reduce starts early */
    double first_cap = ddp && cap > SIM_DDP_FIRST_BUCKET_MIB * 1048576.0 ? SIM_DDP_FIRST_BUCKET_MIB * 1048576.0 : cap;
    for (int li = L - 1; li >= 0; li--) {
        const layer *l = &m->net->layers[li];
        int T = config_tasks(cfg(b, li));
        /* the weight gradient is as much work as the input gradient (a
         * second GEMM of the same size); layers without weights have one;
         * the input layer has none (its pieces' gradients end nowhere) */
        const int has_w = layer_weights(m->net, li) > 0;
        double w = has_w ? bwd_ms[li] / 2 : 0;
        bwd_of[li] = wgt_of[li] = -1;
        if (l->type != LT_INPUT) bwd_of[li] = add_layer_tasks(b, SIM_BACKWARD_DATA, li, bwd_ms[li] - w);
        if (l->type != LT_INPUT && has_w) wgt_of[li] = add_layer_tasks(b, SIM_BACKWARD_WEIGHT, li, w);
        for (int e = 0; e < m->n_edges; e++)
            if (m->e_from[e] == li) build_edge(b, e, 1, bwd_of);
        if (bwd_of[li] < 0) continue;
        if (sharded) shard_gather(b, li, bwd_of[li], gathered);
        add_phase(b, PH_COMPUTE, bwd_of[li], T);
        for (int k = 0; k < T; k++) add_dep(b, fwd_of[li] + k, bwd_of[li] + k);
        if (wgt_of[li] < 0) continue;
        add_phase(b, PH_COMPUTE, wgt_of[li], T);
        for (int k = 0; k < T; k++) add_dep(b, bwd_of[li] + k, wgt_of[li] + k);
        if (tie_of_lm_head(m, li) >= 0) continue; /* its sync waits for the embedding's gradient (below) */
        if (sharded) {
            shard_reduce(b, li, wgt_of[li]);
            continue;
        }
        if (cost_t_s(m, li, cfg(b, li), NULL) <= 0) continue; /* one replica: nothing to sync */
        if (nb && !config_equal(cfg(b, bucket[0]), cfg(b, li))) { /* other replicas: a bucket of its own */
            syncs[ns++] = add_sync(b, bucket, nb, wgt_of);
            nb = 0;
            bucket_bytes = 0;
        }
        bucket[nb++] = li;
        bucket_bytes += grad_bytes(b, li);
        if (bucket_bytes >= (ns ? cap : first_cap)) {
            syncs[ns++] = add_sync(b, bucket, nb, wgt_of);
            nb = 0;
            bucket_bytes = 0;
        }
    }
    if (nb) syncs[ns++] = add_sync(b, bucket, nb, wgt_of);
    ns += build_tie_syncs(b, wgt_of, bwd_of, syncs + ns);
    if (ddp) add_optimizer(b, syncs, ns, wgt_of);
    free(syncs);
    free(bucket);
    free(fwd_of);
    free(bwd_of);
    free(wgt_of);
    free(bwd_ms);
}

/* ---- scheduling ---- */

typedef struct sched {
    builder *b;
    int nic_base;        /* resource of NIC (node, dir, slot): nic_base + (node * 2 + dir) * nics + slot */
    int *need0;          /* [n + 1] CSR of needs per task */
    int *needs;
    double *free_at;     /* [nres] */
    int *last;           /* [nres] the task that occupied it last */
    int *used;           /* resources a task takes, scratch */
    int nused, capused;
    int *res_of;         /* result: resources per task, in task order */
    int nro, capro;
    /* data flow: each resource's busy intervals, sorted, disjoint */
    struct busy { double a, b; int task; } **iv;
    int *n_iv, *cap_iv;
    /* SIM_OVERLAP_DDP: each GPU's all-reduce intervals so far, which slow
     * the compute they overlap (sim.h) */
    double contention;
    struct busy **cv;
    int *n_cv, *cap_cv;
} sched;

#define BACKFILL 16

/* The first interval of resource r that overlaps [at, at + d), or -1. */
static int blocking(const sched *s, int r, double at, double d)
{
    const struct busy *v = s->iv[r];
    int lo = 0, hi = s->n_iv[r];
    while (lo < hi) { /* first interval ending after at */
        int mid = (lo + hi) / 2;
        if (v[mid].b > at) hi = mid;
        else lo = mid + 1;
    }
    return lo < s->n_iv[r] && v[lo].a < at + d ? lo : -1;
}

static void busy_insert(sched *s, int r, double a, double b, int task)
{
    int n = s->n_iv[r];
    GROW(s->iv[r], s->n_iv[r], s->cap_iv[r], 1);
    struct busy *v = s->iv[r];
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v[mid].a <= a) lo = mid + 1;
        else hi = mid;
    }
    memmove(&v[lo + 1], &v[lo], sizeof *v * (size_t)(n - lo));
    v[lo] = (struct busy){a, b, task};
    s->n_iv[r]++;
}

/* The earliest time from `ready` at which task t's needs are all free for
 * its whole duration (a task may fill a gap left before later work: the
 * link or NIC is idle then), and the resources it takes; *crit is the task
 * whose end it waited for, if it waited. */
static double fit(sched *s, int t, double ready, int *crit)
{
    builder *b = s->b;
    double d = b->t[t].dur_ms, at = ready;
    *crit = -1;
    for (int moved = 1; moved;) {
        moved = 0;
        for (int i = s->need0[t]; i < s->need0[t + 1]; i++) {
            int v = s->needs[i], lo = v, hi = v + 1, any = 0;
            if (v < 0) {
                int code = -1 - v;
                lo = s->nic_base + (code >> 1) * b->nics;
                hi = lo + b->nics;
                any = !(code & 1);
            }
            double next = -1;
            int who = -1, free_one = 0;
            for (int r = lo; r < hi; r++) {
                /* gaps are looked for among a resource's last BACKFILL
                 * reservations only: before them it counts as busy, which
                 * keeps a step of a million pieces near linear time */
                int n = s->n_iv[r];
                if (n > BACKFILL && at < s->iv[r][n - BACKFILL - 1].b) {
                    if (!any) {
                        at = s->iv[r][n - BACKFILL - 1].b;
                        *crit = s->iv[r][n - BACKFILL - 1].task;
                        moved = 1;
                    } else if (next < 0 || s->iv[r][n - BACKFILL - 1].b < next) {
                        next = s->iv[r][n - BACKFILL - 1].b;
                        who = s->iv[r][n - BACKFILL - 1].task;
                    }
                    continue;
                }
                int k = blocking(s, r, at, d);
                if (k < 0) {
                    free_one = 1;
                    if (any) break;
                    continue;
                }
                const struct busy *x = &s->iv[r][k];
                if (any ? (next < 0 || x->b < next) : x->b > next) next = x->b, who = x->task;
            }
            if (any ? !free_one : next >= 0) {
                at = next;
                *crit = who;
                moved = 1;
            }
        }
    }
    s->nused = 0;
    for (int i = s->need0[t]; i < s->need0[t + 1]; i++) {
        int v = s->needs[i], lo = v, hi = v + 1, any = 0;
        if (v < 0) {
            int code = -1 - v;
            lo = s->nic_base + (code >> 1) * b->nics;
            hi = lo + b->nics;
            any = !(code & 1);
        }
        for (int r = lo; r < hi; r++) {
            if (any && blocking(s, r, at, d) >= 0) continue;
            GROW(s->used, s->nused, s->capused, 1);
            s->used[s->nused++] = r;
            if (any) break;
        }
    }
    return at;
}

/* Resolves a task's needs to resources: a fixed one, the least busy NIC of
 * a pool, or every NIC of it. Returns the earliest time they are all free
 * and the task that frees the last of them. */
static double resolve(sched *s, int t, int *crit)
{
    builder *b = s->b;
    s->nused = 0;
    double at = 0;
    *crit = -1;
    for (int i = s->need0[t]; i < s->need0[t + 1]; i++) {
        int v = s->needs[i];
        int lo, hi;
        if (v >= 0) {
            lo = v, hi = v + 1;
        } else {
            int code = -1 - v, all = code & 1, pool = code >> 1;
            lo = s->nic_base + pool * b->nics;
            hi = lo + b->nics;
            if (!all) {
                int best = lo;
                for (int r = lo + 1; r < hi; r++)
                    if (s->free_at[r] < s->free_at[best]) best = r;
                lo = best, hi = best + 1;
            }
        }
        for (int r = lo; r < hi; r++) {
            GROW(s->used, s->nused, s->capused, 1);
            s->used[s->nused++] = r;
            if (s->free_at[r] > at) {
                at = s->free_at[r];
                *crit = s->last[r];
            }
        }
    }
    return at;
}

static void occupy(sched *s, int t)
{
    sim_task *tk = &s->b->t[t];
    tk->res0 = s->nro;
    tk->n_res = s->nused;
    GROW(s->res_of, s->nro, s->capro, s->nused);
    for (int i = 0; i < s->nused; i++) {
        int r = s->used[i];
        s->res_of[s->nro++] = r;
        if (tk->end_ms > s->free_at[r]) s->free_at[r] = tk->end_ms;
        s->last[r] = t;
        s->b->res[r].busy_ms += tk->dur_ms;
        if (s->iv) busy_insert(s, r, tk->start_ms, tk->end_ms, t);
    }
}

/* Eq. 1's schedule: phase after phase. Inside a transfer phase each
 * receiver takes its pieces one after another and the phase lasts at
 * least as long as the busiest NIC needs (bytes / (bandwidth x NICs)). */
static double schedule_serial(sched *s)
{
    builder *b = s->b;
    const cost_model *m = b->m;
    double now = 0;
    int prev_last = -1;
    double *recv = lw_calloc((size_t)b->G, sizeof(double));
    double *nic = lw_calloc((size_t)b->nodes * 2, sizeof(double));
    double nic_bw = m->cl->inter.bandwidth_gbs * 1e9 * b->nics;
    for (int ph = 0; ph < b->nph && !b->pr.stopped; ph++) {
        int first = b->ph_first[ph], cnt = b->ph_count[ph];
        double end = now;
        int last = prev_last;
        if (b->ph_type[ph] == PH_TRANSFER) {
            for (int g = 0; g < b->G; g++) recv[g] = now;
            memset(nic, 0, sizeof(double) * (size_t)b->nodes * 2);
        }
        for (int t = first; t < first + cnt; t++) {
            if ((t & 4095) == 0 && report(b, 1, t)) break;
            sim_task *tk = &b->t[t];
            int dummy;
            resolve(s, t, &dummy);
            tk->start_ms = now;
            if (tk->kind == SIM_TRANSFER) {
                tk->start_ms = recv[tk->dst];
                recv[tk->dst] += tk->dur_ms;
                int ns = tk->gpu / b->gpn, nd = tk->dst / b->gpn;
                if (ns != nd) {
                    nic[ns * 2] += tk->bytes;
                    nic[nd * 2 + 1] += tk->bytes;
                }
            }
            tk->end_ms = tk->start_ms + tk->dur_ms;
            tk->crit = prev_last;
            occupy(s, t);
            if (last == prev_last || tk->end_ms > b->t[last].end_ms) last = t;
            if (tk->end_ms > end) end = tk->end_ms;
        }
        if (b->ph_type[ph] == PH_TRANSFER && b->nodes > 1)
            for (int x = 0; x < b->nodes * 2; x++)
                if (now + 1e3 * nic[x] / nic_bw > end) end = now + 1e3 * nic[x] / nic_bw;
        now = end;
        prev_last = last;
    }
    free(recv);
    free(nic);
    return now;
}

/* Binary heap of tasks by (ready time, task index). */
typedef struct heap {
    int *a;
    int n;
    const double *key;
} heap;

static int heap_less(const heap *h, int x, int y)
{
    return h->key[x] < h->key[y] || (h->key[x] == h->key[y] && x < y);
}

static void heap_push(heap *h, int t)
{
    int i = h->n++;
    h->a[i] = t;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!heap_less(h, h->a[i], h->a[p])) break;
        int tmp = h->a[i];
        h->a[i] = h->a[p];
        h->a[p] = tmp;
        i = p;
    }
}

static int heap_pop(heap *h)
{
    int top = h->a[0];
    h->a[0] = h->a[--h->n];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && heap_less(h, h->a[l], h->a[m])) m = l;
        if (r < h->n && heap_less(h, h->a[r], h->a[m])) m = r;
        if (m == i) break;
        int tmp = h->a[i];
        h->a[i] = h->a[m];
        h->a[m] = tmp;
        i = m;
    }
    return top;
}

/* A sync's interval on every GPU that takes part in it (the tasks of its
 * first layer's config: task k on GPU k). */
static void note_sync(sched *s, int t)
{
    const sim_task *tk = &s->b->t[t];
    for (int g = 0, T = config_tasks(cfg(s->b, tk->layer)); g < T && g < s->b->G; g++) {
        GROW(s->cv[g], s->n_cv[g], s->cap_cv[g], 1);
        s->cv[g][s->n_cv[g]++] = (struct busy){tk->start_ms, tk->end_ms, t};
    }
}

/* Compute task t placed at its start: lengthened by the contention factor
 * times the time it overlaps all-reduces on its GPU. 1 if it grew (placed
 * again by the caller). Syncs scheduled after t do not slow it (an
 * approximation of the list schedule). */
static int contend(sched *s, int t)
{
    sim_task *tk = &s->b->t[t];
    double a = tk->start_ms, z = a + tk->dur_ms, ov = 0;
    for (int i = 0; i < s->n_cv[tk->gpu]; i++) {
        const struct busy *x = &s->cv[tk->gpu][i];
        double lo = x->a > a ? x->a : a, hi = x->b < z ? x->b : z;
        if (hi > lo) ov += hi - lo;
    }
    if (ov <= 0) return 0;
    tk->dur_ms += s->contention * ov;
    return 1;
}

/* Data flow: tasks in order of the time their inputs are ready; each starts
 * when its resources are free too (first ready, first served). */
static double schedule_dataflow(sched *s)
{
    builder *b = s->b;
    int n = b->n;
    int *indeg = lw_calloc((size_t)n, sizeof(int));
    int *succ0 = lw_calloc((size_t)n + 1, sizeof(int));
    int *succ = lw_malloc(sizeof(int) * (size_t)(b->nd ? b->nd : 1));
    double *ready = lw_calloc((size_t)n, sizeof(double));
    for (int i = 0; i < b->nd; i++) {
        succ0[b->dep_a[i] + 1]++;
        indeg[b->dep_b[i]]++;
    }
    for (int t = 0; t < n; t++) succ0[t + 1] += succ0[t];
    int *fill = lw_malloc(sizeof(int) * (size_t)(n ? n : 1));
    memcpy(fill, succ0, sizeof(int) * (size_t)n);
    for (int i = 0; i < b->nd; i++) succ[fill[b->dep_a[i]]++] = b->dep_b[i];
    free(fill);
    /* a piece's latency delays it but does not hold its link or NIC: the
     * wire is free for other pieces meanwhile (Eq. 1 likewise bounds a
     * NIC by bytes / bandwidth) */
    for (int t = 0; t < n; t++)
        if (b->t[t].kind == SIM_TRANSFER) b->t[t].dur_ms -= b->t[t].lat_ms;
    heap h = {lw_malloc(sizeof(int) * (size_t)(n ? n : 1)), 0, ready};
    for (int t = 0; t < n; t++)
        if (!indeg[t]) heap_push(&h, t);
    double step = 0;
    int done = 0;
    while (h.n) {
        if ((done & 4095) == 0 && report(b, 1, done)) break;
        int t = heap_pop(&h);
        sim_task *tk = &b->t[t];
        int rcrit;
        tk->start_ms = fit(s, t, ready[t], &rcrit);
        if (s->contention > 0 && tk->gpu >= 0 && tk->kind != SIM_TRANSFER && contend(s, t)) tk->start_ms = fit(s, t, ready[t], &rcrit);
        if (tk->start_ms > ready[t]) tk->crit = rcrit;
        tk->end_ms = tk->start_ms + tk->dur_ms;
        occupy(s, t);
        if (s->contention > 0 && tk->kind == SIM_SYNC) note_sync(s, t);
        if (tk->end_ms > step) step = tk->end_ms;
        done++;
        for (int i = succ0[t]; i < succ0[t + 1]; i++) {
            int u = succ[i];
            double r = tk->end_ms + b->t[u].lat_ms;
            if (b->t[u].crit < 0 || r > ready[u]) {
                ready[u] = r > ready[u] ? r : ready[u];
                b->t[u].crit = t;
            }
            if (--indeg[u] == 0) heap_push(&h, u);
        }
    }
    /* the graph is acyclic by construction (layers in topological order) */
    if (done != n && !b->pr.stopped) abort();
    free(h.a);
    free(indeg);
    free(succ0);
    free(succ);
    free(ready);
    return step;
}

static void critical_path(sim_result *r)
{
    int last = -1;
    for (int t = 0; t < r->n_tasks; t++)
        if (last < 0 || r->tasks[t].end_ms > r->tasks[last].end_ms) last = t;
    int n = 0;
    for (int t = last; t >= 0 && n <= r->n_tasks; t = r->tasks[t].crit) n++;
    r->crit = lw_malloc(sizeof(int) * (size_t)(n ? n : 1));
    r->n_crit = n;
    int i = n;
    for (int t = last; t >= 0 && i > 0; t = r->tasks[t].crit) r->crit[--i] = t;
}

/* The builder's lists a schedule does not keep (its tasks and resources
 * go to the result). */
static void builder_free_lists(builder *b)
{
    free(b->dep_a);
    free(b->dep_b);
    free(b->need_t);
    free(b->need_v);
    free(b->link_res);
    free(b->ph_first);
    free(b->ph_count);
    free(b->ph_type);
}

/* A schedule of b's tasks: the NIC resources of every node, each task's
 * needs in the order they were added (CSR), every resource free at 0, and
 * with overlap each resource's busy intervals. */
static void sched_init(sched *s, builder *b, const sim_options *opt)
{
    memset(s, 0, sizeof *s);
    s->b = b;
    s->nic_base = b->nres;
    for (int nd = 0; nd < b->nodes; nd++)
        for (int dir = 0; dir < 2; dir++)
            for (int k = 0; k < b->nics; k++) new_resource(b, dir ? SIM_RES_NIC_IN : SIM_RES_NIC_OUT, nd, k, nd);
    /* needs per task, in the order they were added */
    s->need0 = lw_calloc((size_t)b->n + 1, sizeof(int));
    s->needs = lw_malloc(sizeof(int) * (size_t)(b->nn ? b->nn : 1));
    for (int i = 0; i < b->nn; i++) s->need0[b->need_t[i] + 1]++;
    for (int t = 0; t < b->n; t++) s->need0[t + 1] += s->need0[t];
    int *fill = lw_malloc(sizeof(int) * (size_t)(b->n ? b->n : 1));
    memcpy(fill, s->need0, sizeof(int) * (size_t)b->n);
    for (int i = 0; i < b->nn; i++) s->needs[fill[b->need_t[i]]++] = b->need_v[i];
    free(fill);
    s->free_at = lw_calloc((size_t)b->nres, sizeof(double));
    s->last = lw_malloc(sizeof(int) * (size_t)b->nres);
    memset(s->last, 0xff, sizeof(int) * (size_t)b->nres);
    if (opt->overlap == SIM_OVERLAP_DDP) {
        s->contention = SIM_DDP_CONTENTION;
        s->cv = lw_calloc((size_t)b->G, sizeof *s->cv);
        s->n_cv = lw_calloc((size_t)b->G, sizeof(int));
        s->cap_cv = lw_calloc((size_t)b->G, sizeof(int));
    }
    if (opt->overlap != SIM_OVERLAP_NONE) {
        s->iv = lw_calloc((size_t)b->nres, sizeof *s->iv);
        s->n_iv = lw_calloc((size_t)b->nres, sizeof(int));
        s->cap_iv = lw_calloc((size_t)b->nres, sizeof(int));
    }
}

static void sched_free(sched *s)
{
    free(s->need0);
    free(s->needs);
    free(s->free_at);
    free(s->last);
    free(s->used);
    if (s->iv)
        for (int i = 0; i < s->b->nres; i++) free(s->iv[i]);
    free(s->iv);
    free(s->n_iv);
    free(s->cap_iv);
    if (s->cv)
        for (int g = 0; g < s->b->G; g++) free(s->cv[g]);
    free(s->cv);
    free(s->n_cv);
    free(s->cap_cv);
}

sim_result *sim_run(const cost_model *m, const int *ci, const sim_options *opt)
{
    sim_options dflt = {.overlap = SIM_OVERLAP_FULL};
    if (!opt) opt = &dflt;
    builder b;
    memset(&b, 0, sizeof b);
    b.m = m;
    b.ci = ci;
    b.G = m->gpus;
    b.gpn = m->cl->gpus_per_node;
    b.nodes = (b.G + b.gpn - 1) / b.gpn;
    b.nics = m->cl->nics_per_node > 0 ? m->cl->nics_per_node : 1;
    b.link_res = lw_malloc(sizeof(int) * (size_t)b.G * (size_t)b.G);
    memset(b.link_res, 0xff, sizeof(int) * (size_t)b.G * (size_t)b.G);
    for (int g = 0; g < b.G; g++) new_resource(&b, SIM_RES_GPU, g, -1, g / b.gpn);
    b.max_tasks = opt->max_tasks;
    b.pr.opt = opt;
    b.pr.t0 = lw_now();
    if (opt->progress) {
        sim_size z;
        sim_size_estimate(m, ci, &z);
        b.pr.expect = z.tasks;
        b.pr.next_report = b.pr.t0; /* the first report at once: a line that says what runs */
    }
    build(&b, opt);
    b.pr.build_s = lw_now() - b.pr.t0;
    if (b.too_big) {
        free(b.t);
        free(b.res);
        builder_free_lists(&b);
        return NULL;
    }

    sched s;
    sched_init(&s, &b, opt);
    sim_result *r = lw_calloc(1, sizeof *r);
    r->overlap = opt->overlap;
    b.pr.next_report = 0; /* a report as the schedule starts: the build is done */
    r->step_ms = opt->overlap == SIM_OVERLAP_NONE ? schedule_serial(&s) : schedule_dataflow(&s);
    if (b.pr.stopped) { /* given up: nothing of the schedule is kept */
        r->tasks = b.t;
        r->res = b.res;
        r->res_of = s.res_of;
        sim_free(r);
        r = NULL;
        goto out;
    }
    r->gpus = b.G;
    r->nodes = b.nodes;
    r->batch = m->batch;
    r->n_tasks = b.n;
    r->tasks = b.t;
    r->n_res = b.nres;
    r->res = b.res;
    r->res_of = s.res_of ? s.res_of : lw_malloc(sizeof(int));
    r->images_per_s = r->step_ms > 0 ? (double)m->batch / (r->step_ms * 1e-3) : 0;
    if (!opt->skip_eq1) {
        strategy_eval ev;
        strategy_evaluate(m, ci, &ev);
        r->eq1_ms = ev.total_ms;
        r->gpus_used = ev.gpus_used;
        strategy_eval_free(&ev);
    }
    critical_path(r);
    if (opt->progress) {
        double spent = lw_now() - b.pr.t0;
        opt->progress(1.0, spent, spent, opt->progress_user);
    }
out:
    sched_free(&s);
    builder_free_lists(&b);
    return r;
}

void sim_size_estimate(const cost_model *m, const int *ci, sim_size *out)
{
    memset(out, 0, sizeof *out);
    int L = m->n_layers, most = 1;
    for (int li = 0; li < L; li++) {
        const config *c = &m->configs[li][ci[li]];
        int T = config_tasks(c);
        if (T > most) most = T;
        const layer *l = &m->net->layers[li];
        out->compute_tasks += T; /* forward */
        if (l->type != LT_INPUT) out->compute_tasks += T * (l->n_params > 0 ? 2.0 : 1.0);
    }
    int *ps = lw_malloc(sizeof(int) * (size_t)most);
    double *vs = lw_malloc(sizeof(double) * (size_t)most);
    for (int e = 0; e < m->n_edges; e++) {
        const config *cp = &m->configs[m->e_from[e]][ci[m->e_from[e]]], *cc = &m->configs[m->e_to[e]][ci[m->e_to[e]]];
        int Tc = config_tasks(cc), n = Tc < SIM_ESTIMATE_SAMPLES ? Tc : SIM_ESTIMATE_SAMPLES;
        double here = 0;
        for (int i = 0; i < n; i++) {
            /* consumer tasks spread over all of them: their coordinates vary in every dimension */
            int k = n == Tc ? i : (int)(((long)i * Tc + Tc / 2) / n);
            int nx = cost_overlaps_of(m, e, cp, cc, k, ps, vs);
            for (int x = 0; x < nx; x++) here += ps[x] != k;
        }
        if (n > 0) out->pieces += 2 * here * Tc / n; /* forward and backward */
    }
    free(ps);
    free(vs);
    out->tasks = out->compute_tasks + out->pieces + L + m->gpus; /* a sync per layer at most, an optimizer step per GPU */
    out->bytes = out->tasks * SIM_BYTES_PER_TASK + 4.0 * m->gpus * m->gpus;
}

double sim_time_limit_s(void)
{
    const char *env = getenv("LAYERWISE_MAX_SIM_S");
    if (env && env[0]) {
        char *end;
        double v = strtod(env, &end);
        if (end != env && isfinite(v) && v >= 0) return v;
    }
    return SIM_MAX_S;
}

/* Bytes this process may still take: 3/4 of the machine's memory, and no
 * more than the address space its limit (ulimit -v) leaves beside what
 * it maps now. */
static double memory_room(double *phys_out)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double phys = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    double room = phys > 0 ? 0.75 * phys : HUGE_VAL;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        double mapped = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        unsigned long vm;
        if (f) {
            if (fscanf(f, "%lu", &vm) == 1 && page > 0) mapped = (double)vm * (double)page;
            fclose(f);
        }
        double left = (double)rl.rlim_cur - mapped;
        if (left < room) room = left > 0 ? left : 0;
    }
    *phys_out = phys;
    return room;
}

int sim_refuse_too_large(const cost_model *m, const int *ci, double extra_bytes_per_task, double extra_s_per_task,
                         double limit_s, sim_size *size, lw_error *err)
{
    sim_size z;
    sim_size_estimate(m, ci, &z);
    if (size) *size = z;
    double bytes = z.bytes + z.tasks * extra_bytes_per_task;
    double secs = z.tasks * (SIM_MIN_S_PER_TASK + extra_s_per_task);
    double phys, room = memory_room(&phys);
    int many = z.tasks > (double)(1L << 30), big = bytes > room, slow = secs > limit_s;
    if (!many && !big && !slow) return 0;
    char mem[96];
    if (isfinite(room) && room < 0.75 * phys - 1)
        snprintf(mem, sizeof mem, "the address space left by its limit is %.0f MB", room / 1e6);
    else
        snprintf(mem, sizeof mem, "this machine has %.0f MB; the limit is 3/4 of it", phys / 1e6);
    lw_fail(err, 1,
            "simulating this step of %s on %d GPUs is too large for this machine: about %.3g tasks (%.3g transfer "
            "pieces), which would need about %.0f MB (%s) and at least %.0f s (the limit is %.0f s, "
            "LAYERWISE_MAX_SIM_S)%s; choose fewer GPUs or a strategy with fewer pieces (data parallelism moves none)",
            m->net->name, m->gpus, z.tasks, z.pieces, bytes / 1e6, mem, secs, limit_s,
            many ? "; over the 2^30 tasks the simulator counts" : "");
    return 1;
}

void sim_free(sim_result *s)
{
    if (!s) return;
    free(s->tasks);
    free(s->res);
    free(s->res_of);
    free(s->crit);
    free(s);
}

static const char *const kind_names[SIM__KINDS] = {"forward", "backward-data", "backward-weight", "transfer",
                                                     "sync",    "all-gather",    "reduce-scatter", "reduce", "optimizer"};

double sim_step_ms(const cost_model *m, const int *config_index, long max_tasks)
{
    sim_options o = {.overlap = SIM_OVERLAP_FULL, .max_tasks = max_tasks, .skip_eq1 = 1};
    sim_result *s = sim_run(m, config_index, &o);
    double ms = s ? s->step_ms : NAN;
    sim_free(s);
    return ms;
}

const char *sim_kind_name(sim_kind k)
{
    return k >= 0 && k < SIM__KINDS ? kind_names[k] : "?";
}

const char *sim_overlap_name(sim_overlap o)
{
    return o == SIM_OVERLAP_NONE ? "none" : o == SIM_OVERLAP_DDP ? "ddp" : "full";
}

int sim_overlap_from_name(const char *s)
{
    if (!s) return -1;
    if (strcmp(s, "none") == 0) return SIM_OVERLAP_NONE;
    if (strcmp(s, "full") == 0) return SIM_OVERLAP_FULL;
    if (strcmp(s, "ddp") == 0) return SIM_OVERLAP_DDP;
    return -1;
}

void sim_resource_name(const sim_resource *r, char *buf, size_t n)
{
    switch (r->kind) {
    case SIM_RES_GPU: snprintf(buf, n, "gpu %d", r->a); break;
    case SIM_RES_LINK: snprintf(buf, n, "link %d->%d", r->a, r->b); break;
    case SIM_RES_NIC_OUT: snprintf(buf, n, "nic node %d out %d", r->a, r->b); break;
    case SIM_RES_NIC_IN: snprintf(buf, n, "nic node %d in %d", r->a, r->b); break;
    }
}

int sim_task_resource(const sim_result *s, int t)
{
    const sim_task *tk = &s->tasks[t];
    if (tk->kind == SIM_FORWARD || tk->kind == SIM_BACKWARD_DATA || tk->kind == SIM_BACKWARD_WEIGHT) return tk->gpu;
    return tk->n_res ? s->res_of[tk->res0] : -1;
}

int sim_critical_segments(const sim_result *s, sim_segment *out, int max)
{
    int n = 0;
    double prev_end = 0;
    for (int i = 0; i < s->n_crit; i++) {
        const sim_task *t = &s->tasks[s->crit[i]];
        double ms = t->end_ms - prev_end; /* the time the path advanced, waits included */
        prev_end = t->end_ms;
        const sim_task *p = i ? &s->tasks[s->crit[i - 1]] : NULL;
        if (p && p->layer == t->layer && p->kind == t->kind) {
            if (out && n - 1 < max) out[n - 1].ms += ms;
            continue;
        }
        if (out && n < max) out[n] = (sim_segment){t->layer, t->kind, ms};
        n++;
    }
    return n;
}

/* ---- documents ---- */

#include <cjson/cJSON.h>

static const char *layer_name(const cost_model *m, int li)
{
    return li >= 0 && li < m->n_layers ? m->net->layers[li].name : "";
}

char *sim_to_json(const sim_result *s, const cost_model *m, const char *strategy)
{
    cJSON *root = doc_new("layerwise-sim/1", m, s->gpus_used);
    cJSON_AddStringToObject(root, "strategy", strategy);
    cJSON_AddStringToObject(root, "overlap", sim_overlap_name(s->overlap));
    cJSON_AddStringToObject(root, "sync", sync_scheme_name(m->cl->sync));
    cJSON_AddNumberToObject(root, "step_ms", s->step_ms);
    cJSON_AddNumberToObject(root, "images_per_s", s->images_per_s);
    doc_add_throughput(root, m, "simulated", s->step_ms, s->gpus_used);
    cJSON_AddNumberToObject(root, "eq1_ms", s->eq1_ms);
    cJSON *busy = cJSON_AddArrayToObject(root, "gpu_busy_ms");
    for (int g = 0; g < s->gpus; g++) cJSON_AddItemToArray(busy, cJSON_CreateNumber(s->res[g].busy_ms));
    int ns = sim_critical_segments(s, NULL, 0);
    sim_segment *seg = lw_malloc(sizeof *seg * (size_t)(ns ? ns : 1));
    sim_critical_segments(s, seg, ns);
    cJSON *cp = cJSON_AddArrayToObject(root, "critical_path");
    for (int i = 0; i < ns; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "layer", layer_name(m, seg[i].layer));
        cJSON_AddStringToObject(o, "kind", sim_kind_name(seg[i].kind));
        cJSON_AddNumberToObject(o, "ms", seg[i].ms);
        cJSON_AddItemToArray(cp, o);
    }
    free(seg);
    cJSON *tasks = cJSON_AddArrayToObject(root, "tasks");
    for (int t = 0; t < s->n_tasks; t++) {
        const sim_task *tk = &s->tasks[t];
        if (tk->dur_ms <= 0) continue; /* views (flatten) take no time */
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kind", sim_kind_name(tk->kind));
        cJSON_AddStringToObject(o, "layer", layer_name(m, tk->layer));
        char rn[64] = "";
        int r = sim_task_resource(s, t);
        if (r >= 0) sim_resource_name(&s->res[r], rn, sizeof rn);
        cJSON_AddStringToObject(o, "resource", rn);
        cJSON_AddNumberToObject(o, "start_ms", tk->start_ms);
        cJSON_AddNumberToObject(o, "end_ms", tk->end_ms);
        cJSON_AddNumberToObject(o, "bytes", tk->bytes);
        if (tk->kind == SIM_TRANSFER && tk->edge < 0) { /* a tie's piece (cost_tie) */
            const cost_tie *ti = NULL;
            for (int k = 0; k < m->n_ties; k++)
                if (m->ties[k].embed == tk->layer || m->ties[k].lm_head == tk->layer) ti = &m->ties[k];
            cJSON_AddStringToObject(o, "from", layer_name(m, ti ? (tk->backward ? ti->embed : ti->lm_head) : tk->layer));
            cJSON_AddStringToObject(o, "direction", tk->backward ? "backward" : "forward");
            cJSON_AddStringToObject(o, "term", "tie");
        } else if (tk->kind == SIM_TRANSFER) {
            cJSON_AddStringToObject(o, "from", layer_name(m, m->e_from[tk->edge]));
            cJSON_AddStringToObject(o, "direction", tk->backward ? "backward" : "forward");
        }
        if (tk->kind == SIM_SYNC) cJSON_AddNumberToObject(o, "bucket_layers", tk->n_layers);
        cJSON_AddItemToArray(tasks, o);
    }
    char *doc = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return doc;
}

/* Trace ids: pid = cluster node + 1; tid = GPU, then 10000 + link index,
 * then 20000 + NIC index, so GPUs sort first. */
static int trace_tid(const sim_result *s, int r)
{
    const sim_resource *x = &s->res[r];
    if (x->kind == SIM_RES_GPU) return x->a;
    if (x->kind == SIM_RES_LINK) return 10000 + r;
    return 20000 + r;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

int sim_write_trace(FILE *f, const sim_result *s, const cost_model *m, lw_error *err)
{
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"network\": ");
    json_str(f, m->net->name);
    fprintf(f, ", \"cluster\": ");
    json_str(f, m->cl->name);
    fprintf(f, ", \"model\": \"simulated (layerwise sim, overlap %s)\", \"step_ms\": %.6f, \"eq1_ms\": %.6f},\n",
            sim_overlap_name(s->overlap), s->step_ms, s->eq1_ms);
    fprintf(f, "\"traceEvents\": [\n");
    int first = 1;
    for (int nd = 0; nd < s->nodes; nd++) {
        fprintf(f, "%s{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, \"args\": {\"name\": "
                   "\"node %d\"}}",
                first ? "" : ",\n", nd + 1, nd);
        first = 0;
    }
    /* a track per resource that did something (every GPU always) */
    for (int r = 0; r < s->n_res; r++) {
        if (s->res[r].kind != SIM_RES_GPU && s->res[r].busy_ms <= 0) continue;
        char rn[64];
        sim_resource_name(&s->res[r], rn, sizeof rn);
        fprintf(f, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": \"%s\"}}",
                s->res[r].node + 1, trace_tid(s, r), rn);
        fprintf(f, ",\n{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": %d, \"tid\": %d, \"args\": "
                   "{\"sort_index\": %d}}",
                s->res[r].node + 1, trace_tid(s, r), trace_tid(s, r));
    }
    for (int t = 0; t < s->n_tasks; t++) {
        const sim_task *tk = &s->tasks[t];
        if (tk->dur_ms <= 0) continue;
        for (int i = 0; i < tk->n_res; i++) {
            int r = s->res_of[tk->res0 + i];
            fprintf(f, ",\n{\"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"name\": ", s->res[r].node + 1, trace_tid(s, r));
            char name[300];
            snprintf(name, sizeof name, "%s %s", layer_name(m, tk->layer), sim_kind_name(tk->kind));
            json_str(f, name);
            fprintf(f, ", \"cat\": \"%s\", \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"layer\": ", sim_kind_name(tk->kind),
                    tk->start_ms * 1e3, tk->dur_ms * 1e3);
            json_str(f, layer_name(m, tk->layer));
            fprintf(f, ", \"bytes\": %.0f", tk->bytes);
            if (tk->kind == SIM_TRANSFER) fprintf(f, ", \"from_gpu\": %d, \"to_gpu\": %d", tk->gpu, tk->dst);
            fprintf(f, "}}");
        }
    }
    fprintf(f, "\n]}\n");
    if (ferror(f)) return lw_fail(err, 1, "write failed");
    return 0;
}

typedef struct trace_job {
    const sim_result *s;
    const cost_model *m;
} trace_job;

static int write_trace(FILE *f, void *user, lw_error *err)
{
    const trace_job *j = user;
    return sim_write_trace(f, j->s, j->m, err);
}

int sim_save_trace(const char *path, const sim_result *s, const cost_model *m, lw_error *err)
{
    trace_job j = {s, m};
    return lw_write_file_atomic(path, write_trace, &j, err);
}
