/*
 * shown: the strategy the screens show (the plan's optimum, or its
 * refinement under the simulator after F) and its simulated step. The
 * session reaches it through app.h's app_shown_* (app.c), which hand it a
 * shown_host: it calls nothing of the session's.
 */
#ifndef LW_SHOWN_H
#define LW_SHOWN_H

#include "plan.h"
#include "sim.h"

#define APP_REFINE_SECONDS 10.0   /* F's time budget */

/* What shown reads and writes of the session (app.c fills one per call):
 * it owns *shown (made on first use, freed by shown_free). */
typedef struct shown_host {
    struct app_shown **shown;
    const plan *p;
    char *status;              /* the status line, status_size bytes: what F did, the simulated step */
    size_t status_size;
    int *status_error;
    unsigned *status_gen;      /* counts the status line's changes (app_set_status) */
    unsigned char *changed;    /* [n_layers] the table's "changed" marks: the layers the refinement changed */
    int view_changed;          /* out: the strategy shown changed (the screens drop what they derived) */
} shown_host;

/* The strategy the table, the timeline and the exports show: the plan's
 * optimum, or the refined one after F (until F again or a what-if).
 * s may be NULL (none made yet: the optimum). */
const int *shown_configs(const struct app_shown *s, const plan *p);
const strategy_eval *shown_eval(const struct app_shown *s, const plan *p);
int shown_refined(const struct app_shown *s);
const char *shown_label(const struct app_shown *s);  /* "optimum (Eq. 1)" or "refined (simulated)" */
/* The shown strategy's simulated step: ms, or NaN until the idle time
 * after the change has simulated it (or when its step has over
 * SIM_SUMMARY_MAX_TASKS tasks: the Timeline still simulates it). */
double shown_sim_step_ms(const struct app_shown *s);
/* The whole simulation of the shown strategy, run now if need be; NULL
 * when there is no strategy. Valid until the next change. */
const sim_result *shown_sim(shown_host *h);
/* F: starts refining the optimum under the simulator (APP_REFINE_SECONDS,
 * in idle slices), or toggles between the refined strategy and the optimum
 * once there is one. */
void shown_refine_key(shown_host *h);
int shown_refining(const struct app_shown *s);
void shown_refine_cancel(shown_host *h);   /* Esc: stops it, keeping the optimum */
/* A what-if was reported (its status extends with the new simulated step
 * once known); the plan changed (the refinement and the simulation are
 * dropped); background work. */
void shown_whatif(shown_host *h, double sim_before_ms);
void shown_plan_changed(struct app_shown *s);
int shown_busy(const struct app_shown *s, const plan *p);
int shown_idle(shown_host *h, double budget_s);
void shown_free(struct app_shown **s);

#endif
