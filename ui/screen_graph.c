/*
 * screen_graph: the computation graph, top to bottom by depth, each box
 * holding a layer's name and its config in the current strategy, coloured
 * by the dimensions the config splits (the config text says the same
 * without colour). Pans over graphs bigger than the terminal; the selected
 * layer (shared with the table) is shown reversed and kept in view.
 */
#include "draw.h"
#include "find.h"
#include "graph_draw.h"
#include "list.h"
#include "screens.h"
#include "shown.h"
#include "export_dot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The boxes: one per layer, or per stretch of folded blocks (fold.h);
 * layout node u is unit u, drawn under its first layer's id. */
static void ensure_layout(app *a)
{
    graph_state *gs = graph_of(a);
    if (gs->gv.valid) return;
    const network *net = plan_net(a->p);
    int n = net->n_layers, ne = 0;
    if (gs->n_open != n) { /* another network: every block folded */
        free(gs->open);
        gs->open = lw_calloc((size_t)(n ? n : 1), 1);
        gs->n_open = n;
        gs->auto_open = -1;
    }
    fold_build(&gs->fd, a->p, gs->open, NULL, 1);
    const fold *f = &gs->fd;
    for (int i = 0; i < n; i++) ne += net->layers[i].n_inputs;
    int nu = f->n_units;
    int *ids = lw_malloc(sizeof(int) * (size_t)(nu ? nu : 1));
    char **names = lw_calloc((size_t)(nu ? nu : 1), sizeof(char *));
    int *from = lw_malloc(sizeof(int) * (size_t)(ne ? ne : 1)), *to = lw_malloc(sizeof(int) * (size_t)(ne ? ne : 1));
    for (int u = 0; u < nu; u++) {
        ids[u] = f->units[u].first;
        if (f->units[u].blocks) {
            char b[64];
            fold_name(f, &f->units[u], b, sizeof b);
            names[u] = lw_strdup(b);
        }
    }
    ne = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < net->layers[i].n_inputs; k++) {
            int fu = f->unit_of[net->layers[i].inputs[k]], tu = f->unit_of[i];
            if (fu == tu) continue; /* inside a folded box */
            from[ne] = fu;
            to[ne] = tu;
            ne++;
        }
    graph_view_build_named(&gs->gv, a->p, nu, ids, (const char *const *)names, ne, from, to);
    for (int u = 0; u < nu; u++) free(names[u]);
    free(names);
    free(ids);
    free(from);
    free(to);
}

/* The folded unit layer li is in, or NULL where its box is its own. */
static const fold_unit *folded_unit(const app *a, int li)
{
    const fold *f = &graph_of(a)->fd;
    if (li < 0 || li >= f->n_layers) return NULL;
    const fold_unit *u = &f->units[f->unit_of[li]];
    return u->blocks ? u : NULL;
}

/* The layer whose box shows the selected layer (the first of a fold). */
static int shown_sel(app *a)
{
    ensure_layout(a);
    const fold_unit *u = folded_unit(a, a->sel);
    return u ? u->first : a->sel;
}

/* Layer li's config as the graph shows it: on a pipelined plan the
 * layer's in its stage (on the stage's group at the micro-batch:
 * plan_stage_layer_figures), else the shown strategy's; *f (may be NULL)
 * gets the stage figures. */
static const config *shown_config(const app *a, int li, plan_stage_layer *f)
{
    plan_stage_layer mine;
    if (!f) f = &mine;
    if (plan_stage_count(a->p) > 1 && plan_stage_layer_figures(a->p, li, f) == 0) return &f->c;
    *f = (plan_stage_layer){0};
    return plan_config(a->p, li, app_shown_configs(a)[li]);
}

/* The blocks folded into u have the same configs part by part. */
static int blocks_agree(const app *a, const fold_unit *u)
{
    if (plan_stage_count(a->p) < 2) return fold_blocks_agree(a->p, u, app_shown_configs(a));
    for (int li = u->first + u->len; u->blocks > 1 && li <= u->last; li++) {
        plan_stage_layer f0, f1;
        if (!config_equal(shown_config(a, li, &f1), shown_config(a, li - u->len, &f0))) return 0;
    }
    return 1;
}

/* A folded box: its layers' config where they all have one, "mixed"
 * where the blocks agree part by part, "differ*" where they do not;
 * *cls the class to colour it by (-1: differ). */
