/*
 * cost_collective: t_s, the time to synchronise a layer's parameters after
 * each step, by parameter server or by ring all-reduce in the rings NCCL
 * would form (cost_ring_order), with its latency per call and gradient
 * buckets; and one all-reduce alone (cost_allreduce_s).
 */
#include "cost_internal.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

/* Where the links of a ring's hops within a node come from: the cluster
 * (cluster_link, a scan of its overrides), or a model's table of them
 * (node_bw[a * gpn + b % gpn], GB/s, a and b on one node: the same doubles,
 * without scanning a DGX-1 pod's 640 overrides for each of the millions of
 * hops a build's t_s looks at). */
typedef struct link_tab {
    const cluster *cl;
    const double *node_bw;
    int gpn;
} link_tab;

/* Bandwidth of the link a-b (two GPUs of one node where t->node_bw). */
static double link_bw(const link_tab *t, int a, int b)
{
    return t->node_bw ? t->node_bw[(size_t)a * t->gpn + b % t->gpn] : cluster_link(t->cl, a, b).bandwidth_gbs;
}

/* Depth-first search for a Hamiltonian cycle over v[0..k-1] using only
 * links of at least `floor` GB/s; path[0] = v[0] is fixed. */
static int cycle_dfs(const link_tab *lt, const int *v, int k, double floor, int *path, unsigned *used, int depth)
{
    if (depth == k) return link_bw(lt, path[k - 1], path[0]) >= floor;
    for (int i = 1; i < k; i++) {
        if (*used & (1u << i)) continue;
        if (link_bw(lt, path[depth - 1], v[i]) < floor) continue;
        *used |= 1u << i;
        path[depth] = v[i];
        if (cycle_dfs(lt, v, k, floor, path, used, depth + 1)) return 1;
        *used &= ~(1u << i);
    }
    return 0;
}

/* Reorders v[0..k-1] (GPUs of one node) into the cycle whose slowest link
 * is fastest, trying the distinct link bandwidths from the highest down;
 * ties keep the first cycle found in GPU order. Then rotates it so that
 * the slowest link closes the cycle (where a ring through several nodes
 * leaves this node). Nodes of up to 16 GPUs with per-pair overrides only:
 * uniform links need no search. */
static void order_node(const link_tab *lt, int *v, int k)
{
    if (k < 3 || k > 16 || lt->cl->n_overrides == 0) return;
    double bws[16 * 15 / 2];
    int nb = 0;
    for (int a = 0; a < k; a++)
        for (int b = a + 1; b < k; b++) {
            double x = link_bw(lt, v[a], v[b]);
            int seen = 0;
            for (int i = 0; i < nb; i++) seen |= bws[i] == x;
            if (!seen) bws[nb++] = x;
        }
    for (int i = 1; i < nb; i++) /* descending */
        for (int j = i; j > 0 && bws[j] > bws[j - 1]; j--) {
            double t = bws[j];
            bws[j] = bws[j - 1];
            bws[j - 1] = t;
        }
    int path[16];
    for (int i = 0; i < nb; i++) {
        unsigned used = 1;
        path[0] = v[0];
        if (cycle_dfs(lt, v, k, bws[i], path, &used, 1)) {
            int weak = 0; /* edge path[weak] -> path[weak + 1] */
            for (int a = 1; a < k; a++)
                if (link_bw(lt, path[a], path[(a + 1) % k]) < link_bw(lt, path[weak], path[(weak + 1) % k])) weak = a;
            for (int a = 0; a < k; a++) v[a] = path[(weak + 1 + a) % k];
            return;
        }
    }
}

/* Steps the ring packing of one node may take at each rate
 * (node_rings_bw): NCCL's channel search stops at a step budget too
 * (src/graph/search.cc: NCCL_SEARCH_TIMEOUT, 1 << 14 a search); a packing
 * that runs out keeps the most rings it found. The DGX-1V's 8 GPUs reach
 * their bound, six rings, in 138 steps. */
#define RING_SEARCH_STEPS (1L << 14)

/* The most rings NCCL's channel search keeps (NVIDIA/nccl src/graph/
 * search.cc searches up to MAXCHANNELS / 2 channels before duplicating
 * them); enough for the six NVLinks of a V100. */
#define MAX_RINGS 16

