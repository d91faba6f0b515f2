#include "configs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char config_dim_letter[NCDIMS] = {'n', 'c', 'h', 'w', 'r', 'x'};

int config_unsplittable(const layer *l, const config *c, char *why, size_t n)
{
    for (int d = 0; d < NCDIMS; d++)
        if (c->deg[d] > 1 && !(l->dims & DIMMASK(d))) {
            snprintf(why, n, "a %s layer cannot be split on %c", layer_type_name(l->type), config_dim_letter[d]);
            return 1;
        }
    return 0;
}

static void push(config **list, int *n, int *cap, const config *c)
{
    if (*n == *cap) {
        *cap *= 2;
        *list = lw_realloc(*list, sizeof(config) * (size_t)*cap);
    }
    (*list)[(*n)++] = *c;
}

/* The largest contraction degree of layer l whose config c leaves room:
 * r divides the contracted size, and the reduce-scatter's scatter dimension
 * (the sequence of a rank-3 tensor) takes c's degree there times r. */
static long max_contraction(const layer *l, const config *c, long batch)
{
    if (!(l->dims & DIMMASK(DIM_R)) || l->contract < 2) return 1;
    long s = layer_dim_size(l, DIM_H, batch) / c->deg[DIM_H];
    return l->contract < s ? l->contract : s;
}

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
                    c.deg[DIM_R] = c.deg[DIM_X] = 1;
                    /* attention splits by whole heads */
                    if (l->type == LT_ATTENTION && b > 1 && l->heads % b != 0) continue;
                    push(&list, &n, &cap, &c);
                    int used = a * b * h * w;
                    long rmax = max_contraction(l, &c, batch);
                    for (int r = 2; used * r <= gpus && r <= rmax; r *= 2) {
                        c.deg[DIM_R] = r;
                        push(&list, &n, &cap, &c);
                    }
                    c.deg[DIM_R] = 1;
                    if (l->dims & DIMMASK(DIM_X))
                        for (int x = 2; used * x <= gpus; x *= 2) {
                            c.deg[DIM_X] = x;
                            push(&list, &n, &cap, &c);
                        }
                }
            }
        }
    }
    *out = list;
    return n;
}

/* A degree, with 0 (a config written before r and x existed) read as 1. */
static int deg_of(const config *c, int d)
{
    return c->deg[d] > 0 ? c->deg[d] : 1;
}

int config_tasks(const config *c)
{
    return c->deg[0] * c->deg[1] * c->deg[2] * c->deg[3] * deg_of(c, DIM_R) * deg_of(c, DIM_X);
}

int config_pieces(const config *c)
{
    return c->deg[0] * c->deg[1] * c->deg[2] * c->deg[3] * deg_of(c, DIM_R);
}

static void format_letters(const config *c, const char *letters, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (int d = 0; d < NCDIMS; d++) {
        if (deg_of(c, d) == 1) continue;
        int w = snprintf(buf + k, n - k, "%s%c%d", k ? " " : "", letters[d], c->deg[d]);
        if (w < 0 || (size_t)w >= n - k) break;
        k += (size_t)w;
    }
    if (k == 0) snprintf(buf, n, "1");
}

void config_format(const config *c, char *buf, size_t n)
{
    format_letters(c, "nchwrx", buf, n);
}

void config_format_layer(const layer *l, const config *c, char *buf, size_t n)
{
    format_letters(c, l && l->out.rank == 3 ? "ncswrx" : "nchwrx", buf, n);
}

int config_parse(const char *s, config *c)
{
    for (int d = 0; d < NCDIMS; d++) c->deg[d] = 1;
    while (*s && isspace((unsigned char)*s)) s++;
    if (strcmp(s, "1") == 0) return 0;
    int seen = 0;
    while (*s) {
        while (*s && (isspace((unsigned char)*s) || *s == ',')) s++;
        if (!*s) break;
        int ch = tolower((unsigned char)*s);
        const char *p = ch ? strchr("nchwrxs", ch) : NULL;
        if (!p) return -1;
        int d = (int)(p - "nchwrxs");
        if (d == NCDIMS) d = DIM_H; /* s: the sequence of a rank-3 tensor */
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
    if (c->deg[DIM_R] > 1 && c->deg[DIM_X] > 1) return -1; /* never both */
    return seen ? 0 : -1;
}

int config_equal(const config *a, const config *b)
{
    for (int d = 0; d < NCDIMS; d++)
        if (deg_of(a, d) != deg_of(b, d)) return 0;
    return 1;
}

int config_find(const config *list, int n, const config *c)
{
    for (int i = 0; i < n; i++)
        if (config_equal(&list[i], c)) return i;
    return -1;
}

void config_task_coords(const config *c, int task, int coord[NDIMS])
{
    task /= deg_of(c, DIM_R) * deg_of(c, DIM_X);
    for (int d = NDIMS - 1; d >= 0; d--) {
        coord[d] = task % c->deg[d];
        task /= c->deg[d];
    }
}

int config_task_index(const config *c, const int coord[NDIMS])
{
    int k = 0;
    for (int d = 0; d < NDIMS; d++) k = k * c->deg[d] + coord[d];
    return k * deg_of(c, DIM_R) * deg_of(c, DIM_X);
}

void config_task_rx(const config *c, int task, int *r, int *x)
{
    int X = deg_of(c, DIM_X);
    *x = task % X;
    *r = (task / X) % deg_of(c, DIM_R);
}
