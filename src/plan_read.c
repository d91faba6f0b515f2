/*
 * plan_read: what the front ends read of a plan beside its fields — a
 * layer's configs and terms, sizes, strategies evaluated, simulated and
 * read on the plan's model, the why-not and scaling rows — so that no front
 * end reads the cost model itself (plan.h's read API).
 */
#include "plan_internal.h"
#include "pipeline.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

int plan_has_model(const plan *p) { return p->cm != NULL; }

const network *plan_net(const plan *p) { return p->net; }
const cluster *plan_cluster(const plan *p) { return p->cl; }
const profile *plan_profile(const plan *p) { return p->prof; }
const plan_settings *plan_run_settings(const plan *p) { return &p->set; }
const plan_memory_settings *plan_memory_settings_of(const plan *p) { return &p->mset; }
int plan_gpus(const plan *p) { return p->gpus; }
long plan_batch(const plan *p) { return p->batch; }
const search_result *plan_search_result(const plan *p) { return p->sr; }
const cost_graph *plan_graph(const plan *p) { return p->cg; }
const int *plan_best(const plan *p) { return p->best; }
const strategy_eval *plan_best_eval(const plan *p) { return &p->best_eval; }
const plan_memory *plan_memory_of(const plan *p) { return &p->mem; }
const int *plan_pinned(const plan *p) { return p->pinned; }
double plan_search_ms(const plan *p) { return p->search_ms; }
int plan_from_prefetch(const plan *p) { return p->from_prefetch; }
int plan_repriced(const plan *p) { return p->repriced; }
int plan_counts_given_up(const plan *p) { return p->counts_given_up; }
atomic_int *plan_cancel_flag(const plan *p) { return p->cancel; }
int plan_unsearched(const plan *p) { return p->unsearched; }

int plan_n_configs(const plan *p, int li) { return p->cm->n_configs[li]; }

int plan_blocks(const plan *p, net_block_run *out, int max) { return net_find_blocks(p->net, out, max); }

const config *plan_config(const plan *p, int li, int k) { return &p->cm->configs[li][k]; }

void plan_format_config(const plan *p, int li, const config *c, char *buf, size_t n)
{
    config_format_layer(&p->net->layers[li], c, buf, n);
}

int plan_config_index(const plan *p, int li, const config *c)
{
    return config_find(p->cm->configs[li], p->cm->n_configs[li], c);
}

double plan_t_c(const plan *p, int li, int k)
{
    const cost_model *m = p->cm;
    return m->t_c ? m->t_c[li][k] : cost_t_c(m, li, &m->configs[li][k], NULL);
}

double plan_t_s(const plan *p, int li, int k)
{
    const cost_model *m = p->cm;
    return m->t_s ? m->t_s[li][k] : cost_t_s(m, li, &m->configs[li][k], NULL);
}

double plan_build_ms(const plan *p) { return p->cm ? p->cm->build_ms : 0.0; }

double plan_workspace_bytes(const plan *p) { return p->cm->workspace_bytes; }

precision plan_precision(const plan *p) { return p->cm->prec; }

double plan_peak_tflops(const plan *p) { return p->cm->gk.peak_tflops; }

int plan_n_edges(const plan *p) { return p->cm->n_edges; }

void plan_edge(const plan *p, int e, int *from, int *to)
{
    *from = p->cm->e_from[e];
    *to = p->cm->e_to[e];
}

const double *plan_tx_row(const plan *p, int e, int i)
{
    const cost_model *m = p->cm;
    return m->t_x ? &m->t_x[e][i * m->n_configs[m->e_to[e]]] : NULL;
}

long plan_tx_entries(const plan *p) { return p->cm ? p->cm->tx_pairs_computed + p->cm->tx_pairs_reused : 0; }

double plan_activation_bytes(const plan *p, int li)
{
    double elems = 0;
    if (li >= 0) elems = (double)shape_elems(p->net->layers[li].out);
    else
        for (int i = 0; i < p->net->n_layers; i++) elems += (double)shape_elems(p->net->layers[i].out);
    return elems * (double)p->batch * p->cm->elem_bytes;
}

double plan_task_memory(const plan *p, int li, const config *c, int task)
{
    return cost_memory_task(p->cm, li, c, task, NULL);
}

double plan_peak_memory(const plan *p, const int *cfg, double *per_gpu) { return cost_memory(p->cm, cfg, per_gpu); }

