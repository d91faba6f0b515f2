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

#include <stdio.h>
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

void history_free(app_history *h)
{
    for (int i = 0; i < h->n; i++) entry_free(&h->entries[i]);
    free(h->entries);
    *h = (app_history){0};
}

static void push(app_history *h, const plan *p, const char *what, const cluster *reset_to, const char *reset_name)
{
    if (h->n == HISTORY_MAX) {
        entry_free(&h->entries[0]);
        memmove(h->entries, h->entries + 1, sizeof h->entries[0] * (size_t)(h->n - 1));
        h->n--;
    }
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 16;
        h->entries = lw_realloc(h->entries, sizeof h->entries[0] * (size_t)h->cap);
    }
    struct history_entry *e = &h->entries[h->n++];
    snprintf(e->what, sizeof e->what, "%s", what);
    e->st = plan_state_get(p);
    e->reset_to = reset_to ? cluster_clone(reset_to) : NULL;
    e->reset_name = reset_name ? lw_strdup(reset_name) : NULL;
    h->pos = h->n - 1;
}

void history_reset(app_history *h, const plan *p, const cluster *reset_to, const char *reset_name)
{
    history_free(h);
    push(h, p, "", reset_to, reset_name);
}

int history_record(app_history *h, const plan *p, const char *what, const cluster *reset_to, const char *reset_name)
{
    if (!h->n) push(h, p, "", reset_to, reset_name);
    int move = h->move;
    h->move = 0;
    if (move) {
        h->pos += move;
        return 1;
    }
    if (plan_state_is(p, &h->entries[h->pos].st)) return 0; /* nothing changed */
    while (h->n > h->pos + 1) entry_free(&h->entries[--h->n]); /* no redo past a new what-if */
    push(h, p, what, reset_to, reset_name);
    return 0;
}

void history_reset_target(const app_history *h, const cluster **reset_to, const char **reset_name)
{
    const struct history_entry *e = h->n ? &h->entries[h->pos] : NULL;
    *reset_to = e ? e->reset_to : NULL;
    *reset_name = e ? e->reset_name : NULL;
}

int history_step(app_history *h, const plan *p, int dir, plan_change *c, char *what, size_t n)
{
    int to = h->pos + dir;
    if (to < 0 || to >= h->n) {
        snprintf(what, n, "nothing to %s (%d what-if%s in the history)", dir < 0 ? "undo" : "redo",
                 h->n > 0 ? h->n - 1 : 0, h->n == 2 ? "" : "s");
        return -1;
    }
    /* undo takes back the what-if that led to this state; redo does the next one again */
    int k = dir < 0 ? h->pos : to;
    snprintf(what, n, "%s %d/%d: %s", dir < 0 ? "undo" : "redo", k, h->n - 1, h->entries[k].what);
    *c = plan_state_change(p, &h->entries[to].st);
    h->move = dir;
    return 0;
}
