#include "profile.h"

#include "json_util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t profile_shape_hash(const profile_entry *e)
{
    /* FNV-1a over the fields, one at a time (no padding bytes) */
    uint64_t h = 1469598103934665603ULL;
#define PS_MIX(x)                                                                                                      \
    do {                                                                                                               \
        h ^= (uint64_t)(x);                                                                                            \
        h *= 1099511628211ULL;                                                                                         \
    } while (0)
    PS_MIX(e->type);
    for (int d = 0; d < 4; d++) {
        PS_MIX(e->in[d]);
        PS_MIX(e->out[d]);
    }
    for (int j = 0; j < 2; j++) {
        PS_MIX(e->k[j]);
        PS_MIX(e->s[j]);
        PS_MIX(e->p[j]);
    }
#undef PS_MIX
    return h ^ h >> 29;
}

/* Same type and shapes (the input count aside). */
static int same_dims(const profile_entry *a, const profile_entry *b)
{
    return a->type == b->type && memcmp(a->in, b->in, sizeof a->in) == 0 && memcmp(a->out, b->out, sizeof a->out) == 0 &&
           memcmp(a->k, b->k, sizeof a->k) == 0 && memcmp(a->s, b->s, sizeof a->s) == 0 &&
           memcmp(a->p, b->p, sizeof a->p) == 0;
}

int profile_same_shape(const profile_entry *a, const profile_entry *b)
{
    return a->n_inputs == b->n_inputs && same_dims(a, b);
}

/* p->index over p->e, entries in file order: those of one shape have one
 * start and are placed in the order of their indices, so a lookup meets
 * them in file order. */
static void profile_index(profile *p)
{
    int cap = 16;
    while (cap < 2 * p->n + 2) cap *= 2;
    free(p->index);
    p->index = lw_calloc((size_t)cap, sizeof(int));
    p->index_cap = cap;
    for (int i = 0; i < p->n; i++) {
        size_t at = (size_t)profile_shape_hash(&p->e[i]) & (size_t)(cap - 1);
        while (p->index[at]) at = (at + 1) & (size_t)(cap - 1);
        p->index[at] = i + 1;
    }
}

int profile_add_shape(profile *set, const profile_entry *key)
{
    if (!set->index) profile_index(set);
    const size_t mask = (size_t)(set->index_cap - 1);
    size_t at = (size_t)profile_shape_hash(key) & mask;
    for (; set->index[at]; at = (at + 1) & mask)
        if (profile_same_shape(&set->e[set->index[at] - 1], key)) return 0;
    if ((set->n & (set->n - 1)) == 0) /* 0, 1, 2, 4, ...: full */
        set->e = lw_realloc(set->e, sizeof *set->e * (size_t)(set->n ? 2 * set->n : 1));
    set->e[set->n++] = *key;
    set->index[at] = set->n;
    if (2 * set->n + 2 > set->index_cap) profile_index(set); /* kept under half full */
    return 1;
}

static int read_vec(const cJSON *o, const char *key, long *v, int n, int required, long dflt)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!a) {
        for (int i = 0; i < n; i++) v[i] = dflt;
        return required ? -1 : 0;
    }
    if (cJSON_IsNumber(a) && n == 2) {
        if (a->valuedouble != floor(a->valuedouble) || a->valuedouble < 0 || a->valuedouble > 1e9) return -1;
        v[0] = v[1] = (long)a->valuedouble;
        return 0;
    }
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) return -1;
    int i = 0;
    for (const cJSON *it = a->child; it; it = it->next, i++) {
        if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < 0 ||
            it->valuedouble > 1e12)
            return -1;
        v[i] = (long)it->valuedouble;
    }
    return 0;
}

/* A field not in `allowed` is an error: a typo must not silently fall back. */
static int unknown_key(const cJSON *o, const char *const *allowed, const char *label, const char *where, lw_error *err)
{
    for (const cJSON *it = o->child; it; it = it->next) {
        int ok = 0;
        for (const char *const *a = allowed; *a && !ok; a++) ok = strcmp(*a, it->string) == 0;
        if (!ok) return lw_fail(err, 2, "%s: %sunknown field \"%.100s\"", label, where, it->string);
    }
    return 0;
}

/* An entry that an earlier one hides: the same task shape with the same
 * input count, or after one without "inputs" (which matches any count).
 * Lookups take the first, so the later one would be silently unused:
 * refused, naming both. Entries of one shape meet in the index in file
 * order, so one probe per entry finds its earlier twins. */
