/*
 * screen_cluster: the device graph — nodes, GPUs, link bandwidths and
 * latencies, the sync scheme — with the settings of the run (GPUs given,
 * batch), every one editable as a what-if: Enter types a value, Left/Right
 * halve or double it. Values that differ from the file are marked, and R
 * puts the cluster back as loaded.
 */
#include "draw.h"
#include "find.h"
#include "list.h"
#include "screens.h"
#include "prompt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    F_NODES,
    F_GPN,
    F_TFLOPS,
    F_INTRA_BW,
    F_INTRA_LAT,
    F_INTER_BW,
    F_INTER_LAT,
    F_NICS,
    F_PRECISION,
    F_BUCKET,
    F_SYNC,
    F_GPUS,
    F_BATCH,
    F__COUNT
};

static const char *const field_label[F__COUNT] = {
    "nodes", "GPUs per node", "peak TFLOPS (in use)", "intra-node GB/s", "intra-node latency us",
    "inter-node GB/s", "inter-node latency us", "NICs per node", "precision", "gradient bucket MiB", "sync scheme",
    "GPUs given", "batch per GPU",
};

static double field_value(const app *a, const cluster *c, int f)
{
    switch (f) {
    case F_NODES: return c->nodes;
    case F_GPN: return c->gpus_per_node;
    case F_TFLOPS: return c->precision == PREC_FP32 ? c->gpu.peak_tflops : c->gpu.prec[c->precision].peak_tflops;
    case F_INTRA_BW: return c->intra.bandwidth_gbs;
    case F_INTRA_LAT: return c->intra.latency_us;
    case F_INTER_BW: return c->inter.bandwidth_gbs;
    case F_INTER_LAT: return c->inter.latency_us;
    case F_NICS: return c->nics_per_node;
    case F_PRECISION: return c->precision;
    case F_BUCKET: return c->coll.bucket_mb;
    case F_SYNC: return c->sync;
    case F_GPUS: return plan_gpus(a->p);
    case F_BATCH: return (double)app_batch_per_gpu(a);
    default: return 0;
    }
}

static void field_text(const app *a, const cluster *c, int f, char *buf, size_t n)
{
    double v = field_value(a, c, f);
    if (f == F_SYNC) snprintf(buf, n, "%s", sync_scheme_name(c->sync));
    else if (f == F_PRECISION) snprintf(buf, n, "%s", precision_name(c->precision));
    else if (f == F_TFLOPS || f == F_BUCKET || f == F_INTRA_BW || f == F_INTRA_LAT || f == F_INTER_BW || f == F_INTER_LAT)
        snprintf(buf, n, "%g", v);
    else snprintf(buf, n, "%.0f", v);
}

/* Range check for a cluster field's new value (integers rounded); NULL if
 * fine, else why not. */
static const char *field_check(const cluster *c, int f, double *v, char *why, size_t n)
{
    int integer = f == F_NODES || f == F_GPN || f == F_NICS;
    if (integer) *v = floor(*v + 0.5);
    double lo = f == F_INTRA_LAT || f == F_INTER_LAT || f == F_BUCKET ? 0 : integer ? 1 : 1e-3;
    double hi = f == F_NODES || f == F_GPN ? 4096 : 1e6;
    if (!(*v >= lo && *v <= hi)) {
        snprintf(why, n, "%s must be from %g to %g", field_label[f], lo, hi);
        return why;
    }
    if ((f == F_NODES || f == F_GPN) && *v * (f == F_NODES ? c->gpus_per_node : c->nodes) > CLUSTER_MAX_GPUS) {
        snprintf(why, n, "at most %d GPUs in a cluster", CLUSTER_MAX_GPUS);
        return why;
    }
    return NULL;
}

