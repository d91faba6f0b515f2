/*
 * app: the state of one TUI session and the contract between its parts.
 *
 * An app owns one plan (the engine's what-if setting and its optimum) plus
 * everything the screens remember: the selected layer, the sort order, the
 * baseline shown beside the optimum, the stepper position, the lazily
 * computed scaling and "why not" tables, the prompt being edited and the
 * status line. app_open builds it (no curses needed); app_free releases it
 * all, the plan included.
 *
 * Screens are a draw() over a rectangle of a WINDOW plus a table of key
 * bindings, behind a screen_ops entry (see app_screens). Key handlers change
 * state and return what must happen next (an action); a what-if is written
 * into a->pending.change (app_whatif_begin, app_change_settings, app_change_cluster)
 * and app_perform applies it with plan_apply, the one engine call, so the
 * loop in tui.c can show "working..." first. Nothing under ui/ writes to the
 * plan or reads its cost model (plan.h's read API instead). Nothing here
 * writes to the terminal except through the WINDOW handed to a draw
 * function, so the tests render every screen into ncurses' in-memory screen.
 *
 * This header declares app.c's functions (app_shown_* and app_undo are its
 * fronts for shown.c and history.c, which know nothing of the session) and
 * the types its parts share;
 * each other ui file declares its own (keys.h, prompt.h, shown.h,
 * history.h, find.h, list.h, graph_draw.h, screens.h for the screens).
 */
#ifndef LW_APP_H
#define LW_APP_H

#include <curses.h>

#include "cli.h"
#include "draw.h"
#include "history.h"
#include "layout.h"
#include "palette.h"
#include "plan.h"
#include "sim.h"

typedef enum {
    SCR_TABLE,
    SCR_GRAPH,
    SCR_STEPS,
    SCR_SCALE,
    SCR_CLUSTER,
    SCR_TIMELINE,
    SCR_WHYNOT,
    SCR_EXPLAIN,
    SCR_COMPARE,
    SCR_LECTURE,
    SCR_HELP,
    SCR_OPEN,
    SCR__COUNT
} screen_id;

/* What a key handler asks for next. */
typedef enum {
    ACT_NONE,     /* nothing changed */
    ACT_REDRAW,   /* state changed: draw a new frame */
    /* a what-if is pending (a->pending.change): app_perform applies it with
     * plan_apply, then redraw. The three say how long it takes: */
    ACT_REBUILD,  /* settings or cluster: a new cost model (seconds; tui.c lets Esc cancel it) */
    ACT_RESEARCH, /* pins: only the search */
    ACT_RESYNC,   /* only the sync scheme: the t_s tables and the search */
    ACT_QUIT
} action;

typedef struct app app;

typedef action (*key_fn)(app *a, int key);

/* One row of a key table: up to four key codes, how help names them,
 * what they do. A table ends with an entry whose fn is NULL. */
typedef struct keybind {
    int keys[4];
    const char *label;
    const char *help;
    key_fn fn;
} keybind;


typedef struct screen_ops {
    const char *tab;          /* tab label; NULL: not a tab (an overlay) */
    const char *hints;        /* the hint bar's text on this screen */
    void (*draw)(app *a, WINDOW *w, rect r);
    const keybind *keys;      /* handled before the global table */
    void (*enter)(app *a);    /* called when the screen opens; may be NULL */
    /* Everything below may be NULL (0). */
    const char *overlay;      /* an overlay's name on the tab bar (" help "): it lies over the screen it was
                               * opened from, which stays the lit tab, the one Esc goes back to and the one
                               * whose prefetch hook applies */
    const char *title;        /* its section of the help screen */
    int without_strategy;     /* drawn, and its keys work, while the plan has no optimum */
    /* The screen's own state (a->st[id]), made by app_open: state_new, or
     * else state_size zeroed bytes; freed by app_free: state_free, or else
     * free(). */
    size_t state_size;
    void *(*state_new)(app *a);
    void (*state_free)(app *a, void *st);
    /* The optimum changed (settings: the run settings or the cluster too):
     * drop what was derived from it. */
    void (*invalidate)(app *a, int settings);
    int (*idle)(app *a, double budget_s);   /* background work while shown; 1 while more remains */
    int (*busy)(const app *a);              /* background work remains */
    int (*waiting)(const app *a);           /* the work left is a worker's: poll rather than spin */
    void (*leave)(app *a);                  /* optional: another screen is shown (stop background work) */
    action (*click)(app *a, int y, int x, int double_click); /* a click inside the screen */
    /* e on this screen. A screen with a drawing of its own (the timeline, the scaling chart) names its
     * default file (export_name) and writes it (export_file: 0, -1 with err set and *what unset, or 1
     * when the path is not one of its formats: a plain .json, the strategy, written by app_export);
     * otherwise export_view says which plan diagram e draws (default strategy). */
    int (*export_view)(const app *a, int *step);
    void (*export_name)(const app *a, char *buf, size_t n);
    const char *export_formats;   /* what its prompt offers: ".svg .png .pdf .json" (default: the diagrams') */
    int (*export_file)(app *a, const char *path, const char **what, lw_error *err);
    /* Other clusters the next keys would ask for (built ahead): up to two
     * new clusters the caller frees; returns how many. */
    int (*prefetch)(const app *a, cluster *out[2]);
    /* The search hook (/ n N): selects the next (dir 1) or previous (dir -1)
     * item, wrapping round, that app_search_match (or app_layer_matches)
     * accepts, mostly through list_find; returns how many items match (0:
     * none, nothing moved) and the selected one's place among them in *nth.
     * what: what an item is ("layer", "config"). NULL: nothing to search. */
    int (*find)(app *a, int dir, int *nth);
    const char *find_what;
} screen_ops;

