/*
 * graph_draw: turns a layered layout into rows and columns of box and line
 * characters, for the graph screen and the elimination stepper.
 *
 * Each rank is a band of three rows (the boxes: name in the top border,
 * config inside); below it a gap holds the edges: one row per track where
 * horizontal runs go, then a row of arrow heads. Lines are kept as up/down/
 * left/right bits per cell and become box characters at the end, so joins
 * and crossings come out right (┬ ┴ ┼) without special cases. Segments that
 * share a producer or a consumer share a track; others get their own track
 * where their runs overlap, so lines of different edges never merge.
 */
#include "graph_draw.h"

#include "draw.h"

#include <stdlib.h>
#include <string.h>

#define NAME_MAXW 24   /* longest name shown in a box */
#define MAX_TRACKS 8
#define MAX_NETS 64    /* nets one track can hold */

void graph_view_free(graph_view *g)
{
    layout_free(g->lay);
    free(g->ids);
    for (int i = 0; g->names && i < g->n_ids; i++) free(g->names[i]);
    free(g->names);
    free(g->row_of_rank);
    free(g->gap_of_rank);
    free(g->seg_track);
    memset(g, 0, sizeof *g);
}

static int find_root(int *uf, int x)
{
    while (uf[x] != x) x = uf[x] = uf[uf[x]];
    return x;
}

/* The box width of each node: its name (up to NAME_MAXW) or the widest
 * of the layer's configs, so the layout stays put while what-ifs change the
 * strategy. */
static int *box_widths(const plan *p, int n, const int *ids, const char *const *names)
{
    int *widths = lw_malloc(sizeof(int) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        const char *name = names && names[i] ? names[i] : plan_net(p)->layers[ids[i]].name;
        int nw = ui_width(name);
        if (nw > NAME_MAXW) nw = NAME_MAXW;
        /* room for the stepper's "15 cfg", and a folded block's "differ*" */
        int cw = names && names[i] ? 7 : 6;
        if (plan_has_model(p))
            for (int k = 0; k < plan_n_configs(p, ids[i]); k++) {
                char b[64];
                plan_format_config(p, ids[i], plan_config(p, ids[i], k), b, sizeof b);
                if ((int)strlen(b) > cw) cw = (int)strlen(b);
            }
        int inner = nw + 1 > cw + 1 ? nw + 1 : cw + 1; /* "┌─name─┐" */
        widths[i] = inner + 2;
    }
    return widths;
}

/* Scratch of route_rank, one entry per layout node: union-find roots
 * joining the segments of one net, each net's column span and track. */
typedef struct {
    int *uf, *lo, *hi, *track_of;
} nets;

/* The next net of rank r to give a track, leftmost first, with in *min_t
 * the first track it may take: pass 0 takes only nets whose upper
 * neighbours have tracks (a net whose producer sits in the column where
 * another net arrives must run above it, or their vertical lines would
 * overlap and read as one); pass 1 any. -1 when every net has a track. */
static int next_net(const graph_layout *l, int r, const nets *ns, int *min_t)
{
    int pick = -1;
    for (int pass = 0; pass < 2 && pick < 0; pass++)
        for (int v = 0; v < l->n_nodes; v++) {
            if (find_root(ns->uf, v) != v || ns->hi[v] <= ns->lo[v] || ns->track_of[v] >= 0) continue;
            int ready = 1, below = 0;
            for (int s1 = 0; s1 < l->n_segs && ready; s1++) {
                const lay_seg *p1 = &l->segs[s1];
                if (l->nodes[p1->a].rank != r || find_root(ns->uf, p1->a) == v) continue;
                for (int s2 = 0; s2 < l->n_segs; s2++) {
                    const lay_seg *p2 = &l->segs[s2];
                    if (l->nodes[p2->a].rank != r || find_root(ns->uf, p2->a) != v) continue;
                    if (lay_center(&l->nodes[p1->a]) != lay_center(&l->nodes[p2->b])) continue;
                    int u = find_root(ns->uf, p1->a);
                    if (ns->hi[u] <= ns->lo[u]) continue;
                    if (ns->track_of[u] < 0) ready = 0;
                    else if (ns->track_of[u] + 1 > below) below = ns->track_of[u] + 1;
                }
            }
            if (!ready && pass == 0) continue;
            if (pick < 0 || ns->lo[v] < ns->lo[pick]) {
                pick = v;
                *min_t = below;
            }
        }
    return pick;
}

