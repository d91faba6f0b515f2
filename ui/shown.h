/*
 * shown: the strategy the screens show (the plan's optimum, or its
 * refinement under the simulator after F) and its simulated step.
 */
#ifndef LW_SHOWN_H
#define LW_SHOWN_H

#include "app.h"

#define APP_REFINE_SECONDS 10.0   /* F's time budget */

/* The strategy the table, the timeline and the exports show: the plan's
 * optimum, or the refined one after F (until F again or a what-if). */
const int *app_shown_configs(const app *a);
const strategy_eval *app_shown_eval(const app *a);
int app_shown_refined(const app *a);
const char *app_shown_label(const app *a);  /* "optimum (Eq. 1)" or "refined (simulated)" */
/* The shown strategy's simulated step: ms, or NaN until the idle time
 * after the change has simulated it (or when its step has over
 * SIM_SUMMARY_MAX_TASKS tasks: the Timeline still simulates it). */
double app_sim_step_ms(const app *a);
/* The whole simulation of the shown strategy, run now if need be; NULL
 * when there is no strategy. Valid until the next change. */
const sim_result *app_sim(app *a);
/* F: starts refining the optimum under the simulator (APP_REFINE_SECONDS,
 * in idle slices), or toggles between the refined strategy and the optimum
 * once there is one. */
action app_refine_key(app *a);
int app_refining(const app *a);
void app_refine_cancel(app *a);   /* Esc: stops it, keeping the optimum */
/* For app.c: a what-if was reported (its status extends with the new
 * simulated step once known); the plan changed (the refinement and the
 * simulation are dropped); background work. */
void app_shown_whatif(app *a, double sim_before_ms);
void app_shown_plan_changed(app *a);
int app_shown_busy(const app *a);
int app_shown_idle(app *a, double budget_s);
void app_shown_free(app *a);
/* The shown strategy changed (not the plan): the screens drop what they derived from it. */
void app_invalidate_view(app *a);

#endif
