/*
 * pipeline: stages, micro-batches, schedules, and the search over them
 * (pipeline.h says what is modelled; data/doc/search.md how it is searched).
 */
#include "pipeline.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost_sharding.h"
#include "json_util.h"
#include "memsearch.h"

static const char *const schedule_names[] = {"gpipe", "1f1b", "interleaved"};

const char *pipe_schedule_name(pipe_schedule s) { return schedule_names[s]; }

int pipe_schedule_from_name(const char *s)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, schedule_names[i])) return i;
    return -1;
}

void pipe_options_init(pipe_options *o)
{
    memset(o, 0, sizeof *o);
    o->stages = 1;
    o->schedule = PIPE_1F1B;
    o->vp = 1;
    o->memory_limit = HUGE_VAL;
}

int pipe_cuts(const network *net, int *bounds, int *prod)
{
    int L = net->n_layers, K = 0;
    /* last_use[u]: the last layer reading u */
    int *last_use = lw_malloc(sizeof(int) * (size_t)L);
    for (int u = 0; u < L; u++) last_use[u] = u;
    for (int i = 0; i < L; i++)
        for (int j = 0; j < net->layers[i].n_inputs; j++) {
            int u = net->layers[i].inputs[j];
            if (last_use[u] < i) last_use[u] = i;
        }
    bounds[K++] = 0;
    for (int k = 1; k < L; k++) {
        int crossing = 0, who = -1;
        for (int u = 0; u < k && crossing < 2; u++)
            if (last_use[u] >= k) crossing++, who = u;
        if (crossing == 1) {
            prod[K] = who;
            bounds[K++] = k;
        }
    }
    bounds[K] = L;
    free(last_use);
    return K;
}

cost_graph *pipe_stage_graph(const cost_model *cm, int first, int last, int u, double inv_m, int *node_of)
{
    int off = first > 0 ? 1 : 0, n = last - first + off;
    int *nc = lw_malloc(sizeof(int) * (size_t)n);
    if (off) nc[0] = cm->n_configs[u];
    for (int i = first; i < last; i++) nc[i - first + off] = cm->n_configs[i];
    cost_graph *g = cg_new(n, nc, cm->n_edges);
    free(nc);
    if (!g) lw_out_of_memory(sizeof *g);
    if (node_of)
        for (int i = 0; i < cm->n_layers; i++) node_of[i] = i >= first && i < last ? i - first + off : -1;
    for (int i = first; i < last; i++)
        for (int k = 0; k < cm->n_configs[i]; k++)
            g->node_cost[i - first + off][k] = cm->t_c[i][k] + cm->t_s[i][k] * inv_m;
    for (int e = 0; e < cm->n_edges; e++) {
        int to = cm->e_to[e], from = cm->e_from[e];
        if (to < first || to >= last) continue;
        int a = from >= first ? from - first + off : (from == u ? 0 : -1);
        if (a < 0 || cg_add_edge_borrowed(g, a, to - first + off, cm->t_x[e]) < 0) {
            cg_free(g); /* a cut that more than one tensor crosses: pipe_cuts never makes one */
            return NULL;
        }
    }
    /* a tie (cost_tie) within the stage: its edge, once a step as t_s is
     * (the table is read and its gradient moved once, not per micro-batch);
     * a tie across stages is not charged here */
    for (int k = 0; k < cm->n_ties; k++) {
        const cost_tie *t = &cm->ties[k];
        if (t->embed < first || t->lm_head >= last) continue;
        int a = t->embed - first + off, b = t->lm_head - first + off;
        if (inv_m == 1.0) {
            if (cg_add_edge_borrowed(g, a, b, t->t_tie) < 0) lw_out_of_memory(sizeof(double *));
            continue;
        }
        int e = cg_add_edge(g, a, b);
        if (e < 0) lw_out_of_memory(sizeof(double *));
        for (long q = 0, n_q = (long)cm->n_configs[t->embed] * cm->n_configs[t->lm_head]; q < n_q; q++)
            g->edge_cost[e][q] = t->t_tie[q] * inv_m;
    }
    return g;
}

double pipe_p2p_ms(const cost_model *cm, int producer, int a, int b, int v)
{
    if (producer < 0) return 0;
    const layer *l = &cm->net->layers[producer];
    double bytes = (double)shape_elems(l->out) * (double)cm->batch * cm->elem_bytes;
    return 2.0 * v * cluster_transfer_s(cm->cl, a, b, bytes) * 1e3;
}

double pipe_held(pipe_schedule s, int p, int i, int m, int v)
{
    double h;
    if (s == PIPE_GPIPE) h = m;
    else if (s == PIPE_1F1B) h = p - i;
    else h = ((double)(p - i - 1) * 2 + (double)(v - 1) * p + 1) / v;
    return h < m ? h : m;
}

double pipe_step_ms(pipe_schedule s, int m, int v, const double *t, int p)
{
    double sum = 0, mx = 0;
    for (int i = 0; i < p; i++) {
        sum += t[i];
        if (t[i] > mx) mx = t[i];
    }
    if (s == PIPE_INTERLEAVED) return sum / v + (m - 1.0 / v) * mx;
    return sum + (m - 1) * mx;
}

double pipe_bubble(pipe_schedule s, int m, int v, const double *t, int p)
{
    double T = pipe_step_ms(s, m, v, t, p), busy = 0;
    for (int i = 0; i < p; i++) busy += m * t[i];
    double b = T > 0 ? 1 - busy / (p * T) : 0;
    return b > 0 ? b : 0;
}

void pipe_group_loads(const pipe_plan *pp, const double *t, double *T)
{
    for (int g = 0; g < pp->p; g++) T[g] = 0;
    for (int j = 0; j < pp->n_stages; j++) T[pp->stages[j].group] += t[j];
}

/* ---- the search ---- */

/* One micro-batch count's tables: a model per group size, each segment's
 * min-plus table, and f[a][b], the inner optimum of segments [a, b). */
typedef struct size_tabs {
    cost_model *cm;
    double **seg;      /* [K] table rows x cols (shared between identical segments) */
    int *seg_rows, *seg_cols, *seg_owner;
    double *f;         /* [(K + 1) * (K + 1)] */
    double *fcap;      /* [p][(K + 1) * (K + 1)] the inner optimum within the memory limit as stage j holds
                          activations (NaN: not computed yet); NULL without a limit */
    double *ps, *pa;   /* [(L + 1) * g] prefix sums over layers of the most any config keeps on each GPU:
                          weights, gradients and optimizer state (ps), activations (pa); with fcap */
} size_tabs;

typedef struct pctx {
    const network *net;
    const cluster *cl;
    const profile *prof;
    const pipe_options *o;
    int G, m, v, p, K;
    long B;
    int *bounds, *prod;
    int n_sizes, size[16];
    size_tabs tabs[16];
    long searches, dp_runs, capped;
    int uncapped;      /* this count's DP ran without the memory limit (no plan fits it) */
    int unproven;      /* a stage's memory search stopped at PIPE_CAP_SUBPROBLEMS unproven */
    int lazy;          /* stage_f gives f, a lower bound, for a range not yet checked against the limit */
    struct il_cap *ilc; /* interleaved under a memory limit: the groups checked (il_capped); NULL: none */
    int tie_cross;     /* a tie whose embedding and LM head are in different segments, p >= 2: the embedding
                          group's all-reduce with the LM head's (cost_tie_cross_ms) where they are in two stages */
    int se, sh;        /* tie_cross: the segments holding the embedding and the LM head (se < sh) */
    int eo, es;        /* tie_cross: the embedding's group every plan the DP tries has, its first GPU and size
                          index (tie_groups); eo -1: any, nothing charged */
    double *tie_x;     /* [n_sizes * G]: the all-reduce with the embedding's group (eo, es) and the LM head's on
                          size si at offset o ([si * G + o]), ms; NULL: 0 (a lower bound) */
} pctx;

/* Whether segments j and k of model cm are the same problem: the same
 * layers relative to their start, the same tables bit for bit. */
static int seg_same(const pctx *c, const cost_model *cm, int j, int k)
{
    int a = c->bounds[j], b = c->bounds[k], n = c->bounds[j + 1] - a;
    if (n != c->bounds[k + 1] - b || (j == 0) != (k == 0) || (j + 1 == c->K) != (k + 1 == c->K)) return 0;
    if (j > 0 && (a - c->prod[j] != b - c->prod[k] || cm->n_configs[c->prod[j]] != cm->n_configs[c->prod[k]])) return 0;
    if (j + 1 < c->K && c->prod[j + 1] - a != c->prod[k + 1] - b) return 0;
    for (int i = 0; i < n; i++) {
        int x = a + i, y = b + i, C = cm->n_configs[x];
        if (C != cm->n_configs[y] || memcmp(cm->t_c[x], cm->t_c[y], sizeof(double) * (size_t)C) ||
            memcmp(cm->t_s[x], cm->t_s[y], sizeof(double) * (size_t)C))
            return 0;
    }
    int ex = 0, ey = 0;
    for (;;) {
        while (ex < cm->n_edges && (cm->e_to[ex] < a || cm->e_to[ex] >= a + n)) ex++;
        while (ey < cm->n_edges && (cm->e_to[ey] < b || cm->e_to[ey] >= b + n)) ey++;
        if (ex == cm->n_edges || ey == cm->n_edges) return ex == ey;
        if (cm->e_to[ex] - a != cm->e_to[ey] - b || cm->e_from[ex] - a != cm->e_from[ey] - b) return 0;
        size_t cells = (size_t)cm->n_configs[cm->e_from[ex]] * (size_t)cm->n_configs[cm->e_to[ex]];
        if (memcmp(cm->t_x[ex], cm->t_x[ey], sizeof(double) * cells)) return 0;
        ex++, ey++;
    }
}

static double **marginals_new(const cost_graph *g)
{
    double **mg = lw_malloc(sizeof(double *) * (size_t)g->n_nodes);
    for (int v = 0; v < g->n_nodes; v++) mg[v] = lw_malloc(sizeof(double) * (size_t)g->n_configs[v]);
    return mg;
}

static void marginals_free(double **mg, int n)
{
    for (int v = 0; v < n; v++) free(mg[v]);
    free(mg);
}

static search_result *seg_search(pctx *c, const cost_graph *g, lw_error *err)
{
    search_options so;
    search_options_init(&so);
    so.fold = 0; /* keep the segment's two ends: a fold would take the input node */
    so.cancel = c->o->cancel;
    search_info info;
    search_result *r = search_run_with(g, &so, NULL, NULL, &info);
    c->searches++;
    if (!r) lw_fail(err, 1, "pipeline: a segment's search failed: %s", search_status_message(info.status));
    return r;
}

/* The table of segment j on model cm: rows the configs of the tensor coming
 * in (1 for the first segment), columns those of the tensor going out (1
 * for the last); entry = the least cost of the segment's layers and the
 * edges into them given both. */
static int seg_table(pctx *c, const cost_model *cm, int j, double inv_m, double **out, int *rows, int *cols,
                     lw_error *err)
{
    int a = c->bounds[j], b = c->bounds[j + 1], u = j > 0 ? c->prod[j] : -1, w = j + 1 < c->K ? c->prod[j + 1] : -1;
    int *node_of = lw_malloc(sizeof(int) * (size_t)cm->n_layers);
    cost_graph *g = pipe_stage_graph(cm, a, b, u, inv_m, node_of);
    int wl = w >= 0 ? node_of[w] : -1;
    free(node_of);
    *rows = u >= 0 ? g->n_configs[0] : 1;
    *cols = w >= 0 ? g->n_configs[wl] : 1;
    double *t = lw_malloc(sizeof(double) * (size_t)*rows * (size_t)*cols);
    *out = t;
    search_result *r = seg_search(c, g, err);
    int rc = r ? 0 : -1;
    if (r && u >= 0 && w >= 0 && r->n_left == 2 && r->left[0] == 0 && r->left[1] == wl && r->n_edges_left == 1) {
        int ef, et;
        const double *tab;
        search_edge_ends(g, r, r->edges_left[0], &ef, &et, &tab);
        if (ef == 0 && et == wl && tab) { /* the eliminations left u -- w: that edge is the table */
            for (int ci = 0; ci < *rows; ci++)
                for (int co = 0; co < *cols; co++) t[ci * *cols + co] = tab[ci * *cols + co] + g->node_cost[wl][co];
            goto done;
        }
    }
    if (r && (u < 0 || w < 0)) { /* one end: its min-marginals */
        double **mg = marginals_new(g);
        if (search_min_marginals(g, r, mg) != 0) rc = lw_fail(err, 1, "pipeline: min-marginals failed");
        for (int k = 0; k < *rows * *cols && rc == 0; k++) t[k] = w < 0 ? (u < 0 ? r->cost : mg[0][k]) : mg[wl][k];
        marginals_free(mg, g->n_nodes);
        goto done;
    }
    for (int ci = 0; r && rc == 0 && ci < *rows; ci++) { /* both ends, another shape: row by row, u pinned */
        double *keep = lw_malloc(sizeof(double) * (size_t)*rows);
        memcpy(keep, g->node_cost[0], sizeof(double) * (size_t)*rows);
        for (int k = 0; k < *rows; k++) g->node_cost[0][k] = k == ci ? 0 : HUGE_VAL;
        search_result *rr = seg_search(c, g, err);
        double **mg = marginals_new(g);
        if (!rr || search_min_marginals(g, rr, mg) != 0) rc = rr ? lw_fail(err, 1, "pipeline: min-marginals failed") : -1;
        for (int co = 0; co < *cols && rc == 0; co++) t[ci * *cols + co] = mg[wl][co];
        marginals_free(mg, g->n_nodes);
        search_result_free(rr);
        memcpy(g->node_cost[0], keep, sizeof(double) * (size_t)*rows);
        free(keep);
    }
done:
    search_result_free(r);
    cg_free(g);
    return rc;
}

/* f[a][b] for every range of segments by min-plus products of their tables. */
static void range_costs(const pctx *c, size_tabs *s)
{
    int K = c->K;
    s->f = lw_malloc(sizeof(double) * (size_t)(K + 1) * (size_t)(K + 1));
    for (int i = 0; i < (K + 1) * (K + 1); i++) s->f[i] = HUGE_VAL;
    int cmax = 1;
    for (int j = 0; j < K; j++) cmax = s->seg_cols[j] > cmax ? s->seg_cols[j] : cmax;
    double *vec = lw_malloc(sizeof(double) * (size_t)cmax), *nxt = lw_malloc(sizeof(double) * (size_t)cmax);
    for (int a = 0; a < K; a++) {
        int n = s->seg_cols[a];
        for (int co = 0; co < n; co++) {
            double best = HUGE_VAL;
            for (int ci = 0; ci < s->seg_rows[a]; ci++) best = fmin(best, s->seg[a][ci * n + co]);
            vec[co] = best;
        }
        for (int b = a + 1; b <= K; b++) {
            if (b > a + 1) {
                const double *M = s->seg[b - 1];
                int rows = s->seg_rows[b - 1], cols = s->seg_cols[b - 1];
                for (int co = 0; co < cols; co++) nxt[co] = HUGE_VAL;
                for (int ci = 0; ci < rows; ci++) {
                    if (!isfinite(vec[ci])) continue;
                    for (int co = 0; co < cols; co++) nxt[co] = fmin(nxt[co], vec[ci] + M[ci * cols + co]);
                }
                memcpy(vec, nxt, sizeof(double) * (size_t)cols);
                n = cols;
            }
            double best = HUGE_VAL;
            for (int co = 0; co < n; co++) best = fmin(best, vec[co]);
            s->f[a * (K + 1) + b] = best;
        }
    }
    free(vec);
    free(nxt);
}

