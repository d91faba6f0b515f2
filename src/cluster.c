#include "cluster.h"

#include "json_util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int cluster_gpus(const cluster *c)
{
    return c->nodes * c->gpus_per_node;
}

int cluster_node_of(const cluster *c, int dev)
{
    return dev / c->gpus_per_node;
}

void cluster_set_intra_bw(cluster *c, double gbs)
{
    c->intra.bandwidth_gbs = gbs;
    for (int i = 0; i < c->n_overrides; i++)
        if (cluster_node_of(c, c->overrides[i].a) == cluster_node_of(c, c->overrides[i].b))
            c->overrides[i].link.bandwidth_gbs = gbs;
}

link_spec cluster_link(const cluster *c, int a, int b)
{
    for (int i = 0; i < c->n_overrides; i++) {
        const link_override *o = &c->overrides[i];
        if ((o->a == a && o->b == b) || (o->a == b && o->b == a)) return o->link;
    }
    return cluster_node_of(c, a) == cluster_node_of(c, b) ? c->intra : c->inter;
}

double cluster_transfer_s(const cluster *c, int a, int b, double bytes)
{
    if (a == b || bytes <= 0) return 0.0;
    link_spec l = cluster_link(c, a, b);
    return l.latency_us * 1e-6 + bytes / (l.bandwidth_gbs * 1e9);
}

static const char *const precision_names[PREC__COUNT] = {"fp32", "tf32", "fp16", "bf16"};

const char *precision_name(precision p)
{
    return (unsigned)p < PREC__COUNT ? precision_names[p] : "fp32";
}

int precision_from_name(const char *s)
{
    for (int p = 0; p < PREC__COUNT; p++)
        if (strcmp(s, precision_names[p]) == 0) return p;
    return -1;
}

double precision_elem_bytes(precision p)
{
    return p == PREC_FP16 || p == PREC_BF16 ? 2.0 : 4.0;
}

static void gpu_consts_of(const gpu_spec *g, gpu_consts *out)
{
    gpu_consts k;
    k.peak_tflops = g->peak_tflops;
    memcpy(k.efficiency, g->efficiency, sizeof k.efficiency);
    k.memory_efficiency = g->memory_efficiency;
    k.winograd_speedup = g->winograd_speedup;
    k.kernel_overhead_us = g->kernel_overhead_us;
    k.saturation_gflop = g->saturation_gflop;
    k.step_overhead_ms = g->step_overhead_ms;
    *out = k;
}

static const char *const trust_names[] = {"unknown", "fitted", "datasheet", "derived", "copied", "assumed"};
static const char *const const_keys[GC__COUNT] = {"peak_tflops", "efficiency", "memory_efficiency", "winograd_speedup",
                                                  "kernel_overhead_us", "saturation_gflop", "step_overhead_ms"};
static const char *const const_words[GC__COUNT] = {"peak", "GEMM efficiency", "memory efficiency", "Winograd saving",
                                                   "per-kernel overhead", "half-saturation work", "per-step overhead"};

const char *trust_name(const_trust t)
{
    return (unsigned)t <= TRUST_ASSUMED ? trust_names[t] : "unknown";
}

const char *gpu_const_key(int k)
{
    return k >= 0 && k < GC__COUNT ? const_keys[k] : "?";
}

const char *gpu_const_words(int k)
{
    return k >= 0 && k < GC__COUNT ? const_words[k] : "?";
}

int trust_unfitted(const_trust t)
{
    return t == TRUST_DERIVED || t == TRUST_COPIED || t == TRUST_ASSUMED;
}

const_trust cluster_const_trust(const cluster *c, precision p, int k)
{
    if ((unsigned)p >= PREC__COUNT || k < 0 || k >= GC__COUNT) return TRUST_UNKNOWN;
    if (p != PREC_FP32 && !c->gpu.has_prec[p]) return TRUST_UNKNOWN;
    return (const_trust)c->gpu.trust[p][k];
}

/* A stack's overheads and GEMM scale on the GPU's constants (none when no
 * stack is given: the constants as the file has them, bit for bit). */
static void stack_apply(const stack_spec *s, precision p, gpu_consts *k)
{
    if (!s->given) return;
    if (s->kernel_overhead_us >= 0) k->kernel_overhead_us = s->kernel_overhead_us;
    if (s->step_overhead_ms >= 0) k->step_overhead_ms = s->step_overhead_ms;
    if (s->winograd_speedup >= 0 && k->winograd_speedup > 1) k->winograd_speedup = s->winograd_speedup;
    if (s->gemm_scale[p] != 1.0) {
        k->efficiency[OPC_CONV] = fmin(1.0, k->efficiency[OPC_CONV] * s->gemm_scale[p]);
        k->efficiency[OPC_LINEAR] = fmin(1.0, k->efficiency[OPC_LINEAR] * s->gemm_scale[p]);
    }
}

int cluster_gpu_consts(const cluster *c, precision p, gpu_consts *out)
{
    if ((unsigned)p >= PREC__COUNT) return -1;
    if (p == PREC_FP32) {
        gpu_consts_of(&c->gpu, out);
    } else {
        if (!c->gpu.has_prec[p]) return -1;
        *out = c->gpu.prec[p];
    }
    stack_apply(&c->stack, p, out);
    return 0;
}

