/*
 * settings: the command line's settings both front ends apply (settings.h).
 */
#include "settings.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double settings_parse_size(const char *s)
{
    if (!s || !*s) return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v <= 0) return -1;
    if (*end == ' ') end++;
    static const struct {
        const char *suffix;
        double scale;
    } units[] = {{"", 1073741824.0}, {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
                 {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].suffix) == 0) {
            if (!*end && end > s && end[-1] == ' ') return -1; /* "16 " */
            double b = v * units[i].scale;
            return b >= 1 && b < 1e18 ? b : -1;
        }
    return -1;
}

void settings_apply_sync(cluster *c, int sync)
{
    if (sync >= 0) c->sync = (sync_scheme)sync;
}

int settings_apply_precision(cluster *c, int prec, double bucket_mb, lw_error *err)
{
    if (prec >= 0 && cluster_set_precision(c, (precision)prec, err) != 0) return -1;
    if (bucket_mb >= 0) c->coll.bucket_mb = bucket_mb;
    return 0;
}

int settings_apply_stack(cluster *c, const char *name, lw_error *err)
{
    if (!name) return 0;
    stack_spec s;
    if (plan_load_stack(name, &s, err) != 0) return -1;
    cluster_set_stack(c, &s);
    return 0;
}

void settings_apply_links(cluster *c, double intra_bw, double inter_bw)
{
    if (intra_bw > 0) cluster_set_intra_bw(c, intra_bw);
    if (inter_bw > 0) c->inter.bandwidth_gbs = inter_bw;
}

/* The layer of a "LAYER=CONFIG" pin and its config text: split at the last
 * '=' (a config has none; a layer name may: "c=1=n2" pins "c=1"). */
static int pin_split(const network *net, const char *pin, const char **cfg, lw_error *err)
{
    char name[256];
    const char *eq = strrchr(pin, '=');
    if (!eq) return lw_fail(err, 2, "--pin needs LAYER=CONFIG, e.g. --pin fc6=\"c4\"; got \"%s\"", pin);
    size_t n = (size_t)(eq - pin);
    if (n >= sizeof name) n = sizeof name - 1;
    memcpy(name, pin, n);
    name[n] = 0;
    *cfg = eq + 1;
    int li = net_find(net, name);
    config c;
    if (li < 0) return lw_fail(err, 2, "--pin: \"%s\" is not a layer of %s", name, net->name);
    if (config_parse(eq + 1, &c) != 0)
        return lw_fail(err, 2,
                       "--pin %s: config \"%s\" is not a config: a degree per dimension, each a power of two (1, 2, "
                       "4, ...), as \"n4 c2\" (letters n, c, h, w; s, r, x on sequence layers)",
                       name, eq + 1);
    return li;
}

/* pin_split of each pin, its layer in li[i] (cfg[i] its config text); a
 * layer pinned twice is refused, whichever configs: one would be dropped. */
static int pins_split(const network *net, const char *const *pins, int n, int *li, const char **cfg, lw_error *err)
{
    for (int i = 0; i < n; i++) {
        li[i] = pin_split(net, pins[i], &cfg[i], err);
        if (li[i] < 0) return -1;
        for (int j = 0; j < i; j++)
            if (li[j] == li[i])
                return lw_fail(err, 2, "--pin %s and --pin %s: layer %s is pinned twice; give one --pin per layer",
                               pins[j], pins[i], net->layers[li[i]].name);
    }
    return 0;
}

int settings_check_pins(const network *net, const char *const *pins, int n, lw_error *err)
{
    if (n <= 0) return 0;
    int *li = lw_malloc(sizeof(int) * (size_t)n);
    const char **cfg = lw_malloc(sizeof(char *) * (size_t)n);
    int rc = pins_split(net, pins, n, li, cfg, err);
    free(li);
    free(cfg);
    return rc;
}

int settings_apply_pins(plan *p, const char *const *pins, int n, lw_error *err)
{
    if (n <= 0) return 0;
    plan_pin *pp = lw_malloc(sizeof(plan_pin) * (size_t)n);
    int *lis = lw_malloc(sizeof(int) * (size_t)n);
    const char **texts = lw_malloc(sizeof(char *) * (size_t)n);
    int rc = pins_split(plan_net(p), pins, n, lis, texts, err);
    for (int i = 0; i < n && rc == 0; i++) {
        const char *text = texts[i];
        int li = lis[i], k = -1;
        config c;
        char why[96];
        const layer *l = &plan_net(p)->layers[li];
        if (config_parse(text, &c) == 0 && config_unsplittable(l, &c, why, sizeof why))
            rc = lw_fail(err, 2, "--pin %s=%s: %s", l->name, text, why);
        else if (config_parse(text, &c) != 0 || (k = plan_config_index(p, li, &c)) < 0)
            rc = lw_fail(err, 2, "--pin %s: \"%s\" is not a config of this layer on %d GPUs", l->name, text,
                         plan_gpus(p));
        pp[i] = (plan_pin){li, k};
    }
    if (rc == 0) rc = plan_apply(p, &(plan_change){.n_pins = n, .pins = pp}, err);
    free(texts);
    free(lis);
    free(pp);
    return rc;
}