/* The horizontal tracks of the gap below rank r: its segments joined into
 * nets by a shared producer or consumer, each net on the first track from
 * its lowest allowed one where it overlaps no other (left-edge channel
 * routing with vertical constraints). Sets g->seg_track of the rank's
 * segments; returns the number of tracks. */
static int route_rank(graph_view *g, const graph_layout *l, int r, nets *ns)
{
    for (int v = 0; v < l->n_nodes; v++) {
        ns->uf[v] = v;
        ns->lo[v] = 1 << 30;
        ns->hi[v] = -1;
        ns->track_of[v] = -1;
    }
    for (int s = 0; s < l->n_segs; s++) {
        const lay_seg *sg = &l->segs[s];
        if (l->nodes[sg->a].rank != r) continue;
        int ra = find_root(ns->uf, sg->a), rb = find_root(ns->uf, sg->b);
        if (ra != rb) ns->uf[rb] = ra;
    }
    for (int s = 0; s < l->n_segs; s++) {
        const lay_seg *sg = &l->segs[s];
        if (l->nodes[sg->a].rank != r) continue;
        int root = find_root(ns->uf, sg->a);
        int ca = lay_center(&l->nodes[sg->a]), cb = lay_center(&l->nodes[sg->b]);
        int a0 = ca < cb ? ca : cb, a1 = ca < cb ? cb : ca;
        if (a0 < ns->lo[root]) ns->lo[root] = a0;
        if (a1 > ns->hi[root]) ns->hi[root] = a1;
    }
    int tracks = 0;
    int occ_n[MAX_TRACKS] = {0};
    int occ_lo[MAX_TRACKS][MAX_NETS], occ_hi[MAX_TRACKS][MAX_NETS];
    for (;;) {
        int min_t = 0, pick = next_net(l, r, ns, &min_t);
        if (pick < 0) break;
        int t = -1;
        for (int k = min_t; k < MAX_TRACKS && t < 0; k++) {
            int free_ = 1;
            for (int q = 0; q < occ_n[k] && free_; q++)
                if (!(occ_hi[k][q] < ns->lo[pick] || ns->hi[pick] < occ_lo[k][q])) free_ = 0;
            if (free_ && occ_n[k] < MAX_NETS) t = k;
        }
        if (t < 0) t = MAX_TRACKS - 1; /* out of tracks: share the last one */
        if (t + 1 > tracks) tracks = t + 1;
        if (occ_n[t] < MAX_NETS) {
            occ_lo[t][occ_n[t]] = ns->lo[pick];
            occ_hi[t][occ_n[t]] = ns->hi[pick];
            occ_n[t]++;
        }
        ns->track_of[pick] = t;
    }
    for (int s = 0; s < l->n_segs; s++) {
        const lay_seg *sg = &l->segs[s];
        if (l->nodes[sg->a].rank != r) continue;
        g->seg_track[s] = ns->track_of[find_root(ns->uf, sg->a)];
    }
    return tracks;
}

void graph_view_build(graph_view *g, const plan *p, int n, const int *ids, int n_edges, const int *from,
                      const int *to)
{
    graph_view_build_named(g, p, n, ids, NULL, n_edges, from, to);
}