/* A packing of directed rings at one rate s over k GPUs (positions): the
 * capacity left on each directed pair, the path being built, the most
 * rings found, and the bound no packing can pass (the fewest rings any GPU
 * can send: its outgoing capacity in whole units of s). */
typedef struct ring_pack {
    double left[16][16];
    double s;
    int k, path[16], best, bound;
    long budget;
} ring_pack;

static int pack_more(ring_pack *p, int rings);

/* Depth-first search for the next ring: a directed Hamiltonian cycle from
 * position 0 whose every hop has s left, trying the hops with the most
 * left first (as NCCL sorts the next GPUs by bandwidth); each ring found is
 * taken and the packing goes on from it (pack_more), then given back, so
 * that every packing is tried until the bound or the budget stops it.
 * Returns 1 to stop. */
static int pack_dfs(ring_pack *p, unsigned used, int depth, int rings)
{
    const int k = p->k;
    if (depth == k) {
        if (p->left[p->path[k - 1]][p->path[0]] < p->s) return 0;
        for (int a = 0; a < k; a++) p->left[p->path[a]][p->path[(a + 1) % k]] -= p->s;
        int path[16], stop;
        memcpy(path, p->path, sizeof path);
        stop = pack_more(p, rings + 1);
        for (int a = 0; a < k; a++) p->left[path[a]][path[(a + 1) % k]] += p->s;
        memcpy(p->path, path, sizeof path);
        return stop;
    }
    const double *row = p->left[p->path[depth - 1]];
    int next[16], nn = 0;
    for (int i = 1; i < k; i++)
        if (!(used & (1u << i)) && row[i] >= p->s) {
            int j = nn++;
            for (; j > 0 && row[next[j - 1]] < row[i]; j--) next[j] = next[j - 1];
            next[j] = i;
        }
    for (int x = 0; x < nn; x++) {
        if (--p->budget < 0) return 1;
        p->path[depth] = next[x];
        if (pack_dfs(p, used | 1u << next[x], depth + 1, rings)) return 1;
    }
    return 0;
}

/* Records `rings` and looks for one more; 1 to stop (bound, cap or budget). */
static int pack_more(ring_pack *p, int rings)
{
    if (rings > p->best) p->best = rings;
    if (p->best >= p->bound || p->best >= MAX_RINGS) return 1;
    p->path[0] = 0;
    return pack_dfs(p, 1, 1, rings);
}

/* The bus bandwidth of the rings NCCL would build over the GPUs v[0..k-1]
 * of one node with per-pair links, GB/s (*count: how many), as NCCL's
 * channel search does (NVIDIA/nccl src/graph/search.cc, ncclTopoCompute:
 * every channel of a search runs at one speed, tried from the fastest
 * down, each ring taking that speed from every link it crosses, in its
 * direction): at each distinct link rate in turn, as many directed rings
 * as fit, each direction of a pair carrying its one-way rate; the rate
 * whose rings carry the most wins (ties: the faster, fewer rings). The
 * data is split over them, so the bus bandwidth is their count times the
 * rate. Only pairs at least as fast as the node's default link (cluster
 * intra_node) carry rings: slower overrides are paths through host memory
 * and a shared PCIe port, which NCCL leaves out where NVLink rings exist.
 * On the DGX-1V: six rings at one link's 22.5 GB/s (two each way over each
 * two-link pair, one over each one-link pair: all six NVLinks of every
 * GPU), 135 GB/s where one ring gets 45; NCCL builds six ring channels
 * there too (NVIDIA/nccl issue 713 shows six on four V100 joined two links
 * a pair). Returns 0 where no ring exists over such pairs. */