static int duplicate_entry(const profile *p, const char *label, lw_error *err)
{
    const size_t mask = (size_t)(p->index_cap - 1);
    for (int i = 0; i < p->n; i++) {
        const profile_entry *e = &p->e[i];
        for (size_t at = (size_t)profile_shape_hash(e) & mask; p->index[at] && p->index[at] - 1 < i;
             at = (at + 1) & mask) {
            const profile_entry *f = &p->e[p->index[at] - 1];
            if (!same_dims(f, e) || (f->n_inputs != 0 && f->n_inputs != e->n_inputs)) continue;
            return lw_fail(err, 2,
                           "%s: entries[%d] is the same task shape as entries[%d] (%s, input [%ld, %ld, %ld, %ld], "
                           "output [%ld, %ld, %ld, %ld]%s): give each shape once",
                           label, i, p->index[at] - 1, layer_type_name(e->type), e->in[0], e->in[1], e->in[2],
                           e->in[3], e->out[0], e->out[1], e->out[2], e->out[3],
                           f->n_inputs ? "" : e->n_inputs ? "; the first has no \"inputs\": it matches any count" : "");
        }
    }
    return 0;
}

/* Entry i of a profile's "entries" (it) into e: its layer type, input
 * count, shapes, window and times. 0, or -1 with err set. */
static int read_entry(const cJSON *it, int i, profile_entry *e, const char *label, lw_error *err)
{
    static const char *const entry_keys[] = {"type", "input", "output", "kernel", "stride", "padding", "inputs",
                                             "forward_ms", "backward_ms", "comment", NULL};
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(it, "type");
    int ty = cJSON_IsString(t) ? layer_type_from_name(t->valuestring) : -1;
    if (!cJSON_IsObject(it) || ty < 0) {
        lw_fail(err, 2, "%s: entries[%d]: needs a known layer \"type\"", label, i);
        return -1;
    }
    e->type = ty;
    char where[48];
    snprintf(where, sizeof where, "entries[%d]: ", i);
    if (unknown_key(it, entry_keys, label, where, err)) return -1;
    const cJSON *ni = cJSON_GetObjectItemCaseSensitive(it, "inputs");
    if (ni && (!cJSON_IsNumber(ni) || ni->valuedouble != floor(ni->valuedouble) || ni->valuedouble < 1 ||
               ni->valuedouble > 1024)) {
        lw_fail(err, 2, "%s: entries[%d]: \"inputs\" must be the layer's number of inputs (an integer)", label, i);
        return -1;
    }
    e->n_inputs = ni ? (int)ni->valuedouble : 0;
    long k[2], s[2], pd[2];
    int win = ty == LT_CONV2D || ty == LT_POOL2D;
    if (read_vec(it, "input", e->in, 4, 1, 1) || read_vec(it, "output", e->out, 4, 1, 1) ||
        read_vec(it, "kernel", k, 2, win, 1) || read_vec(it, "stride", s, 2, 0, 1) ||
        read_vec(it, "padding", pd, 2, 0, 0)) {
        lw_fail(err, 2,
                "%s: entries[%d]: \"input\" and \"output\" must be [n, c, h, w] of non-negative integers%s",
                label, i, win ? "; \"kernel\" (and \"stride\", \"padding\") an integer or [h, w]" : "");
        return -1;
    }
    for (int j = 0; j < 2; j++) {
        e->k[j] = win ? (int)k[j] : 0;
        e->s[j] = win ? (int)s[j] : 0;
        e->p[j] = win ? (int)pd[j] : 0;
    }
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(it, "forward_ms");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(it, "backward_ms");
    if (!cJSON_IsNumber(f) || !cJSON_IsNumber(b) || !isfinite(f->valuedouble) || !isfinite(b->valuedouble) ||
        f->valuedouble < 0 || b->valuedouble < 0 || f->valuedouble > 1e7 || b->valuedouble > 1e7) {
        lw_fail(err, 2, "%s: entries[%d]: needs non-negative numbers \"forward_ms\" and \"backward_ms\"", label, i);
        return -1;
    }
    e->forward_ms = f->valuedouble;
    e->backward_ms = b->valuedouble;
    return 0;
}

