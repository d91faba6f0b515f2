/*
 * pipeline_sim: a pipelined step run micro-batch by micro-batch under its
 * schedule (pipeline.h): one task per (stage, micro-batch, forward or
 * backward) on the stage's GPUs, the point-to-point sends between stages
 * as delays, each stage's gradient sync after its last backward.
 */
#include "pipeline.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Device i's order of work over virtual stages s = chunk p + i: entries
 * (s, micro-batch, 1 forward / 0 backward). GPipe: every forward, then
 * every backward; 1F1B: p - i - 1 forwards, then one forward one
 * backward; interleaved (Megatron-LM's schedule): forward k of the device
 * is micro-batch (k / (p v)) p + k % p of chunk (k % (p v)) / p, backward k
 * the same micro-batch of chunk v - 1 - (k % (p v)) / p, after (p - i - 1) 2
 * + (v - 1) p warm-up forwards. */
typedef struct sim_op {
    int s, mb, fwd;
} sim_op;

static sim_op op_of(int p, int v, int i, int k, int fwd)
{
    int g = k % (p * v), chunk = g / p;
    return (sim_op){(fwd ? chunk : v - 1 - chunk) * p + i, (k / (p * v)) * p + k % p, fwd};
}

static void device_order(pipe_schedule s, int p, int v, int i, int m, sim_op *ops)
{
    int n = 0, total = m * v;
    if (s == PIPE_GPIPE) {
        for (int k = 0; k < m; k++) ops[n++] = (sim_op){i, k, 1};
        for (int k = 0; k < m; k++) ops[n++] = (sim_op){i, k, 0};
        return;
    }
    int w = s == PIPE_INTERLEAVED ? (p - i - 1) * 2 + (v - 1) * p : p - i - 1;
    if (w > total) w = total;
    for (int k = 0; k < w; k++) ops[n++] = op_of(p, v, i, k, 1);
    for (int k = 0; k < total - w; k++) ops[n++] = op_of(p, v, i, w + k, 1), ops[n++] = op_of(p, v, i, k, 0);
    for (int k = total - w; k < total; k++) ops[n++] = op_of(p, v, i, k, 0);
}

void pipe_device_order(pipe_schedule s, int p, int v, int i, int m, int *vstage, int *mb, int *fwd)
{
    sim_op *ops = lw_malloc(sizeof(sim_op) * (size_t)(2 * m * v));
    device_order(s, p, v, i, m, ops);
    for (int k = 0; k < 2 * m * v; k++) vstage[k] = ops[k].s, mb[k] = ops[k].mb, fwd[k] = ops[k].fwd;
    free(ops);
}

/* When op may start on its device (-1: it waits for a task not yet run):
 * its input from the virtual stage before (forward) or after (backward),
 * c[s] the send from virtual stage s to s + 1 (each way). */
static double ready_at(const sim_op *op, int m, int S, const double *fend, const double *bend, const double *c)
{
    int s = op->s, k = op->mb;
    if (op->fwd) {
        if (s == 0) return 0;
        return fend[(s - 1) * m + k] < 0 ? -1 : fend[(s - 1) * m + k] + c[s - 1];
    }
    if (fend[s * m + k] < 0 || (s + 1 < S && bend[(s + 1) * m + k] < 0)) return -1;
    double r = fend[s * m + k];
    if (s + 1 < S && bend[(s + 1) * m + k] + c[s] > r) r = bend[(s + 1) * m + k] + c[s];
    return r;
}

pipe_sim *pipe_simulate(pipe_schedule s, int p, int m, int v, const double *tf, const double *tb, const double *c,
                        const double *y)
{
    if (p < 1 || v < 1) return NULL;
    int S = p * v; /* each group's v chunks 1/v of its time, its sends c[i] each (c[p-1]: last to first) */
    double *f = lw_malloc(sizeof(double) * (size_t)S * 3), *b = f + S, *cc = f + 2 * S;
    for (int j = 0; j < S; j++) f[j] = tf[j % p] / v, b[j] = tb[j % p] / v, cc[j] = c[j % p];
    pipe_sim *r = pipe_simulate_chunks(s, p, m, v, f, b, cc, y);
    free(f);
    return r;
}

/* A tie's all-reduce for sim_run: tie_ms between groups ga and gb. */
typedef struct sim_tie {
    double ms;
    int ga, gb;
} sim_tie;

static pipe_sim *sim_run(pipe_schedule s, int p, int m, int v, const double *tf, const double *tb, const double *c,
                         const double *y, sim_tie tie);

pipe_sim *pipe_simulate_chunks(pipe_schedule s, int p, int m, int v, const double *tf, const double *tb,
                               const double *c, const double *y)
{
    return sim_run(s, p, m, v, tf, tb, c, y, (sim_tie){0, 0, 0});
}

/* pipe_simulate_chunks with a tie's all-reduce (tie.ms > 0): once both
 * groups' last backward is done, on each of them, before their syncs. */
static pipe_sim *sim_run(pipe_schedule s, int p, int m, int v, const double *tf, const double *tb, const double *c,
                         const double *y, sim_tie tie)
{
    if (p < 1 || m < 1 || v < 1 || (s != PIPE_INTERLEAVED && v != 1) || (s == PIPE_INTERLEAVED && m % p)) return NULL;
    int S = p * v, per = 2 * m * v;
    pipe_sim *r = lw_calloc(1, sizeof *r);
    r->p = p, r->m = m;
    r->tasks = lw_malloc(sizeof(pipe_sim_task) * (size_t)(p * per + p + 2));
    r->busy_ms = lw_calloc((size_t)p, sizeof(double));
    double *fend = lw_malloc(sizeof(double) * (size_t)(S * m)), *bend = lw_malloc(sizeof(double) * (size_t)(S * m));
    for (int k = 0; k < S * m; k++) fend[k] = bend[k] = -1;
    sim_op *ops = lw_malloc(sizeof(sim_op) * (size_t)(p * per));
    int *next = lw_calloc((size_t)p, sizeof(int));
    double *free_at = lw_calloc((size_t)p, sizeof(double));
    for (int i = 0; i < p; i++) device_order(s, p, v, i, m, ops + (long)i * per);
    for (int done = 0, progressed = 1; done < p * per && progressed;) {
        progressed = 0;
        for (int i = 0; i < p; i++) {
            if (next[i] == per) continue;
            const sim_op *op = &ops[(long)i * per + next[i]];
            double ready = ready_at(op, m, S, fend, bend, c);
            if (ready < 0) continue;
            double start = ready > free_at[i] ? ready : free_at[i], len = op->fwd ? tf[op->s] : tb[op->s];
            pipe_sim_task *t = &r->tasks[r->n_tasks++];
            *t = (pipe_sim_task){i, op->mb, op->fwd ? PIPE_SIM_FORWARD : PIPE_SIM_BACKWARD, start, start + len, op->s / p};
            (op->fwd ? fend : bend)[op->s * m + op->mb] = free_at[i] = start + len;
            r->busy_ms[i] += len;
            next[i]++, done++, progressed = 1;
        }
    }
    r->step_ms = 0;
    double busy = 0;
    if (tie.ms > 0 && tie.ga != tie.gb) {
        double at = free_at[tie.ga] > free_at[tie.gb] ? free_at[tie.ga] : free_at[tie.gb];
        for (int k = 0; k < 2; k++) {
            int g = k ? tie.gb : tie.ga;
            r->tasks[r->n_tasks++] = (pipe_sim_task){g, -1, PIPE_SIM_TIE, at, at + tie.ms, 0};
            free_at[g] = at + tie.ms;
            r->busy_ms[g] += tie.ms;
        }
    }
    for (int i = 0; i < p; i++) {
        pipe_sim_task *t = &r->tasks[r->n_tasks++];
        *t = (pipe_sim_task){i, -1, PIPE_SIM_SYNC, free_at[i], free_at[i] + y[i], 0};
        if (t->end_ms > r->step_ms) r->step_ms = t->end_ms;
        busy += r->busy_ms[i];
        r->busy_ms[i] += y[i];
    }
    r->bubble_fraction = r->step_ms > 0 ? 1 - busy / (p * r->step_ms) : 0;
    free(fend);
    free(bend);
    free(ops);
    free(next);
    free(free_at);
    return r;
}

void pipe_sim_free(pipe_sim *r)
{
    if (!r) return;
    free(r->tasks);
    free(r->busy_ms);
    free(r);
}

pipe_sim *pipe_plan_simulate(const pipe_plan *pp)
{
    int p = pp->p, S = pp->n_stages;
    double *tf = lw_malloc(sizeof(double) * (size_t)(3 * S + p)), *tb = tf + S, *c = tf + 2 * S, *y = tf + 3 * S;
    for (int i = 0; i < p; i++) y[i] = 0;
    for (int j = 0; j < S; j++) {
        const pipe_stage *st = &pp->stages[j];
        double fwd_sum = 0;
        for (int l = st->first; l < st->last; l++) {
            double fw, bw, tc = cost_t_c_parts(st->cm, l, &st->cm->configs[l][st->config[l]], NULL, &fw, &bw);
            fwd_sum += fw + bw > 0 ? tc * fw / (fw + bw) : 0;
        }
        tf[j] = fwd_sum + st->transfer_ms / 2;
        tb[j] = st->compute_ms - fwd_sum + st->transfer_ms / 2;
        c[j] = st->p2p_ms / 2.0; /* one way: the stage's (chunk's) own send */
        y[st->group] += st->sync_ms;
    }
    sim_tie tie = {pp->tie_ms, 0, 0};
    if (tie.ms > 0) { /* the groups of the stages holding the first crossing tie's layers */
        const cost_model *cm = pp->stages[0].cm;
        for (int k = 0, found = 0; k < cm->n_ties && !found; k++)
            for (int j = 0; j < S; j++) {
                const pipe_stage *st = &pp->stages[j];
                if (cm->ties[k].embed >= st->first && cm->ties[k].embed < st->last) tie.ga = st->group;
                if (cm->ties[k].lm_head >= st->first && cm->ties[k].lm_head < st->last) tie.gb = st->group;
                found = tie.ga != tie.gb;
            }
    }
    pipe_sim *r = sim_run(pp->schedule, p, pp->m, pp->v, tf, tb, c, y, tie);
    free(tf);
    return r;
}

static const char *const kind_names[] = {"forward", "backward", "sync", "tie_allreduce"};

char *pipe_sim_to_json(const pipe_sim *r, const pipe_plan *pp, cJSON *root)
{
    cJSON_AddNumberToObject(root, "step_ms", r->step_ms);
    cJSON_AddNumberToObject(root, "eq1_ms", pp->step_ms);
    cJSON_AddNumberToObject(root, "bubble_fraction", r->bubble_fraction);
    cJSON *busy = cJSON_AddArrayToObject(root, "gpu_busy_ms");
    for (int i = 0; i < pp->p; i++)
        for (int k = 0; k < pp->stages[i].gpus; k++) cJSON_AddItemToArray(busy, cJSON_CreateNumber(r->busy_ms[i]));
    cJSON *arr = cJSON_AddArrayToObject(root, "tasks");
    for (int t = 0; t < r->n_tasks; t++) {
        const pipe_sim_task *x = &r->tasks[t];
        const pipe_stage *st = &pp->stages[x->stage];
        char res[48];
        snprintf(res, sizeof res, "gpus %d-%d", st->gpu0, st->gpu0 + st->gpus - 1);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kind", kind_names[x->kind]);
        cJSON_AddNumberToObject(o, "stage", x->stage + 1);
        if (x->micro >= 0) cJSON_AddNumberToObject(o, "microbatch", x->micro);
        if (x->micro >= 0 && pp->v > 1) {
            cJSON_AddNumberToObject(o, "chunk", x->chunk + 1);                  /* the group's chunk, 1 .. v */
            cJSON_AddNumberToObject(o, "network_chunk", x->chunk * pp->p + x->stage); /* its place, 0 .. p v - 1 */
        }
        cJSON_AddStringToObject(o, "resource", res);
        cJSON_AddNumberToObject(o, "start_ms", x->start_ms);
        cJSON_AddNumberToObject(o, "end_ms", x->end_ms);
        cJSON_AddItemToArray(arr, o);
    }
    char *s = cJSON_Print(root);
    return s;
}

char *pipe_sim_trace(const pipe_sim *r, const pipe_plan *pp)
{
    cJSON *root = cJSON_CreateObject(), *ev = cJSON_AddArrayToObject(root, "traceEvents");
    int gpn = pp->stages[0].cm->cl->gpus_per_node > 0 ? pp->stages[0].cm->cl->gpus_per_node : 1;
    for (int t = 0; t < r->n_tasks; t++) {
        const pipe_sim_task *x = &r->tasks[t];
        const pipe_stage *st = &pp->stages[x->stage];
        char name[96];
        if (x->micro >= 0 && pp->v > 1)
            snprintf(name, sizeof name, "%s mb%d stage %d chunk %d (network chunk %d)", kind_names[x->kind], x->micro,
                     x->stage + 1, x->chunk + 1, x->chunk * pp->p + x->stage + 1);
        else if (x->micro >= 0)
            snprintf(name, sizeof name, "%s mb%d stage %d", kind_names[x->kind], x->micro, x->stage + 1);
        else if (x->kind == PIPE_SIM_TIE)
            snprintf(name, sizeof name, "tied table all-reduce stage %d (embedding group)", x->stage + 1);
        else snprintf(name, sizeof name, "sync stage %d", x->stage + 1);
        for (int k = 0; k < st->gpus; k++) { /* a row per GPU of the stage's group */
            int gpu = st->gpu0 + k;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "ph", "X");
            cJSON_AddNumberToObject(e, "pid", gpu / gpn);
            cJSON_AddNumberToObject(e, "tid", gpu);
            cJSON_AddStringToObject(e, "name", name);
            cJSON_AddNumberToObject(e, "ts", x->start_ms * 1e3);
            cJSON_AddNumberToObject(e, "dur", (x->end_ms - x->start_ms) * 1e3);
            cJSON_AddItemToArray(ev, e);
        }
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}