void plan_evaluate(const plan *p, const int *cfg, strategy_eval *ev) { strategy_evaluate(p->cm, cfg, ev); }

void plan_baseline(const plan *p, baseline_kind kind, int *cfg) { strategy_baseline(p->cm, kind, cfg); }

int plan_strategy_file(const plan *p, const char *path, int *cfg, lw_error *err)
{
    size_t len;
    char *text = lw_read_file(path, &len, err);
    int rc = -1;
    if (text && pipe_file_is_pipeline(text, len))
        lw_fail(err, 2, "%s: a pipelined strategy (%s, with stages), which eval -s and simulate -s read; "
                        "a one-stage layerwise-strategy/1 file is needed here", path, PIPE_FORMAT);
    else if (text)
        rc = strategy_from_json(p->cm, text, len, path, cfg, err);
    free(text);
    return rc;
}

char *plan_strategy_json(const plan *p, const int *cfg, const strategy_eval *ev, const char *algorithm)
{
    return strategy_to_json(p->cm, cfg, ev, algorithm, p->sr ? p->sr->n_left : 0, plan_final_method_name(p));
}

char *plan_pipeline_json(const plan *p)
{
    if (!p->pipe) return NULL;
    cJSON *root = pipe_plan_document(p->pipe, p->cm, p->gpus, p->pset.megatron ? "megatron" : "pipeline-dp");
    char *doc = cJSON_Print(root);
    cJSON_Delete(root);
    return doc;
}

static int write_doc(FILE *f, void *user, lw_error *err)
{
    if (fputs(user, f) < 0 || fputc('\n', f) < 0) return lw_fail(err, 1, "write failed");
    return 0;
}

int plan_write_strategy(const plan *p, const int *cfg, const strategy_eval *ev, const char *algorithm,
                        const char *path, const char **format, lw_error *err)
{
    int piped = p->pipe != NULL;
    char *doc = piped ? plan_pipeline_json(p) : plan_strategy_json(p, cfg, ev, algorithm);
    if (format) *format = piped ? PIPE_FORMAT : "layerwise-strategy/1";
    if (!doc) return lw_fail(err, 1, "%s: out of memory", path);
    int rc = lw_write_file_atomic(path, write_doc, doc, err);
    free(doc);
    return rc;
}

sim_result *plan_simulate(const plan *p, const int *cfg, const sim_options *o) { return sim_run(p->cm, cfg, o); }

refine_search *plan_refine_begin(const plan *p, const int *start, const refine_bounds *rb, unsigned long long seed)
{
    return refine_begin(p->cm, start, rb, seed);
}

const cost_model *plan_model(const plan *p) { return p->cm; }

int plan_layers_changed(const plan *p, int li, const int *cfg)
{
    const cost_model *m = p->cm;
    int n = 0;
    for (int i = 0; i < m->n_layers; i++)
        if (i != li && !config_equal(&m->configs[i][cfg[i]], &m->configs[i][p->best[i]])) n++;
    return n;
}

double plan_tx_in(const plan *p, int li, int k, const int *cfg)
{
    const cost_model *m = p->cm;
    double ms = 0;
    for (int ed = 0; ed < m->n_edges; ed++)
        if (m->e_to[ed] == li) ms += cost_edge_ms(m, ed, cfg[m->e_from[ed]], k, NULL);
    return ms;
}

/* The four strategies on m into row (untabled: the baselines alone). */
static void scale_fill(const cost_model *m, int untabled, plan_scale_row *row)
{
    for (int s = 0; s < 4; s++) row->ips[s] = row->bytes[s] = row->total_ms[s] = row->sim_ips[s] = row->mfu[s] = NAN;
    if (!m) return;
    strategy_eval ev[STRATEGY_COMPARED];
    int L = m->n_layers;
    int *ci = lw_malloc(sizeof(int) * STRATEGY_COMPARED * (size_t)(L ? L : 1));
    int searched = 0;
    if (untabled) {
        for (int s = 0; s < STRATEGY_COMPARED; s++) {
            ev[s] = (strategy_eval){0};
            if (s >= BASE__COUNT) continue;
            strategy_baseline(m, (baseline_kind)s, ci + (size_t)s * (size_t)L);
            strategy_evaluate(m, ci + (size_t)s * (size_t)L, &ev[s]);
        }
    } else {
        searched = strategy_evaluate_compared(m, NULL, ev, ci) == 0;
    }
    for (int s = 0; s < STRATEGY_COMPARED; s++) {
        if (s < STRATEGY_COMPARED - 1 || searched) {
            row->ips[s] = ev[s].images_per_s;
            row->bytes[s] = ev[s].bytes_per_step;
            row->total_ms[s] = ev[s].total_ms;
            row->mfu[s] = strategy_eval_mfu(&ev[s]);
            double sim = sim_step_ms(m, ci + (size_t)s * (size_t)L, SIM_SUMMARY_MAX_TASKS);
            row->sim_ips[s] = (double)m->batch / (sim * 1e-3); /* NaN stays NaN */
        }
        strategy_eval_free(&ev[s]);
    }
    free(ci);
}