static const char *fold_label(const app *a, const fold_unit *u, char *buf, size_t n, int *cls)
{
    if (!blocks_agree(a, u)) {
        *cls = -1;
        snprintf(buf, n, "differ*");
        return buf;
    }
    plan_stage_layer f0, f;
    const config *c0 = shown_config(a, u->first, &f0);
    int uniform = 1, count[SPLIT__COUNT] = {0};
    for (int li = u->first; li < u->first + u->len; li++) {
        const config *c = shown_config(a, li, &f);
        uniform &= config_equal(c, c0);
        count[config_class(c)]++;
    }
    *cls = 0;
    for (int k = 1; k < SPLIT__COUNT; k++)
        if (count[k] > count[*cls]) *cls = k;
    if (uniform) plan_format_config(a->p, u->first, c0, buf, n);
    else snprintf(buf, n, "mixed");
    return buf;
}

static const char *label_config(const app *a, int id, char *buf, size_t n)
{
    const fold_unit *u = folded_unit(a, id);
    int cls;
    if (u) return fold_label(a, u, buf, n, &cls);
    plan_stage_layer f;
    plan_format_config(a->p, id, shown_config(a, id, &f), buf, n);
    return buf;
}

/* A pipelined plan's graph is coloured by stage, in the config classes'
 * colours taken in turn (the legend says which stage each is). */
static int stage_style(int stage) { return ST_CLASS0 + (stage < 0 ? 0 : stage % SPLIT__COUNT); }

/* The legend of a pipelined plan: each stage (from 1, as the CLI's
 * pipeline table) and its GPUs in its colour; returns the columns used. */
static int stage_legend(const app *a, WINDOW *w, int y, int x, int maxw)
{
    int used = 0;
    for (int st = 0; st < plan_stage_count(a->p); st++) {
        plan_stage_summary ss;
        if (plan_stage_info(a->p, st, &ss) != 0) break;
        char b[64];
        snprintf(b, sizeof b, "stage %d GPUs %d-%d", st + 1, ss.gpu0, ss.gpu0 + ss.gpus - 1);
        if (used + ui_width(b) + 2 > maxw) break;
        if (st) used += ui_put(w, y, x + used, maxw - used, ST_NORMAL, "  ");
        used += ui_put(w, y, x + used, maxw - used, stage_style(st), b);
    }
    return used;
}

static int style_config(const app *a, int id)
{
    const fold_unit *u = folded_unit(a, id);
    if (u) {
        char b[64];
        int cls, pinned = 0;
        if (a->sel >= u->first && a->sel <= u->last) return ST_SELECTED;
        for (int li = u->first; li <= u->last; li++) pinned |= plan_pinned(a->p)[li] >= 0;
        if (pinned) return ST_PINNED;
        fold_label(a, u, b, sizeof b, &cls);
        if (plan_stage_count(a->p) > 1) return stage_style(plan_stage_of(a->p, id));
        return cls < 0 ? ST_CHANGED : ST_CLASS0 + cls;
    }
    if (id == a->sel) return ST_SELECTED;
    if (plan_pinned(a->p)[id] >= 0) return ST_PINNED;
    if (plan_stage_count(a->p) > 1) return stage_style(plan_stage_of(a->p, id));
    return ST_CLASS0 + config_class(plan_config(a->p, id, app_shown_configs(a)[id]));
}

/* Keeps the selected layer's box inside the view. */
static void follow(app *a, int vh, int vw)
{
    int y, x, wd;
    if (graph_view_find(&graph_of(a)->gv, shown_sel(a), &y, &x, &wd) != 0) return;
    if (y < graph_of(a)->pan_y) graph_of(a)->pan_y = y > 1 ? y - 1 : 0;
    if (y + 4 > graph_of(a)->pan_y + vh) graph_of(a)->pan_y = y + 4 - vh;
    if (x < graph_of(a)->pan_x) graph_of(a)->pan_x = x > 2 ? x - 2 : 0;
    if (x + wd + 2 > graph_of(a)->pan_x + vw) graph_of(a)->pan_x = x + wd + 2 - vw;
}

