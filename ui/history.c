/*
 * history: undo (z) and redo (Z) of what-ifs. Each what-if that changed the
 * plan leaves the plan's state after it (plan_state: run settings, cluster,
 * memory settings, pins; a value, not the model or the optimum) and what it
 * was ("batch 32→64 per GPU"). Undo and redo are what-ifs themselves: the
 * change that puts the plan into the neighbouring state, applied through
 * plan_apply like any other, so the numbers that come back are the ones
 * the state had. A state also keeps the pins the person wished for, held
 * ones included (a pin whose config the GPU count lacks), so that an undo
 * to it holds them again. A new what-if after an undo drops what could be
 * redone.
 */
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
    config *pin_wish;        /* [n_layers] the app's wished pins in this state */
    unsigned char *wished;
};

static void entry_free(struct history_entry *e)
{
    plan_state_free(&e->st);
    cluster_free(e->reset_to);
    free(e->reset_name);
    free(e->pin_wish);
    free(e->wished);
}

void history_free(app *a)
{
    for (int i = 0; i < a->hist_n; i++) entry_free(&a->hist[i]);
    free(a->hist);
    a->hist = NULL;
    a->hist_n = a->hist_pos = a->hist_cap = a->hist_move = 0;
}

static void push(app *a, const char *what)
{
    if (a->hist_n == HISTORY_MAX) {
        entry_free(&a->hist[0]);
        memmove(a->hist, a->hist + 1, sizeof a->hist[0] * (size_t)(a->hist_n - 1));
        a->hist_n--;
    }
    if (a->hist_n == a->hist_cap) {
        a->hist_cap = a->hist_cap ? 2 * a->hist_cap : 16;
        a->hist = lw_realloc(a->hist, sizeof a->hist[0] * (size_t)a->hist_cap);
    }
    struct history_entry *e = &a->hist[a->hist_n++];
    snprintf(e->what, sizeof e->what, "%s", what);
    e->st = plan_state_get(a->p);
    e->reset_to = a->cluster_loaded ? cluster_clone(a->cluster_loaded) : NULL;
    e->reset_name = a->cluster_name ? lw_strdup(a->cluster_name) : NULL;
    size_t L = (size_t)a->p->net->n_layers;
    e->pin_wish = lw_malloc(sizeof(config) * (L ? L : 1));
    e->wished = lw_malloc(L ? L : 1);
    memcpy(e->pin_wish, a->pin_wish, sizeof(config) * L);
    memcpy(e->wished, a->wished, L);
    a->hist_pos = a->hist_n - 1;
}

void history_wishes(app *a)
{
    int to = a->hist_pos + a->hist_move;
    if (!a->hist_move || to < 0 || to >= a->hist_n) return;
    size_t L = (size_t)a->p->net->n_layers;
    memcpy(a->pin_wish, a->hist[to].pin_wish, sizeof(config) * L);
    memcpy(a->wished, a->hist[to].wished, L);
}

/* The reset target of the state undo or redo moved to. */
static void reset_target_of(app *a, const struct history_entry *e)
{
    cluster_free(a->cluster_loaded);
    a->cluster_loaded = e->reset_to ? cluster_clone(e->reset_to) : NULL;
    free(a->cluster_name);
    a->cluster_name = e->reset_name ? lw_strdup(e->reset_name) : NULL;
}

void history_reset(app *a)
{
    history_free(a);
    push(a, "");
}

void history_record(app *a)
{
    if (!a->hist_n) push(a, "");
    int move = a->hist_move;
    a->hist_move = 0;
    if (move) {
        a->hist_pos += move;
        reset_target_of(a, &a->hist[a->hist_pos]);
        return;
    }
    if (plan_state_is(a->p, &a->hist[a->hist_pos].st)) return; /* nothing changed */
    while (a->hist_n > a->hist_pos + 1) entry_free(&a->hist[--a->hist_n]); /* no redo past a new what-if */
    push(a, a->pending_what);
}

action app_undo(app *a, int dir)
{
    int to = a->hist_pos + dir;
    if (to < 0 || to >= a->hist_n) {
        app_set_status(a, 0, "nothing to %s (%d what-if%s in the history)", dir < 0 ? "undo" : "redo",
                       a->hist_n > 0 ? a->hist_n - 1 : 0, a->hist_n == 2 ? "" : "s");
        return ACT_REDRAW;
    }
    /* undo takes back the what-if that led to this state; redo does the next one again */
    int k = dir < 0 ? a->hist_pos : to;
    char what[200];
    snprintf(what, sizeof what, "%s %d/%d: %s", dir < 0 ? "undo" : "redo", k, a->hist_n - 1, a->hist[k].what);
    app_whatif_begin(a, what);
    a->change = plan_state_change(a->p, &a->hist[to].st);
    a->hist_move = dir;
    if (a->change.set || a->change.cl) {
        app_invalidate_settings(a);
        return ACT_REBUILD;
    }
    if (a->change.sync_set) {
        app_invalidate_settings(a);
        return ACT_RESYNC;
    }
    return ACT_RESEARCH;
}
