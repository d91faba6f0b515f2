/*
 * keys: the global key table, dispatch (prompt, then the screen's table,
 * then the global one), what the prompts opened here do, and mouse clicks.
 */
#include "keys.h"

#include "app.h"
#include "find.h"
#include "history.h"
#include "screens.h"
#include "shown.h"

#include "draw.h"
#include "prompt.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#define CTRL(c) ((c) & 0x1f)

/* ---- what the prompts opened here do on submit ------------------------- */

/* The export prompt's answer: asks before it writes over a file that is
 * there (a FIFO or a device is written in place, not replaced: no question). */
static action export_yes(app *a, const char *path, int arg)
{
    (void)arg;
    app_export(a, path);
    return ACT_REDRAW;
}

static action export_no(app *a, const char *path, int arg)
{
    (void)arg;
    app_set_status(a, 0, "not written: %s is as it was", path);
    return ACT_REDRAW;
}

static action export_to(app *a, const char *text, int arg)
{
    (void)arg;
    char path[sizeof a->prompt.buf];
    if (prompt_expand_home(text, path, sizeof path) != 0) {
        app_set_status(a, 1, "export: cannot expand \"%s\" (no such user, or too long)", text);
        return ACT_REDRAW;
    }
    struct stat st;
    if (path[0] && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        prompt_open(a, PROMPT_OVERWRITE, "exists; overwrite it? (y/n) ", path, export_yes, 0);
        a->prompt.decline = export_no;
        return ACT_REDRAW;
    }
    app_export(a, path);
    return ACT_REDRAW;
}

/* A GPU count (arg PROMPT_GPUS) or a batch per GPU typed. */
static action count_typed(app *a, const char *text, int k)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    long max = k == PROMPT_GPUS ? cluster_gpus(plan_cluster(a->p)) : PLAN_MAX_BATCH_PER_GPU;
    const char *what = k == PROMPT_GPUS ? "GPU count" : "batch per GPU";
    if (errno || end == text || *end) {
        app_set_status(a, 1, "%s: \"%s\" is not a whole number (1 to %ld)", what, text, max);
        return ACT_REDRAW;
    }
    if (v < 1 || v > max) {
        if (k == PROMPT_GPUS && v > max)
            app_set_status(a, 1, "%ld GPUs requested, but the cluster has %ld (1 to %ld)", v, max, max);
        else
            app_set_status(a, 1, "%s: %ld is out of range (1 to %ld)", what, v, max);
        return ACT_REDRAW;
    }
    if (k == PROMPT_GPUS) return app_set_gpus(a, (int)v);
    return app_set_batch(a, v);
}

/* The pipeline typed at |: "STAGES [MICRO-BATCHES] [SCHEDULE [V]]" or
 * "megatron" among them (Megatron-LM's equal stages); 1 (or "off"): none. */
static action pipeline_typed(app *a, const char *text, int arg)
{
    (void)arg;
    plan_pipe_settings q = {0};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    int ints = 0, bad = 0;
    for (char *tok = strtok(buf, " ,"); tok && !bad; tok = strtok(NULL, " ,")) {
        char *end;
        errno = 0;
        long v = strtol(tok, &end, 10);
        if (end != tok && !*end && !errno) {
            if (v < 1 || v > 1 << 20) bad = 1;
            else if (q.schedule) q.vp = (int)v;
            else if (ints++ == 0) q.stages = (int)v;
            else if (ints == 2) q.microbatches = (int)v;
            else bad = 1;
        } else if (strcmp(tok, "off") == 0) {
            q.stages = 1;
        } else if (strcmp(tok, "megatron") == 0) {
            q.megatron = 1;
        } else if (plan_schedule_from_name(tok) > 0 && !q.schedule) {
            q.schedule = plan_schedule_from_name(tok);
        } else {
            bad = 1;
        }
    }
    if (bad || !q.stages) {
        app_set_status(a, 1, "pipeline: \"%s\" is not STAGES [MICRO-BATCHES] [gpipe|1f1b|interleaved [V]] [megatron]",
                       text);
        return ACT_REDRAW;
    }
    return app_set_pipeline(a, &q);
}

static action search_typed(app *a, const char *text, int arg)
{
    (void)arg;
    if (text[0]) snprintf(a->search, sizeof a->search, "%s", text); /* empty: the last search again */
    return app_find(a, 1);
}