double cluster_grad_sync_bytes(const cluster *c)
{
    if (c->stack.given && c->stack.grad_sync_bytes == 0) return precision_elem_bytes(c->precision);
    if (c->stack.given) return c->stack.grad_sync_bytes;
    return 4.0; /* COST_GRAD_SYNC_BYTES: fp32 at every precision */
}

void cluster_set_stack(cluster *c, const stack_spec *s)
{
    c->stack = *s;
    c->stack.given = 1;
    if (s->bucket_mb >= 0) c->coll.bucket_mb = s->bucket_mb;
}

int cluster_set_precision(cluster *c, precision p, lw_error *err)
{
    gpu_consts k;
    if (cluster_gpu_consts(c, p, &k) != 0) {
        char have[64] = "fp32";
        for (int q = 1; q < PREC__COUNT; q++)
            if (c->gpu.has_prec[q]) {
                size_t n = strlen(have);
                snprintf(have + n, sizeof have - n, ", %s", precision_names[q]);
            }
        return lw_fail(err, 2, "%s: cluster \"%s\" gives no %s figures for its GPU (%s) under gpu.precisions; it has %s",
                       c->path ? c->path : c->name, c->name, precision_name(p), c->gpu.name, have);
    }
    c->precision = p;
    return 0;
}

const char *sync_scheme_name(sync_scheme s)
{
    switch (s) {
    case SYNC_RING_ALLREDUCE: return "ring-allreduce";
    case SYNC_ZERO1: return "zero1";
    case SYNC_ZERO2: return "zero2";
    case SYNC_ZERO3: return "zero3";
    case SYNC_HSDP: return "hsdp";
    default: return "parameter-server";
    }
}

int sync_scheme_from_name(const char *s)
{
    if (strcmp(s, "parameter-server") == 0 || strcmp(s, "ps") == 0) return SYNC_PARAMETER_SERVER;
    if (strcmp(s, "ring-allreduce") == 0 || strcmp(s, "ring") == 0) return SYNC_RING_ALLREDUCE;
    if (strcmp(s, "zero1") == 0) return SYNC_ZERO1;
    if (strcmp(s, "zero2") == 0) return SYNC_ZERO2;
    if (strcmp(s, "zero3") == 0 || strcmp(s, "fsdp") == 0) return SYNC_ZERO3;
    if (strcmp(s, "hsdp") == 0) return SYNC_HSDP;
    return -1;
}

typedef struct cctx {
    const char *text, *label;
    lw_error *err;
} cctx;

/* Line of a key, for messages. key may be a path such as
 * "inter_node.bandwidth_gbs" or "links[2].latency_us": each part is looked
 * for after the one before it, so the line is the nested key's, not that of
 * the first key of the same name elsewhere. */
static int line_of_key(const char *text, const char *key)
{
    const char *from = text, *q = NULL;
    while (*key) {
        const char *dot = strchr(key, '.');
        size_t n = dot ? (size_t)(dot - key) : strlen(key);
        const char *br = memchr(key, '[', n);
        size_t kn = br ? (size_t)(br - key) : n;
        char pat[128];
        if (kn > 100) return 0;
        snprintf(pat, sizeof pat, "\"%.*s\"", (int)kn, key);
        q = strstr(from, pat);
        if (!q) return 0;
        from = q + strlen(pat);
        if (!dot) break;
        key = dot + 1;
    }
    if (!q) return 0;
    int line, col;
    json_line_col(text, (size_t)(q - text), &line, &col);
    return line;
}

static int cfail(cctx *p, const char *key, const char *fmt, const char *a, double lo, double hi)
{
    char m[400];
    snprintf(m, sizeof m, fmt, a, lo, hi);
    int line = key ? line_of_key(p->text, key) : 0;
    if (line) return lw_fail(p->err, 2, "%s:%d: %s", p->label, line, m);
    return lw_fail(p->err, 2, "%s: %s", p->label, m);
}

/* Reads a number in [lo, hi]; required or with a default. */
static int num(cctx *p, const cJSON *obj, const char *key, const char *path, double lo, double hi, int required,
               double dflt, double *out)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    if (!v) {
        if (required) return cfail(p, NULL, "missing \"%s\" (a number from %g to %g)", path, lo, hi);
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return cfail(p, path, "\"%s\" must be a number from %g to %g", path, lo, hi);
    *out = v->valuedouble;
    return 0;
}

static int check_keys(cctx *p, const cJSON *obj, const char *where, const char *const *allowed)
{
    for (const cJSON *it = obj->child; it; it = it->next) {
        if (strcmp(it->string, "source") == 0 || strcmp(it->string, "sources") == 0 ||
            strcmp(it->string, "comment") == 0 || strcmp(it->string, "description") == 0)
            continue;
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, it->string) == 0) ok = 1;
        if (!ok) {
            char m[300];
            snprintf(m, sizeof m, "%s: unknown field \"%.100s\"", where, it->string);
            char path[256];
            if (strcmp(where, "cluster") == 0 || strcmp(where, "stack file") == 0)
                snprintf(path, sizeof path, "%.100s", it->string);
            else
                snprintf(path, sizeof path, "%.100s.%.100s", where, it->string);
            return cfail(p, path, "%s", m, 0, 0);
        }
    }
    return 0;
}