static void most_bytes(size_tabs *s, const cost_model *cm, int g);

/* Builds the model on g GPUs at the micro-batch and its tables. */
static int size_tables(pctx *c, int si, lw_error *err)
{
    size_tabs *s = &c->tabs[si];
    s->cm = cost_model_build(c->net, c->cl, c->prof, c->size[si], c->B / c->m, err);
    if (!s->cm) return -1;
    s->cm->optimizer = c->o->optimizer;
    int K = c->K;
    s->seg = lw_calloc((size_t)K, sizeof(double *));
    s->seg_rows = lw_calloc((size_t)K, sizeof(int));
    s->seg_cols = lw_calloc((size_t)K, sizeof(int));
    s->seg_owner = lw_calloc((size_t)K, sizeof(int));
    for (int j = 0; j < K; j++) {
        int same = -1;
        for (int k = 0; k < j && same < 0; k++)
            if (s->seg_owner[k] == k && seg_same(c, s->cm, j, k)) same = k;
        s->seg_owner[j] = same < 0 ? j : same;
        if (same >= 0) {
            s->seg[j] = s->seg[same], s->seg_rows[j] = s->seg_rows[same], s->seg_cols[j] = s->seg_cols[same];
            continue;
        }
        if (seg_table(c, s->cm, j, 1.0 / c->m, &s->seg[j], &s->seg_rows[j], &s->seg_cols[j], err) != 0) return -1;
    }
    range_costs(c, s);
    if (isfinite(c->o->memory_limit) && c->p > 1 && c->o->schedule != PIPE_INTERLEAVED) {
        long n = (long)c->p * (K + 1) * (K + 1);
        s->fcap = lw_malloc(sizeof(double) * (size_t)n);
        for (long i = 0; i < n; i++) s->fcap[i] = NAN;
        most_bytes(s, s->cm, c->size[si]);
    }
    return 0;
}

static void size_tabs_free(size_tabs *s, int K, int keep_model)
{
    if (!keep_model) cost_model_free(s->cm);
    for (int j = 0; j < K && s->seg; j++)
        if (s->seg_owner[j] == j) free(s->seg[j]);
    free(s->seg);
    free(s->seg_rows);
    free(s->seg_cols);
    free(s->seg_owner);
    free(s->f);
    free(s->fcap);
    free(s->ps);
    free(s->pa);
    memset(s, 0, sizeof *s);
}

/* ---- the memory limit inside a stage ---- */

/* Whether layer l is a tied table's embedding whose GPUs keep their own
 * copy of the table: its LM head outside every range [first[r], last[r])
 * of the n that those GPUs hold (1F1B and GPipe: the stage's one range;
 * interleaved: the group's v chunks, one table where its embedding's and
 * its LM head's chunks share a group, as pipe_tie_ms charges no all-reduce
 * then). The tie's index, or -1. The search (stage_mem_table,
 * il_mem_table) and the plan (stage_fill, group_memory) both ask this. */
static int keeps_copy(const cost_model *cm, int l, const int *first, const int *last, int n)
{
    for (int k = 0; k < cm->n_ties; k++) {
        if (cm->ties[k].embed != l) continue;
        int h = cm->ties[k].lm_head, in = 0;
        for (int r = 0; r < n && !in; r++) in = h >= first[r] && h < last[r];
        return in ? -1 : k;
    }
    return -1;
}

/* What task q of layer l in config cf keeps of a tied table's copy where
 * its GPUs hold the ranges [first[r], last[r]), r < n: the embedding's
 * copy (cost_tie_copy_bytes) where keeps_copy, else 0. */
static double copy_bytes(const cost_model *cm, int l, const config *cf, int q, const int *first, const int *last,
                         int n)
{
    int k = keeps_copy(cm, l, first, last, n);
    return k >= 0 ? cost_tie_copy_bytes(cm, k, cf, q) : 0;
}

/* What task q of layer l in config cf keeps whatever it holds of
 * activations (weights, gradients, optimizer state and copy_bytes' copy
 * over the ranges), with its activations for one micro-batch in *act: the
 * one count of a task's bytes that the stage tables, the plan's stages and
 * groups and the interleaved search's group tables share. */
static double task_state(const cost_model *cm, int l, const config *cf, int q, const int *first, const int *last,
                         int n, double *act)
{
    memory_parts mp;
    cost_memory_task(cm, l, cf, q, &mp);
    *act = mp.activations;
    return mp.weights + mp.gradients + mp.optimizer + copy_bytes(cm, l, cf, q, first, last, n);
}

/* The memory table of stage graph g (layers [first, last) of cm, node_of
 * their nodes; node 0 the incoming tensor's producer where first > 0, which
 * keeps nothing) on a group of `gpus`, holding `held` micro-batches of
 * activations: per task, weights, gradients, optimizer state and held
 * times its activations, and the embedding's copy of a tied table
 * (copy_bytes), as stage_fill counts them. */
static mem_table *stage_mem_table(const cost_model *cm, const cost_graph *g, const int *node_of, int first, int last,
                                  int gpus, double held)
{
    int **tasks = lw_malloc(sizeof(int *) * (size_t)g->n_nodes);
    for (int v = 0; v < g->n_nodes; v++) {
        tasks[v] = lw_malloc(sizeof(int) * (size_t)g->n_configs[v]);
        for (int k = 0; k < g->n_configs[v]; k++) tasks[v][k] = 1;
    }
    for (int l = first; l < last; l++)
        for (int k = 0; k < cm->n_configs[l]; k++) {
            int n = config_tasks(&cm->configs[l][k]);
            tasks[node_of[l]][k] = n < 1 ? 1 : n > gpus ? gpus : n;
        }
    mem_table *t = mt_new(g->n_nodes, g->n_configs, gpus, tasks);
    for (int v = 0; v < g->n_nodes; v++) free(tasks[v]);
    free(tasks);
    for (int l = first; t && l < last; l++)
        for (int k = 0; k < cm->n_configs[l]; k++) {
            const config *cf = &cm->configs[l][k];
            double *bytes = mt_at(t, node_of[l], k);
            for (int q = 0; q < t->tasks[node_of[l]][k]; q++) {
                double act, state = task_state(cm, l, cf, q, &first, &last, 1, &act);
                bytes[q] = state + held * act;
            }
        }
    return t;
}

/* The fastest configs of stage graph g whose every GPU keeps at most
 * `limit` bytes (workspace included) holding `held` micro-batches: the
 * unconstrained optimum where it fits, else the memory search's optimum
 * (memsearch_run, bounded by PIPE_CAP_SUBPROBLEMS subproblems, a count, so
 * the same range always gets the same answer; where it stops there
 * unproven, the best fitting configs it found, and *unproven is set). Fills
 * config (g->n_nodes, may be NULL) and returns the cost; +inf where nothing
 * fits (or none was found). *searched: the memory search ran. */
static double capped_optimum(const cost_model *cm, const cost_graph *g, const int *node_of, int first, int last,
                             int gpus, double held, double limit, int *out, int *searched, int *unproven)
{
    *searched = 0;
    search_result *r = search_optimum(g);
    if (!r) return HUGE_VAL;
    double cost = r->cost, cap = limit - cost_fixed_bytes(cm);
    mem_table *t = stage_mem_table(cm, g, node_of, first, last, gpus, held);
    double *lim = lw_malloc(sizeof(double) * (size_t)gpus);
    for (int q = 0; q < gpus; q++) lim[q] = cap;
    if (t && !mt_fits(t, r->config, lim)) {
        *searched = 1;
        memsearch_options mo;
        memsearch_options_init(&mo);
        mo.time_limit_s = 0; /* bounded by the count alone: the answer must not depend on the machine's speed */
        mo.max_subproblems = PIPE_CAP_SUBPROBLEMS;
        memsearch_result *mr = memsearch_run(g, t, lim, &mo);
        if (!mr || (mr->status != MEMSEARCH_OPTIMAL && mr->status != MEMSEARCH_INFEASIBLE)) *unproven = 1;
        cost = mr && mr->config ? mr->cost : HUGE_VAL;
        if (out && mr && mr->config) memcpy(out, mr->config, sizeof(int) * (size_t)g->n_nodes);
        memsearch_result_free(mr);
    } else if (out) {
        memcpy(out, r->config, sizeof(int) * (size_t)g->n_nodes);
    }
    free(lim);
    mt_free(t);
    search_result_free(r);
    return cost;
}

/* The prefix sums of s->ps, s->pa for model cm on g GPUs. */
static void most_bytes(size_tabs *s, const cost_model *cm, int g)
{
    int L = cm->n_layers;
    s->ps = lw_calloc((size_t)(L + 1) * (size_t)g, sizeof(double));
    s->pa = lw_calloc((size_t)(L + 1) * (size_t)g, sizeof(double));
    for (int l = 0; l < L; l++) {
        double *ps = s->ps + (size_t)(l + 1) * g, *pa = s->pa + (size_t)(l + 1) * g;
        memcpy(ps, ps - g, sizeof(double) * (size_t)g);
        memcpy(pa, pa - g, sizeof(double) * (size_t)g);
        double *ms = lw_calloc((size_t)g * 2, sizeof(double)), *ma = ms + g;
        for (int k = 0; k < cm->n_configs[l]; k++) {
            int n = config_tasks(&cm->configs[l][k]);
            for (int q = 0; q < n && q < g; q++) {
                memory_parts mp;
                cost_memory_task(cm, l, &cm->configs[l][k], q, &mp);
                ms[q] = fmax(ms[q], mp.weights + mp.gradients + mp.optimizer +
                                        copy_bytes(cm, l, &cm->configs[l][k], q, NULL, NULL, 0)); /* the most: no range */
                ma[q] = fmax(ma[q], mp.activations);
            }
        }
        for (int q = 0; q < g; q++) ps[q] += ms[q], pa[q] += ma[q];
        free(ms);
    }
}

/* Whether every config of layers [first, last) fits `cap` bytes per GPU
 * holding `held` micro-batches, by the most each layer's configs keep on
 * each GPU, summed (an upper bound): then the unconstrained optimum fits,
 * with no search. O(g) from the prefix sums. */
static int range_always_fits(const size_tabs *s, int g, int first, int last, double held, double cap)
{
    for (int q = 0; q < g; q++) {
        double b = s->ps[(size_t)last * g + q] - s->ps[(size_t)first * g + q] +
                   held * (s->pa[(size_t)last * g + q] - s->pa[(size_t)first * g + q]);
        if (b > cap) return 0;
    }
    return 1;
}

/* The inner optimum of segments [a, b) on size si for stage j: f, or where
 * the memory limit is finite and the unconstrained optimum of the range
 * does not fit as stage j holds activations, the capped one (cached). */
static double stage_f(const pctx *c, int j, int si, int a, int b)
{
    const size_tabs *s = &c->tabs[si];
    int K1 = c->K + 1;
    double f = s->f[a * K1 + b];
    if (!s->fcap || !isfinite(f)) return f;
    double *slot = &s->fcap[((long)j * K1 + a) * K1 + b];
    if (!isnan(*slot)) return *slot;
    if (c->lazy) return f; /* a lower bound until the DP chooses the range (capped_dp) */
    const cost_model *cm = s->cm;
    int first = c->bounds[a], last = c->bounds[b], u = a > 0 ? c->prod[a] : -1;
    double held = pipe_held(c->o->schedule, c->p, j, c->m, c->v);
    if (range_always_fits(s, c->size[si], first, last, held, c->o->memory_limit - cost_fixed_bytes(cm)))
        return *slot = f;
    int *node_of = lw_malloc(sizeof(int) * (size_t)cm->n_layers);
    cost_graph *g = pipe_stage_graph(cm, first, last, u, 1.0 / c->m, node_of);
    int searched = 0;
    double capf = g ? capped_optimum(cm, g, node_of, first, last, c->size[si], held, c->o->memory_limit, NULL, &searched,
                                     &((pctx *)c)->unproven)
                    : HUGE_VAL;
    ((pctx *)c)->capped += searched; /* statistics only */
    *slot = searched ? capf : f;     /* the range's own optimum where it fits */
    if (!isfinite(*slot)) {
        /* nothing fits: nor does any range holding this one on the same group, at a stage holding as many
         * micro-batches or more (its memory is at least this range's on every GPU) */
        for (int jj = 0; jj < c->p; jj++) {
            if (pipe_held(c->o->schedule, c->p, jj, c->m, c->v) < held) continue;
            for (int aa = 0; aa <= a; aa++)
                for (int bb = b; bb <= c->K; bb++) s->fcap[((long)jj * K1 + aa) * K1 + bb] = HUGE_VAL;
        }
    }
    cg_free(g);
    free(node_of);
    return *slot;
}

/* A stage's time in the DP: the range's inner optimum (within the memory
 * limit, stage_f) and its send on. */
static double stage_t(const pctx *c, int j, int si, int a, int b, int o)
{
    double f = stage_f(c, j, si, a, b);
    if (b == c->K || !isfinite(f)) return f;
    int g = c->size[si];
    if (o + g >= c->G) return HUGE_VAL; /* no GPUs left for the next stage */
    return f + pipe_p2p_ms(c->tabs[si].cm, c->prod[b], o, o + g, c->v);
}

/* The DP for bound tmax: F[j][a][o] = the least sum of t over stages j..p-1
 * covering segments a..K from GPU o. Fills choice (b, size index) for the
 * argmin; returns F[0][0][0]. With the embedding's group fixed (c->eo >=
 * 0), the stage holding the embedding's segment is that group, and the
 * stage holding the LM head's, where it is another, adds the all-reduce
 * between the two (tie_x): every plan priced as pipe_tie_ms charges it. */
