/* layout: layered DAG drawing (ranks, dummies, crossing reduction, columns). */
#include "layout.h"

#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SEP 2           /* blank columns between neighbours in a rank */
#define SWEEPS 12       /* barycentre sweeps (down + up) */
#define PLACE_ROUNDS 8  /* column placement rounds */

/* adjacency over lay nodes: up (previous rank) and down (next rank) */
typedef struct adj {
    int *up_n, *dn_n;
    int **up, **dn;
} adj;

static void adj_add(int **list, int *n, int v)
{
    *list = lw_realloc(*list, sizeof(int) * (size_t)(*n + 1));
    (*list)[(*n)++] = v;
}

static int add_node(graph_layout *l, int *cap, int id, int w, int rank)
{
    if (l->n_nodes == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        l->nodes = lw_realloc(l->nodes, sizeof(lay_node) * (size_t)*cap);
    }
    lay_node *v = &l->nodes[l->n_nodes];
    v->id = id;
    v->w = w < 1 ? 1 : w;
    v->rank = rank;
    v->order = 0;
    v->x = 0;
    return l->n_nodes++;
}

static void add_seg(graph_layout *l, int *cap, int a, int b)
{
    if (l->n_segs == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        l->segs = lw_realloc(l->segs, sizeof(lay_seg) * (size_t)*cap);
    }
    l->segs[l->n_segs].a = a;
    l->segs[l->n_segs].b = b;
    l->n_segs++;
}

/* Longest-path ranks by Kahn's algorithm; nodes on a cycle (bad input)
 * keep rank 0 rather than loop. */
static void assign_ranks(int n, int ne, const int *from, const int *to, int *rank)
{
    int *indeg = lw_calloc((size_t)n + 1, sizeof(int));
    int *queue = lw_malloc(sizeof(int) * ((size_t)n + 1));
    for (int i = 0; i < n; i++) rank[i] = 0;
    for (int e = 0; e < ne; e++) indeg[to[e]]++;
    int qh = 0, qt = 0;
    for (int i = 0; i < n; i++)
        if (!indeg[i]) queue[qt++] = i;
    while (qh < qt) {
        int v = queue[qh++];
        for (int e = 0; e < ne; e++) {
            if (from[e] != v) continue;
            int u = to[e];
            if (rank[u] < rank[v] + 1) rank[u] = rank[v] + 1;
            if (--indeg[u] == 0) queue[qt++] = u;
        }
    }
    free(indeg);
    free(queue);
}

static long count_crossings(const graph_layout *l, const adj *g, int r)
{
    /* segments between rank r and r + 1 as (order above, order below) */
    long c = 0;
    int n = 0;
    for (int i = 0; i < l->rank_len[r]; i++) n += g->dn_n[l->rank[r][i]];
    if (n < 2) return 0;
    int *ta = lw_malloc(sizeof(int) * (size_t)n), *tb = lw_malloc(sizeof(int) * (size_t)n);
    int k = 0;
    for (int i = 0; i < l->rank_len[r]; i++) {
        int v = l->rank[r][i];
        for (int j = 0; j < g->dn_n[v]; j++) {
            ta[k] = l->nodes[v].order;
            tb[k] = l->nodes[g->dn[v][j]].order;
            k++;
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if ((long)(ta[i] - ta[j]) * (tb[i] - tb[j]) < 0) c++;
    free(ta);
    free(tb);
    return c;
}

static long total_crossings(const graph_layout *l, const adj *g)
{
    long c = 0;
    for (int r = 0; r + 1 < l->n_ranks; r++) c += count_crossings(l, g, r);
    return c;
}

typedef struct keyed {
    double key;
    int v;
    int old;
} keyed;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->key < b->key) return -1;
    if (a->key > b->key) return 1;
    return a->old - b->old; /* stable */
}

/* Reorders rank r by the mean order of each node's neighbours in the rank
 * above (down = 1) or below. */
static void barycentre(graph_layout *l, const adj *g, int r, int down)
{
    int n = l->rank_len[r];
    keyed *k = lw_malloc(sizeof(keyed) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        int v = l->rank[r][i];
        int cnt = down ? g->up_n[v] : g->dn_n[v];
        int *nb = down ? g->up[v] : g->dn[v];
        double s = 0;
        for (int j = 0; j < cnt; j++) s += l->nodes[nb[j]].order;
        k[i].key = cnt ? s / cnt : i;
        k[i].v = v;
        k[i].old = i;
    }
    qsort(k, (size_t)n, sizeof *k, cmp_keyed);
    for (int i = 0; i < n; i++) {
        l->rank[r][i] = k[i].v;
        l->nodes[k[i].v].order = i;
    }
    free(k);
}

/* Weighted isotonic regression (pool adjacent violators): y nondecreasing,
 * minimising sum wt * (y - t)^2. */
