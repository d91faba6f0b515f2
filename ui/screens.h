/*
 * screens: what each screen keeps between frames, and the one list cursor
 * every list uses.
 *
 * A screen's state is allocated and freed by the screen itself (its
 * screen_ops state_new / state_free) and lives behind a->st[its id]; only
 * the screen's own file changes it. The types are declared here so the
 * screen tests can look at them (screen_of-style accessors below).
 */
#ifndef LW_SCREENS_H
#define LW_SCREENS_H

#include "app.h"
#include "graph_draw.h"
#include "list.h"
#include "explain.h"
#include "fold.h"

/* ---- the list cursor ---------------------------------------------------- */


/* ---- each screen's state ------------------------------------------------ */

typedef struct table_state {
    list_cursor cur;           /* rows in display order (a->order); sel mirrors a->sel */
    int y0;                    /* where the first row was drawn, for mouse clicks */
    int colset;                /* the column set v chose (screen_table.c) */
    fold fd;                   /* in layer order: runs of identical blocks grouped (fold.h) */
    int n_rows;
    int *rows;                 /* [n_rows] a layer, or -1 - u: the header of fd's unit u */
    int collapsed;             /* the groups' layer rows hidden (f) */
} table_state;

typedef struct graph_state {
    graph_view gv;
    int pan_y, pan_x;
    int follow;                /* pan to keep the selected layer in view */
    fold fd;                   /* the boxes shown: repeated blocks folded (fold.h) */
    unsigned char *open;       /* [n_open] non-zero at a block's first layer: that block unfolded */
    int n_open;
    int auto_open;             /* the block a find unfolded (its first layer), folded again by the next; -1 */
} graph_state;

/* stepper: pos 0..n_steps eliminations, n_steps+1 the final step,
 * n_steps+1+j the undo having assigned j nodes */
typedef struct steps_state {
    int step;
    graph_view sv;             /* reduced graph at sv_step */
    int sv_step;
    int pan_y, pan_x;
    int follow;
    list_cursor rows;          /* the new edge's table rows (scrolled) */
} steps_state;

/* scaling: computed lazily when the screen opens. In the program a forked
 * worker computes the rows and sends them through a pipe, so keys stay live
 * while a 64-GPU cost model builds (seconds for Inception-v3); tests
 * compute them in-process, one GPU count per idle slice. */
typedef struct scale_state {
    scale_row *rows;
    int n, done, valid;
    int pid, fd;               /* the worker and its pipe; 0 and -1 when none */
    unsigned char buf[sizeof(scale_row)];
    int buf_len;
    int metric;                /* m: images/s by Eq. 1, bytes moved, images/s simulated (screen_scale.c's M_*) */
    int axis;                  /* S: what the rows sweep (plan_sweep_axis): the GPU count, the inter-node
                                  bandwidth, the batch per GPU, the GPUs per node */
    struct scale_fit *fit;     /* f: the largest batch that fits, worked out on a thread (screen_scale.c) */
    char fit_line[256];        /* its answer, shown under the chart and in the export's title ("": none) */
    plan_pipe_settings pipe;   /* the session's pipeline settings the rows were computed for (stages > 1: the P series) */
} scale_state;

typedef struct cluster_state {
    list_cursor cur;           /* the selected field */
} cluster_state;

/* why not: every total at once (min-marginals), then the "others" column
 * a few configs per idle slice, best first */
typedef struct whynot_state {
    int layer;                 /* -1: none */
    whynot_entry *e;           /* [n] */
    int n, done, counted;
    int marginals;             /* 0 not tried yet, 1 totals from min-marginals, -1 one search per config */
    list_cursor cur;           /* display positions */
    double opt_ms;
    int *tmp;                  /* [n_layers] scratch strategy */
} whynot_state;

/* explain: the engine's explanation of one layer (explain.h), its text
 * scrolled; the crossover probes run on the plan's background worker */
typedef struct explain_state {
    int layer;                 /* -1: none */
    int valid;                 /* e is for the current optimum */
    explain e;
    list_cursor cur;           /* scrolled lines */
    int lines;                 /* lines the last frame's text had */
    explain_job *job;          /* a->workers: e being worked out on a thread (Esc cancels), or a cancelled one
                                  still winding down; NULL: none */
    double job_t0;             /* when it started */
} explain_state;

/* compare: two strategies side by side; each side from a source */
typedef enum { CMP_CURRENT, CMP_OPTIMUM, CMP_DATA, CMP_MODEL, CMP_OWT, CMP_PREVIOUS, CMP_FILE, CMP__COUNT } compare_source;

