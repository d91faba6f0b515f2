/*
 * frame: one whole frame — the tab bar, the context line (what is being
 * planned), the current screen, the status line (or the prompt) and the key
 * hints. Drawn into a window and refreshed by the caller at once, so
 * nothing flickers.
 */
#include "app.h"
#include "shown.h"

#include "draw.h"

#include <math.h>
#include <string.h>

static void tab_bar(app *a, WINDOW *w, int W)
{
    ui_fill(w, 0, 0, W, ST_TITLE);
    int x = 0;
    x += ui_put(w, 0, x, W - x, ST_TITLE, " layerwise ");
    for (int s = 0; s < SCR__COUNT; s++) {
        a->frame.tab_w[s] = 0;
        const char *t = app_screens[s]->tab;
        if (!t) continue;
        char lab[48];
        snprintf(lab, sizeof lab, " %d %s ", s + 1, t);
        /* an overlay (help, why-not) lies over a tab: keep that tab lit */
        int active = app_base_screen(a) == (screen_id)s;
        a->frame.tab_x[s] = x;
        int n = ui_put(w, 0, x, W - x, active ? ST_TAB_ACTIVE : ST_TITLE, lab);
        a->frame.tab_w[s] = n;
        x += n;
    }
    const char *overlay = app_screens[a->screen]->overlay;
    const char *right = overlay ? overlay : " ? help ";
    int rw = ui_width(right);
    if (x + rw < W) ui_put(w, 0, W - rw, rw, overlay ? ST_TAB_ACTIVE : ST_TITLE, right);
}

/* What is being planned, most telling first: at 80 columns the less telling
 * parts take their brief forms, then give way, whole. */
static void context_line(const app *a, WINDOW *w, int W)
{
    const plan *p = a->p;
    char net[256], gpus[96], pins[64], mem[96], ms[48], ms_b[48], sim_txt[48], sim_b[48], ips[32], batch[64],
        batch_b[32], sync[32], mfu[32], pipe[160], pipe_b[64];
    snprintf(net, sizeof net, "%s on %s", plan_net(p)->name, plan_cluster(p)->name);
    int used = plan_search_result(p) ? app_shown_eval(a)->gpus_used : plan_gpus(p);
    if (used > 0 && used < plan_gpus(p))
        snprintf(gpus, sizeof gpus, "%d/%d GPUs (%d used)", plan_gpus(p), cluster_gpus(plan_cluster(p)), used);
    else
        snprintf(gpus, sizeof gpus, "%d/%d GPUs", plan_gpus(p), cluster_gpus(plan_cluster(p)));
    int pinned = plan_pin_count(p), held = app_pins_held(a);
    pins[0] = 0;
    if (pinned && held) snprintf(pins, sizeof pins, "%d pinned, %d on hold", pinned, held);
    else if (pinned) snprintf(pins, sizeof pins, "%d pinned", pinned);
    else if (held) snprintf(pins, sizeof pins, "%d pin%s on hold", held, held == 1 ? "" : "s");
    char line[512];
    if (!plan_search_result(p)) {
        snprintf(line, sizeof line, " %s %s %s %s no strategy (see the status line)", net, G->dot, gpus, G->dot);
    } else {
        mem[0] = 0;
        double need;
        if (app_memory_over(a, &need))
            snprintf(mem, sizeof mem, "needs %.1f GiB/GPU", need / 1073741824.0);
        /* each estimate named by its model: the strategy shown's Eq. 1 step, and
         * its simulated step once shown.c has it */
        const strategy_eval *ev = app_shown_eval(a);
        const char *refined = app_shown_refined(a) ? "refined: " : "";
        snprintf(ms, sizeof ms, "%sEq. 1 %.2f ms/step", refined, ev->total_ms);
        snprintf(ms_b, sizeof ms_b, "%sEq. 1 %.1f ms", refined, ev->total_ms);
        double sim = app_sim_step_ms(a);
        sim_txt[0] = sim_b[0] = 0;
        if (isfinite(sim)) {
            snprintf(sim_txt, sizeof sim_txt, "simulated %.2f ms", sim);
            snprintf(sim_b, sizeof sim_b, "simulated %.1f ms", sim);
        }
        /* Eq. 1's images/s, said so: after F the strategy is the
         * simulator's pick and its Eq. 1 figure could read as simulated
         * (issue 36, bug 11); no brief form, it shows labelled or not at all */
        snprintf(ips, sizeof ips, "%.0f img/s (Eq. 1)", ev->images_per_s);
        snprintf(mfu, sizeof mfu, "MFU %.1f%%", strategy_eval_mfu(ev) * 100);
        snprintf(batch, sizeof batch, "batch %ld/GPU (%ld)", plan_batch(p) / (plan_gpus(p) ? plan_gpus(p) : 1), plan_batch(p));
        snprintf(batch_b, sizeof batch_b, "batch %ld", plan_batch(p));
        const char *sy = plan_cluster(p)->sync == SYNC_PARAMETER_SERVER ? "PS"
                         : plan_cluster(p)->sync == SYNC_RING_ALLREDUCE ? "ring"
                                                              : sync_scheme_name(plan_cluster(p)->sync);
        snprintf(sync, sizeof sync, "sync %s", sy);
        /* a pipelined plan: its step and bubble beside the one-stage optimum's Eq. 1 */
        plan_pipeline_summary ps;
        pipe[0] = pipe_b[0] = 0;
        if (plan_pipeline_info(p, &ps)) {
            char pt[96];
            app_pipeline_text(a, pt, sizeof pt);
            snprintf(pipe, sizeof pipe, "pipelined %s %.2f ms/step, bubble %.1f%%", pt, ps.step_ms,
                     100 * ps.bubble_fraction);
            snprintf(pipe_b, sizeof pipe_b, "pp%d %.1f ms, bubble %.0f%%", ps.stages, ps.step_ms, 100 * ps.bubble_fraction);
        }
        const ui_part parts[] = {
            {net, NULL, 0},
            {gpus, NULL, 0},
            {pins, NULL, 3},
            {pipe, pipe_b, 1},
            {mem, "over memory", 2},
            {ms, ms_b, 4},
            {sim_txt, sim_b, 4},
            {ips, NULL, 6},
            {mfu, NULL, 9},
            {batch, batch_b, 5},
            {precision_name(plan_cluster(p)->precision), NULL, 8},
            {sync, sy, 7},
            {plan_run_settings(p)->no_fold ? "Alg. 1, no folds" : "", plan_run_settings(p)->no_fold ? "no folds" : NULL, 1},
        };
        char sep[16];
        snprintf(sep, sizeof sep, " %s ", G->dot);
        char body[480];
        ui_join_parts(parts, (int)(sizeof parts / sizeof parts[0]), sep, W - 1, body, sizeof body);
        snprintf(line, sizeof line, " %s", body);
    }
    ui_fill(w, 1, 0, W, ST_NORMAL);
    ui_put(w, 1, 0, W, ST_CONTEXT, line);
}

