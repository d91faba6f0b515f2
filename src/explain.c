/*
 * explain: one layer's config in the terms of Eq. 1, its alternatives, its
 * placement, and the parameter values at which the runner-up would win.
 */
#include "explain.h"
#include "plan_internal.h" /* an engine module: it reads the plan's model */

#include "cost_sharding.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const term_names[TERM__COUNT] = {"t_c", "t_s", "t_x in", "t_x out", "rest"};

const char *explain_term_name(explain_term t)
{
    return t >= 0 && t < TERM__COUNT ? term_names[t] : "?";
}

int explain_family_of(const config *c)
{
    int n = c->deg[DIM_N] > 1, ch = c->deg[DIM_C] > 1, hw = c->deg[DIM_H] * c->deg[DIM_W] > 1, r = c->deg[DIM_R] > 1;
    if (n + ch + hw + r != 1 || c->deg[DIM_X] > 1) return -1;
    return n ? FAM_SAMPLE : ch ? FAM_CHANNEL : hw ? FAM_SPATIAL : FAM_CONTRACTION;
}

const char *explain_family_name(const layer *l, explain_family f)
{
    int seq = l->out.rank == 3;
    switch (f) {
    case FAM_SAMPLE: return "sample (n)";
    case FAM_CHANNEL: return l->type == LT_ATTENTION ? "heads (c)" : seq ? "features (c)" : "channel (c)";
    case FAM_SPATIAL: return seq ? "sequence (s)" : "height/width";
    case FAM_CONTRACTION: return "contraction (r)";
    case FAM_DATA: return "data parallelism";
    default: return "?";
    }
}

static int nodes_of(const cluster *cl, int tasks)
{
    int gpn = cl->gpus_per_node > 0 ? cl->gpus_per_node : 1;
    return tasks > 0 ? (tasks - 1) / gpn + 1 : 0;
}

/* The terms of strategy cfg as layer li sees them. */
static void alt_fill(const plan *p, int li, const int *cfg, explain_alt *a)
{
    const cost_model *m = p->cm;
    strategy_eval ev;
    strategy_evaluate(m, cfg, &ev);
    const layer_eval *le = &ev.layers[li];
    int k = cfg[li];
    a->config = k;
    a->term_ms[TERM_TC] = le->compute_ms;
    a->term_ms[TERM_TS] = le->sync_ms;
    a->term_ms[TERM_TX_IN] = le->transfer_ms;
    a->sync_bytes = le->sync_bytes;
    a->in_bytes = le->transfer_bytes;
    double out = 0, out_bytes = 0;
    for (int e = 0; e < m->n_edges; e++) {
        if (m->e_from[e] != li) continue;
        double b = 0;
        out += cost_edge_ms(m, e, k, cfg[m->e_to[e]], &b);
        out_bytes += b;
    }
    for (int t = 0; t < m->n_ties; t++) { /* the tie term: the lm_head's t_x in already holds it */
        const cost_tie *ti = &m->ties[t];
        if (ti->embed != li && ti->lm_head != li) continue;
        a->tie_ms = cost_tie_ms(m, t, cfg[ti->embed], cfg[ti->lm_head], &a->tie_bytes);
        if (ti->embed == li) {
            out += a->tie_ms;
            out_bytes += a->tie_bytes;
        }
    }
    a->term_ms[TERM_TX_OUT] = out;
    a->out_bytes = out_bytes;
    a->total_ms = ev.total_ms;
    a->term_ms[TERM_REST] = ev.total_ms - le->compute_ms - le->sync_ms - le->transfer_ms - out;
    a->gpus = config_tasks(&m->configs[li][k]);
    a->nodes = nodes_of(p->cl, a->gpus);
    a->changed = plan_layers_changed(p, li, cfg);
    a->peak_bytes = cost_memory(m, cfg, NULL);
    a->fits = a->peak_bytes <= plan_memory_limit(&p->mset, p->cl);
    a->family = explain_family_of(&m->configs[li][k]);
    strategy_eval_free(&ev);
}

/* ---- crossovers ---------------------------------------------------------- */

#define CROSS_BW_FACTOR 128.0  /* bandwidths searched from now / 128 to now * 128 */
#define CROSS_BW_DOUBLINGS 7
#define CROSS_BATCH_MAX 4096L  /* per-GPU batches searched from 1 to this */
#define CROSS_BW_RATIO 1.02    /* bisection stops when the bracket is this narrow */

static const char *param_name(explain_param q)
{
    return q == CROSS_INTER_BW ? "inter-node bandwidth" : q == CROSS_INTRA_BW ? "intra-node bandwidth" : "batch per GPU";
}

static const char *param_key(explain_param q)
{
    return q == CROSS_INTER_BW ? "inter_node_bandwidth_gbs" : q == CROSS_INTRA_BW ? "intra_node_bandwidth_gbs"
                                                                                  : "batch_per_gpu";
}

static void cross_init(const plan *p, explain_cross *c, explain_param q)
{
    memset(c, 0, sizeof *c);
    c->param = q;
    if (q == CROSS_BATCH) {
        c->now = (double)(p->batch / (p->gpus > 0 ? p->gpus : 1));
        c->lo = 1;
        c->hi = c->now > CROSS_BATCH_MAX ? c->now : CROSS_BATCH_MAX;
    } else {
        c->now = q == CROSS_INTER_BW ? p->cl->inter.bandwidth_gbs : p->cl->intra.bandwidth_gbs;
        c->lo = c->now / CROSS_BW_FACTOR;
        c->hi = c->now * CROSS_BW_FACTOR;
    }
}

/* The value the doubling phase probes at step j (1, 2, ...) in direction
 * dir (0 down, 1 up), clamped to the range. */
static double doubling_value(const explain_cross *c, int dir, int j)
{
    double v = c->now * pow(2.0, dir ? j : -j);
    if (c->param == CROSS_BATCH) v = round(v);
    if (v < c->lo) v = c->lo;
    if (v > c->hi) v = c->hi;
    return v;
}

/* The setting a probe at v asks about: run settings *s and, for a
 * bandwidth, an edited clone of the plan's cluster (*cl, caller frees;
 * NULL for the batch). The chosen config and the runner-up, in two. */
static void probe_setting(const plan *p, const explain *e, const explain_cross *c, double v, plan_settings *s,
                          cluster **cl, config two[2])
{
    const cost_model *m = p->cm;
    two[0] = m->configs[e->layer][e->alt[0].config];
    two[1] = m->configs[e->layer][e->alt[1].config];
    *s = p->set;
    s->gpus = p->gpus;
    *cl = NULL;
    if (c->param == CROSS_BATCH) {
        s->batch_per_gpu = (long)v;
        s->global_batch = 0;
    } else {
        *cl = cluster_clone(p->cl);
        if (c->param == CROSS_INTER_BW) (*cl)->inter.bandwidth_gbs = v;
        else cluster_set_intra_bw(*cl, v);
    }
}

static int runner_wins(const double tot[2])
{
    return isfinite(tot[1]) && tot[1] < tot[0] - 1e-9 * fabs(tot[0]);
}

/* The value c's search probes next, in *v: 1, or 0 when it is done (and
 * c->done set). */
static int cross_next(explain_cross *c, double *v)
{
    if (c->phase == 0) {
        /* outward from now, alternating down and up, so the first value
         * found is the nearest one (in ratio) */
        while (c->j < 2 * 64) {
            int d = c->j % 2, jj = c->j / 2 + 1;
            c->j++;
            if (c->dir_done[d]) continue;
            double x = doubling_value(c, d, jj), prev = doubling_value(c, d, jj - 1);
            if (x == prev || (c->param != CROSS_BATCH && jj > CROSS_BW_DOUBLINGS)) {
                c->dir_done[d] = 1;
                continue;
            }
            c->prev = prev;
            *v = x;
            return 1;
        }
        c->done = 1;
        return 0;
    }
    /* bisection between ok and win */
    int narrow = c->param == CROSS_BATCH ? fabs(c->win - c->ok) <= 1
                                         : fmax(c->win, c->ok) / fmin(c->win, c->ok) <= CROSS_BW_RATIO;
    if (narrow) {
        c->value = c->win;
        c->done = 1;
        return 0;
    }
    double mid = c->param == CROSS_BATCH ? floor((c->ok + c->win) / 2) : sqrt(c->ok * c->win);
    if (c->param == CROSS_BATCH && (mid == c->ok || mid == c->win)) mid = c->ok < c->win ? c->ok + 1 : c->ok - 1;
    *v = mid;
    return 1;
}

/* The answer of the probe at v (cross_next's): rc 0 with the totals, or
 * non-zero with why. */
static void cross_feed(explain_cross *c, double v, int rc, const double tot[2], const char *why)
{
    c->probes++;
    if (rc != 0) {
        snprintf(c->msg, sizeof c->msg, "%.150s", why);
        c->done = c->failed = 1;
        return;
    }
    if (c->phase == 0) {
        if (!runner_wins(tot)) return;
        c->ok = c->prev;
        c->win = v;
        c->totals[0] = tot[0];
        c->totals[1] = tot[1];
        c->found = c->phase = 1;
        c->value = c->win;
        return;
    }
    if (runner_wins(tot)) {
        c->win = v;
        c->totals[0] = tot[0];
        c->totals[1] = tot[1];
    } else {
        c->ok = v;
    }
    c->value = c->win;
}