void graph_view_build_named(graph_view *g, const plan *p, int n, const int *ids, const char *const *names,
                            int n_edges, const int *from, const int *to)
{
    graph_view_free(g);
    int *widths = box_widths(p, n, ids, names);
    g->lay = layout_build(n, widths, n_edges, from, to);
    free(widths);
    g->n_ids = n;
    g->ids = lw_malloc(sizeof(int) * (size_t)(n ? n : 1));
    memcpy(g->ids, ids, sizeof(int) * (size_t)n);
    if (names) {
        g->names = lw_calloc((size_t)(n ? n : 1), sizeof(char *));
        for (int i = 0; i < n; i++) g->names[i] = names[i] ? lw_strdup(names[i]) : NULL;
    }
    const graph_layout *l = g->lay;
    g->row_of_rank = lw_calloc((size_t)l->n_ranks + 1, sizeof(int));
    g->gap_of_rank = lw_calloc((size_t)l->n_ranks + 1, sizeof(int));
    g->seg_track = lw_malloc(sizeof(int) * (size_t)(l->n_segs + 1));
    size_t nb = sizeof(int) * (size_t)(l->n_nodes + 1);
    nets ns = {lw_malloc(nb), lw_malloc(nb), lw_malloc(nb), lw_malloc(nb)};
    int y = 0;
    for (int r = 0; r < l->n_ranks; r++) {
        g->row_of_rank[r] = y;
        int tracks = route_rank(g, l, r, &ns);
        g->gap_of_rank[r] = r + 1 < l->n_ranks ? tracks + 1 : 0;
        y += 3 + g->gap_of_rank[r];
    }
    g->height = y;
    g->width = l->width;
    g->valid = 1;
    free(ns.uf);
    free(ns.lo);
    free(ns.hi);
    free(ns.track_of);
}

int graph_view_find(const graph_view *g, int id, int *y, int *x, int *wd)
{
    if (!g->lay) return -1;
    for (int i = 0; i < g->n_ids; i++)
        if (g->ids[i] == id) {
            const lay_node *v = &g->lay->nodes[g->lay->lay_of_id[i]];
            *y = g->row_of_rank[v->rank];
            *x = v->x;
            *wd = v->w;
            return 0;
        }
    return -1;
}

/* ---- the cell canvas ----------------------------------------------------- */

typedef struct cell {
    char ch[5];           /* text: one character (UTF-8), or "" for the line bits */
    unsigned char cont;   /* the right half of a wide character on the left */
    unsigned char mask;   /* LINE_* bits */
    unsigned char arrow;
    unsigned char st;
} cell;

typedef struct canvas {
    int h, w;
    cell *c;
} canvas;

static cell *at(canvas *cv, int y, int x)
{
    static cell dummy;
    if (y < 0 || y >= cv->h || x < 0 || x >= cv->w) return &dummy;
    return &cv->c[(size_t)y * (size_t)cv->w + (size_t)x];
}

static void line_bits(canvas *cv, int y, int x, unsigned bits, int st)
{
    cell *c = at(cv, y, x);
    c->mask |= (unsigned char)bits;
    if (st == ST_EDGE_HI || c->st == 0) c->st = (unsigned char)st;
}

static void text(canvas *cv, int y, int x, int maxw, const char *s, int st)
{
    int col = 0;
    while (*s) {
        int w, k = ui_next_char(s, &w);
        if (w == 0) { /* a combining mark: dropped rather than misplaced */
            s += k;
            continue;
        }
        if (col + w > maxw) break;
        cell *c = at(cv, y, x + col);
        memset(c->ch, 0, sizeof c->ch);
        memcpy(c->ch, s, (size_t)(k < 4 ? k : 4));
        c->cont = 0;
        c->st = (unsigned char)st;
        if (w == 2) {
            cell *r = at(cv, y, x + col + 1);
            r->ch[0] = 0;
            r->cont = 1;
            r->st = (unsigned char)st;
        }
        col += w;
        s += k;
    }
}