/* Sets a cluster field (not sync, GPUs or batch) on c. */
static void field_store(cluster *c, int f, double v)
{
    switch (f) {
    case F_NODES: c->nodes = (int)v; break;
    case F_GPN: c->gpus_per_node = (int)v; break;
    case F_TFLOPS: /* the peak of the precision in use */
        if (c->precision == PREC_FP32) c->gpu.peak_tflops = v;
        else c->gpu.prec[c->precision].peak_tflops = v;
        break;
    case F_INTRA_BW: cluster_set_intra_bw(c, v); break;
    case F_INTRA_LAT: c->intra.latency_us = v; break;
    case F_INTER_BW: c->inter.bandwidth_gbs = v; break;
    case F_INTER_LAT: c->inter.latency_us = v; break;
    case F_NICS: c->nics_per_node = (int)v; break;
    case F_BUCKET: c->coll.bucket_mb = v; break;
    default: break;
    }
}

/* A smaller cluster keeps as many GPUs as it still has. */
static void keep_gpus_within(app *a, const cluster *c)
{
    if (plan_run_settings(a->p)->gpus > cluster_gpus(c)) app_change_settings(a)->gpus = cluster_gpus(c);
}

static action apply(app *a, int f, double v)
{
    const cluster *c = plan_cluster(a->p);
    if (f == F_SYNC) return app_toggle_sync(a);
    if (f == F_PRECISION) return app_cycle_precision(a);
    if (f == F_GPUS) return app_set_gpus(a, (int)v);
    if (f == F_BATCH) return app_set_batch(a, (long)v);
    char why[96];
    if (field_check(c, f, &v, why, sizeof why)) {
        app_set_status(a, 1, "%s", why);
        return ACT_REDRAW;
    }
    double old = field_value(a, c, f);
    if (old == v) return ACT_NONE;
    char what[128];
    snprintf(what, sizeof what, "%s %g%s%g", field_label[f], old, G->arrow_right, v);
    app_whatif_begin(a, what);
    cluster *edited = app_change_cluster(a);
    field_store(edited, f, v);
    keep_gpus_within(a, edited);
    app_invalidate_settings(a);
    return ACT_REBUILD;
}

/* The value Left (halve) or Right (double) gives field f. */
static double field_step(const app *a, int f, int up)
{
    double v = field_value(a, plan_cluster(a->p), f);
    if (f == F_INTRA_LAT || f == F_INTER_LAT || f == F_BUCKET) {
        if (v == 0 && up) return 1;
        return up ? v * 2 : v / 2;
    }
    v = up ? v * 2 : v / 2;
    if ((f == F_NODES || f == F_GPN || f == F_NICS || f == F_BATCH) && v < 1) v = 1;
    return v;
}

/* The prefetch hook: the cluster as Right (out[0]) and Left would make it
 * with the selected field doubled and halved, where that is a cluster
 * field and the value is allowed. */
static int cluster_field_neighbours(const app *a, cluster *out[2])
{
    int f = cluster_of(a)->cur.sel, n = 0;
    if (f == F_SYNC || f == F_PRECISION || f == F_GPUS || f == F_BATCH || f < 0 || f >= F__COUNT) return 0;
    for (int up = 1; up >= 0; up--) {
        double v = field_step(a, f, up);
        char why[96];
        if (field_check(plan_cluster(a->p), f, &v, why, sizeof why) || v == field_value(a, plan_cluster(a->p), f)) continue;
        out[n] = cluster_clone(plan_cluster(a->p));
        field_store(out[n], f, v);
        n++;
    }
    return n;
}