#define STATUS_MAX_ROWS 3

static void status_line(const app *a, WINDOW *w, int y, int rows, int W)
{
    for (int i = 0; i < rows; i++) ui_fill(w, y + i, 0, W, ST_NORMAL);
    if (a->prompt.kind == PROMPT_OVERWRITE) {
        /* the question at the end, where the eye is: a long path loses its start */
        char q[sizeof a->prompt.buf + sizeof a->prompt.label + 8], fit[sizeof q];
        int lw = ui_width(a->prompt.label) + 1;
        snprintf(q, sizeof q, "%s", a->prompt.buf);
        int x = ui_put(w, y, 0, W - lw, ST_BOLD, ui_width(q) > W - lw ? ui_fit_mid(q, W - lw, fit, sizeof fit) : q);
        x += ui_put(w, y, x, W - x, ST_NORMAL, " ");
        x += ui_put(w, y, x, W - x, ST_BOLD, a->prompt.label);
        ui_put(w, y, x, 1, ST_SELECTED, " ");
        return;
    }
    if (a->prompt.kind != PROMPT_NONE) {
        int x = ui_put(w, y, 0, W, ST_BOLD, a->prompt.label);
        /* keep the end of a long entry in view */
        const char *s = a->prompt.buf;
        int room = W - x - 1;
        while (ui_width(s) > room && *s) s++;
        x += ui_put(w, y, x, W - x, ST_NORMAL, s);
        ui_put(w, y, x, 1, ST_SELECTED, " ");
        return;
    }
    ui_wrap(w, (rect){y, 0, rows, W}, a->status_error ? ST_ERROR : ST_STATUS, a->status);
}

/* Rows the status line needs: a long message (an export error naming its
 * path) takes up to three, word-wrapped, rather than lose its end. */
static int status_rows(const app *a, int W)
{
    if (a->prompt.kind != PROMPT_NONE) return 1;
    int n = ui_wrap(NULL, (rect){0, 0, STATUS_MAX_ROWS, W}, ST_STATUS, a->status);
    return n < 1 ? 1 : n;
}

/* Draws the "key:label" words of s from x up to limit (the key part
 * highlighted); a word that does not fit ends the run. Returns the new x. */
static int hint_words(WINDOW *w, int y, int x, int limit, const char *s)
{
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
    return x;
}

/* Hints: the screen's own first; then, where the whole of it fits, what
 * every screen answers (search, undo); "?:help q:quit" stays at the right
 * end whatever the width. */
static void hint_bar(const app *a, WINDOW *w, int y, int W)
{
    ui_fill(w, y, 0, W, ST_HINT);
    const char *tail = a->prompt.kind == PROMPT_OVERWRITE ? "y:overwrite n/Esc:keep it"
                       : a->prompt.kind != PROMPT_NONE    ? "Enter:ok Esc:cancel ^U:clear"
                       : app_screens[a->screen]->overlay ? "?:help q:close"
                                                     : "?:help q:quit";
    const char *h = a->prompt.kind != PROMPT_NONE ? "" : app_screens[a->screen]->hints;
    const char *global = "/:find z/Z:undo/redo";
    int tail_w = ui_width(tail) + 1;
    int x = hint_words(w, y, 0, W - tail_w, h);
    if (a->prompt.kind == PROMPT_NONE && !app_screens[a->screen]->overlay && !strstr(h, "/:find") &&
        x + ui_width(global) + 2 <= W - tail_w)
        x = hint_words(w, y, x, W - tail_w, global);
    hint_words(w, y, W - tail_w > x ? W - tail_w : x, W, tail);
}

void app_draw(app *a, WINDOW *w)
{
    int H, W;
    getmaxyx(w, H, W);
    a->frame.h = H;
    a->frame.w = W;
    werase(w);
    if (H < TUI_MIN_H || W < TUI_MIN_W) {
        ui_too_small(w, H, W);
        return;
    }
    tab_bar(a, w, W);
    context_line(a, w, W);
    int sr = status_rows(a, W);
    rect body = {2, 0, H - 3 - sr, W};
    if (plan_search_result(a->p) || app_screens[a->screen]->without_strategy) app_screens[a->screen]->draw(a, w, body);
    status_line(a, w, H - 1 - sr, sr, W);
    hint_bar(a, w, H - 1, W);
}
