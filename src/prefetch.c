/*
 * prefetch: the background builds of other settings' cost models and
 * optima, the counts of a model kept after it answered, and, first, posted
 * probes, on one worker thread (prefetch.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "prefetch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

enum { PF_QUEUED, PF_RUNNING, PF_DONE, PF_FAILED };

static int ended(int state)
{
    return state == PF_DONE || state == PF_FAILED;
}

/* One setting built ahead. Slots live on the heap so the worker can keep
 * building one while the list is re-posted around it; a slot dropped from
 * the list while running is cancelled and freed by the worker. */
typedef struct prefetch_slot {
    int gpus;
    long batch;
    cluster *cl;          /* the setting's own cluster: a clone, maybe edited */
    int state;            /* PF_*, under the prefetcher's lock */
    int dropped;          /* no longer listed: the worker frees it when done */
    atomic_int cancel;
    cost_model *cm;
    cost_graph *cg;
    search_result *sr;
} prefetch_slot;

/* One posted probe: the question (the poster's), its answer. */
typedef struct probe_job {
    prefetch_probe_fn fn;
    void *arg;
    void (*arg_free)(void *);
    int state;            /* PF_*, under the prefetcher's lock */
    int dropped;          /* cancelled while running: the worker frees it */
    atomic_int cancel;
    double totals[2];
    lw_error err;
} probe_job;

/* The counts of the plan's model, kept on the worker (plan.c's two-phase
 * what-ifs): the same model built again keeping them, from base's counts
 * (cost_model_reuse_cancellable) or, base NULL, from scratch
 * (cost_model_build_for_whatifs); adopted by the plan's model when a
 * what-if needs them (prefetch_counts_take). */
typedef struct counts_job {
    const cost_model *for_model; /* the plan's model they are for: compared, never read here */
    cost_model *base;     /* the job's own (the plan's model before), freed once used; or NULL */
    cluster *cl;          /* a clone of the model's cluster */
    int gpus;
    long batch;
    int state;            /* PF_*, under the prefetcher's lock */
    int dropped;          /* cancelled while running: the worker frees it */
    atomic_int cancel;
    atomic_long evaluated; /* entries evaluated so far (how far it has come) */
    double started;       /* lw_now() when the worker took it, under the lock */
    cost_model *cm;       /* the model with counts, once done */
} counts_job;

static void counts_free(counts_job *j)
{
    if (!j) return;
    cost_model_free(j->cm);
    cost_model_free(j->base);
    cluster_free(j->cl);
    free(j);
}

static void job_free(probe_job *j)
{
    if (!j) return;
    if (j->arg_free) j->arg_free(j->arg);
    free(j);
}

struct prefetcher {
    const network *net;
    const profile *prof;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    pthread_t thread;
    int thread_live;      /* started and not yet joined */
    int working;          /* the worker is still looking for queued slots */
    int n;
    prefetch_slot *slot[PREFETCH_MAX];
    probe_job *probe;     /* the posted probe, or NULL */
    counts_job *counts;   /* the posted counts, or NULL */
};

static void slot_free(prefetch_slot *s)
{
    if (!s) return;
    search_result_free(s->sr);
    cg_free(s->cg);
    cost_model_free(s->cm);
    cluster_free(s->cl);
    free(s);
}