static action cluster_field_set(app *a, const char *text, int f)
{
    if (f < 0 || f >= F__COUNT) return ACT_NONE;
    if (f == F_SYNC) {
        int s = sync_scheme_from_name(text);
        if (s < 0) {
            app_set_status(a, 1, "sync \"%s\": say ps, ring, zero1, zero2, zero3, fsdp or hsdp", text);
            return ACT_REDRAW;
        }
        return (sync_scheme)s == plan_cluster(a->p)->sync ? ACT_NONE : app_set_sync(a, (sync_scheme)s);
    }
    if (f == F_PRECISION) {
        const cluster *c = plan_cluster(a->p);
        int q = precision_from_name(text);
        gpu_consts k;
        if (q < 0 || cluster_gpu_consts(c, (precision)q, &k) != 0) {
            app_set_status(a, 1, "precision \"%s\": %s has figures for fp32%s%s%s", text, c->gpu.name,
                           c->gpu.has_prec[PREC_TF32] ? ", tf32" : "", c->gpu.has_prec[PREC_FP16] ? ", fp16" : "",
                           c->gpu.has_prec[PREC_BF16] ? ", bf16" : "");
            return ACT_REDRAW;
        }
        if ((precision)q == c->precision) return ACT_NONE;
        char what[96];
        snprintf(what, sizeof what, "precision %s%s%s", precision_name(c->precision), G->arrow_right, text);
        app_whatif_begin(a, what);
        app_change_cluster(a)->precision = (precision)q;
        app_invalidate_settings(a);
        return ACT_REBUILD;
    }
    /* the CLI's parsers and ranges (src/util.h): a count is a whole number
     * in range, never a double rounded or cast out of range (1e10, nan, -5) */
    char t[64];
    while (*text == ' ') text++;
    snprintf(t, sizeof t, "%s", text);
    for (size_t n = strlen(t); n && t[n - 1] == ' ';) t[--n] = 0;
    int count = f == F_NODES || f == F_GPN || f == F_NICS || f == F_GPUS || f == F_BATCH;
    double v;
    if (count) {
        long lo = 1, hi = f == F_BATCH ? 1000000L : f == F_NICS ? 1024 : CLUSTER_MAX_GPUS, n;
        if (lw_parse_long(t, lo, hi, &n) != 0) {
            app_set_status(a, 1, "%s \"%s\" must be a whole number from %ld to %ld", field_label[f], t, lo, hi);
            return ACT_REDRAW;
        }
        v = (double)n;
    } else {
        double lo = f == F_INTRA_LAT || f == F_INTER_LAT || f == F_BUCKET ? 0 : 1e-3, hi = 1e6;
        if (lw_parse_double(t, lo, hi, &v) != 0) {
            app_set_status(a, 1, "%s \"%s\" must be a number from %g to %g", field_label[f], t, lo, hi);
            return ACT_REDRAW;
        }
    }
    return apply(a, f, v);
}

/* The GPU's constants at the precision in use that were not fitted to a
 * measurement (the file's provenance: derived, copied from another GPU or
 * assumed), each marked "~": " Not fitted at fp16: ~GEMM efficiency
 * (derived), ...". Empty when all are fitted or datasheet figures, or the
 * file does not say. */
static void unfitted_text(const cluster *c, char *buf, size_t n)
{
    size_t l = 0;
    buf[0] = 0;
    for (int k = 0; k < GC__COUNT && l + 1 < n; k++) {
        const_trust t = cluster_const_trust(c, c->precision, k);
        if (!trust_unfitted(t)) continue;
        int w = l ? snprintf(buf + l, n - l, ", ") : snprintf(buf, n, " Not fitted at %s: ", precision_name(c->precision));
        if (w > 0) l += (size_t)w;
        if (l + 1 >= n) break;
        w = snprintf(buf + l, n - l, "~%s (%s)", gpu_const_words(k), t == TRUST_COPIED ? "copied from another GPU" : trust_name(t));
        if (w > 0) l += (size_t)w;
    }
    if (buf[0] && l + 1 < n) snprintf(buf + l, n - l, ".");
}