static double dp_run(pctx *c, double tmax, double *F, int *choice)
{
    int K = c->K, G = c->G, P = c->p, eo = c->eo, ee = eo >= 0 ? eo + c->size[c->es] : 0;
    long W = (long)(K + 1) * (G + 1);
    c->dp_runs++;
    for (long i = 0; i < (long)(P + 1) * W; i++) F[i] = HUGE_VAL;
    for (int o = 0; o <= G; o++) F[(long)P * W + (long)K * (G + 1) + o] = 0;
    for (int j = P - 1; j >= 0; j--)
        for (int a = K - 1; a >= j; a--)
            for (int o = 0; o < G; o++) {
                double best = HUGE_VAL;
                int bc = -1;
                /* a stage from the embedding's segment or before starts at its group or before; one after, after it */
                for (int si = 0; si < c->n_sizes && (eo < 0 || (a <= c->se ? o <= eo : o >= ee)); si++) {
                    int g = c->size[si];
                    if (o % g || o + g > G) continue;
                    int blo = j == P - 1 ? K : a + 1, bhi = j == P - 1 ? K : K - (P - 1 - j);
                    if (eo >= 0 && a <= c->se && (o != eo || si != c->es) && bhi > c->se)
                        bhi = c->se; /* not the embedding's group: it ends before the embedding's segment */
                    for (int b = blo; b <= bhi; b++) {
                        double rest = F[(long)(j + 1) * W + (long)b * (G + 1) + o + g];
                        if (!isfinite(rest)) continue;
                        double t = stage_t(c, j, si, a, b, o);
                        if (t > tmax) continue;
                        /* the embedding group's all-reduce, once a step: in the sum (T's /v undone), not the bound */
                        double once = c->tie_x && a > c->se && a <= c->sh && b > c->sh ? c->tie_x[si * G + o] * c->v : 0;
                        if (t + once + rest < best) best = t + once + rest, bc = b * 16 + si;
                    }
                }
                F[(long)j * W + (long)a * (G + 1) + o] = best;
                choice[(long)j * W + (long)a * (G + 1) + o] = bc;
            }
    return F[0];
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Every distinct stage time the DP may meet, ascending; returns the count. */
static long candidates(const pctx *c, double **out)
{
    long n = 0, cap = 1024;
    double *v = lw_malloc(sizeof(double) * (size_t)cap);
    for (int j = 0; j < (c->tabs[0].fcap ? c->p : 1); j++) /* without a limit, t is the same for every j */
        for (int si = 0; si < c->n_sizes; si++)
            for (int a = 0; a < c->K; a++)
                for (int b = a + 1; b <= c->K; b++)
                    for (int o = 0; o < c->G; o += c->size[si]) {
                        double t = stage_t(c, j, si, a, b, o);
                        if (!isfinite(t)) continue;
                        if (n == cap) v = lw_realloc(v, sizeof(double) * (size_t)(cap *= 2));
                        v[n++] = t;
                        if (b == c->K) break; /* no send: the same at every offset */
                    }
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    long u = 0;
    for (long i = 0; i < n; i++)
        if (!u || v[i] != v[u - 1]) v[u++] = v[i];
    *out = v;
    return u;
}

typedef struct dp_best {
    double T;
    int *choice;       /* the DP's choices at the best bound */
    int improved;      /* this micro-batch count gave it */
} dp_best;

/* The embedding's groups a plan can give (tie_cross): a first GPU reached
 * by at most min(se, p - 1) aligned groups before it (each stage or group
 * before it holds a segment before the embedding's), a size aligned there;
 * (offset, size index) pairs in *out (the caller frees), by offset. Returns
 * their count. */
static int tie_groups(const pctx *c, int **out)
{
    int G = c->G, before = c->se < c->p - 1 ? c->se : c->p - 1, n = 0;
    char *reach = lw_calloc((size_t)G * 3, 1), *cur = reach + G, *nxt = cur + G;
    reach[0] = cur[0] = 1;
    for (int k = 0; k < before; k++) {
        memset(nxt, 0, (size_t)G);
        for (int o = 0; o < G; o++)
            for (int si = 0; cur[o] && si < c->n_sizes; si++)
                if (o % c->size[si] == 0 && o + c->size[si] < G) nxt[o + c->size[si]] = 1;
        for (int o = 0; o < G; o++) reach[o] |= cur[o] = nxt[o];
    }
    int *eg = lw_malloc(sizeof(int) * 2 * (size_t)G * (size_t)c->n_sizes);
    for (int o = 0; o < G; o++)
        for (int si = 0; reach[o] && si < c->n_sizes; si++)
            if (o % c->size[si] == 0 && o + c->size[si] <= G) eg[2 * n] = o, eg[2 * n + 1] = si, n++;
    free(reach);
    *out = eg;
    return n;
}

/* c->tie_x for the embedding's group (c->eo, c->es): the all-reduce of the
 * ties in segments se and sh with an LM head's group after it. */
static void tie_fill(pctx *c)
{
    const cost_model *cm = c->tabs[0].cm;
    int G = c->G, ee = c->eo + c->size[c->es];
    for (int si = 0; si < c->n_sizes; si++)
        for (int o = 0; o < G; o++) {
            double x = 0; /* only where the LM head's group can be: aligned, within the GPUs, beside the embedding's */
            int ok = o % c->size[si] == 0 && o + c->size[si] <= G && (o >= ee || o + c->size[si] <= c->eo);
            for (int k = 0; k < cm->n_ties && ok; k++)
                if (cm->ties[k].embed >= c->bounds[c->se] && cm->ties[k].embed < c->bounds[c->se + 1] &&
                    cm->ties[k].lm_head >= c->bounds[c->sh] && cm->ties[k].lm_head < c->bounds[c->sh + 1])
                    x += cost_tie_cross_ms(cm, k, c->eo, c->size[c->es], o, c->size[si], NULL);
            c->tie_x[si * G + o] = x;
        }
}

/* Alpa's enumeration for one embedding group (or none): the least T =
 * F(tmax) (/ v) + (m - 1 (/ v)) tmax over the candidate bounds cand[n],
 * from the smallest feasible one up, stopping where the bound's term and
 * `lower`, the unbounded DP's sum (/ v), reach the best. */
static void dp_bounds(pctx *c, dp_best *best, double *F, int *ch, const double *cand, long n, double lower)
{
    long W = (long)(c->K + 1) * (c->G + 1);
    double vf = c->o->schedule == PIPE_INTERLEAVED ? c->v : 1, slope = c->m - 1.0 / vf;
    if (!n || !isfinite(lower) || slope * cand[0] + lower >= best->T) return;
    long lo = 0, hi = n; /* the smallest feasible bound: feasibility grows with it */
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (isfinite(dp_run(c, cand[mid], F, ch))) hi = mid;
        else lo = mid + 1;
    }
    for (long i = lo; i < n; i++) {
        if (slope * cand[i] + lower >= best->T) break;
        double s = dp_run(c, cand[i], F, ch);
        if (!isfinite(s)) continue;
        double T = s / vf + slope * cand[i];
        if (T < best->T) {
            best->T = T;
            best->improved = 1;
            memcpy(best->choice, ch, sizeof(int) * (size_t)(c->p + 1) * (size_t)W);
        }
    }
}

/* dp_bounds, where a tie crosses the stages once per group the embedding
 * can have (its all-reduce depends on that group and the LM head's, which
 * the DP then prices): in the order of their unbounded sums without the
 * all-reduce (a lower bound), stopping where that bound reaches the best. */
static void dp_search(pctx *c, dp_best *best)
{
    long W = (long)(c->K + 1) * (c->G + 1);
    double *F = lw_malloc(sizeof(double) * (size_t)(c->p + 1) * (size_t)W), *cand;
    int *ch = lw_malloc(sizeof(int) * (size_t)(c->p + 1) * (size_t)W);
    long n = candidates(c, &cand);
    double vf = c->o->schedule == PIPE_INTERLEAVED ? c->v : 1, slope = c->m - 1.0 / vf;
    c->eo = c->es = -1;
    c->tie_x = NULL;
    if (!c->tie_cross) {
        dp_bounds(c, best, F, ch, cand, n, n ? dp_run(c, HUGE_VAL, F, ch) / vf : HUGE_VAL);
    } else if (n) {
        int *eg, ne = tie_groups(c, &eg), *order = lw_malloc(sizeof(int) * (size_t)ne);
        double *lower = lw_malloc(sizeof(double) * (size_t)ne);
        for (int k = 0; k < ne; k++) { /* each group's bound, then insertion into the order */
            c->eo = eg[2 * k], c->es = eg[2 * k + 1];
            lower[k] = dp_run(c, HUGE_VAL, F, ch) / vf;
            int at = k;
            for (; at > 0 && lower[order[at - 1]] > lower[k]; at--) order[at] = order[at - 1];
            order[at] = k;
        }
        c->tie_x = lw_malloc(sizeof(double) * (size_t)c->n_sizes * (size_t)c->G);
        for (int i = 0; i < ne; i++) {
            int k = order[i];
            if (!isfinite(lower[k]) || slope * cand[0] + lower[k] >= best->T) break;
            c->eo = eg[2 * k], c->es = eg[2 * k + 1];
            tie_fill(c);
            dp_bounds(c, best, F, ch, cand, n, dp_run(c, HUGE_VAL, F, ch) / vf);
        }
        free(c->tie_x);
        free(eg);
        free(order);
        free(lower);
    }
    c->eo = c->es = -1;
    c->tie_x = NULL;
    free(cand);
    free(F);
    free(ch);
}

/* ---- a plan's stages: configs, times, memory ---- */

static int stage_fill(pipe_plan *pp, int i, const int *pins, lw_error *err);

/* Fills stage i of pp from its range, group and model: its configs are the
 * optimum of its sub-graph, or, where pins is not NULL, pins' configs of its
 * layers (the input's layout still the best for them). */
static int stage_fill(pipe_plan *pp, int i, const int *pins, lw_error *err)
{
    pipe_stage *st = &pp->stages[i];
    const cost_model *cm = st->cm;
    int L = cm->n_layers, u = i > 0 ? pp->stages[i - 1].producer : -1;
    int *node_of = lw_malloc(sizeof(int) * (size_t)L);
    cost_graph *g = pipe_stage_graph(cm, st->first, st->last, u, 1.0 / pp->m, node_of);
    for (int l = st->first; l < st->last && pins; l++)
        for (int k = 0; k < g->n_configs[node_of[l]]; k++)
            if (k != pins[l]) g->node_cost[node_of[l]][k] = HUGE_VAL;
    int *cfg = lw_malloc(sizeof(int) * (size_t)g->n_nodes), searched = 0;
    double cost = HUGE_VAL;
    /* the search's stage: within the limit (stage_f); an interleaved group's chunks come capped together, pinned */
    if (!pins && isfinite(pp->limit_bytes) && pp->p > 1 && pp->schedule != PIPE_INTERLEAVED) {
        double held = pipe_held(pp->schedule, pp->p, i, pp->m, pp->v);
        cost = capped_optimum(cm, g, node_of, st->first, st->last, st->gpus, held, pp->limit_bytes, cfg, &searched,
                              &pp->unproven);
        if (!isfinite(cost)) { /* nothing fits: the fastest, reported as not fitting */
            searched = 0;
            cost = HUGE_VAL;
        }
    }
    if (!isfinite(cost)) {
        search_result *r = search_optimum(g);
        if (r) memcpy(cfg, r->config, sizeof(int) * (size_t)g->n_nodes), cost = r->cost;
        search_result_free(r);
    }
    if (!isfinite(cost)) {
        free(cfg);
        cg_free(g);
        free(node_of);
        return lw_fail(err, 1, "pipeline: stage %d has no finite strategy", i + 1);
    }
    st->config = lw_malloc(sizeof(int) * (size_t)L);
    st->input_config = st->first > 0 ? cfg[0] : -1; /* node 0: the incoming tensor (pipe_stage_graph) */
    st->f_ms = cost;
    st->compute_ms = st->sync_ms = st->transfer_ms = 0;
    for (int l = 0; l < L; l++) {
        st->config[l] = node_of[l] >= 0 ? cfg[node_of[l]] : -1;
        if (st->config[l] < 0) continue;
        st->compute_ms += cm->t_c[l][st->config[l]];
        st->sync_ms += cm->t_s[l][st->config[l]];
    }
    for (int e = 0; e < g->n_edges; e++) {
        int a = g->edge_from[e], b = g->edge_to[e];
        st->transfer_ms += g->edge_cost[e][cfg[a] * g->n_configs[b] + cfg[b]];
    }
    free(cfg);
    cg_free(g);
    free(node_of);
    if (st->first == 0 && st->last == L && pp->m == 1) { /* one stage: today's Eq. 1 total, summed as it sums it */
        strategy_eval ev;
        strategy_evaluate(cm, st->config, &ev);
        st->f_ms = ev.total_ms;
        strategy_eval_free(&ev);
    }
    /* the send on: to the next stage's group (interleaved: the next chunk's, the first group's after the last) */
    int to = pp->schedule == PIPE_INTERLEAVED && i + 1 < pp->n_stages ? pp->stages[i + 1].gpu0 : st->gpu0 + st->gpus;
    st->p2p_ms = i + 1 < pp->n_stages ? pipe_p2p_ms(cm, st->producer, st->gpu0, to, 1) : 0;
    st->t_ms = st->f_ms + st->p2p_ms;
    st->held = pipe_held(pp->schedule, pp->p, i, pp->m, pp->v);
    st->memory_bytes = 0;
    for (int k = 0; k < st->gpus; k++) {
        double bytes = 0;
        for (int l = st->first; l < st->last; l++) {
            const config *c = &cm->configs[l][st->config[l]];
            if (k >= config_tasks(c)) continue;
            double act, state = task_state(cm, l, c, k, &st->first, &st->last, 1, &act);
            bytes += state + st->held * act; /* interleaved: group_memory's instead */
        }
        if (bytes > 0) bytes += cost_fixed_bytes(cm);
        if (bytes > st->memory_bytes) st->memory_bytes = bytes;
    }
    return 0;
}

/* Interleaved: group g's memory, each GPU's weights, gradients and
 * optimizer state of its chunks and, at the peak of Megatron's order of
 * the group's forwards (+1 micro-batch of the chunk's activations) and
 * backwards (-1), the chunks' activations held then, plus the embedding's
 * copy of a tied table whose LM head is on another group (copy_bytes over
 * the group's chunks); each chunk's held is the most micro-batches of it
 * held at once. */
static void group_memory(pipe_plan *pp, int g)
{
    int v = pp->v, p = pp->p, n = 2 * pp->m * v, gpus = pp->stages[g].gpus;
    double *fixed = lw_calloc((size_t)gpus * (size_t)(v + 1), sizeof(double)), *act = fixed + gpus;
    int *first = lw_malloc(sizeof(int) * 2 * (size_t)v), *last = first + v; /* the group's chunks, for copy_bytes */
    for (int c = 0; c < v; c++) first[c] = pp->stages[c * p + g].first, last[c] = pp->stages[c * p + g].last;
    for (int c = 0; c < v; c++) {
        const pipe_stage *st = &pp->stages[c * p + g];
        for (int k = 0; k < gpus; k++)
            for (int l = st->first; l < st->last; l++) {
                const config *cf = &st->cm->configs[l][st->config[l]];
                if (k >= config_tasks(cf)) continue;
                double a1;
                fixed[k] += task_state(st->cm, l, cf, k, first, last, v, &a1);
                act[c * gpus + k] += a1;
            }
    }
    int *vs = lw_malloc(sizeof(int) * (size_t)n * 3), *mb = vs + n, *fwd = vs + 2 * n;
    double *held = lw_calloc((size_t)v * 2, sizeof(double)), *most = held + v, peak = 0;
    pipe_device_order(pp->schedule, p, v, g, pp->m, vs, mb, fwd);
    for (int k = 0; k < gpus; k++) {
        for (int c = 0; c < v; c++) held[c] = 0;
        double top = 0;
        for (int e = 0; e < n; e++) {
            int c = vs[e] / p;
            held[c] += fwd[e] ? 1 : -1;
            if (held[c] > most[c]) most[c] = held[c];
            double bytes = fixed[k];
            for (int q = 0; q < v; q++) bytes += held[q] * act[q * gpus + k];
            if (bytes > top) top = bytes;
        }
        if (top > 0) top += cost_fixed_bytes(pp->stages[g].cm);
        if (top > peak) peak = top;
    }
    for (int c = 0; c < v; c++) pp->stages[c * p + g].held = most[c], pp->stages[c * p + g].memory_bytes = peak;
    free(vs);
    free(held);
    free(fixed);
    free(first);
}