typedef struct pair_at {
    int lo, hi, at; /* a link's GPUs, lower first, and its index in "links" */
} pair_at;

static int pair_cmp(const void *x, const void *y)
{
    const pair_at *a = x, *b = y;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* A pair of GPUs given twice in "links" ([0, 3] and [3, 0] are one link):
 * refused, naming the first repeat in the file and the entry it repeats;
 * cluster_link would take one and drop the other without a word. Sorted,
 * as there may be 65536 entries. */
static int duplicate_link(const cluster *c, const char *label, lw_error *err)
{
    int n = c->n_overrides, dup = -1, first = -1;
    if (n < 2) return 0;
    pair_at *v = lw_malloc(sizeof *v * (size_t)n);
    for (int i = 0; i < n; i++) {
        const link_override *o = &c->overrides[i];
        v[i] = (pair_at){o->a < o->b ? o->a : o->b, o->a < o->b ? o->b : o->a, i};
    }
    qsort(v, (size_t)n, sizeof *v, pair_cmp);
    /* a run of one pair is in file order: its second entry is the pair's
     * first repeat, its first the entry repeated */
    for (int i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && v[j].lo == v[i].lo && v[j].hi == v[i].hi; j++) continue;
        if (j - i > 1 && (dup < 0 || v[i + 1].at < dup)) {
            dup = v[i + 1].at;
            first = v[i].at;
        }
    }
    free(v);
    if (dup < 0) return 0;
    const link_override *o = &c->overrides[dup];
    return lw_fail(err, 2, "%s: links[%d]: GPUs %d and %d are already linked by links[%d]: give each pair once", label,
                   dup, o->a, o->b, first);
}

static int read_link(cctx *p, const cJSON *o, const char *where, link_spec *l)
{
    char path[96];
    snprintf(path, sizeof path, "%s.bandwidth_gbs", where);
    if (num(p, o, "bandwidth_gbs", path, 1e-6, 1e6, 1, 0, &l->bandwidth_gbs)) return -1;
    snprintf(path, sizeof path, "%s.latency_us", where);
    if (num(p, o, "latency_us", path, 0, 1e6, 0, 0, &l->latency_us)) return -1;
    return 0;
}

/* A "provenance" object ({"efficiency": "fitted", ...}) into trust[]:
 * given: the constants the block gives itself (1) or inherits (0); an
 * inherited constant keeps the trust it came with, one given without a
 * provenance entry is unknown. */
static int read_provenance(cctx *p, const cJSON *block, const char *where, const unsigned char *given,
                           unsigned char *trust)
{
    const cJSON *pv = cJSON_GetObjectItemCaseSensitive(block, "provenance");
    char path[128];
    snprintf(path, sizeof path, "%s.provenance", where);
    for (int k = 0; k < GC__COUNT; k++)
        if (given[k]) trust[k] = TRUST_UNKNOWN;
    if (!pv) return 0;
    if (!cJSON_IsObject(pv))
        return cfail(p, path, "%s must be an object such as {\"efficiency\": \"fitted\"}", path, 0, 0);
    for (const cJSON *it = pv->child; it; it = it->next) {
        int k = 0, t = 1;
        while (k < GC__COUNT && strcmp(const_keys[k], it->string) != 0) k++;
        if (k == GC__COUNT) {
            char m[320];
            snprintf(m, sizeof m, "%s: unknown constant \"%.60s\"", path, it->string);
            return cfail(p, path, "%s", m, 0, 0);
        }
        while (t <= TRUST_ASSUMED && !(cJSON_IsString(it) && strcmp(trust_names[t], it->valuestring) == 0)) t++;
        if (t > TRUST_ASSUMED) {
            char m[320];
            snprintf(m, sizeof m, "%s.%s must be \"fitted\", \"datasheet\", \"derived\", \"copied\" or \"assumed\"",
                     path, const_keys[k]);
            return cfail(p, path, "%s", m, 0, 0);
        }
        trust[k] = (unsigned char)t;
    }
    return 0;
}

/* Which constants a block gives itself (its own keys). */
static void given_of(const cJSON *block, unsigned char *given)
{
    for (int k = 0; k < GC__COUNT; k++) given[k] = cJSON_GetObjectItemCaseSensitive(block, const_keys[k]) != NULL;
}

/* One precision's block under gpu.precisions: peak_tflops required, the
 * other constants default to the fp32 ones (the gpu's own fields). */
