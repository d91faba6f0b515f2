/*
 * data: finding the network, cluster and profile files a name means (a
 * path, the data directories, or the copies compiled into the program) and
 * loading them.
 */
#define _POSIX_C_SOURCE 200809L
#include "data.h"

#include "embedded.h"
#include "net_json.h"
#include "onnx_import.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LW_DATADIR
#define LW_DATADIR "/usr/local/share/layerwise"
#endif

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int looks_like_path(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '/') || (n > 5 && strcmp(s + n - 5, ".json") == 0) || onnx_is_path(s);
}

/* The data directories' file for a bare NAME (LAYERWISE_DATA, ../data and
 * ../share/layerwise beside the executable, the installed share directory):
 * its path in path (PATH_MAX + 1100 bytes), 1; 0 if none has it. */
static int find_in_dirs(const char *kind, const char *name, char *path, size_t n)
{
    char dirs[4][PATH_MAX];
    int nd = 0;
    const char *env = getenv("LAYERWISE_DATA");
    if (env && env[0]) snprintf(dirs[nd++], PATH_MAX, "%s", env);
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(dirs[nd++], PATH_MAX, "%.*s/../data", PATH_MAX - 16, exe);
            snprintf(dirs[nd++], PATH_MAX, "%.*s/../share/layerwise", PATH_MAX - 32, exe);
        }
    }
    snprintf(dirs[nd++], PATH_MAX, "%s", LW_DATADIR);
    for (int i = 0; i < nd; i++) {
        snprintf(path, n, "%.*s/%s/%.1024s.json", PATH_MAX - 64, dirs[i], kind, name);
        if (is_file(path)) return 1;
    }
    return 0;
}

char *data_locate(const char *kind, const char *name)
{
    if (!name || !name[0] || strlen(name) > 1024) return NULL;
    if (looks_like_path(name) || is_file(name)) return lw_strdup(name);
    char path[PATH_MAX + 1100];
    return find_in_dirs(kind, name, path, sizeof path) ? lw_strdup(path) : NULL;
}

char *data_resolve(const char *kind, const char *name, char **label, size_t *len, lw_error *err)
{
    *label = NULL;
    if (!name || !name[0]) {
        lw_fail(err, 2, "empty %s name", kind);
        return NULL;
    }
    if (strlen(name) > 1024) {
        lw_fail(err, 2, "%.40s...: name too long", name);
        return NULL;
    }
    if (looks_like_path(name) || is_file(name)) {
        char *t = lw_read_file(name, len, err);
        if (t) *label = lw_strdup(name);
        return t;
    }
    char path[PATH_MAX + 1100];
    if (find_in_dirs(kind, name, path, sizeof path)) {
        char *t = lw_read_file(path, len, err);
        if (t) { /* named without the "bin/../data" detour where it resolves */
            char *real = realpath(path, NULL);
            *label = real ? real : lw_strdup(path);
        }
        return t;
    }
    char want[300];
    snprintf(want, sizeof want, "%s/%s.json", kind, name);
    for (int i = 0; i < lw_embedded_count; i++)
        if (strcmp(lw_embedded_files[i].name, want) == 0) {
            char *t = lw_malloc(lw_embedded_files[i].len + 1);
            memcpy(t, lw_embedded_files[i].data, lw_embedded_files[i].len);
            t[lw_embedded_files[i].len] = 0;
            *len = lw_embedded_files[i].len;
            *label = lw_malloc(strlen(want) + 16);
            sprintf(*label, "(built-in) %s", want);
            return t;
        }
    /* list what is known, to help */
    lw_buf b = {0};
    const char *const *names = data_builtin_names(kind);
    for (int i = 0; names[i]; i++) lw_buf_printf(&b, "%s%s", i ? ", " : "", names[i]);
    lw_fail(err, 2, "%s: no such file, and no %s of that name (shipped: %s)", name,
            strcmp(kind, "networks") == 0   ? "network"
            : strcmp(kind, "clusters") == 0 ? "cluster"
            : strcmp(kind, "stacks") == 0   ? "stack"
                                            : "profile",
            b.s ? b.s : "none");
    lw_buf_free(&b);
    return NULL;
}

const char *const *data_builtin_names(const char *kind)
{
    enum { MAXN = 64 };
    static const char *lists[4][MAXN + 1];
    static char store[4][MAXN][64];
    int which = strcmp(kind, "networks") == 0 ? 0 : strcmp(kind, "clusters") == 0 ? 1 : strcmp(kind, "stacks") == 0 ? 3 : 2;
    if (!lists[which][0]) {
        size_t kl = strlen(kind);
        int n = 0;
        for (int i = 0; i < lw_embedded_count && n < MAXN; i++) {
            const char *f = lw_embedded_files[i].name;
            if (strncmp(f, kind, kl) != 0 || f[kl] != '/') continue;
            const char *base = f + kl + 1;
            size_t bl = strlen(base);
            if (bl < 6 || bl - 5 >= 64) continue;
            memcpy(store[which][n], base, bl - 5);
            store[which][n][bl - 5] = 0;
            lists[which][n] = store[which][n];
            n++;
        }
        lists[which][n] = NULL;
    }
    return lists[which];
}

/* Resolves and parses a file of one kind ("networks", "clusters",
 * "profiles"): the loaded object, or NULL with err set. */
static void *load_kind(const char *kind, const char *name, lw_error *err)
{
    char *label;
    size_t len;
    char *text = data_resolve(kind, name, &label, &len, err);
    if (!text) return NULL;
    void *obj = kind[0] == 'n'   ? (void *)net_from_json(text, len, label, err)
                : kind[0] == 'c' ? (void *)cluster_from_json(text, len, label, err)
                                 : (void *)profile_from_json(text, len, label, err);
    free(text);
    free(label);
    return obj;
}

network *plan_load_network(const char *name, lw_error *err)
{
    /* an ONNX model is imported where any network is loaded (-n, the TUI's open screen) */
    if (name && onnx_is_path(name)) return onnx_load_file(name, onnx_default_options(), NULL, NULL, err);
    return load_kind("networks", name, err);
}

cluster *plan_load_cluster(const char *name, lw_error *err)
{
    return load_kind("clusters", name, err);
}

int plan_load_stack(const char *name, stack_spec *s, lw_error *err)
{
    char *label;
    size_t len;
    char *text = data_resolve("stacks", name, &label, &len, err);
    if (!text) return -1;
    int rc = stack_from_json(text, len, label, s, err);
    free(text);
    free(label);
    return rc;
}

profile *plan_load_profile(const char *name, lw_error *err)
{
    return load_kind("profiles", name, err);
}