/* The embedding group's all-reduce of pp (pipeline.h). */
double pipe_tie_ms(const pipe_plan *pp, double *bytes)
{
    double ms = 0, b = 0;
    if (bytes) *bytes = 0;
    if (pp->n_stages < 2) return 0;
    const cost_model *cm = pp->stages[0].cm;
    for (int k = 0; k < cm->n_ties; k++) {
        int se = -1, sh = -1;
        for (int i = 0; i < pp->n_stages; i++) {
            const pipe_stage *st = &pp->stages[i];
            if (cm->ties[k].embed >= st->first && cm->ties[k].embed < st->last) se = i;
            if (cm->ties[k].lm_head >= st->first && cm->ties[k].lm_head < st->last) sh = i;
        }
        if (se < 0 || sh < 0 || se == sh) continue;
        const pipe_stage *e = &pp->stages[se], *h = &pp->stages[sh];
        if (e->gpu0 == h->gpu0 && e->gpus == h->gpus) continue; /* two chunks of one group: one table, on the same GPUs */
        double bk = 0;
        ms += cost_tie_cross_ms(cm, k, e->gpu0, e->gpus, h->gpu0, h->gpus, &bk);
        b += bk;
    }
    if (bytes) *bytes = b;
    return ms;
}

/* The step, bubble and peak memory of pp from its filled stages. */
static void plan_totals(pipe_plan *pp, double limit)
{
    double *t = lw_malloc(sizeof(double) * (size_t)(pp->n_stages + pp->p)), *T = t + pp->n_stages;
    for (int g = 0; g < pp->p && pp->schedule == PIPE_INTERLEAVED; g++) group_memory(pp, g);
    pp->peak_memory_bytes = 0;
    for (int i = 0; i < pp->n_stages; i++) {
        t[i] = pp->stages[i].t_ms;
        if (pp->stages[i].memory_bytes > pp->peak_memory_bytes) pp->peak_memory_bytes = pp->stages[i].memory_bytes;
    }
    pipe_group_loads(pp, t, T);
    pp->tie_ms = pipe_tie_ms(pp, NULL);
    pp->step_ms = pipe_step_ms(pp->schedule, pp->m, pp->v, T, pp->p) + pp->tie_ms;
    pp->bubble_fraction = pipe_bubble(pp->schedule, pp->m, pp->v, T, pp->p);
    pp->fits = pp->peak_memory_bytes <= limit;
    free(t);
}

static pipe_plan *plan_new(const pctx *c)
{
    pipe_plan *pp = lw_calloc(1, sizeof *pp);
    pp->p = c->p, pp->m = c->m, pp->v = c->v, pp->schedule = c->o->schedule, pp->n_stages = c->p * c->v;
    pp->gpus = c->G, pp->batch = c->B, pp->microbatch = c->B / c->m, pp->cuts = c->K;
    pp->stages = lw_calloc((size_t)pp->n_stages, sizeof(pipe_stage));
    for (int j = 0; j < pp->n_stages; j++) pp->stages[j].group = j % c->p;
    pp->limit_bytes = HUGE_VAL;
    return pp;
}

void pipe_plan_free(pipe_plan *pp)
{
    if (!pp) return;
    for (int i = 0; i < pp->n_stages; i++) free(pp->stages[i].config);
    free(pp->stages);
    for (int k = 0; k < pp->n_models; k++) cost_model_free(pp->models[k]);
    free(pp->models);
    free(pp);
}

/* Checks what both pipe_search and pipe_megatron take, and sets up c. */
static int setup(pctx *c, const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                 const pipe_options *o, lw_error *err)
{
    memset(c, 0, sizeof *c);
    c->net = net, c->cl = cl, c->prof = prof, c->o = o, c->G = gpus, c->B = batch, c->p = o->stages;
    c->v = o->schedule == PIPE_INTERLEAVED ? o->vp : 1;
    if (o->stages < 1 || o->stages > PIPE_MAX_STAGES)
        return lw_fail(err, 2, "--pp %d: the stages must be from 1 to %d", o->stages, PIPE_MAX_STAGES);
    if (o->stages > gpus)
        return lw_fail(err, 2, "--pp %d: more stages than GPUs (%d); each stage needs a GPU of its own", o->stages, gpus);
    if (o->schedule == PIPE_INTERLEAVED && o->vp < 2)
        return lw_fail(err, 2, "--schedule interleaved needs --vp V of 2 or more (virtual stages per group)");
    if (o->schedule != PIPE_INTERLEAVED && o->vp != 1)
        return lw_fail(err, 2, "--vp %d: virtual stages need --schedule interleaved", o->vp);
    if (o->microbatches && (o->microbatches > batch || batch % o->microbatches))
        return lw_fail(err, 2, "--microbatches %d does not divide the batch of %ld", o->microbatches, batch);
    if (o->microbatches && o->schedule == PIPE_INTERLEAVED && o->microbatches % o->stages)
        return lw_fail(err, 2, "--microbatches %d: the interleaved schedule needs a multiple of the %d stages (as Megatron-LM)",
                       o->microbatches, o->stages);
    c->bounds = lw_malloc(sizeof(int) * (size_t)(net->n_layers + 1));
    c->prod = lw_malloc(sizeof(int) * (size_t)(net->n_layers + 1));
    c->K = pipe_cuts(net, c->bounds, c->prod);
    if (c->p > c->K)
        return lw_fail(err, 2, "--pp %d: %s can be cut into at most %d stages (it has %d places where a single tensor crosses)",
                       c->p, net->name, c->K, c->K - 1);
    if (c->p * c->v > c->K)
        return lw_fail(err, 2, "--pp %d --vp %d: %s can be cut into at most %d chunks (it has %d places where a single "
                               "tensor crosses), fewer than the %d the interleaved schedule places",
                       c->p, c->v, net->name, c->K, c->K - 1, c->p * c->v);
    for (int g = 1; g <= gpus && c->n_sizes < 16; g *= 2) c->size[c->n_sizes++] = g;
    c->eo = c->es = -1;
    for (int l = 0; l < net->n_layers && c->p > 1; l++) { /* the DP carries one tie's segments (GPT's one table) */
        const layer *h = &net->layers[l];
        if (h->type != LT_LM_HEAD || h->tied < 0) continue;
        for (c->se = 0; c->bounds[c->se + 1] <= h->tied; c->se++) {}
        for (c->sh = c->se; c->bounds[c->sh + 1] <= l; c->sh++) {}
        c->tie_cross = c->se < c->sh;
    }
    return 0;
}

/* The micro-batch counts to try: the one asked, else the powers of two
 * from p to 8p that divide the batch (for interleaved: multiples of p). */
static int micro_counts(const pctx *c, int *ms)
{
    int n = 0;
    if (c->o->microbatches) {
        ms[n++] = c->o->microbatches;
        return n;
    }
    if (c->p == 1) {
        ms[n++] = 1;
        return n;
    }
    int lo = 1;
    while (lo < c->p) lo *= 2;
    for (int m = lo; m <= 8 * c->p && m <= c->B && n < 8; m *= 2)
        if (c->B % m == 0 && (c->o->schedule != PIPE_INTERLEAVED || m % c->p == 0)) ms[n++] = m;
    return n;
}

/* The plan of DP choices ch at micro-batch count c->m; keeps the models. */
static pipe_plan *plan_from_choices(pctx *c, const int *ch, lw_error *err)
{
    pipe_plan *pp = plan_new(c);
    long W = (long)(c->K + 1) * (c->G + 1);
    pp->models = lw_calloc((size_t)c->n_sizes, sizeof(cost_model *));
    int a = 0, o = 0;
    for (int j = 0; j < c->p; j++) {
        int bc = ch[(long)j * W + (long)a * (c->G + 1) + o], b = bc / 16, si = bc % 16;
        pipe_stage *st = &pp->stages[j];
        st->first = c->bounds[a], st->last = c->bounds[b], st->gpu0 = o, st->gpus = c->size[si];
        st->producer = b < c->K ? c->prod[b] : -1;
        st->cm = c->tabs[si].cm;
        a = b, o += c->size[si];
    }
    pp->limit_bytes = c->uncapped ? HUGE_VAL : c->o->memory_limit;
    for (int si = 0; si < c->n_sizes; si++) { /* the plan keeps the models its stages use */
        int used = 0;
        for (int j = 0; j < c->p; j++) used |= pp->stages[j].cm == c->tabs[si].cm;
        if (used) pp->models[pp->n_models++] = c->tabs[si].cm, c->tabs[si].cm = NULL;
    }
    for (int j = 0; j < c->p; j++)
        if (stage_fill(pp, j, NULL, err) != 0) {
            pipe_plan_free(pp);
            return NULL;
        }
    plan_totals(pp, c->o->memory_limit);
    return pp;
}

/* ---- interleaved: p v chunks, chunk j on group j mod p ----
 *
 * Chunk r p + g is group g's chunk in pass r. With the passes' starts X_0 =
 * 0 < X_1 < .. < X_v = K (in segments) fixed, the DP walks the groups
 * g = 0 .. p-1 with state (g, the group's offset o, the starts a_r of its v
 * chunks, one per pass): a group chooses its size and its chunks' ends b_r
 * (the next group's starts; the last group's are X_{r+1}), its load the sum
 * of its chunks' times. The step sum_g T_g / v + (m - 1/v) max_g T_g is not
 * a sum over the groups, so each state keeps the Pareto front of (sum, max)
 * over the groups after it: exact, every X tried. */

typedef struct il_entry {
    double sum, mx;    /* the loads of groups g .. p-1: their sum and their max */
    int si, next;      /* the group's size index; the successor's entry (-1: none, the last group) */
    long code;         /* the successor's state: its chunks' starts (the group's ends) */
} il_entry;

typedef struct il_ctx {
    pctx *c;
    int *X, *len;      /* [v + 1] the passes' starts; [v] their lengths in segments */
    long n_codes;      /* prod_r len[r]: the states of one (g, o) */
    int *memo_at, *memo_n; /* [p (G + 1) n_codes]: the state's entries in pool (memo_at -1: not solved) */
    il_entry *pool;
    long n_pool, cap_pool;
    double best_T;     /* the best step found so far: a state's entry whose own (sum, max) already give a step
                          as long is dropped (the groups before it only add to both) */
} il_ctx;

/* The step a front entry's (sum, max) gives alone: a lower bound on any plan holding it. */
static double il_bound(const pctx *c, double sum, double mx)
{
    return sum / c->v + (c->m - 1.0 / c->v) * mx;
}

static long il_encode(const il_ctx *ic, const int *a)
{
    long code = 0;
    for (int r = ic->c->v - 1; r >= 0; r--) code = code * ic->len[r] + (a[r] - ic->X[r]);
    return code;
}

static void il_decode(const il_ctx *ic, long code, int *a)
{
    for (int r = 0; r < ic->c->v; r++) a[r] = ic->X[r] + (int)(code % ic->len[r]), code /= ic->len[r];
}

static int cmp_entry(const void *x, const void *y)
{
    const il_entry *a = x, *b = y;
    return a->sum < b->sum ? -1 : a->sum > b->sum ? 1 : a->mx < b->mx ? -1 : a->mx > b->mx;
}

/* ---- interleaved under the memory limit: groups re-priced jointly ----
 *
 * A group's memory is the peak over Megatron's order of its v chunks
 * (group_memory), so its chunks' configs are capped together: the union of
 * their stage graphs (disconnected sub-graphs) searched by memsearch_run,
 * with one memory row per GPU and per distinct (not dominated) vector of
 * the micro-batches each chunk holds at some point of the order: exact.
 * The search prices an unchecked group at its chunks' unconstrained
 * optima (a lower bound); il_capped checks the chosen plan's groups and
 * searches again, as capped_dp does. */

#define IL_CAP_SLOTS 4096 /* > PIPE_IL_CAP_ROUNDS x PIPE_MAX_STAGES: the groups one count can check */
_Static_assert(IL_CAP_SLOTS > PIPE_IL_CAP_ROUNDS * PIPE_MAX_STAGES, "the checked groups' table has room");

typedef struct il_cap {
    int kl, n;         /* key length 2 + 2 v: (g, si, a[v], b[v]); entries */
    int *keys;         /* [n kl] */
    double *cost;      /* [n] the group's chunks' capped total; NaN: their fastest configs fit */
    int **cfg;         /* [n] the capped configs per layer (-1 outside the group); NULL where none */
    int slot[IL_CAP_SLOTS]; /* entry + 1, open addressing; 0 empty */
    double *lo;        /* [n_sizes][2 (L + 1)] prefix sums over layers of the least weights, gradients and
                          optimizer state (first L + 1) and the least activations any config keeps on GPU 0 */
    double **held;     /* [p] group g's vectors of micro-batches held per chunk (il_held_vectors) */
    int *n_held;       /* [p] their count */
} il_cap;

static unsigned il_hash(const int *key, int kl)
{
    unsigned h = 2166136261u;
    for (int i = 0; i < kl; i++) h = (h ^ (unsigned)key[i]) * 16777619u;
    return h;
}

/* The entry of group g on size si with chunks [a_r, b_r), -1 if unchecked. */
static int il_cap_find(const il_cap *ic, const int *key)
{
    if (!ic || !ic->n) return -1;
    for (unsigned h = il_hash(key, ic->kl) % IL_CAP_SLOTS;; h = (h + 1) % IL_CAP_SLOTS) {
        int e = ic->slot[h] - 1;
        if (e < 0) return -1;
        if (!memcmp(ic->keys + (long)e * ic->kl, key, sizeof(int) * (size_t)ic->kl)) return e;
    }
}

static void il_cap_free(il_cap *ic, int p)
{
    if (!ic) return;
    for (int g = 0; g < p && ic->held; g++) free(ic->held[g]);
    free(ic->held);
    free(ic->n_held);
    free(ic->lo);
    for (int e = 0; e < ic->n; e++) free(ic->cfg[e]);
    free(ic->cfg);
    free(ic->cost);
    free(ic->keys);
    free(ic);
}

static void il_key(const pctx *c, int g, int si, const int *a, const int *b, int *key)
{
    key[0] = g, key[1] = si;
    for (int r = 0; r < c->v; r++) key[2 + r] = a[r], key[2 + c->v + r] = b[r];
}

/* The distinct vectors of micro-batches held per chunk over group g's
 * order, none below another in every chunk: [E][v] in *out; returns E. */