static int read_consts(cctx *p, const cJSON *o, const char *where, const gpu_consts *base, gpu_consts *k)
{
    static const char *const keys[] = {"peak_tflops",        "efficiency",       "memory_efficiency",
                                       "winograd_speedup",   "kernel_overhead_us", "saturation_gflop",
                                       "step_overhead_ms",   "provenance",       NULL};
    static const char *const eff_keys[] = {"conv", "linear", "pool", "elementwise", NULL};
    char path[96];
    if (check_keys(p, o, where, keys)) return -1;
    *k = *base;
#define RD(key, field, lo, hi, req)                                                                                \
    do {                                                                                                           \
        snprintf(path, sizeof path, "%s." key, where);                                                             \
        if (num(p, o, key, path, lo, hi, req, base->field, &k->field)) return -1;                                  \
    } while (0)
    RD("peak_tflops", peak_tflops, 1e-3, 1e5, 1);
    RD("memory_efficiency", memory_efficiency, 0.01, 1, 0);
    RD("winograd_speedup", winograd_speedup, 1, 4, 0);
    RD("kernel_overhead_us", kernel_overhead_us, 0, 1e5, 0);
    RD("saturation_gflop", saturation_gflop, 0, 1e6, 0);
    RD("step_overhead_ms", step_overhead_ms, 0, 1e6, 0);
#undef RD
    const cJSON *eff = cJSON_GetObjectItemCaseSensitive(o, "efficiency");
    snprintf(path, sizeof path, "%s.efficiency", where);
    if (eff && !cJSON_IsObject(eff))
        return cfail(p, path, "%s must be an object {conv, linear, pool, elementwise}", path, 0, 0);
    if (eff && check_keys(p, eff, path, eff_keys)) return -1;
    for (int i = 0; i < OPC__COUNT; i++) {
        snprintf(path, sizeof path, "%s.efficiency.%s", where, eff_keys[i]);
        if (num(p, eff, eff_keys[i], path, 0.001, 1, 0, base->efficiency[i], &k->efficiency[i])) return -1;
    }
    return 0;
}

static int read_precisions(cctx *p, const cJSON *gpu, gpu_spec *g)
{
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(gpu, "precisions");
    if (!pr) return 0;
    if (!cJSON_IsObject(pr))
        return cfail(p, "gpu.precisions", "%s must be an object such as {\"tf32\": {\"peak_tflops\": 156}}",
                     "gpu.precisions", 0, 0);
    gpu_consts base;
    gpu_consts_of(g, &base);
    for (const cJSON *it = pr->child; it; it = it->next) {
        char where[64];
        snprintf(where, sizeof where, "gpu.precisions.%.20s", it->string);
        int q = precision_from_name(it->string);
        if (q < 0) return cfail(p, where, "%s: unknown precision (tf32, fp16 or bf16)", where, 0, 0);
        if (q == PREC_FP32)
            return cfail(p, where, "%s: the fp32 figures are the gpu's own fields (peak_tflops, efficiency, ...)",
                         where, 0, 0);
        if (!cJSON_IsObject(it)) return cfail(p, where, "%s must be an object {peak_tflops, ...}", where, 0, 0);
        if (read_consts(p, it, where, &base, &g->prec[q])) return -1;
        unsigned char given[GC__COUNT];
        given_of(it, given);
        memcpy(g->trust[q], g->trust[PREC_FP32], sizeof g->trust[q]);
        if (read_provenance(p, it, where, given, g->trust[q])) return -1;
        g->has_prec[q] = 1;
    }
    return 0;
}