const plan_pipe_settings *plan_pipe_settings_of(const plan *p) { return &p->pset; }

/* The pipeline ps asks for at m's setting (its cluster, GPU count and
 * batch) under p's memory settings, into r: have where it is computed
 * already (the plan's own), else searched. */
static void scale_pipe_fill(const plan *p, const cost_model *m, const plan_pipe_settings *ps, const pipe_plan *have,
                            plan_scale_pipe *r)
{
    memset(r, 0, sizeof *r);
    if (!ps || ps->stages <= 1 || !m) return;
    const int g = m->gpus, P = ps->stages;
    r->stages = P;
    r->megatron = ps->megatron != 0;
    r->total_ms = r->images_per_s = r->sim_ips = r->model_flops = r->tflops = r->mfu = NAN;
    r->bubble_fraction = r->peak_memory_bytes = NAN;
    if (g % P != 0) {
        snprintf(r->why, sizeof r->why, "%d stages do not divide %d GPU%s", P, g, g == 1 ? "" : "s");
        return;
    }
    if (g / P > PLAN_AUTO_SEARCH_MAX_GPUS) {
        snprintf(r->why, sizeof r->why, "stages of %d GPUs, past the %d that scale searches", g / P,
                 PLAN_AUTO_SEARCH_MAX_GPUS);
        return;
    }
    pipe_plan *own = NULL;
    const pipe_plan *q = have;
    if (!q) {
        lw_error err = {0};
        q = own = plan_pipe_run(p, ps, m->cl, g, m->batch, &p->mset, &err);
        if (!q) {
            snprintf(r->why, sizeof r->why, "%.240s", err.msg[0] ? err.msg : "no pipeline");
            return;
        }
    }
    r->found = 1;
    r->stages = q->p;
    r->microbatches = q->m;
    r->vp = q->v;
    r->schedule = (int)q->schedule;
    r->gpus_used = q->gpus;
    r->total_ms = q->step_ms;
    r->images_per_s = q->step_ms > 0 ? m->batch * 1000.0 / q->step_ms : 0;
    r->model_flops = strategy_model_flops_per_step(m);
    strategy_achieved(m, q->step_ms, g, &r->tflops, &r->mfu);
    r->bubble_fraction = q->bubble_fraction;
    r->peak_memory_bytes = q->peak_memory_bytes;
    r->fits = q->fits;
    pipe_sim *sim = pipe_plan_simulate(q);
    if (sim && sim->step_ms > 0) r->sim_ips = m->batch * 1000.0 / sim->step_ms;
    pipe_sim_free(sim);
    pipe_plan_free(own);
}

void plan_scale_pipe_compute(const plan *p, const plan_pipe_settings *ps, plan_scale_pipe *r)
{
    const int same = ps && p->pipe && memcmp(ps, &p->pset, sizeof *ps) == 0;
    scale_pipe_fill(p, p->cm, ps, same ? p->pipe : NULL, r);
}

void plan_scale_row_compute(const plan *p, plan_scale_row *row, lw_error *err)
{
    cost_model *own = NULL;
    const cost_model *m = p->cm;
    const int own_count = row->gpus == p->gpus && m;
    const int untabled = !own_count && row->gpus > PLAN_AUTO_SEARCH_MAX_GPUS;
    if (!own_count) {
        const long batch = plan_batch_for(&p->set, row->gpus);
        own = untabled ? cost_model_open(p->net, p->cl, p->prof, row->gpus, batch, err)
                       : cost_model_build(p->net, p->cl, p->prof, row->gpus, batch, err);
        m = own;
    }
    row->x = row->gpus;
    scale_fill(m, untabled, row);
    scale_pipe_fill(p, m, &p->pset, own_count ? p->pipe : NULL, &row->pipe);
    cost_model_free(own);
}