/* q closes a sub-view (help, why-not) before it quits, as in less or tig. */
static action k_quit(app *a, int key)
{
    (void)key;
    if (app_screens[a->screen]->overlay) {
        app_close_overlay(a);
        return ACT_REDRAW;
    }
    a->quit = 1;
    return ACT_QUIT;
}

static action k_help(app *a, int key)
{
    (void)key;
    app_open_screen(a, SCR_HELP); /* help's own table closes it */
    return ACT_REDRAW;
}

static action k_screen(app *a, int key)
{
    app_open_screen(a, (screen_id)(SCR_TABLE + (key - '1')));
    return ACT_REDRAW;
}

static action k_cycle(app *a, int key)
{
    int s = app_base_screen(a), dir = key == KEY_BTAB ? SCR__COUNT - 1 : 1;
    do s = (s + dir) % SCR__COUNT; /* the next tab; overlays are not tabs */
    while (!app_screens[s]->tab);
    app_open_screen(a, (screen_id)s);
    return ACT_REDRAW;
}

static action k_back(app *a, int key)
{
    (void)key;
    if (app_refining(a)) {
        app_refine_cancel(a);
        return ACT_REDRAW;
    }
    if (!app_screens[a->screen]->overlay) return ACT_NONE;
    app_close_overlay(a);
    return ACT_REDRAW;
}

static action k_gpus(app *a, int key)
{
    return app_set_gpus(a, app_gpu_step(a, key == '+' || key == '=' ? 1 : -1));
}

static action k_gpus_prompt(app *a, int key)
{
    (void)key;
    char b[32];
    snprintf(b, sizeof b, "%d", plan_gpus(a->p));
    char label[64];
    snprintf(label, sizeof label, "GPUs (1-%d): ", cluster_gpus(plan_cluster(a->p)));
    prompt_open(a, PROMPT_GPUS, label, b, count_typed, PROMPT_GPUS);
    return ACT_REDRAW;
}

static action k_pipeline_prompt(app *a, int key)
{
    (void)key;
    plan_pipeline_summary s;
    char b[64] = "";
    if (plan_pipeline_info(a->p, &s))
        snprintf(b, sizeof b, "%d %d %s%s", s.stages, s.microbatches, s.schedule_name, s.megatron ? " megatron" : "");
    prompt_open(a, PROMPT_PIPELINE, "pipeline: stages [micro-batches] [gpipe|1f1b|interleaved [v]] (1: off): ", b,
                pipeline_typed, 0);
    return ACT_REDRAW;
}

static action k_batch(app *a, int key)
{
    long b = app_batch_per_gpu(a);
    return app_set_batch(a, key == '>' ? b * 2 : (b > 1 ? b / 2 : 1));
}

static action k_sync(app *a, int key)
{
    (void)key;
    return app_toggle_sync(a);
}

static action k_folds(app *a, int key)
{
    (void)key;
    return app_toggle_folds(a);
}

static action k_memlimit(app *a, int key)
{
    (void)key;
    return app_cycle_memory_limit(a);
}

static action k_precision(app *a, int key)
{
    (void)key;
    return app_cycle_precision(a);
}

static action k_whynot(app *a, int key)
{
    (void)key;
    app_whynot_open(a, a->sel);
    return ACT_REDRAW;
}

static action k_explain(app *a, int key)
{
    (void)key;
    app_explain_open(a, a->sel);
    if (plan_stage_count(a->p) > 1) { /* a pipelined plan: why the layer sits in its stage, on the status line */
        char why[400];
        int rc = plan_stage_explain(a->p, a->sel, why, sizeof why);
        /* the screen's figures are the one-stage optimum's, not the stage's (the table's rows) */
        app_set_status(a, rc != 0, "the screen explains the one-stage optimum %s %s", G->dot, why);
    }
    return ACT_REDRAW;
}

static action k_compare(app *a, int key)
{
    (void)key;
    app_compare_open(a);
    return ACT_REDRAW;
}

static action k_lecture(app *a, int key)
{
    (void)key;
    app_lecture_open(a);
    return ACT_REDRAW;
}

static action k_unpin(app *a, int key)
{
    (void)key;
    return app_pin(a, a->sel, -1);
}

