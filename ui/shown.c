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
 * (shown_free). It knows nothing of the session beyond what a shown_host
 * hands it: app.c's app_shown_* calls are its front.
 */
#include "shown.h"

#include "draw.h"
#include "refine.h"
#include "sim.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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
    unsigned status_gen;       /* the status it waits to extend (shown_host.status_gen) */
    int status_pending;
    double sim_before_ms;      /* the simulated step before the what-if; NaN: not known */
};

static struct app_shown *get(shown_host *h)
{
    if (!*h->shown) {
        *h->shown = lw_calloc(1, sizeof **h->shown);
        (*h->shown)->sim_before_ms = NAN;
    }
    return *h->shown;
}

/* The session's status line says fmt (as app_set_status). */
static void say(shown_host *h, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->status, h->status_size, fmt, ap);
    va_end(ap);
    *h->status_error = error;
    (*h->status_gen)++;
}

static int showing_refined(const struct app_shown *s) { return s && s->show && s->rr.configs; }

const int *shown_configs(const struct app_shown *s, const plan *p) { return showing_refined(s) ? s->rr.configs : plan_best(p); }

const strategy_eval *shown_eval(const struct app_shown *s, const plan *p)
{
    return showing_refined(s) ? &s->refined_eval : plan_best_eval(p);
}

int shown_refined(const struct app_shown *s) { return showing_refined(s); }

const char *shown_label(const struct app_shown *s) { return showing_refined(s) ? "refined (simulated)" : "optimum (Eq. 1)"; }

/* ---- the simulated step ------------------------------------------------ */

static void drop_sim(struct app_shown *s)
{
    sim_free(s->sim);
    s->sim = NULL;
    s->sim_too_big = 0;
}

double shown_sim_step_ms(const struct app_shown *s) { return s && s->sim ? s->sim->step_ms : NAN; }

static void simulate(shown_host *h, long max_tasks)
{
    struct app_shown *s = get(h);
    if (s->sim || !plan_search_result(h->p) || !plan_has_model(h->p)) return;
    sim_options o = {.overlap = SIM_OVERLAP_FULL, .max_tasks = max_tasks};
    s->sim = plan_simulate(h->p, shown_configs(s, h->p), &o);
    s->sim_too_big = !s->sim;
}

const sim_result *shown_sim(shown_host *h)
{
    simulate(h, 0);
    return (*h->shown)->sim;
}

/* ---- F ----------------------------------------------------------------- */

int shown_refining(const struct app_shown *s) { return s && s->rs; }

static void drop_result(struct app_shown *s)
{
    refine_result_free(&s->rr);
    strategy_eval_free(&s->refined_eval);
    s->show = 0;
}

void shown_refine_cancel(shown_host *h)
{
    struct app_shown *s = get(h);
    if (!s->rs) return;
    const refine_result *r = refine_progress(s->rs);
    say(h, 0, "refine stopped after %ld strategies: the Eq. 1 optimum stays shown", r->evaluations);
    refine_end(s->rs, NULL);
    s->rs = NULL;
}

/* Shows the refined strategy (1) or the optimum (0): the screens drop what
 * they derived from the other (h->view_changed); the table marks the
 * layers the refinement changed. */
static void set_show(shown_host *h, int show)
{
    struct app_shown *s = get(h);
    s->show = show;
    drop_sim(s);
    s->status_pending = 0;
    int n = plan_net(h->p)->n_layers;
    for (int i = 0; i < n; i++) h->changed[i] = show && s->rr.configs[i] != plan_best(h->p)[i];
    h->view_changed = 1;
}

void shown_refine_key(shown_host *h)
{
    struct app_shown *s = get(h);
    if (!plan_search_result(h->p) || !plan_has_model(h->p)) {
        say(h, 1, "refine: there is no optimum to start from");
        return;
    }
    if (s->rs) {
        say(h, 0, "refining under the simulator%s Esc stops it", G->ellipsis);
        return;
    }
    if (s->rr.configs) {
        set_show(h, !s->show);
        if (s->show)
            say(h, 0, "showing the strategy refined under the simulator: %.2f ms simulated, %.2f ms Eq. 1 "
                                 "(F: the Eq. 1 optimum)",
                           s->rr.best_ms, s->refined_eval.total_ms);
        else
            say(h, 0, "showing the Eq. 1 optimum: %.2f ms Eq. 1, %.2f ms simulated (F: the refined strategy)",
                plan_best_eval(h->p)->total_ms, s->rr.start_ms);
        return;
    }
    refine_bounds rb = plan_refine_bounds(h->p); /* the search's pins and memory limit hold */
    s->rs = plan_refine_begin(h->p, plan_best(h->p), &rb, 1);
    s->t0 = lw_now();
    say(h, 0, "refining the optimum under the simulator (up to %.0f s)%s Esc stops it", APP_REFINE_SECONDS, G->ellipsis);
}