static void isotonic(int n, const double *t, const double *wt, double *y)
{
    double *bs = lw_malloc(sizeof(double) * (size_t)n), *bw = lw_malloc(sizeof(double) * (size_t)n);
    int *bn = lw_malloc(sizeof(int) * (size_t)n);
    int nb = 0;
    for (int i = 0; i < n; i++) {
        bs[nb] = t[i] * wt[i];
        bw[nb] = wt[i];
        bn[nb] = 1;
        nb++;
        while (nb > 1 && bs[nb - 2] / bw[nb - 2] > bs[nb - 1] / bw[nb - 1]) {
            bs[nb - 2] += bs[nb - 1];
            bw[nb - 2] += bw[nb - 1];
            bn[nb - 2] += bn[nb - 1];
            nb--;
        }
    }
    int k = 0;
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < bn[b]; j++) y[k++] = bs[b] / bw[b];
    free(bs);
    free(bw);
    free(bn);
}

/* Moves rank r's nodes towards the centres of their neighbours above
 * (dir 1), below (dir -1) or both (0), keeping order and separation. */
static void place_rank(graph_layout *l, const adj *g, int r, int dir)
{
    int n = l->rank_len[r];
    if (!n) return;
    double *t = lw_malloc(sizeof(double) * (size_t)n), *wt = lw_malloc(sizeof(double) * (size_t)n);
    double *y = lw_malloc(sizeof(double) * (size_t)n);
    double s = 0;
    for (int i = 0; i < n; i++) {
        lay_node *v = &l->nodes[l->rank[r][i]];
        int vi = l->rank[r][i];
        double sum = 0;
        int cnt = 0;
        if (dir >= 0)
            for (int j = 0; j < g->up_n[vi]; j++, cnt++) sum += lay_center(&l->nodes[g->up[vi][j]]);
        if (dir <= 0)
            for (int j = 0; j < g->dn_n[vi]; j++, cnt++) sum += lay_center(&l->nodes[g->dn[vi][j]]);
        double want = cnt ? sum / cnt - v->w / 2 : v->x;
        /* dummies weigh more, so long edges run straight */
        wt[i] = cnt ? cnt * (v->id < 0 ? 2.0 : 1.0) : 0.25;
        t[i] = want - s;
        s += v->w + SEP;
    }
    isotonic(n, t, wt, y);
    s = 0;
    for (int i = 0; i < n; i++) {
        lay_node *v = &l->nodes[l->rank[r][i]];
        v->x = (int)floor(y[i] + 0.5) + (int)s;
        s += v->w + SEP;
    }
    free(t);
    free(wt);
    free(y);
}

static void dfs_order(const graph_layout *l, const adj *g, int v, unsigned char *seen, int *next_in_rank)
{
    /* iterative, so deep chains cannot overflow the stack */
    int *stack = lw_malloc(sizeof(int) * (size_t)(l->n_nodes + 1) * 2);
    int sp = 0;
    stack[sp++] = v;
    while (sp) {
        int u = stack[--sp];
        if (seen[u]) continue;
        seen[u] = 1;
        l->nodes[u].order = next_in_rank[l->nodes[u].rank]++;
        for (int j = g->dn_n[u] - 1; j >= 0; j--)
            if (!seen[g->dn[u][j]] && sp < (l->n_nodes + 1) * 2) stack[sp++] = g->dn[u][j];
    }
    free(stack);
}

/* The layout's nodes: one per id at its rank (longest path from a
 * source), and a one-column dummy on every rank an edge crosses, with the
 * segments between them (valid, distinct edges only). */
static void build_nodes(graph_layout *l, int n, const int *widths, int n_edges, const int *from, const int *to)
{
    int ncap = 0, scap = 0;
    int *rank = lw_malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *ef = lw_malloc(sizeof(int) * (size_t)(n_edges ? n_edges : 1));
    int *et = lw_malloc(sizeof(int) * (size_t)(n_edges ? n_edges : 1));
    int ne = 0;
    for (int e = 0; e < n_edges; e++) {
        if (from[e] < 0 || from[e] >= n || to[e] < 0 || to[e] >= n || from[e] == to[e]) continue;
        int dup = 0;
        for (int k = 0; k < ne && !dup; k++) dup = ef[k] == from[e] && et[k] == to[e];
        if (dup) continue;
        ef[ne] = from[e];
        et[ne] = to[e];
        ne++;
    }
    assign_ranks(n, ne, ef, et, rank);
    l->n_ids = n;
    l->lay_of_id = lw_malloc(sizeof(int) * (size_t)(n ? n : 1));
    int max_rank = 0;
    for (int i = 0; i < n; i++) {
        l->lay_of_id[i] = add_node(l, &ncap, i, widths[i], rank[i]);
        if (rank[i] > max_rank) max_rank = rank[i];
    }
    for (int e = 0; e < ne; e++) {
        int a = l->lay_of_id[ef[e]], b = l->lay_of_id[et[e]];
        int ra = rank[ef[e]], rb = rank[et[e]];
        if (rb <= ra) continue; /* only on a cycle */
        int prev = a;
        for (int r = ra + 1; r < rb; r++) {
            int d = add_node(l, &ncap, -1, 1, r);
            add_seg(l, &scap, prev, d);
            prev = d;
        }
        add_seg(l, &scap, prev, b);
    }
    l->n_ranks = n ? max_rank + 1 : 0;
    free(rank);
    free(ef);
    free(et);
}