static int il_held_vectors(const pctx *c, int g, double **out)
{
    int v = c->v, p = c->p, n = 2 * c->m * v, E = 0;
    int *vs = lw_malloc(sizeof(int) * (size_t)n * 3), *mb = vs + n, *fwd = vs + 2 * n;
    double *h = lw_calloc((size_t)(n + 1) * (size_t)v, sizeof(double)), *cur = lw_calloc((size_t)v, sizeof(double));
    pipe_device_order(c->o->schedule, p, v, g, c->m, vs, mb, fwd);
    for (int e = 0; e < n; e++) {
        cur[vs[e] / p] += fwd[e] ? 1 : -1;
        int dom = 0; /* below (or equal to) one kept: dropped; those below it: dropped */
        for (int k = 0; k < E && !dom; k++) {
            dom = 1;
            for (int r = 0; r < v && dom; r++) dom = cur[r] <= h[k * v + r];
        }
        if (dom) continue;
        int kept = 0;
        for (int k = 0; k < E; k++) {
            int below = 1;
            for (int r = 0; r < v && below; r++) below = h[k * v + r] <= cur[r];
            if (!below) memmove(h + kept++ * v, h + k * v, sizeof(double) * (size_t)v);
        }
        memcpy(h + kept * v, cur, sizeof(double) * (size_t)v);
        E = kept + 1;
    }
    free(vs);
    free(cur);
    *out = h;
    return E;
}

/* The union of the v chunks' stage graphs [a_r, b_r) of model cm, node_of
 * its layers' nodes; the sub-graphs in sub (borrowed edge tables: keep
 * them while it lives), their first nodes in at. */
static cost_graph *il_union(const pctx *c, const cost_model *cm, const int *a, const int *b, cost_graph **sub,
                            int *at, int *node_of)
{
    int v = c->v, N = 0, E = 0, *no = lw_malloc(sizeof(int) * (size_t)cm->n_layers);
    for (int l = 0; l < cm->n_layers; l++) node_of[l] = -1;
    for (int r = 0; r < v; r++) {
        sub[r] = pipe_stage_graph(cm, c->bounds[a[r]], c->bounds[b[r]], a[r] > 0 ? c->prod[a[r]] : -1, 1.0 / c->m, no);
        if (!sub[r]) lw_out_of_memory(sizeof(cost_graph));
        at[r] = N;
        for (int l = c->bounds[a[r]]; l < c->bounds[b[r]]; l++) node_of[l] = N + no[l];
        N += sub[r]->n_nodes, E += sub[r]->n_edges;
    }
    free(no);
    int *nc = lw_malloc(sizeof(int) * (size_t)N);
    for (int r = 0; r < v; r++) memcpy(nc + at[r], sub[r]->n_configs, sizeof(int) * (size_t)sub[r]->n_nodes);
    cost_graph *u = cg_new(N, nc, E);
    free(nc);
    if (!u) lw_out_of_memory(sizeof *u);
    for (int r = 0; r < v; r++) {
        for (int x = 0; x < sub[r]->n_nodes; x++)
            memcpy(u->node_cost[at[r] + x], sub[r]->node_cost[x], sizeof(double) * (size_t)sub[r]->n_configs[x]);
        for (int e = 0; e < sub[r]->n_edges; e++)
            if (cg_add_edge_borrowed(u, at[r] + sub[r]->edge_from[e], at[r] + sub[r]->edge_to[e], sub[r]->edge_cost[e]) < 0)
                lw_out_of_memory(sizeof(double));
    }
    return u;
}

/* The memory table of the union u of group g's chunks on `gpus`: row
 * e gpus + k, GPU k holding the e-th vector of micro-batches h[e] (per
 * chunk), weights, gradients and optimizer state, the embedding's copy of
 * a tied table (copy_bytes over the group's chunks, as group_memory counts
 * it) plus the held activations. */
static mem_table *il_mem_table(const pctx *c, const cost_model *cm, const cost_graph *u, const int *node_of,
                               const int *a, const int *b, int gpus, const double *h, int E)
{
    int rows = gpus * E, **tasks = lw_malloc(sizeof(int *) * (size_t)u->n_nodes);
    for (int x = 0; x < u->n_nodes; x++) {
        tasks[x] = lw_malloc(sizeof(int) * (size_t)u->n_configs[x]);
        for (int k = 0; k < u->n_configs[x]; k++) tasks[x][k] = 1; /* the incoming tensors' nodes keep nothing */
    }
    for (int l = 0; l < cm->n_layers; l++)
        for (int k = 0; node_of[l] >= 0 && k < cm->n_configs[l]; k++) tasks[node_of[l]][k] = rows;
    mem_table *t = mt_new(u->n_nodes, u->n_configs, rows, tasks);
    for (int x = 0; x < u->n_nodes; x++) free(tasks[x]);
    free(tasks);
    int *first = lw_malloc(sizeof(int) * 2 * (size_t)c->v), *last = first + c->v; /* the group's chunks */
    for (int r = 0; r < c->v; r++) first[r] = c->bounds[a[r]], last[r] = c->bounds[b[r]];
    for (int r = 0; t && r < c->v; r++)
        for (int l = c->bounds[a[r]]; l < c->bounds[b[r]]; l++)
            for (int k = 0; k < cm->n_configs[l]; k++) {
                const config *cf = &cm->configs[l][k];
                double *bytes = mt_at(t, node_of[l], k);
                for (int q = 0; q < config_tasks(cf) && q < gpus; q++) {
                    double act, fixed = task_state(cm, l, cf, q, first, last, c->v, &act);
                    for (int e = 0; e < E; e++) bytes[e * gpus + q] = fixed + h[e * c->v + r] * act;
                }
            }
    free(first);
    return t;
}

/* Checks group g on size si with chunks [a_r, b_r) against the limit and
 * adds its entry: NaN where its chunks' fastest configs fit, else the
 * memory search's capped total (+inf where nothing fits). Returns the entry. */
static int il_cap_check(pctx *c, int g, int si, const int *a, const int *b)
{
    il_cap *ic = c->ilc;
    const cost_model *cm = c->tabs[si].cm;
    int v = c->v, gpus = c->size[si], L = cm->n_layers, *at = lw_malloc(sizeof(int) * (size_t)v);
    int *node_of = lw_malloc(sizeof(int) * (size_t)L);
    cost_graph **sub = lw_malloc(sizeof(cost_graph *) * (size_t)v);
    cost_graph *u = il_union(c, cm, a, b, sub, at, node_of);
    int *cfg = lw_malloc(sizeof(int) * (size_t)u->n_nodes), ok = 1;
    for (int r = 0; r < v; r++) { /* the chunks' fastest configs, as stage_fill takes them */
        search_result *sr = search_optimum(sub[r]);
        if (sr) memcpy(cfg + at[r], sr->config, sizeof(int) * (size_t)sub[r]->n_nodes);
        ok &= sr != NULL;
        search_result_free(sr);
    }
    double *h, cost = NAN, cap = c->o->memory_limit - cost_fixed_bytes(cm);
    int E = il_held_vectors(c, g, &h), *keep = NULL;
    mem_table *t = il_mem_table(c, cm, u, node_of, a, b, gpus, h, E);
    double *lim = lw_malloc(sizeof(double) * (size_t)gpus * (size_t)E);
    for (int q = 0; q < gpus * E; q++) lim[q] = cap;
    if (!ok || !t || !mt_fits(t, cfg, lim)) {
        memsearch_options mo;
        memsearch_options_init(&mo);
        mo.time_limit_s = 0; /* bounded by the count alone, as capped_optimum */
        mo.max_subproblems = PIPE_CAP_SUBPROBLEMS;
        memsearch_result *mr = t ? memsearch_run(u, t, lim, &mo) : NULL;
        c->capped++;
        if (!mr || (mr->status != MEMSEARCH_OPTIMAL && mr->status != MEMSEARCH_INFEASIBLE)) c->unproven = 1;
        cost = mr && mr->config ? mr->cost : HUGE_VAL;
        if (mr && mr->config) {
            keep = lw_malloc(sizeof(int) * (size_t)L);
            for (int l = 0; l < L; l++) keep[l] = node_of[l] >= 0 ? mr->config[node_of[l]] : -1;
        }
        memsearch_result_free(mr);
    }
    mt_free(t);
    free(lim);
    free(h);
    free(cfg);
    cg_free(u);
    for (int r = 0; r < v; r++) cg_free(sub[r]);
    free(sub);
    free(node_of);
    free(at);
    int e = ic->n++;
    ic->keys = lw_realloc(ic->keys, sizeof(int) * (size_t)ic->n * (size_t)ic->kl);
    ic->cost = lw_realloc(ic->cost, sizeof(double) * (size_t)ic->n);
    ic->cfg = lw_realloc(ic->cfg, sizeof(int *) * (size_t)ic->n);
    il_key(c, g, si, a, b, ic->keys + (long)e * ic->kl);
    ic->cost[e] = cost, ic->cfg[e] = keep;
    unsigned s = il_hash(ic->keys + (long)e * ic->kl, ic->kl) % IL_CAP_SLOTS;
    while (ic->slot[s]) s = (s + 1) % IL_CAP_SLOTS;
    ic->slot[s] = e + 1;
    return e;
}

/* The checks' cache for this count, with what il_never_fits reads. */
static il_cap *il_cap_new(const pctx *c)
{
    il_cap *ic = lw_calloc(1, sizeof *ic);
    int L = c->net->n_layers;
    ic->kl = 2 + 2 * c->v;
    ic->held = lw_malloc(sizeof(double *) * (size_t)c->p);
    ic->n_held = lw_malloc(sizeof(int) * (size_t)c->p);
    for (int g = 0; g < c->p; g++) ic->n_held[g] = il_held_vectors(c, g, &ic->held[g]);
    ic->lo = lw_calloc((size_t)c->n_sizes * 2 * (size_t)(L + 1), sizeof(double));
    for (int si = 0; si < c->n_sizes; si++) {
        const cost_model *cm = c->tabs[si].cm;
        double *ls = ic->lo + (size_t)si * 2 * (L + 1), *la = ls + L + 1;
        for (int l = 0; l < L; l++) {
            double ms = HUGE_VAL, ma = HUGE_VAL;
            for (int k = 0; k < cm->n_configs[l]; k++) { /* every config has a task on GPU 0 */
                memory_parts mp;
                cost_memory_task(cm, l, &cm->configs[l][k], 0, &mp);
                ms = fmin(ms, mp.weights + mp.gradients + mp.optimizer);
                ma = fmin(ma, mp.activations);
            }
            ls[l + 1] = ls[l] + (isfinite(ms) ? ms : 0), la[l + 1] = la[l] + (isfinite(ma) ? ma : 0);
        }
    }
    return ic;
}

/* Whether group g on size si with chunks [a_r, b_r) cannot fit the limit
 * whatever its configs: GPU 0's least bytes at some point of the order
 * (each layer's least weights and least activations) pass it. */
static int il_never_fits(const pctx *c, int g, int si, const int *a, const int *b)
{
    const il_cap *ic = c->ilc;
    int L = c->net->n_layers;
    const double *ls = ic->lo + (size_t)si * 2 * (L + 1), *la = ls + L + 1, *h = ic->held[g];
    double cap = c->o->memory_limit - cost_fixed_bytes(c->tabs[si].cm);
    for (int e = 0; e < ic->n_held[g]; e++) {
        double bytes = 0;
        for (int r = 0; r < c->v; r++) {
            int x = c->bounds[a[r]], y = c->bounds[b[r]];
            bytes += ls[y] - ls[x] + h[e * c->v + r] * (la[y] - la[x]);
        }
        if (bytes > 0 && bytes > cap) return 1;
    }
    return 0;
}

/* Group g's load on size si at offset o with its chunks [a_r, b_r): +inf
 * where a chunk has no finite strategy. */
static double il_load(const il_ctx *ic, int g, int si, int o, const int *a, const int *b)
{
    const pctx *c = ic->c;
    const size_tabs *s = &c->tabs[si];
    double load = 0;
    for (int r = 0; r < c->v; r++) load += s->f[a[r] * (c->K + 1) + b[r]];
    if (c->ilc && il_never_fits(c, g, si, a, b)) return HUGE_VAL;
    if (c->ilc && c->ilc->n) { /* checked against the memory limit: its chunks' capped total */
        int buf[128], *key = c->ilc->kl <= 128 ? buf : lw_malloc(sizeof(int) * (size_t)c->ilc->kl), e;
        il_key(c, g, si, a, b, key);
        if ((e = il_cap_find(c->ilc, key)) >= 0 && !isnan(c->ilc->cost[e])) load = c->ilc->cost[e];
        if (key != buf) free(key);
    }
    for (int r = 0; r < c->v && isfinite(load); r++) {
        if (g == c->p - 1 && r == c->v - 1) continue; /* the network's last chunk sends nothing */
        int to = g == c->p - 1 ? 0 : o + c->size[si];  /* the last group sends to the first (offset 0) */
        load += pipe_p2p_ms(s->cm, c->prod[b[r]], o, to, 1);
    }
    return load;
}

static void il_solve(il_ctx *ic, int g, int o, long code);

/* With the embedding's group fixed (c->eo >= 0, il_search): -1 where group
 * (o, si) with chunks [a_r, b_r) holds the embedding's segment but is not
 * that group; else its share of the step's sum: the all-reduce (times v,
 * as T divides the sum by v) where it holds the LM head's and not the
 * embedding's. */
static double il_tie_share(const pctx *c, int si, int o, const int *a, const int *b)
{
    if (c->eo < 0) return 0;
    int he = 0, hh = 0;
    for (int r = 0; r < c->v; r++) he |= a[r] <= c->se && c->se < b[r], hh |= a[r] <= c->sh && c->sh < b[r];
    if (he) return o == c->eo && si == c->es ? 0 : -1;
    return hh ? c->tie_x[si * c->G + o] * c->v : 0;
}

/* Appends the candidates of group g on size si at offset o, chunks from a
 * (every choice of ends b) to *cand. */
static void il_candidates(il_ctx *ic, int g, int si, int o, const int *a, il_entry **cand, long *n, long *cap)
{
    const pctx *c = ic->c;
    int v = c->v, last = g == c->p - 1, *b = lw_malloc(sizeof(int) * 3 * (size_t)v), *hi = b + v, *lo = hi + v, rs = 0;
    while (c->eo >= 0 && ic->X[rs + 1] <= c->se) rs++; /* the embedding's pass */
    for (int r = 0; r < v; r++) {
        hi[r] = last ? ic->X[r + 1] : ic->X[r + 1] - (c->p - 1 - g); /* each later group keeps a segment a pass */
        lo[r] = last ? hi[r] : a[r] + 1;
        if (c->eo >= 0 && r == rs && a[r] <= c->se && !last) { /* the embedding's chunk: on its group alone */
            if (o == c->eo && si == c->es) lo[r] = lo[r] > c->se + 1 ? lo[r] : c->se + 1;
            else hi[r] = hi[r] < c->se ? hi[r] : c->se;
        }
        b[r] = lo[r];
        if (b[r] > hi[r]) goto done;
    }
    for (;;) {
        double load = il_load(ic, g, si, o, a, b), once = isfinite(load) ? il_tie_share(c, si, o, a, b) : -1;
        if (once >= 0 && il_bound(c, load, load) < ic->best_T) {
            long code = last ? -1 : il_encode(ic, b), at = 0, cnt = 1;
            if (!last) {
                il_solve(ic, g + 1, o + c->size[si], code);
                long slot = ((long)(g + 1) * (c->G + 1) + o + c->size[si]) * ic->n_codes + code;
                at = ic->memo_at[slot], cnt = ic->memo_n[slot];
            }
            for (long k = 0; k < cnt; k++) {
                if (*n == *cap) *cand = lw_realloc(*cand, sizeof(il_entry) * (size_t)(*cap = *cap * 2 + 16));
                il_entry e = {load + once, load, si, -1, code};
                if (!last) {
                    const il_entry *q = &ic->pool[at + k];
                    e.sum += q->sum, e.mx = fmax(load, q->mx), e.next = (int)(at + k);
                }
                if (il_bound(c, e.sum, e.mx) < ic->best_T) (*cand)[(*n)++] = e;
            }
        }
        int r = 0; /* the next b, an odometer */
        while (r < v && (last || ++b[r] > hi[r])) {
            if (!last) b[r] = lo[r];
            r++;
        }
        if (r == v) break;
    }
done:
    free(b);
}

