/*
 * history: undo (z) and redo (Z) of what-ifs. Each what-if that changed the
 * plan leaves the plan's state after it (plan_state: run settings, cluster,
 * memory settings, pins; a value, not the model or the optimum) and what it
 * was ("batch 32→64 per GPU"). Undo and redo are what-ifs themselves: the
 * change that puts the plan into the neighbouring state, applied through
 * plan_apply like any other, so the numbers that come back are the ones
 * the state had. A state's pins include those on hold (a pin whose config
 * the GPU count lacks: the plan keeps it), so that an undo to it holds
 * them again. A new what-if after an undo drops what could be
 * redone.
 */
#include "history.h"

#include "app.h"

#include <stdlib.h>
#include <string.h>

/* The oldest states go beyond this many. */
#define HISTORY_MAX 200

struct history_entry {
    char what[160];   /* the what-if that led here ("" for the first state) */
    plan_state st;
    /* what the cluster screen's R resets to in this state (a cluster
     * file opened with O changes it; an undo past the open gives it back) */
    cluster *reset_to;
    char *reset_name;
};

static void entry_free(struct history_entry *e)
{
    plan_state_free(&e->st);
    cluster_free(e->reset_to);
    free(e->reset_name);
}

void history_free(app *a)
{
    for (int i = 0; i < a->hist.n; i++) entry_free(&a->hist.entries[i]);
    free(a->hist.entries);
    a->hist.entries = NULL;
    a->hist.n = a->hist.pos = a->hist.cap = a->hist.move = 0;
}

static void push(app *a, const char *what)
{
    if (a->hist.n == HISTORY_MAX) {
        entry_free(&a->hist.entries[0]);
        memmove(a->hist.entries, a->hist.entries + 1, sizeof a->hist.entries[0] * (size_t)(a->hist.n - 1));
        a->hist.n--;
    }
    if (a->hist.n == a->hist.cap) {
        a->hist.cap = a->hist.cap ? 2 * a->hist.cap : 16;
        a->hist.entries = lw_realloc(a->hist.entries, sizeof a->hist.entries[0] * (size_t)a->hist.cap);
    }
    struct history_entry *e = &a->hist.entries[a->hist.n++];
    snprintf(e->what, sizeof e->what, "%s", what);
    e->st = plan_state_get(a->p);
    e->reset_to = a->src.cluster_loaded ? cluster_clone(a->src.cluster_loaded) : NULL;
    e->reset_name = a->src.cluster_name ? lw_strdup(a->src.cluster_name) : NULL;
    a->hist.pos = a->hist.n - 1;
}

/* The reset target of the state undo or redo moved to. */
static void reset_target_of(app *a, const struct history_entry *e)
{
    cluster_free(a->src.cluster_loaded);
    a->src.cluster_loaded = e->reset_to ? cluster_clone(e->reset_to) : NULL;
    free(a->src.cluster_name);
    a->src.cluster_name = e->reset_name ? lw_strdup(e->reset_name) : NULL;
}

void history_reset(app *a)
{
    history_free(a);
    push(a, "");
}

void history_record(app *a)
{
    if (!a->hist.n) push(a, "");
    int move = a->hist.move;
    a->hist.move = 0;
    if (move) {
        a->hist.pos += move;
        reset_target_of(a, &a->hist.entries[a->hist.pos]);
        return;
    }
    if (plan_state_is(a->p, &a->hist.entries[a->hist.pos].st)) return; /* nothing changed */
    while (a->hist.n > a->hist.pos + 1) entry_free(&a->hist.entries[--a->hist.n]); /* no redo past a new what-if */
    push(a, a->pending.what);
}

action app_undo(app *a, int dir)
{
    int to = a->hist.pos + dir;
    if (to < 0 || to >= a->hist.n) {
        app_set_status(a, 0, "nothing to %s (%d what-if%s in the history)", dir < 0 ? "undo" : "redo",
                       a->hist.n > 0 ? a->hist.n - 1 : 0, a->hist.n == 2 ? "" : "s");
        return ACT_REDRAW;
    }
    /* undo takes back the what-if that led to this state; redo does the next one again */
    int k = dir < 0 ? a->hist.pos : to;
    char what[200];
    snprintf(what, sizeof what, "%s %d/%d: %s", dir < 0 ? "undo" : "redo", k, a->hist.n - 1, a->hist.entries[k].what);
    app_whatif_begin(a, what);
    a->pending.change = plan_state_change(a->p, &a->hist.entries[to].st);
    a->hist.move = dir;
    if (a->pending.change.set || a->pending.change.cl) {
        app_invalidate_settings(a);
        return ACT_REBUILD;
    }
    if (a->pending.change.sync_set) {
        app_invalidate_settings(a);
        return ACT_RESYNC;
    }
    return ACT_RESEARCH;
}
