/*
 * layout: a layered drawing of a DAG on a grid of character cells, for the
 * graph screen and the elimination stepper (no curses here).
 *
 * Nodes go in ranks by longest path from the sources (top to bottom); an
 * edge that spans several ranks gets a dummy node in each rank between, so
 * every segment joins neighbouring ranks. The order inside a rank comes from
 * a depth-first visit improved by barycentre sweeps (fewest crossings kept);
 * columns come from isotonic regression towards the neighbours' centres, so
 * chains stand straight and branches fan out evenly.
 *
 * layout_build returns a layout the caller frees with layout_free.
 */
#ifndef LW_LAYOUT_H
#define LW_LAYOUT_H

typedef struct lay_node {
    int id;     /* caller's node, or -1 for a dummy (a bend of a long edge) */
    int w;      /* width in columns (1 for a dummy) */
    int rank;
    int order;  /* position in its rank, left to right */
    int x;      /* left column */
} lay_node;

/* A segment from lay node a (rank r) to lay node b (rank r + 1). */
typedef struct lay_seg {
    int a, b;
} lay_seg;

typedef struct graph_layout {
    int n_nodes;
    lay_node *nodes;
    int n_ranks;
    int *rank_len;
    int **rank;          /* [rank][order] lay node */
    int n_segs;
    lay_seg *segs;
    int width;           /* columns used */
    int n_ids;
    int *lay_of_id;      /* caller id -> lay node */
    long crossings;      /* segment crossings of the chosen order */
} graph_layout;

/* n nodes 0..n-1 of the given widths; edges from[i] -> to[i] must form a DAG
 * (duplicates are drawn once; self loops are ignored). */
graph_layout *layout_build(int n, const int *widths, int n_edges, const int *from, const int *to);
void layout_free(graph_layout *l);

/* Column where edges attach to a lay node (its centre). */
static inline int lay_center(const lay_node *v) { return v->x + v->w / 2; }

#endif
