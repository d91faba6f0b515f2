/*
 * frame: one whole frame — the tab bar, the context line (what is being
 * planned), the current screen, the status line (or the prompt) and the key
 * hints. Drawn into a window and refreshed by the caller at once, so
 * nothing flickers.
 */
#include "app.h"

#include "draw.h"

#include <math.h>
#include <string.h>

static void tab_bar(app *a, WINDOW *w, int W)
{
    ui_fill(w, 0, 0, W, ST_TITLE);
    int x = 0;
    x += ui_put(w, 0, x, W - x, ST_TITLE, " layerwise ");
    for (int s = 0; s < SCR__COUNT; s++) {
        a->tab_w[s] = 0;
        const char *t = app_screens[s]->tab;
        if (!t) continue;
        char lab[48];
        snprintf(lab, sizeof lab, " %d %s ", s + 1, t);
        /* an overlay (help, why-not) lies over a tab: keep that tab lit */
        int active = app_base_screen(a) == (screen_id)s;
        a->tab_x[s] = x;
        int n = ui_put(w, 0, x, W - x, active ? ST_TAB_ACTIVE : ST_TITLE, lab);
        a->tab_w[s] = n;
        x += n;
    }
    const char *overlay = app_screens[a->screen]->overlay;
    const char *right = overlay ? overlay : " ? help ";
    int rw = ui_width(right);
    if (x + rw < W) ui_put(w, 0, W - rw, rw, overlay ? ST_TAB_ACTIVE : ST_TITLE, right);
}

static void context_line(const app *a, WINDOW *w, int W)
{
    const plan *p = a->p;
    char buf[512];
    int pins = plan_pin_count(p);
    char pinbuf[32] = "";
    if (pins) snprintf(pinbuf, sizeof pinbuf, " %s %d pinned", G->dot, pins);
    /* most telling first: a narrow terminal cuts the end */
    /* each estimate named by its model; the simulated step once shown.c has it */
    char simbuf[64] = "";
    double sim = app_sim_step_ms(a);
    if (isfinite(sim)) snprintf(simbuf, sizeof simbuf, " %s simulated %.2f ms", G->dot, sim);
    const strategy_eval *ev = app_shown_eval(a);
    if (p->sr)
        snprintf(buf, sizeof buf,
                 " %s on %s %s %d/%d GPUs%s %s %sEq. 1 %.2f ms/step%s %s %.0f img/s %s batch %ld/GPU (%ld) %s %s %s sync %s",
                 p->net->name, p->cl->name, G->dot, p->gpus, cluster_gpus(p->cl), pinbuf, G->dot,
                 app_shown_refined(a) ? "refined: " : "", ev->total_ms, simbuf, G->dot, ev->images_per_s, G->dot,
                 p->batch / (p->gpus ? p->gpus : 1), p->batch, G->dot, precision_name(p->cl->precision), G->dot,
                 p->cl->sync == SYNC_PARAMETER_SERVER ? "PS" : "ring");
    else
        snprintf(buf, sizeof buf, " %s on %s %s %d GPUs %s no strategy (see the status line)", p->net->name,
                 p->cl->name, G->dot, p->gpus, G->dot);
    ui_fill(w, 1, 0, W, ST_NORMAL);
    ui_put(w, 1, 0, W, ST_CONTEXT, buf);
}

static void status_line(const app *a, WINDOW *w, int y, int W)
{
    ui_fill(w, y, 0, W, ST_NORMAL);
    if (a->prompt != PROMPT_NONE) {
        int x = ui_put(w, y, 0, W, ST_BOLD, a->prompt_label);
        /* keep the end of a long entry in view */
        const char *s = a->prompt_buf;
        int room = W - x - 1;
        while (ui_width(s) > room && *s) s++;
        x += ui_put(w, y, x, W - x, ST_NORMAL, s);
        ui_put(w, y, x, 1, ST_SELECTED, " ");
        return;
    }
    ui_put(w, y, 0, W, a->status_error ? ST_ERROR : ST_STATUS, a->status);
}

/* Hints are "key:label" words; the key part is highlighted. "?:help q:quit"
 * stays at the right end whatever the width. */
static void hint_bar(const app *a, WINDOW *w, int y, int W)
{
    ui_fill(w, y, 0, W, ST_HINT);
    const char *tail = a->prompt != PROMPT_NONE ? "Enter:ok Esc:cancel ^U:clear" : "?:help q:quit";
    const char *h = a->prompt != PROMPT_NONE ? "" : app_screens[a->screen]->hints;
    int tail_w = ui_width(tail) + 1;
    int x = 0;
    for (int part = 0; part < 2; part++) {
        const char *s = part ? tail : h;
        int limit = part ? W : W - tail_w;
        if (part) x = W - tail_w + 1 > x ? W - tail_w + 1 : x;
        while (*s) {
            while (*s == ' ') s++;
            if (!*s) break;
            const char *e = s;
            while (*e && *e != ' ') e++;
            char word[96];
            snprintf(word, sizeof word, "%.*s", (int)(e - s), s);
            int ww = ui_width(word);
            if (x + ww + 1 > limit) break;
            char *colon = strchr(word, ':');
            if (colon && colon != word) {
                *colon = 0;
                x += ui_put(w, y, x + 1, limit - x, ST_HINT_KEY, word) + 1;
                x += ui_put(w, y, x + 1, limit - x, ST_HINT, colon + 1) + 1;
            } else {
                x += ui_put(w, y, x + 1, limit - x, ST_HINT, word) + 1;
            }
            s = e;
        }
    }
}

void app_draw(app *a, WINDOW *w)
{
    int H, W;
    getmaxyx(w, H, W);
    a->frame_h = H;
    a->frame_w = W;
    werase(w);
    if (H < TUI_MIN_H || W < TUI_MIN_W) {
        ui_too_small(w, H, W);
        return;
    }
    tab_bar(a, w, W);
    context_line(a, w, W);
    rect body = {2, 0, H - 4, W};
    if (a->p->sr || app_screens[a->screen]->without_strategy) app_screens[a->screen]->draw(a, w, body);
    status_line(a, w, H - 2, W);
    hint_bar(a, w, H - 1, W);
}