/* The front of state (g, o, code), kept in ic->pool (memoised). */
static void il_solve(il_ctx *ic, int g, int o, long code)
{
    const pctx *c = ic->c;
    long slot = ((long)g * (c->G + 1) + o) * ic->n_codes + code;
    if (ic->memo_at[slot] >= 0) return;
    int *a = lw_malloc(sizeof(int) * (size_t)c->v), rs = 0;
    il_decode(ic, code, a);
    il_entry *cand = NULL;
    long n = 0, cap = 0;
    while (c->eo >= 0 && ic->X[rs + 1] <= c->se) rs++; /* the embedding's pass */
    /* past the embedding's group's offset with its chunk not placed yet (this group's or a later one's): none */
    for (int si = 0; si < c->n_sizes && !(c->eo >= 0 && o > c->eo && a[rs] <= c->se); si++) {
        int sz = c->size[si];
        if (o % sz || o + sz > c->G || (g < c->p - 1 && o + sz >= c->G)) continue;
        il_candidates(ic, g, si, o, a, &cand, &n, &cap);
    }
    if (n) qsort(cand, (size_t)n, sizeof(il_entry), cmp_entry); /* cand is NULL when pruning left none */
    long at = ic->n_pool, kept = 0;
    for (long k = 0; k < n; k++) {
        if (kept && !(cand[k].mx < ic->pool[ic->n_pool - 1].mx)) continue; /* dominated */
        if (ic->n_pool == ic->cap_pool)
            ic->pool = lw_realloc(ic->pool, sizeof(il_entry) * (size_t)(ic->cap_pool = ic->cap_pool * 2 + 64));
        ic->pool[ic->n_pool++] = cand[k], kept++;
    }
    ic->memo_at[slot] = (int)at, ic->memo_n[slot] = (int)kept;
    free(cand);
    free(a);
}

/* The DP for the passes' starts ic->X: the best plan's step where it beats
 * best->T, its chunks' starts and groups' sizes in best->choice (chunk
 * starts [0 .. p v], then the p size indices). */
static void il_run(il_ctx *ic, dp_best *best)
{
    pctx *c = ic->c;
    int v = c->v, p = c->p;
    ic->n_codes = 1;
    for (int r = 0; r < v; r++) ic->len[r] = ic->X[r + 1] - ic->X[r], ic->n_codes *= ic->len[r];
    long slots = (long)p * (c->G + 1) * ic->n_codes;
    ic->memo_at = lw_malloc(sizeof(int) * (size_t)slots);
    ic->memo_n = lw_malloc(sizeof(int) * (size_t)slots);
    for (long k = 0; k < slots; k++) ic->memo_at[k] = -1;
    ic->n_pool = 0;
    ic->best_T = best->T;
    c->dp_runs++;
    il_solve(ic, 0, 0, 0); /* group 0 at offset 0, its chunks starting each pass */
    int bk = -1;
    double bT = best->T;
    for (int k = 0; k < ic->memo_n[0]; k++) {
        double T = ic->pool[ic->memo_at[0] + k].sum / v + (c->m - 1.0 / v) * ic->pool[ic->memo_at[0] + k].mx;
        if (T < bT) bT = T, bk = ic->memo_at[0] + k;
    }
    if (bk >= 0) {
        best->T = bT, best->improved = 1;
        int *a = lw_malloc(sizeof(int) * (size_t)v);
        il_decode(ic, 0, a);
        for (int g = 0; g < p; g++) {
            const il_entry *e = &ic->pool[bk];
            for (int r = 0; r < v; r++) best->choice[r * p + g] = a[r];
            best->choice[p * v + 1 + g] = e->si;
            if (e->code >= 0) il_decode(ic, e->code, a);
            bk = e->next;
        }
        best->choice[p * v] = c->K;
        free(a);
    }
    free(ic->memo_at);
    free(ic->memo_n);
}

/* il_run for every choice of the passes' starts. */
static void il_search_starts(pctx *c, dp_best *best)
{
    int v = c->v;
    il_ctx ic = {.c = c};
    ic.X = lw_malloc(sizeof(int) * (size_t)(v + 1));
    ic.len = lw_malloc(sizeof(int) * (size_t)v);
    int *even = lw_malloc(sizeof(int) * (size_t)(v + 1));
    for (int r = 0; r <= v; r++) ic.X[r] = even[r] = (int)((long)r * c->K / v); /* equal passes first: a good */
    il_run(&ic, best);                                                            /* step early prunes the rest */
    for (int r = 0; r <= v; r++) ic.X[r] = r < v ? r * c->p : c->K; /* then every choice, each pass p or more */
    for (;;) {
        if (memcmp(ic.X, even, sizeof(int) * (size_t)(v + 1))) il_run(&ic, best);
        int r = v - 1; /* the next X: X[1..v-1] increasing, each pass p segments or more */
        while (r >= 1 && ++ic.X[r] > c->K - (v - r) * c->p) r--;
        if (r < 1) break;
        for (int q = r + 1; q < v; q++) ic.X[q] = ic.X[q - 1] + c->p;
    }
    free(even);
    free(ic.pool);
    free(ic.X);
    free(ic.len);
}

/* The interleaved optimum: il_search_starts, where a tie crosses the groups
 * once per group the embedding can have (tie_groups), its all-reduce with
 * the LM head's group then priced (il_tie_share); the best step found so
 * far prunes the later ones. */
static void il_search(pctx *c, dp_best *best)
{
    c->eo = c->es = -1;
    if (!c->tie_cross) {
        il_search_starts(c, best);
        return;
    }
    int *eg, ne = tie_groups(c, &eg);
    c->tie_x = lw_malloc(sizeof(double) * (size_t)c->n_sizes * (size_t)c->G);
    for (int k = 0; k < ne; k++) {
        c->eo = eg[2 * k], c->es = eg[2 * k + 1];
        tie_fill(c);
        il_search_starts(c, best);
    }
    free(c->tie_x);
    free(eg);
    c->eo = c->es = -1;
    c->tie_x = NULL;
}

/* il_search's work for one micro-batch count: over every choice of the
 * passes' starts, each group's (starts, ends) pairs, pass by pass (the
 * first group's starts and the last's ends fixed), times the sizes at a
 * group and its offsets; +inf past 1e7 choices of the starts. */
static double il_work(const pctx *c)
{
    int v = c->v, p = c->p, *X = lw_malloc(sizeof(int) * (size_t)(v + 1));
    for (int r = 0; r <= v; r++) X[r] = r < v ? r * p : c->K;
    double work = 0, choices = 0;
    for (;;) {
        double first = 1, mid = 1, last = 1;
        for (int r = 0; r < v; r++) {
            double L = X[r + 1] - X[r] - p + 1; /* each chunk's free room in the pass */
            first *= L, last *= L, mid *= L * (L + 1) / 2;
        }
        work += first + last + (p > 2 ? (p - 2) * mid : 0);
        if (++choices > 1e7) {
            work = HUGE_VAL;
            break;
        }
        int r = v - 1;
        while (r >= 1 && ++X[r] > c->K - (v - r) * p) r--;
        if (r < 1) break;
        for (int q = r + 1; q < v; q++) X[q] = X[q - 1] + p;
    }
    free(X);
    return work * c->n_sizes * c->n_sizes;
}

/* The plan of il_search's choices at c->m; keeps the models it uses. */
static pipe_plan *plan_from_chunks(pctx *c, const int *ch, lw_error *err)
{
    pipe_plan *pp = plan_new(c);
    int p = c->p, S = pp->n_stages, o = 0;
    pp->models = lw_calloc((size_t)c->n_sizes, sizeof(cost_model *));
    for (int g = 0; g < p; g++) {
        int si = ch[S + 1 + g];
        for (int j = g; j < S; j += p) {
            pipe_stage *st = &pp->stages[j];
            st->first = c->bounds[ch[j]], st->last = c->bounds[ch[j + 1]], st->gpu0 = o, st->gpus = c->size[si];
            st->producer = ch[j + 1] < c->K ? c->prod[ch[j + 1]] : -1;
            st->cm = c->tabs[si].cm;
        }
        o += c->size[si];
    }
    for (int si = 0; si < c->n_sizes; si++) { /* the plan keeps the models its stages use */
        int used = 0;
        for (int j = 0; j < S; j++) used |= pp->stages[j].cm == c->tabs[si].cm;
        if (used) pp->models[pp->n_models++] = c->tabs[si].cm, c->tabs[si].cm = NULL;
    }
    pp->limit_bytes = c->ilc ? c->o->memory_limit : HUGE_VAL;
    int *a = lw_malloc(sizeof(int) * (size_t)c->v * 2), *b = a + c->v;
    int *key = c->ilc ? lw_malloc(sizeof(int) * (size_t)c->ilc->kl) : NULL;
    for (int j = 0; j < S; j++) { /* a group the memory search capped: its configs, pinned */
        int g = j % p, e = -1;
        if (key) {
            for (int r = 0; r < c->v; r++) a[r] = ch[r * p + g], b[r] = ch[r * p + g + 1];
            il_key(c, g, ch[S + 1 + g], a, b, key);
            e = il_cap_find(c->ilc, key);
        }
        if (stage_fill(pp, j, e >= 0 ? c->ilc->cfg[e] : NULL, err) != 0) {
            pipe_plan_free(pp);
            pp = NULL;
            break;
        }
    }
    free(a);
    free(key);
    if (pp) plan_totals(pp, c->o->memory_limit);
    return pp;
}

/* Interleaved under the memory limit, lazily as capped_dp: il_search with
 * the groups not yet checked priced at their chunks' unconstrained optima,
 * then the optimum's groups checked (il_cap_check) and the search run again
 * until its optimum's every group was checked already; PIPE_IL_CAP_ROUNDS
 * rounds at most (then as if nothing fitted). */
static void il_capped(pctx *c, dp_best *best)
{
    int p = c->p, v = c->v, S = p * v, *a = lw_malloc(sizeof(int) * (size_t)v * 2), *b = a + v;
    int *key = lw_malloc(sizeof(int) * (size_t)c->ilc->kl);
    for (int round = 0;; round++) {
        best->T = HUGE_VAL;
        best->improved = 0;
        if (round == PIPE_IL_CAP_ROUNDS) break;
        il_search(c, best);
        if (!best->improved) break;
        int checked = 1;
        for (int g = 0; g < p; g++) {
            int si = best->choice[S + 1 + g];
            for (int r = 0; r < v; r++) a[r] = best->choice[r * p + g], b[r] = best->choice[r * p + g + 1];
            il_key(c, g, si, a, b, key);
            if (il_cap_find(c->ilc, key) >= 0) continue;
            int e = il_cap_check(c, g, si, a, b); /* (it grows c->ilc's arrays) */
            if (!isnan(c->ilc->cost[e])) checked = 0; /* priced below its capped total */
        }
        if (checked) break;
    }
    free(key);
    free(a);
}

/* The DP under the memory limit, lazily: ranges not yet checked cost
 * their unconstrained optimum f (a lower bound on the capped one); the
 * DP's optimum's stages are then checked (stage_f) and the DP run again
 * until its optimum's every stage was checked already: that plan's step is
 * exact and no other plan's lower bound is below it, so it is the capped
 * optimum (where the unconstrained optimum fits, after one round). Each
 * round checks at least one more (stage, size, range); a range found not
 * to fit rules out every range holding it. After PIPE_CAP_ROUNDS rounds it
 * gives up: the count's plan is then the unconstrained DP's. */
static void capped_dp(pctx *c, dp_best *best)
{
    long W = (long)(c->K + 1) * (c->G + 1);
    for (int round = 0;; round++) {
        if (round == PIPE_CAP_ROUNDS) { /* given up: as if nothing fitted (plan_for_count) */
            best->T = HUGE_VAL;
            best->improved = 0;
            return;
        }
        best->T = HUGE_VAL;
        best->improved = 0;
        c->lazy = 1;
        dp_search(c, best);
        c->lazy = 0;
        if (!best->improved) return;
        int a = 0, o = 0, checked = 1;
        for (int j = 0; j < c->p; j++) {
            int bc = best->choice[(long)j * W + (long)a * (c->G + 1) + o], b = bc / 16, si = bc % 16;
            const size_tabs *s = &c->tabs[si];
            int K1 = c->K + 1;
            if (isnan(s->fcap[((long)j * K1 + a) * K1 + b]) && stage_f(c, j, si, a, b) != s->f[a * K1 + b])
                checked = 0; /* its bound was below its capped optimum: the DP again */
            a = b, o += c->size[si];
        }
        if (checked) return;
    }
}

/* The DP's optimum at m micro-batches, as a plan in *out (NULL where no
 * plan has a finite step). */
static int plan_for_count(pctx *c, int m, dp_best *best, pipe_plan **out, lw_error *err)
{
    c->m = m;
    int rc = 0;
    for (int si = 0; si < c->n_sizes && rc == 0; si++) rc = size_tables(c, si, err);
    best->T = HUGE_VAL;
    best->improved = 0;
    c->uncapped = 0;
    int il = c->o->schedule == PIPE_INTERLEAVED;
    if (rc == 0 && il && isfinite(c->o->memory_limit)) {
        c->ilc = il_cap_new(c);
        il_capped(c, best);
    } else if (rc == 0 && il) {
        il_search(c, best);
    } else if (rc == 0 && c->tabs[0].fcap) {
        capped_dp(c, best);
    } else if (rc == 0) {
        dp_search(c, best);
    }
    if (rc == 0 && !best->improved && (c->tabs[0].fcap || c->ilc)) { /* no plan fits: the fastest, which does not */
        for (int si = 0; si < c->n_sizes; si++) free(c->tabs[si].fcap), c->tabs[si].fcap = NULL;
        il_cap_free(c->ilc, c->p);
        c->ilc = NULL;
        c->uncapped = 1;
        if (il) il_search(c, best);
        else dp_search(c, best);
    }
    if (rc == 0 && best->improved &&
        !(*out = c->o->schedule == PIPE_INTERLEAVED ? plan_from_chunks(c, best->choice, err)
                                                     : plan_from_choices(c, best->choice, err)))
        rc = -1;
    for (int si = 0; si < c->n_sizes; si++) size_tabs_free(&c->tabs[si], c->K, 0);
    il_cap_free(c->ilc, c->p);
    c->ilc = NULL;
    return rc;
}

static void ctx_free(pctx *c)
{
    for (int si = 0; si < c->n_sizes; si++) size_tabs_free(&c->tabs[si], c->K, 0);
    free(c->bounds);
    free(c->prod);
}