static double node_rings_bw(const link_tab *lt, const int *v, int k, int *count)
{
    double cap[16][16], min_bw = lt->cl->intra.bandwidth_gbs, lv[16 * 15 / 2];
    int nl = 0;
    for (int a = 0; a < k; a++)
        for (int b = 0; b < k; b++) {
            double x = a == b ? 0 : link_bw(lt, v[a], v[b]);
            cap[a][b] = x >= min_bw ? x : 0;
            int seen = a >= b || cap[a][b] <= 0;
            for (int i = 0; i < nl && !seen; i++) seen = lv[i] == x;
            if (!seen) lv[nl++] = x;
        }
    for (int i = 1; i < nl; i++) /* descending */
        for (int j = i; j > 0 && lv[j] > lv[j - 1]; j--) {
            double t = lv[j];
            lv[j] = lv[j - 1];
            lv[j - 1] = t;
        }
    double best = 0;
    int best_n = 0;
    for (int i = 0; i < nl; i++) {
        ring_pack p = {.s = lv[i], .k = k, .budget = RING_SEARCH_STEPS, .bound = MAX_RINGS};
        memcpy(p.left, cap, sizeof cap);
        for (int a = 0; a < k; a++) {
            int units = 0;
            for (int b = 0; b < k; b++) units += (int)floor(cap[a][b] / lv[i] + 1e-9);
            if (units < p.bound) p.bound = units;
        }
        pack_more(&p, 0);
        if (p.best * lv[i] > best) {
            best = p.best * lv[i];
            best_n = p.best;
        }
    }
    if (count) *count = best_n;
    return best;
}

/* Whether a ring within one node is priced as NCCL's several rings
 * (node_rings_bw): with NCCL's algorithms on a node of per-pair links. */
static int several_rings(const link_tab *lt, int k)
{
    return lt->cl->coll.nccl_algorithms && lt->cl->n_overrides > 0 && k >= 3 && k <= 16;
}

/* The order NCCL would ring devs[0..n-1] in: node by node, in node order
 * and stable within a node, each node's GPUs in the cycle order_node finds. */
static void ring_order(const link_tab *lt, int *devs, int n)
{
    const cluster *cl = lt->cl;
    /* node by node, in node order, stable within a node */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && cluster_node_of(cl, devs[j]) < cluster_node_of(cl, devs[j - 1]); j--) {
            int t = devs[j];
            devs[j] = devs[j - 1];
            devs[j - 1] = t;
        }
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && cluster_node_of(cl, devs[j]) == cluster_node_of(cl, devs[i])) j++;
        order_node(lt, devs + i, j - i);
        i = j;
    }
}

/* How many rings NCCL would run at once over ring[0..n-1] (cost.h). */
int cost_ring_count(const cluster *cl, const int *ring, int n)
{
    const link_tab lt = {cl, NULL, 0};
    int count = 0;
    for (int i = 1; i < n; i++)
        if (cluster_node_of(cl, ring[i]) != cluster_node_of(cl, ring[0])) return 1;
    if (!several_rings(&lt, n) || node_rings_bw(&lt, ring, n, &count) <= 0) return 1;
    return count;
}

/* ring_order over the cluster's links (cost.h). */
void cost_ring_order(const cluster *cl, int *devs, int n)
{
    ring_order(&(link_tab){cl, NULL, 0}, devs, n);
}

/* Latency of one ring all-reduce call over n devices spanning `nodes`
 * nodes, as NCCL's tuning model charges it: a base per call plus one hop
 * latency per step, 2(n-1) steps of which 2(nodes-1) cross the network.
 * Seconds. */
static double ring_call_latency_s(const cluster *cl, int n, int nodes)
{
    double steps = 2.0 * (n - 1), inter = 2.0 * (nodes - 1);
    return (cl->coll.call_latency_us + (steps - inter) * cl->coll.intra_step_us + inter * cl->coll.inter_step_us) *
           1e-6;
}

/* NCCL's tuning model for the other algorithm and protocols (NVIDIA/nccl
 * src/graph/tuning.cc, ncclTopoTuneModel; figures of NCCL 2.1x): latency
 * per call and per step in microseconds, by fabric (NVLink, PCIe,
 * network), algorithm (ring, tree) and protocol (LL, LL128, Simple). The
 * ring/Simple figures are the cluster's own "collectives" constants, which
 * default to these. */
static const double coll_base_us[2][3] = {{6.6, 14.0, 8.4}, {6.8, 14.0, 0.0}};
static const double coll_step_us[3][2][3] = {
    {{0.47, 1.9, 3.4}, {0.52, 1.2, 28.0}}, /* NVLink */
    {{1.0, 2.5, 5.7}, {1.0, 1.9, 28.0}},   /* PCIe */
    {{2.7, 4.0, 9.6}, {5.0, 8.5, 50.0}},   /* network */
};

