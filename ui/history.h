/*
 * history: undo and redo of what-ifs, as states of the plan (plan_state).
 * A history owns its entries (history_free); it reads the plan it is given
 * and changes nothing but itself: app.c applies the change it hands out.
 */
#ifndef LW_HISTORY_H
#define LW_HISTORY_H

#include "plan.h"

/* What-if history: n states, the plan in entries[pos]. */
typedef struct app_history {
    struct history_entry *entries;
    int n, pos, cap;
    int move;                  /* the pending what-if is an undo (-1) or a redo (1); 0: a new one */
} app_history;

/* Forgets the history; plan p's state now is its first, with what the
 * cluster screen's R resets to in it (reset_to, reset_name: copied, may
 * be NULL). */
void history_reset(app_history *h, const plan *p, const cluster *reset_to, const char *reset_name);
void history_free(app_history *h);
/* After a what-if went through: the new state of p, which `what` led to
 * (or, for an undo or redo, the new position). Returns 1 when it was an
 * undo or redo: the state's reset target (history_reset_target) is the
 * session's again. */
int history_record(app_history *h, const plan *p, const char *what, const cluster *reset_to, const char *reset_name);
/* The reset target of the current state (both may be NULL). */
void history_reset_target(const app_history *h, const cluster **reset_to, const char **reset_name);
/* Undo (dir -1) or redo (1) of plan p: the change that puts it into the
 * neighbouring state (pointing into the history: valid until the next
 * history call) and its name ("undo 3/5: batch 32→64 per GPU") into what;
 * h->move is set. 0, or -1 when there is nothing to undo or redo (what
 * says so). */
int history_step(app_history *h, const plan *p, int dir, plan_change *c, char *what, size_t n);

#endif