typedef struct compare_side {
    char label[300];
    int ok;                    /* resolved: cfg, le and the totals hold */
    char why[256];             /* not ok: why */
    config *cfg;               /* [n_layers] by value (the previous one may be of another setting) */
    layer_eval *le;            /* [n_layers] */
    double total_ms, images_per_s;
} compare_side;

typedef struct compare_state {
    int src[2];                /* compare_source of A and B */
    int opened;                /* sources chosen once */
    char file[256];            /* CMP_FILE's path */
    int valid;
    compare_side side[2];
    list_cursor cur;           /* the selected layer row */
} compare_state;

/* lecture: per layer, bytes synced split by sample against bytes moved
 * split by channel (explain_lecture), computed when first drawn */
typedef struct lecture_state {
    explain_lecture_row *rows; /* [n] */
    int n, valid;
    list_cursor cur;           /* the selected layer (mirrors a->sel) */
} lecture_state;

typedef struct help_state {
    list_cursor cur;           /* scrolled lines */
} help_state;

/* open (O): the files offered, each kind's shipped names and a typed path */
typedef enum { OPEN_NETWORK, OPEN_CLUSTER, OPEN_STRATEGY, OPEN__KINDS } open_kind;

typedef struct open_row {
    open_kind kind;
    const char *name;          /* a shipped name (static); NULL: type a path */
} open_row;

typedef struct open_state {
    list_cursor cur;
    open_row *rows;
    int n;
} open_state;

static inline table_state *table_of(const app *a) { return (table_state *)a->st[SCR_TABLE]; }
static inline graph_state *graph_of(const app *a) { return (graph_state *)a->st[SCR_GRAPH]; }
static inline steps_state *steps_of(const app *a) { return (steps_state *)a->st[SCR_STEPS]; }
static inline scale_state *scale_of(const app *a) { return (scale_state *)a->st[SCR_SCALE]; }
static inline cluster_state *cluster_of(const app *a) { return (cluster_state *)a->st[SCR_CLUSTER]; }
static inline whynot_state *whynot_of(const app *a) { return (whynot_state *)a->st[SCR_WHYNOT]; }
static inline explain_state *explain_of(const app *a) { return (explain_state *)a->st[SCR_EXPLAIN]; }
static inline compare_state *compare_of(const app *a) { return (compare_state *)a->st[SCR_COMPARE]; }
static inline lecture_state *lecture_of(const app *a) { return (lecture_state *)a->st[SCR_LECTURE]; }
static inline help_state *help_of(const app *a) { return (help_state *)a->st[SCR_HELP]; }
static inline open_state *open_of(const app *a) { return (open_state *)a->st[SCR_OPEN]; }

/* ---- what screens offer each other -------------------------------------- */

/* cluster screen's editable fields (screen_cluster.c) */
/* Applies a typed value to field f: returns the action, or ACT_NONE with
 * the status set on bad input. */

/* scaling computation (screen_scale.c) */
void scale_start(app *a);
/* Sync: computes the next GPU count. Async: takes the rows the worker has
 * sent. 1 while more remain. */
int scale_step(app *a);
/* Stops a running worker (kills and reaps it). */
void scale_stop(app *a);

/* opening files (screen_open.c) */
/* Opens a network (a new plan, the history cleared), a cluster (a what-if
 * through plan_apply: z undoes it) or a strategy file (every layer pinned
 * to its configs, as `layerwise eval -s FILE` evaluates it) by shipped
 * name or path. A bad file leaves the plan as it was and says why on the
 * status line (file and place). Returns the action. */
action app_open_file(app *a, open_kind kind, const char *name);
/* Opens the prompt for a file of that kind (label NULL: "File: "); Enter opens it. */
void open_prompt(app *a, open_kind kind, const char *label);

/* compare (screen_compare.c): B from a strategy file the prompt typed */

/* why-not computation (screen_whynot.c) */
int whynot_step(app *a, double budget_s);

/* Starts the "why not" list for a layer and opens its screen. */
void app_whynot_open(app *a, int li);
/* Explains layer li's config (screen_explain.c) and opens its screen. */
void app_explain_open(app *a, int li);
/* Opens the compare view (screen_compare.c). */
void app_compare_open(app *a);
/* Opens the lecture view (screen_lecture.c). */
void app_lecture_open(app *a);

#endif
