/*
 * fit: the largest per-GPU batch at which some strategy fits the memory
 * limit (fit.h).
 */
#include "fit.h"

#include "cost.h"

/* Whether some strategy fits at per_gpu: p applied at that batch, the
 * memory search given a millisecond. */
static int fits_at(plan *p, long per_gpu, int *fits, int *unsettled, lw_error *err)
{
    plan_settings s = *plan_run_settings(p);
    s.global_batch = 0;
    s.batch_per_gpu = per_gpu;
    plan_memory_settings ms = *plan_memory_settings_of(p);
    ms.time_s = 1e-3; /* only whether something fits: the smallest peak decides */
    if (plan_apply(p, &(plan_change){.set = &s, .mem = &ms}, err) != 0) return -1;
    double lower, peak = plan_min_peak(p, 1.0, NULL, &lower);
    double limit = plan_memory_limit(plan_memory_settings_of(p), plan_cluster(p));
    /* not settled in a second (a peak just over the limit, a bound below
     * it): counted as not fitting, so the answer is a batch known to fit */
    *fits = peak <= limit;
    if (!*fits && lower <= limit) *unsettled = 1;
    return 0;
}

int fit_largest_batch(plan *p, fit_result *r, lw_error *err)
{
    plan_settings set = *plan_run_settings(p);
    plan_memory_settings ms = *plan_memory_settings_of(p);
    /* per GPU up to 10^6, and as far as the global batch the cost model
     * takes (from 128 GPUs on, 10^6 per GPU passes it) */
    const long most = COST_MAX_BATCH / plan_gpus(p) < 1000000L ? COST_MAX_BATCH / plan_gpus(p) : 1000000L;
    long lo = 0, hi = 1; /* lo fits (0: none yet), hi does not (once found) */
    int f = 0, found_hi = 0, unsettled = 0;
    for (; hi <= most; hi *= 2) {
        if (fits_at(p, hi, &f, &unsettled, err) != 0) return -1;
        if (!f) {
            found_hi = 1;
            break;
        }
        lo = hi;
    }
    if (!found_hi) hi = most + 1;
    while (hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        if (fits_at(p, mid, &f, &unsettled, err) != 0) return -1;
        if (f) lo = mid;
        else hi = mid;
    }
    set.global_batch = 0;
    set.batch_per_gpu = lo ? lo : 1;
    if (plan_apply(p, &(plan_change){.set = &set, .mem = &ms}, err) != 0) return -1;
    *r = (fit_result){lo, most, found_hi, unsettled};
    return 0;
}