/* Builds queued slots, first listed first, until none is left. */
static void *prefetch_main(void *arg)
{
    prefetcher *f = arg;
#ifdef __linux__
    /* Lowest priority for this thread and the table workers it starts (they
     * inherit it): work done ahead must not slow the screen drawn now. */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
#endif
    pthread_mutex_lock(&f->lock);
    for (;;) {
        probe_job *j = f->probe && f->probe->state == PF_QUEUED ? f->probe : NULL;
        if (j) { /* what is on screen goes before what might be asked next */
            j->state = PF_RUNNING;
            pthread_mutex_unlock(&f->lock);
            lw_error err = {0};
            int rc = j->fn(j->arg, &j->cancel, j->totals, &err);
            pthread_mutex_lock(&f->lock);
            j->err = err;
            j->state = rc == 0 ? PF_DONE : PF_FAILED;
            if (j->dropped) job_free(j);
            pthread_cond_broadcast(&f->changed);
            continue;
        }
        counts_job *c = f->counts && f->counts->state == PF_QUEUED ? f->counts : NULL;
        if (c) { /* they serve every what-if after: before the settings that might be asked */
            c->state = PF_RUNNING;
            c->started = lw_now();
            pthread_mutex_unlock(&f->lock);
            lw_error err = {0};
            cost_model *cm = c->base ? cost_model_reuse_cancellable(c->base, c->cl, c->gpus, c->batch, &c->cancel,
                                                                    &c->evaluated)
                                     : NULL;
            /* given up (prefetch_counts_give_up): the base stays for the
             * plan to answer from (the job frees it otherwise); the plan
             * reads it only once the job has ended */
            if (!atomic_load(&c->cancel)) {
                cost_model_free(c->base);
                c->base = NULL;
            }
            if (!cm && !atomic_load(&c->cancel)) /* declined, which the plan's own reuse did not: build */
                cm = cost_model_build_for_whatifs(f->net, c->cl, f->prof, c->gpus, c->batch, &c->cancel,
                                                  &c->evaluated, &err);
            pthread_mutex_lock(&f->lock);
            c->cm = cm;
            c->state = cm ? PF_DONE : PF_FAILED;
            if (c->dropped) counts_free(c);
            pthread_cond_broadcast(&f->changed);
            continue;
        }
        prefetch_slot *s = NULL;
        for (int i = 0; i < f->n && !s; i++)
            if (f->slot[i]->state == PF_QUEUED) s = f->slot[i];
        if (!s) break;
        s->state = PF_RUNNING;
        pthread_mutex_unlock(&f->lock);
        lw_error err;
        cost_model *cm = cost_model_build_for_whatifs(f->net, s->cl, f->prof, s->gpus, s->batch, &s->cancel,
                                                      NULL, &err);
        cost_graph *cg = NULL;
        search_result *sr = NULL;
        if (cm) {
            search_options opt;
            search_options_init(&opt);
            opt.cancel = &s->cancel;
            opt.keep_tables = 0; /* as the plan's own search: plan_step_tables where wanted */
            cg = cost_model_graph(cm);
            sr = search_run_with(cg, &opt, NULL, NULL, NULL);
        }
        pthread_mutex_lock(&f->lock);
        s->cm = cm;
        s->cg = cg;
        s->sr = sr;
        s->state = sr ? PF_DONE : PF_FAILED;
        if (s->dropped) slot_free(s);
        pthread_cond_broadcast(&f->changed);
    }
    f->working = 0;
    pthread_mutex_unlock(&f->lock);
    return NULL;
}

/* Cancels the posted probe (under the lock): the worker frees a running one. */
static void drop_probe(prefetcher *f)
{
    probe_job *j = f->probe;
    f->probe = NULL;
    if (!j) return;
    atomic_store(&j->cancel, 1);
    if (j->state == PF_RUNNING) j->dropped = 1;
    else job_free(j);
}

/* Cancels the posted counts (under the lock): the worker frees running ones. */
static void drop_counts(prefetcher *f)
{
    counts_job *c = f->counts;
    f->counts = NULL;
    if (!c) return;
    atomic_store(&c->cancel, 1);
    if (c->state == PF_RUNNING) c->dropped = 1;
    else counts_free(c);
}

prefetcher *prefetcher_new(const network *net, const profile *prof)
{
    prefetcher *f = lw_calloc(1, sizeof *f);
    f->net = net;
    f->prof = prof;
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->changed, NULL);
    return f;
}

/* Starts the worker for work just queued, unless it is still looking for
 * more (call without the lock; start: work was queued while it was not). */
static void worker_start(prefetcher *f, int start)
{
    if (!start) return;
    if (f->thread_live) pthread_join(f->thread, NULL); /* finished: it cleared working */
    f->thread_live = 0;
    f->working = 1;
    if (lw_thread_start(&f->thread, prefetch_main, f) == 0) f->thread_live = 1;
    else f->working = 0;
}

void prefetcher_free(prefetcher *f)
{
    if (!f) return;
    pthread_mutex_lock(&f->lock);
    for (int i = 0; i < f->n; i++) {
        f->slot[i]->dropped = 1;
        atomic_store(&f->slot[i]->cancel, 1);
        if (f->slot[i]->state != PF_RUNNING) slot_free(f->slot[i]);
    }
    f->n = 0;
    drop_probe(f);
    drop_counts(f);
    pthread_mutex_unlock(&f->lock);
    if (f->thread_live) pthread_join(f->thread, NULL);
    pthread_mutex_destroy(&f->lock);
    pthread_cond_destroy(&f->changed);
    free(f);
}

static int slot_matches(const prefetch_slot *s, int gpus, long batch, const cluster *cl)
{
    return s->state != PF_FAILED && s->gpus == gpus && s->batch == batch && cluster_equal(s->cl, cl);
}