static action k_unpin_all(app *a, int key)
{
    (void)key;
    return app_clear_pins(a);
}

static action k_export(app *a, int key)
{
    char def[256];
    app_export_default(a, key == 'J', def, sizeof def);
    const char *formats = app_screens[a->screen]->export_formats;
    char label[sizeof a->prompt.label];
    snprintf(label, sizeof label, "Export (%s) to: ", formats ? formats : ".svg .png .pdf .dot .json");
    prompt_open(a, key == 'J' ? PROMPT_JSON : PROMPT_EXPORT, key == 'J' ? "Strategy JSON to: " : label, def,
                export_to, 0);
    return ACT_REDRAW;
}

static action k_refine(app *a, int key)
{
    (void)key;
    return app_refine_key(a);
}

static action k_search(app *a, int key)
{
    (void)key;
    prompt_open(a, PROMPT_SEARCH, "Search: ", "", search_typed, 0);
    return ACT_REDRAW;
}

static action k_search_next(app *a, int key)
{
    return app_find(a, key == 'N' ? -1 : 1);
}

static action k_open(app *a, int key)
{
    (void)key;
    app_open_screen(a, SCR_OPEN); /* its own table closes it */
    return ACT_REDRAW;
}

static action k_undo(app *a, int key)
{
    return app_undo(a, key == 'Z' ? 1 : -1);
}

static action k_redraw(app *a, int key)
{
    (void)a;
    (void)key;
    return ACT_REDRAW;
}

const keybind app_global_keys[] = {
    {{'?', KEY_F(1)}, "? F1", "help: this list (again or Esc closes it)", k_help},
    {{'1'}, "1", "strategy table: per-layer configs and times", k_screen},
    {{'2'}, "2", "computation graph, coloured by config", k_screen},
    {{'3'}, "3", "elimination stepper (Algorithm 1)", k_screen},
    {{'4'}, "4", "scaling: images/s and bytes against GPU count", k_screen},
    {{'5'}, "5", "cluster: nodes, links, sync (editable)", k_screen},
    {{'6'}, "6", "timeline: one step simulated, per GPU, link and NIC", k_screen},
    {{'\t', KEY_BTAB}, "Tab S-Tab", "next / previous screen", k_cycle},
    {{'+', '=', '-', '_'}, "+ -", "what-if: double / halve the GPU count (powers of two)", k_gpus},
    {{'g'}, "g", "what-if: type a GPU count", k_gpus_prompt},
    {{'>', '<'}, "> <", "what-if: double / halve the batch per GPU", k_batch},
    {{'|'}, "|", "what-if: pipeline: type stages [micro-batches] [schedule] (1: off)", k_pipeline_prompt},
    {{'s'}, "s", "what-if: next sync scheme (ps, ring, zero1-3, hsdp)", k_sync},
    {{'M'}, "M", "what-if: memory limit per GPU: the GPU's, none, 3/4, 1/2", k_memlimit},
    {{'A'}, "A", "search: Algorithm 1 only (no folds, the paper's) <-> with folds", k_folds},
    {{'P'}, "P", "what-if: next precision the GPU has figures for (fp32 tf32 fp16 bf16)", k_precision},
    {{'z', 'Z'}, "z Z", "undo / redo a what-if (GPUs, batch, sync, pins...)", k_undo},
    {{'w'}, "w", "why not? every config of the selected layer, pin one", k_whynot},
    {{'i'}, "i", "explain the selected layer's config (Eq. 1 terms, nodes)", k_explain},
    {{'C'}, "C", "compare two strategies side by side, layer by layer", k_compare},
    {{'L'}, "L", "lecture: per layer, weights synced by sample vs activations moved by channel", k_lecture},
    {{'x'}, "x", "clear the selected layer's pin", k_unpin},
    {{'X'}, "X", "clear every pin", k_unpin_all},
    {{'O'}, "O", "open a network, cluster or strategy file", k_open},
    {{'e'}, "e", "export this view (.svg .png .pdf .dot; .json: strategy; timeline: .trace.json)", k_export},
    {{'J'}, "J", "write the strategy as JSON", k_export},
    {{'F'}, "F", "refine under the simulator (Esc stops); again: toggles", k_refine},
    {{'/'}, "/", "search layers (name or type), or the list shown", k_search},
    {{'n', 'N'}, "n N", "the next / previous match of the search", k_search_next},
    {{CTRL('l')}, "^L", "redraw the screen", k_redraw},
    {{27}, "Esc", "back (from help, why-not, explain, compare, lecture); stops a refine", k_back},
    {{'q', 'Q'}, "q", "close a view (help, why-not, explain, compare, lecture); else quit", k_quit},
    {{0}, NULL, NULL, NULL},
};