void plan_sweep_row_compute(const plan *p, plan_sweep_axis axis, plan_scale_row *row, lw_error *err)
{
    if (axis == PLAN_SWEEP_GPUS) {
        row->gpus = (int)row->x;
        plan_scale_row_compute(p, row, err);
        return;
    }
    row->gpus = p->gpus;
    cluster *cl = cluster_clone(p->cl);
    long batch = p->batch;
    if (axis == PLAN_SWEEP_INTER_BW) {
        cl->inter.bandwidth_gbs = row->x;
    } else if (axis == PLAN_SWEEP_BATCH) {
        batch = (long)row->x * p->gpus;
    } else {
        int total = cluster_gpus(p->cl) > p->gpus ? cluster_gpus(p->cl) : p->gpus, gpn = (int)row->x;
        cl->gpus_per_node = gpn;
        cl->nodes = (total + gpn - 1) / gpn;
        if (cl->nics_per_node > gpn) cl->nics_per_node = gpn;
    }
    cost_model *m = cost_model_build(p->net, cl, p->prof, p->gpus, batch, err);
    scale_fill(m, 0, row);
    scale_pipe_fill(p, m, &p->pset, NULL, &row->pipe);
    cost_model_free(m);
    cluster_free(cl);
}

int plan_scale_gpus_for(const plan_scale_row *rows, int n, int s, double ips, int simulated)
{
    int best = -1;
    if (s < 0 || s > 4) return -1;
    for (int i = 0; i < n; i++) {
        const plan_scale_pipe *q = &rows[i].pipe;
        double v = s == 4 ? (q->found ? (simulated ? q->sim_ips : q->images_per_s) : NAN)
                          : simulated ? rows[i].sim_ips[s] : rows[i].ips[s];
        if (isfinite(v) && v >= ips && (best < 0 || rows[i].gpus < rows[best].gpus)) best = i;
    }
    return best;
}

/* ---- pipelines ---- */

int plan_schedule_from_name(const char *s)
{
    int k = s ? pipe_schedule_from_name(s) : -1;
    return k < 0 ? -1 : k + 1;
}

const char *plan_schedule_name(int schedule)
{
    if (schedule < 0 || schedule > PIPE_INTERLEAVED + 1) return "?";
    return pipe_schedule_name(schedule > 0 ? (pipe_schedule)(schedule - 1) : PIPE_1F1B);
}

int plan_stage_count(const plan *p)
{
    return p->pipe ? p->pipe->n_stages : 1;
}

int plan_stage_of(const plan *p, int li)
{
    if (li < 0 || li >= p->net->n_layers) return -1;
    for (int i = 0; p->pipe && i < p->pipe->n_stages; i++)
        if (li < p->pipe->stages[i].last) return i;
    return 0;
}

int plan_stage_info(const plan *p, int i, plan_stage_summary *s)
{
    if (i < 0 || i >= plan_stage_count(p)) return -1;
    if (!p->pipe) {
        double t = p->best_eval.total_ms;
        *s = (plan_stage_summary){0, p->net->n_layers, 0, p->gpus, t, t, 0, 1, p->best_eval.peak_memory_bytes};
        return 0;
    }
    const pipe_stage *q = &p->pipe->stages[i];
    *s = (plan_stage_summary){q->first, q->last, q->gpu0, q->gpus, q->t_ms, q->f_ms, q->p2p_ms, q->held, q->memory_bytes};
    return 0;
}

int plan_pipeline_info(const plan *p, plan_pipeline_summary *s)
{
    const pipe_plan *q = p->pipe;
    if (!q) {
        *s = (plan_pipeline_summary){1, 1, 1, -1, "", 0, p->batch, p->best_eval.total_ms, 0,
                                     p->best_eval.peak_memory_bytes, p->mem.fits};
        return 0;
    }
    *s = (plan_pipeline_summary){q->p, q->m, q->v, (int)q->schedule, pipe_schedule_name(q->schedule),
                                 p->pset.megatron != 0, q->microbatch, q->step_ms, q->bubble_fraction,
                                 q->peak_memory_bytes, q->fits};
    return 1;
}