static void clamp_pan(app *a, int vh, int vw)
{
    int maxy = graph_of(a)->gv.height - vh, maxx = graph_of(a)->gv.width - vw;
    if (graph_of(a)->pan_y > maxy) graph_of(a)->pan_y = maxy;
    if (graph_of(a)->pan_y < 0) graph_of(a)->pan_y = 0;
    if (graph_of(a)->pan_x > maxx) graph_of(a)->pan_x = maxx;
    if (graph_of(a)->pan_x < 0) graph_of(a)->pan_x = 0;
}

/* Some folded box holds blocks whose configs differ. */
static int any_differ(const app *a)
{
    const fold *f = &graph_of(a)->fd;
    for (int u = 0; u < f->n_units; u++)
        if (f->units[u].blocks > 1 && !blocks_agree(a, &f->units[u])) return 1;
    return 0;
}

static void draw_graph(app *a, WINDOW *w, rect r)
{
    ensure_layout(a);
    const plan *p = a->p;
    int ne = 0;
    for (int i = 0; i < plan_net(p)->n_layers; i++) ne += plan_net(p)->layers[i].n_inputs;
    rect view = {r.y + 1, r.x, r.h - 2, r.w};
    if (graph_of(a)->follow) follow(a, view.h, view.w);
    clamp_pan(a, view.h, view.w);

    /* the selection's times: a folded box's are its layers' sums */
    const fold_unit *fu = folded_unit(a, a->sel);
    int s0 = fu ? fu->first : a->sel, s1 = fu ? fu->last : a->sel;
    double tc = 0, ts = 0, tx = 0;
    plan_pipeline_summary ps;
    int piped = plan_pipeline_info(p, &ps);
    for (int li = s0; li <= s1; li++) {
        plan_stage_layer f;
        if (piped && plan_stage_layer_figures(p, li, &f) == 0) { /* per micro-batch, as the table's rows */
            tc += f.t_c_ms, ts += f.t_s_ms / ps.microbatches, tx += f.t_x_ms;
            continue;
        }
        const layer_eval *le = &app_shown_eval(a)->layers[li];
        tc += le->compute_ms;
        ts += le->sync_ms;
        tx += le->transfer_ms;
    }
    char cb[64], what[96];
    if (fu) {
        int cls;
        fold_label(a, fu, cb, sizeof cb, &cls);
        char nm[64];
        fold_name(&graph_of(a)->fd, fu, nm, sizeof nm);
        snprintf(what, sizeof what, "%s of %d layers", nm, fu->len);
    } else {
        plan_stage_layer f;
        plan_format_config(p, a->sel, shown_config(a, a->sel, &f), cb, sizeof cb);
        if (piped) snprintf(what, sizeof what, "%s (stage %d, GPUs %d-%d)", plan_net(p)->layers[a->sel].name,
                            f.stage + 1, f.gpu0, f.gpu0 + f.gpus - 1);
        else snprintf(what, sizeof what, "%s", plan_net(p)->layers[a->sel].name);
    }
    ui_fill(w, r.y, r.x, r.w, ST_HEADER);
    /* the info line gives way field by field, never cutting a number:
     * the edge and rank counts, then t_c/t_s/t_x, then the counts */
    int nl = plan_net(p)->n_layers, nr = graph_of(a)->gv.lay ? graph_of(a)->gv.lay->n_ranks : 0;
    char counts[64], count_brief[32], sel[200], split[96], line[512];
    if (graph_of(a)->fd.n_units < nl)
        snprintf(counts, sizeof counts, "%d layers in %d boxes, %d ranks", nl, graph_of(a)->fd.n_units, nr);
    else
        snprintf(counts, sizeof counts, "%d layers, %d edges, %d ranks", nl, ne, nr);
    snprintf(count_brief, sizeof count_brief, "%d layers", nl);
    snprintf(sel, sizeof sel, "%s selected %s: %s, %.2f ms%s", G->dot, what, cb, tc + ts + tx,
             piped ? " per micro-batch" : "");
    snprintf(split, sizeof split, "(t_c %.2f t_s %.2f t_x %.2f)", tc, ts, tx);
    ui_part parts[] = {{counts, count_brief, 2},
                       {sel, NULL, 0},
                       {split, NULL, 3},
                       {plan_pinned(p)[a->sel] >= 0 ? "pinned" : "", NULL, 1}};
    ui_put(w, r.y, r.x, r.w, ST_HEADER,
           ui_join_parts(parts, (int)(sizeof parts / sizeof parts[0]), " ", r.w, line, sizeof line));

    /* centre a graph narrower than the view */
    int pan_x = graph_of(a)->pan_x;
    if (graph_of(a)->gv.width < view.w) pan_x = -(view.w - graph_of(a)->gv.width) / 2;
    graph_paint gp = {label_config, style_config, -1, -1};
    graph_view_draw(a, &graph_of(a)->gv, &gp, w, view, graph_of(a)->pan_y, pan_x);

    /* legend: the classes present, each in its style */
    int ly = r.y + r.h - 1;
    int present[SPLIT__COUNT] = {0};
    for (int i = 0; i < plan_net(p)->n_layers; i++) present[config_class(plan_config(p, i, app_shown_configs(a)[i]))] = 1;
    int x = r.x + (plan_stage_count(p) > 1 ? stage_legend(a, w, ly, r.x, r.w) : ui_class_legend(w, ly, r.x, r.w, present));
    if (plan_pin_count(p) && x + 10 < r.x + r.w) {
        x += ui_put(w, ly, x, r.x + r.w - x, ST_NORMAL, "  ");
        x += ui_put(w, ly, x, r.x + r.w - x, ST_PINNED, "pinned");
    }
    if (any_differ(a) && x + 24 < r.x + r.w) {
        x += ui_put(w, ly, x, r.x + r.w - x, ST_NORMAL, "  ");
        x += ui_put(w, ly, x, r.x + r.w - x, ST_CHANGED, "differ*");
        x += ui_put(w, ly, x, r.x + r.w - x, ST_DIM, " blocks' configs");
    }
    char pos[96];
    snprintf(pos, sizeof pos, "  rows %d-%d/%d cols %d-%d/%d", graph_of(a)->pan_y + 1,
             graph_of(a)->pan_y + view.h < graph_of(a)->gv.height ? graph_of(a)->pan_y + view.h : graph_of(a)->gv.height, graph_of(a)->gv.height,
             graph_of(a)->pan_x + 1, graph_of(a)->pan_x + view.w < graph_of(a)->gv.width ? graph_of(a)->pan_x + view.w : graph_of(a)->gv.width, graph_of(a)->gv.width);
    if (x + ui_width(pos) <= r.x + r.w) ui_put_right(w, ly, x, r.x + r.w - x, ST_DIM, pos);
}