extern const screen_ops *const app_screens[SCR__COUNT];

/* ---- per-screen state ---------------------------------------------------- */

typedef enum { SORT_LAYER, SORT_TOTAL, SORT_TC, SORT_TS, SORT_TX, SORT__COUNT } sort_key;

typedef plan_scale_row scale_row;

typedef struct whynot_entry {
    int config;                /* index into the layer's configs */
    double total_ms;           /* best total with the layer forced to it */
    double tx_ms;              /* the layer's t_x (incoming edges) in that strategy, known with changed */
    int changed;               /* other layers whose config moved */
    int done;                  /* total_ms known */
    int counted;               /* changed known */
} whynot_entry;

/* PROMPT_OVERWRITE: the export's file exists; y writes over it (a->prompt.buf
 * holds the path), n, Esc or q keep it. */
typedef enum {
    PROMPT_NONE,
    PROMPT_EXPORT,
    PROMPT_JSON,
    PROMPT_GPUS,
    PROMPT_BATCH,
    PROMPT_FIELD,
    PROMPT_SEARCH,
    PROMPT_OPEN,
    PROMPT_OVERWRITE,
    PROMPT_STRATEGY,
    PROMPT_PIPELINE
} prompt_kind;

/* What a prompt does with its text on Enter (a yes/no question's y: the
 * text it was opened with); arg is the one prompt_open was given (which
 * cluster field, which kind of file). */
typedef action (*prompt_submit_fn)(app *a, const char *text, int arg);

/* The prompt on the status line (prompt.h): the one who opens it hands it
 * what to do on submit. */
typedef struct app_prompt {
    prompt_kind kind;          /* PROMPT_NONE: no prompt open */
    char label[80];
    char buf[256];
    int len;
    int fresh;                 /* 1: the text is a pre-filled number, which the first character typed replaces */
    int arg;
    prompt_submit_fn submit;   /* Enter, or a yes/no question's y */
    prompt_submit_fn decline;  /* a yes/no question's n, q or Esc (NULL: "cancelled") */
} app_prompt;

/* The what-if being applied (app_whatif_begin, app_change_*): the change
 * app_perform hands to plan_apply and what its pointers point to. */
typedef struct app_pending {
    char what[160];            /* description of the change being applied */
    plan_change change;        /* the what-if app_perform hands to plan_apply (app_change_*) */
    plan_settings set;         /* what change.set points to */
    cluster *cl;               /* what change.cl points to: an edited clone of the plan's cluster */
    plan_pin pin;              /* what change.pins points to */
    plan_memory_settings mem;  /* what change.mem points to */
    plan_pipe_settings pipe;   /* what change.pipe points to */
    plan_pin *pins;            /* what change.pins points to when it is more than one pin (a strategy file) */
    char *opened_cluster;      /* the change is a cluster file opened (O): its name, taken on success */
    network *open_net;         /* the change is a network opened (O): it, and the name it was opened by */
    char *open_net_name;
    void (*perform)(app *a);   /* set with open_net: app_perform calls it instead of plan_apply (a new plan) */
} app_pending;

/* The optimum before the last what-if, for "what changed". */
typedef struct app_previous {
    unsigned char *changed;    /* [n_layers] config differs from before the last change */
    config *configs;           /* [n_layers] previous optimum's configs */
    double total_ms, ips;
    long batch;                /* the previous optimum's global batch */
    strategy_eval eval;        /* the previous optimum's evaluation (no layers before the first what-if) */
    int gpus;                  /* and its GPU count */
    double rebuild_s;          /* seconds the last rebuild or research took */
} app_previous;