static int any_left(const explain *e)
{
    for (int i = 0; i < e->n_cross; i++)
        if (!e->cross[i].done) return 1;
    return 0;
}

/* The first search not done and its next value (searches found done on
 * the way are marked so); NULL when none is left. */
static explain_cross *next_probe(explain *e, double *v)
{
    for (int i = 0; i < e->n_cross; i++)
        if (!e->cross[i].done && cross_next(&e->cross[i], v)) return &e->cross[i];
    return NULL;
}

/* A probe's question: run settings, a cluster (NULL: the plan's; else a
 * clone, freed by the asker) and the two configs. */
typedef struct probe_q {
    plan_settings s;
    cluster *cl;
    config two[2];
} probe_q;

/* The next search to probe, its value in *v and its question in *q; NULL
 * when none is left. */
static explain_cross *next_question(const plan *p, explain *e, double *v, probe_q *q)
{
    explain_cross *c = next_probe(e, v);
    if (c) probe_setting(p, e, c, *v, &q->s, &q->cl, q->two);
    return c;
}

int explain_step(const plan *p, explain *e)
{
    double v, tot[2] = {0, 0};
    probe_q q;
    explain_cross *c = next_question(p, e, &v, &q);
    if (!c) return 0;
    lw_error err = {0};
    int rc = plan_probe_pair(p, &q.s, q.cl, e->layer, q.two, tot, &err);
    cluster_free(q.cl);
    cross_feed(c, v, rc, tot, err.msg);
    return any_left(e);
}

int explain_step_async(plan *p, explain *e)
{
    lw_error err = {0};
    if (e->posted) {
        double tot[2] = {0, 0};
        int rc = plan_probe_poll(p, tot, &err);
        if (rc == 0) return 1; /* still running */
        explain_cross *c = &e->cross[e->posted_cross];
        e->posted = 0;
        cross_feed(c, e->posted_value, rc == 1 ? 0 : -1, tot, err.msg);
    }
    double v;
    probe_q q;
    explain_cross *c = next_question(p, e, &v, &q);
    if (!c) return 0;
    int rc = plan_probe_post(p, &q.s, q.cl, e->layer, q.two, &err);
    cluster_free(q.cl);
    if (rc != 0) {
        cross_feed(c, v, rc, NULL, err.msg);
        return any_left(e);
    }
    e->posted = 1;
    e->posted_cross = (int)(c - e->cross);
    e->posted_value = v;
    return 1;
}

void explain_cancel(plan *p, explain *e)
{
    if (!e->posted) return;
    plan_probe_cancel(p);
    e->posted = 0;
    /* the search asks that value again when resumed */
    explain_cross *c = &e->cross[e->posted_cross];
    if (c->phase == 0) c->j--;
}

void explain_progress(const explain *e, int *done, int *total)
{
    *done = *total = 0;
    for (int i = 0; i < e->n_cross; i++) {
        const explain_cross *c = &e->cross[i];
        int budget = c->param == CROSS_BATCH ? 24 : 2 * CROSS_BW_DOUBLINGS + 6;
        *done += c->done ? budget : (c->probes < budget ? c->probes : budget - 1);
        *total += budget;
    }
}

/* ---- the alternatives' ranking ---------------------------------------- */

/* The time the ranking under the memory limit may take (each config a
 * search under the limit bounded by counts, plan_cost_with_pin_within);
 * configs not asked by then are left out, and the text says how many. */
double explain_rank_time_s = 3.0;

/* Each config's best total, asked only as far as a ranking needs: under
 * the memory limit a config's own search (plan_cost_with_pin: the memory
 * search when its Eq. 1 strategy does not fit), with the Eq. 1 total (no
 * more than it) as the bound that ends a ranking early. */
typedef struct rank_ctx {
    const plan *p;
    int li, limited;
    double *eq1;      /* [n] Eq. 1 totals, memory not limited */
    double *tot;      /* [n] the totals ranked: eq1, or under the limit (NAN: not asked yet) */
    int *cfg;         /* [n][L] the strategy of each total asked (under the limit) */
    plan_ranked *r;   /* configs by eq1, least first */
    double deadline;  /* lw_now() after which no more is asked under the limit */
    int unasked;      /* configs left out for that */
    const atomic_int *cancel; /* raised: nothing more is asked (explain_layer_cancellable) */
} rank_ctx;

static int cancelled(const rank_ctx *c) { return c->cancel && atomic_load(c->cancel); }

static double rank_total(rank_ctx *c, int k)
{
    if (!isnan(c->tot[k])) return c->tot[k];
    if (lw_now() > c->deadline || cancelled(c)) { /* not asked: left out of the ranking, and counted (the chosen config's row is
                                     in the table all the same) */
        c->tot[k] = HUGE_VAL;
        c->unasked += k != c->p->best[c->li];
        return c->tot[k];
    }
    c->tot[k] = plan_cost_with_pin_within(c->p, c->li, k, c->cfg + (size_t)k * (size_t)c->p->net->n_layers);
    return c->tot[k];
}

/* The strategy of config k's total (NULL: none finite); caller frees. */
static int *rank_strategy(rank_ctx *c, int k)
{
    int L = c->p->net->n_layers;
    int *cfg = lw_malloc(sizeof(int) * (size_t)L);
    double t = c->limited ? rank_total(c, k) : plan_cost_with_pin_eq1(c->p, c->li, k, cfg);
    if (c->limited && isfinite(t)) memcpy(cfg, c->cfg + (size_t)k * (size_t)L, sizeof(int) * (size_t)L);
    if (!isfinite(t)) {
        free(cfg);
        return NULL;
    }
    return cfg;
}

typedef int (*rank_filter)(const rank_ctx *c, int k, int arg);

/* The up to `want` configs with the least finite totals among those filter
 * keeps (all: NULL), skipping config skip, least first (ties by index),
 * in out; how many. Configs are asked in Eq. 1 order and the asking stops
 * once the next Eq. 1 total (a lower bound) is no less than the want-th
 * best found, so the answer is the same as asking every config. */
static int rank_best(rank_ctx *c, rank_filter keep, int arg, int skip, int *out, int want)
{
    int n = c->p->cm->n_configs[c->li], got = 0;
    for (int q = 0; q < n; q++) {
        int k = c->r[q].k;
        if (!isfinite(c->eq1[k])) break;
        if (got == want && c->eq1[k] > c->tot[out[want - 1]]) break;
        if (k == skip || (keep && !keep(c, k, arg))) continue;
        double t = rank_total(c, k);
        if (!isfinite(t)) continue;
        int at;
        if (got < want) {
            at = got++;
        } else { /* replaces the worst so far if better */
            at = want - 1;
            if (t > c->tot[out[at]] || (t == c->tot[out[at]] && k > out[at])) continue;
        }
        out[at] = k;
        for (int i = at; i > 0 && (c->tot[out[i]] < c->tot[out[i - 1]] ||
                                   (c->tot[out[i]] == c->tot[out[i - 1]] && out[i] < out[i - 1])); i--) {
            int x = out[i];
            out[i] = out[i - 1];
            out[i - 1] = x;
        }
    }
    return got;
}

static int in_nodes(const rank_ctx *c, int k, int nodes)
{
    return nodes_of(c->p->cl, config_tasks(&c->p->cm->configs[c->li][k])) == nodes;
}

/* cls 0: split by sample only, 1: by channel only, 2: by height/width only */
static int in_class(const rank_ctx *c, int k, int cls)
{
    const config *f = &c->p->cm->configs[c->li][k];
    int n = f->deg[DIM_N] > 1, ch = f->deg[DIM_C] > 1, hw = f->deg[DIM_H] * f->deg[DIM_W] > 1;
    return cls == 0 ? n && !ch && !hw : cls == 1 ? ch && !n && !hw : hw && !n && !ch;
}

/* ---- the dimension families ---------------------------------------------- */

static int in_family(const rank_ctx *c, int k, int fam)
{
    return explain_family_of(&c->p->cm->configs[c->li][k]) == fam;
}

/* The best config of family fam in the ranking (within the memory limit
 * where it applies), else by Eq. 1 alone (none of the family fits); -1
 * when the layer has none. */
static int family_best(rank_ctx *rc, int fam)
{
    int k;
    if (rank_best(rc, in_family, fam, -1, &k, 1) == 1) return k;
    int best = -1;
    for (k = 0; k < rc->p->cm->n_configs[rc->li]; k++)
        if (in_family(rc, k, fam) && isfinite(rc->eq1[k]) && (best < 0 || rc->eq1[k] < rc->eq1[best])) best = k;
    return best;
}

/* The strategy of config k's total in the ranking, or, with none within
 * the memory limit, its best by Eq. 1 alone; NULL when neither is finite.
 * Caller frees. */
static int *family_strategy(rank_ctx *rc, int k)
{
    int *cfg = rank_strategy(rc, k);
    if (cfg || !rc->limited) return cfg;
    cfg = lw_malloc(sizeof(int) * (size_t)rc->p->net->n_layers);
    if (isfinite(plan_cost_with_pin_eq1(rc->p, rc->li, k, cfg))) return cfg;
    free(cfg);
    return NULL;
}

/* e->dim: the best config of each family layer li can split by, then data
 * parallelism's config, each with the rest re-optimised (alt 0 where it is
 * the chosen config). */