const char *coll_proto_name(int proto)
{
    return proto == COLL_LL ? "LL" : proto == COLL_LL128 ? "LL128" : "Simple";
}

/* Latency of one call of algorithm `tree` and protocol p over n ranks on
 * `nodes` nodes, seconds: the ring's 2(n - 1) steps, 2(nodes - 1) of them
 * over the network; the tree's up and down its height (the ranks of a node
 * in a chain, log2 of the nodes across them). LL's intra-node steps cost
 * 1.8x when the call spans nodes, as NCCL charges them. */
static double coll_latency_s(const cluster *cl, int tree, int p, int n, int nodes)
{
    if (!tree && p == COLL_SIMPLE) return ring_call_latency_s(cl, n, nodes);
    int fab = cl->coll.pcie ? 1 : 0;
    double intra = coll_step_us[fab][tree][p], inter = coll_step_us[2][tree][p];
    if (nodes > 1 && p == COLL_LL) intra *= 1.8;
    double us = coll_base_us[tree][p];
    if (!tree) {
        double steps = 2.0 * (n - 1), x = 2.0 * (nodes - 1);
        us += (steps - x) * intra + x * inter;
    } else {
        us += 2.0 * ((double)n / nodes - 1.0) * intra + 2.0 * log2((double)nodes) * inter;
    }
    return us * 1e-6;
}

coll_pick cost_allreduce_pick(const cluster *cl, int n, int nodes, double ring_bw_s)
{
    coll_pick best = {0, COLL_SIMPLE, ring_call_latency_s(cl, n, nodes) + ring_bw_s};
    if (!cl->coll.nccl_algorithms || n < 2) return best;
    /* Bandwidth against the ring's Simple bus bandwidth: LL carries 8-byte
     * lines with a 4-byte flag and NCCL rates it at 1/4, LL128 at 0.92 (on
     * NVLink only: NCCL leaves it off over PCIe); the tree moves each byte
     * up and down once (algorithm bandwidth half its bus bandwidth, against
     * the ring's n / 2(n - 1)) at 0.9 of it, LL at 1/3.8 of that and LL128
     * at 0.915. The tree only across nodes. */
    static const double ring_f[3] = {0.25, 0.92, 1.0}, tree_f[3] = {0.9 / 3.8, 0.9 * 0.915, 0.9};
    for (int tree = 0; tree <= (nodes > 1); tree++)
        for (int p = 0; p < 3; p++) {
            if (p == COLL_LL128 && cl->coll.pcie) continue;
            double bw = tree ? ring_bw_s * n / (n - 1.0) / tree_f[p] : ring_bw_s / ring_f[p];
            double t = coll_latency_s(cl, tree, p, n, nodes) + bw;
            if (t < best.seconds) best = (coll_pick){tree, p, t};
        }
    return best;
}

/* Per ring step moving `piece` bytes from each device to the next along
 * ring[0..n-1]: the slowest intra-node hop (a ring within one node of
 * per-pair links under NCCL's algorithms: the piece over the bus bandwidth
 * of the rings NCCL would build there), and the bytes each node sends
 * and receives over its NICs (added to nic_out / nic_in, indexed by node).
 * Returns the hop time in seconds and the number of nodes the ring spans. */
static double ring_hops(const link_tab *lt, const int *ring, int n, double piece, double *nic_in, double *nic_out,
                        int *nodes_out)
{
    const cluster *cl = lt->cl;
    double step = 0;
    int nodes = 1;
    for (int a = 0; a < n; a++) {
        int src = ring[a], dst = ring[(a + 1) % n];
        int ns = cluster_node_of(cl, src), nd = cluster_node_of(cl, dst);
        if (ns != nd) {
            nic_out[ns] += piece;
            nic_in[nd] += piece;
            if (a + 1 < n) nodes++;
        } else {
            double t = piece / (link_bw(lt, src, dst) * 1e9);
            if (t > step) step = t;
        }
    }
    *nodes_out = nodes;
    if (nodes == 1 && step > 0 && several_rings(lt, n)) {
        /* NCCL splits the data over all the rings it built: each step as
         * long as the piece at their summed speed (never slower than the
         * one ring given) */
        double bw = node_rings_bw(lt, ring, n, NULL);
        if (bw > 0 && piece / (bw * 1e9) < step) step = piece / (bw * 1e9);
    }
    return step;
}