/* The baseline shown beside the optimum (app_baseline_ensure). */
typedef struct app_baseline {
    int kind;                  /* -1 none, else baseline_kind */
    int *ci;                   /* [n_layers] baseline configs for the current plan */
    strategy_eval eval;
    int valid;
} app_baseline;


/* What the session was opened with, to reload and to reset. */
typedef struct app_source {
    char *net_name, *cluster_name, *profile_name; /* as given */
    cluster *cluster_loaded;   /* the cluster as loaded, for reset */
    int gpus_capped_from;      /* opened at PLAN_AUTO_SEARCH_MAX_GPUS of a cluster with this many GPUs (no count given), or 0 */
} app_source;

/* The last frame's geometry, for mouse clicks. */
typedef struct app_frame {
    int h, w;
    int tab_x[SCR__COUNT], tab_w[SCR__COUNT];
} app_frame;

struct app {
    int prefetch;              /* prefetch the next what-ifs in the background after each change (the TUI sets it) */
    int workers;               /* long screen work off the key loop: scaling rows in a forked worker, explain on
                                  a thread (the TUI sets it) */
    plan *p;
    app_source src;            /* the names it was opened with */
    screen_id screen, prev_screen;
    screen_id help_from;         /* the screen help was opened over (an overlay stays open under it) */
    int quit;

    /* status line: the last what-if result, export path or error */
    char status[512];
    int status_error;
    unsigned status_gen;       /* counts app_set_status calls: whether a status is still the one shown */

    /* the strategy shown (the optimum, or its refinement under the simulator) and its simulated step (shown.c) */
    struct app_shown *shown;
    app_pending pending;       /* the what-if being applied */
    app_previous prev;         /* the optimum before it */

    /* shared by the screens: the selected layer (table, graph, why-not),
     * the table's sort and the baseline shown beside the optimum */
    int sel;
    sort_key sort;
    app_baseline base;
    int *order;                /* [n_layers] row order for the current sort */

    void *st[SCR__COUNT];      /* each screen's own state (screens.h), made and freed by its ops */
    app_prompt prompt;         /* on the status line (prompt.h) */
    app_history hist;          /* undo and redo */
    char search[256];          /* the last search (/), which n and N repeat on any screen */
    app_frame frame;           /* the last frame's geometry */
};

/* ---- app.c: the session and its what-if engine ---------------------------- */

/* Loads the network and cluster named in a and builds the plan. NULL with
 * err set on bad input. */
app *app_open(const tui_args *args, lw_error *err);
void app_free(app *a);
/* Makes p (a plan of another network) the session's: the old plan and
 * everything the screens derived from it go, the history starts again. */
void app_adopt_plan(app *a, plan *p);

/* Handles one key (or KEY_RESIZE, KEY_MOUSE) and returns what must happen
 * next; app_perform then does it (applies the pending what-if). */
action app_key(app *a, int key);
void app_perform(app *a, action act);

/* Background work (scaling rows, why-not entries): does one slice of at
 * most about budget_s seconds. Returns 1 while work remains. */
int app_idle(app *a, double budget_s);
/* Starts the background builds of what the next what-if keys would ask
 * for: GPU count, batch, and on the cluster screen the selected field's
 * Left/Right (plan_prefetch_list). */
void app_prefetch_next(app *a);
int app_busy(const app *a);
/* True when the only work left is a worker's: poll rather than spin. */
int app_waiting(const app *a);

/* Draws one whole frame into w: tab bar, context line, the screen, status
 * line and hints; or the "terminal too small" message. */
void app_draw(app *a, WINDOW *w);

void app_set_status(app *a, int error, const char *fmt, ...) LW_PRINTF(3, 4);
/* Starts a what-if: records the optimum before it, so the change can be
 * reported, and empties a->pending.change. what: "16→8 GPUs". */
void app_whatif_begin(app *a, const char *what);
/* The pending change's run settings, to edit (a copy of the plan's at the
 * first call after app_whatif_begin). */
plan_settings *app_change_settings(app *a);
/* The pending change's cluster, to edit (a clone of the plan's at the
 * first call after app_whatif_begin). */
cluster *app_change_cluster(app *a);
void app_open_screen(app *a, screen_id s);
/* Closes an overlay (help, why-not): back to the screen under it. */
void app_close_overlay(app *a);
/* The screen shown, or the one under an overlay. */
screen_id app_base_screen(const app *a);
void app_invalidate(app *a);   /* drop everything derived from the optimum */
/* The run settings or the cluster are changing: the screens drop what
 * depends on them (the scaling rows). */
