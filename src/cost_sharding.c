/*
 * cost_sharding: ZeRO 1-3, FSDP and HSDP as sync schemes: their
 * collectives per layer (t_s) and what they divide of a task's memory
 * (cost_sharding.h).
 *
 * A ring all-gather or reduce-scatter of B bytes over n GPUs is n - 1 steps
 * of B / n bytes each (an all-reduce is the two: 2(n - 1) steps), each as
 * long as the slowest hop or the busiest node's NICs, as all-reduce is
 * priced (cost_collective.c); its latency is NCCL's per call plus per step
 * (n - 1 steps, nodes - 1 of them across the network), and a layer pays the
 * share of a call its bytes fill of a bucket, as for all-reduce.
 */
#include "cost_sharding.h"

#include <stdlib.h>
#include <string.h>

#include "cost_internal.h"

int sync_shard_level(sync_scheme s)
{
    switch (s) {
    case SYNC_ZERO1: return 1;
    case SYNC_ZERO2: return 2;
    case SYNC_ZERO3:
    case SYNC_HSDP: return 3;
    default: return 0;
    }
}

/* Latency of one ring call over n GPUs spanning `nodes` nodes with `steps`
 * steps per GPU pair (1: all-gather, reduce-scatter; 2: all-reduce), as
 * NCCL's tuning model charges it. Seconds. */
static double call_latency_s(const cluster *cl, int n, int nodes, int steps)
{
    double all = (double)steps * (n - 1), inter = (double)steps * (nodes - 1);
    return (cl->coll.call_latency_us + (all - inter) * cl->coll.intra_step_us + inter * cl->coll.inter_step_us) * 1e-6;
}

/* The share of a call a collective of `bytes` pays: its fill of a bucket,
 * one whole call at a bucket or more (bucket_mb 0: one call). */
static double calls_of(const cluster *cl, double bytes)
{
    double bucket = cl->coll.bucket_mb * 1048576.0;
    return bucket > 0 && bytes < bucket ? bytes / bucket : 1.0;
}

static int replicas_of(const config *c)
{
    return c->deg[DIM_N] * c->deg[DIM_H] * c->deg[DIM_W];
}

/* The weight shards whose replicas sync together (coll_shard_replicas):
 * one per (c, r, x) coordinate; c's alone for a CNN layer. */
static int weight_shards(const config *c)
{
    return c->deg[DIM_C] * c->deg[DIM_R] * c->deg[DIM_X];
}

/* HSDP's group: the replicas of a shard that share a node, when every node
 * that holds some of a shard's replicas holds as many (else all r, as
 * zero3). Task k runs on GPU k, node k / gpn; tasks are row-major over
 * (n, c, h, w), so a shard's replicas are runs of `inner` consecutive
 * tasks, one run every `block`. With a power-of-two node size this has a
 * closed form; otherwise the replicas are counted node by node. */
static int hsdp_group(const cost_model *m, const config *c)
{
    int r = replicas_of(c), T = config_tasks(c), gpn = m->cl->gpus_per_node;
    if (T <= gpn) return r;
    int inner = T / (c->deg[DIM_N] * c->deg[DIM_C]), block = inner * c->deg[DIM_C];
    if ((gpn & (gpn - 1)) == 0) return inner >= gpn ? gpn : block <= gpn ? gpn / c->deg[DIM_C] : inner;
    int *rep = lw_malloc(sizeof(int) * (size_t)T);
    int g = 0;
    for (int j = 0; j < weight_shards(c) && g >= 0; j++) {
        int nr = coll_shard_replicas(c, j, rep);
        for (int a = 0; a < nr && g >= 0;) {
            int b = a;
            while (b < nr && rep[b] / gpn == rep[a] / gpn) b++;
            if (g == 0) g = b - a;
            else if (g != b - a) g = -1;
            a = b;
        }
    }
    free(rep);
    return g > 0 ? g : r;
}

int cost_shard_group(const cost_model *m, const config *c, int task)
{
    (void)task; /* every replica of every shard has a group of the same size */
    int r = replicas_of(c);
    if (!sync_sharded(m->cl->sync) || r <= 1) return 1;
    if (m->cl->sync != SYNC_HSDP) return r;
    int g = hsdp_group(m, c);
    /* a group that does not divide the replicas (tasks that are not all
     * replicas, a transformer's r or x degree): zero3 over all of them */
    return g > 0 && g <= r && r % g == 0 ? g : r;
}

/* One phase of rings, all at once: for every shard, rings of n GPUs taken
 * from its replicas (pick(rep, ring): the members of ring q), each step
 * moving `piece` bytes. Returns the step (seconds) and the largest call
 * latency in *lat (steps per pair as call_latency_s). */
static double phase_step(const cost_model_priv *pm, const tx_scratch *sc, const config *c, int g, int across,
                         double piece, int steps, double *lat)
{
    const cost_model *m = &pm->pub;
    int r = replicas_of(c), n = across ? r / g : g, rings = r / n;
    size_t nb = sizeof(double) * (size_t)(pm->nodes_used > 0 ? pm->nodes_used : 1);
    memset(sc->nic_in_f, 0, nb);
    memset(sc->nic_out_f, 0, nb);
    int *rep = sc->list_i, *ring = lw_malloc(sizeof(int) * (size_t)n);
    double step = 0;
    *lat = 0;
    for (int j = 0; j < weight_shards(c); j++) {
        coll_shard_replicas(c, j, rep); /* ascending: node by node, a node's group consecutive */
        for (int q = 0; q < rings; q++) {
            for (int i = 0; i < n; i++) ring[i] = across ? rep[i * g + q] : rep[q * g + i];
            int nodes;
            double s = coll_ring_step(pm, ring, n, piece, sc->nic_in_f, sc->nic_out_f, &nodes);
            if (s > step) step = s;
            double l = call_latency_s(m->cl, n, nodes, steps);
            if (l > *lat) *lat = l;
        }
    }
    free(ring);
    if (pm->nodes_used > 1) {
        double tn = coll_nic_step(m->cl, sc->nic_in_f, sc->nic_out_f, pm->nodes_used);
        if (tn > step) step = tn;
    }
    return step;
}