static void pick_dimensions(rank_ctx *rc, explain *e)
{
    const plan *p = rc->p;
    int li = rc->li;
    for (int f = 0; f < FAM__COUNT; f++) {
        int k;
        if (f == FAM_DATA) {
            int *d = lw_malloc(sizeof(int) * (size_t)p->net->n_layers);
            plan_baseline(p, BASE_DATA, d);
            k = d[li];
            free(d);
        } else {
            k = family_best(rc, f);
        }
        if (k < 0) continue;
        explain_alt *a = &e->dim[e->n_dims];
        if (k == p->best[li]) {
            *a = e->alt[0];
        } else {
            int *cfg = family_strategy(rc, k);
            if (!cfg) continue;
            alt_fill(p, li, cfg, a);
            free(cfg);
        }
        a->role = explain_family_name(&p->net->layers[li], (explain_family)f);
        a->family = f;
        e->n_dims++;
    }
}

/* ---- the layer ------------------------------------------------------------- */

static int listed(const explain *e, int k)
{
    for (int i = 0; i < e->n_alts; i++)
        if (e->alt[i].config == k) return 1;
    return 0;
}

static const char *const node_roles[] = {"best on 1 node", "best on 2 nodes", "best on 3 nodes", "best on 4 nodes"};

/* The configs explain sets beside the chosen one (want, with their roles
 * in why; returns how many): the runner-up and the next two; the best for
 * each other number of nodes, so the placement can be read off the table;
 * the best split by sample only, by channel only and by height and width,
 * so data and model parallelism can be read off too. cc: the chosen
 * config. */
static int pick_alternatives(rank_ctx *rc, const plan *p, int li, const config *cc, int *want, const char **why)
{
    static const char *const next_roles[] = {"runner-up", "next best", "next best"};
    int nw = 0;
    int top[3];
    int ntop = rank_best(rc, NULL, -1, p->best[li], top, 3);
    for (int i = 0; i < ntop; i++) {
        why[nw] = next_roles[nw];
        want[nw++] = top[i];
    }
    int maxnodes = nodes_of(p->cl, p->gpus);
    for (int nodes = 1; nodes <= maxnodes && nodes <= 4 && 1 + nw < EXPLAIN_MAX_ALTS; nodes++) {
        int have = nodes_of(p->cl, config_tasks(cc)) == nodes;
        for (int i = 0; i < nw && !have; i++)
            have = nodes_of(p->cl, config_tasks(&p->cm->configs[li][want[i]])) == nodes;
        int k;
        if (!have && rank_best(rc, in_nodes, nodes, -1, &k, 1) == 1) {
            why[nw] = node_roles[nodes - 1];
            want[nw++] = k;
        }
    }
    static const char *const class_roles[] = {"best by sample (n)", "best by channel (c)", "best by height/width"};
    /* a sequence layer's c is its features (or heads), its h the sequence */
    static const char *const seq_roles[] = {"best by sample (n)", "best by features (c)", "best by sequence (s)"};
    const int seq = p->net->layers[li].out.rank == 3;
    for (int cls = 0; cls < 3 && 1 + nw < EXPLAIN_MAX_ALTS; cls++) {
        int k;
        if (rank_best(rc, in_class, cls, -1, &k, 1) != 1) continue;
        int have = k == p->best[li];
        for (int i = 0; i < nw && !have; i++) have = want[i] == k;
        if (!have) {
            why[nw] = seq ? seq_roles[cls] : class_roles[cls];
            want[nw++] = k;
        }
    }
    return nw;
}

int explain_layer_cancellable(const plan *p, int li, explain *e, const atomic_int *cancel, lw_error *err)
{
    memset(e, 0, sizeof *e);
    e->decides = -1;
    if (!p->sr || !p->cm || !p->cm->t_c) return lw_fail(err, 1, "there is no searched strategy to explain");
    if (li < 0 || li >= p->net->n_layers) return lw_fail(err, 2, "no layer %d", li);
    const cost_model *m = p->cm;
    const layer *l = &p->net->layers[li];
    int n = m->n_configs[li], L = m->n_layers;
    e->layer = li;
    e->pinned = p->pinned[li] >= 0;
    e->n_configs = n;
    e->params = (double)layer_weights(p->net, li); /* a tied table is its lm_head's */
    e->weight_bytes = e->params * BYTES_PER_ELEM;
    e->act_bytes = (double)shape_elems(l->out) * (double)p->batch * m->elem_bytes;
    const config *cc = &m->configs[li][p->best[li]];
    e->act_task_bytes = e->act_bytes / config_tasks(cc);
    e->mem_task_bytes = cost_memory_task(m, li, cc, 0, NULL);

    /* every config's best total with the rest re-optimised: Eq. 1 alone
     * first (the why-not list's min-marginals), a lower bound on the total
     * under the memory limit; under a limit that some strategy fits, each
     * config's own total is the memory search's (rank_ctx) */
    rank_ctx rc = {p, li, e->limited = plan_limit_applies(p), NULL, NULL, NULL, NULL, 0, 0, cancel};
    rc.eq1 = lw_malloc(sizeof(double) * (size_t)n);
    rc.tot = lw_malloc(sizeof(double) * (size_t)n);
    rc.cfg = lw_malloc(sizeof(int) * (size_t)n * (size_t)L);
    if (plan_whynot_all_eq1_cancellable(p, li, rc.eq1, cancel) != 0) {
        free(rc.cfg);
        free(rc.tot);
        free(rc.eq1);
        return lw_fail(err, 1, "cancelled");
    }
    /* the ranking's time starts once the Eq. 1 totals are known (they take
     * seconds of their own on a big setting) */
    rc.deadline = lw_now() + explain_rank_time_s;
    for (int k = 0; k < n; k++) rc.tot[k] = rc.limited ? NAN : rc.eq1[k];
    rc.r = plan_rank_configs(rc.eq1, n);

    alt_fill(p, li, p->best, &e->alt[0]);
    e->alt[0].role = e->pinned ? "chosen (pinned)" : "chosen";
    e->n_alts = 1;
    int want[EXPLAIN_MAX_ALTS];
    const char *why[EXPLAIN_MAX_ALTS];
    int nw = pick_alternatives(&rc, p, li, cc, want, why);
    for (int i = 0; i < nw; i++) {
        if (listed(e, want[i])) continue;
        int *cfg = rank_strategy(&rc, want[i]);
        if (!cfg) continue;
        alt_fill(p, li, cfg, &e->alt[e->n_alts]);
        e->alt[e->n_alts++].role = why[i];
        free(cfg);
    }
    pick_dimensions(&rc, e);
    e->unasked = rc.unasked;
    free(rc.cfg);
    free(rc.r);
    free(rc.tot);
    free(rc.eq1);
    if (cancelled(&rc)) return lw_fail(err, 1, "cancelled");

    /* a runner-up that is faster has no "why" in Eq. 1: a pin or the
     * memory limit holds the chosen config */
    int held = e->n_alts > 1 && e->alt[1].total_ms < e->alt[0].total_ms;
    if (e->n_alts > 1 && strcmp(e->alt[1].role, "runner-up") == 0 && !held) {
        double best = -HUGE_VAL;
        for (int t = 0; t < TERM__COUNT; t++) {
            double d = e->alt[1].term_ms[t] - e->alt[0].term_ms[t];
            if (d > best) {
                best = d;
                e->decides = t;
            }
        }
        /* the crossovers: the bandwidth its traffic crosses, and the batch */
        int multi = p->gpus > p->cl->gpus_per_node;
        cross_init(p, &e->cross[e->n_cross++], multi ? CROSS_INTER_BW : CROSS_INTRA_BW);
        cross_init(p, &e->cross[e->n_cross++], CROSS_BATCH);
    }
    return 0;
}

int explain_layer(const plan *p, int li, explain *e, lw_error *err)
{
    return explain_layer_cancellable(p, li, e, NULL, err);
}

/* ---- explain_layer on a thread of its own --------------------------------- */

struct explain_job {
    const plan *p;
    int li, rc;
    explain e;
    lw_error err;
    atomic_int cancel, done;
    pthread_t th;
};

static void *job_main(void *arg)
{
    explain_job *j = arg;
    j->rc = explain_layer_cancellable(j->p, j->li, &j->e, &j->cancel, &j->err);
    atomic_store(&j->done, 1);
    return NULL;
}

explain_job *explain_start(const plan *p, int li)
{
    explain_job *j = lw_calloc(1, sizeof *j);
    j->p = p;
    j->li = li;
    atomic_init(&j->cancel, 0);
    atomic_init(&j->done, 0);
    if (lw_thread_start(&j->th, job_main, j) != 0) {
        free(j);
        return NULL;
    }
    return j;
}

int explain_job_layer(const explain_job *j) { return j->li; }

int explain_poll(explain_job *j, explain *e, lw_error *err)
{
    if (!atomic_load(&j->done)) return 0;
    if (j->rc != 0) {
        *err = j->err;
        return -1;
    }
    *e = j->e;
    return 1;
}

void explain_job_cancel(explain_job *j)
{
    if (j) atomic_store(&j->cancel, 1);
}

int explain_job_cancelled(const explain_job *j) { return atomic_load(&j->cancel); }

void explain_job_free(explain_job *j)
{
    if (!j) return;
    atomic_store(&j->cancel, 1);
    pthread_join(j->th, NULL);
    free(j);
}

/* ---- text ------------------------------------------------------------------ */

/* A space the wrap never breaks at ("Eq. 1", "18 GB/s"). */
#define NBSP "\x01"
#define EQ1 "Eq." NBSP "1"

/* Appends a paragraph word-wrapped to width, continuation lines indented
 * by indent spaces. */
