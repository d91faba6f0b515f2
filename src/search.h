/*
 * search: the elimination engine of Algorithm 1 (Jia et al., ICML 2018, §5.2)
 * over abstract cost tables. It knows nothing of layers: a cost_graph has
 * nodes with a cost per configuration (t_c + t_s) and directed edges with a
 * cost per (producer config, consumer config) pair (t_x).
 *
 * Ownership: the caller owns the cost_graph it builds (cg_new/cg_free).
 * search_run() copies what it needs; the search_result it returns owns all
 * of its memory (log tables included) and is freed with search_result_free().
 */
#ifndef LW_SEARCH_H
#define LW_SEARCH_H

#include <stdatomic.h>

#include <stddef.h>

typedef struct cost_graph {
    int n_nodes;
    int *n_configs;       /* [n_nodes], each >= 1 */
    double **node_cost;   /* [n_nodes][n_configs[v]] */
    int n_edges;
    int *edge_from;       /* [n_edges] producer node */
    int *edge_to;         /* [n_edges] consumer node */
    double **edge_cost;   /* [n_edges][n_configs[from] * n_configs[to]], row-major: [ci * n_configs[to] + cj] */
    unsigned char *edge_borrowed; /* [n_edges] 1: the table is someone else's (cg_add_edge_borrowed), read only */
    int edge_capacity;    /* room in the edge arrays; cg_add_edge grows it */
} cost_graph;

/* Allocates a graph with the given node config counts and room for
 * max_edges edges; node costs are zeroed. Edges are added with cg_add_edge,
 * which allocates a zeroed table and returns the edge index (growing the
 * edge arrays past max_edges if needed), or -1 for a node id out of range or
 * no memory. cg_new returns NULL for a config count < 1 or no memory. */
cost_graph *cg_new(int n_nodes, const int *n_configs, int max_edges);
int cg_add_edge(cost_graph *g, int from, int to);
/* As cg_add_edge, but the edge's table is `table` itself, not a copy: it
 * must outlive the graph and not change while the graph lives; cg_free
 * leaves it. The search only reads edge tables. */
int cg_add_edge_borrowed(cost_graph *g, int from, int to, const double *table);
void cg_free(cost_graph *g);

/* Total cost of a full assignment (one config per node). */
double cg_evaluate(const cost_graph *g, const int *config);

/* ELIM_NODE and ELIM_EDGE are Algorithm 1's node and edge eliminations
 * (Eq. 2 and 3). ELIM_FOLD is not in the paper: a node with a single edge
 * is folded into its neighbour, in C^2 work where a node elimination takes
 * C^3 (search_options.fold turns it off). */
typedef enum { ELIM_NODE, ELIM_EDGE, ELIM_FOLD } elim_kind;

/* One step. Edge ids: the original edges are 0..n_edges-1; every step
 * creates exactly one new edge with id n_edges + step index. */
typedef struct elim_step {
    elim_kind kind;
    /* ELIM_NODE: node `node` with in-edge e1 = (from -> node) and out-edge
     *            e2 = (node -> to) is removed; new edge (from -> to).
     * ELIM_EDGE: edges e1 and e2, both (from -> to), are merged.
     * ELIM_FOLD: node `node`, whose only edge is e1 (either direction)
     *            to node `into`, is removed with e1; `into` has another
     *            edge e2 (from -> to, `into` one of its ends), which the new
     *            edge (from -> to) replaces: e2's table plus, along
     *            `into`'s axis, h(c) = min over the node's configs cj of
     *            node_cost[cj] + t1(c, cj) (t1 indexed as e1's ends are). */
    int node;             /* -1 for ELIM_EDGE */
    int into;             /* ELIM_FOLD: the neighbour folded into; -1 otherwise */
    int e1, e2;
    int new_edge;
    int from, to;
    double *table;        /* new edge's table, n_configs[from] * n_configs[to]; NULL once a
                             later step has used it where the search kept no tables
                             (search_options.keep_tables 0) */
    int *argmin;          /* ELIM_NODE: best config of `node` per (ci, ck), [ci * n_configs[to] + ck];
                             ELIM_FOLD: per config of `into`, [n_configs[into]]; NULL for ELIM_EDGE */
} elim_step;

typedef enum {
    FINAL_ENUMERATION,    /* Algorithm 1's final step: enumerate the remaining graph */
    FINAL_VARIABLE_ELIMINATION /* remaining graph too big to enumerate: exact variable elimination */
} final_method;

typedef struct search_result {
    int n_nodes;
    int n_edges_original;
    int n_steps;
    elim_step *steps;     /* in order of application */
    int n_left;           /* nodes left after the eliminations */
    int *left;            /* [n_left] their ids, ascending */
    int n_edges_left;
    int *edges_left;      /* ids (original or created) of the edges left */
    int fold;             /* the options' fold: folds (ELIM_FOLD) were allowed */
    int tables_kept;      /* the options' keep_tables: every step's table is here */
    final_method method;
    double final_space;   /* product of config counts of the nodes left (as double: may be huge) */
    int *config;          /* [n_nodes] the optimal config per node */
    double cost;          /* its total cost; equals cg_evaluate(g, config) */
    /* undo order: the eliminated nodes in the order the undo assigned them */
    int n_undo;
    int *undo_node;
} search_result;

/* Runs Algorithm 1 and returns the exact optimum, or NULL if memory ran out.
 * progress, if non-NULL, is called now and then during a long final step
 * with done/total in [0,1]. */
typedef void (*search_progress_fn)(double fraction, void *user);
search_result *search_run(const cost_graph *g, search_progress_fn progress, void *user);
/* search_run keeping no step tables (search_options.keep_tables 0), for a
 * caller that reads only the optimum: its configs and cost. */
