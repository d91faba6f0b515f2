/*
 * shown: the strategy the screens show and its simulated step.
 *
 * The plan's optimum is exact for Eq. 1; F refines it under the step
 * simulator (src/refine.h), a slice per idle turn so keys stay live, Esc
 * stops it, and when it ends the refined strategy is what the table, the
 * timeline and the exports show (labelled "refined (simulated)") until F
 * goes back to the optimum or a what-if makes a new one. The simulated step
 * of whatever is shown is computed here too, once per change, in the idle
 * time after the frame that needs it, so the table footer, the context line
 * and the status after a what-if can set it beside Eq. 1's.
 *
 * All of it lives behind a->shown, made on first use and freed by app_free
 * (app_shown_free).
 */
#include "shown.h"

#include "app.h"

#include "draw.h"
#include "refine.h"
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct app_shown {
    /* F: the search and its result, for the plan's current optimum */
    refine_search *rs;         /* running; NULL: not */
    double t0;
    refine_result rr;          /* the result (rr.configs NULL: none) */
    strategy_eval refined_eval;
    int show;                  /* 1: the refined strategy is shown */
    /* the simulation of what is shown */
    sim_result *sim;           /* NULL: not yet */
    int sim_too_big;           /* over SIM_SUMMARY_MAX_TASKS: left to the Timeline, which runs it anyway */
    /* a what-if's status line waits for the new simulated step */
    unsigned status_gen;       /* the status it waits to extend (a->status_gen) */
    int status_pending;
    double sim_before_ms;      /* the simulated step before the what-if; NaN: not known */
};

static struct app_shown *get(app *a)
{
    if (!a->shown) {
        a->shown = lw_calloc(1, sizeof *a->shown);
        a->shown->sim_before_ms = NAN;
    }
    return a->shown;
}

static int showing_refined(const app *a) { return a->shown && a->shown->show && a->shown->rr.configs; }

const int *app_shown_configs(const app *a) { return showing_refined(a) ? a->shown->rr.configs : a->p->best; }

const strategy_eval *app_shown_eval(const app *a)
{
    return showing_refined(a) ? &a->shown->refined_eval : &a->p->best_eval;
}

int app_shown_refined(const app *a) { return showing_refined(a); }

const char *app_shown_label(const app *a) { return showing_refined(a) ? "refined (simulated)" : "optimum (Eq. 1)"; }

/* ---- the simulated step ------------------------------------------------ */

static void drop_sim(struct app_shown *s)
{
    sim_free(s->sim);
    s->sim = NULL;
    s->sim_too_big = 0;
}

double app_sim_step_ms(const app *a) { return a->shown && a->shown->sim ? a->shown->sim->step_ms : NAN; }

static void simulate(app *a, long max_tasks)
{
    struct app_shown *s = get(a);
    if (s->sim || !a->p->sr || !plan_has_model(a->p)) return;
    sim_options o = {.overlap = SIM_OVERLAP_FULL, .max_tasks = max_tasks};
    s->sim = plan_simulate(a->p, app_shown_configs(a), &o);
    s->sim_too_big = !s->sim;
}

const sim_result *app_sim(app *a)
{
    simulate(a, 0);
    return a->shown->sim;
}

/* ---- F ----------------------------------------------------------------- */

int app_refining(const app *a) { return a->shown && a->shown->rs; }

static void drop_result(app *a)
{
    struct app_shown *s = get(a);
    refine_result_free(&s->rr);
    strategy_eval_free(&s->refined_eval);
    s->show = 0;
}

void app_refine_cancel(app *a)
{
    struct app_shown *s = get(a);
    if (!s->rs) return;
    const refine_result *r = refine_progress(s->rs);
    app_set_status(a, 0, "refine stopped after %ld strategies: the Eq. 1 optimum stays shown", r->evaluations);
    refine_end(s->rs, NULL);
    s->rs = NULL;
}

/* Shows the refined strategy (1) or the optimum (0): the screens drop what
 * they derived from the other; the table marks the layers the refinement
 * changed. */
static void set_show(app *a, int show)
{
    struct app_shown *s = get(a);
    s->show = show;
    drop_sim(s);
    s->status_pending = 0;
    int n = a->p->net->n_layers;
    for (int i = 0; i < n; i++) a->prev.changed[i] = show && s->rr.configs[i] != a->p->best[i];
    app_invalidate_view(a);
}

action app_refine_key(app *a)
{
    struct app_shown *s = get(a);
    if (!a->p->sr || !plan_has_model(a->p)) {
        app_set_status(a, 1, "refine: there is no optimum to start from");
        return ACT_REDRAW;
    }
    if (s->rs) {
        app_set_status(a, 0, "refining under the simulator%s Esc stops it", G->ellipsis);
        return ACT_REDRAW;
    }
    if (s->rr.configs) {
        set_show(a, !s->show);
        if (s->show)
            app_set_status(a, 0, "showing the strategy refined under the simulator: %.2f ms simulated, %.2f ms Eq. 1 "
                                 "(F: the Eq. 1 optimum)",
                           s->rr.best_ms, s->refined_eval.total_ms);
        else
            app_set_status(a, 0, "showing the Eq. 1 optimum: %.2f ms Eq. 1, %.2f ms simulated (F: the refined strategy)",
                           a->p->best_eval.total_ms, s->rr.start_ms);
        return ACT_REDRAW;
    }
    refine_bounds rb = plan_refine_bounds(a->p); /* the search's pins and memory limit hold */
    s->rs = plan_refine_begin(a->p, a->p->best, &rb, 1);
    s->t0 = lw_now();
    app_set_status(a, 0, "refining the optimum under the simulator (up to %.0f s)%s Esc stops it", APP_REFINE_SECONDS,
                   G->ellipsis);
    return ACT_REDRAW;
}