pipe_plan *pipe_search(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                       const pipe_options *o, lw_error *err)
{
    pctx c;
    double t0 = lw_now();
    if (setup(&c, net, cl, prof, gpus, batch, o, err) != 0) {
        ctx_free(&c);
        return NULL;
    }
    double work = (double)c.p * c.K * c.K * (double)c.G * c.n_sizes;
    if (o->schedule == PIPE_INTERLEAVED) {
        work = il_work(&c);
        if (work > PIPE_MAX_IL_WORK) {
            lw_fail(err, 2, "--pp %d --vp %d: the chunk search over %d segments on %d GPUs would take about %.3g steps "
                            "(search.md), more than this machine finishes (%.0e); use fewer virtual stages or stages, "
                            "or Megatron's plan (-s megatron)",
                    c.p, c.v, c.K, c.G, work, PIPE_MAX_IL_WORK);
            ctx_free(&c);
            return NULL;
        }
        work = 0; /* not the contiguous DP's */
    }
    if (work > PIPE_MAX_DP_WORK) {
        lw_fail(err, 2, "--pp %d: the stage search over %d cuts on %d GPUs would take about %.3g steps per bound tried, "
                        "more than this machine finishes (%.0e); use fewer GPUs or stages",
                c.p, c.K - 1, c.G, work, PIPE_MAX_DP_WORK);
        ctx_free(&c);
        return NULL;
    }
    int ms[PIPE_MAX_COUNTS], nm = micro_counts(&c, ms);
    if (nm == 0) {
        lw_fail(err, 2, "--pp %d: no micro-batch count from %d to %d divides the batch of %ld; give --microbatches",
                c.p, c.p, 8 * c.p, batch);
        ctx_free(&c);
        return NULL;
    }
    long W = (long)(c.K + 1) * (c.G + 1);
    dp_best best = {HUGE_VAL, lw_malloc(sizeof(int) * (size_t)(c.p + 1) * (size_t)W), 0};
    pipe_plan *pp = NULL;
    int rc = 0;
    for (int k = 0; rc == 0 && k < nm; k++) {
        pipe_plan *np = NULL;
        rc = plan_for_count(&c, ms[k], &best, &np, err);
        if (np && (!pp || (np->fits && !pp->fits) || (np->fits == pp->fits && np->step_ms < pp->step_ms))) {
            pipe_plan_free(pp);
            pp = np;
        } else {
            pipe_plan_free(np);
        }
        /* the default counts tried and no plan fits: smaller micro-batches, until one does */
        if (k == nm - 1 && !o->microbatches && c.p > 1 && pp && !pp->fits && nm < PIPE_MAX_COUNTS &&
            (long)ms[k] * 2 <= batch && batch % ((long)ms[k] * 2) == 0)
            ms[nm++] = ms[k] * 2;
    }
    if (rc != 0) {
        pipe_plan_free(pp);
        pp = NULL;
    }
    if (!pp && rc == 0) lw_fail(err, 1, "pipeline: no plan of %d stages has a finite step", c.p);
    if (pp) {
        pp->segment_searches = c.searches;
        pp->capped_searches = c.capped;
        pp->unproven |= c.unproven;
        pp->dp_runs = c.dp_runs;
        pp->search_ms = (lw_now() - t0) * 1e3;
    }
    free(best.choice);
    ctx_free(&c);
    return pp;
}

/* Megatron's stage starts: segment indices, blocks (segments with an
 * attention layer) split evenly. */
static int megatron_starts(const pctx *c, int *start, lw_error *err)
{
    int nb = 0, *blk = lw_malloc(sizeof(int) * (size_t)c->K);
    for (int j = 0; j < c->K; j++) {
        int att = 0;
        for (int l = c->bounds[j]; l < c->bounds[j + 1]; l++) att |= c->net->layers[l].type == LT_ATTENTION;
        if (att) blk[nb++] = j;
    }
    int rc = 0, S = c->p * c->v; /* interleaved: p v chunks (Megatron-LM's virtual pipeline) */
    if (nb % S)
        rc = lw_fail(err, 2, "-s megatron --pp %d%s: %s has %d transformer blocks, not a multiple of %d", c->p,
                     c->v > 1 ? " --vp" : "", c->net->name, nb, S);
    for (int i = 0; i < S && rc == 0; i++) start[i] = i ? blk[i * (nb / S)] : 0;
    start[S] = c->K;
    free(blk);
    return rc;
}

pipe_plan *pipe_megatron(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                         const pipe_options *o, const megatron_options *mo, lw_error *err)
{
    pctx c;
    pipe_plan *best = NULL;
    int *start = lw_malloc(sizeof(int) * (size_t)(net->n_layers + 1)), ms[8], nm = 0;
    if (setup(&c, net, cl, prof, gpus, batch, o, err) != 0 || megatron_starts(&c, start, err) != 0) goto done;
    int g = gpus / c.p;
    if (gpus % c.p || (g & (g - 1))) {
        lw_fail(err, 2, "-s megatron --pp %d: the %d GPUs do not split into %d groups of a power of two", c.p, gpus, c.p);
        goto done;
    }
    nm = micro_counts(&c, ms);
    if (!nm) lw_fail(err, 2, "--pp %d: no micro-batch count from %d to %d divides the batch of %ld; give --microbatches",
                     c.p, c.p, 8 * c.p, batch);
    for (int k = 0; k < nm; k++) {
        c.m = ms[k];
        pipe_plan *pp = plan_new(&c);
        cost_model *cm = cost_model_build(net, cl, prof, g, batch / c.m, err);
        int *ci = lw_malloc(sizeof(int) * (size_t)net->n_layers);
        int rc = cm ? strategy_megatron(cm, mo, ci, err) : -1;
        if (cm) {
            cm->optimizer = o->optimizer;
            pp->models = lw_malloc(sizeof(cost_model *));
            pp->models[pp->n_models++] = cm;
        }
        for (int i = 0; i < pp->n_stages; i++) { /* chunk i on group i mod p */
            pipe_stage *st = &pp->stages[i];
            st->first = c.bounds[start[i]], st->last = c.bounds[start[i + 1]];
            st->producer = start[i + 1] < c.K ? c.prod[start[i + 1]] : -1;
            st->gpu0 = (i % c.p) * g, st->gpus = g, st->cm = cm;
        }
        for (int i = 0; i < pp->n_stages && rc == 0; i++) rc = stage_fill(pp, i, ci, err);
        free(ci);
        if (rc == 0) plan_totals(pp, o->memory_limit);
        if (rc != 0 || (best && best->step_ms <= pp->step_ms)) {
            pipe_plan_free(pp);
            if (rc != 0) {
                pipe_plan_free(best);
                best = NULL;
                break;
            }
        } else {
            pipe_plan_free(best);
            best = pp;
        }
    }
done:
    free(start);
    ctx_free(&c);
    return best;
}

cJSON *pipe_plan_document(const pipe_plan *pp, const cost_model *m, int gpus, const char *algorithm)
{
    cJSON *root = doc_new(PIPE_FORMAT, m, gpus);
    cJSON_AddStringToObject(root, "algorithm", algorithm);
    cJSON_AddNumberToObject(root, "total_ms", pp->step_ms);
    doc_add_throughput(root, m, "eq1", pp->step_ms, gpus);
    cJSON_AddNumberToObject(root, "peak_memory_bytes", round(pp->peak_memory_bytes));
    cJSON_AddBoolToObject(root, "fits", pp->fits);
    pipe_plan_to_json(pp, root);
    return root;
}

void pipe_plan_to_json(const pipe_plan *pp, cJSON *o)
{
    cJSON_AddStringToObject(o, "schedule", pipe_schedule_name(pp->schedule));
    cJSON_AddNumberToObject(o, "microbatches", pp->m);
    cJSON_AddNumberToObject(o, "virtual_stages", pp->v);
    cJSON *arr = cJSON_AddArrayToObject(o, "stages");
    for (int i = 0; i < pp->n_stages; i++) {
        const pipe_stage *st = &pp->stages[i];
        const network *net = st->cm->net;
        cJSON *s = cJSON_CreateObject();
        if (pp->schedule == PIPE_INTERLEAVED) { /* chunk i of the network, on group i mod p */
            cJSON_AddNumberToObject(s, "chunk", i);
            cJSON_AddNumberToObject(s, "group", st->group);
        }
        cJSON *ls = cJSON_AddArrayToObject(s, "layers"), *gs = cJSON_AddArrayToObject(s, "gpus");
        for (int l = st->first; l < st->last; l++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "name", net->layers[l].name);
            cJSON_AddItemToObject(e, "config", config_to_json(&net->layers[l], &st->cm->configs[l][st->config[l]]));
            cJSON_AddItemToArray(ls, e);
        }
        for (int k = 0; k < st->gpus; k++) cJSON_AddItemToArray(gs, cJSON_CreateNumber(st->gpu0 + k));
        cJSON_AddNumberToObject(s, "time_ms", st->t_ms);
        cJSON_AddNumberToObject(s, "compute_ms", st->compute_ms);
        cJSON_AddNumberToObject(s, "transfer_ms", st->transfer_ms);
        cJSON_AddNumberToObject(s, "sync_ms", st->sync_ms);
        cJSON_AddNumberToObject(s, "p2p_ms", st->p2p_ms);
        cJSON_AddNumberToObject(s, "held_microbatches", st->held);
        cJSON_AddNumberToObject(s, "memory_bytes", st->memory_bytes);
        cJSON_AddItemToArray(arr, s);
    }
    cJSON *p = cJSON_AddObjectToObject(o, "pipeline");
    cJSON_AddNumberToObject(p, "stages", pp->p);
    if (pp->schedule == PIPE_INTERLEAVED) cJSON_AddNumberToObject(p, "chunks", pp->n_stages);
    cJSON_AddNumberToObject(p, "microbatch", (double)pp->microbatch);
    cJSON_AddNumberToObject(p, "step_ms", pp->step_ms);
    if (pp->tie_ms > 0) cJSON_AddNumberToObject(p, "tie_allreduce_ms", pp->tie_ms); /* in step_ms */
    cJSON_AddNumberToObject(p, "bubble_fraction", pp->bubble_fraction);
    cJSON_AddNumberToObject(p, "peak_memory_bytes", pp->peak_memory_bytes);
    cJSON_AddBoolToObject(p, "fits", pp->fits);
    cJSON_AddBoolToObject(p, "proven_optimal", !pp->unproven);
}

void pipe_plan_print(const pipe_plan *pp, FILE *f)
{
    fprintf(f, "pipeline: %d stages, %s%s, %d micro-batches of %ld, on %d GPUs\n", pp->p,
            pipe_schedule_name(pp->schedule), pp->v > 1 ? " (virtual stages)" : "", pp->m, pp->microbatch, pp->gpus);
    int il = pp->schedule == PIPE_INTERLEAVED;
    if (il)
        fprintf(f, "  %d virtual stages per group: %d chunks, chunk j on group j mod %d (memory: the group's)\n", pp->v,
                pp->n_stages, pp->p);
    fprintf(f, "  %-5s %-5s %-28s %-9s %9s %9s %9s %9s %9s %6s %10s\n", il ? "chunk" : "stage", il ? "group" : "",
            "layers", "GPUs", "t/mb ms", "t_c ms", "t_x ms", "t_s ms", "p2p ms", "held", "memory");
    for (int i = 0; i < pp->n_stages; i++) {
        const pipe_stage *st = &pp->stages[i];
        const network *net = st->cm->net;
        char layers[64], gpus[24], group[16] = "";
        snprintf(layers, sizeof layers, "%.12s .. %.12s", net->layers[st->first].name, net->layers[st->last - 1].name);
        snprintf(gpus, sizeof gpus, "%d-%d", st->gpu0, st->gpu0 + st->gpus - 1);
        if (il) snprintf(group, sizeof group, "%d", st->group + 1);
        fprintf(f, "  %-5d %-5s %-28s %-9s %9.2f %9.2f %9.2f %9.2f %9.2f %6.2f %6.1f GiB\n", i + 1, group, layers, gpus,
                st->t_ms, st->compute_ms, st->transfer_ms, st->sync_ms, st->p2p_ms, st->held,
                st->memory_bytes / 1073741824.0);
    }
    fprintf(f, "step %.2f ms (eq1, pipelined: %s%s); bubble %.1f%% of each GPU's step\n", pp->step_ms,
            il ? "sum T_g / v + (m - 1/v) max T_g, T_g a group's chunks' t" : "sum t + (m - 1) max t",
            pp->tie_ms > 0 ? " + the tied table's all-reduce" : "", 100 * pp->bubble_fraction);
    if (pp->tie_ms > 0) {
        double bytes;
        pipe_tie_ms(pp, &bytes);
        fprintf(f, "tied table: its gradient (%.1f MB) all-reduced once a step between the stages holding the embedding "
                   "and the LM head, %.2f ms (Megatron-LM's embedding group; the embedding's stage keeps a copy)\n",
                bytes / 1e6, pp->tie_ms);
    }
    fprintf(f, "peak memory %.2f GiB per GPU: %s\n", pp->peak_memory_bytes / 1073741824.0,
            pp->fits ? "fits" : "does NOT fit the memory limit");
    if (pp->unproven)
        fprintf(f, "not proven optimal: a %s's memory search stopped after %d subproblems (the best fitting configs "
                   "it found priced that %s)\n",
                il ? "group" : "stage", PIPE_CAP_SUBPROBLEMS, il ? "group" : "stage");
    if (pp->dp_runs)
        fprintf(f, "search: %d cut points, %ld segment searches, %ld DP passes, %.0f ms\n", pp->cuts - 1,
                pp->segment_searches, pp->dp_runs, pp->search_ms);
}

/* ---- strategy files with stages (format layerwise-strategy/2) ---- */

int pipe_file_is_pipeline(const char *text, size_t len)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    const cJSON *fmt = root ? cJSON_GetObjectItemCaseSensitive(root, "format") : NULL;
    int yes = cJSON_IsString(fmt) && !strcmp(fmt->valuestring, PIPE_FORMAT);
    cJSON_Delete(root);
    return yes;
}

/* A whole number field of o in lo..hi; def where absent (def < 0: needed). */
static int int_field(const cJSON *o, const char *key, int lo, int hi, int def, const char *label, int *out,
                     lw_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v && def >= 0) return *out = def, 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return lw_fail(err, 2, "%s: \"%s\" must be a whole number from %d to %d", label, key, lo, hi);
    *out = (int)v->valuedouble;
    return 0;
}

/* Stage i's layers and GPUs from its object s; checks they continue where
 * stage i-1 ended, at an allowed cut, on an aligned group. */