/* One of names[] (a NULL-terminated list) into *out as its index; absent: dflt. */
static int stack_choice(cctx *p, const cJSON *o, const char *key, const char *path, const char *const *names,
                        const char *list, int dflt, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = dflt;
    if (!v) return 0;
    for (int i = 0; names[i]; i++)
        if (cJSON_IsString(v) && strcmp(v->valuestring, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char m[200];
    snprintf(m, sizeof m, "\"%s\" must be %s", path, list);
    return cfail(p, path, "%s", m, 0, 0);
}

/* NCCL's ring/Simple figures (src/graph/tuning.cc: baseLat 8.4 us; hwLat
 * per step 3.4 us over NVLink, 9.6 us over the network): see data/doc/cost-model.md, Collectives. */
static int read_collectives(cctx *p, const cJSON *o, collective_spec *k)
{
    static const char *const keys[] = {"call_latency_us", "intra_step_us", "inter_step_us", "bucket_mb",
                                       "algorithms",      "intra_fabric",  NULL};
    static const char *const algos[] = {"ring-simple", "nccl", NULL};
    static const char *const fabrics[] = {"nvlink", "pcie", NULL};
    if (o && !cJSON_IsObject(o))
        return cfail(p, "collectives", "%s must be an object {call_latency_us, intra_step_us, inter_step_us, bucket_mb}",
                     "\"collectives\"", 0, 0);
    if (o && check_keys(p, o, "collectives", keys)) return -1;
    if (num(p, o, "call_latency_us", "collectives.call_latency_us", 0, 1e6, 0, 8.4, &k->call_latency_us)) return -1;
    if (num(p, o, "intra_step_us", "collectives.intra_step_us", 0, 1e6, 0, 3.4, &k->intra_step_us)) return -1;
    if (num(p, o, "inter_step_us", "collectives.inter_step_us", 0, 1e6, 0, 9.6, &k->inter_step_us)) return -1;
    if (num(p, o, "bucket_mb", "collectives.bucket_mb", 0, 1e6, 0, 25, &k->bucket_mb)) return -1;
    if (stack_choice(p, o, "algorithms", "collectives.algorithms", algos, "\"ring-simple\" or \"nccl\"", 0,
                     &k->nccl_algorithms))
        return -1;
    if (stack_choice(p, o, "intra_fabric", "collectives.intra_fabric", fabrics, "\"nvlink\" or \"pcie\"", 0, &k->pcie))
        return -1;
    return 0;
}

/* The cluster's "gpu" object into c->gpu: its name, peak, memory, the
 * kernel-efficiency constants (each with its default) and the precisions.
 * 0, or -1 with the error set. */
static int read_gpu(cctx *p, const cJSON *root, cluster *c)
{
    static const char *const gpu_keys[] = {"name", "peak_tflops", "memory_gib", "memory_bandwidth_gbs",
                                           "efficiency", "memory_efficiency", "winograd_speedup",
                                           "kernel_overhead_us", "saturation_gflop", "step_overhead_ms", "precisions",
                                           "provenance", NULL};
    static const char *const eff_keys[] = {"conv", "linear", "pool", "elementwise", NULL};
    char why[128] = "";
    const cJSON *v;
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(root, "gpu");
    if (!cJSON_IsObject(gpu)) {
        lw_fail(p->err, 2, "%s: needs a \"gpu\" object", p->label);
        return -1;
    }
    if (check_keys(p, gpu, "gpu", gpu_keys)) return -1;
    v = cJSON_GetObjectItemCaseSensitive(gpu, "name");
    if (v && (!cJSON_IsString(v) || !v->valuestring[0])) {
        cfail(p, "gpu.name", "\"%s\" must be a non-empty string (or absent: \"GPU\")", "gpu.name", 0, 0);
        return -1;
    }
    if (v && (lw_check_text(v->valuestring, LW_NAME_MAX, why, sizeof why) != 0 ||
              strlen(v->valuestring) >= sizeof c->gpu.name)) {
        if (strlen(v->valuestring) >= sizeof c->gpu.name && !why[0])
            snprintf(why, sizeof why, "is longer than %d bytes", (int)sizeof c->gpu.name - 1);
        cfail(p, "gpu.name", "\"gpu.name\" %s", why, 0, 0);
        return -1;
    }
    snprintf(c->gpu.name, sizeof c->gpu.name, "%s", v ? v->valuestring : "GPU");
    if (num(p, gpu, "peak_tflops", "gpu.peak_tflops", 1e-3, 1e5, 1, 0, &c->gpu.peak_tflops)) return -1;
    if (num(p, gpu, "memory_gib", "gpu.memory_gib", 0.01, 1e5, 1, 0, &c->gpu.memory_gib)) return -1;
    if (num(p, gpu, "memory_bandwidth_gbs", "gpu.memory_bandwidth_gbs", 1e-3, 1e6, 1, 0, &c->gpu.memory_bandwidth_gbs))
        return -1;
    if (num(p, gpu, "memory_efficiency", "gpu.memory_efficiency", 0.01, 1, 0, 0.8, &c->gpu.memory_efficiency)) return -1;
    if (num(p, gpu, "winograd_speedup", "gpu.winograd_speedup", 1, 4, 0, 1, &c->gpu.winograd_speedup)) return -1;
    if (num(p, gpu, "kernel_overhead_us", "gpu.kernel_overhead_us", 0, 1e5, 0, 5, &c->gpu.kernel_overhead_us))
        return -1;
    if (num(p, gpu, "saturation_gflop", "gpu.saturation_gflop", 0, 1e6, 0, 0, &c->gpu.saturation_gflop)) return -1;
    if (num(p, gpu, "step_overhead_ms", "gpu.step_overhead_ms", 0, 1e6, 0, 0, &c->gpu.step_overhead_ms)) return -1;
    {
        const cJSON *eff = cJSON_GetObjectItemCaseSensitive(gpu, "efficiency");
        if (eff && !cJSON_IsObject(eff)) {
            cfail(p, "efficiency", "%s must be an object {conv, linear, pool, elementwise}", "gpu.efficiency", 0, 0);
            return -1;
        }
        if (eff && check_keys(p, eff, "gpu.efficiency", eff_keys)) return -1;
        const double dflt[OPC__COUNT] = {0.6, 0.7, 0.3, 0.3};
        for (int k = 0; k < OPC__COUNT; k++) {
            char path[64];
            snprintf(path, sizeof path, "gpu.efficiency.%s", eff_keys[k]);
            if (num(p, eff, eff_keys[k], path, 0.001, 1, 0, dflt[k], &c->gpu.efficiency[k])) return -1;
        }
    }
    unsigned char given[GC__COUNT];
    given_of(gpu, given);
    if (read_provenance(p, gpu, "gpu", given, c->gpu.trust[PREC_FP32])) return -1;
    if (read_precisions(p, gpu, &c->gpu)) return -1;
    return 0;
}

/* The cluster's "links" array (per-pair overrides of the link between
 * two GPUs) into c->overrides. 0, or -1 with the error set. */
static int read_links(cctx *p, const cJSON *links, cluster *c)
{
    static const char *const ov_keys[] = {"gpus", "bandwidth_gbs", "latency_us", NULL};
    if (!cJSON_IsArray(links)) {
        cfail(p, "links", "\"links\" must be an array of %s", "{\"gpus\": [a, b], \"bandwidth_gbs\", \"latency_us\"}", 0, 0);
        return -1;
    }
    int n = cJSON_GetArraySize(links);
    if (n > CLUSTER_MAX_LINKS) {
        char count[32];
        snprintf(count, sizeof count, "%d", n);
        cfail(p, "links", "\"links\" has %s entries; at most %.0f are supported", count, CLUSTER_MAX_LINKS, 0);
        return -1;
    }
    c->overrides = lw_calloc((size_t)n, sizeof *c->overrides);
    int total = cluster_gpus(c);
    for (const cJSON *it = links->child; it; it = it->next) {
        link_override *o = &c->overrides[c->n_overrides];
        char where[64];
        snprintf(where, sizeof where, "links[%d]", c->n_overrides);
        if (!cJSON_IsObject(it) || check_keys(p, it, where, ov_keys)) {
            if (!cJSON_IsObject(it)) lw_fail(p->err, 2, "%s: %s must be an object", p->label, where);
            return -1;
        }
        const cJSON *gp = cJSON_GetObjectItemCaseSensitive(it, "gpus");
        if (!cJSON_IsArray(gp) || cJSON_GetArraySize(gp) != 2 || !cJSON_IsNumber(gp->child) ||
            !cJSON_IsNumber(gp->child->next)) {
            lw_fail(p->err, 2, "%s: %s needs \"gpus\": [a, b]", p->label, where);
            return -1;
        }
        double a = gp->child->valuedouble, b = gp->child->next->valuedouble;
        if (a != floor(a) || b != floor(b) || a < 0 || b < 0 || a >= total || b >= total || a == b) {
            lw_fail(p->err, 2, "%s: %s: \"gpus\" must be two different GPU ids from 0 to %d", p->label, where,
                    total - 1);
            return -1;
        }
        o->a = (int)a;
        o->b = (int)b;
        if (read_link(p, it, where, &o->link)) return -1;
        c->n_overrides++;
    }
    if (duplicate_link(c, p->label, p->err)) return -1;
    return 0;
}

/* A text field of a stack into out (size n): absent leaves "" (name: required). */
static int stack_text(cctx *p, const cJSON *o, const char *key, const char *path, char *out, size_t n, int required)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char why[128] = "";
    if (!v && !required) return 0;
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return cfail(p, v ? path : NULL, "\"%s\" must be a non-empty string", path, 0, 0);
    if (lw_check_text(v->valuestring, LW_NAME_MAX, why, sizeof why) != 0 || strlen(v->valuestring) >= n) {
        if (!why[0]) snprintf(why, sizeof why, "is longer than %d bytes", (int)n - 1);
        char m[200];
        snprintf(m, sizeof m, "\"%s\" %s", path, why);
        return cfail(p, path, "%s", m, 0, 0);
    }
    snprintf(out, n, "%s", v->valuestring);
    return 0;
}

/* A stack: a cluster's "stack" block (where "stack") or a stack file's top
 * level (where "stack file", format checked by the caller). Fields absent
 * leave the GPU's or cluster's figure (see stack_spec). */
static int read_stack(cctx *p, const cJSON *o, const char *where, stack_spec *s)
{
    static const char *const keys[] = {"format", "name", "framework", "version", "kernel_overhead_us",
                                       "step_overhead_ms", "gemm_scale", "winograd_speedup", "grad_sync", "overlap",
                                       "bucket_mb", "conv_layout", NULL};
    static const char *const prec_keys[] = {"fp32", "tf32", "fp16", "bf16", NULL};
    static const char *const sync_names[] = {"fp32", "training", NULL};
    static const char *const overlap_names[] = {"none", "full", "ddp", NULL}; /* sim_overlap's order */
    static const char *const layout_names[] = {"nhwc", "nchw", NULL};
    const int top = strcmp(where, "stack file") == 0;
    char path[96];
    int k;
    memset(s, 0, sizeof *s);
    if (!cJSON_IsObject(o)) return cfail(p, where, "%s must be an object {name, framework, version, ...}", where, 0, 0);
    if (check_keys(p, o, where, keys)) return -1;
    if (!top && cJSON_GetObjectItemCaseSensitive(o, "format"))
        return cfail(p, "stack.format", "%s: \"format\" belongs to a stack file, not a cluster's block", where, 0, 0);
#define P(key) (snprintf(path, sizeof path, "%s%s" key, top ? "" : where, top ? "" : "."), path)
    if (stack_text(p, o, "name", P("name"), s->name, sizeof s->name, 1)) return -1;
    if (stack_text(p, o, "framework", P("framework"), s->framework, sizeof s->framework, 0)) return -1;
    if (stack_text(p, o, "version", P("version"), s->version, sizeof s->version, 0)) return -1;
    if (num(p, o, "kernel_overhead_us", P("kernel_overhead_us"), 0, 1e5, 0, -1, &s->kernel_overhead_us)) return -1;
    if (num(p, o, "step_overhead_ms", P("step_overhead_ms"), 0, 1e6, 0, -1, &s->step_overhead_ms)) return -1;
    if (num(p, o, "bucket_mb", P("bucket_mb"), 0, 1e6, 0, -1, &s->bucket_mb)) return -1;
    if (num(p, o, "winograd_speedup", P("winograd_speedup"), 1, 4, 0, -1, &s->winograd_speedup)) return -1;
    if (stack_choice(p, o, "grad_sync", P("grad_sync"), sync_names, "\"fp32\" or \"training\"", 0, &k)) return -1;
    s->grad_sync_bytes = k == 0 ? 4.0 : 0.0;
    if (stack_choice(p, o, "overlap", P("overlap"), overlap_names, "\"none\", \"ddp\" or \"full\"", -1, &s->overlap))
        return -1;
    if (stack_choice(p, o, "conv_layout", P("conv_layout"), layout_names, "\"nhwc\" or \"nchw\"", 0, &s->conv_nchw))
        return -1;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "gemm_scale");
    P("gemm_scale");
    if (g && !cJSON_IsObject(g)) return cfail(p, path, "%s must be an object such as {\"fp16\": 0.7}", path, 0, 0);
    if (g && check_keys(p, g, path, prec_keys)) return -1;
    char base[96];
    snprintf(base, sizeof base, "%s", path);
    for (int q = 0; q < PREC__COUNT; q++) {
        snprintf(path, sizeof path, "%.80s.%s", base, prec_keys[q]);
        if (num(p, g, prec_keys[q], path, 0.01, 10, 0, 1, &s->gemm_scale[q])) return -1;
    }
#undef P
    s->given = 1;
    return 0;
}