static void draw_box(canvas *cv, int y, int x, int w, const char *name, const char *label, int st)
{
    for (int i = 0; i < w; i++) {
        unsigned top = (i > 0 ? LINE_LEFT : 0) | (i < w - 1 ? LINE_RIGHT : 0);
        line_bits(cv, y, x + i, top | (i == 0 || i == w - 1 ? LINE_DOWN : 0), st);
        line_bits(cv, y + 2, x + i, top | (i == 0 || i == w - 1 ? LINE_UP : 0), st);
        at(cv, y, x + i)->st = (unsigned char)st;
        at(cv, y + 2, x + i)->st = (unsigned char)st;
    }
    line_bits(cv, y + 1, x, LINE_UP | LINE_DOWN, st);
    line_bits(cv, y + 1, x + w - 1, LINE_UP | LINE_DOWN, st);
    at(cv, y + 1, x)->st = (unsigned char)st;
    at(cv, y + 1, x + w - 1)->st = (unsigned char)st;
    char nb[NAME_MAXW * 4 + 8];
    /* the name sits in the top border, the config inside */
    ui_fit(name, w - 3, nb, sizeof nb); /* cut by cells, with an ellipsis */
    text(cv, y, x + 2, w - 3, nb, st);
    for (int i = 1; i < w - 1; i++) {
        cell *c = at(cv, y + 1, x + i);
        c->ch[0] = ' ';
        c->ch[1] = 0;
        c->cont = 0;
        c->st = (unsigned char)st;
    }
    text(cv, y + 1, x + 2, w - 3, label, st);
}

/* Marks the segments of the edge hi_from -> hi_to (through dummies). */
static void mark_highlight(const graph_view *g, int hi_from, int hi_to, unsigned char *seg_hi)
{
    const graph_layout *l = g->lay;
    int la = -1, lb = -1;
    for (int i = 0; i < g->n_ids; i++) {
        if (g->ids[i] == hi_from) la = l->lay_of_id[i];
        if (g->ids[i] == hi_to) lb = l->lay_of_id[i];
    }
    if (la < 0 || lb < 0) return;
    for (int s = 0; s < l->n_segs; s++) {
        if (l->segs[s].a != la) continue;
        /* follow the chain to its real end */
        int path[512], np = 0, cur = s;
        for (;;) {
            if (np < 512) path[np++] = cur;
            int b = l->segs[cur].b;
            if (l->nodes[b].id >= 0) {
                if (b == lb)
                    for (int k = 0; k < np; k++) seg_hi[path[k]] = 1;
                break;
            }
            int next = -1;
            for (int t = 0; t < l->n_segs; t++)
                if (l->segs[t].a == b) {
                    next = t;
                    break;
                }
            if (next < 0) break;
            cur = next;
        }
    }
}