static void para(lw_buf *out, int width, int indent, const char *fmt, ...) LW_PRINTF(4, 5);
static void para(lw_buf *out, int width, int indent, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    const char *s = text;
    int col = 0, first = 1;
    while (*s == ' ') { /* the first line's own indent */
        lw_buf_printf(out, " ");
        s++;
        col++;
    }
    while (*s) {
        while (*s == ' ') s++;
        if (!*s) break;
        int wl = 0;
        while (s[wl] && s[wl] != ' ') wl++;
        if (!first && col + 1 + wl > width) {
            lw_buf_printf(out, "\n%*s", indent, "");
            col = indent;
        } else if (!first) {
            lw_buf_printf(out, " ");
            col++;
        }
        for (int i = 0; i < wl; i++) lw_buf_printf(out, "%c", s[i] == NBSP[0] ? ' ' : s[i]);
        col += wl;
        first = 0;
        s += wl;
    }
    lw_buf_printf(out, "\n");
}

static const char *cfg_str(const plan *p, int li, int k, char *b, size_t n)
{
    config_format_layer(&p->net->layers[li], &p->cm->configs[li][k], b, n);
    return b;
}

/* "642.3 MB", never broken between number and unit by the wrap */
static const char *bytes_str(double v, char *b, size_t n)
{
    lw_format_bytes(v, b, n);
    for (char *s = b; *s; s++)
        if (*s == ' ') *s = NBSP[0];
    return b;
}

/* A GPU's memory, as the table, the cluster file and the CLI's memory
 * line give it: "16.00 GiB" (binary units: GPUs are sold by GiB; bytes
 * moved and synced stay decimal, bytes_str). */
static const char *gib_str(double v, char *b, size_t n)
{
    snprintf(b, n, "%.2f" NBSP "GiB", v / 1073741824.0);
    return b;
}

/* "GPUs 0-3 on node 0" */
static void devices_str(const plan *p, const explain_alt *a, char *b, size_t n)
{
    int gpn = p->cl->gpus_per_node;
    if (a->gpus == 1) snprintf(b, n, "GPU 0 on node 0");
    else if (a->nodes == 1) snprintf(b, n, "GPUs 0-%d on node 0", a->gpus - 1);
    else snprintf(b, n, "GPUs 0-%d on nodes 0-%d", a->gpus - 1, a->nodes - 1);
    (void)gpn;
}

static void cross_text(lw_buf *out, int width, const plan *p, const explain *e, const explain_cross *c)
{
    char rb[64];
    cfg_str(p, e->layer, e->alt[1].config, rb, sizeof rb);
    const char *unit = c->param == CROSS_BATCH ? "" : NBSP "GB/s";
    const char *fmt = c->param == CROSS_BATCH ? "%.0f" : "%.3g";
    char now[32], lo[32], hi[32], v[32];
    snprintf(now, sizeof now, fmt, c->now);
    snprintf(lo, sizeof lo, fmt, c->lo);
    snprintf(hi, sizeof hi, fmt, c->hi);
    snprintf(v, sizeof v, fmt, c->value);
    if (!c->done) {
        para(out, width, 4, "  - %s: searching (%d probes so far)...", param_name(c->param), c->probes);
    } else if (c->failed) {
        para(out, width, 4, "  - %s: the search stopped: %s", param_name(c->param), c->msg);
    } else if (!c->found) {
        para(out, width, 4, "  - %s: no value in [%s, %s]%s makes %s faster (now %s%s; %d probes).", param_name(c->param),
             lo, hi, unit, rb, now, unit, c->probes);
    } else {
        para(out, width, 4, "  - %s %s %s%s (now %s%s): there %s takes %.2f ms/step against %.2f (" EQ1 "; %d probes, "
                            "doubling then bisection).",
             param_name(c->param), c->value < c->now ? "at or below" : "at or above", v, unit, now, unit, rb,
             c->totals[1], c->totals[0], c->probes);
    }
}

/* Why the decisive term differs, in the model's words. */
static void decide_text(lw_buf *out, int width, const plan *p, const explain *e)
{
    const explain_alt *a = &e->alt[0], *b = &e->alt[1];
    const cost_model *m = p->cm;
    int li = e->layer;
    char ca[64], cb[64], x[32], y[32];
    cfg_str(p, li, a->config, ca, sizeof ca);
    cfg_str(p, li, b->config, cb, sizeof cb);
    int t = e->decides;
    double d = b->term_ms[t] - a->term_ms[t];
    const config *fa = &m->configs[li][a->config], *fb = &m->configs[li][b->config];
    switch (t) {
    case TERM_TS: {
        /* the weights shard over c (and r, the input features); the sample
         * and sequence/spatial degrees hold replicas that sync; replicas (x)
         * compute the same gradient and do not */
        int ra = fa->deg[DIM_N] * fa->deg[DIM_H] * fa->deg[DIM_W], rb = fb->deg[DIM_N] * fb->deg[DIM_H] * fb->deg[DIM_W];
        para(out, width, 2, "t_s decides (+%.2f ms for %s): weights are split by the channel (and contraction) "
                            "degrees and replicated by the sample and spatial or sequence ones, so %s keeps %d "
                            "replica%s of each weight shard and syncs %s per step, %s keeps %d and syncs %s.",
             d, cb, cb, rb, rb == 1 ? "" : "s", bytes_str(b->sync_bytes, x, sizeof x), ca, ra,
             bytes_str(a->sync_bytes, y, sizeof y));
        break;
    }
    case TERM_TX_IN:
    case TERM_TX_OUT: {
        int in = t == TERM_TX_IN;
        para(out, width, 2, "%s decides (+%.2f ms for %s): %s moves %s %s this layer per step (forward and "
                            "backward), %s moves %s.",
             explain_term_name((explain_term)t), d, cb, cb, bytes_str(in ? b->in_bytes : b->out_bytes, x, sizeof x),
             in ? "into" : "out of", ca, bytes_str(in ? a->in_bytes : a->out_bytes, y, sizeof y));
        break;
    }
    case TERM_TC: { /* says so when the GEMM efficiency behind t_c was not fitted (issue 36, item 4) */
        char note[96] = "";
        const_trust tr = cluster_const_trust(p->cl, p->cl->precision, GC_GEMM);
        if (trust_unfitted(tr))
            snprintf(note, sizeof note, " (The GPU's GEMM efficiency at %s is %s, not fitted.)",
                     precision_name(p->cl->precision), tr == TRUST_COPIED ? "copied from another GPU" : trust_name(tr));
        para(out, width, 2, "t_c decides (+%.2f ms for %s): one of its %d tasks computes %.2f ms (forward and "
                            "backward), one of the %d tasks of %s %.2f ms.%s",
             d, cb, b->gpus, b->term_ms[TERM_TC], a->gpus, ca, a->term_ms[TERM_TC], note);
        break;
    }
    default:
        para(out, width, 2, "The rest of the step decides (+%.2f ms for %s): the other layers, re-optimised around "
                            "it (%d change config), cost that much more.",
             d, cb, b->changed);
        break;
    }
    /* what the runner-up would gain, if anything */
    int best = -1;
    double gain = 0;
    for (int k = 0; k < TERM__COUNT; k++)
        if (a->term_ms[k] - b->term_ms[k] > gain + 1e-9) {
            gain = a->term_ms[k] - b->term_ms[k];
            best = k;
        }
    if (best >= 0)
        para(out, width, 2, "%s would save %.2f ms of %s, not enough: in all it is %+.2f ms per step (" EQ1 ").", cb, gain,
             explain_term_name((explain_term)best), b->total_ms - a->total_ms);
}

/* ---- the dimension: weights synced against activations moved ---------------- */

static double tx_ms(const explain_alt *a) { return a->term_ms[TERM_TX_IN] + a->term_ms[TERM_TX_OUT]; }

/* What config a keeps of the layer's weights and what it syncs: "keeps 16
 * replicas of its 411.1 MB of weights and syncs them (t_s 214.00 ms)".
 * Weights are split by c and r; n, h and w hold replicas that sync. */
static void weights_words(const plan *p, const explain *e, const explain_alt *a, char *b, size_t n)
{
    const config *f = &p->cm->configs[e->layer][a->config];
    int reps = f->deg[DIM_N] * f->deg[DIM_H] * f->deg[DIM_W], shards = f->deg[DIM_C] * f->deg[DIM_R];
    char w[32], part[80];
    double ts = a->term_ms[TERM_TS];
    if (e->params <= 0) {
        snprintf(b, n, "has no weights to sync");
        return;
    }
    if (shards > 1) snprintf(part, sizeof part, "each %s shard (1/%d) of its weights", bytes_str(e->weight_bytes / shards, w, sizeof w), shards);
    else snprintf(part, sizeof part, "its %s of weights", bytes_str(e->weight_bytes, w, sizeof w));
    if (reps > 1) snprintf(b, n, "keeps %d replicas of %s and syncs them (t_s %.2f" NBSP "ms)", reps, part, ts);
    else snprintf(b, n, "keeps one copy of %s and syncs none (t_s %.2f" NBSP "ms)", part, ts);
}

/* "moves 308.3 MB of activations (t_x 4.31 ms)": its edges in and out,
 * forward and backward. */