/* A node's inter-node traffic is spread over all its NICs: NCCL runs one
 * ring channel per NIC. */
static double nic_step(const cluster *cl, const double *nic_in, const double *nic_out, int nodes)
{
    double t = 0, bw = cl->inter.bandwidth_gbs * 1e9 * cl->nics_per_node;
    for (int k = 0; k < nodes; k++) {
        double b = nic_in[k] > nic_out[k] ? nic_in[k] : nic_out[k];
        if (b / bw > t) t = b / bw;
    }
    return t;
}

/* n_rings concurrent ring all-reduces of `bytes` each, ring k over
 * rings[k * n .. k * n + n - 1] taken in that order (n >= 2): 2(n - 1)
 * steps of bytes / n each, as long as the slowest hop of any ring or the
 * busiest NICs (every ring's inter-node hops sharing them: nic, 2 x
 * n_nodes zeroed doubles), and the slowest ring's call latency. Seconds. */
static double allreduce_rings_s(const link_tab *lt, const int *rings, int n_rings, int n, double bytes, double *nic,
                                int n_nodes)
{
    double step = 0, lat = 0;
    int most = 1;
    for (int k = 0; k < n_rings; k++) {
        int nodes;
        double s = ring_hops(lt, rings + (size_t)k * n, n, bytes / n, nic, nic + n_nodes, &nodes);
        if (s > step) step = s;
        double l = ring_call_latency_s(lt->cl, n, nodes);
        if (l > lat) lat = l;
        if (nodes > most) most = nodes;
    }
    double t_nic = nic_step(lt->cl, nic, nic + n_nodes, n_nodes);
    if (t_nic > step) step = t_nic;
    if (lt->cl->coll.nccl_algorithms) return cost_allreduce_pick(lt->cl, n, most, 2.0 * (n - 1) * step).seconds;
    return 2.0 * (n - 1) * step + lat;
}

/* One ring all-reduce of `bytes` over ring[0..n-1] (cost.h): 2(n - 1)
 * steps of bytes / n each, as long as the slowest hop or the busiest NICs,
 * and the call's latency. */
double cost_allreduce_s(const cluster *cl, const int *ring, int n, double bytes)
{
    if (n < 2 || bytes <= 0) return 0;
    double *nic = lw_calloc(2 * (size_t)cl->nodes, sizeof(double));
    double t = allreduce_rings_s(&(link_tab){cl, NULL, 0}, ring, 1, n, bytes, nic, cl->nodes);
    free(nic);
    return t;
}

double cost_allreduce_rings_s(const cluster *cl, const int *rings, int n_rings, int n, double bytes)
{
    if (n < 2 || n_rings < 1 || bytes <= 0) return 0;
    double *nic = lw_calloc(2 * (size_t)cl->nodes, sizeof(double));
    double t = allreduce_rings_s(&(link_tab){cl, NULL, 0}, rings, n_rings, n, bytes, nic, cl->nodes);
    free(nic);
    return t;
}

coll_pick cost_allreduce_call(const cluster *cl, const int *ring, int n, double bytes)
{
    coll_pick pk = {0, COLL_SIMPLE, 0};
    if (n < 2 || bytes <= 0) return pk;
    double *nic = lw_calloc(2 * (size_t)cl->nodes, sizeof(double));
    int nodes;
    double step = ring_hops(&(link_tab){cl, NULL, 0}, ring, n, bytes / n, nic, nic + cl->nodes, &nodes);
    double t_nic = nic_step(cl, nic, nic + cl->nodes, cl->nodes);
    free(nic);
    return cost_allreduce_pick(cl, n, nodes, 2.0 * (n - 1) * (t_nic > step ? t_nic : step));
}

/* A reduce-scatter and an all-gather are each half of the ring
 * all-reduce (cost.h): n - 1 of its 2(n - 1) steps, and half its call's
 * latency, so that one of each is exactly the all-reduce. */
double cost_reduce_scatter_s(const cluster *cl, const int *ring, int n, double bytes)
{
    return 0.5 * cost_allreduce_s(cl, ring, n, bytes);
}

double cost_allgather_s(const cluster *cl, const int *ring, int n, double bytes)
{
    return 0.5 * cost_allreduce_s(cl, ring, n, bytes);
}

