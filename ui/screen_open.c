/*
 * screen_open: O opens another network, cluster or strategy file without
 * leaving the program — a list of the shipped networks and clusters (the
 * ones open marked), and for each kind a row that asks for a path. A
 * network starts a new plan on the same cluster and settings; a cluster is
 * a what-if like the cluster screen's edits (z takes it back); a strategy
 * file pins every layer to its configs, so the table, graph and timeline
 * show it evaluated as `layerwise eval -s FILE` does. A file that does not
 * load leaves everything as it was; the status line says what is wrong
 * and where, as the command line does.
 */
#include "draw.h"
#include "find.h"
#include "list.h"
#include "screens.h"
#include "prompt.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_name[OPEN__KINDS] = {"network", "cluster", "strategy"};

static void *open_new(app *a)
{
    (void)a;
    open_state *os = lw_calloc(1, sizeof *os);
    const char *const *nets = data_builtin_names("networks"), *const *cls = data_builtin_names("clusters");
    int n = 3;
    for (int i = 0; nets[i]; i++) n++;
    for (int i = 0; cls[i]; i++) n++;
    os->rows = lw_calloc((size_t)n, sizeof(open_row));
    for (int i = 0; nets[i]; i++) os->rows[os->n++] = (open_row){OPEN_NETWORK, nets[i]};
    os->rows[os->n++] = (open_row){OPEN_NETWORK, NULL};
    for (int i = 0; cls[i]; i++) os->rows[os->n++] = (open_row){OPEN_CLUSTER, cls[i]};
    os->rows[os->n++] = (open_row){OPEN_CLUSTER, NULL};
    os->rows[os->n++] = (open_row){OPEN_STRATEGY, NULL};
    return os;
}

static void open_free(app *a, void *st)
{
    (void)a;
    open_state *os = st;
    if (os) free(os->rows);
    free(os);
}

/* The row's name is the network or cluster in use (after an undo too). */
static int is_open(const app *a, const open_row *r)
{
    if (!r->name) return 0;
    return strcmp(r->name, r->kind == OPEN_NETWORK ? plan_net(a->p)->name : plan_cluster(a->p)->name) == 0;
}

static void row_text(const open_row *r, char *b, size_t n)
{
    if (r->name) snprintf(b, n, "%-9s %s", kind_name[r->kind], r->name);
    else snprintf(b, n, "%-9s a file: type its path...", kind_name[r->kind]);
}

static void draw_open(app *a, WINDOW *w, rect r)
{
    open_state *os = open_of(a);
    ui_fill(w, r.y, r.x, r.w, ST_HEADER);
    ui_putf(w, r.y, r.x, r.w, ST_HEADER, " Open: now %s on %s", plan_net(a->p)->name, plan_cluster(a->p)->name);
    int rows = r.h - 5;
    if (rows < 1) rows = 1;
    list_fit(&os->cur, os->n, rows, 1);
    for (int i = 0; i < rows && os->cur.top + i < os->n; i++) {
        int k = os->cur.top + i, y = r.y + 1 + i, sel = k == os->cur.sel;
        const open_row *row = &os->rows[k];
        char b[160];
        row_text(row, b, sizeof b);
        if (sel) ui_fill(w, y, r.x, r.w, ST_SELECTED);
        int x = r.x + 1;
        x += ui_put(w, y, x, r.w - 1, sel ? ST_SELECTED : row->name ? ST_NORMAL : ST_DIM, b);
        if (is_open(a, row)) ui_put(w, y, x, r.x + r.w - x, sel ? ST_SELECTED : ST_GOOD, "  (open)");
    }
    rect t = {r.y + r.h - 4, r.x, 4, r.w};
    ui_wrap(w, t, ST_DIM,
            "Enter opens the selected one. A network starts afresh on this cluster and these settings (the undo "
            "history starts again); a cluster is a what-if (z takes it back); a strategy file pins every layer to "
            "its config, as `layerwise eval -s FILE` evaluates it (X clears the pins). Esc goes back.");
}