/* The search is over (a local optimum or the time is up): keep its result. */
static void refine_done(app *a)
{
    struct app_shown *s = get(a);
    refine_end(s->rs, &s->rr);
    s->rs = NULL;
    const refine_result *r = &s->rr;
    const char *why = r->local_optimum ? "a local optimum" : "time limit";
    if (r->n_changed == 0) {
        app_set_status(a, 0, "refine: no single-layer change shortens the simulated step (%.2f ms; %ld strategies, "
                             "%s): the Eq. 1 optimum stays",
                       r->start_ms, r->evaluations, why);
        refine_result_free(&s->rr);
        return;
    }
    plan_evaluate(a->p, r->configs, &s->refined_eval);
    set_show(a, 1);
    /* the status names the layers changed, as many as fit */
    char names[200] = "";
    size_t k = 0;
    int listed = 0;
    for (int i = 0; i < a->p->net->n_layers; i++) {
        if (r->configs[i] == a->p->best[i]) continue;
        const char *nm = a->p->net->layers[i].name;
        if (k + strlen(nm) + 8 >= sizeof names) break;
        k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", listed ? " " : "", nm);
        listed++;
    }
    app_set_status(a, 0, "refined (simulated): %.2f %s %.2f ms (%+.2f%%), Eq. 1 %.2f %s %.2f ms; %d layer%s changed "
                         "(*): %s%s; %s, %ld strategies; F: the Eq. 1 optimum",
                   r->start_ms, G->arrow_right, r->best_ms, r->start_ms > 0 ? 100 * (r->best_ms - r->start_ms) / r->start_ms : 0,
                   a->p->best_eval.total_ms, G->arrow_right, s->refined_eval.total_ms, r->n_changed,
                   r->n_changed == 1 ? "" : "s", names, listed < r->n_changed ? G->ellipsis : "", why, r->evaluations);
}

/* ---- background work and changes ----------------------------------------- */

void app_shown_whatif(app *a, double sim_before_ms)
{
    struct app_shown *s = get(a);
    s->sim_before_ms = sim_before_ms;
    s->status_pending = 1;
    s->status_gen = a->status_gen;
}

void app_shown_plan_changed(app *a)
{
    struct app_shown *s = get(a);
    if (s->rs) {
        refine_end(s->rs, NULL);
        s->rs = NULL;
    }
    drop_result(a);
    drop_sim(s);
}

int app_shown_busy(const app *a)
{
    const struct app_shown *s = a->shown;
    if (!a->p->sr || !plan_has_model(a->p)) return 0;
    return !s || s->rs || (!s->sim && !s->sim_too_big);
}

int app_shown_idle(app *a, double budget_s)
{
    struct app_shown *s = get(a);
    if (!a->p->sr || !plan_has_model(a->p)) return 0;
    if (!s->sim && !s->sim_too_big) {
        simulate(a, SIM_SUMMARY_MAX_TASKS);
        /* the what-if's status, still shown, gains the simulated step */
        if (s->status_pending && a->status_gen == s->status_gen && s->sim && !a->status_error) {
            char tail[128];
            if (isfinite(s->sim_before_ms))
                snprintf(tail, sizeof tail, "; simulated %.1f %s %.1f ms", s->sim_before_ms, G->arrow_right,
                         s->sim->step_ms);
            else
                snprintf(tail, sizeof tail, "; simulated %.1f ms", s->sim->step_ms);
            size_t n = strlen(a->status);
            snprintf(a->status + n, sizeof a->status - n, "%s", tail);
        }
        s->status_pending = 0;
        return app_shown_busy(a);
    }
    if (s->rs) {
        int more = refine_step(s->rs, budget_s);
        double spent = lw_now() - s->t0;
        if (!more || spent >= APP_REFINE_SECONDS) {
            refine_done(a);
        } else {
            const refine_result *r = refine_progress(s->rs);
            app_set_status(a, 0, "refining (simulated): %.2f %s %.2f ms, pass %d, %ld strategies, %.0f/%.0f s%s Esc stops",
                           r->start_ms, G->arrow_right, r->best_ms, r->passes, r->evaluations, spent, APP_REFINE_SECONDS,
                           G->ellipsis);
        }
    }
    return app_shown_busy(a);
}

void app_shown_free(app *a)
{
    if (!a->shown) return;
    app_shown_plan_changed(a);
    free(a->shown);
    a->shown = NULL;
}