/* Concurrent ring all-reduces of `bytes` each among the groups of n
 * consecutive GPUs of model pm from GPU 0 (n_groups of them: GPUs
 * [k n, k n + n)), each ringed as NCCL would (ring_order), sharing the
 * NICs. Seconds; 0 for n < 2 or nothing to move. */
double groups_allreduce_s(const cost_model_priv *pm, int n_groups, int n, double bytes)
{
    const cost_model *m = &pm->pub;
    if (n < 2 || n_groups < 1 || bytes <= 0) return 0;
    const int nn = pm->nodes_used > 0 ? pm->nodes_used : 1;
    int *rings = lw_malloc(sizeof(int) * (size_t)n_groups * (size_t)n);
    double *nic = lw_calloc(2 * (size_t)nn, sizeof(double));
    const link_tab lt = {m->cl, pm->node_bw, m->cl->gpus_per_node};
    for (int k = 0; k < n_groups; k++) {
        for (int i = 0; i < n; i++) rings[(size_t)k * n + i] = k * n + i;
        ring_order(&lt, rings + (size_t)k * n, n);
    }
    double t = allreduce_rings_s(&lt, rings, n_groups, n, bytes, nic, nn);
    free(nic);
    free(rings);
    return t;
}

/* The tasks of config c that hold weight shard j and sync it, ascending,
 * into rep; returns how many. A shard is a (c, r, x) coordinate, j =
 * (c x R + r) x X + x: the weights split over c and r, and each of the x
 * replicas syncs with the tasks of its own replica index (x concurrent
 * rings; replicas see the same input, so their gradients agree). Tasks
 * are numbered row-major over (n, c, h, w, r, x). */
static int shard_replicas(const config *c, int j, int *rep)
{
    const int rx = c->deg[DIM_R] * c->deg[DIM_X], cj = j / rx, rxj = j % rx;
    int nr = 0, hw = c->deg[DIM_H] * c->deg[DIM_W];
    for (int n = 0; n < c->deg[DIM_N]; n++)
        for (int q = 0, k = (n * c->deg[DIM_C] + cj) * hw; q < hw; q++) rep[nr++] = (k + q) * rx + rxj;
    return nr;
}

/* The pieces the sharded schemes (cost_sharding.c) build on, over the same
 * rings as all-reduce (cost_internal.h). */
int coll_shard_replicas(const config *c, int j, int *rep)
{
    return shard_replicas(c, j, rep);
}

double coll_ring_step(const cost_model_priv *pm, int *ring, int n, double piece, double *nic_in, double *nic_out,
                      int *nodes)
{
    const link_tab lt = {pm->pub.cl, pm->node_bw, pm->pub.cl->gpus_per_node};
    ring_order(&lt, ring, n);
    return ring_hops(&lt, ring, n, piece, nic_in, nic_out, nodes);
}

double coll_nic_step(const cluster *cl, const double *nic_in, const double *nic_out, int nodes)
{
    return nic_step(cl, nic_in, nic_out, nodes);
}

/* t_s of layer li's config c with the caller's scratch (ms; *bytes_out,
 * may be NULL: the bytes each replica pushes and pulls, summed). */
