/*
 * graph_draw: the network or a reduced graph drawn as boxes and edges
 * (laid out by layout.h), for the graph screen and the stepper.
 */
#ifndef LW_GRAPH_DRAW_H
#define LW_GRAPH_DRAW_H

#include "app.h"
#include "layout.h"

/* A drawing of the network or of a reduced graph (see layout.h) with the
 * rows its boxes and gaps take. Layout node ids index ids[], which holds
 * layer indices. */
typedef struct graph_view {
    graph_layout *lay;
    int n_ids;
    int *ids;                  /* [n_ids] layer of each layout id */
    char **names;              /* [n_ids] a box's own name (a folded block), NULL: the layer's; or NULL */
    int *row_of_rank;          /* [n_ranks] first row of each rank's boxes */
    int *gap_of_rank;          /* [n_ranks] rows of the gap below the rank */
    int *seg_track;            /* [n_segs] track row in its gap, -1: straight */
    int height, width;
    int valid;
} graph_view;


/* graph drawing shared by the graph screen and the stepper (graph_draw.c) */
void graph_view_free(graph_view *g);
/* Builds g for the given nodes (layer ids) and edges between them. */
void graph_view_build(graph_view *g, const plan *p, int n, const int *ids, int n_edges, const int *from,
                      const int *to);
/* The same with names[i] (copied; NULL, or names NULL: the layer's own)
 * in box i's top border: the graph screen's folded blocks. */
void graph_view_build_named(graph_view *g, const plan *p, int n, const int *ids, const char *const *names,
                            int n_edges, const int *from, const int *to);
/* Draws the part of the graph starting at (pan_y, pan_x) into r.
 * label(): second line of node id's box; style(): its style;
 * hi_from/hi_to: the layers whose edge is highlighted (-1: none). */
typedef struct graph_paint {
    const char *(*label)(const app *a, int id, char *buf, size_t n);
    int (*style)(const app *a, int id);
    int hi_from, hi_to;
} graph_paint;
void graph_view_draw(const app *a, const graph_view *g, const graph_paint *gp, WINDOW *w, rect r, int pan_y,
                     int pan_x);
/* Top-left of a layer's box, or -1. */
int graph_view_find(const graph_view *g, int id, int *y, int *x, int *wd);

#endif