int stack_from_json(const char *text, size_t len, const char *label, stack_spec *s, lw_error *err)
{
    cctx p = {text, label, err};
    cJSON *root = json_parse_doc(text, len, label, err);
    if (!root) return -1;
    int rc = -1;
    const cJSON *v = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "format") : NULL;
    if (!cJSON_IsObject(root))
        lw_fail(err, 2, "%s: the top level must be a JSON object", label);
    else if (!cJSON_IsString(v) || strcmp(v->valuestring, "layerwise-stack/1") != 0)
        cfail(&p, "format", "\"format\" must be \"layerwise-stack/1\"%s", v ? "" : " (missing)", 0, 0);
    else
        rc = read_stack(&p, root, "stack file", s);
    cJSON_Delete(root);
    return rc;
}

/* The cluster's default sync scheme and precision ("sync", "precision";
 * parameter server and fp32 when absent): a precision must be one the GPU
 * gives figures for. 0, or -1 with the error set. */
static int read_defaults(cctx *p, const cJSON *root, cluster *c)
{
    const cJSON *v;
    v = cJSON_GetObjectItemCaseSensitive(root, "sync");
    if (!v) {
        c->sync = SYNC_PARAMETER_SERVER;
    } else if (!cJSON_IsString(v) || sync_scheme_from_name(v->valuestring) < 0) {
        cfail(p, "sync", "\"sync\" must be %s", "\"parameter-server\", \"ring-allreduce\", \"zero1\", \"zero2\", \"zero3\", \"fsdp\" or \"hsdp\"", 0, 0);
        return -1;
    } else {
        c->sync = (sync_scheme)sync_scheme_from_name(v->valuestring);
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "precision");
    c->precision = PREC_FP32;
    if (v) {
        int pr = cJSON_IsString(v) ? precision_from_name(v->valuestring) : -1;
        if (pr < 0) {
            cfail(p, "precision", "\"precision\" must be %s", "\"fp32\", \"tf32\", \"fp16\" or \"bf16\"", 0, 0);
            return -1;
        }
        if (pr != PREC_FP32 && !c->gpu.has_prec[pr]) {
            cfail(p, "precision", "\"precision\" is \"%s\", but gpu.precisions gives no figures for it",
                  precision_name((precision)pr), 0, 0);
            return -1;
        }
        c->precision = (precision)pr;
    }
    return 0;
}

