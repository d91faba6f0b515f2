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

/* Stage i's order of work: +k forward of micro-batch k, -(k + 1) its backward. */
static void stage_order(pipe_schedule s, int p, int i, int m, int *ops)
{
    int n = 0;
    if (s == PIPE_GPIPE) {
        for (int k = 0; k < m; k++) ops[n++] = k;
        for (int k = 0; k < m; k++) ops[n++] = -(k + 1);
        return;
    }
    int w = p - i - 1 < m ? p - i - 1 : m; /* 1F1B: warm-up forwards, then one forward one backward */
    for (int k = 0; k < w; k++) ops[n++] = k;
    for (int k = 0; k < m - w; k++) ops[n++] = w + k, ops[n++] = -(k + 1);
    for (int k = m - w; k < m; k++) ops[n++] = -(k + 1);
}

pipe_sim *pipe_simulate(pipe_schedule s, int p, int m, const double *tf, const double *tb, const double *c,
                        const double *y)
{
    if (s == PIPE_INTERLEAVED || p < 1 || m < 1) return NULL;
    pipe_sim *r = lw_calloc(1, sizeof *r);
    r->p = p, r->m = m;
    r->tasks = lw_malloc(sizeof(pipe_sim_task) * (size_t)(2 * p * m + p));
    r->busy_ms = lw_calloc((size_t)p, sizeof(double));
    double *fend = lw_malloc(sizeof(double) * (size_t)(p * m)), *bend = lw_malloc(sizeof(double) * (size_t)(p * m));
    for (int k = 0; k < p * m; k++) fend[k] = bend[k] = -1;
    int *ops = lw_malloc(sizeof(int) * (size_t)(p * 2 * m)), *next = lw_calloc((size_t)p, sizeof(int));
    double *free_at = lw_calloc((size_t)p, sizeof(double));
    for (int i = 0; i < p; i++) stage_order(s, p, i, m, ops + (long)i * 2 * m);
    for (int done = 0; done < 2 * p * m;) {
        int progressed = 0;
        for (int i = 0; i < p; i++) {
            if (next[i] == 2 * m) continue;
            int op = ops[(long)i * 2 * m + next[i]], k = op >= 0 ? op : -op - 1;
            double ready;
            if (op >= 0) { /* forward: the previous stage's activation has arrived */
                if (i > 0 && fend[(i - 1) * m + k] < 0) continue;
                ready = i > 0 ? fend[(i - 1) * m + k] + c[i - 1] : 0;
            } else { /* backward: its own forward done, the next stage's gradient arrived */
                if (fend[i * m + k] < 0 || (i + 1 < p && bend[(i + 1) * m + k] < 0)) continue;
                ready = fend[i * m + k];
                if (i + 1 < p && bend[(i + 1) * m + k] + c[i] > ready) ready = bend[(i + 1) * m + k] + c[i];
            }
            double start = ready > free_at[i] ? ready : free_at[i], len = op >= 0 ? tf[i] : tb[i];
            pipe_sim_task *t = &r->tasks[r->n_tasks++];
            *t = (pipe_sim_task){i, k, op >= 0 ? PIPE_SIM_FORWARD : PIPE_SIM_BACKWARD, start, start + len};
            (op >= 0 ? fend : bend)[i * m + k] = free_at[i] = start + len;
            r->busy_ms[i] += len;
            next[i]++, done++, progressed = 1;
        }
        if (!progressed) break; /* cannot happen for these orders: every wait is on an earlier task */
    }
    r->step_ms = 0;
    double busy = 0;
    for (int i = 0; i < p; i++) {
        pipe_sim_task *t = &r->tasks[r->n_tasks++];
        *t = (pipe_sim_task){i, -1, PIPE_SIM_SYNC, free_at[i], free_at[i] + y[i]};
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
    int p = pp->p;
    double *tf = lw_malloc(sizeof(double) * (size_t)p * 4), *tb = tf + p, *c = tf + 2 * p, *y = tf + 3 * p;
    for (int i = 0; i < p; i++) {
        const pipe_stage *st = &pp->stages[i];
        double fwd_sum = 0;
        for (int l = st->first; l < st->last; l++) {
            double fw, bw, tc = cost_t_c_parts(st->cm, l, &st->cm->configs[l][st->config[l]], NULL, &fw, &bw);
            fwd_sum += fw + bw > 0 ? tc * fw / (fw + bw) : 0;
        }
        tf[i] = fwd_sum + st->transfer_ms / 2;
        tb[i] = st->compute_ms - fwd_sum + st->transfer_ms / 2;
        c[i] = st->p2p_ms / 2;
        y[i] = st->sync_ms;
    }
    pipe_sim *r = pipe_simulate(pp->schedule, p, pp->m, tf, tb, c, y);
    free(tf);
    return r;
}

static const char *const kind_names[] = {"forward", "backward", "sync"};

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
        char name[64];
        if (x->micro >= 0) snprintf(name, sizeof name, "%s mb%d stage %d", kind_names[x->kind], x->micro, x->stage + 1);
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
