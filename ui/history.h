/*
 * history: undo and redo of what-ifs, as states of the plan (plan_state).
 */
#ifndef LW_HISTORY_H
#define LW_HISTORY_H

#include "app.h"

/* Forgets the history; the plan's state now is its first. */
void history_reset(app *a);
void history_free(app *a);
/* After a what-if went through: the new state (or, for an undo or redo,
 * the new position). */
void history_record(app *a);
/* Undo (dir -1) or redo (1): the what-if back to the neighbouring state,
 * named "undo 3/5: batch 32→64 per GPU", for app_perform. */
action app_undo(app *a, int dir);

#endif