cluster *cluster_from_json(const char *text, size_t len, const char *label, lw_error *err)
{
    cctx p = {text, label, err};
    cJSON *root = json_parse_doc(text, len, label, err);
    if (!root) return NULL;
    cluster *c = lw_calloc(1, sizeof *c);
    double x;
    const cJSON *v;
    static const char *const top_keys[] = {"format", "name", "nodes", "gpus_per_node", "gpu", "intra_node",
                                           "inter_node", "links", "sync", "precision", "collectives", "stack", NULL};
    static const char *const link_keys[] = {"bandwidth_gbs", "latency_us", NULL};
    static const char *const inter_keys[] = {"bandwidth_gbs", "latency_us", "nics_per_node", NULL};

    if (!cJSON_IsObject(root)) {
        lw_fail(err, 2, "%s: the top level must be a JSON object", label);
        goto fail;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(v) || strcmp(v->valuestring, "layerwise-cluster/1") != 0) {
        cfail(&p, "format", "\"format\" must be \"layerwise-cluster/1\"%s", v ? "" : " (missing)", 0, 0);
        goto fail;
    }
    if (check_keys(&p, root, "cluster", top_keys)) goto fail;
    v = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (!cJSON_IsString(v) || !v->valuestring[0]) {
        lw_fail(err, 2, "%s: needs a non-empty string \"name\"", label);
        goto fail;
    }
    char why[128] = "";
    if (lw_check_text(v->valuestring, LW_NAME_MAX, why, sizeof why) != 0) {
        cfail(&p, "name", "the cluster's \"name\" %s", why, 0, 0);
        goto fail;
    }
    c->name = lw_strdup(v->valuestring);
    c->path = lw_strdup(label);
    if (num(&p, root, "nodes", "nodes", 1, CLUSTER_MAX_GPUS, 1, 0, &x)) goto fail;
    if (x != floor(x)) {
        cfail(&p, "nodes", "\"%s\" must be an integer", "nodes", 0, 0);
        goto fail;
    }
    c->nodes = (int)x;
    if (num(&p, root, "gpus_per_node", "gpus_per_node", 1, 1024, 1, 0, &x)) goto fail;
    if (x != floor(x)) {
        cfail(&p, "gpus_per_node", "\"%s\" must be an integer", "gpus_per_node", 0, 0);
        goto fail;
    }
    c->gpus_per_node = (int)x;
    if ((long)c->nodes * c->gpus_per_node > CLUSTER_MAX_GPUS) {
        lw_fail(err, 2, "%s: %d nodes x %d GPUs is more than the %d GPUs supported", label, c->nodes,
                c->gpus_per_node, CLUSTER_MAX_GPUS);
        goto fail;
    }
    if (read_gpu(&p, root, c)) goto fail;
    const cJSON *intra = cJSON_GetObjectItemCaseSensitive(root, "intra_node");
    const cJSON *inter = cJSON_GetObjectItemCaseSensitive(root, "inter_node");
    if (!cJSON_IsObject(intra) || check_keys(&p, intra, "intra_node", link_keys) ||
        read_link(&p, intra, "intra_node", &c->intra)) {
        if (!cJSON_IsObject(intra)) lw_fail(err, 2, "%s: needs an \"intra_node\" object {bandwidth_gbs, latency_us}", label);
        goto fail;
    }
    if (c->nodes > 1 || inter) {
        if (!cJSON_IsObject(inter) || check_keys(&p, inter, "inter_node", inter_keys) ||
            read_link(&p, inter, "inter_node", &c->inter)) {
            if (!cJSON_IsObject(inter))
                lw_fail(err, 2, "%s: a cluster of several nodes needs an \"inter_node\" object", label);
            goto fail;
        }
        if (num(&p, inter, "nics_per_node", "inter_node.nics_per_node", 1, 1024, 0, 1, &x)) goto fail;
        if (x != floor(x)) {
            cfail(&p, "inter_node.nics_per_node", "\"%s\" must be an integer", "inter_node.nics_per_node", 0, 0);
            goto fail;
        }
        c->nics_per_node = (int)x;
    } else {
        c->inter = c->intra;
        c->nics_per_node = 1;
    }
    if (read_defaults(&p, root, c)) goto fail;
    if (read_collectives(&p, cJSON_GetObjectItemCaseSensitive(root, "collectives"), &c->coll)) goto fail;
    const cJSON *links = cJSON_GetObjectItemCaseSensitive(root, "links");
    if (links && read_links(&p, links, c)) goto fail;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "stack");
    if (st) {
        stack_spec s;
        if (read_stack(&p, st, "stack", &s)) goto fail;
        cluster_set_stack(c, &s);
    }
    cJSON_Delete(root);
    return c;