static void render(const app *a, const graph_view *g, const graph_paint *gp, canvas *cv)
{
    const graph_layout *l = g->lay;
    unsigned char *seg_hi = lw_calloc((size_t)l->n_segs + 1, 1);
    if (gp->hi_from >= 0) mark_highlight(g, gp->hi_from, gp->hi_to, seg_hi);
    /* dummies: a vertical line through the band */
    for (int v = 0; v < l->n_nodes; v++) {
        const lay_node *n = &l->nodes[v];
        if (n->id >= 0) continue;
        int y0 = g->row_of_rank[n->rank];
        int hot = 0;
        for (int s = 0; s < l->n_segs; s++)
            if (seg_hi[s] && (l->segs[s].a == v || l->segs[s].b == v)) hot = 1;
        for (int k = 0; k < 3; k++) line_bits(cv, y0 + k, n->x, LINE_UP | LINE_DOWN, hot ? ST_EDGE_HI : ST_EDGE);
    }
    /* edges, in the gap below their producer's rank */
    for (int pass = 0; pass < 2; pass++) /* highlighted ones last, so they win shared cells */
        for (int s = 0; s < l->n_segs; s++) {
            if (seg_hi[s] != pass) continue;
            int st = seg_hi[s] ? ST_EDGE_HI : ST_EDGE;
            const lay_node *na = &l->nodes[l->segs[s].a], *nb = &l->nodes[l->segs[s].b];
            int r = na->rank;
            int band = g->row_of_rank[r];
            int g0 = band + 3, ya = g0 + g->gap_of_rank[r] - 1;
            int ca = lay_center(na), cb = lay_center(nb);
            if (na->id >= 0) line_bits(cv, band + 2, ca, LINE_DOWN, st);
            int t = g->seg_track[s];
            if (t < 0 || ca == cb) {
                for (int y = g0; y < ya; y++) line_bits(cv, y, ca, LINE_UP | LINE_DOWN, st);
                if (ca != cb) { /* no track (should not happen): bend in the arrow row */
                    for (int x = (ca < cb ? ca : cb); x <= (ca < cb ? cb : ca); x++)
                        line_bits(cv, ya, x, LINE_LEFT | LINE_RIGHT, st);
                }
            } else {
                int yt = g0 + t;
                for (int y = g0; y < yt; y++) line_bits(cv, y, ca, LINE_UP | LINE_DOWN, st);
                line_bits(cv, yt, ca, LINE_UP | (cb > ca ? LINE_RIGHT : LINE_LEFT), st);
                int x0 = ca < cb ? ca : cb, x1 = ca < cb ? cb : ca;
                for (int x = x0 + 1; x < x1; x++) line_bits(cv, yt, x, LINE_LEFT | LINE_RIGHT, st);
                line_bits(cv, yt, cb, LINE_DOWN | (cb > ca ? LINE_LEFT : LINE_RIGHT), st);
                for (int y = yt + 1; y < ya; y++) line_bits(cv, y, cb, LINE_UP | LINE_DOWN, st);
            }
            if (nb->id >= 0) {
                cell *c = at(cv, ya, cb);
                c->arrow = 1;
                if (st == ST_EDGE_HI || !c->st) c->st = (unsigned char)st;
            } else {
                line_bits(cv, ya, cb, LINE_UP | LINE_DOWN, st);
            }
        }
    free(seg_hi);
    /* boxes on top */
    for (int v = 0; v < l->n_nodes; v++) {
        const lay_node *n = &l->nodes[v];
        if (n->id < 0) continue;
        int layer_id = g->ids[n->id];
        char lb[64];
        const char *label = gp->label ? gp->label(a, layer_id, lb, sizeof lb) : "";
        int st = gp->style ? gp->style(a, layer_id) : ST_NORMAL;
        const char *name = g->names && g->names[n->id] ? g->names[n->id] : plan_net(a->p)->layers[layer_id].name;
        draw_box(cv, g->row_of_rank[n->rank], n->x, n->w, name, label, st);
    }
}

void graph_view_draw(const app *a, const graph_view *g, const graph_paint *gp, WINDOW *w, rect r, int pan_y,
                     int pan_x)
{
    if (!g->lay || r.h <= 0 || r.w <= 0) return;
    canvas cv = {g->height, g->width, NULL};
    if (cv.h <= 0 || cv.w <= 0) return;
    cv.c = lw_calloc((size_t)cv.h * (size_t)cv.w, sizeof(cell));
    render(a, g, gp, &cv);
    for (int y = 0; y < r.h; y++) {
        int cy = y + pan_y;
        if (cy < 0 || cy >= cv.h) continue;
        for (int x = 0; x < r.w; x++) {
            int cx = x + pan_x;
            if (cx < 0 || cx >= cv.w) continue;
            const cell *c = &cv.c[(size_t)cy * (size_t)cv.w + (size_t)cx];
            char buf[8];
            const char *s;
            int cells = 1;
            if (c->cont) continue; /* drawn by the wide character on its left */
            if (c->arrow) s = G->arrow_down;
            else if (c->ch[0]) {
                memcpy(buf, c->ch, sizeof c->ch);
                s = buf;
                ui_next_char(s, &cells);
            } else if (c->mask) s = G->box[c->mask & 15];
            else continue;
            ui_put(w, r.y + y, r.x + x, cells > 1 && x + 1 < r.w ? cells : 1, c->st, s);
        }
    }
    free(cv.c);
}