static void acts_words(const explain_alt *a, char *b, size_t n)
{
    char x[32];
    double bytes = a->in_bytes + a->out_bytes;
    if (bytes <= 0) snprintf(b, n, "moves no activations (t_x %.2f" NBSP "ms)", tx_ms(a));
    else snprintf(b, n, "moves %s of activations (t_x %.2f" NBSP "ms)", bytes_str(bytes, x, sizeof x), tx_ms(a));
}

/* The other config the headline sets the chosen one against: data
 * parallelism's, unless that is the chosen one; then the best by channel
 * (the other half of "by sample or by channel?"); else the fastest other
 * family's best. NULL: none. */
static const explain_alt *dims_reference(const explain *e)
{
    const explain_alt *ref = NULL, *channel = NULL;
    for (int i = 0; i < e->n_dims; i++) {
        const explain_alt *d = &e->dim[i];
        if (d->config == e->alt[0].config) continue;
        if (d->family == FAM_DATA) return d;
        if (d->family == FAM_CHANNEL) channel = d;
        if (!ref || d->total_ms < ref->total_ms) ref = d;
    }
    return channel ? channel : ref;
}

/* One sentence with the bytes that decide between chosen a and b: the
 * term b loses most by (t_s: b's weights synced against a's activations
 * moved; t_x the other way round; else t_c), and the totals. */
static void dims_headline(lw_buf *out, int width, const plan *p, const explain *e, const explain_alt *b)
{
    const explain_alt *a = &e->alt[0];
    int li = e->layer;
    char ca[64], cb[64], wa[160], wb[160];
    cfg_str(p, li, a->config, ca, sizeof ca);
    cfg_str(p, li, b->config, cb, sizeof cb);
    double dts = b->term_ms[TERM_TS] - a->term_ms[TERM_TS], dtx = tx_ms(b) - tx_ms(a);
    double dtc = b->term_ms[TERM_TC] - a->term_ms[TERM_TC];
    if (dtc > dts && dtc > dtx) {
        snprintf(wb, sizeof wb, "computes %.2f" NBSP "ms per task (t_c) on %d GPU%s", b->term_ms[TERM_TC], b->gpus,
                 b->gpus == 1 ? "" : "s");
        snprintf(wa, sizeof wa, "%.2f" NBSP "ms on %d", a->term_ms[TERM_TC], a->gpus);
    } else if (dts >= dtx) {
        weights_words(p, e, b, wb, sizeof wb);
        acts_words(a, wa, sizeof wa);
    } else {
        acts_words(b, wb, sizeof wb);
        weights_words(p, e, a, wa, sizeof wa);
    }
    /* where the other layers, re-optimised around b, carry part of the
     * difference, say how much: the layer's own terms against the rest */
    char split[200] = "";
    double drest = b->term_ms[TERM_REST] - a->term_ms[TERM_REST];
    double dtot = b->total_ms - a->total_ms;
    if (b->changed > 0 && fabs(drest) >= 0.005 && fabs(drest) >= 0.05 * fabs(dtot))
        snprintf(split, sizeof split,
                 ": %+.2f" NBSP "ms in %s's own terms, %+.2f" NBSP "ms in the rest of the step, where %d other layer%s "
                 "change%s config",
                 dtot - drest, plan_net(p)->layers[li].name, drest, b->changed, b->changed == 1 ? "" : "s",
                 b->changed == 1 ? "s its" : " their");
    if (b->family == FAM_DATA)
        para(out, width, 2, "Why %s and not data parallelism's %s: %s %s; %s %s. In all %s is %+.2f" NBSP "ms per step "
                            "(" EQ1 ")%s.",
             ca, cb, cb, wb, ca, wa, cb, dtot, split);
    else
        para(out, width, 2, "Why %s and not %s, the best by %s: %s %s; %s %s. In all %s is %+.2f" NBSP "ms per step "
                            "(" EQ1 ")%s.",
             ca, cb, b->role, cb, wb, ca, wa, cb, dtot, split);
}

/* The chosen config against the best config of each family the layer can
 * split by and data parallelism's: the weights each keeps and syncs, the
 * activations it moves, its total. */
static void dims_text(lw_buf *out, int width, const plan *p, const explain *e)
{
    if (e->n_dims == 0) return;
    int li = e->layer;
    const layer *l = &p->net->layers[li];
    para(out, width, 2, "Each way to split %s, its best config (the rest re-optimised):", l->name);
    unsigned seen = 0;
    int data = -1; /* data parallelism's config, when it is also a family's best: said there */
    for (int i = 0; i < e->n_dims; i++)
        if (e->dim[i].family == FAM_DATA) data = e->dim[i].config;
    for (int i = 0; i < e->n_dims; i++) {
        const explain_alt *d = &e->dim[i];
        int also = d->family != FAM_DATA && d->config == data;
        if (d->family == FAM_DATA && (seen & (1u << FAM_DATA))) continue;
        if (also) seen |= 1u << FAM_DATA;
        char c[64], ws[160], as[160], tail[64];
        cfg_str(p, li, d->config, c, sizeof c);
        weights_words(p, e, d, ws, sizeof ws);
        acts_words(d, as, sizeof as);
        seen |= 1u << d->family;
        if (d->config == e->alt[0].config) snprintf(tail, sizeof tail, "the chosen config");
        else snprintf(tail, sizeof tail, "%+.2f" NBSP "ms per step", d->total_ms - e->alt[0].total_ms);
        para(out, width, 4, "  - %s%s%s: %s%s: t_c %.2f" NBSP "ms, %s, %s; %s.", d->family == FAM_DATA ? "" : "by ",
             d->role, d->family == FAM_DATA ? "'s config" : also ? " (data parallelism's config too)" : "", c,
             d->fits ? "" : " (over the memory limit: no strategy with it fits)", d->term_ms[TERM_TC], ws, as, tail);
    }
    char none[160] = "";
    size_t at = 0;
    for (int f = 0; f < FAM_DATA; f++)
        if (!(seen & (1u << f)))
            at += (size_t)snprintf(none + at, sizeof none - at, "%s%s", at ? " or " : "",
                                   explain_family_name(l, (explain_family)f));
    if (at) para(out, width, 4, "  No config splits %s by %s alone.", l->name, none);
}

static void placement_text(lw_buf *out, int width, const plan *p, const explain *e)
{
    const cluster *cl = p->cl;
    const explain_alt *a = &e->alt[0];
    char dv[64], cb[64];
    devices_str(p, a, dv, sizeof dv);
    int gpn = cl->gpus_per_node, allnodes = nodes_of(cl, p->gpus);
    para(out, width, 2, "Placement: task k runs on GPU k, so it uses %s (%d of the %d GPUs in use; %d GPU%s a node).",
         dv, a->gpus, p->gpus, gpn, gpn == 1 ? "" : "s");
    /* the best alternative over a different number of nodes */
    const explain_alt *o = NULL;
    for (int i = 1; i < e->n_alts; i++)
        if (e->alt[i].nodes != a->nodes && (!o || e->alt[i].total_ms < o->total_ms)) o = &e->alt[i];
    if (a->nodes == 1 && allnodes > 1) {
        para(out, width, 2, "It stays inside one node: its transfers and sync use the intra-node link (%.3g" NBSP "GB/s) "
                            "and never the inter-node link (%.3g" NBSP "GB/s).",
             cl->intra.bandwidth_gbs, cl->inter.bandwidth_gbs);
    } else if (a->nodes > 1) {
        para(out, width, 2, "It spans %d nodes: the part of its traffic between nodes crosses the inter-node link "
                            "(%.3g" NBSP "GB/s, against %.3g" NBSP "GB/s inside a node).",
             a->nodes, cl->inter.bandwidth_gbs, cl->intra.bandwidth_gbs);
    }
    if (o) {
        cfg_str(p, e->layer, o->config, cb, sizeof cb);
        para(out, width, 2, "The best config over %d node%s, %s, costs %+.2f ms per step: t_c %+.2f, t_s %+.2f, "
                            "t_x %+.2f, rest %+.2f ms.",
             o->nodes, o->nodes == 1 ? "" : "s", cb, o->total_ms - a->total_ms,
             o->term_ms[TERM_TC] - a->term_ms[TERM_TC], o->term_ms[TERM_TS] - a->term_ms[TERM_TS],
             o->term_ms[TERM_TX_IN] + o->term_ms[TERM_TX_OUT] - a->term_ms[TERM_TX_IN] - a->term_ms[TERM_TX_OUT],
             o->term_ms[TERM_REST] - a->term_ms[TERM_REST]);
    }
    if (a->gpus < p->gpus)
        para(out, width, 2, "GPUs %d-%d have no task of this layer.", a->gpus, p->gpus - 1);
}

/* The table of alternatives (the chosen config first, ! over the memory
 * limit) and a sentence on each: its role and what it costs against the
 * chosen one. */