static int stage_from_json(const pctx *c, const cJSON *s, int i, pipe_stage *st, const char *label, lw_error *err)
{
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(s, "layers"), *gs = cJSON_GetObjectItemCaseSensitive(s, "gpus");
    int n = cJSON_IsArray(ls) ? cJSON_GetArraySize(ls) : 0, g = cJSON_IsArray(gs) ? cJSON_GetArraySize(gs) : 0;
    if (!n || !g) return lw_fail(err, 2, "%s: stages[%d] needs non-empty \"layers\" and \"gpus\" arrays", label, i);
    int first = i ? st[-1].last : 0, k = 0;
    for (const cJSON *it = ls->child; it; it = it->next, k++) {
        const cJSON *nm = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "name") : it;
        if (!cJSON_IsString(nm) || first + k >= c->net->n_layers || strcmp(nm->valuestring, c->net->layers[first + k].name))
            return lw_fail(err, 2, "%s: stages[%d].layers[%d] must be \"%s\" (a stage's layers are the next ones in "
                                   "the network's order)", label, i, k,
                           first + k < c->net->n_layers ? c->net->layers[first + k].name : "(none: the network ended)");
    }
    st->first = first, st->last = first + n;
    int cut = 0;
    for (int j = 0; j <= c->K; j++) cut |= c->bounds[j] == st->last;
    if (!cut)
        return lw_fail(err, 2, "%s: stages[%d] ends after \"%s\", where more than one tensor crosses (cut only "
                               "between blocks or chain layers)", label, i, c->net->layers[st->last - 1].name);
    for (int j = 1; j < c->K; j++)
        if (c->bounds[j] == st->last) st->producer = c->prod[j];
    if (st->last == c->net->n_layers) st->producer = -1;
    k = 0;
    for (const cJSON *it = gs->child; it; it = it->next, k++) {
        int v = cJSON_IsNumber(it) ? (int)it->valuedouble : -1;
        if (k == 0) st->gpu0 = v;
        if (v != st->gpu0 + k || v < 0 || v >= c->G)
            return lw_fail(err, 2, "%s: stages[%d].gpus must be consecutive GPUs below %d", label, i, c->G);
    }
    st->gpus = g;
    if (i >= c->p) { /* interleaved: chunk i runs on group i mod p, whose GPUs chunk i mod p named */
        if (st->gpu0 != st[-c->p].gpu0 || g != st[-c->p].gpus)
            return lw_fail(err, 2, "%s: stages[%d] is chunk %d, on group %d: its \"gpus\" must be stages[%d]'s", label,
                           i, i, i % c->p, i % c->p);
        return 0;
    }
    if ((g & (g - 1)) || st->gpu0 % g || (i && st->gpu0 < st[-1].gpu0 + st[-1].gpus))
        return lw_fail(err, 2, "%s: stages[%d].gpus: a group is a power of two of GPUs, starting at a multiple of "
                               "its size, after the previous stage's", label, i);
    return 0;
}

/* The configs of stage st from its layers' entries, read by
 * strategy_from_json on the stage's model (the other layers given 1s). */
static int stage_configs(const cJSON *s, const pipe_stage *st, int *ci, const char *label, int i, lw_error *err)
{
    const cost_model *cm = st->cm;
    cJSON *doc = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(doc, "layers");
    cJSON_AddStringToObject(doc, "format", "layerwise-strategy/1");
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(s, "layers")->child;
    for (int l = 0; l < cm->n_layers; l++) {
        const cJSON *cfg = l >= st->first && l < st->last && cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "config") : NULL;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", cm->net->layers[l].name);
        cJSON_AddItemToObject(e, "config", cfg ? cJSON_Duplicate(cfg, 1) : cJSON_CreateObject());
        cJSON_AddItemToArray(arr, e);
        if (l >= st->first && l < st->last) it = it->next;
    }
    char *text = cJSON_PrintUnformatted(doc), where[300];
    cJSON_Delete(doc);
    snprintf(where, sizeof where, "%s, stages[%d]", label, i);
    int rc = strategy_from_json(cm, text, strlen(text), where, ci, err);
    free(text);
    return rc;
}

/* An interleaved document's groups: its stages are the network's p v
 * chunks in order, each saying its "chunk" j and "group" j mod p (files
 * written before chunks were placed, without them, are refused). */
static int chunks_from_json(const cJSON *stages, int v, int *p, const char *label, lw_error *err)
{
    int S = cJSON_GetArraySize(stages), j = 0;
    if (S % v)
        return lw_fail(err, 2, "%s: an interleaved plan of %d virtual stages per group lists p x %d chunks in "
                               "\"stages\", not %d", label, v, v, S);
    *p = S / v;
    for (const cJSON *s = stages->child; s; s = s->next, j++) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(s, "group"), *ch = cJSON_GetObjectItemCaseSensitive(s, "chunk");
        if (!cJSON_IsNumber(g))
            return lw_fail(err, 2, "%s: stages[%d] has no \"group\": an interleaved plan's stages are its chunks, each "
                                   "with its group (a file from before chunks were placed: search it again)", label, j);
        if (g->valuedouble != j % *p || (ch && (!cJSON_IsNumber(ch) || ch->valuedouble != j)))
            return lw_fail(err, 2, "%s: stages[%d] is chunk %d of %d, on group %d (chunk j runs on group j mod %d)",
                           label, j, j, S, j % *p, *p);
    }
    return 0;
}

pipe_plan *pipe_plan_from_json(const network *net, const cluster *cl, const profile *prof, int gpus, long batch,
                               const char *text, size_t len, const char *label, optimizer_kind opt, double limit,
                               lw_error *err)
{
    cJSON *root = json_parse_doc(text, len, label, err);
    if (!root) return NULL;
    pipe_options o;
    pipe_options_init(&o);
    o.optimizer = opt, o.memory_limit = limit;
    const cJSON *stages = cJSON_GetObjectItemCaseSensitive(root, "stages"),
                *sch = cJSON_GetObjectItemCaseSensitive(root, "schedule");
    pctx c;
    memset(&c, 0, sizeof c);
    pipe_plan *pp = NULL;
    int *ci = NULL;
    if (!cJSON_IsArray(stages) || cJSON_GetArraySize(stages) < 1) {
        lw_fail(err, 2, "%s: a %s document needs a \"stages\" array", label, PIPE_FORMAT);
        goto out;
    }
    if (sch && (!cJSON_IsString(sch) || pipe_schedule_from_name(sch->valuestring) < 0)) {
        lw_fail(err, 2, "%s: \"schedule\" must be \"gpipe\", \"1f1b\" or \"interleaved\"", label);
        goto out;
    }
    o.stages = cJSON_GetArraySize(stages);
    o.schedule = sch ? (pipe_schedule)pipe_schedule_from_name(sch->valuestring) : PIPE_1F1B;
    if (int_field(root, "microbatches", 1, 1 << 20, -1, label, &o.microbatches, err) != 0 ||
        int_field(root, "virtual_stages", 1, 64, 1, label, &o.vp, err) != 0 ||
        (o.schedule == PIPE_INTERLEAVED && chunks_from_json(stages, o.vp, &o.stages, label, err) != 0) ||
        setup(&c, net, cl, prof, gpus, batch, &o, err) != 0)
        goto out;
    c.m = o.microbatches;
    pp = plan_new(&c);
    pp->models = lw_calloc(16, sizeof(cost_model *));
    ci = lw_malloc(sizeof(int) * (size_t)net->n_layers);
    int i = 0;
    for (const cJSON *s = stages->child; s; s = s->next, i++) { /* every stage's range and group first: */
        pipe_stage *st = &pp->stages[i];
        if (stage_from_json(&c, s, i, st, label, err) != 0) goto fail;
        for (int k = 0; k < pp->n_models && !st->cm; k++)
            if (pp->models[k]->gpus == st->gpus) st->cm = pp->models[k];
        if (!st->cm) {
            cost_model *cm = cost_model_build(net, cl, prof, st->gpus, batch / c.m, err);
            if (!cm) goto fail;
            cm->optimizer = opt;
            st->cm = pp->models[pp->n_models++] = cm;
        }
    }
    if (pp->stages[pp->n_stages - 1].last != net->n_layers) {
        lw_fail(err, 2, "%s: the stages end at \"%s\": every layer of %s must be in one", label,
                net->layers[pp->stages[pp->n_stages - 1].last - 1].name, net->name);
        goto fail;
    }
    i = 0; /* a stage's send goes to the next one's group */
    for (const cJSON *s = stages->child; s; s = s->next, i++)
        if (stage_configs(s, &pp->stages[i], ci, label, i, err) != 0 || stage_fill(pp, i, ci, err) != 0) goto fail;
    plan_totals(pp, limit);
    goto out;
fail:
    pipe_plan_free(pp);
    pp = NULL;
out:
    free(ci);
    ctx_free(&c);
    cJSON_Delete(root);
    return pp;
}

/* ---- explain of boundaries ---- */

/* max, sum and T of pp's stage times with stages k and k + 1 at tk, tk1. */
static void step_with(const pipe_plan *pp, int k, double tk, double tk1, double tie_ms, pipe_move *mv)
{
    double *t = lw_malloc(sizeof(double) * (size_t)(pp->n_stages + pp->p)), *T = t + pp->n_stages;
    mv->max_t = mv->sum_t = 0;
    for (int i = 0; i < pp->n_stages; i++) t[i] = i == k ? tk : i == k + 1 ? tk1 : pp->stages[i].t_ms;
    pipe_group_loads(pp, t, T); /* interleaved: max and sum over the groups' loads */
    for (int g = 0; g < pp->p; g++) {
        mv->sum_t += T[g];
        if (T[g] > mv->max_t) mv->max_t = T[g];
    }
    mv->step_ms = pipe_step_ms(pp->schedule, pp->m, pp->v, T, pp->p) + tie_ms; /* the embedding group's, once */
    free(t);
}

/* The boundary between stages k and k + 1 moved to the allowed cut at
 * layer `at` (its producer prod): the two stages filled again on a copy. */
static int move_boundary(const pipe_plan *pp, int k, int at, int prod, pipe_move *mv, lw_error *err)
{
    pipe_plan tmp = *pp;
    tmp.stages = lw_malloc(sizeof(pipe_stage) * (size_t)pp->n_stages);
    memcpy(tmp.stages, pp->stages, sizeof(pipe_stage) * (size_t)pp->n_stages);
    tmp.stages[k].last = at, tmp.stages[k].producer = prod, tmp.stages[k + 1].first = at;
    tmp.stages[k].config = tmp.stages[k + 1].config = NULL;
    int rc = stage_fill(&tmp, k, NULL, err);
    if (rc == 0) rc = stage_fill(&tmp, k + 1, NULL, err);
    if (rc == 0) {
        mv->valid = 1;
        mv->to = at;
        mv->t_left = tmp.stages[k].t_ms, mv->t_right = tmp.stages[k + 1].t_ms;
        step_with(pp, k, mv->t_left, mv->t_right, pipe_tie_ms(&tmp, NULL), mv);
    }
    free(tmp.stages[k].config);
    free(tmp.stages[k + 1].config);
    free(tmp.stages);
    return rc;
}

int pipe_explain_layer(const pipe_plan *pp, int li, pipe_explain *e, lw_error *err)
{
    const network *net = pp->stages[0].cm->net;
    if (li < 0 || li >= net->n_layers) return lw_fail(err, 2, "explain: no layer %d", li);
    memset(e, 0, sizeof *e);
    e->layer = li;
    while (e->stage + 1 < pp->n_stages && li >= pp->stages[e->stage].last) e->stage++;
    pipe_move now = {0};
    step_with(pp, 0, pp->stages[0].t_ms, pp->n_stages > 1 ? pp->stages[1].t_ms : 0, pp->tie_ms, &now);
    e->max_t = now.max_t, e->sum_t = now.sum_t, e->step_ms = pp->step_ms;
    double *T = lw_calloc((size_t)pp->p, sizeof(double));
    for (int i = 0; i < pp->n_stages; i++) T[pp->stages[i].group] += pp->stages[i].t_ms;
    for (int i = 0; i < pp->p; i++) /* the slowest group: a stage's own without interleaving */
        if (T[i] > T[e->max_stage]) e->max_stage = i;
    free(T);
    int *bounds = lw_malloc(sizeof(int) * (size_t)(net->n_layers + 1) * 2), *prod = bounds + net->n_layers + 1;
    int K = pipe_cuts(net, bounds, prod), rc = 0;
    for (int k = e->stage - 1; k <= e->stage && rc == 0; k++) {
        if (k < 0 || k + 1 >= pp->n_stages) continue;
        int j = 0;
        while (j < K && bounds[j] != pp->stages[k + 1].first) j++;
        for (int dir = -1; dir <= 1 && rc == 0; dir += 2) {
            pipe_move *mv = &e->moves[e->n_moves++];
            *mv = (pipe_move){.boundary = k, .dir = dir, .from = pp->stages[k + 1].first, .to = -1};
            int nj = j + dir;
            if (j >= K || nj <= 0 || nj >= K || bounds[nj] <= pp->stages[k].first || bounds[nj] >= pp->stages[k + 1].last)
                continue; /* no allowed cut there, or a stage left empty */
            rc = move_boundary(pp, k, bounds[nj], prod[nj], mv, err);
        }
    }
    free(bounds);
    return rc;
}

char *pipe_explain_text(const pipe_plan *pp, const pipe_explain *e)
{
    const network *net = pp->stages[0].cm->net;
    const pipe_stage *st = &pp->stages[e->stage];
    lw_buf b = {0};
    lw_buf_printf(&b, "%s sits in stage %d of %d (layers %s .. %s, GPUs %d-%d): t%d = %.3f ms per micro-batch.\n",
                  net->layers[e->layer].name, e->stage + 1, pp->n_stages, net->layers[st->first].name,
                  net->layers[st->last - 1].name, st->gpu0, st->gpu0 + st->gpus - 1, e->stage + 1, st->t_ms);
    if (pp->schedule == PIPE_INTERLEAVED)
        lw_buf_printf(&b, "Chunk %d runs on group %d. The step T = %.3f ms (interleaved, m = %d, v = %d) over the "
                          "groups' loads T_g (each the sum of its chunks' t): max T_g = %.3f ms (group %d), sum T_g = "
                          "%.3f ms.\n",
                      e->stage + 1, st->group + 1, e->step_ms, pp->m, pp->v, e->max_t, e->max_stage + 1, e->sum_t);
    else
        lw_buf_printf(&b, "The step T = %.3f ms (%s, m = %d): max t_i = %.3f ms (stage %d), sum t_i = %.3f ms.\n",
                      e->step_ms, pipe_schedule_name(pp->schedule), pp->m, e->max_t, e->max_stage + 1, e->sum_t);
    for (int i = 0; i < e->n_moves; i++) {
        const pipe_move *mv = &e->moves[i];
        lw_buf_printf(&b, "Moving the boundary between stages %d and %d (before %s) one allowed cut %s: ", mv->boundary + 1,
                      mv->boundary + 2, net->layers[mv->from].name, mv->dir < 0 ? "earlier" : "later");
        if (!mv->valid) {
            lw_buf_printf(&b, "no such cut (a stage would be left empty).\n");
            continue;
        }
        lw_buf_printf(&b, "stage %d starts at %s; t%d = %.3f, t%d = %.3f ms; max t_i = %.3f, sum t_i = %.3f; "
                          "T = %.3f ms (%+.3f).\n",
                      mv->boundary + 2, net->layers[mv->to].name, mv->boundary + 1, mv->t_left, mv->boundary + 2,
                      mv->t_right, mv->max_t, mv->sum_t, mv->step_ms, mv->step_ms - e->step_ms);
    }
    return b.s ? b.s : lw_strdup("");
}