void prefetch_list(prefetcher *f, const prefetch_setting *items, int n)
{
    if (!f) return;
    pthread_mutex_lock(&f->lock);
    prefetch_slot *old[PREFETCH_MAX], *keep[PREFETCH_MAX];
    int n_old = f->n, n_keep = 0, queued = 0;
    memcpy(old, f->slot, sizeof(prefetch_slot *) * (size_t)n_old);
    for (int i = 0; i < n && n_keep < PREFETCH_MAX; i++) {
        const cluster *cl = items[i].cl;
        int gpus = items[i].gpus;
        long batch = items[i].batch;
        prefetch_slot *s = NULL;
        for (int k = 0; k < n_keep && !s; k++)
            if (slot_matches(keep[k], gpus, batch, cl)) s = keep[k];
        if (s) continue; /* listed twice */
        for (int k = 0; k < n_old && !s; k++) /* built, or being built, already: keep it */
            if (old[k] && slot_matches(old[k], gpus, batch, cl)) {
                s = old[k];
                old[k] = NULL;
            }
        if (!s) {
            s = lw_calloc(1, sizeof *s);
            s->gpus = gpus;
            s->batch = batch;
            s->cl = cluster_clone(cl);
            s->state = PF_QUEUED;
            queued++;
        }
        keep[n_keep++] = s;
    }
    for (int k = 0; k < n_old; k++) {
        if (!old[k]) continue;
        old[k]->dropped = 1;
        atomic_store(&old[k]->cancel, 1);
        if (old[k]->state != PF_RUNNING) slot_free(old[k]);
    }
    memcpy(f->slot, keep, sizeof(prefetch_slot *) * (size_t)n_keep);
    f->n = n_keep;
    int start = queued && !f->working;
    pthread_mutex_unlock(&f->lock);
    worker_start(f, start);
}

void prefetch_probe_post(prefetcher *f, prefetch_probe_fn fn, void *arg, void (*arg_free)(void *))
{
    probe_job *j = lw_calloc(1, sizeof *j);
    j->fn = fn;
    j->arg = arg;
    j->arg_free = arg_free;
    j->state = PF_QUEUED;
    pthread_mutex_lock(&f->lock);
    drop_probe(f);
    f->probe = j;
    int start = !f->working;
    pthread_mutex_unlock(&f->lock);
    worker_start(f, start);
}

int prefetch_probe_poll(prefetcher *f, double totals[2], lw_error *err)
{
    if (!f || !f->probe) return lw_fail(err, 1, "no probe posted");
    pthread_mutex_lock(&f->lock);
    probe_job *j = f->probe;
    int rc = 0;
    if (ended(j->state)) {
        f->probe = NULL;
        if (j->state == PF_DONE) {
            totals[0] = j->totals[0];
            totals[1] = j->totals[1];
            rc = 1;
        } else {
            *err = j->err;
            rc = -1;
        }
        job_free(j);
    }
    pthread_mutex_unlock(&f->lock);
    return rc;
}

void prefetch_probe_cancel(prefetcher *f)
{
    if (!f) return;
    pthread_mutex_lock(&f->lock);
    drop_probe(f);
    pthread_mutex_unlock(&f->lock);
}

int prefetch_pending(prefetcher *f)
{
    if (!f) return 0;
    int n = 0;
    pthread_mutex_lock(&f->lock);
    for (int i = 0; i < f->n; i++) n += f->slot[i]->state == PF_QUEUED || f->slot[i]->state == PF_RUNNING;
    pthread_mutex_unlock(&f->lock);
    return n;
}

/* Waits (under the lock) until the worker reports a change, or 20 ms
 * pass: the caller then looks at its cancel flag again. */
static void wait_a_while(prefetcher *f)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 20 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&f->changed, &f->lock, &until);
}