/* Crossing reduction by barycentre sweeps, down and up in turn, keeping the
 * best order seen. */
static void reduce_crossings(graph_layout *l, const adj *g)
{
    int *best = lw_malloc(sizeof(int) * (size_t)(l->n_nodes + 1));
    for (int v = 0; v < l->n_nodes; v++) best[v] = l->nodes[v].order;
    long best_c = total_crossings(l, g);
    for (int it = 0; it < SWEEPS && best_c > 0; it++) {
        if (it % 2 == 0)
            for (int r = 1; r < l->n_ranks; r++) barycentre(l, g, r, 1);
        else
            for (int r = l->n_ranks - 2; r >= 0; r--) barycentre(l, g, r, 0);
        long c = total_crossings(l, g);
        if (c < best_c) {
            best_c = c;
            for (int v = 0; v < l->n_nodes; v++) best[v] = l->nodes[v].order;
        }
    }
    for (int v = 0; v < l->n_nodes; v++) {
        l->nodes[v].order = best[v];
        l->rank[l->nodes[v].rank][best[v]] = v;
    }
    free(best);
    l->crossings = best_c;
}

/* Columns: each rank packed from the left, then pulled towards its
 * neighbours, and the whole shifted to start at column 0. */
static void place_columns(graph_layout *l, const adj *g)
{
    for (int r = 0; r < l->n_ranks; r++) {
        int x = 0;
        for (int i = 0; i < l->rank_len[r]; i++) {
            lay_node *v = &l->nodes[l->rank[r][i]];
            v->x = x;
            x += v->w + SEP;
        }
    }
    for (int it = 0; it < PLACE_ROUNDS; it++) {
        for (int r = 1; r < l->n_ranks; r++) place_rank(l, g, r, 1);
        for (int r = l->n_ranks - 2; r >= 0; r--) place_rank(l, g, r, -1);
    }
    for (int r = 0; r < l->n_ranks; r++) place_rank(l, g, r, 0);
    int minx = 0, maxx = 0;
    for (int v = 0; v < l->n_nodes; v++) {
        if (v == 0 || l->nodes[v].x < minx) minx = l->nodes[v].x;
    }
    for (int v = 0; v < l->n_nodes; v++) {
        l->nodes[v].x -= minx;
        if (l->nodes[v].x + l->nodes[v].w > maxx) maxx = l->nodes[v].x + l->nodes[v].w;
    }
    l->width = maxx;
}

graph_layout *layout_build(int n, const int *widths, int n_edges, const int *from, const int *to)
{
    graph_layout *l = lw_calloc(1, sizeof *l);
    build_nodes(l, n, widths, n_edges, from, to);
    adj g = {0};
    g.up_n = lw_calloc((size_t)l->n_nodes + 1, sizeof(int));
    g.dn_n = lw_calloc((size_t)l->n_nodes + 1, sizeof(int));
    g.up = lw_calloc((size_t)l->n_nodes + 1, sizeof(int *));
    g.dn = lw_calloc((size_t)l->n_nodes + 1, sizeof(int *));
    for (int s = 0; s < l->n_segs; s++) {
        adj_add(&g.dn[l->segs[s].a], &g.dn_n[l->segs[s].a], l->segs[s].b);
        adj_add(&g.up[l->segs[s].b], &g.up_n[l->segs[s].b], l->segs[s].a);
    }

    /* initial order: depth-first from the sources, so a branch stays together */
    l->rank_len = lw_calloc((size_t)l->n_ranks + 1, sizeof(int));
    l->rank = lw_calloc((size_t)l->n_ranks + 1, sizeof(int *));
    unsigned char *seen = lw_calloc((size_t)l->n_nodes + 1, 1);
    for (int v = 0; v < l->n_nodes; v++)
        if (!g.up_n[v] && !seen[v]) dfs_order(l, &g, v, seen, l->rank_len);
    for (int v = 0; v < l->n_nodes; v++)
        if (!seen[v]) dfs_order(l, &g, v, seen, l->rank_len);
    free(seen);
    for (int r = 0; r < l->n_ranks; r++) l->rank[r] = lw_malloc(sizeof(int) * (size_t)(l->rank_len[r] + 1));
    for (int v = 0; v < l->n_nodes; v++) l->rank[l->nodes[v].rank][l->nodes[v].order] = v;

    reduce_crossings(l, &g);
    place_columns(l, &g);
    for (int v = 0; v < l->n_nodes; v++) {
        free(g.up[v]);
        free(g.dn[v]);
    }
    free(g.up);
    free(g.dn);
    free(g.up_n);
    free(g.dn_n);
    return l;
}

void layout_free(graph_layout *l)
{
    if (!l) return;
    for (int r = 0; r < l->n_ranks; r++) free(l->rank[r]);
    free(l->rank);
    free(l->rank_len);
    free(l->nodes);
    free(l->segs);
    free(l->lay_of_id);
    free(l);
}