static void draw_cluster(app *a, WINDOW *w, rect r)
{
    const plan *p = a->p;
    const cluster *c = plan_cluster(p), *orig = a->src.cluster_loaded;
    ui_fill(w, r.y, r.x, r.w, ST_HEADER);
    ui_putf(w, r.y, r.x, r.w, ST_HEADER, "cluster %s %s %d nodes %s %d GPUs %s %s", c->name, G->dot, c->nodes, G->dot,
            cluster_gpus(c), G->dot, c->path ? c->path : "built in");
    int lw = r.w >= 100 ? 56 : r.w / 2 + 8;
    int y = r.y + 2;
    char b[128], o[128];
    ui_putf(w, r.y + 1, r.x, lw, ST_DIM, "GPU %s, %g GiB, %g GB/s", c->gpu.name, c->gpu.memory_gib,
            c->gpu.memory_bandwidth_gbs);
    for (int f = 0; f < F__COUNT && y < r.y + r.h; f++, y++) {
        int sel = f == cluster_of(a)->cur.sel;
        if (sel) ui_fill(w, y, r.x, lw, ST_SELECTED);
        ui_put(w, y, r.x + 1, 22, sel ? ST_SELECTED : ST_NORMAL, field_label[f]);
        field_text(a, c, f, b, sizeof b);
        int changed = 0;
        if (f < F_GPUS && orig) {
            field_text(a, orig, f, o, sizeof o);
            changed = strcmp(o, b) != 0;
        }
        int vx = r.x + 24;
        vx += ui_put(w, y, vx, lw - 24, sel ? ST_SELECTED : changed ? ST_CHANGED : ST_BOLD, b);
        if (changed) ui_putf(w, y, vx, r.x + lw - vx, sel ? ST_SELECTED : ST_DIM, " * was %s", o);
    }
    y++;
    if (y < r.y + r.h) {
        rect t = {y, r.x + 1, r.y + r.h - y, lw - 2};
        char txt[1280], peaks[160] = "";
        for (int q = 0; q < PREC__COUNT; q++) {
            gpu_consts k;
            if (cluster_gpu_consts(c, (precision)q, &k) != 0) continue;
            size_t l = strlen(peaks);
            snprintf(peaks + l, sizeof peaks - l, "%s%s %g", l ? ", " : "", precision_name((precision)q), k.peak_tflops);
        }
        char trust[320];
        unfitted_text(c, trust, sizeof trust);
        snprintf(txt, sizeof txt,
                 "Peak TFLOPS per precision: %s.%s Up/Down choose, Enter types a value, Left/Right halve/double it "
                 "(precision, sync: the next one), R resets the cluster. Every change rebuilds the cost model and "
                 "finds the new optimum.%s",
                 peaks, trust, c->n_overrides ? " The file also sets per-pair link overrides." : "");
        ui_wrap(w, t, ST_DIM, txt);
    }
    /* the machines: one row of GPU marks per node, the ones in use filled */
    int px = r.x + lw + 2, pw = r.w - lw - 2;
    if (pw < 12) return;
    y = r.y + 1;
    /* the strategy computes on the first `used` GPUs (task k on GPU k); the
     * rest of those it was given stay idle (degrees are powers of two) */
    int used = plan_search_result(p) ? plan_best_eval(p)->gpus_used : plan_gpus(p);
    if (used > plan_gpus(p)) used = plan_gpus(p);
    if (used < plan_gpus(p))
        ui_putf(w, y++, px, pw, ST_BOLD, "GPUs: %d given, %d used", plan_gpus(p), used);
    else
        ui_putf(w, y++, px, pw, ST_BOLD, "GPUs: %d of %d given, all used", plan_gpus(p), cluster_gpus(c));
    if (y < r.y + r.h) {
        int x = px;
        x += ui_put(w, y, x, px + pw - x, ST_GOOD, G->gpu_on);
        x += ui_put(w, y, x, px + pw - x, ST_DIM, " used ");
        if (used < plan_gpus(p)) {
            x += ui_put(w, y, x, px + pw - x, ST_BAD, G->gpu_idle);
            x += ui_put(w, y, x, px + pw - x, ST_DIM, " idle ");
        }
        x += ui_put(w, y, x, px + pw - x, ST_DIM, G->gpu_off);
        ui_put(w, y++, x, px + pw - x, ST_DIM, " not given");
    }
    int shown = 0;
    for (int n = 0; n < c->nodes && y < r.y + r.h - 3; n++, y++) {
        int x = px + ui_putf(w, y, px, pw, ST_DIM, "node %-2d ", n);
        for (int g = 0; g < c->gpus_per_node && x < px + pw; g++) {
            int dev = n * c->gpus_per_node + g;
            int st = dev < used ? ST_GOOD : dev < plan_gpus(p) ? ST_BAD : ST_DIM;
            x += ui_put(w, y, x, 1, st, dev < used ? G->gpu_on : dev < plan_gpus(p) ? G->gpu_idle : G->gpu_off);
            if (c->gpus_per_node <= 16 && x < px + pw) x += ui_put(w, y, x, 1, ST_NORMAL, " ");
        }
        shown++;
    }
    if (shown < c->nodes && y < r.y + r.h) ui_putf(w, y++, px, pw, ST_DIM, "%s %d more nodes", G->ellipsis, c->nodes - shown);
    y++;
    if (y < r.y + r.h) ui_putf(w, y++, px, pw, ST_BOLD, "inside a node");
    if (y < r.y + r.h)
        ui_putf(w, y++, px, pw, ST_NORMAL, "  %g GB/s, %g us", c->intra.bandwidth_gbs, c->intra.latency_us);
    if (y < r.y + r.h) ui_putf(w, y++, px, pw, ST_BOLD, "between nodes");
    if (y < r.y + r.h)
        ui_putf(w, y++, px, pw, ST_NORMAL, "  %g GB/s, %g us, %d NIC%s/node", c->inter.bandwidth_gbs,
                c->inter.latency_us, c->nics_per_node, c->nics_per_node == 1 ? "" : "s");
}