/* ---- keys ------------------------------------------------------------- */

static action pan(app *a, int key)
{
    int page = a->frame.h > 8 ? a->frame.h - 8 : 8;
    graph_of(a)->follow = 0;
    switch (key) {
    case KEY_UP:
    case 'k': graph_of(a)->pan_y -= 3; break;
    case KEY_DOWN:
    case 'j': graph_of(a)->pan_y += 3; break;
    case KEY_LEFT:
    case 'h': graph_of(a)->pan_x -= 8; break;
    case KEY_RIGHT:
    case 'l': graph_of(a)->pan_x += 8; break;
    case KEY_PPAGE: graph_of(a)->pan_y -= page; break;
    case KEY_NPAGE: graph_of(a)->pan_y += page; break;
    case KEY_HOME: graph_of(a)->pan_y = graph_of(a)->pan_x = 0; break;
    case KEY_END: graph_of(a)->pan_y = 1 << 20; break;
    default: break;
    }
    if (graph_of(a)->pan_y < 0) graph_of(a)->pan_y = 0;
    if (graph_of(a)->pan_x < 0) graph_of(a)->pan_x = 0;
    return ACT_REDRAW;
}

/* The next / previous box: a layer, or a fold (its first layer selected). */
static action select_layer(app *a, int key)
{
    ensure_layout(a);
    const fold *f = &graph_of(a)->fd;
    int u = f->unit_of[a->sel];
    if (key == ']') u = u + 1 < f->n_units ? u + 1 : f->n_units - 1;
    else u = u > 0 ? u - 1 : 0;
    a->sel = f->units[u].first;
    graph_of(a)->follow = 1;
    return ACT_REDRAW;
}

/* Unfolds the block of the selected fold, or folds the unfolded block the
 * selected layer is in. */