fail:
    cJSON_Delete(root);
    cluster_free(c);
    return NULL;
}

cluster *cluster_load_file(const char *path, lw_error *err)
{
    size_t len;
    char *text = lw_read_file(path, &len, err);
    if (!text) return NULL;
    cluster *c = cluster_from_json(text, len, path, err);
    free(text);
    return c;
}

cluster *cluster_clone(const cluster *c)
{
    cluster *d = lw_malloc(sizeof *d);
    *d = *c;
    d->name = lw_strdup(c->name);
    d->path = c->path ? lw_strdup(c->path) : NULL;
    d->overrides = lw_calloc((size_t)c->n_overrides + 1, sizeof *d->overrides);
    if (c->n_overrides) memcpy(d->overrides, c->overrides, sizeof *d->overrides * (size_t)c->n_overrides);
    return d;
}

int cluster_equal(const cluster *a, const cluster *b)
{
    if (a->nodes != b->nodes || a->gpus_per_node != b->gpus_per_node || a->nics_per_node != b->nics_per_node ||
        a->sync != b->sync || a->n_overrides != b->n_overrides || a->precision != b->precision ||
        memcmp(&a->coll, &b->coll, sizeof a->coll) != 0)
        return 0;
    if (memcmp(&a->stack, &b->stack, sizeof a->stack) != 0) return 0;
    if (memcmp(&a->gpu, &b->gpu, sizeof a->gpu) != 0 || memcmp(&a->intra, &b->intra, sizeof a->intra) != 0 ||
        memcmp(&a->inter, &b->inter, sizeof a->inter) != 0)
        return 0;
    for (int i = 0; i < a->n_overrides; i++)
        if (a->overrides[i].a != b->overrides[i].a || a->overrides[i].b != b->overrides[i].b ||
            memcmp(&a->overrides[i].link, &b->overrides[i].link, sizeof(link_spec)) != 0)
            return 0;
    return 1;
}

void cluster_free(cluster *c)
{
    if (!c) return;
    free(c->name);
    free(c->path);
    free(c->overrides);
    free(c);
}