static void alts_text(lw_buf *out, int width, const plan *p, const explain *e)
{
    int li = e->layer;
    int wide = width >= 78;
    lw_buf_printf(out, "  %-11s %4s %5s %8s %8s %8s %8s", "config", "GPUs", "nodes", "t_c", "t_s", "t_x in", "t_x out");
    if (wide) lw_buf_printf(out, " %8s", "rest");
    lw_buf_printf(out, " %8s\n", "total");
    for (int i = 0; i < e->n_alts; i++) {
        const explain_alt *a = &e->alt[i];
        char c[64];
        cfg_str(p, li, a->config, c, sizeof c);
        lw_buf_printf(out, "%c%c%-11s %4d %5d %8.2f %8.2f %8.2f %8.2f", i == 0 ? '*' : ' ', a->fits ? ' ' : '!', c,
                      a->gpus, a->nodes,
                      a->term_ms[TERM_TC], a->term_ms[TERM_TS], a->term_ms[TERM_TX_IN], a->term_ms[TERM_TX_OUT]);
        if (wide) lw_buf_printf(out, " %8.2f", a->term_ms[TERM_REST]);
        lw_buf_printf(out, " %8.2f\n", a->total_ms);
    }
    for (int i = 0; i < e->n_alts; i++) {
        const explain_alt *a = &e->alt[i];
        char c[64];
        cfg_str(p, li, a->config, c, sizeof c);
        if (i == 0)
            para(out, width, 4, "  %s: %s, %.2f ms per step (" EQ1 ").", c, a->role, a->total_ms);
        else
            para(out, width, 4, "  %s: %s, %+.2f ms (%+.1f%%), %d other layer%s config.", c, a->role,
                 a->total_ms - e->alt[0].total_ms,
                 e->alt[0].total_ms > 0 ? (a->total_ms - e->alt[0].total_ms) / e->alt[0].total_ms * 100 : 0.0,
                 a->changed, a->changed == 1 ? " changes its" : "s change their");
    }
}

/* Why the chosen config and not the runner-up, or why there is no choice
 * (pinned, one config, nothing else fits), then what the table leaves out
 * and whether the memory limit binds. ca: the chosen config's text. */
static void verdict_text(lw_buf *out, int width, const plan *p, const explain *e, const char *ca, double limit)
{
    int li = e->layer;
    const layer *l = &p->net->layers[li];
    char b1[32], b2[32], b3[32];
    if (e->decides >= 0) {
        para(out, width, 2, "Why %s and not %s:", ca, cfg_str(p, li, e->alt[1].config, b1, sizeof b1));
        decide_text(out, width, p, e);
    } else if (e->pinned && e->n_alts > 1 && e->alt[1].total_ms < e->alt[0].total_ms) {
        para(out, width, 2, "%s is pinned to %s: without the pin %s would be %.2f ms per step faster (" EQ1 ").",
             l->name, ca, cfg_str(p, li, e->alt[1].config, b1, sizeof b1), e->alt[0].total_ms - e->alt[1].total_ms);
    } else if (e->n_alts > 1 && e->alt[1].total_ms < e->alt[0].total_ms) {
        /* within the limit the search's bounds (plan_cost_with_pin_within)
         * ran out before it found the strategy the runner-up's own search did */
        para(out, width, 2, "%s would be %.2f ms per step faster (" EQ1 ", within the memory limit): the search "
                             "under the limit stopped at its bound before it found that strategy.",
             cfg_str(p, li, e->alt[1].config, b1, sizeof b1), e->alt[0].total_ms - e->alt[1].total_ms);
    } else if (e->n_configs == 1) {
        para(out, width, 2, "%s has one config on %d GPU%s: nothing to choose.", l->name, p->gpus,
             p->gpus == 1 ? "" : "s");
    } else {
        para(out, width, 2, e->limited ? "No other config of %s was found with a strategy within the memory limit."
                                        : "No other config of %s gives a finite total.",
             l->name);
    }
    if (e->unasked)
        para(out, width, 2, "%d config%s of %s %s left out of the table: the searches under the memory limit took the "
                             "%.0f s explain gives them (the why-not list asks every config).",
             e->unasked, e->unasked == 1 ? "" : "s", l->name, e->unasked == 1 ? "was" : "were", explain_rank_time_s);
    if (e->limited && p->mem.constrained) {
        int k = p->mem.unconstrained[li];
        para(out, width, 2, "The memory limit binds: the paper's optimum (memory not limited) takes %.2f ms per step "
                             "(" EQ1 ") with %s as %s, but needs %s on its fullest GPU, over the limit of %s.",
             p->mem.unconstrained_ms, l->name, cfg_str(p, li, k, b1, sizeof b1),
             gib_str(p->mem.unconstrained_peak, b2, sizeof b2), gib_str(limit, b3, sizeof b3));
    }
}

/* ---- sharding: why the layer's state is divided among its replicas or not ---- */

typedef struct shard_view {
    int replicas, group, shards, n_ag;  /* replicas of each weight shard; Nd; channel shards; all-gathers a step */
    double replicated, sharded, gather; /* state bytes per GPU replicated and as the scheme keeps it; weights gathered */
    double ts_ms;
} shard_view;

static void shard_view_of(const plan *p, const explain *e, shard_view *v)
{
    const cost_model *m = p->cm;
    const config *c = &m->configs[e->layer][e->alt[0].config];
    memset(v, 0, sizeof *v);
    v->shards = c->deg[DIM_C];
    v->replicas = c->deg[DIM_N] * c->deg[DIM_H] * c->deg[DIM_W];
    v->group = cost_shard_group(m, c, 0);
    double params = e->params / v->shards;
    memory_parts a, b;
    cost_shard_state(m, params, 1, &a);
    cost_shard_state(m, params, v->group, &b);
    v->replicated = a.weights + a.gradients + a.optimizer;
    v->sharded = b.weights + b.gradients + b.optimizer;
    v->gather = params * cost_shard_work_bytes(m);
    shard_comm sc;
    cost_shard_comm(m, e->layer, c, &sc);
    v->n_ag = sc.n_ag;
    v->ts_ms = e->alt[0].term_ms[TERM_TS];
}

static const char *state_words(const cost_model *m)
{
    int mixed = m->elem_bytes < BYTES_PER_ELEM;
    switch (m->optimizer) {
    case OPT_ADAM: return mixed ? "fp16 weights, gradients and fp32 Adam state" : "weights, gradients and Adam state";
    case OPT_SGD: return mixed ? "fp16 and fp32 weights and gradients" : "weights and gradients";
    default: return mixed ? "fp16 weights, gradients and fp32 momentum" : "weights, gradients and momentum";
    }
}

/* One paragraph: replicated or sharded, and at what price. */
static void sharding_text(lw_buf *out, int width, const plan *p, const explain *e)
{
    if (e->params <= 0) return;
    const layer *l = &p->net->layers[e->layer];
    const cost_model *m = p->cm;
    shard_view v;
    shard_view_of(p, e, &v);
    char b1[32], b2[32], b3[32];
    const char *sync = sync_scheme_name(p->cl->sync);
    int level = sync_shard_level(p->cl->sync);
    if (v.replicas <= 1) {
        para(out, width, 2, "Sharding: none needed. %s's config gives each GPU its own %s of the weights (%s of %s), "
                            "held by no other GPU, so no sync scheme divides it further.",
             l->name, v.shards > 1 ? "channel block" : "copy", bytes_str(v.replicated, b1, sizeof b1), state_words(m));
        return;
    }
    if (level > 0 && v.group > 1) {
        para(out, width, 2, "Sharding (%s): %s's %.1f M parameters%s hold %s of %s on every GPU when replicated; "
                            "sharded over %d GPUs, %s each, at the price of %s its %s of weights %s a step and "
                            "reduce-scattering its gradients (t_s %.3f ms).",
             sync, l->name, e->params / 1e6 / v.shards, v.shards > 1 ? " per channel block" : "",
             bytes_str(v.replicated, b1, sizeof b1), state_words(m), v.group, bytes_str(v.sharded, b2, sizeof b2),
             level == 3 ? "all-gathering" : "all-gathering the updated", bytes_str(v.gather, b3, sizeof b3),
             v.n_ag == 2 ? "twice (before forward and before backward)" : "once", v.ts_ms);
        return;
    }
    para(out, width, 2, "Replicated (%s): %s's %.1f M parameters%s hold %s of %s on each of its %d replicas; zero3 "
                        "(fsdp) would shard them over the %d, %s each, at the price of all-gathering its %s of weights "
                        "twice a step (--sync zero1|zero2|zero3|hsdp).",
         sync, l->name, e->params / 1e6 / v.shards, v.shards > 1 ? " per channel block" : "",
         bytes_str(v.replicated, b1, sizeof b1), state_words(m), v.replicas, v.replicas,
         bytes_str(v.replicated / v.replicas, b2, sizeof b2), bytes_str(v.gather, b3, sizeof b3));
}

static cJSON *sharding_json(const plan *p, const explain *e)
{
    shard_view v;
    shard_view_of(p, e, &v);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "sync", sync_scheme_name(p->cl->sync));
    cJSON_AddBoolToObject(o, "sharded", e->params > 0 && sync_sharded(p->cl->sync) && v.group > 1);
    cJSON_AddNumberToObject(o, "replicas", v.replicas);
    cJSON_AddNumberToObject(o, "group", v.group);
    cJSON_AddNumberToObject(o, "replicated_state_bytes", v.replicated);
    cJSON_AddNumberToObject(o, "state_bytes", v.sharded);
    cJSON_AddNumberToObject(o, "gathered_weight_bytes", v.gather);
    cJSON_AddNumberToObject(o, "all_gathers_per_step", sync_sharded(p->cl->sync) && v.group > 1 ? v.n_ag : 0);
    return o;
}

/* "a quarter", "half", "1/8": each of d tasks' share. */
static const char *share_str(int d, char *b, size_t n)
{
    if (d == 2) return "half";
    if (d == 4) return "a quarter";
    snprintf(b, n, "1/%d", d);
    return b;
}

/* What a sequence layer's config does with its heads, sequence, partial
 * sums and replicas, in words (issue 32 item 9): nothing for a CNN layer or
 * a config split only by samples. Task groups of r or x are consecutive
 * GPUs (TRANSFORMER.md), so the first group's GPUs and node are named. */