/* ---- opening ------------------------------------------------------------ */

/* A network that loads becomes the pending open (a->pending.open_net): app_perform
 * builds its plan (open_network_perform), so the TUI says so and Esc
 * cancels it as it does a rebuild. */
/* app_perform's part for a network opened (a->pending.open_net): builds its plan
 * (cancellable through the plan's cancel flag) and adopts it, or keeps
 * the plan and says why (a->pending.perform). */
static void open_network_perform(app *a);

static action open_network(app *a, const char *name)
{
    lw_error err = {0};
    network *net = plan_load_network(name, &err);
    if (!net) {
        app_set_status(a, 1, "open network %s: %s (kept %s)", name, err.msg, plan_net(a->p)->name);
        return ACT_REDRAW;
    }
    char what[200];
    snprintf(what, sizeof what, "open network %s", name);
    app_whatif_begin(a, what);
    a->pending.open_net = net;
    a->pending.open_net_name = lw_strdup(name);
    a->pending.perform = open_network_perform;
    app_close_overlay(a);
    return ACT_REBUILD;
}

static void open_network_perform(app *a)
{
    network *net = a->pending.open_net;
    char *name = a->pending.open_net_name;
    a->pending.open_net = NULL;
    a->pending.open_net_name = NULL;
    lw_error err = {0};
    /* a profile times one network's layers: it stays with that network */
    plan *p = plan_open(net, cluster_clone(plan_cluster(a->p)), NULL,
        &(plan_options){.set = *plan_run_settings(a->p), .mem = *plan_memory_settings_of(a->p), .cancel = plan_cancel_flag(a->p), .whatifs = 1}, &err);
    if (!p) {
        if (strcmp(err.msg, "cancelled") == 0)
            app_set_status(a, 0, "open network %s: cancelled (kept %s)", name, plan_net(a->p)->name);
        else
            app_set_status(a, 1, "open network %s: %s (kept %s)", name, err.msg, plan_net(a->p)->name);
        free(name);
        return;
    }
    int dropped = a->src.profile_name != NULL;
    free(a->src.profile_name);
    a->src.profile_name = NULL;
    free(a->src.net_name);
    a->src.net_name = name;
    app_adopt_plan(a, p);
    app_set_status(a, 0, "opened network %s: %d layers, %.2f ms/step, %.0f img/s (Eq. 1)%s", plan_net(p)->name,
                   plan_net(p)->n_layers, plan_best_eval(p)->total_ms, plan_best_eval(p)->images_per_s,
                   dropped ? "; the profile was the other network's: not used" : "");
    if (a->prefetch) app_prefetch_next(a);
}

static action open_cluster(app *a, const char *name)
{
    lw_error err = {0};
    cluster *cl = plan_load_cluster(name, &err);
    if (!cl) {
        app_set_status(a, 1, "open cluster %s: %s (kept %s)", name, err.msg, a->src.cluster_name);
        return ACT_REDRAW;
    }
    if (cluster_equal(cl, plan_cluster(a->p)) && strcmp(cl->name, plan_cluster(a->p)->name) == 0) {
        cluster_free(cl);
        app_set_status(a, 0, "cluster %s is the one open", name);
        return ACT_REDRAW;
    }
    char what[200];
    snprintf(what, sizeof what, "open cluster %s", name);
    app_whatif_begin(a, what);
    a->pending.cl = cl;
    a->pending.change.cl = cl;
    if (plan_run_settings(a->p)->gpus > cluster_gpus(cl)) app_change_settings(a)->gpus = cluster_gpus(cl); /* as many as it has */
    a->pending.opened_cluster = lw_strdup(name);
    app_close_overlay(a);
    app_invalidate_settings(a);
    return ACT_REBUILD;
}

