/*
 * cost: the cost model's lifecycle (cost.h). Setting a model up (the link
 * matrix, which form the transfers take on this cluster, every layer's
 * configs and every edge), one entry of its tables, the graph the search
 * works on, and freeing it. The tables are built in cost_tables.c; the
 * terms they hold come from cost_compute.c (t_c), cost_collective.c (t_s)
 * and cost_tx.c (t_x); cost_internal.h lists the parts.
 */
#include "cost_internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether per-pair links (a cluster's overrides) allow the pair form
 * (gather_pairs, gn_visit_pairs), and its node-local links: power-of-two
 * GPUs per node, every override within one node (so links between nodes
 * are the cluster's inter-node ones), and every node in use with node 0's
 * links between its GPUs (a cluster file that repeats one node's topology,
 * like a DGX-1 pod); prices not negative (the bound). Else the per-piece
 * form. */
static void pair_form_setup(cost_model_priv *pm)
{
    const cost_model *m = &pm->pub;
    const cluster *cl = m->cl;
    const int G = m->gpus, gpn = cl->gpus_per_node, n0 = G < gpn ? G : gpn;
    pm->pair_form_ok = 0;
    if (cl->n_overrides == 0 || gpn < 2 || gpn > GN_BOX || (gpn & (gpn - 1))) return;
    for (int i = 0; i < cl->n_overrides; i++) {
        const link_override *o = &cl->overrides[i];
        if (o->a < G && o->b < G && cluster_node_of(cl, o->a) != cluster_node_of(cl, o->b)) return;
    }
    for (int a = 0; a < G; a++)
        for (int b = 0; b < G; b++) {
            if (a == b || a / gpn != b / gpn) continue;
            const int la = a % gpn, lb = b % gpn;
            if (m->lat_s[a * G + b] != m->lat_s[la * G + lb] || m->inv_bw[a * G + b] != m->inv_bw[la * G + lb] ||
                m->lat_s[a * G + b] < 0 || m->inv_bw[a * G + b] < 0)
                return;
        }
    pm->pair_lat = lw_calloc((size_t)gpn * gpn, sizeof(double));
    pm->pair_inv = lw_calloc((size_t)gpn * gpn, sizeof(double));
    pm->pair_lat_max = pm->pair_inv_max = 0;
    for (int a = 0; a < n0; a++)
        for (int b = 0; b < n0; b++) {
            double l = m->lat_s[a * G + b], v = m->inv_bw[a * G + b];
            pm->pair_lat[a * gpn + b] = l;
            pm->pair_inv[a * gpn + b] = v;
            if (a != b && l > pm->pair_lat_max) pm->pair_lat_max = l;
            if (a != b && v > pm->pair_inv_max) pm->pair_inv_max = v;
        }
    pm->pair_form_ok = 1;
}

/* The link matrix over the GPUs in use (lat_s, inv_bw) with cluster_link
 * for every pair, in O(G^2 + overrides) rather than O(G^2 x overrides):
 * the node links, then the overrides, last first, so the first one listed
 * for a pair wins as in cluster_link; and, where the cluster has
 * overrides, the bandwidths cluster_link gives between the GPUs of each
 * node (node_bw: link_tab's table, cost_collective.c). */
static void links_setup(cost_model_priv *pm)
{
    cost_model *m = &pm->pub;
    const cluster *cl = m->cl;
    const int G = m->gpus, gpn = cl->gpus_per_node;
    m->lat_s = lw_malloc(sizeof(double) * (size_t)G * G);
    m->inv_bw = lw_malloc(sizeof(double) * (size_t)G * G);
    pm->node_bw = cl->n_overrides ? lw_calloc((size_t)G * (size_t)gpn, sizeof(double)) : NULL;
    for (int a = 0; a < G; a++)
        for (int b = 0; b < G; b++) {
            if (a == b) {
                m->lat_s[a * G + b] = m->inv_bw[a * G + b] = 0;
                continue;
            }
            const int same_node = cluster_node_of(cl, a) == cluster_node_of(cl, b);
            link_spec l = same_node ? cl->intra : cl->inter;
            m->lat_s[a * G + b] = l.latency_us * 1e-6;
            m->inv_bw[a * G + b] = 1.0 / (l.bandwidth_gbs * 1e9);
            if (pm->node_bw && same_node) pm->node_bw[(size_t)a * gpn + b % gpn] = l.bandwidth_gbs;
        }
    for (int i = cl->n_overrides - 1; i >= 0; i--) {
        const link_override *o = &cl->overrides[i];
        if (o->a == o->b || o->a < 0 || o->b < 0 || o->a >= G || o->b >= G) continue;
        m->lat_s[o->a * G + o->b] = m->lat_s[o->b * G + o->a] = o->link.latency_us * 1e-6;
        m->inv_bw[o->a * G + o->b] = m->inv_bw[o->b * G + o->a] = 1.0 / (o->link.bandwidth_gbs * 1e9);
        if (o->a / gpn == o->b / gpn)
            pm->node_bw[(size_t)o->a * gpn + o->b % gpn] = pm->node_bw[(size_t)o->b * gpn + o->a % gpn] =
                o->link.bandwidth_gbs;
    }
}

/* One edge per (consumer, input slot), in layer order, each described
 * (edge_describe); and every layer's configs. */
static void edges_setup(cost_model_priv *pm)
{
    cost_model *m = &pm->pub;
    const network *net = m->net;
    int L = net->n_layers;
    m->n_configs = lw_calloc((size_t)L, sizeof(int));
    m->configs = lw_calloc((size_t)L, sizeof(config *));
    int ne = 0;
    for (int i = 0; i < L; i++) ne += net->layers[i].n_inputs;
    m->n_edges = ne;
    m->e_from = lw_calloc((size_t)ne + 1, sizeof(int));
    m->e_to = lw_calloc((size_t)ne + 1, sizeof(int));
    m->e_slot = lw_calloc((size_t)ne + 1, sizeof(int));
    pm->desc = lw_calloc((size_t)ne + 1, sizeof(edge_desc));
    pm->first_edge = lw_calloc((size_t)L + 1, sizeof(int));
    int e = 0;
    for (int i = 0; i < L; i++)
        for (int s = (pm->first_edge[i] = e, 0); s < net->layers[i].n_inputs; s++, e++) {
            m->e_from[e] = net->layers[i].inputs[s];
            m->e_to[e] = i;
            m->e_slot[e] = s;
        }
    for (e = 0; e < ne; e++) edge_describe(m, e, &pm->desc[e]);

    for (int i = 0; i < L; i++) m->n_configs[i] = configs_enumerate(&net->layers[i], m->batch, m->gpus, &m->configs[i]);
}

/* A model of everything but the tables: the link matrix, every layer's
 * configs and every edge's description. Cheap: O(gpus^2 + layers x
 * configs). NULL with err set (code 2) for a GPU count or batch out of
 * range, or a precision the cluster's GPU has no figures for. */
cost_model_priv *model_setup(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                             int max_gpus, lw_error *err)
{
    int total = cluster_gpus(cl);
    if (gpus < 1 || gpus > total) {
        lw_fail(err, 2, "%d GPUs requested, but cluster \"%s\" has %d (choose 1 to %d)", gpus, cl->name, total, total);
        return NULL;
    }
    if (batch < 1 || batch > COST_MAX_BATCH) {
        lw_fail(err, 2, "batch %ld is out of range (1 to %ld)", batch, COST_MAX_BATCH);
        return NULL;
    }
    if (gpus > max_gpus) { /* with tables (COST_MAX_GPUS) or without (COST_EVAL_MAX_GPUS): both 1024 */
        lw_fail(err, 2, "%d GPUs: the cost model takes at most %d; choose fewer", gpus, max_gpus);
        return NULL;
    }
    cost_model_priv *pm = lw_calloc(1, sizeof *pm);
    cost_model *m = &pm->pub;
    m->net = net;
    m->cl = cl;
    m->prof = profile_applies(prof, cl) ? prof : NULL; /* its GPU, and its precision where it says */
    pm->prof_given = prof;
    m->gpus = gpus;
    m->batch = batch;
    m->prec = cl->precision;
    m->elem_bytes = precision_elem_bytes(cl->precision);
    if (cluster_gpu_consts(cl, cl->precision, &m->gk) != 0) {
        lw_fail(err, 2, "cluster \"%s\" gives no %s figures for its GPU (%s)", cl->name, precision_name(cl->precision),
                cl->gpu.name);
        free(pm);
        return NULL;
    }
    m->n_layers = net->n_layers;
    m->optimizer = OPT_MOMENTUM;
    m->recompute = cost_recompute;
    m->attention = cost_attention;
    m->workspace_bytes = COST_WORKSPACE_BYTES;
    pm->nodes_used = (gpus + cl->gpus_per_node - 1) / cl->gpus_per_node;
    pm->node_of = lw_malloc(sizeof(int) * (size_t)gpus);
    for (int g = 0; g < gpus; g++) pm->node_of[g] = cluster_node_of(cl, g);
    pm->closed_form_ok = cl->n_overrides == 0 && (cl->gpus_per_node & (cl->gpus_per_node - 1)) == 0;
    links_setup(pm);
    pair_form_setup(pm);
    pm->tx_reference = cost_tx_reference;
    pm->tx_oracle = cost_tx_oracle;
    edges_setup(pm);
    ties_setup(pm);
    return pm;
}

/* A model without tables (cost.h). */
cost_model *cost_model_open(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                            lw_error *err)
{
    double t0 = lw_now();
    cost_model_priv *pm = model_setup(net, cl, prof, gpus, batch, COST_EVAL_MAX_GPUS, err);
    if (!pm) return NULL;
    pm->pub.build_ms = (lw_now() - t0) * 1e3;
    return &pm->pub;
}

/* One entry of the tables, from them or computed now (cost.h). */
double cost_node_ms(const cost_model *m, int li, int k)
{
    if (m->t_c) return m->t_c[li][k] + m->t_s[li][k];
    return cost_t_c(m, li, &m->configs[li][k], NULL) + cost_t_s(m, li, &m->configs[li][k], NULL);
}

double cost_edge_ms(const cost_model *m, int edge, int ci, int cj, double *bytes)
{
    int a = m->e_from[edge], b = m->e_to[edge];
    if (m->t_x && !bytes) return m->t_x[edge][ci * m->n_configs[b] + cj];
    double t = cost_t_x(m, edge, &m->configs[a][ci], &m->configs[b][cj], bytes);
    return m->t_x ? m->t_x[edge][ci * m->n_configs[b] + cj] : t;
}

/* The search's graph over the model's own tables (cost.h). */
cost_graph *cost_model_graph(const cost_model *m)
{
    /* cg_new and cg_add_edge return NULL / -1 when memory runs out: that is
     * the documented out-of-memory abort, not a crash further on */
    cost_graph *g = cg_new(m->n_layers, m->n_configs, m->n_edges + m->n_ties);
    if (!g) lw_out_of_memory(sizeof *g); /* the counts are valid: only memory can fail (util.h) */
    for (int i = 0; i < m->n_layers; i++)
        for (int k = 0; k < m->n_configs[i]; k++) g->node_cost[i][k] = m->t_c[i][k] + m->t_s[i][k];
    /* the model's tables themselves: the graph lives no longer than the
     * model (plan and prefetcher free it first) and the search only reads */
    for (int e = 0; e < m->n_edges; e++)
        if (cg_add_edge_borrowed(g, m->e_from[e], m->e_to[e], m->t_x[e]) < 0) lw_out_of_memory(sizeof(double *));
    /* then the tie terms, edges between layers that are not neighbours:
     * edge ids n_edges + k (the search takes any edge set) */
    for (int k = 0; k < m->n_ties; k++)
        if (cg_add_edge_borrowed(g, m->ties[k].embed, m->ties[k].lm_head, m->ties[k].t_tie) < 0)
            lw_out_of_memory(sizeof(double *));
    return g;
}

/* Frees m and every table it owns; kept counts it shares lose one reference. */
void cost_model_free(cost_model *m)
{
    if (!m) return;
    cost_model_priv *pm = (cost_model_priv *)m;
    for (int i = 0; i < m->n_layers; i++) {
        free(m->configs[i]);
        if (m->t_c) free(m->t_c[i]);
        if (m->t_s) free(m->t_s[i]);
        if (m->t_c_profiled) free(m->t_c_profiled[i]);
    }
    if (m->t_x)
        for (int e = 0; e < m->n_edges; e++)
            if (!pm->tx_shared || !pm->tx_shared[e]) free(m->t_x[e]);
    free(m->n_configs);
    free(m->configs);
    free(m->t_c);
    free(m->t_s);
    free(m->t_c_profiled);
    free(m->e_from);
    free(m->e_to);
    free(m->e_slot);
    ties_free(m);
    free(m->t_x);
    free(m->lat_s);
    free(m->inv_bw);
    free(pm->desc);
    free(pm->node_of);
    free(pm->first_edge);
    free(pm->scale_src);
    free(pm->scale_num);
    free(pm->scale_den);
    free(pm->scale_is_src);
    free(pm->tx_shared);
    free(pm->pair_lat);
    free(pm->pair_inv);
    free(pm->node_bw);
    rp_free(pm->scale_rp);
    rp_free(pm->rp);
    rp_map_free(pm);
    free(pm);
}