/* The layer a tie joins li to (its embedding or lm_head), or -1. */
static int tie_partner(const plan *p, int li)
{
    for (int t = 0; t < p->cm->n_ties; t++) {
        if (p->cm->ties[t].embed == li) return p->cm->ties[t].lm_head;
        if (p->cm->ties[t].lm_head == li) return p->cm->ties[t].embed;
    }
    return -1;
}

/* A tied table: where it lives, and the chosen config's tie term. */
static void tie_text(lw_buf *out, int width, const plan *p, const explain *e)
{
    int other = tie_partner(p, e->layer);
    if (other < 0) return;
    const layer *l = &p->net->layers[e->layer];
    int em = l->type == LT_EMBEDDING ? e->layer : other, lm = l->type == LT_EMBEDDING ? other : e->layer;
    const explain_alt *a = &e->alt[0];
    char b1[32];
    para(out, width, 2,
         "Tied table: %s keeps the %ld x %ld token table it shares with %s, in its own layout (vocabulary split by "
         "its c, features by its r); %s splits the vocabulary by its r and the features by its c. The tie term moves "
         "the table between the two: %s reads its tiles in forward, and its gradient is added into %s's layout "
         "before %s's sync. Here it costs %.3f" NBSP "ms (%s), in %s's t_x %s; 0 where both lay the table out alike "
         "on the same GPUs.",
         p->net->layers[lm].name, p->net->layers[lm].vocab, p->net->layers[em].out_features, p->net->layers[em].name,
         p->net->layers[em].name,
         p->net->layers[em].name, p->net->layers[lm].name, p->net->layers[lm].name, a->tie_ms,
         bytes_str(a->tie_bytes, b1, sizeof b1), l->name, l->type == LT_EMBEDDING ? "out" : "in");
}

static void split_text(lw_buf *out, int width, const plan *p, const explain *e)
{
    const layer *l = &p->net->layers[e->layer];
    if (l->out.rank != 3) return;
    const config *c = &p->cm->configs[e->layer][e->alt[0].config];
    const int f = c->deg[DIM_C], s = c->deg[DIM_H], r = c->deg[DIM_R], x = c->deg[DIM_X];
    const int gpn = p->cl->gpus_per_node > 0 ? p->cl->gpus_per_node : 1;
    char b1[32], b2[32];
    if (f > 1) {
        if (l->type == LT_ATTENTION) {
            int heads = l->heads > 0 ? l->heads : 1, kv = l->kv_heads > 0 ? l->kv_heads : heads;
            para(out, width, 2, "%s splits its heads %d ways: each task computes %d of the %d heads%s.", l->name, f,
                 heads / f, heads, kv != heads ? " (with its share of the grouped K/V heads)" : "");
        } else if (l->type == LT_LM_HEAD || l->type == LT_EMBEDDING) {
            para(out, width, 2, "%s splits its %s %d ways: each task holds %s of the %ld %s.", l->name,
                 l->type == LT_LM_HEAD ? "vocabulary" : "hidden features", f, share_str(f, b1, sizeof b1),
                 (long)l->out.c, l->type == LT_LM_HEAD ? "logits of a token" : "features of a token");
        } else {
            para(out, width, 2, "%s splits its output features %d ways: each task computes %s of the %ld.", l->name,
                 f, share_str(f, b1, sizeof b1), (long)l->out.c);
        }
    }
    if (s > 1)
        para(out, width, 2, "%s splits the sequence %d ways: each task holds %ld of the %ld positions%s.", l->name, s,
             ((long)l->out.h + s - 1) / s, (long)l->out.h,
             l->type == LT_ATTENTION ? ", and all-gathers the K and V of the whole sequence (context parallelism)" : "");
    if (r > 1) {
        const layer *in = l->n_inputs ? &p->net->layers[l->inputs[0]] : l;
        long bs = (p->batch + c->deg[DIM_N] - 1) / c->deg[DIM_N], sq = ((long)l->out.h + s - 1) / s;
        long hc = ((long)l->out.c + f - 1) / f;
        double bytes = (double)bs * (double)sq * (double)hc * p->cm->elem_bytes;
        if (l->type == LT_EMBEDDING)
            para(out, width, 2, "%s splits the vocabulary across the %d GPUs %d-%d of node %d: each holds %s of the "
                                "table's rows and partial sums of every token's embedding, and one reduce-scatter of "
                                "b x s x h = %ldx%ldx%ld (%s) among them finishes the layer.",
                 l->name, r, 0, r - 1, 0 / gpn, share_str(r, b1, sizeof b1), bs, sq, hc,
                 bytes_str(bytes, b2, sizeof b2));
        else if (l->type == LT_LM_HEAD)
            para(out, width, 2, "%s splits its input features across the %d GPUs %d-%d of node %d: each holds %s of "
                                "the %ld-wide activations and partial sums of its logits, and one reduce-scatter of "
                                "b x s x v = %ldx%ldx%ld (%s) among them finishes them before the loss.",
                 l->name, r, 0, r - 1, 0 / gpn, share_str(r, b1, sizeof b1), (long)in->out.c, bs, sq, hc,
                 bytes_str(bytes, b2, sizeof b2));
        else
            para(out, width, 2, "%s splits its input features across the %d GPUs %d-%d of node %d: each holds %s of "
                                "the %ld-wide activations and partial sums of its whole output, and one reduce-scatter "
                                "of b x s x h = %ldx%ldx%ld (%s) among them finishes the layer (an all-reduce "
                                "where the next layer is replicated on the same GPUs, as in Megatron-LM).",
                 l->name, r, 0, r - 1, 0 / gpn, share_str(r, b1, sizeof b1), (long)in->out.c, bs, sq, hc,
                 bytes_str(bytes, b2, sizeof b2));
    }
    if (x > 1)
        para(out, width, 2, "%s runs replicated on the %d GPUs %d-%d: each computes the whole piece, so the next "
                            "layer reads it on its own GPU, and the replicas compute the same weight gradients "
                            "(nothing to sync among them).",
             l->name, x, 0, x - 1);
}

char *explain_text(const plan *p, const explain *e, int width)
{
    if (width < 60) width = 60;
    int li = e->layer;
    const layer *l = &p->net->layers[li];
    lw_buf out = {0};
    char sh[64], b1[32], b2[32], b3[32], ca[64];
    shape_format(l->out, sh, sizeof sh);
    cfg_str(p, li, e->alt[0].config, ca, sizeof ca);
    para(&out, width, 2, "%s (%s, output %s): config %s%s, one of %d configs on %d GPUs, batch %ld.", l->name,
         layer_type_name(l->type), sh, ca, e->pinned ? " (pinned)" : "", e->n_configs, p->gpus, p->batch);
    /* by sample or by channel, first: the question a reader comes with,
     * answered on the first screen (80x24) before the details */
    const explain_alt *ref = e->n_dims ? dims_reference(e) : NULL;
    if (ref) dims_headline(&out, width, p, e, ref);
    if (e->params > 0)
        para(&out, width, 2, "Weights: %.0f parameters (%.2f M), %s in fp32.", e->params, e->params / 1e6,
             bytes_str(e->weight_bytes, b1, sizeof b1));
    else
        para(&out, width, 2, "Weights: none (nothing to synchronise: t_s is 0 in every config).");
    split_text(&out, width, p, e);
    tie_text(&out, width, p, e);
    sharding_text(&out, width, p, e);
    if (l->type == LT_INPUT)
        para(&out, width, 2, "t_c: %.2f" NBSP "ms in every config: an input layer's t_c is the step's cost outside "
                             "the kernels (the cluster's step_overhead_ms, as the model scales it: loading the batch, "
                             "launches, the framework's bookkeeping), the same whatever the split, so it never changes "
                             "the choice; the config only decides how the batch is split for its consumers (t_x out).",
             e->alt[0].term_ms[TERM_TC]);
    para(&out, width, 2, "Activations: its output is %s for the batch, %s per task as %s; task 0 keeps %s on its GPU.",
         bytes_str(e->act_bytes, b1, sizeof b1), bytes_str(e->act_task_bytes, b2, sizeof b2), ca,
         bytes_str(e->mem_task_bytes, b3, sizeof b3));
    lw_buf_printf(&out, "\n");
    double limit = plan_memory_limit(&p->mset, p->cl);
    if (e->limited)
        para(&out, width, 2, "Each row: the best step with %s forced to that config, every other layer re-optimised "
                             "within the memory limit of %s per GPU, as the search picks it (" EQ1 ", ms). t_x in/out: "
                             "its incoming and outgoing edges; rest: all other terms.",
             l->name, gib_str(limit, b1, sizeof b1));
    else
        para(&out, width, 2, "Each row: the best step with %s forced to that config, every other layer re-optimised "
                             "(" EQ1 ", ms; memory not limited%s). t_x in/out: its incoming and outgoing edges; rest: "
                             "all other terms.",
             l->name, isfinite(limit) ? ": no strategy fits the limit, ! marks one over it" : "");
    alts_text(&out, width, p, e);
    lw_buf_printf(&out, "\n");
    verdict_text(&out, width, p, e, ca, limit);
    lw_buf_printf(&out, "\n");
    if (e->n_dims) {
        dims_text(&out, width, p, e);
        lw_buf_printf(&out, "\n");
    }
    placement_text(&out, width, p, e);
    if (e->n_cross) {
        lw_buf_printf(&out, "\n");
        para(&out, width, 2, "For the runner-up %s to win, with everything else as now (each probe a new cost model "
                             "and search%s):",
             cfg_str(p, li, e->alt[1].config, b1, sizeof b1),
             e->limited ? ", within the memory limit" : "");
        for (int i = 0; i < e->n_cross; i++) cross_text(&out, width, p, e, &e->cross[i]);
    }
    if (!out.s) lw_buf_printf(&out, "%s", "");
    return out.s;
}