double t_s_eval(const cost_model_priv *pm, const tx_scratch *sc, int li, const config *c, double *bytes_out)
{
    const cost_model *m = &pm->pub;
    if (bytes_out) *bytes_out = 0;
    int r = c->deg[DIM_N] * c->deg[DIM_H] * c->deg[DIM_W];
    const long weights = layer_weights(m->net, li); /* a tied table syncs with its lm_head */
    if (weights == 0 || r <= 1) return 0;
    if (sync_sharded(m->cl->sync)) return shard_t_s_eval(pm, sc, li, c, bytes_out);
    int shards = c->deg[DIM_C] * c->deg[DIM_R] * c->deg[DIM_X];
    /* one shard's gradient bytes: the weights split over c and r */
    double ws = (double)weights * cluster_grad_sync_bytes(m->cl) / (c->deg[DIM_C] * c->deg[DIM_R]); /* fp32 unless the stack says */
    double piece = ws / r;
    int G = m->gpus;
    int gpn = m->cl->gpus_per_node;
    size_t nb = sizeof(double) * (size_t)(pm->nodes_used > 0 ? pm->nodes_used : 1);
    memset(sc->nic_in_f, 0, nb);
    memset(sc->nic_out_f, 0, nb);
    double bytes = 2.0 * (r - 1) * ws * shards;
    if (bytes_out) *bytes_out = bytes;
    /* replicas of shard j: tasks whose channel coordinate is j */
    int *rep = sc->list_i;
    double t = 0;
    if (m->cl->sync == SYNC_PARAMETER_SERVER) {
        /* The shard's parameters are spread over its r replicas' GPUs, each
         * serving 1/r of them: every replica pushes r-1 gradient pieces and
         * pulls r-1 weight pieces; a GPU receives its pieces one by one. */
        memset(sc->recv_f, 0, sizeof(double) * (size_t)G);
        for (int j = 0; j < shards; j++) {
            int nr = shard_replicas(c, j, rep);
            for (int a = 0; a < nr; a++)
                for (int b = 0; b < nr; b++) {
                    if (a == b) continue;
                    int src = rep[a], dst = rep[b];
                    sc->recv_f[dst] += m->lat_s[src * G + dst] + piece * m->inv_bw[src * G + dst];
                    if (src / gpn != dst / gpn) {
                        sc->nic_in_f[dst / gpn] += piece;
                        sc->nic_out_f[src / gpn] += piece;
                    }
                }
        }
        t = 2 * phase_time(pm, sc->recv_f, sc->nic_in_f, sc->nic_out_f);
    } else {
        /* Ring all-reduce of each shard over its replicas, in the order NCCL
         * would ring them (cost_ring_order): 2(r-1) steps, each moving 1/r
         * of the shard to the next GPU; a step lasts as long as its slowest
         * link, or the busiest node's NICs (all shards' rings at once).
         * Latency is paid per all-reduce call, and frameworks fuse
         * gradients into buckets of coll.bucket_mb: this layer pays the
         * share of a call its bytes fill (ws / bucket bytes), so t_s stays
         * a per-layer sum and the search exact. A layer larger than a
         * bucket gets one of its own (as in PyTorch DDP, which never
         * splits a tensor): one call. bucket_mb 0: one call per layer. */
        double step = 0, lat = 0;
        int nodes_most = 1;
        for (int j = 0; j < shards; j++) {
            int nodes, nr = shard_replicas(c, j, rep);
            const link_tab lt = {m->cl, pm->node_bw, m->cl->gpus_per_node};
            ring_order(&lt, rep, nr);
            double s = ring_hops(&lt, rep, nr, piece, sc->nic_in_f, sc->nic_out_f, &nodes);
            if (s > step) step = s;
            double lj = ring_call_latency_s(m->cl, nr, nodes);
            if (lj > lat) lat = lj;
            if (nodes > nodes_most) nodes_most = nodes;
        }
        if (pm->nodes_used > 1) {
            double tn = nic_step(m->cl, sc->nic_in_f, sc->nic_out_f, pm->nodes_used);
            if (tn > step) step = tn;
        }
        double bucket = m->cl->coll.bucket_mb * 1048576.0;
        double calls = bucket > 0 && ws < bucket ? ws / bucket : 1.0;
        if (m->cl->coll.nccl_algorithms) {
            /* NCCL picks the algorithm and protocol for the call's size (the
             * bucket, or the layer where it has one of its own); the layer
             * pays its share of that call */
            t = calls * cost_allreduce_pick(m->cl, r, nodes_most, 2.0 * (r - 1) * step / calls).seconds;
        } else {
            t = 2.0 * (r - 1) * step + calls * lat;
        }
    }
    return t * 1e3;
}

/* t_s with a scratch of its own (cost.h). */
double cost_t_s(const cost_model *m, int li, const config *c, double *bytes)
{
    const cost_model_priv *pm = (const cost_model_priv *)m;
    if (layer_weights(m->net, li) == 0 || c->deg[DIM_N] * c->deg[DIM_H] * c->deg[DIM_W] <= 1) { /* nothing to sync: no scratch */
        if (bytes) *bytes = 0;
        return 0;
    }
    tx_scratch sc;
    scratch_init(&sc, m->gpus, pm->nodes_used);
    double t = t_s_eval(pm, &sc, li, c, bytes);
    scratch_free(&sc);
    return t;
}