search_result *search_optimum(const cost_graph *g);
void search_result_free(search_result *r);
/* Ends of edge id e of search r of g: an original edge (e < g->n_edges)
 * or the one step e - n_edges created; and its table when tab is not NULL. */
void search_edge_ends(const cost_graph *g, const search_result *r, int e, int *from, int *to, const double **tab);

/* Why search_run_with returned NULL, and how big the final step was. */
typedef enum {
    SEARCH_OK = 0,
    SEARCH_OUT_OF_MEMORY,
    SEARCH_TOO_LARGE,     /* the graph left after the eliminations is too big
                             to enumerate and variable elimination would need
                             more than table_limit table entries */
    SEARCH_INVALID_GRAPH, /* config count < 1, edge endpoint out of range, NULL table */
    SEARCH_CANCELLED      /* options.cancel became non-zero */
} search_status;

typedef struct search_info {
    search_status status;
    int n_left;           /* nodes left after the eliminations */
    double final_space;   /* product of their config counts */
    double ve_entries;    /* variable elimination's table entries (a lower
                             bound when refused); 0 if it did not run */
} search_info;

#define SEARCH_DEFAULT_ENUMERATION_LIMIT 2e6
#define SEARCH_DEFAULT_TABLE_LIMIT 16777216.0   /* 2^24 entries, ~200 MB */
#define SEARCH_DEFAULT_PROGRESS_MIN_WORK 1e6
/* Variable elimination also refuses (SEARCH_TOO_LARGE) more than this many
 * nodes with an edge left after the eliminations: its order planning takes
 * time cubic and memory quadratic in that count (1000 nodes: about 1.5 s
 * and 40 MB; 4000: 90 s). Without folds, a network with many dangling
 * branches (layers nothing reads) gets near it (with folds they fold into
 * what they read); Algorithm 1 leaves shipped ones 2. */
#define SEARCH_MAX_VE_NODES 1000

typedef struct search_options {
    /* The final step enumerates every assignment of the nodes left (those
     * with an edge) while their number is at most this; above it, it runs
     * variable elimination. 0 forces variable elimination. */
    double enumeration_limit;
    /* Variable elimination refuses (SEARCH_TOO_LARGE) rather than allocate
     * more table entries than this, summed over the tables it creates
     * (12 bytes an entry). */
    double table_limit;
    /* A final step with less work (table entries touched) than this never
     * calls progress; 0 makes every final step report. */
    double progress_min_work;
    /* If non-NULL, the search gives up (SEARCH_CANCELLED) soon after *cancel
     * becomes non-zero: checked at every elimination and before the final
     * step. NULL by default. */
    const atomic_int *cancel;
    /* Non-zero (the default): fold nodes with a single edge (ELIM_FOLD)
     * before node eliminations. 0: Algorithm 1 of the paper only, node and
     * edge eliminations. Both are exact; folding is faster on chains. */
    int fold;
    /* Non-zero (the default): every step's table stays in the result, for
     * the stepper, diagrams of a step and search_min_marginals. 0: a
     * created edge's table is freed (or written over) once a later step
     * has used it, which the optimum and its configs do not need (a
     * plan's search; search_keep_tables gives them back where wanted). Less
     * memory is less time: a page touched for the first time costs a
     * development machine about 2.5 ms a MB (ResNet-50 at 256 GPUs, the
     * whole `search` process: 550 -> 330 MB at its peak, 5.0 -> 4.55 s). */
    int keep_tables;
} search_options;

/* Fills o with the SEARCH_DEFAULT_* values. */
void search_options_init(search_options *o);

/* search_run with options (NULL: defaults) and, if info is non-NULL, the
 * reason for a NULL return and the size of the final step. search_run(g, p,
 * u) is search_run_with(g, NULL, p, u, NULL). */
search_result *search_run_with(const cost_graph *g, const search_options *opt,
                               search_progress_fn progress, void *user,
                               search_info *info);
/* Gives r, a search of g that kept no tables, every step's table: g is
 * searched again as r was, keeping them, and r takes those it lacks (the
 * same steps, so the same tables; r itself stays where it is). 0 (also
 * where r kept them), -1 with info's status set where the search failed. */
int search_keep_tables(const cost_graph *g, search_result *r, search_info *info);

/* A short English phrase for a status ("out of memory", ...). */
const char *search_status_message(search_status s);

/* Min-marginals: for every node v and config k, the least total cost of an
 * assignment that gives v config k (what "why not config k?" asks), from r,
 * the result of search_run on g, in about the time of the search itself: the
 * final graph is enumerated once more, keeping the least total per pair of
 * configs on each edge left, and the eliminations are undone last first,
 * each turning the pair minima of the edge it made into those of the two it
 * took and of the node it removed. Fills marg[v][k] (caller-allocated, +inf
 * where no finite total exists). Returns 0; -1 if r's final step was
 * variable elimination (not supported: ask search_run per config) or r kept
 * no tables (search_options.keep_tables 0); -2 out of memory. */
int search_min_marginals(const cost_graph *g, const search_result *r, double **marg);

/* Brute force over every assignment; for tests. Returns the minimum cost and
 * fills best (n_nodes) with an argmin. Refuses (returns -1) above max_space. */
double search_brute_force(const cost_graph *g, int *best, double max_space);

/* State of the graph after the first k steps (0 <= k <= n_steps): which
 * nodes and edges are alive. alive_nodes has n_nodes entries, alive_edges
 * has n_edges_original + n_steps entries. For the TUI's stepper. */
void search_state_at(const search_result *r, int k, unsigned char *alive_nodes, unsigned char *alive_edges);

#endif