/* ---- JSON ------------------------------------------------------------------- */

static const char *const family_keys[FAM__COUNT] = {"sample", "channel", "spatial", "contraction", "data"};

static cJSON *alt_json(const plan *p, const explain *e, const explain_alt *a)
{
    const layer *l = &p->net->layers[e->layer];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "config", config_to_json(l, &p->cm->configs[e->layer][a->config]));
    cJSON_AddStringToObject(o, "role", a->role);
    cJSON_AddNumberToObject(o, "gpus", a->gpus);
    cJSON *dev = cJSON_AddArrayToObject(o, "devices");
    for (int g = 0; g < a->gpus; g++) cJSON_AddItemToArray(dev, cJSON_CreateNumber(g));
    cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
    for (int k = 0; k < a->nodes; k++) cJSON_AddItemToArray(nodes, cJSON_CreateNumber(k));
    cJSON_AddNumberToObject(o, "compute_ms", a->term_ms[TERM_TC]);
    cJSON_AddNumberToObject(o, "sync_ms", a->term_ms[TERM_TS]);
    cJSON_AddNumberToObject(o, "transfer_in_ms", a->term_ms[TERM_TX_IN]);
    cJSON_AddNumberToObject(o, "transfer_out_ms", a->term_ms[TERM_TX_OUT]);
    cJSON_AddNumberToObject(o, "rest_ms", a->term_ms[TERM_REST]);
    cJSON_AddNumberToObject(o, "total_ms", a->total_ms);
    cJSON_AddNumberToObject(o, "delta_ms", a->total_ms - e->alt[0].total_ms);
    cJSON_AddNumberToObject(o, "sync_bytes", a->sync_bytes);
    cJSON_AddNumberToObject(o, "transfer_in_bytes", a->in_bytes);
    cJSON_AddNumberToObject(o, "transfer_out_bytes", a->out_bytes);
    if (tie_partner(p, e->layer) >= 0) { /* within transfer_in (lm_head) or transfer_out (embedding) */
        cJSON_AddNumberToObject(o, "tie_ms", a->tie_ms);
        cJSON_AddNumberToObject(o, "tie_bytes", a->tie_bytes);
    }
    cJSON_AddNumberToObject(o, "layers_changed", a->changed);
    cJSON_AddNumberToObject(o, "peak_memory_bytes", a->peak_bytes);
    cJSON_AddBoolToObject(o, "fits", a->fits);
    return o;
}

char *explain_json(const plan *p, const explain *e)
{
    const layer *l = &p->net->layers[e->layer];
    char sh[64];
    shape_format(l->out, sh, sizeof sh);
    cJSON *root = doc_new("layerwise-explain/1", p->cm, -1);
    cJSON_AddStringToObject(root, "model", "Eq. 1");
    cJSON_AddStringToObject(root, "layer", l->name);
    cJSON_AddStringToObject(root, "type", layer_type_name(l->type));
    cJSON_AddStringToObject(root, "output", sh);
    cJSON_AddBoolToObject(root, "pinned", e->pinned);
    cJSON_AddNumberToObject(root, "configs", e->n_configs);
    cJSON_AddNumberToObject(root, "parameters", e->params);
    cJSON_AddNumberToObject(root, "weight_bytes", e->weight_bytes);
    cJSON_AddNumberToObject(root, "activation_bytes", e->act_bytes);
    cJSON_AddNumberToObject(root, "activation_bytes_per_task", e->act_task_bytes);
    cJSON_AddNumberToObject(root, "memory_bytes_task0", e->mem_task_bytes);
    cJSON_AddItemToObject(root, "sharding", sharding_json(p, e));
    double limit = plan_memory_limit(&p->mset, p->cl);
    if (isfinite(limit)) cJSON_AddNumberToObject(root, "memory_limit_bytes", limit);
    else cJSON_AddNullToObject(root, "memory_limit_bytes");
    cJSON_AddBoolToObject(root, "within_memory_limit", e->limited);
    cJSON_AddNumberToObject(root, "configs_left_out", e->unasked);
    if (e->limited && p->mem.constrained) {
        cJSON *u = cJSON_AddObjectToObject(root, "unlimited_optimum");
        cJSON_AddItemToObject(u, "config", config_to_json(l, &p->cm->configs[e->layer][p->mem.unconstrained[e->layer]]));
        cJSON_AddNumberToObject(u, "total_ms", p->mem.unconstrained_ms);
        cJSON_AddNumberToObject(u, "peak_memory_bytes", p->mem.unconstrained_peak);
    }
    cJSON *alts = cJSON_AddArrayToObject(root, "alternatives");
    for (int i = 0; i < e->n_alts; i++) cJSON_AddItemToArray(alts, alt_json(p, e, &e->alt[i]));
    if (e->decides >= 0) {
        cJSON_AddStringToObject(root, "decides", explain_term_name((explain_term)e->decides));
        cJSON_AddNumberToObject(root, "decides_ms", e->alt[1].term_ms[e->decides] - e->alt[0].term_ms[e->decides]);
    } else {
        cJSON_AddNullToObject(root, "decides");
        cJSON_AddNullToObject(root, "decides_ms");
    }
    cJSON *dims = cJSON_AddArrayToObject(root, "dimensions");
    for (int i = 0; i < e->n_dims; i++) {
        cJSON *o = alt_json(p, e, &e->dim[i]);
        cJSON_AddStringToObject(o, "family", e->dim[i].family == FAM_DATA ? "data" : family_keys[e->dim[i].family]);
        cJSON_AddBoolToObject(o, "chosen", e->dim[i].config == e->alt[0].config);
        cJSON_AddItemToArray(dims, o);
    }
    cJSON *pl = cJSON_AddObjectToObject(root, "placement");
    cJSON_AddNumberToObject(pl, "gpus_per_node", p->cl->gpus_per_node);
    cJSON_AddNumberToObject(pl, "nodes_in_use", nodes_of(p->cl, p->gpus));
    cJSON_AddBoolToObject(pl, "inside_one_node", e->alt[0].nodes == 1);
    cJSON_AddNumberToObject(pl, "intra_node_bandwidth_gbs", p->cl->intra.bandwidth_gbs);
    cJSON_AddNumberToObject(pl, "inter_node_bandwidth_gbs", p->cl->inter.bandwidth_gbs);
    cJSON *cr = cJSON_AddArrayToObject(root, "crossovers");
    for (int i = 0; i < e->n_cross; i++) {
        const explain_cross *c = &e->cross[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "parameter", param_key(c->param));
        cJSON_AddNumberToObject(o, "now", c->now);
        cJSON *rg = cJSON_AddArrayToObject(o, "range");
        cJSON_AddItemToArray(rg, cJSON_CreateNumber(c->lo));
        cJSON_AddItemToArray(rg, cJSON_CreateNumber(c->hi));
        cJSON_AddStringToObject(o, "method", e->limited ? "doubling outward from now, then bisection; within the memory limit"
                                                        : "doubling outward from now, then bisection; memory not limited");
        cJSON_AddNumberToObject(o, "probes", c->probes);
        cJSON_AddBoolToObject(o, "found", c->found && c->done && !c->failed);
        if (c->found && c->done && !c->failed) {
            cJSON_AddNumberToObject(o, "value", c->value);
            cJSON_AddStringToObject(o, "direction", c->value < c->now ? "below" : "above");
            cJSON_AddNumberToObject(o, "chosen_total_ms", c->totals[0]);
            cJSON_AddNumberToObject(o, "runner_up_total_ms", c->totals[1]);
        } else {
            cJSON_AddNullToObject(o, "value");
        }
        if (c->failed) cJSON_AddStringToObject(o, "error", c->msg);
        cJSON_AddItemToArray(cr, o);
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

/* ---- the lecture view ------------------------------------------------------ */

int explain_lecture(const plan *p, explain_lecture_row *rows, lw_error *err)
{
    if (!p->cm || !p->cm->t_c || !p->best) return lw_fail(err, 1, "there is no searched strategy to show");
    int L = p->net->n_layers;
    int *data = lw_malloc(sizeof(int) * (size_t)L), *model = lw_malloc(sizeof(int) * (size_t)L);
    plan_baseline(p, BASE_DATA, data);
    plan_baseline(p, BASE_MODEL, model);
    strategy_eval ed, em;
    plan_evaluate(p, data, &ed);
    plan_evaluate(p, model, &em);
    for (int li = 0; li < L; li++) {
        explain_lecture_row *r = &rows[li];
        r->sample_config = data[li];
        r->channel_config = model[li];
        r->sync_bytes = ed.layers[li].sync_bytes;
        r->sync_ms = ed.layers[li].sync_ms;
        r->move_bytes = em.layers[li].transfer_bytes;
        r->move_ms = em.layers[li].transfer_ms;
        r->chosen = p->best[li];
    }
    strategy_eval_free(&ed);
    strategy_eval_free(&em);
    free(data);
    free(model);
    return 0;
}
