#include "refine.h"

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
    sim_options o = {SIM_OVERLAP_FULL, 0, max_tasks};
    sim_result *s = sim_run(m, ci, &o);
    (*evals)++;
    if (!s) return 1e300;
    double t = s->step_ms;
    sim_free(s);
    return t;
}

int sim_refine(const cost_model *m, const int *start, double seconds, unsigned long long seed, refine_result *out)
{
    int L = m->n_layers;
    memset(out, 0, sizeof *out);
    out->configs = lw_malloc(sizeof(int) * (size_t)L);
    memcpy(out->configs, start, sizeof(int) * (size_t)L);
    sim_options o = {SIM_OVERLAP_FULL, 0, 0};
    sim_result *s0 = sim_run(m, start, &o);
    out->start_ms = out->best_ms = s0->step_ms;
    /* neighbours whose step has over four times the start's tasks are
     * skipped: they are model-parallel blow-ups, slow to simulate */
    long max_tasks = 4L * s0->n_tasks + 1000;
    sim_free(s0);
    unsigned long long st = seed ? seed : 0x9E3779B97F4A7C15ULL;
    double t_end = lw_now() + seconds;
    int *layers = lw_malloc(sizeof(int) * (size_t)L);
    int maxc = 1;
    for (int i = 0; i < L; i++)
        if (m->n_configs[i] > maxc) maxc = m->n_configs[i];
    int *cands = lw_malloc(sizeof(int) * (size_t)maxc);
    int improved = 1;
    while (improved && lw_now() < t_end) {
        /* one pass: every layer in a random order, its configs in a random
         * order; the first change that shortens the simulated step is kept */
        improved = 0;
        out->passes++;
        for (int i = 0; i < L; i++) layers[i] = i;
        shuffle(layers, L, &st);
        for (int q = 0; q < L && lw_now() < t_end; q++) {
            int li = layers[q], keep = out->configs[li];
            int nc = m->n_configs[li];
            for (int k = 0; k < nc; k++) cands[k] = k;
            shuffle(cands, nc, &st);
            for (int k = 0; k < nc && lw_now() < t_end; k++) {
                if (cands[k] == keep) continue;
                out->configs[li] = cands[k];
                double t = simulate(m, out->configs, max_tasks, &out->evaluations);
                if (t < out->best_ms * (1 - 1e-9)) {
                    out->best_ms = t;
                    keep = cands[k];
                    improved = 1;
                    break;
                }
                out->configs[li] = keep;
            }
            out->configs[li] = keep;
        }
    }
    out->local_optimum = !improved;
    free(layers);
    free(cands);
    out->n_changed = 0;
    for (int i = 0; i < L; i++) out->n_changed += out->configs[i] != start[i];
    return 0;
}

void refine_result_free(refine_result *r)
{
    free(r->configs);
    r->configs = NULL;
}