profile *profile_from_json(const char *text, size_t len, const char *label, lw_error *err)
{
    cJSON *root = json_parse_doc(text, len, label, err);
    if (!root) return NULL;
    profile *p = lw_calloc(1, sizeof *p);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(root, "gpu");
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
    if (!cJSON_IsObject(root) || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, "layerwise-profile/1") != 0) {
        lw_fail(err, 2, "%s: \"format\" must be \"layerwise-profile/1\"", label);
        goto fail;
    }
    if (!cJSON_IsString(gpu) || !gpu->valuestring[0]) {
        lw_fail(err, 2, "%s: needs a string \"gpu\" naming the GPU it was measured on", label);
        goto fail;
    }
    if (!cJSON_IsArray(entries)) {
        lw_fail(err, 2, "%s: needs an \"entries\" array", label);
        goto fail;
    }
    static const char *const top_keys[] = {"format", "gpu", "precision", "entries", "comment", NULL};
    if (unknown_key(root, top_keys, label, "", err)) goto fail;
    char why[128];
    if (lw_check_text(gpu->valuestring, LW_NAME_MAX, why, sizeof why) != 0) {
        lw_fail(err, 2, "%s: \"gpu\" %s", label, why);
        goto fail;
    }
    p->gpu = lw_strdup(gpu->valuestring);
    p->path = lw_strdup(label);
    p->precision = -1; /* profiles before the field: not recorded */
    const cJSON *prec = cJSON_GetObjectItemCaseSensitive(root, "precision");
    if (prec) {
        p->precision = cJSON_IsString(prec) ? precision_from_name(prec->valuestring) : -1;
        if (p->precision < 0) {
            lw_fail(err, 2, "%s: \"precision\" must be the precision the times were measured at: \"fp32\", \"tf32\", "
                    "\"fp16\" or \"bf16\"", label);
            goto fail;
        }
    }
    int n = cJSON_GetArraySize(entries);
    if (n > 1000000) {
        lw_fail(err, 2, "%s: %d entries; at most 1000000 are supported", label, n);
        goto fail;
    }
    p->e = lw_calloc((size_t)n + 1, sizeof *p->e);
    int i = 0;
    for (const cJSON *it = entries->child; it; it = it->next, i++) {
        if (read_entry(it, i, &p->e[i], label, err) != 0) goto fail;
    }
    p->n = n;
    cJSON_Delete(root);
    profile_index(p);
    if (duplicate_entry(p, label, err)) {
        profile_free(p);
        return NULL;
    }
    return p;
fail:
    cJSON_Delete(root);
    profile_free(p);
    return NULL;
}

profile *profile_load_file(const char *path, lw_error *err)
{
    size_t len;
    char *text = lw_read_file(path, &len, err);
    if (!text) return NULL;
    profile *p = profile_from_json(text, len, path, err);
    free(text);
    return p;
}

void profile_free(profile *p)
{
    if (!p) return;
    free(p->gpu);
    free(p->path);
    free(p->e);
    free(p->index);
    free(p);
}

static int matches(const profile_entry *e, const profile_entry *key)
{
    return (e->n_inputs == 0 || e->n_inputs == key->n_inputs) && same_dims(e, key);
}

double profile_lookup(const profile *p, const profile_entry *key)
{
    if (!p) return -1;
    if (p->index) { /* the entries of key's shape in file order, among others of its start */
        const size_t mask = (size_t)(p->index_cap - 1);
        for (size_t at = (size_t)profile_shape_hash(key) & mask; p->index[at]; at = (at + 1) & mask) {
            const profile_entry *e = &p->e[p->index[at] - 1];
            if (matches(e, key)) return e->forward_ms + e->backward_ms;
        }
        return -1;
    }
    for (int i = 0; i < p->n; i++)
        if (matches(&p->e[i], key)) return p->e[i].forward_ms + p->e[i].backward_ms;
    return -1;
}

int profile_applies(const profile *p, const cluster *cl)
{
    return p && strcmp(p->gpu, cl->gpu.name) == 0 && (p->precision < 0 || p->precision == (int)cl->precision);
}

int profile_check_cluster(const profile *p, const cluster *cl, lw_error *err)
{
    const char *made = p->precision >= 0 ? precision_name((precision)p->precision) : "an unrecorded precision";
    if (strcmp(p->gpu, cl->gpu.name) != 0 || (p->precision >= 0 && p->precision != (int)cl->precision))
        return lw_fail(err, 2,
                       "%s: the profile was made for %s at %s, but this run uses %s at %s (cluster %s): its times "
                       "do not hold there; write a template for this run with `layerwise profile`",
                       p->path, p->gpu, made, cl->gpu.name, precision_name(cl->precision), cl->name);
    return p->precision < 0 ? 1 : 0;
}