int prefetch_take(prefetcher *f, int gpus, long batch, const cluster *cl, const atomic_int *cancel, cost_model **cm,
                  cost_graph **cg, search_result **sr)
{
    if (!f) return 0;
    pthread_mutex_lock(&f->lock);
    int i = 0;
    while (i < f->n && !slot_matches(f->slot[i], gpus, batch, cl)) i++;
    prefetch_slot *s = i < f->n ? f->slot[i] : NULL;
    while (s && s->state == PF_RUNNING && !(cancel && atomic_load(cancel))) {
        wait_a_while(f);
    }
    if (s && s->state == PF_QUEUED) { /* not started: built here instead, so drop it */
        memmove(&f->slot[i], &f->slot[i + 1], sizeof(prefetch_slot *) * (size_t)(f->n - i - 1));
        f->n--;
        slot_free(s);
        s = NULL;
    }
    if (!s || s->state != PF_DONE) {
        pthread_mutex_unlock(&f->lock);
        return 0;
    }
    memmove(&f->slot[i], &f->slot[i + 1], sizeof(prefetch_slot *) * (size_t)(f->n - i - 1));
    f->n--;
    pthread_mutex_unlock(&f->lock);
    s->cm->cl = cl; /* equal to the clone it was built from */
    *cm = s->cm;
    *cg = s->cg;
    *sr = s->sr;
    s->cm = NULL;
    s->cg = NULL;
    s->sr = NULL;
    slot_free(s);
    return 1;
}

void prefetch_counts_post(prefetcher *f, const cost_model *model, cost_model *base)
{
    counts_job *c = lw_calloc(1, sizeof *c);
    c->for_model = model;
    c->cl = cluster_clone(model->cl);
    c->gpus = model->gpus;
    c->batch = model->batch;
    c->base = base;
    if (base) base->cl = c->cl; /* its own cluster may go with the plan's change: reuse reads only its counts */
    c->state = PF_QUEUED;
    pthread_mutex_lock(&f->lock);
    drop_counts(f);
    f->counts = c;
    int start = !f->working;
    pthread_mutex_unlock(&f->lock);
    worker_start(f, start);
}

cost_model *prefetch_counts_take(prefetcher *f, const cost_model *model, const atomic_int *cancel)
{
    if (!f) return NULL;
    pthread_mutex_lock(&f->lock);
    counts_job *c = f->counts;
    if (c && (c->for_model != model || c->gpus != model->gpus || c->batch != model->batch)) {
        drop_counts(f); /* for a model the plan no longer has */
        c = NULL;
    }
    while (c && !ended(c->state) && !(cancel && atomic_load(cancel))) wait_a_while(f);
    cost_model *cm = NULL;
    if (c && ended(c->state)) {
        cm = c->cm;
        c->cm = NULL;
        f->counts = NULL;
        counts_free(c);
    }
    pthread_mutex_unlock(&f->lock);
    return cm;
}

int prefetch_counts_progress(prefetcher *f, const cost_model *model, long *evaluated, double *running_s)
{
    *evaluated = 0;
    *running_s = 0;
    if (!f) return 0;
    pthread_mutex_lock(&f->lock);
    const counts_job *c = f->counts;
    int pending = c && c->for_model == model && !ended(c->state);
    if (pending && c->state == PF_RUNNING) {
        *evaluated = atomic_load(&c->evaluated);
        *running_s = lw_now() - c->started;
    }
    pthread_mutex_unlock(&f->lock);
    return pending;
}

int prefetch_counts_give_up(prefetcher *f, const cost_model *model, cost_model **base, cluster **base_cl)
{
    *base = NULL;
    *base_cl = NULL;
    if (!f) return 0;
    pthread_mutex_lock(&f->lock);
    counts_job *c = f->counts;
    if (!c || c->for_model != model) {
        pthread_mutex_unlock(&f->lock);
        return 0;
    }
    atomic_store(&c->cancel, 1);
    while (c->state == PF_RUNNING) wait_a_while(f); /* it stops within a row of a table */
    if (c->state == PF_DONE) { /* done before it saw the flag: they are there after all */
        pthread_mutex_unlock(&f->lock);
        return 0;
    }
    *base = c->base;
    *base_cl = c->base ? c->cl : NULL; /* what base->cl points to */
    c->base = NULL;
    if (*base_cl) c->cl = NULL;
    f->counts = NULL;
    counts_free(c);
    pthread_mutex_unlock(&f->lock);
    return 1;
}

void prefetch_counts_drop(prefetcher *f)
{
    if (!f) return;
    pthread_mutex_lock(&f->lock);
    drop_counts(f);
    pthread_mutex_unlock(&f->lock);
}

int prefetch_join_idle(prefetcher *f)
{
    if (!f) return 1;
    pthread_mutex_lock(&f->lock);
    int idle = !f->working;
    pthread_mutex_unlock(&f->lock);
    if (!idle) return 0;
    /* it cleared working on its way out: this waits for its exit alone */
    if (f->thread_live) pthread_join(f->thread, NULL);
    f->thread_live = 0;
    return 1;
}