/* ---- keys ------------------------------------------------------------- */

static action select_field(app *a, int key)
{
    list_key(&cluster_of(a)->cur, key, F__COUNT, 1, 1);
    if (a->prefetch) app_prefetch_next(a); /* Left/Right on this field next */
    return ACT_REDRAW;
}

static action edit(app *a, int key)
{
    (void)key;
    char label[96], b[64];
    snprintf(label, sizeof label, "%s: ", field_label[cluster_of(a)->cur.sel]);
    field_text(a, plan_cluster(a->p), cluster_of(a)->cur.sel, b, sizeof b);
    prompt_open(a, PROMPT_FIELD, label, b, cluster_field_set, cluster_of(a)->cur.sel);
    return ACT_REDRAW;
}

static action halve_double(app *a, int key)
{
    int up = key == KEY_RIGHT || key == 'l';
    int f = cluster_of(a)->cur.sel;
    if (f == F_SYNC)
        return up ? app_toggle_sync(a) : app_set_sync(a, (sync_scheme)((plan_cluster(a->p)->sync + SYNC__COUNT - 1) % SYNC__COUNT));
    if (f == F_PRECISION) return app_cycle_precision(a);
    if (f == F_GPUS) return app_set_gpus(a, app_gpu_step(a, up ? 1 : -1));
    return apply(a, f, field_step(a, f, up));
}

static action reset(app *a, int key)
{
    (void)key;
    if (!a->src.cluster_loaded) return ACT_NONE;
    app_whatif_begin(a, "cluster reset to the file");
    a->pending.change.cl = a->src.cluster_loaded;
    keep_gpus_within(a, a->src.cluster_loaded);
    app_invalidate_settings(a);
    return ACT_REBUILD;
}

/* Search: the settings by their names. */
static int field_matches(int f, void *user)
{
    return app_search_match(user, field_label[f]);
}

static int find(app *a, int dir, int *nth)
{
    return list_find(&cluster_of(a)->cur, F__COUNT, dir, field_matches, a, nth);
}

static const keybind cluster_keys[] = {
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "choose a setting", select_field},
    {{'\n', '\r', KEY_ENTER}, "Enter", "type a new value for it", edit},
    {{KEY_LEFT, KEY_RIGHT, 'h', 'l'}, "Left Right h l", "halve / double it (sync, precision: the next)", halve_double},
    {{'R'}, "R", "reset the cluster to the file", reset},
    {{0}, NULL, NULL, NULL},
};

const screen_ops screen_cluster_ops = {
    .tab = "Cluster",
    .title = "Cluster (5)",
    .hints = "Up/Dn:choose Enter:edit Left/Right:halve/double R:reset +/-:GPUs s:sync P:precision",
    .draw = draw_cluster,
    .keys = cluster_keys,
    .without_strategy = 1,
    .state_size = sizeof(cluster_state),
    .prefetch = cluster_field_neighbours,
    .find = find,
    .find_what = "setting",
};