/* The search is over (a local optimum or the time is up): keep its result. */
static void refine_done(shown_host *h)
{
    struct app_shown *s = get(h);
    refine_end(s->rs, &s->rr);
    s->rs = NULL;
    const refine_result *r = &s->rr;
    const char *why = r->local_optimum ? "a local optimum" : "time limit";
    if (r->n_changed == 0) {
        say(h, 0, "refine: no single-layer change shortens the simulated step (%.2f ms; %ld strategies, "
                             "%s): the Eq. 1 optimum stays",
                       r->start_ms, r->evaluations, why);
        refine_result_free(&s->rr);
        return;
    }
    plan_evaluate(h->p, r->configs, &s->refined_eval);
    set_show(h, 1);
    /* the status names the layers changed, as many as fit */
    char names[200] = "";
    size_t k = 0;
    int listed = 0;
    for (int i = 0; i < plan_net(h->p)->n_layers; i++) {
        if (r->configs[i] == plan_best(h->p)[i]) continue;
        const char *nm = plan_net(h->p)->layers[i].name;
        if (k + strlen(nm) + 8 >= sizeof names) break;
        k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", listed ? " " : "", nm);
        listed++;
    }
    say(h, 0, "refined (simulated): %.2f %s %.2f ms (%+.2f%%), Eq. 1 %.2f %s %.2f ms; %d layer%s changed "
                         "(*): %s%s; %s, %ld strategies; F: the Eq. 1 optimum",
                   r->start_ms, G->arrow_right, r->best_ms, r->start_ms > 0 ? 100 * (r->best_ms - r->start_ms) / r->start_ms : 0,
                   plan_best_eval(h->p)->total_ms, G->arrow_right, s->refined_eval.total_ms, r->n_changed,
                   r->n_changed == 1 ? "" : "s", names, listed < r->n_changed ? G->ellipsis : "", why, r->evaluations);
}

/* ---- background work and changes ----------------------------------------- */

void shown_whatif(shown_host *h, double sim_before_ms)
{
    struct app_shown *s = get(h);
    s->sim_before_ms = sim_before_ms;
    s->status_pending = 1;
    s->status_gen = *h->status_gen;
}

void shown_plan_changed(struct app_shown *s)
{
    if (!s) return;
    if (s->rs) {
        refine_end(s->rs, NULL);
        s->rs = NULL;
    }
    drop_result(s);
    drop_sim(s);
}

int shown_busy(const struct app_shown *s, const plan *p)
{
    if (!plan_search_result(p) || !plan_has_model(p)) return 0;
    return !s || s->rs || (!s->sim && !s->sim_too_big);
}

int shown_idle(shown_host *h, double budget_s)
{
    struct app_shown *s = get(h);
    if (!plan_search_result(h->p) || !plan_has_model(h->p)) return 0;
    if (!s->sim && !s->sim_too_big) {
        simulate(h, SIM_SUMMARY_MAX_TASKS);
        /* the what-if's status, still shown, gains the simulated step */
        if (s->status_pending && *h->status_gen == s->status_gen && s->sim && !*h->status_error) {
            char tail[128];
            if (isfinite(s->sim_before_ms))
                snprintf(tail, sizeof tail, "; simulated %.1f %s %.1f ms", s->sim_before_ms, G->arrow_right,
                         s->sim->step_ms);
            else
                snprintf(tail, sizeof tail, "; simulated %.1f ms", s->sim->step_ms);
            size_t n = strlen(h->status);
            snprintf(h->status + n, h->status_size - n, "%s", tail);
        }
        s->status_pending = 0;
        return shown_busy(s, h->p);
    }
    if (s->rs) {
        int more = refine_step(s->rs, budget_s);
        double spent = lw_now() - s->t0;
        if (!more || spent >= APP_REFINE_SECONDS) {
            refine_done(h);
        } else {
            const refine_result *r = refine_progress(s->rs);
            say(h, 0, "refining (simulated): %.2f %s %.2f ms, pass %d, %ld strategies, %.0f/%.0f s%s Esc stops",
                r->start_ms, G->arrow_right, r->best_ms, r->passes, r->evaluations, spent, APP_REFINE_SECONDS,
                G->ellipsis);
        }
    }
    return shown_busy(s, h->p);
}

void shown_free(struct app_shown **s)
{
    if (!*s) return;
    shown_plan_changed(*s);
    free(*s);
    *s = NULL;
}