static const keybind *find(const keybind *t, int key)
{
    for (; t && t->fn; t++)
        for (int i = 0; i < 4 && t->keys[i]; i++)
            if (t->keys[i] == key) return t;
    return NULL;
}

action keys_dispatch(app *a, int key)
{
    /* without a strategy (a rebuild failed twice) only screens that do not
     * need one take their keys */
    int usable = plan_search_result(a->p) || app_screens[a->screen]->without_strategy;
    const keybind *b = usable ? find(app_screens[a->screen]->keys, key) : NULL;
    if (!b) b = find(app_global_keys, key);
    return b ? b->fn(a, key) : ACT_NONE;
}

const char *lw_key_name(int key, char *buf, size_t n)
{
    switch (key) {
    case KEY_UP: return "Up";
    case KEY_DOWN: return "Down";
    case KEY_LEFT: return "Left";
    case KEY_RIGHT: return "Right";
    case KEY_PPAGE: return "PgUp";
    case KEY_NPAGE: return "PgDn";
    case KEY_HOME: return "Home";
    case KEY_END: return "End";
    case KEY_BTAB: return "S-Tab";
    case KEY_ENTER:
    case '\n':
    case '\r': return "Enter";
    case '\t': return "Tab";
    case 27: return "Esc";
    case ' ': return "Space";
    default: break;
    }
    if (key >= KEY_F(1) && key <= KEY_F(12)) snprintf(buf, n, "F%d", key - KEY_F(0));
    else if (key > 0 && key < 32) snprintf(buf, n, "^%c", key + '@');
    else if (key >= 32 && key < 127) snprintf(buf, n, "%c", key);
    else snprintf(buf, n, "#%d", key);
    return buf;
}

/* ---- mouse -------------------------------------------------------------- */

static action mouse(app *a)
{
    MEVENT ev;
    if (getmouse(&ev) != OK) return ACT_NONE;
    if (ev.bstate & BUTTON4_PRESSED) return keys_dispatch(a, KEY_UP);
#ifdef BUTTON5_PRESSED
    if (ev.bstate & BUTTON5_PRESSED) return keys_dispatch(a, KEY_DOWN);
#endif
    if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON1_DOUBLE_CLICKED))) return ACT_NONE;
    if (ev.y == 0) {
        for (int s = 0; s < SCR__COUNT; s++)
            if (a->frame.tab_w[s] > 0 && ev.x >= a->frame.tab_x[s] && ev.x < a->frame.tab_x[s] + a->frame.tab_w[s]) {
                app_open_screen(a, (screen_id)s);
                return ACT_REDRAW;
            }
        return ACT_NONE;
    }
    const screen_ops *o = app_screens[a->screen];
    return o->click ? o->click(a, ev.y, ev.x, (ev.bstate & BUTTON1_DOUBLE_CLICKED) != 0) : ACT_NONE;
}

/* The last frame was the "terminal too small" notice: nothing on screen to
 * act on, so only q (and Ctrl-C) work until the terminal grows. */
static int too_small(const app *a)
{
    return a->frame.h > 0 && (a->frame.h < TUI_MIN_H || a->frame.w < TUI_MIN_W);
}

action app_key(app *a, int key)
{
    if (key == KEY_RESIZE) return ACT_REDRAW;
    if (too_small(a)) {
        if (key != 'q' && key != 'Q') return ACT_NONE;
        a->quit = 1;
        return ACT_QUIT;
    }
    if (a->prompt.kind != PROMPT_NONE) return prompt_key(a, key);
    if (key == KEY_MOUSE) return mouse(a);
    return keys_dispatch(a, key);
}

action app_feed(app *a, int key)
{
    action act = app_key(a, key);
    app_perform(a, act);
    return act;
}