static action open_strategy(app *a, const char *path)
{
    const plan *p = a->p;
    lw_error err = {0};
    int L = plan_net(p)->n_layers;
    int *ci = lw_calloc((size_t)L, sizeof(int));
    if (plan_strategy_file(p, path, ci, &err) != 0) {
        app_set_status(a, 1, "open strategy: %s (kept the strategy shown)", err.msg);
        free(ci);
        return ACT_REDRAW;
    }
    char what[300];
    snprintf(what, sizeof what, "strategy %s (every layer pinned)", path);
    app_whatif_begin(a, what);
    a->pending.pins = lw_malloc(sizeof(plan_pin) * (size_t)L);
    for (int i = 0; i < L; i++) a->pending.pins[i] = (plan_pin){i, ci[i]};
    free(ci);
    a->pending.change.n_pins = L;
    a->pending.change.pins = a->pending.pins;
    app_close_overlay(a);
    return ACT_RESEARCH;
}

action app_open_file(app *a, open_kind kind, const char *name)
{
    if (!name || !name[0]) {
        app_set_status(a, 1, "open: no %s file named", kind_name[kind]);
        return ACT_REDRAW;
    }
    switch (kind) {
    case OPEN_NETWORK: return open_network(a, name);
    case OPEN_CLUSTER: return open_cluster(a, name);
    default: return open_strategy(a, name);
    }
}

/* ---- keys --------------------------------------------------------------- */

static action k_move(app *a, int key)
{
    list_key(&open_of(a)->cur, key, open_of(a)->n, 1, 1);
    return ACT_REDRAW;
}

/* The file typed (paths read as a shell reads them: ~ is the home). */
static action file_typed(app *a, const char *text, int kind)
{
    char path[sizeof a->prompt.buf];
    if (prompt_expand_home(text, path, sizeof path) != 0) {
        app_set_status(a, 1, "open: cannot expand \"%s\" (no such user, or too long)", text);
        return ACT_REDRAW;
    }
    return app_open_file(a, (open_kind)kind, path);
}

void open_prompt(app *a, open_kind kind, const char *label)
{
    prompt_open(a, PROMPT_OPEN, label ? label : "File: ", "", file_typed, kind);
}

static action k_choose(app *a, int key)
{
    (void)key;
    open_state *os = open_of(a);
    if (!os->n) return ACT_NONE;
    const open_row *r = &os->rows[os->cur.sel];
    if (r->name) return app_open_file(a, r->kind, r->name);
    char label[64];
    snprintf(label, sizeof label, "%c%s file: ", kind_name[r->kind][0] - 32, kind_name[r->kind] + 1);
    open_prompt(a, r->kind, label);
    return ACT_REDRAW;
}

static action k_close(app *a, int key)
{
    (void)key;
    app_close_overlay(a);
    return ACT_REDRAW;
}

static int row_matches(int k, void *user)
{
    const app *a = user;
    char b[160];
    row_text(&open_of(a)->rows[k], b, sizeof b);
    return app_search_match(a, b);
}

static int find(app *a, int dir, int *nth)
{
    return list_find(&open_of(a)->cur, open_of(a)->n, dir, row_matches, a, nth);
}

static const keybind open_keys[] = {
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "choose a network, cluster or file", k_move},
    {{KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END}, "PgUp PgDn Home End", "page / first / last", k_move},
    {{'\n', '\r', KEY_ENTER}, "Enter", "open it (or type the file's path)", k_choose},
    {{'O'}, "O", "close (as Esc does)", k_close},
    {{0}, NULL, NULL, NULL},
};

/* The open network and cluster selected first. */
static void enter_open(app *a)
{
    open_state *os = open_of(a);
    for (int k = os->n - 1; k >= 0; k--)
        if (is_open(a, &os->rows[k]) && os->rows[k].kind == OPEN_NETWORK) os->cur.sel = k;
}

const screen_ops screen_open_ops = {
    .tab = NULL,
    .title = "Open (O)",
    .hints = "Up/Dn:choose Enter:open /:find Esc:back",
    .draw = draw_open,
    .keys = open_keys,
    .enter = enter_open,
    .overlay = " open ",
    .without_strategy = 1,
    .state_new = open_new,
    .state_free = open_free,
    .find = find,
    .find_what = "entry",
};
