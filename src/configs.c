#include "configs.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char config_dim_letter[NDIMS] = {'n', 'c', 'h', 'w'};

int configs_enumerate(const layer *l, long batch, int gpus, config **out)
{
    int cap = 16, n = 0;
    config *list = lw_malloc(sizeof(config) * (size_t)cap);
    config c;
    /* nested loops over powers of two, n outermost, so the list reads naturally */
    for (int a = 1; a <= gpus; a *= 2) {
        if (a > 1 && (!(l->dims & DIMMASK(DIM_N)) || a > layer_dim_size(l, DIM_N, batch))) break;
        for (int b = 1; a * b <= gpus; b *= 2) {
            if (b > 1 && (!(l->dims & DIMMASK(DIM_C)) || b > layer_dim_size(l, DIM_C, batch))) break;
            for (int h = 1; a * b * h <= gpus; h *= 2) {
                if (h > 1 && (!(l->dims & DIMMASK(DIM_H)) || h > layer_dim_size(l, DIM_H, batch))) break;
                for (int w = 1; a * b * h * w <= gpus; w *= 2) {
                    if (w > 1 && (!(l->dims & DIMMASK(DIM_W)) || w > layer_dim_size(l, DIM_W, batch))) break;
                    c.deg[DIM_N] = a;
                    c.deg[DIM_C] = b;
                    c.deg[DIM_H] = h;
                    c.deg[DIM_W] = w;
                    if (n == cap) {
                        cap *= 2;
                        list = lw_realloc(list, sizeof(config) * (size_t)cap);
                    }
                    list[n++] = c;
                }
            }
        }
    }
    *out = list;
    return n;
}

int config_tasks(const config *c)
{
    return c->deg[0] * c->deg[1] * c->deg[2] * c->deg[3];
}

void config_format(const config *c, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (int d = 0; d < NDIMS; d++) {
        if (c->deg[d] == 1) continue;
        int w = snprintf(buf + k, n - k, "%s%c%d", k ? " " : "", config_dim_letter[d], c->deg[d]);
        if (w < 0 || (size_t)w >= n - k) break;
        k += (size_t)w;
    }
    if (k == 0) snprintf(buf, n, "1");
}

int config_parse(const char *s, config *c)
{
    for (int d = 0; d < NDIMS; d++) c->deg[d] = 1;
    while (*s && isspace((unsigned char)*s)) s++;
    if (strcmp(s, "1") == 0) return 0;
    int seen = 0;
    while (*s) {
        while (*s && (isspace((unsigned char)*s) || *s == ',')) s++;
        if (!*s) break;
        const char *p = strchr("nchw", tolower((unsigned char)*s));
        if (!p) return -1;
        int d = (int)(p - "nchw");
        s++;
        if (*s == '=') s++;
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 1 << 20 || (v & (v - 1))) return -1;
        if (seen & (1 << d)) return -1;
        seen |= 1 << d;
        c->deg[d] = (int)v;
        s = end;
    }
    return seen ? 0 : -1;
}

int config_equal(const config *a, const config *b)
{
    return memcmp(a->deg, b->deg, sizeof a->deg) == 0;
}

int config_find(const config *list, int n, const config *c)
{
    for (int i = 0; i < n; i++)
        if (config_equal(&list[i], c)) return i;
    return -1;
}

void config_task_coords(const config *c, int task, int coord[NDIMS])
{
    for (int d = NDIMS - 1; d >= 0; d--) {
        coord[d] = task % c->deg[d];
        task /= c->deg[d];
    }
}

int config_task_index(const config *c, const int coord[NDIMS])
{
    int k = 0;
    for (int d = 0; d < NDIMS; d++) k = k * c->deg[d] + coord[d];
    return k;
}