int plan_stage_explain(const plan *p, int li, char *buf, size_t n)
{
    pipe_explain e;
    lw_error err = {0};
    if (!p->pipe) return snprintf(buf, n, "not pipelined"), -1;
    if (pipe_explain_layer(p->pipe, li, &e, &err) != 0) return snprintf(buf, n, "%s", err.msg), -1;
    const pipe_stage *st = &p->pipe->stages[e.stage];
    const network *net = p->net;
    int il = p->pipe->schedule == PIPE_INTERLEAVED; /* stages are chunks; the max is over the groups' loads */
    size_t k = (size_t)snprintf(buf, n, "%s: %s %d of %d (GPUs %d-%d), t%d %.3f ms; T %.3f ms, max %s %.3f (%s %d)",
                                net->layers[li].name, il ? "chunk" : "stage", e.stage + 1, p->pipe->n_stages, st->gpu0,
                                st->gpu0 + st->gpus - 1, e.stage + 1, st->t_ms, e.step_ms, il ? "T_g" : "t", e.max_t,
                                il ? "group" : "stage", e.max_stage + 1);
    for (int i = 0; i < e.n_moves && k < n; i++) {
        const pipe_move *mv = &e.moves[i];
        char what[64];
        snprintf(what, sizeof what, "; boundary %d|%d %s", mv->boundary + 1, mv->boundary + 2,
                 mv->dir < 0 ? "earlier" : "later");
        if (mv->valid)
            k += (size_t)snprintf(buf + k, n - k, "%s: T %.3f ms (%+.3f)", what, mv->step_ms, mv->step_ms - e.step_ms);
        else
            k += (size_t)snprintf(buf + k, n - k, "%s: no cut", what);
    }
    return 0;
}

pipe_sim *plan_pipe_simulate(const plan *p)
{
    return p->pipe ? pipe_plan_simulate(p->pipe) : NULL;
}

char *plan_pipe_trace(const plan *p, const pipe_sim *r)
{
    return p->pipe && r ? pipe_sim_trace(r, p->pipe) : NULL;
}

int plan_stage_layer_config(const plan *p, int li, config *c, double *t_c_ms)
{
    int i = plan_stage_of(p, li);
    if (i < 0) return -1;
    const cost_model *m = p->pipe ? p->pipe->stages[i].cm : p->cm;
    int k = p->pipe ? p->pipe->stages[i].config[li] : p->best[li];
    if (k < 0 || k >= m->n_configs[li]) return -1;
    *c = m->configs[li][k];
    if (t_c_ms) *t_c_ms = m->t_c ? m->t_c[li][k] : NAN;
    return 0;
}

int plan_stage_layer_figures(const plan *p, int li, plan_stage_layer *f)
{
    int i = plan_stage_of(p, li);
    if (i < 0 || plan_stage_layer_config(p, li, &f->c, NULL) != 0) return -1;
    f->stage = i;
    if (!p->pipe) {
        const layer_eval *le = &p->best_eval.layers[li];
        f->t_c_ms = le->compute_ms, f->t_s_ms = le->sync_ms, f->t_x_ms = le->transfer_ms;
        f->gpu0 = 0;
        f->gpus = config_tasks(&f->c);
        return 0;
    }
    const pipe_stage *st = &p->pipe->stages[i];
    const cost_model *m = st->cm;
    int k = st->config[li];
    f->t_c_ms = m->t_c[li][k];
    f->t_s_ms = m->t_s[li][k];
    f->t_x_ms = 0;
    for (int e = 0; e < m->n_edges; e++) {
        if (m->e_to[e] != li) continue;
        int j = m->e_from[e] >= st->first ? st->config[m->e_from[e]] : st->input_config;
        if (j >= 0) f->t_x_ms += m->t_x[e][j * m->n_configs[li] + k];
    }
    for (int q = 0; q < m->n_ties; q++) { /* a tie within the stage: the lm_head's, once a step as the stage has it */
        const cost_tie *t = &m->ties[q];
        if (t->lm_head == li && t->embed >= st->first && t->embed < st->last && t->t_tie)
            f->t_x_ms += t->t_tie[st->config[t->embed] * m->n_configs[li] + k] / p->pipe->m;
    }
    f->gpu0 = st->gpu0;
    f->gpus = config_tasks(&f->c);
    return 0;
}