static action toggle_fold(app *a, int key)
{
    (void)key;
    ensure_layout(a);
    graph_state *gs = graph_of(a);
    int b = fold_block_start(&gs->fd, a->sel);
    if (b < 0) {
        app_set_status(a, 0, "%s is in no repeated block: nothing to fold", plan_net(a->p)->layers[a->sel].name);
        return ACT_REDRAW;
    }
    gs->open[b] = !gs->open[b];
    if (gs->auto_open == b) gs->auto_open = -1;
    gs->gv.valid = 0;
    gs->follow = 1;
    return ACT_REDRAW;
}

static action centre(app *a, int key)
{
    (void)key;
    int y, x, wd;
    if (graph_view_find(&graph_of(a)->gv, shown_sel(a), &y, &x, &wd) == 0) {
        graph_of(a)->pan_y = y - (a->frame.h - 6) / 2;
        graph_of(a)->pan_x = x + wd / 2 - a->frame.w / 2;
        if (graph_of(a)->pan_y < 0) graph_of(a)->pan_y = 0;
        if (graph_of(a)->pan_x < 0) graph_of(a)->pan_x = 0;
    }
    graph_of(a)->follow = 0;
    return ACT_REDRAW;
}

static action open_whynot(app *a, int key)
{
    (void)key;
    app_whynot_open(a, a->sel);
    return ACT_REDRAW;
}

/* Search: layers in network order; the match is selected and centred. */
static int layer_matches(int li, void *user)
{
    return app_layer_matches(user, li);
}

/* A match inside a folded block unfolds that block; the block the
 * previous match unfolded folds again. */
static void unfold_match(app *a)
{
    ensure_layout(a);
    graph_state *gs = graph_of(a);
    int b = fold_block_start(&gs->fd, a->sel);
    if (gs->auto_open >= 0 && gs->auto_open != b) {
        gs->open[gs->auto_open] = 0;
        gs->gv.valid = 0;
        gs->auto_open = -1;
    }
    if (b >= 0 && !gs->open[b]) {
        gs->open[b] = 1;
        gs->auto_open = b;
        gs->gv.valid = 0;
    }
}

static int find(app *a, int dir, int *nth)
{
    list_cursor c = {a->sel, 0, 0};
    int n = list_find(&c, plan_net(a->p)->n_layers, dir, layer_matches, a, nth);
    if (n) {
        a->sel = c.sel;
        unfold_match(a);
        centre(a, 0);
    }
    return n;
}

static const keybind graph_keys[] = {
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "pan up / down", pan},
    {{KEY_LEFT, KEY_RIGHT, 'h', 'l'}, "Left Right h l", "pan left / right", pan},
    {{KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END}, "PgUp PgDn Home End", "pan a page / to the top / to the bottom", pan},
    {{']', '['}, "] [", "select the next / previous box: a layer or folded blocks (the view follows)", select_layer},
    {{'f'}, "f", "unfold the selected blocks' first block / fold its block again", toggle_fold},
    {{'c'}, "c", "centre the view on the selected layer", centre},
    {{'\n', '\r', KEY_ENTER}, "Enter", "why not? the selected layer's configs", open_whynot},
    {{0}, NULL, NULL, NULL},
};

static void enter_graph(app *a) { graph_of(a)->follow = 1; }

static void *graph_new(app *a)
{
    (void)a;
    graph_state *gs = lw_calloc(1, sizeof *gs);
    gs->follow = 1;
    gs->auto_open = -1;
    return gs;
}

static void graph_free(app *a, void *st)
{
    (void)a;
    graph_state *gs = st;
    graph_view_free(&gs->gv);
    fold_free(&gs->fd);
    free(gs->open);
    free(gs);
}

static void graph_invalidate(app *a, int settings)
{
    (void)settings;
    graph_of(a)->gv.valid = 0;
}

static int graph_export_view(const app *a, int *step)
{
    (void)a;
    *step = -1;
    return VIEW_GRAPH;
}

const screen_ops screen_graph_ops = {
    .tab = "Graph",
    .title = "Graph (2)",
    .hints = "arrows/hjkl:pan [/]:box f:fold c:centre Enter:why-not +/-:GPUs s:sync e:export",
    .draw = draw_graph,
    .keys = graph_keys,
    .enter = enter_graph,
    .state_new = graph_new,
    .state_free = graph_free,
    .invalidate = graph_invalidate,
    .export_view = graph_export_view,
    .find = find,
    .find_what = "layer",
};