/* cost_shard_comm with the caller's scratch. */
static int comm_eval(const cost_model_priv *pm, const tx_scratch *sc, int li, const config *c, shard_comm *o)
{
    const cost_model *m = &pm->pub;
    memset(o, 0, sizeof *o);
    o->level = sync_shard_level(m->cl->sync);
    o->n_ag = o->level == 3 ? 2 : 1;
    o->group = 1;
    int r = replicas_of(c), shards = weight_shards(c);
    const long weights = layer_weights(m->net, li);
    if (o->level == 0 || weights == 0 || r <= 1) return 0;
    int g = cost_shard_group(m, c, 0);
    o->group = g;
    /* one shard's gradient (and working weight) bytes: the weights split over c and r */
    double ws = (double)weights * m->elem_bytes / (c->deg[DIM_C] * c->deg[DIM_R]);
    if (g > 1) { /* all-gather and reduce-scatter of the shard among its group: g - 1 steps of ws / g */
        double lat, step = phase_step(pm, sc, c, g, 0, ws / g, 1, &lat);
        double t = ((g - 1) * step + calls_of(m->cl, ws) * lat) * 1e3;
        o->ag_ms = o->rs_ms = t;
        o->ag_bytes = o->rs_bytes = (double)(g - 1) * ws * (r / g) * shards;
    }
    if (g < r) { /* hsdp: the group's gradient pieces (ws / g) all-reduced across nodes, r / g GPUs a ring */
        int k = r / g;
        double lat, step = phase_step(pm, sc, c, g, 1, ws / g / k, 2, &lat);
        o->ar_ms = (2.0 * (k - 1) * step + calls_of(m->cl, ws / g) * lat) * 1e3;
        o->ar_bytes = 2.0 * (k - 1) * ws * shards;
    }
    return 1;
}

double shard_t_s_eval(const cost_model_priv *pm, const tx_scratch *sc, int li, const config *c, double *bytes_out)
{
    shard_comm o;
    comm_eval(pm, sc, li, c, &o);
    if (bytes_out) *bytes_out = o.n_ag * o.ag_bytes + o.rs_bytes + o.ar_bytes;
    return o.n_ag * o.ag_ms + o.rs_ms + o.ar_ms;
}

int cost_shard_comm(const cost_model *m, int li, const config *c, shard_comm *out)
{
    const cost_model_priv *pm = (const cost_model_priv *)m;
    tx_scratch sc;
    scratch_init(&sc, m->gpus, pm->nodes_used);
    int any = comm_eval(pm, &sc, li, c, out);
    scratch_free(&sc);
    return any;
}

/* Bytes a parameter's working copy takes: the element size in mixed
 * precision (beside the fp32 master), else the fp32 weight itself. */
static double work_bytes(const cost_model *m, int *mixed)
{
    double eb = m->elem_bytes > 0 ? m->elem_bytes : BYTES_PER_ELEM;
    *mixed = eb < BYTES_PER_ELEM;
    return *mixed ? eb : BYTES_PER_ELEM;
}

void cost_shard_memory(const cost_model *m, double shard, int group, memory_parts *p)
{
    int level = sync_shard_level(m->cl->sync);
    if (level == 0 || group <= 1) return;
    int mixed;
    double work = shard * work_bytes(m, &mixed), master = mixed ? shard * BYTES_PER_ELEM : 0;
    /* ZeRO counts the fp32 master weights with the optimizer state (its K) */
    p->optimizer /= group;
    p->weights = level == 3 ? (work + master) / group : work + master / group;
    if (level >= 2) p->gradients /= group;
}

double cost_shard_work_bytes(const cost_model *m)
{
    int mixed;
    return work_bytes(m, &mixed);
}

void cost_shard_state(const cost_model *m, double params, int group, memory_parts *out)
{
    int mixed;
    double eb = m->elem_bytes > 0 ? m->elem_bytes : BYTES_PER_ELEM, work = work_bytes(m, &mixed);
    memset(out, 0, sizeof *out);
    out->weights = params * (mixed ? BYTES_PER_ELEM + work : work);
    out->gradients = params * eb;
    out->optimizer = params * BYTES_PER_ELEM * (m->optimizer == OPT_ADAM ? 2 : m->optimizer == OPT_MOMENTUM ? 1 : 0);
    cost_shard_memory(m, params, group, out);
}

double cost_shard_gather_bytes(const cost_model *m)
{
    if (sync_shard_level(m->cl->sync) < 3) return 0;
    double a = 0, b = 0; /* the two largest layers' parameters */
    for (int i = 0; i < m->n_layers; i++) {
        double n = (double)layer_weights(m->net, i);
        if (n > a) {
            b = a;
            a = n;
        } else if (n > b) {
            b = n;
        }
    }
    int mixed;
    return (a + b) * work_bytes(m, &mixed);
}

double cost_fixed_bytes(const cost_model *m)
{
    return m->workspace_bytes + cost_shard_gather_bytes(m);
}
