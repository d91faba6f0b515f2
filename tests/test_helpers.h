/*
 * test_helpers: what several test files need alike (criterion tests; every
 * helper is static inline, so a file uses only what it needs). Included
 * after the engine headers: the helpers that load networks and plans are
 * there when plan.h was included first (a search test, which has types of
 * its own, gets only the generator and ASSERT_REL).
 */
#ifndef LW_TEST_HELPERS_H
#define LW_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* a and b agree to a relative tolerance tol. */
#define REL_EQ(a, b, tol) (fabs((a) - (b)) <= (tol) * fmax(fabs(a), fabs(b)) + 1e-300)
#define ASSERT_REL(a, b, tol)                                                                                      \
    cr_assert(REL_EQ((double)(a), (double)(b), tol), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

#ifdef LW_PLAN_H
#include "net_json.h"

/* A network from JSON text (NULL with err set on bad input). */
static inline network *net_str(const char *json, lw_error *err)
{
    return net_from_json(json, strlen(json), "inline.json", err);
}

/* The same, for text that must load. */
static inline network *net_ok(const char *json)
{
    lw_error err = {0};
    network *n = net_str(json, &err);
    cr_assert_not_null(n, "%s", err.msg);
    return n;
}

/* A whole file, which must read (the caller frees). */
static inline char *slurp(const char *path, size_t *len)
{
    lw_error err = {0};
    char *t = lw_read_file(path, len, &err);
    cr_assert_not_null(t, "%s", err.msg);
    return t;
}

/* The plan of a shipped network on a shipped cluster: gpus (0: all), a
 * global batch (0: 32 per GPU). */
static inline plan *open_plan(const char *net, const char *cl, int gpus, long global_batch)
{
    lw_error err = {0};
    network *n = plan_load_network(net, &err);
    cr_assert_not_null(n, "%s", err.msg);
    cluster *c = plan_load_cluster(cl, &err);
    cr_assert_not_null(c, "%s", err.msg);
    plan_settings s = {.gpus = gpus, .batch_per_gpu = 0, .global_batch = global_batch};
    plan *p = plan_open(n, c, NULL, &(plan_options){.set = s}, &err);
    cr_assert_not_null(p, "%s on %s, %d GPUs: %s", net, cl, gpus, err.msg);
    return p;
}
#endif /* LW_PLAN_H */

/* A small seeded generator (xorshift64) for random test graphs. */
typedef struct rng {
    uint64_t s;
} rng;

static inline uint64_t rng_next(rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

/* uniform in [lo, hi] */
static inline int rng_int(rng *r, int lo, int hi)
{
    return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* uniform in [0, 1) */
static inline double rng_unit(rng *r)
{
    return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