void app_invalidate_settings(app *a);
/* Row order for the current sort (fills a->order). */
void app_sort_rows(app *a);
/* Baseline configs and evaluation for a->base.kind (cached). */
void app_baseline_ensure(app *a);
/* Default export file name for the current screen. */
void app_export_default(const app *a, int json, char *buf, size_t n);
/* Writes the current view (or JSON when path ends in .json). 0 on success. */
int app_export(app *a, const char *path);
/* Stops an explanation being worked out on its thread, which reads the
 * plan (screen_explain.c): called before the plan changes. */
void app_explain_stop(app *a);
/* Pins layer li to config k (k < 0 clears) and asks for a research. */
action app_pin(app *a, int li, int k);

/* Pins set but on hold: their config is not one of this setting's. */
int app_pins_held(const app *a);
/* The optimum's fullest GPU does not fit the memory limit (or, with none,
 * the GPU's memory): 1 and *need its bytes; else 0. */
int app_memory_over(const app *a, double *need);
/* "optimum found: ..." with a warning when it does not fit memory: the
 * status a fresh session opens with. */
void app_status_opened(app *a);

/* Settings changes the keys and the cluster screen share. */
action app_set_gpus(app *a, int gpus);
action app_set_batch(app *a, long per_gpu);
/* What-if: the pipeline (stages, micro-batches, schedule; stages 1: none),
 * the | key's prompt. */
action app_set_pipeline(app *a, const plan_pipe_settings *q);
/* The pipeline as the context line and the prompt write it: "2 stages x 4
 * (1f1b)" (n columns); "" when the plan is not pipelined. */
void app_pipeline_text(const app *a, char *buf, size_t n);
/* s: the next sync scheme (ps, ring, zero1, zero2, zero3, hsdp, ps...);
 * app_set_sync: a given one. */
action app_toggle_sync(app *a);
action app_set_sync(app *a, sync_scheme to);
/* The search with or without folds (plan_settings.no_fold: the paper's
 * Algorithm 1 alone); the GPU and batch what-ifs keep the choice. */
action app_toggle_folds(app *a);
/* What-if: the memory limit per GPU, cycling the GPU's memory, none (the
 * paper's search), 3/4 and 1/2 of the GPU's memory. */
action app_cycle_memory_limit(app *a);
/* What-if: the next precision the cluster's GPU has figures for (fp32,
 * tf32, fp16, bf16, round); the cost model is rebuilt. */
action app_cycle_precision(app *a);
/* ---- the strategy shown (shown.h; app.c hands shown.c the session) ------ */

/* The strategy the table, the timeline and the exports show: the plan's
 * optimum, or the refined one after F (until F again or a what-if). */
const int *app_shown_configs(const app *a);
const strategy_eval *app_shown_eval(const app *a);
int app_shown_refined(const app *a);
const char *app_shown_label(const app *a);  /* "optimum (Eq. 1)" or "refined (simulated)" */
/* The shown strategy's simulated step: ms, or NaN until the idle time
 * after the change has simulated it (shown_sim_step_ms). */
double app_sim_step_ms(const app *a);
/* The whole simulation of the shown strategy, run now if need be; NULL
 * when there is no strategy. Valid until the next change. */
const sim_result *app_sim(app *a);
/* F: starts refining the optimum under the simulator, or toggles between
 * the refined strategy and the optimum once there is one. */
action app_refine_key(app *a);
int app_refining(const app *a);
void app_refine_cancel(app *a);   /* Esc: stops it, keeping the optimum */
/* A what-if was reported; the plan changed; background work. */
void app_shown_whatif(app *a, double sim_before_ms);
void app_shown_plan_changed(app *a);
int app_shown_busy(const app *a);
int app_shown_idle(app *a, double budget_s);
void app_shown_free(app *a);
/* The shown strategy changed (not the plan): the screens drop what they derived from it. */
void app_invalidate_view(app *a);

/* Undo (dir -1) or redo (1): the what-if back to the neighbouring state
 * (history.h), named "undo 3/5: batch 32→64 per GPU", for app_perform. */
action app_undo(app *a, int dir);
action app_clear_pins(app *a);
/* Next GPU count up (dir 1) or down (-1): powers of two, capped at the
 * cluster's GPUs. */
int app_gpu_step(const app *a, int dir);
long app_batch_per_gpu(const app *a);

/* Class of a config by its split dimensions (palette.h's split_class),
 * for colours and the legend: the exports use the same. */
int config_class(const config *c);

/* ---- screens ---------------------------------------------------------- */

extern const screen_ops screen_table_ops, screen_graph_ops, screen_steps_ops, screen_scale_ops,
    screen_cluster_ops, screen_whynot_ops, screen_explain_ops, screen_compare_ops, screen_help_ops,
    screen_timeline_ops, screen_open_ops, screen_lecture_ops;

#endif
