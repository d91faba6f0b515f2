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

#include <stdlib.h>
#include <string.h>

static void ensure_layout(app *a)
{
    if (graph_of(a)->gv.valid) return;
    const network *net = plan_net(a->p);
    int n = net->n_layers, ne = 0;
    for (int i = 0; i < n; i++) ne += net->layers[i].n_inputs;
    int *ids = lw_malloc(sizeof(int) * (size_t)(n ? n : 1));
    int *from = lw_malloc(sizeof(int) * (size_t)(ne ? ne : 1)), *to = lw_malloc(sizeof(int) * (size_t)(ne ? ne : 1));
    ne = 0;
    for (int i = 0; i < n; i++) {
        ids[i] = i;
        for (int k = 0; k < net->layers[i].n_inputs; k++) {
            from[ne] = net->layers[i].inputs[k];
            to[ne] = i;
            ne++;
        }
    }
    graph_view_build(&graph_of(a)->gv, a->p, n, ids, ne, from, to);
    free(ids);
    free(from);
    free(to);
}

static const char *label_config(const app *a, int id, char *buf, size_t n)
{
    plan_format_config(a->p, id, plan_config(a->p, id, app_shown_configs(a)[id]), buf, n);
    return buf;
}

static int style_config(const app *a, int id)
{
    if (id == a->sel) return ST_SELECTED;
    if (plan_pinned(a->p)[id] >= 0) return ST_PINNED;
    return ST_CLASS0 + config_class(plan_config(a->p, id, app_shown_configs(a)[id]));
}

/* Keeps the selected layer's box inside the view. */
static void follow(app *a, int vh, int vw)
{
    int y, x, wd;
    if (graph_view_find(&graph_of(a)->gv, a->sel, &y, &x, &wd) != 0) return;
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

static void draw_graph(app *a, WINDOW *w, rect r)
{
    ensure_layout(a);
    const plan *p = a->p;
    int ne = 0;
    for (int i = 0; i < plan_net(p)->n_layers; i++) ne += plan_net(p)->layers[i].n_inputs;
    rect view = {r.y + 1, r.x, r.h - 2, r.w};
    if (graph_of(a)->follow) follow(a, view.h, view.w);
    clamp_pan(a, view.h, view.w);

    char cb[64];
    const layer_eval *le = &app_shown_eval(a)->layers[a->sel];
    plan_format_config(p, a->sel, plan_config(p, a->sel, app_shown_configs(a)[a->sel]), cb, sizeof cb);
    ui_fill(w, r.y, r.x, r.w, ST_HEADER);
    /* the info line gives way field by field, never cutting a number:
     * the edge and rank counts, then t_c/t_s/t_x, then the counts */
    int nl = plan_net(p)->n_layers, nr = graph_of(a)->gv.lay ? graph_of(a)->gv.lay->n_ranks : 0;
    char counts[64], count_brief[32], sel[160], split[96], line[512];
    snprintf(counts, sizeof counts, "%d layers, %d edges, %d ranks", nl, ne, nr);
    snprintf(count_brief, sizeof count_brief, "%d layers", nl);
    snprintf(sel, sizeof sel, "%s selected %s: %s, %.2f ms", G->dot, plan_net(p)->layers[a->sel].name, cb,
             le->compute_ms + le->sync_ms + le->transfer_ms);
    snprintf(split, sizeof split, "(t_c %.2f t_s %.2f t_x %.2f)", le->compute_ms, le->sync_ms, le->transfer_ms);
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
    int x = r.x + ui_class_legend(w, ly, r.x, r.w, present);
    if (plan_pin_count(p) && x + 10 < r.x + r.w) {
        x += ui_put(w, ly, x, r.x + r.w - x, ST_NORMAL, "  ");
        x += ui_put(w, ly, x, r.x + r.w - x, ST_PINNED, "pinned");
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

static action select_layer(app *a, int key)
{
    int n = plan_net(a->p)->n_layers;
    if (key == ']') a->sel = a->sel + 1 < n ? a->sel + 1 : n - 1;
    else a->sel = a->sel > 0 ? a->sel - 1 : 0;
    graph_of(a)->follow = 1;
    return ACT_REDRAW;
}

static action centre(app *a, int key)
{
    (void)key;
    int y, x, wd;
    ensure_layout(a);
    if (graph_view_find(&graph_of(a)->gv, a->sel, &y, &x, &wd) == 0) {
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

static int find(app *a, int dir, int *nth)
{
    list_cursor c = {a->sel, 0, 0};
    int n = list_find(&c, plan_net(a->p)->n_layers, dir, layer_matches, a, nth);
    if (n) {
        a->sel = c.sel;
        centre(a, 0);
    }
    return n;
}

static const keybind graph_keys[] = {
    {{KEY_UP, KEY_DOWN, 'k', 'j'}, "Up Down k j", "pan up / down", pan},
    {{KEY_LEFT, KEY_RIGHT, 'h', 'l'}, "Left Right h l", "pan left / right", pan},
    {{KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END}, "PgUp PgDn Home End", "pan a page / to the top / to the bottom", pan},
    {{']', '['}, "] [", "select the next / previous layer (the view follows)", select_layer},
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
    return gs;
}

static void graph_free(app *a, void *st)
{
    (void)a;
    graph_state *gs = st;
    graph_view_free(&gs->gv);
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
    .hints = "arrows/hjkl:pan [/]:layer c:centre Enter:why-not +/-:GPUs s:sync e:export",
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
