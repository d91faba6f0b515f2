#include "refine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* xorshift64*: a small seeded generator, the same sequence everywhere */
static unsigned long long next_rand(unsigned long long *s)
{
    unsigned long long x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ULL;
}

static void shuffle(int *v, int n, unsigned long long *seed)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(next_rand(seed) % (unsigned long long)(i + 1));
        int t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* The simulated step of a strategy, or a huge value when its task graph
 * would pass the limit (such a neighbour is far from the start anyway). */
static double simulate(const cost_model *m, const int *ci, long max_tasks, long *evals)
{
    double t = sim_step_ms(m, ci, max_tasks);
    (*evals)++;
    return isnan(t) ? 1e300 : t;
}

struct refine_search {
    const cost_model *m;
    int *start;                /* [L] */
    refine_result res;         /* configs: the best so far */
    long max_tasks;
    int *pinned;               /* [L] or NULL: bounds->pinned, copied */
    double mem_bound;          /* a change's peak per GPU may not pass this; +inf: none */
    unsigned long long rng;
    int *layers;               /* [L] this pass's order */
    int q;                     /* position in layers; L: the pass is over */
    int *cands;                /* [max configs] the current layer's configs, shuffled */
    int k, nc;                 /* next candidate; -1: the layer's candidates not drawn yet */
    int keep;                  /* the current layer's config before its candidates */
    int improved;              /* the pass so far improved the step */
};

refine_search *refine_begin(const cost_model *m, const int *start, const refine_bounds *bounds,
                             unsigned long long seed)
{
    int L = m->n_layers;
    refine_search *r = lw_calloc(1, sizeof *r);
    r->m = m;
    if (bounds && bounds->pinned) {
        r->pinned = lw_malloc(sizeof(int) * (size_t)(L ? L : 1));
        memcpy(r->pinned, bounds->pinned, sizeof(int) * (size_t)L);
    }
    r->mem_bound = HUGE_VAL;
    if (bounds && bounds->memory_limit > 0 && isfinite(bounds->memory_limit)) {
        /* a start over the limit (nothing fits it) may not grow further */
        double peak = cost_memory(m, start, NULL);
        r->mem_bound = peak > bounds->memory_limit ? peak : bounds->memory_limit;
    }
    r->start = lw_malloc(sizeof(int) * (size_t)L);
    memcpy(r->start, start, sizeof(int) * (size_t)L);
    r->res.configs = lw_malloc(sizeof(int) * (size_t)L);
    memcpy(r->res.configs, start, sizeof(int) * (size_t)L);
    sim_options o = {.overlap = SIM_OVERLAP_FULL};
    sim_result *s0 = sim_run(m, start, &o);
    r->res.start_ms = r->res.best_ms = s0->step_ms;
    /* neighbours whose step has over four times the start's tasks are
     * skipped: they are model-parallel blow-ups, slow to simulate */
    r->max_tasks = 4L * s0->n_tasks + 1000;
    sim_free(s0);
    r->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
    r->layers = lw_malloc(sizeof(int) * (size_t)(L ? L : 1));
    int maxc = 1;
    for (int i = 0; i < L; i++)
        if (m->n_configs[i] > maxc) maxc = m->n_configs[i];
    r->cands = lw_malloc(sizeof(int) * (size_t)maxc);
    r->q = L;         /* the first step starts a pass */
    r->k = -1;
    r->improved = 1;  /* as if a pass had improved: a first pass is due */
    return r;
}

/* One pass: every layer in a random order, its configs in a random order;
 * the first change that shortens the simulated step is kept. Passes go on
 * until one finds none. */
int refine_step(refine_search *r, double seconds)
{
    const cost_model *m = r->m;
    int L = m->n_layers;
    double t_end = lw_now() + seconds;
    int *ci = r->res.configs;
    long first = r->res.evaluations; /* each call simulates at least one strategy: slices always progress */
    for (;;) {
        if (r->q >= L) {
            if (!r->improved) {
                r->res.local_optimum = 1;
                return 0;
            }
            r->improved = 0;
            r->res.passes++;
            for (int i = 0; i < L; i++) r->layers[i] = i;
            shuffle(r->layers, L, &r->rng);
            r->q = 0;
            r->k = -1;
            if (L == 0) continue;
        }
        int li = r->layers[r->q];
        if (r->pinned && r->pinned[li] >= 0) { /* a pinned layer keeps its config */
            r->q++;
            continue;
        }
        if (r->k < 0) {
            r->nc = m->n_configs[li];
            for (int k = 0; k < r->nc; k++) r->cands[k] = k;
            shuffle(r->cands, r->nc, &r->rng);
            r->k = 0;
            r->keep = ci[li];
        }
        if (r->k >= r->nc) {
            ci[li] = r->keep;
            r->q++;
            r->k = -1;
            continue;
        }
        if (r->cands[r->k] == r->keep) {
            r->k++;
            continue;
        }
        if (r->res.evaluations > first && lw_now() >= t_end) return 1;
        ci[li] = r->cands[r->k++];
        if (isfinite(r->mem_bound) && cost_memory(m, ci, NULL) > r->mem_bound) {
            ci[li] = r->keep; /* over the memory limit: not a strategy the search could have returned */
            continue;
        }
        double t = simulate(m, ci, r->max_tasks, &r->res.evaluations);
        if (t < r->res.best_ms * (1 - 1e-9)) {
            r->res.best_ms = t;
            r->res.n_changed = 0;
            for (int i = 0; i < L; i++) r->res.n_changed += ci[i] != r->start[i];
            r->improved = 1;
            r->q++;
            r->k = -1;
        } else {
            ci[li] = r->keep;
        }
    }
}

const refine_result *refine_progress(const refine_search *r) { return &r->res; }

void refine_end(refine_search *r, refine_result *out)
{
    if (!r) return;
    if (out) *out = r->res;
    else free(r->res.configs);
    free(r->start);
    free(r->pinned);
    free(r->layers);
    free(r->cands);
    free(r);
}

int sim_refine(const cost_model *m, const int *start, const refine_bounds *bounds, double seconds,
               unsigned long long seed, refine_result *out)
{
    refine_search *r = refine_begin(m, start, bounds, seed);
    refine_step(r, seconds);
    refine_end(r, out);
    return 0;
}

void refine_result_free(refine_result *r)
{
    free(r->configs);
    r->configs = NULL;
}
